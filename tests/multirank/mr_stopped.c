/* A stopped receiver: rank 0 stops rank 1 (SIGSTOP) for STOP_S seconds
 * while it keeps sending 8-byte updates to it, progressing after every
 * few sends (as a program that polls more often than it fills a batch
 * does; the drivers set GV_AGG_TIMEOUT_US low so that the timeout flush
 * closes batches meanwhile). The growth of rank 0's resident memory over
 * the stop (its peak, VmHWM, against the resident size when the stop
 * began) must stay within the bound gvinfo -t prints,
 * (GV_AGG_CREDITS + 1) x GV_AGG_BYTES, plus ALLOWANCE for the buffers the
 * transports bound themselves (16 MiB: tcp's GV_TCP_SENDQ of 8 MiB, the
 * libraries' descriptor pools) and the allocator. A SIGALRM handler
 * resumes rank 1, since rank 0 itself may be waiting for credit then.
 * Every update must land exactly once. Only 2 ranks.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#include <signal.h>
#include <sys/time.h>
#include <time.h>

#define STOP_S      3
#define ALLOWANCE   (16ull << 20)
#define GIVE_UP     (512ull << 20) /* stop sending past this growth */
#define BURST       16             /* sends between polls */

static gv_am_id_t            id_update, id_pid, id_total;
static uint64_t              sum, count, total_expected;
static volatile pid_t        peer_pid;
static volatile sig_atomic_t resumed;
static int                   got_total;

static void on_update(int src, const void *p, size_t len, void *arg)
{
    uint64_t v;

    (void)src;
    (void)arg;
    MR_CHECK(len == 8, "update of %zu bytes", len);
    memcpy(&v, p, 8);
    sum += v;
    count++;
}

static void on_pid(int src, const void *p, size_t len, void *arg)
{
    int32_t v;

    (void)src;
    (void)arg;
    MR_CHECK(len == 4, "pid message of %zu bytes", len);
    memcpy(&v, p, 4);
    peer_pid = (pid_t)v;
}

static void on_total(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)arg;
    MR_CHECK(len == 8, "total message of %zu bytes", len);
    memcpy(&total_expected, p, 8);
    got_total = 1;
}

static void on_alarm(int sig)
{
    (void)sig;
    kill(peer_pid, SIGCONT);
    resumed = 1;
}

/* A line of /proc/self/status ("VmRSS:", "VmHWM:"), in bytes. */
static uint64_t status_kib(const char *key)
{
    FILE    *f = fopen("/proc/self/status", "r");
    char     line[256];
    uint64_t v = 0;

    MR_CHECK(f != NULL, "cannot read /proc/self/status");
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, key, strlen(key)) == 0)
            v = strtoull(line + strlen(key), NULL, 10) << 10;
    fclose(f);
    return v;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t send_for(double seconds, uint64_t v, uint64_t base_rss)
{
    double   t0 = now_s();
    unsigned i;

    for (;;) {
        for (i = 0; i < BURST; i++) {
            v++;
            MR_OK(gv_am_send(1, id_update, &v, 8));
        }
        gv_progress();
        if ((v & 1023) < BURST) {
            if (now_s() - t0 >= seconds)
                break;
            if (resumed)
                break;
            if (base_rss && (status_kib("VmRSS:") > base_rss + GIVE_UP))
                break;
        }
    }
    return v;
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    uint64_t         v = 0, base, hwm, growth, bound, agg, credits;
    FILE            *f;
    int              me;

    /* Before gv_init: a peer may send as soon as it is up. */
    MR_OK(gv_am_register(on_update, NULL, &id_update));
    MR_OK(gv_am_register(on_pid, NULL, &id_pid));
    MR_OK(gv_am_register(on_total, NULL, &id_total));
    mr_init(&argc, &argv);
    me = gv_rank();
    if (gv_nranks() != 2) {
        if (gv_rank() == 0)
            fprintf(stderr, "mr_stopped: runs on 2 ranks, not %d\n",
                    gv_nranks());
        gv_finalize();
        return 1;
    }
    if (gv_rank() == 1) {
        int32_t pid = (int32_t)getpid();
        MR_OK(gv_am_send(0, id_pid, &pid, 4));
    }
    gv_barrier();
    if (gv_rank() == 0) {
        MR_CHECK(peer_pid > 0, "rank 1's pid did not arrive");
        v = send_for(0.5, v, 0); /* warm-up: pools, free lists */
    }
    gv_barrier();
    agg     = getenv("GV_AGG_BYTES") ? strtoull(getenv("GV_AGG_BYTES"), NULL, 0)
                                     : 65536;
    credits = getenv("GV_AGG_CREDITS") ? strtoull(getenv("GV_AGG_CREDITS"),
                                                  NULL, 0) : 4;
    bound   = (credits + 1) * agg;
    if (gv_rank() == 0) {
        uint64_t first = v;

        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_alarm;
        sigemptyset(&sa.sa_mask);
        MR_CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction failed");
        /* Reset the peak to the current resident size. */
        f = fopen("/proc/self/clear_refs", "w");
        MR_CHECK(f != NULL, "cannot open /proc/self/clear_refs");
        fputs("5", f);
        fclose(f);
        base = status_kib("VmRSS:");
        MR_CHECK(kill(peer_pid, SIGSTOP) == 0, "cannot stop rank 1");
        alarm(STOP_S);
        v = send_for(STOP_S + 0.5, v, base);
        while (!resumed) /* gave up early: wait for the alarm */
            gv_progress();
        hwm    = status_kib("VmHWM:");
        growth = (hwm > base) ? hwm - base : 0;
        printf("stopped receiver over %s: %llu updates during the stop, "
               "resident memory grew %llu KiB (bound %llu KiB + allowance "
               "%llu KiB)\n", gv_transport_name(),
               (unsigned long long)(v - first),
               (unsigned long long)(growth >> 10),
               (unsigned long long)(bound >> 10),
               (unsigned long long)(ALLOWANCE >> 10));
        fflush(stdout);
        MR_CHECK(growth <= bound + ALLOWANCE, "rank 0's resident memory grew "
                 "%llu KiB while rank 1 was stopped: more than the bound of "
                 "%llu KiB plus %llu KiB", (unsigned long long)(growth >> 10),
                 (unsigned long long)(bound >> 10),
                 (unsigned long long)(ALLOWANCE >> 10));
        MR_OK(gv_am_send(1, id_total, &v, 8));
    }
    gv_barrier();
    if (gv_rank() == 1) {
        MR_CHECK(got_total, "the number of updates did not arrive");
        MR_CHECK(count == total_expected, "%llu updates arrived, expected "
                 "%llu", (unsigned long long)count,
                 (unsigned long long)total_expected);
        MR_CHECK(sum == total_expected * (total_expected + 1) / 2,
                 "sum of updates %llu is wrong", (unsigned long long)sum);
    }
    gv_finalize();
    if (me == 0)
        printf("ok\n");
    return 0;
}
