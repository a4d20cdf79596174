/* SPDX-License-Identifier: MIT */
/*
 * What the keys of an nfsdump line mean for its procedure (the nfsdump
 * text-trace reader's field mapping, shared through nfsdump-int.h): which
 * record field a call key sets, the reply's attribute sets and pre-operation
 * (wcc) sets and whose they are (the reply layout), readdir entries, and the
 * fsstat/fsinfo/pathconf/statfs values by name.  Which fields a procedure
 * carries at all comes from the protocol catalogue (tbbt_proc_desc(),
 * proto/catalogue.def); the layouts and key variants are nfsdump's printers'
 * (nfs_v3.c, nfs_v2.c; RFC 1813 and RFC 1094 for the fields), as
 * docs/nfsdump-format.md gives them.  Values are parsed with nfsdump-lex.c;
 * the line as a whole is nfsdump-line.c's.
 */
#include <string.h>

#include <glib.h>

#include "extract/nfsdump-int.h"
#include "proto/nfs2.h"
#include "proto/nfs3.h"
#include "proto/proto.h"

#define F_IGNORE TBBT_F_NFIELDS     /* a known key whose value no record field keeps */

/* Attribute keys (fattr3 and v2 fattr) and their bit in nd_attr.seen. */
static const uint32_t attr_bit[K_NKEYS] = {
    [K_FTYPE] = 1u << 0,  [K_MODE] = 1u << 1,   [K_NLINK] = 1u << 2,   [K_UID] = 1u << 3,
    [K_GID] = 1u << 4,    [K_SIZE] = 1u << 5,   [K_USED] = 1u << 6,    [K_RDEV] = 1u << 7,
    [K_RDEV2] = 1u << 8,  [K_FSID] = 1u << 9,   [K_FILEID] = 1u << 10, [K_ATIME] = 1u << 11,
    [K_MTIME] = 1u << 12, [K_CTIME] = 1u << 13, [K_BLKSIZE] = 1u << 14, [K_BLOCKS] = 1u << 15,
};

/* info[] value names per procedure, in RFC order (decode-nfs3.c, decode-nfs2.c). */
static const char *const info_statfs[] = {"tsize", "bsize", "blocks", "bfree", "bavail", NULL};
static const char *const info_fsstat[] = {"tbytes", "fbytes", "abytes", "tfiles", "ffiles",
                                          "afiles", "invarsec", NULL};
static const char *const info_fsinfo[] = {"rtmax", "rtpref", "rtmult", "wtmax", "wtpref",
                                          "wtmult", "dtpref", "maxfilesize", "time_delta",
                                          "properties", NULL};
static const char *const info_pathconf[] = {"linkmax", "name_max", "no_trunc",
                                            "chown_restricted", "case_insensitive",
                                            "case_preserving", NULL};

/* ---- reply layout and allowed fields ----------------------------------------- */

struct layout tbbt__nd_reply_layout(int prog, uint32_t proc, bool ok)
{
    struct layout lo = {{R_NONE, R_NONE}, {R_NONE, R_NONE}};

    if (prog == TBBT_PROG_NFS2) {
        if (proc == NFSPROC_GETATTR || proc == NFSPROC_SETATTR || proc == NFSPROC_READ ||
            proc == NFSPROC_WRITE || proc == NFSPROC_LOOKUP || proc == NFSPROC_CREATE ||
            proc == NFSPROC_MKDIR)
            lo.attr[0] = R_OBJ;
        return lo;
    }
    if (prog != TBBT_PROG_NFS3 || proc == NFSPROC3_NULL)
        return lo;
    lo.attr[0] = R_OBJ;
    switch (proc) {
    case NFSPROC3_SETATTR: case NFSPROC3_WRITE: case NFSPROC3_COMMIT:
        lo.pre[0] = R_OBJ;
        break;
    case NFSPROC3_LOOKUP:
        lo.attr[0] = ok ? R_OBJ : R_DIR;
        lo.attr[1] = ok ? R_DIR : R_NONE;
        break;
    case NFSPROC3_CREATE: case NFSPROC3_MKDIR: case NFSPROC3_SYMLINK: case NFSPROC3_MKNOD:
        lo.attr[0] = ok ? R_OBJ : R_DIR;
        lo.attr[1] = ok ? R_DIR : R_NONE;
        lo.pre[0] = R_DIR;
        break;
    case NFSPROC3_REMOVE: case NFSPROC3_RMDIR:
        lo.attr[0] = lo.pre[0] = R_DIR;
        break;
    case NFSPROC3_RENAME:
        lo.attr[0] = lo.pre[0] = R_DIR;
        lo.attr[1] = lo.pre[1] = R_DIR2;
        break;
    case NFSPROC3_LINK:
        lo.attr[1] = lo.pre[0] = R_DIR2;
        break;
    case NFSPROC3_READDIR: case NFSPROC3_READDIRPLUS:
        lo.attr[0] = R_DIR;
        break;
    default:
        break;
    }
    return lo;
}

uint64_t tbbt__nd_allowed_fields(const struct nd_line *L)
{
    const struct tbbt_proc_desc *d = tbbt_proc_desc(L->prog, (int)L->proc);

    if (!d)
        return 0;
    return L->call ? d->call : d->reply & ~ATTR_FIELDS;
}

/* ---- call arguments ----------------------------------------------------------- */

static int call_field(const struct nd_line *L, int k, const struct tok *v)
{
    switch (k) {
    case K_FH: return TBBT_F_FH;
    case K_FH2: return TBBT_F_FH2;
    case K_NAME:
        return is_proc(L, TBBT_PROG_NFS3, NFSPROC3_LINK) || is_proc(L, TBBT_PROG_NFS2, NFSPROC_LINK)
                   ? TBBT_F_NAME2 : TBBT_F_NAME;
    case K_NAME2: return TBBT_F_NAME2;
    case K_FN2: return is_proc(L, TBBT_PROG_NFS2, NFSPROC_SYMLINK) ? TBBT_F_TARGET : TBBT_F_NAME2;
    case K_SDATA: return TBBT_F_TARGET;
    case K_DIRPATH: return TBBT_F_DIRPATH;
    case K_FROM: return v && v->quoted ? TBBT_F_NAME : TBBT_F_FH;
    case K_TO: return v && v->quoted ? TBBT_F_NAME2 : TBBT_F_FH2;
    case K_OFF: return TBBT_F_OFFSET;
    case K_COUNT:
        return is_proc(L, TBBT_PROG_NFS3, NFSPROC3_READDIRPLUS) ? TBBT_F_DIRCOUNT : TBBT_F_COUNT;
    case K_TCOUNT: return is_proc(L, TBBT_PROG_NFS2, NFSPROC_WRITE) ? TBBT_F_COUNT : F_IGNORE;
    case K_BEGOFF: return F_IGNORE;
    case K_DIRCOUNT: return TBBT_F_DIRCOUNT;
    case K_MAXCOUNT: return TBBT_F_MAXCOUNT;
    case K_STABLE: return TBBT_F_STABLE;
    case K_HOW: return TBBT_F_CREATEMODE;
    case K_VERF:
        return is_proc(L, TBBT_PROG_NFS3, NFSPROC3_CREATE) ? TBBT_F_CREATEVERF : TBBT_F_COOKIEVERF;
    case K_CREATEVERF: return TBBT_F_CREATEVERF;
    case K_COOKIEVERF: return TBBT_F_COOKIEVERF;
    case K_MODE: case K_UID: case K_GID: case K_SIZE: case K_ATIME: case K_MTIME:
        return TBBT_F_SATTR;
    case K_CTIME: return TBBT_F_GUARD;
    case K_ACC: return TBBT_F_ACCESS;
    case K_COOKIE: return TBBT_F_COOKIE;
    case K_FTYPE: return TBBT_F_FTYPE;
    case K_RDEV: case K_RDEV2: return TBBT_F_RDEV;
    default: return -1;
    }
}

/* atime/mtime of a sattr: "SERVER", or a time (v2: all ones = not set, usec 1000000 = server). */
static int sattr_time(struct nd_line *L, int k, const struct tok *v)
{
    struct tbbt_sattr *sa = &L->r.sattr;
    uint32_t client = k == K_ATIME ? TBBT_SA_ATIME : TBBT_SA_MTIME;
    uint32_t server = k == K_ATIME ? TBBT_SA_ATIME_SERVER : TBBT_SA_MTIME_SERVER;
    uint64_t ns;
    bool srv;

    if (tok_is(v, "SERVER")) {
        sa->mask |= server;
        return 1;
    }
    if (!tbbt__nd_parse_time(v, L->v2, &ns, &srv))
        return -1;
    if (L->v2 && ns / 1000000000u == UINT32_MAX)
        return 1;
    if (srv) {
        sa->mask |= server;
        return 1;
    }
    sa->mask |= client;
    *(k == K_ATIME ? &sa->atime_ns : &sa->mtime_ns) = ns;
    return 1;
}

static int sattr_key(struct nd_line *L, int k, const struct tok *v)
{
    struct tbbt_sattr *sa = &L->r.sattr;
    uint64_t x;

    if (k == K_ATIME || k == K_MTIME)
        return sattr_time(L, k, v);
    if (!tbbt__nd_hex_u64(v, &x) || (k != K_SIZE && x > UINT32_MAX))
        return -1;
    if (L->v2 && x == UINT32_MAX)
        return 1;                   /* v2 sattr: all ones = not set */
    switch (k) {
    case K_MODE: sa->mode = (uint32_t)x; sa->mask |= TBBT_SA_MODE; break;
    case K_UID: sa->uid = (uint32_t)x; sa->mask |= TBBT_SA_UID; break;
    case K_GID: sa->gid = (uint32_t)x; sa->mask |= TBBT_SA_GID; break;
    default: sa->size = x; sa->mask |= TBBT_SA_SIZE; break;
    }
    return 1;
}

/* ftype of MKNOD: a number or a type name. */
static bool parse_ftype(const struct tok *t, uint32_t *v)
{
    static const char *const names[] = {"NON", "REG", "DIR", "BLK", "CHR", "LNK", "SOCK", "FIFO"};

    for (uint32_t i = 1; i < G_N_ELEMENTS(names); i++) {
        if (tok_is_n(t, names[i], strlen(names[i]))) {
            *v = i;
            return true;
        }
    }
    return tbbt__nd_hex_u32(t, v) && *v >= NF3REG && *v <= NF3FIFO;   /* as the decoder */
}

/* ACCESS bits: hex, or one of early traces' letters that are not hex digits. */
static bool parse_access(const struct tok *t, uint32_t *v)
{
    if (t->len == 1 && !t->quoted) {
        switch (t->p[0]) {
        case 'R': *v = 0x01; return true;
        case 'L': *v = 0x02; return true;
        case 'M': *v = 0x04; return true;
        case 'X': *v = 0x20; return true;
        default: break;
        }
    }
    return tbbt__nd_hex_u32(t, v);
}

/* Stores a call value into the scratch record: 1 stored, 0 nothing to keep, -1 malformed. */
static int store_call(struct nd_state *s, struct nd_line *L, int k, int f, const struct tok *v)
{
    struct tbbt_trace_rec *r = &L->r;
    uint32_t u;
    bool ok = true;

    switch (f) {
    case TBBT_F_FH: ok = tbbt__nd_parse_fh(s, v, &r->fh); break;
    case TBBT_F_FH2: ok = tbbt__nd_parse_fh(s, v, &r->fh2); break;
    case TBBT_F_NAME: ok = tbbt__nd_parse_str(s, v, TBBT_NAME_MAX, &L->name); break;
    case TBBT_F_NAME2: ok = tbbt__nd_parse_str(s, v, TBBT_NAME_MAX, &L->name2); break;
    case TBBT_F_TARGET: ok = tbbt__nd_parse_str(s, v, TBBT_PATH_MAX, &L->target); break;
    case TBBT_F_DIRPATH: ok = tbbt__nd_parse_str(s, v, TBBT_PATH_MAX, &L->dirpath); break;
    case TBBT_F_OFFSET: ok = tbbt__nd_hex_u64(v, &r->offset); break;
    case TBBT_F_COUNT: ok = tbbt__nd_hex_u32(v, &r->count); break;
    case TBBT_F_DIRCOUNT: ok = tbbt__nd_hex_u32(v, &r->dircount); break;
    case TBBT_F_MAXCOUNT: ok = tbbt__nd_hex_u32(v, &r->maxcount); break;
    case TBBT_F_STABLE:
        if (tok_is(v, "?"))
            return 0;               /* nfsdump's mark of a value it did not know */
        ok = tbbt__nd_parse_sym(v, "UDF", &r->stable) && r->stable <= FILE_SYNC;
        break;
    case TBBT_F_CREATEMODE:
        ok = tbbt__nd_parse_sym(v, "UGX", &r->createmode) && r->createmode <= EXCLUSIVE;
        break;
    case TBBT_F_CREATEVERF: ok = tbbt__nd_hex_u64(v, &r->createverf); break;
    case TBBT_F_COOKIEVERF: ok = tbbt__nd_hex_u64(v, &r->cookieverf); break;
    case TBBT_F_COOKIE: ok = tbbt__nd_hex_u64(v, &r->cookie); break;
    case TBBT_F_GUARD: ok = tbbt__nd_parse_time(v, L->v2, &r->guard_ns, NULL); break;
    case TBBT_F_ACCESS: ok = parse_access(v, &r->access); break;
    case TBBT_F_FTYPE: ok = parse_ftype(v, &r->ftype); break;
    case TBBT_F_SATTR:
        if (sattr_key(L, k, v) < 0)
            return -1;
        break;
    case TBBT_F_RDEV:               /* rdev = major (specdata1), rdev2 = minor */
        if (!tbbt__nd_hex_u32(v, &u))
            return -1;
        r->rdev = k == K_RDEV ? (r->rdev & 0xffffffffu) | (uint64_t)u << 32
                              : (r->rdev & ~(uint64_t)0xffffffffu) | u;
        break;
    default:
        return 0;
    }
    if (!ok)
        return -1;
    TBBT_SET(r, f);
    return 1;
}

int tbbt__nd_call_pair(struct nd_state *s, struct nd_line *L, int k, int32_t idx, uint32_t i)
{
    const struct tok *v = i + 1 < s->ntok ? &s->toks[i + 1] : NULL;
    int f;

    if (idx >= 0)
        return 0;
    if (k == K_EUID || k == K_EGID) {
        if (!v)
            return L->cut ? 1 : -1;
        return tbbt__nd_hex_u32(v, k == K_EUID ? &L->uid : &L->gid) ? 2 : -1;
    }
    f = call_field(L, k, v);
    if (f == F_IGNORE)
        return v ? 2 : 1;
    if (f < 0 || !(L->allowed & B(f)))
        return 0;
    if (!v)
        return L->cut ? 1 : -1;
    return store_call(s, L, k, f, v) < 0 ? -1 : 2;
}

/* ---- reply results ------------------------------------------------------------ */

/* One attribute value into a set: 1, or -1 if malformed. */
static int attr_store(struct nd_attr *a, int k, const struct tok *v, bool v2)
{
    uint64_t x;
    bool ok;

    if (k == K_ATIME || k == K_MTIME || k == K_CTIME) {
        ok = tbbt__nd_parse_time(v, v2, k == K_ATIME   ? &a->a.atime_ns
                               : k == K_MTIME ? &a->a.mtime_ns
                                              : &a->a.ctime_ns, NULL);
    } else {
        ok = tbbt__nd_hex_u64(v, &x);
        if (ok && k != K_SIZE && k != K_USED && k != K_FSID && k != K_FILEID)
            ok = x <= UINT32_MAX;
        switch (ok ? k : K_NONE) {
        case K_FTYPE:           /* the decoders' range: NF3REG..NF3FIFO, v2 up to NFFIFO */
            ok = v2 ? x <= 8 : x >= NF3REG && x <= NF3FIFO;
            a->a.type = (uint32_t)x;
            break;
        case K_MODE: a->a.mode = (uint32_t)x; break;
        case K_NLINK: a->a.nlink = (uint32_t)x; break;
        case K_UID: a->a.uid = (uint32_t)x; break;
        case K_GID: a->a.gid = (uint32_t)x; break;
        case K_SIZE: a->a.size = x; break;
        case K_USED: a->a.used = x; break;
        case K_RDEV: a->rdev1 = (uint32_t)x; break;
        case K_RDEV2: a->rdev2 = (uint32_t)x; break;
        case K_FSID: a->a.fsid = x; break;
        case K_FILEID: a->a.fileid = x; break;
        case K_BLKSIZE: a->blksize = (uint32_t)x; break;
        case K_BLOCKS: a->blocks = (uint32_t)x; break;
        default: break;
        }
    }
    if (!ok)
        return -1;
    a->seen |= attr_bit[k];
    return 1;
}

/* The fattr of a set: v3 rdev = rdev << 32 | rdev2, v2 used = blocks * blksize. */
struct tbbt_fattr tbbt__nd_fattr_of(const struct nd_attr *a, bool v2)
{
    struct tbbt_fattr f = a->a;

    f.rdev = v2 ? a->rdev1 : (uint64_t)a->rdev1 << 32 | a->rdev2;
    if (a->seen & attr_bit[K_BLOCKS])
        f.used = (uint64_t)a->blocks * a->blksize;
    return f;
}

/* An attribute key outside readdir entries: the current set, or a new one once a key repeats. */
static int attr_pair(struct nd_state *s, struct nd_line *L, int k, const struct tok *v)
{
    int cur = L->nattr - 1;

    if (cur < 0 || (L->attrs[cur].seen & attr_bit[k])) {
        if (L->nattr == N_ATTR)
            s->extra_attrs++;       /* more sets than any reply has: the last is overwritten */
        else
            L->nattr++;
        cur = L->nattr - 1;
        memset(&L->attrs[cur], 0, sizeof(L->attrs[cur]));
    }
    return attr_store(&L->attrs[cur], k, v, L->v2) < 0 ? -1 : 2;
}

static int pre_pair(struct nd_state *s, struct nd_line *L, int k, const struct tok *v)
{
    uint32_t bit = k == K_PRE_SIZE ? 1 : k == K_PRE_MTIME ? 2 : 4;
    struct nd_pre *p;
    bool ok;

    if (L->npre == 0 || (L->pres[L->npre - 1].seen & bit)) {
        if (L->npre == N_PRE)
            s->extra_attrs++;       /* more wcc data than any reply has: the last is overwritten */
        else
            L->npre++;
        memset(&L->pres[L->npre - 1], 0, sizeof(struct nd_pre));
    }
    p = &L->pres[L->npre - 1];
    if (k == K_PRE_SIZE)
        ok = tbbt__nd_hex_u64(v, &p->w.size);
    else
        ok = tbbt__nd_parse_time(v, L->v2, k == K_PRE_MTIME ? &p->w.mtime_ns : &p->w.ctime_ns,
                                 NULL);
    p->seen |= bit;
    return ok ? 2 : -1;
}

/* Key k already holds a value in entry e (so a key without "-N" starts the next entry). */
static bool entry_has(const struct nd_entry *e, int k)
{
    switch (k) {
    case K_NAME: return e->seen & E_NAME;
    case K_COOKIE: return e->seen & E_COOKIE;
    case K_FH: return e->seen & E_FH;
    case K_FILEID:
        return (e->seen & E_FILEID) &&
               (e->attr.seen == 0 || (e->attr.seen & attr_bit[K_FILEID]));
    default: return e->attr.seen & attr_bit[k];
    }
}

/* The entry a key goes to: entry idx (idx == count appends), or the current one. */
static struct nd_entry *get_entry(struct nd_state *s, int32_t idx, int k)
{
    GArray *a = s->ents;
    struct nd_entry *e;

    if (idx >= 0 && (uint32_t)idx < a->len)
        return &g_array_index(a, struct nd_entry, idx);
    if (idx > (int32_t)a->len)
        return NULL;
    if (idx < 0 && a->len > 0 && !entry_has(&g_array_index(a, struct nd_entry, a->len - 1), k))
        return &g_array_index(a, struct nd_entry, a->len - 1);
    g_array_set_size(a, a->len + 1);
    e = &g_array_index(a, struct nd_entry, a->len - 1);
    memset(e, 0, sizeof(*e));
    return e;
}

static int entry_pair(struct nd_state *s, struct nd_line *L, int k, int32_t idx,
                      const struct tok *v)
{
    struct nd_entry *e;
    bool ok = true;

    if (!v)
        return L->cut ? 1 : -1;
    e = get_entry(s, idx, k);
    if (!e)
        return -1;                  /* "name-7" before entry 6 */
    L->in_entries = true;
    if (k == K_FILEID && (e->seen & E_FILEID))
        k = K_NONE;                 /* the second fileid of an entry is its attributes' */
    switch (k) {
    case K_NAME: ok = tbbt__nd_parse_str(s, v, TBBT_NAME_MAX, &e->name); e->seen |= E_NAME; break;
    case K_COOKIE: ok = tbbt__nd_hex_u64(v, &e->cookie); e->seen |= E_COOKIE; break;
    case K_FH: ok = tbbt__nd_parse_fh(s, v, &e->fh); e->seen |= E_FH; break;
    case K_FILEID: ok = tbbt__nd_hex_u64(v, &e->fileid); e->seen |= E_FILEID; break;
    case K_NONE: ok = attr_store(&e->attr, K_FILEID, v, L->v2) > 0; break;
    default: ok = attr_store(&e->attr, k, v, L->v2) > 0; break;
    }
    return ok ? 2 : -1;
}

/* A readdir reply key that belongs to the entries (the directory's own attributes come first). */
static bool is_entry_key(const struct nd_line *L, int k, int32_t idx)
{
    if (!(L->allowed & B(TBBT_F_ENTRIES)) ||
        (k != K_NAME && k != K_COOKIE && k != K_FH && !attr_bit[k]))
        return false;
    if (idx >= 0 || L->in_entries || k == K_NAME || k == K_COOKIE || k == K_FH)
        return true;
    if (k == K_FILEID && L->nattr == 0)
        return true;                /* the directory's attributes start with ftype */
    return attr_bit[k] && L->nattr > 0 && (L->attrs[0].seen & attr_bit[k]);
}

/* The record field a reply key sets, or -1. */
static int reply_field(int k)
{
    switch (k) {
    case K_FH: return TBBT_F_NEW_FH;
    case K_NAME: case K_SDATA: return TBBT_F_TARGET;
    case K_COUNT: return TBBT_F_RES_COUNT;
    case K_EOF: return TBBT_F_EOF;
    case K_STABLE: return TBBT_F_COMMITTED;
    case K_VERF: case K_WRITEVERF: return TBBT_F_WRITEVERF;
    case K_ACC: return TBBT_F_ACCESS_RES;
    default: return -1;
    }
}

static int store_reply(struct nd_state *s, struct nd_line *L, int f, const struct tok *v)
{
    struct tbbt_trace_rec *r = &L->r;
    bool ok;

    switch (f) {
    case TBBT_F_NEW_FH: ok = tbbt__nd_parse_fh(s, v, &r->new_fh); break;
    case TBBT_F_TARGET: ok = tbbt__nd_parse_str(s, v, TBBT_PATH_MAX, &L->target); break;
    case TBBT_F_RES_COUNT: ok = tbbt__nd_hex_u32(v, &r->res_count); break;
    case TBBT_F_EOF: ok = tbbt__nd_hex_u32(v, &r->eof) && r->eof <= 1; break;   /* a bool: 0 or 1 */
    case TBBT_F_COMMITTED:
        if (tok_is(v, "?"))
            return 2;
        ok = tbbt__nd_parse_sym(v, "UDF", &r->committed) && r->committed <= FILE_SYNC;
        break;
    case TBBT_F_WRITEVERF: ok = tbbt__nd_hex_u64(v, &r->writeverf); break;
    default: ok = parse_access(v, &r->access_res); break;
    }
    if (!ok)
        return -1;
    TBBT_SET(r, f);
    if (f == TBBT_F_EOF && (L->allowed & B(TBBT_F_ENTRIES)))
        L->in_entries = true;
    return 2;
}

/* A "fh" with no handle after it: nfsdump's post_op_fh3 without a handle. */
static bool fh_absent(const struct tok *v, const struct tok *after)
{
    int32_t idx;

    return !v || (v->len & 1) || tbbt__nd_is_marker(v, after) ||
           tbbt__nd_lookup_key(v, &idx) != K_NONE;
}

/* fsstat/fsinfo/pathconf/statfs values by name: 2, or 0 if the token is not one. */
int tbbt__nd_info_pair(struct nd_line *L, const struct tok *t, const struct tok *v)
{
    const char *const *names =
        L->prog == TBBT_PROG_NFS2              ? info_statfs
        : L->proc == NFSPROC3_FSSTAT          ? info_fsstat
        : L->proc == NFSPROC3_FSINFO          ? info_fsinfo
                                              : info_pathconf;
    struct tbbt_trace_rec *r = &L->r;
    uint64_t x;

    for (uint32_t i = 0; names[i]; i++) {
        if (!tok_is_n(t, names[i], strlen(names[i])))
            continue;
        if (!v)
            return L->cut ? 1 : -1;
        if (strcmp(names[i], "time_delta") == 0 ? !tbbt__nd_parse_time(v, false, &x, NULL)
                                                  : !tbbt__nd_hex_u64(v, &x))
            return -1;
        r->info[i] = x;
        if (r->n_info < i + 1)
            r->n_info = i + 1;
        TBBT_SET(r, TBBT_F_INFO);
        return 2;
    }
    return 0;
}

int tbbt__nd_reply_pair(struct nd_state *s, struct nd_line *L, int k, int32_t idx, uint32_t i)
{
    const struct tok *v = i + 1 < s->ntok ? &s->toks[i + 1] : NULL;
    int f;

    if (k == K_EUID || k == K_EGID || k == K_NFSSTAT)
        return v ? 2 : 1;           /* known, nothing to keep */
    if (is_entry_key(L, k, idx))
        return entry_pair(s, L, k, idx, v);
    if (idx >= 0)
        return 0;
    f = attr_bit[k] ? -2 : (k == K_PRE_SIZE || k == K_PRE_MTIME || k == K_PRE_CTIME) ? -3
                                                                                  : reply_field(k);
    if (f == -1 || (f >= 0 && !(L->allowed & B(f))) || (f == -2 && L->lo.attr[0] == R_NONE) ||
        (f == -3 && L->lo.pre[0] == R_NONE))
        return 0;
    if (f == TBBT_F_NEW_FH && fh_absent(v, i + 2 < s->ntok ? &s->toks[i + 2] : NULL))
        return 1;
    if (!v)
        return L->cut ? 1 : -1;
    if (f == -2)
        return attr_pair(s, L, k, v);
    if (f == -3)
        return pre_pair(s, L, k, v);
    return store_reply(s, L, f, v);
}
