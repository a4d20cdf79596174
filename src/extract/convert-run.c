/* SPDX-License-Identifier: MIT */
/*
 * Running tbbt-convert (extract.h): picks the input reader by content, runs
 * pass A (pairing into a raw trace, convert.c) and pass B (IDs, hierarchy,
 * execution order and correction), puts the trace and the map in place only
 * when both are complete, and checks a finished trace (--check).  TBBT paper
 * 3.1 and section 4.
 */
#include "extract/convert-int.h"

#include "extract/hier.h"
#include "trace/spill.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include <zlib.h>

#include "util/outfile.h"
#include "util/util.h"

static const struct tbbt__source_ops *const sources[] = {
    &tbbt__source_pcap,
    &tbbt__source_nfsdump,
};

void tbbt_convert_opts_init(struct tbbt_convert_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->reply_timeout_ns = 30ull * 1000000000ull;
    o->max_pending = 262144;
    o->correct = true;
    o->seed = 1;
}

/* ---- running ------------------------------------------------------------------ */

static uint64_t input_bytes(const struct tbbt_convert_opts *o)
{
    uint64_t total = 0;
    GStatBuf st;

    for (int i = 0; i < o->n_inputs; i++)
        if (g_stat(o->inputs[i], &st) == 0)
            total += (uint64_t)st.st_size;
    return total;
}

/* Picks the reader from the first bytes of the first input (gunzipped if need be). */
static const struct tbbt__source_ops *pick_source(const char *path)
{
    uint8_t head[4096];               /* several text lines: see source-nfsdump.c */
    int n = 0;
    gzFile gz = gzopen(path, "rb");   /* reads plain files as they are */

    if (gz) {
        n = gzread(gz, head, sizeof(head));
        gzclose(gz);
    }
    for (size_t i = 0; n > 0 && i < G_N_ELEMENTS(sources); i++)
        if (sources[i]->probe(head, (size_t)n))
            return sources[i];
    return &tbbt__source_pcap;       /* its error says what is wrong with the file */
}

/*
 * Moves a finished output into place (util/outfile.h: synced, renamed over its
 * target, or copied to a device or FIFO) and forgets its temporary; 0 or -errno.
 */
static int put_in_place(struct tbbt_outfile **out, char **tmp)
{
    int rc;

    if (!*out)
        return 0;
    rc = tbbt_outfile_commit(*out, NULL, 0);
    *out = NULL;
    g_free(*tmp);
    *tmp = NULL;
    return rc;
}

/*
 * Puts the trace and the map in place: one written in place (a device or a FIFO,
 * where the copy may fail: ENOSPC) goes first, so that its failure leaves the other's
 * existing file as it was.  0, or -errno with the reason naming the file in errbuf.
 */
static int put_both_in_place(struct tbbt__conv *c, char *errbuf, size_t errlen)
{
    bool map_first = c->map_out && tbbt_outfile_in_place(c->map_out) &&
                     !(c->out && tbbt_outfile_in_place(c->out));
    int rc;

    for (int k = 0; k < 2; k++) {
        bool map = (k == 0) == map_first;
        if ((rc = map ? put_in_place(&c->map_out, &c->map_tmp)
                      : put_in_place(&c->out, &c->final_tmp)) < 0) {
            snprintf(errbuf, errlen, map ? "cannot write hierarchy map '%s': %s"
                                         : "cannot write trace '%s': %s",
                     map ? c->map_path : c->o->output, tbbt_strerror(rc));
            return rc;
        }
    }
    return 0;
}

/* The one-line result of a --check pass, on standard output. */
static void print_check(const struct tbbt__corr *k)
{
    struct tbbt__corr_stats st;

    tbbt__corr_stats(k, &st);
    printf("check: %" G_GUINT64_FORMAT " records, %" G_GUINT64_FORMAT
           " with a recorded outcome, %" G_GUINT64_FORMAT " mismatches\n",
           (guint64)st.records, (guint64)st.checked, (guint64)st.failures);
}

/*
 * Pass B (hier.c): the raw trace through the namespace model and the
 * pre-play, into the final trace and the map; then the --check pass.
 */
static int pass_b(struct tbbt__conv *c, char *errbuf, size_t errlen)
{
    const struct tbbt_convert_opts *o = c->o;
    uint64_t t0 = tbbt_now_ns();
    int threads = o->threads > 0 ? o->threads : (g_get_num_processors() > 1 ? 2 : 1);
    int rc;

    c->corr = tbbt__corr_new(o->correct && !o->check, o->seed);
    if (c->keep_raw)           /* a TBBT trace as input */
        rc = tbbt__hier_replay_mt(c->ns, c->corr, c->raw_path, c->final_tmp, c->map_tmp,
                                  threads, errbuf, errlen);
    else                       /* pass A's spill, with its tables */
        rc = tbbt__hier_replay_spill(c->ns, c->corr, c->raw_path, c->fh, c->ep, c->cred,
                                     c->final_tmp, c->map_tmp, threads, errbuf, errlen);
    c->pass_b_ns = tbbt_now_ns() - t0;
    if (rc < 0 || !o->check)
        return rc;
    t0 = tbbt_now_ns();
    rc = tbbt__check_run(c->final_tmp, c->map_tmp, &c->check, errbuf, errlen);
    c->check_ns = tbbt_now_ns() - t0;
    if (rc == 0 && !o->quiet)
        print_check(c->check);
    return rc;
}

static int finish(struct tbbt__conv *c, int rc, char *errbuf, size_t errlen)
{
    int wrc;
    char *text;

    tbbt__pairer_finish(c->pairer);
    tbbt__conv_pipe_stop(c);
    if (c->o->progress)
        fputc('\n', stderr);
    if (c->write_err) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", c->raw_path,
                 tbbt_strerror(c->write_err));
        return c->write_err;
    }
    wrc = tbbt_spill_writer_close(c->w);
    c->w = NULL;
    if (wrc < 0) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", c->raw_path,
                 tbbt_strerror(wrc));
        return wrc;
    }
    c->pass_a_ns = tbbt_now_ns() - c->started_ns;
    c->reader_cpu_ns = tbbt_thread_cpu_ns() - c->cpu0_ns;
    if ((wrc = pass_b(c, errbuf, errlen)) < 0)
        return wrc;
    if ((wrc = put_both_in_place(c, errbuf, errlen)) < 0)
        return wrc;
    if (c->o->summary_json) {
        text = tbbt__conv_summary_text(c, (double)(tbbt_now_ns() - c->started_ns) / 1e9,
                            input_bytes(c->o));
        wrc = tbbt_json_write_file(c->o->summary_json, text);
        g_free(text);
        if (wrc < 0) {
            snprintf(errbuf, errlen, "cannot write summary '%s': %s", c->o->summary_json,
                     tbbt_strerror(wrc));
            return wrc;
        }
    }
    return rc;
}

/* Threads for this run: a pipeline needs a reader that fills records from bytes. */
static int pick_threads(const struct tbbt_convert_opts *o, const struct tbbt__source_ops *src)
{
    int n = o->threads > 0 ? o->threads : (g_get_num_processors() > 1 ? 2 : 1);

    return src->fill && n > 1 ? 2 : 1;
}

static void core_init(struct tbbt__conv *c, const struct tbbt_convert_opts *o)
{
    c->started_ns = tbbt_now_ns();
    c->cpu0_ns = tbbt_thread_cpu_ns();
    c->src = pick_source(o->inputs[0]);
    c->threads = pick_threads(o, c->src);
    tbbt__conv_tables_init(c, o);
}

/*
 * Where the files go.  The final trace and the map are written aside
 * (util/outfile.h: beside their targets after symbolic links, or in the
 * temporary directory for a device or FIFO) and put in place at the end, so a
 * failed run never clobbers existing files.  The raw trace is written beside
 * the trace's temporary (or in the temporary directory when the trace goes to
 * stdout or, with --check and no -o, nowhere).  0, or -errno with the reason
 * naming the file in errbuf.
 */
static int plan_paths(struct tbbt__conv *c, char *errbuf, size_t errlen)
{
    const struct tbbt_convert_opts *o = c->o;
    int pid = (int)getpid(), rc = 0;
    char *dir = NULL;

    if (o->output && strcmp(o->output, "-") != 0) {
        if (!(c->out = tbbt_outfile_new(o->output, TBBT_OUTFILE_SPOOL, &rc, errbuf, errlen)))
            return rc;
        c->final_tmp = g_strdup(tbbt_outfile_path(c->out));
        c->raw_path = g_strdup_printf("%s.raw-%d", c->final_tmp, pid);
    } else {
        dir = g_dir_make_tmp("tbbt-convert-XXXXXX", NULL);
        c->raw_path = g_build_filename(dir ? dir : g_get_tmp_dir(), "raw", NULL);
        c->final_tmp = o->output ? g_strdup(o->output)
                                 : g_build_filename(dir ? dir : g_get_tmp_dir(), "final", NULL);
        c->tmp_dir = dir;
    }
    if (o->map)
        c->map_path = g_strdup(o->map);
    else if (c->out && !tbbt_outfile_in_place(c->out))   /* not for a device, as for "-" */
        c->map_path = tbbt_ns_map_path(o->output);
    if (c->map_path) {
        if (!(c->map_out = tbbt_outfile_new(c->map_path, TBBT_OUTFILE_SPOOL, &rc, errbuf,
                                            errlen)))
            return rc;
        c->map_tmp = g_strdup(tbbt_outfile_path(c->map_out));
    } else if (o->check) {
        c->map_tmp = g_build_filename(dir ? dir : g_get_tmp_dir(), "map", NULL);
    }
    return 0;
}

static void drop_temporaries(struct tbbt__conv *c)
{
    const char *out = c->o->output;

    /* each is gone already if it was put in place; the outfiles remove their own */
    if (!c->keep_raw && c->raw_path)
        g_unlink(c->raw_path);
    if (c->out) {
        tbbt_outfile_abort(c->out);
    } else if (c->final_tmp && (!out || strcmp(c->final_tmp, out) != 0)) {
        g_unlink(c->final_tmp);
    }
    if (c->map_out)
        tbbt_outfile_abort(c->map_out);
    else if (c->map_tmp)
        g_unlink(c->map_tmp);
    if (c->tmp_dir)
        g_rmdir(c->tmp_dir);
    g_free(c->raw_path);
    g_free(c->final_tmp);
    g_free(c->map_tmp);
    g_free(c->map_path);
    g_free(c->tmp_dir);
}

/*
 * A TBBT trace as input: pass B alone, over it (a trace edited in its text
 * form, or converted by another version).  Its ID fields are recomputed.
 */
static int rerun_pass_b(struct tbbt__conv *c, char *errbuf, size_t errlen)
{
    int rc;
    char *text;

    if (c->o->n_inputs != 1) {
        snprintf(errbuf, errlen, "a TBBT trace input must be the only input");
        return TBBT_E_RANGE;
    }
    g_free(c->raw_path);
    c->raw_path = g_strdup(c->o->inputs[0]);
    c->keep_raw = true;
    if ((rc = tbbt__hier_scan(c->ns, c->raw_path, errbuf, errlen)) < 0 ||
        (rc = pass_b(c, errbuf, errlen)) < 0)
        return rc;
    if ((rc = put_both_in_place(c, errbuf, errlen)) < 0)
        return rc;
    if (!c->o->summary_json)
        return 0;
    text = tbbt__conv_summary_text(c, (double)(tbbt_now_ns() - c->started_ns) / 1e9,
                                   input_bytes(c->o));
    rc = tbbt_json_write_file(c->o->summary_json, text);
    g_free(text);
    if (rc < 0)
        snprintf(errbuf, errlen, "cannot write summary '%s': %s", c->o->summary_json,
                 tbbt_strerror(rc));
    return rc;
}

/* Every --v4-export spec well-formed: 0, or TBBT_E_RANGE with the reason in errbuf. */
static int check_v4_exports(const struct tbbt_convert_opts *o, char *errbuf, size_t errlen)
{
    char why[256];

    for (const char *const *s = o->v4_exports; s && *s; s++)
        if (tbbt_ns_v4_export_check(*s, why, sizeof(why)) < 0) {
            snprintf(errbuf, errlen, "--v4-export '%s': %s", *s, why);
            return TBBT_E_RANGE;
        }
    return 0;
}

int tbbt_convert_run(const struct tbbt_convert_opts *o, char *errbuf, size_t errlen)
{
    struct tbbt__conv *c;
    int rc, err = 0;

    if ((rc = check_v4_exports(o, errbuf, errlen)) < 0)
        return rc;
    c = g_new0(struct tbbt__conv, 1);
    c->o = o;
    core_init(c, o);
    if ((rc = plan_paths(c, errbuf, errlen)) < 0)
        goto out;
    if (tbbt_convert_is_trace(o->inputs[0])) {
        rc = rerun_pass_b(c, errbuf, errlen);
        /* a TBBT trace that does not read whole gives no output at all: not exit 3 */
        if (rc == TBBT_E_TRUNC || rc == TBBT_E_DAMAGED)
            rc = TBBT_E_BADREC;
        goto out;
    }
    c->w = tbbt_spill_writer_open(c->raw_path, &err);
    if (!c->w) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", c->raw_path, tbbt_strerror(err));
        rc = err;
        goto out;
    }
    if (c->threads > 1)
        tbbt__conv_pipe_start(c);
    rc = c->src->run(c, o->inputs, o->n_inputs, errbuf, errlen);
    if (rc == 0 || rc == TBBT_E_TRUNC || rc == TBBT_E_DAMAGED) {
        char ebuf[512] = "";
        int frc = finish(c, rc, ebuf, sizeof(ebuf));
        if (frc != TBBT_E_TRUNC && frc != TBBT_E_DAMAGED)
            snprintf(errbuf, errlen, "%s", ebuf);
        rc = frc;
    }
out:
    tbbt__conv_pipe_stop(c);   /* the writer thread is done with the writer before it goes */
    tbbt_spill_writer_abort(c->w);
    drop_temporaries(c);
    tbbt__conv_fini(c);
    g_free(c);
    return rc;
}

/* ---- --check of a finished trace ------------------------------------------------ */

bool tbbt_convert_is_trace(const char *path)
{
    uint8_t head[16];
    FILE *f = fopen(path, "rb");
    size_t n;

    if (!f)
        return false;
    n = fread(head, 1, sizeof(head), f);
    fclose(f);
    return tbbt_trace_probe(head, n);
}

int tbbt_convert_check(const char *trace, const char *map, const char *summary_json, bool quiet,
                       char *errbuf, size_t errlen)
{
    uint64_t t0 = tbbt_now_ns();
    char *map_path = map ? g_strdup(map) : tbbt_ns_map_path(trace);
    struct tbbt__corr *k = NULL;
    struct tbbt__corr_stats st;
    struct tbbt_json j;
    char *text;
    int rc = tbbt__check_run(trace, map_path, &k, errbuf, errlen);

    g_free(map_path);
    if (rc < 0)
        return rc;
    tbbt__corr_stats(k, &st);
    if (!quiet)
        print_check(k);
    if (summary_json) {
        tbbt_json_init(&j);
        tbbt_json_begin_object(&j);
        tbbt_json_key(&j, "input_format");
        tbbt_json_string(&j, "tbbt");
        tbbt_json_kv_uint(&j, "records", st.records);
        tbbt_json_kv_uint(&j, "checked_records", st.checked);
        tbbt_json_kv_uint(&j, "unchecked_records", st.unchecked);
        tbbt_json_kv_uint(&j, "remaining_mismatches", st.failures);
        tbbt_json_kv_uint(&j, "replay_failures", st.failures);
        tbbt_json_kv_double(&j, "elapsed_seconds", (double)(tbbt_now_ns() - t0) / 1e9);
        tbbt_json_key(&j, "check");
        tbbt_json_begin_object(&j);
        tbbt__corr_summary(k, NULL, &j);
        tbbt_json_end_object(&j);
        tbbt_json_kv_uint(&j, "peak_rss_bytes", tbbt_peak_rss());
        tbbt_json_end_object(&j);
        text = tbbt_json_finish(&j);
        rc = tbbt_json_write_file(summary_json, text);
        g_free(text);
        if (rc < 0)
            snprintf(errbuf, errlen, "cannot write summary '%s': %s", summary_json,
                     tbbt_strerror(rc));
    }
    tbbt__corr_free(k);
    return rc < 0 ? rc : 0;
}
