/* Moving tasks between ranks: the wire form of a task, gv_spawn_on, and
 * work stealing. SPDX-License-Identifier: BSD-3-Clause
 *
 * Function pointers on the wire. Ranks run the same binary, but with
 * address-space layout randomisation its code sits at a different address
 * in each process. A task's function therefore travels as (module, offset):
 * the index of the loaded object (the program or a shared library, in the
 * order dl_iterate_phdr lists them, which is the same on every rank of the
 * same binary) and the offset from that object's load address. The
 * receiver accepts it only if base + offset falls inside an executable
 * segment of that object; anything else is a malformed message, dropped and
 * counted.
 *
 * Work stealing (Grappa tech report, section 2). A rank whose ready queue
 * and task queues are empty (the scheduler's idle loop) sends a steal
 * request to a random other rank; at most one request is in flight. The
 * victim answers from its message handler with half of its public queue
 * (the oldest tasks: in a recursive computation those carry the most work),
 * at most STEAL_MAX, or with nothing. The thief puts what it got in its own
 * public queue, from which a third rank may steal again. After a round of
 * P-1 empty answers in a row the thief backs off, from 20 us doubling to
 * 1 ms, so that idle ranks do not flood busy ones with requests; any
 * successful steal resets the backoff. Termination of computations whose
 * tasks were stolen is finish.c's business: a task leaving its scope's home
 * marks the scope exported.
 */
#include "tasking/task_internal.h"
#include "core/fnref.h"
#include <grapevine/am.h>


#define S         gv__sched
#define STEAL_MAX 256

/* A task on the wire: 88 bytes, fixed size so that parsing is trivial. */
typedef struct {
    uint32_t mod;        /* index of the loaded object holding fn */
    uint32_t len;        /* bytes of args used */
    uint64_t off;        /* fn - object's load address */
    int32_t  scope_home; /* -1: no finish scope */
    uint32_t scope_id;
    uint8_t  args[GV_TASK_ARGS_MAX];
} wire_task_t;

typedef struct {
    uint32_t seq;
    uint32_t count;      /* wire_task_t records that follow */
} steal_hdr_t;

/* ---- function pointers: core/fnref.h ------------------------------------ */

static int fn_encode(gv_task_fn_t fn, uint32_t *mod_p, uint64_t *off_p)
{
    gv__fnref_t ref;

    if (!gv__fn_encode((const void *)fn, &ref))
        return 0;
    *mod_p = ref.mod;
    *off_p = ref.off;
    return 1;
}

static gv_task_fn_t fn_decode(uint32_t mod, uint64_t off)
{
    gv__fnref_t ref = {mod, 0, off};
    return (gv_task_fn_t)gv__fn_decode(&ref);
}

gv_status_t gv__fn_check(gv_task_fn_t fn)
{
    uint32_t mod;
    uint64_t off;

    if (!fn_encode(fn, &mod, &off)) {
        gv_error("task function %p is not in the code of any loaded object, "
                 "so it cannot be shipped to another rank", (void *)fn);
        return GV_ERR_INVALID;
    }
    return GV_OK;
}

/* ---- tasks <-> wire ----------------------------------------------------- */

static int task_encode(const gv__task_t *t, wire_task_t *w)
{
    memset(w, 0, sizeof(*w));
    if (!fn_encode(t->fn, &w->mod, &w->off))
        return 0;
    w->len = t->len;
    memcpy(w->args, t->args, t->len);
    if (t->scope != NULL) {
        w->scope_home = t->scope->home;
        w->scope_id   = t->scope->id;
        gv__scope_exported(t->scope); /* a task may leave: see finish.c */
    } else {
        w->scope_home = -1;
    }
    return 1;
}

/* Validate one wire task and queue it; counts and logs a bad one. */
static void task_accept(int src, const wire_task_t *w, int public_q)
{
    gv_task_fn_t fn;
    gv__scope_t *scope = NULL;
    gv__task_t  *t;

    if (w->len > GV_TASK_ARGS_MAX) {
        S.st.rejected++;
        gv_warn("dropped a task from rank %d with %u bytes of arguments",
                src, w->len);
        return;
    }
    fn = fn_decode(w->mod, w->off);
    if (fn == NULL) {
        S.st.rejected++;
        gv_warn("dropped a task from rank %d: function (object %u, offset "
                "%#llx) is not code here", src, w->mod,
                (unsigned long long)w->off);
        return;
    }
    if (w->scope_home != -1) {
        if ((w->scope_home < 0) || (w->scope_home >= gv__ctx.size) ||
            ((scope = gv__scope_lookup(w->scope_home, w->scope_id, 1)) ==
             NULL)) {
            S.st.rejected++;
            gv_warn("dropped a task from rank %d naming unknown finish scope "
                    "%d/%u", src, (int)w->scope_home, w->scope_id);
            return;
        }
    }
    t        = public_q ? gv__sched_push_public() : gv__sched_push_private();
    t->fn    = fn;
    t->scope = scope;
    t->len   = w->len;
    memcpy(t->args, w->args, w->len);
}

/* ---- gv_spawn_on --------------------------------------------------------- */

static gv_am_id_t am_spawn, am_steal_req, am_steal_rep;

gv_status_t gv_spawn_on(int rank, gv_task_fn_t fn, const void *args,
                        size_t len)
{
    gv__task_t  t;
    wire_task_t w;
    gv_status_t status;

    if (!S.up)
        return GV_ERR_STATE;
    if ((rank < 0) || (rank >= gv__ctx.size) || (fn == NULL) ||
        (len > GV_TASK_ARGS_MAX) || ((len != 0) && (args == NULL)))
        return GV_ERR_INVALID;
    if (rank == gv__ctx.rank)
        return gv_spawn_private(fn, args, len);
    t.fn    = fn;
    t.scope = S.current->scope;
    t.len   = (uint32_t)len;
    if (len != 0)
        memcpy(t.args, args, len);
    if (!task_encode(&t, &w))
        return gv__fn_check(fn); /* logs why */
    /* Counted as created here, before it can run there (finish.c). */
    if (t.scope != NULL)
        t.scope->created++;
    status = gv_am_send(rank, am_spawn, &w, sizeof(w));
    if (status != GV_OK) {
        if (t.scope != NULL)
            t.scope->finished++; /* it will never run: keep the sums true */
        return status;
    }
    S.st.tasks_sent++;
    return GV_OK;
}

static void am_spawn_cb(int src, const void *payload, size_t len, void *arg)
{
    wire_task_t w;

    if (len != sizeof(w)) {
        S.st.rejected++;
        gv_warn("dropped a %zu-byte spawn message from rank %d", len, src);
        return;
    }
    if (!S.up) {
        gv_warn("dropped a task from rank %d: tasking is not running here",
                src);
        return;
    }
    memcpy(&w, payload, sizeof(w));
    task_accept(src, &w, 0);
}

/* ---- stealing ------------------------------------------------------------ */

static uint32_t steal_seq;

static inline uint64_t rng_next(void)
{
    /* xorshift64*: plenty for picking victims. */
    S.rng ^= S.rng >> 12;
    S.rng ^= S.rng << 25;
    S.rng ^= S.rng >> 27;
    return S.rng * 0x2545f4914f6cdd1dull;
}

void gv__steal_try(void)
{
    steal_hdr_t req;
    int         victim;
    gv_status_t status;

    if (S.steal_out || (gv__ctx.size < 2))
        return;
    if ((S.steal_after != 0) && ((int64_t)(gv__ticks() - S.steal_after) < 0))
        return;
    victim = (int)(rng_next() % (uint64_t)(gv__ctx.size - 1));
    if (victim >= gv__ctx.rank)
        victim++;
    req.seq   = ++steal_seq;
    req.count = 0;
    status    = gv_am_send(victim, am_steal_req, &req, sizeof(req));
    if (status != GV_OK) {
        gv_warn("steal request to rank %d failed: %s", victim,
                gv_status_str(status));
        return;
    }
    S.steal_out = 1;
    S.st.steal_attempts++;
    gv_flush();
}

static void am_steal_req_cb(int src, const void *payload, size_t len,
                            void *arg)
{
    gv__taskq_t *q = gv__sched_public_queue();
    steal_hdr_t  req, *hdr;
    uint64_t     avail = q->tail - q->head, take;
    size_t       cap, bytes;
    uint8_t     *buf;
    uint32_t     n = 0;
    uint64_t     tries = 0;
    gv__task_t   t;
    gv_status_t  status;

    if (len != sizeof(req)) {
        S.st.rejected++;
        gv_warn("dropped a %zu-byte steal request from rank %d", len, src);
        return;
    }
    memcpy(&req, payload, sizeof(req));
    if (!S.up)
        avail = 0; /* finalizing: answer, but with nothing */
    take = (avail + 1) / 2;
    if (take > STEAL_MAX)
        take = STEAL_MAX;
    cap = (gv_am_max_payload() - sizeof(*hdr)) / sizeof(wire_task_t);
    if (take > cap)
        take = cap;
    bytes = sizeof(*hdr) + take * sizeof(wire_task_t);
    buf   = gv_malloc(bytes);
    while ((n < take) && (tries++ < take) && gv__sched_pop_head(q, &t)) {
        if (task_encode(&t, (wire_task_t *)(void *)(buf + sizeof(*hdr)) + n))
            n++;
        else
            *gv__sched_push_public() = t; /* cannot ship it: keep it */
    }
    hdr        = (steal_hdr_t *)(void *)buf;
    hdr->seq   = req.seq;
    hdr->count = n;
    status = gv_am_send(src, am_steal_rep, buf,
                        sizeof(*hdr) + n * sizeof(wire_task_t));
    if (status != GV_OK) {
        /* The thief is gone or unreachable: the core reports that. The
         * tasks are not lost: put them back. */
        uint32_t i;
        gv_error("cannot answer a steal request of rank %d: %s", src,
                 gv_status_str(status));
        for (i = 0; i < n; i++) {
            wire_task_t *w = (wire_task_t *)(void *)(buf + sizeof(*hdr)) + i;
            task_accept(gv__ctx.rank, w, 1);
        }
    } else {
        S.st.tasks_stolen_out += n;
        /* The thief is idle and waiting for this: do not let it sit in an
         * aggregation buffer while this rank is busy with its own work. */
        gv_flush();
    }
    gv_free(buf);
}

static void am_steal_rep_cb(int src, const void *payload, size_t len,
                            void *arg)
{
    steal_hdr_t hdr;
    uint32_t    i;

    if (len < sizeof(hdr)) {
        S.st.rejected++;
        gv_warn("dropped a %zu-byte steal reply from rank %d", len, src);
        return;
    }
    memcpy(&hdr, payload, sizeof(hdr));
    if (!S.up)
        return; /* the program left gv_run_*: nothing runs tasks here */
    if ((hdr.count > STEAL_MAX) ||
        (len != sizeof(hdr) + (size_t)hdr.count * sizeof(wire_task_t))) {
        S.st.rejected++;
        gv_warn("dropped a steal reply from rank %d: %u tasks in %zu bytes",
                src, hdr.count, len);
        return;
    }
    if (hdr.seq == steal_seq)
        S.steal_out = 0;
    for (i = 0; i < hdr.count; i++) {
        wire_task_t w;
        memcpy(&w, (const uint8_t *)payload + sizeof(hdr) + i * sizeof(w),
               sizeof(w));
        task_accept(src, &w, 1);
    }
    S.st.tasks_stolen_in += hdr.count;
    if (hdr.count != 0) {
        S.st.steals++;
        S.steal_fails = 0;
        S.steal_after = 0;
    } else if (++S.steal_fails >= (unsigned)(gv__ctx.size - 1)) {
        /* A whole round came back empty: wait before the next one, longer
         * each time (20 us doubling to 1 ms). */
        unsigned rounds = S.steal_fails / (unsigned)(gv__ctx.size - 1);
        uint64_t us     = 20ull << (rounds > 6 ? 6 : rounds - 1);
        if (us > 1000)
            us = 1000;
        S.steal_after = gv__ticks() + us * gv__ticks_per_us();
    }
}

void gv__steal_init(void)
{
    gv_status_t status;

    steal_seq = 0;
    status    = gv_am_register(am_spawn_cb, NULL, &am_spawn);
    if (status == GV_OK)
        status = gv_am_register(am_steal_req_cb, NULL, &am_steal_req);
    if (status == GV_OK)
        status = gv_am_register(am_steal_rep_cb, NULL, &am_steal_rep);
    if (status != GV_OK)
        gv_fatal("cannot register the stealing handlers: %s",
                 gv_status_str(status));
}

void gv__steal_fini(void)
{
}
