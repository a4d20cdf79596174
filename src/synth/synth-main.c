/* SPDX-License-Identifier: MIT */
/*
 * tbbt-synth: writes the read benchmark of the nfs-tricks paper (sections 4.3 and 7:
 * n concurrent sequential or stride readers, each on its own file) as a TBBT trace
 * plus hierarchy map that tbbt-init and tbbt-play take like a converted capture.  A
 * thin shell over src/synth/synth.h; the command line is in docs/tbbt-synth.md.
 */
#include "synth/synth.h"
#include "ns/ns.h"
#include "trace/trace.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PROG "tbbt-synth"

/* The option values (synth-options.def), owned here until tbbt_cli_main() frees them. */
static struct synth_opts {
    char *readers, *stride, *read_size, *scale, *reorder, *seed, *rate, *file_set, *start;
    char *output, *map;
    gboolean tcp;
    struct tbbt_cli_common common;
    char **args;
} opts;

static const GOptionEntry entries[] = {
#include "synth/synth-options.def"
    TBBT_CLI_END,
};

static int usage_error(const char *msg)
{
    fprintf(stderr, PROG ": %s (try '" PROG " --help')\n", msg);
    return TBBT_EXIT_USAGE;
}

/* BYTES: a decimal count with an optional k/K or m/M (binary) suffix, 1..hi. */
static bool parse_bytes(const char *s, uint64_t hi, uint64_t *v)
{
    size_t n = strlen(s);
    uint64_t mult = 1, x;
    char buf[32];

    if (n == 0 || n >= sizeof(buf))
        return false;
    memcpy(buf, s, n + 1);
    if (buf[n - 1] == 'k' || buf[n - 1] == 'K')
        mult = 1024;
    else if (buf[n - 1] == 'm' || buf[n - 1] == 'M')
        mult = 1024 * 1024;
    if (mult > 1)
        buf[n - 1] = '\0';
    if (!tbbt_cli_parse_u64(buf, 1, hi / mult, &x))
        return false;
    *v = x * mult;
    return true;
}

/* A positive finite number: decimal, or a fraction "A/B" (e.g. 1/64). */
static bool parse_number(const char *s, double *v)
{
    char *end;
    double a, b = 1.0;

    errno = 0;
    a = strtod(s, &end);
    if (end == s || errno)
        return false;
    if (*end == '/') {
        const char *t = end + 1;
        b = strtod(t, &end);
        if (end == t || errno || b <= 0.0)
            return false;
    }
    if (*end || !isfinite(a / b))
        return false;
    *v = a / b;
    return true;
}

/* Options into cfg; 0, or a usage error message in msg. */
static int to_cfg(const struct synth_opts *o, struct tbbt_synth_cfg *cfg, char *msg, size_t len)
{
    uint64_t v;

    tbbt_synth_cfg_init(cfg);
    cfg->tcp = o->tcp;
    if (!o->readers)
        return tbbt_errbuf(msg, len, "--readers N is required"), -1;
    if (!tbbt_cli_parse_u64(o->readers, 1, TBBT_SYNTH_MAX_READERS, &v))
        return tbbt_errbuf(msg, len, "bad --readers '%s' (want 1..%u)", o->readers,
                           TBBT_SYNTH_MAX_READERS), -1;
    cfg->readers = (uint32_t)v;
    if (o->stride && !tbbt_cli_parse_u64(o->stride, 1, TBBT_SYNTH_MAX_STRIDE, &v))
        return tbbt_errbuf(msg, len, "bad --stride '%s' (want 1..%u)", o->stride,
                           TBBT_SYNTH_MAX_STRIDE), -1;
    cfg->stride = o->stride ? (uint32_t)v : 1;
    if (o->read_size) {
        uint64_t hi = o->tcp ? TBBT_SYNTH_TCP_MAX_READ : TBBT_SYNTH_UDP_MAX_READ;
        if (!parse_bytes(o->read_size, hi, &v))
            return tbbt_errbuf(msg, len, "bad --read-size '%s' (want 1..%" PRIu64 " bytes%s)",
                               o->read_size, hi, o->tcp ? "" : "; up to 1M with --tcp"), -1;
        cfg->read_size = (uint32_t)v;
    }
    if (o->scale && (!parse_number(o->scale, &cfg->scale) || cfg->scale <= 0.0 ||
                     cfg->scale > TBBT_SYNTH_MAX_SCALE))
        return tbbt_errbuf(msg, len, "bad --scale '%s' (want a number or A/B in (0, %g])",
                           o->scale, TBBT_SYNTH_MAX_SCALE), -1;
    if (o->reorder && tbbt_reorder_parse(o->reorder, &cfg->reorder, msg, len) < 0)
        return -1;
    if (o->seed && !tbbt_cli_parse_u64(o->seed, 0, UINT64_MAX, &cfg->seed))
        return tbbt_errbuf(msg, len, "bad --seed '%s' (want a decimal integer)", o->seed), -1;
    if (o->rate && (!parse_number(o->rate, &cfg->rate) || cfg->rate <= 0.0 || cfg->rate > 1e9))
        return tbbt_errbuf(msg, len, "bad --rate '%s' (want reads/s in (0, 1e9])", o->rate),
               -1;
    if (o->file_set && strcmp(o->file_set, "read") != 0 && strcmp(o->file_set, "all") != 0)
        return tbbt_errbuf(msg, len, "bad --file-set '%s' (want read or all)", o->file_set),
               -1;
    cfg->fileset = o->file_set && !strcmp(o->file_set, "all") ? TBBT_SYNTH_FILES_ALL
                                                              : TBBT_SYNTH_FILES_READ;
    if (o->start) {
        if (!tbbt_cli_parse_u64(o->start, 1, UINT64_MAX / 1000000000ull - 1000000, &v))
            return tbbt_errbuf(msg, len, "bad --start-time '%s' (want seconds since 1970)",
                               o->start), -1;
        cfg->start_ns = v * 1000000000ull;
    }
    return tbbt_synth_cfg_check(cfg, msg, len);
}

static void print_summary(const struct tbbt_synth *s, const struct tbbt_synth_summary *sum,
                          const char *trace, const char *map)
{
    const struct tbbt_synth_cfg *c = tbbt_synth_cfg(s);
    size_t nf;
    const struct tbbt_synth_file *f = tbbt_synth_files(s, &nf);
    uint64_t fsize = 0;

    for (size_t i = 0; i < nf; i++)
        if (f[i].reader == 0)
            fsize = f[i].size;
    fprintf(stderr,
            "tbbt-synth: %u readers x %" PRIu64 " bytes, stride %u, %u-byte reads, "
            "%" PRIu64 " reads (%" PRIu64 " swapped), %" PRIu64 " records over %.3f s, "
            "%zu files in map -> %s, %s\n",
            c->readers, fsize, c->stride, c->read_size, sum->reads, sum->swaps, sum->records,
            (double)sum->span_ns / 1e9, nf, trace, map);
}

/* The trace and map written; the exit code. */
static int run(void)
{
    const struct synth_opts *o = &opts;
    struct tbbt_synth_cfg cfg;
    struct tbbt_synth_summary sum;
    struct tbbt_synth *s;
    char msg[512] = "", *map;
    int rc;

    if (o->args && o->args[0])
        return usage_error("unexpected argument (the trace is named with -o TRACE)");
    if (!o->output || !*o->output)
        return usage_error("-o TRACE is required");
    if (!strcmp(o->output, "-") || (o->map && !strcmp(o->map, "-")))
        return usage_error("the trace and the map must be files, not '-'");
    if (to_cfg(o, &cfg, msg, sizeof(msg)) < 0)
        return usage_error(msg);
    if (!(s = tbbt_synth_new(&cfg, msg, sizeof(msg))))
        return usage_error(msg);
    map = o->map ? g_strdup(o->map) : tbbt_ns_map_path(o->output);
    rc = tbbt_synth_run(s, o->output, map, &sum, msg, sizeof(msg));
    if (rc < 0)
        tbbt_log(TBBT_LOG_ERROR, "%s", msg);
    else if (!o->common.quiet)
        print_summary(s, &sum, o->output, map);
    g_free(map);
    tbbt_synth_free(s);
    return rc < 0 ? TBBT_EXIT_FAIL : TBBT_EXIT_OK;
}

int main(int argc, char **argv)
{
    return tbbt_cli_main(&(struct tbbt_cli_spec){
        .prog = PROG, .entries = entries, .usage = usage_error, .locale = true,
        .common = &opts.common,
        .trace_major = TBBT_TRACE_MAJOR, .trace_minor = TBBT_TRACE_MINOR,
        .summary = "Write the nfs-tricks read benchmark (N concurrent sequential or stride "
                   "readers)\nas a TBBT trace plus hierarchy map for tbbt-init and tbbt-play.",
        .description = "Files: ra/g<N>/f<i>, N files of 256 MiB * F / N in group g<N>, "
                       "reader i reads\nra/g<N>/f<i>.  Example:\n"
                       "  tbbt-synth --readers 8 --stride 4 --reorder 0.05:4 -o r8.tbbt\n"
                       "\nExit status: 0 success, 1 run failed, 2 usage error.\n"
                       "Manual: docs/tbbt-synth.md.\n" }, argc, argv, run);
}
