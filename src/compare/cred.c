/* SPDX-License-Identifier: MIT */
/*
 * Credentials in tbbt-compare (compare.h, "Matching" and "Extras").  Trace format 1.1
 * carries each call's AUTH_SYS credential (docs/trace-format.md: the CRED record and
 * the `cred` field); tbbt-play sends every replayed call with the traced credential and
 * its own calls (MOUNT, the LOOKUPs of the image's paths, the grace probe, the --verify
 * walk) with the machine name "tbbt-play" (TBBT_PLAYER_MACHINE, trace.h).  So a
 * credential tells the client user an operation belongs to, which goes into the
 * matching key, and who sent a replay call.
 *
 * Whether the original carries credentials is decided once, from its first
 * CREDS_SCAN op records (tbbt__cmp_creds_scan); format 1.0 traces and traces converted
 * from nfsdump text have none, and keep the key without them.  A credential's key part
 * is the hash of its whole value (machine name, uid, gid, gids in order), computed once
 * per credential reference of the trace's table; the player's own machine name gives
 * 0, as a record without credential does, on both sides: a replayed call of an original
 * record without credential goes out with the player's machine name.
 */
#include "compare/compare-int.h"

#include <errno.h>
#include <string.h>

#include "util/hash.h"

#define CREDS_SCAN 1000         /* op records of the original looked at for a credential */

struct tbbt__cmp_cred_ent {
    uint64_t hash;              /* key part; 0 for the player's machine name */
    uint8_t origin;             /* enum tbbt__cmp_origin; UNKNOWN: not computed yet */
};

void tbbt__cmp_creds_init(struct tbbt__cmp_creds *cc)
{
    cc->ent = g_array_new(FALSE, TRUE, sizeof(struct tbbt__cmp_cred_ent));
}

void tbbt__cmp_creds_fini(struct tbbt__cmp_creds *cc)
{
    if (cc->ent)
        g_array_free(cc->ent, TRUE);
    cc->ent = NULL;
}

int tbbt__cmp_creds_scan(const char *what, const char *path, bool *yes, char *err,
                         size_t errlen)
{
    struct tbbt_trace_reader *r = tbbt__cmp_open(what, path, err, errlen);
    struct tbbt_trace_rec rec;
    int rc = 0;

    *yes = false;
    if (!r)
        return -EIO;
    tbbt_trace_rec_init(&rec);
    for (int n = 0; n < CREDS_SCAN && !*yes && (rc = tbbt_trace_reader_next(r, &rec)) == 1; n++)
        *yes = TBBT_HAS(&rec, TBBT_F_CRED);
    if (rc < 0)
        tbbt__cmp_read_error(r, what, path, rc, err, errlen);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    return rc < 0 ? rc : 0;
}

static bool is_player(const struct tbbt_cred *cr)
{
    return cr->machine_len == strlen(TBBT_PLAYER_MACHINE) &&
           memcmp(cr->machine, TBBT_PLAYER_MACHINE, cr->machine_len) == 0;
}

enum tbbt__cmp_origin tbbt__cmp_rec_origin(struct tbbt_trace_reader *r,
                                           const struct tbbt_trace_rec *rec)
{
    const struct tbbt_cred *cr = TBBT_HAS(rec, TBBT_F_CRED)
                                     ? tbbt_credtab_get(tbbt_trace_reader_credtab(r), rec->cred)
                                     : NULL;
    if (!cr)
        return CMP_ORIGIN_UNKNOWN;
    return is_player(cr) ? CMP_ORIGIN_PLAYER : CMP_ORIGIN_REPLAYED;
}

/* The hash of a credential's value: the members that are part of it (trace.h). */
static uint64_t cred_hash(const struct tbbt_cred *cr)
{
    uint32_t fixed[3] = {cr->uid, cr->gid, cr->ngids};
    uint64_t h = tbbt_hash(fixed, sizeof(fixed), 0x63726564u);

    h = tbbt_hash(cr->gids, MIN(cr->ngids, (uint32_t)TBBT_CRED_GIDS_MAX) * sizeof(uint32_t), h);
    h = tbbt_hash(cr->machine, cr->machine_len, h);
    return h ? h : 1;
}

uint64_t tbbt__cmp_cred(const struct tbbt_compare *c, struct tbbt__cmp_creds *cc,
                        struct tbbt_trace_reader *r, const struct tbbt_trace_rec *rec,
                        enum tbbt__cmp_origin *origin)
{
    *origin = CMP_ORIGIN_UNKNOWN;
    if (!c->cnt.credentials || !TBBT_HAS(rec, TBBT_F_CRED))
        return 0;
    if (rec->cred >= cc->ent->len)
        g_array_set_size(cc->ent, rec->cred + 1);
    struct tbbt__cmp_cred_ent *e = &g_array_index(cc->ent, struct tbbt__cmp_cred_ent, rec->cred);
    if (e->origin == CMP_ORIGIN_UNKNOWN) {
        const struct tbbt_cred *cr = tbbt_credtab_get(tbbt_trace_reader_credtab(r), rec->cred);
        if (!cr)                /* the reader refuses undefined references: not reached */
            return 0;
        e->origin = is_player(cr) ? CMP_ORIGIN_PLAYER : CMP_ORIGIN_REPLAYED;
        e->hash = e->origin == CMP_ORIGIN_PLAYER ? 0 : cred_hash(cr);
    }
    *origin = e->origin;
    return e->hash;
}
