/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/mpi/tbbt-mpi.h in one process not started by mpirun, with either
 * implementation (mpi-open.c or mpi-none.c): the module stays inactive (MPI is never
 * initialized), is rank 0 of 1 with a host name, every collective completes at once
 * (barrier, broadcast leaves the buffer, clock offsets are zero, a gather gives back one
 * copy of the blob, an agreement returns this rank's own status and reason), and
 * finalize is a no-op, also twice.  The multi-rank path is bench/mpi-smoke.c's, under
 * mpirun.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "mpi/tbbt-mpi.h"

static int setup(void **state)
{
    (void)state;
    /* As when run by hand: none of the launchers' variables. */
    unsetenv("OMPI_COMM_WORLD_SIZE");
    unsetenv("PMIX_RANK");
    unsetenv("PMI_RANK");
    return tbbt_mpi_init(NULL, NULL);
}

static int teardown(void **state)
{
    (void)state;
    tbbt_mpi_finalize();
    return 0;
}

static void test_single_rank(void **state)
{
    (void)state;
    assert_false(tbbt_mpi_active());
#ifdef TBBT_HAVE_MPI
    assert_true(tbbt_mpi_compiled());
#else
    assert_false(tbbt_mpi_compiled());
#endif
    assert_int_equal(tbbt_mpi_rank(), 0);
    assert_int_equal(tbbt_mpi_size(), 1);
    assert_non_null(tbbt_mpi_host());
    assert_true(strlen(tbbt_mpi_host()) > 0);
    assert_string_equal(tbbt_mpi_error(), "");
}

static void test_barrier_bcast(void **state)
{
    char buf[8] = "abcdefg";

    (void)state;
    assert_int_equal(tbbt_mpi_barrier(), 0);
    assert_int_equal(tbbt_mpi_bcast(buf, sizeof buf), 0);
    assert_string_equal(buf, "abcdefg");
    assert_int_equal(tbbt_mpi_bcast(buf, 0), 0);
}

static void test_clock_offsets(void **state)
{
    struct tbbt_mpi_offset mine = { 5, 5 }, all[1] = { { 7, 7 } };

    (void)state;
    assert_int_equal(tbbt_mpi_clock_offsets(8, &mine, all), 0);
    assert_int_equal(mine.offset_ns, 0);
    assert_int_equal(mine.rtt_ns, 0);
    assert_int_equal(all[0].offset_ns, 0);
    assert_int_equal(all[0].rtt_ns, 0);
    mine.offset_ns = 3;
    assert_int_equal(tbbt_mpi_clock_offsets(0, &mine, NULL), 0);
    assert_int_equal(mine.offset_ns, 0);
}

static void test_gather(void **state)
{
    static const char blob[] = "rank report";
    GPtrArray *out = NULL;
    gsize len = 0;
    const char *got;

    (void)state;
    assert_int_equal(tbbt_mpi_gather(blob, sizeof blob, &out), 0);
    assert_non_null(out);
    assert_int_equal(out->len, 1);
    got = g_bytes_get_data(g_ptr_array_index(out, 0), &len);
    assert_int_equal(len, sizeof blob);
    assert_memory_equal(got, blob, sizeof blob);
    assert_ptr_not_equal(got, blob);
    g_ptr_array_unref(out);

    assert_int_equal(tbbt_mpi_gather(NULL, 0, &out), 0);
    assert_int_equal(out->len, 1);
    assert_int_equal(g_bytes_get_size(g_ptr_array_index(out, 0)), 0);
    g_ptr_array_unref(out);
}

static void test_agree(void **state)
{
    char *why = (char *)"x";

    (void)state;
    assert_int_equal(tbbt_mpi_agree(0, NULL, &why), 0);
    assert_null(why);
    assert_int_equal(tbbt_mpi_agree(0, "ignored", NULL), 0);
    assert_int_equal(tbbt_mpi_agree(-ENOENT, "cannot open trace", &why), -ENOENT);
    assert_string_equal(why, "cannot open trace");
    g_free(why);
    assert_int_equal(tbbt_mpi_agree(-EIO, NULL, &why), -EIO);
    assert_null(why);
}

static void test_finalize_twice(void **state)
{
    (void)state;
    tbbt_mpi_finalize();
    tbbt_mpi_finalize();
    assert_false(tbbt_mpi_active());
    assert_int_equal(tbbt_mpi_size(), 1);
    assert_int_equal(tbbt_mpi_init(NULL, NULL), 0);
    assert_false(tbbt_mpi_active());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_rank),
        cmocka_unit_test(test_barrier_bcast),
        cmocka_unit_test(test_clock_offsets),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_agree),
        cmocka_unit_test(test_finalize_twice),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
