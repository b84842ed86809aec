/* The monitor thread: stops the job when this rank stays inside one call
 * into its network library for GV_TIMEOUT_S (see gv__libcall_t in
 * core/core.h). The AM watchdog (aggregator/am.c) names peers that take
 * nothing while we poll; it cannot run while a library call holds the
 * rank's only thread: MPI_Win_flush waiting for a target that must
 * progress (Open MPI's pt2pt window), or a provider spinning inside its
 * progress. This thread makes no library call; it reads a record the main
 * thread writes with plain stores, and sleeps between looks. At each look
 * it also checks that gvrun is still there: when the launcher's end of the
 * boot socket is closed (gvrun was killed), the rank removes its files in
 * /dev/shm and exits, whatever its main thread is doing, so that a killed
 * gvrun never leaves a rank behind (the parent-death signal SIGTERM can
 * be blocked or ignored by the program).
 * It also counts the rank's open descriptors (core/fdwatch.c).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

gv__libcall_t gv__libcall;

static struct {
    pthread_mutex_t lock;
    pthread_cond_t  cond;
    pthread_t       thread;
    int             running;
    int             stop;
} mon = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void report(int rank, const char *what, uint64_t ns)
{
    char                line[512];
    unsigned long long  s  = ns / 1000000000ull;
    const char         *tl = gv_transport_name();

    /* The main thread is inside the library and cannot run a host's
     * peer-failure callback (nor may this thread touch its state): with
     * one installed, this stops the job all the same, below. */
    if ((rank >= 0) && (gv__ctx.failed == NULL))
        gv__peer_failed(rank, "this rank waited %llu s (GV_TIMEOUT_S) inside "
                        "%s for it. It is stopped or stuck, or ran that "
                        "long without calling into Grapevine (raise "
                        "GV_TIMEOUT_S for ranks that compute that long)",
                        s, what);
    if (gv__ctx.finalizing)
        return;
    if (rank >= 0)
        gv_error("rank %d did not answer for %llu s (GV_TIMEOUT_S) while "
                 "this rank waited inside %s for it", rank, s, what);
    snprintf(line, sizeof(line), "rank %d was stuck for %llu s "
             "(GV_TIMEOUT_S) inside %s (transport %s): the network library "
             "did not return. Either it waits there for a rank that is "
             "stopped or stuck, or that computed that long without calling "
             "into Grapevine (raise GV_TIMEOUT_S for ranks that compute that "
             "long), or it is stuck itself", gv__ctx.rank, s, what, tl);
    gv_error("%s", line);
    gv__job_abort(1, line);
}

/* Whether gvrun closed its end of the boot socket: it is gone (its
 * frames are the main thread's to read; a hang-up shows without asking). */
static int launcher_gone(void)
{
    struct pollfd pfd = {.fd = (int)gv__env.BOOT_FD, .events = 0};

    if (!gv__env.BOOT_FD_set || (gv__ctx.boot == NULL) || gv__ctx.finalizing)
        return 0;
    return (poll(&pfd, 1, 0) == 1) && (pfd.revents & (POLLHUP | POLLERR));
}

/* Look every period; a call seen inside at the same seq on consecutive
 * looks has lasted at least the time between them. The time added per
 * look is capped at two periods: a monitor that was not scheduled (an
 * overloaded node, this process stopped and continued) has seen nothing
 * meanwhile and must not count it. */
static void *monitor_main(void *arg)
{
    uint64_t timeout = gv__timeout_ns();
    uint64_t period  = timeout / 8;
    uint64_t last    = gv__now_ns(), stuck = 0, last_seq = 0;
    int      have    = 0;

    (void)arg;
    if (period < 50000000ull)
        period = 50000000ull;
    if (period > 1000000000ull)
        period = 1000000000ull;
    pthread_mutex_lock(&mon.lock);
    while (!mon.stop) {
        struct timespec until;
        uint64_t        now, step, seq, seq2;
        int             inside, rank;
        const char     *what;

        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += (time_t)(period / 1000000000ull);
        until.tv_nsec += (long)(period % 1000000000ull);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (!mon.stop &&
               (pthread_cond_timedwait(&mon.cond, &mon.lock, &until) !=
                ETIMEDOUT))
            ;
        if (mon.stop)
            break;
        if (launcher_gone()) {
            gv__cleanup_now();
            _exit(1);
        }
        now  = gv__now_ns();
        step = now - last;
        last = now;
        if (step > 2 * period)
            step = 2 * period;
        gv__fd_watch(now);
        seq    = __atomic_load_n(&gv__libcall.seq, __ATOMIC_ACQUIRE);
        inside = __atomic_load_n(&gv__libcall.inside, __ATOMIC_RELAXED);
        rank   = __atomic_load_n(&gv__libcall.rank, __ATOMIC_RELAXED);
        what   = __atomic_load_n(&gv__libcall.what, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        seq2 = __atomic_load_n(&gv__libcall.seq, __ATOMIC_RELAXED);
        if ((seq != seq2) || !inside || !have || (seq != last_seq)) {
            have     = (seq == seq2) && inside;
            last_seq = seq;
            stuck    = 0;
            continue;
        }
        stuck += step;
        if (stuck >= timeout) {
            pthread_mutex_unlock(&mon.lock);
            report(rank, (what != NULL) ? what : "the network library",
                   stuck);
            return NULL;
        }
    }
    pthread_mutex_unlock(&mon.lock);
    return NULL;
}

/* A child forked after gv_init has no monitor thread (fork copies only
 * the caller's), and the lock may have been held at the fork. */
static void monitor_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

    mon.lock    = fresh;
    mon.running = 0;
}

void gv__monitor_start(void)
{
    static int         atfork;
    pthread_condattr_t attr;
    sigset_t           all, old;
    int                rc;

    if (mon.running)
        return;
    if (!atfork) {
        atfork = 1;
        pthread_atfork(NULL, NULL, monitor_atfork_child);
    }
    /* Waits measure CLOCK_MONOTONIC, as everything else here does. */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&mon.cond, &attr);
    pthread_condattr_destroy(&attr);
    mon.stop = 0;
    /* Every signal stays with the program's own thread. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&mon.thread, NULL, monitor_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        /* Not fatal: the job runs, only a wait inside a library call is
         * not watched. */
        gv_warn("cannot start the monitor thread (%s): a call stuck "
                "inside the network library will not be detected",
                strerror(rc));
        return;
    }
    mon.running = 1;
}

void gv__monitor_stop(void)
{
    if (!mon.running)
        return;
    pthread_mutex_lock(&mon.lock);
    mon.stop = 1;
    pthread_cond_signal(&mon.cond);
    pthread_mutex_unlock(&mon.lock);
    pthread_join(mon.thread, NULL);
    pthread_cond_destroy(&mon.cond);
    mon.running = 0;
}
