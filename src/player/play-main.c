/* SPDX-License-Identifier: MIT */
/*
 * tbbt-play: replays a TBBT trace against a live NFS server (TBBT paper 3.4 and 4).
 * Options into a config, then: portmap look-ups, MOUNT of the export, start-up
 * resolution of the initial image's handles per clone (resolve.h), the three-thread
 * replay (engine.h), --verify (verify.h) and the report (report.h); SIGINT and SIGTERM
 * stop each of these cleanly (the stopper below).  docs/tbbt-play.md.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ns/ns.h"
#include "player/engine.h"
#include "player/grace.h"
#include "player/handles.h"
#include "player/play-mpi.h"
#include "player/play-scan.h"
#include "player/engine4.h"
#include "player/precheck.h"
#include "player/report.h"
#include "player/resolve.h"
#include "player/subset.h"
#include "onc/rpcconn.h"
#include "player/verify.h"
#include "trace/trace.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/outfile.h"
#include "util/util.h"

#define PROG "tbbt-play"

static gchar *opt_trace, *opt_manifest, *opt_server, *opt_export, *opt_map;
static gchar *opt_proto = "tcp", *opt_order = "conservative", *opt_timing = "full";
static gchar *opt_report_json, *opt_timeseries, *opt_events, *opt_subset_client;
static gchar *opt_subset_subtree, *opt_image_root, *opt_reorder, *opt_pseudo;
static gint opt_v4_renew_ms = 1000;
static gchar *opt_v4_client_tag;        /* NULL: a tag of the run's own (run_v4()) */
static gint64 opt_reorder_seed = 1;
static gint opt_client_out;
static struct tbbt_reorder_spec reorder_spec;
static gdouble opt_speed = 1.0;
static gint opt_clones = 1, opt_first_clone, opt_window = 4096, opt_max_out = 64;
static gint opt_batch = 32, opt_recv_batch;
static gchar *opt_conns = "client";
static unsigned opt_nconns;         /* --connections N, 0 for 'client' (check_usage()) */
static gboolean opt_reserved_ports;
static gint opt_nfs_port, opt_mount_port, opt_uid = -1, opt_gid = -1, opt_timeout_ms;
static gint opt_retries = 5, opt_retrans = 3, opt_dead_s = 30, opt_jukebox_wait_s = 300;
static gint opt_spin_us = 20;
static gchar *opt_causal_slack;     /* "auto": from the trace (scan_trace()) */
static uint64_t opt_causal_slack_ns;    /* --causal-slack US (check_usage()) */
static gint opt_rx_spin_us = -1;    /* -1: 50 in conservative timestamp timing, else 0 */
static gboolean opt_no_grace_wait, opt_check_only;
static gboolean opt_verify;
static gchar *opt_distribute, *opt_client_key = "auto", *opt_rank_reports;
static enum tbbt_play_dist dist;         /* --distribute (check_usage()) */
static struct tbbt_play_images img;     /* the images this process replays (check_usage()) */
static struct tbbt_cli_common opt_common;

/* The option values above, from play-options.def (never freed: some defaults are literals). */
static const GOptionEntry entries[] = {
#include "player/play-options.def"
    TBBT_CLI_END,
};

/* ------------------------------------------------------------------ start-up */

struct run {
    struct tbbt_play_scan sc;       /* what the pass over the trace learnt (scan_trace()) */
    const char *grace;              /* the probe's answer (report), NULL: not probed */
    double grace_wait_s;
    struct tbbt_manifest *man;
    char *map_path;
    uint64_t root_id;
    uint32_t vers;
    bool udp;
    uint16_t nfs_port, mount_port;
    struct tbbt_rpcconn_fh export_root;
    struct tbbt_handles **handles;
    char *root_rel;
    struct tbbt_subset ss;
    bool usage_error;               /* startup(): no server or export to replay to */
    bool v4;                        /* an NFSv4 trace (engine4.h) */
};

static struct tbbt_rpcconn *conn_to(bool udp, const char *host, uint16_t port, char *err,
                                    size_t errlen)
{
    struct tbbt_rpcconn_opts o = {
        .transport = udp ? TBBT_RPCCONN_UDP : TBBT_RPCCONN_TCP,
        .flavor = TBBT_RPCCONN_AUTH_SYS, .machine = TBBT_PLAYER_MACHINE,
        .uid = opt_uid >= 0 ? (uint32_t)opt_uid : 0, .gid = opt_gid >= 0 ? (uint32_t)opt_gid : 0,
        .reserved_port = opt_reserved_ports,
    };
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(&o);
    if (tbbt_rpcconn_connect(c, host, port) < 0) {
        g_snprintf(err, errlen, "cannot connect to %s:%u: %s", host, port, tbbt_rpcconn_error(c));
        tbbt_rpcconn_free(c);
        return NULL;
    }
    /* Start-up and --verify resend and reconnect as the replay does (engine.c). */
    struct tbbt_rpcconn_retry retry = {
        .timeout_ms = opt_timeout_ms > 0 ? opt_timeout_ms : udp ? 1000 : 10000,
        .retrans = (unsigned)opt_retrans, .relost = (unsigned)opt_retries,
        .dead_ms = opt_dead_s * 1000,
    };
    tbbt_rpcconn_set_retry(c, &retry);
    return c;
}

static int getport(struct run *r, uint32_t prog, uint32_t vers, uint16_t *port)
{
    char err[256];
    struct tbbt_rpcconn *c = conn_to(r->udp, opt_server, 111, err, sizeof(err));
    if (!c) {
        fprintf(stderr, PROG ": rpcbind on %s: %s (give --nfs-port and --mount-port)\n",
                opt_server, err);
        return -1;
    }
    int rc = tbbt_rpcconn_getport(c, prog, vers, r->udp ? IPPROTO_UDP : IPPROTO_TCP, 5000,
                                  port);
    if (rc < 0 || *port == 0)
        fprintf(stderr, PROG ": rpcbind on %s: program %u version %u over %s: %s\n", opt_server,
                prog, vers, r->udp ? "udp" : "tcp",
                rc < 0 ? tbbt_rpcconn_error(c) : "not registered");
    tbbt_rpcconn_free(c);
    return rc < 0 || *port == 0 ? -1 : 0;
}

/* --causal-slack auto: the slack comes from the trace. */
static bool causal_slack_auto(void)
{
    return !strcmp(opt_order, "conservative") && opt_causal_slack &&
           !strcmp(opt_causal_slack, "auto");
}

/* The trace's pass before the replay (play-scan.h): its version, slack and clients. */
static int scan_trace(struct run *r, const char *path)
{
    char err[512];
    r->sc = (struct tbbt_play_scan){.stop_at_version = opt_nconns != 0,
                                    .want_slack = causal_slack_auto(),
                                    .want_addrs = dist == TBBT_PLAY_DIST_CLIENTS};
    if (tbbt_play_scan(path, &r->sc, err, sizeof(err)) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
    }
    r->v4 = r->sc.nv4 > 0;
    if (r->v4 && (dist != TBBT_PLAY_DIST_NONE || img.count != 1 || opt_proto[0] == 'u' ||
                  opt_reorder || opt_subset_client || opt_subset_subtree)) {
        fprintf(stderr, PROG ": trace '%s' has NFSv4 records: it replays over TCP against "
                "one image, without --distribute, --clones, --reorder or --subset-* "
                "(docs/nfsv4.md)\n", path);
        r->usage_error = true;
        return -1;
    }
    r->vers = r->sc.vers;
    return 0;
}

/* ------------------------------------------------------------------ the files, first */

/*
 * precheck.h, before any server is asked: sets r->man, r->map_path and r->root_id (the
 * map's root ID, from the check's single read of the map).  0 or -1.
 */
static int precheck(struct run *r)
{
    char err[1024];
    struct tbbt_precheck p = {
        .trace = opt_trace, .manifest = opt_manifest, .map = opt_map,
        .outputs = {opt_report_json, opt_timeseries, opt_events},
        .output_opts = {"--report-json", "--timeseries", "--event-log"},
    };
    if (tbbt_precheck_run(&p, &r->man, &r->map_path, err, sizeof(err)) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
    }
    r->root_id = p.map_root_id;
    return 0;
}

/* --check-only: the checks of precheck(), then exit; no server is asked. */
static int check_only(void)
{
    struct run r = {0};
    int rc = precheck(&r);
    if (rc == 0 && !opt_common.quiet)
        printf(PROG ": trace '%s', map '%s' and manifest '%s' are whole and belong together; "
               "the output files can be written\n", opt_trace, r.map_path, opt_manifest);
    g_free(r.map_path);
    tbbt_manifest_free(r.man);
    return rc == 0 ? TBBT_EXIT_OK : TBBT_EXIT_FAIL;
}

static int startup(struct run *r)
{
    char err[512];
    int rc;
    if (precheck(r) < 0)        /* the files first: a bad one is no server's fault */
        return -1;
    /* An image built through NFS (tbbt-init --server) names where it was built. */
    if (!opt_server && r->man->server)
        opt_server = g_strdup(r->man->server);
    if (!opt_export && r->man->server && r->man->export_path)
        opt_export = g_strdup(r->man->export_path);
    if (!opt_server || !opt_export) {
        fprintf(stderr, PROG ": --server and --export are needed (the manifest '%s' has no "
                "server and export lines: its image was built locally)\n", opt_manifest);
        r->usage_error = true;
        return -1;
    }
    if ((guint)(opt_first_clone + opt_clones) > r->man->clones->len) {
        fprintf(stderr, PROG ": --first-clone %d --clones %d but the manifest '%s' has %u "
                "image(s) (tbbt-init --clones N)\n", opt_first_clone, opt_clones, opt_manifest,
                r->man->clones->len);
        return -1;
    }
    if (r->root_id == 0)   /* no MOUNT in the trace: the image root gets a slot of its own */
        r->root_id = TBBT_HANDLES_MAX_ID - 1;
    if (scan_trace(r, opt_trace) < 0)
        return -1;
    const char *image_root = opt_image_root ? opt_image_root : r->man->root;
    if (image_root && tbbt_resolve_relpath(opt_export, image_root, &r->root_rel, err,
                                           sizeof(err)) < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
    }
    r->nfs_port = (uint16_t)opt_nfs_port;
    r->mount_port = (uint16_t)opt_mount_port;
    if (!r->nfs_port && getport(r, 100003, r->vers, &r->nfs_port) < 0)
        return -1;
    if (!r->mount_port && getport(r, 100005, r->vers == 2 ? 1 : 3, &r->mount_port) < 0)
        return -1;
    struct tbbt_rpcconn *mc = conn_to(r->udp, opt_server, r->mount_port, err, sizeof(err));
    if (!mc) {
        fprintf(stderr, PROG ": MOUNT server: %s\n", err);
        return -1;
    }
    rc = tbbt_resolve_mount(mc, r->vers, opt_export, 10000, &r->export_root, err, sizeof(err));
    tbbt_rpcconn_free(mc);
    if (rc < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return -1;
    }
    r->ss.root_id = r->root_id;
    if (opt_subset_client)
        r->ss.clients = g_strsplit(opt_subset_client, ",", -1);
    if (opt_subset_subtree) {
        char **names = g_strsplit(opt_subset_subtree, ",", -1);
        tbbt_subset_add_tops(&r->ss, r->man, names);
        g_strfreev(names);
    }
    r->handles = g_new0(struct tbbt_handles *, MAX(img.count, 1u));
    struct tbbt_rpcconn *c = conn_to(r->udp, opt_server, r->nfs_port, err, sizeof(err));
    if (!c) {
        fprintf(stderr, PROG ": NFS server: %s\n", err);
        return -1;
    }
    for (uint32_t i = 0; i < img.count; i++) {
        uint32_t image = img.first + i * img.stride;
        r->handles[i] = tbbt_handles_new();
        struct tbbt_resolve_opts ro = {.vers = r->vers, .want = tbbt_subset_want,
                                       .want_arg = &r->ss, .root_path = r->root_rel};
        struct tbbt_resolve_stats st = {0};
        rc = tbbt_resolve_run(c, r->man, image, &r->export_root,
                              r->root_id, &ro, r->handles[i], &st, err, sizeof(err));
        if (rc < 0) {
            fprintf(stderr, PROG ": start-up look-up of image %u: %s\n", image, err);
            break;
        }
        tbbt_log(TBBT_LOG_INFO, "image %u: %" PRIu64 " objects resolved in %.2f s", image,
                 st.resolved, (double)st.ns / 1e9);
    }
    tbbt_rpcconn_free(c);
    return rc < 0 ? -1 : 0;
}

/*
 * Before the replay: is the server in its grace period (grace.h)?  A replay started then
 * would measure the wait for its end, not the server: say so, and by default wait until
 * it is over (at most --jukebox-wait).  The replay waits out JUKEBOX replies anyway.
 */
static int grace_check(struct run *r)
{
    char err[512];
    const struct tbbt_handle *h = tbbt_handles_known(r->handles[0], r->root_id);
    if (!h || r->vers != 3)
        return 0;
    struct tbbt_rpcconn_fh root = {.len = h->len};
    memcpy(root.data, h->data, h->len);
    struct tbbt_rpcconn *c = conn_to(r->udp, opt_server, r->nfs_port, err, sizeof(err));
    if (!c) {
        fprintf(stderr, PROG ": NFS server: %s\n", err);
        return -1;
    }
    enum tbbt_grace_state st;
    uint64_t t0 = tbbt_now_ns(), limit = (uint64_t)opt_jukebox_wait_s * 1000000000ull;
    int rc = tbbt_grace_probe(c, r->vers, &root, 10000, &st, err, sizeof(err));
    if (rc == 0 && st == TBBT_GRACE_YES) {
        fprintf(stderr, PROG ": the server is in its grace period (a SETATTR of the image "
                "root was answered NFS3ERR_JUKEBOX): %s\n", opt_no_grace_wait
                ? "replaying anyway (--no-grace-wait); calls that change state will wait"
                : "waiting for it to end before the replay (--no-grace-wait: start at once)");
        r->grace = tbbt_grace_state_name(st);
        while (!opt_no_grace_wait && rc == 0 && st == TBBT_GRACE_YES &&
               tbbt_now_ns() - t0 < limit) {
            g_usleep(250000);
            rc = tbbt_grace_probe(c, r->vers, &root, 10000, &st, err, sizeof(err));
        }
        r->grace_wait_s = opt_no_grace_wait ? 0 : (double)(tbbt_now_ns() - t0) / 1e9;
        if (rc == 0 && !opt_no_grace_wait)
            fprintf(stderr, PROG ": %s after %.1f s\n", st == TBBT_GRACE_YES
                    ? "still in the grace period at --jukebox-wait; replaying anyway"
                    : "grace period over", r->grace_wait_s);
    } else if (rc == 0) {
        r->grace = tbbt_grace_state_name(st);
    }
    tbbt_rpcconn_free(c);
    if (rc < 0)
        fprintf(stderr, PROG ": %s\n", err);
    return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ NFSv4 */

/* The components of path (split at '/', empty ones and "." left out), NULL-terminated
 * (given: g_strfreev()). */
static char **path_comps(const char *path)
{
    gchar **all = g_strsplit(path, "/", -1);
    GPtrArray *v = g_ptr_array_new();
    for (gchar **c = all; *c; c++) {
        if (**c && strcmp(*c, "."))
            g_ptr_array_add(v, *c);
        else
            g_free(*c);
    }
    g_free(all);
    g_ptr_array_add(v, NULL);
    return (char **)g_ptr_array_free(v, FALSE);
}

/*
 * The traced exports of an NFSv4 trace and the live directories of the image that stand
 * for them: each `# v4-export PSEUDO MAPPATH` line of the map (the pseudo path a traced
 * client walked, the map path it reached) becomes the image's MAPPATH, whose pseudo
 * path is --pseudo, the image's path under the export, then MAPPATH; a map without such
 * lines (made before them) gets one export for any first component: the image root.
 * Each live directory is looked up once.  0 with *out (struct tbbt_engine4_export,
 * given: free_exports()), or -1 with the reason in err.
 */
static int image_exports(struct run *r, GArray **out, char *err, size_t errlen)
{
    const char *pseudo = opt_pseudo ? opt_pseudo : opt_export;
    const char *rel = r->root_rel ? r->root_rel : "";
    GPtrArray *lines = NULL;
    GArray *x = g_array_new(FALSE, TRUE, sizeof(struct tbbt_engine4_export));
    *out = x;
    if (tbbt_map_v4_exports(r->map_path, &lines, err, errlen) < 0)
        return -1;
    for (guint i = 0; i < MAX(lines->len, 1u); i++) {
        const struct tbbt_map_v4export *m =
            i < lines->len ? g_ptr_array_index(lines, i) : NULL;
        gchar *live = g_build_filename("/", pseudo, rel, m ? m->path : "", NULL);
        struct tbbt_engine4_export e = {.comps = m ? path_comps(m->pseudo) : NULL,
                                        .live_comps = path_comps(live)};
        g_array_append_val(x, e);
        int rc = tbbt_engine4_lookup(opt_server, r->nfs_port, e.live_comps, &e.live, err,
                                     errlen);
        g_array_index(x, struct tbbt_engine4_export, x->len - 1).live = e.live;
        tbbt_log(TBBT_LOG_INFO, "NFSv4 export %s is replayed in %s", m ? m->pseudo : "(any)",
                 live);
        g_free(live);
        if (rc < 0) {
            tbbt_map_v4_exports_free(lines);
            return -1;
        }
    }
    tbbt_map_v4_exports_free(lines);
    return 0;
}

static void free_exports(GArray *x)
{
    for (guint i = 0; x && i < x->len; i++) {
        g_strfreev(g_array_index(x, struct tbbt_engine4_export, i).comps);
        g_strfreev(g_array_index(x, struct tbbt_engine4_export, i).live_comps);
    }
    if (x)
        g_array_free(x, TRUE);
}

/*
 * An NFSv4 or mixed NFSv3+NFSv4 trace (engine4.h): the traced exports are redirected to
 * the image (image_exports()), then engine4 replays, the NFSv3 records on the handles the
 * start-up resolved.
 */
static int run_v4(struct run *r, int stop_fd, struct tbbt_report **rep,
                  struct tbbt_report_counts *cn, char *err, size_t errlen)
{
    GArray *exports = NULL;
    struct tbbt_engine4_opts o = {
        .trace_path = opt_trace, .server = opt_server, .port = r->nfs_port,
        .fsdep = !strcmp(opt_order, "fsdep"), .timestamp = !strcmp(opt_timing, "timestamp"),
        .speed = opt_speed, .window = (unsigned)opt_window,
        .max_outstanding = (unsigned)opt_max_out, .reserved_ports = opt_reserved_ports,
        .timeout_ms = opt_timeout_ms > 0 ? (unsigned)opt_timeout_ms : 30000,
        .renew_ms = (unsigned)MAX(opt_v4_renew_ms, 0),
        .jukebox_wait_ms = (unsigned)opt_jukebox_wait_s * 1000u,
        .fixed_creds = opt_uid >= 0, .uid = opt_uid >= 0 ? (uint32_t)opt_uid : 0,
        .gid = opt_gid >= 0 ? (uint32_t)opt_gid : opt_uid >= 0 ? (uint32_t)opt_uid : 0,
        .stop_fd = stop_fd, .verbose = tbbt__log_level >= TBBT_LOG_INFO,
        .handles = r->sc.has_v23 ? r->handles[0] : NULL,
    };
    gchar *tag = opt_v4_client_tag ? g_strdup(opt_v4_client_tag)
                 : g_strdup_printf("tbbt.%d.%" PRIx64 ":", (int)getpid(), tbbt_now_ns());
    o.client_tag = tag;
    int rc = image_exports(r, &exports, err, errlen);
    if (rc == 0) {
        o.exports = (const struct tbbt_engine4_export *)(void *)exports->data;
        o.nexports = exports->len;
        rc = tbbt_engine4_run(&o, rep, cn, err, errlen);
    } else {
        memset(cn, 0, sizeof(*cn));
        rc = -EIO;
    }
    free_exports(exports);
    g_free(tag);
    return rc;
}

/* ------------------------------------------------------------------ verify, report */

static int verify(struct run *r, struct tbbt_verify_sizes *sizes, struct tbbt_report_verify *v)
{
    char err[512];
    struct tbbt_rpcconn *c = conn_to(r->udp, opt_server, r->nfs_port, err, sizeof(err));
    if (!c) {
        fprintf(stderr, PROG ": verify: %s\n", err);
        return -1;
    }
    *v = (struct tbbt_report_verify){.ok = true};
    int rc = 0;
    for (uint32_t i = 0; i < img.count && rc == 0; i++) {
        uint32_t image = img.first + i * img.stride;
        const struct tbbt_handle *h = tbbt_handles_known(r->handles[i], r->root_id);
        if (!h) {
            fprintf(stderr, PROG ": verify: image %u has no root handle\n", image);
            rc = -1;
            break;
        }
        struct tbbt_rpcconn_fh root = {.len = h->len};
        memcpy(root.data, h->data, h->len);
        struct tbbt_verify_result res = {0};
        rc = tbbt_verify_run(c, r->vers, &root, r->map_path, sizes,
                             r->ss.ids ? tbbt_subset_want : NULL, &r->ss, &res, err, sizeof(err));
        if (rc < 0) {
            fprintf(stderr, PROG ": verify of image %u: %s\n", image, err);
        } else {
            v->ok &= res.ok;
            v->checked += res.checked;
            v->mismatches += res.mismatches;
            for (guint k = 0; k < res.details->len && k < 10; k++)
                fprintf(stderr, PROG ": verify: image %u: %s\n", image,
                        (const char *)g_ptr_array_index(res.details, k));
        }
        tbbt_verify_result_fini(&res);
    }
    tbbt_rpcconn_free(c);
    return rc;
}

static int write_reports(const struct tbbt_report *rep, const struct tbbt_report_counts *cn,
                         const struct tbbt_report_verify *v)
{
    int rc = 0;
    if (!opt_common.quiet)
        tbbt_report_text(stdout, rep, cn, v);
    if (opt_report_json) {
        char *j = tbbt_report_json(rep, cn, v);
        int w = tbbt_json_write_file(opt_report_json, j);
        g_free(j);
        if (w < 0) {
            fprintf(stderr, PROG ": cannot write '%s': %s\n", opt_report_json, tbbt_strerror(w));
            rc = -1;
        }
    }
    if (opt_timeseries) {
        int w = tbbt_report_timeseries_csv(rep, opt_timeseries);
        if (w < 0) {
            fprintf(stderr, PROG ": cannot write '%s': %s\n", opt_timeseries, tbbt_strerror(w));
            rc = -1;
        }
    }
    return rc;
}

/* ------------------------------------------------------------------ stopping */

/*
 * SIGINT and SIGTERM stop a run cleanly (docs/tbbt-play.md, "Stopping").  They are
 * blocked in every thread and taken by one watcher thread (sigwaitinfo()), which acts
 * by the phase the main thread is in:
 * - start-up (portmap, MOUNT, look-ups, the grace probe and its wait) and --verify: the
 *   main thread may sit in a synchronous call for seconds, so the watcher itself writes
 *   the reports the user asked for (start-up: an empty one; --verify: the replay's,
 *   without a verify key), with finished false (start-up) and stop_reason, and exits
 *   128 + the signal number, holding the mutex so that the main thread cannot go on;
 * - the replay: it makes the engine's stop_fd readable; the engine sends nothing more,
 *   gives the calls out a short grace and returns; the main thread skips --verify,
 *   writes the reports and exits 128 + the signal number;
 * - the reports: nothing (the run is over).
 * A second signal exits at once, with the first one's status, writing nothing.
 */
enum phase { PH_STARTUP, PH_REPLAY, PH_VERIFY, PH_REPORT };

static struct {
    pthread_mutex_t mu;
    enum phase phase;
    int signo;                          /* the first signal; 0: none yet */
    char reason[32];                    /* "signal SIGTERM" */
    int efd;                            /* the engine's stop_fd (an eventfd) */
    const struct tbbt_report *rep;      /* PH_VERIFY: the replay's report and counts */
    struct tbbt_report_counts *cn;      /* (borrowed from play()) */
} stopper = {.mu = PTHREAD_MUTEX_INITIALIZER, .efd = -1};

static const char *sig_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
}

/* The settings part of the counts, for a report of a run stopped during start-up. */
static void startup_counts(struct tbbt_report_counts *c)
{
    bool ts = !strcmp(opt_timing, "timestamp"), fsdep = !strcmp(opt_order, "fsdep");
    *c = (struct tbbt_report_counts){
        .order = fsdep ? "fsdep" : "conservative", .timing = ts ? "timestamp" : "full",
        .transport = opt_proto, .speed = ts ? opt_speed : 1.0, .clones = (uint32_t)opt_clones,
        .connections = opt_nconns, .window = (uint32_t)opt_window,
        .max_outstanding = (uint32_t)opt_max_out,
        .causal_slack_us = fsdep ? NAN : (double)opt_causal_slack_ns / 1e3,
        .error = "stopped during start-up",
    };
}

/* The watcher, mu held: a signal in start-up or --verify ends the process here. */
static void stop_now(void)
{
    struct tbbt_report_counts cn;
    struct tbbt_report *empty = NULL;
    const struct tbbt_report *rep = stopper.rep;
    fprintf(stderr, PROG ": %s: stopped during %s\n", sig_name(stopper.signo),
            stopper.phase == PH_STARTUP ? "start-up" : "--verify");
    if (stopper.phase == PH_STARTUP) {
        startup_counts(&cn);
        rep = empty = tbbt_report_new(tbbt_now_ns());
    } else {
        cn = *stopper.cn;
        cn.error = "stopped during --verify";
    }
    cn.stop_reason = stopper.reason;
    write_reports(rep, &cn, NULL);
    fflush(stdout);
    tbbt_report_free(empty);
    _exit(TBBT_EXIT_SIGNAL(stopper.signo));
}

static void *watcher_main(void *arg)
{
    const sigset_t *set = arg;
    for (;;) {
        int sig = sigwaitinfo(set, NULL);
        if (sig < 0)
            continue;   /* EINTR */
        pthread_mutex_lock(&stopper.mu);
        if (stopper.signo)
            _exit(TBBT_EXIT_SIGNAL(stopper.signo));
        stopper.signo = sig;
        g_snprintf(stopper.reason, sizeof(stopper.reason), "signal %s", sig_name(sig));
        uint64_t one = 1;
        ssize_t w = write(stopper.efd, &one, sizeof(one));
        (void)w;
        if (stopper.phase == PH_STARTUP || stopper.phase == PH_VERIFY)
            stop_now();
        if (stopper.phase == PH_REPLAY)
            fprintf(stderr, PROG ": %s: stopping the replay (another signal ends it at once)\n",
                    sig_name(sig));
        pthread_mutex_unlock(&stopper.mu);
    }
    return NULL;
}

static sigset_t stopper_set;

/*
 * Blocks SIGINT and SIGTERM in the calling thread, so in every thread it makes later (MPI
 * makes its own at start-up: blocked before, they never take the signal).  A signal the
 * parent left ignored stays ignored (a shell's background job ignores SIGINT, so that a
 * Ctrl-C at the terminal does not reach it).
 */
static void stopper_block(void)
{
    sigemptyset(&stopper_set);
    static const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
        struct sigaction sa;
        if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
            sigaddset(&stopper_set, sigs[i]);
    }
    pthread_sigmask(SIG_BLOCK, &stopper_set, NULL);
}

/* Starts the watcher of the signals stopper_block() blocked. */
static void stopper_start(void)
{
    sigset_t *set = &stopper_set;
    stopper.efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pthread_t t;
    if (stopper.efd < 0 || pthread_create(&t, NULL, watcher_main, set) != 0) {
        tbbt_log(TBBT_LOG_WARN, "no clean stop on SIGINT/SIGTERM: %s", g_strerror(errno));
        pthread_sigmask(SIG_UNBLOCK, set, NULL);
        return;
    }
    pthread_detach(t);
}

/*
 * The main thread enters phase p (rep and cn: the replay's, for PH_VERIFY; borrowed
 * until the next phase).  Returns the signal that stopped the run, 0 if none; after
 * one, the phase is PH_REPORT whatever p was.
 */
static int stopper_enter(enum phase p, const struct tbbt_report *rep,
                         struct tbbt_report_counts *cn)
{
    pthread_mutex_lock(&stopper.mu);
    int sig = stopper.signo;
    stopper.phase = sig ? PH_REPORT : p;
    stopper.rep = rep;
    stopper.cn = cn;
    pthread_mutex_unlock(&stopper.mu);
    return sig;
}

/* ------------------------------------------------------------------ the run */

/* Under mpirun: the engine's connections are open, every rank's start is agreed here. */
struct ready_ctx {
    struct tbbt_play_sync *sync;
    int stop_fd;
    struct tbbt_engine_peer *peer;
    struct tbbt_play_chan *chan;        /* started here, after the last collective */
};

static uint64_t ready_at(void *arg)
{
    struct ready_ctx *x = arg;
    if (tbbt_play_mpi_sync(x->sync) < 0) {
        fprintf(stderr, PROG ": MPI: %s (starting at once)\n", tbbt_mpi_error());
        x->sync->start_at_ns = 0;
    }
    x->chan = tbbt_play_chan_start(x->stop_fd, x->peer);
    return x->sync->start_at_ns;
}

static int play(void)
{
    struct run r = {.udp = !strcmp(opt_proto, "udp")};
    int status = TBBT_EXIT_FAIL;
    struct tbbt_outfile *events_out = NULL;     /* --event-log: renamed into place at the end */
    FILE *events = NULL;
    bool events_ok = true;
    struct tbbt_verify_sizes *sizes = opt_verify ? tbbt_verify_sizes_new() : NULL;
    bool mpi = tbbt_mpi_active() && dist != TBBT_PLAY_DIST_NONE;
    struct tbbt_play_sync sync = {0};
    struct tbbt_play_owner owner = {.rank = tbbt_mpi_rank(), .size = tbbt_mpi_size()};
    struct tbbt_engine_peer peer = {.in_fd = -1, .out_fd = -1};
    struct tbbt_play_chan *chan = NULL;
    char *events_path = mpi && tbbt_mpi_rank() > 0 && opt_events
                        ? g_strdup_printf("%s.rank-%d", opt_events, tbbt_mpi_rank()) : NULL;
    stopper_start();
    int su = startup(&r);
    if (su == 0)
        su = grace_check(&r);
    if (su == 0)
        stopper_enter(PH_REPLAY, NULL, NULL);
    if (su == 0 && opt_events) {
        char emsg[512];
        int erc = 0;
        const char *ep = events_path ? events_path : opt_events;

        if (!(events_out = tbbt_outfile_new(ep, 0, &erc, emsg, sizeof(emsg))) ||
            !(events = tbbt_outfile_stream(events_out, &erc, emsg, sizeof(emsg)))) {
            fprintf(stderr, PROG ": %s\n", emsg);
            tbbt_outfile_abort(events_out);
            events_out = NULL;
            su = -1;
        }
    }
    /* every rank goes on, or none: the others would wait for it at the start */
    if (mpi && tbbt_play_mpi_agree(su, "start-up failed (its messages above)") < 0)
        su = -1;
    if (su < 0) {
        if (r.usage_error)
            status = TBBT_EXIT_USAGE;
        goto out;
    }
    struct tbbt_engine_opts o;
    tbbt_engine_defaults(&o);
    o.trace_path = opt_trace;
    o.server = opt_server;
    o.nfs_port = r.nfs_port;
    o.udp = r.udp;
    o.clones = img.count;
    o.handles = r.handles;
    o.order = !strcmp(opt_order, "fsdep") ? TBBT_ORDER_FSDEP : TBBT_ORDER_CONSERVATIVE;
    o.timing = !strcmp(opt_timing, "timestamp") ? TBBT_TIMING_TIMESTAMP : TBBT_TIMING_FULL;
    o.speed = opt_speed;
    o.window = (unsigned)opt_window;
    o.max_outstanding = (unsigned)opt_max_out;
    o.client_outstanding = (unsigned)opt_client_out;
    o.reorder = opt_reorder != NULL;
    o.reorder_spec = reorder_spec;
    o.reorder_seed = (uint64_t)opt_reorder_seed;
    if (opt_nconns == 0) {
        o.connections = MAX(1u, MIN(r.sc.nclients, TBBT_ENGINE_MAX_CONNS));
        o.conn_map = r.sc.conn_map;
        o.conn_map_len = r.sc.conn_map_len;
    } else {
        o.connections = opt_nconns;
    }
    o.reserved_ports = opt_reserved_ports;
    o.batch = (unsigned)opt_batch;
    o.recv_batch = (unsigned)opt_recv_batch;
    o.fixed_creds = opt_uid >= 0;
    o.uid = opt_uid >= 0 ? (uint32_t)opt_uid : 0;
    o.gid = opt_gid >= 0 ? (uint32_t)opt_gid : o.uid;
    o.max_retries = (unsigned)opt_retries;
    o.jukebox_wait_ms = (unsigned)opt_jukebox_wait_s * 1000u;
    o.spin_us = (unsigned)opt_spin_us;
    o.causal_slack_ns = !strcmp(opt_order, "conservative")
                        ? causal_slack_auto() ? r.sc.causal_slack_ns : opt_causal_slack_ns : 0;
    o.rx_spin_us = opt_rx_spin_us >= 0 ? (unsigned)opt_rx_spin_us
                   : o.timing == TBBT_TIMING_TIMESTAMP && o.order == TBBT_ORDER_CONSERVATIVE
                       ? 50u : 0u;
    o.max_retrans = (unsigned)opt_retrans;
    o.timeout_ms = opt_timeout_ms > 0 ? opt_timeout_ms : r.udp ? 1000 : 10000;
    o.dead_ms = opt_dead_s * 1000;
    o.filter = (r.ss.clients || r.ss.ids) ? tbbt_subset_filter : NULL;
    o.filter_arg = &r.ss;
    o.sizes = sizes;
    o.events = events;
    o.progress = tbbt_cli_progress(&opt_common);
    o.stop_fd = stopper.efd;
    uint64_t started_ns = 0;
    struct ready_ctx rx = {.sync = &sync};
    if (mpi) {
        o.ready = ready_at;
        /* more ranks than cores on this host: spinning ranks would keep the others off */
        const char *local = g_getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
        if (local && atol(local) > (long)g_get_num_processors())
            o.start_spin_us = 0;
        o.ready_arg = &rx;
        o.started_ns = &started_ns;
        if (dist == TBBT_PLAY_DIST_CLIENTS && owner.size > 1) {   /* one rank: all its own */
            owner.by_connection = !strcmp(opt_client_key, "connection") ||
                                  (!strcmp(opt_client_key, "auto") &&
                                   r.sc.naddrs < (unsigned)owner.size);
            tbbt_play_owner_plan(&owner, owner.by_connection ? r.sc.conn_load : r.sc.addr_load);
            peer = (struct tbbt_engine_peer){
                .mine = tbbt_play_owner_mine, .mine_arg = &owner,
                .in = g_async_queue_new_full((GDestroyNotify)g_bytes_unref),
                .out = g_async_queue_new_full((GDestroyNotify)g_bytes_unref),
                .in_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC),
                .out_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)};
            o.peer = &peer;
            /* every rank holds every rank's records in its window */
            o.window = (unsigned)MIN((uint64_t)opt_window * (uint64_t)owner.size, 1u << 22);
        }
        rx.stop_fd = stopper.efd;
        rx.peer = o.peer;
    }

    struct tbbt_report *rep = NULL;
    struct tbbt_report_counts cn;
    char err[512] = "";
    int rc = r.v4 ? run_v4(&r, stopper.efd, &rep, &cn, err, sizeof(err))
                  : tbbt_engine_run(&o, &rep, &cn, err, sizeof(err));
    const char *peer_stop = NULL;     /* another rank stopped early, and so this one */
    chan = rx.chan;
    if (chan) {
        pthread_mutex_lock(&stopper.mu);
        const char *why = stopper.signo ? stopper.reason : rc == -EINTR ? "stopped" : err;
        tbbt_play_chan_done(chan, rc, rc == 0 ? NULL : why);
        pthread_mutex_unlock(&stopper.mu);
        peer_stop = tbbt_play_chan_join(chan);
    }
    if (events_out) {   /* complete before --verify, which a signal may end with _exit() */
        char emsg[512];

        events = NULL;
        if (tbbt_outfile_commit(events_out, emsg, sizeof(emsg)) < 0) {
            fprintf(stderr, PROG ": %s\n", emsg);
            events_ok = false;
        }
        events_out = NULL;
    }
    cn.grace = r.grace;
    cn.grace_wait_seconds = r.grace_wait_s;
    if (r.ss.crossing)
        tbbt_log(TBBT_LOG_WARN, "%" PRIu64 " records name objects in and out of the subset "
                 "(left out): the subset is not disjoint from the rest", r.ss.crossing);
    int sig = stopper_enter(opt_verify && rc == 0 ? PH_VERIFY : PH_REPORT, rep, &cn);
    if (sig && rc < 0 && rc != -EINTR)     /* it failed before the signal stopped it */
        fprintf(stderr, PROG ": %s\n", err);
    if (!sig && rc == -EINTR && peer_stop) {
        g_snprintf(err, sizeof(err), "stopped because %s: %" PRIu64 " operations of unknown "
                   "outcome, %" PRIu64 " not sent", peer_stop, cn.ops_unknown, cn.skipped_stopped);
        cn.stop_reason = peer_stop;
        cn.error = err;
        fprintf(stderr, PROG ": %s\n", err);
    } else if (sig) {
        cn.stop_reason = stopper.reason;
        g_snprintf(err, sizeof(err), "stopped by %s: %" PRIu64 " operations of unknown "
                   "outcome, %" PRIu64 " not sent", sig_name(sig), cn.ops_unknown,
                   cn.skipped_stopped);
        cn.error = err;
        fprintf(stderr, PROG ": %s\n", err);
    } else if (rc < 0) {
        fprintf(stderr, PROG ": %s\n", err);
        cn.error = err;
    }
    struct tbbt_report_verify v, *vp = NULL;
    bool verify_failed = false;
    /* --distribute clients: one image shared by every rank, verified by rank 0 once every
     * rank has ended (the channel thread waited for that) */
    bool verifies = dist != TBBT_PLAY_DIST_CLIENTS || tbbt_mpi_rank() == 0;
    if (dist == TBBT_PLAY_DIST_CLIENTS)
        cn.clones = img.count;
    struct tbbt_report_rank me = {0};    /* this rank's line of the merged report */
    if (mpi)    /* collective: before rank 0's --verify, which the others would wait for */
        tbbt_play_mpi_rank_end(&me, rep, &cn, &sync, started_ns, dist, &img,
                               o.peer, &owner);
    if (opt_verify && rc == 0 && !sig && verifies) {
        verify_failed = verify(&r, sizes, &v) < 0;
        vp = verify_failed ? NULL : &v;
        stopper_enter(PH_REPORT, NULL, NULL);   /* a signal in --verify never gets here */
    }
    bool wrote = true;
    if (mpi) {
        me.verified = vp != NULL;
        me.verify_failed = verify_failed;
        if (vp)
            me.verify = *vp;
        if (opt_rank_reports)
            wrote = tbbt_play_mpi_rank_report(opt_rank_reports, rep, &cn, vp) == 0;
        struct tbbt_report *mrep = NULL;
        struct tbbt_report_counts mcn;
        struct tbbt_report_rank mall;
        if (tbbt_play_mpi_merge(rep, &cn, &me, &sync, opt_distribute, &mrep, &mcn, &mall) < 0) {
            wrote = false;
        } else if (mrep) {     /* rank 0 */
            tbbt_report_free(rep);
            rep = mrep;
            cn = mcn;
            verify_failed = mall.verify_failed;
            v = mall.verify;
            vp = mall.verified && !verify_failed ? &v : NULL;
            rc = cn.finished ? 0 : rc ? rc : -EINTR;
        }
        g_free((char *)me.what);
    }
    if (!mpi || tbbt_mpi_rank() == 0)
        wrote = write_reports(rep, &cn, vp) == 0 && events_ok && wrote;
    tbbt_report_free(rep);
    /* 0 only when every issued request completed and --verify (if asked) agreed. */
    status = rc == 0 && wrote && !verify_failed && cn.ops_unknown == 0 && (!vp || vp->ok)
             ? TBBT_EXIT_OK : TBBT_EXIT_FAIL;
    if (sig)
        status = TBBT_EXIT_SIGNAL(sig);
    else if (status != TBBT_EXIT_OK && rc == 0 && wrote && !verify_failed &&
             (!mpi || tbbt_mpi_rank() == 0))
        fprintf(stderr, PROG ": %s\n", cn.ops_unknown ? "operations of unknown outcome "
                "(no reply): exit status 1" : "--verify found mismatches: exit status 1");
    if (mpi) {     /* every rank exits with rank 0's status (a signal's own stays) */
        int32_t st = status;
        if (tbbt_mpi_bcast(&st, sizeof(st)) == 0 && !sig)
            status = st;
    }
out:
    tbbt_play_chan_free(chan);
    if (peer.in)
        g_async_queue_unref(peer.in);
    if (peer.out)
        g_async_queue_unref(peer.out);
    if (peer.in_fd >= 0)
        close(peer.in_fd);
    if (peer.out_fd >= 0)
        close(peer.out_fd);
    tbbt_play_owner_fini(&owner);
    g_free(sync.all);
    g_free(events_path);
    if (events_out)     /* what was logged before the failure: kept */
        tbbt_outfile_commit(events_out, NULL, 0);
    tbbt_verify_sizes_free(sizes);
    for (uint32_t i = 0; r.handles && i < img.count; i++)
        tbbt_handles_free(r.handles[i]);
    g_free(r.handles);
    tbbt_subset_fini(&r.ss);
    g_free(r.root_rel);
    g_free(r.map_path);
    g_free(r.sc.conn_map);
    if (r.sc.addr_load)
        g_hash_table_destroy(r.sc.addr_load);
    if (r.sc.conn_load)
        g_hash_table_destroy(r.sc.conn_load);
    tbbt_manifest_free(r.man);
    return status;
}

static const char *check_usage(void)
{
    if (!opt_trace || !opt_manifest)
        return "--trace and --manifest are needed (--server and --export too unless the "
               "manifest names them)";
    if (strcmp(opt_proto, "tcp") && strcmp(opt_proto, "udp"))
        return "--proto must be tcp or udp";
    if (strcmp(opt_order, "conservative") && strcmp(opt_order, "fsdep"))
        return "--order must be conservative or fsdep";
    if (strcmp(opt_timing, "full") && strcmp(opt_timing, "timestamp"))
        return "--timing must be full or timestamp";
    if (!(opt_speed > 0) || opt_speed > 1e6)
        return "--speed must be a number above 0";
    if (opt_clones < 1 || opt_clones > 1000 || opt_first_clone < 0 || opt_window < 2 ||
        opt_max_out < 1 || opt_batch < 1 || opt_recv_batch < 0)
        return "--clones (1..1000), --window (2 or more), --max-outstanding and --batch "
               "must be positive";
    if (opt_causal_slack && strcmp(opt_causal_slack, "auto") != 0) {
        char *end;
        long us = strtol(opt_causal_slack, &end, 10);
        if (*opt_causal_slack == '\0' || *end || us < 0 || us > 1000000)
            return "--causal-slack must be 'auto' or microseconds 0..1000000";
        opt_causal_slack_ns = (uint64_t)us * 1000u;
    }
    opt_nconns = 0;
    if (strcmp(opt_conns, "client") != 0) {
        char *end;
        long n = strtol(opt_conns, &end, 10);
        if (*opt_conns == '\0' || *end || n < 1 || n > (long)TBBT_ENGINE_MAX_CONNS)
            return "--connections must be 'client' or a number 1..1024";
        opt_nconns = (unsigned)n;
    }
    if (opt_retries < 0 || opt_retries > 50 || opt_retrans < 0 || opt_retrans > 50 ||
        opt_dead_s < 1 || opt_timeout_ms < 0 || opt_jukebox_wait_s < 0 ||
        opt_jukebox_wait_s > 86400 || opt_spin_us < 0 || opt_spin_us > 100000 ||
        opt_rx_spin_us < -1 || opt_rx_spin_us > 100000)
        return "--retries and --retrans must be 0..50, --dead-after 1 or more, "
               "--jukebox-wait 0..86400, --spin-us and --rx-spin-us 0..100000";
    if ((opt_nfs_port < 0 || opt_nfs_port > 65535) || opt_mount_port < 0 ||
        opt_mount_port > 65535)
        return "ports must be 1..65535";
    if (opt_gid >= 0 && opt_uid < 0)
        return "--gid needs --uid";
    if (opt_client_out < 0)
        return "--client-outstanding must be 0 (no limit) or more";
    dist = TBBT_PLAY_DIST_NONE;
    if (opt_distribute) {
        if (!strcmp(opt_distribute, "clones"))
            dist = TBBT_PLAY_DIST_CLONES;
        else if (!strcmp(opt_distribute, "clients"))
            dist = TBBT_PLAY_DIST_CLIENTS;
        else
            return "--distribute must be clones or clients";
        if (!tbbt_mpi_active())
            return tbbt_mpi_compiled() ? "--distribute needs the ranks of mpirun (docs/mpi.md)"
                                       : "--distribute needs a build with MPI (docs/mpi.md)";
    } else if (tbbt_mpi_size() > 1) {
        return "under mpirun with more than one rank, --distribute clones or clients says "
               "how the ranks share the replay";
    }
    if (strcmp(opt_client_key, "auto") && strcmp(opt_client_key, "address") &&
        strcmp(opt_client_key, "connection"))
        return "--client-key must be auto, address or connection";
    if (opt_rank_reports && dist == TBBT_PLAY_DIST_NONE)
        return "--rank-reports needs --distribute under mpirun";
    tbbt_play_images_of(dist, tbbt_mpi_rank(), tbbt_mpi_size(), (uint32_t)MAX(opt_first_clone, 0),
                        (uint32_t)MAX(opt_clones, 1), &img);
    if (img.count == 0)
        return "--distribute clones needs --clones at least the number of ranks";
    if (opt_reorder) {
        static char why[200];
        if (tbbt_reorder_parse(opt_reorder, &reorder_spec, why, sizeof(why)) < 0)
            return why;
        if (reorder_spec.k >= (unsigned)opt_window)
            return "--reorder distance K must be below --window";
    }
    return NULL;
}

static int run_main(int argc, char **argv)
{
    int rc;

    if (!tbbt_cli_start(&(struct tbbt_cli_spec){
        .prog = PROG, .param = "- replay a TBBT trace against an NFS server", .entries = entries,
        .log_options = true, .common = &opt_common,
        .description =
            "Exit status: 0 when the replay ran to the end, every request it sent was answered "
            "and --verify\n(if given) agreed (replay failures are counted in the report); 1 "
            "when it could not,\nwhen requests got no answer (unknown outcome) or --verify "
            "found mismatches; 2 usage\nerror; 130 and 143 after SIGINT and SIGTERM, which "
            "stop it cleanly.  See docs/tbbt-play.md." }, &argc, &argv, &rc))
        return rc;
    const char *why = argc > 1 ? "unexpected argument" : check_usage();
    if (why)
        return tbbt_cli_usage(why);
    if (opt_check_only) {
        pthread_sigmask(SIG_UNBLOCK, &stopper_set, NULL);  /* no watcher: the default action */
        return check_only();
    }
    return play();
}

int main(int argc, char **argv)
{
    /* Under mpirun, one rank of several (docs/mpi.md); otherwise MPI is never started. */
    stopper_block();
    if (tbbt_mpi_init(&argc, &argv) < 0) {
        fprintf(stderr, PROG ": MPI: %s\n", tbbt_mpi_error());
        return TBBT_EXIT_FAIL;
    }
    int rc = run_main(argc, argv);
    tbbt_mpi_finalize();
    return rc;
}
