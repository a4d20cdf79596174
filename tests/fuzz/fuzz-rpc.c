/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the RPC and NFS/MOUNT decoding layers of tbbt-convert:
 * one RPC message (as the capture layer delivers it) through tbbt__rpc_parse()
 * and, for calls, tbbt__decode_call(); replies are decoded as the results of
 * the procedure the first input byte names.  The second byte sets the
 * "truncated by snap length" flag.  A call's AUTH_SYS credential goes through
 * tbbt__rpc_authsys(), which must accept what tbbt__rpc_parse() handed over
 * and keep to its bounds.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "extract/decode.h"
#include "extract/rpc.h"
#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tbbt_fhtab *fh;
    struct tbbt_trace_rec rec;
    struct tbbt__rpc_hdr h;
    bool trunc;
    int prog;

    if (size < 2)
        return 0;
    if (!fh)
        fh = tbbt_fhtab_new();
    trunc = data[1] & 1;
    tbbt_trace_rec_init(&rec);
    if (tbbt__rpc_parse(data + 2, size - 2, trunc, &h) == 0) {
        if (h.dir == TBBT__RPC_CALL && h.sys) {
            struct tbbt_cred cred;
            if (!tbbt__rpc_authsys(h.sys, h.sys_len, &cred) || cred.uid != h.uid ||
                cred.gid != h.gid || cred.machine_len > TBBT_MACHINE_MAX ||
                cred.ngids > TBBT_CRED_GIDS_MAX)
                abort();
        }
        if (h.dir == TBBT__RPC_CALL) {
            prog = tbbt__decode_prog(h.prog, h.vers);
            if (prog != TBBT_PROG_NONE && h.proc < 256) {
                rec.prog = (uint8_t)prog;
                rec.proc = (uint8_t)h.proc;
                tbbt__decode_call(&rec, data + 2 + h.body_off, size - 2 - h.body_off, trunc, fh);
            }
        } else {
            rec.prog = (uint8_t)(1 + (data[0] >> 5) % 4);
            rec.proc = (uint8_t)(data[0] & 31);
            tbbt__decode_reply(&rec, data + 2 + h.body_off, size - 2 - h.body_off, trunc, fh);
        }
    }
    tbbt_trace_rec_fini(&rec);
    return 0;
}
