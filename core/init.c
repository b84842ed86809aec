/* gv_init / gv_finalize: environment -> bootstrap -> binding -> transport
 * -> active messages -> tasking; and the progress and wait policy that
 * glue them. This file is the one place that reaches up the layers.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"
#include "core/boot.h"
#include "transports/transport.h"
#include "aggregator/am_internal.h"
#include "aggregator/rma_internal.h"
#include "aggregator/team_internal.h"
#include "tasking/task_internal.h"
#include "dsm/dsm_internal.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

gv_core_t gv__ctx = {.rank = 0, .size = 1};

#define MAX_HOOKS 8
static gv_progress_hook_fn_t hooks[MAX_HOOKS];
static int                   nhooks;
static void                 *core_heap;     /* when the transport has none */
static size_t                core_heap_len;

void gv__progress_hook_add(gv_progress_hook_fn_t fn)
{
    if (nhooks == MAX_HOOKS)
        gv_fatal("more than %d progress hooks", MAX_HOOKS);
    hooks[nhooks++] = fn;
}

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

static inline unsigned progress_rest(unsigned n)
{
    static unsigned polls;
    int             i;

    rest_owed = 0;
    n += gv__am_progress();
    for (i = 0; i < nhooks; i++)
        n += hooks[i]();
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
/* How long a wait polls before it blocks, set by gv_init: GV_SPIN_US, or
 * 2 us when ranks outnumber this node's cores and the user did not choose,
 * because then a polling rank takes the core its peer needs. GV_SPIN_US's
 * default (core/env.def), 250 us, outlasts a 1 MiB transfer over a
 * loopback or 10G network: a rank that blocked halfway through one pays a
 * wake-up (60-80 us in this VM) per message, which measured 0.75x of
 * fi_pingpong's bandwidth over tcp;ofi_rxm with 50 us and 0.94-1.02x with
 * 250 us. */
static uint64_t wait_spin_ns;

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
 * 50 ms of nothing). Where a poll itself costs tens of microseconds
 * (rxm's sockets without a wait object), 50-us naps kept an idle rank at
 * a quarter to a half of a core on a loaded host (mr_idle over
 * tcp;ofi_rxm); a rank idle that long can take the longer wake-up. A
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
     * polls do not pause either, as UCX and Open MPI poll: a pause there
     * (tens of cycles on AMD) made the 8-byte ping-pong 20-25 ns slower
     * over ucx/sm and mpi/vader. A wait for send resources (the peer
     * must drain first), or one that lasts longer (a barrier), pauses
     * between polls: spinning flat out there took a fifth off GUPS over
     * ofi/shm, whose queues the other side is writing. Past GV_SPIN_US
     * the wait yields or blocks; an idle wait (not one for send space) from
     * then on after every empty poll: where a poll costs microseconds
     * (rxm's sockets without a wait object), 31 more of them between naps
     * kept an idle rank at a third of a core. A wait for send space keeps
     * polling between naps, as the peer drains it at its own pace. */
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

int gv_rank(void)
{
    return gv__ctx.rank;
}

int gv_nranks(void)
{
    return gv__ctx.size;
}

const char *gv_transport_name(void)
{
    return (gv__ctx.tl != NULL) ? gv__ctx.tl->ops->name : "none";
}

void gv__job_abort(int code, const char *msg)
{
    static int aborting;

    /* The monitor thread may abort while the main thread does. */
    if (!__atomic_exchange_n(&aborting, 1, __ATOMIC_ACQ_REL) &&
        (gv__ctx.boot != NULL))
        gv__ctx.boot->ops->abort(gv__ctx.boot, code, msg);
    fflush(stdout);
    _exit((code != 0) ? code : 1);
}

void gv_abort(int code, const char *fmt, ...)
{
    char    msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gv__log(GV_LOG_ERROR, "user", 0, "gv_abort", "%s", msg);
    gv__job_abort(code, msg);
}

int gv__peer_failed(int rank, const char *fmt, ...)
{
    char    msg[384], line[512];
    va_list ap;

    if (gv__ctx.finalizing)
        return 0;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "rank %d failed or is unreachable (%s): %s",
             rank, gv_transport_name(), msg);
    gv_error("%s", line);
    gv__job_abort(1, line);
}

static void heap_alloc(gv_tl_t *tl, size_t len)
{
    if (tl->attr.heap_base != NULL) {
        gv__rma_start(tl, tl->attr.heap_base, len);
        return;
    }
    core_heap = mmap(NULL, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (core_heap == MAP_FAILED)
        gv_fatal("mmap of the %zu-byte heap (GV_HEAP) failed: %m", len);
    /* Global memory is touched at random (delegates, GUPS): with 4 KiB
     * pages nearly every access misses the TLB. The kernel may refuse
     * (transparent huge pages off), which only costs that. */
    (void)madvise(core_heap, len, MADV_HUGEPAGE);
    core_heap_len = len;
    gv__rma_start(tl, core_heap, len);
}

gv_status_t gv_init(int *argc_p, char ***argv_p)
{
    char           err[512];
    gv_tl_params_t params;
    gv_status_t    status;
    gv_boot_t     *boot;
    gv_tl_t       *tl;

    if (gv__ctx.initialized) {
        gv_error("gv_init called twice");
        return GV_ERR_STATE;
    }
    if (gv__env_parse(err, sizeof(err)) != GV_OK) {
        fprintf(stderr, "[----] ERROR core/init.c gv_init: %s\n", err);
        exit(1);
    }
    status = gv__boot_init(gv__env.TRANSPORT, &boot);
    if (status != GV_OK)
        return status;
    gv__ctx.boot = boot;
    gv__ctx.rank = boot->rank;
    gv__ctx.size = boot->size;
    /* gvrun already warned once for the job. */
    if ((boot->rank == 0) && !gv__env.BOOT_FD_set)
        gv__env_warn_unknown();
    if (gv__env.BIND == GV_BIND_CORE)
        gv__topo_bind(boot->local_rank, boot->local_size);
    wait_spin_ns = gv__env.SPIN_US * 1000ull;
    if (!gv__env.SPIN_US_set && gv__boot_oversubscribed(boot) &&
        (wait_spin_ns > 2000))
        wait_spin_ns = 2000;

    memset(&params, 0, sizeof(params));
    params.heap_size = gv__env.HEAP;
    gv__am_params(&params);
    status = gv__tl_open(gv__env.TRANSPORT, boot, &params, &tl);
    if (status != GV_OK)
        goto err_boot;
    gv__ctx.tl = tl;
    /* What GV_AMO=native needs: refused here, so that a job that asks for
     * it over a transport without it never runs with every delegate
     * failing (every rank has the same environment and transport). */
    if ((gv__env.AMO == GV_AMO_NATIVE) &&
        ((tl->attr.caps & (GV_TL_CAP_ATOMIC64 | GV_TL_CAP_RMA)) !=
         (GV_TL_CAP_ATOMIC64 | GV_TL_CAP_RMA))) {
        gv_error("GV_AMO=native, but transport %s has no native remote %s "
                 "(see gvinfo -t): use GV_AMO=am, or a GV_TRANSPORT with "
                 "atomics and put/get", tl->ops->name,
                 (tl->attr.caps & GV_TL_CAP_ATOMIC64) ? "put/get" : "atomics");
        status = GV_ERR_UNSUPPORTED;
        goto err_tl;
    }
    status     = gv__am_start(tl);
    if (status != GV_OK)
        goto err_tl;
    gv__team_init();
    heap_alloc(tl, params.heap_size);
    gv__ctx.initialized = 1;
    gv__monitor_start();
    gv__task_init();
    gv__dsm_init();
    if (gv__env.INFO && (boot->rank == 0)) {
        char caps[64];
        gv__tl_caps_str(tl->attr.caps, caps, sizeof(caps));
        fprintf(stderr, "[0000] INFO grapevine: %d ranks on %d node(s), "
                "boot %s, transport %s (%s) caps %s\n", boot->size,
                boot->nnodes, boot->ops->name, tl->ops->name,
                tl->attr.detail, caps);
        gv__env_print(stderr, 0);
    }
    gv_barrier();
    return GV_OK;

err_tl:
    gv__tl_close(tl);
    gv__ctx.tl = NULL;
err_boot:
    gv__boot_fini(boot);
    gv__ctx.boot = NULL;
    return status;
}

void gv_finalize(void)
{
    if (!gv__ctx.initialized)
        return;
    gv_barrier();
    gv_am_wait_local();
    gv__dsm_fini();
    gv__task_fini();
    gv_barrier();
    if (gv__env.STATS)
        gv__am_stats_print();
    /* From here a peer closing its connection is expected. The boot
     * barrier makes sure every rank knows that before anyone closes. */
    gv__ctx.finalizing = 1;
    gv__monitor_stop();
    gv__boot_barrier(gv__ctx.boot);
    gv__rma_fini();
    gv__team_fini();
    gv__tl_close(gv__ctx.tl);
    gv__ctx.tl = NULL;
    gv__am_fini();
    if (core_heap != NULL)
        munmap(core_heap, core_heap_len);
    core_heap = NULL;
    gv__boot_fini(gv__ctx.boot);
    gv__ctx.boot        = NULL;
    gv__ctx.initialized = 0;
    gv__ctx.finalizing  = 0;
    nhooks              = 0;
}
