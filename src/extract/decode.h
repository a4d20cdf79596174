/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: decoding NFSv2, NFSv3 and MOUNT v1/v3 call
 * arguments and reply results (the bytes after the RPC header) into a TBBT
 * trace record.  RFC 1094, RFC 1813 (and its Appendix I for MOUNT v3).
 *
 * Each procedure's arguments and results are decoded field by field with the
 * rpcgen-generated XDR routines of the src/proto .x files, so that a message cut short
 * by the capture's snap length keeps every field that is complete (a WRITE
 * without its data is still a WRITE of `count` bytes at `offset`).  Bulk
 * payloads (read/write data) are skipped, never copied.  File handles are
 * interned in the handle table.
 */
#ifndef TBBT_EXTRACT_DECODE_H
#define TBBT_EXTRACT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/*
 * Maps (program, version) to enum tbbt_prog; TBBT_PROG_NONE if not ours (the
 * catalogue's keys, tbbt_proto_key(): the same numbers).
 */
int tbbt__decode_prog(uint32_t program, uint32_t version);

/*
 * Decodes call arguments of rec->prog/rec->proc from p[0..len) into rec,
 * interning handles in fh.  `trunc` says the message was cut short by the
 * snap length.  Returns 0 when everything decoded, TBBT_E_TRUNC when the
 * bytes ran out (fields decoded so far are kept; with trunc this is normal),
 * TBBT_E_BADREC when the bytes are malformed (a length over its .x bound, a
 * bad discriminant) or the procedure is unknown.  On error sets
 * TBBT_RF_CALL_BAD in rec->flags (except TBBT_E_TRUNC with trunc, which sets
 * TBBT_RF_CALL_TRUNC).  Never reads outside p[0..len).
 */
int tbbt__decode_call(struct tbbt_trace_rec *rec, const uint8_t *p, size_t len, bool trunc,
                      struct tbbt_fhtab *fh);

/*
 * Decodes reply results (after an accepted SUCCESS RPC reply header) the same
 * way: sets rec->status and TBBT_RF_STATUS once the status is read, and
 * TBBT_RF_REPLY_BAD / TBBT_RF_REPLY_TRUNC as above.
 */
int tbbt__decode_reply(struct tbbt_trace_rec *rec, const uint8_t *p, size_t len, bool trunc,
                       struct tbbt_fhtab *fh);

#endif
