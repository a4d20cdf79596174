/* SPDX-License-Identifier: MIT */
/*
 * The tbbt-stats accumulator (stats.h): options, the file table, the per-record dispatch
 * to each analysis, reading a trace file, and the automatic interval and period.  The
 * analyses themselves live one per file (mix.c, seq.c, temp.c, share.c, concsim.c).
 */
#include "stats/stats-int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "util/util.h"

void tbbt_stats_opts_init(struct tbbt_stats_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->interval_s = 1;
    o->interval_auto = true;
    o->period_s = 60;
    o->top_k = 10;
    o->top_percent = 10;
    o->sim_ops = 1000000;
    for (unsigned i = 0; i <= 12; i++)
        o->windows[o->n_windows++] = 1u << i;
    tbbt_stats_lat_init(&o->lat, 1000);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int tbbt_stats_parse_windows(struct tbbt_stats_opts *o, const char *list, char *err,
                             size_t errlen)
{
    char **items = g_strsplit(list, ",", -1);
    unsigned n = 0;
    int rc = 0;
    for (int i = 0; items[i] && rc == 0; i++) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(items[i], &end, 10);
        if (errno || end == items[i] || *end || items[i][0] == '-' || v < 1 ||
            v > TBBT_STATS_WINDOW_MAX) {
            tbbt_errbuf(err, errlen, "bad window '%s' (1..%u)", items[i], TBBT_STATS_WINDOW_MAX);
            rc = -EINVAL;
        } else if (n == TBBT_STATS_MAX_WINDOWS) {
            tbbt_errbuf(err, errlen, "at most %d windows", TBBT_STATS_MAX_WINDOWS);
            rc = -EINVAL;
        } else {
            o->windows[n++] = (uint32_t)v;
        }
    }
    g_strfreev(items);
    if (rc == 0 && n == 0) {
        tbbt_errbuf(err, errlen, "empty window list");
        rc = -EINVAL;
    }
    if (rc < 0)
        return rc;
    qsort(o->windows, n, sizeof(o->windows[0]), cmp_u32);
    unsigned k = 0;
    for (unsigned i = 0; i < n; i++)
        if (k == 0 || o->windows[k - 1] != o->windows[i])
            o->windows[k++] = o->windows[i];
    o->n_windows = k;
    return 0;
}

static void file_free(gpointer p)
{
    g_free(p);
}

struct tbbt_stats *tbbt_stats_new(const struct tbbt_stats_opts *o)
{
    struct tbbt_stats *st = g_new0(struct tbbt_stats, 1);
    st->o = *o;
    st->interval_s = o->interval_s;
    st->bins = g_array_new(FALSE, TRUE, sizeof(uint64_t));
    st->clients = g_array_new(FALSE, TRUE, sizeof(struct tbbt_stats_client));
    st->client_ix = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    st->files = g_ptr_array_new_with_free_func(file_free);
    st->touched = g_ptr_array_new();
    st->top_k = g_ptr_array_new();
    st->top_p = g_ptr_array_new();
    st->hot_pairs = g_array_new(FALSE, TRUE, sizeof(struct tbbt_stats_hot_pair));
    st->temps = g_array_new(FALSE, TRUE, sizeof(struct tbbt_stats_temp));
    for (unsigned w = 0; o->sim_ops && w < o->n_windows; w++) {
        st->sims[0][w] = tbbt_concsim_new(TBBT_CONCSIM_CONSERVATIVE, o->windows[w], o->sim_ops);
        st->sims[1][w] = tbbt_concsim_new(TBBT_CONCSIM_FSDEP, o->windows[w], o->sim_ops);
    }
    return st;
}

void tbbt_stats_free(struct tbbt_stats *st)
{
    if (!st)
        return;
    g_array_free(st->bins, TRUE);
    g_array_free(st->clients, TRUE);
    g_hash_table_destroy(st->client_ix);
    g_ptr_array_free(st->touched, TRUE);
    g_ptr_array_free(st->top_k, TRUE);
    g_ptr_array_free(st->top_p, TRUE);
    g_ptr_array_free(st->files, TRUE);
    g_array_free(st->hot_pairs, TRUE);
    g_array_free(st->temps, TRUE);
    for (unsigned w = 0; w < TBBT_STATS_MAX_WINDOWS; w++) {
        tbbt_concsim_free(st->sims[0][w]);
        tbbt_concsim_free(st->sims[1][w]);
    }
    g_free(st);
}

struct tbbt_stats_file *tbbt__stats_file(struct tbbt_stats *st, uint32_t ref)
{
    if (ref >= st->files->len)
        g_ptr_array_set_size(st->files, ref + 1);
    struct tbbt_stats_file *f = g_ptr_array_index(st->files, ref);
    if (!f) {
        f = g_new0(struct tbbt_stats_file, 1);
        f->fh = ref;
        g_ptr_array_index(st->files, ref) = f;
        st->n_files++;
    }
    return f;
}

uint64_t tbbt_stats_rec_time(const struct tbbt_trace_rec *rec)
{
    if ((rec->flags & TBBT_RF_NO_CALL) || rec->call_ns == 0)
        return rec->reply_ns;
    return rec->call_ns;
}

bool tbbt_stats_rec_failed(const struct tbbt_trace_rec *rec)
{
    if ((rec->flags & TBBT_RF_REPLY) && rec->rpc_stat != TBBT_RPC_SUCCESS)
        return true;
    return (rec->flags & TBBT_RF_STATUS) && rec->status != 0;
}

uint64_t tbbt_stats_xfer_bytes(const struct tbbt_trace_rec *rec)
{
    if (tbbt_stats_rec_failed(rec))
        return 0;
    if (TBBT_HAS(rec, TBBT_F_RES_COUNT))
        return rec->res_count;
    return TBBT_HAS(rec, TBBT_F_COUNT) ? rec->count : 0;
}

/* Operations whose obj_attr and new_fh describe the named object, not fh. */
static bool names_new_object(enum tbbt_ns_op op)
{
    return op == TBBT_NS_OP_LOOKUP || op == TBBT_NS_OP_CREATE || op == TBBT_NS_OP_MKDIR ||
           op == TBBT_NS_OP_SYMLINK || op == TBBT_NS_OP_MKNOD;
}

static void see_attr(struct tbbt_stats_file *f, const struct tbbt_fattr *a)
{
    f->type = a->type;
    if (a->type == 1 && (!(f->flags & TBBT_STATS_F_SIZE) || a->size > f->size)) {
        f->size = a->size;
        f->flags |= TBBT_STATS_F_SIZE;
    }
}

/* Sizes and types from the reply's post-op attributes; the object file, or NULL. */
static struct tbbt_stats_file *see_objects(struct tbbt_stats *st,
                                           const struct tbbt_trace_rec *rec,
                                           enum tbbt_ns_op op)
{
    struct tbbt_stats_file *obj = NULL;
    if (names_new_object(op)) {
        if (TBBT_HAS(rec, TBBT_F_NEW_FH)) {
            obj = tbbt__stats_file(st, rec->new_fh);
            if (TBBT_HAS(rec, TBBT_F_OBJ_ATTR))
                see_attr(obj, &rec->obj_attr);
            if (TBBT_HAS(rec, TBBT_F_ID_OBJ))
                obj->id = rec->id_obj;
        }
        return obj;
    }
    if (op == TBBT_NS_OP_MNT || !TBBT_HAS(rec, TBBT_F_FH))
        return NULL;
    obj = tbbt__stats_file(st, rec->fh);
    if (TBBT_HAS(rec, TBBT_F_OBJ_ATTR))
        see_attr(obj, &rec->obj_attr);
    if (TBBT_HAS(rec, TBBT_F_ID))
        obj->id = rec->id;
    for (uint32_t i = 0; i < rec->n_entries; i++) {
        const struct tbbt_entry *e = &rec->entries[i];
        if ((e->flags & TBBT_ENT_FH) && (e->flags & TBBT_ENT_ATTR))
            see_attr(tbbt__stats_file(st, e->fh), &e->attr);
    }
    return obj;
}

static void count_record(struct tbbt_stats *st, const struct tbbt_trace_rec *rec, uint64_t t)
{
    st->records++;
    if (rec->prog == TBBT_PROG_NFS2 || rec->prog == TBBT_PROG_NFS3)
        st->nfs_ops++;
    else if (rec->prog == TBBT_PROG_MNT1 || rec->prog == TBBT_PROG_MNT3)
        st->mount_ops++;
    else
        st->other_ops++;
    if ((rec->flags & TBBT_RF_NO_CALL) || rec->call_ns == 0)
        st->no_call++;
    if (t && (st->t_first == 0 || t < st->t_first))
        st->t_first = t;
    st->t_last = MAX(st->t_last, t);
}

static void feed_sims(struct tbbt_stats *st, const struct tbbt_trace_rec *rec)
{
    bool nfs = rec->prog == TBBT_PROG_NFS2 || rec->prog == TBBT_PROG_NFS3;
    if (!nfs || (rec->flags & TBBT_RF_NO_CALL) || st->sim_fed >= st->o.sim_ops)
        return;
    uint64_t lat = tbbt_stats_lat_get(&st->o.lat, rec->prog, rec->proc);
    for (unsigned w = 0; w < st->o.n_windows; w++) {
        tbbt_concsim_add(st->sims[0][w], rec, lat);
        tbbt_concsim_add(st->sims[1][w], rec, lat);
    }
    st->sim_fed++;
}

void tbbt_stats_add(struct tbbt_stats *st, const struct tbbt_trace_rec *rec, const char *client)
{
    uint64_t t = tbbt_stats_rec_time(rec);
    bool first = st->records == 0;
    count_record(st, rec, t);
    if (first)
        st->t0 = t;
    uint32_t c = tbbt__stats_client(st, client && *client ? client : "?");
    tbbt__stats_mix_add(st, rec, c, t);
    tbbt__stats_temp_time(st, t);

    enum tbbt_ns_op op = tbbt_ns_op(rec);
    struct tbbt_stats_file *f = see_objects(st, rec, op);
    if (f) {
        int kind = TBBT_STATS_ACC_OTHER;
        if ((op == TBBT_NS_OP_READ || op == TBBT_NS_OP_WRITE) && !tbbt_stats_rec_failed(rec)) {
            bool w = op == TBBT_NS_OP_WRITE;
            uint64_t n = tbbt_stats_xfer_bytes(rec);
            uint64_t off = TBBT_HAS(rec, TBBT_F_OFFSET) ? rec->offset : 0;
            kind = w ? TBBT_STATS_ACC_WRITE : TBBT_STATS_ACC_READ;
            tbbt__stats_seq_add(st, f, w, off, n);
            tbbt__stats_temp_add(st, f, n);
            if (w)
                f->bytes_written += n;
            else
                f->bytes_read += n;
        }
        tbbt__stats_share_add(f, c, kind);
    }
    feed_sims(st, rec);
}

void tbbt_stats_finish(struct tbbt_stats *st)
{
    if (st->finished)
        return;
    st->finished = true;
    tbbt__stats_seq_finish(st);
    tbbt__stats_temp_finish(st);
    tbbt__stats_share_finish(st);
    for (unsigned w = 0; st->o.sim_ops && w < st->o.n_windows; w++) {
        tbbt_concsim_finish(st->sims[0][w]);
        tbbt_concsim_finish(st->sims[1][w]);
    }
}

static void reader_error(int rc, struct tbbt_trace_reader *r, const char *path, char *err,
                         size_t errlen)
{
    if (!r || (rc > TBBT_E_BASE && rc < 0))
        tbbt_errbuf(err, errlen, "cannot read trace '%s': %s", path, tbbt_strerror(rc));
    else
        tbbt_errbuf(err, errlen, "cannot read trace '%s': %s at byte %llu", path,
                    tbbt_strerror(rc), (unsigned long long)tbbt_trace_reader_offset(r));
}

/* Calls fn on every record of the trace at path; 0, or a negative error with a reason. */
static int each_record(const char *path,
                       void (*fn)(void *arg, const struct tbbt_trace_rec *rec,
                                  const struct tbbt_eptab *eps),
                       void *arg, char *err, size_t errlen)
{
    int rc = 0;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(path, &rc);
    if (!r) {
        reader_error(rc, NULL, path, err, errlen);
        return rc;
    }
    struct tbbt_trace_rec rec;
    tbbt_trace_rec_init(&rec);
    const struct tbbt_eptab *eps = tbbt_trace_reader_eptab(r);
    while ((rc = tbbt_trace_reader_next(r, &rec)) > 0)
        fn(arg, &rec, eps);
    if (rc < 0)
        reader_error(rc, r, path, err, errlen);
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
    return rc;
}

static void add_one(void *arg, const struct tbbt_trace_rec *rec, const struct tbbt_eptab *eps)
{
    const struct tbbt_endpoint *ep = tbbt_eptab_get(eps, rec->endpoint);
    tbbt_stats_add(arg, rec, ep ? ep->client : NULL);
}

int tbbt_stats_read_trace(struct tbbt_stats *st, const char *path, char *err, size_t errlen)
{
    return each_record(path, add_one, st, err, errlen);
}

struct span {
    uint64_t first, last;
};

static void span_one(void *arg, const struct tbbt_trace_rec *rec, const struct tbbt_eptab *eps)
{
    struct span *sp = arg;
    uint64_t t = tbbt_stats_rec_time(rec);
    (void)eps;
    if (t && (sp->first == 0 || t < sp->first))
        sp->first = t;
    sp->last = MAX(sp->last, t);
}

int tbbt_stats_trace_span(const char *path, uint64_t *first_ns, uint64_t *last_ns, char *err,
                          size_t errlen)
{
    struct span sp = {0, 0};
    int rc = each_record(path, span_one, &sp, err, errlen);
    *first_ns = sp.first;
    *last_ns = sp.last;
    return rc;
}

/* The smallest value of the 1-2-5 series (from 1 ms) that is >= x. */
static double nice_ceil(double x)
{
    static const double m[] = {1, 2, 5};
    for (int e = -3; e < 9; e++)
        for (int i = 0; i < 3; i++)
            if (m[i] * pow(10, e) >= x * (1 - 1e-12))
                return m[i] * pow(10, e);
    return 1e9;
}

double tbbt_stats_auto_interval(double span_s)
{
    if (span_s > 1000)
        return nice_ceil(span_s / 1000);
    if (span_s < 20)
        return nice_ceil(span_s / 50);
    return 1;
}

double tbbt_stats_auto_period(double span_s)
{
    return nice_ceil(span_s / 10);
}
