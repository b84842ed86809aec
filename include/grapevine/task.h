/** @file
 * Grapevine tasking: user-level workers, spawn, parallel loops, work
 * stealing, and synchronization for workers. SPDX-License-Identifier: BSD-3-Clause
 *
 * Model (Grappa's): each rank runs one OS thread with one scheduler. A *task*
 * is a function pointer plus up to GV_TASK_ARGS_MAX bytes of arguments,
 * copied by value, so that it can be shipped to another rank. A task runs on
 * a *worker*: a small descriptor and a stack (GV_STACK bytes, with a guard
 * page). A worker that waits (gv_cc_wait, gv_mutex_lock, gv_future_wait, a
 * remote operation of the DSM layer, ...) is suspended and another one runs;
 * switching costs tens of nanoseconds, so thousands of workers per rank hide
 * the latency of remote operations.
 *
 * Scheduling is cooperative and on one thread per rank: a worker runs until
 * it finishes, yields or waits. Nothing in this header is thread-safe; call
 * it from the rank's thread (from a worker, from the program's main flow
 * outside any worker, or from an active-message handler where noted).
 * Needs gv_init (or gv_init_opts with GV_LAYERS_ALL). At thread level
 * SERIALIZED (grapevine/core.h) the host's lock is held across the whole
 * of gv_run_all(): workers run on the thread that called it.
 *
 * The program's main flow (the code that called gv_init) is itself treated
 * as a worker: it may spawn tasks and wait for them, and while it waits the
 * scheduler runs the tasks and communication progress on this rank.
 *
 * Where a task runs:
 *  - gv_spawn()          the public queue of this rank; idle ranks steal
 *                        from it, so the task may run on any rank.
 *  - gv_spawn_private()  the private queue of this rank: it runs here.
 *  - gv_spawn_on(r, ...) the private queue of rank r.
 * Arguments of a task that may leave this rank (gv_spawn, gv_spawn_on) must
 * make sense on any rank: plain values and global addresses, never pointers
 * into this rank's memory. The function pointer itself is translated (it is
 * shipped as an offset into the program or library that contains it, so it
 * is the same function on every rank of the same binary).
 *
 * Termination across ranks: gv_finish_begin()/gv_finish_end() bracket a
 * computation; gv_finish_end() returns once every task spawned inside it,
 * and every task those spawned in turn, has finished, wherever it was stolen
 * or sent to.
 */
#ifndef GRAPEVINE_TASK_H
#define GRAPEVINE_TASK_H

#include <grapevine/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most bytes of arguments a task carries. */
#define GV_TASK_ARGS_MAX 64

/**
 * A task's body.
 * @param [in] args  the bytes given at spawn, copied; 16-byte aligned and
 *                   valid (and writable) until the task returns.
 */
typedef void (*gv_task_fn_t)(void *args);

/** A worker (opaque). */
typedef struct gv_worker gv_worker_t;

/* ------------------------------------------------------------------------ */
/* Spawning and running                                                      */

/**
 * Spawn a task that may be stolen: it goes to this rank's public queue, and
 * an idle rank may take it (and half of the queue with it).
 * The task belongs to the finish scope of the caller, if any.
 * May be called from a handler.
 * @param [in] fn    the task's body.
 * @param [in] args  @a len bytes copied into the task (NULL if len is 0).
 * @param [in] len   at most GV_TASK_ARGS_MAX.
 * @return GV_OK; GV_ERR_INVALID (NULL fn, len too large, or fn is not code
 *         of this program); GV_ERR_STATE (tasking not initialised).
 */
gv_status_t gv_spawn(gv_task_fn_t fn, const void *args, size_t len);

/** As gv_spawn(), but the task runs on this rank: it is never stolen, so
 *  its arguments may point into this rank's memory. */
gv_status_t gv_spawn_private(gv_task_fn_t fn, const void *args, size_t len);

/**
 * Spawn a task on rank @a rank (its private queue there). The task is
 * shipped by an active message, so arguments must make sense on @a rank.
 * @return as gv_spawn(), plus GV_ERR_INVALID for a bad rank, and what
 *         gv_am_send() returns.
 */
gv_status_t gv_spawn_on(int rank, gv_task_fn_t fn, const void *args,
                        size_t len);

/** Let the other ready workers (and, first, one queued task) run; returns
 *  when this worker is scheduled again (at once if nothing else can run).
 *  Also lets communication progress when it is due. Not from a handler:
 *  handlers neither yield nor wait (they reply instead). */
void gv_yield(void);

/**
 * Run the program's main task: collective. Rank 0 runs fn(args) (on the
 * main flow's stack, so it may recurse deeply); every rank meanwhile serves
 * tasks, steals and handles messages. When fn returns on rank 0, every rank
 * returns from gv_run_main(). Tasks that are still queued then are not run
 * (use gv_finish_begin/end or counters to wait for what main started).
 * @return GV_OK, GV_ERR_INVALID (len too large), GV_ERR_STATE.
 */
gv_status_t gv_run_main(gv_task_fn_t fn, const void *args, size_t len);

/** As gv_run_main(), but every rank runs fn(args); returns on every rank
 *  once fn has returned on all of them. */
gv_status_t gv_run_all(gv_task_fn_t fn, const void *args, size_t len);

/* ------------------------------------------------------------------------ */
/* Parallel loops                                                            */

/** Body of a parallel loop: one index at a time. */
typedef void (*gv_loop_fn_t)(int64_t i, void *arg);

/**
 * Run body(i, arg) for every i in [lo, hi) in parallel on this rank, and
 * return when all have run. The range is split recursively in halves (a
 * logarithmically deep tree of tasks) down to leaves of at most @a grain
 * iterations, each run by one task; a body may wait, and may itself run
 * parallel loops (nested parallelism). The tasks are private (@a arg may
 * point into this rank's memory); to spread work over ranks use gv_spawn()
 * inside a finish scope.
 * @param [in] grain  leaf size; 0 means GV_LOOP_GRAIN.
 * @return GV_OK (also for an empty range), GV_ERR_INVALID (NULL body).
 */
gv_status_t gv_parallel_for(int64_t lo, int64_t hi, int64_t grain,
                            gv_loop_fn_t body, void *arg);

/* ------------------------------------------------------------------------ */
/* Finish scopes: termination of a computation spread over ranks             */

/** A finish scope. Contents are private; lives on the stack of the worker
 *  that calls gv_finish_begin() until gv_finish_end() returns. */
typedef struct gv_finish {
    void *scope;  /**< the scope's counter record (internal) */
    void *outer;  /**< the scope the worker spawned into before begin */
} gv_finish_t;

/** Open a finish scope: tasks the calling worker spawns from now on (and
 *  their descendants, on any rank) belong to @a f. Scopes nest. */
void gv_finish_begin(gv_finish_t *f);

/**
 * Close the scope and wait until every task that belongs to it has
 * finished, on every rank. Termination across ranks is detected with
 * counting waves (see tasking/finish.c).
 * @return GV_OK, or GV_ERR_STATE if @a f is not the innermost open scope.
 */
gv_status_t gv_finish_end(gv_finish_t *f);

/* ------------------------------------------------------------------------ */
/* Suspending and waking workers: the hook for remote operations             */

/** The calling worker (the main flow counts as one). */
gv_worker_t *gv_task_self(void);

/**
 * Suspend the calling worker until gv_task_wake() is called on it. If the
 * wake came first (a reply that was handled while the worker was still
 * running), returns at once: one wake matches one suspend.
 * Not from a handler.
 */
void gv_task_suspend(void);

/** Make @a w ready to run again. May be called from a handler (that is how
 *  a reply wakes the worker that waits for it). */
void gv_task_wake(gv_worker_t *w);

/** Non-zero if the caller runs on a worker stack (not the main flow). */
int gv_task_in_worker(void);

/* ------------------------------------------------------------------------ */
/* Synchronization for workers (all local to one rank)                      */

/** Queue of waiting workers (private). */
typedef struct gv_waitq {
    gv_worker_t *head, *tail; /**< internal */
} gv_waitq_t;
/** @var gv_waitq::head
 *  internal: the first waiting worker */

/** Completion counter: wait until a number of events have happened. */
typedef struct gv_cc {
    int64_t    count; /**< events still expected (read with gv_cc_count) */
    gv_waitq_t waiters; /**< internal */
} gv_cc_t;

/** Start @a cc expecting @a n events. */
void gv_cc_init(gv_cc_t *cc, int64_t n);
/** Expect @a n more events (enroll). */
void gv_cc_add(gv_cc_t *cc, int64_t n);
/** @a n events happened; when the count reaches zero the waiters wake.
 *  May be called from a handler. Going below zero is a fatal error. */
void gv_cc_done(gv_cc_t *cc, int64_t n);
/** Wait until the count is zero. */
void gv_cc_wait(gv_cc_t *cc);
/** Events still expected. */
int64_t gv_cc_count(const gv_cc_t *cc);

/** Mutex for workers: a waiting worker is suspended, not spinning. */
typedef struct gv_mutex {
    gv_worker_t *owner;   /**< internal: the holder, or NULL */
    gv_waitq_t   waiters; /**< internal */
} gv_mutex_t;

/** Initialise unlocked. */
void gv_mutex_init(gv_mutex_t *m);
/** Lock; a worker that must wait is suspended (FIFO). */
void gv_mutex_lock(gv_mutex_t *m);
/** @return non-zero if the mutex was taken. */
int gv_mutex_trylock(gv_mutex_t *m);
/** Unlock; ownership passes directly to the first waiter (FIFO). Unlocking
 *  a mutex the caller does not hold is a fatal error. */
void gv_mutex_unlock(gv_mutex_t *m);

/** Condition variable for workers. */
typedef struct gv_cond {
    gv_waitq_t waiters; /**< internal */
} gv_cond_t;

/** Initialise with no waiter. */
void gv_cond_init(gv_cond_t *c);
/** Release @a m, wait for a signal, take @a m again. As with pthreads,
 *  re-check the predicate in a loop. */
void gv_cond_wait(gv_cond_t *c, gv_mutex_t *m);
/** Wake one waiter / all waiters. May be called from a handler. */
void gv_cond_signal(gv_cond_t *c);
/** Wake all waiters. May be called from a handler. */
void gv_cond_broadcast(gv_cond_t *c);

/** A 64-bit word with a full/empty bit (Tera MTA style). */
typedef struct gv_feb {
    uint64_t   value;   /**< internal: the word */
    int        full;    /**< internal: the full/empty bit */
    gv_waitq_t waiters; /**< internal */
} gv_feb_t;

/** Initialise empty (@a full 0) or full with @a value. */
void gv_feb_init(gv_feb_t *f, uint64_t value, int full);
/** Wait until empty, write, set full. */
void gv_feb_write_ef(gv_feb_t *f, uint64_t value);
/** Write and set full whatever the state (wakes readers). */
void gv_feb_write_f(gv_feb_t *f, uint64_t value);
/** Wait until full, read, set empty. */
uint64_t gv_feb_read_fe(gv_feb_t *f);
/** Wait until full, read, leave full. */
uint64_t gv_feb_read_ff(gv_feb_t *f);
/** Set empty (wakes writers waiting in gv_feb_write_ef). */
void gv_feb_empty(gv_feb_t *f);
/** @return non-zero if full. */
int gv_feb_is_full(const gv_feb_t *f);

/** A future: a value that one party fulfils and others wait for. */
typedef struct gv_future {
    int          ready;    /**< internal */
    gv_status_t  status;   /**< internal */
    void        *buf;      /**< internal: where the value goes */
    size_t       cap, len; /**< internal */
    gv_waitq_t   waiters;  /**< internal */
} gv_future_t;
/** @var gv_future::cap
 *  internal: bytes of room at buf */

/**
 * Prepare a future whose value (up to @a cap bytes) will be copied to
 * @a buf. @a buf may be NULL with @a cap 0 for a pure completion.
 */
void gv_future_init(gv_future_t *f, void *buf, size_t cap);
/**
 * Fulfil the future: copy min(@a len, cap) bytes of @a data to its buffer,
 * record @a status and wake every waiter. May be called from a handler
 * (this is how a reply message completes a remote operation). Fulfilling
 * twice is a fatal error.
 */
void gv_future_fulfil(gv_future_t *f, gv_status_t status, const void *data,
                      size_t len);
/**
 * Wait until fulfilled.
 * @param [out] len_p  bytes the fulfiller offered (may exceed cap); may be
 *                     NULL.
 * @return the status given to gv_future_fulfil().
 */
gv_status_t gv_future_wait(gv_future_t *f, size_t *len_p);
/** @return non-zero once fulfilled. */
int gv_future_ready(const gv_future_t *f);

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */

/** Counters of this rank's scheduler. */
typedef struct gv_task_stats {
    uint64_t switches;        /**< context switches                        */
    uint64_t tasks_run;       /**< tasks that finished on this rank        */
    uint64_t workers;         /**< workers created (alive, with stacks)    */
    uint64_t workers_max;     /**< most workers busy at once               */
    uint64_t polls;           /**< periodic system-task runs               */
    uint64_t steal_attempts;  /**< steal requests sent                     */
    uint64_t steals;          /**< requests that brought tasks back        */
    uint64_t tasks_stolen_in; /**< tasks received by stealing              */
    uint64_t tasks_stolen_out;/**< tasks given away to thieves             */
    uint64_t tasks_sent;      /**< tasks sent with gv_spawn_on             */
    uint64_t rejected;        /**< malformed task messages dropped         */
} gv_task_stats_t;

/** Copy this rank's counters into @a stats_p. */
void gv_task_stats(gv_task_stats_t *stats_p);

#ifdef __cplusplus
}
#endif
#endif
