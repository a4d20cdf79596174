/* SPDX-License-Identifier: MIT */
/*
 * Internals of tbbt-compare (compare.h has the algorithm).  Files:
 *   op.c        the summary of a record that matching and comparing need, keys, labels
 *   objmap.c    the object mapping: maps, image root, original ID -> replay ID
 *   match.c     the pass over both traces: the replay's pending window, matching, extras
 *   cred.c      credentials: whether the traces carry them, their hash and origin
 *   classify.c  the class of an extra operation
 *   diff.c      the differences of a matched pair, difference tables and examples
 *   racy.c      original operations whose reply raced another's change of its object
 *   timing.c    latency, lag, turnaround, rates
 *   examples.c  the second pass that formats the example records
 *   report.c    text and JSON;  plot.c  gnuplot figures;  compare.c  the run
 */
#ifndef TBBT_COMPARE_COMPARE_INT_H
#define TBBT_COMPARE_COMPARE_INT_H

#include "compare/compare.h"

#include "sched/fsdep.h"
#include "player/report.h"
#include "trace/trace.h"
#include "util/dlist.h"

#define CMP_NO_TURN INT64_MIN   /* op.turn_ns: no turnaround sample */

/* Post-op attributes a reply comparison looks at. */
struct tbbt__cmp_attr {
    uint32_t type, mode, nlink, uid, gid;
    uint64_t size;
};

/*
 * One operation, as much of its record as matching and comparing need.  A replay
 * operation waiting in the pending window owns its strings (own); an original one
 * borrows them from its record for the time it is looked at.
 */
struct tbbt__cmp_op {
    uint64_t seq;               /* index among the trace's op records, from 0 */
    uint64_t call_ns, reply_ns;
    uint64_t present;           /* TBBT_HAS bits of the record */
    uint64_t id, id2, id_obj, id_old;
    uint64_t offset, cookie, rdev;
    uint64_t last_cookie;       /* READDIR(PLUS): the last entry's cookie (0: no entry) */
    uint64_t key;               /* hash of the matching key (replay operations) */
    uint64_t shown;             /* the object its reply's attributes show (tbbt_fsdep_shown) */
    uint64_t cred;              /* hash of the credential for the key, 0: none (cred.c) */
    uint64_t a_at_read;         /* replay operations: the original's index when read */
    int64_t turn_ns;            /* turnaround sample or CMP_NO_TURN */
    struct tbbt_sattr sattr;
    struct tbbt__cmp_attr attr; /* with TBBT_F_OBJ_ATTR */
    uint32_t uid, gid;
    int32_t status;
    uint32_t count, stable, dircount, maxcount, access, createmode, ftype;
    uint32_t res_count, eof, committed, access_res;
    uint16_t flags;
    uint16_t name_len, name2_len, target_len;
    uint8_t prog, proc, rpc_stat;
    uint8_t kind;               /* enum tbbt_ns_op */
    uint8_t khas;               /* CMP_K_* parts of its key (set by tbbt__cmp_op_fill) */
    uint8_t origin;             /* enum tbbt__cmp_origin (replay operations) */
    bool matched;
    const char *name, *name2, *target;
    char *own;                  /* the strings' storage when owned, else NULL */
    struct tbbt_dlink klink;                /* pending operations of the same key */
};

/* A matching key: the replay's own IDs (for an original: mapped ones). */
struct tbbt__cmp_key {
    uint8_t prog, proc;
    uint8_t has;                /* CMP_K_* */
    uint64_t id, id2, offset;
    uint64_t cred;              /* credential hash, 0: none (always part of the key) */
    const char *name, *name2;
    uint16_t name_len, name2_len;
};
enum { CMP_K_ID = 1, CMP_K_ID2 = 2, CMP_K_NAME = 4, CMP_K_NAME2 = 8, CMP_K_OFFSET = 16 };

/* op.c */
/* Fills op from rec (borrowed strings when own is false, else copied into op->own). */
void tbbt__cmp_op_fill(struct tbbt__cmp_op *op, const struct tbbt_trace_rec *rec, uint64_t seq,
                       bool own);
/* Frees a heap operation and its strings. */
void tbbt__cmp_op_free(struct tbbt__cmp_op *op);
/* True for NFSv2 and NFSv3 records (the ones the player replays). */
bool tbbt__cmp_is_nfs(int prog);
/* The key of a replay operation from its own fields (borrows op's names). */
void tbbt__cmp_key_own(struct tbbt__cmp_key *k, const struct tbbt__cmp_op *op);
uint64_t tbbt__cmp_key_hash(const struct tbbt__cmp_key *k);
/* True when op's own key is k (from op's fields and parts, no key built). */
bool tbbt__cmp_key_equal(const struct tbbt__cmp_key *k, const struct tbbt__cmp_op *op);
/* A procedure's label (tbbt_proc_label(): "read", "v2.read", "mnt3.mnt"), "other" if
 * unknown; a static string. */
const char *tbbt__cmp_proc_label(int prog, int proc);
/* The outcome of op as a status label: "OK", "NOENT", "garbage_args", "noreply". */
void tbbt__cmp_status_label(const struct tbbt__cmp_op *op, char *buf, size_t len);
/* True for the procedures that make an object named in a directory. */
bool tbbt__cmp_makes_object(const struct tbbt__cmp_op *op);

/* objmap.c */
struct tbbt__cmp_objmap {
    GArray *a2b;                /* uint64_t replay ID per original ID, 0: none */
    GArray *refd;               /* uint8_t per original ID: named by an NFS operation */
    uint64_t by_path, conflicts, remaps;
    uint64_t ambiguous;         /* objects with alternatives (start paths) */
    GHashTable *alts;           /* original ID -> GArray of other replay IDs (start paths) */
    uint64_t root_a, root_b;    /* the roots' IDs */
    char *root_b_path;          /* "." or the image root's path in the replay's map */
    uint64_t chain_end_b;       /* the end of the replay's opening LOOKUP chain, 0: none */
    uint64_t startup_end_b;     /* index of the first replay record after its start-up */
};
/*
 * Loads both maps, decides whether the traces carry credentials (*creds: the original
 * does, and the replay too: then the player's start-up is found by the calls' origin),
 * finds the start-up and the image root, maps the start paths.  0 or an error with err.
 */
int tbbt__cmp_objmap_load(struct tbbt__cmp_objmap *m, const struct tbbt_compare_opts *o,
                          bool *creds, char *err, size_t errlen);
void tbbt__cmp_objmap_fini(struct tbbt__cmp_objmap *m);
uint64_t tbbt__cmp_objmap_get(const struct tbbt__cmp_objmap *m, uint64_t a);
/*
 * Maps a to b.  With proof (a create or LOOKUP that succeeded on both sides) it replaces
 * another mapping (counted in remaps), else a different existing one stays (counted in
 * conflicts).
 */
void tbbt__cmp_objmap_set(struct tbbt__cmp_objmap *m, uint64_t a, uint64_t b, bool proof);
void tbbt__cmp_objmap_ref(struct tbbt__cmp_objmap *m, uint64_t a);
/* The other replay objects that a's start paths name (borrowed), NULL if none. */
const GArray *tbbt__cmp_objmap_alts(const struct tbbt__cmp_objmap *m, uint64_t a);
/* Settles an ambiguous (mapped) a on b, one of its alternatives or its mapping. */
void tbbt__cmp_objmap_decide(struct tbbt__cmp_objmap *m, uint64_t a, uint64_t b);
/* Counts mapped and unmapped objects into cnt. */
void tbbt__cmp_objmap_count(const struct tbbt__cmp_objmap *m, struct tbbt_compare_counts *cnt);

/* classify.c */
enum tbbt__cmp_phase { CMP_BEFORE, CMP_DURING, CMP_AFTER };
/* Who sent a call (cred.c: the AUTH_SYS machine name), UNKNOWN without credentials. */
enum tbbt__cmp_origin { CMP_ORIGIN_UNKNOWN, CMP_ORIGIN_PLAYER, CMP_ORIGIN_REPLAYED };
enum tbbt_compare_extra tbbt__cmp_classify(enum tbbt__cmp_phase phase, int prog, int proc,
                                           bool retry, enum tbbt__cmp_origin origin);

/* diff.c: one difference table (key -> count and examples). */
struct tbbt__cmp_example {
    uint64_t a_seq, b_seq;      /* UINT64_MAX: none on that side */
};
struct tbbt__cmp_diff {
    char *key;
    uint64_t n;
    GArray *ex;                 /* struct tbbt__cmp_example, at most opts.show */
};
/* Fields that differ between two operations (static strings, filled by diff.c). */
#define CMP_MAX_FIELDS 24
struct tbbt__cmp_fields {
    const char *arg[CMP_MAX_FIELDS];
    unsigned n_arg;
    const char *reply[CMP_MAX_FIELDS];      /* not image ones: real, or racy (racy.c) */
    unsigned n_reply;
    const char *image[4];       /* a directory's "attr.size", "attr.nlink" */
    unsigned n_image;
    const char *client_time[4];
    unsigned n_client_time;
    bool status_differs, status_unchecked;
};

/* timing.c */
struct tbbt__cmp_lat {
    struct tbbt_hist a, b;
};
struct tbbt__cmp_lagsec {
    double sum;
    int64_t max;
    uint64_t n;
};
struct tbbt__cmp_timing {
    GHashTable *lat;            /* (prog << 8 | proc) -> struct tbbt__cmp_lat */
    bool have_origin;
    uint64_t origin_a, origin_b;
    struct tbbt_hist lag;       /* |lag| */
    GArray *lag_series;         /* struct tbbt__cmp_lagsec per second of the replay */
    struct tbbt_hist turn[2];
    uint64_t span_min[2], span_max[2];  /* matched calls: first and last, per side */
    GArray *prev_reply[2];      /* uint64_t per endpoint: the previous call's reply time */
    GArray *pairs;              /* struct tbbt__cmp_tpair per pair with both calls */
    struct tbbt_hist own, held, react;  /* see timing.c, "held" */
};
/* One matched pair's times, for the held/own split (timing.c). */
struct tbbt__cmp_tpair {
    uint64_t a_call, a_reply, b_call, b_reply;     /* reply 0: none */
};

/* cred.c: one trace's credentials, by reference (the reader's table), hashed once. */
struct tbbt__cmp_creds {
    GArray *ent;                /* struct tbbt__cmp_cred_ent per credential reference */
};
/*
 * racy.c: original operations whose reply shows an object another request was changing
 * at the same time (compare.h).  The original is read in call order; a pair with real
 * reply differences waits here until no later call can overlap it (its reply is older
 * than the latest call read), then its differences are counted as real or racy.
 */
struct tbbt__cmp_racy {
    GArray *wreply;             /* uint64_t per original ID: the latest reply of a writer */
    GQueue pending;             /* struct tbbt__cmp_pend, oldest first */
    GHashTable *by_obj;         /* original ID -> GQueue of its pending operations */
    uint64_t now;               /* the latest call time read */
};

struct tbbt_compare {
    struct tbbt_compare_opts o;
    struct tbbt_compare_counts cnt;
    struct tbbt__cmp_objmap map;
    struct tbbt__cmp_creds creds[2];    /* [0] original, [1] replay */
    struct tbbt__cmp_racy racy;
    GHashTable *diffs[TBBT_COMPARE_NKINDS];     /* key -> struct tbbt__cmp_diff */
    GHashTable *cookies;        /* (orig dir, orig page's last cookie) -> replay's */
    struct tbbt__cmp_timing t;
    GHashTable *lines[2];       /* seq -> formatted record (examples pass) */
    bool ran;
};

/* cred.c */
void tbbt__cmp_creds_init(struct tbbt__cmp_creds *cc);
void tbbt__cmp_creds_fini(struct tbbt__cmp_creds *cc);
/*
 * True when one of the first op records of the trace at path carries a credential; 0
 * or an error with err (*yes false).
 */
int tbbt__cmp_creds_scan(const char *what, const char *path, bool *yes, char *err,
                         size_t errlen);
/* The origin of rec (read by r): PLAYER for the machine name "tbbt-play", REPLAYED for
 * another one, UNKNOWN without a credential. */
enum tbbt__cmp_origin tbbt__cmp_rec_origin(struct tbbt_trace_reader *r,
                                           const struct tbbt_trace_rec *rec);
/*
 * rec's credential as a key part (0: none, or the player's own machine name) and its
 * origin, from cc's cache of r's table; UNKNOWN and 0 when c->cnt.credentials is off.
 */
uint64_t tbbt__cmp_cred(const struct tbbt_compare *c, struct tbbt__cmp_creds *cc,
                        struct tbbt_trace_reader *r, const struct tbbt_trace_rec *rec,
                        enum tbbt__cmp_origin *origin);

/* racy.c */
/* The objects one original record changes (tbbt_fsdep_changes()), computed once. */
struct tbbt__cmp_changes {
    uint64_t obj[TBBT_FSDEP_MAX_CHANGES];
    int n;
};
void tbbt__cmp_racy_init(struct tbbt__cmp_racy *r);
void tbbt__cmp_racy_fini(struct tbbt__cmp_racy *r);
/* The objects rec changes, into ch (for the two calls below). */
void tbbt__cmp_racy_changes(const struct tbbt_trace_rec *rec, struct tbbt__cmp_changes *ch);
/*
 * Before original record rec (changing ch) is matched: marks the waiting pairs whose
 * object rec changes while they were in progress, and counts the pairs no later call
 * can overlap.
 */
void tbbt__cmp_racy_before(struct tbbt_compare *c, const struct tbbt_trace_rec *rec,
                           const struct tbbt__cmp_changes *ch);
/* After it: remembers the objects rec changes, and when. */
void tbbt__cmp_racy_after(struct tbbt_compare *c, const struct tbbt_trace_rec *rec,
                          const struct tbbt__cmp_changes *ch);
/*
 * The real-or-racy reply differences f->reply of the matched pair (a, b): counted now
 * when a overlapped an earlier change of its object, else when no later call can.
 */
void tbbt__cmp_racy_pair(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                         const struct tbbt__cmp_op *b, const struct tbbt__cmp_fields *f);
/* At the original's end: counts every waiting pair. */
void tbbt__cmp_racy_flush(struct tbbt_compare *c);

/* diff.c */
/* Counts reply fields[0..n) of the pair (a_seq, b_seq) of procedure (prog, proc) as kind
 * (a REPLY* table), keyed "PROC.FIELD". */
void tbbt__cmp_count_reply(struct tbbt_compare *c, enum tbbt_compare_kind kind, int prog,
                           int proc, uint64_t a_seq, uint64_t b_seq, const char *const *fields,
                           unsigned n);
/* How many argument fields of the pair differ (the ranking of candidates, match.c). */
unsigned tbbt__cmp_arg_diffs(const struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                             const struct tbbt__cmp_op *b);
/* Compares a matched pair and counts its differences; true when identical. */
bool tbbt__cmp_pair(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                    const struct tbbt__cmp_op *b);
/* Counts one difference of kind under key, keeping (a_seq, b_seq) as an example. */
void tbbt__cmp_count(struct tbbt_compare *c, enum tbbt_compare_kind kind, const char *key,
                     uint64_t a_seq, uint64_t b_seq);
/* Remembers the replay cookie that continues a matched READDIR(PLUS) page. */
void tbbt__cmp_cookie_learn(struct tbbt_compare *c, const struct tbbt__cmp_op *a,
                            const struct tbbt__cmp_op *b);
void tbbt__cmp_diffs_init(struct tbbt_compare *c);
void tbbt__cmp_diffs_fini(struct tbbt_compare *c);
/* The table of kind sorted by count (then key); given: g_ptr_array_free(a, TRUE) ... */
GPtrArray *tbbt__cmp_sorted(const struct tbbt_compare *c, enum tbbt_compare_kind kind);

/* timing.c */
void tbbt__cmp_timing_init(struct tbbt__cmp_timing *t);
/* Splits the lag of the pairs into held and own (after the last pair; call once). */
void tbbt__cmp_timing_held(struct tbbt__cmp_timing *t, double speed);
void tbbt__cmp_timing_fini(struct tbbt__cmp_timing *t);
/* The turnaround sample of a record of side (0 original, 1 replay), in trace order. */
int64_t tbbt__cmp_turnaround(struct tbbt__cmp_timing *t, int side,
                             const struct tbbt_trace_rec *rec);
void tbbt__cmp_timing_pair(struct tbbt__cmp_timing *t, double speed, const struct tbbt__cmp_op *a,
                           const struct tbbt__cmp_op *b);
void tbbt__cmp_timing_summary(const struct tbbt__cmp_timing *t, uint64_t matched,
                              struct tbbt_compare_timing *out);
/* The keys of t->lat sorted by procedure label (given: g_ptr_array_free(k, TRUE)). */
GPtrArray *tbbt__cmp_lat_keys(const struct tbbt__cmp_timing *t);
/* The procedure label of a key of t->lat. */
const char *tbbt__cmp_lat_label(gconstpointer key);

/* match.c: the pass over both traces. */
int tbbt__cmp_match(struct tbbt_compare *c, char *err, size_t errlen);
/* examples.c: formats the example records of every difference table into c->lines. */
int tbbt__cmp_examples(struct tbbt_compare *c, char *err, size_t errlen);
/* Opens a trace with a one-line reason on failure. */
struct tbbt_trace_reader *tbbt__cmp_open(const char *what, const char *path, char *err,
                                         size_t errlen);
/* A one-line reason for a reader error at the reader's offset. */
void tbbt__cmp_read_error(struct tbbt_trace_reader *r, const char *what, const char *path,
                          int rc, char *err, size_t errlen);

#endif
