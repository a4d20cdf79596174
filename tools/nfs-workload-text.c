/* SPDX-License-Identifier: MIT */
/*
 * nfs-workload-text.c: the contents of the workload's files, so that a capture carries
 * data that looks like what a site stores: English-like prose, C sources and headers,
 * shell history, binary objects behind a magic number, and mail messages with headers
 * as Postfix and MUAs write them (RFC 5322), in mbox form with the "From " separator
 * line and ">From " quoting (the mboxrd convention) or as Maildir files.
 *
 * Everything is drawn from the caller's GRand, so a seed gives the same bytes.  Sizes
 * are approximate: the generators stop at the first line end past the size asked for
 * (binary data is exact).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nfs-workload.h"

static const char *const words[] = {
    "the", "of", "and", "to", "a", "in", "is", "that", "for", "it", "as", "with", "was", "on",
    "be", "by", "this", "are", "from", "or", "have", "not", "but", "which", "an", "they",
    "we", "can", "all", "will", "there", "more", "one", "about", "when", "would", "time",
    "file", "server", "system", "data", "network", "results", "test", "report", "meeting",
    "project", "week", "budget", "draft", "review", "version", "change", "problem", "build",
    "release", "client", "cache", "disk", "paper", "deadline", "figure", "table", "section",
    "students", "course", "lecture", "grant", "proposal", "experiment", "measurement",
    "latency", "throughput", "kernel", "patch", "bug", "fix", "please", "thanks", "tomorrow",
    "friday", "agenda", "notes", "question", "answer", "schedule", "room", "lunch", "office",
    "should", "could", "also", "still", "again", "before", "after", "because", "however",
};
#define N_WORDS ((int)G_N_ELEMENTS(words))

static const char *pick(GRand *r, const char *const *list, int n)
{
    return list[g_rand_int_range(r, 0, n)];
}

static const char *rword(GRand *r)
{
    return pick(r, words, N_WORDS);
}

/* One sentence of 4..18 words, capitalized, wrapped at 72 columns (COL is the column). */
static void sentence(GRand *r, GString *out, int *col)
{
    int n = g_rand_int_range(r, 4, 19);

    for (int i = 0; i < n; i++) {
        const char *w = rword(r);
        size_t at = out->len;

        if (*col + (int)strlen(w) + 1 > 72) {
            g_string_append_c(out, '\n');
            *col = 0;
        } else if (*col > 0) {
            g_string_append_c(out, ' ');
            (*col)++;
        }
        g_string_append(out, w);
        if (i == 0)
            out->str[at] = g_ascii_toupper(out->str[at]);
        *col += (int)strlen(w);
    }
    g_string_append_c(out, g_rand_double(r) < 0.1 ? '?' : '.');
    (*col)++;
}

void wl_text_prose(GRand *r, GString *out, size_t size)
{
    size_t end = out->len + size;
    int col = 0;

    while (out->len < end) {
        sentence(r, out, &col);
        if (g_rand_double(r) < 0.15) {
            g_string_append(out, "\n\n");
            col = 0;
        }
    }
    g_string_append_c(out, '\n');
}

void wl_text_history(GRand *r, GString *out, size_t size)
{
    static const char *const cmds[] = {
        "ls -l", "cd src", "make", "make clean", "vim main.c", "git status", "git diff",
        "git commit -a", "less README", "grep -r cache .", "cd ..", "ls", "mutt",
        "ssh ws02", "top", "df -h", "cp report.txt docs/", "rm -f *.o", "cd ~/docs",
        "latex paper.tex", "find . -name '*.c'", "tar czf backup.tgz docs", "man 2 open",
    };
    size_t end = out->len + size;

    while (out->len < end)
        g_string_append_printf(out, "%s\n", pick(r, cmds, G_N_ELEMENTS(cmds)));
}

static void cfunction(GRand *r, GString *out, const char *name, int k)
{
    int lines = g_rand_int_range(r, 3, 25);

    g_string_append_printf(out, "\n/* %s %s %s. */\nstatic int %s_%s%d(struct %s *s, int n)\n{\n",
                           rword(r), rword(r), rword(r), name, rword(r), k, name);
    g_string_append(out, "    int rc = 0;\n\n");
    for (int i = 0; i < lines; i++) {
        switch (g_rand_int_range(r, 0, 4)) {
        case 0:
            g_string_append_printf(out, "    if (s->%s > n)\n        rc = -%d;\n", rword(r),
                                   g_rand_int_range(r, 1, 40));
            break;
        case 1:
            g_string_append_printf(out, "    for (int i = 0; i < n; i++)\n        s->%s[i] += %d;\n",
                                   rword(r), g_rand_int_range(r, 1, 9));
            break;
        case 2:
            g_string_append_printf(out, "    rc = %s_%s(s, n - %d);\n", name, rword(r),
                                   g_rand_int_range(r, 1, 5));
            break;
        default:
            g_string_append_printf(out, "    /* %s %s %s */\n", rword(r), rword(r), rword(r));
        }
    }
    g_string_append(out, "    return rc;\n}\n");
}

void wl_text_csource(GRand *r, GString *out, size_t size, const char *name)
{
    size_t end = out->len + size;

    g_string_append_printf(out, "/*\n * %s.c: ", name);
    wl_text_prose(r, out, 120);
    g_string_append_printf(out, " */\n#include <stdio.h>\n#include <stdlib.h>\n#include \"%s.h\"\n",
                           name);
    for (int k = 0; out->len < end; k++)
        cfunction(r, out, name, k);
}

void wl_text_header(GRand *r, GString *out, size_t size, const char *name)
{
    size_t end = out->len + size;
    gchar *guard = g_ascii_strup(name, -1);

    g_string_append_printf(out, "#ifndef %s_H\n#define %s_H\n\nstruct %s {\n", guard, guard,
                           name);
    while (out->len < end)
        g_string_append_printf(out, "    int %s; /* %s %s */\n", rword(r), rword(r), rword(r));
    g_string_append_printf(out, "};\n\n#endif\n");
    g_free(guard);
}

void wl_text_binary(GRand *r, GString *out, size_t size, const char *magic)
{
    size_t start = out->len, m = MIN(strlen(magic), size);

    g_string_set_size(out, start + size);
    memcpy(out->str + start, magic, m);
    for (size_t i = start + m; i < start + size; i += 4) {
        guint32 v = g_rand_int(r);

        /* Objects are mostly zeros and small numbers: keep a quarter of the bytes. */
        v &= g_rand_boolean(r) ? 0x000000ffu : 0xff00ff00u;
        memcpy(out->str + i, &v, MIN(4, start + size - i));
    }
}

size_t wl_text_message_size(GRand *r)
{
    if (g_rand_double(r) < 0.12)        /* an attachment */
        return wl_rand_lognormal(r, 60000, 1.0, 5000, 400000);
    return wl_rand_lognormal(r, 2500, 0.9, 200, 60000);
}

static void rfc5322_date(GString *out, int64_t when, bool mbox_line)
{
    time_t t = (time_t)when;
    struct tm tm;
    char buf[64];

    gmtime_r(&t, &tm);
    strftime(buf, sizeof(buf), mbox_line ? "%a %b %e %H:%M:%S %Y" : "%a, %d %b %Y %H:%M:%S +0000",
             &tm);
    g_string_append(out, buf);
}

static void message_headers(GRand *r, GString *out, const char *from, const char *to,
                            int64_t when, guint32 id)
{
    g_string_append_printf(out, "Return-Path: <%s@example.org>\nReceived: from ws%02d.example.org "
                           "(ws%02d.example.org [10.1.0.%d])\n\tby mail1.example.org (Postfix) "
                           "with ESMTP id %08X\n\tfor <%s@example.org>; ",
                           from, g_rand_int_range(r, 1, 40), g_rand_int_range(r, 1, 40),
                           g_rand_int_range(r, 2, 250), id, to);
    rfc5322_date(out, when, false);
    g_string_append_printf(out, "\nMessage-ID: <%" G_GINT64_FORMAT ".%08X@mail1.example.org>\n"
                           "Date: ", when, id);
    rfc5322_date(out, when, false);
    g_string_append_printf(out, "\nFrom: %s <%s@example.org>\nTo: %s@example.org\n", from, from,
                           to);
    g_string_append_printf(out, "Subject: %s%s %s %s\nMIME-Version: 1.0\n",
                           g_rand_double(r) < 0.4 ? "Re: " : "", rword(r), rword(r), rword(r));
}

static void base64_lines(GRand *r, GString *out, size_t size)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t end = out->len + size;

    while (out->len < end) {
        for (int i = 0; i < 76; i++)
            g_string_append_c(out, b64[g_rand_int_range(r, 0, 64)]);
        g_string_append_c(out, '\n');
    }
}

/* The body: prose, or prose plus a base64 attachment when it is big. */
static void message_body(GRand *r, GString *out, size_t body)
{
    if (body < 20000) {
        g_string_append(out, "Content-Type: text/plain; charset=us-ascii\n\n");
        wl_text_prose(r, out, body);
        return;
    }
    g_string_append(out, "Content-Type: multipart/mixed; boundary=\"=-=-=\"\n\n--=-=-=\n"
                         "Content-Type: text/plain; charset=us-ascii\n\n");
    wl_text_prose(r, out, g_rand_int_range(r, 200, 2000));
    g_string_append_printf(out, "\n--=-=-=\nContent-Type: application/pdf\nContent-Disposition: "
                           "attachment; filename=%s.pdf\nContent-Transfer-Encoding: base64\n\n",
                           rword(r));
    base64_lines(r, out, body);
    g_string_append(out, "--=-=-=--\n");
}

/* mboxrd: a body line that starts with ">*From " gets one more '>'. */
static void quote_from_lines(GString *out, size_t start)
{
    for (size_t i = start; i < out->len; i++) {
        size_t j = i;

        while (j < out->len && out->str[j] == '>')
            j++;
        if (out->len - j >= 5 && memcmp(out->str + j, "From ", 5) == 0)
            g_string_insert_c(out, (gssize)i, '>');
        while (i < out->len && out->str[i] != '\n')
            i++;
    }
}

void wl_text_message(GRand *r, GString *out, const char *from, const char *to, int64_t when,
                     size_t body, bool mbox)
{
    guint32 id = g_rand_int(r);
    size_t start;

    if (mbox) {
        g_string_append_printf(out, "From %s@example.org ", from);
        rfc5322_date(out, when, true);
        g_string_append_c(out, '\n');
    }
    start = out->len;
    message_headers(r, out, from, to, when, id);
    message_body(r, out, body);
    if (mbox) {
        quote_from_lines(out, start);
        g_string_append_c(out, '\n');
    }
}
