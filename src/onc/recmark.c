/* SPDX-License-Identifier: MIT */
/*
 * Record marking (RFC 5531 section 11) over a byte stream that arrives whole and in
 * order: a client's or a proxy's socket.  Each fragment starts with a 4-byte mark, high
 * bit = last fragment of the record, low 31 bits = fragment length.
 *
 * Two ways of taking records off a stream, for two kinds of user:
 *   - the reassembler (struct tbbt_onc_recasm) hands over each record without its marks,
 *     from the caller's bytes when it is one fragment lying in them, else joined in its
 *     own buffer: the client transport (rpcconn.c), whose receive buffer is smaller
 *     than the largest record;
 *   - the scanner (struct tbbt_onc_recscan) only says where a whole record ends in a
 *     buffer that keeps every byte, marks included: the proxy, which forwards what it
 *     reads byte for byte.
 * Both refuse a fragment or a record over the caller's limit (marks are untrusted).
 * Captured streams, which have holes and snap-length cuts, are src/capture/rpcrec.c's.
 */
#include "onc/onc.h"

#include <string.h>

#include <glib.h>

#include "util/util.h"

void tbbt_onc_recasm_init(struct tbbt_onc_recasm *a, size_t max_record)
{
    memset(a, 0, sizeof(*a));
    a->max_record = max_record > TBBT_ONC_FRAG_MAX ? TBBT_ONC_FRAG_MAX : max_record;
}

void tbbt_onc_recasm_fini(struct tbbt_onc_recasm *a)
{
    g_free(a->buf);
    a->buf = NULL;
    a->cap = a->len = 0;
    tbbt_onc_recasm_reset(a);
}

void tbbt_onc_recasm_reset(struct tbbt_onc_recasm *a)
{
    a->len = 0;
    a->frag_left = 0;
    a->in_record = a->last = false;
}

bool tbbt_onc_recasm_busy(const struct tbbt_onc_recasm *a)
{
    return a->in_record;
}

/* n more bytes of the record; the marks' checks keep len + n <= max_record. */
static void append(struct tbbt_onc_recasm *a, const uint8_t *p, size_t n)
{
    if (a->len + n > a->cap) {
        a->cap = MAX(MAX(a->cap * 2, a->len + n), (size_t)4096);
        a->buf = g_realloc(a->buf, a->cap);
    }
    memcpy(a->buf + a->len, p, n);
    a->len += n;
}

/*
 * The mark at p (4 bytes there): starts a record or continues the open one.  Returns
 * 0 (the fragment is set up, *off past the mark), 1 (a whole one-fragment record in
 * p[*off..n): *rec, *rec_len, *off past it) or a negative TBBT_E_* code.
 */
static int take_mark(struct tbbt_onc_recasm *a, const uint8_t *p, size_t n, size_t *off,
                     const uint8_t **rec, size_t *rec_len)
{
    bool last;
    uint32_t flen = tbbt_onc_mark_get(p + *off, &last);

    if (flen > a->max_record) {
        a->bad_mark = (last ? TBBT_ONC_MARK_LAST : 0) | flen;
        return TBBT_E_BADREC;
    }
    if (a->in_record && flen > a->max_record - a->len)
        return TBBT_E_RANGE;
    *off += TBBT_ONC_MARK_LEN;
    if (!a->in_record && last && n - *off >= flen) {   /* all here: no copy */
        *rec = p + *off;
        *rec_len = flen;
        *off += flen;
        return 1;
    }
    if (!a->in_record) {
        a->in_record = true;
        a->len = 0;
    }
    a->frag_left = flen;
    a->last = last;
    return 0;
}

int tbbt_onc_recasm_next(struct tbbt_onc_recasm *a, const uint8_t *p, size_t n, size_t *used,
                         const uint8_t **rec, size_t *rec_len)
{
    size_t off = 0;
    int rc = 0;

    for (;;) {
        if (a->in_record && a->frag_left > 0) {
            size_t take = MIN(n - off, (size_t)a->frag_left);
            if (take == 0)
                break;
            append(a, p + off, take);
            off += take;
            a->frag_left -= (uint32_t)take;
            continue;
        }
        if (a->in_record && a->last) {
            a->in_record = false;
            *rec = a->buf;
            *rec_len = a->len;
            rc = 1;
            break;
        }
        if (n - off < TBBT_ONC_MARK_LEN)
            break;
        if ((rc = take_mark(a, p, n, &off, rec, rec_len)) != 0)
            break;
    }
    *used = off;
    return rc;
}

int tbbt_onc_recscan_next(struct tbbt_onc_recscan *s, const uint8_t *p, size_t n,
                          uint32_t max_frag, size_t max_record, size_t *rec_len)
{
    for (;;) {
        bool last;
        uint32_t len;

        if (n < s->frag || n - s->frag < TBBT_ONC_MARK_LEN)
            return 0;
        len = tbbt_onc_mark_get(p + s->frag, &last);
        if (len > max_frag)
            return TBBT_E_BADREC;
        if (s->frag + TBBT_ONC_MARK_LEN + len > max_record)
            return TBBT_E_RANGE;
        if (n - s->frag - TBBT_ONC_MARK_LEN < len)
            return 0;
        s->frag += TBBT_ONC_MARK_LEN + (size_t)len;
        if (last) {
            *rec_len = s->frag;
            return 1;
        }
    }
}

size_t tbbt_onc_rec_payload(const uint8_t *rec, size_t len, uint8_t *out, size_t max)
{
    size_t off = 0, got = 0;

    while (got < max && len - off >= TBBT_ONC_MARK_LEN) {
        bool last;
        size_t flen = tbbt_onc_mark_get(rec + off, &last), take;

        off += TBBT_ONC_MARK_LEN;
        flen = MIN(flen, len - off);
        take = MIN(flen, max - got);
        memcpy(out + got, rec + off, take);
        got += take;
        off += flen;
        if (last)
            break;
    }
    return got;
}
