/* SPDX-License-Identifier: MIT */
/*
 * The TBBT trace: in-memory record, binary file format (writer and reader),
 * and the lossless text form.  TBBT paper 3.1, Table 1: each record pairs a
 * call with its reply (callTime, replyTime, opType, opParams, opReturn).
 *
 * A record has a fixed header and a set of optional fields; `present` says
 * which fields hold a value (bit i = field tag i, enum tbbt_field).  Fields
 * are plain members, so stages read `rec->offset` after checking
 * TBBT_HAS(rec, TBBT_F_OFFSET).  Strings live in the record's arena
 * (`arena`) and the readdir entry array in a heap block, both owned by the
 * record: copy a record with tbbt_trace_rec_copy(), never by assignment.
 *
 * File handles, client endpoints and AUTH_SYS credentials are interned: the
 * record holds a small integer reference, and the trace carries one
 * definition record per handle (TBBT_REC_HANDLE), per endpoint
 * (TBBT_REC_ENDPOINT) and per credential (TBBT_REC_CRED, format 1.1),
 * written before the first op record that uses it, so the file can be
 * streamed.  The byte layout is documented in docs/trace-format.md.
 *
 * Nothing here is thread-safe; use one writer or reader per thread.
 */
#ifndef TBBT_TRACE_TRACE_H
#define TBBT_TRACE_TRACE_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/opkind.h"

#define TBBT_TRACE_MAJOR 1
#define TBBT_TRACE_MINOR 3     /* 1.1: credential definitions and the `cred` field;
                                  1.2: NFSv4 COMPOUND records (`minor`, `ops`);
                                  1.3: the operations' members of TBBT__OP4_MEMBERS_13
                                  (field `ops_more`) */
#define TBBT_FH_MAX 64        /* NFSv3 NFS3_FHSIZE; NFSv2 handles are 32 bytes */
#define TBBT_NAME_MAX 255     /* longest name we keep (RFC 1813 filename3 bound) */
#define TBBT_PATH_MAX 1024    /* longest symlink target / mount path we keep */
#define TBBT_INFO_MAX 12      /* values in an fsstat/fsinfo/pathconf/statfs result */
#define TBBT_CRED_GIDS_MAX 16 /* supplementary gids of an AUTH_SYS credential (RFC 5531 A) */
#define TBBT_MACHINE_MAX 255  /* longest AUTH_SYS machine name (RFC 5531 appendix A) */
/* The machine name of tbbt-play's own calls (start-up, grace probe, --verify, --uid):
 * tbbt-compare tells them from replayed ones by it. */
#define TBBT_PLAYER_MACHINE "tbbt-play"

/* Which protocol a record belongs to. */
enum tbbt_prog {
    TBBT_PROG_NONE = 0,
    TBBT_PROG_NFS2 = 1,   /* program 100003 version 2 */
    TBBT_PROG_NFS3 = 2,   /* program 100003 version 3 */
    TBBT_PROG_MNT1 = 3,   /* program 100005 version 1 */
    TBBT_PROG_MNT3 = 4,   /* program 100005 version 3 */
    TBBT_PROG_NFS4 = 5,   /* program 100003 version 4: proc 0 NULL, 1 COMPOUND (format 1.2) */
};

/* Record header flags. */
enum {
    TBBT_RF_REPLY = 1u << 0,        /* a reply was seen; reply_ns and rpc_stat are valid */
    TBBT_RF_CALL_TRUNC = 1u << 1,   /* the call was cut short by the snap length */
    TBBT_RF_REPLY_TRUNC = 1u << 2,  /* the reply was cut short by the snap length */
    TBBT_RF_STATUS = 1u << 3,       /* `status` holds the NFS/MOUNT status of the reply */
    TBBT_RF_CORRECTIVE = 1u << 4,   /* inserted by pre-play correction, not captured */
    TBBT_RF_NO_CALL = 1u << 5,      /* reply whose call was lost (text traces only) */
    TBBT_RF_TCP = 1u << 6,          /* carried over TCP (else UDP) */
    TBBT_RF_CALL_BAD = 1u << 7,     /* call arguments did not decode past some field */
    TBBT_RF_REPLY_BAD = 1u << 8,    /* reply results did not decode past some field */
};

/* rpc_stat: how the RPC layer answered (only with TBBT_RF_REPLY). */
enum tbbt_rpc_stat {
    TBBT_RPC_SUCCESS = 0,       /* accepted, SUCCESS: results follow */
    TBBT_RPC_PROG_UNAVAIL = 1,  /* accept_stat values 1..5 as in RFC 5531 */
    TBBT_RPC_PROG_MISMATCH = 2,
    TBBT_RPC_PROC_UNAVAIL = 3,
    TBBT_RPC_GARBAGE_ARGS = 4,
    TBBT_RPC_SYSTEM_ERR = 5,
    TBBT_RPC_DENIED_MISMATCH = 16,  /* MSG_DENIED, RPC_MISMATCH */
    TBBT_RPC_DENIED_AUTH = 17,      /* MSG_DENIED, AUTH_ERROR */
};

/* nlink of attributes that do not tell the link count (the namespace model ignores it). */
#define TBBT_NLINK_UNKNOWN UINT32_MAX

/* File attributes as the server returned them (NFSv3 fattr3; v2 fattr mapped in). */
struct tbbt_fattr {
    uint32_t type;      /* ftype3 numbering (1 reg, 2 dir, 3 blk, 4 chr, 5 lnk, 6 sock, 7 fifo) */
    uint32_t mode;
    uint32_t nlink;     /* TBBT_NLINK_UNKNOWN: not known (NFSv4 without numlinks) */
    uint32_t uid;
    uint32_t gid;
    uint64_t size;
    uint64_t used;      /* bytes; v2: blocks * blocksize */
    uint64_t rdev;      /* major << 32 | minor; v2: rdev */
    uint64_t fsid;
    uint64_t fileid;
    uint64_t atime_ns, mtime_ns, ctime_ns;  /* seconds * 1e9 + nanoseconds */
};

/* Pre-operation attributes of weak cache consistency data (RFC 1813 wcc_attr). */
struct tbbt_wcc_pre {
    uint64_t size;
    uint64_t mtime_ns, ctime_ns;
};

/* Attributes a call asks to set (sattr3 / v2 sattr). */
enum {
    TBBT_SA_MODE = 1u << 0,
    TBBT_SA_UID = 1u << 1,
    TBBT_SA_GID = 1u << 2,
    TBBT_SA_SIZE = 1u << 3,
    TBBT_SA_ATIME = 1u << 4,          /* set atime to atime_ns */
    TBBT_SA_ATIME_SERVER = 1u << 5,   /* set atime to the server's time */
    TBBT_SA_MTIME = 1u << 6,
    TBBT_SA_MTIME_SERVER = 1u << 7,
};

struct tbbt_sattr {
    uint32_t mask;
    uint32_t mode, uid, gid;
    uint64_t size;
    uint64_t atime_ns, mtime_ns;
};

/* A string field: bytes in the record's arena (not NUL-terminated in the file;
 * the arena copy is NUL-terminated for convenience). Names are data: they may
 * hold any byte, including '/' and NUL. */
struct tbbt_str {
    const char *p;
    uint32_t len;
};

/* One readdir/readdirplus entry. */
enum {
    TBBT_ENT_FH = 1u << 0,     /* fh holds the entry's handle */
    TBBT_ENT_ATTR = 1u << 1,   /* attr holds the entry's attributes */
    TBBT_ENT_ID = 1u << 2,     /* id holds the entry's TBBT-ID (filled by hierarchy extraction) */
};
#define TBBT_ENT_ALL (TBBT_ENT_FH | TBBT_ENT_ATTR | TBBT_ENT_ID)
struct tbbt_entry {
    uint64_t fileid;
    uint64_t cookie;
    struct tbbt_str name;
    uint32_t flags;            /* TBBT_ENT_* */
    uint32_t fh;               /* handle reference, with TBBT_ENT_FH */
    struct tbbt_fattr attr;    /* with TBBT_ENT_ATTR */
    uint64_t id;               /* TBBT-ID of the entry's object, with TBBT_ENT_ID */
};

/*
 * One operation of an NFSv4 COMPOUND record (field `ops`, format 1.2; the members
 * since 1.3 in the binary form's `ops_more`): its
 * number (nfs_opnum4, RFC 7863), and in `has` which members hold a value
 * (bit TBBT_O4_<member>) and whether the capture cut its arguments or results
 * (TBBT_O4_TRUNC).  A call's arguments and its reply's results for that
 * operation share the entry (the reply's i-th result is the call's i-th
 * operation).  Which operation sets which member: docs/trace-format.md
 * ("NFSv4 operations").  Strings live in the record's arena.
 */
#define TBBT_OP4_OWNER_MAX 1024   /* NFS4_OPAQUE_LIMIT: open- and lock-owner bytes */
#define TBBT_OP4_ID_LEN 16        /* stateid (seqid + other) and sessionid bytes */
#define TBBT__OP4_MEMBERS_12(X)                                                               \
    X(STATUS, status, U32, "status")          /* nfsstat4 of its result */                    \
    X(FH, fh, REF, "fh")                      /* PUTFH's handle; GETFH's result */            \
    X(NAME, name, NAME, "name")               /* the name it looks up, opens, creates, removes,\
                                                 links (new), renames (old) */                 \
    X(NAME2, name2, NAME, "name2")            /* RENAME's new name */                         \
    X(TARGET, target, PATH, "target")         /* CREATE NF4LNK's text; READLINK's result */   \
    X(OFFSET, offset, U64, "offset")          /* READ, WRITE, COMMIT, LOCK, LOCKT, LOCKU */   \
    X(COUNT, count, U32, "count")             /* READ/WRITE/COMMIT bytes; READDIR maxcount */ \
    X(LENGTH, length, U64, "length")          /* LOCK, LOCKT, LOCKU */                        \
    X(STATEID, stateid, ID16, "stateid")      /* the stateid the call gives */                \
    X(NEW_STATEID, new_stateid, ID16, "new_stateid") /* the stateid the reply gives */        \
    X(SEQID, seqid, U32, "seqid")             /* open- or lock-owner seqid (4.0; LOCK with a  \
                                                 new lock owner: the open seqid), CREATE_SESSION\
                                                 and EXCHANGE_ID's sequence id */             \
    X(LOCK_SEQID, lock_seqid, U32, "lock_seqid") /* LOCK with a new lock owner: its seqid */  \
    X(CLIENTID, clientid, U64, "clientid")    /* owners' clientid; RENEW, SETCLIENTID(_CONFIRM),\
                                                 EXCHANGE_ID's result, CREATE_SESSION */     \
    X(OWNER, owner, BLOB, "owner")            /* open- or lock-owner bytes */                 \
    X(SHARE, share, U32, "share")             /* OPEN(_DOWNGRADE): access | deny << 16 */     \
    X(HOW, how, U32, "how")                   /* OPEN: opentype | createmode << 4 | claim << 8;\
                                                 WRITE: stable_how; LOCK, LOCKT, LOCKU:       \
                                                 locktype | reclaim << 7 | new_lock_owner << 8;\
                                                 RECLAIM_COMPLETE: one_fs */                  \
    X(FTYPE, ftype, U32, "ftype")             /* CREATE's nfs_ftype4 */                       \
    X(SATTR, sattr, SATTR, "sattr")           /* attributes OPEN/CREATE/SETATTR set */         \
    X(ATTR, attr, FATTR, "attr")              /* attributes a GETATTR result carried */      \
    X(VERF, verf, VERF, "verf")               /* the call's: OPEN EXCLUSIVE4(_1), READDIR     \
                                                 cookie, SETCLIENTID(_CONFIRM), EXCHANGE_ID */\
    X(RES_VERF, res_verf, VERF, "res_verf")   /* the result's: WRITE/COMMIT write verifier,  \
                                                 READDIR cookie, SETCLIENTID confirm */       \
    X(COOKIE, cookie, U64, "cookie")          /* READDIR's cookie */                           \
    X(ACCESS, access, U32, "access")          /* ACCESS: the bits asked */                    \
    X(RES_FLAGS, res_flags, U32, "res_flags") /* OPEN rflags; WRITE committed; ACCESS     \
                                                 supported | granted << 16 */                 \
    X(RES_COUNT, res_count, U32, "res_count") /* READ/WRITE bytes done; READDIR entries */    \
    X(AT_EOF, eof, U32, "eof")                 /* READ, READDIR end of file */                 \
    X(SESSION, session, ID16, "session")      /* SEQUENCE's, CREATE_SESSION's result */       \
    X(SLOT, slot, U64, "slot")                /* SEQUENCE: slotid << 32 | sequenceid */       \
    X(BITMAP, bitmap, U64, "bitmap")          /* GETATTR/READDIR/VERIFY attribute words 0, 1 */
/*
 * Members since format 1.3: bits TBBT_O4_EXT and up of `has` (past TBBT_O4_TRUNC);
 * the binary form keeps them in field `ops_more` (op4.c), which 1.2 readers skip.
 * Append here; never renumber.
 */
#define TBBT__OP4_MEMBERS_13(X)                                                               \
    X(DIRCOUNT, dircount, U32, "dircount")    /* READDIR's dircount */                        \
    X(FLAGS, flags, U32, "flags")             /* EXCHANGE_ID's eia_flags; CREATE_SESSION's    \
                                                 csa_flags */                                 \
    X(FORE_MAXREQ, fore_maxreq, U32, "fore_maxreq") /* CREATE_SESSION's fore channel:         \
                                                 ca_maxrequestsize */                         \
    X(FORE_MAXRESP, fore_maxresp, U32, "fore_maxresp") /* ca_maxresponsesize */               \
    X(FORE_MAXRESP_CACHED, fore_maxresp_cached, U32, "fore_maxresp_cached")                   \
                                              /* ca_maxresponsesize_cached */                 \
    X(FORE_MAXOPS, fore_maxops, U32, "fore_maxops") /* ca_maxoperations */                    \
    X(FORE_SLOTS, fore_slots, U32, "fore_slots") /* ca_maxrequests */                         \
    X(CB_PROGRAM, cb_program, U32, "cb_program") /* SETCLIENTID's callback program */
/* Every member, in member order (the text form's order). */
#define TBBT__OP4_MEMBERS(X) TBBT__OP4_MEMBERS_12(X) TBBT__OP4_MEMBERS_13(X)
#define TBBT_O4_TRUNC 31          /* bit of `has`: arguments or results cut short */
#define TBBT_O4_EXT 32            /* bit of `has` of the first member since 1.3 */
#define TBBT__OP4_ENUM(m, member, kind, text) TBBT_O4_##m,
enum tbbt_op4_member {
    TBBT__OP4_MEMBERS_12(TBBT__OP4_ENUM) TBBT_O4_NMEMBERS_12,
    TBBT__O4_BEFORE_EXT = TBBT_O4_EXT - 1,
    TBBT__OP4_MEMBERS_13(TBBT__OP4_ENUM) TBBT_O4_END
};
#undef TBBT__OP4_ENUM
#define TBBT_O4_HAS(o, m) (((o)->has >> TBBT_O4_##m) & 1u)
#define TBBT_O4_SET(o, m) ((o)->has |= (uint64_t)1 << TBBT_O4_##m)

struct tbbt_op4 {
    uint32_t op;              /* nfs_opnum4 */
    uint64_t has;             /* bit TBBT_O4_<member>, TBBT_O4_TRUNC */
    uint32_t status, fh;
    struct tbbt_str name, name2, target, owner;
    uint64_t offset, length, clientid, verf, res_verf, cookie, slot, bitmap;
    uint32_t count, seqid, lock_seqid, share, how, ftype, access, res_flags, res_count, eof;
    uint32_t dircount, flags, fore_maxreq, fore_maxresp, fore_maxresp_cached, fore_maxops,
        fore_slots, cb_program;
    uint8_t stateid[TBBT_OP4_ID_LEN], new_stateid[TBBT_OP4_ID_LEN], session[TBBT_OP4_ID_LEN];
    struct tbbt_sattr sattr;
    struct tbbt_fattr attr;
};
#define TBBT_OP4_MAX 256          /* operations in a COMPOUND (NFS4_MAXOPS of nfs4.x) */

/*
 * Optional fields.  The tag is also the bit in `present` and the TLV tag in
 * the binary file.  Never renumber: append new tags (readers skip unknown ones).
 */
enum tbbt_field {
    /* call arguments */
    TBBT_F_FH = 0,          /* fh: object or directory handle (ref) */
    TBBT_F_NAME,            /* name: name in directory fh */
    TBBT_F_FH2,             /* fh2: second directory (rename to, link dir) (ref) */
    TBBT_F_NAME2,           /* name2: name in fh2 */
    TBBT_F_OFFSET,          /* offset: read/write/commit offset */
    TBBT_F_COUNT,           /* count: read/write/commit/readdir byte count */
    TBBT_F_STABLE,          /* stable: write stable_how */
    TBBT_F_SATTR,           /* sattr: attributes to set */
    TBBT_F_GUARD,           /* guard_ns: setattr guard ctime */
    TBBT_F_TARGET,          /* target: symlink target (call) or readlink result */
    TBBT_F_COOKIE,          /* cookie: readdir cookie */
    TBBT_F_COOKIEVERF,      /* cookieverf: readdir cookie verifier (8 bytes as u64) */
    TBBT_F_DIRCOUNT,        /* dircount: readdirplus dircount */
    TBBT_F_MAXCOUNT,        /* maxcount: readdirplus maxcount */
    TBBT_F_ACCESS,          /* access: access bits asked */
    TBBT_F_CREATEMODE,      /* createmode: UNCHECKED/GUARDED/EXCLUSIVE */
    TBBT_F_CREATEVERF,      /* createverf: exclusive create verifier */
    TBBT_F_FTYPE,           /* ftype: mknod type */
    TBBT_F_RDEV,            /* rdev: mknod device numbers */
    TBBT_F_DIRPATH,         /* dirpath: MOUNT path */
    /* reply results */
    TBBT_F_NEW_FH,          /* new_fh: handle returned (lookup/create/mkdir/symlink/mknod/mnt) */
    TBBT_F_OBJ_ATTR,        /* obj_attr: attributes of the object (post-op) */
    TBBT_F_OBJ_PRE,         /* obj_pre: wcc before of the object */
    TBBT_F_DIR_ATTR,        /* dir_attr: attributes of directory fh (post-op) */
    TBBT_F_DIR_PRE,         /* dir_pre: wcc before of directory fh */
    TBBT_F_DIR2_ATTR,       /* dir2_attr: attributes of directory fh2 (post-op) */
    TBBT_F_DIR2_PRE,        /* dir2_pre: wcc before of directory fh2 */
    TBBT_F_RES_COUNT,       /* res_count: bytes read/written/entries returned */
    TBBT_F_EOF,             /* eof: read/readdir end of file */
    TBBT_F_COMMITTED,       /* committed: write stable_how the server used */
    TBBT_F_WRITEVERF,       /* writeverf: write/commit verifier */
    TBBT_F_ACCESS_RES,      /* access_res: access bits granted */
    TBBT_F_ENTRIES,         /* entries: readdir(plus) entries */
    TBBT_F_INFO,            /* info: fsstat/fsinfo/pathconf/statfs values, see docs */
    TBBT_F_ID,              /* id: TBBT-ID of the object of fh */
    TBBT_F_ID2,             /* id2: TBBT-ID of the object of fh2 */
    TBBT_F_ID_OBJ,          /* id_obj: TBBT-ID of the object (fh, name) names: looked up,
                             * created, removed, renamed (moved), linked */
    TBBT_F_ID_OLD,          /* id_old: TBBT-ID of the object a rename (or create over an
                             * existing name) replaced */
    /* call header (format 1.1) */
    TBBT_F_CRED,            /* cred: AUTH_SYS credential of the call (credential ref) */
    /* NFSv4 (format 1.2) */
    TBBT_F_MINOR,           /* minor: a COMPOUND's minor version */
    TBBT_F_OPS,             /* ops: a COMPOUND's operations (struct tbbt_op4) */
    /* NFSv4 (format 1.3) */
    TBBT_F_OPS_MORE,        /* ops_more: binary form only, the members of `ops` since 1.3
                             * (TBBT__OP4_MEMBERS_13).  Never set in `present`: the values
                             * are in `ops`; the writer writes the tag when an operation has
                             * such a member, the reader folds it into `ops` */
    TBBT_F_NFIELDS
};

struct tbbt__arena;

#define TBBT_HAS(rec, f) (((rec)->present >> (f)) & 1u)
#define TBBT_SET(rec, f) ((rec)->present |= (uint64_t)1 << (f))

struct tbbt_trace_rec {
    /* header: always present */
    uint64_t call_ns;       /* call time, ns since the epoch (0 with TBBT_RF_NO_CALL) */
    uint64_t reply_ns;      /* reply time, 0 if no reply */
    uint8_t prog;           /* enum tbbt_prog */
    uint8_t proc;           /* procedure number within prog */
    uint16_t flags;         /* TBBT_RF_* */
    uint32_t xid;
    uint32_t endpoint;      /* endpoint reference (client/server pair) */
    uint32_t uid, gid;      /* AUTH_SYS uid and gid; 0/0 for AUTH_NONE (the whole
                             * credential: the `cred` field, TBBT_F_CRED) */
    uint8_t rpc_stat;       /* enum tbbt_rpc_stat, with TBBT_RF_REPLY */
    int32_t status;         /* nfsstat3/nfsstat/mountstat3, with TBBT_RF_STATUS */
    uint64_t present;       /* bit per enum tbbt_field */

    /* optional fields */
    uint32_t fh, fh2;
    struct tbbt_str name, name2, target, dirpath;
    uint64_t offset;
    uint32_t count, stable;
    struct tbbt_sattr sattr;
    uint64_t guard_ns;
    uint64_t cookie, cookieverf;
    uint32_t dircount, maxcount;
    uint32_t access, createmode;
    uint64_t createverf;
    uint32_t ftype;
    uint64_t rdev;
    uint32_t new_fh;
    struct tbbt_fattr obj_attr, dir_attr, dir2_attr;
    struct tbbt_wcc_pre obj_pre, dir_pre, dir2_pre;
    uint32_t res_count, eof, committed;
    uint64_t writeverf;
    uint32_t access_res;
    struct tbbt_entry *entries;  /* record-owned array of n_entries (rec_add_entry) */
    uint32_t n_entries;
    uint32_t entries_cap;       /* entries allocated (kept by clear; only record.c sets it) */
    uint64_t info[TBBT_INFO_MAX];
    uint32_t n_info;
    uint64_t id, id2, id_obj, id_old;
    uint32_t cred;              /* credential reference (struct tbbt_credtab) */
    uint32_t minor;
    struct tbbt_op4 *ops;       /* record-owned array of n_ops (tbbt_trace_rec_add_op4) */
    uint32_t n_ops;
    uint32_t ops_cap;           /* ops allocated (kept by clear; only record.c sets it) */

    /* arena for strings: owned; reset (its memory kept) by tbbt_trace_rec_clear() */
    struct tbbt__arena *arena;
};

/* Initializes caller storage; tbbt_trace_rec_fini() releases the arena. */
void tbbt_trace_rec_init(struct tbbt_trace_rec *rec);
void tbbt_trace_rec_fini(struct tbbt_trace_rec *rec);
/*
 * Empties the record for reuse: zeroes every field and forgets its strings and
 * entries (their memory is kept for the next record).
 */
void tbbt_trace_rec_clear(struct tbbt_trace_rec *rec);
/* Copies len bytes into the arena and sets *dst (NUL-terminated copy). */
void tbbt_trace_rec_set_str(struct tbbt_trace_rec *rec, struct tbbt_str *dst, const void *p,
                            uint32_t len);
/*
 * Appends a zeroed entry to rec->entries (owned by the record, freed by clear
 * and fini; the pointer is valid until the next append or clear).  Only this
 * function may grow the array: its capacity follows from n_entries.
 */
struct tbbt_entry *tbbt_trace_rec_add_entry(struct tbbt_trace_rec *rec);
/*
 * Appends a zeroed operation to rec->ops (owned by the record like entries; at
 * most TBBT_OP4_MAX: NULL past it).  The pointer is valid until the next
 * append or clear.
 */
struct tbbt_op4 *tbbt_trace_rec_add_op4(struct tbbt_trace_rec *rec);
/* Deep copy of src into dst (dst initialized). */
void tbbt_trace_rec_copy(struct tbbt_trace_rec *dst, const struct tbbt_trace_rec *src);

/* Names: lower-case procedure name ("getattr", "mnt") or NULL if unknown. */
const char *tbbt_proc_name(int prog, int proc);
/* Inverse of tbbt_proc_name for one prog; -1 if unknown. */
int tbbt_proc_by_name(int prog, const char *name);
/*
 * A procedure's label in reports (tbbt-play --report, tbbt-stats, tbbt-compare): NFSv3
 * names bare ("read"), the others prefixed with tbbt_prog_name() ("v2.read", "mnt3.mnt"),
 * a static string.  For an unknown procedure: NULL when buf is NULL, else buf (len bytes,
 * TBBT_PROC_LABEL_MAX is enough) holding "N" for NFSv3, "PROG.N" ("v2.31") or "progP.N"
 * for an unknown program.  Thread-safe.
 */
#define TBBT_PROC_LABEL_MAX 32
const char *tbbt_proc_label(int prog, int proc, char *buf, size_t len);
/* The name of an RPC outcome ("success", "garbage_args", "denied_auth"), NULL if unknown. */
const char *tbbt_rpc_stat_name(int rpc_stat);
/*
 * Status names without prefix ("OK", "NOENT", "NOTSUPP") of nfsstat3 (v3),
 * nfsstat (v2) and mountstat3 (mnt1, mnt3); NULL if unknown.
 */
const char *tbbt_status_name(int prog, int32_t status);
/* Inverse of tbbt_status_name: 0 and *status, or -1 if unknown. */
int tbbt_status_by_name(int prog, const char *name, int32_t *status);
/* "v2", "v3", "mnt1", "mnt3". */
const char *tbbt_prog_name(int prog);
int tbbt_prog_by_name(const char *name);
/* Number of procedures of prog (NFSv3: 22, NFSv2: 18, MOUNT: 6). */
int tbbt_prog_nprocs(int prog);

/* ---- handle table --------------------------------------------------------- */

/* Interns file handles: each distinct byte string gets the next small integer. */
struct tbbt_fhtab;
struct tbbt_fhtab *tbbt_fhtab_new(void);
void tbbt_fhtab_free(struct tbbt_fhtab *t);
/*
 * Returns the reference of the handle, interning it if new (fh is copied).
 * len must be <= TBBT_FH_MAX; longer handles are cut to TBBT_FH_MAX bytes.
 */
uint32_t tbbt_fhtab_intern(struct tbbt_fhtab *t, const void *fh, uint32_t len);
/*
 * Adds a handle with a given reference (reader side).  TBBT_E_BADREC if
 * ref != count, len > TBBT_FH_MAX or the bytes are already in the table.
 */
int tbbt_fhtab_add(struct tbbt_fhtab *t, uint32_t ref, const void *fh, uint32_t len);
uint32_t tbbt_fhtab_count(const struct tbbt_fhtab *t);
/* Returns the bytes of ref (borrowed, valid while t lives) or NULL if out of range. */
const uint8_t *tbbt_fhtab_get(const struct tbbt_fhtab *t, uint32_t ref, uint32_t *len);

/* A client/server conversation: addresses as text ("127.0.0.1", "::1"). */
struct tbbt_endpoint {
    char client[48];
    uint16_t client_port;
    char server[48];
    uint16_t server_port;
    bool tcp;
};

/* Interns endpoints the same way as handles. */
struct tbbt_eptab;
struct tbbt_eptab *tbbt_eptab_new(void);
void tbbt_eptab_free(struct tbbt_eptab *t);
uint32_t tbbt_eptab_intern(struct tbbt_eptab *t, const struct tbbt_endpoint *ep);
/*
 * Adds an endpoint with a given reference (reader side).  TBBT_E_BADREC if
 * ref != count, an address is empty, longer than 47 bytes or holds a byte
 * outside [0-9A-Za-z.:%_-], or the endpoint is already in the table.
 */
int tbbt_eptab_add(struct tbbt_eptab *t, uint32_t ref, const struct tbbt_endpoint *ep);
uint32_t tbbt_eptab_count(const struct tbbt_eptab *t);
const struct tbbt_endpoint *tbbt_eptab_get(const struct tbbt_eptab *t, uint32_t ref);

/*
 * An AUTH_SYS credential (RFC 5531 appendix A, authsys_parms) without its
 * stamp, which changes with every boot of the client.  The machine name is
 * bytes from a capture: any byte, NUL included; machine[machine_len] is a
 * NUL for convenience.  Members past machine_len and ngids are not part of
 * the value.
 */
struct tbbt_cred {
    uint32_t uid, gid, ngids;
    uint32_t gids[TBBT_CRED_GIDS_MAX];
    uint32_t machine_len;
    char machine[TBBT_MACHINE_MAX + 1];
};

/*
 * Interns credentials the same way as handles: each distinct credential
 * (machine name, uid, gid and gids, in order) gets the next reference.
 */
struct tbbt_credtab;
/* Given: the caller frees it with tbbt_credtab_free() (NULL is a no-op). */
struct tbbt_credtab *tbbt_credtab_new(void);
void tbbt_credtab_free(struct tbbt_credtab *t);
/*
 * Returns the reference of cred (borrowed for the call; copied), interning it
 * if new.  A machine name longer than TBBT_MACHINE_MAX or more than
 * TBBT_CRED_GIDS_MAX gids are cut to their bounds.
 */
uint32_t tbbt_credtab_intern(struct tbbt_credtab *t, const struct tbbt_cred *cred);
/*
 * Adds a credential with a given reference (reader side).  TBBT_E_BADREC if
 * ref != count, machine_len > TBBT_MACHINE_MAX, ngids > TBBT_CRED_GIDS_MAX or
 * the credential is already in the table.
 */
int tbbt_credtab_add(struct tbbt_credtab *t, uint32_t ref, const struct tbbt_cred *cred);
uint32_t tbbt_credtab_count(const struct tbbt_credtab *t);
/* The credential of ref (borrowed, valid until the next intern/add or free), or NULL. */
const struct tbbt_cred *tbbt_credtab_get(const struct tbbt_credtab *t, uint32_t ref);
/* True if a and b are the same credential (the members that are part of the value). */
bool tbbt_cred_equal(const struct tbbt_cred *a, const struct tbbt_cred *b);

/* ---- binary writer -------------------------------------------------------- */

/* Record types of the binary file (docs/trace-format.md); readers skip others. */
enum tbbt_rec_type {
    TBBT_REC_HANDLE = 1,     /* handle definition */
    TBBT_REC_ENDPOINT = 2,   /* endpoint definition */
    TBBT_REC_OP = 3,         /* one call/reply pair */
    TBBT_REC_END = 4,        /* trailer: counts and CRC32 */
    TBBT_REC_CRED = 5,       /* credential definition (format 1.1) */
};
#define TBBT_TRACE_REC_MAX (16u << 20)  /* longest record body a reader accepts */

struct tbbt_trace_writer;
/*
 * Opens path for writing ("-" = stdout).  The writer borrows fh and ep (they
 * must outlive it); before each op record it writes the definitions of all
 * handles and endpoints interned since the last record.  Returns NULL and sets
 * *err (-errno) on failure.  The file is version TBBT_TRACE_MAJOR.MINOR.
 */
struct tbbt_trace_writer *tbbt_trace_writer_open(const char *path, struct tbbt_fhtab *fh,
                                                 struct tbbt_eptab *ep, int *err);
/*
 * Gives the writer a credential table (borrowed: it must outlive the writer;
 * NULL: none), from which it writes definitions as it does from fh and ep
 * (after them).  Call it before the first put(); without a table, op records
 * may carry `cred` only after tbbt_trace_writer_def_cred().
 */
void tbbt_trace_writer_set_credtab(struct tbbt_trace_writer *w, struct tbbt_credtab *t);
/*
 * Writes one op record (rec is borrowed for the call).  0 or a negative
 * error.  TBBT_E_RANGE when the record breaks a bound the reader enforces (a
 * string too long, n_info > TBBT_INFO_MAX, unknown entry flags, a handle,
 * endpoint or credential reference not in the tables: every op needs an
 * interned endpoint); nothing is written then and the writer stays usable.  I/O
 * errors (-errno) are sticky: every later call returns them.
 */
int tbbt_trace_writer_put(struct tbbt_trace_writer *w, const struct tbbt_trace_rec *rec);
/*
 * Writes now, at this point of the file, the definitions of all handles,
 * endpoints and credentials interned since the last definitions were written
 * (handles first, credentials last).  put() and close() do this by
 * themselves; the text form calls it after each `fh`/`ep`/`cred` line to put
 * definitions exactly where the text has them.  0 or a sticky negative error
 * (TBBT_E_RANGE for an endpoint whose address tbbt_eptab_add would refuse).
 */
int tbbt_trace_writer_sync_defs(struct tbbt_trace_writer *w);
/*
 * For a writer opened without tables (fh and ep NULL; no credential table):
 * writes the definition of handle (endpoint, credential) ref now, which must
 * be the next reference (0, 1, ...).  A thread that does not own the tables
 * can so write a trace whose definitions another thread reads.  The values
 * are borrowed for the call.  0 or a negative error: TBBT_E_RANGE (not
 * sticky, nothing written) for a reference out of sequence, an over-long
 * handle or machine name, more than TBBT_CRED_GIDS_MAX gids; TBBT_E_RANGE
 * (sticky) for an address the reader would refuse; write errors (sticky).
 * The writer does not check that a credential is not defined twice (the
 * reader refuses such a file): the caller's table does.
 */
int tbbt_trace_writer_def_handle(struct tbbt_trace_writer *w, uint32_t ref, const void *fh,
                                 uint32_t len);
int tbbt_trace_writer_def_endpoint(struct tbbt_trace_writer *w, uint32_t ref,
                                   const struct tbbt_endpoint *ep);
int tbbt_trace_writer_def_cred(struct tbbt_trace_writer *w, uint32_t ref,
                               const struct tbbt_cred *cred);
/*
 * Writes pending definitions and the trailer (counts, CRC32; credentials are
 * not counted there, see docs/trace-format.md), flushes and closes; frees w.
 * 0 or error.
 */
int tbbt_trace_writer_close(struct tbbt_trace_writer *w);
/* Discards a writer after an error (no trailer is written; the file is left as is). */
void tbbt_trace_writer_abort(struct tbbt_trace_writer *w);
uint64_t tbbt_trace_writer_count(const struct tbbt_trace_writer *w);

/* ---- binary reader -------------------------------------------------------- */

struct tbbt_trace_reader;
/* True if the first len bytes at head start like a TBBT trace (its magic). */
bool tbbt_trace_probe(const void *head, size_t len);
/*
 * Opens path ("-" = stdin) and checks the header.  NULL and *err (-errno,
 * TBBT_E_MAGIC, TBBT_E_VERSION, TBBT_E_TRUNC, TBBT_E_BADREC).
 */
struct tbbt_trace_reader *tbbt_trace_reader_open(const char *path, int *err);
/* Same over len bytes at data (borrowed: must stay valid until close). */
struct tbbt_trace_reader *tbbt_trace_reader_open_mem(const void *data, size_t len, int *err);
/*
 * Reads the next op record into rec (cleared first), absorbing handle,
 * endpoint and credential definitions into the reader's tables.  Returns 1 for a record,
 * 0 at a valid end of trace (trailer seen, checksum good), negative on error
 * (TBBT_E_TRUNC, TBBT_E_BADREC, TBBT_E_CHECKSUM).
 */
int tbbt_trace_reader_next(struct tbbt_trace_reader *r, struct tbbt_trace_rec *rec);
/*
 * Lower level: reads the next record of any known type.  Returns
 * TBBT_REC_OP (rec filled), TBBT_REC_HANDLE, TBBT_REC_ENDPOINT or
 * TBBT_REC_CRED (*ref set to the reference just defined, rec untouched; a
 * caller must expect types to be added by later versions), 0 at a valid end
 * of trace,
 * or a negative error as tbbt_trace_reader_next().  Unknown record types are
 * skipped.  ref may be NULL.
 */
int tbbt_trace_reader_next_any(struct tbbt_trace_reader *r, struct tbbt_trace_rec *rec,
                               uint32_t *ref);
/* The file's format version (from its header). */
void tbbt_trace_reader_version(const struct tbbt_trace_reader *r, int *major, int *minor);
/*
 * How many items were skipped as unknown so far (record types, TLV tags, and
 * 1 for header bytes past this version's header).  0 means the text dump of
 * everything read so far is lossless.
 */
uint64_t tbbt_trace_reader_skipped(const struct tbbt_trace_reader *r);
/*
 * Fields (bit per enum tbbt_field) that later records leave undecoded: their bytes
 * are stepped over by their length and the field is not present in rec.  For a
 * consumer that never looks at them (the player needs no attributes), so records
 * cost less to read; such fields are then not validated either.  Default 0.
 */
void tbbt_trace_reader_skip_fields(struct tbbt_trace_reader *r, uint64_t fields);
/* The reader's tables (borrowed, valid until close). */
struct tbbt_fhtab *tbbt_trace_reader_fhtab(struct tbbt_trace_reader *r);
struct tbbt_eptab *tbbt_trace_reader_eptab(struct tbbt_trace_reader *r);
struct tbbt_credtab *tbbt_trace_reader_credtab(struct tbbt_trace_reader *r);
/* Byte offset of the item (record or field) of the last error, for messages. */
uint64_t tbbt_trace_reader_offset(const struct tbbt_trace_reader *r);
void tbbt_trace_reader_close(struct tbbt_trace_reader *r);

/*
 * A trace's identity, from its END record (docs/trace-format.md): the CRC32 of every
 * byte before it and the number of op records.  The hierarchy map made with a trace
 * records it (docs/hierarchy-map.md), and tbbt-play refuses a map made with another.
 */
struct tbbt_trace_ident {
    uint32_t crc;
    uint64_t ops;
};
/*
 * Reads the identity of the trace file at path from its last 25 bytes, without reading
 * (or checking) the rest: 0, or TBBT_E_MAGIC (not a trace), TBBT_E_TRUNC (no END record
 * at the end), -errno.  Thread-safe.
 */
int tbbt_trace_ident_read(const char *path, struct tbbt_trace_ident *id);

/* ---- text form ------------------------------------------------------------ */

/*
 * Writes a whole binary trace as text, one line per record (header line,
 * handle, endpoint and credential definitions, op records, trailer).  0 or
 * error.
 */
int tbbt_trace_dump(const char *trace_path, FILE *out);
/*
 * Same from an open reader (borrowed, positioned after the header): the tool
 * uses it to report tbbt_trace_reader_offset() on error.  Write errors on out
 * are the caller's to check (ferror).
 */
int tbbt_trace_dump_reader(struct tbbt_trace_reader *r, FILE *out);
/*
 * Parses the text form and writes the identical binary trace to out_path.
 * On a syntax error returns TBBT_E_SYNTAX and sets *line to the line number.
 */
int tbbt_trace_from_text(const char *text_path, const char *out_path, uint64_t *line);
/*
 * Same, and on error writes a one-line reason ("unknown key 'foo'") to why
 * (whylen bytes, may be NULL/0).  text_path "-" = stdin, out_path "-" =
 * stdout.  The binary trace is written aside and renamed over out_path only
 * on success (util/outfile.h): on error an existing out_path is left as it
 * was, and a symbolic link at out_path stays a link to its rewritten target.
 * Errors:
 * TBBT_E_SYNTAX (also for values out of bounds and undefined references),
 * TBBT_E_VERSION (header major != 1 or minor newer than this version),
 * -errno.  The binary file is always of this version (TBBT_TRACE_MINOR),
 * whatever minor version the text's header gives.
 */
int tbbt_trace_from_text_why(const char *text_path, const char *out_path, uint64_t *line,
                             char *why, size_t whylen);
/* Formats one op record as a text line (no newline) into s (appended). */
void tbbt_trace_format_rec(GString *s, const struct tbbt_trace_rec *rec);

#endif
