/* SPDX-License-Identifier: MIT */
/*
 * tbbt-play as one of N MPI ranks (play-mpi.h; docs/mpi.md): the ranks' shares, the
 * agreement and the start instant, and the channel thread of the replay.
 *
 * Channel messages (tags below TBBT_MPI_TAG_MAX; between two ranks they arrive in the
 * order sent, whatever their tags, since the thread receives any tag):
 *   TAG_NOTICE  the engine's notice messages (engine-peer.c), as they are
 *   TAG_END     u32 status (0: ran to its end, 1: stopped early)  then the reason text
 * A rank sends its TAG_END after its last notice; the thread ends once it has sent its own
 * and received every other rank's.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "player/play-mpi.h"
#include "util/buf.h"
#include "util/bytes.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/util.h"

#define PROG "tbbt-play"
#define TAG_NOTICE 0x7001
#define TAG_END 0x7002
#define OWNER_SEED 0x74626274u          /* "tbbt" */
#define POLL_NS 100000                  /* the thread looks for messages this often with
                                           notices to carry (--distribute clients) */
#define POLL_IDLE_NS 10000000           /* ... and without: only a rank's end to hear of */
#define START_MARGIN_NS 100000000ull  /* the start instant at least this far ahead: ranks
                                          that share cores get to their sleep in time */

void tbbt_play_images_of(enum tbbt_play_dist dist, int rank, int size, uint32_t first,
                         uint32_t clones, struct tbbt_play_images *img)
{
    if (dist != TBBT_PLAY_DIST_CLONES || size <= 1) {
        *img = (struct tbbt_play_images){.first = first, .stride = 1, .count = clones};
        return;
    }
    uint32_t r = (uint32_t)rank, n = (uint32_t)size;
    img->first = first + r;
    img->stride = n;
    img->count = clones > r ? (clones - r + n - 1) / n : 0;
}

struct client_load {
    const char *key;
    uint64_t load;
};

static gint load_cmp(gconstpointer a, gconstpointer b)
{
    const struct client_load *x = a, *y = b;
    if (x->load != y->load)
        return x->load > y->load ? -1 : 1;
    return strcmp(x->key, y->key);
}

void tbbt_play_owner_plan(struct tbbt_play_owner *o, GHashTable *load)
{
    if (o->size <= 1 || !load)
        return;
    GArray *v = g_array_new(FALSE, FALSE, sizeof(struct client_load));
    GHashTableIter it;
    gpointer k, n;
    g_hash_table_iter_init(&it, load);
    while (g_hash_table_iter_next(&it, &k, &n))
        g_array_append_val(v, ((struct client_load){k, GPOINTER_TO_SIZE(n)}));
    g_array_sort(v, load_cmp);
    uint64_t *sum = g_new0(uint64_t, (gsize)o->size);
    o->plan = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    for (guint i = 0; i < v->len; i++) {
        const struct client_load *c = &g_array_index(v, struct client_load, i);
        int best = 0;
        for (int r = 1; r < o->size; r++)
            if (sum[r] < sum[best])
                best = r;
        sum[best] += c->load;
        g_hash_table_insert(o->plan, g_strdup(c->key), GINT_TO_POINTER(best + 1));
    }
    g_free(sum);
    g_array_free(v, TRUE);
}

bool tbbt_play_owner_mine(const struct tbbt_trace_rec *rec, const struct tbbt_eptab *eps,
                          void *arg)
{
    struct tbbt_play_owner *o = arg;
    if (o->size <= 1)
        return true;
    if (!o->cache)
        o->cache = g_array_new(FALSE, TRUE, sizeof(uint32_t));
    if (rec->endpoint < o->cache->len && g_array_index(o->cache, uint32_t, rec->endpoint))
        return g_array_index(o->cache, uint32_t, rec->endpoint) - 1 == (uint32_t)o->rank;
    const struct tbbt_endpoint *ep = tbbt_eptab_get(eps, rec->endpoint);
    char key[64];
    if (!ep)
        g_snprintf(key, sizeof(key), "?");
    else if (o->by_connection)
        g_snprintf(key, sizeof(key), "%s:%u", ep->client, ep->client_port);
    else
        g_snprintf(key, sizeof(key), "%s", ep->client);
    gpointer planned = o->plan ? g_hash_table_lookup(o->plan, key) : NULL;
    uint32_t owner = planned ? (uint32_t)(GPOINTER_TO_INT(planned) - 1)
                     : (uint32_t)(tbbt_hash(key, strlen(key), OWNER_SEED) % (uint64_t)o->size);
    if (rec->endpoint < (1u << 24)) {
        if (rec->endpoint >= o->cache->len)
            g_array_set_size(o->cache, rec->endpoint + 1);
        g_array_index(o->cache, uint32_t, rec->endpoint) = owner + 1;
    }
    if (!o->clients)
        o->clients = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    if (g_hash_table_add(o->clients, g_strdup(key)))
        o->nmine += owner == (uint32_t)o->rank;
    return owner == (uint32_t)o->rank;
}

void tbbt_play_owner_fini(struct tbbt_play_owner *o)
{
    if (o->cache)
        g_array_free(o->cache, TRUE);
    if (o->clients)
        g_hash_table_destroy(o->clients);
    if (o->plan)
        g_hash_table_destroy(o->plan);
    o->cache = NULL;
    o->clients = NULL;
    o->plan = NULL;
}

int tbbt_play_mpi_agree(int rc, const char *why)
{
    char *first = NULL;
    int r = tbbt_mpi_agree(rc < 0 ? rc : 0, why, &first);
    if (r == -EIO && tbbt_mpi_rank() == 0)
        fprintf(stderr, PROG ": MPI: %s\n", tbbt_mpi_error());
    else if (r < 0 && tbbt_mpi_rank() == 0 && rc == 0)
        fprintf(stderr, PROG ": %s\n", first ? first : "another rank failed");
    else if (r < 0 && tbbt_mpi_rank() == 0 && first && !g_str_has_prefix(first, "rank 0 "))
        fprintf(stderr, PROG ": %s\n", first);
    g_free(first);
    return r < 0 ? -1 : 0;
}

int tbbt_play_mpi_sync(struct tbbt_play_sync *s)
{
    int size = tbbt_mpi_size();
    g_free(s->all);
    s->all = tbbt_mpi_rank() == 0 ? g_new0(struct tbbt_mpi_offset, size) : NULL;
    if (tbbt_mpi_clock_offsets(64, &s->mine, s->all) < 0)
        return -EIO;
    uint64_t start = 0;
    if (tbbt_mpi_rank() == 0) {
        uint64_t rtt = 0;
        for (int i = 0; i < size; i++)
            rtt = MAX(rtt, s->all[i].rtt_ns);
        start = tbbt_now_ns() + MAX(START_MARGIN_NS, 20 * rtt);
    }
    if (tbbt_mpi_bcast(&start, sizeof(start)) < 0)
        return -EIO;
    s->start_at_ns = (uint64_t)((int64_t)start + s->mine.offset_ns);
    return 0;
}

/* ---- the channel thread -------------------------------------------------------------- */

struct tbbt_play_chan {
    pthread_t thread;
    int stop_fd;                /* the engine's stop eventfd (borrowed) */
    int done_fd;                /* eventfd: this rank's replay is over */
    struct tbbt_engine_peer *peer;
    atomic_int rc;
    char why[256];              /* this rank's reason (set before done_fd is written) */
    char *first_stop;           /* the first other rank that stopped early */
    bool started;
};

/* Sends the engine's queued notices. */
static void send_notices(struct tbbt_play_chan *c)
{
    GBytes *b;
    if (!c->peer)
        return;
    uint64_t v;
    ssize_t r = read(c->peer->out_fd, &v, sizeof(v));
    (void)r;
    while ((b = g_async_queue_try_pop(c->peer->out)) != NULL) {
        if (tbbt_mpi_send_all(TAG_NOTICE, b) < 0)
            tbbt_log(TBBT_LOG_WARN, "MPI: %s", tbbt_mpi_error());
        g_bytes_unref(b);
    }
}

static void stop_engine(struct tbbt_play_chan *c)
{
    uint64_t one = 1;
    ssize_t w = write(c->stop_fd, &one, sizeof(one));
    (void)w;
}

/* One received message; returns 1 for another rank's end, else 0. */
static int on_message(struct tbbt_play_chan *c, int from, int tag, GBytes *msg)
{
    gsize len = 0;
    const uint8_t *p = g_bytes_get_data(msg, &len);
    if (tag == TAG_NOTICE && c->peer) {
        g_async_queue_push(c->peer->in, g_bytes_ref(msg));
        uint64_t one = 1;
        ssize_t w = write(c->peer->in_fd, &one, sizeof(one));
        (void)w;
        return 0;
    }
    if (tag != TAG_END)
        return 0;
    struct tbbt_buf b;
    tbbt_buf_init(&b, p, len);
    uint32_t status = tbbt_buf_get_be32(&b);
    if ((status != 0 || b.trunc) && !c->first_stop) {
        /* its text is "(host): why" */
        size_t n = MIN(tbbt_buf_left(&b), 300);
        c->first_stop = n ? g_strdup_printf("rank %d %.*s", from, (int)n, (const char *)b.p)
                          : g_strdup_printf("rank %d: stopped", from);
        stop_engine(c);
    }
    return 1;
}

static void *chan_main(void *arg)
{
    struct tbbt_play_chan *c = arg;
    int others = tbbt_mpi_size() - 1, ended = 0;
    bool sent_end = false;
    struct pollfd pf[2] = {{.fd = c->done_fd, .events = POLLIN},
                           {.fd = c->peer ? c->peer->out_fd : -1, .events = POLLIN}};
    while (!sent_end || ended < others) {
        send_notices(c);
        int from, tag;
        GBytes *msg;
        int rc;
        while ((rc = tbbt_mpi_recv(&from, &tag, &msg)) == 0) {
            ended += on_message(c, from, tag, msg);
            g_bytes_unref(msg);
        }
        if (rc == -EIO) {   /* the job is broken: stop, the report says what completed */
            fprintf(stderr, PROG ": MPI: %s\n", tbbt_mpi_error());
            if (!c->first_stop)
                c->first_stop = g_strdup_printf("MPI: %s", tbbt_mpi_error());
            stop_engine(c);
            break;
        }
        tbbt_mpi_progress();
        if (!sent_end && (pf[0].revents & POLLIN)) {
            send_notices(c);    /* the engine's last ones go before the end */
            bool stopped = atomic_load(&c->rc) != 0;
            GByteArray *b = g_byte_array_new();
            tbbt_bytes_put_be32(b, stopped);
            if (stopped) {
                char *why = g_strdup_printf("(%s): %s", tbbt_mpi_host(), c->why);
                g_byte_array_append(b, (const uint8_t *)why, (guint)strlen(why));
                g_free(why);
            }
            GBytes *m = g_byte_array_free_to_bytes(b);
            tbbt_mpi_send_all(TAG_END, m);
            g_bytes_unref(m);
            sent_end = true;
            pf[0].fd = -1;
        }
        struct timespec ts = {0, c->peer ? POLL_NS : POLL_IDLE_NS};
        pf[0].revents = pf[1].revents = 0;
        ppoll(pf, 2, &ts, NULL);
    }
    tbbt_mpi_drain();
    return NULL;
}

struct tbbt_play_chan *tbbt_play_chan_start(int stop_fd, struct tbbt_engine_peer *peer)
{
    struct tbbt_play_chan *c = g_new0(struct tbbt_play_chan, 1);
    c->stop_fd = stop_fd;
    c->peer = peer;
    c->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (c->done_fd < 0 || pthread_create(&c->thread, NULL, chan_main, c) != 0) {
        tbbt_log(TBBT_LOG_WARN, "MPI channel thread: %s", g_strerror(errno));
        return c;   /* _join() then does nothing: the ranks are not told of each other */
    }
    c->started = true;
    return c;
}

void tbbt_play_chan_done(struct tbbt_play_chan *c, int rc, const char *why)
{
    g_strlcpy(c->why, why ? why : "stopped", sizeof(c->why));
    atomic_store(&c->rc, rc);
    uint64_t one = 1;
    ssize_t w = write(c->done_fd, &one, sizeof(one));
    (void)w;
}

const char *tbbt_play_chan_join(struct tbbt_play_chan *c)
{
    if (c->started)
        pthread_join(c->thread, NULL);
    c->started = false;
    return c->first_stop;
}

void tbbt_play_chan_free(struct tbbt_play_chan *c)
{
    if (!c)
        return;
    tbbt_play_chan_join(c);
    if (c->done_fd >= 0)
        close(c->done_fd);
    g_free(c->first_stop);
    g_free(c);
}

/* ---- a rank's part ------------------------------------------------------------------- */

int tbbt_play_mpi_rank_report(const char *dir, const struct tbbt_report *rep,
                              const struct tbbt_report_counts *cn,
                              const struct tbbt_report_verify *v)
{
    char *path = g_strdup_printf("%s/rank-%d.json", dir, tbbt_mpi_rank());
    char *j = tbbt_report_json(rep, cn, v);
    int w = g_mkdir_with_parents(dir, 0755) < 0 ? -errno
            : tbbt_json_write_file(path, j);
    if (w < 0)
        fprintf(stderr, PROG ": cannot write '%s': %s\n", path, tbbt_strerror(w));
    g_free(j);
    g_free(path);
    return w < 0 ? -1 : 0;
}

void tbbt_play_mpi_rank_end(struct tbbt_report_rank *ri, const struct tbbt_report *rep,
                            const struct tbbt_report_counts *cn,
                            const struct tbbt_play_sync *sync, uint64_t started_ns,
                            enum tbbt_play_dist dist, const struct tbbt_play_images *img,
                            const struct tbbt_engine_peer *peer,
                            const struct tbbt_play_owner *owner)
{
    struct tbbt_mpi_offset after = sync->mine;
    tbbt_mpi_clock_offsets(16, &after, NULL);
    GString *what = g_string_new(NULL);
    if (dist == TBBT_PLAY_DIST_CLONES) {
        g_string_append(what, img->count == 1 ? "image" : "images");
        for (uint32_t i = 0; i < img->count; i++)
            g_string_append_printf(what, "%s%u", i ? "," : " ", img->first + i * img->stride);
    } else if (owner->size <= 1) {
        g_string_append(what, "all clients");
    } else {
        g_string_append_printf(what, "clients %u of %u (by %s)", owner->nmine,
                               owner->clients ? g_hash_table_size(owner->clients) : 0,
                               owner->by_connection ? "connection" : "address");
    }
    *ri = (struct tbbt_report_rank){
        .rank = (uint32_t)tbbt_mpi_rank(), .host = tbbt_mpi_host(),
        .what = g_string_free(what, FALSE),
        .ops_issued = cn->ops_issued, .ops_completed = cn->ops_completed,
        .replay_failures = tbbt_report_failures(rep),
        .throughput_ops = cn->wall_seconds > 0 ? (double)cn->ops_completed / cn->wall_seconds
                                               : NAN,
        .wall_seconds = cn->wall_seconds,
        .cpu_user_seconds = cn->cpu_user_seconds, .cpu_system_seconds = cn->cpu_system_seconds,
        .offset_us = (double)sync->mine.offset_ns / 1e3,
        .rtt_us = (double)sync->mine.rtt_ns / 1e3,
        .start_late_us = started_ns >= sync->start_at_ns
                         ? (double)(started_ns - sync->start_at_ns) / 1e3 : 0,
        .drift_us = (double)(after.offset_ns - sync->mine.offset_ns) / 1e3,
        .finished = cn->finished, .error = cn->error};
    if (peer) {
        ri->cross_rank_deps = peer->deps;
        ri->cross_rank_wait_seconds = peer->wait_seconds;
        ri->notices_sent = peer->notices_sent;
    }
}

/* ---- the merged report -------------------------------------------------------------- */

/* Rank 0: the merged report of the n gathered blobs. */
static int merge_at_root(GPtrArray *blobs, const struct tbbt_play_sync *sync,
                         const char *distribute, struct tbbt_report **mrep,
                         struct tbbt_report_counts *mcn, struct tbbt_report_rank *mall)
{
    guint n = blobs->len;
    struct tbbt_report_rank *ranks = g_new0(struct tbbt_report_rank, n);
    struct tbbt_report_mpi m = {.ranks = n, .distribute = distribute};
    double late_min = INFINITY, late_max = -INFINITY;
    struct tbbt_report *all = NULL;
    *mall = (struct tbbt_report_rank){.verify.ok = true};
    int rc = 0;
    for (guint i = 0; i < n; i++) {
        struct tbbt_report *r = NULL;
        struct tbbt_report_counts c;
        struct tbbt_report_rank *ri = &ranks[i];
        struct tbbt_mpi_offset off = sync->all ? sync->all[i] : (struct tbbt_mpi_offset){0};
        char why[256];
        if (tbbt_report_unpack(g_ptr_array_index(blobs, i), off.offset_ns, &r, &c, ri, why,
                               sizeof(why)) < 0) {
            fprintf(stderr, PROG ": the report of rank %u: %s\n", i, why);
            rc = -1;
            break;
        }
        late_min = MIN(late_min, ri->start_late_us);
        late_max = MAX(late_max, ri->start_late_us);
        m.offset_error_us = MAX(m.offset_error_us, (double)off.rtt_ns / 2e3);
        m.cross_rank_deps += ri->cross_rank_deps;
        m.cross_rank_wait_seconds += ri->cross_rank_wait_seconds;
        m.notices_sent += ri->notices_sent;
        mall->verified |= ri->verified;
        mall->verify_failed |= ri->verify_failed;
        if (ri->verified) {
            mall->verify.ok &= ri->verify.ok;
            mall->verify.checked += ri->verify.checked;
            mall->verify.mismatches += ri->verify.mismatches;
        }
        if (!all) {
            all = r;
            *mcn = c;
        } else {
            tbbt_report_merge(all, r);
            tbbt_report_counts_merge(mcn, &c);
            tbbt_report_free(r);
        }
    }
    if (rc == 0) {
        m.start_skew_us = late_max - late_min;
        tbbt_report_set_mpi(all, &m, ranks, n);
        *mrep = all;
    } else {
        tbbt_report_free(all);
    }
    g_free(ranks);
    return rc;
}

int tbbt_play_mpi_merge(const struct tbbt_report *rep, const struct tbbt_report_counts *cn,
                        const struct tbbt_report_rank *mine, const struct tbbt_play_sync *sync,
                        const char *distribute, struct tbbt_report **mrep,
                        struct tbbt_report_counts *mcn, struct tbbt_report_rank *mall)
{
    *mrep = NULL;
    GBytes *b = tbbt_report_pack(rep, cn, mine);
    gsize len = 0;
    const void *data = g_bytes_get_data(b, &len);
    GPtrArray *blobs = NULL;
    int rc = tbbt_mpi_gather(data, len, &blobs);
    g_bytes_unref(b);
    if (rc < 0) {
        fprintf(stderr, PROG ": MPI: %s\n", tbbt_mpi_error());
        return -1;
    }
    if (tbbt_mpi_rank() != 0)
        return 0;
    rc = merge_at_root(blobs, sync, distribute, mrep, mcn, mall);
    g_ptr_array_unref(blobs);
    return rc;
}
