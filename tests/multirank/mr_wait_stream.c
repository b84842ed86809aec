/* A loop of gv_wait() calls that each end at their first poll must still
 * ship what the rank buffered. gv_wait() returns as soon as the
 * transport's progress brings what it waits for, before the layer's own
 * work (the aggregation timeout among it); that work is owed to the next
 * wait. Rank 1 streams batches of messages at rank 0 without a pause;
 * rank 0 buffers one message to rank 2 with gv_am_send() and then only
 * waits, one gv_wait() per arrival, each handled slower than rank 1
 * sends (so no poll of rank 0 comes up empty); rank 2 answers it by stopping
 * everyone. When the owed work was dropped instead (found in review), the
 * message sat in rank 0's buffer for as long as the stream had no gap:
 * over shm it never got through (the job ran into the 60 s limit), over
 * tcp and ucx/sm it took 0.12 and 0.34 s; now 2-90 ms. 3 ranks.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

static gv_am_id_t        msg_id, hello_id, stop_id;
static volatile uint64_t count, last;
static volatile int      got_hello, stopped;

/* A handler slower than the sender, so that rank 0 always finds more
 * in its transport: every poll delivers, none is idle. */
static void on_msg(int src, const void *p, size_t len, void *arg)
{
    volatile int i;

    for (i = 0; i < 300; i++)
        ;
    count++;
}

static void on_hello(int src, const void *p, size_t len, void *arg)
{
    got_hello = 1;
}

static void on_stop(int src, const void *p, size_t len, void *arg)
{
    stopped = 1;
}

static int changed(void *arg)
{
    return (count != last) || stopped;
}

static int hello_in(void *arg)
{
    return got_hello;
}

int main(int argc, char **argv)
{
    uint64_t x = 1;
    double   t0, waited;
    int      i;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_msg, NULL, &msg_id));
    MR_OK(gv_am_register(on_hello, NULL, &hello_id));
    MR_OK(gv_am_register(on_stop, NULL, &stop_id));
    MR_CHECK(gv_nranks() == 3, "needs 3 ranks, has %d", gv_nranks());
    gv_barrier();
    if (gv_rank() == 1) {
        while (!stopped) {
            for (i = 0; i < 64; i++)
                MR_OK(gv_am_send(0, msg_id, &x, sizeof(x)));
            gv_flush();
            gv_progress();
        }
    } else if (gv_rank() == 0) {
        while (count < 10000) { /* the stream is flowing */
            last = count;
            gv_wait(changed, NULL);
        }
        MR_OK(gv_am_send(2, hello_id, &x, sizeof(x)));
        t0 = gv_wtime();
        while (!stopped) {
            last = count;
            gv_wait(changed, NULL);
        }
        waited = gv_wtime() - t0;
        /* GV_AGG_TIMEOUT_US (300 us) ships it; allow for a descheduled
         * rank on a loaded machine. */
        MR_CHECK(waited < 0.5, "the buffered message to rank 2 took %.3f s "
                 "to get through while %llu messages streamed in",
                 waited, (unsigned long long)count);
        printf("wait_stream: stopped %.1f ms after the buffered send, %llu "
               "messages received, over %s\n", waited * 1e3,
               (unsigned long long)count, gv_transport_name());
    } else {
        gv_wait(hello_in, NULL);
        MR_OK(gv_am_send_now(1, stop_id, &x, sizeof(x)));
        MR_OK(gv_am_send_now(0, stop_id, &x, sizeof(x)));
    }
    gv_barrier();
    gv_finalize();
    return 0;
}
