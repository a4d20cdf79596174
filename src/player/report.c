/* SPDX-License-Identifier: MIT */
/*
 * report: latency histograms, per-second time series and replay failures by kind of one
 * tbbt-play run, and the JSON, text (TBBT paper Table 6) and CSV output of them.  The
 * recording calls are the receive thread's hot path: a fixed array of lazily allocated
 * histograms indexed by (prog, proc), a growable array of seconds, and hash tables of
 * failure kinds and reply mismatch kinds whose names are made only at output.  No
 * locks: one owner per report (report.h).  It does not time anything itself; callers
 * pass CLOCK_MONOTONIC times.  The JSON keys that are a counter's value, and the text's
 * skipped reasons, come from the table report-keys.def.  The structs are in report-int.h,
 * shared with report-pack.c (an MPI rank's report as bytes, the merge of counts, the
 * "mpi" and "ranks" output).
 */
#include "player/report-int.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "trace/trace.h"
#include "util/json.h"
#include "util/outfile.h"

#define NS_PER_SEC UINT64_C(1000000000)
#define HIST_VMAX ((UINT64_C(1) << TBBT_HIST_MAX_BITS) - 1)
#define TEXT_TOP_KINDS 20

/* ---- histogram ----------------------------------------------------------------------- */

/* Bucket of v: v itself below 64, else 32 * b + (v >> b) with b = msb(v) - 5. */
static inline unsigned hist_index(uint64_t v)
{
    v = v < HIST_VMAX ? v : HIST_VMAX;
    unsigned b = (unsigned)(63 - __builtin_clzll(v | (2 * TBBT_HIST_SUB - 1))) - TBBT_HIST_SUB_BITS;
    return (b << TBBT_HIST_SUB_BITS) + (unsigned)(v >> b);
}

/* Lower bound and width of bucket i. */
static void hist_bucket_range(unsigned i, uint64_t *lo, uint64_t *width)
{
    unsigned b = i < 2 * TBBT_HIST_SUB ? 0 : (i >> TBBT_HIST_SUB_BITS) - 1;
    uint64_t s = i - ((uint64_t)b << TBBT_HIST_SUB_BITS);

    *lo = s << b;
    *width = UINT64_C(1) << b;
}

static inline void hist_add(struct tbbt_hist *h, uint64_t v)
{
    h->count++;
    h->sum += v;
    h->min = v < h->min ? v : h->min;
    h->max = v > h->max ? v : h->max;
    h->bucket[hist_index(v)]++;
}

void tbbt_hist_init(struct tbbt_hist *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

void tbbt_hist_add(struct tbbt_hist *h, uint64_t v)
{
    hist_add(h, v);
}

void tbbt_hist_merge(struct tbbt_hist *dst, const struct tbbt_hist *src)
{
    if (src->count == 0)
        return;
    dst->count += src->count;
    dst->sum += src->sum;
    dst->min = src->min < dst->min ? src->min : dst->min;
    dst->max = src->max > dst->max ? src->max : dst->max;
    for (unsigned i = 0; i < TBBT_HIST_NBUCKETS; i++)
        dst->bucket[i] += src->bucket[i];
}

uint64_t tbbt_hist_quantile(const struct tbbt_hist *h, double q)
{
    uint64_t rank, seen = 0, lo, width, v;

    if (h->count == 0)
        return 0;
    if (!(q > 0))
        return h->min;
    if (q >= 1)
        return h->max;
    rank = (uint64_t)ceil(q * (double)h->count);
    rank = rank < 1 ? 1 : rank > h->count ? h->count : rank;
    for (unsigned i = 0; i < TBBT_HIST_NBUCKETS; i++) {
        seen += h->bucket[i];
        if (seen < rank)
            continue;
        hist_bucket_range(i, &lo, &width);
        v = lo + width / 2;
        return v < h->min ? h->min : v > h->max ? h->max : v;
    }
    return h->max; /* not reached while bucket counts add up to count */
}

double tbbt_hist_mean(const struct tbbt_hist *h)
{
    return h->count ? (double)h->sum / (double)h->count : 0.0;
}

uint64_t tbbt_hist_min(const struct tbbt_hist *h)
{
    return h->count ? h->min : 0;
}

/* ---- recording ----------------------------------------------------------------------- */

static guint kind_hash(gconstpointer p)
{
    const struct kind *k = p;
    uint64_t x = (uint64_t)(uint32_t)k->expected << 32 | (uint32_t)k->got;

    x ^= (uint64_t)k->prog << 56 ^ (uint64_t)k->proc << 48;
    x *= UINT64_C(0x9e3779b97f4a7c15);
    return (guint)(x >> 32) ^ (k->field ? g_str_hash(k->field) : 0);
}

static gboolean kind_equal(gconstpointer a, gconstpointer b)
{
    const struct kind *x = a, *y = b;

    return x->expected == y->expected && x->got == y->got && x->prog == y->prog &&
           x->proc == y->proc &&
           (x->field == y->field || (x->field && y->field && strcmp(x->field, y->field) == 0));
}

struct tbbt_report *tbbt_report_new(uint64_t start_ns)
{
    struct tbbt_report *r = g_new0(struct tbbt_report, 1);

    r->start_ns = start_ns;
    tbbt_hist_init(&r->all);
    tbbt_hist_init(&r->dispatch);
    r->kinds = g_hash_table_new_full(kind_hash, kind_equal, g_free, NULL);
    r->mismatches = g_hash_table_new_full(kind_hash, kind_equal, g_free, NULL);
    return r;
}

void tbbt_report_free(struct tbbt_report *r)
{
    if (!r)
        return;
    for (int p = 0; p < TBBT_REPORT_NPROG; p++)
        for (int i = 0; i < TBBT_REPORT_NPROC; i++)
            g_free(r->proc[p][i]);
    g_free(r->secs);
    g_hash_table_destroy(r->kinds);
    g_hash_table_destroy(r->mismatches);
    g_free(r->mpi);
    g_free(r->ranks);
    g_free(r);
}

/* Slot of (prog, proc): out of range (prog 0 included) maps to [0][0], "other". */
static inline bool proc_slot(int prog, int proc, unsigned *p, unsigned *i)
{
    bool ok = (unsigned)prog - 1 < TBBT_REPORT_NPROG - 1 && (unsigned)proc < TBBT_REPORT_NPROC;

    *p = ok ? (unsigned)prog : 0;
    *i = ok ? (unsigned)proc : 0;
    return ok;
}

/* Cold paths of tbbt_report_op(), kept out of line. */
static __attribute__((noinline)) struct tbbt_hist *proc_hist_new(struct tbbt_report *r,
                                                                 unsigned p, unsigned i)
{
    struct tbbt_hist *h = g_new(struct tbbt_hist, 1);

    tbbt_hist_init(h);
    r->proc[p][i] = h;
    return h;
}

static __attribute__((noinline)) void secs_grow(struct tbbt_report *r, size_t need)
{
    size_t cap = r->cap ? r->cap : 64;

    while (cap < need)
        cap *= 2;
    r->secs = g_renew(struct sec, r->secs, cap);
    memset(r->secs + r->cap, 0, (cap - r->cap) * sizeof(*r->secs));
    r->cap = cap;
}

/* The time series entry of second s, growing the series as needed. */
static inline struct sec *sec_at(struct tbbt_report *r, uint64_t s)
{
    s = s < TBBT_REPORT_MAX_SECONDS ? s : TBBT_REPORT_MAX_SECONDS - 1;
    if (G_UNLIKELY(s >= r->cap))
        secs_grow(r, (size_t)s + 1);
    if (s >= r->nsecs)
        r->nsecs = (size_t)s + 1;
    return &r->secs[s];
}

static inline struct sec *sec_of(struct tbbt_report *r, uint64_t when_ns)
{
    return sec_at(r, when_ns > r->start_ns ? (when_ns - r->start_ns) / NS_PER_SEC : 0);
}

void tbbt_report_op(struct tbbt_report *r, int prog, int proc, uint64_t latency_ns,
                    uint64_t done_ns)
{
    unsigned p, i;
    struct tbbt_hist *h;
    struct sec *s;

    proc_slot(prog, proc, &p, &i);
    h = r->proc[p][i];
    if (G_UNLIKELY(!h))
        h = proc_hist_new(r, p, i);
    hist_add(h, latency_ns);
    hist_add(&r->all, latency_ns);
    s = sec_of(r, done_ns);
    s->completed++;
    s->lat_sum += latency_ns;
    s->lat_max = latency_ns > s->lat_max ? latency_ns : s->lat_max;
}

void tbbt_report_issued(struct tbbt_report *r, uint64_t when_ns)
{
    sec_of(r, when_ns)->issued++;
}

/* Adds n to the kind key of tab (a kinds or mismatches table). */
static void kind_add(GHashTable *tab, const struct kind *key, uint64_t n)
{
    struct kind *k = g_hash_table_lookup(tab, key);

    if (!k) {
        k = g_memdup2(key, sizeof(*key));
        k->count = 0;
        g_hash_table_add(tab, k);
    }
    k->count += n;
}

/* The cross-file forms of sec_at(), proc_hist_new() and kind_add() (report-int.h). */
struct sec *tbbt__report_sec_at(struct tbbt_report *r, uint64_t s)
{
    return sec_at(r, s);
}

struct tbbt_hist *tbbt__report_proc_hist_at(struct tbbt_report *r, unsigned p, unsigned i)
{
    return r->proc[p][i] ? r->proc[p][i] : proc_hist_new(r, p, i);
}

void tbbt__report_kind_add(GHashTable *tab, const struct kind *key, uint64_t n)
{
    kind_add(tab, key, n);
}

void tbbt_report_failure(struct tbbt_report *r, int prog, int proc, int32_t expected,
                         int32_t got, uint64_t when_ns)
{
    struct kind key = {.expected = expected, .got = got, .prog = (uint16_t)prog,
                       .proc = (uint16_t)proc};

    kind_add(r->kinds, &key, 1);
    r->failures++;
    sec_of(r, when_ns)->failures++;
}

void tbbt_report_dispatch(struct tbbt_report *r, int64_t err_ns, uint64_t when_ns)
{
    uint64_t v = err_ns > 0 ? (uint64_t)err_ns : 0;
    struct sec *s = sec_of(r, when_ns);

    hist_add(&r->dispatch, v);
    s->due++;
    s->lag_sum += v;
    s->lag_max = v > s->lag_max ? v : s->lag_max;
}

void tbbt_report_mismatch(struct tbbt_report *r, int prog, int proc, const char *field)
{
    unsigned p, i;

    proc_slot(prog, proc, &p, &i);      /* out of range: one "other" kind per field */
    struct kind key = {.prog = (uint16_t)p, .proc = (uint16_t)i, .field = field};
    kind_add(r->mismatches, &key, 1);
    r->nmismatches++;
}

uint64_t tbbt_report_mismatches(const struct tbbt_report *r)
{
    return r->nmismatches;
}

void tbbt_report_merge(struct tbbt_report *dst, const struct tbbt_report *src)
{
    GHashTableIter it;
    gpointer k;
    int64_t shift;

    assert(dst != src);
    for (unsigned p = 0; p < TBBT_REPORT_NPROG; p++)
        for (unsigned i = 0; i < TBBT_REPORT_NPROC; i++) {
            if (!src->proc[p][i])
                continue;
            if (!dst->proc[p][i])
                proc_hist_new(dst, p, i);
            tbbt_hist_merge(dst->proc[p][i], src->proc[p][i]);
        }
    tbbt_hist_merge(&dst->all, &src->all);
    tbbt_hist_merge(&dst->dispatch, &src->dispatch);

    if (src->start_ns >= dst->start_ns)
        shift = (int64_t)((src->start_ns - dst->start_ns) / NS_PER_SEC);
    else
        shift = -(int64_t)((dst->start_ns - src->start_ns) / NS_PER_SEC);
    for (size_t i = 0; i < src->nsecs; i++) {
        const struct sec *a = &src->secs[i];
        int64_t at = (int64_t)i + shift;
        struct sec *b;

        if (!a->issued && !a->completed && !a->failures && !a->due)
            continue;
        b = sec_at(dst, at > 0 ? (uint64_t)at : 0);
        b->issued += a->issued;
        b->completed += a->completed;
        b->failures += a->failures;
        b->lat_sum += a->lat_sum;
        b->lat_max = a->lat_max > b->lat_max ? a->lat_max : b->lat_max;
        b->due += a->due;
        b->lag_sum += a->lag_sum;
        b->lag_max = a->lag_max > b->lag_max ? a->lag_max : b->lag_max;
    }
    g_hash_table_iter_init(&it, src->mismatches);
    while (g_hash_table_iter_next(&it, &k, NULL))
        kind_add(dst->mismatches, k, ((const struct kind *)k)->count);
    dst->nmismatches += src->nmismatches;

    g_hash_table_iter_init(&it, src->kinds);
    while (g_hash_table_iter_next(&it, &k, NULL))
        kind_add(dst->kinds, k, ((const struct kind *)k)->count);
    dst->failures += src->failures;
}

/* ---- accessors and names ------------------------------------------------------------- */

const struct tbbt_hist *tbbt_report_proc_hist(const struct tbbt_report *r, int prog, int proc)
{
    unsigned p, i;

    proc_slot(prog, proc, &p, &i); /* out of range: "other" */
    return r->proc[p][i];
}

const struct tbbt_hist *tbbt_report_all_hist(const struct tbbt_report *r)
{
    return &r->all;
}

const struct tbbt_hist *tbbt_report_dispatch_hist(const struct tbbt_report *r)
{
    return &r->dispatch;
}

uint64_t tbbt_report_failures(const struct tbbt_report *r)
{
    return r->failures;
}

uint64_t tbbt_report_failure_count(const struct tbbt_report *r, int prog, int proc,
                                   int32_t expected, int32_t got)
{
    struct kind key = {.expected = expected, .got = got, .prog = (uint16_t)prog,
                       .proc = (uint16_t)proc};
    const struct kind *k = g_hash_table_lookup(r->kinds, &key);

    return k ? k->count : 0;
}

uint64_t tbbt_report_seconds(const struct tbbt_report *r)
{
    return r->nsecs;
}

static void put_proc(GString *s, int prog, int proc)
{
    char buf[TBBT_PROC_LABEL_MAX];

    g_string_append(s, tbbt_proc_label(prog, proc, buf, sizeof(buf)));
}

static void put_status(GString *s, int prog, int32_t st)
{
    const char *n = st == TBBT_REPORT_NO_REPLY ? "NO_REPLY" : tbbt_status_name(prog, st);

    if (n)
        g_string_append(s, n);
    else
        g_string_append_printf(s, "%" PRId32, st);
}

char *tbbt_report_failure_kind(int prog, int proc, int32_t expected, int32_t got)
{
    GString *s = g_string_sized_new(32);

    put_proc(s, prog, proc);
    g_string_append_c(s, ':');
    put_status(s, prog, expected);
    g_string_append(s, "->");
    put_status(s, prog, got);
    return g_string_free(s, FALSE);
}

char *tbbt_report_proc_label(int prog, int proc)
{
    unsigned p, i;
    GString *s;

    if (!proc_slot(prog, proc, &p, &i))
        return g_strdup("other");
    s = g_string_sized_new(16);
    put_proc(s, prog, proc);
    return g_string_free(s, FALSE);
}

/* ---- sorted views for output --------------------------------------------------------- */

/* A row of a sorted view: a procedure (with its histogram) or a kind of failure or mismatch. */
struct row {
    char *name;                 /* owned */
    uint64_t count;
    const struct tbbt_hist *h;  /* a procedure's; NULL for a kind */
};

static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;

    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Sorts the n rows by count, then name; returns rows, *nrows = n. */
static struct row *rows_sorted(struct row *rows, size_t n, size_t *nrows)
{
    qsort(rows, n, sizeof(*rows), row_cmp);
    *nrows = n;
    return rows;
}

static void rows_free(struct row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        g_free(rows[i].name);
    g_free(rows);
}

/* The procedures with a histogram, by count then label (given: free with rows_free()). */
static struct row *proc_rows(const struct tbbt_report *r, size_t *n)
{
    struct row *rows = g_new(struct row, TBBT_REPORT_NPROG * TBBT_REPORT_NPROC);
    size_t k = 0;

    for (int p = 0; p < TBBT_REPORT_NPROG; p++)
        for (int i = 0; i < TBBT_REPORT_NPROC; i++) {
            const struct tbbt_hist *h = r->proc[p][i];

            if (h && h->count)
                rows[k++] = (struct row){tbbt_report_proc_label(p, i), h->count, h};
        }
    return rows_sorted(rows, k, n);
}

/* The name of a kind: "<proc label>.<field>" or tbbt_report_failure_kind() (given). */
static char *kind_name(const struct kind *kd)
{
    char *label, *name;

    if (!kd->field)
        return tbbt_report_failure_kind(kd->prog, kd->proc, kd->expected, kd->got);
    label = tbbt_report_proc_label(kd->prog, kd->proc);
    name = g_strconcat(label, ".", kd->field, NULL);
    g_free(label);
    return name;
}

/* The kinds of tab by count then name (given: free with rows_free()). */
static struct row *kind_rows(GHashTable *tab, size_t *n)
{
    size_t k = 0, total = g_hash_table_size(tab);
    struct row *rows = g_new(struct row, total ? total : 1);
    GHashTableIter it;
    gpointer key;

    g_hash_table_iter_init(&it, tab);
    while (g_hash_table_iter_next(&it, &key, NULL)) {
        const struct kind *kd = key;

        rows[k++] = (struct row){kind_name(kd), kd->count, NULL};
    }
    return rows_sorted(rows, k, n);
}

/* ---- JSON ---------------------------------------------------------------------------- */

static double ratio(double a, double b)
{
    return b > 0 ? a / b : NAN; /* NaN is written as null */
}

static double trace_rate(const struct tbbt_report_counts *c)
{
    return ratio((double)c->trace_ops, c->trace_seconds);
}

static bool is_timestamp(const struct tbbt_report_counts *c)
{
    return c->timing && strcmp(c->timing, "timestamp") == 0;
}

/* {count, mean_us, p50_us, p90_us, p99_us, max_us} of h. */
static void json_latency(struct tbbt_json *j, const struct tbbt_hist *h)
{
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "count", h->count);
    tbbt_json_kv_double(j, "mean_us", tbbt_hist_mean(h) / 1e3);
    tbbt_json_kv_double(j, "p50_us", (double)tbbt_hist_quantile(h, 0.50) / 1e3);
    tbbt_json_kv_double(j, "p90_us", (double)tbbt_hist_quantile(h, 0.90) / 1e3);
    tbbt_json_kv_double(j, "p99_us", (double)tbbt_hist_quantile(h, 0.99) / 1e3);
    tbbt_json_kv_double(j, "max_us", (double)h->max / 1e3);
    tbbt_json_end_object(j);
}

static void json_ops(struct tbbt_json *j, const struct tbbt_report *r,
                     const struct tbbt_report_counts *c)
{
#define PLAY_COUNT(key, member) tbbt_json_kv(j, key, c->member);
#define PLAY_RECORDED(key, member) tbbt_json_kv(j, key, r->member);
#define PLAY_OBJECT(key) tbbt_json_kv_object(j, key);
#define PLAY_END() tbbt_json_end_object(j);
#define PLAY_SKIPPED(key, label, member) tbbt_json_kv(j, key, c->member);
#include "player/report-keys.def"
}

#define LAG_BEHIND_NS 1000000u   /* a second whose largest dispatch error exceeds 1 ms */

/* Seconds behind the schedule, and the first of them (UINT64_MAX if none). */
static uint64_t lag_behind(const struct tbbt_report *r, uint64_t *first)
{
    uint64_t n = 0;

    *first = UINT64_MAX;
    for (size_t i = 0; i < r->nsecs; i++)
        if (r->secs[i].due && r->secs[i].lag_max > LAG_BEHIND_NS) {
            n++;
            if (*first == UINT64_MAX)
                *first = i;
        }
    return n;
}

static void json_lag(struct tbbt_json *j, const struct tbbt_report *r,
                     const struct tbbt_report_counts *c)
{
    uint64_t first, behind;

    tbbt_json_key(j, "lag");
    if (!is_timestamp(c)) {
        tbbt_json_null(j);
        return;
    }
    behind = lag_behind(r, &first);
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "seconds_behind", behind);
    tbbt_json_key(j, "first_behind_second");
    if (first == UINT64_MAX)
        tbbt_json_null(j);
    else
        tbbt_json_uint(j, first);
    tbbt_json_kv_array(j, "series");
    for (size_t i = 0; i < r->nsecs; i++) {
        const struct sec *s = &r->secs[i];
        if (!s->due)
            continue;
        tbbt_json_begin_array(j);
        tbbt_json_uint(j, i);
        tbbt_json_double(j, (double)s->lag_sum / (double)s->due / 1e3);
        tbbt_json_double(j, (double)s->lag_max / 1e3);
        tbbt_json_end_array(j);
    }
    tbbt_json_end_array(j);
    tbbt_json_end_object(j);
}

static void json_run(struct tbbt_json *j, const struct tbbt_report_counts *c)
{
    tbbt_json_kv_double(j, "trace_seconds", c->trace_seconds);
    tbbt_json_kv_double(j, "wall_seconds", c->wall_seconds);
    tbbt_json_kv_object(j, "cpu");
    tbbt_json_kv_double(j, "user_seconds", c->cpu_user_seconds);
    tbbt_json_kv_double(j, "system_seconds", c->cpu_system_seconds);
    tbbt_json_kv_double(j, "us_per_op", ratio((c->cpu_user_seconds + c->cpu_system_seconds) * 1e6,
                                              (double)c->ops_issued));
    tbbt_json_end_object(j);
    tbbt_json_kv_double(j, "throughput_ops", ratio((double)c->ops_completed, c->wall_seconds));
    tbbt_json_kv_double(j, "read_mb_per_s", ratio((double)c->read_bytes / 1e6, c->wall_seconds));
    tbbt_json_kv_double(j, "trace_rate_ops", trace_rate(c));
    tbbt_json_kv_double(j, "target_rate_ops", is_timestamp(c) ? trace_rate(c) * c->speed : NAN);
#define PLAY_RUN(key, member) tbbt_json_kv(j, key, c->member);
#include "player/report-keys.def"
}

static void json_latencies(struct tbbt_json *j, const struct tbbt_report *r)
{
    const struct tbbt_hist *d = &r->dispatch;
    struct row *rows;
    size_t n;

    tbbt_json_kv_object(j, "dispatch_error_us");
    tbbt_json_kv_uint(j, "count", d->count);
    tbbt_json_kv_double(j, "p50", d->count ? (double)tbbt_hist_quantile(d, 0.50) / 1e3 : NAN);
    tbbt_json_kv_double(j, "p99", d->count ? (double)tbbt_hist_quantile(d, 0.99) / 1e3 : NAN);
    tbbt_json_kv_double(j, "max", d->count ? (double)d->max / 1e3 : NAN);
    tbbt_json_end_object(j);

    tbbt_json_key(j, "all");
    json_latency(j, &r->all);
    rows = proc_rows(r, &n);
    tbbt_json_kv_object(j, "procedures");
    for (size_t i = 0; i < n; i++) {
        tbbt_json_key(j, rows[i].name);
        json_latency(j, rows[i].h);
    }
    tbbt_json_end_object(j);
    rows_free(rows, n);
}

/* {kind: n} of tab under key, by count (then name). */
static void json_kinds(struct tbbt_json *j, const char *key, GHashTable *tab)
{
    size_t n;
    struct row *rows = kind_rows(tab, &n);

    tbbt_json_kv_object(j, key);
    for (size_t i = 0; i < n; i++)
        tbbt_json_kv_uint(j, rows[i].name, rows[i].count);
    tbbt_json_end_object(j);
    rows_free(rows, n);
}

char *tbbt_report_json(const struct tbbt_report *r, const struct tbbt_report_counts *c,
                       const struct tbbt_report_verify *v)
{
    struct tbbt_json j;

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    json_ops(&j, r, c);
    json_kinds(&j, "replay_failures_by_kind", r->kinds);
    json_run(&j, c);
    json_latencies(&j, r);
    json_kinds(&j, "reply_mismatches_by_kind", r->mismatches);
    json_lag(&j, r, c);
    if (v) {
        tbbt_json_key(&j, "verify");
        tbbt_json_begin_object(&j);
        tbbt_json_kv_bool(&j, "ok", v->ok);
        tbbt_json_kv_uint(&j, "mismatches", v->mismatches);
        tbbt_json_kv_uint(&j, "checked", v->checked);
        tbbt_json_end_object(&j);
    }
    tbbt__report_json_mpi(&j, r);
    tbbt_json_end_object(&j);
    return tbbt_json_finish(&j);
}

/* ---- text ---------------------------------------------------------------------------- */

static const char *or_unknown(const char *s)
{
    return s ? s : "?";
}

static double ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

static void text_rate(FILE *out, const char *what, double v)
{
    if (isfinite(v))
        fprintf(out, "%s %.1f ops/s", what, v);
    else
        fprintf(out, "%s - ops/s", what);
}

/* The "skipped" line: the reasons of report-keys.def, in its order. */
static void text_skipped(FILE *out, const struct tbbt_report_counts *c)
{
    const struct {
        const char *label;
        uint64_t n;
    } reasons[] = {
#define PLAY_SKIPPED(key, label, member) {label, c->member},
#include "player/report-keys.def"
    };

    fputs("  skipped      ", out);
    for (size_t i = 0; i < G_N_ELEMENTS(reasons); i++)
        fprintf(out, "%s%s %" PRIu64, i ? ", " : "", reasons[i].label, reasons[i].n);
    fputc('\n', out);
}

static void text_header(FILE *out, const struct tbbt_report *r, const struct tbbt_report_counts *c)
{
    const struct tbbt_hist *d = &r->dispatch;

    fprintf(out, "tbbt-play report: %s order, %s timing, speed %g\n", or_unknown(c->order),
            or_unknown(c->timing), c->speed);
    fprintf(out, "  setup        %s, %" PRIu32 " clone%s, %" PRIu32 " connection%s, window %" PRIu32
                 ", max outstanding %" PRIu32,
            or_unknown(c->transport), c->clones, c->clones == 1 ? "" : "s", c->connections,
            c->connections == 1 ? "" : "s", c->window, c->max_outstanding);
    if (c->causal_slack_us > 0)
        fprintf(out, ", causal slack %.0f us", c->causal_slack_us);
    fputc('\n', out);
    fprintf(out, "  run          %.3f s wall, trace span %.3f s, %s%s%s%s%s%s\n",
            c->wall_seconds, c->trace_seconds, c->finished ? "finished" : "stopped early",
            c->stop_reason ? " (" : "", c->stop_reason ? c->stop_reason : "",
            c->stop_reason ? ")" : "", c->error ? ": " : "", c->error ? c->error : "");
    fprintf(out, "  cpu          %.3f s user, %.3f s system (the replay): %.1f us per operation\n",
            c->cpu_user_seconds, c->cpu_system_seconds,
            ratio((c->cpu_user_seconds + c->cpu_system_seconds) * 1e6, (double)c->ops_issued));
    text_rate(out, "  throughput  ", ratio((double)c->ops_completed, c->wall_seconds));
    text_rate(out, " (trace rate", trace_rate(c));
    fprintf(out, " x speed %g =", c->speed);
    text_rate(out, "", trace_rate(c) * c->speed);
    fprintf(out, "%s)\n", is_timestamp(c) ? " target" : "");
    if (c->read_bytes)
        fprintf(out, "  read data    %.1f MB, %.1f MB/s\n", (double)c->read_bytes / 1e6,
                ratio((double)c->read_bytes / 1e6, c->wall_seconds));
    fprintf(out, "  operations   trace %" PRIu64 ", issued %" PRIu64 ", completed %" PRIu64
                 ", skipped %" PRIu64 ", unknown %" PRIu64 ", corrective %" PRIu64 "\n",
            c->trace_ops, c->ops_issued, c->ops_completed, c->ops_skipped, c->ops_unknown,
            c->corrective_ops);
    text_skipped(out, c);
    fprintf(out, "  failures     %" PRIu64 " replay failures, %" PRIu64 " unchecked replies\n",
            r->failures, c->unchecked);
    fprintf(out, "  retries      %" PRIu64 " retries, %" PRIu64 " reconnects, %" PRIu64
                 " timeouts, %" PRIu64 " retransmits (%" PRIu64 " answered as duplicates)\n",
            c->retries, c->reconnects, c->timeouts, c->retransmits, c->retransmit_dup_ok);
    if (d->count)
        fprintf(out, "  dispatch     error p50 %.3f ms, p99 %.3f ms, max %.3f ms (%" PRIu64
                     " requests)\n",
                ms(tbbt_hist_quantile(d, 0.5)), ms(tbbt_hist_quantile(d, 0.99)), ms(d->max),
                d->count);
    else
        fprintf(out, "  dispatch     error not measured\n");
    fprintf(out, "  outstanding  peak %" PRIu64 ", window stalls %" PRIu64
                 ", client limit stalls %" PRIu64 "\n",
            c->peak_outstanding, c->window_stalls, c->client_stalls);
    if (c->reordered_reads)
        fprintf(out, "  reordered    %" PRIu64 " read swaps (--reorder)\n", c->reordered_reads);
    fprintf(out, "  replies      %" PRIu64 " differ from the trace's (attributes, listings); %" PRIu64
                 " not checked (they raced another client's change in the trace)\n",
            r->nmismatches, c->replies_racy);
    if (c->grace)
        fprintf(out, "  grace        in grace at start: %s, waited %.1f s before the replay\n",
                c->grace, c->grace_wait_seconds);
    if (c->jukebox_replies)
        fprintf(out, "  jukebox      %" PRIu64 " JUKEBOX replies to %" PRIu64 " operations, "
                     "waited %.1f s in all (longest %.1f s), %" PRIu64 " gave up\n",
                c->jukebox_replies, c->jukebox_ops, c->jukebox_wait_seconds,
                c->jukebox_wait_max_seconds, c->jukebox_gave_up);
    if (is_timestamp(c) && d->count) {
        uint64_t first, behind = lag_behind(r, &first);
        if (behind)
            fprintf(out, "  BEHIND       the schedule by more than 1 ms in %" PRIu64 " of %zu "
                         "seconds, from second %" PRIu64 " (max lag %.3f ms): the server or "
                         "this machine could not keep the trace's rate x speed\n",
                    behind, r->nsecs, first, ms(d->max));
    }
}

static void text_row(FILE *out, const char *label, const struct tbbt_hist *h)
{
    fprintf(out, "  %-18s %10" PRIu64 " %9.3f %9.3f %9.3f %9.3f %9.3f\n", label, h->count,
            tbbt_hist_mean(h) / 1e6, ms(tbbt_hist_quantile(h, 0.5)),
            ms(tbbt_hist_quantile(h, 0.9)), ms(tbbt_hist_quantile(h, 0.99)), ms(h->max));
}

static void text_procs(FILE *out, const struct tbbt_report *r)
{
    size_t n;
    struct row *rows = proc_rows(r, &n);

    fprintf(out, "\n  %-18s %10s %9s %9s %9s %9s %9s\n", "procedure (ms)", "count", "mean",
            "p50", "p90", "p99", "max");
    for (size_t i = 0; i < n; i++)
        text_row(out, rows[i].name, rows[i].h);
    text_row(out, "all", &r->all);
    rows_free(rows, n);
}

/* The top kinds of tab under the heading what; more: say how many were left out. */
static void text_kinds(FILE *out, const char *what, GHashTable *tab, bool more)
{
    size_t n;
    struct row *rows = kind_rows(tab, &n);

    if (n) {
        fprintf(out, "\n  %s by kind%s\n", what, n > TEXT_TOP_KINDS ? " (top 20)" : "");
        for (size_t i = 0; i < n && i < TEXT_TOP_KINDS; i++)
            fprintf(out, "  %10" PRIu64 "  %s\n", rows[i].count, rows[i].name);
        if (more && n > TEXT_TOP_KINDS)
            fprintf(out, "  ... and %zu more kinds\n", n - TEXT_TOP_KINDS);
    }
    rows_free(rows, n);
}

void tbbt_report_text(FILE *out, const struct tbbt_report *r, const struct tbbt_report_counts *c,
                      const struct tbbt_report_verify *v)
{
    text_header(out, r, c);
    if (v)
        fprintf(out, "  verify       %s: %" PRIu64 " checked, %" PRIu64 " mismatches\n",
                v->ok ? "ok" : "FAILED", v->checked, v->mismatches);
    tbbt__report_text_mpi(out, r);
    text_procs(out, r);
    text_kinds(out, "replay failures", r->kinds, true);
    text_kinds(out, "reply mismatches", r->mismatches, false);
}

/* ---- CSV ----------------------------------------------------------------------------- */

int tbbt_report_timeseries_csv(const struct tbbt_report *r, const char *path)
{
    int rc = 0;
    struct tbbt_outfile *o = tbbt_outfile_new(path, 0, &rc, NULL, 0);
    FILE *f = o ? tbbt_outfile_stream(o, &rc, NULL, 0) : NULL;

    if (!f) {
        tbbt_outfile_abort(o);
        return rc;
    }
    fputs("second,issued,completed,failures,mean_latency_us,max_latency_us,mean_lag_us,"
          "max_lag_us\n", f);
    for (size_t i = 0; i < r->nsecs; i++) {
        const struct sec *s = &r->secs[i];
        double mean = s->completed ? (double)s->lat_sum / (double)s->completed / 1e3 : 0.0;
        double lag = s->due ? (double)s->lag_sum / (double)s->due / 1e3 : 0.0;

        fprintf(f, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.3f,%.3f,%.3f,%.3f\n", i,
                s->issued, s->completed, s->failures, mean, (double)s->lat_max / 1e3, lag,
                (double)s->lag_max / 1e3);
    }
    return tbbt_outfile_commit(o, NULL, 0);   /* checks every write, the flush and close */
}
