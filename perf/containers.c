/* The distributed containers' rates: aggregated hash-map inserts of random
 * 64-bit keys (the GUPS of a hash table), blocking lookups of those keys
 * from many workers, and bag appends to random ranks; and the same inserts
 * shipped by gv_delegate_call_async instead of the map's registered
 * active messages, to show what the registered handler is worth.
 * Run: gvrun -n 2 build/perf/containers [--log2 n] [--ops list]
 * (perf/containers.sh runs it alternately with perf/gups --mode agg and
 * reports each rate as a fraction of GUPS agg's.)
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Every rank makes 2^n operations; keys are splitmix64 of (rank, i), so
 * they are distinct and spread evenly over the homes. Asynchronous
 * operations are issued from one flow per rank that progresses every 256
 * operations, as perf/gups does; lookups are blocking, from many workers. Rates count every
 * rank's operations over the wall time rank 0 measures from a barrier to
 * the end of the phase (the event's wait, which covers every rank), and
 * cpu_ns_per_op is rank 0's CPU time over its own share of them, which a
 * loaded machine disturbs less than the wall time. The
 * map is created with the number of keys as its capacity hint unless
 * --grow is given, so that the insert phase measures inserts, not rebuilds.
 * Each phase checks what it did: every lookup must find its key with the
 * value inserted, the bag must hold every append.
 */
#define _GNU_SOURCE
#include <grapevine.h>
#include <grapevine/fw/bag.h>
#include <grapevine/fw/hashmap.h>

#include <getopt.h>

#include "out.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK 4096 /* operations per call of a phase's body */
#define POLL  256  /* operations between progress calls */

static struct {
    int  log2n;
    int  grow;
    char ops[128];
} opt = {20, 0, "insert,lookup,bag,dinsert"};

static gv_hashmap_t *map;
static gv_bag_t     *bag;
static gv_gce_t      gce;
static gv_gaddr_t    sym;      /* a symmetric word: delegates' target */
static int64_t       per_rank;
static int64_t       misses;

static inline uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline int64_t key_of(int rank, int64_t i)
{
    return (int64_t)mix(((uint64_t)rank << 40) ^ (uint64_t)i);
}

static void insert_chunk(int64_t c, void *arg)
{
    int64_t i, lo = c * CHUNK, hi = lo + CHUNK;

    for (i = lo; i < hi; i++) {
        int64_t k = key_of(gv_rank(), i), v = i;
        gv_hashmap_insert_i64_async(map, k, &v, &gce);
        if ((i & (POLL - 1)) == 0)
            gv_progress();
    }
}

/* The delegate form: a call at the key's home that inserts there. */
static size_t insert_at_home(void *local, const void *args, size_t len,
                             void *result)
{
    int64_t kv[2];

    memcpy(kv, args, 16);
    gv_hashmap_local_insert(map, &kv[0], &kv[1]);
    return 0;
}

static void dinsert_chunk(int64_t c, void *arg)
{
    int64_t i, lo = c * CHUNK, hi = lo + CHUNK;

    for (i = lo; i < hi; i++) {
        int64_t kv[2] = {key_of(gv_rank(), i), i};
        int     home  = gv_hashmap_home_i64(map, kv[0]);
        gv_delegate_call_async(gv_gaddr_on(sym, home), insert_at_home, kv, 16,
                               &gce);
        if ((i & (POLL - 1)) == 0)
            gv_progress();
    }
}

static void lookup_leaf(int64_t i, void *arg)
{
    int64_t v;

    if ((gv_hashmap_lookup_i64(map, key_of(gv_rank(), i), &v) != GV_OK) ||
        (v != i))
        misses++;
}

static void bag_chunk(int64_t c, void *arg)
{
    int64_t i, lo = c * CHUNK, hi = lo + CHUNK;
    int     p = gv_nranks();

    for (i = lo; i < hi; i++) {
        int64_t k = key_of(gv_rank(), i);
        gv_bag_append_on(bag, (int)((uint64_t)k % (uint64_t)p), &k, &gce);
        if ((i & (POLL - 1)) == 0)
            gv_progress();
    }
}

/* CPU seconds this process used: on a shared machine, where a rank gets
 * a fraction of a core, the wall time says more of the machine's load
 * than of the work. */
static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu0;

static void report(const char *op, double t0, int64_t n_total)
{
    double dt = gv_wtime() - t0, cpu = cpu_now() - cpu0;

    if (gv_rank() == 0) {
        char cfg[64];

        snprintf(cfg, sizeof(cfg), "op=%s,ops=%lld", op, (long long)n_total);
        out_row1("mups", cfg, -1, "Mops_per_s", (double)n_total / dt / 1e6);
    }
    if ((gv_rank() == 0) && !out_machine())
        printf("containers transport=%s ranks=%d op=%s ops=%lld "
               "seconds=%.3f mups=%.2f cpu_ns_per_op=%.0f\n",
               gv_transport_name(), gv_nranks(), op, (long long)n_total, dt,
               (double)n_total / dt / 1e6,
               cpu * 1e9 / (double)(n_total / gv_nranks()));
    fflush(stdout);
}

static int fail(const char *what)
{
    if (gv_rank() == 0)
        fprintf(stderr, "containers: %s\n", what);
    return 1;
}

static void phase(const char *op, int *bad)
{
    int64_t           total = per_rank * gv_nranks(), n;
    double            t0;
    gv_hashmap_opts_t o = {NULL, opt.grow ? 0 : total};

    if (strcmp(op, "insert") == 0 || strcmp(op, "dinsert") == 0) {
        if (map != NULL)
            gv_hashmap_destroy(map);
        if (gv_hashmap_create(8, 8, &o, &map) != GV_OK) {
            *bad = fail("cannot create the map");
            return;
        }
        gv_coll_barrier();
        t0   = gv_wtime();
        cpu0 = cpu_now();
        for (n = 0; n < per_rank / CHUNK; n++)
            ((op[0] == 'd') ? dinsert_chunk : insert_chunk)(n, NULL);
        if (gv_gce_wait(&gce) != GV_OK)
            *bad = fail("inserts failed");
        report(op, t0, total);
        gv_hashmap_size(map, &n);
        if (n != total)
            *bad = fail("the map does not hold every key");
    } else if (strcmp(op, "lookup") == 0) {
        if (map == NULL) {
            *bad = fail("lookup needs an insert phase before it");
            return;
        }
        misses = 0;
        gv_coll_barrier();
        t0   = gv_wtime();
        cpu0 = cpu_now();
        gv_parallel_for(0, per_rank, 64, lookup_leaf, NULL);
        gv_coll_barrier();
        report(op, t0, total);
        gv_allreduce(&misses, 1, GV_INT64, GV_SUM);
        if (misses != 0)
            *bad = fail("lookups missed keys or found wrong values");
    } else if (strcmp(op, "bag") == 0) {
        gv_bag_clear(bag);
        gv_coll_barrier();
        t0   = gv_wtime();
        cpu0 = cpu_now();
        for (n = 0; n < per_rank / CHUNK; n++)
            bag_chunk(n, NULL);
        if (gv_gce_wait(&gce) != GV_OK)
            *bad = fail("appends failed");
        report(op, t0, total);
        gv_bag_size(bag, &n);
        if (n != total)
            *bad = fail("the bag does not hold every append");
    } else {
        *bad = fail("unknown operation in --ops (accepted: insert, lookup, "
                    "bag, dinsert)");
    }
}

static int bad_run; /* a phase failed (every rank decides the same) */

static void run(void *arg)
{
    int  *bad = &bad_run;
    char  ops[128], *save = NULL, *op;

    if (gv_rank() == 0) {
        if (gv_gce_create(&gce) != GV_OK ||
            gv_global_alloc_symmetric(8, &sym) != GV_OK)
            gv_abort(1, "containers: cannot make an event or a heap word");
    }
    gv_broadcast(0, &gce, sizeof(gce));
    gv_broadcast(0, &sym, sizeof(sym));
    if (gv_bag_create(8, &bag) != GV_OK)
        gv_abort(1, "containers: cannot create the bag");
    if (gv_rank() == 0)
        out_begin("containers", gv_transport_name(), gv_nranks());
    snprintf(ops, sizeof(ops), "%s", opt.ops);
    for (op = strtok_r(ops, ",", &save); op != NULL && !*bad;
         op = strtok_r(NULL, ",", &save))
        phase(op, bad);
    gv_hashmap_destroy(map);
    gv_bag_destroy(bag);
    if (gv_rank() == 0)
        out_end();
}

static const char usage_text[] =
    "usage: containers [--log2 n] [--ops LIST] [--grow] [--csv | --format "
    "F] [-h]\n"
    "  --log2 n   2^n operations per rank, 12..30\n"
    "  --ops LIST phases in order, comma-separated: insert, lookup, bag,\n"
    "             dinsert\n"
    "  --grow     the map starts small and grows (else sized for all keys)\n"
    OUT_USAGE;

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"log2", required_argument, NULL, 'l'},
        {"ops", required_argument, NULL, 'o'},
        {"grow", no_argument, NULL, 'g'},
        OUT_LONGOPTS,
        {NULL, 0, NULL, 0}};
    int   c;

    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        if (out_option("containers", usage_text, c))
            continue;
        switch (c) {
        case 'l':
            opt.log2n = hop_arg_int("containers", usage_text, "--log2",
                                    optarg, 12, 30, "as log2 of the "
                                    "operations per rank");
            break;
        case 'o':
            snprintf(opt.ops, sizeof(opt.ops), "%s", optarg);
            break;
        case 'g':
            opt.grow = 1;
            break;
        default: hop_getopt_fail("containers", usage_text, c, argv, lo);
        }
    }
    hop_no_operands("containers", usage_text, argc, argv);
    per_rank = (int64_t)1 << opt.log2n;
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    gv_run_all(run, NULL, 0);
    gv_finalize();
    return bad_run;
}
