/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for tbbt-convert's NFSv4 decoding (src/extract/decode-nfs4.c,
 * nfs4count.c): the bytes after an RPC header as one COMPOUND or CB_COMPOUND call
 * or reply.  Input layout:
 *   byte 0     bits 0-1: the message kind (call, reply, CB call, CB reply);
 *              bit 2: truncated by the snap length
 *   the rest   the message
 * The walk's result must be one of its three codes and its operations within the
 * bounds; a COMPOUND call or reply is also walked into a trace record (as the call,
 * then as its reply), which the trace writer's bounds must accept; then the same bytes
 * go through the counter as a call and as the reply to it (a COMPOUND counted from its
 * decoding, as the converter does) and the summary is written, so its tables are
 * exercised too.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <glib.h>

#include "extract/decode-nfs4.h"
#include "extract/nfs4count.h"
#include "trace/trace.h"
#include "util/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t cli[16] = {127, 0, 0, 1}, srv[16] = {127, 0, 0, 1};
    static struct tbbt__nfs4_compound m;
    struct tbbt__nfs4_call call = {.prog = 100003, .vers = 4, .proc = 1, .flavor = 1,
                                   .af = 4, .src = cli, .dst = srv, .sport = 800,
                                   .dport = 2049};
    struct tbbt__nfs4_count *n;
    struct tbbt_json j;
    enum tbbt__nfs4_msg kind;
    bool trunc;
    int rc;
    uint8_t side;

    if (size < 1)
        return 0;
    kind = (enum tbbt__nfs4_msg)(data[0] & 3);
    trunc = (data[0] & 4) != 0;
    data++;
    size--;
    rc = tbbt__nfs4_decode(kind, data, size, trunc, &m);
    if ((rc != 0 && rc != TBBT_E_TRUNC && rc != TBBT_E_BADREC) || (rc == TBBT_E_TRUNC && !trunc) ||
        m.nops > TBBT__NFS4_MAXOPS || m.nops > m.numops)
        abort();

    if (kind <= TBBT__NFS4_REPLY) {
        static struct tbbt_fhtab *fht;
        struct tbbt_trace_rec rec;

        if (!fht)
            fht = tbbt_fhtab_new();
        tbbt_trace_rec_init(&rec);
        tbbt__nfs4_decode_rec(TBBT__NFS4_CALL, data, size, trunc, &rec, fht, &m);
        tbbt__nfs4_decode_rec(TBBT__NFS4_REPLY, data, size, trunc, &rec, fht, &m);
        if (rec.n_ops > TBBT_OP4_MAX)
            abort();
        for (uint32_t i = 0; i < rec.n_ops; i++)
            if (rec.ops[i].name.len > TBBT_NAME_MAX || rec.ops[i].owner.len > TBBT_OP4_OWNER_MAX ||
                (TBBT_O4_HAS(&rec.ops[i], FH) && rec.ops[i].fh >= tbbt_fhtab_count(fht)))
                abort();
        tbbt_trace_rec_fini(&rec);
    }
    n = tbbt__nfs4_count_new();
    if (kind >= TBBT__NFS4_CB_CALL) {
        /* a callback: from the server's port once it has received an NFSv4 call */
        tbbt__nfs4_count_call(n, &call, data, 0, true);
        call = (struct tbbt__nfs4_call){.prog = 0x40000000, .vers = 1, .proc = 1, .flavor = 1,
                                        .af = 4, .src = srv, .dst = cli, .sport = 2049,
                                        .dport = 800};
    }
    side = tbbt__nfs4_count_call(n, &call, data, size, trunc);
    if (!side)
        abort();
    if (side == TBBT__NFS4_SIDE_RECORD) {    /* a COMPOUND: counted from its decoding */
        rc = tbbt__nfs4_decode(TBBT__NFS4_CALL, data, size, trunc, &m);
        tbbt__nfs4_count_decoded_call(n, &m, rc);
        rc = tbbt__nfs4_decode(TBBT__NFS4_REPLY, data, size, trunc, &m);
        tbbt__nfs4_count_decoded_reply(n, m.minor, &m, rc);
    } else {
        tbbt__nfs4_count_reply(n, side, data, size, trunc);
    }
    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    tbbt__nfs4_count_json(n, &j);
    tbbt_json_end_object(&j);
    g_free(tbbt_json_finish(&j));
    tbbt__nfs4_count_free(n);
    return 0;
}
