/* SPDX-License-Identifier: MIT */
/*
 * Pass B of tbbt-convert (see hier.h): identity scan, replay through the
 * namespace model, final trace and hierarchy map.  TBBT paper 3.1, 3.2, 4.
 *
 * The replay hands the reader's handle and endpoint tables to the writer,
 * so the final trace defines every handle and endpoint with the same
 * reference, right before the same record as the raw trace did, and the
 * tables are held once.  ID fields already in the raw trace are dropped:
 * the model would take them for corrective records' IDs.
 */
#include "extract/hier.h"

#include <glib.h>
#include <inttypes.h>
#include <stdio.h>

#include "trace/trace.h"
#include "util/util.h"

static int read_error(struct tbbt_trace_reader *r, const char *path, int rc, char *errbuf,
                      size_t errlen)
{
    snprintf(errbuf, errlen, "cannot read trace '%s': %s (at byte %" PRIu64 ")", path,
             tbbt_strerror(rc), tbbt_trace_reader_offset(r));
    return rc;
}

/* First read: which (fsid, fileid) each handle stands for. */
static int ident_scan(struct tbbt_ns *ns, const char *raw, struct tbbt_trace_rec *rec,
                      char *errbuf, size_t errlen)
{
    int err = 0, rc;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(raw, &err);

    if (!r) {
        snprintf(errbuf, errlen, "cannot read trace '%s': %s", raw, tbbt_strerror(err));
        return err;
    }
    while ((rc = tbbt_trace_reader_next(r, rec)) == 1)
        tbbt_ns_ident_scan(ns, rec);
    if (rc < 0)
        rc = read_error(r, raw, rc, errbuf, errlen);
    tbbt_trace_reader_close(r);
    return rc;
}

/* IDs a raw trace may carry (from another numbering) would be taken as corrective: drop them. */
static void clear_ids(struct tbbt_trace_rec *rec)
{
    rec->present &= ~((UINT64_C(1) << TBBT_F_ID) | (UINT64_C(1) << TBBT_F_ID2) |
                      (UINT64_C(1) << TBBT_F_ID_OBJ) | (UINT64_C(1) << TBBT_F_ID_OLD));
    rec->id = rec->id2 = rec->id_obj = rec->id_old = 0;
    for (uint32_t i = 0; i < rec->n_entries; i++) {
        rec->entries[i].flags &= ~(uint32_t)TBBT_ENT_ID;
        rec->entries[i].id = 0;
    }
}

/* Second read: IDs into every record, the model updated, the final trace written. */
static int replay(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *raw,
                  const char *final, struct tbbt_trace_rec *rec, char *errbuf, size_t errlen)
{
    struct tbbt_trace_rec *const *extra;
    uint64_t prev = 0;
    size_t n;
    int err = 0, rc, wrc = 0;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(raw, &err);
    struct tbbt_trace_writer *w;

    if (!r) {
        snprintf(errbuf, errlen, "cannot read trace '%s': %s", raw, tbbt_strerror(err));
        return err;
    }
    w = tbbt_trace_writer_open(final, tbbt_trace_reader_fhtab(r), tbbt_trace_reader_eptab(r),
                               &err);
    if (!w) {
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", final, tbbt_strerror(err));
        tbbt_trace_reader_close(r);
        return err;
    }
    while ((rc = tbbt_trace_reader_next(r, rec)) == 1) {
        clear_ids(rec);
        if (!corr) {
            tbbt_ns_apply(ns, rec);
        } else {
            n = tbbt__corr_step(corr, ns, rec, prev, &extra);
            for (size_t i = 0; i < n && wrc == 0; i++)
                wrc = tbbt_trace_writer_put(w, extra[i]);
            if (rec->call_ns > prev)
                prev = rec->call_ns;
        }
        if (wrc < 0 || (wrc = tbbt_trace_writer_put(w, rec)) < 0)
            break;
    }
    if (rc < 0) {
        read_error(r, raw, rc, errbuf, errlen);
        tbbt_trace_writer_abort(w);
    } else if (wrc < 0 || (wrc = tbbt_trace_writer_close(w)) < 0) {
        if (rc > 0)
            tbbt_trace_writer_abort(w);
        snprintf(errbuf, errlen, "cannot write trace '%s': %s", final, tbbt_strerror(wrc));
        rc = wrc;
    }
    tbbt_trace_reader_close(r);
    return rc;
}

int tbbt__hier_scan(struct tbbt_ns *ns, const char *raw_trace, char *errbuf, size_t errlen)
{
    struct tbbt_trace_rec rec;
    int rc;

    tbbt_trace_rec_init(&rec);
    rc = ident_scan(ns, raw_trace, &rec, errbuf, errlen);
    tbbt_trace_rec_fini(&rec);
    return rc;
}

int tbbt__hier_replay(struct tbbt_ns *ns, struct tbbt__corr *corr, const char *raw_trace,
                      const char *final_trace, const char *map_path, char *errbuf, size_t errlen)
{
    struct tbbt_trace_rec rec;
    int rc;

    tbbt_trace_rec_init(&rec);
    rc = replay(ns, corr, raw_trace, final_trace, &rec, errbuf, errlen);
    tbbt_trace_rec_fini(&rec);
    if (rc == 0 && map_path && (rc = tbbt_ns_write_map_file(ns, map_path)) < 0)
        snprintf(errbuf, errlen, "cannot write hierarchy map '%s': %s", map_path,
                 tbbt_strerror(rc));
    return rc;
}

int tbbt__hier_run(const char *raw_trace, const char *final_trace, const char *map_path,
                   struct tbbt__corr *corr, struct tbbt_ns **ns_out, char *errbuf,
                   size_t errlen)
{
    struct tbbt_ns *ns = tbbt_ns_new();
    int rc;

    if (ns_out)
        *ns_out = NULL;
    rc = tbbt__hier_scan(ns, raw_trace, errbuf, errlen);
    if (rc == 0)
        rc = tbbt__hier_replay(ns, corr, raw_trace, final_trace, map_path, errbuf, errlen);
    if (rc == 0 && ns_out)
        *ns_out = ns;
    else
        tbbt_ns_free(ns);
    return rc;
}
