/* SPDX-License-Identifier: MIT */
/*
 * nfs-workload: a multi-client NFSv3 workload generator that behaves like a site's
 * real clients, for captures of "real client" traffic (tools/capture-workload.sh).
 *
 *   nfs-workload setup URL [--users N] [--seed S] [--scale F]
 *       builds the site's tree under the export (nfs-workload-site.c), as root.
 *   nfs-workload run URL --mix mail|home|mixed [--clients K] [--ops N] [--seconds T]
 *       [--seed S] [--think-us U] [--subdir-mounts P] [--users N] [--json FILE] [-v]
 *       forks K clients, each a process with its own libnfs context (its own TCP
 *       connection from a reserved port when run as root), its own machine name and a
 *       user's AUTH_SYS credentials with supplementary groups.  A fraction P of them
 *       mount a subdirectory (the user's home, or /mail for a delivery agent) instead of
 *       the export's root.  All mount first, then start together; each runs N operations
 *       of its role (nfs-workload-mail.c, nfs-workload-home.c) with exponential think
 *       times of mean U µs between them, until N are done or T seconds have passed.
 *
 * The same seed gives each client the same sequence of intentions (what to do, to which
 * file); outcomes may still race between clients, as they do at a real site.  A reply
 * no real client would tolerate ends that client with one line naming the operation,
 * the path and the error, and `run` then exits 1.  Exit codes: 0 success, 1 failure,
 * 2 usage error.  Needs the URL form nfs://SERVER/EXPORT[?version=3].  Not installed;
 * see docs/lab.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "tbbt-version.h"
#include <time.h>
#include <unistd.h>

#include <nfsc/libnfs.h>

#include "nfs-workload.h"
#include "util/exit-codes.h"
#include "util/json.h"

#define RPC_TIMEOUT_MS 60000       /* a server silent this long fails the client */
#define READY_TIMEOUT_S 120        /* every client must have mounted by then */

enum mix { MIX_MAIL, MIX_HOME, MIX_MIXED };
static const char *const mix_names[] = { "mail", "home", "mixed" };

struct run_cfg {
    char *server, *export;
    const char *url;
    enum mix mix;
    int clients, users;
    gint64 ops, seed;
    double seconds, think_us, subdir;
    char *json;
    bool verbose;
};

static void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, WL_PROG ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (try --help)\n");
    exit(TBBT_EXIT_USAGE);
}

/* nfs://SERVER/PATH[?version=3] into SERVER and PATH (given: g_free). */
static bool parse_url(const char *url, char **server, char **path)
{
    const char *p = url + 6, *slash, *q;

    if (!g_str_has_prefix(url, "nfs://") || !(slash = strchr(p, '/')) || slash == p)
        return false;
    q = strchr(slash, '?');
    if (q && strcmp(q, "?version=3") != 0)
        return false;
    *server = g_strndup(p, (gsize)(slash - p));
    *path = q ? g_strndup(slash, (gsize)(q - slash)) : g_strdup(slash);
    while (strlen(*path) > 1 && g_str_has_suffix(*path, "/"))
        (*path)[strlen(*path) - 1] = '\0';
    return true;
}

/* ------------------------------------------------------------------ mounting */

/* A client's libnfs context mounted at PATH with root's credentials on MACHINE (as
 * mount(8) does it), then switched to ID's.  Fails the client on error. */
static void client_mount(struct wl_client *c, const char *server, const char *path)
{
    struct wl_ident root;
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    int rc;

    c->nfs = nfs_init_context();
    if (!c->nfs)
        wl_fail(c, "cannot create a libnfs context");
    nfs_set_timeout(c->nfs, RPC_TIMEOUT_MS);
    wl_site_root_ident(&root);
    wl_set_creds(c, &root);
    c->st->calls[WL_C_MOUNT]++;
    rc = nfs_mount(c->nfs, server, path);
    if (rc < 0)
        wl_fail(c, "mount %s:%s: %s", server, path, nfs_get_error(c->nfs));
    if (getsockname(nfs_get_fd(c->nfs), (struct sockaddr *)&ss, &len) == 0)
        c->st->local_port = ntohs(ss.ss_family == AF_INET6
                                      ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                      : ((struct sockaddr_in *)&ss)->sin_port);
    wl_set_creds(c, &c->id);
}

/* ------------------------------------------------------------------ setup */

static int cmd_setup(int argc, char **argv)
{
    struct wl_setup_cfg cfg = { .users = 12, .seed = 1, .scale = 1.0 };
    GOptionEntry entries[] = {
        { "users", 'u', 0, G_OPTION_ARG_INT, &cfg.users, "users of the site, 1..64 (default 12)",
          "N" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &cfg.seed, "seed of the tree (default 1)", "S" },
        { "scale", 0, 0, G_OPTION_ARG_DOUBLE, &cfg.scale,
          "multiplies the number of files (default 1: ~40 MB for 12 users)", "F" },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &cfg.verbose, "more output", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("URL - build the site's initial tree");
    struct wl_stats st = { .index = 0 };
    struct wl_client c = { .st = &st };
    GError *err = NULL;
    char *server, *path;
    int rc;

    g_set_prgname(WL_PROG " setup");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &err))
        usage_error("setup: %s", err->message);
    g_option_context_free(ctx);
    if (argc != 2 || !parse_url(argv[1], &server, &path))
        usage_error("setup: need one URL nfs://SERVER/EXPORT[?version=3]");
    if (cfg.users < 1 || cfg.users > 64 || !(cfg.scale > 0 && cfg.scale <= 100))
        usage_error("setup: --users must be 1..64 and --scale in (0, 100]");
    wl_site_root_ident(&c.id);
    g_strlcpy(c.machine, "admin", sizeof(c.machine));
    client_mount(&c, server, path);
    rc = wl_setup(&c, &cfg);
    nfs_destroy_context(c.nfs);
    g_free(server);
    g_free(path);
    return rc;
}

/* ------------------------------------------------------------------ planning a run */

/* How many clients of each role the mix has. */
static void role_counts(const struct run_cfg *cfg, int *mda, int *mua, int *home)
{
    int k = cfg->clients;

    *mda = *mua = *home = 0;
    if (cfg->mix == MIX_HOME) {
        *home = k;
    } else if (cfg->mix == MIX_MAIL) {
        *mda = k < 2 ? k : MAX(1, k / 4);
        *mua = k - *mda;
    } else {
        *home = k / 2;
        *mda = k - *home > 0 ? MAX(1, (k - *home) / 3) : 0;
        *mua = k - *home - *mda;
    }
}

/* Which clients mount a subdirectory: round(P * K) of them, chosen by the seed. */
static bool *pick_subdir(const struct run_cfg *cfg)
{
    int k = cfg->clients, n = (int)lround(cfg->subdir * k);
    bool *sub = g_new0(bool, k);
    int *order = g_new(int, k);
    GRand *r = g_rand_new_with_seed((guint32)cfg->seed ^ 0x5eb5d1u);

    for (int i = 0; i < k; i++)
        order[i] = i;
    for (int i = k - 1; i > 0; i--) {
        int j = g_rand_int_range(r, 0, i + 1), t = order[i];

        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < n && i < k; i++)
        sub[order[i]] = true;
    g_rand_free(r);
    g_free(order);
    return sub;
}

/* Fills each client's record with its role, identity, machine and mount path. */
static void plan_clients(const struct run_cfg *cfg, struct wl_stats *st)
{
    int mda, mua, home, user = 0;
    bool *sub = pick_subdir(cfg);

    role_counts(cfg, &mda, &mua, &home);
    for (int i = 0; i < cfg->clients; i++) {
        struct wl_stats *s = &st[i];
        const char *role = i < mda ? "mda" : i < mda + mua ? "mua" : "home";

        s->index = i;
        g_strlcpy(s->role, role, sizeof(s->role));
        if (i < mda) {
            wl_site_mail_ident(&s->id);
            g_snprintf(s->machine, sizeof(s->machine), "mail%d", i + 1);
            g_snprintf(s->mount, sizeof(s->mount), "%s%s", cfg->export, sub[i] ? "/mail" : "");
        } else {
            wl_site_user(user % cfg->users, &s->id);
            g_snprintf(s->machine, sizeof(s->machine), "ws%02d", user + 1);
            g_snprintf(s->mount, sizeof(s->mount), "%s%s%s", cfg->export,
                       sub[i] ? "/home/" : "", sub[i] ? s->id.name : "");
            user++;
        }
    }
    g_free(sub);
}

/* The client's view of the site through its mount. */
static void client_init(struct wl_client *c, const struct run_cfg *cfg, struct wl_stats *st)
{
    guint32 seed[4] = { (guint32)cfg->seed, (guint32)((guint64)cfg->seed >> 32),
                        (guint32)st->index, 1 };
    size_t elen = strlen(cfg->export);

    c->st = st;
    c->id = st->id;
    g_strlcpy(c->machine, st->machine, sizeof(c->machine));
    c->role = strcmp(st->role, "mda") == 0 ? WL_ROLE_MDA
            : strcmp(st->role, "mua") == 0 ? WL_ROLE_MUA : WL_ROLE_HOME;
    c->subdir = strlen(st->mount) > elen;
    c->nusers = cfg->users;
    c->has_spool = !c->subdir || c->role == WL_ROLE_MDA;
    g_strlcpy(c->spool, c->subdir ? "" : "/mail", sizeof(c->spool));
    c->has_home = !c->subdir || c->role != WL_ROLE_MDA;
    if (!c->subdir)
        g_snprintf(c->home, sizeof(c->home), "/home/%s", c->id.name);
    c->intent = g_rand_new_with_seed_array(seed, 4);
    seed[3] = 2;
    c->timing = g_rand_new_with_seed_array(seed, 4);
    c->pid = 1000 + (uint32_t)g_rand_int_range(c->intent, 0, 30000);
    c->vtime = WL_SITE_EPOCH + (cfg->seed % 1000) * 86400;
}

/* ------------------------------------------------------------------ a client process */

static void sleep_us(double us)
{
    struct timespec ts = { .tv_sec = (time_t)(us / 1e6), .tv_nsec = (long)fmod(us * 1000, 1e9) };

    if (us >= 1.0)
        nanosleep(&ts, NULL);
}

/* This process's CPU time so far (user + system), microseconds. */
static gint64 cpu_us(void)
{
    struct rusage u;

    if (getrusage(RUSAGE_SELF, &u) < 0)
        return 0;
    return (gint64)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * G_USEC_PER_SEC +
           u.ru_utime.tv_usec + u.ru_stime.tv_usec;
}

/* Runs in the child: mount, say ready, wait for the start, work, exit. */
static void __attribute__((noreturn))
client_main(const struct run_cfg *cfg, struct wl_stats *st, int ready_fd, int go_fd)
{
    struct wl_client c = { 0 };
    gint64 deadline;
    char b;

    client_init(&c, cfg, st);
    client_mount(&c, cfg->server, st->mount);
    if (write(ready_fd, "r", 1) != 1 || read(go_fd, &b, 1) != 0)
        wl_fail(&c, "lost contact with the parent process");
    gint64 cpu0 = cpu_us();
    st->start_us = g_get_real_time();
    deadline = cfg->seconds > 0 ? st->start_us + (gint64)(cfg->seconds * 1e6) : G_MAXINT64;
    if (c.role == WL_ROLE_HOME)
        wl_home_start(&c);
    for (gint64 i = 0; i < cfg->ops && g_get_real_time() < deadline; i++) {
        if (c.role == WL_ROLE_HOME)
            wl_home_step(&c);
        else
            wl_mail_step(&c);
        if (cfg->think_us > 0)
            sleep_us(wl_rand_exp(c.timing, cfg->think_us));
    }
    st->end_us = g_get_real_time();
    st->cpu_us = cpu_us() - cpu0;
    nfs_destroy_context(c.nfs);
    st->exited = 1;
    _exit(0);
}

/* ------------------------------------------------------------------ the parent */

static void kill_all(const pid_t *pids, int n)
{
    for (int i = 0; i < n; i++)
        if (pids[i] > 0)
            kill(pids[i], SIGTERM);
}

/* Waits until every client has mounted (one byte each on FD); false if one died. */
static bool wait_ready(int fd, int n)
{
    gint64 until = g_get_monotonic_time() + (gint64)READY_TIMEOUT_S * G_USEC_PER_SEC;
    char buf[64];

    while (n > 0) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int rc = poll(&p, 1, 200);
        ssize_t got;

        if (rc < 0 && errno != EINTR)
            return false;
        if (rc > 0) {
            got = read(fd, buf, (size_t)MIN(n, (int)sizeof(buf)));
            if (got <= 0)
                return false;           /* every client has gone */
            n -= (int)got;
        }
        if (waitpid(-1, NULL, WNOHANG) > 0 || g_get_monotonic_time() > until)
            return false;               /* a client ended before the start */
    }
    return true;
}

/* Forks the clients, starts them together, waits for them.  0 or 1. */
static int run_clients(const struct run_cfg *cfg, struct wl_stats *st, gint64 *t0, gint64 *t1)
{
    int ready[2], go[2], rc = 0, status;
    pid_t *pids = g_new0(pid_t, cfg->clients);

    if (pipe(ready) < 0 || pipe(go) < 0) {
        fprintf(stderr, WL_PROG ": pipe: %s\n", g_strerror(errno));
        return 1;
    }
    fflush(NULL);
    for (int i = 0; i < cfg->clients; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            close(ready[0]);
            close(go[1]);
            client_main(cfg, &st[i], ready[1], go[0]);
        }
        if (pids[i] < 0) {
            fprintf(stderr, WL_PROG ": fork: %s\n", g_strerror(errno));
            kill_all(pids, i);
            return 1;
        }
    }
    close(ready[1]);
    close(go[0]);
    if (!wait_ready(ready[0], cfg->clients)) {
        fprintf(stderr, WL_PROG ": not every client could mount: stopping them\n");
        kill_all(pids, cfg->clients);
        rc = 1;
    }
    *t0 = g_get_real_time();
    close(go[1]);                       /* EOF: every client starts now */
    for (int i = 0; i < cfg->clients; i++) {
        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
            rc = 1;
    }
    *t1 = g_get_real_time();
    close(ready[0]);
    g_free(pids);
    return rc;
}

/* ------------------------------------------------------------------ report */

static void json_counts(struct tbbt_json *j, const char *key, const uint64_t *v,
                        const char *const *names, int n)
{
    tbbt_json_key(j, key);
    tbbt_json_begin_object(j);
    for (int i = 0; i < n; i++)
        if (v[i])
            tbbt_json_kv_uint(j, names[i], v[i]);
    tbbt_json_end_object(j);
}

static void json_tolerated(struct tbbt_json *j, const struct wl_tol *tol, int n)
{
    tbbt_json_key(j, "tolerated");
    tbbt_json_begin_object(j);
    for (int i = 0; i < n; i++)
        tbbt_json_kv_uint(j, tol[i].what, tol[i].n);
    tbbt_json_end_object(j);
}

static uint64_t sum(const uint64_t *v, int n)
{
    uint64_t s = 0;

    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

static void json_client(struct tbbt_json *j, const struct wl_stats *s)
{
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "index", (uint64_t)s->index);
    tbbt_json_key(j, "role");
    tbbt_json_string(j, s->role);
    tbbt_json_key(j, "name");
    tbbt_json_string(j, s->id.name);
    tbbt_json_kv_uint(j, "uid", s->id.uid);
    tbbt_json_kv_uint(j, "gid", s->id.gid);
    tbbt_json_key(j, "gids");
    tbbt_json_begin_array(j);
    for (uint32_t g = 0; g < s->id.ngids; g++)
        tbbt_json_uint(j, s->id.gids[g]);
    tbbt_json_end_array(j);
    tbbt_json_key(j, "machine");
    tbbt_json_string(j, s->machine);
    tbbt_json_key(j, "mount");
    tbbt_json_string(j, s->mount);
    tbbt_json_kv_uint(j, "local_port", (uint64_t)s->local_port);
    tbbt_json_kv_uint(j, "ops_total", sum(s->ops, WL_N_OPS));
    json_counts(j, "ops", s->ops, wl_op_names, WL_N_OPS);
    json_counts(j, "libnfs_calls", s->calls, wl_call_names, WL_N_CALLS);
    tbbt_json_kv_uint(j, "bytes_read", s->bytes_read);
    tbbt_json_kv_uint(j, "bytes_written", s->bytes_written);
    tbbt_json_kv_uint(j, "lock_retries", s->lock_retries);
    json_tolerated(j, s->tol, s->ntol);
    tbbt_json_kv_double(j, "start", s->start_us / 1e6);
    tbbt_json_kv_double(j, "end", s->end_us / 1e6);
    tbbt_json_kv_double(j, "duration_s", s->end_us > s->start_us ?
                                             (s->end_us - s->start_us) / 1e6 : 0.0);
    tbbt_json_kv_double(j, "cpu_s", s->cpu_us / 1e6);
    tbbt_json_key(j, "status");
    tbbt_json_string(j, s->exited ? "ok" : "failed");
    if (!s->exited) {
        tbbt_json_key(j, "error");
        tbbt_json_string(j, s->error[0] ? s->error : "ended without a report (killed?)");
    }
    tbbt_json_end_object(j);
}

/* The sum of every client's counters, in a record of its own. */
static void totals(const struct run_cfg *cfg, const struct wl_stats *st, struct wl_stats *t)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < cfg->clients; i++) {
        const struct wl_stats *s = &st[i];

        for (int k = 0; k < WL_N_OPS; k++)
            t->ops[k] += s->ops[k];
        for (int k = 0; k < WL_N_CALLS; k++)
            t->calls[k] += s->calls[k];
        t->bytes_read += s->bytes_read;
        t->bytes_written += s->bytes_written;
        t->lock_retries += s->lock_retries;
        t->cpu_us += s->cpu_us;
        for (int k = 0; k < s->ntol; k++) {
            int m = 0;

            while (m < t->ntol && strcmp(t->tol[m].what, s->tol[k].what) != 0)
                m++;
            if (m == t->ntol && t->ntol < WL_MAX_TOL)
                t->tol[t->ntol++] = (struct wl_tol){ .n = 0 };
            if (m < WL_MAX_TOL) {
                g_strlcpy(t->tol[m].what, s->tol[k].what, sizeof(t->tol[m].what));
                t->tol[m].n += s->tol[k].n;
            }
        }
        t->failed += !s->exited;
    }
}

static void json_config(struct tbbt_json *j, const struct run_cfg *cfg)
{
    tbbt_json_key(j, "tool");
    tbbt_json_string(j, WL_PROG);
    tbbt_json_key(j, "url");
    tbbt_json_string(j, cfg->url);
    tbbt_json_key(j, "mix");
    tbbt_json_string(j, mix_names[cfg->mix]);
    tbbt_json_kv_uint(j, "clients", (uint64_t)cfg->clients);
    tbbt_json_kv_uint(j, "users", (uint64_t)cfg->users);
    tbbt_json_key(j, "seed");
    tbbt_json_int(j, cfg->seed);
    tbbt_json_kv_uint(j, "ops_per_client", (uint64_t)cfg->ops);
    tbbt_json_kv_double(j, "seconds", cfg->seconds);
    tbbt_json_kv_double(j, "think_us", cfg->think_us);
    tbbt_json_kv_double(j, "subdir_mounts", cfg->subdir);
}

static int write_json(const struct run_cfg *cfg, const struct wl_stats *st, gint64 t0,
                      gint64 t1)
{
    struct tbbt_json j;
    struct wl_stats t;
    char *text;
    int rc;

    totals(cfg, st, &t);
    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    json_config(&j, cfg);
    tbbt_json_kv_double(&j, "start", t0 / 1e6);
    tbbt_json_kv_double(&j, "end", t1 / 1e6);
    tbbt_json_kv_double(&j, "duration_s", (t1 - t0) / 1e6);
    tbbt_json_key(&j, "per_client");
    tbbt_json_begin_array(&j);
    for (int i = 0; i < cfg->clients; i++)
        json_client(&j, &st[i]);
    tbbt_json_end_array(&j);
    tbbt_json_key(&j, "totals");
    tbbt_json_begin_object(&j);
    tbbt_json_kv_uint(&j, "ops_total", sum(t.ops, WL_N_OPS));
    json_counts(&j, "ops", t.ops, wl_op_names, WL_N_OPS);
    json_counts(&j, "libnfs_calls", t.calls, wl_call_names, WL_N_CALLS);
    tbbt_json_kv_uint(&j, "bytes_read", t.bytes_read);
    tbbt_json_kv_uint(&j, "bytes_written", t.bytes_written);
    tbbt_json_kv_uint(&j, "lock_retries", t.lock_retries);
    tbbt_json_kv_double(&j, "cpu_s", t.cpu_us / 1e6);
    json_tolerated(&j, t.tol, t.ntol);
    tbbt_json_kv_uint(&j, "failed_clients", (uint64_t)t.failed);
    tbbt_json_end_object(&j);
    tbbt_json_end_object(&j);
    text = tbbt_json_finish(&j);
    rc = tbbt_json_write_file(cfg->json, text);
    g_free(text);
    if (rc < 0)
        fprintf(stderr, WL_PROG ": cannot write '%s': %s\n", cfg->json, g_strerror(-rc));
    return rc < 0;
}

static void print_summary(const struct run_cfg *cfg, const struct wl_stats *st, gint64 t0,
                          gint64 t1)
{
    struct wl_stats t;
    int mda, mua, home;

    for (int i = 0; cfg->verbose && i < cfg->clients; i++) {
        const struct wl_stats *s = &st[i];

        printf(WL_PROG ": client %d %-4s %s@%s uid %u mount %s: %" G_GUINT64_FORMAT
               " operations, %" G_GUINT64_FORMAT " libnfs calls, %" G_GUINT64_FORMAT
               " lock retries%s\n", s->index, s->role, s->id.name, s->machine, s->id.uid,
               s->mount, sum(s->ops, WL_N_OPS), sum(s->calls, WL_N_CALLS), s->lock_retries,
               s->exited ? "" : " (FAILED)");
    }
    totals(cfg, st, &t);
    role_counts(cfg, &mda, &mua, &home);
    printf(WL_PROG ": run: %s mix, %d clients (%d mda, %d mua, %d home), %" G_GUINT64_FORMAT
           " operations, %" G_GUINT64_FORMAT " libnfs calls in %.2f s, %d failed\n",
           mix_names[cfg->mix], cfg->clients, mda, mua, home, sum(t.ops, WL_N_OPS),
           sum(t.calls, WL_N_CALLS), (t1 - t0) / 1e6, t.failed);
}

/* ------------------------------------------------------------------ run */

static void run_options(int *argc, char ***argv, struct run_cfg *cfg)
{
    char *mix = NULL;
    GOptionEntry entries[] = {
        { "mix", 'm', 0, G_OPTION_ARG_STRING, &mix, "mail, home or mixed (required)", "MIX" },
        { "clients", 'k', 0, G_OPTION_ARG_INT, &cfg->clients, "clients, 1..256 (default 8)",
          "K" },
        { "ops", 'n', 0, G_OPTION_ARG_INT64, &cfg->ops,
          "operations per client (default 1000, or unbounded with --seconds)", "N" },
        { "seconds", 't', 0, G_OPTION_ARG_DOUBLE, &cfg->seconds,
          "stop each client after T seconds (default: no limit)", "T" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &cfg->seed, "seed (default 1)", "S" },
        { "think-us", 0, 0, G_OPTION_ARG_DOUBLE, &cfg->think_us,
          "mean exponential think time between a client's operations (default 0)", "U" },
        { "subdir-mounts", 0, 0, G_OPTION_ARG_DOUBLE, &cfg->subdir,
          "fraction of clients mounting a subdirectory, 0..1 (default 0.3)", "P" },
        { "users", 'u', 0, G_OPTION_ARG_INT, &cfg->users,
          "users of the site: as given to setup (default 12)", "N" },
        { "json", 'j', 0, G_OPTION_ARG_FILENAME, &cfg->json, "write a JSON report", "FILE" },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &cfg->verbose, "a line per client", NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    GOptionContext *ctx = g_option_context_new("URL - run the clients");
    GError *err = NULL;

    g_set_prgname(WL_PROG " run");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, argc, argv, &err))
        usage_error("run: %s", err->message);
    g_option_context_free(ctx);
    if (!mix)
        usage_error("run: --mix is required");
    for (cfg->mix = MIX_MAIL; cfg->mix <= MIX_MIXED; cfg->mix++)
        if (strcmp(mix, mix_names[cfg->mix]) == 0)
            break;
    if (cfg->mix > MIX_MIXED)
        usage_error("run: unknown --mix '%s' (mail, home or mixed)", mix);
    g_free(mix);
}

static void run_check(int argc, char **argv, struct run_cfg *cfg)
{
    if (argc != 2 || !parse_url(argv[1], &cfg->server, &cfg->export))
        usage_error("run: need one URL nfs://SERVER/EXPORT[?version=3]");
    cfg->url = argv[1];
    if (cfg->clients < 1 || cfg->clients > 256)
        usage_error("run: --clients must be 1..256");
    if (cfg->users < 1 || cfg->users > 64)
        usage_error("run: --users must be 1..64");
    if (cfg->ops < 0)
        cfg->ops = cfg->seconds > 0 ? G_MAXINT64 : 1000;
    if (cfg->seconds < 0 || cfg->think_us < 0 || cfg->subdir < 0 || cfg->subdir > 1)
        usage_error("run: --seconds and --think-us must be >= 0, --subdir-mounts 0..1");
}

static int cmd_run(int argc, char **argv)
{
    struct run_cfg cfg = { .clients = 8, .users = 12, .ops = -1, .seed = 1, .subdir = 0.3 };
    struct wl_stats *st;
    gint64 t0 = 0, t1 = 0;
    int rc;

    run_options(&argc, &argv, &cfg);
    run_check(argc, argv, &cfg);
    st = mmap(NULL, sizeof(*st) * (size_t)cfg.clients, PROT_READ | PROT_WRITE,
              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (st == MAP_FAILED) {
        fprintf(stderr, WL_PROG ": mmap: %s\n", g_strerror(errno));
        return TBBT_EXIT_FAIL;
    }
    memset(st, 0, sizeof(*st) * (size_t)cfg.clients);
    plan_clients(&cfg, st);
    rc = run_clients(&cfg, st, &t0, &t1);
    print_summary(&cfg, st, t0, t1);
    if (cfg.json && write_json(&cfg, st, t0, t1))
        rc = 1;
    munmap(st, sizeof(*st) * (size_t)cfg.clients);
    g_free(cfg.server);
    g_free(cfg.export);
    g_free(cfg.json);
    return rc ? TBBT_EXIT_FAIL : TBBT_EXIT_OK;
}

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: " WL_PROG " setup URL [--users N] [--seed S] [--scale F]\n"
            "       " WL_PROG " run URL --mix mail|home|mixed [--clients K] [--ops N]\n"
            "           [--seconds T] [--seed S] [--think-us U] [--subdir-mounts P]\n"
            "           [--users N] [--json FILE] [-v]\n"
            "       " WL_PROG " --version\n"
            "A multi-client NFSv3 workload that behaves like a site's real clients (libnfs).\n"
            "URL: nfs://SERVER/EXPORT[?version=3].  '" WL_PROG " setup --help' and '"
            WL_PROG " run --help' list the options; docs/lab.md describes the workloads.\n");
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2)
        usage_error("need a command: setup or run");
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return TBBT_EXIT_OK;
    }
    if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
        printf(WL_PROG " (tbbt) %s\nglib %u.%u.%u\n", TBBT_VERSION, glib_major_version,
               glib_minor_version, glib_micro_version);
        return TBBT_EXIT_OK;
    }
    if (strcmp(argv[1], "setup") == 0)
        return cmd_setup(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    usage_error("unknown command '%s' (setup or run)", argv[1]);
}
