/* SPDX-License-Identifier: MIT */
/*
 * tbbt-init: builds the initial file system image of a hierarchy map under a
 * root directory (local system calls, or NFSv3 calls to a server with --server),
 * and measures aging (--measure).  Launched by mpirun, each rank builds its share of
 * the clones (docs/tbbt-init.md "Under MPI"); only rank 0 prints and writes files.
 */
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "aging/image.h"
#include "aging/measure.h"
#include "mpi/tbbt-mpi.h"
#include "ns/ns.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/util.h"

#define PROG "tbbt-init"

/* The option values (init-options.def); tbbt_cli_main() frees the strings. */
static gchar *opt_measure, *opt_map, *opt_root, *opt_manifest, *opt_scope, *opt_sizes;
static gdouble opt_fill, opt_dir_ratio = -1, opt_distortion = 0.5, opt_merge = 0.5;
static gboolean opt_no_fragment_free, opt_spread;
static gint opt_spacers, opt_syn_appends, opt_filler_appends, opt_large_appends;
static gchar *opt_large_size, *opt_spacer_size;
static gboolean opt_json, opt_force, opt_check;
static struct tbbt_cli_common opt_common;
static gint opt_clones = 1, opt_appends = 1;
static gint64 opt_seed = 1;
static gchar *opt_server, *opt_export;
static gint opt_nfs_port, opt_mount_port, opt_outstanding, opt_connections, opt_timeout;

static const GOptionEntry entries[] = {
#include "aging/init-options.def"
    TBBT_CLI_END,
};

static int measure(void)
{
    struct tbbt_measure m;
    char err[512] = "";
    int rc = tbbt_measure_tree(opt_measure, &m, err, sizeof(err));

    if (rc < 0)
        return tbbt_cli_fail("%s", err[0] ? err : tbbt_strerror(rc));
    tbbt_measure_print(&m, opt_json, stdout);
    return TBBT_EXIT_OK;
}

/* "64M", "2G", "4096": bytes; false if it does not parse. */
static bool parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    guint64 v = g_ascii_strtoull(s, &end, 10);
    uint64_t mul = 1;

    if (end == s)
        return false;
    switch (*end) {
    case 'k': case 'K': mul = 1ull << 10; end++; break;
    case 'm': case 'M': mul = 1ull << 20; end++; break;
    case 'g': case 'G': mul = 1ull << 30; end++; break;
    case 't': case 'T': mul = 1ull << 40; end++; break;
    default: break;
    }
    if (*end || (v && mul > UINT64_MAX / v))
        return false;
    *out = v * mul;
    return true;
}

/* --check: the map read and validated as a build would, and nothing made. */
static int check_map(void)
{
    struct tbbt_ns_map_info mi;
    char err[1024] = "";

    if (tbbt_ns_map_check(opt_map, &mi, err, sizeof(err)) < 0)
        return tbbt_cli_fail("%s", err);
    char *sum = mi.summed ? g_strdup_printf("%08" PRIx32, mi.crc) : g_strdup("none");
    char *trace = mi.trace_known ? g_strdup_printf("crc32 %08" PRIx32 " ops %" PRIu64,
                                                   mi.trace.crc, mi.trace.ops)
                                 : g_strdup("unknown");
    printf("tbbt-init: map %s: version %d, %" PRIu64 " entries, %" PRIu64 " objects, "
           "checksum %s, trace %s, digest %08" PRIx32 "\n", opt_map, mi.version, mi.entries,
           mi.objects, sum, trace, mi.digest);
    g_free(sum);
    g_free(trace);
    return TBBT_EXIT_OK;
}

static int build(void)
{
    struct tbbt_image_opts o;
    struct tbbt_image_stats st;
    char err[1024] = "";
    char *manifest = opt_manifest ? g_strdup(opt_manifest)
                                  : g_strconcat(opt_map, ".manifest", NULL);
    int rc;

    tbbt_image_opts_init(&o);
    o.map = opt_map;
    o.root = opt_root ? opt_root : opt_export;
    o.server = opt_server;
    o.export_path = opt_export;
    o.nfs_port = (uint16_t)opt_nfs_port;
    o.mount_port = (uint16_t)opt_mount_port;
    o.outstanding = (uint32_t)opt_outstanding;
    o.connections = (uint32_t)opt_connections;
    o.timeout_ms = opt_timeout * 1000;
    o.manifest = manifest;
    o.clones = (uint32_t)opt_clones;
    o.seed = (uint64_t)opt_seed;
    o.appends = (uint32_t)opt_appends;
    o.force = opt_force;
    o.fill = opt_fill;
    o.sizes = opt_sizes;
    o.dir_ratio = opt_dir_ratio;
    o.distortion = opt_distortion;
    o.merge = opt_merge;
    o.fragment_free = !opt_no_fragment_free;
    o.spread = opt_spread;
    o.spacers = (uint32_t)MAX(opt_spacers, 0);
    o.synthetic_appends = (uint32_t)MAX(opt_syn_appends, 0);
    o.filler_appends = (uint32_t)MAX(opt_filler_appends, 0);
    o.large_appends = (uint32_t)MAX(opt_large_appends, 0);
    if (opt_spacer_size && !parse_bytes(opt_spacer_size, &o.spacer_size)) {
        g_free(manifest);
        fprintf(stderr, "tbbt-init: --spacer-size: '%s' is not a size (e.g. 64K)\n",
                opt_spacer_size);
        return TBBT_EXIT_USAGE;
    }
    if (opt_large_size && !parse_bytes(opt_large_size, &o.large_size)) {
        g_free(manifest);
        fprintf(stderr, "tbbt-init: --large-size: '%s' is not a size (e.g. 1M)\n",
                opt_large_size);
        return TBBT_EXIT_USAGE;
    }
    o.progress = tbbt_cli_progress(&opt_common) && tbbt_mpi_rank() == 0;
    o.rank = (uint32_t)tbbt_mpi_rank();
    o.ranks = (uint32_t)tbbt_mpi_size();
    if (opt_scope && !parse_bytes(opt_scope, &o.scope)) {
        g_free(manifest);
        fprintf(stderr, "tbbt-init: --scope: '%s' is not a size (e.g. 64M)\n", opt_scope);
        return TBBT_EXIT_USAGE;
    }
    rc = tbbt_image_build(&o, &st, err, sizeof(err));
    if (rc < 0) {
        tbbt_log(TBBT_LOG_ERROR, "%s", err[0] ? err : tbbt_strerror(rc));
        g_free(manifest);
        return TBBT_EXIT_FAIL;
    }
    if (!opt_common.quiet && o.ranks > 1)
        printf("tbbt-init: %" PRIu32 " clones built by %" PRIu32 " MPI ranks\n", o.clones,
               o.ranks);
    if (!opt_common.quiet)
        printf("tbbt-init: %" G_GUINT64_FORMAT " directories, %" G_GUINT64_FORMAT " files, %"
               G_GUINT64_FORMAT " hard links, %" G_GUINT64_FORMAT " symlinks, %"
               G_GUINT64_FORMAT " others; %.1f MB in %" G_GUINT64_FORMAT " writes, %.2f s; "
               "manifest %s\n", (guint64)st.dirs, (guint64)st.files, (guint64)st.links,
               (guint64)st.symlinks, (guint64)st.others, (double)st.bytes / 1e6,
               (guint64)st.appends, st.seconds, manifest);
    if (!opt_common.quiet && opt_fill > 0)
        printf("tbbt-init: %" G_GUINT64_FORMAT " synthetic files (%.1f MB) in %"
               G_GUINT64_FORMAT " new directories, %" G_GUINT64_FORMAT " fillers (%.1f MB) "
               "deleted; file system %.2f %% full (target %.2f %%)\n",
               (guint64)st.synthetic_files, (double)st.synthetic_bytes / 1e6,
               (guint64)st.synthetic_dirs, (guint64)st.fillers, (double)st.filler_bytes / 1e6,
               st.utilization * 100, opt_fill * 100);
    g_free(manifest);
    return TBBT_EXIT_OK;
}

/*
 * Under MPI, ranks other than 0 print nothing (with --verbose, their own log lines):
 * rank 0 prints the one summary, or the first failing rank's reason.
 */
static void quiet_rank(void)
{
    int fd;

    if (tbbt_mpi_rank() == 0 || opt_common.verbose || (fd = open("/dev/null", O_WRONLY)) < 0)
        return;
    fflush(stdout);
    fflush(stderr);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

/* Under MPI: fn on rank 0 only (the others wait), every rank exiting with its code. */
static int on_rank0(int (*fn)(void))
{
    int rc = tbbt_mpi_rank() == 0 ? fn() : TBBT_EXIT_OK;

    if (tbbt_mpi_bcast(&rc, sizeof(rc)) < 0)
        return tbbt_cli_fail("MPI broadcast failed: %s", tbbt_mpi_error());
    return rc;
}

/* What the options ask for: the aging measures, the map's check or the build; the exit code. */
static int run(void)
{
    quiet_rank();
    if (opt_measure && opt_server) {
        fprintf(stderr, PROG ": --measure reads block maps (FIEMAP, GETFSMAP) of a local file "
                        "system: it cannot work through --server\n");
        return TBBT_EXIT_USAGE;
    }
    if (opt_measure)
        return on_rank0(measure);
    if (opt_check && opt_map)
        return on_rank0(check_map);
    if (!opt_map || (!opt_root && !opt_server))
        return tbbt_cli_usage("--map MAP and --root DIR are needed (or --measure DIR)");
    if (!opt_server != !opt_export) {
        fprintf(stderr, PROG ": --server HOST and --export PATH go together\n");
        return TBBT_EXIT_USAGE;
    }
    if (opt_nfs_port < 0 || opt_nfs_port > 65535 || opt_mount_port < 0 ||
        opt_mount_port > 65535 || opt_outstanding < 0 || opt_connections < 0 ||
        opt_connections > 16 || opt_timeout < 0) {
        fprintf(stderr, PROG ": --nfs-port and --mount-port must be ports, --connections 0 to "
                        "16, --outstanding and --timeout 0 or more\n");
        return TBBT_EXIT_USAGE;
    }
    if (opt_clones < 1 || opt_appends < 1 || opt_spacers < 0 || opt_syn_appends < 0 ||
        opt_filler_appends < 0 || opt_large_appends < 0) {
        fprintf(stderr, PROG ": --clones and --appends must be 1 or more, the other counts 0 "
                        "or more\n");
        return TBBT_EXIT_USAGE;
    }
    if (opt_fill < 0 || opt_fill >= 1 || opt_distortion < 0 || opt_distortion > 1 ||
        opt_merge < 0 || opt_merge > 1) {
        fprintf(stderr, PROG ": --fill must be in [0, 1), --distortion and --merge in [0, 1]\n");
        return TBBT_EXIT_USAGE;
    }
    if (tbbt_mpi_size() > opt_clones) {     /* the same decision on every rank */
        fprintf(stderr, PROG ": %d MPI ranks for --clones %d: each rank builds whole clones, "
                "so run at most as many ranks as clones\n", tbbt_mpi_size(), opt_clones);
        return TBBT_EXIT_USAGE;
    }
    return build();
}

int main(int argc, char **argv)
{
    int rc;

    if (tbbt_mpi_init(&argc, &argv) < 0) {     /* under mpirun only; else inactive */
        fprintf(stderr, PROG ": cannot start MPI: %s\n", tbbt_mpi_error());
        return TBBT_EXIT_FAIL;
    }
    rc = tbbt_cli_main(&(struct tbbt_cli_spec){
        .prog = PROG, .param = "- build and age the initial image of a trace",
        .entries = entries, .log_options = true, .common = &opt_common,
        .description =
            "Local:  tbbt-init --map MAP --root DIR [OPTIONS]\n"
            "NFS:    tbbt-init --map MAP --server HOST --export PATH [--root SERVER-PATH] "
            "[OPTIONS]\n"
            "Aging:  tbbt-init --measure DIR [--json]\n"
            "Check:  tbbt-init --map MAP --check\n"
            "Exit status: 0 success, 1 failure, 2 usage error.\n"
            "Under MPI (mpirun -np R, R <= N): rank r builds clones r, r + R, ...\n"
            "See docs/tbbt-init.md." }, argc, argv, run);
    tbbt_mpi_finalize();
    return rc;
}
