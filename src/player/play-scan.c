/* SPDX-License-Identifier: MIT */
/*
 * tbbt-play's pass over the trace before the replay (play-scan.h): record headers only.
 */
#include <glib.h>
#include <string.h>

#include "player/engine.h"
#include "player/play-scan.h"
#include "trace/trace.h"
#include "util/util.h"

/*
 * How fast the traced clients reacted to their own replies: per trace endpoint (a client
 * connection), the time from the latest reply to its next call, in 1 us buckets up to
 * 1 ms.  A call that overlapped its endpoint's previous request is not a reaction.
 */
#define REACT_BUCKETS 1001
struct reactions {
    GArray *last_reply;             /* uint64_t ns per endpoint, 0: none yet */
    uint64_t n, hist[REACT_BUCKETS];
};

static void reaction_add(struct reactions *re, const struct tbbt_trace_rec *rec)
{
    if (rec->endpoint >= re->last_reply->len)
        g_array_set_size(re->last_reply, rec->endpoint + 1);
    uint64_t *last = &g_array_index(re->last_reply, uint64_t, rec->endpoint);
    if (*last && rec->call_ns > *last) {
        re->hist[MIN((rec->call_ns - *last) / 1000u, REACT_BUCKETS - 1)]++;
        re->n++;
    }
    if ((rec->flags & TBBT_RF_REPLY) && rec->reply_ns > *last)
        *last = rec->reply_ns;
}

/* The 1st percentile of the reactions (ns, 1 us resolution); 0 without any. */
static uint64_t reaction_p1_ns(const struct reactions *re)
{
    uint64_t want = re->n / 100, seen = 0;
    for (unsigned b = 0; re->n && b < REACT_BUCKETS; b++)
        if ((seen += re->hist[b]) > want)
            return (uint64_t)b * 1000u;
    return 0;
}

/* Adds n to key's load in tab (a key it lacks is copied in). */
static void load_add(GHashTable *tab, const char *key, uint64_t n)
{
    gsize old = GPOINTER_TO_SIZE(g_hash_table_lookup(tab, key));
    g_hash_table_insert(tab, g_strdup(key), GSIZE_TO_POINTER(old + n));
}

/* The records by endpoint summed by client address and by client connection, keyed as
 * play-mpi.c's tbbt_play_owner_mine() keys them. */
static void loads_of(struct tbbt_play_scan *sc, const GArray *load, const struct tbbt_eptab *eps)
{
    sc->addr_load = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    sc->conn_load = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < load->len; i++) {
        uint64_t n = g_array_index(load, uint64_t, i);
        if (!n)
            continue;
        const struct tbbt_endpoint *ep = tbbt_eptab_get(eps, i);
        char key[64];
        if (!ep) {
            load_add(sc->addr_load, "?", n);
            load_add(sc->conn_load, "?", n);
            continue;
        }
        load_add(sc->addr_load, ep->client, n);
        g_snprintf(key, sizeof(key), "%s:%u", ep->client, ep->client_port);
        load_add(sc->conn_load, key, n);
    }
}

int tbbt_play_scan(const char *path, struct tbbt_play_scan *sc, char *err, size_t errlen)
{
    int e = 0;
    struct tbbt_trace_reader *t = tbbt_trace_reader_open(path, &e);
    if (!t) {
        g_snprintf(err, errlen, "cannot open trace '%s': %s", path, tbbt_strerror(e));
        return -1;
    }
    tbbt_trace_reader_skip_fields(t, ((uint64_t)1 << TBBT_F_NFIELDS) - 1);
    bool want_map = !sc->stop_at_version;
    GHashTable *clients = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GArray *map = g_array_new(FALSE, TRUE, sizeof(uint16_t));
    GHashTable *addrs = sc->want_addrs
                        ? g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL) : NULL;
    GArray *load = g_array_new(FALSE, TRUE, sizeof(uint64_t));  /* records by endpoint */
    struct tbbt_trace_rec rec;
    bool vers_known = false;
    struct reactions react = {.last_reply = g_array_new(FALSE, TRUE, sizeof(uint64_t))};
    int rc;
    sc->vers = 3;
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(t, &rec)) == 1) {
        sc->nv4 += rec.prog == TBBT_PROG_NFS4;
        if (addrs) {
            if (rec.endpoint >= load->len)
                g_array_set_size(load, rec.endpoint + 1);
            g_array_index(load, uint64_t, rec.endpoint)++;
        }
        if (rec.prog != TBBT_PROG_NFS2 && rec.prog != TBBT_PROG_NFS3)
            continue;
        sc->has_v23 = true;
        if (!vers_known) {
            sc->vers = rec.prog == TBBT_PROG_NFS2 ? 2 : 3;
            vers_known = true;
        }
        if (sc->want_slack)
            reaction_add(&react, &rec);
        if (!want_map && !addrs)
            continue;
        if (rec.endpoint < map->len && g_array_index(map, uint16_t, rec.endpoint))
            continue;
        const struct tbbt_endpoint *ep = tbbt_eptab_get(tbbt_trace_reader_eptab(t), rec.endpoint);
        if (addrs)
            g_hash_table_add(addrs, g_strdup(ep->client));
        char *key = g_strdup_printf("%s|%u|%d", ep->client, ep->client_port, ep->tcp);
        gpointer v = g_hash_table_lookup(clients, key);
        if (!v) {
            v = GUINT_TO_POINTER(g_hash_table_size(clients) + 1);
            g_hash_table_insert(clients, key, v);
        } else {
            g_free(key);
        }
        if (rec.endpoint >= map->len)
            g_array_set_size(map, rec.endpoint + 1);
        g_array_index(map, uint16_t, rec.endpoint) =
            (uint16_t)((GPOINTER_TO_UINT(v) - 1) % TBBT_ENGINE_MAX_CONNS + 1);
    }
    tbbt_trace_rec_fini(&rec);
    if (addrs && rc == 0)
        loads_of(sc, load, tbbt_trace_reader_eptab(t));
    g_array_free(load, TRUE);
    tbbt_trace_reader_close(t);
    sc->causal_slack_ns = sc->want_slack ? 2 * reaction_p1_ns(&react) : 0;
    g_array_free(react.last_reply, TRUE);
    sc->nclients = g_hash_table_size(clients);
    g_hash_table_destroy(clients);
    sc->naddrs = 0;
    if (addrs) {
        sc->naddrs = g_hash_table_size(addrs);
        g_hash_table_destroy(addrs);
    }
    if (rc < 0) {
        g_snprintf(err, errlen, "trace '%s': %s", path, tbbt_strerror(rc));
        g_array_free(map, TRUE);
        sc->conn_map = NULL;
        sc->conn_map_len = 0;
        return -1;
    }
    /* stored + 1 (0: no NFS record used the endpoint); the engine wants indexes */
    for (guint i = 0; i < map->len; i++) {
        uint16_t *m = &g_array_index(map, uint16_t, i);
        *m = *m ? (uint16_t)(*m - 1) : 0;
    }
    sc->conn_map_len = map->len;
    sc->conn_map = (uint16_t *)(void *)g_array_free(map, FALSE);
    return 0;
}
