/* SPDX-License-Identifier: MIT */
/*
 * Per-procedure latencies for the concurrency simulator (concsim.c): the defaults from
 * the TBBT paper's Table 6, `--latency NAME=US,...`, and the "procedures" object of a
 * `tbbt-play --report-json` file (docs/tbbt-play.md), parsed with json-glib.
 */
#include "stats/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-glib/json-glib.h>

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

/* Applies the members of a "procedures" object ({name: {mean_us, ...}}); how many. */
static int read_procs(JsonObject *procs, struct tbbt_stats_lat *l)
{
    int n = 0;
    GList *names = json_object_get_members(procs);
    for (GList *it = names; it; it = it->next) {
        JsonNode *v = json_object_get_member(procs, it->data);
        if (!JSON_NODE_HOLDS_OBJECT(v))
            continue;
        JsonNode *m = json_object_get_member(json_node_get_object(v), "mean_us");
        if (!m || !JSON_NODE_HOLDS_VALUE(m) ||
            (json_node_get_value_type(m) != G_TYPE_DOUBLE &&
             json_node_get_value_type(m) != G_TYPE_INT64))
            continue;
        double us = json_node_get_double(m);
        if (us >= 0 && us <= MAX_US && set_one(l, it->data, us) == 0)
            n++;
    }
    g_list_free(names);
    return n;
}

/* The first "procedures" object in node, depth first (document order), or NULL. */
static JsonObject *find_procs(JsonNode *node, int depth)
{
    if (depth > 64)
        return NULL;
    if (JSON_NODE_HOLDS_ARRAY(node)) {
        JsonArray *a = json_node_get_array(node);
        for (guint i = 0; i < json_array_get_length(a); i++) {
            JsonObject *o = find_procs(json_array_get_element(a, i), depth + 1);
            if (o)
                return o;
        }
        return NULL;
    }
    if (!JSON_NODE_HOLDS_OBJECT(node))
        return NULL;
    JsonObject *obj = json_node_get_object(node);
    JsonObject *found = NULL;
    GList *names = json_object_get_members(obj);
    for (GList *it = names; it && !found; it = it->next) {
        JsonNode *v = json_object_get_member(obj, it->data);
        if (strcmp(it->data, "procedures") == 0 && JSON_NODE_HOLDS_OBJECT(v))
            found = json_node_get_object(v);
        else
            found = find_procs(v, depth + 1);
    }
    g_list_free(names);
    return found;
}

int tbbt_stats_lat_from_json_text(struct tbbt_stats_lat *l, const char *text, size_t len,
                                  char *err, size_t errlen)
{
    JsonParser *p = json_parser_new();
    GError *gerr = NULL;
    int rc = -EINVAL;
    if (len > G_MAXSSIZE || !json_parser_load_from_data(p, text, (gssize)len, &gerr)) {
        tbbt_errbuf(err, errlen, "not valid JSON: %s", gerr ? gerr->message : "too long");
        goto out;
    }
    JsonNode *root = json_parser_get_root(p);
    JsonObject *procs = root ? find_procs(root, 0) : NULL;
    if (!procs)
        tbbt_errbuf(err, errlen, "no \"procedures\" object (expected tbbt-play --report-json)");
    else if (read_procs(procs, l) == 0)
        tbbt_errbuf(err, errlen, "no procedure with a mean_us latency");
    else
        rc = 0;
out:
    if (gerr)
        g_error_free(gerr);
    g_object_unref(p);
    return rc;
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
