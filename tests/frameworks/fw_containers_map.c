/* The distributed hash map against a sequential reference: thousands of
 * workers on every rank issue random combines (or inserts, for a set),
 * erases, overwrites, visits and lookups, blocking and asynchronous; every
 * rank replays all workers' operations into a plain array, and the map's
 * exact contents (every entry at its home, the size, every lookup) must
 * match it. Run: gvrun -n 3 build/tests/frameworks/fw_containers_map
 * [-k key bytes] [-v value bytes, 0: a set] [-w workers] [-n ops] [-K keys]
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/mr.h"
#include <grapevine/fw/hashmap.h>

#include <getopt.h>

#define MAXW 16 /* value words */

static struct {
    size_t   ks, vs;
    int64_t  workers, ops, keys;
    uint64_t seed;
} o = {8, 8, 2000, 40, 5000, 1};

static gv_hashmap_t *map;
static gv_gce_t      gce;
static int64_t      *ref;      /* keys x words */
static uint8_t      *present;
static int64_t       phase;

static int64_t nw(void)
{
    return (int64_t)(o.vs / 8);
}

static void key_of(int64_t k, uint8_t *key)
{
    size_t i;

    memcpy(key, &k, 8);
    for (i = 8; i < o.ks; i++)
        key[i] = (uint8_t)(k * 31 + (int64_t)i);
}

static void val_of(int64_t x, int64_t *v)
{
    int64_t j;

    for (j = 0; j < nw(); j++)
        v[j] = x * (j + 1);
}

/* Componentwise sum: the combiner of maps with wide values. */
static void sum_words(void *value, const void *incoming, size_t val_size)
{
    int64_t a[MAXW], b[MAXW];
    size_t  j;

    memcpy(a, value, val_size);
    memcpy(b, incoming, val_size);
    for (j = 0; j < val_size / 8; j++)
        a[j] += b[j];
    memcpy(value, a, val_size);
}

/* Visitor: add x*(j+1) to word j, inserting the key if absent. */
static void visit_add(gv_hashmap_t *m, const void *key, void *value,
                      const void *args, size_t len)
{
    int64_t x, v[MAXW];

    MR_CHECK(len == 8, "visitor got %zu bytes of arguments", len);
    memcpy(&x, args, 8);
    val_of(x, v);
    if (value == NULL)
        MR_CHECK(gv_hashmap_local_insert(m, key, v) != NULL,
                 "visitor ran away from the key's home");
    else if (o.vs > 0)
        sum_words(value, v, o.vs);
}

/* ---- the reference ----------------------------------------------------------- */

static void ref_add(int64_t k, int64_t x)
{
    int64_t j;

    if (!present[k])
        for (j = 0; j < nw(); j++)
            ref[k * nw() + j] = 0;
    present[k] = 1;
    for (j = 0; j < nw(); j++)
        ref[k * nw() + j] += x * (j + 1);
}

static void ref_set(int64_t k, int64_t x)
{
    int64_t j;

    present[k] = 1;
    for (j = 0; j < nw(); j++)
        ref[k * nw() + j] = x * (j + 1);
}

/* Key of an operation of phase 1 (the lower half of the keys, so that
 * the visits of phase 4 create keys too) or phase 4 (never a key of
 * phase 2's erasures, which stay absent to the end). */
static int64_t pick(int64_t ph, uint64_t r)
{
    int64_t k;

    if (ph == 1)
        return (int64_t)(r % (uint64_t)((o.keys + 1) / 2));
    k = (int64_t)(r % (uint64_t)o.keys);
    if (k % 5 == 0)
        k = (k + 2 < o.keys) ? k + 2 : 2 % o.keys;
    return k;
}

/* Worker w's random stream for a phase. */
static uint64_t seed_of(int64_t w, int64_t ph)
{
    return o.seed * 1000003u + (uint64_t)w * 7919u + (uint64_t)ph * 104729u;
}

/* Phase 1: combine (insert for a set). Phase 2: erase keys k = 0 mod 5,
 * each by one worker. Phase 3: overwrite keys k = 1 mod 5. Phase 4:
 * visits. The reference replays the same streams. */
static void replay(int64_t ph)
{
    int64_t w, i, k;

    for (w = 0; w < o.workers; w++) {
        uint64_t s = seed_of(w, ph);
        if ((ph == 1) || (ph == 4)) {
            for (i = 0; i < o.ops; i++) {
                int64_t kk = pick(ph, mr_rand(&s));
                int64_t x  = (int64_t)(mr_rand(&s) % 100) + 1;
                mr_rand(&s); /* the blocking/async choice */
                ref_add(kk, x);
            }
        }
    }
    if (ph == 2)
        for (k = 0; k < o.keys; k += 5)
            present[k] = 0;
    if (ph == 3)
        for (k = 1; k < o.keys; k += 5)
            ref_set(k, 3 * k + 1);
}

/* ---- the workers ------------------------------------------------------------ */

static void worker(int64_t i, void *arg)
{
    int64_t  w = gv_rank() * (o.workers / gv_nranks()) + i, n, k;
    uint64_t s = seed_of(w, phase);
    uint8_t  key[GV_HASHMAP_KEY_MAX];
    int64_t  v[MAXW];

    if ((phase == 1) || (phase == 4)) {
        for (n = 0; n < o.ops; n++) {
            int64_t kk = pick(phase, mr_rand(&s));
            int64_t x  = (int64_t)(mr_rand(&s) % 100) + 1;
            int     blocking = (mr_rand(&s) % 4) == 0;
            key_of(kk, key);
            val_of(x, v);
            if (phase == 4) {
                if (blocking)
                    MR_OK(gv_hashmap_visit(map, key, visit_add, &x, 8));
                else if (o.ks == 8)
                    MR_OK(gv_hashmap_visit_i64_async(map, kk, visit_add, &x,
                                                     8, &gce));
                else
                    MR_OK(gv_hashmap_visit_async(map, key, visit_add, &x, 8,
                                                 &gce));
            } else if (o.vs == 0) {
                if (blocking)
                    MR_OK(gv_hashmap_insert(map, key, NULL));
                else
                    MR_OK(gv_hashmap_insert_async(map, key, NULL, &gce));
            } else if (blocking) {
                MR_OK(gv_hashmap_combine(map, key, v));
            } else if (o.ks == 8) {
                MR_OK(gv_hashmap_combine_i64_async(map, kk, v, &gce));
            } else {
                MR_OK(gv_hashmap_combine_async(map, key, v, &gce));
            }
        }
        return;
    }
    /* Phases 2 and 3: worker w owns keys k with (k / 5) mod W == w. */
    for (k = (phase == 2) ? 0 : 1; k < o.keys; k += 5) {
        if ((k / 5) % o.workers != w)
            continue;
        key_of(k, key);
        if (phase == 2) {
            if (k % 2 == 0) {
                gv_status_t st = gv_hashmap_erase(map, key);
                MR_CHECK(st == (present[k] ? GV_OK : GV_ERR_NOT_FOUND),
                         "erase of key %lld returned %s, present %d",
                         (long long)k, gv_status_str(st), present[k]);
            } else if (o.ks == 8) {
                MR_OK(gv_hashmap_erase_i64_async(map, k, &gce));
            } else {
                MR_OK(gv_hashmap_erase_async(map, key, &gce));
            }
        } else {
            val_of(3 * k + 1, v);
            if (k % 2 == 0)
                MR_OK(gv_hashmap_insert(map, key, v));
            else if (o.ks == 8)
                MR_OK(gv_hashmap_insert_i64_async(map, k, v, &gce));
            else
                MR_OK(gv_hashmap_insert_async(map, key, v, &gce));
        }
    }
}

/* Phase 5: every worker looks up random keys, blocking and async. */
static void lookups(int64_t i, void *arg)
{
    int64_t     w = gv_rank() * (o.workers / gv_nranks()) + i, n;
    uint64_t    s = seed_of(w, 5);
    uint8_t     key[GV_HASHMAP_KEY_MAX];
    int64_t     got[MAXW];
    gv_future_t f;
    gv_status_t st;

    for (n = 0; n < o.ops / 4 + 1; n++) {
        int64_t k = (int64_t)(mr_rand(&s) % (uint64_t)o.keys);
        key_of(k, key);
        memset(got, 0xee, sizeof(got));
        if (n % 2 == 0) {
            st = (o.ks == 8) ? gv_hashmap_lookup_i64(map, k, got)
                             : gv_hashmap_lookup(map, key, got);
        } else {
            MR_OK(gv_hashmap_lookup_async(map, key, got, &f));
            st = gv_future_wait(&f, NULL);
        }
        MR_CHECK(st == (present[k] ? GV_OK : GV_ERR_NOT_FOUND),
                 "lookup of key %lld: %s, expected present %d", (long long)k,
                 gv_status_str(st), present[k]);
        if (present[k])
            MR_CHECK(memcmp(got, &ref[k * nw()], o.vs) == 0,
                     "lookup of key %lld: wrong value %lld, expected %lld",
                     (long long)k, (long long)got[0],
                     (long long)((nw() > 0) ? ref[k * nw()] : 0));
    }
}

static int64_t seen;

static void check_entry(gv_hashmap_t *m, const void *key, void *value,
                        void *arg)
{
    int64_t k;
    uint8_t want[GV_HASHMAP_KEY_MAX];

    memcpy(&k, key, 8);
    MR_CHECK((k >= 0) && (k < o.keys), "stray key %lld", (long long)k);
    key_of(k, want);
    MR_CHECK(memcmp(want, key, o.ks) == 0, "key %lld garbled", (long long)k);
    MR_CHECK(present[k], "key %lld should have been erased", (long long)k);
    MR_CHECK(memcmp(value, &ref[k * nw()], o.vs) == 0,
             "key %lld holds %lld, expected %lld", (long long)k,
             (long long)((nw() > 0) ? *(int64_t *)value : 0),
             (long long)((nw() > 0) ? ref[k * nw()] : 0));
    MR_CHECK(gv_hashmap_home(m, key) == gv_rank(), "key %lld away from home",
             (long long)k);
    seen++;
}

/* Order: one flow per rank issues, per key, insert 5, combine 7, erase,
 * combine k, combine 1 (and, for every third key, erase), async, then a
 * blocking lookup of every seventh key at once; the lookup and the final
 * contents must show each sequence applied in order. Maps of 8-byte keys
 * and values queue these at the home and apply them later in groups: this
 * checks that nothing overtakes (local and remote homes alike). */
#define ORDER_KEYS 3000

static void order_check(void)
{
    gv_hashmap_opts_t opts = {gv_hashmap_sum_i64, 0};
    gv_hashmap_t     *m;
    int64_t           k, v, five = 5, seven = 7, one = 1, n = 0, size;
    int64_t           lo = gv_rank() * ORDER_KEYS, all;

    MR_OK(gv_hashmap_create(8, 8, &opts, &m));
    for (k = lo; k < lo + ORDER_KEYS; k++) {
        MR_OK(gv_hashmap_insert_i64_async(m, k, &five, &gce));
        MR_OK(gv_hashmap_combine_i64_async(m, k, &seven, &gce));
        MR_OK(gv_hashmap_erase_i64_async(m, k, &gce));
        MR_OK(gv_hashmap_combine_i64_async(m, k, &k, &gce));
        MR_OK(gv_hashmap_combine_i64_async(m, k, &one, &gce));
        if (k % 3 == 0)
            MR_OK(gv_hashmap_erase_i64_async(m, k, &gce));
        if (k % 7 == 0) {
            gv_status_t st = gv_hashmap_lookup_i64(m, k, &v);
            if (k % 3 == 0)
                MR_CHECK(st == GV_ERR_NOT_FOUND, "key %lld: lookup after "
                         "its erase returned %s", (long long)k,
                         gv_status_str(st));
            else
                MR_CHECK((st == GV_OK) && (v == k + 1), "key %lld: lookup "
                         "returned %s, value %lld, expected %lld",
                         (long long)k, gv_status_str(st), (long long)v,
                         (long long)(k + 1));
        }
    }
    MR_OK(gv_gce_wait(&gce));
    gv_coll_barrier();
    all = ORDER_KEYS * gv_nranks();
    for (k = 0; k < all; k++) {
        int64_t *p;
        if (gv_hashmap_home_i64(m, k) != gv_rank())
            continue;
        p = gv_hashmap_local_find(m, &k);
        if (k % 3 == 0) {
            MR_CHECK(p == NULL, "key %lld should have been erased",
                     (long long)k);
        } else {
            MR_CHECK((p != NULL) && (*p == k + 1), "key %lld holds %lld, "
                     "expected %lld", (long long)k,
                     (long long)((p != NULL) ? *p : -1), (long long)(k + 1));
            n++;
        }
    }
    MR_OK(gv_allreduce(&n, 1, GV_INT64, GV_SUM));
    MR_OK(gv_hashmap_size(m, &size));
    MR_CHECK((n == size) && (size == all - (all + 2) / 3), "%lld entries "
             "found, size %lld, expected %lld", (long long)n,
             (long long)size, (long long)(all - (all + 2) / 3));
    gv_hashmap_destroy(m);
}

static void run(void *arg)
{
    gv_hashmap_opts_t  opts = {o.vs ? sum_words : NULL, 0};
    gv_hashmap_stats_t st;
    int64_t            k, want = 0, size, resized;
    int64_t            per = o.workers / gv_nranks();

    if (o.ks == 8 && o.vs == 8)
        opts.combine = gv_hashmap_sum_i64;
    MR_OK(gv_hashmap_create(o.ks, o.vs, &opts, &map));
    /* One event for all ranks: rank 0 makes it, everyone learns it. */
    if (gv_rank() == 0)
        MR_OK(gv_gce_create(&gce));
    MR_OK(gv_broadcast(0, &gce, sizeof(gce)));
    for (phase = 1; phase <= 4; phase++) {
        /* The reference first (phase 2's blocking erases check against
         * the state before the phase), then the phase itself. */
        if (phase != 2)
            replay(phase);
        MR_OK(gv_parallel_for(0, per, 1, worker, NULL));
        MR_OK(gv_gce_wait(&gce));
        if (phase == 2)
            replay(phase);
        gv_coll_barrier();
    }
    MR_OK(gv_parallel_for(0, per, 1, lookups, NULL));
    gv_coll_barrier();
    for (k = 0; k < o.keys; k++)
        want += present[k];
    MR_OK(gv_hashmap_forall(map, check_entry, NULL, NULL));
    MR_OK(gv_allreduce(&seen, 1, GV_INT64, GV_SUM));
    MR_CHECK(seen == want, "%lld entries at their homes, expected %lld",
             (long long)seen, (long long)want);
    MR_OK(gv_hashmap_size(map, &size));
    MR_CHECK(size == want, "size %lld, expected %lld", (long long)size,
             (long long)want);
    gv_hashmap_stats(map, &st);
    resized = (int64_t)st.resizes;
    MR_OK(gv_allreduce(&resized, 1, GV_INT64, GV_SUM));
    MR_CHECK((want < 1000) || (resized > 0), "tables never grew");
    gv_hashmap_destroy(map);
    order_check();
    if (gv_rank() == 0)
        gv_gce_destroy(&gce);
    if (gv_rank() == 0)
        printf("ok: %lld keys, %lld workers, key %zu value %zu bytes, %lld "
               "resizes\n", (long long)want, (long long)o.workers, o.ks, o.vs,
               (long long)resized);
}

int main(int argc, char **argv)
{
    int c;

    while ((c = getopt(argc, argv, "k:v:w:n:K:s:")) != -1) {
        switch (c) {
        case 'k': o.ks = strtoul(optarg, NULL, 0); break;
        case 'v': o.vs = strtoul(optarg, NULL, 0); break;
        case 'w': o.workers = strtoll(optarg, NULL, 0); break;
        case 'n': o.ops = strtoll(optarg, NULL, 0); break;
        case 'K': o.keys = strtoll(optarg, NULL, 0); break;
        case 's': o.seed = strtoull(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: fw_containers_map [-k key bytes >= 8] "
                    "[-v value bytes, a multiple of 8 up to 128] [-w workers]"
                    " [-n ops] [-K keys] [-s seed]\n");
            return 2;
        }
    }
    if ((o.ks < 8) || (o.ks > GV_HASHMAP_KEY_MAX) || (o.vs % 8 != 0) ||
        (o.vs > 8 * MAXW) || (o.workers < 1) || (o.ops < 1) || (o.keys < 3)) {
        fprintf(stderr, "fw_containers_map: bad option values\n");
        return 2;
    }
    mr_init(&argc, &argv);
    o.workers = (o.workers / gv_nranks()) * gv_nranks();
    ref     = calloc((size_t)(o.keys * (nw() ? nw() : 1)), 8);
    present = calloc((size_t)o.keys, 1);
    MR_CHECK((ref != NULL) && (present != NULL), "out of memory");
    MR_OK(gv_run_all(run, NULL, 0));
    gv_finalize();
    return 0;
}
