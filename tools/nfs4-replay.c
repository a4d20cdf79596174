/* SPDX-License-Identifier: MIT */
/*
 * nfs4-replay: a sequential NFSv4 replayer, the proof of the replay core of
 * src/player/nfs4build.h.  Reads a trace (format 1.2), and replays every NFSv4 COMPOUND
 * record in trace order, one at a time, each on the TCP connection of its traced client
 * endpoint (one libtirpc CLIENT per endpoint, AUTH_SYS credentials of the record),
 * waiting for each reply; other records (NFSv3, MOUNT, NFSv4 NULL) are skipped and
 * counted.  A reply of NFS4ERR_DELAY or NFS4ERR_GRACE is retried with a bounded backoff
 * during which every client's lease is renewed (RENEW, or a lone SEQUENCE), a dead
 * session is created again.  Prints a JSON summary on stdout: records, COMPOUNDs
 * sent, unsendable records by reason, replay failures by "OP:TRACED->LIVE" status pair,
 * operations per second.  Exit 0 only with no failure and nothing unsendable.
 * RFC 7530, RFC 8881, RFC 7862; RFC 5531 9.2 (AUTH_SYS).  A test helper, built in the
 * build tree and never installed; docs/nfsv4.md "Replay core".
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib.h>
#include <rpc/rpc.h>

#include "player/nfs4build.h"
#include "proto/proto.h"
#include "tool-die.h"
#include "trace/trace.h"
#include "util/exit-codes.h"
#include "util/util.h"

#define PROG "nfs4-replay"
#define RETRIES_MAX 128               /* resends of one record after DELAY/GRACE: about two
                                         minutes of pauses, past a default 90 s grace */
#define MACHINE "tbbt-nfs4-replay"    /* AUTH_SYS machine name without a traced credential */

struct config {
    char *server;
    int port;
    bool verbose;
    char *client_tag;                 /* NULL: one of the run's own */
    const char *trace;
};

/* One traced client endpoint's live connection. */
struct conn {
    CLIENT *clnt;
    int64_t cred;                     /* credential reference of cl_auth; -1: none yet */
};

struct stats {
    uint64_t records, v4, compounds, sends, ops, retries, resessions, rpc_errors;
    uint64_t unsendable, failures, renewals, renew_errors;
    uint64_t delegations, delegations_returned;   /* granted anyway, and given back */
    GHashTable *skipped;              /* program name -> count */
    GHashTable *why;                  /* unsendable reason -> count */
    GHashTable *fail;                 /* "OP:TRACED->LIVE" -> count */
};

struct replay {
    const struct config *cfg;
    struct sockaddr_in sin;
    struct tbbt_trace_reader *reader;
    struct tbbt_nfs4_state *st;
    GHashTable *conns;                /* endpoint ref + 1 -> struct conn */
    GHashTable *client_ep;            /* traced clientid (uint64_t *) -> endpoint ref + 1 */
    struct stats s;
};

static void count(GHashTable *t, const char *key, uint64_t n)
{
    gpointer old = g_hash_table_lookup(t, key);

    g_hash_table_replace(t, g_strdup(key), GSIZE_TO_POINTER(GPOINTER_TO_SIZE(old) + n));
}

/* ------------------------------------------------------------------ connections */

static int resolve(const char *host, int port, struct sockaddr_in *sin)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;

    if (getaddrinfo(host, NULL, &hints, &ai) != 0)
        return -1;
    memset(sin, 0, sizeof(*sin));
    sin->sin_family = AF_INET;
    sin->sin_port = htons((uint16_t)port);
    sin->sin_addr = ((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
    freeaddrinfo(ai);
    return 0;
}

static void conn_close(struct conn *c)
{
    if (!c->clnt)
        return;
    if (c->clnt->cl_auth)
        auth_destroy(c->clnt->cl_auth);
    clnt_destroy(c->clnt);
    c->clnt = NULL;
}

static void conn_free(gpointer p)
{
    conn_close(p);
    g_free(p);
}

/* AUTH_SYS of the record: its credential when the trace has one, else uid and gid. */
static AUTH *record_auth(struct replay *r, const struct tbbt_trace_rec *rec)
{
    const struct tbbt_cred *c = NULL;
    gid_t gids[TBBT_CRED_GIDS_MAX];

    if (TBBT_HAS(rec, TBBT_F_CRED))
        c = tbbt_credtab_get(tbbt_trace_reader_credtab(r->reader), rec->cred);
    if (!c)
        return authunix_create((char *)MACHINE, (uid_t)rec->uid, (gid_t)rec->gid, 0, NULL);
    for (uint32_t i = 0; i < c->ngids; i++)
        gids[i] = c->gids[i];
    return authunix_create((char *)c->machine, (uid_t)c->uid, (gid_t)c->gid, (int)c->ngids,
                           gids);
}

static struct conn *conn_for(struct replay *r, const struct tbbt_trace_rec *rec)
{
    gpointer key = GUINT_TO_POINTER(rec->endpoint + 1u);
    struct conn *c = g_hash_table_lookup(r->conns, key);
    int64_t cred = TBBT_HAS(rec, TBBT_F_CRED) ? (int64_t)rec->cred : -2 - (int64_t)rec->uid;
    struct timeval total = { 30, 0 };
    int sock = RPC_ANYSOCK;

    if (!c) {
        c = g_new0(struct conn, 1);
        c->cred = -1;
        g_hash_table_insert(r->conns, key, c);
    }
    if (!c->clnt) {
        struct sockaddr_in sin = r->sin;
        c->clnt = clnttcp_create(&sin, NFS4_PROGRAM, NFS_V4, &sock, 0, 0);
        if (!c->clnt)
            return NULL;
        clnt_control(c->clnt, CLSET_TIMEOUT, (char *)&total);
        c->cred = -1;
    }
    if (c->cred != cred) {
        AUTH *a = record_auth(r, rec);
        if (!a)
            return NULL;
        if (c->clnt->cl_auth)
            auth_destroy(c->clnt->cl_auth);
        c->clnt->cl_auth = a;
        c->cred = cred;
    }
    return c;
}

/* ------------------------------------------------------------------ one record */

static const char *status_name(int32_t st, char *buf, size_t n)
{
    const char *s = st == TBBT_NFS4_NOSTATUS ? "none"
                                             : tbbt_proto_tok_name(tbbt_proto_nfsstat4, st);

    if (s && g_str_has_prefix(s, "NFS4ERR_"))
        return s + 8;
    if (s && g_str_has_prefix(s, "NFS4_"))
        return s + 5;
    if (s)
        return s;
    snprintf(buf, n, "%d", (int)st);
    return buf;
}

static void note_failures(struct replay *r, const struct tbbt_trace_rec *rec,
                          const struct tbbt_nfs4_outcome *out)
{
    char key[128], b1[16], b2[16];

    for (uint32_t i = 0; i < out->n_mismatch && i < TBBT_NFS4_MISMATCH_MAX; i++) {
        const struct tbbt_nfs4_mismatch *m = &out->mismatch[i];
        const char *op = tbbt_proto_nfs4_op_name(m->op);
        snprintf(key, sizeof(key), "%s:%s->%s", op ? op : "?",
                 status_name(m->traced, b1, sizeof(b1)), status_name(m->live, b2, sizeof(b2)));
        count(r->s.fail, key, 1);
        if (r->cfg->verbose)
            fprintf(stderr, PROG ": xid 0x%08x ep %u: failure %s\n", rec->xid, rec->endpoint,
                    key);
    }
    if (out->confirm_differs) {
        count(r->s.fail, "OPEN:confirm-differs", out->confirm_differs);
        r->s.failures += out->confirm_differs;
    }
    if (out->n_mismatch > TBBT_NFS4_MISMATCH_MAX)
        count(r->s.fail, "more:in-one-compound", out->n_mismatch - TBBT_NFS4_MISMATCH_MAX);
    r->s.failures += out->n_mismatch;
}

/* Sends call on c: 0 with *res decoded (free with tbbt_nfs4_xdr_res), or -1. */
static int send_call(struct replay *r, struct conn *c, struct tbbt_nfs4_call *call,
                     COMPOUND4res *res)
{
    struct timeval tv = { 30, 0 };
    enum clnt_stat cs;

    memset(res, 0, sizeof(*res));
    r->s.sends++;
    cs = clnt_call(c->clnt, NFSPROC4_COMPOUND, (xdrproc_t)xdr_COMPOUND4args,
                   (caddr_t)&call->args, (xdrproc_t)tbbt_nfs4_xdr_res, (caddr_t)res, tv);
    if (cs == RPC_SUCCESS)
        return 0;
    char key[96];
    snprintf(key, sizeof(key), "rpc:%s", clnt_sperrno(cs));
    count(r->s.fail, key, 1);
    r->s.failures++;
    r->s.rpc_errors++;
    xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)res);
    conn_close(c);
    return -1;
}

/* CREATE_SESSION again for the session of call. */
static void resession(struct replay *r, struct conn *c, struct tbbt_nfs4_session *s)
{
    struct tbbt_nfs4_call call;
    COMPOUND4res res;

    r->s.resessions++;
    if (tbbt_nfs4_build_resession(r->st, s, &call) == 0 && send_call(r, c, &call, &res) == 0) {
        if (tbbt_nfs4_absorb_resession(r->st, s, &res) < 0 && r->cfg->verbose)
            fprintf(stderr, PROG ": CREATE_SESSION again failed\n");
        xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&res);
    }
    tbbt_nfs4_call_fini(&call);
}

static void unsendable(struct replay *r, const struct tbbt_trace_rec *rec,
                       const struct tbbt_nfs4_call *call)
{
    r->s.unsendable++;
    count(r->s.why, call->why ? call->why : "?", 1);
    if (r->cfg->verbose)
        fprintf(stderr, PROG ": xid 0x%08x ep %u: unsendable: %s: %s\n", rec->xid,
                rec->endpoint, call->why ? call->why : "?", call->detail);
}

/* The endpoint of every traced clientid the record names (for lease renewals). */
static void note_clients(struct replay *r, const struct tbbt_trace_rec *rec)
{
    for (uint32_t i = 0; i < rec->n_ops; i++)
        if (TBBT_O4_HAS(&rec->ops[i], CLIENTID))
            g_hash_table_replace(r->client_ep, g_memdup2(&rec->ops[i].clientid, 8),
                                 GUINT_TO_POINTER(rec->endpoint + 1u));
}

/* Renews the lease of client c on its connection (RENEW, or a lone SEQUENCE). */
static void renew_one(struct tbbt_nfs4_client *c, void *arg)
{
    struct replay *r = arg;
    gpointer ep = g_hash_table_lookup(r->client_ep, &c->traced);
    struct conn *cn = ep ? g_hash_table_lookup(r->conns, ep) : NULL;
    struct tbbt_nfs4_call call;
    COMPOUND4res res;
    struct timeval tv = { 30, 0 };

    if (!cn || !cn->clnt)
        return;
    if (tbbt_nfs4_build_renew(r->st, c, &call) < 0) {
        tbbt_nfs4_call_fini(&call);
        return;
    }
    memset(&res, 0, sizeof(res));
    r->s.renewals++;
    if (clnt_call(cn->clnt, NFSPROC4_COMPOUND, (xdrproc_t)xdr_COMPOUND4args,
                  (caddr_t)&call.args, (xdrproc_t)tbbt_nfs4_xdr_res, (caddr_t)&res,
                  tv) != RPC_SUCCESS) {
        r->s.renew_errors++;
        tbbt_nfs4_call_abort(&call);
    } else if (tbbt_nfs4_absorb_renew(&call, &res) < 0) {
        r->s.renew_errors++;
    }
    xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&res);
    tbbt_nfs4_call_fini(&call);
}

/* Waits usecs, renewing every client's lease each half second (the lease may be short). */
static void pause_renewing(struct replay *r, gulong usecs)
{
    while (usecs > 0) {
        gulong step = MIN(usecs, 500000);
        g_usleep(step);
        usecs -= step;
        tbbt_nfs4_client_foreach(r->st, renew_one, r);
    }
}

/* A delegation granted although none was asked for: DELEGRETURN at once. */
static void return_delegation(struct replay *r, struct conn *c, const struct tbbt_nfs4_call *orig,
                              const struct tbbt_nfs4_deleg *d)
{
    struct tbbt_nfs4_call call;
    COMPOUND4res res;

    r->s.delegations++;
    if (tbbt_nfs4_build_delegreturn(r->st, orig, d, &call) == 0 &&
        send_call(r, c, &call, &res) == 0) {
        r->s.delegations_returned += tbbt_nfs4_absorb_renew(&call, &res) == 0;
        xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&res);
    }
    tbbt_nfs4_call_fini(&call);
}

/* One attempt: 1 to send again, 0 when done. */
static int attempt(struct replay *r, const struct tbbt_trace_rec *rec, struct conn *c, int n)
{
    struct tbbt_nfs4_call call;
    struct tbbt_nfs4_outcome out;
    COMPOUND4res res;
    int again = 0;

    if (tbbt_nfs4_build(r->st, rec, &call) < 0) {
        unsendable(r, rec, &call);
        tbbt_nfs4_call_fini(&call);
        return 0;
    }
    if (send_call(r, c, &call, &res) < 0) {
        tbbt_nfs4_call_fini(&call);
        return 0;
    }
    tbbt_nfs4_absorb(r->st, rec, &call, &res, &out);
    xdr_free((xdrproc_t)tbbt_nfs4_xdr_res, (char *)&res);
    note_clients(r, rec);
    for (uint32_t i = 0; i < out.n_deleg && i < TBBT_NFS4_DELEG_MAX; i++)
        return_delegation(r, c, &call, &out.deleg[i]);
    if (out.verdict == TBBT_NFS4_RETRY && n < RETRIES_MAX) {
        r->s.retries++;
        pause_renewing(r, n < 6 ? 20000ul << n : 1000000ul);
        again = 1;
    } else if (out.verdict == TBBT_NFS4_RESESSION && n < RETRIES_MAX && call.sess) {
        resession(r, c, call.sess);
        again = 1;
    } else {
        r->s.compounds++;
        r->s.ops += rec->n_ops;
        note_failures(r, rec, &out);
    }
    tbbt_nfs4_call_fini(&call);
    return again;
}

static void replay_rec(struct replay *r, const struct tbbt_trace_rec *rec)
{
    struct conn *c;

    r->s.records++;
    if (rec->prog != TBBT_PROG_NFS4 || rec->proc != 1) {
        const char *p = tbbt_prog_name(rec->prog);
        count(r->s.skipped, rec->prog == TBBT_PROG_NFS4 ? "v4.null" : p ? p : "other", 1);
        return;
    }
    r->s.v4++;
    c = conn_for(r, rec);
    if (!c) {
        r->s.failures++;
        r->s.rpc_errors++;
        count(r->s.fail, "rpc:cannot connect", 1);
        return;
    }
    for (int n = 0; attempt(r, rec, c, n); n++)
        ;
}

/* ------------------------------------------------------------------ summary */

static void json_table(GString *j, const char *name, GHashTable *t, bool last)
{
    GList *keys = g_list_sort(g_hash_table_get_keys(t), (GCompareFunc)strcmp);
    bool first = true;

    g_string_append_printf(j, "  \"%s\": {", name);
    for (GList *k = keys; k; k = k->next) {
        char *e = g_strescape(k->data, NULL);
        g_string_append_printf(j, "%s\"%s\": %zu", first ? "" : ", ", e,
                               GPOINTER_TO_SIZE(g_hash_table_lookup(t, k->data)));
        g_free(e);
        first = false;
    }
    g_string_append_printf(j, "}%s\n", last ? "" : ",");
    g_list_free(keys);
}

static void summary(const struct replay *r, double secs)
{
    GString *j = g_string_new("{\n");
    char *tr = g_strescape(r->cfg->trace, NULL);
    const struct stats *s = &r->s;

    g_string_append_printf(j, "  \"trace\": \"%s\",\n  \"server\": \"%s:%d\",\n", tr,
                           r->cfg->server, r->cfg->port);
    g_string_append_printf(j, "  \"records\": %" G_GUINT64_FORMAT ",\n  \"v4_compounds\": %"
                           G_GUINT64_FORMAT ",\n", s->records, s->v4);
    json_table(j, "skipped", s->skipped, false);
    g_string_append_printf(j, "  \"compounds_sent\": %" G_GUINT64_FORMAT ",\n  \"sends\": %"
                           G_GUINT64_FORMAT ",\n  \"operations\": %" G_GUINT64_FORMAT ",\n",
                           s->compounds, s->sends, s->ops);
    g_string_append_printf(j, "  \"retries\": %" G_GUINT64_FORMAT ",\n  \"resessions\": %"
                           G_GUINT64_FORMAT ",\n  \"rpc_errors\": %" G_GUINT64_FORMAT ",\n",
                           s->retries, s->resessions, s->rpc_errors);
    g_string_append_printf(j, "  \"renewals\": %" G_GUINT64_FORMAT ",\n  \"renew_errors\": %"
                           G_GUINT64_FORMAT ",\n", s->renewals, s->renew_errors);
    g_string_append_printf(j, "  \"delegations\": %" G_GUINT64_FORMAT ",\n", s->delegations);
    g_string_append_printf(j, "  \"delegations_returned\": %" G_GUINT64_FORMAT ",\n",
                           s->delegations_returned);
    g_string_append_printf(j, "  \"unsendable\": %" G_GUINT64_FORMAT ",\n", s->unsendable);
    json_table(j, "unsendable_by_reason", s->why, false);
    g_string_append_printf(j, "  \"failures\": %" G_GUINT64_FORMAT ",\n", s->failures);
    json_table(j, "failures_by_op", s->fail, false);
    g_string_append_printf(j, "  \"seconds\": %.6f,\n  \"ops_per_second\": %.1f,\n"
                           "  \"compounds_per_second\": %.1f\n}\n", secs,
                           secs > 0 ? (double)s->ops / secs : 0.0,
                           secs > 0 ? (double)s->compounds / secs : 0.0);
    fputs(j->str, stdout);
    g_string_free(j, TRUE);
    g_free(tr);
}

/* ------------------------------------------------------------------ main */

static void parse_args(int argc, char **argv, struct config *cfg)
{
    gboolean show_version = FALSE, verbose = FALSE;
    gint port = 2049;
    gchar *server = NULL, *tag = NULL;
    GOptionEntry entries[] = {
        { "client-tag", 0, 0, G_OPTION_ARG_STRING, &tag, "put TAG in front of every client "
          "id string (default: tbbt.PID.TIME:, new clients for a server that served an "
          "earlier replay; \"\": the traced ids)", "TAG" },
        { "server", 's', 0, G_OPTION_ARG_STRING, &server, "server address (default "
          "127.0.0.1)", "HOST" },
        { "port", 'p', 0, G_OPTION_ARG_INT, &port, "NFS port (default 2049)", "PORT" },
        { "verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "each failure and unsendable "
          "record on stderr", NULL },
        { "version", 'V', 0, G_OPTION_ARG_NONE, &show_version, "print the version and exit",
          NULL },
        { NULL, 0, 0, 0, NULL, NULL, NULL },
    };
    tool_options(PROG, "TRACE",
                 "Replays the NFSv4 COMPOUNDs of a tbbt trace in trace order, one at a time, with\n"
                 "live client ids, sessions, stateids, seqids and handles, against an NFSv4 server\n"
                 "whose export starts as the traced one did, and prints a JSON summary on stdout.\n"
                 "Exit status 0 only when every operation's status matched the trace and every\n"
                 "record could be sent.",
                 entries, &show_version, &argc, &argv);
    if (argc != 2 || port < 1 || port > 65535) {
        fprintf(stderr, PROG ": one TRACE operand and --port 1..65535 needed (try --help)\n");
        exit(TBBT_EXIT_USAGE);
    }
    cfg->server = server ? server : g_strdup("127.0.0.1");
    cfg->port = port;
    cfg->verbose = verbose;
    cfg->client_tag = tag;
    cfg->trace = argv[1];
}

static void replay_init(struct replay *r, const struct config *cfg)
{
    memset(r, 0, sizeof(*r));
    r->cfg = cfg;
    r->st = tbbt_nfs4_state_new();
    char *tag = cfg->client_tag ? g_strdup(cfg->client_tag)
                : g_strdup_printf("tbbt.%d.%" G_GINT64_MODIFIER "x:", (int)getpid(),
                                  g_get_real_time());
    tbbt_nfs4_client_tag_set(r->st, tag);
    g_free(tag);
    r->conns = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, conn_free);
    r->client_ep = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
    r->s.skipped = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->s.why = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    r->s.fail = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
}

static void replay_fini(struct replay *r)
{
    g_hash_table_destroy(r->conns);
    g_hash_table_destroy(r->client_ep);
    tbbt_nfs4_state_free(r->st);
    g_hash_table_destroy(r->s.skipped);
    g_hash_table_destroy(r->s.why);
    g_hash_table_destroy(r->s.fail);
    if (r->reader)
        tbbt_trace_reader_close(r->reader);
}

int main(int argc, char **argv)
{
    struct config cfg;
    struct replay r;
    struct tbbt_trace_rec rec;
    int err = 0, rc;
    gint64 t0;

    parse_args(argc, argv, &cfg);
    replay_init(&r, &cfg);
    if (resolve(cfg.server, cfg.port, &r.sin) < 0) {
        fprintf(stderr, PROG ": cannot resolve '%s'\n", cfg.server);
        return TBBT_EXIT_FAIL;
    }
    r.reader = tbbt_trace_reader_open(cfg.trace, &err);
    if (!r.reader) {
        fprintf(stderr, PROG ": cannot open trace '%s': %s\n", cfg.trace, tbbt_strerror(err));
        return TBBT_EXIT_FAIL;
    }
    tbbt_trace_rec_init(&rec);
    t0 = g_get_monotonic_time();
    while ((rc = tbbt_trace_reader_next(r.reader, &rec)) == 1)
        replay_rec(&r, &rec);
    summary(&r, (double)(g_get_monotonic_time() - t0) / 1e6);
    tbbt_trace_rec_fini(&rec);
    if (rc < 0)
        fprintf(stderr, PROG ": trace '%s': %s\n", cfg.trace, tbbt_strerror(rc));
    rc = rc < 0 || r.s.failures || r.s.unsendable ? TBBT_EXIT_FAIL : TBBT_EXIT_OK;
    replay_fini(&r);
    g_free(cfg.server);
    g_free(cfg.client_tag);
    return rc;
}
