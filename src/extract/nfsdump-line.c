/* SPDX-License-Identifier: MIT */
/*
 * One nfsdump message line, tokenized, into the scratch line struct nd_line
 * (the nfsdump text-trace reader's line parser, shared through
 * nfsdump-int.h): the header (time, addresses, transport, direction and
 * version, xid, procedure), the reply's status, then each key and value in
 * turn by nfsdump-fields.c's mapping, and at the end the attribute sets put
 * in the record fields by the reply layout.  A malformed line is ND_BAD and
 * leaves nothing behind; a line of a program or version tbbt does not replay
 * is ND_OTHER.  The grammar is in docs/nfsdump-format.md; the procedure names
 * and status names come from the protocol catalogue (proto/proto.h).
 */
#include <stddef.h>
#include <string.h>

#include <glib.h>

#include "extract/nfsdump-int.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"

#define MOUNT_BASE 0x64             /* nfsdump numbers MOUNT procedure n as 100 + n */

/* ---- the line header ---------------------------------------------------------- */

/* The procedure a name stands for (-1 if none); quick when it is proc's own name. */
static int proc_by_name(int prog, uint32_t proc, const struct tok *t)
{
    const char *own = tbbt_proc_name(prog, (int)proc);
    char nm[16];

    if (own && t->len == strlen(own) && memcmp(t->p, own, t->len) == 0)
        return (int)proc;
    if (t->quoted || t->len >= sizeof(nm))
        return -1;
    memcpy(nm, t->p, t->len);
    nm[t->len] = '\0';
    if (prog == TBBT_PROG_NFS3 && strcmp(nm, "readdirp") == 0)
        return NFSPROC3_READDIRPLUS;
    if (prog == TBBT_PROG_NFS2 && (strcmp(nm, "writecach") == 0 || strcmp(nm, "writecac") == 0))
        return NFSPROC_WRITECACHE;
    return tbbt_proc_by_name(prog, nm);
}

/* Program and procedure from the version digit, the number and the name. */
static int resolve_proc(struct nd_line *L, int vers, uint32_t num, const struct tok *name)
{
    int byname;

    if (num >= MOUNT_BASE && num < MOUNT_BASE + (uint32_t)tbbt_prog_nprocs(TBBT_PROG_MNT3)) {
        L->prog = vers == 3 ? TBBT_PROG_MNT3 : TBBT_PROG_MNT1;
        L->proc = num - MOUNT_BASE;
    } else if (vers == 1) {
        return ND_OTHER;            /* NFS has no version 1: not ours */
    } else {
        L->prog = vers == 3 ? TBBT_PROG_NFS3 : TBBT_PROG_NFS2;
        L->proc = num;
    }
    L->v2 = vers != 3;
    L->known = L->proc < (uint32_t)tbbt_prog_nprocs(L->prog);
    byname = L->known ? proc_by_name(L->prog, L->proc, name) : -1;
    return byname >= 0 && (uint32_t)byname != L->proc ? ND_BAD : ND_OK;
}

/* time src dst T|U C3|R3|C2|R2 xid proc name */
static int parse_header(struct nd_state *s, struct nd_line *L)
{
    const struct tok *t = s->toks;
    uint32_t proc;

    if (s->ntok < 5 || !tbbt__nd_parse_time(&t[0], false, &L->ts_ns, NULL) ||
        !tbbt__nd_parse_addr(&t[1], &L->src, &L->sport) ||
        !tbbt__nd_parse_addr(&t[2], &L->dst, &L->dport))
        return ND_BAD;
    if (t[3].len != 1 || (t[3].p[0] != 'T' && t[3].p[0] != 'U'))
        return ND_BAD;
    L->tcp = t[3].p[0] == 'T';
    if (t[4].len == 3 && (t[4].p[0] == 'C' || t[4].p[0] == 'R') && t[4].p[1] == 'U')
        return ND_OTHER;            /* nfsdump's "CU<vers>": a version it could not print */
    if (t[4].len != 2 || (t[4].p[0] != 'C' && t[4].p[0] != 'R') || t[4].p[1] < '1' ||
        t[4].p[1] > '3')
        return ND_BAD;
    L->call = t[4].p[0] == 'C';
    if (s->ntok < 8 || !tbbt__nd_hex_u32(&t[5], &L->xid) || !tbbt__nd_hex_u32(&t[6], &proc))
        return ND_BAD;
    return resolve_proc(L, t[4].p[1] - '0', proc, &t[7]);
}

/* Procedures whose results start with a status (nfsdump prints "OK" or the hex value). */
static bool has_status(int prog, uint32_t proc)
{
    const struct tbbt_proc_desc *d = tbbt_proc_desc(prog, (int)proc);

    return d && (d->flags & TBBT_PROTO_FL_STATUS);
}

static bool status_value(int prog, const struct tok *t, int32_t *st)
{
    char nm[24];
    uint32_t v;

    if (tok_is(t, "OK")) {
        *st = 0;
        return true;
    }
    if (tbbt__nd_hex_u32(t, &v)) {
        *st = (int32_t)v;
        /* NFSv3 and MOUNT v3 statuses not in RFC 1813's lists are malformed, as decoded */
        return (prog != TBBT_PROG_NFS3 && prog != TBBT_PROG_MNT3) ||
               tbbt_proto_status_name(prog, (int)v) != NULL;
    }
    if (t->quoted || t->len >= sizeof(nm))
        return false;
    memcpy(nm, t->p, t->len);
    nm[t->len] = '\0';
    return tbbt_status_by_name(prog, nm, st) == 0;
}

static int parse_status(struct nd_state *s, struct nd_line *L, uint32_t *i)
{
    const struct tok *t = *i < s->ntok ? &s->toks[*i] : NULL;

    if (!has_status(L->prog, L->proc)) {
        if (t && tok_is(t, "OK"))
            (*i)++;
        return ND_OK;
    }
    if (!t)
        return L->cut ? ND_OK : ND_BAD;
    if (!status_value(L->prog, t, &L->status))
        return ND_BAD;
    L->has_status = true;
    L->ok = L->status == 0;
    (*i)++;
    return ND_OK;
}

/* ---- one line ----------------------------------------------------------------- */

/* A quoted string where a key belongs: MOUNT's bare path ("mnt \"/export\""), else unknown. */
static int bare_string(struct nd_state *s, struct nd_line *L, uint32_t i)
{
    if (L->call && (L->allowed & B(TBBT_F_DIRPATH)) && !TBBT_HAS(&L->r, TBBT_F_DIRPATH)) {
        if (!tbbt__nd_parse_str(s, &s->toks[i], TBBT_PATH_MAX, &L->dirpath))
            return -1;
        TBBT_SET(&L->r, TBBT_F_DIRPATH);
        return 1;
    }
    tbbt__nd_count_unknown(s, &s->toks[i]);
    return 1;
}

/* nfsdump's debugging fields and markers at i: tokens used, or 0. */
static int marker(struct nd_state *s, struct nd_line *L, uint32_t i)
{
    const struct tok *t = &s->toks[i], *nx = i + 1 < s->ntok ? t + 1 : NULL;

    if (!tbbt__nd_is_marker(t, nx))
        return 0;
    if (nx && tok_is(nx, "="))
        return i + 2 < s->ntok ? 3 : 2;
    if (tok_is(t, "SHORT") || tok_is(t, "+|+") || tok_is(t, "+/+") || tok_is(t, "..."))
        L->short_ = true;
    return 1;
}

/* One item at token i: tokens used, or -1 for a malformed value. */
static int pair(struct nd_state *s, struct nd_line *L, uint32_t i)
{
    const struct tok *t = &s->toks[i];
    const struct tok *v = i + 1 < s->ntok ? t + 1 : NULL;
    int32_t idx;
    int n, k;

    if ((n = marker(s, L, i)) > 0)
        return n;
    if (t->quoted)
        return bare_string(s, L, i);
    if (!L->call && (L->allowed & B(TBBT_F_INFO)) && (n = tbbt__nd_info_pair(L, t, v)) != 0)
        return n;
    k = tbbt__nd_lookup_key(t, &idx);
    if (k == K_NONE)
        return tbbt__nd_unknown_key(s, i);
    n = L->call ? tbbt__nd_call_pair(s, L, k, idx, i) : tbbt__nd_reply_pair(s, L, k, idx, i);
    return n == 0 ? tbbt__nd_unknown_key(s, i) : n;
}

/*
 * The call carries a sattr even when no key of the line gives one (the decoder
 * sets the field even when it is empty): the procedures whose call has a sattr
 * in the protocol catalogue, except NFSv3 CREATE and MKNOD, whose union arm
 * decides (CREATE not EXCLUSIVE; MKNOD of a device, socket or fifo).
 */
static bool always_sattr(const struct nd_line *L)
{
    const struct tbbt_proc_desc *d = tbbt_proc_desc(L->prog, (int)L->proc);
    const struct tbbt_trace_rec *r = &L->r;

    if (!d || !(d->call & B(TBBT_F_SATTR)))
        return false;
    if (is_proc(L, TBBT_PROG_NFS3, NFSPROC3_CREATE))
        return TBBT_HAS(r, TBBT_F_CREATEMODE) && r->createmode != EXCLUSIVE;
    if (is_proc(L, TBBT_PROG_NFS3, NFSPROC3_MKNOD))
        return TBBT_HAS(r, TBBT_F_FTYPE) && r->ftype != NF3REG && r->ftype != NF3DIR &&
               r->ftype != NF3LNK;
    return true;
}

#define ROLE(a, fa, p, fp)                                                                         \
    {fa, fp, offsetof(struct tbbt_trace_rec, a), offsetof(struct tbbt_trace_rec, p)}

/* Where the attribute set and the pre-operation set of each role go in the record. */
static const struct {
    uint8_t attr_field, pre_field;
    uint16_t attr_off, pre_off;
} role_fields[] = {
    [R_OBJ] = ROLE(obj_attr, TBBT_F_OBJ_ATTR, obj_pre, TBBT_F_OBJ_PRE),
    [R_DIR] = ROLE(dir_attr, TBBT_F_DIR_ATTR, dir_pre, TBBT_F_DIR_PRE),
    [R_DIR2] = ROLE(dir2_attr, TBBT_F_DIR2_ATTR, dir2_pre, TBBT_F_DIR2_PRE),
};

/* Attribute set f as the record's attributes of role (R_OBJ, R_DIR or R_DIR2). */
static void put_attr(struct nd_line *L, int role, const struct tbbt_fattr *f)
{
    memcpy((char *)&L->r + role_fields[role].attr_off, f, sizeof(*f));
    TBBT_SET(&L->r, role_fields[role].attr_field);
}

/* Pre-operation set w as the record's wcc data of role (R_OBJ, R_DIR or R_DIR2). */
static void put_pre(struct nd_line *L, int role, const struct tbbt_wcc_pre *w)
{
    memcpy((char *)&L->r + role_fields[role].pre_off, w, sizeof(*w));
    TBBT_SET(&L->r, role_fields[role].pre_field);
}

/* After the last key: sets become fields by the layout, entries are counted. */
static void finish_line(struct nd_state *s, struct nd_line *L)
{
    struct tbbt_trace_rec *r = &L->r;

    if (L->call) {
        if (always_sattr(L) && !L->short_ && !L->cut && TBBT_HAS(r, TBBT_F_FH))
            TBBT_SET(r, TBBT_F_SATTR);
        if (is_proc(L, TBBT_PROG_NFS3, NFSPROC3_CREATE) && TBBT_HAS(r, TBBT_F_CREATEMODE) &&
            r->createmode == EXCLUSIVE)
            r->present &= ~B(TBBT_F_SATTR);
        return;
    }
    for (int i = 0; i < L->nattr; i++) {
        struct tbbt_fattr f = tbbt__nd_fattr_of(&L->attrs[i], L->v2);
        if (i < 2 && L->lo.attr[i] != R_NONE)
            put_attr(L, L->lo.attr[i], &f);
        else
            s->extra_attrs++;
    }
    for (int i = 0; i < L->npre; i++) {
        if (L->lo.pre[i] != R_NONE)
            put_pre(L, L->lo.pre[i], &L->pres[i].w);
        else
            s->extra_attrs++;
    }
    if ((L->allowed & B(TBBT_F_ENTRIES)) && L->in_entries) {
        TBBT_SET(r, TBBT_F_ENTRIES);
        r->res_count = s->ents->len;
        TBBT_SET(r, TBBT_F_RES_COUNT);
    }
}

void tbbt__nd_reset_line(struct nd_state *s, struct nd_line *L)
{
    memset(L, 0, sizeof(*L));
    g_byte_array_set_size(s->sbuf, 0);
    g_byte_array_set_size(s->fhbytes, 0);
    g_array_set_size(s->fhs, 0);
    g_array_set_size(s->ents, 0);
}

/* Parses the tokens of a message line into s->line: ND_OK, ND_BAD or ND_OTHER. */
int tbbt__nd_parse_line(struct nd_state *s, struct nd_line *L, bool unterminated)
{
    uint32_t i = 8;
    int rc;

    if (unterminated && !tbbt__nd_has_trailer(s)) {
        L->cut = true;              /* the input ended inside this line */
        if (!L->last_complete)
            s->ntok--;              /* its last token may be cut too */
    }
    for (uint32_t j = 0; j < s->ntok; j++)
        if (s->toks[j].open)
            return ND_BAD;
    if ((rc = parse_header(s, L)) != ND_OK || !L->known)
        return rc;
    L->allowed = tbbt__nd_allowed_fields(L);
    if (!L->call && (rc = parse_status(s, L, &i)) != ND_OK)
        return rc;
    if (!L->call)
        L->lo = tbbt__nd_reply_layout(L->prog, L->proc, L->ok);
    while (i < s->ntok) {
        int used = pair(s, L, i);
        if (used < 0)
            return ND_BAD;
        i += (uint32_t)used;
    }
    finish_line(s, L);
    return ND_OK;
}
