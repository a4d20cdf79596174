/* SPDX-License-Identifier: MIT */
/*
 * tbbt-mpi over Open MPI (tbbt-mpi.h; MPI 3.1, "Open MPI 4.1" in Debian 12): built when
 * pkg-config finds ompi-c (TBBT_HAVE_MPI).  MPI is started only when an MPI launcher
 * started the process (its environment says so), so a tool run by hand never touches
 * MPI and behaves exactly as the build without it.  Everything goes over MPI_COMM_WORLD
 * with MPI_ERRORS_RETURN: an MPI error becomes -EIO with its text in tbbt_mpi_error(),
 * never an abort of the job.  Point-to-point messages of this file use tags from
 * TAG_BASE up, which the player's own messages (docs/mpi.md) do not use.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "mpi/tbbt-mpi.h"
#include "util/util.h"

#define TAG_BASE 0x7b00
#define TAG_PING (TAG_BASE + 1)      /* rank 0 -> r: empty ping */
#define TAG_PONG (TAG_BASE + 2)      /* r -> rank 0: r's clock, one uint64 */
#define TAG_OFFSET (TAG_BASE + 3)    /* rank 0 -> r: {offset_ns, rtt_ns}, two int64 */

static bool active, finalized;
static GArray *sends;   /* of struct pending_send (below) */
static int my_rank, world_size = 1;
static char host[MPI_MAX_PROCESSOR_NAME + 1];
static char err_text[MPI_MAX_ERROR_STRING + 64];

/* True if an MPI launcher started this process (Open MPI's mpirun, PMIx or PMI-1). */
static bool launched_by_mpi(void)
{
    static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK" };

    for (size_t i = 0; i < G_N_ELEMENTS(vars); i++)
        if (getenv(vars[i]))
            return true;
    return false;
}

/* Records the text of MPI error code rc for call `what`; returns -EIO. */
static int fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof msg, "MPI error %d", rc);
    snprintf(err_text, sizeof err_text, "%s: %s", what, msg);
    return -EIO;
}

static void set_host_from_os(void)
{
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
}

int tbbt_mpi_init(int *argc, char ***argv)
{
    int provided = 0, len = 0, rc;

    if (active || finalized || !launched_by_mpi()) {
        if (host[0] == '\0')
            set_host_from_os();
        return 0;
    }
    rc = MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided);
    if (rc != MPI_SUCCESS) {
        set_host_from_os();
        return fail("MPI_Init_thread", rc);
    }
    active = true;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (MPI_Get_processor_name(host, &len) != MPI_SUCCESS || len <= 0)
        set_host_from_os();
    if (provided < MPI_THREAD_SERIALIZED) {
        snprintf(err_text, sizeof err_text,
                 "MPI_Init_thread: MPI_THREAD_SERIALIZED not provided (%d)", provided);
        tbbt_mpi_finalize();
        return -EIO;
    }
    return 0;
}

void tbbt_mpi_finalize(void)
{
    if (!active)
        return;
    tbbt_mpi_drain();
    if (sends) {
        g_array_free(sends, TRUE);
        sends = NULL;
    }
    MPI_Finalize();
    active = false;
    finalized = true;
    my_rank = 0;
    world_size = 1;
}

bool tbbt_mpi_active(void)
{
    return active;
}

bool tbbt_mpi_compiled(void)
{
    return true;
}

int tbbt_mpi_rank(void)
{
    return my_rank;
}

int tbbt_mpi_size(void)
{
    return world_size;
}

const char *tbbt_mpi_host(void)
{
    if (host[0] == '\0')
        set_host_from_os();
    return host;
}

const char *tbbt_mpi_error(void)
{
    return err_text;
}

int tbbt_mpi_barrier(void)
{
    int rc;

    if (!active)
        return 0;
    rc = MPI_Barrier(MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : fail("MPI_Barrier", rc);
}

/* Rank 0's side of the offset measurement with rank r: its best {offset, rtt} in *o,
 * which rank r is sent too. */
static int offsets_lead(int r, unsigned rounds, struct tbbt_mpi_offset *o)
{
    uint64_t best_rtt = UINT64_MAX;
    int64_t best_off = 0, reply[2];
    int rc;

    for (unsigned k = 0; k < rounds; k++) {
        uint64_t t0 = tbbt_now_ns(), tr, t1;

        rc = MPI_Send(NULL, 0, MPI_BYTE, r, TAG_PING, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS)
            rc = MPI_Recv(&tr, 1, MPI_UINT64_T, r, TAG_PONG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return fail("clock offset round trip", rc);
        t1 = tbbt_now_ns();
        if (t1 - t0 < best_rtt) {
            best_rtt = t1 - t0;
            best_off = (int64_t)(tr - (t0 + (t1 - t0) / 2));
        }
    }
    reply[0] = best_off;
    reply[1] = (int64_t)best_rtt;
    rc = MPI_Send(reply, 2, MPI_INT64_T, r, TAG_OFFSET, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return fail("clock offset result", rc);
    *o = (struct tbbt_mpi_offset){ best_off, best_rtt };
    return 0;
}

/* Rank r's side: answers rank 0's pings with its clock, then takes the result. */
static int offsets_follow(unsigned rounds, struct tbbt_mpi_offset *o)
{
    int64_t res[2];
    int rc;

    for (unsigned k = 0; k < rounds; k++) {
        uint64_t tr;

        rc = MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        tr = tbbt_now_ns();
        if (rc == MPI_SUCCESS)
            rc = MPI_Send(&tr, 1, MPI_UINT64_T, 0, TAG_PONG, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS)
            return fail("clock offset round trip", rc);
    }
    rc = MPI_Recv(res, 2, MPI_INT64_T, 0, TAG_OFFSET, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
        return fail("clock offset result", rc);
    *o = (struct tbbt_mpi_offset){ res[0], (uint64_t)res[1] };
    return 0;
}

int tbbt_mpi_clock_offsets(unsigned rounds, struct tbbt_mpi_offset *mine,
                           struct tbbt_mpi_offset *all)
{
    int rc = 0;

    *mine = (struct tbbt_mpi_offset){ 0, 0 };
    if (all)
        all[0] = *mine;
    if (!active)
        return 0;
    if (rounds < 1)
        rounds = 1;
    if (my_rank != 0)
        return offsets_follow(rounds, mine);
    for (int r = 1; r < world_size && rc == 0; r++) {
        struct tbbt_mpi_offset o;

        rc = offsets_lead(r, rounds, &o);
        if (rc == 0 && all)
            all[r] = o;
    }
    return rc;
}

int tbbt_mpi_bcast(void *buf, size_t len)
{
    int rc;

    if (!active || len == 0)
        return 0;
    if (len > INT32_MAX)
        return -E2BIG;
    rc = MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? 0 : fail("MPI_Bcast", rc);
}

/* Rank 0: the gathered bytes at all, lens[r] from rank r, as one GBytes per rank. */
static GPtrArray *split_blobs(const char *all, const int *lens)
{
    GPtrArray *a = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    size_t at = 0;

    for (int r = 0; r < world_size; r++) {
        g_ptr_array_add(a, g_bytes_new(all + at, (size_t)lens[r]));
        at += (size_t)lens[r];
    }
    return a;
}

int tbbt_mpi_gather(const void *data, size_t len, GPtrArray **out)
{
    int mylen = (int)len, rc, *lens = NULL, *displs = NULL;
    char *all = NULL;

    g_assert(len <= INT32_MAX);   /* the header's contract: the counts are MPI ints */
    *out = NULL;
    if (!active) {
        *out = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
        g_ptr_array_add(*out, g_bytes_new(data, len));
        return 0;
    }
    if (my_rank == 0)
        lens = g_new0(int, world_size);
    rc = MPI_Gather(&mylen, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        g_free(lens);
        return fail("MPI_Gather", rc);
    }
    if (my_rank == 0) {
        size_t total = 0;

        displs = g_new0(int, world_size);
        for (int r = 0; r < world_size; r++) {
            displs[r] = (int)total;
            total += (size_t)lens[r];
        }
        all = g_malloc(total ? total : 1);
    }
    rc = MPI_Gatherv(data, mylen, MPI_BYTE, all, lens, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && my_rank == 0)
        *out = split_blobs(all, lens);
    g_free(all);
    g_free(displs);
    g_free(lens);
    return rc == MPI_SUCCESS ? 0 : fail("MPI_Gatherv", rc);
}

/* The lowest failing rank tells every rank its status and reason. */
static int agree_spread(int root, int rc, const char *why, char **first_why)
{
    int32_t hdr[2] = { rc, 0 };
    char *text = NULL;
    int e;

    if (my_rank == root) {
        text = g_strdup_printf("rank %d (%s): %s", my_rank, host, why ? why : "failed");
        hdr[1] = (int32_t)strlen(text) + 1;
    }
    e = MPI_Bcast(hdr, 2, MPI_INT32_T, root, MPI_COMM_WORLD);
    if (e == MPI_SUCCESS && my_rank != root)
        text = g_malloc0((size_t)hdr[1]);
    if (e == MPI_SUCCESS)
        e = MPI_Bcast(text, hdr[1], MPI_CHAR, root, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) {
        g_free(text);
        return fail("MPI_Bcast", e);
    }
    if (first_why)
        *first_why = text;
    else
        g_free(text);
    return hdr[0];
}

int tbbt_mpi_agree(int rc, const char *why, char **first_why)
{
    int mine, lowest, e;

    if (first_why)
        *first_why = NULL;
    if (!active) {
        if (first_why && rc != 0 && why)
            *first_why = g_strdup(why);
        return rc;
    }
    mine = rc != 0 ? my_rank : world_size;
    e = MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS)
        return fail("MPI_Allreduce", e);
    if (lowest == world_size)
        return 0;
    return agree_spread(lowest, rc, why, first_why);
}

/* ---- point-to-point messages ------------------------------------------------------------ */

/* A send in progress: MPI reads from the bytes until the request completes. */
struct pending_send {
    MPI_Request req;
    GBytes *bytes;      /* one reference per send */
};

int tbbt_mpi_send_all(int tag, GBytes *msg)
{
    gsize len = 0;
    const void *data = g_bytes_get_data(msg, &len);

    if (!active || world_size < 2)
        return 0;
    g_assert(tag >= 0 && tag <= TBBT_MPI_TAG_MAX && len < (gsize)INT_MAX);
    if (!sends)
        sends = g_array_new(FALSE, FALSE, sizeof(struct pending_send));
    for (int r = 0; r < world_size; r++) {
        struct pending_send ps;
        int rc;

        if (r == my_rank)
            continue;
        rc = MPI_Isend(data, (int)len, MPI_BYTE, r, tag, MPI_COMM_WORLD, &ps.req);
        if (rc != MPI_SUCCESS)
            return fail("MPI_Isend", rc);
        ps.bytes = g_bytes_ref(msg);
        g_array_append_val(sends, ps);
    }
    return 0;
}

int tbbt_mpi_recv(int *from, int *tag, GBytes **msg)
{
    MPI_Status st;
    int flag = 0, count = 0, rc;

    *msg = NULL;
    if (!active)
        return -EAGAIN;
    rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (rc != MPI_SUCCESS)
        return fail("MPI_Iprobe", rc);
    if (!flag || st.MPI_TAG > TBBT_MPI_TAG_MAX)
        return -EAGAIN;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if (count < 0)
        count = 0;
    void *buf = g_malloc(count ? (size_t)count : 1);
    rc = MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                  MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        g_free(buf);
        return fail("MPI_Recv", rc);
    }
    *from = st.MPI_SOURCE;
    *tag = st.MPI_TAG;
    *msg = g_bytes_new_take(buf, (gsize)count);
    return 0;
}

unsigned tbbt_mpi_progress(void)
{
    guint i = 0;

    while (sends && i < sends->len) {
        struct pending_send *ps = &g_array_index(sends, struct pending_send, i);
        int flag = 0;

        if (MPI_Test(&ps->req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || flag) {
            g_bytes_unref(ps->bytes);
            g_array_remove_index_fast(sends, i);
        } else {
            i++;
        }
    }
    return sends ? sends->len : 0;
}

int tbbt_mpi_drain(void)
{
    int rc = 0;

    while (sends && sends->len > 0) {
        struct pending_send *ps = &g_array_index(sends, struct pending_send, sends->len - 1);
        int r = MPI_Wait(&ps->req, MPI_STATUS_IGNORE);

        if (r != MPI_SUCCESS && rc == 0)
            rc = fail("MPI_Wait", r);
        g_bytes_unref(ps->bytes);
        g_array_set_size(sends, sends->len - 1);
    }
    return rc;
}
