/* SPDX-License-Identifier: MIT */
/* Streaming JSON writer (see json.h). */
#include "util/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util/outfile.h"

void tbbt_json_init(struct tbbt_json *j)
{
    j->out = g_string_sized_new(1024);
    j->depth = 0;
    j->need_comma[0] = false;
    j->after_key = false;
}

static void sep(struct tbbt_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->need_comma[j->depth])
        g_string_append_c(j->out, ',');
    j->need_comma[j->depth] = true;
}

static void open_(struct tbbt_json *j, char c)
{
    sep(j);
    g_string_append_c(j->out, c);
    g_assert(j->depth + 1 < (int)G_N_ELEMENTS(j->need_comma));
    j->need_comma[++j->depth] = false;
}

static void close_(struct tbbt_json *j, char c)
{
    g_assert(j->depth > 0);
    j->depth--;
    g_string_append_c(j->out, c);
}

void tbbt_json_begin_object(struct tbbt_json *j) { open_(j, '{'); }
void tbbt_json_end_object(struct tbbt_json *j) { close_(j, '}'); }
void tbbt_json_begin_array(struct tbbt_json *j) { open_(j, '['); }
void tbbt_json_end_array(struct tbbt_json *j) { close_(j, ']'); }

static void put_string(GString *o, const char *s)
{
    g_string_append_c(o, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            g_string_append_printf(o, "\\%c", *p);
        else if (*p < 0x20)
            g_string_append_printf(o, "\\u%04x", *p);
        else
            g_string_append_c(o, (char)*p);
    }
    g_string_append_c(o, '"');
}

void tbbt_json_key(struct tbbt_json *j, const char *key)
{
    sep(j);
    put_string(j->out, key);
    g_string_append_c(j->out, ':');
    j->after_key = true;
}

void tbbt_json_string(struct tbbt_json *j, const char *s)
{
    sep(j);
    put_string(j->out, s);
}

void tbbt_json_uint(struct tbbt_json *j, uint64_t v)
{
    sep(j);
    g_string_append_printf(j->out, "%" G_GUINT64_FORMAT, (guint64)v);
}

void tbbt_json_int(struct tbbt_json *j, int64_t v)
{
    sep(j);
    g_string_append_printf(j->out, "%" G_GINT64_FORMAT, (gint64)v);
}

void tbbt_json_double(struct tbbt_json *j, double v)
{
    sep(j);
    if (isfinite(v))
        g_string_append_printf(j->out, "%.6g", v);
    else
        g_string_append(j->out, "null");
}

void tbbt_json_bool(struct tbbt_json *j, bool v)
{
    sep(j);
    g_string_append(j->out, v ? "true" : "false");
}

void tbbt_json_null(struct tbbt_json *j)
{
    sep(j);
    g_string_append(j->out, "null");
}

void tbbt_json_kv_uint(struct tbbt_json *j, const char *key, uint64_t v)
{
    tbbt_json_key(j, key);
    tbbt_json_uint(j, v);
}

void tbbt_json_kv_double(struct tbbt_json *j, const char *key, double v)
{
    tbbt_json_key(j, key);
    tbbt_json_double(j, v);
}

void tbbt_json_kv_string(struct tbbt_json *j, const char *key, const char *s)
{
    tbbt_json_key(j, key);
    if (s)
        tbbt_json_string(j, s);
    else
        tbbt_json_null(j);
}

void tbbt_json_kv_bool(struct tbbt_json *j, const char *key, bool v)
{
    tbbt_json_key(j, key);
    tbbt_json_bool(j, v);
}

void tbbt_json_kv_null(struct tbbt_json *j, const char *key)
{
    tbbt_json_key(j, key);
    tbbt_json_null(j);
}

void tbbt_json_kv_object(struct tbbt_json *j, const char *key)
{
    tbbt_json_key(j, key);
    tbbt_json_begin_object(j);
}

void tbbt_json_kv_array(struct tbbt_json *j, const char *key)
{
    tbbt_json_key(j, key);
    tbbt_json_begin_array(j);
}

char *tbbt_json_finish(struct tbbt_json *j)
{
    char *s = g_string_free(j->out, FALSE);
    j->out = NULL;
    return s;
}

int tbbt_json_write_file(const char *path, const char *text)
{
    char *doc = g_strconcat(text, "\n", NULL);
    int rc = tbbt_outfile_write_all(path, doc, strlen(doc), NULL, 0);

    g_free(doc);
    return rc;
}
