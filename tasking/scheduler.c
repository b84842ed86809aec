/* The per-rank scheduler: ready queue with context prefetching, private and
 * public task queues, periodic system tasks, idling, spawn, yield, and
 * running the program's main task. SPDX-License-Identifier: BSD-3-Clause
 *
 * Contexts on a rank:
 *   root     the main flow (the code that called gv_init), on the OS
 *            thread's stack. It is a worker like the others: it can wait,
 *            and while it waits the rank runs tasks.
 *   workers  pooled, each with its own mmap'ed stack (worker.c); a worker
 *            takes tasks until none is left, then parks in the pool.
 *   sys      the system context, with its own stack: it runs the periodic
 *            system tasks (communication progress, aggregator flushes,
 *            timers) and is where the rank idles when nothing is runnable.
 *
 * Workers switch directly to one another: when one yields or waits, it
 * picks the next one itself (see run_next), so a switch is one call to the
 * context-switch routine and touches only the two workers involved. The
 * order of preference follows Grappa: a due periodic task first, then ready
 * workers (FIFO), then new tasks (private before public), and the system
 * context when there is nothing else; except that gv_yield() starts a
 * queued task before resuming ready workers (see there).
 *
 * Context prefetching (Grappa tech report, section 2): with hundreds of
 * thousands of workers their stacks are not in cache. The ready queue is a
 * ring of (worker, saved stack pointer) entries, so when the scheduler
 * takes a worker from its head it also looks D places ahead and prefetches
 * that worker's saved registers and the start of the frame above them (two
 * lines from its stack pointer), from the queue entry alone: no descriptor
 * has to be read first, so there is no chain of dependent misses. A
 * yielding worker saves its registers straight into its queue entry, so a
 * round of yields never touches a descriptor; and the switch is the last
 * act of gv_yield and of the wait paths, a tail call, so their own frames
 * are gone from the stack when the registers are pushed and a suspended
 * worker is as few lines as its caller's depth allows. By the time a
 * worker reaches the head its context is in cache (Grappa's
 * "ready-resident"). D is GV_PREFETCH (0 turns it off). Worker stacks are
 * also cache-coloured (worker.c), so that the prefetched lines of
 * different workers do not evict each other.
 */
#include "tasking/task_internal.h"
#include "aggregator/progress.h"
#include <grapevine/am.h>

#include <sched.h>

gv__sched_t gv__sched;
#define S gv__sched

static gv_worker_t root_worker;
static gv_worker_t *sys_worker;
static gv_worker_t **all_workers;
static uint64_t      all_cap;
static uint64_t      ticks_per_us = 1;

/* gv_run_main / gv_run_all */
typedef struct {
    uint32_t epoch;
} run_msg_t;
static gv_am_id_t am_run_done, am_run_exit;
static uint32_t   run_epoch, exit_epoch;
static uint32_t   done_count[2];
static int        root_waits_exit;

uint64_t gv__ticks_per_us(void)
{
    return ticks_per_us;
}

static void calibrate_ticks(void)
{
    uint64_t t0 = gv__now_ns(), k0 = gv__ticks(), t1, k1;

    do {
        t1 = gv__now_ns();
    } while (t1 - t0 < 2000000);
    k1           = gv__ticks();
    ticks_per_us = (k1 - k0) * 1000 / (t1 - t0);
    if (ticks_per_us == 0)
        ticks_per_us = 1;
}

/* ---- ready queue ------------------------------------------------------- */

static void rq_reserve(uint64_t need)
{
    uint64_t  cap = S.rq_mask + 1, i, n;
    rq_ent_t *nb;

    if (need <= cap)
        return;
    while (cap < need)
        cap *= 2;
    nb = gv_malloc(cap * sizeof(*nb));
    n  = S.rq_tail - S.rq_head;
    for (i = 0; i < n; i++)
        nb[i] = S.rq[(S.rq_head + i) & S.rq_mask];
    gv_free(S.rq);
    S.rq      = nb;
    S.rq_head = 0;
    S.rq_tail = n;
    S.rq_mask = cap - 1;
}

/* The ready queue holds each worker with its saved stack pointer, so that
 * neither the prefetcher nor the switch has to read the descriptor: a
 * worker that yields saves its registers straight into its queue entry
 * (see gv_yield), and a worker that is woken has its stack pointer copied
 * from the descriptor by whoever wakes it. Capacity is reserved when
 * workers are created (every worker, plus the root, can be ready at once),
 * so a push never overflows. */
static inline rq_ent_t *rq_push_slot(gv_worker_t *w)
{
    rq_ent_t *e = &S.rq[S.rq_tail & S.rq_mask];

    e->w = w;
    S.rq_tail++;
    return e;
}

static inline int rq_empty(void)
{
    return S.rq_head == S.rq_tail;
}

/* Prefetch a line we are about to write: on x86 PREFETCHW brings it in
 * exclusive state, saving the second (ownership) transaction. */
static inline void prefetch_w(const void *p)
{
#if defined(__x86_64__)
    __asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

static inline rq_ent_t rq_pop(void)
{
    rq_ent_t e = S.rq[S.rq_head & S.rq_mask];
    unsigned d = S.prefetch;

    S.rq_head++;
    if ((d != 0) && (S.rq_tail - S.rq_head > d)) {
        /* d places ahead: the lines from the saved stack pointer to the
         * first byte above the saved registers (the caller of the switch
         * goes on from there), found from the queue entry alone; with the
         * ucontext fallback, the descriptor that holds the context. No
         * more: a line prefetched and not used still takes a place in the
         * caches, and at 100,000 workers the lines that are used (two per
         * worker, its page-table entry, the ready queue) already fill most
         * of the last-level cache. Measured on perf/ctxswitch, 100,000
         * workers: four lines (the frames above too) were slower than
         * these two. */
#if GV_HAVE_CTX_ASM
        const char *sp = S.rq[(S.rq_head + d) & S.rq_mask].sp;
        unsigned    k;

        for (k = 0; k <= (GV_CTX_ASM_FRAME + 63) / 64; k++)
            prefetch_w(sp + 64 * k);
#else
        const char *c = (const char *)&S.rq[(S.rq_head + d) & S.rq_mask].w->ctx;
        prefetch_w(c);
        prefetch_w(c + 64);
#endif
    }
    return e;
}

static inline void make_ready(gv_worker_t *w)
{
    rq_ent_t *e = rq_push_slot(w);

    w->state = GV_W_READY;
#if GV_HAVE_CTX_ASM
    e->sp = w->ctx.sp;
#else
    (void)e;
#endif
}

void gv__sched_ready(gv_worker_t *w)
{
    make_ready(w);
}

void gv__sched_set_prefetch(unsigned distance)
{
    S.prefetch = distance;
}

/* ---- task queues ------------------------------------------------------- */

static void taskq_init(gv__taskq_t *q, uint64_t cap)
{
    q->buf  = gv_malloc(cap * sizeof(gv__task_t));
    q->head = q->tail = 0;
    q->mask = cap - 1;
}

static void taskq_grow(gv__taskq_t *q)
{
    uint64_t    cap = (q->mask + 1) * 2, n = q->tail - q->head, i;
    gv__task_t *nb  = gv_malloc(cap * sizeof(gv__task_t));

    for (i = 0; i < n; i++)
        nb[i] = q->buf[(q->head + i) & q->mask];
    gv_free(q->buf);
    q->buf  = nb;
    q->head = 0;
    q->tail = n;
    q->mask = cap - 1;
}

gv__task_t *gv__sched_push_task(gv__taskq_t *q)
{
    if (q->tail - q->head > q->mask)
        taskq_grow(q);
    return &q->buf[q->tail++ & q->mask];
}

static inline int taskq_empty(const gv__taskq_t *q)
{
    return q->head == q->tail;
}

/* The owner takes the newest task. */
static inline void taskq_pop_tail(gv__taskq_t *q, gv__task_t *dst)
{
    q->tail--;
    *dst = q->buf[q->tail & q->mask];
}

/* Thieves take the oldest. */
int gv__sched_pop_head(gv__taskq_t *q, gv__task_t *t_p)
{
    if (taskq_empty(q))
        return 0;
    *t_p = q->buf[q->head & q->mask];
    q->head++;
    return 1;
}

/* ---- finish-scope accounting (the waves are in finish.c) ---------------- */

void gv__scope_task_created(gv__scope_t *s)
{
    s->created++;
}

/* ---- choosing what runs next ------------------------------------------- */

static void worker_main(void *arg);
static void sys_main(void *arg);

static inline int poll_due(void)
{
    uint64_t now, since;

    if (--S.poll_countdown != 0)
        return 0;
    now         = gv__ticks();
    since       = now - S.last_check;
    S.last_check = now;
    /* Aim for several clock reads per period, and few per switch. */
    if ((since * 8 < S.poll_ticks) && (S.poll_stride < 1024))
        S.poll_stride *= 2;
    else if ((since * 2 > S.poll_ticks) && (S.poll_stride > 1))
        S.poll_stride /= 2;
    S.poll_countdown = S.poll_stride;
    return (now - S.last_poll) >= S.poll_ticks;
}

static void track_worker(gv_worker_t *w)
{
    if (S.nworkers == all_cap) {
        all_cap     = (all_cap == 0) ? 1024 : all_cap * 2;
        all_workers = gv_realloc(all_workers, all_cap * sizeof(*all_workers));
    }
    all_workers[S.nworkers++] = w;
    rq_reserve(S.nworkers + 2);
    S.st.workers = S.nworkers;
}

/* A worker for the next queued task, with the task in its slot; NULL if
 * there is no task, or no worker can be had (GV_WORKERS reached). */
static gv_worker_t *task_worker(void)
{
    gv__taskq_t *q;
    gv_worker_t *w;

    if (!taskq_empty(&S.priv))
        q = &S.priv;
    else if (!taskq_empty(&S.pub))
        q = &S.pub;
    else
        return NULL;
    w = S.idle;
    if (w != NULL) {
        S.idle = w->next;
    } else {
        if (S.nworkers >= S.max_workers)
            return NULL;
        w = gv__worker_new(worker_main, GV_WK_WORKER);
        if (w == NULL) {
            /* Out of memory or address space: run with what exists. */
            S.max_workers = S.nworkers;
            gv_warn("no more worker stacks; continuing with %llu workers",
                    (unsigned long long)S.nworkers);
            return NULL;
        }
        track_worker(w);
    }
    taskq_pop_tail(q, w->slot);
    S.busy++;
    if (S.busy > S.st.workers_max)
        S.st.workers_max = S.busy;
    return w;
}

/* Save the running context into *save and resume @a next from its
 * descriptor. */
static inline void switch_to(gv_worker_t *self, gv_ctx_t *save,
                             gv_worker_t *next)
{
    if (next == self)
        return;
    S.current = next;
    S.st.switches++;
    gv__ctx_switch(save, &next->ctx);
}

/* Save the running context into *save and resume the worker of a ready
 * queue entry, from the stack pointer kept in the entry. With the asm the
 * stack pointer is passed by value: a local gv_ctx_t whose address went to
 * the switch would keep the caller's frame alive under the saved registers,
 * whereas this way the compiler makes the switch a tail call (gv_yield ends
 * in a jump to it), and a suspended worker's saved registers sit right
 * below the frame of whoever called gv_yield: one or two cache lines to
 * bring back instead of two or three. */
static inline void switch_to_entry(gv_ctx_t *save, rq_ent_t e)
{
    S.current = e.w;
    S.st.switches++;
#if GV_HAVE_CTX_ASM
    gv__ctx_asm_switch_sp(save, e.sp);
#else
    gv__ctx_switch(save, &e.w->ctx);
#endif
}

/* Where the running worker saves itself when it goes to the back of the
 * ready queue: its queue entry (asm) or its descriptor (ucontext). */
static inline gv_ctx_t *queue_self(gv_worker_t *self)
{
    rq_ent_t *e = rq_push_slot(self);

#if GV_HAVE_CTX_ASM
    return (gv_ctx_t *)(void *)&e->sp;
#else
    (void)e;
    return &self->ctx;
#endif
}

/* The current worker stops running (it has been parked or queued on a
 * wait queue, and saves itself into its descriptor): run what comes next. */
static inline void run_next(gv_worker_t *self)
{
    gv_worker_t *w;

    if (poll_due()) {
        switch_to(self, &self->ctx, sys_worker);
    } else if (!rq_empty()) {
        rq_ent_t e = rq_pop();
        if (e.w != self)
            switch_to_entry(&self->ctx, e);
    } else {
        w = task_worker();
        switch_to(self, &self->ctx, (w != NULL) ? w : sys_worker);
    }
}

void gv_yield(void)
{
    gv_worker_t *self;
    gv_worker_t *w;
    gv_ctx_t    *save;

    if (!S.up)
        return;
    self = S.current;
    if (self == sys_worker)
        return;
    /* A yield goes to the back of the line, and queued tasks are in the
     * line: start one if there is one. (Waiting and finishing prefer ready
     * workers, as Grappa does, to finish started work first; but if yield
     * did too, workers that yield in a loop until some queued task has run
     * would never let it start.) The descriptor is not touched: with many
     * workers it is likely not in cache. */
    if (poll_due()) {
        save = queue_self(self);
        switch_to(self, save, sys_worker);
    } else if (!(taskq_empty(&S.priv) && taskq_empty(&S.pub)) &&
               ((w = task_worker()) != NULL)) {
        save = queue_self(self);
        switch_to(self, save, w);
    } else if (!rq_empty()) {
        rq_ent_t e = rq_pop();
        save       = queue_self(self);
        switch_to_entry(save, e);
    }
}

void gv__sched_block(void)
{
    gv_worker_t *self = S.current;

    if (!S.up)
        gv_fatal("a worker waits, but tasking is not initialised");
    if (self == sys_worker)
        gv_fatal("blocking call from the system context (an active-message "
                 "handler must not wait)");
    if (self->state != GV_W_PARKED)
        self->state = GV_W_SUSPENDED;
    run_next(self);
}

void gv__sched_sleep_ns(uint64_t ns)
{
    gv_worker_t *self = S.current;

    if (S.nsleep == S.sleep_cap) {
        S.sleep_cap = (S.sleep_cap == 0) ? 16 : S.sleep_cap * 2;
        S.sleepers  = gv_realloc(S.sleepers, S.sleep_cap * sizeof(*S.sleepers));
        S.wake_at   = gv_realloc(S.wake_at, S.sleep_cap * sizeof(*S.wake_at));
    }
    S.sleepers[S.nsleep] = self;
    S.wake_at[S.nsleep]  = gv__ticks() + ns * ticks_per_us / 1000;
    S.nsleep++;
    gv__sched_block();
}

static void wake_sleepers(void)
{
    uint64_t now = gv__ticks();
    unsigned i   = 0;

    while (i < S.nsleep) {
        if ((int64_t)(now - S.wake_at[i]) >= 0) {
            gv__sched_ready(S.sleepers[i]);
            S.nsleep--;
            S.sleepers[i] = S.sleepers[S.nsleep];
            S.wake_at[i]  = S.wake_at[S.nsleep];
        } else {
            i++;
        }
    }
}

gv_worker_t *gv_task_self(void)
{
    return S.up ? S.current : NULL;
}

int gv_task_in_worker(void)
{
    return S.up && (S.current != &root_worker) && (S.current != sys_worker);
}

void gv_task_suspend(void)
{
    gv_worker_t *self = S.current;

    if (!S.up)
        gv_fatal("gv_task_suspend before tasking is initialised");
    if (self->wake_pending) {
        self->wake_pending = 0;
        return;
    }
    self->state = GV_W_PARKED;
    gv__sched_block();
}

void gv_task_wake(gv_worker_t *w)
{
    if (w->state == GV_W_PARKED)
        gv__sched_ready(w);
    else
        w->wake_pending = 1; /* the matching suspend returns at once */
}

/* ---- workers and the system context ------------------------------------ */

static void worker_main(void *arg)
{
    gv_worker_t *self = arg;

    for (;;) {
        gv__task_t *t = self->slot;
        int         due;

        self->scope = t->scope;
        t->fn(t->args);
        if (!self->guarded)
            gv__worker_check_canary(self);
        if (t->scope != NULL)
            gv__scope_task_finished(t->scope);
        S.st.tasks_run++;
        S.busy--;

        due = poll_due();
        if (!due && rq_empty() &&
            (!taskq_empty(&S.priv) || !taskq_empty(&S.pub))) {
            /* Run the next task on this same stack: no switch at all. */
            taskq_pop_tail(taskq_empty(&S.priv) ? &S.pub : &S.priv, self->slot);
            S.busy++;
            continue;
        }
        self->state = GV_W_IDLE;
        self->scope = NULL;
        self->next  = S.idle;
        S.idle      = self;
        if (!due && !rq_empty())
            switch_to_entry(&self->ctx, rq_pop());
        else
            switch_to(self, &self->ctx, sys_worker);
        /* Woken by task_worker() with a new task in the slot. */
    }
}

static void run_periodic(void)
{
    S.last_poll = gv__ticks();
    S.st.polls++;
    gv_progress();
    if (S.nsleep != 0)
        wake_sleepers();
}

/* Every worker is blocked and GV_WORKERS allows no more, while tasks wait
 * for one. A blocked worker may be waiting for one of those tasks (a
 * parallel loop's caller for its iterations), and then nothing will ever
 * move: stop once the queue has not shrunk (a thief takes public tasks)
 * and no worker ran for GV_TIMEOUT_S. @a since: when this began (0: not
 * starved at the last look); returns the new value. */
static uint64_t __attribute__((noinline))
starved(uint64_t since, uint64_t *queued_at)
{
    uint64_t queued = (S.priv.tail - S.priv.head) + (S.pub.tail - S.pub.head);
    uint64_t now;

    if (queued == 0)
        return 0;
    now = gv__now_ns();
    if ((since == 0) || (queued < *queued_at)) {
        *queued_at = queued;
        return now;
    }
    if (now - since > gv__timeout_ns())
        gv_fatal("deadlock: all %llu workers of this rank (GV_WORKERS=%llu) "
                 "have been blocked for %llu s (GV_TIMEOUT_S) while %llu "
                 "tasks wait for a worker to run on; a blocked worker may be "
                 "waiting for one of them. %s",
                 (unsigned long long)S.nworkers,
                 (unsigned long long)gv__env.WORKERS,
                 (unsigned long long)gv__env.TIMEOUT_S,
                 (unsigned long long)queued,
                 (S.max_workers < gv__env.WORKERS)
                     ? "No memory was left for more worker stacks: lower "
                       "GV_STACK, or run fewer ranks on this node"
                     : "Raise GV_WORKERS");
    return since;
}

static void sys_main(void *arg)
{
    gv_worker_t *self = arg;
    gv_waiter_t  wt;
    int          idle = 0;
    uint64_t     idle_since = 0, starved_since = 0, starved_queued = 0;

    for (;;) {
        gv_worker_t *next;

        run_periodic();
        if (!rq_empty()) {
            idle          = 0;
            starved_since = 0;
            switch_to_entry(&self->ctx, rq_pop());
            continue;
        }
        if ((next = task_worker()) != NULL) {
            idle          = 0;
            starved_since = 0;
            switch_to(self, &self->ctx, next);
            continue;
        }
        /* Idle: nothing ready and no task that can start. Ship whatever the
         * aggregator holds (a waiting worker may need its reply), try to
         * steal, and poll with the core's wait policy, which blocks in the
         * transport (or yields the core) once polling has been fruitless
         * for GV_SPIN_US. */
        if (!idle) {
            idle       = 1;
            idle_since = gv__now_ns();
            gv_flush();
            gv__wait_begin(&wt);
        }
        if (gv__ctx.size > 1)
            gv__steal_try();
        if (S.nsleep != 0) {
            /* A timer is due soon: do not block in the transport. */
            if (gv_progress() == 0)
                sched_yield();
        } else {
            gv__wait_poll(&wt);
        }
        if ((gv__ctx.size <= 1) && (S.nsleep == 0) && rq_empty() &&
            (gv__now_ns() - idle_since > 10ull * 1000000000ull)) {
            uint64_t queued = (S.priv.tail - S.priv.head) +
                              (S.pub.tail - S.pub.head);
            if (gv_progress() == 0)
                gv_fatal("deadlock: every worker on this rank has waited for "
                         "10 s and no message can wake one (%llu workers, "
                         "%llu busy, %llu tasks queued%s)",
                         (unsigned long long)S.nworkers,
                         (unsigned long long)S.busy,
                         (unsigned long long)queued,
                         ((queued != 0) && (S.nworkers >= S.max_workers))
                             ? "; GV_WORKERS reached: raise it" : "");
            idle_since = gv__now_ns();
        }
        if (S.nworkers >= S.max_workers)
            starved_since = starved(starved_since, &starved_queued);
    }
}

/* ---- spawning ---------------------------------------------------------- */

static gv_status_t spawn_into(gv__taskq_t *q, gv_task_fn_t fn,
                              const void *args, size_t len)
{
    gv__task_t *t;

    if (!S.up)
        return GV_ERR_STATE;
    if ((fn == NULL) || (len > GV_TASK_ARGS_MAX) ||
        ((len != 0) && (args == NULL)))
        return GV_ERR_INVALID;
    t        = gv__sched_push_task(q);
    t->fn    = fn;
    t->scope = S.current->scope;
    t->len   = (uint32_t)len;
    if (len != 0)
        memcpy(t->args, args, len);
    if (t->scope != NULL)
        t->scope->created++;
    return GV_OK;
}

gv_status_t gv_spawn(gv_task_fn_t fn, const void *args, size_t len)
{
    if (fn != NULL) {
        gv_status_t status = gv__fn_check(fn);
        if (status != GV_OK)
            return status;
    }
    return spawn_into(&S.pub, fn, args, len);
}

gv_status_t gv_spawn_private(gv_task_fn_t fn, const void *args, size_t len)
{
    return spawn_into(&S.priv, fn, args, len);
}

/* Used by steal.c for tasks that arrive from other ranks. */
gv__task_t *gv__sched_push_private(void)
{
    return gv__sched_push_task(&S.priv);
}

gv__task_t *gv__sched_push_public(void)
{
    return gv__sched_push_task(&S.pub);
}

gv__taskq_t *gv__sched_public_queue(void)
{
    return &S.pub;
}

/* ---- running the program's main task ----------------------------------- */

static void run_wait_exit(uint32_t epoch)
{
    while ((int32_t)(exit_epoch - epoch) < 0) {
        root_waits_exit = 1;
        gv__sched_block();
    }
    root_waits_exit = 0;
}

static void run_set_exit(uint32_t epoch)
{
    exit_epoch = epoch;
    if (root_waits_exit && (root_worker.state == GV_W_SUSPENDED)) {
        root_waits_exit = 0;
        gv__sched_ready(&root_worker);
    }
}

static void run_broadcast_exit(uint32_t epoch)
{
    run_msg_t m = {.epoch = epoch};
    int       r;

    for (r = 1; r < gv__ctx.size; r++) {
        gv_status_t status = gv_am_send(r, am_run_exit, &m, sizeof(m));
        if (status != GV_OK)
            gv_error("cannot tell rank %d to leave gv_run: %s", r,
                     gv_status_str(status));
    }
    /* Ship it now: rank 0 may go on to compute without polling. */
    gv_flush();
    run_set_exit(epoch);
}

static void run_count_done(uint32_t epoch)
{
    if (++done_count[epoch & 1] == (uint32_t)gv__ctx.size) {
        done_count[epoch & 1] = 0;
        run_broadcast_exit(epoch);
    }
}

static int run_msg_parse(int src, const void *payload, size_t len,
                         uint32_t *epoch_p)
{
    run_msg_t m;

    if (len != sizeof(m)) {
        S.st.rejected++;
        gv_warn("dropped a gv_run message of %zu bytes from rank %d", len, src);
        return 0;
    }
    memcpy(&m, payload, sizeof(m));
    /* Only the epoch being run, or the next one (a fast rank may finish
     * before rank 0 has seen the end of its own), are meaningful. */
    if ((m.epoch != run_epoch) && (m.epoch != run_epoch + 1)) {
        S.st.rejected++;
        gv_warn("dropped a gv_run message for epoch %u from rank %d (now %u)",
                m.epoch, src, run_epoch);
        return 0;
    }
    *epoch_p = m.epoch;
    return 1;
}

static void am_run_done_cb(int src, const void *payload, size_t len,
                           void *arg)
{
    uint32_t epoch;

    if ((gv__ctx.rank == 0) && run_msg_parse(src, payload, len, &epoch))
        run_count_done(epoch);
}

static void am_run_exit_cb(int src, const void *payload, size_t len,
                           void *arg)
{
    uint32_t epoch;

    if ((src == 0) && run_msg_parse(src, payload, len, &epoch))
        run_set_exit(epoch);
}

static gv_status_t run_check(const void *args, size_t len)
{
    if (!S.up)
        return GV_ERR_STATE;
    if (S.current != &root_worker) {
        gv_error("gv_run_main/gv_run_all must be called from the main flow");
        return GV_ERR_STATE;
    }
    if ((len > GV_TASK_ARGS_MAX) || ((len != 0) && (args == NULL)))
        return GV_ERR_INVALID;
    return GV_OK;
}

static void run_fn(gv_task_fn_t fn, const void *args, size_t len)
{
    uint8_t copy[GV_TASK_ARGS_MAX] __attribute__((aligned(16)));

    if (len != 0)
        memcpy(copy, args, len);
    fn(copy);
}

gv_status_t gv_run_main(gv_task_fn_t fn, const void *args, size_t len)
{
    gv_status_t status = run_check(args, len);
    uint32_t    epoch;

    if (status != GV_OK)
        return status;
    if (fn == NULL)
        return GV_ERR_INVALID;
    epoch = ++run_epoch;
    if (gv__ctx.rank == 0) {
        run_fn(fn, args, len);
        run_broadcast_exit(epoch);
    }
    run_wait_exit(epoch);
    return GV_OK;
}

gv_status_t gv_run_all(gv_task_fn_t fn, const void *args, size_t len)
{
    gv_status_t status = run_check(args, len);
    run_msg_t   m;
    uint32_t    epoch;

    if (status != GV_OK)
        return status;
    if (fn == NULL)
        return GV_ERR_INVALID;
    epoch = ++run_epoch;
    run_fn(fn, args, len);
    if (gv__ctx.rank == 0) {
        run_count_done(epoch);
    } else {
        m.epoch = epoch;
        status  = gv_am_send(0, am_run_done, &m, sizeof(m));
        if (status != GV_OK) {
            gv_error("cannot tell rank 0 that gv_run_all is done here: %s",
                     gv_status_str(status));
            return status;
        }
        gv_flush();
    }
    run_wait_exit(epoch);
    return GV_OK;
}

/* ---- init, fini, stats -------------------------------------------------- */

/* The core's wait policy calls this when a wait found nothing to do: if
 * another worker or a queued task can run, the waiting flow (a worker, or
 * the main flow) yields to it and the wait polls again afterwards; if not,
 * it returns 0 and the wait goes on to block in the transport, so an idle
 * rank still sleeps. */
static int wait_yield_hook(void)
{
    if (!S.up || (S.current == sys_worker) ||
        (rq_empty() && taskq_empty(&S.priv) && taskq_empty(&S.pub)))
        return 0;
    gv_yield();
    return 1;
}

void gv__task_init(void)
{
    gv_status_t status;

    if (S.up)
        return;
    memset(&S, 0, sizeof(S));
    memset(&root_worker, 0, sizeof(root_worker));
    calibrate_ticks();
    S.stack_size     = (size_t)gv__env.STACK;
    S.max_workers    = gv__env.WORKERS;
    S.prefetch       = (unsigned)gv__env.PREFETCH;
    S.poll_ticks     = gv__env.POLL_US * ticks_per_us;
    S.poll_stride    = 1;
    S.poll_countdown = 1;
    S.last_poll      = S.last_check = gv__ticks();
    S.rng            = 0x9e3779b97f4a7c15ull ^
                       ((uint64_t)(gv__ctx.rank + 1) * 0xbf58476d1ce4e5b9ull) ^
                       gv__now_ns();
    S.rq      = gv_malloc(1024 * sizeof(*S.rq));
    S.rq_mask = 1023;
    taskq_init(&S.priv, 256);
    taskq_init(&S.pub, 256);

    root_worker.kind  = GV_WK_ROOT;
    root_worker.state = GV_W_RUNNING;
    root_worker.id    = 0;
    S.current         = &root_worker;

    gv__worker_sys_init();
    gv__wait_yield_hook = wait_yield_hook;
    sys_worker = gv__worker_new(sys_main, GV_WK_SYS);
    if (sys_worker == NULL)
        gv_fatal("cannot map the scheduler's system stack");

    /* Handlers: the same registrations in the same order on every rank. */
    status = gv_am_register(am_run_done_cb, NULL, &am_run_done);
    if (status == GV_OK)
        status = gv_am_register(am_run_exit_cb, NULL, &am_run_exit);
    if (status != GV_OK)
        gv_fatal("cannot register the scheduler's handlers: %s",
                 gv_status_str(status));
    run_epoch = exit_epoch = 0;
    done_count[0] = done_count[1] = 0;
    gv__finish_init();
    gv__steal_init();
    S.up = 1;
    gv_debug("tasking up: %s context switch, GV_STACK %zu, GV_WORKERS %llu, "
             "prefetch distance %u, %llu ticks/us", GV_CTX_IMPL_NAME,
             S.stack_size, (unsigned long long)S.max_workers, S.prefetch,
             (unsigned long long)ticks_per_us);
}

void gv__task_fini(void)
{
    uint64_t i, stuck = 0;

    if (!S.up)
        return;
    if (S.current != &root_worker)
        gv_fatal("gv_finalize called from inside a worker");
    gv__wait_yield_hook = NULL;
    for (i = 0; i < S.nworkers; i++)
        stuck += (all_workers[i]->state != GV_W_IDLE);
    if ((stuck != 0) || !taskq_empty(&S.priv) || !taskq_empty(&S.pub))
        gv_warn("finalizing with %llu workers still waiting and %llu tasks "
                "never run", (unsigned long long)stuck,
                (unsigned long long)((S.priv.tail - S.priv.head) +
                                     (S.pub.tail - S.pub.head)));
    if (gv__env.STATS)
        gv_info("tasking: %llu switches, %llu tasks, %llu workers (%llu busy "
                "at most), %llu polls, steals %llu/%llu (%llu tasks in, %llu "
                "out), %llu sent, %llu rejected",
                (unsigned long long)S.st.switches,
                (unsigned long long)S.st.tasks_run,
                (unsigned long long)S.st.workers,
                (unsigned long long)S.st.workers_max,
                (unsigned long long)S.st.polls,
                (unsigned long long)S.st.steals,
                (unsigned long long)S.st.steal_attempts,
                (unsigned long long)S.st.tasks_stolen_in,
                (unsigned long long)S.st.tasks_stolen_out,
                (unsigned long long)S.st.tasks_sent,
                (unsigned long long)S.st.rejected);
    gv__steal_fini();
    gv__finish_fini();
    S.up = 0;
    for (i = 0; i < S.nworkers; i++)
        gv__worker_free(all_workers[i]);
    gv_free(all_workers);
    all_workers = NULL;
    all_cap     = 0;
    gv__worker_free(sys_worker);
    sys_worker = NULL;
    gv__worker_sys_fini();
    gv_free(S.rq);
    gv_free(S.priv.buf);
    gv_free(S.pub.buf);
    gv_free(S.sleepers);
    gv_free(S.wake_at);
    memset(&S, 0, sizeof(S));
}

void gv_task_stats(gv_task_stats_t *stats_p)
{
    *stats_p = S.st;
}
