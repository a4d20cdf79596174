/* SPDX-License-Identifier: MIT */
/*
 * NFSv4 messages of a capture, recognized and counted (nfs4count.h): per minor
 * version the COMPOUNDs, their replies, the operations of each and the
 * operations' error statuses; the callbacks apart.  The operations are decoded
 * by decode-nfs4.c.
 */
#include "extract/nfs4count.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "extract/decode-nfs4.h"
#include "proto/nfs4.h"
#include "proto/proto.h"
#include "util/hash.h"
#include "util/util.h"

#define NFS4_PROG 100003u
#define NMINOR 4                  /* minor versions 0, 1, 2, and 3 for any later one */
#define OP_SLOTS (OP_CLONE + 1)   /* slot 0: ILLEGAL (10044), as proto.c */
#define CB_SLOTS 32               /* CB operations 3..15; slot 0: CB_ILLEGAL */
_Static_assert(OP_CB_OFFLOAD < CB_SLOTS, "a CB operation past CB_SLOTS");

/* Operation counts of calls and of replies, and the replies' errors by (op, status). */
struct opcounts {
    uint64_t calls[OP_SLOTS], replies[OP_SLOTS];
    GHashTable *errors;           /* (slot << 32 | status) -> count, both as guint64 keys */
};

struct minor {
    uint64_t compounds, replies;
    struct opcounts ops;
};

/*
 * Callback programs: RFC 5531 8.3's transient range, where clients take the
 * program they name in SETCLIENTID and CREATE_SESSION (Linux: 0x40000000).
 */
#define CB_PROG_FIRST 0x40000000u
#define CB_PROG_LAST 0x5fffffffu

/* An address that received NFSv4 calls (a server): address family and address. */
struct endpoint {
    uint8_t af;
    uint8_t addr[16];
};

struct tbbt__nfs4_count {
    uint64_t null_calls, null_replies, gss_calls, gss_replies, other_procs;
    uint64_t truncated, truncated_ops, malformed, unknown_ops, hostile_counts;
    uint64_t cb_null_calls, cb_compounds, cb_replies;
    struct minor minor[NMINOR];
    struct opcounts cb;
    GHashTable *servers;          /* struct endpoint * (owned) */
};

static guint ep_hash(gconstpointer k)
{
    return (guint)tbbt_hash(k, sizeof(struct endpoint), 0);
}

static gboolean ep_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct endpoint)) == 0;
}

static void ep_set(struct endpoint *e, uint8_t af, const uint8_t *addr)
{
    memset(e, 0, sizeof(*e));
    e->af = af;
    memcpy(e->addr, addr, 16);
}

static void ops_init(struct opcounts *o)
{
    o->errors = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
}

struct tbbt__nfs4_count *tbbt__nfs4_count_new(void)
{
    struct tbbt__nfs4_count *n = g_new0(struct tbbt__nfs4_count, 1);

    for (int i = 0; i < NMINOR; i++)
        ops_init(&n->minor[i].ops);
    ops_init(&n->cb);
    n->servers = g_hash_table_new_full(ep_hash, ep_equal, g_free, NULL);
    return n;
}

void tbbt__nfs4_count_free(struct tbbt__nfs4_count *n)
{
    if (!n)
        return;
    for (int i = 0; i < NMINOR; i++)
        g_hash_table_destroy(n->minor[i].ops.errors);
    g_hash_table_destroy(n->cb.errors);
    g_hash_table_destroy(n->servers);
    g_free(n);
}

/* ---- counting ------------------------------------------------------------------- */

/* The counter slot of an operation number (decode-nfs4.c only passes known ones). */
static unsigned slot(bool cb, uint32_t op)
{
    if (op == OP_ILLEGAL || op == OP_CB_ILLEGAL)
        return 0;
    return op < (cb ? CB_SLOTS : OP_SLOTS) ? op : 0;
}

static void count_error(struct opcounts *o, unsigned s, int32_t status)
{
    gint64 key = (gint64)((uint64_t)s << 32 | (uint32_t)status);
    guint64 *v = g_hash_table_lookup(o->errors, &key);

    if (!v) {
        gint64 *k = g_new(gint64, 1);
        *k = key;
        v = g_new0(guint64, 1);
        g_hash_table_insert(o->errors, k, v);
    }
    (*v)++;
}

/* Adds a decoded message's operations; rc is tbbt__nfs4_decode()'s result. */
static void count_ops(struct tbbt__nfs4_count *n, struct opcounts *o, bool cb, bool reply,
                      const struct tbbt__nfs4_compound *m, int rc)
{
    for (uint32_t i = 0; i < m->nops; i++) {
        unsigned s = slot(cb, m->ops[i].op);

        (reply ? o->replies : o->calls)[s]++;
        if (m->ops[i].trunc)
            n->truncated_ops++;
        if (reply && m->ops[i].status > 0)
            count_error(o, s, m->ops[i].status);
    }
    if (rc == TBBT_E_TRUNC)
        n->truncated++;
    else if (rc != 0)
        n->malformed++;
    if (m->unknown_op)
        n->unknown_ops++;
    if (m->numops > TBBT__NFS4_MAXOPS)
        n->hostile_counts++;
}

/*
 * A COMPOUND call: its server noted; under RPCSEC_GSS counted, else left to its
 * record (tbbt__nfs4_count_decoded_call()).  Its side.
 */
static uint8_t compound_call(struct tbbt__nfs4_count *n, const struct tbbt__nfs4_call *c)
{
    struct endpoint e;

    ep_set(&e, c->af, c->dst);
    if (!g_hash_table_contains(n->servers, &e))
        g_hash_table_add(n->servers, g_memdup2(&e, sizeof(e)));
    if (c->flavor == RPCSEC_GSS) {
        n->gss_calls++;
        return TBBT__NFS4_SIDE_GSS;
    }
    return TBBT__NFS4_SIDE_RECORD;
}

/* True if the call is a callback: version 1 of a transient program, from an NFSv4 server. */
static bool is_callback(struct tbbt__nfs4_count *n, const struct tbbt__nfs4_call *c)
{
    struct endpoint e;

    if (c->vers != NFS_CB || c->prog < CB_PROG_FIRST || c->prog > CB_PROG_LAST)
        return false;
    ep_set(&e, c->af, c->src);
    return g_hash_table_contains(n->servers, &e);
}

static uint8_t callback_call(struct tbbt__nfs4_count *n, const struct tbbt__nfs4_call *c,
                             const uint8_t *body, size_t len, bool trunc)
{
    struct tbbt__nfs4_compound m;
    int rc;

    if (c->proc == CB_NULL) {
        n->cb_null_calls++;
        return TBBT__NFS4_SIDE_CB_NULL;
    }
    if (c->proc != CB_COMPOUND) {
        n->other_procs++;
        return TBBT__NFS4_SIDE_OTHER;
    }
    n->cb_compounds++;
    if (c->flavor == RPCSEC_GSS)
        return TBBT__NFS4_SIDE_CB;   /* counted, not decoded */
    rc = tbbt__nfs4_decode(TBBT__NFS4_CB_CALL, body, len, trunc, &m);
    count_ops(n, &n->cb, true, false, &m, rc);
    return TBBT__NFS4_SIDE_CB;
}

uint8_t tbbt__nfs4_count_call(struct tbbt__nfs4_count *n, const struct tbbt__nfs4_call *c,
                              const uint8_t *body, size_t len, bool trunc)
{
    if (c->prog == NFS4_PROG && c->vers == NFS_V4) {
        if (c->proc == NFSPROC4_NULL) {
            n->null_calls++;
            return TBBT__NFS4_SIDE_NULL;
        }
        if (c->proc == NFSPROC4_COMPOUND)
            return compound_call(n, c);
        n->other_procs++;
        return TBBT__NFS4_SIDE_OTHER;
    }
    if (is_callback(n, c))
        return callback_call(n, c, body, len, trunc);
    return 0;
}

void tbbt__nfs4_count_reply(struct tbbt__nfs4_count *n, uint8_t side, const uint8_t *body,
                            size_t len, bool trunc)
{
    struct tbbt__nfs4_compound m;
    int rc;

    switch (side) {
    case TBBT__NFS4_SIDE_NULL:
        n->null_replies++;
        return;
    case TBBT__NFS4_SIDE_GSS:
        n->gss_replies++;
        return;
    case TBBT__NFS4_SIDE_CB:
        n->cb_replies++;
        if (!body)
            return;
        rc = tbbt__nfs4_decode(TBBT__NFS4_CB_REPLY, body, len, trunc, &m);
        count_ops(n, &n->cb, true, true, &m, rc);
        return;
    default:
        return;                     /* a COMPOUND's reply is counted with its record */
    }
}

void tbbt__nfs4_count_decoded_call(struct tbbt__nfs4_count *n, const struct tbbt__nfs4_compound *m,
                                   int rc)
{
    struct minor *mi = &n->minor[m->minor < NMINOR ? m->minor : NMINOR - 1];

    mi->compounds++;
    count_ops(n, &mi->ops, false, false, m, rc);
}

void tbbt__nfs4_count_decoded_reply(struct tbbt__nfs4_count *n, uint32_t minor,
                                    const struct tbbt__nfs4_compound *m, int rc)
{
    struct minor *mi = &n->minor[minor < NMINOR ? minor : NMINOR - 1];

    mi->replies++;
    count_ops(n, &mi->ops, false, true, m, rc);
}

static void merge_ops(struct opcounts *d, const struct opcounts *s)
{
    GHashTableIter it;
    gpointer k, v;

    for (unsigned i = 0; i < OP_SLOTS; i++) {
        d->calls[i] += s->calls[i];
        d->replies[i] += s->replies[i];
    }
    g_hash_table_iter_init(&it, s->errors);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        guint64 *dv = g_hash_table_lookup(d->errors, k);
        if (!dv) {
            dv = g_new0(guint64, 1);
            g_hash_table_insert(d->errors, g_memdup2(k, sizeof(gint64)), dv);
        }
        *dv += *(guint64 *)v;
    }
}

void tbbt__nfs4_count_merge(struct tbbt__nfs4_count *dst, const struct tbbt__nfs4_count *src)
{
    dst->null_calls += src->null_calls;
    dst->null_replies += src->null_replies;
    dst->gss_calls += src->gss_calls;
    dst->gss_replies += src->gss_replies;
    dst->other_procs += src->other_procs;
    dst->truncated += src->truncated;
    dst->truncated_ops += src->truncated_ops;
    dst->malformed += src->malformed;
    dst->unknown_ops += src->unknown_ops;
    dst->hostile_counts += src->hostile_counts;
    dst->cb_null_calls += src->cb_null_calls;
    dst->cb_compounds += src->cb_compounds;
    dst->cb_replies += src->cb_replies;
    for (int i = 0; i < NMINOR; i++) {
        dst->minor[i].compounds += src->minor[i].compounds;
        dst->minor[i].replies += src->minor[i].replies;
        merge_ops(&dst->minor[i].ops, &src->minor[i].ops);
    }
    merge_ops(&dst->cb, &src->cb);
}

uint64_t tbbt__nfs4_count_malformed(const struct tbbt__nfs4_count *n)
{
    return n->malformed;
}

/* ---- the summary ---------------------------------------------------------------- */

static const char *op_name(bool cb, unsigned s)
{
    if (cb)
        return tbbt_proto_tok_name(tbbt_proto_nfs4_cb_ops, s == 0 ? OP_CB_ILLEGAL : (int)s);
    return tbbt_proto_nfs4_op_name(s == 0 ? OP_ILLEGAL : s);
}

/* {"NAME": count, ...} of the non-zero counts, in operation number order. */
static void ops_json(struct tbbt_json *j, const char *key, const uint64_t *v, unsigned nslots,
                     bool cb)
{
    tbbt_json_key(j, key);
    tbbt_json_begin_object(j);
    for (unsigned s = 0; s < nslots; s++)
        if (v[s] && op_name(cb, s))
            tbbt_json_kv_uint(j, op_name(cb, s), v[s]);
    tbbt_json_end_object(j);
}

static int cmp_key(const void *a, const void *b)
{
    gint64 x = **(gint64 *const *)a, y = **(gint64 *const *)b;

    return x < y ? -1 : x > y;
}

/* {"OP": {"NFS4ERR_X": count, ...}, ...} in operation, then status order. */
static void errors_json(struct tbbt_json *j, const struct opcounts *o, bool cb)
{
    guint nkeys;
    gpointer *keys = g_hash_table_get_keys_as_array(o->errors, &nkeys);
    unsigned open_slot = UINT32_MAX;

    qsort(keys, nkeys, sizeof(*keys), cmp_key);
    tbbt_json_key(j, "errors");
    tbbt_json_begin_object(j);
    for (guint i = 0; i < nkeys; i++) {
        uint64_t k = (uint64_t)*(gint64 *)keys[i];
        unsigned s = (unsigned)(k >> 32);
        int32_t st = (int32_t)(uint32_t)k;
        const char *sname = tbbt_proto_tok_name(tbbt_proto_nfsstat4, st);
        char buf[24];

        if (s != open_slot) {
            if (open_slot != UINT32_MAX)
                tbbt_json_end_object(j);
            tbbt_json_key(j, op_name(cb, s) ? op_name(cb, s) : "?");
            tbbt_json_begin_object(j);
            open_slot = s;
        }
        if (!sname) {
            g_snprintf(buf, sizeof(buf), "%d", (int)st);
            sname = buf;
        }
        tbbt_json_kv_uint(j, sname, *(guint64 *)g_hash_table_lookup(o->errors, keys[i]));
    }
    if (open_slot != UINT32_MAX)
        tbbt_json_end_object(j);
    tbbt_json_end_object(j);
    g_free(keys);
}

static void minor_json(struct tbbt_json *j, const struct minor *m)
{
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "compounds", m->compounds);
    tbbt_json_kv_uint(j, "replies", m->replies);
    ops_json(j, "ops", m->ops.calls, OP_SLOTS, false);
    ops_json(j, "reply_ops", m->ops.replies, OP_SLOTS, false);
    errors_json(j, &m->ops, false);
    tbbt_json_end_object(j);
}

void tbbt__nfs4_count_json(const struct tbbt__nfs4_count *n, struct tbbt_json *j)
{
    uint64_t compounds = 0, replies = 0;

    for (int i = 0; i < NMINOR; i++) {
        compounds += n->minor[i].compounds;
        replies += n->minor[i].replies;
    }
    tbbt_json_key(j, "nfs4");
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "null_calls", n->null_calls);
    tbbt_json_kv_uint(j, "null_replies", n->null_replies);
    tbbt_json_kv_uint(j, "compounds", compounds);
    tbbt_json_kv_uint(j, "compound_replies", replies);
    tbbt_json_kv_uint(j, "rpcsec_gss_calls", n->gss_calls);
    tbbt_json_kv_uint(j, "rpcsec_gss_replies", n->gss_replies);
    tbbt_json_kv_uint(j, "other_procs", n->other_procs);
    tbbt_json_kv_uint(j, "truncated_messages", n->truncated);
    tbbt_json_kv_uint(j, "truncated_ops", n->truncated_ops);
    tbbt_json_kv_uint(j, "malformed_messages", n->malformed);
    tbbt_json_kv_uint(j, "unknown_ops", n->unknown_ops);
    tbbt_json_kv_uint(j, "hostile_op_counts", n->hostile_counts);
    tbbt_json_key(j, "minor_versions");
    tbbt_json_begin_object(j);
    for (int i = 0; i < NMINOR; i++) {
        if (!n->minor[i].compounds && !n->minor[i].replies)
            continue;
        tbbt_json_key(j, i < NMINOR - 1 ? (const char *[]){"0", "1", "2"}[i] : "later");
        minor_json(j, &n->minor[i]);
    }
    tbbt_json_end_object(j);
    tbbt_json_key(j, "backchannel");
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "cb_null_calls", n->cb_null_calls);
    tbbt_json_kv_uint(j, "cb_compounds", n->cb_compounds);
    tbbt_json_kv_uint(j, "cb_replies", n->cb_replies);
    ops_json(j, "ops", n->cb.calls, CB_SLOTS, true);
    ops_json(j, "reply_ops", n->cb.replies, CB_SLOTS, true);
    errors_json(j, &n->cb, true);
    tbbt_json_end_object(j);
    tbbt_json_end_object(j);
}
