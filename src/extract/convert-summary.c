/* SPDX-License-Identifier: MIT */
/*
 * The summary of a conversion (tbbt-convert's report, text or JSON): the
 * counts of calls, replies and pairs per procedure, truncation and loss, the
 * clients, the correction pass's work and the timings.  It reads the core's
 * counters (convert-int.h) after the passes; it decides nothing.
 */
#include "extract/convert-int.h"

#include "extract/hier.h"

#include <arpa/inet.h>
#include <glib.h>
#include <string.h>

#include "util/json-fields.h"
#include "util/util.h"

/* ---- summary ------------------------------------------------------------------ */

static void json_procs(struct tbbt_json *j, struct tbbt__conv *c, const char *key,
                       const int *progs, int nprogs)
{
    tbbt_json_key(j, key);
    tbbt_json_begin_object(j);
    for (int proc = 0; proc < MAXPROCS; proc++) {
        const char *name = NULL;
        uint64_t n = 0;
        for (int i = 0; i < nprogs; i++) {
            const char *nm = tbbt_proc_name(progs[i], proc);
            if (nm) {
                name = nm;
                n += c->pairs[progs[i]][proc];
            }
        }
        if (name)
            tbbt_json_kv_uint(j, name, n);
    }
    tbbt_json_end_object(j);
}

struct client_row {
    char addr[48];
    uint64_t calls, lost;
};

static void collect_client(uint8_t af, const uint8_t *addr, uint64_t calls, uint64_t lost,
                           void *arg)
{
    struct client_row row = {.calls = calls, .lost = lost};
    inet_ntop(af == 6 ? AF_INET6 : AF_INET, addr, row.addr, sizeof(row.addr));
    g_array_append_val((GArray *)arg, row);
}

/* A "clients" element. */
static const struct tbbt_json_field client_keys[] = {
    TBBT_JSON_FIELD(struct client_row, addr, "address"),
    TBBT_JSON_FIELD(struct client_row, calls, "calls"),
    TBBT_JSON_FIELD(struct client_row, lost, "estimated_lost_calls"),
};

static gint client_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(((const struct client_row *)a)->addr, ((const struct client_row *)b)->addr);
}

static void json_clients(struct tbbt_json *j, struct tbbt__conv *c)
{
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(struct client_row));

    tbbt__pairer_foreach_client(c->pairer, collect_client, rows);
    g_array_sort(rows, client_cmp);
    tbbt_json_kv_records(j, "clients", rows->data, rows->len, sizeof(struct client_row),
                         client_keys, G_N_ELEMENTS(client_keys));
    g_array_free(rows, TRUE);
}

/*
 * Correction keys: pass B's failures and repairs; remaining_mismatches is
 * what the --check pass found when it ran, else what no rule repaired.
 */
static void summary_correction(struct tbbt__conv *c, struct tbbt_json *j)
{
    if (!c->corr)
        return;
    tbbt__corr_summary(c->corr, c->check, j);
    tbbt_json_key(j, "checked");
    tbbt_json_bool(j, c->check != NULL);
}

/* Distinct machine names among the credentials of t. */
static uint64_t count_machines(const struct tbbt_credtab *t)
{
    GHashTable *seen = g_hash_table_new(g_bytes_hash, g_bytes_equal);
    GPtrArray *keys = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    uint64_t n;

    for (uint32_t ref = 0; ref < tbbt_credtab_count(t); ref++) {
        const struct tbbt_cred *cr = tbbt_credtab_get(t, ref);
        GBytes *b = g_bytes_new(cr->machine, cr->machine_len);
        g_ptr_array_add(keys, b);
        g_hash_table_add(seen, b);
    }
    n = g_hash_table_size(seen);
    g_hash_table_destroy(seen);
    g_ptr_array_free(keys, TRUE);
    return n;
}

char *tbbt__conv_summary_text(struct tbbt__conv *c, double secs, uint64_t bytes)
{
    static const int v2[] = {TBBT_PROG_NFS2}, v3[] = {TBBT_PROG_NFS3},
                     mnt[] = {TBBT_PROG_MNT1, TBBT_PROG_MNT3}, v4[] = {TBBT_PROG_NFS4};
    const struct tbbt__pair_stats *ps = tbbt__pairer_stats(c->pairer);
    struct tbbt_json j;

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    tbbt_json_key(&j, "input_format");
    tbbt_json_string(&j, c->keep_raw ? "tbbt" : c->src->name);
    if (!c->keep_raw)
        c->src->summary(c, &j);
    tbbt_json_kv_uint(&j, "rpc_calls", c->rpc_calls);
    tbbt_json_kv_uint(&j, "rpc_replies", c->rpc_replies);
    tbbt_json_kv_uint(&j, "pairs", ps->pairs - c->other_prog_pairs);
    tbbt_json_kv_uint(&j, "unmatched_calls", ps->unmatched_calls);
    tbbt_json_kv_uint(&j, "unmatched_replies", ps->unmatched_replies);
    tbbt_json_kv_uint(&j, "estimated_lost_calls", ps->estimated_lost_calls);
    tbbt_json_key(&j, "procedures");
    tbbt_json_begin_object(&j);
    json_procs(&j, c, "v2", v2, 1);
    json_procs(&j, c, "v3", v3, 1);
    json_procs(&j, c, "mount", mnt, 2);
    json_procs(&j, c, "v4", v4, 1);
    tbbt_json_end_object(&j);
    if (c->keep_raw && c->corr) {       /* a trace as input: what pass B read */
        struct tbbt__corr_stats st;
        tbbt__corr_stats(c->corr, &st);
        tbbt_json_kv_uint(&j, "records", st.records);
    } else {
        tbbt_json_kv_uint(&j, "records", c->records);
    }
    tbbt_json_kv_uint(&j, "nfs_calls", c->nfs_calls);
    tbbt_json_kv_uint(&j, "duplicate_calls", ps->duplicate_calls);
    tbbt_json_kv_uint(&j, "duplicate_replies", ps->duplicate_replies);
    tbbt_json_kv_uint(&j, "truncated_calls", c->truncated_calls);
    tbbt_json_kv_uint(&j, "truncated_replies", c->truncated_replies);
    tbbt_json_kv_uint(&j, "unknown_procedures", c->bad_procs);
    tbbt_json_kv_uint(&j, "other_program_calls", c->other_prog_calls);
    tbbt_json_kv_uint(&j, "handles", tbbt_fhtab_count(c->fh));
    tbbt_json_kv_uint(&j, "endpoints", tbbt_eptab_count(c->ep));
    tbbt_json_kv_uint(&j, "credentials", tbbt_credtab_count(c->cred));
    tbbt_json_kv_uint(&j, "machines", count_machines(c->cred));
    tbbt_ns_summary(c->ns, &j);
    summary_correction(c, &j);
    json_clients(&j, c);
    tbbt_json_kv_double(&j, "elapsed_seconds", secs);
    tbbt_json_kv_double(&j, "mb_per_second", secs > 0 ? (double)bytes / 1e6 / secs : 0);
    tbbt_json_kv_double(&j, "calls_per_second", secs > 0 ? (double)c->rpc_calls / secs : 0);
    tbbt_json_kv_uint(&j, "threads", (uint64_t)c->threads);
    tbbt_json_key(&j, "pass_seconds");
    tbbt_json_begin_object(&j);
    tbbt_json_kv_double(&j, "read", (double)c->pass_a_ns / 1e9);
    tbbt_json_kv_double(&j, "hierarchy", (double)c->pass_b_ns / 1e9);
    tbbt_json_kv_double(&j, "check", (double)c->check_ns / 1e9);
    tbbt_json_end_object(&j);
    /* pass A's CPU time on its threads: with two, the reader's and the writer's */
    tbbt_json_key(&j, "read_cpu_seconds");
    tbbt_json_begin_object(&j);
    tbbt_json_kv_double(&j, "reader", (double)c->reader_cpu_ns / 1e9);
    tbbt_json_kv_double(&j, "writer", (double)c->writer_cpu_ns / 1e9);
    tbbt_json_end_object(&j);
    tbbt_json_kv_uint(&j, "peak_rss_bytes", tbbt_peak_rss());
    tbbt_json_end_object(&j);
    return tbbt_json_finish(&j);
}
