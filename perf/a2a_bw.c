/* a2a_bw: all-to-all streaming bandwidth of Grapevine's active messages.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 *   GV_TRANSPORT=ucx UCX_TLS=sm,self build/bin/gvrun -n 4 \
 *       build/perf/a2a_bw [-n messages] [-s bytes] [-r rounds]
 *
 * Every rank streams -n messages (100) of -s bytes (1 MiB) to every other
 * rank, one to each in turn, with gv_am_send_nbi() from one buffer and a
 * gv_flush() after every 16th message to each; then it waits until the
 * round's messages from all the others are in and for gv_am_wait_local(),
 * and a gv_barrier() ends the round. -r rounds (3), each begun by a
 * gv_barrier() and timed on rank 0. Any GV_TRANSPORT, 2 ranks or more.
 * This is the case of several senders at once, where one receiver's
 * resources are shared (perf/notes/bandwidth.md).
 *
 * Prints, for each round, "a2a_bw transport=T ranks=P bytes=S
 * total_MBps=X": every byte that all the ranks moved in the round
 * (P x (P-1) x -n x -s) over the round's time, in 10^6 B/s; then
 * "a2a_bw transport=T ranks=P bytes=S rounds=R median_MBps=X", the median
 * round. A rank that receives no message for WAIT_S while it waits for
 * them aborts the job.
 */
#include <grapevine.h>

#include "hop.h"
#include "out.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FLUSH_EVERY 16  /* messages to each rank between two gv_flush() */
#define WAIT_S      60  /* longest wait without a message in */
#define ROUNDS_MAX  1000

enum { OPT_MSGS, OPT_SIZE, OPT_ROUNDS, NOPTS };

static const hop_flag_t a2a_flags[NOPTS] = {
    [OPT_MSGS]   = {'n', "messages to each rank", 1, 1000000, 100},
    [OPT_SIZE]   = {'s', "bytes", 1, 64 << 20, 1 << 20},
    [OPT_ROUNDS] = {'r', "rounds", 1, ROUNDS_MAX, 3},
};

static volatile uint64_t got; /* messages in, in all rounds */
static gv_am_id_t        msg_id;

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    (void)src;
    (void)payload;
    (void)len;
    (void)arg;
    got++;
}

/* A wait for the messages of one round; the deadline, WAIT_S away,
 * restarts whenever a message comes in. */
typedef struct {
    uint64_t target;   /* got that ends the wait */
    uint64_t seen;     /* got at the last check */
    uint64_t deadline; /* 0 before the first check */
    int      round;
} wait_t;

static int all_in(void *arg)
{
    wait_t  *w = arg;
    uint64_t n = got, now;

    if (n >= w->target)
        return 1;
    now = gv_time_ns();
    if ((w->deadline == 0) || (n != w->seen)) {
        w->seen     = n;
        w->deadline = now + WAIT_S * 1000000000ull;
    } else if (now > w->deadline) {
        gv_abort(1, "a2a_bw: no message in %d s while waiting for the "
                 "messages of round %d: %llu more to come", WAIT_S,
                 w->round, (unsigned long long)(w->target - n));
    }
    return 0;
}

int main(int argc, char **argv)
{
    int         opt[NOPTS], me, nranks, msgs, r, i, d;
    size_t      size;
    char       *buf;
    double      mbps[ROUNDS_MAX], total_bytes;
    uint64_t    t0;
    wait_t      w = {0, 0, 0, 0};
    gv_status_t status;

    /* Before gv_init, which takes no arguments of ours: -h and a usage
     * error end the process before it joins the job. */
    out_strip("a2a_bw", &argc, argv);
    hop_parse("a2a_bw", argc, argv, a2a_flags, NOPTS, opt);
    /* Before gv_init, so that no message can beat the registration. */
    if (gv_am_register(on_msg, NULL, &msg_id) != GV_OK) {
        fprintf(stderr, "a2a_bw: cannot register a handler\n");
        return 1;
    }
    status = gv_init(&argc, &argv);
    if (status != GV_OK) {
        fprintf(stderr, "a2a_bw: gv_init failed: %s\n",
                gv_status_str(status));
        return 1;
    }
    me     = gv_rank();
    nranks = gv_nranks();
    msgs   = opt[OPT_MSGS];
    size   = (size_t)opt[OPT_SIZE];
    if (size > gv_am_max_payload()) { /* should -s's limit ever exceed it */
        char why[128];

        snprintf(why, sizeof(why), "-s %zu: accepted 1..%zu (the largest "
                 "message)", size, gv_am_max_payload());
        hop_usage("a2a_bw", a2a_flags, NOPTS, why);
    }
    if (nranks < 2)
        gv_abort(2, "a2a_bw needs at least 2 ranks, got %d", nranks);
    buf = hop_page_alloc("a2a_bw", size);
    total_bytes = (double)size * msgs * nranks * (nranks - 1);
    if (me == 0)
        out_begin("a2a_bw", gv_transport_name(), nranks);

    for (r = 0; r < opt[OPT_ROUNDS]; r++) {
        w.target  += (uint64_t)msgs * (uint64_t)(nranks - 1);
        w.deadline = 0;
        w.round    = r;
        gv_barrier();
        t0 = gv_time_ns();
        for (i = 0; i < msgs; i++) {
            for (d = 1; d < nranks; d++) {
                status = gv_am_send_nbi((me + d) % nranks, msg_id, buf,
                                        size);
                if (status != GV_OK)
                    gv_abort(1, "a2a_bw: gv_am_send_nbi to rank %d: %s",
                             (me + d) % nranks, gv_status_str(status));
            }
            if ((i + 1) % FLUSH_EVERY == 0)
                gv_flush();
        }
        gv_flush();
        gv_wait(all_in, &w);
        gv_am_wait_local();
        gv_barrier();
        mbps[r] = total_bytes * 1e3 / (double)(gv_time_ns() - t0);
        if ((me == 0) && !out_machine()) {
            printf("a2a_bw transport=%s ranks=%d bytes=%zu total_MBps=%.1f\n",
                   gv_transport_name(), nranks, size, mbps[r]);
            fflush(stdout);
        }
    }
    if (me == 0) {
        char cfg[48];

        snprintf(cfg, sizeof(cfg), "messages=%d", msgs);
        out_row("total_bw", cfg, (long long)size, "MBps", mbps, r);
        out_end();
        if (!out_machine())
            printf("a2a_bw transport=%s ranks=%d bytes=%zu rounds=%d "
                   "median_MBps=%.1f\n", gv_transport_name(), nranks, size,
                   r, mbps[r / 2]);
    }
    free(buf);
    gv_finalize();
    return 0;
}
