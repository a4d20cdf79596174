/* SPDX-License-Identifier: MIT */
/*
 * rpc-null: pipelined RPC load on an NFSv3 server through the player's transport
 * (src/onc/rpcconn.h): N connections, K calls outstanding on each, for T seconds,
 * NULL (NFS program 100003 v3 procedure 0) or GETATTR of the export root.  Prints
 * calls/s and this process's CPU time per call (getrusage user + sys over all threads,
 * divided by completed calls): the transport's share of the player's budget.
 *
 * Modes: one thread polls every connection and both sends and receives (default), or
 * --split: one sending thread and one receiving thread, as tbbt-play will run.
 * --mount PATH does MOUNT v3 MNT of PATH and GETATTR of the root handle once, prints
 * them, and is needed for --proc getattr.  Ports come from rpcbind unless given.
 * UDP: calls without a reply after one second are counted as timeouts, not resent.
 *
 * --batch B queues calls only when B slots of the window are free, so that calls leave
 * B at a time (fewer send() calls, and replies then tend to arrive together too).
 *
 *   rpc-null [--host H] [--transport tcp|udp] [-c N] [-k K] [-b B] [-t T] [--split]
 *            [--proc null|getattr] [--mount PATH] [--json]
 * Exit status: 0 success, 1 the run failed (no server, errors), 2 usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <glib.h>

#include "onc/rpcconn.h"
#include "proto/nfs3.h"
#include "util/exit-codes.h"
#include "util/util.h"

#include <rpc/pmap_prot.h>

#define PROG "rpc-null"
#define BATCH 64

struct cfg {
    char *host, *transport, *proc, *mount;
    int port, mount_port, conns, outstanding, batch;
    gboolean lowat;
    double seconds;
    gboolean split, json;
    bool udp, getattr;
};

struct bench {
    struct cfg *cfg;
    struct tbbt_rpcconn **c;
    int *lowat;                  /* receive side: SO_RCVLOWAT set on each connection */
    struct tbbt_rpcconn_fh root;
    atomic_bool stop;            /* stop sending */
    atomic_bool failed;
    atomic_int sleeping;         /* split mode: sender waits on efd */
    int efd;
    uint64_t ok, errors, timeouts;   /* receive side */
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, PROG ": ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(TBBT_EXIT_FAIL);
}

/* Asks rpcbind on host (over the benchmark's transport) for prog/vers's port. */
static uint16_t lookup_port(const struct cfg *cfg, uint32_t prog, uint32_t vers)
{
    struct tbbt_rpcconn_opts o = {.transport = cfg->udp ? TBBT_RPCCONN_UDP : TBBT_RPCCONN_TCP};
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(&o);
    uint16_t port = 0;
    if (tbbt_rpcconn_connect(c, cfg->host, PMAPPORT) < 0 ||
        tbbt_rpcconn_getport(c, prog, vers, cfg->udp ? IPPROTO_UDP : IPPROTO_TCP, 5000,
                             &port) < 0)
        die("rpcbind on %s: %s", cfg->host, tbbt_rpcconn_error(c));
    tbbt_rpcconn_free(c);
    if (port == 0)
        die("program %u version %u is not registered with rpcbind on %s", prog, vers,
            cfg->host);
    return port;
}

static struct tbbt_rpcconn *open_conn(const struct cfg *cfg, uint16_t port)
{
    struct tbbt_rpcconn_opts o = {.transport = cfg->udp ? TBBT_RPCCONN_UDP : TBBT_RPCCONN_TCP,
                                  .flavor = TBBT_RPCCONN_AUTH_SYS, .machine = "tbbt-rpc-null"};
    struct tbbt_rpcconn *c = tbbt_rpcconn_new(&o);
    if (tbbt_rpcconn_connect(c, cfg->host, port) < 0)
        die("%s", tbbt_rpcconn_error(c));
    return c;
}

static const char *ftype_name(int t)
{
    static const char *const n[] = {"?", "REG", "DIR", "BLK", "CHR", "LNK", "SOCK", "FIFO"};
    return t >= 0 && t < 8 ? n[t] : "?";
}

/* MNT then a synchronous GETATTR of the root; prints both. */
static void do_mount(struct bench *b, uint16_t nfs_port)
{
    struct cfg *cfg = b->cfg;
    uint16_t mport = cfg->mount_port ? (uint16_t)cfg->mount_port : lookup_port(cfg, 100005, 3);
    struct tbbt_rpcconn *m = open_conn(cfg, mport);
    int mstat;
    if (tbbt_rpcconn_mnt3(m, cfg->mount, 5000, &mstat, &b->root) < 0)
        die("MNT %s: %s", cfg->mount, tbbt_rpcconn_error(m));
    tbbt_rpcconn_free(m);
    if (mstat != 0)
        die("MNT %s: server says mountstat3 %d", cfg->mount, mstat);
    printf("mount: %s handle (%u bytes) ", cfg->mount, b->root.len);
    for (uint32_t i = 0; i < b->root.len; i++)
        printf("%02x", b->root.data[i]);
    printf("\n");

    struct tbbt_rpcconn *c = open_conn(cfg, nfs_port);
    GETATTR3args args = {.object.data = {b->root.len, (char *)b->root.data}};
    GETATTR3res res;
    struct tbbt_rpcconn_call call = {.prog = 100003, .vers = 3, .proc = 1,
                                     .xargs = (xdrproc_t)xdr_GETATTR3args, .args = &args,
                                     .xres = (xdrproc_t)xdr_GETATTR3res, .res = &res,
                                     .res_size = sizeof(res)};
    struct tbbt_rpcconn_reply rep;
    if (tbbt_rpcconn_call_sync(c, &call, 5000, &rep) < 0)
        die("GETATTR of the root: %s", tbbt_rpcconn_error(c));
    if (rep.status != TBBT_RPCCONN_OK || res.status != NFS3_OK)
        die("GETATTR of the root: %s, nfsstat3 %d", tbbt_rpcconn_status_name(rep.status),
            rep.res_status);
    fattr3 *a = &res.GETATTR3res_u.resok.obj_attributes;
    printf("getattr: root type %s mode %04o nlink %u uid %u gid %u size %" PRIu64
           " fileid %" PRIu64 " (%.0f us)\n",
           ftype_name(a->type), a->mode, a->nlink, a->uid, a->gid, (uint64_t)a->size,
           (uint64_t)a->fileid, (double)(rep.recv_ns - rep.queued_ns) / 1e3);
    xdr_free((xdrproc_t)xdr_GETATTR3res, &res);
    tbbt_rpcconn_free(c);
}

/* ------------------------------------------------------------------ load */

/* Queues calls on c until K are outstanding; returns how many were queued. */
static int fill(struct bench *b, struct tbbt_rpcconn *c)
{
    int k = b->cfg->outstanding - (int)tbbt_rpcconn_outstanding(c), n = 0;
    if (k < b->cfg->batch && k < b->cfg->outstanding)
        return 0;   /* wait until a whole batch of slots is free */
    GETATTR3args args = {.object.data = {b->root.len, (char *)b->root.data}};
    for (; n < k; n++) {
        struct tbbt_rpcconn_call call = {.prog = 100003, .vers = 3};
        if (b->cfg->getattr) {
            call.proc = 1;
            call.xargs = (xdrproc_t)xdr_GETATTR3args;
            call.args = &args;
            call.xres = (xdrproc_t)xdr_GETATTR3res;
            call.res = g_new0(GETATTR3res, 1);   /* the receiving side frees it */
            call.res_size = sizeof(GETATTR3res);
        }
        if (tbbt_rpcconn_call(c, &call, NULL) < 0) {
            g_free(call.res);
            atomic_store(&b->failed, true);
            break;
        }
    }
    return n;
}

static void account(struct bench *b, const struct tbbt_rpcconn_reply *r, int n)
{
    for (int i = 0; i < n; i++) {
        if (r[i].status == TBBT_RPCCONN_TIMEDOUT)
            b->timeouts++;
        else if (r[i].status == TBBT_RPCCONN_OK && r[i].res_status <= 0)
            b->ok++;
        else
            b->errors++;
        if (r[i].res) {
            if (r[i].status == TBBT_RPCCONN_OK)
                xdr_free((xdrproc_t)xdr_GETATTR3res, r[i].res);
            g_free(r[i].res);
        }
    }
}

/* Receives what connection i has; returns the number of completions. */
static int drain_conn(struct bench *b, int i)
{
    struct tbbt_rpcconn_reply r[BATCH];
    int n = tbbt_rpcconn_recv(b->c[i], r, BATCH);
    if (n < 0) {
        fprintf(stderr, PROG ": connection %d: %s\n", i, tbbt_rpcconn_error(b->c[i]));
        atomic_store(&b->failed, true);
        atomic_store(&b->stop, true);
        return 0;
    }
    account(b, r, n);
    return n;
}

static void expire_udp(struct bench *b, uint64_t now)
{
    struct tbbt_rpcconn_reply r[BATCH];
    for (int i = 0; i < b->cfg->conns; i++) {
        int n;
        while ((n = tbbt_rpcconn_expire(b->c[i], now - 1000000000ull, r, BATCH)) > 0)
            account(b, r, n);
    }
}

static unsigned total_outstanding(struct bench *b)
{
    unsigned t = 0;
    for (int i = 0; i < b->cfg->conns; i++)
        t += tbbt_rpcconn_outstanding(b->c[i]);
    return t;
}

/*
 * With --lowat: before polling connection i, asks for the bytes of min(batch,
 * outstanding) replies, so that one wake-up reads a batch: 28 bytes per NULL reply
 * (record mark and accepted header), 116 per GETATTR3resok.
 */
static void update_lowat(struct bench *b, int i)
{
    if (!b->cfg->lowat || b->cfg->udp)
        return;
    int per = b->cfg->getattr ? 116 : 28;
    int want = (int)MIN(tbbt_rpcconn_outstanding(b->c[i]), (unsigned)b->cfg->batch) * per;
    if (want != b->lowat[i] && tbbt_rpcconn_set_recv_lowat(b->c[i], want) == 0)
        b->lowat[i] = want;
}

/* Single thread: send, poll, receive, over all connections. */
static void run_loop(struct bench *b, uint64_t end)
{
    int nc = b->cfg->conns > 0 ? b->cfg->conns : 1;   /* the options ensure >= 1 */
    struct pollfd *p = g_new0(struct pollfd, nc);
    uint64_t next_expire = tbbt_now_ns() + 100000000;
    for (;;) {
        uint64_t now = tbbt_now_ns();
        if (now >= end)
            atomic_store(&b->stop, true);
        bool stop = atomic_load(&b->stop);
        if (stop && (total_outstanding(b) == 0 || now >= end + 2000000000ull ||
                     atomic_load(&b->failed)))
            break;
        for (int i = 0; i < nc; i++) {
            if (!stop)
                fill(b, b->c[i]);
            int rc = tbbt_rpcconn_flush(b->c[i]);
            update_lowat(b, i);
            p[i] = (struct pollfd){.fd = tbbt_rpcconn_fd(b->c[i]),
                                   .events = POLLIN | (rc == -EAGAIN ? POLLOUT : 0)};
        }
        if (poll(p, (nfds_t)nc, 100) < 0 && errno != EINTR)
            die("poll: %s", strerror(errno));
        for (int i = 0; i < nc; i++) {
            if (p[i].revents & (POLLIN | POLLERR | POLLHUP))
                drain_conn(b, i);
        }
        if (b->cfg->udp && now >= next_expire) {
            expire_udp(b, now);
            next_expire = now + 100000000;
        }
    }
    g_free(p);
}

/* True when some connection has room for a batch (the condition fill() waits for). */
static bool batch_free(struct bench *b)
{
    int need = MIN(b->cfg->batch, b->cfg->outstanding);
    for (int i = 0; i < b->cfg->conns; i++) {
        if (b->cfg->outstanding - (int)tbbt_rpcconn_outstanding(b->c[i]) >= need)
            return true;
    }
    return false;
}

/* Split mode, sending thread: fills every connection, sleeps on efd when all are full. */
static void *sender_main(void *arg)
{
    struct bench *b = arg;
    int nc = b->cfg->conns;
    struct pollfd *p = g_new0(struct pollfd, nc + 1);
    while (!atomic_load(&b->stop)) {
        int queued = 0, np = 1;
        p[0] = (struct pollfd){.fd = b->efd, .events = POLLIN};
        for (int i = 0; i < nc; i++) {
            queued += fill(b, b->c[i]);
            if (tbbt_rpcconn_flush(b->c[i]) == -EAGAIN)
                p[np++] = (struct pollfd){.fd = tbbt_rpcconn_fd(b->c[i]), .events = POLLOUT};
        }
        if (queued > 0 || np > 1)
            continue;
        atomic_store(&b->sleeping, 1);
        if (batch_free(b)) {
            atomic_store(&b->sleeping, 0);
            continue;
        }
        poll(p, (nfds_t)np, 10);
        uint64_t v;
        if (p[0].revents & POLLIN && read(b->efd, &v, sizeof(v)) < 0)
            break;
        atomic_store(&b->sleeping, 0);
    }
    g_free(p);
    return NULL;
}

/* Split mode, receiving thread (this one). */
static void run_split(struct bench *b, uint64_t end)
{
    int nc = b->cfg->conns > 0 ? b->cfg->conns : 1;   /* the options ensure >= 1 */
    struct pollfd *p = g_new0(struct pollfd, nc);
    pthread_t t;
    b->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    pthread_create(&t, NULL, sender_main, b);
    uint64_t next_expire = tbbt_now_ns() + 100000000;
    for (;;) {
        uint64_t now = tbbt_now_ns();
        if (now >= end)
            atomic_store(&b->stop, true);
        if (atomic_load(&b->stop) && (total_outstanding(b) == 0 ||
                                      now >= end + 2000000000ull || atomic_load(&b->failed)))
            break;
        for (int i = 0; i < nc; i++) {
            update_lowat(b, i);
            p[i] = (struct pollfd){.fd = tbbt_rpcconn_fd(b->c[i]), .events = POLLIN};
        }
        poll(p, (nfds_t)nc, 10);
        int got = 0;
        for (int i = 0; i < nc; i++) {
            if (p[i].revents)
                got += drain_conn(b, i);
        }
        if (got && atomic_exchange(&b->sleeping, 0)) {
            uint64_t one = 1;
            if (write(b->efd, &one, sizeof(one)) < 0)
                die("eventfd: %s", strerror(errno));
        }
        if (b->cfg->udp && now >= next_expire) {
            expire_udp(b, now);
            next_expire = now + 100000000;
        }
    }
    atomic_store(&b->stop, true);
    pthread_join(t, NULL);
    close(b->efd);
    g_free(p);
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static void report(struct bench *b, double wall, double cpu)
{
    struct cfg *cfg = b->cfg;
    struct tbbt_rpcconn_stats s, t = {0};
    for (int i = 0; i < cfg->conns; i++) {
        tbbt_rpcconn_stats(b->c[i], &s);
        t.send_syscalls += s.send_syscalls;
        t.recv_syscalls += s.recv_syscalls;
        t.unmatched += s.unmatched;
        t.garbage += s.garbage;
    }
    double calls = (double)b->ok, rate = calls / wall, us = calls > 0 ? cpu * 1e6 / calls : 0;
    double spc = calls > 0 ? (double)t.send_syscalls / calls : 0;
    double rpc = calls > 0 ? (double)t.recv_syscalls / calls : 0;
    if (cfg->json) {
        printf("{\"transport\":\"%s\",\"proc\":\"%s\",\"mode\":\"%s\",\"connections\":%d,"
               "\"outstanding\":%d,\"batch\":%d,\"seconds\":%.3f,\"calls\":%" PRIu64
               ",\"calls_per_s\":%.0f,"
               "\"cpu_us_per_call\":%.3f,\"errors\":%" PRIu64 ",\"timeouts\":%" PRIu64
               ",\"sends_per_call\":%.3f,\"recvs_per_call\":%.3f}\n",
               cfg->udp ? "udp" : "tcp", cfg->proc, cfg->split ? "split" : "loop", cfg->conns,
               cfg->outstanding, cfg->batch, wall, b->ok, rate, us, b->errors, b->timeouts, spc,
               rpc);
    } else {
        printf("%s %s %s: connections %d outstanding %d batch %d: %" PRIu64
               " calls in %.2f s = %.0f calls/s, cpu %.2f us/call, errors %" PRIu64
               ", timeouts %" PRIu64 ", sends/call %.3f, recvs/call %.3f\n",
               cfg->udp ? "udp" : "tcp", cfg->proc, cfg->split ? "split" : "loop", cfg->conns,
               cfg->outstanding, cfg->batch, b->ok, wall, rate, us, b->errors, b->timeouts, spc,
               rpc);
    }
}

static void parse_args(int argc, char **argv, struct cfg *cfg)
{
    GOptionEntry entries[] = {
        {"host", 0, 0, G_OPTION_ARG_STRING, &cfg->host, "server (default 127.0.0.1)", "H"},
        {"port", 'p', 0, G_OPTION_ARG_INT, &cfg->port, "NFS port (default: ask rpcbind)", "P"},
        {"mount-port", 0, 0, G_OPTION_ARG_INT, &cfg->mount_port,
         "MOUNT port (default: ask rpcbind)", "P"},
        {"transport", 0, 0, G_OPTION_ARG_STRING, &cfg->transport, "tcp (default) or udp", "T"},
        {"connections", 'c', 0, G_OPTION_ARG_INT, &cfg->conns, "connections (default 1)", "N"},
        {"outstanding", 'k', 0, G_OPTION_ARG_INT, &cfg->outstanding,
         "calls in flight per connection (default 4)", "K"},
        {"batch", 'b', 0, G_OPTION_ARG_INT, &cfg->batch,
         "queue calls only when this many slots are free (default 1)", "B"},
        {"lowat", 0, 0, G_OPTION_ARG_NONE, &cfg->lowat,
         "TCP: wake the receiver only when a batch of replies is buffered (SO_RCVLOWAT)", NULL},
        {"seconds", 't', 0, G_OPTION_ARG_DOUBLE, &cfg->seconds, "duration (default 5; 0: only "
         "--mount)", "T"},
        {"proc", 0, 0, G_OPTION_ARG_STRING, &cfg->proc, "null (default) or getattr", "P"},
        {"mount", 'm', 0, G_OPTION_ARG_STRING, &cfg->mount,
         "MNT this export path, GETATTR its root, print both", "PATH"},
        {"split", 0, 0, G_OPTION_ARG_NONE, &cfg->split,
         "a sending and a receiving thread instead of one loop", NULL},
        {"json", 0, 0, G_OPTION_ARG_NONE, &cfg->json, "one JSON object per run", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("- pipelined NULL/GETATTR calls through rpcconn");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *err = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
        fprintf(stderr, PROG ": %s (try --help)\n", err->message);
        exit(TBBT_EXIT_USAGE);
    }
    g_option_context_free(ctx);
    cfg->udp = g_strcmp0(cfg->transport, "udp") == 0;
    cfg->getattr = g_strcmp0(cfg->proc, "getattr") == 0;
    if ((!cfg->udp && g_strcmp0(cfg->transport, "tcp") != 0) ||
        (!cfg->getattr && g_strcmp0(cfg->proc, "null") != 0) || cfg->conns < 1 || cfg->batch < 1 ||
        cfg->conns > 1024 || cfg->outstanding < 1 || cfg->seconds < 0 || argc != 1 ||
        (cfg->getattr && !cfg->mount) || cfg->port < 0 || cfg->port > 65535 ||
        cfg->mount_port < 0 || cfg->mount_port > 65535) {
        fprintf(stderr, PROG ": bad options (try --help)\n");
        exit(TBBT_EXIT_USAGE);
    }
}

int main(int argc, char **argv)
{
    /* Static: the option strings GOption allocates live as long as the process. */
    static struct cfg cfg = {.host = "127.0.0.1", .transport = "tcp", .proc = "null",
                             .conns = 1, .outstanding = 4, .batch = 1, .seconds = 5};
    parse_args(argc, argv, &cfg);
    struct bench b = {.cfg = &cfg};
    uint16_t port = cfg.port ? (uint16_t)cfg.port : lookup_port(&cfg, 100003, 3);
    if (cfg.mount)
        do_mount(&b, port);
    if (cfg.seconds == 0)
        return TBBT_EXIT_OK;
    b.c = g_new0(struct tbbt_rpcconn *, cfg.conns);
    b.lowat = g_new0(int, cfg.conns);
    for (int i = 0; i < cfg.conns; i++)
        b.c[i] = open_conn(&cfg, port);
    double cpu0 = cpu_s();
    uint64_t t0 = tbbt_now_ns(), end = t0 + (uint64_t)(cfg.seconds * 1e9);
    if (cfg.split)
        run_split(&b, end);
    else
        run_loop(&b, end);
    double wall = (double)(tbbt_now_ns() - t0) / 1e9, cpu = cpu_s() - cpu0;
    report(&b, wall, cpu);
    bool bad = atomic_load(&b.failed) || b.errors > 0 || b.ok == 0 ||
               (b.timeouts > 0 && b.timeouts * 100 > b.ok);
    for (int i = 0; i < cfg.conns; i++)
        tbbt_rpcconn_free(b.c[i]);
    g_free(b.c);
    g_free(b.lowat);
    return bad ? TBBT_EXIT_FAIL : TBBT_EXIT_OK;
}
