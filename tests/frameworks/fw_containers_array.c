/* The distributed array against a sequential reference: thousands of
 * workers make random atomic adds, fetch-and-adds, compare-and-swap
 * increments, xor updates run at the home, and writes of disjoint
 * elements; bulk copies of random ranges; then every element, the local
 * views, the owner map, scans and reductions are checked exactly.
 * Run: gvrun -n 3 build/tests/frameworks/fw_containers_array [-c] [-b block]
 * [-N elements] [-w workers] [-n ops]   (-c: block-cyclic)
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/mr.h"
#include <grapevine/fw/array.h>

#include <float.h>
#include <getopt.h>

static struct {
    int      cyclic;
    int64_t  block, n, workers, ops;
} o = {0, 0, 10007, 1200, 30};

static gv_array_t *arr;  /* int64 counters */
static gv_array_t *wide; /* 24-byte records, for bulk copies */
static gv_gce_t    gce;
static int64_t    *ref;

static uint64_t seed_of(int64_t w)
{
    return 0x5eedull + (uint64_t)w * 7919u;
}

/* At the home: *elem ^= x. */
static size_t xor_at(void *local, const void *args, size_t len, void *result)
{
    int64_t v, x;

    memcpy(&v, local, 8);
    memcpy(&x, args, 8);
    v ^= x;
    memcpy(local, &v, 8);
    return 0;
}

/* Operation kinds, drawn per operation: 0-3 add (async), 4 fetch-add,
 * 5 cswap increment; 6 xor at the home (only on elements = 3 mod 7, which
 * see nothing else, since xor and add do not commute). */
static int64_t elem_for(int kind, uint64_t r)
{
    int64_t i = (int64_t)(r % (uint64_t)o.n);

    if (kind == 6)
        return (i / 7) * 7 + 3 < o.n ? (i / 7) * 7 + 3 : 3 % o.n;
    if (i % 7 == 3)
        i = (i + 1) % o.n;
    return i;
}

static void replay(void)
{
    int64_t w, k;

    for (w = 0; w < o.workers; w++) {
        uint64_t s = seed_of(w);
        for (k = 0; k < o.ops; k++) {
            int     kind = (int)(mr_rand(&s) % 7);
            int64_t i    = elem_for(kind, mr_rand(&s));
            int64_t x    = (int64_t)(mr_rand(&s) % 1000);
            if (kind == 6)
                ref[i] ^= x;
            else if (kind == 5)
                ref[i] += 1;
            else
                ref[i] += x;
        }
    }
}

static void worker(int64_t wi, void *arg)
{
    int64_t  w = gv_rank() * (o.workers / gv_nranks()) + wi, k;
    uint64_t s = seed_of(w);

    for (k = 0; k < o.ops; k++) {
        int     kind = (int)(mr_rand(&s) % 7);
        int64_t i    = elem_for(kind, mr_rand(&s));
        int64_t x    = (int64_t)(mr_rand(&s) % 1000), old;
        uint64_t cur, seen;

        switch (kind) {
        case 4:
            MR_OK(gv_array_fetch_add_i64(arr, i, x, &old));
            break;
        case 5:
            MR_OK(gv_array_get(arr, i, &cur));
            for (;;) {
                MR_OK(gv_array_cswap_u64(arr, i, cur, cur + 1, &seen));
                if (seen == cur)
                    break;
                cur = seen;
            }
            break;
        case 6:
            MR_OK(gv_array_update_async(arr, i, xor_at, &x, 8, &gce));
            break;
        default:
            MR_OK(gv_array_add_i64(arr, i, x, &gce));
        }
    }
}

static void check_elem(int64_t i, void *elem, void *arg)
{
    int64_t v;

    memcpy(&v, elem, 8);
    MR_CHECK(v == ref[i], "element %lld is %lld, expected %lld", (long long)i,
             (long long)v, (long long)ref[i]);
    MR_CHECK(gv_array_owner(arr, i) == gv_rank(), "element %lld: owner %d",
             (long long)i, gv_array_owner(arr, i));
    *(int64_t *)arg += 1;
}

/* Record j of the wide array, word t. */
static int64_t rec(int64_t j, int t, int64_t round)
{
    return j * 1000 + t * 7 + round;
}

static void bulk(int64_t wi, void *arg)
{
    int64_t  w = gv_rank() * (o.workers / gv_nranks()) + wi;
    uint64_t s = seed_of(w) ^ 0xb01c;
    int64_t  lo, cnt, j, buf[3 * 700];
    int      t;

    /* Writers: each worker owns a stripe of 64 records per round. */
    if (w * 64 < o.n) {
        lo  = w * 64;
        cnt = (lo + 64 <= o.n) ? 64 : o.n - lo;
        for (j = 0; j < cnt; j++)
            for (t = 0; t < 3; t++)
                buf[3 * j + t] = rec(lo + j, t, 1);
        MR_OK(gv_array_put_range(wide, lo, cnt, buf));
    }
    (void)s;
}

static void bulk_read(int64_t wi, void *arg)
{
    int64_t  w = gv_rank() * (o.workers / gv_nranks()) + wi;
    uint64_t s = seed_of(w) ^ 0x4ead;
    int64_t  lo, cnt, j, buf[3 * 700];
    int      t;

    cnt = (int64_t)(mr_rand(&s) % 700) + 1;
    if (cnt > o.n)
        cnt = o.n;
    lo = (int64_t)(mr_rand(&s) % (uint64_t)(o.n - cnt + 1));
    MR_OK(gv_array_get_range(wide, lo, cnt, buf));
    for (j = 0; j < cnt; j++)
        for (t = 0; t < 3; t++)
            MR_CHECK(buf[3 * j + t] == rec(lo + j, t, 1),
                     "get_range [%lld, +%lld): record %lld word %d is %lld",
                     (long long)lo, (long long)cnt, (long long)(lo + j), t,
                     (long long)buf[3 * j + t]);
}

/* -H: an array larger than the global heap is GV_ERR_NO_MEMORY on every
 * rank, and the runtime's error names GV_HEAP (the driver checks). */
static void run_too_big(void *arg)
{
    gv_array_t *big = NULL;
    gv_status_t st  = gv_array_create((int64_t)1 << 40, 8, GV_DIST_BLOCK, 0,
                                      &big);

    MR_CHECK(st == GV_ERR_NO_MEMORY, "a 8 TiB array: %s", gv_status_str(st));
    MR_OK(gv_array_create(1000, 8, GV_DIST_BLOCK, 0, &big));
    gv_array_destroy(big);
    if (gv_rank() == 0)
        printf("ok: an array beyond the heap was refused\n");
}

static void run(void *arg)
{
    gv_dist_t d   = o.cyclic ? GV_DIST_CYCLIC : GV_DIST_BLOCK;
    int64_t   per = o.workers / gv_nranks(), n, i, sum, tot, mine = 0, lo;
    int64_t   cnt, want, k, *loc;
    double    dmin, dmax;
    gv_array_t *dbl;

    MR_OK(gv_array_create(o.n, 8, d, o.block, &arr));
    MR_OK(gv_array_create(o.n, 24, d, o.block, &wide));
    /* One event for all ranks: rank 0 makes it, everyone learns it. */
    if (gv_rank() == 0)
        MR_OK(gv_gce_create(&gce));
    MR_OK(gv_broadcast(0, &gce, sizeof(gce)));
    replay();
    MR_OK(gv_parallel_for(0, per, 1, worker, NULL));
    MR_OK(gv_gce_wait(&gce));
    gv_coll_barrier();

    /* Every element, at its home, through the loop and the local view. */
    MR_OK(gv_array_forall(arr, 0, check_elem, &mine, NULL));
    cnt = gv_array_local_count(arr);
    MR_CHECK(mine == cnt, "loop visited %lld of %lld local elements",
             (long long)mine, (long long)cnt);
    n = cnt;
    MR_OK(gv_allreduce(&n, 1, GV_INT64, GV_SUM));
    MR_CHECK(n == o.n, "local parts hold %lld elements, not %lld",
             (long long)n, (long long)o.n);
    loc = gv_array_local(arr);
    for (k = 0; k < cnt; k++) {
        i = gv_array_global_index(arr, gv_rank(), k);
        MR_CHECK(loc[k] == ref[i], "local view %lld (global %lld) wrong",
                 (long long)k, (long long)i);
    }
    if (!o.cyclic) {
        lo = gv_array_local_lo(arr);
        MR_CHECK((cnt == 0) || (gv_array_global_index(arr, gv_rank(),
                                                      cnt - 1) ==
                                lo + cnt - 1), "block slice not contiguous");
    }
    /* Blocking reads of random elements from this rank. */
    for (k = 0; k < 200; k++) {
        int64_t v;
        i = (k * 7919 + gv_rank() * 31) % o.n;
        MR_OK(gv_array_get(arr, i, &v));
        MR_CHECK(v == ref[i], "get %lld: %lld, expected %lld", (long long)i,
                 (long long)v, (long long)ref[i]);
    }

    /* Reduction and exclusive scan against the reference. */
    MR_OK(gv_array_reduce(arr, GV_INT64, GV_SUM, &sum));
    for (want = 0, i = 0; i < o.n; i++)
        want += ref[i];
    MR_CHECK(sum == want, "sum %lld, expected %lld", (long long)sum,
             (long long)want);
    MR_OK(gv_array_scan(arr, GV_INT64, GV_SUM, &tot));
    MR_CHECK(tot == want, "scan total %lld, expected %lld", (long long)tot,
             (long long)want);
    for (want = 0, i = 0; i < o.n; i++) {
        int64_t v = ref[i];
        ref[i] = want;
        want += v;
    }
    mine = 0;
    MR_OK(gv_array_forall(arr, 0, check_elem, &mine, NULL));

    /* Min and max scans over doubles. */
    MR_OK(gv_array_create(o.n, 8, d, o.block, &dbl));
    {
        double *dl = gv_array_local(dbl), dv, best = DBL_MAX;
        for (k = 0; k < gv_array_local_count(dbl); k++) {
            i     = gv_array_global_index(dbl, gv_rank(), k);
            dl[k] = (double)((i * 7919) % 10007) - 5000.5;
        }
        gv_coll_barrier();
        MR_OK(gv_array_reduce(dbl, GV_DOUBLE, GV_MIN, &dmin));
        MR_OK(gv_array_reduce(dbl, GV_DOUBLE, GV_MAX, &dmax));
        MR_OK(gv_array_scan(dbl, GV_DOUBLE, GV_MIN, &dv));
        MR_CHECK(dv == dmin, "min scan total %g, reduce %g", dv, dmin);
        for (i = 0; i < o.n; i++) {
            double x = (double)((i * 7919) % 10007) - 5000.5, got;
            if (i % 97 == 0) {
                MR_OK(gv_array_get(dbl, i, &got));
                MR_CHECK(got == best, "min scan at %lld: %g, expected %g",
                         (long long)i, got, best);
            }
            if (x < best)
                best = x;
        }
        MR_CHECK(best == dmin, "min %g, expected %g", dmin, best);
    }
    gv_array_destroy(dbl);

    /* Bulk copies across owners and blocks. */
    MR_OK(gv_parallel_for(0, per, 1, bulk, NULL));
    gv_coll_barrier();
    MR_OK(gv_parallel_for(0, per, 1, bulk_read, NULL));
    gv_coll_barrier();

    if (gv_rank() == 0)
        gv_gce_destroy(&gce);
    gv_array_destroy(wide);
    gv_array_destroy(arr);
    if (gv_rank() == 0)
        printf("ok: %lld elements (%s), %lld workers\n", (long long)o.n,
               o.cyclic ? "block-cyclic" : "block", (long long)o.workers);
}

int main(int argc, char **argv)
{
    int c, too_big = 0;

    while ((c = getopt(argc, argv, "cb:N:w:n:H")) != -1) {
        switch (c) {
        case 'H': too_big = 1; break;
        case 'c': o.cyclic = 1; break;
        case 'b': o.block = strtoll(optarg, NULL, 0); break;
        case 'N': o.n = strtoll(optarg, NULL, 0); break;
        case 'w': o.workers = strtoll(optarg, NULL, 0); break;
        case 'n': o.ops = strtoll(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: fw_containers_array [-c] [-b block] "
                    "[-N elements >= 8] [-w workers] [-n ops] [-H]\n");
            return 2;
        }
    }
    if ((o.n < 8) || (o.block < 0) || (o.workers < 1) || (o.ops < 1)) {
        fprintf(stderr, "fw_containers_array: bad option values\n");
        return 2;
    }
    mr_init(&argc, &argv);
    if (too_big) {
        MR_OK(gv_run_all(run_too_big, NULL, 0));
        gv_finalize();
        return 0;
    }
    o.workers = (o.workers / gv_nranks()) * gv_nranks();
    MR_CHECK(o.workers * 64 >= o.n, "too few workers (%lld) to write %lld "
             "records in stripes of 64", (long long)o.workers,
             (long long)o.n);
    ref = calloc((size_t)o.n, 8);
    MR_CHECK(ref != NULL, "out of memory");
    MR_OK(gv_run_all(run, NULL, 0));
    gv_finalize();
    return 0;
}
