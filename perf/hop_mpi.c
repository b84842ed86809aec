/* hop_mpi: Grapevine's hop against MPI's, inside one process.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 *   GV_TRANSPORT=mpi mpirun -np 2 [--mca btl self,vader] \
 *       build/perf/hop_mpi [-b blocks] [-k round_trips_per_block] [-s bytes]
 *
 * Ranks 0 and 1 ping-pong -s bytes (8, up to 4 MiB) three ways, in blocks
 * of -k round trips (by default 500 up to 33,554 bytes, then as many as
 * fit in 16 MiB each way, but 10 at least, so that from 1.6 MiB a block
 * moves more: 40 MiB at 4 MiB; hop_per_default() in perf/hop.h), the ways
 * taking turns block by block, -b blocks each (100):
 *   gv    gv_am_send_now() and gv_wait(), as perf/pingpong;
 *   test  MPI: a persistent MPI_ANY_SOURCE receive polled with MPI_Test and
 *         restarted after the reply went out, the way a layer over MPI has
 *         to receive (and the mpi transport does);
 *   recv  MPI: blocking MPI_Send and MPI_Recv from the named rank, as
 *         perf/mpi_pingpong (the issue's reference).
 * The MPI ways run on duplicates of MPI_COMM_WORLD, one each (the test
 * way's receive matches any tag), beside the transport.
 *
 * Why in one process: on these VMs a process keeps, for its whole life, the
 * placement of the two vCPUs it started with, and a hop over shared memory
 * takes 0.13-0.2 or 0.35-0.45 us depending on it (perf/lineping). Two
 * separate runs compare placements as much as code; blocks that take turns
 * in one run share one placement, so their difference is the code's.
 *
 * Prints "hop_mpi transport=T bytes=S gv_ns=X test_ns=Y recv_ns=Z
 * gv_over_recv=R": one-way nanoseconds, half the median round trip of each
 * way over all its blocks; from 4 KiB, "gv_MBps=A test_MBps=B recv_MBps=C"
 * follow, S over each one-way time in 10^6 B/s (a ping-pong's bandwidth;
 * perf/bw_mpi streams).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if GV_HAVE_MPI
#include <grapevine.h>
#include <mpi.h>

#include "hop.h"
#include "out.h"
#include "stamp.h"

enum { WAY_GV, WAY_TEST, WAY_RECV, NWAYS };
static const char *const way_names[NWAYS] = {"gv", "test", "recv"};

int main(int argc, char **argv)
{
    hop_opts_t   o;
    int          provided, mpi_rank, mpi_size, b, i, w;
    int          rank, peer, late = 0, n[NWAYS] = {0};
    char        *sbuf, *rbuf, *tbuf;
    double      *rtt[NWAYS], ns_per_tick, out[NWAYS];
    uint64_t     target = 0, prev;
    MPI_Comm     comm, rcomm;
    MPI_Request  req;
    MPI_Status   st;
    stamp_span_t span;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
    out_strip("hop_mpi", &argc, argv);
    o = hop_options("hop_mpi", argc, argv);
    /* Before gv_init, so that no message can beat a registration. */
    if (gv_am_register(hop_on_ping, NULL, &hop_ping_id) != GV_OK) {
        fprintf(stderr, "hop_mpi: cannot register a handler\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (gv_init(&argc, &argv) != GV_OK) {
        fprintf(stderr, "hop_mpi: gv_init failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (gv_nranks() < 2)
        gv_abort(2, "hop_mpi needs at least 2 ranks (ranks 0 and 1 "
                    "ping-pong), got %d", gv_nranks());
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
    hop_check_mpirun("hop_mpi", mpi_rank, mpi_size);
    rank = gv_rank();
    peer = (rank == 0) ? 1 : 0;
    hop_rtt_alloc("hop_mpi", o, NWAYS, rtt);
    sbuf = hop_page_alloc("hop_mpi", (size_t)o.size);
    rbuf = hop_page_alloc("hop_mpi", (size_t)o.size);
    tbuf = hop_page_alloc("hop_mpi", (size_t)o.size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &rcomm);
    MPI_Recv_init(tbuf, o.size, MPI_BYTE, MPI_ANY_SOURCE,
                  MPI_ANY_TAG, comm, &req);
    MPI_Start(&req);

    stamp_span_begin(&span);
    for (b = 0; b < o.blocks * NWAYS; b++) {
        w = b % NWAYS;
        gv_barrier();
        if (rank > 1)
            continue;
        prev = stamp_ticks();
        for (i = 0; i < o.per; i++) {
            if (w == WAY_GV) {
                hop_gv_trip(rank, peer, sbuf, (size_t)o.size, &target);
            } else if (w == WAY_TEST) {
                int done = 0;

                if (rank == 0)
                    MPI_Send(sbuf, o.size, MPI_BYTE, peer, 1, comm);
                if (late) { /* after the reply, as the transport does */
                    MPI_Start(&req);
                    late = 0;
                }
                while (!done)
                    MPI_Test(&req, &done, &st);
                late = 1;
                if (rank == 1)
                    MPI_Send(sbuf, o.size, MPI_BYTE, peer, 1, comm);
            } else {
                if (rank == 0)
                    MPI_Send(sbuf, o.size, MPI_BYTE, peer, 2, rcomm);
                MPI_Recv(rbuf, o.size, MPI_BYTE, peer, 2, rcomm,
                         MPI_STATUS_IGNORE);
                if (rank == 1)
                    MPI_Send(sbuf, o.size, MPI_BYTE, peer, 2, rcomm);
            }
            hop_stamp(rank, rtt, n, w, &prev);
        }
        if (late) {
            MPI_Start(&req);
            late = 0;
        }
    }
    ns_per_tick = stamp_span_rate(&span);
    if (rank == 0) {
        hop_results(rtt, n, NWAYS, ns_per_tick, out);
        out_begin("hop_mpi", gv_transport_name(), gv_nranks());
        out_hop(o.size, rtt, n, NWAYS, ns_per_tick, way_names);
        out_end();
    }
    if ((rank == 0) && !out_machine()) {
        printf("hop_mpi transport=%s bytes=%d gv_ns=%.1f test_ns=%.1f "
               "recv_ns=%.1f gv_over_recv=%.3f", gv_transport_name(), o.size,
               out[WAY_GV], out[WAY_TEST], out[WAY_RECV],
               out[WAY_GV] / out[WAY_RECV]);
        hop_line_end(o.size, out, way_names, NWAYS);
    }
    MPI_Cancel(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Request_free(&req);
    MPI_Comm_free(&comm);
    MPI_Comm_free(&rcomm);
    free(sbuf);
    free(rbuf);
    free(tbuf);
    hop_rtt_free(NWAYS, rtt);
    gv_finalize();
    MPI_Finalize();
    return 0;
}

#else

int main(void)
{
    fprintf(stderr, "hop_mpi: built without MPI (rebuild with MPI=1; needs "
            "libopenmpi-dev)\n");
    return 77;
}

#endif
