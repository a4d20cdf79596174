/* SPDX-License-Identifier: MIT */
/*
 * mpi-smoke: proves the MPI path of src/mpi/tbbt-mpi.h on a machine (docs/mpi.md).
 * Run as `mpirun -np N mpi-smoke [ROUNDS [spin|sleep [FAIL_RANK]]]` (as root add
 * --allow-run-as-root, with more ranks than cores --oversubscribe).  Every rank starts
 * MPI, passes an agreement and a barrier, measures its clock offset from rank 0 by ROUNDS
 * round trips (default 64), takes a start instant from rank 0 by broadcast, waits for it
 * (spin: sleeps, then spins the last 200 us, the default; sleep: clock_nanosleep to the
 * instant), and sends rank 0 a line of text by the gather; rank 0 prints one line per
 * rank: rank, host, offset and round trip (us), and how far after the common start
 * instant the rank woke (us, in rank 0's clock).  With FAIL_RANK, that rank fails the
 * agreement: every rank prints the failing rank's reason and exits 1.  Run without
 * mpirun it prints the single-process line.  Exit 0, or 1 on a failure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <glib.h>

#include "mpi/tbbt-mpi.h"
#include "util/util.h"

static bool spin = true;
static int fail_rank = -1;

/* Waits until CLOCK_MONOTONIC reaches t_ns (ns): sleeps, then spins the last 200 us
 * (spin), or sleeps to the instant. */
static void wait_until(uint64_t t_ns)
{
    uint64_t now = tbbt_now_ns();

    if (!spin) {
        prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);   /* wake at the instant, not 50 us on */
        struct timespec ts = { (time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u) };

        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
            ;
        return;
    }
    if (t_ns > now + 200000) {
        uint64_t d = t_ns - now - 200000;
        struct timespec ts = { (time_t)(d / 1000000000u), (long)(d % 1000000000u) };

        nanosleep(&ts, NULL);
    }
    while (tbbt_now_ns() < t_ns)
        ;
}

static int run(unsigned rounds)
{
    struct tbbt_mpi_offset mine;
    uint64_t start0 = 0, woke;
    GPtrArray *lines = NULL;
    char *line, *why = NULL;
    int rc;

    rc = tbbt_mpi_agree(tbbt_mpi_rank() == fail_rank ? -EINVAL : 0, "asked to fail", &why);
    if (rc != 0 && why) {
        fprintf(stderr, "mpi-smoke: rank %d: not going on: %s\n", tbbt_mpi_rank(), why);
        g_free(why);
        return rc;
    }
    if (rc == 0)
        rc = tbbt_mpi_barrier();
    if (rc == 0)
        rc = tbbt_mpi_clock_offsets(rounds, &mine, NULL);
    if (rc != 0)
        return rc;
    if (tbbt_mpi_rank() == 0)
        start0 = tbbt_now_ns() + 50000000;     /* 50 ms from now, rank 0's clock */
    rc = tbbt_mpi_bcast(&start0, sizeof start0);
    if (rc != 0)
        return rc;
    wait_until(start0 + (uint64_t)mine.offset_ns);
    woke = tbbt_now_ns() - (uint64_t)mine.offset_ns;  /* in rank 0's clock */
    line = g_strdup_printf("rank %d/%d host %s offset_us %.3f rtt_us %.3f start_late_us %.3f",
                           tbbt_mpi_rank(), tbbt_mpi_size(), tbbt_mpi_host(),
                           mine.offset_ns / 1e3, mine.rtt_ns / 1e3, (woke - start0) / 1e3);
    rc = tbbt_mpi_gather(line, strlen(line) + 1, &lines);
    g_free(line);
    for (guint i = 0; rc == 0 && lines && i < lines->len; i++)
        printf("%s\n", (const char *)g_bytes_get_data(g_ptr_array_index(lines, i), NULL));
    if (lines)
        g_ptr_array_unref(lines);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned rounds = 64;
    int rc = tbbt_mpi_init(&argc, &argv);

    if (rc == 0 && argc > 1)
        rounds = (unsigned)strtoul(argv[1], NULL, 10);
    if (argc > 2)
        spin = strcmp(argv[2], "sleep") != 0;
    if (argc > 3)
        fail_rank = atoi(argv[3]);
    if (rc == 0)
        rc = run(rounds);
    if (rc == -EIO)
        fprintf(stderr, "mpi-smoke: rank %d: %s\n", tbbt_mpi_rank(), tbbt_mpi_error());
    tbbt_mpi_finalize();
    return rc == 0 ? 0 : 1;
}
