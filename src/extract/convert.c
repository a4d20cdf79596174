/* SPDX-License-Identifier: MIT */
/*
 * The conversion core of tbbt-convert (see extract.h and conv-int.h): picks
 * the input reader by content, pairs what it reads (pair.c), interns
 * endpoints, writes records in call order, counts, and writes the summary.
 * TBBT paper 3.1.
 */
#include "extract/conv-int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "util/util.h"

#define MAXPROCS 32

struct tbbt__conv {
    const struct tbbt_convert_opts *o;
    const struct tbbt__source_ops *src;
    void *src_state;
    struct tbbt_fhtab *fh;
    struct tbbt_eptab *ep;
    struct tbbt_trace_writer *w;
    char *tmp_path;              /* the trace is written here, renamed when complete */
    struct tbbt__pairer *pairer;
    GHashTable *ep_cache;        /* stream key -> endpoint ref + 1 */
    struct ep_slot *ep_front;    /* direct-mapped cache in front of ep_cache */
    int write_err;
    uint64_t started_ns, last_progress_ns;
    uint64_t rpc_calls, rpc_replies, nfs_calls, bad_procs, other_prog_calls, other_prog_pairs;
    uint64_t truncated_calls, truncated_replies, records;
    uint64_t pairs[5][MAXPROCS];
};

#define EP_FRONT_SLOTS 1024
struct ep_slot {
    struct tbbt__pair_key key;   /* stream key; af 0 = empty */
    uint32_t ref;
};

static const struct tbbt__source_ops *const sources[] = {
    &tbbt__source_pcap,
    &tbbt__source_nfsdump,
};

void tbbt_convert_opts_init(struct tbbt_convert_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->reply_timeout_ns = 30ull * 1000000000ull;
    o->max_pending = 262144;
}

void **tbbt__conv_source_state(struct tbbt__conv *c)
{
    return &c->src_state;
}

const struct tbbt_convert_opts *tbbt__conv_opts(struct tbbt__conv *c)
{
    return c->o;
}

struct tbbt_fhtab *tbbt__conv_fhtab(struct tbbt__conv *c)
{
    return c->fh;
}

static guint stream_hash(gconstpointer p)
{
    const struct tbbt__pair_key *k = p;
    guint h = k->cport * 2654435761u;
    for (int i = 0; i < 16; i++)
        h = (h ^ k->caddr[i] ^ (guint)k->saddr[i] << 8) * 16777619u;
    return h;
}

static gboolean stream_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, sizeof(struct tbbt__pair_key)) == 0;
}

static uint32_t endpoint_ref(struct tbbt__conv *c, const struct tbbt__conv_msg *m)
{
    struct tbbt__pair_key sk = m->key;
    struct tbbt_endpoint ep;
    gpointer v;
    int af = m->key.af == 6 ? AF_INET6 : AF_INET;
    uint32_t ref;

    struct ep_slot *slot;

    sk.xid = m->server_port;     /* the stream key: addresses, ports, transport */
    sk.pad = m->tcp;
    slot = &c->ep_front[stream_hash(&sk) & (EP_FRONT_SLOTS - 1)];
    if (stream_equal(&slot->key, &sk))
        return slot->ref;
    slot->key = sk;
    v = g_hash_table_lookup(c->ep_cache, &sk);
    if (v)
        return slot->ref = (uint32_t)(GPOINTER_TO_UINT(v) - 1);
    memset(&ep, 0, sizeof(ep));
    inet_ntop(af, sk.caddr, ep.client, sizeof(ep.client));
    inet_ntop(af, sk.saddr, ep.server, sizeof(ep.server));
    ep.client_port = sk.cport;
    ep.server_port = m->server_port;
    ep.tcp = m->tcp;
    ref = tbbt_eptab_intern(c->ep, &ep);
    g_hash_table_insert(c->ep_cache, g_memdup2(&sk, sizeof(sk)), GUINT_TO_POINTER(ref + 1));
    return slot->ref = ref;
}

struct tbbt_trace_rec *tbbt__conv_call(struct tbbt__conv *c, const struct tbbt__conv_msg *m,
                                       int prog, uint32_t proc, uint32_t uid, uint32_t gid)
{
    struct tbbt_trace_rec *rec;

    c->rpc_calls++;
    rec = tbbt__pairer_call(c->pairer, &m->key, m->ts_ns);
    if (!rec)
        return NULL;
    /* Other programs and bad procedures stay paired (their replies are not "unmatched")
     * with prog NONE, and are never written. */
    if (prog == TBBT_PROG_NONE) {
        c->other_prog_calls++;
        return NULL;
    }
    if (proc >= (uint32_t)tbbt_prog_nprocs(prog)) {
        c->bad_procs++;
        return NULL;
    }
    rec->prog = (uint8_t)prog;
    rec->proc = (uint8_t)proc;
    rec->flags = m->tcp ? TBBT_RF_TCP : 0;
    rec->endpoint = endpoint_ref(c, m);
    rec->uid = uid;
    rec->gid = gid;
    if (prog == TBBT_PROG_NFS2 || prog == TBBT_PROG_NFS3)
        c->nfs_calls++;
    if (m->truncated)
        c->truncated_calls++;
    return rec;
}

struct tbbt_trace_rec *tbbt__conv_reply(struct tbbt__conv *c, const struct tbbt__conv_msg *m,
                                        int rpc_stat)
{
    struct tbbt_trace_rec *rec;

    c->rpc_replies++;
    rec = tbbt__pairer_reply(c->pairer, &m->key, m->ts_ns);
    if (!rec)
        return NULL;
    if (rec->prog == TBBT_PROG_NONE) {
        c->other_prog_pairs++;
        return NULL;
    }
    rec->rpc_stat = (uint8_t)rpc_stat;
    c->pairs[rec->prog][rec->proc]++;
    if (m->truncated)
        c->truncated_replies++;
    return rec;
}

void tbbt__conv_drain(struct tbbt__conv *c)
{
    tbbt__pairer_drain(c->pairer);
}

static void on_emit(struct tbbt_trace_rec *rec, void *arg)
{
    struct tbbt__conv *c = arg;
    int rc;

    if (rec->prog == TBBT_PROG_NONE || c->write_err)
        return;
    rc = tbbt_trace_writer_put(c->w, rec);
    if (rc < 0)
        c->write_err = rc;
    else
        c->records++;
}

void tbbt__conv_progress(struct tbbt__conv *c, uint64_t done, uint64_t total)
{
    uint64_t now = tbbt_now_ns();
    double secs = (double)(now - c->started_ns) / 1e9;

    if (now - c->last_progress_ns < 500000000ull)
        return;
    c->last_progress_ns = now;
    fprintf(stderr, "\rtbbt-convert: %.0f MB", (double)done / 1e6);
    if (total)
        fprintf(stderr, " of %.0f MB (%.0f%%)", (double)total / 1e6, 100.0 * done / total);
    fprintf(stderr, ", %.1f MB/s, %" G_GUINT64_FORMAT " records   ",
            secs > 0 ? (double)done / 1e6 / secs : 0.0, (guint64)c->records);
    fflush(stderr);
}

/* ---- summary ------------------------------------------------------------------ */

static void json_kv(struct tbbt_json *j, const char *k, uint64_t v)
{
    tbbt_json_key(j, k);
    tbbt_json_uint(j, v);
}

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
            json_kv(j, name, n);
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

static gint client_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(((const struct client_row *)a)->addr, ((const struct client_row *)b)->addr);
}

static void json_clients(struct tbbt_json *j, struct tbbt__conv *c)
{
    GArray *rows = g_array_new(FALSE, FALSE, sizeof(struct client_row));

    tbbt__pairer_foreach_client(c->pairer, collect_client, rows);
    g_array_sort(rows, client_cmp);
    tbbt_json_key(j, "clients");
    tbbt_json_begin_array(j);
    for (guint i = 0; i < rows->len; i++) {
        struct client_row *r = &g_array_index(rows, struct client_row, i);
        tbbt_json_begin_object(j);
        tbbt_json_key(j, "address");
        tbbt_json_string(j, r->addr);
        json_kv(j, "calls", r->calls);
        json_kv(j, "estimated_lost_calls", r->lost);
        tbbt_json_end_object(j);
    }
    tbbt_json_end_array(j);
    g_array_free(rows, TRUE);
}

static char *summary_text(struct tbbt__conv *c, double secs, uint64_t bytes)
{
    static const int v2[] = {TBBT_PROG_NFS2}, v3[] = {TBBT_PROG_NFS3},
                     mnt[] = {TBBT_PROG_MNT1, TBBT_PROG_MNT3};
    const struct tbbt__pair_stats *ps = tbbt__pairer_stats(c->pairer);
    struct tbbt_json j;

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    tbbt_json_key(&j, "input_format");
    tbbt_json_string(&j, c->src->name);
    c->src->summary(c, &j);
    json_kv(&j, "rpc_calls", c->rpc_calls);
    json_kv(&j, "rpc_replies", c->rpc_replies);
    json_kv(&j, "pairs", ps->pairs - c->other_prog_pairs);
    json_kv(&j, "unmatched_calls", ps->unmatched_calls);
    json_kv(&j, "unmatched_replies", ps->unmatched_replies);
    json_kv(&j, "estimated_lost_calls", ps->estimated_lost_calls);
    tbbt_json_key(&j, "procedures");
    tbbt_json_begin_object(&j);
    json_procs(&j, c, "v2", v2, 1);
    json_procs(&j, c, "v3", v3, 1);
    json_procs(&j, c, "mount", mnt, 2);
    tbbt_json_end_object(&j);
    json_kv(&j, "records", c->records);
    json_kv(&j, "nfs_calls", c->nfs_calls);
    json_kv(&j, "duplicate_calls", ps->duplicate_calls);
    json_kv(&j, "duplicate_replies", ps->duplicate_replies);
    json_kv(&j, "truncated_calls", c->truncated_calls);
    json_kv(&j, "truncated_replies", c->truncated_replies);
    json_kv(&j, "unknown_procedures", c->bad_procs);
    json_kv(&j, "other_program_calls", c->other_prog_calls);
    json_kv(&j, "handles", tbbt_fhtab_count(c->fh));
    json_kv(&j, "endpoints", tbbt_eptab_count(c->ep));
    json_clients(&j, c);
    tbbt_json_key(&j, "elapsed_seconds");
    tbbt_json_double(&j, secs);
    tbbt_json_key(&j, "mb_per_second");
    tbbt_json_double(&j, secs > 0 ? (double)bytes / 1e6 / secs : 0);
    tbbt_json_key(&j, "calls_per_second");
    tbbt_json_double(&j, secs > 0 ? (double)c->rpc_calls / secs : 0);
    json_kv(&j, "peak_rss_bytes", tbbt_peak_rss());
    tbbt_json_end_object(&j);
    return tbbt_json_finish(&j);
}

/* ---- running ------------------------------------------------------------------ */

static uint64_t input_bytes(const struct tbbt_convert_opts *o)
{
    uint64_t total = 0;
    GStatBuf st;

    for (int i = 0; i < o->n_inputs; i++)
        if (g_stat(o->inputs[i], &st) == 0)
            total += (uint64_t)st.st_size;
    return total;
}

/* Picks the reader from the first bytes of the first input (gunzipped if need be). */
static const struct tbbt__source_ops *pick_source(const char *path)
{
    uint8_t head[256];
    int n = 0;
    gzFile gz = gzopen(path, "rb");   /* reads plain files as they are */

    if (gz) {
        n = gzread(gz, head, sizeof(head));
        gzclose(gz);
    }
    for (size_t i = 0; n > 0 && i < G_N_ELEMENTS(sources); i++)
        if (sources[i]->probe(head, (size_t)n))
            return sources[i];
    return &tbbt__source_pcap;       /* its error says what is wrong with the file */
}

static int finish(struct tbbt__conv *c, int rc, char *errbuf, size_t errlen)
{
    int wrc;
    char *text;

    tbbt__pairer_finish(c->pairer);
    if (c->o->progress)
        fputc('\n', stderr);
    if (c->write_err) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", c->o->output,
                 tbbt_strerror(c->write_err));
        return c->write_err;
    }
    wrc = tbbt_trace_writer_close(c->w);
    c->w = NULL;
    if (wrc == 0 && c->tmp_path && rename(c->tmp_path, c->o->output) != 0)
        wrc = -errno;
    if (wrc < 0) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", c->o->output,
                 tbbt_strerror(wrc));
        return wrc;
    }
    if (c->o->summary_json) {
        text = summary_text(c, (double)(tbbt_now_ns() - c->started_ns) / 1e9,
                            input_bytes(c->o));
        wrc = tbbt_json_write_file(c->o->summary_json, text);
        g_free(text);
        if (wrc < 0) {
            snprintf(errbuf, errlen, "cannot write summary '%s': %s", c->o->summary_json,
                     tbbt_strerror(wrc));
            return wrc;
        }
    }
    return rc;
}

int tbbt_convert_run(const struct tbbt_convert_opts *o, char *errbuf, size_t errlen)
{
    struct tbbt__conv c = {.o = o};
    int rc, err = 0;

    c.started_ns = tbbt_now_ns();
    c.src = pick_source(o->inputs[0]);
    c.fh = tbbt_fhtab_new();
    c.ep = tbbt_eptab_new();
    c.ep_cache = g_hash_table_new_full(stream_hash, stream_equal, g_free, NULL);
    c.ep_front = g_new0(struct ep_slot, EP_FRONT_SLOTS);
    c.pairer = tbbt__pairer_new(o->reply_timeout_ns, o->max_pending, on_emit, &c);
    /* Never clobber an existing trace with a failed run: write aside, rename at the end. */
    if (strcmp(o->output, "-") != 0)
        c.tmp_path = g_strdup_printf("%s.partial-%d", o->output, (int)getpid());
    c.w = tbbt_trace_writer_open(c.tmp_path ? c.tmp_path : o->output, c.fh, c.ep, &err);
    if (!c.w) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", o->output, tbbt_strerror(err));
        rc = err;
        goto out;
    }
    rc = c.src->run(&c, o->inputs, o->n_inputs, errbuf, errlen);
    if (rc == 0 || rc == TBBT_E_TRUNC) {
        char ebuf[512] = "";
        int frc = finish(&c, rc, ebuf, sizeof(ebuf));
        if (frc != TBBT_E_TRUNC)
            snprintf(errbuf, errlen, "%s", ebuf);
        rc = frc;
    }
out:
    if (c.w)
        tbbt_trace_writer_abort(c.w);
    if (c.tmp_path) {
        unlink(c.tmp_path);     /* gone already after a successful rename */
        g_free(c.tmp_path);
    }
    tbbt__pairer_free(c.pairer);
    c.src->fini(&c);
    g_hash_table_destroy(c.ep_cache);
    g_free(c.ep_front);
    tbbt_eptab_free(c.ep);
    tbbt_fhtab_free(c.fh);
    return rc;
}
