/* SPDX-License-Identifier: MIT */
/*
 * Writes the generated benchmark as a trace (synth.h): the raw trace a capture's
 * pass A would give (MOUNT MNT, LOOKUPs with attributes, READs with their replies;
 * RFC 1813 3.3.3 and 3.3.6 for the fields), then pass B of tbbt-convert
 * (tbbt_convert_ids(), TBBT paper 3.1-3.2) for the TBBT-IDs and the hierarchy map, into
 * temporary files renamed into place only when all went well.
 */
#include "synth/synth-int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "extract/extract.h"
#include "trace/trace.h"
#include "util/outfile.h"

#define NFS3_LOOKUP 3
#define NFS3_READ 6
#define MNT3_MNT 1

struct wr {
    struct tbbt_synth *s;
    struct tbbt_fhtab *fh;
    struct tbbt_eptab *ep;
    struct tbbt_trace_writer *w;
    struct tbbt_trace_rec rec;
    uint64_t t;                 /* call time of the next set-up record */
    uint32_t root_fh, ra_fh;
    uint64_t attr_ns;           /* mtime/ctime/atime of every object: before the trace */
    int rc;
    struct tbbt_synth_summary sum;
};

static uint32_t handle(struct wr *w, uint64_t fileid)
{
    uint8_t b[32] = "TBBTSYN1";

    b[8] = 1;   /* fsid */
    for (int i = 0; i < 8; i++)
        b[16 + i] = (uint8_t)(fileid >> (8 * i));
    return tbbt_fhtab_intern(w->fh, b, sizeof(b));
}

static void attr(const struct wr *w, struct tbbt_fattr *a, bool dir, uint64_t fileid,
                 uint64_t size, uint32_t nlink)
{
    memset(a, 0, sizeof(*a));
    a->type = dir ? 2 : 1;
    a->mode = dir ? 0755 : 0644;
    a->nlink = nlink;
    a->size = size;
    a->used = (size + 4095) / 4096 * 4096;
    a->fsid = 1;
    a->fileid = fileid;
    a->atime_ns = a->mtime_ns = a->ctime_ns = w->attr_ns;
}

static uint32_t endpoint(struct wr *w, int reader)
{
    struct tbbt_endpoint ep = { .server = "10.0.0.1", .server_port = 2049,
                                .tcp = w->s->cfg.tcp };

    if (reader < 0) {
        g_strlcpy(ep.client, "10.2.0.1", sizeof(ep.client));
        ep.client_port = 999;
    } else {
        uint32_t x = (uint32_t)reader + 1;
        g_snprintf(ep.client, sizeof(ep.client), "10.1.%u.%u", x >> 8, x & 255);
        ep.client_port = (uint16_t)(1000 + reader);
    }
    return tbbt_eptab_intern(w->ep, &ep);
}

/* A cleared record with a successful reply; times from call_ns. */
static struct tbbt_trace_rec *op(struct wr *w, int prog, int proc, int reader, uint64_t call_ns,
                                 uint64_t reply_ns, uint32_t xid)
{
    struct tbbt_trace_rec *r = &w->rec;

    tbbt_trace_rec_clear(r);
    r->call_ns = call_ns;
    r->reply_ns = reply_ns;
    r->prog = (uint8_t)prog;
    r->proc = (uint8_t)proc;
    r->flags = TBBT_RF_REPLY | TBBT_RF_STATUS | (w->s->cfg.tcp ? TBBT_RF_TCP : 0);
    r->xid = xid;
    r->endpoint = endpoint(w, reader);
    r->rpc_stat = TBBT_RPC_SUCCESS;
    r->status = 0;
    return r;
}

static void put(struct wr *w)
{
    int rc;

    if (w->rc < 0)
        return;
    if ((rc = tbbt_trace_writer_put(w->w, &w->rec)) < 0)
        w->rc = rc;
    else
        w->sum.records++;
}

/* The xid of a client's n-th call: distinct per client, like a real one's counter. */
static uint32_t xid_of(int reader, uint64_t n)
{
    return (uint32_t)(((uint64_t)(reader + 2) << 24) + n + 1);
}

/* A set-up record's call time: the next step of the set-up clock. */
static uint64_t setup_time(struct wr *w)
{
    uint64_t t = w->t;

    w->t += TBBT__SYNTH_SETUP_STEP;
    return t;
}

static void mnt(struct wr *w, int reader, uint64_t *n)
{
    uint64_t t = setup_time(w);
    struct tbbt_trace_rec *r = op(w, TBBT_PROG_MNT3, MNT3_MNT, reader, t,
                                  t + TBBT__SYNTH_SETUP_STEP / 2, xid_of(reader, (*n)++));

    tbbt_trace_rec_set_str(r, &r->dirpath, "/tbbt", 5);
    TBBT_SET(r, TBBT_F_DIRPATH);
    r->new_fh = w->root_fh;
    TBBT_SET(r, TBBT_F_NEW_FH);
    put(w);
}

/* LOOKUP name in (dirfh, dir attributes) giving (fh, object attributes). */
static void lookup(struct wr *w, int reader, uint64_t *n, uint32_t dirfh,
                   const struct tbbt_fattr *da, const char *name, uint32_t fh,
                   const struct tbbt_fattr *oa)
{
    uint64_t t = setup_time(w);
    struct tbbt_trace_rec *r = op(w, TBBT_PROG_NFS3, NFS3_LOOKUP, reader, t,
                                  t + TBBT__SYNTH_SETUP_STEP / 2, xid_of(reader, (*n)++));

    r->fh = dirfh;
    TBBT_SET(r, TBBT_F_FH);
    tbbt_trace_rec_set_str(r, &r->name, name, (uint32_t)strlen(name));
    TBBT_SET(r, TBBT_F_NAME);
    r->new_fh = fh;
    TBBT_SET(r, TBBT_F_NEW_FH);
    r->obj_attr = *oa;
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    r->dir_attr = *da;
    TBBT_SET(r, TBBT_F_DIR_ATTR);
    put(w);
}

/* The directory attributes of the root, ra/ and ra/g<N>/. */
static void root_attr(const struct wr *w, struct tbbt_fattr *a)
{
    attr(w, a, true, TBBT__SYNTH_ROOT_FILEID, 4096, 3);
}

static void ra_attr(const struct wr *w, struct tbbt_fattr *a)
{
    attr(w, a, true, TBBT__SYNTH_RA_FILEID, 4096, 2 + w->s->ngroups);
}

/* LOOKUP of g<N> under ra/ and of the file in it, by client reader. */
static void lookup_file(struct wr *w, int reader, uint64_t *n, const struct tbbt_synth_file *f,
                        bool with_dir)
{
    struct tbbt_fattr ra, ga, fa;
    uint32_t gfh = handle(w, f->dir_fileid);
    char name[24];

    ra_attr(w, &ra);
    attr(w, &ga, true, f->dir_fileid, 4096, 2);
    if (with_dir) {
        g_snprintf(name, sizeof(name), "g%u", f->group);
        lookup(w, reader, n, w->ra_fh, &ra, name, gfh, &ga);
    }
    attr(w, &fa, false, f->fileid, f->size, 1);
    g_snprintf(name, sizeof(name), "f%u", f->index);
    lookup(w, reader, n, gfh, &ga, name, handle(w, f->fileid), &fa);
}

/* The set-up client of --file-set all: looks up every directory and file. */
static void setup_all(struct wr *w, uint64_t *n)
{
    struct tbbt_fattr rt, ra;
    size_t nf;
    const struct tbbt_synth_file *f = tbbt_synth_files(w->s, &nf);

    root_attr(w, &rt);
    ra_attr(w, &ra);
    mnt(w, -1, n);
    lookup(w, -1, n, w->root_fh, &rt, "ra", w->ra_fh, &ra);
    for (size_t i = 0; i < nf; i++)
        lookup_file(w, -1, n, &f[i], i == 0 || f[i].group != f[i - 1].group);
}

static void write_read(struct wr *w, const struct tbbt_synth_read *rd, uint64_t n)
{
    size_t nf;
    const struct tbbt_synth_file *f = &tbbt_synth_files(w->s, &nf)[rd->file];
    struct tbbt_trace_rec *r = op(w, TBBT_PROG_NFS3, NFS3_READ, (int)rd->reader, rd->call_ns,
                                  rd->reply_ns, xid_of((int)rd->reader, n));

    r->fh = handle(w, f->fileid);
    r->offset = rd->offset;
    r->count = rd->count;
    r->res_count = rd->count;
    r->eof = rd->eof;
    TBBT_SET(r, TBBT_F_FH);
    TBBT_SET(r, TBBT_F_OFFSET);
    TBBT_SET(r, TBBT_F_COUNT);
    TBBT_SET(r, TBBT_F_RES_COUNT);
    TBBT_SET(r, TBBT_F_EOF);
    attr(w, &r->obj_attr, false, f->fileid, f->size, 1);
    TBBT_SET(r, TBBT_F_OBJ_ATTR);
    put(w);
    w->sum.reads++;
    w->sum.bytes += rd->count;
    if (rd->reply_ns - w->s->cfg.start_ns > w->sum.span_ns)
        w->sum.span_ns = rd->reply_ns - w->s->cfg.start_ns;
}

static void write_records(struct wr *w)
{
    struct tbbt_synth *s = w->s;
    struct tbbt_synth_read rd;
    struct tbbt_fattr rt, ra;
    uint64_t setup_n = 0, *n = g_new0(uint64_t, s->cfg.readers);
    size_t nf;
    const struct tbbt_synth_file *files = tbbt_synth_files(s, &nf);

    root_attr(w, &rt);
    ra_attr(w, &ra);
    if (s->cfg.fileset == TBBT_SYNTH_FILES_ALL)
        setup_all(w, &setup_n);
    for (uint32_t r = 0; r < s->cfg.readers; r++) {
        mnt(w, (int)r, &n[r]);
        lookup(w, (int)r, &n[r], w->root_fh, &rt, "ra", w->ra_fh, &ra);
        lookup_file(w, (int)r, &n[r], &files[s->reader_file[r]], true);
    }
    w->sum.span_ns = w->t - s->cfg.start_ns;
    tbbt_synth_rewind(s);
    while (w->rc == 0 && tbbt_synth_next_read(s, &rd) == 1)
        write_read(w, &rd, n[rd.reader]++);
    w->sum.swaps = tbbt_synth_swaps(s);
    g_free(n);
}

int tbbt_synth_write_raw(struct tbbt_synth *s, const char *path,
                         struct tbbt_synth_summary *sum, char *err, size_t errlen)
{
    struct wr w = { .s = s };
    int rc;

    w.fh = tbbt_fhtab_new();
    w.ep = tbbt_eptab_new();
    w.t = s->cfg.start_ns;
    w.attr_ns = s->cfg.start_ns - 86400ull * 1000000000ull;
    tbbt_trace_rec_init(&w.rec);
    if (!(w.w = tbbt_trace_writer_open(path, w.fh, w.ep, &rc))) {
        tbbt_errbuf(err, errlen, "cannot create '%s': %s", path, tbbt_strerror(rc));
        goto out;
    }
    w.root_fh = handle(&w, TBBT__SYNTH_ROOT_FILEID);
    w.ra_fh = handle(&w, TBBT__SYNTH_RA_FILEID);
    write_records(&w);
    if (w.rc < 0) {
        rc = w.rc;
        tbbt_trace_writer_abort(w.w);
    } else {
        rc = tbbt_trace_writer_close(w.w);
    }
    if (rc < 0)
        tbbt_errbuf(err, errlen, "cannot write '%s': %s", path, tbbt_strerror(rc));
    else if (sum)
        *sum = w.sum;
out:
    tbbt_trace_rec_fini(&w.rec);
    tbbt_fhtab_free(w.fh);
    tbbt_eptab_free(w.ep);
    return rc;
}

/*
 * Creates a new empty file beside final ("<final>.tmp-PID-N", mode 0666 less the
 * umask) and returns its name (given: g_free), or NULL with -errno in *rc.
 */
static char *make_temp(const char *final, const char *what, int *rc)
{
    for (unsigned i = 0; i < 1000; i++) {
        char *p = g_strdup_printf("%s.%s-%ld-%u", final, what, (long)getpid(), i);
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            close(fd);
            return p;
        }
        *rc = -errno;
        g_free(p);
        if (*rc != -EEXIST)
            return NULL;
    }
    return NULL;
}

static void drop(char *path)
{
    if (path)
        unlink(path);
    g_free(path);
}

/* Pass B over raw into tmp_trace and tmp_map; the map entries into *sum. */
static int pass_b(const char *raw, const char *tmp_trace, const char *tmp_map,
                  struct tbbt_synth_summary *sum, char *err, size_t errlen)
{
    uint64_t entries = 0;
    int rc = tbbt_convert_ids(raw, tmp_trace, tmp_map, &entries, err, errlen);

    if (rc == 0)
        sum->map_entries = entries;
    return rc;
}

int tbbt_synth_run(struct tbbt_synth *s, const char *trace_path, const char *map_path,
                   struct tbbt_synth_summary *sum, char *err, size_t errlen)
{
    struct tbbt_synth_summary local = {0};
    struct tbbt_outfile *out_trace = NULL, *out_map = NULL;
    char *raw = NULL;
    size_t nf;
    int rc = 0;

    /* the outputs are written aside (beside their targets, symlinks followed) */
    if (!(out_trace = tbbt_outfile_new(trace_path, TBBT_OUTFILE_SPOOL, &rc, err, errlen)) ||
        !(out_map = tbbt_outfile_new(map_path, TBBT_OUTFILE_SPOOL, &rc, err, errlen)))
        goto fail;
    if (!(raw = make_temp(tbbt_outfile_path(out_trace), "raw", &rc))) {
        tbbt_errbuf(err, errlen, "cannot write '%s': %s", trace_path, tbbt_strerror(rc));
        goto fail;
    }
    if ((rc = tbbt_synth_write_raw(s, raw, &local, err, errlen)) < 0 ||
        (rc = pass_b(raw, tbbt_outfile_path(out_trace), tbbt_outfile_path(out_map), &local, err,
                     errlen)) < 0)
        goto fail;
    /*
     * One written in place (a device, a FIFO: its copy may fail, ENOSPC) first, so that
     * its failure leaves the other's existing file as it was.
     */
    if (tbbt_outfile_in_place(out_trace) && !tbbt_outfile_in_place(out_map)) {
        rc = tbbt_outfile_commit(out_trace, err, errlen);
        out_trace = NULL;
        if (rc < 0)
            goto fail;
    }
    rc = tbbt_outfile_commit(out_map, err, errlen);
    out_map = NULL;
    if (rc < 0)
        goto fail;
    rc = tbbt_outfile_commit(out_trace, err, errlen);   /* NULL (done above): 0 */
    out_trace = NULL;
    if (rc < 0)
        goto fail;
    drop(raw);
    tbbt_synth_files(s, &nf);
    local.files_in_map = nf;
    if (sum)
        *sum = local;
    return 0;
fail:
    drop(raw);
    tbbt_outfile_abort(out_trace);
    tbbt_outfile_abort(out_map);
    return rc < 0 ? rc : -EIO;
}
