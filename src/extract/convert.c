/* SPDX-License-Identifier: MIT */
/*
 * The conversion pipeline of tbbt-convert (see extract.h): capture messages
 * -> RPC header -> pairing -> NFS/MOUNT decoding -> trace writer, plus the
 * summary counts.  TBBT paper 3.1, RFC 5531, RFC 1094, RFC 1813.
 */
#include "extract/extract.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture/capture.h"
#include "extract/decode.h"
#include "extract/pair.h"
#include "extract/rpc.h"
#include "trace/trace.h"
#include "util/json.h"
#include "util/util.h"

#define NPROGS 5
#define MAXPROCS 32

struct convert {
    const struct tbbt_convert_opts *o;
    struct tbbt_fhtab *fh;
    struct tbbt_eptab *ep;
    struct tbbt_trace_writer *w;
    struct tbbt__pairer *pairer;
    struct tbbt_cap *cap;
    GHashTable *ep_cache;        /* stream key -> endpoint ref + 1 */
    int write_err;
    uint64_t started_ns, last_progress_ns;
    /* counts beyond the capture and pairer stats */
    uint64_t rpc_calls, rpc_replies, malformed_rpc, malformed_nfs;
    uint64_t other_prog_calls, other_prog_pairs, auth_other;
    uint64_t truncated_calls, truncated_replies, unusable_truncated, records;
    uint64_t pairs[NPROGS][MAXPROCS];
    uint64_t calls[NPROGS][MAXPROCS];
};

void tbbt_convert_opts_init(struct tbbt_convert_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->reply_timeout_ns = 30ull * 1000000000ull;
    o->max_pending = 262144;
}

static void make_key(const struct tbbt_cap_msg *m, bool call, uint32_t xid,
                     struct tbbt__pair_key *k)
{
    memset(k, 0, sizeof(*k));
    k->af = m->af;
    k->xid = xid;
    memcpy(k->caddr, call ? m->src : m->dst, 16);
    memcpy(k->saddr, call ? m->dst : m->src, 16);
    k->cport = call ? m->sport : m->dport;
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

static uint32_t endpoint_ref(struct convert *c, const struct tbbt_cap_msg *m,
                             const struct tbbt__pair_key *k)
{
    struct tbbt__pair_key sk = *k;
    struct tbbt_endpoint ep;
    gpointer v;
    int af = m->af == 6 ? AF_INET6 : AF_INET;
    uint32_t ref;

    sk.xid = 0;
    sk.pad = m->tcp;
    v = g_hash_table_lookup(c->ep_cache, &sk);
    if (v)
        return (uint32_t)(GPOINTER_TO_UINT(v) - 1);
    memset(&ep, 0, sizeof(ep));
    inet_ntop(af, sk.caddr, ep.client, sizeof(ep.client));
    inet_ntop(af, sk.saddr, ep.server, sizeof(ep.server));
    ep.client_port = sk.cport;
    ep.server_port = m->sport == sk.cport ? m->dport : m->sport;
    ep.tcp = m->tcp;
    ref = tbbt_eptab_intern(c->ep, &ep);
    g_hash_table_insert(c->ep_cache, g_memdup2(&sk, sizeof(sk)), GUINT_TO_POINTER(ref + 1));
    return ref;
}

static void on_call(struct convert *c, const struct tbbt_cap_msg *m,
                    const struct tbbt__rpc_hdr *h)
{
    struct tbbt__pair_key k;
    struct tbbt_trace_rec *rec;
    int prog = tbbt__decode_prog(h->prog, h->vers);

    c->rpc_calls++;
    make_key(m, true, h->xid, &k);
    rec = tbbt__pairer_call(c->pairer, &k, m->ts_ns);
    if (!rec)
        return;
    if (prog == TBBT_PROG_NONE) {
        c->other_prog_calls++;
        return;     /* paired so its reply is not "unmatched", never written */
    }
    if (h->proc >= (uint32_t)tbbt_prog_nprocs(prog)) {
        c->malformed_nfs++;     /* no such procedure: paired, never written */
        return;
    }
    rec->prog = (uint8_t)prog;
    rec->proc = (uint8_t)h->proc;
    rec->flags = m->tcp ? TBBT_RF_TCP : 0;
    rec->endpoint = endpoint_ref(c, m, &k);
    if (h->flavor == 1) {
        rec->uid = h->uid;
        rec->gid = h->gid;
    } else if (h->flavor != 0 && !h->partial) {
        c->auth_other++;
    }
    c->calls[prog][h->proc]++;
    if (m->truncated)
        c->truncated_calls++;
    if (tbbt__decode_call(rec, m->data + h->body_off, m->len - h->body_off, m->truncated,
                          c->fh) == TBBT_E_BADREC)
        c->malformed_nfs++;
}

static void on_reply(struct convert *c, const struct tbbt_cap_msg *m,
                     const struct tbbt__rpc_hdr *h)
{
    struct tbbt__pair_key k;
    struct tbbt_trace_rec *rec;

    c->rpc_replies++;
    make_key(m, false, h->xid, &k);
    rec = tbbt__pairer_reply(c->pairer, &k, m->ts_ns);
    if (!rec)
        return;
    if (rec->prog == TBBT_PROG_NONE) {
        c->other_prog_pairs++;
        return;
    }
    rec->rpc_stat = h->rpc_stat;
    c->pairs[rec->prog][rec->proc]++;
    if (m->truncated)
        c->truncated_replies++;
    if (h->rpc_stat != TBBT_RPC_SUCCESS)
        return;
    if (tbbt__decode_reply(rec, m->data + h->body_off, m->len - h->body_off, m->truncated,
                           c->fh) == TBBT_E_BADREC)
        c->malformed_nfs++;
}

static void on_msg(const struct tbbt_cap_msg *m, void *arg)
{
    struct convert *c = arg;
    struct tbbt__rpc_hdr h;
    int rc = tbbt__rpc_parse(m->data, m->len, m->truncated, &h);

    if (rc == TBBT_E_TRUNC) {
        /* Not even the fixed RPC header survived the snap length: nothing to pair on. */
        c->unusable_truncated++;
        return;
    }
    if (rc != 0) {
        c->malformed_rpc++;
        return;
    }
    if (h.dir == TBBT__RPC_CALL)
        on_call(c, m, &h);
    else
        on_reply(c, m, &h);
    tbbt__pairer_drain(c->pairer);
}

static void on_emit(struct tbbt_trace_rec *rec, void *arg)
{
    struct convert *c = arg;
    int rc;

    if (rec->prog == TBBT_PROG_NONE || c->write_err)
        return;
    rc = tbbt_trace_writer_put(c->w, rec);
    if (rc < 0)
        c->write_err = rc;
    else
        c->records++;
}

static void on_progress(uint64_t bytes, void *arg)
{
    struct convert *c = arg;
    uint64_t now = tbbt_now_ns(), total = tbbt_cap_input_size(c->cap);
    double secs = (double)(now - c->started_ns) / 1e9;

    if (now - c->last_progress_ns < 500000000ull)
        return;
    c->last_progress_ns = now;
    fprintf(stderr, "\rtbbt-convert: %.0f MB", (double)bytes / 1e6);
    if (total)
        fprintf(stderr, " of %.0f MB (%.0f%%)", (double)total / 1e6, 100.0 * bytes / total);
    fprintf(stderr, ", %.1f MB/s, %" G_GUINT64_FORMAT " records   ",
            secs > 0 ? (double)bytes / 1e6 / secs : 0.0, (guint64)c->records);
    fflush(stderr);
}

static void json_procs(struct tbbt_json *j, struct convert *c, const char *key,
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
        if (name) {
            tbbt_json_key(j, name);
            tbbt_json_uint(j, n);
        }
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

static void json_clients(struct tbbt_json *j, struct convert *c)
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
        tbbt_json_key(j, "calls");
        tbbt_json_uint(j, r->calls);
        tbbt_json_key(j, "estimated_lost_calls");
        tbbt_json_uint(j, r->lost);
        tbbt_json_end_object(j);
    }
    tbbt_json_end_array(j);
    g_array_free(rows, TRUE);
}

static void json_kv(struct tbbt_json *j, const char *k, uint64_t v)
{
    tbbt_json_key(j, k);
    tbbt_json_uint(j, v);
}

static void json_capture(struct tbbt_json *j, const struct tbbt_cap_stats *s)
{
    tbbt_json_key(j, "capture");
    tbbt_json_begin_object(j);
    json_kv(j, "other_packets", s->other_packets);
    json_kv(j, "ip_fragments", s->ip_fragments);
    json_kv(j, "ip_reassembled", s->ip_reassembled);
    json_kv(j, "ip_frag_dropped", s->ip_frag_dropped);
    json_kv(j, "tcp_segments", s->tcp_segments);
    json_kv(j, "tcp_retransmits", s->tcp_retransmits);
    json_kv(j, "tcp_out_of_order", s->tcp_out_of_order);
    json_kv(j, "tcp_gaps", s->tcp_gaps);
    json_kv(j, "tcp_gap_bytes", s->tcp_gap_bytes);
    json_kv(j, "tcp_resyncs", s->tcp_resyncs);
    json_kv(j, "rpc_bad_marks", s->rpc_bad_marks);
    json_kv(j, "rpc_oversize", s->rpc_oversize);
    json_kv(j, "rpc_messages", s->rpc_messages);
    json_kv(j, "rpc_truncated", s->rpc_truncated);
    json_kv(j, "non_rpc_streams", s->non_rpc_streams);
    tbbt_json_end_object(j);
}

static char *summary_text(struct convert *c, double secs)
{
    static const int v2[] = {TBBT_PROG_NFS2}, v3[] = {TBBT_PROG_NFS3},
                     mnt[] = {TBBT_PROG_MNT1, TBBT_PROG_MNT3};
    const struct tbbt_cap_stats *cs = tbbt_cap_stats(c->cap);
    const struct tbbt__pair_stats *ps = tbbt__pairer_stats(c->pairer);
    struct tbbt_json j;

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    json_kv(&j, "packets", cs->packets);
    json_kv(&j, "bytes", cs->bytes);
    json_kv(&j, "truncated_packets", cs->truncated_packets);
    json_kv(&j, "malformed_packets", cs->malformed_packets + c->malformed_rpc + c->malformed_nfs);
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
    json_kv(&j, "duplicate_calls", ps->duplicate_calls);
    json_kv(&j, "duplicate_replies", ps->duplicate_replies);
    json_kv(&j, "truncated_calls", c->truncated_calls);
    json_kv(&j, "truncated_replies", c->truncated_replies);
    json_kv(&j, "truncated_unusable", c->unusable_truncated);
    json_kv(&j, "malformed_rpc", c->malformed_rpc);
    json_kv(&j, "malformed_nfs", c->malformed_nfs);
    json_kv(&j, "other_program_calls", c->other_prog_calls);
    json_kv(&j, "other_auth_flavors", c->auth_other);
    json_kv(&j, "handles", tbbt_fhtab_count(c->fh));
    json_kv(&j, "endpoints", tbbt_eptab_count(c->ep));
    json_capture(&j, cs);
    json_clients(&j, c);
    tbbt_json_key(&j, "elapsed_seconds");
    tbbt_json_double(&j, secs);
    tbbt_json_key(&j, "mb_per_second");
    tbbt_json_double(&j, secs > 0 ? (double)cs->bytes / 1e6 / secs : 0);
    tbbt_json_key(&j, "calls_per_second");
    tbbt_json_double(&j, secs > 0 ? (double)c->rpc_calls / secs : 0);
    json_kv(&j, "peak_rss_bytes", tbbt_peak_rss());
    tbbt_json_end_object(&j);
    return tbbt_json_finish(&j);
}

static int finish(struct convert *c, int rc, char *errbuf, size_t errlen)
{
    int wrc;
    char *text;

    tbbt__pairer_finish(c->pairer);
    if (c->o->progress)
        fputc('\n', stderr);
    if (c->write_err) {
        tbbt_trace_writer_abort(c->w);
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", c->o->output,
                 tbbt_strerror(c->write_err));
        return c->write_err;
    }
    wrc = tbbt_trace_writer_close(c->w);
    if (wrc < 0) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", c->o->output,
                 tbbt_strerror(wrc));
        return wrc;
    }
    if (c->o->summary_json) {
        text = summary_text(c, (double)(tbbt_now_ns() - c->started_ns) / 1e9);
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
    struct convert c = {.o = o};
    int rc, err = 0;

    c.started_ns = tbbt_now_ns();
    c.cap = tbbt_cap_open(o->inputs, o->n_inputs, o->filter, errbuf, errlen);
    if (!c.cap)
        return TBBT_E_BADREC;
    c.fh = tbbt_fhtab_new();
    c.ep = tbbt_eptab_new();
    c.ep_cache = g_hash_table_new_full(stream_hash, stream_equal, g_free, NULL);
    c.w = tbbt_trace_writer_open(o->output, c.fh, c.ep, &err);
    if (!c.w) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", o->output, tbbt_strerror(err));
        rc = err;
        goto out;
    }
    c.pairer = tbbt__pairer_new(o->reply_timeout_ns, o->max_pending, on_emit, &c);
    rc = tbbt_cap_run(c.cap, on_msg, &c, o->progress ? on_progress : NULL, errbuf, errlen);
    if (rc == 0 || rc == TBBT_E_TRUNC) {
        char ebuf[512] = "";
        int frc = finish(&c, rc, ebuf, sizeof(ebuf));
        if (frc != rc || frc != TBBT_E_TRUNC)
            snprintf(errbuf, errlen, "%s", ebuf);
        rc = frc;
    } else {
        tbbt_trace_writer_abort(c.w);
    }
    tbbt__pairer_free(c.pairer);
out:
    g_hash_table_destroy(c.ep_cache);
    tbbt_eptab_free(c.ep);
    tbbt_fhtab_free(c.fh);
    tbbt_cap_close(c.cap);
    return rc;
}
