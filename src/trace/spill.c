/* SPDX-License-Identifier: MIT */
/*
 * Record spill (spill.h): a private record image for passing records between
 * the passes of one program.  Layout of a record, host byte order:
 *
 *   u32 body length (after this word) | u32 nfh | u32 nep | u32 ncred | header
 *   | u64 present
 *   | the present fields in tag order
 *
 * A field is its member's bytes (u32, u64, struct tbbt_sattr / tbbt_wcc_pre),
 * but attributes, which are most of a record, are packed (the spill's bytes
 * go through the page cache twice): a u32 of 13 two-bit size codes, then the
 * 13 values in struct order, each in the fewest of 1, 2, 4 or 8 bytes
 * (little-endian).  That is as short as LEB128 on real attributes (times
 * and fsids need 8 bytes either way) and is written and read with one
 * unaligned access per value.  A string is u32 length + bytes; entries are
 * u32 count then
 * per entry fileid, cookie, flags, fh, attr (with TBBT_ENT_ATTR), id (with
 * TBBT_ENT_ID), u32 name length + name; info is u32 count + values; NFSv4
 * operations are u32 length + the trace file's encodings of them, `ops` then
 * `ops_more` (op4.c).  The file ends with the end mark: a body length of
 * SPILL_END and the u64 record count.  Which member a tag is, and its kind, come from the trace module's
 * field table, so the spill follows new fields without changes.
 */
#include "trace/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <glib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace-int.h"
#include "util/util.h"

#define SPILL_BUF (1u << 20)
#define SPILL_END UINT32_MAX
#define SPILL_REC_MAX (64u << 20)      /* a longer body is refused */
#define SPILL_PUNCH (4u << 20)         /* consume: holes of this many bytes */
#define DEFS_LEN 12u                   /* nfh, nep, ncred */

/* The header fields of a record, copied as one block. */
struct hdr {
    uint64_t call_ns, reply_ns;
    uint32_t xid, endpoint, uid, gid;
    int32_t status;
    uint16_t flags;
    uint8_t prog, proc, rpc_stat;
};

/*
 * What a spill writer and reader both hold, as their first member: the file
 * and one buffer of cap bytes.
 */
struct spill_io {
    int fd;
    uint8_t *buf;
    size_t cap;
};

struct tbbt_spill_writer {
    struct spill_io io;
    size_t len;
    uint64_t count;
    int err;
};

struct tbbt_spill_reader {
    struct spill_io io;
    size_t pos, len;        /* unread bytes: io.buf[pos, len) */
    uint64_t off;           /* file offset of io.buf[0] */
    uint64_t punched;       /* consume: [0, punched) is a hole */
    bool consume;           /* punch holes behind the reader */
    bool eof, ended;        /* the file is read to its end; the end mark was seen */
};

G_STATIC_ASSERT(offsetof(struct tbbt_spill_writer, io) == 0 &&
                offsetof(struct tbbt_spill_reader, io) == 0);

/* (ops_more is never present: its members are put with the ops) */
static const uint64_t field_mask =
    ((UINT64_C(1) << TBBT_F_NFIELDS) - 1) & ~(UINT64_C(1) << TBBT_F_OPS_MORE);

/*
 * Opens path (flags besides O_CLOEXEC; a file it creates is private) and gives
 * a zeroed object of size bytes, a struct whose first member is its
 * struct spill_io, with a SPILL_BUF buffer; NULL and *err (-errno) on failure.
 */
static void *io_new(size_t size, const char *path, int flags, int *err)
{
    struct spill_io *io;
    int fd = open(path, flags | O_CLOEXEC, 0600);

    if (fd < 0) {
        *err = -errno;
        return NULL;
    }
    io = g_malloc0(size);
    io->fd = fd;
    io->cap = SPILL_BUF;
    io->buf = g_malloc(io->cap);
    return io;
}

/* Closes and frees an object from io_new() (NULL: nothing); 0 or close(2)'s -errno. */
static int io_free(void *obj)
{
    struct spill_io *io = obj;
    int rc;

    if (!io)
        return 0;
    rc = close(io->fd) < 0 ? -errno : 0;
    g_free(io->buf);
    g_free(io);
    return rc;
}

/* ---- writing ---------------------------------------------------------------------- */

static int flush(struct tbbt_spill_writer *w)
{
    int rc = w->err ? w->err : tbbt_write_all(w->io.fd, w->io.buf, w->len);

    w->len = 0;
    if (rc < 0)
        w->err = rc;
    return rc;
}

struct tbbt_spill_writer *tbbt_spill_writer_open(const char *path, int *err)
{
    return io_new(sizeof(struct tbbt_spill_writer), path, O_WRONLY | O_CREAT | O_TRUNC, err);
}

/* ---- packed attributes (see the file comment) ---------------------------------------- */

#define FATTR_PACKED_MAX (4 + 8 * TBBT__FATTR_NVALUES)
/* The size codes of the 32-bit members: none may be 3 (8 bytes). */
#define U32_CODE(m, i, bits, ...) | ((bits) == 32 ? UINT32_C(1) << (2 * (i)) : 0)
static const uint32_t u32_codes = 0 TBBT__FATTR_VALUES(U32_CODE);
/* packed_len() below counts 13 codes in a word */
#define ONE_VALUE(m, i, bits, ...) + 1
G_STATIC_ASSERT((0 TBBT__FATTR_VALUES(ONE_VALUE)) == TBBT__FATTR_NVALUES &&
                TBBT__FATTR_NVALUES == 13);

/* The size code of v: its length is 1 << code bytes. */
static inline unsigned size_code(uint64_t v)
{
    return (unsigned)(v > 0xff) + (v > 0xffff) + (v > 0xffffffffu);
}

/* Stores v in 1 << code bytes; writes 8 (FIXED_MAX, below, has room for the last one). */
static inline uint8_t *put_packed(uint8_t *p, uint64_t v, uint32_t *codes, unsigned i)
{
    unsigned code = size_code(v);
    uint64_t le = GUINT64_TO_LE(v);

    *codes |= (uint32_t)code << (2 * i);
    memcpy(p, &le, 8);
    return p + (1u << code);
}

static uint8_t *put_fattr(uint8_t *p, const struct tbbt_fattr *a)
{
    uint8_t *q = p + 4;
    uint32_t codes = 0;

#define PUT_VALUE(m, i, bits, ...) q = put_packed(q, a->m, &codes, i);
    TBBT__FATTR_VALUES(PUT_VALUE)
#undef PUT_VALUE
    memcpy(p, &codes, 4);
    return q;
}

/* The longest value of a field that is neither a string nor the entries. */
#define FIXED_MAX FATTR_PACKED_MAX
G_STATIC_ASSERT(sizeof(struct tbbt_sattr) <= FIXED_MAX && 4 + 8 * TBBT_INFO_MAX <= FIXED_MAX &&
                sizeof(struct tbbt_wcc_pre) <= FIXED_MAX);
#define BIT(f) ((uint64_t)1 << (f))
static const uint64_t var_fields = BIT(TBBT_F_NAME) | BIT(TBBT_F_NAME2) | BIT(TBBT_F_TARGET) |
                                   BIT(TBBT_F_DIRPATH) | BIT(TBBT_F_ENTRIES) | BIT(TBBT_F_OPS);

/*
 * Bytes the present fields' values take at most: FIXED_MAX for each field
 * there can be (a few KiB of a MiB buffer: cheaper than counting bits, which
 * baseline x86-64 does by a call), strings and entries by their lengths.
 */
static size_t values_bound(const struct tbbt_trace_rec *rec, uint64_t present)
{
    size_t n = (size_t)TBBT_F_NFIELDS * FIXED_MAX;

    if (!(present & var_fields))
        return n;
    n += present & BIT(TBBT_F_NAME) ? 4 + rec->name.len : 0;
    n += present & BIT(TBBT_F_NAME2) ? 4 + rec->name2.len : 0;
    n += present & BIT(TBBT_F_TARGET) ? 4 + rec->target.len : 0;
    n += present & BIT(TBBT_F_DIRPATH) ? 4 + rec->dirpath.len : 0;
    if (present & BIT(TBBT_F_OPS))
        n += 4 + tbbt__op4s_bound(rec);
    if (present & BIT(TBBT_F_ENTRIES)) {
        n += 4;
        for (uint32_t i = 0; i < rec->n_entries; i++)
            n += 8 + 8 + 4 + 4 + FIXED_MAX + 8 + 4 + rec->entries[i].name.len;
    }
    return n;
}

#define PUT(p, v) (memcpy((p), &(v), sizeof(v)), (p) + sizeof(v))

static uint8_t *put_bytes(uint8_t *p, const struct tbbt_str *s)
{
    p = PUT(p, s->len);
    if (s->len)
        memcpy(p, s->p, s->len);
    return p + s->len;
}

static uint8_t *put_value(uint8_t *p, const struct tbbt_trace_rec *rec, unsigned f)
{
    const void *v = TBBT__FIELD_CPTR(rec, f);
    uint32_t n;

    switch (tbbt__trace_fields[f].kind) {
    case TBBT__K_REF:
    case TBBT__K_CRED:
    case TBBT__K_U32:
        memcpy(p, v, 4);
        return p + 4;
    case TBBT__K_U64:
    case TBBT__K_TIME:
    case TBBT__K_VERF:
        memcpy(p, v, 8);
        return p + 8;
    case TBBT__K_NAME:
    case TBBT__K_PATH:
        return put_bytes(p, v);
    case TBBT__K_SATTR:
        memcpy(p, v, sizeof(struct tbbt_sattr));
        return p + sizeof(struct tbbt_sattr);
    case TBBT__K_FATTR:
        return put_fattr(p, v);
    case TBBT__K_WCC:
        memcpy(p, v, sizeof(struct tbbt_wcc_pre));
        return p + sizeof(struct tbbt_wcc_pre);
    case TBBT__K_ENTRIES:
        p = PUT(p, rec->n_entries);
        for (uint32_t i = 0; i < rec->n_entries; i++) {
            const struct tbbt_entry *e = &rec->entries[i];
            p = PUT(p, e->fileid);
            p = PUT(p, e->cookie);
            p = PUT(p, e->flags);
            p = PUT(p, e->fh);
            if (e->flags & TBBT_ENT_ATTR)
                p = put_fattr(p, &e->attr);
            if (e->flags & TBBT_ENT_ID)
                p = PUT(p, e->id);
            p = put_bytes(p, &e->name);
        }
        return p;
    case TBBT__K_OPS4X:
        return p;       /* never present: put with the ops */
    case TBBT__K_OPS4: {
        uint8_t *end = tbbt__op4s_enc(p + 4, rec);   /* the trace file's encoding, */
        end = tbbt__op4s_more_enc(end, rec);          /* both fields */
        n = (uint32_t)(end - (p + 4));
        memcpy(p, &n, 4);
        return end;
    }
    case TBBT__K_INFO:
        n = rec->n_info < TBBT_INFO_MAX ? rec->n_info : TBBT_INFO_MAX;
        p = PUT(p, n);
        memcpy(p, rec->info, 8 * (size_t)n);
        return p + 8 * (size_t)n;
    }
    return p;
}

int tbbt_spill_put(struct tbbt_spill_writer *w, const struct tbbt_trace_rec *rec,
                   const struct tbbt_spill_defs *defs)
{
    uint64_t present = rec->present & field_mask, bits;
    size_t bound = 4 + DEFS_LEN + sizeof(struct hdr) + 8 + TBBT__UV_SLACK;
    struct hdr h;
    uint32_t blen;
    uint8_t *p, *start;

    if (w->err)
        return w->err;
    memset(&h, 0, sizeof h);        /* its padding goes to the file too */
    h.call_ns = rec->call_ns;
    h.reply_ns = rec->reply_ns;
    h.xid = rec->xid;
    h.endpoint = rec->endpoint;
    h.uid = rec->uid;
    h.gid = rec->gid;
    h.status = rec->status;
    h.flags = rec->flags;
    h.prog = rec->prog;
    h.proc = rec->proc;
    h.rpc_stat = rec->rpc_stat;
    bound += values_bound(rec, present);
    if (bound > SPILL_REC_MAX)
        return w->err = TBBT_E_RANGE;
    if (w->io.cap - w->len < bound) {
        if (flush(w) < 0)
            return w->err;
        if (w->io.cap < bound) {
            w->io.cap = bound;
            w->io.buf = g_realloc(w->io.buf, w->io.cap);
        }
    }
    start = w->io.buf + w->len;
    p = start + 4;                  /* the length goes there once known */
    p = PUT(p, defs->nfh);
    p = PUT(p, defs->nep);
    p = PUT(p, defs->ncred);
    p = PUT(p, h);
    p = PUT(p, present);
    for (bits = present; bits; bits &= bits - 1)
        p = put_value(p, rec, (unsigned)__builtin_ctzll(bits));
    blen = (uint32_t)(p - start - 4);
    memcpy(start, &blen, 4);
    w->len += (size_t)(p - start);
    w->count++;
    return 0;
}

uint64_t tbbt_spill_writer_count(const struct tbbt_spill_writer *w)
{
    return w->count;
}

int tbbt_spill_writer_close(struct tbbt_spill_writer *w)
{
    uint32_t end = SPILL_END;
    int rc = 0, close_rc;

    if (w->io.cap - w->len < 12)
        rc = flush(w);
    if (rc == 0 && w->err == 0) {
        uint8_t *p = w->io.buf + w->len;
        p = PUT(p, end);
        memcpy(p, &w->count, sizeof w->count);
        w->len += 12;
        rc = flush(w);
    }
    if (rc == 0)
        rc = w->err;
    close_rc = io_free(w);
    return rc ? rc : close_rc;
}

void tbbt_spill_writer_abort(struct tbbt_spill_writer *w)
{
    io_free(w);
}

/* ---- reading ---------------------------------------------------------------------- */

struct tbbt_spill_reader *tbbt_spill_reader_open(const char *path, bool consume, int *err)
{
    struct tbbt_spill_reader *r = io_new(sizeof(*r), path, consume ? O_RDWR : O_RDONLY, err);

    if (r)
        r->consume = consume;
    return r;
}

/* consume: gives back the pages of what was read, SPILL_PUNCH bytes at a time. */
static void punch(struct tbbt_spill_reader *r)
{
    uint64_t to = r->off & ~(uint64_t)(SPILL_PUNCH - 1);

    if (!r->consume || to < r->punched + SPILL_PUNCH)
        return;
    if (fallocate(r->io.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)r->punched,
                  (off_t)(to - r->punched)) != 0)
        r->consume = false;        /* not on this file system: nothing lost but the reuse */
    r->punched = to;
}

/* Makes at least need unread bytes available: 0, or TBBT_E_TRUNC at the end, or -errno. */
static int fill(struct tbbt_spill_reader *r, size_t need)
{
    int rc;

    if (r->len - r->pos >= need)
        return 0;
    if (r->pos > 0) {
        memmove(r->io.buf, r->io.buf + r->pos, r->len - r->pos);
        r->off += r->pos;
        r->len -= r->pos;
        r->pos = 0;
        punch(r);
    }
    if (r->io.cap < need) {
        r->io.cap = need;
        r->io.buf = g_realloc(r->io.buf, r->io.cap);
    }
    while (r->len < need && !r->eof)
        if ((rc = tbbt_read_more(r->io.fd, r->io.buf, &r->len, r->io.cap, &r->eof)) < 0)
            return rc;
    return r->len >= need ? 0 : TBBT_E_TRUNC;
}

/* A bounds-checked cursor over one record's body. */
struct cur {
    const uint8_t *p;
    size_t left;
};

static bool take(struct cur *c, void *dst, size_t n)
{
    if (c->left < n)
        return false;
    memcpy(dst, c->p, n);
    c->p += n;
    c->left -= n;
    return true;
}

static bool take_str(struct cur *c, struct tbbt_trace_rec *rec, struct tbbt_str *dst)
{
    uint32_t n;

    if (!take(c, &n, 4) || c->left < n)
        return false;
    tbbt_trace_rec_set_str(rec, dst, c->p, n);
    c->p += n;
    c->left -= n;
    return true;
}

/* Bytes of the values of the 4 size codes in a byte. */
#define LEN4(b) ((1u << ((b) & 3)) + (1u << ((b) >> 2 & 3)) + (1u << ((b) >> 4 & 3)) + \
                 (1u << ((b) >> 6 & 3)))
#define LEN4_2(n) LEN4(n), LEN4(n + 1), LEN4(n + 2), LEN4(n + 3)
#define LEN4_4(n) LEN4_2(n), LEN4_2(n + 4), LEN4_2(n + 8), LEN4_2(n + 12)
#define LEN4_6(n) LEN4_4(n), LEN4_4(n + 16), LEN4_4(n + 32), LEN4_4(n + 48)
static const uint8_t len4[256] = {LEN4_6(0), LEN4_6(64), LEN4_6(128), LEN4_6(192)};

/* Bytes the 13 values of put_fattr() take after their codes (codes >> 26 is 0). */
static inline size_t packed_len(uint32_t codes)
{
    /* the top byte holds code 12 and three zero codes, which the table counts as 1 each */
    return (size_t)len4[codes & 0xff] + len4[codes >> 8 & 0xff] + len4[codes >> 16 & 0xff] +
           len4[codes >> 24] - 3u;
}

/* Value i of a packed attribute at *p (8 readable bytes), advancing *p. */
static inline uint64_t get_packed(const uint8_t **p, uint32_t codes, unsigned i)
{
    unsigned code = codes >> (2 * i) & 3;
    uint64_t w;

    memcpy(&w, *p, 8);
    *p += 1u << code;
    w = GUINT64_FROM_LE(w);
    return code == 3 ? w : w & ((UINT64_C(1) << (8u << code)) - 1);
}

/*
 * Reads put_fattr()'s bytes: 8 at a time when that stays inside the record,
 * else through a copy with 8 bytes to spare.  A 32-bit member given 8 bytes
 * is refused.
 */
static bool take_fattr(struct cur *c, struct tbbt_fattr *a)
{
    uint8_t tail[FATTR_PACKED_MAX + 8];
    const uint8_t *p;
    uint32_t codes;
    size_t need;

    if (!take(c, &codes, 4) || codes >> (2 * TBBT__FATTR_NVALUES) ||
        (codes & codes >> 1 & u32_codes) != 0)    /* a 32-bit member with code 3 */
        return false;
    need = packed_len(codes);
    if (c->left < need)
        return false;
    p = c->p;
    if (c->left < need + 8) {
        memset(tail, 0, sizeof tail);
        memcpy(tail, c->p, need);
        p = tail;
    }
#define GET_VALUE(m, i, bits, ...) a->m = (uint##bits##_t)get_packed(&p, codes, i);
    TBBT__FATTR_VALUES(GET_VALUE)
#undef GET_VALUE
    c->p += need;
    c->left -= need;
    return true;
}

static bool take_entries(struct cur *c, struct tbbt_trace_rec *rec)
{
    uint32_t n;

    if (!take(c, &n, 4) || n > c->left / 28)   /* 28: the shortest entry */
        return false;
    tbbt__trace_rec_reserve(rec, n);
    for (uint32_t i = 0; i < n; i++) {
        struct tbbt_entry *e = tbbt_trace_rec_add_entry(rec);
        if (!take(c, &e->fileid, 8) || !take(c, &e->cookie, 8) || !take(c, &e->flags, 4) ||
            !take(c, &e->fh, 4) || (e->flags & ~(uint32_t)TBBT_ENT_ALL) != 0)
            return false;
        if (!(e->flags & TBBT_ENT_FH))
            e->fh = 0;
        if ((e->flags & TBBT_ENT_ATTR) && !take_fattr(c, &e->attr))
            return false;
        if ((e->flags & TBBT_ENT_ID) && !take(c, &e->id, 8))
            return false;
        if (!take_str(c, rec, &e->name))
            return false;
    }
    return true;
}

/* The ops as put_value() wrote them: u32 length, then the trace file's encoding. */
static bool take_ops(struct cur *c, struct tbbt_trace_rec *rec)
{
    struct tbbt_buf b;
    uint32_t n;

    if (!take(c, &n, 4) || n > c->left)
        return false;
    tbbt_buf_init(&b, c->p, n);
    if (!tbbt__op4s_dec(&b, rec, UINT32_MAX) || !tbbt__op4s_more_dec(&b, rec) || b.len != 0)
        return false;      /* (the spill is private: its references are not checked) */
    c->p += n;
    c->left -= n;
    return true;
}

static bool take_value(struct cur *c, struct tbbt_trace_rec *rec, unsigned f)
{
    void *v = TBBT__FIELD_PTR(rec, f);

    switch (tbbt__trace_fields[f].kind) {
    case TBBT__K_REF:
    case TBBT__K_CRED:
    case TBBT__K_U32:
        return take(c, v, 4);
    case TBBT__K_U64:
    case TBBT__K_TIME:
    case TBBT__K_VERF:
        return take(c, v, 8);
    case TBBT__K_NAME:
    case TBBT__K_PATH:
        return take_str(c, rec, v);
    case TBBT__K_SATTR:
        return take(c, v, sizeof(struct tbbt_sattr));
    case TBBT__K_FATTR:
        return take_fattr(c, v);
    case TBBT__K_WCC:
        return take(c, v, sizeof(struct tbbt_wcc_pre));
    case TBBT__K_ENTRIES:
        return take_entries(c, rec);
    case TBBT__K_INFO:
        return take(c, &rec->n_info, 4) && rec->n_info <= TBBT_INFO_MAX &&
               take(c, rec->info, 8 * (size_t)rec->n_info);
    case TBBT__K_OPS4:
        return take_ops(c, rec);
    case TBBT__K_OPS4X:
        return false;
    }
    return false;
}

/*
 * The next record's body length into *blen: 1, or 0 at the end (the end mark,
 * *blen SPILL_END, or after it, *blen 0), or an error.
 */
static int next_len(struct tbbt_spill_reader *r, uint32_t *blen)
{
    int rc;

    *blen = 0;
    if (r->ended)
        return 0;
    if ((rc = fill(r, 4)) < 0)
        return rc;
    memcpy(blen, r->io.buf + r->pos, 4);
    return *blen != SPILL_END;
}

/* Consumes the end mark next_len() found: 0, or TBBT_E_TRUNC / -errno if it is cut short. */
static int take_end(struct tbbt_spill_reader *r)
{
    int rc = fill(r, 12);

    if (rc < 0)
        return rc;
    r->pos += 12;
    r->ended = true;
    return 0;
}

int tbbt_spill_next(struct tbbt_spill_reader *r, struct tbbt_trace_rec *rec,
                    struct tbbt_spill_defs *defs)
{
    uint32_t blen;
    uint64_t present = 0;   /* set below (the length check guarantees it); for GCC */
    struct hdr h;
    struct cur c;
    int rc;

    if ((rc = next_len(r, &blen)) <= 0)
        return rc == 0 && blen == SPILL_END ? take_end(r) : rc;
    if (blen > SPILL_REC_MAX || blen < DEFS_LEN + sizeof(h) + 8)
        return TBBT_E_BADREC;
    if ((rc = fill(r, 4 + (size_t)blen)) < 0)
        return rc;
    c.p = r->io.buf + r->pos + 4;
    c.left = blen;
    take(&c, &defs->nfh, 4);
    take(&c, &defs->nep, 4);
    take(&c, &defs->ncred, 4);
    take(&c, &h, sizeof(h));
    take(&c, &present, 8);
    if (present & ~field_mask)
        return TBBT_E_BADREC;
    tbbt_trace_rec_clear(rec);
    rec->call_ns = h.call_ns;
    rec->reply_ns = h.reply_ns;
    rec->xid = h.xid;
    rec->endpoint = h.endpoint;
    rec->uid = h.uid;
    rec->gid = h.gid;
    rec->status = h.status;
    rec->flags = h.flags;
    rec->prog = h.prog;
    rec->proc = h.proc;
    rec->rpc_stat = h.rpc_stat;
    rec->present = present;
    for (uint64_t bits = present; bits; bits &= bits - 1)
        if (!take_value(&c, rec, (unsigned)__builtin_ctzll(bits)))
            return TBBT_E_BADREC;
    if (c.left != 0)
        return TBBT_E_BADREC;
    r->pos += 4 + (size_t)blen;
    return 1;
}

int tbbt_spill_peek(struct tbbt_spill_reader *r, struct tbbt_spill_defs *defs)
{
    uint32_t blen;
    int rc;

    if ((rc = next_len(r, &blen)) <= 0)
        return rc;
    if ((rc = fill(r, 4 + DEFS_LEN)) < 0)
        return rc;
    memcpy(&defs->nfh, r->io.buf + r->pos + 4, 4);
    memcpy(&defs->nep, r->io.buf + r->pos + 8, 4);
    memcpy(&defs->ncred, r->io.buf + r->pos + 12, 4);
    return 1;
}

uint64_t tbbt_spill_reader_offset(const struct tbbt_spill_reader *r)
{
    return r->off + r->pos;
}

void tbbt_spill_reader_close(struct tbbt_spill_reader *r)
{
    io_free(r);
}
