/* SPDX-License-Identifier: MIT */
/*
 * Binary trace reader (layout: docs/trace-format.md, TBBT paper 3.1).
 *
 * Streams the file through one read buffer that grows only when a record
 * does not fit and the bytes to fill it have actually arrived, so a hostile
 * length never makes it allocate more than twice the file.  Every length is
 * checked against what remains of its record and against its bound; handle,
 * endpoint and credential references must be defined before use; the trailer's counts
 * and CRC32 must match; nothing may follow the trailer.  Records are decoded
 * into the caller's struct, strings into its arena.  Errors are sticky.
 */
#include "trace/trace-int.h"
#include "util/crc32.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define RBUF_SIZE (1u << 20)

struct tbbt_trace_reader {
    int fd;                 /* -1 when reading memory */
    bool close_fd;
    const uint8_t *buf;     /* buffered bytes: own (fd) or the caller's memory */
    uint8_t *own;
    size_t cap, start, end; /* buf[start..end) not consumed yet */
    uint64_t base;          /* file offset of buf[0] */
    size_t crc_pos;         /* buf[0..crc_pos) is in crc */
    uint32_t crc;
    bool eof;
    bool done;              /* trailer read and checked */
    int err;                /* sticky error */
    uint64_t err_off;
    const uint8_t *bad;     /* where decoding failed, inside the current record */
    uint64_t nops, skipped;
    uint64_t skip_fields;   /* tbbt_trace_reader_skip_fields() */
    uint16_t major, minor;
    struct tbbt_fhtab *fh;
    struct tbbt_eptab *ep;
    struct tbbt_credtab *cred;
};

bool tbbt_trace_probe(const void *head, size_t len)
{
    return len >= TBBT__TRACE_MAGIC_LEN &&
           memcmp(head, TBBT__TRACE_MAGIC, TBBT__TRACE_MAGIC_LEN) == 0;
}

/* ---- LEB128 ------------------------------------------------------------------ */

/*
 * Values of 2..9 bytes with at least 8 bytes in the buffer: one load, the end
 * found by the first byte without its high bit, the 7-bit groups packed.
 * Returns false to fall back to the byte loop (10-byte values, short buffers,
 * encodings it must refuse).
 */
static inline bool get_uv_word(struct tbbt_buf *b, uint64_t *out)
{
    uint64_t w, stop, v;
    unsigned n;

    if (b->len < 8)
        return false;
    memcpy(&w, b->p, 8);
    w = GUINT64_FROM_LE(w);
    stop = ~w & UINT64_C(0x8080808080808080);
    if (stop) {
        n = ((unsigned)__builtin_ctzll(stop) >> 3) + 1;     /* bytes, 1..8 */
        if (n > 1 && ((w >> (8 * (n - 1))) & 0xff) == 0)
            return false;   /* not the shortest encoding: the byte loop says so */
        if (n < 8)
            w &= (UINT64_C(1) << (8 * n)) - 1;
    } else if (b->len >= 9 && b->p[8] < 0x80 && b->p[8] != 0) {
        n = 9;              /* 57..63 bits: nanosecond times */
    } else {
        return false;
    }
    v = (w & 0x7f) | ((w >> 1) & (UINT64_C(0x7f) << 7)) | ((w >> 2) & (UINT64_C(0x7f) << 14)) |
        ((w >> 3) & (UINT64_C(0x7f) << 21)) | ((w >> 4) & (UINT64_C(0x7f) << 28)) |
        ((w >> 5) & (UINT64_C(0x7f) << 35)) | ((w >> 6) & (UINT64_C(0x7f) << 42)) |
        ((w >> 7) & (UINT64_C(0x7f) << 49));
    if (n == 9)
        v |= (uint64_t)b->p[8] << 56;
    b->p += n;
    b->len -= n;
    *out = v;
    return true;
}

bool tbbt__get_uv_slow(struct tbbt_buf *b, uint64_t *out)
{
    uint64_t v = 0;
    size_t n = b->len < TBBT__UV_MAX ? b->len : TBBT__UV_MAX;

    if (get_uv_word(b, out))
        return true;

    for (size_t i = 0; i < n; i++) {
        uint8_t c = b->p[i];
        if (i == TBBT__UV_MAX - 1 && c > 1)
            return false;   /* more than 64 bits */
        v |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            if (c == 0 && i > 0)
                return false;   /* not the shortest encoding */
            tbbt_buf_skip(b, i + 1);
            *out = v;
            return true;
        }
    }
    if (n < TBBT__UV_MAX)
        tbbt_buf_skip(b, b->len + 1);   /* ran out of bytes: mark truncation */
    return false;
}

/* ---- buffering -------------------------------------------------------------- */

static void crc_upto(struct tbbt_trace_reader *r, size_t pos)
{
    if (pos > r->crc_pos) {
        r->crc = tbbt_crc32(r->crc, r->buf + r->crc_pos, pos - r->crc_pos);
        r->crc_pos = pos;
    }
}

/* Moves the unconsumed bytes to the front, doubling the buffer if it is full. */
static void make_room(struct tbbt_trace_reader *r)
{
    if (r->start > 0) {
        crc_upto(r, r->start);
        memmove(r->own, r->own + r->start, r->end - r->start);
        r->base += r->start;
        r->end -= r->start;
        r->start = 0;
        r->crc_pos = 0;
    }
    if (r->end == r->cap) {
        r->cap *= 2;
        r->own = g_realloc(r->own, r->cap);
        r->buf = r->own;
    }
}

/* Makes need bytes available at buf + start: 0, TBBT_E_TRUNC at end of file, -errno. */
static int fill(struct tbbt_trace_reader *r, size_t need)
{
    while (r->end - r->start < need) {
        int rc;

        if (r->eof)
            return TBBT_E_TRUNC;
        make_room(r);
        if ((rc = tbbt_read_more(r->fd, r->own, &r->end, r->cap, &r->eof)) < 0)
            return rc;
    }
    return 0;
}

static int fail(struct tbbt_trace_reader *r, int err, uint64_t off)
{
    r->err = err;
    r->err_off = off;
    return err;
}

/* ---- open ------------------------------------------------------------------- */

static int check_header(struct tbbt_trace_reader *r)
{
    size_t have;
    uint32_t hlen;
    int rc = fill(r, TBBT__TRACE_HDR_LEN);

    if (rc == TBBT_E_TRUNC) {
        have = r->end - r->start;
        if (have > TBBT__TRACE_MAGIC_LEN)
            have = TBBT__TRACE_MAGIC_LEN;
        if (have == 0 || memcmp(r->buf, TBBT__TRACE_MAGIC, have) == 0)
            return TBBT_E_TRUNC;    /* a prefix of a trace */
        return TBBT_E_MAGIC;
    }
    if (rc < 0)
        return rc;
    if (memcmp(r->buf, TBBT__TRACE_MAGIC, TBBT__TRACE_MAGIC_LEN) != 0)
        return TBBT_E_MAGIC;
    r->major = tbbt_le16(r->buf + 8);
    r->minor = tbbt_le16(r->buf + 10);
    hlen = tbbt_le32(r->buf + 12);
    if (r->major != TBBT_TRACE_MAJOR)
        return TBBT_E_VERSION;
    if (hlen < TBBT__TRACE_HDR_LEN || hlen > TBBT__TRACE_HDR_MAX)
        return TBBT_E_BADREC;
    if (hlen > TBBT__TRACE_HDR_LEN)
        r->skipped++;
    if ((rc = fill(r, hlen)) < 0)
        return rc;
    r->start = hlen;
    return 0;
}

static struct tbbt_trace_reader *reader_new(void)
{
    struct tbbt_trace_reader *r = g_new0(struct tbbt_trace_reader, 1);

    r->fd = -1;
    r->crc = 0;             /* crc32(0, NULL, 0) */
    r->fh = tbbt_fhtab_new();
    r->ep = tbbt_eptab_new();
    r->cred = tbbt_credtab_new();
    return r;
}

static struct tbbt_trace_reader *finish_open(struct tbbt_trace_reader *r, int *err)
{
    int rc = check_header(r);

    if (rc < 0) {
        tbbt_trace_reader_close(r);
        *err = rc;
        return NULL;
    }
    return r;
}

struct tbbt_trace_reader *tbbt_trace_reader_open(const char *path, int *err)
{
    struct tbbt_trace_reader *r;
    int fd = STDIN_FILENO;

    if (strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            *err = -errno;
            return NULL;
        }
    }
    r = reader_new();
    r->fd = fd;
    r->close_fd = fd != STDIN_FILENO;
    r->cap = RBUF_SIZE;
    r->own = g_malloc(r->cap);
    r->buf = r->own;
    return finish_open(r, err);
}

struct tbbt_trace_reader *tbbt_trace_reader_open_mem(const void *data, size_t len, int *err)
{
    struct tbbt_trace_reader *r = reader_new();

    r->buf = data;
    r->cap = r->end = len;
    r->eof = true;
    return finish_open(r, err);
}

void tbbt_trace_reader_close(struct tbbt_trace_reader *r)
{
    if (!r)
        return;
    if (r->close_fd)
        close(r->fd);
    g_free(r->own);
    tbbt_fhtab_free(r->fh);
    tbbt_eptab_free(r->ep);
    tbbt_credtab_free(r->cred);
    g_free(r);
}

/* ---- definitions ------------------------------------------------------------ */

static int read_handle(struct tbbt_trace_reader *r, struct tbbt_buf *b, uint32_t *ref)
{
    uint32_t id = tbbt_buf_get_le32(b);
    uint8_t len = tbbt_buf_get_u8(b);
    const uint8_t *fh = tbbt_buf_get(b, len);

    if (!fh || b->len != 0)
        return TBBT_E_BADREC;
    *ref = id;
    return tbbt_fhtab_add(r->fh, id, fh, len);
}

static bool get_addr(struct tbbt_buf *b, char *dst)
{
    uint8_t len = tbbt_buf_get_u8(b);
    const uint8_t *p = tbbt_buf_get(b, len);

    if (!p || !tbbt__addr_valid((const char *)p, len))
        return false;   /* also refuses a NUL inside, which the C string would hide */
    memcpy(dst, p, len);
    dst[len] = '\0';
    return true;
}

static int read_endpoint(struct tbbt_trace_reader *r, struct tbbt_buf *b, uint32_t *ref)
{
    struct tbbt_endpoint ep;
    uint32_t id = tbbt_buf_get_le32(b);
    uint8_t proto = tbbt_buf_get_u8(b);

    memset(&ep, 0, sizeof(ep));
    ep.client_port = tbbt_buf_get_le16(b);
    ep.server_port = tbbt_buf_get_le16(b);
    if (!get_addr(b, ep.client) || !get_addr(b, ep.server) || b->len != 0)
        return TBBT_E_BADREC;
    if (proto != TBBT__IPPROTO_TCP && proto != TBBT__IPPROTO_UDP)
        return TBBT_E_BADREC;
    ep.tcp = proto == TBBT__IPPROTO_TCP;
    *ref = id;
    return tbbt_eptab_add(r->ep, id, &ep);
}

/* CRED (format 1.1): ref, machine name, uid, gid, gids; the body length must be exact. */
static int read_cred(struct tbbt_trace_reader *r, struct tbbt_buf *b, uint32_t *ref)
{
    struct tbbt_cred c;
    uint32_t id = tbbt_buf_get_le32(b);
    uint8_t len = tbbt_buf_get_u8(b);
    const uint8_t *name = tbbt_buf_get(b, len);

    if (!name)
        return TBBT_E_BADREC;
    memset(&c, 0, sizeof(c));
    memcpy(c.machine, name, len);
    c.machine_len = len;
    c.uid = tbbt_buf_get_le32(b);
    c.gid = tbbt_buf_get_le32(b);
    c.ngids = tbbt_buf_get_u8(b);
    if (b->trunc || c.ngids > TBBT_CRED_GIDS_MAX || b->len != 4 * (size_t)c.ngids)
        return TBBT_E_BADREC;
    for (uint32_t i = 0; i < c.ngids; i++)
        c.gids[i] = tbbt_buf_get_le32(b);
    *ref = id;
    return tbbt_credtab_add(r->cred, id, &c);
}

/* ---- op records --------------------------------------------------------------- */

static void dec_fixed(struct tbbt_buf *b, struct tbbt_trace_rec *rec)
{
    rec->call_ns = tbbt__get_le64(b);
    rec->reply_ns = tbbt__get_le64(b);
    rec->prog = tbbt_buf_get_u8(b);
    rec->proc = tbbt_buf_get_u8(b);
    rec->flags = tbbt_buf_get_le16(b);
    rec->xid = tbbt_buf_get_le32(b);
    rec->endpoint = tbbt_buf_get_le32(b);
    rec->uid = tbbt_buf_get_le32(b);
    rec->gid = tbbt_buf_get_le32(b);
    rec->rpc_stat = tbbt_buf_get_u8(b);
    rec->status = (int32_t)tbbt_buf_get_le32(b);
}


static bool dec_str(struct tbbt_buf *b, struct tbbt_trace_rec *rec, struct tbbt_str *s,
                    uint32_t max)
{
    size_t len = b->len;

    if (len > max)
        return false;
    tbbt_trace_rec_set_str(rec, s, b->p, (uint32_t)len);
    tbbt_buf_skip(b, len);
    return true;
}

static bool dec_ref(struct tbbt_trace_reader *r, struct tbbt_buf *b, uint32_t *ref)
{
    return tbbt__get_uv32(b, ref) && *ref < tbbt_fhtab_count(r->fh);
}

static bool dec_entry(struct tbbt_trace_reader *r, struct tbbt_buf *b,
                      struct tbbt_trace_rec *rec, struct tbbt_entry *e)
{
    uint32_t len;
    const uint8_t *name;

    memset(e, 0, sizeof(*e));
    if (!tbbt__get_uv(b, &e->fileid) || !tbbt__get_uv(b, &e->cookie) ||
        !tbbt__get_uv32(b, &len) || len > TBBT_NAME_MAX || !(name = tbbt_buf_get(b, len)))
        return false;
    tbbt_trace_rec_set_str(rec, &e->name, name, len);
    if (!tbbt__get_uv32(b, &e->flags) || (e->flags & ~(uint32_t)TBBT_ENT_ALL))
        return false;
    if ((e->flags & TBBT_ENT_FH) && !dec_ref(r, b, &e->fh))
        return false;
    if ((e->flags & TBBT_ENT_ATTR) && !tbbt__dec_fattr(b, &e->attr))
        return false;
    return !(e->flags & TBBT_ENT_ID) || tbbt__get_uv(b, &e->id);
}

static bool dec_entries(struct tbbt_trace_reader *r, struct tbbt_buf *b,
                        struct tbbt_trace_rec *rec)
{
    uint32_t n;

    /* An entry takes at least 4 bytes: bound n by the bytes left before allocating. */
    if (!tbbt__get_uv32(b, &n) || n > b->len / 4)
        return false;
    rec->n_entries = 0;
    if (n)
        tbbt__trace_rec_reserve(rec, n);
    for (uint32_t i = 0; i < n; i++) {
        if (!dec_entry(r, b, rec, &rec->entries[i]))
            return false;
        rec->n_entries = i + 1;
    }
    return true;
}

static bool dec_info(struct tbbt_buf *b, struct tbbt_trace_rec *rec)
{
    uint32_t n;

    if (!tbbt__get_uv32(b, &n) || n > TBBT_INFO_MAX)
        return false;
    for (uint32_t i = 0; i < n; i++)
        if (!tbbt__get_uv(b, &rec->info[i]))
            return false;
    rec->n_info = n;
    return true;
}

/* Decodes the value of field f from all of b into rec. */
static bool dec_value(struct tbbt_trace_reader *r, struct tbbt_buf *b,
                      struct tbbt_trace_rec *rec, unsigned f)
{
    void *v = TBBT__FIELD_PTR(rec, f);

    switch (tbbt__trace_fields[f].kind) {
    case TBBT__K_REF:
        return dec_ref(r, b, v);
    case TBBT__K_CRED:
        return tbbt__get_uv32(b, v) && *(uint32_t *)v < tbbt_credtab_count(r->cred);
    case TBBT__K_U32:
        return tbbt__get_uv32(b, v);
    case TBBT__K_U64:
    case TBBT__K_TIME:
        return tbbt__get_uv(b, v);
    case TBBT__K_VERF:
        *(uint64_t *)v = tbbt__get_le64(b);
        return !b->trunc;
    case TBBT__K_NAME:
        return dec_str(b, rec, v, TBBT_NAME_MAX);
    case TBBT__K_PATH:
        return dec_str(b, rec, v, TBBT_PATH_MAX);
    case TBBT__K_SATTR:
        return tbbt__dec_sattr(b, v);
    case TBBT__K_FATTR:
        return tbbt__dec_fattr(b, v);
    case TBBT__K_WCC:
        return tbbt__dec_wcc(b, v);
    case TBBT__K_ENTRIES:
        return dec_entries(r, b, rec);
    case TBBT__K_INFO:
        return dec_info(b, rec);
    case TBBT__K_OPS4:
        return tbbt__op4s_dec(b, rec, tbbt_fhtab_count(r->fh));
    case TBBT__K_OPS4X:
        return TBBT_HAS(rec, TBBT_F_OPS) && tbbt__op4s_more_dec(b, rec);
    }
    return false;
}

static int read_op(struct tbbt_trace_reader *r, struct tbbt_buf *b, struct tbbt_trace_rec *rec)
{
    int last = -1;

    tbbt_trace_rec_clear(rec);
    if (b->len < TBBT__TRACE_OP_FIXED)
        return TBBT_E_BADREC;
    dec_fixed(b, rec);
    if (rec->endpoint >= tbbt_eptab_count(r->ep))
        return TBBT_E_BADREC;
    while (b->len > 0) {
        struct tbbt_buf v;
        uint32_t len;
        uint8_t tag;

        r->bad = b->p;
        tag = tbbt_buf_get_u8(b);
        if ((int)tag <= last || !tbbt__get_uv32(b, &len) || len > b->len)
            return TBBT_E_BADREC;
        last = tag;
        tbbt_buf_init(&v, b->p, len);
        tbbt_buf_skip(b, len);
        if (tag >= TBBT_F_NFIELDS) {
            r->skipped++;
            continue;
        }
        if ((r->skip_fields >> tag) & 1 ||
            (tag == TBBT_F_OPS_MORE && (r->skip_fields >> TBBT_F_OPS) & 1))
            continue;
        if (!dec_value(r, &v, rec, tag) || v.len != 0)
            return TBBT_E_BADREC;
        if (tag != TBBT_F_OPS_MORE)     /* folded into ops */
            TBBT_SET(rec, tag);
    }
    r->bad = NULL;
    return TBBT_REC_OP;
}

/* ---- trailer and the record loop ---------------------------------------------- */

static int read_end(struct tbbt_trace_reader *r, struct tbbt_buf *b, size_t rec_start)
{
    uint64_t nops;
    uint32_t nfh, nep, crc;

    if (b->len != TBBT__TRACE_END_LEN)
        return TBBT_E_BADREC;
    nops = tbbt__get_le64(b);
    nfh = tbbt_buf_get_le32(b);
    nep = tbbt_buf_get_le32(b);
    crc = tbbt_buf_get_le32(b);
    crc_upto(r, rec_start);
    if (crc != (uint32_t)r->crc)
        return TBBT_E_CHECKSUM;
    if (nops != r->nops || nfh != tbbt_fhtab_count(r->fh) || nep != tbbt_eptab_count(r->ep))
        return TBBT_E_BADREC;
    return 0;
}

/* Dispatches one complete record; returns its type, 0 at the trailer, -1 to skip it. */
static int read_body(struct tbbt_trace_reader *r, uint8_t type, struct tbbt_buf *b,
                     struct tbbt_trace_rec *rec, uint32_t *ref)
{
    int rc;

    switch (type) {
    case TBBT_REC_HANDLE:
        rc = read_handle(r, b, ref);
        return rc < 0 ? rc : TBBT_REC_HANDLE;
    case TBBT_REC_ENDPOINT:
        rc = read_endpoint(r, b, ref);
        return rc < 0 ? rc : TBBT_REC_ENDPOINT;
    case TBBT_REC_CRED:
        rc = read_cred(r, b, ref);
        return rc < 0 ? rc : TBBT_REC_CRED;
    case TBBT_REC_OP:
        return read_op(r, b, rec);
    case TBBT_REC_END:
        return read_end(r, b, r->start);
    default:
        r->skipped++;
        return -1;
    }
}

/* After the trailer: only the end of the file may follow. */
static int expect_eof(struct tbbt_trace_reader *r)
{
    int rc = fill(r, 1);

    if (rc == TBBT_E_TRUNC)
        return 0;
    return rc < 0 ? rc : TBBT_E_BADREC;
}

int tbbt_trace_reader_next_any(struct tbbt_trace_reader *r, struct tbbt_trace_rec *rec,
                               uint32_t *ref)
{
    uint32_t dummy;

    if (r->err)
        return r->err;
    if (r->done)
        return 0;
    for (;;) {
        uint64_t off = r->base + r->start;
        struct tbbt_buf b;
        uint32_t len;
        uint8_t type;
        int rc = fill(r, TBBT__TRACE_PREFIX);

        if (rc < 0)
            return fail(r, rc, off);
        type = r->buf[r->start];
        len = tbbt_le32(r->buf + r->start + 1);
        if (len > TBBT_TRACE_REC_MAX)
            return fail(r, TBBT_E_BADREC, off);
        if ((rc = fill(r, TBBT__TRACE_PREFIX + (size_t)len)) < 0)
            return fail(r, rc, off);
        tbbt_buf_init(&b, r->buf + r->start + TBBT__TRACE_PREFIX, len);
        r->bad = NULL;
        rc = read_body(r, type, &b, rec, ref ? ref : &dummy);
        if (rc < -1) {
            if (r->bad)
                off = r->base + (uint64_t)(r->bad - r->buf);
            return fail(r, rc, off);
        }
        r->start += TBBT__TRACE_PREFIX + (size_t)len;
        if (rc == 0) {
            r->done = true;
            if ((rc = expect_eof(r)) < 0)
                return fail(r, rc, r->base + r->start);
            return 0;
        }
        if (rc == TBBT_REC_OP)
            r->nops++;
        if (rc > 0)
            return rc;
    }
}

int tbbt_trace_reader_next(struct tbbt_trace_reader *r, struct tbbt_trace_rec *rec)
{
    int rc;

    do {
        rc = tbbt_trace_reader_next_any(r, rec, NULL);
    } while (rc == TBBT_REC_HANDLE || rc == TBBT_REC_ENDPOINT || rc == TBBT_REC_CRED);
    return rc == TBBT_REC_OP ? 1 : rc;
}

void tbbt_trace_reader_skip_fields(struct tbbt_trace_reader *r, uint64_t fields)
{
    r->skip_fields = fields;
}

struct tbbt_fhtab *tbbt_trace_reader_fhtab(struct tbbt_trace_reader *r)
{
    return r->fh;
}

struct tbbt_eptab *tbbt_trace_reader_eptab(struct tbbt_trace_reader *r)
{
    return r->ep;
}

struct tbbt_credtab *tbbt_trace_reader_credtab(struct tbbt_trace_reader *r)
{
    return r->cred;
}

uint64_t tbbt_trace_reader_offset(const struct tbbt_trace_reader *r)
{
    return r->err ? r->err_off : r->base + r->start;
}

void tbbt_trace_reader_version(const struct tbbt_trace_reader *r, int *major, int *minor)
{
    *major = r->major;
    *minor = r->minor;
}

uint64_t tbbt_trace_reader_skipped(const struct tbbt_trace_reader *r)
{
    return r->skipped;
}

int tbbt_trace_ident_read(const char *path, struct tbbt_trace_ident *id)
{
    uint8_t head[TBBT__TRACE_MAGIC_LEN], end[TBBT__TRACE_PREFIX + TBBT__TRACE_END_LEN];
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
    off_t size;

    if (fd < 0)
        return -errno;
    if ((size = lseek(fd, 0, SEEK_END)) < 0) {
        rc = -errno;
    } else if (pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
               memcmp(head, TBBT__TRACE_MAGIC, sizeof(head)) != 0) {
        rc = TBBT_E_MAGIC;
    } else if (size < (off_t)(TBBT__TRACE_HDR_LEN + sizeof(end)) ||
               pread(fd, end, sizeof(end), size - (off_t)sizeof(end)) != (ssize_t)sizeof(end) ||
               end[0] != TBBT_REC_END || end[1] != TBBT__TRACE_END_LEN || end[2] || end[3] ||
               end[4]) {
        rc = TBBT_E_TRUNC;
    } else {
        id->ops = 0;
        for (int i = 7; i >= 0; i--)
            id->ops = id->ops << 8 | end[5 + i];
        id->crc = tbbt_le32(end + 21);
    }
    close(fd);
    return rc;
}
