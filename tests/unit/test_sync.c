/* Synchronization for workers under contention: completion counters, mutex,
 * condition variable, full-empty bits, futures. One rank on `self`.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include <grapevine.h>

#include <string.h>

static void setup(void)
{
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

static void teardown(void)
{
    gv_finalize();
}

TestSuite(sync, .init = setup, .fini = teardown, .timeout = 60);

/* Spawn n private copies of fn with the same pointer argument, and wait. */
static void run_n(int n, gv_task_fn_t fn, void *arg)
{
    gv_finish_t f;
    int         i;

    gv_finish_begin(&f);
    for (i = 0; i < n; i++)
        cr_assert_eq(gv_spawn_private(fn, &arg, sizeof(arg)), GV_OK);
    cr_assert_eq(gv_finish_end(&f), GV_OK);
}

static void *arg_of(void *p)
{
    void *a;
    memcpy(&a, p, sizeof(a));
    return a;
}

/* ---- completion counters ---------------------------------------------------- */

typedef struct {
    gv_cc_t cc;
    int     waiters_done, events;
} cc_test_t;

static void cc_waiter(void *p)
{
    cc_test_t *t = arg_of(p);
    gv_cc_wait(&t->cc);
    cr_assert_eq(t->events, 500, "a waiter woke after %d events", t->events);
    t->waiters_done++;
}

static void cc_signaller(void *p)
{
    cc_test_t *t = arg_of(p);
    gv_yield();
    t->events++;
    gv_cc_done(&t->cc, 1);
}

Test(sync, cc_wakes_every_waiter_after_n_events)
{
    cc_test_t   t;
    gv_finish_t f;
    cc_test_t  *tp = &t;
    int         i;

    memset(&t, 0, sizeof(t));
    gv_cc_init(&t.cc, 500);
    gv_finish_begin(&f);
    for (i = 0; i < 50; i++)
        gv_spawn_private(cc_waiter, &tp, sizeof(tp));
    for (i = 0; i < 500; i++)
        gv_spawn_private(cc_signaller, &tp, sizeof(tp));
    gv_finish_end(&f);
    cr_assert_eq(t.waiters_done, 50);
    cr_assert_eq(gv_cc_count(&t.cc), 0);
    /* Enrolling more makes it wait again. */
    gv_cc_add(&t.cc, 2);
    cr_assert_eq(gv_cc_count(&t.cc), 2);
    gv_cc_done(&t.cc, 2);
    gv_cc_wait(&t.cc);
}

/* ---- mutex --------------------------------------------------------------- */

typedef struct {
    gv_mutex_t m;
    int        inside, violations;
    uint64_t   counter;
} mutex_test_t;

static void mutex_worker(void *p)
{
    mutex_test_t *t = arg_of(p);
    int           k;

    for (k = 0; k < 20; k++) {
        gv_mutex_lock(&t->m);
        if (t->inside++ != 0)
            t->violations++;
        uint64_t v = t->counter;
        gv_yield(); /* everyone else gets to try while we hold it */
        t->counter = v + 1;
        t->inside--;
        gv_mutex_unlock(&t->m);
        gv_yield();
    }
}

Test(sync, mutex_excludes_under_contention)
{
    mutex_test_t t;

    memset(&t, 0, sizeof(t));
    gv_mutex_init(&t.m);
    run_n(200, mutex_worker, &t);
    cr_assert_eq(t.violations, 0);
    cr_assert_eq(t.counter, 200 * 20);
    cr_assert(gv_mutex_trylock(&t.m));
    cr_assert(!gv_mutex_trylock(&t.m));
    gv_mutex_unlock(&t.m);
}

/* ---- condition variable: a bounded buffer ------------------------------------ */

#define BUF 4
typedef struct {
    gv_mutex_t m;
    gv_cond_t  not_full, not_empty;
    int        buf[BUF], head, count;
    long       sum_in, sum_out;
    int        produced, consumed;
} bb_t;

static void producer(void *p)
{
    bb_t *b = arg_of(p);
    int   k;

    for (k = 1; k <= 100; k++) {
        gv_mutex_lock(&b->m);
        while (b->count == BUF)
            gv_cond_wait(&b->not_full, &b->m);
        b->buf[(b->head + b->count) % BUF] = k;
        b->count++;
        b->sum_in += k;
        b->produced++;
        gv_cond_signal(&b->not_empty);
        gv_mutex_unlock(&b->m);
    }
}

static void consumer(void *p)
{
    bb_t *b = arg_of(p);
    int   k;

    for (k = 0; k < 100; k++) {
        gv_mutex_lock(&b->m);
        while (b->count == 0)
            gv_cond_wait(&b->not_empty, &b->m);
        cr_assert(b->count <= BUF);
        b->sum_out += b->buf[b->head];
        b->head = (b->head + 1) % BUF;
        b->count--;
        b->consumed++;
        gv_cond_signal(&b->not_full);
        gv_mutex_unlock(&b->m);
        if (k % 7 == 0)
            gv_yield();
    }
}

Test(sync, condvar_bounded_buffer_with_many_producers_and_consumers)
{
    bb_t        b;
    bb_t       *bp = &b;
    gv_finish_t f;
    int         i;

    memset(&b, 0, sizeof(b));
    gv_mutex_init(&b.m);
    gv_cond_init(&b.not_full);
    gv_cond_init(&b.not_empty);
    gv_finish_begin(&f);
    for (i = 0; i < 30; i++) {
        gv_spawn_private(consumer, &bp, sizeof(bp));
        gv_spawn_private(producer, &bp, sizeof(bp));
    }
    gv_finish_end(&f);
    cr_assert_eq(b.produced, 3000);
    cr_assert_eq(b.consumed, 3000);
    cr_assert_eq(b.sum_in, b.sum_out);
    cr_assert_eq(b.count, 0);
}

static void broadcast_waiter(void *p)
{
    bb_t *b = arg_of(p);

    gv_mutex_lock(&b->m);
    b->produced++; /* arrived */
    while (b->head == 0)
        gv_cond_wait(&b->not_empty, &b->m);
    b->consumed++;
    gv_mutex_unlock(&b->m);
}

Test(sync, condvar_broadcast_wakes_all)
{
    bb_t        b;
    bb_t       *bp = &b;
    gv_finish_t f;
    int         i;

    memset(&b, 0, sizeof(b));
    gv_mutex_init(&b.m);
    gv_cond_init(&b.not_empty);
    gv_finish_begin(&f);
    for (i = 0; i < 64; i++)
        gv_spawn_private(broadcast_waiter, &bp, sizeof(bp));
    /* Let them all reach the wait. */
    while (b.produced < 64)
        gv_yield();
    cr_assert_eq(b.consumed, 0);
    gv_mutex_lock(&b.m);
    b.head = 1;
    gv_cond_broadcast(&b.not_empty);
    gv_mutex_unlock(&b.m);
    gv_finish_end(&f);
    cr_assert_eq(b.consumed, 64);
}

/* ---- full-empty bits: a pipeline of cells ------------------------------------ */

#define STAGES 16
#define ITEMS  200
static gv_feb_t cells[STAGES + 1];

static void stage(void *p)
{
    int s = *(int *)p, k;

    /* Each stage moves values from cell s to cell s+1, adding one: the
     * full-empty bits alone order the hand-offs. */
    for (k = 0; k < ITEMS; k++)
        gv_feb_write_ef(&cells[s + 1], gv_feb_read_fe(&cells[s]) + 1);
}

static void source(void *p)
{
    int k;

    (void)p;
    for (k = 0; k < ITEMS; k++)
        gv_feb_write_ef(&cells[0], (uint64_t)k * 1000);
}

Test(sync, feb_pipeline_passes_every_value_in_order)
{
    gv_finish_t f;
    int         s, k;

    for (s = 0; s <= STAGES; s++)
        gv_feb_init(&cells[s], 0, 0);
    gv_finish_begin(&f);
    for (s = STAGES - 1; s >= 0; s--)
        gv_spawn_private(stage, &s, sizeof(s));
    gv_spawn_private(source, NULL, 0);
    for (k = 0; k < ITEMS; k++) {
        uint64_t v = gv_feb_read_fe(&cells[STAGES]);
        cr_assert_eq(v, (uint64_t)k * 1000 + STAGES, "item %d: %llu", k,
                     (unsigned long long)v);
    }
    gv_finish_end(&f);
    cr_assert(!gv_feb_is_full(&cells[STAGES]));
}

static void ff_reader(void *p)
{
    gv_feb_t *fb = arg_of(p);
    cr_assert_eq(gv_feb_read_ff(fb), 42);
}

Test(sync, feb_read_ff_leaves_it_full_for_all_readers)
{
    gv_feb_t    fb;
    gv_feb_t   *fp = &fb;
    gv_finish_t f;
    int         i;

    gv_feb_init(&fb, 0, 0);
    gv_finish_begin(&f);
    for (i = 0; i < 100; i++)
        gv_spawn_private(ff_reader, &fp, sizeof(fp));
    gv_yield();
    gv_feb_write_f(&fb, 42);
    gv_finish_end(&f);
    cr_assert(gv_feb_is_full(&fb));
    gv_feb_empty(&fb);
    cr_assert(!gv_feb_is_full(&fb));
}

/* ---- futures ----------------------------------------------------------------- */

typedef struct {
    gv_future_t fut;
    char        buf[16];
    int         ok;
} fut_test_t;

static void fut_waiter(void *p)
{
    fut_test_t *t = arg_of(p);
    size_t      len;

    cr_assert_eq(gv_future_wait(&t->fut, &len), GV_ERR_TIMEOUT);
    cr_assert_eq(len, 20);
    cr_assert_eq(memcmp(t->buf, "0123456789abcdef", 16), 0);
    t->ok++;
}

static gv_am_id_t fulfil_id;

static void fulfil_handler(int src, const void *payload, size_t len,
                           void *arg)
{
    fut_test_t *t;

    memcpy(&t, payload, sizeof(t));
    /* Copy is truncated to the future's 16-byte buffer. */
    gv_future_fulfil(&t->fut, GV_ERR_TIMEOUT, "0123456789abcdefghij", 20);
}

Test(sync, future_fulfilled_from_a_handler_wakes_all_waiters)
{
    fut_test_t  t;
    fut_test_t *tp = &t;
    gv_finish_t f;
    int         i;

    memset(&t, 0, sizeof(t));
    gv_future_init(&t.fut, t.buf, sizeof(t.buf));
    cr_assert_eq(gv_am_register(fulfil_handler, NULL, &fulfil_id), GV_OK);
    gv_finish_begin(&f);
    for (i = 0; i < 40; i++)
        gv_spawn_private(fut_waiter, &tp, sizeof(tp));
    gv_yield();
    cr_assert(!gv_future_ready(&t.fut));
    cr_assert_eq(gv_am_send(0, fulfil_id, &tp, sizeof(tp)), GV_OK);
    gv_finish_end(&f);
    cr_assert(gv_future_ready(&t.fut));
    cr_assert_eq(t.ok, 40);
}

static void fut_fulfiller(void *p)
{
    gv_future_t *fu = arg_of(p);
    uint64_t     v  = 77;

    gv_yield();
    gv_future_fulfil(fu, GV_OK, &v, sizeof(v));
}

Test(sync, future_fulfilled_by_a_task)
{
    gv_future_t  fu;
    gv_future_t *fp = &fu;
    uint64_t     v  = 0;

    gv_future_init(&fu, &v, sizeof(v));
    gv_spawn_private(fut_fulfiller, &fp, sizeof(fp));
    cr_assert_eq(gv_future_wait(&fu, NULL), GV_OK);
    cr_assert_eq(v, 77);
}
