/* SPDX-License-Identifier: MIT */
/*
 * Private to the extract module: an NFSv4 operation's decoded arguments or
 * results into its trace entry (struct tbbt_op4; nfs4rec.c).  Strings go into
 * rec's arena, handles into fht.  A name, link text or owner over the trace's
 * bound is not kept and marks the entry TBBT_O4_TRUNC, as do attributes that
 * do not all decode.
 */
#ifndef TBBT_EXTRACT_NFS4REC_H
#define TBBT_EXTRACT_NFS4REC_H

#include <stdint.h>

#include "proto/nfs4.h"
#include "trace/trace.h"

/* The call's operation a (its number already in o->op). */
void tbbt__nfs4rec_call(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const nfs_argop4 *a,
                        struct tbbt_fhtab *fht);
/* The result r of operation o: its status, and what an NFS4_OK result carries. */
void tbbt__nfs4rec_res(struct tbbt_trace_rec *rec, struct tbbt_op4 *o, const nfs_resop4 *r,
                       struct tbbt_fhtab *fht);
/*
 * A READDIR result's entry into rec's `entries` (and the field set): cookie, name,
 * and from its attributes the fileid, the attributes and the FILEHANDLE attribute's
 * handle when present.  An entry whose attributes lack the fileid is left out: the
 * namespace model tells entries apart by it.
 */
void tbbt__nfs4rec_entry(struct tbbt_trace_rec *rec, uint64_t cookie, const utf8string *name,
                         const fattr4 *attrs, struct tbbt_fhtab *fht);
/* A stateid as the trace keeps it: the seqid big-endian, then the 12 bytes of other. */
void tbbt__nfs4rec_stateid(uint8_t *dst, const stateid4 *s);

#endif
