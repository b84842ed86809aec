/* Waking a host loop: how long a message takes to reach a rank that sleeps
 * in its own epoll_wait on gv_wait_fd(), against one that polls
 * gv_progress(), and what the sleeping rank costs while idle.
 *
 *   gvrun -n 2 build/perf/wake [-n ITERS] [-g GAP_US] [-i IDLE_MS] [--csv]
 *
 * Rank 0 sends a stamped message after a gap (long enough for rank 1 to
 * fall asleep), rank 1 notes the one-way delay when its handler runs (both
 * ranks read the same CLOCK_MONOTONIC: one node) and answers. The two
 * paths alternate in blocks of 16 within one run. Then rank 1 sleeps
 * IDLE_MS on the fd with nothing coming and reports its CPU time.
 * Prints one line per path: median, 99th percentile, and the ratio of the
 * fd path's median to the polling path's.
 * SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include <grapevine.h>

#include "out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

enum { PATH_FD, PATH_POLL };
#define BLOCK 16

static gv_am_id_t id_ping, id_ack;
static volatile uint64_t pings, acks;
static uint64_t          last_delay;

static void on_ping(int src, const void *p, size_t len, void *arg)
{
    uint64_t t;

    (void)src;
    (void)arg;
    (void)len;
    memcpy(&t, p, 8);
    last_delay = gv_time_ns() - t;
    pings++;
}

static void on_ack(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)p;
    (void)len;
    (void)arg;
    acks++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* Sleep in epoll until *counter reaches want, or until deadline_ns. */
static void sleep_for(int ep, volatile uint64_t *counter, uint64_t want,
                      uint64_t deadline_ns)
{
    struct epoll_event ev;

    for (;;) {
        while (gv_progress() > 0)
            ;
        if ((*counter >= want) || (gv_time_ns() >= deadline_ns))
            return;
        if (gv_wait_arm() != GV_OK)
            continue;
        {
            uint64_t left = (deadline_ns - gv_time_ns()) / 1000000 + 1;
            int      ms   = (left > 1000) ? 1000 : (int)left;

            if ((epoll_wait(ep, &ev, 1, ms) < 0) && (errno != EINTR)) {
                perror("epoll_wait");
                exit(1);
            }
        }
    }
}

static void poll_for(volatile uint64_t *counter, uint64_t want)
{
    while (*counter < want)
        gv_progress();
}

static void report(const char *what, uint64_t *d, size_t n, double base)
{
    double med, p99, *us = malloc(sizeof(double) * (n ? n : 1));
    char   cfg[32];
    size_t i;

    qsort(d, n, sizeof(*d), cmp_u64);
    if (us == NULL)
        gv_abort(1, "wake: out of memory");
    for (i = 0; i < n; i++)
        us[i] = (double)d[i] / 1e3;
    snprintf(cfg, sizeof(cfg), "path=%s", what);
    out_row("delay", cfg, 8, "us", us, (int)n);
    free(us);
    if (out_machine())
        return;
    med = d[n / 2] / 1e3;
    p99 = d[(n * 99) / 100] / 1e3;
    printf("%-5s %-4s %6zu samples: median %8.1f us  p99 %8.1f us", 
           gv_transport_name(), what, n, med, p99);
    if (base > 0)
        printf("  (median %.2fx the polling path's)", med / base);
    printf("\n");
}

int main(int argc, char **argv)
{
    gv_init_opts_t     o;
    struct epoll_event ev;
    uint64_t          *delay[2];
    size_t             nd[2] = {0, 0};
    long               iters = 400, gap_us = 2000, idle_ms = 2000;
    gv_status_t        st;
    int                fd, ep, c, i;

    static const struct option longopts[] = {OUT_LONGOPTS, {NULL, 0, NULL, 0}};
    static const char          usage_text[] =
        "usage: wake [-n ITERS] [-g GAP_US] [-i IDLE_MS] [--csv | --format "
        "F] [-h]\n"
        "  -n  messages, 32..10000000 (400), half on each path\n"
        "  -g  gap before each message, 0..10000000 us (2000)\n"
        "  -i  idle time asleep on the fd at the end, 0..600000 ms (2000)\n"
        OUT_USAGE;

    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((c = getopt_long(argc, argv, ":n:g:i:h", longopts, NULL)) != -1) {
        if (out_option("wake", usage_text, c))
            continue;
        switch (c) {
        case 'n':
            iters = hop_arg_int("wake", usage_text, "-n", optarg, 2 * BLOCK,
                                10000000, "messages");
            break;
        case 'g':
            gap_us = hop_arg_int("wake", usage_text, "-g", optarg, 0,
                                 10000000, "microseconds");
            break;
        case 'i':
            idle_ms = hop_arg_int("wake", usage_text, "-i", optarg, 0,
                                  600000, "milliseconds");
            break;
        default: hop_getopt_fail("wake", usage_text, c, argv, longopts);
        }
    }
    hop_no_operands("wake", usage_text, argc, argv);
    gv_init_opts_default(&o);
    st = gv_init_opts(&o);
    if (st != GV_OK) {
        fprintf(stderr, "wake: %s\n", gv_last_error());
        return 1;
    }
    if (gv_nranks() != 2) {
        if (gv_rank() == 0)
            fprintf(stderr, "wake: needs 2 ranks\n");
        gv_finalize();
        return 1;
    }
    if ((gv_am_register_named("wake.ping", on_ping, NULL, &id_ping) != GV_OK) ||
        (gv_am_register_named("wake.ack", on_ack, NULL, &id_ack) != GV_OK))
        gv_abort(1, "register: %s", gv_last_error());
    st = gv_wait_fd(&fd);
    if (st != GV_OK) {
        if (gv_rank() == 0)
            fprintf(out_machine() ? stderr : stdout,
                   "%-5s no descriptor to sleep on (%s)\n",
                   gv_transport_name(), gv_status_str(st));
        gv_finalize();
        return 0;
    }
    ep = epoll_create1(0);
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        gv_abort(1, "epoll_ctl: %m");
    delay[0] = calloc((size_t)iters, sizeof(uint64_t));
    delay[1] = calloc((size_t)iters, sizeof(uint64_t));
    gv_barrier();

    for (i = 0; i < iters; i++) {
        int path = (i / BLOCK) & 1 ? PATH_POLL : PATH_FD;

        if (gv_rank() == 0) {
            uint64_t t, until = gv_time_ns() + (uint64_t)gap_us * 1000;

            while (gv_time_ns() < until)
                usleep(100);
            t = gv_time_ns();
            if (gv_am_send_now(1, id_ping, &t, 8) != GV_OK)
                gv_abort(1, "send");
            sleep_for(ep, &acks, (uint64_t)i + 1, UINT64_MAX);
        } else {
            uint64_t ack = 0;

            if (path == PATH_FD)
                sleep_for(ep, &pings, (uint64_t)i + 1, UINT64_MAX);
            else
                poll_for(&pings, (uint64_t)i + 1);
            delay[path][nd[path]++] = last_delay;
            if (gv_am_send_now(0, id_ack, &ack, 8) != GV_OK)
                gv_abort(1, "send");
        }
    }
    gv_barrier();
    if (gv_rank() == 1) {
        double c0 = cpu_s(), w0 = gv_wtime(), cpu, wall;

        sleep_for(ep, &pings, UINT64_MAX,
                  gv_time_ns() + (uint64_t)idle_ms * 1000000);
        cpu  = cpu_s() - c0;
        wall = gv_wtime() - w0;
        qsort(delay[PATH_POLL], nd[PATH_POLL], 8, cmp_u64);
        out_begin("wake", gv_transport_name(), gv_nranks());
        report("poll", delay[PATH_POLL], nd[PATH_POLL], 0);
        report("fd", delay[PATH_FD], nd[PATH_FD],
               delay[PATH_POLL][nd[PATH_POLL] / 2] / 1e3);
        out_row1("idle_cpu", "path=fd", -1, "percent_of_core",
                 100.0 * cpu / wall);
        out_end();
        if (!out_machine())
            printf("%-5s idle %.0f ms asleep on the fd: %.3f ms CPU, %.3f%% of "
               "a core\n", gv_transport_name(), wall * 1e3, cpu * 1e3,
               100.0 * cpu / wall);
    }
    gv_barrier();
    close(ep);
    free(delay[0]);
    free(delay[1]);
    gv_finalize();
    return 0;
}
