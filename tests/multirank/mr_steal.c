/* Work stealing across ranks: every task is spawned on rank 0, idle ranks
 * steal them, the finish scope on rank 0 detects termination even though
 * the tasks (and their descendants) ran elsewhere, and the totals are
 * exact. Run as `gvrun -n 2|4 mr_steal`. SPDX-License-Identifier: BSD-3-Clause */
#include "mr.h"

#include <sys/resource.h>

#define FLAT_TASKS 2000
#define WORK_NS    80000   /* per flat task: 2000 x 80 us = 160 ms of work,
                              several time slices of an oversubscribed core */
#define TREE_DEPTH 13      /* binary tree: 2^14 - 1 nodes */
#define ROUNDS     3

/* Per-rank tallies of what ran here. Tasks refer to these globals by name,
 * so a stolen task updates the tallies of the rank it runs on. */
static uint64_t my_count, my_sum;

/* Rank 0's view, filled by the gather. */
static uint64_t all_count, all_sum;
static uint64_t per_rank[64];

static void spin_ns(uint64_t ns)
{
    uint64_t t0 = gv_time_ns();
    while (gv_time_ns() - t0 < ns)
        ;
}

static void flat_task(void *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    spin_ns(WORK_NS);
    my_count++;
    my_sum += v;
}

typedef struct {
    uint32_t depth;
    uint64_t id;
} node_t;

/* A binary tree whose nodes are spawned wherever their parent runs: the
 * descendants of a stolen node are created on the thief, and may be stolen
 * again from there. */
static void tree_task(void *p)
{
    node_t n;

    memcpy(&n, p, sizeof(n));
    my_count++;
    my_sum += n.id;
    spin_ns(8000); /* 16383 nodes x 8 us: long enough for slow thieves */
    if (n.depth > 0) {
        node_t c = {.depth = n.depth - 1, .id = 2 * n.id};
        MR_OK(gv_spawn(tree_task, &c, sizeof(c)));
        c.id = 2 * n.id + 1;
        MR_OK(gv_spawn(tree_task, &c, sizeof(c)));
    }
}

typedef struct {
    int32_t  rank;
    uint64_t count, sum;
} report_t;

static void accumulate_task(void *p)
{
    report_t r;

    memcpy(&r, p, sizeof(r));
    MR_CHECK((r.rank >= 0) && (r.rank < gv_nranks()), "bad rank %d", r.rank);
    all_count += r.count;
    all_sum += r.sum;
    per_rank[r.rank] = r.count;
}

static void report_task(void *p)
{
    report_t r = {.rank = gv_rank(), .count = my_count, .sum = my_sum};

    (void)p;
    my_count = my_sum = 0;
    MR_OK(gv_spawn_on(0, accumulate_task, &r, sizeof(r)));
}

/* Collect every rank's tallies on rank 0 (and reset them). */
static void gather(void)
{
    gv_finish_t f;
    int         r;

    all_count = all_sum = 0;
    memset(per_rank, 0, sizeof(per_rank));
    gv_finish_begin(&f);
    for (r = 0; r < gv_nranks(); r++)
        MR_OK(gv_spawn_on(r, report_task, NULL, 0));
    MR_OK(gv_finish_end(&f));
}

/* What each rank ran in each kind of phase, summed over the rounds. */
static uint64_t ran_flat[64], ran_tree[64];

/* Print the balance of one phase and add it to @a ran. How evenly the
 * work spreads depends on how the host schedules the ranks (on a loaded
 * machine a thief may sleep through most of a round), so the bar, checked
 * after every round by check_stolen(), is only that every thief ran some
 * of it: a rank that never steals runs none. */
static void note_balance(const char *what, uint64_t total, uint64_t *ran)
{
    int r, p = gv_nranks();

    for (r = 0; r < p; r++) {
        printf("%s: rank %d ran %llu of %llu tasks\n", what, r,
               (unsigned long long)per_rank[r], (unsigned long long)total);
        ran[r] += per_rank[r];
    }
}

static void check_stolen(const char *what, const uint64_t *ran)
{
    int r;

    for (r = 1; r < gv_nranks(); r++)
        MR_CHECK(ran[r] > 0,
                 "%s: rank %d ran none of the tasks spawned on rank 0 in %d "
                 "rounds (no stealing?)", what, r, ROUNDS);
}

static void main_task(void *p)
{
    int round;

    (void)p;
    for (round = 0; round < ROUNDS; round++) {
        gv_finish_t f;
        uint64_t    i, n;

        /* Flat: everything spawned here, public. */
        gv_finish_begin(&f);
        for (i = 0; i < FLAT_TASKS; i++)
            MR_OK(gv_spawn(flat_task, &i, sizeof(i)));
        MR_OK(gv_finish_end(&f));
        gather();
        MR_CHECK(all_count == FLAT_TASKS,
                 "round %d: %llu flat tasks ran after finish, expected %d",
                 round, (unsigned long long)all_count, FLAT_TASKS);
        MR_CHECK(all_sum == (uint64_t)FLAT_TASKS * (FLAT_TASKS - 1) / 2,
                 "round %d: flat sum %llu", round,
                 (unsigned long long)all_sum);
        note_balance("flat", FLAT_TASKS, ran_flat);

        /* Tree: one root spawned here, the rest spawned wherever. */
        node_t root = {.depth = TREE_DEPTH, .id = 1};
        gv_finish_begin(&f);
        MR_OK(gv_spawn(tree_task, &root, sizeof(root)));
        MR_OK(gv_finish_end(&f));
        gather();
        n = (1ull << (TREE_DEPTH + 1)) - 1; /* ids 1..n */
        MR_CHECK(all_count == n, "round %d: %llu tree nodes, expected %llu",
                 round, (unsigned long long)all_count, (unsigned long long)n);
        MR_CHECK(all_sum == n * (n + 1) / 2, "round %d: tree sum %llu",
                 round, (unsigned long long)all_sum);
        note_balance("tree", n, ran_tree);
    }
    check_stolen("flat", ran_flat);
    check_stolen("tree", ran_tree);
}

/* gv_run_all: every rank opens its own finish scope and spawns tasks into
 * it at once, so scopes with different homes are stolen from each other
 * concurrently. */
#define ALL_TASKS 500

static void all_task(void *p)
{
    uint64_t v;

    memcpy(&v, p, sizeof(v));
    spin_ns(5000);
    my_count++;
    my_sum += v;
}

static void all_main(void *p)
{
    gv_finish_t f;
    uint64_t    i;

    (void)p;
    gv_finish_begin(&f);
    for (i = 0; i < ALL_TASKS; i++) {
        uint64_t v = (uint64_t)gv_rank() * ALL_TASKS + i;
        MR_OK(gv_spawn(all_task, &v, sizeof(v)));
    }
    MR_OK(gv_finish_end(&f));
}

static void check_all_main(void *p)
{
    uint64_t n = (uint64_t)gv_nranks() * ALL_TASKS;

    (void)p;
    gather();
    MR_CHECK(all_count == n, "run_all: %llu tasks ran, expected %llu",
             (unsigned long long)all_count, (unsigned long long)n);
    MR_CHECK(all_sum == n * (n - 1) / 2, "run_all: sum %llu",
             (unsigned long long)all_sum);
}

/* An idle rank must not burn its core: while rank 0's main sleeps without
 * yielding (so it answers nobody), the others have nothing to do. */
static void sleepy_main(void *p)
{
    (void)p;
    usleep(300000);
}

static double cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void check_idle_cpu(void)
{
    double c0 = cpu_seconds(), w0 = gv_wtime(), cpu, wall;

    MR_OK(gv_run_main(sleepy_main, NULL, 0));
    cpu  = cpu_seconds() - c0;
    wall = gv_wtime() - w0;
    printf("idle: rank %d used %.3f s of CPU in %.3f s\n", gv_rank(), cpu,
           wall);
    if (gv_rank() != 0) {
        /* Rank 0's exit message is sent after its sleep, so the others
         * waited most of it. */
        MR_CHECK(wall > 0.1, "rank %d left gv_run_main after %.3f s, before "
                 "rank 0's main returned", gv_rank(), wall);
        MR_CHECK(cpu < 0.5 * wall, "rank %d spun while idle: %.3f s of CPU "
                 "in %.3f s", gv_rank(), cpu, wall);
    }
}

int main(int argc, char **argv)
{
    gv_task_stats_t st;

    mr_init(&argc, &argv);
    if (gv_nranks() > 64)
        mr_skip("more than 64 ranks");
    MR_OK(gv_run_main(main_task, NULL, 0));
    MR_OK(gv_run_all(all_main, NULL, 0));
    MR_OK(gv_run_main(check_all_main, NULL, 0));
    check_idle_cpu();
    gv_task_stats(&st);
    printf("rank %d: steals %llu/%llu, %llu tasks in, %llu out, %llu "
           "rejected\n", gv_rank(), (unsigned long long)st.steals,
           (unsigned long long)st.steal_attempts,
           (unsigned long long)st.tasks_stolen_in,
           (unsigned long long)st.tasks_stolen_out,
           (unsigned long long)st.rejected);
    MR_CHECK(st.rejected == 0, "%llu task messages rejected",
             (unsigned long long)st.rejected);
    if (gv_rank() != 0)
        MR_CHECK(st.tasks_stolen_in > 0, "rank %d never stole a task",
                 gv_rank());
    gv_finalize();
    return 0;
}
