/* What perf/bw_ucx.c and perf/bw_mpi.c share: their options, the gv way
 * (perf/pingpong's bandwidth loop), the blocks taking turns and the result
 * lines. Include after hop.h. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_PERF_BW_H
#define GV_PERF_BW_H

#include "hop.h"
#include "out.h"
#include "stamp.h"

#define BW_BLOCKS_MAX 1000

enum { BW_OPT_BLOCKS, BW_OPT_WINDOWS, BW_OPT_WINDOW, BW_OPT_SIZE, BW_NOPTS };

/* -b, -k, -w and -s. */
static const hop_flag_t bw_flags[BW_NOPTS] = {
    [BW_OPT_BLOCKS]  = {'b', "blocks", 1, BW_BLOCKS_MAX, 15},
    [BW_OPT_WINDOWS] = {'k', "windows per block", 1, 100000, 8},
    [BW_OPT_WINDOW]  = {'w', "messages per window", 1, 1024, 64},
    [BW_OPT_SIZE]    = {'s', "bytes", 1, 64 << 20, 1 << 20},
};

/* One block of the library's way: opt[BW_OPT_WINDOWS] windows of
 * opt[BW_OPT_WINDOW] messages of opt[BW_OPT_SIZE] bytes from rank 0 to
 * rank 1, each window answered by one empty message, all of them in at
 * both ends when it returns. */
typedef void (*bw_block_fn_t)(int rank, const int *opt, void *arg);

/* One block of the gv way: perf/pingpong's bandwidth loop, from @a buf.
 * The count @a target is cumulative. */
static inline void bw_gv_block(int rank, const void *buf, const int *opt,
                               uint64_t *target)
{
    size_t size = (size_t)opt[BW_OPT_SIZE];
    int    peer = 1 - rank, window = opt[BW_OPT_WINDOW], i, j;

    for (i = 0; i < opt[BW_OPT_WINDOWS]; i++) {
        if (rank == 0) {
            *target += 1;
            for (j = 0; j < window; j++)
                gv_am_send_nbi(peer, hop_ping_id, buf, size);
            gv_flush();
            gv_wait(hop_arrived_at_least, target);
            gv_am_wait_local();
        } else {
            *target += (uint64_t)window;
            gv_wait(hop_arrived_at_least, target);
            gv_am_send(peer, hop_ping_id, buf, 0);
            gv_flush();
        }
    }
}

/* The two ways in turns, block by block, after one untimed block of each,
 * each block begun by a gv_barrier() and timed on rank 0; rank 0 then
 * prints "<tool> transport=T bytes=S gv_MBps=X <raw>_MBps=Y
 * gv_over_<raw>=R" (the median block of each way, 10^6 B/s) and a "#"
 * line with each way's slowest and fastest block. The gv way sends from
 * @a gv_buf; @a raw_block(rank, opt, @a arg) is a block of the other. */
static inline void bw_run(const char *tool, const char *raw, const int *opt,
                          const void *gv_buf, bw_block_fn_t raw_block,
                          void *arg)
{
    enum { WAY_GV, WAY_RAW, NWAYS };
    double   mbps[NWAYS][BW_BLOCKS_MAX], med[NWAYS], block_bytes;
    int      rank = gv_rank(), b, w, n[NWAYS] = {0};
    uint64_t target = 0, t0;

    block_bytes = (double)opt[BW_OPT_SIZE] * opt[BW_OPT_WINDOW] *
                  opt[BW_OPT_WINDOWS];
    /* b < NWAYS: one untimed block of each way first. */
    for (b = 0; b < (opt[BW_OPT_BLOCKS] + 1) * NWAYS; b++) {
        w = b % NWAYS;
        gv_barrier();
        t0 = stamp_mono_ns();
        if (w == WAY_GV)
            bw_gv_block(rank, gv_buf, opt, &target);
        else
            raw_block(rank, opt, arg);
        if ((rank == 0) && (b >= NWAYS))
            mbps[w][n[w]++] = block_bytes * 1e3 /
                              (double)(stamp_mono_ns() - t0);
    }
    if (rank != 0)
        return;
    out_begin(tool, gv_transport_name(), gv_nranks());
    for (w = 0; w < NWAYS; w++) {
        char cfg[96];

        snprintf(cfg, sizeof(cfg), "way=%s,windows=%d,window=%d",
                 (w == WAY_GV) ? "gv" : raw, opt[BW_OPT_WINDOWS],
                 opt[BW_OPT_WINDOW]);
        out_row("bw", cfg, opt[BW_OPT_SIZE], "MBps", mbps[w], n[w]);
        med[w] = mbps[w][n[w] / 2];
    }
    out_end();
    if (out_machine())
        return;
    printf("%s transport=%s bytes=%d gv_MBps=%.1f %s_MBps=%.1f "
           "gv_over_%s=%.3f\n", tool, gv_transport_name(), opt[BW_OPT_SIZE],
           med[WAY_GV], raw, med[WAY_RAW], raw, med[WAY_GV] / med[WAY_RAW]);
    printf("# %s blocks=%d windows=%d window=%d gv_min=%.1f gv_max=%.1f "
           "%s_min=%.1f %s_max=%.1f\n", tool, opt[BW_OPT_BLOCKS],
           opt[BW_OPT_WINDOWS], opt[BW_OPT_WINDOW], mbps[WAY_GV][0],
           mbps[WAY_GV][n[WAY_GV] - 1], raw, mbps[WAY_RAW][0], raw,
           mbps[WAY_RAW][n[WAY_RAW] - 1]);
    fflush(stdout);
}

#endif
