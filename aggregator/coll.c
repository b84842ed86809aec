/* Non-blocking collectives on teams, as state machines driven by the
 * arrival of their messages (in the handler) and by their start, so that
 * they complete through any progress. SPDX-License-Identifier: BSD-3-Clause
 *
 * Every message carries the team's id, the collective's number in the
 * team, its kind, a step (a round, or a child's branch) and where its
 * bytes go in that step's data; data longer than SEG travels in SEG-byte
 * pieces. A step's bytes from a peer arrive in order (messages between
 * two ranks are), and a piece that comes before the step needs it is
 * held in the step's buffer. Algorithms (p members, r this one):
 * - barrier: dissemination, ceil(log2 p) rounds, round k to r + 2^k;
 * - broadcast: binomial tree from the root; from PIPE_MIN bytes a chain
 *   r -> r + 1 (relative to the root) in SEG pieces, each forwarded as
 *   it lands, so the transfers overlap along the chain;
 * - reduce: binomial tree to the root, a child's branch per step;
 * - all-reduce: recursive doubling over the largest power of two p2 <= p,
 *   the first 2 (p - p2) members folded in pairs before and after;
 * - all-gather, all-to-all(v): every member sends each block directly.
 */
#include "aggregator/team_internal.h"

#define SEG      (64u * 1024u) /* bytes of data in one message at most */
#define PIPE_MIN (64u * 1024u) /* broadcasts from here go down a chain */
#define NOW_MAX  1024u         /* data bytes sent with gv_am_send_now() */
#define NSTEPS   34            /* rounds + fold steps, for any team size */

enum { K_BARRIER = 1, K_BCAST, K_REDUCE, K_ALLREDUCE, K_ALLGATHER,
       K_ALLTOALL, K_ALLTOALLV };

typedef struct {
    uint8_t *buf;   /* the step's bytes (NULL while none came) */
    size_t   got;
    int      full;  /* all of them came */
} step_t;

struct gv_coll_req {
    gv_team_t     *team;
    gv_coll_req_t *next;       /* in team->active */
    uint32_t       seq;
    uint8_t        kind;
    int            done;
    gv_status_t    status;
    int            phase;      /* where the state machine stands */
    int            sent;       /* the phase's messages went out */
    /* arguments */
    int            root;
    const uint8_t *send;
    uint8_t       *recv;
    size_t         len;        /* bytes of the vector (reduce, bcast) */
    size_t         count, esize;
    gv_dtype_t     type;
    gv_redop_t     op;
    gv_reduce_fn_t fn;
    void          *fn_arg;
    /* exchanges: per member, bytes and offsets */
    size_t        *slen, *soff, *rlen, *roff;
    size_t         need, got;  /* bytes to receive from others, received */
    uint8_t       *acc;        /* reduce's accumulator: recv on the root */
    uint8_t       *acc_own;    /* elsewhere this copy of send */
    int            started;
    int            busy, again; /* in advance(); asked to look again */
    int            nchild;     /* reduce: children combined so far */
    step_t         st[NSTEPS];
};

/* ---- helpers ---------------------------------------------------------- */

static int ilog2(unsigned v)
{
    int k = 0;

    while ((1u << (k + 1)) <= v)
        k++;
    return k;
}

static void fail(gv_coll_req_t *req, gv_status_t status)
{
    if (req->status == GV_OK)
        req->status = status;
}

/* Send @a total bytes of @a data to team rank @a dst as step @a step,
 * offsets counted from @a base. */
static void send_data(gv_coll_req_t *req, int dst, int step,
                      const uint8_t *data, size_t total, size_t base,
                      size_t step_total)
{
    coll_hdr_t h;
    size_t     off = 0;

    memset(&h, 0, sizeof(h));
    h.team  = req->team->id;
    h.seq   = req->seq;
    h.kind  = req->kind;
    h.step  = (uint16_t)step;
    h.total = step_total;
    do {
        size_t      n = (total - off < SEG) ? total - off : SEG;
        int         dw = req->team->world[dst];
        gv_status_t status;

        h.off = base + off;
        /* A small message goes out at once from the stack (the transport
         * copies it). A larger one is built in its own buffer, as a send
         * may progress, and so run handlers that send too, before it
         * returns; gv_am_send() copies it and gv_flush() ships it
         * (gv_am_send_now() may keep sending from the buffer when called
         * from a handler). */
        if (n <= NOW_MAX) {
            uint8_t m[sizeof(h) + NOW_MAX];

            memcpy(m, &h, sizeof(h));
            if (n > 0)
                memcpy(m + sizeof(h), data + off, n);
            status = gv_am_send_now(dw, gv__team_am_id(), m, sizeof(h) + n);
        } else {
            uint8_t *m = gv_malloc(sizeof(h) + n);

            memcpy(m, &h, sizeof(h));
            memcpy(m + sizeof(h), data + off, n);
            status = gv_am_send(dw, gv__team_am_id(), m, sizeof(h) + n);
            gv_free(m);
            if (status == GV_OK)
                gv_flush();
        }
        if (status != GV_OK) {
            gv_error("collective: cannot send to rank %d: %s", dw,
                     gv_status_str(status));
            fail(req, status);
            return;
        }
        off += n;
    } while (off < total);
}

static void send_all(gv_coll_req_t *req, int dst, int step,
                     const uint8_t *data, size_t total)
{
    send_data(req, dst, step, data, total, 0, total);
}

/* inout op= in, @a count elements. */
static void combine(const gv_coll_req_t *req, uint8_t *inout,
                    const uint8_t *in)
{
    size_t i;

    if (req->fn != NULL) {
        req->fn(inout, in, req->count, req->fn_arg);
        return;
    }
    for (i = 0; i < req->count; i++) {
        uint8_t *a = inout + 8 * i;
        const uint8_t *b = in + 8 * i;

        if (req->type == GV_DOUBLE) {
            double x, y;
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
            x = (req->op == GV_SUM) ? x + y
                : (req->op == GV_MIN) ? ((y < x) ? y : x) : ((y > x) ? y : x);
            memcpy(a, &x, 8);
        } else if (req->type == GV_INT64) {
            int64_t x, y;
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
            x = (req->op == GV_SUM) ? (int64_t)((uint64_t)x + (uint64_t)y)
                : (req->op == GV_MIN) ? ((y < x) ? y : x) : ((y > x) ? y : x);
            memcpy(a, &x, 8);
        } else {
            uint64_t x, y;
            memcpy(&x, a, 8);
            memcpy(&y, b, 8);
            x = (req->op == GV_SUM) ? x + y
                : (req->op == GV_MIN) ? ((y < x) ? y : x) : ((y > x) ? y : x);
            memcpy(a, &x, 8);
        }
    }
}

static void complete(gv_coll_req_t *req)
{
    gv_coll_req_t **pp = &req->team->active;

    if (req->done)
        return;
    req->done = 1;
    while (*pp != req)
        pp = &(*pp)->next;
    *pp = req->next;
}

/* ---- the state machines ------------------------------------------------ */

static void adv_barrier(gv_coll_req_t *req)
{
    int p = req->team->size, r = req->team->rank;
    int rounds = (p > 1) ? ilog2((unsigned)(p - 1)) + 1 : 0;

    while (req->phase < rounds) {
        int k = req->phase;

        if (!req->sent) {
            req->sent = 1;
            send_all(req, (r + (1 << k)) % p, k, NULL, 0);
        }
        if (!req->st[k].full)
            return;
        req->phase++;
        req->sent = 0;
    }
    complete(req);
}

/* Broadcast: the children of the relative rank @a rel. */
static int bcast_children(const gv_coll_req_t *req, int rel, int *child)
{
    int p = req->team->size, n = 0, mask;

    if (req->len >= PIPE_MIN) {
        if (rel + 1 < p)
            child[n++] = rel + 1;
        return n;
    }
    for (mask = 1; mask < p; mask <<= 1) {
        if (rel & mask)
            break;
        if (rel + mask < p)
            child[n++] = rel + mask;
    }
    return n;
}

static int to_team(const gv_coll_req_t *req, int rel)
{
    return (rel + req->root) % req->team->size;
}

static void adv_bcast(gv_coll_req_t *req)
{
    int p = req->team->size, rel = (req->team->rank - req->root + p) % p;
    int child[32], n, i;

    if (req->len == 0) {
        complete(req); /* every member knows: nothing moves */
        return;
    }
    if ((rel != 0) || (req->phase > 0))
        return;
    /* The root: everything at once; the others forward as it lands. */
    n = bcast_children(req, rel, child);
    for (i = n - 1; i >= 0; i--)
        send_all(req, to_team(req, child[i]), 0, req->recv, req->len);
    req->phase = 1;
    complete(req);
}

static void bcast_piece(gv_coll_req_t *req, const coll_hdr_t *h,
                        const uint8_t *data, size_t n)
{
    int p = req->team->size, rel = (req->team->rank - req->root + p) % p;
    int child[32], nc, i;

    if (n > 0)
        memcpy(req->recv + h->off, data, n);
    nc = bcast_children(req, rel, child);
    for (i = nc - 1; i >= 0; i--)
        send_data(req, to_team(req, child[i]), 0, data, n, h->off, req->len);
    req->got += n;
    if (req->got == req->len)
        complete(req);
}

static void adv_reduce(gv_coll_req_t *req)
{
    int p = req->team->size, rel = (req->team->rank - req->root + p) % p;
    int mask, k;

    /* Fold in every child branch that is complete, in any order. */
    for (mask = 1, k = 0; mask < p; mask <<= 1, k++) {
        if (rel & mask)
            break;
        if ((rel + mask < p) && (req->st[k].full == 1)) {
            if (req->len > 0)
                combine(req, req->acc, req->st[k].buf);
            gv_free(req->st[k].buf);
            req->st[k].buf  = NULL;
            req->st[k].full = 2; /* combined */
            req->nchild++;
        }
    }
    {
        int nchildren = 0;

        for (mask = 1; (mask < p) && !(rel & mask); mask <<= 1)
            if (rel + mask < p)
                nchildren++;
        if (req->nchild < nchildren)
            return;
    }
    if (rel != 0) {
        mask = rel & -rel;
        send_all(req, to_team(req, rel - mask), ilog2((unsigned)mask),
                 req->acc, req->len);
    }
    complete(req);
}

static int ar_real(int pnew, int rem)
{
    return (pnew < rem) ? 2 * pnew + 1 : pnew + rem;
}

/* Phases: 0 start; 1..nlog the rounds; nlog + 1 the end. Steps: 0 the
 * fold in, 1..nlog the rounds, nlog + 1 the result to a folded member. */
static void adv_allreduce(gv_coll_req_t *req)
{
    int p = req->team->size, r = req->team->rank;
    int p2 = 1 << ilog2((unsigned)p), rem = p - p2, nlog = ilog2((unsigned)p2);
    int newr = (r < 2 * rem) ? r / 2 : r - rem;

    if ((r < 2 * rem) && ((r & 1) == 0)) {
        /* Folded out: give our data to r + 1, take the result back. */
        if (!req->sent) {
            req->sent = 1;
            send_all(req, r + 1, 0, req->recv, req->len);
        }
        if (!req->st[nlog + 1].full)
            return;
        if (req->len > 0)
            memcpy(req->recv, req->st[nlog + 1].buf, req->len);
        complete(req);
        return;
    }
    if (req->phase == 0) {
        if (r < 2 * rem) {
            if (!req->st[0].full)
                return;
            if (req->len > 0)
                combine(req, req->recv, req->st[0].buf);
        }
        req->phase = 1;
        req->sent  = 0;
    }
    while (req->phase <= nlog) {
        int k = req->phase;
        int partner = ar_real(newr ^ (1 << (k - 1)), rem);

        if (!req->sent) {
            req->sent = 1;
            send_all(req, partner, k, req->recv, req->len);
        }
        if (!req->st[k].full)
            return;
        if (req->len > 0)
            combine(req, req->recv, req->st[k].buf);
        req->phase++;
        req->sent = 0;
    }
    if (r < 2 * rem)
        send_all(req, r - 1, nlog + 1, req->recv, req->len);
    complete(req);
}

static void adv_exchange(gv_coll_req_t *req)
{
    int p = req->team->size, r = req->team->rank, i;

    if (req->phase == 0) {
        req->phase = 1;
        for (i = 1; i < p; i++) {
            int dst = (r + i) % p;

            if (req->slen[dst] > 0)
                send_all(req, dst, 0, req->send + req->soff[dst],
                         req->slen[dst]);
        }
        if (req->slen[r] > 0)
            memmove(req->recv + req->roff[r], req->send + req->soff[r],
                    req->slen[r]);
    }
    if (req->got == req->need)
        complete(req);
}

/* Run the request's state machine. A send inside it may progress, and so
 * deliver more messages of this request: that nested call only asks the
 * running one to look again (the running one may be sending from the
 * buffer the nested one would combine into). */
static void advance(gv_coll_req_t *req)
{
    if (req->done)
        return;
    if (req->busy) {
        req->again = 1;
        return;
    }
    req->busy = 1;
    do {
        req->again = 0;
        if (req->status != GV_OK)
            break;
        switch (req->kind) {
        case K_BARRIER:   adv_barrier(req);   break;
        case K_BCAST:     adv_bcast(req);     break;
        case K_REDUCE:    adv_reduce(req);    break;
        case K_ALLREDUCE: adv_allreduce(req); break;
        default:          adv_exchange(req);  break;
        }
    } while (req->again && !req->done);
    req->busy = 0;
    if ((req->status != GV_OK) && !req->done)
        complete(req);
}

static void mismatch(gv_coll_req_t *req, int src, const char *what)
{
    gv_error("collective %u of team %u (%d members): %s from team rank %d "
             "(collectives started in another order, or with other "
             "arguments?)", req->seq, req->team->id, req->team->size, what,
             src);
    fail(req, GV_ERR_PROTO);
    complete(req);
}

void gv__tcoll_deliver(gv_coll_req_t *req, int src, const coll_hdr_t *h,
                       const uint8_t *data, size_t n)
{
    step_t *s;

    if (req->done)
        return; /* failed already: the rest is dropped */
    if (h->kind != req->kind) {
        mismatch(req, src, "a message of another kind of collective");
        return;
    }
    if (req->kind == K_BCAST) {
        if (h->total != req->len) {
            mismatch(req, src, "a broadcast of another size");
            return;
        }
        bcast_piece(req, h, data, n);
        return;
    }
    if (req->kind >= K_ALLGATHER) {
        if ((h->total != req->rlen[src]) || (src == req->team->rank)) {
            mismatch(req, src, "a block of another size");
            return;
        }
        if (n > 0)
            memcpy(req->recv + req->roff[src] + h->off, data, n);
        req->got += n;
        advance(req);
        return;
    }
    if ((h->step >= NSTEPS) || (h->total != req->len)) {
        mismatch(req, src, "a step or size this collective does not have");
        return;
    }
    s = &req->st[h->step];
    if (s->full) {
        mismatch(req, src, "a second message for one step");
        return;
    }
    if ((s->buf == NULL) && (req->len > 0))
        s->buf = gv_malloc(req->len);
    if (n > 0)
        memcpy(s->buf + h->off, data, n);
    s->got += n;
    if (s->got == req->len)
        s->full = 1;
    advance(req);
}

gv_coll_req_t *gv__tcoll_find(gv_team_t *team, uint32_t seq)
{
    gv_coll_req_t *req;

    for (req = team->active; req != NULL; req = req->next)
        if (req->seq == seq)
            return req;
    return NULL;
}

/* ---- start, test, wait ------------------------------------------------- */

static gv_status_t check_team(gv_team_t *team, gv_coll_req_t **req_p,
                              const char *fn)
{
    if (req_p != NULL)
        *req_p = NULL;
    if ((team == NULL) || (req_p == NULL)) {
        gv_error("%s: NULL %s", fn, (team == NULL) ? "team" : "req_p");
        return GV_ERR_INVALID;
    }
    if (gv_team_world() == NULL) {
        gv_error("%s outside gv_init() .. gv_finalize()", fn);
        return GV_ERR_STATE;
    }
    return GV_OK;
}

static gv_coll_req_t *req_new(gv_team_t *team, uint8_t kind)
{
    gv_coll_req_t *req = gv_calloc(1, sizeof(*req));

    req->team = team;
    req->kind = kind;
    return req;
}

/* Number it, make it findable, give it what came early, and run it. */
static gv_status_t start(gv_coll_req_t *req, gv_coll_req_t **req_p)
{
    gv_team_t *t = req->team;

    req->seq  = t->seq++;
    req->next = t->active;
    t->active = req;
    t->nlive++;
    req->started = 1;
    gv__team_replay(req, t->id, req->seq);
    advance(req);
    *req_p = req;
    return GV_OK;
}

static void req_free(gv_coll_req_t *req)
{
    int i;

    for (i = 0; i < NSTEPS; i++)
        gv_free(req->st[i].buf);
    gv_free(req->slen);
    gv_free(req->acc_own);
    if (req->started)
        req->team->nlive--;
    gv_free(req);
}

int gv_coll_done(const gv_coll_req_t *req)
{
    return (req == NULL) || req->done;
}

gv_status_t gv_coll_test(gv_coll_req_t **req_p)
{
    gv_status_t status;

    if ((req_p == NULL) || (*req_p == NULL))
        return GV_OK;
    if (!(*req_p)->done)
        gv_progress();
    if (!(*req_p)->done)
        return GV_INPROGRESS;
    status = (*req_p)->status;
    req_free(*req_p);
    *req_p = NULL;
    return status;
}

gv_status_t gv_coll_wait(gv_coll_req_t **req_p)
{
    gv_waiter_t w;
    gv_status_t status;

    if ((req_p == NULL) || (*req_p == NULL))
        return GV_OK;
    gv__wait_begin(&w);
    while (!(*req_p)->done)
        gv__wait_poll(&w);
    status = (*req_p)->status;
    req_free(*req_p);
    *req_p = NULL;
    return status;
}

/* The blocking form: the start's status, then the wait's. */
static gv_status_t finish(gv_status_t status, gv_coll_req_t **req_p)
{
    return (status == GV_OK) ? gv_coll_wait(req_p) : status;
}

gv_status_t gv_team_ibarrier(gv_team_t *team, gv_coll_req_t **req_p)
{
    gv_status_t status = check_team(team, req_p, "gv_team_ibarrier");

    if (status != GV_OK)
        return status;
    return start(req_new(team, K_BARRIER), req_p);
}

gv_status_t gv_team_barrier(gv_team_t *team)
{
    gv_coll_req_t *req;

    return finish(gv_team_ibarrier(team, &req), &req);
}

gv_status_t gv_team_ibcast(gv_team_t *team, int root, void *buf, size_t len,
                           gv_coll_req_t **req_p)
{
    gv_status_t    status = check_team(team, req_p, "gv_team_ibcast");
    gv_coll_req_t *req;

    if (status != GV_OK)
        return status;
    if ((root < 0) || (root >= team->size) || ((buf == NULL) && (len > 0))) {
        gv_error("gv_team_ibcast: root %d of a team of %d, %zu bytes at %p",
                 root, team->size, len, buf);
        return GV_ERR_INVALID;
    }
    req       = req_new(team, K_BCAST);
    req->root = root;
    req->recv = buf;
    req->len  = len;
    return start(req, req_p);
}

gv_status_t gv_team_bcast(gv_team_t *team, int root, void *buf, size_t len)
{
    gv_coll_req_t *req;

    return finish(gv_team_ibcast(team, root, buf, len, &req), &req);
}

static gv_status_t check_reduce(gv_team_t *team, const void *send,
                                void *recv, size_t count, size_t esize,
                                int need_recv, const char *fn)
{
    if (((send == NULL) || (need_recv && (recv == NULL))) && (count > 0)) {
        gv_error("%s: NULL buffer", fn);
        return GV_ERR_INVALID;
    }
    if ((esize == 0) || (count > SIZE_MAX / esize / 2)) {
        gv_error("%s: %zu elements of %zu bytes", fn, count, esize);
        return GV_ERR_INVALID;
    }
    (void)team;
    return GV_OK;
}

static int bad_op(gv_dtype_t type, gv_redop_t op, const char *fn)
{
    if (((unsigned)type > GV_DOUBLE) || ((unsigned)op > GV_MAX)) {
        gv_error("%s: type %d / op %d (GV_INT64, GV_UINT64, GV_DOUBLE; "
                 "GV_SUM, GV_MIN, GV_MAX)", fn, (int)type, (int)op);
        return 1;
    }
    return 0;
}

gv_status_t gv_team_ireduce(gv_team_t *team, int root, const void *send,
                            void *recv, size_t count, gv_dtype_t type,
                            gv_redop_t op, gv_coll_req_t **req_p)
{
    gv_status_t    status = check_team(team, req_p, "gv_team_ireduce");
    gv_coll_req_t *req;

    if (status != GV_OK)
        return status;
    if ((root < 0) || (root >= team->size)) {
        gv_error("gv_team_ireduce: root %d of a team of %d", root,
                 team->size);
        return GV_ERR_INVALID;
    }
    if (bad_op(type, op, "gv_team_ireduce"))
        return GV_ERR_INVALID;
    status = check_reduce(team, send, recv, count, 8, team->rank == root,
                          "gv_team_ireduce");
    if (status != GV_OK)
        return status;
    req        = req_new(team, K_REDUCE);
    req->root  = root;
    req->count = count;
    req->esize = 8;
    req->len   = count * 8;
    req->type  = type;
    req->op    = op;
    if (team->rank == root) {
        req->acc = recv;
    } else {
        req->acc_own = gv_malloc(req->len ? req->len : 1);
        req->acc     = req->acc_own;
    }
    if ((req->acc != send) && (req->len > 0))
        memcpy(req->acc, send, req->len);
    return start(req, req_p);
}

gv_status_t gv_team_reduce(gv_team_t *team, int root, const void *send,
                           void *recv, size_t count, gv_dtype_t type,
                           gv_redop_t op)
{
    gv_coll_req_t *req;

    return finish(gv_team_ireduce(team, root, send, recv, count, type, op,
                                  &req), &req);
}

static gv_status_t iallreduce(gv_team_t *team, const void *send, void *recv,
                              size_t count, size_t esize, gv_dtype_t type,
                              gv_redop_t op, gv_reduce_fn_t fn, void *arg,
                              gv_coll_req_t **req_p, const char *name)
{
    gv_status_t    status = check_team(team, req_p, name);
    gv_coll_req_t *req;

    if (status != GV_OK)
        return status;
    status = check_reduce(team, send, recv, count, esize, 1, name);
    if (status != GV_OK)
        return status;
    req         = req_new(team, K_ALLREDUCE);
    req->count  = count;
    req->esize  = esize;
    req->len    = count * esize;
    req->type   = type;
    req->op     = op;
    req->fn     = fn;
    req->fn_arg = arg;
    req->recv   = recv;
    if ((recv != send) && (req->len > 0))
        memcpy(recv, send, req->len);
    return start(req, req_p);
}

gv_status_t gv_team_iallreduce(gv_team_t *team, const void *send, void *recv,
                               size_t count, gv_dtype_t type, gv_redop_t op,
                               gv_coll_req_t **req_p)
{
    if (bad_op(type, op, "gv_team_iallreduce")) {
        if (req_p != NULL)
            *req_p = NULL;
        return GV_ERR_INVALID;
    }
    return iallreduce(team, send, recv, count, 8, type, op, NULL, NULL,
                      req_p, "gv_team_iallreduce");
}

gv_status_t gv_team_allreduce(gv_team_t *team, const void *send, void *recv,
                              size_t count, gv_dtype_t type, gv_redop_t op)
{
    gv_coll_req_t *req;

    return finish(gv_team_iallreduce(team, send, recv, count, type, op,
                                     &req), &req);
}

gv_status_t gv_team_iallreduce_fn(gv_team_t *team, const void *send,
                                  void *recv, size_t count, size_t elem_size,
                                  gv_reduce_fn_t fn, void *arg,
                                  gv_coll_req_t **req_p)
{
    if (fn == NULL) {
        gv_error("gv_team_iallreduce_fn: NULL function");
        if (req_p != NULL)
            *req_p = NULL;
        return GV_ERR_INVALID;
    }
    return iallreduce(team, send, recv, count, elem_size, GV_INT64, GV_SUM,
                      fn, arg, req_p, "gv_team_iallreduce_fn");
}

gv_status_t gv_team_allreduce_fn(gv_team_t *team, const void *send,
                                 void *recv, size_t count, size_t elem_size,
                                 gv_reduce_fn_t fn, void *arg)
{
    gv_coll_req_t *req;

    return finish(gv_team_iallreduce_fn(team, send, recv, count, elem_size,
                                        fn, arg, &req), &req);
}

/* The exchanges: per-member lengths and offsets, then direct sends. */
static gv_status_t exchange(gv_team_t *team, uint8_t kind, const void *send,
                            void *recv, const size_t *slen,
                            const size_t *soff, const size_t *rlen,
                            const size_t *roff, size_t len,
                            gv_coll_req_t **req_p, const char *name)
{
    gv_status_t    status = check_team(team, req_p, name);
    gv_coll_req_t *req;
    size_t         p;
    int            i;

    if (status != GV_OK)
        return status;
    p = (size_t)team->size;
    if ((kind == K_ALLTOALLV) &&
        ((slen == NULL) || (soff == NULL) || (rlen == NULL) ||
         (roff == NULL))) {
        gv_error("%s: NULL length or offset array", name);
        return GV_ERR_INVALID;
    }
    req       = req_new(team, kind);
    req->slen = gv_malloc(4 * p * sizeof(size_t));
    req->soff = req->slen + p;
    req->rlen = req->soff + p;
    req->roff = req->rlen + p;
    for (i = 0; i < team->size; i++) {
        if (kind == K_ALLTOALLV) {
            req->slen[i] = slen[i];
            req->soff[i] = soff[i];
            req->rlen[i] = rlen[i];
            req->roff[i] = roff[i];
        } else {
            req->slen[i] = len;
            req->soff[i] = (kind == K_ALLGATHER) ? 0 : (size_t)i * len;
            req->rlen[i] = len;
            req->roff[i] = (size_t)i * len;
        }
        if (((req->slen[i] > 0) && (send == NULL)) ||
            ((req->rlen[i] > 0) && (recv == NULL))) {
            gv_error("%s: NULL buffer with bytes to move", name);
            req_free(req);
            return GV_ERR_INVALID;
        }
        if (i != team->rank)
            req->need += req->rlen[i];
    }
    if (req->slen[team->rank] != req->rlen[team->rank]) {
        gv_error("%s: %zu bytes to self but %zu expected from self", name,
                 req->slen[team->rank], req->rlen[team->rank]);
        req_free(req);
        return GV_ERR_INVALID;
    }
    req->send = send;
    req->recv = recv;
    return start(req, req_p);
}

gv_status_t gv_team_iallgather(gv_team_t *team, const void *send, void *recv,
                               size_t len, gv_coll_req_t **req_p)
{
    return exchange(team, K_ALLGATHER, send, recv, NULL, NULL, NULL, NULL,
                    len, req_p, "gv_team_iallgather");
}

gv_status_t gv_team_allgather(gv_team_t *team, const void *send, void *recv,
                              size_t len)
{
    gv_coll_req_t *req;

    return finish(gv_team_iallgather(team, send, recv, len, &req), &req);
}

gv_status_t gv_team_ialltoall(gv_team_t *team, const void *send, void *recv,
                              size_t len, gv_coll_req_t **req_p)
{
    return exchange(team, K_ALLTOALL, send, recv, NULL, NULL, NULL, NULL,
                    len, req_p, "gv_team_ialltoall");
}

gv_status_t gv_team_alltoall(gv_team_t *team, const void *send, void *recv,
                             size_t len)
{
    gv_coll_req_t *req;

    return finish(gv_team_ialltoall(team, send, recv, len, &req), &req);
}

gv_status_t gv_team_ialltoallv(gv_team_t *team, const void *send,
                               const size_t *send_lens,
                               const size_t *send_offs, void *recv,
                               const size_t *recv_lens,
                               const size_t *recv_offs,
                               gv_coll_req_t **req_p)
{
    return exchange(team, K_ALLTOALLV, send, recv, send_lens, send_offs,
                    recv_lens, recv_offs, 0, req_p, "gv_team_ialltoallv");
}

gv_status_t gv_team_alltoallv(gv_team_t *team, const void *send,
                              const size_t *send_lens,
                              const size_t *send_offs, void *recv,
                              const size_t *recv_lens,
                              const size_t *recv_offs)
{
    gv_coll_req_t *req;

    return finish(gv_team_ialltoallv(team, send, send_lens, send_offs, recv,
                                     recv_lens, recv_offs, &req), &req);
}

