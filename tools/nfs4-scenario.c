/* SPDX-License-Identifier: MIT */
/*
 * nfs4-scenario: the lab client for NFSv4.0, 4.1 and 4.2 (RFC 7530, RFC 8881, RFC 7862),
 * which libnfs 4.0.0 speaks only in part.  A synchronous libtirpc client over TCP built
 * on the project's rpcgen XDR of src/proto/nfs4.x: --clients N independent clients,
 * each with its own TCP connection, client owner and verifier and AUTH_SYS uid/gid, run a
 * scripted scenario under --path (reached from the pseudo-root) in a directory of their
 * own, interleaved step by step (or one after another with --serial); --rounds R repeats
 * the steps between the first (client state) and the last (its end) R times.  Every
 * operation's status is checked; any other status than the expected one ends the run
 * with one line and exit code 1.  At the end it prints, on stdout, one line per
 * operation sent: "NAME NUMBER COUNT" (names from tbbt_proto_nfs4_op_name()), for
 * comparison with tshark.
 *
 * What the scenario does: nfs4-scenario-script.c and nfs4-scenario-tree.c; the other
 * files: nfs4-scenario-int.h.  Not installed; used by tools/make-captures.sh,
 * bench/play-v4-bench.sh and tests/integration/110-nfs4-scenario.sh.  See docs/lab.md.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include "nfs4-scenario-int.h"

static void parse_args(int argc, char **argv, struct config *cfg)
{
    gboolean show_version = FALSE, serial = FALSE, verbose = FALSE;
    gint port = 2049, minor = 1, clients = 1, rounds = 1;
    gchar *server = NULL, *path = NULL;
    GOptionEntry entries[] = {
        { "server", 0, 0, G_OPTION_ARG_STRING, &server, "server address (default 127.0.0.1)",
          "HOST" },
        { "port", 'p', 0, G_OPTION_ARG_INT, &port, "NFS port (default 2049)", "PORT" },
        { "minor", 'm', 0, G_OPTION_ARG_INT, &minor, "NFSv4 minor version 0, 1 or 2 "
          "(default 1)", "M" },
        { "clients", 'c', 0, G_OPTION_ARG_INT, &clients, "independent clients, 1..64 "
          "(default 1)", "N" },
        { "path", 0, 0, G_OPTION_ARG_STRING, &path, "pseudo path to work under "
          "(default /export); each client makes client<N> in it", "PATH" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &cfg->seed, "seed of the client owner names "
          "(default 1)", "S" },
        { "rounds", 'r', 0, G_OPTION_ARG_INT, &rounds, "run the scenario's work (from "
          "the working directory to its removal) R times over one client state, 1..100000 "
          "(default 1; a long capture for benchmarks)", "R" },
        { "serial", 0, 0, G_OPTION_ARG_NONE, &serial, "run the clients one after another "
          "instead of interleaved step by step", NULL },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "report state and totals on "
          "stderr", NULL },
        { "version", 'V', 0, G_OPTION_ARG_NONE, &show_version, "print the version and exit",
          NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    tool_options(PROG, "",
                 "Runs a scripted NFSv4.x scenario (COMPOUNDs over TCP, libtirpc and the tbbt\n"
                 "rpcgen XDR) with several clients, and prints per-operation counts on stdout\n"
                 "as lines \"NAME NUMBER COUNT\".",
                 entries, &show_version, &argc, &argv);
    cfg->server = server ? server : g_strdup("127.0.0.1");
    cfg->path = path ? path : g_strdup("/export");
    cfg->port = port;
    cfg->minor = minor;
    cfg->clients = clients;
    cfg->rounds = rounds;
    cfg->serial = serial;
    cfg->verbose = verbose;
    if (argc != 1 || minor < 0 || minor > 2 || clients < 1 || clients > 64 || port < 1 ||
        port > 65535 || rounds < 1 || rounds > 100000 || cfg->path[0] != '/' ||
        strlen(cfg->path) > 1000) {
        fprintf(stderr, PROG ": bad arguments: --minor 0..2, --clients 1..64, --port "
                "1..65535, --rounds 1..100000, --path /ABSOLUTE, no operands (try --help)\n");
        exit(TBBT_EXIT_USAGE);
    }
}

/*
 * Client I: uids 2001.., groups 3001 and 3002 alternating (and 3100 for all).  The owner
 * string depends on the seed and I only; the verifier (the client's boot instance, RFC
 * 8881 2.4) also on the time and the process, so that a run after an aborted one with
 * the same owner is a rebooted client to the server, whose old state it drops.
 */
static void client_init(struct client *cl, int i, const struct config *cfg)
{
    uint64_t v = ((uint64_t)cfg->seed * 1000003u + (uint64_t)i) ^
                 ((uint64_t)g_get_real_time() << 16) ^ (uint64_t)getpid();

    memset(cl, 0, sizeof(*cl));
    cl->index = i;
    cl->minor = cfg->minor;
    cl->verbose = cfg->verbose;
    cl->uid = 2001 + (uint32_t)i;
    cl->gid = 3001 + (uint32_t)(i % 2);
    g_snprintf(cl->name, sizeof(cl->name), "tbbt-nfs4-scenario-%" PRId64 "-client%d",
               cfg->seed, i);
    g_snprintf(cl->host, sizeof(cl->host), "v4client%d", i);
    for (int b = 0; b < 8; b++)
        cl->verf[b] = (char)(v >> (8 * b));
    g_snprintf(cl->oowner, sizeof(cl->oowner), "open-owner-%d", i);
    g_snprintf(cl->lowner, sizeof(cl->lowner), "lock-owner-%d", i);
    g_snprintf(cl->towner, sizeof(cl->towner), "test-owner-%d", i);
    n4_connect(cl, cfg);
}

/* Prints "NAME NUMBER COUNT" for every operation sent, summed over the clients. */
static void print_counts(const struct client *cls, int n, bool verbose)
{
    uint64_t total = 0, compounds = 0;

    for (uint32_t op = 0; op < N4_NOPS; op++) {
        uint64_t sum = 0;
        for (int i = 0; i < n; i++)
            sum += cls[i].ops[op];
        if (!sum)
            continue;
        const char *name = tbbt_proto_nfs4_op_name(op);
        printf("%s %" PRIu32 " %" PRIu64 "\n", name ? name : "?", op, sum);
        total += sum;
    }
    for (int i = 0; i < n; i++)
        compounds += cls[i].compounds;
    if (verbose)
        fprintf(stderr, PROG ": %d clients, %" PRIu64 " COMPOUNDs, %" PRIu64 " operations\n",
                n, compounds, total);
}

/* The step of run K of NRUN (--rounds R: NRUN = 2 + R * (NSTEPS - 2)): the first and
 * the last step once, the ones between R times. */
static size_t step_of(size_t k, size_t nrun, size_t nsteps)
{
    if (k == 0 || k == nrun - 1)
        return k == 0 ? 0 : nsteps - 1;
    return 1 + (k - 1) % (nsteps - 2);
}

int main(int argc, char **argv)
{
    struct config cfg = { .seed = 1 };
    const n4_step_fn *steps;
    size_t nsteps = n4_script_steps(&steps);
    struct client *cls;

    parse_args(argc, argv, &cfg);
    cls = g_new0(struct client, (gsize)cfg.clients);
    for (int i = 0; i < cfg.clients; i++)
        client_init(&cls[i], i, &cfg);
    /* The first step makes the client state and the last one ends it; with --rounds R
     * the steps between them run R times (each round makes and removes client<N>). */
    g_assert(nsteps >= 3);
    size_t nrun = 2 + (size_t)cfg.rounds * (nsteps - 2);
    if (cfg.serial) {
        for (int i = 0; i < cfg.clients; i++)
            for (size_t k = 0; k < nrun; k++)
                steps[step_of(k, nrun, nsteps)](&cls[i], &cfg);
    } else {
        for (size_t k = 0; k < nrun; k++)
            for (int i = 0; i < cfg.clients; i++)
                steps[step_of(k, nrun, nsteps)](&cls[i], &cfg);
    }
    print_counts(cls, cfg.clients, cfg.verbose);
    for (int i = 0; i < cfg.clients; i++)
        n4_disconnect(&cls[i]);
    g_free(cls);
    g_free(cfg.server);
    g_free(cfg.path);
    return TBBT_EXIT_OK;
}
