/* bw_ucx: Grapevine's streaming bandwidth against UCP's, inside one process.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 *   GV_TRANSPORT=ucx UCX_TLS=sm,self build/bin/gvrun -n 2 \
 *       build/perf/bw_ucx [-b blocks] [-k windows_per_block] [-w window]
 *                         [-s bytes]
 *
 * Rank 0 streams messages of -s bytes (1 MiB) to rank 1 in windows of -w
 * messages (64), and rank 1 answers each window with one empty message.
 * Two ways take turns in blocks of -k windows (8), -b blocks each (15),
 * after one untimed block of each:
 *   gv   perf/pingpong's bandwidth loop: gv_am_send_nbi() the window,
 *        gv_flush(), gv_wait() for the answer, gv_am_wait_local();
 *   ucp  ucx_perftest's ucp_am_bw on a UCP context, worker and endpoint of
 *        this program's own, made with the same UCX_TLS: ucp_am_send_nbx()
 *        with at most UCP_OUTSTANDING sends in flight (ucp_am_bw's default
 *        window), all of them complete before the wait for the answer;
 *        rank 1's handler takes eager data where it lies and receives a
 *        rendezvous message with ucp_am_recv_data_nbx() into one fixed
 *        buffer, as ucp_am_bw does.
 * Any GV_TRANSPORT works: the UCP way takes UCX_TLS from the environment.
 * Why in one process: see perf/hop_mpi.c. A UCP wait that sees no progress
 * (no message in, no send complete) for HOP_UCP_WAIT_S (30 s, perf/
 * hop_ucp.h) aborts the job naming the peer and what it waited for.
 *
 * Prints "bw_ucx transport=T bytes=S gv_MBps=X ucp_MBps=Y gv_over_ucp=R":
 * the median block of each way in 10^6 bytes per second, timed on rank 0;
 * then a "#" line with each way's slowest and fastest block.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if GV_HAVE_UCX
#include <grapevine.h>
#include <ucp/api/ucp.h>

#include "bw.h"
#include "hop.h"
#include "hop_ucp.h"
#include "stamp.h"

#define RAW_AM_ID       11
#define UCP_OUTSTANDING 32 /* ucx_perftest -O for ucp_am_bw: its default */

static ucp_worker_h        worker;
static ucp_ep_h            ep;
static uint64_t            raw_target;   /* messages in expected, in all */
static ucp_request_param_t send_param;
static uint64_t            sends_issued; /* requests from sends, closes */
static volatile uint64_t   sends_done;   /* those of them complete */

static void on_sent(void *request, ucs_status_t status, void *user_data)
{
    (void)user_data;
    hop_ucp_check(status, "send or close");
    sends_done++;
    ucp_request_free(request);
}

/* A UCP request in flight is counted until on_sent() completes it. */
static void track(ucs_status_ptr_t sp, const char *what)
{
    if (UCS_PTR_IS_ERR(sp))
        hop_ucp_check(UCS_PTR_STATUS(sp), what);
    if (sp != NULL)
        sends_issued++;
}

static void raw_send(const void *buf, size_t len)
{
    track(ucp_am_send_nbx(ep, RAW_AM_ID, NULL, 0, buf, len, &send_param),
          "ucp_am_send_nbx");
}

/* Until at most @a n of our requests are in flight. */
static void sends_at_most(uint64_t n, const char *what)
{
    if (sends_issued > n)
        hop_ucp_progress_until(&sends_done, sends_issued - n, what);
}

/* One block of the ucp way (a bw_block_fn_t), from @a buf. */
static void ucp_block(int rank, const int *opt, void *buf)
{
    size_t size   = (size_t)opt[BW_OPT_SIZE];
    int    window = opt[BW_OPT_WINDOW], i, j;

    for (i = 0; i < opt[BW_OPT_WINDOWS]; i++) {
        if (rank == 0) {
            for (j = 0; j < window; j++) {
                sends_at_most(UCP_OUTSTANDING - 1, "room in the send window");
                raw_send(buf, size);
            }
            sends_at_most(0, "the sends of a window");
            raw_target += 1;
            hop_ucp_progress_until(&hop_ucp_in, raw_target,
                                   "the answer to a window");
        } else {
            raw_target += (uint64_t)window;
            hop_ucp_progress_until(&hop_ucp_in, raw_target,
                                   "a window of messages");
            raw_send(buf, 0);
        }
    }
    sends_at_most(0, "the sends of the answers");
}

int main(int argc, char **argv)
{
    int                 opt[BW_NOPTS];
    uint8_t            *sbuf;
    ucp_request_param_t close_param;
    ucp_context_h       context;
    size_t              size;
    int                 peer;

    out_strip("bw_ucx", &argc, argv);
    hop_start_flags("bw_ucx", &argc, &argv, bw_flags, BW_NOPTS, opt);
    peer = 1 - gv_rank();
    size = (size_t)opt[BW_OPT_SIZE];
    sbuf = hop_page_alloc("bw_ucx", size);

    hop_ucp_open(peer, RAW_AM_ID, size, &context, &worker, &ep);
    /* ucp_am_bw's parameters: a callback per operation and the bandwidth
     * hint (the receive's are hop_ucp_open()'s). */
    memset(&send_param, 0, sizeof(send_param));
    send_param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                              UCP_OP_ATTR_FLAG_MULTI_SEND;
    send_param.cb.send      = on_sent;
    /* Wire up the endpoint both ways before timing anything. */
    raw_send(sbuf, 8);
    hop_ucp_progress_until(&hop_ucp_in, ++raw_target,
                           "the wire-up message");
    sends_at_most(0, "the wire-up send");
    gv_barrier();

    bw_run("bw_ucx", "ucp", opt, sbuf, ucp_block, sbuf);
    gv_barrier();
    memset(&close_param, 0, sizeof(close_param)); /* flush, then close */
    close_param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK;
    close_param.cb.send      = on_sent;
    track(ucp_ep_close_nbx(ep, &close_param), "ucp_ep_close_nbx");
    sends_at_most(0, "the endpoint's close");
    gv_barrier();
    hop_ucp_close(context, worker);
    free(sbuf);
    gv_finalize();
    return 0;
}

#else

int main(void)
{
    fprintf(stderr, "bw_ucx: built without UCX (rebuild with UCX=1; needs "
            "libucx-dev)\n");
    return 77;
}

#endif
