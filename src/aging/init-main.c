/* SPDX-License-Identifier: MIT */
/*
 * tbbt-init: builds the initial file system image of a hierarchy map under a
 * root directory, and measures aging (--measure).  docs/tbbt-init.md.
 */
#include <glib.h>
#include <stdio.h>

#include "aging/measure.h"
#include "tbbt-version.h"
#include "util/exit-codes.h"
#include "util/util.h"

static gchar *opt_measure;
static gboolean opt_json, opt_version, opt_quiet, opt_verbose;

static const GOptionEntry entries[] = {
    {"measure", 0, 0, G_OPTION_ARG_FILENAME, &opt_measure,
     "Report the aging metrics of the tree under DIR and exit", "DIR"},
    {"json", 0, 0, G_OPTION_ARG_NONE, &opt_json, "With --measure: print JSON", NULL},
    {"quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "Only print errors", NULL},
    {"verbose", 'v', 0, G_OPTION_ARG_NONE, &opt_verbose, "Print debugging details", NULL},
    {"version", 'V', 0, G_OPTION_ARG_NONE, &opt_version, "Print version information and exit",
     NULL},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

static int measure(void)
{
    struct tbbt_measure m;
    char err[512] = "";
    int rc = tbbt_measure_tree(opt_measure, &m, err, sizeof(err));

    if (rc < 0) {
        tbbt_log(TBBT_LOG_ERROR, "%s", err[0] ? err : tbbt_strerror(rc));
        return TBBT_EXIT_FAIL;
    }
    tbbt_measure_print(&m, opt_json, stdout);
    return TBBT_EXIT_OK;
}

int main(int argc, char **argv)
{
    GOptionContext *ctx = g_option_context_new("- build and age the initial image of a trace");
    GError *gerr = NULL;
    int rc;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, "Exit status: 0 success, 1 failure, 2 usage error.\n"
                                           "See docs/tbbt-init.md.");
    if (!g_option_context_parse(ctx, &argc, &argv, &gerr)) {
        fprintf(stderr, "tbbt-init: %s\nTry 'tbbt-init --help' for more information.\n",
                gerr->message);
        g_error_free(gerr);
        g_option_context_free(ctx);
        return TBBT_EXIT_USAGE;
    }
    tbbt_log_init("tbbt-init", opt_verbose ? TBBT_LOG_DEBUG
                               : opt_quiet ? TBBT_LOG_ERROR : TBBT_LOG_WARN);
    if (opt_version) {
        printf("tbbt-init (tbbt) %s\n", TBBT_VERSION);
        rc = TBBT_EXIT_OK;
    } else if (opt_measure) {
        rc = measure();
    } else {
        fprintf(stderr, "tbbt-init: building images is not implemented yet\n");
        rc = TBBT_EXIT_USAGE;
    }
    g_option_context_free(ctx);
    return rc;
}
