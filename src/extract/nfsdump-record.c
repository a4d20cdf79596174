/* SPDX-License-Identifier: MIT */
/*
 * A parsed nfsdump line into the conversion core (conv-int.h), and the loop
 * step of one input line (the nfsdump text-trace reader's record building,
 * shared through nfsdump-int.h): a call line opens a record, a reply line
 * completes the one of its xid, each filling the same record fields the
 * capture decoders fill for the same procedure (decode-nfs3.c,
 * decode-nfs2.c, decode-mount.c); handles are interned and strings copied
 * only now, once the whole line parsed.  Counts comment, malformed, other,
 * short and cut lines.  The line's time goes through nfsdump-clock.c.
 */
#include <stddef.h>
#include <string.h>

#include <glib.h>

#include "extract/nfsdump-int.h"

/* ---- into the core ------------------------------------------------------------ */

static uint32_t intern(struct nd_state *s, uint32_t idx)
{
    const struct nd_str *h = &g_array_index(s->fhs, struct nd_str, idx);
    return tbbt_fhtab_intern(tbbt__conv_fhtab(s->conv), s->fhbytes->data + h->off, h->len);
}

static void set_str(struct nd_state *s, struct tbbt_trace_rec *rec, struct tbbt_str *dst,
                    const struct nd_str *src)
{
    tbbt_trace_rec_set_str(rec, dst, s->sbuf->data + src->off, src->len);
}

#define PLAIN(f, m) {f, offsetof(struct tbbt_trace_rec, m), sizeof(((struct tbbt_trace_rec *)0)->m)}

/* Record fields copied as they are from the scratch record. */
static const struct {
    uint8_t field;
    uint16_t off, size;
} plain_fields[] = {
    PLAIN(TBBT_F_OFFSET, offset), PLAIN(TBBT_F_COUNT, count), PLAIN(TBBT_F_STABLE, stable),
    PLAIN(TBBT_F_SATTR, sattr), PLAIN(TBBT_F_GUARD, guard_ns), PLAIN(TBBT_F_COOKIE, cookie),
    PLAIN(TBBT_F_COOKIEVERF, cookieverf), PLAIN(TBBT_F_DIRCOUNT, dircount),
    PLAIN(TBBT_F_MAXCOUNT, maxcount), PLAIN(TBBT_F_ACCESS, access),
    PLAIN(TBBT_F_CREATEMODE, createmode), PLAIN(TBBT_F_CREATEVERF, createverf),
    PLAIN(TBBT_F_FTYPE, ftype), PLAIN(TBBT_F_RDEV, rdev), PLAIN(TBBT_F_OBJ_ATTR, obj_attr),
    PLAIN(TBBT_F_OBJ_PRE, obj_pre), PLAIN(TBBT_F_DIR_ATTR, dir_attr),
    PLAIN(TBBT_F_DIR_PRE, dir_pre), PLAIN(TBBT_F_DIR2_ATTR, dir2_attr),
    PLAIN(TBBT_F_DIR2_PRE, dir2_pre), PLAIN(TBBT_F_RES_COUNT, res_count),
    PLAIN(TBBT_F_EOF, eof), PLAIN(TBBT_F_COMMITTED, committed),
    PLAIN(TBBT_F_WRITEVERF, writeverf), PLAIN(TBBT_F_ACCESS_RES, access_res),
};

static void merge_entries(struct nd_state *s, const struct nd_line *L, struct tbbt_trace_rec *rec)
{
    for (guint i = 0; i < s->ents->len; i++) {
        const struct nd_entry *e = &g_array_index(s->ents, struct nd_entry, i);
        struct tbbt_str name;
        struct tbbt_entry *te;

        set_str(s, rec, &name, &e->name);
        te = tbbt_trace_rec_add_entry(rec);
        te->fileid = e->fileid;
        te->cookie = e->cookie;
        te->name = name;
        if (e->seen & E_FH) {
            te->fh = intern(s, e->fh);
            te->flags |= TBBT_ENT_FH;
        }
        if (e->attr.seen) {
            te->attr = tbbt__nd_fattr_of(&e->attr, L->v2);
            te->flags |= TBBT_ENT_ATTR;
        }
    }
}

/* Copies the line's fields into the core's record (interning handles now). */
static void merge(struct nd_state *s, const struct nd_line *L, struct tbbt_trace_rec *rec)
{
    const struct tbbt_trace_rec *x = &L->r;
    uint64_t p = x->present;

    if (p & B(TBBT_F_FH))
        rec->fh = intern(s, x->fh);
    if (p & B(TBBT_F_FH2))
        rec->fh2 = intern(s, x->fh2);
    if (p & B(TBBT_F_NEW_FH))
        rec->new_fh = intern(s, x->new_fh);
    if (p & B(TBBT_F_NAME))
        set_str(s, rec, &rec->name, &L->name);
    if (p & B(TBBT_F_NAME2))
        set_str(s, rec, &rec->name2, &L->name2);
    if (p & B(TBBT_F_TARGET))
        set_str(s, rec, &rec->target, &L->target);
    if (p & B(TBBT_F_DIRPATH))
        set_str(s, rec, &rec->dirpath, &L->dirpath);
    for (size_t i = 0; i < G_N_ELEMENTS(plain_fields); i++)
        if (p & B(plain_fields[i].field))
            memcpy((char *)rec + plain_fields[i].off, (const char *)x + plain_fields[i].off,
                   plain_fields[i].size);
    if (p & B(TBBT_F_INFO)) {
        memcpy(rec->info, x->info, sizeof(rec->info));
        rec->n_info = x->n_info;
    }
    if (p & B(TBBT_F_ENTRIES))
        merge_entries(s, L, rec);
    rec->present |= p;
}

static void put_be32(uint8_t *d, uint32_t v)
{
    d[0] = (uint8_t)(v >> 24);
    d[1] = (uint8_t)(v >> 16);
    d[2] = (uint8_t)(v >> 8);
    d[3] = (uint8_t)v;
}

/* Hands a parsed line to the core: a call opens a record, a reply completes one. */
static void emit(struct nd_state *s, const struct nd_line *L)
{
    struct tbbt__conv_msg m;
    struct tbbt_trace_rec *rec;

    memset(&m, 0, sizeof(m));
    m.key.af = 4;
    m.key.xid = L->xid;
    put_be32(m.key.caddr, L->call ? L->src : L->dst);
    put_be32(m.key.saddr, L->call ? L->dst : L->src);
    m.key.cport = L->call ? L->sport : L->dport;
    m.key.sport = L->call ? L->dport : L->sport;
    m.ts_ns = tbbt__nd_line_time(s, L->ts_ns, &m.pair_ns);
    m.tcp = L->tcp;
    m.truncated = L->short_ || L->cut;
    if (L->call) {
        rec = tbbt__conv_call(s->conv, &m, L->prog, L->proc, L->uid, L->gid);
        if (rec) {
            merge(s, L, rec);
            rec->flags |= m.truncated ? TBBT_RF_CALL_TRUNC : 0;
        }
    } else {
        rec = tbbt__conv_reply(s->conv, &m, TBBT_RPC_SUCCESS);
        if (rec && L->known && (rec->prog != L->prog || rec->proc != L->proc)) {
            s->mismatches++;
            rec->flags |= TBBT_RF_REPLY_BAD;
        } else if (rec && L->known) {
            merge(s, L, rec);
            rec->flags |= m.truncated ? TBBT_RF_REPLY_TRUNC : 0;
            if (L->has_status) {
                rec->status = L->status;
                rec->flags |= TBBT_RF_STATUS;
            }
        }
    }
    tbbt__conv_drain(s->conv);
}

/* A malformed line of the current file: skipped, counted. */
void tbbt__nd_bad_line(struct nd_state *s)
{
    s->malformed++;
    if (s->file_bad++ == 0)
        s->first_bad = s->file_lines;
}

/* One input line (without its newline).  Returns true if the input ended inside it. */
bool tbbt__nd_one_line(struct nd_state *s, const char *p, size_t len, bool unterminated)
{
    struct nd_line *L = &s->line;
    int rc;

    s->lines++;
    s->file_lines++;
    tbbt__nd_reset_line(s, L);
    L->last_complete = len > 0 && is_blank(p[len - 1]);
    while (len > 0 && is_blank(p[len - 1]))
        len--;
    while (len > 0 && is_blank(*p))
        p++, len--;
    if (len == 0 || *p == '#' || (len >= 2 && p[0] == 'X' && p[1] == 'X')) {
        s->comments++;              /* blank, comment, or nfsdump's "XX" diagnostics */
        return false;
    }
    s->packets++;
    tbbt__nd_tokenize(s, p, len);
    rc = tbbt__nd_parse_line(s, L, unterminated);
    if (rc == ND_BAD)
        tbbt__nd_bad_line(s);
    else if (rc == ND_OTHER)
        s->other++;
    else
        emit(s, L);
    if (L->short_)
        s->short_lines++;
    if (L->cut)
        s->cut_lines++;
    return L->cut;
}
