/* The project's MPI reference: a plain MPI_Send/MPI_Recv ping-pong between
 * ranks 0 and 1, one line per size, to set perf/pingpong's numbers beside.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 *   mpirun -np 2 [--mca btl self,vader] build/perf/mpi_pingpong [-s size]
 *          [-r reps] [-m max_size] [-w window] [-t]
 *
 * -t: the latency receives are polled (persistent any-source receive,
 * MPI_Start, MPI_Test until done), the way a runtime layered over MPI has
 * to receive; by default they are plain blocking MPI_Recv, the reference.
 *
 * Prints "mpi_pingpong size=S lat_us=X bw_MBps=Y", measured the way
 * perf/pingpong measures: X is half the median round trip of a strict
 * ping-pong over every iteration of every repetition; Y, the median over
 * the repetitions, streams windows of -w messages
 * (MPI_Isend / MPI_Irecv, MPI_Waitall) with one empty reply per window,
 * in bytes per microsecond (MB/s). Iteration counts match perf/pingpong.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if GV_HAVE_MPI
#include <mpi.h>

#include "stamp.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Iterations per repetition, as perf/pingpong chooses them. */
static int iters_for(size_t size)
{
    return (size <= 4096) ? 20000 : (int)((64u << 20) / size) + 10;
}

/* With -t, receives are polled the way a runtime over MPI must poll
 * them (it cannot block in MPI_Recv): a persistent any-source receive,
 * MPI_Start, then MPI_Test until it completes. */
static int         poll_mode;
static MPI_Request poll_req;

static void recv_one(char *buf, size_t size, int src)
{
    int done = 0;

    if (!poll_mode) {
        MPI_Recv(buf, (int)size, MPI_BYTE, src, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        return;
    }
    MPI_Start(&poll_req);
    while (!done)
        MPI_Test(&poll_req, &done, MPI_STATUS_IGNORE);
}

/* Round trips in microseconds into @a rtt (rank 0 only; returns how
 * many): one timestamp per round trip, as perf/pingpong takes them. */
static int run_lat(char *buf, size_t size, int iters, int rank, double *rtt)
{
    stamp_span_t span;
    uint64_t     prev, now;
    double       ns_per_tick;
    int          i, n = 0;

    if (poll_mode)
        MPI_Recv_init(buf, (int)size, MPI_BYTE, MPI_ANY_SOURCE, 1,
                      MPI_COMM_WORLD, &poll_req);

    MPI_Barrier(MPI_COMM_WORLD);
    stamp_span_begin(&span);
    prev = stamp_ticks();
    for (i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            recv_one(buf, size, 1);
            now      = stamp_ticks();
            rtt[n++] = (double)(now - prev);
            prev     = now;
        } else if (rank == 1) {
            recv_one(buf, size, 0);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    if (poll_mode)
        MPI_Request_free(&poll_req);
    ns_per_tick = stamp_span_rate(&span);
    for (i = 0; i < n; i++)
        rtt[i] *= ns_per_tick * 1e-3;
    return n;
}

/* Streaming bandwidth in MB/s: windows of @a window messages from rank 0,
 * each window answered by an empty message from rank 1. */
static double run_bw(char *buf, size_t size, int iters, int window,
                     MPI_Request *reqs, int rank)
{
    int    nwin = (iters + window - 1) / window, i, j;
    double t0;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (i = 0; i < nwin; i++) {
        if (rank == 0) {
            for (j = 0; j < window; j++)
                MPI_Isend(buf, (int)size, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
                          &reqs[j]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (j = 0; j < window; j++)
                MPI_Irecv(buf, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD,
                          &reqs[j]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
        }
    }
    return (double)size * window * nwin / ((MPI_Wtime() - t0) * 1e6);
}

int main(int argc, char **argv)
{
    size_t       only = 0, max_size = 1u << 20, size;
    int          reps = 7, window = 64, rank, nranks, provided, opt, r;
    char        *buf;
    double       bw[101], *rtt;
    MPI_Request *reqs;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (opt = 1; opt < argc; opt++) {
        if ((strcmp(argv[opt], "-s") == 0) && (opt + 1 < argc))
            only = strtoull(argv[++opt], NULL, 0);
        else if ((strcmp(argv[opt], "-m") == 0) && (opt + 1 < argc))
            max_size = strtoull(argv[++opt], NULL, 0);
        else if ((strcmp(argv[opt], "-r") == 0) && (opt + 1 < argc))
            reps = atoi(argv[++opt]);
        else if ((strcmp(argv[opt], "-w") == 0) && (opt + 1 < argc))
            window = atoi(argv[++opt]);
        else if (strcmp(argv[opt], "-t") == 0)
            poll_mode = 1;
        else {
            if (rank == 0)
                fprintf(stderr, "usage: %s [-s size] [-m max_size] "
                        "[-r reps] [-w window] [-t]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if ((reps < 1) || (reps > 101))
        reps = 7;
    if ((window < 1) || (window > 4096))
        window = 64;
    if (only != 0)
        max_size = only;
    if ((nranks < 2) || (max_size > (1u << 30))) {
        if (rank == 0)
            fprintf(stderr, "mpi_pingpong: needs 2 ranks and sizes up to "
                    "1 GiB\n");
        MPI_Finalize();
        return 2;
    }
    buf  = malloc(max_size);
    reqs = malloc(sizeof(MPI_Request) * (size_t)window);
    rtt  = malloc(sizeof(double) * (size_t)iters_for(8) * (size_t)reps);
    if ((buf == NULL) || (reqs == NULL) || (rtt == NULL))
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 'a', max_size);
    for (size = (only != 0) ? only : 8; size <= max_size; size *= 2) {
        int iters = iters_for(size), n = 0;

        run_lat(buf, size, iters / 10 + 1, rank, rtt); /* warm up */
        for (r = 0; r < reps; r++) {
            n += run_lat(buf, size, iters, rank, rtt + n);
            bw[r] = run_bw(buf, size, iters, window, reqs, rank);
        }
        qsort(rtt, (size_t)n, sizeof(rtt[0]), cmp_double);
        qsort(bw, (size_t)reps, sizeof(bw[0]), cmp_double);
        if (rank == 0)
            printf("mpi_pingpong size=%zu lat_us=%.3f bw_MBps=%.1f\n", size,
                   (n > 0) ? rtt[n / 2] / 2 : 0.0, bw[reps / 2]);
        fflush(stdout);
        if (only != 0)
            break;
    }
    free(rtt);
    free(reqs);
    free(buf);
    MPI_Finalize();
    return 0;
}

#else

int main(void)
{
    fprintf(stderr, "mpi_pingpong: built without MPI (rebuild with MPI=1; "
            "needs libopenmpi-dev)\n");
    return 77;
}

#endif
