/* GUPS over the DSM layer: random updates to a table in the global heap,
 * written as a user would write it: a parallel loop whose body is a plain
 * loop of asynchronous gv_delegate_add calls, then an exact verification.
 * The dsm mode of perf/gups, as its own binary.
 * Run: gvrun -n 2 build/perf/gups_dsm   (GV_AMO=native for transport atomics)
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The table is P * 2^n 64-bit words of the linear global heap (block-
 * cyclic over the ranks). The update stream is HPCC RandomAccess's shift
 * register x_{k+1} = (x_k << 1) ^ (x_k < 0 ? 7 : 0), as in perf/gups; an
 * update with value x adds x to word x mod (P * 2^n). The stream is cut
 * into chunks of CHUNK updates; gv_forall_index spreads the chunks over
 * the ranks, and each chunk jumps into the stream with hpcc_starts and
 * issues its adds. The loop returns once every add has landed (its
 * completion event covers them). Verification replays the stream on every
 * rank, subtracts the updates aimed at its own words, and counts the words
 * that do not return to their initial value (their global index).
 */
#define _GNU_SOURCE
#include "perf/hpcc_stream.h"
#include <grapevine.h>
#include "core/env.h"               /* gv__env.AMO: which path ran */
#include "dsm/dsm_internal.h"       /* gv__dsm_init until gv_init does it */
#include "tasking/task_internal.h"  /* gv__task_init, likewise */

#include "hop.h"
#include "out.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK  4096

static struct {
    int      logn;
    unsigned per_word;
    int      verify;
} opt = {22, 4, 1};

typedef struct {
    gv_gaddr_t table;
    uint64_t   words;    /* P * 2^n */
    uint64_t   mask;     /* words - 1 if a power of two, else 0 */
    uint64_t   updates;
} job_t;

static job_t    job;
static uint64_t my_errors;


static inline uint64_t word_of(const job_t *j, uint64_t ran)
{
    return (j->mask != 0) ? (ran & j->mask) : (ran % j->words);
}

/* ---- the benchmark, as a user writes it ---------------------------------- */

static void chunk(int64_t c, void *arg)
{
    const job_t *j   = arg;
    uint64_t     ran = hpcc_starts(c * CHUNK);
    int          k;

    for (k = 0; k < CHUNK; k++) {
        ran = next_ran(ran);
        gv_delegate_add(gv_gaddr_add(j->table, 8 * (int64_t)word_of(j, ran)),
                        (int64_t)ran, NULL);
    }
}

static void init_word(int64_t i, void *elem, void *arg)
{
    uint64_t v = (uint64_t)i;
    memcpy(elem, &v, 8);
}

static void check_word(int64_t i, void *elem, void *arg)
{
    uint64_t v;

    memcpy(&v, elem, 8);
    if (v != (uint64_t)i)
        my_errors++;
}

/* Replay the whole stream; take back the updates aimed at this rank. */
static void take_back(void)
{
    uint64_t ran = 1, i;
    int      me  = gv_rank();

    for (i = 0; i < job.updates; i++) {
        gv_gaddr_t a;
        ran = next_ran(ran);
        a   = gv_gaddr_add(job.table, 8 * (int64_t)word_of(&job, ran));
        if (gv_gaddr_rank(a) == me)
            *(uint64_t *)gv_gaddr_local(a) -= ran;
    }
}

/* Every value is in decimal digits; anything else, or an argument that
 * is not an option, is an error naming it. */
static const char usage_text[] =
    "usage: gups_dsm [--log2 n] [--updates-per-word k] [--no-verify]\n"
    "  --log2 n   2^n table words per rank, 3..34 (default 22)\n"
    "  --updates-per-word k   updates = k * words in the table, 1..1024 (4)\n"
    "  --no-verify              skip the verification (then errors=n/a)\n"
    OUT_USAGE
    "GV_AMO=native uses the transport's remote atomics.\n"
    "The last line is: gups transport=T mode=dsm ranks=P updates=U "
    "seconds=S mups=X errors=E\n";

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"log2", required_argument, NULL, 'n'},
        {"updates-per-word", required_argument, NULL, 'u'},
        {"no-verify", no_argument, NULL, 'V'},
        OUT_LONGOPTS,
        {NULL, 0, NULL, 0}};
    gv_dsm_stats_t st;
    gv_status_t    status;
    uint64_t       errs;
    double         t0, secs;
    char           heap[32], name[64];
    int            c, me, P;

    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((c = getopt_long(argc, argv, ":n:u:Vh", lo, NULL)) != -1) {
        if (out_option("gups_dsm", usage_text, c))
            continue;
        if (c == 'n')
            opt.logn = hop_arg_int("gups_dsm", usage_text,
                                   hop_opt_typed(c, argv, name, sizeof(name)),
                                   optarg, 3, 34, "as log2 of the words per rank");
        else if (c == 'u')
            opt.per_word = (unsigned)hop_arg_int(
                "gups_dsm", usage_text,
                hop_opt_typed(c, argv, name, sizeof(name)), optarg, 1, 1024,
                "updates per word");
        else if (c == 'V')
            opt.verify = 0;
        else
            hop_getopt_fail("gups_dsm", usage_text, c, argv, lo);
    }
    hop_no_operands("gups_dsm", usage_text, argc, argv);
    /* The table lives in the symmetric heap: make room unless the user
     * chose GV_HEAP. */
    snprintf(heap, sizeof(heap), "%llu",
             (unsigned long long)((8ull << opt.logn) + (16u << 20)));
    setenv("GV_HEAP", heap, 0);
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    gv_barrier();
    me = gv_rank();
    P  = gv_nranks();
    job.words   = (uint64_t)P << opt.logn;
    job.mask    = ((job.words & (job.words - 1)) == 0) ? job.words - 1 : 0;
    job.updates = (uint64_t)opt.per_word * job.words / CHUNK * CHUNK;
    if (me == 0) {
        status = gv_global_alloc(8 * job.words, &job.table);
        if (status != GV_OK)
            gv_abort(1, "gups_dsm: cannot allocate the table: %s",
                     gv_status_str(status));
    }
    gv_broadcast(0, &job, sizeof(job));
    if (me == 0)
        out_begin("gups_dsm", gv_transport_name(), P);
    if ((me == 0) && !out_machine())
        printf("# gups transport=%s mode=dsm amo=%s ranks=%d table=2^%d "
               "words/rank (%llu MiB) block=%zu updates=%llu chunk=%d\n",
               gv_transport_name(),
               (gv__env.AMO == GV_AMO_NATIVE) ? "native" : "am", P, opt.logn,
               (unsigned long long)(8 * job.words / P >> 20),
               gv_global_block_size(), (unsigned long long)job.updates, CHUNK);
    if (me == 0) {
        fflush(stdout);
        status = gv_forall(job.table, (int64_t)job.words, 8, 0, init_word,
                           NULL, 0, NULL);
        if (status != GV_OK)
            gv_abort(1, "gups_dsm: initialising failed");
    }
    gv_coll_barrier();

    t0 = gv_wtime();
    if (me == 0) {
        status = gv_forall_index(0, (int64_t)(job.updates / CHUNK), 1, chunk,
                                 &job, sizeof(job), NULL);
        if (status != GV_OK)
            gv_abort(1, "gups_dsm: the update loop failed: %s",
                     gv_status_str(status));
    }
    gv_coll_barrier();
    secs = gv_wtime() - t0;

    if (opt.verify) {
        take_back();
        gv_coll_barrier();
        /* A check that did not run must not report errors=0. */
        if ((me == 0) &&
            ((status = gv_forall(job.table, (int64_t)job.words, 8, 0,
                                 check_word, NULL, 0, NULL)) != GV_OK))
            gv_abort(1, "gups_dsm: the verification loop failed: %s",
                     gv_status_str(status));
        gv_coll_barrier();
    }
    errs = my_errors;
    if (gv_allreduce(&errs, 1, GV_UINT64, GV_SUM) != GV_OK)
        gv_abort(1, "gups_dsm: summing the errors over the ranks failed");
    gv_dsm_stats(&st);
    if ((me == 0) && out_machine()) {
        char cfg[64];

        snprintf(cfg, sizeof(cfg), "mode=%s,log2=%d",
                 (gv__env.AMO == GV_AMO_NATIVE) ? "dsm-native" : "dsm",
                 opt.logn);
        out_row1("mups", cfg, -1, "Mupdates_per_s",
                 (double)job.updates / secs / 1e6);
        out_row1("seconds", cfg, -1, "s", secs);
        out_row1("updates", cfg, -1, "updates", (double)job.updates);
        if (opt.verify)
            out_row1("errors", cfg, -1, "words", (double)errs);
        out_end();
    } else if (me == 0) {
        printf("# rank 0: %llu adds local, %llu sent in %llu packs, %llu "
               "native, %llu served\n", (unsigned long long)st.ops_local,
               (unsigned long long)(st.ops_remote),
               (unsigned long long)st.add_msgs,
               (unsigned long long)st.ops_native,
               (unsigned long long)st.ops_served);
        printf("gups transport=%s mode=%s ranks=%d updates=%llu seconds=%.3f "
               "mups=%.2f errors=", gv_transport_name(),
               (gv__env.AMO == GV_AMO_NATIVE) ? "dsm-native" : "dsm", P,
               (unsigned long long)job.updates, secs,
               (double)job.updates / secs / 1e6);
        if (opt.verify)
            printf("%llu\n", (unsigned long long)errs);
        else
            printf("n/a\n");
        fflush(stdout);
    }
    gv_barrier();
    gv_finalize();
    return (errs != 0) ? 1 : 0;
}
