/* SPDX-License-Identifier: MIT */
/*
 * tbbt-compare's outputs: the JSON document (stable keys, docs/tbbt-compare.md "JSON";
 * after its header, in the order of the table report-keys.def) and the text summary
 * (counts, the differences with their first examples in tbbt-dump text form, latency,
 * timing, rates).
 */
#include "compare/compare-int.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "util/json.h"
#include "tbbt-version.h"

#define SHOW_KEYS 20            /* keys printed per difference table */
#define SERIES_ROWS 20          /* lag-over-time rows printed */

static const char *const extra_names[TBBT_COMPARE_NEXTRA] = {"startup", "verify", "retry",
                                                             "other"};

static double us(uint64_t ns)
{
    return (double)ns / 1000.0;
}

/* ---- JSON -------------------------------------------------------------------------------- */

static void json_table(struct tbbt_json *j, const struct tbbt_compare *c, const char *name,
                       enum tbbt_compare_kind kind)
{
    GPtrArray *a = tbbt__cmp_sorted(c, kind);

    tbbt_json_key(j, name);
    tbbt_json_begin_object(j);
    for (guint i = 0; i < a->len; i++) {
        const struct tbbt__cmp_diff *d = a->pdata[i];
        tbbt_json_kv_uint(j, d->key, d->n);
    }
    tbbt_json_end_object(j);
    g_ptr_array_free(a, TRUE);
}

static void json_ratio(struct tbbt_json *j, const char *key, double num, double den)
{
    tbbt_json_key(j, key);
    if (den > 0 && isfinite(num / den))
        tbbt_json_double(j, num / den);
    else
        tbbt_json_null(j);
}

static void json_hist(struct tbbt_json *j, const char *key, const struct tbbt_hist *h)
{
    tbbt_json_key(j, key);
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "count", h->count);
    tbbt_json_kv_double(j, "mean_us", tbbt_hist_mean(h) / 1000.0);
    tbbt_json_kv_double(j, "p50_us", us(tbbt_hist_quantile(h, 0.5)));
    tbbt_json_kv_double(j, "p99_us", us(tbbt_hist_quantile(h, 0.99)));
    tbbt_json_kv_double(j, "max_us", us(h->max));
    tbbt_json_end_object(j);
}

static void json_latency(struct tbbt_json *j, const struct tbbt_compare *c)
{
    GPtrArray *k = tbbt__cmp_lat_keys(&c->t);

    tbbt_json_key(j, "latency");
    tbbt_json_begin_object(j);
    for (guint i = 0; i < k->len; i++) {
        const struct tbbt__cmp_lat *l = g_hash_table_lookup(c->t.lat, k->pdata[i]);
        tbbt_json_key(j, tbbt__cmp_lat_label(k->pdata[i]));
        tbbt_json_begin_object(j);
        json_hist(j, "orig", &l->a);
        json_hist(j, "replay", &l->b);
        json_ratio(j, "ratio", tbbt_hist_mean(&l->b), tbbt_hist_mean(&l->a));
        tbbt_json_end_object(j);
    }
    tbbt_json_end_object(j);
    g_ptr_array_free(k, TRUE);
}

/* {p50, p99[, max]} in us, or null without samples. */
static void json_quant(struct tbbt_json *j, const char *key, uint64_t n, uint64_t p50,
                       uint64_t p99, const uint64_t *max)
{
    tbbt_json_key(j, key);
    if (!n) {
        tbbt_json_null(j);
        return;
    }
    tbbt_json_begin_object(j);
    tbbt_json_kv_uint(j, "count", n);
    tbbt_json_kv_double(j, "p50", us(p50));
    tbbt_json_kv_double(j, "p99", us(p99));
    if (max)
        tbbt_json_kv_double(j, "max", us(*max));
    tbbt_json_end_object(j);
}

static void json_timing(struct tbbt_json *j, const struct tbbt_compare *c)
{
    struct tbbt_compare_timing tm;
    const struct tbbt_compare_timing *t = &tm;

    tbbt_compare_get_timing(c, &tm);
    tbbt_json_key(j, "timing");
    tbbt_json_begin_object(j);
    json_quant(j, "lag_us", t->lag_count, t->lag_p50, t->lag_p99, &t->lag_max);
    json_quant(j, "held_us", t->held_count, t->held_p50, t->held_p99, &t->held_max);
    json_quant(j, "own_lag_us", t->own_count, t->own_p50, t->own_p99, &t->own_max);
    json_quant(j, "reaction_us", t->react_count, t->react_p50, t->react_p99, &t->react_max);
    tbbt_json_key(j, "turnaround_us");
    tbbt_json_begin_object(j);
    json_quant(j, "orig", t->turn_count[0], t->turn_p50[0], t->turn_p99[0], NULL);
    json_quant(j, "replay", t->turn_count[1], t->turn_p50[1], t->turn_p99[1], NULL);
    tbbt_json_end_object(j);
    tbbt_json_key(j, "lag_series");
    tbbt_json_begin_array(j);
    for (guint i = 0; i < c->t.lag_series->len; i++) {
        const struct tbbt__cmp_lagsec *s =
            &g_array_index(c->t.lag_series, struct tbbt__cmp_lagsec, i);
        if (!s->n)
            continue;
        tbbt_json_begin_array(j);
        tbbt_json_uint(j, i);
        tbbt_json_double(j, s->sum / (double)s->n / 1000.0);
        tbbt_json_double(j, (double)s->max / 1000.0);
        tbbt_json_end_array(j);
    }
    tbbt_json_end_array(j);
    tbbt_json_end_object(j);
    tbbt_json_key(j, "rate");
    tbbt_json_begin_object(j);
    tbbt_json_kv_double(j, "orig_ops_s", t->rate[0]);
    tbbt_json_kv_double(j, "replay_ops_s", t->rate[1]);
    json_ratio(j, "ratio", t->rate[1], t->rate[0]);
    tbbt_json_end_object(j);
}

static void json_identical_fraction(struct tbbt_json *j, const struct tbbt_compare *c)
{
    json_ratio(j, "identical_fraction", (double)c->cnt.identical, (double)c->cnt.matched);
}

static void json_extra(struct tbbt_json *j, const struct tbbt_compare *c)
{
    tbbt_json_kv_object(j, "extra");
    for (int i = 0; i < TBBT_COMPARE_NEXTRA; i++)
        tbbt_json_kv_uint(j, extra_names[i], c->cnt.extra[i]);
    tbbt_json_end_object(j);
}

char *tbbt_compare_json(const struct tbbt_compare *c)
{
    struct tbbt_json j;

    tbbt_json_init(&j);
    tbbt_json_begin_object(&j);
    tbbt_json_kv_string(&j, "tool", "tbbt-compare");
    tbbt_json_kv_string(&j, "version", TBBT_VERSION);
    tbbt_json_kv_string(&j, "original", c->o.trace_a);
    tbbt_json_kv_string(&j, "replay", c->o.trace_b);
    tbbt_json_kv_string(&j, "image_root", tbbt_compare_root_b(c));
    tbbt_json_kv_double(&j, "speed", c->o.speed);
    tbbt_json_kv_uint(&j, "horizon", c->o.horizon);
    tbbt_json_kv_bool(&j, "credentials", c->cnt.credentials);
#define CMP_COUNT(key, member) tbbt_json_kv(&j, key, c->cnt.member);
#define CMP_TABLE(key, kind) json_table(&j, c, key, TBBT_COMPARE_##kind);
#define CMP_OWN(name) json_##name(&j, c);
#include "compare/report-keys.def"
    tbbt_json_end_object(&j);
    return tbbt_json_finish(&j);
}

/* ---- text ---------------------------------------------------------------------------------- */

static double pct(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

static void print_example(const struct tbbt_compare *c, FILE *out, const char *who, int side,
                          uint64_t seq)
{
    const char *line;

    if (seq == UINT64_MAX)
        return;
    line = g_hash_table_lookup(c->lines[side], (gpointer)(uintptr_t)seq);
    fprintf(out, "      %-8s #%-8" PRIu64 " %s\n", who, seq, line ? line : "(not formatted)");
}

static void print_table(const struct tbbt_compare *c, FILE *out, const char *title,
                        enum tbbt_compare_kind kind, uint64_t pairs)
{
    GPtrArray *a = tbbt__cmp_sorted(c, kind);

    if (a->len == 0) {
        g_ptr_array_free(a, TRUE);
        return;
    }
    fprintf(out, "\n%s", title);
    if (pairs != UINT64_MAX)
        fprintf(out, " (pairs: %" PRIu64 ")", pairs);
    fputc('\n', out);
    for (guint i = 0; i < a->len && i < SHOW_KEYS; i++) {
        const struct tbbt__cmp_diff *d = a->pdata[i];
        fprintf(out, "  %-36s %10" PRIu64 "\n", d->key, d->n);
        for (guint e = 0; e < d->ex->len; e++) {
            const struct tbbt__cmp_example *x =
                &g_array_index(d->ex, struct tbbt__cmp_example, e);
            print_example(c, out, "original", 0, x->a_seq);
            print_example(c, out, "replay", 1, x->b_seq);
        }
    }
    if (a->len > SHOW_KEYS)
        fprintf(out, "  ... %u more (see --json)\n", a->len - SHOW_KEYS);
    g_ptr_array_free(a, TRUE);
}

static void print_counts(const struct tbbt_compare *c, FILE *out)
{
    const struct tbbt_compare_counts *n = &c->cnt;
    uint64_t nfs = n->ops_original - n->original_not_nfs;

    fprintf(out, "original     %s\nreplay       %s (image root %s)\n", c->o.trace_a,
            c->o.trace_b, tbbt_compare_root_b(c));
    fprintf(out, "key          procedure, objects, names, READ/WRITE offset%s\n",
            n->credentials ? ", credential (the traces carry them)"
                           : " (no credentials in the traces)");
    fprintf(out, "operations   original %" PRIu64 " (NFSv2/v3 %" PRIu64 ", not compared %" PRIu64
                 ": MOUNT, NULL, NFSv4), replay %" PRIu64 "\n",
            n->ops_original, nfs, n->original_not_nfs, n->ops_replay);
    fprintf(out, "matched      %" PRIu64 " (%.2f%% of the original's NFS operations)\n",
            n->matched, pct(n->matched, nfs));
    fprintf(out, "identical    %" PRIu64 " (%.2f%% of matched; status unchecked %" PRIu64 ")\n",
            n->identical, pct(n->identical, n->matched), n->status_unchecked);
    fprintf(out, "missing      %" PRIu64 " (naming an unmapped object: %" PRIu64 ")\n",
            n->missing, n->missing_unmapped);
    fprintf(out, "extra        %" PRIu64 ": start-up %" PRIu64 ", verify %" PRIu64
                 ", retry %" PRIu64 ", other %" PRIu64 "\n",
            n->extra[0] + n->extra[1] + n->extra[2] + n->extra[3], n->extra[0], n->extra[1],
            n->extra[2], n->extra[3]);
    fprintf(out, "differences  pairs with argument %" PRIu64 ", status %" PRIu64
                 ", reply %" PRIu64 " differences\n",
            n->pairs_arg_diff, n->pairs_status_diff, n->pairs_reply_diff);
    if (n->credentials && c->map.startup_end_b == 0)
        fprintf(out, "note         the replay holds none of the player's start-up: its capture "
                     "began after the replay did, so the original's first operations are "
                     "missing and later ones of the same keys may pair one off\n");
    fprintf(out, "not counted  pairs with image reply differences %" PRIu64
                 " (directories' size, link count), racy replies %" PRIu64 "\n",
            n->pairs_reply_image, n->pairs_reply_racy);
    fprintf(out, "objects      mapped %" PRIu64 " (%" PRIu64 " by path, %" PRIu64
                 " with ambiguous paths), unmapped %" PRIu64 ", remapped %" PRIu64
                 ", conflicts %" PRIu64 "\n",
            n->objects_mapped, n->objects_by_path, n->objects_ambiguous, n->objects_unmapped,
            n->objects_remapped, n->mapping_conflicts);
}

static void print_latency(const struct tbbt_compare *c, FILE *out)
{
    GPtrArray *k = tbbt__cmp_lat_keys(&c->t);

    if (k->len) {
        fprintf(out, "\nLatency of matched pairs (us)\n  %-23s  %-35s  %-35s\n", "", "original",
                "replay");
        fprintf(out, "  %-14s %8s  %8s %8s %8s %8s  %8s %8s %8s %8s %7s\n", "procedure", "count",
                "mean", "p50", "p99", "max", "mean", "p50", "p99", "max", "ratio");
    }
    for (guint i = 0; i < k->len; i++) {
        const struct tbbt__cmp_lat *l = g_hash_table_lookup(c->t.lat, k->pdata[i]);
        const struct tbbt_hist *h[2] = {&l->a, &l->b};
        fprintf(out, "  %-14s %8" PRIu64, tbbt__cmp_lat_label(k->pdata[i]),
                MAX(l->a.count, l->b.count));
        for (int s = 0; s < 2; s++)
            fprintf(out, "  %8.1f %8.1f %8.1f %8.1f", tbbt_hist_mean(h[s]) / 1000.0,
                    us(tbbt_hist_quantile(h[s], 0.5)), us(tbbt_hist_quantile(h[s], 0.99)),
                    us(h[s]->max));
        double ma = tbbt_hist_mean(&l->a), mb = tbbt_hist_mean(&l->b);
        if (ma > 0)
            fprintf(out, " %7.2f\n", mb / ma);
        else
            fprintf(out, " %7s\n", "-");
    }
    g_ptr_array_free(k, TRUE);
}

static void print_series(const struct tbbt_compare *c, FILE *out)
{
    GArray *s = c->t.lag_series;
    guint step = s->len > SERIES_ROWS ? (s->len + SERIES_ROWS - 1) / SERIES_ROWS : 1;

    if (!s->len)
        return;
    fprintf(out, "  lag over time (second of the replay: mean, max lag in us%s)\n",
            step > 1 ? "; every few seconds" : "");
    for (guint i = 0; i < s->len; i += step) {
        guint at = i + step >= s->len ? s->len - 1 : i;
        const struct tbbt__cmp_lagsec *x = &g_array_index(s, struct tbbt__cmp_lagsec, at);
        if (x->n)
            fprintf(out, "    %6u s  %12.1f %12.1f\n", at, x->sum / (double)x->n / 1000.0,
                    (double)x->max / 1000.0);
        if (at == s->len - 1)
            break;
    }
}

static void print_timing(const struct tbbt_compare *c, FILE *out)
{
    struct tbbt_compare_timing t;

    tbbt_compare_get_timing(c, &t);
    fprintf(out, "\nTiming on the wire (speed %g)\n", c->o.speed);
    fprintf(out, "  |lag| (replay call - original call / speed, from the first pair): p50 %.1f us,"
                 " p99 %.1f us, max %.1f us (%" PRIu64 " pairs)\n",
            us(t.lag_p50), us(t.lag_p99), us(t.lag_max), t.lag_count);
    fprintf(out, "  held by replies (calls whose dependencies' replay replies came after their due"
                 " time): %" PRIu64 ", by p50 %.1f us, p99 %.1f us, max %.1f us\n",
            t.held_count, us(t.held_p50), us(t.held_p99), us(t.held_max));
    fprintf(out, "  the player's own |lag| (from the later of due time and those replies): p50 %.1f"
                 " us, p99 %.1f us, max %.1f us; reaction of held calls (releasing reply -> call):"
                 " p50 %.1f us, p99 %.1f us\n",
            us(t.own_p50), us(t.own_p99), us(t.own_max), us(t.react_p50), us(t.react_p99));
    fprintf(out, "  turnaround (reply of the endpoint's previous call -> this call): original "
                 "p50 %.1f us, p99 %.1f us (%" PRIu64 "); replay p50 %.1f us, p99 %.1f us (%"
                 PRIu64 ")\n",
            us(t.turn_p50[0]), us(t.turn_p99[0]), t.turn_count[0], us(t.turn_p50[1]),
            us(t.turn_p99[1]), t.turn_count[1]);
    print_series(c, out);
    fprintf(out, "\nRates over the matched span: original %.1f ops/s, replay %.1f ops/s",
            t.rate[0], t.rate[1]);
    if (t.rate[0] > 0)
        fprintf(out, ", ratio %.3f", t.rate[1] / t.rate[0]);
    fputc('\n', out);
}

void tbbt_compare_print(const struct tbbt_compare *c, FILE *out)
{
    print_counts(c, out);
    print_table(c, out, "Missing (original operations not replayed) by procedure",
                TBBT_COMPARE_MISSING, UINT64_MAX);
    print_table(c, out, "Extra retries by procedure", TBBT_COMPARE_EXTRA_RETRY, UINT64_MAX);
    print_table(c, out, "Other extra operations by procedure", TBBT_COMPARE_EXTRA_OTHER,
                UINT64_MAX);
    print_table(c, out, "Argument differences", TBBT_COMPARE_ARG, c->cnt.pairs_arg_diff);
    print_table(c, out, "Status differences", TBBT_COMPARE_STATUS, c->cnt.pairs_status_diff);
    print_table(c, out, "Reply differences", TBBT_COMPARE_REPLY, c->cnt.pairs_reply_diff);
    print_table(c, out, "Reply differences of the image (not counted: a directory's size and "
                "link count follow entries and subdirectories the trace never saw, which the "
                "image lacks)", TBBT_COMPARE_REPLY_IMAGE, c->cnt.pairs_reply_image);
    print_table(c, out, "Racy replies (not counted: the original overlapped another request "
                "changing the object its reply shows)", TBBT_COMPARE_REPLY_RACY,
                c->cnt.pairs_reply_racy);
    print_table(c, out, "Set-to-client times (not counted as differences)",
                TBBT_COMPARE_CLIENT_TIME, UINT64_MAX);
    print_latency(c, out);
    print_timing(c, out);
}
