/* Distributed arrays: each rank's part is one piece of the symmetric
 * global heap, so every element has a 2D heap address and the DSM's
 * delegates read, write and update it at its home.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Block: rank r holds [lo(r), lo(r+1)) with lo(r) = r*q + min(r, n mod P),
 * q = n / P. Cyclic: block b (of `block` elements) lives on rank b mod P,
 * as local block b / P. Either way the array is a list of *segments*,
 * contiguous runs of global indices held contiguously by one rank, in
 * global order: one per rank (block) or one per block (cyclic). Scans work
 * segment by segment: every rank reduces its segments, the totals meet in
 * all-reductions, and every rank finishes its own.
 */
#include "containers/common.h"
#include <grapevine/fw/array.h>

#include <float.h>
#include <stdlib.h>

struct gv_array {
    int64_t    n, block, q, rem;
    size_t     es;
    gv_dist_t  dist;
    int        nranks, rank;
    gv_gaddr_t base;   /* this rank's part: a 2D heap address */
    uint8_t   *local;
    int64_t    nlocal;
};

static void locate(const gv_array_t *a, int64_t i, int *rank_p,
                   int64_t *k_p)
{
    if (a->dist == GV_DIST_BLOCK) {
        int64_t big = a->rem * (a->q + 1);
        if (i < big) {
            *rank_p = (int)(i / (a->q + 1));
            *k_p    = i % (a->q + 1);
        } else {
            *rank_p = (int)(a->rem + (i - big) / a->q);
            *k_p    = (i - big) % a->q;
        }
    } else {
        int64_t b = i / a->block;
        *rank_p   = (int)(b % a->nranks);
        *k_p      = (b / a->nranks) * a->block + i % a->block;
    }
}

static int64_t count_on(const gv_array_t *a, int r)
{
    if (a->dist == GV_DIST_BLOCK)
        return a->q + ((r < a->rem) ? 1 : 0);
    {
        int64_t nb = (a->n + a->block - 1) / a->block, mine, c;
        if (nb == 0)
            return 0;
        mine = (nb - 1 - r) / a->nranks + 1; /* blocks r, r+P, ... < nb */
        if (r > nb - 1)
            return 0;
        c = mine * a->block;
        if ((nb - 1) % a->nranks == r)       /* holds the last block */
            c -= nb * a->block - a->n;
        return c;
    }
}

int64_t gv_array_size(const gv_array_t *a)      { return a->n; }
size_t  gv_array_elem_size(const gv_array_t *a) { return a->es; }
void   *gv_array_local(const gv_array_t *a)     { return a->local; }
int64_t gv_array_local_count(const gv_array_t *a) { return a->nlocal; }

int64_t gv_array_local_lo(const gv_array_t *a)
{
    return gv_array_global_index(a, a->rank, 0);
}

int64_t gv_array_global_index(const gv_array_t *a, int rank, int64_t k)
{
    if (a->dist == GV_DIST_BLOCK)
        return rank * a->q + ((rank < a->rem) ? rank : a->rem) + k;
    return ((k / a->block) * a->nranks + rank) * a->block + k % a->block;
}

int gv_array_owner(const gv_array_t *a, int64_t i)
{
    int     r;
    int64_t k;

    locate(a, i, &r, &k);
    return r;
}

gv_gaddr_t gv_array_addr(const gv_array_t *a, int64_t i)
{
    int     r;
    int64_t k;

    locate(a, i, &r, &k);
    return gv_gaddr_add(gv_gaddr_on(a->base, r), k * (int64_t)a->es);
}

gv_status_t gv_array_create(int64_t n, size_t elem_size, gv_dist_t dist,
                            int64_t block, gv_array_t **arr_p)
{
    gv_array_t *a;
    int64_t     maxc = 0;
    int         r;
    struct {
        gv_gaddr_t base;
        int32_t    status;
    } b = {GV_GADDR_NULL, GV_OK};

    if ((arr_p == NULL) || (n < 0) || (elem_size == 0) ||
        (elem_size > GV_DELEGATE_DATA_MAX) ||
        ((dist != GV_DIST_BLOCK) && (dist != GV_DIST_CYCLIC)) || (block < 0)) {
        fw_error("gv_array_create: bad arguments (n %lld, element size %zu: "
                 "1..%d, dist %d, block %lld)", (long long)n, elem_size,
                 GV_DELEGATE_DATA_MAX, (int)dist, (long long)block);
        return GV_ERR_INVALID;
    }
    a = calloc(1, sizeof(*a));
    if (a == NULL)
        return GV_ERR_NO_MEMORY;
    a->n      = n;
    a->es     = elem_size;
    a->dist   = dist;
    a->nranks = gv_nranks();
    a->rank   = gv_rank();
    a->q      = n / a->nranks;
    a->rem    = n % a->nranks;
    a->block  = (block > 0) ? block : (int64_t)(4096 / elem_size);
    if (a->block < 1)
        a->block = 1;
    for (r = 0; r < a->nranks; r++)
        if (count_on(a, r) > maxc)
            maxc = count_on(a, r);
    a->nlocal = count_on(a, a->rank);
    /* Rank 0 allocates the symmetric piece; everyone learns the outcome. */
    if (a->rank == 0)
        b.status = gv_global_alloc_symmetric(
            (size_t)((maxc > 0) ? maxc : 1) * elem_size, &b.base);
    gv_broadcast(0, &b, sizeof(b));
    if (b.status != GV_OK) {
        if (a->rank != 0)
            fw_error("gv_array_create: the global heap has no room for %lld "
                     "elements of %zu bytes per rank (raise GV_HEAP)",
                     (long long)maxc, elem_size);
        free(a);
        return (gv_status_t)b.status;
    }
    a->base  = gv_gaddr_on(b.base, a->rank);
    a->local = gv_gaddr_local(a->base);
    memset(a->local, 0, (size_t)a->nlocal * elem_size);
    gv_coll_barrier(); /* zeroed everywhere before anyone writes */
    *arr_p = a;
    return GV_OK;
}

void gv_array_destroy(gv_array_t *a)
{
    if (a == NULL)
        return;
    gv_coll_barrier();
    if (a->rank == 0)
        gv_global_free(a->base);
    free(a);
}

/* ---- element operations ----------------------------------------------------- */

static gv_status_t check_index(const gv_array_t *a, int64_t i, const char *fn)
{
    if ((i < 0) || (i >= a->n)) {
        fw_error("%s: index %lld is outside the array (0..%lld)", fn,
                 (long long)i, (long long)a->n - 1);
        return GV_ERR_INVALID;
    }
    return GV_OK;
}

static gv_status_t check_word(const gv_array_t *a, int64_t i, const char *fn)
{
    if (a->es != 8) {
        fw_error("%s: elements are %zu bytes, not 8", fn, a->es);
        return GV_ERR_INVALID;
    }
    return check_index(a, i, fn);
}

gv_status_t gv_array_get(const gv_array_t *a, int64_t i, void *buf)
{
    if (check_index(a, i, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_delegate_read(gv_array_addr(a, i), buf, a->es);
}

gv_status_t gv_array_put(gv_array_t *a, int64_t i, const void *buf)
{
    if (check_index(a, i, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_delegate_write(gv_array_addr(a, i), buf, a->es);
}

gv_status_t gv_array_put_async(gv_array_t *a, int64_t i, const void *buf,
                               gv_gce_t *gce)
{
    if (check_index(a, i, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_delegate_write_async(gv_array_addr(a, i), buf, a->es, gce);
}

gv_status_t gv_array_add_i64(gv_array_t *a, int64_t i, int64_t v,
                             gv_gce_t *gce)
{
    if (check_word(a, i, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_delegate_add(gv_array_addr(a, i), v, gce);
}

gv_status_t gv_array_fetch_add_i64(gv_array_t *a, int64_t i, int64_t v,
                                   int64_t *old_p)
{
    if (check_word(a, i, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_delegate_fetch_add(gv_array_addr(a, i), v, old_p);
}

gv_status_t gv_array_cswap_u64(gv_array_t *a, int64_t i, uint64_t expected,
                               uint64_t desired, uint64_t *old_p)
{
    if (check_word(a, i, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_delegate_cswap(gv_array_addr(a, i), expected, desired, old_p);
}

gv_status_t gv_array_update_async(gv_array_t *a, int64_t i,
                                  gv_delegate_fn_t fn, const void *args,
                                  size_t len, gv_gce_t *gce)
{
    if (check_index(a, i, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_delegate_call_async(gv_array_addr(a, i), fn, args, len, gce);
}

gv_status_t gv_array_update(gv_array_t *a, int64_t i, gv_delegate_fn_t fn,
                            const void *args, size_t len, void *result,
                            size_t cap)
{
    if (check_index(a, i, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_delegate_call(gv_array_addr(a, i), fn, args, len, result, cap,
                            NULL);
}

/* ---- bulk copies ---------------------------------------------------------- */

#define RANGE_INFLIGHT 16

/* Elements from @a i on that are contiguous at one home (at most max). */
static int64_t run_len(const gv_array_t *a, int64_t i, int64_t max)
{
    int64_t end;

    if (a->dist == GV_DIST_BLOCK) {
        int r;
        int64_t k;
        locate(a, i, &r, &k);
        end = i + (count_on(a, r) - k);
    } else {
        end = (i / a->block + 1) * a->block;
    }
    if (end - i > max)
        end = i + max;
    return end - i;
}

static gv_status_t check_range(const gv_array_t *a, int64_t lo, int64_t cnt,
                               const char *fn)
{
    if ((lo < 0) || (cnt < 0) || (lo > a->n - cnt)) {
        fw_error("%s: range [%lld, %lld) is outside the array [0, %lld)",
                 fn, (long long)lo, (long long)(lo + cnt), (long long)a->n);
        return GV_ERR_INVALID;
    }
    return GV_OK;
}

gv_status_t gv_array_get_range(const gv_array_t *a, int64_t lo,
                               int64_t count, void *buf)
{
    gv_future_t f[RANGE_INFLIGHT];
    int64_t     per = (int64_t)(GV_DELEGATE_DATA_MAX / a->es), i = lo;
    unsigned    issued = 0, k;
    gv_status_t status = GV_OK, st;

    if (check_range(a, lo, count, __func__) != GV_OK)
        return GV_ERR_INVALID;
    while (i < lo + count) {
        int64_t m = run_len(a, i, (lo + count - i < per) ? lo + count - i
                                                           : per);
        if (issued == RANGE_INFLIGHT) {
            for (k = 0; k < issued; k++) {
                st = gv_future_wait(&f[k], NULL);
                if (status == GV_OK)
                    status = st;
            }
            issued = 0;
        }
        st = gv_delegate_read_async(gv_array_addr(a, i),
                                    (uint8_t *)buf + (i - lo) * a->es,
                                    (size_t)m * a->es, &f[issued]);
        if (st != GV_OK) {
            if (status == GV_OK)
                status = st;
            break;
        }
        issued++;
        i += m;
    }
    for (k = 0; k < issued; k++) {
        st = gv_future_wait(&f[k], NULL);
        if (status == GV_OK)
            status = st;
    }
    return status;
}

gv_status_t gv_array_put_range(gv_array_t *a, int64_t lo, int64_t count,
                               const void *buf)
{
    int64_t     per = (int64_t)(GV_DELEGATE_DATA_MAX / a->es), i = lo;
    gv_gce_t    gce;
    gv_status_t status, st;

    if (check_range(a, lo, count, __func__) != GV_OK)
        return GV_ERR_INVALID;
    status = gv_gce_create(&gce);
    if (status != GV_OK)
        return status;
    while (i < lo + count) {
        int64_t m = run_len(a, i, (lo + count - i < per) ? lo + count - i
                                                           : per);
        st = gv_delegate_write_async(gv_array_addr(a, i),
                                     (const uint8_t *)buf + (i - lo) * a->es,
                                     (size_t)m * a->es, &gce);
        if (st != GV_OK) {
            status = st;
            break;
        }
        i += m;
    }
    st = gv_gce_wait(&gce);
    gv_gce_destroy(&gce);
    return (status != GV_OK) ? status : st;
}

/* ---- collective loops ------------------------------------------------------ */

typedef struct {
    gv_array_t   *a;
    gv_array_fn_t body;
    void         *arg;
} forall_t;

static void forall_one(int64_t k, void *arg)
{
    forall_t *fa = arg;
    fa->body(gv_array_global_index(fa->a, fa->a->rank, k),
             fa->a->local + (size_t)k * fa->a->es, fa->arg);
}

gv_status_t gv_array_forall(gv_array_t *a, int64_t grain, gv_array_fn_t body,
                            void *arg, gv_gce_t *gce)
{
    forall_t    fa = {a, body, arg};
    gv_status_t status;

    if (body == NULL) {
        fw_error("gv_array_forall: NULL body");
        return GV_ERR_INVALID;
    }
    status = gv_parallel_for(0, a->nlocal, grain, forall_one, &fa);
    if (status != GV_OK)
        return status;
    return (gce != NULL) ? gv_gce_wait(gce) : gv_coll_barrier();
}

gv_status_t gv_array_fill(gv_array_t *a, const void *value)
{
    int64_t k;

    for (k = 0; k < a->nlocal; k++)
        memcpy(a->local + (size_t)k * a->es, value, a->es);
    return gv_coll_barrier();
}

/* ---- scans and reductions ------------------------------------------------------ */

typedef union {
    int64_t  i;
    uint64_t u;
    double   d;
} word_t;

static int op_ok(const gv_array_t *a, gv_dtype_t type, gv_redop_t op,
                 const char *fn)
{
    if ((a->es != 8) || ((type != GV_INT64) && (type != GV_UINT64) &&
                         (type != GV_DOUBLE)) ||
        ((op != GV_SUM) && (op != GV_MIN) && (op != GV_MAX))) {
        fw_error("%s: needs 8-byte elements (these are %zu), a type of "
                 "GV_INT64, GV_UINT64, GV_DOUBLE and an op of GV_SUM, "
                 "GV_MIN, GV_MAX", fn, a->es);
        return 0;
    }
    return 1;
}

static word_t identity(gv_dtype_t type, gv_redop_t op)
{
    word_t w;

    w.u = 0;
    if (op == GV_MIN) {
        if (type == GV_INT64)
            w.i = INT64_MAX;
        else if (type == GV_UINT64)
            w.u = UINT64_MAX;
        else
            w.d = DBL_MAX;
    } else if (op == GV_MAX) {
        if (type == GV_INT64)
            w.i = INT64_MIN;
        else if (type == GV_DOUBLE)
            w.d = -DBL_MAX;
    } else if (type == GV_DOUBLE) {
        w.d = 0.0;
    }
    return w;
}

static inline word_t combine(gv_dtype_t type, gv_redop_t op, word_t x,
                             word_t y)
{
    word_t r;

    switch (type) {
    case GV_INT64:
        r.i = (op == GV_SUM) ? x.i + y.i
            : (op == GV_MIN) ? ((y.i < x.i) ? y.i : x.i)
                             : ((y.i > x.i) ? y.i : x.i);
        break;
    case GV_UINT64:
        r.u = (op == GV_SUM) ? x.u + y.u
            : (op == GV_MIN) ? ((y.u < x.u) ? y.u : x.u)
                             : ((y.u > x.u) ? y.u : x.u);
        break;
    default:
        r.d = (op == GV_SUM) ? x.d + y.d
            : (op == GV_MIN) ? ((y.d < x.d) ? y.d : x.d)
                             : ((y.d > x.d) ? y.d : x.d);
        break;
    }
    return r;
}

static word_t reduce_local(const gv_array_t *a, int64_t lo, int64_t hi,
                           gv_dtype_t type, gv_redop_t op)
{
    word_t acc = identity(type, op), w;
    int64_t k;

    for (k = lo; k < hi; k++) {
        memcpy(&w, a->local + 8 * k, 8);
        acc = combine(type, op, acc, w);
    }
    return acc;
}

gv_status_t gv_array_reduce(const gv_array_t *a, gv_dtype_t type,
                            gv_redop_t op, void *result_p)
{
    word_t      w;
    gv_status_t status;

    if (!op_ok(a, type, op, __func__))
        return GV_ERR_INVALID;
    w      = reduce_local(a, 0, a->nlocal, type, op);
    status = gv_allreduce(&w, 1, type, op);
    if (status == GV_OK)
        memcpy(result_p, &w, 8);
    return status;
}

/* Segments this array is cut into, in global order, and which rank holds
 * segment s, and its local element range there. */
static int64_t nsegs(const gv_array_t *a)
{
    return (a->dist == GV_DIST_BLOCK) ? a->nranks
                                      : (a->n + a->block - 1) / a->block;
}

static void my_seg(const gv_array_t *a, int64_t s, int64_t *lo_p,
                   int64_t *hi_p)
{
    if (a->dist == GV_DIST_BLOCK) {
        *lo_p = 0;
        *hi_p = a->nlocal;
    } else {
        *lo_p = (s / a->nranks) * a->block;
        *hi_p = *lo_p + a->block;
        if (*hi_p > a->nlocal)
            *hi_p = a->nlocal;
    }
}

#define SCAN_CHUNK 65536 /* segment totals per all-reduction */

gv_status_t gv_array_scan(gv_array_t *a, gv_dtype_t type, gv_redop_t op,
                          void *total_p)
{
    int64_t     S, s0, s, lo, hi, k;
    word_t     *tot, carry, id, w, next;
    gv_status_t status = GV_OK;

    if (!op_ok(a, type, op, __func__))
        return GV_ERR_INVALID;
    S   = nsegs(a);
    id  = identity(type, op);
    tot = malloc(sizeof(word_t) * SCAN_CHUNK);
    if (tot == NULL)
        gv_abort(1, "gv_array_scan: out of local memory");
    carry = id;
    /* Walk the segments in chunks: totals of mine (others the identity),
     * all-reduced so that every rank has every total, then scan. */
    for (s0 = 0; s0 < S; s0 += SCAN_CHUNK) {
        int64_t n = (S - s0 < SCAN_CHUNK) ? S - s0 : SCAN_CHUNK;
        for (s = 0; s < n; s++) {
            tot[s] = id;
            if ((s0 + s) % a->nranks == a->rank) {
                my_seg(a, s0 + s, &lo, &hi);
                tot[s] = reduce_local(a, lo, hi, type, op);
            }
        }
        status = gv_allreduce(tot, (size_t)n, type, op);
        if (status != GV_OK)
            break;
        for (s = 0; s < n; s++) {
            if ((s0 + s) % a->nranks == a->rank) {
                word_t acc = carry;
                my_seg(a, s0 + s, &lo, &hi);
                for (k = lo; k < hi; k++) {
                    memcpy(&w, a->local + 8 * k, 8);
                    next = combine(type, op, acc, w);
                    memcpy(a->local + 8 * k, &acc, 8);
                    acc = next;
                }
            }
            carry = combine(type, op, carry, tot[s]);
        }
    }
    free(tot);
    /* Every rank's part is scanned before anyone reads another's. */
    if (status == GV_OK)
        status = gv_coll_barrier();
    if ((status == GV_OK) && (total_p != NULL))
        memcpy(total_p, &carry, 8);
    return status;
}
