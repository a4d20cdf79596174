/* SPDX-License-Identifier: MIT */
/*
 * ONC RPC record marking over one direction of a TCP connection (RFC 5531
 * 11): each fragment starts with a 4-byte mark, high bit = last fragment of
 * the record, low 31 bits = fragment length.  The fragments of a record are
 * joined without their marks and the record is delivered as one message.
 *
 * The parser is fed the stream's bytes in sequence order, each piece with a
 * captured prefix and a wire length (tcp.c has already ordered segments and
 * trimmed retransmissions).  Positions advance by wire bytes, so a record
 * whose tail was cut by the snap length still ends where it should and the
 * next record mark is found at the start of a later segment.  A record
 * lying wholly inside one piece is delivered from the packet bytes; others
 * are copied into the stream's buffer.
 *
 * When the byte position of the next mark is unknown (a hole declared lost,
 * a mark in uncaptured bytes, an implausible mark, a stream picked up in
 * the middle) the parser resynchronizes: it scans captured bytes for a mark
 * followed by a plausible RPC header (xid, then msg_type CALL with rpcvers
 * 2 or msg_type REPLY with reply_stat 0/1).  Nothing else of RPC is parsed.
 *
 * The mark codec and the header test are the onc module's (onc/onc.h), as for the
 * client transport and the proxy; the reassembly stays here because a captured stream
 * is not a socket's: bytes may be missing (holes, snap-length cuts) and a stream may
 * start in the middle, which onc's reassembler, for whole in-order streams, refuses.
 */
#include "capture/capture-int.h"
#include "onc/onc.h"
#include "util/buf.h"

#include <string.h>

/* The part of the current piece not yet consumed. */
struct piece {
    const uint8_t *p;   /* captured bytes, borrowed */
    uint32_t cap;       /* captured length */
    uint32_t wire;      /* wire length (>= cap) */
    uint32_t off;       /* parse position, 0..wire */
    uint64_t ts;
};

#define NO_REWIND UINT32_MAX

static uint32_t min_u32(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

void tbbt__cap_deliver(struct tbbt_capdec *d, struct tbbt_cap_msg *m)
{
    d->st.rpc_messages++;
    if (m->truncated)
        d->st.rpc_truncated++;
    d->cb(m, d->arg);
}

void tbbt__cap_msg_from_flow(struct tbbt_cap_msg *m, const struct tbbt__cap_flow *f)
{
    m->af = f->af;
    memcpy(m->src, f->src, sizeof m->src);
    memcpy(m->dst, f->dst, sizeof m->dst);
    m->sport = f->sport;
    m->dport = f->dport;
}

static void deliver(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint64_t ts,
                    const uint8_t *data, uint32_t len, uint64_t wire)
{
    struct tbbt_cap_msg m;

    tbbt__cap_msg_from_flow(&m, &s->key);
    m.ts_ns = ts;
    m.data = data;
    m.len = len;
    m.wire_len = wire > UINT32_MAX ? UINT32_MAX : (uint32_t)wire;
    m.truncated = len < wire;
    m.tcp = true;
    m.memo = s->memo;
    s->rec.verified = true;
    tbbt__cap_deliver(d, &m);
}

static void append(struct tbbt__cap_rec *r, const uint8_t *p, uint32_t n)
{
    uint32_t need = r->rec_cap + n;   /* <= TBBT_CAP_MAX_RECORD: no overflow */

    if (need > r->buf_cap) {
        uint32_t sz = r->buf_cap ? r->buf_cap : 4096;
        while (sz < need)
            sz *= 2;
        r->buf = g_realloc(r->buf, sz);
        r->buf_cap = sz;
    }
    memcpy(r->buf + r->rec_cap, p, n);
    r->rec_cap = need;
}

/* Closes the open record, delivering what was captured of it if asked. */
static void end_record(struct tbbt_capdec *d, struct tbbt__cap_stream *s, bool give)
{
    struct tbbt__cap_rec *r = &s->rec;

    if (give && r->in_record && !r->skip && r->rec_cap > 0)
        deliver(d, s, r->rec_ts, r->buf, r->rec_cap, r->rec_wire);
    r->in_record = false;
    r->skip = false;
    r->prefix_open = false;
    r->hdr_pending = false;
    r->frag_left = 0;
    r->rec_wire = 0;
    r->rec_cap = 0;
    r->mark_have = 0;
    r->state = TBBT__REC_MARK;
}

static void enter_resync(struct tbbt_capdec *d, struct tbbt__cap_rec *r)
{
    if (r->state != TBBT__REC_RESYNC)
        d->st.tcp_resyncs++;
    r->state = TBBT__REC_RESYNC;
}

/* The position of the next mark is unknown: deliver what we have, then search. */
static void lose_sync(struct tbbt_capdec *d, struct tbbt__cap_stream *s)
{
    end_record(d, s, true);
    enter_resync(d, &s->rec);
}

/*
 * An implausible mark or header: count it (unless the stream never looked
 * like RPC: then it was picked up mid-record), drop the record, and search
 * again from rewind (a position in the current piece) if given.
 */
static void bad_mark(struct tbbt_capdec *d, struct tbbt__cap_stream *s, struct piece *c,
                     uint32_t rewind)
{
    if (s->rec.verified)
        d->st.rpc_bad_marks++;
    end_record(d, s, false);
    enter_resync(d, &s->rec);
    if (rewind != NO_REWIND)
        c->off = rewind;
}

static bool mark_sane(bool last, uint32_t len)
{
    return len != 0 && len <= TBBT__CAP_ABSURD_FRAG && (!last || len >= TBBT__CAP_MIN_MSG);
}

/*
 * A resync candidate at p[0..15]: the mark of a whole record (last-fragment
 * bit set: senders rarely split records, and inside an RPC header a small
 * integer followed by 0/1 words often passes for a non-last mark), not
 * oversize, followed by a plausible header.
 */
static bool candidate(const uint8_t *p)
{
    bool last;
    uint32_t len = tbbt_onc_mark_get(p, &last);

    return last && mark_sane(true, len) && len <= TBBT_CAP_MAX_RECORD &&
           tbbt_onc_plausible(p + 4);
}

/* The current fragment is complete. */
static void frag_done(struct tbbt_capdec *d, struct tbbt__cap_stream *s)
{
    if (s->rec.last)
        end_record(d, s, true);
    else
        s->rec.state = TBBT__REC_MARK;
}

/* A mark (len, last) that starts a record; c->off is just past it. */
static void new_record(struct tbbt_capdec *d, struct tbbt__cap_stream *s, struct piece *c,
                       uint32_t len, bool last, uint32_t mark_off)
{
    struct tbbt__cap_rec *r = &s->rec;
    uint32_t avail = c->off < c->cap ? c->cap - c->off : 0;
    bool checked = false;

    if (!mark_sane(last, len)) {
        bad_mark(d, s, c, mark_off == NO_REWIND ? NO_REWIND : mark_off + 1);
        return;
    }
    if (len >= 12 && avail >= 12) {
        if (!tbbt_onc_plausible(c->p + c->off)) {
            bad_mark(d, s, c, mark_off == NO_REWIND ? NO_REWIND : mark_off + 1);
            return;
        }
        r->verified = checked = true;
    }
    if (last && len <= avail && len <= TBBT_CAP_MAX_RECORD) {   /* all here: no copy */
        deliver(d, s, c->ts, c->p + c->off, len, len);
        c->off += len;
        return;
    }
    r->in_record = true;
    r->skip = len > TBBT_CAP_MAX_RECORD;
    if (r->skip)
        d->st.rpc_oversize++;
    r->last = last;
    r->frag_left = len;
    r->rec_wire = len;
    r->rec_cap = 0;
    r->prefix_open = true;
    r->hdr_pending = !checked;
    r->rec_ts = c->ts;
    r->state = TBBT__REC_FRAG;
}

/* A mark (len, last) continuing an open record. */
static void next_fragment(struct tbbt_capdec *d, struct tbbt__cap_stream *s, struct piece *c,
                          uint32_t len, bool last, uint32_t mark_off)
{
    struct tbbt__cap_rec *r = &s->rec;

    /*
     * A zero-length fragment is legal here: libtirpc's xdrrec sends an empty
     * last fragment when a record fills its buffer exactly.
     */
    if (len > TBBT__CAP_ABSURD_FRAG) {
        bad_mark(d, s, c, mark_off == NO_REWIND ? NO_REWIND : mark_off + 1);
        return;
    }
    if (!r->skip && r->rec_wire + len > TBBT_CAP_MAX_RECORD) {
        d->st.rpc_oversize++;
        r->skip = true;
    }
    r->rec_wire += len;
    r->frag_left = len;
    r->last = last;
    r->state = TBBT__REC_FRAG;
    if (len == 0)
        frag_done(d, s);
}

static void feed_mark(struct tbbt_capdec *d, struct tbbt__cap_stream *s, struct piece *c)
{
    struct tbbt__cap_rec *r = &s->rec;
    uint32_t len, mark_off = NO_REWIND;
    bool last;

    if (c->off >= c->cap) {   /* the mark was not captured */
        lose_sync(d, s);
        return;
    }
    if (r->mark_have == 0 && c->cap - c->off >= 4) {
        mark_off = c->off;
        len = tbbt_onc_mark_get(c->p + c->off, &last);
        c->off += TBBT_ONC_MARK_LEN;
    } else {
        uint32_t n = min_u32(4u - r->mark_have, c->cap - c->off);
        memcpy(r->mark_buf + r->mark_have, c->p + c->off, n);
        r->mark_have += n;
        c->off += n;
        if (r->mark_have < 4)
            return;
        r->mark_have = 0;
        len = tbbt_onc_mark_get(r->mark_buf, &last);
    }
    if (r->in_record)
        next_fragment(d, s, c, len, last, mark_off);
    else
        new_record(d, s, c, len, last, mark_off);
}

/* Checks a header that did not fit in the piece holding its mark; false if bad. */
static bool check_pending(struct tbbt_capdec *d, struct tbbt__cap_stream *s, struct piece *c,
                          uint32_t piece_start)
{
    struct tbbt__cap_rec *r = &s->rec;

    if (r->rec_cap < 12 && r->prefix_open)
        return true;
    r->hdr_pending = false;
    if (r->rec_cap < 12)
        return true;   /* cannot tell: accept */
    if (!tbbt_onc_plausible(r->buf)) {
        bad_mark(d, s, c, piece_start);
        return false;
    }
    r->verified = true;
    return true;
}

static void feed_frag(struct tbbt_capdec *d, struct tbbt__cap_stream *s, struct piece *c)
{
    struct tbbt__cap_rec *r = &s->rec;
    uint32_t n = min_u32(r->frag_left, c->wire - c->off);

    if (r->prefix_open && !r->skip) {
        uint32_t avail = c->off < c->cap ? c->cap - c->off : 0;
        uint32_t take = min_u32(n, avail);

        if (take) {
            if (r->rec_cap == 0)
                r->rec_ts = c->ts;   /* the packet with the header, not only the mark */
            append(r, c->p + c->off, take);
        }
        if (take < n)
            r->prefix_open = false;   /* a hole in the captured bytes ends the prefix */
        if (r->hdr_pending && !check_pending(d, s, c, c->off))
            return;
    }
    c->off += n;
    r->frag_left -= n;
    if (r->frag_left == 0)
        frag_done(d, s);
}

static void feed_resync(struct tbbt__cap_rec *r, struct piece *c)
{
    const uint8_t *p = c->p;

    if (c->off < c->cap && c->cap - c->off >= 16) {
        for (uint32_t i = c->off, end = c->cap - 16; i <= end; i++) {
            /* Last-fragment bit and msg_type 0/1: reject most positions cheaply. */
            if (p[i] < 0x80 || (p[i + 8] | p[i + 9] | p[i + 10]) != 0 || p[i + 11] > 1)
                continue;
            if (candidate(p + i)) {
                c->off = i;
                r->state = TBBT__REC_MARK;
                r->mark_have = 0;
                return;
            }
        }
    }
    c->off = c->wire;
}

void tbbt__cap_rec_feed(struct tbbt_capdec *d, struct tbbt__cap_stream *s, const uint8_t *p,
                        uint32_t cap, uint32_t wire, uint64_t ts)
{
    struct piece c = {p, cap, wire, 0, ts};

    if (wire > 0)
        s->rec.had_data = true;
    while (c.off < c.wire) {
        switch (s->rec.state) {
        case TBBT__REC_MARK:
            feed_mark(d, s, &c);
            break;
        case TBBT__REC_FRAG:
            feed_frag(d, s, &c);
            break;
        default:
            feed_resync(&s->rec, &c);
            break;
        }
    }
}

void tbbt__cap_rec_gap(struct tbbt_capdec *d, struct tbbt__cap_stream *s, uint32_t n)
{
    struct tbbt__cap_rec *r = &s->rec;

    if (n == 0 || r->state == TBBT__REC_RESYNC)
        return;
    if (r->state == TBBT__REC_FRAG && n <= r->frag_left) {
        /* The fragment's end is still known: the record goes on, truncated. */
        r->prefix_open = false;
        r->hdr_pending = false;
        r->frag_left -= n;
        if (r->frag_left == 0)
            frag_done(d, s);
        return;
    }
    lose_sync(d, s);
}

void tbbt__cap_rec_finish(struct tbbt_capdec *d, struct tbbt__cap_stream *s)
{
    struct tbbt__cap_rec *r = &s->rec;

    end_record(d, s, true);
    if (r->had_data && !r->verified)
        d->st.non_rpc_streams++;
    r->had_data = false;
    r->verified = false;
}
