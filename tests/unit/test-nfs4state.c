/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the NFSv4 replay core (src/player/nfs4state.c, nfs4build.c,
 * nfs4absorb.c; docs/nfsv4.md "Replay core"):
 *
 *  - 4.0 owner seqids (RFC 7530 9.1.7): a traced seqid is sent shifted by what the live
 *    server's seqid moved differently, and the errors that do not bump are the RFC's;
 *  - the stateid map: a learned stateid's seqid shifts with the traced one, 4.1's
 *    seqid 0 stays 0, special stateids pass as traced, an unknown one fails;
 *  - the handle map, and the session slot table (RFC 8881 2.10.6: lowest free slot,
 *    sequence ids from 1, advanced only when SEQUENCE succeeded, highest slot in use);
 *  - a traced SEQUENCE+PUTFH+OPEN+GETFH+GETATTR record rebuilt live, encoded with
 *    xdr_COMPOUND4args and decoded back, then its live reply encoded and decoded with
 *    tbbt_nfs4_xdr_res and absorbed: the GETFH handle and the OPEN stateid learned, the
 *    slot advanced, no mismatch; and a reply that differs counted as mismatches;
 *  - records that cannot be sent say why (unknown handle, unsupported operation);
 *  - a delegation granted anyway is reported by absorb with its file's live handle and
 *    given back by DELEGRETURN on the record's session;
 *  - BADSESSION: the verdict, CREATE_SESSION again with the live clientid and sequence
 *    id, the traced session mapped to the new one; lease renewals (SEQUENCE, RENEW).
 *  - the values format 1.3 keeps (EXCHANGE_ID's and CREATE_SESSION's flags, filtered;
 *    the fore channel, slots capped; READDIR's dircount; VERIFY's values; SETCLIENTID's
 *    callback program) sent, and the made-up ones where a record lacks them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "player/nfs4build.h"
#include "player/nfs4state.h"

#define BUF 8192

static const uint8_t T_SESS[16] = { 4, 0, 0, 0, 0xe, 0x4c, 8, 0x6b, 1 };
static const uint8_t L_SESS[16] = { 0xaa, 0xbb, 0xcc, 0xdd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
static const uint8_t L_FH[] = { 0x43, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef };
static const uint8_t L_NEWFH[] = { 0x43, 0, 0, 1, 0xfe, 0xed, 0xfa, 0xce, 0x42 };
#define T_CLIENTID 7712497984885227524ull
#define L_CLIENTID 0x1122334455667788ull

/* 16 stateid bytes: seqid big-endian and other. */
static void sid_bytes(uint8_t *dst, uint32_t seqid, uint8_t other_fill)
{
    dst[0] = (uint8_t)(seqid >> 24);
    dst[1] = (uint8_t)(seqid >> 16);
    dst[2] = (uint8_t)(seqid >> 8);
    dst[3] = (uint8_t)seqid;
    memset(dst + 4, other_fill, 12);
}

static void test_owner_seqid(void **unused)
{
    struct tbbt_nfs4_state *st = tbbt_nfs4_state_new();
    struct tbbt_str name = { "open-owner-0", 12 };
    struct tbbt_nfs4_owner *w = tbbt_nfs4_owner_get(st, 1, &name, 5);

    (void)unused;
    assert_int_equal(tbbt_nfs4_owner_seqid(w, 5), 5);
    assert_ptr_equal(tbbt_nfs4_owner_get(st, 1, &name, 99), w);      /* same owner */
    assert_ptr_not_equal(tbbt_nfs4_owner_get(st, 2, &name, 5), w);   /* other client */
    w->live_next += 2;              /* the live server moved twice ... */
    w->traced_next += 1;            /* ... the traced one once */
    assert_int_equal(tbbt_nfs4_owner_seqid(w, 6), 7);
    assert_int_equal(tbbt_nfs4_owner_seqid(w, 5), 6);     /* a retransmission */
    /* traced 9 after 6: the calls with 7 and 8 were not captured; the live server
     * expects its next, 7 */
    assert_int_equal(tbbt_nfs4_owner_seqid(w, 9), 7);
    assert_int_equal(w->traced_next, 9);
    assert_false(tbbt_nfs4_seqid_bumps(NFS4ERR_BAD_SEQID));
    assert_false(tbbt_nfs4_seqid_bumps(NFS4ERR_STALE_CLIENTID));
    assert_false(tbbt_nfs4_seqid_bumps(NFS4ERR_NOFILEHANDLE));
    assert_false(tbbt_nfs4_seqid_bumps(NFS4ERR_MOVED));
    assert_true(tbbt_nfs4_seqid_bumps(NFS4_OK));
    assert_true(tbbt_nfs4_seqid_bumps(NFS4ERR_DENIED));
    tbbt_nfs4_state_free(st);
}

static void test_stateid_map(void **unused)
{
    struct tbbt_nfs4_state *st = tbbt_nfs4_state_new();
    uint8_t t[16], zero[16] = { 0 }, ones[16];
    stateid4 live = { .seqid = 3 }, out;

    (void)unused;
    memset(live.other, 0x5a, sizeof(live.other));
    sid_bytes(t, 1, 0x11);
    assert_int_equal(tbbt_nfs4_sid_live(st, t, &out), -1);
    tbbt_nfs4_sid_learn(st, t, &live, NULL);
    assert_int_equal(tbbt_nfs4_sid_live(st, t, &out), 0);
    assert_int_equal(out.seqid, 3);
    assert_memory_equal(out.other, live.other, 12);
    sid_bytes(t, 2, 0x11);
    assert_int_equal(tbbt_nfs4_sid_live(st, t, &out), 0);
    assert_int_equal(out.seqid, 4);
    sid_bytes(t, 0, 0x11);          /* 4.1: "the current seqid" */
    assert_int_equal(tbbt_nfs4_sid_live(st, t, &out), 0);
    assert_int_equal(out.seqid, 0);
    assert_int_equal(tbbt_nfs4_sid_live(st, zero, &out), 0);    /* anonymous */
    assert_int_equal(out.seqid, 0);
    sid_bytes(ones, 0xffffffffu, 0xff);                         /* READ bypass */
    assert_int_equal(tbbt_nfs4_sid_live(st, ones, &out), 0);
    assert_int_equal(out.seqid, 0xffffffffu);
    assert_int_equal((uint8_t)out.other[0], 0xff);
    tbbt_nfs4_state_free(st);
}

static void test_handles_and_slots(void **unused)
{
    struct tbbt_nfs4_state *st = tbbt_nfs4_state_new();
    struct tbbt_nfs4_session *s;
    uint32_t slot, seq, hi;

    (void)unused;
    assert_null(tbbt_nfs4_fh_live(st, 7));
    tbbt_nfs4_fh_learn(st, 7, L_FH, sizeof(L_FH));
    assert_int_equal(tbbt_nfs4_fh_live(st, 7)->len, sizeof(L_FH));
    assert_memory_equal(tbbt_nfs4_fh_live(st, 7)->data, L_FH, sizeof(L_FH));
    assert_null(tbbt_nfs4_fh_live(st, 0));

    s = tbbt_nfs4_session_add(st, T_SESS, L_SESS, 2, T_CLIENTID);
    assert_ptr_equal(tbbt_nfs4_session_get(st, T_SESS), s);
    assert_int_equal(tbbt_nfs4_slot_take(s, &slot, &seq, &hi), 0);
    assert_int_equal(slot, 0);
    assert_int_equal(seq, 1);
    assert_int_equal(hi, 0);
    assert_int_equal(tbbt_nfs4_slot_take(s, &slot, &seq, &hi), 0);
    assert_int_equal(slot, 1);
    assert_int_equal(hi, 1);
    assert_int_equal(tbbt_nfs4_slot_take(s, &slot, &seq, &hi), -1);    /* all busy */
    tbbt_nfs4_slot_release(s, 0, true);
    tbbt_nfs4_slot_release(s, 1, false);
    assert_int_equal(tbbt_nfs4_slot_take(s, &slot, &seq, &hi), 0);
    assert_int_equal(slot, 0);
    assert_int_equal(seq, 2);
    tbbt_nfs4_slot_release(s, 0, false);
    assert_int_equal(tbbt_nfs4_session_add(st, T_SESS, L_SESS, 1000, 1)->nslots,
                     TBBT_NFS4_SLOTS_MAX);
    tbbt_nfs4_session_forget(st, T_SESS);
    assert_null(tbbt_nfs4_session_get(st, T_SESS));
    tbbt_nfs4_state_free(st);
}

/* ---- a whole record ---- */

/* SEQUENCE, PUTFH 0, OPEN "f1" (create UNCHECKED4 mode 0644), GETFH -> 4, GETATTR. */
static void open_record(struct tbbt_trace_rec *rec)
{
    struct tbbt_op4 *o;

    tbbt_trace_rec_init(rec);
    rec->prog = TBBT_PROG_NFS4;
    rec->proc = 1;
    rec->minor = 1;
    rec->flags = TBBT_RF_REPLY | TBBT_RF_STATUS | TBBT_RF_TCP;
    TBBT_SET(rec, TBBT_F_MINOR);
    TBBT_SET(rec, TBBT_F_OPS);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_SEQUENCE;
    memcpy(o->session, T_SESS, 16);
    o->slot = 7;
    TBBT_O4_SET(o, SESSION);
    TBBT_O4_SET(o, SLOT);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_PUTFH;
    o->fh = 0;
    TBBT_O4_SET(o, FH);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_OPEN;
    tbbt_trace_rec_set_str(rec, &o->name, "f1", 2);
    tbbt_trace_rec_set_str(rec, &o->owner, "open-owner-0", 12);
    o->clientid = T_CLIENTID;
    o->share = OPEN4_SHARE_ACCESS_BOTH;
    o->how = OPEN4_CREATE | UNCHECKED4 << 4 | CLAIM_NULL << 8;
    o->sattr.mask = TBBT_SA_MODE;
    o->sattr.mode = 0644;
    sid_bytes(o->new_stateid, 1, 0x33);
    o->has |= 1u << TBBT_O4_NAME | 1u << TBBT_O4_OWNER | 1u << TBBT_O4_CLIENTID |
              1u << TBBT_O4_SHARE | 1u << TBBT_O4_HOW | 1u << TBBT_O4_SATTR |
              1u << TBBT_O4_SEQID | 1u << TBBT_O4_NEW_STATEID;
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_GETFH;
    o->fh = 4;
    TBBT_O4_SET(o, FH);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_GETATTR;
    o->bitmap = (uint64_t)(1u << (FATTR4_MODE - 32)) << 32 | 1u << FATTR4_SIZE;
    TBBT_O4_SET(o, BITMAP);
    for (uint32_t i = 0; i < rec->n_ops; i++)
        TBBT_O4_SET(&rec->ops[i], STATUS);      /* status 0: NFS4_OK */
}

static struct tbbt_nfs4_state *live_state(void)
{
    struct tbbt_nfs4_state *st = tbbt_nfs4_state_new();

    tbbt_nfs4_client_get(st, T_CLIENTID, true)->live = L_CLIENTID;
    tbbt_nfs4_session_add(st, T_SESS, L_SESS, 4, T_CLIENTID);
    tbbt_nfs4_fh_learn(st, 0, L_FH, sizeof(L_FH));
    return st;
}

static u_int encode(xdrproc_t proc, void *obj, char *buf)
{
    XDR x;
    u_int n;

    xdrmem_create(&x, buf, BUF, XDR_ENCODE);
    assert_true(proc(&x, obj));
    n = xdr_getpos(&x);
    xdr_destroy(&x);
    return n;
}

static void decode(xdrproc_t proc, void *obj, char *buf, u_int n)
{
    XDR x;

    xdrmem_create(&x, buf, n, XDR_DECODE);
    assert_true(proc(&x, obj));
    assert_int_equal(xdr_getpos(&x), n);
    xdr_destroy(&x);
}

static void check_args(const COMPOUND4args *a)
{
    const nfs_argop4 *v = a->argarray.argarray_val;
    const OPEN4args *op;

    assert_int_equal(a->minorversion, 1);
    assert_int_equal(a->argarray.argarray_len, 5);
    assert_memory_equal(v[0].nfs_argop4_u.opsequence.sa_sessionid, L_SESS, 16);
    assert_int_equal(v[0].nfs_argop4_u.opsequence.sa_sequenceid, 1);
    assert_int_equal(v[0].nfs_argop4_u.opsequence.sa_slotid, 0);
    assert_int_equal(v[1].nfs_argop4_u.opputfh.object.nfs_fh4_len, sizeof(L_FH));
    assert_memory_equal(v[1].nfs_argop4_u.opputfh.object.nfs_fh4_val, L_FH, sizeof(L_FH));
    op = &v[2].nfs_argop4_u.opopen;
    assert_int_equal(op->owner.clientid, L_CLIENTID);
    assert_int_equal(op->owner.owner.owner_len, 12);
    assert_memory_equal(op->owner.owner.owner_val, "open-owner-0", 12);
    assert_int_equal(op->openhow.opentype, OPEN4_CREATE);
    assert_int_equal(op->openhow.openflag4_u.how.mode, UNCHECKED4);
    const fattr4 *f = &op->openhow.openflag4_u.how.createhow4_u.createattrs;
    assert_int_equal(f->attrmask.bitmap4_len, 2);
    assert_int_equal(f->attrmask.bitmap4_val[1], 1u << (FATTR4_MODE - 32));
    assert_int_equal(f->attr_vals.attrlist4_len, 4);
    assert_memory_equal(f->attr_vals.attrlist4_val, "\0\0\001\244", 4);     /* 0644 */
    assert_int_equal(op->claim.claim, CLAIM_NULL);
    assert_memory_equal(op->claim.open_claim4_u.file.utf8string_val, "f1", 2);
    assert_int_equal(v[3].argop, OP_GETFH);
    assert_int_equal(v[4].nfs_argop4_u.opgetattr.attr_request.bitmap4_val[0],
                     1u << FATTR4_SIZE);
}

/* The live reply: every operation OK, OPEN's stateid, GETFH's handle. */
static void live_reply(COMPOUND4res *res, nfs_resop4 *r, const COMPOUND4args *a)
{
    memset(res, 0, sizeof(*res));
    memset(r, 0, 5 * sizeof(*r));
    for (int i = 0; i < 5; i++)
        r[i].resop = a->argarray.argarray_val[i].argop;
    r[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4.sr_sequenceid = 1;
    r[2].nfs_resop4_u.opopen.OPEN4res_u.resok4.stateid.seqid = 1;
    memset(r[2].nfs_resop4_u.opopen.OPEN4res_u.resok4.stateid.other, 0x77, 12);
    r[3].nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object.nfs_fh4_len = sizeof(L_NEWFH);
    r[3].nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object.nfs_fh4_val = (char *)L_NEWFH;
    res->resarray.resarray_len = 5;
    res->resarray.resarray_val = r;
}

static void test_rebuild_roundtrip(void **unused)
{
    struct tbbt_nfs4_state *st = live_state();
    struct tbbt_trace_rec rec;
    struct tbbt_nfs4_call call;
    struct tbbt_nfs4_outcome out;
    COMPOUND4args back;
    COMPOUND4res res, res_back;
    nfs_resop4 r[5];
    char buf[BUF];
    u_int n;
    stateid4 sid;

    (void)unused;
    open_record(&rec);
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    n = encode((xdrproc_t)xdr_COMPOUND4args, &call.args, buf);
    memset(&back, 0, sizeof(back));
    decode((xdrproc_t)xdr_COMPOUND4args, &back, buf, n);
    check_args(&back);
    xdr_free((xdrproc_t)xdr_COMPOUND4args, (char *)&back);
    assert_true(tbbt_nfs4_session_get(st, T_SESS)->busy[0]);

    live_reply(&res, r, &call.args);
    n = encode((xdrproc_t)tbbt_nfs4_xdr_res, &res, buf);
    memset(&res_back, 0, sizeof(res_back));
    decode((xdrproc_t)tbbt_nfs4_xdr_res, &res_back, buf, n);
    tbbt_nfs4_absorb(st, &rec, &call, &res_back, &out);
    xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&res_back);
    assert_int_equal(out.verdict, TBBT_NFS4_DONE);
    assert_int_equal(out.n_mismatch, 0);
    assert_false(tbbt_nfs4_session_get(st, T_SESS)->busy[0]);
    assert_int_equal(tbbt_nfs4_session_get(st, T_SESS)->seq[0], 2);
    assert_non_null(tbbt_nfs4_fh_live(st, 4));
    assert_memory_equal(tbbt_nfs4_fh_live(st, 4)->data, L_NEWFH, sizeof(L_NEWFH));
    assert_int_equal(tbbt_nfs4_sid_live(st, rec.ops[2].new_stateid, &sid), 0);
    assert_int_equal((uint8_t)sid.other[0], 0x77);
    tbbt_nfs4_call_fini(&call);

    /* The same record again, the live server failing OPEN: two mismatches. */
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    assert_int_equal(call.args.argarray.argarray_val[0].nfs_argop4_u.opsequence.sa_sequenceid,
                     2);
    live_reply(&res, r, &call.args);
    r[2].nfs_resop4_u.opopen.status = NFS4ERR_ACCESS;
    res.resarray.resarray_len = 3;
    tbbt_nfs4_absorb(st, &rec, &call, &res, &out);
    assert_int_equal(out.verdict, TBBT_NFS4_DONE);
    assert_int_equal(out.n_mismatch, 3);        /* OPEN, and GETFH and GETATTR not done */
    assert_int_equal(out.mismatch[0].op, OP_OPEN);
    assert_int_equal(out.mismatch[0].traced, NFS4_OK);
    assert_int_equal(out.mismatch[0].live, NFS4ERR_ACCESS);
    assert_int_equal(out.mismatch[1].live, TBBT_NFS4_NOSTATUS);
    tbbt_nfs4_call_fini(&call);

    /* NFS4ERR_DELAY: retry, the slot advanced, nothing compared. */
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    live_reply(&res, r, &call.args);
    r[2].nfs_resop4_u.opopen.status = NFS4ERR_DELAY;
    res.resarray.resarray_len = 3;
    tbbt_nfs4_absorb(st, &rec, &call, &res, &out);
    assert_int_equal(out.verdict, TBBT_NFS4_RETRY);
    assert_int_equal(tbbt_nfs4_session_get(st, T_SESS)->seq[0], 4);
    tbbt_nfs4_call_fini(&call);
    tbbt_trace_rec_fini(&rec);
    tbbt_nfs4_state_free(st);
}

/* A delegation granted anyway (the player asks for none): absorb reports it with the
 * handle of the GETFH after the OPEN, and DELEGRETURN gives it back on the session. */
static void test_delegation_returned(void **unused)
{
    struct tbbt_nfs4_state *st = live_state();
    struct tbbt_trace_rec rec;
    struct tbbt_nfs4_call call, ret;
    struct tbbt_nfs4_outcome out;
    COMPOUND4res res;
    nfs_resop4 r[5];

    (void)unused;
    open_record(&rec);
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    live_reply(&res, r, &call.args);
    open_delegation4 *d = &r[2].nfs_resop4_u.opopen.OPEN4res_u.resok4.delegation;
    d->delegation_type = OPEN_DELEGATE_READ;
    d->open_delegation4_u.read.stateid.seqid = 1;
    memset(d->open_delegation4_u.read.stateid.other, 0x5d, 12);
    tbbt_nfs4_absorb(st, &rec, &call, &res, &out);
    assert_int_equal(out.n_mismatch, 0);
    assert_int_equal(out.n_deleg, 1);
    assert_true(out.deleg[0].fh_known);
    assert_int_equal(out.deleg[0].fh.len, sizeof(L_NEWFH));
    assert_memory_equal(out.deleg[0].fh.data, L_NEWFH, sizeof(L_NEWFH));
    assert_int_equal(tbbt_nfs4_build_delegreturn(st, &call, &out.deleg[0], &ret), 0);
    const nfs_argop4 *v = ret.args.argarray.argarray_val;
    assert_int_equal(ret.args.argarray.argarray_len, 3);
    assert_int_equal(v[0].argop, OP_SEQUENCE);
    assert_memory_equal(v[0].nfs_argop4_u.opsequence.sa_sessionid, L_SESS, 16);
    assert_int_equal(v[0].nfs_argop4_u.opsequence.sa_sequenceid, 2);  /* the slot moved on */
    assert_int_equal(v[1].argop, OP_PUTFH);
    assert_memory_equal(v[1].nfs_argop4_u.opputfh.object.nfs_fh4_val, L_NEWFH,
                        sizeof(L_NEWFH));
    assert_int_equal(v[2].argop, OP_DELEGRETURN);
    assert_memory_equal(v[2].nfs_argop4_u.opdelegreturn.deleg_stateid.other,
                        d->open_delegation4_u.read.stateid.other, 12);
    tbbt_nfs4_call_fini(&ret);          /* frees its slot unanswered */
    tbbt_nfs4_call_fini(&call);
    /* no handle after the OPEN: nothing to return it with */
    out.deleg[0].fh_known = false;
    assert_int_equal(tbbt_nfs4_build_delegreturn(st, &call, &out.deleg[0], &ret), -1);
    tbbt_nfs4_call_fini(&ret);
    tbbt_trace_rec_fini(&rec);
    tbbt_nfs4_state_free(st);
}

static void test_unsendable(void **unused)
{
    struct tbbt_nfs4_state *st = live_state();
    struct tbbt_trace_rec rec;
    struct tbbt_nfs4_call call;

    (void)unused;
    open_record(&rec);
    rec.ops[1].fh = 9;                          /* never learned */
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), -1);
    assert_string_equal(call.why, "unknown handle");
    assert_false(tbbt_nfs4_session_get(st, T_SESS)->busy[0]);     /* slot given back */
    tbbt_nfs4_call_fini(&call);
    rec.ops[1].fh = 0;
    rec.ops[2].op = OP_LAYOUTGET;
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), -1);
    assert_string_equal(call.why, "unsupported operation");
    tbbt_nfs4_call_fini(&call);
    tbbt_trace_rec_fini(&rec);
    tbbt_nfs4_state_free(st);
}

/* 4.0: OPEN answered BAD_SEQID live (OK traced) leaves the live seqid, so the next
 * traced seqid is sent one lower. */
static void test_v40_seqid_regen(void **unused)
{
    struct tbbt_nfs4_state *st = live_state();
    struct tbbt_trace_rec rec;
    struct tbbt_nfs4_call call;
    struct tbbt_nfs4_outcome out;
    COMPOUND4res res;
    nfs_resop4 r[5];

    (void)unused;
    open_record(&rec);
    rec.minor = 0;
    memmove(&rec.ops[0], &rec.ops[1], 4 * sizeof(rec.ops[0]));   /* no SEQUENCE */
    rec.n_ops = 4;
    rec.ops[1].seqid = 10;
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    assert_int_equal(call.ops[1].nfs_argop4_u.opopen.seqid, 10);
    memset(&res, 0, sizeof(res));
    memset(r, 0, sizeof(r));
    r[0].resop = OP_PUTFH;
    r[1].resop = OP_OPEN;
    r[1].nfs_resop4_u.opopen.status = NFS4ERR_BAD_SEQID;
    res.resarray.resarray_len = 2;
    res.resarray.resarray_val = r;
    tbbt_nfs4_absorb(st, &rec, &call, &res, &out);
    assert_int_equal(out.n_mismatch, 3);
    tbbt_nfs4_call_fini(&call);
    rec.ops[1].seqid = 11;
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    assert_int_equal(call.ops[1].nfs_argop4_u.opopen.seqid, 10);
    tbbt_nfs4_call_fini(&call);
    tbbt_trace_rec_fini(&rec);
    tbbt_nfs4_state_free(st);
}

/* BADSESSION: the session is created again (CREATE_SESSION with the live clientid and
 * sequence id), then renewals use it. */
static void test_resession_and_renew(void **unused)
{
    static const uint8_t NEW_SESS[16] = { 0x99, 0x98, 0x97 };
    struct tbbt_nfs4_state *st = live_state();
    struct tbbt_nfs4_client *c = tbbt_nfs4_client_get(st, T_CLIENTID, false);
    struct tbbt_trace_rec rec;
    struct tbbt_nfs4_call call;
    struct tbbt_nfs4_outcome out;
    COMPOUND4res res;
    nfs_resop4 r[5];

    (void)unused;
    c->minor = 1;
    c->cs_seq = 5;
    open_record(&rec);
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    live_reply(&res, r, &call.args);
    r[0].nfs_resop4_u.opsequence.sr_status = NFS4ERR_BADSESSION;
    res.resarray.resarray_len = 1;
    tbbt_nfs4_absorb(st, &rec, &call, &res, &out);
    assert_int_equal(out.verdict, TBBT_NFS4_RESESSION);
    assert_int_equal(tbbt_nfs4_session_get(st, T_SESS)->seq[0], 1);    /* not advanced */
    struct tbbt_nfs4_session *s = call.sess;
    tbbt_nfs4_call_fini(&call);

    assert_int_equal(tbbt_nfs4_build_resession(st, s, &call), 0);
    assert_int_equal(call.ops[0].argop, OP_CREATE_SESSION);
    assert_int_equal(call.ops[0].nfs_argop4_u.opcreate_session.csa_clientid, L_CLIENTID);
    assert_int_equal(call.ops[0].nfs_argop4_u.opcreate_session.csa_sequence, 5);
    memset(r, 0, sizeof(r));
    r[0].resop = OP_CREATE_SESSION;
    memcpy(r[0].nfs_resop4_u.opcreate_session.CREATE_SESSION4res_u.csr_resok4.csr_sessionid,
           NEW_SESS, 16);
    r[0].nfs_resop4_u.opcreate_session.CREATE_SESSION4res_u.csr_resok4.csr_fore_chan_attrs
        .ca_maxrequests = 2;
    res.resarray.resarray_len = 1;
    res.resarray.resarray_val = r;
    assert_int_equal(tbbt_nfs4_absorb_resession(st, s, &res), 0);
    tbbt_nfs4_call_fini(&call);
    assert_memory_equal(tbbt_nfs4_session_get(st, T_SESS)->live, NEW_SESS, 16);
    assert_int_equal(tbbt_nfs4_session_get(st, T_SESS)->nslots, 2);
    assert_int_equal(c->cs_seq, 6);

    assert_int_equal(tbbt_nfs4_build_renew(st, c, &call), 0);
    assert_int_equal(call.ops[0].argop, OP_SEQUENCE);
    assert_memory_equal(call.ops[0].nfs_argop4_u.opsequence.sa_sessionid, NEW_SESS, 16);
    r[0].resop = OP_SEQUENCE;
    memset(&r[0].nfs_resop4_u, 0, sizeof(r[0].nfs_resop4_u));
    assert_int_equal(tbbt_nfs4_absorb_renew(&call, &res), 0);
    tbbt_nfs4_call_fini(&call);
    assert_int_equal(tbbt_nfs4_session_get(st, T_SESS)->seq[0], 2);

    c->minor = 0;
    assert_int_equal(tbbt_nfs4_build_renew(st, c, &call), 0);
    assert_int_equal(call.ops[0].argop, OP_RENEW);
    assert_int_equal(call.ops[0].nfs_argop4_u.oprenew.clientid, L_CLIENTID);
    tbbt_nfs4_call_fini(&call);
    tbbt_trace_rec_fini(&rec);
    tbbt_nfs4_state_free(st);
}

/* EXCHANGE_ID, CREATE_SESSION, SETCLIENTID, PUTFH 0, READDIR, VERIFY (type, size,
 * mode) with the members format 1.3 keeps. */
static void v13_record(struct tbbt_trace_rec *rec)
{
    struct tbbt_op4 *o;

    tbbt_trace_rec_init(rec);
    rec->prog = TBBT_PROG_NFS4;
    rec->proc = 1;
    rec->minor = 1;
    TBBT_SET(rec, TBBT_F_MINOR);
    TBBT_SET(rec, TBBT_F_OPS);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_EXCHANGE_ID;
    o->verf = 42;
    tbbt_trace_rec_set_str(rec, &o->owner, "host", 4);
    o->flags = EXCHGID4_FLAG_SUPP_MOVED_REFER | EXCHGID4_FLAG_SUPP_MOVED_MIGR |
               EXCHGID4_FLAG_BIND_PRINC_STATEID | EXCHGID4_FLAG_USE_PNFS_MDS |
               EXCHGID4_FLAG_UPD_CONFIRMED_REC_A;
    o->has |= 1u << TBBT_O4_VERF | 1u << TBBT_O4_OWNER;
    TBBT_O4_SET(o, FLAGS);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_CREATE_SESSION;
    o->clientid = T_CLIENTID;
    o->flags = CREATE_SESSION4_FLAG_PERSIST | CREATE_SESSION4_FLAG_CONN_BACK_CHAN |
               CREATE_SESSION4_FLAG_CONN_RDMA;
    o->fore_maxreq = 262144;
    o->fore_maxresp = 131072;
    o->fore_maxresp_cached = 8192;
    o->fore_maxops = 12;
    o->fore_slots = 200;
    TBBT_O4_SET(o, CLIENTID);
    TBBT_O4_SET(o, FLAGS);
    TBBT_O4_SET(o, FORE_MAXREQ);
    TBBT_O4_SET(o, FORE_MAXRESP);
    TBBT_O4_SET(o, FORE_MAXRESP_CACHED);
    TBBT_O4_SET(o, FORE_MAXOPS);
    TBBT_O4_SET(o, FORE_SLOTS);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_SETCLIENTID;
    o->verf = 43;
    tbbt_trace_rec_set_str(rec, &o->owner, "host", 4);
    o->cb_program = 0x40000007;
    o->has |= 1u << TBBT_O4_VERF | 1u << TBBT_O4_OWNER;
    TBBT_O4_SET(o, CB_PROGRAM);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_PUTFH;
    o->fh = 0;
    TBBT_O4_SET(o, FH);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_READDIR;
    o->count = 32768;
    o->dircount = 2048;
    o->bitmap = 1u << FATTR4_TYPE;
    o->has |= 1u << TBBT_O4_COOKIE | 1u << TBBT_O4_COUNT | 1u << TBBT_O4_BITMAP;
    TBBT_O4_SET(o, DIRCOUNT);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = OP_VERIFY;
    o->bitmap = (uint64_t)(1u << (FATTR4_MODE - 32)) << 32 | 1u << FATTR4_TYPE |
                1u << FATTR4_SIZE;
    o->attr.type = NF4REG;
    o->attr.size = 12345;
    o->attr.mode = 0640;
    o->has |= 1u << TBBT_O4_BITMAP | 1u << TBBT_O4_ATTR;
}

/* VERIFY's fattr4 values: type, size, mode as XDR. */
static void assert_verify_vals(const fattr4 *f, uint32_t type, uint64_t size, uint32_t mode)
{
    const uint8_t *v = (const uint8_t *)f->attr_vals.attrlist4_val;

    assert_int_equal(f->attr_vals.attrlist4_len, 16);
    assert_int_equal((uint32_t)v[0] << 24 | v[1] << 16 | v[2] << 8 | v[3], type);
    assert_int_equal((uint64_t)v[4] << 56 | (uint64_t)v[5] << 48 | (uint64_t)v[6] << 40 |
                     (uint64_t)v[7] << 32 | (uint32_t)v[8] << 24 | v[9] << 16 | v[10] << 8 |
                     v[11], size);
    assert_int_equal((uint32_t)v[12] << 24 | v[13] << 16 | v[14] << 8 | v[15], mode);
}

/*
 * The values format 1.3 keeps are sent, filtered (EXCHANGE_ID: no BIND_PRINC_STATEID,
 * pNFS role or UPD_CONFIRMED_REC_A; CREATE_SESSION: PERSIST only, slots at most
 * TBBT_NFS4_SLOTS_MAX); without them (a 1.2 trace) the made-up ones.
 */
static void test_build_v13(void **unused)
{
    static const struct tbbt_fattr getattr = {.type = NF4DIR, .size = 7, .mode = 0755};
    struct tbbt_nfs4_state *st = live_state();
    struct tbbt_trace_rec rec;
    struct tbbt_nfs4_call call;
    const nfs_argop4 *a;

    (void)unused;
    tbbt_nfs4_attr_note(st, 0, &getattr);      /* the last traced GETATTR of handle 0 */
    v13_record(&rec);
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    a = call.ops;
    assert_int_equal(a[0].nfs_argop4_u.opexchange_id.eia_flags,
                     EXCHGID4_FLAG_SUPP_MOVED_REFER | EXCHGID4_FLAG_SUPP_MOVED_MIGR);
    assert_int_equal(a[0].nfs_argop4_u.opexchange_id.eia_state_protect.spa_how, SP4_NONE);
    const CREATE_SESSION4args *cs = &a[1].nfs_argop4_u.opcreate_session;
    assert_int_equal(cs->csa_flags, CREATE_SESSION4_FLAG_PERSIST);
    assert_int_equal(cs->csa_fore_chan_attrs.ca_maxrequestsize, 262144);
    assert_int_equal(cs->csa_fore_chan_attrs.ca_maxresponsesize, 131072);
    assert_int_equal(cs->csa_fore_chan_attrs.ca_maxresponsesize_cached, 8192);
    assert_int_equal(cs->csa_fore_chan_attrs.ca_maxoperations, 12);
    assert_int_equal(cs->csa_fore_chan_attrs.ca_maxrequests, TBBT_NFS4_SLOTS_MAX);
    assert_int_equal(a[2].nfs_argop4_u.opsetclientid.callback.cb_program, 0x40000007);
    assert_string_equal(a[2].nfs_argop4_u.opsetclientid.callback.cb_location.na_r_addr,
                        "127.0.0.1.0.0");                   /* port 0, always */
    assert_int_equal(a[4].nfs_argop4_u.opreaddir.dircount, 2048);
    assert_int_equal(a[4].nfs_argop4_u.opreaddir.maxcount, 32768);
    assert_verify_vals(&a[5].nfs_argop4_u.opverify.obj_attributes, NF4REG, 12345, 0640);
    tbbt_nfs4_call_fini(&call);

    /* the same record as a 1.2 trace has it */
    for (uint32_t i = 0; i < rec.n_ops; i++)
        rec.ops[i].has &= ((uint64_t)1 << TBBT_O4_EXT) - 1;
    rec.ops[5].has &= ~((uint64_t)1 << TBBT_O4_ATTR);
    rec.ops[1].fore_slots = 1;              /* not used: not in has */
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    a = call.ops;
    assert_int_equal(a[0].nfs_argop4_u.opexchange_id.eia_flags, EXCHGID4_FLAG_SUPP_MOVED_REFER);
    cs = &a[1].nfs_argop4_u.opcreate_session;
    assert_int_equal(cs->csa_flags, 0);
    assert_int_equal(cs->csa_fore_chan_attrs.ca_maxrequests, TBBT_NFS4_FORE_SLOTS);
    assert_int_equal(cs->csa_fore_chan_attrs.ca_maxoperations, NFS4_MAXOPS);
    assert_int_equal(cs->csa_fore_chan_attrs.ca_maxresponsesize_cached, 4096);
    assert_int_equal(a[2].nfs_argop4_u.opsetclientid.callback.cb_program, 0x40000000);
    assert_int_equal(a[4].nfs_argop4_u.opreaddir.dircount, 32768);
    assert_verify_vals(&a[5].nfs_argop4_u.opverify.obj_attributes, NF4DIR, 7, 0755);
    tbbt_nfs4_call_fini(&call);

    /* VERIFY values that did not all decode: the last traced GETATTR's */
    tbbt_trace_rec_fini(&rec);     /* v13_record() starts a new one */
    v13_record(&rec);
    rec.ops[5].has |= 1u << TBBT_O4_TRUNC;
    assert_int_equal(tbbt_nfs4_build(st, &rec, &call), 0);
    assert_verify_vals(&call.ops[5].nfs_argop4_u.opverify.obj_attributes, NF4DIR, 7, 0755);
    tbbt_nfs4_call_fini(&call);
    tbbt_trace_rec_fini(&rec);
    tbbt_nfs4_state_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_owner_seqid),
        cmocka_unit_test(test_stateid_map),
        cmocka_unit_test(test_handles_and_slots),
        cmocka_unit_test(test_rebuild_roundtrip),
        cmocka_unit_test(test_unsendable),
        cmocka_unit_test(test_delegation_returned),
        cmocka_unit_test(test_v40_seqid_regen),
        cmocka_unit_test(test_resession_and_renew),
        cmocka_unit_test(test_build_v13),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
