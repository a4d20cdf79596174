/* SPDX-License-Identifier: MIT */
/*
 * Sharing between clients.  An object is accessed by a client when a record of that
 * client names it as `fh` (any procedure but MOUNT) or as the looked-up or created
 * object (`new_fh` of LOOKUP, CREATE, MKDIR, SYMLINK, MKNOD).  It is shared when two or
 * more clients accessed it.  Of the regular files that were READ or WRITTEN (successful
 * READ/WRITE records), read-shared ones were READ by two or more clients and WRITTEN by
 * none; write-shared ones were WRITTEN by some client and READ or WRITTEN by two or more.
 * Per object we keep the first client and a "more than one" bit per kind, so memory is
 * O(objects), not O(objects x clients).  docs/tbbt-stats.md "Sharing".
 */
#include "stats/stats-int.h"

/* Notes client c (index) in *first / bit multi of f. */
static void note(struct tbbt_stats_file *f, uint32_t *first, uint32_t multi, uint32_t c)
{
    if (*first == 0)
        *first = c + 1;
    else if (*first != c + 1)
        f->flags |= multi;
}

void tbbt__stats_share_add(struct tbbt_stats_file *f, uint32_t client, int kind)
{
    note(f, &f->any_client, TBBT_STATS_F_ANY_MULTI, client);
    if (kind == TBBT_STATS_ACC_OTHER)
        return;
    note(f, &f->rw_client, TBBT_STATS_F_RW_MULTI, client);
    if (kind == TBBT_STATS_ACC_READ)
        note(f, &f->rd_client, TBBT_STATS_F_RD_MULTI, client);
    else
        f->flags |= TBBT_STATS_F_WRITTEN;
}

void tbbt__stats_share_finish(struct tbbt_stats *st)
{
    struct tbbt_stats_share *s = &st->share;
    for (guint i = 0; i < st->files->len; i++) {
        const struct tbbt_stats_file *f = g_ptr_array_index(st->files, i);
        if (!f || f->any_client == 0)
            continue;
        bool shared = f->flags & TBBT_STATS_F_ANY_MULTI;
        s->objects++;
        s->shared += shared;
        if (f->type == 1) {
            s->files++;
            s->files_shared += shared;
        }
        if (f->rw_client == 0)
            continue;
        s->data_files++;
        uint64_t bytes = f->bytes_read + f->bytes_written;
        if ((f->flags & TBBT_STATS_F_RD_MULTI) && !(f->flags & TBBT_STATS_F_WRITTEN)) {
            s->read_shared++;
            s->bytes_read_shared += bytes;
        } else if ((f->flags & TBBT_STATS_F_WRITTEN) && (f->flags & TBBT_STATS_F_RW_MULTI)) {
            s->write_shared++;
            s->bytes_write_shared += bytes;
        }
    }
}
