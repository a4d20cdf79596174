/* SPDX-License-Identifier: MIT */
/*
 * Reads a hierarchy map (docs/hierarchy-map.md; TBBT paper 3.2) for the
 * tools that build or use the initial image.  The map is input: every line
 * is checked (field count, numbers, times, escapes) and every path component
 * must be a plain name (not empty, ".", "..", and without '/' or NUL once
 * unescaped), so that no path read here can leave the export root.
 */
#include "ns/ns.h"

#include <errno.h>
#include <string.h>

#include "util/util.h"

#define NFIELDS 10

struct tbbt_ns_map_reader {
    FILE *f;
    bool own;
    char *buf;
    size_t cap;
    uint64_t line, entries;
    bool root_seen;
    GString *path, *final, *target, *comp;
    char err[160];
};

static int fail(struct tbbt_ns_map_reader *r, const char *why)
{
    g_strlcpy(r->err, why, sizeof(r->err));
    return TBBT_E_SYNTAX;
}

struct tbbt_ns_map_reader *tbbt_ns_map_reader_open(const char *path, int *err)
{
    struct tbbt_ns_map_reader *r = g_new0(struct tbbt_ns_map_reader, 1);
    ssize_t n;

    r->own = strcmp(path, "-") != 0;
    r->f = r->own ? fopen(path, "r") : stdin;
    if (!r->f) {
        *err = -errno;
        g_free(r);
        return NULL;
    }
    r->path = g_string_new(NULL);
    r->final = g_string_new(NULL);
    r->target = g_string_new(NULL);
    r->comp = g_string_new(NULL);
    n = getline(&r->buf, &r->cap, r->f);
    r->line = 1;
    if (n < 0 || strncmp(r->buf, "# tbbt-map ", 11) != 0) {
        *err = n < 0 && ferror(r->f) ? -EIO : TBBT_E_MAGIC;
    } else if (strcmp(r->buf + 11, "2\n") != 0 && strcmp(r->buf + 11, "2") != 0) {
        *err = TBBT_E_VERSION;
    } else {
        return r;
    }
    tbbt_ns_map_reader_close(r);
    return NULL;
}

void tbbt_ns_map_reader_close(struct tbbt_ns_map_reader *r)
{
    if (!r)
        return;
    if (r->own)
        fclose(r->f);
    free(r->buf);
    g_string_free(r->path, TRUE);
    g_string_free(r->final, TRUE);
    g_string_free(r->target, TRUE);
    g_string_free(r->comp, TRUE);
    g_free(r);
}

uint64_t tbbt_ns_map_reader_line(const struct tbbt_ns_map_reader *r)
{
    return r->line;
}

const char *tbbt_ns_map_reader_error(const struct tbbt_ns_map_reader *r)
{
    return r->err;
}

/* ---- fields ----------------------------------------------------------------------- */

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;

    if (len == 0 || len > 20 || (len > 1 && s[0] == '0'))
        return false;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9 || v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

/* "0" or SEC.NSEC with nine digits. */
static bool parse_time(const char *s, size_t len, uint64_t *out)
{
    const char *dot = memchr(s, '.', len);
    uint64_t sec, nsec;

    if (!dot)
        return len == 1 && s[0] == '0' && (*out = 0, true);
    if (s + len - dot - 1 != 9 || !parse_u64(s, (size_t)(dot - s), &sec) ||
        sec > UINT64_MAX / 1000000000u)
        return false;
    nsec = 0;
    for (int i = 1; i <= 9; i++) {
        unsigned d = (unsigned char)dot[i] - '0';
        if (d > 9)
            return false;
        nsec = nsec * 10 + d;
    }
    if (nsec > UINT64_MAX - sec * 1000000000u)
        return false;
    *out = sec * 1000000000u + nsec;
    return true;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool tbbt_ns_unescape(const char *s, size_t len, GString *out)
{
    g_string_truncate(out, 0);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        int hi, lo;
        if (c < 0x20 || c > 0x7e)
            return false;
        if (c != '\\') {
            g_string_append_c(out, (char)c);
        } else if (i + 1 < len && s[i + 1] == '\\') {
            g_string_append_c(out, '\\');
            i++;
        } else if (i + 3 < len && s[i + 1] == 'x' && (hi = hexval(s[i + 2])) >= 0 &&
                   (lo = hexval(s[i + 3])) >= 0) {
            g_string_append_c(out, (char)(hi << 4 | lo));
            i += 3;
        } else {
            return false;
        }
    }
    return true;
}

/* A path field into out: "." (root) or valid components joined by '/'. */
static int parse_path(struct tbbt_ns_map_reader *r, const char *s, size_t len, GString *out,
                      bool *is_root)
{
    size_t start = 0;

    g_string_truncate(out, 0);
    *is_root = len == 1 && s[0] == '.';
    if (*is_root) {
        g_string_append_c(out, '.');
        return 0;
    }
    if (len == 0)
        return fail(r, "empty path");
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '/')
            continue;
        if (!tbbt_ns_unescape(s + start, i - start, r->comp))
            return fail(r, "bad escape or raw control byte in a path");
        if (!tbbt_ns_name_ok(r->comp->str, r->comp->len))
            return fail(r, "path component is empty, '.', '..', too long, or holds '/' or NUL");
        if (out->len)
            g_string_append_c(out, '/');
        g_string_append_len(out, r->comp->str, (gssize)r->comp->len);
        start = i + 1;
    }
    return 0;
}

static int parse_type(const char *s, size_t len, enum tbbt_ns_type *t)
{
    static const char tc[] = "fdlo";
    const char *p = len == 1 ? strchr(tc, s[0]) : NULL;

    if (!p || !*p)
        return -1;
    *t = (enum tbbt_ns_type)(p - tc + 1);
    return 0;
}

static int parse_size(const char *s, size_t len, struct tbbt_ns_map_entry *e)
{
    e->size = 0;
    e->size_state = 0;
    if (len == 1 && s[0] == '-')
        return 0;
    e->size_state = len > 1 && s[len - 1] == '+' ? 2 : 1;
    return parse_u64(s, len - (e->size_state == 2), &e->size) ? 0 : -1;
}

static int parse_target(struct tbbt_ns_map_reader *r, const char *s, size_t len,
                        struct tbbt_ns_map_entry *e)
{
    e->target = NULL;
    e->target_len = 0;
    if (len == 1 && s[0] == '-')
        return 0;
    if (!tbbt_ns_unescape(s, len, r->target) || memchr(r->target->str, '\0', r->target->len) ||
        r->target->len > TBBT_PATH_MAX)
        return fail(r, "bad symlink target");
    e->target = r->target->str;
    e->target_len = r->target->len;
    return 0;
}

/* Splits line[0..len) at tabs into exactly NFIELDS fields. */
static bool split(char *line, size_t len, const char **f, size_t *flen)
{
    int n = 0;
    size_t start = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != '\t')
            continue;
        if (n == NFIELDS)
            return false;
        f[n] = line + start;
        flen[n++] = i - start;
        start = i + 1;
    }
    return n == NFIELDS;
}

/* "-" or MODE:UID:GID (mode: 4 octal digits; uid, gid: decimal u32). */
static int parse_attrs(const char *f, size_t n, struct tbbt_ns_map_entry *e)
{
    uint64_t uid, gid;
    const char *c1, *c2;
    uint32_t mode = 0;

    if (n == 1 && f[0] == '-')
        return 0;
    if (n < 8 || f[4] != ':' || !(c1 = f + 4) || !(c2 = memchr(c1 + 1, ':', n - 5)))
        return -1;
    for (int i = 0; i < 4; i++) {
        if (f[i] < '0' || f[i] > '7')
            return -1;
        mode = mode * 8 + (uint32_t)(f[i] - '0');
    }
    if (!parse_u64(c1 + 1, (size_t)(c2 - c1 - 1), &uid) || uid > UINT32_MAX ||
        !parse_u64(c2 + 1, n - (size_t)(c2 + 1 - f), &gid) || gid > UINT32_MAX)
        return -1;
    e->attrs_known = true;
    e->mode = mode;
    e->uid = (uint32_t)uid;
    e->gid = (uint32_t)gid;
    return 0;
}

static int parse_fields(struct tbbt_ns_map_reader *r, const char **f, const size_t *n,
                        struct tbbt_ns_map_entry *e)
{
    uint64_t links;
    bool root, froot;
    int rc;

    memset(e, 0, sizeof(*e));
    if (!parse_u64(f[0], n[0], &e->id))
        return fail(r, "bad id");
    if (parse_type(f[1], n[1], &e->type) < 0)
        return fail(r, "bad type (f, d, l or o)");
    if (parse_size(f[2], n[2], e) < 0)
        return fail(r, "bad size");
    if (!parse_time(f[3], n[3], &e->create_ns))
        return fail(r, "bad create time");
    e->deleted = !(n[4] == 1 && f[4][0] == '-');
    if (e->deleted && !parse_time(f[4], n[4], &e->delete_ns))
        return fail(r, "bad delete time");
    if ((rc = parse_path(r, f[5], n[5], r->path, &root)) < 0 ||
        (rc = parse_path(r, f[6], n[6], r->final, &froot)) < 0)
        return rc;
    if (root != froot || (root && (r->entries || e->type != TBBT_NS_DIR || r->root_seen)))
        return fail(r, "'.' is only the path of the root, a directory, and the first entry");
    if (e->id == 0 && e->type != TBBT_NS_DIR)
        return fail(r, "id 0 is only for a synthetic directory");
    if ((rc = parse_target(r, f[7], n[7], e)) < 0)
        return rc;
    if (!parse_u64(f[8], n[8], &links) || links == 0 || links > UINT32_MAX)
        return fail(r, "bad links count");
    e->links = (uint32_t)links;
    if (parse_attrs(f[9], n[9], e) < 0)
        return fail(r, "bad attributes (MODE:UID:GID, mode in 4 octal digits, or -)");
    r->root_seen |= root;
    e->path = r->path->str;
    e->path_len = r->path->len;
    e->final_path = r->final->str;
    e->final_len = r->final->len;
    return 0;
}

int tbbt_ns_map_reader_next(struct tbbt_ns_map_reader *r, struct tbbt_ns_map_entry *e)
{
    const char *f[NFIELDS];
    size_t flen[NFIELDS];
    ssize_t n;
    int rc;

    for (;;) {
        errno = 0;
        n = getline(&r->buf, &r->cap, r->f);
        if (n < 0)
            return ferror(r->f) ? (errno ? -errno : -EIO) : 0;
        r->line++;
        if (n > 0 && r->buf[n - 1] == '\n')
            r->buf[--n] = '\0';
        if (n == 0 || r->buf[0] == '#')
            continue;
        if ((size_t)n != strlen(r->buf))
            return fail(r, "NUL byte in a line");
        if (!split(r->buf, (size_t)n, f, flen))
            return fail(r, "a line needs 10 tab-separated fields");
        if ((rc = parse_fields(r, f, flen, e)) < 0)
            return rc;
        r->entries++;
        return 1;
    }
}
