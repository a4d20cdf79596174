/* SPDX-License-Identifier: MIT */
/*
 * Capture files: pcap and pcapng read with libpcap, gzip-compressed ones
 * through zlib behind a stdio cookie (libpcap wants a FILE *), several
 * files merged by packet time (a binary heap over the open handles, ties
 * to the earlier file), an optional BPF filter compiled per handle, all fed
 * to one struct tbbt_capdec.  Packet bytes are decoded in place: each
 * handle's current packet stays valid until that handle is read again.
 *
 * Every file is opened and checked by libpcap (format, version, link type,
 * filter).  An uncompressed classic pcap file is then read from a read-only
 * mapping instead of through pcap_next_ex(): libpcap reads a savefile with
 * two fread() calls per packet, which copy every byte (a READ reply's data
 * too) and cost more than the rest of a packet's decoding at -s 256; the
 * mapping touches only the bytes the decoder looks at.  The record walk is
 * small and bounds-checked (walk_next()), keeps libpcap's rules (a cut-short
 * header or packet is a truncated file, a captured length past 256 KiB a bad
 * record), and applies the filter with libpcap's pcap_offline_filter().
 * pcapng, gzip and anything that cannot be mapped go through libpcap.  A
 * mapped file that another process shortens while it is read ends the run
 * with SIGBUS: captures are not written while they are converted.  The pages
 * read are let go every few MiB (MADV_DONTNEED), so that peak RSS does not
 * grow with the capture: they stay in the page cache.
 *
 * The mapping starts on a 2 MiB boundary and is advised MADV_HUGEPAGE: pages
 * the file has to read in then come in 2 MiB folios, and a folio of that size
 * already in the page cache (the kernel's read-ahead makes them) is mapped
 * by one page-table entry instead of 512.  Mapping a 1.7 GB capture page by
 * page cost this machine about 0.1 s of kernel time, as much as decoding a
 * fifth of its packets.  Pages are let go in whole 2 MiB units, so that no
 * such entry is split.
 *
 * References: libpcap savefile formats (pcap-savefile(5), pcapng
 * draft-ietf-opsawg-pcapng), RFC 1952 (gzip).
 */
#include "capture/capture.h"
#include "util/util.h"

#include <errno.h>
#include <glib.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define GZ_BUFFER (256u << 10)
/*
 * stdio buffer of each input: libpcap reads a savefile with fread(), and
 * glibc's default buffer (st_blksize, 4 KiB) costs one read() per 4 KiB.
 */
#define FILE_BUFFER (1u << 20)
#define PROGRESS_EVERY 0xffffu              /* packets between progress calls, */
#define PROGRESS_BYTES (256ull << 20)        /* or wire bytes, whichever comes first */
#define PCAP_FILE_HDR 24                     /* classic pcap file header */
#define PCAP_REC_HDR 16                      /* classic pcap record header */
#define PCAP_MAX_CAPLEN 262144u              /* libpcap's MAXIMUM_SNAPLEN */
#define WALK_ALIGN (2u << 20)                /* mapping alignment: a huge page (x86-64, arm64 4K) */
#define WALK_DROP (4u << 20)                 /* mapped bytes read before they are let go */
#define WALK_FAR 512u                        /* a packet after which the next is prefetched */

/* A classic pcap file read from a mapping (see the file comment). */
struct walk {
    const uint8_t *base;    /* the mapping, NULL when libpcap reads the file */
    size_t len, off;        /* mapping length, offset of the next record header */
    size_t dropped;         /* [0, dropped) is no longer mapped in (see walk_next()) */
    bool swapped;           /* written on a host of the other byte order */
    bool nsec;              /* nanosecond time stamps (else microseconds) */
    bool filtered;          /* prog holds the compiled filter */
    struct bpf_program prog;
    struct pcap_pkthdr hdr; /* the current packet's header */
};

struct src {
    char *path;             /* copy of the caller's path */
    pcap_t *p;
    gzFile gz;              /* compressed input (closed with the FILE), else NULL */
    FILE *fp;               /* owned by p once it is open */
    char *fbuf;             /* fp's stdio buffer (FILE_BUFFER bytes), freed after fp */
    int dlt;
    uint64_t size;          /* file size in bytes */
    struct pcap_pkthdr *hdr;/* current packet, valid until the next read */
    const u_char *data;
    uint64_t ts;
    struct walk walk;
};

struct tbbt_cap {
    struct src *srcs;
    int n;
    int *heap;              /* indices of sources with a current packet, by (ts, index) */
    int heap_n;
    uint64_t input_size;
    bool ran;
    struct tbbt_cap_stats st;
};

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *errbuf, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (!errbuf || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(errbuf, errlen, fmt, ap);
    va_end(ap);
}

/* Gives fp a large buffer; before the first read of fp. */
static void set_buffer(struct src *s, FILE *fp)
{
    if (!s->fbuf)
        s->fbuf = g_malloc(FILE_BUFFER);
    setvbuf(fp, s->fbuf, _IOFBF, FILE_BUFFER);
}

/* ---- gzip behind a FILE ---------------------------------------------------- */

static ssize_t gz_read(void *cookie, char *buf, size_t size)
{
    int n = gzread(cookie, buf, size > (1u << 30) ? (1u << 30) : (unsigned)size);

    if (n < 0) {
        errno = EIO;
        return -1;
    }
    return n;
}

static int gz_close(void *cookie)
{
    return gzclose(cookie) == Z_OK ? 0 : EOF;
}

static FILE *gz_fopen(struct src *s, char *errbuf, size_t errlen)
{
    static const cookie_io_functions_t fns = {.read = gz_read, .close = gz_close};
    FILE *fp;

    s->gz = gzopen(s->path, "rb");
    if (!s->gz) {
        set_err(errbuf, errlen, "'%s': cannot open: %s", s->path,
                errno ? strerror(errno) : "out of memory");
        return NULL;
    }
    gzbuffer(s->gz, GZ_BUFFER);
    fp = fopencookie(s->gz, "r", fns);
    if (!fp) {
        set_err(errbuf, errlen, "'%s': cannot open: %s", s->path, strerror(errno));
        gzclose(s->gz);
        s->gz = NULL;
        return NULL;
    }
    set_buffer(s, fp);
    return fp;
}

/* ---- opening --------------------------------------------------------------- */

/* Opens s->path as a stdio stream, transparently decompressing gzip. */
static FILE *open_stream(struct src *s, char *errbuf, size_t errlen)
{
    uint8_t magic[2];
    struct stat sb;
    FILE *fp = fopen(s->path, "rb");

    if (!fp) {
        set_err(errbuf, errlen, "'%s': cannot open: %s", s->path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(fp), &sb) == 0 && S_ISREG(sb.st_mode))
        s->size = (uint64_t)sb.st_size;
    set_buffer(s, fp);
    if (fread(magic, 1, 2, fp) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        fclose(fp);
        return gz_fopen(s, errbuf, errlen);
    }
    if (fseek(fp, 0, SEEK_SET) != 0) {
        set_err(errbuf, errlen, "'%s': cannot rewind: %s", s->path, strerror(errno));
        fclose(fp);
        return NULL;
    }
    return fp;
}

static int set_filter(struct src *s, const char *filter, char *errbuf, size_t errlen)
{
    struct bpf_program prog;

    if (pcap_compile(s->p, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0) {
        set_err(errbuf, errlen, "'%s': bad filter '%s': %s", s->path, filter,
                pcap_geterr(s->p));
        return -EINVAL;
    }
    if (s->walk.base) {            /* applied by walk_next() */
        s->walk.prog = prog;
        s->walk.filtered = true;
        return 0;
    }
    if (pcap_setfilter(s->p, &prog) < 0) {
        set_err(errbuf, errlen, "'%s': cannot set filter '%s': %s", s->path, filter,
                pcap_geterr(s->p));
        pcap_freecode(&prog);
        return -EINVAL;
    }
    pcap_freecode(&prog);
    return 0;
}

/* ---- classic pcap from a mapping ------------------------------------------ */

static uint32_t walk_u32(const struct walk *w, const uint8_t *p)
{
    uint32_t v;

    memcpy(&v, p, sizeof v);
    return w->swapped ? __builtin_bswap32(v) : v;
}

/*
 * Maps fd's first len bytes read-only at an address that is a multiple of
 * WALK_ALIGN (see the file comment); MAP_FAILED if it cannot.
 */
static void *map_aligned(int fd, size_t len)
{
    size_t span, head;
    uint8_t *r, *m;

    if (len > SIZE_MAX - WALK_ALIGN)
        return MAP_FAILED;
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
    /* the reservation's ends around the file's mapping */
    if (head)
        munmap(r, head);
    if (span - head - len)
        munmap(m + len, span - head - len);
#ifdef MADV_HUGEPAGE
    (void)madvise(m, len, MADV_HUGEPAGE);    /* a hint: without THP nothing changes */
#endif
    return m;
}

/*
 * Maps s's file if it is an uncompressed classic pcap file (libpcap has
 * already accepted its header); otherwise leaves libpcap to read it.
 */
static void walk_map(struct src *s)
{
    struct walk *w = &s->walk;
    uint32_t magic;
    void *m;

    if (s->gz || s->size < PCAP_FILE_HDR || s->size > SIZE_MAX)
        return;
    m = map_aligned(fileno(pcap_file(s->p)), (size_t)s->size);
    if (m == MAP_FAILED)
        return;
    memcpy(&magic, m, sizeof magic);
    switch (magic) {
    case 0xa1b2c3d4: w->nsec = false; w->swapped = false; break;
    case 0xd4c3b2a1: w->nsec = false; w->swapped = true; break;
    case 0xa1b23c4d: w->nsec = true; w->swapped = false; break;
    case 0x4d3cb2a1: w->nsec = true; w->swapped = true; break;
    default:                       /* pcapng, or a variant libpcap knows better */
        munmap(m, (size_t)s->size);
        return;
    }
    w->base = m;
    w->len = (size_t)s->size;
    w->off = PCAP_FILE_HDR;
}

/*
 * The next packet of a mapped file into s->hdr/s->data: 1, or 0 at the end
 * of the file, or an error (TBBT_E_TRUNC, TBBT_E_BADREC) with why set.
 */
static int walk_next(struct src *s, char *why, size_t whylen)
{
    struct walk *w = &s->walk;

    for (;;) {
        const uint8_t *h = w->base + w->off;
        size_t left = w->len - w->off;
        uint32_t caplen;

        if (left == 0)
            return 0;
        if (left < PCAP_REC_HDR) {
            snprintf(why, whylen, "record header cut short: %zu of %d bytes", left,
                     PCAP_REC_HDR);
            return TBBT_E_TRUNC;
        }
        caplen = walk_u32(w, h + 8);
        if (caplen > PCAP_MAX_CAPLEN) {
            snprintf(why, whylen, "captured length %u is over the maximum of %u", caplen,
                     PCAP_MAX_CAPLEN);
            return TBBT_E_BADREC;
        }
        if (left - PCAP_REC_HDR < caplen) {
            snprintf(why, whylen, "packet cut short: %zu of %u captured bytes",
                     left - PCAP_REC_HDR, caplen);
            return TBBT_E_TRUNC;
        }
        w->hdr.ts.tv_sec = (time_t)walk_u32(w, h);
        w->hdr.ts.tv_usec = (suseconds_t)(w->nsec ? walk_u32(w, h + 4)
                                                  : walk_u32(w, h + 4) * 1000ull);
        w->hdr.caplen = caplen;
        w->hdr.len = walk_u32(w, h + 12);
        w->off += PCAP_REC_HDR + caplen;
        if (caplen >= WALK_FAR) {
            /*
             * The next record's header and its packet's first lines, past a
             * large packet: no prefetcher guesses a jump, and this packet's
             * decoding hides the wait (small packets follow one another,
             * and the hardware streams them).
             */
            __builtin_prefetch(w->base + w->off);
            __builtin_prefetch(w->base + w->off + 64);
            __builtin_prefetch(w->base + w->off + 128);
            __builtin_prefetch(w->base + w->off + 192);
        }
        if (w->off - w->dropped >= WALK_DROP) {
            /* everything before this packet's 2 MiB unit has been decoded */
            size_t to = (size_t)(h - w->base) & ~(size_t)(WALK_ALIGN - 1);
            if (to > w->dropped)
                (void)madvise((void *)(w->base + w->dropped), to - w->dropped, MADV_DONTNEED);
            w->dropped = to;
        }
        s->hdr = &w->hdr;
        s->data = h + PCAP_REC_HDR;
        if (!w->filtered || pcap_offline_filter(&w->prog, s->hdr, s->data) != 0)
            return 1;
    }
}

static void walk_close(struct walk *w)
{
    if (w->base)
        munmap((void *)w->base, w->len);
    if (w->filtered)
        pcap_freecode(&w->prog);
    memset(w, 0, sizeof *w);
}

static int open_src(struct src *s, const char *filter, char *errbuf, size_t errlen)
{
    char pe[PCAP_ERRBUF_SIZE] = "";
    FILE *fp = open_stream(s, errbuf, errlen);

    if (!fp)
        return -EIO;
    /* Only the thread running tbbt_cap_run() reads it: no stdio locking per fread(). */
    __fsetlocking(fp, FSETLOCKING_BYCALLER);
    s->p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, pe);
    if (!s->p) {
        set_err(errbuf, errlen, "'%s' is not a pcap or pcapng capture (libpcap: %s)", s->path,
                pe);
        fclose(fp);
        s->gz = NULL;
        return TBBT_E_MAGIC;
    }
    s->dlt = pcap_datalink(s->p);
    if (tbbt_capdec_check_linktype(s->dlt) != 0) {
        const char *name = pcap_datalink_val_to_name(s->dlt);
        set_err(errbuf, errlen, "'%s': unsupported link type %s (%d)", s->path,
                name ? name : "unknown", s->dlt);
        return TBBT_E_LINKTYPE;
    }
    walk_map(s);
    return filter ? set_filter(s, filter, errbuf, errlen) : 0;
}

struct tbbt_cap *tbbt_cap_open(const char *const *paths, int n, const char *filter,
                               char *errbuf, size_t errlen)
{
    struct tbbt_cap *c;

    if (n <= 0) {
        set_err(errbuf, errlen, "no capture file given");
        return NULL;
    }
    c = g_new0(struct tbbt_cap, 1);
    c->srcs = g_new0(struct src, (size_t)n);
    c->heap = g_new(int, (size_t)n);
    c->n = n;
    for (int i = 0; i < n; i++) {
        c->srcs[i].path = g_strdup(paths[i]);
        if (open_src(&c->srcs[i], filter, errbuf, errlen) != 0) {
            tbbt_cap_close(c);
            return NULL;
        }
        c->input_size += c->srcs[i].size;
    }
    return c;
}

void tbbt_cap_close(struct tbbt_cap *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n; i++) {
        walk_close(&c->srcs[i].walk);
        if (c->srcs[i].p)
            pcap_close(c->srcs[i].p);   /* closes the FILE and with it the gzFile */
        g_free(c->srcs[i].fbuf);
        g_free(c->srcs[i].path);
    }
    g_free(c->srcs);
    g_free(c->heap);
    g_free(c);
}

const struct tbbt_cap_stats *tbbt_cap_stats(const struct tbbt_cap *c)
{
    return &c->st;
}

uint64_t tbbt_cap_input_size(const struct tbbt_cap *c)
{
    return c->input_size;
}

/* ---- reading --------------------------------------------------------------- */

/* The first error of a run is kept; later ones only end their file. */
struct run_err {
    int rc;
    char *errbuf;
    size_t errlen;
};

static void run_fail(struct run_err *e, int rc, const char *fmt, const char *path,
                     const char *why)
{
    if (e->rc != 0)
        return;
    e->rc = rc;
    set_err(e->errbuf, e->errlen, fmt, path, why);
}

/* The source's next packet from its mapping or libpcap: 1, or 0 at its end or on an error. */
static int next_packet(struct src *s, struct run_err *e)
{
    char why[96];
    int r;

    if (s->walk.base) {
        r = walk_next(s, why, sizeof why);
        if (r == TBBT_E_TRUNC)
            run_fail(e, r, "'%s' ends in the middle of a packet (%s)", s->path, why);
        else if (r < 0)
            run_fail(e, r, "'%s': cannot read packet (%s)", s->path, why);
        return r == 1;
    }
    r = pcap_next_ex(s->p, &s->hdr, &s->data);
    if (r == PCAP_ERROR) {
        const char *pwhy = pcap_geterr(s->p);
        if (strstr(pwhy, "truncated"))
            run_fail(e, TBBT_E_TRUNC, "'%s' ends in the middle of a packet (libpcap: %s)",
                     s->path, pwhy);
        else
            run_fail(e, TBBT_E_BADREC, "'%s': cannot read packet (libpcap: %s)", s->path, pwhy);
    } else if (r != 1 && s->gz) {
        int zerr;
        gzerror(s->gz, &zerr);
        if (zerr == Z_BUF_ERROR)
            run_fail(e, TBBT_E_TRUNC, "'%s': %s", s->path, "compressed data ends early");
    }
    return r == 1;
}

/* Reads the source's next packet; false at its end (or on an error, recorded in e). */
static bool advance(struct src *s, struct run_err *e)
{
    if (!next_packet(s, e))
        return false;
    /* tv_usec holds nanoseconds: libpcap was asked for them, walk_next() gives them */
    s->ts = (uint64_t)s->hdr->ts.tv_sec * 1000000000u + (uint64_t)s->hdr->ts.tv_usec;
    return true;
}

static bool before(const struct tbbt_cap *c, int a, int b)
{
    uint64_t ta = c->srcs[a].ts, tb = c->srcs[b].ts;
    return ta < tb || (ta == tb && a < b);
}

static void sift_down(struct tbbt_cap *c, int i)
{
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < c->heap_n && before(c, c->heap[l], c->heap[m]))
            m = l;
        if (l + 1 < c->heap_n && before(c, c->heap[l + 1], c->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        int t = c->heap[i];
        c->heap[i] = c->heap[m];
        c->heap[m] = t;
        i = m;
    }
}

/* Position in the input so far, for progress. */
static uint64_t bytes_read(const struct tbbt_cap *c)
{
    uint64_t sum = 0;

    for (int i = 0; i < c->n; i++) {
        const struct src *s = &c->srcs[i];
        long long pos = s->walk.base ? (long long)s->walk.off
                        : s->gz ? (long long)gzoffset(s->gz)
                                : (long long)ftello(pcap_file(s->p));
        if (pos > 0)
            sum += (uint64_t)pos;
    }
    return sum;
}

int tbbt_cap_run(struct tbbt_cap *c, tbbt_cap_msg_cb cb, void *arg,
                 void (*progress_cb)(uint64_t bytes_read, void *arg), char *errbuf,
                 size_t errlen)
{
    struct run_err e = {0, errbuf, errlen};
    struct tbbt_capdec *d;
    uint64_t npk = 0, last_bytes = 0;

    if (c->ran) {
        set_err(errbuf, errlen, "capture files were already read");
        return -EINVAL;
    }
    c->ran = true;
    d = tbbt_capdec_new(cb, arg);
    c->heap_n = 0;
    for (int i = 0; i < c->n; i++)
        if (advance(&c->srcs[i], &e))
            c->heap[c->heap_n++] = i;
    for (int i = c->heap_n / 2 - 1; i >= 0; i--)
        sift_down(c, i);
    while (c->heap_n > 0) {
        struct src *s = &c->srcs[c->heap[0]];
        tbbt_capdec_packet(d, s->dlt, s->ts, s->data, s->hdr->caplen, s->hdr->len);
        if (progress_cb && ((++npk & PROGRESS_EVERY) == 0 ||
                            tbbt_capdec_stats(d)->bytes - last_bytes >= PROGRESS_BYTES)) {
            last_bytes = tbbt_capdec_stats(d)->bytes;
            progress_cb(bytes_read(c), arg);
        }
        if (!advance(s, &e))
            c->heap[0] = c->heap[--c->heap_n];
        sift_down(c, 0);
    }
    tbbt_capdec_flush(d);
    c->st = *tbbt_capdec_stats(d);
    tbbt_capdec_free(d);
    return e.rc;
}
