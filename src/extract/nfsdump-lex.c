/* SPDX-License-Identifier: MIT */
/*
 * nfsdump lines into tokens, and token values into numbers, times, addresses,
 * strings and handles (the nfsdump text-trace reader's lexical side, shared
 * through nfsdump-int.h): splitting a line into runs of non-blanks and quoted
 * strings, the key names and their variants (docs/nfsdump-format.md lists
 * them), nfsdump's debugging markers, and the count of unknown keys by name.
 * It does not know what a key means for a procedure (nfsdump-fields.c) nor
 * read files (source-nfsdump.c).  Strings and handles go into the line's
 * scratch buffers of struct nd_state; nothing here allocates per field.
 */
#include <string.h>

#include <glib.h>

#include "extract/nfsdump-int.h"

#define MAX_UNKNOWN_NAMES 256       /* distinct unknown key names counted by name */
#define KEYNAME_MAX 40              /* longest unknown key name reported */

/* ---- key names ----------------------------------------------------------------- */

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

/* ---- small parsers ------------------------------------------------------------ */

/* Hex number of up to 64 bits ("0x" allowed); false if not one. */
bool tbbt__nd_hex_u64(const struct tok *t, uint64_t *v)
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

bool tbbt__nd_hex_u32(const struct tok *t, uint32_t *v)
{
    uint64_t x;

    if (!tbbt__nd_hex_u64(t, &x) || x > UINT32_MAX)
        return false;
    *v = (uint32_t)x;
    return true;
}

/*
 * "sec[.frac]" to ns.  With usec the fraction is a count of microseconds
 * (nfsdump's v2 printer writes "%ld.%-6ld"), up to 1000000 (*server: the v2
 * "set to server time" value); else a decimal fraction of up to 9 digits.
 */
bool tbbt__nd_parse_time(const struct tok *t, bool usec, uint64_t *ns, bool *server)
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
bool tbbt__nd_parse_addr(const struct tok *t, uint32_t *host, uint16_t *port)
{
    uint32_t dot = t->len, p;
    struct tok h, pt;

    while (dot > 0 && t->p[dot - 1] != '.')
        dot--;
    if (t->quoted || dot < 2 || dot == t->len)
        return false;
    pt = sub(t, dot, t->len);
    h = sub(t, 0, dot - 1);
    if (!tbbt__nd_hex_u32(&pt, &p) || p > 0xffff)
        return false;
    *port = (uint16_t)p;
    if (memchr(h.p, '.', h.len))
        return quad(&h, host);
    return tbbt__nd_hex_u32(&h, host);
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
bool tbbt__nd_parse_str(struct nd_state *s, const struct tok *t, uint32_t max, struct nd_str *out)
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
bool tbbt__nd_parse_fh(struct nd_state *s, const struct tok *t, uint32_t *idx)
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
bool tbbt__nd_parse_sym(const struct tok *t, const char *letters, uint32_t *v)
{
    const char *c;

    if (t->len == 1 && !t->quoted && (c = strchr(letters, t->p[0])) != NULL && *c) {
        *v = (uint32_t)(c - letters);
        return true;
    }
    return tbbt__nd_hex_u32(t, v);
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
void tbbt__nd_tokenize(struct nd_state *s, const char *p, size_t len)
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
int tbbt__nd_lookup_key(const struct tok *t, int32_t *idx)
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
bool tbbt__nd_is_marker(const struct tok *t, const struct tok *next)
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
bool tbbt__nd_has_trailer(const struct nd_state *s)
{
    for (uint32_t i = s->ntok > 4 ? s->ntok - 4 : 0; i < s->ntok; i++) {
        const struct tok *t = &s->toks[i];
        if (!t->quoted && (tok_is(t, "len") || (t->len >= 4 && memcmp(t->p, "len=", 4) == 0)))
            return true;
    }
    return false;
}

/* ---- unknown keys ------------------------------------------------------------- */

void tbbt__nd_count_unknown(struct nd_state *s, const struct tok *t)
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
int tbbt__nd_unknown_key(struct nd_state *s, uint32_t i)
{
    const struct tok *nx = i + 1 < s->ntok ? &s->toks[i + 1] : NULL;
    int32_t idx;

    tbbt__nd_count_unknown(s, &s->toks[i]);
    if (!nx || tbbt__nd_lookup_key(nx, &idx) != K_NONE ||
        tbbt__nd_is_marker(nx, i + 2 < s->ntok ? &s->toks[i + 2] : NULL))
        return 1;
    return 2;
}

void tbbt__nd_keys_init(void)
{
    if (g_once_init_enter(&keys_indexed))
        g_once_init_leave(&keys_indexed, index_keys());
}
