/* SPDX-License-Identifier: MIT */
/*
 * Per-procedure latencies for the concurrency simulator (concsim.c): the defaults from
 * the TBBT paper's Table 6, `--latency NAME=US,...`, and the "procedures" object of a
 * `tbbt-play --report-json` file (docs/tbbt-play.md).  The JSON reader here is a small
 * bounds-checked scanner that understands just enough JSON to find that object; it
 * does not build a tree.
 */
#include "stats/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define MAX_US 1e9  /* 1000 s: a latency above it is a typo */

void tbbt_stats_lat_init(struct tbbt_stats_lat *l, double default_us)
{
    static const struct {
        const char *name;
        double us;
    } table6[] = {
        {"getattr", 600}, {"lookup", 900}, {"read", 3100}, {"write", 2200}, {"create", 700},
        {NULL, 0},
    };
    for (int p = 0; p < TBBT_STATS_NPROG; p++)
        for (int i = 0; i < TBBT_STATS_NPROC; i++)
            l->ns[p][i] = (uint64_t)(default_us * 1e3);
    for (int k = 0; table6[k].name; k++) {
        int p3 = tbbt_proc_by_name(TBBT_PROG_NFS3, table6[k].name);
        int p2 = tbbt_proc_by_name(TBBT_PROG_NFS2, table6[k].name);
        if (p3 >= 0 && p3 < TBBT_STATS_NPROC)
            l->ns[TBBT_PROG_NFS3][p3] = (uint64_t)(table6[k].us * 1e3);
        if (p2 >= 0 && p2 < TBBT_STATS_NPROC)
            l->ns[TBBT_PROG_NFS2][p2] = (uint64_t)(table6[k].us * 1e3);
    }
}

uint64_t tbbt_stats_lat_get(const struct tbbt_stats_lat *l, int prog, int proc)
{
    if (prog < 0 || prog >= TBBT_STATS_NPROG || proc < 0 || proc >= TBBT_STATS_NPROC)
        return 0;
    return l->ns[prog][proc];
}

/* Sets one name (bare, "v3.x", "v2.x", "mnt3.x"); 0 or -EINVAL if unknown. */
static int set_one(struct tbbt_stats_lat *l, const char *name, double us)
{
    const char *dot = strchr(name, '.');
    uint64_t ns = (uint64_t)(us * 1e3);
    if (!dot) {
        int p3 = tbbt_proc_by_name(TBBT_PROG_NFS3, name);
        int p2 = tbbt_proc_by_name(TBBT_PROG_NFS2, name);
        if (p3 < 0 && p2 < 0)
            return -EINVAL;
        if (p3 >= 0 && p3 < TBBT_STATS_NPROC)
            l->ns[TBBT_PROG_NFS3][p3] = ns;
        if (p2 >= 0 && p2 < TBBT_STATS_NPROC)
            l->ns[TBBT_PROG_NFS2][p2] = ns;
        return 0;
    }
    char *prog_name = g_strndup(name, (gsize)(dot - name));
    int prog = tbbt_prog_by_name(prog_name);
    g_free(prog_name);
    int proc = prog > 0 ? tbbt_proc_by_name(prog, dot + 1) : -1;
    if (prog <= 0 || prog >= TBBT_STATS_NPROG || proc < 0 || proc >= TBBT_STATS_NPROC)
        return -EINVAL;
    l->ns[prog][proc] = ns;
    return 0;
}

static bool parse_us(const char *s, double *us)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < 0 || v > MAX_US)
        return false;
    *us = v;
    return true;
}

/* One pass of parse: pass 0 applies "default", 1 bare names, 2 prefixed names. */
static int parse_pass(struct tbbt_stats_lat *l, char **items, int pass, char *err,
                      size_t errlen)
{
    for (int i = 0; items[i]; i++) {
        char *eq = strchr(items[i], '=');
        double us;
        if (!eq || eq == items[i] || !parse_us(eq + 1, &us)) {
            tbbt_errbuf(err, errlen, "bad latency '%s' (expected NAME=MICROSECONDS)", items[i]);
            return -EINVAL;
        }
        *eq = '\0';
        bool is_default = strcmp(items[i], "default") == 0;
        bool prefixed = strchr(items[i], '.') != NULL;
        int want = is_default ? 0 : prefixed ? 2 : 1;
        if (want == pass && is_default) {
            for (int p = 0; p < TBBT_STATS_NPROG; p++)
                for (int k = 0; k < TBBT_STATS_NPROC; k++)
                    l->ns[p][k] = (uint64_t)(us * 1e3);
        } else if (want == pass && set_one(l, items[i], us) < 0) {
            tbbt_errbuf(err, errlen, "unknown procedure '%s' in --latency", items[i]);
            *eq = '=';
            return -EINVAL;
        }
        *eq = '=';
    }
    return 0;
}

int tbbt_stats_lat_parse(struct tbbt_stats_lat *l, const char *spec, char *err, size_t errlen)
{
    char **items = g_strsplit(spec, ",", -1);
    int rc = 0;
    if (!items[0]) {
        tbbt_errbuf(err, errlen, "empty --latency");
        rc = -EINVAL;
    }
    for (int pass = 0; pass < 3 && rc == 0; pass++)
        rc = parse_pass(l, items, pass, err, errlen);
    g_strfreev(items);
    return rc;
}

/* ---- a minimal JSON scanner ------------------------------------------------------- */

struct jcur {
    const char *p;
    size_t n, i;
    int depth;
    bool bad;
};

static void ws(struct jcur *c)
{
    while (c->i < c->n && strchr(" \t\r\n", c->p[c->i]) && c->p[c->i])
        c->i++;
}

static bool peek(struct jcur *c, char ch)
{
    ws(c);
    return c->i < c->n && c->p[c->i] == ch;
}

static bool eat(struct jcur *c, char ch)
{
    if (!peek(c, ch))
        return false;
    c->i++;
    return true;
}

/* Reads a string (escapes kept verbatim, which is enough for procedure names). */
static char *jstring(struct jcur *c)
{
    if (!eat(c, '"')) {
        c->bad = true;
        return NULL;
    }
    size_t start = c->i;
    while (c->i < c->n && c->p[c->i] != '"') {
        if (c->p[c->i] == '\\' && c->i + 1 < c->n)
            c->i++;
        c->i++;
    }
    if (c->i >= c->n) {
        c->bad = true;
        return NULL;
    }
    char *s = g_strndup(c->p + start, c->i - start);
    c->i++;
    return s;
}

static bool jnumber(struct jcur *c, double *v)
{
    ws(c);
    size_t start = c->i;
    while (c->i < c->n && strchr("+-0123456789.eE", c->p[c->i]) && c->p[c->i])
        c->i++;
    if (c->i == start || c->i - start > 64)
        return false;
    char buf[72];
    memcpy(buf, c->p + start, c->i - start);
    buf[c->i - start] = '\0';
    char *end;
    *v = strtod(buf, &end);
    return *end == '\0';
}

static void skip_value(struct jcur *c);

static void skip_container(struct jcur *c, char open, char close)
{
    if (++c->depth > 64) {
        c->bad = true;
        return;
    }
    eat(c, open);
    if (eat(c, close)) {
        c->depth--;
        return;
    }
    do {
        if (open == '{') {
            g_free(jstring(c));
            if (c->bad || !eat(c, ':')) {
                c->bad = true;
                return;
            }
        }
        skip_value(c);
    } while (!c->bad && eat(c, ','));
    if (!eat(c, close))
        c->bad = true;
    c->depth--;
}

static void skip_value(struct jcur *c)
{
    double v;
    ws(c);
    if (c->bad || c->i >= c->n) {
        c->bad = true;
    } else if (c->p[c->i] == '{') {
        skip_container(c, '{', '}');
    } else if (c->p[c->i] == '[') {
        skip_container(c, '[', ']');
    } else if (c->p[c->i] == '"') {
        g_free(jstring(c));
    } else if (strchr("tfn", c->p[c->i])) {
        while (c->i < c->n && g_ascii_isalpha(c->p[c->i]))
            c->i++;
    } else if (!jnumber(c, &v)) {
        c->bad = true;
    }
}

/* Reads {"mean_us": N, ...}; *us stays negative if absent or not a number. */
static void read_proc(struct jcur *c, double *us)
{
    *us = -1;
    if (!peek(c, '{')) {
        skip_value(c);
        return;
    }
    eat(c, '{');
    if (eat(c, '}'))
        return;
    do {
        char *k = jstring(c);
        if (c->bad || !eat(c, ':')) {
            g_free(k);
            c->bad = true;
            return;
        }
        double v;
        if (strcmp(k, "mean_us") == 0 && !peek(c, 'n') && jnumber(c, &v))
            *us = v;
        else
            skip_value(c);
        g_free(k);
    } while (!c->bad && eat(c, ','));
    if (!eat(c, '}'))
        c->bad = true;
}

/* Applies the members of a "procedures" object; returns how many were applied. */
static int read_procs(struct jcur *c, struct tbbt_stats_lat *l)
{
    int n = 0;
    eat(c, '{');
    if (eat(c, '}'))
        return 0;
    do {
        char *k = jstring(c);
        double us;
        if (c->bad || !eat(c, ':')) {
            g_free(k);
            c->bad = true;
            return n;
        }
        read_proc(c, &us);
        if (!c->bad && us >= 0 && us <= MAX_US && set_one(l, k, us) == 0)
            n++;
        g_free(k);
    } while (!c->bad && eat(c, ','));
    if (!eat(c, '}'))
        c->bad = true;
    return n;
}

/* Walks value looking for the first "procedures" object; 1 found, 0 not, -1 bad. */
static int find_procs(struct jcur *c, struct tbbt_stats_lat *l, int *napplied)
{
    ws(c);
    if (c->i >= c->n)
        return -1;
    char open = c->p[c->i];
    if (open != '{' && open != '[') {
        skip_value(c);
        return c->bad ? -1 : 0;
    }
    if (++c->depth > 64)
        return -1;
    eat(c, open);
    char close = open == '{' ? '}' : ']';
    if (eat(c, close)) {
        c->depth--;
        return 0;
    }
    do {
        char *k = NULL;
        if (open == '{') {
            k = jstring(c);
            if (c->bad || !eat(c, ':')) {
                g_free(k);
                return -1;
            }
        }
        int rc;
        if (k && strcmp(k, "procedures") == 0 && peek(c, '{')) {
            *napplied = read_procs(c, l);
            rc = c->bad ? -1 : 1;
        } else {
            rc = find_procs(c, l, napplied);
        }
        g_free(k);
        if (rc != 0)
            return rc;
    } while (eat(c, ','));
    c->depth--;
    return eat(c, close) ? 0 : -1;
}

int tbbt_stats_lat_from_json_text(struct tbbt_stats_lat *l, const char *text, size_t len,
                                  char *err, size_t errlen)
{
    struct jcur c = {.p = text, .n = len};
    int napplied = 0;
    int rc = find_procs(&c, l, &napplied);
    if (rc < 0) {
        tbbt_errbuf(err, errlen, "not valid JSON near byte %zu", c.i);
        return -EINVAL;
    }
    if (rc == 0) {
        tbbt_errbuf(err, errlen, "no \"procedures\" object (expected tbbt-play --report-json)");
        return -EINVAL;
    }
    if (napplied == 0) {
        tbbt_errbuf(err, errlen, "no procedure with a mean_us latency");
        return -EINVAL;
    }
    return 0;
}

int tbbt_stats_lat_from_json(struct tbbt_stats_lat *l, const char *path, char *err,
                             size_t errlen)
{
    gchar *text = NULL;
    gsize len = 0;
    GError *gerr = NULL;
    if (!g_file_get_contents(path, &text, &len, &gerr)) {
        int rc = gerr->domain == G_FILE_ERROR ? -EIO : -EINVAL;
        tbbt_errbuf(err, errlen, "cannot read '%s': %s", path, gerr->message);
        g_error_free(gerr);
        return rc;
    }
    char why[200];
    int rc = tbbt_stats_lat_from_json_text(l, text, len, why, sizeof(why));
    if (rc < 0)
        tbbt_errbuf(err, errlen, "'%s': %s", path, why);
    g_free(text);
    return rc;
}
