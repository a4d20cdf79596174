/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the NFSv4 lost-state correction (src/extract/correct4.c): which
 * stateids a COMPOUND uses without the trace having given them, and which of those a
 * corrective OPEN by handle repairs; a lost RECLAIM_COMPLETE.  Records are built in memory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "extract/correct4.h"
#include "proto/nfs4.h"
#include "trace/trace.h"

#define SID_A 0xa1
#define SID_B 0xb2

struct t4 {
    struct tbbt__corr4 *c;
    struct tbbt_trace_rec rec;
    struct tbbt__corr4_fix fix[TBBT__CORR4_FIX_MAX];
    const char *why[TBBT__CORR4_FIX_MAX];
    unsigned n_why;
};

static int setup(void **state)
{
    struct t4 *t = calloc(1, sizeof(*t));
    t->c = tbbt__corr4_new();
    tbbt_trace_rec_init(&t->rec);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct t4 *t = *state;
    tbbt_trace_rec_fini(&t->rec);
    tbbt__corr4_free(t->c);
    free(t);
    return 0;
}

static void stateid(uint8_t *dst, uint8_t tag, uint32_t seqid)
{
    memset(dst, 0, TBBT_OP4_ID_LEN);
    dst[3] = (uint8_t)seqid;
    memset(dst + 4, tag, NFS4_OTHER_SIZE);
}

/* A fresh COMPOUND of minor version minor, replied; 4.1+: SEQUENCE on session 7. */
static void compound(struct t4 *t, uint32_t minor)
{
    tbbt_trace_rec_clear(&t->rec);
    t->rec.prog = TBBT_PROG_NFS4;
    t->rec.proc = 1;
    t->rec.flags = TBBT_RF_REPLY | TBBT_RF_STATUS;
    TBBT_SET(&t->rec, TBBT_F_OPS);
    TBBT_SET(&t->rec, TBBT_F_MINOR);
    t->rec.minor = minor;
    if (minor) {
        struct tbbt_op4 *o = tbbt_trace_rec_add_op4(&t->rec);
        o->op = OP_SEQUENCE;
        memset(o->session, 7, TBBT_OP4_ID_LEN);
        o->slot = 5;
        o->has = 1u << TBBT_O4_SESSION | 1u << TBBT_O4_SLOT | 1u << TBBT_O4_STATUS;
    }
}

static struct tbbt_op4 *add(struct t4 *t, uint32_t op, uint64_t has)
{
    struct tbbt_op4 *o = tbbt_trace_rec_add_op4(&t->rec);
    o->op = op;
    o->has = has | (uint64_t)1 << TBBT_O4_STATUS;
    o->status = NFS4_OK;
    return o;
}

static void putfh(struct t4 *t, uint32_t fh)
{
    add(t, OP_PUTFH, 1u << TBBT_O4_FH)->fh = fh;
}

/* A fresh COMPOUND (as compound()) whose current filehandle is fh. */
static void on_file(struct t4 *t, uint32_t minor, uint32_t fh)
{
    compound(t, minor);
    putfh(t, fh);
}

/* An operation using stateid tag (READ, WRITE, CLOSE, LOCKU ...). */
static struct tbbt_op4 *use(struct t4 *t, uint32_t op, uint8_t tag)
{
    struct tbbt_op4 *o = add(t, op, 1u << TBBT_O4_STATEID);
    stateid(o->stateid, tag, 1);
    return o;
}

static unsigned step(struct t4 *t)
{
    return tbbt__corr4_step(t->c, &t->rec, t->fix, TBBT__CORR4_FIX_MAX, t->why, &t->n_why);
}

/* The client id of session 7, from a CREATE_SESSION. */
static void create_session(struct t4 *t)
{
    compound(t, 0);
    t->rec.minor = 1;
    struct tbbt_op4 *o = add(t, OP_CREATE_SESSION, 1u << TBBT_O4_CLIENTID | 1u << TBBT_O4_SESSION);
    o->clientid = 42;
    memset(o->session, 7, TBBT_OP4_ID_LEN);
    assert_int_equal(step(t), 0);
}

/* Session 7 of client 42, its RECLAIM_COMPLETE done. */
static void session(struct t4 *t)
{
    create_session(t);
    compound(t, 1);
    add(t, OP_RECLAIM_COMPLETE, 1u << TBBT_O4_HOW);
    assert_int_equal(step(t), 0);
}

/* A 4.1 client that changes state without the RECLAIM_COMPLETE the capture lost: one
 * corrective RECLAIM_COMPLETE before its first such record, and only one. */
static void test_lost_reclaim_complete(void **state)
{
    struct t4 *t = *state;
    create_session(t);
    on_file(t, 1, 1);
    add(t, OP_GETATTR, 0);          /* reads need none */
    assert_int_equal(step(t), 0);
    on_file(t, 1, 1);
    add(t, OP_REMOVE, 1u << TBBT_O4_NAME);
    assert_int_equal(step(t), 1);
    assert_int_equal(t->fix[0].kind, TBBT__C4_FIX_RECLAIM);
    assert_int_equal(t->fix[0].slot, 5);
    struct tbbt_trace_rec out;
    tbbt_trace_rec_init(&out);
    tbbt__corr4_fixup(&t->fix[0], 1, &out);
    assert_int_equal(out.n_ops, 2);
    assert_int_equal(out.ops[0].op, OP_SEQUENCE);
    assert_int_equal(out.ops[1].op, OP_RECLAIM_COMPLETE);
    tbbt_trace_rec_fini(&out);
    on_file(t, 1, 1);
    add(t, OP_REMOVE, 1u << TBBT_O4_NAME);
    assert_int_equal(step(t), 0);
}

/* A 4.1 READ then a WRITE of a stateid no OPEN gave: a corrective OPEN for READ, then an
 * upgrade to READ and WRITE; the CLOSE after them needs nothing more. */
static void test_lost_open_41(void **state)
{
    struct t4 *t = *state;
    session(t);
    on_file(t, 1, 3);
    use(t, OP_READ, SID_A);
    assert_int_equal(step(t), 1);
    assert_int_equal(t->n_why, 0);
    assert_int_equal(t->fix[0].fh, 3);
    assert_int_equal(t->fix[0].clientid, 42);
    assert_int_equal(t->fix[0].share, OPEN4_SHARE_ACCESS_READ);
    assert_int_equal(t->fix[0].slot, 5);
    assert_memory_equal(t->fix[0].stateid, t->rec.ops[2].stateid, TBBT_OP4_ID_LEN);
    on_file(t, 1, 3);
    use(t, OP_WRITE, SID_A);
    assert_int_equal(step(t), 1);
    assert_int_equal(t->fix[0].share, OPEN4_SHARE_ACCESS_BOTH);
    on_file(t, 1, 3);
    use(t, OP_CLOSE, SID_A);
    assert_int_equal(step(t), 0);
}

/* A stateid an OPEN in the trace gave, used in the same COMPOUND and later: nothing. */
static void test_known_open(void **state)
{
    struct t4 *t = *state;
    session(t);
    on_file(t, 1, 1);
    struct tbbt_op4 *o = add(t, OP_OPEN, 1u << TBBT_O4_NEW_STATEID | 1u << TBBT_O4_NAME);
    stateid(o->new_stateid, SID_B, 1);
    add(t, OP_GETFH, 1u << TBBT_O4_FH)->fh = 9;
    use(t, OP_WRITE, SID_B);
    assert_int_equal(step(t), 0);
    on_file(t, 1, 9);
    use(t, OP_READ, SID_B);
    assert_int_equal(step(t), 0);
    assert_int_equal(t->n_why, 0);
}

/* The current handle after OPEN by name comes from the GETFH after it. */
static void test_handle_from_getfh(void **state)
{
    struct t4 *t = *state;
    session(t);
    on_file(t, 1, 1);
    add(t, OP_LOOKUP, 1u << TBBT_O4_NAME);
    use(t, OP_SETATTR, SID_A)->sattr.mask = TBBT_SA_SIZE;
    add(t, OP_GETFH, 1u << TBBT_O4_FH)->fh = 11;
    assert_int_equal(step(t), 1);
    assert_int_equal(t->fix[0].fh, 11);
    assert_int_equal(t->fix[0].share, OPEN4_SHARE_ACCESS_BOTH);
}

/* What no corrective OPEN can give: 4.0, a lost LOCK, an unknown handle or client id;
 * special stateids and failed operations are no loss at all. */
static void test_not_repaired(void **state)
{
    struct t4 *t = *state;
    compound(t, 1);                 /* no CREATE_SESSION seen: client id unknown */
    putfh(t, 3);
    use(t, OP_READ, SID_A);
    assert_int_equal(step(t), 0);
    assert_int_equal(t->n_why, 1);
    assert_string_equal(t->why[0], "lost open (client id unknown)");
    session(t);
    compound(t, 1);
    add(t, OP_PUTROOTFH, 0);
    add(t, OP_LOOKUP, 1u << TBBT_O4_NAME);
    use(t, OP_READ, SID_A);
    assert_int_equal(step(t), 0);
    assert_string_equal(t->why[0], "lost open (handle unknown)");
    on_file(t, 1, 3);
    use(t, OP_LOCKU, SID_B);
    assert_int_equal(step(t), 0);
    assert_string_equal(t->why[0], "lost lock");
    on_file(t, 0, 3);
    use(t, OP_CLOSE, SID_B);
    assert_int_equal(step(t), 0);
    assert_string_equal(t->why[0], "lost open (4.0)");
    on_file(t, 1, 3);
    use(t, OP_READ, 0);             /* the anonymous stateid */
    use(t, OP_READ, 0xff);          /* READ bypass */
    use(t, OP_READ, SID_B)->status = NFS4ERR_BAD_STATEID;
    assert_int_equal(step(t), 0);
    assert_int_equal(t->n_why, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_lost_open_41, setup, teardown),
        cmocka_unit_test_setup_teardown(test_known_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_handle_from_getfh, setup, teardown),
        cmocka_unit_test_setup_teardown(test_not_repaired, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_reclaim_complete, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
