/* SPDX-License-Identifier: MIT */
/*
 * nfs-scenario: a libnfs client that drives every NFSv3 procedure (RFC 1813 section 3,
 * procedures 0-21) plus MOUNT v3 (RFC 1813 section 5) against the lab server, so that
 * tcpdump around it yields a capture with known content.
 *
 * It runs one scripted scenario (a small tree: mkdirs, files written and read in
 * chunks, renames over a target and of a directory with children, hard and symbolic
 * links, a FIFO, readdir/readdirplus in several pages, setattr, commit, expected
 * failures NOENT/EXIST/NOTEMPTY, and removal of everything), then optionally --ops N
 * random operations.  The random ones run in --inflight independent slots, each the
 * only user of its own directory, so several calls are in flight on the one TCP
 * connection while every reply can still be checked against a model of that directory.
 * Any reply that differs from the expectation ends the run with exit code 1.
 *
 * It uses libnfs's raw asynchronous API (rpc_nfs3_*_async) with its own poll() loop;
 * libnfs speaks TCP only (tools/udp-scenario.c does UDP).  Not installed; used by
 * tools/make-captures.sh.  See docs/lab.md.
 *
 * This file: the command line, the run and the per-procedure counts; the others are
 * listed in nfs-scenario-int.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "nfs-scenario-int.h"

/* Parses nfs://server[:port]/path[?version=3&nfsport=N&mountport=N]. */
static bool parse_url(const char *url, struct config *cfg)
{
    const char *p = url, *slash, *q;

    if (!g_str_has_prefix(p, "nfs://"))
        return false;
    p += 6;
    slash = strchr(p, '/');
    if (!slash || slash == p)
        return false;
    cfg->server = g_strndup(p, (gsize)(slash - p));
    q = strchr(slash, '?');
    cfg->path = q ? g_strndup(slash, (gsize)(q - slash)) : g_strdup(slash);
    if (!q)
        return true;
    gchar **kv = g_strsplit(q + 1, "&", -1);
    bool ok = true;
    for (int i = 0; kv[i] && ok; i++) {
        if (g_str_has_prefix(kv[i], "version="))
            ok = strcmp(kv[i] + 8, "3") == 0;
        else if (g_str_has_prefix(kv[i], "nfsport="))
            cfg->nfs_port = atoi(kv[i] + 8);
        else if (g_str_has_prefix(kv[i], "mountport="))
            cfg->mount_port = atoi(kv[i] + 10);
    }
    g_strfreev(kv);
    return ok;
}

static void parse_args(int argc, char **argv, struct config *cfg)
{
    gboolean show_version = FALSE;
    GOptionEntry entries[] = {
        { "ops", 'n', 0, G_OPTION_ARG_INT64, &cfg->ops,
          "extra random operations after the scripted scenario (default 0)", "N" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &cfg->seed,
          "seed of the random operations (default 1)", "S" },
        { "inflight", 'j', 0, G_OPTION_ARG_INT, &cfg->inflight,
          "random operations in flight at once, one per directory (default 8)", "K" },
        { "max-io", 'm', 0, G_OPTION_ARG_INT, &cfg->max_io,
          "largest random READ or WRITE in bytes, 1..32768 (default 4096)", "BYTES" },
        { "no-rename-over", 0, 0, G_OPTION_ARG_NONE, &cfg->no_rename_over,
          "never RENAME onto an existing file (Ganesha's MEM FSAL fails those)", NULL },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &cfg->verbose,
          "print per-procedure call counts", NULL },
        { "version", 'V', 0, G_OPTION_ARG_NONE, &show_version,
          "print the version and exit", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    tool_options(PROG, "URL",
                 "Runs a scripted NFSv3 scenario that uses every procedure, then --ops random\n"
                 "operations, against URL nfs://SERVER/EXPORT?version=3 (libnfs, TCP).",
                 entries, &show_version, &argc, &argv);
    if (argc != 2 || !parse_url(argv[1], cfg)) {
        fprintf(stderr, PROG ": need one URL nfs://SERVER/PATH[?version=3] (try --help)\n");
        exit(TBBT_EXIT_USAGE);
    }
    if (cfg->ops < 0 || cfg->inflight < 1 || cfg->inflight > 256 || cfg->max_io < 1 ||
        cfg->max_io > FILE_SPAN / 2) {
        fprintf(stderr, PROG ": --ops must be >= 0, --inflight 1..256, --max-io 1..%d\n",
                FILE_SPAN / 2);
        exit(TBBT_EXIT_USAGE);
    }
}

static void print_counts(const struct client *c, double secs)
{
    uint64_t total = 0;

    for (int p = 0; p < NPROC3; p++)
        total += c->calls[p];
    fprintf(stderr, PROG ": %" PRIu64 " NFSv3 calls in %.2f s (%.0f calls/s)\n", total, secs,
            secs > 0 ? (double)total / secs : 0.0);
    for (int p = 0; p < NPROC3; p++)
        fprintf(stderr, PROG ":   %-12s %" PRIu64 "\n", sc_proc_names[p], c->calls[p]);
}

int main(int argc, char **argv)
{
    struct config cfg = { .seed = 1, .inflight = 8, .max_io = 4096 };
    struct client mnt = { .what = "MOUNT" }, nfs = { .what = "NFS" };
    struct tree t = { 0 };
    gint64 t0;

    parse_args(argc, argv, &cfg);
    sc_client_connect(&mnt, &cfg, MOUNT_PROGRAM, cfg.mount_port);
    sc_mount_export(&mnt, &cfg, &t.root);
    sc_client_connect(&nfs, &cfg, NFS_PROGRAM, cfg.nfs_port);
    t0 = g_get_monotonic_time();
    g_snprintf(t.topname, sizeof(t.topname), "scn.%d", (int)getpid());
    t.no_rename_over = cfg.no_rename_over;
    sc_scenario_start(&nfs, &t);
    sc_scenario_files(&nfs, &t);
    sc_scenario_links(&nfs, &t);
    sc_scenario_renames(&nfs, &t);
    sc_scenario_cleanup(&nfs, &t);
    if (cfg.ops > 0)
        sc_run_random(&nfs, &t.root, &cfg);
    if (cfg.verbose)
        print_counts(&nfs, (double)(g_get_monotonic_time() - t0) / 1e6);
    sc_unmount_export(&mnt, &cfg);
    rpc_destroy_context(nfs.rpc);
    rpc_destroy_context(mnt.rpc);
    g_free(cfg.server);
    g_free(cfg.path);
    return TBBT_EXIT_OK;
}
