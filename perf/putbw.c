/* Bandwidth from rank 0 to rank 1 against message size, one line per size,
 * of the transport's native put (default) or of active messages (--am; run
 * with GV_AGGREGATE=0 for plain ones); or, with --am8, the rate and payload
 * bandwidth of a stream of 8-byte active messages (aggregated unless
 * GV_AGGREGATE=0). The sides of Figure 6 (right): native one-sided writes
 * and plain messages against many tiny aggregated messages. Each size runs
 * for a fixed time, not a fixed count, so slow transports finish too.
 * Run: gvrun -n 2 build/perf/putbw [--am | --am8]
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>

#include "hop.h"
#include "out.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A transport without native put exits with this status (like gups). */
#define PUTBW_NO_PUT_EXIT 3

static volatile uint64_t arrived;   /* rank 1: messages; rank 0: acks */
static volatile int      stop;      /* rank 1: rank 0 is done with a size */
static gv_am_id_t        msg_id, ack_id, stop_id;
static uint8_t          *am_buf;    /* --am: the payload */

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    arrived++;
}

static void on_ack(int src, const void *payload, size_t len, void *arg)
{
    arrived++;
}

static void on_stop(int src, const void *payload, size_t len, void *arg)
{
    stop = 1;
}

static int window_or_stop(void *arg)
{
    return (arrived >= *(uint64_t *)arg) || stop;
}

static int arrived_at_least(void *arg)
{
    return arrived >= *(uint64_t *)arg;
}

#define PUTBW_SIZE_MAX   (1u << 30) /* -s, -S */
#define PUTBW_REPS_MAX   64         /* -r: the medians' room */
#define PUTBW_WINDOW_MAX 4096       /* -w */
#define PUTBW_MSGS_MAX   (1ull << 40) /* --am8 -n */

/* Sizes take k/m/g suffixes as the GV_* variables do, the other values
 * are decimal; anything else, or an option the chosen test does not take,
 * is an error naming it. */
static char usage_text[2048];

static void usage_init(void)
{
    snprintf(usage_text, sizeof(usage_text),
        "usage: putbw [-s min_bytes] [-S max_bytes] [-r repetitions]\n"
        "             [-w window] [-t seconds_per_size]\n"
        "       putbw --am [same options]\n"
        "       putbw --am8 [-n messages] [-r repetitions]\n"
        "  put: rank 0 issues w puts of one size to rank 1, then flushes, for\n"
        "       about t seconds (0.1) per repetition; the median of r (5) is\n"
        "       printed. A transport without native put exits with status %d.\n"
        "  --am: the same with active messages of each size; rank 1 answers\n"
        "       each window once all of it has arrived.\n"
        "  --am8: rank 0 sends n (4M) 8-byte active messages to rank 1 and\n"
        "       waits for rank 1 to have handled them all.\n"
        "  -s 1..%u bytes (8), -S -s..%u bytes (1048576), -r 1..%d,\n"
        "  -w 1..%d (64), -t 0.001..60, -n 1..%llu (4194304); sizes take\n"
        "  k, m, g suffixes (64k, 1m).\n"
        OUT_USAGE,
        PUTBW_NO_PUT_EXIT, PUTBW_SIZE_MAX, PUTBW_SIZE_MAX, PUTBW_REPS_MAX,
        PUTBW_WINDOW_MAX, (unsigned long long)PUTBW_MSGS_MAX);
}

static double run_put(uint64_t src, uint64_t dst, size_t size, int window,
                      double budget_s, uint64_t *ops_p)
{
    double   t0 = gv_wtime(), t;
    uint64_t ops = 0;
    int      i;

    do {
        for (i = 0; i < window; i++)
            if (gv_put(1, dst, gv_sym_ptr(src), size) != GV_OK)
                gv_abort(1, "putbw: gv_put failed");
        if (gv_rma_flush(1) != GV_OK)
            gv_abort(1, "putbw: gv_rma_flush failed");
        ops += (uint64_t)window;
        t = gv_wtime() - t0;
    } while (t < budget_s);
    *ops_p = ops;
    return t;
}

/* Rank 0 sends windows of messages until the budget is spent, waiting
 * after each for rank 1's answer; then tells rank 1 to stop. */
static double run_am(size_t size, int window, double budget_s,
                     uint64_t *ops_p)
{
    double   t0 = gv_wtime(), t;
    uint64_t ops = 0, target = 0;
    int      i;

    if (gv_rank() == 1) {
        target = (uint64_t)window;
        for (;;) {
            gv_wait(window_or_stop, &target);
            if (arrived >= target) {
                if (gv_am_send(0, ack_id, NULL, 0) != GV_OK)
                    gv_abort(1, "putbw: gv_am_send failed");
                gv_flush();
                target += (uint64_t)window;
            } else {
                break;  /* stop came after the last window's answer */
            }
        }
        return 0;
    }
    do {
        for (i = 0; i < window; i++)
            if (gv_am_send(1, msg_id, am_buf, size) != GV_OK)
                gv_abort(1, "putbw: gv_am_send failed");
        gv_flush();
        target++;
        gv_wait(arrived_at_least, &target);
        ops += (uint64_t)window;
        t = gv_wtime() - t0;
    } while (t < budget_s);
    if (gv_am_send(1, stop_id, NULL, 0) != GV_OK)
        gv_abort(1, "putbw: gv_am_send failed");
    gv_flush();
    *ops_p = ops;
    return t;
}

static int sweep(int am, size_t min_size, size_t max_size, int reps,
                 int window, double budget_s)
{
    uint64_t src = 0, dst = 0;
    size_t   size;
    double   bw[PUTBW_REPS_MAX], us[PUTBW_REPS_MAX];
    double   bw8 = 0, bw1m = 0;
    int      have_bw8 = 0, have_bw1m = 0;

    if (am) {
        am_buf = calloc(1, max_size);
        if (am_buf == NULL)
            gv_abort(1, "putbw: out of memory");
    } else if (!gv_rma_has_put_get()) {
        if (gv_rank() == 0)
            fprintf(out_machine() ? stderr : stdout,
                    "putbw: transport %s has no native put\n",
                    gv_transport_name());
        return PUTBW_NO_PUT_EXIT;
    } else {
        if ((gv_sym_alloc(max_size, 4096, &src) != GV_OK) ||
            (gv_sym_alloc(max_size, 4096, &dst) != GV_OK))
            gv_abort(1, "putbw: %zu-byte buffers do not fit in the heap; "
                     "raise GV_HEAP", 2 * max_size);
        memset(gv_sym_ptr(src), 0x5a, max_size);
    }
    if (gv_rank() == 0)
        out_begin(am ? "ambw" : "putbw", gv_transport_name(), gv_nranks());
    if ((gv_rank() == 0) && !out_machine())
        printf("# %s transport=%s window=%d\n# %10s %10s %12s %14s %12s\n",
               am ? "ambw" : "putbw", gv_transport_name(), window, "bytes",
               "iters", "usec_per_op", "ops_per_sec", "bw_MBps");
    for (size = min_size; size <= max_size; size *= 2) {
        uint64_t ops = 0;
        int      r;

        for (r = 0; r < reps; r++) {
            double t = 0;

            arrived = 0;
            stop    = 0;
            gv_barrier();
            if (am && (gv_rank() <= 1))
                t = run_am(size, window, budget_s, &ops);
            if (gv_rank() != 0)
                continue;
            if (!am)
                t = run_put(src, dst, size, window, budget_s, &ops);
            bw[r] = (double)size * (double)ops / t / 1e6;
            us[r] = t * 1e6 / (double)ops;
        }
        gv_barrier();
        if (gv_rank() == 0) {
            qsort(bw, (size_t)reps, sizeof(double), hop_cmp_double);
            qsort(us, (size_t)reps, sizeof(double), hop_cmp_double);
            char cfg[32];

            snprintf(cfg, sizeof(cfg), "window=%d", window);
            out_row("op_time", cfg, (long long)size, "us", us, reps);
            out_row("bw", cfg, (long long)size, "MBps", bw, reps);
            if (!out_machine())
                printf("  %10zu %10llu %12.3f %14.0f %12.1f\n", size,
                       (unsigned long long)ops, us[reps / 2],
                       1e6 / us[reps / 2], bw[reps / 2]);
            fflush(stdout);
            if (size == 8) {
                bw8      = bw[reps / 2];
                have_bw8 = 1;
            }
            if (size == (1u << 20)) {
                bw1m      = bw[reps / 2];
                have_bw1m = 1;
            }
        }
    }
    if ((gv_rank() == 0) && !out_machine()) {
        printf("%s transport=%s", am ? "ambw" : "putbw", gv_transport_name());
        out_kv("bw8_MBps", "%.1f", bw8, have_bw8);
        out_kv("bw1m_MBps", "%.1f", bw1m, have_bw1m);
        printf("\n");
    }
    if (gv_rank() == 0)
        out_end();
    free(am_buf);
    return 0;
}

static int am8(uint64_t n, int reps)
{
    double   rate[PUTBW_REPS_MAX], t0;
    uint64_t i, payload = 0, target;
    int      r;

    if (gv_rank() == 0)
        out_begin("am8", gv_transport_name(), gv_nranks());
    if ((gv_rank() == 0) && !out_machine())
        printf("# am8 transport=%s messages=%llu\n", gv_transport_name(),
               (unsigned long long)n);
    for (r = 0; r < reps; r++) {
        arrived = 0;
        gv_barrier();
        t0 = gv_wtime();
        if (gv_rank() == 0) {
            for (i = 0; i < n; i++) {
                payload = i;
                if (gv_am_send(1, msg_id, &payload, 8) != GV_OK)
                    gv_abort(1, "putbw: gv_am_send failed");
                if ((i & 255) == 255)
                    gv_progress();
            }
            gv_flush();
            target = 1;
            gv_wait(arrived_at_least, &target);
            rate[r] = (double)n / (gv_wtime() - t0);
        } else if (gv_rank() == 1) {
            target = n;
            gv_wait(arrived_at_least, &target);
            if (gv_am_send(0, ack_id, &payload, 8) != GV_OK)
                gv_abort(1, "putbw: gv_am_send failed");
            gv_flush();
        }
    }
    gv_barrier();
    if (gv_rank() == 0) {
        char cfg[48];

        for (r = 0; r < reps; r++)
            rate[r] /= 1e6;
        snprintf(cfg, sizeof(cfg), "messages=%llu", (unsigned long long)n);
        out_row("rate", cfg, 8, "Mmsgs_per_s", rate, reps);
        out_end();
        if (!out_machine())
            printf("am8 transport=%s messages=%llu mmsgs_per_s=%.2f "
               "payload_MBps=%.1f\n", gv_transport_name(),
               (unsigned long long)n, rate[reps / 2], rate[reps / 2] * 8);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"am8", no_argument, NULL, 'a'},
        {"am", no_argument, NULL, 'A'},
        OUT_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    size_t   min_size = 8, max_size = 1u << 20;
    int      reps = 5, window = 64, c, rc, do_am8 = 0, do_am = 0, n_given = 0;
    double   budget_s = 0.1;
    uint64_t n = 4u << 20;

    const char *sweep_opt = NULL; /* an option --am8 does not take */

    usage_init();
    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((c = getopt_long(argc, argv, ":s:S:r:w:t:n:h", longopts, NULL)) !=
           -1) {
        if (out_option("putbw", usage_text, c))
            continue;
        switch (c) {
        case 'a': do_am8 = 1; break;
        case 'A': do_am = 1; break;
        case 's':
            min_size = out_arg_size("putbw", usage_text, "-s", optarg, 1,
                                    PUTBW_SIZE_MAX);
            sweep_opt = "-s";
            break;
        case 'S':
            max_size = out_arg_size("putbw", usage_text, "-S", optarg, 1,
                                    PUTBW_SIZE_MAX);
            sweep_opt = "-S";
            break;
        case 'r':
            reps = hop_arg_int("putbw", usage_text, "-r", optarg, 1,
                               PUTBW_REPS_MAX, "repetitions");
            break;
        case 'w':
            window = hop_arg_int("putbw", usage_text, "-w", optarg, 1,
                                 PUTBW_WINDOW_MAX, "operations");
            sweep_opt = "-w";
            break;
        case 't':
            budget_s = hop_arg_real("putbw", usage_text, "-t", optarg,
                                    0.001, 60, "seconds");
            sweep_opt = "-t";
            break;
        case 'n':
            n = hop_arg_u64("putbw", usage_text, "-n", optarg, 1,
                            PUTBW_MSGS_MAX, "messages");
            n_given = 1;
            break;
        default: hop_getopt_fail("putbw", usage_text, c, argv, longopts);
        }
    }
    hop_no_operands("putbw", usage_text, argc, argv);
    if (do_am8 && do_am)
        hop_fail("putbw", usage_text, "--am and --am8: accepted one of them");
    if (do_am8 && (sweep_opt != NULL))
        hop_fail("putbw", usage_text, "%s: not taken with --am8 (accepted "
                 "-n and -r)", sweep_opt);
    if (!do_am8 && n_given)
        hop_fail("putbw", usage_text, "-n: taken with --am8 only");
    if (min_size > max_size)
        hop_fail("putbw", usage_text, "-s %zu is more than -S %zu: accepted "
                 "-s up to -S", min_size, max_size);
    if ((gv_am_register(on_msg, NULL, &msg_id) != GV_OK) ||
        (gv_am_register(on_ack, NULL, &ack_id) != GV_OK) ||
        (gv_am_register(on_stop, NULL, &stop_id) != GV_OK))
        return 1;
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    if (gv_nranks() < 2) {
        fprintf(stderr, "putbw: needs 2 ranks (gvrun -n 2)\n");
        gv_finalize();
        return 2;
    }
    rc = do_am8 ? am8(n, reps)
                : sweep(do_am, min_size, max_size, reps, window, budget_s);
    gv_finalize();
    return rc;
}
