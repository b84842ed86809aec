/* Global completion events with tasks spawned from tasks across ranks: a
 * tree of tasks, each spawning its children on other ranks (and some on
 * the public queue, so that they may be stolen), each issuing
 * asynchronous delegate adds and writes enrolled in the same event. When
 * gv_gce_wait returns, on any rank, every task has run and every add has
 * landed. Waited on by one rank, then by all ranks at once. Run as
 * `gvrun -n 2|4 mr_dsm_gce` (also with GV_AMO=native).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "mr.h"
#include "dsm/dsm_internal.h"
#include "tasking/task_internal.h"

#define DEPTH 9  /* 2^10 - 1 tasks per tree */
#define ADDS  8  /* asynchronous adds per task */

typedef struct {
    gv_gce_t   gce;
    gv_gaddr_t counters;   /* ADDS words of the global heap */
    gv_gaddr_t slots;      /* one word per task: written 1 by that task */
    uint32_t   depth;
    uint32_t   pad;
    uint64_t   id;         /* heap numbering: children 2id+1, 2id+2 */
} node_t;

_Static_assert(sizeof(node_t) <= GV_GCE_ARGS_MAX, "node must fit");

static uint64_t ran_here;

static void node(void *p)
{
    node_t   n;
    uint64_t one = 1;
    int      k;

    memcpy(&n, p, sizeof(n));
    ran_here++;
    for (k = 0; k < ADDS; k++)
        MR_OK(gv_delegate_add(gv_gaddr_add(n.counters, 8 * k), 1, &n.gce));
    MR_OK(gv_delegate_write_async(gv_gaddr_add(n.slots, 8 * (int64_t)n.id),
                                  &one, 8, &n.gce));
    if (n.depth > 0) {
        node_t c = n;
        c.depth  = n.depth - 1;
        c.id     = 2 * n.id + 1;
        /* One child on the next rank, one stealable from here. */
        MR_OK(gv_gce_spawn_on(&n.gce, (gv_rank() + 1) % gv_nranks(), node,
                              &c, sizeof(c)));
        c.id = 2 * n.id + 2;
        MR_OK(gv_gce_spawn(&n.gce, node, &c, sizeof(c)));
    }
    /* A little time, so that the tree overlaps with the waiters' waves. */
    gv_yield();
}

static void zero(int64_t i, void *elem, void *arg)
{
    memset(elem, 0, 8);
}

static void check_tree(const node_t *root, uint64_t trees)
{
    uint64_t ntasks = (1ull << (DEPTH + 1)) - 1, v;
    int64_t  i;
    int      k;

    for (k = 0; k < ADDS; k++) {
        MR_OK(gv_delegate_read(gv_gaddr_add(root->counters, 8 * k), &v, 8));
        MR_CHECK(v == trees * ntasks, "counter %d is %llu, expected %llu", k,
                 (unsigned long long)v, (unsigned long long)(trees * ntasks));
    }
    for (i = 0; i < (int64_t)ntasks; i++) {
        MR_OK(gv_delegate_read(gv_gaddr_add(root->slots, 8 * i), &v, 8));
        MR_CHECK(v == 1, "task %lld did not write its slot", (long long)i);
    }
}

int main(int argc, char **argv)
{
    node_t   root;
    uint64_t ntasks = (1ull << (DEPTH + 1)) - 1, total;
    int      me, round;

    mr_init(&argc, &argv);
    gv_barrier();
    me = gv_rank();

    for (round = 0; round < 2; round++) {
        memset(&root, 0, sizeof(root));
        if (me == 0) {
            MR_OK(gv_gce_create(&root.gce));
            MR_OK(gv_global_alloc(8 * ADDS, &root.counters));
            MR_OK(gv_global_alloc(8 * ntasks, &root.slots));
            MR_OK(gv_forall(root.counters, ADDS, 8, 0, zero, NULL, 0, NULL));
            MR_OK(gv_forall(root.slots, (int64_t)ntasks, 8, 0, zero, NULL, 0,
                            NULL));
            root.depth = DEPTH;
        }
        MR_OK(gv_broadcast(0, &root, sizeof(root)));
        if (round == 0) {
            /* Rank 0 spawns the tree and alone waits. */
            if (me == 0) {
                MR_OK(gv_gce_spawn(&root.gce, node, &root, sizeof(root)));
                MR_OK(gv_gce_wait(&root.gce));
                check_tree(&root, 1);
            }
        } else {
            /* Every rank spawns a tree (ids overlap: slots get 1 written
             * several times, counters P times the tasks), then every rank
             * waits; each checks on its own once its wait returned. */
            MR_OK(gv_gce_spawn(&root.gce, node, &root, sizeof(root)));
            MR_OK(gv_gce_wait(&root.gce));
            MR_OK(gv_coll_barrier());
            check_tree(&root, (uint64_t)gv_nranks());
        }
        MR_OK(gv_coll_barrier());
        if (me == 0) {
            MR_OK(gv_global_free(root.counters));
            MR_OK(gv_global_free(root.slots));
        }
    }
    total = ran_here;
    MR_OK(gv_allreduce(&total, 1, GV_UINT64, GV_SUM));
    MR_CHECK(total == ntasks * (1 + (uint64_t)gv_nranks()),
             "%llu tasks ran in all, expected %llu", (unsigned long long)total,
             (unsigned long long)(ntasks * (1 + (uint64_t)gv_nranks())));
    if (me == 0)
        printf("mr_dsm_gce: trees of %llu tasks x %d adds: ok\n",
               (unsigned long long)ntasks, ADDS);
    gv_barrier();
    gv_finalize();
    return 0;
}
