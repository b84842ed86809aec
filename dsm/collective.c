/* Collectives for workers: barrier, broadcast, all-reduce. The caller is
 * suspended while it waits (the main flow progresses), so the other
 * workers of its rank keep running. SPDX-License-Identifier: BSD-3-Clause
 *
 * One algorithm for all three: a reduction up a binary tree rooted at rank
 * 0 (rank r's children are 2r+1 and 2r+2), then the result down the same
 * tree. A barrier reduces nothing; a broadcast reduces "the root's bytes
 * if present". Calls are numbered; every rank makes the same calls in the
 * same order, so a child can be at most one call ahead of its parent (it
 * needs the parent's result of call k before it enters call k+1): two
 * slots, by the parity of the number, hold what arrives early.
 */
#include "dsm/dsm_internal.h"

#define COLL_MAX (1u << 20) /* bytes of one broadcast or reduction */

enum { K_BARRIER = 1, K_BCAST, K_REDUCE };

typedef struct {
    uint32_t seq;
    uint8_t  kind, type, op, has; /* has: carries the broadcast's bytes */
    uint32_t len;
    uint32_t pad;
} coll_hdr_t;

typedef struct {
    int          nup;       /* children heard from */
    int          down;      /* the result arrived from the parent */
    int          has;
    uint8_t      kind, type, op;
    uint8_t     *acc;       /* accumulated bytes (the caller's buffer once
                               it entered; before, a copy) */
    size_t       len;
    uint8_t     *early;     /* children's contributions before we entered */
    size_t       early_len, early_cap;
    gv_worker_t *waiter;
    int          entered;
} slot_t;

static struct {
    uint32_t   seq;
    slot_t     slot[2];
    gv_am_id_t am_up, am_down;
} C;

static int nchildren(void)
{
    int n = 0, c;

    for (c = 2 * gv__geo.rank + 1; (c <= 2 * gv__geo.rank + 2) &&
                                   (c < gv__geo.size); c++)
        n++;
    return n;
}

static size_t dsize(uint8_t type)
{
    (void)type;
    return 8; /* int64, uint64, double */
}

/* acc op= in, elementwise. */
static void combine(uint8_t kind, uint8_t type, uint8_t op, uint8_t *acc,
                    int *acc_has, const uint8_t *in, int in_has, size_t len)
{
    size_t i, n = len / 8;

    if (kind == K_BARRIER)
        return;
    if (kind == K_BCAST) {
        if (in_has && !*acc_has) {
            memcpy(acc, in, len);
            *acc_has = 1;
        }
        return;
    }
    for (i = 0; i < n; i++) {
        if (type == GV_DOUBLE) {
            double a, b;
            memcpy(&a, acc + 8 * i, 8);
            memcpy(&b, in + 8 * i, 8);
            a = (op == GV_SUM) ? a + b : (op == GV_MIN) ? ((b < a) ? b : a)
                                                        : ((b > a) ? b : a);
            memcpy(acc + 8 * i, &a, 8);
        } else if (type == GV_INT64) {
            int64_t a, b;
            memcpy(&a, acc + 8 * i, 8);
            memcpy(&b, in + 8 * i, 8);
            a = (op == GV_SUM) ? (int64_t)((uint64_t)a + (uint64_t)b)
                : (op == GV_MIN) ? ((b < a) ? b : a) : ((b > a) ? b : a);
            memcpy(acc + 8 * i, &a, 8);
        } else {
            uint64_t a, b;
            memcpy(&a, acc + 8 * i, 8);
            memcpy(&b, in + 8 * i, 8);
            a = (op == GV_SUM) ? a + b : (op == GV_MIN) ? ((b < a) ? b : a)
                                                        : ((b > a) ? b : a);
            memcpy(acc + 8 * i, &a, 8);
        }
    }
}

static void wake(slot_t *s)
{
    if (s->waiter != NULL) {
        gv_worker_t *w = s->waiter;
        s->waiter      = NULL;
        gv_task_wake(w);
    }
}

static int parse(int src, const void *payload, size_t len, coll_hdr_t *h)
{
    if (len < sizeof(*h)) {
        gv__dsm_reject(src, "truncated collective message");
        return 0;
    }
    memcpy(h, payload, sizeof(*h));
    if ((h->len != len - sizeof(*h)) || (h->len > COLL_MAX) ||
        (h->kind < K_BARRIER) || (h->kind > K_REDUCE) ||
        ((h->kind == K_REDUCE) && ((h->len % 8) != 0 ||
                                   h->type > GV_DOUBLE || h->op > GV_MAX)) ||
        ((h->seq != C.seq) && (h->seq != C.seq + 1))) {
        gv__dsm_reject(src, "malformed or unexpected collective message");
        return 0;
    }
    return 1;
}

static void am_up_cb(int src, const void *payload, size_t len, void *arg)
{
    coll_hdr_t     h;
    slot_t        *s;
    const uint8_t *in = (const uint8_t *)payload + sizeof(h);

    if (!parse(src, payload, len, &h) || ((src - 1) / 2 != gv__geo.rank) ||
        (src == gv__geo.rank))
        return;
    s = &C.slot[h.seq & 1];
    if (s->entered && (h.seq == C.seq)) {
        if ((h.kind != s->kind) || (h.len != s->len)) {
            gv__dsm_reject(src, "collective of another kind or size");
            return;
        }
        combine(h.kind, h.type, h.op, s->acc, &s->has, in, h.has, h.len);
    } else {
        /* Early: keep it as it came, combine when we enter. */
        size_t need = s->early_len + len;
        if (need > s->early_cap) {
            s->early_cap = need * 2;
            s->early     = gv_realloc(s->early, s->early_cap);
        }
        memcpy(s->early + s->early_len, payload, len);
        s->early_len += len;
    }
    s->nup++;
    wake(s);
}

static void am_down_cb(int src, const void *payload, size_t len, void *arg)
{
    coll_hdr_t h;
    slot_t    *s;

    if (!parse(src, payload, len, &h) || (gv__geo.rank == 0) ||
        (src != (gv__geo.rank - 1) / 2) || (h.seq != C.seq))
        return;
    s = &C.slot[h.seq & 1];
    if (!s->entered || (h.len != s->len)) {
        gv__dsm_reject(src, "collective result of the wrong size");
        return;
    }
    if (h.len > 0)
        memcpy(s->acc, (const uint8_t *)payload + sizeof(h), h.len);
    s->down = 1;
    wake(s);
}

static int children_in(void *arg)
{
    return ((slot_t *)arg)->nup == nchildren();
}

static int result_in(void *arg)
{
    return ((slot_t *)arg)->down;
}

static void wait_until(slot_t *s, int (*cond)(void *))
{
    gv_worker_t *self = gv_task_self();

    while (!cond(s)) {
        if (self != NULL) {
            s->waiter = self;
            gv_task_suspend();
        } else {
            gv_wait(cond, s);
        }
    }
}

static void send_msg(int dst, gv_am_id_t id, const coll_hdr_t *h,
                     const uint8_t *data)
{
    uint8_t    *m = gv_malloc(sizeof(*h) + h->len);
    gv_status_t status;

    memcpy(m, h, sizeof(*h));
    if (h->len > 0)
        memcpy(m + sizeof(*h), data, h->len);
    status = gv_am_send(dst, id, m, sizeof(*h) + h->len);
    gv_free(m);
    if (status != GV_OK)
        gv_fatal("collective: cannot send to rank %d: %s", dst,
                 gv_status_str(status));
}

static gv_status_t collective(uint8_t kind, uint8_t type, uint8_t op,
                              int root, void *buf, size_t len)
{
    slot_t    *s;
    coll_hdr_t h;
    size_t     off;
    int        c;

    if (!gv__geo.up)
        return GV_ERR_STATE;
    if (len > COLL_MAX) {
        gv_error("collective of %zu bytes (at most %u)", len, COLL_MAX);
        return GV_ERR_INVALID;
    }
    C.seq++;
    s          = &C.slot[C.seq & 1];
    s->entered = 1;
    s->kind    = kind;
    s->type    = type;
    s->op      = op;
    s->acc     = buf;
    s->len     = len;
    s->has     = (kind != K_BCAST) || (root == gv__geo.rank);
    s->down    = 0;
    /* Fold in what the children sent before we entered. */
    for (off = 0; off < s->early_len;) {
        coll_hdr_t e;
        memcpy(&e, s->early + off, sizeof(e));
        if ((e.kind == kind) && (e.len == len))
            combine(kind, type, op, s->acc, &s->has, s->early + off +
                    sizeof(e), e.has, len);
        else
            gv__dsm_reject(-1, "early collective of another kind or size");
        off += sizeof(e) + e.len;
    }
    s->early_len = 0;
    wait_until(s, children_in);
    memset(&h, 0, sizeof(h));
    h.seq  = C.seq;
    h.kind = kind;
    h.type = type;
    h.op   = op;
    h.len  = (uint32_t)len;
    if (gv__geo.rank != 0) {
        h.has = (uint8_t)s->has;
        /* Outside the root's branch a broadcast's bytes are flagged
         * absent (has 0) and ignored. */
        send_msg((gv__geo.rank - 1) / 2, C.am_up, &h, s->acc);
        wait_until(s, result_in);
    }
    h.has = 1;
    for (c = 2 * gv__geo.rank + 1;
         (c <= 2 * gv__geo.rank + 2) && (c < gv__geo.size); c++)
        send_msg(c, C.am_down, &h, s->acc);
    s->entered = 0;
    s->nup     = 0;
    s->down    = 0;
    s->acc     = NULL;
    return GV_OK;
}

gv_status_t gv_coll_barrier(void)
{
    return collective(K_BARRIER, 0, 0, 0, NULL, 0);
}

gv_status_t gv_broadcast(int root, void *buf, size_t len)
{
    if ((root < 0) || (root >= gv__geo.size) || ((len > 0) && (buf == NULL))) {
        gv_error("gv_broadcast: root %d of %d ranks, %zu bytes", root,
                 gv__geo.size, len);
        return GV_ERR_INVALID;
    }
    return collective(K_BCAST, 0, 0, root, buf, len);
}

gv_status_t gv_allreduce(void *buf, size_t count, gv_dtype_t type,
                         gv_redop_t op)
{
    if (((unsigned)type > GV_DOUBLE) || ((unsigned)op > GV_MAX) ||
        ((count > 0) && (buf == NULL)) || (count > COLL_MAX / 8)) {
        gv_error("gv_allreduce: bad arguments (%zu elements, type %d, op %d)",
                 count, (int)type, (int)op);
        return GV_ERR_INVALID;
    }
    return collective(K_REDUCE, (uint8_t)type, (uint8_t)op, 0, buf,
                      count * dsize((uint8_t)type));
}

void gv__coll_init(void)
{
    gv_status_t status;

    memset(&C, 0, sizeof(C));
    status = gv_am_register(am_up_cb, NULL, &C.am_up);
    if (status == GV_OK)
        status = gv_am_register(am_down_cb, NULL, &C.am_down);
    if (status != GV_OK)
        gv_fatal("cannot register the collective handlers: %s",
                 gv_status_str(status));
}

void gv__coll_fini(void)
{
    gv_free(C.slot[0].early);
    gv_free(C.slot[1].early);
    memset(&C, 0, sizeof(C));
}
