/* SPDX-License-Identifier: MIT */
/* JSON arrays of records from field tables (see json-fields.h). */
#include "util/json-fields.h"

/* The value of an integer field of the record at rec, rank-th of its array. */
static uint64_t uint_of(const struct tbbt_json_field *f, const char *rec, size_t rank)
{
    if (f->kind == TBBT_JSON_FIELD_RANK)
        return rank;
    if (f->kind == TBBT_JSON_FIELD_UINT32)
        return *(const uint32_t *)(const void *)(rec + f->offset);
    return *(const uint64_t *)(const void *)(rec + f->offset);
}

static void put_field(struct tbbt_json *j, const struct tbbt_json_field *f, const char *rec,
                      size_t rank)
{
    if (f->kind == TBBT_JSON_FIELD_DOUBLE)
        tbbt_json_kv_double(j, f->key, *(const double *)(const void *)(rec + f->offset));
    else if (f->kind == TBBT_JSON_FIELD_CHARS)
        tbbt_json_kv_string(j, f->key, rec + f->offset);
    else
        tbbt_json_kv_uint(j, f->key, uint_of(f, rec, rank));
}

void tbbt_json_kv_records(struct tbbt_json *j, const char *key, const void *rows, size_t n,
                          size_t size, const struct tbbt_json_field *fields, size_t nfields)
{
    tbbt_json_kv_array(j, key);
    for (size_t i = 0; i < n; i++) {
        tbbt_json_begin_object(j);
        for (size_t k = 0; k < nfields; k++)
            put_field(j, &fields[k], (const char *)rows + i * size, i + 1);
        tbbt_json_end_object(j);
    }
    tbbt_json_end_array(j);
}
