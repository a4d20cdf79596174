/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the synth module (src/synth/synth.h): the nfs-tricks read benchmark's
 * file set and sizes (paper section 4.3), the stride order (section 7) worked out by
 * hand for small files, the round-robin clock of concurrent readers, per-reader
 * reordering (p = 0 is the identity; p > 0 pulls no read forward by more than K and
 * keeps the multiset of reads), reproducibility by seed, and the written trace and map
 * (tbbt_synth_run(): final names only on success, no temporary files left).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <glib.h>
#include <glib/gstdio.h>

#include "ns/ns.h"
#include "synth/synth.h"
#include "trace/trace.h"

#define MiB (1024ull * 1024ull)

/* scale that gives files of `blocks` 8 KiB blocks for n readers */
static double scale_for(uint64_t blocks, uint32_t n)
{
    return (double)(blocks * 8192 * n) / (double)(256 * MiB);
}

static struct tbbt_synth *gen(uint32_t readers, uint32_t stride, double scale, double p,
                              unsigned k, uint64_t seed)
{
    struct tbbt_synth_cfg cfg;
    char err[256];
    struct tbbt_synth *s;

    tbbt_synth_cfg_init(&cfg);
    cfg.readers = readers;
    cfg.stride = stride;
    cfg.scale = scale;
    cfg.reorder.p = p;
    cfg.reorder.k = k;
    cfg.seed = seed;
    s = tbbt_synth_new(&cfg, err, sizeof(err));
    assert_non_null(s);
    return s;
}

/* All reads of the stream; *n set.  Given: g_free. */
static struct tbbt_synth_read *all_reads(struct tbbt_synth *s, size_t *n)
{
    size_t cap = (size_t)tbbt_synth_total_reads(s), i = 0;
    struct tbbt_synth_read *v = g_new0(struct tbbt_synth_read, cap + 1);

    while (tbbt_synth_next_read(s, &v[i]) == 1) {
        i++;
        assert_true(i <= cap);
    }
    assert_int_equal(i, cap);
    *n = i;
    return v;
}

/* ---- stride order ------------------------------------------------------------ */

static void expect_blocks(uint64_t nb, uint32_t stride, const uint64_t *want)
{
    for (uint64_t i = 0; i < nb; i++)
        assert_int_equal(tbbt_synth_stride_block(nb, stride, i), want[i]);
}

static void test_stride_by_hand(void **state)
{
    const uint64_t s1[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
    const uint64_t s2[16] = { 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15 };
    const uint64_t s4[16] = { 0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15 };
    const uint64_t s8[16] = { 0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15 };
    /* 10 blocks, 4 streams: starts 0, 2, 5, 7 (lengths 2, 3, 2, 3): two full rounds,
     * then the streams of 3 blocks alone */
    const uint64_t u4[10] = { 0, 2, 5, 7, 1, 3, 6, 8, 4, 9 };
    /* more streams than blocks: starts 0 0 0 1 1 2 2 2 (empty streams skipped) */
    const uint64_t big[3] = { 0, 1, 2 };

    (void)state;
    expect_blocks(16, 1, s1);
    expect_blocks(16, 2, s2);
    expect_blocks(16, 4, s4);
    expect_blocks(16, 8, s8);
    expect_blocks(16, 16, s1);
    expect_blocks(10, 4, u4);
    expect_blocks(3, 8, big);
}

static void test_stride_permutation(void **state)
{
    (void)state;
    for (uint64_t nb = 1; nb <= 70; nb++) {
        for (uint32_t st = 1; st <= 20; st++) {
            bool *seen = g_new0(bool, nb);
            for (uint64_t i = 0; i < nb; i++) {
                uint64_t b = tbbt_synth_stride_block(nb, st, i);
                assert_true(b < nb);
                assert_false(seen[b]);
                seen[b] = true;
            }
            g_free(seen);
        }
    }
}

/* The generator gives the same offsets for one reader of a 16-block file. */
static void test_stream_offsets(void **state)
{
    const uint32_t strides[] = { 1, 2, 4, 8 };

    (void)state;
    for (size_t a = 0; a < G_N_ELEMENTS(strides); a++) {
        struct tbbt_synth *s = gen(1, strides[a], scale_for(16, 1), 0, 1, 1);
        size_t n;
        struct tbbt_synth_read *v = all_reads(s, &n);

        assert_int_equal(n, 16);
        assert_int_equal(tbbt_synth_reads_per_reader(s), 16);
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(v[i].reader, 0);
            assert_int_equal(v[i].seq, i);
            assert_int_equal(v[i].count, 8192);
            assert_int_equal(v[i].offset, tbbt_synth_stride_block(16, strides[a], i) * 8192);
            assert_int_equal(v[i].offset, v[i].block * 8192);
            assert_true(v[i].eof == (v[i].block == 15));
        }
        if (strides[a] == 2) {
            assert_int_equal(v[1].offset, 8 * 8192);
            assert_int_equal(v[2].offset, 1 * 8192);
        }
        g_free(v);
        tbbt_synth_free(s);
    }
}

/* ---- file set ---------------------------------------------------------------- */

static void test_file_sizes(void **state)
{
    (void)state;
    assert_int_equal(tbbt_synth_file_size(1, 1.0, 8192), 256 * MiB);
    assert_int_equal(tbbt_synth_file_size(2, 1.0, 8192), 128 * MiB);
    assert_int_equal(tbbt_synth_file_size(4, 1.0, 8192), 64 * MiB);
    assert_int_equal(tbbt_synth_file_size(8, 1.0, 8192), 32 * MiB);
    assert_int_equal(tbbt_synth_file_size(16, 1.0, 8192), 16 * MiB);
    assert_int_equal(tbbt_synth_file_size(32, 1.0, 8192), 8 * MiB);
    assert_int_equal(tbbt_synth_file_size(64, 1.0, 8192), 4 * MiB);
    assert_int_equal(tbbt_synth_file_size(64, 1.0 / 64, 8192), 64 * 1024);
    assert_int_equal(tbbt_synth_file_size(4, 0.5, 8192), 32 * MiB);
    assert_int_equal(tbbt_synth_file_size(1, 2.0, 65536), 512 * MiB);
    /* 256 MiB / 3 = 89478485.3 bytes: 10922 whole reads */
    assert_int_equal(tbbt_synth_file_size(3, 1.0, 8192), 10922ull * 8192);
    /* never less than one read */
    assert_int_equal(tbbt_synth_file_size(32, 1e-9, 8192), 8192);
    assert_int_equal(tbbt_synth_file_size(1000, 1.0 / 4096, 4096), 4096);
    /* rounded to the read size */
    assert_int_equal(tbbt_synth_file_size(1, 1.0, 1000) % 1000, 0);
}

static void test_file_set(void **state)
{
    struct tbbt_synth_cfg cfg;
    struct tbbt_synth *s;
    const struct tbbt_synth_file *f;
    char err[256];
    size_t n, read = 0;

    (void)state;
    s = gen(4, 1, 1.0, 0, 1, 1);
    f = tbbt_synth_files(s, &n);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        char want[32];
        g_snprintf(want, sizeof(want), "ra/g4/f%zu", i);
        assert_string_equal(f[i].path, want);
        assert_int_equal(f[i].size, 64 * MiB);
        assert_int_equal(f[i].reader, (int)i);
        assert_int_equal(f[i].group, 4);
    }
    assert_int_equal(tbbt_synth_reads_per_reader(s), 64 * MiB / 8192);
    tbbt_synth_free(s);

    s = gen(64, 1, 1.0 / 16, 0, 1, 1);
    f = tbbt_synth_files(s, &n);
    assert_int_equal(n, 64);
    assert_string_equal(f[63].path, "ra/g64/f63");
    assert_int_equal(f[63].size, 256 * 1024);
    assert_int_equal(f[63].reader, 63);
    tbbt_synth_free(s);

    /* --file-set all: 1 + 2 + ... + 32 = 63 files, and group N if it is not one of them */
    tbbt_synth_cfg_init(&cfg);
    cfg.readers = 5;
    cfg.fileset = TBBT_SYNTH_FILES_ALL;
    s = tbbt_synth_new(&cfg, err, sizeof(err));
    assert_non_null(s);
    f = tbbt_synth_files(s, &n);
    assert_int_equal(n, 68);
    assert_string_equal(f[0].path, "ra/g1/f0");
    assert_int_equal(f[0].size, 256 * MiB);
    assert_string_equal(f[62].path, "ra/g32/f31");
    assert_int_equal(f[62].size, 8 * MiB);
    for (size_t i = 0; i < n; i++) {
        read += f[i].reader >= 0;
        assert_true(f[i].reader < 0 || f[i].group == 5);
        for (size_t j = 0; j < i; j++)
            assert_true(f[i].fileid != f[j].fileid);
    }
    assert_int_equal(read, 5);
    tbbt_synth_free(s);
}

static void test_cfg_check(void **state)
{
    struct tbbt_synth_cfg cfg;
    char err[256];

    (void)state;
    tbbt_synth_cfg_init(&cfg);
    assert_int_equal(tbbt_synth_cfg_check(&cfg, err, sizeof(err)), 0);
#define BAD(field, value)                                                                       \
    do {                                                                                        \
        tbbt_synth_cfg_init(&cfg);                                                              \
        cfg.field = value;                                                                      \
        err[0] = '\0';                                                                          \
        assert_int_equal(tbbt_synth_cfg_check(&cfg, err, sizeof(err)), -1);                     \
        assert_true(err[0] != '\0');                                                            \
        assert_null(tbbt_synth_new(&cfg, err, sizeof(err)));                                    \
    } while (0)
    BAD(readers, 0);
    BAD(readers, 70000);
    BAD(stride, 0);
    BAD(read_size, 0);
    BAD(read_size, 65537);
    BAD(scale, 0.0);
    BAD(scale, -1.0);
    BAD(scale, 1e9);
    BAD(reorder.p, 1.5);
    BAD(reorder.k, 0);
    BAD(rate, -1.0);
#undef BAD
    tbbt_synth_cfg_init(&cfg);
    cfg.tcp = true;
    cfg.read_size = 1024 * 1024;
    assert_int_equal(tbbt_synth_cfg_check(&cfg, err, sizeof(err)), 0);
    cfg.read_size++;
    assert_int_equal(tbbt_synth_cfg_check(&cfg, err, sizeof(err)), -1);
    /* the default rate: 25 MiB/s over all readers */
    tbbt_synth_cfg_init(&cfg);
    cfg.readers = 4;
    assert_true(tbbt_synth_rate(&cfg) > 799.999 && tbbt_synth_rate(&cfg) < 800.001);
}

/* ---- concurrent readers ------------------------------------------------------ */

static void test_round_robin(void **state)
{
    struct tbbt_synth *s = gen(3, 1, scale_for(5, 3), 0, 1, 1);
    const struct tbbt_synth_cfg *c = tbbt_synth_cfg(s);
    uint64_t period = (uint64_t)(1e9 / c->rate + 0.5);
    size_t n, nf;
    struct tbbt_synth_read *v = all_reads(s, &n);
    const struct tbbt_synth_file *f = tbbt_synth_files(s, &nf);

    (void)state;
    assert_int_equal(n, 15);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(v[i].reader, i % 3);
        assert_int_equal(v[i].seq, i / 3);
        assert_int_equal(v[i].offset, (i / 3) * 8192);
        assert_int_equal(f[v[i].file].reader, (int)v[i].reader);
        assert_true(v[i].eof == (i / 3 == 4));
        assert_true(v[i].reply_ns > v[i].call_ns);
        if (i > 0) {
            assert_true(v[i].call_ns >= v[i - 1].call_ns);
            if (v[i].reader == 0)
                assert_int_equal(v[i].call_ns - v[i - 3].call_ns, period);
        }
    }
    assert_true(v[0].call_ns > c->start_ns);
    /* rewind gives the same stream again */
    tbbt_synth_rewind(s);
    {
        size_t m;
        struct tbbt_synth_read *w = all_reads(s, &m);
        assert_memory_equal(v, w, n * sizeof(*v));
        g_free(w);
    }
    g_free(v);
    tbbt_synth_free(s);
}

/* ---- reordering -------------------------------------------------------------- */

/* Per reader, the blocks in its own order. */
static uint64_t *reader_blocks(const struct tbbt_synth_read *v, size_t n, uint32_t r,
                               uint64_t per)
{
    uint64_t *b = g_new0(uint64_t, per);

    for (size_t i = 0; i < n; i++)
        if (v[i].reader == r)
            b[v[i].seq] = v[i].block;
    return b;
}

static void test_reorder_identity(void **state)
{
    struct tbbt_synth *a = gen(4, 4, scale_for(64, 4), 0, 1, 1);
    struct tbbt_synth *b = gen(4, 4, scale_for(64, 4), 0.0, 8, 12345);
    size_t na, nb;
    struct tbbt_synth_read *va = all_reads(a, &na), *vb = all_reads(b, &nb);

    (void)state;
    assert_int_equal(na, nb);
    assert_memory_equal(va, vb, na * sizeof(*va));
    assert_int_equal(tbbt_synth_swaps(b), 0);
    g_free(va);
    g_free(vb);
    tbbt_synth_free(a);
    tbbt_synth_free(b);
}

static void test_reorder_bounds(void **state)
{
    const unsigned ks[] = { 1, 4, 8 };
    const uint32_t strides[] = { 1, 8 };

    (void)state;
    for (size_t a = 0; a < G_N_ELEMENTS(ks); a++) {
        for (size_t c = 0; c < G_N_ELEMENTS(strides); c++) {
            struct tbbt_synth *s = gen(3, strides[c], scale_for(200, 3), 0.3, ks[a], 9);
            uint64_t per = tbbt_synth_reads_per_reader(s);
            size_t n;
            struct tbbt_synth_read *v = all_reads(s, &n);

            assert_true(tbbt_synth_swaps(s) > 0);
            for (uint32_t r = 0; r < 3; r++) {
                uint64_t *b = reader_blocks(v, n, r, per);
                bool *seen = g_new0(bool, per);
                bool moved = false;
                for (uint64_t i = 0; i < per; i++) {
                    /* where the block was in the unperturbed order */
                    uint64_t pos = 0;
                    while (tbbt_synth_stride_block(per, strides[c], pos) != b[i])
                        pos++;
                    assert_true(pos <= i + ks[a]);  /* pulled forward by at most K */
                    moved |= pos != i;
                    assert_false(seen[b[i]]);       /* the same multiset of reads */
                    seen[b[i]] = true;
                }
                assert_true(moved);
                g_free(seen);
                g_free(b);
            }
            g_free(v);
            tbbt_synth_free(s);
        }
    }
}

static void test_reorder_seeded(void **state)
{
    struct tbbt_synth *a = gen(4, 1, scale_for(100, 4), 0.1, 4, 77);
    struct tbbt_synth *b = gen(4, 1, scale_for(100, 4), 0.1, 4, 77);
    struct tbbt_synth *c = gen(4, 1, scale_for(100, 4), 0.1, 4, 78);
    size_t na, nb, nc;
    struct tbbt_synth_read *va = all_reads(a, &na), *vb = all_reads(b, &nb);
    struct tbbt_synth_read *vc = all_reads(c, &nc);

    (void)state;
    assert_memory_equal(va, vb, na * sizeof(*va));
    assert_true(memcmp(va, vc, na * sizeof(*va)) != 0);
    /* readers get different perturbations */
    {
        uint64_t *r0 = reader_blocks(va, na, 0, 100), *r1 = reader_blocks(va, na, 1, 100);
        assert_true(memcmp(r0, r1, 100 * sizeof(*r0)) != 0);
        g_free(r0);
        g_free(r1);
    }
    g_free(va);
    g_free(vb);
    g_free(vc);
    tbbt_synth_free(a);
    tbbt_synth_free(b);
    tbbt_synth_free(c);
}

/* ---- the written trace and map ----------------------------------------------- */

static int count_entries(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    int n = 0;

    assert_non_null(d);
    while (g_dir_read_name(d))
        n++;
    g_dir_close(d);
    return n;
}

static void test_run(void **state)
{
    char *dir = g_dir_make_tmp("test-synth-XXXXXX", NULL);
    char *trace = g_build_filename(dir, "t.tbbt", NULL), *map = g_strconcat(trace, ".map", NULL);
    char *trace2 = g_build_filename(dir, "u.tbbt", NULL), *map2 = g_strconcat(trace2, ".map", NULL);
    struct tbbt_synth *s = gen(2, 2, scale_for(8, 2), 0.2, 2, 3);
    struct tbbt_synth_summary sum;
    struct tbbt_trace_reader *r;
    struct tbbt_trace_rec rec;
    struct tbbt_ns_map_reader *mr;
    struct tbbt_ns_map_entry e;
    char err[512] = "";
    uint64_t reads = 0, ops = 0;
    int rc, files = 0;
    gchar *a = NULL, *b = NULL;
    gsize la, lb;

    (void)state;
    assert_int_equal(tbbt_synth_run(s, trace, map, &sum, err, sizeof(err)), 0);
    assert_int_equal(sum.reads, 16);
    assert_int_equal(sum.bytes, 16 * 8192);
    assert_int_equal(sum.records, 16 + 2 * 4);
    assert_int_equal(count_entries(dir), 2);    /* no temporary file left */
    r = tbbt_trace_reader_open(trace, &rc);
    assert_non_null(r);
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(r, &rec)) == 1) {
        ops++;
        if (rec.prog == TBBT_PROG_NFS3 && rec.proc == 6) {
            reads++;
            assert_true(TBBT_HAS(&rec, TBBT_F_ID));
            assert_true(TBBT_HAS(&rec, TBBT_F_EOF));
            assert_true(TBBT_HAS(&rec, TBBT_F_OBJ_ATTR));
            assert_int_equal(rec.obj_attr.size, 8 * 8192);
            assert_int_equal(rec.res_count, 8192);
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(reads, 16);
    assert_int_equal(ops, sum.records);
    assert_int_equal(tbbt_eptab_count(tbbt_trace_reader_eptab(r)), 2);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);

    mr = tbbt_ns_map_reader_open(map, &rc);
    assert_non_null(mr);
    while ((rc = tbbt_ns_map_reader_next(mr, &e)) == 1) {
        assert_int_equal(e.create_ns, 0);
        assert_false(e.deleted);
        if (e.type == TBBT_NS_FILE) {
            files++;
            assert_int_equal(e.size, 8 * 8192);
            assert_int_equal(e.size_state, 1);
            assert_true(strncmp(e.path, "ra/g2/f", 7) == 0);
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(files, 2);
    tbbt_ns_map_reader_close(mr);

    /* the same configuration again: byte-identical trace and map */
    assert_int_equal(tbbt_synth_run(s, trace2, map2, NULL, err, sizeof(err)), 0);
    assert_true(g_file_get_contents(trace, &a, &la, NULL));
    assert_true(g_file_get_contents(trace2, &b, &lb, NULL));
    assert_true(la == lb && memcmp(a, b, la) == 0);
    g_free(a);
    g_free(b);
    assert_true(g_file_get_contents(map, &a, &la, NULL));
    assert_true(g_file_get_contents(map2, &b, &lb, NULL));
    assert_true(la == lb && memcmp(a, b, la) == 0);
    g_free(a);
    g_free(b);

    /* failure: nothing under the final names, nothing temporary */
    {
        char *bad = g_build_filename(dir, "missing", "x.tbbt", NULL);
        char *badmap = g_strconcat(bad, ".map", NULL);
        err[0] = '\0';
        assert_true(tbbt_synth_run(s, bad, badmap, NULL, err, sizeof(err)) < 0);
        assert_non_null(strstr(err, "x.tbbt"));
        assert_int_equal(count_entries(dir), 4);
        /* the map's directory missing: the trace is not written either */
        g_free(badmap);
        badmap = g_build_filename(dir, "missing", "m.map", NULL);
        g_free(bad);
        bad = g_build_filename(dir, "v.tbbt", NULL);
        assert_true(tbbt_synth_run(s, bad, badmap, NULL, err, sizeof(err)) < 0);
        assert_int_equal(count_entries(dir), 4);
        g_free(bad);
        g_free(badmap);
    }

    g_unlink(trace);
    g_unlink(map);
    g_unlink(trace2);
    g_unlink(map2);
    g_rmdir(dir);
    g_free(trace);
    g_free(map);
    g_free(trace2);
    g_free(map2);
    g_free(dir);
    tbbt_synth_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stride_by_hand),
        cmocka_unit_test(test_stride_permutation),
        cmocka_unit_test(test_stream_offsets),
        cmocka_unit_test(test_file_sizes),
        cmocka_unit_test(test_file_set),
        cmocka_unit_test(test_cfg_check),
        cmocka_unit_test(test_round_robin),
        cmocka_unit_test(test_reorder_identity),
        cmocka_unit_test(test_reorder_bounds),
        cmocka_unit_test(test_reorder_seeded),
        cmocka_unit_test(test_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
