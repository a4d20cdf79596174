/* SPDX-License-Identifier: MIT */
/*
 * rpc-proxy's options (glib GOptionContext), their checks, the start-up (listener,
 * signalfd, event log, pid and port files) and main(); the proxy itself is
 * rpc-proxy.c.  Options and examples: docs/rpc-proxy.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib.h>

#include "rpc-proxy.h"
#include "tbbt-version.h"
#include "trace/trace.h"
#include "util/exit-codes.h"
#include "util/util.h"

/* ------------------------------------------------------------------ setup */

static int usage_error(const char *fmt, const char *arg) __attribute__((format(printf, 1, 0)));
static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, PROG ": ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (try --help)\n");
    return TBBT_EXIT_USAGE;
}

/* Parses an NFSv3 procedure name (any case; the trace module's table) or a number. */
static bool parse_proc(const char *s, uint32_t *proc)
{
    guint64 v;
    char *lower = g_ascii_strdown(s, -1);
    int n = tbbt_proc_by_name(TBBT_PROG_NFS3, lower);

    g_free(lower);
    if (n >= 0) {
        *proc = (uint32_t)n;
        return true;
    }
    if (!g_ascii_string_to_unsigned(s, 10, 0, UINT32_MAX, &v, NULL))
        return false;
    *proc = (uint32_t)v;
    return true;
}

/* One --delay PROC=MS. */
static bool parse_delay(struct cfg *c, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char *name;
    guint64 ms;
    uint32_t proc;
    bool ok;

    if (!eq || !g_ascii_string_to_unsigned(eq + 1, 10, 0, MAX_DELAY_MS, &ms, NULL))
        return false;
    name = g_strndup(arg, (gsize)(eq - arg));
    if ((ok = g_ascii_strcasecmp(name, "all") == 0))
        c->delay_all_ms = (int)ms;
    else if ((ok = parse_proc(name, &proc)))
        g_hash_table_insert(c->delay_ms, GUINT_TO_POINTER(proc), GINT_TO_POINTER((int)ms));
    g_free(name);
    c->max_delay_ms = MAX(c->max_delay_ms, (int)ms);
    return ok;
}

/* Resolves "[HOST]:PORT", "HOST:PORT", or "PORT" when def_host is given. */
static bool resolve(const char *spec, const char *def_host, int socktype, bool port0_ok,
                    struct sockaddr_storage *sa, socklen_t *len)
{
    const char *colon = strrchr(spec, ':'), *port;
    struct addrinfo hints = {.ai_socktype = socktype, .ai_flags = AI_NUMERICSERV}, *res;
    char *host;
    guint64 num;
    bool ok;

    if (spec[0] == '[') {
        const char *rb = strchr(spec, ']');
        if (!rb || rb[1] != ':')
            return false;
        host = g_strndup(spec + 1, (gsize)(rb - spec - 1));
        port = rb + 2;
    } else if (colon) {
        host = g_strndup(spec, (gsize)(colon - spec));
        port = colon + 1;
    } else if (def_host) {
        host = g_strdup(def_host);
        port = spec;
    } else {
        return false;
    }
    ok = g_ascii_string_to_unsigned(port, 10, port0_ok ? 0 : 1, 65535, &num, NULL) &&
         host[0] && getaddrinfo(host, port, &hints, &res) == 0;
    g_free(host);
    if (!ok)
        return false;
    memcpy(sa, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return true;
}

static int check_numbers(const struct cfg *c)
{
    if (c->drop_n < 0 || c->drop_first < 0 || c->reset_after < 0 || c->reset_every < 0 ||
        c->delay_prog < 0)
        return usage_error("%s", "negative count or program number");
    if (c->reset_after > 0 && c->reset_every > 0)
        return usage_error("%s", "--reset-after and --reset-every exclude each other");
    if (c->udp && (c->reset_after > 0 || c->reset_every > 0))
        return usage_error("%s", "--reset-after and --reset-every need TCP");
    if (c->drop_procs && c->drop_n == 0 && c->drop_first == 0)
        return usage_error("%s", "--drop-proc needs --drop-replies or --drop-first");
    return 0;
}

/* Checks the parsed options and fills the derived fields.  Returns 0 or an exit code. */
static int cfg_finish(struct cfg *c, int argc)
{
    int type = c->udp ? SOCK_DGRAM : SOCK_STREAM, rc;
    uint32_t proc;

    if (argc > 1)
        return usage_error("%s", "unexpected argument");
    if (!c->listen || !c->server)
        return usage_error("%s", "--listen and --server are required");
    if ((rc = check_numbers(c)) != 0)
        return rc;
    if (!resolve(c->listen, "127.0.0.1", type, true, &c->listen_sa, &c->listen_len))
        return usage_error("bad --listen '%s': expected [ADDR:]PORT", c->listen);
    if (!resolve(c->server, NULL, type, false, &c->server_sa, &c->server_len))
        return usage_error("bad --server '%s': expected HOST:PORT", c->server);
    for (char **d = c->delays; d && *d; d++)
        if (!parse_delay(c, *d))
            return usage_error("bad --delay '%s': expected PROC=MS (PROC a name, number or "
                               "'all'; MS up to 3600000)", *d);
    for (char **d = c->drop_procs; d && *d; d++) {
        if (!parse_proc(*d, &proc))
            return usage_error("bad --drop-proc '%s'", *d);
        if (!c->drop_set)
            c->drop_set = g_hash_table_new(g_direct_hash, g_direct_equal);
        g_hash_table_add(c->drop_set, GUINT_TO_POINTER(proc));
    }
    return 0;
}

static int parse_args(struct cfg *c, int *argc, char ***argv)
{
    GOptionEntry entries[] = {
        {"listen", 'l', 0, G_OPTION_ARG_STRING, &c->listen,
         "Accept clients on ADDR:PORT (default address 127.0.0.1; port 0: any free port)",
         "[ADDR:]PORT"},
        {"server", 's', 0, G_OPTION_ARG_STRING, &c->server, "The real server", "HOST:PORT"},
        {"udp", 'u', 0, G_OPTION_ARG_NONE, &c->udp, "Proxy UDP datagrams instead of TCP", NULL},
        {"delay", 'd', 0, G_OPTION_ARG_STRING_ARRAY, &c->delays,
         "Hold replies to calls of PROC (NFSv3 name, number or 'all') for MS ms; repeatable",
         "PROC=MS"},
        {"delay-prog", 0, 0, G_OPTION_ARG_INT, &c->delay_prog,
         "Program whose procedures --delay and --drop-proc name (default 100003)", "PROG"},
        {"drop-replies", 0, 0, G_OPTION_ARG_INT, &c->drop_n,
         "Drop every Nth reply (0: none)", "N"},
        {"drop-first", 0, 0, G_OPTION_ARG_INT, &c->drop_first,
         "Drop the first N replies (0: none), besides --drop-replies", "N"},
        {"drop-proc", 0, 0, G_OPTION_ARG_STRING_ARRAY, &c->drop_procs,
         "Only replies of PROC count for --drop-replies and --drop-first; repeatable", "PROC"},
        {"reset-after", 0, 0, G_OPTION_ARG_INT, &c->reset_after,
         "Reset the client connection once, after the Nth call overall (TCP)", "N"},
        {"reset-every", 0, 0, G_OPTION_ARG_INT, &c->reset_every,
         "Reset the client connection after every Nth call overall (TCP)", "N"},
        {"log", 0, 0, G_OPTION_ARG_FILENAME, &c->log_path,
         "Write one line per event to FILE ('-': stdout)", "FILE"},
        {"port-file", 0, 0, G_OPTION_ARG_FILENAME, &c->port_file,
         "Write the listening port to FILE", "FILE"},
        {"pid-file", 0, 0, G_OPTION_ARG_FILENAME, &c->pid_file,
         "Write the process id to FILE (removed at exit)", "FILE"},
        {"seed", 0, 0, G_OPTION_ARG_INT64, &c->seed,
         "Seed for randomness (recorded in the log; every current behaviour is deterministic)",
         "S"},
        {"verbose", 'v', 0, G_OPTION_ARG_NONE, &c->verbose,
         "Report start-up and each connection on stderr", NULL},
        {"version", 'V', 0, G_OPTION_ARG_NONE, &c->version, "Print the version and exit", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    GOptionContext *ctx = g_option_context_new("- ONC RPC proxy that delays, drops and resets");
    GError *err = NULL;
    bool ok;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(
        ctx, "Runs until SIGTERM or SIGINT, then prints one summary line to stderr.\n"
             "Exit status: 0 stopped by a signal, 1 could not start, 2 usage error.\n"
             "Event log format and examples: docs/rpc-proxy.md.\n");
    ok = g_option_context_parse(ctx, argc, argv, &err);
    g_option_context_free(ctx);
    if (!ok) {
        fprintf(stderr, PROG ": %s (try --help)\n", err->message);
        g_error_free(err);
        return TBBT_EXIT_USAGE;
    }
    return 0;
}

static void cfg_fini(struct cfg *c)
{
    g_free(c->listen);
    g_free(c->server);
    g_free(c->log_path);
    g_free(c->port_file);
    g_free(c->pid_file);
    g_strfreev(c->delays);
    g_strfreev(c->drop_procs);
    if (c->delay_ms)
        g_hash_table_destroy(c->delay_ms);
    if (c->drop_set)
        g_hash_table_destroy(c->drop_set);
}

static bool write_small_file(const char *path, const char *text)
{
    GError *err = NULL;

    if (g_file_set_contents(path, text, -1, &err))
        return true;
    tbbt_log(TBBT_LOG_ERROR, "cannot write '%s': %s", path, err->message);
    g_error_free(err);
    return false;
}

static int open_listener(struct proxy *px, const struct cfg *c)
{
    int fd = socket(c->listen_sa.ss_family,
                    (c->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;

    if (fd < 0)
        return -errno;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (const struct sockaddr *)&c->listen_sa, c->listen_len) < 0 ||
        (!c->udp && listen(fd, 128) < 0)) {
        int e = errno;
        close(fd);
        return -e;
    }
    px->lfd = fd;
    return 0;
}

static int open_signals(struct proxy *px)
{
    sigset_t set;

    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 ||
        (px->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        return -errno;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* Opens the log and writes its header line with the settings that shape the events. */
static bool open_log(struct proxy *px, const struct cfg *c, unsigned port)
{
    char server[INET6_ADDRSTRLEN + 16];

    if (!c->log_path)
        return true;
    px->log = strcmp(c->log_path, "-") == 0 ? stdout : fopen(c->log_path, "w");
    if (!px->log) {
        tbbt_log(TBBT_LOG_ERROR, "cannot open log '%s': %s", c->log_path, strerror(errno));
        return false;
    }
    setvbuf(px->log, NULL, _IOLBF, 0);
    proxy_addr_str(&c->server_sa, c->server_len, server, sizeof(server));
    fprintf(px->log, "# rpc-proxy %s %s port %u server %s seed %" G_GINT64_FORMAT "\n",
            TBBT_VERSION, c->udp ? "udp" : "tcp", port, server, c->seed);
    return true;
}

/* Listener, signals, log, port and pid files.  Returns 0 or an exit code. */
static int proxy_start(struct proxy *px, const struct cfg *c)
{
    struct sockaddr_storage sa;
    socklen_t len = sizeof(sa);
    unsigned port;
    char text[32], where[INET6_ADDRSTRLEN + 16];
    int rc;

    if ((rc = open_listener(px, c)) < 0) {
        tbbt_log(TBBT_LOG_ERROR, "cannot listen on '%s': %s", c->listen, strerror(-rc));
        return TBBT_EXIT_FAIL;
    }
    if ((rc = open_signals(px)) < 0) {
        tbbt_log(TBBT_LOG_ERROR, "signalfd: %s", strerror(-rc));
        return TBBT_EXIT_FAIL;
    }
    if (getsockname(px->lfd, (struct sockaddr *)&sa, &len) < 0) {
        tbbt_log(TBBT_LOG_ERROR, "getsockname: %s", strerror(errno));
        return TBBT_EXIT_FAIL;
    }
    port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                          : ((struct sockaddr_in *)&sa)->sin_port);
    if (!open_log(px, c, port))
        return TBBT_EXIT_FAIL;
    /* The pid file first: whoever waits for the port file may read the pid file next. */
    g_snprintf(text, sizeof(text), "%ld\n", (long)getpid());
    if (c->pid_file && !(px->pid_written = write_small_file(c->pid_file, text)))
        return TBBT_EXIT_FAIL;
    g_snprintf(text, sizeof(text), "%u\n", port);
    if (c->port_file && !write_small_file(c->port_file, text))
        return TBBT_EXIT_FAIL;
    proxy_addr_str(&sa, len, where, sizeof(where));
    tbbt_log(TBBT_LOG_INFO, "%s on %s, server %s", c->udp ? "udp" : "tcp", where, c->server);
    return 0;
}

static void proxy_init(struct proxy *px, const struct cfg *c)
{
    px->cfg = c;
    px->lfd = px->sigfd = -1;
    px->pairs = g_hash_table_new(g_direct_hash, g_direct_equal);
    px->udp_peers = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
                                          (GDestroyNotify)g_bytes_unref, NULL);
    px->dead = g_ptr_array_new();
    g_queue_init(&px->held);
    px->fds = g_array_new(FALSE, FALSE, sizeof(struct pollfd));
    px->slots = g_array_new(FALSE, FALSE, sizeof(struct slot));
}

static void print_summary(const struct stats *st)
{
    fprintf(stderr,
            PROG ": calls %" PRIu64 ", replies %" PRIu64 ", delayed %" PRIu64
                 ", dropped %" PRIu64 ", resets %" PRIu64 ", connections %" PRIu64
                 ", malformed %" PRIu64 ", lost %" PRIu64 "\n",
            st->calls, st->replies, st->delayed, st->dropped, st->resets, st->conns,
            st->malformed, st->lost);
}

int main(int argc, char **argv)
{
    struct cfg c = {.delay_prog = NFS_PROGRAM, .delay_all_ms = -1};
    struct proxy *px;
    int rc;

    tbbt_log_init(PROG, TBBT_LOG_WARN);
    c.delay_ms = g_hash_table_new(g_direct_hash, g_direct_equal);
    if ((rc = parse_args(&c, &argc, &argv)) != 0)
        goto out;
    if (c.version) {
        printf(PROG " (tbbt) %s\nglib %u.%u.%u\n", TBBT_VERSION, glib_major_version,
               glib_minor_version, glib_micro_version);
        goto out;
    }
    if ((rc = cfg_finish(&c, argc)) != 0)
        goto out;
    if (c.verbose)
        tbbt_log_init(PROG, TBBT_LOG_INFO);
    px = g_new0(struct proxy, 1);
    proxy_init(px, &c);
    if ((rc = proxy_start(px, &c)) == 0 && (rc = proxy_run(px)) == 0)
        print_summary(&px->st);
    proxy_fini(px);
    g_free(px);
out:
    cfg_fini(&c);
    return rc;
}
