/* SPDX-License-Identifier: MIT */
/*
 * Reads a hierarchy map (docs/hierarchy-map.md; TBBT paper 3.2) for the
 * tools that build or use the initial image.  The map is input: every line
 * is checked (field count, numbers, times, escapes) and every path component
 * must be a plain name (not empty, ".", "..", and without '/' or NUL once
 * unescaped), so that no path read here can leave the export root.
 *
 * Version 3 maps end with a checksum line (util/textsum.h) that the reader
 * checks when it opens the file, before it returns any entry, and their header
 * may name the trace they were made with; version 2 maps (no checksum) are read
 * with one warning.  tbbt_ns_map_check() adds the whole-file rules (one object
 * per ID, links counts, every start entry's directory at trace start).  Comment
 * lines ('#') are skipped, except that tbbt_map_v4_exports() reads the
 * "# v4-export" lines after the header (tab-separated fields), as strictly.
 */
#include "ns/ns.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <string.h>

#include "util/crc32.h"
#include "util/textsum.h"
#include "util/util.h"

#define NFIELDS 10

struct tbbt_ns_map_reader {
    FILE *f;
    char *name;                 /* the path given to open, for the warning */
    bool own;
    char *buf;
    size_t cap;
    uint64_t line, entries;
    bool root_seen;
    int version;                /* 2 or 3 */
    bool trace_known;           /* the header names the trace (version 3) */
    struct tbbt_trace_ident trace;
    uint32_t crc;               /* the trailer's (version 3) */
    GString *path, *final, *target, *comp;
    char err[160];
};

static int fail(struct tbbt_ns_map_reader *r, const char *why)
{
    g_strlcpy(r->err, why, sizeof(r->err));
    return TBBT_E_SYNTAX;
}

/* A copy of stdin in a temporary file: a version 3 map is read twice. */
static FILE *copy_stdin(void)
{
    char buf[65536];
    size_t n;
    FILE *t = tmpfile();

    while (t && (n = fread(buf, 1, sizeof(buf), stdin)) > 0)
        if (fwrite(buf, 1, n, t) != n) {
            fclose(t);
            return NULL;
        }
    if (t && (ferror(stdin) || fflush(t) != 0 || fseek(t, 0, SEEK_SET) != 0)) {
        fclose(t);
        return NULL;
    }
    return t;
}

static bool parse_u64(const char *s, size_t len, uint64_t *out);

/* " trace-crc32=HEX8 trace-ops=N" after "# tbbt-map 3" (or nothing). */
static bool parse_trace_id(struct tbbt_ns_map_reader *r, const char *s)
{
    static const char k1[] = " trace-crc32=", k2[] = " trace-ops=";
    uint32_t crc = 0;
    const char *p;

    if (!*s)
        return true;
    if (strncmp(s, k1, sizeof(k1) - 1) != 0)
        return false;
    p = s + sizeof(k1) - 1;
    for (int i = 0; i < 8; i++, p++) {
        if (*p >= '0' && *p <= '9')
            crc = crc << 4 | (uint32_t)(*p - '0');
        else if (*p >= 'a' && *p <= 'f')
            crc = crc << 4 | (uint32_t)(*p - 'a' + 10);
        else
            return false;
    }
    if (strncmp(p, k2, sizeof(k2) - 1) != 0)
        return false;
    p += sizeof(k2) - 1;
    if (!parse_u64(p, strlen(p), &r->trace.ops))
        return false;
    r->trace.crc = crc;
    r->trace_known = true;
    return true;
}

/* The header line (r->buf, n bytes with its newline): 0 or an error. */
static int check_header(struct tbbt_ns_map_reader *r, ssize_t n)
{
    uint64_t lines = 0;
    long pos;
    int rc;

    if (n < 0)
        return ferror(r->f) ? -EIO : TBBT_E_MAGIC;
    if (strncmp(r->buf, "# tbbt-map ", 11) != 0 || r->buf[n - 1] != '\n')
        return TBBT_E_MAGIC;
    r->buf[n - 1] = '\0';
    if (strcmp(r->buf + 11, "2") == 0) {
        r->version = 2;
        return 0;
    }
    if (r->buf[11] != '3' || (r->buf[12] != '\0' && r->buf[12] != ' '))
        return TBBT_E_VERSION;
    if (!parse_trace_id(r, r->buf + 12))
        return TBBT_E_SYNTAX;
    r->version = 3;
    r->buf[n - 1] = '\n';
    if ((pos = ftell(r->f)) < 0)
        return -errno;
    rc = tbbt_textsum_verify(r->f, tbbt_crc32(0, r->buf, (size_t)n), &r->crc, &lines);
    r->line = 1 + lines;
    if (rc < 0)
        return rc;
    r->line = 1;
    return fseek(r->f, pos, SEEK_SET) < 0 ? -errno : 0;
}

struct tbbt_ns_map_reader *tbbt_ns_map_reader_open(const char *path, int *err)
{
    struct tbbt_ns_map_reader *r = g_new0(struct tbbt_ns_map_reader, 1);
    ssize_t n;

    r->own = true;
    r->name = g_strdup(path);
    r->f = strcmp(path, "-") != 0 ? fopen(path, "r") : copy_stdin();
    if (!r->f) {
        *err = errno ? -errno : -EIO;
        g_free(r->name);
        g_free(r);
        return NULL;
    }
    r->path = g_string_new(NULL);
    r->final = g_string_new(NULL);
    r->target = g_string_new(NULL);
    r->comp = g_string_new(NULL);
    n = getline(&r->buf, &r->cap, r->f);
    r->line = 1;
    if ((*err = check_header(r, n)) == 0)
        return r;
    tbbt_ns_map_reader_close(r);
    return NULL;
}

const char *tbbt_ns_map_open_error(int err)
{
    switch (err) {
    case TBBT_E_TRUNC: return "last line: no checksum line at the end (cut short?)";
    case TBBT_E_CHECKSUM:
        return "last line: the checksum does not match the contents (changed or damaged)";
    case TBBT_E_SYNTAX:
        return "line 1: bad header (# tbbt-map 3 [trace-crc32=HEX8 trace-ops=N])";
    case TBBT_E_MAGIC: return "line 1: not a hierarchy map (no '# tbbt-map' header)";
    case TBBT_E_VERSION: return "line 1: unknown map version (2 and 3 are read)";
    default: return tbbt_strerror(err);
    }
}

int tbbt_ns_map_reader_version(const struct tbbt_ns_map_reader *r)
{
    return r->version;
}

bool tbbt_ns_map_reader_trace(const struct tbbt_ns_map_reader *r, struct tbbt_trace_ident *id)
{
    if (r->trace_known)
        *id = r->trace;
    return r->trace_known;
}

bool tbbt_ns_map_reader_crc(const struct tbbt_ns_map_reader *r, uint32_t *crc)
{
    if (r->version >= 3)
        *crc = r->crc;
    return r->version >= 3;
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
    g_free(r->name);
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

/* A path field into out: "." (root) or valid components joined by '/'. */
static int parse_path(struct tbbt_ns_map_reader *r, const char *s, size_t len, GString *out,
                      bool *is_root)
{
    g_string_truncate(out, 0);
    *is_root = len == 1 && s[0] == '.';
    if (*is_root) {
        g_string_append_c(out, '.');
        return 0;
    }
    if (len == 0)
        return fail(r, "empty path");
    switch (tbbt_ns_unescape_relpath(s, len, out, r->comp, NULL)) {
    case TBBT_NS_RELPATH_ESCAPE: return fail(r, "bad escape or raw control byte in a path");
    case TBBT_NS_RELPATH_NAME:
        return fail(r, "path component is empty, '.', '..', too long, or holds '/' or NUL");
    default: return 0;
    }
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
    if (parse_size(f[2], n[2], e) < 0 || e->size > TBBT_NS_MAP_SIZE_MAX)
        return fail(r, "bad size (N, N+ or -, N at most 2^50)");
    if (!parse_time(f[3], n[3], &e->create_ns))
        return fail(r, "bad create time");
    e->deleted = !(n[4] == 1 && f[4][0] == '-');
    if (e->deleted && !parse_time(f[4], n[4], &e->delete_ns))
        return fail(r, "bad delete time");
    if (e->deleted && e->delete_ns < e->create_ns)
        return fail(r, "delete time before create time");
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

/* A version 2 map read to its end without an error: one warning per process. */
static void warn_unsummed(const struct tbbt_ns_map_reader *r)
{
    static atomic_bool warned;

    if (r->version == 2 && !atomic_exchange(&warned, true))
        tbbt_log(TBBT_LOG_WARN, "hierarchy map '%s' is version 2: it has no checksum, so "
                 "corruption cannot be detected (tbbt-convert writes version 3)", r->name);
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
        if (n < 0 && ferror(r->f))
            return errno ? -errno : -EIO;
        if (n < 0)
            return warn_unsummed(r), 0;
        r->line++;
        if (n > 0 && r->buf[n - 1] == '\n')
            r->buf[--n] = '\0';
        if (n > 0 && r->buf[0] == '#' && r->version == 2 &&
            strncmp(r->buf, TBBT_TEXTSUM_PREFIX, sizeof(TBBT_TEXTSUM_PREFIX) - 1) == 0)
            return fail(r, "a checksum line in a version 2 map (its header was changed?)");
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

/* ---- the v4-export header lines ------------------------------------------------------ */

static void free_v4export(gpointer p)
{
    struct tbbt_map_v4export *e = p;

    g_free(e->pseudo);
    g_free(e->path);
    g_free(e);
}

void tbbt_map_v4_exports_free(GPtrArray *a)
{
    if (a)
        g_ptr_array_free(a, TRUE);
}

/* PSEUDO: "/" or "/" and escaped names joined by '/', into out. */
static bool v4_pseudo(struct tbbt_ns_map_reader *r, const char *s, size_t len, GString *out)
{
    if (len == 0 || s[0] != '/')
        return false;
    if (len == 1) {
        g_string_assign(out, "/");
        return true;
    }
    if (tbbt_ns_unescape_relpath(s + 1, len - 1, r->path, r->comp, NULL) != 0)
        return false;
    g_string_assign(out, "/");
    g_string_append_len(out, r->path->str, (gssize)r->path->len);
    return true;
}

/* A v4-export header line starts with it; then PSEUDO, a tab, MAPPATH. */
static const char v4_key[] = "# v4-export\t";

/*
 * One "# v4-export<TAB>PSEUDO<TAB>MAPPATH" line (r->buf, n bytes, no newline) appended
 * to a: NULL, or the reason it is refused.  r->target and r->final are the scratch.
 */
static const char *v4_line(struct tbbt_ns_map_reader *r, size_t n, GPtrArray *a)
{
    const char *f = r->buf + sizeof(v4_key) - 1, *end = r->buf + n, *sp;
    struct tbbt_map_v4export *e;
    bool root;

    if (memchr(r->buf, '\0', n))
        return "NUL byte in a v4-export line";
    sp = memchr(f, '\t', (size_t)(end - f));
    if (!sp || sp + 1 == end || memchr(sp + 1, '\t', (size_t)(end - sp - 1)))
        return "a v4-export line needs two tab-separated fields: PSEUDO MAPPATH";
    if (!v4_pseudo(r, f, (size_t)(sp - f), r->target))
        return "bad v4-export pseudo path (absolute, escaped names joined by '/')";
    root = end - sp == 2 && sp[1] == '.';
    if (!root &&
        tbbt_ns_unescape_relpath(sp + 1, (size_t)(end - sp - 1), r->final, r->comp, NULL) != 0)
        return "bad v4-export map path ('.' or escaped names joined by '/')";
    e = g_new(struct tbbt_map_v4export, 1);
    e->pseudo = g_strndup(r->target->str, r->target->len);
    e->path = root ? g_strdup("") : g_strndup(r->final->str, r->final->len);
    g_ptr_array_add(a, e);
    return NULL;
}

int tbbt_map_v4_exports(const char *map_path, GPtrArray **out, char *err, size_t errlen)
{
    int oerr = 0;
    struct tbbt_ns_map_reader *r = tbbt_ns_map_reader_open(map_path, &oerr);
    GPtrArray *a;
    const char *why = NULL;
    ssize_t n;

    *out = NULL;
    if (!r) {
        snprintf(err, errlen, "%s: %s", map_path, tbbt_ns_map_open_error(oerr));
        return -1;
    }
    a = g_ptr_array_new_with_free_func(free_v4export);
    while (!why && (n = getline(&r->buf, &r->cap, r->f)) > 0 && r->buf[0] == '#') {
        r->line++;
        if (r->buf[n - 1] == '\n')
            r->buf[--n] = '\0';
        if ((size_t)n >= sizeof(v4_key) - 1 && memcmp(r->buf, v4_key, sizeof(v4_key) - 1) == 0)
            why = v4_line(r, (size_t)n, a);
    }
    if (!why && ferror(r->f))
        why = "read error";
    if (why) {
        snprintf(err, errlen, "%s line %" PRIu64 ": %s", map_path, r->line, why);
        g_ptr_array_free(a, TRUE);
        tbbt_ns_map_reader_close(r);
        return -1;
    }
    tbbt_ns_map_reader_close(r);
    *out = a;
    return 0;
}
