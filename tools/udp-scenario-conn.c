/* SPDX-License-Identifier: MIT */
/*
 * udp-scenario's connections (udp-scenario-int.h): libtirpc UDP clients for MOUNT and
 * NFS (the port from the portmapper unless given; AUTH_SYS; no retransmission within a
 * call's 10 s), the check of each call's RPC outcome and counter, NFS status names and
 * checks for both versions, the file data pattern, and the way out (us_die()).
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "udp-scenario-int.h"

/* ------------------------------------------------------------------ connections */

/* Fills SIN's address with the first IPv4 address of HOST. */
static void resolve(const char *host, struct sockaddr_in *sin)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM }, *ai;
    int rc = getaddrinfo(host, NULL, &hints, &ai);

    if (rc != 0)
        us_die("cannot resolve '%s': %s", host, gai_strerror(rc));
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
            us_die("program %lu version %lu is not registered over UDP on %s%s",
                   (unsigned long)prog, (unsigned long)vers, cfg->server, clnt_spcreateerror(""));
    }
    sin.sin_port = htons((uint16_t)port);
    clnt = clntudp_create(&sin, prog, vers, (struct timeval){ 1, 0 }, &sock);
    if (!clnt)
        us_die("cannot reach program %lu version %lu on %s over UDP%s", (unsigned long)prog,
               (unsigned long)vers, cfg->server, clnt_spcreateerror(""));
    return clnt;
}

void us_conn_open(struct conn *c, const struct config *cfg, rpcprog_t prog, rpcvers_t vers,
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
        us_die("cannot create AUTH_SYS credentials");
    clnt_control(c->clnt, CLSET_TIMEOUT, (char *)&total);
    clnt_control(c->clnt, CLSET_RETRY_TIMEOUT, (char *)&retry);
}

void us_conn_close(struct conn *c)
{
    auth_destroy(c->clnt->cl_auth);
    clnt_destroy(c->clnt);
}

/* Dies unless the RPC itself succeeded; counts the call. */
void us_rpc_ok(struct conn *c, int proc, enum clnt_stat st, const char *what)
{
    if (st != RPC_SUCCESS)
        us_die("%s: %s", what, clnt_sperror(c->clnt, c->what));
    c->calls[proc]++;
}

/* Names a status of protocol PROG (TBBT_PROTO_*); BUF holds the number if unknown. */
const char *us_status_name(int prog, int st, char *buf, size_t size)
{
    const char *name = tbbt_proto_status_name(prog, st);

    if (name)
        return name;
    g_snprintf(buf, size, "status %d", st);
    return buf;
}

/* Checks an NFS status against the expected one (both versions). */
void us_want_status(bool v2, int got, int want, const char *what)
{
    int prog = v2 ? TBBT_PROTO_NFS2 : TBBT_PROTO_NFS3;
    char b1[32], b2[32];

    if (got != want)
        us_die("%s: expected %s, got %s", what, us_status_name(prog, want, b1, sizeof(b1)),
               us_status_name(prog, got, b2, sizeof(b2)));
}

void us_pattern(char *buf, uint64_t off, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (char)('a' + (off + i) % 26);
}
