/* SPDX-License-Identifier: MIT */
/*
 * The read stream of the nfs-tricks read benchmark (synth.h): file set, stride order,
 * per-reader reordering and the round-robin clock.  Reference: nfs-tricks paper
 * sections 4.3 (file set, concurrent readers) and 7 (stride readers); the reordering
 * is src/trace/reorder.h.  Writing the trace is in synth-write.c.
 */
#include "synth/synth-int.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void tbbt_synth_cfg_init(struct tbbt_synth_cfg *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->readers = 1;
    cfg->stride = 1;
    cfg->read_size = TBBT_SYNTH_DEFAULT_READ;
    cfg->scale = 1.0;
    cfg->reorder.p = 0.0;
    cfg->reorder.k = 1;
    cfg->seed = TBBT_SYNTH_DEFAULT_SEED;
    cfg->fileset = TBBT_SYNTH_FILES_READ;
    cfg->start_ns = (uint64_t)TBBT_SYNTH_DEFAULT_START_S * 1000000000ull;
}

int tbbt_synth_cfg_check(const struct tbbt_synth_cfg *cfg, char *err, size_t errlen)
{
    uint32_t max_read = cfg->tcp ? TBBT_SYNTH_TCP_MAX_READ : TBBT_SYNTH_UDP_MAX_READ;

    if (cfg->readers < 1 || cfg->readers > TBBT_SYNTH_MAX_READERS) {
        tbbt_errbuf(err, errlen, "readers must be 1..%u", TBBT_SYNTH_MAX_READERS);
        return -1;
    }
    if (cfg->stride < 1 || cfg->stride > TBBT_SYNTH_MAX_STRIDE) {
        tbbt_errbuf(err, errlen, "stride must be 1..%u", TBBT_SYNTH_MAX_STRIDE);
        return -1;
    }
    if (cfg->read_size < 1 || cfg->read_size > max_read) {
        tbbt_errbuf(err, errlen, "read size must be 1..%u bytes over %s%s", max_read,
                    cfg->tcp ? "TCP" : "UDP", cfg->tcp ? "" : " (up to 1 MiB with --tcp)");
        return -1;
    }
    if (!isfinite(cfg->scale) || cfg->scale <= 0.0 || cfg->scale > TBBT_SYNTH_MAX_SCALE) {
        tbbt_errbuf(err, errlen, "scale must be in (0, %g]", TBBT_SYNTH_MAX_SCALE);
        return -1;
    }
    if (!(cfg->reorder.p >= 0.0 && cfg->reorder.p <= 1.0) || cfg->reorder.k < 1 ||
        cfg->reorder.k > TBBT_REORDER_MAX_K) {
        tbbt_errbuf(err, errlen, "reorder probability must be in [0, 1] and distance 1..%d",
                    TBBT_REORDER_MAX_K);
        return -1;
    }
    if (!isfinite(cfg->rate) || cfg->rate < 0.0 || cfg->rate > 1e9) {
        tbbt_errbuf(err, errlen, "rate must be in (0, 1e9] reads/s");
        return -1;
    }
    return 0;
}

double tbbt_synth_rate(const struct tbbt_synth_cfg *cfg)
{
    if (cfg->rate > 0.0)
        return cfg->rate;
    return TBBT_SYNTH_DEFAULT_MBPS * TBBT_SYNTH_MIB /
           ((double)cfg->read_size * (double)cfg->readers);
}

uint64_t tbbt_synth_file_size(uint32_t nfiles, double scale, uint32_t read_size)
{
    double bytes = (double)TBBT_SYNTH_BASE_SIZE * scale / (double)(nfiles ? nfiles : 1);
    /* the epsilon keeps 256 MiB * (A/B) / n from falling just short of a whole read */
    uint64_t blocks = (uint64_t)floor(bytes / (double)read_size + 1e-6);

    return (blocks ? blocks : 1) * (uint64_t)read_size;
}

uint64_t tbbt_synth_stride_block(uint64_t nblocks, uint32_t stride, uint64_t i)
{
    uint64_t q, tail, seen = 0;

    if (stride <= 1 || nblocks == 0)
        return i;
    /* stream j covers [floor(j B / S), floor((j+1) B / S)): q or q + 1 blocks */
    q = nblocks / stride;
    if (i < q * stride)
        return (uint64_t)((unsigned __int128)(i % stride) * nblocks / stride) + i / stride;
    /* the last round: only the streams of q + 1 blocks, in stream order */
    tail = i - q * stride;
    for (uint32_t j = 0; j < stride; j++) {
        uint64_t start = (uint64_t)((unsigned __int128)j * nblocks / stride);
        uint64_t end = (uint64_t)((unsigned __int128)(j + 1) * nblocks / stride);
        if (end - start > q && seen++ == tail)
            return start + q;
    }
    return i;   /* i >= nblocks: not a block of the file */
}

/* Appends the files of the group of n files; the reader group's files get readers. */
static void add_group(struct tbbt_synth *s, uint32_t n, uint32_t gi, bool keep, bool read)
{
    for (uint32_t i = 0; i < n; i++) {
        struct tbbt_synth_file f = {0};

        f.group = n;
        f.index = i;
        f.size = tbbt_synth_file_size(n, s->cfg.scale, s->cfg.read_size);
        f.fileid = TBBT__SYNTH_FILEID0 + s->next_fileid++;
        f.dir_fileid = TBBT__SYNTH_DIRID0 + gi;
        f.reader = read ? (int)i : -1;
        g_snprintf(f.path, sizeof(f.path), "ra/g%u/f%u", n, i);
        if (keep)
            g_array_append_val(s->files, f);
    }
}

static void build_files(struct tbbt_synth *s)
{
    uint32_t n = s->cfg.readers, gi = 0;
    bool all = s->cfg.fileset == TBBT_SYNTH_FILES_ALL, paper = false;

    s->files = g_array_new(FALSE, TRUE, sizeof(struct tbbt_synth_file));
    for (uint32_t g = 0; g < TBBT_SYNTH_GROUPS; g++, gi++) {
        uint32_t m = 1u << g;
        add_group(s, m, gi, all || m == n, m == n);
        paper |= m == n;
    }
    if (!paper)
        add_group(s, n, gi, true, true);
    s->ngroups = all ? gi + !paper : 1;
    s->reader_file = g_new(uint32_t, n);
    for (uint32_t i = 0; i < s->files->len; i++) {
        const struct tbbt_synth_file *f = &g_array_index(s->files, struct tbbt_synth_file, i);
        if (f->reader >= 0)
            s->reader_file[f->reader] = i;
    }
    s->nblocks = tbbt_synth_file_size(n, s->cfg.scale, s->cfg.read_size) / s->cfg.read_size;
}

/* The per-reader reorder seed: reader r's stream of splitmix64 from (seed, r). */
static uint64_t reader_seed(uint64_t seed, uint32_t r)
{
    uint64_t st = seed ^ (0xd1b54a32d192ed03ull * ((uint64_t)r + 1));

    return tbbt_rng_next(&st);
}

static void reset_readers(struct tbbt_synth *s)
{
    for (uint32_t r = 0; r < s->cfg.readers; r++) {
        struct tbbt__synth_reader *rd = &s->rd[r];
        tbbt_reorder_free(rd->ro);
        rd->ro = NULL;
        rd->in = 0;
        if (s->cfg.reorder.p > 0.0)
            rd->ro = tbbt_reorder_new(&s->cfg.reorder, reader_seed(s->cfg.seed, r));
    }
    s->round = 0;
    s->next_reader = 0;
}

struct tbbt_synth *tbbt_synth_new(const struct tbbt_synth_cfg *cfg, char *err, size_t errlen)
{
    struct tbbt_synth *s;
    double period;

    if (tbbt_synth_cfg_check(cfg, err, errlen) < 0)
        return NULL;
    s = g_new0(struct tbbt_synth, 1);
    s->cfg = *cfg;
    s->cfg.rate = tbbt_synth_rate(cfg);
    build_files(s);
    period = 1e9 / s->cfg.rate;
    s->period_ns = period < 1.0 ? 1 : (uint64_t)llround(period);
    s->latency_ns = s->period_ns / 2 < TBBT__SYNTH_MAX_LATENCY ? s->period_ns / 2
                                                               : TBBT__SYNTH_MAX_LATENCY;
    if (s->latency_ns == 0)
        s->latency_ns = 1;
    s->setup_ops = 4ull * cfg->readers;
    if (cfg->fileset == TBBT_SYNTH_FILES_ALL)
        s->setup_ops += 2 + s->ngroups + s->files->len;
    s->reads_start_ns = cfg->start_ns + s->setup_ops * TBBT__SYNTH_SETUP_STEP +
                        TBBT__SYNTH_SETUP_GAP;
    s->rd = g_new0(struct tbbt__synth_reader, cfg->readers);
    reset_readers(s);
    return s;
}

void tbbt_synth_free(struct tbbt_synth *s)
{
    if (!s)
        return;
    for (uint32_t r = 0; r < s->cfg.readers; r++)
        tbbt_reorder_free(s->rd[r].ro);
    g_free(s->rd);
    g_free(s->reader_file);
    g_array_free(s->files, TRUE);
    g_free(s);
}

const struct tbbt_synth_cfg *tbbt_synth_cfg(const struct tbbt_synth *s)
{
    return &s->cfg;
}

const struct tbbt_synth_file *tbbt_synth_files(const struct tbbt_synth *s, size_t *n)
{
    *n = s->files->len;
    return (const struct tbbt_synth_file *)(void *)s->files->data;
}

uint64_t tbbt_synth_reads_per_reader(const struct tbbt_synth *s)
{
    return s->nblocks;
}

uint64_t tbbt_synth_total_reads(const struct tbbt_synth *s)
{
    return s->nblocks * s->cfg.readers;
}

void tbbt_synth_rewind(struct tbbt_synth *s)
{
    reset_readers(s);
}

uint64_t tbbt_synth_swaps(const struct tbbt_synth *s)
{
    uint64_t n = 0;

    for (uint32_t r = 0; r < s->cfg.readers; r++)
        n += s->rd[r].ro ? tbbt_reorder_swaps(s->rd[r].ro) : 0;
    return n;
}

/* Reader r's next block: its stride order, through its reorderer. */
static uint64_t next_block(struct tbbt_synth *s, struct tbbt__synth_reader *rd)
{
    void *it;

    if (!rd->ro)
        return tbbt_synth_stride_block(s->nblocks, s->cfg.stride, rd->in++);
    /* items are block + 1, so that block 0 is not the NULL of "nothing yet" */
    while (rd->in < s->nblocks && tbbt_reorder_room(rd->ro)) {
        uint64_t b = tbbt_synth_stride_block(s->nblocks, s->cfg.stride, rd->in++);
        tbbt_reorder_push(rd->ro, (void *)(uintptr_t)(b + 1), true);
    }
    it = tbbt_reorder_pop(rd->ro, rd->in == s->nblocks);
    g_assert(it != NULL);
    return (uint64_t)(uintptr_t)it - 1;
}

int tbbt_synth_next_read(struct tbbt_synth *s, struct tbbt_synth_read *out)
{
    uint32_t r = s->next_reader;
    const struct tbbt_synth_file *f;
    uint64_t size;

    if (s->round >= s->nblocks)
        return 0;
    f = &g_array_index(s->files, struct tbbt_synth_file, s->reader_file[r]);
    size = f->size;
    memset(out, 0, sizeof(*out));
    out->reader = r;
    out->file = s->reader_file[r];
    out->seq = s->round;
    out->block = next_block(s, &s->rd[r]);
    out->offset = out->block * s->cfg.read_size;
    out->count = s->cfg.read_size;
    out->eof = out->offset + out->count >= size;
    out->call_ns = s->reads_start_ns + s->round * s->period_ns +
                   (uint64_t)r * s->period_ns / s->cfg.readers;
    out->reply_ns = out->call_ns + s->latency_ns;
    if (++s->next_reader == s->cfg.readers) {
        s->next_reader = 0;
        s->round++;
    }
    return 1;
}
