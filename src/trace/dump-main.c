/* SPDX-License-Identifier: MIT */
/*
 * tbbt-dump: prints a binary TBBT trace as its text form, checks one
 * (--check), or turns the text form back into the identical binary trace
 * (--from-text).  The format is in docs/trace-format.md, the command line
 * in docs/tbbt-dump.md.  A thin shell over the trace module.
 */
#include "trace/trace.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/outfile.h"
#include "util/util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define PROG "tbbt-dump"

/* The option values (dump-options.def), owned here until tbbt_cli_main() frees them. */
static struct dump_opts {
    char *from_text;
    char *output;
    gboolean check;
    struct tbbt_cli_common common;
    char **args;
} opts;

static const GOptionEntry entries[] = {
#include "trace/dump-options.def"
    TBBT_CLI_END,
};

static int print_version(void)
{
    tbbt_cli_print_version_line(PROG);
    printf("trace format %d.%d\n", TBBT_TRACE_MAJOR, TBBT_TRACE_MINOR);
    printf("glib %u.%u.%u, zlib %s\n", glib_major_version, glib_minor_version,
           glib_micro_version, zlibVersion());
    return TBBT_EXIT_OK;
}

static int read_failed(const char *path, int rc, struct tbbt_trace_reader *r)
{
    if (rc > TBBT_E_BASE && rc < 0) /* -errno: no position to report */
        return tbbt_cli_fail("cannot read trace '%s': %s", path, tbbt_strerror(rc));
    return tbbt_cli_fail("cannot read trace '%s': %s at byte %" PRIu64, path, tbbt_strerror(rc),
                         r ? tbbt_trace_reader_offset(r) : 0);
}

static int from_text(const struct dump_opts *o)
{
    char why[256];
    uint64_t line;
    int rc = tbbt_trace_from_text_why(o->from_text, o->output, &line, why, sizeof(why));

    if (rc == 0)
        return TBBT_EXIT_OK;
    if (rc == TBBT_E_SYNTAX || rc == TBBT_E_VERSION)
        return tbbt_cli_fail("cannot convert '%s': %s at line %" PRIu64 ": %s", o->from_text,
                             tbbt_strerror(rc), line, why);
    return tbbt_cli_fail("cannot convert '%s' to '%s': %s", o->from_text, o->output,
                         tbbt_strerror(rc));
}

/* Reads the whole trace; prints its text form to out unless out is NULL. */
static int dump(const char *path, FILE *out)
{
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    int rc;

    if (!(r = tbbt_trace_reader_open(path, &rc)))
        return read_failed(path, rc, NULL);
    if (out) {
        rc = tbbt_trace_dump_reader(r, out);
    } else {
        tbbt_trace_rec_init(&rec);
        while ((rc = tbbt_trace_reader_next(r, &rec)) > 0)
            ;
        tbbt_trace_rec_fini(&rec);
    }
    if (rc < 0)
        rc = read_failed(path, rc, r);
    tbbt_trace_reader_close(r);
    return rc;
}

static int dump_to(const struct dump_opts *o)
{
    const char *path = o->args[0];
    struct tbbt_outfile *of;
    char err[512];
    FILE *out;
    int rc = 0;

    /* the text goes aside and replaces an existing OUT only when the dump succeeded */
    if (!(of = tbbt_outfile_new(o->output ? o->output : "-", 0, &rc, err, sizeof(err))) ||
        !(out = tbbt_outfile_stream(of, &rc, err, sizeof(err)))) {
        tbbt_log(TBBT_LOG_ERROR, "%s", err);
        tbbt_outfile_abort(of);
        return TBBT_EXIT_FAIL;
    }
    rc = dump(path, out);
    if (rc != TBBT_EXIT_OK) {
        tbbt_outfile_abort(of);
        return rc;
    }
    if (tbbt_outfile_commit(of, err, sizeof(err)) < 0)
        return tbbt_cli_fail("%s", err);
    return TBBT_EXIT_OK;
}

/* The form the options ask for; the exit code. */
static int run(void)
{
    const struct dump_opts *o = &opts;
    int nargs = o->args ? (int)g_strv_length(o->args) : 0;

    if (o->from_text && (nargs || o->check))
        return tbbt_cli_usage("--from-text takes no TRACE argument and no --check");
    if (o->from_text && !o->output)
        return tbbt_cli_usage("--from-text needs -o OUT");
    if (o->from_text)
        return from_text(o);
    if (nargs != 1)
        return tbbt_cli_usage("expected exactly one TRACE argument");
    if (o->check && o->output)
        return tbbt_cli_usage("--check prints nothing: -o makes no sense with it");
    return o->check ? dump(o->args[0], NULL) : dump_to(o);
}

int main(int argc, char **argv)
{
    return tbbt_cli_main(&(struct tbbt_cli_spec){
        .prog = PROG, .entries = entries, .locale = true, .common = &opts.common,
        .print_version = print_version,
        .summary = "Print a TBBT trace as text, check it, or convert the text form back to "
                   "the binary trace.",
        .description = "Forms:\n"
                       "  tbbt-dump [-o OUT] TRACE          print TRACE as text (\"-\" = stdin)\n"
                       "  tbbt-dump --check TRACE           validate TRACE, print nothing\n"
                       "  tbbt-dump --from-text TEXT -o OUT text form back to the binary trace\n"
                       "\nExit status: 0 success, 1 bad input, 2 usage error.\n"
                       "Formats: docs/trace-format.md.\n" }, argc, argv, run);
}
