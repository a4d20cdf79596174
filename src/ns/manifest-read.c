/* SPDX-License-Identifier: MIT */
/*
 * Loading tbbt-init's manifest for the player (manifest.h; docs/tbbt-init.md, "The
 * manifest").  The manifest is input: a version 2 manifest's checksum line is checked
 * over the whole file before any other line is believed, then every line is checked
 * (known key, field count, numbers, escapes, path components that cannot leave the
 * image root: escape.c) and the whole-file rules applied (clone lines as many as
 * `clones` says, `status complete` last).  Errors come back as one line in the
 * caller's buffer, "manifest 'F' line N: ...".
 */
#include "ns/manifest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns/ns.h"
#include "util/textsum.h"
#include "util/util.h"

#define SHOWN_MAX 120           /* bytes of a hostile field shown in a message */

struct mload {
    const char *file;
    uint64_t line;
    char *err;
    size_t errlen;
    GString *comp;              /* one unescaped component */
    GString *path;              /* one unescaped path */
    GString *shown;             /* a field for a message */
    struct tbbt_manifest *m;
    uint64_t clones;            /* from the clones line */
    int version;                /* 1 (no checksum line) or 2 */
    uint64_t sum_line;          /* version 2: the line of the checksum (the last) */
    bool have_clones, have_status, have_map, have_root;
};

static int bad(struct mload *l, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bad(struct mload *l, int rc, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tbbt_errbuf(l->err, l->errlen, "manifest '%s' line %" PRIu64 ": %s", l->file, l->line, msg);
    return rc;
}

/* Raw bytes s[0..len) of a field, escaped and cut, for a message (valid until the next call). */
static const char *shown(struct mload *l, const char *s, size_t len)
{
    g_string_truncate(l->shown, 0);
    tbbt_ns_escape(l->shown, s, MIN(len, (size_t)SHOWN_MAX));
    if (len > SHOWN_MAX)
        g_string_append(l->shown, "...");
    return l->shown->str;
}

/* A decimal number without sign or leading zeros into *v; false if not one. */
static bool parse_u64(const char *s, uint64_t *v)
{
    uint64_t x = 0;

    if (!*s || (s[0] == '0' && s[1]))
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        x = x * 10 + (uint64_t)(*s - '0');
    }
    *v = x;
    return true;
}

/*
 * A relative path field (escaped) into l->path: "." when dot_ok, else components split
 * at raw '/', each unescaped and valid.
 */
static int parse_rel(struct mload *l, const char *what, const char *s, bool dot_ok)
{
    size_t len = strlen(s), k;

    if (len == 1 && s[0] == '.') {
        g_string_assign(l->path, ".");
        return dot_ok ? 0 : bad(l, TBBT_E_SYNTAX, "%s path '.' is not allowed here", what);
    }
    switch (tbbt_ns_unescape_relpath(s, len, l->path, l->comp, &k)) {
    case TBBT_NS_RELPATH_ESCAPE:
        return bad(l, TBBT_E_SYNTAX, "%s path '%s': bad escape or raw byte", what,
                   shown(l, s, len));
    case TBBT_NS_RELPATH_NAME:
        return bad(l, TBBT_E_SYNTAX, "%s path '%s': component %zu is empty, '.', '..', "
                   "longer than 255 bytes, or holds '/' or NUL", what, shown(l, s, len), k);
    default:
        return 0;
    }
}

/* An absolute or relative server path (map, root): unescaped, non-empty, no NUL. */
static int parse_any_path(struct mload *l, const char *what, const char *s, char **out)
{
    if (!tbbt_ns_unescape(s, strlen(s), l->path) || l->path->len == 0 ||
        memchr(l->path->str, 0, l->path->len))
        return bad(l, TBBT_E_SYNTAX, "bad %s path '%s'", what, shown(l, s, strlen(s)));
    if (*out)
        return bad(l, TBBT_E_SYNTAX, "second %s line", what);
    *out = g_strndup(l->path->str, l->path->len);
    return 0;
}

/* Free text of a parameter or stats line: printable ASCII. */
static int check_text(struct mload *l, const char *key, const char *s)
{
    if (!*s)
        return bad(l, TBBT_E_SYNTAX, "empty %s line", key);
    for (const char *p = s; *p; p++) {
        if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
            return bad(l, TBBT_E_SYNTAX, "%s line holds a control or non-ASCII byte", key);
    }
    return 0;
}

static int need_fields(struct mload *l, const char *key, guint n, guint want)
{
    if (n != want)
        return bad(l, TBBT_E_SYNTAX, "%s line has %u fields, expected %u", key, n, want);
    return 0;
}

static int line_obj(struct mload *l, char **f, guint n)
{
    struct tbbt_manifest_obj o;
    int rc;

    if ((rc = need_fields(l, "obj", n, 3)) < 0)
        return rc;
    if (!parse_u64(f[1], &o.id))
        return bad(l, TBBT_E_SYNTAX, "bad TBBT-ID '%s'", shown(l, f[1], strlen(f[1])));
    if ((rc = parse_rel(l, "obj", f[2], true)) < 0)
        return rc;
    if (o.id == 0)
        return 0;   /* the map's synthetic tbbt-orphans directory: no record names it */
    o.path = g_string_chunk_insert_len(l->m->strings, l->path->str, (gssize)l->path->len);
    o.len = l->path->len;
    g_array_append_val(l->m->objs, o);
    return 0;
}

static int line_status(struct mload *l, char **f, guint n)
{
    if (n == 2 && strcmp(f[1], "complete") == 0) {
        l->have_status = true;
        l->m->complete = true;
        return 0;
    }
    if (n == 3 && strcmp(f[1], "failed") == 0) {
        tbbt_ns_unescape(f[2], strlen(f[2]), l->path);
        return bad(l, -EIO, "tbbt-init failed: %.300s", l->path->str);
    }
    return bad(l, TBBT_E_SYNTAX, "bad status line");
}

static int line_number(struct mload *l, char **f, guint n)
{
    uint64_t v;
    int rc;

    if ((rc = need_fields(l, f[0], n, 2)) < 0)
        return rc;
    if (!parse_u64(f[1], &v))
        return bad(l, TBBT_E_SYNTAX, "bad number '%s' in %s line", shown(l, f[1], strlen(f[1])),
                   f[0]);
    if (strcmp(f[0], "clones") == 0) {
        if (l->have_clones || v == 0 || v > UINT32_MAX)
            return bad(l, TBBT_E_SYNTAX, "bad or second clones line");
        l->have_clones = true;
        l->clones = v;
    }
    return 0;
}

static int line_path_key(struct mload *l, char **f, guint n)
{
    int rc;

    if ((rc = need_fields(l, f[0], n, strcmp(f[0], "made") == 0 ? 3 : 2)) < 0)
        return rc;
    if (strcmp(f[0], "map") == 0)
        return parse_any_path(l, "map", f[1], &l->m->map);
    if (strcmp(f[0], "root") == 0)
        return parse_any_path(l, "root", f[1], &l->m->root);
    if (strcmp(f[0], "server") == 0)
        return parse_any_path(l, "server", f[1], &l->m->server);
    if (strcmp(f[0], "export") == 0)
        return parse_any_path(l, "export", f[1], &l->m->export_path);
    if (strcmp(f[0], "clone") == 0) {
        if ((rc = parse_rel(l, "clone", f[1], true)) < 0)
            return rc;
        g_ptr_array_add(l->m->clones, g_strndup(l->path->str, l->path->len));
        return 0;
    }
    /* made KIND PATH */
    if (strcmp(f[1], "d") != 0 && strcmp(f[1], "f") != 0)
        return bad(l, TBBT_E_SYNTAX, "bad made kind '%s'", shown(l, f[1], strlen(f[1])));
    return parse_rel(l, "made", f[2], false);
}

/* map-crc32 HEX8: the checksum of the map the image was built from. */
static int line_map_crc(struct mload *l, char **f, guint n)
{
    char line[TBBT_TEXTSUM_LINE];
    int rc;

    if ((rc = need_fields(l, f[0], n, 2)) < 0)
        return rc;
    snprintf(line, sizeof(line), TBBT_TEXTSUM_PREFIX "%s", f[1]);
    if (l->m->have_map_crc || !tbbt_textsum_parse(line, strlen(line), &l->m->map_crc))
        return bad(l, TBBT_E_SYNTAX, "bad or second map-crc32 line (8 lowercase hex digits)");
    l->m->have_map_crc = true;
    return 0;
}

/* One line (without its newline). */
static int manifest_line(struct mload *l, char *s, size_t len)
{
    static const char *const numbers[] = { "seed", "clones", "scope", "appends", NULL };
    static const char *const texts[] = { "classes", "fill", "stats", NULL };
    char **f;
    guint n;
    int rc = 0;

    if (memchr(s, 0, len))
        return bad(l, TBBT_E_SYNTAX, "NUL byte in the line");
    if (l->have_status)
        return bad(l, TBBT_E_SYNTAX, "line after the status line");
    f = g_strsplit(s, "\t", 5);
    n = g_strv_length(f);
    if (n < 2)
        rc = bad(l, TBBT_E_SYNTAX, "malformed line '%s'", shown(l, s, len));
    else if (strcmp(f[0], "obj") == 0)
        rc = line_obj(l, f, n);
    else if (strcmp(f[0], "status") == 0)
        rc = line_status(l, f, n);
    else if (g_strv_contains(numbers, f[0]))
        rc = line_number(l, f, n);
    else if (strcmp(f[0], "map-crc32") == 0)
        rc = line_map_crc(l, f, n);
    else if (g_strv_contains(texts, f[0]))
        rc = need_fields(l, f[0], n, 2) < 0 ? TBBT_E_SYNTAX : check_text(l, f[0], f[1]);
    else if (strcmp(f[0], "map") == 0 || strcmp(f[0], "root") == 0 ||
             strcmp(f[0], "server") == 0 || strcmp(f[0], "export") == 0 ||
             strcmp(f[0], "clone") == 0 || strcmp(f[0], "made") == 0)
        rc = line_path_key(l, f, n);
    else
        rc = bad(l, TBBT_E_SYNTAX, "unknown line '%s'", shown(l, f[0], strlen(f[0])));
    g_strfreev(f);
    return rc;
}

static atomic_bool warned_v1;       /* the warning for a version 1 manifest: once */

/* The header line: version 2 has a checksum line, version 1 none (a warning, once). */
static int manifest_version(struct mload *l, const char *s)
{
    if (strcmp(s, TBBT_MANIFEST_HEADER) == 0) {
        l->version = 2;
        return 0;
    }
    if (strcmp(s, "# tbbt-manifest 1") != 0)
        return bad(l, strncmp(s, "# tbbt-manifest ", 16) == 0 ? TBBT_E_VERSION : TBBT_E_MAGIC,
                   "not a tbbt manifest of a known version (expected '# tbbt-manifest 2')");
    l->version = 1;
    return 0;
}

/* A version 2 manifest's checksum line: checked over the whole file first. */
static int manifest_sum(struct mload *l, FILE *fp)
{
    uint64_t lines = 0;
    int rc;

    if (fseek(fp, 0, SEEK_SET) < 0)
        return bad(l, -errno, "cannot read: %s", strerror(errno));
    rc = tbbt_textsum_verify(fp, 0, &l->m->crc, &lines);
    l->line = lines;
    if (rc == TBBT_E_TRUNC)
        return bad(l, rc, "no checksum line at the end (cut short?)");
    if (rc == TBBT_E_CHECKSUM)
        return bad(l, rc, "the checksum does not match the contents (changed or damaged)");
    if (rc < 0)
        return bad(l, rc, "cannot read: %s", tbbt_strerror(rc));
    l->sum_line = lines;
    l->line = 0;
    return fseek(fp, 0, SEEK_SET) < 0 ? bad(l, -errno, "cannot read: %s", strerror(errno)) : 0;
}

static int manifest_read(struct mload *l, FILE *fp)
{
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;

    while (rc == 0 && (len = getline(&buf, &cap, fp)) >= 0) {
        l->line++;
        if (len == 0 || buf[len - 1] != '\n') {
            rc = bad(l, TBBT_E_TRUNC, "the last line does not end with a newline (cut short?)");
            break;
        }
        buf[--len] = 0;
        if (l->line == 1)
            rc = manifest_version(l, buf);
        else if (l->version >= 2 && buf[0] == '#' && l->line == l->sum_line)
            continue;           /* the checksum line, checked already */
        else
            rc = manifest_line(l, buf, (size_t)len);
    }
    if (rc == 0 && ferror(fp))
        rc = bad(l, -EIO, "read error");
    free(buf);
    return rc;
}

/* The header's version, before anything else is read; fp is left at the start. */
static int manifest_peek(struct mload *l, FILE *fp)
{
    char head[32] = "";

    if (!fgets(head, sizeof(head), fp)) {
        l->line = 0;
        return 0;                   /* empty: manifest_check() says so */
    }
    head[strcspn(head, "\n")] = 0;
    l->line = 1;
    int rc = manifest_version(l, head);
    l->line = 0;
    rewind(fp);
    return rc;
}

/* The whole-file rules, once every line is read. */
static int manifest_check(struct mload *l)
{
    if (l->line == 0)
        return bad(l, TBBT_E_MAGIC, "empty file");
    l->line++;          /* "line N" of a whole-file rule: the end */
    if (!l->have_status)
        return bad(l, TBBT_E_TRUNC, "no status line: tbbt-init did not finish");
    if (l->m->clones->len == 0)
        return bad(l, TBBT_E_SYNTAX, "no clone line");
    if (l->have_clones && l->clones != l->m->clones->len)
        return bad(l, TBBT_E_SYNTAX, "%u clone lines, but clones says %" PRIu64,
                   l->m->clones->len, l->clones);
    return 0;
}

int tbbt_manifest_load(const char *path, struct tbbt_manifest **out, char *err, size_t errlen)
{
    struct mload l = { .file = path, .err = err, .errlen = errlen };
    FILE *fp = fopen(path, "r");
    int rc;

    if (!fp) {
        rc = -errno;
        tbbt_errbuf(err, errlen, "manifest '%s': cannot open: %s", path, strerror(-rc));
        return rc;
    }
    l.m = g_new0(struct tbbt_manifest, 1);
    l.m->clones = g_ptr_array_new_with_free_func(g_free);
    l.m->objs = g_array_new(FALSE, FALSE, sizeof(struct tbbt_manifest_obj));
    l.m->strings = g_string_chunk_new(64 * 1024);
    l.comp = g_string_new(NULL);
    l.path = g_string_new(NULL);
    l.shown = g_string_new(NULL);
    rc = manifest_peek(&l, fp);
    if (rc == 0 && l.version >= 2)
        rc = manifest_sum(&l, fp);
    if (rc == 0)
        rc = manifest_read(&l, fp);
    fclose(fp);
    l.m->version = l.version;
    if (rc == 0 && l.version == 1 && !atomic_exchange(&warned_v1, true))
        tbbt_log(TBBT_LOG_WARN, "manifest '%s' is version 1: it has no checksum, so "
                 "corruption cannot be detected (tbbt-init writes version 2)", path);
    if (rc == 0)
        rc = manifest_check(&l);
    g_string_free(l.comp, TRUE);
    g_string_free(l.path, TRUE);
    g_string_free(l.shown, TRUE);
    if (rc < 0) {
        tbbt_manifest_free(l.m);
        return rc;
    }
    *out = l.m;
    return 0;
}

void tbbt_manifest_free(struct tbbt_manifest *m)
{
    if (!m)
        return;
    g_free(m->root);
    g_free(m->map);
    g_free(m->server);
    g_free(m->export_path);
    g_ptr_array_free(m->clones, TRUE);
    g_array_free(m->objs, TRUE);
    g_string_chunk_free(m->strings);
    g_free(m);
}
