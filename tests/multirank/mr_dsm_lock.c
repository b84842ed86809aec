/* A spin lock built from delegate compare-and-swap protects a global
 * counter that is updated by a plain read and a plain write: with the lock
 * the increments of hundreds of workers per rank are never lost, which only
 * holds if compare-and-swap is atomic and blocking delegates of one worker
 * complete in order (sequential consistency for data-race-free programs).
 * The lock and the counter live on different homes. Run as
 * `gvrun -n 2|4 mr_dsm_lock` (also with GV_AMO=native).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "mr.h"
#include "dsm/dsm_internal.h"
#include "tasking/task_internal.h"

#define WORKERS 256 /* per rank */
#define ROUNDS  2   /* critical sections per worker */

typedef struct {
    gv_gaddr_t lock, counter, holders;
} shared_t;

static shared_t sh;
static uint64_t my_errors;

/* Take the lock; a loser backs off (sleeps, so others run), from 10 us
 * doubling to about 1 ms, so that waiters do not flood the lock's home. */
static void lock(gv_gaddr_t l, uint64_t me)
{
    uint64_t old, ns = 10000;

    for (;;) {
        MR_OK(gv_delegate_cswap(l, 0, me, &old));
        if (old == 0)
            return;
        gv__sched_sleep_ns(ns + (me * 7919) % ns);
        if (ns < 1000000)
            ns *= 2;
    }
}

static void unlock(gv_gaddr_t l, uint64_t me)
{
    uint64_t old;

    MR_OK(gv_delegate_cswap(l, me, 0, &old));
    if (old != me) {
        fprintf(stderr, "[%d] unlock found %llu, not %llu\n", gv_rank(),
                (unsigned long long)old, (unsigned long long)me);
        my_errors++;
    }
}

static void worker(void *p)
{
    uint64_t id;
    int      k;

    memcpy(&id, p, sizeof(id));
    for (k = 0; k < ROUNDS; k++) {
        uint64_t v;
        int64_t  inside;

        lock(sh.lock, id);
        /* Mutual exclusion, checked: nobody else is inside. */
        MR_OK(gv_delegate_fetch_add(sh.holders, 1, &inside));
        if (inside != 0)
            my_errors++;
        MR_OK(gv_delegate_read(sh.counter, &v, sizeof(v)));
        gv_yield(); /* widen the window a lost update would need */
        v++;
        MR_OK(gv_delegate_write(sh.counter, &v, sizeof(v)));
        MR_OK(gv_delegate_fetch_add(sh.holders, -1, &inside));
        unlock(sh.lock, id);
    }
}

int main(int argc, char **argv)
{
    uint64_t v, errs, want;
    gv_gce_t gce;
    int      i, me;

    mr_init(&argc, &argv);
    gv_barrier();
    me = gv_rank();
    if (me == 0) {
        gv_gaddr_t a;
        uint64_t   z = 0;
        /* Three blocks: lock, counter and holders on ranks 0, 1, 2 mod P. */
        MR_OK(gv_global_alloc(3 * gv_global_block_size(), &a));
        sh.lock    = a;
        sh.counter = gv_gaddr_add(a, (int64_t)gv_global_block_size());
        sh.holders = gv_gaddr_add(a, 2 * (int64_t)gv_global_block_size());
        MR_OK(gv_delegate_write(sh.lock, &z, 8));
        MR_OK(gv_delegate_write(sh.counter, &z, 8));
        MR_OK(gv_delegate_write(sh.holders, &z, 8));
        MR_CHECK(gv_gaddr_rank(sh.counter) == 1 % gv_nranks(),
                 "counter on rank %d", gv_gaddr_rank(sh.counter));
    }
    MR_OK(gv_broadcast(0, &sh, sizeof(sh)));

    MR_OK(gv_gce_create(&gce));
    for (i = 0; i < WORKERS; i++) {
        uint64_t id = (uint64_t)me * WORKERS + (uint64_t)i + 1;
        MR_OK(gv_gce_spawn_on(&gce, me, worker, &id, sizeof(id)));
    }
    MR_OK(gv_gce_wait(&gce));
    MR_OK(gv_coll_barrier());

    want = (uint64_t)gv_nranks() * WORKERS * ROUNDS;
    MR_OK(gv_delegate_read(sh.counter, &v, 8));
    MR_CHECK(v == want, "counter is %llu, expected %llu (lost updates)",
             (unsigned long long)v, (unsigned long long)want);
    MR_OK(gv_delegate_read(sh.lock, &v, 8));
    MR_CHECK(v == 0, "lock still held by %llu", (unsigned long long)v);
    errs = my_errors;
    MR_OK(gv_allreduce(&errs, 1, GV_UINT64, GV_SUM));
    MR_CHECK(errs == 0, "%llu mutual-exclusion errors", (unsigned long long)errs);
    if (me == 0)
        printf("mr_dsm_lock: %llu increments under a cswap lock: ok\n",
               (unsigned long long)want);
    gv_barrier();
    gv_finalize();
    return 0;
}
