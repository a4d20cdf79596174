/* SPDX-License-Identifier: MIT */
/*
 * nfsreq: turns one trace record into the NFS call tbbt-play sends, and extracts from
 * the replies what the player needs (TBBT paper 3.4: the player replays each traced
 * operation against the server under test, naming objects by the handles it learnt for
 * their TBBT-IDs).  Covers every procedure of NFSv3 (RFC 1813 3.3.0-3.3.21) and NFSv2
 * (RFC 1094 2.2.0-2.2.17).
 *
 * What it does: fills the rpcgen argument structure of the record's procedure (from
 * src/proto/nfs3.x and nfs2.x) with the server's handles for the record's TBBT-IDs
 * (fh -> rec->id, fh2 -> rec->id2), the record's names and values, and synthetic WRITE
 * data; picks the XDR encoder and, for the procedures whose results the player reads
 * (new handles, directory cookies), the decoder; reads new handles and readdir
 * positions out of decoded results.
 *
 * What it does not do: send anything (src/rpcclient/rpcconn.h does), decide whether a
 * call should be replayed (ordering, skipping dependents of failed calls), MOUNT.
 *
 * Replay rules (see tbbt_nfsreq_build()):
 * - SETATTR never sends the guard: the traced server's ctime cannot match ours
 *   (sattrguard3 check = FALSE; NFSv2 has no guard).
 * - sattr times: TBBT_SA_ATIME/MTIME -> SET_TO_CLIENT_TIME with the traced time,
 *   TBBT_SA_*_SERVER -> SET_TO_SERVER_TIME.  NFSv2 sattr: -1 (all ones) for each field
 *   not set; server time is useconds = 1000000 with the call's seconds (the Sun
 *   convention Linux follows, as decode-nfs2.c reads it).
 * - WRITE data is synthetic: byte i of every write is 1 + i % 251 (never zero).  NFSv3
 *   writes carry at most TBBT_NFSREQ_WRITE_MAX3 (1 MiB) and NFSv2 writes at most
 *   TBBT_NFSREQ_WRITE_MAX2 (8 KiB, the RFC 1094 limit); a larger traced count is sent
 *   as that maximum (count and data length both).  stable defaults to UNSTABLE.
 * - Verifiers (cookieverf, createverf) are the record's u64 in big-endian byte order,
 *   as the decoders store them; the NFSv2 readdir cookie is the low 32 bits big-endian.
 *
 * Threading: no shared state except the write pattern, made once (g_once) and
 * read-only afterwards, so every function may run on any thread on its own storage.
 */
#ifndef TBBT_PLAYER_NFSREQ_H
#define TBBT_PLAYER_NFSREQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rpc/rpc.h>

#include "player/handles.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "trace/trace.h"

#define TBBT_NFSREQ_PROG 100003u
#define TBBT_NFSREQ_WRITE_MAX3 1048576u   /* NFS3_MAXDATA: largest v3 WRITE we send */
#define TBBT_NFSREQ_WRITE_MAX2 8192u      /* NFS2_MAXDATA: largest v2 WRITE (RFC 1094) */

/* Arguments of every NFSv2/v3 procedure (RFC 1094 2.2, RFC 1813 3.3). */
union tbbt_nfsreq_args {
    /* NFSv3 */
    GETATTR3args getattr3;
    SETATTR3args setattr3;
    LOOKUP3args lookup3;
    ACCESS3args access3;
    READLINK3args readlink3;
    READ3args read3;
    WRITE3args write3;
    CREATE3args create3;
    MKDIR3args mkdir3;
    SYMLINK3args symlink3;
    MKNOD3args mknod3;
    REMOVE3args remove3;
    RMDIR3args rmdir3;
    RENAME3args rename3;
    LINK3args link3;
    READDIR3args readdir3;
    READDIRPLUS3args readdirplus3;
    FSSTAT3args fsstat3;
    FSINFO3args fsinfo3;
    PATHCONF3args pathconf3;
    COMMIT3args commit3;
    /* NFSv2 */
    nfs2_fhandle fhandle2;          /* GETATTR, READLINK, STATFS */
    nfs2_sattrargs sattr2;          /* SETATTR */
    nfs2_diropargs dirop2;          /* LOOKUP, REMOVE, RMDIR */
    nfs2_readargs read2;
    nfs2_writeargs write2;
    nfs2_createargs create2;        /* CREATE, MKDIR */
    nfs2_renameargs rename2;
    nfs2_linkargs link2;
    nfs2_symlinkargs symlink2;
    nfs2_readdirargs readdir2;
};

/*
 * One call, in caller storage (reusable: tbbt_nfsreq_build() overwrites all of it).
 * args borrows from fh[] below (NFSv3 handles), from the record's string arena (names,
 * symlink target) and from the static write pattern: it is valid while q and rec live
 * and unchanged.  The encoder never writes through these pointers; never xdr_free() the
 * args.
 */
struct tbbt_nfsreq {
    uint32_t prog, vers, proc;      /* TBBT_NFSREQ_PROG, 2 or 3, procedure number */
    xdrproc_t xargs;                /* encoder of args, never NULL (for the NULL
                                     * procedure one that writes nothing) */
    union tbbt_nfsreq_args args;
    xdrproc_t xres;                 /* decoder the player must use, or NULL when the
                                     * reply status (rpcconn res_status) is enough */
    size_t res_size;                /* sizeof the union tbbt_nfsreq_res member xres
                                     * decodes; 0 with xres NULL */
    uint8_t fh[3][TBBT_HANDLE_MAX]; /* copies of the handles used: [0] of rec->id,
                                     * [1] of rec->id2 */
    uint32_t fh_len[3];             /* their lengths (0: slot unused) */
};

/*
 * Positive results of tbbt_nfsreq_build() (the call is not built; skip the record):
 * - TBBT_NFSREQ_NOT_NFS: not an NFS call to replay: MOUNT records, unknown programs or
 *   procedure numbers, NFSv2 ROOT and WRITECACHE (obsolete, no effect on the server).
 * - TBBT_NFSREQ_MISSING: the record lacks a field the call needs (cut by the snap
 *   length, not decoded, an nfsdump line without it), including no TBBT-ID (or ID 0)
 *   where the procedure needs a handle.  The fields each procedure needs are the
 *   need column of the protocol catalogue (proto/catalogue.def), plus those need_of()
 *   in nfsreq.c adds.
 * - TBBT_NFSREQ_NO_HANDLE: a TBBT-ID's handle is not KNOWN in the handle table
 *   (*missing = that TBBT-ID; rec->id is checked before rec->id2).
 * - TBBT_NFSREQ_UNSENDABLE: the record holds a value the protocol cannot carry through
 *   the XDR string/opaque routines: a name or symlink target with a NUL byte or longer
 *   than the bound (255, 1024), an unknown CREATE createmode, an NFSv2 offset above
 *   2^32-1, or an NFSv2 call whose known handle is not NFS2_FHSIZE (32) bytes.
 */
enum {
    TBBT_NFSREQ_NOT_NFS = 1,
    TBBT_NFSREQ_MISSING = 2,
    TBBT_NFSREQ_NO_HANDLE = 3,
    TBBT_NFSREQ_UNSENDABLE = 4,
};

/*
 * Builds into q the call of rec (an NFSv2 or NFSv3 record), taking handles from h.
 * Returns 0 (q ready to send: q->xargs over &q->args), or one of TBBT_NFSREQ_* above
 * (q then holds nothing usable).  Checks in this order: NOT_NFS, MISSING, UNSENDABLE
 * (record values), NO_HANDLE (sets *missing; missing may be NULL), UNSENDABLE (v2
 * handle length).  rec and h are borrowed for the call; q->args keeps pointing into
 * rec's arena afterwards (see struct tbbt_nfsreq).  h is only read (tbbt_handles_known()),
 * so any thread may call it under the handle table's own rule.
 */
int tbbt_nfsreq_build(struct tbbt_nfsreq *q, const struct tbbt_trace_rec *rec,
                      const struct tbbt_handles *h, uint64_t *missing);

/*
 * The TBBT-IDs whose handles rec's call needs, in the order build checks them: rec->id
 * for procedures with a handle argument, then rec->id2 for RENAME and LINK.  An ID the
 * record lacks (or that is 0) is left out (build reports MISSING for it).  Fills
 * ids[0..n) and returns n (0..2); 0 for NULL, MOUNT and TBBT_NFSREQ_NOT_NFS records.
 */
int tbbt_nfsreq_needs(const struct tbbt_trace_rec *rec, uint64_t ids[2]);

/*
 * Replaces the cookie and cookie verifier of a built READDIR/READDIRPLUS call (NFSv2:
 * the cookie's low 32 bits, verf ignored); a no-op for every other procedure.  Used to
 * continue a directory listing with the server's own cookies.
 */
void tbbt_nfsreq_set_cookie(struct tbbt_nfsreq *q, uint64_t cookie, uint64_t verf);

/*
 * Results the player decodes: every NFSv3 procedure but NULL, REMOVE, RMDIR and RENAME
 * (LOOKUP and the CREATE-like ones up to the object's attributes, READLINK and READ up
 * to them: not the link text, not the data), and NFSv2 LOOKUP, CREATE, MKDIR (diropres)
 * and READDIR; of the procedures read only for the object's attributes (GETATTR, SETATTR,
 * ACCESS, READLINK, READ, WRITE, LINK, FSSTAT, FSINFO, PATHCONF, COMMIT) only when the
 * record has the traced attributes to check them against (TBBT_F_OBJ_ATTR).  For these
 * q->xres is set; for all others it is NULL.  Decode only with
 * q->xres into zeroed storage of at least q->res_size bytes; release with
 * xdr_free(q->xres, res) in the scope that decoded it.
 */
union tbbt_nfsreq_res {
    GETATTR3res getattr3;
    SETATTR3res setattr3;
    ACCESS3res access3;
    READLINK3res readlink3;
    READ3res read3;
    WRITE3res write3;
    LINK3res link3;
    FSSTAT3res fsstat3;
    FSINFO3res fsinfo3;
    PATHCONF3res pathconf3;
    COMMIT3res commit3;
    LOOKUP3res lookup3;
    CREATE3res create3;
    MKDIR3res mkdir3;
    SYMLINK3res symlink3;
    MKNOD3res mknod3;
    READDIR3res readdir3;
    READDIRPLUS3res readdirplus3;
    nfs2_diropres dirop2;           /* v2 LOOKUP, CREATE, MKDIR */
    nfs2_readdirres readdir2;
};

/*
 * The result decoder of an NFSv3 or NFSv2 LOOKUP, as tbbt_nfsreq_build() sets it for
 * a trace's LOOKUP (it decodes the status and the handle, not the attributes), and the
 * size of the union tbbt_nfsreq_res member it fills (*res_size).  For callers that
 * build their own LOOKUPs (start-up, resolve.c).
 */
xdrproc_t tbbt_nfsreq_lookup_xres(uint32_t vers, size_t *res_size);

/*
 * After a reply to (vers, proc) decoded with q->xres: copies the handle the reply
 * returned into fh and returns its length; 0 if none (status not OK, v3 post_op_fh3
 * without a handle, a procedure without a new handle, a length 0 or above
 * TBBT_HANDLE_MAX).  v3 LOOKUP: resok.object; v3 CREATE/MKDIR/SYMLINK/MKNOD: resok.obj;
 * v2 LOOKUP/CREATE/MKDIR: diropok.file (32 bytes).  res is borrowed.
 */
uint32_t tbbt_nfsreq_new_fh(uint32_t vers, uint32_t proc, const union tbbt_nfsreq_res *res,
                            uint8_t fh[TBBT_HANDLE_MAX]);

/* What a READDIR(PLUS) reply said (tbbt_nfsreq_readdir()). */
struct tbbt_nfsreq_listing {
    uint32_t n;                 /* entries */
    uint64_t last_cookie;       /* the last entry's cookie (v2: big-endian value of its 4
                                   bytes); meaningful when n > 0 */
    uint64_t verf;              /* v3 cookieverf as a big-endian u64, v2 0 */
    bool eof;
};

/*
 * A READDIR(PLUS) reply (v3 READDIR, READDIRPLUS; v2 READDIR) with status OK, in one
 * walk of its entries: fills *l and returns true.  Another status or procedure: false.
 * res borrowed.
 */
bool tbbt_nfsreq_readdir(uint32_t vers, uint32_t proc, const union tbbt_nfsreq_res *res,
                         struct tbbt_nfsreq_listing *l);

/*
 * The post-operation attributes of the object an NFSv3 result (decoded with q->xres)
 * describes: GETATTR's; the wcc "after" of SETATTR, WRITE, COMMIT; the object's of
 * LOOKUP and the CREATE-like procedures (when OK); of ACCESS, READLINK, READ, LINK (the
 * file), FSSTAT, FSINFO, PATHCONF.  Fills *out (type, mode with its type bits, nlink,
 * uid, gid, size, used, rdev, fsid, fileid; no times) and returns true when the server
 * sent them.  NFSv2 and other procedures: false.  res borrowed.
 */
bool tbbt_nfsreq_post_attr(uint32_t vers, uint32_t proc, const union tbbt_nfsreq_res *res,
                           struct tbbt_fattr *out);

#endif
