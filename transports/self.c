/* The loopback transport: one rank, no peers. Messages to oneself never
 * reach a transport (the AM layer delivers them), so this backend is its
 * heap and CPU atomics on it; the default for unit tests.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "transports/transport.h"

#include <sys/mman.h>

typedef struct {
    uint8_t *heap;
    size_t   heap_size;
} self_t;

static gv_status_t self_init(gv_tl_t *tl)
{
    self_t *s;

    if (tl->size != 1) {
        gv__tl_why("self", "self: serves a job of one rank; this one has "
                   "%d: choose another GV_TRANSPORT (gvinfo -t lists them)",
                   tl->size);
        return GV_ERR_UNSUPPORTED;
    }
    s            = gv_calloc(1, sizeof(*s));
    s->heap_size = tl->params.heap_size;
    /* A job of messages only asks for no heap: map a page all the same
     * (mmap takes no 0), which the range checks never reach. */
    s->heap      = mmap(NULL, s->heap_size ? s->heap_size : 4096, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s->heap == MAP_FAILED) {
        gv_error("self: mmap of a %zu-byte heap failed: %m", s->heap_size);
        gv_free(s);
        return GV_ERR_NO_MEMORY;
    }
    tl->priv           = s;
    tl->attr.caps      = GV_TL_CAP_AM | GV_TL_CAP_RMA | GV_TL_CAP_ATOMIC64;
    tl->attr.max_msg   = 1u << 20;
    tl->attr.heap_base = s->heap;
    snprintf(tl->attr.detail, sizeof(tl->attr.detail), "loopback");
    return GV_OK;
}

static void self_fini(gv_tl_t *tl)
{
    self_t *s = tl->priv;
    munmap(s->heap, s->heap_size ? s->heap_size : 4096);
    gv_free(s);
}

static unsigned self_progress(gv_tl_t *tl)
{
    return 0;
}

static gv_status_t self_am_send(gv_tl_t *tl, int dst, const void *hdr,
                                size_t hdr_len, const void *payload,
                                size_t len, gv_req_t *req)
{
    return GV_ERR_INVALID; /* never called: the only rank is this one */
}

static gv_status_t self_check(gv_tl_t *tl, int dst, uint64_t off, size_t len)
{
    self_t *s = tl->priv;
    if ((dst != 0) || (off > s->heap_size) || (len > s->heap_size - off))
        return GV_ERR_INVALID;
    return GV_OK;
}

static gv_status_t self_put(gv_tl_t *tl, int dst, uint64_t off,
                            const void *buf, size_t len, gv_req_t *req)
{
    self_t     *s      = tl->priv;
    gv_status_t status = self_check(tl, dst, off, len);
    if (status == GV_OK)
        memcpy(s->heap + off, buf, len);
    return status;
}

static gv_status_t self_get(gv_tl_t *tl, int dst, uint64_t off, void *buf,
                            size_t len, gv_req_t *req)
{
    self_t     *s      = tl->priv;
    gv_status_t status = self_check(tl, dst, off, len);
    if (status == GV_OK)
        memcpy(buf, s->heap + off, len);
    return status;
}

static gv_status_t self_atomic64(gv_tl_t *tl, gv_tl_amo_t op, int dst,
                                 uint64_t off, uint64_t value,
                                 uint64_t compare, uint64_t *result_p,
                                 gv_req_t *req)
{
    self_t     *s      = tl->priv;
    gv_status_t status = self_check(tl, dst, off, 8);
    uint64_t   *p, old;

    if ((status != GV_OK) || ((off & 7) != 0))
        return GV_ERR_INVALID;
    p = (uint64_t *)(s->heap + off);
    switch (op) {
    case GV_TL_AMO_ADD:
        __atomic_fetch_add(p, value, __ATOMIC_SEQ_CST);
        return GV_OK;
    case GV_TL_AMO_FADD:
        old = __atomic_fetch_add(p, value, __ATOMIC_SEQ_CST);
        break;
    case GV_TL_AMO_CSWAP:
        old = compare;
        __atomic_compare_exchange_n(p, &old, value, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        break;
    case GV_TL_AMO_SWAP:
        old = __atomic_exchange_n(p, value, __ATOMIC_SEQ_CST);
        break;
    default:
        return GV_ERR_INVALID;
    }
    if (result_p != NULL)
        *result_p = old;
    return GV_OK;
}

static gv_status_t self_flush(gv_tl_t *tl, int dst, gv_req_t *req)
{
    return GV_OK;
}

const gv_tl_ops_t gv_tl_self_ops = {
    .version  = GV_TL_OPS_VERSION,
    .name     = "self",
    .init     = self_init,
    .fini     = self_fini,
    .progress = self_progress,
    .am_send  = self_am_send,
    .put      = self_put,
    .get      = self_get,
    .atomic64 = self_atomic64,
    .flush    = self_flush,
};
