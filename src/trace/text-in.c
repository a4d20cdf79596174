/* SPDX-License-Identifier: MIT */
/*
 * Text form of a trace, input side: a strict parser for the grammar of
 * docs/trace-format.md ("Text form") that writes the binary trace.  `fh`,
 * `ep` and `cred` lines define handles, endpoints and credentials at exactly
 * their place in the text (tbbt_trace_writer_sync_defs), so dump -> parse
 * reproduces the binary file byte for byte.  Every error names its line and the reason.
 */
#include "trace/trace-int.h"
#include "proto/proto.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

struct parser {
    const char *start, *p, *end;    /* the current line, p at the next byte to parse */
    uint64_t line;
    char *why;                      /* caller's message buffer, may be NULL */
    size_t whylen;
    GString *tmp;                   /* unescaped string */
    struct tbbt_fhtab *fh;
    struct tbbt_eptab *ep;
    struct tbbt_credtab *cred;
    struct tbbt_trace_writer *w;
    struct tbbt_trace_rec rec;
    uint64_t nops;
    bool ended;
};

static int syntax(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int syntax(struct parser *ps, const char *fmt, ...)
{
    va_list ap;

    if (ps->why && ps->whylen) {
        va_start(ap, fmt);
        vsnprintf(ps->why, ps->whylen, fmt, ap);
        va_end(ap);
        for (char *c = ps->why; *c; c++)    /* quoted input stays one printable line */
            if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f)
                *c = '?';
    }
    return TBBT_E_SYNTAX;
}

/* ---- lexing ------------------------------------------------------------------- */

static bool at_end(const struct parser *ps)
{
    return ps->p == ps->end;
}

static bool eat(struct parser *ps, char c)
{
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    return false;
}

static int expect(struct parser *ps, char c)
{
    if (eat(ps, c))
        return 0;
    if (at_end(ps))
        return syntax(ps, "expected '%c' before end of line", c);
    return syntax(ps, "expected '%c' at column %zu", c, (size_t)(ps->p - ps->start) + 1);
}

static bool is_word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* Length of the [A-Za-z0-9_] run at p. */
static size_t word_len(const struct parser *ps)
{
    size_t n = 0;

    while (ps->p + n < ps->end && is_word_char(ps->p[n]))
        n++;
    return n;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Skips blanks; false at end of line.  With `need`, a blank is required first. */
static int next_token(struct parser *ps, bool need, bool *more)
{
    const char *start = ps->p;

    while (ps->p < ps->end && is_blank(*ps->p))
        ps->p++;
    *more = !at_end(ps);
    if (*more && need && ps->p == start)
        return syntax(ps, "expected a blank before '%c'", *ps->p);
    return 0;
}

/* The next field of a line, which must be there: 0, or the error ("missing WHAT"). */
static int next_field(struct parser *ps, const char *what)
{
    bool more;
    int rc = next_token(ps, true, &more);

    if (rc < 0)
        return rc;
    return more ? 0 : syntax(ps, "missing %s", what);
}

static int end_of_line(struct parser *ps)
{
    bool more;

    next_token(ps, false, &more);
    return more ? syntax(ps, "unexpected text '%.20s'", ps->p) : 0;
}

/* ---- numbers ---------------------------------------------------------------- */

static int digit_val(char c, int base)
{
    int d = -1;

    if (c >= '0' && c <= '9')
        d = c - '0';
    else if (c >= 'a' && c <= 'f')
        d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
        d = c - 'A' + 10;
    return d < base ? d : -1;
}

/* Digits in base at p; false if none, on overflow, or a word character follows. */
static bool scan_digits(struct parser *ps, int base, uint64_t *out)
{
    uint64_t v = 0;
    const char *s = ps->p;
    int d;

    while (ps->p < ps->end && (d = digit_val(*ps->p, base)) >= 0) {
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)d;
        ps->p++;
    }
    *out = v;
    return ps->p > s && (at_end(ps) || !is_word_char(*ps->p));
}

/* integer := "0" | [1-9][0-9]* | "0x" hex+, at most max. */
static int parse_uint(struct parser *ps, uint64_t max, uint64_t *out, const char *what)
{
    const char *s = ps->p;
    bool ok;

    if (ps->end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        ps->p += 2;
        ok = scan_digits(ps, 16, out);
    } else {
        ok = scan_digits(ps, 10, out) && !(s[0] == '0' && ps->p - s > 1);
    }
    if (!ok)
        return syntax(ps, "bad number for %s", what);
    if (*out > max)
        return syntax(ps, "%s out of range (max %" PRIu64 ")", what, max);
    return 0;
}

static int parse_u32(struct parser *ps, uint32_t *out, const char *what)
{
    uint64_t v;
    int rc = parse_uint(ps, UINT32_MAX, &v, what);

    *out = (uint32_t)v;
    return rc;
}

/* mode := "0" [0-7]* (octal). */
static int parse_mode(struct parser *ps, uint32_t *out, const char *what)
{
    uint64_t v;

    if (!eat(ps, '0'))
        return syntax(ps, "%s must be octal with a leading 0", what);
    if (at_end(ps) || !is_word_char(*ps->p)) {
        *out = 0;
        return 0;
    }
    if (!scan_digits(ps, 8, &v) || v > UINT32_MAX)
        return syntax(ps, "bad octal number for %s", what);
    *out = (uint32_t)v;
    return 0;
}

/* time := SEC "." 1-9 digits, nanoseconds since the epoch. */
static int parse_time(struct parser *ps, uint64_t *out, const char *what)
{
    uint64_t sec, frac = 0;
    int d, n = 0;

    if (!scan_digits(ps, 10, &sec) || !eat(ps, '.'))
        return syntax(ps, "bad time for %s (want SEC.NSEC)", what);
    for (; n < 10 && ps->p < ps->end && (d = digit_val(*ps->p, 10)) >= 0; ps->p++, n++)
        frac = frac * 10 + (uint64_t)d;
    if (n == 0 || n > 9 || (!at_end(ps) && is_word_char(*ps->p)))
        return syntax(ps, "bad time for %s (want SEC.NSEC, 1-9 fraction digits)", what);
    for (; n < 9; n++)
        frac *= 10;
    if (sec > (UINT64_MAX - frac) / 1000000000u)
        return syntax(ps, "time out of range for %s", what);
    *out = sec * 1000000000u + frac;
    return 0;
}

/* A word: a name from t, or a number up to max. */
static int parse_tok(struct parser *ps, const struct tbbt__tok *t, uint64_t max, int *out,
                     const char *what)
{
    size_t n = word_len(ps);
    uint64_t v;
    int rc;

    if (n > 0 && ps->p[0] >= '0' && ps->p[0] <= '9') {
        if ((rc = parse_uint(ps, max, &v, what)) < 0)
            return rc;
        *out = (int)v;
        return 0;
    }
    if (n == 0 || !t || tbbt__tok_value(t, ps->p, n, out) < 0)
        return syntax(ps, "unknown %s '%.*s'", what, (int)(n ? n : 1), ps->p);
    ps->p += n;
    return 0;
}

/* bits := item ("|" item)*, item a name from t or a number. */
static int parse_bits(struct parser *ps, const struct tbbt__tok *t, uint32_t max, uint32_t *out,
                      const char *what)
{
    uint32_t v = 0;
    int item, rc;

    do {
        if ((rc = parse_tok(ps, t, max, &item, what)) < 0)
            return rc;
        if (v & (uint32_t)item)
            return syntax(ps, "%s bit given twice", what);
        v |= (uint32_t)item;
    } while (eat(ps, '|'));
    *out = v;
    return 0;
}

/* status := NAME | [-]decimal. */
static int parse_status(struct parser *ps, int prog, int32_t *out)
{
    bool neg = eat(ps, '-');
    size_t n = word_len(ps);
    uint64_t v;
    int rc;

    if (neg || (n > 0 && ps->p[0] >= '0' && ps->p[0] <= '9')) {
        if ((rc = parse_uint(ps, neg ? (uint64_t)INT32_MAX + 1 : INT32_MAX, &v, "status")) < 0)
            return rc;
        *out = neg ? (int32_t)(-(int64_t)v) : (int32_t)v;
        return 0;
    }
    if (n == 0 || !tbbt__status_tok(prog) ||
        tbbt__tok_value(tbbt__status_tok(prog), ps->p, n, &rc) < 0)
        return syntax(ps, "unknown status '%.*s' for this program", (int)(n ? n : 1), ps->p);
    *out = rc;
    ps->p += n;
    return 0;
}

/* ---- strings and structures ----------------------------------------------------- */

static int parse_escape(struct parser *ps, char *c)
{
    int hi, lo;

    if (at_end(ps))
        return syntax(ps, "unterminated string");
    switch (*ps->p++) {
    case '\\':
        *c = '\\';
        return 0;
    case '"':
        *c = '"';
        return 0;
    case 'n':
        *c = '\n';
        return 0;
    case 't':
        *c = '\t';
        return 0;
    case 'r':
        *c = '\r';
        return 0;
    case 'x':
        if (ps->end - ps->p < 2 || (hi = digit_val(ps->p[0], 16)) < 0 ||
            (lo = digit_val(ps->p[1], 16)) < 0)
            return syntax(ps, "bad \\x escape (want two hex digits)");
        ps->p += 2;
        *c = (char)(hi << 4 | lo);
        return 0;
    default:
        return syntax(ps, "unknown escape '\\%c'", ps->p[-1]);
    }
}

/* string := '"' (char | escape)* '"', at most max bytes, into ps->tmp. */
static int parse_string_tmp(struct parser *ps, uint32_t max, const char *what)
{
    GString *t = ps->tmp;
    int rc;

    g_string_truncate(t, 0);
    if (!eat(ps, '"'))
        return syntax(ps, "%s must be a quoted string", what);
    for (;;) {
        char c;
        if (at_end(ps))
            return syntax(ps, "unterminated string in %s", what);
        c = *ps->p++;
        if (c == '"')
            break;
        if (c == '\\') {
            if ((rc = parse_escape(ps, &c)) < 0)
                return rc;
        } else if ((unsigned char)c < 0x20 || c == 0x7f) {
            return syntax(ps, "control byte 0x%02x in %s: write it as \\x%02x", c, what, c);
        }
        if (t->len >= max)
            return syntax(ps, "%s longer than %" PRIu32 " bytes", what, max);
        g_string_append_c(t, c);
    }
    return 0;
}

/* A string (parse_string_tmp) into rec's arena. */
static int parse_string(struct parser *ps, struct tbbt_str *dst, uint32_t max, const char *what)
{
    int rc = parse_string_tmp(ps, max, what);

    if (rc == 0)
        tbbt_trace_rec_set_str(&ps->rec, dst, ps->tmp->str, (uint32_t)ps->tmp->len);
    return rc;
}

/* key := word, followed by '='.  Returns its length (0 on error). */
static size_t parse_key(struct parser *ps, int *rc)
{
    size_t n = word_len(ps);

    *rc = 0;
    if (n == 0 || ps->p + n >= ps->end || ps->p[n] != '=') {
        *rc = syntax(ps, "expected key=value at '%.20s'", ps->p);
        return 0;
    }
    return n;
}

static int parse_sub(struct parser *ps, const struct tbbt__sub *d, void *base)
{
    char *v = (char *)base + d->off;
    uint64_t u;
    int rc;

    switch (d->kind) {
    case TBBT__S_U32:
        return parse_u32(ps, (uint32_t *)v, d->name);
    case TBBT__S_U64:
        rc = parse_uint(ps, UINT64_MAX, &u, d->name);
        *(uint64_t *)v = u;
        return rc;
    case TBBT__S_MODE:
        return parse_mode(ps, (uint32_t *)v, d->name);
    case TBBT__S_TIME:
        return parse_time(ps, (uint64_t *)v, d->name);
    case TBBT__S_MASK:
        return parse_bits(ps, tbbt__sa_names, UINT32_MAX, (uint32_t *)v, d->name);
    }
    return 0;
}

/*
 * The members of a braced value, '{' [key=value (',' key=value)*] '}', each key at most
 * once: a struct (its table of members, tbbt__sub) or a directory entry.
 */
struct members {
    const char *what;           /* for messages: "entry", "attr", ... */
    const char *const *keys;    /* the keys, by index (NULL-terminated); or NULL: subs */
    const struct tbbt__sub *subs;   /* the struct's members (name NULL last) */
    void *base;                 /* what the values go into */
};

/* The index of key k[0..n) in m, and its name; -1 if m has no such key. */
static int member_index(const struct members *m, const char *k, size_t n, const char **name)
{
    for (int i = 0;; i++) {
        const char *key = m->keys ? m->keys[i] : m->subs[i].name;
        if (!key)
            return -1;
        if (strlen(key) == n && memcmp(key, k, n) == 0) {
            *name = key;
            return i;
        }
    }
}

static int parse_entry_member(struct parser *ps, struct tbbt_entry *e, const char *k, size_t n);

/* A braced value (struct members): members left out are 0. */
static int parse_members(struct parser *ps, const struct members *m)
{
    uint32_t seen = 0;
    const char *name;
    int rc, i;

    if ((rc = expect(ps, '{')) < 0)
        return rc;
    if (eat(ps, '}'))
        return 0;
    do {
        size_t n = parse_key(ps, &rc);
        if (n == 0)
            return rc;
        if ((i = member_index(m, ps->p, n, &name)) < 0)
            return syntax(ps, "unknown key '%.*s' in %s", (int)n, ps->p, m->what);
        if (seen & (1u << i))
            return syntax(ps, "duplicate key '%s' in %s", name, m->what);
        seen |= 1u << i;
        ps->p += n + 1;
        rc = m->keys ? parse_entry_member(ps, m->base, name, n)
                     : parse_sub(ps, &m->subs[i], m->base);
        if (rc < 0)
            return rc;
    } while (eat(ps, ','));
    return expect(ps, '}');
}

/* struct := '{' [key=value (',' key=value)*] '}'; members left out are 0. */
static int parse_struct(struct parser *ps, const struct tbbt__sub *subs, void *base,
                        const char *what)
{
    return parse_members(ps, &(struct members){ .what = what, .subs = subs, .base = base });
}

static int parse_ref(struct parser *ps, uint32_t *ref, const char *what)
{
    int rc = parse_u32(ps, ref, what);

    if (rc == 0 && *ref >= tbbt_fhtab_count(ps->fh))
        return syntax(ps, "%s refers to undefined handle %" PRIu32, what, *ref);
    return rc;
}

static int parse_entry_member(struct parser *ps, struct tbbt_entry *e, const char *k, size_t n)
{
    if (n == 6 && memcmp(k, "fileid", 6) == 0)
        return parse_uint(ps, UINT64_MAX, &e->fileid, "fileid");
    if (n == 6 && memcmp(k, "cookie", 6) == 0)
        return parse_uint(ps, UINT64_MAX, &e->cookie, "cookie");
    if (n == 4 && memcmp(k, "name", 4) == 0)
        return parse_string(ps, &e->name, TBBT_NAME_MAX, "entry name");
    if (n == 2 && memcmp(k, "fh", 2) == 0) {
        e->flags |= TBBT_ENT_FH;
        return parse_ref(ps, &e->fh, "entry fh");
    }
    if (n == 2 && memcmp(k, "id", 2) == 0) {
        e->flags |= TBBT_ENT_ID;
        return parse_uint(ps, UINT64_MAX, &e->id, "entry id");
    }
    e->flags |= TBBT_ENT_ATTR;
    return parse_struct(ps, tbbt__fattr_subs, &e->attr, "entry attr");
}

/* entry := '{' fileid=, cookie=, name=, [fh=], [attr=], [id=] in any order '}'. */
static int parse_entry(struct parser *ps, struct tbbt_entry *e)
{
    static const char *const keys[] = {"fileid", "cookie", "name", "fh", "attr", "id", NULL};

    return parse_members(ps, &(struct members){ .what = "entry", .keys = keys, .base = e });
}

/* ---- NFSv4 operations -------------------------------------------------------------- */

/* id := "0x" and 32 hex digits (a stateid or sessionid). */
static int parse_id16(struct parser *ps, uint8_t *id, const char *what)
{
    int hi, lo;

    if (ps->end - ps->p < 2 + 2 * TBBT_OP4_ID_LEN || ps->p[0] != '0' || ps->p[1] != 'x')
        return syntax(ps, "%s must be 0x and %d hex digits", what, 2 * TBBT_OP4_ID_LEN);
    ps->p += 2;
    for (int i = 0; i < TBBT_OP4_ID_LEN; i++, ps->p += 2) {
        if ((hi = digit_val(ps->p[0], 16)) < 0 || (lo = digit_val(ps->p[1], 16)) < 0)
            return syntax(ps, "%s must be 0x and %d hex digits", what, 2 * TBBT_OP4_ID_LEN);
        id[i] = (uint8_t)(hi << 4 | lo);
    }
    if (!at_end(ps) && is_word_char(*ps->p))
        return syntax(ps, "%s must be 0x and %d hex digits", what, 2 * TBBT_OP4_ID_LEN);
    return 0;
}

/* op := an operation name ("PUTFH") or its number. */
static int parse_op4_num(struct parser *ps, uint32_t *op)
{
    size_t n = word_len(ps);

    if (n > 0 && ps->p[0] >= '0' && ps->p[0] <= '9')
        return parse_u32(ps, op, "op");
    for (const struct tbbt_proto_tok *t = tbbt_proto_nfs4_ops; t->name; t++) {
        if (strlen(t->name) == n && memcmp(t->name, ps->p, n) == 0) {
            *op = (uint32_t)t->value;
            ps->p += n;
            return 0;
        }
    }
    return syntax(ps, "unknown NFSv4 operation '%.*s'", (int)(n ? n : 1), ps->p);
}

/* The members' keys and bits of `has`, in member order. */
struct op4_key {
    const char *key;
    int m;
};
#define OP4_KEY(m, member, kind, text) {text, TBBT_O4_##m},
static const struct op4_key op4_keys[] = {TBBT__OP4_MEMBERS(OP4_KEY) {NULL, 0}};
#undef OP4_KEY

#define GET_U32(v, what) parse_u32(ps, &(v), what)
#define GET_U64(v, what) parse_uint(ps, UINT64_MAX, &(v), what)
#define GET_REF(v, what) parse_ref(ps, &(v), what)
#define GET_NAME(v, what) parse_string(ps, &(v), TBBT_NAME_MAX, what)
#define GET_PATH(v, what) parse_string(ps, &(v), TBBT_PATH_MAX, what)
#define GET_BLOB(v, what) parse_string(ps, &(v), TBBT_OP4_OWNER_MAX, what)
#define GET_ID16(v, what) parse_id16(ps, v, what)
#define GET_VERF(v, what) parse_uint(ps, UINT64_MAX, &(v), what)
#define GET_SATTR(v, what) parse_struct(ps, tbbt__sattr_subs, &(v), what)
#define GET_FATTR(v, what) parse_struct(ps, tbbt__fattr_subs, &(v), what)
#define GET_MEMBER(m, member, kind, text)                                                     \
    case TBBT_O4_##m:                                                                         \
        return GET_##kind(o->member, text);

/* The value of member i of an operation. */
static int parse_op4_member(struct parser *ps, struct tbbt_op4 *o, int i)
{
    int32_t st;
    int rc;

    if (i == TBBT_O4_STATUS) {
        if ((rc = parse_status(ps, TBBT_PROG_NFS4, &st)) == 0)
            o->status = (uint32_t)st;
        return rc;
    }
    switch (i) {
        TBBT__OP4_MEMBERS(GET_MEMBER)
    }
    return syntax(ps, "unknown operation member");
}

/* op4 := '{' op=NAME [',' trunc=1] (',' member=value)* '}', members at most once each. */
static int parse_op4(struct parser *ps, struct tbbt_op4 *o)
{
    int rc, i;

    if ((rc = expect(ps, '{')) < 0)
        return rc;
    if (!(ps->end - ps->p > 3 && memcmp(ps->p, "op=", 3) == 0))
        return syntax(ps, "an NFSv4 operation starts with op=");
    ps->p += 3;
    if ((rc = parse_op4_num(ps, &o->op)) < 0)
        return rc;
    while (eat(ps, ',')) {
        size_t n = parse_key(ps, &rc);

        if (n == 0)
            return rc;
        if (n == 5 && memcmp(ps->p, "trunc", 5) == 0 && !(o->has >> TBBT_O4_TRUNC & 1u)) {
            ps->p += 6;
            if (!eat(ps, '1'))
                return syntax(ps, "trunc must be 1");
            o->has |= (uint64_t)1 << TBBT_O4_TRUNC;
            continue;
        }
        for (i = 0; op4_keys[i].key; i++)
            if (strlen(op4_keys[i].key) == n && memcmp(op4_keys[i].key, ps->p, n) == 0)
                break;
        if (!op4_keys[i].key)
            return syntax(ps, "unknown key '%.*s' in an NFSv4 operation", (int)n, ps->p);
        if (o->has >> op4_keys[i].m & 1u)
            return syntax(ps, "duplicate key '%s' in an NFSv4 operation", op4_keys[i].key);
        o->has |= (uint64_t)1 << op4_keys[i].m;
        ps->p += n + 1;
        if ((rc = parse_op4_member(ps, o, op4_keys[i].m)) < 0)
            return rc;
    }
    return expect(ps, '}');
}

/* The list fields of an op line. */
enum list_kind { LIST_ENTRIES, LIST_INFO, LIST_OPS };

/* One item of a list of kind k. */
static int parse_item(struct parser *ps, enum list_kind k)
{
    struct tbbt_trace_rec *rec = &ps->rec;
    struct tbbt_op4 *o;

    switch (k) {
    case LIST_ENTRIES:
        return parse_entry(ps, tbbt_trace_rec_add_entry(rec));
    case LIST_INFO:
        if (rec->n_info == TBBT_INFO_MAX)
            return syntax(ps, "info has more than %d values", TBBT_INFO_MAX);
        return parse_uint(ps, UINT64_MAX, &rec->info[rec->n_info++], "info value");
    default:
        if (!(o = tbbt_trace_rec_add_op4(rec)))
            return syntax(ps, "more than %d NFSv4 operations", TBBT_OP4_MAX);
        return parse_op4(ps, o);
    }
}

/* list := '[' [item (',' item)*] ']' for entries, info and ops. */
static int parse_list(struct parser *ps, enum list_kind k)
{
    int rc;

    if ((rc = expect(ps, '[')) < 0)
        return rc;
    if (eat(ps, ']'))
        return 0;
    do {
        if ((rc = parse_item(ps, k)) < 0)
            return rc;
    } while (eat(ps, ','));
    return expect(ps, ']');
}

/* ---- op lines ------------------------------------------------------------------ */

static int parse_field(struct parser *ps, unsigned f)
{
    struct tbbt_trace_rec *rec = &ps->rec;
    void *v = TBBT__FIELD_PTR(rec, f);
    const char *name = tbbt__trace_fields[f].name;
    int rc;

    switch (tbbt__trace_fields[f].kind) {
    case TBBT__K_REF:
        return parse_ref(ps, v, name);
    case TBBT__K_CRED:
        rc = parse_u32(ps, v, name);
        if (rc == 0 && *(uint32_t *)v >= tbbt_credtab_count(ps->cred))
            return syntax(ps, "%s refers to undefined credential %" PRIu32, name,
                          *(uint32_t *)v);
        return rc;
    case TBBT__K_U32:
        return parse_u32(ps, v, name);
    case TBBT__K_U64:
    case TBBT__K_VERF:
        return parse_uint(ps, UINT64_MAX, v, name);
    case TBBT__K_TIME:
        return parse_time(ps, v, name);
    case TBBT__K_NAME:
        return parse_string(ps, v, TBBT_NAME_MAX, name);
    case TBBT__K_PATH:
        return parse_string(ps, v, TBBT_PATH_MAX, name);
    case TBBT__K_SATTR:
        return parse_struct(ps, tbbt__sattr_subs, v, name);
    case TBBT__K_FATTR:
        return parse_struct(ps, tbbt__fattr_subs, v, name);
    case TBBT__K_WCC:
        return parse_struct(ps, tbbt__wcc_subs, v, name);
    case TBBT__K_ENTRIES:
        return parse_list(ps, LIST_ENTRIES);
    case TBBT__K_OPS4:
        return parse_list(ps, LIST_OPS);
    case TBBT__K_OPS4X:
        return syntax(ps, "%s is not a key of the text form (its members are in ops)", name);
    case TBBT__K_INFO:
        return parse_list(ps, LIST_INFO);
    }
    return 0;
}

/* The header keys of an op line; the rest are fields (enum tbbt_field). */
enum { H_XID, H_EP, H_UID, H_GID, H_FLAGS, H_RPC, H_STATUS, H_N };
static const char *const hdr_keys[H_N] = {"xid", "ep", "uid", "gid", "flags", "rpc", "status"};

static int parse_hdr_key(struct parser *ps, int h)
{
    struct tbbt_trace_rec *rec = &ps->rec;
    uint32_t v;
    int t, rc;

    switch (h) {
    case H_XID:
        return parse_u32(ps, &rec->xid, "xid");
    case H_EP:
        return parse_u32(ps, &rec->endpoint, "ep");
    case H_UID:
        return parse_u32(ps, &rec->uid, "uid");
    case H_GID:
        return parse_u32(ps, &rec->gid, "gid");
    case H_FLAGS:
        rc = parse_bits(ps, tbbt__rf_names, UINT16_MAX, &v, "flags");
        rec->flags = (uint16_t)v;
        return rc;
    case H_RPC:
        rc = parse_tok(ps, tbbt__rpc_names, UINT8_MAX, &t, "rpc status");
        rec->rpc_stat = (uint8_t)t;
        return rc;
    default:
        return parse_status(ps, rec->prog, &rec->status);
    }
}

static int parse_kv(struct parser *ps, uint32_t *seen_hdr)
{
    struct tbbt_trace_rec *rec = &ps->rec;
    int rc;
    size_t n = parse_key(ps, &rc);
    const char *k = ps->p;

    if (n == 0)
        return rc;
    ps->p += n + 1;
    for (int h = 0; h < H_N; h++) {
        if (strlen(hdr_keys[h]) == n && memcmp(hdr_keys[h], k, n) == 0) {
            if (*seen_hdr & (1u << h))
                return syntax(ps, "duplicate key '%s'", hdr_keys[h]);
            *seen_hdr |= 1u << h;
            return parse_hdr_key(ps, h);
        }
    }
    for (unsigned f = 0; f < TBBT_F_NFIELDS; f++) {
        if (strlen(tbbt__trace_fields[f].name) == n &&
            memcmp(tbbt__trace_fields[f].name, k, n) == 0) {
            if (TBBT_HAS(rec, f))
                return syntax(ps, "duplicate key '%s'", tbbt__trace_fields[f].name);
            TBBT_SET(rec, f);
            return parse_field(ps, f);
        }
    }
    return syntax(ps, "unknown key '%.*s'", (int)n, k);
}

/* op CALL REPLY PROG PROC key=value... */
static int parse_op_head(struct parser *ps)
{
    struct tbbt_trace_rec *rec = &ps->rec;
    int v, rc;

    if ((rc = next_field(ps, "call time")) < 0 ||
        (rc = parse_time(ps, &rec->call_ns, "call time")) < 0)
        return rc;
    if ((rc = next_field(ps, "reply time")) < 0 ||
        (rc = parse_time(ps, &rec->reply_ns, "reply time")) < 0)
        return rc;
    if ((rc = next_field(ps, "program")) < 0 ||
        (rc = parse_tok(ps, tbbt__prog_names, UINT8_MAX, &v, "program")) < 0)
        return rc;
    rec->prog = (uint8_t)v;
    if ((rc = next_field(ps, "procedure")) < 0 ||
        (rc = parse_tok(ps, tbbt__proc_tok(rec->prog), UINT8_MAX, &v, "procedure")) < 0)
        return rc;
    rec->proc = (uint8_t)v;
    return 0;
}

static int parse_op(struct parser *ps)
{
    uint32_t seen_hdr = 0;
    bool more;
    int rc;

    tbbt_trace_rec_clear(&ps->rec);
    if ((rc = parse_op_head(ps)) < 0)
        return rc;
    for (;;) {
        if ((rc = next_token(ps, true, &more)) < 0)
            return rc;
        if (!more)
            break;
        if ((rc = parse_kv(ps, &seen_hdr)) < 0)
            return rc;
    }
    if (ps->rec.endpoint >= tbbt_eptab_count(ps->ep))
        return syntax(ps, "ep=%" PRIu32 " refers to an undefined endpoint", ps->rec.endpoint);
    rc = tbbt_trace_writer_put(ps->w, &ps->rec);
    if (rc == TBBT_E_RANGE)
        return syntax(ps, "record breaks a bound of the binary format");
    if (rc == 0)
        ps->nops++;
    return rc;
}

/* ---- definition lines and the rest ---------------------------------------------- */

/* A definition line's REF (fh, ep, cred): the next of its table, which holds count. */
static int def_ref(struct parser *ps, const char *kind, uint32_t count, uint32_t *ref)
{
    char what[32];
    int rc;

    g_snprintf(what, sizeof(what), "%s reference", kind);
    if ((rc = next_field(ps, what)) < 0 || (rc = parse_u32(ps, ref, "ref")) < 0)
        return rc;
    if (*ref != count)
        return syntax(ps, "%s %" PRIu32 " out of order (next is %" PRIu32 ")", kind, *ref,
                      count);
    return 0;
}

/* The end of a definition line, after the table's add (< 0: a duplicate definition). */
static int def_added(struct parser *ps, int added, const char *kind, uint32_t ref)
{
    if (added < 0)
        return syntax(ps, "%s %" PRIu32 " duplicates an earlier %s", kind, ref, kind);
    return tbbt_trace_writer_sync_defs(ps->w);
}

/* fh REF HEX|- */
static int parse_fh(struct parser *ps)
{
    uint8_t fh[TBBT_FH_MAX];
    uint32_t ref, len = 0;
    int rc;

    if ((rc = def_ref(ps, "handle", tbbt_fhtab_count(ps->fh), &ref)) < 0)
        return rc;
    if ((rc = next_field(ps, "handle bytes")) < 0)
        return rc;
    if (!eat(ps, '-')) {
        for (; ps->p < ps->end && !is_blank(*ps->p); ps->p += 2, len++) {
            int hi = digit_val(ps->p[0], 16);
            int lo = ps->end - ps->p > 1 ? digit_val(ps->p[1], 16) : -1;
            if (hi < 0 || lo < 0 || len == TBBT_FH_MAX)
                return syntax(ps, "handle must be 1-%d bytes in hex, or '-'", TBBT_FH_MAX);
            fh[len] = (uint8_t)(hi << 4 | lo);
        }
    }
    if ((rc = end_of_line(ps)) < 0)
        return rc;
    return def_added(ps, tbbt_fhtab_add(ps->fh, ref, fh, len), "handle", ref);
}

/* hostport := addr ":" port | "[" addr "]" ":" port */
static int parse_hostport(struct parser *ps, char *addr, uint16_t *port)
{
    bool br = eat(ps, '[');
    const char *a = ps->p;
    uint32_t v;
    size_t n;
    int rc;

    while (ps->p < ps->end && !is_blank(*ps->p) && *ps->p != (br ? ']' : ':'))
        ps->p++;
    n = (size_t)(ps->p - a);
    if (!tbbt__addr_valid(a, n))
        return syntax(ps, "bad address '%.*s'", (int)n, a);
    if ((br && (rc = expect(ps, ']')) < 0) || (rc = expect(ps, ':')) < 0 ||
        (rc = parse_u32(ps, &v, "port")) < 0)
        return rc;
    if (v > UINT16_MAX)
        return syntax(ps, "port %" PRIu32 " out of range", v);
    memcpy(addr, a, n);
    addr[n] = '\0';
    *port = (uint16_t)v;
    return 0;
}

/* ep REF tcp|udp CLIENT SERVER */
static int parse_ep(struct parser *ps)
{
    struct tbbt_endpoint ep;
    uint32_t ref;
    size_t n;
    int rc;

    memset(&ep, 0, sizeof(ep));
    if ((rc = def_ref(ps, "endpoint", tbbt_eptab_count(ps->ep), &ref)) < 0)
        return rc;
    if ((rc = next_field(ps, "transport")) < 0)
        return rc;
    n = word_len(ps);
    if (!(n == 3 && (memcmp(ps->p, "tcp", 3) == 0 || memcmp(ps->p, "udp", 3) == 0)))
        return syntax(ps, "transport must be tcp or udp");
    ep.tcp = ps->p[0] == 't';
    ps->p += 3;
    if ((rc = next_field(ps, "client address")) < 0 ||
        (rc = parse_hostport(ps, ep.client, &ep.client_port)) < 0)
        return rc;
    if ((rc = next_field(ps, "server address")) < 0 ||
        (rc = parse_hostport(ps, ep.server, &ep.server_port)) < 0)
        return rc;
    if ((rc = end_of_line(ps)) < 0)
        return rc;
    return def_added(ps, tbbt_eptab_add(ps->ep, ref, &ep), "endpoint", ref);
}

/* GIDS := "-" | u32 ("," u32)*, at most TBBT_CRED_GIDS_MAX. */
static int parse_gids(struct parser *ps, struct tbbt_cred *c)
{
    int rc;

    if (eat(ps, '-'))
        return 0;
    do {
        if (c->ngids == TBBT_CRED_GIDS_MAX)
            return syntax(ps, "more than %d gids", TBBT_CRED_GIDS_MAX);
        if ((rc = parse_u32(ps, &c->gids[c->ngids++], "gid")) < 0)
            return rc;
    } while (eat(ps, ','));
    return 0;
}

/* cred REF "MACHINE" UID GID GIDS */
static int parse_cred(struct parser *ps)
{
    struct tbbt_cred c;
    uint32_t ref;
    int rc;

    memset(&c, 0, sizeof(c));
    if ((rc = def_ref(ps, "credential", tbbt_credtab_count(ps->cred), &ref)) < 0)
        return rc;
    if ((rc = next_field(ps, "machine name")) < 0 ||
        (rc = parse_string_tmp(ps, TBBT_MACHINE_MAX, "machine name")) < 0)
        return rc;
    c.machine_len = (uint32_t)ps->tmp->len;
    memcpy(c.machine, ps->tmp->str, c.machine_len);
    if ((rc = next_field(ps, "uid")) < 0 || (rc = parse_u32(ps, &c.uid, "uid")) < 0)
        return rc;
    if ((rc = next_field(ps, "gid")) < 0 || (rc = parse_u32(ps, &c.gid, "gid")) < 0)
        return rc;
    if ((rc = next_field(ps, "gids (a,b,c or -)")) < 0 || (rc = parse_gids(ps, &c)) < 0)
        return rc;
    if ((rc = end_of_line(ps)) < 0)
        return rc;
    return def_added(ps, tbbt_credtab_add(ps->cred, ref, &c), "credential", ref);
}

/* end COUNT */
static int parse_end(struct parser *ps)
{
    uint64_t n;
    int rc;

    if ((rc = next_field(ps, "record count")) < 0 ||
        (rc = parse_uint(ps, UINT64_MAX, &n, "count")) < 0)
        return rc;
    if ((rc = end_of_line(ps)) < 0)
        return rc;
    if (n != ps->nops)
        return syntax(ps, "end says %" PRIu64 " records, the text has %" PRIu64, n, ps->nops);
    ps->ended = true;
    return 0;
}

/* # tbbt-trace MAJOR.MINOR */
static int parse_header(struct parser *ps)
{
    static const char tag[] = "# tbbt-trace ";
    uint64_t major, minor;
    int rc;

    if ((size_t)(ps->end - ps->p) < sizeof(tag) - 1 || memcmp(ps->p, tag, sizeof(tag) - 1) != 0)
        return syntax(ps, "missing header line '# tbbt-trace %d.%d'", TBBT_TRACE_MAJOR,
                      TBBT_TRACE_MINOR);
    ps->p += sizeof(tag) - 1;
    if ((rc = parse_uint(ps, UINT16_MAX, &major, "major version")) < 0 ||
        (rc = expect(ps, '.')) < 0 ||
        (rc = parse_uint(ps, UINT16_MAX, &minor, "minor version")) < 0 ||
        (rc = end_of_line(ps)) < 0)
        return rc;
    if (major != TBBT_TRACE_MAJOR || minor > TBBT_TRACE_MINOR) {
        syntax(ps, "version %" PRIu64 ".%" PRIu64 " not supported (this is %d.%d)", major, minor,
               TBBT_TRACE_MAJOR, TBBT_TRACE_MINOR);
        return TBBT_E_VERSION;
    }
    return 0;
}

static bool is_ignored(const struct parser *ps)
{
    const char *p = ps->p;

    while (p < ps->end && is_blank(*p))
        p++;
    return p == ps->end || *p == '#';
}

static const struct {
    const char *word;
    int (*parse)(struct parser *ps);
} line_types[] = {
    {"op", parse_op},     {"fh", parse_fh},   {"ep", parse_ep},
    {"cred", parse_cred}, {"end", parse_end}, {NULL, NULL},
};

static int parse_line(struct parser *ps)
{
    size_t n;

    if (ps->line == 1)
        return parse_header(ps);
    if (is_ignored(ps))
        return 0;
    if (ps->ended)
        return syntax(ps, "text after the end line");
    n = word_len(ps);
    for (int i = 0; line_types[i].word; i++) {
        if (strlen(line_types[i].word) == n && memcmp(line_types[i].word, ps->p, n) == 0) {
            ps->p += n;
            return line_types[i].parse(ps);
        }
    }
    return syntax(ps, "unknown line type '%.*s'", (int)(n ? n : 1), ps->p);
}

static int parse_file(struct parser *ps, FILE *in)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;

    while (rc == 0 && (len = getline(&buf, &cap, in)) >= 0) {
        ps->line++;
        ps->start = ps->p = buf;
        ps->end = buf + len;
        if (len > 0 && buf[len - 1] == '\n')
            ps->end--;
        rc = parse_line(ps);
    }
    free(buf);
    if (rc == 0 && ferror(in))
        rc = -EIO;
    if (rc == 0 && ps->line == 0) {
        ps->line = 1;
        rc = syntax(ps, "empty file: missing header line");
    } else if (rc == 0 && !ps->ended) {
        rc = syntax(ps, "missing 'end %" PRIu64 "' line at end of file", ps->nops);
    }
    return rc;
}

int tbbt_trace_from_text_why(const char *text_path, const char *out_path, uint64_t *line,
                             char *why, size_t whylen)
{
    struct parser ps = {.why = why, .whylen = whylen};
    bool is_stdin = strcmp(text_path, "-") == 0;
    FILE *in = is_stdin ? stdin : fopen(text_path, "r");
    struct tbbt_outfile *out;
    int rc;

    *line = 0;
    if (why && whylen)
        why[0] = '\0';
    if (!in)
        return -errno;
    ps.fh = tbbt_fhtab_new();
    ps.ep = tbbt_eptab_new();
    ps.cred = tbbt_credtab_new();
    ps.tmp = g_string_sized_new(TBBT_PATH_MAX + 1);
    tbbt_trace_rec_init(&ps.rec);
    /* written aside: a failed parse leaves an existing out_path as it was */
    out = tbbt_outfile_new(out_path, 0, &rc, NULL, 0);
    ps.w = out ? tbbt_trace_writer_open(tbbt_outfile_path(out), ps.fh, ps.ep, &rc) : NULL;
    if (ps.w) {
        tbbt_trace_writer_set_credtab(ps.w, ps.cred);
        rc = parse_file(&ps, in);
        *line = ps.line;
        if (rc == 0) {
            rc = tbbt_trace_writer_close(ps.w);
        } else {
            tbbt_trace_writer_abort(ps.w);
        }
    }
    if (rc == 0)
        rc = tbbt_outfile_commit(out, NULL, 0);
    else
        tbbt_outfile_abort(out);
    if (!is_stdin)
        fclose(in);
    tbbt_trace_rec_fini(&ps.rec);
    g_string_free(ps.tmp, TRUE);
    tbbt_credtab_free(ps.cred);
    tbbt_eptab_free(ps.ep);
    tbbt_fhtab_free(ps.fh);
    return rc;
}

int tbbt_trace_from_text(const char *text_path, const char *out_path, uint64_t *line)
{
    return tbbt_trace_from_text_why(text_path, out_path, line, NULL, 0);
}
