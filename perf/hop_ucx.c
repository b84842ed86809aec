/* hop_ucx: Grapevine's hop against UCP's, inside one process.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 *   GV_TRANSPORT=ucx UCX_TLS=sm,self build/bin/gvrun -n 2 \
 *       build/perf/hop_ucx [-b blocks] [-k round_trips_per_block] [-s bytes]
 *
 * Ranks 0 and 1 ping-pong -s bytes (8, up to 4 MiB) two ways, in blocks of
 * -k round trips (by default 500 up to 33,554 bytes, then as many as fit
 * in 16 MiB each way, but 10 at least, so that from 1.6 MiB a block moves
 * more: 40 MiB at 4 MiB; hop_per_default() in perf/hop.h), the ways
 * taking turns block by block, -b blocks each (100):
 *   gv   gv_am_send_now() and gv_wait(), as perf/pingpong;
 *   ucp  a UCP context, worker and endpoint of this program's own, made
 *        with the same UCX_TLS: ucp_am_send_nbx() and ucp_worker_progress()
 *        until the peer's message is in, as ucx_perftest's ucp_am_lat (a
 *        rendezvous message received into one buffer, as it does).
 * Why in one process: see perf/hop_mpi.c. The two ways share the run's
 * vCPU placement, so their difference is the code's. A UCP wait that sees
 * no progress for HOP_UCP_WAIT_S (30 s, perf/hop_ucp.h) aborts the job
 * naming the peer and what it waited for.
 *
 * Prints "hop_ucx transport=T bytes=S gv_ns=X ucp_ns=Y gv_over_ucp=R":
 * one-way nanoseconds, half the median round trip of each way over all
 * its blocks; from 4 KiB, "gv_MBps=A ucp_MBps=B" follow, S over each
 * one-way time in 10^6 B/s (a ping-pong's bandwidth; perf/bw_ucx streams).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if GV_HAVE_UCX
#include <grapevine.h>
#include <ucp/api/ucp.h>

#include "hop.h"
#include "out.h"
#include "hop_ucp.h"
#include "stamp.h"

#define RAW_AM_ID 11

enum { WAY_GV, WAY_UCP, NWAYS };
static const char *const way_names[NWAYS] = {"gv", "ucp"};

int main(int argc, char **argv)
{
    hop_opts_t               o;
    int                      b, i, w;
    int                      rank, peer, n[NWAYS] = {0};
    char                    *sbuf;
    double                  *rtt[NWAYS], ns_per_tick, out[NWAYS];
    uint64_t                 target = 0, raw_target = 1, prev;
    stamp_span_t             span;
    ucp_request_param_t      sp_param, close_param;
    ucp_context_h            context;
    ucp_worker_h             worker;
    ucp_ep_h                 ep;

    out_strip("hop_ucx", &argc, argv);
    o = hop_start("hop_ucx", &argc, &argv);
    rank = gv_rank();
    peer = 1 - rank;
    hop_rtt_alloc("hop_ucx", o, NWAYS, rtt);
    sbuf = hop_page_alloc("hop_ucx", (size_t)o.size);

    hop_ucp_open(peer, RAW_AM_ID, (size_t)o.size, &context, &worker, &ep);
    memset(&sp_param, 0, sizeof(sp_param));
    /* Wire up the endpoint both ways before timing anything. */
    hop_ucp_wait_req(ucp_am_send_nbx(ep, RAW_AM_ID, NULL, 0, sbuf, 8,
                                     &sp_param), "the wire-up send");
    hop_ucp_progress_until(&hop_ucp_in, 1, "the wire-up message");
    gv_barrier();

    stamp_span_begin(&span);
    for (b = 0; b < o.blocks * NWAYS; b++) {
        w = b % NWAYS;
        gv_barrier();
        prev = stamp_ticks();
        for (i = 0; i < o.per; i++) {
            if (w == WAY_GV) {
                hop_gv_trip(rank, peer, sbuf, (size_t)o.size, &target);
            } else {
                raw_target++;
                if (rank == 0)
                    hop_ucp_wait_req(ucp_am_send_nbx(ep, RAW_AM_ID, NULL, 0,
                                     sbuf, (size_t)o.size, &sp_param),
                                     "the ping's send");
                hop_ucp_progress_until(&hop_ucp_in, raw_target,
                                       (rank == 0) ? "the pong" : "the ping");
                if (rank == 1)
                    hop_ucp_wait_req(ucp_am_send_nbx(ep, RAW_AM_ID, NULL, 0,
                                     sbuf, (size_t)o.size, &sp_param),
                                     "the pong's send");
            }
            hop_stamp(rank, rtt, n, w, &prev);
        }
    }
    ns_per_tick = stamp_span_rate(&span);
    if (rank == 0) {
        hop_results(rtt, n, NWAYS, ns_per_tick, out);
        out_begin("hop_ucx", gv_transport_name(), gv_nranks());
        out_hop(o.size, rtt, n, NWAYS, ns_per_tick, way_names);
        out_end();
    }
    if ((rank == 0) && !out_machine()) {
        printf("hop_ucx transport=%s bytes=%d gv_ns=%.1f ucp_ns=%.1f "
               "gv_over_ucp=%.3f", gv_transport_name(), o.size,
               out[WAY_GV], out[WAY_UCP], out[WAY_GV] / out[WAY_UCP]);
        hop_line_end(o.size, out, way_names, NWAYS);
    }
    gv_barrier();
    memset(&close_param, 0, sizeof(close_param)); /* flush, then close */
    hop_ucp_wait_req(ucp_ep_close_nbx(ep, &close_param),
                     "the endpoint's close");
    gv_barrier();
    hop_ucp_close(context, worker);
    free(sbuf);
    hop_rtt_free(NWAYS, rtt);
    gv_finalize();
    return 0;
}

#else

int main(void)
{
    fprintf(stderr, "hop_ucx: built without UCX (rebuild with UCX=1; needs "
            "libucx-dev)\n");
    return 77;
}

#endif
