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
 *
 * This file: the command line, MOUNT and the run; the others are listed in
 * udp-scenario-int.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "udp-scenario-int.h"

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

/* ------------------------------------------------------------------ MOUNT and main */

static void mount_root(struct conn *m, const struct config *cfg, struct fh *root)
{
    dirpath path = cfg->path;

    if (cfg->v2) {
        fhstatus r = { 0 };
        us_rpc_ok(m, MOUNTPROC_NULL, mountproc_null_1(NULL, NULL, m->clnt), "MOUNT v1 NULL");
        us_rpc_ok(m, MOUNTPROC_MNT, mountproc_mnt_1(&path, &r, m->clnt), "MNT v1");
        if (r.status != 0)
            us_die("MNT v1 %s: refused with status %u", cfg->path, r.status);
        root->len = NFS2_FHSIZE;
        memcpy(root->data, r.fhstatus_u.directory, NFS2_FHSIZE);
        return;
    }
    mountres3 r = { 0 };
    us_rpc_ok(m, MOUNTPROC3_NULL, mountproc3_null_3(NULL, NULL, m->clnt), "MOUNT NULL");
    us_rpc_ok(m, MOUNTPROC3_MNT, mountproc3_mnt_3(&path, &r, m->clnt), "MNT");
    if (r.fhs_status != MNT3_OK)
        us_die("MNT %s: refused with %s", cfg->path,
               us_status_name(TBBT_PROTO_MNT3, r.fhs_status, (char[32]){ 0 }, 32));
    fhandle3 *h = &r.mountres3_u.mountinfo.fhandle;
    if (h->fhandle3_len == 0 || h->fhandle3_len > NFS3_FHSIZE)
        us_die("MNT %s: bad handle length %u", cfg->path, h->fhandle3_len);
    root->len = h->fhandle3_len;
    memcpy(root->data, h->fhandle3_val, root->len);
    xdr_free((xdrproc_t)xdr_mountres3, (char *)&r);
}

static void unmount_root(struct conn *m, const struct config *cfg)
{
    dirpath path = cfg->path;

    if (cfg->v2)
        us_rpc_ok(m, MOUNTPROC_UMNT, mountproc_umnt_1(&path, NULL, m->clnt), "UMNT v1");
    else
        us_rpc_ok(m, MOUNTPROC3_UMNT, mountproc3_umnt_3(&path, NULL, m->clnt), "UMNT");
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
    gboolean show_version = FALSE;
    GOptionEntry entries[] = {
        { "v2", '2', 0, G_OPTION_ARG_NONE, &cfg->v2, "use MOUNT v1 and NFSv2", NULL },
        { "ops", 'n', 0, G_OPTION_ARG_INT64, &cfg->ops,
          "extra random NFSv3 file calls after the scenario (default 0)", "N" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &cfg->seed, "seed of the random calls", "S" },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &cfg->verbose,
          "print per-procedure call counts", NULL },
        { "version", 'V', 0, G_OPTION_ARG_NONE, &show_version,
          "print the version and exit", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    tool_options(PROG, "URL",
                 "Runs a scripted NFSv3 (or, with --v2, NFSv2) scenario over UDP against\n"
                 "URL nfs://SERVER/EXPORT (libtirpc and the tbbt rpcgen stubs).",
                 entries, &show_version, &argc, &argv);
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
    us_conn_open(&mnt, &cfg, MOUNT_PROGRAM, cfg.v2 ? MOUNTVERS : MOUNT_V3, cfg.mount_port);
    mount_root(&mnt, &cfg, &t.root);
    us_conn_open(&nfs, &cfg, NFS3_PROGRAM, cfg.v2 ? NFS_VERSION : NFS_V3, cfg.nfs_port);
    if (cfg.v2)
        us_v2_run(&nfs, &t);
    else
        us_v3_run(&nfs, &t, &cfg);
    if (cfg.verbose)
        print_counts(&nfs, cfg.v2);
    unmount_root(&mnt, &cfg);
    us_conn_close(&nfs);
    us_conn_close(&mnt);
    g_free(cfg.server);
    g_free(cfg.path);
    return TBBT_EXIT_OK;
}
