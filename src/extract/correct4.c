/* SPDX-License-Identifier: MIT */
/*
 * Pre-play correction of NFSv4 state lost with the capture (correct4.h): stateids
 * that operations use successfully although no captured operation gave them.  The
 * stateids the trace gives are learned in trace order from the results of OPEN,
 * OPEN_CONFIRM, OPEN_DOWNGRADE and LOCK; a READ, WRITE, SETATTR, CLOSE,
 * OPEN_DOWNGRADE or LOCK (new lock owner) whose traced status is NFS4_OK with a
 * stateid never learned lost the OPEN that made it.  On NFSv4.1 and 4.2 (sessions:
 * no owner seqids to keep in step) the repair is a corrective OPEN by handle
 * (CLAIM_FH) of the operation's current object, under an owner of its own, whose
 * result is that stateid: the replay then maps it to the live stateid its OPEN got.
 * The share access is READ, or READ and WRITE when the first use writes (WRITE, a size
 * change, a write lock); a stateid opened for READ that such a use needs later gets a
 * second corrective OPEN by the same owner (an upgrade: the same stateid).
 *
 * Not repaired (counted): NFSv4.0 (an OPEN there names its file, and a new owner's
 * seqids would have to fit the traced ones), an operation whose current object's
 * handle the COMPOUND does not tell, a lost LOCK (a lock stateid used by LOCKU or by
 * LOCK of a known lock owner), and a client whose client id the trace never showed.
 */
#include "extract/correct4.h"

#include <string.h>

#include "proto/nfs4.h"

/* What the trace gave, per stateid `other` (12 bytes). */
struct sid {
    uint8_t other[NFS4_OTHER_SIZE];
    uint32_t share;             /* corrected: the access the corrective OPEN asked; else 0 */
};

struct tbbt__corr4 {
    GHashTable *sids;           /* other -> struct sid (key: its other) */
    GHashTable *clients;        /* session (16 bytes, GBytes) -> traced clientid (uint64_t *) */
};

static guint other_hash(gconstpointer p)
{
    guint h = 2166136261u;
    const uint8_t *b = p;
    for (int i = 0; i < NFS4_OTHER_SIZE; i++)
        h = (h ^ b[i]) * 16777619u;
    return h;
}

static gboolean other_equal(gconstpointer a, gconstpointer b)
{
    return memcmp(a, b, NFS4_OTHER_SIZE) == 0;
}

struct tbbt__corr4 *tbbt__corr4_new(void)
{
    struct tbbt__corr4 *c = g_new0(struct tbbt__corr4, 1);
    c->sids = g_hash_table_new_full(other_hash, other_equal, g_free, NULL);
    c->clients = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
                                       (GDestroyNotify)g_bytes_unref, g_free);
    return c;
}

void tbbt__corr4_free(struct tbbt__corr4 *c)
{
    if (!c)
        return;
    g_hash_table_destroy(c->sids);
    g_hash_table_destroy(c->clients);
    g_free(c);
}

/* The `other` of a 16-byte stateid (seqid first, as the trace keeps it). */
static const uint8_t *other_of(const uint8_t *stateid)
{
    return stateid + 4;
}

static bool special(const uint8_t *other)
{
    bool zero = true, ones = true;
    for (int i = 0; i < NFS4_OTHER_SIZE; i++) {
        zero &= other[i] == 0;
        ones &= other[i] == 0xff;
    }
    return zero || ones;
}

static struct sid *learn(struct tbbt__corr4 *c, const uint8_t *stateid)
{
    const uint8_t *o = other_of(stateid);
    struct sid *s = g_hash_table_lookup(c->sids, o);
    if (!s && !special(o)) {
        s = g_new0(struct sid, 1);
        memcpy(s->other, o, NFS4_OTHER_SIZE);
        g_hash_table_insert(c->sids, s->other, s);
    }
    return s;
}

static bool gives_stateid(uint32_t op)
{
    return op == OP_OPEN || op == OP_OPEN_CONFIRM || op == OP_OPEN_DOWNGRADE || op == OP_LOCK;
}

/* The operations whose stateid an OPEN can stand for (an open stateid, or one that
 * only needs the file open: READ, WRITE, SETATTR). */
static bool open_use(const struct tbbt_op4 *o)
{
    switch (o->op) {
    case OP_READ: case OP_WRITE: case OP_SETATTR: case OP_CLOSE: case OP_OPEN_DOWNGRADE:
        return true;
    case OP_LOCK:
        return (o->how >> 8) & 1;           /* new lock owner: its open stateid */
    default:
        return false;
    }
}

static bool lock_use(const struct tbbt_op4 *o)
{
    return o->op == OP_LOCKU || (o->op == OP_LOCK && !((o->how >> 8) & 1));
}

/* The access a use needs of its OPEN: READ for a READ, READ and WRITE for a WRITE, a
 * size change and a write lock, none for the others (CLOSE, OPEN_DOWNGRADE, read locks,
 * other attributes). */
static uint32_t needs(const struct tbbt_op4 *o)
{
    uint32_t locktype = o->how & 0x7f;
    switch (o->op) {
    case OP_READ:
        return OPEN4_SHARE_ACCESS_READ;
    case OP_WRITE:
        return OPEN4_SHARE_ACCESS_BOTH;
    case OP_SETATTR:
        return (o->sattr.mask & TBBT_SA_SIZE) ? OPEN4_SHARE_ACCESS_BOTH : 0;
    case OP_LOCK:
        return locktype == WRITE_LT || locktype == WRITEW_LT ? OPEN4_SHARE_ACCESS_BOTH : 0;
    default:
        return 0;
    }
}

/* Operations that move the current filehandle to an object a later GETFH tells. */
static bool moves_fh(uint32_t op)
{
    switch (op) {
    case OP_PUTROOTFH: case OP_PUTPUBFH: case OP_LOOKUP: case OP_LOOKUPP: case OP_OPEN:
    case OP_CREATE: case OP_OPENATTR: case OP_SECINFO: case OP_SECINFO_NO_NAME:
        return true;
    default:
        return false;
    }
}

/* The handle of the current object at operation i, or false: PUTFH, GETFH, SAVEFH and
 * RESTOREFH as RFC 8881 16.2.3.1.2, and after an operation that moved it the next
 * GETFH before it moves again (as clients ask for it). */
static bool current_fh(const struct tbbt_trace_rec *rec, uint32_t i, uint32_t *fh)
{
    bool cur = false, saved = false;
    uint32_t cfh = 0, sfh = 0;
    for (uint32_t j = 0; j < i; j++) {
        const struct tbbt_op4 *o = &rec->ops[j];
        if ((o->op == OP_PUTFH || o->op == OP_GETFH) && TBBT_O4_HAS(o, FH)) {
            cur = true;
            cfh = o->fh;
        } else if (o->op == OP_SAVEFH) {
            saved = cur;
            sfh = cfh;
        } else if (o->op == OP_RESTOREFH) {
            cur = saved;
            cfh = sfh;
        } else if (moves_fh(o->op)) {
            cur = false;
        }
    }
    if (!cur) {
        for (uint32_t j = i + 1; j < rec->n_ops && !moves_fh(rec->ops[j].op); j++)
            if (rec->ops[j].op == OP_GETFH && TBBT_O4_HAS(&rec->ops[j], FH)) {
                cur = true;
                cfh = rec->ops[j].fh;
                break;
            }
    }
    *fh = cfh;
    return cur;
}

/* The COMPOUND's SEQUENCE (4.1+), or NULL. */
static const struct tbbt_op4 *sequence_of(const struct tbbt_trace_rec *rec)
{
    if (rec->n_ops && rec->ops[0].op == OP_SEQUENCE && TBBT_O4_HAS(&rec->ops[0], SESSION))
        return &rec->ops[0];
    return NULL;
}

static GBytes *session_key(const struct tbbt_op4 *o)
{
    return g_bytes_new(o->session, TBBT_OP4_ID_LEN);
}

static void note_client(struct tbbt__corr4 *c, const struct tbbt_op4 *seq, uint64_t clientid)
{
    uint64_t *v = g_new(uint64_t, 1);
    *v = clientid;
    g_hash_table_replace(c->clients, session_key(seq), v);
}

/* Learns the session -> client id pairs CREATE_SESSION and owners tell. */
static void learn_clients(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec,
                          const struct tbbt_op4 *seq)
{
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        if (!TBBT_O4_HAS(o, CLIENTID))
            continue;
        if (o->op == OP_CREATE_SESSION && TBBT_O4_HAS(o, SESSION) && TBBT_O4_HAS(o, STATUS) &&
            o->status == NFS4_OK)
            note_client(c, o, o->clientid);
        else if (seq && (o->op == OP_OPEN || o->op == OP_LOCK))
            note_client(c, seq, o->clientid);
    }
}

static const uint64_t *lookup_client(struct tbbt__corr4 *c, const struct tbbt_op4 *seq)
{
    GBytes *k = session_key(seq);
    const uint64_t *v = g_hash_table_lookup(c->clients, k);
    g_bytes_unref(k);
    return v;
}

unsigned tbbt__corr4_step(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec,
                          struct tbbt__corr4_fix *fix, unsigned max,
                          const char **unfixed, unsigned *n_unfixed)
{
    unsigned n = 0;
    *n_unfixed = 0;
    if (rec->prog != TBBT_PROG_NFS4 || !TBBT_HAS(rec, TBBT_F_OPS) || !(rec->flags & TBBT_RF_REPLY))
        return 0;
    const struct tbbt_op4 *seq = sequence_of(rec);
    learn_clients(c, rec, seq);
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        bool ok = TBBT_O4_HAS(o, STATUS) && o->status == NFS4_OK;
        if (ok && TBBT_O4_HAS(o, STATEID) && !special(other_of(o->stateid)) &&
            (open_use(o) || lock_use(o))) {
            struct sid *s = g_hash_table_lookup(c->sids, other_of(o->stateid));
            uint32_t want = needs(o);
            if (!s || (s->share && (s->share & want) != want)) {
                const char *why = NULL;
                uint32_t fh = 0;
                const uint64_t *clientid = NULL;
                if (lock_use(o))
                    why = "lost lock";
                else if (rec->minor == 0 || !seq)
                    why = rec->minor == 0 ? "lost open (4.0)" : "lost open (no session)";
                else if (!current_fh(rec, i, &fh))
                    why = "lost open (handle unknown)";
                else if (!(clientid = lookup_client(c, seq)))
                    why = "lost open (client id unknown)";
                if (!why && n == max)
                    why = "lost open (too many in one COMPOUND)";
                if (why) {
                    if (*n_unfixed < TBBT__CORR4_FIX_MAX)
                        unfixed[(*n_unfixed)++] = why;
                } else {
                    if (!s)
                        s = learn(c, o->stateid);
                    s->share |= want ? want : OPEN4_SHARE_ACCESS_READ;
                    struct tbbt__corr4_fix *f = &fix[n++];
                    memset(f, 0, sizeof(*f));
                    f->fh = fh;
                    f->clientid = *clientid;
                    f->share = s->share;
                    memcpy(f->stateid, o->stateid, TBBT_OP4_ID_LEN);
                    memcpy(f->session, seq->session, TBBT_OP4_ID_LEN);
                    f->slot = seq->slot;
                }
            }
        }
        if (ok && gives_stateid(o->op) && TBBT_O4_HAS(o, NEW_STATEID))
            learn(c, o->new_stateid);
    }
    return n;
}

/* ------------------------------------------------------------------ namespace repairs */

static struct tbbt_op4 *op4(struct tbbt_trace_rec *out, uint32_t op, uint64_t has)
{
    struct tbbt_op4 *o = tbbt_trace_rec_add_op4(out);
    o->op = op;
    o->status = NFS4_OK;
    o->has = has | (uint64_t)1 << TBBT_O4_STATUS;
    return o;
}

#define H(m) ((uint64_t)1 << TBBT_O4_##m)

static void set_name(struct tbbt_trace_rec *out, struct tbbt_str *dst, const struct tbbt_str *src)
{
    tbbt_trace_rec_set_str(out, dst, src->p, src->len);
}

/* PUTFH of at's handle, then a LOOKUP of each of its names. */
static void go_to(struct tbbt_trace_rec *out, const struct tbbt__corr4_at *at)
{
    op4(out, OP_PUTFH, H(FH))->fh = at->base;
    for (unsigned i = 0; i < at->n; i++) {
        struct tbbt_op4 *o = op4(out, OP_LOOKUP, H(NAME));
        set_name(out, &o->name, &at->comp[i]);
    }
}

bool tbbt__corr4_compound(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec4,
                          const struct tbbt__corr4_nsop *op, struct tbbt_trace_rec *out)
{
    const struct tbbt_op4 *seq = sequence_of(rec4);
    const uint64_t *clientid = NULL;
    struct tbbt_op4 *o;

    if (rec4->minor > 0 && !seq)
        return false;
    if (op->kind == TBBT__C4_CREATE && (rec4->minor == 0 || !(clientid = lookup_client(c, seq))))
        return false;
    TBBT_SET(out, TBBT_F_OPS);
    TBBT_SET(out, TBBT_F_MINOR);
    out->minor = rec4->minor;
    if (seq) {
        o = op4(out, OP_SEQUENCE, H(SESSION) | H(SLOT));
        memcpy(o->session, seq->session, TBBT_OP4_ID_LEN);
        o->slot = seq->slot;
    }
    if (op->kind == TBBT__C4_RENAME) {
        go_to(out, &op->at);
        op4(out, OP_SAVEFH, 0);
        go_to(out, &op->at2);
        o = op4(out, OP_RENAME, H(NAME) | H(NAME2));
        set_name(out, &o->name, &op->name);
        set_name(out, &o->name2, &op->name2);
        return true;
    }
    go_to(out, &op->at);
    switch (op->kind) {
    case TBBT__C4_CREATE:
        /* GUARDED4: the replay must find the name free, as the model does */
        o = op4(out, OP_OPEN, H(NAME) | H(SEQID) | H(SHARE) | H(HOW) | H(CLIENTID) | H(OWNER) |
                                  H(SATTR));
        set_name(out, &o->name, &op->name);
        o->share = OPEN4_SHARE_ACCESS_READ;
        o->how = (uint32_t)CLAIM_NULL << 8 | (uint32_t)GUARDED4 << 4 | OPEN4_CREATE;
        o->clientid = *clientid;
        tbbt_trace_rec_set_str(out, &o->owner, "tbbt-corrective-create", 22);
        o->sattr = op->sattr;
        /* the current stateid (RFC 8881 16.2.3.1.2): the OPEN's, whatever it is live */
        o = op4(out, OP_CLOSE, H(STATEID) | H(SEQID));
        memset(o->stateid, 0, TBBT_OP4_ID_LEN);
        o->stateid[3] = 1;
        return true;
    case TBBT__C4_MKDIR:
    case TBBT__C4_SYMLINK:
        o = op4(out, OP_CREATE, H(NAME) | H(FTYPE) | H(SATTR));
        set_name(out, &o->name, &op->name);
        o->ftype = op->kind == TBBT__C4_MKDIR ? NF4DIR : NF4LNK;
        o->sattr = op->sattr;
        if (op->kind == TBBT__C4_SYMLINK) {
            TBBT_O4_SET(o, TARGET);
            set_name(out, &o->target, &op->target);
        }
        return true;
    case TBBT__C4_REMOVE:
        o = op4(out, OP_REMOVE, H(NAME));
        set_name(out, &o->name, &op->name);
        return true;
    case TBBT__C4_SETATTR:
        o = op4(out, OP_SETATTR, H(STATEID) | H(SATTR));
        memset(o->stateid, 0, TBBT_OP4_ID_LEN);     /* anonymous: no OPEN needed */
        o->sattr = op->sattr;
        return true;
    default:
        return false;
    }
}
