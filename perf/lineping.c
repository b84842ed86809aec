/* lineping: how long one cache line takes to go from one core to another
 * right now, with no library at all. Two processes, pinned to the first
 * two CPUs this process may use, take turns writing one shared word.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Why: on the VMs these benchmarks run on, the host places the two vCPUs
 * anew whenever they have been idle, and a line takes about 33, 45 or 160
 * ns between them (modes that last a whole process's life). Every
 * shared-memory ping-pong inherits the mode of its launch, so
 * perf/compare.sh runs this once per round and prints the modes it saw.
 * A side that stops answering for 10 s ends the run with an error.
 *
 * Usage: lineping [-n round_trips]; prints "lineping one_way_ns=X".
 * -n takes 1000..100000000 in decimal digits (default 200000); anything
 * else is an error naming it (the parser is perf/hop.h's, which calls
 * nothing of the library).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hop.h"
#include "out.h"

static const char usage_text[] =
    "usage: lineping [-n round_trips, 1000..100000000 (200000)] "
    "[--csv | --format F] [-h]\n"
    OUT_USAGE
    "  Text: the mean one-way time over the timed round trips. CSV/JSON:\n"
    "  the one-way time of each of the 9 timed tenths (median, min, max).\n";

static double now_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Spin until *w == want; give up after 10 s (the other side is gone). */
static void await(volatile int64_t *w, long want, pid_t other)
{
    double   t0 = now_ns();
    unsigned spins = 0;

    while (*w != want) {
        if ((++spins & 0xfffff) == 0 && (now_ns() - t0 > 10e9)) {
            fprintf(stderr, "lineping: no answer for 10 s; the other "
                            "process is gone\n");
            if (other > 0)
                kill(other, SIGKILL);
            exit(1);
        }
    }
}

static void pin(int cpu)
{
    cpu_set_t s;

    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof(s), &s) != 0) {
        fprintf(stderr, "lineping: cannot pin to CPU %d: %s\n", cpu,
                strerror(errno));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    long              n = 200000, v;
    int               opt, cpu[2], k = 0, c, status;
    cpu_set_t         mine;
    volatile int64_t *w;
    double            t0, t1, tb, tenth[9];
    pid_t             child, parent;
    static const struct option longopts[] = {OUT_LONGOPTS, {NULL, 0, NULL, 0}};

    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((opt = getopt_long(argc, argv, ":n:h", longopts, NULL)) != -1) {
        if (out_option("lineping", usage_text, opt))
            continue;
        if (opt != 'n')
            hop_getopt_fail("lineping", usage_text, opt, argv, longopts);
        n = (long)hop_arg_u64("lineping", usage_text, "-n", optarg, 1000,
                              100000000, "round trips");
    }
    hop_no_operands("lineping", usage_text, argc, argv);
    if (sched_getaffinity(0, sizeof(mine), &mine) != 0) {
        fprintf(stderr, "lineping: sched_getaffinity: %s\n", strerror(errno));
        return 1;
    }
    for (c = 0; (c < CPU_SETSIZE) && (k < 2); c++)
        if (CPU_ISSET(c, &mine))
            cpu[k++] = c;
    if (k < 2) {
        fprintf(stderr, "lineping: needs two CPUs, this process may use "
                        "%d\n", k);
        return 1;
    }
    w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
             -1, 0);
    if (w == MAP_FAILED) {
        fprintf(stderr, "lineping: mmap: %s\n", strerror(errno));
        return 1;
    }
    *w     = 0;
    parent = getpid();
    child  = fork();
    if (child < 0) {
        fprintf(stderr, "lineping: fork: %s\n", strerror(errno));
        return 1;
    }
    if (child == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the parent */
        if (getppid() != parent)
            _exit(1);
        pin(cpu[1]);
        for (v = 1; v < 2 * n; v += 2) { /* answer every odd value */
            await(w, v, 0);
            *w = v + 1;
        }
        _exit(0);
    }
    pin(cpu[0]);
    /* A tenth of the round trips warm up, then the rest are timed. */
    for (v = 0; v < 2 * (n / 10); v += 2) {
        *w = v + 1;
        await(w, v + 2, child);
    }
    /* Then the other nine tenths (the last takes the remainder), each
     * timed on its own. */
    t0 = tb = now_ns();
    for (k = 0; k < 9; k++) {
        long end = (k == 8) ? 2 * n : v + 2 * (n / 10), from = v;

        for (; v < end; v += 2) {
            *w = v + 1;
            await(w, v + 2, child);
        }
        t1       = now_ns();
        tenth[k] = (t1 - tb) / (double)(v - from);
        tb       = t1;
    }
    if ((waitpid(child, &status, 0) != child) || !WIFEXITED(status) ||
        (WEXITSTATUS(status) != 0)) {
        fprintf(stderr, "lineping: the other process failed\n");
        return 1;
    }
    out_begin("lineping", "none", 1);
    out_row("one_way", "cache_line", 64, "ns", tenth, 9);
    out_end();
    if (!out_machine())
        printf("lineping one_way_ns=%.0f\n",
               (t1 - t0) / (double)(n - n / 10) / 2.0);
    return 0;
}
