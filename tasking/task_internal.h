/* Internals of the tasking layer shared by its files: workers, task queues,
 * the scheduler state, finish-scope records. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TASKING_TASK_INTERNAL_H
#define GV_TASKING_TASK_INTERNAL_H

#include <grapevine/task.h>
#include "core/core.h"
#include "tasking/context.h"

#include <stdint.h>

/* Called by gv_init once the AM layer is up: builds the scheduler and
 * registers this layer's handlers (in the same order on every rank). A
 * second call before gv__task_fini() does nothing. Failure is fatal (it can
 * only be out of memory or address space). gv__task_fini() is called by
 * gv_finalize, from the main flow, before the AM layer goes down. */
void gv__task_init(void);
void gv__task_fini(void);

/* ---- finish-scope records ---------------------------------------------- */

/* One record per (home rank, scope id) that this rank has seen. On the home
 * it belongs to a gv_finish_t; elsewhere it is created when the first task
 * of the scope arrives and freed when the home announces termination. */
typedef struct gv__scope {
    int32_t           home;
    uint32_t          id;
    uint64_t          created;    /* tasks of the scope spawned here */
    uint64_t          finished;   /* tasks of the scope that ended here */
    struct gv__scope *hnext;      /* hash chain */
    /* Home only. */
    int               is_home;
    int               exported;   /* some task of the scope left this rank */
    gv_worker_t      *waiter;     /* the worker in gv_finish_end */
    int               replies;    /* wave replies still expected */
    uint32_t          wave;       /* current wave number */
    uint64_t          wave_created, wave_finished;
} gv__scope_t;

/* ---- tasks ------------------------------------------------------------- */

typedef struct gv__task {
    gv_task_fn_t  fn;
    gv__scope_t  *scope;       /* finish scope, NULL for none */
    uint32_t      len;
    uint32_t      pad[3];
    uint8_t       args[GV_TASK_ARGS_MAX] __attribute__((aligned(16)));
} gv__task_t;

/* Deque of tasks by value: the owner pushes and pops at the tail (LIFO,
 * depth-first, cache-warm); thieves take from the head (the oldest tasks,
 * which in recursive decompositions are the biggest). */
typedef struct gv__taskq {
    gv__task_t *buf;
    uint64_t    head, tail, mask;
} gv__taskq_t;

/* ---- workers ----------------------------------------------------------- */

enum {
    GV_W_RUNNING = 1,
    GV_W_READY,
    GV_W_SUSPENDED,  /* waiting in a queue of a sync object or a timer */
    GV_W_PARKED,     /* in gv_task_suspend(), until gv_task_wake() */
    GV_W_IDLE        /* in the pool, no task */
};
enum {
    GV_WK_WORKER = 0, /* a pooled worker with its own stack */
    GV_WK_ROOT,       /* the main flow, on the OS thread's stack */
    GV_WK_SYS         /* the system context: periodic tasks and idling */
};

/* The descriptor: one cache line, placed at the top of the worker's own
 * stack (the first frames sit right below it, its task slot right above),
 * so that a switched-out worker is one page and a few consecutive lines. */
struct gv_worker {
    gv_ctx_t          ctx;       /* saved stack pointer (asm) */
    struct gv_worker *next;      /* wait queue, idle pool */
    gv__scope_t      *scope;     /* scope new spawns belong to */
    char             *stack_lo;  /* lowest usable stack byte */
    uint32_t          map_len;   /* bytes mapped, guard included */
    uint32_t          color;     /* bytes left unused above the descriptor */
    uint32_t          id;
    uint8_t           state;
    uint8_t           wake_pending;
    uint8_t           guarded;   /* a guard page sits below stack_lo */
    uint8_t           kind;
    gv__task_t       *slot;      /* the task this worker runs */
} __attribute__((aligned(64)));

#if GV_HAVE_CTX_ASM
_Static_assert(sizeof(struct gv_worker) == 64,
               "a worker descriptor is one cache line");
#endif

/* ---- the scheduler (one per rank) -------------------------------------- */

/* A ready worker and, with the assembly context switch, its saved stack
 * pointer (the worker's descriptor holds it otherwise). */
typedef struct gv__rq_ent {
    gv_worker_t *w;
    void        *sp;
} rq_ent_t;

typedef struct gv__sched {
    gv_worker_t  *current;
    int           up;
    /* FIFO ready queue: a ring of pointers, so the scheduler can look a few
     * places ahead and prefetch those workers. */
    struct gv__rq_ent *rq;
    uint64_t      rq_head, rq_tail, rq_mask;
    unsigned      prefetch;      /* distance; 0 is off */
    gv__taskq_t   priv, pub;
    gv_worker_t  *idle;          /* pool of workers without a task */
    uint64_t      nworkers, max_workers, busy;
    size_t        stack_size;
    /* Periodic system tasks: the time check is sampled every poll_stride
     * scheduling decisions, the stride adapting so that checks happen a few
     * times per period without reading the clock on every switch. */
    uint64_t      poll_ticks, last_poll, last_check;
    unsigned      poll_stride, poll_countdown;
    /* Timers (sleeping workers), an unsorted small list. */
    gv_worker_t **sleepers;
    uint64_t     *wake_at;
    unsigned      nsleep, sleep_cap;
    /* Stealing. */
    int           steal_out;     /* a request is in flight */
    unsigned      steal_fails;   /* consecutive empty replies */
    uint64_t      steal_after;   /* backoff: no request before this tick */
    uint64_t      rng;
    gv_task_stats_t st;
} gv__sched_t;

/* Hidden: the scheduler is reached on every switch, and a hidden symbol is
 * addressed directly rather than through the GOT. */
extern gv__sched_t gv__sched __attribute__((visibility("hidden")));

/* Ticks: the cheapest monotonic counter (TSC, CNTVCT), calibrated at init. */
static inline uint64_t gv__ticks(void)
{
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return gv__now_ns();
#endif
}
uint64_t gv__ticks_per_us(void);

/* worker.c */
void gv__worker_sys_init(void);
void gv__worker_sys_fini(void);
gv_worker_t *gv__worker_new(gv_ctx_fn_t entry, int kind);
void gv__worker_free(gv_worker_t *w);
void gv__worker_check_canary(gv_worker_t *w);

/* scheduler.c */
void gv__sched_ready(gv_worker_t *w);      /* append to the ready queue */
void gv__sched_block(void);                /* current worker waits */
void gv__sched_sleep_ns(uint64_t ns);      /* current worker sleeps */
gv__task_t *gv__sched_push_task(gv__taskq_t *q);
int gv__sched_pop_head(gv__taskq_t *q, gv__task_t *t_p);
void gv__sched_set_prefetch(unsigned distance);
gv__task_t *gv__sched_push_private(void);
gv__task_t *gv__sched_push_public(void);
gv__taskq_t *gv__sched_public_queue(void);
void gv__scope_task_created(gv__scope_t *s);
void gv__scope_task_finished(gv__scope_t *s);

/* finish.c */
void gv__finish_init(void);
void gv__finish_fini(void);
gv__scope_t *gv__scope_lookup(int32_t home, uint32_t id, int create);
void gv__scope_exported(gv__scope_t *s);   /* a task of s leaves here */

/* steal.c: wire format of tasks and the messages that move them */
void gv__steal_init(void);
void gv__steal_fini(void);
void gv__steal_try(void);                  /* from the idle loop */
gv_status_t gv__fn_check(gv_task_fn_t fn); /* fn can be shipped */

/* Wait-queue helpers (sync.c, finish.c). */
static inline void gv__waitq_push(gv_waitq_t *q, gv_worker_t *w)
{
    w->next = NULL;
    if (q->tail == NULL)
        q->head = w;
    else
        q->tail->next = w;
    q->tail = w;
}

static inline gv_worker_t *gv__waitq_pop(gv_waitq_t *q)
{
    gv_worker_t *w = q->head;
    if (w != NULL) {
        q->head = w->next;
        if (q->head == NULL)
            q->tail = NULL;
        w->next = NULL;
    }
    return w;
}

#endif
