/* SPDX-License-Identifier: MIT */
/*
 * tbbt-raheur: runs the READ stream of a TBBT trace (NFSv3 and NFSv2 READ calls, in
 * trace order) through a model of a server's read-ahead heuristic and its per-file
 * state table (src/raheur/raheur.h; nfs-tricks paper sections 6 and 7) and reports
 * the share of reads that would trigger read-ahead, the seqCount histogram and the
 * table's ejections, as text or JSON.  A thin shell over the raheur module; the
 * command line is in docs/tbbt-raheur.md.  No server is involved.
 */
#include "raheur/raheur.h"
#include "trace/trace.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/json.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROG "tbbt-raheur"
#define FH_KEY_BIT (UINT64_C(1) << 63)  /* keys of records without a TBBT-ID */

/* The option values (raheur-options.def), owned here until tbbt_cli_main() frees them. */
static struct raheur_opts {
    char *heuristic, *table_size, *probes, *cursors, *threshold, *policy, *hash;
    gboolean json;
    struct tbbt_cli_common common;      /* --verbose: the per-file detail */
    char **args;
} opts;

static const GOptionEntry entries[] = {
#include "raheur/raheur-options.def"
    TBBT_CLI_END,
};

/* What the trace held besides the reads that were fed to the model. */
struct trace_counts {
    uint64_t records;       /* op records read */
    uint64_t read_calls;    /* NFSv2/v3 READ records */
    uint64_t failed;        /* READs whose reply carried an error status: not fed */
    uint64_t incomplete;    /* READs without offset, count or file: not fed */
    uint64_t by_id, by_fh;  /* reads keyed by TBBT-ID, by handle reference */
};

/* Per-file detail (-v). */
struct file_stat {
    uint64_t key;
    uint64_t reads, readahead, fresh, ejected, seqsum;
};

struct run {
    struct tbbt_raheur *h;
    struct trace_counts tc;
    GHashTable *files;      /* key (uint64 *) -> struct file_stat * (owned) */
};

/* Parses a decimal unsigned option value into *v; -1 if it is not one. */
static int parse_u32(const char *s, uint32_t *v)
{
    char *end;
    unsigned long long x;

    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    x = strtoull(s, &end, 10);
    if (errno || *end || x > UINT32_MAX)
        return -1;
    *v = (uint32_t)x;
    return 0;
}

/* Builds the configuration from the options; 0, or a usage message in msg. */
static int make_config(const struct raheur_opts *o, struct tbbt_raheur_config *c, char *msg,
                       size_t len)
{
    struct {
        const char *opt, *val;
        uint32_t *dst;
    } nums[] = {
        {"--table-size", o->table_size, &c->table_size},
        {"--probes", o->probes, &c->probes},
        {"--cursors", o->cursors, &c->cursors},
        {"--threshold", o->threshold, &c->threshold},
    };
    int kind = tbbt_raheur_kind_by_name(o->heuristic ? o->heuristic : "default");
    int policy = tbbt_raheur_policy_by_name(o->policy ? o->policy : "lru");
    int hash = tbbt_raheur_hash_by_name(o->hash ? o->hash : "mix");

    if (kind < 0) {
        snprintf(msg, len, "--heuristic must be default, slowdown or cursor");
        return -1;
    }
    if (policy < 0 || hash < 0) {
        snprintf(msg, len, policy < 0 ? "--table-policy must be lru or usecount"
                                      : "--hash must be mix or mod");
        return -1;
    }
    tbbt_raheur_config_default(c, (enum tbbt_raheur_kind)kind);
    c->policy = (enum tbbt_raheur_policy)policy;
    c->hash = (enum tbbt_raheur_hash)hash;
    for (size_t i = 0; i < G_N_ELEMENTS(nums); i++) {
        if (nums[i].val && parse_u32(nums[i].val, nums[i].dst) < 0) {
            snprintf(msg, len, "%s wants a non-negative integer, not '%s'", nums[i].opt,
                     nums[i].val);
            return -1;
        }
    }
    return tbbt_raheur_config_check(c, msg, len);
}

/* ---- reading the trace ------------------------------------------------------------ */

static void note_file(struct run *r, uint64_t key, const struct tbbt_raheur_result *res)
{
    struct file_stat *f = g_hash_table_lookup(r->files, &key);

    if (!f) {
        f = g_new0(struct file_stat, 1);
        f->key = key;
        g_hash_table_insert(r->files, &f->key, f);
    }
    f->reads++;
    f->readahead += res->readahead;
    f->fresh += res->fresh;
    f->seqsum += res->seqcount;
    if (res->ejected) {
        struct file_stat *v = g_hash_table_lookup(r->files, &res->ejected_key);

        if (v)
            v->ejected++;
    }
}

/* Feeds one READ record to the model (or counts why not). */
static void feed(struct run *r, const struct tbbt_trace_rec *rec)
{
    struct tbbt_raheur_result res;
    uint64_t key, count;

    r->tc.read_calls++;
    if ((rec->flags & TBBT_RF_STATUS) && rec->status != 0) {
        r->tc.failed++;   /* FreeBSD fails these before the heuristic (nfsrv_fhtovp, access) */
        return;
    }
    if (!TBBT_HAS(rec, TBBT_F_OFFSET) || !TBBT_HAS(rec, TBBT_F_COUNT) ||
        (!TBBT_HAS(rec, TBBT_F_ID) && !TBBT_HAS(rec, TBBT_F_FH))) {
        r->tc.incomplete++;
        return;
    }
    if (TBBT_HAS(rec, TBBT_F_ID)) {
        key = rec->id & ~FH_KEY_BIT;
        r->tc.by_id++;
    } else {
        key = FH_KEY_BIT | rec->fh;
        r->tc.by_fh++;
    }
    /* The server's next expected offset is where the read stopped: the bytes it returned. */
    count = (rec->flags & TBBT_RF_REPLY) && TBBT_HAS(rec, TBBT_F_RES_COUNT) ? rec->res_count
                                                                           : rec->count;
    tbbt_raheur_read(r->h, key, rec->offset, count, &res);
    note_file(r, key, &res);
}

static int run_trace(struct run *r, const char *path)
{
    int read2 = tbbt_proc_by_name(TBBT_PROG_NFS2, "read");
    int read3 = tbbt_proc_by_name(TBBT_PROG_NFS3, "read");
    struct tbbt_trace_reader *rd;
    struct tbbt_trace_rec rec;
    int rc;

    if (!(rd = tbbt_trace_reader_open(path, &rc)))
        return tbbt_cli_fail("cannot read trace '%s': %s", path, tbbt_strerror(rc));
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(rd, &rec)) > 0) {
        r->tc.records++;
        if ((rec.prog == TBBT_PROG_NFS3 && rec.proc == read3) ||
            (rec.prog == TBBT_PROG_NFS2 && rec.proc == read2))
            feed(r, &rec);
    }
    if (rc < 0) {
        if (rc > TBBT_E_BASE)
            tbbt_log(TBBT_LOG_ERROR, "cannot read trace '%s': %s", path, tbbt_strerror(rc));
        else
            tbbt_log(TBBT_LOG_ERROR, "cannot read trace '%s': %s at byte %" PRIu64, path,
                     tbbt_strerror(rc), tbbt_trace_reader_offset(rd));
    }
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(rd);
    return rc < 0 ? TBBT_EXIT_FAIL : TBBT_EXIT_OK;
}

/* ---- reports ------------------------------------------------------------------------ */

static double share(uint64_t part, uint64_t whole)
{
    return whole ? (double)part / (double)whole : 0.0;
}

static double mean_seqcount(const struct tbbt_raheur_stats *st)
{
    uint64_t sum = 0;

    for (int i = 0; i <= TBBT_RAHEUR_SEQMAX; i++)
        sum += (uint64_t)i * st->hist[i];
    return share(sum, st->reads);
}

static gint cmp_key(gconstpointer a, gconstpointer b)
{
    const struct file_stat *x = *(const struct file_stat *const *)a;
    const struct file_stat *y = *(const struct file_stat *const *)b;

    return x->key < y->key ? -1 : x->key > y->key;
}

/* The per-file records sorted by key (given: caller frees the array, not the items). */
static GPtrArray *sorted_files(const struct run *r)
{
    GPtrArray *a = g_ptr_array_new();
    GHashTableIter it;
    gpointer v;

    g_hash_table_iter_init(&it, r->files);
    while (g_hash_table_iter_next(&it, NULL, &v))
        g_ptr_array_add(a, v);
    g_ptr_array_sort(a, cmp_key);
    return a;
}

/* "id 42" or "fh 7". */
static void key_text(char *buf, size_t len, uint64_t key)
{
    if (key & FH_KEY_BIT)
        snprintf(buf, len, "fh %" PRIu64, key & ~FH_KEY_BIT);
    else
        snprintf(buf, len, "id %" PRIu64, key);
}

static void json_config(struct tbbt_json *j, const struct tbbt_raheur_config *c)
{
    tbbt_json_key(j, "heuristic");
    tbbt_json_string(j, tbbt_raheur_kind_name(c->kind));
    tbbt_json_kv_uint(j, "table_size", c->table_size);
    tbbt_json_kv_uint(j, "probes", c->probes);
    tbbt_json_kv_uint(j, "cursors", c->kind == TBBT_RAHEUR_CURSOR ? c->cursors : 1);
    tbbt_json_kv_uint(j, "threshold", c->threshold);
    tbbt_json_key(j, "table_policy");
    tbbt_json_string(j, tbbt_raheur_policy_name(c->policy));
    tbbt_json_key(j, "hash");
    tbbt_json_string(j, tbbt_raheur_hash_name(c->hash));
}

static void json_files(struct tbbt_json *j, const struct run *r)
{
    GPtrArray *a = sorted_files(r);

    tbbt_json_key(j, "per_file");
    tbbt_json_begin_array(j);
    for (guint i = 0; i < a->len; i++) {
        const struct file_stat *f = a->pdata[i];

        tbbt_json_begin_object(j);
        tbbt_json_key(j, (f->key & FH_KEY_BIT) ? "fh" : "id");
        tbbt_json_uint(j, f->key & ~FH_KEY_BIT);
        tbbt_json_kv_uint(j, "reads", f->reads);
        tbbt_json_key(j, "readahead_share");
        tbbt_json_double(j, share(f->readahead, f->reads));
        tbbt_json_key(j, "mean_seqcount");
        tbbt_json_double(j, share(f->seqsum, f->reads));
        tbbt_json_kv_uint(j, "fresh_starts", f->fresh);
        tbbt_json_kv_uint(j, "ejected", f->ejected);
        tbbt_json_end_object(j);
    }
    tbbt_json_end_array(j);
    g_ptr_array_free(a, TRUE);
}

static void print_json(const struct run *r, const char *path, bool verbose)
{
    const struct tbbt_raheur_stats *st = tbbt_raheur_stats(r->h);
    struct tbbt_json j;
    char *text;

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    tbbt_json_key(&j, "trace");
    tbbt_json_string(&j, path);
    json_config(&j, tbbt_raheur_config(r->h));
    tbbt_json_kv_uint(&j, "records", r->tc.records);
    tbbt_json_kv_uint(&j, "read_calls", r->tc.read_calls);
    tbbt_json_kv_uint(&j, "failed_reads", r->tc.failed);
    tbbt_json_kv_uint(&j, "incomplete_reads", r->tc.incomplete);
    tbbt_json_kv_uint(&j, "reads", st->reads);
    tbbt_json_kv_uint(&j, "reads_by_id", r->tc.by_id);
    tbbt_json_kv_uint(&j, "reads_by_fh", r->tc.by_fh);
    tbbt_json_kv_uint(&j, "files", g_hash_table_size(r->files));
    tbbt_json_kv_uint(&j, "readahead_reads", st->readahead);
    tbbt_json_key(&j, "readahead_share");
    tbbt_json_double(&j, share(st->readahead, st->reads));
    tbbt_json_key(&j, "mean_seqcount");
    tbbt_json_double(&j, mean_seqcount(st));
    tbbt_json_kv_uint(&j, "ejections", st->ejections);
    tbbt_json_key(&j, "ejection_share");
    tbbt_json_double(&j, share(st->ejections, st->reads));
    tbbt_json_kv_uint(&j, "fresh_starts", st->fresh);
    tbbt_json_kv_uint(&j, "new_cursors", st->new_cursors);
    tbbt_json_kv_uint(&j, "recycled_cursors", st->recycled_cursors);
    tbbt_json_key(&j, "seqcount_histogram");
    tbbt_json_begin_array(&j);
    for (int i = 0; i <= TBBT_RAHEUR_SEQMAX; i++)
        tbbt_json_uint(&j, st->hist[i]);
    tbbt_json_end_array(&j);
    if (verbose)
        json_files(&j, r);
    tbbt_json_end_object(&j);
    text = tbbt_json_finish(&j);
    printf("%s\n", text);
    g_free(text);
}

static void print_hist(const struct tbbt_raheur_stats *st)
{
    printf("seqCount histogram (non-empty values):\n");
    for (int i = 0; i <= TBBT_RAHEUR_SEQMAX; i++)
        if (st->hist[i])
            printf("  %3d  %12" PRIu64 "  %6.3f\n", i, st->hist[i], share(st->hist[i], st->reads));
}

static void print_files(const struct run *r)
{
    GPtrArray *a = sorted_files(r);
    char name[32];

    printf("per file:\n  %-22s %10s %9s %8s %7s %8s\n", "file", "reads", "ra-share",
           "mean-seq", "fresh", "ejected");
    for (guint i = 0; i < a->len; i++) {
        const struct file_stat *f = a->pdata[i];

        key_text(name, sizeof(name), f->key);
        printf("  %-22s %10" PRIu64 " %9.3f %8.1f %7" PRIu64 " %8" PRIu64 "\n", name, f->reads,
               share(f->readahead, f->reads), share(f->seqsum, f->reads), f->fresh, f->ejected);
    }
    g_ptr_array_free(a, TRUE);
}

static void print_text(const struct run *r, const char *path, bool verbose)
{
    const struct tbbt_raheur_config *c = tbbt_raheur_config(r->h);
    const struct tbbt_raheur_stats *st = tbbt_raheur_stats(r->h);

    printf("trace            %s\n", path);
    printf("heuristic        %s", tbbt_raheur_kind_name(c->kind));
    if (c->kind == TBBT_RAHEUR_CURSOR)
        printf(" (%u cursors per file)", c->cursors);
    printf("\ntable            %u slots, %u probes, %s replacement, %s hash\n", c->table_size,
           c->probes, tbbt_raheur_policy_name(c->policy), tbbt_raheur_hash_name(c->hash));
    printf("read-ahead when  seqCount > %u\n", c->threshold);
    printf("records          %" PRIu64 " (%" PRIu64 " READ calls, %" PRIu64 " failed, %" PRIu64
           " incomplete: not simulated)\n",
           r->tc.records, r->tc.read_calls, r->tc.failed, r->tc.incomplete);
    printf("reads            %" PRIu64 " (%" PRIu64 " by TBBT-ID, %" PRIu64 " by handle)\n",
           st->reads, r->tc.by_id, r->tc.by_fh);
    printf("files            %u\n", g_hash_table_size(r->files));
    printf("read-ahead       %" PRIu64 " reads, share %.4f\n", st->readahead,
           share(st->readahead, st->reads));
    printf("mean seqCount    %.2f\n", mean_seqcount(st));
    printf("ejections        %" PRIu64 " (%.4f of reads)\n", st->ejections,
           share(st->ejections, st->reads));
    printf("fresh starts     %" PRIu64 "\n", st->fresh);
    if (c->kind == TBBT_RAHEUR_CURSOR)
        printf("cursors          %" PRIu64 " opened, %" PRIu64 " of them recycled\n",
               st->new_cursors, st->recycled_cursors);
    print_hist(st);
    if (verbose)
        print_files(r);
}

static int simulate(const struct raheur_opts *o, const struct tbbt_raheur_config *c)
{
    char err[256];
    struct run r = {0};
    int rc;

    r.h = tbbt_raheur_new(c, err, sizeof(err));
    g_assert(r.h); /* make_config checked c */
    r.files = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    rc = run_trace(&r, o->args[0]);
    if (rc == TBBT_EXIT_OK) {
        if (o->json)
            print_json(&r, o->args[0], o->common.verbose);
        else
            print_text(&r, o->args[0], o->common.verbose);
        rc = tbbt_cli_flush_stdout("the report");
    }
    g_hash_table_destroy(r.files);
    tbbt_raheur_free(r.h);
    return rc;
}

/* The simulation; the exit code. */
static int run(void)
{
    const struct raheur_opts *o = &opts;
    struct tbbt_raheur_config cfg;
    char msg[256];

    if (!o->args || g_strv_length(o->args) != 1)
        return tbbt_cli_usage("expected exactly one TRACE argument");
    if (make_config(o, &cfg, msg, sizeof(msg)) < 0)
        return tbbt_cli_usage(msg);
    return simulate(o, &cfg);
}

int main(int argc, char **argv)
{
    return tbbt_cli_main(&(struct tbbt_cli_spec){
        .prog = PROG, .entries = entries, .locale = true, .common = &opts.common,
        .trace_major = TBBT_TRACE_MAJOR, .trace_minor = TBBT_TRACE_MINOR,
        .summary = "Simulate an NFS server's read-ahead heuristic and its per-file state "
                   "table on the READs of a TBBT trace.",
        .description = "Usage: " PROG " TRACE --heuristic default|slowdown|cursor "
                       "[--table-size N]\n"
                       "         [--probes N] [--cursors N] [--threshold N] [--json] [-v]\n"
                       "\nExit status: 0 success, 1 the trace cannot be read, 2 usage "
                       "error.\nSee docs/tbbt-raheur.md.\n" }, argc, argv, run);
}
