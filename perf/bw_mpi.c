/* bw_mpi: Grapevine's streaming bandwidth against MPI's, inside one process.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 *   mpirun -np 2 [--mca btl self,vader] -x GV_TRANSPORT=mpi \
 *       build/perf/bw_mpi [-b blocks] [-k windows_per_block] [-w window]
 *                         [-s bytes]
 *
 * Rank 0 streams messages of -s bytes (1 MiB) to rank 1 in windows of -w
 * messages (64), and rank 1 answers each window with one empty message.
 * Two ways take turns in blocks of -k windows (8), -b blocks each (15),
 * after one untimed block of each (perf/bw.h):
 *   gv   perf/pingpong's bandwidth loop: gv_am_send_nbi() the window,
 *        gv_flush(), gv_wait() for the answer, gv_am_wait_local();
 *   mpi  perf/mpi_pingpong's bandwidth loop (the issue's MPI reference) on
 *        a duplicate of MPI_COMM_WORLD of this program's own: rank 0
 *        MPI_Isend()s the window and MPI_Waitall()s, then MPI_Recv()s the
 *        answer; rank 1 MPI_Irecv()s the window, all into one buffer, and
 *        MPI_Waitall()s, then MPI_Send()s the answer; each rank's one
 *        malloc()ed buffer serves every message, as there.
 * Any GV_TRANSPORT that runs under mpirun works (it is the gv way's);
 * the MPI way takes the btl and the rest from mpirun. Why in one process:
 * see perf/hop_mpi.c. A gv wait is bounded as everywhere (GV_TIMEOUT_S);
 * an MPI call that waits for a dead peer ends when mpirun ends the job.
 *
 * Prints "bw_mpi transport=T bytes=S gv_MBps=X mpi_MBps=Y gv_over_mpi=R":
 * the median block of each way in 10^6 bytes per second, timed on rank 0;
 * then a "#" line with each way's slowest and fastest block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if GV_HAVE_MPI
#include <grapevine.h>
#include <mpi.h>

#include "bw.h"
#include "hop.h"

static MPI_Comm     comm;
static MPI_Request *reqs; /* one per message of a window */

/* One block of the mpi way (a bw_block_fn_t): perf/mpi_pingpong's run_bw()
 * for -k windows, tags and all, on our communicator, from and into @a buf. */
static void mpi_block(int rank, const int *opt, void *buf)
{
    int size = opt[BW_OPT_SIZE], window = opt[BW_OPT_WINDOW], i, j;

    for (i = 0; i < opt[BW_OPT_WINDOWS]; i++) {
        if (rank == 0) {
            for (j = 0; j < window; j++)
                MPI_Isend(buf, size, MPI_BYTE, 1, 2, comm, &reqs[j]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 3, comm, MPI_STATUS_IGNORE);
        } else {
            for (j = 0; j < window; j++)
                MPI_Irecv(buf, size, MPI_BYTE, 0, 2, comm, &reqs[j]);
            MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(NULL, 0, MPI_BYTE, 0, 3, comm);
        }
    }
}

int main(int argc, char **argv)
{
    int      opt[BW_NOPTS], provided, mpi_rank, mpi_size;
    uint8_t *sbuf;
    char    *mbuf;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    out_strip("bw_mpi", &argc, argv);
    hop_start_flags("bw_mpi", &argc, &argv, bw_flags, BW_NOPTS, opt);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
    hop_check_mpirun("bw_mpi", mpi_rank, mpi_size);
    sbuf = hop_page_alloc("bw_mpi", (size_t)opt[BW_OPT_SIZE]);
    /* perf/mpi_pingpong's buffer: malloc()ed and filled with 'a'. */
    mbuf = malloc((size_t)opt[BW_OPT_SIZE]);
    reqs = malloc(sizeof(MPI_Request) * (size_t)opt[BW_OPT_WINDOW]);
    if ((mbuf == NULL) || (reqs == NULL))
        gv_abort(1, "bw_mpi: no memory for %d bytes", opt[BW_OPT_SIZE]);
    memset(mbuf, 'a', (size_t)opt[BW_OPT_SIZE]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);

    bw_run("bw_mpi", "mpi", opt, sbuf, mpi_block, mbuf);
    gv_barrier();
    MPI_Comm_free(&comm);
    free(reqs);
    free(mbuf);
    free(sbuf);
    gv_finalize();
    MPI_Finalize();
    return 0;
}

#else

int main(void)
{
    fprintf(stderr, "bw_mpi: built without MPI (rebuild with MPI=1; needs "
            "libopenmpi-dev)\n");
    return 77;
}

#endif
