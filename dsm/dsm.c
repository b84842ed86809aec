/* DSM layer setup, global address helpers, the table of requests waiting
 * for replies, and function pointers on the wire.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "dsm/dsm_internal.h"

#include <inttypes.h>
#include <stdio.h>

#define BAD_LOG_MAX 10 /* log this many bad addresses, then count only */

gv__dsm_geo_t  gv__geo;
gv_dsm_stats_t gv__dsm_st;
static unsigned bad_logged, rejects_logged;

/* ---- addresses ------------------------------------------------------------ */

int gv_gaddr_rank(gv_gaddr_t a)
{
    return gv__geo.up ? gv__ga_home(a) : -1;
}

void *gv_gaddr_local(gv_gaddr_t a)
{
    int      home;
    uint64_t off;
    int      kind;

    if (!gv__geo.up)
        return NULL;
    kind = gv__ga_decode(a, &home, &off);
    if ((kind < 0) || (home != gv__geo.rank))
        return NULL;
    if (kind == GV__GA_KIND_PTR)
        return (void *)(uintptr_t)off;
    return gv__geo.heap + off;
}

gv_gaddr_t gv_gaddr_on(gv_gaddr_t a, int rank)
{
    if ((gv__ga_kind(a) != GV__GA_KIND_HEAP) || (rank < 0) ||
        (rank >= gv__geo.size))
        return GV_GADDR_NULL;
    return gv__ga_heap(rank, a & ((1ull << GV__GA_HEAP_OFF_BITS) - 1));
}

char *gv_gaddr_str(gv_gaddr_t a, char *buf, size_t len)
{
    switch (gv__ga_kind(a)) {
    case GV__GA_KIND_LIN:
        snprintf(buf, len, "lin:%#" PRIx64, (uint64_t)(a & GV__GA_OFF_MASK));
        break;
    case GV__GA_KIND_HEAP:
        snprintf(buf, len, "heap:%d:%#" PRIx64,
                 (int)((a >> GV__GA_HEAP_OFF_BITS) & GV__GA_HEAP_RANK_MAX),
                 (uint64_t)(a & ((1ull << GV__GA_HEAP_OFF_BITS) - 1)));
        break;
    default:
        snprintf(buf, len, "ptr:%d:%#" PRIx64, (int)(a >> GV__GA_PTR_BITS),
                 (uint64_t)(a & ((1ull << GV__GA_PTR_BITS) - 1)));
    }
    return buf;
}

size_t gv_global_block_size(void)
{
    return (size_t)gv__geo.bsize;
}

void gv__dsm_bad_addr(const char *what, gv_gaddr_t a, size_t len, int src)
{
    char s[64];

    gv__dsm_st.bad_addr++;
    if (bad_logged++ >= BAD_LOG_MAX)
        return;
    gv_error("%s: address %#" PRIx64 " (%s), %zu bytes, is outside any "
             "allocation of the global heap%s (requested by rank %d)", what,
             a, gv_gaddr_str(a, s, sizeof(s)), len,
             (gv__ga_kind(a) == GV__GA_KIND_PTR) ? " and any export" : "",
             src);
    if (bad_logged == BAD_LOG_MAX)
        gv_error("further bad addresses are counted, not logged");
}

void gv__dsm_reject(int src, const char *why)
{
    gv__dsm_st.rejected++;
    if (rejects_logged++ < BAD_LOG_MAX)
        gv_warn("dropped a dsm message from rank %d: %s", src, why);
}

void gv_dsm_stats(gv_dsm_stats_t *stats_p)
{
    *stats_p = gv__dsm_st;
}

/* ---- requests ------------------------------------------------------------ */

static gv__dreq_t **reqs;     /* stable objects, table may grow */
static uint32_t    *req_free; /* stack of free indices */
static uint32_t     nreqs, nfree;

uint64_t gv__dreq_new(int pending, void *buf, size_t cap, gv__dreq_t **r_p)
{
    gv__dreq_t *r;
    uint32_t    i;

    if (nfree == 0) {
        uint32_t n = (nreqs == 0) ? 256 : nreqs * 2, k;
        reqs     = gv_realloc(reqs, n * sizeof(*reqs));
        req_free = gv_realloc(req_free, n * sizeof(*req_free));
        for (k = nreqs; k < n; k++) {
            reqs[k]          = gv_calloc(1, sizeof(gv__dreq_t));
            req_free[nfree++] = n - 1 - (k - nreqs);
        }
        nreqs = n;
    }
    i          = req_free[--nfree];
    r          = reqs[i];
    r->gen++;
    r->busy    = 1;
    r->pending = pending;
    r->status  = GV_OK;
    r->waiter  = NULL;
    r->buf     = buf;
    r->cap     = cap;
    r->len     = 0;
    r->fut     = NULL;
    r->aux[0]  = r->aux[1] = 0;
    *r_p       = r;
    return ((uint64_t)r->gen << 32) | i;
}

gv__dreq_t *gv__dreq_get(uint64_t token)
{
    uint32_t    i = (uint32_t)token;
    gv__dreq_t *r;

    if (i >= nreqs)
        return NULL;
    r = reqs[i];
    if (!r->busy || (r->gen != (uint32_t)(token >> 32)))
        return NULL;
    return r;
}

void gv__dreq_free(uint64_t token)
{
    gv__dreq_t *r = gv__dreq_get(token);

    if (r == NULL)
        return;
    r->busy            = 0;
    req_free[nfree++] = (uint32_t)token;
}

void gv__dreq_reply(uint64_t token, gv_status_t status, const void *data,
                    size_t len, int src)
{
    gv__dreq_t *r = gv__dreq_get(token);

    if ((r == NULL) || (r->pending <= 0)) {
        gv__dsm_reject(src, "reply to no request of this rank");
        return;
    }
    if (r->fut != NULL) {
        /* Asynchronous: one reply, and the future takes the outcome (it
         * copies the data into its own buffer). */
        gv_future_t *f = r->fut;
        gv__dreq_free(token);
        gv_future_fulfil(f, status, data, len);
        return;
    }
    if ((status != GV_OK) && (r->status == GV_OK))
        r->status = status;
    if ((data != NULL) && (len > 0) && (r->buf != NULL)) {
        memcpy(r->buf, data, (len < r->cap) ? len : r->cap);
        r->len = len;
    }
    if (--r->pending > 0)
        return;
    if (r->waiter != NULL) {
        gv_worker_t *w = r->waiter;
        r->waiter      = NULL;
        gv_task_wake(w);
    }
}

static int dreq_done(void *arg)
{
    return ((gv__dreq_t *)arg)->pending <= 0;
}

gv_status_t gv__dreq_wait(uint64_t token, size_t *len_p)
{
    gv__dreq_t  *r    = gv__dreq_get(token);
    gv_worker_t *self = gv_task_self();
    gv_status_t  status;

    if (r == NULL)
        gv_fatal("waiting on a request that does not exist");
    /* Adds this rank packed go out before it waits: the reply may depend
     * on them. The aggregator ships its buffers when the rank goes idle. */
    gv__delegate_flush_adds();
    if (self != NULL) {
        /* The waiter is set only right before parking, so that every wake
         * matches exactly one suspend. */
        while (r->pending > 0) {
            r->waiter = self;
            gv_task_suspend();
        }
    } else {
        gv_wait(dreq_done, r);
    }
    status = r->status;
    if (len_p != NULL)
        *len_p = r->len;
    gv__dreq_free(token);
    return status;
}


/* ---- setup ---------------------------------------------------------------- */

void gv__dsm_init(void)
{
    uint64_t bsize = gv__env.BLOCK;
    int      p;

    if (gv__geo.up)
        return;
    memset(&gv__geo, 0, sizeof(gv__geo));
    memset(&gv__dsm_st, 0, sizeof(gv__dsm_st));
    bad_logged = rejects_logged = 0;
    if (((bsize & (bsize - 1)) != 0) || (bsize < 8))
        gv_fatal("GV_BLOCK %llu is not a power of two of at least 8 bytes",
                 (unsigned long long)bsize);
    gv__geo.rank  = gv__ctx.rank;
    gv__geo.size  = gv__ctx.size;
    gv__geo.bsize = bsize;
    gv__geo.bmask = bsize - 1;
    gv__geo.bshift = (unsigned)__builtin_ctzll(bsize);
    gv__geo.pshift = -1;
    for (p = 0; p < 31; p++)
        if ((1 << p) == gv__geo.size)
            gv__geo.pshift = p;
    if (gv__geo.size > GV__GA_PTR_RANK_MAX)
        gv_warn("%d ranks: 2D pointer addresses (gv_export) reach only ranks "
                "below %d", gv__geo.size, GV__GA_PTR_RANK_MAX + 1);
    gv__geo.heap     = gv_sym_ptr(0);
    gv__geo.heap_len = gv_sym_heap_size();
    if ((gv__geo.heap == NULL) ||
        (gv__geo.heap_len > (1ull << GV__GA_HEAP_OFF_BITS)))
        gv_fatal("the symmetric heap (GV_HEAP, %llu bytes) is missing or "
                 "larger than 2^%d bytes", (unsigned long long)gv__geo.heap_len,
                 GV__GA_HEAP_OFF_BITS);
    gv__geo.top     = gv__geo.heap_len & ~gv__geo.bmask;
    gv__geo.nlocal  = gv__geo.top >> gv__geo.bshift;
    gv__geo.nglobal = gv__geo.nlocal * (uint64_t)gv__geo.size;
    /* Handlers: the same order on every rank. */
    gv__heap_init();
    gv__gce_init();
    gv__delegate_init();
    gv__coll_init();
    gv__loop_init();
    gv__geo.up = 1;
}

void gv__dsm_fini(void)
{
    uint32_t i;

    if (!gv__geo.up)
        return;
    gv__delegate_fini();
    gv__coll_fini();
    gv__gce_fini();
    gv__heap_fini();
    for (i = 0; i < nreqs; i++)
        gv_free(reqs[i]);
    gv_free(reqs);
    gv_free(req_free);
    reqs     = NULL;
    req_free = NULL;
    nreqs = nfree = 0;
    gv__geo.up = 0;
}
