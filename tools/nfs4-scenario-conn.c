/* SPDX-License-Identifier: MIT */
/*
 * nfs4-scenario's connections and COMPOUNDs (nfs4-scenario-int.h): one libtirpc TCP
 * client per scenario client with its own AUTH_SYS credentials (RFC 5531 section 9.2),
 * the building of a COMPOUND (RFC 7530 section 15.2, RFC 8881 section 18.46: SEQUENCE
 * first in a session), its call, the check of every operation's status against the
 * expected one, the per-operation counts, and the attribute encoding and decoding the
 * scenario needs (RFC 7530 section 5: a bitmap4 and the values in bit order).
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs4-scenario-int.h"

/* ------------------------------------------------------------------ connections */

static void resolve(const char *host, struct sockaddr_in *sin)
{
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
    int rc = getaddrinfo(host, NULL, &hints, &ai);

    if (rc != 0)
        n4_die("cannot resolve '%s': %s", host, gai_strerror(rc));
    sin->sin_addr = ((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
    freeaddrinfo(ai);
}

void n4_connect(struct client *cl, const struct config *cfg)
{
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port) };
    struct timeval total = { 30, 0 };
    gid_t gids[2] = { cl->gid, 3100 };
    int sock = RPC_ANYSOCK;

    resolve(cfg->server, &sin);
    cl->clnt = clnttcp_create(&sin, NFS4_PROGRAM, NFS_V4, &sock, 0, 0);
    if (!cl->clnt)
        n4_die("client %d: cannot connect to NFSv4 on %s port %d%s", cl->index, cfg->server,
               cfg->port, clnt_spcreateerror(""));
    auth_destroy(cl->clnt->cl_auth);
    cl->clnt->cl_auth = authunix_create(cl->host, cl->uid, cl->gid, 2, gids);
    if (!cl->clnt->cl_auth)
        n4_die("client %d: cannot create AUTH_SYS credentials", cl->index);
    clnt_control(cl->clnt, CLSET_TIMEOUT, (char *)&total);
}

void n4_disconnect(struct client *cl)
{
    if (!cl->clnt)
        return;
    auth_destroy(cl->clnt->cl_auth);
    clnt_destroy(cl->clnt);
    cl->clnt = NULL;
}

/* ------------------------------------------------------------------ COMPOUNDs */

void n4_c4_init_bare(struct c4 *c, struct client *cl, const char *what)
{
    memset(c, 0, sizeof(*c));
    c->cl = cl;
    c->what = what;
    c->mem = g_ptr_array_new_with_free_func(g_free);
    c->args.minorversion = (uint32_t)cl->minor;
    c->args.argarray.argarray_val = c->ops;
}

void n4_c4_init(struct c4 *c, struct client *cl, const char *what)
{
    n4_c4_init_bare(c, cl, what);
    if (cl->minor == 0)
        return;
    SEQUENCE4args *a = &n4_c4_add(c, OP_SEQUENCE)->nfs_argop4_u.opsequence;
    memcpy(a->sa_sessionid, cl->session, sizeof(a->sa_sessionid));
    a->sa_sequenceid = cl->slot_seq;
    a->sa_slotid = 0;
    a->sa_highest_slotid = 0;
    a->sa_cachethis = FALSE;
}

nfs_argop4 *n4_c4_add(struct c4 *c, nfs_opnum4 op)
{
    u_int n = c->args.argarray.argarray_len;

    g_assert(n < N4_MAXOPS);
    memset(&c->ops[n], 0, sizeof(c->ops[n]));
    c->ops[n].argop = op;
    c->want[n] = NFS4_OK;
    c->args.argarray.argarray_len = n + 1;
    return &c->ops[n];
}

void n4_c4_expect(struct c4 *c, nfsstat4 want)
{
    g_assert(c->args.argarray.argarray_len > 0);
    c->want[c->args.argarray.argarray_len - 1] = want;
}

void *n4_c4_keep(struct c4 *c, const void *p, size_t n)
{
    void *q = p ? g_memdup2(p, n ? n : 1) : g_malloc0(n ? n : 1);

    g_ptr_array_add(c->mem, q);
    return q;
}

const char *n4_status_name(nfsstat4 st, char *buf, size_t size)
{
    const char *name = tbbt_proto_tok_name(tbbt_proto_nfsstat4, (int)st);

    if (name)
        return name;
    g_snprintf(buf, size, "status %d", (int)st);
    return buf;
}

static const char *op_name(nfs_opnum4 op, char *buf, size_t size)
{
    const char *name = tbbt_proto_nfs4_op_name((uint32_t)op);

    if (name)
        return name;
    g_snprintf(buf, size, "op %d", (int)op);
    return buf;
}

static nfsstat4 op_status(const nfs_resop4 *r)
{
    return *(const nfsstat4 *)&r->nfs_resop4_u;
}

/* The number of results the server must send: up to the first operation expected to fail. */
static u_int want_results(const struct c4 *c)
{
    u_int n = c->args.argarray.argarray_len;

    for (u_int i = 0; i < n; i++)
        if (c->want[i] != NFS4_OK)
            return i + 1;
    return n;
}

static void check_results(struct c4 *c)
{
    u_int n = want_results(c), got = c->res.resarray.resarray_len;
    char b1[32], b2[32], b3[32];

    for (u_int i = 0; i < got && i < n; i++) {
        const nfs_resop4 *r = &c->res.resarray.resarray_val[i];
        if (r->resop != c->ops[i].argop)
            n4_die("client %d: %s: operation %u: sent %s, reply is for %s", c->cl->index,
                   c->what, i + 1, op_name(c->ops[i].argop, b1, sizeof(b1)),
                   op_name(r->resop, b2, sizeof(b2)));
        if (op_status(r) != c->want[i])
            n4_die("client %d: %s: %s (operation %u): expected %s, got %s", c->cl->index,
                   c->what, op_name(r->resop, b1, sizeof(b1)), i + 1,
                   n4_status_name(c->want[i], b2, sizeof(b2)),
                   n4_status_name(op_status(r), b3, sizeof(b3)));
    }
    if (got != n)
        n4_die("client %d: %s: %u results, expected %u (status %s)", c->cl->index, c->what,
               got, n, n4_status_name(c->res.status, b1, sizeof(b1)));
}

void n4_c4_run(struct c4 *c)
{
    struct client *cl = c->cl;
    struct timeval tv = { 30, 0 };
    enum clnt_stat st;

    for (u_int i = 0; i < c->args.argarray.argarray_len; i++)
        cl->ops[c->ops[i].argop < N4_NOPS ? c->ops[i].argop : 0]++;
    cl->compounds++;
    memset(&c->res, 0, sizeof(c->res));
    st = clnt_call(cl->clnt, NFSPROC4_COMPOUND, (xdrproc_t)xdr_COMPOUND4args,
                   (caddr_t)&c->args, (xdrproc_t)xdr_COMPOUND4res, (caddr_t)&c->res, tv);
    if (st != RPC_SUCCESS)
        n4_die("client %d: %s: %s", cl->index, c->what, clnt_sperror(cl->clnt, "COMPOUND"));
    c->have_res = true;
    check_results(c);
    if (c->ops[0].argop == OP_SEQUENCE) {
        const SEQUENCE4resok *ok =
            &c->res.resarray.resarray_val[0].nfs_resop4_u.opsequence.SEQUENCE4res_u.sr_resok4;
        if (ok->sr_sequenceid != cl->slot_seq || ok->sr_slotid != 0)
            n4_die("client %d: %s: SEQUENCE answered slot %u sequence %u, sent 0 and %u",
                   cl->index, c->what, ok->sr_slotid, ok->sr_sequenceid, cl->slot_seq);
        if (ok->sr_status_flags != cl->seq_flags && cl->verbose)
            fprintf(stderr, PROG ": client %d: %s: SEQUENCE status flags now 0x%x\n",
                    cl->index, c->what, ok->sr_status_flags);
        cl->seq_flags = ok->sr_status_flags;
        cl->slot_seq++;
    }
}

nfs_resop4 *n4_c4_res(struct c4 *c, u_int i)
{
    g_assert(c->have_res && i < c->res.resarray.resarray_len);
    return &c->res.resarray.resarray_val[i];
}

void n4_c4_done(struct c4 *c)
{
    if (c->have_res)
        xdr_free((xdrproc_t)xdr_COMPOUND4res, (char *)&c->res);
    c->have_res = false;
    g_ptr_array_free(c->mem, TRUE);
    c->mem = NULL;
}

void n4_pattern(char *buf, uint64_t off, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        buf[i] = (char)('a' + (off + i) % 26);
}

/* ------------------------------------------------------------------ attributes */

#define BIT(n) (1u << ((n) % 32))

static void put32(GByteArray *b, uint32_t v)
{
    uint8_t x[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
    g_byte_array_append(b, x, 4);
}

void n4_attr_encode(struct c4 *c, const struct n4attr *a, fattr4 *out)
{
    GByteArray *b = g_byte_array_new();
    uint32_t *mask = n4_c4_keep(c, a->mask, sizeof(a->mask));

    g_assert((a->mask[0] & ~BIT(FATTR4_SIZE)) == 0 && (a->mask[1] & ~BIT(FATTR4_MODE)) == 0);
    if (a->mask[0] & BIT(FATTR4_SIZE)) {
        put32(b, (uint32_t)(a->size >> 32));
        put32(b, (uint32_t)a->size);
    }
    if (a->mask[1] & BIT(FATTR4_MODE))
        put32(b, a->mode);
    out->attrmask.bitmap4_len = a->mask[1] ? 2 : 1;
    out->attrmask.bitmap4_val = mask;
    out->attr_vals.attrlist4_len = b->len;
    out->attr_vals.attrlist4_val = n4_c4_keep(c, b->data, b->len);
    g_byte_array_free(b, TRUE);
}

void n4_attr_request(struct c4 *c, bitmap4 *out)
{
    uint32_t m[2] = { BIT(FATTR4_TYPE) | BIT(FATTR4_CHANGE) | BIT(FATTR4_SIZE) |
                          BIT(FATTR4_FILEID),
                      BIT(FATTR4_MODE) | BIT(FATTR4_OWNER) | BIT(FATTR4_OWNER_GROUP) };

    out->bitmap4_len = 2;
    out->bitmap4_val = n4_c4_keep(c, m, sizeof(m));
}

static bool get_string(XDR *x, char *buf, size_t size)
{
    char *s = NULL;
    bool ok = xdr_string(x, &s, NFS4_MAXUTF8);

    if (ok)
        g_strlcpy(buf, s, size);
    free(s);
    return ok;
}

/* Decodes the value of attribute BITNO; false if malformed or not one we know. */
static bool get_value(XDR *x, unsigned bitno, struct n4attr *a)
{
    switch (bitno) {
    case FATTR4_TYPE: return xdr_uint32_t(x, &a->type);
    case FATTR4_CHANGE: return xdr_uint64_t(x, &a->change);
    case FATTR4_SIZE: return xdr_uint64_t(x, &a->size);
    case FATTR4_FILEID: return xdr_uint64_t(x, &a->fileid);
    case FATTR4_MODE: return xdr_uint32_t(x, &a->mode);
    case FATTR4_OWNER: return get_string(x, a->owner, sizeof(a->owner));
    case FATTR4_OWNER_GROUP: return get_string(x, a->group, sizeof(a->group));
    default: return false;
    }
}

bool n4_attr_decode(const fattr4 *f, struct n4attr *a)
{
    XDR x;
    bool ok = true;

    memset(a, 0, sizeof(*a));
    if (f->attrmask.bitmap4_len > 2)
        for (u_int w = 2; w < f->attrmask.bitmap4_len; w++)
            if (f->attrmask.bitmap4_val[w])
                return false;
    xdrmem_create(&x, f->attr_vals.attrlist4_val, f->attr_vals.attrlist4_len, XDR_DECODE);
    for (unsigned bitno = 0; ok && bitno < 64; bitno++) {
        u_int w = bitno / 32;
        if (w >= f->attrmask.bitmap4_len || !(f->attrmask.bitmap4_val[w] & BIT(bitno)))
            continue;
        a->mask[w] |= BIT(bitno);
        ok = get_value(&x, bitno, a);
    }
    ok = ok && xdr_getpos(&x) == f->attr_vals.attrlist4_len;
    xdr_destroy(&x);
    return ok;
}
