/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the merged report of an MPI run (src/player/report-pack.c, docs/mpi.md
 * "The merged report"): pack -> unpack gives the same JSON, text and CSV as the original,
 * every counts and rank member back, strings interned and long ones cut on a UTF-8
 * boundary; the start shifted by a rank's clock offset; blobs cut at every length (as
 * sent, and re-framed so that the body parser meets the cut), random byte changes (with
 * the CRC left stale, and recomputed so the parser sees them), and hand-made bad blobs
 * fail cleanly with a reason; four ranks' reports with random operations, failures,
 * mismatches and series and different clock offsets, packed, unpacked and merged, give
 * bucket for bucket the sums of their histograms (all, dispatch, every procedure), the
 * sums of their series, and the report one process recording everything would have;
 * tbbt_report_counts_merge() rule by rule; the "mpi" and "ranks" keys and text lines.
 * Single process, no MPI: the blobs do not travel.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "test-rand.h"

#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "player/report.h"
#include "trace/trace.h"
#include "util/crc32.h"
#include "util/util.h"

#define SEC UINT64_C(1000000000)
#define S0 (1000 * SEC)         /* the common start, rank 0's clock */
#define NRANKS 4
#define HDR 16                  /* magic, version, body length */
#define CRC 4

/* ---- helpers ------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    return test_rand_next(&rng_state);
}

static uint64_t rnd_below(uint64_t n)
{
    return rnd() % n;
}

static bool has(const char *text, const char *what)
{
    return strstr(text, what) != NULL;
}

static char *csv_of(const struct tbbt_report *r)
{
    char *path = g_strdup_printf("/tmp/test-report-pack-%d.csv", (int)getpid());
    char *text = NULL;

    assert_int_equal(tbbt_report_timeseries_csv(r, path), 0);
    assert_true(g_file_get_contents(path, &text, NULL, NULL));
    unlink(path);
    g_free(path);
    return text;
}

static char *text_of(const struct tbbt_report *r, const struct tbbt_report_counts *c,
                     const struct tbbt_report_verify *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    tbbt_report_text(f, r, c, v);
    assert_int_equal(fclose(f), 0);
    return buf;
}

/* Reads the big-endian u32 / u64 at p, writes it. */
static void set_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * A blob from body bytes: the header of b (magic, version) with the body length of
 * body[len], then the body and a fresh CRC: so a changed body reaches the parser.
 */
static GBytes *reframe(const uint8_t *hdr, const uint8_t *body, size_t len)
{
    uint8_t *p = g_malloc(HDR + len + CRC);

    memcpy(p, hdr, 8);
    set_be32(p + 8, (uint32_t)((uint64_t)len >> 32));
    set_be32(p + 12, (uint32_t)len);
    memcpy(p + HDR, body, len);
    set_be32(p + HDR + len, tbbt_crc32(0, p, HDR + len));
    return g_bytes_new_take(p, HDR + len + CRC);
}

/* Unpacks b, which must fail: checks *r NULL, a reason, c and ri untouched. */
static int unpack_fails(GBytes *b)
{
    struct tbbt_report *r = (struct tbbt_report *)&r;
    struct tbbt_report_counts c;
    struct tbbt_report_rank ri;
    char err[256];
    int rc;

    memset(&c, 0xa5, sizeof(c));
    memset(&ri, 0xa5, sizeof(ri));
    rc = tbbt_report_unpack(b, 0, &r, &c, &ri, err, sizeof(err));
    if (rc >= 0)
        fail_msg("a bad blob of %zu bytes was accepted", g_bytes_get_size(b));
    assert_null(r);
    assert_true(err[0] != '\0');
    assert_null(strchr(err, '\n'));
    assert_int_equal(((uint8_t *)&c)[0], 0xa5);
    assert_int_equal(((uint8_t *)&ri)[sizeof(ri) - 1], 0xa5);
    return rc;
}

/* ---- sample data --------------------------------------------------------------------- */

static const char *const fields[] = {"size", "nlink", "mode", "uid", "type", "entries", "eof"};

/* (prog, proc) pairs: NFSv3, v2, MOUNT, and out of range ("other"). */
static const int procs[][2] = {
    {TBBT_PROG_NFS3, 1}, {TBBT_PROG_NFS3, 3}, {TBBT_PROG_NFS3, 6}, {TBBT_PROG_NFS3, 7},
    {TBBT_PROG_NFS3, 17}, {TBBT_PROG_NFS2, 4}, {TBBT_PROG_MNT3, 1}, {9, 2}, {TBBT_PROG_NFS3, 40},
};

/*
 * Records n random events into r (its clock: start + x) and into one (rank 0's clock:
 * S0 + x), x within [first, first + span) seconds.
 */
static void random_events(struct tbbt_report *r, uint64_t start, struct tbbt_report *one,
                          int n, unsigned first, unsigned span)
{
    for (int k = 0; k < n; k++) {
        uint64_t x = first * SEC + rnd_below(span * SEC);
        uint64_t lat = rnd_below(8) ? 20000 + rnd_below(3000000) : rnd_below(64);
        const int *pp = procs[rnd_below(G_N_ELEMENTS(procs))];
        int64_t lag = (int64_t)rnd_below(3000000) - 1000000;

        tbbt_report_issued(r, start + x - lat);
        tbbt_report_issued(one, S0 + x - lat);
        tbbt_report_dispatch(r, lag, start + x - lat);
        tbbt_report_dispatch(one, lag, S0 + x - lat);
        tbbt_report_op(r, pp[0], pp[1], lat, start + x);
        tbbt_report_op(one, pp[0], pp[1], lat, S0 + x);
        if (rnd_below(10) == 0) {
            int32_t got = rnd_below(3) ? 2 : TBBT_REPORT_NO_REPLY;
            int32_t exp = (int32_t)rnd_below(3) * 10008;

            tbbt_report_failure(r, pp[0], pp[1], exp, got, start + x);
            tbbt_report_failure(one, pp[0], pp[1], exp, got, S0 + x);
        }
        if (rnd_below(7) == 0) {
            const char *f = fields[rnd_below(G_N_ELEMENTS(fields))];

            tbbt_report_mismatch(r, pp[0], pp[1], f);
            tbbt_report_mismatch(one, pp[0], pp[1], f);
        }
    }
}

/* Counts with every member set, different per seed. */
static void sample_counts(struct tbbt_report_counts *c, uint64_t seed)
{
    uint64_t *u64s[] = {
        &c->trace_ops, &c->ops_issued, &c->ops_completed, &c->ops_skipped, &c->ops_unknown,
        &c->skipped_no_handle, &c->skipped_dependency, &c->skipped_not_nfs,
        &c->skipped_incomplete, &c->skipped_unsendable, &c->skipped_filtered,
        &c->skipped_stopped, &c->corrective_ops, &c->retries, &c->reconnects, &c->timeouts,
        &c->unchecked, &c->retransmits, &c->retransmit_dup_ok, &c->window_stalls,
        &c->peak_outstanding, &c->reordered_reads, &c->client_stalls, &c->read_bytes,
        &c->jukebox_replies, &c->jukebox_ops, &c->jukebox_gave_up, &c->replies_racy,
    };

    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < G_N_ELEMENTS(u64s); i++)
        *u64s[i] = seed * 1000 + i + 1;
    c->jukebox_wait_seconds = 1.25 * (double)seed;
    c->jukebox_wait_max_seconds = 0.5 + (double)seed;
    c->grace = "no";
    c->grace_wait_seconds = 0.125 * (double)seed;
    c->wall_seconds = 10 + (double)seed / 3;
    c->cpu_user_seconds = 1.0 / 3 + (double)seed;
    c->cpu_system_seconds = 0.1 * (double)seed;
    c->trace_seconds = 64 + (double)seed;
    c->speed = 2;
    c->order = "conservative";
    c->timing = "timestamp";
    c->transport = "tcp";
    c->clones = 1 + (uint32_t)seed;
    c->connections = 2;
    c->window = 4096;
    c->max_outstanding = 64;
    c->causal_slack_us = NAN;
    c->finished = true;
    c->error = NULL;
    c->stop_reason = NULL;
}

static void sample_rank(struct tbbt_report_rank *ri, uint32_t rank)
{
    memset(ri, 0, sizeof(*ri));
    ri->rank = rank;
    ri->host = rank % 2 ? "hostB" : "hostA";
    ri->what = rank == 1 ? "images 1,5" : NULL;
    ri->ops_issued = 1000 + rank;
    ri->ops_completed = 990 + rank;
    ri->replay_failures = rank;
    ri->throughput_ops = 1234.5678901234 + rank;
    ri->wall_seconds = 3.0 + 1e-9 * rank;
    ri->cpu_user_seconds = 0.7;
    ri->cpu_system_seconds = 0.2;
    ri->offset_us = -12.345678 * rank;
    ri->rtt_us = 0.4;
    ri->start_late_us = 0.05;
    ri->drift_us = 1e-3;
    ri->cross_rank_deps = 7;
    ri->cross_rank_wait_seconds = 0.25;
    ri->notices_sent = 12345;
    ri->finished = rank != 3;
    ri->error = rank == 3 ? "server \"x\" dead" : NULL;
    ri->verified = rank != 3;
    ri->verify_failed = rank == 3;
    ri->verify = (struct tbbt_report_verify){.ok = rank != 2, .checked = 464 + rank,
                                             .mismatches = rank == 2};
}

/* A report of every kind of content, and its counts. */
static struct tbbt_report *sample_report(uint64_t start, struct tbbt_report_counts *c)
{
    struct tbbt_report *r = tbbt_report_new(start), *sink = tbbt_report_new(S0);

    random_events(r, start, sink, 3000, 0, 4);
    random_events(r, start, sink, 50, 9, 1); /* idle seconds 4..8 */
    tbbt_report_free(sink);
    sample_counts(c, 3);
    c->error = "a \"quoted\" reason";
    c->stop_reason = "signal SIGTERM";
    c->grace = "unknown";
    c->finished = false;
    return r;
}

static void assert_str_eq(const char *a, const char *b)
{
    if (a || b) {
        assert_non_null(a);
        assert_non_null(b);
        assert_string_equal(a, b);
        assert_ptr_equal(b, g_intern_string(b));
    }
}

static void assert_dbl_eq(double a, double b)
{
    if (!(a == b || (isnan(a) && isnan(b))))
        fail_msg("%.17g != %.17g", a, b);
}

/* Every member of a and b equal (b's strings interned); the test's own list. */
static void assert_counts_equal(const struct tbbt_report_counts *a,
                                const struct tbbt_report_counts *b)
{
#define U(m) assert_int_equal(a->m, b->m);
#define D(m) assert_dbl_eq(a->m, b->m);
#define S(m) assert_str_eq(a->m, b->m);
    U(trace_ops) U(ops_issued) U(ops_completed) U(ops_skipped) U(ops_unknown)
    U(skipped_no_handle) U(skipped_dependency) U(skipped_not_nfs) U(skipped_incomplete)
    U(skipped_unsendable) U(skipped_filtered) U(skipped_stopped) U(corrective_ops) U(retries)
    U(reconnects) U(timeouts) U(unchecked) U(retransmits) U(retransmit_dup_ok)
    U(window_stalls) U(peak_outstanding) U(reordered_reads) U(client_stalls) U(read_bytes)
    U(jukebox_replies) U(jukebox_ops) U(jukebox_gave_up) D(jukebox_wait_seconds)
    D(jukebox_wait_max_seconds) U(replies_racy) S(grace) D(grace_wait_seconds)
    D(wall_seconds) D(cpu_user_seconds) D(cpu_system_seconds) D(trace_seconds) D(speed)
    S(order) S(timing) S(transport) U(clones) U(connections) U(window) U(max_outstanding)
    D(causal_slack_us) U(finished) S(error) S(stop_reason)
#undef U
#undef D
#undef S
}

static void assert_rank_equal(const struct tbbt_report_rank *a, const struct tbbt_report_rank *b)
{
#define U(m) assert_int_equal(a->m, b->m);
#define D(m) assert_dbl_eq(a->m, b->m);
#define S(m) assert_str_eq(a->m, b->m);
    U(rank) S(host) S(what) U(ops_issued) U(ops_completed) U(replay_failures)
    D(throughput_ops) D(wall_seconds) D(cpu_user_seconds) D(cpu_system_seconds) D(offset_us)
    D(rtt_us) D(start_late_us) D(drift_us) U(cross_rank_deps) D(cross_rank_wait_seconds)
    U(notices_sent) U(finished) S(error) U(verified) U(verify_failed) U(verify.ok)
    U(verify.checked) U(verify.mismatches)
#undef U
#undef D
#undef S
}

/* ---- round trip ---------------------------------------------------------------------- */

static void test_roundtrip(void **state)
{
    struct tbbt_report_counts c, c2;
    struct tbbt_report_rank ri, ri2;
    struct tbbt_report_verify v = {.ok = false, .checked = 9, .mismatches = 2};
    struct tbbt_report *r = sample_report(S0, &c), *r2 = NULL;
    char err[256] = "x";
    GBytes *b;

    (void)state;
    sample_rank(&ri, 1);
    b = tbbt_report_pack(r, &c, &ri);
    assert_memory_equal(g_bytes_get_data(b, NULL), "TBRP\0\0\0\1", 8);
    assert_int_equal(tbbt_report_unpack(b, 0, &r2, &c2, &ri2, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    assert_non_null(r2);
    assert_counts_equal(&c, &c2);
    assert_rank_equal(&ri, &ri2);
    assert_true(tbbt_report_mismatches(r) > 0 && tbbt_report_failures(r) > 0);
    assert_memory_equal(tbbt_report_all_hist(r), tbbt_report_all_hist(r2),
                        sizeof(struct tbbt_hist));
    assert_memory_equal(tbbt_report_dispatch_hist(r), tbbt_report_dispatch_hist(r2),
                        sizeof(struct tbbt_hist));
    assert_int_equal(tbbt_report_seconds(r), 10);
    assert_int_equal(tbbt_report_seconds(r2), 10);

    char *j1 = tbbt_report_json(r, &c, &v), *j2 = tbbt_report_json(r2, &c2, &v);
    assert_string_equal(j1, j2);
    assert_true(has(j1, "\"other\":{\"count\":"));
    assert_true(has(j1, "\"mnt3.mnt\":{\"count\":"));
    assert_true(has(j1, ".entries\":"));
    assert_true(has(j1, ":OK->NO_REPLY\":"));
    assert_false(has(j1, "\"mpi\""));
    char *t1 = text_of(r, &c, &v), *t2 = text_of(r2, &c2, &v);
    assert_string_equal(t1, t2);
    char *s1 = csv_of(r), *s2 = csv_of(r2);
    assert_string_equal(s1, s2);
    assert_true(has(s1, "\n5,0,0,0,"));     /* an idle second kept */

    /* A blob of the unpacked report unpacks to the same again; NULL rank info: zeros. */
    GBytes *b2 = tbbt_report_pack(r2, &c2, NULL);
    struct tbbt_report *r3 = NULL;
    assert_int_equal(g_bytes_get_size(b2),  /* host and what now NULL */
                     g_bytes_get_size(b) - strlen("images 1,5") - strlen("hostB"));
    assert_int_equal(tbbt_report_unpack(b2, 0, &r3, NULL, &ri2, NULL, 0), 0);
    assert_int_equal(ri2.rank, 0);
    assert_null(ri2.host);
    char *j3 = tbbt_report_json(r3, &c2, &v);
    assert_string_equal(j1, j3);

    g_free(j1), g_free(j2), g_free(j3), g_free(t1), g_free(t2), g_free(s1), g_free(s2);
    g_bytes_unref(b);
    g_bytes_unref(b2);
    tbbt_report_free(r);
    tbbt_report_free(r2);
    tbbt_report_free(r3);
}

/* An empty report, and strings: empty, NULL, too long (cut on a UTF-8 boundary). */
static void test_roundtrip_edges(void **state)
{
    struct tbbt_report *r = tbbt_report_new(0), *r2 = NULL;
    struct tbbt_report_counts c = {0}, c2;
    struct tbbt_report_rank ri = {.host = ""}, ri2;
    size_t n = TBBT_REPORT_PACK_STR_MAX + 1;
    char *lng = g_malloc(n + 1);
    GBytes *b;

    (void)state;
    lng[0] = 'a';               /* "a" then 2-byte characters: the cut falls inside one */
    for (size_t i = 1; i + 1 < n; i += 2)
        memcpy(lng + i, "\xc3\xa9", 2);
    lng[n] = '\0';
    c.error = lng;
    c.causal_slack_us = INFINITY;
    b = tbbt_report_pack(r, &c, &ri);
    assert_int_equal(tbbt_report_unpack(b, 0, &r2, &c2, &ri2, NULL, 0), 0);
    assert_int_equal(strlen(c2.error), TBBT_REPORT_PACK_STR_MAX - 1);
    assert_true(g_utf8_validate(c2.error, -1, NULL));
    assert_int_equal(strncmp(c2.error, lng, TBBT_REPORT_PACK_STR_MAX - 1), 0);
    assert_string_equal(ri2.host, "");
    assert_null(c2.order);
    assert_true(isinf(c2.causal_slack_us));
    assert_int_equal(tbbt_report_seconds(r2), 0);
    assert_int_equal(tbbt_report_all_hist(r2)->min, UINT64_MAX);
    c.error = c2.error;
    char *j1 = tbbt_report_json(r, &c, NULL), *j2 = tbbt_report_json(r2, &c2, NULL);
    assert_string_equal(j1, j2);
    g_free(j1);
    g_free(j2);
    g_free(lng);
    g_bytes_unref(b);
    tbbt_report_free(r);
    tbbt_report_free(r2);
}

/* The start in a rank's clock becomes rank 0's; out-of-range shifts are refused. */
static void test_shift(void **state)
{
    struct tbbt_report_counts c = {0};
    struct tbbt_report *r = tbbt_report_new(5 * SEC), *r2 = NULL, *ref = tbbt_report_new(SEC);
    char err[256];
    GBytes *b;

    (void)state;
    tbbt_report_op(r, TBBT_PROG_NFS3, 1, 1000, 7 * SEC + 1);
    tbbt_report_op(ref, TBBT_PROG_NFS3, 1, 1000, 3 * SEC + 1);
    b = tbbt_report_pack(r, &c, NULL);
    assert_int_equal(tbbt_report_unpack(b, 4 * (int64_t)SEC, &r2, NULL, NULL, err,
                                        sizeof(err)), 0);
    /* Merged into a report starting at 1 s, the op lands in second 2 as in ref. */
    struct tbbt_report *m = tbbt_report_new(SEC);
    tbbt_report_merge(m, r2);
    char *a = csv_of(m), *e = csv_of(ref);
    assert_string_equal(a, e);
    tbbt_report_free(r2);
    g_free(a);
    g_free(e);

    assert_int_equal(tbbt_report_unpack(b, -(int64_t)SEC, &r2, NULL, NULL, err, sizeof(err)), 0);
    tbbt_report_free(r2);
    assert_int_equal(tbbt_report_unpack(b, 6 * (int64_t)SEC, &r2, NULL, NULL, err,
                                        sizeof(err)), TBBT_E_RANGE);
    assert_null(r2);
    assert_true(has(err, "out of range"));
    g_bytes_unref(b);

    tbbt_report_free(r);
    r = tbbt_report_new(UINT64_MAX - 5);
    b = tbbt_report_pack(r, &c, NULL);
    assert_int_equal(tbbt_report_unpack(b, -6, &r2, NULL, NULL, err, sizeof(err)), TBBT_E_RANGE);
    assert_int_equal(tbbt_report_unpack(b, INT64_MIN, &r2, NULL, NULL, err, sizeof(err)),
                     TBBT_E_RANGE);
    assert_int_equal(tbbt_report_unpack(b, -5, &r2, NULL, NULL, err, sizeof(err)), 0);
    tbbt_report_free(r2);
    g_bytes_unref(b);
    tbbt_report_free(r);
    tbbt_report_free(m);
    tbbt_report_free(ref);
}

/* ---- bad blobs ----------------------------------------------------------------------- */

static GBytes *sample_blob(void)
{
    struct tbbt_report_counts c;
    struct tbbt_report_rank ri;
    struct tbbt_report *r = sample_report(S0, &c);
    GBytes *b;

    sample_rank(&ri, 2);
    b = tbbt_report_pack(r, &c, &ri);
    tbbt_report_free(r);
    return b;
}

/* Every prefix of a blob fails, as sent and re-framed (its body cut, a valid CRC). */
static void test_truncated(void **state)
{
    GBytes *b = sample_blob();
    size_t size;
    const uint8_t *p = g_bytes_get_data(b, &size);
    size_t body = size - HDR - CRC;
    int ntrunc = 0;

    (void)state;
    for (size_t len = 0; len < size; len++) {
        GBytes *cut = g_bytes_new_from_bytes(b, 0, len);
        int rc = unpack_fails(cut);

        ntrunc += rc == TBBT_E_TRUNC;
        g_bytes_unref(cut);
    }
    assert_true(ntrunc > 0);
    for (size_t len = 0; len < body; len++) {
        GBytes *cut = reframe(p, p + HDR, len);
        int rc = unpack_fails(cut);

        if (rc != TBBT_E_TRUNC && rc != TBBT_E_BADREC)
            fail_msg("body cut at %zu: %s", len, tbbt_strerror(rc));
        g_bytes_unref(cut);
    }
    print_message("%zu-byte blob: every cut refused\n", size);
    g_bytes_unref(b);
}

/* Random byte changes: refused by the CRC; with the CRC made right, parsed or refused. */
static void test_flips(void **state)
{
    GBytes *b = sample_blob();
    size_t size;
    const uint8_t *p = g_bytes_get_data(b, &size);
    size_t body = size - HDR - CRC;
    uint8_t *buf = g_malloc(size);
    unsigned ok = 0, refused = 0;

    (void)state;
    for (int t = 0; t < 4000; t++) {
        memcpy(buf, p, size);
        buf[rnd_below(size)] ^= (uint8_t)(1 + rnd_below(255));
        GBytes *bad = g_bytes_new(buf, size);
        unpack_fails(bad);
        g_bytes_unref(bad);
    }
    for (int t = 0; t < 20000; t++) {
        struct tbbt_report *r = NULL;
        struct tbbt_report_counts c;
        char err[256];
        int nflip = 1 + (int)rnd_below(3);

        memcpy(buf, p, size);
        for (int k = 0; k < nflip; k++) {
            size_t at = HDR + rnd_below(body);

            buf[at] = rnd_below(4) ? buf[at] ^ (uint8_t)(1u << rnd_below(8))
                                   : (uint8_t)rnd();
        }
        GBytes *bad = reframe(buf, buf + HDR, body);
        int rc = tbbt_report_unpack(bad, 0, &r, &c, NULL, err, sizeof(err));
        if (rc == 0) {
            /* A blob that parses is a report: its output must not crash either. */
            char *j = tbbt_report_json(r, &c, NULL);
            FILE *null = fopen("/dev/null", "w");

            tbbt_report_text(null, r, &c, NULL);
            fclose(null);
            g_free(j);
            tbbt_report_free(r);
            ok++;
        } else {
            assert_null(r);
            assert_true(err[0] != '\0');
            refused++;
        }
        g_bytes_unref(bad);
    }
    print_message("byte changes with a valid CRC: %u parsed, %u refused\n", ok, refused);
    assert_true(refused > 0);
    g_free(buf);
    g_bytes_unref(b);
}

/* Hand-made bad blobs, each with its reason. */
static void test_bad_blobs(void **state)
{
    struct tbbt_report *r = tbbt_report_new(S0), *r2 = (struct tbbt_report *)&r;
    struct tbbt_report_counts c = {0};
    GBytes *b, *bad;
    size_t size;
    const uint8_t *p;
    uint8_t *q;
    char err[256];

    (void)state;
    b = tbbt_report_pack(r, &c, NULL);
    p = g_bytes_get_data(b, &size);
    q = g_memdup2(p, size);

    q[0] = 'X';
    bad = g_bytes_new(q, size);
    assert_int_equal(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, err, sizeof(err)), TBBT_E_MAGIC);
    assert_null(r2);
    assert_true(has(err, "not a tbbt-play report"));
    g_bytes_unref(bad);
    q[0] = 'T';

    set_be32(q + 4, 2);
    bad = g_bytes_new(q, size);
    assert_int_equal(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, err, sizeof(err)),
                     TBBT_E_VERSION);
    assert_true(has(err, "version 2"));
    g_bytes_unref(bad);
    set_be32(q + 4, 1);

    q[size - 1] ^= 1;
    bad = g_bytes_new(q, size);
    assert_int_equal(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, err, sizeof(err)),
                     TBBT_E_CHECKSUM);
    g_bytes_unref(bad);
    q[size - 1] ^= 1;

    /* A trailing byte inside the framed body. */
    uint8_t *longer = g_malloc0(size - HDR - CRC + 1);
    memcpy(longer, q + HDR, size - HDR - CRC);
    bad = reframe(q, longer, size - HDR - CRC + 1);
    assert_int_equal(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, err, sizeof(err)),
                     TBBT_E_BADREC);
    assert_true(has(err, "1 bytes after"));
    g_bytes_unref(bad);
    g_free(longer);

    /* Empty report: body = start 8, 2 hists of 36, nproc 4, failures 12, mismatches 12,
     * then nsecs: claim 5 seconds with no entries, then 1 entry that is not there. */
    size_t at = HDR + 8 + 36 + 36 + 4 + 12 + 12;
    assert_int_equal(be32(q + at), 0);
    set_be32(q + at, 5);
    bad = reframe(q, q + HDR, size - HDR - CRC);
    assert_int_equal(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, err, sizeof(err)),
                     TBBT_E_BADREC);
    assert_true(has(err, "time series"));
    g_bytes_unref(bad);
    set_be32(q + at + 4, 1);
    bad = reframe(q, q + HDR, size - HDR - CRC);
    assert_true(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, err, sizeof(err)) < 0);
    g_bytes_unref(bad);
    set_be32(q + at, TBBT_REPORT_MAX_SECONDS + 1);
    bad = reframe(q, q + HDR, size - HDR - CRC);
    assert_int_equal(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, err, sizeof(err)),
                     TBBT_E_BADREC);
    g_bytes_unref(bad);
    set_be32(q + at, 0);
    set_be32(q + at + 4, 0);

    /* Huge counts of procedures, failure kinds, buckets. */
    size_t counts[] = {HDR + 8 + 36 + 36, HDR + 8 + 36 + 36 + 4 + 8, HDR + 8 + 32};
    for (size_t i = 0; i < G_N_ELEMENTS(counts); i++) {
        set_be32(q + counts[i], 0xfffffff0u);
        bad = reframe(q, q + HDR, size - HDR - CRC);
        assert_true(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, err, sizeof(err)) < 0);
        assert_null(r2);
        g_bytes_unref(bad);
        set_be32(q + counts[i], 0);
    }

    /* Err may be NULL. */
    q[0] = 0;
    bad = g_bytes_new(q, size);
    assert_int_equal(tbbt_report_unpack(bad, 0, &r2, NULL, NULL, NULL, 0), TBBT_E_MAGIC);
    g_bytes_unref(bad);
    g_free(q);
    g_bytes_unref(b);
    tbbt_report_free(r);
}

/* ---- merging four ranks -------------------------------------------------------------- */

/* Sum of the CSV columns issued, completed, failures per second over texts. */
static void csv_sums(char *const *texts, size_t n, GString *out)
{
    uint64_t sum[64][3] = {{0}};
    size_t rows = 0;

    for (size_t k = 0; k < n; k++) {
        char **lines = g_strsplit(texts[k], "\n", -1);

        for (size_t i = 1; lines[i] && lines[i][0]; i++) {
            unsigned s;
            uint64_t a, b2, f;

            assert_int_equal(sscanf(lines[i], "%u,%" SCNu64 ",%" SCNu64 ",%" SCNu64, &s, &a,
                                    &b2, &f), 4);
            assert_true(s < 64);
            sum[s][0] += a, sum[s][1] += b2, sum[s][2] += f;
            rows = s + 1 > rows ? s + 1 : rows;
        }
        g_strfreev(lines);
    }
    for (size_t s = 0; s < rows; s++)
        g_string_append_printf(out, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", s, sum[s][0],
                               sum[s][1], sum[s][2]);
}

/* Checks m == the bucket-by-bucket sum of h[0..n) (NULLs count as empty). */
static void assert_hist_sum(const struct tbbt_hist *m, const struct tbbt_hist *const *h, size_t n)
{
    uint64_t count = 0, sum = 0, min = UINT64_MAX, max = 0;

    for (size_t k = 0; k < n; k++)
        if (h[k]) {
            count += h[k]->count;
            sum += h[k]->sum;
            min = h[k]->min < min ? h[k]->min : min;
            max = h[k]->max > max ? h[k]->max : max;
        }
    if (!count) {
        assert_true(!m || m->count == 0);
        return;
    }
    assert_non_null(m);
    assert_int_equal(m->count, count);
    assert_int_equal(m->sum, sum);
    assert_int_equal(m->min, min);
    assert_int_equal(m->max, max);
    for (unsigned i = 0; i < TBBT_HIST_NBUCKETS; i++) {
        uint64_t b = 0;

        for (size_t k = 0; k < n; k++)
            b += h[k] ? h[k]->bucket[i] : 0;
        if (m->bucket[i] != b)
            fail_msg("bucket %u: %" PRIu64 ", sum of the ranks %" PRIu64, i, m->bucket[i], b);
    }
}

static void test_merge_four(void **state)
{
    static const int64_t offset[NRANKS] = {0, 123456789, -987654321, 5 * (int64_t)SEC + 1};
    struct tbbt_report *rank[NRANKS], *back[NRANKS];
    struct tbbt_report_counts c[NRANKS], cm, cb;
    struct tbbt_report_rank ri[NRANKS], rb[NRANKS];
    struct tbbt_report *one = tbbt_report_new(S0), *merged = tbbt_report_new(S0);
    char *csv[NRANKS];

    (void)state;
    for (int k = 0; k < NRANKS; k++) {
        uint64_t start = (uint64_t)((int64_t)S0 + offset[k]);

        rank[k] = tbbt_report_new(start);
        random_events(rank[k], start, one, 500 + 700 * k, (unsigned)k, 3 + 2 * (unsigned)k);
        sample_counts(&c[k], (uint64_t)k);
        sample_rank(&ri[k], (uint32_t)k);
        csv[k] = csv_of(rank[k]);

        GBytes *b = tbbt_report_pack(rank[k], &c[k], &ri[k]);
        char err[256];
        assert_int_equal(tbbt_report_unpack(b, offset[k], &back[k], &cb, &rb[k], err,
                                            sizeof(err)), 0);
        g_bytes_unref(b);
        assert_rank_equal(&ri[k], &rb[k]);
        tbbt_report_merge(merged, back[k]);
        if (k == 0)
            cm = cb;
        else
            tbbt_report_counts_merge(&cm, &cb);
    }

    /* Histograms: bucket for bucket the sums of the four ranks' (taken before packing). */
    const struct tbbt_hist *h[NRANKS];
    for (int k = 0; k < NRANKS; k++)
        h[k] = tbbt_report_all_hist(rank[k]);
    assert_hist_sum(tbbt_report_all_hist(merged), h, NRANKS);
    for (int k = 0; k < NRANKS; k++)
        h[k] = tbbt_report_dispatch_hist(rank[k]);
    assert_hist_sum(tbbt_report_dispatch_hist(merged), h, NRANKS);
    for (int p = 0; p < TBBT_REPORT_NPROG; p++)
        for (int i = 0; i < TBBT_REPORT_NPROC; i++) {
            if (p == 0 && i != 0)
                continue;       /* (0, i): "other" again */
            for (int k = 0; k < NRANKS; k++)
                h[k] = tbbt_report_proc_hist(rank[k], p, i);
            assert_hist_sum(tbbt_report_proc_hist(merged, p, i), h, NRANKS);
        }
    assert_non_null(tbbt_report_proc_hist(merged, 9, 2)); /* "other" */

    /* Failures and mismatches: the sums, kind by kind. */
    uint64_t fsum = 0, msum = 0;
    for (int k = 0; k < NRANKS; k++) {
        fsum += tbbt_report_failures(rank[k]);
        msum += tbbt_report_mismatches(rank[k]);
    }
    assert_int_equal(tbbt_report_failures(merged), fsum);
    assert_int_equal(tbbt_report_mismatches(merged), msum);
    uint64_t kind = 0;
    for (int k = 0; k < NRANKS; k++)
        kind += tbbt_report_failure_count(rank[k], TBBT_PROG_NFS3, 1, 0, 2);
    assert_int_equal(tbbt_report_failure_count(merged, TBBT_PROG_NFS3, 1, 0, 2), kind);

    /* The series: per second the sums of the ranks' (each counted from S0). */
    GString *want = g_string_new(NULL), *got = g_string_new(NULL);
    char *mcsv = csv_of(merged);
    csv_sums(csv, NRANKS, want);
    csv_sums(&mcsv, 1, got);
    assert_string_equal(got->str, want->str);
    assert_int_equal(tbbt_report_seconds(merged), 3 + 3 * 3);

    /* And everything is what one process recording it all would have reported. */
    assert_memory_equal(tbbt_report_all_hist(merged), tbbt_report_all_hist(one),
                        sizeof(struct tbbt_hist));
    char *ocsv = csv_of(one);
    assert_string_equal(mcsv, ocsv);
    char *jm = tbbt_report_json(merged, &cm, NULL), *jo = tbbt_report_json(one, &cm, NULL);
    assert_string_equal(jm, jo);

    /* Counts merged: sums, maxima, dst's settings. */
    assert_int_equal(cm.ops_issued, 0 * 1000 + 2 + 1000 + 2 + 2000 + 2 + 3000 + 2);
    assert_int_equal(cm.peak_outstanding, 3000 + 21);
    assert_int_equal(cm.clones, 1 + 2 + 3 + 4);
    assert_dbl_eq(cm.wall_seconds, 10 + 3.0 / 3);

    g_string_free(want, TRUE);
    g_string_free(got, TRUE);
    g_free(mcsv), g_free(ocsv), g_free(jm), g_free(jo);
    for (int k = 0; k < NRANKS; k++) {
        g_free(csv[k]);
        tbbt_report_free(rank[k]);
        tbbt_report_free(back[k]);
    }
    tbbt_report_free(one);
    tbbt_report_free(merged);
}

/* ---- counts merge -------------------------------------------------------------------- */

static void test_counts_merge(void **state)
{
    struct tbbt_report_counts a, b, a0;

    (void)state;
    sample_counts(&a, 1);
    sample_counts(&b, 2);
    b.order = "fsdep";
    b.timing = "full";
    b.transport = "udp";
    b.speed = 5;
    b.window = 1;
    b.max_outstanding = 2;
    b.causal_slack_us = 7;
    b.finished = false;
    b.error = "b's error";
    b.stop_reason = "server dead";
    b.grace = "yes";
    a0 = a;
    tbbt_report_counts_merge(&a, &b);

    assert_int_equal(a.trace_ops, a0.trace_ops + b.trace_ops);
    assert_int_equal(a.ops_completed, a0.ops_completed + b.ops_completed);
    assert_int_equal(a.skipped_stopped, a0.skipped_stopped + b.skipped_stopped);
    assert_int_equal(a.retransmit_dup_ok, a0.retransmit_dup_ok + b.retransmit_dup_ok);
    assert_int_equal(a.read_bytes, a0.read_bytes + b.read_bytes);
    assert_int_equal(a.replies_racy, a0.replies_racy + b.replies_racy);
    assert_int_equal(a.jukebox_gave_up, a0.jukebox_gave_up + b.jukebox_gave_up);
    assert_int_equal(a.peak_outstanding, b.peak_outstanding);          /* max */
    assert_dbl_eq(a.jukebox_wait_seconds, a0.jukebox_wait_seconds + b.jukebox_wait_seconds);
    assert_dbl_eq(a.jukebox_wait_max_seconds, b.jukebox_wait_max_seconds);
    assert_dbl_eq(a.wall_seconds, b.wall_seconds);                     /* common window */
    assert_dbl_eq(a.trace_seconds, b.trace_seconds);
    assert_dbl_eq(a.grace_wait_seconds, b.grace_wait_seconds);
    assert_dbl_eq(a.cpu_user_seconds, a0.cpu_user_seconds + b.cpu_user_seconds);
    assert_dbl_eq(a.cpu_system_seconds, a0.cpu_system_seconds + b.cpu_system_seconds);
    assert_int_equal(a.clones, a0.clones + b.clones);
    assert_int_equal(a.connections, a0.connections + b.connections);
    assert_string_equal(a.order, "conservative");                       /* dst's settings */
    assert_string_equal(a.timing, "timestamp");
    assert_string_equal(a.transport, "tcp");
    assert_dbl_eq(a.speed, 2);
    assert_int_equal(a.window, 4096);
    assert_int_equal(a.max_outstanding, 64);
    assert_true(isnan(a.causal_slack_us));
    assert_false(a.finished);
    assert_string_equal(a.error, "b's error");                          /* first non-NULL */
    assert_string_equal(a.stop_reason, "server dead");
    assert_string_equal(a.grace, "yes");

    /* dst's error and stop reason are kept; "unknown" does not replace "yes". */
    b.error = "later";
    b.stop_reason = "signal SIGTERM";
    b.grace = "unknown";
    b.finished = true;
    tbbt_report_counts_merge(&a, &b);
    assert_string_equal(a.error, "b's error");
    assert_string_equal(a.stop_reason, "server dead");
    assert_string_equal(a.grace, "yes");
    assert_false(a.finished);

    /* All finished: finished; NULL grace takes the other's. */
    sample_counts(&a, 1);
    sample_counts(&b, 1);
    a.grace = NULL;
    tbbt_report_counts_merge(&a, &b);
    assert_true(a.finished);
    assert_string_equal(a.grace, "no");
    assert_null(a.error);
}

/* ---- the "mpi" and "ranks" keys ------------------------------------------------------ */

static void test_mpi_keys(void **state)
{
    struct tbbt_report_counts c;
    struct tbbt_report *r = sample_report(S0, &c);
    struct tbbt_report_rank ri[2];
    char host[] = "hostA";
    struct tbbt_report_mpi m = {.ranks = 2, .distribute = "clones", .start_skew_us = 12.5,
                                .offset_error_us = 4.75, .cross_rank_deps = 3,
                                .cross_rank_wait_seconds = 0.5, .notices_sent = 99};
    char *plain, *j, *t;

    (void)state;
    plain = tbbt_report_json(r, &c, NULL);
    sample_rank(&ri[0], 0);
    sample_rank(&ri[1], 3);
    ri[0].host = host;          /* copied: changing it afterwards changes nothing */
    ri[0].what = "images 0,2";
    ri[1].ops_issued = 0;
    tbbt_report_set_mpi(r, &m, ri, 2);
    host[0] = 'X';
    j = tbbt_report_json(r, &c, NULL);

    /* Every key of before, byte for byte, then the two new ones at the end. */
    size_t n = strlen(plain);
    assert_int_equal(strncmp(j, plain, n - 1), 0);
    assert_true(has(j + n - 1, ",\"mpi\":{\"ranks\":2,\"distribute\":\"clones\","
                               "\"start_skew_us\":12.5,\"offset_error_us\":4.75,"
                               "\"cross_rank_deps\":3,\"cross_rank_wait_seconds\":0.5,"
                               "\"notices_sent\":99},\"ranks\":[{\"rank\":0,"
                               "\"host\":\"hostA\",\"what\":\"images 0,2\","
                               "\"ops_issued\":1000,\"ops_completed\":990,"
                               "\"replay_failures\":0,\"throughput_ops\":1234.57,"
                               "\"wall_seconds\":3,\"cpu\":{\"user_seconds\":0.7,"
                               "\"system_seconds\":0.2,\"us_per_op\":900},\"offset_us\":-0,"
                               "\"rtt_us\":0.4,\"start_late_us\":0.05,\"drift_us\":0.001,"
                               "\"cross_rank_deps\":7,\"cross_rank_wait_seconds\":0.25,"
                               "\"notices_sent\":12345,\"finished\":true,\"error\":null}"));
    assert_true(has(j, "\"rank\":3,\"host\":\"hostB\",\"what\":null,"));
    assert_true(has(j, "\"us_per_op\":null},"));
    assert_true(has(j, "\"finished\":false,\"error\":\"server \\\"x\\\" dead\"}]}"));
    assert_string_equal(j + strlen(j) - 3, "}]}");

    if (system("python3 -c 'import json' >/dev/null 2>&1") == 0) {
        char *path = g_strdup_printf("/tmp/test-report-pack-%d.json", (int)getpid());
        char *cmd = g_strdup_printf("python3 -m json.tool %s >/dev/null", path);

        assert_true(g_file_set_contents(path, j, -1, NULL));
        assert_int_equal(system(cmd), 0);
        unlink(path);
        g_free(cmd);
        g_free(path);
    }

    t = text_of(r, &c, NULL);
    assert_true(has(t, "\n  mpi          2 ranks, --distribute clones, start skew 12.5 us, "
                       "offsets within 4.8 us, 3 cross-rank waits (0.500 s), 99 notices sent\n"));
    assert_true(has(t, "\n  rank 0       hostA, images 0,2: issued 1000, completed 990, "
                       "failures 0, 1234.6 ops/s, 3.000 s wall, 900.0 us cpu per op"));
    assert_true(has(t, "\n  rank 3       hostB: issued 0, "));
    assert_true(has(t, " - us cpu per op"));
    assert_true(has(t, "stopped early: server \"x\" dead\n"));
    g_free(t);
    g_free(j);

    /* Only ranks, then nothing again. */
    tbbt_report_set_mpi(r, NULL, ri, 1);
    j = tbbt_report_json(r, &c, NULL);
    assert_false(has(j, "\"mpi\""));
    assert_true(has(j, ",\"ranks\":[{\"rank\":0,"));
    g_free(j);
    tbbt_report_set_mpi(r, NULL, NULL, 0);
    j = tbbt_report_json(r, &c, NULL);
    assert_string_equal(j, plain);
    t = text_of(r, &c, NULL);
    assert_false(has(t, "  mpi "));
    assert_false(has(t, "  rank "));
    g_free(t);
    g_free(j);
    g_free(plain);
    tbbt_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip),   cmocka_unit_test(test_roundtrip_edges),
        cmocka_unit_test(test_shift),       cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_flips),       cmocka_unit_test(test_bad_blobs),
        cmocka_unit_test(test_merge_four),  cmocka_unit_test(test_counts_merge),
        cmocka_unit_test(test_mpi_keys),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
