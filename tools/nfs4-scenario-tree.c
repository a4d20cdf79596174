/* SPDX-License-Identifier: MIT */
/*
 * nfs4-scenario's script, second half (nfs4-scenario-int.h): the steps on names.  The
 * working path is reached from the pseudo-root (PUTROOTFH, one LOOKUP per component,
 * RFC 7530 section 7); under it each client makes client<N> (CREATE NF4DIR), checks
 * LOOKUP of a missing name (NFS4ERR_NOENT) and LOOKUPP, makes symlinks (CREATE NF4LNK,
 * READLINK) and directories, RENAMEs and LINKs between saved and current handles
 * (SAVEFH/RESTOREFH), lists its directory with READDIR in small pages (cookie and
 * cookie verifier, RFC 7530 16.24), fails REMOVE of a non-empty directory
 * (NFS4ERR_NOTEMPTY), and removes everything it made.
 */
#include <stdio.h>
#include <string.h>

#include "nfs4-scenario-int.h"

#define RD_DIRCOUNT 64          /* READDIR sizes small enough that a listing takes */
#define RD_MAXCOUNT 160         /* several calls (two or three entries each here) */

static void dir_name(const struct client *cl, char *buf, size_t size)
{
    g_snprintf(buf, size, "client%d", cl->index);
}

/* PUTFH parent, SAVEFH, CREATE, GETFH, GETATTR, RESTOREFH, GETATTR (as Linux does). */
static void create_obj(struct client *cl, const struct n4fh *parent, nfs_ftype4 type,
                       const char *name, const char *target, struct n4fh *out)
{
    struct c4 c;
    struct n4attr a;

    n4_c4_init(&c, cl, type == NF4DIR ? "CREATE directory" : "CREATE symlink");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, parent);
    n4_savefh(&c);
    n4_create(&c, type, name, target);
    n4_getfh(&c);
    n4_getattr(&c);
    n4_restorefh(&c);
    n4_getattr(&c);
    n4_c4_run(&c);
    n4_res_fh(&c, base + 3, out);
    n4_res_attr(&c, base + 4, &a);
    n4_c4_done(&c);
    if (a.type != (uint32_t)type)
        n4_die("client %d: CREATE %s: the new object has type %u", cl->index, name, a.type);
}

/* The working path from the pseudo-root; ACCESS; LOOKUP of the missing client<N>;
 * CREATE of it; LOOKUPP back to the working path. */
void n4s_st_dir(struct client *cl, const struct config *cfg)
{
    gchar **comp = g_strsplit(cfg->path, "/", -1);
    char name[32];
    struct n4attr a;
    struct n4fh up;
    struct c4 c;

    n4_c4_init(&c, cl, "PUTROOTFH + LOOKUP of the path");
    u_int base = c.args.argarray.argarray_len;
    n4_putrootfh(&c);
    for (int i = 0; comp[i]; i++)
        if (comp[i][0])
            n4_lookup(&c, comp[i]);
    n4_getfh(&c);
    n4_getattr(&c);
    n4_c4_run(&c);
    u_int n = c.args.argarray.argarray_len;
    n4_res_fh(&c, n - 2, &cl->base);
    n4_res_attr(&c, n - 1, &a);
    n4_c4_done(&c);
    g_strfreev(comp);
    if (a.type != NF4DIR)
        n4_die("client %d: %s is not a directory (type %u)", cl->index, cfg->path, a.type);

    dir_name(cl, name, sizeof(name));
    n4_c4_init(&c, cl, "ACCESS + LOOKUP of a missing name");
    n4_putfh(&c, &cl->base);
    n4_access(&c, ACCESS4_READ | ACCESS4_LOOKUP | ACCESS4_MODIFY | ACCESS4_EXTEND |
                      ACCESS4_DELETE);
    n4_lookup(&c, name);
    n4_c4_expect(&c, NFS4ERR_NOENT);
    n4_c4_run(&c);
    n4_c4_done(&c);

    create_obj(cl, &cl->base, NF4DIR, name, NULL, &cl->dir);

    n4_c4_init(&c, cl, "LOOKUPP");
    n4_putfh(&c, &cl->dir);
    n4_lookupp(&c);
    n4_getfh(&c);
    n4_c4_run(&c);
    n4_res_fh(&c, base + 2, &up);
    n4_c4_done(&c);
    if (up.len != cl->base.len || memcmp(up.data, cl->base.data, up.len) != 0)
        n4_die("client %d: LOOKUPP of %s gave another handle than %s", cl->index, name,
               cfg->path);
}

/* A symlink and READLINK; directories sub1 (with a symlink in it) and sub2. */
void n4s_st_names(struct client *cl, const struct config *cfg)
{
    struct n4fh inner;
    struct c4 c;

    (void)cfg;
    create_obj(cl, &cl->dir, NF4LNK, "l1", "f1", &cl->link);
    n4_c4_init(&c, cl, "READLINK");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, &cl->link);
    n4_readlink(&c);
    n4_c4_run(&c);
    linktext4 *t = &n4_c4_res(&c, base + 1)->nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link;
    if (t->linktext4_len != 2 || memcmp(t->linktext4_val, "f1", 2) != 0)
        n4_die("client %d: READLINK l1: wrong link text", cl->index);
    n4_c4_done(&c);
    create_obj(cl, &cl->dir, NF4DIR, "sub1", NULL, &cl->sub1);
    create_obj(cl, &cl->dir, NF4DIR, "sub2", NULL, &cl->sub2);
    create_obj(cl, &cl->sub1, NF4LNK, "s", "x", &inner);
}

/* PUTFH from, SAVEFH, PUTFH to, RENAME, GETATTR, RESTOREFH, GETATTR. */
static void rename_obj(struct client *cl, const struct n4fh *from, const char *oldname,
                       const struct n4fh *to, const char *newname)
{
    struct c4 c;

    n4_c4_init(&c, cl, "RENAME");
    n4_putfh(&c, from);
    n4_savefh(&c);
    n4_putfh(&c, to);
    n4_rename(&c, oldname, newname);
    n4_getattr(&c);
    n4_restorefh(&c);
    n4_getattr(&c);
    n4_c4_run(&c);
    n4_c4_done(&c);
}

/* RENAME within the directory and into sub2; LINK f1 as f1.link. */
void n4s_st_rename_link(struct client *cl, const struct config *cfg)
{
    struct c4 c;

    (void)cfg;
    rename_obj(cl, &cl->dir, "f2", &cl->dir, "f2b");
    rename_obj(cl, &cl->dir, "f3", &cl->sub2, "f3");
    n4_c4_init(&c, cl, "LINK");
    n4_putfh(&c, &cl->f1.fh);
    n4_savefh(&c);
    n4_putfh(&c, &cl->dir);
    n4_link(&c, "f1.link");
    n4_restorefh(&c);
    n4_getattr(&c);
    n4_c4_run(&c);
    n4_c4_done(&c);
}

/* One READDIR page from COOKIE; counts its entries into *N; returns true at EOF. */
static bool readdir_page(struct client *cl, nfs_cookie4 *cookie, verifier4 verf, int *n)
{
    struct c4 c;
    bool eof;

    n4_c4_init(&c, cl, "READDIR");
    u_int base = c.args.argarray.argarray_len;
    n4_putfh(&c, &cl->dir);
    n4_readdir(&c, *cookie, verf, RD_DIRCOUNT, RD_MAXCOUNT);
    n4_c4_run(&c);
    READDIR4resok *ok = &n4_c4_res(&c, base + 1)->nfs_resop4_u.opreaddir.READDIR4res_u.resok4;
    memcpy(verf, ok->cookieverf, sizeof(verifier4));
    for (const entry4 *e = ok->reply.entries; e; e = e->nextentry) {
        *cookie = e->cookie;
        (*n)++;
    }
    eof = ok->reply.eof;
    if (!eof && !ok->reply.entries)
        n4_die("client %d: READDIR returned no entries and no end of directory", cl->index);
    n4_c4_done(&c);
    return eof;
}

/* READDIR of the directory in small pages; checks the number of entries. */
void n4s_st_readdir(struct client *cl, const struct config *cfg)
{
    nfs_cookie4 cookie = 0;
    verifier4 verf = { 0 };
    int n = 0, calls = 0, want = cl->minor > 0 ? 7 : 6;

    (void)cfg;
    do
        calls++;
    while (!readdir_page(cl, &cookie, verf, &n) && calls < 100);
    if (n != want || calls < 2)
        n4_die("client %d: READDIR listed %d entries in %d calls, expected %d in several",
               cl->index, n, calls, want);
    if (cl->verbose)
        fprintf(stderr, PROG ": client %d: READDIR: %d entries in %d calls\n", cl->index, n,
                calls);
}

/* PUTFH dir, REMOVE name, GETATTR; WANT NFS4_OK or the error REMOVE must return. */
static void remove_obj(struct client *cl, const struct n4fh *dir, const char *name,
                       nfsstat4 want)
{
    struct c4 c;

    n4_c4_init(&c, cl, "REMOVE");
    n4_putfh(&c, dir);
    n4_remove(&c, name);
    if (want != NFS4_OK)
        n4_c4_expect(&c, want);
    else
        n4_getattr(&c);
    n4_c4_run(&c);
    n4_c4_done(&c);
}

/* REMOVE of the non-empty sub1 (NFS4ERR_NOTEMPTY), then of everything. */
void n4s_st_remove(struct client *cl, const struct config *cfg)
{
    static const char *const files[] = { "f1", "f1.link", "f2b", "l1" };
    char name[32];

    (void)cfg;
    remove_obj(cl, &cl->dir, "sub1", NFS4ERR_NOTEMPTY);
    remove_obj(cl, &cl->sub1, "s", NFS4_OK);
    remove_obj(cl, &cl->sub2, "f3", NFS4_OK);
    for (size_t i = 0; i < G_N_ELEMENTS(files); i++)
        remove_obj(cl, &cl->dir, files[i], NFS4_OK);
    if (cl->minor > 0)
        remove_obj(cl, &cl->dir, "f4", NFS4_OK);
    remove_obj(cl, &cl->dir, "sub1", NFS4_OK);
    remove_obj(cl, &cl->dir, "sub2", NFS4_OK);
    dir_name(cl, name, sizeof(name));
    remove_obj(cl, &cl->base, name, NFS4_OK);
}
