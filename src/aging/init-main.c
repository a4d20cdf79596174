/* SPDX-License-Identifier: MIT */
/*
 * tbbt-init: builds the initial file system image of a hierarchy map under a
 * root directory (local system calls, or NFSv3 calls to a server with --server),
 * and measures aging (--measure).  docs/tbbt-init.md.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "aging/image.h"
#include "aging/measure.h"
#include "ns/ns.h"
#include "tbbt-version.h"
#include "util/cli.h"
#include "util/exit-codes.h"
#include "util/util.h"

static gchar *opt_measure, *opt_map, *opt_root, *opt_manifest, *opt_scope, *opt_sizes;
static gdouble opt_fill, opt_dir_ratio = -1, opt_distortion = 0.5, opt_merge = 0.5;
static gboolean opt_no_fragment_free, opt_spread;
static gint opt_spacers, opt_syn_appends, opt_filler_appends, opt_large_appends;
static gchar *opt_large_size, *opt_spacer_size;
static gboolean opt_json, opt_version, opt_quiet, opt_verbose, opt_force, opt_progress;
static gboolean opt_no_progress, opt_check;
static gint opt_clones = 1, opt_appends = 1;
static gint64 opt_seed = 1;
static gchar *opt_server, *opt_export;
static gint opt_nfs_port, opt_mount_port, opt_outstanding, opt_connections, opt_timeout;

static const GOptionEntry entries[] = {
    {"map", 'm', 0, G_OPTION_ARG_FILENAME, &opt_map, "Hierarchy map of the trace (tbbt-convert)",
     "MAP"},
    {"root", 'r', 0, G_OPTION_ARG_FILENAME, &opt_root,
     "Directory to build the image in (empty, or holding an earlier tbbt-init image); with "
     "--server its absolute path on the server, under --export (default: the export)", "DIR"},
    {"server", 0, 0, G_OPTION_ARG_STRING, &opt_server,
     "Build through NFSv3 calls to this server (the server makes every object) instead of "
     "local system calls", "HOST"},
    {"export", 'e', 0, G_OPTION_ARG_STRING, &opt_export,
     "With --server: the path to MOUNT (for NFSv3 the export's real path)", "PATH"},
    {"nfs-port", 0, 0, G_OPTION_ARG_INT, &opt_nfs_port,
     "With --server: NFS port (default: ask the portmapper)", "PORT"},
    {"mount-port", 0, 0, G_OPTION_ARG_INT, &opt_mount_port,
     "With --server: MOUNT port (default: ask the portmapper)", "PORT"},
    {"outstanding", 0, 0, G_OPTION_ARG_INT, &opt_outstanding,
     "With --server: NFS calls in flight (default 128)", "N"},
    {"connections", 0, 0, G_OPTION_ARG_INT, &opt_connections,
     "With --server: TCP connections to the server (default 2)", "N"},
    {"timeout", 0, 0, G_OPTION_ARG_INT, &opt_timeout,
     "With --server: seconds a call may go unanswered before the build fails (default 30)",
     "S"},
    {"check", 0, 0, G_OPTION_ARG_NONE, &opt_check,
     "Only check the map (checksum, every field, the rules across lines) and print what it "
     "holds; build nothing (exit 0 valid, 1 not)", NULL},
    {"manifest", 0, 0, G_OPTION_ARG_FILENAME, &opt_manifest,
     "Manifest to write (default MAP.manifest; must be outside DIR)", "FILE"},
    {"clones", 'n', 0, G_OPTION_ARG_INT, &opt_clones,
     "Independent copies of the image (N > 1: DIR/tbbt-clone-0 ...) for spatial scaling", "N"},
    {"seed", 's', 0, G_OPTION_ARG_INT64, &opt_seed, "Seed of every random choice (default 1)",
     "S"},
    {"scope", 0, 0, G_OPTION_ARG_STRING, &opt_scope,
     "Aging: interleaving scope, bytes of files written interleaved (e.g. 64M; 0: no aging)",
     "BYTES"},
    {"appends", 0, 0, G_OPTION_ARG_INT, &opt_appends,
     "Aging: appends per file, each its own open/write/close (default 1: no aging)", "N"},
    {"fill", 0, 0, G_OPTION_ARG_DOUBLE, &opt_fill,
     "Add synthetic objects until the file system is this full (0 < F < 1; default: none)",
     "F"},
    {"sizes", 0, 0, G_OPTION_ARG_FILENAME, &opt_sizes,
     "Size distribution of synthetic files: 'SIZE WEIGHT' lines (default: the map's sizes)",
     "FILE"},
    {"dir-ratio", 0, 0, G_OPTION_ARG_DOUBLE, &opt_dir_ratio,
     "New directories per synthetic file (default: the map's directories per file)", "R"},
    {"distortion", 0, 0, G_OPTION_ARG_DOUBLE, &opt_distortion,
     "0: synthetic objects spread evenly over directories; 1: they go where there are "
     "already many (default 0.5)", "D"},
    {"merge", 0, 0, G_OPTION_ARG_DOUBLE, &opt_merge,
     "Share of synthetic objects put into the map's directories (default 0.5)", "M"},
    {"no-fragment-free", 0, 0, G_OPTION_ARG_NONE, &opt_no_fragment_free,
     "With aging: no filler files (they fragment the free space, and are deleted at the end)",
     NULL},
    {"spread", 0, 0, G_OPTION_ARG_NONE, &opt_spread,
     "Make the files in a seeded order across directories (parent and inode distance)", NULL},
    {"spacers", 0, 0, G_OPTION_ARG_INT, &opt_spacers,
     "Files made after each file (empty unless --spacer-size) and deleted at the end "
     "(inode distance)", "N"},
    {"spacer-size", 0, 0, G_OPTION_ARG_STRING, &opt_spacer_size,
     "Size of each spacer (default 0): with data, spacers also push the next file's blocks "
     "away (parent and inode distance)", "BYTES"},
    {"synthetic-appends", 0, 0, G_OPTION_ARG_INT, &opt_syn_appends,
     "Aging: appends per synthetic file (default: --appends)", "N"},
    {"filler-appends", 0, 0, G_OPTION_ARG_INT, &opt_filler_appends,
     "Aging: appends per filler file (default: --appends)", "N"},
    {"large-size", 0, 0, G_OPTION_ARG_STRING, &opt_large_size,
     "Aging: files of at least this size are large (see --large-appends)", "BYTES"},
    {"large-appends", 0, 0, G_OPTION_ARG_INT, &opt_large_appends,
     "Aging: appends per large file (default: as its class)", "N"},
    {"force", 'f', 0, G_OPTION_ARG_NONE, &opt_force,
     "Remove the earlier tbbt-init image in DIR first (only what tbbt-init made)", NULL},
    {"progress", 0, 0, G_OPTION_ARG_NONE, &opt_progress,
     "Draw a progress line on stderr even when it is not a terminal", NULL},
    {"no-progress", 0, 0, G_OPTION_ARG_NONE, &opt_no_progress, "Never draw a progress line",
     NULL},
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
    o.progress = !opt_quiet && !opt_no_progress && (opt_progress || isatty(STDERR_FILENO));
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
    if (!opt_quiet)
        printf("tbbt-init: %" G_GUINT64_FORMAT " directories, %" G_GUINT64_FORMAT " files, %"
               G_GUINT64_FORMAT " hard links, %" G_GUINT64_FORMAT " symlinks, %"
               G_GUINT64_FORMAT " others; %.1f MB in %" G_GUINT64_FORMAT " writes, %.2f s; "
               "manifest %s\n", (guint64)st.dirs, (guint64)st.files, (guint64)st.links,
               (guint64)st.symlinks, (guint64)st.others, (double)st.bytes / 1e6,
               (guint64)st.appends, st.seconds, manifest);
    if (!opt_quiet && opt_fill > 0)
        printf("tbbt-init: %" G_GUINT64_FORMAT " synthetic files (%.1f MB) in %"
               G_GUINT64_FORMAT " new directories, %" G_GUINT64_FORMAT " fillers (%.1f MB) "
               "deleted; file system %.2f %% full (target %.2f %%)\n",
               (guint64)st.synthetic_files, (double)st.synthetic_bytes / 1e6,
               (guint64)st.synthetic_dirs, (guint64)st.fillers, (double)st.filler_bytes / 1e6,
               st.utilization * 100, opt_fill * 100);
    g_free(manifest);
    return TBBT_EXIT_OK;
}

int main(int argc, char **argv)
{
    int rc = tbbt_cli_parse(&(struct tbbt_cli_spec){
        .prog = "tbbt-init", .param = "- build and age the initial image of a trace",
        .entries = entries,
        .description =
            "Local:  tbbt-init --map MAP --root DIR [OPTIONS]\n"
            "NFS:    tbbt-init --map MAP --server HOST --export PATH [--root SERVER-PATH] "
            "[OPTIONS]\n"
            "Aging:  tbbt-init --measure DIR [--json]\n"
            "Check:  tbbt-init --map MAP --check\n"
            "Exit status: 0 success, 1 failure, 2 usage error.\n"
            "See docs/tbbt-init.md." }, &argc, &argv);

    if (rc)
        return rc;
    tbbt_log_init("tbbt-init", opt_verbose ? TBBT_LOG_DEBUG
                               : opt_quiet ? TBBT_LOG_ERROR : TBBT_LOG_WARN);
    if (opt_version) {
        printf("tbbt-init (tbbt) %s\n", TBBT_VERSION);
        rc = TBBT_EXIT_OK;
    } else if (opt_measure && opt_server) {
        fprintf(stderr, "tbbt-init: --measure reads block maps (FIEMAP, GETFSMAP) of a local "
                        "file system: it cannot work through --server\n");
        rc = TBBT_EXIT_USAGE;
    } else if (opt_measure) {
        rc = measure();
    } else if (opt_check && opt_map) {
        rc = check_map();
    } else if (!opt_map || (!opt_root && !opt_server)) {
        rc = tbbt_cli_usage_error("tbbt-init", "--map MAP and --root DIR are needed (or "
                                  "--measure DIR)");
    } else if (!opt_server != !opt_export) {
        fprintf(stderr, "tbbt-init: --server HOST and --export PATH go together\n");
        rc = TBBT_EXIT_USAGE;
    } else if (opt_nfs_port < 0 || opt_nfs_port > 65535 || opt_mount_port < 0 ||
               opt_mount_port > 65535 || opt_outstanding < 0 || opt_connections < 0 ||
               opt_connections > 16 || opt_timeout < 0) {
        fprintf(stderr, "tbbt-init: --nfs-port and --mount-port must be ports, --connections "
                        "0 to 16, --outstanding and --timeout 0 or more\n");
        rc = TBBT_EXIT_USAGE;
    } else if (opt_clones < 1 || opt_appends < 1 || opt_spacers < 0 || opt_syn_appends < 0 ||
               opt_filler_appends < 0 || opt_large_appends < 0) {
        fprintf(stderr, "tbbt-init: --clones and --appends must be 1 or more, the other "
                        "counts 0 or more\n");
        rc = TBBT_EXIT_USAGE;
    } else if (opt_fill < 0 || opt_fill >= 1 || opt_distortion < 0 || opt_distortion > 1 ||
               opt_merge < 0 || opt_merge > 1) {
        fprintf(stderr, "tbbt-init: --fill must be in [0, 1), --distortion and --merge in "
                        "[0, 1]\n");
        rc = TBBT_EXIT_USAGE;
    } else {
        rc = build();
    }
    return rc;
}
