/* Global completion events (Grappa's GlobalCompletionEvent): operations
 * enroll on one rank and complete on another; a wait returns once every
 * enrolled operation, everywhere, has completed.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Counters that never travel. Every rank keeps, per event, two monotone
 * counters: enrolled (operations enrolled here: an asynchronous delegate
 * when it is issued, a task when it is spawned) and completed (operations
 * that completed here: a delegate when its home ran it, a task when it
 * returned). An operation is enrolled before it can complete, so with
 * E(t), C(t) the sums over all ranks at real time t, C(t) <= E(t), and
 * the event is done at t exactly when C(t) == E(t).
 *
 * Nothing is sent per operation: that is what makes an asynchronous
 * delegate cost one packed record (no acknowledgement at all). The price is
 * paid by the waiter, which runs counting waves (Mattern's four-counter
 * method, as tasking/finish.c does for finish scopes): a wave asks every
 * rank for its two counters and sums them into (E_k, C_k); wave k+1 starts
 * after wave k's last answer arrived, at time t_k. Counters only grow, so
 * C_k <= C(t_k) <= E(t_k) <= E_{k+1}: if C_k == E_{k+1} then
 * C(t_k) == E(t_k), every operation enrolled before t_k (in particular,
 * all those of the waiter, which enrolled before it started waiting) had
 * completed. A rank asked for its counters first pushes out the adds it
 * packed and not yet sent, so that they are in flight (counted enrolled,
 * soon completed) rather than parked. Between waves that show operations
 * outstanding the waiter sleeps, backing off from 20 us to 1 ms.
 *
 * Operations enrolled concurrently with the wait by workers that are not
 * part of the enrolled computation may or may not be covered (as in
 * Grappa): to wait for a whole phase, have every rank wait after it
 * stopped enrolling, or enroll the phase's tasks themselves.
 *
 * Identity: an event id is (creating rank << 16 | slot). Other ranks
 * create the record for an id when they first see it; ids are never
 * reused, so a late message cannot count into a new event. Id 0 (rank 0,
 * slot 0) is the default event.
 */
#include "dsm/dsm_internal.h"
#include "tasking/task_internal.h" /* gv__sched_sleep_ns */

#define SLOTS_MAX 65536u

typedef struct {
    gv__gce_rec_t *v;
    uint32_t       n;
} per_creator_t;

static per_creator_t *by_creator;
static uint32_t       next_slot;
static uint32_t       cached_id = UINT32_MAX;
static gv__gce_rec_t *cached_rec;
static gv_gce_t       default_gce = {0};
static gv_am_id_t     am_query, am_answer;

typedef struct {
    uint64_t token;
    uint32_t id;
    uint32_t pad;
} query_t;

typedef struct {
    uint64_t token;
    uint64_t enrolled, completed, errors;
} answer_t;

typedef struct {
    uint64_t enrolled, completed, errors;
} wave_sum_t;

gv__gce_rec_t *gv__gce_rec(uint32_t id)
{
    uint32_t       creator = id >> 16, slot = id & (SLOTS_MAX - 1);
    per_creator_t *c;

    if (id == cached_id)
        return cached_rec;
    if ((by_creator == NULL) || (creator >= (uint32_t)gv__geo.size))
        return NULL; /* after gv__dsm_fini, or an impossible id */
    c = &by_creator[creator];
    if (slot >= c->n) {
        uint32_t n = (c->n == 0) ? 16 : c->n;
        while (n <= slot)
            n *= 2;
        c->v = gv_realloc(c->v, n * sizeof(*c->v));
        memset(c->v + c->n, 0, (n - c->n) * sizeof(*c->v));
        c->n = n;
        cached_id = UINT32_MAX; /* the array moved */
    }
    cached_id  = id;
    cached_rec = &c->v[slot];
    return cached_rec;
}

gv_gce_t *gv_gce_default(void)
{
    return &default_gce;
}

gv_status_t gv_gce_create(gv_gce_t *gce)
{
    if (!gv__geo.up)
        return GV_ERR_STATE;
    if (next_slot >= SLOTS_MAX) {
        gv_error("gv_gce_create: this rank made all %u events it may make",
                 SLOTS_MAX - 1);
        return GV_ERR_NO_RESOURCE;
    }
    gce->id = ((uint32_t)gv__geo.rank << 16) | next_slot++;
    (void)gv__gce_rec(gce->id);
    return GV_OK;
}

void gv_gce_destroy(gv_gce_t *gce)
{
    /* Ids are not reused (see above); the records stay, a few bytes each. */
    gce->id = UINT32_MAX;
}

void gv_gce_enroll(gv_gce_t *gce, int64_t n)
{
    gv__gce_rec_t *r = gv__gce_rec(gv__gce_id(gce));

    if (r == NULL)
        gv_fatal("gv_gce_enroll: no such event");
    r->enrolled += (uint64_t)n;
}

void gv_gce_complete(gv_gce_t *gce, int64_t n)
{
    gv__gce_rec_t *r = gv__gce_rec(gv__gce_id(gce));

    if (r == NULL)
        gv_fatal("gv_gce_complete: no such event");
    r->completed += (uint64_t)n;
}

/* ---- waves -------------------------------------------------------------- */

static void am_query_cb(int src, const void *payload, size_t len, void *arg)
{
    query_t        q;
    answer_t       a;
    gv__gce_rec_t *r;
    gv_status_t    status;

    if (len != sizeof(q)) {
        gv__dsm_reject(src, "completion query of the wrong size");
        return;
    }
    memcpy(&q, payload, sizeof(q));
    r = gv__gce_rec(q.id);
    if (r == NULL) {
        gv__dsm_reject(src, "completion query for an impossible event");
        return;
    }
    /* Our packed adds go out first (they are enrolled, not yet sent). */
    gv__delegate_flush_adds();
    a.token     = q.token;
    a.enrolled  = r->enrolled;
    a.completed = r->completed;
    a.errors    = r->errors;
    status      = gv_am_send(src, am_answer, &a, sizeof(a));
    if (status != GV_OK)
        gv_error("cannot answer a completion query of rank %d: %s", src,
                 gv_status_str(status));
}

static void am_answer_cb(int src, const void *payload, size_t len, void *arg)
{
    answer_t    a;
    gv__dreq_t *r;

    if (len != sizeof(a)) {
        gv__dsm_reject(src, "completion answer of the wrong size");
        return;
    }
    memcpy(&a, payload, sizeof(a));
    r = gv__dreq_get(a.token);
    if ((r == NULL) || (r->buf == NULL) || (r->pending <= 0)) {
        gv__dsm_reject(src, "completion answer to no wave of this rank");
        return;
    }
    {
        wave_sum_t *s = r->buf;
        s->enrolled += a.enrolled;
        s->completed += a.completed;
        s->errors += a.errors;
    }
    gv__dreq_reply(a.token, GV_OK, NULL, 0, src);
}

/* One wave: the sums of every rank's counters. */
static void wave(uint32_t id, wave_sum_t *s)
{
    gv__gce_rec_t *r = gv__gce_rec(id);
    gv__dreq_t    *q;
    query_t        m;
    int            i;

    gv__delegate_flush_all();
    s->enrolled  = r->enrolled;
    s->completed = r->completed;
    s->errors    = r->errors;
    if (gv__geo.size == 1)
        return;
    memset(&m, 0, sizeof(m));
    m.id    = id;
    m.token = gv__dreq_new(gv__geo.size - 1, s, sizeof(*s), &q);
    for (i = 0; i < gv__geo.size; i++) {
        gv_status_t status;
        if (i == gv__geo.rank)
            continue;
        status = gv_am_send(i, am_query, &m, sizeof(m));
        if (status != GV_OK)
            gv_fatal("cannot send a completion query to rank %d: %s", i,
                     gv_status_str(status));
    }
    (void)gv__dreq_wait(m.token, NULL);
}

typedef struct {
    uint64_t until;
} sleep_t;

static int time_passed(void *arg)
{
    return gv__now_ns() >= ((sleep_t *)arg)->until;
}

static void nap(uint64_t ns)
{
    if (gv_task_self() != NULL) {
        gv__sched_sleep_ns(ns);
    } else {
        sleep_t s = {gv__now_ns() + ns};
        gv_wait(time_passed, &s);
    }
}

gv_status_t gv_gce_wait(gv_gce_t *gce)
{
    uint32_t   id = gv__gce_id(gce);
    wave_sum_t cur, prev;
    uint64_t   backoff = 20000;
    int        have_prev = 0;

    if (!gv__geo.up)
        return GV_ERR_STATE;
    if (gv__gce_rec(id) == NULL) {
        gv_error("gv_gce_wait: no such event (id %#x)", id);
        return GV_ERR_INVALID;
    }
    for (;;) {
        wave(id, &cur);
        if (gv__geo.size == 1) {
            if (cur.enrolled == cur.completed)
                break;
        } else if (have_prev && (prev.completed == cur.enrolled)) {
            break;
        }
        if (have_prev && (cur.enrolled != cur.completed)) {
            nap(backoff);
            if (backoff < 1000000)
                backoff *= 2;
        }
        prev      = cur;
        have_prev = 1;
    }
    return (cur.errors != 0) ? GV_ERR_INVALID : GV_OK;
}

/* ---- tasks enrolled in an event ----------------------------------------- */

typedef struct {
    uint8_t     args[GV_GCE_ARGS_MAX]; /* first: 16-byte aligned */
    uint32_t    id;
    uint32_t    len;
    gv__fnref_t fn;
} gce_task_t;

_Static_assert(sizeof(gce_task_t) <= GV_TASK_ARGS_MAX,
               "a task enrolled in an event must fit in a task");

static void gce_task(void *p)
{
    gce_task_t    *t = p;
    gv_task_fn_t   fn;
    gv__gce_rec_t *r = gv__gce_rec(t->id);

    if (r == NULL) {
        gv__dsm_reject(-1, "task enrolled in an impossible event");
        return;
    }
    fn = (gv_task_fn_t)gv__fn_decode(&t->fn);
    if ((fn == NULL) || (t->len > GV_GCE_ARGS_MAX)) {
        gv__dsm_reject(-1, "task enrolled in an event with a bad function");
        r->errors++;
    } else {
        fn(t->args);
    }
    /* The record may have moved while the task ran. */
    gv__gce_rec(t->id)->completed++;
}

static gv_status_t gce_spawn(gv_gce_t *gce, int rank, gv_task_fn_t fn,
                             const void *args, size_t len)
{
    gce_task_t  t;
    gv_status_t status;
    uint32_t    id = gv__gce_id(gce);

    if (!gv__geo.up)
        return GV_ERR_STATE;
    if ((fn == NULL) || (len > GV_GCE_ARGS_MAX) ||
        ((len != 0) && (args == NULL)) || (gv__gce_rec(id) == NULL) ||
        !gv__fn_encode((const void *)fn, &t.fn)) {
        gv_error("gv_gce_spawn: bad task (function %p, %zu bytes of "
                 "arguments, at most %d)", (void *)fn, len, GV_GCE_ARGS_MAX);
        return GV_ERR_INVALID;
    }
    memset(t.args, 0, sizeof(t.args));
    if (len != 0)
        memcpy(t.args, args, len);
    t.id  = id;
    t.len = (uint32_t)len;
    gv__gce_rec(id)->enrolled++;
    status = (rank < 0) ? gv_spawn(gce_task, &t, sizeof(t))
                        : gv_spawn_on(rank, gce_task, &t, sizeof(t));
    if (status != GV_OK)
        gv__gce_rec(id)->completed++; /* it will never run */
    return status;
}

gv_status_t gv_gce_spawn(gv_gce_t *gce, gv_task_fn_t fn, const void *args,
                         size_t len)
{
    return gce_spawn(gce, -1, fn, args, len);
}

gv_status_t gv_gce_spawn_on(gv_gce_t *gce, int rank, gv_task_fn_t fn,
                            const void *args, size_t len)
{
    if ((rank < 0) || (rank >= gv__geo.size)) {
        gv_error("gv_gce_spawn_on: rank %d out of range", rank);
        return GV_ERR_INVALID;
    }
    return gce_spawn(gce, rank, fn, args, len);
}

/* ---- setup ---------------------------------------------------------------- */

void gv__gce_init(void)
{
    gv_status_t status;

    by_creator = gv_calloc((size_t)gv__geo.size, sizeof(*by_creator));
    next_slot  = (gv__geo.rank == 0) ? 1 : 0; /* rank 0 slot 0: default */
    cached_id  = UINT32_MAX;
    (void)gv__gce_rec(0);
    status = gv_am_register(am_query_cb, NULL, &am_query);
    if (status == GV_OK)
        status = gv_am_register(am_answer_cb, NULL, &am_answer);
    if (status != GV_OK)
        gv_fatal("cannot register the completion-event handlers: %s",
                 gv_status_str(status));
}

void gv__gce_fini(void)
{
    int i;

    for (i = 0; (by_creator != NULL) && (i < gv__geo.size); i++)
        gv_free(by_creator[i].v);
    gv_free(by_creator);
    by_creator = NULL;
    cached_id  = UINT32_MAX;
}
