/* Unbalanced Tree Search (Olivier et al., LCPC'06) on the tasking layer:
 * every tree node is a task, spawned public so that idle ranks steal them,
 * and a finish scope on rank 0 detects the end of the traversal wherever
 * the nodes ran. The tree is implicit, generated on the fly from a hash of
 * each node's parent (until the DSM exists to hold it in memory, as the
 * Grappa tech report's variant does). SPDX-License-Identifier: BSD-3-Clause
 *
 * Trees (the shapes of UTS's T1 and T3; the node counts differ from the
 * published ones because the splittable generator here is a 64-bit mixing
 * hash, not UTS's SHA-1):
 *   t1  geometric, fixed shape: every node above depth 10 has a
 *       geometrically distributed number of children with mean 4. Shallow
 *       and wide: plenty of parallel slack.
 *   t3  binomial: the root has 2000 children; every other node has 8
 *       children with probability 0.124875, else none (q*m = 0.999). Deep
 *       and narrow: little parallel slack.
 *
 * usage: uts [-t t1|t3|all] [-g GRANULARITY] [-r SEED] [-s SCALE] [-n REPS]
 *   -t  the trees to run, t1, t3 or all (default all)
 *   -g  hash rounds per child, UTS's compute granularity, 1..1000000
 *       (default 1)
 *   -r  root seed, 0..18446744073709551615 (defaults: 8 for t1, 12 for
 *       t3: 2.8M and 2.2M nodes)
 *   -s  t1 depth / t3 root children, 1..1000000 (defaults 10 and 2000)
 *   -n  repetitions, 1..1000; the best is reported (default 3)
 * Values are decimal digits; anything else is an error naming the option.
 * Run on one rank directly, on more with gvrun -n N. One line per tree:
 *   uts tree=t1 ranks=P nodes=N depth=D seconds=S nodes_per_sec=X
 */
#include <grapevine.h>
#include "tasking/task_internal.h"

#include "hop.h"
#include "out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    uint64_t state;  /* this node's random state */
    uint32_t depth;
    uint8_t  kind;   /* TREE_* */
} node_t;

enum { TREE_T1 = 1, TREE_T3 = 3 };

static int      granularity = 1;
static uint32_t t1_depth    = 10;
static uint32_t t3_root     = 2000;
static double   t1_mean     = 4.0;
static double   t3_q        = 0.124875;
static uint32_t t3_m        = 8;

/* Per-rank tallies; the tasks that run here update this rank's copy. */
static uint64_t my_nodes, my_leaves;
static uint32_t my_depth;

/* splitmix64 finaliser: the splittable generator. */
static inline uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline uint64_t child_state(uint64_t parent, uint32_t i)
{
    uint64_t s = parent + 0x9e3779b97f4a7c15ull * (i + 1);
    int      g;

    for (g = 0; g < granularity; g++)
        s = mix(s);
    return s;
}

static inline double uniform(uint64_t s)
{
    return (double)(mix(s ^ 0x5851f42d4c957f2dull) >> 11) * 0x1.0p-53;
}

static uint32_t num_children(const node_t *n)
{
    double u = uniform(n->state);

    if (n->kind == TREE_T1) {
        /* Geometric with mean b: P(k) = p (1-p)^k, p = 1 / (1 + b). */
        double p = 1.0 / (1.0 + t1_mean);
        if (n->depth >= t1_depth)
            return 0;
        return (uint32_t)floor(log(1.0 - u) / log(1.0 - p));
    }
    if (n->depth == 0)
        return t3_root;
    return (u < t3_q) ? t3_m : 0;
}

static void visit(void *p)
{
    node_t   n, c;
    uint32_t k, i;

    memcpy(&n, p, sizeof(n));
    my_nodes++;
    if (n.depth > my_depth)
        my_depth = n.depth;
    k = num_children(&n);
    if (k == 0) {
        my_leaves++;
        return;
    }
    c.depth = n.depth + 1;
    c.kind  = n.kind;
    for (i = 0; i < k; i++) {
        c.state = child_state(n.state, i);
        if (gv_spawn(visit, &c, sizeof(c)) != GV_OK)
            gv_abort(1, "uts: spawn failed");
    }
}

/* ---- gathering the tallies on rank 0 --------------------------------------- */

typedef struct {
    uint64_t nodes, leaves;
    uint32_t depth;
} tally_t;

static tally_t total;

static void accumulate(void *p)
{
    tally_t t;

    memcpy(&t, p, sizeof(t));
    total.nodes += t.nodes;
    total.leaves += t.leaves;
    if (t.depth > total.depth)
        total.depth = t.depth;
}

static void report(void *p)
{
    tally_t t = {.nodes = my_nodes, .leaves = my_leaves, .depth = my_depth};

    (void)p;
    my_nodes = my_leaves = 0;
    my_depth = 0;
    if (gv_spawn_on(0, accumulate, &t, sizeof(t)) != GV_OK)
        gv_abort(1, "uts: cannot report to rank 0");
}

static void gather(void)
{
    gv_finish_t f;
    int         r;

    memset(&total, 0, sizeof(total));
    gv_finish_begin(&f);
    for (r = 0; r < gv_nranks(); r++)
        if (gv_spawn_on(r, report, NULL, 0) != GV_OK)
            gv_abort(1, "uts: cannot ask rank %d", r);
    gv_finish_end(&f);
}

/* ---- main ------------------------------------------------------------------- */

static int      want_t1 = 1, want_t3 = 1, reps = 3;

static const char usage_text[] =
    "usage: uts [-t t1|t3|all] [-g GRANULARITY] [-r SEED] [-s SCALE] "
    "[-n REPS]\n"
    "  -t  the trees, t1, t3 or all (all)\n"
    "  -g  hash rounds per child, 1..1000000 (1)\n"
    "  -r  root seed, 0..18446744073709551615 (8 for t1, 12 for t3)\n"
    "  -s  t1 depth / t3 root children, 1..1000000 (10 and 2000)\n"
    "  -n  repetitions, 1..1000; the best is reported (3)\n"
    OUT_USAGE
    "  Values are decimal digits. CSV/JSON: nodes per second of each tree,\n"
    "  median, minimum and maximum of the repetitions.\n";
static uint64_t seed[4] = {0, 8, 0, 12}; /* by tree: sizable trees */

static void run_tree(int kind)
{
    double best = 0, best_s = 0, rate[1000];
    char   cfg[64];
    int    rep;

    for (rep = 0; rep < reps; rep++) {
        gv_finish_t f;
        node_t      root = {.state = mix(seed[kind]), .depth = 0,
                            .kind = (uint8_t)kind};
        double      t0, t1;

        gather(); /* start from zero everywhere */
        t0 = gv_wtime();
        gv_finish_begin(&f);
        if (gv_spawn(visit, &root, sizeof(root)) != GV_OK)
            gv_abort(1, "uts: spawn failed");
        gv_finish_end(&f);
        t1 = gv_wtime();
        gather();
        rate[rep] = (double)total.nodes / (t1 - t0);
        if ((double)total.nodes / (t1 - t0) > best) {
            best   = (double)total.nodes / (t1 - t0);
            best_s = t1 - t0;
        }
    }
    snprintf(cfg, sizeof(cfg), "tree=t%d,nodes=%llu,granularity=%d", kind,
             (unsigned long long)total.nodes, granularity);
    out_row("nodes_per_s", cfg, -1, "nodes_per_s", rate, reps);
    if (out_machine())
        return;
    /* The best of the repetitions: the machine is shared. */
    printf("uts tree=t%d ranks=%d nodes=%llu leaves=%llu depth=%u reps=%d "
           "seconds=%.3f nodes_per_sec=%.0f\n", kind, gv_nranks(),
           (unsigned long long)total.nodes, (unsigned long long)total.leaves,
           total.depth, reps, best_s, best);
    fflush(stdout);
}

static void uts_main(void *p)
{
    (void)p;
    out_begin("uts", gv_transport_name(), gv_nranks());
    if (want_t1)
        run_tree(TREE_T1);
    if (want_t3)
        run_tree(TREE_T3);
    out_end();
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {OUT_LONGOPTS, {NULL, 0, NULL, 0}};
    int opt, scale = 0;

    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((opt = getopt_long(argc, argv, ":t:g:r:s:n:h", longopts, NULL)) !=
           -1) {
        if (out_option("uts", usage_text, opt))
            continue;
        switch (opt) {
        case 't':
            want_t1 = (strcmp(optarg, "t1") == 0) || (strcmp(optarg, "all") == 0);
            want_t3 = (strcmp(optarg, "t3") == 0) || (strcmp(optarg, "all") == 0);
            if (!want_t1 && !want_t3)
                hop_fail("uts", usage_text, "-t %s: accepted t1, t3 or all",
                         optarg);
            break;
        case 'g':
            granularity = hop_arg_int("uts", usage_text, "-g", optarg, 1,
                                      1000000, "hash rounds per child");
            break;
        case 'r':
            seed[1] = seed[3] = hop_arg_u64("uts", usage_text, "-r", optarg,
                                            0, UINT64_MAX, "as the seed");
            break;
        case 'n':
            reps = hop_arg_int("uts", usage_text, "-n", optarg, 1, 1000,
                               "repetitions");
            break;
        case 's':
            scale = hop_arg_int("uts", usage_text, "-s", optarg, 1, 1000000,
                                "as t1 depth or t3 root children");
            break;
        default: hop_getopt_fail("uts", usage_text, opt, argv, longopts);
        }
    }
    hop_no_operands("uts", usage_text, argc, argv);
    if (scale > 0) {
        t1_depth = (uint32_t)scale;
        t3_root  = (uint32_t)scale;
    }
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    if (gv_run_main(uts_main, NULL, 0) != GV_OK)
        return 1;
    if (gv__env.STATS) {
        gv_task_stats_t st;
        gv_task_stats(&st);
        fprintf(stderr, "rank %d: %llu tasks, steals %llu/%llu, %llu in, "
                "%llu out\n", gv_rank(), (unsigned long long)st.tasks_run,
                (unsigned long long)st.steals,
                (unsigned long long)st.steal_attempts,
                (unsigned long long)st.tasks_stolen_in,
                (unsigned long long)st.tasks_stolen_out);
    }
    gv_finalize();
    return 0;
}
