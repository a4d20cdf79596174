/* SPDX-License-Identifier: MIT */
/*
 * Writing tbbt-init's manifest (manifest.h; docs/tbbt-init.md, "The manifest"): one
 * line at a time, each added to the running CRC32 as it is written, so the checksum
 * line (util/textsum.h) that ends the file needs no second read.  Also the reading of
 * a previous manifest's `made` lines for tbbt-init --force.
 */
#include "ns/manifest.h"

#include <stdarg.h>
#include <string.h>

#include "ns/ns.h"
#include "util/crc32.h"
#include "util/textsum.h"

void tbbt_manifest_write_raw(struct tbbt_manifest_writer *w, const char *text, size_t len)
{
    fwrite(text, 1, len, w->f);     /* checked when the caller closes f */
    w->crc = tbbt_crc32(w->crc, text, len);
}

/* Writes w->line to the stream and adds it to the checksum. */
static void put(struct tbbt_manifest_writer *w)
{
    tbbt_manifest_write_raw(w, w->line->str, w->line->len);
}

void tbbt_manifest_writer_init(struct tbbt_manifest_writer *w, FILE *f)
{
    *w = (struct tbbt_manifest_writer){ .f = f, .line = g_string_new(NULL),
                                        .esc = g_string_new(NULL) };
    g_string_assign(w->line, TBBT_MANIFEST_HEADER "\n");
    put(w);
}

void tbbt_manifest_writer_fini(struct tbbt_manifest_writer *w)
{
    g_string_free(w->line, TRUE);
    g_string_free(w->esc, TRUE);
    w->line = w->esc = NULL;
}

void tbbt_manifest_write(struct tbbt_manifest_writer *w, const char *key, const char *fmt, ...)
{
    va_list ap;

    g_string_printf(w->line, "%s\t", key);
    va_start(ap, fmt);
    g_string_append_vprintf(w->line, fmt, ap);
    va_end(ap);
    g_string_append_c(w->line, '\n');
    put(w);
}

void tbbt_manifest_write_path(struct tbbt_manifest_writer *w, const char *key,
                              const char *extra, const char *path)
{
    g_string_truncate(w->esc, 0);
    tbbt_ns_escape(w->esc, path, strlen(path));
    if (extra)
        g_string_printf(w->line, "%s\t%s\t%s\n", key, extra, w->esc->str);
    else
        g_string_printf(w->line, "%s\t%s\n", key, w->esc->str);
    put(w);
}

void tbbt_manifest_write_sum(struct tbbt_manifest_writer *w)
{
    char sum[TBBT_TEXTSUM_LINE];

    tbbt_textsum_line(sum, w->crc);
    g_string_assign(w->line, sum);
    put(w);
}

int tbbt_manifest_made(const char *line, char *kind, GString *path, const char **raw)
{
    const char *t1, *t2;

    if (strncmp(line, "made\t", 5) != 0 || !(t2 = strchr(t1 = line + 5, '\t')))
        return 0;
    *kind = t1[0];
    *raw = t2 + 1;
    return tbbt_ns_unescape(*raw, strlen(*raw), path) ? 1 : -1;
}
