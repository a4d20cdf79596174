/* SPDX-License-Identifier: MIT */
/*
 * nfs4-scenario's script, first half (nfs4-scenario-int.h): client state, the working
 * directory client<N> under --path, files opened with create in every mode of the minor
 * version (RFC 7530 16.16 UNCHECKED4/GUARDED4/EXCLUSIVE4, RFC 8881 18.16 EXCLUSIVE4_1),
 * OPEN_CONFIRM when asked (4.0), WRITE (UNSTABLE4 + COMMIT, FILE_SYNC4), READ (also past
 * end of file), byte-range locks (LOCK with a new and an existing lock owner, LOCKT,
 * LOCKU), SETATTR with the open stateid, VERIFY and NVERIFY, RENEW.  The second half
 * (nfs4-scenario-tree.c) does the rest.  COMPOUNDs are shaped like a Linux client's:
 * PUTFH, OPEN, GETFH, GETATTR; PUTFH, WRITE, GETATTR; PUTFH, SAVEFH, CREATE, GETFH,
 * GETATTR, RESTOREFH, GETATTR.
 */
#include <stdio.h>
#include <string.h>

#include "nfs4-scenario-int.h"

/* ------------------------------------------------------------------ helpers */

void n4s_check_size(struct client *cl, const struct n4attr *a, uint64_t want, const char *what)
{
    if (a->size != want)
        n4_die("client %d: %s: size %llu, expected %llu", cl->index, what,
               (unsigned long long)a->size, (unsigned long long)want);
}

/* Copies the stateid of an OPEN result and refuses a delegation (none was wanted). */
static uint32_t open_result(struct c4 *c, u_int i, stateid4 *sid)
{
    OPEN4resok *ok = &n4_c4_res(c, i)->nfs_resop4_u.opopen.OPEN4res_u.resok4;
    open_delegation_type4 d = ok->delegation.delegation_type;

    if (d != OPEN_DELEGATE_NONE && d != OPEN_DELEGATE_NONE_EXT)
        n4_die("client %d: %s: the server offered a delegation (type %d)", c->cl->index,
               c->what, (int)d);
    *sid = ok->stateid;
    return ok->rflags;
}

/* 4.0: OPEN_CONFIRM when the OPEN reply asked for it (RFC 7530 16.18). */
static void confirm(struct client *cl, struct n4file *f, uint32_t rflags)
{
    struct c4 c;

    if (!(rflags & OPEN4_RESULT_CONFIRM))
        return;
    if (cl->minor > 0)
        n4_die("client %d: OPEN asked for OPEN_CONFIRM on NFSv4.%d", cl->index, cl->minor);
    n4_c4_init(&c, cl, "OPEN_CONFIRM");
    n4_putfh(&c, &f->fh);
    n4_open_confirm(&c, &f->open);
    n4_c4_run(&c);
    f->open = n4_c4_res(&c, 1)->nfs_resop4_u.opopen_confirm.OPEN_CONFIRM4res_u.resok4.open_stateid;
    n4_state_oo_bump(cl);
    n4_c4_done(&c);
    if (cl->verbose)
        fprintf(stderr, PROG ": client %d: OPEN_CONFIRM done\n", cl->index);
}

/* PUTFH dir, OPEN (create NAME with HOW), GETFH, GETATTR; confirms if asked. */
static void open_create(struct client *cl, struct n4file *f, const char *name, createmode4 how)
{
    struct c4 c;
    struct n4attr a;
    uint32_t rflags;

    n4_c4_init(&c, cl, "OPEN create");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, &cl->dir);
    n4_open_create(&c, name, how);
    n4_getfh(&c);
    n4_getattr(&c);
    n4_c4_run(&c);
    rflags = open_result(&c, base + 1, &f->open);
    n4_res_fh(&c, base + 2, &f->fh);
    n4_res_attr(&c, base + 3, &a);
    n4_state_oo_bump(cl);
    n4_c4_done(&c);
    n4s_check_size(cl, &a, 0, "OPEN create");
    confirm(cl, f, rflags);
}

/* OPEN of an existing file, by name in the directory (CLAIM_NULL) or by handle (CLAIM_FH). */
static void open_existing(struct client *cl, struct n4file *f, const char *name)
{
    struct c4 c;
    uint32_t rflags;

    n4_c4_init(&c, cl, name ? "OPEN" : "OPEN by handle");
    u_int base = c.args.argarray.argarray_len;
    if (name) {
        n4_putfh(&c, &cl->dir);
        n4_open_nocreate(&c, name, OPEN4_SHARE_ACCESS_READ);
        n4_getfh(&c);
    } else {
        n4_putfh(&c, &f->fh);
        n4_open_fh(&c, OPEN4_SHARE_ACCESS_READ);
    }
    n4_getattr(&c);
    n4_c4_run(&c);
    rflags = open_result(&c, base + 1, &f->open);
    if (name)
        n4_res_fh(&c, base + 2, &f->fh);
    n4_state_oo_bump(cl);
    n4_c4_done(&c);
    confirm(cl, f, rflags);
}

static void close_file(struct client *cl, struct n4file *f)
{
    struct c4 c;

    n4_c4_init(&c, cl, "CLOSE");
    n4_putfh(&c, &f->fh);
    n4_close(&c, &f->open);
    n4_c4_run(&c);
    n4_state_oo_bump(cl);
    n4_c4_done(&c);
}

/* PUTFH, WRITE, GETATTR; checks the count and the stability the server promised. */
static void write_chunk(struct client *cl, struct n4file *f, uint64_t off, uint32_t len,
                        stable_how4 how)
{
    struct c4 c;

    n4_c4_init(&c, cl, "WRITE");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, &f->fh);
    n4_write(&c, &f->open, off, len, how);
    n4_getattr(&c);
    n4_c4_run(&c);
    WRITE4resok *ok = &n4_c4_res(&c, base + 1)->nfs_resop4_u.opwrite.WRITE4res_u.resok4;
    if (ok->count != len || (how == FILE_SYNC4 && ok->committed != FILE_SYNC4))
        n4_die("client %d: WRITE of %u bytes: wrote %u, committed %d", cl->index, len,
               ok->count, (int)ok->committed);
    n4_c4_done(&c);
}

/* PUTFH, READ; checks the data against the pattern and the end-of-file flag. */
/* WANT_EOF: 0 or 1, or -1 when either is right (a READ that ends at end of file). */
static void read_chunk(struct client *cl, struct n4file *f, const stateid4 *sid, uint64_t off,
                       uint32_t len, uint32_t want_len, int want_eof)
{
    struct c4 c;
    char buf[N4_CHUNK];

    n4_c4_init(&c, cl, "READ");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, &f->fh);
    n4_read(&c, sid, off, len);
    n4_c4_run(&c);
    READ4resok *ok = &n4_c4_res(&c, base + 1)->nfs_resop4_u.opread.READ4res_u.resok4;
    if (ok->data.data_len != want_len || (want_eof >= 0 && (int)!!ok->eof != want_eof))
        n4_die("client %d: READ %u at %llu: got %u bytes eof %d, expected %u eof %d",
               cl->index, len, (unsigned long long)off, ok->data.data_len, (int)ok->eof,
               want_len, (int)want_eof);
    g_assert(want_len <= sizeof(buf));
    n4_pattern(buf, off, want_len);
    if (want_len && memcmp(buf, ok->data.data_val, want_len) != 0)   /* 0 bytes: no buffer */
        n4_die("client %d: READ at %llu: the data differs from what was written", cl->index,
               (unsigned long long)off);
    n4_c4_done(&c);
}

/* ------------------------------------------------------------------ steps */

static void st_begin(struct client *cl, const struct config *cfg)
{
    struct c4 c;

    (void)cfg;
    n4_state_begin(cl);
    if (cl->minor == 0)
        return;
    n4_c4_init(&c, cl, "SECINFO_NO_NAME");
    n4_putrootfh(&c);
    n4_secinfo_no_name(&c);
    n4_c4_run(&c);
    n4_c4_done(&c);
}

static void st_open(struct client *cl, const struct config *cfg)
{
    (void)cfg;
    open_create(cl, &cl->f1, "f1", UNCHECKED4);
    open_create(cl, &cl->f2, "f2", GUARDED4);
    open_create(cl, &cl->f3, "f3", EXCLUSIVE4);
    if (cl->minor > 0)
        open_create(cl, &cl->f4, "f4", EXCLUSIVE4_1);
}

static void st_write(struct client *cl, const struct config *cfg)
{
    struct c4 c;
    struct n4attr a;

    (void)cfg;
    for (uint32_t i = 0; i < 3; i++)
        write_chunk(cl, &cl->f1, (uint64_t)i * N4_CHUNK, N4_CHUNK, UNSTABLE4);
    n4_c4_init(&c, cl, "COMMIT");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, &cl->f1.fh);
    n4_commit(&c);
    n4_getattr(&c);
    n4_c4_run(&c);
    n4_res_attr(&c, base + 2, &a);
    n4_c4_done(&c);
    n4s_check_size(cl, &a, 3 * N4_CHUNK, "GETATTR after COMMIT");
    write_chunk(cl, &cl->f2, 0, 700, FILE_SYNC4);
}

static void st_read(struct client *cl, const struct config *cfg)
{
    (void)cfg;
    for (uint32_t i = 0; i < 3; i++)
        read_chunk(cl, &cl->f1, &cl->f1.open, (uint64_t)i * N4_CHUNK, N4_CHUNK, N4_CHUNK,
                   i == 2 ? -1 : 0);
    read_chunk(cl, &cl->f1, &cl->f1.open, 3 * N4_CHUNK + 1000, N4_CHUNK, 0, 1);
    read_chunk(cl, &cl->f2, &cl->f2.open, 0, N4_CHUNK, 700, 1);
}

/* LOCK (new lock owner), LOCKT by another owner (denied), LOCKU, LOCK (existing lock
 * owner), LOCKT of a free range, LOCKU. */
static void st_lock(struct client *cl, const struct config *cfg)
{
    struct n4file *f = &cl->f1;
    struct c4 c;

    (void)cfg;
    n4_c4_init(&c, cl, "LOCK new lock owner");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, &f->fh);
    n4_lock_new(&c, WRITE_LT, 0, 100, &f->open);
    n4_c4_run(&c);
    f->lock = n4_c4_res(&c, base + 1)->nfs_resop4_u.oplock.LOCK4res_u.resok4.lock_stateid;
    n4_state_oo_bump(cl);
    n4_state_lo_bump(cl);
    n4_c4_done(&c);

    n4_c4_init(&c, cl, "LOCKT of a locked range");
    n4_putfh(&c, &f->fh);
    n4_lockt(&c, WRITE_LT, 50, 10);
    n4_c4_expect(&c, NFS4ERR_DENIED);
    n4_c4_run(&c);
    n4_c4_done(&c);

    n4_c4_init(&c, cl, "LOCKU");
    n4_putfh(&c, &f->fh);
    n4_locku(&c, 0, 100, &f->lock);
    n4_c4_run(&c);
    f->lock = n4_c4_res(&c, base + 1)->nfs_resop4_u.oplocku.LOCKU4res_u.lock_stateid;
    n4_state_lo_bump(cl);
    n4_c4_done(&c);

    n4_c4_init(&c, cl, "LOCK existing lock owner");
    n4_putfh(&c, &f->fh);
    n4_lock_existing(&c, READ_LT, 200, 100, &f->lock);
    n4_c4_run(&c);
    f->lock = n4_c4_res(&c, base + 1)->nfs_resop4_u.oplock.LOCK4res_u.resok4.lock_stateid;
    n4_state_lo_bump(cl);
    n4_c4_done(&c);

    n4_c4_init(&c, cl, "LOCKT of a free range");
    n4_putfh(&c, &f->fh);
    n4_lockt(&c, WRITE_LT, 1000, 10);
    n4_c4_run(&c);
    n4_c4_done(&c);

    n4_c4_init(&c, cl, "LOCKU");
    n4_putfh(&c, &f->fh);
    n4_locku(&c, 200, 100, &f->lock);
    n4_c4_run(&c);
    n4_state_lo_bump(cl);
    n4_c4_done(&c);
}

/* SETATTR of the size (truncate) and of a mode with the open stateid; VERIFY, NVERIFY. */
static void st_setattr(struct client *cl, const struct config *cfg)
{
    struct n4attr size = { .mask = { 1u << FATTR4_SIZE, 0 }, .size = 100 };
    struct n4attr mode = { .mask = { 0, 1u << (FATTR4_MODE % 32) }, .mode = 0640 };
    struct n4attr a;
    struct c4 c;

    (void)cfg;
    n4_c4_init(&c, cl, "SETATTR size");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, &cl->f1.fh);
    n4_setattr(&c, &cl->f1.open, &size);
    n4_getattr(&c);
    n4_c4_run(&c);
    n4_res_attr(&c, base + 2, &a);
    n4_c4_done(&c);
    n4s_check_size(cl, &a, 100, "GETATTR after SETATTR size");

    n4_c4_init(&c, cl, "SETATTR mode");
    n4_putfh(&c, &cl->f3.fh);
    n4_setattr(&c, &cl->f3.open, &mode);
    n4_getattr(&c);
    n4_c4_run(&c);
    n4_res_attr(&c, base + 2, &a);
    n4_c4_done(&c);
    if ((a.mode & 07777) != 0640)
        n4_die("client %d: mode %o after SETATTR mode 0640", cl->index, a.mode);

    n4_c4_init(&c, cl, "VERIFY size");
    n4_putfh(&c, &cl->f1.fh);
    n4_verify(&c, false, &size);
    n4_getattr(&c);
    n4_c4_run(&c);
    n4_c4_done(&c);

    n4_c4_init(&c, cl, "NVERIFY size");
    n4_putfh(&c, &cl->f1.fh);
    n4_verify(&c, true, &size);
    n4_c4_expect(&c, NFS4ERR_SAME);
    n4_c4_run(&c);
    n4_c4_done(&c);
}

static void st_renew(struct client *cl, const struct config *cfg)
{
    (void)cfg;
    n4_state_renew(cl);
}

/* CLOSE of every file; OPEN of an existing file by name (and on 4.1+ by handle), READ
 * through the new stateid, CLOSE. */
static void st_close_reopen(struct client *cl, const struct config *cfg)
{
    (void)cfg;
    close_file(cl, &cl->f1);
    close_file(cl, &cl->f2);
    close_file(cl, &cl->f3);
    if (cl->minor > 0)
        close_file(cl, &cl->f4);
    open_existing(cl, &cl->f1, "f1");
    read_chunk(cl, &cl->f1, &cl->f1.open, 0, 100, 100, 1);
    close_file(cl, &cl->f1);
    if (cl->minor == 0)
        return;
    open_existing(cl, &cl->f2, NULL);
    read_chunk(cl, &cl->f2, &cl->f2.open, 0, 700, 700, -1);
    close_file(cl, &cl->f2);
}

static void st_end(struct client *cl, const struct config *cfg)
{
    (void)cfg;
    n4_state_end(cl);
}

static const n4_step_fn steps[] = {
    st_begin, n4s_st_dir, st_open, st_write, st_read, st_lock, st_setattr, st_renew,
    st_close_reopen, n4s_st_names, n4s_st_rename_link, n4s_st_readdir, n4s_st_remove, st_end,
};

size_t n4_script_steps(const n4_step_fn **out)
{
    *out = steps;
    return G_N_ELEMENTS(steps);
}
