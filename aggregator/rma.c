/* One-sided operations on the symmetric heap (include/grapevine/rma.h):
 * argument checks, the deterministic symmetric allocator, and blocking
 * forms, over the transport's native put/get/atomics. Never substitutes
 * active messages for a missing capability: that is an error.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "aggregator/am_internal.h"
#include "aggregator/rma_internal.h"
#include <grapevine/rma.h>

/* One rank's part of a flush to every rank. */
typedef struct {
    gv_req_t    req; /* first: the transport calls back with &req */
    int         rank;
    gv_status_t status;
    int        *left; /* the flush's count of parts not yet completed */
} flush_req_t;

static struct {
    gv_tl_t     *tl;
    uint8_t     *heap;
    size_t       len;
    size_t       brk;      /* next free byte of the bump allocator */
    /* Ranks with operations issued since a flush covered them: a flush to
     * every rank flushes each of them, so that the AM watchdog can name
     * the one that never completes (a whole flush does not say which). */
    uint8_t     *pending;
    int         *plist;
    int          npending;
    int          flushing; /* flushes waiting: their ranks left the set */
} rma;

void gv__rma_start(gv_tl_t *tl, void *heap, size_t len)
{
    rma.tl       = tl;
    rma.heap     = heap;
    rma.len      = len;
    rma.brk      = 0;
    rma.pending  = gv_calloc((size_t)tl->size, 1);
    rma.plist    = gv_calloc((size_t)tl->size, sizeof(int));
    rma.npending = 0;
    rma.flushing = 0;
}

void gv__rma_fini(void)
{
    rma.tl = NULL;
    gv_free(rma.pending);
    gv_free(rma.plist);
    rma.pending  = NULL;
    rma.plist    = NULL;
    rma.npending = 0;
}

static inline void pending_mark(int rank)
{
    if (!rma.pending[rank]) {
        rma.pending[rank]            = 1;
        rma.plist[rma.npending++] = rank;
    }
}

/* Empty the set (its ranks are about to be flushed). */
static void pending_clear_all(void)
{
    while (rma.npending > 0)
        rma.pending[rma.plist[--rma.npending]] = 0;
}

static void pending_clear(int rank)
{
    int i;

    if (!rma.pending[rank])
        return;
    rma.pending[rank] = 0;
    for (i = 0; i < rma.npending; i++) {
        if (rma.plist[i] == rank) {
            rma.plist[i] = rma.plist[--rma.npending];
            break;
        }
    }
}

gv_status_t gv_sym_alloc(size_t len, size_t align, uint64_t *off_p)
{
    size_t off;

    if ((align == 0) || ((align & (align - 1)) != 0)) {
        gv_error("alignment %zu is not a power of two", align);
        return GV_ERR_INVALID;
    }
    off = (rma.brk + align - 1) & ~(align - 1);
    if ((off < rma.brk) || (off > rma.len) || (len > rma.len - off)) {
        gv_error("%zu bytes do not fit in the symmetric heap "
                 "(%zu of %zu bytes used); raise GV_HEAP", len, rma.brk,
                 rma.len);
        return GV_ERR_NO_MEMORY;
    }
    rma.brk = off + len;
    *off_p  = off;
    return GV_OK;
}

void *gv_sym_ptr(uint64_t off)
{
    return (off < rma.len) ? rma.heap + off : NULL;
}

size_t gv_sym_heap_size(void)
{
    return rma.len;
}

int gv_rma_has_atomics(void)
{
    return (rma.tl != NULL) && (rma.tl->attr.caps & GV_TL_CAP_ATOMIC64);
}

int gv_rma_has_put_get(void)
{
    return (rma.tl != NULL) && (rma.tl->attr.caps & GV_TL_CAP_RMA);
}

static gv_status_t check(uint32_t cap, const char *what, int rank,
                         uint64_t off, size_t len, size_t align)
{
    if (rma.tl == NULL) {
        gv_error("%s: the one-sided layer is not started (before gv_init, "
                 "or gv_init_opts without GV_LAYERS_HEAP)", what);
        return GV_ERR_STATE;
    }
    if (((unsigned)rank < (unsigned)rma.tl->size) && gv__is_failed(rank))
        return GV_ERR_UNREACHABLE;
    if (!(rma.tl->attr.caps & cap)) {
        gv_error("%s: transport %s (%s) has no native %s (see gvinfo -t); "
                 "use another GV_TRANSPORT, or active messages", what,
                 rma.tl->ops->name, rma.tl->attr.detail,
                 (cap == GV_TL_CAP_RMA) ? "put/get" : "remote atomics");
        return GV_ERR_UNSUPPORTED;
    }
    if ((rank < 0) || (rank >= rma.tl->size)) {
        gv_error("%s: rank %d is out of range (0..%d)", what, rank,
                 rma.tl->size - 1);
        return GV_ERR_INVALID;
    }
    if ((off > rma.len) || (len > rma.len - off)) {
        gv_error("%s: bytes %llu..%llu are outside the %zu-byte heap", what,
                 (unsigned long long)off, (unsigned long long)(off + len),
                 rma.len);
        return GV_ERR_INVALID;
    }
    if ((off & (align - 1)) != 0) {
        gv_error("%s: offset %llu is not %zu-byte aligned", what,
                 (unsigned long long)off, align);
        return GV_ERR_INVALID;
    }
    return GV_OK;
}

/* Wait for an operation that only @a rank's progress completes, owed to
 * it meanwhile (the AM layer's watchdog names a rank that never does). */
static gv_status_t wait_on(int rank, gv__wreq_t *r)
{
    gv_status_t status;

    gv__am_owe(rank, 1, 0);
    status = gv__wreq_wait(r);
    gv__am_owe(rank, -1, 1);
    return status;
}

static gv_status_t issued(gv_status_t status, int rank, const char *what)
{
    if ((status == GV_OK) || (status == GV_INPROGRESS))
        return GV_OK;
    if (status == GV_ERR_UNREACHABLE)
        gv__peer_failed(rank, "%s failed", what);
    gv_error("%s to rank %d failed: %s", what, rank, gv_status_str(status));
    return status;
}

/* issued() for an operation that returns before it completes: once the
 * transport has it (even in part, as mpi may), its rank has work that a
 * flush must cover. */
static gv_status_t op_issued(gv_status_t status, int rank, const char *what)
{
    if (status != GV_ERR_INVALID)
        pending_mark(rank);
    return issued(status, rank, what);
}

gv_status_t gv_amo64(gv_amo_op_t op, int rank, uint64_t off, uint64_t value,
                     uint64_t compare, uint64_t *result_p)
{
    gv_status_t status;
    gv_waiter_t w;

    status = check(GV_TL_CAP_ATOMIC64, "gv_amo64", rank, off, 8, 8);
    if (status != GV_OK)
        return status;
    if ((unsigned)op > GV_AMO_SWAP) {
        gv_error("unknown operation %d", (int)op);
        return GV_ERR_INVALID;
    }
    if ((result_p == NULL) && (op != GV_AMO_ADD)) {
        gv_error("a fetching operation needs a result pointer");
        return GV_ERR_INVALID;
    }
    gv__wait_begin_send(&w);
    gv__am_room(rank, 1);
    for (;;) {
        status = rma.tl->ops->atomic64(rma.tl, (gv_tl_amo_t)op, rank, off,
                                       value, compare, result_p, NULL);
        if (status != GV_ERR_NO_RESOURCE)
            break;
        gv__wait_poll(&w);
    }
    gv__am_room(rank, -1);
    return op_issued(status, rank, "remote atomic");
}

static gv_status_t amo_blocking(gv_amo_op_t op, int rank, uint64_t off,
                                uint64_t value, uint64_t compare,
                                uint64_t *old_p)
{
    gv__wreq_t  r;
    gv_status_t status;
    gv_waiter_t w;

    gv__wreq_init(&r);
    status = check(GV_TL_CAP_ATOMIC64, "remote atomic", rank, off, 8, 8);
    if (status != GV_OK)
        return status;
    gv__wait_begin_send(&w);
    gv__am_room(rank, 1);
    for (;;) {
        status = rma.tl->ops->atomic64(rma.tl, (gv_tl_amo_t)op, rank, off,
                                       value, compare, old_p, &r.req);
        if (status != GV_ERR_NO_RESOURCE)
            break;
        gv__wait_poll(&w);
    }
    gv__am_room(rank, -1);
    if (status == GV_INPROGRESS)
        status = wait_on(rank, &r);
    return issued(status, rank, "remote atomic");
}

gv_status_t gv_amo64_fetch_add(int rank, uint64_t off, uint64_t value,
                               uint64_t *old_p)
{
    return amo_blocking(GV_AMO_FADD, rank, off, value, 0, old_p);
}

gv_status_t gv_amo64_cswap(int rank, uint64_t off, uint64_t compare,
                           uint64_t value, uint64_t *old_p)
{
    return amo_blocking(GV_AMO_CSWAP, rank, off, value, compare, old_p);
}

gv_status_t gv_amo64_swap(int rank, uint64_t off, uint64_t value,
                          uint64_t *old_p)
{
    return amo_blocking(GV_AMO_SWAP, rank, off, value, 0, old_p);
}

gv_status_t gv_put(int rank, uint64_t off, const void *buf, size_t len)
{
    gv_status_t status = check(GV_TL_CAP_RMA, "gv_put", rank, off, len, 1);
    gv_waiter_t w;

    if (status != GV_OK)
        return status;
    gv__wait_begin_send(&w);
    gv__am_room(rank, 1);
    while ((status = rma.tl->ops->put(rma.tl, rank, off, buf, len, NULL)) ==
           GV_ERR_NO_RESOURCE)
        gv__wait_poll(&w);
    gv__am_room(rank, -1);
    return op_issued(status, rank, "put");
}

gv_status_t gv_get(int rank, uint64_t off, void *buf, size_t len)
{
    gv_status_t status = check(GV_TL_CAP_RMA, "gv_get", rank, off, len, 1);
    gv_waiter_t w;

    if (status != GV_OK)
        return status;
    gv__wait_begin_send(&w);
    gv__am_room(rank, 1);
    while ((status = rma.tl->ops->get(rma.tl, rank, off, buf, len, NULL)) ==
           GV_ERR_NO_RESOURCE)
        gv__wait_poll(&w);
    gv__am_room(rank, -1);
    return op_issued(status, rank, "get");
}

static void flush_cb(gv_req_t *req, gv_status_t status)
{
    flush_req_t *f = (flush_req_t *)req;

    f->status = status;
    gv__am_owe(f->rank, -1, 1);
    (*f->left)--;
}

static int none_left(void *arg)
{
    return *(int *)arg == 0;
}

/* A flush to every rank with operations pending: one flush per rank, all
 * issued before any is waited for, each owed to its rank until it
 * completes, so that the AM watchdog names a rank that never completes
 * its part. The ranks leave the pending set before their flush starts:
 * operations issued meanwhile (by handlers, other workers) mark them
 * again for the next flush. gv_rma_flush() takes this way only when no
 * other flush is waiting (a flush nested in that wait must also cover
 * the ranks that one took out of the set), the transport's flush does not
 * block (mpi's would run one after another; the monitor thread watches
 * those), and at most FLUSH_EACH_MAX ranks are pending. */
#define FLUSH_EACH_MAX 64

static gv_status_t flush_each(void)
{
    flush_req_t local[8], *fr = local;
    gv_status_t status = GV_OK, s;
    int         i, n = rma.npending, left = 0;

    if (n > 8)
        fr = gv_malloc((size_t)n * sizeof(*fr));
    for (i = 0; i < n; i++)
        fr[i].rank = rma.plist[i];
    pending_clear_all();
    for (i = 0; i < n; i++) {
        flush_req_t *f = &fr[i];

        f->req.cb  = flush_cb;
        f->req.arg = NULL;
        f->status  = GV_OK;
        f->left    = &left;
        gv__am_owe(f->rank, 1, 0);
        left++;
        s = rma.tl->ops->flush(rma.tl, f->rank, &f->req);
        if (s != GV_INPROGRESS) {
            left--;
            gv__am_owe(f->rank, -1, 1);
            f->status = s;
        }
    }
    rma.flushing++;
    gv_wait(none_left, &left);
    rma.flushing--;
    for (i = 0; i < n; i++) {
        s = issued(fr[i].status, fr[i].rank, "flush");
        if (s != GV_OK) {
            pending_mark(fr[i].rank);
            if (status == GV_OK)
                status = s;
        }
    }
    if (fr != local)
        gv_free(fr);
    return status;
}

gv_status_t gv_rma_flush(int rank)
{
    gv__wreq_t  r;
    gv_status_t status;

    gv__wreq_init(&r);
    if (rma.tl == NULL)
        return GV_ERR_STATE;
    if (rma.tl->ops->flush == NULL)
        return GV_OK; /* nothing one-sided was ever issued */
    if ((rank < -1) || (rank >= rma.tl->size)) {
        gv_error("gv_rma_flush: rank %d is out of range (-1..%d)", rank,
                 rma.tl->size - 1);
        return GV_ERR_INVALID;
    }
    if (rank < 0) {
        if ((rma.npending > 0) && (rma.flushing == 0) &&
            !rma.tl->attr.flush_blocks && (rma.npending <= FLUSH_EACH_MAX))
            return flush_each();
        /* One flush of everything, which also covers ranks that a
         * waiting flush took out of the set. Ranks leave the set before
         * it starts: operations issued meanwhile mark them again. */
        pending_clear_all();
    } else {
        pending_clear(rank);
    }
    status = rma.tl->ops->flush(rma.tl, rank, &r.req);
    if (status == GV_INPROGRESS) {
        rma.flushing++;
        status = wait_on(rank, &r);
        rma.flushing--;
    }
    if ((status != GV_OK) && (rank >= 0))
        pending_mark(rank);
    return issued(status, (rank < 0) ? 0 : rank, "flush");
}
