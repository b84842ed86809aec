/* A handler that computes is not a library that is stuck: rank 1's
 * handler for rank 0's request computes for 4 s, longer than the
 * GV_TIMEOUT_S=3 the driver sets, then replies from the handler. The
 * handler runs inside the transport's progress, so the monitor thread
 * must not count its time (it would stop the job naming rank 1); rank 0
 * owes rank 1 nothing while it waits for the reply, so the AM watchdog
 * has nothing to count either. The job must finish.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

static gv_am_id_t        req_id, rep_id;
static volatile uint64_t replies;

static void on_req(int src, const void *payload, size_t len, void *arg)
{
    double            t0 = gv_wtime();
    volatile uint64_t spin = 0;

    (void)payload;
    (void)len;
    (void)arg;
    while (gv_wtime() < t0 + 4.0)
        spin++;
    MR_OK(gv_am_send(src, rep_id, NULL, 0));
}

static void on_rep(int src, const void *payload, size_t len, void *arg)
{
    (void)src;
    (void)payload;
    (void)len;
    (void)arg;
    replies++;
}

static int replied(void *arg)
{
    (void)arg;
    return replies > 0;
}

int main(int argc, char **argv)
{
    uint64_t v = 42;
    double   t0;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_req, NULL, &req_id));
    MR_OK(gv_am_register(on_rep, NULL, &rep_id));
    if (gv_nranks() != 2)
        mr_skip("needs exactly 2 ranks");
    gv_barrier();
    if (gv_rank() == 0) {
        t0 = gv_wtime();
        MR_OK(gv_am_send(1, req_id, &v, sizeof(v)));
        gv_flush();
        gv_wait(replied, NULL);
        MR_CHECK(gv_wtime() - t0 >= 4.0, "the reply came after %.1f s, "
                 "before the handler's 4 s", gv_wtime() - t0);
    }
    gv_barrier();
    gv_finalize();
    printf("long_handler: ok\n");
    return 0;
}
