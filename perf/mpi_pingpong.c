/* The project's MPI reference: a plain MPI_Send/MPI_Recv ping-pong between
 * ranks 0 and 1, one line per size, to set perf/pingpong's numbers beside.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 *   mpirun -np 2 [--mca btl self,vader] build/perf/mpi_pingpong [-s size]
 *          [-r reps] [-m max_size]
 *
 * Prints "mpi_pingpong size=S lat_us=X bw_MBps=Y": X is half the median
 * round-trip time over the repetitions, Y is S / X (bytes per microsecond,
 * that is MB/s), the same definitions perf/pingpong uses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if GV_HAVE_MPI
#include <mpi.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Enough round trips that one repetition takes about a millisecond or
 * more, so that timer resolution does not matter. */
static int iters_for(size_t size)
{
    if (size <= 1024)
        return 10000;
    if (size <= 65536)
        return 2000;
    return 200;
}

static double run(char *buf, size_t size, int iters, int rank)
{
    double t0;
    int    i;

    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            MPI_Send(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
    }
    /* One-way latency in microseconds. */
    return (MPI_Wtime() - t0) * 1e6 / (2.0 * iters);
}

int main(int argc, char **argv)
{
    size_t only = 0, max_size = 1u << 20, size;
    int    reps = 11, rank, nranks, provided, opt, r;
    char  *buf;
    double lat[101];

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
        else {
            if (rank == 0)
                fprintf(stderr, "usage: %s [-s size] [-m max_size] "
                        "[-r reps]\n", argv[0]);
            MPI_Finalize();
            return 2;
        }
    }
    if ((reps < 1) || (reps > 101))
        reps = 11;
    if (only != 0)
        max_size = only;
    if ((nranks < 2) || (max_size > (1u << 30))) {
        if (rank == 0)
            fprintf(stderr, "mpi_pingpong: needs 2 ranks and sizes up to "
                    "1 GiB\n");
        MPI_Finalize();
        return 2;
    }
    buf = malloc(max_size);
    if (buf == NULL) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(buf, 'a', max_size);
    for (size = (only != 0) ? only : 8; size <= max_size; size *= 2) {
        int iters = iters_for(size);

        run(buf, size, iters / 10 + 1, rank); /* warm up */
        for (r = 0; r < reps; r++)
            lat[r] = run(buf, size, iters, rank);
        qsort(lat, (size_t)reps, sizeof(lat[0]), cmp_double);
        if (rank == 0)
            printf("mpi_pingpong size=%zu lat_us=%.3f bw_MBps=%.1f\n", size,
                   lat[reps / 2], (double)size / lat[reps / 2]);
        fflush(stdout);
        if (only != 0)
            break;
    }
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
