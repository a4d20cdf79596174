/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the FS-dependency locks (src/sched/fsdep.c, TBBT paper 3.4.1 and
 * Table 4): who waits for whom, object by object, entry by entry and listing by listing,
 * and READDIR(PLUS) paging: a page that continues a listing waits for the page whose
 * last entry it continues from.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib.h>
#include <string.h>

#include "sched/fsdep.h"

/* Every request stays live; deps are recorded as (holder, waiter) pairs. */
struct deps {
    uint64_t pairs[64][2];
    int n;
};

static bool always_live(uint64_t seq, void *arg)
{
    (void)seq;
    (void)arg;
    return true;
}

static void record_dep(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind, void *arg)
{
    struct deps *d = arg;
    if (kind == TBBT_FSDEP_DEP_INFO)
        return;
    assert_true(d->n < 64);
    d->pairs[d->n][0] = holder;
    d->pairs[d->n][1] = waiter;
    d->n++;
}

static bool has_dep(const struct deps *d, uint64_t holder, uint64_t waiter)
{
    for (int i = 0; i < d->n; i++)
        if (d->pairs[i][0] == holder && d->pairs[i][1] == waiter)
            return true;
    return false;
}

/* A v3 record of proc on object id (fh), with an ID field. */
static void rec_on(struct tbbt_trace_rec *r, int proc, uint64_t id)
{
    tbbt_trace_rec_clear(r);
    r->prog = TBBT_PROG_NFS3;
    r->proc = (uint8_t)proc;
    r->id = id;
    TBBT_SET(r, TBBT_F_ID);
}

/* A READDIRPLUS page of dir from cookie, whose traced reply ended with entry cookie last. */
static void page(struct tbbt_trace_rec *r, uint64_t dir, uint64_t cookie, uint64_t last)
{
    rec_on(r, 17, dir);
    r->cookie = cookie;
    TBBT_SET(r, TBBT_F_COOKIE);
    if (last) {
        struct tbbt_entry *e = tbbt_trace_rec_add_entry(r);
        e->cookie = last / 2;
        e = tbbt_trace_rec_add_entry(r);
        e->cookie = last;
        TBBT_SET(r, TBBT_F_ENTRIES);
    }
}

static void admit(struct tbbt_fsdep *t, uint64_t seq, const struct tbbt_trace_rec *r)
{
    struct tbbt_fsdep_sets s;
    tbbt_fsdep_sets(r, &s);
    tbbt_fsdep_admit(t, seq, 0, &s, TBBT_FSDEP_ALL);
}

static void admit_names(struct tbbt_fsdep *t, uint64_t seq, const struct tbbt_trace_rec *r)
{
    struct tbbt_fsdep_sets s;
    tbbt_fsdep_sets(r, &s);
    tbbt_fsdep_admit(t, seq, 0, &s, TBBT_FSDEP_NAMES);
}

static void test_objects(void **state)
{
    struct deps d = {0};
    struct tbbt_fsdep *t = tbbt_fsdep_new(always_live, record_dep, &d);
    struct tbbt_trace_rec r;
    (void)state;
    tbbt_trace_rec_init(&r);
    rec_on(&r, 1, 5);            /* getattr 5: reads */
    admit(t, 1, &r);
    rec_on(&r, 1, 5);            /* a second reader does not wait for the first */
    admit(t, 2, &r);
    assert_int_equal(d.n, 0);
    rec_on(&r, 2, 5);            /* setattr 5 writes: waits for both readers */
    admit(t, 3, &r);
    assert_true(has_dep(&d, 1, 3) && has_dep(&d, 2, 3));
    rec_on(&r, 1, 6);            /* another object: independent */
    admit(t, 4, &r);
    assert_int_equal(d.n, 2);
    tbbt_trace_rec_fini(&r);
    tbbt_fsdep_free(t);
}

static void test_readdir_pages(void **state)
{
    struct deps d = {0};
    struct tbbt_fsdep *t = tbbt_fsdep_new(always_live, record_dep, &d);
    struct tbbt_trace_rec r;
    struct tbbt_fsdep_sets s;
    (void)state;
    tbbt_trace_rec_init(&r);
    page(&r, 9, 0, 400);         /* first page of dir 9, last entry cookie 400 */
    tbbt_fsdep_sets(&r, &s);
    assert_int_equal(s.page_r, 0);
    assert_int_not_equal(s.page_w, 0);
    admit(t, 1, &r);
    page(&r, 12, 0, 400);        /* another directory's listing: independent */
    admit(t, 2, &r);
    assert_int_equal(d.n, 0);
    page(&r, 9, 400, 900);       /* dir 9 continued from 400: waits for page 1 only */
    admit(t, 3, &r);
    assert_int_equal(d.n, 1);
    assert_true(has_dep(&d, 1, 3));
    page(&r, 9, 900, 0);         /* the last page (its reply was lost): waits for page 3 */
    admit(t, 4, &r);
    assert_true(has_dep(&d, 3, 4));
    page(&r, 12, 400, 0);        /* dir 12's continuation waits for dir 12's page */
    admit(t, 5, &r);
    assert_true(has_dep(&d, 2, 5));
    assert_false(has_dep(&d, 1, 5));
    tbbt_trace_rec_fini(&r);
    tbbt_fsdep_free(t);
}

/* A v3 directory operation on (dir, name). */
static void dirop(struct tbbt_trace_rec *r, int proc, uint64_t dir, const char *name)
{
    rec_on(r, proc, dir);
    tbbt_trace_rec_set_str(r, &r->name, name, (uint32_t)strlen(name));
    TBBT_SET(r, TBBT_F_NAME);
}

/* TBBT_FSDEP_NAMES: only requests on one directory entry wait for each other. */
static void test_names(void **state)
{
    struct deps d = {0};
    struct tbbt_fsdep *t = tbbt_fsdep_new(always_live, record_dep, &d);
    struct tbbt_trace_rec r;
    (void)state;
    tbbt_trace_rec_init(&r);
    dirop(&r, 12, 4, "mbox.lock");      /* REMOVE dir 4 "mbox.lock" */
    admit_names(t, 1, &r);
    dirop(&r, 8, 4, "other");           /* CREATE of another name: independent */
    admit_names(t, 2, &r);
    rec_on(&r, 2, 4);                   /* SETATTR of the directory: no name, no wait */
    admit_names(t, 3, &r);
    assert_int_equal(d.n, 0);
    rec_on(&r, 15, 77);                 /* LINK 77 to dir 4 "mbox.lock": waits for 1 */
    r.id2 = 4;
    TBBT_SET(&r, TBBT_F_ID2);
    tbbt_trace_rec_set_str(&r, &r.name2, "mbox.lock", 9);
    TBBT_SET(&r, TBBT_F_NAME2);
    admit_names(t, 4, &r);
    assert_int_equal(d.n, 1);
    assert_true(has_dep(&d, 1, 4));
    dirop(&r, 3, 4, "mbox.lock");       /* LOOKUP of it: waits for the LINK */
    admit_names(t, 5, &r);
    assert_true(has_dep(&d, 4, 5));
    tbbt_trace_rec_fini(&r);
    tbbt_fsdep_free(t);
}

/* fsdep: name changes lock their entry and the directory's listing, not the directory. */
static void test_listing(void **state)
{
    struct deps d = {0};
    struct tbbt_fsdep *t = tbbt_fsdep_new(always_live, record_dep, &d);
    struct tbbt_trace_rec r;
    struct tbbt_fsdep_sets s;
    uint64_t chg[TBBT_FSDEP_MAX_CHANGES];
    (void)state;
    tbbt_trace_rec_init(&r);
    dirop(&r, 9, 4, "new");             /* MKDIR dir 4 "new", making 30 */
    r.id_obj = 30;
    TBBT_SET(&r, TBBT_F_ID_OBJ);
    admit(t, 1, &r);
    tbbt_fsdep_sets(&r, &s);
    int n = tbbt_fsdep_changes(&s, chg);
    assert_int_equal(n, 2);             /* the new directory and dir 4 */
    assert_true((chg[0] == 30 && chg[1] == 4) || (chg[0] == 4 && chg[1] == 30));
    dirop(&r, 3, 4, "other");           /* LOOKUP of another name in 4: no wait */
    admit(t, 2, &r);
    assert_int_equal(d.n, 0);
    dirop(&r, 8, 30, "f");              /* CREATE in the new directory: needs its handle */
    admit(t, 3, &r);
    assert_true(has_dep(&d, 1, 3));
    page(&r, 4, 0, 400);                /* READDIRPLUS of 4: waits for the MKDIR in it */
    admit(t, 4, &r);
    assert_true(has_dep(&d, 1, 4));
    assert_false(has_dep(&d, 2, 4));
    dirop(&r, 12, 4, "other");          /* REMOVE in 4: waits for the listing's reader and
                                           the LOOKUP of that name */
    admit(t, 5, &r);
    assert_true(has_dep(&d, 4, 5) && has_dep(&d, 2, 5));
    tbbt_trace_rec_fini(&r);
    tbbt_fsdep_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_objects),
        cmocka_unit_test(test_readdir_pages),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_listing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
