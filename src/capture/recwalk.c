/* SPDX-License-Identifier: MIT */
/*
 * The record walker (recwalk-int.h): classic pcap and pcapng records read
 * through a bounds-checked window, with salvage of damaged files.
 *
 * Input.  An uncompressed classic pcap file is mapped read-only (2 MiB
 * aligned, MADV_HUGEPAGE, pages let go every few MiB: see capfile.c's file
 * comment); anything else (pcapng, gzip) is read into a sliding window of
 * WIN_CAP bytes (READ_CHUNK at a time, so that only about the largest record
 * plus a chunk of it is ever touched: resident memory per file stays well
 * under WIN_CAP), inflated with zlib's inflate() directly (gzip members one
 * after another), so that when the compressed data turns out corrupt or cut
 * short, every byte inflated before that point is still walked.  need() is
 * the only way to the bytes: it answers a pointer to [off, off + n) or NULL
 * when the input ends first.
 *
 * Salvage.  A classic pcap record header is bad when its captured length is
 * over libpcap's maximum (256 KiB), or over the snapshot length (the header's,
 * raised by good records longer than it) or the wire length and the record
 * after it does not look like one (captured length at most 256 KiB, wire
 * length at most WIRE_MAX, time near).  A pcapng block is bad
 * when its length is not a multiple of 4 in [12, BLOCK_MAX] or its trailing
 * length differs from its leading one; a packet block whose captured length
 * does not fit in it, or whose interface is unknown, is skipped alone.  After
 * a bad header the walk searches, byte by byte, for the next plausible
 * record: classic pcap, a header whose captured length is at most the
 * snapshot length, the wire length and 256 KiB, whose wire length is at most
 * WIRE_MAX, whose time is within a day of the last good packet's, followed by
 * another such header or the end of the file; pcapng, a block of a known type
 * whose trailing length equals its leading length.  If there is none, the
 * file ends with what came before.  Each bad record counts in
 * skipped_records, each search that found one in resyncs, the bytes passed
 * over in damaged_bytes.
 *
 * References: pcap-savefile(5), draft-ietf-opsawg-pcapng (blocks 0x0A0D0D0A,
 * 1, 2, 3, 6 read; 4, 5, 7-10, custom skipped), RFC 1950-1952 (zlib, gzip).
 */
#include "capture/recwalk-int.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define PCAP_FILE_HDR 24
#define PCAP_REC_HDR 16
#define PCAP_MAX_CAPLEN 262144u        /* libpcap's MAXIMUM_SNAPLEN */
#define WIRE_MAX (1u << 20)            /* a plausible wire length (GSO packets included) */
#define TS_NEAR (86400ull * 1000000000u) /* a resync candidate's time: a day from the last */
#define BLOCK_MAX (1u << 20)           /* largest pcapng block read */
#define WIN_CAP (4u << 20)             /* sliding window: two largest blocks and more */
#define ZIN_CAP (256u << 10)           /* compressed bytes read at once */
#define READ_CHUNK (256u << 10)        /* (inflated) bytes added to the window at once */
#define WALK_ALIGN (2u << 20)
#define WALK_DROP (4u << 20)
#define WALK_FAR 512u
#define MAX_IFS 256u                   /* pcapng interfaces per section */

#define SHB_TYPE 0x0A0D0D0Au
#define BOM 0x1A2B3C4Du

struct iface {
    int dlt;
    uint32_t snaplen;
    bool bin;             /* time resolution 2^-res, else 10^-res */
    uint8_t res;
    int64_t offset_s;     /* if_tsoffset */
};

struct tbbt__rw {
    char *path;
    /* the window: bytes [win_off, win_off + win_len) of the input at win */
    const uint8_t *win;
    size_t win_len;
    uint64_t win_off;
    uint64_t anchor;      /* bytes before it may be dropped from the window */
    /* mapping (classic pcap only) */
    void *map;
    size_t map_len, dropped;
    /* stream */
    int fd;
    uint8_t *buf;         /* WIN_CAP bytes */
    bool gz, eof;
    z_stream z;
    uint8_t *zin;
    uint64_t pos, size;   /* file bytes read, file size */
    /* format */
    bool ng, swapped, nsec;
    uint32_t snaplen;
    int dlt;
    struct iface ifs[MAX_IFS];
    uint32_t n_if;
    int link0;            /* the link type of the file's first interface (libpcap's dlt), or -1 */
    uint64_t off;         /* the next record */
    uint64_t last_ts;
    bool have_ts, done, known;
    struct tbbt_cap_damage dmg;
};

static void note(struct tbbt__rw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Keeps the first problem's one-line description. */
static void note(struct tbbt__rw *w, const char *fmt, ...)
{
    va_list ap;

    if (w->dmg.why[0])
        return;
    va_start(ap, fmt);
    vsnprintf(w->dmg.why, sizeof w->dmg.why, fmt, ap);
    va_end(ap);
}

/* ---- input ------------------------------------------------------------------ */

/* Reads more input into buf[*len, cap): bytes added, 0 at the end (w->eof set). */
static size_t fill_plain(struct tbbt__rw *w, uint8_t *buf, size_t room)
{
    ssize_t n;

    do
        n = read(w->fd, buf, room);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        if (n < 0)
            note(w, "read error: %s", g_strerror(errno));
        w->eof = true;
        return 0;
    }
    w->pos += (uint64_t)n;
    return (size_t)n;
}

/*
 * After the last gzip member: what else the file holds (z->avail_in bytes read, and the
 * rest of the file) is passed over.  Zero bytes (block padding) are ignored, as gzip(1)
 * does; anything else makes the file damaged, all of it counted in damaged_bytes.
 */
static void gz_trailer(struct tbbt__rw *w)
{
    z_stream *z = &w->z;
    uint64_t n = z->avail_in;
    bool nonzero = false;
    ssize_t r;

    for (uInt i = 0; i < z->avail_in && !nonzero; i++)
        nonzero = z->next_in[i] != 0;
    z->avail_in = 0;
    for (;;) {
        do
            r = read(w->fd, w->zin, ZIN_CAP);
        while (r < 0 && errno == EINTR);
        if (r <= 0)
            break;
        w->pos += (uint64_t)r;
        n += (uint64_t)r;
        for (ssize_t i = 0; i < r && !nonzero; i++)
            nonzero = w->zin[i] != 0;
    }
    if (n == 0 || !nonzero)
        return;
    w->dmg.trailing_bytes = n;
    w->dmg.damaged_bytes += n;
    note(w, "%" PRIu64 " bytes of something else after the end of the compressed data", n);
}

/* Inflates into buf[0, room): bytes produced, 0 at the end (w->eof set, damage noted). */
static size_t fill_gz(struct tbbt__rw *w, uint8_t *buf, size_t room)
{
    z_stream *z = &w->z;

    z->next_out = buf;
    z->avail_out = (uInt)room;
    while (z->avail_out == room) {
        int r;

        if (z->avail_in == 0) {
            ssize_t n;
            do
                n = read(w->fd, w->zin, ZIN_CAP);
            while (n < 0 && errno == EINTR);
            if (n <= 0) {
                w->dmg.ends_early = true;
                note(w, "compressed data ends early");
                w->eof = true;
                return 0;
            }
            w->pos += (uint64_t)n;
            z->next_in = w->zin;
            z->avail_in = (uInt)n;
        }
        r = inflate(z, Z_NO_FLUSH);
        if (r == Z_STREAM_END) {
            size_t got = room - z->avail_out;
            /*
             * another gzip member may follow; anything else after the stream is
             * ignored.  Its two magic bytes may straddle the end of what was read.
             */
            if (z->avail_in < 2) {
                size_t keep = z->avail_in;
                ssize_t n;
                memmove(w->zin, z->next_in, keep);
                do
                    n = read(w->fd, w->zin + keep, ZIN_CAP - keep);
                while (n < 0 && errno == EINTR);
                z->next_in = w->zin;
                z->avail_in = (uInt)keep + (n > 0 ? (uInt)n : 0);
                w->pos += n > 0 ? (uint64_t)n : 0;
            }
            if (z->avail_in >= 2 && z->next_in[0] == 0x1f && z->next_in[1] == 0x8b) {
                inflateReset(z);
            } else {
                w->eof = true;
                gz_trailer(w);
            }
            if (got || w->eof)
                return got;
            continue;
        }
        if (r != Z_OK && r != Z_BUF_ERROR) {
            w->dmg.ends_early = true;
            note(w, "compressed data is corrupt (zlib: %s)", z->msg ? z->msg : "error");
            w->eof = true;
            return room - z->avail_out;
        }
    }
    return room - z->avail_out;
}

/*
 * The bytes [off, off + n) of the input, or NULL if it ends first.  off must
 * not be below w->anchor; pointers returned earlier are invalidated.
 */
static const uint8_t *need(struct tbbt__rw *w, uint64_t off, size_t n)
{
    if (off >= w->win_off && off - w->win_off <= w->win_len &&
        n <= w->win_len - (off - w->win_off))
        return w->win + (off - w->win_off);
    if (w->map || n > WIN_CAP / 2)
        return NULL;
    /* slide: keep [anchor, end), then read until the range is in */
    {
        uint64_t keep = w->anchor > w->win_off ? w->anchor : w->win_off;
        size_t drop = keep - w->win_off > w->win_len ? w->win_len : (size_t)(keep - w->win_off);
        memmove(w->buf, w->buf + drop, w->win_len - drop);
        w->win_len -= drop;
        w->win_off += drop;
    }
    if (off < w->win_off || off - w->win_off + n > WIN_CAP)
        return NULL;
    while (!w->eof && w->win_len < off - w->win_off + n) {
        /* READ_CHUNK at a time: the buffer's pages past what records need stay untouched */
        size_t room = WIN_CAP - w->win_len, want = READ_CHUNK;
        size_t got = w->gz ? fill_gz(w, w->buf + w->win_len, room < want ? room : want)
                           : fill_plain(w, w->buf + w->win_len, room < want ? room : want);
        w->win_len += got;
    }
    if (w->win_len < off - w->win_off + n)
        return NULL;
    return w->win + (off - w->win_off);
}

/* True if the input ends exactly at off (it may read to find out). */
static bool ends_at(struct tbbt__rw *w, uint64_t off)
{
    return !need(w, off, 1) && off <= w->win_off + w->win_len &&
           (w->map || w->eof) && off == w->win_off + w->win_len;
}

/* Bytes the input still has from off, at most n (reads as needed). */
static size_t have(struct tbbt__rw *w, uint64_t off, size_t n)
{
    uint64_t end;

    if (need(w, off, n))
        return n;
    end = w->win_off + w->win_len;
    return end > off ? (size_t)(end - off < n ? end - off : n) : 0;
}

/* ---- opening ---------------------------------------------------------------- */

/*
 * Maps the file's len bytes read-only at a WALK_ALIGN boundary (huge pages): a PROT_NONE
 * reservation of len + WALK_ALIGN, the file mapped over it at the boundary, the rest of
 * the reservation before and after unmapped again (the part after from the end of the
 * file's last page: munmap() takes page boundaries only, and a tail left there stayed
 * mapped for good, one per file opened).  Unmap with munmap(m, len).
 */
static void *map_aligned(int fd, size_t len)
{
    size_t span, head, plen, page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *r, *m;

    if (len > SIZE_MAX - WALK_ALIGN)
        return MAP_FAILED;
    plen = (len + page - 1) & ~(page - 1);
    span = len + WALK_ALIGN;
    r = mmap(NULL, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return MAP_FAILED;
    head = (WALK_ALIGN - ((uintptr_t)r & (WALK_ALIGN - 1))) & (WALK_ALIGN - 1);
    m = mmap(r + head, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
    if (m == MAP_FAILED) {
        munmap(r, span);
        return MAP_FAILED;
    }
    if (head)
        munmap(r, head);
    if (span - head > plen)
        munmap(m + plen, span - head - plen);
#ifdef MADV_HUGEPAGE
    (void)madvise(m, len, MADV_HUGEPAGE);
#endif
    return m;
}

static uint32_t u32(const struct tbbt__rw *w, const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof v);
    return w->swapped ? __builtin_bswap32(v) : v;
}

static uint16_t u16(const struct tbbt__rw *w, const uint8_t *p)
{
    uint16_t v;

    memcpy(&v, p, sizeof v);
    return w->swapped ? __builtin_bswap16(v) : v;
}

/* Reads the format from the first bytes: classic pcap (and its variant) or pcapng. */
static int read_format(struct tbbt__rw *w)
{
    const uint8_t *h = need(w, 0, 4);
    uint32_t magic;

    if (!h)
        return TBBT_E_TRUNC;
    memcpy(&magic, h, 4);
    switch (magic) {
    case 0xa1b2c3d4: w->nsec = false; w->swapped = false; break;
    case 0xd4c3b2a1: w->nsec = false; w->swapped = true; break;
    case 0xa1b23c4d: w->nsec = true; w->swapped = false; break;
    case 0x4d3cb2a1: w->nsec = true; w->swapped = true; break;
    case SHB_TYPE: w->ng = true; return 0;
    default: return TBBT_E_MAGIC;
    }
    if (!(h = need(w, 0, PCAP_FILE_HDR)))
        return TBBT_E_TRUNC;
    w->snaplen = u32(w, h + 16);
    if (w->snaplen == 0 || w->snaplen > PCAP_MAX_CAPLEN)
        w->snaplen = PCAP_MAX_CAPLEN;
    w->off = PCAP_FILE_HDR;
    return 0;
}

static bool open_input(struct tbbt__rw *w, char *errbuf, size_t errlen)
{
    struct stat sb;
    uint8_t m[4];
    ssize_t n;

    w->fd = open(w->path, O_RDONLY | O_CLOEXEC);
    if (w->fd < 0 || fstat(w->fd, &sb) != 0) {
        snprintf(errbuf, errlen, "'%s': cannot open: %s", w->path, g_strerror(errno));
        return false;
    }
    w->size = S_ISREG(sb.st_mode) ? (uint64_t)sb.st_size : 0;
    n = pread(w->fd, m, 4, 0);
    if (n == 4 && m[0] == 0x1f && m[1] == 0x8b) {
        w->gz = true;
        w->zin = g_malloc(ZIN_CAP);
        if (inflateInit2(&w->z, 15 + 16) != Z_OK) {
            snprintf(errbuf, errlen, "'%s': cannot start zlib", w->path);
            return false;
        }
    } else if (n == 4 && S_ISREG(sb.st_mode) && w->size >= PCAP_FILE_HDR &&
               w->size <= SIZE_MAX && memcmp(m, "\n\r\r\n", 4) != 0) {
        void *map = map_aligned(w->fd, (size_t)w->size);
        if (map != MAP_FAILED) {
            w->map = map;
            w->map_len = (size_t)w->size;
            w->win = map;
            w->win_len = w->map_len;
            w->pos = w->size;
            return true;
        }
    }
    w->buf = g_malloc(WIN_CAP);
    w->win = w->buf;
    return true;
}

struct tbbt__rw *tbbt__rw_open(const char *path, char *errbuf, size_t errlen)
{
    struct tbbt__rw *w = g_new0(struct tbbt__rw, 1);
    int rc;

    w->path = g_strdup(path);
    w->fd = -1;
    w->link0 = -1;
    if (!open_input(w, errbuf, errlen)) {
        tbbt__rw_free(w);
        return NULL;
    }
    rc = read_format(w);
    w->known = rc != TBBT_E_MAGIC;
    if (rc != 0)
        w->done = true;     /* not a capture, or too short for libpcap's check too */
    return w;
}

size_t tbbt__rw_head(struct tbbt__rw *w, const uint8_t **p, size_t max)
{
    size_t n = have(w, 0, max);

    *p = n ? need(w, 0, n) : w->win;
    return n;
}

bool tbbt__rw_known(const struct tbbt__rw *w)
{
    return w->known;
}

void tbbt__rw_set_dlt(struct tbbt__rw *w, int dlt)
{
    w->dlt = dlt;
}

void tbbt__rw_free(struct tbbt__rw *w)
{
    if (!w)
        return;
    if (w->map)
        munmap(w->map, w->map_len);
    if (w->gz)
        inflateEnd(&w->z);
    if (w->fd >= 0)
        close(w->fd);
    g_free(w->buf);
    g_free(w->zin);
    g_free(w->path);
    g_free(w);
}

const struct tbbt_cap_damage *tbbt__rw_damage(const struct tbbt__rw *w)
{
    return &w->dmg;
}

uint64_t tbbt__rw_pos(const struct tbbt__rw *w)
{
    return w->map ? w->off : w->pos;
}

uint64_t tbbt__rw_size(const struct tbbt__rw *w)
{
    return w->size;
}

/* ---- salvage ---------------------------------------------------------------- */

/* The file ends here: from a bad record at off on, nothing plausible follows. */
static void give_up(struct tbbt__rw *w, uint64_t off)
{
    uint64_t end = w->win_off + w->win_len;    /* a scan may have read past off */

    if (end < off)
        end = off;
    for (;;) {
        w->anchor = end;
        if (!need(w, end, 1))
            break;
        end = w->win_off + w->win_len;
    }
    w->dmg.damaged_bytes += end - off;
    w->done = true;
}

/* A resync found the next record at to, after a bad one at from. */
static void resynced(struct tbbt__rw *w, uint64_t from, uint64_t to)
{
    w->dmg.resyncs++;
    w->dmg.damaged_bytes += to - from;
    w->off = to;
}

/* Looks for the first offset from `from` at which plausible(w, o) holds. */
static bool scan(struct tbbt__rw *w, uint64_t from, bool (*plausible)(struct tbbt__rw *, uint64_t))
{
    for (uint64_t o = from + 1;; o++) {
        w->anchor = o;
        if (!need(w, o, 12))
            return false;
        if (plausible(w, o)) {
            resynced(w, from, o);
            return true;
        }
    }
}

/* ---- classic pcap ------------------------------------------------------------ */

static uint64_t classic_ts(const struct tbbt__rw *w, const uint8_t *h)
{
    return (uint64_t)u32(w, h) * 1000000000u +
           (w->nsec ? u32(w, h + 4) : (uint64_t)u32(w, h + 4) * 1000u);
}

/*
 * A record header that could be real, its time near ref (if has_ref).  strict
 * (a resync candidate) also wants the captured length within the snapshot
 * length (the header's, raised by longer good records: some writers put a
 * wrong one there) and the wire length; the record after a suspicious or
 * candidate record is only checked loosely.
 */
static bool classic_hdr_ok(const struct tbbt__rw *w, const uint8_t *h, bool has_ref,
                           uint64_t ref, bool strict)
{
    uint32_t caplen = u32(w, h + 8), len = u32(w, h + 12);
    uint64_t ts = classic_ts(w, h);

    if (caplen > PCAP_MAX_CAPLEN || len > WIRE_MAX ||
        (strict && (caplen > w->snaplen || caplen > len)) ||
        u32(w, h + 4) >= (w->nsec ? 1000000000u : 1000000u))
        return false;
    return !has_ref || (ts > ref ? ts - ref : ref - ts) <= TS_NEAR;
}

/* The record after the one at off (of caplen bytes) is plausible, or the file ends there. */
static bool classic_next_ok(struct tbbt__rw *w, uint64_t off, uint32_t caplen, uint64_t ts)
{
    uint64_t next = off + PCAP_REC_HDR + caplen;
    const uint8_t *h = need(w, next, PCAP_REC_HDR);

    return h ? classic_hdr_ok(w, h, true, ts, false) : ends_at(w, next);
}

static bool classic_plausible(struct tbbt__rw *w, uint64_t o)
{
    const uint8_t *h = need(w, o, PCAP_REC_HDR);

    if (!h || !classic_hdr_ok(w, h, w->have_ts, w->last_ts, true))
        return false;
    return classic_next_ok(w, o, u32(w, h + 8), classic_ts(w, h));
}

static void drop_mapped(struct tbbt__rw *w, uint64_t rec)
{
    if (w->off - w->dropped >= WALK_DROP) {
        size_t to = (size_t)rec & ~(size_t)(WALK_ALIGN - 1);
        if (to > w->dropped)
            (void)madvise((uint8_t *)w->map + w->dropped, to - w->dropped, MADV_DONTNEED);
        w->dropped = to;
    }
}

/* A bad record at off: counted, then a resync or the end. */
static void bad_record(struct tbbt__rw *w, uint64_t off,
                       bool (*plausible)(struct tbbt__rw *, uint64_t))
{
    w->dmg.skipped_records++;
    if (!scan(w, off, plausible))
        give_up(w, off);
}

static int classic_next(struct tbbt__rw *w, struct tbbt__rw_pkt *pk)
{
    while (!w->done) {
        uint64_t off = w->off;
        const uint8_t *h;
        uint32_t caplen, len;
        size_t left;

        w->anchor = off;
        h = need(w, off, PCAP_REC_HDR);
        if (!h) {
            if ((left = have(w, off, PCAP_REC_HDR)) > 0) {
                w->dmg.ends_early = true;
                note(w, "record header cut short: %zu of %d bytes", left, PCAP_REC_HDR);
            }
            w->done = true;
            return 0;
        }
        caplen = u32(w, h + 8);
        len = u32(w, h + 12);
        if (caplen > PCAP_MAX_CAPLEN ||
            ((caplen > w->snaplen || caplen > len) &&
             !classic_next_ok(w, off, caplen, classic_ts(w, h)))) {
            note(w, "record at byte %" G_GUINT64_FORMAT ": captured length %u (wire %u, "
                 "snapshot %u)", (guint64)off, caplen, len, w->snaplen);
            bad_record(w, off, classic_plausible);
            continue;
        }
        if (!(h = need(w, off, PCAP_REC_HDR + (size_t)caplen))) {
            w->dmg.ends_early = true;
            note(w, "packet cut short: %zu of %u captured bytes",
                 have(w, off + PCAP_REC_HDR, caplen), caplen);
            w->done = true;
            return 0;
        }
        if (caplen > w->snaplen)
            w->snaplen = caplen;       /* a good record longer than the header says */
        pk->ts_ns = classic_ts(w, h);
        pk->caplen = caplen;
        pk->len = len;
        pk->data = h + PCAP_REC_HDR;
        pk->dlt = w->dlt;
        w->last_ts = pk->ts_ns;
        w->have_ts = true;
        w->off = off + PCAP_REC_HDR + caplen;
        if (w->map) {
            if (caplen >= WALK_FAR) {
                /* past a large packet the next header is prefetched (capfile.c) */
                __builtin_prefetch(w->win + w->off);
                __builtin_prefetch(w->win + w->off + 64);
                __builtin_prefetch(w->win + w->off + 128);
                __builtin_prefetch(w->win + w->off + 192);
            }
            drop_mapped(w, off);
        }
        return 1;
    }
    return 0;
}

/* ---- pcapng ------------------------------------------------------------------ */

static bool known_block(uint32_t type)
{
    return (type >= 1 && type <= 10) || type == SHB_TYPE || type == 0xBAD ||
           type == 0x40000BAD;
}

/* A block at o: known type, sane length, trailing length equal to the leading one. */
static bool ng_framed(struct tbbt__rw *w, uint64_t o, uint32_t *blen)
{
    const uint8_t *h = need(w, o, 12);
    bool saved = w->swapped;
    uint32_t type, len;

    if (!h)
        return false;
    memcpy(&type, h, 4);
    if (type == SHB_TYPE) {
        uint32_t bom;
        memcpy(&bom, h + 8, 4);
        if (bom != BOM && bom != __builtin_bswap32(BOM))
            return false;
        w->swapped = bom != BOM;
    } else {
        type = u32(w, h);
    }
    len = u32(w, h + 4);
    if (!known_block(type) || len < 12 || len % 4 != 0 || len > BLOCK_MAX ||
        !(h = need(w, o, len)) || u32(w, h + len - 4) != len) {
        w->swapped = saved;
        return false;
    }
    if (type == SHB_TYPE)
        w->swapped = saved;    /* ng_block() sets it for good when it reads the section */
    *blen = len;
    return true;
}

static bool ng_plausible(struct tbbt__rw *w, uint64_t o)
{
    uint32_t blen;

    return ng_framed(w, o, &blen);
}

/* Time stamp units of an interface into nanoseconds. */
static uint64_t ng_ts(const struct iface *f, uint64_t t)
{
    unsigned __int128 ns;

    if (f->bin)
        ns = ((unsigned __int128)t * 1000000000u) >> f->res;
    else if (f->res <= 9) {
        uint64_t mul = 1;
        for (int i = f->res; i < 9; i++)
            mul *= 10;
        ns = (unsigned __int128)t * mul;
    } else {
        uint64_t div = 1;
        for (int i = 9; i < f->res && i < 19; i++)
            div *= 10;
        ns = t / div;
    }
    return (uint64_t)ns + (uint64_t)f->offset_s * 1000000000u;
}

/* An interface description block b of blen bytes. */
static void ng_idb(struct tbbt__rw *w, const uint8_t *b, uint32_t blen)
{
    struct iface f = {.dlt = 0, .res = 6};

    if (blen < 20 || w->n_if >= MAX_IFS)
        return;
    f.dlt = u16(w, b + 8);
    f.snaplen = u32(w, b + 12);
    for (uint32_t o = 16; o + 4 <= blen - 4;) {
        uint16_t code = u16(w, b + o), olen = u16(w, b + o + 2);
        if (code == 0 || olen > blen - 4 - o - 4)
            break;
        if (code == 9 && olen == 1) {
            f.bin = b[o + 4] & 0x80;
            f.res = b[o + 4] & 0x7f;
            if (f.res > 63)
                f.res = 63;
        } else if (code == 14 && olen == 8) {
            uint64_t v;
            memcpy(&v, b + o + 4, 8);
            f.offset_s = (int64_t)(w->swapped ? __builtin_bswap64(v) : v);
        }
        o += 4 + ((olen + 3u) & ~3u);
    }
    if (w->link0 < 0)
        w->link0 = f.dlt;
    w->ifs[w->n_if++] = f;
}

/* A packet block that does not hold together: skipped alone. */
static int ng_bad_packet(struct tbbt__rw *w, uint64_t off, uint32_t blen, const char *why)
{
    note(w, "block at byte %" G_GUINT64_FORMAT ": %s", (guint64)off, why);
    w->dmg.skipped_records++;
    w->dmg.damaged_bytes += blen;
    return 0;
}

/* Reads the packet of an enhanced (6), obsolete (2) or simple (3) packet block. */
static int ng_packet(struct tbbt__rw *w, uint32_t type, const uint8_t *b, uint32_t blen,
                     struct tbbt__rw_pkt *pk)
{
    uint32_t ifid, caplen, hdr = type == 3 ? 12 : 28;
    const struct iface *f;

    if (blen < hdr + 4)
        return ng_bad_packet(w, w->off, blen, "packet block too short");
    ifid = type == 6 ? u32(w, b + 8) : type == 2 ? u16(w, b + 8) : 0;
    if (ifid >= w->n_if)
        return ng_bad_packet(w, w->off, blen, "packet of an undescribed interface");
    f = &w->ifs[ifid];
    if (type == 3) {
        pk->len = u32(w, b + 8);
        caplen = blen - 16 < pk->len ? blen - 16 : pk->len;
        if (f->snaplen && caplen > f->snaplen)
            caplen = f->snaplen;
        pk->ts_ns = w->last_ts;
    } else {
        caplen = u32(w, b + 20);
        pk->len = u32(w, b + 24);
        if (caplen > blen - 32 || caplen > PCAP_MAX_CAPLEN) {
            char why[80];
            snprintf(why, sizeof why, "captured length %u does not fit in its %u-byte block",
                     caplen, blen);
            return ng_bad_packet(w, w->off, blen, why);
        }
        pk->ts_ns = ng_ts(f, (uint64_t)u32(w, b + 12) << 32 | u32(w, b + 16));
    }
    pk->caplen = caplen;
    pk->data = b + hdr;
    /*
     * libpcap gave the link type of the file's first interface; other link types (also
     * a later section's first interface) are not decoded (-1)
     */
    pk->dlt = f->dlt == w->link0 ? w->dlt : -1;
    w->last_ts = pk->ts_ns;
    w->have_ts = true;
    return 1;
}

/* One framed block at w->off: 1 with a packet, 0 without. */
static int ng_block(struct tbbt__rw *w, const uint8_t *b, uint32_t blen, struct tbbt__rw_pkt *pk)
{
    uint32_t type;

    memcpy(&type, b, 4);
    if (type == SHB_TYPE) {
        uint32_t bom;
        memcpy(&bom, b + 8, 4);
        w->swapped = bom != BOM;
        w->n_if = 0;
        return 0;
    }
    type = u32(w, b);
    if (type == 1) {
        ng_idb(w, b, blen);
        return 0;
    }
    if (type == 2 || type == 3 || type == 6)
        return ng_packet(w, type, b, blen, pk);
    return 0;
}

static int ng_next(struct tbbt__rw *w, struct tbbt__rw_pkt *pk)
{
    while (!w->done) {
        uint64_t off = w->off;
        const uint8_t *b;
        uint32_t blen;
        size_t left;

        w->anchor = off;
        if (!need(w, off, 1)) {
            w->done = true;
            return 0;
        }
        if (!ng_framed(w, off, &blen)) {
            const uint8_t *h = need(w, off, 8);
            uint32_t len = h ? u32(w, h + 4) : 0;
            if (h && len >= 12 && len % 4 == 0 && len <= BLOCK_MAX && !need(w, off, len)) {
                left = have(w, off, len);
                w->dmg.ends_early = true;
                note(w, "block cut short: %zu of %u bytes", left, len);
                w->done = true;
                return 0;
            }
            if (!h) {
                w->dmg.ends_early = true;
                note(w, "block header cut short: %zu of 8 bytes", have(w, off, 8));
                w->done = true;
                return 0;
            }
            note(w, "block at byte %" G_GUINT64_FORMAT ": bad length %u", (guint64)off, len);
            bad_record(w, off, ng_plausible);
            continue;
        }
        b = need(w, off, blen);
        if (ng_block(w, b, blen, pk)) {
            w->off = off + blen;
            return 1;
        }
        w->off = off + blen;
    }
    return 0;
}

int tbbt__rw_next(struct tbbt__rw *w, struct tbbt__rw_pkt *pk)
{
    if (w->done)
        return 0;
    return w->ng ? ng_next(w, pk) : classic_next(w, pk);
}
