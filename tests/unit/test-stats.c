/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of tbbt-stats (src/stats/): each analysis fed a small in-memory record
 * stream whose numbers are worked out by hand in the comments: op mix and clients, rate
 * bins, sequential runs, temperature (a file read twice fully is at 2.0), hottest-set
 * overlap and persistence, sharing, the concurrency simulator on the TBBT paper's Table 3
 * sequences, and the latency and window options.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "stats/stats.h"

#define MS 1000000ull
#define SEC 1000000000ull
#define T0 (1700000000ull * SEC)

enum { P_GETATTR = 1, P_LOOKUP = 3, P_READ = 6, P_WRITE = 7, P_CREATE = 8 };

/* A successful NFSv3 record of proc at T0 + call (reply 1 ms later). */
static struct tbbt_trace_rec *mkrec(struct tbbt_trace_rec *r, int proc, uint64_t call)
{
    tbbt_trace_rec_clear(r);
    r->call_ns = T0 + call;
    r->reply_ns = T0 + call + MS;
    r->prog = TBBT_PROG_NFS3;
    r->proc = (uint8_t)proc;
    r->flags = TBBT_RF_REPLY | TBBT_RF_STATUS;
    r->rpc_stat = TBBT_RPC_SUCCESS;
    return r;
}

static void set_fh(struct tbbt_trace_rec *r, uint32_t fh, uint64_t id)
{
    r->fh = fh;
    TBBT_SET(r, TBBT_F_FH);
    if (id) {
        r->id = id;
        TBBT_SET(r, TBBT_F_ID);
    }
}

static void set_size(struct tbbt_trace_rec *r, uint64_t size)
{
    r->obj_attr.type = 1;
    r->obj_attr.size = size;
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
}

/* READ/WRITE of fh at offset, moving n bytes (res_count). */
static struct tbbt_trace_rec *io(struct tbbt_trace_rec *r, bool write, uint64_t call,
                                 uint32_t fh, uint64_t off, uint32_t n)
{
    mkrec(r, write ? P_WRITE : P_READ, call);
    set_fh(r, fh, fh + 100);
    r->offset = off;
    r->count = n;
    r->res_count = n;
    TBBT_SET(r, TBBT_F_OFFSET);
    TBBT_SET(r, TBBT_F_COUNT);
    TBBT_SET(r, TBBT_F_RES_COUNT);
    return r;
}

struct fx {
    struct tbbt_stats_opts o;
    struct tbbt_trace_rec r;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    tbbt_stats_opts_init(&f->o);
    f->o.sim_ops = 0;
    tbbt_trace_rec_init(&f->r);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    tbbt_trace_rec_fini(&f->r);
    free(f);
    return 0;
}

/* 3 GETATTR + 1 READ (100 bytes) from A, 2 WRITEs (50 bytes each) from B. */
static void test_mix_clients(void **state)
{
    struct fx *f = *state;
    f->o.interval_s = 1;
    f->o.interval_auto = false;
    struct tbbt_stats *st = tbbt_stats_new(&f->o);
    uint64_t at[] = {0, 500 * MS, 1200 * MS};
    for (int i = 0; i < 3; i++) {
        mkrec(&f->r, P_GETATTR, at[i]);
        set_fh(&f->r, 1, 0);
        tbbt_stats_add(st, &f->r, "10.0.0.1");
    }
    tbbt_stats_add(st, io(&f->r, false, 2500 * MS, 1, 0, 100), "10.0.0.1");
    tbbt_stats_add(st, io(&f->r, true, 2600 * MS, 2, 0, 50), "10.0.0.2");
    tbbt_stats_add(st, io(&f->r, true, 2700 * MS, 2, 50, 50), "10.0.0.2");
    tbbt_stats_finish(st);

    assert_int_equal(st->records, 6);
    assert_int_equal(st->mix[TBBT_PROG_NFS3][P_GETATTR], 3);
    assert_int_equal(st->mix[TBBT_PROG_NFS3][P_READ], 1);
    assert_int_equal(st->mix[TBBT_PROG_NFS3][P_WRITE], 2);
    /* Bins of 1 s from the first record: 0, 0.5 | 1.2 | 2.5, 2.6, 2.7. */
    assert_int_equal(st->bins->len, 3);
    assert_int_equal(g_array_index(st->bins, uint64_t, 0), 2);
    assert_int_equal(g_array_index(st->bins, uint64_t, 1), 1);
    assert_int_equal(g_array_index(st->bins, uint64_t, 2), 3);
    assert_int_equal(st->clients->len, 2);
    const struct tbbt_stats_client *a = &g_array_index(st->clients, struct tbbt_stats_client, 0);
    const struct tbbt_stats_client *b = &g_array_index(st->clients, struct tbbt_stats_client, 1);
    assert_string_equal(a->addr, "10.0.0.1");
    assert_int_equal(a->ops, 4);
    assert_int_equal(a->reads, 1);
    assert_int_equal(a->bytes_read, 100);
    assert_int_equal(b->writes, 2);
    assert_int_equal(b->bytes_written, 100);

    char *json = tbbt_stats_json(st, "mem");
    assert_non_null(strstr(json, "\"op_mix\""));
    assert_non_null(strstr(json, "\"name\":\"getattr\",\"prog\":\"v3\""));
    g_free(json);
    tbbt_stats_free(st);
}

/* The automatic interval doubles until fewer than 2000 intervals cover the span. */
static void test_rate_auto(void **state)
{
    struct fx *f = *state;
    struct tbbt_stats *st = tbbt_stats_new(&f->o);
    tbbt_stats_add(st, mkrec(&f->r, P_GETATTR, 0), "c");
    tbbt_stats_add(st, mkrec(&f->r, P_GETATTR, 5000 * SEC), "c");
    tbbt_stats_finish(st);
    /* 5000 s: 1 s -> 5000 bins, 2 s -> 2500, 4 s -> 1250 (bin 1250 holds the last). */
    assert_true(st->interval_s == 4);
    assert_int_equal(st->bins->len, 1251);
    assert_int_equal(g_array_index(st->bins, uint64_t, 1250), 1);
    tbbt_stats_free(st);
}

/*
 * Reads of file 1: (0,100) (100,100) (200,100) (0,100) (500,50); a write of file 1 and a
 * read of file 2 in between do not break the read run.  Runs: [3 ops, 300 B], [1, 100],
 * [1, 50]; 2 of 5 accesses sequential; 2 runs start at offset 0.
 */
static void test_seq_runs(void **state)
{
    struct fx *f = *state;
    struct tbbt_stats *st = tbbt_stats_new(&f->o);
    tbbt_stats_add(st, io(&f->r, false, 0, 1, 0, 100), "c");
    tbbt_stats_add(st, io(&f->r, false, 1 * MS, 1, 100, 100), "c");
    tbbt_stats_add(st, io(&f->r, true, 2 * MS, 1, 4096, 10), "c");
    tbbt_stats_add(st, io(&f->r, false, 3 * MS, 2, 7, 1), "c");
    tbbt_stats_add(st, io(&f->r, false, 4 * MS, 1, 200, 100), "c");
    tbbt_stats_add(st, io(&f->r, false, 5 * MS, 1, 0, 100), "c");
    tbbt_stats_add(st, io(&f->r, false, 6 * MS, 1, 500, 50), "c");
    /* A failed read is no access. */
    io(&f->r, false, 7 * MS, 1, 550, 50);
    f->r.status = 5;
    tbbt_stats_add(st, &f->r, "c");
    tbbt_stats_finish(st);

    const struct tbbt_stats_seq *q = &st->seq_read;
    /* file 1: 5 reads; file 2: 1 read (a run of 1 byte, not from 0). */
    assert_int_equal(q->accesses, 6);
    assert_int_equal(q->sequential, 2);
    assert_int_equal(q->runs, 4);
    assert_int_equal(q->runs_from_zero, 2);
    assert_int_equal(q->bytes, 451);
    assert_int_equal(q->max_run_ops, 3);
    assert_int_equal(q->max_run_bytes, 300);
    assert_int_equal(q->ops_hist[0], 3);        /* runs of 1 */
    assert_int_equal(q->ops_hist_acc[0], 3);
    assert_int_equal(q->ops_hist[1], 1);        /* runs of 2-3 */
    assert_int_equal(q->ops_hist_acc[1], 3);
    assert_int_equal(q->bytes_hist[8], 1);      /* 300 in [256, 512) */
    assert_int_equal(q->bytes_hist[6], 1);      /* 100 in [64, 128) */
    assert_int_equal(q->bytes_hist[5], 1);      /* 50 in [32, 64) */
    assert_int_equal(q->bytes_hist[0], 1);      /* 1 in [0, 2) */
    assert_int_equal(st->seq_write.accesses, 1);
    assert_int_equal(st->seq_write.runs, 1);
    assert_int_equal(st->seq_write.runs_from_zero, 0);
    tbbt_stats_free(st);
}

/*
 * File 1 (size 1000 from a GETATTR reply) read fully twice in 500-byte reads: 2.0.
 * File 2 (size 2000 from its READ reply) read 500 bytes: 0.25.  File 3 has no size.
 */
static void test_temperature(void **state)
{
    struct fx *f = *state;
    struct tbbt_stats *st = tbbt_stats_new(&f->o);
    mkrec(&f->r, P_GETATTR, 0);
    set_fh(&f->r, 1, 0);
    set_size(&f->r, 1000);
    tbbt_stats_add(st, &f->r, "c");
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < 2; k++)
            tbbt_stats_add(st, io(&f->r, false, (uint64_t)(1 + pass * 2 + k) * MS, 1,
                                  (uint64_t)k * 500, 500), "c");
    io(&f->r, false, 10 * MS, 2, 0, 500);
    set_size(&f->r, 2000);
    tbbt_stats_add(st, &f->r, "c");
    tbbt_stats_add(st, io(&f->r, false, 11 * MS, 3, 0, 10), "c");
    tbbt_stats_finish(st);

    assert_int_equal(st->temps->len, 2);
    assert_int_equal(st->temp_unsized, 1);
    const struct tbbt_stats_temp *t0 = &g_array_index(st->temps, struct tbbt_stats_temp, 0);
    const struct tbbt_stats_temp *t1 = &g_array_index(st->temps, struct tbbt_stats_temp, 1);
    assert_int_equal(t0->fh, 1);
    assert_true(fabs(t0->temp - 2.0) < 1e-12);
    assert_int_equal(t0->bytes, 2000);
    assert_int_equal(t1->fh, 2);
    assert_true(fabs(t1->temp - 0.25) < 1e-12);
    tbbt_stats_free(st);
}

/* Reads n bytes of fh (size 100) at t seconds. */
static void hot_read(struct tbbt_stats *st, struct tbbt_trace_rec *r, uint64_t t, uint32_t fh,
                     uint32_t n)
{
    io(r, false, t * SEC, fh, 0, n);
    set_size(r, 100);
    tbbt_stats_add(st, r, "c");
}

/*
 * Period 10 s, top 2 and top 50%.  Period 0: A 300, B 200, C 100 bytes (sizes 100): top
 * {A, B}.  Period 1: A 400, C 500, D 100: ranked C, A, D, top 2 = top 50% (ceil 1.5) =
 * {C, A}: overlap |{C,A} ∩ {A,B}| / 2 = 0.5; persistence 400 / 1000 = 0.4.
 */
static void test_hot_set(void **state)
{
    struct fx *f = *state;
    f->o.period_s = 10;
    f->o.top_k = 2;
    f->o.top_percent = 50;
    struct tbbt_stats *st = tbbt_stats_new(&f->o);
    hot_read(st, &f->r, 0, 1, 100);
    hot_read(st, &f->r, 1, 1, 200);
    hot_read(st, &f->r, 2, 2, 200);
    hot_read(st, &f->r, 3, 3, 100);
    hot_read(st, &f->r, 12, 1, 400);
    hot_read(st, &f->r, 13, 3, 500);
    hot_read(st, &f->r, 14, 4, 100);
    tbbt_stats_finish(st);

    assert_int_equal(st->periods_ranked, 2);
    assert_int_equal(st->hot_pairs->len, 1);
    const struct tbbt_stats_hot_pair *p =
        &g_array_index(st->hot_pairs, struct tbbt_stats_hot_pair, 0);
    assert_int_equal(p->period, 0);
    assert_int_equal(p->next, 1);
    assert_int_equal(p->k_prev, 2);
    assert_int_equal(p->p_prev, 2);
    assert_true(fabs(p->overlap_k - 0.5) < 1e-12);
    assert_true(fabs(p->overlap_p - 0.5) < 1e-12);
    assert_true(fabs(p->persist_k - 0.4) < 1e-12);
    assert_true(fabs(p->persist_p - 0.4) < 1e-12);
    tbbt_stats_free(st);
}

/*
 * Clients X, Y.  F1 read by both: read-shared.  F2 written by X, read by Y: write-shared.
 * F3 read by X, GETATTR by Y: shared, not data-shared.  F4 written by X only: neither.
 */
static void test_sharing(void **state)
{
    struct fx *f = *state;
    struct tbbt_stats *st = tbbt_stats_new(&f->o);
    const char *X = "10.0.0.1", *Y = "10.0.0.2";
    struct {
        bool write;
        uint32_t fh;
        const char *c;
    } acc[] = {{false, 1, X}, {false, 1, Y}, {true, 2, X}, {false, 2, Y}, {false, 3, X},
               {true, 4, X}, {true, 4, X}};
    for (size_t i = 0; i < G_N_ELEMENTS(acc); i++) {
        io(&f->r, acc[i].write, i * MS, acc[i].fh, 0, 10);
        set_size(&f->r, 10);
        tbbt_stats_add(st, &f->r, acc[i].c);
    }
    mkrec(&f->r, P_GETATTR, 100 * MS);
    set_fh(&f->r, 3, 0);
    tbbt_stats_add(st, &f->r, Y);
    tbbt_stats_finish(st);

    const struct tbbt_stats_share *s = &st->share;
    assert_int_equal(s->objects, 4);
    assert_int_equal(s->shared, 3);
    assert_int_equal(s->files, 4);
    assert_int_equal(s->files_shared, 3);
    assert_int_equal(s->data_files, 4);
    assert_int_equal(s->read_shared, 1);
    assert_int_equal(s->write_shared, 1);
    assert_int_equal(s->bytes_read_shared, 20);
    assert_int_equal(s->bytes_write_shared, 20);
    tbbt_stats_free(st);
}

/* CREATE A in directory 1 (A = 2) at 0 ms, reply 1 ms; then WRITE of obj at 2 ms. */
static void table3(struct tbbt_trace_rec *c, struct tbbt_trace_rec *w, uint64_t write_obj)
{
    mkrec(c, P_CREATE, 0);
    set_fh(c, 1, 1);
    tbbt_trace_rec_set_str(c, &c->name, "A", 1);
    TBBT_SET(c, TBBT_F_NAME);
    c->id_obj = 2;
    TBBT_SET(c, TBBT_F_ID_OBJ);
    c->new_fh = 2;
    TBBT_SET(c, TBBT_F_NEW_FH);
    io(w, true, 2 * MS, (uint32_t)write_obj, 0, 10);
    w->id = write_obj;
}

static double sim(enum tbbt_concsim_policy p, uint32_t W, struct tbbt_trace_rec *a,
                  uint64_t la, struct tbbt_trace_rec *b, uint64_t lb)
{
    struct tbbt_concsim *s = tbbt_concsim_new(p, W, W == 16 ? 2 : 0);
    tbbt_concsim_add(s, a, la);
    tbbt_concsim_add(s, b, lb);
    tbbt_concsim_finish(s);
    double t = tbbt_concsim_throughput(s);
    assert_int_equal(tbbt_concsim_ops(s), 2);
    tbbt_concsim_free(s);
    return t;
}

/*
 * TBBT paper Table 3 with create latency 3 ms and write latency 1 ms on the tested
 * server.  Sequence 2 (write B): conservative waits for the create's reply (its trace
 * reply came before the write's call): 0..3 create, 3..4 write = sequence 3, 2 ops in
 * 4 ms = 500 ops/s; fsdep issues the write at once (no shared object) = sequence 4,
 * done at 3 ms = 666.7 ops/s.  Sequence 1 (write A): fsdep must wait too: 500 ops/s.
 * Window 1: one request at a time, 500 ops/s for both.
 */
static void test_concsim_table3(void **state)
{
    (void)state;
    struct tbbt_trace_rec c, w;
    tbbt_trace_rec_init(&c);
    tbbt_trace_rec_init(&w);
    const uint64_t LC = 3 * MS, LW = 1 * MS;

    table3(&c, &w, 3);  /* sequence 2 */
    assert_true(fabs(sim(TBBT_CONCSIM_CONSERVATIVE, 16, &c, LC, &w, LW) - 500) < 1e-6);
    assert_true(fabs(sim(TBBT_CONCSIM_FSDEP, 16, &c, LC, &w, LW) - 2000.0 / 3) < 1e-6);
    assert_true(fabs(sim(TBBT_CONCSIM_FSDEP, 1, &c, LC, &w, LW) - 500) < 1e-6);
    assert_true(fabs(sim(TBBT_CONCSIM_CONSERVATIVE, 1, &c, LC, &w, LW) - 500) < 1e-6);

    table3(&c, &w, 2);  /* sequence 1 */
    assert_true(fabs(sim(TBBT_CONCSIM_CONSERVATIVE, 16, &c, LC, &w, LW) - 500) < 1e-6);
    assert_true(fabs(sim(TBBT_CONCSIM_FSDEP, 16, &c, LC, &w, LW) - 500) < 1e-6);

    /*
     * Two overlapping READs of one file in the trace (calls 0 and 0.5 ms, replies 1 and
     * 1.5 ms), 1 ms each: conservative sends both at once (no reply came before the second
     * call) and so does fsdep (two readers): 2 ops in 1 ms.
     */
    io(&c, false, 0, 5, 0, 10);
    io(&w, false, MS / 2, 5, 10, 10);
    assert_true(fabs(sim(TBBT_CONCSIM_CONSERVATIVE, 2, &c, MS, &w, MS) - 2000) < 1e-6);
    assert_true(fabs(sim(TBBT_CONCSIM_FSDEP, 2, &c, MS, &w, MS) - 2000) < 1e-6);
    tbbt_trace_rec_fini(&c);
    tbbt_trace_rec_fini(&w);
}

/* The accumulator feeds its simulators the first sim_ops NFS records only. */
static void test_concsim_in_stats(void **state)
{
    struct fx *f = *state;
    f->o.sim_ops = 2;
    f->o.n_windows = 0;
    char err[128];
    assert_int_equal(tbbt_stats_parse_windows(&f->o, "16,1", err, sizeof(err)), 0);
    assert_int_equal(tbbt_stats_lat_parse(&f->o.lat, "create=3000,write=1000", err,
                                          sizeof(err)), 0);
    struct tbbt_stats *st = tbbt_stats_new(&f->o);
    struct tbbt_trace_rec w;
    tbbt_trace_rec_init(&w);
    table3(&f->r, &w, 3);
    tbbt_stats_add(st, &f->r, "c");
    tbbt_stats_add(st, &w, "c");
    tbbt_stats_add(st, io(&w, false, 10 * MS, 9, 0, 1), "c");   /* past --sim-ops */
    tbbt_stats_finish(st);
    assert_int_equal(st->sim_fed, 2);
    assert_int_equal(st->o.windows[0], 1);
    assert_true(fabs(tbbt_concsim_throughput(st->sims[0][1]) - 500) < 1e-6);
    assert_true(fabs(tbbt_concsim_throughput(st->sims[1][1]) - 2000.0 / 3) < 1e-6);
    assert_true(fabs(tbbt_concsim_throughput(st->sims[1][0]) - 500) < 1e-6);
    tbbt_trace_rec_fini(&w);
    tbbt_stats_free(st);
}

static void test_latency_options(void **state)
{
    (void)state;
    struct tbbt_stats_lat l;
    char err[128];
    tbbt_stats_lat_init(&l, 1000);
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS3, P_READ), 3100000);
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS3, 4), 1000000);   /* access */
    /* default first, then bare names (v3 and v2), then prefixed ones. */
    assert_int_equal(tbbt_stats_lat_parse(&l, "v2.read=50,getattr=200,default=10", err,
                                          sizeof(err)), 0);
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS3, P_GETATTR), 200000);
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS2, P_GETATTR), 200000);
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS2, 6), 50000);     /* v2 read */
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS3, P_READ), 10000);
    assert_int_equal(tbbt_stats_lat_parse(&l, "frobnicate=1", err, sizeof(err)), -EINVAL);
    assert_int_equal(tbbt_stats_lat_parse(&l, "read=x", err, sizeof(err)), -EINVAL);
    assert_int_equal(tbbt_stats_lat_parse(&l, "read=-1", err, sizeof(err)), -EINVAL);

    const char *doc = "{\"run\":{\"order\":\"fsdep\",\"x\":[1,2,{\"a\":null}]},"
                      "\"latency\":{\"all\":{\"count\":3,\"mean_us\":5},"
                      "\"procedures\":{\"read\":{\"count\":2,\"mean_us\":123.5,\"p50_us\":null},"
                      "\"v2.write\":{\"count\":1,\"mean_us\":7},\"other\":{\"mean_us\":1}}}}";
    assert_int_equal(tbbt_stats_lat_from_json_text(&l, doc, strlen(doc), err, sizeof(err)), 0);
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS3, P_READ), 123500);
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS2, 6), 123500);
    assert_int_equal(tbbt_stats_lat_get(&l, TBBT_PROG_NFS2, 8), 7000);      /* v2 write */
    const char *bad = "{\"procedures\":{\"read\":{\"mean_us\":1}";
    assert_int_equal(tbbt_stats_lat_from_json_text(&l, bad, strlen(bad), err, sizeof(err)),
                     -EINVAL);
    const char *none = "{\"a\":[1,2,3]}";
    assert_int_equal(tbbt_stats_lat_from_json_text(&l, none, strlen(none), err, sizeof(err)),
                     -EINVAL);
}

static void test_windows_option(void **state)
{
    struct fx *f = *state;
    char err[128];
    assert_int_equal(tbbt_stats_parse_windows(&f->o, "4,1,4,2", err, sizeof(err)), 0);
    assert_int_equal(f->o.n_windows, 3);
    assert_int_equal(f->o.windows[0], 1);
    assert_int_equal(f->o.windows[2], 4);
    assert_int_equal(tbbt_stats_parse_windows(&f->o, "0", err, sizeof(err)), -EINVAL);
    assert_int_equal(tbbt_stats_parse_windows(&f->o, "2,x", err, sizeof(err)), -EINVAL);
    assert_int_equal(tbbt_stats_parse_windows(&f->o, "", err, sizeof(err)), -EINVAL);
    assert_true(tbbt_stats_auto_interval(100) == 1);
    assert_true(tbbt_stats_auto_interval(5000) == 5);
    assert_true(fabs(tbbt_stats_auto_interval(2) - 0.05) < 1e-12);
    assert_true(tbbt_stats_auto_period(600) == 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mix_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rate_auto, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seq_runs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_temperature, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hot_set, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sharing, setup, teardown),
        cmocka_unit_test(test_concsim_table3),
        cmocka_unit_test_setup_teardown(test_concsim_in_stats, setup, teardown),
        cmocka_unit_test(test_latency_options),
        cmocka_unit_test_setup_teardown(test_windows_option, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
