/* SPDX-License-Identifier: MIT */
/*
 * Private to the nfsdump text-trace reader of tbbt-convert (source-nfsdump.c
 * and the nfsdump-*.c files it is split into): the per-line scratch storage,
 * the reader's state, the token and key types, and the functions one file of
 * the reader gives another.  Nothing outside src/extract/ includes it; the
 * reader's only public face is tbbt__source_nfsdump (conv-int.h).  The format
 * is in docs/nfsdump-format.md.
 *
 * All of it is single-threaded, like the conversion core.  Pointers into a
 * line (tokens, struct nd_str offsets, handle indexes) are borrowed from
 * struct nd_state and valid until the next line is reset
 * (tbbt__nd_reset_line()).
 */
#ifndef TBBT_EXTRACT_NFSDUMP_INT_H
#define TBBT_EXTRACT_NFSDUMP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "extract/conv-int.h"
#include "extract/stepclock.h"
#include "util/json.h"

#define N_ATTR 4                    /* attribute sets kept per line */
#define N_PRE 2                     /* pre-operation (wcc) sets kept per line */
#define B(f) ((uint64_t)1 << (f))

enum { ND_OK = 0, ND_BAD = 1, ND_OTHER = 2 };         /* how a line parsed */
enum { R_NONE = 0, R_OBJ, R_DIR, R_DIR2 };            /* whose attributes a set is */

/* ---- tokens and keys ---------------------------------------------------------- */

/* A token of a line: a run of non-blanks, or a quoted string with its quotes. */
struct tok {
    const char *p;
    uint32_t len;
    bool quoted;    /* starts with '"' */
    bool open;      /* quoted, and the closing quote is missing */
};

enum key {
    K_NONE, K_ACC, K_ATIME, K_BEGOFF, K_BLKSIZE, K_BLOCKS, K_COOKIE, K_COOKIEVERF, K_COUNT,
    K_CREATEVERF, K_CTIME, K_DIRCOUNT, K_DIRPATH, K_EGID, K_EOF, K_EUID, K_FH, K_FH2,
    K_FILEID, K_FN2, K_FROM, K_FSID, K_FTYPE, K_GID, K_HOW, K_MAXCOUNT, K_MODE, K_MTIME,
    K_NAME, K_NAME2, K_NFSSTAT, K_NLINK, K_OFF, K_PRE_CTIME, K_PRE_MTIME, K_PRE_SIZE, K_RDEV,
    K_RDEV2, K_SDATA, K_SIZE, K_STABLE, K_TCOUNT, K_TO, K_UID, K_USED, K_VERF, K_WRITEVERF,
    K_NKEYS
};

/*
 * What each procedure carries comes from the catalogue (trace/opkind.h): the
 * call's fields, and the reply's fields that keys set (attribute sets go by
 * reply_layout()).
 */
#define ATTR_FIELDS                                                                               \
    (B(TBBT_F_OBJ_ATTR) | B(TBBT_F_OBJ_PRE) | B(TBBT_F_DIR_ATTR) | B(TBBT_F_DIR_PRE) |            \
     B(TBBT_F_DIR2_ATTR) | B(TBBT_F_DIR2_PRE))

/* Whose attribute sets (in line order) and pre-operation sets a reply carries. */
struct layout {
    uint8_t attr[2];
    uint8_t pre[2];
};

/* ---- state -------------------------------------------------------------------- */

struct nd_str {
    uint32_t off, len;      /* in nd_state.sbuf (strings) or nd_state.fhbytes (handles) */
};

/* One attribute set as the line gives it (fattr3, or v2 fattr with blocks/blksize). */
struct nd_attr {
    struct tbbt_fattr a;
    uint32_t rdev1, rdev2, blocks, blksize;
    uint32_t seen;          /* attr_bit of each key read */
};

struct nd_pre {
    struct tbbt_wcc_pre w;
    uint32_t seen;          /* 1 size, 2 mtime, 4 ctime */
};

enum { E_FILEID = 1, E_NAME = 2, E_COOKIE = 4, E_FH = 8 };

struct nd_entry {
    uint64_t fileid, cookie;
    struct nd_str name;
    uint32_t fh;            /* index in nd_state.fhs, with E_FH */
    uint32_t seen;          /* E_* */
    struct nd_attr attr;
};

/* Everything one line says, before it goes to the core. */
struct nd_line {
    uint64_t ts_ns;
    uint32_t src, dst, xid, proc, uid, gid;
    uint16_t sport, dport;
    int prog;
    int32_t status;
    bool tcp, call, v2, known, has_status, ok;
    bool short_;            /* nfsdump could not print all of the message (SHORT PACKET ...) */
    bool cut;               /* the input ended inside this line */
    bool last_complete;     /* the cut line ends with a blank: its last token is whole */
    bool in_entries;        /* readdir reply keys now describe entries */
    uint64_t allowed;       /* fields keys may set for this procedure and direction */
    struct layout lo;
    struct tbbt_trace_rec r;    /* scalars and present bits; fh/fh2/new_fh hold fhs indexes */
    struct nd_str name, name2, target, dirpath;
    struct nd_attr attrs[N_ATTR];
    struct nd_pre pres[N_PRE];
    int nattr, npre;
};

struct nd_state {
    struct tbbt__conv *conv;
    char *buf;                  /* read buffer: LINE_MAX_BYTES + READ_CHUNK */
    struct tok *toks;
    uint32_t ntok, tokcap;
    GByteArray *sbuf;           /* the line's unescaped strings */
    GByteArray *fhbytes;        /* the line's handle bytes */
    GArray *fhs;                /* struct nd_str per handle of the line */
    GArray *ents;               /* struct nd_entry of the line */
    GHashTable *unknown;        /* unknown key name -> uint64_t count */
    struct nd_line line;
    uint64_t done_before, total;    /* input bytes of finished files; of all files */
    uint64_t files, lines, packets, bytes, comments, malformed, other, short_lines, cut_lines;
    uint64_t extra_attrs, mismatches;
    struct tbbt__stepclock clock;   /* the lines' times in line order, without steps back */
    const char *path;               /* the file being read (borrowed) */
    uint64_t file_lines;            /* lines read of it */
    uint64_t file_bad, first_bad;   /* its malformed lines, the line number of the first */
    GArray *damaged;                /* struct nd_damage per file with malformed lines */
    char *first_step;               /* "'path' line N" of the first step back, or NULL */
};

/* A file with malformed lines (skipped and counted), for the summary. */
struct nd_damage {
    char *path;
    uint64_t lines, first;
};


/* ---- small helpers (inline: they run per byte or per token) -------------------- */

static inline int hexval(unsigned char c)
{
    if ((unsigned)(c - '0') < 10u)
        return c - '0';
    c |= 0x20;
    if ((unsigned)(c - 'a') < 6u)
        return c - 'a' + 10;
    return -1;
}

static inline bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static inline bool tok_is_n(const struct tok *t, const char *s, size_t n)
{
    return t->len == n && memcmp(t->p, s, n) == 0;
}

/* Token t is the literal s. */
#define tok_is(t, s) tok_is_n((t), "" s, sizeof(s) - 1)

static inline bool is_proc(const struct nd_line *L, int prog, uint32_t proc)
{
    return L->prog == prog && L->proc == proc;
}

/* ---- nfsdump-lex.c: tokens, values, keys ---------------------------------------- */

/* Builds the key index once (thread-safe, idempotent); before any tbbt__nd_lookup_key(). */
void tbbt__nd_keys_init(void);

/* Splits p[0..len) into s->toks / s->ntok (the tokens point into p: borrowed). */
void tbbt__nd_tokenize(struct nd_state *s, const char *p, size_t len);

/* The key of a token (K_NONE if none); *idx gets N of a "key-N" form, else -1. */
int tbbt__nd_lookup_key(const struct tok *t, int32_t *idx);

/* t (followed by next, or NULL) is one of nfsdump's debugging fields or markers. */
bool tbbt__nd_is_marker(const struct tok *t, const struct tok *next);

/* The line's tokens end with nfsdump's "len = N" trailer. */
bool tbbt__nd_has_trailer(const struct nd_state *s);

/*
 * Value parsers: true (and *v, *ns, ...) on a well-formed value, false if not
 * one.  Hex numbers may start "0x"; parse_time() reads "sec[.frac]", with
 * usec a v2 microsecond count (*server, if not NULL, set for v2's "server
 * time" value); parse_addr() reads "host.port" (hex) or "a.b.c.d.port".
 */
bool tbbt__nd_hex_u64(const struct tok *t, uint64_t *v);
bool tbbt__nd_hex_u32(const struct tok *t, uint32_t *v);
bool tbbt__nd_parse_time(const struct tok *t, bool usec, uint64_t *ns, bool *server);
bool tbbt__nd_parse_addr(const struct tok *t, uint32_t *host, uint16_t *port);
/* A one-letter symbol (its index in letters) or a hex number. */
bool tbbt__nd_parse_sym(const struct tok *t, const char *letters, uint32_t *v);

/*
 * A string (quoted with escapes, or bare) appended to s->sbuf, *out its
 * place; false if longer than max (it is still stored).
 */
bool tbbt__nd_parse_str(struct nd_state *s, const struct tok *t, uint32_t max,
                        struct nd_str *out);

/* A hex handle appended to s->fhbytes and s->fhs, *idx its index in s->fhs; false if bad. */
bool tbbt__nd_parse_fh(struct nd_state *s, const struct tok *t, uint32_t *idx);

/* Counts an unknown key t by name (at most MAX_UNKNOWN_NAMES names, then "(other)"). */
void tbbt__nd_count_unknown(struct nd_state *s, const struct tok *t);

/* An unknown key at token i, counted: tokens used (1, or 2 with its value). */
int tbbt__nd_unknown_key(struct nd_state *s, uint32_t i);

/* ---- nfsdump-fields.c: what keys mean per procedure ----------------------------- */

/* Whose attribute and pre-operation sets a reply of (prog, proc) carries, in line order. */
struct layout tbbt__nd_reply_layout(int prog, uint32_t proc, bool ok);

/* The record fields keys may set on this line (its procedure and direction; catalogue). */
uint64_t tbbt__nd_allowed_fields(const struct nd_line *L);

/*
 * The key k at token i (idx: N of "key-N", or -1) of a call or a reply line:
 * tokens used (1 or 2), 0 if the key means nothing here (the caller counts
 * it unknown), -1 if its value is malformed.
 */
int tbbt__nd_call_pair(struct nd_state *s, struct nd_line *L, int k, int32_t idx, uint32_t i);
int tbbt__nd_reply_pair(struct nd_state *s, struct nd_line *L, int k, int32_t idx, uint32_t i);

/* An fsstat/fsinfo/pathconf/statfs value named t, v its value (or NULL): as above. */
int tbbt__nd_info_pair(struct nd_line *L, const struct tok *t, const struct tok *v);

/* The fattr of a set: v3 rdev = rdev << 32 | rdev2, v2 used = blocks * blksize. */
struct tbbt_fattr tbbt__nd_fattr_of(const struct nd_attr *a, bool v2);

/* ---- nfsdump-line.c: one line --------------------------------------------------- */

/* Empties *L and the line's scratch buffers of s. */
void tbbt__nd_reset_line(struct nd_state *s, struct nd_line *L);

/*
 * Parses the tokens of a message line into *L: ND_OK, ND_BAD (malformed) or
 * ND_OTHER (not a program or version tbbt replays).  unterminated: the input
 * ended inside the line (no newline).
 */
int tbbt__nd_parse_line(struct nd_state *s, struct nd_line *L, bool unterminated);

/* ---- nfsdump-record.c: into the core -------------------------------------------- */

/*
 * One input line p[0..len) (without its newline; borrowed) of the file being
 * read: parsed, counted, and handed to the core.  Returns true if the input
 * ended inside it.
 */
bool tbbt__nd_one_line(struct nd_state *s, const char *p, size_t len, bool unterminated);

/* A malformed line of the current file: skipped, counted. */
void tbbt__nd_bad_line(struct nd_state *s);

/* ---- nfsdump-clock.c: the lines' clock ------------------------------------------ */

/* The record time of a line of time ts_ns, *pair_ns the time the reply timeout runs on. */
uint64_t tbbt__nd_line_time(struct nd_state *s, uint64_t ts_ns, uint64_t *pair_ns);

/* Logs the clock's steps back (WARN) and long gaps forward (INFO), if any. */
void tbbt__nd_report_clock(const struct nd_state *s);

/* The clock's counters as "clock_*" members of the summary object being written. */
void tbbt__nd_clock_json(struct nd_state *s, struct tbbt_json *j);

#endif
