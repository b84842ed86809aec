/* A flush to every rank nested in another's wait must still cover what
 * the first one covers (a regression test, from a review: the per-rank
 * flush returned early here). On rank 0, task A issues a fetch-add to
 * rank 1, which sleeps 3 s, and flushes every rank; while A waits, task
 * B issues a fetch-add to rank 0 and flushes every rank too. When B's
 * flush returns, A's fetch-add must be complete: its result is there.
 * Transports without native atomics skip. SPDX-License-Identifier:
 * BSD-3-Clause */
#include "tests/multirank/mr.h"
#include <grapevine/task.h>

#define SENTINEL 0xdeadbeefull

static uint64_t     off, r1 = SENTINEL, r0 = SENTINEL;
static volatile int b_done;

static void task_b(void *arg)
{
    (void)arg;
    MR_OK(gv_amo64(GV_AMO_FADD, 0, off, 1, 0, &r0));
    MR_OK(gv_rma_flush(-1));
    MR_CHECK(r1 != SENTINEL, "a flush to every rank returned before the "
             "fetch-add to rank 1 issued ahead of it completed");
    MR_CHECK(r0 != SENTINEL, "the fetch-add to rank 0 is not complete");
    b_done = 1;
}

static void body(void *arg)
{
    (void)arg;
    if (gv_rank() == 1) {
        sleep(3);
        return;
    }
    usleep(200000);
    MR_OK(gv_amo64(GV_AMO_FADD, 1, off, 1, 0, &r1));
    MR_OK(gv_spawn_private(task_b, NULL, 0));
    MR_OK(gv_rma_flush(-1)); /* waits for rank 1; B runs meanwhile */
    MR_CHECK(r1 != SENTINEL, "the fetch-add to rank 1 is not complete");
    while (!b_done)
        gv_yield();
}

int main(int argc, char **argv)
{
    mr_init(&argc, &argv);
    mr_need_atomic_pair(&off);
    gv_barrier();
    MR_OK(gv_run_all(body, NULL, 0));
    gv_barrier();
    gv_finalize();
    printf("flush_race: ok\n");
    return 0;
}
