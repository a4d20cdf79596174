/* SPDX-License-Identifier: MIT */
/*
 * nfs-workload-mail.c: the mail clients of the `mail` and `mixed` mixes, doing what
 * mail programs do on NFS-mounted spools and Maildirs.
 *
 * Delivery agents (machine mailN, uid and gid mail) deliver to a recipient chosen by a
 * Zipf law (some users get most of the mail):
 *   - into the mbox /mail/USER: dot-lock (wl_dotlock), open, fstat for the size, write
 *     the message at the end, close (libnfs commits a written file on close, as a Linux
 *     client flushes and commits on close or fsync), unlock;
 *   - into the Maildir /home/USER/Maildir as the recipient (a local delivery agent runs
 *     with the user's credentials): stat tmp/NAME (must not exist), create it, write,
 *     close, rename into new/ (the Maildir protocol).  Only with the export's root
 *     mounted; an agent that mounted /mail delivers to mboxes only.
 * User agents (the user on a workstation of its own):
 *   - check the mbox (fstat of the mbox the agent keeps open: a GETATTR), read what is
 *     new (or all of it) in
 *     32 KiB chunks, and expunge: dot-lock, read all, drop about half the messages,
 *     truncate to 0 (SETATTR size 0), write the rest back, close, unlock;
 *   - read the Maildir: list new/, rename each new message into cur/ with the seen
 *     flag, read it, delete some; and flag or delete messages in cur/.
 *   A user agent that mounted its home (autofs style) has no spool: Maildir only.
 * Tolerated races: ENOENT on a message another agent of the same user moved or deleted.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "nfs-workload.h"

#define MBOX_CHUNK 32768
#define MBOX_MAX (8u << 20)         /* expunge harder past this size */

/* A recipient: user 0 gets the most mail. */
static void recipient(struct wl_client *c, struct wl_ident *to)
{
    wl_site_user(wl_rand_zipf(c->op, c->nusers, 0.8), to);
}

static void new_message(struct wl_client *c, GString *msg, const char *to, bool mbox)
{
    struct wl_ident from;

    wl_site_user(g_rand_int_range(c->op, 0, c->nusers), &from);
    c->vtime += 1 + (int64_t)wl_rand_exp(c->op, 20.0);
    wl_text_message(c->op, msg, from.name, to, c->vtime, wl_text_message_size(c->op), mbox);
}

/* ------------------------------------------------------------------ delivery agents */

static void mbox_deliver(struct wl_client *c)
{
    struct wl_ident to;
    char mbox[WL_PATH];
    GString *msg = g_string_new(NULL);
    struct nfs_stat_64 st;
    struct nfsfh *fh;

    wl_begin_op(c, WL_OP_MBOX_DELIVER);
    recipient(c, &to);
    new_message(c, msg, to.name, true);
    c->pid++;
    wl_path(c, mbox, "%s/%s", c->spool, to.name);
    wl_dotlock(c, mbox);
    wl_open(c, mbox, O_WRONLY, &fh, 0);
    wl_fstat(c, fh, mbox, &st);
    for (size_t off = 0; off < msg->len; off += 65536)
        wl_pwrite(c, fh, mbox, st.nfs_size + off, MIN(msg->len - off, 65536), msg->str + off);
    wl_close(c, fh, mbox);
    wl_dotunlock(c, mbox);
    g_string_free(msg, TRUE);
}

static void maildir_deliver(struct wl_client *c)
{
    struct wl_ident to;
    char tmp[WL_PATH], new[WL_PATH], name[128];
    GString *msg = g_string_new(NULL);
    struct nfs_stat_64 st;

    wl_begin_op(c, WL_OP_MAILDIR_DELIVER);
    recipient(c, &to);
    new_message(c, msg, to.name, false);
    c->pid++;
    g_snprintf(name, sizeof(name), "%" G_GINT64_FORMAT ".M%dP%uQ%u.%s", c->vtime,
               g_rand_int_range(c->op, 0, 1000000), c->pid, (unsigned)c->st->ops[WL_OP_MAILDIR_DELIVER],
               c->machine);
    wl_path(c, tmp, "/home/%s/Maildir/tmp/%s", to.name, name);
    wl_path(c, new, "/home/%s/Maildir/new/%s", to.name, name);
    wl_set_creds(c, &to);
    if (wl_stat(c, tmp, &st, WL_OK_NOENT) == 0)
        wl_fail(c, "maildir delivery: %s already exists", tmp);
    wl_write_file(c, tmp, O_EXCL, 0600, msg->str, msg->len, 65536, 0);
    wl_rename(c, tmp, new, 0);
    wl_set_creds(c, &c->id);
    g_string_free(msg, TRUE);
}

static void mda_step(struct wl_client *c)
{
    bool maildir = c->has_home && g_rand_double(c->intent) < 0.3;

    if (maildir || !c->has_spool)
        maildir_deliver(c);
    else
        mbox_deliver(c);
}

/* ------------------------------------------------------------------ user agents: mbox */

/* New mail?  The agent keeps its mbox open and asks for its attributes (GETATTR). */
static void mbox_check(struct wl_client *c)
{
    char mbox[WL_PATH];
    struct nfs_stat_64 st;

    wl_begin_op(c, WL_OP_MBOX_CHECK);
    wl_path(c, mbox, "%s/%s", c->spool, c->id.name);
    if (!c->mbox_fh)
        wl_open(c, mbox, O_RDONLY, &c->mbox_fh, 0);
    wl_fstat(c, c->mbox_fh, mbox, &st);
    if (st.nfs_size < c->mbox_seen)
        c->mbox_seen = 0;               /* expunged elsewhere: read it all next time */
}

static void mbox_read(struct wl_client *c)
{
    char mbox[WL_PATH];
    uint64_t from;
    int64_t n;

    wl_begin_op(c, WL_OP_MBOX_READ);
    wl_path(c, mbox, "%s/%s", c->spool, c->id.name);
    /* Opening the folder reads all of it; a check for new mail only what was added. */
    from = g_rand_double(c->op) < 0.3 ? 0 : c->mbox_seen;
    n = wl_read_file(c, mbox, from, MBOX_CHUNK, NULL, NULL, 0);
    c->mbox_seen = from + (uint64_t)n;
}

/* Offsets of the "From " lines that start the messages of MBOX. */
static GArray *mbox_split(const GString *mbox)
{
    GArray *starts = g_array_new(FALSE, FALSE, sizeof(size_t));

    for (size_t i = 0; i + 5 <= mbox->len; i++) {
        if ((i == 0 || mbox->str[i - 1] == '\n') && memcmp(mbox->str + i, "From ", 5) == 0)
            g_array_append_val(starts, i);
        while (i < mbox->len && mbox->str[i] != '\n')
            i++;
    }
    return starts;
}

/* The messages of OLD the user keeps: each with probability KEEP. */
static GString *mbox_keep(struct wl_client *c, const GString *old, double keep)
{
    GArray *starts = mbox_split(old);
    GString *out = g_string_new(NULL);

    for (guint i = 0; i < starts->len; i++) {
        size_t a = g_array_index(starts, size_t, i);
        size_t b = i + 1 < starts->len ? g_array_index(starts, size_t, i + 1) : old->len;

        if (g_rand_double(c->op) < keep)
            g_string_append_len(out, old->str + a, (gssize)(b - a));
    }
    g_array_free(starts, TRUE);
    return out;
}

static void mbox_expunge(struct wl_client *c)
{
    char mbox[WL_PATH];
    GString *old = g_string_new(NULL), *kept;
    struct nfsfh *fh;
    char *buf = g_malloc(MBOX_CHUNK);
    int64_t n;

    wl_begin_op(c, WL_OP_MBOX_EXPUNGE);
    wl_path(c, mbox, "%s/%s", c->spool, c->id.name);
    c->pid++;
    wl_dotlock(c, mbox);
    wl_open(c, mbox, O_RDWR, &fh, 0);
    do {
        n = wl_pread(c, fh, mbox, old->len, MBOX_CHUNK, buf);
        g_string_append_len(old, buf, n);
    } while (n == MBOX_CHUNK);
    kept = mbox_keep(c, old, old->len > MBOX_MAX ? 0.2 : 0.5);
    wl_ftruncate(c, fh, mbox, 0);
    for (size_t off = 0; off < kept->len; off += MBOX_CHUNK)
        wl_pwrite(c, fh, mbox, off, MIN(kept->len - off, MBOX_CHUNK), kept->str + off);
    wl_close(c, fh, mbox);
    wl_dotunlock(c, mbox);
    c->mbox_seen = kept->len;
    g_string_free(old, TRUE);
    g_string_free(kept, TRUE);
    g_free(buf);
}

/* ------------------------------------------------------------------ user agents: Maildir */

static void maildir_read(struct wl_client *c)
{
    char dir[WL_PATH], from[WL_PATH], to[WL_PATH];
    GPtrArray *ents;

    wl_begin_op(c, WL_OP_MAILDIR_READ);
    ents = wl_listdir(c, wl_path(c, dir, "%s/Maildir/new", c->home), 0);
    for (guint i = 0; i < ents->len && i < 8; i++) {
        const struct wl_dirent *e = g_ptr_array_index(ents, i);

        if (e->type != NF3REG)
            continue;
        wl_path(c, from, "%s/Maildir/new/%s", c->home, e->name);
        wl_path(c, to, "%s/Maildir/cur/%s:2,S", c->home, e->name);
        if (wl_rename(c, from, to, WL_OK_RACE) < 0)
            continue;
        if (wl_read_file(c, to, 0, 65536, NULL, NULL, WL_OK_RACE) >= 0 &&
            g_rand_double(c->op) < 0.2)
            wl_unlink(c, to, WL_OK_RACE);
    }
    g_ptr_array_unref(ents);
}

/* Reads a message of cur/ and flags it replied (a rename) or deletes it. */
static void maildir_flag(struct wl_client *c)
{
    char dir[WL_PATH], path[WL_PATH], to[WL_PATH];
    const struct wl_dirent *e;
    GPtrArray *ents;
    size_t len;

    wl_begin_op(c, WL_OP_MAILDIR_FLAG);
    ents = wl_listdir(c, wl_path(c, dir, "%s/Maildir/cur", c->home), 0);
    if (ents->len == 0)
        goto out;
    e = g_ptr_array_index(ents, g_rand_int_range(c->op, 0, (gint32)ents->len));
    wl_path(c, path, "%s/%s", dir, e->name);
    if (wl_read_file(c, path, 0, 65536, NULL, NULL, WL_OK_RACE) < 0)
        goto out;
    len = strlen(path);
    if (ents->len > 30 && g_rand_double(c->op) < 0.5) {
        wl_unlink(c, path, WL_OK_RACE);
    } else if (len > 4 && strcmp(path + len - 4, ":2,S") == 0) {
        wl_path(c, to, "%.*s:2,RS", (int)(len - 4), path);
        wl_rename(c, path, to, WL_OK_RACE);
    }
out:
    g_ptr_array_unref(ents);
}

static void mua_step(struct wl_client *c)
{
    double w[] = { 35, 15, 4, 30, 16 };   /* check, read, expunge, maildir read, flag */

    if (!c->has_spool)
        w[0] = w[1] = w[2] = 0;
    switch (wl_rand_weighted(c->intent, w, G_N_ELEMENTS(w))) {
    case 0: mbox_check(c); break;
    case 1: mbox_read(c); break;
    case 2: mbox_expunge(c); break;
    case 3: maildir_read(c); break;
    default: maildir_flag(c); break;
    }
}

void wl_mail_step(struct wl_client *c)
{
    if (c->role == WL_ROLE_MDA)
        mda_step(c);
    else
        mua_step(c);
}
