/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the aging-metrics accumulator (src/aging/measure.h): block and
 * fragment distances, fragment sizes, block-weighted parent and inode distances,
 * free-space merging, empty inputs, the identity between the three fragmentation
 * averages (docs/tbbt-init.md "Measuring aging"), and the JSON/text printers.
 * Real file systems are covered by tests/integration/040-measure.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aging/measure.h"

#define assert_close(a, b) assert_true(fabs((double)(a) - (double)(b)) < 1e-9)

static void finish(const struct tbbt_measure_acc *a, bool have_free, struct tbbt_measure *m)
{
    *m = (struct tbbt_measure){ 0 };
    tbbt_measure_acc_finish(a, have_free, m);
}

/* One contiguous file, split by the file system into two adjacent extents. */
static void test_contiguous(void **state)
{
    struct tbbt_measure_acc a;
    struct tbbt_measure m;

    (void)state;
    tbbt_measure_acc_init(&a);
    tbbt_measure_file_begin(&a);
    tbbt_measure_file_extent(&a, 0, 1000, 6);
    tbbt_measure_file_extent(&a, 6, 1006, 4);
    tbbt_measure_file_end(&a, true, 900, true, 990);
    finish(&a, false, &m);
    assert_int_equal(m.files, 1);
    assert_int_equal(m.blocks, 10);
    assert_int_equal(m.fragments, 1);
    assert_int_equal(m.block_pairs, 9);
    assert_int_equal(m.fragment_pairs, 0);
    assert_close(m.avg_block_distance, 1.0);
    assert_close(m.avg_fragment_size, 10.0);
    assert_close(m.avg_fragment_distance, 0.0);
    assert_true(m.have_parent_distance);
    assert_close(m.avg_parent_distance, 100.0);
    assert_true(m.have_inode_distance);
    assert_close(m.avg_inode_distance, 10.0);
    assert_false(m.have_free);
}

/* Fragments forwards and backwards, a hole, and a second file (no distance across files). */
static void test_fragmented(void **state)
{
    struct tbbt_measure_acc a;
    struct tbbt_measure m;

    (void)state;
    tbbt_measure_acc_init(&a);
    tbbt_measure_file_begin(&a);
    tbbt_measure_file_extent(&a, 0, 100, 4);   /* 100..103 */
    tbbt_measure_file_extent(&a, 4, 200, 2);   /* 200..201: distance 97 */
    tbbt_measure_file_extent(&a, 10, 202, 2);  /* after a hole, physically next: same fragment */
    tbbt_measure_file_extent(&a, 12, 50, 2);   /* backwards: |50 - 203| = 153 */
    tbbt_measure_file_end(&a, true, 0, false, 0);
    tbbt_measure_file_begin(&a);
    tbbt_measure_file_extent(&a, 0, 5000, 2);
    tbbt_measure_file_end(&a, true, 4000, false, 0);
    finish(&a, false, &m);
    assert_int_equal(m.files, 2);
    assert_int_equal(m.blocks, 12);
    assert_int_equal(m.fragments, 4);
    assert_int_equal(m.block_pairs, 9 + 1);
    assert_int_equal(m.fragment_pairs, 2);
    /* Pairs: 3+1+1+1+1+1 inside runs of file 1 = 1 each, jumps 97 and 153, file 2: 1. */
    assert_close(m.avg_block_distance, (8.0 + 97 + 153) / 10);
    assert_close(m.avg_fragment_size, 3.0);
    assert_close(m.avg_fragment_distance, (97.0 + 153) / 2);
    /* Parent distance weighted by blocks: file 1 (10 blocks) 100, file 2 (2 blocks) 1000. */
    assert_close(m.avg_parent_distance, (10 * 100.0 + 2 * 1000) / 12);
    assert_false(m.have_inode_distance);
    /* The identity: block sum = (blocks - fragments) intra pairs + fragment distances. */
    assert_close(m.avg_block_distance * m.block_pairs,
                 (double)(m.blocks - m.fragments) + m.avg_fragment_distance * m.fragment_pairs);
}

/* Empty files count as files but add nothing; unlocated blocks are only counted. */
static void test_empty_and_unlocated(void **state)
{
    struct tbbt_measure_acc a;
    struct tbbt_measure m;

    (void)state;
    tbbt_measure_acc_init(&a);
    tbbt_measure_file_begin(&a);
    tbbt_measure_file_end(&a, true, 7, true, 7);
    tbbt_measure_file_begin(&a);
    tbbt_measure_file_unlocated(&a, 3);
    tbbt_measure_file_end(&a, true, 7, true, 7);
    finish(&a, true, &m);
    assert_int_equal(m.files, 2);
    assert_int_equal(m.blocks, 0);
    assert_int_equal(m.unlocated_blocks, 3);
    assert_close(m.avg_block_distance, 0.0);
    assert_close(m.avg_fragment_size, 0.0);
    assert_true(m.have_parent_distance);
    assert_false(m.have_inode_distance);
    assert_true(m.have_free);
    assert_int_equal(m.free_fragments, 0);
    assert_close(m.free_avg_fragment_size, 0.0);
}

/* Files with data but no located parent: parent distance unknown. */
static void test_parent_unknown(void **state)
{
    struct tbbt_measure_acc a;
    struct tbbt_measure m;

    (void)state;
    tbbt_measure_acc_init(&a);
    tbbt_measure_file_begin(&a);
    tbbt_measure_file_extent(&a, 0, 10, 1);
    tbbt_measure_file_end(&a, false, 0, false, 0);
    finish(&a, false, &m);
    assert_false(m.have_parent_distance);
    assert_int_equal(m.parent_files, 0);
}

/* Adjacent free extents of one device merge; a gap or another device starts a fragment. */
static void test_free_space(void **state)
{
    struct tbbt_measure_acc a;
    struct tbbt_measure m;

    (void)state;
    tbbt_measure_acc_init(&a);
    tbbt_measure_free_extent(&a, 1, 10, 5);
    tbbt_measure_free_extent(&a, 1, 15, 5);  /* merges: 10..19 */
    tbbt_measure_free_extent(&a, 1, 30, 2);
    tbbt_measure_free_extent(&a, 2, 32, 3);  /* other device */
    tbbt_measure_free_extent(&a, 2, 40, 0);  /* ignored */
    finish(&a, true, &m);
    assert_int_equal(m.free_blocks, 15);
    assert_int_equal(m.free_fragments, 3);
    assert_close(m.free_avg_fragment_size, 5.0);
}

static char *print(const struct tbbt_measure *m, bool json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    tbbt_measure_print(m, json, f);
    fclose(f);
    return buf;
}

static void test_print(void **state)
{
    struct tbbt_measure m = { 0 };
    static const char *keys[] = {
        "\"files\":3,", "\"blocks\":12,", "\"avg_block_distance\":1.5,",
        "\"avg_fragment_size\":4,", "\"avg_fragment_distance\":0,",
        "\"avg_parent_distance\":null,", "\"avg_inode_distance\":2.25,",
        "\"free_avg_fragment_size\":null,", "\"block_size\":4096,", NULL,
    };
    char *s;

    (void)state;
    m.files = 3;
    m.blocks = 12;
    m.block_size = 4096;
    m.avg_block_distance = 1.5;
    m.avg_fragment_size = 4;
    m.have_inode_distance = true;
    m.avg_inode_distance = 2.25;
    snprintf(m.fs_type, sizeof(m.fs_type), "ext4");
    s = print(&m, true);
    for (int i = 0; keys[i]; i++)
        assert_non_null(strstr(s, keys[i]));
    assert_int_equal(s[strlen(s) - 1], '\n');
    free(s);
    s = print(&m, false);
    assert_non_null(strstr(s, "avg block distance         1.500 blocks\n"));
    assert_non_null(strstr(s, "avg parent distance        unknown"));
    assert_non_null(strstr(s, "free avg fragment size     unknown"));
    free(s);
}

static void test_not_a_directory(void **state)
{
    struct tbbt_measure m;
    char err[256];

    (void)state;
    assert_int_equal(tbbt_measure_tree("/dev/null", &m, err, sizeof(err)), -ENOTDIR);
    assert_non_null(strstr(err, "not a directory"));
    assert_null(strchr(err, '\n'));
    assert_true(tbbt_measure_tree("/nonexistent/x", &m, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "/nonexistent/x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contiguous),
        cmocka_unit_test(test_fragmented),
        cmocka_unit_test(test_empty_and_unlocated),
        cmocka_unit_test(test_parent_unknown),
        cmocka_unit_test(test_free_space),
        cmocka_unit_test(test_print),
        cmocka_unit_test(test_not_a_directory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
