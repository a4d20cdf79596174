/* SPDX-License-Identifier: MIT */
/*
 * tbbt-init under MPI (docs/tbbt-init.md "Under MPI", docs/mpi.md): the part of a build
 * that several ranks share.  Rank r of R builds clones r, r + R, ...; its manifest lines
 * (clone, made, obj) go to a memory stream, one part per clone, and at the end rank 0
 * gathers every rank's parts and stats (tbbt_mpi_gather) and writes the parts into the
 * one manifest in clone order, so that it holds the lines a single process would have
 * written, and the stats summed.  The agreements (tbbt_mpi_agree) that make one rank's
 * failure every rank's are here too; which rank does what is decided in image.c.
 *
 * What it does not do: plan or make objects.  Threads: the build's thread only.
 *
 * The blob each rank sends to rank 0 (host byte order: every rank runs the same tbbt
 * build, docs/mpi.md "Running on several machines"):
 *
 *   struct blob_head    magic "TBIM", version 1, nparts, struct tbbt_image_stats
 *   struct blob_part    nparts times: clone index, bytes of its lines
 *   lines               the parts' manifest lines, one after the other
 */
#include "aging/image-int.h"
#include "aging/plan-int.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/tbbt-mpi.h"
#include "util/util.h"

#define BLOB_MAGIC "TBIM"
#define BLOB_VERSION 1u

struct blob_head {
    char magic[4];
    uint32_t version;
    uint32_t nparts;
    uint32_t reserved;
    struct tbbt_image_stats st;
};

struct blob_part {
    uint32_t clone;
    uint32_t reserved;
    uint64_t len;
};

/* One part as rank 0 sees it: lines borrowed from a gathered blob. */
struct part_ref {
    uint32_t clone;
    const char *text;
    size_t len;
};

void tbbt__image_team_init(struct build *b)
{
    b->part_f = open_memstream(&b->part_buf, &b->part_len);
    if (!b->part_f)
        g_error("open_memstream: %s", g_strerror(errno));  /* only ENOMEM: fatal */
    b->parts = g_array_new(FALSE, FALSE, sizeof(struct tbbt__image_part));
}

void tbbt__image_team_fini(struct build *b)
{
    if (b->part_f)
        fclose(b->part_f);
    free(b->part_buf);
    if (b->parts)
        g_array_free(b->parts, TRUE);
    b->part_f = NULL;
    b->part_buf = NULL;
    b->parts = NULL;
}

void tbbt__image_team_clone(struct build *b, uint32_t k)
{
    struct tbbt__image_part p = { .clone = k };

    fflush(b->part_f);
    p.off = b->part_len;
    g_array_append_val(b->parts, p);
}

int tbbt__image_team_agree(struct build *b, int rc)
{
    char *why = NULL;
    const char *mine = rc >= 0 ? NULL : b->errbuf[0] ? b->errbuf : tbbt_strerror(rc);
    int r;

    if (!b->team)
        return rc;
    r = tbbt_mpi_agree(rc, mine, &why);
    if (r < 0 && why)
        snprintf(b->errbuf, b->errlen, "%s", why);
    else if (r < 0)
        snprintf(b->errbuf, b->errlen, "MPI agreement failed: %s", tbbt_mpi_error());
    g_free(why);
    return r;
}

/* This rank's blob (given: g_bytes_unref()). */
static GBytes *pack(struct build *b)
{
    struct blob_head h = { .version = BLOB_VERSION, .nparts = b->parts->len, .st = *b->st };
    GByteArray *out = g_byte_array_new();

    memcpy(h.magic, BLOB_MAGIC, 4);
    fflush(b->part_f);
    g_byte_array_append(out, (const guint8 *)&h, sizeof(h));
    for (guint i = 0; i < b->parts->len; i++) {
        const struct tbbt__image_part *p = &g_array_index(b->parts, struct tbbt__image_part, i);
        uint64_t end = i + 1 < b->parts->len
                           ? g_array_index(b->parts, struct tbbt__image_part, i + 1).off
                           : b->part_len;
        struct blob_part bp = { .clone = p->clone, .len = end - p->off };
        g_byte_array_append(out, (const guint8 *)&bp, sizeof(bp));
    }
    if (b->parts->len)
        g_byte_array_append(out, (const guint8 *)b->part_buf + g_array_index(
                                b->parts, struct tbbt__image_part, 0).off,
                            (guint)(b->part_len - g_array_index(b->parts,
                                                                struct tbbt__image_part, 0).off));
    return g_byte_array_free_to_bytes(out);
}

static void add_stats(struct tbbt_image_stats *sum, const struct tbbt_image_stats *s)
{
    sum->dirs += s->dirs;
    sum->files += s->files;
    sum->links += s->links;
    sum->symlinks += s->symlinks;
    sum->others += s->others;
    sum->bytes += s->bytes;
    sum->appends += s->appends;
    sum->unknown_sizes += s->unknown_sizes;
    sum->synthetic_files += s->synthetic_files;
    sum->synthetic_dirs += s->synthetic_dirs;
    sum->synthetic_bytes += s->synthetic_bytes;
    sum->fillers += s->fillers;
    sum->filler_bytes += s->filler_bytes;
    sum->spacers += s->spacers;
}

/* Rank r's blob into refs and *sum; 0 or TBBT_E_BADREC when it does not hold together. */
static int unpack(GBytes *blob, GArray *refs, struct tbbt_image_stats *sum)
{
    gsize len;
    const char *p = g_bytes_get_data(blob, &len);
    struct blob_head h;
    uint64_t text = 0;

    if (len < sizeof(h))
        return TBBT_E_BADREC;
    memcpy(&h, p, sizeof(h));
    if (memcmp(h.magic, BLOB_MAGIC, 4) || h.version != BLOB_VERSION ||
        h.nparts > (len - sizeof(h)) / sizeof(struct blob_part))
        return TBBT_E_BADREC;
    const char *lines = p + sizeof(h) + (size_t)h.nparts * sizeof(struct blob_part);
    size_t left = len - (size_t)(lines - p);
    for (uint32_t i = 0; i < h.nparts; i++) {
        struct blob_part bp;
        memcpy(&bp, p + sizeof(h) + (size_t)i * sizeof(bp), sizeof(bp));
        if (bp.len > left - text)
            return TBBT_E_BADREC;
        struct part_ref r = { .clone = bp.clone, .text = lines + text, .len = (size_t)bp.len };
        g_array_append_val(refs, r);
        text += bp.len;
    }
    add_stats(sum, &h.st);
    return 0;
}

static gint by_clone(gconstpointer a, gconstpointer b)
{
    const struct part_ref *x = a, *y = b;

    return x->clone < y->clone ? -1 : x->clone > y->clone;
}

int tbbt__image_team_merge(struct build *b, struct tbbt_manifest_writer *w)
{
    GBytes *mine = pack(b);
    GPtrArray *all = NULL;
    GArray *refs;
    struct tbbt_image_stats sum = { 0 };
    gsize len;
    const void *data = g_bytes_get_data(mine, &len);
    int rc = tbbt_mpi_gather(data, len, &all);

    g_bytes_unref(mine);
    if (rc < 0) {
        snprintf(b->errbuf, b->errlen, "MPI gather of the manifest parts failed: %s",
                 tbbt_mpi_error());
        return rc;
    }
    if (!all || b->o->rank != 0) {  /* not rank 0 (an inactive module gathers anyway) */
        if (all)
            g_ptr_array_unref(all);
        return 0;
    }
    refs = g_array_new(FALSE, FALSE, sizeof(struct part_ref));
    for (guint r = 0; r < all->len && rc == 0; r++)
        if ((rc = unpack(g_ptr_array_index(all, r), refs, &sum)) < 0)
            snprintf(b->errbuf, b->errlen, "the manifest part of rank %u is damaged", r);
    if (rc == 0) {
        g_array_sort(refs, by_clone);
        for (guint i = 0; i < refs->len; i++)
            tbbt_manifest_write_raw(w, g_array_index(refs, struct part_ref, i).text,
                      g_array_index(refs, struct part_ref, i).len);
        sum.utilization = b->st->utilization;
        sum.seconds = b->st->seconds;
        *b->st = sum;
    }
    g_array_free(refs, TRUE);
    g_ptr_array_unref(all);
    return rc;
}
