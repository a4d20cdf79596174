/* SPDX-License-Identifier: MIT */
/*
 * tbbt-play's checks before the server (precheck.h; docs/tbbt-play.md, "Checks before
 * the server"): output paths (util/outpath.h), the whole trace (every record and the END
 * record's checksum, optional fields skipped as in the replay), the manifest (its
 * checksum line and every line), the map (its checksum line, every field, the rules
 * across lines), and the ties between them: the map's header names the trace's identity
 * (CRC32 and op count of its END record), the manifest's map-crc32 the map's checksum,
 * and each obj line an entry of the map at trace start.
 */
#include "player/precheck.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "ns/ns.h"
#include "trace/trace.h"
#include "util/outpath.h"
#include "util/util.h"

/* What a file that is not a trace is, by its first bytes (a hint for the message). */
static const char *file_kind(const char *path)
{
    char head[16] = "";
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(head, 1, sizeof(head) - 1, f) : 0;

    if (f)
        fclose(f);
    if (n >= 10 && !strncmp(head, "# tbbt-map", 10))
        return ": it is a hierarchy map (--map)";
    if (n >= 15 && !strncmp(head, "# tbbt-manifest", 15))
        return ": it is a manifest (--manifest)";
    if (n >= 4 && (!memcmp(head, "\xd4\xc3\xb2\xa1", 4) || !memcmp(head, "\xa1\xb2\xc3\xd4", 4) ||
                   !memcmp(head, "\x0a\x0d\x0d\x0a", 4)))
        return ": it is a packet capture (convert it with tbbt-convert)";
    return "";
}

/* Every output file can be written. */
static int check_outputs(const struct tbbt_precheck *p, char *err, size_t errlen)
{
    for (int i = 0; i < TBBT_PRECHECK_OUTPUTS; i++) {
        int rc = p->outputs[i] ? tbbt_output_check(p->outputs[i]) : 0;
        if (rc < 0) {
            tbbt_errbuf(err, errlen, "cannot write %s '%s': %s", p->output_opts[i],
                        p->outputs[i], tbbt_strerror(rc));
            return -1;
        }
    }
    return 0;
}

/* The whole trace: header, every record, the END record's counts and checksum; *id. */
static int check_trace(const char *path, struct tbbt_trace_ident *id, char *err,
                       size_t errlen)
{
    struct tbbt_trace_reader *t = NULL;
    struct tbbt_trace_rec rec;
    int rc = tbbt_trace_ident_read(path, id);

    if (rc == TBBT_E_MAGIC) {
        tbbt_errbuf(err, errlen, "trace '%s': not a TBBT trace%s", path, file_kind(path));
        return -1;
    }
    if (rc == 0 || rc == TBBT_E_TRUNC)
        t = tbbt_trace_reader_open(path, &rc);
    if (!t) {
        tbbt_errbuf(err, errlen, "cannot open trace '%s': %s", path, tbbt_strerror(rc));
        return -1;
    }
    tbbt_trace_reader_skip_fields(t, ((uint64_t)1 << TBBT_F_NFIELDS) - 1);
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next(t, &rec)) == 1)
        ;
    if (rc < 0)
        tbbt_errbuf(err, errlen, "trace '%s' at byte %" PRIu64 ": %s", path,
                    tbbt_trace_reader_offset(t), tbbt_strerror(rc));
    tbbt_trace_rec_fini(&rec);
    tbbt_trace_reader_close(t);
    return rc < 0 ? -1 : 0;
}

/* The map names the trace, the manifest the map. */
static int check_ties(const struct tbbt_precheck *p, const struct tbbt_manifest *man,
                      const char *map, const struct tbbt_trace_ident *tid,
                      const struct tbbt_ns_map_info *mi, char *err, size_t errlen)
{
    if (!mi->trace_known) {
        tbbt_log(TBBT_LOG_INFO, "map '%s' names no trace: cannot check that it goes with "
                 "'%s'", map, p->trace);
    } else if (mi->trace.crc != tid->crc || mi->trace.ops != tid->ops) {
        tbbt_errbuf(err, errlen, "map '%s' was made with another trace (crc32 %08" PRIx32
                    ", %" PRIu64 " records), not with '%s' (crc32 %08" PRIx32 ", %" PRIu64
                    " records)", map, mi->trace.crc, mi->trace.ops, p->trace, tid->crc,
                    tid->ops);
        return -1;
    }
    if (!man->have_map_crc) {
        tbbt_log(TBBT_LOG_INFO, "manifest '%s' names no map checksum: cannot check that its "
                 "image was built from '%s'", p->manifest, map);
    } else if (!mi->summed || mi->crc != man->map_crc) {
        tbbt_errbuf(err, errlen, "manifest '%s' was built from another map (crc32 %08" PRIx32
                    "), not from '%s' (%s%08" PRIx32 ")", p->manifest, man->map_crc, map,
                    mi->summed ? "crc32 " : "version 2, no checksum: ",
                    mi->summed ? mi->crc : 0);
        return -1;
    }
    return 0;
}

static int key_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Every obj line of the manifest names an entry of the map at trace start. */
static int check_objs(const struct tbbt_precheck *p, const struct tbbt_manifest *man,
                      const char *map, const GArray *starts, char *err, size_t errlen)
{
    for (guint i = 0; i < man->objs->len; i++) {
        const struct tbbt_manifest_obj *o = &g_array_index(man->objs,
                                                           struct tbbt_manifest_obj, i);
        uint64_t k = tbbt_ns_start_key(o->id, o->path, o->len);
        /* the key keeps 32 bits of the ID (map IDs are below 2^31): a larger one is none */
        if (o->id > UINT32_MAX ||
            !bsearch(&k, starts->data, starts->len, sizeof(uint64_t), key_cmp)) {
            GString *s = g_string_new(NULL);
            tbbt_ns_escape(s, o->path, o->len);
            tbbt_errbuf(err, errlen, "manifest '%s': object %" PRIu64 " at '%s' is no entry "
                        "of the map '%s' at trace start", p->manifest, o->id, s->str, map);
            g_string_free(s, TRUE);
            return -1;
        }
    }
    return 0;
}

/* The map, and its ties with the trace and the manifest. */
static int check_map(struct tbbt_precheck *p, const struct tbbt_manifest *man,
                     const char *map, const struct tbbt_trace_ident *tid, char *err,
                     size_t errlen)
{
    GArray *starts = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    struct tbbt_ns_map_info mi;
    int rc = tbbt_ns_map_check_starts(map, &mi, starts, err, errlen) < 0 ? -1 : 0;

    if (rc == 0)
        rc = check_ties(p, man, map, tid, &mi, err, errlen) < 0 ||
             check_objs(p, man, map, starts, err, errlen) < 0 ? -1 : 0;
    if (rc == 0)
        p->map_root_id = mi.root_id;
    g_array_free(starts, TRUE);
    return rc;
}

int tbbt_precheck_run(struct tbbt_precheck *p, struct tbbt_manifest **man,
                      char **map_path, char *err, size_t errlen)
{
    struct tbbt_trace_ident tid = { 0 };

    *man = NULL;
    *map_path = NULL;
    if (check_outputs(p, err, errlen) < 0 || check_trace(p->trace, &tid, err, errlen) < 0 ||
        tbbt_manifest_load(p->manifest, man, err, errlen) < 0)
        return -1;
    *map_path = p->map ? g_strdup(p->map)
                : (*man)->map ? g_strdup((*man)->map) : tbbt_ns_map_path(p->trace);
    if (check_map(p, *man, *map_path, &tid, err, errlen) < 0) {
        tbbt_manifest_free(*man);
        g_free(*map_path);
        *man = NULL;
        *map_path = NULL;
        return -1;
    }
    return 0;
}
