/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the NFSv4 message walk of tbbt-convert (src/extract/decode-nfs4.c)
 * and of its counting (nfs4count.c):
 *
 *  - a COMPOUND call (SEQUENCE, PUTFH, OPEN, WRITE with data, GETATTR) and a reply
 *    (SEQUENCE, PUTFH, READ with data, READDIR with entries, LOOKUP failing) decode
 *    operation by operation with their statuses;
 *  - every prefix of them, as a truncated capture has it, keeps the operations before
 *    the cut, marks the one at the cut truncated when its number was read, and never
 *    reports a malformed message; the same prefixes without the truncation mark are
 *    malformed;
 *  - the values format 1.3 keeps (flags, CREATE_SESSION's fore channel, READDIR's
 *    dircount, VERIFY's attributes, SETCLIENTID's callback program) go into the record;
 *  - hostile messages (an operation count of 2^31 or 257, a tag or name past its
 *    bound, an unknown operation number, random bytes) end in a clean error;
 *  - CB_COMPOUND calls and replies, and the counter's recognition of callbacks
 *    (version 1 of a transient program, from an NFSv4 server's address), its
 *    COMPOUNDs counted from their decoding into records and merged across instances.
 * The sanitizer build runs it under ASan/UBSan/LSan: nothing a walk allocates may leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test-rand.h"

#include "extract/decode-nfs4.h"
#include "extract/nfs4count.h"
#include "extract/nfs4rec.h"
#include "proto/nfs4.h"
#include "proto/proto.h"
#include "trace/trace.h"
#include "util/util.h"

#define BUF 8192

static char buf[BUF];
static char data[300];
static const char fh_bytes[] = "\x01\x00\x07\x00\x2a\x00\x00\x00\x11\x22\x33\x44";

static u_int encode(xdrproc_t proc, void *obj)
{
    XDR x;
    u_int n;

    xdrmem_create(&x, buf, BUF, XDR_ENCODE);
    assert_true(proc(&x, obj));
    n = xdr_getpos(&x);
    xdr_destroy(&x);
    return n;
}

static void set_str(utf8string *s, const char *v)
{
    s->utf8string_len = (u_int)strlen(v);
    s->utf8string_val = (char *)(uintptr_t)v;
}

/* ---- the messages ------------------------------------------------------------ */

static u_int make_call(uint32_t minor)
{
    static nfs_argop4 ops[5];
    COMPOUND4args a;

    memset(ops, 0, sizeof ops);
    memset(&a, 0, sizeof a);
    set_str(&a.tag, "tbbt");
    a.minorversion = minor;
    a.argarray.argarray_len = 5;
    a.argarray.argarray_val = ops;
    ops[0].argop = OP_SEQUENCE;
    ops[0].nfs_argop4_u.opsequence.sa_sequenceid = 7;
    ops[1].argop = OP_PUTFH;
    ops[1].nfs_argop4_u.opputfh.object.nfs_fh4_len = sizeof fh_bytes - 1;
    ops[1].nfs_argop4_u.opputfh.object.nfs_fh4_val = (char *)(uintptr_t)fh_bytes;
    ops[2].argop = OP_OPEN;
    ops[2].nfs_argop4_u.opopen.share_access = OPEN4_SHARE_ACCESS_BOTH;
    ops[2].nfs_argop4_u.opopen.owner.owner.owner_len = 8;
    ops[2].nfs_argop4_u.opopen.owner.owner.owner_val = (char *)(uintptr_t)"open id:";
    ops[2].nfs_argop4_u.opopen.openhow.opentype = OPEN4_NOCREATE;
    ops[2].nfs_argop4_u.opopen.claim.claim = CLAIM_NULL;
    set_str(&ops[2].nfs_argop4_u.opopen.claim.open_claim4_u.file, "a-file");
    ops[3].argop = OP_WRITE;
    ops[3].nfs_argop4_u.opwrite.offset = 4096;
    ops[3].nfs_argop4_u.opwrite.stable = FILE_SYNC4;
    ops[3].nfs_argop4_u.opwrite.data.data_len = sizeof data;
    ops[3].nfs_argop4_u.opwrite.data.data_val = data;
    ops[4].argop = OP_GETATTR;
    return encode((xdrproc_t)xdr_COMPOUND4args, &a);
}

static const uint32_t call_ops[5] = {OP_SEQUENCE, OP_PUTFH, OP_OPEN, OP_WRITE, OP_GETATTR};

static u_int make_reply(void)
{
    static nfs_resop4 res[5];
    static entry4 ents[3];
    COMPOUND4res r;

    memset(res, 0, sizeof res);
    memset(ents, 0, sizeof ents);
    memset(&r, 0, sizeof r);
    r.status = NFS4ERR_NOENT;
    set_str(&r.tag, "tbbt");
    r.resarray.resarray_len = 5;
    r.resarray.resarray_val = res;
    res[0].resop = OP_SEQUENCE;
    res[1].resop = OP_PUTFH;
    res[2].resop = OP_READ;
    res[2].nfs_resop4_u.opread.READ4res_u.resok4.eof = TRUE;
    res[2].nfs_resop4_u.opread.READ4res_u.resok4.data.data_len = sizeof data;
    res[2].nfs_resop4_u.opread.READ4res_u.resok4.data.data_val = data;
    res[3].resop = OP_READDIR;
    for (int i = 0; i < 3; i++) {
        ents[i].cookie = (uint64_t)i + 3;
        set_str(&ents[i].name, i == 0 ? "one" : i == 1 ? "two" : "three");
        ents[i].nextentry = i < 2 ? &ents[i + 1] : NULL;
    }
    res[3].nfs_resop4_u.opreaddir.READDIR4res_u.resok4.reply.entries = ents;
    res[3].nfs_resop4_u.opreaddir.READDIR4res_u.resok4.reply.eof = TRUE;
    res[4].resop = OP_LOOKUP;
    res[4].nfs_resop4_u.oplookup.status = NFS4ERR_NOENT;
    return encode((xdrproc_t)xdr_COMPOUND4res, &r);
}

static const uint32_t reply_ops[5] = {OP_SEQUENCE, OP_PUTFH, OP_READ, OP_READDIR, OP_LOOKUP};

/* ---- whole messages ------------------------------------------------------------- */

static void test_call(void **state)
{
    struct tbbt__nfs4_compound m;
    u_int n = make_call(1);

    (void)state;
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_CALL, (uint8_t *)buf, n, false, &m), 0);
    assert_int_equal(m.minor, 1);
    assert_int_equal(m.numops, 5);
    assert_int_equal(m.nops, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(m.ops[i].op, call_ops[i]);
        assert_false(m.ops[i].trunc);
        assert_int_equal(m.ops[i].status, -1);
    }
}

static void test_reply(void **state)
{
    struct tbbt__nfs4_compound m;
    u_int n = make_reply();

    (void)state;
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_REPLY, (uint8_t *)buf, n, false, &m), 0);
    assert_int_equal(m.status, NFS4ERR_NOENT);
    assert_int_equal(m.nops, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(m.ops[i].op, reply_ops[i]);
        assert_int_equal(m.ops[i].status, i == 4 ? NFS4ERR_NOENT : NFS4_OK);
    }
}

/*
 * Every prefix of a message: as a truncated capture, the operations before the cut
 * (only the last may be marked truncated: the cut may fall between operations);
 * unmarked, malformed.
 */
static void prefixes(enum tbbt__nfs4_msg kind, u_int n, const uint32_t *want, uint32_t nwant)
{
    struct tbbt__nfs4_compound m;

    for (u_int len = 0; len < n; len++) {
        int rc = tbbt__nfs4_decode(kind, (uint8_t *)buf, len, true, &m);

        assert_int_equal(rc, TBBT_E_TRUNC);
        assert_true(m.nops <= nwant);
        for (uint32_t i = 0; i < m.nops; i++) {
            assert_int_equal(m.ops[i].op, want[i]);
            if (i + 1 < m.nops)
                assert_false(m.ops[i].trunc);
        }
        assert_int_equal(tbbt__nfs4_decode(kind, (uint8_t *)buf, len, false, &m),
                         TBBT_E_BADREC);
    }
}

static void test_truncated(void **state)
{
    (void)state;
    prefixes(TBBT__NFS4_CALL, make_call(0), call_ops, 5);
    prefixes(TBBT__NFS4_REPLY, make_reply(), reply_ops, 5);
}

/*
 * Into a trace record: the call's operations with their arguments, then the reply's
 * results into the same entries (READ's is the reply's third, the call's OPEN: not kept).
 */
static void test_record(void **state)
{
    struct tbbt__nfs4_compound m;
    struct tbbt_trace_rec rec;
    struct tbbt_fhtab *fht = tbbt_fhtab_new();
    u_int n = make_call(1);
    const struct tbbt_op4 *o;

    (void)state;
    tbbt_trace_rec_init(&rec);
    assert_int_equal(tbbt__nfs4_decode_rec(TBBT__NFS4_CALL, (uint8_t *)buf, n, false, &rec, fht,
                                           &m), 0);
    assert_true(TBBT_HAS(&rec, TBBT_F_MINOR) && TBBT_HAS(&rec, TBBT_F_OPS));
    assert_int_equal(rec.minor, 1);
    assert_int_equal(rec.n_ops, 5);
    assert_int_equal(rec.ops[0].op, OP_SEQUENCE);
    assert_true(TBBT_O4_HAS(&rec.ops[0], SLOT));
    assert_int_equal(rec.ops[0].slot, 7);
    o = &rec.ops[1];
    assert_true(TBBT_O4_HAS(o, FH));
    assert_int_equal(tbbt_fhtab_count(fht), 1);
    o = &rec.ops[2];
    assert_true(TBBT_O4_HAS(o, NAME) && TBBT_O4_HAS(o, OWNER) && TBBT_O4_HAS(o, SHARE));
    assert_string_equal(o->name.p, "a-file");
    assert_int_equal(o->owner.len, 8);
    assert_int_equal(o->share, OPEN4_SHARE_ACCESS_BOTH);
    o = &rec.ops[3];
    assert_int_equal(o->op, OP_WRITE);
    assert_int_equal(o->offset, 4096);
    assert_int_equal(o->count, sizeof data);
    assert_int_equal(o->how, FILE_SYNC4);
    assert_false(o->has >> TBBT_O4_TRUNC & 1u);

    n = make_reply();
    assert_int_equal(tbbt__nfs4_decode_rec(TBBT__NFS4_REPLY, (uint8_t *)buf, n, false, &rec,
                                           fht, &m), 0);
    assert_true(rec.flags & TBBT_RF_STATUS);
    assert_int_equal(rec.status, NFS4ERR_NOENT);
    assert_int_equal(rec.n_ops, 5);
    assert_true(TBBT_O4_HAS(&rec.ops[0], STATUS) && TBBT_O4_HAS(&rec.ops[1], STATUS));
    assert_false(TBBT_O4_HAS(&rec.ops[2], STATUS));   /* READ answered the OPEN's slot */
    assert_false(TBBT_O4_HAS(&rec.ops[2], RES_COUNT));

    /* a truncated WRITE call keeps its arguments before the data, marked */
    tbbt_trace_rec_clear(&rec);
    n = make_call(0);
    assert_int_equal(tbbt__nfs4_decode_rec(TBBT__NFS4_CALL, (uint8_t *)buf, n - 100, true, &rec,
                                           fht, &m), TBBT_E_TRUNC);
    assert_true(rec.flags & TBBT_RF_CALL_TRUNC);
    assert_int_equal(rec.n_ops, 4);
    assert_true(rec.ops[3].has >> TBBT_O4_TRUNC & 1u);
    assert_int_equal(rec.ops[3].count, sizeof data);
    tbbt_trace_rec_fini(&rec);
    tbbt_fhtab_free(fht);
}

/* VERIFY's attributes: type NF4REG, size 12345, mode 0640 (bits 1, 4; 33), in XDR. */
static const char verify_vals[] = "\0\0\0\1" "\0\0\0\0\0\0\x30\x39" "\0\0\1\xa0";
static uint32_t verify_mask[2] = {1u << FATTR4_TYPE | 1u << FATTR4_SIZE,
                                  1u << (FATTR4_MODE - 32)};

/* A call with the operations whose values format 1.3 keeps: EXCHANGE_ID, CREATE_SESSION,
 * READDIR, VERIFY, NVERIFY (a bad value), SETCLIENTID. */
static u_int make_v13_call(void)
{
    static nfs_argop4 ops[6];
    static uint32_t rd_mask[1] = {1u << FATTR4_TYPE};
    COMPOUND4args a;
    __typeof__(ops[0].nfs_argop4_u) *u;

    memset(ops, 0, sizeof ops);
    memset(&a, 0, sizeof a);
    a.minorversion = 1;
    a.argarray.argarray_len = 6;
    a.argarray.argarray_val = ops;
    ops[0].argop = OP_EXCHANGE_ID;
    u = &ops[0].nfs_argop4_u;
    u->opexchange_id.eia_clientowner.co_ownerid.co_ownerid_len = 4;
    u->opexchange_id.eia_clientowner.co_ownerid.co_ownerid_val = (char *)(uintptr_t)"host";
    u->opexchange_id.eia_flags = EXCHGID4_FLAG_SUPP_MOVED_REFER |
                                 EXCHGID4_FLAG_BIND_PRINC_STATEID | EXCHGID4_FLAG_USE_PNFS_MDS;
    u->opexchange_id.eia_state_protect.spa_how = SP4_NONE;
    ops[1].argop = OP_CREATE_SESSION;
    u = &ops[1].nfs_argop4_u;
    u->opcreate_session.csa_clientid = 0x55;
    u->opcreate_session.csa_flags = CREATE_SESSION4_FLAG_PERSIST |
                                    CREATE_SESSION4_FLAG_CONN_BACK_CHAN;
    u->opcreate_session.csa_fore_chan_attrs = (channel_attrs4){0, 262144, 131072, 8192, 12, 200,
                                                               {0, NULL}};
    u->opcreate_session.csa_cb_program = 0x40000001;
    ops[2].argop = OP_READDIR;
    u = &ops[2].nfs_argop4_u;
    u->opreaddir.dircount = 2048;
    u->opreaddir.maxcount = 32768;
    u->opreaddir.attr_request.bitmap4_len = 1;
    u->opreaddir.attr_request.bitmap4_val = rd_mask;
    ops[3].argop = OP_VERIFY;
    u = &ops[3].nfs_argop4_u;
    u->opverify.obj_attributes.attrmask.bitmap4_len = 2;
    u->opverify.obj_attributes.attrmask.bitmap4_val = verify_mask;
    u->opverify.obj_attributes.attr_vals.attrlist4_len = sizeof verify_vals - 1;
    u->opverify.obj_attributes.attr_vals.attrlist4_val = (char *)(uintptr_t)verify_vals;
    ops[4].argop = OP_NVERIFY;      /* the values are cut short: kept, marked */
    u = &ops[4].nfs_argop4_u;
    u->opnverify.obj_attributes = ops[3].nfs_argop4_u.opverify.obj_attributes;
    u->opnverify.obj_attributes.attr_vals.attrlist4_len = 8;
    ops[5].argop = OP_SETCLIENTID;
    u = &ops[5].nfs_argop4_u;
    u->opsetclientid.client.id.id_len = 4;
    u->opsetclientid.client.id.id_val = (char *)(uintptr_t)"host";
    u->opsetclientid.callback.cb_program = 0x40000007;
    u->opsetclientid.callback.cb_location.na_r_netid = (char *)(uintptr_t)"tcp";
    u->opsetclientid.callback.cb_location.na_r_addr = (char *)(uintptr_t)"10.0.0.2.3.4";
    return encode((xdrproc_t)xdr_COMPOUND4args, &a);
}

/*
 * The values format 1.3 keeps (its members since 1.3, and VERIFY's attributes in
 * `attr`): EXCHANGE_ID's and CREATE_SESSION's flags as traced, CREATE_SESSION's fore
 * channel, READDIR's dircount, VERIFY's bitmap and values, SETCLIENTID's callback
 * program.
 */
static void test_record_v13(void **state)
{
    struct tbbt__nfs4_compound m;
    struct tbbt_trace_rec rec;
    struct tbbt_fhtab *fht = tbbt_fhtab_new();
    u_int n = make_v13_call();
    const struct tbbt_op4 *o;

    (void)state;
    tbbt_trace_rec_init(&rec);
    assert_int_equal(tbbt__nfs4_decode_rec(TBBT__NFS4_CALL, (uint8_t *)buf, n, false, &rec, fht,
                                           &m), 0);
    assert_int_equal(rec.n_ops, 6);
    o = &rec.ops[0];
    assert_true(TBBT_O4_HAS(o, FLAGS));
    assert_int_equal(o->flags, EXCHGID4_FLAG_SUPP_MOVED_REFER |
                               EXCHGID4_FLAG_BIND_PRINC_STATEID | EXCHGID4_FLAG_USE_PNFS_MDS);
    o = &rec.ops[1];
    assert_true(TBBT_O4_HAS(o, FLAGS) && TBBT_O4_HAS(o, FORE_MAXREQ) &&
                TBBT_O4_HAS(o, FORE_MAXRESP) && TBBT_O4_HAS(o, FORE_MAXRESP_CACHED) &&
                TBBT_O4_HAS(o, FORE_MAXOPS) && TBBT_O4_HAS(o, FORE_SLOTS));
    assert_int_equal(o->flags, CREATE_SESSION4_FLAG_PERSIST | CREATE_SESSION4_FLAG_CONN_BACK_CHAN);
    assert_int_equal(o->fore_maxreq, 262144);
    assert_int_equal(o->fore_maxresp, 131072);
    assert_int_equal(o->fore_maxresp_cached, 8192);
    assert_int_equal(o->fore_maxops, 12);
    assert_int_equal(o->fore_slots, 200);
    assert_false(TBBT_O4_HAS(o, CB_PROGRAM));
    o = &rec.ops[2];
    assert_true(TBBT_O4_HAS(o, DIRCOUNT) && TBBT_O4_HAS(o, COUNT));
    assert_int_equal(o->dircount, 2048);
    assert_int_equal(o->count, 32768);
    o = &rec.ops[3];
    assert_true(TBBT_O4_HAS(o, BITMAP) && TBBT_O4_HAS(o, ATTR));
    assert_false(o->has >> TBBT_O4_TRUNC & 1u);
    assert_int_equal(o->bitmap, (uint64_t)verify_mask[1] << 32 | verify_mask[0]);
    assert_int_equal(o->attr.type, NF4REG);
    assert_int_equal(o->attr.size, 12345);
    assert_int_equal(o->attr.mode, 0640);
    o = &rec.ops[4];
    assert_true(TBBT_O4_HAS(o, BITMAP) && TBBT_O4_HAS(o, ATTR));
    assert_true(o->has >> TBBT_O4_TRUNC & 1u);          /* size did not decode */
    assert_int_equal(o->attr.type, NF4REG);
    o = &rec.ops[5];
    assert_true(TBBT_O4_HAS(o, CB_PROGRAM));
    assert_int_equal(o->cb_program, 0x40000007);
    tbbt_trace_rec_fini(&rec);
    tbbt_fhtab_free(fht);
}

/*
 * A READDIR entry whose FILEHANDLE attribute is empty (no buffer on the wire: the
 * sanitizer build checked the copy of it) still names its fileid and an empty handle.
 */
static void test_entry_empty_handle(void **state)
{
    uint32_t mask[1] = {1u << FATTR4_FILEHANDLE | 1u << FATTR4_FILEID};
    char vals[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 42};   /* fh length 0, fileid 42 */
    fattr4 attrs = {.attrmask = {1, mask}, .attr_vals = {sizeof vals, vals}};
    utf8string name = {1, (char *)(uintptr_t)"x"};
    struct tbbt_fhtab *fht = tbbt_fhtab_new();
    struct tbbt_trace_rec rec;
    uint32_t len;

    (void)state;
    tbbt_trace_rec_init(&rec);
    tbbt__nfs4rec_entry(&rec, 7, &name, &attrs, fht);
    assert_int_equal(rec.n_entries, 1);
    assert_int_equal(rec.entries[0].fileid, 42);
    assert_int_equal(rec.entries[0].flags, TBBT_ENT_FH);     /* not whole attributes */
    assert_non_null(tbbt_fhtab_get(fht, rec.entries[0].fh, &len));
    assert_int_equal(len, 0);
    tbbt_trace_rec_fini(&rec);
    tbbt_fhtab_free(fht);
}

/* ---- hostile input ---------------------------------------------------------------- */

static u_int words(const uint32_t *w, u_int n)
{
    for (u_int i = 0; i < n; i++) {
        uint32_t be = __builtin_bswap32(w[i]);
        memcpy(buf + 4 * i, &be, 4);
    }
    return 4 * n;
}

static void test_hostile(void **state)
{
    struct tbbt__nfs4_compound m;
    /* tag "", minor 1, count, then PUTROOTFH repeated */
    uint32_t big[] = {0, 1, 0x80000000u, OP_PUTROOTFH, OP_PUTROOTFH};
    uint32_t over[] = {0, 1, 257, OP_PUTROOTFH};
    uint32_t longtag[] = {NFS4_MAXUTF8 + 1, 1, 1, OP_PUTROOTFH};
    uint32_t unknown[] = {0, 1, 2, OP_PUTROOTFH, 77777, 0, 0};
    uint32_t longname[] = {0, 1, 1, OP_LOOKUP, 0xfffffff0u, 0};
    u_int n;

    (void)state;
    n = words(big, 5);
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_CALL, (uint8_t *)buf, n, false, &m),
                     TBBT_E_BADREC);
    assert_int_equal(m.nops, 0);
    n = words(over, 4);
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_CALL, (uint8_t *)buf, n, true, &m),
                     TBBT_E_BADREC);
    n = words(longtag, 4);
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_CALL, (uint8_t *)buf, n, true, &m),
                     TBBT_E_BADREC);
    n = words(unknown, 7);
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_CALL, (uint8_t *)buf, n, false, &m),
                     TBBT_E_BADREC);
    assert_true(m.unknown_op);
    assert_int_equal(m.nops, 1);
    n = words(longname, 6);
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_CALL, (uint8_t *)buf, n, true, &m),
                     TBBT_E_BADREC);
    assert_int_equal(m.nops, 1);
    assert_false(m.ops[0].trunc);
}

/* Random and mutated messages: any result, no crash, no leak, nops within bounds. */
static void test_random(void **state)
{
    static uint64_t rng = 0x243f6a8885a308d3ull;
    struct tbbt__nfs4_compound m;

    (void)state;
    for (int round = 0; round < 20000; round++) {
        u_int n = round & 1 ? make_call(round % 3) : make_reply();
        enum tbbt__nfs4_msg kind = (enum tbbt__nfs4_msg)(test_rand_next(&rng) % 4);
        int flips = 1 + (int)(test_rand_next(&rng) % 4);

        for (int f = 0; f < flips; f++) {
            u_int at = (u_int)(test_rand_next(&rng) % n);
            buf[at] = (char)test_rand_next(&rng);
        }
        n = (u_int)(test_rand_next(&rng) % (n + 1));
        int rc = tbbt__nfs4_decode(kind, (uint8_t *)buf, n, (round & 2) != 0, &m);
        assert_true(rc == 0 || rc == TBBT_E_TRUNC || rc == TBBT_E_BADREC);
        assert_true(m.nops <= TBBT__NFS4_MAXOPS && m.nops <= m.numops);
    }
}

/* ---- callbacks -------------------------------------------------------------------- */

/* A CB_COMPOUND call (CB_SEQUENCE, CB_RECALL) into buf. */
static u_int make_cb_call(void)
{
    nfs_cb_argop4 ops[2];
    CB_COMPOUND4args a;

    memset(ops, 0, sizeof ops);
    memset(&a, 0, sizeof a);
    a.minorversion = 1;
    a.argarray.argarray_len = 2;
    a.argarray.argarray_val = ops;
    ops[0].argop = OP_CB_SEQUENCE;
    ops[1].argop = OP_CB_RECALL;
    ops[1].nfs_cb_argop4_u.opcbrecall.fh.nfs_fh4_len = sizeof fh_bytes - 1;
    ops[1].nfs_cb_argop4_u.opcbrecall.fh.nfs_fh4_val = (char *)(uintptr_t)fh_bytes;
    return encode((xdrproc_t)xdr_CB_COMPOUND4args, &a);
}

static void test_cb_compound(void **state)
{
    nfs_cb_resop4 res[2];
    CB_COMPOUND4res r;
    struct tbbt__nfs4_compound m;
    u_int n = make_cb_call();

    (void)state;
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_CB_CALL, (uint8_t *)buf, n, false, &m), 0);
    assert_int_equal(m.nops, 2);
    assert_int_equal(m.ops[0].op, OP_CB_SEQUENCE);
    assert_int_equal(m.ops[1].op, OP_CB_RECALL);
    memset(res, 0, sizeof res);
    memset(&r, 0, sizeof r);
    r.resarray.resarray_len = 2;
    r.resarray.resarray_val = res;
    res[0].resop = OP_CB_SEQUENCE;
    res[1].resop = OP_CB_RECALL;
    res[1].nfs_cb_resop4_u.opcbrecall.status = NFS4ERR_BADHANDLE;
    n = encode((xdrproc_t)xdr_CB_COMPOUND4res, &r);
    assert_int_equal(tbbt__nfs4_decode(TBBT__NFS4_CB_REPLY, (uint8_t *)buf, n, false, &m), 0);
    assert_int_equal(m.nops, 2);
    assert_int_equal(m.ops[1].status, NFS4ERR_BADHANDLE);
}

/*
 * The counter: a COMPOUND for a record (counted, as the converter does, by a second
 * instance from its decoding, then merged), a callback from the server, calls that
 * are not callbacks, RPCSEC_GSS.
 */
static void test_count_sides(void **state)
{
    static const uint8_t cli[16] = {10, 0, 0, 2}, srv[16] = {10, 0, 0, 1};
    struct tbbt__nfs4_count *c = tbbt__nfs4_count_new(), *recs = tbbt__nfs4_count_new();
    struct tbbt__nfs4_compound m;
    struct tbbt__nfs4_call call = {.prog = 100003, .vers = 4, .proc = 1, .flavor = 1, .af = 4,
                                   .src = cli, .dst = srv, .sport = 800, .dport = 2049};
    struct tbbt__nfs4_call cb = {.prog = 0x40000000, .vers = 1, .proc = 1, .flavor = 1,
                                 .af = 4, .src = srv, .dst = cli, .sport = 2049, .dport = 800};
    struct tbbt__nfs4_call nlm = cb, stranger = cb;
    struct tbbt_json j;
    char *text;
    u_int n;
    int rc;

    (void)state;
    nlm.prog = 100021;              /* NLM version 1 from the server: not a callback */
    stranger.src = cli;             /* a transient program from a client: neither */
    /* before any NFSv4 call, nothing is a callback */
    assert_int_equal(tbbt__nfs4_count_call(c, &cb, (uint8_t *)buf, 0, false), 0);
    n = make_call(1);
    assert_int_equal(tbbt__nfs4_count_call(c, &call, (uint8_t *)buf, n, false),
                     TBBT__NFS4_SIDE_RECORD);
    rc = tbbt__nfs4_decode(TBBT__NFS4_CALL, (uint8_t *)buf, n, false, &m);
    tbbt__nfs4_count_decoded_call(recs, &m, rc);
    n = make_reply();
    rc = tbbt__nfs4_decode(TBBT__NFS4_REPLY, (uint8_t *)buf, n, false, &m);
    tbbt__nfs4_count_decoded_reply(recs, 1, &m, rc);
    n = make_cb_call();
    assert_int_equal(tbbt__nfs4_count_call(c, &cb, (uint8_t *)buf, n, false),
                     TBBT__NFS4_SIDE_CB);
    assert_int_equal(tbbt__nfs4_count_call(c, &nlm, (uint8_t *)buf, n, false), 0);
    assert_int_equal(tbbt__nfs4_count_call(c, &stranger, (uint8_t *)buf, n, false), 0);
    call.flavor = RPCSEC_GSS;
    assert_int_equal(tbbt__nfs4_count_call(c, &call, (uint8_t *)buf, 3, false),
                     TBBT__NFS4_SIDE_GSS);
    tbbt__nfs4_count_merge(c, recs);
    assert_int_equal(tbbt__nfs4_count_malformed(c), 0);

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    tbbt__nfs4_count_json(c, &j);
    tbbt_json_end_object(&j);
    text = tbbt_json_finish(&j);
    assert_non_null(strstr(text, "\"compounds\":1"));
    assert_non_null(strstr(text, "\"rpcsec_gss_calls\":1"));
    assert_non_null(strstr(text, "\"1\":{\"compounds\":1,\"replies\":1,\"ops\":{\"GETATTR\":1,"
                                 "\"OPEN\":1,\"PUTFH\":1,\"WRITE\":1,\"SEQUENCE\":1}"));
    assert_non_null(strstr(text, "\"errors\":{\"LOOKUP\":{\"NFS4ERR_NOENT\":1}}"));
    assert_non_null(strstr(text, "\"cb_compounds\":1"));
    assert_non_null(strstr(text, "\"ops\":{\"CB_RECALL\":1,\"CB_SEQUENCE\":1}"));
    g_free(text);
    tbbt__nfs4_count_free(c);
    tbbt__nfs4_count_free(recs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call),
        cmocka_unit_test(test_reply),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_record_v13),
        cmocka_unit_test(test_entry_empty_handle),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_random),
        cmocka_unit_test(test_cb_compound),
        cmocka_unit_test(test_count_sides),
    };

    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)(i * 7);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
