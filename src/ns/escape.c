/* SPDX-License-Identifier: MIT */
/*
 * The escaping of path and target bytes shared by every text file that lists paths:
 * the hierarchy map (docs/hierarchy-map.md, "Escaping": map-write.c, map-read.c) and
 * tbbt-init's manifest (docs/tbbt-init.md, "The manifest": manifest-write.c,
 * manifest-read.c).  Printable ASCII stands for itself, '\' is written "\\", any other
 * byte "\xHH", and a lone "-" (which means "none" in a map field) "\x2d".  Reading is
 * strict: a raw byte outside 0x20-0x7e or a malformed escape is refused.  Also the
 * reading of a relative path field (components split at raw '/', each unescaped and
 * checked by tbbt_ns_name_ok()), the same in both files.  No file I/O; thread-safe.
 */
#include "ns/ns.h"

#include <string.h>

/* A byte written as itself. */
static bool escape_plain(uint8_t c)
{
    return c >= 0x20 && c < 0x7f && c != '\\';
}

void tbbt_ns_escape(GString *s, const void *bytes, size_t len)
{
    const uint8_t *p = bytes;
    static const char hex[] = "0123456789abcdef";

    if (len == 1 && p[0] == '-') {
        g_string_append(s, "\\x2d");    /* "-" alone means "none" */
        return;
    }
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && escape_plain(p[j]))
            j++;
        g_string_append_len(s, (const char *)p + i, (gssize)(j - i));
        if (j == len)
            return;
        if (p[j] == '\\') {
            g_string_append(s, "\\\\");
        } else {
            char e[4] = { '\\', 'x', hex[p[j] >> 4], hex[p[j] & 15] };
            g_string_append_len(s, e, 4);
        }
        i = j + 1;
    }
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

int tbbt_ns_unescape_relpath(const char *s, size_t len, GString *out, GString *comp,
                             size_t *k)
{
    size_t start = 0, n = 0;

    g_string_truncate(out, 0);
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '/')
            continue;
        if (k)
            *k = ++n;
        if (!tbbt_ns_unescape(s + start, i - start, comp))
            return TBBT_NS_RELPATH_ESCAPE;
        if (!tbbt_ns_name_ok(comp->str, comp->len))
            return TBBT_NS_RELPATH_NAME;
        if (out->len)
            g_string_append_c(out, '/');
        g_string_append_len(out, comp->str, (gssize)comp->len);
        start = i + 1;
    }
    return 0;
}
