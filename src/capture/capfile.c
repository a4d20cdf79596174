/* SPDX-License-Identifier: MIT */
/*
 * Capture files: pcap and pcapng read with libpcap, gzip-compressed ones
 * through zlib behind a stdio cookie (libpcap wants a FILE *), several
 * files merged by packet time (a binary heap over the open handles, ties
 * to the earlier file), an optional BPF filter compiled per handle, all fed
 * to one struct tbbt_capdec.  Packet bytes come from pcap_next_ex() and are
 * decoded in place: each handle's current packet stays valid until that
 * handle is read again.
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
#include <sys/stat.h>
#include <zlib.h>

#define GZ_BUFFER (256u << 10)
/*
 * stdio buffer of each input: libpcap reads a savefile with fread(), and
 * glibc's default buffer (st_blksize, 4 KiB) costs one read() per 4 KiB.
 */
#define FILE_BUFFER (1u << 20)
#define PROGRESS_EVERY 0xffffu              /* packets between progress calls, */
#define PROGRESS_BYTES (256ull << 20)        /* or wire bytes, whichever comes first */

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
    if (pcap_setfilter(s->p, &prog) < 0) {
        set_err(errbuf, errlen, "'%s': cannot set filter '%s': %s", s->path, filter,
                pcap_geterr(s->p));
        pcap_freecode(&prog);
        return -EINVAL;
    }
    pcap_freecode(&prog);
    return 0;
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

/* Reads the source's next packet; false at its end (or on an error, recorded in e). */
static bool advance(struct src *s, struct run_err *e)
{
    int r = pcap_next_ex(s->p, &s->hdr, &s->data);

    if (r == 1) {
        s->ts = (uint64_t)s->hdr->ts.tv_sec * 1000000000u + (uint64_t)s->hdr->ts.tv_usec;
        return true;
    }
    if (r == PCAP_ERROR) {
        const char *why = pcap_geterr(s->p);
        if (strstr(why, "truncated"))
            run_fail(e, TBBT_E_TRUNC, "'%s' ends in the middle of a packet (libpcap: %s)",
                     s->path, why);
        else
            run_fail(e, TBBT_E_BADREC, "'%s': cannot read packet (libpcap: %s)", s->path, why);
    } else if (s->gz) {
        int zerr;
        gzerror(s->gz, &zerr);
        if (zerr == Z_BUF_ERROR)
            run_fail(e, TBBT_E_TRUNC, "'%s': %s", s->path, "compressed data ends early");
    }
    return false;
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
        long long pos = s->gz ? (long long)gzoffset(s->gz) : (long long)ftello(pcap_file(s->p));
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
