/* Context-switch time versus number of workers, as in the Grappa tech
 * report's microbenchmark: N workers on one core, each incrementing its own
 * value in a large array and yielding, round robin. Prefetching on and off,
 * then two references in the same run: kernel threads yielding on one core
 * (pthread) and Boost.Context (the ctxswitch_boost binary beside this one).
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * usage: ctxswitch [-s SWITCHES] [-r REPS] [N ...]
 * (default N: 2 1000 100000 500000; REPS 3). One line per configuration,
 * the median of REPS runs (a shared machine has bursts of load):
 *   ctxswitch impl=grapevine|boost|pthread workers=N prefetch=on|off ns=X
 * Every value is checked here, before any run, in decimal digits: SWITCHES
 * 1..10^11, REPS 1..99, N 2..1000000 (a ring needs two workers; the
 * Boost ring cannot run one). If ctxswitch_boost is not beside this binary,
 * the boost line says "unavailable" and the exit status stays 0; if it is
 * there and fails, that is reported with its exit status or signal, and
 * the exit status is 1.
 */
#define _GNU_SOURCE
#include <grapevine.h>
#include "tasking/task_internal.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hop.h"
#include "out.h"

#define CTX_SWITCHES_MAX 100000000000ull /* -s */
#define CTX_REPS_MAX     99              /* -r: the medians' room */
#define CTX_WORKERS_MAX  1000000         /* N: 64 MB of array */

static const char usage_text[] =
    "usage: ctxswitch [-s SWITCHES] [-r REPS] [--csv | --format F] [-h] "
    "[N ...]\n"
    "  -s  context switches per run, 1..100000000000 (20000000)\n"
    "  -r  runs per configuration, 1..99; the median is printed (3)\n"
    "  N   workers, 2..1000000 each (2 1000 100000 500000)\n"
    OUT_USAGE
    "  Values are decimal digits. CSV/JSON: ns per switch of each\n"
    "  configuration over the runs; the Boost.Context reference\n"
    "  (ctxswitch_boost) runs in text output only.\n";

/* One cache line per worker: "a large array" (32 MB at 500,000 workers). */
#define STRIDE 8

static uint64_t     *array;
static volatile int  go;
static uint64_t      arrived;
static gv_cc_t       done_cc;

typedef struct {
    uint64_t id, iters;
} bench_args_t;

static void bench_task(void *p)
{
    bench_args_t a;
    uint64_t    *slot, k;

    memcpy(&a, p, sizeof(a));
    slot = &array[a.id * STRIDE];
    arrived++;
    while (!go)
        gv_yield();
    for (k = 0; k < a.iters; k++) {
        (*slot)++;
        gv_yield();
    }
    gv_cc_done(&done_cc, 1);
}

static double run_grapevine(uint64_t n, uint64_t iters, unsigned prefetch)
{
    gv_task_stats_t s0, s1;
    uint64_t        i, t0, t1, sum = 0;

    gv__sched_set_prefetch(prefetch);
    memset(array, 0, n * STRIDE * sizeof(uint64_t));
    go      = 0;
    arrived = 0;
    gv_cc_init(&done_cc, (int64_t)n);
    for (i = 0; i < n; i++) {
        bench_args_t a = {.id = i, .iters = iters};
        if (gv_spawn_private(bench_task, &a, sizeof(a)) != GV_OK) {
            fprintf(stderr, "ctxswitch: spawn failed\n");
            exit(1);
        }
    }
    /* Start them all (the main flow takes turns with them), then time only
     * the round robin of N workers. */
    while (arrived < n)
        gv_yield();
    gv_task_stats(&s0);
    t0 = gv_time_ns();
    go = 1;
    gv_cc_wait(&done_cc);
    t1 = gv_time_ns();
    gv_task_stats(&s1);
    for (i = 0; i < n; i++)
        sum += array[i * STRIDE];
    if (sum != n * iters) {
        fprintf(stderr, "ctxswitch: %llu increments, expected %llu\n",
                (unsigned long long)sum, (unsigned long long)(n * iters));
        exit(1);
    }
    return (double)(t1 - t0) / (double)(s1.switches - s0.switches);
}

/* ---- kernel threads on one core -------------------------------------------- */

typedef struct {
    uint64_t           id, iters;
    pthread_barrier_t *bar;
} thr_args_t;

static void *thr_main(void *p)
{
    thr_args_t *a    = p;
    uint64_t   *slot = &array[a->id * STRIDE];
    uint64_t    k;

    pthread_barrier_wait(a->bar);
    for (k = 0; k < a->iters; k++) {
        (*slot)++;
        sched_yield();
    }
    return NULL;
}

static double run_pthread(uint64_t n, uint64_t iters)
{
    pthread_t        *t   = calloc(n, sizeof(*t));
    thr_args_t       *a   = calloc(n, sizeof(*a));
    pthread_barrier_t bar;
    pthread_attr_t    attr;
    cpu_set_t         one, saved;
    uint64_t          i, t0, t1;

    /* Everything on the core this thread runs on. */
    sched_getaffinity(0, sizeof(saved), &saved);
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    sched_setaffinity(0, sizeof(one), &one);
    pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 << 10);
    pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
    for (i = 0; i < n; i++) {
        a[i].id    = i;
        a[i].iters = iters;
        a[i].bar   = &bar;
        if (pthread_create(&t[i], &attr, thr_main, &a[i]) != 0) {
            fprintf(stderr, "ctxswitch: pthread_create: %s\n", strerror(errno));
            exit(1);
        }
    }
    pthread_barrier_wait(&bar);
    t0 = gv_time_ns();
    for (i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    t1 = gv_time_ns();
    pthread_barrier_destroy(&bar);
    pthread_attr_destroy(&attr);
    sched_setaffinity(0, sizeof(saved), &saved);
    free(t);
    free(a);
    return (double)(t1 - t0) / (double)(n * iters);
}

int main(int argc, char **argv)
{
    static const uint64_t dflt[]   = {2, 1000, 100000, 500000};
    static char *const    dflt_s[] = {"2", "1000", "100000", "500000"};
    uint64_t             *ns, n_count, i, max_n = 0, target = 20000000;
    int                   reps = 3, r;
    unsigned              pf_on;
    char                  self[PATH_MAX], boost[PATH_MAX + 32];
    char                  target_s[32], reps_s[16], **cargv;
    int                   opt, off, rc, status;
    pid_t                 child;

    static const struct option longopts[] = {OUT_LONGOPTS, {NULL, 0, NULL, 0}};

    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((opt = getopt_long(argc, argv, ":s:r:h", longopts, NULL)) != -1) {
        if (out_option("ctxswitch", usage_text, opt))
            continue;
        if (opt == 's')
            target = hop_arg_u64("ctxswitch", usage_text, "-s", optarg, 1,
                                 CTX_SWITCHES_MAX, "switches");
        else if (opt == 'r')
            reps = hop_arg_int("ctxswitch", usage_text, "-r", optarg, 1,
                               CTX_REPS_MAX, "runs");
        else
            hop_getopt_fail("ctxswitch", usage_text, opt, argv, longopts);
    }
    n_count = (optind < argc) ? (uint64_t)(argc - optind)
                              : sizeof(dflt) / sizeof(dflt[0]);
    ns      = calloc(n_count, sizeof(*ns));
    if (ns == NULL) {
        fprintf(stderr, "ctxswitch: out of memory\n");
        return 1;
    }
    for (i = 0; i < n_count; i++) {
        ns[i] = (optind < argc)
                    ? hop_arg_u64("ctxswitch", usage_text, "N",
                                  argv[optind + (int)i], 2, CTX_WORKERS_MAX,
                                  "workers")
                    : dflt[i];
        if (ns[i] > max_n)
            max_n = ns[i];
    }
    /* The command line of ctxswitch_boost, built now so that it is known
     * to fit before anything runs. */
    if (realpath(argv[0], self) == NULL)
        snprintf(self, sizeof(self), "%s", argv[0]);
    snprintf(boost, sizeof(boost), "%s/ctxswitch_boost", dirname(self));
    snprintf(target_s, sizeof(target_s), "%llu", (unsigned long long)target);
    snprintf(reps_s, sizeof(reps_s), "%d", reps);
    cargv = calloc(n_count + 6, sizeof(*cargv));
    if (cargv == NULL) {
        fprintf(stderr, "ctxswitch: out of memory\n");
        return 1;
    }
    cargv[0] = boost;
    cargv[1] = "-s";
    cargv[2] = target_s;
    cargv[3] = "-r";
    cargv[4] = reps_s;
    for (i = 0; i < n_count; i++)
        cargv[5 + i] = (optind < argc) ? argv[optind + (int)i] : dflt_s[i];

    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    array = calloc(max_n * STRIDE, sizeof(uint64_t));
    pf_on = (gv__env.PREFETCH != 0) ? (unsigned)gv__env.PREFETCH : 4;
    out_begin("ctxswitch", gv_transport_name(), gv_nranks());

    for (i = 0; i < n_count; i++) {
        uint64_t iters = target / ns[i];
        if (iters < 20)
            iters = 20;
        for (off = 0; off < 2; off++) {
            double t[99];
            char   cfg[64];

            for (r = 0; r < reps; r++)
                t[r] = run_grapevine(ns[i], iters, off ? 0 : pf_on);
            snprintf(cfg, sizeof(cfg), "impl=grapevine,workers=%llu,"
                     "prefetch=%s", (unsigned long long)ns[i],
                     off ? "off" : "on");
            out_row("switch", cfg, -1, "ns", t, reps);
            if (!out_machine())
                printf("ctxswitch impl=grapevine workers=%llu prefetch=%s "
                       "ns=%.1f\n", (unsigned long long)ns[i],
                       off ? "off" : "on", t[reps / 2]);
            fflush(stdout);
        }
    }
    for (i = 0; i < n_count; i++) {
        uint64_t iters;
        if (ns[i] > 1000)
            continue; /* kernel threads by the hundred thousand: no */
        iters = target / 20 / ns[i];
        if (iters < 20)
            iters = 20;
        {
            double t[99];
            char   cfg[64];

            for (r = 0; r < reps; r++)
                t[r] = run_pthread(ns[i], iters);
            snprintf(cfg, sizeof(cfg), "impl=pthread,workers=%llu,"
                     "prefetch=off", (unsigned long long)ns[i]);
            out_row("switch", cfg, -1, "ns", t, reps);
            if (!out_machine())
                printf("ctxswitch impl=pthread workers=%llu prefetch=off "
                       "ns=%.1f\n", (unsigned long long)ns[i], t[reps / 2]);
        }
        fflush(stdout);
    }
    out_end();
    gv_finalize();

    /* Boost.Context, built from perf/ctxswitch_boost.cpp when Boost is
     * installed, lives next to this binary. Absent, it is a note; present
     * and failing, it is an error. */
    fflush(stdout);
    rc = 0;
    if (out_machine()) {
        fprintf(stderr, "ctxswitch: the Boost.Context reference runs in "
                "text output only\n");
    } else if (access(boost, X_OK) != 0) {
        printf("ctxswitch impl=boost unavailable (build perf/ctxswitch_boost.cpp: "
               "needs libboost-context-dev)\n");
    } else if ((child = fork()) < 0) {
        fprintf(stderr, "ctxswitch: fork for %s: %s\n", boost,
                strerror(errno));
        rc = 1;
    } else if (child == 0) {
        execv(boost, cargv);
        fprintf(stderr, "ctxswitch: cannot run %s: %s\n", boost,
                strerror(errno));
        _exit(127);
    } else if (waitpid(child, &status, 0) != child) {
        fprintf(stderr, "ctxswitch: waitpid for %s: %s\n", boost,
                strerror(errno));
        rc = 1;
    } else if (WIFSIGNALED(status)) {
        fprintf(stderr, "ctxswitch: %s was killed by signal %d (%s)\n",
                boost, WTERMSIG(status), strsignal(WTERMSIG(status)));
        rc = 1;
    } else if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0)) {
        fprintf(stderr, "ctxswitch: %s exited with status %d\n", boost,
                WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        rc = 1;
    }
    free(cargv);
    free(ns);
    free(array);
    return rc;
}
