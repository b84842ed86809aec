/* Ping-pong over active messages between ranks 0 and 1: one line per size
 * with one-way latency (half the median round trip over every iteration of
 * every repetition, as ucx_perftest's 50th percentile: on a shared machine
 * the mean measures the scheduler) and streaming bandwidth (median of
 * repetitions; windows of gv_am_send_nbi(), so that large messages are in
 * flight together, as ucp_am_bw's), then a summary line.
 * The latency ping and pong go out with gv_am_send_now(), the call for a
 * request or reply, as ucp_am_lat's go out with ucp_am_send_nbx(); -b
 * measures gv_am_send() plus gv_flush() instead (a buffered send shipped
 * by an explicit flush).
 * Run: gvrun -n 2 build/perf/pingpong
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>

#include "hop.h"
#include "out.h"
#include "stamp.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile uint64_t arrived;
static gv_am_id_t        ping_id;

static void on_ping(int src, const void *payload, size_t len, void *arg)
{
    arrived++;
}

static int arrived_at_least(void *arg)
{
    return arrived >= *(uint64_t *)arg;
}

/* One latency message: gv_am_send_now(), or with -b gv_am_send() and a
 * flush. */
static int buffered;

static void send_one(int dst, const void *buf, size_t size)
{
    if (buffered) {
        gv_am_send(dst, ping_id, buf, size);
        gv_flush();
    } else {
        gv_am_send_now(dst, ping_id, buf, size);
    }
}

#define PP_SIZE_MAX   (64u << 20) /* -S: the buffer */
#define PP_REPS_MAX   64          /* -r: the bandwidth medians' room */
#define PP_WINDOW_MAX 4096        /* -w: messages in flight per window */

/* Sizes take k/m/g suffixes as the GV_* variables do (out_arg_size); the
 * other values are whole decimal numbers; anything else is an error
 * naming the option (hop_arg_*). */
static const char usage_text[] =
    "usage: pingpong [-s min_bytes] [-S max_bytes] [-r repetitions] "
    "[-w window] [-b] [--csv | --format text|csv|json] [-h]\n"
    "  -s  smallest message, 0..67108864 bytes (8); sizes double up to -S\n"
    "      (-s 0 measures empty messages only)\n"
    "  -S  largest message, -s..67108864 bytes (4194304)\n"
    "  -r  repetitions per size, 1..64 (7)\n"
    "  -w  bandwidth window, 1..4096 messages (64)\n"
    "  -b  latency with gv_am_send() + gv_flush() instead of "
    "gv_am_send_now()\n"
    OUT_USAGE
    "  Sizes take k, m, g suffixes (64k, 1m). Text output: one line per\n"
    "  size (median one-way latency, median bandwidth), then a summary\n"
    "  line whose fields for sizes not measured read n/a.\n";

int main(int argc, char **argv)
{
    size_t   min_size = 8, max_size = 4u << 20, size;
    int      reps = 7, window = 64, i, c;
    uint8_t *buf;
    double   lat8 = 0, bw1m = 0, lat;
    int      have_lat8 = 0, have_bw1m = 0;
    static const struct option longopts[] = {OUT_LONGOPTS, {NULL, 0, NULL, 0}};

    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((c = getopt_long(argc, argv, ":s:S:r:w:bh", longopts, NULL)) !=
           -1) {
        if (out_option("pingpong", usage_text, c))
            continue;
        switch (c) {
        case 's':
            min_size = out_arg_size("pingpong", usage_text, "-s", optarg, 0,
                                    PP_SIZE_MAX);
            break;
        case 'S':
            max_size = out_arg_size("pingpong", usage_text, "-S", optarg, 0,
                                    PP_SIZE_MAX);
            break;
        case 'r':
            reps = hop_arg_int("pingpong", usage_text, "-r", optarg, 1,
                               PP_REPS_MAX, "repetitions");
            break;
        case 'w':
            window = hop_arg_int("pingpong", usage_text, "-w", optarg, 1,
                                 PP_WINDOW_MAX, "messages");
            break;
        case 'b': buffered = 1; break;
        default: hop_getopt_fail("pingpong", usage_text, c, argv, longopts);
        }
    }
    hop_no_operands("pingpong", usage_text, argc, argv);
    if (min_size > max_size)
        hop_fail("pingpong", usage_text, "-s %zu is more than -S %zu: "
                 "accepted -s up to -S", min_size, max_size);
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    gv_am_register(on_ping, NULL, &ping_id);
    if (gv_nranks() < 2) {
        fprintf(stderr, "pingpong: needs 2 ranks (gvrun -n 2)\n");
        gv_finalize();
        return 2;
    }
    /* Page-aligned, as ucx_perftest's and fi_pingpong's buffers are. */
    buf = aligned_alloc(4096, (max_size + 4095) & ~(size_t)4095);
    if (buf == NULL) {
        fprintf(stderr, "pingpong: no memory for %zu bytes\n", max_size);
        gv_finalize();
        return 1;
    }
    memset(buf, 0, max_size);
    if (gv_rank() == 0)
        out_begin("pingpong", gv_transport_name(), gv_nranks());
    if ((gv_rank() == 0) && !out_machine())
        printf("# pingpong transport=%s aggregate=%s latency send=%s\n"
               "# %10s %12s %12s\n",
               gv_transport_name(),
               getenv("GV_AGGREGATE") ? getenv("GV_AGGREGATE") : "1",
               buffered ? "gv_am_send+gv_flush" : "gv_am_send_now",
               "bytes", "lat_us", "bw_MBps");
    gv_barrier();
    for (size = min_size; size <= max_size; size *= 2) {
        /* Fewer iterations for big messages: keep each size ~0.1-0.3 s. */
        int     iters = (size <= 4096) ? 20000 : (int)((64u << 20) / size) + 10;
        double  bw[PP_REPS_MAX],
                *rtt = malloc(sizeof(double) * (size_t)iters * PP_REPS_MAX);
        int     r, nrtt = 0;

        for (r = 0; r < reps; r++) {
            uint64_t     target;
            stamp_span_t span;
            uint64_t     prev;
            double       ns_per_tick;
            int          first = nrtt;

            /* latency: strict ping-pong, one timestamp per round trip.
             * Reset the counter before the barrier: after it, the peer
             * may already be sending. */
            arrived = 0;
            gv_barrier();
            stamp_span_begin(&span);
            prev = stamp_ticks();
            for (i = 0; i < iters; i++) {
                target = (uint64_t)i + 1;
                if (gv_rank() == 0) {
                    uint64_t now;

                    send_one(1, buf, size);
                    gv_wait(arrived_at_least, &target);
                    now         = stamp_ticks();
                    rtt[nrtt++] = (double)(now - prev);
                    prev        = now;
                } else if (gv_rank() == 1) {
                    gv_wait(arrived_at_least, &target);
                    send_one(0, buf, size);
                }
            }
            ns_per_tick = stamp_span_rate(&span);
            for (i = first; i < nrtt; i++)
                rtt[i] *= ns_per_tick * 1e-3;
            /* bandwidth: windows of messages, one reply per window */
            arrived = 0;
            gv_barrier();
            {
                int    nwin = (iters + window - 1) / window;
                double t1   = gv_wtime();
                for (i = 0; i < nwin; i++) {
                    int j;
                    if (gv_rank() == 0) {
                        target = (uint64_t)i + 1;
                        for (j = 0; j < window; j++)
                            gv_am_send_nbi(1, ping_id, buf, size);
                        gv_flush();
                        gv_wait(arrived_at_least, &target);
                        gv_am_wait_local();
                    } else if (gv_rank() == 1) {
                        target = (uint64_t)(i + 1) * window;
                        gv_wait(arrived_at_least, &target);
                        gv_am_send(0, ping_id, buf, 0);
                        gv_flush();
                    }
                }
                bw[r] = (double)size * window * nwin /
                        ((gv_wtime() - t1) * 1e6);
            }
        }
        /* One-way latency: half of each round trip. */
        for (i = 0; i < nrtt; i++)
            rtt[i] /= 2;
        qsort(rtt, (size_t)nrtt, sizeof(double), hop_cmp_double);
        qsort(bw, (size_t)reps, sizeof(double), hop_cmp_double);
        lat = (nrtt > 0) ? rtt[nrtt / 2] : 0;
        if (gv_rank() == 0) {
            char cfg[32];

            snprintf(cfg, sizeof(cfg), "window=%d", window);
            out_row("lat", buffered ? "send+flush" : "send_now",
                    (long long)size, "us", rtt, nrtt);
            out_row("bw", cfg, (long long)size, "MBps", bw, reps);
            if (!out_machine())
                printf("  %10zu %12.3f %12.1f\n", size, lat, bw[reps / 2]);
            fflush(stdout);
        }
        free(rtt);
        if ((size == 8) && (nrtt > 0)) {
            lat8      = lat;
            have_lat8 = 1;
        }
        if (size == (1u << 20)) {
            bw1m      = bw[reps / 2];
            have_bw1m = 1;
        }
        if (size == 0)
            break;
    }
    if ((gv_rank() == 0) && !out_machine()) {
        printf("pingpong transport=%s", gv_transport_name());
        out_kv("lat8_us", "%.3f", lat8, have_lat8);
        out_kv("bw1m_MBps", "%.1f", bw1m, have_bw1m);
        printf("\n");
    }
    if (gv_rank() == 0)
        out_end();
    free(buf);
    gv_finalize();
    return 0;
}
