/* A distributed bag: per-rank chunked storage that never moves, appends
 * local or shipped as aggregated active messages.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Rank storage: chunk c holds CHUNK0 << c elements, so element k lives in
 * chunk floor(log2(k / CHUNK0 + 1)); chunks are allocated on first use and
 * kept by gv_bag_clear, and element addresses stay put while the bag
 * grows. A remote append is one message {bag id, event id} element.
 */
#include "containers/common.h"
#include <grapevine/fw/bag.h>

#include <stdlib.h>

#define CHUNK0_LOG 10
#define CHUNK0     (1 << CHUNK0_LOG)
#define NCHUNKS    44

typedef struct {
    uint16_t bag;
    uint16_t pad;
    uint32_t gce;
} hdr_t;

struct gv_bag {
    uint16_t id;
    size_t   es;
    int64_t  n;
    uint8_t *chunk[NCHUNKS];
};

static inline int chunk_of(int64_t k, int64_t *off_p)
{
    uint64_t q = ((uint64_t)k >> CHUNK0_LOG) + 1;
    int      c = 63 - __builtin_clzll(q);

    *off_p = k - (int64_t)CHUNK0 * (((int64_t)1 << c) - 1);
    return c;
}

void *gv_bag_local_at(const gv_bag_t *bag, int64_t k)
{
    int64_t off;
    int     c = chunk_of(k, &off);

    return bag->chunk[c] + (size_t)off * bag->es;
}

static void push(gv_bag_t *b, const void *elem)
{
    int64_t off;
    int     c = chunk_of(b->n, &off);

    if (b->chunk[c] == NULL) {
        size_t bytes = ((size_t)CHUNK0 << c) * b->es;
        b->chunk[c] = malloc(bytes);
        if (b->chunk[c] == NULL)
            gv_abort(1, "bag: out of local memory growing rank %d's part "
                     "past %lld elements (%zu more bytes)", gv_rank(),
                     (long long)b->n, bytes);
    }
    memcpy(b->chunk[c] + (size_t)off * b->es, elem, b->es);
    b->n++;
}

gv_status_t gv_bag_append(gv_bag_t *bag, const void *elem)
{
    push(bag, elem);
    return GV_OK;
}

gv_status_t gv_bag_append_on(gv_bag_t *bag, int rank, const void *elem,
                             gv_gce_t *gce)
{
    uint8_t     msg[sizeof(hdr_t) + GV_BAG_ELEM_MAX];
    hdr_t       h = {bag->id, 0, gv__fw_gce_id(gce)};
    gv_status_t status;

    if ((rank < 0) || (rank >= gv_nranks())) {
        fw_error("gv_bag_append_on: rank %d is not in 0..%d", rank,
                 gv_nranks() - 1);
        return GV_ERR_INVALID;
    }
    if (rank == gv_rank()) {
        push(bag, elem);
        return GV_OK;
    }
    gv_gce_enroll(gce, 1);
    memcpy(msg, &h, sizeof(h));
    memcpy(msg + sizeof(h), elem, bag->es);
    status = gv_am_send(rank, gv__fw_am_bag, msg, sizeof(h) + bag->es);
    if (status != GV_OK)
        gv_abort(1, "bag: cannot send to rank %d: %s", rank,
                 gv_status_str(status));
    return GV_OK;
}

void gv__bag_am(int src, const void *payload, size_t len, void *arg)
{
    hdr_t     h;
    gv_bag_t *b;

    if (len < sizeof(h)) {
        fw_error("malformed bag message from rank %d (%zu bytes): dropped",
                 src, len);
        return;
    }
    memcpy(&h, payload, sizeof(h));
    b = gv__fw_get(h.bag, FW_KIND_BAG);
    if (b == NULL)
        return;
    if (len != sizeof(h) + b->es) {
        fw_error("malformed bag message from rank %d (%zu bytes, elements "
                 "are %zu): dropped", src, len, b->es);
        return;
    }
    push(b, (const uint8_t *)payload + sizeof(h));
    gv__fw_complete(h.gce, 1);
}

int64_t gv_bag_local_size(const gv_bag_t *bag)
{
    return bag->n;
}

void gv_bag_local_copy(const gv_bag_t *bag, void *buf)
{
    int64_t k = 0;
    int     c;

    for (c = 0; (c < NCHUNKS) && (k < bag->n); c++) {
        int64_t cnt = (int64_t)CHUNK0 << c;
        if (cnt > bag->n - k)
            cnt = bag->n - k;
        memcpy((uint8_t *)buf + (size_t)k * bag->es, bag->chunk[c],
               (size_t)cnt * bag->es);
        k += cnt;
    }
}

gv_status_t gv_bag_create(size_t elem_size, gv_bag_t **bag_p)
{
    gv_bag_t   *b;
    gv_status_t status;

    if ((bag_p == NULL) || (elem_size == 0) ||
        (elem_size > GV_BAG_ELEM_MAX)) {
        fw_error("gv_bag_create: element size %zu is not in 1..%d",
                 elem_size, GV_BAG_ELEM_MAX);
        return GV_ERR_INVALID;
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL)
        return GV_ERR_NO_MEMORY;
    b->es  = elem_size;
    status = gv__fw_add(b, FW_KIND_BAG, &b->id);
    if (status != GV_OK) {
        free(b);
        return status;
    }
    gv_coll_barrier();
    *bag_p = b;
    return GV_OK;
}

void gv_bag_destroy(gv_bag_t *bag)
{
    int c;

    if (bag == NULL)
        return;
    gv_coll_barrier();
    gv__fw_remove(bag->id);
    for (c = 0; c < NCHUNKS; c++)
        free(bag->chunk[c]);
    free(bag);
}

typedef struct {
    gv_bag_t   *b;
    gv_bag_fn_t body;
    void       *arg;
} forall_t;

static void forall_one(int64_t k, void *arg)
{
    forall_t *fa = arg;
    fa->body(fa->b, gv_bag_local_at(fa->b, k), fa->arg);
}

gv_status_t gv_bag_forall(gv_bag_t *bag, int64_t grain, gv_bag_fn_t body,
                          void *arg, gv_gce_t *gce)
{
    forall_t    fa = {bag, body, arg};
    gv_status_t status;

    if (body == NULL) {
        fw_error("gv_bag_forall: NULL body");
        return GV_ERR_INVALID;
    }
    status = gv_parallel_for(0, bag->n, grain, forall_one, &fa);
    if (status != GV_OK)
        return status;
    return (gce != NULL) ? gv_gce_wait(gce) : gv_coll_barrier();
}

gv_status_t gv_bag_clear(gv_bag_t *bag)
{
    gv_status_t status = gv_coll_barrier();

    bag->n = 0;
    return status;
}

gv_status_t gv_bag_size(gv_bag_t *bag, int64_t *n_p)
{
    int64_t     n = bag->n;
    gv_status_t status = gv_allreduce(&n, 1, GV_INT64, GV_SUM);

    if (status == GV_OK)
        *n_p = n;
    return status;
}
