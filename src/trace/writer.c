/* SPDX-License-Identifier: MIT */
/*
 * Binary trace writer (layout: docs/trace-format.md, TBBT paper 3.1).
 * Records are encoded straight into one output buffer (1 MiB, grown only
 * for a record that does not fit) that is written with write(2) when full;
 * the CRC32 (zlib's, through util/crc32.h) is computed per flushed buffer.
 * No allocation per record.
 * Before each op record the writer emits the definitions of the handles,
 * endpoints and credentials interned in the borrowed tables since the last
 * ones it wrote.
 */
#include "trace/trace-int.h"
#include "util/crc32.h"
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define WBUF_SIZE (1u << 20)
#define OP_BOUND 8192u      /* fixed part + every TLV but entries at their largest */
#define ENTRY_BOUND (2 * TBBT__UV_MAX + 5 + TBBT_NAME_MAX + 5 + 5 + 14 * TBBT__UV_MAX)

struct tbbt_trace_writer {
    int fd;
    bool close_fd;
    uint8_t *buf;           /* pending output */
    size_t len, cap;
    uint32_t crc;           /* CRC32 of the bytes already written out */
    int err;                /* sticky error */
    uint64_t nops;
    uint32_t nfh, nep, ncred;   /* definitions written so far */
    struct tbbt_fhtab *fh;      /* borrowed */
    struct tbbt_eptab *ep;      /* borrowed */
    struct tbbt_credtab *cred;  /* borrowed */
};

static int flush(struct tbbt_trace_writer *w)
{
    int rc;

    if (w->len == 0)
        return 0;
    w->crc = tbbt_crc32(w->crc, w->buf, w->len);
    rc = tbbt_write_all(w->fd, w->buf, w->len);
    w->len = 0;
    if (rc < 0)
        w->err = rc;
    return rc;
}

/* Returns room for need bytes at the end of the buffer, or NULL on a write error. */
static uint8_t *reserve(struct tbbt_trace_writer *w, size_t need)
{
    if (w->cap - w->len < need) {
        if (flush(w) < 0)
            return NULL;
        if (w->cap < need) {
            while (w->cap < need)
                w->cap *= 2;
            g_free(w->buf);
            w->buf = g_malloc(w->cap);
        }
    }
    return w->buf + w->len;
}

/* Writes the type and length of the record whose body runs from s + 5 to end. */
static void commit_rec(struct tbbt_trace_writer *w, uint8_t *s, uint8_t type, uint8_t *end)
{
    s[0] = type;
    tbbt__put_le32(s + 1, (uint32_t)(end - s - TBBT__TRACE_PREFIX));
    w->len += (size_t)(end - s);
}

struct tbbt_trace_writer *tbbt_trace_writer_open(const char *path, struct tbbt_fhtab *fh,
                                                 struct tbbt_eptab *ep, int *err)
{
    struct tbbt_trace_writer *w;
    int fd = STDOUT_FILENO;
    uint8_t *p;

    if (strcmp(path, "-") != 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        if (fd < 0) {
            *err = -errno;
            return NULL;
        }
    }
    w = g_new0(struct tbbt_trace_writer, 1);
    w->fd = fd;
    w->close_fd = fd != STDOUT_FILENO;
    w->cap = WBUF_SIZE;
    w->buf = g_malloc(w->cap);
    w->crc = 0;             /* crc32(0, NULL, 0) */
    w->fh = fh;
    w->ep = ep;
    p = w->buf;
    memcpy(p, TBBT__TRACE_MAGIC, TBBT__TRACE_MAGIC_LEN);
    p = tbbt__put_le16(p + TBBT__TRACE_MAGIC_LEN, TBBT_TRACE_MAJOR);
    p = tbbt__put_le16(p, TBBT_TRACE_MINOR);
    p = tbbt__put_le32(p, TBBT__TRACE_HDR_LEN);
    w->len = (size_t)(p - w->buf);
    return w;
}

static int put_handle_bytes(struct tbbt_trace_writer *w, uint32_t ref, const uint8_t *fh,
                            uint32_t len)
{
    uint8_t *s = reserve(w, TBBT__TRACE_PREFIX + 5 + TBBT_FH_MAX);
    uint8_t *p;

    if (!s)
        return w->err;
    p = tbbt__put_le32(s + TBBT__TRACE_PREFIX, ref);
    *p++ = (uint8_t)len;
    memcpy(p, fh, len);
    commit_rec(w, s, TBBT_REC_HANDLE, p + len);
    return 0;
}

static int put_handle(struct tbbt_trace_writer *w, uint32_t ref)
{
    uint32_t len;
    const uint8_t *fh = tbbt_fhtab_get(w->fh, ref, &len);

    return put_handle_bytes(w, ref, fh, len);
}

static uint8_t *put_addr(uint8_t *p, const char *addr)
{
    size_t len = strlen(addr);

    *p++ = (uint8_t)len;
    memcpy(p, addr, len);
    return p + len;
}

static int put_endpoint_def(struct tbbt_trace_writer *w, uint32_t ref,
                            const struct tbbt_endpoint *ep)
{
    uint8_t *s, *p;

    if (!tbbt__addr_valid(ep->client, strlen(ep->client)) ||
        !tbbt__addr_valid(ep->server, strlen(ep->server)))
        return w->err = TBBT_E_RANGE;
    s = reserve(w, TBBT__TRACE_PREFIX + 10 + 2 * TBBT__TRACE_ADDR_MAX);
    if (!s)
        return w->err;
    p = tbbt__put_le32(s + TBBT__TRACE_PREFIX, ref);
    *p++ = ep->tcp ? TBBT__IPPROTO_TCP : TBBT__IPPROTO_UDP;
    p = tbbt__put_le16(p, ep->client_port);
    p = tbbt__put_le16(p, ep->server_port);
    p = put_addr(p, ep->client);
    p = put_addr(p, ep->server);
    commit_rec(w, s, TBBT_REC_ENDPOINT, p);
    return 0;
}

static int put_endpoint(struct tbbt_trace_writer *w, uint32_t ref)
{
    return put_endpoint_def(w, ref, tbbt_eptab_get(w->ep, ref));
}

void tbbt_trace_writer_set_credtab(struct tbbt_trace_writer *w, struct tbbt_credtab *t)
{
    w->cred = t;
}

/* CRED body: ref u32, machine name length u8 + bytes, uid u32, gid u32, gid count u8 + gids. */
static int put_cred_def(struct tbbt_trace_writer *w, uint32_t ref, const struct tbbt_cred *c)
{
    uint8_t *s = reserve(w, TBBT__TRACE_PREFIX + TBBT__TRACE_CRED_FIXED + TBBT_MACHINE_MAX +
                                4 * TBBT_CRED_GIDS_MAX);
    uint8_t *p;

    if (!s)
        return w->err;
    p = tbbt__put_le32(s + TBBT__TRACE_PREFIX, ref);
    *p++ = (uint8_t)c->machine_len;
    if (c->machine_len)
        memcpy(p, c->machine, c->machine_len);
    p = tbbt__put_le32(p + c->machine_len, c->uid);
    p = tbbt__put_le32(p, c->gid);
    *p++ = (uint8_t)c->ngids;
    for (uint32_t i = 0; i < c->ngids; i++)
        p = tbbt__put_le32(p, c->gids[i]);
    commit_rec(w, s, TBBT_REC_CRED, p);
    return 0;
}

static int put_cred(struct tbbt_trace_writer *w, uint32_t ref)
{
    return put_cred_def(w, ref, tbbt_credtab_get(w->cred, ref));
}

int tbbt_trace_writer_def_handle(struct tbbt_trace_writer *w, uint32_t ref, const void *fh,
                                 uint32_t len)
{
    g_assert(!w->fh);
    if (w->err)
        return w->err;
    if (ref != w->nfh || len > TBBT_FH_MAX)
        return TBBT_E_RANGE;
    if (put_handle_bytes(w, ref, fh, len) == 0)
        w->nfh++;
    return w->err;
}

int tbbt_trace_writer_def_endpoint(struct tbbt_trace_writer *w, uint32_t ref,
                                   const struct tbbt_endpoint *ep)
{
    g_assert(!w->ep);
    if (w->err)
        return w->err;
    if (ref != w->nep)
        return TBBT_E_RANGE;
    if (put_endpoint_def(w, ref, ep) == 0)
        w->nep++;
    return w->err;
}

int tbbt_trace_writer_def_cred(struct tbbt_trace_writer *w, uint32_t ref,
                               const struct tbbt_cred *cred)
{
    g_assert(!w->cred);
    if (w->err)
        return w->err;
    if (ref != w->ncred || cred->machine_len > TBBT_MACHINE_MAX ||
        cred->ngids > TBBT_CRED_GIDS_MAX)
        return TBBT_E_RANGE;
    if (put_cred_def(w, ref, cred) == 0)
        w->ncred++;
    return w->err;
}

int tbbt_trace_writer_sync_defs(struct tbbt_trace_writer *w)
{
    uint32_t nfh = w->fh ? tbbt_fhtab_count(w->fh) : 0;
    uint32_t nep = w->ep ? tbbt_eptab_count(w->ep) : 0;
    uint32_t ncred = w->cred ? tbbt_credtab_count(w->cred) : 0;

    for (; !w->err && w->nfh < nfh; w->nfh++)
        put_handle(w, w->nfh);
    for (; !w->err && w->nep < nep; w->nep++)
        put_endpoint(w, w->nep);
    for (; !w->err && w->ncred < ncred; w->ncred++)
        put_cred(w, w->ncred);
    return w->err;
}

/* ---- op records ----------------------------------------------------------- */

static bool str_ok(const struct tbbt_str *s, uint32_t max)
{
    return s->len <= max && (s->len == 0 || s->p);
}

/* TBBT_E_RANGE if rec breaks a bound the reader enforces. */
static int check_op(const struct tbbt_trace_writer *w, const struct tbbt_trace_rec *rec)
{
    /* without tables (definitions given one by one): what was defined so far */
    uint32_t nfh = w->fh ? tbbt_fhtab_count(w->fh) : w->nfh;
    uint32_t nep = w->ep ? tbbt_eptab_count(w->ep) : w->nep;
    uint32_t ncred = w->cred ? tbbt_credtab_count(w->cred) : w->ncred;
    bool ok = rec->endpoint < nep;

    ok = ok && (!TBBT_HAS(rec, TBBT_F_FH) || rec->fh < nfh);
    ok = ok && (!TBBT_HAS(rec, TBBT_F_FH2) || rec->fh2 < nfh);
    ok = ok && (!TBBT_HAS(rec, TBBT_F_NEW_FH) || rec->new_fh < nfh);
    ok = ok && (!TBBT_HAS(rec, TBBT_F_CRED) || rec->cred < ncred);
    ok = ok && (!TBBT_HAS(rec, TBBT_F_NAME) || str_ok(&rec->name, TBBT_NAME_MAX));
    ok = ok && (!TBBT_HAS(rec, TBBT_F_NAME2) || str_ok(&rec->name2, TBBT_NAME_MAX));
    ok = ok && (!TBBT_HAS(rec, TBBT_F_TARGET) || str_ok(&rec->target, TBBT_PATH_MAX));
    ok = ok && (!TBBT_HAS(rec, TBBT_F_DIRPATH) || str_ok(&rec->dirpath, TBBT_PATH_MAX));
    ok = ok && (!TBBT_HAS(rec, TBBT_F_INFO) || rec->n_info <= TBBT_INFO_MAX);
    ok = ok && (!TBBT_HAS(rec, TBBT_F_OPS) || tbbt__op4s_check(rec, nfh));
    if (ok && TBBT_HAS(rec, TBBT_F_ENTRIES)) {
        ok = rec->n_entries == 0 || rec->entries;
        for (uint32_t i = 0; ok && i < rec->n_entries; i++) {
            const struct tbbt_entry *e = &rec->entries[i];
            ok = str_ok(&e->name, TBBT_NAME_MAX) &&
                 (e->flags & ~(uint32_t)TBBT_ENT_ALL) == 0 &&
                 (!(e->flags & TBBT_ENT_FH) || e->fh < nfh);
        }
    }
    return ok ? 0 : TBBT_E_RANGE;
}

static uint8_t *enc_fixed(uint8_t *p, const struct tbbt_trace_rec *rec)
{
    p = tbbt__put_le64(p, rec->call_ns);
    p = tbbt__put_le64(p, rec->reply_ns);
    *p++ = rec->prog;
    *p++ = rec->proc;
    p = tbbt__put_le16(p, rec->flags);
    p = tbbt__put_le32(p, rec->xid);
    p = tbbt__put_le32(p, rec->endpoint);
    p = tbbt__put_le32(p, rec->uid);
    p = tbbt__put_le32(p, rec->gid);
    *p++ = rec->rpc_stat;
    return tbbt__put_le32(p, (uint32_t)rec->status);
}


static uint8_t *enc_bytes(uint8_t *p, const struct tbbt_str *s)
{
    if (s->len)
        memcpy(p, s->p, s->len);
    return p + s->len;
}

static uint8_t *enc_entries(uint8_t *p, const struct tbbt_trace_rec *rec)
{
    p = tbbt__put_uv_wide(p, rec->n_entries);
    for (uint32_t i = 0; i < rec->n_entries; i++) {
        const struct tbbt_entry *e = &rec->entries[i];
        p = tbbt__put_uv_wide(p, e->fileid);
        p = tbbt__put_uv_wide(p, e->cookie);
        p = tbbt__put_uv_wide(p, e->name.len);
        p = enc_bytes(p, &e->name);
        p = tbbt__put_uv_wide(p, e->flags);
        if (e->flags & TBBT_ENT_FH)
            p = tbbt__put_uv_wide(p, e->fh);
        if (e->flags & TBBT_ENT_ATTR)
            p = tbbt__enc_fattr(p, &e->attr);
        if (e->flags & TBBT_ENT_ID)
            p = tbbt__put_uv_wide(p, e->id);
    }
    return p;
}

/* Encodes the value of field f (no tag, no length). */
static uint8_t *enc_value(uint8_t *p, const struct tbbt_trace_rec *rec, unsigned f)
{
    const void *v = TBBT__FIELD_CPTR(rec, f);

    switch (tbbt__trace_fields[f].kind) {
    case TBBT__K_REF:
    case TBBT__K_CRED:
    case TBBT__K_U32:
        return tbbt__put_uv_wide(p, *(const uint32_t *)v);
    case TBBT__K_U64:
    case TBBT__K_TIME:
        return tbbt__put_uv_wide(p, *(const uint64_t *)v);
    case TBBT__K_VERF:
        return tbbt__put_le64(p, *(const uint64_t *)v);
    case TBBT__K_NAME:
    case TBBT__K_PATH:
        return enc_bytes(p, v);
    case TBBT__K_SATTR:
        return tbbt__enc_sattr(p, v);
    case TBBT__K_FATTR:
        return tbbt__enc_fattr(p, v);
    case TBBT__K_WCC:
        return tbbt__enc_wcc(p, v);
    case TBBT__K_ENTRIES:
        return enc_entries(p, rec);
    case TBBT__K_OPS4:
        return tbbt__op4s_enc(p, rec);
    case TBBT__K_OPS4X:
        return tbbt__op4s_more_enc(p, rec);
    case TBBT__K_INFO:
        p = tbbt__put_uv_wide(p, rec->n_info);
        for (uint32_t i = 0; i < rec->n_info; i++)
            p = tbbt__put_uv_wide(p, rec->info[i]);
        return p;
    }
    return p;
}

/* Encodes field f as tag, varint length, value. */
static uint8_t *enc_tlv(uint8_t *p, const struct tbbt_trace_rec *rec, unsigned f)
{
    uint8_t *v = p + 2;
    size_t n;
    unsigned k;

    p[0] = (uint8_t)f;
    n = (size_t)(enc_value(v, rec, f) - v);
    if (n < 0x80) {
        p[1] = (uint8_t)n;
        return v + n;
    }
    k = tbbt__uv_len(n);
    memmove(v + k - 1, v, n);
    tbbt__put_uv(p + 1, n);
    return v + k - 1 + n;
}

int tbbt_trace_writer_put(struct tbbt_trace_writer *w, const struct tbbt_trace_rec *rec)
{
    uint64_t present = rec->present & ((UINT64_C(1) << TBBT_F_NFIELDS) - 1) &
                       ~(UINT64_C(1) << TBBT_F_OPS_MORE);
    size_t bound = OP_BOUND + TBBT__UV_SLACK;
    uint8_t *s, *p;
    int rc;

    if (w->err)
        return w->err;
    if ((rc = check_op(w, rec)) < 0)
        return rc;
    if ((w->fh || w->ep || w->cred) && (rc = tbbt_trace_writer_sync_defs(w)) < 0)
        return rc;      /* (without tables there is nothing to sync) */
    if (TBBT_HAS(rec, TBBT_F_ENTRIES))
        bound += (size_t)rec->n_entries * ENTRY_BOUND;
    if (TBBT_HAS(rec, TBBT_F_OPS))
        bound += tbbt__op4s_bound(rec);
    if (TBBT_HAS(rec, TBBT_F_OPS) && tbbt__op4s_more(rec))
        present |= UINT64_C(1) << TBBT_F_OPS_MORE;  /* the ops' members since 1.3 */
    if (!(s = reserve(w, bound)))
        return w->err;
    p = enc_fixed(s + TBBT__TRACE_PREFIX, rec);
    while (present) {
        unsigned f = (unsigned)__builtin_ctzll(present);
        present &= present - 1;
        p = enc_tlv(p, rec, f);
    }
    if ((size_t)(p - s) - TBBT__TRACE_PREFIX > TBBT_TRACE_REC_MAX)
        return TBBT_E_RANGE;    /* not committed: the buffer forgets it */
    commit_rec(w, s, TBBT_REC_OP, p);
    w->nops++;
    return 0;
}

/* ---- close ---------------------------------------------------------------- */

static void writer_free(struct tbbt_trace_writer *w)
{
    g_free(w->buf);
    g_free(w);
}

int tbbt_trace_writer_close(struct tbbt_trace_writer *w)
{
    uint8_t end[TBBT__TRACE_PREFIX + TBBT__TRACE_END_LEN], *p;
    int rc = tbbt_trace_writer_sync_defs(w);

    if (rc == 0)
        rc = flush(w);
    if (rc == 0) {
        end[0] = TBBT_REC_END;
        p = tbbt__put_le32(end + 1, TBBT__TRACE_END_LEN);
        p = tbbt__put_le64(p, w->nops);
        p = tbbt__put_le32(p, w->nfh);
        p = tbbt__put_le32(p, w->nep);
        tbbt__put_le32(p, w->crc);
        rc = tbbt_write_all(w->fd, end, sizeof(end));
    }
    if (w->close_fd && close(w->fd) < 0 && rc == 0)
        rc = -errno;
    writer_free(w);
    return rc;
}

void tbbt_trace_writer_abort(struct tbbt_trace_writer *w)
{
    if (!w)
        return;
    if (w->close_fd)
        close(w->fd);
    writer_free(w);
}

uint64_t tbbt_trace_writer_count(const struct tbbt_trace_writer *w)
{
    return w->nops;
}
