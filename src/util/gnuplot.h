/* SPDX-License-Identifier: MIT */
/*
 * gnuplot figures for the tools' --plot DIR (tbbt-stats, tbbt-compare): one figure is a
 * data file NAME.dat (whitespace-separated columns, '#' header), a script NAME.gp that
 * draws it, and the images NAME.png and NAME.svg that gnuplot (found on PATH) draws
 * when the script runs inside DIR.  The scripts stay, so a user can restyle a figure and
 * run it again (`cd DIR && gnuplot NAME.gp`).  No plotting happens here beyond running
 * gnuplot; the callers write the data and the plot commands.
 *
 * Not thread-safe (g_spawn_sync); call from the tool's main thread.
 */
#ifndef TBBT_UTIL_GNUPLOT_H
#define TBBT_UTIL_GNUPLOT_H

#include <glib.h>
#include <stdbool.h>
#include <stddef.h>

/* True when a gnuplot executable is on PATH. */
bool tbbt_gnuplot_available(void);

/* Creates dir (and its parents); 0, or -errno with a one-line reason in err. */
int tbbt_gnuplot_mkdir(const char *dir, char *err, size_t errlen);

/*
 * Writes DIR/NAME.dat (dat, borrowed) and DIR/NAME.gp, then runs gnuplot on the script
 * in dir to draw NAME.png and NAME.svg (900x540, the plain png and svg terminals).  The
 * script is a comment naming tool and figure, `setup` (title, axes, styles), and
 * `plot_cmd` once per terminal; with has_data false it draws an empty frame labelled
 * "no data" instead of plot_cmd.  Returns 0, or -EIO with a one-line reason in err (a
 * file write failed, gnuplot could not run, or gnuplot's first error line).
 */
int tbbt_gnuplot_figure(const char *dir, const char *tool, const char *name, const GString *dat,
                        const char *setup, const char *plot_cmd, bool has_data, char *err,
                        size_t errlen);

#endif
