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
 *
 * Also lost state of other kinds: a 4.1+ client's RECLAIM_COMPLETE (lost_reclaim()), a
 * 4.0 OPEN's OPEN_CONFIRM (lost_confirms()).  And the COMPOUNDs that say the namespace
 * repairs correct.c's model decides (tbbt__corr4_compound()): from a traced handle, a
 * LOOKUP per name, then the operation.
 */
#include "extract/correct4.h"

#include <string.h>

#include "proto/nfs4.h"
#include "trace/compound.h"

/* What the trace gave, per stateid `other`. */
struct sid {
    uint8_t other[TBBT_OP4_OTHER_LEN];
    uint32_t share;             /* corrected: the access the corrective OPEN asked; else 0 */
    bool unconfirmed;           /* 4.0: its OPEN asked for OPEN_CONFIRM, none seen yet */
    bool fh_known;
    uint32_t fh;                /* ... the file's handle */
    uint32_t confirm_seqid;     /* ... the owner's seqid OPEN_CONFIRM takes */
    uint8_t stateid[TBBT_OP4_ID_LEN];   /* ... the OPEN's stateid */
};

/* A traced client id (4.1+). */
struct client {
    uint64_t id;                /* key */
    bool reclaimed;             /* did RECLAIM_COMPLETE */
};

/* A traced session (4.1+). */
struct sess {
    uint8_t id[TBBT_OP4_ID_LEN];    /* key */
    struct client *client;      /* NULL: its client id is not known */
    bool reclaimed;             /* did RECLAIM_COMPLETE, its client id unknown then */
};

/* A 4.0 open owner and its last OPEN that asked for OPEN_CONFIRM. */
struct owner {
    struct tbbt_op4_owner_key key;  /* key; its bytes follow */
    struct sid *pending;        /* NULL: none */
    char bytes[];
};

/* A 4.0 client endpoint's latest traced client id. */
struct ep_client {
    bool known;
    uint64_t id;
};

/* All tables key on bytes in their values: a lookup allocates nothing. */
struct tbbt__corr4 {
    GHashTable *sids;           /* other -> struct sid */
    GHashTable *sessions;       /* id -> struct sess */
    GHashTable *clients;        /* id -> struct client */
    GHashTable *owners;         /* 4.0: (clientid, owner bytes) -> struct owner */
    GArray *ep_clients;         /* 4.0: struct ep_client by endpoint */
    uint32_t made;              /* 4.0 files made: their owners and stateids */
};

struct tbbt__corr4 *tbbt__corr4_new(void)
{
    struct tbbt__corr4 *c = g_new0(struct tbbt__corr4, 1);
    c->sids = g_hash_table_new_full(tbbt_op4_other_hash, tbbt_op4_other_equal, NULL, g_free);
    c->sessions = g_hash_table_new_full(tbbt_op4_session_hash, tbbt_op4_session_equal, NULL,
                                        g_free);
    c->clients = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, g_free);
    c->owners = g_hash_table_new_full(tbbt_op4_owner_hash, tbbt_op4_owner_equal, NULL, g_free);
    c->ep_clients = g_array_new(FALSE, TRUE, sizeof(struct ep_client));
    return c;
}

void tbbt__corr4_free(struct tbbt__corr4 *c)
{
    if (!c)
        return;
    g_hash_table_destroy(c->sids);
    g_hash_table_destroy(c->sessions);
    g_hash_table_destroy(c->clients);
    g_hash_table_destroy(c->owners);
    g_array_free(c->ep_clients, TRUE);
    g_free(c);
}

static struct sid *learn(struct tbbt__corr4 *c, const uint8_t *stateid)
{
    const uint8_t *o = tbbt_op4_sid_other(stateid);
    struct sid *s = g_hash_table_lookup(c->sids, o);
    if (!s && !tbbt_op4_sid_special(stateid)) {
        s = g_new0(struct sid, 1);
        memcpy(s->other, o, TBBT_OP4_OTHER_LEN);
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

/* The handle of the current object at operation i, or false: PUTFH, GETFH, SAVEFH and
 * RESTOREFH as RFC 8881 16.2.3.1.2, and after an operation that moved it the next
 * GETFH before it moves again (tbbt_op4_fh_after()). */
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
        } else if (tbbt_op4_moves_fh(o->op)) {
            cur = false;
        }
    }
    if (cur)
        *fh = cfh;
    return cur || tbbt_op4_fh_after(rec, i, fh, NULL);
}

/* The COMPOUND's SEQUENCE (4.1+), or NULL. */
static const struct tbbt_op4 *sequence_of(const struct tbbt_trace_rec *rec)
{
    if (rec->n_ops && rec->ops[0].op == OP_SEQUENCE && TBBT_O4_HAS(&rec->ops[0], SESSION))
        return &rec->ops[0];
    return NULL;
}

static struct sess *sess_get(struct tbbt__corr4 *c, const uint8_t *id)
{
    struct sess *s = g_hash_table_lookup(c->sessions, id);
    if (!s) {
        s = g_new0(struct sess, 1);
        memcpy(s->id, id, TBBT_OP4_ID_LEN);
        g_hash_table_insert(c->sessions, s->id, s);
    }
    return s;
}

static struct client *client_get(struct tbbt__corr4 *c, uint64_t id)
{
    struct client *x = g_hash_table_lookup(c->clients, &id);
    if (!x) {
        x = g_new0(struct client, 1);
        x->id = id;
        g_hash_table_insert(c->clients, &x->id, x);
    }
    return x;
}

/* Session id belongs to client id (CREATE_SESSION's result, or an owner's client id). */
static void note_client(struct tbbt__corr4 *c, const uint8_t *session, uint64_t id)
{
    struct sess *s = sess_get(c, session);
    if (!s->client || s->client->id != id)
        s->client = client_get(c, id);
}

/* Learns the session -> client id pairs CREATE_SESSION and owners tell (4.1+), and the
 * client id each 4.0 endpoint uses. */
static void learn_clients(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec,
                          const struct tbbt_op4 *seq)
{
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        if (!TBBT_O4_HAS(o, CLIENTID))
            continue;
        if (rec->minor == 0 && o->op != OP_SETCLIENTID) {   /* its result's is not confirmed */
            if (c->ep_clients->len <= rec->endpoint)
                g_array_set_size(c->ep_clients, rec->endpoint + 1);
            g_array_index(c->ep_clients, struct ep_client, rec->endpoint) =
                (struct ep_client){true, o->clientid};
        } else if (o->op == OP_CREATE_SESSION && TBBT_O4_HAS(o, SESSION) &&
                   TBBT_O4_HAS(o, STATUS) && o->status == NFS4_OK) {
            note_client(c, o->session, o->clientid);
        } else if (seq && (o->op == OP_OPEN || o->op == OP_LOCK)) {
            note_client(c, seq->session, o->clientid);
        }
    }
}

/* The traced client id of rec's client (its session's, 4.0 its endpoint's), or NULL. */
static const uint64_t *client_of(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec,
                                 const struct tbbt_op4 *seq)
{
    if (rec->minor == 0) {
        const struct ep_client *e = rec->endpoint < c->ep_clients->len
                                        ? &g_array_index(c->ep_clients, struct ep_client,
                                                         rec->endpoint)
                                        : NULL;
        return e && e->known ? &e->id : NULL;
    }
    const struct sess *s = seq ? g_hash_table_lookup(c->sessions, seq->session) : NULL;
    return s && s->client ? &s->client->id : NULL;
}

/* Operations a server in its grace period refuses (NFS4ERR_GRACE) to a 4.1 client
 * that has not sent RECLAIM_COMPLETE (RFC 8881 18.51.3): new state, and changes to the
 * namespace or to data others may hold state on. */
static bool needs_reclaim_complete(const struct tbbt_op4 *o)
{
    switch (o->op) {
    case OP_OPEN:
        return ((o->how >> 8) & 0xff) != CLAIM_PREVIOUS;
    case OP_LOCK:
        return !((o->how >> 7) & 1);            /* not a reclaim */
    case OP_CREATE: case OP_REMOVE: case OP_RENAME: case OP_LINK: case OP_SETATTR:
    case OP_WRITE:
        return true;
    default:
        return false;
    }
}

/*
 * A 4.1+ client whose RECLAIM_COMPLETE the capture lost would get NFS4ERR_GRACE from a
 * server just restarted for the replay, until its grace period ends: the first record of
 * such a client that needs it is preceded by a corrective RECLAIM_COMPLETE.  Learns the
 * RECLAIM_COMPLETEs the trace has (per client, or per session while its client id is
 * unknown); true if rec needs one first.
 */
static bool lost_reclaim(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec,
                         const struct tbbt_op4 *seq)
{
    bool needs = false;
    if (!seq || rec->minor == 0)
        return false;
    struct sess *s = sess_get(c, seq->session);
    bool *done = s->client ? &s->client->reclaimed : &s->reclaimed;
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        if (o->op == OP_RECLAIM_COMPLETE && TBBT_O4_HAS(o, STATUS) &&
            (o->status == NFS4_OK || o->status == NFS4ERR_COMPLETE_ALREADY)) {
            *done = true;
            return false;
        }
        needs |= needs_reclaim_complete(o) && TBBT_O4_HAS(o, STATUS) && o->status == NFS4_OK;
    }
    if (!needs || *done)
        return false;
    *done = true;
    return true;
}

/* The 4.0 owner of an OPEN (with its client id and owner bytes), made if make. */
static struct owner *owner_of(struct tbbt__corr4 *c, const struct tbbt_op4 *o, bool make)
{
    if (!TBBT_O4_HAS(o, CLIENTID) || !TBBT_O4_HAS(o, OWNER))
        return NULL;
    struct tbbt_op4_owner_key k = {o->clientid, o->owner};
    struct owner *w = g_hash_table_lookup(c->owners, &k);
    if (!w && make) {
        w = g_malloc0(sizeof(*w) + o->owner.len);
        memcpy(w->bytes, o->owner.p, o->owner.len);
        w->key = (struct tbbt_op4_owner_key){o->clientid, {w->bytes, o->owner.len}};
        g_hash_table_insert(c->owners, &w->key, w);
    }
    return w;
}

/*
 * 4.0: an OPEN that asked for OPEN_CONFIRM whose stateid is used (by anything but the
 * OPEN_CONFIRM), or whose owner opens again, with no OPEN_CONFIRM in the trace: the
 * capture lost it, and the live server would refuse the unconfirmed owner (BAD_SEQID).
 * One fix per such stateid.
 */
static unsigned lost_confirms(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec,
                              struct tbbt__corr4_fix *fix, unsigned max)
{
    unsigned n = 0;
    if (rec->minor != 0)
        return 0;
    for (uint32_t i = 0; i < rec->n_ops && n < max; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        struct sid *s = NULL;
        if (TBBT_O4_HAS(o, STATEID) && o->op != OP_OPEN_CONFIRM) {
            s = g_hash_table_lookup(c->sids, tbbt_op4_sid_other(o->stateid));
        } else if (o->op == OP_OPEN) {
            struct owner *w = owner_of(c, o, false);
            s = w ? w->pending : NULL;
        }
        if (!s || !s->unconfirmed || !s->fh_known)
            continue;
        s->unconfirmed = false;
        struct tbbt__corr4_fix *f = &fix[n++];
        memset(f, 0, sizeof(*f));
        f->kind = TBBT__C4_FIX_CONFIRM;
        f->fh = s->fh;
        f->seqid = s->confirm_seqid;
        memcpy(f->stateid, s->stateid, TBBT_OP4_ID_LEN);
    }
    return n;
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
    n += lost_confirms(c, rec, fix, max);
    if (lost_reclaim(c, rec, seq) && n < max) {
        struct tbbt__corr4_fix *f = &fix[n++];
        memset(f, 0, sizeof(*f));
        f->kind = TBBT__C4_FIX_RECLAIM;
        memcpy(f->session, seq->session, TBBT_OP4_ID_LEN);
        f->slot = seq->slot;
    }
    for (uint32_t i = 0; i < rec->n_ops; i++) {
        const struct tbbt_op4 *o = &rec->ops[i];
        bool ok = TBBT_O4_HAS(o, STATUS) && o->status == NFS4_OK;
        if (ok && TBBT_O4_HAS(o, STATEID) && !tbbt_op4_sid_special(o->stateid) &&
            (open_use(o) || lock_use(o))) {
            struct sid *s = g_hash_table_lookup(c->sids, tbbt_op4_sid_other(o->stateid));
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
                else if (!(clientid = client_of(c, rec, seq)))
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
                    f->kind = TBBT__C4_FIX_OPEN;
                    f->fh = fh;
                    f->clientid = *clientid;
                    f->share = s->share;
                    memcpy(f->stateid, o->stateid, TBBT_OP4_ID_LEN);
                    memcpy(f->session, seq->session, TBBT_OP4_ID_LEN);
                    f->slot = seq->slot;
                }
            }
        }
        if (ok && gives_stateid(o->op) && TBBT_O4_HAS(o, NEW_STATEID)) {
            struct sid *s = learn(c, o->new_stateid);
            if (s && o->op == OP_OPEN_CONFIRM)
                s->unconfirmed = false;
            else if (s && o->op == OP_OPEN && rec->minor == 0 && TBBT_O4_HAS(o, RES_FLAGS) &&
                     (o->res_flags & OPEN4_RESULT_CONFIRM) && TBBT_O4_HAS(o, SEQID)) {
                struct owner *w = owner_of(c, o, true);
                s->unconfirmed = true;
                if (w)
                    w->pending = s;
                s->fh_known = tbbt_op4_fh_after(rec, i, &s->fh, NULL);
                s->confirm_seqid = o->seqid + 1;
                memcpy(s->stateid, o->new_stateid, TBBT_OP4_ID_LEN);
            }
        }
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

/* out's COMPOUND header and, given a session (4.1+), its SEQUENCE first. */
static void begin(struct tbbt_trace_rec *out, uint32_t minor, const uint8_t *session,
                  uint64_t slot)
{
    TBBT_SET(out, TBBT_F_OPS);
    TBBT_SET(out, TBBT_F_MINOR);
    out->minor = minor;
    if (session) {
        struct tbbt_op4 *o = op4(out, OP_SEQUENCE, H(SESSION) | H(SLOT));
        memcpy(o->session, session, TBBT_OP4_ID_LEN);
        o->slot = slot;
    }
}

void tbbt__corr4_fixup(const struct tbbt__corr4_fix *f, uint32_t minor,
                       struct tbbt_trace_rec *out)
{
    struct tbbt_op4 *o;
    char owner[64];

    if (f->kind == TBBT__C4_FIX_CONFIRM) {      /* 4.0: no session */
        begin(out, minor, NULL, 0);
        op4(out, OP_PUTFH, H(FH))->fh = f->fh;
        o = op4(out, OP_OPEN_CONFIRM, H(STATEID) | H(SEQID) | H(NEW_STATEID));
        memcpy(o->stateid, f->stateid, TBBT_OP4_ID_LEN);
        o->seqid = f->seqid;
        memcpy(o->new_stateid, f->stateid, TBBT_OP4_ID_LEN);
        tbbt_op4_sid_set_seqid(o->new_stateid, tbbt_op4_sid_seqid(f->stateid) + 1);
        return;
    }
    begin(out, minor, f->session, f->slot);
    if (f->kind == TBBT__C4_FIX_RECLAIM) {
        op4(out, OP_RECLAIM_COMPLETE, H(HOW))->how = 0;     /* rca_one_fs false */
        return;
    }
    op4(out, OP_PUTFH, H(FH))->fh = f->fh;
    o = op4(out, OP_OPEN, H(SEQID) | H(SHARE) | H(HOW) | H(CLIENTID) | H(OWNER) | H(NEW_STATEID));
    o->seqid = 0;
    o->share = f->share;                    /* deny none */
    o->how = (uint32_t)CLAIM_FH << 8 | OPEN4_NOCREATE;
    o->clientid = f->clientid;
    /* an owner per lost stateid: an upgrade's OPEN gives the same stateid again */
    int n = g_snprintf(owner, sizeof(owner), "tbbt-corrective-");
    for (int i = 4; i < TBBT_OP4_ID_LEN; i++)
        n += g_snprintf(owner + n, sizeof(owner) - (size_t)n, "%02x", f->stateid[i]);
    tbbt_trace_rec_set_str(out, &o->owner, owner, (uint32_t)n);
    memcpy(o->new_stateid, f->stateid, TBBT_OP4_ID_LEN);
}

/* An OPEN that makes op's file (CLAIM_NULL, GUARDED4: the replay must find the name
 * free, as the model does) by owner seqid under owner. */
static struct tbbt_op4 *open_create(struct tbbt_trace_rec *out, const struct tbbt__corr4_nsop *op,
                                    uint64_t clientid, const char *owner, uint32_t seqid)
{
    struct tbbt_op4 *o = op4(out, OP_OPEN, H(NAME) | H(SEQID) | H(SHARE) | H(HOW) |
                                               H(CLIENTID) | H(OWNER) | H(SATTR));
    set_name(out, &o->name, &op->name);
    o->seqid = seqid;
    o->share = OPEN4_SHARE_ACCESS_READ;
    o->how = (uint32_t)CLAIM_NULL << 8 | (uint32_t)GUARDED4 << 4 | OPEN4_CREATE;
    o->clientid = clientid;
    tbbt_trace_rec_set_str(out, &o->owner, owner, (uint32_t)strlen(owner));
    o->sattr = op->sattr;
    return o;
}

/* A made-up stateid of seqid seqid for the n-th file a 4.0 repair makes. */
static void made_stateid(uint8_t *sid, uint32_t n, uint32_t seqid)
{
    tbbt_op4_sid_set_seqid(sid, seqid);
    memcpy(sid + 4, "tbbtcorr", 8);
    memcpy(sid + 12, &n, 4);
}

/*
 * A file made on NFSv4.0: the OPEN of a new owner needs OPEN_CONFIRM, which needs the
 * stateid the OPEN gave live, so a second COMPOUND (out2) finds the file by name,
 * confirms and closes it.  Owner seqids 1, 2, 3 and a made-up stateid: the player
 * shifts them to the live ones as for traced owners.
 */
static void create40(struct tbbt__corr4 *c, const struct tbbt__corr4_nsop *op,
                     uint64_t clientid, struct tbbt_trace_rec *out,
                     struct tbbt_trace_rec *out2)
{
    uint32_t n = ++c->made;
    char owner[48];
    g_snprintf(owner, sizeof(owner), "tbbt-corrective-create-%u", n);
    struct tbbt_op4 *o = open_create(out, op, clientid, owner, 1);
    o->has |= H(NEW_STATEID) | H(RES_FLAGS);
    o->res_flags = OPEN4_RESULT_CONFIRM;
    made_stateid(o->new_stateid, n, 1);
    go_to(out2, &op->at);
    o = op4(out2, OP_LOOKUP, H(NAME));
    set_name(out2, &o->name, &op->name);
    o = op4(out2, OP_OPEN_CONFIRM, H(STATEID) | H(SEQID) | H(NEW_STATEID));
    made_stateid(o->stateid, n, 1);
    o->seqid = 2;
    made_stateid(o->new_stateid, n, 2);
    o = op4(out2, OP_CLOSE, H(STATEID) | H(SEQID));
    made_stateid(o->stateid, n, 2);
    o->seqid = 3;
}

unsigned tbbt__corr4_records(const struct tbbt_trace_rec *rec4,
                             const struct tbbt__corr4_nsop *op)
{
    return op->kind == TBBT__C4_CREATE && rec4->minor == 0 ? 2 : 1;
}

bool tbbt__corr4_compound(struct tbbt__corr4 *c, const struct tbbt_trace_rec *rec4,
                          const struct tbbt__corr4_nsop *op, struct tbbt_trace_rec *out,
                          struct tbbt_trace_rec *out2)
{
    const struct tbbt_op4 *seq = sequence_of(rec4);
    const uint64_t *clientid = NULL;
    struct tbbt_op4 *o;

    if (rec4->minor > 0 && !seq)
        return false;
    if (op->kind == TBBT__C4_CREATE && !(clientid = client_of(c, rec4, seq)))
        return false;
    begin(out, rec4->minor, seq ? seq->session : NULL, seq ? seq->slot : 0);
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
        if (rec4->minor == 0) {
            begin(out2, 0, NULL, 0);
            create40(c, op, *clientid, out, out2);
            return true;
        }
        open_create(out, op, *clientid, "tbbt-corrective-create", 0);
        /* the current stateid (RFC 8881 16.2.3.1.2): the OPEN's, whatever it is live */
        o = op4(out, OP_CLOSE, H(STATEID) | H(SEQID));
        memset(o->stateid, 0, TBBT_OP4_ID_LEN);
        tbbt_op4_sid_set_seqid(o->stateid, 1);
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
