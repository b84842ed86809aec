/* Linearizability of delegate fetch-and-add and compare-and-swap: thousands
 * of workers on every rank hammer global counters; the final values are
 * exact and every value fetched is seen by exactly one worker. Run as
 * `gvrun -n 2|4 mr_dsm_atomic` (also with GV_AMO=native).
 *
 * Every worker increments one shared fetch-and-add counter, and one of
 * NCAS compare-and-swap counters (worker w uses counter w mod NCAS, so
 * that each sees a few dozen contenders: a retry loop's cost grows with
 * the square of its contenders, and the point is linearizability, not
 * contention). SPDX-License-Identifier: BSD-3-Clause */
#include "mr.h"
#include "dsm/dsm_internal.h"
#include "tasking/task_internal.h"

#define WORKERS 2048 /* per rank; a multiple of NCAS */
#define OPS     4    /* per worker and counter */
#define NCAS    64   /* compare-and-swap counters */

typedef struct {
    gv_gaddr_t fa, cs;       /* the counter, the NCAS counters */
    gv_gaddr_t seen_fa;      /* one word per value the counter takes */
    gv_gaddr_t seen_cs;
} shared_t;

static shared_t sh;
static uint64_t my_errors;

/* Mark value @a v seen in @a seen: its word must go from 0 to 1. */
static void see(gv_gaddr_t seen, uint64_t v, uint64_t limit)
{
    int64_t old;

    if (v >= limit) {
        fprintf(stderr, "[%d] value %llu out of range\n", gv_rank(),
                (unsigned long long)v);
        my_errors++;
        return;
    }
    MR_OK(gv_delegate_fetch_add(gv_gaddr_add(seen, (int64_t)(8 * v)), 1,
                                &old));
    if (old != 0) {
        fprintf(stderr, "[%d] value %llu fetched twice\n", gv_rank(),
                (unsigned long long)v);
        my_errors++;
    }
}

static void worker(void *p)
{
    uint64_t   limit = (uint64_t)gv_nranks() * WORKERS * OPS;
    uint32_t   w;
    gv_gaddr_t ctr;
    uint64_t   per_ctr = limit / NCAS;
    int        k;

    memcpy(&w, p, sizeof(w));
    ctr = gv_gaddr_add(sh.cs, 8 * (int64_t)(w % NCAS));
    for (k = 0; k < OPS; k++) {
        int64_t  old;
        uint64_t cur, got;

        MR_OK(gv_delegate_fetch_add(sh.fa, 1, &old));
        see(sh.seen_fa, (uint64_t)old, limit);

        /* Increment by compare-and-swap: read, then retry with what the
         * failed swap returned. The value a swap succeeds on is unique. */
        MR_OK(gv_delegate_read(ctr, &cur, sizeof(cur)));
        for (;;) {
            MR_OK(gv_delegate_cswap(ctr, cur, cur + 1, &got));
            if (got == cur)
                break;
            cur = got;
        }
        if (cur >= per_ctr) {
            fprintf(stderr, "[%d] counter %u reached %llu\n", gv_rank(),
                    w % NCAS, (unsigned long long)cur);
            my_errors++;
            continue;
        }
        see(sh.seen_cs, (w % NCAS) * per_ctr + cur, limit);
    }
}

static void zero_one(int64_t i, void *elem, void *arg)
{
    memset(elem, 0, 8);
}

static void check_one(int64_t i, void *elem, void *arg)
{
    uint64_t v;

    memcpy(&v, elem, 8);
    if (v != 1) {
        fprintf(stderr, "[%d] value %lld seen %llu times\n", gv_rank(),
                (long long)i, (unsigned long long)v);
        my_errors++;
    }
}

int main(int argc, char **argv)
{
    uint64_t    total, v, errs;
    gv_gce_t    gce;
    int         i, me;

    mr_init(&argc, &argv);
    gv_barrier();
    me    = gv_rank();
    total = (uint64_t)gv_nranks() * WORKERS * OPS;

    if (me == 0) {
        MR_OK(gv_global_alloc(8, &sh.fa));
        MR_OK(gv_global_alloc(8 * NCAS, &sh.cs));
        MR_OK(gv_global_alloc(8 * total, &sh.seen_fa));
        MR_OK(gv_global_alloc(8 * total, &sh.seen_cs));
    }
    MR_OK(gv_broadcast(0, &sh, sizeof(sh)));
    /* Fresh heap memory is not promised to be zero: clear it. */
    if (me == 0) {
        uint64_t z = 0;
        MR_OK(gv_delegate_write(sh.fa, &z, 8));
        for (i = 0; i < NCAS; i++)
            MR_OK(gv_delegate_write(gv_gaddr_add(sh.cs, 8 * i), &z, 8));
    }
    if (me == 0) {
        MR_OK(gv_forall(sh.seen_fa, (int64_t)total, 8, 0, zero_one, NULL, 0,
                        NULL));
        MR_OK(gv_forall(sh.seen_cs, (int64_t)total, 8, 0, zero_one, NULL, 0,
                        NULL));
    }
    MR_OK(gv_coll_barrier());

    MR_OK(gv_gce_create(&gce));
    for (i = 0; i < WORKERS; i++) {
        uint32_t w = (uint32_t)(me * WORKERS + i);
        MR_OK(gv_gce_spawn_on(&gce, me, worker, &w, sizeof(w)));
    }
    MR_OK(gv_gce_wait(&gce));
    MR_OK(gv_coll_barrier());

    MR_OK(gv_delegate_read(sh.fa, &v, 8));
    MR_CHECK(v == total, "fetch-and-add counter is %llu, expected %llu",
             (unsigned long long)v, (unsigned long long)total);
    for (i = 0; i < NCAS; i++) {
        MR_OK(gv_delegate_read(gv_gaddr_add(sh.cs, 8 * i), &v, 8));
        MR_CHECK(v == total / NCAS, "compare-and-swap counter %d is %llu, "
                 "expected %llu", i, (unsigned long long)v,
                 (unsigned long long)(total / NCAS));
    }
    if (me == 0) {
        MR_OK(gv_forall(sh.seen_fa, (int64_t)total, 8, 0, check_one, NULL, 0,
                        NULL));
        MR_OK(gv_forall(sh.seen_cs, (int64_t)total, 8, 0, check_one, NULL, 0,
                        NULL));
    }
    MR_OK(gv_coll_barrier());
    MR_CHECK(!gv_dsm_amo_native() == !(gv__env.AMO == GV_AMO_NATIVE),
             "gv_dsm_amo_native() says %d, GV_AMO is %s",
             gv_dsm_amo_native(),
             (gv__env.AMO == GV_AMO_NATIVE) ? "native" : "am");
    errs = my_errors;
    MR_OK(gv_allreduce(&errs, 1, GV_UINT64, GV_SUM));
    MR_CHECK(errs == 0, "%llu errors over all ranks", (unsigned long long)errs);
    if (me == 0)
        printf("mr_dsm_atomic: %d ranks x %d workers x %d ops, %s: ok\n",
               gv_nranks(), WORKERS, OPS,
               (gv__env.AMO == GV_AMO_NATIVE) ? "native" : "am");
    gv_barrier();
    gv_finalize();
    return 0;
}
