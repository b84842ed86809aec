/* GUPS: random remote updates to a table spread over all ranks, in the
 * style of HPCC RandomAccess, through aggregated active messages (agg),
 * one transport message per update (am), or the transport's own remote
 * atomics (native), then an exact verification pass.
 * Run: gvrun -n 2 build/perf/gups --mode agg
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The table holds 2^n 64-bit words per rank. The update stream is HPCC's:
 * x_{k+1} = (x_k << 1) ^ (x_k has its top bit set ? 7 : 0), a shift
 * register over the polynomial x^64 + x^2 + x + 1 with period
 * 1317624576693539401. An update with value x goes to rank
 * (x >> n) mod P, word x & (2^n - 1), and adds x there (HPCC xors; every
 * transport has a remote atomic add, not every one has a remote xor).
 * Updates-per-word times the global table size updates are made in all;
 * rank r makes its share, updates r*U/P .. (r+1)*U/P-1 of the stream, and
 * jumps there with hpcc_starts().
 *
 * Every update travels through the mode's mechanism, including those whose
 * word lives on the sending rank: the benchmark measures the path, and the
 * three modes stay comparable.
 *
 * With --seconds, a rank stops issuing once that long has passed (HPCC's
 * time bound); the ranks then tell each other how many updates they made.
 *
 * Verification replays, on every rank, the updates every rank made,
 * subtracts those that target one of its own words, and counts the words
 * that do not come back to their initial value. Addition commutes, so this
 * is exact whatever order the updates arrived in. In agg and am modes rank
 * 0 also checks that the handlers ran exactly once per update sent.
 *
 * The phases (table_init, run_am, run_native, verify) are kept out of line
 * so that profiles (perf, callgrind) show them apart.
 */
#define _GNU_SOURCE
#include "perf/hpcc_stream.h"
#include <grapevine.h>

#include "perf/hop.h"
#include "perf/out.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>


/* A transport without native atomics, asked for --mode native, exits with
 * this status. The multi-rank test (tests/multirank/mr_gups.c includes
 * this file) turns it into a skip. */
#ifndef GUPS_NO_ATOMICS_EXIT
#define GUPS_NO_ATOMICS_EXIT 3
#endif
#ifndef GUPS_DEFAULT_LOG2
#define GUPS_DEFAULT_LOG2 22
#endif
#ifndef GUPS_MAIN
#define GUPS_MAIN main
#endif

#define PIPE_MAX    64      /* deepest prefetch pipeline in the handler */
#define CLOCK_MASK  0x3ff   /* look at the clock every 1024 updates */
#define HUGE_2M     (2ul << 20)

enum { MODE_AGG, MODE_AM, MODE_NATIVE };
static const char *const mode_names[] = {"agg", "am", "native"};

static struct {
    int       mode;
    int       logn;           /* table words per rank = 2^logn */
    unsigned  per_word;       /* updates per table word */
    int       verify;
    double    report_s;       /* progress interval; 0: quiet */
    unsigned  window;         /* native: operations outstanding per flush */
    unsigned  poll;           /* am/agg: sends between gv_progress calls */
    unsigned  pipe;           /* handler prefetch depth (power of 2), 0 off */
    double    seconds;        /* stop issuing after this long; 0: never */
    uint64_t  updates;        /* total updates; 0: per_word * table size */
    int       per_rank;       /* agg/am: rank 0 prints a line per rank */
} opt = {MODE_AGG, GUPS_DEFAULT_LOG2, 4, 1, 2.0, 512, 256, 16, 0, 0, 0};

/* What --per-rank prints of a rank: its issuing (updates, thread CPU time,
 * wall time and context switches of the update phase, up to its own
 * gv_flush) and its aggregator's counters after the phase. */
enum {
    RK_ISSUED, RK_CPU_NS, RK_WALL_NS, RK_VCSW, RK_IVCSW, RK_SENT, RK_SELF,
    RK_RELAYED, RK_TL_SENT, RK_FULL, RK_TIMEOUT, RK_IDLE, RK_EXPLICIT,
    RK_INTER_MSGS, RK_INTER_BATCHES, RK_QUEUED_MAX, RK_GAP0,
    RK_ISSUE_CPU_NS = RK_GAP0 + 8, RK_N
};
/* --per-rank: the rank's pauses in issuing (wall time from one progress
 * call's end to the next one's, less the CPU time spent issuing in
 * between: time off the CPU, and handling what arrived, in gv_progress)
 * of at least so many microseconds, counted, and the CPU time spent
 * issuing: an oversubscribed rank issues in bursts between them. */
static const unsigned gap_us[8] = {50, 100, 200, 300, 500, 1000, 2000, 5000};
static uint64_t gaps[8];
static double   issue_cpu;
static const char *const rk_names[RK_N] = {
    "issued", "cpu_ns", "wall_ns", "vcsw", "ivcsw", "sent", "self",
    "relayed", "tl_sent", "full", "timeout", "idle", "explicit",
    "internode_msgs", "internode_batches", "queued_max", "gaps_50us",
    "gaps_100us", "gaps_200us", "gaps_300us", "gaps_500us", "gaps_1000us",
    "gaps_2000us", "gaps_5000us", "issue_cpu_ns"};

static struct {
    int         me, P;
    uint64_t    lmask;        /* 2^logn - 1 */
    uint64_t    pmask;        /* P - 1 when P is a power of two, else 0 */
    uint64_t   *table;        /* this rank's 2^logn words */
    size_t      table_bytes;
    void       *map;          /* what to munmap (agg/am), or NULL */
    size_t      map_len;
    const char *pages;        /* how the table is backed */
    uint64_t    sym_off;      /* native: the table's heap offset */
    gv_am_id_t  upd_id, res_id, cnt_id, rank_id;
    uint64_t   *rank_rows;    /* rank 0, --per-rank: RK_N per rank */
    int         nrank_rows;
    uint64_t   *issued;       /* updates each rank made (after the phase) */
    int         ncounts;
    uint64_t    bad_msgs;     /* update messages of the wrong length */
    uint64_t    handled;      /* update messages applied here */
    /* prefetch pipeline of updates not yet applied; empty slots hold 0,
     * and adding 0 to word 0 changes nothing */
    uint64_t    pend[PIPE_MAX];
    unsigned    phead, pipe_mask;
    /* rank 0: totals gathered at the end */
    uint64_t    tot_errors, tot_bad, tot_handled, nresults;
} g;

/* ---- the HPCC stream: perf/hpcc_stream.h ----------------------------- */

/* hpcc_starts(n) against n plain steps: a cheap guard for the jump. */
static int starts_agrees(int n)
{
    uint64_t x = 1;
    int      k;

    for (k = 0; k < n; k++)
        x = next_ran(x);
    return hpcc_starts(n) == x;
}

static inline int owner_of(uint64_t ran)
{
    uint64_t hi = ran >> opt.logn;
    return (int)((g.pmask != 0 || g.P == 1) ? (hi & g.pmask)
                                             : (hi % (uint64_t)g.P));
}

/* ---- applying updates ------------------------------------------------- */

/* Add @a ran into its word. With a pipeline, the word is prefetched now
 * and the update from opt.pipe calls ago is applied: the cache misses of
 * consecutive updates then overlap instead of following one another. The
 * slots start at 0 (a no-op update: the stream never yields 0, and 0 from
 * a peer adds nothing), so there is no fill count to keep. */
static inline void apply(uint64_t ran)
{
    uint64_t *table = g.table, mask = g.lmask, old;
    unsigned  h = g.phead;

    if (opt.pipe == 0) {
        table[ran & mask] += ran;
        return;
    }
    __builtin_prefetch(&table[ran & mask], 1, 3);
    old       = g.pend[h];
    g.pend[h] = ran;
    g.phead   = (h + 1) & g.pipe_mask;
    table[old & mask] += old;
}

/* Apply what the pipeline still holds (after the barrier that ends the
 * update phase, before anyone reads the table). */
static void apply_drain(void)
{
    unsigned i;

    for (i = 0; i < PIPE_MAX; i++) {
        g.table[g.pend[i] & g.lmask] += g.pend[i];
        g.pend[i] = 0;
    }
    g.phead = 0;
}

/* Runs for every update message. The payload is the 8-byte stream value:
 * it names the word (its low bits) and is the addend. The length is the
 * only thing to check: any value masks to a word of this rank's table. */
static void on_update(int src, const void *payload, size_t len, void *arg)
{
    uint64_t ran;

    if (len != sizeof(ran)) {
        g.bad_msgs++;
        return;
    }
    memcpy(&ran, payload, sizeof(ran));
    g.handled++;
    apply(ran);
}

typedef struct {
    uint64_t errors, bad, handled;
} result_msg_t;

/* Every rank tells every rank how many updates it made: with --seconds a
 * rank may stop early, and verification must replay exactly those. */
static void on_count(int src, const void *payload, size_t len, void *arg)
{
    if ((len != sizeof(uint64_t)) || (src < 0) || (src >= g.P)) {
        g.bad_msgs++;
        return;
    }
    memcpy(&g.issued[src], payload, sizeof(uint64_t));
    g.ncounts++;
}

static void on_rank(int src, const void *payload, size_t len, void *arg)
{
    if ((len != RK_N * sizeof(uint64_t)) || (g.rank_rows == NULL) ||
        (src < 0) || (src >= g.P)) {
        g.bad_msgs++;
        return;
    }
    memcpy(&g.rank_rows[(size_t)src * RK_N], payload, len);
    g.nrank_rows++;
}

static void on_result(int src, const void *payload, size_t len, void *arg)
{
    result_msg_t r;

    if ((len != sizeof(r)) || (g.me != 0)) {
        g.bad_msgs++;
        return;
    }
    memcpy(&r, payload, sizeof(r));
    g.tot_errors += r.errors;
    g.tot_bad += r.bad;
    g.tot_handled += r.handled;
    g.nresults++;
}

/* ---- the table -------------------------------------------------------- */

/* Explicit huge pages if the system has some reserved, else a normal
 * mapping aligned to 2 MiB with transparent huge pages asked for, else
 * whatever madvise leaves us. */
static void table_map(size_t bytes)
{
    size_t len = (bytes + HUGE_2M - 1) & ~(HUGE_2M - 1);
    void  *p;

    p = mmap(NULL, len, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (p != MAP_FAILED) {
        g.map = p;
        g.map_len = len;
        g.table = p;
        g.pages = "hugetlb";
        return;
    }
    p = mmap(NULL, len + HUGE_2M, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        gv_abort(1, "gups: mmap of a %zu-byte table failed: %m", len);
    g.map     = p;
    g.map_len = len + HUGE_2M;
    g.table   = (uint64_t *)(((uintptr_t)p + HUGE_2M - 1) & ~(HUGE_2M - 1));
    g.pages   = (madvise(g.table, len, MADV_HUGEPAGE) == 0) ? "thp" : "4k";
}

__attribute__((noinline)) static void table_init(void)
{
    uint64_t w, base = (uint64_t)g.me << opt.logn;

    for (w = 0; w <= g.lmask; w++)
        g.table[w] = base | w;
}

/* ---- the update phase ------------------------------------------------- */

/* Called every CLOCK_MASK+1 updates: report progress now and then, and
 * say whether --seconds is over (then the caller stops issuing). */
static int tick(uint64_t done, uint64_t total, double t0, double *last)
{
    double now = gv_wtime();

    if ((opt.seconds > 0) && (now - t0 >= opt.seconds))
        return 1;
    if ((opt.report_s <= 0) || (g.me != 0) || (now - *last < opt.report_s))
        return 0;
    *last = now;
    fprintf(stderr, "# gups: rank 0 issued %.1f%% of its updates (%llu of "
            "%llu) in %.1f s, %.2f M/s from this rank\n",
            100.0 * (double)done / (double)total, (unsigned long long)done,
            (unsigned long long)total, now - t0,
            (double)done / (now - t0) / 1e6);
    return 0;
}

static double cpu_s(void);

/* --per-rank: gv_progress() with the pause in issuing since the last
 * one's end (*w0, *c0) counted by its length. */
static void progress_timed(double *w0, double *c0)
{
    double   c = cpu_s(), w, off;
    unsigned k;

    issue_cpu += c - *c0;
    gv_progress();
    w   = gv_wtime();
    off = (w - *w0) - (c - *c0);
    for (k = 0; k < 8; k++)
        gaps[k] += (off * 1e6 >= gap_us[k]);
    *w0 = w;
    *c0 = cpu_s();
}

__attribute__((noinline)) static uint64_t run_am(uint64_t ran, uint64_t n,
                                                 double t0)
{
    /* Locals, so that the compiler need not reload them after each call. */
    const int        shift = opt.logn;
    const uint64_t   pmask = g.pmask, P = (uint64_t)g.P;
    const gv_am_id_t id    = g.upd_id;
    uint64_t         i;
    unsigned         poll = opt.poll;
    double           last = t0, w0 = t0, c0 = opt.per_rank ? cpu_s() : 0;

    for (i = 0; i < n; i++) {
        gv_status_t status;
        int         dst;

        ran    = next_ran(ran);
        dst    = (int)((pmask != 0 || P == 1) ? ((ran >> shift) & pmask)
                                              : ((ran >> shift) % P));
        status = gv_am_send_u64(dst, id, ran);
        if (status != GV_OK)
            gv_abort(1, "gups: gv_am_send_u64 failed: %s",
                     gv_status_str(status));
        /* Handle what others sent us, so that they are not held up. */
        if (--poll == 0) {
            if (opt.per_rank)
                progress_timed(&w0, &c0);
            else
                gv_progress();
            poll = opt.poll;
        }
        if (((i & CLOCK_MASK) == CLOCK_MASK) && tick(i + 1, n, t0, &last)) {
            i++;
            break;
        }
    }
    gv_flush();
    return i;
}

__attribute__((noinline)) static uint64_t run_native(uint64_t ran,
                                                     uint64_t n, double t0)
{
    uint64_t i;
    unsigned out = 0;
    double   last = t0;

    for (i = 0; i < n; i++) {
        gv_status_t status;

        ran    = next_ran(ran);
        status = gv_amo64(GV_AMO_ADD, owner_of(ran),
                          g.sym_off + 8 * (ran & g.lmask), ran, 0, NULL);
        if (status != GV_OK)
            gv_abort(1, "gups: gv_amo64 failed: %s", gv_status_str(status));
        if (++out == opt.window) {
            status = gv_rma_flush(-1);
            if (status != GV_OK)
                gv_abort(1, "gups: gv_rma_flush failed: %s",
                         gv_status_str(status));
            out = 0;
        }
        if (((i & CLOCK_MASK) == CLOCK_MASK) && tick(i + 1, n, t0, &last)) {
            i++;
            break;
        }
    }
    if (gv_rma_flush(-1) != GV_OK)
        gv_abort(1, "gups: gv_rma_flush failed");
    return i;
}

/* ---- verification ----------------------------------------------------- */

/* Replay what every rank made of its share of the stream (g.issued, the
 * counts exchanged after the update phase); take back the updates aimed
 * at this rank's words (in batches, prefetched, like the handler); count
 * the words that are not back at their initial value. */
__attribute__((noinline)) static uint64_t verify(uint64_t per_rank)
{
    uint64_t batch[64], w, errors = 0, base = (uint64_t)g.me << opt.logn;
    unsigned nb = 0, k;
    int      r;

    for (r = 0; r < g.P; r++) {
        uint64_t ran = hpcc_starts((int64_t)(per_rank * (uint64_t)r)), i;

        for (i = 0; i < g.issued[r]; i++) {
            ran = next_ran(ran);
            if (owner_of(ran) != g.me)
                continue;
            __builtin_prefetch(&g.table[ran & g.lmask], 1, 3);
            batch[nb++] = ran;
            if (nb == 64) {
                for (k = 0; k < nb; k++)
                    g.table[batch[k] & g.lmask] -= batch[k];
                nb = 0;
            }
        }
    }
    for (k = 0; k < nb; k++)
        g.table[batch[k] & g.lmask] -= batch[k];
    for (w = 0; w <= g.lmask; w++)
        if (g.table[w] != (base | w))
            errors++;
    return errors;
}

/* ---- main ------------------------------------------------------------- */

/* CPU time of this thread: on a loaded machine the wall clock says how
 * much of the cores we got, this says what the work itself cost. */
static double cpu_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --per-rank: every rank sends rank 0 its row (handled by the next
 * barrier); rank 0 prints them. */
static void per_rank_send(uint64_t mine, double cpu, double wall,
                          const struct rusage *ru0, const struct rusage *ru1,
                          const gv_am_stats_t *st)
{
    uint64_t row[RK_N];

    if ((g.me == 0) &&
        ((g.rank_rows = calloc((size_t)g.P * RK_N, sizeof(uint64_t))) ==
         NULL))
        gv_abort(1, "gups: out of memory");
    row[RK_ISSUED]        = mine;
    row[RK_CPU_NS]        = (uint64_t)(cpu * 1e9);
    row[RK_WALL_NS]       = (uint64_t)(wall * 1e9);
    row[RK_VCSW]          = (uint64_t)(ru1->ru_nvcsw - ru0->ru_nvcsw);
    row[RK_IVCSW]         = (uint64_t)(ru1->ru_nivcsw - ru0->ru_nivcsw);
    row[RK_SENT]          = st->msgs_sent;
    row[RK_SELF]          = st->msgs_self;
    row[RK_RELAYED]       = st->msgs_relayed;
    row[RK_TL_SENT]       = st->tl_msgs_sent;
    row[RK_FULL]          = st->flush_full;
    row[RK_TIMEOUT]       = st->flush_timeout;
    row[RK_IDLE]          = st->flush_idle;
    row[RK_EXPLICIT]      = st->flush_explicit;
    row[RK_INTER_MSGS]    = st->internode_msgs;
    row[RK_INTER_BATCHES] = st->internode_batches;
    row[RK_QUEUED_MAX]    = st->queued_bytes_max;
    memcpy(&row[RK_GAP0], gaps, sizeof(gaps));
    row[RK_ISSUE_CPU_NS]  = (uint64_t)(issue_cpu * 1e9);
    if (gv_am_send(0, g.rank_id, row, sizeof(row)) != GV_OK)
        gv_abort(1, "gups: could not send the per-rank counters");
}

static void per_rank_print(void)
{
    int r, k;

    if ((g.me != 0) || out_machine())
        return;
    if (g.nrank_rows != g.P)
        gv_abort(1, "gups: %d of %d ranks sent their counters", g.nrank_rows,
                 g.P);
    for (r = 0; r < g.P; r++) {
        printf("# rank %d node %d:", r, gv_node_of(r));
        for (k = 0; k < RK_N; k++)
            printf(" %s=%llu", rk_names[k],
                   (unsigned long long)g.rank_rows[(size_t)r * RK_N + k]);
        printf("\n");
    }
}

#define GUPS_UPDATES_MAX (1ull << 62)

/* Every value is in decimal digits (--seconds and --progress-interval take
 * a decimal point too); anything else, or an argument that is not an
 * option, is an error naming it. */
static char usage_text[3072];

static void usage_init(void)
{
    snprintf(usage_text, sizeof(usage_text),
        "usage: gups [--mode agg|am|native] [--log2 n]\n"
        "            [--updates-per-word k] [--updates U] [--seconds t]\n"
        "            [--verify | --no-verify] [--progress-interval s]\n"
        "            [--window w] [--poll k] [--pipe d] [--per-rank]\n"
        "  --mode agg     every update is an 8-byte active message,\n"
        "                 aggregated (GV_AGGREGATE=1 at gv_init); the default\n"
        "  --mode am      the same messages, one transport message each\n"
        "                 (GV_AGGREGATE=0 at gv_init). In agg and am the mode\n"
        "                 decides: a GV_AGGREGATE of the environment that\n"
        "                 disagrees is overridden, and rank 0 says so on\n"
        "                 stderr\n"
        "  --mode native  the transport's remote atomic add on the\n"
        "                 symmetric heap, flushed every w operations\n"
        "                 (--window, 512); a transport without remote\n"
        "                 atomics exits with status %d. GV_HEAP is raised\n"
        "                 to fit the table unless it is set, and\n"
        "                 GV_AGGREGATE is 1 unless it is set\n"
        "  --log2 n       2^n table words per rank, 3..36 (default %d)\n"
        "  --updates-per-word k  updates = k * words in all tables, 1..1024\n"
        "                 (4)\n"
        "  --updates U    make U updates in all instead, 1..%llu (a\n"
        "                 multiple of the ranks)\n"
        "  --seconds t    each rank stops issuing after t seconds, 0..86400\n"
        "                 (HPCC's time bound; 0, the default, is none);\n"
        "                 updates= then counts those made, and all of them\n"
        "                 are verified\n"
        "  --no-verify    skip the verification pass (then errors=n/a)\n"
        "  --progress-interval s  rank 0 reports progress every s seconds\n"
        "                 on stderr, 0..86400 (2; 0 is quiet)\n"
        "  --window w     native: operations per flush, 1..1048576 (512)\n"
        "  --poll k       agg/am: progress after every k sends, 1..1048576\n"
        "                 (256)\n"
        "  --pipe d       prefetch depth of the update handler, a power of\n"
        "                 two up to %d; 0 applies at once (16)\n"
        "  --per-rank     agg/am: rank 0 prints a line per rank: its\n"
        "                 updates, CPU and wall time and context switches\n"
        "                 while issuing, its pauses in issuing (off the\n"
        "                 CPU or in gv_progress) of at least 50 us .. 5 ms\n"
        "                 counted, and its aggregator's counters\n"
        "                 (perf/route_model.py --calibrate reads them)\n"
        OUT_USAGE
        "  Values are decimal digits (t and s may have a decimal point).\n"
        "The last line is: gups transport=T mode=M ranks=P updates=U "
        "seconds=S mups=X errors=E (errors=n/a with --no-verify)\n",
        GUPS_NO_ATOMICS_EXIT, GUPS_DEFAULT_LOG2,
        (unsigned long long)GUPS_UPDATES_MAX, PIPE_MAX);
}

static void parse(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"mode", required_argument, NULL, 'm'},
        {"log2", required_argument, NULL, 'n'},
        {"updates-per-word", required_argument, NULL, 'u'},
        {"verify", no_argument, NULL, 'v'},
        {"no-verify", no_argument, NULL, 'V'},
        {"progress-interval", required_argument, NULL, 'p'},
        {"window", required_argument, NULL, 'w'},
        {"poll", required_argument, NULL, 'k'},
        {"pipe", required_argument, NULL, 'd'},
        {"seconds", required_argument, NULL, 't'},
        {"updates", required_argument, NULL, 'U'},
        {"per-rank", no_argument, NULL, 'R'},
        OUT_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    int         c, i;
    char        buf[64];
    const char *name;

    usage_init();
    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((c = getopt_long(argc, argv, ":m:n:u:vVp:w:k:d:t:U:Rh", longopts,
                            NULL)) != -1) {
        if (out_option("gups", usage_text, c))
            continue;
        name = (optarg != NULL) ? hop_opt_typed(c, argv, buf, sizeof(buf))
                                : "";
        switch (c) {
        case 'm':
            for (i = 0; i < 3; i++)
                if (strcmp(optarg, mode_names[i]) == 0)
                    break;
            if (i == 3)
                hop_fail("gups", usage_text, "%s %s: accepted agg, am or "
                         "native", name, optarg);
            opt.mode = i;
            break;
        case 'p':
            opt.report_s = hop_arg_real("gups", usage_text, name, optarg, 0,
                                        86400, "seconds");
            break;
        case 't':
            opt.seconds = hop_arg_real("gups", usage_text, name, optarg, 0,
                                       86400, "seconds");
            break;
        case 'U':
            opt.updates = hop_arg_u64("gups", usage_text, name, optarg, 1,
                                      GUPS_UPDATES_MAX, "updates");
            break;
        case 'v': opt.verify = 1; break;
        case 'R': opt.per_rank = 1; break;
        case 'V': opt.verify = 0; break;
        case 'n':
            opt.logn = hop_arg_int("gups", usage_text, name, optarg, 3, 36,
                                   "as log2 of the words per rank");
            break;
        case 'u':
            opt.per_word = (unsigned)hop_arg_int("gups", usage_text, name,
                                                 optarg, 1, 1024,
                                                 "updates per word");
            break;
        case 'w':
            opt.window = (unsigned)hop_arg_int("gups", usage_text, name,
                                               optarg, 1, 1 << 20,
                                               "operations");
            break;
        case 'k':
            opt.poll = (unsigned)hop_arg_int("gups", usage_text, name,
                                             optarg, 1, 1 << 20, "sends");
            break;
        case 'd':
            opt.pipe = (unsigned)hop_arg_int("gups", usage_text, name,
                                             optarg, 0, PIPE_MAX,
                                             "as prefetch depth");
            if ((opt.pipe & (opt.pipe - 1)) != 0)
                hop_fail("gups", usage_text, "%s %s: accepted 0 or a power "
                         "of two up to %d", name, optarg, PIPE_MAX);
            break;
        default: hop_getopt_fail("gups", usage_text, c, argv, longopts);
        }
    }
    hop_no_operands("gups", usage_text, argc, argv);
}

/* GV_AGGREGATE for the mode, set before gv_init (which reads it). In agg
 * and am the mode is the measurement, so it wins over the environment;
 * returns the value of the environment it overrode (to be reported once
 * the rank is known), or NULL. In native mode a value of the user's is
 * left alone (the updates are no messages there). */
static const char *gups_set_aggregate(void)
{
    static char  was[64];
    const char  *want = (opt.mode == MODE_AM) ? "0" : "1";
    const char  *env  = getenv("GV_AGGREGATE");
    static const char *const truthy[] = {"1", "yes", "on", "y", "true"};
    static const char *const falsy[]  = {"0", "no", "off", "n", "false"};
    const char *const       *same = (opt.mode == MODE_AM) ? falsy : truthy;
    int                      i;

    if (opt.mode == MODE_NATIVE) {
        setenv("GV_AGGREGATE", want, 0);
        return NULL;
    }
    for (i = 0; (env != NULL) && (i < 5); i++)
        if (strcmp(env, same[i]) == 0)
            env = NULL;
    if (env != NULL)
        snprintf(was, sizeof(was), "%s", env);
    setenv("GV_AGGREGATE", want, 1);
    return (env != NULL) ? was : NULL;
}

int GUPS_MAIN(int argc, char **argv)
{
    uint64_t      total, per_rank, start, mine, done = 0, errors = 0;
    int           r;
    double        t0, t1, secs, c0, c1, ci, wi, tv = 0;
    gv_am_stats_t st;
    struct rusage ru0, ru1;
    char          heap[32];
    const char   *overrode;

    parse(argc, argv);
    g.table_bytes = (size_t)8 << opt.logn;
    /* GV_AGGREGATE and GV_HEAP are read at gv_init: set them first. The
     * mode decides aggregation (gups_set_aggregate); a GV_HEAP the user set
     * is left alone. */
    overrode = gups_set_aggregate();
    if (opt.mode == MODE_NATIVE) {
        snprintf(heap, sizeof(heap), "%zu",
                 g.table_bytes + 2 * HUGE_2M + (4u << 20));
        setenv("GV_HEAP", heap, 0);
    }
    if ((gv_am_register(on_update, NULL, &g.upd_id) != GV_OK) ||
        (gv_am_register(on_result, NULL, &g.res_id) != GV_OK) ||
        (gv_am_register(on_count, NULL, &g.cnt_id) != GV_OK) ||
        (gv_am_register(on_rank, NULL, &g.rank_id) != GV_OK)) {
        fprintf(stderr, "gups: gv_am_register failed\n");
        return 1;
    }
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    g.me    = gv_rank();
    g.P     = gv_nranks();
    if ((overrode != NULL) && (g.me == 0))
        fprintf(stderr, "gups: --mode %s runs with GV_AGGREGATE=%s; the "
                "environment's GV_AGGREGATE=%s is overridden (the mode "
                "decides aggregation: agg aggregates, am does not)\n",
                mode_names[opt.mode], (opt.mode == MODE_AM) ? "0" : "1",
                overrode);
    g.lmask = ((uint64_t)1 << opt.logn) - 1;
    g.pmask = ((g.P & (g.P - 1)) == 0) ? (uint64_t)g.P - 1 : 0;
    g.pipe_mask = (opt.pipe > 0) ? opt.pipe - 1 : 0;
    g.issued = calloc((size_t)g.P, sizeof(*g.issued));
    if (g.issued == NULL)
        gv_abort(1, "gups: out of memory");
    if (!starts_agrees(100003))
        gv_abort(1, "gups: hpcc_starts disagrees with the stream");

    if (opt.mode == MODE_NATIVE) {
        gv_status_t status;

        if (!gv_rma_has_atomics()) {
            if (g.me == 0)
                fprintf(out_machine() ? stderr : stdout,
                       "gups: transport %s has no native remote atomics; "
                       "--mode native needs one that has (gvinfo -t)\n",
                       gv_transport_name());
            gv_finalize();
            exit(GUPS_NO_ATOMICS_EXIT);
        }
        status = gv_sym_alloc(g.table_bytes, HUGE_2M, &g.sym_off);
        if (status != GV_OK)
            gv_abort(1, "gups: the %zu-byte table does not fit in the "
                     "symmetric heap (%zu bytes): raise GV_HEAP",
                     g.table_bytes, gv_sym_heap_size());
        g.table = gv_sym_ptr(g.sym_off);
        /* The heap belongs to the transport (it may be shared memory);
         * asking for huge pages on it is a hint that may be refused. */
        g.pages = (madvise(g.table, g.table_bytes, MADV_HUGEPAGE) == 0)
                      ? "heap,thp" : "heap";
    } else {
        table_map(g.table_bytes);
    }
    table_init();

    total = (uint64_t)opt.per_word * (uint64_t)g.P << opt.logn;
    if (opt.updates != 0)
        total = opt.updates;
    per_rank = total / (uint64_t)g.P;
    if (per_rank == 0)
        per_rank = 1;
    total = per_rank * (uint64_t)g.P;
    start    = hpcc_starts((int64_t)(per_rank * (uint64_t)g.me));
    if (g.me == 0)
        out_begin("gups", gv_transport_name(), g.P);
    if ((g.me == 0) && !out_machine()) {
        printf("# gups transport=%s mode=%s ranks=%d table=2^%d words/rank "
               "(%zu MiB, %s pages) updates=%llu",
               gv_transport_name(), mode_names[opt.mode], g.P, opt.logn,
               g.table_bytes >> 20, g.pages, (unsigned long long)total);
        if (opt.seconds > 0)
            printf(" (at most %.1f s)", opt.seconds);
        if (opt.mode == MODE_NATIVE)
            printf(" window=%u\n", opt.window);
        else
            printf(" poll=%u pipe=%u\n", opt.poll, opt.pipe);
        fflush(stdout);
    }

    gv_barrier();
    t0 = gv_wtime();
    c0 = cpu_s();
    getrusage(RUSAGE_THREAD, &ru0);
    if (opt.mode == MODE_NATIVE)
        mine = run_native(start, per_rank, t0);
    else
        mine = run_am(start, per_rank, t0);
    ci = cpu_s() - c0;
    wi = gv_wtime() - t0;
    getrusage(RUSAGE_THREAD, &ru1);
    gv_barrier();
    t1   = gv_wtime();
    c1   = cpu_s();
    secs = t1 - t0;
    apply_drain();
    gv_am_stats(&st);
    if (opt.per_rank && (opt.mode != MODE_NATIVE))
        per_rank_send(mine, ci, wi, &ru0, &ru1, &st);
    for (r = 0; r < g.P; r++)
        if (gv_am_send(r, g.cnt_id, &mine, sizeof(mine)) != GV_OK)
            gv_abort(1, "gups: could not send the update count");
    gv_barrier();
    if (g.ncounts != g.P)
        gv_abort(1, "gups: %d of %d ranks sent their update count",
                 g.ncounts, g.P);
    for (r = 0; r < g.P; r++)
        done += g.issued[r];

    if (opt.verify) {
        result_msg_t res;

        tv          = gv_wtime();
        errors      = verify(per_rank);
        tv          = gv_wtime() - tv;
        res.errors  = errors;
        res.bad     = g.bad_msgs;
        res.handled = g.handled;
        if (gv_am_send(0, g.res_id, &res, sizeof(res)) != GV_OK)
            gv_abort(1, "gups: could not send the result to rank 0");
        if (errors != 0)
            fprintf(stderr, "gups: rank %d: %llu of %llu words wrong\n",
                    g.me, (unsigned long long)errors,
                    (unsigned long long)g.lmask + 1);
    }
    gv_barrier();
    if (opt.mode != MODE_NATIVE) {
        /* Aggregation memory: the most any rank's send queues held. */
        uint64_t q = st.queued_bytes_max, qmax = 0;

        if (gv_team_allreduce(GV_TEAM_WORLD, &q, &qmax, 1, GV_UINT64,
                              GV_MAX) != GV_OK)
            gv_abort(1, "gups: the reduction of the queue high-water marks "
                     "failed");
        if ((g.me == 0) && !out_machine())
            printf("# queued bytes max over ranks: %llu\n",
                   (unsigned long long)qmax);
        if (opt.per_rank)
            per_rank_print();
    }
    if ((g.me == 0) && out_machine()) {
        char cfg[64];

        if (opt.verify && (g.nresults != (uint64_t)g.P))
            gv_abort(1, "gups: %llu of %d ranks reported a result",
                     (unsigned long long)g.nresults, g.P);
        if (opt.verify && (opt.mode != MODE_NATIVE) &&
            (g.tot_handled != done))
            g.tot_bad++;
        snprintf(cfg, sizeof(cfg), "mode=%s,log2=%d", mode_names[opt.mode],
                 opt.logn);
        out_row1("mups", cfg, -1, "Mupdates_per_s",
                 (double)done / secs / 1e6);
        out_row1("seconds", cfg, -1, "s", secs);
        out_row1("updates", cfg, -1, "updates", (double)done);
        if (opt.verify)
            out_row1("errors", cfg, -1, "words",
                     (double)(g.tot_errors + g.tot_bad));
        out_end();
    } else if (g.me == 0) {
        printf("# rank 0: update phase %.3f s wall, %.3f s cpu "
               "(%.1f ns cpu per update made or handled here)",
               secs, c1 - c0, (c1 - c0) * 1e9 / (double)mine / 2);
        if (opt.verify)
            printf(", verification %.3f s", tv);
        printf("\n");
        if (opt.mode != MODE_NATIVE)
            printf("# rank 0: %llu messages in %llu transport messages "
                   "(%.1f per message), flushes: full %llu timeout %llu "
                   "idle %llu explicit %llu, credit stalls %llu\n",
                   (unsigned long long)st.msgs_sent,
                   (unsigned long long)st.tl_msgs_sent,
                   st.tl_msgs_sent ? (double)st.msgs_sent /
                                     (double)st.tl_msgs_sent : 0.0,
                   (unsigned long long)st.flush_full,
                   (unsigned long long)st.flush_timeout,
                   (unsigned long long)st.flush_idle,
                   (unsigned long long)st.flush_explicit,
                   (unsigned long long)st.credit_stalls);
        if (opt.verify && (g.nresults != (uint64_t)g.P))
            gv_abort(1, "gups: %llu of %d ranks reported a result",
                     (unsigned long long)g.nresults, g.P);
        if (g.tot_bad != 0)
            printf("# %llu update messages had a bad length\n",
                   (unsigned long long)g.tot_bad);
        /* Every update message must have run exactly once: a lost one
         * shows in the table, but a lost one and a duplicate elsewhere
         * would too, and this names the cause. */
        if (opt.verify && (opt.mode != MODE_NATIVE) &&
            (g.tot_handled != done)) {
            printf("# %llu update messages handled, %llu sent\n",
                   (unsigned long long)g.tot_handled,
                   (unsigned long long)done);
            g.tot_bad++;
        }
        printf("gups transport=%s mode=%s ranks=%d updates=%llu "
               "seconds=%.3f mups=%.2f errors=",
               gv_transport_name(), mode_names[opt.mode], g.P,
               (unsigned long long)done, secs, (double)done / secs / 1e6);
        if (opt.verify)
            printf("%lld\n", (long long)(g.tot_errors + g.tot_bad));
        else
            printf("n/a\n");
        fflush(stdout);
    }
    gv_finalize();
    free(g.rank_rows);
    free(g.issued);
    if (g.map != NULL)
        munmap(g.map, g.map_len);
    return ((errors != 0) || (g.bad_msgs != 0) ||
            ((g.me == 0) && (g.tot_errors + g.tot_bad != 0))) ? 1 : 0;
}
