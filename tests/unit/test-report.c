/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the player's report (src/player/report.h): histogram quantiles against
 * the exact order statistics of uniform, exponential and bimodal samples (relative error
 * bound 1/64 of the midpoint rule), exact count/sum/min/max/mean, merge equal to adding
 * everything, the empty histogram and the clamp of huge values; report merge (per
 * procedure, all, dispatch, failures, time series with shifted starts); failure kind
 * names; JSON keys plus a structural parse in C (and python3 -m json.tool when python3
 * is on the PATH); the CSV time series with an idle second; the text table.  The last
 * test times tbbt_report_op() and prints ns per call (not a benchmark: bench/ is).
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
#include <time.h>
#include <unistd.h>

#include "player/report.h"
#include "trace/trace.h"

#define NSAMPLES 200000
#define SEC UINT64_C(1000000000)
#define V3_LOOKUP 3
#define V3_GETATTR 1
#define V3_READ 6
#define V2_LOOKUP 4
#define ST_OK 0
#define ST_NOENT 2
#define ST_JUKEBOX 10008

/* ---- helpers ------------------------------------------------------------------------- */

static uint64_t rng_state = 0x243f6a8885a308d3u;

static uint64_t rnd(void)
{
    return test_rand_next(&rng_state);
}

/* Uniform in (0, 1). */
static double rnd01(void)
{
    return ((double)(rnd() >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Checks h's quantiles against the exact order statistics of v[n] (sorted here). */
static void check_quantiles(const struct tbbt_hist *h, uint64_t *v, size_t n)
{
    static const double qs[] = {0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1};
    double sum = 0;

    qsort(v, n, sizeof(*v), cmp_u64);
    for (size_t i = 0; i < n; i++)
        sum += (double)v[i];
    assert_int_equal(h->count, n);
    assert_int_equal(tbbt_hist_min(h), v[0]);
    assert_int_equal(h->max, v[n - 1]);
    assert_true(fabs(tbbt_hist_mean(h) - sum / (double)n) <= 1e-9 * sum / (double)n);
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        uint64_t rank = (uint64_t)ceil(qs[i] * (double)n);
        uint64_t exact = v[rank ? rank - 1 : 0];
        uint64_t got = tbbt_hist_quantile(h, qs[i]);
        double err = fabs((double)got - (double)exact);

        if (err > (double)exact / 64.0 + 0.5)
            fail_msg("q=%g: got %" PRIu64 ", exact %" PRIu64, qs[i], got, exact);
    }
    assert_int_equal(tbbt_hist_quantile(h, 0), v[0]);
    assert_int_equal(tbbt_hist_quantile(h, 1), v[n - 1]);
}

static void run_dist(uint64_t (*gen)(void))
{
    uint64_t *v = g_new(uint64_t, NSAMPLES);
    struct tbbt_hist *h = g_new(struct tbbt_hist, 1);

    tbbt_hist_init(h);
    for (size_t i = 0; i < NSAMPLES; i++) {
        v[i] = gen();
        tbbt_hist_add(h, v[i]);
    }
    check_quantiles(h, v, NSAMPLES);
    g_free(v);
    g_free(h);
}

static uint64_t gen_uniform(void)
{
    return 1 + rnd() % 20000000; /* 1 ns .. 20 ms */
}

static uint64_t gen_exponential(void)
{
    return (uint64_t)(-log(rnd01()) * 1e6); /* mean 1 ms, many values below 64 ns too */
}

static uint64_t gen_bimodal(void)
{
    /* 70 % cache hits around 80 us, 30 % disk reads around 8 ms. */
    double base = rnd() % 10 < 7 ? 80e3 : 8e6;
    return (uint64_t)(base * (0.8 + 0.4 * rnd01()));
}

/* Whether s contains sub. */
static bool has(const char *s, const char *sub)
{
    return strstr(s, sub) != NULL;
}

/* Whether text has the table row of label with count, followed by rest. */
static bool has_row(const char *text, const char *label, int count, const char *rest)
{
    char *row = g_strdup_printf("\n  %-18s %10d%s", label, count, rest);
    bool ok = has(text, row);

    if (!ok)
        print_message("row not found: '%s'\n", row);
    g_free(row);
    return ok;
}

static char *read_all(const char *path)
{
    char *text = NULL;

    assert_true(g_file_get_contents(path, &text, NULL, NULL));
    return text;
}

/* ---- a minimal JSON syntax checker (RFC 8259 grammar, no semantic checks) ------------ */

static const char *js_value(const char *p, int depth);

static const char *js_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    return p;
}

static const char *js_string(const char *p)
{
    if (*p++ != '"')
        return NULL;
    while (*p && *p != '"') {
        if ((unsigned char)*p < 0x20)
            return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!g_ascii_isxdigit(p[i]))
                        return NULL;
                p += 4;
            } else if (!strchr("\"\\/bfnrt", *p) || !*p) {
                return NULL;
            }
        }
        p++;
    }
    return *p == '"' ? p + 1 : NULL;
}

static const char *js_number(const char *p)
{
    const char *s = p;

    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (g_ascii_isdigit(*p))
            p++;
    else
        return NULL;
    if (*p == '.') {
        if (!g_ascii_isdigit(*++p))
            return NULL;
        while (g_ascii_isdigit(*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!g_ascii_isdigit(*p))
            return NULL;
        while (g_ascii_isdigit(*p))
            p++;
    }
    return p > s ? p : NULL;
}

static const char *js_members(const char *p, int depth, bool object)
{
    char close = object ? '}' : ']';

    p = js_ws(p + 1);
    if (*p == close)
        return p + 1;
    for (;;) {
        if (object) {
            if (!(p = js_string(js_ws(p))))
                return NULL;
            p = js_ws(p);
            if (*p++ != ':')
                return NULL;
        }
        if (!(p = js_value(p, depth + 1)))
            return NULL;
        p = js_ws(p);
        if (*p == close)
            return p + 1;
        if (*p++ != ',')
            return NULL;
    }
}

static const char *js_value(const char *p, int depth)
{
    if (depth > 32)
        return NULL;
    p = js_ws(p);
    switch (*p) {
    case '{':
        return js_members(p, depth, true);
    case '[':
        return js_members(p, depth, false);
    case '"':
        return js_string(p);
    case 't':
        return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f':
        return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n':
        return strncmp(p, "null", 4) ? NULL : p + 4;
    default:
        return js_number(p);
    }
}

static bool json_valid(const char *text)
{
    const char *end = js_value(text, 0);
    return end && *js_ws(end) == '\0';
}

/* ---- histogram ----------------------------------------------------------------------- */

static void test_hist_uniform(void **state)
{
    (void)state;
    run_dist(gen_uniform);
}

static void test_hist_exponential(void **state)
{
    (void)state;
    run_dist(gen_exponential);
}

static void test_hist_bimodal(void **state)
{
    (void)state;
    run_dist(gen_bimodal);
}

static void test_hist_empty(void **state)
{
    struct tbbt_hist h;

    (void)state;
    tbbt_hist_init(&h);
    assert_int_equal(h.count, 0);
    assert_int_equal(tbbt_hist_quantile(&h, 0.5), 0);
    assert_int_equal(tbbt_hist_quantile(&h, 0), 0);
    assert_int_equal(tbbt_hist_quantile(&h, 1), 0);
    assert_true(tbbt_hist_mean(&h) == 0.0);
    assert_int_equal(tbbt_hist_min(&h), 0);
    assert_int_equal(h.max, 0);
}

/* Small values are exact; huge ones share the last bucket but max stays exact. */
static void test_hist_edges(void **state)
{
    struct tbbt_hist h;
    uint64_t big = UINT64_C(1) << 50;

    (void)state;
    tbbt_hist_init(&h);
    for (uint64_t v = 0; v < 64; v++)
        tbbt_hist_add(&h, v);
    for (uint64_t v = 0; v < 64; v++)
        assert_int_equal(tbbt_hist_quantile(&h, (double)(v + 1) / 64.0), v);
    assert_true(fabs(tbbt_hist_mean(&h) - 31.5) < 1e-12);

    tbbt_hist_init(&h);
    tbbt_hist_add(&h, 1000);
    tbbt_hist_add(&h, big);
    tbbt_hist_add(&h, UINT64_MAX / 4);
    assert_int_equal(h.count, 3);
    assert_int_equal(h.max, UINT64_MAX / 4);
    assert_int_equal(tbbt_hist_min(&h), 1000);
    assert_int_equal(tbbt_hist_quantile(&h, 1), UINT64_MAX / 4);
    assert_int_equal(tbbt_hist_quantile(&h, 0.1), 1000);
    assert_int_equal(h.bucket[TBBT_HIST_NBUCKETS - 1], 2);

    /* A single value is its own every quantile. */
    tbbt_hist_init(&h);
    tbbt_hist_add(&h, 123456789);
    assert_int_equal(tbbt_hist_quantile(&h, 0.5), 123456789);
    assert_int_equal(tbbt_hist_quantile(&h, NAN), 123456789);
    assert_int_equal(tbbt_hist_quantile(&h, -3), 123456789);
    assert_int_equal(tbbt_hist_quantile(&h, 7), 123456789);
}

/* Every value from 64 to 2^20 lands in a bucket whose midpoint is within 1/64. */
static void test_hist_bucket_error(void **state)
{
    struct tbbt_hist h;

    (void)state;
    for (uint64_t v = 64; v < (UINT64_C(1) << 20); v = v * 33 / 32 + 1) {
        tbbt_hist_init(&h);
        tbbt_hist_add(&h, 1);
        tbbt_hist_add(&h, v);
        tbbt_hist_add(&h, UINT64_C(1) << 41);
        uint64_t got = tbbt_hist_quantile(&h, 0.5);
        assert_true(fabs((double)got - (double)v) <= (double)v / 64.0);
    }
}

static void test_hist_merge(void **state)
{
    struct tbbt_hist *a = g_new(struct tbbt_hist, 1), *b = g_new(struct tbbt_hist, 1);
    struct tbbt_hist *all = g_new(struct tbbt_hist, 1), *e = g_new(struct tbbt_hist, 1);

    (void)state;
    tbbt_hist_init(a);
    tbbt_hist_init(b);
    tbbt_hist_init(all);
    tbbt_hist_init(e);
    for (int i = 0; i < 50000; i++) {
        uint64_t v = gen_bimodal();

        tbbt_hist_add(i % 3 ? a : b, v);
        tbbt_hist_add(all, v);
    }
    tbbt_hist_merge(a, b);
    assert_memory_equal(a, all, sizeof(*a));
    tbbt_hist_merge(a, e); /* empty: no change, min stays */
    assert_memory_equal(a, all, sizeof(*a));
    tbbt_hist_merge(e, all); /* into empty */
    assert_memory_equal(e, all, sizeof(*e));
    g_free(a);
    g_free(b);
    g_free(all);
    g_free(e);
}

/* ---- report -------------------------------------------------------------------------- */

static void test_failure_kinds(void **state)
{
    struct tbbt_report *r = tbbt_report_new(0);
    char *s;

    (void)state;
    s = tbbt_report_failure_kind(TBBT_PROG_NFS3, V3_LOOKUP, ST_OK, ST_NOENT);
    assert_string_equal(s, "lookup:OK->NOENT");
    g_free(s);
    s = tbbt_report_failure_kind(TBBT_PROG_NFS2, V2_LOOKUP, ST_OK, ST_NOENT);
    assert_string_equal(s, "v2.lookup:OK->NOENT");
    g_free(s);
    s = tbbt_report_failure_kind(TBBT_PROG_NFS3, V3_READ, ST_OK, TBBT_REPORT_NO_REPLY);
    assert_string_equal(s, "read:OK->NO_REPLY");
    g_free(s);
    s = tbbt_report_failure_kind(TBBT_PROG_NFS3, 99, 77777, ST_JUKEBOX);
    assert_string_equal(s, "99:77777->JUKEBOX");
    g_free(s);
    s = tbbt_report_failure_kind(9, 1, 0, 1);
    assert_string_equal(s, "prog9.1:0->1");
    g_free(s);
    s = tbbt_report_proc_label(TBBT_PROG_NFS2, 1);
    assert_string_equal(s, "v2.getattr");
    g_free(s);
    s = tbbt_report_proc_label(TBBT_PROG_NFS3, 200);
    assert_string_equal(s, "other");
    g_free(s);

    for (int i = 0; i < 5; i++)
        tbbt_report_failure(r, TBBT_PROG_NFS3, V3_LOOKUP, ST_OK, ST_NOENT, 0);
    tbbt_report_failure(r, TBBT_PROG_NFS2, V2_LOOKUP, ST_OK, ST_NOENT, 0);
    tbbt_report_failure(r, TBBT_PROG_NFS3, V3_LOOKUP, ST_NOENT, ST_OK, 0);
    assert_int_equal(tbbt_report_failures(r), 7);
    assert_int_equal(
        tbbt_report_failure_count(r, TBBT_PROG_NFS3, V3_LOOKUP, ST_OK, ST_NOENT), 5);
    assert_int_equal(
        tbbt_report_failure_count(r, TBBT_PROG_NFS2, V2_LOOKUP, ST_OK, ST_NOENT), 1);
    assert_int_equal(
        tbbt_report_failure_count(r, TBBT_PROG_NFS3, V3_LOOKUP, ST_NOENT, ST_OK), 1);
    assert_int_equal(tbbt_report_failure_count(r, TBBT_PROG_NFS3, V3_READ, ST_OK, ST_NOENT), 0);
    tbbt_report_free(r);
    tbbt_report_free(NULL);
}

static void test_report_merge(void **state)
{
    uint64_t t0 = 1000 * SEC;
    struct tbbt_report *send = tbbt_report_new(t0), *recv = tbbt_report_new(t0 + 2 * SEC);
    struct tbbt_report *one = tbbt_report_new(t0);

    (void)state;
    for (int i = 0; i < 1000; i++) {
        uint64_t lat = 100000 + (uint64_t)i * 1000;
        uint64_t at = t0 + 2 * SEC + (uint64_t)i * SEC / 100; /* seconds 2..11 of t0 */

        tbbt_report_issued(send, at - lat);
        tbbt_report_dispatch(send, i % 2 ? 5000 : -5000, 0);
        tbbt_report_op(recv, TBBT_PROG_NFS3, i % 4 ? V3_GETATTR : V3_LOOKUP, lat, at);
        tbbt_report_issued(one, at - lat);
        tbbt_report_dispatch(one, i % 2 ? 5000 : -5000, 0);
        tbbt_report_op(one, TBBT_PROG_NFS3, i % 4 ? V3_GETATTR : V3_LOOKUP, lat, at);
    }
    tbbt_report_failure(recv, TBBT_PROG_NFS3, V3_LOOKUP, ST_OK, ST_NOENT, t0 + 3 * SEC);
    tbbt_report_failure(one, TBBT_PROG_NFS3, V3_LOOKUP, ST_OK, ST_NOENT, t0 + 3 * SEC);
    assert_int_equal(tbbt_report_seconds(recv), 10);

    tbbt_report_merge(send, recv);
    assert_memory_equal(tbbt_report_all_hist(send), tbbt_report_all_hist(one),
                        sizeof(struct tbbt_hist));
    assert_memory_equal(tbbt_report_dispatch_hist(send), tbbt_report_dispatch_hist(one),
                        sizeof(struct tbbt_hist));
    assert_memory_equal(tbbt_report_proc_hist(send, TBBT_PROG_NFS3, V3_GETATTR),
                        tbbt_report_proc_hist(one, TBBT_PROG_NFS3, V3_GETATTR),
                        sizeof(struct tbbt_hist));
    assert_int_equal(tbbt_report_proc_hist(send, TBBT_PROG_NFS3, V3_LOOKUP)->count, 250);
    assert_null(tbbt_report_proc_hist(send, TBBT_PROG_NFS3, V3_READ));
    assert_int_equal(tbbt_report_dispatch_hist(send)->min, 0); /* negative counted as 0 */
    assert_int_equal(tbbt_report_failures(send), 1);
    assert_int_equal(tbbt_report_seconds(send), tbbt_report_seconds(one));

    /* The time series of the merged report equals the one recorded in one report. */
    char *pa = g_strdup_printf("/tmp/test-report-%d-a.csv", (int)getpid());
    char *pb = g_strdup_printf("/tmp/test-report-%d-b.csv", (int)getpid());
    assert_int_equal(tbbt_report_timeseries_csv(send, pa), 0);
    assert_int_equal(tbbt_report_timeseries_csv(one, pb), 0);
    char *ta = read_all(pa), *tb = read_all(pb);
    assert_string_equal(ta, tb);
    assert_true(has(ta, "\n3,100,100,1,"));
    unlink(pa);
    unlink(pb);
    g_free(ta);
    g_free(tb);
    g_free(pa);
    g_free(pb);
    tbbt_report_free(send);
    tbbt_report_free(recv);
    tbbt_report_free(one);
}

/* A run: 2 s of work, an idle third second, a fourth with one op and a failure. */
static struct tbbt_report *sample_report(uint64_t t0)
{
    struct tbbt_report *r = tbbt_report_new(t0);

    for (int i = 0; i < 300; i++) {
        uint64_t at = t0 + (uint64_t)i * SEC / 150;

        tbbt_report_issued(r, at);
        tbbt_report_dispatch(r, 20000 + i * 10, 0);
        tbbt_report_op(r, TBBT_PROG_NFS3, i % 3 ? V3_GETATTR : V3_LOOKUP, 500000 + i * 1000,
                       at + 500000);
    }
    tbbt_report_op(r, TBBT_PROG_NFS2, 1, 2000000, t0 + 3 * SEC + 10);
    tbbt_report_issued(r, t0 + 3 * SEC);
    tbbt_report_failure(r, TBBT_PROG_NFS3, V3_LOOKUP, ST_OK, ST_NOENT, t0 + 3 * SEC + 5);
    tbbt_report_failure(r, TBBT_PROG_NFS2, V2_LOOKUP, ST_OK, TBBT_REPORT_NO_REPLY, t0 + SEC);
    return r;
}

static void sample_counts(struct tbbt_report_counts *c)
{
    memset(c, 0, sizeof(*c));
    c->trace_ops = 320;
    c->ops_issued = 301;
    c->ops_completed = 301;
    c->ops_skipped = 19;
    c->skipped_no_handle = 12;
    c->skipped_dependency = 7;
    c->corrective_ops = 4;
    c->retries = 2;
    c->reconnects = 1;
    c->wall_seconds = 3.5;
    c->trace_seconds = 64;
    c->speed = 2;
    c->order = "conservative";
    c->timing = "timestamp";
    c->transport = "tcp";
    c->clones = 1;
    c->connections = 2;
    c->window = 4096;
    c->max_outstanding = 64;
    c->peak_outstanding = 17;
    c->finished = true;
}

static void test_timeseries_csv(void **state)
{
    struct tbbt_report *r = sample_report(5 * SEC);
    char *path = g_strdup_printf("/tmp/test-report-%d.csv", (int)getpid());
    char *text, **lines;

    (void)state;
    assert_int_equal(tbbt_report_timeseries_csv(r, path), 0);
    text = read_all(path);
    lines = g_strsplit(text, "\n", -1);
    assert_int_equal(g_strv_length(lines), 6); /* header, seconds 0..3, "" after last \n */
    assert_string_equal(lines[0], "second,issued,completed,failures,mean_latency_us,"
                                  "max_latency_us,mean_lag_us,max_lag_us");
    assert_true(g_str_has_prefix(lines[1], "0,150,150,0,"));
    assert_true(g_str_has_prefix(lines[2], "1,150,150,1,"));
    assert_string_equal(lines[3], "2,0,0,0,0.000,0.000,0.000,0.000"); /* idle */
    assert_string_equal(lines[4], "3,1,1,1,2000.000,2000.000,0.000,0.000");
    assert_string_equal(lines[5], "");
    /* Second 0: latencies 500..649 us, mean 574.5 us. */
    assert_string_equal(lines[1], "0,150,150,0,574.500,649.000,21.495,22.990");
    g_strfreev(lines);
    g_free(text);
    unlink(path);

    assert_true(tbbt_report_timeseries_csv(r, "/nonexistent-dir/x.csv") < 0);
    tbbt_report_free(r);

    r = tbbt_report_new(0); /* no activity: header only */
    assert_int_equal(tbbt_report_timeseries_csv(r, path), 0);
    text = read_all(path);
    assert_string_equal(text, "second,issued,completed,failures,mean_latency_us,max_latency_us,"
                              "mean_lag_us,max_lag_us\n");
    g_free(text);
    unlink(path);
    g_free(path);
    tbbt_report_free(r);
}

/* Timestamp timing's lag per second, reply mismatches, the JUKEBOX and grace keys. */
static void test_lag_mismatch_jukebox(void **state)
{
    struct tbbt_report *a = tbbt_report_new(0), *b = tbbt_report_new(0);
    struct tbbt_report_counts c;
    char *j;

    (void)state;
    sample_counts(&c);
    for (int i = 0; i < 10; i++)
        tbbt_report_dispatch(a, 20000, 0);            /* second 0: 20 us each */
    tbbt_report_dispatch(b, 3000000, 2 * SEC + 5);    /* second 2: 3 ms behind */
    tbbt_report_dispatch(b, -7, 2 * SEC + 6);         /* early counts as 0 */
    tbbt_report_mismatch(a, TBBT_PROG_NFS3, 1, "size");
    tbbt_report_mismatch(b, TBBT_PROG_NFS3, 1, "size");
    tbbt_report_mismatch(b, TBBT_PROG_NFS3, 17, "entries");
    tbbt_report_merge(a, b);
    assert_int_equal(tbbt_report_mismatches(a), 3);
    c.jukebox_replies = 12;
    c.jukebox_ops = 3;
    c.jukebox_wait_seconds = 4.5;
    c.jukebox_wait_max_seconds = 2;
    c.grace = "yes";
    c.grace_wait_seconds = 20.25;
    j = tbbt_report_json(a, &c, NULL);
    assert_true(json_valid(j));
    static const char *keys[] = {
        "\"reply_mismatches\":3", "\"reply_mismatches_by_kind\":{\"getattr.size\":2,"
        "\"readdirplus.entries\":1}", "\"jukebox\":{\"replies\":12,\"ops\":3,\"gave_up\":0,"
        "\"wait_seconds\":4.5,\"wait_max_seconds\":2}",
        "\"grace\":{\"state\":\"yes\",\"waited_seconds\":20.25}",
        "\"lag\":{\"seconds_behind\":1,\"first_behind_second\":2,\"series\":[[0,20,20],"
        "[2,1500,3000]]}",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!has(j, keys[i]))
            fail_msg("missing %s in %s", keys[i], j);
    g_free(j);
    c.timing = "full";
    c.grace = NULL;
    j = tbbt_report_json(a, &c, NULL);
    assert_true(has(j, "\"lag\":null"));
    assert_true(has(j, "\"grace\":{\"state\":null,"));
    g_free(j);
    tbbt_report_free(a);
    tbbt_report_free(b);
}

static void test_json(void **state)
{
    struct tbbt_report *r = sample_report(0);
    struct tbbt_report_counts c;
    struct tbbt_report_verify v = {.ok = true, .checked = 42, .mismatches = 0};
    char *j;

    (void)state;
    sample_counts(&c);
    j = tbbt_report_json(r, &c, &v);
    assert_true(json_valid(j));
    static const char *keys[] = {
        "\"ops_issued\":301", "\"ops_completed\":301", "\"ops_skipped\":19",
        "\"ops_unknown\":0", "\"corrective_ops\":4", "\"replay_failures\":2",
        "\"replay_failures_by_kind\":{", "\"lookup:OK->NOENT\":1",
        "\"v2.lookup:OK->NO_REPLY\":1", "\"retries\":2", "\"reconnects\":1",
        "\"wall_seconds\":3.5", "\"throughput_ops\":86", "\"procedures\":{",
        "\"getattr\":{\"count\":200,\"mean_us\":", "\"lookup\":{\"count\":100,",
        "\"v2.getattr\":{\"count\":1,", "\"p50_us\":", "\"p90_us\":", "\"p99_us\":",
        "\"max_us\":", "\"dispatch_error_us\":{", "\"p50\":", "\"p99\":",
        "\"verify\":{\"ok\":true,\"mismatches\":0,\"checked\":42}", "\"skipped_by_reason\":{",
        "\"no_handle\":12", "\"dependency\":7", "\"timeouts\":0", "\"unchecked\":0",
        "\"window_stalls\":0", "\"peak_outstanding\":17", "\"trace_ops\":320",
        "\"trace_seconds\":64", "\"trace_rate_ops\":5", "\"target_rate_ops\":10",
        "\"order\":\"conservative\"", "\"timing\":\"timestamp\"", "\"transport\":\"tcp\"",
        "\"clones\":1", "\"connections\":2", "\"window\":4096", "\"max_outstanding\":64",
        "\"finished\":true", "\"error\":null", "\"all\":{\"count\":301,",
        "\"stop_reason\":null", "\"stopped\":0",
    };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!has(j, keys[i]))
            fail_msg("missing %s in %s", keys[i], j);
    /* Procedures by count: getattr before lookup before v2.getattr. */
    assert_true(strstr(j, "\"getattr\":{") < strstr(j, "\"lookup\":{"));
    assert_true(strstr(j, "\"lookup\":{") < strstr(j, "\"v2.getattr\":{"));

    /* python3's parser agrees, when there is one. */
    if (system("python3 -c 'import json' >/dev/null 2>&1") == 0) {
        char *path = g_strdup_printf("/tmp/test-report-%d.json", (int)getpid());
        char *cmd = g_strdup_printf("python3 -m json.tool %s >/dev/null", path);

        assert_true(g_file_set_contents(path, j, -1, NULL));
        assert_int_equal(system(cmd), 0);
        unlink(path);
        g_free(cmd);
        g_free(path);
    } else {
        print_message("python3 not found: json.tool check skipped\n");
    }
    g_free(j);

    /* Full speed, no verify, empty report, stopped with an error: nulls where undefined. */
    tbbt_report_free(r);
    r = tbbt_report_new(0);
    c.timing = "full";
    c.wall_seconds = 0;
    c.finished = false;
    c.error = "server \"x\" gone";
    c.stop_reason = "signal SIGTERM";
    c.skipped_stopped = 5;
    j = tbbt_report_json(r, &c, NULL);
    assert_true(json_valid(j));
    assert_false(has(j, "\"verify\""));
    assert_true(has(j, "\"target_rate_ops\":null"));
    assert_true(has(j, "\"throughput_ops\":null"));
    assert_true(has(j, "\"dispatch_error_us\":{\"count\":0,\"p50\":null,\"p99\":null"));
    assert_true(has(j, "\"procedures\":{}"));
    assert_true(has(j, "\"replay_failures_by_kind\":{}"));
    assert_true(has(j, "\"error\":\"server \\\"x\\\" gone\""));
    assert_true(has(j, "\"finished\":false"));
    assert_true(has(j, "\"stop_reason\":\"signal SIGTERM\""));
    assert_true(has(j, "\"filtered\":0,\"stopped\":5}"));
    g_free(j);
    tbbt_report_free(r);

    assert_true(json_valid("{\"a\":[1,-2.5e3,true,null,\"x\\n\"],\"b\":{}}"));
    assert_false(json_valid("{\"a\":1,}"));
    assert_false(json_valid("{\"a\":01}"));
    assert_false(json_valid("{\"a\":nan}"));
}

static void test_text(void **state)
{
    struct tbbt_report *r = sample_report(0);
    struct tbbt_report_counts c;
    struct tbbt_report_verify v = {.ok = false, .checked = 42, .mismatches = 3};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    for (int i = 0; i < 25; i++) /* more kinds than the top 20 */
        tbbt_report_failure(r, TBBT_PROG_NFS3, V3_READ, ST_OK, 100 + i, 0);
    sample_counts(&c);
    tbbt_report_text(f, r, &c, &v);
    fclose(f);
    if (getenv("TBBT_TEST_VERBOSE"))
        fputs(buf, stdout);
    assert_true(has(buf, "report: conservative order, timestamp timing, speed 2\n"));
    assert_true(has(buf, "tcp, 1 clone, 2 connections, window 4096, max outstanding 64\n"));
    assert_true(has(buf, "throughput   86.0 ops/s (trace rate 5.0 ops/s x speed 2 = 10.0 ops/s"));
    assert_true(has(buf, "issued 301, completed 301, skipped 19, unknown 0, corrective 4"));
    assert_true(has(buf, "27 replay failures"));
    assert_true(has(buf, "2 retries, 1 reconnects"));
    assert_true(has(buf, "dispatch     error p50 0."));
    assert_true(has(buf, "peak 17, window stalls 0"));
    assert_true(has(buf, "verify       FAILED: 42 checked, 3 mismatches"));
    assert_true(has(buf, "procedure (ms)"));
    /* getattr: 200 ops of 0.501 .. 0.799 ms (every i not divisible by 3), mean 0.650. */
    assert_true(has_row(buf, "getattr", 200, "     0.650 "));
    assert_true(has_row(buf, "lookup", 100, " "));
    assert_true(has_row(buf, "v2.getattr", 1,
                        "     2.000     2.000     2.000     2.000     2.000\n"));
    assert_true(has_row(buf, "all", 301, " "));
    assert_true(strstr(buf, "  getattr ") < strstr(buf, "  lookup "));
    assert_true(has(buf, "replay failures by kind (top 20)"));
    assert_true(has(buf, "         1  lookup:OK->NOENT\n"));
    assert_true(has(buf, "... and 7 more kinds"));
    free(buf);

    /* A stopped run says why. */
    c.finished = false;
    c.stop_reason = "server dead";
    c.error = "server x did not answer for 2 s";
    c.skipped_stopped = 9;
    f = open_memstream(&buf, &len);
    tbbt_report_text(f, r, &c, NULL);
    fclose(f);
    assert_true(has(buf, "stopped early (server dead): server x did not answer for 2 s\n"));
    assert_true(has(buf, "filtered 0, stopped 9\n"));
    free(buf);
    tbbt_report_free(r);
}

/* ---- cost of the hot path ------------------------------------------------------------ */

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static void test_op_cost(void **state)
{
    enum { N = 5000000 };
    struct tbbt_report *r = tbbt_report_new(0);
    uint64_t *lat = g_new(uint64_t, 4096), t0, t1;

    (void)state;
    for (int i = 0; i < 4096; i++)
        lat[i] = gen_exponential() + 1000;
    /* Warm up: allocate the histograms and the seconds. */
    for (int p = 0; p < 22; p++)
        tbbt_report_op(r, TBBT_PROG_NFS3, p, 1000, 60 * SEC);
    t0 = now_ns();
    for (uint64_t i = 0; i < N; i++)
        tbbt_report_op(r, TBBT_PROG_NFS3, (int)(i % 22), lat[i & 4095], i * (60 * SEC / N));
    t1 = now_ns();
    print_message("tbbt_report_op: %.1f ns per call (%d calls)\n", (double)(t1 - t0) / N, N);
    assert_int_equal(tbbt_report_all_hist(r)->count, N + 22);
    assert_true((double)(t1 - t0) / N < 2000); /* sanity only: sanitizers are slow */
    g_free(lat);
    tbbt_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_uniform),     cmocka_unit_test(test_hist_exponential),
        cmocka_unit_test(test_hist_bimodal),     cmocka_unit_test(test_hist_empty),
        cmocka_unit_test(test_hist_edges),       cmocka_unit_test(test_hist_bucket_error),
        cmocka_unit_test(test_hist_merge),       cmocka_unit_test(test_failure_kinds),
        cmocka_unit_test(test_report_merge),     cmocka_unit_test(test_timeseries_csv),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_lag_mismatch_jukebox), cmocka_unit_test(test_text),
        cmocka_unit_test(test_op_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
