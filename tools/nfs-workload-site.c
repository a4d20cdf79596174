/* SPDX-License-Identifier: MIT */
/*
 * nfs-workload-site.c: the simulated site's users and groups, and `nfs-workload setup`,
 * which builds the tree the clients later work on (not captured: it is the initial
 * image a replay starts from).
 *
 * Users are a pure function of their index, so `run` knows them without reading
 * anything: user i has uid 1001+i, primary group users (100) or a group of its own
 * (gid = uid), and supplementary groups among users, mail (8), staff (50) and the
 * project groups proja.. (2001..).  The tree, as root over NFS (the lab exports with
 * No_Root_Squash), then chowned and chmodded:
 *
 *   home/            root:root 0755
 *     USER/          USER 0755, 0750 or 0700
 *       .bashrc .profile .bash_logout .bash_history .vimrc .gitconfig .ssh/
 *       src/PROJECT/{*.c,*.h,Makefile,README,*.o,PROJECT}   (built or partly stale)
 *       docs/{*.txt,*.md,*.tex,*.pdf,*.odt}                 (a hard link sometimes)
 *       Maildir/{cur,new,tmp}/                              0700, messages
 *       public_html -> docs, src/current -> PROJECT         (symbolic links)
 *   mail/            root:mail 1777
 *     USER           USER:mail 0660, an mbox of real-looking messages
 *   proj/            root:root 0755
 *     GROUP/         root:GROUP 2775, {data,reports,src}/ 2775, members' files 0664/0644
 *
 * File sizes are lognormal (median a few KiB, from ~100 bytes to 2 MiB); mtimes are
 * spread over the year before WL_SITE_EPOCH (object files newer than their sources
 * unless stale).  Deterministic for a seed: names, contents, owners and modes.  Around
 * 40 MB for 12 users at --scale 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <nfsc/libnfs.h>

#include "nfs-workload.h"

/* ------------------------------------------------------------------ identities */

static const char *const user_names[] = {
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "karl", "laura", "mike", "nina", "oscar", "peggy", "quinn", "rita", "steve", "trudy",
    "ursula", "victor", "wendy", "xavier",
};
#define N_USER_NAMES ((int)G_N_ELEMENTS(user_names))

static const char *const project_names[] = { "proja", "projb", "projc", "projd", "proje",
                                              "projf" };

int wl_site_nprojects(void)
{
    return (int)G_N_ELEMENTS(project_names);
}

uint32_t wl_site_project_gid(int p)
{
    return 2001 + (uint32_t)p;
}

const char *wl_site_project_name(int p)
{
    return project_names[p];
}

static void add_gid(struct wl_ident *id, uint32_t gid)
{
    if (!wl_ident_in_group(id, gid) && id->ngids < WL_MAX_GIDS)
        id->gids[id->ngids++] = gid;
}

bool wl_ident_in_group(const struct wl_ident *id, uint32_t gid)
{
    for (uint32_t i = 0; i < id->ngids; i++)
        if (id->gids[i] == gid)
            return true;
    return id->gid == gid;
}

void wl_site_user(int i, struct wl_ident *out)
{
    /* User i's groups do not depend on the number of users: `run` knows them from i. */
    const int np = wl_site_nprojects();

    memset(out, 0, sizeof(*out));
    if (i < N_USER_NAMES)
        g_strlcpy(out->name, user_names[i], sizeof(out->name));
    else
        g_snprintf(out->name, sizeof(out->name), "user%02d", i);
    out->uid = 1001 + (uint32_t)i;
    out->gid = i % 3 == 2 ? out->uid : WL_USERS_GID;   /* some have a private group */
    out->gids[out->ngids++] = out->gid;
    add_gid(out, WL_USERS_GID);
    add_gid(out, wl_site_project_gid(i % np));
    if (i % 3 == 0)
        add_gid(out, wl_site_project_gid((i + 1) % np));
    if (i % 4 == 1)
        add_gid(out, WL_MAIL_GID);
    if (i % 5 == 0)
        add_gid(out, WL_STAFF_GID);
}

void wl_site_mail_ident(struct wl_ident *out)
{
    memset(out, 0, sizeof(*out));
    g_strlcpy(out->name, "mail", sizeof(out->name));
    out->uid = WL_MAIL_UID;
    out->gid = WL_MAIL_GID;
    out->gids[out->ngids++] = WL_MAIL_GID;
}

void wl_site_root_ident(struct wl_ident *out)
{
    memset(out, 0, sizeof(*out));
    g_strlcpy(out->name, "root", sizeof(out->name));
    out->ngids = 1;
}

/* ------------------------------------------------------------------ building */

/* What setup made, for its summary line. */
struct site {
    struct wl_client *c;
    GRand *r;
    double scale;
    int nusers, nprojects;
    int64_t now;                  /* WL_SITE_EPOCH: mtimes go up to a year before it */
    uint64_t dirs, files, symlinks, hardlinks, bytes;
};

/* A count scaled by --scale, at least LO. */
static int scaled(struct site *s, int lo, int hi)
{
    int n = (int)(g_rand_int_range(s->r, lo, hi + 1) * s->scale + 0.5);

    return MAX(n, lo > 0 ? 1 : 0);
}

static int64_t past(struct site *s, int max_days)
{
    return s->now - g_rand_int_range(s->r, 600, max_days * 86400 + 601);
}

/* Sets PATH's mtime to WHEN and its atime to a moment between WHEN and now. */
static void set_mtime(struct site *s, const char *path, int64_t when)
{
    int64_t span = MAX(MIN(s->now - when, 86400), 1);
    struct timeval tv[2] = { { .tv_sec = when + g_rand_int_range(s->r, 0, (gint32)span) },
                             { .tv_sec = when } };

    wl_utimes(s->c, path, tv, 0);
}

static void mkdir_own(struct site *s, const char *path, int mode, uint32_t uid, uint32_t gid)
{
    wl_mkdir(s->c, path, mode & 0777, 0);
    wl_chown(s->c, path, (int)uid, (int)gid, 0);
    wl_chmod(s->c, path, mode, 0);      /* after chown: keeps setgid and sticky bits */
    s->dirs++;
}

/* Writes DATA as a new file owned by UID:GID with MODE, last modified at WHEN. */
static void file_own(struct site *s, const char *path, const GString *data, int mode,
                     uint32_t uid, uint32_t gid, int64_t when)
{
    wl_write_file(s->c, path, O_EXCL | O_WRONLY, mode & 0777, data->str, data->len, 1 << 20, 0);
    wl_chown(s->c, path, (int)uid, (int)gid, 0);
    if (mode & ~0777)
        wl_chmod(s->c, path, mode, 0);
    set_mtime(s, path, when);
    s->files++;
    s->bytes += data->len;
}

static void symlink_own(struct site *s, const char *target, const char *path, uint32_t uid,
                        uint32_t gid)
{
    wl_symlink(s->c, target, path, 0);
    wl_lchown(s->c, path, (int)uid, (int)gid, 0);
    s->symlinks++;
}

static const char *const word_names[] = {
    "parser", "queue", "cache", "index", "report", "notes", "plan", "budget", "draft",
    "review", "summary", "config", "server", "client", "table", "buffer", "stats", "paper",
    "thesis", "slides", "minutes", "proposal", "results", "figures", "backup", "invoice",
};

static const char *word(struct site *s)
{
    return word_names[g_rand_int_range(s->r, 0, G_N_ELEMENTS(word_names))];
}

/* ------------------------------------------------------------------ a home directory */

static void home_dotfiles(struct site *s, const char *home, const struct wl_ident *u)
{
    static const struct { const char *name; int mode; size_t lo, hi; } dots[] = {
        { ".bashrc", 0644, 3000, 4200 },   { ".profile", 0644, 600, 900 },
        { ".bash_logout", 0644, 180, 260 }, { ".vimrc", 0644, 200, 3000 },
        { ".gitconfig", 0644, 80, 400 },
    };
    char p[WL_PATH];
    GString *g = g_string_new(NULL);

    for (size_t i = 0; i < G_N_ELEMENTS(dots); i++) {
        g_string_truncate(g, 0);
        g_string_append_printf(g, "# %s for %s\n", dots[i].name, u->name);
        wl_text_prose(s->r, g, g_rand_int_range(s->r, dots[i].lo, dots[i].hi));
        file_own(s, wl_path(s->c, p, "%s/%s", home, dots[i].name), g, dots[i].mode, u->uid,
                 u->gid, past(s, 365));
    }
    g_string_truncate(g, 0);
    wl_text_history(s->r, g, wl_rand_lognormal(s->r, 8000, 1.0, 200, 200000));
    file_own(s, wl_path(s->c, p, "%s/.bash_history", home), g, 0600, u->uid, u->gid,
             past(s, 2));
    mkdir_own(s, wl_path(s->c, p, "%s/.ssh", home), 0700, u->uid, u->gid);
    g_string_truncate(g, 0);
    wl_text_binary(s->r, g, 560, "ssh-ed25519 ");
    file_own(s, wl_path(s->c, p, "%s/.ssh/authorized_keys", home), g, 0600, u->uid, u->gid,
             past(s, 365));
    g_string_truncate(g, 0);
    wl_text_binary(s->r, g, wl_rand_lognormal(s->r, 2000, 0.8, 300, 20000), "|1|");
    file_own(s, wl_path(s->c, p, "%s/.ssh/known_hosts", home), g, 0644, u->uid, u->gid,
             past(s, 90));
    g_string_free(g, TRUE);
}

/* One source project: sources, headers, Makefile, README, objects and the binary. */
static void home_project(struct site *s, const char *dir, const char *name,
                         const struct wl_ident *u)
{
    char p[WL_PATH];
    GString *g = g_string_new(NULL);
    int nc = scaled(s, 3, 12), nh = g_rand_int_range(s->r, 1, 5);
    bool built = g_rand_double(s->r) < 0.7;
    size_t objs = 0;

    mkdir_own(s, dir, 0755, u->uid, u->gid);
    for (int i = 0; i < nc; i++) {
        int64_t when = past(s, 365);
        const char *w = word(s);

        g_string_truncate(g, 0);
        wl_text_csource(s->r, g, wl_rand_lognormal(s->r, 6000, 0.9, 200, 200000), w);
        file_own(s, wl_path(s->c, p, "%s/%s%d.c", dir, w, i), g, 0644, u->uid, u->gid, when);
        if (!built)
            continue;
        g_string_truncate(g, 0);
        wl_text_binary(s->r, g, wl_rand_lognormal(s->r, 8000, 0.9, 900, 300000), "\177ELF");
        objs += g->len;
        /* 30 % of the objects are older than their source (make would rebuild them). */
        file_own(s, wl_path(s->c, p, "%s/%s%d.o", dir, w, i), g, 0644, u->uid, u->gid,
                 g_rand_double(s->r) < 0.3 ? when - 3600 : when + 60);
    }
    for (int i = 0; i < nh; i++) {
        g_string_truncate(g, 0);
        wl_text_header(s->r, g, wl_rand_lognormal(s->r, 2000, 0.8, 150, 40000), name);
        file_own(s, wl_path(s->c, p, "%s/%s%d.h", dir, word(s), i), g, 0644, u->uid, u->gid,
                 past(s, 365));
    }
    g_string_assign(g, "CFLAGS = -O2 -Wall\n\nall: prog\n\n%.o: %.c\n\t$(CC) $(CFLAGS) -c $<\n");
    wl_text_prose(s->r, g, g_rand_int_range(s->r, 200, 1500));
    file_own(s, wl_path(s->c, p, "%s/Makefile", dir), g, 0644, u->uid, u->gid, past(s, 365));
    g_string_assign(g, name);
    g_string_append(g, "\n====\n\n");
    wl_text_prose(s->r, g, g_rand_int_range(s->r, 500, 5000));
    file_own(s, wl_path(s->c, p, "%s/README", dir), g, 0644, u->uid, u->gid, past(s, 365));
    if (built) {
        g_string_truncate(g, 0);
        wl_text_binary(s->r, g, MIN(objs + objs / 2 + 16000, (size_t)2 << 20), "\177ELF");
        file_own(s, wl_path(s->c, p, "%s/%s", dir, name), g, 0755, u->uid, u->gid,
                 past(s, 30));
    }
    g_string_free(g, TRUE);
}

static void home_src(struct site *s, const char *home, const struct wl_ident *u)
{
    char dir[WL_PATH], p[WL_PATH], name[WL_NAME];
    int n = scaled(s, 1, 3);

    mkdir_own(s, wl_path(s->c, dir, "%s/src", home), 0755, u->uid, u->gid);
    for (int i = 0; i < n; i++) {
        g_snprintf(name, sizeof(name), "%s%d", word(s), i);
        home_project(s, wl_path(s->c, p, "%s/%s", dir, name), name, u);
        if (i == 0)
            symlink_own(s, name, wl_path(s->c, p, "%s/current", dir), u->uid, u->gid);
    }
}

static void home_docs(struct site *s, const char *home, const struct wl_ident *u)
{
    static const struct { const char *ext; double median, sigma; } kinds[] = {
        { "txt", 6000, 1.2 }, { "md", 5000, 1.0 }, { "tex", 20000, 1.0 },
        { "pdf", 150000, 1.1 }, { "odt", 40000, 1.0 },
    };
    char dir[WL_PATH], p[WL_PATH], first[WL_PATH] = "";
    GString *g = g_string_new(NULL);
    int n = scaled(s, 4, 18);

    mkdir_own(s, wl_path(s->c, dir, "%s/docs", home),
              g_rand_double(s->r) < 0.5 ? 0755 : 0750, u->uid, u->gid);
    for (int i = 0; i < n; i++) {
        int k = g_rand_int_range(s->r, 0, G_N_ELEMENTS(kinds));
        size_t size = wl_rand_lognormal(s->r, kinds[k].median, kinds[k].sigma, 100, 2 << 20);

        g_string_truncate(g, 0);
        if (k >= 3)
            wl_text_binary(s->r, g, size, k == 3 ? "%PDF-1.5\n" : "PK\003\004");
        else
            wl_text_prose(s->r, g, size);
        wl_path(s->c, p, "%s/%s-%d.%s", dir, word(s), i, kinds[k].ext);
        file_own(s, p, g, g_rand_double(s->r) < 0.8 ? 0644 : 0640, u->uid, u->gid,
                 past(s, 365));
        if (k == 0 && !first[0])
            g_strlcpy(first, p, sizeof(first));
    }
    /* A hard link: the "final" version kept under a second name. */
    if (first[0] && g_rand_double(s->r) < 0.5) {
        wl_link(s->c, first, wl_path(s->c, p, "%s/final.txt", dir), 0);
        s->hardlinks++;
    }
    g_string_free(g, TRUE);
}

static void maildir_messages(struct site *s, const char *dir, const struct wl_ident *u,
                             int n, bool seen)
{
    char p[WL_PATH];
    GString *g = g_string_new(NULL);
    struct wl_ident from;

    for (int i = 0; i < n; i++) {
        int64_t when = past(s, seen ? 365 : 3);

        wl_site_user(g_rand_int_range(s->r, 0, s->nusers), &from);
        g_string_truncate(g, 0);
        wl_text_message(s->r, g, from.name, u->name, when, wl_text_message_size(s->r), false);
        wl_path(s->c, p, "%s/%" G_GINT64_FORMAT ".M%dP%d.mail1,S=%zu%s", dir, when,
                g_rand_int_range(s->r, 0, 1000000), g_rand_int_range(s->r, 300, 32000), g->len,
                seen ? ":2,S" : "");
        file_own(s, p, g, 0600, u->uid, u->gid, when);
    }
    g_string_free(g, TRUE);
}

static void home_maildir(struct site *s, const char *home, const struct wl_ident *u)
{
    char dir[WL_PATH], p[WL_PATH];

    mkdir_own(s, wl_path(s->c, dir, "%s/Maildir", home), 0700, u->uid, u->gid);
    mkdir_own(s, wl_path(s->c, p, "%s/tmp", dir), 0700, u->uid, u->gid);
    mkdir_own(s, wl_path(s->c, p, "%s/new", dir), 0700, u->uid, u->gid);
    maildir_messages(s, p, u, g_rand_int_range(s->r, 0, 5), false);
    mkdir_own(s, wl_path(s->c, p, "%s/cur", dir), 0700, u->uid, u->gid);
    maildir_messages(s, p, u, scaled(s, 8, 50), true);
}

static void build_home(struct site *s, int i)
{
    static const int modes[] = { 0755, 0755, 0750, 0700 };
    struct wl_ident u;
    char home[WL_PATH], p[WL_PATH];

    wl_site_user(i, &u);
    wl_path(s->c, home, "/home/%s", u.name);
    mkdir_own(s, home, modes[g_rand_int_range(s->r, 0, 4)], u.uid, u.gid);
    home_dotfiles(s, home, &u);
    home_src(s, home, &u);
    home_docs(s, home, &u);
    home_maildir(s, home, &u);
    mkdir_own(s, wl_path(s->c, p, "%s/tmp", home), 0700, u.uid, u.gid);
    if (g_rand_double(s->r) < 0.4)
        symlink_own(s, "docs", wl_path(s->c, p, "%s/public_html", home), u.uid, u.gid);
}

/* ------------------------------------------------------------------ mail spool, projects */

static void build_mbox(struct site *s, int i)
{
    struct wl_ident u, from;
    char p[WL_PATH];
    GString *g = g_string_new(NULL);
    int n = scaled(s, 2, 40);
    int64_t when = s->now - (int64_t)n * 20000 - g_rand_int_range(s->r, 600, 30 * 86400);

    wl_site_user(i, &u);
    for (int k = 0; k < n; k++) {
        wl_site_user(g_rand_int_range(s->r, 0, s->nusers), &from);
        when += g_rand_int_range(s->r, 60, 20000);
        wl_text_message(s->r, g, from.name, u.name, when, wl_text_message_size(s->r), true);
    }
    file_own(s, wl_path(s->c, p, "/mail/%s", u.name), g, 0660, u.uid, WL_MAIL_GID, when);
    g_string_free(g, TRUE);
}

/* A member of project group P, for the owner of a file in it. */
static const struct wl_ident *member_of(struct site *s, int p, struct wl_ident *out)
{
    uint32_t gid = wl_site_project_gid(p);

    for (int tries = 0; tries < 64; tries++) {
        wl_site_user(g_rand_int_range(s->r, 0, s->nusers), out);
        if (wl_ident_in_group(out, gid))
            return out;
    }
    wl_site_root_ident(out);
    return out;
}

static void build_project(struct site *s, int p)
{
    static const char *const subs[] = { "data", "reports", "src" };
    uint32_t gid = wl_site_project_gid(p);
    char dir[WL_PATH], sub[WL_PATH], path[WL_PATH];
    GString *g = g_string_new(NULL);
    struct wl_ident m;

    mkdir_own(s, wl_path(s->c, dir, "/proj/%s", wl_site_project_name(p)), 02775, 0, gid);
    for (size_t k = 0; k < G_N_ELEMENTS(subs); k++) {
        int n = scaled(s, 3, 14);

        mkdir_own(s, wl_path(s->c, sub, "%s/%s", dir, subs[k]), 02775, 0, gid);
        for (int i = 0; i < n; i++) {
            g_string_truncate(g, 0);
            if (k == 0)
                wl_text_binary(s->r, g, wl_rand_lognormal(s->r, 60000, 1.4, 100, 2 << 20),
                               "DATA");
            else if (k == 2)
                wl_text_csource(s->r, g, wl_rand_lognormal(s->r, 6000, 0.9, 200, 200000),
                                word(s));
            else
                wl_text_prose(s->r, g, wl_rand_lognormal(s->r, 10000, 1.2, 100, 2 << 20));
            wl_path(s->c, path, "%s/%s-%d.%s", sub, word(s), i,
                    k == 0 ? "dat" : k == 2 ? "c" : "txt");
            member_of(s, p, &m);
            file_own(s, path, g, g_rand_double(s->r) < 0.75 ? 0664 : 0644, m.uid, gid,
                     past(s, 365));
        }
    }
    g_string_free(g, TRUE);
}

int wl_setup(struct wl_client *c, const struct wl_setup_cfg *cfg)
{
    struct site s = { .c = c, .scale = cfg->scale, .nusers = cfg->users,
                      .nprojects = wl_site_nprojects() };
    struct nfs_stat_64 st;

    if (wl_stat(c, "/home", &st, WL_OK_NOENT) == 0) {
        fprintf(stderr, WL_PROG ": setup: the export already holds /home (set up before?)\n");
        return 1;
    }
    s.r = g_rand_new_with_seed((guint32)cfg->seed);
    s.now = WL_SITE_EPOCH;
    mkdir_own(&s, "/home", 0755, 0, 0);
    mkdir_own(&s, "/mail", 01777, 0, WL_MAIL_GID);
    mkdir_own(&s, "/proj", 0755, 0, 0);
    for (int i = 0; i < s.nusers; i++) {
        build_home(&s, i);
        build_mbox(&s, i);
    }
    for (int p = 0; p < s.nprojects; p++)
        build_project(&s, p);
    printf(WL_PROG ": setup: %d users, %d projects: %" G_GUINT64_FORMAT " directories, %"
           G_GUINT64_FORMAT " files (%.1f MB), %" G_GUINT64_FORMAT " symlinks, %"
           G_GUINT64_FORMAT " hard links\n", s.nusers, s.nprojects, s.dirs, s.files,
           s.bytes / 1e6, s.symlinks, s.hardlinks);
    g_rand_free(s.r);
    return 0;
}
