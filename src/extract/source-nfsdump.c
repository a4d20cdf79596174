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
 * This file is the reader's ops (tbbt__source_nfsdump: probe, run, summary,
 * fini), its state and the reading of the files, plain or gzip-compressed,
 * into lines.  The rest is split by job, sharing nfsdump-int.h: tokens and
 * values (nfsdump-lex.c), what each key means per procedure
 * (nfsdump-fields.c), one line (nfsdump-line.c), the record handed to the
 * core (nfsdump-record.c) and the lines' clock (nfsdump-clock.c).
 *
 * A line is parsed whole into per-line scratch storage (tokens, unescaped
 * strings, handle bytes, a scratch record) before anything reaches the core:
 * a malformed line is counted and leaves nothing behind, not even an
 * interned handle.  Memory is one read buffer (LINE_MAX_BYTES + READ_CHUNK)
 * and per-line arrays that grow to the longest line seen; nothing is
 * allocated per field.  Single-threaded, like the core.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <glib/gstdio.h>
#include <zlib.h>

#include "extract/nfsdump-int.h"
#include "util/util.h"

#define LINE_MAX_BYTES (1u << 20)   /* a longer line is malformed (and skipped) */
#define READ_CHUNK (1u << 20)       /* bytes asked of gzread at a time */
#define GZ_BUFFER (256u << 10)      /* zlib's input buffer */

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
        tbbt_errbuf(errbuf, errlen, "'%s': compressed data ends early", path);
        return TBBT_E_TRUNC;
    }
    if (zerr == Z_ERRNO) {
        int e = errno ? errno : EIO;
        tbbt_errbuf(errbuf, errlen, "'%s': cannot read: %s", path, g_strerror(e));
        return -e;
    }
    tbbt_errbuf(errbuf, errlen, "'%s': cannot read: %s", path, why);
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
                tbbt__nd_one_line(s, buf + start, (size_t)(nl - buf) - start, false);
            skipping = false;
            start = scan = (size_t)(nl - buf) + 1;
            continue;
        }
        if (end - start > LINE_MAX_BYTES) {     /* an endless line: malformed, skipped */
            if (!skipping) {
                s->lines++;
                s->file_lines++;
                s->packets++;
                tbbt__nd_bad_line(s);
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
            tbbt_errbuf(errbuf, errlen, "'%s' is not an nfsdump text trace", path);
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
    if (end > start && !skipping && tbbt__nd_one_line(s, buf + start, end - start, true) &&
        rc == 0) {
        tbbt_errbuf(errbuf, errlen, "'%s' ends in the middle of a line", path);
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
        tbbt_errbuf(errbuf, errlen, "'%s': cannot open: %s", path, g_strerror(e));
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

static int nd_run(struct tbbt__conv *c, const char *const *paths, int n, char *errbuf,
                  size_t errlen)
{
    struct nd_state *s = state_new(c);
    char ebuf[512] = "";
    int rc = 0;
    GStatBuf st;

    *tbbt__conv_source_state(c) = s;
    tbbt__nd_keys_init();
    if (tbbt__conv_opts(c)->filter) {
        tbbt_errbuf(errbuf, errlen,
                    "--filter applies to capture files, not to nfsdump text traces");
        return -EINVAL;
    }
    for (int i = 0; i < n; i++)
        if (g_stat(paths[i], &st) == 0)
            s->total += (uint64_t)st.st_size;
    for (int i = 0; i < n; i++) {
        int frc = read_file(s, paths[i], ebuf, sizeof(ebuf));
        if (frc != 0 && frc != TBBT_E_TRUNC) {
            tbbt_errbuf(errbuf, errlen, "%s", ebuf);
            return frc;
        }
        if (frc == TBBT_E_TRUNC && rc == 0) {
            tbbt_errbuf(errbuf, errlen, "%s", ebuf);
            rc = frc;
        }
    }
    tbbt__nd_report_clock(s);
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
    tbbt__nd_clock_json(s, j);
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
