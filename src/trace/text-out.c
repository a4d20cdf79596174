/* SPDX-License-Identifier: MIT */
/*
 * Text form of a trace, output side: one line per record, lossless, in the
 * grammar of docs/trace-format.md ("Text form").  text-in.c parses it back
 * into the identical binary trace.  Strings are quoted with every byte
 * outside printable ASCII, '"' and '\' escaped, so any name round-trips.
 */
#include "trace/trace-int.h"

#include "proto/proto.h"
#include "util/util.h"

#include <inttypes.h>
#include <string.h>

/* Number formatting by hand: printf is most of a dump's time otherwise. */
static const char hexdig[] = "0123456789abcdef";

/*
 * v in base 8, 10 or 16, at least `width` digits (zero-padded).  Inline, so
 * that each caller's base is a constant (no division instruction for 10).
 */
static inline void put_digits(GString *s, uint64_t v, unsigned base, int width)
{
    char b[24];
    int i = (int)sizeof(b);

    do {
        b[--i] = hexdig[v % base];
        v /= base;
    } while (v || (int)sizeof(b) - i < width);
    g_string_append_len(s, b + i, (gssize)sizeof(b) - i);
}

/* Decimal, at least `width` digits (zero-padded). */
static void put_dec(GString *s, uint64_t v, int width)
{
    put_digits(s, v, 10, width);
}

static void put_u64(GString *s, uint64_t v)
{
    put_dec(s, v, 1);
}

static void put_int(GString *s, int64_t v)
{
    if (v < 0)
        g_string_append_c(s, '-');
    put_dec(s, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 1);
}

/* "0x" and hex digits, at least `width` of them. */
static void put_hex(GString *s, uint64_t v, int width)
{
    g_string_append(s, "0x");
    put_digits(s, v, 16, width);
}

/* Octal with a leading 0 ("0644"; "0" for zero), as printf's %#o. */
static void put_oct(GString *s, uint64_t v)
{
    g_string_append_c(s, '0');
    if (v)
        put_digits(s, v, 8, 1);
}

static void put_time(GString *s, uint64_t ns)
{
    put_dec(s, ns / 1000000000u, 1);
    g_string_append_c(s, '.');
    put_dec(s, ns % 1000000000u, 9);
}

/* sep, key and '='. */
static void put_key(GString *s, const char *sep, const char *key)
{
    g_string_append(s, sep);
    g_string_append(s, key);
    g_string_append_c(s, '=');
}

/* Bit set as name|name|0x..; "0" when empty. */
static void put_bits(GString *s, const struct tbbt__tok *names, uint32_t v)
{
    bool first = true;

    if (v == 0) {
        g_string_append_c(s, '0');
        return;
    }
    for (const struct tbbt__tok *t = names; t->name; t++) {
        if (v & (uint32_t)t->value) {
            g_string_append(s, first ? "" : "|");
            g_string_append(s, t->name);
            v &= ~(uint32_t)t->value;
            first = false;
        }
    }
    if (v) {
        g_string_append(s, first ? "" : "|");
        put_hex(s, v, 1);
    }
}

static void put_str(GString *s, const char *p, uint32_t len)
{
    g_string_append_c(s, '"');
    for (uint32_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '"' || c == '\\') {
            g_string_append_c(s, '\\');
            g_string_append_c(s, (char)c);
        } else if (c < 0x20 || c >= 0x7f) {
            char e[4] = {'\\', 'x', hexdig[c >> 4], hexdig[c & 15]};
            g_string_append_len(s, e, 4);
        } else {
            g_string_append_c(s, (char)c);
        }
    }
    g_string_append_c(s, '"');
}

/* A number at v as kind (enum tbbt__subkind) says. */
static void put_scalar(GString *s, int kind, const void *v)
{
    switch (kind) {
    case TBBT__S_U32:
        put_u64(s, *(const uint32_t *)v);
        break;
    case TBBT__S_U64:
        put_u64(s, *(const uint64_t *)v);
        break;
    case TBBT__S_MODE:
        put_oct(s, *(const uint32_t *)v);
        break;
    case TBBT__S_TIME:
        put_time(s, *(const uint64_t *)v);
        break;
    case TBBT__S_MASK:
        put_bits(s, tbbt__sa_names, *(const uint32_t *)v);
        break;
    }
}

static void put_sub(GString *s, const struct tbbt__sub *d, const void *base)
{
    put_scalar(s, d->kind, (const char *)base + d->off);
}

static bool sub_is_zero(const struct tbbt__sub *d, const void *base)
{
    const char *v = (const char *)base + d->off;

    if (d->kind == TBBT__S_U64 || d->kind == TBBT__S_TIME)
        return *(const uint64_t *)v == 0;
    return *(const uint32_t *)v == 0;
}

/*
 * {key=value,...} of a structure.  mask: for sattr, members whose bit is
 * clear and whose value is 0 are left out (they read back as 0).
 */
static void put_struct(GString *s, const struct tbbt__sub *subs, const void *base, uint32_t mask)
{
    bool first = true;

    g_string_append_c(s, '{');
    for (const struct tbbt__sub *d = subs; d->name; d++) {
        if (d->sa_bit && !(mask & d->sa_bit) && sub_is_zero(d, base))
            continue;
        put_key(s, first ? "" : ",", d->name);
        put_sub(s, d, base);
        first = false;
    }
    g_string_append_c(s, '}');
}

static void put_entries(GString *s, const struct tbbt_trace_rec *rec)
{
    g_string_append_c(s, '[');
    for (uint32_t i = 0; i < rec->n_entries; i++) {
        const struct tbbt_entry *e = &rec->entries[i];
        put_key(s, i ? ",{" : "{", "fileid");
        put_u64(s, e->fileid);
        put_key(s, ",", "cookie");
        put_u64(s, e->cookie);
        put_key(s, ",", "name");
        put_str(s, e->name.p, e->name.len);
        if (e->flags & TBBT_ENT_FH) {
            put_key(s, ",", "fh");
            put_u64(s, e->fh);
        }
        if (e->flags & TBBT_ENT_ATTR) {
            g_string_append(s, ",attr=");
            put_struct(s, tbbt__fattr_subs, &e->attr, 0);
        }
        if (e->flags & TBBT_ENT_ID) {
            put_key(s, ",", "id");
            put_u64(s, e->id);
        }
        g_string_append_c(s, '}');
    }
    g_string_append_c(s, ']');
}

/* 0x and the 16 bytes of a stateid or sessionid in hex. */
static void put_id16(GString *s, const uint8_t *id)
{
    g_string_append(s, "0x");
    for (int i = 0; i < TBBT_OP4_ID_LEN; i++) {
        g_string_append_c(s, hexdig[id[i] >> 4]);
        g_string_append_c(s, hexdig[id[i] & 15]);
    }
}

static void put_op4_status(GString *s, uint32_t status)
{
    const char *n = tbbt__tok_name(tbbt__status_tok(TBBT_PROG_NFS4), (int)status);

    if (n)
        g_string_append(s, n);
    else
        put_u64(s, status);
}

#define PUT_U32(v) put_u64(s, v)
#define PUT_U64(v) put_u64(s, v)
#define PUT_REF(v) put_u64(s, v)
#define PUT_NAME(v) put_str(s, (v).p, (v).len)
#define PUT_PATH(v) put_str(s, (v).p, (v).len)
#define PUT_BLOB(v) put_str(s, (v).p, (v).len)
#define PUT_ID16(v) put_id16(s, v)
#define PUT_VERF(v) put_hex(s, v, 16)
#define PUT_SATTR(v) put_struct(s, tbbt__sattr_subs, &(v), (v).mask)
#define PUT_FATTR(v) put_struct(s, tbbt__fattr_subs, &(v), 0)
#define PUT_MEMBER(m, member, kind, text)                                                     \
    if (TBBT_O4_HAS(o, m)) {                                                                  \
        put_key(s, ",", text);                                                                \
        if (TBBT_O4_##m == TBBT_O4_STATUS)                                                    \
            put_op4_status(s, o->status);                                                     \
        else                                                                                  \
            PUT_##kind(o->member);                                                            \
    }

/* [{op=NAME,member=value,...},...]: docs/trace-format.md, "NFSv4 operations". */
static void put_ops(GString *s, const struct tbbt_trace_rec *rec)
{
    g_string_append_c(s, '[');
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        const char *name = tbbt_proto_nfs4_op_name(o->op);

        put_key(s, i ? ",{" : "{", "op");
        if (name)
            g_string_append(s, name);
        else
            put_u64(s, o->op);
        if (o->has >> TBBT_O4_TRUNC & 1u)
            g_string_append(s, ",trunc=1");
        TBBT__OP4_MEMBERS(PUT_MEMBER)
        g_string_append_c(s, '}');
    }
    g_string_append_c(s, ']');
}

static void put_field(GString *s, const struct tbbt_trace_rec *rec, unsigned f)
{
    const void *v = TBBT__FIELD_CPTR(rec, f);
    const struct tbbt_str *str = v;

    put_key(s, " ", tbbt__trace_fields[f].name);
    switch (tbbt__trace_fields[f].kind) {
    case TBBT__K_REF:
    case TBBT__K_CRED:
    case TBBT__K_U32:
        put_scalar(s, TBBT__S_U32, v);
        break;
    case TBBT__K_U64:
        put_scalar(s, TBBT__S_U64, v);
        break;
    case TBBT__K_TIME:
        put_scalar(s, TBBT__S_TIME, v);
        break;
    case TBBT__K_VERF:
        put_hex(s, *(const uint64_t *)v, 16);
        break;
    case TBBT__K_NAME:
    case TBBT__K_PATH:
        put_str(s, str->p, str->len);
        break;
    case TBBT__K_SATTR:
        put_struct(s, tbbt__sattr_subs, v, rec->sattr.mask);
        break;
    case TBBT__K_FATTR:
        put_struct(s, tbbt__fattr_subs, v, 0);
        break;
    case TBBT__K_WCC:
        put_struct(s, tbbt__wcc_subs, v, 0);
        break;
    case TBBT__K_ENTRIES:
        put_entries(s, rec);
        break;
    case TBBT__K_OPS4:
        put_ops(s, rec);
        break;
    case TBBT__K_OPS4X:         /* never printed: its members are in ops' */
        break;
    case TBBT__K_INFO:
        g_string_append_c(s, '[');
        for (uint32_t i = 0; i < rec->n_info && i < TBBT_INFO_MAX; i++) {
            if (i)
                g_string_append_c(s, ',');
            put_u64(s, rec->info[i]);
        }
        g_string_append_c(s, ']');
        break;
    }
}

static void put_name_or_num(GString *s, const char *name, int num)
{
    if (name)
        g_string_append(s, name);
    else
        put_int(s, num);
}

static void put_header(GString *s, const struct tbbt_trace_rec *rec)
{
    const char *st;

    g_string_append(s, "op ");
    put_time(s, rec->call_ns);
    g_string_append_c(s, ' ');
    put_time(s, rec->reply_ns);
    g_string_append_c(s, ' ');
    put_name_or_num(s, tbbt_prog_name(rec->prog), rec->prog);
    g_string_append_c(s, ' ');
    put_name_or_num(s, tbbt_proc_name(rec->prog, rec->proc), rec->proc);
    put_key(s, " ", "xid");
    put_hex(s, rec->xid, 8);
    put_key(s, " ", "ep");
    put_u64(s, rec->endpoint);
    put_key(s, " ", "uid");
    put_u64(s, rec->uid);
    put_key(s, " ", "gid");
    put_u64(s, rec->gid);
    put_key(s, " ", "flags");
    put_bits(s, tbbt__rf_names, rec->flags);
    if ((rec->flags & TBBT_RF_REPLY) || rec->rpc_stat) {
        g_string_append(s, " rpc=");
        put_name_or_num(s, tbbt__tok_name(tbbt__rpc_names, rec->rpc_stat), rec->rpc_stat);
    }
    if ((rec->flags & TBBT_RF_STATUS) || rec->status) {
        st = tbbt_status_name(rec->prog, rec->status);
        g_string_append(s, " status=");
        put_name_or_num(s, st, rec->status);
    }
}

void tbbt_trace_format_rec(GString *s, const struct tbbt_trace_rec *rec)
{
    uint64_t present = rec->present & ((UINT64_C(1) << TBBT_F_NFIELDS) - 1) &
                       ~(UINT64_C(1) << TBBT_F_OPS_MORE);

    put_header(s, rec);
    while (present) {
        unsigned f = (unsigned)__builtin_ctzll(present);
        present &= present - 1;
        put_field(s, rec, f);
    }
}

/* ---- definitions and the whole file ------------------------------------------ */

static void put_hostport(GString *s, const char *addr, uint16_t port)
{
    if (strchr(addr, ':'))
        g_string_append_printf(s, "[%s]:%u", addr, port);
    else
        g_string_append_printf(s, "%s:%u", addr, port);
}

static void put_handle_line(GString *s, struct tbbt_trace_reader *r, uint32_t ref)
{
    uint32_t len;
    const uint8_t *fh = tbbt_fhtab_get(tbbt_trace_reader_fhtab(r), ref, &len);

    g_string_append_printf(s, "fh %" PRIu32 " ", ref);
    if (len == 0)
        g_string_append_c(s, '-');
    for (uint32_t i = 0; i < len; i++) {
        g_string_append_c(s, hexdig[fh[i] >> 4]);
        g_string_append_c(s, hexdig[fh[i] & 15]);
    }
}

static void put_endpoint_line(GString *s, struct tbbt_trace_reader *r, uint32_t ref)
{
    const struct tbbt_endpoint *ep = tbbt_eptab_get(tbbt_trace_reader_eptab(r), ref);

    g_string_append_printf(s, "ep %" PRIu32 " %s ", ref, ep->tcp ? "tcp" : "udp");
    put_hostport(s, ep->client, ep->client_port);
    g_string_append_c(s, ' ');
    put_hostport(s, ep->server, ep->server_port);
}

/* cred REF "MACHINE" UID GID GIDS, GIDS "a,b,c" or "-". */
static void put_cred_line(GString *s, struct tbbt_trace_reader *r, uint32_t ref)
{
    const struct tbbt_cred *c = tbbt_credtab_get(tbbt_trace_reader_credtab(r), ref);

    g_string_append(s, "cred ");
    put_u64(s, ref);
    g_string_append_c(s, ' ');
    put_str(s, c->machine, c->machine_len);
    g_string_append_c(s, ' ');
    put_u64(s, c->uid);
    g_string_append_c(s, ' ');
    put_u64(s, c->gid);
    g_string_append_c(s, ' ');
    if (c->ngids == 0)
        g_string_append_c(s, '-');
    for (uint32_t i = 0; i < c->ngids; i++) {
        if (i)
            g_string_append_c(s, ',');
        put_u64(s, c->gids[i]);
    }
}

int tbbt_trace_dump_reader(struct tbbt_trace_reader *r, FILE *out)
{
    struct tbbt_trace_rec rec;
    GString *s = g_string_sized_new(1024);
    uint64_t nops = 0;
    uint32_t ref;
    int major, minor, rc;

    tbbt_trace_reader_version(r, &major, &minor);
    fprintf(out, "# tbbt-trace %d.%d\n", major, minor);
    tbbt_trace_rec_init(&rec);
    while ((rc = tbbt_trace_reader_next_any(r, &rec, &ref)) > 0) {
        g_string_truncate(s, 0);
        if (rc == TBBT_REC_HANDLE) {
            put_handle_line(s, r, ref);
        } else if (rc == TBBT_REC_ENDPOINT) {
            put_endpoint_line(s, r, ref);
        } else if (rc == TBBT_REC_CRED) {
            put_cred_line(s, r, ref);
        } else {
            tbbt_trace_format_rec(s, &rec);
            nops++;
        }
        g_string_append_c(s, '\n');
        fwrite(s->str, 1, s->len, out);
    }
    if (rc == 0)
        fprintf(out, "end %" PRIu64 "\n", nops);
    tbbt_trace_rec_fini(&rec);
    g_string_free(s, TRUE);
    return rc;
}

int tbbt_trace_dump(const char *trace_path, FILE *out)
{
    int err;
    struct tbbt_trace_reader *r = tbbt_trace_reader_open(trace_path, &err);

    if (!r)
        return err;
    err = tbbt_trace_dump_reader(r, out);
    tbbt_trace_reader_close(r);
    return err;
}
