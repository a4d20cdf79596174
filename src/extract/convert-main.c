/* SPDX-License-Identifier: MIT */
/*
 * tbbt-convert: packet captures (or nfsdump text traces) of NFS traffic ->
 * TBBT trace and hierarchy map.  Options into a struct tbbt_convert_opts,
 * then tbbt_convert_run(); --check of a finished trace goes to
 * tbbt_convert_check().  docs/tbbt-convert.md.
 */
#include <glib.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "extract/extract.h"
#include "tbbt-version.h"
#include "trace/trace.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/util.h"

static gchar *opt_output, *opt_filter, *opt_summary, *opt_from_text, *opt_map;
static gboolean opt_check, opt_no_correct;
static gint64 opt_seed = 1;
static gdouble opt_timeout = 30.0;
static gint opt_max_pending = 262144;
static gint opt_threads = 0;
static gboolean opt_version, opt_quiet, opt_progress, opt_no_progress, opt_verbose;
static gchar **opt_inputs;

static const GOptionEntry entries[] = {
    {"output", 'o', 0, G_OPTION_ARG_FILENAME, &opt_output, "Write the TBBT trace to FILE", "FILE"},
    {"filter", 'f', 0, G_OPTION_ARG_STRING, &opt_filter,
     "Only read packets matching this BPF (pcap-filter) expression", "EXPR"},
    {"summary-json", 0, 0, G_OPTION_ARG_FILENAME, &opt_summary,
     "Write the counts (packets, pairs, loss, procedures) as JSON to FILE ('-' = stdout)", "FILE"},
    {"map", 'm', 0, G_OPTION_ARG_FILENAME, &opt_map,
     "Write the hierarchy map to FILE (default: TRACE.map; with --check of a trace, read it "
     "from there)", "FILE"},
    {"check", 0, 0, G_OPTION_ARG_NONE, &opt_check,
     "Only report replay mismatches: convert without correction (-o optional) and check the "
     "result against its map, or check a TBBT trace given as input", NULL},
    {"no-correct", 0, 0, G_OPTION_ARG_NONE, &opt_no_correct,
     "Do not insert corrective operations (mismatches are still counted)", NULL},
    {"seed", 0, 0, G_OPTION_ARG_INT64, &opt_seed,
     "Seed for the timestamps of corrective operations (default 1)", "N"},
    {"from-text", 0, 0, G_OPTION_ARG_FILENAME, &opt_from_text,
     "Turn the text form of a trace (tbbt-dump output) back into a binary trace", "TEXT"},
    {"reply-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &opt_timeout,
     "Seconds of capture time a call waits for its reply (default 30)", "SEC"},
    {"max-pending", 0, 0, G_OPTION_ARG_INT, &opt_max_pending,
     "Most calls waiting for replies at once (default 262144)", "N"},
    {"threads", 0, 0, G_OPTION_ARG_INT, &opt_threads,
     "Threads: 1, or 2 to read and pair captures on one and decode and write on the "
     "other, and in pass B to decode on one and model, correct and write on the other "
     "(default: 2 on a multi-core machine; the output is the same)", "N"},
    {"progress", 0, 0, G_OPTION_ARG_NONE, &opt_progress,
     "Draw a progress line on stderr even when it is not a terminal", NULL},
    {"no-progress", 0, 0, G_OPTION_ARG_NONE, &opt_no_progress, "Never draw a progress line", NULL},
    {"quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "Only print errors", NULL},
    {"verbose", 'v', 0, G_OPTION_ARG_NONE, &opt_verbose, "Print debugging details", NULL},
    {"version", 'V', 0, G_OPTION_ARG_NONE, &opt_version, "Print version information and exit",
     NULL},
    {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opt_inputs, NULL, "INPUT..."},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static int usage_error(const char *msg)
{
    return tbbt_cli_usage_error("tbbt-convert", msg);
}

static void print_version(void)
{
    printf("tbbt-convert (tbbt) %s\n", TBBT_VERSION);
    printf("%s; glib %u.%u.%u; zlib %s\n", pcap_lib_version(), glib_major_version,
           glib_minor_version, glib_micro_version, zlibVersion());
}

static int from_text(void)
{
    uint64_t line = 0;
    char why[256] = "";
    int rc = tbbt_trace_from_text_why(opt_from_text, opt_output, &line, why, sizeof(why));

    if (rc == TBBT_E_SYNTAX)
        return tbbt_cli_fail("cannot parse '%s' line %" G_GUINT64_FORMAT ": %s", opt_from_text,
                             (guint64)line, why[0] ? why : tbbt_strerror(rc));
    if (rc < 0)
        return tbbt_cli_fail("cannot convert '%s' to '%s': %s", opt_from_text, opt_output,
                             why[0] ? why : tbbt_strerror(rc));
    return TBBT_EXIT_OK;
}

static int check_trace(void)
{
    char err[1024] = "";
    int rc = tbbt_convert_check(opt_inputs[0], opt_map, opt_summary, opt_quiet, err, sizeof(err));

    if (rc < 0)
        return tbbt_cli_fail("%s", err[0] ? err : tbbt_strerror(rc));
    return TBBT_EXIT_OK;
}

static int convert(void)
{
    struct tbbt_convert_opts o;
    char err[1024] = "";
    int rc;

    tbbt_convert_opts_init(&o);
    o.inputs = (const char *const *)opt_inputs;
    o.n_inputs = (int)g_strv_length(opt_inputs);
    o.filter = opt_filter;
    o.output = opt_output;
    o.summary_json = opt_summary;
    o.reply_timeout_ns = (uint64_t)(opt_timeout * 1e9);
    o.max_pending = (uint32_t)opt_max_pending;
    o.threads = opt_threads;
    o.progress = !opt_quiet && !opt_no_progress && (opt_progress || isatty(STDERR_FILENO));
    o.map = opt_map;
    o.correct = !opt_no_correct;
    o.check = opt_check;
    o.quiet = opt_quiet;
    o.seed = (uint64_t)opt_seed;
    rc = tbbt_convert_run(&o, err, sizeof(err));
    if (rc == TBBT_E_TRUNC || rc == TBBT_E_DAMAGED) {
        if (err[0])
            tbbt_log(TBBT_LOG_WARN, "%s; the outputs hold what could be read", err);
        return TBBT_EXIT_DAMAGED;
    }
    if (rc < 0)
        return tbbt_cli_fail("%s", err[0] ? err : tbbt_strerror(rc));
    return TBBT_EXIT_OK;
}

int main(int argc, char **argv)
{
    int rc = tbbt_cli_parse(&(struct tbbt_cli_spec){
        .prog = "tbbt-convert", .param = "INPUT... - turn NFS packet captures into a TBBT trace",
        .entries = entries,
        .description =
            "Inputs are pcap or pcapng files or nfsdump text traces, optionally gzip-compressed;\n"
            "several captures are merged in time order, several text traces read in the order\n"
            "given. Writes TRACE and its hierarchy map TRACE.map.\n"
            "Exit status: 0 success, 1 bad input (no usable output), 2 usage error,\n"
            "3 converted, but the input was damaged (the outputs hold what could be read).\n"
            "See docs/tbbt-convert.md." }, &argc, &argv);

    if (rc)
        return rc;
    tbbt_log_init("tbbt-convert", opt_verbose ? TBBT_LOG_DEBUG
                                  : opt_quiet ? TBBT_LOG_ERROR : TBBT_LOG_WARN);
    if (opt_version) {
        print_version();
        rc = TBBT_EXIT_OK;
    } else if (opt_from_text) {
        rc = !opt_output ? usage_error("missing -o TRACE")
             : opt_inputs ? usage_error("--from-text takes no capture inputs")
             : from_text();
    } else if (!opt_inputs || !opt_inputs[0]) {
        rc = usage_error("no input files");
    } else if (opt_check && tbbt_convert_is_trace(opt_inputs[0])) {
        rc = opt_inputs[1] || opt_output ? usage_error("--check of a TBBT trace takes one "
                                                            "trace and no -o")
                                         : check_trace();
    } else if (!opt_output && !opt_check) {
        rc = usage_error("missing -o TRACE");
    } else if (opt_check && opt_output && strcmp(opt_output, "-") == 0) {
        rc = usage_error("--check reads back the trace it wrote: give -o a file, or no -o");
    } else if (opt_max_pending < 1 || opt_timeout <= 0) {
        rc = usage_error("--max-pending and --reply-timeout must be positive");
    } else if (opt_threads < 0) {
        rc = usage_error("--threads must be 1 or more (0: automatic)");
    } else {
        rc = convert();
    }
    return rc;
}
