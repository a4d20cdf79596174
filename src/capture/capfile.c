/* SPDX-License-Identifier: MIT */
/*
 * Capture files: pcap and pcapng, plain or gzip-compressed, several files
 * merged by packet time (a binary heap over the open handles, ties to the
 * earlier file), an optional BPF filter compiled per handle, all fed to one
 * struct tbbt_capdec.  Packet bytes are decoded in place: each handle's
 * current packet stays valid until that handle is read again.
 *
 * Every file is checked by libpcap (format, version, link type, filter) from
 * a copy of its first bytes (inflated by the walker: damage further into a
 * gzip stream used to fail libpcap's first fread() of the whole header
 * buffer), then read by the record walker of recwalk.c instead of through
 * pcap_next_ex(): libpcap stops a file at its first bad record header and
 * cannot go on after it, where the walker skips the bad record and goes on
 * with the next plausible one (docs/tbbt-convert.md "Damaged input").  It
 * also reads an uncompressed classic pcap file from a read-only mapping:
 * libpcap reads a savefile with two fread() calls per packet, which copy
 * every byte (a READ reply's data too) and cost more than the rest of a
 * packet's decoding at -s 256; the mapping touches only the bytes the
 * decoder looks at.  The filter is applied with pcap_offline_filter().  A
 * mapped file that another process shortens while it is read ends the run
 * with SIGBUS: captures are not written while they are converted.
 *
 * References: libpcap savefile formats (pcap-savefile(5), pcapng
 * draft-ietf-opsawg-pcapng), RFC 1952 (gzip).
 */
#include "capture/capture.h"
#include "capture/recwalk-int.h"
#include "util/util.h"

#include <errno.h>
#include <glib.h>
#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * libpcap checks a file's header(s) from a copy of its first bytes (the
 * walker's, inflated if need be): a pcapng section header and its interface
 * descriptions fit, and damage further on cannot fail the check.
 */
#define HEAD_MAX (64u << 10)
#define PROGRESS_EVERY 0xffffu              /* packets between progress calls, */
#define PROGRESS_BYTES (256ull << 20)        /* or wire bytes, whichever comes first */
struct src {
    char *path;             /* copy of the caller's path */
    pcap_t *p;
    uint8_t *head;          /* the file's first bytes that libpcap reads, freed after p */
    int dlt;
    uint64_t size;          /* file size in bytes */
    struct pcap_pkthdr *hdr;/* current packet, valid until the next read */
    const u_char *data;
    uint64_t ts;
    struct pcap_pkthdr pkhdr;   /* the current packet's header (from the walker) */
    bool filtered;          /* prog holds the compiled filter */
    struct bpf_program prog;
    struct tbbt__rw *rw;    /* the record walker */
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

/* ---- opening --------------------------------------------------------------- */

/* A stdio stream over a copy of the file's first bytes, for libpcap's check. */
static FILE *head_stream(struct src *s, char *errbuf, size_t errlen)
{
    const uint8_t *h;
    size_t n = tbbt__rw_head(s->rw, &h, HEAD_MAX);
    FILE *fp;

    s->head = g_malloc(n ? n : 1);
    memcpy(s->head, h, n);
    fp = fmemopen(s->head, n ? n : 1, "r");
    if (!fp)
        set_err(errbuf, errlen, "'%s': cannot open: %s", s->path, strerror(errno));
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
    s->prog = prog;                /* applied by next_packet() */
    s->filtered = true;
    return 0;
}

static int open_src(struct src *s, const char *filter, char *errbuf, size_t errlen)
{
    char pe[PCAP_ERRBUF_SIZE] = "";
    FILE *fp;

    s->rw = tbbt__rw_open(s->path, errbuf, errlen);
    if (!s->rw)
        return -EIO;
    s->size = tbbt__rw_size(s->rw);
    if (!(fp = head_stream(s, errbuf, errlen)))
        return -EIO;
    s->p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, pe);
    if (!s->p) {
        set_err(errbuf, errlen, "'%s' is not a pcap or pcapng capture (libpcap: %s)", s->path,
                pe);
        fclose(fp);
        return TBBT_E_MAGIC;
    }
    s->dlt = pcap_datalink(s->p);
    if (tbbt_capdec_check_linktype(s->dlt) != 0) {
        const char *name = pcap_datalink_val_to_name(s->dlt);
        set_err(errbuf, errlen, "'%s': unsupported link type %s (%d)", s->path,
                name ? name : "unknown", s->dlt);
        return TBBT_E_LINKTYPE;
    }
    if (!tbbt__rw_known(s->rw)) {      /* a variant libpcap reads and the walker does not */
        set_err(errbuf, errlen, "'%s': unsupported pcap variant", s->path);
        return TBBT_E_VERSION;
    }
    tbbt__rw_set_dlt(s->rw, s->dlt);
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
        tbbt__rw_free(c->srcs[i].rw);
        if (c->srcs[i].filtered)
            pcap_freecode(&c->srcs[i].prog);
        if (c->srcs[i].p)
            pcap_close(c->srcs[i].p);   /* closes the FILE over head */
        g_free(c->srcs[i].head);
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

/* The first problem of a run is kept; each file's own is in its walker's damage. */
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

/* At the end of a file: its damage, if any, into the run's result. */
static void file_end(struct src *s, struct run_err *e)
{
    const struct tbbt_cap_damage *d = tbbt__rw_damage(s->rw);

    if (d->skipped_records || d->trailing_bytes || (d->ends_early && strstr(d->why, "corrupt")))
        run_fail(e, TBBT_E_DAMAGED, "'%s' is damaged (%s)", s->path, d->why);
    else if (d->ends_early && strstr(d->why, "compressed"))
        run_fail(e, TBBT_E_TRUNC, "'%s': %s", s->path, d->why);
    else if (d->ends_early)
        run_fail(e, TBBT_E_TRUNC, "'%s' ends in the middle of a packet (%s)", s->path, d->why);
}

/* The source's next packet that passes the filter: 1, or 0 at its end. */
static int next_packet(struct src *s, struct run_err *e)
{
    struct tbbt__rw_pkt pk;

    while (tbbt__rw_next(s->rw, &pk) == 1) {
        if (pk.dlt < 0)
            continue;              /* a pcapng interface of another link type */
        s->pkhdr.ts.tv_sec = (time_t)(pk.ts_ns / 1000000000u);
        s->pkhdr.ts.tv_usec = (suseconds_t)(pk.ts_ns % 1000000000u);
        s->pkhdr.caplen = pk.caplen;
        s->pkhdr.len = pk.len;
        s->hdr = &s->pkhdr;
        s->data = pk.data;
        s->ts = pk.ts_ns;
        if (!s->filtered || pcap_offline_filter(&s->prog, s->hdr, s->data) != 0)
            return 1;
    }
    file_end(s, e);
    return 0;
}

/* Reads the source's next packet; false at its end (damage recorded in e). */
static bool advance(struct src *s, struct run_err *e)
{
    return next_packet(s, e) == 1;
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

    for (int i = 0; i < c->n; i++)
        if (c->srcs[i].rw)
            sum += tbbt__rw_pos(c->srcs[i].rw);
    return sum;
}

/* Sums the files' damage into the run's statistics. */
static void sum_damage(struct tbbt_cap *c)
{
    for (int i = 0; i < c->n; i++) {
        const struct tbbt_cap_damage *d = tbbt__rw_damage(c->srcs[i].rw);
        c->st.skipped_records += d->skipped_records;
        c->st.resyncs += d->resyncs;
        c->st.damaged_bytes += d->damaged_bytes;
        c->st.damaged_files += tbbt_cap_damaged(d);
    }
}

int tbbt_cap_nfiles(const struct tbbt_cap *c)
{
    return c->n;
}

const char *tbbt_cap_path(const struct tbbt_cap *c, int i)
{
    return c->srcs[i].path;
}

const struct tbbt_cap_damage *tbbt_cap_damage(const struct tbbt_cap *c, int i)
{
    return c->srcs[i].rw ? tbbt__rw_damage(c->srcs[i].rw) : NULL;
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
    sum_damage(c);
    tbbt_capdec_free(d);
    return e.rc;
}
