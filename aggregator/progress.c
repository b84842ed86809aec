/* Progress and waiting: one poll is the transport's progress (which runs
 * the handlers of what arrived), then the AM layer's work and the
 * callbacks other layers registered with the core (core/hooks.c); a wait
 * polls, spins, yields or blocks in the transport by the policy below.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "aggregator/progress.h"
#include "aggregator/am_internal.h"

#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

/* A poll in two parts: the transport's progress, which runs the handlers
 * of what arrived, then the layer's own work. gv_wait() looks at its
 * condition between the two: what it waits for (a reply) has usually just
 * arrived. Inline in the wait loops: one call level less per poll. */
static inline unsigned progress_tl(gv_tl_t *tl)
{
    unsigned n;

    gv__lib_enter(-1, "the transport's progress");
    n = tl->ops->progress(tl);
    gv__lib_leave();
    return n;
}

/* Set when gv_wait() returned before the rest of its last poll. */
static int rest_owed;

/* With a peer-failure callback installed: look at the local peers'
 * liveness (a system call) every 20 ms, reading the clock every 64 polls,
 * and run the callbacks owed. */
static unsigned __attribute__((noinline)) failures_poll(void)
{
    static unsigned polls;
    static uint64_t last_ns;

    if ((++polls & 63) == 0) {
        uint64_t now = gv__now_ns();

        if (now - last_ns > 20000000ull) {
            last_ns = now;
            gv__live_check();
        }
    }
    if (!gv__ctx.failed_owed)
        return 0;
    gv__peer_failures_run();
    return 1;
}

static inline unsigned progress_rest(unsigned n)
{
    static unsigned polls;

    rest_owed = 0;
    n += gv__am_progress();
    n += gv__progress_hooks_run();
    if (__builtin_expect(gv__ctx.failed != NULL, 0))
        n += failures_poll();
    /* The watchdog, every 256 polls: a clock read per poll would cost
     * more than the rest of an empty poll. */
    if ((++polls & 255) == 0)
        gv__am_watch(gv__now_ns());
    return n;
}

static inline unsigned progress(void)
{
    gv_tl_t *tl = gv__ctx.tl;

    if (tl == NULL)
        return 0;
    return progress_rest(progress_tl(tl));
}

unsigned gv_progress(void)
{
    return progress();
}

int (*gv__wait_yield_hook)(void);
/* How long a wait polls before it blocks, set by gv__wait_init():
 * GV_SPIN_US, or 2 us when ranks outnumber this node's cores and the user
 * did not choose, because then a polling rank takes the core its peer
 * needs. GV_SPIN_US's default (core/env.def), 250 us, outlasts a 1 MiB
 * transfer over a loopback or 10G network, so a rank does not pay a
 * wake-up per message halfway through one (50 us cost a quarter of the
 * bandwidth over tcp;ofi_rxm: perf/notes/pingpong-path.md). */
static uint64_t wait_spin_ns;

void gv__wait_init(const gv_boot_t *boot)
{
    wait_spin_ns = gv__env.SPIN_US * 1000ull;
    if (!gv__env.SPIN_US_set && gv__boot_oversubscribed(boot) &&
        (wait_spin_ns > 2000))
        wait_spin_ns = 2000;
}

void gv__wait_begin(gv_waiter_t *w)
{
    w->start_ns       = 0;
    w->idle_rounds    = 0;
    w->blocked_rounds = 0;
    w->for_send       = 0;
}

void gv__wait_begin_send(gv_waiter_t *w)
{
    gv__wait_begin(w);
    w->for_send = 1;
}

/* Empty polls of a wait without a pause between them: over shared memory
 * a reply comes within a few dozen polls (a 0.2-0.4 us round trip). */
#define WAIT_HOT_POLLS 64

/* A nap of a wait that has found nothing for a while, where the transport
 * cannot wake it: 50 us, doubling every 64 naps up to 800 us (after about
 * 50 ms of nothing), so that where a poll itself costs tens of
 * microseconds (rxm's sockets without a wait object) an idle rank stays
 * off the core; a rank idle that long can take the longer wake-up. A
 * wait for send space keeps 50 us: the peer drains at its own pace. */
static unsigned wait_nap_us(unsigned blocked_rounds)
{
    unsigned doublings = (blocked_rounds - 64) / 64;

    return 50u << ((doublings < 4) ? doublings : 4);
}

/* Every 32nd empty poll: read the clock, and give the core away once
 * polling found nothing for wait_spin_ns. */
static void __attribute__((noinline)) wait_idle(gv_waiter_t *w)
{
    gv_tl_t *tl;
    uint64_t now;

    now = gv__now_ns();
    if (w->start_ns == 0) {
        w->start_ns = now;
        return;
    }
    if (now - w->start_ns < wait_spin_ns) {
        gv__cpu_relax();
        return;
    }
    /* Long idle: give the core away. Block in the transport if it can
     * wake us, else yield, then sleep a little once yielding got us
     * nothing for a while (oversubscribed ranks need the core). */
    w->blocked_rounds++;
    tl = gv__ctx.tl;
    if ((tl != NULL) && (tl->attr.caps & GV_TL_CAP_WAIT) &&
        (!w->for_send || (tl->attr.caps & GV_TL_CAP_WAIT_SEND)))
        tl->ops->wait(tl, 1000);
    else if (w->blocked_rounds < 64)
        sched_yield();
    else
        usleep(w->for_send ? 50 : wait_nap_us(w->blocked_rounds));
}

/* One poll of a wait. Inline in gv_wait(), so that the registers a poll
 * needs are saved once per wait, not once per poll: a reply is seen up to
 * one turn of the loop after it lands, and the turn is shorter. */
static inline void wait_poll_rest(gv_waiter_t *w, unsigned n)
{
    if (((gv__ctx.tl != NULL) ? progress_rest(n) : 0) > 0) {
        w->start_ns       = 0;
        w->idle_rounds    = 0;
        w->blocked_rounds = 0;
        return;
    }
    /* Nothing happened: whatever we buffered, ship it now. */
    gv__am_idle();
    /* A worker waiting (for a barrier, credits, a reply) lets the rank's
     * other workers run instead of holding the core. */
    if ((gv__wait_yield_hook != NULL) && gv__wait_yield_hook())
        return;
    /* Read the clock only every 32 empty polls: a reply that lands while
     * we read it is seen that much later. The first WAIT_HOT_POLLS empty
     * polls do not pause either, as UCX and Open MPI poll (a pause cost
     * 20-25 ns of an 8-byte hop over ucx/sm). A wait for send resources
     * (the peer must drain first), or one that lasts longer (a barrier),
     * pauses between polls, so as not to fight the other side for the
     * queues it is writing. Past GV_SPIN_US the wait yields or blocks; an
     * idle wait (not one for send space) from then on after every empty
     * poll, since where a poll costs microseconds (rxm's sockets without a
     * wait object) polls between naps keep a rank on the core. A wait for
     * send space keeps polling between naps, as the peer drains it at its
     * own pace. Measurements: perf/notes/pingpong-path.md. */
    if (((w->blocked_rounds == 0) || w->for_send) &&
        ((++w->idle_rounds & 31) != 0)) {
        if (w->for_send || (w->idle_rounds > WAIT_HOT_POLLS))
            gv__cpu_relax();
        return;
    }
    wait_idle(w);
}

static inline void wait_poll(gv_waiter_t *w)
{
    gv_tl_t *tl = gv__ctx.tl;

    wait_poll_rest(w, (tl != NULL) ? progress_tl(tl) : 0);
}

void gv__wait_poll(gv_waiter_t *w)
{
    wait_poll(w);
}

void gv_wait(int (*done)(void *arg), void *arg)
{
    gv_waiter_t w;
    gv_tl_t    *tl;
    unsigned    n;

    gv__wait_begin(&w);
    while (!done(arg)) {
        /* The rest of the poll the last gv_wait() returned before: now,
         * when what this wait is for has not arrived yet (a reply is on
         * its way), not between a request and its reply. A loop of waits
         * that each end at their first poll still runs it once a wait. */
        if (rest_owed && (gv__ctx.tl != NULL) && (progress_rest(0) > 0))
            continue;
        /* Return as soon as the transport's progress brought what we wait
         * for; the layer's work after it (batches, hooks) is owed to the
         * next wait, or done by the next poll of any other. Measured over
         * ucx/sm: 4-5 ns of the one-way latency. */
        n = ((tl = gv__ctx.tl) != NULL) ? progress_tl(tl) : 0;
        if ((n > 0) && done(arg)) {
            rest_owed = 1;
            return;
        }
        wait_poll_rest(&w, n);
    }
}

/* ---- sleeping on an fd (gv_wait_fd) ------------------------------------ */

/* Whether the host may use the fd; logs why not. */
static gv_status_t wait_fd_check(const char *what)
{
    gv_tl_t *tl = gv__ctx.tl;

    if (!gv__ctx.initialized || (tl == NULL)) {
        gv_error("%s outside gv_init..gv_finalize", what);
        return GV_ERR_STATE;
    }
    if (!(tl->attr.caps & GV_TL_CAP_WAIT_FD)) {
        gv_error("%s: transport %s has no descriptor to sleep on (no "
                 "WAIT_FD in gvinfo -t%s): poll with gv_progress()", what,
                 tl->ops->name,
                 (strcmp(tl->ops->name, "ofi") == 0)
                     ? "; over ofi, GV_OFI_WAIT=fd gives one where the "
                       "provider has an fd wait object"
                     : "");
        return GV_ERR_UNSUPPORTED;
    }
    return GV_OK;
}

/* The host's descriptor: an epoll set over the transport's fd and the
 * local peers' liveness (core/liveness.c), made at the first call. */
static int wait_ep = -1;

static int ep_add(int fd)
{
    struct epoll_event e;

    memset(&e, 0, sizeof(e));
    e.events = EPOLLIN;
    if (epoll_ctl(wait_ep, EPOLL_CTL_ADD, fd, &e) == 0)
        return 0;
    gv_error("gv_wait_fd: epoll_ctl: %m");
    return -1;
}

gv_status_t gv_wait_fd(int *fd_p)
{
    gv_status_t status = wait_fd_check("gv_wait_fd");
    gv_tl_t    *tl     = gv__ctx.tl;

    if (status != GV_OK)
        return status;
    if (fd_p == NULL) {
        gv_error("gv_wait_fd: fd_p must not be NULL");
        return GV_ERR_INVALID;
    }
    if (wait_ep < 0) {
        wait_ep = epoll_create1(EPOLL_CLOEXEC);
        if (wait_ep < 0) {
            gv_error("gv_wait_fd: epoll_create1: %m");
            return GV_ERR_NO_RESOURCE;
        }
        if ((ep_add(tl->ops->wait_fd(tl)) != 0) ||
            ((gv__live_fd() >= 0) && (ep_add(gv__live_fd()) != 0))) {
            gv__wait_fini();
            return GV_ERR_IO;
        }
    }
    *fd_p = wait_ep;
    return GV_OK;
}

void gv__wait_fini(void)
{
    if (wait_ep >= 0)
        close(wait_ep);
    wait_ep = -1;
}

gv_status_t gv_wait_arm(void)
{
    gv_tl_t    *tl;
    gv_status_t status = wait_fd_check("gv_wait_arm");

    if (status != GV_OK)
        return status;
    tl = gv__ctx.tl;
    /* The rest of a poll gv_wait() skipped, a failure not reported yet,
     * buffers to ship, messages to self: all work before sleeping. */
    gv__live_check();
    if (rest_owed || gv__ctx.failed_owed)
        return GV_INPROGRESS;
    if (gv__am_busy((tl->attr.caps & GV_TL_CAP_WAIT_SEND) != 0))
        return GV_INPROGRESS;
    return tl->ops->arm(tl);
}
