/* SPDX-License-Identifier: MIT */
/*
 * Shared by the unit tests that check whole traces (test-ns, test-correct):
 * every op record of a binary trace, copied into an array.  Include after
 * cmocka.h; header-only, each test program gets its own copy.
 */
#ifndef TBBT_TESTS_TRACE_RECORDS_H
#define TBBT_TESTS_TRACE_RECORDS_H

#include <glib.h>

#include "trace/trace.h"

static void trace_records_free_rec(gpointer p)
{
    tbbt_trace_rec_fini(p);
    g_free(p);
}

/* The op records of the trace at path (struct tbbt_trace_rec *; the array owns them). */
static GPtrArray *read_all(const char *path)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(trace_records_free_rec);
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    int err = 0, rc;

    r = tbbt_trace_reader_open(path, &err);
    assert_non_null(r);
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(r, &rec)) == 1) {
        struct tbbt_trace_rec *c = g_new(struct tbbt_trace_rec, 1);
        tbbt_trace_rec_init(c);
        tbbt_trace_rec_copy(c, &rec);
        g_ptr_array_add(a, c);
    }
    assert_int_equal(rc, 0);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    return a;
}

#endif
