/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the replay scheduler (src/sched/sched.c; TBBT paper 3.4.1, Table 3 and
 * Figure 6), without threads, a server or a clock: the lookahead window, conservative
 * order (with and without a causal slack, the hold callback, entry locks), FS-dependency
 * order, clones, the per-client and overall limits on requests out, and due times.  The
 * Figure 6 tests run a small discrete-event loop over the scheduler, as tbbt-stats'
 * concurrency simulator does: every request completes a fixed latency after it went.
 * External requests (tbbt-play --distribute clients, docs/mpi.md) are tested in both
 * orders against a request taken here, and in a randomized run of 2 and 4 schedulers
 * ("ranks") that exchange completion notices, checked for deadlock and for every
 * dependency kept across ranks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib.h>
#include <string.h>

#include "sched/sched.h"
#include "util/heap.h"

#define NONE TBBT_SCHED_NONE

/* A v3 record of proc on object id, with its trace times (us). */
static void rec_on(struct tbbt_trace_rec *r, int proc, uint64_t id, uint64_t call_us,
                   uint64_t reply_us)
{
    tbbt_trace_rec_clear(r);
    r->prog = TBBT_PROG_NFS3;
    r->proc = (uint8_t)proc;
    r->id = id;
    TBBT_SET(r, TBBT_F_ID);
    r->call_ns = call_us * 1000;
    r->reply_ns = reply_us * 1000;
    r->flags |= TBBT_RF_REPLY;
}

/* A CREATE of name in dir making object obj. */
static void create_on(struct tbbt_trace_rec *r, uint64_t dir, const char *name, uint64_t obj,
                      uint64_t call_us, uint64_t reply_us)
{
    rec_on(r, 8, dir, call_us, reply_us);
    tbbt_trace_rec_set_str(r, &r->name, name, (uint32_t)strlen(name));
    TBBT_SET(r, TBBT_F_NAME);
    r->id_obj = obj;
    TBBT_SET(r, TBBT_F_ID_OBJ);
}

#define GETATTR 1
#define READ 6
#define WRITE 7

/* Admits rec (clone c, client key cl) with its Table 4 sets if locks, due at due_ns. */
static uint64_t admit_full(struct tbbt_sched *s, const struct tbbt_trace_rec *rec, uint32_t c,
                           uint32_t cl, uint64_t due_ns, bool locks)
{
    struct tbbt_fsdep_sets sets;
    tbbt_fsdep_sets(rec, &sets);
    struct tbbt_sched_req rq = {.clone = c, .client = cl, .call_ns = rec->call_ns,
                                .reply_ns = rec->reply_ns, .due_ns = due_ns,
                                .sets = locks ? &sets : NULL};
    return tbbt_sched_admit(s, &rq, NULL);
}

static uint64_t admit(struct tbbt_sched *s, const struct tbbt_trace_rec *rec)
{
    return admit_full(s, rec, 0, 0, 0, true);
}

static uint64_t next(struct tbbt_sched *s)
{
    uint64_t due = UINT64_MAX;
    return tbbt_sched_next(s, 0, &due);
}

static struct tbbt_sched *new_sched(enum tbbt_sched_order order, uint32_t window)
{
    struct tbbt_sched_opts o = {.order = order, .window = window, .clones = 1};
    return tbbt_sched_new(&o);
}

/* The window holds the oldest live request and window - 1 after it, in trace order. */
static void test_window(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    struct tbbt_sched *s = new_sched(TBBT_SCHED_FSDEP, 2);
    assert_true(tbbt_sched_room(s, 2));
    rec_on(&r, GETATTR, 1, 0, 1);
    assert_int_equal(admit(s, &r), 0);
    rec_on(&r, GETATTR, 2, 0, 1);
    assert_int_equal(admit(s, &r), 1);
    assert_false(tbbt_sched_room(s, 1));
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), 1);
    assert_int_equal(next(s), NONE);
    assert_int_equal(tbbt_sched_inflight(s), 2);
    /* A later request completing first does not make room: the oldest holds it. */
    assert_int_equal(tbbt_sched_complete(s, 1), 0);
    assert_false(tbbt_sched_room(s, 1));
    assert_int_equal(tbbt_sched_complete(s, 0), 2);
    assert_int_equal(tbbt_sched_oldest(s), 2);
    assert_true(tbbt_sched_room(s, 2));
    assert_int_equal(tbbt_sched_peak(s), 2);
    assert_false(tbbt_sched_live(s, 1));
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/*
 * Table 3, sequence 2: CREATE A (reply at 1), then WRITE B called at 2.  Conservative
 * order holds the WRITE until the CREATE has answered (sequence 3); FS-dependency order
 * sends it at once, as B is another object (sequence 4).
 */
static void table3_seq2(enum tbbt_sched_order order, bool write_waits)
{
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    struct tbbt_sched *s = new_sched(order, 8);
    create_on(&r, 1, "A", 10, 0, 1);
    admit(s, &r);
    rec_on(&r, WRITE, 20, 2, 3);
    admit(s, &r);
    assert_int_equal(next(s), 0);
    if (write_waits) {
        assert_int_equal(next(s), NONE);
        assert_true(tbbt_sched_live(s, 0));
        tbbt_sched_complete(s, 0);
    }
    assert_int_equal(next(s), 1);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

static void test_table3_conservative(void **state)
{
    (void)state;
    table3_seq2(TBBT_SCHED_CONSERVATIVE, true);
}

static void test_table3_fsdep(void **state)
{
    (void)state;
    table3_seq2(TBBT_SCHED_FSDEP, false);
}

/* Table 3, sequence 1: CREATE A then WRITE A: both orders make the WRITE wait. */
static void test_table3_seq1(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched *s = new_sched((enum tbbt_sched_order)order, 8);
        create_on(&r, 1, "A", 10, 0, 1);
        admit(s, &r);
        rec_on(&r, WRITE, 10, 2, 3);
        admit(s, &r);
        assert_int_equal(next(s), 0);
        assert_int_equal(next(s), NONE);
        tbbt_sched_complete(s, 0);
        assert_int_equal(next(s), 1);
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/*
 * Conservative order keeps the trace's own concurrency: requests that overlapped in the
 * trace (called before the other's reply) go together, even on one object (a READ while
 * a WRITE was out); fsdep order serializes that pair but not independent objects.
 */
static void test_conservative_overlap(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    struct tbbt_sched *s = new_sched(TBBT_SCHED_CONSERVATIVE, 8);
    rec_on(&r, WRITE, 5, 0, 10);
    admit(s, &r);
    rec_on(&r, READ, 5, 4, 12);     /* called while the WRITE was out */
    admit(s, &r);
    rec_on(&r, READ, 6, 11, 13);    /* called after the WRITE's reply: waits */
    admit(s, &r);
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), 1);
    assert_int_equal(next(s), NONE);
    tbbt_sched_complete(s, 0);
    assert_int_equal(next(s), 2);   /* its cause (reply 10) is in; 12 is after its call */
    tbbt_sched_free(s);

    s = new_sched(TBBT_SCHED_FSDEP, 8);
    rec_on(&r, WRITE, 5, 0, 10);
    admit(s, &r);
    rec_on(&r, READ, 5, 4, 12);
    admit(s, &r);
    rec_on(&r, READ, 6, 11, 13);
    admit(s, &r);
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), 2);   /* another object: at once */
    assert_int_equal(next(s), NONE);
    tbbt_sched_complete(s, 0);
    assert_int_equal(next(s), 1);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/* Conservative order is trace order: a request held back holds back those after it. */
static bool hold_seq1(uint64_t seq, void *arg)
{
    bool *held = arg;
    return seq == 1 && *held;
}

static void test_conservative_in_order(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    bool held = true;
    struct tbbt_sched_opts o = {.order = TBBT_SCHED_CONSERVATIVE, .window = 8, .clones = 1,
                                .hold = hold_seq1, .hold_arg = &held};
    struct tbbt_sched *s = tbbt_sched_new(&o);
    for (uint64_t i = 0; i < 3; i++) {
        rec_on(&r, GETATTR, 1 + i, i, 100);     /* all overlapping */
        admit(s, &r);
    }
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), NONE);    /* 1 is held (a handle in the making) and so is 2 */
    held = false;
    assert_int_equal(next(s), 1);
    assert_int_equal(next(s), 2);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/*
 * Causal slack: another client's reply less than the slack before a call is no cause;
 * the own client's replies are, and a request they hold back does not hold back other
 * clients' later requests.
 */
static void test_causal_slack(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    struct tbbt_sched_opts o = {.order = TBBT_SCHED_CONSERVATIVE, .window = 8, .clones = 1,
                                .causal_slack_ns = 100000};
    struct tbbt_sched *s = tbbt_sched_new(&o);
    rec_on(&r, GETATTR, 1, 0, 100);
    admit_full(s, &r, 0, 0, 0, true);   /* client 0: reply at 100 us */
    rec_on(&r, GETATTR, 2, 150, 300);
    admit_full(s, &r, 0, 1, 0, true);   /* client 1, 50 us after it: not caused */
    rec_on(&r, GETATTR, 3, 160, 300);
    admit_full(s, &r, 0, 0, 0, true);   /* client 0: caused by its own reply */
    rec_on(&r, GETATTR, 4, 170, 300);
    admit_full(s, &r, 0, 1, 0, true);   /* client 1 again: may pass request 2 */
    rec_on(&r, GETATTR, 5, 250, 300);
    admit_full(s, &r, 0, 1, 0, true);   /* 150 us after the reply: caused, and all after */
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), 1);
    assert_int_equal(next(s), 3);
    assert_int_equal(next(s), NONE);
    tbbt_sched_complete(s, 0);
    assert_int_equal(next(s), 2);
    assert_int_equal(next(s), 4);
    tbbt_sched_free(s);

    /* Without the slack, request 1 waits for the reply of request 0. */
    o.causal_slack_ns = 0;
    s = tbbt_sched_new(&o);
    rec_on(&r, GETATTR, 1, 0, 100);
    admit_full(s, &r, 0, 0, 0, true);
    rec_on(&r, GETATTR, 2, 150, 300);
    admit_full(s, &r, 0, 1, 0, true);
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), NONE);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/*
 * Conservative order with object sets: two requests on one directory entry that
 * overlapped in the trace (two clients racing for a lock file) keep their order; without
 * sets (tbbt-stats' simulator) only the reply-time rule applies.
 */
static void test_conservative_entries(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int locks = 0; locks < 2; locks++) {
        struct tbbt_sched *s = new_sched(TBBT_SCHED_CONSERVATIVE, 8);
        create_on(&r, 1, "lock", 10, 0, 10);
        admit_full(s, &r, 0, 0, 0, locks);
        create_on(&r, 1, "lock", 11, 5, 12);
        admit_full(s, &r, 0, 1, 0, locks);
        assert_int_equal(next(s), 0);
        assert_int_equal(next(s), locks ? NONE : 1);
        tbbt_sched_complete(s, 0);
        if (locks)
            assert_int_equal(next(s), 1);
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/* Every conflict is reported to the conflict callback, binding or not. */
static void count_conflict(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind,
                           void *arg)
{
    int *n = arg;
    (void)holder;
    (void)waiter;
    n[kind]++;
}

static void test_conflicts_reported(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    int n[3] = {0};
    struct tbbt_sched_opts o = {.order = TBBT_SCHED_CONSERVATIVE, .window = 8, .clones = 1,
                                .conflict = count_conflict, .conflict_arg = n};
    struct tbbt_sched *s = tbbt_sched_new(&o);
    rec_on(&r, WRITE, 5, 0, 10);
    admit(s, &r);
    rec_on(&r, READ, 5, 4, 12);
    admit(s, &r);
    assert_int_equal(n[TBBT_FSDEP_DEP_INFO], 1);    /* objects only inform conservative */
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), 1);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/* Clones replay copies of the trace against copies of the image: never dependent. */
static void test_clones(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched_opts o = {.order = (enum tbbt_sched_order)order, .window = 8,
                                    .clones = 2};
        struct tbbt_sched *s = tbbt_sched_new(&o);
        rec_on(&r, WRITE, 5, 0, 10);
        admit_full(s, &r, 0, 0, 0, true);
        admit_full(s, &r, 1, 1, 0, true);
        rec_on(&r, WRITE, 5, 20, 30);
        admit_full(s, &r, 0, 0, 0, true);
        admit_full(s, &r, 1, 1, 0, true);
        uint64_t a = next(s), b = next(s);
        assert_true((a == 0 && b == 1) || (a == 1 && b == 0));
        assert_int_equal(next(s), NONE);
        tbbt_sched_complete(s, 1);          /* clone 1's first: its second may go */
        assert_int_equal(next(s), 3);
        assert_int_equal(next(s), NONE);
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/* --client-outstanding: a client at its limit waits; other clients go past it. */
static void test_client_limit(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    struct tbbt_sched_opts o = {.order = TBBT_SCHED_FSDEP, .window = 8, .clones = 1,
                                .client_outstanding = 1};
    struct tbbt_sched *s = tbbt_sched_new(&o);
    for (uint64_t i = 0; i < 3; i++) {
        rec_on(&r, GETATTR, 1 + i, i, 100);
        admit_full(s, &r, 0, i == 2, 0, true);  /* clients 0, 0, 1 */
    }
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), 2);
    assert_int_equal(next(s), NONE);
    assert_int_equal(tbbt_sched_client_stalls(s), 1);
    tbbt_sched_complete(s, 0);
    assert_int_equal(next(s), 1);
    tbbt_sched_free(s);

    /* Conservative: the held request holds back the later ones too. */
    o.order = TBBT_SCHED_CONSERVATIVE;
    s = tbbt_sched_new(&o);
    for (uint64_t i = 0; i < 3; i++) {
        rec_on(&r, GETATTR, 1 + i, i, 100);
        admit_full(s, &r, 0, i == 2, 0, true);
    }
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), NONE);
    tbbt_sched_complete(s, 0);
    assert_int_equal(next(s), 1);
    assert_int_equal(next(s), 2);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/* --max-outstanding: requests out in all, whatever the policy allows. */
static void test_max_outstanding(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    struct tbbt_sched_opts o = {.order = TBBT_SCHED_FSDEP, .window = 8, .clones = 1,
                                .max_outstanding = 2};
    struct tbbt_sched *s = tbbt_sched_new(&o);
    for (uint64_t i = 0; i < 3; i++) {
        rec_on(&r, GETATTR, 1 + i, 0, 100);
        admit(s, &r);
    }
    assert_int_equal(next(s), 0);
    assert_int_equal(next(s), 1);
    assert_int_equal(next(s), NONE);
    tbbt_sched_complete(s, 1);
    assert_int_equal(next(s), 2);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/* Timestamp timing: nothing goes before its due time; *due says when the next is. */
static void test_timed(void **state)
{
    (void)state;
    assert_int_equal(tbbt_sched_due(1000, 500, 900, 2.0), 1200);
    assert_int_equal(tbbt_sched_due(1000, 500, 400, 1.0), 1000);   /* before t0: at start */
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched_opts o = {.order = (enum tbbt_sched_order)order, .window = 8,
                                    .clones = 1, .timed = true};
        struct tbbt_sched *s = tbbt_sched_new(&o);
        rec_on(&r, GETATTR, 1, 0, 1);
        admit_full(s, &r, 0, 0, 100, true);
        rec_on(&r, GETATTR, 2, 0, 1);
        admit_full(s, &r, 0, 0, 300, true);
        uint64_t due = UINT64_MAX;
        assert_int_equal(tbbt_sched_next(s, 50, &due), NONE);
        assert_int_equal(due, 100);
        assert_int_equal(tbbt_sched_next(s, 100, &due), 0);
        due = UINT64_MAX;
        assert_int_equal(tbbt_sched_next(s, 200, &due), NONE);
        assert_int_equal(due, 300);
        assert_int_equal(tbbt_sched_next(s, 300, &due), 1);
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/* fsdep order with due times: the least due ready request goes first, not the oldest. */
static void test_fsdep_due_order(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    struct tbbt_sched_opts o = {.order = TBBT_SCHED_FSDEP, .window = 8, .clones = 1,
                                .timed = true};
    struct tbbt_sched *s = tbbt_sched_new(&o);
    rec_on(&r, WRITE, 5, 0, 10);
    admit_full(s, &r, 0, 0, 100, true);
    rec_on(&r, GETATTR, 5, 20, 30);     /* waits for the WRITE; due at 200 */
    admit_full(s, &r, 0, 0, 200, true);
    rec_on(&r, GETATTR, 6, 40, 50);     /* free; due at 400 */
    admit_full(s, &r, 0, 0, 400, true);
    uint64_t due = UINT64_MAX;
    assert_int_equal(tbbt_sched_next(s, 100, &due), 0);
    tbbt_sched_complete(s, 0);          /* request 1 is ready from now, due before 2 */
    due = UINT64_MAX;
    assert_int_equal(tbbt_sched_next(s, 500, &due), 1);
    assert_int_equal(tbbt_sched_next(s, 500, &due), 2);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/* The player's reader admits at once when the policy has nothing admitted left to go. */
static void test_starved(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched *s = new_sched((enum tbbt_sched_order)order, 8);
        assert_true(tbbt_sched_starved(s) && tbbt_sched_behind(s));
        rec_on(&r, GETATTR, 1, 0, 10);
        admit(s, &r);
        assert_false(tbbt_sched_starved(s) || tbbt_sched_behind(s));
        assert_int_equal(next(s), 0);
        assert_true(tbbt_sched_starved(s) && tbbt_sched_behind(s));
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/*
 * Figure 6's simulation: requests go as soon as the scheduler lets them and complete
 * lat_ns later (unlimited server parallelism).  Returns the makespan.
 */
static uint64_t simulate(enum tbbt_sched_order order, uint32_t window,
                         const struct tbbt_trace_rec *recs, unsigned n, uint64_t lat_ns)
{
    struct tbbt_sched *s = new_sched(order, window);
    GArray *ev = tbbt_heap_new();
    uint64_t now = 0, seq, due;
    unsigned added = 0;
    while (added < n || ev->len) {
        if (added < n && tbbt_sched_room(s, 1)) {
            admit(s, &recs[added++]);
        } else {
            const struct tbbt_heap_item *top = tbbt_heap_top(ev);
            now = MAX(now, top->key);
            seq = top->seq;
            tbbt_heap_pop(ev);
            tbbt_sched_complete(s, seq);
        }
        due = UINT64_MAX;
        while ((seq = tbbt_sched_next(s, now, &due)) != NONE)
            tbbt_heap_push(ev, now + lat_ns, seq);
    }
    assert_int_equal(tbbt_sched_oldest(s), n);
    g_array_free(ev, TRUE);
    tbbt_sched_free(s);
    return now;
}

/*
 * Figure 6: the lookahead window bounds the concurrency.  A trace of one client doing
 * one request at a time (each called after the previous reply) on independent files:
 * conservative order replays it one at a time whatever the window; fsdep order finds
 * `window` requests to overlap, so its throughput grows with the window.
 */
static void test_figure6_window(void **state)
{
    (void)state;
    enum { N = 64 };
    struct tbbt_trace_rec *recs = g_new(struct tbbt_trace_rec, N);
    for (unsigned i = 0; i < N; i++) {
        tbbt_trace_rec_init(&recs[i]);
        rec_on(&recs[i], WRITE, 100 + i, 10 * i, 10 * i + 5);
    }
    const uint64_t lat = 1000;
    for (uint32_t w = 1; w <= 16; w *= 2) {
        assert_int_equal(simulate(TBBT_SCHED_CONSERVATIVE, w, recs, N, lat), N * lat);
        assert_int_equal(simulate(TBBT_SCHED_FSDEP, w, recs, N, lat), N / w * lat);
    }
    /* One file: fsdep must serialize too, whatever the window. */
    for (unsigned i = 0; i < N; i++)
        rec_on(&recs[i], WRITE, 100, 10 * i, 10 * i + 5);
    assert_int_equal(simulate(TBBT_SCHED_FSDEP, 16, recs, N, lat), N * lat);
    /* All called at once (a client with many calls out): conservative overlaps them too,
     * up to the window. */
    for (unsigned i = 0; i < N; i++)
        rec_on(&recs[i], GETATTR, 100 + i, 0, 1000);
    assert_int_equal(simulate(TBBT_SCHED_CONSERVATIVE, 8, recs, N, lat), N / 8 * lat);
    for (unsigned i = 0; i < N; i++)
        tbbt_trace_rec_fini(&recs[i]);
    g_free(recs);
}

/* ------------------------------------------------------------------ external requests */

/* Admits rec (client key cl) as an external request, or done as well. */
static uint64_t admit_ext(struct tbbt_sched *s, const struct tbbt_trace_rec *rec, uint32_t cl,
                          uint64_t due_ns, bool done)
{
    struct tbbt_fsdep_sets sets;
    tbbt_fsdep_sets(rec, &sets);
    struct tbbt_sched_req rq = {.client = cl, .call_ns = rec->call_ns,
                                .reply_ns = rec->reply_ns, .due_ns = due_ns, .sets = &sets,
                                .external = true, .done = done};
    bool ready = true;
    uint64_t seq = tbbt_sched_admit(s, &rq, &ready);
    assert_false(ready);
    return seq;
}

/*
 * A then B, where B depends on A: under fsdep order a WRITE then a READ of one object;
 * under conservative order A's trace reply comes before B's call (other objects).
 */
static void dep_pair(enum tbbt_sched_order order, struct tbbt_trace_rec *a,
                     struct tbbt_trace_rec *b)
{
    if (order == TBBT_SCHED_FSDEP) {
        rec_on(a, WRITE, 5, 0, 10);
        rec_on(b, READ, 5, 1, 12);      /* overlapped A in the trace: fsdep waits anyway */
    } else {
        rec_on(a, GETATTR, 1, 0, 10);
        rec_on(b, GETATTR, 2, 20, 30);
    }
}

/*
 * An external request holds exactly what a taken one holds: B waits for A whether A
 * was taken here or is external, and goes once A completes (here, or on its rank).
 */
static void test_external_holds(void **state)
{
    (void)state;
    struct tbbt_trace_rec a, b;
    tbbt_trace_rec_init(&a);
    tbbt_trace_rec_init(&b);
    for (int order = 0; order < 2; order++) {
        for (int ext = 0; ext < 2; ext++) {
            struct tbbt_sched *s = new_sched((enum tbbt_sched_order)order, 8);
            dep_pair((enum tbbt_sched_order)order, &a, &b);
            if (ext)
                assert_int_equal(admit_ext(s, &a, 1, 0, false), 0);
            else
                admit_full(s, &a, 0, 1, 0, true);
            admit_full(s, &b, 0, 0, 0, true);
            if (!ext)
                assert_int_equal(next(s), 0);
            for (int i = 0; i < 3; i++)
                assert_int_equal(next(s), NONE);
            assert_true(tbbt_sched_live(s, 0));
            assert_int_equal(tbbt_sched_external_blocked(s), ext);
            assert_int_equal(tbbt_sched_external_stalls(s), ext);  /* once, not 3 times */
            assert_int_equal(tbbt_sched_inflight(s), !ext);
            if (ext)
                assert_int_equal(tbbt_sched_complete_external(s, 0), 1);
            else
                assert_int_equal(tbbt_sched_complete(s, 0), 1);
            assert_false(tbbt_sched_external_blocked(s));
            assert_int_equal(next(s), 1);
            assert_int_equal(tbbt_sched_external_stalls(s), ext);
            tbbt_sched_free(s);
        }
    }
    tbbt_trace_rec_fini(&a);
    tbbt_trace_rec_fini(&b);
}

/*
 * Conservative order's entry locks: an external CREATE of a name holds back an own
 * CREATE of the same name that overlapped it in the trace (the rule lets it go).
 */
static void test_external_entry_lock(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    struct tbbt_sched *s = new_sched(TBBT_SCHED_CONSERVATIVE, 8);
    create_on(&r, 1, "lock", 10, 0, 10);
    admit_ext(s, &r, 1, 0, false);
    create_on(&r, 1, "lock", 11, 5, 12);
    admit_full(s, &r, 0, 0, 0, true);
    assert_int_equal(next(s), NONE);
    assert_true(tbbt_sched_external_blocked(s));
    assert_int_equal(tbbt_sched_external_stalls(s), 1);
    tbbt_sched_complete_external(s, 0);
    assert_int_equal(next(s), 1);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/*
 * An external request that conflicts with nothing holds nothing back: under conservative
 * order, not the own requests after it in trace order that overlapped it (it is taken at
 * its place, not waited for), nor by its due time; nor an own request before it whose
 * call came at its reply (it was taken after that one).
 */
static void test_external_free(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched_opts o = {.order = (enum tbbt_sched_order)order, .window = 8,
                                    .clones = 1, .timed = true};
        struct tbbt_sched *s = tbbt_sched_new(&o);
        rec_on(&r, WRITE, 5, 0, 10);
        admit_ext(s, &r, 1, 1000, false);       /* due long after the own ones */
        rec_on(&r, READ, 6, 4, 12);             /* overlapped it, another object */
        admit_full(s, &r, 0, 0, 100, true);
        rec_on(&r, GETATTR, 7, 5, 12);
        admit_full(s, &r, 0, 0, 200, true);
        uint64_t due = UINT64_MAX;
        assert_int_equal(tbbt_sched_next(s, 100, &due), 1);
        assert_int_equal(tbbt_sched_next(s, 100, &due), NONE);
        assert_int_equal(due, 200);
        assert_false(tbbt_sched_external_blocked(s));   /* kept back by its time */
        assert_int_equal(tbbt_sched_next(s, 200, &due), 2);
        assert_int_equal(tbbt_sched_external_stalls(s), 0);
        tbbt_sched_free(s);
    }

    /* Own A, then external X called and answered at A's call: X was taken after A. */
    bool held = true;
    struct tbbt_sched_opts o = {.order = TBBT_SCHED_CONSERVATIVE, .window = 8, .clones = 1,
                                .hold = hold_seq1, .hold_arg = &held};
    struct tbbt_sched *s = tbbt_sched_new(&o);
    rec_on(&r, GETATTR, 1, 0, 5);
    admit(s, &r);
    rec_on(&r, GETATTR, 2, 10, 20);
    admit(s, &r);                           /* seq 1: held a while by the callback */
    rec_on(&r, GETATTR, 3, 10, 10);
    admit_ext(s, &r, 1, 0, false);          /* seq 2: its reply is not before 1's call */
    assert_int_equal(next(s), 0);
    tbbt_sched_complete(s, 0);
    assert_int_equal(next(s), NONE);
    assert_false(tbbt_sched_external_blocked(s));   /* held by the callback, not by 2 */
    held = false;
    assert_int_equal(next(s), 1);
    assert_int_equal(tbbt_sched_external_stalls(s), 0);
    tbbt_sched_free(s);
    tbbt_trace_rec_fini(&r);
}

/* External requests count against no limit and not in inflight or peak. */
static void test_external_limits(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched_opts o = {.order = (enum tbbt_sched_order)order, .window = 8,
                                    .clones = 1, .max_outstanding = 1,
                                    .client_outstanding = 1};
        struct tbbt_sched *s = tbbt_sched_new(&o);
        for (uint64_t i = 0; i < 3; i++) {
            rec_on(&r, GETATTR, 1 + i, i, 100);
            admit_ext(s, &r, 0, 0, false);      /* client 0, as the own ones */
        }
        rec_on(&r, GETATTR, 10, 3, 100);
        admit(s, &r);
        rec_on(&r, GETATTR, 11, 4, 100);
        admit(s, &r);
        assert_int_equal(tbbt_sched_inflight(s), 0);
        assert_int_equal(next(s), 3);
        assert_int_equal(next(s), NONE);        /* now the limits hold */
        assert_int_equal(tbbt_sched_inflight(s), 1);
        assert_int_equal(tbbt_sched_peak(s), 1);
        assert_false(tbbt_sched_external_blocked(s));
        tbbt_sched_complete(s, 3);
        assert_int_equal(next(s), 4);
        for (uint64_t i = 0; i < 3; i++)
            tbbt_sched_complete_external(s, i);
        assert_int_equal(tbbt_sched_inflight(s), 1);
        assert_int_equal(tbbt_sched_oldest(s), 4);
        assert_int_equal(tbbt_sched_complete(s, 4), 1);
        assert_int_equal(tbbt_sched_inflight(s), 0);
        assert_int_equal(tbbt_sched_external_stalls(s), 0);
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/*
 * The window with an external oldest request completed late: the own requests after it
 * go and complete, the window stays full until the notice, then moves past all of them.
 * An external request admitted done holds nothing and is recycled at once as the oldest.
 */
static void test_external_window(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched *s = new_sched((enum tbbt_sched_order)order, 4);
        rec_on(&r, GETATTR, 1, 0, 100);
        admit_ext(s, &r, 1, 0, false);
        for (uint64_t i = 1; i < 4; i++) {
            rec_on(&r, GETATTR, 1 + i, i, 100);
            admit(s, &r);
        }
        assert_false(tbbt_sched_room(s, 1));
        for (uint64_t i = 1; i < 4; i++)
            assert_int_equal(next(s), i);
        assert_true(tbbt_sched_starved(s) && tbbt_sched_behind(s));
        for (uint64_t i = 1; i < 4; i++)
            assert_int_equal(tbbt_sched_complete(s, i), 0);
        assert_false(tbbt_sched_room(s, 1));
        assert_int_equal(tbbt_sched_oldest(s), 0);
        assert_int_equal(tbbt_sched_complete_external(s, 0), 4);
        assert_int_equal(tbbt_sched_oldest(s), 4);
        /* around the ring again: an early notice, then a request depending on it */
        rec_on(&r, WRITE, 9, 200, 210);
        assert_int_equal(admit_ext(s, &r, 1, 0, true), 4);
        assert_int_equal(tbbt_sched_oldest(s), 5);
        assert_false(tbbt_sched_live(s, 4));
        rec_on(&r, READ, 9, 220, 230);
        admit(s, &r);
        assert_int_equal(next(s), 5);
        assert_int_equal(tbbt_sched_complete(s, 5), 1);
        assert_int_equal(tbbt_sched_external_stalls(s), 0);
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/*
 * An own request waiting for an external one and completed without being taken (the
 * player skips it): the wait is over for tbbt_sched_external_blocked(), and the
 * external request's notice later does not count it twice.
 */
static void test_external_skip(void **state)
{
    (void)state;
    struct tbbt_trace_rec a, b;
    tbbt_trace_rec_init(&a);
    tbbt_trace_rec_init(&b);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched *s = new_sched((enum tbbt_sched_order)order, 8);
        dep_pair((enum tbbt_sched_order)order, &a, &b);
        admit_ext(s, &a, 1, 0, false);
        admit_full(s, &b, 0, 0, 0, true);
        admit_full(s, &b, 0, 0, 0, true);       /* 2: waits for 0 too */
        assert_int_equal(next(s), NONE);
        assert_true(tbbt_sched_external_blocked(s));
        tbbt_sched_complete(s, 1);
        tbbt_sched_complete(s, 2);
        assert_int_equal(next(s), NONE);
        assert_false(tbbt_sched_external_blocked(s));
        assert_int_equal(tbbt_sched_complete_external(s, 0), 3);
        assert_false(tbbt_sched_external_blocked(s));
        rec_on(&b, GETATTR, 7, 100, 110);
        admit_ext(s, &b, 1, 0, false);
        rec_on(&b, GETATTR, 8, 100, 110);
        admit(s, &b);                           /* 4: free */
        assert_int_equal(next(s), 4);
        assert_int_equal(next(s), NONE);
        assert_false(tbbt_sched_external_blocked(s));
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&a);
    tbbt_trace_rec_fini(&b);
}

/*
 * Notices of different ranks come in any order: an external WRITE whose notice comes
 * before that of the earlier external WRITE it waited for stays live until that one
 * completes here, so the own READ after both waits for both (as it would if both were
 * taken here).  The same when the notice came before its admission (done).
 */
static void test_external_notice_order(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int done = 0; done < 2; done++) {
        struct tbbt_sched *s = new_sched(TBBT_SCHED_FSDEP, 8);
        rec_on(&r, WRITE, 5, 0, 10);
        admit_ext(s, &r, 1, 0, false);
        rec_on(&r, WRITE, 5, 20, 30);
        admit_ext(s, &r, 2, 0, done);
        if (!done)
            assert_int_equal(tbbt_sched_complete_external(s, 1), 0);   /* deferred */
        assert_true(tbbt_sched_live(s, 1));
        rec_on(&r, READ, 5, 40, 50);
        admit(s, &r);
        assert_int_equal(next(s), NONE);
        assert_true(tbbt_sched_external_blocked(s));
        assert_int_equal(tbbt_sched_complete_external(s, 0), 2);       /* 0, then 1 */
        assert_false(tbbt_sched_live(s, 1));
        assert_int_equal(next(s), 2);
        assert_int_equal(tbbt_sched_complete(s, 2), 1);
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/*
 * starved()/behind(): requests that only external ones remain of do not keep the
 * reader waiting; an own request after them is the next one.
 */
static void test_external_starved(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int order = 0; order < 2; order++) {
        struct tbbt_sched *s = new_sched((enum tbbt_sched_order)order, 8);
        rec_on(&r, GETATTR, 1, 0, 10);
        admit_ext(s, &r, 1, 0, false);
        rec_on(&r, GETATTR, 2, 1, 10);
        admit_ext(s, &r, 1, 0, false);
        assert_true(tbbt_sched_starved(s) && tbbt_sched_behind(s));
        rec_on(&r, GETATTR, 3, 2, 10);
        admit(s, &r);
        assert_false(tbbt_sched_starved(s) || tbbt_sched_behind(s));
        assert_int_equal(next(s), 2);
        assert_true(tbbt_sched_starved(s) && tbbt_sched_behind(s));
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/*
 * Conservative order with a causal slack: the scan past a held-back own request meets
 * an external one; it holds back the own requests after it that the rule says it
 * causes, as a request taken there would (here: its client's next request).
 */
static void test_external_slack_scan(void **state)
{
    (void)state;
    struct tbbt_trace_rec r;
    tbbt_trace_rec_init(&r);
    for (int ext = 0; ext < 2; ext++) {
        struct tbbt_sched_opts o = {.order = TBBT_SCHED_CONSERVATIVE, .window = 8,
                                    .clones = 1, .causal_slack_ns = 100000};
        struct tbbt_sched *s = tbbt_sched_new(&o);
        rec_on(&r, GETATTR, 1, 0, 100);
        admit_full(s, &r, 0, 0, 0, true);       /* 0: client 0, reply at 100 us */
        rec_on(&r, GETATTR, 2, 150, 1000);
        admit_full(s, &r, 0, 0, 0, true);       /* 1: held by its client's reply */
        rec_on(&r, GETATTR, 3, 160, 170);
        if (ext)
            admit_ext(s, &r, 1, 0, false);      /* 2: client 1, on another rank */
        else
            admit_full(s, &r, 0, 1, 0, true);
        rec_on(&r, GETATTR, 4, 190, 500);
        admit_full(s, &r, 0, 1, 0, true);       /* 3: client 1, after 2's reply */
        rec_on(&r, GETATTR, 5, 195, 500);
        admit_full(s, &r, 0, 2, 0, true);       /* 4: client 2, caused by nothing */
        assert_int_equal(next(s), 0);
        if (!ext)
            assert_int_equal(next(s), 2);
        assert_int_equal(next(s), 4);
        assert_int_equal(next(s), NONE);        /* 1 waits for 0, 3 for 2 */
        assert_int_equal(tbbt_sched_external_stalls(s), ext);
        assert_false(tbbt_sched_external_blocked(s));   /* 1 waits for an own request */
        tbbt_sched_complete(s, 0);
        assert_int_equal(next(s), 1);
        assert_int_equal(next(s), NONE);        /* 3 waits for 2 */
        assert_int_equal(tbbt_sched_external_blocked(s), ext);  /* 3 is the next now */
        if (ext)
            tbbt_sched_complete_external(s, 2);
        else
            tbbt_sched_complete(s, 2);
        assert_int_equal(next(s), 3);
        tbbt_sched_free(s);
    }
    tbbt_trace_rec_fini(&r);
}

/* ------------------------------------------------------------------ ranks */

/*
 * A randomized run of `ranks` schedulers over one random request list, as tbbt-play
 * --distribute clients runs them: every rank admits every request, those of other ranks
 * as external; a rank starts what its scheduler hands out, completes it a random number
 * of steps later, and sends a completion notice to every other rank, which arrives a
 * random number of steps later (possibly before that rank admitted the request: then it
 * is admitted done).  Every request must complete on every rank (no deadlock), and the
 * requests' start and completion events, on one clock, must respect every dependency.
 */
struct mr_opts {
    enum tbbt_sched_order order;
    unsigned ranks, n;          /* n: requests, a multiple of clones */
    uint32_t window, clones;
    uint64_t slack_ns;
    unsigned max_out, cl_out;
    bool timed, locks, shared_clients;
};

struct mr_req {
    struct tbbt_trace_rec rec;
    struct tbbt_fsdep_sets sets;
    uint64_t reply_key;
    unsigned owner;
    uint32_t client;
    uint64_t start, end;        /* event ticks; 0: not yet */
};

struct mr_notice {
    uint64_t seq;
    unsigned dest, at;
};

struct mr_rank {
    struct tbbt_sched *s;
    uint64_t nadm;
    GArray *fly;                /* uint64_t seqs started here, not completed */
    GHashTable *early;          /* notices of requests not admitted yet */
};

/* Random records, each admitted clones times in a row (its clones: one owner). */
static void mr_gen(GRand *g, const struct mr_opts *o, struct mr_req *q)
{
    uint64_t call = 0;
    for (unsigned rec = 0; rec < o->n / o->clones; rec++) {
        call += (uint64_t)g_rand_int_range(g, 0, 4);
        uint64_t reply = call + (uint64_t)g_rand_int_range(g, 0, 13);
        uint64_t obj = 1 + (uint64_t)g_rand_int_range(g, 0, 6);
        int kind = g_rand_int_range(g, 0, 5);
        char name[8];
        g_snprintf(name, sizeof name, "n%d", g_rand_int_range(g, 0, 3));
        bool no_reply = g_rand_int_range(g, 0, 20) == 0;
        unsigned owner = (unsigned)g_rand_int_range(g, 0, (gint32)o->ranks);
        uint32_t client = o->shared_clients ? (uint32_t)g_rand_int_range(g, 0, 4)
                                            : owner * 3 + (uint32_t)g_rand_int_range(g, 0, 3);
        for (unsigned c = 0; c < o->clones; c++) {
            struct mr_req *x = &q[rec * o->clones + c];
            if (kind < 2)
                rec_on(&x->rec, GETATTR, obj, call, reply);
            else if (kind < 4)
                rec_on(&x->rec, WRITE, obj, call, reply);
            else
                create_on(&x->rec, 1, name, 100 + rec, call, reply);
            tbbt_fsdep_sets(&x->rec, &x->sets);
            x->reply_key = no_reply ? TBBT_SCHED_NO_REPLY : x->rec.reply_ns;
            x->owner = owner;
            x->client = client * o->clones + c;   /* as the player keys clients */
            x->start = x->end = 0;
        }
    }
}

static void mr_admit(const struct mr_opts *o, struct mr_req *q, struct mr_rank *rk, unsigned me)
{
    uint64_t seq = rk->nadm++;
    struct mr_req *x = &q[seq];
    bool ext = x->owner != me;
    struct tbbt_sched_req rq = {.clone = (uint32_t)(seq % o->clones),
                                .client = x->client, .call_ns = x->rec.call_ns,
                                .reply_ns = x->reply_key, .due_ns = x->rec.call_ns,
                                .sets = o->locks ? &x->sets : NULL, .external = ext};
    rq.done = ext && g_hash_table_remove(rk->early, GSIZE_TO_POINTER(seq + 1));
    assert_int_equal(tbbt_sched_admit(rk->s, &rq, NULL), seq);
}

/* Lock dependencies as the Table 4 record finds them with every holder live. */
struct mr_pairs {
    GArray *a;      /* uint64_t holder, waiter */
};

static bool mr_live(uint64_t seq, void *arg)
{
    (void)seq;
    (void)arg;
    return true;
}

static void mr_dep(uint64_t holder, uint64_t waiter, enum tbbt_fsdep_dep kind, void *arg)
{
    struct mr_pairs *p = arg;
    if (kind == TBBT_FSDEP_DEP_INFO)
        return;
    uint64_t hw[2] = {holder, waiter};
    g_array_append_vals(p->a, hw, 2);
}

/*
 * The lock dependencies (holder, waiter pairs) of o's order, and pred: n x n, pred[w * n
 * + h] if w depends on h through a chain of them.
 */
static GArray *mr_pairs(const struct mr_opts *o, const struct mr_req *q, bool *pred)
{
    struct mr_pairs p = {g_array_new(FALSE, FALSE, sizeof(uint64_t))};
    if (!o->locks)
        return p.a;
    struct tbbt_fsdep *t = tbbt_fsdep_new(mr_live, mr_dep, &p);
    enum tbbt_fsdep_scope scope = o->order == TBBT_SCHED_FSDEP || o->slack_ns
                                      ? TBBT_FSDEP_ALL : TBBT_FSDEP_NAMES;
    for (unsigned j = 0; j < o->n; j++)
        tbbt_fsdep_admit(t, j, j % o->clones, &q[j].sets, scope);
    tbbt_fsdep_free(t);
    for (guint i = 0; i < p.a->len; i += 2) {   /* pairs come by rising waiter */
        uint64_t h = g_array_index(p.a, uint64_t, i), w = g_array_index(p.a, uint64_t, i + 1);
        assert_true(h < w);
        pred[w * o->n + h] = true;
        for (unsigned k = 0; k < h; k++)
            pred[w * o->n + k] |= pred[h * o->n + k];
    }
    return p.a;
}

/*
 * When rank me starts own request j, every request j depends on (through a chain of
 * locks; by the rule without a slack) is completed in me's scheduler: none waits for a
 * notice still (the player binds the handles that notices bring before completing).
 */
static void mr_check_local(const struct mr_opts *o, const struct mr_req *q, const bool *pred,
                           const struct tbbt_sched *s, uint64_t j)
{
    for (uint64_t i = 0; i < j; i++) {
        bool dep = pred[j * o->n + i];
        if (o->order == TBBT_SCHED_CONSERVATIVE && !o->slack_ns && i % o->clones == j % o->clones)
            dep |= q[i].reply_key != TBBT_SCHED_NO_REPLY && q[i].reply_key <= q[j].rec.call_ns;
        assert_false(dep && tbbt_sched_live(s, i));
    }
}

/* Checks the events against the dependencies of o's order. */
static void mr_check(const struct mr_opts *o, const struct mr_req *q, const GArray *pairs)
{
    for (unsigned j = 0; j < o->n; j++)
        assert_true(q[j].start > 0 && q[j].end > q[j].start);
    for (guint i = 0; i < pairs->len; i += 2) {
        uint64_t h = g_array_index(pairs, uint64_t, i);
        uint64_t w = g_array_index(pairs, uint64_t, i + 1);
        assert_true(q[h].end < q[w].start);
    }
    if (o->order != TBBT_SCHED_CONSERVATIVE)
        return;
    for (unsigned j = 0; j < o->n; j++) {
        for (unsigned i = j % o->clones; i < j; i += o->clones) {
            uint64_t key = q[i].reply_key;
            if (key == TBBT_SCHED_NO_REPLY || key > q[j].rec.call_ns)
                continue;
            if (!o->slack_ns) {
                assert_true(q[i].end < q[j].start);     /* its reply came before the call */
                continue;
            }
            /* With a slack: no cause of j was in flight anywhere when j started. */
            bool cause = key + o->slack_ns <= q[j].rec.call_ns || q[i].client == q[j].client;
            bool in_flight = q[i].start < q[j].start && q[j].start < q[i].end;
            assert_false(cause && in_flight);
        }
    }
}

/*
 * Conservative order without locks, slack or time: the scheduler says the rank waits for
 * other ranks exactly when its next own request waits for an earlier live external
 * request's reply and for no own request's.
 */
static void mr_check_blocked(const struct mr_opts *o, const struct mr_req *q,
                             const struct mr_rank *rk, unsigned me)
{
    if (o->order != TBBT_SCHED_CONSERVATIVE || o->locks || o->slack_ns || o->timed ||
        (o->max_out && tbbt_sched_inflight(rk->s) >= o->max_out))
        return;
    bool blocked = false;
    for (uint64_t k = 0; k < o->clones; k++) {
        uint64_t j = k;
        while (j < rk->nadm && (q[j].owner != me || q[j].start))
            j += o->clones;
        bool by_ext = false, by_own = false;
        for (uint64_t i = k; j < rk->nadm && i < j; i += o->clones) {
            if (q[i].reply_key == TBBT_SCHED_NO_REPLY || q[i].reply_key > q[j].rec.call_ns)
                continue;
            if (q[i].owner == me)
                by_own |= q[i].start && !q[i].end;
            else
                by_ext |= tbbt_sched_live(rk->s, i);
        }
        blocked |= by_ext && !by_own;
    }
    assert_int_equal(tbbt_sched_external_blocked(rk->s), blocked);
}

static void multi_rank(const struct mr_opts *o, guint32 seed)
{
    GRand *g = g_rand_new_with_seed(seed);
    struct mr_req *q = g_new0(struct mr_req, o->n);
    for (unsigned i = 0; i < o->n; i++)
        tbbt_trace_rec_init(&q[i].rec);
    mr_gen(g, o, q);
    bool *pred = g_new0(bool, (gsize)o->n * o->n);
    GArray *pairs = mr_pairs(o, q, pred);
    struct mr_rank *rk = g_new0(struct mr_rank, o->ranks);
    struct tbbt_sched_opts so = {.order = o->order, .window = o->window, .clones = o->clones,
                                 .timed = o->timed, .causal_slack_ns = o->slack_ns,
                                 .max_outstanding = o->max_out,
                                 .client_outstanding = o->cl_out};
    for (unsigned r = 0; r < o->ranks; r++) {
        rk[r].s = tbbt_sched_new(&so);
        rk[r].fly = g_array_new(FALSE, FALSE, sizeof(uint64_t));
        rk[r].early = g_hash_table_new(g_direct_hash, g_direct_equal);
    }
    GArray *notices = g_array_new(FALSE, FALSE, sizeof(struct mr_notice));
    uint64_t tick = 0, stalls = 0;
    for (unsigned step = 0;; step++) {
        assert_true(step < 100000);     /* else a deadlock */
        bool all = true;
        for (unsigned r = 0; r < o->ranks; r++)
            all &= tbbt_sched_oldest(rk[r].s) == o->n;
        if (all)
            break;
        uint64_t now = (uint64_t)step * 1000;
        for (unsigned r = 0; r < o->ranks; r++) {
            int k = g_rand_int_range(g, 0, 5);
            while (k-- > 0 && rk[r].nadm < o->n && tbbt_sched_room(rk[r].s, 1))
                mr_admit(o, q, &rk[r], r);
            uint64_t due = UINT64_MAX, seq;
            while ((seq = tbbt_sched_next(rk[r].s, now, &due)) != NONE) {
                assert_int_equal(q[seq].owner, r);
                assert_int_equal(q[seq].start, 0);
                assert_true(!o->timed || q[seq].rec.call_ns <= now);
                mr_check_local(o, q, pred, rk[r].s, seq);
                q[seq].start = ++tick;
                g_array_append_val(rk[r].fly, seq);
            }
            assert_int_equal(tbbt_sched_inflight(rk[r].s), rk[r].fly->len);
            assert_true(!o->max_out || rk[r].fly->len <= o->max_out);
            mr_check_blocked(o, q, &rk[r], r);
        }
        for (unsigned r = 0; r < o->ranks; r++) {
            for (guint i = rk[r].fly->len; i-- > 0;) {
                if (g_rand_int_range(g, 0, 3))
                    continue;
                uint64_t seq = g_array_index(rk[r].fly, uint64_t, i);
                g_array_remove_index_fast(rk[r].fly, i);
                q[seq].end = ++tick;
                tbbt_sched_complete(rk[r].s, seq);
                for (unsigned d = 0; d < o->ranks; d++) {
                    struct mr_notice nt = {seq, d, step + (unsigned)g_rand_int_range(g, 0, 7)};
                    if (d != r)
                        g_array_append_val(notices, nt);
                }
            }
        }
        for (guint i = notices->len; i-- > 0;) {
            struct mr_notice nt = g_array_index(notices, struct mr_notice, i);
            if (nt.at > step)
                continue;
            g_array_remove_index_fast(notices, i);
            struct mr_rank *d = &rk[nt.dest];
            if (nt.seq < d->nadm)
                tbbt_sched_complete_external(d->s, nt.seq);
            else
                g_hash_table_add(d->early, GSIZE_TO_POINTER(nt.seq + 1));
        }
    }
    assert_int_equal(notices->len, 0);
    mr_check(o, q, pairs);
    g_array_free(pairs, TRUE);
    g_free(pred);
    for (unsigned r = 0; r < o->ranks; r++) {
        assert_int_equal(tbbt_sched_admitted(rk[r].s), o->n);
        assert_int_equal(g_hash_table_size(rk[r].early), 0);
        stalls += tbbt_sched_external_stalls(rk[r].s);
        tbbt_sched_free(rk[r].s);
        g_array_free(rk[r].fly, TRUE);
        g_hash_table_destroy(rk[r].early);
    }
    /* requests of several ranks on 6 objects, or after each other's replies: some wait */
    assert_true(o->ranks == 1 || o->window == o->clones || !o->locks || stalls > 0);
    g_array_free(notices, TRUE);
    g_free(rk);
    for (unsigned i = 0; i < o->n; i++)
        tbbt_trace_rec_fini(&q[i].rec);
    g_free(q);
    g_rand_free(g);
}

static void test_external_ranks(void **state)
{
    (void)state;
    static const uint32_t windows[] = {1, 4, 16, 64};
    for (guint32 seed = 1; seed <= 128; seed++) {
        GRand *g = g_rand_new_with_seed(seed * 7919);
        for (unsigned ranks = 2; ranks <= 4; ranks += 2) {
            for (int pol = 0; pol < 3; pol++) {
                uint32_t clones = g_rand_int_range(g, 0, 4) ? 1 : 2 + (seed & 1);
                struct mr_opts o = {
                    .order = pol ? TBBT_SCHED_CONSERVATIVE : TBBT_SCHED_FSDEP,
                    .ranks = ranks, .n = 300, .clones = clones,
                    .window = windows[g_rand_int_range(g, 0, 4)] * clones,
                    .slack_ns = pol == 2 ? 5000 : 0,
                    .max_out = g_rand_boolean(g) ? 0 : 2,
                    .cl_out = g_rand_boolean(g) ? 0 : 1,
                    .timed = g_rand_int_range(g, 0, 4) == 0,
                    .locks = g_rand_int_range(g, 0, 4) != 0,
                    .shared_clients = g_rand_int_range(g, 0, 4) == 0,
                };
                multi_rank(&o, seed);
            }
        }
        g_rand_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_table3_conservative),
        cmocka_unit_test(test_table3_fsdep),
        cmocka_unit_test(test_table3_seq1),
        cmocka_unit_test(test_conservative_overlap),
        cmocka_unit_test(test_conservative_in_order),
        cmocka_unit_test(test_causal_slack),
        cmocka_unit_test(test_conservative_entries),
        cmocka_unit_test(test_conflicts_reported),
        cmocka_unit_test(test_clones),
        cmocka_unit_test(test_client_limit),
        cmocka_unit_test(test_max_outstanding),
        cmocka_unit_test(test_timed),
        cmocka_unit_test(test_fsdep_due_order),
        cmocka_unit_test(test_starved),
        cmocka_unit_test(test_figure6_window),
        cmocka_unit_test(test_external_holds),
        cmocka_unit_test(test_external_entry_lock),
        cmocka_unit_test(test_external_free),
        cmocka_unit_test(test_external_limits),
        cmocka_unit_test(test_external_window),
        cmocka_unit_test(test_external_skip),
        cmocka_unit_test(test_external_notice_order),
        cmocka_unit_test(test_external_starved),
        cmocka_unit_test(test_external_slack_scan),
        cmocka_unit_test(test_external_ranks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
