/* SPDX-License-Identifier: MIT */
/*
 * Private to the ns module: the model's tables (TBBT paper 3.2; layout and
 * memory budget in docs/hierarchy-map.md, "Model"), shared by pool.c (names),
 * model.c (objects, links, identity), apply*.c (records; apply-int.h is
 * theirs), map-write.c.
 *
 * Objects and links live in chunked arrays indexed by dense 32-bit numbers
 * (0 = none), so that growing never copies them.  A link is one name of one
 * object in one directory, with the times it came and went; deleted links
 * stay (they are map entries).  One open-addressing table maps (directory,
 * name) to the link that holds that name now (a live link, a deleted one,
 * or a negative record proving absence).  Names are interned once in a byte
 * pool and referred to by a 32-bit reference.
 */
#ifndef TBBT_NS_NS_INT_H
#define TBBT_NS_NS_INT_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "ns/ns.h"
#include "util/util.h"

#define NS_CHUNK_BITS 14
#define NS_CHUNK (1u << NS_CHUNK_BITS)
#define NS_LIVE UINT64_MAX          /* delete_ns of a link that exists */

/* ---- chunked arrays ---------------------------------------------------------- */

struct ns_vec {
    char **chunks;
    uint32_t n;             /* elements in use, index 0 included (reserved) */
    uint32_t nchunks;
    uint32_t esz;
};

void tbbt__ns_vec_init(struct ns_vec *v, uint32_t esz);
void tbbt__ns_vec_fini(struct ns_vec *v);
/* Appends a zeroed element; returns its index. */
uint32_t tbbt__ns_vec_push(struct ns_vec *v);

static inline void *ns_vec_at(const struct ns_vec *v, uint32_t i)
{
    return v->chunks[i >> NS_CHUNK_BITS] + (size_t)(i & (NS_CHUNK - 1)) * v->esz;
}

/* ---- name pool ---------------------------------------------------------------- */

/* Interned byte strings: [u16 length][bytes] in 1 MiB chunks; a ref is offset + 1. */
struct ns_pool {
    uint8_t **chunks;
    uint32_t nchunks, used;         /* bytes used in the last chunk */
    uint64_t *slots;                /* intern index: hash << 32 | ref, 0 = empty */
    uint32_t mask, count;
    uint64_t bytes;                 /* bytes stored */
};

void tbbt__ns_pool_init(struct ns_pool *p);
void tbbt__ns_pool_fini(struct ns_pool *p);
/* The ref of s[0..len) (len <= 65535), interning it if new. */
uint32_t tbbt__ns_pool_intern(struct ns_pool *p, const void *s, size_t len);
/* The ref of s[0..len) if interned, else 0. */
uint32_t tbbt__ns_pool_find(const struct ns_pool *p, const void *s, size_t len);
/* Stores s without interning (symlink targets); returns its ref. */
uint32_t tbbt__ns_pool_add(struct ns_pool *p, const void *s, size_t len);
/* The bytes of ref (borrowed, valid while the pool lives) and their length. */
const uint8_t *tbbt__ns_pool_get(const struct ns_pool *p, uint32_t ref, uint32_t *len);

/* ---- objects, links, keys ------------------------------------------------------ */

enum {
    OF_SIZE_KNOWN = 1u << 0,    /* size is the exact size at trace start */
    OF_SIZE_FROZEN = 1u << 1,   /* the size may have changed before it was known */
    OF_DELETED = 1u << 2,       /* the last name went away at delete_ns */
    OF_TYPE_ATTR = 1u << 3,     /* type comes from attributes (else from operations) */
    OF_NLINK = 1u << 4,         /* nlink comes from attributes */
    OF_HIST = 1u << 5,          /* some link of it has a rename history */
    OF_PARENTED = 1u << 6,      /* parent was set from a ".." lookup */
    OF_ANCESTOR = 1u << 7,      /* has had children: moves under it need a loop check */
};

/* 72 bytes: docs/hierarchy-map.md "Model" */
struct ns_obj {
    uint64_t size;              /* size at start: exact with OF_SIZE_KNOWN, else lower bound */
    uint64_t create_ns;         /* 0: existed before the trace */
    uint64_t delete_ns;         /* with OF_DELETED */
    uint32_t links;             /* live links: newest first, through ns_link.next */
    uint32_t parent;            /* parent from a ".." lookup (with OF_PARENTED) */
    uint32_t key;               /* (fsid, fileid) entry, 0 none */
    uint32_t target;            /* symlink target (pool ref), 0 none */
    uint32_t nchild;            /* live links in this directory */
    uint16_t nlink;             /* link count: attributes, then link/unlink */
    uint8_t type;               /* enum tbbt_ns_type */
    uint8_t flags;              /* OF_* */
    /* permissions and owner: now, and at trace start (the first seen); mode bit
     * NS_MODE_KNOWN says they are known */
    uint16_t mode, smode;
    uint32_t uid, gid, suid, sgid;
};
#define NS_MODE_KNOWN 0x8000u
#define NS_MODE_BITS 07777u
/* Bits a server may change by itself (a write by a non-owner clears set-ID bits). */
#define NS_MODE_COMPARE 01777u

/* 40 bytes.  child 0: a negative record (the name is proven absent). */
struct ns_link {
    uint32_t parent, name;      /* where it is now (or was when deleted) */
    uint32_t sparent, sname;    /* where it was first seen or created */
    uint32_t child;
    uint32_t next;              /* next live link of the object (free list: negatives) */
    uint64_t create_ns;         /* 0: existed before the trace */
    uint64_t delete_ns;         /* NS_LIVE while it exists */
};

struct ns_key {
    uint64_t fsid, fileid;
    uint32_t obj;               /* the object that has this key now, 0 none */
};

/*
 * A successful MOUNT MNT the identity scan saw: the handle it returned and its path
 * (pool ref of the components joined by '/', without the leading '/').
 */
struct ns_mount {
    uint32_t fh;
    uint32_t path;
};

/* --v4-export PSEUDO=PATH (ns.h, tbbt_ns_add_v4_export()): both as given. */
struct ns_v4_rewrite {
    char *pseudo, *path;
};

/*
 * A pseudo path (pool ref of "/a/b" as the NFSv4 client walked it) and the object the
 * MOUNT it was lowered to placed: a map header line "# v4-export" (map-write.c).
 */
struct ns_v4_export {
    uint32_t pseudo;
    uint32_t obj;
};

/* A directory link's earlier place: before time t it was (parent, name). */
struct ns_hist {
    uint64_t t;
    uint64_t events;            /* ns->link_events when it was recorded */
    uint32_t parent, name;
};

/*
 * Open-addressing index (linear probing, load <= 3/4): a slot is the key's
 * 32-bit hash << 32 | a 32-bit value (0 = empty), so probes and growth rarely
 * touch the entries the values refer to.
 */
struct ns_index {
    uint64_t *slots;
    uint32_t mask, count;
};

struct tbbt_ns {
    struct ns_vec objs;         /* struct ns_obj by ID */
    struct ns_vec links;        /* struct ns_link */
    struct ns_vec keys;         /* struct ns_key */
    struct ns_pool pool;
    struct ns_index dents;      /* (parent, name) -> link */
    struct ns_index keyidx;     /* (fsid, fileid) -> key */
    uint32_t *hid;              /* handle ref -> object */
    uint32_t *hkey;             /* handle ref -> key (identity scan) */
    uint32_t *hdir;             /* handle ref -> first (directory handle ref + 1) that named it */
    uint32_t *hname;            /* ... and the name (pool ref) (identity scan) */
    uint8_t *htype;             /* handle ref -> type from its attributes (identity scan) */
    uint32_t *hpkey;            /* handle ref -> key of the parent that a ".." entry without a
                                 * handle named by fileid (identity scan), 0 if none */
    uint32_t nh, caph;
    uint32_t free_neg;          /* a free negative record (linked through .next) */
    GHashTable *hist;           /* link -> GArray of struct ns_hist */
    uint32_t root;
    GArray *mounts;             /* struct ns_mount, from the identity scan (NULL: none) */
    uint32_t root_ncomp;        /* components of the export root's path: the deepest
                                   directory above or at every mounted path */
    bool mounts_ready;          /* root_ncomp worked out (first MNT applied) */
    bool closed;
    bool by_id;                 /* apply records by their ID fields, ignoring handles */
    uint8_t *used;              /* bit per object: a successful reply while it had no name */
    uint32_t used_cap;          /* objects the bitmap covers */
    uint32_t gone_dir;          /* "tbbt-gone": where such objects lived, 0 until needed */
    tbbt_ns_infer_fn infer;     /* told of inferred lost calls, or NULL */
    void *infer_arg;
    uint64_t last_t;            /* event clock: call times made monotonic */
    GHashTable *v4_pseudo;      /* handle ref + 1 of NFSv4 pseudo roots (apply-v4.c), or NULL */
    struct tbbt_trace_rec *v4_low;  /* apply-v4.c's lowered record (owned), or NULL */
    GPtrArray *v4_rewrites;     /* struct ns_v4_rewrite * (--v4-export; v4export.c), or NULL */
    GArray *v4_exports;         /* struct ns_v4_export: the pseudo paths lowered MOUNTs
                                   reached, first seen first (v4export.c), or NULL */
    uint64_t link_events;       /* links made or ended so far (paths are asked at those times) */
    bool trace_known;           /* the map's header names this trace (tbbt_ns_set_map_trace) */
    struct tbbt_trace_ident trace;
    struct tbbt_ns_stats st;
};

static inline struct ns_obj *ns_obj(const struct tbbt_ns *ns, uint32_t id)
{
    return ns_vec_at(&ns->objs, id);
}

static inline struct ns_link *ns_link(const struct tbbt_ns *ns, uint32_t l)
{
    return ns_vec_at(&ns->links, l);
}

static inline struct ns_key *ns_key(const struct tbbt_ns *ns, uint32_t k)
{
    return ns_vec_at(&ns->keys, k);
}

static inline bool ns_link_live(const struct ns_link *l)
{
    return l->child && l->delete_ns == NS_LIVE;
}

/* apply.c: operation kinds of NFSv2/v3/MOUNT procedures (enum tbbt_ns_op) */
enum ns_op {
    NS_OP_NONE = TBBT_NS_OP_NONE, NS_OP_ATTR = TBBT_NS_OP_ATTR,
    NS_OP_SETATTR = TBBT_NS_OP_SETATTR, NS_OP_LOOKUP = TBBT_NS_OP_LOOKUP,
    NS_OP_READLINK = TBBT_NS_OP_READLINK, NS_OP_READ = TBBT_NS_OP_READ,
    NS_OP_WRITE = TBBT_NS_OP_WRITE, NS_OP_CREATE = TBBT_NS_OP_CREATE,
    NS_OP_MKDIR = TBBT_NS_OP_MKDIR, NS_OP_SYMLINK = TBBT_NS_OP_SYMLINK,
    NS_OP_MKNOD = TBBT_NS_OP_MKNOD, NS_OP_REMOVE = TBBT_NS_OP_REMOVE,
    NS_OP_RMDIR = TBBT_NS_OP_RMDIR, NS_OP_RENAME = TBBT_NS_OP_RENAME,
    NS_OP_LINK = TBBT_NS_OP_LINK, NS_OP_READDIR = TBBT_NS_OP_READDIR,
    NS_OP_READDIRPLUS = TBBT_NS_OP_READDIRPLUS, NS_OP_MNT = TBBT_NS_OP_MNT,
};
int tbbt__ns_op(const struct tbbt_trace_rec *rec);
/* enum tbbt_ns_type of an ftype3 value. */
int tbbt__ns_ftype(uint32_t ftype);

/* model.c: identity */
uint32_t tbbt__ns_obj_new(struct tbbt_ns *ns, int type, uint64_t create_ns);
bool tbbt__ns_obj_gone(const struct tbbt_ns *ns, uint32_t id);
void tbbt__ns_handle_reserve(struct tbbt_ns *ns, uint32_t ref);
uint32_t tbbt__ns_key_intern(struct tbbt_ns *ns, uint64_t fsid, uint64_t fileid);
uint32_t tbbt__ns_key_find(const struct tbbt_ns *ns, uint64_t fsid, uint64_t fileid);
/* The object handle ref already stands for (by handle or by key), binding it; 0 if none. */
uint32_t tbbt__ns_fh_known(struct tbbt_ns *ns, uint32_t ref);
/* The object of handle ref, a new pre-existing one if none. */
uint32_t tbbt__ns_fh_resolve(struct tbbt_ns *ns, uint32_t ref);
void tbbt__ns_fh_bind(struct tbbt_ns *ns, uint32_t ref, uint32_t id);
/* Gives object id the key (fsid, fileid) if it has none. */
void tbbt__ns_obj_set_key(struct tbbt_ns *ns, uint32_t id, uint64_t fsid, uint64_t fileid);

/* model.c: names */
/* The link that holds (dir, name) now (live, deleted or negative), 0 if none. */
uint32_t tbbt__ns_dent_find(const struct tbbt_ns *ns, uint32_t dir, uint32_t name);
/* The live link's object at (dir, name), 0 if none. */
uint32_t tbbt__ns_dent_child(const struct tbbt_ns *ns, uint32_t dir, uint32_t name);
/* Binds (dir, name) to object id with a new link created at create_ns; returns it. */
uint32_t tbbt__ns_link_add(struct tbbt_ns *ns, uint32_t dir, uint32_t name, uint32_t id,
                           uint64_t create_ns);
/* Ends live link l at time t (the object may become deleted); it leaves the live list. */
void tbbt__ns_link_end(struct tbbt_ns *ns, uint32_t l, uint64_t t);
/* Records that (dir, name) is absent (a negative record) if the table has nothing there. */
void tbbt__ns_neg_add(struct tbbt_ns *ns, uint32_t dir, uint32_t name);
/* Moves live link l to (dir, name) at time t; (dir, name) must hold no live link. */
void tbbt__ns_link_move(struct tbbt_ns *ns, uint32_t l, uint32_t dir, uint32_t name, uint64_t t);
/* True if dir is obj or lies under obj (walking current parents). */
bool tbbt__ns_is_under(const struct tbbt_ns *ns, uint32_t dir, uint32_t obj);
/* True if putting obj into dir would make a loop (cheap unless obj has had children). */
bool tbbt__ns_would_loop(const struct tbbt_ns *ns, uint32_t dir, uint32_t obj);
/* The current parent of a directory: its first live link's, else from "..", else 0. */
uint32_t tbbt__ns_parent_of(const struct tbbt_ns *ns, uint32_t id);
/* First live link of id, 0 if none. */
uint32_t tbbt__ns_live_link(const struct tbbt_ns *ns, uint32_t id);
/* Object id got a successful reply while it had no name (see tbbt_ns_forget()). */
void tbbt__ns_mark_used(struct tbbt_ns *ns, uint32_t id);
/* Tells ns->infer (if set) that a lost call made, removed or moved a name. */
void tbbt__ns_infer(struct tbbt_ns *ns, enum tbbt_ns_infer_kind kind, uint32_t dir,
                    uint32_t name, uint32_t dir2, uint32_t name2, uint32_t obj);
/* Tells ns->infer that a lost call set obj's mode and owner. */
void tbbt__ns_infer_attrs(struct tbbt_ns *ns, uint32_t obj, uint32_t mode, uint32_t uid,
                          uint32_t gid);
/* Sets the type if unknown (or from attributes, which win over operations). */
void tbbt__ns_set_type(struct tbbt_ns *ns, uint32_t id, int type, bool from_attr);

/* v4export.c: NFSv4 export paths */
/*
 * The MOUNT path of pseudo path p[0..len) (absolute, as the client walked it) into out
 * (emptied first): with the --v4-export rules' longest matching PSEUDO replaced by its
 * PATH, else p itself.
 */
void tbbt__ns_v4_rewrite(const struct tbbt_ns *ns, const char *p, size_t len, GString *out);
/* A lowered MOUNT of pseudo path (pool ref) placed object obj: kept if the path is new. */
void tbbt__ns_v4_export_note(struct tbbt_ns *ns, uint32_t pseudo, uint32_t obj);

#endif
