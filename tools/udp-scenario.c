/* SPDX-License-Identifier: MIT */
/*
 * udp-scenario: the lab client for NFS over UDP, which libnfs cannot speak.  A
 * synchronous libtirpc client built on the project's rpcgen stubs (src/proto): MOUNT
 * v3 over UDP for the root handle, then a scripted NFSv3 scenario over UDP that uses
 * every procedure of RFC 1813 section 3 (a small tree, chunked writes and reads,
 * links, renames over a target and of a directory with children, readdir pages, the
 * expected failures NOENT/EXIST/NOTEMPTY, and removal of everything), then --ops N
 * random file calls.  With --v2 it does the same with MOUNT v1 and NFSv2 (RFC 1094
 * section 2.2, all procedures but the obsolete ROOT and WRITECACHE).
 *
 * One call at a time; libtirpc retransmits after 1 s without a reply.  Any reply that
 * differs from the expectation ends the run with exit code 1.  Not installed; used by
 * tools/make-captures.sh.  See docs/lab.md.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib.h>
#include <rpc/rpc.h>

#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"
#include "util/exit-codes.h"

#define PROG "udp-scenario"
#define NPROC 22               /* procedure numbers 0..21 (NFSv2 uses 0..17) */
#define CHUNK 8192             /* READ/WRITE size: the classic UDP transfer size */

static const char *const proc3_names[NPROC] = {
    "NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ", "WRITE",
    "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK",
    "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT",
};

static const char *const proc2_names[NPROC] = {
    "NULL", "GETATTR", "SETATTR", "ROOT", "LOOKUP", "READLINK", "READ", "WRITECACHE",
    "WRITE", "CREATE", "REMOVE", "RENAME", "LINK", "SYMLINK", "MKDIR", "RMDIR",
    "READDIR", "STATFS",
};

struct config {
    char *server;
    char *path;
    int nfs_port;            /* 0: ask rpcbind */
    int mount_port;
    gint64 ops;
    gint64 seed;
    bool v2;
    bool verbose;
};

/* One UDP client handle with per-procedure call counts. */
struct conn {
    CLIENT *clnt;
    const char *what;
    uint64_t calls[NPROC];
};

/* A file handle of either version (v2 handles are always NFS2_FHSIZE bytes). */
struct fh {
    u_int len;
    char data[NFS3_FHSIZE];
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(TBBT_EXIT_FAIL);
}

/* ------------------------------------------------------------------ connections */

/* Fills SIN's address with the first IPv4 address of HOST. */
static void resolve(const char *host, struct sockaddr_in *sin)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM }, *ai;
    int rc = getaddrinfo(host, NULL, &hints, &ai);

    if (rc != 0)
        die("cannot resolve '%s': %s", host, gai_strerror(rc));
    sin->sin_addr = ((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
    freeaddrinfo(ai);
}

/*
 * A UDP client for PROG/VERS at PORT, or at the port the portmapper (a GETPORT call over
 * UDP, RFC 1833) names when PORT is 0.  (clnt_create() would do the lookup too, but
 * libtirpc 1.3.3 leaks a little memory in it, which the sanitizer build reports.)
 */
static CLIENT *create_client(const struct config *cfg, rpcprog_t prog, rpcvers_t vers, int port)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    int sock = RPC_ANYSOCK;
    CLIENT *clnt;

    resolve(cfg->server, &sin);
    if (!port) {
        sin.sin_port = htons(PMAPPORT);
        port = pmap_getport(&sin, prog, vers, IPPROTO_UDP);
        if (port == 0)
            die("program %lu version %lu is not registered over UDP on %s%s",
                (unsigned long)prog, (unsigned long)vers, cfg->server, clnt_spcreateerror(""));
    }
    sin.sin_port = htons((uint16_t)port);
    clnt = clntudp_create(&sin, prog, vers, (struct timeval){ 1, 0 }, &sock);
    if (!clnt)
        die("cannot reach program %lu version %lu on %s over UDP%s", (unsigned long)prog,
            (unsigned long)vers, cfg->server, clnt_spcreateerror(""));
    return clnt;
}

static void conn_open(struct conn *c, const struct config *cfg, rpcprog_t prog, rpcvers_t vers,
                      int port)
{
    /*
     * No retransmission within the call's time: a retransmitted call (same XID) is a
     * second call/reply pair to tshark but a duplicate to tbbt-convert, and the
     * captures are compared procedure by procedure (seen once in a CI run where a
     * MKDIR took over 1 s to answer).
     */
    struct timeval total = { 10, 0 }, retry = { 10, 0 };

    c->clnt = create_client(cfg, prog, vers, port);
    auth_destroy(c->clnt->cl_auth);
    c->clnt->cl_auth = authsys_create_default();
    if (!c->clnt->cl_auth)
        die("cannot create AUTH_SYS credentials");
    clnt_control(c->clnt, CLSET_TIMEOUT, (char *)&total);
    clnt_control(c->clnt, CLSET_RETRY_TIMEOUT, (char *)&retry);
}

static void conn_close(struct conn *c)
{
    auth_destroy(c->clnt->cl_auth);
    clnt_destroy(c->clnt);
}

/* Dies unless the RPC itself succeeded; counts the call. */
static void rpc_ok(struct conn *c, int proc, enum clnt_stat st, const char *what)
{
    if (st != RPC_SUCCESS)
        die("%s: %s", what, clnt_sperror(c->clnt, c->what));
    c->calls[proc]++;
}

/* Names a status of protocol PROG (TBBT_PROTO_*); BUF holds the number if unknown. */
static const char *status_name(int prog, int st, char *buf, size_t size)
{
    const char *name = tbbt_proto_status_name(prog, st);

    if (name)
        return name;
    g_snprintf(buf, size, "status %d", st);
    return buf;
}

/* Checks an NFS status against the expected one (both versions). */
static void want_status(bool v2, int got, int want, const char *what)
{
    int prog = v2 ? TBBT_PROTO_NFS2 : TBBT_PROTO_NFS3;
    char b1[32], b2[32];

    if (got != want)
        die("%s: expected %s, got %s", what, status_name(prog, want, b1, sizeof(b1)),
            status_name(prog, got, b2, sizeof(b2)));
}

static void pattern(char *buf, uint64_t off, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (char)('a' + (off + i) % 26);
}

/* ------------------------------------------------------------------ NFSv3 calls */

static nfs_fh3 fh3(const struct fh *fh)
{
    return (nfs_fh3){ .data = { .data_len = fh->len, .data_val = (char *)fh->data } };
}

static diropargs3 dirop3(const struct fh *dir, const char *name)
{
    return (diropargs3){ .dir = fh3(dir), .name = (char *)name };
}

static void keep_fh3(struct fh *out, const nfs_fh3 *in, const char *what)
{
    if (in->data.data_len == 0 || in->data.data_len > NFS3_FHSIZE)
        die("%s: bad file handle length %u", what, in->data.data_len);
    out->len = in->data.data_len;
    memcpy(out->data, in->data.data_val, out->len);
}

static void keep_post_fh3(struct fh *out, const post_op_fh3 *in, const char *what)
{
    if (!in->handle_follows)
        die("%s: reply carries no file handle", what);
    keep_fh3(out, &in->post_op_fh3_u.handle, what);
}

static void v3_null(struct conn *c)
{
    rpc_ok(c, NFSPROC3_NULL, nfsproc3_null_3(NULL, NULL, c->clnt), "NULL");
}

static fattr3 v3_getattr(struct conn *c, const struct fh *fh, const char *what)
{
    GETATTR3args a = { .object = fh3(fh) };
    GETATTR3res r = { 0 };
    fattr3 attr;

    rpc_ok(c, NFSPROC3_GETATTR, nfsproc3_getattr_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    attr = r.GETATTR3res_u.resok.obj_attributes;
    xdr_free((xdrproc_t)xdr_GETATTR3res, (char *)&r);
    return attr;
}

static void v3_setattr(struct conn *c, const struct fh *fh, const sattr3 *sa, const char *what)
{
    SETATTR3args a = { .object = fh3(fh), .new_attributes = *sa };
    SETATTR3res r = { 0 };

    rpc_ok(c, NFSPROC3_SETATTR, nfsproc3_setattr_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_SETATTR3res, (char *)&r);
}

/* LOOKUP expecting WANT; on success stores the handle in OUT (may be NULL). */
static void v3_lookup(struct conn *c, const struct fh *dir, const char *name, int want,
                      struct fh *out, const char *what)
{
    LOOKUP3args a = { .what = dirop3(dir, name) };
    LOOKUP3res r = { 0 };

    rpc_ok(c, NFSPROC3_LOOKUP, nfsproc3_lookup_3(&a, &r, c->clnt), what);
    want_status(false, r.status, want, what);
    if (r.status == NFS3_OK && out)
        keep_fh3(out, &r.LOOKUP3res_u.resok.object, what);
    xdr_free((xdrproc_t)xdr_LOOKUP3res, (char *)&r);
}

static void v3_access(struct conn *c, const struct fh *fh, const char *what)
{
    ACCESS3args a = { .object = fh3(fh), .access = ACCESS3_READ | ACCESS3_LOOKUP |
                      ACCESS3_MODIFY | ACCESS3_EXTEND | ACCESS3_DELETE | ACCESS3_EXECUTE };
    ACCESS3res r = { 0 };

    rpc_ok(c, NFSPROC3_ACCESS, nfsproc3_access_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_ACCESS3res, (char *)&r);
}

static void v3_readlink(struct conn *c, const struct fh *fh, const char *target,
                        const char *what)
{
    READLINK3args a = { .symlink = fh3(fh) };
    READLINK3res r = { 0 };

    rpc_ok(c, NFSPROC3_READLINK, nfsproc3_readlink_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    if (strcmp(r.READLINK3res_u.resok.data, target) != 0)
        die("%s: got '%s', expected '%s'", what, r.READLINK3res_u.resok.data, target);
    xdr_free((xdrproc_t)xdr_READLINK3res, (char *)&r);
}

/* READ of COUNT at OFF; checks the data against pattern(); returns the count read. */
static uint32_t v3_read(struct conn *c, const struct fh *fh, uint64_t off, uint32_t count,
                        bool *eof, const char *what)
{
    READ3args a = { .file = fh3(fh), .offset = off, .count = count };
    READ3res r = { 0 };
    char want[CHUNK];
    uint32_t n;

    rpc_ok(c, NFSPROC3_READ, nfsproc3_read_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    n = r.READ3res_u.resok.data.data_len;
    if (n > CHUNK || n != r.READ3res_u.resok.count)
        die("%s: inconsistent count %u", what, n);
    pattern(want, off, n);
    if (memcmp(r.READ3res_u.resok.data.data_val, want, n) != 0)
        die("%s: data differs at offset %" PRIu64, what, off);
    *eof = r.READ3res_u.resok.eof;
    xdr_free((xdrproc_t)xdr_READ3res, (char *)&r);
    return n;
}

static void v3_write(struct conn *c, const struct fh *fh, uint64_t off, uint32_t count,
                     stable_how stable, const char *what)
{
    char buf[CHUNK];
    WRITE3args a = { .file = fh3(fh), .offset = off, .count = count, .stable = stable,
                     .data = { .data_len = count, .data_val = buf } };
    WRITE3res r = { 0 };

    pattern(buf, off, count);
    rpc_ok(c, NFSPROC3_WRITE, nfsproc3_write_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    if (r.WRITE3res_u.resok.count != count)
        die("%s: short write %u of %u", what, r.WRITE3res_u.resok.count, count);
    xdr_free((xdrproc_t)xdr_WRITE3res, (char *)&r);
}

static void v3_create(struct conn *c, const struct fh *dir, const char *name, createmode3 mode,
                      int want, struct fh *out, const char *what)
{
    CREATE3args a = { .where = dirop3(dir, name), .how = { .mode = mode } };
    CREATE3res r = { 0 };

    if (mode == EXCLUSIVE) {
        memcpy(a.how.createhow3_u.verf, "tbbtverf", NFS3_CREATEVERFSIZE);
    } else {
        a.how.createhow3_u.obj_attributes.mode.set_it = TRUE;
        a.how.createhow3_u.obj_attributes.mode.set_mode3_u.mode = 0644;
    }
    rpc_ok(c, NFSPROC3_CREATE, nfsproc3_create_3(&a, &r, c->clnt), what);
    want_status(false, r.status, want, what);
    if (r.status == NFS3_OK)
        keep_post_fh3(out, &r.CREATE3res_u.resok.obj, what);
    xdr_free((xdrproc_t)xdr_CREATE3res, (char *)&r);
}

static void v3_mkdir(struct conn *c, const struct fh *dir, const char *name, int want,
                     struct fh *out, const char *what)
{
    MKDIR3args a = { .where = dirop3(dir, name) };
    MKDIR3res r = { 0 };

    a.attributes.mode.set_it = TRUE;
    a.attributes.mode.set_mode3_u.mode = 0755;
    rpc_ok(c, NFSPROC3_MKDIR, nfsproc3_mkdir_3(&a, &r, c->clnt), what);
    want_status(false, r.status, want, what);
    if (r.status == NFS3_OK)
        keep_post_fh3(out, &r.MKDIR3res_u.resok.obj, what);
    xdr_free((xdrproc_t)xdr_MKDIR3res, (char *)&r);
}

static void v3_symlink(struct conn *c, const struct fh *dir, const char *name,
                       const char *target, struct fh *out, const char *what)
{
    SYMLINK3args a = { .where = dirop3(dir, name) };
    SYMLINK3res r = { 0 };

    a.symlink.symlink_data = (char *)target;
    a.symlink.symlink_attributes.mode.set_it = TRUE;
    a.symlink.symlink_attributes.mode.set_mode3_u.mode = 0777;
    rpc_ok(c, NFSPROC3_SYMLINK, nfsproc3_symlink_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    keep_post_fh3(out, &r.SYMLINK3res_u.resok.obj, what);
    xdr_free((xdrproc_t)xdr_SYMLINK3res, (char *)&r);
}

static void v3_mknod_fifo(struct conn *c, const struct fh *dir, const char *name,
                          const char *what)
{
    MKNOD3args a = { .where = dirop3(dir, name), .what = { .type = NF3FIFO } };
    MKNOD3res r = { 0 };

    a.what.mknoddata3_u.pipe_attributes.mode.set_it = TRUE;
    a.what.mknoddata3_u.pipe_attributes.mode.set_mode3_u.mode = 0600;
    rpc_ok(c, NFSPROC3_MKNOD, nfsproc3_mknod_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_MKNOD3res, (char *)&r);
}

/* REMOVE (rmdir false) or RMDIR expecting WANT. */
static void v3_remove(struct conn *c, const struct fh *dir, const char *name, bool rmdir,
                      int want, const char *what)
{
    if (rmdir) {
        RMDIR3args a = { .object = dirop3(dir, name) };
        RMDIR3res r = { 0 };
        rpc_ok(c, NFSPROC3_RMDIR, nfsproc3_rmdir_3(&a, &r, c->clnt), what);
        want_status(false, r.status, want, what);
        xdr_free((xdrproc_t)xdr_RMDIR3res, (char *)&r);
    } else {
        REMOVE3args a = { .object = dirop3(dir, name) };
        REMOVE3res r = { 0 };
        rpc_ok(c, NFSPROC3_REMOVE, nfsproc3_remove_3(&a, &r, c->clnt), what);
        want_status(false, r.status, want, what);
        xdr_free((xdrproc_t)xdr_REMOVE3res, (char *)&r);
    }
}

static void v3_rename(struct conn *c, const struct fh *from_dir, const char *from,
                      const struct fh *to_dir, const char *to, const char *what)
{
    RENAME3args a = { .from = dirop3(from_dir, from), .to = dirop3(to_dir, to) };
    RENAME3res r = { 0 };

    rpc_ok(c, NFSPROC3_RENAME, nfsproc3_rename_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_RENAME3res, (char *)&r);
}

static void v3_link(struct conn *c, const struct fh *file, const struct fh *dir,
                    const char *name, const char *what)
{
    LINK3args a = { .file = fh3(file), .link = dirop3(dir, name) };
    LINK3res r = { 0 };

    rpc_ok(c, NFSPROC3_LINK, nfsproc3_link_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_LINK3res, (char *)&r);
}

/* Appends "/name" of each entry to NAMES; returns false at eof, else the next cookie. */
static bool v3_readdir_page(struct conn *c, const struct fh *dir, bool plus, uint32_t count,
                            uint64_t *cookie, char *verf, GString *names, const char *what)
{
    bool more;

    if (plus) {
        READDIRPLUS3args a = { .dir = fh3(dir), .cookie = *cookie, .dircount = count,
                               .maxcount = count * 4 };
        READDIRPLUS3res r = { 0 };
        memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
        rpc_ok(c, NFSPROC3_READDIRPLUS, nfsproc3_readdirplus_3(&a, &r, c->clnt), what);
        want_status(false, r.status, NFS3_OK, what);
        for (entryplus3 *e = r.READDIRPLUS3res_u.resok.reply.entries; e; e = e->nextentry) {
            g_string_append_printf(names, "/%s", e->name);
            *cookie = e->cookie;
        }
        memcpy(verf, r.READDIRPLUS3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
        more = !r.READDIRPLUS3res_u.resok.reply.eof;
        xdr_free((xdrproc_t)xdr_READDIRPLUS3res, (char *)&r);
    } else {
        READDIR3args a = { .dir = fh3(dir), .cookie = *cookie, .count = count };
        READDIR3res r = { 0 };
        memcpy(a.cookieverf, verf, NFS3_COOKIEVERFSIZE);
        rpc_ok(c, NFSPROC3_READDIR, nfsproc3_readdir_3(&a, &r, c->clnt), what);
        want_status(false, r.status, NFS3_OK, what);
        for (entry3 *e = r.READDIR3res_u.resok.reply.entries; e; e = e->nextentry) {
            g_string_append_printf(names, "/%s", e->name);
            *cookie = e->cookie;
        }
        memcpy(verf, r.READDIR3res_u.resok.cookieverf, NFS3_COOKIEVERFSIZE);
        more = !r.READDIR3res_u.resok.reply.eof;
        xdr_free((xdrproc_t)xdr_READDIR3res, (char *)&r);
    }
    return more;
}

static void v3_fs_queries(struct conn *c, const struct fh *fh)
{
    FSSTAT3args sa = { .fsroot = fh3(fh) };
    FSSTAT3res sr = { 0 };
    FSINFO3args ia = { .fsroot = fh3(fh) };
    FSINFO3res ir = { 0 };
    PATHCONF3args pa = { .object = fh3(fh) };
    PATHCONF3res pr = { 0 };

    rpc_ok(c, NFSPROC3_FSINFO, nfsproc3_fsinfo_3(&ia, &ir, c->clnt), "FSINFO");
    want_status(false, ir.status, NFS3_OK, "FSINFO");
    xdr_free((xdrproc_t)xdr_FSINFO3res, (char *)&ir);
    rpc_ok(c, NFSPROC3_PATHCONF, nfsproc3_pathconf_3(&pa, &pr, c->clnt), "PATHCONF");
    want_status(false, pr.status, NFS3_OK, "PATHCONF");
    xdr_free((xdrproc_t)xdr_PATHCONF3res, (char *)&pr);
    rpc_ok(c, NFSPROC3_FSSTAT, nfsproc3_fsstat_3(&sa, &sr, c->clnt), "FSSTAT");
    want_status(false, sr.status, NFS3_OK, "FSSTAT");
    xdr_free((xdrproc_t)xdr_FSSTAT3res, (char *)&sr);
}

static void v3_commit(struct conn *c, const struct fh *fh, const char *what)
{
    COMMIT3args a = { .file = fh3(fh) };
    COMMIT3res r = { 0 };

    rpc_ok(c, NFSPROC3_COMMIT, nfsproc3_commit_3(&a, &r, c->clnt), what);
    want_status(false, r.status, NFS3_OK, what);
    xdr_free((xdrproc_t)xdr_COMMIT3res, (char *)&r);
}

/* ------------------------------------------------------------------ NFSv3 scenario */

struct tree {
    struct fh root, top, a, b, f1, f2, f3, sym;
    char topname[64];
};

static void v3_write_file(struct conn *c, const struct fh *fh, uint64_t size, uint32_t chunk,
                          stable_how stable, const char *what)
{
    for (uint64_t off = 0; off < size; off += chunk)
        v3_write(c, fh, off, (uint32_t)MIN((uint64_t)chunk, size - off), stable, what);
}

static void v3_read_file(struct conn *c, const struct fh *fh, uint64_t size, uint32_t chunk,
                         const char *what)
{
    uint64_t off = 0;
    bool eof = false;

    while (!eof) {
        uint32_t n = v3_read(c, fh, off, chunk, &eof, what);
        off += n;
        if (n == 0)
            break;
    }
    if (off != size)
        die("%s: read %" PRIu64 " bytes, expected %" PRIu64, what, off, size);
}

static void v3_list(struct conn *c, const struct fh *dir, bool plus, uint32_t count,
                    const char *must, const char *what)
{
    GString *names = g_string_new("");
    char verf[NFS3_COOKIEVERFSIZE] = { 0 };
    uint64_t cookie = 0;
    int pages = 0;

    while (v3_readdir_page(c, dir, plus, count, &cookie, verf, names, what))
        if (++pages > 1000)
            die("%s: more than 1000 pages", what);
    if (must) {
        gchar **want = g_strsplit(must, "/", -1);
        for (int i = 0; want[i]; i++) {
            char *needle = g_strdup_printf("/%s/", want[i]);
            char *hay = g_strdup_printf("%s/", names->str);
            if (!strstr(hay, needle))
                die("%s: '%s' missing from %s", what, want[i], names->str);
            g_free(needle);
            g_free(hay);
        }
        g_strfreev(want);
    }
    g_string_free(names, TRUE);
}

static sattr3 sattr3_none(void)
{
    sattr3 s;

    memset(&s, 0, sizeof(s));
    return s;
}

static void v3_scenario_build(struct conn *c, struct tree *t)
{
    struct fh scratch;
    sattr3 sa;

    v3_null(c);
    v3_fs_queries(c, &t->root);
    v3_getattr(c, &t->root, "GETATTR root");
    v3_access(c, &t->root, "ACCESS root");
    v3_lookup(c, &t->root, t->topname, NFS3ERR_NOENT, NULL, "LOOKUP of a missing name");
    v3_mkdir(c, &t->root, t->topname, NFS3_OK, &t->top, "MKDIR top");
    v3_mkdir(c, &t->root, t->topname, NFS3ERR_EXIST, &scratch, "MKDIR of an existing name");
    v3_mkdir(c, &t->top, "a", NFS3_OK, &t->a, "MKDIR a");
    v3_mkdir(c, &t->top, "b", NFS3_OK, &t->b, "MKDIR b");
    v3_mkdir(c, &t->a, "sub", NFS3_OK, &scratch, "MKDIR a/sub");
    v3_create(c, &t->top, "file1", UNCHECKED, NFS3_OK, &t->f1, "CREATE file1");
    v3_create(c, &t->top, "file2", GUARDED, NFS3_OK, &t->f2, "CREATE file2");
    v3_create(c, &t->top, "file3", EXCLUSIVE, NFS3_OK, &t->f3, "CREATE file3 exclusive");
    v3_create(c, &t->top, "file2", GUARDED, NFS3ERR_EXIST, &scratch, "CREATE existing");
    v3_write_file(c, &t->f1, 3 * CHUNK + 1000, CHUNK, UNSTABLE, "WRITE file1");
    v3_commit(c, &t->f1, "COMMIT file1");
    v3_read_file(c, &t->f1, 3 * CHUNK + 1000, CHUNK, "READ file1");
    v3_write_file(c, &t->f2, 3000, 1024, DATA_SYNC, "WRITE file2");
    v3_write_file(c, &t->f3, 5000, 5000, FILE_SYNC, "WRITE file3");
    v3_read_file(c, &t->f2, 3000, 700, "READ file2");
    sa = sattr3_none();
    sa.size.set_it = TRUE;
    sa.size.set_size3_u.size = 10000;
    v3_setattr(c, &t->f1, &sa, "SETATTR file1 truncate");
    if (v3_getattr(c, &t->f1, "GETATTR file1").size != 10000)
        die("GETATTR file1: size is not 10000 after the truncate");
    sa = sattr3_none();
    sa.mode.set_it = TRUE;
    sa.mode.set_mode3_u.mode = 0600;
    v3_setattr(c, &t->f3, &sa, "SETATTR file3 chmod");
    v3_access(c, &t->f3, "ACCESS file3");
}

static void v3_scenario_links(struct conn *c, struct tree *t)
{
    struct fh up;

    v3_link(c, &t->f1, &t->a, "file1.link", "LINK a/file1.link");
    if (v3_getattr(c, &t->f1, "GETATTR file1 after LINK").nlink != 2)
        die("GETATTR file1: nlink is not 2 after LINK");
    v3_symlink(c, &t->top, "sym1", "file1", &t->sym, "SYMLINK sym1");
    v3_readlink(c, &t->sym, "file1", "READLINK sym1");
    v3_symlink(c, &t->a, "up", "../b", &up, "SYMLINK a/up");
    v3_mknod_fifo(c, &t->top, "fifo1", "MKNOD fifo1");
    v3_list(c, &t->top, false, 256, "a/b/file1/file2/file3/sym1/fifo1", "READDIR top");
    v3_list(c, &t->top, true, 256, "a/b/file1/file2/file3/sym1/fifo1", "READDIRPLUS top");
    v3_list(c, &t->a, false, 4096, "sub/file1.link/up", "READDIR a");
    v3_list(c, &t->a, true, 4096, NULL, "READDIRPLUS a");
}

static void v3_scenario_finish(struct conn *c, struct tree *t)
{
    struct fh f;

    v3_rename(c, &t->top, "file2", &t->top, "file3", "RENAME file2 over file3");
    v3_lookup(c, &t->top, "file2", NFS3ERR_NOENT, NULL, "LOOKUP file2 after RENAME");
    v3_lookup(c, &t->top, "file3", NFS3_OK, &f, "LOOKUP file3 after RENAME");
    v3_read_file(c, &f, 3000, CHUNK, "READ renamed file3");
    v3_rename(c, &t->top, "a", &t->top, "a2", "RENAME directory a to a2");
    v3_rename(c, &t->a, "file1.link", &t->b, "moved.link", "RENAME across directories");
    v3_remove(c, &t->top, "a2", true, NFS3ERR_NOTEMPTY, "RMDIR of a non-empty directory");
    v3_remove(c, &t->b, "moved.link", false, NFS3_OK, "REMOVE b/moved.link");
    v3_remove(c, &t->a, "sub", true, NFS3_OK, "RMDIR a2/sub");
    v3_remove(c, &t->a, "up", false, NFS3_OK, "REMOVE a2/up");
    v3_remove(c, &t->top, "a2", true, NFS3_OK, "RMDIR a2");
    v3_remove(c, &t->top, "b", true, NFS3_OK, "RMDIR b");
    v3_remove(c, &t->top, "sym1", false, NFS3_OK, "REMOVE sym1");
    v3_remove(c, &t->top, "fifo1", false, NFS3_OK, "REMOVE fifo1");
    v3_remove(c, &t->top, "file3", false, NFS3_OK, "REMOVE file3");
}

/* Random GETATTR/LOOKUP/ACCESS/READ/WRITE calls on file1 (10000 bytes at the start). */
static void v3_random(struct conn *c, struct tree *t, const struct config *cfg)
{
    GRand *rng = g_rand_new_with_seed((guint32)cfg->seed);
    uint64_t size = 10000;
    bool eof;

    for (gint64 i = 0; i < cfg->ops; i++) {
        uint32_t n = (uint32_t)g_rand_int_range(rng, 1, CHUNK + 1);
        /* At most at the end of the file: no holes, so reads match pattern(). */
        uint64_t off = (uint64_t)g_rand_int_range(rng, 0, (gint32)MIN(size, 32 * CHUNK) + 1);
        switch (g_rand_int_range(rng, 0, 5)) {
        case 0: v3_getattr(c, &t->f1, "random GETATTR"); break;
        case 1: v3_lookup(c, &t->top, "file1", NFS3_OK, NULL, "random LOOKUP"); break;
        case 2: v3_access(c, &t->f1, "random ACCESS"); break;
        case 3:
            off = MIN(off, size - 1);
            if (v3_read(c, &t->f1, off, n, &eof, "random READ") != MIN(n, size - off))
                die("random READ: wrong count at %" PRIu64, off);
            break;
        default:
            v3_write(c, &t->f1, off, n, UNSTABLE, "random WRITE");
            size = MAX(size, off + n);
            break;
        }
    }
    g_rand_free(rng);
}

static void v3_run(struct conn *c, struct tree *t, const struct config *cfg)
{
    v3_scenario_build(c, t);
    v3_scenario_links(c, t);
    v3_scenario_finish(c, t);
    v3_random(c, t, cfg);
    v3_remove(c, &t->top, "file1", false, NFS3_OK, "REMOVE file1");
    v3_list(c, &t->top, true, 4096, NULL, "READDIRPLUS empty top");
    v3_remove(c, &t->root, t->topname, true, NFS3_OK, "RMDIR top");
    v3_fs_queries(c, &t->root);
}

/* ------------------------------------------------------------------ NFSv2 (RFC 1094) */

static nfs2_diropargs dirop2(struct fh *dir, const char *name)
{
    nfs2_diropargs d;

    memcpy(d.dir, dir->data, NFS2_FHSIZE);
    d.name = (char *)name;
    return d;
}

static nfs2_sattr sattr2(u_int mode, u_int size)
{
    nfs2_sattr s;

    memset(&s, 0xff, sizeof(s));      /* -1: leave unchanged (RFC 1094 2.3.6) */
    s.mode = mode;
    s.size = size;
    return s;
}

static void v2_dirop(struct conn *c, int proc, struct fh *dir, const char *name, u_int mode,
                     int want, struct fh *out, const char *what)
{
    nfs2_diropres r = { 0 };
    enum clnt_stat st;

    if (proc == NFSPROC_LOOKUP) {
        nfs2_diropargs a = dirop2(dir, name);
        st = nfsproc_lookup_2(&a, &r, c->clnt);
    } else {
        nfs2_createargs a = { .where = dirop2(dir, name), .attributes = sattr2(mode, ~0u) };
        st = proc == NFSPROC_MKDIR ? nfsproc_mkdir_2(&a, &r, c->clnt)
                                   : nfsproc_create_2(&a, &r, c->clnt);
    }
    rpc_ok(c, proc, st, what);
    want_status(true, r.status, want, what);
    if (r.status == NFS_OK && out) {
        out->len = NFS2_FHSIZE;
        memcpy(out->data, r.nfs2_diropres_u.diropok.file, NFS2_FHSIZE);
    }
    xdr_free((xdrproc_t)xdr_nfs2_diropres, (char *)&r);
}

/* REMOVE, RMDIR, RENAME, LINK and SYMLINK all reply with a bare nfs2_stat. */
static void v2_stat_call(struct conn *c, int proc, void *args, int want, const char *what)
{
    nfs2_stat r = NFS_OK;
    enum clnt_stat st;

    switch (proc) {
    case NFSPROC_REMOVE: st = nfsproc_remove_2(args, &r, c->clnt); break;
    case NFSPROC_RMDIR: st = nfsproc_rmdir_2(args, &r, c->clnt); break;
    case NFSPROC_RENAME: st = nfsproc_rename_2(args, &r, c->clnt); break;
    case NFSPROC_LINK: st = nfsproc_link_2(args, &r, c->clnt); break;
    default: st = nfsproc_symlink_2(args, &r, c->clnt); break;
    }
    rpc_ok(c, proc, st, what);
    want_status(true, r, want, what);
}

static void v2_remove(struct conn *c, struct fh *dir, const char *name, bool rmdir, int want,
                      const char *what)
{
    nfs2_diropargs a = dirop2(dir, name);

    v2_stat_call(c, rmdir ? NFSPROC_RMDIR : NFSPROC_REMOVE, &a, want, what);
}

static nfs2_fattr v2_attrcall(struct conn *c, int proc, struct fh *fh, u_int size,
                              const char *what)
{
    nfs2_attrstat r = { 0 };
    nfs2_fattr attr;

    if (proc == NFSPROC_GETATTR) {
        rpc_ok(c, proc, nfsproc_getattr_2(fh->data, &r, c->clnt), what);
    } else {
        nfs2_sattrargs a = { .attributes = sattr2(~0u, size) };
        memcpy(a.file, fh->data, NFS2_FHSIZE);
        rpc_ok(c, proc, nfsproc_setattr_2(&a, &r, c->clnt), what);
    }
    want_status(true, r.status, NFS_OK, what);
    attr = r.nfs2_attrstat_u.attributes;
    xdr_free((xdrproc_t)xdr_nfs2_attrstat, (char *)&r);
    return attr;
}

static void v2_write_file(struct conn *c, struct fh *fh, u_int size, const char *what)
{
    char buf[NFS2_MAXDATA];

    for (u_int off = 0; off < size; off += NFS2_MAXDATA) {
        u_int n = MIN((u_int)NFS2_MAXDATA, size - off);
        nfs2_writeargs a = { .offset = off, .data = { .data_len = n, .data_val = buf } };
        nfs2_attrstat r = { 0 };
        memcpy(a.file, fh->data, NFS2_FHSIZE);
        pattern(buf, off, n);
        rpc_ok(c, NFSPROC_WRITE, nfsproc_write_2(&a, &r, c->clnt), what);
        want_status(true, r.status, NFS_OK, what);
        xdr_free((xdrproc_t)xdr_nfs2_attrstat, (char *)&r);
    }
}

static void v2_read_file(struct conn *c, struct fh *fh, u_int size, const char *what)
{
    char want[NFS2_MAXDATA];
    u_int off = 0, n;

    do {
        nfs2_readargs a = { .offset = off, .count = NFS2_MAXDATA };
        nfs2_readres r = { 0 };
        memcpy(a.file, fh->data, NFS2_FHSIZE);
        rpc_ok(c, NFSPROC_READ, nfsproc_read_2(&a, &r, c->clnt), what);
        want_status(true, r.status, NFS_OK, what);
        n = r.nfs2_readres_u.reply.data.data_len;
        pattern(want, off, MIN(n, (u_int)NFS2_MAXDATA));
        if (n > NFS2_MAXDATA || memcmp(r.nfs2_readres_u.reply.data.data_val, want, n) != 0)
            die("%s: data differs at offset %u", what, off);
        off += n;
        xdr_free((xdrproc_t)xdr_nfs2_readres, (char *)&r);
    } while (n == NFS2_MAXDATA);
    if (off != size)
        die("%s: read %u bytes, expected %u", what, off, size);
}

static void v2_list(struct conn *c, struct fh *dir, const char *what)
{
    nfs2_cookie cookie = { 0 };
    bool eof = false;

    for (int page = 0; !eof; page++) {
        nfs2_readdirargs a = { .count = 256 };
        nfs2_readdirres r = { 0 };
        memcpy(a.dir, dir->data, NFS2_FHSIZE);
        memcpy(a.cookie, cookie, NFS2_COOKIESIZE);
        rpc_ok(c, NFSPROC_READDIR, nfsproc_readdir_2(&a, &r, c->clnt), what);
        want_status(true, r.status, NFS_OK, what);
        for (nfs2_entry *e = r.nfs2_readdirres_u.readdirok.entries; e; e = e->nextentry)
            memcpy(cookie, e->cookie, NFS2_COOKIESIZE);
        eof = r.nfs2_readdirres_u.readdirok.eof || page > 1000;
        xdr_free((xdrproc_t)xdr_nfs2_readdirres, (char *)&r);
    }
}

static void v2_links(struct conn *c, struct tree *t)
{
    nfs2_linkargs la = { .to = dirop2(&t->a, "file1.link") };
    nfs2_symlinkargs sa = { .from = dirop2(&t->top, "sym1"), .to = "file1",
                            .attributes = sattr2(0777, ~0u) };
    nfs2_readlinkres rr = { 0 };

    memcpy(la.from, t->f1.data, NFS2_FHSIZE);
    v2_stat_call(c, NFSPROC_LINK, &la, NFS_OK, "LINK a/file1.link");
    v2_stat_call(c, NFSPROC_SYMLINK, &sa, NFS_OK, "SYMLINK sym1");
    v2_dirop(c, NFSPROC_LOOKUP, &t->top, "sym1", 0, NFS_OK, &t->sym, "LOOKUP sym1");
    rpc_ok(c, NFSPROC_READLINK, nfsproc_readlink_2(t->sym.data, &rr, c->clnt), "READLINK");
    want_status(true, rr.status, NFS_OK, "READLINK sym1");
    if (strcmp(rr.nfs2_readlinkres_u.data, "file1") != 0)
        die("READLINK sym1: got '%s'", rr.nfs2_readlinkres_u.data);
    xdr_free((xdrproc_t)xdr_nfs2_readlinkres, (char *)&rr);
}

static void v2_renames(struct conn *c, struct tree *t)
{
    nfs2_renameargs over = { .from = dirop2(&t->top, "file2"), .to = dirop2(&t->top, "file3") };
    nfs2_renameargs dir = { .from = dirop2(&t->top, "a"), .to = dirop2(&t->top, "a2") };

    v2_stat_call(c, NFSPROC_RENAME, &over, NFS_OK, "RENAME file2 over file3");
    v2_stat_call(c, NFSPROC_RENAME, &dir, NFS_OK, "RENAME directory a to a2");
    v2_remove(c, &t->top, "a2", true, NFSERR_NOTEMPTY, "RMDIR of a non-empty directory");
    v2_remove(c, &t->a, "file1.link", false, NFS_OK, "REMOVE a2/file1.link");
    v2_remove(c, &t->top, "a2", true, NFS_OK, "RMDIR a2");
    v2_remove(c, &t->top, "b", true, NFS_OK, "RMDIR b");
    v2_remove(c, &t->top, "sym1", false, NFS_OK, "REMOVE sym1");
    v2_remove(c, &t->top, "file3", false, NFS_OK, "REMOVE file3");
    v2_remove(c, &t->top, "file1", false, NFS_OK, "REMOVE file1");
}

static void v2_run(struct conn *c, struct tree *t)
{
    nfs2_statfsres sr = { 0 };

    rpc_ok(c, NFSPROC_NULL, nfsproc_null_2(NULL, NULL, c->clnt), "NULL");
    rpc_ok(c, NFSPROC_STATFS, nfsproc_statfs_2(t->root.data, &sr, c->clnt), "STATFS");
    want_status(true, sr.status, NFS_OK, "STATFS");
    v2_attrcall(c, NFSPROC_GETATTR, &t->root, 0, "GETATTR root");
    v2_dirop(c, NFSPROC_LOOKUP, &t->root, t->topname, 0, NFSERR_NOENT, NULL, "LOOKUP missing");
    v2_dirop(c, NFSPROC_MKDIR, &t->root, t->topname, 0755, NFS_OK, &t->top, "MKDIR top");
    v2_dirop(c, NFSPROC_MKDIR, &t->root, t->topname, 0755, NFSERR_EXIST, NULL, "MKDIR again");
    v2_dirop(c, NFSPROC_MKDIR, &t->top, "a", 0755, NFS_OK, &t->a, "MKDIR a");
    v2_dirop(c, NFSPROC_MKDIR, &t->top, "b", 0755, NFS_OK, &t->b, "MKDIR b");
    v2_dirop(c, NFSPROC_CREATE, &t->top, "file1", 0644, NFS_OK, &t->f1, "CREATE file1");
    v2_dirop(c, NFSPROC_CREATE, &t->top, "file2", 0644, NFS_OK, &t->f2, "CREATE file2");
    v2_dirop(c, NFSPROC_CREATE, &t->top, "file3", 0644, NFS_OK, &t->f3, "CREATE file3");
    v2_write_file(c, &t->f1, 3 * NFS2_MAXDATA + 1000, "WRITE file1");
    v2_read_file(c, &t->f1, 3 * NFS2_MAXDATA + 1000, "READ file1");
    v2_write_file(c, &t->f2, 3000, "WRITE file2");
    if (v2_attrcall(c, NFSPROC_SETATTR, &t->f1, 10000, "SETATTR truncate").size != 10000)
        die("SETATTR file1: size is not 10000 after the truncate");
    v2_links(c, t);
    v2_list(c, &t->top, "READDIR top");
    v2_renames(c, t);
    v2_remove(c, &t->root, t->topname, true, NFS_OK, "RMDIR top");
    rpc_ok(c, NFSPROC_STATFS, nfsproc_statfs_2(t->root.data, &sr, c->clnt), "STATFS");
}

/* ------------------------------------------------------------------ MOUNT and main */

static void mount_root(struct conn *m, const struct config *cfg, struct fh *root)
{
    dirpath path = cfg->path;

    if (cfg->v2) {
        fhstatus r = { 0 };
        rpc_ok(m, MOUNTPROC_NULL, mountproc_null_1(NULL, NULL, m->clnt), "MOUNT v1 NULL");
        rpc_ok(m, MOUNTPROC_MNT, mountproc_mnt_1(&path, &r, m->clnt), "MNT v1");
        if (r.status != 0)
            die("MNT v1 %s: refused with status %u", cfg->path, r.status);
        root->len = NFS2_FHSIZE;
        memcpy(root->data, r.fhstatus_u.directory, NFS2_FHSIZE);
        return;
    }
    mountres3 r = { 0 };
    rpc_ok(m, MOUNTPROC3_NULL, mountproc3_null_3(NULL, NULL, m->clnt), "MOUNT NULL");
    rpc_ok(m, MOUNTPROC3_MNT, mountproc3_mnt_3(&path, &r, m->clnt), "MNT");
    if (r.fhs_status != MNT3_OK)
        die("MNT %s: refused with %s", cfg->path,
            status_name(TBBT_PROTO_MNT3, r.fhs_status, (char[32]){ 0 }, 32));
    fhandle3 *h = &r.mountres3_u.mountinfo.fhandle;
    if (h->fhandle3_len == 0 || h->fhandle3_len > NFS3_FHSIZE)
        die("MNT %s: bad handle length %u", cfg->path, h->fhandle3_len);
    root->len = h->fhandle3_len;
    memcpy(root->data, h->fhandle3_val, root->len);
    xdr_free((xdrproc_t)xdr_mountres3, (char *)&r);
}

static void unmount_root(struct conn *m, const struct config *cfg)
{
    dirpath path = cfg->path;

    if (cfg->v2)
        rpc_ok(m, MOUNTPROC_UMNT, mountproc_umnt_1(&path, NULL, m->clnt), "UMNT v1");
    else
        rpc_ok(m, MOUNTPROC3_UMNT, mountproc3_umnt_3(&path, NULL, m->clnt), "UMNT");
}

/* Parses nfs://server/path[?version=3&nfsport=N&mountport=N] like nfs-scenario. */
static bool parse_url(const char *url, struct config *cfg)
{
    const char *p = url, *slash, *q;
    bool ok = true;

    if (!g_str_has_prefix(p, "nfs://"))
        return false;
    p += 6;
    slash = strchr(p, '/');
    if (!slash || slash == p)
        return false;
    cfg->server = g_strndup(p, (gsize)(slash - p));
    q = strchr(slash, '?');
    cfg->path = q ? g_strndup(slash, (gsize)(q - slash)) : g_strdup(slash);
    if (q) {
        gchar **kv = g_strsplit(q + 1, "&", -1);
        for (int i = 0; kv[i]; i++) {
            if (g_str_has_prefix(kv[i], "nfsport="))
                cfg->nfs_port = atoi(kv[i] + 8);
            else if (g_str_has_prefix(kv[i], "mountport="))
                cfg->mount_port = atoi(kv[i] + 10);
            else if (g_str_has_prefix(kv[i], "version="))
                ok = ok && (strcmp(kv[i] + 8, "3") == 0 || strcmp(kv[i] + 8, "2") == 0);
        }
        g_strfreev(kv);
    }
    return ok;
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
    GOptionEntry entries[] = {
        { "v2", '2', 0, G_OPTION_ARG_NONE, &cfg->v2, "use MOUNT v1 and NFSv2", NULL },
        { "ops", 'n', 0, G_OPTION_ARG_INT64, &cfg->ops,
          "extra random NFSv3 file calls after the scenario (default 0)", "N" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &cfg->seed, "seed of the random calls", "S" },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &cfg->verbose,
          "print per-procedure call counts", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("URL");
    GError *err = NULL;

    g_option_context_set_summary(ctx,
        "Runs a scripted NFSv3 (or, with --v2, NFSv2) scenario over UDP against\n"
        "URL nfs://SERVER/EXPORT (libtirpc and the tbbt rpcgen stubs).");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        fprintf(stderr, PROG ": %s (try --help)\n", err->message);
        exit(TBBT_EXIT_USAGE);
    }
    g_option_context_free(ctx);
    if (argc != 2 || !parse_url(argv[1], cfg)) {
        fprintf(stderr, PROG ": need one URL nfs://SERVER/PATH (try --help)\n");
        exit(TBBT_EXIT_USAGE);
    }
    if (cfg->ops < 0 || (cfg->v2 && cfg->ops > 0)) {
        fprintf(stderr, PROG ": --ops must be >= 0 and is for NFSv3 only\n");
        exit(TBBT_EXIT_USAGE);
    }
}

static void print_counts(const struct conn *c, bool v2)
{
    uint64_t total = 0;

    for (int p = 0; p < NPROC; p++)
        total += c->calls[p];
    fprintf(stderr, PROG ": %" PRIu64 " NFSv%d calls\n", total, v2 ? 2 : 3);
    for (int p = 0; p < NPROC; p++)
        if ((v2 ? proc2_names : proc3_names)[p])
            fprintf(stderr, PROG ":   %-12s %" PRIu64 "\n", (v2 ? proc2_names : proc3_names)[p],
                    c->calls[p]);
}

int main(int argc, char **argv)
{
    struct config cfg = { .seed = 1 };
    struct conn mnt = { .what = "MOUNT" }, nfs = { .what = "NFS" };
    struct tree t = { 0 };

    parse_args(argc, argv, &cfg);
    g_snprintf(t.topname, sizeof(t.topname), "udp.%d", (int)getpid());
    conn_open(&mnt, &cfg, MOUNT_PROGRAM, cfg.v2 ? MOUNTVERS : MOUNT_V3, cfg.mount_port);
    mount_root(&mnt, &cfg, &t.root);
    conn_open(&nfs, &cfg, NFS3_PROGRAM, cfg.v2 ? NFS_VERSION : NFS_V3, cfg.nfs_port);
    if (cfg.v2)
        v2_run(&nfs, &t);
    else
        v3_run(&nfs, &t, &cfg);
    if (cfg.verbose)
        print_counts(&nfs, cfg.v2);
    unmount_root(&mnt, &cfg);
    conn_close(&nfs);
    conn_close(&mnt);
    g_free(cfg.server);
    g_free(cfg.path);
    return TBBT_EXIT_OK;
}
