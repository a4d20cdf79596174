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
#include "tbbt-version.h"

#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct dump_opts {
    char *from_text;
    char *output;
    gboolean check;
    gboolean version;
    char **args;
};

static int usage_error(const char *msg)
{
    return tbbt_cli_usage_error("tbbt-dump", msg);
}

static int print_version(void)
{
    printf("tbbt-dump (tbbt) %s\n", TBBT_VERSION);
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

int main(int argc, char **argv)
{
    struct dump_opts o = {0};
    GOptionEntry entries[] = {
        {"from-text", 0, 0, G_OPTION_ARG_FILENAME, &o.from_text,
         "Convert the text form TEXT back to a binary trace (needs -o)", "TEXT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &o.output,
         "Write to OUT instead of stdout (binary with --from-text, else text)", "OUT"},
        {"check", 0, 0, G_OPTION_ARG_NONE, &o.check,
         "Validate the whole trace without printing; exit 0 if it is valid", NULL},
        {"version", 0, 0, G_OPTION_ARG_NONE, &o.version, "Print versions and exit", NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.args, NULL, "TRACE"},
        {NULL, 0, 0, 0, NULL, NULL, NULL},
    };
    int nargs, rc;

    setlocale(LC_CTYPE, "");
    tbbt_log_init("tbbt-dump", TBBT_LOG_WARN);
    rc = tbbt_cli_parse(&(struct tbbt_cli_spec){
        .prog = "tbbt-dump", .entries = entries,
        .summary = "Print a TBBT trace as text, check it, or convert the text form back to "
                   "the binary trace.",
        .description = "Forms:\n"
                       "  tbbt-dump [-o OUT] TRACE          print TRACE as text (\"-\" = stdin)\n"
                       "  tbbt-dump --check TRACE           validate TRACE, print nothing\n"
                       "  tbbt-dump --from-text TEXT -o OUT text form back to the binary trace\n"
                       "\nExit status: 0 success, 1 bad input, 2 usage error.\n"
                       "Formats: docs/trace-format.md.\n" }, &argc, &argv);
    if (rc)
        goto out;
    nargs = o.args ? (int)g_strv_length(o.args) : 0;
    if (o.version)
        rc = print_version();
    else if (o.from_text && (nargs || o.check))
        rc = usage_error("--from-text takes no TRACE argument and no --check");
    else if (o.from_text && !o.output)
        rc = usage_error("--from-text needs -o OUT");
    else if (o.from_text)
        rc = from_text(&o);
    else if (nargs != 1)
        rc = usage_error("expected exactly one TRACE argument");
    else if (o.check && o.output)
        rc = usage_error("--check prints nothing: -o makes no sense with it");
    else if (o.check)
        rc = dump(o.args[0], NULL);
    else
        rc = dump_to(&o);
out:
    g_free(o.from_text);
    g_free(o.output);
    g_strfreev(o.args);
    return rc;
}
