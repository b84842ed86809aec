/* Block-cyclic addressing and localized loops across ranks: p + i walks
 * the blocks round-robin; gv_forall runs each element exactly once, at its
 * home, for awkward lengths, offsets and element sizes; gv_forall_index
 * covers every index once (its bodies' asynchronous adds are covered by
 * its wait); symmetric allocations sit at the same offset on every rank;
 * exported stack memory is reachable; allocation from every rank at once
 * never hands out overlapping memory; collectives give identical results.
 * Run as `gvrun -n 2|4 mr_dsm_loop` (also with GV_AMO=native).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "mr.h"
#include "dsm/dsm_internal.h"
#include "tasking/task_internal.h"

static uint64_t my_errors;

typedef struct {
    gv_gaddr_t base;
    int64_t    n;
    uint64_t   elem;
} arr_t;

/* Body: the element must be at this rank, at the address p + i * elem;
 * count the visit in the element's first word. */
static void visit(int64_t i, void *elem, void *arg)
{
    const arr_t *a = arg;
    gv_gaddr_t   g = gv_gaddr_add(a->base, i * (int64_t)a->elem);
    uint64_t     v;

    if ((gv_gaddr_rank(g) != gv_rank()) || (gv_gaddr_local(g) != elem)) {
        fprintf(stderr, "[%d] element %lld at the wrong place (home %d)\n",
                gv_rank(), (long long)i, gv_gaddr_rank(g));
        my_errors++;
        return;
    }
    memcpy(&v, elem, 8);
    v++;
    memcpy(elem, &v, 8);
}

static void zero(int64_t i, void *elem, void *arg)
{
    memset(elem, 0, ((const arr_t *)arg)->elem);
}

/* Every element visited exactly once: read them all back from here. */
static void check_once(const arr_t *a)
{
    int64_t i;

    for (i = 0; i < a->n; i++) {
        uint64_t v;
        MR_OK(gv_delegate_read(gv_gaddr_add(a->base, i * (int64_t)a->elem),
                               &v, 8));
        MR_CHECK(v == 1, "element %lld of %lld (size %llu) visited %llu "
                 "times", (long long)i, (long long)a->n,
                 (unsigned long long)a->elem, (unsigned long long)v);
    }
}

static void loop_case(int64_t n, uint64_t elem, int64_t skip, int64_t grain)
{
    arr_t      a;
    gv_gaddr_t mem;
    size_t     bytes = (size_t)(n + skip) * elem;

    MR_OK(gv_global_alloc(bytes > 0 ? bytes : 1, &mem));
    a.base = gv_gaddr_add(mem, skip * (int64_t)elem);
    a.n    = n;
    a.elem = elem;
    MR_OK(gv_forall(a.base, n, elem, grain, zero, &a, sizeof(a), NULL));
    MR_OK(gv_forall(a.base, n, elem, grain, visit, &a, sizeof(a), NULL));
    check_once(&a);
    MR_OK(gv_global_free(mem));
}

/* gv_forall_index: each index adds 1 to its own word, asynchronously. */
static void index_add(int64_t i, void *arg)
{
    gv_gaddr_t base;

    memcpy(&base, arg, sizeof(base));
    MR_OK(gv_delegate_add(gv_gaddr_add(base, 8 * i), 1, NULL));
}

/* Symmetric: every rank writes its number into every rank's copy. */
static void symmetric_case(void)
{
    gv_gaddr_t s;
    int        r, P = gv_nranks(), me = gv_rank();
    int64_t   *mine;

    if (me == 0)
        MR_OK(gv_global_alloc_symmetric(8 * (size_t)P, &s));
    MR_OK(gv_broadcast(0, &s, sizeof(s)));
    for (r = 0; r < P; r++) {
        int64_t v = me + 1;
        MR_OK(gv_delegate_write(gv_gaddr_add(gv_gaddr_on(s, r), 8 * me), &v,
                                8));
    }
    MR_OK(gv_coll_barrier());
    mine = gv_gaddr_local(gv_gaddr_on(s, me));
    MR_CHECK(mine != NULL, "no local copy");
    MR_CHECK((gv_gaddr_on(s, me) & ((1ull << 40) - 1)) ==
                 (s & ((1ull << 40) - 1)), "offsets differ");
    for (r = 0; r < P; r++)
        MR_CHECK(mine[r] == r + 1, "copy slot %d holds %lld", r,
                 (long long)mine[r]);
    MR_OK(gv_coll_barrier());
    if (me == 0)
        MR_OK(gv_global_free(s));
}

/* Rank 0 exports a stack word; every rank adds its number + 1. */
static void export_case(void)
{
    int64_t    word = 0, old, want = 0;
    gv_gaddr_t g = GV_GADDR_NULL;
    int        r;

    if (gv_rank() == 0)
        MR_OK(gv_export(&word, sizeof(word), &g));
    MR_OK(gv_broadcast(0, &g, sizeof(g)));
    MR_OK(gv_delegate_fetch_add(g, gv_rank() + 1, &old));
    MR_OK(gv_coll_barrier());
    if (gv_rank() == 0) {
        for (r = 0; r < gv_nranks(); r++)
            want += r + 1;
        MR_CHECK(word == want, "exported word %lld, expected %lld",
                 (long long)word, (long long)want);
        MR_OK(gv_unexport(g));
    }
    MR_OK(gv_coll_barrier());
}

/* Everyone allocates and frees at once; each allocation is filled with
 * its owner's pattern and checked before it is freed. */
static void churn_case(void)
{
    gv_gaddr_t a[8];
    int        round, k, me = gv_rank();
    uint64_t   seed = (uint64_t)me * 977 + 1;

    for (round = 0; round < 4; round++) {
        for (k = 0; k < 8; k++) {
            size_t  words = 1 + mr_rand(&seed) % 40;
            size_t  w;
            uint64_t pat = ((uint64_t)me << 32) | (uint64_t)(round * 8 + k);
            MR_OK(gv_global_alloc(8 * words, &a[k]));
            for (w = 0; w < words; w += 3)
                MR_OK(gv_delegate_write(gv_gaddr_add(a[k], 8 * (int64_t)w),
                                        &pat, 8));
        }
        MR_OK(gv_coll_barrier()); /* all ranks' allocations live at once */
        for (k = 0; k < 8; k++) {
            uint64_t pat = ((uint64_t)me << 32) | (uint64_t)(round * 8 + k), v;
            MR_OK(gv_delegate_read(a[k], &v, 8));
            MR_CHECK(v == pat, "allocation %d of round %d overwritten "
                     "(%llx)", k, round, (unsigned long long)v);
            MR_OK(gv_global_free(a[k]));
        }
        MR_OK(gv_coll_barrier());
    }
}

static void collective_case(void)
{
    int64_t  iv[3];
    double   dv[2];
    uint64_t b[4] = {0, 0, 0, 0};
    int      P = gv_nranks(), me = gv_rank();

    iv[0] = me + 1;
    iv[1] = -me;
    iv[2] = me * 10;
    MR_OK(gv_allreduce(iv, 1, GV_INT64, GV_SUM));
    MR_CHECK(iv[0] == (int64_t)P * (P + 1) / 2, "int sum %lld",
             (long long)iv[0]);
    iv[1] = -me;
    MR_OK(gv_allreduce(&iv[1], 1, GV_INT64, GV_MIN));
    MR_CHECK(iv[1] == -(P - 1), "int min %lld", (long long)iv[1]);
    MR_OK(gv_allreduce(&iv[2], 1, GV_INT64, GV_MAX));
    MR_CHECK(iv[2] == (P - 1) * 10, "int max %lld", (long long)iv[2]);
    dv[0] = 0.5 * me;
    dv[1] = 1.0 / (me + 1);
    MR_OK(gv_allreduce(dv, 1, GV_DOUBLE, GV_SUM));
    MR_CHECK(dv[0] == 0.25 * P * (P - 1), "double sum %g", dv[0]);
    MR_OK(gv_allreduce(&dv[1], 1, GV_DOUBLE, GV_MIN));
    MR_CHECK(dv[1] == 1.0 / P, "double min %g", dv[1]);
    dv[1] = 1.0 / (me + 1);
    MR_OK(gv_allreduce(&dv[1], 1, GV_DOUBLE, GV_MAX));
    MR_CHECK(dv[1] == 1.0, "double max %g", dv[1]);
    if (me == P - 1) {
        b[0] = 11;
        b[3] = 44;
    }
    MR_OK(gv_broadcast(P - 1, b, sizeof(b)));
    MR_CHECK((b[0] == 11) && (b[3] == 44), "broadcast got %llu %llu",
             (unsigned long long)b[0], (unsigned long long)b[3]);
    MR_OK(gv_coll_barrier());
}

int main(int argc, char **argv)
{
    uint64_t errs;
    int      me;

    mr_init(&argc, &argv);
    gv_barrier();
    me = gv_rank();

    collective_case();
    if (me == 0) {
        size_t B = gv_global_block_size();
        /* Plain, odd length, offset start, fat elements, tiny grain. */
        loop_case(1000, 8, 0, 0);
        loop_case(777, 8, 3, 5);
        loop_case(123, (uint64_t)B, 1, 1);
        loop_case(1, 16, 0, 0);
        loop_case(0, 8, 0, 0);
        loop_case(5000, 32, 7, 100);
        {
            gv_gaddr_t base;
            int64_t    n = 3001;
            arr_t      a;
            MR_OK(gv_global_alloc(8 * (size_t)n, &base));
            a.base = base;
            a.n    = n;
            a.elem = 8;
            MR_OK(gv_forall(base, n, 8, 0, zero, &a, sizeof(a), NULL));
            MR_OK(gv_forall_index(0, n, 7, index_add, &base, sizeof(base),
                                  NULL));
            check_once(&a);
            /* The bad cases are refused with a message. */
            MR_CHECK(gv_forall(gv_gaddr_add(base, 4), 10, 8, 0, visit, &a,
                               sizeof(a), NULL) == GV_ERR_INVALID,
                     "misaligned loop accepted");
            MR_CHECK(gv_forall(base, n + 1, 8, 0, visit, &a, sizeof(a),
                               NULL) == GV_ERR_INVALID,
                     "loop past the allocation accepted");
            MR_OK(gv_global_free(base));
        }
    }
    MR_OK(gv_coll_barrier());
    symmetric_case();
    export_case();
    churn_case();

    errs = my_errors;
    MR_OK(gv_allreduce(&errs, 1, GV_UINT64, GV_SUM));
    MR_CHECK(errs == 0, "%llu elements visited at the wrong place",
             (unsigned long long)errs);
    if (me == 0)
        printf("mr_dsm_loop: %d ranks: ok\n", gv_nranks());
    gv_barrier();
    gv_finalize();
    return 0;
}
