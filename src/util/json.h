/* SPDX-License-Identifier: MIT */
/*
 * Minimal streaming JSON writer for the tools' report files (--summary-json,
 * --report-json).  It writes to a GString; nesting and commas are tracked so
 * callers only say begin/end/key/value.  Strings are escaped per RFC 8259.
 * We write our own rather than pull in json-glib: output only, ~100 lines.
 */
#ifndef TBBT_UTIL_JSON_H
#define TBBT_UTIL_JSON_H

#include <glib.h>
#include <stdint.h>
#include <stdbool.h>

struct tbbt_json {
    GString *out;     /* owned; take with tbbt_json_finish() */
    int depth;
    bool need_comma[32];
    bool after_key;
};

void tbbt_json_init(struct tbbt_json *j);
void tbbt_json_begin_object(struct tbbt_json *j);
void tbbt_json_end_object(struct tbbt_json *j);
void tbbt_json_begin_array(struct tbbt_json *j);
void tbbt_json_end_array(struct tbbt_json *j);
void tbbt_json_key(struct tbbt_json *j, const char *key);
void tbbt_json_string(struct tbbt_json *j, const char *s);
void tbbt_json_uint(struct tbbt_json *j, uint64_t v);
void tbbt_json_int(struct tbbt_json *j, int64_t v);
void tbbt_json_double(struct tbbt_json *j, double v);
void tbbt_json_bool(struct tbbt_json *j, bool v);
void tbbt_json_null(struct tbbt_json *j);
/* Shorthand for tbbt_json_key(j, key) then tbbt_json_uint(j, v). */
void tbbt_json_kv_uint(struct tbbt_json *j, const char *key, uint64_t v);
/* Shorthand for tbbt_json_key(j, key) then tbbt_json_double(j, v). */
void tbbt_json_kv_double(struct tbbt_json *j, const char *key, double v);
/* Shorthand for tbbt_json_key(j, key) then tbbt_json_string(j, s), or null when s is NULL. */
void tbbt_json_kv_string(struct tbbt_json *j, const char *key, const char *s);
/* Shorthand for tbbt_json_key(j, key) then tbbt_json_bool(j, v). */
void tbbt_json_kv_bool(struct tbbt_json *j, const char *key, bool v);
/* Shorthand for tbbt_json_key(j, key) then tbbt_json_null(j). */
void tbbt_json_kv_null(struct tbbt_json *j, const char *key);
/*
 * tbbt_json_kv(j, key, v): the shorthand above that fits v's type: unsigned integers as
 * tbbt_json_kv_uint(), double, bool, and strings (char arrays included) as
 * tbbt_json_kv_string().  Another type does not compile.  v is evaluated once.  For key
 * tables (*-keys.def) whose rows name a member, not its JSON type.
 */
#define tbbt_json_kv(j, key, v)                                                            \
    _Generic((v),                                                                          \
        unsigned char: tbbt_json_kv_uint,                                                  \
        unsigned short: tbbt_json_kv_uint,                                                 \
        unsigned int: tbbt_json_kv_uint,                                                   \
        unsigned long: tbbt_json_kv_uint,                                                  \
        unsigned long long: tbbt_json_kv_uint,                                             \
        double: tbbt_json_kv_double,                                                       \
        bool: tbbt_json_kv_bool,                                                           \
        char *: tbbt_json_kv_string,                                                       \
        const char *: tbbt_json_kv_string)(j, key, v)
/* Shorthand for tbbt_json_key(j, key) then tbbt_json_begin_object(j) (or _array). */
void tbbt_json_kv_object(struct tbbt_json *j, const char *key);
void tbbt_json_kv_array(struct tbbt_json *j, const char *key);
/* Returns the text (given: caller g_free()s) and resets j. */
char *tbbt_json_finish(struct tbbt_json *j);
/*
 * Writes text to path ("-" = stdout) with a final newline, through an outfile (written
 * aside and renamed into place, symlinks followed: see outfile.h); 0 or -errno.
 */
int tbbt_json_write_file(const char *path, const char *text);

#endif
