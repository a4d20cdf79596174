/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the read-ahead heuristic simulator (src/raheur/raheur.h): for each
 * heuristic, seqCount sequences worked out by hand from FreeBSD 4's nfsrv_read() and
 * the nfs-tricks paper (sections 6.2 and 7) for small read patterns (sequential, a
 * gap, a small reorder within 64 KiB, a far jump, stride 2 with 2 cursors, cursor
 * recycling past the limit, the cap at 127, the offset-0 rule, a read of 0 bytes);
 * the read-ahead threshold; and the state table: a table of 4 slots and 2 probes with
 * the key-modulo hash, where the entry ejected is the least recently used among the
 * probed ones, lookups that find their entry eject nothing, and entries outside the
 * probe window are never touched; FreeBSD's use-count loop and its slot past the
 * window; an ejected file starting fresh; configuration checks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <glib.h>
#include <string.h>

#include "raheur/raheur.h"

#define B 8192u              /* one 8 KiB NFS read */
#define KIB 1024u
#define MIB (1024u * 1024u)
#define FILE_A 1

/* ---- helpers ------------------------------------------------------------------------ */

static struct tbbt_raheur *sim(enum tbbt_raheur_kind kind, uint32_t cursors)
{
    struct tbbt_raheur_config c;
    char err[128];
    struct tbbt_raheur *h;

    tbbt_raheur_config_default(&c, kind);
    c.cursors = cursors;
    h = tbbt_raheur_new(&c, err, sizeof(err));
    assert_non_null(h);
    return h;
}

/* Feeds n reads (offsets in bytes, each B bytes) of one file; checks each seqCount. */
static void expect_seq(struct tbbt_raheur *h, uint64_t key, const uint64_t *off,
                       const uint32_t *want, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t got = tbbt_raheur_read(h, key, off[i], B, NULL);

        if (got != want[i])
            fail_msg("read %zu at offset %llu: seqCount %u, expected %u", i,
                     (unsigned long long)off[i], got, want[i]);
    }
}

#define EXPECT(h, key, offs, wants)                                                           \
    do {                                                                                      \
        G_STATIC_ASSERT(G_N_ELEMENTS(offs) == G_N_ELEMENTS(wants));                           \
        expect_seq((h), (key), (offs), (wants), G_N_ELEMENTS(offs));                          \
    } while (0)

/* ---- default heuristic -------------------------------------------------------------- */

/* A fresh file read from 0: seqCount starts at 4, +1 for the first read, +1 per read. */
static void test_default_sequential(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_DEFAULT, 1);
    const uint64_t off[] = {0, B, 2 * B, 3 * B, 4 * B};
    const uint32_t want[] = {5, 6, 7, 8, 9};

    EXPECT(h, FILE_A, off, want);
    assert_int_equal(tbbt_raheur_stats(h)->reads, 5);
    assert_int_equal(tbbt_raheur_stats(h)->readahead, 5);
    assert_int_equal(tbbt_raheur_stats(h)->fresh, 1);
    tbbt_raheur_free(h);
}

/* A fresh file read from elsewhere starts at 1, and its first read matches: 2. */
static void test_default_fresh_nonzero(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_DEFAULT, 1);
    const uint64_t off[] = {10 * B, 11 * B, 12 * B};
    const uint32_t want[] = {2, 3, 4};

    EXPECT(h, FILE_A, off, want);
    tbbt_raheur_free(h);
}

/* A gap: one miss drops to 1, a second to 0, then it climbs again by one. */
static void test_default_gap(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_DEFAULT, 1);
    const uint64_t off[] = {0, B, 2 * B, 100 * B, 101 * B, 102 * B, 300 * B, 500 * B, 501 * B};
    const uint32_t want[] = {5, 6, 7, 1, 2, 3, 1, 0, 1};
    struct tbbt_raheur_result res;

    EXPECT(h, FILE_A, off, want);
    /* 0 and 1 are at or below the threshold 1: no read-ahead; 2 triggers it. */
    tbbt_raheur_read(h, FILE_A, 900 * B, B, &res);
    assert_int_equal(res.seqcount, 0);
    assert_false(res.readahead);
    tbbt_raheur_read(h, FILE_A, 901 * B, B, &res);
    assert_int_equal(res.seqcount, 1);
    assert_false(res.readahead);
    tbbt_raheur_read(h, FILE_A, 902 * B, B, &res);
    assert_int_equal(res.seqcount, 2);
    assert_true(res.readahead);
    tbbt_raheur_free(h);
}

/* Two reads swapped within 64 KiB: the default heuristic falls to 0 and starts over. */
static void test_default_reorder(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_DEFAULT, 1);
    /* 24K before 16K: 24K misses (-> 1), 16K misses (-> 0), 32K misses (nextr 24K). */
    const uint64_t off[] = {0, B, 3 * B, 2 * B, 4 * B, 5 * B, 6 * B};
    const uint32_t want[] = {5, 6, 1, 0, 0, 1, 2};

    EXPECT(h, FILE_A, off, want);
    tbbt_raheur_free(h);
}

/* A read at offset 0 counts as sequential while seqCount > 0 (re-reading a file). */
static void test_default_offset0_rule(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_DEFAULT, 1);
    const uint64_t off[] = {0, B, 0, B, 50 * B, 90 * B, 0};
    const uint32_t want[] = {5, 6, 7, 8, 1, 0, 0};

    EXPECT(h, FILE_A, off, want);
    tbbt_raheur_free(h);
}

/* seqCount never passes 127 (IO_SEQMAX). */
static void test_default_cap(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_DEFAULT, 1);

    for (uint32_t i = 0; i < 300; i++) {
        uint32_t want = 5 + i > 127 ? 127 : 5 + i;

        assert_int_equal(tbbt_raheur_read(h, FILE_A, (uint64_t)i * B, B, NULL), want);
    }
    assert_int_equal(tbbt_raheur_stats(h)->hist[127], 300 - 122);
    tbbt_raheur_free(h);
}

/* A read that returned 0 bytes (past EOF) leaves the expected offset alone. */
static void test_default_zero_count(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_DEFAULT, 1);

    assert_int_equal(tbbt_raheur_read(h, FILE_A, 0, B, NULL), 5);
    assert_int_equal(tbbt_raheur_read(h, FILE_A, B, 0, NULL), 6);
    assert_int_equal(tbbt_raheur_read(h, FILE_A, B, B, NULL), 7);
    assert_int_equal(tbbt_raheur_read(h, FILE_A, 2 * B, B, NULL), 8);
    tbbt_raheur_free(h);
}

/* ---- SlowDown ----------------------------------------------------------------------- */

static void test_slowdown_sequential(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_SLOWDOWN, 1);
    const uint64_t off[] = {0, B, 2 * B, 3 * B};
    const uint32_t want[] = {5, 6, 7, 8};

    EXPECT(h, FILE_A, off, want);
    tbbt_raheur_free(h);
}

/* The same swap as test_default_reorder: within 64 KiB, seqCount is left alone. */
static void test_slowdown_reorder(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_SLOWDOWN, 1);
    const uint64_t off[] = {0, B, 3 * B, 2 * B, 4 * B, 5 * B, 6 * B};
    const uint32_t want[] = {5, 6, 6, 6, 6, 7, 8};

    EXPECT(h, FILE_A, off, want);
    tbbt_raheur_free(h);
}

/* Exactly 64 KiB away is "within"; 64 KiB + 1 byte is far and halves. */
static void test_slowdown_window_edge(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_SLOWDOWN, 1);

    assert_int_equal(tbbt_raheur_read(h, FILE_A, 0, B, NULL), 5);   /* nextr 8K */
    assert_int_equal(tbbt_raheur_read(h, FILE_A, B + 64 * KIB, B, NULL), 5);
    /* nextr 80K: 80K + 64K + 1 is beyond the window. */
    assert_int_equal(tbbt_raheur_read(h, FILE_A, 144 * KIB + 1, B, NULL), 2);
    tbbt_raheur_free(h);
}

/* A far jump halves: 8 -> 4 -> 2 -> 1 -> 0, and sequential reads climb from there. */
static void test_slowdown_far_jump(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_SLOWDOWN, 1);
    const uint64_t off[] = {0,       B,       2 * B,   3 * B,   1 * MIB, 3 * MIB,
                            3 * MIB + B, 9 * MIB, 20 * MIB, 40 * MIB, 60 * MIB};
    const uint32_t want[] = {5, 6, 7, 8, 4, 2, 3, 1, 0, 0, 0};

    EXPECT(h, FILE_A, off, want);
    tbbt_raheur_free(h);
}

/* A gap that is far: SlowDown keeps half where the default drops to 1. */
static void test_slowdown_gap(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_SLOWDOWN, 1);
    const uint64_t off[] = {0, B, 2 * B, 100 * B, 101 * B, 102 * B};
    const uint32_t want[] = {5, 6, 7, 3, 4, 5};

    EXPECT(h, FILE_A, off, want);
    tbbt_raheur_free(h);
}

static void test_slowdown_cap(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_SLOWDOWN, 1);
    uint32_t s = 0;

    for (uint32_t i = 0; i < 200; i++)
        s = tbbt_raheur_read(h, FILE_A, (uint64_t)i * B, B, NULL);
    assert_int_equal(s, 127);
    assert_int_equal(tbbt_raheur_read(h, FILE_A, 100 * MIB, B, NULL), 63);
    tbbt_raheur_free(h);
}

/* ---- cursors ------------------------------------------------------------------------ */

/* Stride 2 over a 1 MiB file: streams at block 0 and block 64, one block of each in turn. */
static const uint64_t stride2_off[] = {0,     512 * KIB,         B,     512 * KIB + B,
                                       2 * B, 512 * KIB + 2 * B, 3 * B, 512 * KIB + 3 * B};

static void test_cursor_stride2(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_CURSOR, 2);
    /* The first read opens cursor 0 like a fresh file (5); 512K opens cursor 1 at 1. */
    const uint32_t want[] = {5, 1, 6, 2, 7, 3, 8, 4};
    struct tbbt_raheur_result res;

    EXPECT(h, FILE_A, stride2_off, want);
    assert_int_equal(tbbt_raheur_stats(h)->new_cursors, 2);
    assert_int_equal(tbbt_raheur_stats(h)->recycled_cursors, 0);
    assert_int_equal(tbbt_raheur_stats(h)->readahead, 7);  /* all but cursor 1's first */
    tbbt_raheur_read(h, FILE_A, 4 * B, B, &res);
    assert_int_equal(res.cursor, 0);
    assert_false(res.new_cursor);
    tbbt_raheur_read(h, FILE_A, 512 * KIB + 4 * B, B, &res);
    assert_int_equal(res.cursor, 1);
    tbbt_raheur_free(h);
}

/* The same stride 2 defeats the one-offset heuristics. */
static void test_stride2_default_slowdown(void **state)
{
    (void)state;
    struct tbbt_raheur *d = sim(TBBT_RAHEUR_DEFAULT, 1);
    struct tbbt_raheur *s = sim(TBBT_RAHEUR_SLOWDOWN, 1);
    const uint32_t want_d[] = {5, 1, 0, 0, 0, 0, 0, 0};
    const uint32_t want_s[] = {5, 2, 1, 0, 0, 0, 0, 0};

    EXPECT(d, FILE_A, stride2_off, want_d);
    EXPECT(s, FILE_A, stride2_off, want_s);
    tbbt_raheur_free(d);
    tbbt_raheur_free(s);
}

/* A cursor follows its stream through small reorders (SlowDown rules per cursor). */
static void test_cursor_reorder(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_CURSOR, 2);
    const uint64_t off[] = {0, B, 3 * B, 2 * B, 4 * B, 5 * B};
    const uint32_t want[] = {5, 6, 6, 6, 6, 7};

    EXPECT(h, FILE_A, off, want);
    assert_int_equal(tbbt_raheur_stats(h)->new_cursors, 1);
    tbbt_raheur_free(h);
}

/*
 * Three streams (0, 1 MiB, 2 MiB) and a limit of 2 cursors: the third stream recycles
 * the least recently used cursor, which is the one the next read needed, so every read
 * finds no cursor (seqCount 1: no read-ahead).  With 3 cursors the streams climb.
 */
static void test_cursor_recycle(void **state)
{
    (void)state;
    const uint64_t off[] = {0,     1 * MIB,     2 * MIB,     B,
                            1 * MIB + B, 2 * MIB + B, 2 * B, 1 * MIB + 2 * B};
    const uint32_t want2[] = {5, 1, 1, 1, 1, 1, 1, 1};
    const uint32_t want3[] = {5, 1, 1, 6, 2, 2, 7, 3};
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_CURSOR, 2);
    struct tbbt_raheur_result res;

    EXPECT(h, FILE_A, off, want2);
    assert_int_equal(tbbt_raheur_stats(h)->new_cursors, 8);
    assert_int_equal(tbbt_raheur_stats(h)->recycled_cursors, 6);
    tbbt_raheur_free(h);

    h = sim(TBBT_RAHEUR_CURSOR, 3);
    EXPECT(h, FILE_A, off, want3);
    assert_int_equal(tbbt_raheur_stats(h)->recycled_cursors, 0);
    tbbt_raheur_free(h);

    /* Which cursor is recycled: the least recently used one. */
    h = sim(TBBT_RAHEUR_CURSOR, 2);
    tbbt_raheur_read(h, FILE_A, 0, B, &res);            /* cursor 0 */
    tbbt_raheur_read(h, FILE_A, 1 * MIB, B, &res);      /* cursor 1 */
    tbbt_raheur_read(h, FILE_A, B, B, &res);            /* cursor 0 again: 1 is LRU */
    assert_int_equal(res.cursor, 0);
    tbbt_raheur_read(h, FILE_A, 5 * MIB, B, &res);
    assert_true(res.recycled);
    assert_int_equal(res.cursor, 1);
    assert_int_equal(res.seqcount, 1);
    assert_int_equal(tbbt_raheur_read(h, FILE_A, 2 * B, B, NULL), 7);  /* cursor 0 kept */
    tbbt_raheur_free(h);
}

/* Random far reads open cursor after cursor, none of them above the threshold. */
static void test_cursor_random(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_CURSOR, 4);
    const uint64_t off[] = {100 * B, 7 * MIB, 3 * MIB, 11 * MIB, 1 * MIB, 13 * MIB};
    const uint32_t want[] = {2, 1, 1, 1, 1, 1};

    EXPECT(h, FILE_A, off, want);
    assert_int_equal(tbbt_raheur_stats(h)->readahead, 1);  /* only the file's first read */
    tbbt_raheur_free(h);
}

/* Cursors cap at 127 too. */
static void test_cursor_cap(void **state)
{
    (void)state;
    struct tbbt_raheur *h = sim(TBBT_RAHEUR_CURSOR, 2);
    uint32_t a = 0, b = 0;

    for (uint32_t i = 0; i < 200; i++) {
        a = tbbt_raheur_read(h, FILE_A, (uint64_t)i * B, B, NULL);
        b = tbbt_raheur_read(h, FILE_A, 64 * MIB + (uint64_t)i * B, B, NULL);
    }
    assert_int_equal(a, 127);
    assert_int_equal(b, 127);
    tbbt_raheur_free(h);
}

/* ---- the state table ---------------------------------------------------------------- */

/* 4 slots, 2 probes, key modulo 4: keys 0, 4, 8 share home slot 0 (window 0-1). */
static struct tbbt_nfsheur *small_table(enum tbbt_raheur_policy policy)
{
    return tbbt_nfsheur_new(4, 2, 1, policy, TBBT_RAHEUR_HASH_MOD);
}

static struct tbbt_nfsheur_lookup look(struct tbbt_nfsheur *t, uint64_t key)
{
    struct tbbt_nfsheur_lookup lk;

    tbbt_nfsheur_lookup(t, key, &lk);
    return lk;
}

static void test_table_lru(void **state)
{
    (void)state;
    struct tbbt_nfsheur *t = small_table(TBBT_RAHEUR_LRU);
    struct tbbt_nfsheur_lookup lk;

    assert_int_equal(tbbt_nfsheur_home(t, 8), 0);
    assert_int_equal(tbbt_nfsheur_home(t, 7), 3);
    lk = look(t, 2);            /* slot 2, outside window 0-1: the oldest entry of all */
    assert_false(lk.found);
    assert_false(lk.ejected);
    assert_int_equal(lk.slot, 2);
    lk = look(t, 0);            /* empty home slot */
    assert_int_equal(lk.slot, 0);
    assert_false(lk.ejected);
    lk = look(t, 4);            /* home 0 taken, next probed slot empty */
    assert_int_equal(lk.slot, 1);
    assert_false(lk.ejected);
    lk = look(t, 0);            /* found: no ejection; 0 is now more recent than 4 */
    assert_true(lk.found);
    assert_false(lk.ejected);
    lk = look(t, 8);            /* both probed slots full: the LRU of them (4) goes */
    assert_false(lk.found);
    assert_true(lk.ejected);
    assert_int_equal(lk.ejected_key, 4);
    assert_int_equal(lk.slot, 1);
    assert_true(tbbt_nfsheur_contains(t, 0));
    assert_true(tbbt_nfsheur_contains(t, 8));
    assert_false(tbbt_nfsheur_contains(t, 4));
    assert_true(tbbt_nfsheur_contains(t, 2));   /* never probed, never ejected */
    lk = look(t, 0);
    assert_true(lk.found);
    lk = look(t, 8);
    assert_true(lk.found);
    assert_false(lk.ejected);
    assert_int_equal(tbbt_nfsheur_ejections(t), 1);
    lk = look(t, 4);            /* back: 0 is now the LRU of the window */
    assert_true(lk.ejected);
    assert_int_equal(lk.ejected_key, 0);
    assert_int_equal(lk.slot, 0);
    /* Window 3-0 wraps around: 7 takes the empty slot 3. */
    lk = look(t, 7);
    assert_int_equal(lk.slot, 3);
    assert_false(lk.ejected);
    lk = look(t, 3);            /* window 3-0 full (7, 4): 4 was used before 7 */
    assert_true(lk.ejected);
    assert_int_equal(lk.ejected_key, 4);
    assert_int_equal(lk.slot, 0);
    assert_int_equal(tbbt_nfsheur_ejections(t), 3);
    assert_true(tbbt_nfsheur_contains(t, 2));
    tbbt_nfsheur_free(t);
}

/* Lookups that find their entry never eject, however often they repeat. */
static void test_table_hits_do_not_eject(void **state)
{
    (void)state;
    struct tbbt_nfsheur *t = small_table(TBBT_RAHEUR_LRU);

    for (int round = 0; round < 100; round++)
        for (uint64_t k = 0; k < 4; k++) {
            struct tbbt_nfsheur_lookup lk = look(t, k);

            assert_false(lk.ejected);
            assert_int_equal(lk.found, round > 0);
        }
    assert_int_equal(tbbt_nfsheur_ejections(t), 0);
    tbbt_nfsheur_free(t);
}

/*
 * FreeBSD 4's loop: nh_use decides, and the slot just past the window is a candidate.
 * Key 8 lands in slot 2 (use 0 beats the probed 78 and 80), outside its own window,
 * so its next lookup misses and ejects key 0 (use 77, the lowest then).
 */
static void test_table_usecount(void **state)
{
    (void)state;
    struct tbbt_nfsheur *t = small_table(TBBT_RAHEUR_USECOUNT);
    struct tbbt_nfsheur_lookup lk;

    lk = look(t, 0);
    assert_int_equal(lk.slot, 0);
    assert_int_equal(tbbt_nfsheur_slot(t, 0)->use, 64 + 16);
    lk = look(t, 4);
    assert_int_equal(lk.slot, 1);
    assert_int_equal(tbbt_nfsheur_slot(t, 0)->use, 79);
    lk = look(t, 8);
    assert_int_equal(lk.slot, 2);
    assert_false(lk.ejected);
    lk = look(t, 8);
    assert_false(lk.found);
    assert_true(lk.ejected);
    assert_int_equal(lk.ejected_key, 0);
    assert_int_equal(lk.slot, 0);
    assert_int_equal(tbbt_nfsheur_ejections(t), 1);
    tbbt_nfsheur_free(t);
}

/* An ejected file loses its state: its next read starts fresh (seqCount 2, not 9). */
static void test_ejected_file_starts_fresh(void **state)
{
    (void)state;
    struct tbbt_raheur_config c;
    struct tbbt_raheur_result res;
    struct tbbt_raheur *h;

    tbbt_raheur_config_default(&c, TBBT_RAHEUR_DEFAULT);
    c.table_size = 4;
    c.probes = 2;
    c.hash = TBBT_RAHEUR_HASH_MOD;
    h = tbbt_raheur_new(&c, NULL, 0);
    assert_non_null(h);
    for (uint64_t i = 0; i < 4; i++)
        tbbt_raheur_read(h, 0, i * B, B, NULL);          /* file 0: 5 6 7 8 */
    tbbt_raheur_read(h, 4, 0, B, &res);                   /* file 4 takes slot 1 */
    assert_false(res.ejected);
    tbbt_raheur_read(h, 8, 0, B, &res);                   /* file 8 ejects 0 (LRU) */
    assert_true(res.ejected);
    assert_int_equal(res.ejected_key, 0);
    tbbt_raheur_read(h, 0, 4 * B, B, &res);               /* 0 again: ejects 4 */
    assert_true(res.fresh);
    assert_int_equal(res.seqcount, 2);
    assert_int_equal(res.ejected_key, 4);
    assert_int_equal(tbbt_raheur_read(h, 0, 5 * B, B, &res), 3);
    assert_false(res.fresh);
    assert_int_equal(tbbt_raheur_stats(h)->ejections, 2);
    assert_int_equal(tbbt_raheur_stats(h)->fresh, 4);
    tbbt_raheur_free(h);
}

/* ---- configuration and names -------------------------------------------------------- */

static void test_config(void **state)
{
    (void)state;
    struct tbbt_raheur_config c;
    char err[128];

    tbbt_raheur_config_default(&c, TBBT_RAHEUR_CURSOR);
    assert_int_equal(c.table_size, 64);
    assert_int_equal(c.probes, 4);
    assert_int_equal(c.threshold, 1);
    assert_int_equal(tbbt_raheur_config_check(&c, err, sizeof(err)), 0);
    c.probes = 65;
    assert_int_equal(tbbt_raheur_config_check(&c, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--probes"));
    c.probes = 4;
    c.table_size = 0;
    assert_int_equal(tbbt_raheur_config_check(&c, err, sizeof(err)), -1);
    c.table_size = 64;
    c.cursors = 0;
    assert_int_equal(tbbt_raheur_config_check(&c, err, sizeof(err)), -1);
    c.cursors = 8;
    c.threshold = 127;
    assert_int_equal(tbbt_raheur_config_check(&c, err, sizeof(err)), -1);
    assert_null(tbbt_raheur_new(&c, err, sizeof(err)));
    assert_int_equal(tbbt_raheur_kind_by_name("slowdown"), TBBT_RAHEUR_SLOWDOWN);
    assert_int_equal(tbbt_raheur_kind_by_name("fast"), -1);
    assert_string_equal(tbbt_raheur_kind_name(TBBT_RAHEUR_CURSOR), "cursor");
    assert_int_equal(tbbt_raheur_policy_by_name("usecount"), TBBT_RAHEUR_USECOUNT);
    assert_int_equal(tbbt_raheur_hash_by_name("mod"), TBBT_RAHEUR_HASH_MOD);
    tbbt_raheur_free(NULL);
    tbbt_nfsheur_free(NULL);
}

/* A higher threshold: the same sequence triggers read-ahead only above it. */
static void test_threshold(void **state)
{
    (void)state;
    struct tbbt_raheur_config c;
    struct tbbt_raheur *h;

    tbbt_raheur_config_default(&c, TBBT_RAHEUR_DEFAULT);
    c.threshold = 6;
    h = tbbt_raheur_new(&c, NULL, 0);
    for (uint64_t i = 0; i < 4; i++)        /* 5 6 7 8 */
        tbbt_raheur_read(h, FILE_A, i * B, B, NULL);
    assert_int_equal(tbbt_raheur_stats(h)->readahead, 2);
    assert_int_equal(tbbt_raheur_stats(h)->hist[5], 1);
    assert_int_equal(tbbt_raheur_stats(h)->hist[8], 1);
    tbbt_raheur_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_sequential),
        cmocka_unit_test(test_default_fresh_nonzero),
        cmocka_unit_test(test_default_gap),
        cmocka_unit_test(test_default_reorder),
        cmocka_unit_test(test_default_offset0_rule),
        cmocka_unit_test(test_default_cap),
        cmocka_unit_test(test_default_zero_count),
        cmocka_unit_test(test_slowdown_sequential),
        cmocka_unit_test(test_slowdown_reorder),
        cmocka_unit_test(test_slowdown_window_edge),
        cmocka_unit_test(test_slowdown_far_jump),
        cmocka_unit_test(test_slowdown_gap),
        cmocka_unit_test(test_slowdown_cap),
        cmocka_unit_test(test_cursor_stride2),
        cmocka_unit_test(test_stride2_default_slowdown),
        cmocka_unit_test(test_cursor_reorder),
        cmocka_unit_test(test_cursor_recycle),
        cmocka_unit_test(test_cursor_random),
        cmocka_unit_test(test_cursor_cap),
        cmocka_unit_test(test_table_lru),
        cmocka_unit_test(test_table_hits_do_not_eject),
        cmocka_unit_test(test_table_usecount),
        cmocka_unit_test(test_ejected_file_starts_fresh),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_threshold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
