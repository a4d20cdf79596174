/* SPDX-License-Identifier: MIT */
/* JSON arrays of records from field tables (see json-fields.h). */
#include "util/json-fields.h"

static void put_field(struct tbbt_json *j, const struct tbbt_json_field *f, const char *rec,
                      size_t rank)
{
    const void *p = rec + f->offset;

    switch (f->kind) {
    case TBBT_JSON_FIELD_UINT64:
        tbbt_json_kv_uint(j, f->key, *(const uint64_t *)p);
        break;
    case TBBT_JSON_FIELD_UINT32:
        tbbt_json_kv_uint(j, f->key, *(const uint32_t *)p);
        break;
    case TBBT_JSON_FIELD_DOUBLE:
        tbbt_json_kv_double(j, f->key, *(const double *)p);
        break;
    case TBBT_JSON_FIELD_BOOL:
        tbbt_json_kv_bool(j, f->key, *(const bool *)p);
        break;
    case TBBT_JSON_FIELD_STRING:
        tbbt_json_kv_string(j, f->key, *(const char *const *)p);
        break;
    case TBBT_JSON_FIELD_CHARS:
        tbbt_json_kv_string(j, f->key, p);
        break;
    case TBBT_JSON_FIELD_RANK:
        tbbt_json_kv_uint(j, f->key, rank);
        break;
    }
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
