/* SPDX-License-Identifier: MIT */
/*
 * The synthetic objects of tbbt-init (TBBT paper 3.2; docs/tbbt-init.md): directories
 * and files added to the map's image until the file system is --fill full (sizes drawn
 * from the map's known sizes or --sizes, directories by --dir-ratio, placed by
 * --distortion and --merge; the --sizes table is read here), and with aging the filler
 * files that fragment the free space and are deleted after the data phase.  Part of the build planned in image.c,
 * whose state it shares (plan-int.h); the operations go through the backend.  With
 * several clones each plans 1/N of the space measured before the first clone (so that
 * clones built at once by MPI ranks plan what clones built in turn do), and the gap to
 * the target is closed once, in the last clone, when every clone is built.
 */
#include "aging/image-int.h"
#include "aging/plan-int.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/util.h"

/* The build's error, unless an earlier one is there: "cannot WHAT 'PATH': REASON". */
static int fill_fail(struct build *b, int rc, const char *what, const char *path)
{
    if (b->errbuf[0])
        return rc;
    if (path)
        snprintf(b->errbuf, b->errlen, "cannot %s '%s': %s", what, path, strerror(-rc));
    else
        snprintf(b->errbuf, b->errlen, "cannot %s: %s", what, strerror(-rc));
    return rc;
}

void tbbt__image_add_dir(struct build *b, const char *path, bool synthetic, bool keep_empty)
{
    struct dir d = { .path = (uint32_t)b->dpaths->len, .synthetic = synthetic,
                     .keep_empty = keep_empty };

    g_string_append_len(b->dpaths, path, (gssize)strlen(path) + 1);
    g_array_append_val(b->dirs, d);
}

/*
 * The directory of a new synthetic object: among the map's directories (except those
 * the trace removes: an RMDIR would find them not empty) with
 * probability merge (always if there is no synthetic one), else among the
 * synthetic ones; within the class, with probability distortion the directory
 * of a random object already there (fan-out grows where it is large), else a
 * uniformly random directory.
 */
static guint pick_dir(struct build *b)
{
    GArray *pool[2] = { b->class_dirs[EXT], b->class_dirs[SYN] };
    int c = (b->class_dirs[SYN]->len == 0 || g_rand_double(b->rand) < b->o->merge) ? EXT : SYN;
    GArray *parents = b->class_parents[c];

    if (pool[c]->len == 0)
        c = c == EXT ? SYN : EXT;
    if (parents->len && g_rand_double(b->rand) < b->o->distortion)
        return g_array_index(parents, guint,
                             (guint)g_rand_int_range(b->rand, 0, (gint32)parents->len));
    return g_array_index(pool[c], guint,
                         (guint)g_rand_int_range(b->rand, 0, (gint32)pool[c]->len));
}

static void placed(struct build *b, guint dir)
{
    int c = g_array_index(b->dirs, struct dir, dir).synthetic ? SYN : EXT;

    g_array_append_val(b->class_parents[c], dir);
}

/* --sizes FILE: "SIZE WEIGHT" per line (bytes, relative weight); '#' starts a comment. */
int tbbt__image_read_sizes(struct build *b)
{
    char *text = NULL, **lines;
    GError *gerr = NULL;
    int rc = 0;

    if (!g_file_get_contents(b->o->sizes, &text, NULL, &gerr)) {
        rc = tbbt__image_fail(b, -ENOENT, "cannot read the size table '%s': %s", b->o->sizes,
                              gerr->message);
        g_error_free(gerr);
        return rc;
    }
    lines = g_strsplit(text, "\n", -1);
    for (guint i = 0; lines[i] && rc == 0; i++) {
        char *l = g_strstrip(lines[i]), *end;
        double size, w;
        if (!*l || *l == '#')
            continue;
        size = g_ascii_strtod(l, &end);
        w = end != l ? g_ascii_strtod(end, &end) : -1;
        while (*end == ' ' || *end == '\t')
            end++;
        if (!(size >= 0 && size <= 1e15) || !(w > 0 && w < 1e15) || (*end && *end != '#')) {
            rc = tbbt__image_fail(b, TBBT_E_SYNTAX, "size table '%s' line %u: want SIZE WEIGHT",
                                  b->o->sizes, i + 1);
            break;
        }
        g_array_append_val(b->table, size);
        g_array_append_val(b->table, w);
        b->table_total += w;
    }
    if (rc == 0 && b->table->len == 0)
        rc = tbbt__image_fail(b, TBBT_E_SYNTAX, "size table '%s' has no entries", b->o->sizes);
    g_strfreev(lines);
    g_free(text);
    return rc;
}

/* One size from the distribution: the user's table, the map's sizes, or the built-in one. */
uint64_t tbbt__image_draw_size(struct build *b)
{
    static const uint64_t builtin[][2] = {   /* size, weight in 1000ths */
        {0, 20}, {512, 80}, {2048, 120}, {8192, 200}, {32768, 220}, {131072, 170},
        {524288, 110}, {2097152, 60}, {8388608, 15}, {33554432, 5},
    };
    double u;

    if (b->table->len) {
        u = g_rand_double(b->rand) * b->table_total;
        for (guint i = 0; i < b->table->len; i += 2) {
            double w = g_array_index(b->table, double, i + 1);
            if (u < w || i + 2 == b->table->len)
                return (uint64_t)g_array_index(b->table, double, i);
            u -= w;
        }
    }
    if (b->known)
        return b->reservoir[(uint64_t)g_rand_int_range(b->rand, 0,
                                                       (gint32)MIN(b->known, RESERVOIR))];
    u = g_rand_double(b->rand) * 1000.0;
    for (size_t i = 0; i < G_N_ELEMENTS(builtin); i++) {
        if (u < (double)builtin[i][1])
            return builtin[i][0];
        u -= (double)builtin[i][1];
    }
    return 8192;
}

static uint64_t on_disk(const struct build *b, uint64_t size)
{
    return (size + b->block - 1) / b->block * b->block;
}

/* The path of a new synthetic object in directory dir (given: g_free()). */
static char *syn_path(struct build *b, guint dir)
{
    const char *dpath = b->dpaths->str + g_array_index(b->dirs, struct dir, dir).path;

    return strcmp(dpath, ".") == 0 ? g_strdup_printf("tbbt-syn-%" PRIu64, ++b->syn_seq)
                                   : g_strdup_printf("%s/tbbt-syn-%" PRIu64, dpath, ++b->syn_seq);
}

/* A synthetic (or filler) file of size bytes in directory dir, to be written in phase 2. */
static int new_file(struct build *b, guint dir, uint64_t size, bool filler)
{
    char *path = syn_path(b, dir);
    struct file f = { .path = (uint32_t)b->paths->len, .size = size, .filler = filler,
                      .synthetic = !filler };
    int rc = b->ops->create(b->be, path, NULL, 0, 0);

    if (rc < 0)
        rc = fill_fail(b, rc, "create the synthetic file", path);
    if (rc == 0) {
        tbbt__image_made(b, 'f', path);
        b->total_bytes += size;
        g_string_append_len(b->paths, path, (gssize)strlen(path) + 1);
        g_array_append_val(b->files, f);
        placed(b, dir);
    }
    g_free(path);
    return rc;
}

static int new_dir(struct build *b, guint parent, guint *out)
{
    char *path = syn_path(b, parent);
    int rc = b->ops->mkdir(b->be, path, NULL);

    if (rc < 0)
        rc = fill_fail(b, rc, "create the synthetic directory", path);
    if (rc == 0) {
        tbbt__image_made(b, 'd', path);
        *out = b->dirs->len;
        tbbt__image_add_dir(b, path, true, false);
        g_array_append_val(b->class_dirs[SYN], *out);
        placed(b, parent);
        b->st->synthetic_dirs++;
    }
    g_free(path);
    return rc;
}

static int fs_usage(struct build *b, uint64_t *used)
{
    int rc = b->ops->usage(b->be, &b->capacity, used, &b->block);

    if (rc < 0)
        return fill_fail(b, rc, "stat the file system of", b->o->root);
    return 0;
}

static int fs_sync(struct build *b)
{
    int rc = b->ops->sync(b->be);

    return rc < 0 ? fill_fail(b, rc, "sync", NULL) : 0;
}

/* Synthetic files (and directories) of about `bytes` on disk. */
static int add_synthetic(struct build *b, uint64_t bytes)
{
    double ratio = b->o->dir_ratio >= 0 ? b->o->dir_ratio
                   : b->st->files ? (double)b->st->dirs / (double)b->st->files : 0.1;
    guint dir, nd;
    int rc = 0;

    while (bytes > 0 && rc == 0) {
        uint64_t size = tbbt__image_draw_size(b);
        if (on_disk(b, size) > bytes)
            size = bytes;
        dir = pick_dir(b);
        if (g_rand_double(b->rand) < ratio && (rc = new_dir(b, dir, &nd)) == 0)
            dir = nd;
        if (rc == 0 && (rc = new_file(b, dir, size, false)) == 0) {
            b->st->synthetic_files++;
            b->st->synthetic_bytes += size;
            bytes -= MIN(bytes, MAX(on_disk(b, size), b->block));
        }
    }
    return rc;
}

/* Plans this clone's synthetic files and the fillers, before the data phase. */
int tbbt__image_plan_fill(struct build *b)
{
    uint64_t used, planned = 0, target, share, fill_bytes, free_after;
    guint i, top;
    int rc;

    if (b->o->fill <= 0)
        return 0;
    if (b->have_base) {     /* several clones: the use before the first, shared by all */
        b->capacity = b->base_capacity;
        b->block = b->base_block;
        used = b->base_used;
    } else if ((rc = fs_usage(b, &used)) < 0) {
        return rc;
    }
    for (i = 0; i < b->files->len; i++)
        planned += on_disk(b, g_array_index(b->files, struct file, i).size);
    target = (uint64_t)(b->o->fill * (double)b->capacity);
    share = target > used ? (target - used) / b->o->clones : 0;
    /* a margin for metadata: the top-up after the data phase closes the gap */
    fill_bytes = share > planned ? (share - planned) - (share - planned) / 50 : 0;
    if (b->class_dirs[SYN]->len == 0 && b->o->merge < 1 && (rc = new_dir(b, 0, &top)) < 0)
        return rc;
    if ((rc = add_synthetic(b, fill_bytes)) < 0)
        return rc;
    if (!b->o->fragment_free || !tbbt__image_aging(b))
        return 0;
    /* fillers: most of the space that stays free, written interleaved, deleted at the end */
    free_after = b->capacity > target ? (b->capacity - target) / b->o->clones : 0;
    for (uint64_t left = free_after - free_after / 5; left > 0 && rc == 0;) {
        uint64_t size = MIN(tbbt__image_draw_size(b), left);
        if ((rc = new_file(b, pick_dir(b), size, true)) == 0) {
            b->st->fillers++;
            left -= MIN(left, MAX(on_disk(b, size), b->block));
        }
    }
    return rc;
}

/* The newest synthetic files go while the file system is over the target. */
static int trim_over(struct build *b, uint64_t *used, uint64_t target)
{
    int rc = 0;

    for (guint i = b->files->len; rc == 0 && i > 0 && *used > target + b->capacity / 400;) {
        const struct file *f = &g_array_index(b->files, struct file, --i);
        const char *path = b->paths->str + f->path;
        if (!f->synthetic)
            continue;
        if ((rc = b->ops->unlink(b->be, path)) < 0)
            return fill_fail(b, rc, "delete", path);
        b->st->synthetic_files--;
        b->st->synthetic_bytes -= f->size;
        *used -= MIN(*used, on_disk(b, f->size));
        if (*used <= target + b->capacity / 400 && (rc = fs_sync(b)) == 0)
            rc = fs_usage(b, used);
    }
    return rc;
}

/* After the clone's data phase: its fillers go, its files lose blocks beyond their end. */
int tbbt__image_finish_fill(struct build *b)
{
    int rc = 0;

    for (guint i = 0; i < b->files->len && rc == 0; i++) {
        const struct file *f = &g_array_index(b->files, struct file, i);
        const char *path = b->paths->str + f->path;
        if (!f->filler)
            continue;
        if ((rc = b->ops->unlink(b->be, path)) < 0)
            rc = fill_fail(b, rc, "delete the filler", path);
        else
            b->st->filler_bytes += f->size;
    }
    if (rc < 0 || b->o->fill <= 0)
        return rc;
    /* space some file systems hold beyond EOF for appending files (XFS speculative
     * preallocation) would count as used: trim it, as a truncate to the size does */
    for (guint i = 0; i < b->files->len && rc == 0; i++) {
        const struct file *f = &g_array_index(b->files, struct file, i);
        if (!f->filler && (rc = b->ops->trim(b->be, b->paths->str + f->path, f->size)) < 0)
            rc = tbbt__image_data_fail(b, f, rc);
    }
    return rc;
}

int tbbt__image_top_up(struct build *b)
{
    uint64_t used, target;
    int rc;

    if (b->o->fill <= 0)
        return 0;
    if ((rc = fs_sync(b)) < 0 || (rc = fs_usage(b, &used)) < 0)
        return rc;
    target = (uint64_t)(b->o->fill * (double)b->capacity);
    /* over: metadata of fragmented files took more than planned; the newest synthetic
     * files go until the target is met (their made lines just find nothing to remove) */
    if ((rc = trim_over(b, &used, target)) < 0)
        return rc;
    while (rc == 0 && used + b->capacity / 400 < target) {    /* within 0.25 % */
        guint first = b->files->len;
        if ((rc = add_synthetic(b, (target - used) - (target - used) / 20)) < 0)
            break;
        for (guint i = first; i < b->files->len && rc == 0; i++) {
            const struct file *f = &g_array_index(b->files, struct file, i);
            if (f->size && (rc = tbbt__image_append(b, f, f->size)) < 0)
                rc = tbbt__image_data_fail(b, f, rc);
        }
        if (rc == 0 && (rc = fs_sync(b)) == 0)
            rc = fs_usage(b, &used);
    }
    return rc;
}
