/* SPDX-License-Identifier: MIT */
/*
 * report-pack: what the one report of an MPI run of tbbt-play needs beyond report.c
 * (docs/mpi.md, "The merged report"): the blob each rank sends rank 0
 * (tbbt_report_pack(), tbbt_report_unpack()), the merge of the engine's counts
 * (tbbt_report_counts_merge()), and the "mpi" and "ranks" parts of the JSON and text
 * output (tbbt_report_set_mpi()).  The reports themselves merge with tbbt_report_merge()
 * (report.c), exactly.  No MPI here: a blob is bytes, the mpi module moves them.  The
 * blob is read as untrusted input (STYLE.md 6): through util/buf.h's cursor, every count
 * and length checked against the bytes left before it is used.
 *
 * Blob layout, version 1.  Integers are big-endian; a double is the u64 of its IEEE 754
 * bits (NaN and infinities kept); a string is a u32 length and that many bytes, no NUL,
 * at most TBBT_REPORT_PACK_STR_MAX (length 0xffffffff: NULL); a bool is a u8 0 or 1.
 *
 *   u32 magic "TBRP", u32 version 1, u64 body length (bytes between this and the CRC)
 *   body:
 *     u64 start_ns
 *     hist all, hist dispatch
 *     u32 nproc (<= 160), nproc x {u8 prog, u8 proc, hist}   slots strictly increasing
 *       hist: u64 count, sum, min, max, u32 nb (<= TBBT_HIST_NBUCKETS), nb x {u16 index,
 *             u64 n}: the non-zero buckets, indexes strictly increasing, n > 0, the n
 *             adding up to count (an empty one: sum 0, min UINT64_MAX, max 0)
 *     u64 failures, u32 nkind, nkind x {u16 prog, u16 proc, i32 expected, i32 got, u64 n}
 *     u64 mismatches, u32 nmis, nmis x {u16 prog, u16 proc, str field (not NULL), u64 n}
 *       the n of each list add up to failures and mismatches; a mismatch kind is named
 *       "label.field" at output, the label made from (prog, proc) as when it was counted
 *     u32 nsecs (<= TBBT_REPORT_MAX_SECONDS), u32 nent (<= nsecs), nent x {u32 second,
 *       u64 issued, completed, failures, lat_sum, lat_max, due, lag_sum, lag_max}: the
 *       seconds with anything in them and the last one, strictly increasing, the last
 *       nsecs - 1
 *     counts: the members of struct tbbt_report_counts in COUNTS_FIELDS order
 *     rank:   the members of struct tbbt_report_rank in RANK_FIELDS order
 *   u32 CRC-32 (util/crc32.h) of every byte before it
 *
 * A new version number for any change of this layout: rank 0 refuses a blob of another
 * version in one line (all ranks run the same build, so that means a mixed install).
 */
#include "player/report-int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "util/buf.h"
#include "util/bytes.h"
#include "util/crc32.h"
#include "util/util.h"

#define HEADER_BYTES 16u
#define CRC_BYTES 4u
#define STR_NULL UINT32_MAX
#define NSLOTS (TBBT_REPORT_NPROG * TBBT_REPORT_NPROC)

/*
 * The members of struct tbbt_report_counts, in blob order: X(kind, member, merge), kind
 * U64, F64, U32, BOOL or STR; merge says what tbbt_report_counts_merge() does (report.h
 * gives the reasons): SUM, MAX, DST (dst's setting kept), ALL (and), FIRST (dst's, else
 * src's), GRACE.  A member added to the struct goes here too (the size check below).
 */
#define COUNTS_FIELDS(X)                                                                   \
    X(U64, trace_ops, SUM) X(U64, ops_issued, SUM) X(U64, ops_completed, SUM)              \
    X(U64, ops_skipped, SUM) X(U64, ops_unknown, SUM) X(U64, skipped_no_handle, SUM)       \
    X(U64, skipped_dependency, SUM) X(U64, skipped_not_nfs, SUM)                           \
    X(U64, skipped_incomplete, SUM) X(U64, skipped_unsendable, SUM)                        \
    X(U64, skipped_filtered, SUM) X(U64, skipped_stopped, SUM) X(U64, corrective_ops, SUM) \
    X(U64, retries, SUM) X(U64, reconnects, SUM) X(U64, timeouts, SUM)                     \
    X(U64, unchecked, SUM) X(U64, retransmits, SUM) X(U64, retransmit_dup_ok, SUM)         \
    X(U64, window_stalls, SUM) X(U64, peak_outstanding, MAX) X(U64, reordered_reads, SUM)  \
    X(U64, client_stalls, SUM) X(U64, read_bytes, SUM) X(U64, jukebox_replies, SUM)        \
    X(U64, jukebox_ops, SUM) X(U64, jukebox_gave_up, SUM) X(F64, jukebox_wait_seconds, SUM) \
    X(F64, jukebox_wait_max_seconds, MAX) X(U64, replies_racy, SUM) X(STR, grace, GRACE)   \
    X(F64, grace_wait_seconds, MAX) X(F64, wall_seconds, MAX)                              \
    X(F64, cpu_user_seconds, SUM) X(F64, cpu_system_seconds, SUM)                          \
    X(F64, trace_seconds, MAX) X(F64, speed, DST) X(STR, order, DST) X(STR, timing, DST)   \
    X(STR, transport, DST) X(U32, clones, SUM) X(U32, connections, SUM)                    \
    X(U32, window, DST) X(U32, max_outstanding, DST) X(F64, causal_slack_us, DST)          \
    X(BOOL, finished, ALL) X(STR, error, FIRST) X(STR, stop_reason, FIRST)

/* The members of struct tbbt_report_rank, in blob order (the third column unused). */
#define RANK_FIELDS(X)                                                                     \
    X(U32, rank, -) X(STR, host, -) X(STR, what, -) X(U64, ops_issued, -)                  \
    X(U64, ops_completed, -) X(U64, replay_failures, -) X(F64, throughput_ops, -)          \
    X(F64, wall_seconds, -) X(F64, cpu_user_seconds, -) X(F64, cpu_system_seconds, -)      \
    X(F64, offset_us, -) X(F64, rtt_us, -) X(F64, start_late_us, -) X(F64, drift_us, -)    \
    X(U64, cross_rank_deps, -) X(F64, cross_rank_wait_seconds, -) X(U64, notices_sent, -)  \
    X(BOOL, finished, -) X(STR, error, -) X(BOOL, verified, -) X(BOOL, verify_failed, -)    \
    X(BOOL, verify.ok, -) X(U64, verify.checked, -) X(U64, verify.mismatches, -)

/*
 * Tripwires for a member added to either struct but not to its table (LP64 sizes; a
 * member that fits in padding escapes them).  Update the number with the table.
 */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct tbbt_report_counts) == 368,
               "struct tbbt_report_counts changed: update COUNTS_FIELDS in report-pack.c");
_Static_assert(sizeof(struct tbbt_report_rank) == 184,
               "struct tbbt_report_rank changed: update RANK_FIELDS in report-pack.c");
#endif

/* ---- writing ------------------------------------------------------------------------- */

static void put_f64(GByteArray *o, double v)
{
    uint64_t u;

    memcpy(&u, &v, sizeof(u));
    tbbt_bytes_put_be64(o, u);
}

static void put_bool(GByteArray *o, bool v)
{
    tbbt_bytes_put_u8(o, v ? 1 : 0);
}

/* s, or NULL; longer than TBBT_REPORT_PACK_STR_MAX: cut there, on a UTF-8 boundary. */
static void put_str(GByteArray *o, const char *s)
{
    size_t len;

    if (!s) {
        tbbt_bytes_put_be32(o, STR_NULL);
        return;
    }
    len = strlen(s);
    if (len > TBBT_REPORT_PACK_STR_MAX) {
        len = TBBT_REPORT_PACK_STR_MAX;
        while (len > 0 && ((uint8_t)s[len] & 0xc0) == 0x80)
            len--;
    }
    tbbt_bytes_put_be32(o, (uint32_t)len);
    g_byte_array_append(o, (const guint8 *)s, (guint)len);
}

static void put_hist(GByteArray *o, const struct tbbt_hist *h)
{
    uint32_t nb = 0;

    tbbt_bytes_put_be64(o, h->count);
    tbbt_bytes_put_be64(o, h->sum);
    tbbt_bytes_put_be64(o, h->min);
    tbbt_bytes_put_be64(o, h->max);
    for (unsigned i = 0; i < TBBT_HIST_NBUCKETS; i++)
        nb += h->bucket[i] != 0;
    tbbt_bytes_put_be32(o, nb);
    for (unsigned i = 0; i < TBBT_HIST_NBUCKETS; i++)
        if (h->bucket[i]) {
            tbbt_bytes_put_be16(o, (uint16_t)i);
            tbbt_bytes_put_be64(o, h->bucket[i]);
        }
}

static void put_procs(GByteArray *o, const struct tbbt_report *r)
{
    uint32_t n = 0;

    for (unsigned p = 0; p < TBBT_REPORT_NPROG; p++)
        for (unsigned i = 0; i < TBBT_REPORT_NPROC; i++)
            n += r->proc[p][i] != NULL;
    tbbt_bytes_put_be32(o, n);
    for (unsigned p = 0; p < TBBT_REPORT_NPROG; p++)
        for (unsigned i = 0; i < TBBT_REPORT_NPROC; i++)
            if (r->proc[p][i]) {
                tbbt_bytes_put_u8(o, (uint8_t)p);
                tbbt_bytes_put_u8(o, (uint8_t)i);
                put_hist(o, r->proc[p][i]);
            }
}

/* The kinds of tab: failures (field NULL) or mismatches, after their total. */
static void put_kinds(GByteArray *o, GHashTable *tab, uint64_t total, bool mismatches)
{
    GHashTableIter it;
    gpointer key;

    tbbt_bytes_put_be64(o, total);
    tbbt_bytes_put_be32(o, g_hash_table_size(tab));
    g_hash_table_iter_init(&it, tab);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        const struct kind *k = key;

        tbbt_bytes_put_be16(o, k->prog);
        tbbt_bytes_put_be16(o, k->proc);
        if (mismatches) {
            put_str(o, k->field);
        } else {
            tbbt_bytes_put_be32(o, (uint32_t)k->expected);
            tbbt_bytes_put_be32(o, (uint32_t)k->got);
        }
        tbbt_bytes_put_be64(o, k->count);
    }
}

static bool sec_empty(const struct sec *s)
{
    return !(s->issued | s->completed | s->failures | s->lat_sum | s->lat_max | s->due |
             s->lag_sum | s->lag_max);
}

static void put_series(GByteArray *o, const struct tbbt_report *r)
{
    uint32_t nent = 0;

    tbbt_bytes_put_be32(o, (uint32_t)r->nsecs);
    for (size_t i = 0; i < r->nsecs; i++)
        nent += !sec_empty(&r->secs[i]) || i + 1 == r->nsecs;
    tbbt_bytes_put_be32(o, nent);
    for (size_t i = 0; i < r->nsecs; i++) {
        const struct sec *s = &r->secs[i];

        if (sec_empty(s) && i + 1 != r->nsecs)
            continue;
        tbbt_bytes_put_be32(o, (uint32_t)i);
        tbbt_bytes_put_be64(o, s->issued);
        tbbt_bytes_put_be64(o, s->completed);
        tbbt_bytes_put_be64(o, s->failures);
        tbbt_bytes_put_be64(o, s->lat_sum);
        tbbt_bytes_put_be64(o, s->lat_max);
        tbbt_bytes_put_be64(o, s->due);
        tbbt_bytes_put_be64(o, s->lag_sum);
        tbbt_bytes_put_be64(o, s->lag_max);
    }
}

#define PUT_U64(s, m) tbbt_bytes_put_be64(o, (s)->m);
#define PUT_F64(s, m) put_f64(o, (s)->m);
#define PUT_U32(s, m) tbbt_bytes_put_be32(o, (s)->m);
#define PUT_BOOL(s, m) put_bool(o, (s)->m);
#define PUT_STR(s, m) put_str(o, (s)->m);

static void put_counts(GByteArray *o, const struct tbbt_report_counts *c)
{
#define X(kind, m, how) PUT_##kind(c, m)
    COUNTS_FIELDS(X)
#undef X
}

static void put_rank(GByteArray *o, const struct tbbt_report_rank *ri)
{
#define X(kind, m, how) PUT_##kind(ri, m)
    RANK_FIELDS(X)
#undef X
}

GBytes *tbbt_report_pack(const struct tbbt_report *r, const struct tbbt_report_counts *c,
                         const struct tbbt_report_rank *ri)
{
    static const struct tbbt_report_rank no_rank;
    GByteArray *o = g_byte_array_sized_new(8192);
    uint64_t body;
    uint8_t len[8];

    tbbt_bytes_put_be32(o, TBBT_REPORT_PACK_MAGIC);
    tbbt_bytes_put_be32(o, TBBT_REPORT_PACK_VERSION);
    tbbt_bytes_put_be64(o, 0); /* the body length, set below */
    tbbt_bytes_put_be64(o, r->start_ns);
    put_hist(o, &r->all);
    put_hist(o, &r->dispatch);
    put_procs(o, r);
    put_kinds(o, r->kinds, r->failures, false);
    put_kinds(o, r->mismatches, r->nmismatches, true);
    put_series(o, r);
    put_counts(o, c);
    put_rank(o, ri ? ri : &no_rank);

    body = o->len - HEADER_BYTES;
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(body >> (56 - 8 * i));
    memcpy(o->data + 8, len, sizeof(len));
    tbbt_bytes_put_be32(o, tbbt_crc32(0, o->data, o->len));
    return g_byte_array_free_to_bytes(o);
}

/* ---- reading ------------------------------------------------------------------------- */

/* The reader: a cursor over the body, and the first error with its one-line reason. */
struct dec {
    struct tbbt_buf b;
    size_t body;            /* body length, for the byte offsets of errors */
    const char *part;       /* what is being read, for errors */
    int rc;
    char *err;
    size_t errlen;
};

/* Records the first error: rc and "<part> at byte N: <fmt>"; returns false. */
static bool G_GNUC_PRINTF(3, 4) dec_fail(struct dec *d, int rc, const char *fmt, ...)
{
    va_list ap;
    char *why;

    if (d->rc)
        return false;
    d->rc = rc;
    if (!d->err || !d->errlen)
        return false;
    va_start(ap, fmt);
    why = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_snprintf(d->err, d->errlen, "%s at byte %zu: %s", d->part,
               HEADER_BYTES + d->body - tbbt_buf_left(&d->b), why);
    g_free(why);
    return false;
}

/* True while nothing went wrong; a read past the end becomes the error here. */
static bool dec_ok(struct dec *d)
{
    if (d->rc)
        return false;
    if (d->b.trunc)
        return dec_fail(d, TBBT_E_TRUNC, "truncated (the body length is wrong)");
    return true;
}

static double get_double(struct dec *d)
{
    uint64_t u = tbbt_buf_get_be64(&d->b);
    double v;

    memcpy(&v, &u, sizeof(v));
    return v;
}

static bool get_bool(struct dec *d)
{
    uint8_t v = tbbt_buf_get_u8(&d->b);

    if (v > 1)
        dec_fail(d, TBBT_E_BADREC, "bool %u", (unsigned)v);
    return v == 1;
}

/* A string, interned; NULL for a NULL or a bad one (then d->rc is set). */
static const char *get_str(struct dec *d)
{
    uint32_t len = tbbt_buf_get_be32(&d->b);
    const uint8_t *p;
    char *s;
    const char *in;

    if (len == STR_NULL || d->b.trunc)
        return NULL;
    if (len > TBBT_REPORT_PACK_STR_MAX) {
        dec_fail(d, TBBT_E_BADREC, "string of %" PRIu32 " bytes (at most %u)", len,
                 TBBT_REPORT_PACK_STR_MAX);
        return NULL;
    }
    p = tbbt_buf_get(&d->b, len);
    if (!p)
        return NULL;
    if (memchr(p, 0, len)) {
        dec_fail(d, TBBT_E_BADREC, "string with a NUL byte");
        return NULL;
    }
    s = g_strndup((const char *)p, len);
    in = g_intern_string(s);
    g_free(s);
    return in;
}

/* A count of entries of at least `each` bytes: at most max, and no more than fit. */
static bool get_count(struct dec *d, uint32_t *n, uint32_t max, size_t each)
{
    *n = tbbt_buf_get_be32(&d->b);
    if (!dec_ok(d))
        return false;
    if (*n > max)
        return dec_fail(d, TBBT_E_BADREC, "%" PRIu32 " entries (at most %" PRIu32 ")", *n,
                        max);
    if (*n > tbbt_buf_left(&d->b) / each)
        return dec_fail(d, TBBT_E_TRUNC, "%" PRIu32 " entries of %zu+ bytes, %zu bytes left",
                        *n, each, tbbt_buf_left(&d->b));
    return true;
}

/* Adds n to *total; false (and the error) on overflow. */
static bool add_total(struct dec *d, uint64_t *total, uint64_t n)
{
    if (n > UINT64_MAX - *total)
        return dec_fail(d, TBBT_E_BADREC, "counts overflow");
    *total += n;
    return true;
}

static bool get_hist(struct dec *d, struct tbbt_hist *h)
{
    uint32_t nb;
    uint64_t total = 0;
    int prev = -1;

    h->count = tbbt_buf_get_be64(&d->b);
    h->sum = tbbt_buf_get_be64(&d->b);
    h->min = tbbt_buf_get_be64(&d->b);
    h->max = tbbt_buf_get_be64(&d->b);
    if (!get_count(d, &nb, TBBT_HIST_NBUCKETS, 10))
        return false;
    for (uint32_t k = 0; k < nb; k++) {
        unsigned i = tbbt_buf_get_be16(&d->b);
        uint64_t n = tbbt_buf_get_be64(&d->b);

        if (!dec_ok(d))
            return false;
        if (i >= TBBT_HIST_NBUCKETS || (int)i <= prev || n == 0)
            return dec_fail(d, TBBT_E_BADREC, "bucket %u (%" PRIu64 ") after bucket %d", i,
                            n, prev);
        if (!add_total(d, &total, n))
            return false;
        h->bucket[i] = n;
        prev = (int)i;
    }
    if (total != h->count)
        return dec_fail(d, TBBT_E_BADREC, "buckets add up to %" PRIu64 ", count %" PRIu64,
                        total, h->count);
    if (h->count ? h->min > h->max : h->sum || h->min != UINT64_MAX || h->max)
        return dec_fail(d, TBBT_E_BADREC, "min %" PRIu64 ", max %" PRIu64 " of %" PRIu64
                        " values", h->min, h->max, h->count);
    return true;
}

static bool get_procs(struct dec *d, struct tbbt_report *r)
{
    uint32_t n;
    int prev = -1;

    d->part = "procedure histograms";
    if (!get_count(d, &n, NSLOTS, 2 + 36))
        return false;
    for (uint32_t k = 0; k < n; k++) {
        unsigned p = tbbt_buf_get_u8(&d->b), i = tbbt_buf_get_u8(&d->b);
        int slot = (int)(p * TBBT_REPORT_NPROC + i);

        if (!dec_ok(d))
            return false;
        if (p >= TBBT_REPORT_NPROG || i >= TBBT_REPORT_NPROC || slot <= prev)
            return dec_fail(d, TBBT_E_BADREC, "procedure slot (%u, %u)", p, i);
        if (!get_hist(d, tbbt__report_proc_hist_at(r, p, i)))
            return false;
        prev = slot;
    }
    return true;
}

/* Failure kinds (mismatches false) or mismatch kinds into tab; *total their sum. */
static bool get_kinds(struct dec *d, GHashTable *tab, uint64_t *total, bool mismatches)
{
    uint64_t want = tbbt_buf_get_be64(&d->b), sum = 0;
    uint32_t n;

    d->part = mismatches ? "mismatch kinds" : "failure kinds";
    if (!get_count(d, &n, UINT32_MAX, mismatches ? 16 : 20))
        return false;
    for (uint32_t i = 0; i < n; i++) {
        struct kind k = {0};

        k.prog = tbbt_buf_get_be16(&d->b);
        k.proc = tbbt_buf_get_be16(&d->b);
        if (mismatches) {
            k.field = get_str(d);
            if (!k.field && dec_ok(d))
                return dec_fail(d, TBBT_E_BADREC, "mismatch kind without a field");
        } else {
            k.expected = (int32_t)tbbt_buf_get_be32(&d->b);
            k.got = (int32_t)tbbt_buf_get_be32(&d->b);
        }
        k.count = tbbt_buf_get_be64(&d->b);
        if (!dec_ok(d))
            return false;
        if (k.count == 0)
            return dec_fail(d, TBBT_E_BADREC, "a kind counted 0 times");
        if (!add_total(d, &sum, k.count))
            return false;
        tbbt__report_kind_add(tab, &k, k.count);
    }
    if (sum != want)
        return dec_fail(d, TBBT_E_BADREC, "kinds add up to %" PRIu64 ", total %" PRIu64, sum,
                        want);
    *total = want;
    return true;
}

static bool get_series(struct dec *d, struct tbbt_report *r)
{
    uint32_t nsecs, nent;
    int64_t prev = -1;

    d->part = "time series";
    nsecs = tbbt_buf_get_be32(&d->b);
    if (!dec_ok(d))
        return false;
    if (nsecs > TBBT_REPORT_MAX_SECONDS)
        return dec_fail(d, TBBT_E_BADREC, "%" PRIu32 " seconds (at most %u)", nsecs,
                        TBBT_REPORT_MAX_SECONDS);
    if (!get_count(d, &nent, nsecs, 4 + 8 * 8))
        return false;
    for (uint32_t k = 0; k < nent; k++) {
        struct sec s;
        uint32_t at = tbbt_buf_get_be32(&d->b);

        s.issued = tbbt_buf_get_be64(&d->b);
        s.completed = tbbt_buf_get_be64(&d->b);
        s.failures = tbbt_buf_get_be64(&d->b);
        s.lat_sum = tbbt_buf_get_be64(&d->b);
        s.lat_max = tbbt_buf_get_be64(&d->b);
        s.due = tbbt_buf_get_be64(&d->b);
        s.lag_sum = tbbt_buf_get_be64(&d->b);
        s.lag_max = tbbt_buf_get_be64(&d->b);
        if (!dec_ok(d))
            return false;
        if (at >= nsecs || (int64_t)at <= prev)
            return dec_fail(d, TBBT_E_BADREC, "second %" PRIu32 " after %" PRId64 " of %"
                            PRIu32, at, prev, nsecs);
        /* The last entry is second nsecs - 1: the series never outgrows what it holds. */
        if (k + 1 == nent && at + 1 != nsecs)
            return dec_fail(d, TBBT_E_BADREC, "last second %" PRIu32 " of %" PRIu32, at,
                            nsecs);
        *tbbt__report_sec_at(r, at) = s;
        prev = at;
    }
    if (nsecs && nent == 0)
        return dec_fail(d, TBBT_E_BADREC, "%" PRIu32 " seconds without entries", nsecs);
    return true;
}

#define GET_U64(s, m) (s)->m = tbbt_buf_get_be64(&d->b);
#define GET_F64(s, m) (s)->m = get_double(d);
#define GET_U32(s, m) (s)->m = tbbt_buf_get_be32(&d->b);
#define GET_BOOL(s, m) (s)->m = get_bool(d);
#define GET_STR(s, m) (s)->m = get_str(d);

static bool get_counts(struct dec *d, struct tbbt_report_counts *c)
{
    d->part = "counts";
#define X(kind, m, how) GET_##kind(c, m)
    COUNTS_FIELDS(X)
#undef X
    return dec_ok(d);
}

static bool get_rank(struct dec *d, struct tbbt_report_rank *ri)
{
    d->part = "rank info";
#define X(kind, m, how) GET_##kind(ri, m)
    RANK_FIELDS(X)
#undef X
    return dec_ok(d);
}

/* start - shift_ns, or false (and the error) when out of range. */
static bool shifted_start(struct dec *d, uint64_t start, int64_t shift, uint64_t *out)
{
    uint64_t mag = shift < 0 ? (uint64_t)(-(shift + 1)) + 1 : (uint64_t)shift;

    d->part = "start";
    if (shift >= 0 ? start < mag : start > UINT64_MAX - mag)
        return dec_fail(d, TBBT_E_RANGE, "start %" PRIu64 " ns shifted by %" PRId64
                        " ns is out of range", start, shift);
    *out = shift >= 0 ? start - mag : start + mag;
    return true;
}

static bool get_body(struct dec *d, int64_t shift_ns, struct tbbt_report **rp,
                     struct tbbt_report_counts *c, struct tbbt_report_rank *ri)
{
    uint64_t start = tbbt_buf_get_be64(&d->b);
    struct tbbt_report *r;

    if (!dec_ok(d) || !shifted_start(d, start, shift_ns, &start))
        return false;
    *rp = r = tbbt_report_new(start);
    d->part = "histogram of all";
    if (!get_hist(d, &r->all))
        return false;
    d->part = "dispatch histogram";
    if (!get_hist(d, &r->dispatch) || !get_procs(d, r) ||
        !get_kinds(d, r->kinds, &r->failures, false) ||
        !get_kinds(d, r->mismatches, &r->nmismatches, true) || !get_series(d, r) ||
        !get_counts(d, c) || !get_rank(d, ri))
        return false;
    d->part = "end";
    if (tbbt_buf_left(&d->b))
        return dec_fail(d, TBBT_E_BADREC, "%zu bytes after the rank info",
                        tbbt_buf_left(&d->b));
    return true;
}

/* Magic, version, body length and CRC of the blob p[size]; the reason in err. */
static int check_frame(const uint8_t *p, size_t size, char *err, size_t errlen)
{
    uint64_t body;
    uint32_t crc;

    if (size >= 4 && tbbt_be32(p) != TBBT_REPORT_PACK_MAGIC) {
        g_snprintf(err, errlen, "magic 0x%08" PRIx32 ", not a tbbt-play report blob",
                   tbbt_be32(p));
        return TBBT_E_MAGIC;
    }
    if (size >= 8 && tbbt_be32(p + 4) != TBBT_REPORT_PACK_VERSION) {
        g_snprintf(err, errlen, "report blob version %" PRIu32 ", this tbbt-play reads %u "
                   "(a different tbbt build on some rank?)", tbbt_be32(p + 4),
                   TBBT_REPORT_PACK_VERSION);
        return TBBT_E_VERSION;
    }
    if (size < HEADER_BYTES + CRC_BYTES) {
        g_snprintf(err, errlen, "report blob truncated: %zu bytes, less than its header", size);
        return TBBT_E_TRUNC;
    }
    body = (uint64_t)tbbt_be32(p + 8) << 32 | tbbt_be32(p + 12);
    if (body != size - HEADER_BYTES - CRC_BYTES) {
        g_snprintf(err, errlen, "report blob of %zu bytes, its header says %" PRIu64 "%s",
                   size, body, body > size - HEADER_BYTES - CRC_BYTES ? ": truncated" : "");
        return body > size - HEADER_BYTES - CRC_BYTES ? TBBT_E_TRUNC : TBBT_E_BADREC;
    }
    crc = tbbt_crc32(0, p, size - CRC_BYTES);
    if (crc != tbbt_be32(p + size - CRC_BYTES)) {
        g_snprintf(err, errlen, "report blob checksum 0x%08" PRIx32 ", computed 0x%08" PRIx32,
                   tbbt_be32(p + size - CRC_BYTES), crc);
        return TBBT_E_CHECKSUM;
    }
    return 0;
}

int tbbt_report_unpack(GBytes *b, int64_t shift_ns, struct tbbt_report **r,
                       struct tbbt_report_counts *c, struct tbbt_report_rank *ri, char *err,
                       size_t errlen)
{
    gsize size = 0;
    const uint8_t *p = g_bytes_get_data(b, &size);
    struct tbbt_report_counts lc = {0};
    struct tbbt_report_rank lri = {0};
    struct dec d = {.err = err, .errlen = errlen, .part = "header"};
    char dummy[1];
    int rc;

    *r = NULL;
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    err[0] = '\0';
    rc = check_frame(p, size, err, errlen);
    if (rc)
        return rc;
    d.body = size - HEADER_BYTES - CRC_BYTES;
    tbbt_buf_init(&d.b, p + HEADER_BYTES, d.body);
    if (!get_body(&d, shift_ns, r, &lc, &lri)) {
        tbbt_report_free(*r);
        *r = NULL;
        return d.rc;
    }
    if (c)
        *c = lc;
    if (ri)
        *ri = lri;
    return 0;
}

/* ---- merging counts ------------------------------------------------------------------ */

/* The rank of a grace probe's answer: the more telling one wins a merge. */
static int grace_rank(const char *g)
{
    static const char *const order[] = {"no", "unknown", "yes"};

    if (!g)
        return 0;
    for (int i = 0; i < 3; i++)
        if (strcmp(g, order[i]) == 0)
            return i + 1;
    return 1; /* another answer: above NULL only */
}

#define MERGE_SUM(m) dst->m += src->m;
#define MERGE_MAX(m) dst->m = src->m > dst->m ? src->m : dst->m;
#define MERGE_DST(m)
#define MERGE_ALL(m) dst->m = dst->m && src->m;
#define MERGE_FIRST(m) dst->m = dst->m ? dst->m : src->m;
#define MERGE_GRACE(m) dst->m = grace_rank(src->m) > grace_rank(dst->m) ? src->m : dst->m;

void tbbt_report_counts_merge(struct tbbt_report_counts *dst,
                              const struct tbbt_report_counts *src)
{
#define X(kind, m, how) MERGE_##how(m)
    COUNTS_FIELDS(X)
#undef X
}

/* ---- the MPI parts of the output ----------------------------------------------------- */

static const char *intern(const char *s)
{
    return s ? g_intern_string(s) : NULL;
}

void tbbt_report_set_mpi(struct tbbt_report *r, const struct tbbt_report_mpi *m,
                         const struct tbbt_report_rank *ranks, size_t nranks)
{
    g_free(r->mpi);
    g_free(r->ranks);
    r->mpi = NULL;
    r->ranks = NULL;
    r->nranks = 0;
    if (m) {
        r->mpi = g_memdup2(m, sizeof(*m));
        r->mpi->distribute = intern(m->distribute);
    }
    if (nranks) {
        r->ranks = g_memdup2(ranks, nranks * sizeof(*ranks));
        r->nranks = nranks;
        for (size_t i = 0; i < nranks; i++) {
            r->ranks[i].host = intern(ranks[i].host);
            r->ranks[i].what = intern(ranks[i].what);
            r->ranks[i].error = intern(ranks[i].error);
        }
    }
}

/* CPU microseconds per issued operation of a rank (NAN without operations). */
static double rank_us_per_op(const struct tbbt_report_rank *k)
{
    double cpu = k->cpu_user_seconds + k->cpu_system_seconds;

    return k->ops_issued ? cpu * 1e6 / (double)k->ops_issued : NAN;
}

static void json_rank(struct tbbt_json *j, const struct tbbt_report_rank *k)
{
    tbbt_json_begin_object(j);
#define PLAY_RANK(key, member) tbbt_json_kv(j, key, k->member);
#define PLAY_RANK_VALUE(key, fn) tbbt_json_kv_double(j, key, fn(k));
#define PLAY_RANK_OBJECT(key) tbbt_json_kv_object(j, key);
#define PLAY_RANK_END() tbbt_json_end_object(j);
#include "player/report-keys.def"
    tbbt_json_end_object(j);
}

void tbbt__report_json_mpi(struct tbbt_json *j, const struct tbbt_report *r)
{
    const struct tbbt_report_mpi *m = r->mpi;

    if (m) {
        tbbt_json_kv_object(j, "mpi");
#define PLAY_MPI(key, member) tbbt_json_kv(j, key, m->member);
#include "player/report-keys.def"
        tbbt_json_end_object(j);
    }
    if (r->nranks) {
        tbbt_json_kv_array(j, "ranks");
        for (size_t i = 0; i < r->nranks; i++)
            json_rank(j, &r->ranks[i]);
        tbbt_json_end_array(j);
    }
}

/* "%.1f" of v, or "-" when it is not a number. */
static const char *num1(char *buf, size_t len, double v)
{
    if (isfinite(v))
        g_snprintf(buf, len, "%.1f", v);
    else
        g_strlcpy(buf, "-", len);
    return buf;
}

static void text_rank(FILE *out, const struct tbbt_report_rank *k)
{
    char tput[32], cpu[32];

    fprintf(out, "  rank %-7" PRIu32 " %s%s%s: issued %" PRIu64 ", completed %" PRIu64
                 ", failures %" PRIu64 ", %s ops/s, %.3f s wall, %s us cpu per op, offset "
                 "%.1f us (rtt %.1f), late %.1f us, drift %.1f us",
            k->rank, k->host ? k->host : "?", k->what ? ", " : "", k->what ? k->what : "",
            k->ops_issued, k->ops_completed, k->replay_failures,
            num1(tput, sizeof(tput), k->throughput_ops), k->wall_seconds,
            num1(cpu, sizeof(cpu), rank_us_per_op(k)), k->offset_us, k->rtt_us,
            k->start_late_us, k->drift_us);
    if (k->cross_rank_deps || k->notices_sent)
        fprintf(out, ", %" PRIu64 " cross-rank waits (%.3f s), %" PRIu64 " notices sent",
                k->cross_rank_deps, k->cross_rank_wait_seconds, k->notices_sent);
    fprintf(out, ", %s%s%s\n", k->finished ? "finished" : "stopped early",
            k->error ? ": " : "", k->error ? k->error : "");
}

void tbbt__report_text_mpi(FILE *out, const struct tbbt_report *r)
{
    const struct tbbt_report_mpi *m = r->mpi;

    if (m)
        fprintf(out, "  mpi          %u rank%s, --distribute %s, start skew %.1f us, offsets "
                     "within %.1f us, %" PRIu64 " cross-rank waits (%.3f s), %" PRIu64
                     " notices sent\n",
                m->ranks, m->ranks == 1 ? "" : "s", m->distribute ? m->distribute : "?",
                m->start_skew_us, m->offset_error_us, m->cross_rank_deps,
                m->cross_rank_wait_seconds, m->notices_sent);
    for (size_t i = 0; i < r->nranks; i++)
        text_rank(out, &r->ranks[i]);
}
