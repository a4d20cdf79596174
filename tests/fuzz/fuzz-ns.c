/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the namespace model (src/ns) over arbitrary binary traces:
 * the identity scan, predictions and the replay of every record the reader
 * accepts, then the hierarchy map.  Oracle: the map reader (strict) accepts
 * every line the writer wrote, every entry of the start image (create time 0)
 * comes after its directory's, and every ID a record got names an object
 * (docs/hierarchy-map.md).  Then the same input through pass B with pre-play
 * correction (src/extract/correct.c) into a final trace and map: the --check
 * pass must load that map and read that trace without error, and every
 * corrective record must lie between its neighbours' call times.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "extract/correct.h"
#include "extract/hier.h"
#include "ns/ns.h"
#include "trace/trace.h"
#include "util/util.h"

static char map_path[64], raw_path[64], fin_path[64], fmap_path[64];

static void check_ids(const struct tbbt_ns *ns, const struct tbbt_trace_rec *r)
{
    uint64_t n = tbbt_ns_count(ns);

    if ((TBBT_HAS(r, TBBT_F_ID) && (r->id == 0 || r->id > n)) ||
        (TBBT_HAS(r, TBBT_F_ID_OBJ) && (r->id_obj == 0 || r->id_obj > n)) ||
        (TBBT_HAS(r, TBBT_F_ID_OLD) && (r->id_old == 0 || r->id_old > n)))
        abort();
    for (uint32_t i = 0; i < r->n_entries; i++)
        if ((r->entries[i].flags & TBBT_ENT_ID) && (r->entries[i].id == 0 ||
                                                    r->entries[i].id > n))
            abort();
}

static void pass(struct tbbt_ns *ns, const uint8_t *data, size_t size, bool replay)
{
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    int err = 0;
    int32_t st;

    if (!(r = tbbt_trace_reader_open_mem(data, size, &err)))
        return;
    tbbt_trace_rec_init(&rec);
    while (tbbt_trace_reader_next(r, &rec) == 1) {
        if (!replay) {
            tbbt_ns_ident_scan(ns, &rec);
            continue;
        }
        (void)tbbt_ns_predict(ns, &rec, &st);
        tbbt_ns_apply(ns, &rec);
        check_ids(ns, &rec);
    }
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
}

/* The written map reads back, each entry after its directory. */
static void oracle(void)
{
    GHashTable *dirs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    struct tbbt_ns_map_reader *r;
    struct tbbt_ns_map_entry e;
    int err = 0, rc;

    if (!(r = tbbt_ns_map_reader_open(map_path, &err)))
        abort();
    while ((rc = tbbt_ns_map_reader_next(r, &e)) == 1) {
        const char *slash = strrchr(e.path, '/');
        if (slash && e.create_ns == 0) {
            char *parent = g_strndup(e.path, (gsize)(slash - e.path));
            if (!g_hash_table_contains(dirs, parent)) {
                fprintf(stderr, "'%s' before its directory\n", e.path);
                abort();
            }
            g_free(parent);
        }
        if (e.type == TBBT_NS_DIR && e.create_ns == 0)
            g_hash_table_add(dirs, g_strdup(e.path));
    }
    if (rc != 0) {
        fprintf(stderr, "map line %llu: %s\n", (unsigned long long)tbbt_ns_map_reader_line(r),
                tbbt_ns_map_reader_error(r));
        abort();
    }
    tbbt_ns_map_reader_close(r);
    g_hash_table_destroy(dirs);
}

/* Corrective records sit between their neighbours in call order. */
static void check_order(void)
{
    struct tbbt_trace_rec rec;
    struct tbbt_trace_reader *r;
    uint64_t prev = 0;
    int err = 0, rc;

    if (!(r = tbbt_trace_reader_open(fin_path, &err)))
        abort();
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(r, &rec)) == 1) {
        if ((rec.flags & TBBT_RF_CORRECTIVE) && rec.call_ns < prev)
            abort();
        if (rec.call_ns > prev && !(rec.flags & TBBT_RF_CORRECTIVE))
            prev = rec.call_ns;
    }
    if (rc != 0)
        abort();
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(r);
}

/* Pass B with correction, then the --check pass over its output. */
static void corrected(const uint8_t *data, size_t size)
{
    struct tbbt__corr *k = tbbt__corr_new(true, 7), *chk = NULL;
    struct tbbt_ns *ns = NULL;
    char err[512];
    FILE *f = fopen(raw_path, "wb");

    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    if (tbbt__hier_run(raw_path, fin_path, fmap_path, k, &ns, err, sizeof(err)) == 0) {
        check_order();
        if (tbbt__check_run(fin_path, fmap_path, &chk, err, sizeof(err)) != 0) {
            fprintf(stderr, "check: %s\n", err);
            abort();
        }
    }
    tbbt__corr_free(chk);
    tbbt__corr_free(k);
    tbbt_ns_free(ns);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tbbt_ns *ns = tbbt_ns_new();

    if (!map_path[0]) {
        int pid = (int)getpid();
        snprintf(map_path, sizeof(map_path), "/tmp/fuzz-ns-%d.map", pid);
        snprintf(raw_path, sizeof(raw_path), "/tmp/fuzz-ns-%d.raw", pid);
        snprintf(fin_path, sizeof(fin_path), "/tmp/fuzz-ns-%d.tbbt", pid);
        snprintf(fmap_path, sizeof(fmap_path), "/tmp/fuzz-ns-%d.tbbt.map", pid);
    }
    pass(ns, data, size, false);
    pass(ns, data, size, true);
    if (tbbt_ns_write_map_file(ns, map_path) != 0)
        abort();
    oracle();
    tbbt_ns_free(ns);
    corrected(data, size);
    return 0;
}
