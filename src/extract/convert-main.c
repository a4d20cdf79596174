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
#include <zlib.h>

#include "extract/extract.h"
#include "ns/ns.h"
#include "trace/trace.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/util.h"

#define PROG "tbbt-convert"

/* The option values (convert-options.def); tbbt_cli_main() frees the strings. */
static gchar *opt_output, *opt_filter, *opt_summary, *opt_from_text, *opt_map;
static gboolean opt_check, opt_no_correct;
static gint64 opt_seed = 1;
static gdouble opt_timeout = 30.0;
static gint opt_max_pending = 262144;
static gint opt_threads = 0;
static struct tbbt_cli_common opt_common;
static gchar **opt_inputs, **opt_v4_exports;

static const GOptionEntry entries[] = {
#include "extract/convert-options.def"
    TBBT_CLI_END,
};

static int print_version(void)
{
    tbbt_cli_print_version_line(PROG);
    printf("%s; glib %u.%u.%u; zlib %s\n", pcap_lib_version(), glib_major_version,
           glib_minor_version, glib_micro_version, zlibVersion());
    return TBBT_EXIT_OK;
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
    int rc = tbbt_convert_check(opt_inputs[0], opt_map, opt_summary, opt_common.quiet, err,
                                sizeof(err));

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
    o.progress = tbbt_cli_progress(&opt_common);
    o.map = opt_map;
    o.correct = !opt_no_correct;
    o.check = opt_check;
    o.quiet = opt_common.quiet;
    o.seed = (uint64_t)opt_seed;
    o.v4_exports = (const char *const *)opt_v4_exports;
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

/* Each --v4-export PSEUDO=PATH well-formed: else a usage error (exit 2). */
static int check_v4_exports(void)
{
    char why[256];

    for (gchar **s = opt_v4_exports; s && *s; s++)
        if (tbbt_ns_v4_export_check(*s, why, sizeof(why)) < 0) {
            char *msg = g_strdup_printf("--v4-export '%s': %s", *s, why);
            int rc = tbbt_cli_usage(msg);
            g_free(msg);
            return rc;
        }
    return TBBT_EXIT_OK;
}

/* The form the options ask for; the exit code. */
static int run(void)
{
    int rc;

    if (opt_from_text)
        return !opt_output ? tbbt_cli_usage("missing -o TRACE")
               : opt_inputs ? tbbt_cli_usage("--from-text takes no capture inputs")
               : from_text();
    if (!opt_inputs || !opt_inputs[0])
        return tbbt_cli_usage("no input files");
    if (opt_check && tbbt_convert_is_trace(opt_inputs[0]))
        return opt_inputs[1] || opt_output
                   ? tbbt_cli_usage("--check of a TBBT trace takes one trace and no -o")
                   : check_trace();
    if (!opt_output && !opt_check)
        return tbbt_cli_usage("missing -o TRACE");
    if (opt_check && opt_output && strcmp(opt_output, "-") == 0)
        return tbbt_cli_usage("--check reads back the trace it wrote: give -o a file, or no -o");
    if (opt_max_pending < 1 || opt_timeout <= 0)
        return tbbt_cli_usage("--max-pending and --reply-timeout must be positive");
    if (opt_threads < 0)
        return tbbt_cli_usage("--threads must be 1 or more (0: automatic)");
    if ((rc = check_v4_exports()) != TBBT_EXIT_OK)
        return rc;
    return convert();
}

int main(int argc, char **argv)
{
    return tbbt_cli_main(&(struct tbbt_cli_spec){
        .prog = PROG, .param = "INPUT... - turn NFS packet captures into a TBBT trace",
        .entries = entries, .log_options = true, .common = &opt_common,
        .print_version = print_version,
        .description =
            "Inputs are pcap or pcapng files or nfsdump text traces, optionally gzip-compressed;\n"
            "several captures are merged in time order, several text traces read in the order\n"
            "given. Writes TRACE and its hierarchy map TRACE.map.\n"
            "Exit status: 0 success, 1 bad input (no usable output), 2 usage error,\n"
            "3 converted, but the input was damaged (the outputs hold what could be read).\n"
            "See docs/tbbt-convert.md." }, argc, argv, run);
}
