/* SPDX-License-Identifier: MIT */
/*
 * Private to src/onc: the connection object of rpcconn.h, shared by the transport
 * (rpcconn.c: lifecycle, send side, receive side) and its synchronous helpers and retry
 * policy (rpcsync.c).  The ownership of a call and the threading rules are in rpcconn.c.
 */
#ifndef TBBT_ONC_RPCCONN_INT_H
#define TBBT_ONC_RPCCONN_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "onc/onc.h"
#include "onc/rpcconn.h"

#define TBBT__RPCCONN_MAGIC 0x52504343u   /* "RPCC" */

/* One outstanding call; the receive side frees it. */
struct tbbt__onc_req {
    struct tbbt_onc_xident x;   /* xid; next: pending stack, XID table chain or failq link */
    uint64_t queued_ns;
    xdrproc_t xres;
    void *res;
    size_t res_size;
    void *arg;
};

/* Counters written by one side only: plain load + store, readable from any thread. */
struct tbbt__onc_counters {
    _Atomic uint64_t calls, send_syscalls, bytes_sent, replies, recv_syscalls, bytes_recv,
        unmatched, garbage, lost, timedout, retransmits, reconnects;
};
#define TBBT__ONC_STAT_ADD(c, f, v)                                                               \
    atomic_store_explicit(&(c)->st.f,                                                             \
                          atomic_load_explicit(&(c)->st.f, memory_order_relaxed) + (v),           \
                          memory_order_relaxed)

struct tbbt_rpcconn {
    uint32_t magic;
    bool udp;
    size_t max_record;
    int connect_ms, sock_buf;
    bool reserved_port;
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int fd;                          /* changed only by exclusive calls */
    uint8_t cred[MAX_AUTH_BYTES];    /* encoded credential body */
    uint32_t cred_len;
    int cred_flavor;
    char machine[MAX_MACHINE_NAME + 1];  /* AUTH_SYS machine name */
    bool has_retry;                  /* retry: set by exclusive calls only */
    struct tbbt_rpcconn_retry retry;

    /* Shared between the sides. */
    _Atomic(struct tbbt__onc_req *) pending;   /* send -> receive hand-off, or DEAD */
    atomic_uint outstanding;
    atomic_bool down;
    atomic_int tx_err;               /* send side's error, picked up by the receive side */
    pthread_mutex_t err_mu;          /* guards err, errstr, err_set */
    int err;
    bool err_set;
    char errstr[256];
    struct tbbt__onc_counters st;

    /* Send side. */
    uint8_t *sbuf;
    size_t scap, slen, soff;
    uint32_t *dglen;                 /* UDP datagram lengths, [dgi, dgn) unsent */
    size_t dgcap, dgn, dgi;
    uint32_t next_xid;
    uint8_t ocred[MAX_AUTH_BYTES];   /* TBBT_RPCCONN_CALL_CRED: last per-call credential */
    uint32_t ocred_len, ocred_uid, ocred_gid;

    /* Receive side. */
    bool rx_down;
    int lost_err;
    struct tbbt_onc_xidtab tab;      /* outstanding calls by XID */
    struct tbbt__onc_req *failq;
    uint64_t recv_ns;                /* time of the last read that returned data */
    uint8_t *rbuf;
    size_t rcap, rhead, rtail;
    struct tbbt_onc_recasm rec;      /* TCP: records out of the byte stream */
    struct mmsghdr *rmsg;            /* UDP: one slot of rbuf per datagram */
    struct iovec *riov;
    size_t nslots, slot_i, slot_n;
};

/* Records the first failure's code and reason; later ones are ignored.  Any side. */
void tbbt__rpcconn_set_error(struct tbbt_rpcconn *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
