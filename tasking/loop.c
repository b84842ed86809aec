/* gv_parallel_for: recursive decomposition of an index range into a
 * logarithmically deep tree of tasks. SPDX-License-Identifier: BSD-3-Clause
 *
 * A task that holds a range longer than the grain keeps splitting it: it
 * spawns the upper half as a new (private) task and goes on with the lower
 * half, until it holds at most `grain` iterations, which it runs. This is
 * Cilk's cilk_for and Grappa's parallel_for: the tree of tasks is
 * log2(n/grain) deep, and because the owner pops its newest task first the
 * queue holds O(log n) pending halves at a time rather than n/grain leaves.
 * One completion counter, enrolled once per task, tells the caller when
 * every leaf has run. The caller runs the first branch itself, so a loop
 * of one leaf costs no task at all.
 *
 * Lengths are computed in unsigned arithmetic so that ranges as wide as
 * [INT64_MIN, INT64_MAX) do not overflow.
 */
#include "tasking/task_internal.h"

typedef struct {
    int64_t      lo, hi;
    uint64_t     grain;
    gv_loop_fn_t body;
    void        *arg;
    gv_cc_t     *cc;
} loop_args_t;

_Static_assert(sizeof(loop_args_t) <= GV_TASK_ARGS_MAX,
               "loop arguments must fit in a task");

static void loop_task(void *p);

static void loop_run(loop_args_t *a)
{
    int64_t i;

    while ((uint64_t)a->hi - (uint64_t)a->lo > a->grain) {
        uint64_t    len = (uint64_t)a->hi - (uint64_t)a->lo;
        int64_t     mid = (int64_t)((uint64_t)a->lo + len / 2);
        loop_args_t up  = *a;
        gv_status_t status;

        up.lo = mid;
        gv_cc_add(a->cc, 1);
        status = gv_spawn_private(loop_task, &up, sizeof(up));
        if (status != GV_OK)
            gv_fatal("parallel loop cannot spawn: %s", gv_status_str(status));
        a->hi = mid;
    }
    for (i = a->lo; i < a->hi; i++)
        a->body(i, a->arg);
    gv_cc_done(a->cc, 1);
}

static void loop_task(void *p)
{
    loop_run((loop_args_t *)p);
}

gv_status_t gv_parallel_for(int64_t lo, int64_t hi, int64_t grain,
                            gv_loop_fn_t body, void *arg)
{
    gv_cc_t     cc;
    loop_args_t a;

    if (body == NULL)
        return GV_ERR_INVALID;
    if (hi <= lo)
        return GV_OK;
    if (gv_task_self() == NULL)
        return GV_ERR_STATE;
    gv_cc_init(&cc, 1);
    a.lo    = lo;
    a.hi    = hi;
    a.grain = (grain > 0) ? (uint64_t)grain : gv__env.LOOP_GRAIN;
    a.body  = body;
    a.arg   = arg;
    a.cc    = &cc;
    loop_run(&a);
    gv_cc_wait(&cc);
    return GV_OK;
}
