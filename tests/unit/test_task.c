/* Tasking: spawn, yield, workers (many, deep, overflowing), suspend/wake
 * from a handler, running main, finish scopes. One rank on `self`.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include <grapevine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void setup(void)
{
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

static void teardown(void)
{
    gv_finalize();
}

TestSuite(task, .init = setup, .fini = teardown, .timeout = 60);

/* ---- spawn and run ------------------------------------------------------ */

typedef struct {
    gv_cc_t *cc;
    int     *out;
    int      val;
} put_args_t;

static void put_task(void *p)
{
    put_args_t *a = p;
    a->out[a->val] += a->val + 1;
    gv_cc_done(a->cc, 1);
}

Test(task, spawned_tasks_run_once_with_their_arguments)
{
    int     out[300] = {0};
    gv_cc_t cc;
    int     i;

    gv_cc_init(&cc, 300);
    for (i = 0; i < 300; i++) {
        put_args_t a = {.cc = &cc, .out = out, .val = i};
        if (i % 3 == 0)
            cr_assert_eq(gv_spawn(put_task, &a, sizeof(a)), GV_OK);
        else if (i % 3 == 1)
            cr_assert_eq(gv_spawn_private(put_task, &a, sizeof(a)), GV_OK);
        else
            cr_assert_eq(gv_spawn_on(0, put_task, &a, sizeof(a)), GV_OK);
    }
    gv_cc_wait(&cc);
    for (i = 0; i < 300; i++)
        cr_assert_eq(out[i], i + 1, "task %d ran %d times", i,
                     out[i] / (i + 1));
}

static void nop_task(void *p)
{
    (void)p;
}

Test(task, spawn_rejects_bad_arguments)
{
    char big[GV_TASK_ARGS_MAX + 1] = {0};
    static char not_code[16];

    cr_assert_eq(gv_spawn(nop_task, big, sizeof(big)), GV_ERR_INVALID);
    cr_assert_eq(gv_spawn_private(NULL, NULL, 0), GV_ERR_INVALID);
    cr_assert_eq(gv_spawn(nop_task, NULL, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_spawn((gv_task_fn_t)(void *)not_code, NULL, 0),
                 GV_ERR_INVALID);
    cr_assert_eq(gv_spawn_on(1, nop_task, NULL, 0), GV_ERR_INVALID);
    cr_assert_eq(gv_spawn_on(-1, nop_task, NULL, 0), GV_ERR_INVALID);
}

/* ---- yield is FIFO among ready workers ------------------------------------ */

static char    order[64];
static int     norder;
static gv_cc_t started;

static void yielder(void *p)
{
    char c = *(char *)p;
    int  k;

    /* Wait until all three run, so that the turns below involve only
     * workers that are ready (not tasks still queued). */
    gv_cc_done(&started, 1);
    gv_cc_wait(&started);
    for (k = 0; k < 5; k++) {
        order[norder++] = c;
        gv_yield();
    }
}

Test(task, yield_round_robins_ready_workers)
{
    gv_finish_t f;
    char        c;
    int         i;

    norder = 0;
    gv_cc_init(&started, 3);
    gv_finish_begin(&f);
    for (c = 'a'; c <= 'c'; c++)
        gv_spawn_private(yielder, &c, 1);
    cr_assert_eq(gv_finish_end(&f), GV_OK);
    order[norder] = '\0';
    cr_assert_eq(norder, 15);
    /* FIFO ready queue: the three take turns in a fixed rotation. */
    cr_assert((order[0] != order[1]) && (order[1] != order[2]) &&
              (order[0] != order[2]), "not a rotation: %s", order);
    for (i = 3; i < norder; i++)
        cr_assert_eq(order[i], order[i - 3], "not round robin: %s", order);
}

/* ---- many workers alive at once ------------------------------------------- */

#define MANY 100000
static int     arrived, peak_alive, alive;
static gv_cc_t all_arrived;

static void many_task(void *p)
{
    (void)p;
    alive++;
    if (alive > peak_alive)
        peak_alive = alive;
    arrived++;
    gv_cc_done(&all_arrived, 1);
    /* Everyone waits until all MANY have started: they are all alive. */
    gv_cc_wait(&all_arrived);
    alive--;
}

Test(task, hundred_thousand_workers_alive_at_once, .timeout = 120)
{
    gv_finish_t     f;
    gv_task_stats_t st;
    int             i;

    gv_cc_init(&all_arrived, MANY);
    gv_finish_begin(&f);
    for (i = 0; i < MANY; i++)
        cr_assert_eq(gv_spawn_private(many_task, NULL, 0), GV_OK);
    cr_assert_eq(gv_finish_end(&f), GV_OK);
    gv_task_stats(&st);
    cr_assert_eq(arrived, MANY);
    cr_assert_eq(peak_alive, MANY);
    cr_assert_eq(alive, 0);
    cr_assert_geq(st.workers, MANY, "only %llu workers were created",
                  (unsigned long long)st.workers);
    cr_assert_geq(st.workers_max, MANY);
}

/* ---- deep recursion ------------------------------------------------------- */

static uint64_t deep(int n, volatile char *prev)
{
    volatile char frame[512];

    frame[0]   = (char)n;
    frame[511] = prev != NULL ? prev[0] : 0;
    if (n == 0)
        return (uint64_t)(unsigned char)frame[0];
    return deep(n - 1, frame) + (uint64_t)n + (uint64_t)(frame[511] != 0);
}

typedef struct {
    int       depth;
    uint64_t *out;
} deep_args_t;

static void deep_task(void *p)
{
    deep_args_t *a = p;
    *a->out        = deep(a->depth, NULL);
}

Test(task, deep_recursion_in_workers)
{
    uint64_t    r[8];
    gv_finish_t f;
    int         i;

    /* ~80 frames of ~560 bytes: 44 KiB of the 64 KiB default stack, in
     * eight workers at once. */
    gv_finish_begin(&f);
    for (i = 0; i < 8; i++) {
        deep_args_t a = {.depth = 80, .out = &r[i]};
        gv_spawn_private(deep_task, &a, sizeof(a));
    }
    gv_finish_end(&f);
    for (i = 0; i < 8; i++)
        /* sum of 1..80, plus one for each of the 79 inner frames whose
         * caller's byte was non-zero */
        cr_assert_eq(r[i], 80u * 81 / 2 + 79, "worker %d: %llu", i,
                     (unsigned long long)r[i]);
}

/* ---- stack overflow ------------------------------------------------------- */

static volatile int never; /* keeps the compiler from proving the loop */

static uint64_t forever(int n, volatile char *prev)
{
    volatile char frame[1024];

    if (never)
        return 0;
    frame[0] = (char)n;
    if (prev != NULL)
        frame[1] = prev[0];
    return forever(n + 1, frame) + frame[1];
}

static void overflow_task(void *p)
{
    (void)p;
    printf("%llu\n", (unsigned long long)forever(0, NULL));
}

/* Its own suite: the child initialises the runtime itself, with a small
 * GV_STACK, so the test process must not have done it already. */
Test(worker, stack_overflow_ends_the_rank_with_a_message, .timeout = 60)
{
    int   pipefd[2];
    pid_t pid;
    char  buf[4096];
    ssize_t n, total = 0;
    int   status;

    cr_assert_eq(pipe(pipefd), 0);
    pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        setenv("GV_STACK", "32k", 1);
        if (gv_init(NULL, NULL) != GV_OK)
            _exit(3);
        gv_finish_t f;
        gv_finish_begin(&f);
        gv_spawn_private(overflow_task, NULL, 0);
        gv_finish_end(&f);
        _exit(0); /* not reached */
    }
    close(pipefd[1]);
    while ((n = read(pipefd[0], buf + total, sizeof(buf) - 1 - (size_t)total)) >
           0)
        total += n;
    buf[total] = '\0';
    close(pipefd[0]);
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && (WEXITSTATUS(status) != 0),
              "the rank did not exit with an error (status %#x)", status);
    cr_assert(strstr(buf, "stack overflow in worker") != NULL,
              "no overflow message; stderr was: %s", buf);
    cr_assert(strstr(buf, "GV_STACK is 32768 bytes") != NULL,
              "message does not name GV_STACK: %s", buf);
}

/* ---- suspend / wake from a message handler --------------------------------- */

static gv_am_id_t wake_id;

static void wake_handler(int src, const void *payload, size_t len, void *arg)
{
    gv_worker_t *w;

    cr_assert_eq(len, sizeof(w));
    memcpy(&w, payload, sizeof(w));
    (*(int *)arg)++;
    gv_task_wake(w);
}

static int handled;

static void suspender(void *p)
{
    gv_worker_t *self = gv_task_self();
    int          k;

    for (k = 0; k < 10; k++) {
        int before = handled;
        cr_assert_eq(gv_am_send(0, wake_id, &self, sizeof(self)), GV_OK);
        gv_task_suspend();
        cr_assert_eq(handled, before + 1, "woke before the handler ran");
    }
    {
        int *d;
        memcpy(&d, p, sizeof(d));
        (*d)++;
    }
}

Test(task, handler_wakes_suspended_worker)
{
    gv_finish_t f;
    int         done = 0;
    int        *dp   = &done;

    handled = 0;
    cr_assert_eq(gv_am_register(wake_handler, &handled, &wake_id), GV_OK);
    gv_finish_begin(&f);
    gv_spawn_private(suspender, &dp, sizeof(dp));
    gv_finish_end(&f);
    cr_assert_eq(done, 1);
    cr_assert_eq(handled, 10);
}

Test(task, wake_before_suspend_is_not_lost)
{
    gv_worker_t *self = gv_task_self();

    cr_assert_not_null(self);
    gv_task_wake(self);   /* the reply came first */
    gv_task_suspend();    /* returns at once */
    cr_assert(1);
}

/* ---- gv_run_main / gv_run_all ------------------------------------------------ */

static int main_ran;

static void child_of_main(void *p)
{
    main_ran += *(int *)p;
}

static void the_main(void *p)
{
    gv_finish_t f;
    int         k = *(int *)p, i;

    gv_finish_begin(&f);
    for (i = 0; i < k; i++)
        gv_spawn(child_of_main, &i, sizeof(i));
    gv_finish_end(&f);
}

Test(task, run_main_and_run_all_return)
{
    int k = 100;

    main_ran = 0;
    cr_assert_eq(gv_run_main(the_main, &k, sizeof(k)), GV_OK);
    cr_assert_eq(main_ran, 99 * 100 / 2);
    cr_assert_eq(gv_run_all(the_main, &k, sizeof(k)), GV_OK);
    cr_assert_eq(main_ran, 99 * 100);
}

/* ---- finish scopes ----------------------------------------------------------- */

static int tree_nodes;

static void tree_task(void *p)
{
    int depth = *(int *)p, child = depth - 1, i;

    tree_nodes++;
    if (depth > 0)
        for (i = 0; i < 3; i++)
            gv_spawn(tree_task, &child, sizeof(child));
    if (depth % 2)
        gv_yield();
}

Test(task, finish_waits_for_all_descendants)
{
    gv_finish_t f;
    int         d = 7;

    tree_nodes = 0;
    gv_finish_begin(&f);
    gv_spawn(tree_task, &d, sizeof(d));
    cr_assert_eq(gv_finish_end(&f), GV_OK);
    /* 1 + 3 + ... + 3^7 */
    cr_assert_eq(tree_nodes, (2187 * 3 - 1) / 2);
}

static void nested_finish_task(void *p)
{
    gv_finish_t f;
    int         d = 3;

    gv_finish_begin(&f);
    gv_spawn(tree_task, &d, sizeof(d));
    gv_finish_end(&f);
    (*(int **)p)[0] += (tree_nodes >= 40);
}

Test(task, finish_scopes_nest)
{
    gv_finish_t outer, inner;
    int         ok = 0;
    int        *okp = &ok;

    tree_nodes = 0;
    gv_finish_begin(&outer);
    gv_spawn_private(nested_finish_task, &okp, sizeof(okp));
    gv_finish_begin(&inner);
    cr_assert_eq(gv_finish_end(&outer), GV_ERR_STATE,
                 "closing the outer scope first must fail");
    cr_assert_eq(gv_finish_end(&inner), GV_OK);
    cr_assert_eq(gv_finish_end(&outer), GV_OK);
    cr_assert_eq(ok, 1);
    cr_assert_eq(tree_nodes, 40);
}

/* ---- GV_WORKERS caps the pool ------------------------------------------------- */

static void limited_setup(void)
{
    setenv("GV_WORKERS", "10", 1);
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

static int limited_ran;

static void limited_task(void *p)
{
    int k;

    (void)p;
    for (k = 0; k < 3; k++)
        gv_yield();
    limited_ran++;
}

Test(workers, pool_grows_on_demand_up_to_gv_workers, .init = limited_setup,
     .fini = teardown, .timeout = 60)
{
    gv_finish_t     f;
    gv_task_stats_t st;
    int             i;

    gv_finish_begin(&f);
    for (i = 0; i < 100; i++)
        gv_spawn_private(limited_task, NULL, 0);
    cr_assert_eq(gv_finish_end(&f), GV_OK);
    gv_task_stats(&st);
    cr_assert_eq(limited_ran, 100);
    cr_assert_leq(st.workers, 10, "%llu workers", (unsigned long long)st.workers);
    cr_assert_geq(st.workers, 2, "the pool never grew");
    /* Finished workers are reused: a second round creates none. */
    gv_finish_begin(&f);
    for (i = 0; i < 100; i++)
        gv_spawn_private(limited_task, NULL, 0);
    gv_finish_end(&f);
    gv_task_stats(&st);
    cr_assert_eq(limited_ran, 200);
    cr_assert_leq(st.workers, 10);
}

/* ---- every worker blocked on a task that cannot get one ------------------------ */

static void inner_task(void *p)
{
    (void)p;
}

/* Holds the only worker while it waits for a task that needs one. */
static void outer_task(void *p)
{
    gv_finish_t f;

    (void)p;
    gv_finish_begin(&f);
    gv_spawn_private(inner_task, NULL, 0);
    gv_finish_end(&f);
}

/* GV_WORKERS=1 and a task that waits for a task of its own: the rank
 * must stop after GV_TIMEOUT_S with a message naming GV_WORKERS, not
 * wait for ever (it did, without a word, on every rank of a job). Its
 * own process: the child initialises the runtime itself. */
Test(workers, all_workers_blocked_on_queued_tasks_stops_the_rank,
     .timeout = 60)
{
    int     pipefd[2], status;
    pid_t   pid;
    char    buf[4096];
    ssize_t n, total = 0;

    cr_assert_eq(pipe(pipefd), 0);
    pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        gv_finish_t f;

        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        setenv("GV_WORKERS", "1", 1);
        setenv("GV_TIMEOUT_S", "2", 1);
        if (gv_init(NULL, NULL) != GV_OK)
            _exit(3);
        gv_finish_begin(&f);
        gv_spawn_private(outer_task, NULL, 0);
        gv_finish_end(&f);
        _exit(0); /* not reached */
    }
    close(pipefd[1]);
    while ((n = read(pipefd[0], buf + total,
                     sizeof(buf) - 1 - (size_t)total)) > 0)
        total += n;
    buf[total] = '\0';
    close(pipefd[0]);
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && (WEXITSTATUS(status) != 0),
              "the rank did not exit with an error (status %#x); stderr "
              "was: %s", status, buf);
    cr_assert(strstr(buf, "blocked for 2 s (GV_TIMEOUT_S)") != NULL,
              "no message after GV_TIMEOUT_S; stderr was: %s", buf);
    cr_assert(strstr(buf, "Raise GV_WORKERS") != NULL,
              "message does not name GV_WORKERS: %s", buf);
}

/* ---- deep recursion with a large GV_STACK -------------------------------------- */

static void big_stack_setup(void)
{
    setenv("GV_STACK", "2m", 1);
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

Test(workers, recursion_a_megabyte_deep_with_gv_stack_2m,
     .init = big_stack_setup, .fini = teardown, .timeout = 60)
{
    uint64_t    r[4];
    gv_finish_t f;
    int         i;

    /* 1800 frames of ~560 bytes: about 1 MB in each of four workers. */
    gv_finish_begin(&f);
    for (i = 0; i < 4; i++) {
        deep_args_t a = {.depth = 1800, .out = &r[i]};
        gv_spawn_private(deep_task, &a, sizeof(a));
    }
    gv_finish_end(&f);
    for (i = 0; i < 4; i++)
        cr_assert_eq(r[i], 1800ull * 1801 / 2 + 1799 - 7, "worker %d: %llu",
                     i, (unsigned long long)r[i]);
}

/* ---- periodic progress while nobody idles ---------------------------------------- */

static gv_am_id_t flag_id;
static int        flag_set;

static void flag_handler(int src, const void *payload, size_t len, void *arg)
{
    (void)src;
    (void)payload;
    (void)len;
    (void)arg;
    flag_set = 1;
}

static void spinner(void *p)
{
    (void)p;
    /* Always ready, never waiting: the rank is never idle, so only the
     * periodic system task can deliver the message these wait for. */
    while (!flag_set)
        gv_yield();
}

Test(task, periodic_progress_runs_while_workers_keep_yielding)
{
    gv_finish_t     f;
    gv_task_stats_t st;
    int             i;

    flag_set = 0;
    cr_assert_eq(gv_am_register(flag_handler, NULL, &flag_id), GV_OK);
    gv_finish_begin(&f);
    for (i = 0; i < 10; i++)
        gv_spawn_private(spinner, NULL, 0);
    cr_assert_eq(gv_am_send(0, flag_id, NULL, 0), GV_OK);
    cr_assert_eq(gv_finish_end(&f), GV_OK);
    gv_task_stats(&st);
    cr_assert(flag_set);
    cr_assert_gt(st.polls, 0);
}
