/* SPDX-License-Identifier: MIT */
/*
 * gnuplot figures (see gnuplot.h): the data and script files of one figure, and the
 * gnuplot run that draws it.  Moved here from tbbt-stats' plot.c so that tbbt-compare
 * draws its figures the same way.
 */
#include "util/gnuplot.h"

#include <errno.h>
#include <string.h>

#include "util/outfile.h"
#include "util/util.h"

#define TERM_SIZE "size 900,540"

bool tbbt_gnuplot_available(void)
{
    char *p = g_find_program_in_path("gnuplot");
    bool ok = p != NULL;
    g_free(p);
    return ok;
}

int tbbt_gnuplot_mkdir(const char *dir, char *err, size_t errlen)
{
    if (g_mkdir_with_parents(dir, 0777) != 0) {
        int e = errno;
        tbbt_errbuf(err, errlen, "cannot create '%s': %s", dir, strerror(e));
        return -e;
    }
    return 0;
}

/* Writes text to DIR/name; 0 or -EIO with err. */
static int put_file(const char *dir, const char *name, const GString *text, char *err,
                    size_t errlen)
{
    char *path = g_build_filename(dir, name, NULL);
    int rc = tbbt_outfile_write_all(path, text->str, text->len, err, errlen);

    g_free(path);
    return rc < 0 ? -EIO : 0;
}

/* Runs gnuplot NAME.gp in dir; 0 or -EIO with gnuplot's first error line in err. */
static int run_gnuplot(const char *dir, const char *script, char *err, size_t errlen)
{
    char *argv[] = {"gnuplot", (char *)script, NULL};
    char *out = NULL, *errs = NULL;
    int status = 0;
    GError *gerr = NULL;
    if (!g_spawn_sync(dir, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out, &errs, &status,
                      &gerr)) {
        tbbt_errbuf(err, errlen, "cannot run gnuplot: %s", gerr->message);
        g_error_free(gerr);
        return -EIO;
    }
    int rc = 0;
    if (!g_spawn_check_wait_status(status, NULL)) {
        char *nl = errs ? strchr(g_strstrip(errs), '\n') : NULL;
        if (nl)
            *nl = '\0';
        tbbt_errbuf(err, errlen, "gnuplot failed on '%s/%s': %s", dir, script,
                    errs && *errs ? errs : "no message");
        rc = -EIO;
    }
    g_free(out);
    g_free(errs);
    return rc;
}

int tbbt_gnuplot_figure(const char *dir, const char *tool, const char *name, const GString *dat,
                        const char *setup, const char *plot_cmd, bool has_data, char *err,
                        size_t errlen)
{
    char *datname = g_strdup_printf("%s.dat", name), *gpname = g_strdup_printf("%s.gp", name);
    GString *gp = g_string_new(NULL);
    int rc;
    g_string_append_printf(gp, "# %s figure '%s': gnuplot %s\n", tool, name, gpname);
    g_string_append_printf(gp, "set datafile commentschars '#'\n%s\n", setup);
    if (!has_data)
        g_string_append(gp, "unset logscale\nset label 1 'no data' at graph 0.45, graph 0.5\n");
    const char *cmd = has_data ? plot_cmd : "plot [0:1][0:1] 1/0 notitle";
    g_string_append_printf(gp, "set terminal png %s\nset output '%s.png'\n%s\n", TERM_SIZE, name,
                           cmd);
    g_string_append_printf(gp, "set terminal svg %s\nset output '%s.svg'\n%s\nset output\n",
                           TERM_SIZE, name, cmd);
    rc = put_file(dir, datname, dat, err, errlen);
    if (rc == 0)
        rc = put_file(dir, gpname, gp, err, errlen);
    if (rc == 0)
        rc = run_gnuplot(dir, gpname, err, errlen);
    g_string_free(gp, TRUE);
    g_free(datname);
    g_free(gpname);
    return rc;
}
