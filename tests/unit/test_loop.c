/* gv_parallel_for: every index exactly once for awkward ranges and grains,
 * nested loops, bodies that wait. One rank on `self`.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include <grapevine.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void setup(void)
{
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

static void teardown(void)
{
    gv_finalize();
}

TestSuite(loop, .init = setup, .fini = teardown, .timeout = 60);

typedef struct {
    int64_t  lo;
    uint8_t *hits;     /* hits[i - lo] */
    int64_t  bad;      /* indices outside [lo, hi) */
    int64_t  hi;
    int      yield_every;
} cover_t;

static void cover_body(int64_t i, void *arg)
{
    cover_t *c = arg;

    if ((i < c->lo) || (i >= c->hi)) {
        c->bad++;
        return;
    }
    c->hits[(uint64_t)i - (uint64_t)c->lo]++;
    if ((c->yield_every != 0) && (i % c->yield_every == 0))
        gv_yield();
}

static void check_cover(int64_t lo, int64_t hi, int64_t grain, int yield_every)
{
    uint64_t n = (hi > lo) ? (uint64_t)hi - (uint64_t)lo : 0, k;
    cover_t  c = {.lo = lo, .hi = hi, .yield_every = yield_every};

    c.hits = calloc(n + 1, 1);
    cr_assert_eq(gv_parallel_for(lo, hi, grain, cover_body, &c), GV_OK);
    cr_assert_eq(c.bad, 0, "[%lld, %lld) grain %lld: %lld stray indices",
                 (long long)lo, (long long)hi, (long long)grain,
                 (long long)c.bad);
    for (k = 0; k < n; k++)
        cr_assert_eq(c.hits[k], 1, "[%lld, %lld) grain %lld: index %lld ran "
                     "%d times", (long long)lo, (long long)hi,
                     (long long)grain, (long long)(lo + (int64_t)k),
                     c.hits[k]);
    free(c.hits);
}

Test(loop, covers_every_index_once_for_awkward_ranges)
{
    static const struct {
        int64_t lo, hi, grain;
    } cases[] = {
        {0, 0, 1},          /* empty */
        {5, 4, 1},          /* reversed: empty */
        {0, 1, 1},
        {0, 1, 1000},
        {-17, 1000, 7},
        {0, 1 << 16, 1},    /* many single-iteration leaves */
        {3, 1000003, 0},    /* default grain */
        {-1000, -1, 3},
        {0, 97, 96},
        {0, 97, 97},
        {0, 97, 98},
        {0, 1023, 2},
        {0, 1025, 2},
        {INT64_MAX - 100, INT64_MAX, 9},  /* at the top of the range */
        {INT64_MIN, INT64_MIN + 77, 5},   /* at the bottom */
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        check_cover(cases[i].lo, cases[i].hi, cases[i].grain, 0);
}

Test(loop, bodies_that_yield_still_cover_once)
{
    check_cover(0, 5000, 3, 2);
    check_cover(-31, 4097, 64, 5);
}

static void nop_body(int64_t i, void *arg)
{
    (void)i;
    (void)arg;
}

/* Leaves of the halving tree, as the loop should build it. */
static uint64_t leaves(uint64_t n, uint64_t grain)
{
    if (n <= grain)
        return 1;
    return leaves(n / 2, grain) + leaves(n - n / 2, grain);
}

Test(loop, splits_into_a_halving_tree_down_to_grain)
{
    static const int64_t ns[]     = {100000, 37, 38, 1000003, 5};
    static const int64_t grains[] = {37, 37, 37, 1, 2};
    size_t               k;

    for (k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        gv_task_stats_t before, after;
        gv_task_stats(&before);
        cr_assert_eq(gv_parallel_for(0, ns[k], grains[k], nop_body, NULL),
                     GV_OK);
        gv_task_stats(&after);
        /* Every split spawns one task; the caller runs one leaf itself. */
        cr_assert_eq(after.tasks_run - before.tasks_run,
                     leaves((uint64_t)ns[k], (uint64_t)grains[k]) - 1,
                     "n %lld grain %lld: %llu tasks", (long long)ns[k],
                     (long long)grains[k],
                     (unsigned long long)(after.tasks_run - before.tasks_run));
    }
}

Test(loop, rejects_null_body)
{
    cr_assert_eq(gv_parallel_for(0, 10, 1, NULL, NULL), GV_ERR_INVALID);
}

/* ---- nested parallelism --------------------------------------------------- */

#define N 96
static uint8_t grid[N][N];

static void inner_body(int64_t j, void *arg)
{
    int64_t i = *(int64_t *)arg;
    grid[i][j]++;
}

static void outer_body(int64_t i, void *arg)
{
    int64_t row = i;
    (void)arg;
    /* The worker running this waits for the inner loop: other workers run
     * meanwhile. */
    cr_assert_eq(gv_parallel_for(0, N, 5, inner_body, &row), GV_OK);
}

Test(loop, nested_loops_cover_the_grid_once)
{
    int i, j;

    memset(grid, 0, sizeof(grid));
    cr_assert_eq(gv_parallel_for(0, N, 3, outer_body, NULL), GV_OK);
    for (i = 0; i < N; i++)
        for (j = 0; j < N; j++)
            cr_assert_eq(grid[i][j], 1, "cell %d,%d ran %d times", i, j,
                         grid[i][j]);
}

/* Loop bodies that block on a shared counter: all of the loop's leaves must
 * be alive at once for it to finish, so the loop needs its own workers. */
static gv_cc_t rendezvous;

static void rendezvous_body(int64_t i, void *arg)
{
    (void)i;
    (void)arg;
    gv_cc_done(&rendezvous, 1);
    gv_cc_wait(&rendezvous);
}

Test(loop, leaves_may_block_on_each_other)
{
    gv_cc_init(&rendezvous, 500);
    cr_assert_eq(gv_parallel_for(0, 500, 1, rendezvous_body, NULL), GV_OK);
    cr_assert_eq(gv_cc_count(&rendezvous), 0);
}

static void sum_body(int64_t i, void *arg)
{
    *(int64_t *)arg += i;
}

static void loop_in_task(void *p)
{
    int64_t *sum;

    memcpy(&sum, p, sizeof(sum));
    cr_assert_eq(gv_parallel_for(0, 1000, 10, sum_body, sum), GV_OK);
}

Test(loop, concurrent_loops_in_many_tasks)
{
    int64_t     sums[50];
    gv_finish_t f;
    int         k;

    memset(sums, 0, sizeof(sums));
    gv_finish_begin(&f);
    for (k = 0; k < 50; k++) {
        int64_t *sp = &sums[k];
        gv_spawn_private(loop_in_task, &sp, sizeof(sp));
    }
    gv_finish_end(&f);
    for (k = 0; k < 50; k++)
        cr_assert_eq(sums[k], 999 * 1000 / 2, "loop %d summed %lld", k,
                     (long long)sums[k]);
}
