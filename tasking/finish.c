/* Finish scopes: detecting that a computation whose tasks were stolen or
 * sent to other ranks has terminated. SPDX-License-Identifier: BSD-3-Clause
 *
 * The problem. gv_finish_end() must return once every task of the scope has
 * finished, wherever it runs. Counting on the home rank alone is not enough:
 * a task stolen from A to B spawns a child on B, the child is stolen by C
 * and finishes there; if B told A "+1" and C told A "-1", nothing orders
 * C's message before B's, and A could see its count hit zero while the
 * child's sibling is still running. (Per-pair ordering only holds between
 * two ranks.)
 *
 * The method: counters that never travel, and counting waves (Mattern's
 * four-counter method). Every rank keeps, per scope, two monotone counters:
 *   created   tasks of the scope spawned on this rank (a spawn is counted
 *             where it happens, before the task can go anywhere);
 *   finished  tasks of the scope that ended on this rank.
 * A task stolen from B to C is counted created on B and finished on C; in
 * flight it is created and not finished, so it keeps the sums apart.
 * Let C(t) and F(t) be the sums over all ranks at real time t. A task is
 * created before it finishes, and a task only creates tasks of its scope
 * while it runs, so the scope has terminated exactly when C(t) == F(t), and
 * then stays terminated.
 *
 * The home cannot read all counters at one instant, so it runs waves: it
 * reads its own counters and asks every other rank for theirs (one query and
 * one reply per rank), and sums the answers into (C_k, F_k) for wave k.
 * Wave k+1 starts after wave k's last reply arrived (time t_k). Counters
 * only grow, so F_k <= F(t_k) <= C(t_k) <= C_{k+1}. Hence if F_k == C_{k+1},
 * then F(t_k) == C(t_k): the scope had terminated at t_k. The home stops at
 * the first wave whose C equals the previous wave's F; a computation that
 * is done costs two waves, 4(P-1) small messages. Between waves that show
 * work still outstanding the home sleeps (backing off from 20 us to 1 ms),
 * so an idle home does not flood the others with queries.
 *
 * The cheap case. While no task of the scope has left the home (the
 * `exported` bit, set when the home ships one of its tasks by stealing or
 * gv_spawn_on), every task of the scope was created and finished on the
 * home, and the home's own counters are exact: gv_finish_end() just waits
 * until finished == created, woken by the last task, with no messages.
 * Only the home can export tasks of a scope that lives nowhere else yet, so
 * checking the bit on the home is sufficient.
 *
 * Records: the home's record is created by gv_finish_begin(); a remote rank
 * creates one when the first task of the scope arrives, and drops it when
 * the home announces termination (RELEASE), after which no task of the
 * scope exists anywhere. A query for a scope a rank never saw answers 0/0.
 */
#include "tasking/task_internal.h"
#include <grapevine/am.h>

#define S gv__sched

typedef struct {
    int32_t  home;
    uint32_t id;
    uint32_t wave;
    uint32_t pad;
    uint64_t created, finished;
} wave_msg_t;

static gv__scope_t **tab;
static uint64_t      tab_mask, tab_n;
static uint32_t      next_id;
static gv__scope_t  *free_recs;
static gv_am_id_t    am_query, am_reply, am_release;

static inline uint64_t scope_hash(int32_t home, uint32_t id)
{
    uint64_t h = ((uint64_t)(uint32_t)home << 32) | id;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

static void tab_grow(void)
{
    uint64_t      cap = (tab_mask + 1) * 2, i;
    gv__scope_t **nt  = gv_calloc(cap, sizeof(*nt));

    for (i = 0; i <= tab_mask; i++) {
        gv__scope_t *s = tab[i], *nx;
        for (; s != NULL; s = nx) {
            uint64_t b = scope_hash(s->home, s->id) & (cap - 1);
            nx         = s->hnext;
            s->hnext   = nt[b];
            nt[b]      = s;
        }
    }
    gv_free(tab);
    tab      = nt;
    tab_mask = cap - 1;
}

static gv__scope_t *rec_alloc(void)
{
    gv__scope_t *s = free_recs;

    if (s != NULL)
        free_recs = s->hnext;
    else
        s = gv_malloc(sizeof(*s));
    memset(s, 0, sizeof(*s));
    return s;
}

static void tab_insert(gv__scope_t *s)
{
    uint64_t b;

    if (tab_n >= tab_mask + 1)
        tab_grow();
    b        = scope_hash(s->home, s->id) & tab_mask;
    s->hnext = tab[b];
    tab[b]   = s;
    tab_n++;
}

static void tab_remove(gv__scope_t *s)
{
    gv__scope_t **pp = &tab[scope_hash(s->home, s->id) & tab_mask];

    for (; *pp != NULL; pp = &(*pp)->hnext) {
        if (*pp == s) {
            *pp = s->hnext;
            tab_n--;
            s->hnext  = free_recs;
            free_recs = s;
            return;
        }
    }
}

gv__scope_t *gv__scope_lookup(int32_t home, uint32_t id, int create)
{
    gv__scope_t *s = tab[scope_hash(home, id) & tab_mask];

    for (; s != NULL; s = s->hnext)
        if ((s->home == home) && (s->id == id))
            return s;
    /* The home's records are made by gv_finish_begin only: a task naming a
     * scope of ours that does not exist is malformed. */
    if (!create || (home == gv__ctx.rank))
        return NULL;
    s       = rec_alloc();
    s->home = home;
    s->id   = id;
    tab_insert(s);
    return s;
}

void gv__scope_task_finished(gv__scope_t *s)
{
    s->finished++;
    if (s->is_home && (s->waiter != NULL) && (s->replies == 0) &&
        (s->finished == s->created)) {
        gv_worker_t *w = s->waiter;
        s->waiter      = NULL;
        gv__sched_ready(w);
    }
}

void gv__scope_exported(gv__scope_t *s)
{
    if (!s->is_home || s->exported)
        return;
    s->exported = 1;
    /* A waiter counting locally must switch to waves now: the local
     * counts will never match again. */
    if ((s->waiter != NULL) && (s->replies == 0)) {
        gv_worker_t *w = s->waiter;
        s->waiter      = NULL;
        gv__sched_ready(w);
    }
}

void gv_finish_begin(gv_finish_t *f)
{
    gv_worker_t *self = gv_task_self();
    gv__scope_t *s;

    if (self == NULL)
        gv_fatal("gv_finish_begin before tasking is initialised");
    s          = rec_alloc();
    s->home    = gv__ctx.rank;
    if (++next_id == 0)
        next_id = 1;
    s->id      = next_id;
    s->is_home = 1;
    tab_insert(s);
    f->scope    = s;
    f->outer    = self->scope;
    self->scope = s;
}

/* One wave: sum every rank's counters for @a s into wave_created and
 * wave_finished. The caller (the waiting worker) sleeps until the last
 * reply has been added. */
static void run_wave(gv__scope_t *s, gv_worker_t *self)
{
    wave_msg_t q;
    int        r;

    s->wave++;
    s->wave_created  = s->created;
    s->wave_finished = s->finished;
    s->replies       = gv__ctx.size - 1;
    memset(&q, 0, sizeof(q));
    q.home = s->home;
    q.id   = s->id;
    q.wave = s->wave;
    for (r = 0; r < gv__ctx.size; r++) {
        if (r == gv__ctx.rank)
            continue;
        gv_status_t status = gv_am_send(r, am_query, &q, sizeof(q));
        if (status != GV_OK)
            gv_fatal("cannot send a termination query to rank %d: %s", r,
                     gv_status_str(status));
    }
    gv_flush(); /* the answers decide when the program can go on */
    while (s->replies != 0) {
        s->waiter = self;
        gv__sched_block();
    }
    s->waiter = NULL;
}

gv_status_t gv_finish_end(gv_finish_t *f)
{
    gv_worker_t *self = gv_task_self();
    gv__scope_t *s    = f->scope;
    uint64_t     prev_finished = 0, backoff_ns = 20000;
    int          have_prev = 0;

    if ((self == NULL) || (s == NULL) || (self->scope != s)) {
        gv_error("gv_finish_end on a scope that is not the innermost one "
                 "open on this worker");
        return GV_ERR_STATE;
    }
    self->scope = f->outer;

    for (;;) {
        if (!s->exported) {
            /* Every task of the scope so far was created and finished
             * here, so the local count is exact. */
            if (s->created == s->finished)
                break;
            /* Woken by the task that makes them equal, or when a task of
             * the scope leaves this rank (gv__scope_exported). */
            s->waiter = self;
            gv__sched_block();
            continue;
        }
        run_wave(s, self);
        if (have_prev && (prev_finished == s->wave_created))
            break;
        prev_finished = s->wave_finished;
        have_prev     = 1;
        if (s->wave_created != s->wave_finished) {
            gv__sched_sleep_ns(backoff_ns);
            if (backoff_ns < 1000000)
                backoff_ns *= 2;
        }
    }

    if (s->exported) {
        wave_msg_t m;
        int        r;
        memset(&m, 0, sizeof(m));
        m.home = s->home;
        m.id   = s->id;
        for (r = 0; r < gv__ctx.size; r++) {
            if (r == gv__ctx.rank)
                continue;
            gv_status_t status = gv_am_send(r, am_release, &m, sizeof(m));
            if (status != GV_OK)
                gv_warn("cannot release finish scope %u on rank %d: %s",
                        s->id, r, gv_status_str(status));
        }
    }
    tab_remove(s);
    f->scope = NULL;
    return GV_OK;
}

static int wave_parse(int src, const void *payload, size_t len,
                      wave_msg_t *m)
{
    if (tab == NULL)
        return 0; /* tasking is down: no scope exists here */
    if (len != sizeof(*m)) {
        S.st.rejected++;
        gv_warn("dropped a %zu-byte finish message from rank %d", len, src);
        return 0;
    }
    memcpy(m, payload, sizeof(*m));
    if ((m->home < 0) || (m->home >= gv__ctx.size)) {
        S.st.rejected++;
        gv_warn("dropped a finish message from rank %d naming rank %d", src,
                (int)m->home);
        return 0;
    }
    return 1;
}

static void am_query_cb(int src, const void *payload, size_t len, void *arg)
{
    wave_msg_t   m;
    gv__scope_t *s;

    if (!wave_parse(src, payload, len, &m) || (m.home != src))
        return;
    s          = gv__scope_lookup(m.home, m.id, 0);
    m.created  = (s != NULL) ? s->created : 0;
    m.finished = (s != NULL) ? s->finished : 0;
    gv_status_t status = gv_am_send(src, am_reply, &m, sizeof(m));
    if (status != GV_OK)
        gv_error("cannot answer a termination query of rank %d: %s", src,
                 gv_status_str(status));
}

static void am_reply_cb(int src, const void *payload, size_t len, void *arg)
{
    wave_msg_t   m;
    gv__scope_t *s;

    if (!wave_parse(src, payload, len, &m) || (m.home != gv__ctx.rank))
        return;
    s = gv__scope_lookup(m.home, m.id, 0);
    if ((s == NULL) || !s->is_home || (m.wave != s->wave) ||
        (s->replies <= 0)) {
        S.st.rejected++;
        gv_warn("dropped a stale termination reply from rank %d (scope %u "
                "wave %u)", src, m.id, m.wave);
        return;
    }
    s->wave_created += m.created;
    s->wave_finished += m.finished;
    if ((--s->replies == 0) && (s->waiter != NULL)) {
        gv_worker_t *w = s->waiter;
        s->waiter      = NULL;
        gv__sched_ready(w);
    }
}

static void am_release_cb(int src, const void *payload, size_t len,
                          void *arg)
{
    wave_msg_t   m;
    gv__scope_t *s;

    if (!wave_parse(src, payload, len, &m) || (m.home != src))
        return;
    s = gv__scope_lookup(m.home, m.id, 0);
    if (s != NULL)
        tab_remove(s);
}

void gv__finish_init(void)
{
    gv_status_t status;

    tab_mask = 255;
    tab_n    = 0;
    tab      = gv_calloc(tab_mask + 1, sizeof(*tab));
    next_id  = 0;
    status   = gv_am_register(am_query_cb, NULL, &am_query);
    if (status == GV_OK)
        status = gv_am_register(am_reply_cb, NULL, &am_reply);
    if (status == GV_OK)
        status = gv_am_register(am_release_cb, NULL, &am_release);
    if (status != GV_OK)
        gv_fatal("cannot register the finish-scope handlers: %s",
                 gv_status_str(status));
}

void gv__finish_fini(void)
{
    uint64_t i;

    for (i = 0; (tab != NULL) && (i <= tab_mask); i++) {
        gv__scope_t *s = tab[i], *nx;
        for (; s != NULL; s = nx) {
            nx = s->hnext;
            gv_free(s);
        }
    }
    gv_free(tab);
    tab = NULL;
    while (free_recs != NULL) {
        gv__scope_t *nx = free_recs->hnext;
        gv_free(free_recs);
        free_recs = nx;
    }
}
