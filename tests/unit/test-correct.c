/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of pre-play correction (src/extract/correct.c; TBBT paper 3.1,
 * Table 2) and of the --check pass (tbbt__check_run()).  One test per rule of
 * the table `rules[]`: each fixture is a plausible NFSv3 trace that is
 * inconsistent in exactly the way the rule describes, as if the capture had
 * lost some packets.  Every rule test asserts:
 *
 *   - the number and kind of replay failures (stats and summary JSON);
 *   - exactly which corrective records were inserted: procedure, name,
 *     directory ID, TBBT_RF_CORRECTIVE, no handles, a successful reply, a
 *     call time in [previous record's call time, repaired record's call time],
 *     in call order, right before the record they repair;
 *   - that the whole trace stays in call order;
 *   - that a second run with the same seed gives byte-identical output, and a
 *     run with another seed differs only in corrective timestamps (and the
 *     map times derived from them);
 *   - that --no-correct (tbbt__corr_new(false, seed)) inserts nothing but
 *     counts the same failures;
 *   - that tbbt__check_run() over the corrected trace and its map reports no
 *     failure, and over the uncorrected one reports some.
 *
 * Besides: records without a reply are unchecked, statuses the namespace does
 * not decide (ACCES, IO) are undecided, and a directory made in the trace is
 * a closed world.  Tests marked "BUG:" assert the correct behaviour and are
 * skipped while correct.c gets it wrong.
 *
 * Fixtures are text traces in tests/golden/correct/NAME.txt (the header
 * comment of each says what the capture lost).  TBBT_CORR_DUMP=1 prints each
 * corrected trace in text form, for writing new fixtures; TBBT_CORR_RUN_BUGS=1
 * runs the tests skipped as "BUG:" (they fail until the bug is fixed).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extract/correct.h"
#include "extract/hier.h"
#include "ns/ns.h"
#include "trace/trace.h"
#include "trace-records.h"
#include "util/json.h"
#include "util/util.h"

#ifndef TBBT_CORR_GOLDEN_DIR
#define TBBT_CORR_GOLDEN_DIR "tests/golden/correct"
#endif

#define SEED 1
#define HANDLES ((UINT64_C(1) << TBBT_F_FH) | (UINT64_C(1) << TBBT_F_FH2) | \
                 (UINT64_C(1) << TBBT_F_NEW_FH))

/* ---- running a fixture ------------------------------------------------------------ */

struct crun {
    char *raw, *final, *map;
    struct tbbt__corr *k;
    struct tbbt__corr_stats st;
    GPtrArray *raw_recs;        /* struct tbbt_trace_rec * of the raw trace */
    GPtrArray *recs;            /* ... of the final trace */
    char *json;                 /* tbbt__corr_summary() as one object */
};

static char *tmp_path(const char *name, const char *tag, const char *ext)
{
    return g_strdup_printf("%s/tbbt-test-correct-%d-%s-%s%s", g_get_tmp_dir(), (int)getpid(),
                           name, tag, ext);
}


static char *summary_json(const struct tbbt__corr *k, const struct tbbt__corr *check)
{
    struct tbbt_json j;

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    tbbt__corr_summary(k, check, &j);
    tbbt_json_end_object(&j);
    return tbbt_json_finish(&j);
}

static void dump(const char *name, const char *tag, const struct crun *x)
{
    GString *s = g_string_new(NULL);

    for (guint i = 0; i < x->recs->len; i++) {
        tbbt_trace_format_rec(s, g_ptr_array_index(x->recs, i));
        g_string_append_c(s, '\n');
    }
    fprintf(stderr, "---- %s (%s)\n%s%s\n", name, tag, s->str, x->json);
    g_string_free(s, TRUE);
}

/*
 * Converts fixture NAME to binary and runs pass B with a corrector
 * (repair, seed); tag keeps the temporary files of several runs apart.
 */
static void crun(struct crun *x, const char *name, const char *tag, bool repair, uint64_t seed)
{
    char err[512] = "";
    char *text = g_strdup_printf("%s/%s.txt", TBBT_CORR_GOLDEN_DIR, name);
    uint64_t line = 0;
    int rc;

    memset(x, 0, sizeof(*x));
    x->raw = tmp_path(name, tag, ".raw");
    x->final = tmp_path(name, tag, ".tbbt");
    x->map = tmp_path(name, tag, ".map");
    rc = tbbt_trace_from_text_why(text, x->raw, &line, err, sizeof(err));
    if (rc)
        fail_msg("%s line %llu: %s", text, (unsigned long long)line, err);
    x->k = tbbt__corr_new(repair, seed);
    rc = tbbt__hier_run(x->raw, x->final, x->map, x->k, NULL, err, sizeof(err));
    if (rc)
        fail_msg("hier: %s", err);
    tbbt__corr_stats(x->k, &x->st);
    x->raw_recs = read_all(x->raw);
    x->recs = read_all(x->final);
    x->json = summary_json(x->k, NULL);
    if (getenv("TBBT_CORR_DUMP"))
        dump(name, tag, x);
    g_free(text);
}

static void crun_free(struct crun *x)
{
    unlink(x->raw);
    unlink(x->final);
    unlink(x->map);
    g_free(x->raw);
    g_free(x->final);
    g_free(x->map);
    tbbt__corr_free(x->k);
    g_ptr_array_free(x->raw_recs, TRUE);
    g_ptr_array_free(x->recs, TRUE);
    g_free(x->json);
}

static const struct tbbt_trace_rec *rec_at(GPtrArray *a, guint i)
{
    assert_true(i < a->len);
    return g_ptr_array_index(a, i);
}

/* The --check pass over a run's final trace and map: its corrector's counts. */
static void check_pass(const struct crun *x, struct tbbt__corr_stats *st, char **json)
{
    struct tbbt__corr *k = NULL;
    char err[512] = "";

    if (tbbt__check_run(x->final, x->map, &k, err, sizeof(err)) != 0)
        fail_msg("check: %s", err);
    tbbt__corr_stats(k, st);
    if (getenv("TBBT_CORR_DUMP")) {
        char *cj = summary_json(k, NULL);
        fprintf(stderr, "---- check of %s\n%s\n", x->final, cj);
        g_free(cj);
    }
    if (json)
        *json = summary_json(x->k, k);
    tbbt__corr_free(k);
}

static gchar *slurp(const char *path, gsize *len)
{
    gchar *s = NULL;

    assert_true(g_file_get_contents(path, &s, len, NULL));
    return s;
}

static void assert_same_file(const char *a, const char *b)
{
    gsize la, lb;
    gchar *sa = slurp(a, &la), *sb = slurp(b, &lb);

    assert_int_equal(la, lb);
    assert_memory_equal(sa, sb, la);
    g_free(sa);
    g_free(sb);
}

/* json holds "key":value (value as JSON text). */
static void assert_json_has(const char *json, const char *key, const char *value)
{
    char *want = g_strdup_printf("\"%s\":%s", key, value);

    if (!strstr(json, want))
        fail_msg("summary lacks %s: %s", want, json);
    g_free(want);
}

/* ---- the rule cases ----------------------------------------------------------------- */

#define MAX_CORR 8

/* One corrective record a case expects. */
struct want {
    guint before;               /* index (from 0) in the raw trace of the record it repairs */
    const char *proc;           /* NFSv3 procedure */
    uint64_t dir;               /* TBBT-ID of the directory (field id) */
    const char *name;
};

struct ccase {
    const char *fixture;
    uint64_t failures;
    const char *kinds;          /* replay_failure_kinds, as JSON */
    bool any_order;             /* removes of a directory's children: in no particular order
                                 * among siblings, but deepest first */
    const char *bug;            /* BUG: why the correction test is skipped */
    const char *nocorr_bug;     /* BUG: why the --no-correct test is skipped */
    bool nocorr_checks;         /* the check finds nothing in the uncorrected trace either */
    struct want corr[MAX_CORR]; /* ends at proc == NULL */
};

static size_t n_wanted(const struct ccase *c)
{
    size_t n = 0;

    while (n < MAX_CORR && c->corr[n].proc)
        n++;
    return n;
}

static bool corr_matches(const struct tbbt_trace_rec *r, const struct want *w)
{
    const char *p = tbbt_proc_name(r->prog, r->proc);

    if (!p || strcmp(p, w->proc) != 0 || !TBBT_HAS(r, TBBT_F_ID) || r->id != w->dir)
        return false;
    if (!w->name)       /* SETATTR: the object is `dir`, no name */
        return !TBBT_HAS(r, TBBT_F_NAME);
    return TBBT_HAS(r, TBBT_F_NAME) && r->name.len == strlen(w->name) &&
           memcmp(r->name.p, w->name, r->name.len) == 0;
}

static void fail_corr(const struct ccase *c, const struct tbbt_trace_rec *r, const char *why)
{
    GString *s = g_string_new(NULL);

    tbbt_trace_format_rec(s, r);
    fail_msg("%s: %s: %s", c->fixture, why, s->str);
    g_string_free(s, TRUE);
}

/* What every corrective record must be, whatever it does. */
static void check_corr_rec(const struct ccase *c, const struct tbbt_trace_rec *r, uint64_t lo,
                           uint64_t hi)
{
    if (!(r->flags & TBBT_RF_CORRECTIVE))
        fail_corr(c, r, "not flagged corrective");
    if (r->present & HANDLES)
        fail_corr(c, r, "corrective record with a handle");
    if (!(r->flags & TBBT_RF_REPLY) || !(r->flags & TBBT_RF_STATUS) ||
        r->rpc_stat != TBBT_RPC_SUCCESS || r->status != 0)
        fail_corr(c, r, "corrective record without a successful reply");
    if (r->prog != TBBT_PROG_NFS3)
        fail_corr(c, r, "corrective record of another program");
    if (r->call_ns < lo || r->call_ns > hi)
        fail_corr(c, r, "corrective call time outside [previous, repaired]");
}

/*
 * Records [from, to) of the final trace are the corrective group before raw
 * record j: each matches one wanted record for j, in order (any_order: in
 * any order, but no record touches a directory after it was removed).
 */
static void check_group(const struct ccase *c, GPtrArray *recs, guint from, guint to, guint j)
{
    const struct want *w[MAX_CORR];
    size_t n = 0;
    bool used[MAX_CORR] = { false };

    for (size_t i = 0; i < n_wanted(c); i++)
        if (c->corr[i].before == j)
            w[n++] = &c->corr[i];
    if (to - from != n)
        fail_msg("%s: %u corrective records before raw record %u, want %zu", c->fixture,
                 to - from, j, n);
    for (guint i = from; i < to; i++) {
        const struct tbbt_trace_rec *r = rec_at(recs, i);
        size_t m = 0;
        if (!c->any_order) {
            if (!corr_matches(r, w[i - from]))
                fail_corr(c, r, "unexpected corrective record");
            continue;
        }
        while (m < n && (used[m] || !corr_matches(r, w[m])))
            m++;
        if (m == n)
            fail_corr(c, r, "unexpected corrective record");
        used[m] = true;
        if (strcmp(w[m]->proc, "rmdir") != 0 || !TBBT_HAS(r, TBBT_F_ID_OBJ))
            continue;
        for (guint q = i + 1; q < to; q++)      /* deepest first */
            if (rec_at(recs, q)->id == r->id_obj)
                fail_corr(c, rec_at(recs, q), "touches a directory removed before it");
    }
}

/*
 * The final trace of x is the raw trace with exactly c's corrective records
 * inserted, each group right before the record it repairs, all in call order.
 */
static void check_inserted(const struct ccase *c, const struct crun *x)
{
    guint i = 0, j = 0;
    uint64_t last = 0;

    assert_int_equal(x->recs->len, x->raw_recs->len + n_wanted(c));
    for (guint q = 0; q < x->recs->len; q++) {
        const struct tbbt_trace_rec *r = rec_at(x->recs, q);
        if (r->call_ns < last)
            fail_corr(c, r, "out of call order");
        last = r->call_ns;
    }
    while (j < x->raw_recs->len) {
        const struct tbbt_trace_rec *raw = rec_at(x->raw_recs, j), *r;
        uint64_t lo = j ? rec_at(x->raw_recs, j - 1)->call_ns : 0;
        guint from = i;
        while (i < x->recs->len && (rec_at(x->recs, i)->flags & TBBT_RF_CORRECTIVE)) {
            check_corr_rec(c, rec_at(x->recs, i), lo, raw->call_ns);
            i++;
        }
        check_group(c, x->recs, from, i, j);
        r = rec_at(x->recs, i);
        if (r->call_ns != raw->call_ns || r->proc != raw->proc || r->flags != raw->flags ||
            r->status != raw->status || (r->present & HANDLES) != (raw->present & HANDLES))
            fail_corr(c, r, "a captured record changed");
        i++;
        j++;
    }
    assert_int_equal(i, x->recs->len);
}

/* The text of a trace, corrective records' times set to 0. */
static char *text_sans_corr_times(const struct crun *x)
{
    GString *s = g_string_new(NULL);
    struct tbbt_trace_rec t;

    tbbt_trace_rec_init(&t);
    for (guint i = 0; i < x->recs->len; i++) {
        const struct tbbt_trace_rec *r = rec_at(x->recs, i);
        tbbt_trace_rec_copy(&t, r);
        if (t.flags & TBBT_RF_CORRECTIVE)
            t.call_ns = t.reply_ns = 0;
        tbbt_trace_format_rec(s, &t);
        g_string_append_c(s, '\n');
    }
    tbbt_trace_rec_fini(&t);
    return g_string_free(s, FALSE);
}

static bool corr_time_of(const struct crun *x, uint64_t t)
{
    for (guint i = 0; i < x->recs->len; i++) {
        const struct tbbt_trace_rec *r = rec_at(x->recs, i);
        if ((r->flags & TBBT_RF_CORRECTIVE) && r->call_ns == t)
            return true;
    }
    return false;
}

/*
 * Map entries of a and b are the same, but for create and delete times that
 * are corrective timestamps of their runs.
 */
static void check_maps_alike(const struct crun *a, const struct crun *b)
{
    struct tbbt_ns_map_reader *ra, *rb;
    struct tbbt_ns_map_entry ea, eb;
    int err = 0, rca, rcb;

    ra = tbbt_ns_map_reader_open(a->map, &err);
    rb = tbbt_ns_map_reader_open(b->map, &err);
    assert_non_null(ra);
    assert_non_null(rb);
    while ((rca = tbbt_ns_map_reader_next(ra, &ea)) == 1) {
        assert_int_equal((rcb = tbbt_ns_map_reader_next(rb, &eb)), 1);
        assert_int_equal(ea.id, eb.id);
        assert_int_equal(ea.type, eb.type);
        assert_int_equal(ea.deleted, eb.deleted);
        assert_int_equal(ea.path_len, eb.path_len);
        assert_memory_equal(ea.path, eb.path, ea.path_len);
        assert_int_equal(ea.final_len, eb.final_len);
        assert_memory_equal(ea.final_path, eb.final_path, ea.final_len);
        assert_true(ea.create_ns == eb.create_ns ||
                    (corr_time_of(a, ea.create_ns) && corr_time_of(b, eb.create_ns)));
        assert_true(ea.delete_ns == eb.delete_ns ||
                    (corr_time_of(a, ea.delete_ns) && corr_time_of(b, eb.delete_ns)));
    }
    assert_int_equal(rca, 0);
    assert_int_equal(tbbt_ns_map_reader_next(rb, &eb), 0);
    tbbt_ns_map_reader_close(ra);
    tbbt_ns_map_reader_close(rb);
}

/* Same seed: byte-identical; other seeds: only corrective times change, and they do. */
static void check_seeds(const struct ccase *c, const struct crun *a)
{
    struct crun b, o;
    char *ta = text_sans_corr_times(a), *to;
    bool moved = false;

    crun(&b, c->fixture, "same", true, SEED);
    assert_same_file(a->final, b.final);
    assert_same_file(a->map, b.map);
    crun_free(&b);
    for (uint64_t seed = SEED + 1; seed <= SEED + 3; seed++) {
        crun(&o, c->fixture, "other", true, seed);
        to = text_sans_corr_times(&o);
        assert_string_equal(ta, to);
        check_maps_alike(a, &o);
        for (guint i = 0; i < o.recs->len; i++)
            moved |= rec_at(o.recs, i)->call_ns != rec_at(a->recs, i)->call_ns;
        g_free(to);
        crun_free(&o);
    }
    if (n_wanted(c))        /* the seed chooses the times (one second to choose from) */
        assert_true(moved);
    g_free(ta);
}

/* --no-correct: the same failures, nothing inserted, all of them remaining. */
static void run_nocorr_case(void **state)
{
    const struct ccase *c = *state;
    struct crun a, n;

    if (c->nocorr_bug && !getenv("TBBT_CORR_RUN_BUGS")) {
        print_message("BUG: %s: %s\n", c->fixture, c->nocorr_bug);
        skip();
    }
    crun(&a, c->fixture, "fix", true, SEED);
    crun(&n, c->fixture, "nocorr", false, SEED);
    assert_int_equal(n.st.failures, c->failures);
    assert_int_equal(n.st.remaining, c->failures);
    assert_int_equal(n.st.corrective, 0);
    assert_int_equal(n.st.checked, a.st.checked);
    assert_int_equal(n.recs->len, n.raw_recs->len);
    for (guint i = 0; i < n.recs->len; i++)
        assert_false(rec_at(n.recs, i)->flags & TBBT_RF_CORRECTIVE);
    assert_json_has(n.json, "replay_failure_kinds", c->kinds);
    assert_json_has(n.json, "remaining_mismatch_kinds", c->kinds);
    assert_json_has(n.json, "corrective_ops", "{}");
    crun_free(&n);
    crun_free(&a);
}

static void run_case(void **state)
{
    const struct ccase *c = *state;
    struct tbbt__corr_stats cst;
    struct crun a, n;
    char *cj = NULL, *f;

    if (c->bug && !getenv("TBBT_CORR_RUN_BUGS")) {
        print_message("BUG: %s: %s\n", c->fixture, c->bug);
        skip();
    }
    crun(&a, c->fixture, "fix", true, SEED);
    assert_int_equal(a.st.failures, c->failures);
    assert_int_equal(a.st.remaining, 0);
    assert_int_equal(a.st.corrective, n_wanted(c));
    assert_int_equal(a.st.records, a.raw_recs->len);
    assert_json_has(a.json, "replay_failure_kinds", c->kinds);
    assert_json_has(a.json, "remaining_mismatch_kinds", "{}");
    f = g_strdup_printf("%llu", (unsigned long long)c->failures);
    assert_json_has(a.json, "replay_failures", f);
    g_free(f);
    check_inserted(c, &a);
    check_seeds(c, &a);
    crun(&n, c->fixture, "nocorr", false, SEED);
    check_pass(&a, &cst, &cj);
    assert_int_equal(cst.failures, 0);
    assert_int_equal(cst.records, a.recs->len);
    assert_true(cst.checked > 0);
    assert_json_has(cj, "remaining_mismatches", "0");
    g_free(cj);
    check_pass(&n, &cst, NULL);
    if (n_wanted(c))
        assert_true(cst.failures > 0 || c->nocorr_checks);
    else        /* nothing to insert: the uncorrected trace is the corrected one */
        assert_same_file(a.final, n.final);
    crun_free(&n);
    crun_free(&a);
}

/* ---- the table, case by case ------------------------------------------------------- */


/* lookup OK->NOENT: the lost create, mkdir or symlink, by the reply's type. */
static const struct ccase lookup_absent = {
    .fixture = "lookup-absent", .failures = 3, .kinds = "{\"lookup OK->NOENT\":3}",
    .corr = { { 4, "create", 1, "a" }, { 5, "mkdir", 1, "sub" }, { 6, "symlink", 1, "s" } },
};

/* lookup NOENT->OK: the lost remove (of a directory: its contents first). */
static const struct ccase lookup_present = {
    .fixture = "lookup-present", .failures = 2, .kinds = "{\"lookup NOENT->OK\":2}",
    .corr = { { 6, "remove", 2, "f" }, { 7, "remove", 4, "x" }, { 7, "rmdir", 2, "sub" } },
};

/* create OK->EXIST (Table 2: "create, file already exists -> remove"). */
static const struct ccase create_exists = {
    .fixture = "create-exists", .failures = 1, .kinds = "{\"create OK->EXIST\":1}",
    .corr = { { 3, "remove", 1, "a" } },
};

/* mkdir OK->EXIST over a directory with a file: deepest first. */
static const struct ccase mkdir_exists = {
    .fixture = "mkdir-exists", .failures = 1, .kinds = "{\"mkdir OK->EXIST\":1}",
    .corr = { { 3, "remove", 2, "k" }, { 3, "rmdir", 1, "m" } },
};

static const struct ccase symlink_exists = {
    .fixture = "symlink-exists", .failures = 1, .kinds = "{\"symlink OK->EXIST\":1}",
    .corr = { { 4, "remove", 2, "l" } },
};

static const struct ccase mknod_exists = {
    .fixture = "mknod-exists", .failures = 1, .kinds = "{\"mknod OK->EXIST\":1}",
    .corr = { { 3, "remove", 2, "p" } },
};

/* create EXIST->OK: the lost first create. */
static const struct ccase create_lost = {
    .fixture = "create-lost", .failures = 1, .kinds = "{\"create EXIST->OK\":1}",
    .corr = { { 2, "create", 2, "f" } },
};

static const struct ccase mkdir_lost = {
    .fixture = "mkdir-lost", .failures = 1, .kinds = "{\"mkdir EXIST->OK\":1}",
    .corr = { { 2, "mkdir", 2, "s" } },
};

static const struct ccase symlink_lost = {
    .fixture = "symlink-lost", .failures = 1, .kinds = "{\"symlink EXIST->OK\":1}",
    .corr = { { 2, "symlink", 2, "l" } },
};

/* No corrective mknod: a file holds the name. */
static const struct ccase mknod_lost = {
    .fixture = "mknod-lost", .failures = 1, .kinds = "{\"mknod EXIST->OK\":1}",
    .corr = { { 2, "create", 2, "p" } },
};

/* remove OK->NOENT (Table 2: "remove, file does not exist -> create"). */
static const struct ccase remove_absent = {
    .fixture = "remove-absent", .failures = 1, .kinds = "{\"remove OK->NOENT\":1}",
    .corr = { { 2, "create", 2, "f" } },
};

/* remove OK->ISDIR: a file takes the directory's place. */
static const struct ccase remove_isdir = {
    .fixture = "remove-isdir", .failures = 1, .kinds = "{\"remove OK->ISDIR\":1}",
    .corr = { { 3, "rmdir", 2, "x" }, { 3, "create", 2, "x" } },
};

static const struct ccase remove_noent = {
    .fixture = "remove-noent", .failures = 1, .kinds = "{\"remove NOENT->OK\":1}",
    .corr = { { 3, "remove", 2, "f" } },
};

/* rmdir OK->NOTEMPTY (Table 2: "rmdir, directory not empty -> remove / rmdir"). */
static const struct ccase rmdir_filled = {
    .fixture = "rmdir-filled", .failures = 1, .kinds = "{\"rmdir OK->NOTEMPTY\":1}",
    .any_order = true,
    .corr = { { 5, "remove", 3, "f" }, { 5, "rmdir", 2, "s" }, { 5, "remove", 2, "g" } },
};

static const struct ccase rmdir_absent = {
    .fixture = "rmdir-absent", .failures = 1, .kinds = "{\"rmdir OK->NOENT\":1}",
    .corr = { { 2, "mkdir", 2, "s" } },
};

/* rmdir OK->NOTDIR: a directory takes the file's place. */
static const struct ccase rmdir_file = {
    .fixture = "rmdir-file", .failures = 1, .kinds = "{\"rmdir OK->NOTDIR\":1}",
    .corr = { { 3, "remove", 2, "x" }, { 3, "mkdir", 2, "x" } },
};

static const struct ccase rmdir_noent = {
    .fixture = "rmdir-noent", .failures = 1, .kinds = "{\"rmdir NOENT->OK\":1}",
    .corr = { { 3, "rmdir", 2, "s" } },
};

/* rmdir NOTEMPTY->OK: a filler file. */
static const struct ccase rmdir_empty = {
    .fixture = "rmdir-empty", .failures = 1, .kinds = "{\"rmdir NOTEMPTY->OK\":1}",
    .corr = { { 3, "create", 3, "tbbt-fill-1" } },
};

/* rmdir NOTEMPTY->NOENT: the directory, then a filler file in it. */
static const struct ccase rmdir_notempty_absent = {
    .fixture = "rmdir-notempty-absent", .failures = 1, .kinds = "{\"rmdir NOTEMPTY->NOENT\":1}",
    .corr = { { 2, "mkdir", 2, "s" }, { 2, "create", 3, "tbbt-fill-1" } },
};

/* rmdir NOTEMPTY->NOTDIR: the file goes, a directory with a filler file takes its place. */
static const struct ccase rmdir_notempty_file = {
    .fixture = "rmdir-notempty-file", .failures = 1, .kinds = "{\"rmdir NOTEMPTY->NOTDIR\":1}",
    .corr = { { 3, "remove", 2, "x" }, { 3, "mkdir", 2, "x" }, { 3, "create", 4, "tbbt-fill-1" } },
};

/*
 * A directory whose MKDIR was lost, placed only by a READDIR's ".." entry (a
 * fileid): made in its parent by the lost call before its first use, so the
 * parent's RMDIR needs it removed.  Without the corrective MKDIR no record
 * makes the directory, and the check, which follows records, never meets it:
 * the uncorrected trace checks clean too.
 */
static const struct ccase dotdot_fileid = {
    .fixture = "dotdot-fileid", .failures = 2, .nocorr_checks = true,
    .kinds = "{\"mkdir inferred-create\":1,\"rmdir OK->NOTEMPTY\":1}",
    .corr = { { 2, "mkdir", 2, "tbbt-unnamed-3" }, { 5, "rmdir", 2, "tbbt-unnamed-3" } },
};

/* rmdir NOTDIR: a file must take the directory's place. */
static const struct ccase rmdir_notdir = {
    .fixture = "rmdir-notdir", .failures = 1, .kinds = "{\"rmdir NOTDIR->OK\":1}",
    .corr = { { 3, "rmdir", 2, "x" }, { 3, "create", 2, "x" } },
};

/* rename OK->NOENT: the source's lost create. */
static const struct ccase rename_source = {
    .fixture = "rename-source", .failures = 1, .kinds = "{\"rename OK->NOENT\":1}",
    .corr = { { 2, "create", 2, "a" } },
};

/* rename OK->NOTEMPTY: the target directory is emptied. */
static const struct ccase rename_nonempty = {
    .fixture = "rename-nonempty", .failures = 1, .kinds = "{\"rename OK->NOTEMPTY\":1}",
    .corr = { { 5, "remove", 4, "f" } },
};

/* rename OK->ISDIR, OK->NOTDIR: a target of the wrong type goes. */
static const struct ccase rename_isdir = {
    .fixture = "rename-isdir", .failures = 1, .kinds = "{\"rename OK->ISDIR\":1}",
    .corr = { { 4, "rmdir", 2, "b" } },
};

static const struct ccase rename_notdir = {
    .fixture = "rename-notdir", .failures = 1, .kinds = "{\"rename OK->NOTDIR\":1}",
    .corr = { { 4, "remove", 2, "b" } },
};

static const struct ccase rename_noent = {
    .fixture = "rename-noent", .failures = 1, .kinds = "{\"rename NOENT->OK\":1}",
    .corr = { { 3, "remove", 2, "a" } },
};

/* rename NOTEMPTY->OK: a filler file in the target. */
static const struct ccase rename_notempty = {
    .fixture = "rename-notempty", .failures = 1, .kinds = "{\"rename NOTEMPTY->OK\":1}",
    .corr = { { 4, "create", 4, "tbbt-fill-1" } },
};

/* link OK->EXIST: the new name is in the way. */
static const struct ccase link_exists = {
    .fixture = "link-exists", .failures = 1, .kinds = "{\"link OK->EXIST\":1}",
    .corr = { { 4, "remove", 2, "g" } },
};

static const struct ccase link_lost = {
    .fixture = "link-lost", .failures = 1, .kinds = "{\"link EXIST->OK\":1}",
    .corr = { { 3, "create", 2, "g" } },
};

/* getattr STALE->OK of a named object: its names go. */
static const struct ccase stale_named = {
    .fixture = "stale-named", .failures = 1, .kinds = "{\"getattr STALE->OK\":1}",
    .corr = { { 4, "remove", 2, "f" } },
};

/* The other STALE rules: setattr, read, write, readlink, readdir, readdirplus. */
static const struct ccase stale_ops = {
    .fixture = "stale-ops", .failures = 6,
    .kinds = "{\"read STALE->OK\":1,\"readdir STALE->OK\":1,\"readdirplus STALE->OK\":1,"
             "\"readlink STALE->OK\":1,\"setattr STALE->OK\":1,\"write STALE->OK\":1}",
    .corr = { { 8, "remove", 2, "a" }, { 9, "remove", 2, "b" }, { 10, "remove", 2, "c" },
              { 11, "remove", 2, "l" }, { 12, "rmdir", 2, "s" }, { 13, "rmdir", 2, "t" } },
};

/* getattr STALE->OK of an object never named (its earlier getattr unanswered): nothing
 * to insert. */
static const struct ccase stale_unnamed = {
    .fixture = "stale-unnamed", .failures = 1, .kinds = "{\"getattr STALE->OK\":1}",
};

/*
 * The same, when the STALE object has the trace's largest ID (the --check
 * pass must not give that ID to the synthetic tbbt-orphans directory).
 */
static const struct ccase stale_unnamed_last = {
    .fixture = "stale-unnamed-last", .failures = 1, .kinds = "{\"getattr STALE->OK\":1}",
};

/*
 * The same after successful GETATTR and READ of the object: it existed at
 * trace start under a name the trace never showed, so it is listed in
 * tbbt-gone/ID and removed from there by a corrective REMOVE.
 */
static const struct ccase stale_unnamed_used = {
    .fixture = "stale-unnamed-used", .failures = 1, .kinds = "{\"getattr STALE->OK\":1}",
    .corr = { { 3, "remove", 3, "2" } },
};

/*
 * Mode and owner changed without a SETATTR in the trace (chmod 0600, then chown
 * to 2000:2000): corrective SETATTRs of the new values before the records that
 * show them, so that permission checks replay as they happened (the paper's
 * "getattr permission denied -> setattr").
 */
static const struct ccase lost_setattr = {
    .fixture = "lost-setattr", .failures = 2,
    .kinds = "{\"getattr inferred-setattr\":1,\"read inferred-setattr\":1}",
    .corr = { { 3, "setattr", 2, NULL }, { 4, "setattr", 2, NULL } },
};

/* A directory made in the trace is closed-world: a name never created is absent. */
static const struct ccase closed_world = {
    .fixture = "closed-world", .failures = 1, .kinds = "{\"lookup OK->NOENT\":1}",
    .corr = { { 2, "create", 2, "x" } },
};

/* ---- beyond the table -------------------------------------------------------------- */

/* An object never named and only STALE at the end is not in the map. */
static void test_stale_unnamed_map(void **state)
{
    struct tbbt_ns_map_reader *r;
    struct tbbt_ns_map_entry e;
    struct crun x;
    int err = 0, rc;
    bool z = false;

    (void)state;
    crun(&x, "stale-unnamed", "map", true, SEED);
    assert_int_equal(rec_at(x.recs, 2)->id, 2);        /* the STALE file */
    r = tbbt_ns_map_reader_open(x.map, &err);
    assert_non_null(r);
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        assert_int_not_equal(e.id, 2);
        z |= e.path_len == 1 && e.path[0] == 'z';
    }
    assert_int_equal(rc, 0);
    assert_true(z);
    tbbt_ns_map_reader_close(r);
    crun_free(&x);
}

/* A run that must find nothing to compare against and nothing to repair. */
static void assert_quiet(const struct crun *x)
{
    assert_int_equal(x->st.failures, 0);
    assert_int_equal(x->st.remaining, 0);
    assert_int_equal(x->st.corrective, 0);
    assert_int_equal(x->recs->len, x->raw_recs->len);
    assert_json_has(x->json, "replay_failures", "0");
    assert_json_has(x->json, "replay_failure_kinds", "{}");
    assert_json_has(x->json, "corrective_ops", "{}");
}

/* Records without a reply are unchecked, never failures, in both modes and in --check. */
static void test_unchecked(void **state)
{
    struct tbbt__corr_stats cst;
    struct crun x, n;

    (void)state;
    crun(&x, "unchecked", "fix", true, SEED);
    crun(&n, "unchecked", "nocorr", false, SEED);
    assert_quiet(&x);
    assert_quiet(&n);
    assert_int_equal(x.st.unchecked, 3);
    assert_int_equal(x.st.checked, 3);          /* mnt, mkdir, lookup */
    assert_int_equal(x.st.undecided, 0);
    assert_int_equal(n.st.unchecked, 3);
    assert_json_has(x.json, "unchecked_records", "3");
    assert_json_has(x.json, "checked_records", "3");
    assert_same_file(x.final, n.final);
    check_pass(&x, &cst, NULL);
    assert_int_equal(cst.failures, 0);
    assert_int_equal(cst.unchecked, 3);
    crun_free(&n);
    crun_free(&x);
}

/* ACCES, IO, NOSPC ... are undecided: never compared, never failures. */
static void test_undecided(void **state)
{
    struct tbbt__corr_stats cst;
    struct crun x, n;

    (void)state;
    crun(&x, "undecided", "fix", true, SEED);
    crun(&n, "undecided", "nocorr", false, SEED);
    assert_quiet(&x);
    assert_quiet(&n);
    assert_int_equal(x.st.undecided, 4);
    assert_int_equal(x.st.checked, 3);          /* mnt, mkdir, lookup NOENT */
    assert_int_equal(x.st.unchecked, 0);
    assert_int_equal(n.st.undecided, 4);
    assert_json_has(x.json, "undecided_records", "4");
    assert_same_file(x.final, n.final);
    check_pass(&x, &cst, NULL);
    assert_int_equal(cst.failures, 0);
    assert_int_equal(cst.undecided, 4);
    crun_free(&n);
    crun_free(&x);
}

int main(void)
{
#define CASE(c) { "correct/" #c, run_case, NULL, NULL, (void *)&c }, \
                { "no-correct/" #c, run_nocorr_case, NULL, NULL, (void *)&c }
    const struct CMUnitTest tests[] = {
        CASE(lookup_absent),
        CASE(lookup_present),
        CASE(create_exists),
        CASE(mkdir_exists),
        CASE(symlink_exists),
        CASE(mknod_exists),
        CASE(create_lost),
        CASE(mkdir_lost),
        CASE(symlink_lost),
        CASE(mknod_lost),
        CASE(remove_absent),
        CASE(remove_isdir),
        CASE(remove_noent),
        CASE(rmdir_filled),
        CASE(rmdir_absent),
        CASE(rmdir_file),
        CASE(rmdir_noent),
        CASE(rmdir_empty),
        CASE(rmdir_notempty_absent),
        CASE(rmdir_notempty_file),
        CASE(dotdot_fileid),
        CASE(rmdir_notdir),
        CASE(rename_source),
        CASE(rename_nonempty),
        CASE(rename_isdir),
        CASE(rename_notdir),
        CASE(rename_noent),
        CASE(rename_notempty),
        CASE(link_exists),
        CASE(link_lost),
        CASE(stale_named),
        CASE(lost_setattr),
        CASE(stale_ops),
        CASE(stale_unnamed),
        CASE(stale_unnamed_last),
        CASE(stale_unnamed_used),
        CASE(closed_world),
        cmocka_unit_test(test_stale_unnamed_map),
        cmocka_unit_test(test_unchecked),
        cmocka_unit_test(test_undecided),
    };

    tbbt_log_init("test-correct", TBBT_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
