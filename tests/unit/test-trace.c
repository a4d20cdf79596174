/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the trace module (src/trace): names, interning tables,
 * binary writer/reader round trips of every field, the definition
 * placement, the text form (byte-identical round trip, hostile strings,
 * syntax errors with line numbers, the golden fixture tests/golden/basic.txt)
 * and the reader's defences: truncation at every byte, bad checksum,
 * unknown major version, unknown tags and records, undefined references.
 * Format 1.1's credentials (CRED records, the `cred` field): tables, round
 * trips, refusals, and 1.0 files read as before.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "trace/spill.h"
#include "trace/trace.h"
#include "util/outpath.h"
#include "util/textsum.h"
#include "util/util.h"

#ifndef TBBT_GOLDEN_DIR
#define TBBT_GOLDEN_DIR "tests/golden"
#endif
#ifndef TBBT_REGRESS_DIR
#define TBBT_REGRESS_DIR "tests/regress"
#endif

/* ---- helpers ---------------------------------------------------------------- */

static char *tmp_path(const char *tag)
{
    return g_strdup_printf("%s/tbbt-test-trace-%d-%s", g_get_tmp_dir(), (int)getpid(), tag);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    gchar *data = NULL;
    gsize n = 0;

    assert_true(g_file_get_contents(path, &data, &n, NULL));
    *len = n;
    return (uint8_t *)data;
}

static void spit(const char *path, const void *data, size_t len)
{
    assert_true(g_file_set_contents(path, data, (gssize)len, NULL));
}

static struct tbbt_endpoint make_ep(const char *client, uint16_t cport, const char *server,
                                    uint16_t sport, bool tcp)
{
    struct tbbt_endpoint ep;

    memset(&ep, 0, sizeof(ep));
    g_strlcpy(ep.client, client, sizeof(ep.client));
    g_strlcpy(ep.server, server, sizeof(ep.server));
    ep.client_port = cport;
    ep.server_port = sport;
    ep.tcp = tcp;
    return ep;
}

static void fill_fattr(struct tbbt_fattr *a, uint64_t seed)
{
    a->type = 1 + (uint32_t)(seed % 7);
    a->mode = 0100644;
    a->nlink = (uint32_t)seed + 1;
    a->uid = 1000;
    a->gid = UINT32_MAX;
    a->size = seed * 4096 + 17;
    a->used = UINT64_MAX;
    a->rdev = (uint64_t)8 << 32 | 1;
    a->fsid = 0x123456789abcdefull;
    a->fileid = seed + 100;
    a->atime_ns = 1700000000123456789ull;
    a->mtime_ns = 1700000001000000000ull + seed;
    a->ctime_ns = 0;
}

/* Sets every field of rec (handles 0..1, endpoint 0 and credentials 0..1 must exist). */
static void fill_fattr(struct tbbt_fattr *a, uint64_t seed);

/* NFSv4 operations: PUTFH, an OPEN with every member, an operation number nfs4.x lacks. */
static void fill_ops(struct tbbt_trace_rec *rec, uint64_t seed)
{
    struct tbbt_op4 *o = tbbt_trace_rec_add_op4(rec);
    char owner[TBBT_OP4_OWNER_MAX];

    o->op = 22;                     /* PUTFH */
    o->has = 1u << TBBT_O4_FH | 1u << TBBT_O4_STATUS;
    o->fh = 1;
    o = tbbt_trace_rec_add_op4(rec);
    o->op = 18;                     /* OPEN */
    o->has = ((UINT64_C(1) << TBBT_O4_NMEMBERS_12) - 1) | 1u << TBBT_O4_TRUNC |
             ((UINT64_C(1) << TBBT_O4_END) - (UINT64_C(1) << TBBT_O4_EXT));
    o->status = 10008;              /* NFS4ERR_DELAY */
    o->fh = 0;
    tbbt_trace_rec_set_str(rec, &o->name, "n\0\"a\"\xff", 6);
    tbbt_trace_rec_set_str(rec, &o->name2, "", 0);
    tbbt_trace_rec_set_str(rec, &o->target, "../t", 4);
    memset(owner, 0xa5, sizeof owner);
    tbbt_trace_rec_set_str(rec, &o->owner, owner, sizeof owner);
    o->offset = UINT64_MAX - seed;
    o->length = UINT64_MAX;
    o->clientid = 0x1122334455667788ull;
    o->verf = 0x8000000000000001ull;
    o->res_verf = 1;
    o->lock_seqid = 77;
    o->res_flags = 0x24;
    o->cookie = 3;
    o->slot = (uint64_t)7 << 32 | 9;
    o->bitmap = 0x0000001a0010011aull;
    o->count = 1u << 20;
    o->seqid = UINT32_MAX;
    o->share = 3 | 1u << 16;
    o->how = 1 | 2 << 4 | 4 << 8;
    o->ftype = 5;
    o->access = 0x3f;
    o->res_count = 1;
    o->eof = 1;
    o->dircount = 512;              /* the members since 1.3 (field ops_more) */
    o->flags = UINT32_MAX;
    o->fore_maxreq = 1049620;
    o->fore_maxresp = 0;
    o->fore_maxresp_cached = 4096;
    o->fore_maxops = 8;
    o->fore_slots = 64 + (uint32_t)seed;
    o->cb_program = 0x40000000;
    for (int i = 0; i < TBBT_OP4_ID_LEN; i++) {
        o->stateid[i] = (uint8_t)i;
        o->new_stateid[i] = (uint8_t)(0xff - i);
        o->session[i] = (uint8_t)(seed + (uint64_t)i);
    }
    o->sattr = (struct tbbt_sattr){TBBT_SA_MODE | TBBT_SA_SIZE, 0600, 0, 0, 12, 0, 0};
    fill_fattr(&o->attr, seed + 3);
    o = tbbt_trace_rec_add_op4(rec);
    o->op = 9999;
}

static void fill_all(struct tbbt_trace_rec *rec, uint64_t seed)
{
    static const char name2[] = "with space, \"quote\" and \\ back/slash\n";
    struct tbbt_entry *e;
    char target[TBBT_PATH_MAX];

    tbbt_trace_rec_clear(rec);
    rec->call_ns = 1700000000000120000ull + seed;
    rec->reply_ns = rec->call_ns + 830000;
    rec->prog = TBBT_PROG_NFS3;
    rec->proc = (uint8_t)(seed % 22);
    rec->flags = TBBT_RF_REPLY | TBBT_RF_STATUS | TBBT_RF_TCP | 0x8000;
    rec->xid = 0x0a1b2c3d + (uint32_t)seed;
    rec->endpoint = 0;
    rec->uid = 0;
    rec->gid = 65534;
    rec->rpc_stat = TBBT_RPC_SUCCESS;
    rec->status = -7;
    rec->present = (((uint64_t)1 << TBBT_F_NFIELDS) - 1) & ~((uint64_t)1 << TBBT_F_OPS_MORE);
    rec->fh = 0;
    rec->fh2 = 1;
    tbbt_trace_rec_set_str(rec, &rec->name, "a\0b/c", 5);
    tbbt_trace_rec_set_str(rec, &rec->name2, name2, sizeof(name2) - 1);
    memset(target, 'x', sizeof(target));
    target[0] = '\xff';
    tbbt_trace_rec_set_str(rec, &rec->target, target, sizeof(target));
    tbbt_trace_rec_set_str(rec, &rec->dirpath, "", 0);
    rec->offset = UINT64_MAX;
    rec->count = 8192;
    rec->stable = 2;
    rec->sattr = (struct tbbt_sattr){TBBT_SA_MODE | TBBT_SA_MTIME_SERVER | 0x100, 0755, 1, 2,
                                     0, 5, 6};
    rec->guard_ns = 1700000000999999999ull;
    rec->cookie = 77;
    rec->cookieverf = 0xfedcba9876543210ull;
    rec->dircount = 4096;
    rec->maxcount = 32768;
    rec->access = 0x3f;
    rec->createmode = 2;
    rec->createverf = 1;
    rec->ftype = 4;
    rec->rdev = (uint64_t)1 << 32 | 3;
    rec->new_fh = 1;
    fill_fattr(&rec->obj_attr, seed);
    fill_fattr(&rec->dir_attr, seed + 1);
    fill_fattr(&rec->dir2_attr, seed + 2);
    rec->obj_pre = (struct tbbt_wcc_pre){1, 2, 3};
    rec->dir_pre = (struct tbbt_wcc_pre){UINT64_MAX, 0, 1};
    rec->dir2_pre = (struct tbbt_wcc_pre){4, 5, 6};
    rec->res_count = 8192;
    rec->eof = 1;
    rec->committed = 2;
    rec->writeverf = 0x8000000000000000ull;
    rec->access_res = 0x1f;
    e = tbbt_trace_rec_add_entry(rec);
    e->fileid = 1;
    e->cookie = 2;
    tbbt_trace_rec_set_str(rec, &e->name, ".", 1);
    e = tbbt_trace_rec_add_entry(rec);
    e->fileid = 3;
    e->cookie = UINT64_MAX;
    tbbt_trace_rec_set_str(rec, &e->name, "dir\0x", 5);
    e->flags = TBBT_ENT_FH | TBBT_ENT_ATTR | TBBT_ENT_ID;
    e->fh = 1;
    fill_fattr(&e->attr, 9);
    e->id = UINT64_MAX;
    rec->n_info = TBBT_INFO_MAX;
    for (int i = 0; i < TBBT_INFO_MAX; i++)
        rec->info[i] = (uint64_t)1 << (i * 5);
    rec->id = 42;
    rec->id2 = UINT64_MAX - 1;
    rec->cred = (uint32_t)(seed % 2);
    rec->minor = 2;
    fill_ops(rec, seed);
}

static void assert_str_equal(const struct tbbt_str *a, const struct tbbt_str *b)
{
    assert_int_equal(a->len, b->len);
    if (a->len)
        assert_memory_equal(a->p, b->p, a->len);
}

static void assert_fattr_equal(const struct tbbt_fattr *a, const struct tbbt_fattr *b)
{
    assert_int_equal(a->type, b->type);
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->nlink, b->nlink);
    assert_int_equal(a->uid, b->uid);
    assert_int_equal(a->gid, b->gid);
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->used, b->used);
    assert_int_equal(a->rdev, b->rdev);
    assert_int_equal(a->fsid, b->fsid);
    assert_int_equal(a->fileid, b->fileid);
    assert_int_equal(a->atime_ns, b->atime_ns);
    assert_int_equal(a->mtime_ns, b->mtime_ns);
    assert_int_equal(a->ctime_ns, b->ctime_ns);
}

static void assert_wcc_equal(const struct tbbt_wcc_pre *a, const struct tbbt_wcc_pre *b)
{
    assert_int_equal(a->size, b->size);
    assert_int_equal(a->mtime_ns, b->mtime_ns);
    assert_int_equal(a->ctime_ns, b->ctime_ns);
}

static void assert_entries_equal(const struct tbbt_trace_rec *a, const struct tbbt_trace_rec *b)
{
    assert_int_equal(a->n_entries, b->n_entries);
    for (uint32_t i = 0; i < a->n_entries; i++) {
        const struct tbbt_entry *x = &a->entries[i], *y = &b->entries[i];
        assert_int_equal(x->fileid, y->fileid);
        assert_int_equal(x->cookie, y->cookie);
        assert_str_equal(&x->name, &y->name);
        assert_int_equal(x->flags, y->flags);
        if (x->flags & TBBT_ENT_FH)
            assert_int_equal(x->fh, y->fh);
        if (x->flags & TBBT_ENT_ATTR)
            assert_fattr_equal(&x->attr, &y->attr);
        if (x->flags & TBBT_ENT_ID)
            assert_int_equal(x->id, y->id);
    }
}

static void assert_ops_equal(const struct tbbt_trace_rec *a, const struct tbbt_trace_rec *b)
{
    assert_int_equal(a->minor, b->minor);
    assert_int_equal(a->n_ops, b->n_ops);
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const struct tbbt_op4 *x = &a->ops[i], *y = &b->ops[i];
        assert_int_equal(x->op, y->op);
        assert_int_equal(x->has, y->has);
#define CMP_U32(v, w) assert_int_equal(v, w)
#define CMP_U64(v, w) assert_int_equal(v, w)
#define CMP_REF(v, w) assert_int_equal(v, w)
#define CMP_NAME(v, w) assert_str_equal(&(v), &(w))
#define CMP_PATH(v, w) assert_str_equal(&(v), &(w))
#define CMP_BLOB(v, w) assert_str_equal(&(v), &(w))
#define CMP_ID16(v, w) assert_memory_equal(v, w, TBBT_OP4_ID_LEN)
#define CMP_VERF(v, w) assert_int_equal(v, w)
#define CMP_SATTR(v, w) assert_memory_equal(&(v), &(w), sizeof(v))
#define CMP_FATTR(v, w) assert_fattr_equal(&(v), &(w))
#define CMP_MEMBER(m, member, kind, text)                                                     \
        if (TBBT_O4_HAS(x, m))                                                                \
            CMP_##kind(x->member, y->member);
        TBBT__OP4_MEMBERS(CMP_MEMBER)
    }
}

/* Compares the header and every present field. */
static void assert_rec_equal(const struct tbbt_trace_rec *a, const struct tbbt_trace_rec *b)
{
    assert_int_equal(a->call_ns, b->call_ns);
    assert_int_equal(a->reply_ns, b->reply_ns);
    assert_int_equal(a->prog, b->prog);
    assert_int_equal(a->proc, b->proc);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->xid, b->xid);
    assert_int_equal(a->endpoint, b->endpoint);
    assert_int_equal(a->uid, b->uid);
    assert_int_equal(a->gid, b->gid);
    assert_int_equal(a->rpc_stat, b->rpc_stat);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->present, b->present);
    assert_int_equal(a->fh, b->fh);
    assert_int_equal(a->fh2, b->fh2);
    assert_int_equal(a->new_fh, b->new_fh);
    if (TBBT_HAS(a, TBBT_F_NAME))
        assert_str_equal(&a->name, &b->name);
    if (TBBT_HAS(a, TBBT_F_NAME2))
        assert_str_equal(&a->name2, &b->name2);
    if (TBBT_HAS(a, TBBT_F_TARGET))
        assert_str_equal(&a->target, &b->target);
    if (TBBT_HAS(a, TBBT_F_DIRPATH))
        assert_str_equal(&a->dirpath, &b->dirpath);
    assert_int_equal(a->offset, b->offset);
    assert_int_equal(a->count, b->count);
    assert_int_equal(a->stable, b->stable);
    assert_memory_equal(&a->sattr, &b->sattr, sizeof(a->sattr));
    assert_int_equal(a->guard_ns, b->guard_ns);
    assert_int_equal(a->cookie, b->cookie);
    assert_int_equal(a->cookieverf, b->cookieverf);
    assert_int_equal(a->dircount, b->dircount);
    assert_int_equal(a->maxcount, b->maxcount);
    assert_int_equal(a->access, b->access);
    assert_int_equal(a->createmode, b->createmode);
    assert_int_equal(a->createverf, b->createverf);
    assert_int_equal(a->ftype, b->ftype);
    assert_int_equal(a->rdev, b->rdev);
    assert_fattr_equal(&a->obj_attr, &b->obj_attr);
    assert_fattr_equal(&a->dir_attr, &b->dir_attr);
    assert_fattr_equal(&a->dir2_attr, &b->dir2_attr);
    assert_wcc_equal(&a->obj_pre, &b->obj_pre);
    assert_wcc_equal(&a->dir_pre, &b->dir_pre);
    assert_wcc_equal(&a->dir2_pre, &b->dir2_pre);
    assert_int_equal(a->res_count, b->res_count);
    assert_int_equal(a->eof, b->eof);
    assert_int_equal(a->committed, b->committed);
    assert_int_equal(a->writeverf, b->writeverf);
    assert_int_equal(a->access_res, b->access_res);
    assert_entries_equal(a, b);
    assert_int_equal(a->n_info, b->n_info);
    assert_memory_equal(a->info, b->info, sizeof(a->info));
    assert_int_equal(a->id, b->id);
    assert_int_equal(a->id2, b->id2);
    assert_int_equal(a->cred, b->cred);
    assert_ops_equal(a, b);
}

/* Credential 0: a hostile machine name and 16 gids; 1: no name, no gids. */
static void make_creds(struct tbbt_cred *c0, struct tbbt_cred *c1)
{
    static const char host[] = "host \"q\" \\ \n\x00\xff=1";

    memset(c0, 0, sizeof(*c0));
    memcpy(c0->machine, host, sizeof(host) - 1);
    c0->machine_len = sizeof(host) - 1;
    c0->uid = 1000;
    c0->gid = UINT32_MAX;
    c0->ngids = TBBT_CRED_GIDS_MAX;
    for (uint32_t i = 0; i < TBBT_CRED_GIDS_MAX; i++)
        c0->gids[i] = i * 1000003u;
    memset(c1, 0, sizeof(*c1));
}

/* Tables with handles 0 ("\x01\x02"), 1 (64 bytes), endpoint 0 and credentials 0, 1. */
struct fixture {
    struct tbbt_fhtab *fh;
    struct tbbt_eptab *ep;
    struct tbbt_credtab *cred;
    char *path;
    char *path2;
    char *text;
};

static int setup(void **state)
{
    struct fixture *fx = g_new0(struct fixture, 1);
    uint8_t big[TBBT_FH_MAX];
    struct tbbt_endpoint ep = make_ep("127.0.0.1", 812, "127.0.0.1", 2049, true);
    struct tbbt_cred c0, c1;

    fx->fh = tbbt_fhtab_new();
    fx->ep = tbbt_eptab_new();
    fx->cred = tbbt_credtab_new();
    make_creds(&c0, &c1);
    tbbt_credtab_intern(fx->cred, &c0);
    tbbt_credtab_intern(fx->cred, &c1);
    for (int i = 0; i < TBBT_FH_MAX; i++)
        big[i] = (uint8_t)(0xc0 + i);
    tbbt_fhtab_intern(fx->fh, "\x01\x02", 2);
    tbbt_fhtab_intern(fx->fh, big, sizeof(big));
    tbbt_eptab_intern(fx->ep, &ep);
    fx->path = tmp_path("a.tbbt");
    fx->path2 = tmp_path("b.tbbt");
    fx->text = tmp_path("a.txt");
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;

    unlink(fx->path);
    unlink(fx->path2);
    unlink(fx->text);
    g_free(fx->path);
    g_free(fx->path2);
    g_free(fx->text);
    tbbt_fhtab_free(fx->fh);
    tbbt_eptab_free(fx->ep);
    tbbt_credtab_free(fx->cred);
    g_free(fx);
    return 0;
}

/* A writer over the fixture's tables (credentials too); NULL and *err on failure. */
static struct tbbt_trace_writer *fx_writer(struct fixture *fx, const char *path, int *err)
{
    struct tbbt_trace_writer *w = tbbt_trace_writer_open(path, fx->fh, fx->ep, err);

    if (w)
        tbbt_trace_writer_set_credtab(w, fx->cred);
    return w;
}

/* Writes n records made by fill_all(seed = i) to fx->path. */
static void write_all_fields(struct fixture *fx, int n)
{
    struct tbbt_trace_rec rec;
    int err = 0;
    struct tbbt_trace_writer *w = fx_writer(fx, fx->path, &err);

    assert_non_null(w);
    tbbt_trace_rec_init(&rec);
    for (int i = 0; i < n; i++) {
        fill_all(&rec, (uint64_t)i);
        assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    }
    assert_int_equal(tbbt_trace_writer_count(w), n);
    assert_int_equal(tbbt_trace_writer_close(w), 0);
    tbbt_trace_rec_fini(&rec);
}

/* Reads path to the end: the final status (0 valid, negative error). */
static int read_to_end(const uint8_t *data, size_t len, uint64_t *nrecs)
{
    struct tbbt_trace_rec rec;
    int err = 0, rc;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open_mem(data, len, &err);

    *nrecs = 0;
    if (!r)
        return err;
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(r, &rec)) > 0)
        (*nrecs)++;
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    return rc;
}

/* ---- a tiny raw builder for hand-made binary traces ---------------------------- */

static void raw_le(GByteArray *a, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) {
        uint8_t b = (uint8_t)(v >> (8 * i));
        g_byte_array_append(a, &b, 1);
    }
}

static GByteArray *raw_new(uint16_t major)
{
    GByteArray *a = g_byte_array_new();

    g_byte_array_append(a, (const uint8_t *)"\x89TBBT\r\n\x1a", 8);
    raw_le(a, major, 2);
    raw_le(a, 0, 2);
    raw_le(a, 16, 4);
    return a;
}

static void raw_rec(GByteArray *a, uint8_t type, const void *body, size_t len)
{
    g_byte_array_append(a, &type, 1);
    raw_le(a, len, 4);
    g_byte_array_append(a, body, (guint)len);
}

static void raw_handle(GByteArray *a, uint32_t ref, const char *bytes, uint8_t len)
{
    GByteArray *b = g_byte_array_new();

    raw_le(b, ref, 4);
    g_byte_array_append(b, &len, 1);
    g_byte_array_append(b, (const uint8_t *)bytes, len);
    raw_rec(a, TBBT_REC_HANDLE, b->data, b->len);
    g_byte_array_free(b, TRUE);
}

static void raw_endpoint(GByteArray *a, uint32_t ref)
{
    GByteArray *b = g_byte_array_new();

    raw_le(b, ref, 4);
    raw_le(b, 6, 1);
    raw_le(b, 812, 2);
    raw_le(b, 2049, 2);
    raw_le(b, 3, 1);
    g_byte_array_append(b, (const uint8_t *)"::1", 3);
    raw_le(b, 3, 1);
    g_byte_array_append(b, (const uint8_t *)"::1", 3);
    raw_rec(a, TBBT_REC_ENDPOINT, b->data, b->len);
    g_byte_array_free(b, TRUE);
}

/* An op record: the fixed part (v3 getattr, endpoint ep) then the raw TLV bytes. */
static void raw_op(GByteArray *a, uint32_t ep, const void *tlvs, size_t len)
{
    GByteArray *b = g_byte_array_new();

    raw_le(b, 1000, 8);
    raw_le(b, 2000, 8);
    raw_le(b, TBBT_PROG_NFS3, 1);
    raw_le(b, 1, 1);
    raw_le(b, TBBT_RF_REPLY, 2);
    raw_le(b, 0x1234, 4);
    raw_le(b, ep, 4);
    raw_le(b, 0, 4);
    raw_le(b, 0, 4);
    raw_le(b, 0, 1);
    raw_le(b, 0, 4);
    g_byte_array_append(b, tlvs, (guint)len);
    raw_rec(a, TBBT_REC_OP, b->data, b->len);
    g_byte_array_free(b, TRUE);
}

static void raw_end(GByteArray *a, uint64_t nops, uint32_t nfh, uint32_t nep)
{
    uint32_t crc = (uint32_t)crc32(0, a->data, a->len);
    uint8_t body[20];
    GByteArray *b = g_byte_array_new();

    raw_le(b, nops, 8);
    raw_le(b, nfh, 4);
    raw_le(b, nep, 4);
    raw_le(b, crc, 4);
    memcpy(body, b->data, 20);
    raw_rec(a, TBBT_REC_END, body, 20);
    g_byte_array_free(b, TRUE);
}

/* A one-op trace with the given TLV bytes; returns the reader's final status. */
static int raw_one_op(const void *tlvs, size_t len, uint64_t *skipped)
{
    GByteArray *a = raw_new(1);
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    int err = 0, rc;

    raw_handle(a, 0, "\xaa\xbb", 2);
    raw_endpoint(a, 0);
    raw_op(a, 0, tlvs, len);
    raw_end(a, 1, 1, 1);
    r = tbbt_trace_reader_open_mem(a->data, a->len, &err);
    assert_non_null(r);
    tbbt_trace_rec_init(&rec);
    rc = tbbt_trace_reader_next(r, &rec);
    if (rc == 1)
        rc = tbbt_trace_reader_next(r, &rec);
    if (skipped)
        *skipped = tbbt_trace_reader_skipped(r);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    g_byte_array_free(a, TRUE);
    return rc;
}

/* ---- tests: names, records, tables ----------------------------------------------- */

/* tbbt_trace_ident_read(): the END record's CRC and count, from the file's last bytes. */
static void test_ident(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_trace_ident id = { 0 };
    gchar *data = NULL;
    gsize len = 0;
    FILE *f;

    write_all_fields(fx, 7);
    assert_int_equal(tbbt_trace_ident_read(fx->path, &id), 0);
    assert_int_equal(id.ops, 7);
    assert_true(g_file_get_contents(fx->path, &data, &len, NULL));
    assert_int_equal(id.crc, (uint32_t)crc32(0, (const Bytef *)data, (uInt)(len - 25)));
    /* cut short: no END record at the end; not a trace at all */
    f = fopen(fx->path2, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len - 3, f), len - 3);
    fclose(f);
    assert_int_equal(tbbt_trace_ident_read(fx->path2, &id), TBBT_E_TRUNC);
    assert_true(g_file_set_contents(fx->path2, "# tbbt-map 3\n", -1, NULL));
    assert_int_equal(tbbt_trace_ident_read(fx->path2, &id), TBBT_E_MAGIC);
    assert_int_equal(tbbt_trace_ident_read("/nonexistent/x.tbbt", &id), -ENOENT);
    g_free(data);
}

/* util/textsum.h (the checksum line of maps and manifests) and util/outpath.h. */
static void test_textsum_outpath(void **state)
{
    struct fixture *fx = *state;
    char line[TBBT_TEXTSUM_LINE], *dir;
    uint32_t crc = 0;
    uint64_t lines = 0;
    FILE *f;

    tbbt_textsum_line(line, 0x0a0b0c0d);
    assert_string_equal(line, "# crc32 0a0b0c0d\n");
    assert_true(tbbt_textsum_parse(line, 16, &crc));
    assert_int_equal(crc, 0x0a0b0c0d);
    assert_false(tbbt_textsum_parse("# crc32 0A0B0C0D", 16, &crc));
    assert_false(tbbt_textsum_parse("# crc32 0a0b0c0", 15, &crc));
    tbbt_textsum_line(line, (uint32_t)crc32(0, (const Bytef *)"a\nb\n", 4));
    dir = g_strconcat("a\nb\n", line, NULL);     /* a writer's whole output */
    assert_true(g_file_set_contents(fx->text, dir, -1, NULL));
    g_free(dir);
    f = fopen(fx->text, "r");
    assert_int_equal(tbbt_textsum_verify(f, 0, &crc, &lines), 0);
    fclose(f);
    assert_int_equal(crc, (uint32_t)crc32(0, (const Bytef *)"a\nb\n", 4));
    assert_int_equal(lines, 3);
    assert_true(g_file_set_contents(fx->text, "a\nc\n# crc32 00000000\n", -1, NULL));
    f = fopen(fx->text, "r");
    assert_int_equal(tbbt_textsum_verify(f, 0, &crc, NULL), TBBT_E_CHECKSUM);
    fclose(f);
    assert_true(g_file_set_contents(fx->text, "a\n", -1, NULL));
    f = fopen(fx->text, "r");
    assert_int_equal(tbbt_textsum_verify(f, 0, &crc, NULL), TBBT_E_TRUNC);
    fclose(f);
    /* output paths: a file that can be made, a directory, a missing directory */
    assert_int_equal(tbbt_output_check(fx->path2), 0);
    assert_int_equal(access(fx->path2, F_OK), -1);     /* the probe left nothing */
    dir = g_path_get_dirname(fx->path2);
    assert_int_equal(tbbt_output_check(dir), -EISDIR);
    g_free(dir);
    assert_int_equal(tbbt_output_check("/nonexistent-tbbt-dir/r.json"), -ENOENT);
    assert_int_equal(tbbt_output_check("/dev/null"), 0);
    assert_int_equal(tbbt_output_check("-"), 0);
    /* as outfile.h writes: a link's target decides; a name of 250 bytes is fine */
    dir = g_path_get_dirname(fx->path2);
    {
        char *link = g_build_filename(dir, "out-link.json", NULL);
        char *fifo = g_build_filename(dir, "out-fifo", NULL);
        char *lname = g_strnfill(250, 'n'), *llong = g_build_filename(dir, lname, NULL);

        unlink(link);
        assert_int_equal(symlink("/nonexistent-tbbt-dir/r.json", link), 0);
        assert_int_equal(tbbt_output_check(link), -ENOENT);
        unlink(link);
        assert_int_equal(tbbt_output_check(llong), 0);     /* the temporary's name is cut */
        assert_int_equal(access(llong, F_OK), -1);
        unlink(fifo);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        assert_int_equal(tbbt_output_check(fifo), 0);     /* no reader: does not block */
        unlink(fifo);
        g_free(link);
        g_free(fifo);
        g_free(lname);
        g_free(llong);
    }
    g_free(dir);
}

static void test_names(void **state)
{
    (void)state;
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_NFS3), 22);
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_NFS2), 18);
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_MNT1), 6);
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_MNT3), 6);
    assert_int_equal(tbbt_prog_nprocs(TBBT_PROG_NONE), 0);
    assert_string_equal(tbbt_proc_name(TBBT_PROG_NFS3, 17), "readdirplus");
    assert_string_equal(tbbt_proc_name(TBBT_PROG_NFS3, 21), "commit");
    assert_string_equal(tbbt_proc_name(TBBT_PROG_NFS2, 7), "writecache");
    assert_string_equal(tbbt_proc_name(TBBT_PROG_NFS2, 17), "statfs");
    assert_string_equal(tbbt_proc_name(TBBT_PROG_MNT3, 1), "mnt");
    assert_string_equal(tbbt_proc_name(TBBT_PROG_MNT1, 5), "export");
    assert_null(tbbt_proc_name(TBBT_PROG_NFS3, 22));
    assert_null(tbbt_proc_name(9, 0));
    for (int prog = TBBT_PROG_NFS2; prog <= TBBT_PROG_MNT3; prog++)
        for (int p = 0; p < tbbt_prog_nprocs(prog); p++)
            assert_int_equal(tbbt_proc_by_name(prog, tbbt_proc_name(prog, p)), p);
    assert_int_equal(tbbt_proc_by_name(TBBT_PROG_NFS3, "root"), -1);
    assert_int_equal(tbbt_proc_by_name(TBBT_PROG_NFS2, "root"), 3);
    assert_string_equal(tbbt_prog_name(TBBT_PROG_NFS2), "v2");
    assert_string_equal(tbbt_prog_name(TBBT_PROG_NFS3), "v3");
    assert_string_equal(tbbt_prog_name(TBBT_PROG_MNT1), "mnt1");
    assert_string_equal(tbbt_prog_name(TBBT_PROG_MNT3), "mnt3");
    assert_int_equal(tbbt_prog_by_name("mnt3"), TBBT_PROG_MNT3);
    assert_string_equal(tbbt_prog_name(TBBT_PROG_NFS4), "v4");
    assert_int_equal(tbbt_prog_by_name("v4"), TBBT_PROG_NFS4);
    assert_int_equal(tbbt_prog_by_name("v5"), -1);
    assert_string_equal(tbbt_proc_name(TBBT_PROG_NFS4, 1), "compound");
    assert_string_equal(tbbt_proc_label(TBBT_PROG_NFS4, 0, NULL, 0), "v4.null");
    assert_string_equal(tbbt_status_name(TBBT_PROG_NFS4, 10008), "DELAY");
    /* Labels: "PROG.NAME" for each known procedure but NFSv3's bare names. */
    char buf[TBBT_PROC_LABEL_MAX];
    for (int prog = TBBT_PROG_NFS2; prog <= TBBT_PROG_MNT3; prog++)
        for (int p = 0; p < tbbt_prog_nprocs(prog); p++) {
            const char *name = tbbt_proc_name(prog, p);
            char *want = prog == TBBT_PROG_NFS3
                             ? g_strdup(name)
                             : g_strdup_printf("%s.%s", tbbt_prog_name(prog), name);
            assert_string_equal(tbbt_proc_label(prog, p, NULL, 0), want);
            g_free(want);
        }
    assert_null(tbbt_proc_label(TBBT_PROG_NFS3, 22, NULL, 0));
    assert_string_equal(tbbt_proc_label(TBBT_PROG_NFS3, 22, buf, sizeof(buf)), "22");
    assert_string_equal(tbbt_proc_label(TBBT_PROG_NFS2, 31, buf, sizeof(buf)), "v2.31");
    assert_string_equal(tbbt_proc_label(TBBT_PROG_NONE, 3, buf, sizeof(buf)), "prog0.3");
    assert_string_equal(tbbt_proc_label(INT32_MIN, INT32_MIN, buf, sizeof(buf)),
                        "prog-2147483648.-2147483648");
    assert_string_equal(tbbt_rpc_stat_name(TBBT_RPC_GARBAGE_ARGS), "garbage_args");
    assert_null(tbbt_rpc_stat_name(200));
    assert_string_equal(tbbt_status_name(TBBT_PROG_NFS3, 10008), "JUKEBOX");
    assert_string_equal(tbbt_status_name(TBBT_PROG_NFS2, 99), "WFLUSH");
    assert_null(tbbt_status_name(TBBT_PROG_NFS3, 99));
    int32_t st;
    assert_int_equal(tbbt_status_by_name(TBBT_PROG_MNT3, "NOTSUPP", &st), 0);
    assert_int_equal(st, 10004);
}

static void test_record(void **state)
{
    struct tbbt_trace_rec a, b;
    (void)state;

    tbbt_trace_rec_init(&a);
    tbbt_trace_rec_init(&b);
    for (int i = 0; i < 1000; i++) {
        struct tbbt_entry *e = tbbt_trace_rec_add_entry(&a);
        assert_int_equal(e->flags, 0);
        e->fileid = (uint64_t)i;
        tbbt_trace_rec_set_str(&a, &e->name, "n\0m", 3);
    }
    TBBT_SET(&a, TBBT_F_ENTRIES);
    tbbt_trace_rec_set_str(&a, &a.name, "hello", 5);
    assert_int_equal(a.name.p[5], '\0');
    TBBT_SET(&a, TBBT_F_NAME);
    tbbt_trace_rec_copy(&b, &a);
    assert_rec_equal(&a, &b);
    assert_ptr_not_equal(a.entries, b.entries);
    assert_ptr_not_equal(a.name.p, b.name.p);
    tbbt_trace_rec_clear(&a);
    assert_int_equal(a.n_entries, 0);
    assert_int_equal(a.present, 0);
    assert_non_null(a.entries);         /* the memory stays for the next record */
    assert_true(a.entries_cap >= 1000);
    assert_non_null(a.arena);
    assert_int_equal(b.entries[999].fileid, 999);
    /* strings made after a clear do not disturb the copy's, and the arena is reused */
    for (int i = 0; i < 3000; i++)
        tbbt_trace_rec_set_str(&a, &a.name, "0123456789abcdef", 16);
    assert_memory_equal(a.name.p, "0123456789abcdef", 17);
    assert_memory_equal(b.entries[5].name.p, "n\0m", 3);
    tbbt_trace_rec_clear(&a);
    tbbt_trace_rec_set_str(&a, &a.name, "x", 1);
    assert_string_equal(a.name.p, "x");
    tbbt_trace_rec_fini(&a);
    tbbt_trace_rec_fini(&b);
}

static void test_fhtab(void **state)
{
    struct tbbt_fhtab *t = tbbt_fhtab_new();
    uint8_t fh[TBBT_FH_MAX];
    uint32_t len;
    (void)state;

    assert_int_equal(tbbt_fhtab_intern(t, "", 0), 0);
    assert_int_equal(tbbt_fhtab_intern(t, "a", 1), 1);
    assert_int_equal(tbbt_fhtab_intern(t, "", 0), 0);
    for (uint32_t i = 0; i < 20000; i++) {
        memset(fh, 0, sizeof(fh));
        memcpy(fh, &i, sizeof(i));
        assert_int_equal(tbbt_fhtab_intern(t, fh, 32), i + 2);
    }
    for (uint32_t i = 0; i < 20000; i += 97) {
        memset(fh, 0, sizeof(fh));
        memcpy(fh, &i, sizeof(i));
        assert_int_equal(tbbt_fhtab_intern(t, fh, 32), i + 2);
        assert_int_equal(tbbt_fhtab_intern(t, fh, 31) >= 20002, 1);
    }
    assert_memory_equal(tbbt_fhtab_get(t, 1, &len), "a", 1);
    assert_int_equal(len, 1);
    assert_null(tbbt_fhtab_get(t, 1u << 30, &len));
    /* reader side: dense refs, no duplicates, bounded length */
    struct tbbt_fhtab *u = tbbt_fhtab_new();
    assert_int_equal(tbbt_fhtab_add(u, 1, "x", 1), TBBT_E_BADREC);
    assert_int_equal(tbbt_fhtab_add(u, 0, "x", 1), 0);
    assert_int_equal(tbbt_fhtab_add(u, 1, "x", 1), TBBT_E_BADREC);
    assert_int_equal(tbbt_fhtab_add(u, 1, fh, TBBT_FH_MAX + 1), TBBT_E_BADREC);
    assert_int_equal(tbbt_fhtab_add(u, 1, fh, TBBT_FH_MAX), 0);
    assert_int_equal(tbbt_fhtab_intern(u, "x", 1), 0);
    assert_int_equal(tbbt_fhtab_count(u), 2);
    tbbt_fhtab_free(u);
    tbbt_fhtab_free(t);
    tbbt_fhtab_free(NULL);
}

static void test_eptab(void **state)
{
    struct tbbt_eptab *t = tbbt_eptab_new();
    struct tbbt_endpoint a = make_ep("10.0.0.1", 700, "10.0.0.2", 2049, true);
    struct tbbt_endpoint b = a;
    (void)state;

    b.tcp = false;
    assert_int_equal(tbbt_eptab_intern(t, &a), 0);
    assert_int_equal(tbbt_eptab_intern(t, &b), 1);
    memset(b.client + 9, 'Z', sizeof(b.client) - 9);  /* junk after the NUL is ignored */
    assert_int_equal(tbbt_eptab_intern(t, &b), 1);
    for (int i = 0; i < 3000; i++) {
        struct tbbt_endpoint c = make_ep("fe80::1", (uint16_t)i, "fe80::2", 2049, false);
        assert_int_equal(tbbt_eptab_intern(t, &c), (uint32_t)i + 2);
    }
    assert_string_equal(tbbt_eptab_get(t, 2)->client, "fe80::1");
    assert_null(tbbt_eptab_get(t, 5000));
    assert_int_equal(tbbt_eptab_count(t), 3002);

    struct tbbt_eptab *u = tbbt_eptab_new();
    struct tbbt_endpoint bad = make_ep("10.0.0.1 x", 1, "10.0.0.2", 2, true);
    assert_int_equal(tbbt_eptab_add(u, 0, &bad), TBBT_E_BADREC);
    bad = make_ep("", 1, "10.0.0.2", 2, true);
    assert_int_equal(tbbt_eptab_add(u, 0, &bad), TBBT_E_BADREC);
    assert_int_equal(tbbt_eptab_add(u, 1, &a), TBBT_E_BADREC);
    assert_int_equal(tbbt_eptab_add(u, 0, &a), 0);
    assert_int_equal(tbbt_eptab_add(u, 1, &a), TBBT_E_BADREC);
    tbbt_eptab_free(u);
    tbbt_eptab_free(t);
}

/* ---- tests: binary round trip ----------------------------------------------------- */

static void test_roundtrip_all_fields(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_trace_rec want, got;
    struct tbbt_trace_reader *r;
    int err = 0;

    write_all_fields(fx, 50);
    r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    tbbt_trace_rec_init(&want);
    tbbt_trace_rec_init(&got);
    for (int i = 0; i < 50; i++) {
        fill_all(&want, (uint64_t)i);
        assert_int_equal(tbbt_trace_reader_next(r, &got), 1);
        assert_rec_equal(&want, &got);
    }
    assert_int_equal(tbbt_trace_reader_next(r, &got), 0);
    assert_int_equal(tbbt_trace_reader_next(r, &got), 0);
    assert_int_equal(tbbt_trace_reader_skipped(r), 0);
    /* the reader's tables hold what the writer's held */
    uint32_t len;
    const uint8_t *fh = tbbt_fhtab_get(tbbt_trace_reader_fhtab(r), 1, &len);
    assert_int_equal(len, TBBT_FH_MAX);
    assert_int_equal(fh[63], 0xc0 + 63);
    const struct tbbt_endpoint *ep = tbbt_eptab_get(tbbt_trace_reader_eptab(r), 0);
    assert_string_equal(ep->server, "127.0.0.1");
    assert_int_equal(ep->client_port, 812);
    assert_true(ep->tcp);
    tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&want);
    tbbt_trace_rec_fini(&got);
}

/* Definitions come right before the first op that may use them, and at close. */
static void test_definition_placement(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_fhtab *fh = tbbt_fhtab_new();
    struct tbbt_eptab *ep = tbbt_eptab_new();
    struct tbbt_endpoint e0 = make_ep("1.2.3.4", 1, "5.6.7.8", 2049, false);
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    uint32_t ref;
    int err = 0;
    struct tbbt_trace_writer *w = tbbt_trace_writer_open(fx->path, fh, ep, &err);
    static const int want[] = {TBBT_REC_ENDPOINT, TBBT_REC_OP, TBBT_REC_HANDLE, TBBT_REC_HANDLE,
                               TBBT_REC_OP, TBBT_REC_OP, TBBT_REC_HANDLE, 0};

    assert_non_null(w);
    tbbt_trace_rec_init(&rec);
    rec.endpoint = tbbt_eptab_intern(ep, &e0);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    rec.fh = tbbt_fhtab_intern(fh, "h0", 2);
    rec.fh2 = tbbt_fhtab_intern(fh, "h1", 2);
    TBBT_SET(&rec, TBBT_F_FH);
    TBBT_SET(&rec, TBBT_F_FH2);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    tbbt_fhtab_intern(fh, "late", 4);   /* never used: written at close */
    /* bad records are refused without writing anything */
    rec.fh = 7;
    assert_int_equal(tbbt_trace_writer_put(w, &rec), TBBT_E_RANGE);
    rec.fh = 0;
    rec.endpoint = 3;
    assert_int_equal(tbbt_trace_writer_put(w, &rec), TBBT_E_RANGE);
    rec.endpoint = 0;
    rec.n_info = TBBT_INFO_MAX + 1;
    TBBT_SET(&rec, TBBT_F_INFO);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), TBBT_E_RANGE);
    assert_int_equal(tbbt_trace_writer_close(w), 0);

    r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    for (int i = 0;; i++) {
        int rc = tbbt_trace_reader_next_any(r, &rec, &ref);
        assert_int_equal(rc, want[i]);
        if (rc == 0)
            break;
    }
    assert_int_equal(ref, 2);
    tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&rec);
    tbbt_fhtab_free(fh);
    tbbt_eptab_free(ep);
}

/* Many records and big ones go through the buffers' refills and growth. */
static void test_large_stream(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    char name[TBBT_NAME_MAX];
    int err = 0, n = 0, rc;
    struct tbbt_trace_writer *w = fx_writer(fx, fx->path, &err);

    assert_non_null(w);
    memset(name, 'n', sizeof(name));
    tbbt_trace_rec_init(&rec);
    for (int i = 0; i < 30000; i++) {
        fill_all(&rec, (uint64_t)i);
        if (i % 10000 == 5000) {    /* a readdir reply of ~2.3 MB */
            for (int j = 0; j < 6000; j++) {
                struct tbbt_entry *e = tbbt_trace_rec_add_entry(&rec);
                e->flags = TBBT_ENT_ATTR | TBBT_ENT_FH;
                fill_fattr(&e->attr, (uint64_t)j);
                tbbt_trace_rec_set_str(&rec, &e->name, name, sizeof(name));
            }
        }
        assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    }
    assert_int_equal(tbbt_trace_writer_close(w), 0);

    r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    while ((rc = tbbt_trace_reader_next(r, &rec)) > 0) {
        assert_int_equal(rec.xid, 0x0a1b2c3d + (uint32_t)n);
        assert_int_equal(rec.n_entries, n % 10000 == 5000 ? 6002 : 2);
        n++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(n, 30000);
    tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&rec);
}

static void test_write_error(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_trace_rec rec;
    int err = 0, rc = 0;
    struct tbbt_trace_writer *w;

    w = fx_writer(fx, "/nonexistent-dir/x.tbbt", &err);
    assert_null(w);
    assert_int_equal(err, -ENOENT);
    if (access("/dev/full", W_OK) != 0)
        return;
    w = fx_writer(fx, "/dev/full", &err);
    assert_non_null(w);
    tbbt_trace_rec_init(&rec);
    fill_all(&rec, 1);
    for (int i = 0; i < 20000 && rc == 0; i++)
        rc = tbbt_trace_writer_put(w, &rec);
    assert_int_equal(rc, -ENOSPC);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), -ENOSPC);
    assert_int_equal(tbbt_trace_writer_close(w), -ENOSPC);
    tbbt_trace_rec_fini(&rec);
}

/* ---- tests: the reader's defences ---------------------------------------------------- */

static void test_truncated_everywhere(void **state)
{
    struct fixture *fx = *state;
    size_t len;
    uint8_t *data;
    uint64_t n;

    write_all_fields(fx, 3);
    data = slurp(fx->path, &len);
    assert_int_equal(read_to_end(data, len, &n), 0);
    assert_int_equal(n, 3);
    for (size_t cut = 0; cut < len; cut++) {
        int rc = read_to_end(data, cut, &n);
        if (rc != TBBT_E_TRUNC && rc != TBBT_E_BADREC)
            fail_msg("cut at %zu of %zu: %d (%s)", cut, len, rc, tbbt_strerror(rc));
    }
    /* the same through a file: the error names a byte offset inside the file */
    spit(fx->path2, data, len - 7);
    int err = 0;
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(fx->path2, &err);
    assert_non_null(r);
    tbbt_trace_rec_init(&rec);
    int rc;
    while ((rc = tbbt_trace_reader_next(r, &rec)) > 0)
        ;
    assert_int_equal(rc, TBBT_E_TRUNC);
    assert_int_equal(tbbt_trace_reader_offset(r), len - 25);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), TBBT_E_TRUNC);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    g_free(data);
}

static void test_bad_checksum(void **state)
{
    struct fixture *fx = *state;
    size_t len;
    uint8_t *data;
    uint64_t n;

    write_all_fields(fx, 2);
    data = slurp(fx->path, &len);
    data[len - 1] ^= 0x40;      /* the stored CRC */
    assert_int_equal(read_to_end(data, len, &n), TBBT_E_CHECKSUM);
    assert_int_equal(n, 2);
    data[len - 1] ^= 0x40;
    /* a byte inside the 1024-byte target string: decodes fine, CRC catches it */
    uint8_t *x = memmem(data, len, "xxxxxxxx", 8);
    assert_non_null(x);
    x[3] = 'y';
    assert_int_equal(read_to_end(data, len, &n), TBBT_E_CHECKSUM);
    x[3] = 'x';
    /* bytes after the trailer */
    uint8_t *more = g_malloc(len + 1);
    memcpy(more, data, len);
    more[len] = 0;
    assert_int_equal(read_to_end(more, len + 1, &n), TBBT_E_BADREC);
    g_free(more);
    assert_int_equal(read_to_end(data, len, &n), 0);
    g_free(data);
}

static void test_header_checks(void **state)
{
    struct fixture *fx = *state;
    size_t len;
    uint8_t *data;
    uint64_t n;
    int err = 0;
    struct tbbt_trace_reader *r;

    write_all_fields(fx, 1);
    data = slurp(fx->path, &len);
    data[8] = 2;                /* major 2 */
    r = tbbt_trace_reader_open_mem(data, len, &err);
    assert_null(r);
    assert_int_equal(err, TBBT_E_VERSION);
    spit(fx->path2, data, len);
    assert_null(tbbt_trace_reader_open(fx->path2, &err));
    assert_int_equal(err, TBBT_E_VERSION);
    data[8] = 1;
    data[0] = 'X';
    assert_null(tbbt_trace_reader_open_mem(data, len, &err));
    assert_int_equal(err, TBBT_E_MAGIC);
    data[0] = 0x89;
    data[12] = 15;              /* header length below 16 */
    assert_null(tbbt_trace_reader_open_mem(data, len, &err));
    assert_int_equal(err, TBBT_E_BADREC);
    data[12] = 16;
    data[10] = 7;               /* a newer minor version is read */
    r = tbbt_trace_reader_open_mem(data, len, &err);
    assert_non_null(r);
    int major, minor;
    tbbt_trace_reader_version(r, &major, &minor);
    assert_int_equal(minor, 7);
    tbbt_trace_reader_close(r);
    data[10] = TBBT_TRACE_MINOR;
    assert_int_equal(read_to_end(data, len, &n), 0);
    assert_null(tbbt_trace_reader_open_mem(NULL, 0, &err));
    assert_int_equal(err, TBBT_E_TRUNC);
    assert_null(tbbt_trace_reader_open_mem("\x89TBB", 4, &err));
    assert_int_equal(err, TBBT_E_TRUNC);
    assert_null(tbbt_trace_reader_open_mem("\x89TBX", 4, &err));
    assert_int_equal(err, TBBT_E_MAGIC);
    assert_null(tbbt_trace_reader_open("/nonexistent", &err));
    assert_int_equal(err, -ENOENT);
    g_free(data);
    /* longer header (a later minor): extra bytes skipped and counted */
    GByteArray *a = g_byte_array_new();
    g_byte_array_append(a, (const uint8_t *)"\x89TBBT\r\n\x1a\x01\x00\x01\x00\x14\x00\x00\x00"
                                            "abcd", 20);
    raw_endpoint(a, 0);
    raw_end(a, 0, 0, 1);
    r = tbbt_trace_reader_open_mem(a->data, a->len, &err);
    assert_non_null(r);
    struct tbbt_trace_rec rec;
    tbbt_trace_rec_init(&rec);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 0);
    assert_int_equal(tbbt_trace_reader_skipped(r), 1);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    g_byte_array_free(a, TRUE);
}

static void test_unknown_skipped(void **state)
{
    uint64_t skipped;
    (void)state;

    /* fh=0 then an unknown tag 200 with 3 bytes: skipped */
    assert_int_equal(raw_one_op("\x00\x01\x00\xc8\x03xyz", 8, &skipped), 0);
    assert_int_equal(skipped, 1);
    /* an unknown record type between known ones */
    GByteArray *a = raw_new(1);
    raw_endpoint(a, 0);
    raw_rec(a, 99, "junk", 4);
    raw_op(a, 0, "", 0);
    raw_rec(a, 0, "", 0);
    raw_end(a, 1, 0, 1);
    uint64_t n;
    assert_int_equal(read_to_end(a->data, a->len, &n), 0);
    assert_int_equal(n, 1);
    g_byte_array_free(a, TRUE);
}

/* One v4 op record of the given `ops` and `ops_more` TLVs read: its status, and the
 * record into *rec when it reads (skip: fields the reader skips). */
static int raw_v4(const void *tlvs, size_t len, uint64_t skip, struct tbbt_trace_rec *rec)
{
    GByteArray *a = raw_new(1);
    struct tbbt_trace_reader *r;
    int err = 0, rc;

    raw_handle(a, 0, "\xaa\xbb", 2);
    raw_endpoint(a, 0);
    raw_op(a, 0, tlvs, len);
    raw_end(a, 1, 1, 1);
    r = tbbt_trace_reader_open_mem(a->data, a->len, &err);
    assert_non_null(r);
    tbbt_trace_reader_skip_fields(r, skip);
    rc = tbbt_trace_reader_next(r, rec);
    tbbt_trace_reader_close(r);
    g_byte_array_free(a, TRUE);
    return rc;
}

/* The TLV tags of the first op record of binary trace file path, as a bit set. */
static uint64_t op_tags(const char *path)
{
    gchar *d = NULL;
    gsize n = 0;
    uint64_t tags = 0;

    assert_true(g_file_get_contents(path, &d, &n, NULL));
    for (gsize at = 16; at + 5 <= n;) {
        const uint8_t *p = (const uint8_t *)d + at;
        uint32_t len = p[1] | p[2] << 8 | p[3] << 16 | (uint32_t)p[4] << 24;
        if (p[0] == TBBT_REC_OP) {
            for (uint32_t i = 41; i + 2 <= len;) {
                assert_true(p[5 + i + 1] < 0x80);       /* short values only */
                tags |= (uint64_t)1 << p[5 + i];
                i += 2 + p[5 + i + 1];
            }
            break;
        }
        at += 5 + len;
    }
    g_free(d);
    return tags;
}

/*
 * Format 1.3: the members since 1.3 go to tag 41 `ops_more`, folded into `ops` on
 * reading; a record without such members has no tag 41 (a 1.2 reader reads it all);
 * a reader that skips `ops` skips `ops_more`; a bad `ops_more` is an error.
 */
static void test_ops_more(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_trace_rec rec;
    const uint64_t skip_ops = (uint64_t)1 << TBBT_F_OPS;

    tbbt_trace_rec_init(&rec);
    /* ops: 1 op, PUTFH, has fh, fh 0; ops_more: 1 op, has dircount|flags, 64, 5 */
    assert_int_equal(raw_v4("\x28\x04\x01\x16\x02\x00\x29\x04\x01\x03\x40\x05", 12, 0, &rec),
                     1);
    assert_int_equal(rec.n_ops, 1);
    assert_true(TBBT_O4_HAS(&rec.ops[0], FH) && TBBT_O4_HAS(&rec.ops[0], DIRCOUNT) &&
                TBBT_O4_HAS(&rec.ops[0], FLAGS) && !TBBT_O4_HAS(&rec.ops[0], FORE_SLOTS));
    assert_int_equal(rec.ops[0].dircount, 64);
    assert_int_equal(rec.ops[0].flags, 5);
    assert_false(TBBT_HAS(&rec, TBBT_F_OPS_MORE));      /* never present */
    /* a reader that skips ops skips ops_more, even a bad one */
    assert_int_equal(raw_v4("\x28\x04\x01\x16\x02\x00\x29\x01\x07", 9, skip_ops, &rec), 1);
    assert_int_equal(rec.n_ops, 0);
    /* counts differ; ops_more without ops; a bit no member has; a value cut short */
    assert_int_equal(raw_v4("\x28\x04\x01\x16\x02\x00\x29\x03\x02\x00\x00", 11, 0, &rec),
                     TBBT_E_BADREC);
    assert_int_equal(raw_v4("\x29\x02\x00\x00", 4, 0, &rec), TBBT_E_BADREC);
    assert_int_equal(raw_v4("\x28\x04\x01\x16\x02\x00\x29\x03\x01\x80\x02", 11, 0, &rec),
                     TBBT_E_BADREC);
    assert_int_equal(raw_v4("\x28\x04\x01\x16\x02\x00\x29\x03\x01\x01\x80", 11, 0, &rec),
                     TBBT_E_BADREC);
    /* in ops, a bit past TRUNC is an error, as for a 1.2 reader */
    assert_int_equal(raw_v4("\x28\x07\x01\x16\x80\x80\x80\x80\x10", 9, 0, &rec), TBBT_E_BADREC);
    /* the writer: tag 41 only when an op has a member since 1.3 */
    struct tbbt_endpoint ep = make_ep("10.0.0.2", 812, "10.0.0.1", 2049, true);
    tbbt_eptab_intern(fx->ep, &ep);
    for (int more = 0; more < 2; more++) {
        int err = 0;
        struct tbbt_trace_writer *w = tbbt_trace_writer_open(fx->path, fx->fh, fx->ep, &err);
        assert_non_null(w);
        tbbt_trace_rec_clear(&rec);
        rec.prog = TBBT_PROG_NFS4;
        rec.proc = 1;
        struct tbbt_op4 *o = tbbt_trace_rec_add_op4(&rec);
        o->op = 26;                 /* READDIR */
        o->count = 8192;
        TBBT_O4_SET(o, COUNT);
        if (more) {
            o->dircount = 1024;
            TBBT_O4_SET(o, DIRCOUNT);
        }
        TBBT_SET(&rec, TBBT_F_OPS);
        assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
        assert_int_equal(tbbt_trace_writer_close(w), 0);
        assert_int_equal(op_tags(fx->path), (uint64_t)1 << TBBT_F_OPS |
                                            (uint64_t)more << TBBT_F_OPS_MORE);
    }
    /* the text form: members since 1.3 inside ops, in member order; no ops_more key */
    gchar *dumped = NULL;
    uint64_t line;
    FILE *f = fopen(fx->text, "w");
    assert_int_equal(tbbt_trace_dump(fx->path, f), 0);
    fclose(f);
    assert_true(g_file_get_contents(fx->text, &dumped, NULL, NULL));
    assert_non_null(strstr(dumped, " ops=[{op=READDIR,count=8192,dircount=1024}]\n"));
    assert_int_equal(tbbt_trace_from_text(fx->text, fx->path2, &line), 0);
    assert_int_equal(op_tags(fx->path2), (uint64_t)1 << TBBT_F_OPS |
                                         (uint64_t)1 << TBBT_F_OPS_MORE);
    g_free(dumped);
    static const char with_key[] = "# tbbt-trace 1.3\nep 0 tcp 1.2.3.4:1 1.2.3.4:2\n"
                                   "op 1.0 2.0 v4 compound ops=[{op=PUTROOTFH}] ops_more=[]\n"
                                   "end 1\n";
    spit(fx->text, with_key, sizeof with_key - 1);
    assert_int_equal(tbbt_trace_from_text(fx->text, fx->path2, &line), TBBT_E_SYNTAX);
    assert_int_equal(line, 3);
    tbbt_trace_rec_fini(&rec);
}

static void test_bad_records(void **state)
{
    (void)state;
    /* undefined handle 1 (only 0 is defined) */
    assert_int_equal(raw_one_op("\x00\x01\x01", 3, NULL), TBBT_E_BADREC);
    /* entry with an undefined handle */
    assert_int_equal(raw_one_op("\x20\x06\x01\x01\x01\x00\x01\x05", 8, NULL), TBBT_E_BADREC);
    /* tags out of order, duplicate tag */
    assert_int_equal(raw_one_op("\x05\x01\x01\x04\x01\x01", 6, NULL), TBBT_E_BADREC);
    assert_int_equal(raw_one_op("\x05\x01\x01\x05\x01\x01", 6, NULL), TBBT_E_BADREC);
    /* a TLV length past the record, a varint not minimal, a u32 overflow */
    assert_int_equal(raw_one_op("\x05\x09\x01", 3, NULL), TBBT_E_BADREC);
    assert_int_equal(raw_one_op("\x05\x02\x81\x00", 4, NULL), TBBT_E_BADREC);
    assert_int_equal(raw_one_op("\x05\x05\xff\xff\xff\xff\x1f", 7, NULL), TBBT_E_BADREC);
    /* varints: the largest u64 is fine, one bit more is not */
    assert_int_equal(raw_one_op("\x04\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 12, NULL), 0);
    assert_int_equal(raw_one_op("\x04\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 12, NULL),
                     TBBT_E_BADREC);
    assert_int_equal(raw_one_op("\x04\x0b\xff\xff\xff\xff\xff\xff\xff\xff\xff\x81\x00", 13,
                                NULL),
                     TBBT_E_BADREC);
    /* value shorter or longer than its TLV */
    assert_int_equal(raw_one_op("\x05\x02\x01\x01", 4, NULL), TBBT_E_BADREC);
    assert_int_equal(raw_one_op("\x0b\x07" "1234567", 9, NULL), TBBT_E_BADREC);
    /* info with 13 values, entries count larger than the bytes */
    uint8_t info[16] = {0x21, 14, 13};
    assert_int_equal(raw_one_op(info, 16, NULL), TBBT_E_BADREC);
    assert_int_equal(raw_one_op("\x20\x03\xff\xff\x03", 5, NULL), TBBT_E_BADREC);
    /* unknown entry flag; the TBBT-ID flag without its value; the TBBT-ID flag with it */
    assert_int_equal(raw_one_op("\x20\x05\x01\x01\x01\x00\x08", 7, NULL), TBBT_E_BADREC);
    assert_int_equal(raw_one_op("\x20\x05\x01\x01\x01\x00\x04", 7, NULL), TBBT_E_BADREC);
    assert_int_equal(raw_one_op("\x20\x06\x01\x01\x01\x00\x04\x2a", 8, NULL), 0);
    /* name of 256 bytes, then 255 is fine */
    uint8_t name[3 + 256] = {0x01, 0x80, 0x02};
    memset(name + 3, '/', 256);
    assert_int_equal(raw_one_op(name, sizeof(name), NULL), TBBT_E_BADREC);
    name[1] = 0xff;
    name[2] = 0x01;
    assert_int_equal(raw_one_op(name, sizeof(name) - 1, NULL), 0);
    /* a good one for contrast: fh=0, count=1 */
    assert_int_equal(raw_one_op("\x00\x01\x00\x05\x01\x01", 6, NULL), 0);

    /* op before its endpoint is defined; handle with a bad length; endpoint bad transport */
    GByteArray *a = raw_new(1);
    raw_op(a, 0, "", 0);
    uint64_t n;
    assert_int_equal(read_to_end(a->data, a->len, &n), TBBT_E_BADREC);
    g_byte_array_free(a, TRUE);
    a = raw_new(1);
    raw_rec(a, TBBT_REC_HANDLE, "\x00\x00\x00\x00\x41", 5);
    assert_int_equal(read_to_end(a->data, a->len, &n), TBBT_E_BADREC);
    g_byte_array_free(a, TRUE);
    a = raw_new(1);
    raw_rec(a, TBBT_REC_ENDPOINT, "\x00\x00\x00\x00\x07\x01\x00\x02\x00\x01" "a\x01" "b", 13);
    assert_int_equal(read_to_end(a->data, a->len, &n), TBBT_E_BADREC);
    g_byte_array_free(a, TRUE);
    /* a record length over the maximum */
    a = raw_new(1);
    g_byte_array_append(a, (const uint8_t *)"\x03\xff\xff\xff\x7f", 5);
    assert_int_equal(read_to_end(a->data, a->len, &n), TBBT_E_BADREC);
    g_byte_array_free(a, TRUE);
    /* trailer counts that do not match */
    a = raw_new(1);
    raw_endpoint(a, 0);
    raw_end(a, 1, 0, 1);
    assert_int_equal(read_to_end(a->data, a->len, &n), TBBT_E_BADREC);
    g_byte_array_free(a, TRUE);
}

/* Random byte flips of a valid trace: errors, never a crash (ASan checks the rest). */
static void test_mutations(void **state)
{
    struct fixture *fx = *state;
    size_t len;
    uint8_t *data, *copy;
    uint64_t n;
    GRand *rnd = g_rand_new_with_seed(42);

    write_all_fields(fx, 2);
    data = slurp(fx->path, &len);
    copy = g_malloc(len);
    for (int i = 0; i < 3000; i++) {
        memcpy(copy, data, len);
        for (int k = g_rand_int_range(rnd, 1, 4); k > 0; k--)
            copy[g_rand_int_range(rnd, 0, (gint32)len)] = (uint8_t)g_rand_int(rnd);
        int rc = read_to_end(copy, len, &n);
        assert_true(rc <= 0);
    }
    g_free(copy);
    g_free(data);
    g_rand_free(rnd);
}

/* ---- tests: text form -------------------------------------------------------------- */

/* Dumps fx->path to fx->text, converts back to fx->path2 and compares the bytes. */
static void assert_text_roundtrip(struct fixture *fx)
{
    FILE *f = fopen(fx->text, "w");
    size_t a_len, b_len;
    uint8_t *a, *b;
    uint64_t line;
    char why[200];

    assert_non_null(f);
    assert_int_equal(tbbt_trace_dump(fx->path, f), 0);
    fclose(f);
    int rc = tbbt_trace_from_text_why(fx->text, fx->path2, &line, why, sizeof(why));
    if (rc != 0)
        fail_msg("from_text: %s at line %llu: %s", tbbt_strerror(rc), (unsigned long long)line,
                 why);
    a = slurp(fx->path, &a_len);
    b = slurp(fx->path2, &b_len);
    assert_int_equal(a_len, b_len);
    assert_memory_equal(a, b, a_len);
    g_free(a);
    g_free(b);
}

static void test_text_roundtrip(void **state)
{
    struct fixture *fx = *state;

    write_all_fields(fx, 40);
    assert_text_roundtrip(fx);
}

static void test_text_hostile_strings(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_fhtab *fh = tbbt_fhtab_new();
    struct tbbt_eptab *ep = tbbt_eptab_new();
    struct tbbt_endpoint e6 = make_ep("fe80::1%eth0", 65535, "::ffff:10.0.0.1", 0, false);
    struct tbbt_trace_rec rec, got;
    char all[256], name[TBBT_NAME_MAX];
    int err = 0;
    struct tbbt_trace_writer *w = tbbt_trace_writer_open(fx->path, fh, ep, &err);
    static const char *const hostile[] = {"", "/", "..", "a/b", "\n", "\"", "\\", "=", " ",
                                          "x=1 y=\"2\"", "\\x41", "#", "]}", "\x7f\x80\xff"};

    assert_non_null(w);
    for (int i = 0; i < 256; i++)
        all[i] = (char)i;
    for (int i = 0; i < TBBT_NAME_MAX; i++)
        name[i] = all[(i * 7) % 256];
    tbbt_trace_rec_init(&rec);
    tbbt_trace_rec_init(&got);
    rec.endpoint = tbbt_eptab_intern(ep, &e6);
    rec.prog = TBBT_PROG_NFS2;
    rec.proc = 9;
    TBBT_SET(&rec, TBBT_F_NAME);
    TBBT_SET(&rec, TBBT_F_TARGET);
    for (size_t i = 0; i < G_N_ELEMENTS(hostile); i++) {
        tbbt_trace_rec_set_str(&rec, &rec.name, hostile[i], (uint32_t)strlen(hostile[i]));
        tbbt_trace_rec_set_str(&rec, &rec.target, all, sizeof(all));
        assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    }
    tbbt_trace_rec_set_str(&rec, &rec.name, name, sizeof(name));
    tbbt_fhtab_intern(fh, "", 0);
    tbbt_fhtab_intern(fh, "\x00\x00", 2);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    tbbt_trace_rec_set_str(&rec, &rec.name, name, sizeof(name));
    rec.name.len = TBBT_NAME_MAX + 1;
    assert_int_equal(tbbt_trace_writer_put(w, &rec), TBBT_E_RANGE);
    assert_int_equal(tbbt_trace_writer_close(w), 0);
    assert_text_roundtrip(fx);

    /* and the strings read back intact */
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(fx->path2, &err);
    assert_non_null(r);
    for (size_t i = 0; i <= G_N_ELEMENTS(hostile); i++) {
        assert_int_equal(tbbt_trace_reader_next(r, &got), 1);
        if (i < G_N_ELEMENTS(hostile)) {
            assert_int_equal(got.name.len, strlen(hostile[i]));
            assert_memory_equal(got.name.p, hostile[i], got.name.len);
        } else {
            assert_int_equal(got.name.len, TBBT_NAME_MAX);
            assert_memory_equal(got.name.p, name, TBBT_NAME_MAX);
        }
        assert_int_equal(got.target.len, 256);
        assert_memory_equal(got.target.p, all, 256);
    }
    assert_int_equal(tbbt_trace_reader_next(r, &got), 0);
    assert_string_equal(tbbt_eptab_get(tbbt_trace_reader_eptab(r), 0)->client, "fe80::1%eth0");
    tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_rec_fini(&got);
    tbbt_fhtab_free(fh);
    tbbt_eptab_free(ep);
}

static void test_format_rec(void **state)
{
    struct tbbt_trace_rec rec;
    GString *s = g_string_new(NULL);
    (void)state;

    tbbt_trace_rec_init(&rec);
    rec.call_ns = 1700000000000120000ull;
    rec.reply_ns = 1700000000000950000ull;
    rec.prog = TBBT_PROG_NFS3;
    rec.proc = 6;
    rec.xid = 0x0a1b2c3d;
    rec.endpoint = 1;
    rec.flags = TBBT_RF_REPLY | TBBT_RF_STATUS | TBBT_RF_TCP;
    rec.status = 2;
    TBBT_SET(&rec, TBBT_F_FH);
    rec.fh = 3;
    TBBT_SET(&rec, TBBT_F_OFFSET);
    rec.offset = 16384;
    TBBT_SET(&rec, TBBT_F_NAME);
    tbbt_trace_rec_set_str(&rec, &rec.name, "a \"b\"\0", 6);
    tbbt_trace_format_rec(s, &rec);
    assert_string_equal(s->str, "op 1700000000.000120000 1700000000.000950000 v3 read "
                                "xid=0x0a1b2c3d ep=1 uid=0 gid=0 flags=reply|status|tcp "
                                "rpc=success status=NOENT fh=3 name=\"a \\\"b\\\"\\x00\" "
                                "offset=16384");
    g_string_truncate(s, 0);
    tbbt_trace_rec_clear(&rec);
    rec.prog = 9;
    rec.proc = 200;
    rec.flags = 0x8000;
    rec.status = -5;
    tbbt_trace_format_rec(s, &rec);
    assert_string_equal(s->str, "op 0.000000000 0.000000000 9 200 xid=0x00000000 ep=0 uid=0 "
                                "gid=0 flags=0x8000 status=-5");
    g_string_free(s, TRUE);
    tbbt_trace_rec_fini(&rec);
}

struct syntax_case {
    const char *text;
    int err;
    uint64_t line;
    const char *why;    /* a substring of the reason */
};

#define HDR "# tbbt-trace 1.0\n"
#define EP0 "ep 0 tcp 127.0.0.1:812 127.0.0.1:2049\n"
#define OPV3 "op 1.000000000 2.000000000 v3 getattr ep=0"

static const struct syntax_case syntax_cases[] = {
    {"", TBBT_E_SYNTAX, 1, "missing header"},
    {"op 1.0 2.0 v3 null\nend 1\n", TBBT_E_SYNTAX, 1, "missing header"},
    {"# tbbt-trace 2.0\nend 0\n", TBBT_E_VERSION, 1, "not supported"},
    {"# tbbt-trace 1.4\nend 0\n", TBBT_E_VERSION, 1, "not supported"},
    {"# tbbt-trace 1.0 x\nend 0\n", TBBT_E_SYNTAX, 1, "unexpected"},
    {HDR, TBBT_E_SYNTAX, 1, "missing 'end 0'"},
    {HDR EP0 OPV3 "\n", TBBT_E_SYNTAX, 3, "missing 'end 1'"},
    {HDR EP0 OPV3 "\nend 2\n", TBBT_E_SYNTAX, 4, "end says 2"},
    {HDR "end 0\n" EP0, TBBT_E_SYNTAX, 3, "after the end"},
    {HDR "\n# comment\n" EP0 "\n" OPV3 " bogus=1\nend 1\n", TBBT_E_SYNTAX, 6,
     "unknown key 'bogus'"},
    {HDR EP0 OPV3 " count=12x\nend 1\n", TBBT_E_SYNTAX, 3, "bad number for count"},
    {HDR EP0 OPV3 " count=4294967296\nend 1\n", TBBT_E_SYNTAX, 3, "out of range"},
    {HDR EP0 OPV3 " count=012\nend 1\n", TBBT_E_SYNTAX, 3, "bad number"},
    {HDR EP0 OPV3 " count=1 count=2\nend 1\n", TBBT_E_SYNTAX, 3, "duplicate key 'count'"},
    {HDR EP0 OPV3 " xid=1 xid=2\nend 1\n", TBBT_E_SYNTAX, 3, "duplicate key 'xid'"},
    {HDR EP0 OPV3 " fh=0\nend 1\n", TBBT_E_SYNTAX, 3, "undefined handle 0"},
    {HDR EP0 "op 1.0 2.0 v3 getattr ep=1\nend 1\n", TBBT_E_SYNTAX, 3, "undefined endpoint"},
    {HDR EP0 "op 1.0 2.0 v3 getattr\n", TBBT_E_SYNTAX, 3, "missing 'end 1'"},
    {HDR EP0 "op 1.0 2.0 v3 frobnicate ep=0\nend 1\n", TBBT_E_SYNTAX, 3, "unknown procedure"},
    {HDR EP0 "op 1.0 2.0 v9 null ep=0\nend 1\n", TBBT_E_SYNTAX, 3, "unknown program"},
    {HDR EP0 "op 1.0 v3 null ep=0\nend 1\n", TBBT_E_SYNTAX, 3, "bad time"},
    {HDR EP0 "op 1.0123456789 2.0 v3 null ep=0\nend 1\n", TBBT_E_SYNTAX, 3, "bad time"},
    {HDR EP0 OPV3 " name=\"abc\nend 1\n", TBBT_E_SYNTAX, 3, "unterminated"},
    {HDR EP0 OPV3 " name=\"a\\q\"\nend 1\n", TBBT_E_SYNTAX, 3, "unknown escape"},
    {HDR EP0 OPV3 " name=\"a\\x4\"\nend 1\n", TBBT_E_SYNTAX, 3, "bad \\x escape"},
    {HDR EP0 OPV3 " name=\"a\tb\"\nend 1\n", TBBT_E_SYNTAX, 3, "control byte"},
    {HDR EP0 OPV3 " name=abc\nend 1\n", TBBT_E_SYNTAX, 3, "quoted string"},
    {HDR EP0 OPV3 " name=\"a\"b\nend 1\n", TBBT_E_SYNTAX, 3, "expected a blank"},
    {HDR EP0 OPV3 " status=NOPE\nend 1\n", TBBT_E_SYNTAX, 3, "unknown status"},
    {HDR EP0 OPV3 " flags=reply|nope\nend 1\n", TBBT_E_SYNTAX, 3, "unknown flags"},
    {HDR EP0 OPV3 " obj_attr={type=1,type=2}\nend 1\n", TBBT_E_SYNTAX, 3, "duplicate key 'type'"},
    {HDR EP0 OPV3 " obj_attr={type=1,colour=2}\nend 1\n", TBBT_E_SYNTAX, 3, "unknown key"},
    {HDR EP0 OPV3 " obj_attr={mode=644}\nend 1\n", TBBT_E_SYNTAX, 3, "octal"},
    {HDR EP0 OPV3 " obj_attr={type=1\nend 1\n", TBBT_E_SYNTAX, 3, "expected '}'"},
    {HDR EP0 OPV3 " info=[1,2,3,4,5,6,7,8,9,10,11,12,13]\nend 1\n", TBBT_E_SYNTAX, 3,
     "more than 12"},
    {HDR EP0 OPV3 " entries=[{name=\"a\",name=\"b\"}]\nend 1\n", TBBT_E_SYNTAX, 3, "duplicate"},
    {HDR "fh 1 00\nend 0\n", TBBT_E_SYNTAX, 2, "out of order"},
    {HDR "fh 0 0\nend 0\n", TBBT_E_SYNTAX, 2, "in hex"},
    {HDR "fh 0 00\nfh 1 00\nend 0\n", TBBT_E_SYNTAX, 3, "duplicates"},
    {HDR "fh 0 "
         "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
         "00000000000000000000000000000000000000000000\nend 0\n",
     TBBT_E_SYNTAX, 2, "in hex"},
    {HDR "ep 0 sctp 1.2.3.4:1 1.2.3.4:2\nend 0\n", TBBT_E_SYNTAX, 2, "tcp or udp"},
    {HDR "ep 0 tcp 1.2.3.4:1 ::1:2\nend 0\n", TBBT_E_SYNTAX, 2, "bad address"},
    {HDR "ep 0 tcp 1.2.3.4:1 1.2.3.4:65536\nend 0\n", TBBT_E_SYNTAX, 2, "out of range"},
    {HDR "ep 0 tcp 1.2.3.4 1.2.3.4:2\nend 0\n", TBBT_E_SYNTAX, 2, "expected ':'"},
    {HDR "frob 1\nend 0\n", TBBT_E_SYNTAX, 2, "unknown line type"},
    /* credentials (format 1.1; a 1.0 header is accepted too) */
    {HDR "cred 1 \"h\" 1 2 -\nend 0\n", TBBT_E_SYNTAX, 2, "out of order"},
    {HDR "cred 0 \"h\" 1 2 -\ncred 1 \"h\" 1 2 -\nend 0\n", TBBT_E_SYNTAX, 3, "duplicates"},
    {HDR "cred 0 \"h\" 1 2 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17\nend 0\n",
     TBBT_E_SYNTAX, 2, "more than 16 gids"},
    {HDR "cred 0 h 1 2 -\nend 0\n", TBBT_E_SYNTAX, 2, "quoted string"},
    {HDR "cred 0 \"h\" 1 2\nend 0\n", TBBT_E_SYNTAX, 2, "missing gids"},
    {HDR "cred 0 \"h\" 1 -\nend 0\n", TBBT_E_SYNTAX, 2, "bad number for gid"},
    {HDR "cred 0 \"h\" 1 2 3,\nend 0\n", TBBT_E_SYNTAX, 2, "bad number for gid"},
    {HDR "cred 0 \"h\" 1 2 - x\nend 0\n", TBBT_E_SYNTAX, 2, "unexpected"},
    {HDR "cred 0 \"h\" 1 4294967296 -\nend 0\n", TBBT_E_SYNTAX, 2, "out of range"},
    {HDR EP0 OPV3 " cred=0\nend 1\n", TBBT_E_SYNTAX, 3, "undefined credential 0"},
    {HDR EP0 "cred 0 \"h\" 1 2 -\n" OPV3 " cred=1\nend 1\n", TBBT_E_SYNTAX, 4,
     "undefined credential 1"},
    {HDR EP0 "cred 0 \"h\" 1 2 -\n" OPV3 " cred=0 cred=0\nend 1\n", TBBT_E_SYNTAX, 4,
     "duplicate key 'cred'"},
};

static void test_text_syntax_errors(void **state)
{
    struct fixture *fx = *state;
    char why[256];
    uint64_t line;

    for (size_t i = 0; i < G_N_ELEMENTS(syntax_cases); i++) {
        const struct syntax_case *c = &syntax_cases[i];
        spit(fx->text, c->text, strlen(c->text));
        int rc = tbbt_trace_from_text_why(fx->text, fx->path2, &line, why, sizeof(why));
        if (rc != c->err || line != c->line || !strstr(why, c->why))
            fail_msg("case %zu: got %d line %llu '%s', want %d line %llu '%s'", i, rc,
                     (unsigned long long)line, why, c->err, (unsigned long long)c->line, c->why);
        assert_int_equal(access(fx->path2, F_OK), -1);  /* no partial output left */
    }
    /* a minimal valid text; header fields default to 0; tabs and trailing blanks are fine */
    static const char ok[] = HDR "# note\n" EP0 "op\t1.5 2.000000001  v3 null  ep=0 \nend 1\n";
    spit(fx->text, ok, strlen(ok));
    assert_int_equal(tbbt_trace_from_text(fx->text, fx->path2, &line), 0);
    assert_int_equal(tbbt_trace_from_text("/nonexistent.txt", fx->path2, &line), -ENOENT);
}

/* Drops comment and blank lines, but keeps the header line. */
static char *normalize(const char *text)
{
    char **lines = g_strsplit(text, "\n", -1);
    GString *s = g_string_new(NULL);

    for (int i = 0; lines[i]; i++) {
        const char *l = lines[i];
        if (i > 0 && (l[0] == '\0' || l[0] == '#'))
            continue;
        g_string_append_printf(s, "%s\n", l);
    }
    g_strfreev(lines);
    return g_string_free(s, FALSE);
}

static void test_golden_basic(void **state)
{
    struct fixture *fx = *state;
    const char *golden = TBBT_GOLDEN_DIR "/basic.txt";
    char why[256];
    uint64_t line;
    gchar *want_text = NULL, *got_text = NULL;
    int rc = tbbt_trace_from_text_why(golden, fx->path, &line, why, sizeof(why));

    if (rc != 0)
        fail_msg("%s: %s at line %llu: %s", golden, tbbt_strerror(rc), (unsigned long long)line,
                 why);
    FILE *f = fopen(fx->text, "w");
    assert_int_equal(tbbt_trace_dump(fx->path, f), 0);
    fclose(f);
    assert_true(g_file_get_contents(golden, &want_text, NULL, NULL));
    assert_true(g_file_get_contents(fx->text, &got_text, NULL, NULL));
    char *want = normalize(want_text);
    assert_string_equal(got_text, want);
    /* the fixture covers every procedure of every program */
    struct tbbt_trace_rec rec;
    int err = 0, seen[5][32] = {{0}};
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(r, &rec)) > 0)
        seen[rec.prog][rec.proc % 32] = 1;
    assert_int_equal(rc, 0);
    for (int prog = TBBT_PROG_NFS2; prog <= TBBT_PROG_MNT3; prog++)
        for (int p = 0; p < tbbt_prog_nprocs(prog); p++)
            if (!seen[prog][p])
                fail_msg("basic.txt lacks %s %s", tbbt_prog_name(prog), tbbt_proc_name(prog, p));
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    g_free(want);
    g_free(want_text);
    g_free(got_text);
    assert_text_roundtrip(fx);
}

/*
 * tests/regress/trace-*.tbbt: inputs that once broke the reader or the text
 * round trip.  Each is read as is and with its CRC fixed (as the fuzzer
 * does); whatever the reader accepts must survive dump -> from-text.
 */
static void test_regressions(void **state)
{
    struct fixture *fx = *state;
    GDir *dir = g_dir_open(TBBT_REGRESS_DIR, 0, NULL);
    const char *name;
    int n = 0;

    assert_non_null(dir);
    while ((name = g_dir_read_name(dir))) {
        char *path;
        uint8_t *data;
        size_t len;
        uint64_t nrecs;

        if (!g_str_has_prefix(name, "trace-") || !g_str_has_suffix(name, ".tbbt"))
            continue;
        path = g_build_filename(TBBT_REGRESS_DIR, name, NULL);
        data = slurp(path, &len);
        for (int fix = 0; fix < 2; fix++) {
            if (fix && len >= 25) {
                uint32_t crc = (uint32_t)crc32(0, data, (uInt)(len - 25));
                for (int i = 0; i < 4; i++)
                    data[len - 4 + i] = (uint8_t)(crc >> (8 * i));
            }
            int rc = read_to_end(data, len, &nrecs);
            assert_true(rc <= 0);
            if (rc == 0) {
                spit(fx->path, data, len);
                assert_text_roundtrip(fx);
            }
        }
        n++;
        g_free(data);
        g_free(path);
    }
    g_dir_close(dir);
    assert_true(n > 0);
}

/* Readdir entries carry TBBT-IDs (TBBT_ENT_ID): binary, text and back. */
/*
 * The record spill (trace/spill.h): a record comes back as a trace round trip
 * gives it, with its two numbers; a spill without its end mark, or with a
 * length that does not add up, is refused.
 */
static void test_spill(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_trace_rec want, got, via_trace;
    struct tbbt_spill_writer *w;
    struct tbbt_spill_reader *r;
    struct tbbt_trace_reader *tr;
    struct tbbt_spill_defs d;
    gchar *data;
    gsize len;
    int err = 0;

    tbbt_trace_rec_init(&want);
    tbbt_trace_rec_init(&got);
    tbbt_trace_rec_init(&via_trace);
    write_all_fields(fx, 30);
    w = tbbt_spill_writer_open(fx->path2, &err);
    assert_non_null(w);
    for (int i = 0; i < 30; i++) {
        fill_all(&want, (uint64_t)i);
        want.obj_attr.type = 99;               /* not present: must not come back */
        want.present &= ~((uint64_t)1 << TBBT_F_OBJ_ATTR);
        d = (struct tbbt_spill_defs){(uint32_t)i, (uint32_t)(2 * i), (uint32_t)(3 * i)};
        assert_int_equal(tbbt_spill_put(w, &want, &d), 0);
    }
    assert_int_equal(tbbt_spill_writer_count(w), 30);
    assert_int_equal(tbbt_spill_writer_close(w), 0);
    r = tbbt_spill_reader_open(fx->path2, false, &err);
    assert_non_null(r);
    tr = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(tr);
    for (int i = 0; i < 30; i++) {
        assert_int_equal(tbbt_spill_peek(r, &d), 1);
        assert_int_equal(d.nfh, (uint32_t)i);
        assert_int_equal(d.ncred, (uint32_t)(3 * i));
        memset(&d, 0xff, sizeof d);
        assert_int_equal(tbbt_spill_next(r, &got, &d), 1);
        assert_int_equal(d.nfh, (uint32_t)i);
        assert_int_equal(d.nep, (uint32_t)(2 * i));
        assert_int_equal(d.ncred, (uint32_t)(3 * i));
        assert_int_equal(tbbt_trace_reader_next(tr, &via_trace), 1);
        via_trace.present &= ~((uint64_t)1 << TBBT_F_OBJ_ATTR);
        memset(&via_trace.obj_attr, 0, sizeof via_trace.obj_attr);
        assert_rec_equal(&via_trace, &got);
        assert_int_equal(got.obj_attr.type, 0);
    }
    assert_int_equal(tbbt_spill_peek(r, &d), 0);
    assert_int_equal(tbbt_spill_next(r, &got, &d), 0);
    assert_int_equal(tbbt_spill_next(r, &got, &d), 0);
    tbbt_spill_reader_close(r);
    tbbt_trace_reader_close(tr);
    /* cut anywhere: the records before the cut, then an error, never a clean end */
    assert_true(g_file_get_contents(fx->path2, &data, &len, NULL));
    for (gsize cut = 0; cut < len; cut += 1 + cut / 8) {
        int rc, n = 0;
        spit(fx->path, data, cut);
        r = tbbt_spill_reader_open(fx->path, false, &err);
        assert_non_null(r);
        while ((rc = tbbt_spill_next(r, &got, &d)) == 1)
            n++;
        assert_int_equal(rc, TBBT_E_TRUNC);
        assert_true(n < 30);
        tbbt_spill_reader_close(r);
    }
    /* a body length that does not match what its fields take */
    data[0] = (gchar)(data[0] + 4);
    spit(fx->path, data, len);
    r = tbbt_spill_reader_open(fx->path, false, &err);
    assert_non_null(r);
    assert_int_equal(tbbt_spill_next(r, &got, &d), TBBT_E_BADREC);
    tbbt_spill_reader_close(r);
    g_free(data);
    tbbt_trace_rec_fini(&want);
    tbbt_trace_rec_fini(&got);
    tbbt_trace_rec_fini(&via_trace);
}

/*
 * A spill read with consume: holes are punched behind the reader (every 4 MiB)
 * and every record still comes back whole, across buffer refills.
 */
static void test_spill_consume(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_trace_rec want, got;
    struct tbbt_spill_writer *w;
    struct tbbt_spill_reader *r;
    struct tbbt_spill_defs d = {0, 0, 0};
    struct stat st;
    int err = 0, n = 0;

    (void)state;
    tbbt_trace_rec_init(&want);
    tbbt_trace_rec_init(&got);
    w = tbbt_spill_writer_open(fx->path2, &err);
    assert_non_null(w);
    do {
        fill_all(&want, (uint64_t)n);
        d.nfh = (uint32_t)n;
        assert_int_equal(tbbt_spill_put(w, &want, &d), 0);
        n++;
    } while (tbbt_spill_writer_count(w) < 30000);
    assert_int_equal(tbbt_spill_writer_close(w), 0);
    assert_int_equal(stat(fx->path2, &st), 0);
    assert_true(st.st_size > 9 * (1 << 20));   /* at least two holes */
    r = tbbt_spill_reader_open(fx->path2, true, &err);
    assert_non_null(r);
    for (int i = 0; i < n; i++) {
        fill_all(&want, (uint64_t)i);
        assert_int_equal(tbbt_spill_next(r, &got, &d), 1);
        assert_int_equal(d.nfh, (uint32_t)i);
        assert_rec_equal(&want, &got);
    }
    assert_int_equal(tbbt_spill_next(r, &got, &d), 0);
    /* what was read is a hole now (ext4, xfs and tmpfs punch holes) */
    assert_int_equal(stat(fx->path2, &st), 0);
    assert_true((uint64_t)st.st_blocks * 512 < (uint64_t)st.st_size / 2);
    tbbt_spill_reader_close(r);
    tbbt_trace_rec_fini(&want);
    tbbt_trace_rec_fini(&got);
}

/* Every varint width the writer's word-at-a-time encoder takes, around each power of two. */
static void test_varint_widths(void **state)
{
    static const char text[] =
        HDR EP0 "fh 0 0a0b\n"
        "op 1.000000000 2.000000000 v3 getattr ep=0 flags=reply|status rpc=success "
        "status=OK fh=0 obj_attr={type=1}\nend 1\n";
    struct fixture *fx = *state;
    struct tbbt_trace_reader *r;
    struct tbbt_trace_writer *w;
    struct tbbt_trace_rec rec, got;
    uint64_t line = 0, vals[64 * 3];
    int err = 0, n = 0;

    for (int k = 0; k < 64; k++) {
        vals[n++] = (UINT64_C(1) << k) - 1;
        vals[n++] = UINT64_C(1) << k;
        vals[n++] = (UINT64_C(1) << k) | (UINT64_C(0x5555555555555555) >> (63 - k));
    }
    spit(fx->text, text, strlen(text));
    assert_int_equal(tbbt_trace_from_text(fx->text, fx->path, &line), 0);
    tbbt_trace_rec_init(&rec);
    tbbt_trace_rec_init(&got);
    r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 1);
    tbbt_trace_reader_close(r);
    w = fx_writer(fx, fx->path2, &err);
    assert_non_null(w);
    struct tbbt_endpoint ep = make_ep("10.0.0.1", 1, "10.0.0.2", 2, true);
    rec.fh = tbbt_fhtab_intern(fx->fh, "\x0a\x0b", 2);
    rec.endpoint = tbbt_eptab_intern(fx->ep, &ep);
    for (int i = 0; i < n; i++) {
        rec.obj_attr.size = vals[i];
        rec.obj_attr.atime_ns = vals[(i + 7) % n];
        rec.obj_attr.fileid = vals[n - 1 - i];
        rec.obj_attr.mode = (uint32_t)vals[i % 96];
        assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    }
    assert_int_equal(tbbt_trace_writer_close(w), 0);
    r = tbbt_trace_reader_open(fx->path2, &err);
    assert_non_null(r);
    for (int i = 0; i < n; i++) {
        assert_int_equal(tbbt_trace_reader_next(r, &got), 1);
        assert_int_equal(got.obj_attr.size, vals[i]);
        assert_int_equal(got.obj_attr.atime_ns, vals[(i + 7) % n]);
        assert_int_equal(got.obj_attr.fileid, vals[n - 1 - i]);
        assert_int_equal(got.obj_attr.mode, (uint32_t)vals[i % 96]);
    }
    assert_int_equal(tbbt_trace_reader_next(r, &got), 0);
    tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_rec_fini(&got);
}

static void test_entry_ids(void **state)
{
    static const char text[] =
        HDR EP0 "fh 0 0a0b\n"
        "op 1.000000000 2.000000000 v3 readdirplus ep=0 flags=reply|status rpc=success "
        "status=OK fh=0 entries=[{fileid=5,cookie=1,name=\"a\",id=7},"
        "{fileid=6,cookie=2,name=\"b\",fh=0,attr={type=2},id=18446744073709551615},"
        "{fileid=7,cookie=3,name=\"c\"}]\nend 1\n";
    struct fixture *fx = *state;
    struct tbbt_trace_reader *r;
    struct tbbt_trace_writer *w;
    struct tbbt_trace_rec rec;
    GString *s = g_string_new(NULL);
    uint64_t line = 0;
    int err = 0;

    spit(fx->text, text, strlen(text));
    assert_int_equal(tbbt_trace_from_text(fx->text, fx->path, &line), 0);
    tbbt_trace_rec_init(&rec);
    r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 1);
    assert_int_equal(rec.n_entries, 3);
    assert_int_equal(rec.entries[0].flags, TBBT_ENT_ID);
    assert_int_equal(rec.entries[0].id, 7);
    assert_int_equal(rec.entries[1].flags, TBBT_ENT_FH | TBBT_ENT_ATTR | TBBT_ENT_ID);
    assert_int_equal(rec.entries[1].id, UINT64_MAX);
    assert_int_equal(rec.entries[2].flags, 0);
    tbbt_trace_format_rec(s, &rec);
    assert_non_null(strstr(s->str, "name=\"a\",id=7}"));
    assert_null(strstr(s->str, "name=\"c\",id="));
    tbbt_trace_reader_close(r);
    assert_text_roundtrip(fx);
    /* the writer refuses flag bits it does not know */
    w = fx_writer(fx, fx->path2, &err);
    assert_non_null(w);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    rec.entries[2].flags = 1u << 3;
    assert_int_equal(tbbt_trace_writer_put(w, &rec), TBBT_E_RANGE);
    tbbt_trace_writer_abort(w);
    g_string_free(s, TRUE);
    tbbt_trace_rec_fini(&rec);
}


/* ---- tests: credentials (format 1.1) ----------------------------------------------- */

static void test_credtab(void **state)
{
    struct tbbt_credtab *t = tbbt_credtab_new();
    struct tbbt_cred a, b, c;
    (void)state;

    make_creds(&a, &b);
    assert_int_equal(tbbt_credtab_intern(t, &a), 0);
    assert_int_equal(tbbt_credtab_intern(t, &b), 1);
    c = a;
    c.gids[TBBT_CRED_GIDS_MAX - 1]++;           /* another last gid: another credential */
    assert_int_equal(tbbt_credtab_intern(t, &c), 2);
    c = a;
    c.ngids--;                                  /* fewer gids */
    assert_int_equal(tbbt_credtab_intern(t, &c), 3);
    c = a;
    c.machine_len--;                            /* a shorter name */
    assert_int_equal(tbbt_credtab_intern(t, &c), 4);
    c = a;
    c.uid = 0;
    assert_int_equal(tbbt_credtab_intern(t, &c), 5);
    c = b;
    memset(c.machine, 'Z', sizeof(c.machine));  /* bytes past machine_len and ngids: ignored */
    memset(c.gids, 0x5a, sizeof(c.gids));
    assert_int_equal(tbbt_credtab_intern(t, &c), 1);
    assert_true(tbbt_cred_equal(&c, tbbt_credtab_get(t, 1)));
    assert_false(tbbt_cred_equal(&a, tbbt_credtab_get(t, 1)));
    c = a;
    c.machine_len = 1000;                       /* cut to the bounds */
    c.ngids = 99;
    memset(c.machine, 'm', sizeof(c.machine));
    assert_int_equal(tbbt_credtab_intern(t, &c), 6);
    assert_int_equal(tbbt_credtab_get(t, 6)->machine_len, TBBT_MACHINE_MAX);
    assert_int_equal(tbbt_credtab_get(t, 6)->ngids, TBBT_CRED_GIDS_MAX);
    assert_int_equal(tbbt_credtab_get(t, 6)->machine[TBBT_MACHINE_MAX], '\0');
    for (uint32_t i = 0; i < 5000; i++) {
        c = b;
        c.uid = i;
        c.ngids = 1;
        c.gids[0] = i;
        assert_int_equal(tbbt_credtab_intern(t, &c), 7 + i);
    }
    assert_int_equal(tbbt_credtab_count(t), 5007);
    assert_memory_equal(tbbt_credtab_get(t, 0)->machine, a.machine, a.machine_len);
    assert_int_equal(tbbt_credtab_get(t, 0)->gids[15], a.gids[15]);
    assert_null(tbbt_credtab_get(t, 5007));
    /* reader side: dense refs, no duplicates, bounds */
    struct tbbt_credtab *u = tbbt_credtab_new();
    assert_int_equal(tbbt_credtab_add(u, 1, &a), TBBT_E_BADREC);
    assert_int_equal(tbbt_credtab_add(u, 0, &a), 0);
    assert_int_equal(tbbt_credtab_add(u, 1, &a), TBBT_E_BADREC);
    c = b;
    c.ngids = TBBT_CRED_GIDS_MAX + 1;
    assert_int_equal(tbbt_credtab_add(u, 1, &c), TBBT_E_BADREC);
    c = b;
    c.machine_len = TBBT_MACHINE_MAX + 1;
    assert_int_equal(tbbt_credtab_add(u, 1, &c), TBBT_E_BADREC);
    assert_int_equal(tbbt_credtab_add(u, 1, &b), 0);
    assert_int_equal(tbbt_credtab_intern(u, &b), 1);
    assert_int_equal(tbbt_credtab_count(u), 2);
    tbbt_credtab_free(u);
    tbbt_credtab_free(t);
    tbbt_credtab_free(NULL);
}

/* A CRED record body: ref, name, uid, gid, gids (ngids may lie about their number). */
static void raw_cred(GByteArray *a, uint32_t ref, const char *name, uint8_t name_len,
                     uint32_t uid, uint32_t gid, uint8_t ngids, uint8_t have_gids)
{
    GByteArray *b = g_byte_array_new();

    raw_le(b, ref, 4);
    raw_le(b, name_len, 1);
    g_byte_array_append(b, (const uint8_t *)name, name_len);
    raw_le(b, uid, 4);
    raw_le(b, gid, 4);
    raw_le(b, ngids, 1);
    for (uint32_t i = 0; i < have_gids; i++)
        raw_le(b, 100 + i, 4);
    raw_rec(a, TBBT_REC_CRED, b->data, b->len);
    g_byte_array_free(b, TRUE);
}

/* A trace: endpoint 0, the credentials the caller added to defs, one op with tlvs. */
static int raw_cred_trace(GByteArray *defs, const void *tlvs, size_t len,
                          struct tbbt_trace_rec *rec, struct tbbt_credtab **tab)
{
    GByteArray *a = raw_new(1);
    struct tbbt_trace_reader *r;
    int err = 0, rc;

    a->data[10] = 1;        /* minor 1 */
    raw_endpoint(a, 0);
    g_byte_array_append(a, defs->data, defs->len);
    raw_op(a, 0, tlvs, len);
    raw_end(a, 1, 0, 1);
    r = tbbt_trace_reader_open_mem(a->data, a->len, &err);
    assert_non_null(r);
    rc = tbbt_trace_reader_next(r, rec);
    if (rc == 1)
        rc = tbbt_trace_reader_next(r, rec) == 0 ? 1 : -1000;
    if (tab && rc == 1) {
        struct tbbt_credtab *t = tbbt_trace_reader_credtab(r);
        *tab = tbbt_credtab_new();
        for (uint32_t i = 0; i < tbbt_credtab_count(t); i++)
            tbbt_credtab_intern(*tab, tbbt_credtab_get(t, i));
    }
    tbbt_trace_reader_close(r);
    g_byte_array_free(a, TRUE);
    return rc;
}

static void test_cred_records(void **state)
{
    struct tbbt_trace_rec rec;
    struct tbbt_credtab *tab = NULL;
    GByteArray *d = g_byte_array_new();
    char name[255];
    (void)state;

    memset(name, 'n', sizeof(name));
    name[7] = '\0';
    tbbt_trace_rec_init(&rec);
    /* two credentials, the op refers to the second: the END trailer does not count them */
    raw_cred(d, 0, "client1", 7, 1000, 100, 2, 2);
    raw_cred(d, 1, name, 255, 0, 0, 16, 16);
    assert_int_equal(raw_cred_trace(d, "\x26\x01\x01", 3, &rec, &tab), 1);
    assert_true(TBBT_HAS(&rec, TBBT_F_CRED));
    assert_int_equal(rec.cred, 1);
    assert_int_equal(tbbt_credtab_count(tab), 2);
    assert_memory_equal(tbbt_credtab_get(tab, 0)->machine, "client1", 8);
    assert_int_equal(tbbt_credtab_get(tab, 0)->gids[1], 101);
    assert_int_equal(tbbt_credtab_get(tab, 1)->machine_len, 255);
    assert_int_equal(tbbt_credtab_get(tab, 1)->machine[7], '\0');
    assert_int_equal(tbbt_credtab_get(tab, 1)->gids[15], 115);
    tbbt_credtab_free(tab);
    /* a reference to an undefined credential */
    assert_int_equal(raw_cred_trace(d, "\x26\x01\x02", 3, &rec, NULL), TBBT_E_BADREC);
    g_byte_array_set_size(d, 0);
    assert_int_equal(raw_cred_trace(d, "\x26\x01\x00", 3, &rec, NULL), TBBT_E_BADREC);
    /* the same credential twice; out of order */
    raw_cred(d, 0, "c", 1, 1, 2, 1, 1);
    raw_cred(d, 1, "c", 1, 1, 2, 1, 1);
    assert_int_equal(raw_cred_trace(d, "", 0, &rec, NULL), TBBT_E_BADREC);
    g_byte_array_set_size(d, 0);
    raw_cred(d, 1, "c", 1, 1, 2, 1, 1);
    assert_int_equal(raw_cred_trace(d, "", 0, &rec, NULL), TBBT_E_BADREC);
    /* 17 gids; a count that says more or fewer gids than the body holds; a short name */
    g_byte_array_set_size(d, 0);
    raw_cred(d, 0, "c", 1, 1, 2, 17, 17);
    assert_int_equal(raw_cred_trace(d, "", 0, &rec, NULL), TBBT_E_BADREC);
    g_byte_array_set_size(d, 0);
    raw_cred(d, 0, "c", 1, 1, 2, 3, 2);
    assert_int_equal(raw_cred_trace(d, "", 0, &rec, NULL), TBBT_E_BADREC);
    g_byte_array_set_size(d, 0);
    raw_cred(d, 0, "c", 1, 1, 2, 2, 3);
    assert_int_equal(raw_cred_trace(d, "", 0, &rec, NULL), TBBT_E_BADREC);
    g_byte_array_set_size(d, 0);
    raw_rec(d, TBBT_REC_CRED, "\x00\x00\x00\x00\x09" "abc", 8);
    assert_int_equal(raw_cred_trace(d, "", 0, &rec, NULL), TBBT_E_BADREC);
    g_byte_array_set_size(d, 0);
    raw_rec(d, TBBT_REC_CRED, "", 0);
    assert_int_equal(raw_cred_trace(d, "", 0, &rec, NULL), TBBT_E_BADREC);
    /* the least: no name, no gids */
    g_byte_array_set_size(d, 0);
    raw_cred(d, 0, "", 0, 0, 0, 0, 0);
    assert_int_equal(raw_cred_trace(d, "\x26\x01\x00", 3, &rec, NULL), 1);
    assert_int_equal(rec.cred, 0);
    g_byte_array_free(d, TRUE);
    tbbt_trace_rec_fini(&rec);
}

/* The writer: definitions after handles and endpoints, refusals, the table-less path. */
static void test_cred_writer(void **state)
{
    struct fixture *fx = *state;
    struct tbbt_credtab *ct = tbbt_credtab_new();
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    struct tbbt_trace_writer *w;
    struct tbbt_cred c0, c1;
    uint32_t ref;
    int err = 0;
    static const int want[] = {TBBT_REC_HANDLE, TBBT_REC_HANDLE, TBBT_REC_ENDPOINT,
                               TBBT_REC_CRED,   TBBT_REC_OP,     TBBT_REC_CRED,
                               TBBT_REC_OP,     TBBT_REC_CRED,   0};

    make_creds(&c0, &c1);
    tbbt_trace_rec_init(&rec);
    w = tbbt_trace_writer_open(fx->path, fx->fh, fx->ep, &err);
    assert_non_null(w);
    tbbt_trace_writer_set_credtab(w, ct);
    TBBT_SET(&rec, TBBT_F_CRED);
    rec.cred = 0;
    assert_int_equal(tbbt_trace_writer_put(w, &rec), TBBT_E_RANGE);   /* not interned */
    rec.cred = tbbt_credtab_intern(ct, &c0);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    rec.cred = tbbt_credtab_intern(ct, &c1);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    c1.uid = 7;
    tbbt_credtab_intern(ct, &c1);                   /* never used: written at close */
    assert_int_equal(tbbt_trace_writer_close(w), 0);
    /* the fixture's handles and endpoint, then each credential before its first use */
    r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    for (int i = 0;; i++) {
        int rc = tbbt_trace_reader_next_any(r, &rec, &ref);
        assert_int_equal(rc, want[i]);
        if (rc == 0)
            break;
    }
    assert_int_equal(ref, 2);
    assert_int_equal(tbbt_credtab_count(tbbt_trace_reader_credtab(r)), 3);
    assert_int_equal(tbbt_credtab_get(tbbt_trace_reader_credtab(r), 2)->uid, 7);
    tbbt_trace_reader_close(r);

    /* without a table: definitions one by one, in sequence and within bounds */
    w = tbbt_trace_writer_open(fx->path2, NULL, NULL, &err);
    assert_non_null(w);
    assert_int_equal(tbbt_trace_writer_def_endpoint(w, 0, tbbt_eptab_get(fx->ep, 0)), 0);
    tbbt_trace_rec_clear(&rec);
    TBBT_SET(&rec, TBBT_F_CRED);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), TBBT_E_RANGE);
    assert_int_equal(tbbt_trace_writer_def_cred(w, 1, &c0), TBBT_E_RANGE);
    c1.ngids = TBBT_CRED_GIDS_MAX + 1;
    assert_int_equal(tbbt_trace_writer_def_cred(w, 0, &c1), TBBT_E_RANGE);
    c1.ngids = 0;
    c1.machine_len = TBBT_MACHINE_MAX + 1;
    assert_int_equal(tbbt_trace_writer_def_cred(w, 0, &c1), TBBT_E_RANGE);
    assert_int_equal(tbbt_trace_writer_def_cred(w, 0, &c0), 0);
    assert_int_equal(tbbt_trace_writer_put(w, &rec), 0);
    rec.cred = 1;
    assert_int_equal(tbbt_trace_writer_put(w, &rec), TBBT_E_RANGE);
    assert_int_equal(tbbt_trace_writer_close(w), 0);
    r = tbbt_trace_reader_open(fx->path2, &err);
    assert_non_null(r);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 1);
    assert_int_equal(rec.cred, 0);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 0);
    assert_true(tbbt_cred_equal(tbbt_credtab_get(tbbt_trace_reader_credtab(r), 0), &c0));
    tbbt_trace_reader_close(r);
    tbbt_trace_rec_fini(&rec);
    tbbt_credtab_free(ct);
}

/* The text form of credentials: the definition line, the key, bounds; dump -> text -> same. */
static void test_text_cred(void **state)
{
    static const char text[] =
        "# tbbt-trace 1.1\n" EP0
        "cred 0 \"client\\x00\\\\\\\"\\n\" 1000 100 -\n"
        "op 1.000000000 2.000000000 v3 null ep=0 uid=1000 gid=100 flags=0 cred=0\n"
        "cred 1 \"\" 0 0 0,4294967295,7\n"
        "op 1.000000000 2.000000000 v3 null ep=0 flags=0 cred=1\nend 2\n";
    struct fixture *fx = *state;
    struct tbbt_trace_reader *r;
    struct tbbt_trace_rec rec;
    GString *t = g_string_new("# tbbt-trace 1.1\ncred 0 \"");
    gchar *dumped = NULL;
    char why[256];
    uint64_t line = 0;
    int err = 0;

    spit(fx->text, text, strlen(text));
    assert_int_equal(tbbt_trace_from_text(fx->text, fx->path, &line), 0);
    tbbt_trace_rec_init(&rec);
    r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 1);
    assert_int_equal(rec.cred, 0);
    const struct tbbt_cred *c = tbbt_credtab_get(tbbt_trace_reader_credtab(r), 0);
    assert_int_equal(c->machine_len, 10);
    assert_memory_equal(c->machine, "client\0\\\"\n", 10);
    assert_int_equal(c->ngids, 0);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 1);
    c = tbbt_credtab_get(tbbt_trace_reader_credtab(r), 1);
    assert_int_equal(c->ngids, 3);
    assert_int_equal(c->gids[1], UINT32_MAX);
    tbbt_trace_reader_close(r);
    /* the dump is the text (escapes as dump writes them) */
    FILE *f = fopen(fx->text, "w");
    assert_int_equal(tbbt_trace_dump(fx->path, f), 0);
    fclose(f);
    assert_true(g_file_get_contents(fx->text, &dumped, NULL, NULL));
    assert_non_null(strstr(dumped, "\ncred 0 \"client\\x00\\\\\\\"\\x0a\" 1000 100 -\n"));
    assert_non_null(strstr(dumped, "\ncred 1 \"\" 0 0 0,4294967295,7\nop "));
    assert_non_null(strstr(dumped, " flags=0 cred=1\nend 2\n"));
    assert_true(g_str_has_prefix(dumped, "# tbbt-trace 1.3\n"));
    g_free(dumped);
    assert_text_roundtrip(fx);
    /* a machine name of 255 bytes is fine, 256 is not */
    for (int i = 0; i < TBBT_MACHINE_MAX; i++)
        g_string_append(t, "\\xff");
    g_string_append(t, "\" 1 2 -\nend 0\n");
    spit(fx->text, t->str, t->len);
    assert_int_equal(tbbt_trace_from_text(fx->text, fx->path2, &line), 0);
    g_string_insert(t, 25, "x");
    spit(fx->text, t->str, t->len);
    assert_int_equal(tbbt_trace_from_text_why(fx->text, fx->path2, &line, why, sizeof(why)),
                     TBBT_E_SYNTAX);
    assert_non_null(strstr(why, "machine name longer than 255"));
    g_string_free(t, TRUE);
    tbbt_trace_rec_fini(&rec);
}

/* A version 1.0 file (no credentials) is read as before; its text says 1.0. */
static void test_read_v10(void **state)
{
    struct fixture *fx = *state;
    GByteArray *a = raw_new(1);
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    gchar *dumped = NULL;
    int err = 0, major, minor;
    uint64_t line;

    raw_handle(a, 0, "\xaa\xbb", 2);
    raw_endpoint(a, 0);
    raw_op(a, 0, "\x00\x01\x00", 3);
    raw_end(a, 1, 1, 1);
    spit(fx->path, a->data, a->len);
    r = tbbt_trace_reader_open(fx->path, &err);
    assert_non_null(r);
    tbbt_trace_reader_version(r, &major, &minor);
    assert_int_equal(major, 1);
    assert_int_equal(minor, 0);
    tbbt_trace_rec_init(&rec);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 1);
    assert_false(TBBT_HAS(&rec, TBBT_F_CRED));
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 0);
    assert_int_equal(tbbt_trace_reader_skipped(r), 0);
    assert_int_equal(tbbt_credtab_count(tbbt_trace_reader_credtab(r)), 0);
    tbbt_trace_reader_close(r);
    FILE *f = fopen(fx->text, "w");
    assert_int_equal(tbbt_trace_dump(fx->path, f), 0);
    fclose(f);
    assert_true(g_file_get_contents(fx->text, &dumped, NULL, NULL));
    assert_true(g_str_has_prefix(dumped, "# tbbt-trace 1.0\nfh 0 aabb\nep 0 tcp"));
    /* its text converts to a 1.1 file with the same records */
    assert_int_equal(tbbt_trace_from_text(fx->text, fx->path2, &line), 0);
    r = tbbt_trace_reader_open(fx->path2, &err);
    assert_non_null(r);
    tbbt_trace_reader_version(r, &major, &minor);
    assert_int_equal(minor, TBBT_TRACE_MINOR);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 1);
    assert_int_equal(rec.fh, 0);
    assert_int_equal(tbbt_trace_reader_next(r, &rec), 0);
    tbbt_trace_reader_close(r);
    g_free(dumped);
    g_byte_array_free(a, TRUE);
    tbbt_trace_rec_fini(&rec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_record),
        cmocka_unit_test(test_fhtab),
        cmocka_unit_test(test_eptab),
        cmocka_unit_test_setup_teardown(test_roundtrip_all_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_varint_widths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spill_consume, setup, teardown),
        cmocka_unit_test_setup_teardown(test_definition_placement, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_stream, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_truncated_everywhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_checksum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header_checks, setup, teardown),
        cmocka_unit_test(test_unknown_skipped),
        cmocka_unit_test(test_bad_records),
        cmocka_unit_test_setup_teardown(test_mutations, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_hostile_strings, setup, teardown),
        cmocka_unit_test(test_format_rec),
        cmocka_unit_test_setup_teardown(test_entry_ids, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_syntax_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_golden_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ops_more, setup, teardown),
        cmocka_unit_test_setup_teardown(test_regressions, setup, teardown),
        cmocka_unit_test(test_credtab),
        cmocka_unit_test(test_cred_records),
        cmocka_unit_test_setup_teardown(test_cred_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_text_cred, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_v10, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ident, setup, teardown),
        cmocka_unit_test_setup_teardown(test_textsum_outpath, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
