/* SPDX-License-Identifier: MIT */
/*
 * The sequentiality heuristics of the read-ahead simulator (raheur.h): FreeBSD 4's
 * default, SlowDown (nfs-tricks paper 6.2) and cursors (paper 7), each computing the
 * seqCount a READ is served with from the state the table (nfsheur.c) keeps for its
 * file, plus the counters the tool reports.  The default rule follows nfsrv_read() in
 * FreeBSD 4 sys/nfs/nfs_serv.c line by line: a fresh entry gets nh_nextr = off and
 * nh_seqcount = 4 (off == 0) or 1; then "(off == 0 && nh_seqcount > 0) || off ==
 * nh_nextr" increments (cap 127), else seqcount > 1 becomes 1 and anything else 0;
 * after the read nh_nextr = the offset where the read stopped.
 *
 * Choices the paper leaves open, ours: SlowDown's "within 64k" is |off - nextr| <=
 * 65536 in either direction; a cursor matches a read exactly (off == nextr) or, failing
 * that, the nearest cursor within the same 64 KiB (ties: the most recently used); a
 * file's first cursor starts like a fresh default entry (so every heuristic serves a
 * file's first read alike), later cursors at seqCount 1, the value a miss leaves in the
 * default heuristic, so a read that matches no cursor triggers no read-ahead.
 */
#include "raheur/raheur.h"
#include "util/util.h"

#include <glib.h>
#include <string.h>

struct tbbt_raheur {
    struct tbbt_raheur_config cfg;
    struct tbbt_nfsheur *table;
    struct tbbt_raheur_stats st;
};

struct name_tab {
    int value;
    const char *name;
};

static const struct name_tab kind_names[] = {
    {TBBT_RAHEUR_DEFAULT, "default"},
    {TBBT_RAHEUR_SLOWDOWN, "slowdown"},
    {TBBT_RAHEUR_CURSOR, "cursor"},
    {0, NULL},
};
static const struct name_tab policy_names[] = {
    {TBBT_RAHEUR_LRU, "lru"},
    {TBBT_RAHEUR_USECOUNT, "usecount"},
    {0, NULL},
};
static const struct name_tab hash_names[] = {
    {TBBT_RAHEUR_HASH_MIX, "mix"},
    {TBBT_RAHEUR_HASH_MOD, "mod"},
    {0, NULL},
};

static const char *tab_name(const struct name_tab *t, int value)
{
    for (; t->name; t++)
        if (t->value == value)
            return t->name;
    return NULL;
}

static int tab_value(const struct name_tab *t, const char *name)
{
    for (; name && t->name; t++)
        if (strcmp(t->name, name) == 0)
            return t->value;
    return -1;
}

const char *tbbt_raheur_kind_name(enum tbbt_raheur_kind kind)
{
    return tab_name(kind_names, (int)kind);
}

int tbbt_raheur_kind_by_name(const char *name)
{
    return tab_value(kind_names, name);
}

const char *tbbt_raheur_policy_name(enum tbbt_raheur_policy policy)
{
    return tab_name(policy_names, (int)policy);
}

int tbbt_raheur_policy_by_name(const char *name)
{
    return tab_value(policy_names, name);
}

const char *tbbt_raheur_hash_name(enum tbbt_raheur_hash hash)
{
    return tab_name(hash_names, (int)hash);
}

int tbbt_raheur_hash_by_name(const char *name)
{
    return tab_value(hash_names, name);
}

void tbbt_raheur_config_default(struct tbbt_raheur_config *c, enum tbbt_raheur_kind kind)
{
    memset(c, 0, sizeof(*c));
    c->kind = kind;
    c->policy = TBBT_RAHEUR_LRU;
    c->hash = TBBT_RAHEUR_HASH_MIX;
    c->table_size = TBBT_RAHEUR_TABLE_SIZE;
    c->probes = TBBT_RAHEUR_PROBES;
    c->cursors = TBBT_RAHEUR_CURSORS;
    c->threshold = TBBT_RAHEUR_THRESHOLD;
}

int tbbt_raheur_config_check(const struct tbbt_raheur_config *c, char *err, size_t errlen)
{
    uint64_t ncur = c->kind == TBBT_RAHEUR_CURSOR ? c->cursors : 1;

    if (!tbbt_raheur_kind_name(c->kind) || !tbbt_raheur_policy_name(c->policy) ||
        !tbbt_raheur_hash_name(c->hash)) {
        tbbt_errbuf(err, errlen, "unknown heuristic, table policy or hash");
        return -1;
    }
    if (c->table_size < 1 || c->table_size > TBBT_RAHEUR_MAX_TABLE) {
        tbbt_errbuf(err, errlen, "--table-size must be 1..%u", TBBT_RAHEUR_MAX_TABLE);
        return -1;
    }
    if (c->probes < 1 || c->probes > c->table_size) {
        tbbt_errbuf(err, errlen, "--probes must be 1..%u (the table size)", c->table_size);
        return -1;
    }
    if (c->cursors < 1 || c->cursors > TBBT_RAHEUR_MAX_CURSORS) {
        tbbt_errbuf(err, errlen, "--cursors must be 1..%u", TBBT_RAHEUR_MAX_CURSORS);
        return -1;
    }
    if ((uint64_t)c->table_size * ncur > TBBT_RAHEUR_MAX_TABLE) {
        tbbt_errbuf(err, errlen, "--table-size times --cursors must not exceed %u",
                    TBBT_RAHEUR_MAX_TABLE);
        return -1;
    }
    if (c->threshold >= TBBT_RAHEUR_SEQMAX) {
        tbbt_errbuf(err, errlen, "--threshold must be 0..%u", TBBT_RAHEUR_SEQMAX - 1);
        return -1;
    }
    return 0;
}

struct tbbt_raheur *tbbt_raheur_new(const struct tbbt_raheur_config *c, char *err,
                                    size_t errlen)
{
    struct tbbt_raheur *h;

    if (tbbt_raheur_config_check(c, err, errlen) < 0)
        return NULL;
    h = g_new0(struct tbbt_raheur, 1);
    h->cfg = *c;
    h->table = tbbt_nfsheur_new(c->table_size, c->probes,
                                c->kind == TBBT_RAHEUR_CURSOR ? c->cursors : 1, c->policy,
                                c->hash);
    return h;
}

void tbbt_raheur_free(struct tbbt_raheur *h)
{
    if (!h)
        return;
    tbbt_nfsheur_free(h->table);
    g_free(h);
}

/* ---- the per-cursor rules ------------------------------------------------------- */

static uint64_t distance(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

/* A fresh FreeBSD 4 entry: "nh_seqcount = 4 if off == 0 else 1; nh_nextr = off". */
static void start_fresh(struct tbbt_raheur_cursor *c, uint64_t off)
{
    c->nextr = off;
    c->seqcount = off == 0 ? 4 : 1;
}

/* The seqCount update of the default heuristic (sd false) or SlowDown (sd true). */
static void update(struct tbbt_raheur_cursor *c, uint64_t off, bool sd)
{
    if ((off == 0 && c->seqcount > 0) || off == c->nextr) {
        if (++c->seqcount > TBBT_RAHEUR_SEQMAX)
            c->seqcount = TBBT_RAHEUR_SEQMAX;
    } else if (!sd) {
        c->seqcount = c->seqcount > 1 ? 1 : 0;
    } else if (distance(off, c->nextr) > TBBT_RAHEUR_WINDOW) {
        c->seqcount /= 2;
    } /* else: within 64 KiB, jitter: unchanged */
}

/* After the read: nh_nextr = where it stopped (unchanged if nothing was read). */
static void advance(struct tbbt_raheur_cursor *c, uint64_t off, uint64_t count)
{
    if (count > 0)
        c->nextr = count > UINT64_MAX - off ? UINT64_MAX : off + count;
}

/* ---- the cursor heuristic --------------------------------------------------------- */

/* The cursor a read at off matches: exact first, else nearest within 64 KiB; -1 if none. */
static int match_cursor(const struct tbbt_nfsheur_entry *e, uint64_t off)
{
    int best = -1;
    uint64_t best_d = 0;

    for (uint32_t i = 0; i < e->ncur; i++) {
        const struct tbbt_raheur_cursor *c = &e->cur[i];
        uint64_t d = distance(off, c->nextr);

        if (d > TBBT_RAHEUR_WINDOW)
            continue;
        if (best < 0 || d < best_d || (d == best_d && c->last_use > e->cur[best].last_use)) {
            best = (int)i;
            best_d = d;
        }
    }
    return best;
}

static uint32_t lru_cursor(const struct tbbt_nfsheur_entry *e)
{
    uint32_t v = 0;

    for (uint32_t i = 1; i < e->ncur; i++)
        if (e->cur[i].last_use < e->cur[v].last_use)
            v = i;
    return v;
}

/* Picks (or opens) the cursor for a read at off on entry e; fills res's cursor fields. */
static struct tbbt_raheur_cursor *cursor_step(struct tbbt_raheur *h,
                                              struct tbbt_nfsheur_entry *e, uint64_t off,
                                              struct tbbt_raheur_result *res)
{
    struct tbbt_raheur_cursor *c;
    int m;

    if (e->ncur == 0) { /* fresh file: its first cursor starts like a default entry */
        e->ncur = 1;
        c = &e->cur[0];
        start_fresh(c, off);
        update(c, off, true);
        res->new_cursor = true;
        return c;
    }
    if ((m = match_cursor(e, off)) >= 0) {
        res->cursor = (uint32_t)m;
        c = &e->cur[m];
        update(c, off, true);
        return c;
    }
    res->new_cursor = true;
    if (e->ncur < h->cfg.cursors) {
        res->cursor = e->ncur++;
    } else {
        res->cursor = lru_cursor(e);
        res->recycled = true;
    }
    c = &e->cur[res->cursor];
    c->nextr = off;
    c->seqcount = 1;
    return c;
}

uint32_t tbbt_raheur_read(struct tbbt_raheur *h, uint64_t key, uint64_t offset,
                          uint64_t count, struct tbbt_raheur_result *res)
{
    struct tbbt_raheur_result dummy;
    struct tbbt_nfsheur_lookup lk;
    struct tbbt_nfsheur_entry *e;
    struct tbbt_raheur_cursor *c;

    if (!res)
        res = &dummy;
    memset(res, 0, sizeof(*res));
    e = tbbt_nfsheur_lookup(h->table, key, &lk);
    res->fresh = !lk.found;
    res->ejected = lk.ejected;
    res->ejected_key = lk.ejected_key;
    if (h->cfg.kind == TBBT_RAHEUR_CURSOR) {
        c = cursor_step(h, e, offset, res);
    } else {
        c = &e->cur[0];
        if (e->ncur == 0) {
            e->ncur = 1;
            start_fresh(c, offset);
        }
        update(c, offset, h->cfg.kind == TBBT_RAHEUR_SLOWDOWN);
    }
    advance(c, offset, count);
    c->last_use = tbbt_nfsheur_tick(h->table);
    res->seqcount = c->seqcount;
    res->readahead = c->seqcount > h->cfg.threshold;

    h->st.reads++;
    h->st.hist[c->seqcount]++;
    h->st.readahead += res->readahead;
    h->st.ejections += res->ejected;
    h->st.fresh += res->fresh;
    h->st.new_cursors += res->new_cursor;
    h->st.recycled_cursors += res->recycled;
    return c->seqcount;
}

const struct tbbt_raheur_stats *tbbt_raheur_stats(const struct tbbt_raheur *h)
{
    return &h->st;
}

const struct tbbt_raheur_config *tbbt_raheur_config(const struct tbbt_raheur *h)
{
    return &h->cfg;
}

const struct tbbt_nfsheur *tbbt_raheur_table(const struct tbbt_raheur *h)
{
    return h->table;
}
