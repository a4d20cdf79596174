/* SPDX-License-Identifier: MIT */
/*
 * The capture-file reader of tbbt-convert: pcap/pcapng (gzip too) through the
 * capture module, ONC RPC headers (RFC 5531) through rpc.c, NFS and MOUNT
 * arguments and results through decode.c, into the conversion core.
 *
 * Reading, RPC headers and pairing run on the calling thread; the bodies
 * after the RPC header go to the core with tbbt__conv_call_bytes() and
 * _reply_bytes(), and are decoded in fill(), on the writer thread when the
 * conversion is pipelined.  READ and WRITE data, which the decoders only
 * skip, then stays behind (keep()).  NFSv4 calls and callbacks are
 * recognized on the reading thread (nfs4count.c); a COMPOUND with AUTH_SYS or
 * AUTH_NONE opens a record like any NFS call (decode-nfs4.c fills it, and its
 * call and reply are counted, in fill()); the others (NULL, RPCSEC_GSS,
 * callbacks) are counted there and paired without a record.
 */
#include <inttypes.h>
#include <string.h>

#include "capture/capture.h"
#include "extract/conv-int.h"
#include "extract/decode.h"
#include "extract/decode-nfs4.h"
#include "extract/nfs4count.h"
#include "extract/rpc.h"
#include "proto/proto.h"
#include "util/util.h"

/*
 * Bytes of a READ reply or WRITE call body that its decoder reads before it
 * skips the data: the longest is a v3 READ reply (status, post_op_attr,
 * count, eof, data length: 104 bytes, RFC 1813 3.3.6), a v3 WRITE call
 * has at most 88 (file handle up to 64 bytes, offset, count, stable, data
 * length; 3.3.7), v2 less (RFC 1094 2.2.7, 2.2.9).  Generous on purpose.
 */
#define BULK_HEAD 512u

struct pcap_state {
    struct tbbt_cap *cap;
    struct tbbt__conv *conv;
    uint64_t malformed_rpc;       /* messages that are not RPC */
    uint64_t unusable_truncated;  /* messages cut before the end of the fixed RPC header */
    uint64_t other_auth;          /* calls with credentials other than AUTH_NONE/AUTH_SYS */
    struct tbbt__nfs4_count *nfs4; /* NFSv4 NULL, RPCSEC_GSS and callbacks (owned) */
    char pad[64];                 /* below: written by fill(), maybe on the writer thread */
    uint64_t malformed_nfs;       /* NFS/MOUNT bodies that do not decode */
    struct tbbt__nfs4_count *nfs4_rec;  /* NFSv4 COMPOUNDs of records (owned) */
    char pad2[64];
};

static bool pcap_probe(const uint8_t *h, size_t len)
{
    static const uint8_t magics[][4] = {
        {0xd4, 0xc3, 0xb2, 0xa1}, {0xa1, 0xb2, 0xc3, 0xd4},   /* pcap, microseconds */
        {0x4d, 0x3c, 0xb2, 0xa1}, {0xa1, 0xb2, 0x3c, 0x4d},   /* pcap, nanoseconds */
        {0x0a, 0x0d, 0x0d, 0x0a},                             /* pcapng section header */
    };
    for (size_t i = 0; len >= 4 && i < sizeof(magics) / sizeof(magics[0]); i++)
        if (memcmp(h, magics[i], 4) == 0)
            return true;
    return false;
}

static void to_msg(const struct tbbt_cap_msg *m, bool call, uint32_t xid,
                   struct tbbt__conv_msg *cm)
{
    memset(cm, 0, sizeof(*cm));
    cm->key.af = m->af;
    cm->key.xid = xid;
    memcpy(cm->key.caddr, call ? m->src : m->dst, 16);
    memcpy(cm->key.saddr, call ? m->dst : m->src, 16);
    cm->key.cport = call ? m->sport : m->dport;
    cm->key.sport = call ? m->dport : m->sport;
    cm->ts_ns = cm->pair_ns = m->ts_ns;
    cm->tcp = m->tcp;
    cm->truncated = m->truncated;
    /* a TCP stream remembers the flow numbers of its calls' and its replies' keys */
    cm->flow_cache = m->memo ? &m->memo[call ? 0 : 1] : NULL;
}

static void on_call(struct pcap_state *s, const struct tbbt_cap_msg *m,
                    const struct tbbt__rpc_hdr *h)
{
    struct tbbt__conv_msg cm;
    bool sys = h->flavor == 1;
    struct tbbt__nfs4_call c4 = {
        .prog = h->prog, .vers = h->vers, .proc = h->proc, .flavor = h->flavor,
        .af = m->af, .src = m->src, .dst = m->dst, .sport = m->sport, .dport = m->dport,
    };
    uint8_t side;

    to_msg(m, true, h->xid, &cm);
    if (h->flavor > 1 && !h->partial)
        s->other_auth++;
    side = tbbt__nfs4_count_call(s->nfs4, &c4, m->data + h->body_off, m->len - h->body_off,
                                 m->truncated);
    if (side == TBBT__NFS4_SIDE_RECORD) {         /* a COMPOUND: a record of its own */
        tbbt__conv_call_bytes(s->conv, &cm, TBBT_PROG_NFS4, h->proc, sys ? h->uid : 0,
                              sys ? h->gid : 0, sys ? h->sys : NULL, sys ? h->sys_len : 0,
                              m->data + h->body_off, m->len - h->body_off);
        return;
    }
    if (side) {
        tbbt__conv_side_call(s->conv, &cm, side);
        return;
    }
    tbbt__conv_call_bytes(s->conv, &cm, tbbt__decode_prog(h->prog, h->vers), h->proc,
                          sys ? h->uid : 0, sys ? h->gid : 0, sys ? h->sys : NULL,
                          sys ? h->sys_len : 0, m->data + h->body_off, m->len - h->body_off);
}

static void on_reply(struct pcap_state *s, const struct tbbt_cap_msg *m,
                     const struct tbbt__rpc_hdr *h)
{
    struct tbbt__conv_msg cm;
    bool ok = h->rpc_stat == TBBT_RPC_SUCCESS;
    uint8_t side;

    to_msg(m, false, h->xid, &cm);
    side = tbbt__conv_reply_bytes(s->conv, &cm, h->rpc_stat, ok ? m->data + h->body_off : NULL,
                                  ok ? m->len - h->body_off : 0);
    if (side)
        tbbt__nfs4_count_reply(s->nfs4, side, ok ? m->data + h->body_off : NULL,
                               ok ? m->len - h->body_off : 0, m->truncated);
}

/* Decodes a body into its record (conv-int.h: the records' thread). */
static void pcap_fill(struct tbbt__conv *c, struct tbbt_trace_rec *rec, bool reply,
                      const uint8_t *p, size_t len, bool trunc)
{
    struct pcap_state *s = *tbbt__conv_source_state(c);
    struct tbbt_fhtab *fh = tbbt__conv_fhtab(c);
    struct tbbt__nfs4_compound m;
    int rc;

    if (rec->prog == TBBT_PROG_NFS4) {  /* decoded once, counted here */
        rc = tbbt__nfs4_decode_rec(reply ? TBBT__NFS4_REPLY : TBBT__NFS4_CALL, p, len, trunc,
                                   rec, fh, &m);
        if (reply)
            tbbt__nfs4_count_decoded_reply(s->nfs4_rec, rec->minor, &m, rc);
        else
            tbbt__nfs4_count_decoded_call(s->nfs4_rec, &m, rc);
        return;
    }
    rc = reply ? tbbt__decode_reply(rec, p, len, trunc, fh)
               : tbbt__decode_call(rec, p, len, trunc, fh);
    if (rc == TBBT_E_BADREC)
        s->malformed_nfs++;
}

/*
 * Messages that move file data (the catalogue's BULK_REPLY and BULK_CALL:
 * READ replies, WRITE calls): the decoders read the fields before the data
 * and skip the data.  A message cut by the snap length is kept whole: only
 * then may a decoder re-read an item to tell truncation from malformation.
 */
static uint32_t pcap_keep(int prog, uint32_t proc, bool reply, uint32_t len, bool trunc)
{
    unsigned want = reply ? TBBT_PROTO_FL_BULK_REPLY : TBBT_PROTO_FL_BULK_CALL;
    bool bulk = (tbbt_proc_flags(prog, (int)proc) & want) != 0;

    return bulk && !trunc && len > BULK_HEAD ? BULK_HEAD : len;
}

static void on_msg(const struct tbbt_cap_msg *m, void *arg)
{
    struct pcap_state *s = arg;
    struct tbbt__rpc_hdr h;
    int rc = tbbt__rpc_parse(m->data, m->len, m->truncated, &h);

    if (rc == TBBT_E_TRUNC) {
        s->unusable_truncated++;    /* not even the fixed header: nothing to pair on */
        return;
    }
    if (rc != 0) {
        s->malformed_rpc++;
        return;
    }
    if (h.dir == TBBT__RPC_CALL)
        on_call(s, m, &h);
    else
        on_reply(s, m, &h);
    tbbt__conv_drain(s->conv);
}

static void on_progress(uint64_t bytes, void *arg)
{
    struct pcap_state *s = arg;
    tbbt__conv_progress(s->conv, bytes, tbbt_cap_input_size(s->cap));
}

static void warn_damage(const struct tbbt_cap *cap);

static int pcap_run(struct tbbt__conv *c, const char *const *paths, int n, char *errbuf,
                    size_t errlen)
{
    const struct tbbt_convert_opts *o = tbbt__conv_opts(c);
    struct pcap_state *s = g_new0(struct pcap_state, 1);
    int rc;

    *tbbt__conv_source_state(c) = s;
    s->conv = c;
    s->nfs4 = tbbt__nfs4_count_new();
    s->nfs4_rec = tbbt__nfs4_count_new();
    s->cap = tbbt_cap_open(paths, n, o->filter, errbuf, errlen);
    if (!s->cap)
        return TBBT_E_BADREC;
    rc = tbbt_cap_run(s->cap, on_msg, s, o->progress ? on_progress : NULL, errbuf, errlen);
    if (rc == TBBT_E_TRUNC || rc == TBBT_E_DAMAGED) {
        warn_damage(s->cap);
        if (errlen)
            errbuf[0] = 0;     /* said above, file by file */
    }
    return rc;
}

/* One warning line per damaged file: what was skipped, and the first problem. */
static void warn_damage(const struct tbbt_cap *cap)
{
    for (int i = 0; i < tbbt_cap_nfiles(cap); i++) {
        const struct tbbt_cap_damage *d = tbbt_cap_damage(cap, i);
        if (!d || !tbbt_cap_damaged(d))
            continue;
        tbbt_log(TBBT_LOG_WARN,
                 "'%s' is damaged: %" PRIu64 " bad record%s skipped, %" PRIu64 " byte%s "
                 "passed over, %" PRIu64 " resync%s%s (first: %s); the outputs hold what "
                 "could be read", tbbt_cap_path(cap, i), d->skipped_records,
                 d->skipped_records == 1 ? "" : "s", d->damaged_bytes,
                 d->damaged_bytes == 1 ? "" : "s", d->resyncs, d->resyncs == 1 ? "" : "s",
                 d->ends_early ? ", ends early" : "", d->why);
    }
}

/*
 * The damage keys: totals, and damaged_files, one object per file that had
 * bad records skipped or ended early.
 */
static void damage_json(const struct tbbt_cap *cap, const struct tbbt_cap_stats *cs,
                        struct tbbt_json *j)
{
    tbbt_json_kv_uint(j, "skipped_records", cs->skipped_records);
    tbbt_json_kv_uint(j, "resyncs", cs->resyncs);
    tbbt_json_kv_uint(j, "damaged_bytes", cs->damaged_bytes);
    tbbt_json_key(j, "damaged_files");
    tbbt_json_begin_array(j);
    for (int i = 0; i < tbbt_cap_nfiles(cap); i++) {
        const struct tbbt_cap_damage *d = tbbt_cap_damage(cap, i);
        if (!d || !tbbt_cap_damaged(d))
            continue;
        tbbt_json_begin_object(j);
        tbbt_json_key(j, "file");
        tbbt_json_string(j, tbbt_cap_path(cap, i));
        tbbt_json_kv_uint(j, "skipped_records", d->skipped_records);
        tbbt_json_kv_uint(j, "resyncs", d->resyncs);
        tbbt_json_kv_uint(j, "damaged_bytes", d->damaged_bytes);
        tbbt_json_key(j, "ends_early");
        tbbt_json_bool(j, d->ends_early);
        tbbt_json_key(j, "why");
        tbbt_json_string(j, d->why);
        tbbt_json_end_object(j);
    }
    tbbt_json_end_array(j);
}

static void pcap_summary(struct tbbt__conv *c, struct tbbt_json *j)
{
    struct pcap_state *s = *tbbt__conv_source_state(c);
    const struct tbbt_cap_stats *cs = tbbt_cap_stats(s->cap);

    tbbt_json_kv_uint(j, "packets", cs->packets);
    tbbt_json_kv_uint(j, "bytes", cs->bytes);
    tbbt_json_kv_uint(j, "truncated_packets", cs->truncated_packets);
    struct tbbt__nfs4_count *n4 = tbbt__nfs4_count_new();
    uint64_t bad_nfs;

    tbbt__nfs4_count_merge(n4, s->nfs4);
    tbbt__nfs4_count_merge(n4, s->nfs4_rec);
    bad_nfs = s->malformed_nfs + tbbt__nfs4_count_malformed(n4);

    tbbt_json_kv_uint(j, "malformed_packets", cs->malformed_packets + s->malformed_rpc + bad_nfs);
    tbbt_json_kv_uint(j, "malformed_rpc", s->malformed_rpc);
    tbbt_json_kv_uint(j, "malformed_nfs", bad_nfs);
    tbbt_json_kv_uint(j, "truncated_unusable", s->unusable_truncated);
    tbbt_json_kv_uint(j, "other_auth_flavors", s->other_auth);
    damage_json(s->cap, cs, j);
    tbbt__nfs4_count_json(n4, j);
    tbbt__nfs4_count_free(n4);
    tbbt_json_key(j, "capture");
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "other_packets", cs->other_packets);
    tbbt_json_kv_uint(j, "ip_fragments", cs->ip_fragments);
    tbbt_json_kv_uint(j, "ip_reassembled", cs->ip_reassembled);
    tbbt_json_kv_uint(j, "ip_frag_dropped", cs->ip_frag_dropped);
    tbbt_json_kv_uint(j, "tcp_segments", cs->tcp_segments);
    tbbt_json_kv_uint(j, "tcp_retransmits", cs->tcp_retransmits);
    tbbt_json_kv_uint(j, "tcp_out_of_order", cs->tcp_out_of_order);
    tbbt_json_kv_uint(j, "tcp_gaps", cs->tcp_gaps);
    tbbt_json_kv_uint(j, "tcp_gap_bytes", cs->tcp_gap_bytes);
    tbbt_json_kv_uint(j, "tcp_resyncs", cs->tcp_resyncs);
    tbbt_json_kv_uint(j, "rpc_bad_marks", cs->rpc_bad_marks);
    tbbt_json_kv_uint(j, "rpc_oversize", cs->rpc_oversize);
    tbbt_json_kv_uint(j, "rpc_messages", cs->rpc_messages);
    tbbt_json_kv_uint(j, "rpc_truncated", cs->rpc_truncated);
    tbbt_json_kv_uint(j, "non_rpc_streams", cs->non_rpc_streams);
    tbbt_json_end_object(j);
}

static void pcap_fini(struct tbbt__conv *c)
{
    struct pcap_state *s = *tbbt__conv_source_state(c);

    if (!s)
        return;
    tbbt_cap_close(s->cap);
    tbbt__nfs4_count_free(s->nfs4);
    tbbt__nfs4_count_free(s->nfs4_rec);
    g_free(s);
    *tbbt__conv_source_state(c) = NULL;
}

const struct tbbt__source_ops tbbt__source_pcap = {
    .name = "pcap",
    .version = 1,
    .probe = pcap_probe,
    .run = pcap_run,
    .summary = pcap_summary,
    .fini = pcap_fini,
    .fill = pcap_fill,
    .keep = pcap_keep,
};
