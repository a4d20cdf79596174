/* SPDX-License-Identifier: MIT */
/*
 * The namespace model of hierarchy extraction (TBBT paper 3.1 and 3.2, and
 * the third pass of section 4): every file system object of a trace gets a
 * TBBT-ID that never changes, every record learns the IDs of the objects it
 * names, and the model keeps the parent/name links that the directory
 * operations of the trace prove, so that it can write the hierarchy map
 * (docs/hierarchy-map.md) that tbbt-init builds the initial image from.
 *
 * Use in hierarchy extraction (src/extract/hier.c), two reads of the raw trace:
 *   1. identity scan: tbbt_ns_ident_scan() for every record: it learns which
 *      (fsid, fileid) each handle stands for, so that handles naming one
 *      object share one ID even when the attributes come late;
 *   2. replay: tbbt_ns_apply() for every record, in trace order: it fills the
 *      record's ID fields (id, id2, id_obj, id_old, readdir entry ids) and
 *      updates the model from the recorded outcome; then tbbt_ns_write_map().
 * Memory is O(handles + objects + names): no record is kept.
 *
 * Use in pre-play correction (TBBT paper 3.1; src/extract/correct.c): the
 * model answers "what would this operation return now?" with
 * tbbt_ns_predict(), tells of the lost calls it infers through
 * tbbt_ns_set_infer(), and applies corrective records (IDs, no handles) by
 * ID.  The --check pass loads a map's start state with tbbt_ns_load_start()
 * into a closed-world, by-ID model.
 *
 * Names are data: a name that is empty, ".", "..", or holds '/' or NUL never
 * becomes a link of the model, so the map can never name a path outside the
 * export root; lookups of ".." only tell a directory's parent.
 *
 * Nothing here is thread-safe; one model per thread.
 */
#ifndef TBBT_NS_NS_H
#define TBBT_NS_NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"
#include "util/json.h"

/* Object types of the model and the map. */
enum tbbt_ns_type {
    TBBT_NS_UNKNOWN = 0,    /* never seen with attributes or a typing operation */
    TBBT_NS_FILE = 1,       /* regular file (map type f) */
    TBBT_NS_DIR = 2,        /* directory (d) */
    TBBT_NS_SYMLINK = 3,    /* symbolic link (l) */
    TBBT_NS_OTHER = 4,      /* device, socket, FIFO (o) */
};

struct tbbt_ns;

/* A new, empty model (open world).  Given: free with tbbt_ns_free(). */
struct tbbt_ns *tbbt_ns_new(void);
/* Frees ns and everything it holds; NULL is a no-op. */
void tbbt_ns_free(struct tbbt_ns *ns);

/*
 * True if name[0..len) may be a path component: 1..255 bytes, no '/' or NUL,
 * not "." or "..".  Thread-safe.
 */
bool tbbt_ns_name_ok(const void *name, size_t len);

/* ---- hierarchy extraction ------------------------------------------------- */

/*
 * Identity scan: records, for each handle of rec that comes with attributes
 * (object, directory, second directory, readdirplus entries), the (fsid,
 * fileid) it stands for.  The first pair seen for a handle wins; a handle
 * later seen with another pair is counted (key_conflicts).  Call for every
 * record of the trace, in order, before the first tbbt_ns_apply(); rec is
 * borrowed for the call.  Handle references are those of the trace file.
 */
void tbbt_ns_ident_scan(struct tbbt_ns *ns, const struct tbbt_trace_rec *rec);

/*
 * Replay: assigns TBBT-IDs and updates the model from one record, which must
 * come in trace order.  Fills in rec (TBBT_SET):
 *   id      the object of fh          id2     the object of fh2
 *   id_obj  the object (fh, name) names: lookup result, created object,
 *           removed object, renamed (moved) object, link's object
 *   id_old  the object a rename (or a create over a name the model had
 *           bound to another object) replaced
 *   entries[i].id with TBBT_ENT_ID, for readdir(plus) entries the model
 *           can name
 * IDs are dense integers from 1 in order of first appearance.  Handles that
 * share (fsid, fileid) share an ID while the object lives; handles never
 * seen with attributes get an ID each.  The model learns only from what the
 * reply proves: successes, and the failures NOENT (absence), EXIST and
 * NOTEMPTY (presence); records without a reply only get IDs.  Records that
 * carry IDs but no handles (corrective records) are applied by ID; ID fields
 * that name no object are dropped.
 */
void tbbt_ns_apply(struct tbbt_ns *ns, struct tbbt_trace_rec *rec);
/*
 * An NFSv4 COMPOUND record (replied) lowered to the NFSv3 and MOUNT records of what its
 * operations did (apply-v4.c), fn called with each (a record of the model's, valid for
 * the call), which fn applies with tbbt_ns_apply() or not: tbbt_ns_apply() of an NFSv4
 * record is this with fn applying each.  Pre-play correction compares each first.
 */
typedef void (*tbbt_ns_lowered_fn)(void *arg, struct tbbt_ns *ns, struct tbbt_trace_rec *low);
void tbbt_ns_v4_lower(struct tbbt_ns *ns, const struct tbbt_trace_rec *rec,
                      tbbt_ns_lowered_fn fn, void *arg);
/*
 * The same as if the reply had said `status` (a record whose reply was lost,
 * applied with the outcome a replay would get); rec's own reply fields are
 * neither read nor changed.
 */
void tbbt_ns_apply_outcome(struct tbbt_ns *ns, struct tbbt_trace_rec *rec, int32_t status);

/* ---- queries -------------------------------------------------------------- */

/* Number of objects (the largest ID). */
uint64_t tbbt_ns_count(const struct tbbt_ns *ns);
/*
 * The export root's ID, 0 if none yet.  With MOUNT traffic, the root is the deepest
 * directory at or above every path the clients mounted, and each mounted directory is
 * placed at its path under it (a client that mounts export/home/u1 works in home/u1
 * of the image); without, tbbt_ns_write_map() takes the top directory of the trace's
 * objects for it.
 */
uint64_t tbbt_ns_root(const struct tbbt_ns *ns);

/* What the model knows about one object. */
struct tbbt_ns_obj_info {
    enum tbbt_ns_type type;
    uint64_t size_at_start;     /* exact with size_known, else a lower bound */
    bool size_known;
    uint64_t create_ns;         /* 0: existed before the trace */
    bool deleted;
    uint64_t delete_ns;         /* with deleted */
    uint32_t live_links;        /* names the object has now */
    uint32_t children;          /* live names in it (directories) */
    uint64_t parent;            /* directory holding its first live name (or from ".."), 0 */
};
/* Fills *info for id; 0, or TBBT_E_RANGE if id is not an object. */
int tbbt_ns_obj_info(const struct tbbt_ns *ns, uint64_t id, struct tbbt_ns_obj_info *info);

/* Results of tbbt_ns_lookup(). */
enum tbbt_ns_lookup_res {
    TBBT_NS_ABSENT = 0,     /* proven absent, or unknown in a closed world or in a directory
                             * made in the trace (it started empty) */
    TBBT_NS_PRESENT = 1,    /* *child holds the object */
    TBBT_NS_UNSURE = 2,     /* open world: the model has never heard of the name */
};
/*
 * Looks up name[0..len) in directory dir without changing the model.  ".."
 * and "." answer the parent (if known) and dir itself.
 */
enum tbbt_ns_lookup_res tbbt_ns_lookup(const struct tbbt_ns *ns, uint64_t dir, const void *name,
                                       size_t len, uint64_t *child);

/* ---- pre-play correction hooks -------------------------------------------- */

/* enum tbbt_ns_op and tbbt_ns_op() live beside the trace record: trace/opkind.h. */

/*
 * The object that rec's directory (second: fh2/id2, else fh/id) stands for
 * now, as tbbt_ns_predict() sees it: the ID field if present, else the
 * handle's object if the model knows it; 0 if none.  Never changes the model.
 */
uint64_t tbbt_ns_rec_dir(const struct tbbt_ns *ns, const struct tbbt_trace_rec *rec,
                         bool second);

/* The object handle reference ref stands for now, 0 if the model does not know it. */
uint64_t tbbt_ns_handle_obj(const struct tbbt_ns *ns, uint32_t ref);

/*
 * Closed world: names the model has never heard of are absent (the model
 * holds the whole image, as after loading the map's start state).  Default:
 * open world (extraction: unknown names may exist).
 */
void tbbt_ns_set_closed(struct tbbt_ns *ns, bool closed);

/*
 * By-ID mode: tbbt_ns_apply() and tbbt_ns_predict() take objects from the
 * record's ID fields only (id, id2, id_obj, id_old) and ignore its handles
 * and readdir entries, as for a trace whose IDs are final (the --check pass
 * over a model loaded with tbbt_ns_load_start()).  Default: off.
 */
void tbbt_ns_set_by_id(struct tbbt_ns *ns, bool by_id);
bool tbbt_ns_by_id(const struct tbbt_ns *ns);

/*
 * Loads the start state of a hierarchy map (docs/hierarchy-map.md) into an
 * empty model: every ID of the map becomes an object of that ID and type,
 * entries with create time 0 become names at their path, the first entry is
 * the root.  IDs up to max_id (the largest a trace's records carry) that the
 * map leaves out are gone from the start; the synthetic tbbt-orphans
 * directory gets an ID above both.  Then switches the model to the closed world and to
 * by-ID mode.  Returns 0, or a negative error (TBBT_E_SYNTAX, TBBT_E_MAGIC,
 * TBBT_E_VERSION, TBBT_E_RANGE for an ID above 2^31 or a start path whose
 * directory is not in the start state, -errno) with a one-line reason
 * naming the file and line in errbuf.  Memory: the model, plus a table of
 * the start directories' paths while it runs.
 */
int tbbt_ns_load_start(struct tbbt_ns *ns, const char *map_path, uint64_t max_id, char *errbuf,
                       size_t errlen);

/*
 * Calls fn for every live name in directory dir (in no particular order):
 * the name's bytes (borrowed for the call) and the object it names.  Scans
 * every link of the model, O(names): meant for rare events (an rmdir whose
 * directory still holds names).  fn must not change the model.
 */
void tbbt_ns_each_child(const struct tbbt_ns *ns, uint64_t dir,
                        void (*fn)(const void *name, size_t len, uint64_t child, void *arg),
                        void *arg);

/*
 * What the model inferred a lost call did, while it applied a record: a
 * name came (CREATE: dir/name, obj of type), went (REMOVE: dir/name, obj),
 * or moved (RENAME: dir/name to dir2/name2, obj).  Pre-play correction turns
 * each into a corrective record (the model has applied it already).
 */
enum tbbt_ns_infer_kind {
    TBBT_NS_INFER_CREATE, TBBT_NS_INFER_REMOVE, TBBT_NS_INFER_RENAME,
    TBBT_NS_INFER_SETATTR,      /* obj's mode or owner changed without a SETATTR: a lost one
                                 * set mode, uid, gid (the paper's "permission denied ->
                                 * setattr"); dir and names are unused */
};
struct tbbt_ns_inferred {
    enum tbbt_ns_infer_kind kind;
    uint64_t dir, dir2, obj;
    const void *name, *name2;   /* borrowed for the call */
    size_t len, len2;
    enum tbbt_ns_type type;
    uint32_t mode, uid, gid;    /* SETATTR: the new values */
};
typedef void (*tbbt_ns_infer_fn)(void *arg, const struct tbbt_ns_inferred *e);
/* Calls fn (with arg) for each inference from now on; NULL: none.  fn must not touch ns. */
void tbbt_ns_set_infer(struct tbbt_ns *ns, tbbt_ns_infer_fn fn, void *arg);

/*
 * Object id, which has no name now, is gone from time t on (a STALE reply
 * proved it).  Returns false (and changes nothing) if it has a live name, has
 * ever held names, is the root or is gone already.  An object that never
 * answered a call successfully is left out of the map: the start image does
 * not have it.  One that did existed at trace start under a name the trace
 * never showed: it gets one in the made-up top-level directory "tbbt-gone"
 * (named by its ID), which a lost call removed at t (told to the inference
 * hook as a REMOVE).
 */
bool tbbt_ns_forget(struct tbbt_ns *ns, uint64_t id, uint64_t t);

/*
 * Calls fn for every live name of object id: the directory, the name's
 * bytes (borrowed for the call).  fn must not change the model.
 */
void tbbt_ns_each_name(const struct tbbt_ns *ns, uint64_t id,
                       void (*fn)(uint64_t dir, const void *name, size_t len, void *arg),
                       void *arg);

/*
 * Predicts the NFS status (same numbers in v2 and v3: 0 OK, 2 NOENT, 17
 * EXIST, 20 NOTDIR, 21 ISDIR, 22 INVAL, 66 NOTEMPTY, 70 STALE) that rec's
 * operation would get against the model now.  Uses rec's ID fields when
 * present, else the handles' IDs (without assigning new ones).  Returns 1 and
 * sets *status, or 0 when the model cannot tell (open world, unknown name or
 * object, or an operation whose outcome does not depend on the namespace).
 * Never changes the model.
 */
int tbbt_ns_predict(const struct tbbt_ns *ns, const struct tbbt_trace_rec *rec,
                    int32_t *status);

/*
 * A new object of the given type that exists from the start of the trace
 * (corrective creates give the object a name by tbbt_ns_apply() of a create
 * record carrying it in id_obj).  Returns its ID.
 */
uint64_t tbbt_ns_new_id(struct tbbt_ns *ns, enum tbbt_ns_type type);

/* ---- NFSv4 exports ------------------------------------------------------------ */

/*
 * tbbt-convert --v4-export PSEUDO=PATH: the export that NFSv4 clients reach at pseudo
 * path PSEUDO has the real path PATH (the path NFSv3 clients MOUNT), e.g.
 * "/export=/srv/nfs/export".  Both sides absolute, each component a name
 * (tbbt_ns_name_ok(); "/" alone is the root), at most TBBT_PATH_MAX bytes, exactly one
 * '='.  Checks spec; 0, or -1 with a one-line reason in err.  Thread-safe.
 */
int tbbt_ns_v4_export_check(const char *spec, char *err, size_t errlen);
/*
 * Adds a checked spec to ns (before the first record): a lowered NFSv4 MOUNT whose
 * pseudo path is PSEUDO or starts with PSEUDO + "/" gets PSEUDO replaced by PATH (the
 * longest matching PSEUDO wins), so that NFSv3 and NFSv4 clients of one export share
 * one tree in the map.  The map's "# v4-export" lines keep the pseudo paths as
 * traced.  0, or -1 with the reason of tbbt_ns_v4_export_check().
 */
int tbbt_ns_add_v4_export(struct tbbt_ns *ns, const char *spec, char *err, size_t errlen);

/* ---- counters and the map -------------------------------------------------- */

struct tbbt_ns_stats {
    uint64_t records;           /* records applied */
    uint64_t objects;           /* IDs given */
    uint64_t handles;           /* handles that got an ID */
    uint64_t merged_handles;    /* handles that share their object with an earlier handle */
    uint64_t key_conflicts;     /* a handle seen with two (fsid, fileid) pairs */
    uint64_t hostile_names;     /* names that could not be components (see docs) */
    uint64_t dotdot_lookups;    /* successful lookups of ".." (parent evidence) */
    uint64_t identity_mismatches;  /* a name the model had bound to another object */
    uint64_t inferred_creates;  /* names seen after the model had proven them absent */
    uint64_t inferred_removes;  /* names proven absent while the model had them */
    uint64_t cycles_refused;    /* renames or ".." links that would make a loop */
    uint64_t map_entries;       /* lines written by the last tbbt_ns_write_map() */
    uint64_t orphans;           /* objects placed under tbbt-orphans/ */
    uint64_t subtrees;          /* unrooted top-level directories tbbt-subtree-ID */
    uint64_t unnamed;           /* directories placed as tbbt-unnamed-ID under their parent */
    uint64_t untyped;           /* objects whose type stayed unknown (written as f) */
    uint64_t stale_objects;     /* never named, only ever STALE: not in the map */
    uint64_t mounts;            /* distinct (path, handle) MNTs the identity scan saw */
    uint64_t mounts_placed;     /* mounted directories placed at their path under the root */
    uint64_t mount_conflicts;   /* mounts whose path the model had given another object */
    uint64_t root_inferred;     /* 1: no MOUNT named the root; the top directory of the
                                   trace's objects was taken for it */
    uint64_t exec_order_moves;  /* records applied before an earlier call they raced with
                                   and beat (tbbt-convert pass B; tbbt_ns_note_reordered) */
};
void tbbt_ns_stats(const struct tbbt_ns *ns, struct tbbt_ns_stats *st);
/* Adds n to exec_order_moves (the caller's reordering of the records it applies). */
void tbbt_ns_note_reordered(struct tbbt_ns *ns, uint64_t n);

/*
 * Writes the summary keys of hierarchy extraction into an open JSON object:
 * objects, map_entries, orphans, hostile_names, subtrees, and the other
 * counters of struct tbbt_ns_stats under their names.
 */
void tbbt_ns_summary(const struct tbbt_ns *ns, struct tbbt_json *j);

/*
 * Writes the hierarchy map (docs/hierarchy-map.md) to out: a header line
 * (version 3, with the trace's identity if tbbt_ns_set_map_trace() gave one),
 * a "# v4-export" line (tab, PSEUDO, tab, MAPPATH) per NFSv4 pseudo path the trace's
 * clients walked to an export, then one line per (object, path), every directory's
 * entry before the entries in it, and last the checksum line (util/textsum.h).  Call after
 * the last tbbt_ns_apply(); the model is not changed (apart from the map
 * counters).  Returns 0, or -errno if writing
 * failed.  Uses O(objects + names) extra memory while it runs.
 */
int tbbt_ns_write_map(struct tbbt_ns *ns, FILE *out);
/* Same into a file (created or truncated); 0 or -errno. */
int tbbt_ns_write_map_file(struct tbbt_ns *ns, const char *path);
/*
 * The trace the next map is written for (its identity goes into the map's
 * header, docs/hierarchy-map.md); id borrowed for the call, NULL: none.
 */
void tbbt_ns_set_map_trace(struct tbbt_ns *ns, const struct tbbt_trace_ident *id);
/* The default map path beside a trace: "<trace>.map".  Given: g_free(). */
char *tbbt_ns_map_path(const char *trace_path);

/*
 * The map's escaping of path and target bytes (docs/hierarchy-map.md,
 * "Escaping"), for other files that list paths (tbbt-init's manifest):
 * tbbt_ns_escape() appends p[0..len) escaped to s; tbbt_ns_unescape() puts
 * the bytes s[0..len) stands for into out (emptied first) and returns false
 * for a malformed escape or a raw byte outside 0x20-0x7e.  Thread-safe.
 */
void tbbt_ns_escape(GString *s, const void *p, size_t len);
bool tbbt_ns_unescape(const char *s, size_t len, GString *out);

/*
 * A relative path field s[0..len) (escaped; not ".") into out (emptied first):
 * components split at raw '/', each unescaped into comp (scratch) and checked with
 * tbbt_ns_name_ok(), joined by '/'.  Returns 0, TBBT_NS_RELPATH_ESCAPE (a bad escape
 * or raw byte) or TBBT_NS_RELPATH_NAME (a component empty, ".", "..", too long, or
 * holding '/' or NUL); *k (may be NULL) gets the number of the component that failed
 * (from 1).  The map's path fields and the manifest's obj, clone and made paths.
 * Thread-safe.
 */
enum { TBBT_NS_RELPATH_ESCAPE = -1, TBBT_NS_RELPATH_NAME = -2 };
int tbbt_ns_unescape_relpath(const char *s, size_t len, GString *out, GString *comp,
                             size_t *k);

/* ---- map reader (tbbt-init, the player, tests) ----------------------------- */

/* One map line, decoded and validated. */
struct tbbt_ns_map_entry {
    uint64_t id;                /* 0 only for the synthetic tbbt-orphans directory */
    enum tbbt_ns_type type;     /* FILE, DIR, SYMLINK or OTHER */
    uint64_t size;              /* bytes at trace start (see size_state) */
    int size_state;             /* 0 unknown, 1 exact, 2 a lower bound */
    uint64_t create_ns;         /* 0: exists before the trace */
    bool deleted;
    uint64_t delete_ns;         /* with deleted */
    const char *path;           /* "." for the root, else components joined by '/' */
    size_t path_len;
    const char *final_path;     /* where it was at the end of the trace or its deletion */
    size_t final_len;
    const char *target;         /* symlink target bytes, or NULL */
    size_t target_len;
    uint32_t links;             /* entries with this id in the map */
    bool attrs_known;           /* mode, uid, gid below hold the object's at trace start */
    uint32_t mode, uid, gid;
};

#define TBBT_NS_MAP_SIZE_MAX (UINT64_C(1) << 50)  /* largest size a map may give (1 PiB) */

struct tbbt_ns_map_reader;
/*
 * Opens a map ("-" = stdin, copied to a temporary file) and checks its header
 * line; a version 3 map's checksum line is checked here, over the whole file,
 * before any entry is read.  A version 2 map (no checksum) is read with one
 * warning (tbbt_log, once per process, when _next() reaches its end without an
 * error).  path is borrowed for the call.  NULL
 * and *err: -errno, TBBT_E_MAGIC (a missing or foreign header),
 * TBBT_E_VERSION, TBBT_E_SYNTAX (a malformed version 3 header), TBBT_E_TRUNC
 * (no checksum line: cut short), TBBT_E_CHECKSUM (contents changed);
 * tbbt_ns_map_open_error() words each for a message.
 */
struct tbbt_ns_map_reader *tbbt_ns_map_reader_open(const char *path, int *err);
/* A one-line reason for an error of tbbt_ns_map_reader_open() (static). */
const char *tbbt_ns_map_open_error(int err);
/* The map's format version: 2 (no checksum) or 3. */
int tbbt_ns_map_reader_version(const struct tbbt_ns_map_reader *r);
/* True and *id if the header names the trace the map was made with (version 3). */
bool tbbt_ns_map_reader_trace(const struct tbbt_ns_map_reader *r, struct tbbt_trace_ident *id);
/* True and *crc (the checksum line's value) for a version 3 map. */
bool tbbt_ns_map_reader_crc(const struct tbbt_ns_map_reader *r, uint32_t *crc);
/*
 * Reads the next entry into *e (strings borrowed: valid until the next call
 * or close).  Returns 1, 0 at the end, or TBBT_E_SYNTAX for a line that does
 * not parse or breaks a rule (a component that is empty, ".", "..", or holds
 * '/' or NUL; "." anywhere but as the first entry's whole path), with the
 * reason in tbbt_ns_map_reader_error() and the line in _line(); -errno on I/O
 * errors.
 */
int tbbt_ns_map_reader_next(struct tbbt_ns_map_reader *r, struct tbbt_ns_map_entry *e);
uint64_t tbbt_ns_map_reader_line(const struct tbbt_ns_map_reader *r);
const char *tbbt_ns_map_reader_error(const struct tbbt_ns_map_reader *r);
void tbbt_ns_map_reader_close(struct tbbt_ns_map_reader *r);

/*
 * The map's "# v4-export" header lines (tab, PSEUDO, tab, PATH; docs/hierarchy-map.md):
 * the NFSv4 pseudo path a traced client walked to reach an export, and the map path of
 * the directory it reached.  pseudo: unescaped, absolute; path: unescaped, relative, ""
 * for the root.
 */
struct tbbt_map_v4export {
    char *pseudo;
    char *path;
};
/*
 * Opens the map at map_path (borrowed; checked as tbbt_ns_map_reader_open() does,
 * checksum included) and returns its v4-export lines, in map order, in *out (a new
 * array of struct tbbt_map_v4export *, empty when there are none; free with
 * tbbt_map_v4_exports_free()).  Returns 0, or -1 with a one-line reason naming the
 * file and line in err (*out is then NULL).  Reads only the header lines.
 */
int tbbt_map_v4_exports(const char *map_path, GPtrArray **out, char *err, size_t errlen);
/* Frees an array of tbbt_map_v4_exports(); NULL is a no-op. */
void tbbt_map_v4_exports_free(GPtrArray *a);

/* What tbbt_ns_map_check() found. */
struct tbbt_ns_map_info {
    int version;                /* 2 or 3 */
    bool summed;                /* version 3: crc holds the checksum line's value */
    uint32_t crc;
    bool trace_known;           /* the header names the trace it was made with */
    struct tbbt_trace_ident trace;
    uint64_t entries, objects;
    uint64_t root_id;           /* the first entry's ID if its path is ".", else 0 */
    uint32_t digest;            /* CRC32 of the decoded entries (every field): two maps
                                   with the same digest load the same */
};
/*
 * Reads the whole map at path (borrowed) through the reader and checks the
 * rules that span lines: the entries of one ID agree on type, size, target,
 * links and attributes, and there are as many as their links field says; the
 * directory of every entry with create time 0 is "." or an earlier directory
 * entry with create time 0.  Returns 0 and *info, or a negative error with a
 * one-line reason naming the file, the line and the field in err.  Memory:
 * O(objects + start directories).
 */
int tbbt_ns_map_check(const char *path, struct tbbt_ns_map_info *info, char *err,
                      size_t errlen);
/*
 * The same, and appends to starts (a GArray of uint64_t, borrowed) the key of every
 * entry with create time 0, tbbt_ns_start_key(id, path), sorted: so that tbbt-play can
 * check every `obj ID PATH` line of a manifest against the map (8 bytes per entry).
 */
int tbbt_ns_map_check_starts(const char *path, struct tbbt_ns_map_info *info, GArray *starts,
                             char *err, size_t errlen);
/* The key of (id, start path[0..len)): id << 32 | CRC32 of the path.  Thread-safe. */
uint64_t tbbt_ns_start_key(uint64_t id, const char *path, size_t len);

#endif
