/* SPDX-License-Identifier: MIT */
/*
 * tbbt-mpi without MPI (tbbt-mpi.h): built when pkg-config finds no ompi-c.  The module
 * is always inactive: one rank of one, every collective completes at once with the
 * caller's own data, and nothing is ever sent.  A tool built this way and started by
 * mpirun runs N independent copies, each as if alone (docs/mpi.md).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "mpi/tbbt-mpi.h"

static char host[256];

int tbbt_mpi_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    return 0;
}

void tbbt_mpi_finalize(void)
{
}

bool tbbt_mpi_active(void)
{
    return false;
}

bool tbbt_mpi_compiled(void)
{
    return false;
}

int tbbt_mpi_rank(void)
{
    return 0;
}

int tbbt_mpi_size(void)
{
    return 1;
}

const char *tbbt_mpi_host(void)
{
    if (host[0] == '\0' && gethostname(host, sizeof host - 1) != 0)
        strcpy(host, "localhost");
    return host;
}

const char *tbbt_mpi_error(void)
{
    return "";
}

int tbbt_mpi_barrier(void)
{
    return 0;
}

int tbbt_mpi_clock_offsets(unsigned rounds, struct tbbt_mpi_offset *mine,
                           struct tbbt_mpi_offset *all)
{
    (void)rounds;
    *mine = (struct tbbt_mpi_offset){ 0, 0 };
    if (all)
        all[0] = *mine;
    return 0;
}

int tbbt_mpi_bcast(void *buf, size_t len)
{
    (void)buf;
    (void)len;
    return 0;
}

int tbbt_mpi_gather(const void *data, size_t len, GPtrArray **out)
{
    *out = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    g_ptr_array_add(*out, g_bytes_new(data, len));
    return 0;
}

int tbbt_mpi_agree(int rc, const char *why, char **first_why)
{
    if (first_why)
        *first_why = (rc != 0 && why) ? g_strdup(why) : NULL;
    return rc;
}

int tbbt_mpi_send_all(int tag, GBytes *msg)
{
    (void)tag;
    (void)msg;
    return 0;
}

int tbbt_mpi_recv(int *from, int *tag, GBytes **msg)
{
    (void)from;
    (void)tag;
    *msg = NULL;
    return -EAGAIN;
}

unsigned tbbt_mpi_progress(void)
{
    return 0;
}

int tbbt_mpi_drain(void)
{
    return 0;
}
