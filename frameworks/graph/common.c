/* Distributed graphs, the common part: edge lists of one rank, errors that
 * every rank agrees on, the bulk all-to-all exchange of records that the
 * builder uses, and the bijections behind the generator's permutations and
 * hashed placement. SPDX-License-Identifier: BSD-3-Clause */
#include "graph/graph_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char errmsg[512];

const char *gv_graph_errmsg(void)
{
    return errmsg;
}

/* ------------------------------------------------------------------------ */
/* Errors agreed over ranks                                                  */

void gv__gerr_init(gv__gerr_t *e)
{
    e->key    = INT64_MAX;
    e->status = GV_OK;
    e->msg[0] = '\0';
}

void gv__gerr_set(gv__gerr_t *e, int64_t key, gv_status_t status,
                  const char *fmt, ...)
{
    va_list ap;

    if (key >= e->key)
        return;
    e->key    = key;
    e->status = status;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
}

gv_status_t gv__gerr_agree(gv__gerr_t *e)
{
    struct {
        int64_t status;
        char    msg[512];
    } out;
    int64_t     kmin = e->key, root;
    gv_status_t status;

    status = gv_allreduce(&kmin, 1, GV_INT64, GV_MIN);
    if (status != GV_OK)
        return status;
    if (kmin == INT64_MAX)
        return GV_OK;
    root   = (e->key == kmin) ? gv_rank() : gv_nranks();
    status = gv_allreduce(&root, 1, GV_INT64, GV_MIN);
    if (status != GV_OK)
        return status;
    memset(&out, 0, sizeof(out));
    if (root == gv_rank()) {
        out.status = e->status;
        memcpy(out.msg, e->msg, sizeof(out.msg));
    }
    status = gv_broadcast((int)root, &out, sizeof(out));
    if (status != GV_OK)
        return status;
    out.msg[sizeof(out.msg) - 1] = '\0';
    memcpy(errmsg, out.msg, sizeof(errmsg));
    if (gv_rank() == 0)
        fprintf(stderr, "[%04d] ERROR graph: %s\n", gv_rank(), errmsg);
    return (gv_status_t)out.status;
}

/* ------------------------------------------------------------------------ */
/* Edge lists of one rank                                                    */

void gv_edgelist_init(gv_edgelist_t *el, int64_t nverts, int weighted)
{
    memset(el, 0, sizeof(*el));
    el->nverts   = nverts;
    el->weighted = (weighted != 0);
}

gv_status_t gv_edgelist_push(gv_edgelist_t *el, int64_t src, int64_t dst,
                             float w)
{
    if (el->n == el->cap) {
        int64_t  cap = (el->cap < 64) ? 64 : 2 * el->cap;
        int64_t *s   = realloc(el->src, (size_t)cap * sizeof(int64_t));
        int64_t *d;
        float   *ww;

        if (s == NULL)
            return GV_ERR_NO_MEMORY;
        el->src = s;
        d       = realloc(el->dst, (size_t)cap * sizeof(int64_t));
        if (d == NULL)
            return GV_ERR_NO_MEMORY;
        el->dst = d;
        if (el->weighted) {
            ww = realloc(el->w, (size_t)cap * sizeof(float));
            if (ww == NULL)
                return GV_ERR_NO_MEMORY;
            el->w = ww;
        }
        el->cap = cap;
    }
    el->src[el->n] = src;
    el->dst[el->n] = dst;
    if (el->weighted)
        el->w[el->n] = w;
    el->n++;
    return GV_OK;
}

void gv_edgelist_free(gv_edgelist_t *el)
{
    int weighted = el->weighted;

    free(el->src);
    free(el->dst);
    free(el->w);
    gv_edgelist_init(el, GV_GRAPH_NVERTS_AUTO, weighted);
}

gv_status_t gv__graph_allgather64(int64_t mine, int64_t *all)
{
    int P = gv_nranks();

    memset(all, 0, (size_t)P * sizeof(int64_t));
    all[gv_rank()] = mine;
    return gv_allreduce(all, (size_t)P, GV_INT64, GV_SUM);
}

gv_status_t gv_edgelist_sync(gv_edgelist_t *el)
{
    int         P = gv_nranks(), me = gv_rank();
    int64_t    *counts, v[4], i, maxid = -1, first = 0;
    gv__gerr_t  err;
    gv_status_t status;

    gv__gerr_init(&err);
    counts = malloc((size_t)P * sizeof(int64_t));
    if (counts == NULL)
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY,
                     "edge list: no memory for %d counts", P);
    else if (gv__graph_allgather64(el->n, counts) != GV_OK)
        gv__gerr_set(&err, -1, GV_ERR_INVALID, "edge list: allgather failed");
    status = gv__gerr_agree(&err);
    if (status != GV_OK) {
        free(counts);
        return status;
    }
    el->total = 0;
    for (i = 0; i < P; i++) {
        if (i == me)
            first = el->total;
        el->total += counts[i];
    }
    el->first = first;
    free(counts);

    /* Every rank the same nverts and weightedness. */
    v[0] = el->nverts;
    v[1] = -el->nverts;
    v[2] = el->weighted;
    v[3] = -(int64_t)el->weighted;
    status = gv_allreduce(v, 4, GV_INT64, GV_MIN);
    if (status != GV_OK)
        return status;
    if ((v[0] != -v[1]) || (v[2] != -v[3]))
        gv__gerr_set(&err, 0, GV_ERR_INVALID,
                     "edge list: ranks disagree on the %s (%" PRId64
                     " .. %" PRId64 ")", (v[0] != -v[1]) ? "vertex count" :
                     "presence of weights", (v[0] != -v[1]) ? v[0] : v[2],
                     (v[0] != -v[1]) ? -v[1] : -v[3]);
    else if ((el->nverts < 0) && (el->nverts != GV_GRAPH_NVERTS_AUTO))
        gv__gerr_set(&err, 0, GV_ERR_INVALID,
                     "edge list: vertex count %" PRId64 " (expected >= 0, "
                     "or GV_GRAPH_NVERTS_AUTO)", el->nverts);
    else {
        for (i = 0; i < el->n; i++) {
            int64_t s = el->src[i], d = el->dst[i];
            int64_t bad = (s < 0) ? s : (d < 0) ? d : -1;

            if ((bad < 0) && (el->nverts >= 0))
                bad = (s >= el->nverts) ? s : (d >= el->nverts) ? d : -1;
            if (bad != -1) {
                gv__gerr_set(&err, first + i, GV_ERR_INVALID,
                             "edge list: edge %" PRId64 " (%" PRId64
                             " -> %" PRId64 "): vertex id %" PRId64
                             " outside 0..%" PRId64, first + i, s, d, bad,
                             (el->nverts >= 0) ? el->nverts - 1 : INT64_MAX);
                break;
            }
            if (s > maxid)
                maxid = s;
            if (d > maxid)
                maxid = d;
        }
    }
    status = gv__gerr_agree(&err);
    if (status != GV_OK)
        return status;
    if (el->nverts == GV_GRAPH_NVERTS_AUTO) {
        status = gv_allreduce(&maxid, 1, GV_INT64, GV_MAX);
        if (status != GV_OK)
            return status;
        el->nverts = maxid + 1;
    }
    return GV_OK;
}

/* ------------------------------------------------------------------------ */
/* Bulk all-to-all                                                           */

/* What arrived for one exchange. Two slots by the parity of the exchange's
 * number: a rank may be one exchange ahead of another (it left the
 * closing barrier first), never two. */
typedef struct {
    uint8_t *buf;
    size_t   len, cap, rec;
    int      nomem, bad;
} a2a_slot_t;

static struct {
    int        registered;
    uint32_t   epoch;
    gv_am_id_t id[2];
    a2a_slot_t slot[2];
} A;

static void a2a_cb(int src, const void *payload, size_t len, void *arg)
{
    a2a_slot_t *s = arg;

    (void)src;
    if (s->nomem)
        return;
    if (s->len + len > s->cap) {
        size_t   cap = (s->cap < 65536) ? 65536 : s->cap;
        uint8_t *b;

        while (cap < s->len + len)
            cap *= 2;
        b = realloc(s->buf, cap);
        if (b == NULL) {
            s->nomem = 1;
            return;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, payload, len);
    s->len += len;
}

gv_status_t gv__graph_alltoallv(const void *send, const int64_t *counts,
                                size_t rec, void **recv_p, int64_t *nrecv_p)
{
    int          P = gv_nranks(), me = gv_rank(), r;
    const uint8_t *p = send;
    size_t       chunk, off;
    a2a_slot_t  *s;
    gv_am_id_t   id;
    gv_status_t  status = GV_OK;
    gv__gerr_t   err;

    if (!A.registered) {
        if ((gv_am_register(a2a_cb, &A.slot[0], &A.id[0]) != GV_OK) ||
            (gv_am_register(a2a_cb, &A.slot[1], &A.id[1]) != GV_OK))
            gv_abort(1, "graph: cannot register the exchange handlers");
        A.registered = 1;
        gv_barrier();
    }
    s   = &A.slot[A.epoch & 1];
    id  = A.id[A.epoch & 1];
    A.epoch++;
    chunk = gv_am_max_payload();
    if (chunk > ((size_t)256 << 10))
        chunk = (size_t)256 << 10;
    chunk -= chunk % rec;

    for (r = 0; r < P; r++) {
        size_t bytes = (size_t)counts[r] * rec;

        if (r == me) {
            a2a_cb(me, p, bytes, s);
        } else {
            for (off = 0; (off < bytes) && (status == GV_OK); off += chunk) {
                size_t n = (bytes - off < chunk) ? bytes - off : chunk;

                status = gv_am_send_nbi(r, id, p + off, n);
            }
        }
        p += bytes;
    }
    gv_am_wait_local();
    gv_barrier();
    /* Nothing yields between the barrier and here: take the slot now. */
    *recv_p  = s->buf;
    *nrecv_p = (int64_t)(s->len / rec);
    gv__gerr_init(&err);
    if (status != GV_OK)
        gv__gerr_set(&err, -1, status, "graph: sending edges: %s",
                     gv_status_str(status));
    else if (s->nomem)
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY,
                     "graph: rank %d: no memory for %zu bytes of received "
                     "edges", me, s->len);
    memset(s, 0, sizeof(*s));
    status = gv__gerr_agree(&err);
    if (status != GV_OK) {
        free(*recv_p);
        *recv_p = NULL;
    }
    return status;
}

/* ------------------------------------------------------------------------ */
/* Bijections                                                                */

#define PERM_MUL 0x9e3779b97f4a7c15ull
#define PERM_ROUNDS 3

int gv__graph_bits(int64_t n)
{
    int k = 0;

    while ((k < 63) && (((int64_t)1 << k) < n))
        k++;
    return k;
}

/* The round keys of GV__GRAPH_HASH_KEY, as gv__perm_init computes them. */
static const uint64_t hash_rk[PERM_ROUNDS] = {
    0x492b8d6066c09227ull, 0xf6da127e16691aa9ull, 0xe4e9b199745fddccull};

void gv__perm_init(gv__perm_t *p, int64_t n, uint64_t key)
{
    int r;

    p->n    = n;
    p->bits = gv__graph_bits(n);
    for (r = 0; r < PERM_ROUNDS; r++)
        p->rk[r] = gv__graph_mix64(key + (uint64_t)r * 0x632be59bd9b4e019ull);
}

/* One bijection of 0..2^k-1: per round, xor a key, multiply by an odd
 * number, xorshift by s >= k/2 (which is then its own inverse). */
static inline uint64_t fwd(uint64_t x, int k, const uint64_t *rk)
{
    uint64_t mask = (1ull << k) - 1;
    int      s = (k + 1) / 2, r;

    for (r = 0; r < PERM_ROUNDS; r++) {
        x ^= rk[r] & mask;
        x  = (x * PERM_MUL) & mask;
        x ^= x >> s;
    }
    return x;
}

static uint64_t inv_mul(void)
{
    uint64_t inv = PERM_MUL;
    int      i;

    for (i = 0; i < 6; i++)
        inv *= 2 - PERM_MUL * inv;
    return inv;
}

static uint64_t bwd(uint64_t x, int k, const uint64_t *rk)
{
    uint64_t mask = (1ull << k) - 1, im = inv_mul();
    int      s = (k + 1) / 2, r;

    for (r = PERM_ROUNDS - 1; r >= 0; r--) {
        x ^= x >> s;
        x  = (x * im) & mask;
        x ^= rk[r] & mask;
    }
    return x;
}

/* Cycle-walking: apply the bijection of 0..2^bits-1 until the value falls
 * in 0..n-1 (at most a few times: 2^bits < 2n). */
static inline int64_t walk_fwd(int64_t v, int64_t n, int bits,
                               const uint64_t *rk)
{
    uint64_t x = (uint64_t)v;

    if (n <= 1)
        return v;
    do
        x = fwd(x, bits, rk);
    while (x >= (uint64_t)n);
    return (int64_t)x;
}

int64_t gv__perm_fwd(const gv__perm_t *p, int64_t v)
{
    return walk_fwd(v, p->n, p->bits, p->rk);
}

int64_t gv__perm_bwd(const gv__perm_t *p, int64_t v)
{
    uint64_t x = (uint64_t)v;

    if (p->n <= 1)
        return v;
    do
        x = bwd(x, p->bits, p->rk);
    while (x >= (uint64_t)p->n);
    return (int64_t)x;
}

int64_t gv__graph_perm(int64_t v, int64_t nverts, int bits)
{
    return walk_fwd(v, nverts, bits, hash_rk);
}
