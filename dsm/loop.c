/* Loops over global memory: gv_forall runs each element's iterations at
 * its home (localized), gv_forall_index cuts an index range over ranks.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The caller sends one descriptor (range, element size, body, argument
 * bytes) to every rank, enrolling one operation per rank in the loop's
 * completion event. Each rank's handler keeps a copy and spawns a private
 * task that runs the rank's share as a gv_parallel_for (recursive
 * decomposition, so a body that blocks lets other iterations run), then
 * completes its operation. The caller waits on the event, which also
 * covers whatever asynchronous delegates the bodies enrolled in it: that
 * is how a loop of gv_delegate_add calls knows every add has landed.
 *
 * A rank's share of a linear array: the blocks b of the range with
 * b mod P == rank, i.e. every P-th block from its first one; the loop runs
 * over those blocks (leaves of grain * elem_size / GV_BLOCK blocks), and
 * each block's elements are contiguous in the rank's memory.
 */
#include "dsm/dsm_internal.h"

#include <inttypes.h>

enum { L_ARRAY = 1, L_INDEX };

typedef struct {
    uint32_t    gce;
    uint32_t    kind;
    uint64_t    base;     /* L_ARRAY: address; L_INDEX: lo */
    int64_t     n;        /* L_ARRAY: elements; L_INDEX: hi */
    uint64_t    elem;
    int64_t     grain;
    gv__fnref_t fn;
    uint32_t    arg_len;
    uint32_t    pad;
} desc_hdr_t;

typedef struct {
    desc_hdr_t h;
    void      *fn;
    /* this rank's share */
    uint64_t   first_blk, nblk;  /* L_ARRAY linear */
    uint8_t   *p0;               /* L_ARRAY 2D: local start */
    int64_t    lo, hi;           /* L_INDEX */
    uint8_t    arg[GV_FORALL_ARG_MAX] __attribute__((aligned(16)));
} desc_t;

static gv_am_id_t am_start;

static void block_body(int64_t k, void *p)
{
    desc_t        *d  = p;
    gv_forall_fn_t fn = (gv_forall_fn_t)d->fn;
    uint64_t       B  = gv__geo.bsize;
    uint64_t       o0 = d->h.base & GV__GA_OFF_MASK;
    uint64_t       end = o0 + (uint64_t)d->h.n * d->h.elem;
    uint64_t       b  = d->first_blk + (uint64_t)k * (uint64_t)gv__geo.size;
    uint64_t       lo = (b * B > o0) ? b * B : o0;
    uint64_t       hi = ((b + 1) * B < end) ? (b + 1) * B : end;
    uint8_t       *p0 = gv__geo.heap + gv__lblk_off(gv__blk_local(b), 0);
    uint64_t       o;

    for (o = lo; o < hi; o += d->h.elem)
        fn((int64_t)((o - o0) / d->h.elem), p0 + (o & gv__geo.bmask), d->arg);
}

static void elem_body(int64_t i, void *p)
{
    desc_t *d = p;
    ((gv_forall_fn_t)d->fn)(i, d->p0 + (uint64_t)i * d->h.elem, d->arg);
}

static void index_body(int64_t i, void *p)
{
    desc_t *d = p;
    ((gv_index_fn_t)d->fn)(i, d->arg);
}

static void share_task(void *p)
{
    desc_t        *d;
    gv__gce_rec_t *r;
    uint32_t       id;
    int64_t        g;

    memcpy(&d, p, sizeof(d));
    id = d->h.gce;
    g  = (d->h.grain > 0) ? d->h.grain : (int64_t)gv__env.LOOP_GRAIN;
    if (d->h.kind == L_INDEX) {
        (void)gv_parallel_for(d->lo, d->hi, g, index_body, d);
    } else if (d->nblk > 0) {
        int64_t gb = g * (int64_t)d->h.elem / (int64_t)gv__geo.bsize;
        (void)gv_parallel_for(0, (int64_t)d->nblk, (gb > 0) ? gb : 1,
                              block_body, d);
    } else if (d->p0 != NULL) {
        (void)gv_parallel_for(0, d->h.n, g, elem_body, d);
    }
    gv_free(d);
    r = gv__gce_rec(id);
    if (r != NULL)
        r->completed++;
}

/* Work out this rank's share; returns 0 if the descriptor is bad. */
static int share_of(desc_t *d)
{
    int      me = gv__geo.rank, P = gv__geo.size;
    uint64_t off;
    int      home, kind;

    if (d->h.kind == L_INDEX) {
        __int128 lo = (int64_t)d->h.base, len = (__int128)d->h.n - lo;
        if (len < 0)
            return 0;
        d->lo = (int64_t)(lo + len * me / P);
        d->hi = (int64_t)(lo + len * (me + 1) / P);
        return 1;
    }
    if ((d->h.n < 0) || (d->h.elem == 0) || (d->h.elem > gv__geo.bsize))
        return 0;
    kind = gv__ga_decode(d->h.base, &home, &off);
    if (kind < 0)
        return 0;
    if (kind == GV__GA_KIND_LIN) {
        uint64_t o0 = d->h.base & GV__GA_OFF_MASK, bf, bl, b;
        uint64_t bytes = (uint64_t)d->h.n * d->h.elem;
        if ((gv__geo.bsize % d->h.elem) != 0 || (o0 % d->h.elem) != 0 ||
            (bytes / d->h.elem != (uint64_t)d->h.n) ||
            ((bytes > 0) && !gv__heap_lin_range_valid(o0, bytes)))
            return 0;
        if (bytes == 0)
            return 1;
        bf = o0 >> gv__geo.bshift;
        bl = (o0 + bytes - 1) >> gv__geo.bshift;
        b  = bf + (uint64_t)((me - gv__blk_home(bf) + P) % P);
        d->first_blk = b;
        d->nblk      = (b <= bl) ? (bl - b) / (uint64_t)P + 1 : 0;
        return 1;
    }
    if ((home == me) && (d->h.n > 0)) {
        uint64_t bytes = (uint64_t)d->h.n * d->h.elem;
        if (bytes / d->h.elem != (uint64_t)d->h.n)
            return 0;
        d->p0 = gv__heap_check_local(d->h.base, kind, off, bytes);
        if (d->p0 == NULL)
            return 0;
    }
    return 1;
}

static void am_start_cb(int src, const void *payload, size_t len, void *arg)
{
    desc_hdr_t     h;
    desc_t        *d;
    gv__gce_rec_t *r;
    gv_status_t    status;

    if (len < sizeof(h)) {
        gv__dsm_reject(src, "truncated loop descriptor");
        return;
    }
    memcpy(&h, payload, sizeof(h));
    r = gv__gce_rec(h.gce);
    if ((r == NULL) || (h.arg_len > GV_FORALL_ARG_MAX) ||
        (len != sizeof(h) + h.arg_len) ||
        ((h.kind != L_ARRAY) && (h.kind != L_INDEX))) {
        gv__dsm_reject(src, "malformed loop descriptor");
        return;
    }
    d = gv_calloc(1, sizeof(*d));
    d->h  = h;
    d->fn = gv__fn_decode(&h.fn);
    memcpy(d->arg, (const uint8_t *)payload + sizeof(h), h.arg_len);
    if ((d->fn == NULL) || !share_of(d)) {
        char s[64];
        gv_error("loop from rank %d over %s (%" PRId64 " elements of %"
                 PRIu64 " bytes): bad range or body; nothing run here", src,
                 gv_gaddr_str(h.base, s, sizeof(s)), h.n, h.elem);
        gv_free(d);
        r->completed++;
        r->errors++;
        return;
    }
    status = gv_spawn_private(share_task, &d, sizeof(d));
    if (status != GV_OK) {
        gv_error("loop: cannot spawn this rank's share: %s",
                 gv_status_str(status));
        gv_free(d);
        r = gv__gce_rec(h.gce);
        r->completed++;
        r->errors++;
    }
}

static gv_status_t start(desc_hdr_t *h, const void *fn, const void *arg,
                         size_t arg_len, gv_gce_t *gce)
{
    uint8_t        m[sizeof(desc_hdr_t) + GV_FORALL_ARG_MAX];
    gv__gce_rec_t *r;
    int            i;

    if (!gv__geo.up || (gv_task_self() == NULL))
        return GV_ERR_STATE;
    h->gce = gv__gce_id(gce);
    r      = gv__gce_rec(h->gce);
    if ((r == NULL) || (fn == NULL) || (arg_len > GV_FORALL_ARG_MAX) ||
        ((arg_len > 0) && (arg == NULL)) || !gv__fn_encode(fn, &h->fn)) {
        gv_error("gv_forall: bad arguments (body %p, %zu argument bytes, at "
                 "most %d)", fn, arg_len, GV_FORALL_ARG_MAX);
        return GV_ERR_INVALID;
    }
    h->arg_len = (uint32_t)arg_len;
    memcpy(m, h, sizeof(*h));
    if (arg_len > 0)
        memcpy(m + sizeof(*h), arg, arg_len);
    r->enrolled += (uint64_t)gv__geo.size;
    for (i = 0; i < gv__geo.size; i++) {
        gv_status_t status = gv_am_send(i, am_start, m, sizeof(*h) + arg_len);
        if (status != GV_OK)
            gv_fatal("gv_forall: cannot reach rank %d: %s", i,
                     gv_status_str(status));
    }
    return gv_gce_wait(gce);
}

gv_status_t gv_forall(gv_gaddr_t base, int64_t n, size_t elem_size,
                      int64_t grain, gv_forall_fn_t body, const void *arg,
                      size_t arg_len, gv_gce_t *gce)
{
    desc_hdr_t h;
    desc_t     probe;
    char       s[64];

    memset(&h, 0, sizeof(h));
    h.kind  = L_ARRAY;
    h.base  = base;
    h.n     = n;
    h.elem  = elem_size;
    h.grain = grain;
    /* Check the range here too, so that the caller hears why. */
    memset(&probe, 0, sizeof(probe));
    probe.h = h;
    if (!gv__geo.up)
        return GV_ERR_STATE;
    if ((gv__ga_kind(base) != GV__GA_KIND_PTR) && !share_of(&probe)) {
        gv_error("gv_forall: %s, %" PRId64 " elements of %zu bytes: not "
                 "inside one allocation, or elements straddle blocks of "
                 "%llu bytes", gv_gaddr_str(base, s, sizeof(s)), n, elem_size,
                 (unsigned long long)gv__geo.bsize);
        return GV_ERR_INVALID;
    }
    return start(&h, (const void *)body, arg, arg_len, gce);
}

gv_status_t gv_forall_index(int64_t lo, int64_t hi, int64_t grain,
                            gv_index_fn_t body, const void *arg,
                            size_t arg_len, gv_gce_t *gce)
{
    desc_hdr_t h;

    if (hi < lo) {
        gv_error("gv_forall_index: empty range [%" PRId64 ", %" PRId64 ")",
                 lo, hi);
        return GV_ERR_INVALID;
    }
    memset(&h, 0, sizeof(h));
    h.kind  = L_INDEX;
    h.base  = (uint64_t)lo;
    h.n     = hi;
    h.grain = grain;
    return start(&h, (const void *)body, arg, arg_len, gce);
}

void gv__loop_init(void)
{
    if (gv_am_register(am_start_cb, NULL, &am_start) != GV_OK)
        gv_fatal("cannot register the loop handler");
}
