/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of pass B's execution order (src/extract/execorder.c): which records move
 * before an earlier-called one they raced with, judged by a fake model (the probe and
 * object callbacks answer what each test says), and that everything else keeps call
 * order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "extract/execorder.h"

/* What the fake model answers, and the XIDs in emission order. */
struct fake {
    int probe;              /* tbbt__xorder_probe_cb's answer */
    int same;               /* tbbt__xorder_same_cb's answer */
    uint32_t out[16];
    int n;
};

static int emit(void *arg, struct tbbt_trace_rec *rec, int type, uint32_t ref, const void *p,
                size_t len)
{
    struct fake *f = arg;
    (void)type, (void)ref, (void)p, (void)len;
    if (rec) {
        assert_true(f->n < 16);
        f->out[f->n++] = rec->xid;
    }
    return 0;
}

static int probe(void *arg, const struct tbbt_trace_rec *rec, bool second)
{
    (void)rec, (void)second;
    return ((struct fake *)arg)->probe;
}

static int same(void *arg, const struct tbbt_trace_rec *rec, const struct tbbt_entry *e)
{
    (void)rec, (void)e;
    return ((struct fake *)arg)->same;
}

/* A v3 record answered OK: proc, xid, client, call and reply times (us). */
static void rec_set(struct tbbt_trace_rec *r, int proc, uint32_t xid, uint32_t ep,
                    uint64_t call_us, uint64_t reply_us)
{
    tbbt_trace_rec_clear(r);
    r->prog = TBBT_PROG_NFS3;
    r->proc = (uint8_t)proc;
    r->xid = xid;
    r->endpoint = ep;
    r->call_ns = call_us * 1000;
    r->reply_ns = reply_us * 1000;
    r->flags = TBBT_RF_REPLY | TBBT_RF_STATUS;
    r->rpc_stat = TBBT_RPC_SUCCESS;
    r->status = 0;
}

static void name_at(struct tbbt_trace_rec *r, bool second, uint32_t fh, const char *name)
{
    if (second) {
        r->fh2 = fh;
        TBBT_SET(r, TBBT_F_FH2);
        tbbt_trace_rec_set_str(r, &r->name2, name, (uint32_t)strlen(name));
        TBBT_SET(r, TBBT_F_NAME2);
    } else {
        r->fh = fh;
        TBBT_SET(r, TBBT_F_FH);
        tbbt_trace_rec_set_str(r, &r->name, name, (uint32_t)strlen(name));
        TBBT_SET(r, TBBT_F_NAME);
    }
}

/* A whole READDIRPLUS listing of directory handle dir holding names. */
static void listing(struct tbbt_trace_rec *r, uint32_t xid, uint32_t ep, uint64_t call_us,
                    uint64_t reply_us, uint32_t dir, const char *const *names, int n)
{
    rec_set(r, 17, xid, ep, call_us, reply_us);
    r->fh = dir;
    TBBT_SET(r, TBBT_F_FH);
    r->cookie = 0;
    TBBT_SET(r, TBBT_F_COOKIE);
    r->eof = 1;
    TBBT_SET(r, TBBT_F_EOF);
    for (int i = 0; i < n; i++) {
        struct tbbt_entry *e = tbbt_trace_rec_add_entry(r);
        e->cookie = (uint64_t)i + 1;
        tbbt_trace_rec_set_str(r, &e->name, names[i], (uint32_t)strlen(names[i]));
        e->fh = 40 + (uint32_t)i;
        e->flags |= TBBT_ENT_FH;
    }
    TBBT_SET(r, TBBT_F_ENTRIES);
}

static void run(struct fake *f, struct tbbt_trace_rec *recs, int n)
{
    struct tbbt__xorder *x = tbbt__xorder_new(64, emit, probe, f);
    tbbt__xorder_set_same(x, same);
    for (int i = 0; i < n; i++)
        assert_int_equal(tbbt__xorder_put_op(x, &recs[i]), 0);
    assert_int_equal(tbbt__xorder_flush(x), 0);
    tbbt__xorder_free(x);
}

static void recs_init(struct tbbt_trace_rec *r, int n)
{
    for (int i = 0; i < n; i++)
        tbbt_trace_rec_init(&r[i]);
}

static void recs_fini(struct tbbt_trace_rec *r, int n)
{
    for (int i = 0; i < n; i++)
        tbbt_trace_rec_fini(&r[i]);
}

/* Client 1 REMOVEs a lock file that client 2 LINKs into place; both got OK, the entry
 * was absent before: only LINK, REMOVE explains that. */
static void test_entry_race(void **state)
{
    struct fake f = {.probe = 0, .same = -1};
    struct tbbt_trace_rec r[3];
    (void)state;
    recs_init(r, 3);
    rec_set(&r[0], 12, 1, 1, 10, 30);           /* REMOVE d/lock */
    name_at(&r[0], false, 7, "lock");
    rec_set(&r[1], 15, 2, 2, 20, 25);           /* LINK f -> d/lock */
    r[1].fh = 9;
    TBBT_SET(&r[1], TBBT_F_FH);
    name_at(&r[1], true, 7, "lock");
    rec_set(&r[2], 1, 3, 1, 40, 41);            /* a later GETATTR: stays last */
    r[2].fh = 9;
    TBBT_SET(&r[2], TBBT_F_FH);
    run(&f, r, 3);
    assert_int_equal(f.n, 3);
    assert_int_equal(f.out[0], 2);
    assert_int_equal(f.out[1], 1);
    assert_int_equal(f.out[2], 3);
    /* the entry existed before: only the call order explains both OKs, nothing moves */
    f = (struct fake){.probe = 1, .same = -1};
    rec_set(&r[1], 15, 2, 2, 20, 25);
    r[1].fh = 9;
    TBBT_SET(&r[1], TBBT_F_FH);
    name_at(&r[1], true, 7, "lock");
    run(&f, r, 3);
    assert_int_equal(f.out[0], 1);
    assert_int_equal(f.out[1], 2);
    recs_fini(r, 3);
}

/* Client 1 lists new/ while client 2 RENAMEs a message into it; the listing shows it. */
static void test_listing_shows_rename(void **state)
{
    static const char *const with[] = {".", "..", "msg"}, *const without[] = {".", ".."};
    struct fake f = {.probe = -1, .same = 1};
    struct tbbt_trace_rec r[2];
    (void)state;
    recs_init(r, 2);
    listing(&r[0], 1, 1, 10, 40, 7, with, 3);
    rec_set(&r[1], 14, 2, 2, 20, 30);           /* RENAME tmp/msg -> new/msg */
    name_at(&r[1], false, 3, "msg");
    name_at(&r[1], true, 7, "msg");
    run(&f, r, 2);
    assert_int_equal(f.out[0], 2);
    assert_int_equal(f.out[1], 1);
    /* the listed "msg" is another object: the listing tells nothing, call order stays */
    f = (struct fake){.probe = -1, .same = 0};
    run(&f, r, 2);
    assert_int_equal(f.out[0], 1);
    /* not listed: the server listed new/ before the RENAME */
    f = (struct fake){.probe = -1, .same = 1};
    listing(&r[0], 1, 1, 10, 40, 7, without, 2);
    run(&f, r, 2);
    assert_int_equal(f.out[0], 1);
    /* a REMOVE of a name the whole listing lacks: it ran first */
    f = (struct fake){.probe = 1, .same = -1};
    rec_set(&r[1], 12, 2, 2, 20, 30);
    name_at(&r[1], false, 7, "old");
    run(&f, r, 2);
    assert_int_equal(f.out[0], 2);
    /* ... but not when the listing is answered before the REMOVE is called */
    f = (struct fake){.probe = 1, .same = -1};
    listing(&r[0], 1, 1, 10, 15, 7, without, 2);
    run(&f, r, 2);
    assert_int_equal(f.out[0], 1);
    recs_fini(r, 2);
}

/* Client 2's listing, called while client 1's RENAME .b -> b was in progress, still
 * shows ".b": the server listed the directory first. */
static void test_listing_predates_rename(void **state)
{
    static const char *const old[] = {".", "..", ".b"}, *const new_[] = {".", "..", "b"};
    struct fake f = {.probe = -1, .same = -1};
    struct tbbt_trace_rec r[2];
    (void)state;
    recs_init(r, 2);
    rec_set(&r[0], 14, 1, 1, 10, 40);           /* RENAME d/.b -> d/b */
    name_at(&r[0], false, 7, ".b");
    name_at(&r[0], true, 7, "b");
    listing(&r[1], 2, 2, 20, 30, 7, old, 3);
    run(&f, r, 2);
    assert_int_equal(f.out[0], 2);
    assert_int_equal(f.out[1], 1);
    /* the listing shows the rename done: call order */
    f = (struct fake){.probe = -1, .same = -1};
    listing(&r[1], 2, 2, 20, 30, 7, new_, 3);
    run(&f, r, 2);
    assert_int_equal(f.out[0], 1);
    recs_fini(r, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_race),
        cmocka_unit_test(test_listing_shows_rename),
        cmocka_unit_test(test_listing_predates_rename),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
