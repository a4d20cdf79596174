/* SPDX-License-Identifier: MIT */
/*
 * Private to the decoders (decode.c, decode-nfs3.c, decode-nfs2.c,
 * decode-mount.c): the decoding state and the helpers every procedure uses.
 *
 * A procedure decoder is a pair of functions (call, reply) that read one
 * field or sub-structure at a time with the rpcgen XDR routines and store it
 * into the record as soon as it is complete, so a message cut short keeps
 * every field before the cut.  Each returns true when everything decoded and
 * false at the first item that did not, with d->err saying why:
 * TBBT_E_TRUNC (bytes ran out in a message marked truncated) or
 * TBBT_E_BADREC (malformed).
 *
 * Memory: every variable-length item is decoded into caller storage of its
 * .x bound (a stack buffer the XDR pointer is pre-pointed at), so rpcgen code
 * allocates nothing and nothing needs xdr_free(); the XDR routines of libtirpc
 * keep such a pointer, and never free it, when decoding fails.  Linked lists
 * (readdir entries, mount lists) are walked element by element, never with
 * the recursive rpcgen routine of the whole list.
 */
#ifndef TBBT_EXTRACT_DECODE_INT_H
#define TBBT_EXTRACT_DECODE_INT_H

#include <rpc/rpc.h>
#include <stdbool.h>
#include <stdint.h>

#include "extract/decode.h"

struct tbbt__dec;

/*
 * What the NFS versions decode differently in the call shapes they share
 * (tbbt__dec_obj and the others below): a handle, a name, a path.
 */
struct tbbt__dec_vers {
    /* A file handle, interned into *dst with field bit. */
    bool (*fh)(struct tbbt__dec *d, uint32_t *dst, int field);
    xdrproc_t name;                 /* the filename routine (string<255>) */
    xdrproc_t path;                 /* the path routine (string<1024>) */
    /* A fattr into *dst with field bit; false (d->err set) if it did not decode. */
    bool (*attr)(struct tbbt__dec *d, struct tbbt_fattr *dst, int field);
    int key;                        /* TBBT_PROTO_*: whose status names */
    bool closed;                    /* a status without a name is malformed (v3; v2
                                       servers send Unix errno values beyond RFC 1094's) */
};

/* Decoding state of one message (stack storage of tbbt__decode_call/reply). */
struct tbbt__dec {
    const struct tbbt__dec_vers *v; /* borrowed: the version's types (NULL for MOUNT) */
    XDR xdr;                        /* XDR_DECODE memory stream over p[0..len) */
    const uint8_t *p;               /* borrowed: the message bytes */
    u_int len;
    bool trunc;                     /* the capture cut the message short */
    int err;                        /* why the last helper failed */
    struct tbbt_trace_rec *rec;     /* borrowed: where fields go */
    struct tbbt_fhtab *fht;         /* borrowed: where handles are interned */
};

/* Decodes one part of a message; false (d->err set) when it did not decode. */
typedef bool (*tbbt__dec_fn)(struct tbbt__dec *d);

struct tbbt__dec_proc {
    tbbt__dec_fn call;
    tbbt__dec_fn reply;
};

/*
 * Procedure tables, indexed by procedure number, made from the catalogue
 * (proto/catalogue.def): the row of procedure num with shapes (dcall,
 * dreply) becomes { dcall##_call, dreply##_reply }.  A decoder file redefines
 * TBBT__DEC_<key> (TBBT__DEC_SKIP below) as TBBT__DEC_ROW for its own key,
 * then includes the catalogue inside its table's initializer.
 */
#define TBBT__DEC_NPROCS 32
extern const struct tbbt__dec_proc tbbt__dec_nfs3[TBBT__DEC_NPROCS];
extern const struct tbbt__dec_proc tbbt__dec_nfs2[TBBT__DEC_NPROCS];
extern const struct tbbt__dec_proc tbbt__dec_mnt1[TBBT__DEC_NPROCS];
extern const struct tbbt__dec_proc tbbt__dec_mnt3[TBBT__DEC_NPROCS];
extern const struct tbbt__dec_vers tbbt__dec_vers3;
extern const struct tbbt__dec_vers tbbt__dec_vers2;

#define TBBT_PROTO_PROC(key, num, name, kind, dcall, dreply, ...)                                \
    TBBT__DEC_##key(num, dcall, dreply)
#define TBBT__DEC_ROW(num, dcall, dreply) [num] = { dcall##_call, dreply##_reply },
#define TBBT__DEC_SKIP(num, dcall, dreply)
#define TBBT__DEC_NFS3 TBBT__DEC_SKIP
#define TBBT__DEC_NFS2 TBBT__DEC_SKIP
#define TBBT__DEC_MNT1 TBBT__DEC_SKIP
#define TBBT__DEC_MNT3 TBBT__DEC_SKIP

/* Nothing to decode (void arguments or results). */
bool tbbt__dec_void(struct tbbt__dec *d);

/*
 * The call shapes NFSv2 and NFSv3 share, through d->v: the object's handle
 * (fh); a directory operation (fh, name); RENAME (fh, name, fh2, name2);
 * LINK (fh, fh2, name2).  And the second directory and name alone.
 */
bool tbbt__dec_obj(struct tbbt__dec *d);
bool tbbt__dec_dirop(struct tbbt__dec *d);
bool tbbt__dec_dirop2(struct tbbt__dec *d);
bool tbbt__dec_rename(struct tbbt__dec *d);
bool tbbt__dec_link(struct tbbt__dec *d);

/*
 * The reply status (d->v): sets it in the record; *ok says whether the resok arm
 * follows.  A status the version's list lacks is malformed when d->v->closed.
 */
bool tbbt__dec_status(struct tbbt__dec *d, bool *ok);
/* A reply of a status and, when OK, the object's attributes (v2 attrstat, v3 GETATTR). */
bool tbbt__dec_attrstat(struct tbbt__dec *d);

/* The names the catalogue's shapes give the shared hooks. */
#define void_call tbbt__dec_void
#define void_reply tbbt__dec_void
#define attrstat_reply tbbt__dec_attrstat
#define obj_call tbbt__dec_obj
#define dirop_call tbbt__dec_dirop
#define rename_call tbbt__dec_rename
#define link_call tbbt__dec_link

/* A filename (d->v->name) or path (d->v->path) into the record, with field bit. */
bool tbbt__dec_name(struct tbbt__dec *d, struct tbbt_str *dst, int field);
bool tbbt__dec_path(struct tbbt__dec *d, struct tbbt_str *dst, int field);

/*
 * A directory listing (v3 dirlist3/dirlistplus3, v2 readdirres's list): the
 * entries, walked one by one with entry (plus passed on), then eof; sets
 * entries, res_count (their number) and eof.
 */
bool tbbt__dec_dirlist(struct tbbt__dec *d, bool (*entry)(struct tbbt__dec *d, bool plus),
                       bool plus);

/*
 * Decodes one item with the rpcgen routine proc into obj.  On failure tells
 * truncation from malformation (see decode.c) and sets d->err.  The encoded
 * item must be shorter than 2048 bytes (true of every item we decode whole).
 */
bool tbbt__dec_item(struct tbbt__dec *d, xdrproc_t proc, void *obj);

/*
 * An unsigned int (xdr_u_int), an unsigned hyper (xdr_u_quad_t: any 64-bit
 * typedef of nfs3.x, or an 8-byte opaque verifier as its big-endian value).
 * *v is written only when the item decoded.
 */
bool tbbt__dec_u32(struct tbbt__dec *d, uint32_t *v);
bool tbbt__dec_u64(struct tbbt__dec *d, uint64_t *v);
/* The same into a record field, setting its bit (any 32- or 64-bit typedef of nfs*.x). */
bool tbbt__dec_u32_field(struct tbbt__dec *d, uint32_t *dst, int field);
bool tbbt__dec_u64_field(struct tbbt__dec *d, uint64_t *dst, int field);

/*
 * The "value follows" boolean of an XDR optional-data list; anything but 0
 * or 1 is malformed (xdr_bool would take any non-zero value as TRUE).
 */
bool tbbt__dec_follows(struct tbbt__dec *d, bool *follows);

/*
 * An enum value read by an rpcgen routine (which takes any value): false,
 * with d->err TBBT_E_BADREC, if it is over max (the protocol's last value).
 */
bool tbbt__dec_range(struct tbbt__dec *d, uint32_t v, uint32_t max);

/* The word `ahead` bytes past the current position: false if the message ends first. */
bool tbbt__dec_peek(struct tbbt__dec *d, u_int ahead, uint32_t *v);

/*
 * One discriminant of a run of optional items: values up to max are valid,
 * and the value arm is followed by len bytes (any other by none).
 */
struct tbbt__dec_arm {
    uint32_t max, arm, len;
};

/*
 * Checks, before an rpcgen routine decodes them, the n discriminants that
 * start at the current position one after another (bools as 0/1: xdr_bool
 * takes any non-zero value as TRUE; enums up to max): false with d->err
 * TBBT_E_BADREC at the first one out of range.  Discriminants past the end
 * of the message are left to the decoding (truncation).
 */
bool tbbt__dec_bools_ok(struct tbbt__dec *d, const struct tbbt__dec_arm *arms, int n);

/*
 * A string item (proc decodes a `string<N>` typedef) into buf, which must
 * hold N + 1 bytes; *len gets its length (the string may contain NUL bytes).
 */
bool tbbt__dec_string(struct tbbt__dec *d, xdrproc_t proc, char *buf, uint32_t *len);

/* The length of a bulk opaque payload; over bound is malformed. */
bool tbbt__dec_opaque_len(struct tbbt__dec *d, uint32_t bound, uint32_t *len);
/* Skips len payload bytes (and their XDR padding) without reading them. */
bool tbbt__dec_skip(struct tbbt__dec *d, uint32_t len);

/* Sets rec->status and TBBT_RF_STATUS. */
void tbbt__dec_set_status(struct tbbt__dec *d, int32_t status);

/* Interns handle bytes and stores the reference in *dst with field bit. */
void tbbt__dec_set_fh(struct tbbt__dec *d, const void *fh, uint32_t len, uint32_t *dst,
                      int field);

/* Copies a string into the record's arena and sets its field bit. */
void tbbt__dec_set_str(struct tbbt__dec *d, const char *s, uint32_t len, struct tbbt_str *dst,
                       int field);

/* Appends one value to rec->info (TBBT_F_INFO); values past TBBT_INFO_MAX are dropped. */
void tbbt__dec_add_info(struct tbbt__dec *d, uint64_t v);

/* Big-endian value of n <= 8 bytes (verifiers and v2 cookies as integers). */
uint64_t tbbt__dec_be(const void *p, size_t n);

#endif
