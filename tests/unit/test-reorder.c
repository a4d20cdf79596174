/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of src/trace/reorder.c (reorder.h): the "P[:K]" parser, the splitmix64
 * generator, and the swap-with-a-neighbour reordering in its streaming and array
 * forms (the sloppy-client model of the nfs-tricks paper, section 5): p = 0 is the
 * identity, a read is never pulled forward by more than K, non-swappable items never
 * move and nothing crosses them, p = 1 with K = 1 gives the pattern worked out by
 * hand, the two forms agree, and the order depends on the seed alone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <glib.h>

#include "trace/reorder.h"

/* ---- parser ------------------------------------------------------------------ */

static void parse_good(const char *s, double p, unsigned k)
{
    struct tbbt_reorder_spec spec = { -1, 0 };
    char err[256] = "";

    assert_int_equal(tbbt_reorder_parse(s, &spec, err, sizeof(err)), 0);
    assert_true(spec.p > p - 1e-12 && spec.p < p + 1e-12);
    assert_int_equal(spec.k, k);
}

static void parse_bad(const char *s)
{
    struct tbbt_reorder_spec spec = { 0.5, 7 };
    char err[256] = "";

    assert_int_equal(tbbt_reorder_parse(s, &spec, err, sizeof(err)), -1);
    assert_true(err[0] != '\0');
    assert_null(strchr(err, '\n'));
    /* a refused spec leaves the output alone */
    assert_true(spec.p == 0.5 && spec.k == 7);
}

static void test_parse(void **state)
{
    (void)state;
    parse_good("0.05", 0.05, 1);
    parse_good("0", 0.0, 1);
    parse_good("1", 1.0, 1);
    parse_good("0.1:4", 0.1, 4);
    parse_good("10%:4", 0.1, 4);
    parse_good("10%", 0.1, 1);
    parse_good("100%:1024", 1.0, 1024);
    parse_good("0.5:1", 0.5, 1);

    parse_bad(NULL);
    parse_bad("");
    parse_bad("1.5");
    parse_bad("150%");
    parse_bad("-0.1");
    parse_bad("abc");
    parse_bad("nan");
    parse_bad("inf");
    parse_bad("0.1:");
    parse_bad("0.1:0");
    parse_bad("0.1:1025");
    parse_bad("0.1:-3");
    parse_bad("0.1:+3");
    parse_bad("0.1:4x");
    parse_bad("0.1x");
    parse_bad("0.1:4:5");
    parse_bad("0.1%%");
}

/* ---- generator --------------------------------------------------------------- */

static void test_rng(void **state)
{
    uint64_t st = 0, a = 1;

    (void)state;
    /* splitmix64's published first output from state 0 */
    assert_true(tbbt_rng_next(&st) == 0xe220a8397b1dcdafull);
    for (int i = 0; i < 10000; i++) {
        double u = tbbt_rng_unit(&a);
        assert_true(u >= 0.0 && u < 1.0);
    }
}

/* ---- helpers ----------------------------------------------------------------- */

#define N 400

/* Streaming form over items idx + 1 (never NULL); out[i] = input index. */
static uint64_t run_stream(size_t n, const bool *swappable, const struct tbbt_reorder_spec *spec,
                           uint64_t seed, size_t *out)
{
    struct tbbt_reorder *r = tbbt_reorder_new(spec, seed);
    size_t in = 0, o = 0;
    uint64_t swaps;
    void *it;

    while (o < n) {
        while (in < n && tbbt_reorder_room(r)) {
            tbbt_reorder_push(r, (void *)(uintptr_t)(in + 1), swappable ? swappable[in] : true);
            in++;
        }
        it = tbbt_reorder_pop(r, in == n);
        assert_non_null(it);
        out[o++] = (size_t)(uintptr_t)it - 1;
    }
    assert_null(tbbt_reorder_pop(r, true));
    assert_int_equal(tbbt_reorder_count(r), 0);
    swaps = tbbt_reorder_swaps(r);
    tbbt_reorder_free(r);
    return swaps;
}

/* Array form over items idx (item 0 included); out[i] = input index. */
static uint64_t run_array(size_t n, const bool *swappable, const struct tbbt_reorder_spec *spec,
                          uint64_t seed, size_t *out)
{
    void **items = g_new(void *, n);
    bool *sw = NULL;
    uint64_t swaps;

    for (size_t i = 0; i < n; i++)
        items[i] = (void *)(uintptr_t)i;
    if (swappable)
        sw = g_memdup2(swappable, n * sizeof(*sw));
    swaps = tbbt_reorder_array(items, sw, n, spec, seed);
    for (size_t i = 0; i < n; i++) {
        out[i] = (size_t)(uintptr_t)items[i];
        if (sw)
            assert_true(sw[i] == swappable[out[i]]);   /* flags move with their items */
    }
    g_free(items);
    g_free(sw);
    return swaps;
}

static void assert_permutation(const size_t *out, size_t n)
{
    bool *seen = g_new0(bool, n);

    for (size_t i = 0; i < n; i++) {
        assert_true(out[i] < n);
        assert_false(seen[out[i]]);
        seen[out[i]] = true;
    }
    g_free(seen);
}

/* ---- properties -------------------------------------------------------------- */

static void test_identity(void **state)
{
    struct tbbt_reorder_spec spec = { 0.0, 4 };
    size_t out[N];

    (void)state;
    for (size_t n = 1; n <= 20; n++) {
        assert_int_equal(run_stream(n, NULL, &spec, 1, out), 0);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(out[i], i);
        assert_int_equal(run_array(n, NULL, &spec, 1, out), 0);
        for (size_t i = 0; i < n; i++)
            assert_int_equal(out[i], i);
    }
    assert_int_equal(run_array(N, NULL, &spec, 99, out), 0);
    for (size_t i = 0; i < N; i++)
        assert_int_equal(out[i], i);
}

/*
 * p = 1, K = 1, worked out by hand: the buffer holds 2 items; each decision swaps the
 * head with the next, so item 0 keeps being pushed back: 1, 2, 3, ..., n-1, 0 (the last
 * decision, at flush with one item left, has no neighbour).  n - 1 swaps.
 */
static void test_p1_k1(void **state)
{
    struct tbbt_reorder_spec spec = { 1.0, 1 };
    size_t out[8];
    const size_t want[8] = { 1, 2, 3, 4, 5, 6, 7, 0 };

    (void)state;
    assert_int_equal(run_stream(8, NULL, &spec, 5, out), 7);
    assert_memory_equal(out, want, sizeof(want));
    assert_int_equal(run_array(8, NULL, &spec, 5, out), 7);
    assert_memory_equal(out, want, sizeof(want));
    /* with item 3 not swappable: 1, 2, 0 | 3 | 5, 6, 7, 4 */
    {
        bool sw[8] = { true, true, true, false, true, true, true, true };
        const size_t want2[8] = { 1, 2, 0, 3, 5, 6, 7, 4 };
        run_stream(8, sw, &spec, 5, out);
        assert_memory_equal(out, want2, sizeof(want2));
        run_array(8, sw, &spec, 5, out);
        assert_memory_equal(out, want2, sizeof(want2));
    }
}

/* No item comes out more than K places before its input position. */
static void test_distance(void **state)
{
    const double ps[] = { 0.05, 0.1, 0.5, 1.0 };
    const unsigned ks[] = { 1, 2, 4, 8, 33 };
    size_t out[N];

    (void)state;
    for (size_t a = 0; a < G_N_ELEMENTS(ps); a++) {
        for (size_t b = 0; b < G_N_ELEMENTS(ks); b++) {
            for (uint64_t seed = 1; seed <= 20; seed++) {
                struct tbbt_reorder_spec spec = { ps[a], ks[b] };
                uint64_t swaps = run_stream(N, NULL, &spec, seed, out);
                assert_permutation(out, N);
                for (size_t i = 0; i < N; i++)
                    assert_true(out[i] <= i + ks[b]);
                if (ps[a] >= 0.5)
                    assert_true(swaps > 0);
                run_array(N, NULL, &spec, seed, out);
                assert_permutation(out, N);
                for (size_t i = 0; i < N; i++)
                    assert_true(out[i] <= i + ks[b]);
            }
        }
    }
}

/* Non-swappable items keep their place and nothing crosses one. */
static void test_barriers(void **state)
{
    bool sw[N];
    size_t out[N];

    (void)state;
    for (size_t i = 0; i < N; i++)
        sw[i] = i % 7 != 3 && i % 13 != 0;
    for (uint64_t seed = 1; seed <= 30; seed++) {
        for (unsigned k = 1; k <= 16; k *= 2) {
            struct tbbt_reorder_spec spec = { 0.6, k };
            for (int form = 0; form < 2; form++) {
                size_t last_barrier = 0;
                bool any = false;
                if (form == 0)
                    run_stream(N, sw, &spec, seed, out);
                else
                    run_array(N, sw, &spec, seed, out);
                assert_permutation(out, N);
                for (size_t i = 0; i < N; i++) {
                    if (!sw[i])
                        assert_int_equal(out[i], i);
                    /* every item between two barriers stays between them */
                    if (!sw[out[i]]) {
                        last_barrier = out[i];
                        any = true;
                    } else if (any) {
                        assert_true(out[i] > last_barrier);
                    }
                }
                for (size_t i = 0; i < N; i++) {
                    /* items before barrier b in the input come out before it */
                    if (!sw[i])
                        for (size_t j = 0; j < N; j++)
                            if (out[j] < i)
                                assert_true(j < i);
                }
            }
        }
    }
}

static void test_stream_equals_array(void **state)
{
    size_t a[N], b[N];
    bool sw[N];

    (void)state;
    for (size_t i = 0; i < N; i++)
        sw[i] = i % 11 != 5;
    for (uint64_t seed = 0; seed < 40; seed++) {
        struct tbbt_reorder_spec spec = { 0.05 * (double)(seed % 20 + 1), 1 + seed % 9 };
        size_t n = 1 + (size_t)(seed * 37 % N);
        uint64_t s1 = run_stream(n, NULL, &spec, seed, a);
        uint64_t s2 = run_array(n, NULL, &spec, seed, b);
        assert_int_equal(s1, s2);
        assert_memory_equal(a, b, n * sizeof(a[0]));
        s1 = run_stream(n, sw, &spec, seed, a);
        s2 = run_array(n, sw, &spec, seed, b);
        assert_int_equal(s1, s2);
        assert_memory_equal(a, b, n * sizeof(a[0]));
    }
}

static void test_seeded(void **state)
{
    struct tbbt_reorder_spec spec = { 0.3, 4 };
    size_t a[N], b[N];

    (void)state;
    run_stream(N, NULL, &spec, 42, a);
    run_stream(N, NULL, &spec, 42, b);
    assert_memory_equal(a, b, sizeof(a));
    run_stream(N, NULL, &spec, 43, b);
    assert_true(memcmp(a, b, sizeof(a)) != 0);
}

/* The streaming form's buffer: pop gives nothing until k + 1 items are in. */
static void test_buffer(void **state)
{
    struct tbbt_reorder_spec spec = { 0.0, 3 };
    struct tbbt_reorder *r = tbbt_reorder_new(&spec, 1);
    int x[5];

    (void)state;
    assert_null(tbbt_reorder_pop(r, false));
    for (int i = 0; i < 4; i++) {
        assert_true(tbbt_reorder_room(r));
        tbbt_reorder_push(r, &x[i], true);
        if (i < 3)
            assert_null(tbbt_reorder_pop(r, false));
    }
    assert_false(tbbt_reorder_room(r));
    assert_int_equal(tbbt_reorder_count(r), 4);
    assert_ptr_equal(tbbt_reorder_pop(r, false), &x[0]);
    tbbt_reorder_push(r, &x[4], true);
    for (int i = 1; i < 5; i++)
        assert_ptr_equal(tbbt_reorder_pop(r, true), &x[i]);
    assert_null(tbbt_reorder_pop(r, true));
    tbbt_reorder_free(r);
    tbbt_reorder_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_rng),
        cmocka_unit_test(test_identity),
        cmocka_unit_test(test_p1_k1),
        cmocka_unit_test(test_distance),
        cmocka_unit_test(test_barriers),
        cmocka_unit_test(test_stream_equals_array),
        cmocka_unit_test(test_seeded),
        cmocka_unit_test(test_buffer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
