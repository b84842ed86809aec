/* Synchronization for workers: completion counters, mutex, condition
 * variable, full-empty bits, futures. SPDX-License-Identifier: BSD-3-Clause
 *
 * All of a rank's workers run on one OS thread and switch only when they
 * wait or yield, so none of these needs an atomic instruction: between
 * checking a condition and suspending, nothing else can run. A waiter puts
 * itself in the object's queue and blocks; whoever changes the object takes
 * waiters off the queue and makes them ready. Waits re-check their condition
 * in a loop, so waking everyone (full-empty bits) is always safe.
 */
#include "tasking/task_internal.h"

static void wait_in(gv_waitq_t *q)
{
    gv__waitq_push(q, gv__sched.current);
    gv__sched_block();
}

static void wake_all(gv_waitq_t *q)
{
    gv_worker_t *w;

    while ((w = gv__waitq_pop(q)) != NULL)
        gv__sched_ready(w);
}

static void waitq_init(gv_waitq_t *q)
{
    q->head = q->tail = NULL;
}

/* ---- completion counters ------------------------------------------------ */

void gv_cc_init(gv_cc_t *cc, int64_t n)
{
    cc->count = n;
    waitq_init(&cc->waiters);
}

void gv_cc_add(gv_cc_t *cc, int64_t n)
{
    cc->count += n;
}

void gv_cc_done(gv_cc_t *cc, int64_t n)
{
    cc->count -= n;
    if (cc->count < 0)
        gv_fatal("completion counter %p went below zero (%lld)", (void *)cc,
                 (long long)cc->count);
    if (cc->count == 0)
        wake_all(&cc->waiters);
}

void gv_cc_wait(gv_cc_t *cc)
{
    while (cc->count != 0)
        wait_in(&cc->waiters);
}

int64_t gv_cc_count(const gv_cc_t *cc)
{
    return cc->count;
}

/* ---- mutex --------------------------------------------------------------- */

void gv_mutex_init(gv_mutex_t *m)
{
    m->owner = NULL;
    waitq_init(&m->waiters);
}

void gv_mutex_lock(gv_mutex_t *m)
{
    gv_worker_t *self = gv__sched.current;

    if (m->owner == NULL) {
        m->owner = self;
        return;
    }
    if (m->owner == self)
        gv_fatal("worker %u locks a mutex it already holds", self->id);
    /* Ownership is handed over by the unlocker, so that a stream of
     * lockers cannot starve a waiter. */
    while (m->owner != self)
        wait_in(&m->waiters);
}

int gv_mutex_trylock(gv_mutex_t *m)
{
    if (m->owner != NULL)
        return 0;
    m->owner = gv__sched.current;
    return 1;
}

void gv_mutex_unlock(gv_mutex_t *m)
{
    gv_worker_t *next;

    if (m->owner != gv__sched.current)
        gv_fatal("unlock of a mutex this worker does not hold");
    next     = gv__waitq_pop(&m->waiters);
    m->owner = next;
    if (next != NULL)
        gv__sched_ready(next);
}

/* ---- condition variable -------------------------------------------------- */

void gv_cond_init(gv_cond_t *c)
{
    waitq_init(&c->waiters);
}

void gv_cond_wait(gv_cond_t *c, gv_mutex_t *m)
{
    /* Queue first, then unlock: a signal sent by whoever takes the mutex
     * next finds this worker already waiting. */
    gv__waitq_push(&c->waiters, gv__sched.current);
    gv_mutex_unlock(m);
    gv__sched_block();
    gv_mutex_lock(m);
}

void gv_cond_signal(gv_cond_t *c)
{
    gv_worker_t *w = gv__waitq_pop(&c->waiters);

    if (w != NULL)
        gv__sched_ready(w);
}

void gv_cond_broadcast(gv_cond_t *c)
{
    wake_all(&c->waiters);
}

/* ---- full-empty bits ----------------------------------------------------- */

void gv_feb_init(gv_feb_t *f, uint64_t value, int full)
{
    f->value = value;
    f->full  = (full != 0);
    waitq_init(&f->waiters);
}

void gv_feb_write_ef(gv_feb_t *f, uint64_t value)
{
    while (f->full)
        wait_in(&f->waiters);
    f->value = value;
    f->full  = 1;
    wake_all(&f->waiters);
}

void gv_feb_write_f(gv_feb_t *f, uint64_t value)
{
    f->value = value;
    f->full  = 1;
    wake_all(&f->waiters);
}

uint64_t gv_feb_read_fe(gv_feb_t *f)
{
    uint64_t v;

    while (!f->full)
        wait_in(&f->waiters);
    v       = f->value;
    f->full = 0;
    wake_all(&f->waiters);
    return v;
}

uint64_t gv_feb_read_ff(gv_feb_t *f)
{
    while (!f->full)
        wait_in(&f->waiters);
    return f->value;
}

void gv_feb_empty(gv_feb_t *f)
{
    f->full = 0;
    wake_all(&f->waiters);
}

int gv_feb_is_full(const gv_feb_t *f)
{
    return f->full;
}

/* ---- futures --------------------------------------------------------------- */

void gv_future_init(gv_future_t *f, void *buf, size_t cap)
{
    f->ready  = 0;
    f->status = GV_INPROGRESS;
    f->buf    = buf;
    f->cap    = (buf != NULL) ? cap : 0;
    f->len    = 0;
    waitq_init(&f->waiters);
}

void gv_future_fulfil(gv_future_t *f, gv_status_t status, const void *data,
                      size_t len)
{
    if (f->ready)
        gv_fatal("future %p fulfilled twice", (void *)f);
    if ((data != NULL) && (f->cap != 0))
        memcpy(f->buf, data, (len < f->cap) ? len : f->cap);
    f->len    = len;
    f->status = status;
    f->ready  = 1;
    wake_all(&f->waiters);
}

gv_status_t gv_future_wait(gv_future_t *f, size_t *len_p)
{
    while (!f->ready)
        wait_in(&f->waiters);
    if (len_p != NULL)
        *len_p = f->len;
    return f->status;
}

int gv_future_ready(const gv_future_t *f)
{
    return f->ready;
}
