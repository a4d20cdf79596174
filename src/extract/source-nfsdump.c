/* SPDX-License-Identifier: MIT */
/*
 * The nfsdump text-trace reader of tbbt-convert: the one-line-per-RPC-message
 * format of the Harvard nfsdump/nfsscan tools (the EECS, CAMPUS and HOME
 * traces and their SNIA IOTTA copies), plain or gzip-compressed, several files
 * read in sequence.  Every call and reply line goes to the conversion core
 * (conv-int.h) filling the same record fields the capture decoders fill for
 * the same procedure (decode-nfs3.c, decode-nfs2.c, decode-mount.c), so a
 * text trace and a capture of the same traffic give the same trace.  The
 * lines are the events in file order even where their times go back: the
 * times go through the clocks of stepclock.h before they reach the core.
 *
 * References: nfsdump's format.txt and its printers nfs_v3.c and nfs_v2.c
 * (the key names and value formats), RFC 1813 and RFC 1094 (the fields).
 * The accepted grammar, the key variants and the field mapping are in
 * docs/nfsdump-format.md.
 *
 * A line is parsed whole into per-line scratch storage (tokens, unescaped
 * strings, handle bytes, a scratch record) before anything reaches the core:
 * a malformed line is counted and leaves nothing behind, not even an
 * interned handle.  Memory is one read buffer (LINE_MAX_BYTES + READ_CHUNK)
 * and per-line arrays that grow to the longest line seen; nothing is
 * allocated per field.  Single-threaded, like the core.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <zlib.h>

#include "extract/conv-int.h"
#include "extract/stepclock.h"
#include "proto/mount.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"
#include "util/util.h"

#define LINE_MAX_BYTES (1u << 20)   /* a longer line is malformed (and skipped) */
#define READ_CHUNK (1u << 20)       /* bytes asked of gzread at a time */
#define GZ_BUFFER (256u << 10)      /* zlib's input buffer */
#define MAX_UNKNOWN_NAMES 256       /* distinct unknown key names counted by name */
#define KEYNAME_MAX 40              /* longest unknown key name reported */
#define MOUNT_BASE 0x64             /* nfsdump numbers MOUNT procedure n as 100 + n */
#define N_ATTR 4                    /* attribute sets kept per line */
#define N_PRE 2                     /* pre-operation (wcc) sets kept per line */
#define F_IGNORE TBBT_F_NFIELDS     /* a known key whose value no record field keeps */
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
 * Key names and their variants, sorted (find_key() indexes them by first
 * byte); docs/nfsdump-format.md lists them.
 */
#define KN(s, k) {s, sizeof(s) - 1, k}
static const struct keyname {
    const char *name;
    uint8_t len;
    uint8_t key;
} keynames[] = {
    KN("acc", K_ACC), KN("access", K_ACC), KN("atime", K_ATIME), KN("begoff", K_BEGOFF),
    KN("blksize", K_BLKSIZE), KN("blocks", K_BLOCKS), KN("cookie", K_COOKIE),
    KN("cookieverf", K_COOKIEVERF), KN("count", K_COUNT), KN("createverf", K_CREATEVERF),
    KN("ctime", K_CTIME), KN("dir", K_FH), KN("dircount", K_DIRCOUNT), KN("dirpath", K_DIRPATH),
    KN("egid", K_EGID), KN("eof", K_EOF), KN("euid", K_EUID), KN("fh", K_FH), KN("fh2", K_FH2),
    KN("file", K_FH), KN("fileid", K_FILEID), KN("fn", K_NAME), KN("fn2", K_FN2),
    KN("from", K_FROM), KN("fsid", K_FSID), KN("ftype", K_FTYPE), KN("gid", K_GID),
    KN("how", K_HOW), KN("maxcnt", K_MAXCOUNT), KN("maxcount", K_MAXCOUNT), KN("mode", K_MODE),
    KN("mtime", K_MTIME), KN("name", K_NAME), KN("name2", K_NAME2), KN("nfsstat", K_NFSSTAT),
    KN("nlink", K_NLINK), KN("off", K_OFF), KN("offset", K_OFF), KN("path", K_DIRPATH),
    KN("pre-ctime", K_PRE_CTIME), KN("pre-mtime", K_PRE_MTIME), KN("pre-size", K_PRE_SIZE),
    KN("rdev", K_RDEV), KN("rdev2", K_RDEV2), KN("sdata", K_SDATA), KN("sdir", K_FH),
    KN("size", K_SIZE), KN("sname", K_NAME), KN("stable", K_STABLE), KN("target", K_SDATA),
    KN("tcount", K_TCOUNT), KN("tdir", K_FH2), KN("tname", K_NAME2), KN("to", K_TO),
    KN("type", K_FTYPE), KN("uid", K_UID), KN("used", K_USED), KN("verf", K_VERF),
    KN("writeverf", K_WRITEVERF),
};

/* Attribute keys (fattr3 and v2 fattr) and their bit in nd_attr.seen. */
static const uint32_t attr_bit[K_NKEYS] = {
    [K_FTYPE] = 1u << 0,  [K_MODE] = 1u << 1,   [K_NLINK] = 1u << 2,   [K_UID] = 1u << 3,
    [K_GID] = 1u << 4,    [K_SIZE] = 1u << 5,   [K_USED] = 1u << 6,    [K_RDEV] = 1u << 7,
    [K_RDEV2] = 1u << 8,  [K_FSID] = 1u << 9,   [K_FILEID] = 1u << 10, [K_ATIME] = 1u << 11,
    [K_MTIME] = 1u << 12, [K_CTIME] = 1u << 13, [K_BLKSIZE] = 1u << 14, [K_BLOCKS] = 1u << 15,
};

/* info[] value names per procedure, in RFC order (decode-nfs3.c, decode-nfs2.c). */
static const char *const info_statfs[] = {"tsize", "bsize", "blocks", "bfree", "bavail", NULL};
static const char *const info_fsstat[] = {"tbytes", "fbytes", "abytes", "tfiles", "ffiles",
                                          "afiles", "invarsec", NULL};
static const char *const info_fsinfo[] = {"rtmax", "rtpref", "rtmult", "wtmax", "wtpref",
                                          "wtmult", "dtpref", "maxfilesize", "time_delta",
                                          "properties", NULL};
static const char *const info_pathconf[] = {"linkmax", "name_max", "no_trunc",
                                            "chown_restricted", "case_insensitive",
                                            "case_preserving", NULL};

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

/* ---- small parsers ------------------------------------------------------------ */

static inline int hexval(unsigned char c)
{
    if ((unsigned)(c - '0') < 10u)
        return c - '0';
    c |= 0x20;
    if ((unsigned)(c - 'a') < 6u)
        return c - 'a' + 10;
    return -1;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

static inline bool tok_is_n(const struct tok *t, const char *s, size_t n)
{
    return t->len == n && memcmp(t->p, s, n) == 0;
}

/* Token t is the literal s. */
#define tok_is(t, s) tok_is_n((t), "" s, sizeof(s) - 1)

/* Hex number of up to 64 bits ("0x" allowed); false if not one. */
static bool hex_u64(const struct tok *t, uint64_t *v)
{
    const unsigned char *p = (const unsigned char *)t->p;
    uint32_t i = 0;
    uint64_t x = 0;

    if (t->quoted || t->len == 0)
        return false;
    if (t->len > 2 && p[0] == '0' && (p[1] | 0x20) == 'x')
        i = 2;
    for (; i < t->len; i++) {
        int d = hexval(p[i]);
        if (d < 0 || x >> 60)
            return false;
        x = x << 4 | (unsigned)d;
    }
    *v = x;
    return true;
}

static bool hex_u32(const struct tok *t, uint32_t *v)
{
    uint64_t x;

    if (!hex_u64(t, &x) || x > UINT32_MAX)
        return false;
    *v = (uint32_t)x;
    return true;
}

/*
 * "sec[.frac]" to ns.  With usec the fraction is a count of microseconds
 * (nfsdump's v2 printer writes "%ld.%-6ld"), up to 1000000 (*server: the v2
 * "set to server time" value); else a decimal fraction of up to 9 digits.
 */
static bool parse_time(const struct tok *t, bool usec, uint64_t *ns, bool *server)
{
    const char *p = t->p, *e = p + t->len;
    uint64_t sec = 0, frac = 0;
    int nd = 0, nf = 0;

    for (; p < e && *p >= '0' && *p <= '9' && nd <= 10; p++, nd++)
        sec = sec * 10 + (uint64_t)(*p - '0');
    if (t->quoted || nd == 0 || nd > 10 || sec > UINT32_MAX)
        return false;
    if (p < e && *p++ != '.')
        return false;
    for (; p < e && *p >= '0' && *p <= '9' && nf <= 9; p++, nf++)
        frac = frac * 10 + (uint64_t)(*p - '0');
    if (p != e || nf > 9 || (usec && frac > 1000000))
        return false;
    if (server)
        *server = usec && frac == 1000000;
    if (usec) {
        frac *= 1000;
    } else {
        for (; nf < 9; nf++)
            frac *= 10;
    }
    *ns = sec * 1000000000u + frac;
    return true;
}

/* A sub-token [from, to) of t. */
static struct tok sub(const struct tok *t, uint32_t from, uint32_t to)
{
    struct tok s = {t->p + from, to - from, false, false};
    return s;
}

/* Four decimal octets "a.b.c.d" (nfsdump -v) into a host number. */
static bool quad(const struct tok *t, uint32_t *host)
{
    uint32_t v = 0, octet = 0, digits = 0, dots = 0;

    for (uint32_t i = 0; i <= t->len; i++) {
        char c = i < t->len ? t->p[i] : '.';
        if (c == '.') {
            if (digits == 0 || octet > 255)
                return false;
            v = v << 8 | octet;
            octet = digits = 0;
            dots++;
        } else if (c >= '0' && c <= '9' && digits < 3) {
            octet = octet * 10 + (uint32_t)(c - '0');
            digits++;
        } else {
            return false;
        }
    }
    *host = v;
    return dots == 4;
}

/* "host.port", hex both (nfsdump), or "a.b.c.d.port" (decimal quad, hex port). */
static bool parse_addr(const struct tok *t, uint32_t *host, uint16_t *port)
{
    uint32_t dot = t->len, p;
    struct tok h, pt;

    while (dot > 0 && t->p[dot - 1] != '.')
        dot--;
    if (t->quoted || dot < 2 || dot == t->len)
        return false;
    pt = sub(t, dot, t->len);
    h = sub(t, 0, dot - 1);
    if (!hex_u32(&pt, &p) || p > 0xffff)
        return false;
    *port = (uint16_t)p;
    if (memchr(h.p, '.', h.len))
        return quad(&h, host);
    return hex_u32(&h, host);
}

/* One escape after a backslash at *pp (< e): "\xx" hex byte, \n \t \r, else the byte itself. */
static uint8_t unescape(const char **pp, const char *e)
{
    const char *p = *pp;
    int hi, lo;

    if (p + 1 < e && (hi = hexval((unsigned char)p[0])) >= 0 &&
        (lo = hexval((unsigned char)p[1])) >= 0) {
        *pp = p + 2;
        return (uint8_t)(hi << 4 | lo);
    }
    *pp = p + 1;
    switch (*p) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    default: return (uint8_t)*p;
    }
}

/* A name: quoted with escapes (or a bare token) into the line's string buffer; <= max bytes. */
static bool parse_str(struct nd_state *s, const struct tok *t, uint32_t max, struct nd_str *out)
{
    const char *p = t->p, *e = p + t->len;
    uint32_t off = s->sbuf->len, n = 0;
    uint8_t *d;

    if (t->quoted) {
        p++;
        if (!t->open)
            e--;
    }
    g_byte_array_set_size(s->sbuf, off + (uint32_t)(e - p));
    d = s->sbuf->data + off;
    while (p < e) {
        uint8_t c = (uint8_t)*p++;
        if (c == '\\' && p < e)
            c = unescape(&p, e);
        d[n++] = c;
    }
    g_byte_array_set_size(s->sbuf, off + n);
    out->off = off;
    out->len = n;
    return n <= max;
}

/* A handle: an even number of hex digits, at most TBBT_FH_MAX bytes; *idx indexes s->fhs. */
static bool parse_fh(struct nd_state *s, const struct tok *t, uint32_t *idx)
{
    uint32_t n = t->len / 2, off = s->fhbytes->len;
    struct nd_str ref = {off, n};
    uint8_t *d;

    if (t->quoted || (t->len & 1) || n == 0 || n > TBBT_FH_MAX)
        return false;
    g_byte_array_set_size(s->fhbytes, off + n);
    d = s->fhbytes->data + off;
    for (uint32_t i = 0; i < n; i++) {
        int hi = hexval((unsigned char)t->p[2 * i]), lo = hexval((unsigned char)t->p[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            g_byte_array_set_size(s->fhbytes, off);
            return false;
        }
        d[i] = (uint8_t)(hi << 4 | lo);
    }
    g_array_append_val(s->fhs, ref);
    *idx = s->fhs->len - 1;
    return true;
}

/* A one-letter symbol (nfsdump's "stable F", "how U") or a hex number. */
static bool parse_sym(const struct tok *t, const char *letters, uint32_t *v)
{
    const char *c;

    if (t->len == 1 && !t->quoted && (c = strchr(letters, t->p[0])) != NULL && *c) {
        *v = (uint32_t)(c - letters);
        return true;
    }
    return hex_u32(t, v);
}

/* ---- tokenizing and key lookup ------------------------------------------------ */

static struct tok *push_tok(struct nd_state *s)
{
    if (s->ntok == s->tokcap) {
        s->tokcap = s->tokcap ? 2 * s->tokcap : 256;
        s->toks = g_renew(struct tok, s->toks, s->tokcap);
    }
    return &s->toks[s->ntok++];
}

/* Splits a line: runs of non-blanks, or quoted strings (a backslash escapes the next byte). */
static void tokenize(struct nd_state *s, const char *p, size_t len)
{
    size_t i = 0;

    s->ntok = 0;
    for (;;) {
        while (i < len && is_blank(p[i]))
            i++;
        if (i == len)
            return;
        struct tok *t = push_tok(s);
        size_t start = i;
        t->p = p + i;
        t->quoted = p[i] == '"';
        t->open = false;
        if (t->quoted) {
            for (i++; i < len && p[i] != '"'; i++)
                if (p[i] == '\\' && i + 1 < len)
                    i++;
            if (i < len)
                i++;
            else
                t->open = true;
        } else {
            while (i < len && !is_blank(p[i]))
                i++;
        }
        t->len = (uint32_t)(i - start);
    }
}

/* keynames[first[c]] .. keynames[first[c + 1] - 1] start with byte c. */
static uint8_t first[257];
static gsize keys_indexed;

static gsize index_keys(void)
{
    size_t i = 0;

    for (size_t i2 = 1; i2 < G_N_ELEMENTS(keynames); i2++)
        g_assert(strcmp(keynames[i2 - 1].name, keynames[i2].name) < 0);
    for (int c = 0; c < 256; c++) {
        first[c] = (uint8_t)i;
        while (i < G_N_ELEMENTS(keynames) && (unsigned char)keynames[i].name[0] == c)
            i++;
    }
    first[256] = (uint8_t)i;
    return 1;
}

static int find_key(const char *p, uint32_t len)
{
    unsigned char c = (unsigned char)p[0];

    for (uint32_t i = first[c]; i < first[c + 1]; i++)
        if (keynames[i].len == len && memcmp(p, keynames[i].name, len) == 0)
            return keynames[i].key;
    return K_NONE;
}

/* Where a "-N" suffix (entry N of a readdir reply) starts, or 0. */
static uint32_t suffix_at(const struct tok *t)
{
    uint32_t i = t->len;

    while (i > 0 && t->p[i - 1] >= '0' && t->p[i - 1] <= '9')
        i--;
    return i > 1 && i < t->len && t->len - i <= 7 && t->p[i - 1] == '-' ? i - 1 : 0;
}

/* The key of a token; *idx gets N of a "key-N" form, else -1. */
static int lookup_key(const struct tok *t, int32_t *idx)
{
    int k = t->quoted ? K_NONE : find_key(t->p, t->len);
    uint32_t at;

    *idx = -1;
    if (k != K_NONE || t->quoted || (at = suffix_at(t)) == 0)
        return k;
    *idx = 0;
    for (uint32_t i = at + 1; i < t->len; i++)
        *idx = *idx * 10 + (t->p[i] - '0');
    return find_key(t->p, at);
}

/* nfsdump's debugging fields and markers: "con = 12", "len=98", "SHORT PACKET", "JUMBO" ... */
static bool is_marker(const struct tok *t, const struct tok *next)
{
    if (t->quoted)
        return false;
    if (next && tok_is(next, "="))
        return true;
    if (!strchr("SP+.JL=", t->p[0]) && !memchr(t->p, '=', t->len))
        return false;               /* the common case: no marker starts so */
    return memchr(t->p, '=', t->len) || tok_is(t, "SHORT") ||
           tok_is(t, "PACKET") || tok_is(t, "+|+") || tok_is(t, "+/+") || tok_is(t, "...") ||
           tok_is(t, "JUMBO") || tok_is(t, "LONGPACKET") ||
           (t->len >= 7 && memcmp(t->p, "LONGPKT", 7) == 0);
}

/* The line ends with nfsdump's "len = N" / "len=N" (so a last line without newline is whole). */
static bool has_trailer(const struct nd_state *s)
{
    for (uint32_t i = s->ntok > 4 ? s->ntok - 4 : 0; i < s->ntok; i++) {
        const struct tok *t = &s->toks[i];
        if (!t->quoted && (tok_is(t, "len") || (t->len >= 4 && memcmp(t->p, "len=", 4) == 0)))
            return true;
    }
    return false;
}

/* ---- unknown keys ------------------------------------------------------------- */

static void count_unknown(struct nd_state *s, const struct tok *t)
{
    char name[KEYNAME_MAX + 8];
    uint32_t at = t->quoted ? 0 : suffix_at(t), len = at ? at : t->len, n = 0;
    uint64_t *cnt;

    if (t->quoted) {
        strcpy(name, "(quoted)");
    } else {
        for (uint32_t i = 0; i < len && n < KEYNAME_MAX; i++) {
            unsigned char c = (unsigned char)t->p[i];
            name[n++] = c > 0x20 && c < 0x7f ? (char)c : '?';
        }
        strcpy(name + n, at ? "-N" : "");
    }
    cnt = g_hash_table_lookup(s->unknown, name);
    if (!cnt && g_hash_table_size(s->unknown) >= MAX_UNKNOWN_NAMES) {
        strcpy(name, "(other)");
        cnt = g_hash_table_lookup(s->unknown, name);
    }
    if (!cnt) {
        cnt = g_new0(uint64_t, 1);
        g_hash_table_insert(s->unknown, g_strdup(name), cnt);
    }
    (*cnt)++;
}

/* An unknown key at i: counted; its value (the next token, unless that is a key) skipped. */
static int unknown(struct nd_state *s, uint32_t i)
{
    const struct tok *nx = i + 1 < s->ntok ? &s->toks[i + 1] : NULL;
    int32_t idx;

    count_unknown(s, &s->toks[i]);
    if (!nx || lookup_key(nx, &idx) != K_NONE ||
        is_marker(nx, i + 2 < s->ntok ? &s->toks[i + 2] : NULL))
        return 1;
    return 2;
}

/* ---- the line header ---------------------------------------------------------- */

/* The procedure a name stands for (-1 if none); quick when it is proc's own name. */
static int proc_by_name(int prog, uint32_t proc, const struct tok *t)
{
    const char *own = tbbt_proc_name(prog, (int)proc);
    char nm[16];

    if (own && t->len == strlen(own) && memcmp(t->p, own, t->len) == 0)
        return (int)proc;
    if (t->quoted || t->len >= sizeof(nm))
        return -1;
    memcpy(nm, t->p, t->len);
    nm[t->len] = '\0';
    if (prog == TBBT_PROG_NFS3 && strcmp(nm, "readdirp") == 0)
        return NFSPROC3_READDIRPLUS;
    if (prog == TBBT_PROG_NFS2 && (strcmp(nm, "writecach") == 0 || strcmp(nm, "writecac") == 0))
        return NFSPROC_WRITECACHE;
    return tbbt_proc_by_name(prog, nm);
}

/* Program and procedure from the version digit, the number and the name. */
static int resolve_proc(struct nd_line *L, int vers, uint32_t num, const struct tok *name)
{
    int byname;

    if (num >= MOUNT_BASE && num < MOUNT_BASE + (uint32_t)tbbt_prog_nprocs(TBBT_PROG_MNT3)) {
        L->prog = vers == 3 ? TBBT_PROG_MNT3 : TBBT_PROG_MNT1;
        L->proc = num - MOUNT_BASE;
    } else if (vers == 1) {
        return ND_OTHER;            /* NFS has no version 1: not ours */
    } else {
        L->prog = vers == 3 ? TBBT_PROG_NFS3 : TBBT_PROG_NFS2;
        L->proc = num;
    }
    L->v2 = vers != 3;
    L->known = L->proc < (uint32_t)tbbt_prog_nprocs(L->prog);
    byname = L->known ? proc_by_name(L->prog, L->proc, name) : -1;
    return byname >= 0 && (uint32_t)byname != L->proc ? ND_BAD : ND_OK;
}

/* time src dst T|U C3|R3|C2|R2 xid proc name */
static int parse_header(struct nd_state *s, struct nd_line *L)
{
    const struct tok *t = s->toks;
    uint32_t proc;

    if (s->ntok < 5 || !parse_time(&t[0], false, &L->ts_ns, NULL) ||
        !parse_addr(&t[1], &L->src, &L->sport) || !parse_addr(&t[2], &L->dst, &L->dport))
        return ND_BAD;
    if (t[3].len != 1 || (t[3].p[0] != 'T' && t[3].p[0] != 'U'))
        return ND_BAD;
    L->tcp = t[3].p[0] == 'T';
    if (t[4].len == 3 && (t[4].p[0] == 'C' || t[4].p[0] == 'R') && t[4].p[1] == 'U')
        return ND_OTHER;            /* nfsdump's "CU<vers>": a version it could not print */
    if (t[4].len != 2 || (t[4].p[0] != 'C' && t[4].p[0] != 'R') || t[4].p[1] < '1' ||
        t[4].p[1] > '3')
        return ND_BAD;
    L->call = t[4].p[0] == 'C';
    if (s->ntok < 8 || !hex_u32(&t[5], &L->xid) || !hex_u32(&t[6], &proc))
        return ND_BAD;
    return resolve_proc(L, t[4].p[1] - '0', proc, &t[7]);
}

/* Procedures whose results start with a status (nfsdump prints "OK" or the hex value). */
static bool has_status(int prog, uint32_t proc)
{
    const struct tbbt_proc_desc *d = tbbt_proc_desc(prog, (int)proc);

    return d && (d->flags & TBBT_PROTO_FL_STATUS);
}

static bool status_value(int prog, const struct tok *t, int32_t *st)
{
    char nm[24];
    uint32_t v;

    if (tok_is(t, "OK")) {
        *st = 0;
        return true;
    }
    if (hex_u32(t, &v)) {
        *st = (int32_t)v;
        /* NFSv3 and MOUNT v3 statuses not in RFC 1813's lists are malformed, as decoded */
        return (prog != TBBT_PROG_NFS3 && prog != TBBT_PROG_MNT3) ||
               tbbt_proto_status_name(prog, (int)v) != NULL;
    }
    if (t->quoted || t->len >= sizeof(nm))
        return false;
    memcpy(nm, t->p, t->len);
    nm[t->len] = '\0';
    return tbbt_status_by_name(prog, nm, st) == 0;
}

static int parse_status(struct nd_state *s, struct nd_line *L, uint32_t *i)
{
    const struct tok *t = *i < s->ntok ? &s->toks[*i] : NULL;

    if (!has_status(L->prog, L->proc)) {
        if (t && tok_is(t, "OK"))
            (*i)++;
        return ND_OK;
    }
    if (!t)
        return L->cut ? ND_OK : ND_BAD;
    if (!status_value(L->prog, t, &L->status))
        return ND_BAD;
    L->has_status = true;
    L->ok = L->status == 0;
    (*i)++;
    return ND_OK;
}

static struct layout reply_layout(int prog, uint32_t proc, bool ok)
{
    struct layout lo = {{R_NONE, R_NONE}, {R_NONE, R_NONE}};

    if (prog == TBBT_PROG_NFS2) {
        if (proc == NFSPROC_GETATTR || proc == NFSPROC_SETATTR || proc == NFSPROC_READ ||
            proc == NFSPROC_WRITE || proc == NFSPROC_LOOKUP || proc == NFSPROC_CREATE ||
            proc == NFSPROC_MKDIR)
            lo.attr[0] = R_OBJ;
        return lo;
    }
    if (prog != TBBT_PROG_NFS3 || proc == NFSPROC3_NULL)
        return lo;
    lo.attr[0] = R_OBJ;
    switch (proc) {
    case NFSPROC3_SETATTR: case NFSPROC3_WRITE: case NFSPROC3_COMMIT:
        lo.pre[0] = R_OBJ;
        break;
    case NFSPROC3_LOOKUP:
        lo.attr[0] = ok ? R_OBJ : R_DIR;
        lo.attr[1] = ok ? R_DIR : R_NONE;
        break;
    case NFSPROC3_CREATE: case NFSPROC3_MKDIR: case NFSPROC3_SYMLINK: case NFSPROC3_MKNOD:
        lo.attr[0] = ok ? R_OBJ : R_DIR;
        lo.attr[1] = ok ? R_DIR : R_NONE;
        lo.pre[0] = R_DIR;
        break;
    case NFSPROC3_REMOVE: case NFSPROC3_RMDIR:
        lo.attr[0] = lo.pre[0] = R_DIR;
        break;
    case NFSPROC3_RENAME:
        lo.attr[0] = lo.pre[0] = R_DIR;
        lo.attr[1] = lo.pre[1] = R_DIR2;
        break;
    case NFSPROC3_LINK:
        lo.attr[1] = lo.pre[0] = R_DIR2;
        break;
    case NFSPROC3_READDIR: case NFSPROC3_READDIRPLUS:
        lo.attr[0] = R_DIR;
        break;
    default:
        break;
    }
    return lo;
}

static uint64_t allowed_fields(const struct nd_line *L)
{
    const struct tbbt_proc_desc *d = tbbt_proc_desc(L->prog, (int)L->proc);

    if (!d)
        return 0;
    return L->call ? d->call : d->reply & ~ATTR_FIELDS;
}

/* ---- call arguments ----------------------------------------------------------- */

static bool is_proc(const struct nd_line *L, int prog, uint32_t proc)
{
    return L->prog == prog && L->proc == proc;
}

/* The record field a call key sets for this procedure, F_IGNORE, or -1. */
static int call_field(const struct nd_line *L, int k, const struct tok *v)
{
    switch (k) {
    case K_FH: return TBBT_F_FH;
    case K_FH2: return TBBT_F_FH2;
    case K_NAME:
        return is_proc(L, TBBT_PROG_NFS3, NFSPROC3_LINK) || is_proc(L, TBBT_PROG_NFS2, NFSPROC_LINK)
                   ? TBBT_F_NAME2 : TBBT_F_NAME;
    case K_NAME2: return TBBT_F_NAME2;
    case K_FN2: return is_proc(L, TBBT_PROG_NFS2, NFSPROC_SYMLINK) ? TBBT_F_TARGET : TBBT_F_NAME2;
    case K_SDATA: return TBBT_F_TARGET;
    case K_DIRPATH: return TBBT_F_DIRPATH;
    case K_FROM: return v && v->quoted ? TBBT_F_NAME : TBBT_F_FH;
    case K_TO: return v && v->quoted ? TBBT_F_NAME2 : TBBT_F_FH2;
    case K_OFF: return TBBT_F_OFFSET;
    case K_COUNT:
        return is_proc(L, TBBT_PROG_NFS3, NFSPROC3_READDIRPLUS) ? TBBT_F_DIRCOUNT : TBBT_F_COUNT;
    case K_TCOUNT: return is_proc(L, TBBT_PROG_NFS2, NFSPROC_WRITE) ? TBBT_F_COUNT : F_IGNORE;
    case K_BEGOFF: return F_IGNORE;
    case K_DIRCOUNT: return TBBT_F_DIRCOUNT;
    case K_MAXCOUNT: return TBBT_F_MAXCOUNT;
    case K_STABLE: return TBBT_F_STABLE;
    case K_HOW: return TBBT_F_CREATEMODE;
    case K_VERF:
        return is_proc(L, TBBT_PROG_NFS3, NFSPROC3_CREATE) ? TBBT_F_CREATEVERF : TBBT_F_COOKIEVERF;
    case K_CREATEVERF: return TBBT_F_CREATEVERF;
    case K_COOKIEVERF: return TBBT_F_COOKIEVERF;
    case K_MODE: case K_UID: case K_GID: case K_SIZE: case K_ATIME: case K_MTIME:
        return TBBT_F_SATTR;
    case K_CTIME: return TBBT_F_GUARD;
    case K_ACC: return TBBT_F_ACCESS;
    case K_COOKIE: return TBBT_F_COOKIE;
    case K_FTYPE: return TBBT_F_FTYPE;
    case K_RDEV: case K_RDEV2: return TBBT_F_RDEV;
    default: return -1;
    }
}

/* atime/mtime of a sattr: "SERVER", or a time (v2: all ones = not set, usec 1000000 = server). */
static int sattr_time(struct nd_line *L, int k, const struct tok *v)
{
    struct tbbt_sattr *sa = &L->r.sattr;
    uint32_t client = k == K_ATIME ? TBBT_SA_ATIME : TBBT_SA_MTIME;
    uint32_t server = k == K_ATIME ? TBBT_SA_ATIME_SERVER : TBBT_SA_MTIME_SERVER;
    uint64_t ns;
    bool srv;

    if (tok_is(v, "SERVER")) {
        sa->mask |= server;
        return 1;
    }
    if (!parse_time(v, L->v2, &ns, &srv))
        return -1;
    if (L->v2 && ns / 1000000000u == UINT32_MAX)
        return 1;
    if (srv) {
        sa->mask |= server;
        return 1;
    }
    sa->mask |= client;
    *(k == K_ATIME ? &sa->atime_ns : &sa->mtime_ns) = ns;
    return 1;
}

static int sattr_key(struct nd_line *L, int k, const struct tok *v)
{
    struct tbbt_sattr *sa = &L->r.sattr;
    uint64_t x;

    if (k == K_ATIME || k == K_MTIME)
        return sattr_time(L, k, v);
    if (!hex_u64(v, &x) || (k != K_SIZE && x > UINT32_MAX))
        return -1;
    if (L->v2 && x == UINT32_MAX)
        return 1;                   /* v2 sattr: all ones = not set */
    switch (k) {
    case K_MODE: sa->mode = (uint32_t)x; sa->mask |= TBBT_SA_MODE; break;
    case K_UID: sa->uid = (uint32_t)x; sa->mask |= TBBT_SA_UID; break;
    case K_GID: sa->gid = (uint32_t)x; sa->mask |= TBBT_SA_GID; break;
    default: sa->size = x; sa->mask |= TBBT_SA_SIZE; break;
    }
    return 1;
}

/* ftype of MKNOD: a number or a type name. */
static bool parse_ftype(const struct tok *t, uint32_t *v)
{
    static const char *const names[] = {"NON", "REG", "DIR", "BLK", "CHR", "LNK", "SOCK", "FIFO"};

    for (uint32_t i = 1; i < G_N_ELEMENTS(names); i++) {
        if (tok_is_n(t, names[i], strlen(names[i]))) {
            *v = i;
            return true;
        }
    }
    return hex_u32(t, v) && *v >= NF3REG && *v <= NF3FIFO;   /* as the decoder */
}

/* ACCESS bits: hex, or one of early traces' letters that are not hex digits. */
static bool parse_access(const struct tok *t, uint32_t *v)
{
    if (t->len == 1 && !t->quoted) {
        switch (t->p[0]) {
        case 'R': *v = 0x01; return true;
        case 'L': *v = 0x02; return true;
        case 'M': *v = 0x04; return true;
        case 'X': *v = 0x20; return true;
        default: break;
        }
    }
    return hex_u32(t, v);
}

/* Stores a call value into the scratch record: 1 stored, 0 nothing to keep, -1 malformed. */
static int store_call(struct nd_state *s, struct nd_line *L, int k, int f, const struct tok *v)
{
    struct tbbt_trace_rec *r = &L->r;
    uint32_t u;
    bool ok = true;

    switch (f) {
    case TBBT_F_FH: ok = parse_fh(s, v, &r->fh); break;
    case TBBT_F_FH2: ok = parse_fh(s, v, &r->fh2); break;
    case TBBT_F_NAME: ok = parse_str(s, v, TBBT_NAME_MAX, &L->name); break;
    case TBBT_F_NAME2: ok = parse_str(s, v, TBBT_NAME_MAX, &L->name2); break;
    case TBBT_F_TARGET: ok = parse_str(s, v, TBBT_PATH_MAX, &L->target); break;
    case TBBT_F_DIRPATH: ok = parse_str(s, v, TBBT_PATH_MAX, &L->dirpath); break;
    case TBBT_F_OFFSET: ok = hex_u64(v, &r->offset); break;
    case TBBT_F_COUNT: ok = hex_u32(v, &r->count); break;
    case TBBT_F_DIRCOUNT: ok = hex_u32(v, &r->dircount); break;
    case TBBT_F_MAXCOUNT: ok = hex_u32(v, &r->maxcount); break;
    case TBBT_F_STABLE:
        if (tok_is(v, "?"))
            return 0;               /* nfsdump's mark of a value it did not know */
        ok = parse_sym(v, "UDF", &r->stable) && r->stable <= FILE_SYNC;
        break;
    case TBBT_F_CREATEMODE:
        ok = parse_sym(v, "UGX", &r->createmode) && r->createmode <= EXCLUSIVE;
        break;
    case TBBT_F_CREATEVERF: ok = hex_u64(v, &r->createverf); break;
    case TBBT_F_COOKIEVERF: ok = hex_u64(v, &r->cookieverf); break;
    case TBBT_F_COOKIE: ok = hex_u64(v, &r->cookie); break;
    case TBBT_F_GUARD: ok = parse_time(v, L->v2, &r->guard_ns, NULL); break;
    case TBBT_F_ACCESS: ok = parse_access(v, &r->access); break;
    case TBBT_F_FTYPE: ok = parse_ftype(v, &r->ftype); break;
    case TBBT_F_SATTR:
        if (sattr_key(L, k, v) < 0)
            return -1;
        break;
    case TBBT_F_RDEV:               /* rdev = major (specdata1), rdev2 = minor */
        if (!hex_u32(v, &u))
            return -1;
        r->rdev = k == K_RDEV ? (r->rdev & 0xffffffffu) | (uint64_t)u << 32
                              : (r->rdev & ~(uint64_t)0xffffffffu) | u;
        break;
    default:
        return 0;
    }
    if (!ok)
        return -1;
    TBBT_SET(r, f);
    return 1;
}

static int call_pair(struct nd_state *s, struct nd_line *L, int k, int32_t idx, uint32_t i)
{
    const struct tok *v = i + 1 < s->ntok ? &s->toks[i + 1] : NULL;
    int f;

    if (idx >= 0)
        return 0;
    if (k == K_EUID || k == K_EGID) {
        if (!v)
            return L->cut ? 1 : -1;
        return hex_u32(v, k == K_EUID ? &L->uid : &L->gid) ? 2 : -1;
    }
    f = call_field(L, k, v);
    if (f == F_IGNORE)
        return v ? 2 : 1;
    if (f < 0 || !(L->allowed & B(f)))
        return 0;
    if (!v)
        return L->cut ? 1 : -1;
    return store_call(s, L, k, f, v) < 0 ? -1 : 2;
}

/* ---- reply results ------------------------------------------------------------ */

/* One attribute value into a set: 1, or -1 if malformed. */
static int attr_store(struct nd_attr *a, int k, const struct tok *v, bool v2)
{
    uint64_t x;
    bool ok;

    if (k == K_ATIME || k == K_MTIME || k == K_CTIME) {
        ok = parse_time(v, v2, k == K_ATIME   ? &a->a.atime_ns
                               : k == K_MTIME ? &a->a.mtime_ns
                                              : &a->a.ctime_ns, NULL);
    } else {
        ok = hex_u64(v, &x);
        if (ok && k != K_SIZE && k != K_USED && k != K_FSID && k != K_FILEID)
            ok = x <= UINT32_MAX;
        switch (ok ? k : K_NONE) {
        case K_FTYPE:           /* the decoders' range: NF3REG..NF3FIFO, v2 up to NFFIFO */
            ok = v2 ? x <= 8 : x >= NF3REG && x <= NF3FIFO;
            a->a.type = (uint32_t)x;
            break;
        case K_MODE: a->a.mode = (uint32_t)x; break;
        case K_NLINK: a->a.nlink = (uint32_t)x; break;
        case K_UID: a->a.uid = (uint32_t)x; break;
        case K_GID: a->a.gid = (uint32_t)x; break;
        case K_SIZE: a->a.size = x; break;
        case K_USED: a->a.used = x; break;
        case K_RDEV: a->rdev1 = (uint32_t)x; break;
        case K_RDEV2: a->rdev2 = (uint32_t)x; break;
        case K_FSID: a->a.fsid = x; break;
        case K_FILEID: a->a.fileid = x; break;
        case K_BLKSIZE: a->blksize = (uint32_t)x; break;
        case K_BLOCKS: a->blocks = (uint32_t)x; break;
        default: break;
        }
    }
    if (!ok)
        return -1;
    a->seen |= attr_bit[k];
    return 1;
}

/* The fattr of a set: v3 rdev = rdev << 32 | rdev2, v2 used = blocks * blksize. */
static struct tbbt_fattr fattr_of(const struct nd_attr *a, bool v2)
{
    struct tbbt_fattr f = a->a;

    f.rdev = v2 ? a->rdev1 : (uint64_t)a->rdev1 << 32 | a->rdev2;
    if (a->seen & attr_bit[K_BLOCKS])
        f.used = (uint64_t)a->blocks * a->blksize;
    return f;
}

/* An attribute key outside readdir entries: the current set, or a new one once a key repeats. */
static int attr_pair(struct nd_state *s, struct nd_line *L, int k, const struct tok *v)
{
    int cur = L->nattr - 1;

    if (cur < 0 || (L->attrs[cur].seen & attr_bit[k])) {
        if (L->nattr == N_ATTR)
            s->extra_attrs++;       /* more sets than any reply has: the last is overwritten */
        else
            L->nattr++;
        cur = L->nattr - 1;
        memset(&L->attrs[cur], 0, sizeof(L->attrs[cur]));
    }
    return attr_store(&L->attrs[cur], k, v, L->v2) < 0 ? -1 : 2;
}

static int pre_pair(struct nd_state *s, struct nd_line *L, int k, const struct tok *v)
{
    uint32_t bit = k == K_PRE_SIZE ? 1 : k == K_PRE_MTIME ? 2 : 4;
    struct nd_pre *p;
    bool ok;

    if (L->npre == 0 || (L->pres[L->npre - 1].seen & bit)) {
        if (L->npre == N_PRE)
            s->extra_attrs++;       /* more wcc data than any reply has: the last is overwritten */
        else
            L->npre++;
        memset(&L->pres[L->npre - 1], 0, sizeof(struct nd_pre));
    }
    p = &L->pres[L->npre - 1];
    if (k == K_PRE_SIZE)
        ok = hex_u64(v, &p->w.size);
    else
        ok = parse_time(v, L->v2, k == K_PRE_MTIME ? &p->w.mtime_ns : &p->w.ctime_ns, NULL);
    p->seen |= bit;
    return ok ? 2 : -1;
}

/* Key k already holds a value in entry e (so a key without "-N" starts the next entry). */
static bool entry_has(const struct nd_entry *e, int k)
{
    switch (k) {
    case K_NAME: return e->seen & E_NAME;
    case K_COOKIE: return e->seen & E_COOKIE;
    case K_FH: return e->seen & E_FH;
    case K_FILEID:
        return (e->seen & E_FILEID) &&
               (e->attr.seen == 0 || (e->attr.seen & attr_bit[K_FILEID]));
    default: return e->attr.seen & attr_bit[k];
    }
}

/* The entry a key goes to: entry idx (idx == count appends), or the current one. */
static struct nd_entry *get_entry(struct nd_state *s, int32_t idx, int k)
{
    GArray *a = s->ents;
    struct nd_entry *e;

    if (idx >= 0 && (uint32_t)idx < a->len)
        return &g_array_index(a, struct nd_entry, idx);
    if (idx > (int32_t)a->len)
        return NULL;
    if (idx < 0 && a->len > 0 && !entry_has(&g_array_index(a, struct nd_entry, a->len - 1), k))
        return &g_array_index(a, struct nd_entry, a->len - 1);
    g_array_set_size(a, a->len + 1);
    e = &g_array_index(a, struct nd_entry, a->len - 1);
    memset(e, 0, sizeof(*e));
    return e;
}

static int entry_pair(struct nd_state *s, struct nd_line *L, int k, int32_t idx,
                      const struct tok *v)
{
    struct nd_entry *e;
    bool ok = true;

    if (!v)
        return L->cut ? 1 : -1;
    e = get_entry(s, idx, k);
    if (!e)
        return -1;                  /* "name-7" before entry 6 */
    L->in_entries = true;
    if (k == K_FILEID && (e->seen & E_FILEID))
        k = K_NONE;                 /* the second fileid of an entry is its attributes' */
    switch (k) {
    case K_NAME: ok = parse_str(s, v, TBBT_NAME_MAX, &e->name); e->seen |= E_NAME; break;
    case K_COOKIE: ok = hex_u64(v, &e->cookie); e->seen |= E_COOKIE; break;
    case K_FH: ok = parse_fh(s, v, &e->fh); e->seen |= E_FH; break;
    case K_FILEID: ok = hex_u64(v, &e->fileid); e->seen |= E_FILEID; break;
    case K_NONE: ok = attr_store(&e->attr, K_FILEID, v, L->v2) > 0; break;
    default: ok = attr_store(&e->attr, k, v, L->v2) > 0; break;
    }
    return ok ? 2 : -1;
}

/* A readdir reply key that belongs to the entries (the directory's own attributes come first). */
static bool is_entry_key(const struct nd_line *L, int k, int32_t idx)
{
    if (!(L->allowed & B(TBBT_F_ENTRIES)) ||
        (k != K_NAME && k != K_COOKIE && k != K_FH && !attr_bit[k]))
        return false;
    if (idx >= 0 || L->in_entries || k == K_NAME || k == K_COOKIE || k == K_FH)
        return true;
    if (k == K_FILEID && L->nattr == 0)
        return true;                /* the directory's attributes start with ftype */
    return attr_bit[k] && L->nattr > 0 && (L->attrs[0].seen & attr_bit[k]);
}

/* The record field a reply key sets, or -1. */
static int reply_field(int k)
{
    switch (k) {
    case K_FH: return TBBT_F_NEW_FH;
    case K_NAME: case K_SDATA: return TBBT_F_TARGET;
    case K_COUNT: return TBBT_F_RES_COUNT;
    case K_EOF: return TBBT_F_EOF;
    case K_STABLE: return TBBT_F_COMMITTED;
    case K_VERF: case K_WRITEVERF: return TBBT_F_WRITEVERF;
    case K_ACC: return TBBT_F_ACCESS_RES;
    default: return -1;
    }
}

static int store_reply(struct nd_state *s, struct nd_line *L, int f, const struct tok *v)
{
    struct tbbt_trace_rec *r = &L->r;
    bool ok;

    switch (f) {
    case TBBT_F_NEW_FH: ok = parse_fh(s, v, &r->new_fh); break;
    case TBBT_F_TARGET: ok = parse_str(s, v, TBBT_PATH_MAX, &L->target); break;
    case TBBT_F_RES_COUNT: ok = hex_u32(v, &r->res_count); break;
    case TBBT_F_EOF: ok = hex_u32(v, &r->eof) && r->eof <= 1; break;   /* a bool: 0 or 1 */
    case TBBT_F_COMMITTED:
        if (tok_is(v, "?"))
            return 2;
        ok = parse_sym(v, "UDF", &r->committed) && r->committed <= FILE_SYNC;
        break;
    case TBBT_F_WRITEVERF: ok = hex_u64(v, &r->writeverf); break;
    default: ok = parse_access(v, &r->access_res); break;
    }
    if (!ok)
        return -1;
    TBBT_SET(r, f);
    if (f == TBBT_F_EOF && (L->allowed & B(TBBT_F_ENTRIES)))
        L->in_entries = true;
    return 2;
}

/* A "fh" with no handle after it: nfsdump's post_op_fh3 without a handle. */
static bool fh_absent(const struct tok *v, const struct tok *after)
{
    int32_t idx;

    return !v || (v->len & 1) || is_marker(v, after) || lookup_key(v, &idx) != K_NONE;
}

/* fsstat/fsinfo/pathconf/statfs values by name: 2, or 0 if the token is not one. */
static int info_pair(struct nd_line *L, const struct tok *t, const struct tok *v)
{
    const char *const *names =
        L->prog == TBBT_PROG_NFS2              ? info_statfs
        : L->proc == NFSPROC3_FSSTAT          ? info_fsstat
        : L->proc == NFSPROC3_FSINFO          ? info_fsinfo
                                              : info_pathconf;
    struct tbbt_trace_rec *r = &L->r;
    uint64_t x;

    for (uint32_t i = 0; names[i]; i++) {
        if (!tok_is_n(t, names[i], strlen(names[i])))
            continue;
        if (!v)
            return L->cut ? 1 : -1;
        if (strcmp(names[i], "time_delta") == 0 ? !parse_time(v, false, &x, NULL) : !hex_u64(v, &x))
            return -1;
        r->info[i] = x;
        if (r->n_info < i + 1)
            r->n_info = i + 1;
        TBBT_SET(r, TBBT_F_INFO);
        return 2;
    }
    return 0;
}

static int reply_pair(struct nd_state *s, struct nd_line *L, int k, int32_t idx, uint32_t i)
{
    const struct tok *v = i + 1 < s->ntok ? &s->toks[i + 1] : NULL;
    int f;

    if (k == K_EUID || k == K_EGID || k == K_NFSSTAT)
        return v ? 2 : 1;           /* known, nothing to keep */
    if (is_entry_key(L, k, idx))
        return entry_pair(s, L, k, idx, v);
    if (idx >= 0)
        return 0;
    f = attr_bit[k] ? -2 : (k == K_PRE_SIZE || k == K_PRE_MTIME || k == K_PRE_CTIME) ? -3
                                                                                  : reply_field(k);
    if (f == -1 || (f >= 0 && !(L->allowed & B(f))) || (f == -2 && L->lo.attr[0] == R_NONE) ||
        (f == -3 && L->lo.pre[0] == R_NONE))
        return 0;
    if (f == TBBT_F_NEW_FH && fh_absent(v, i + 2 < s->ntok ? &s->toks[i + 2] : NULL))
        return 1;
    if (!v)
        return L->cut ? 1 : -1;
    if (f == -2)
        return attr_pair(s, L, k, v);
    if (f == -3)
        return pre_pair(s, L, k, v);
    return store_reply(s, L, f, v);
}

/* ---- one line ----------------------------------------------------------------- */

/* A quoted string where a key belongs: MOUNT's bare path ("mnt \"/export\""), else unknown. */
static int bare_string(struct nd_state *s, struct nd_line *L, uint32_t i)
{
    if (L->call && (L->allowed & B(TBBT_F_DIRPATH)) && !TBBT_HAS(&L->r, TBBT_F_DIRPATH)) {
        if (!parse_str(s, &s->toks[i], TBBT_PATH_MAX, &L->dirpath))
            return -1;
        TBBT_SET(&L->r, TBBT_F_DIRPATH);
        return 1;
    }
    count_unknown(s, &s->toks[i]);
    return 1;
}

/* nfsdump's debugging fields and markers at i: tokens used, or 0. */
static int marker(struct nd_state *s, struct nd_line *L, uint32_t i)
{
    const struct tok *t = &s->toks[i], *nx = i + 1 < s->ntok ? t + 1 : NULL;

    if (!is_marker(t, nx))
        return 0;
    if (nx && tok_is(nx, "="))
        return i + 2 < s->ntok ? 3 : 2;
    if (tok_is(t, "SHORT") || tok_is(t, "+|+") || tok_is(t, "+/+") || tok_is(t, "..."))
        L->short_ = true;
    return 1;
}

/* One item at token i: tokens used, or -1 for a malformed value. */
static int pair(struct nd_state *s, struct nd_line *L, uint32_t i)
{
    const struct tok *t = &s->toks[i];
    const struct tok *v = i + 1 < s->ntok ? t + 1 : NULL;
    int32_t idx;
    int n, k;

    if ((n = marker(s, L, i)) > 0)
        return n;
    if (t->quoted)
        return bare_string(s, L, i);
    if (!L->call && (L->allowed & B(TBBT_F_INFO)) && (n = info_pair(L, t, v)) != 0)
        return n;
    k = lookup_key(t, &idx);
    if (k == K_NONE)
        return unknown(s, i);
    n = L->call ? call_pair(s, L, k, idx, i) : reply_pair(s, L, k, idx, i);
    return n == 0 ? unknown(s, i) : n;
}

/* Procedures whose call always carries a sattr (the decoder sets the field even when empty). */
static bool always_sattr(const struct nd_line *L)
{
    const struct tbbt_trace_rec *r = &L->r;

    if (L->prog == TBBT_PROG_NFS2)
        return L->proc == NFSPROC_SETATTR || L->proc == NFSPROC_CREATE ||
               L->proc == NFSPROC_MKDIR || L->proc == NFSPROC_SYMLINK;
    if (L->prog != TBBT_PROG_NFS3)
        return false;
    switch (L->proc) {
    case NFSPROC3_SETATTR: case NFSPROC3_MKDIR: case NFSPROC3_SYMLINK:
        return true;
    case NFSPROC3_CREATE:
        return TBBT_HAS(r, TBBT_F_CREATEMODE) && r->createmode != EXCLUSIVE;
    case NFSPROC3_MKNOD:
        return TBBT_HAS(r, TBBT_F_FTYPE) && r->ftype != NF3REG && r->ftype != NF3DIR &&
               r->ftype != NF3LNK;
    default:
        return false;
    }
}

static void put_attr(struct nd_line *L, int role, const struct tbbt_fattr *f)
{
    struct tbbt_trace_rec *r = &L->r;

    if (role == R_OBJ) {
        r->obj_attr = *f;
        TBBT_SET(r, TBBT_F_OBJ_ATTR);
    } else if (role == R_DIR) {
        r->dir_attr = *f;
        TBBT_SET(r, TBBT_F_DIR_ATTR);
    } else {
        r->dir2_attr = *f;
        TBBT_SET(r, TBBT_F_DIR2_ATTR);
    }
}

static void put_pre(struct nd_line *L, int role, const struct tbbt_wcc_pre *w)
{
    struct tbbt_trace_rec *r = &L->r;

    if (role == R_OBJ) {
        r->obj_pre = *w;
        TBBT_SET(r, TBBT_F_OBJ_PRE);
    } else if (role == R_DIR) {
        r->dir_pre = *w;
        TBBT_SET(r, TBBT_F_DIR_PRE);
    } else {
        r->dir2_pre = *w;
        TBBT_SET(r, TBBT_F_DIR2_PRE);
    }
}

/* After the last key: sets become fields by the layout, entries are counted. */
static void finish_line(struct nd_state *s, struct nd_line *L)
{
    struct tbbt_trace_rec *r = &L->r;

    if (L->call) {
        if (always_sattr(L) && !L->short_ && !L->cut && TBBT_HAS(r, TBBT_F_FH))
            TBBT_SET(r, TBBT_F_SATTR);
        if (is_proc(L, TBBT_PROG_NFS3, NFSPROC3_CREATE) && TBBT_HAS(r, TBBT_F_CREATEMODE) &&
            r->createmode == EXCLUSIVE)
            r->present &= ~B(TBBT_F_SATTR);
        return;
    }
    for (int i = 0; i < L->nattr; i++) {
        struct tbbt_fattr f = fattr_of(&L->attrs[i], L->v2);
        if (i < 2 && L->lo.attr[i] != R_NONE)
            put_attr(L, L->lo.attr[i], &f);
        else
            s->extra_attrs++;
    }
    for (int i = 0; i < L->npre; i++) {
        if (L->lo.pre[i] != R_NONE)
            put_pre(L, L->lo.pre[i], &L->pres[i].w);
        else
            s->extra_attrs++;
    }
    if ((L->allowed & B(TBBT_F_ENTRIES)) && L->in_entries) {
        TBBT_SET(r, TBBT_F_ENTRIES);
        r->res_count = s->ents->len;
        TBBT_SET(r, TBBT_F_RES_COUNT);
    }
}

static void reset_line(struct nd_state *s, struct nd_line *L)
{
    memset(L, 0, sizeof(*L));
    g_byte_array_set_size(s->sbuf, 0);
    g_byte_array_set_size(s->fhbytes, 0);
    g_array_set_size(s->fhs, 0);
    g_array_set_size(s->ents, 0);
}

/* Parses the tokens of a message line into s->line: ND_OK, ND_BAD or ND_OTHER. */
static int parse_line(struct nd_state *s, struct nd_line *L, bool unterminated)
{
    uint32_t i = 8;
    int rc;

    if (unterminated && !has_trailer(s)) {
        L->cut = true;              /* the input ended inside this line */
        if (!L->last_complete)
            s->ntok--;              /* its last token may be cut too */
    }
    for (uint32_t j = 0; j < s->ntok; j++)
        if (s->toks[j].open)
            return ND_BAD;
    if ((rc = parse_header(s, L)) != ND_OK || !L->known)
        return rc;
    L->allowed = allowed_fields(L);
    if (!L->call && (rc = parse_status(s, L, &i)) != ND_OK)
        return rc;
    if (!L->call)
        L->lo = reply_layout(L->prog, L->proc, L->ok);
    while (i < s->ntok) {
        int used = pair(s, L, i);
        if (used < 0)
            return ND_BAD;
        i += (uint32_t)used;
    }
    finish_line(s, L);
    return ND_OK;
}

/* ---- into the core ------------------------------------------------------------ */

static uint32_t intern(struct nd_state *s, uint32_t idx)
{
    const struct nd_str *h = &g_array_index(s->fhs, struct nd_str, idx);
    return tbbt_fhtab_intern(tbbt__conv_fhtab(s->conv), s->fhbytes->data + h->off, h->len);
}

static void set_str(struct nd_state *s, struct tbbt_trace_rec *rec, struct tbbt_str *dst,
                    const struct nd_str *src)
{
    tbbt_trace_rec_set_str(rec, dst, s->sbuf->data + src->off, src->len);
}

#define PLAIN(f, m) {f, offsetof(struct tbbt_trace_rec, m), sizeof(((struct tbbt_trace_rec *)0)->m)}

/* Record fields copied as they are from the scratch record. */
static const struct {
    uint8_t field;
    uint16_t off, size;
} plain[] = {
    PLAIN(TBBT_F_OFFSET, offset), PLAIN(TBBT_F_COUNT, count), PLAIN(TBBT_F_STABLE, stable),
    PLAIN(TBBT_F_SATTR, sattr), PLAIN(TBBT_F_GUARD, guard_ns), PLAIN(TBBT_F_COOKIE, cookie),
    PLAIN(TBBT_F_COOKIEVERF, cookieverf), PLAIN(TBBT_F_DIRCOUNT, dircount),
    PLAIN(TBBT_F_MAXCOUNT, maxcount), PLAIN(TBBT_F_ACCESS, access),
    PLAIN(TBBT_F_CREATEMODE, createmode), PLAIN(TBBT_F_CREATEVERF, createverf),
    PLAIN(TBBT_F_FTYPE, ftype), PLAIN(TBBT_F_RDEV, rdev), PLAIN(TBBT_F_OBJ_ATTR, obj_attr),
    PLAIN(TBBT_F_OBJ_PRE, obj_pre), PLAIN(TBBT_F_DIR_ATTR, dir_attr),
    PLAIN(TBBT_F_DIR_PRE, dir_pre), PLAIN(TBBT_F_DIR2_ATTR, dir2_attr),
    PLAIN(TBBT_F_DIR2_PRE, dir2_pre), PLAIN(TBBT_F_RES_COUNT, res_count),
    PLAIN(TBBT_F_EOF, eof), PLAIN(TBBT_F_COMMITTED, committed),
    PLAIN(TBBT_F_WRITEVERF, writeverf), PLAIN(TBBT_F_ACCESS_RES, access_res),
};

static void merge_entries(struct nd_state *s, const struct nd_line *L, struct tbbt_trace_rec *rec)
{
    for (guint i = 0; i < s->ents->len; i++) {
        const struct nd_entry *e = &g_array_index(s->ents, struct nd_entry, i);
        struct tbbt_str name;
        struct tbbt_entry *te;

        set_str(s, rec, &name, &e->name);
        te = tbbt_trace_rec_add_entry(rec);
        te->fileid = e->fileid;
        te->cookie = e->cookie;
        te->name = name;
        if (e->seen & E_FH) {
            te->fh = intern(s, e->fh);
            te->flags |= TBBT_ENT_FH;
        }
        if (e->attr.seen) {
            te->attr = fattr_of(&e->attr, L->v2);
            te->flags |= TBBT_ENT_ATTR;
        }
    }
}

/* Copies the line's fields into the core's record (interning handles now). */
static void merge(struct nd_state *s, const struct nd_line *L, struct tbbt_trace_rec *rec)
{
    const struct tbbt_trace_rec *x = &L->r;
    uint64_t p = x->present;

    if (p & B(TBBT_F_FH))
        rec->fh = intern(s, x->fh);
    if (p & B(TBBT_F_FH2))
        rec->fh2 = intern(s, x->fh2);
    if (p & B(TBBT_F_NEW_FH))
        rec->new_fh = intern(s, x->new_fh);
    if (p & B(TBBT_F_NAME))
        set_str(s, rec, &rec->name, &L->name);
    if (p & B(TBBT_F_NAME2))
        set_str(s, rec, &rec->name2, &L->name2);
    if (p & B(TBBT_F_TARGET))
        set_str(s, rec, &rec->target, &L->target);
    if (p & B(TBBT_F_DIRPATH))
        set_str(s, rec, &rec->dirpath, &L->dirpath);
    for (size_t i = 0; i < G_N_ELEMENTS(plain); i++)
        if (p & B(plain[i].field))
            memcpy((char *)rec + plain[i].off, (const char *)x + plain[i].off, plain[i].size);
    if (p & B(TBBT_F_INFO)) {
        memcpy(rec->info, x->info, sizeof(rec->info));
        rec->n_info = x->n_info;
    }
    if (p & B(TBBT_F_ENTRIES))
        merge_entries(s, L, rec);
    rec->present |= p;
}

static void put_be32(uint8_t *d, uint32_t v)
{
    d[0] = (uint8_t)(v >> 24);
    d[1] = (uint8_t)(v >> 16);
    d[2] = (uint8_t)(v >> 8);
    d[3] = (uint8_t)v;
}

/*
 * The time of a line that goes to the core, on the clocks of stepclock.h:
 * returns its record time, and in *pair_ns the time the reply timeout runs
 * on.  Lines are events in file order, their times may step back (files
 * concatenated or merged, a clock set back): the pairing and the trace
 * follow the file order.
 */
static uint64_t line_time(struct nd_state *s, uint64_t ts_ns, uint64_t *pair_ns)
{
    uint64_t back = tbbt__stepclock_stats(&s->clock)->steps_back;
    uint64_t t = tbbt__stepclock_next(&s->clock, ts_ns, pair_ns);

    if (back == 0 && tbbt__stepclock_stats(&s->clock)->steps_back == 1)
        s->first_step = g_strdup_printf("'%s' line %" G_GUINT64_FORMAT, s->path,
                                        (guint64)s->file_lines);
    return t;
}

/* Hands a parsed line to the core: a call opens a record, a reply completes one. */
static void emit(struct nd_state *s, const struct nd_line *L)
{
    struct tbbt__conv_msg m;
    struct tbbt_trace_rec *rec;

    memset(&m, 0, sizeof(m));
    m.key.af = 4;
    m.key.xid = L->xid;
    put_be32(m.key.caddr, L->call ? L->src : L->dst);
    put_be32(m.key.saddr, L->call ? L->dst : L->src);
    m.key.cport = L->call ? L->sport : L->dport;
    m.key.sport = L->call ? L->dport : L->sport;
    m.ts_ns = line_time(s, L->ts_ns, &m.pair_ns);
    m.tcp = L->tcp;
    m.truncated = L->short_ || L->cut;
    if (L->call) {
        rec = tbbt__conv_call(s->conv, &m, L->prog, L->proc, L->uid, L->gid);
        if (rec) {
            merge(s, L, rec);
            rec->flags |= m.truncated ? TBBT_RF_CALL_TRUNC : 0;
        }
    } else {
        rec = tbbt__conv_reply(s->conv, &m, TBBT_RPC_SUCCESS);
        if (rec && L->known && (rec->prog != L->prog || rec->proc != L->proc)) {
            s->mismatches++;
            rec->flags |= TBBT_RF_REPLY_BAD;
        } else if (rec && L->known) {
            merge(s, L, rec);
            rec->flags |= m.truncated ? TBBT_RF_REPLY_TRUNC : 0;
            if (L->has_status) {
                rec->status = L->status;
                rec->flags |= TBBT_RF_STATUS;
            }
        }
    }
    tbbt__conv_drain(s->conv);
}

/* A malformed line of the current file: skipped, counted. */
static void bad_line(struct nd_state *s)
{
    s->malformed++;
    if (s->file_bad++ == 0)
        s->first_bad = s->file_lines;
}

/* One input line (without its newline).  Returns true if the input ended inside it. */
static bool one_line(struct nd_state *s, const char *p, size_t len, bool unterminated)
{
    struct nd_line *L = &s->line;
    int rc;

    s->lines++;
    s->file_lines++;
    reset_line(s, L);
    L->last_complete = len > 0 && is_blank(p[len - 1]);
    while (len > 0 && is_blank(p[len - 1]))
        len--;
    while (len > 0 && is_blank(*p))
        p++, len--;
    if (len == 0 || *p == '#' || (len >= 2 && p[0] == 'X' && p[1] == 'X')) {
        s->comments++;              /* blank, comment, or nfsdump's "XX" diagnostics */
        return false;
    }
    s->packets++;
    tokenize(s, p, len);
    rc = parse_line(s, L, unterminated);
    if (rc == ND_BAD)
        bad_line(s);
    else if (rc == ND_OTHER)
        s->other++;
    else
        emit(s, L);
    if (L->short_)
        s->short_lines++;
    if (L->cut)
        s->cut_lines++;
    return L->cut;
}

/* ---- input files -------------------------------------------------------------- */

static bool span(const char *p, size_t n, size_t *i, bool hex)
{
    size_t start = *i;

    while (*i < n && (hex ? hexval((unsigned char)p[*i]) >= 0 : (p[*i] >= '0' && p[*i] <= '9')))
        (*i)++;
    return *i > start;
}

static bool blanks(const char *p, size_t n, size_t *i)
{
    size_t start = *i;

    while (*i < n && (p[*i] == ' ' || p[*i] == '\t'))
        (*i)++;
    return *i > start;
}

/* "host.port" or "a.b.c.d.port" in the probe's loose sense: hex groups joined by dots. */
static bool probe_addr(const char *p, size_t n, size_t *i)
{
    int groups = 0;

    for (;;) {
        if (!span(p, n, i, true))
            return false;
        groups++;
        if (*i >= n || p[*i] != '.')
            break;
        (*i)++;
    }
    return groups >= 2 && groups <= 5;
}

/*
 * ^[0-9]+\.[0-9]+ ADDR ADDR [TU] [CR][123] , blanks being runs of spaces or
 * tabs: 1 if p[0..n) starts so, 0 if not, -1 if it might once more bytes come.
 */
static int match_header(const char *p, size_t n)
{
    size_t i = 0;
    bool ok = span(p, n, &i, false) && i < n && p[i++] == '.' && span(p, n, &i, false) &&
              blanks(p, n, &i) && probe_addr(p, n, &i) && blanks(p, n, &i) &&
              probe_addr(p, n, &i) && blanks(p, n, &i) && i < n && (p[i] == 'T' || p[i] == 'U');

    if (ok && (++i, blanks(p, n, &i)) && i < n && (p[i] == 'C' || p[i] == 'R') &&
        i + 1 < n && p[i + 1] >= '1' && p[i + 1] <= '3' && i + 2 < n &&
        (p[i + 2] == ' ' || p[i + 2] == '\t'))
        return 1;
    return i >= n ? -1 : 0;
}

#define PROBE_LINES 8          /* message lines the probe looks at */

/*
 * 1: one of the first PROBE_LINES message lines is nfsdump's; 0: none of
 * them is (and there was at least one); -1: undecided (no message line in
 * p[0..n), or none matched and the last one looked at is cut at n and
 * matches so far).  Several lines, so that one corrupt line does not decide.
 */
static int probe_text(const char *p, size_t n)
{
    size_t i = 0;
    int seen = 0, last = -1;

    while (i < n && seen < PROBE_LINES) {
        const char *nl = memchr(p + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - p) : n, j = i;

        while (j < end && is_blank(p[j]))
            j++;
        if (j < end && p[j] != '#' && !(end - j >= 2 && p[j] == 'X' && p[j + 1] == 'X')) {
            int m = match_header(p + j, end - j);
            if (m == 1)
                return 1;
            seen++;
            last = nl ? 0 : m;
        }
        if (!nl)
            break;
        i = end + 1;
    }
    return seen ? last : -1;
}

/* Content probe of convert.c (the first bytes, gunzipped): anything but a clear no. */
static bool nd_probe(const uint8_t *h, size_t len)
{
    return probe_text((const char *)h, len) != 0;
}

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!errbuf || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

static void progress(struct nd_state *s, gzFile gz)
{
    long long pos;

    if (!tbbt__conv_opts(s->conv)->progress)
        return;
    pos = (long long)gzoffset(gz);
    tbbt__conv_progress(s->conv, s->done_before + (pos > 0 ? (uint64_t)pos : 0), s->total);
}

/* How the read of a file ended: 0, TBBT_E_TRUNC (gzip data ends early) or a read error. */
static int read_end(gzFile gz, const char *path, char *errbuf, size_t errlen)
{
    int zerr;
    const char *why = gzerror(gz, &zerr);

    if (zerr == Z_OK || zerr == Z_STREAM_END)
        return 0;
    if (zerr == Z_BUF_ERROR) {
        set_err(errbuf, errlen, "'%s': compressed data ends early", path);
        return TBBT_E_TRUNC;
    }
    if (zerr == Z_ERRNO) {
        int e = errno ? errno : EIO;
        set_err(errbuf, errlen, "'%s': cannot read: %s", path, g_strerror(e));
        return -e;
    }
    set_err(errbuf, errlen, "'%s': cannot read: %s", path, why);
    return TBBT_E_BADREC;
}

/* Splits one file into lines (each at most LINE_MAX_BYTES) and parses them. */
static int read_lines(struct nd_state *s, gzFile gz, const char *path, char *errbuf,
                      size_t errlen)
{
    char *buf = s->buf;
    size_t start = 0, end = 0, scan = 0;
    bool skipping = false, probed = false;
    int n, rc;

    for (;;) {
        char *nl = memchr(buf + scan, '\n', end - scan);
        if (nl) {
            if (!skipping)
                one_line(s, buf + start, (size_t)(nl - buf) - start, false);
            skipping = false;
            start = scan = (size_t)(nl - buf) + 1;
            continue;
        }
        if (end - start > LINE_MAX_BYTES) {     /* an endless line: malformed, skipped */
            if (!skipping) {
                s->lines++;
                s->file_lines++;
                s->packets++;
                bad_line(s);
            }
            skipping = true;
            start = end;
        }
        memmove(buf, buf + start, end - start);
        end -= start;
        start = 0;
        scan = end;
        n = gzread(gz, buf + end, READ_CHUNK);
        if (n <= 0)
            break;
        if (!probed && probe_text(buf + end, (size_t)n) == 0) {
            set_err(errbuf, errlen, "'%s' is not an nfsdump text trace", path);
            return TBBT_E_MAGIC;
        }
        probed = true;
        end += (size_t)n;
        s->bytes += (uint64_t)n;
        progress(s, gz);
    }
    rc = read_end(gz, path, errbuf, errlen);
    if (rc != 0 && rc != TBBT_E_TRUNC)
        return rc;
    if (end > start && !skipping && one_line(s, buf + start, end - start, true) && rc == 0) {
        set_err(errbuf, errlen, "'%s' ends in the middle of a line", path);
        rc = TBBT_E_TRUNC;
    }
    return rc;
}

static int read_file(struct nd_state *s, const char *path, char *errbuf, size_t errlen)
{
    gzFile gz;
    GStatBuf st;
    int rc;

    errno = 0;
    gz = gzopen(path, "rb");
    if (!gz) {
        int e = errno ? errno : ENOMEM;
        set_err(errbuf, errlen, "'%s': cannot open: %s", path, g_strerror(e));
        return -e;
    }
    gzbuffer(gz, GZ_BUFFER);
    s->files++;
    s->path = path;
    s->file_lines = 0;
    s->file_bad = 0;
    rc = read_lines(s, gz, path, errbuf, errlen);
    gzclose(gz);
    if (s->file_bad && (rc == 0 || rc == TBBT_E_TRUNC)) {
        struct nd_damage d = {g_strdup(path), s->file_bad, s->first_bad};
        g_array_append_val(s->damaged, d);
        tbbt_log(TBBT_LOG_WARN, "'%s' is damaged: %" G_GUINT64_FORMAT " malformed line%s "
                 "skipped (the first is line %" G_GUINT64_FORMAT "); the outputs hold what "
                 "could be read", path, (guint64)s->file_bad, s->file_bad == 1 ? "" : "s",
                 (guint64)s->first_bad);
    }
    if (g_stat(path, &st) == 0)
        s->done_before += (uint64_t)st.st_size;
    return rc;
}

/* ---- the reader's ops --------------------------------------------------------- */

static void free_count(gpointer p)
{
    g_free(p);
}

static struct nd_state *state_new(struct tbbt__conv *c)
{
    struct nd_state *s = g_new0(struct nd_state, 1);

    s->conv = c;
    s->buf = g_malloc(LINE_MAX_BYTES + READ_CHUNK);
    s->sbuf = g_byte_array_sized_new(4096);
    s->fhbytes = g_byte_array_sized_new(1024);
    s->fhs = g_array_new(FALSE, FALSE, sizeof(struct nd_str));
    s->ents = g_array_new(FALSE, FALSE, sizeof(struct nd_entry));
    s->unknown = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, free_count);
    s->damaged = g_array_new(FALSE, FALSE, sizeof(struct nd_damage));
    tbbt__stepclock_init(&s->clock, tbbt__conv_opts(c)->reply_timeout_ns);
    return s;
}

/* A WARN line when the lines' clock stepped back, an INFO line when it jumped forward. */
static void report_clock(const struct nd_state *s)
{
    const struct tbbt__stepclock_stats *st = tbbt__stepclock_stats(&s->clock);

    if (st->steps_back)
        tbbt_log(TBBT_LOG_WARN,
                 "nfsdump: the time goes back %" G_GUINT64_FORMAT " time%s between lines "
                 "(largest step %.6f s, first at %s): lines pair in file order, and the times "
                 "from each step on are shifted later by it to stay in order (%" G_GUINT64_FORMAT
                 " lines, by %.6f s in all)",
                 (guint64)st->steps_back, st->steps_back == 1 ? "" : "s",
                 (double)st->step_back_max_ns / 1e9, s->first_step, (guint64)st->shifted,
                 (double)st->shift_ns / 1e9);
    if (st->jumps_forward)
        tbbt_log(TBBT_LOG_INFO,
                 "nfsdump: %" G_GUINT64_FORMAT " gap%s between lines longer than the reply "
                 "timeout (longest %.6f s): kept in the times, not counted as waiting for "
                 "replies", (guint64)st->jumps_forward, st->jumps_forward == 1 ? "" : "s",
                 (double)st->jump_forward_max_ns / 1e9);
}

static int nd_run(struct tbbt__conv *c, const char *const *paths, int n, char *errbuf,
                  size_t errlen)
{
    struct nd_state *s = state_new(c);
    char ebuf[512] = "";
    int rc = 0;
    GStatBuf st;

    *tbbt__conv_source_state(c) = s;
    if (g_once_init_enter(&keys_indexed))
        g_once_init_leave(&keys_indexed, index_keys());
    if (tbbt__conv_opts(c)->filter) {
        set_err(errbuf, errlen, "--filter applies to capture files, not to nfsdump text traces");
        return -EINVAL;
    }
    for (int i = 0; i < n; i++)
        if (g_stat(paths[i], &st) == 0)
            s->total += (uint64_t)st.st_size;
    for (int i = 0; i < n; i++) {
        int frc = read_file(s, paths[i], ebuf, sizeof(ebuf));
        if (frc != 0 && frc != TBBT_E_TRUNC) {
            set_err(errbuf, errlen, "%s", ebuf);
            return frc;
        }
        if (frc == TBBT_E_TRUNC && rc == 0) {
            set_err(errbuf, errlen, "%s", ebuf);
            rc = frc;
        }
    }
    report_clock(s);
    return rc == 0 && s->damaged->len ? TBBT_E_DAMAGED : rc;
}

static gint str_cmp(gconstpointer a, gconstpointer b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void unknown_keys_json(struct nd_state *s, struct tbbt_json *j)
{
    guint n;
    gpointer *names = g_hash_table_get_keys_as_array(s->unknown, &n);

    qsort(names, n, sizeof(*names), str_cmp);
    tbbt_json_key(j, "unknown_keys");
    tbbt_json_begin_object(j);
    for (guint i = 0; i < n; i++)
        tbbt_json_kv_uint(j, names[i], *(uint64_t *)g_hash_table_lookup(s->unknown, names[i]));
    tbbt_json_end_object(j);
    g_free(names);
}

static void clock_json(struct nd_state *s, struct tbbt_json *j)
{
    const struct tbbt__stepclock_stats *st = tbbt__stepclock_stats(&s->clock);

    tbbt_json_kv_uint(j, "clock_steps_back", st->steps_back);
    tbbt_json_kv_uint(j, "clock_step_back_max_ns", st->step_back_max_ns);
    tbbt_json_kv_uint(j, "clock_shift_ns", st->shift_ns);
    tbbt_json_kv_uint(j, "clock_shifted_lines", st->shifted);
    tbbt_json_kv_uint(j, "clock_jumps_forward", st->jumps_forward);
    tbbt_json_kv_uint(j, "clock_jump_forward_max_ns", st->jump_forward_max_ns);
}

static void nd_summary(struct tbbt__conv *c, struct tbbt_json *j)
{
    struct nd_state *s = *tbbt__conv_source_state(c);

    tbbt_json_kv_uint(j, "packets", s->packets);
    tbbt_json_kv_uint(j, "bytes", s->bytes);
    tbbt_json_kv_uint(j, "truncated_packets", 0);
    tbbt_json_kv_uint(j, "malformed_packets", s->malformed);
    tbbt_json_kv_uint(j, "skipped_lines", s->malformed);
    tbbt_json_key(j, "damaged_files");
    tbbt_json_begin_array(j);
    for (guint i = 0; i < s->damaged->len; i++) {
        const struct nd_damage *d = &g_array_index(s->damaged, struct nd_damage, i);
        tbbt_json_begin_object(j);
        tbbt_json_key(j, "file");
        tbbt_json_string(j, d->path);
        tbbt_json_kv_uint(j, "skipped_lines", d->lines);
        tbbt_json_kv_uint(j, "first_skipped_line", d->first);
        tbbt_json_end_object(j);
    }
    tbbt_json_end_array(j);
    tbbt_json_key(j, "nfsdump");
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "files", s->files);
    tbbt_json_kv_uint(j, "lines", s->lines);
    tbbt_json_kv_uint(j, "comment_lines", s->comments);
    tbbt_json_kv_uint(j, "malformed_lines", s->malformed);
    tbbt_json_kv_uint(j, "other_lines", s->other);
    tbbt_json_kv_uint(j, "short_lines", s->short_lines);
    tbbt_json_kv_uint(j, "cut_lines", s->cut_lines);
    tbbt_json_kv_uint(j, "extra_attributes", s->extra_attrs);
    tbbt_json_kv_uint(j, "reply_mismatches", s->mismatches);
    unknown_keys_json(s, j);
    clock_json(s, j);
    tbbt_json_end_object(j);
}

static void nd_fini(struct tbbt__conv *c)
{
    struct nd_state *s = *tbbt__conv_source_state(c);

    if (!s)
        return;
    g_free(s->buf);
    g_free(s->toks);
    g_byte_array_free(s->sbuf, TRUE);
    g_byte_array_free(s->fhbytes, TRUE);
    g_array_free(s->fhs, TRUE);
    g_array_free(s->ents, TRUE);
    g_hash_table_destroy(s->unknown);
    for (guint i = 0; i < s->damaged->len; i++)
        g_free(g_array_index(s->damaged, struct nd_damage, i).path);
    g_array_free(s->damaged, TRUE);
    g_free(s->first_step);
    g_free(s);
    *tbbt__conv_source_state(c) = NULL;
}

const struct tbbt__source_ops tbbt__source_nfsdump = {
    .name = "nfsdump",
    .version = 1,
    .probe = nd_probe,
    .run = nd_run,
    .summary = nd_summary,
    .fini = nd_fini,
};
