/* SPDX-License-Identifier: MIT */
/*
 * JSON arrays of records: an array of C structs (a GArray's data, say) written as a JSON
 * array of objects, one key per row of a field table.  A field table is the report's
 * contract for one kind of record: its keys in output order, each bound to a struct
 * member (offset and type, the type checked at compile time) or to the record's rank.
 * Tables are usually made from a report's key file (*-keys.def) with TBBT_JSON_FIELD().
 * Output only; the values go through json.h's writers.
 */
#ifndef TBBT_UTIL_JSON_FIELDS_H
#define TBBT_UTIL_JSON_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "util/json.h"

enum tbbt_json_field_kind {
    TBBT_JSON_FIELD_UINT64,     /* uint64_t member */
    TBBT_JSON_FIELD_UINT32,     /* uint32_t member */
    TBBT_JSON_FIELD_DOUBLE,     /* double member (not finite: null) */
    TBBT_JSON_FIELD_CHARS,      /* char array member holding a NUL-terminated string */
    TBBT_JSON_FIELD_RANK,       /* no member: the record's position in the array, from 1 */
};

struct tbbt_json_field {
    const char *key;
    enum tbbt_json_field_kind kind;
    size_t offset;              /* of the member in the struct; 0 for a rank */
};

/* The kind of member m of struct type t, or a compile error for a type not listed. */
#define TBBT__JSON_FIELD_KIND(t, m)                                                        \
    _Generic(&((t *)0)->m,                                                                 \
        uint64_t *: TBBT_JSON_FIELD_UINT64,                                                \
        uint32_t *: TBBT_JSON_FIELD_UINT32,                                                \
        double *: TBBT_JSON_FIELD_DOUBLE,                                                  \
        char (*)[sizeof(((t *)0)->m)]: TBBT_JSON_FIELD_CHARS)

/* A table row: key, member m of struct type t.  A constant initializer. */
#define TBBT_JSON_FIELD(t, m, key) {(key), TBBT__JSON_FIELD_KIND(t, m), offsetof(t, m)}
/* A table row: key, the record's rank (1 for the first). */
#define TBBT_JSON_RANK(key) {(key), TBBT_JSON_FIELD_RANK, 0}

/*
 * Writes key: [ {one key per field} for each of the n records at rows, size bytes
 * apart ].  rows (borrowed) may be NULL when n is 0; fields (borrowed) has nfields rows.
 */
void tbbt_json_kv_records(struct tbbt_json *j, const char *key, const void *rows, size_t n,
                          size_t size, const struct tbbt_json_field *fields, size_t nfields);

#endif
