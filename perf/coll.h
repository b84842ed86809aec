/* What perf/coll.c (Grapevine's team collectives) and perf/coll_mpi.c (Open
 * MPI's, the reference) share: the options, the measurement and the output,
 * so that the two measure the same thing the same way.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Measured, each in a blocking form (gv_team_X, MPI_X) and a non-blocking
 * one (gv_team_iX then gv_coll_wait; MPI_IX then MPI_Wait):
 *   allreduce  one 8-byte integer, sum; the loop of -i calls is timed as
 *              a whole (an all-reduce synchronizes the ranks itself);
 *   bcast      8 bytes from rank 0; each call is timed on its own, with an
 *              untimed barrier between calls (as OSU's osu_bcast), else
 *              the root would only time its sends;
 *   bcast      -S bytes (1 MiB) from rank 0, the same way; reported as
 *              bandwidth, bytes over time.
 * A sample is -i calls (a tenth of them, at least 3, for the large
 * broadcast); its time per call is the mean over its calls on each rank,
 * then the largest over the ranks (the last rank to finish). One untimed
 * sample first, then -r samples; rank 0 prints the median sample:
 *   coll impl=gv ranks=4 op=allreduce form=blocking bytes=8 us=3.21
 *   coll impl=gv ranks=4 op=bcast form=nonblocking bytes=1048576 us=812.0 MBps=1291.3
 * and a "#" line with each measurement's fastest and slowest sample; with
 * --csv or --format (perf/out.h) one row per measurement instead. */
#ifndef GV_PERF_COLL_H
#define GV_PERF_COLL_H

#include "out.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One implementation's calls. Each returns 0, or non-zero after printing
 * what failed (the program then exits 1). */
typedef struct {
    const char *impl;     /* "gv", "mpi" */
    int (*allreduce8)(int nb, const int64_t *in, int64_t *out);
    int (*bcast)(int nb, void *buf, size_t len); /* root: rank 0 */
    int (*barrier)(void);
    int (*max_double)(double *v); /* in place, over the ranks */
    int rank, size;
} coll_impl_t;

typedef struct {
    int iters;      /* -i: calls per sample (8-byte measurements) */
    int samples;    /* -r: timed samples */
    int big;        /* -S: bytes of the large broadcast */
} coll_opts_t;

/* The usage text of @a prog (coll or coll_mpi), written into @a buf. */
static const char *coll_usage(const char *prog, char *buf, size_t len)
{
    snprintf(buf, len, "usage: %s [-i calls] [-r samples] [-S bytes] "
             "[--csv | --format F] [-h]\n"
             "  -i  calls per sample, 10..1000000 (2000)\n"
             "  -r  samples, 1..1000 (11)\n"
             "  -S  large broadcast bytes, 8..67108864 (1048576); k, m, g\n"
             "      suffixes are taken (1m)\n"
             OUT_USAGE, prog);
    return buf;
}

static coll_opts_t coll_options(const char *prog, int argc, char **argv)
{
    static const struct option longopts[] = {OUT_LONGOPTS, {NULL, 0, NULL, 0}};
    coll_opts_t o = {2000, 11, 1 << 20};
    char        usage[1024];
    int         c;

    coll_usage(prog, usage, sizeof(usage));
    out_args(argc, argv);
    opterr = 0; /* our messages, not getopt's */
    while ((c = getopt_long(argc, argv, ":i:r:S:h", longopts, NULL)) != -1) {
        if (out_option(prog, usage, c))
            continue;
        switch (c) {
        case 'i':
            o.iters = hop_arg_int(prog, usage, "-i", optarg, 10, 1000000,
                                  "calls");
            break;
        case 'r':
            o.samples = hop_arg_int(prog, usage, "-r", optarg, 1, 1000,
                                    "samples");
            break;
        case 'S':
            o.big = (int)out_arg_size(prog, usage, "-S", optarg, 8,
                                      64 << 20);
            break;
        default: hop_getopt_fail(prog, usage, c, argv, longopts);
        }
    }
    hop_no_operands(prog, usage, argc, argv);
    return o;
}

static double coll_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One sample of one measurement: seconds per call, the largest over the
 * ranks; negative after a failure. */
static double coll_sample(const coll_impl_t *c, int what, int nb, int iters,
                          void *buf, size_t len)
{
    double  t = 0, t0;
    int64_t in = c->rank + 1, out = 0, want = 0;
    int     i;

    for (i = 1; i <= c->size; i++)
        want += i;
    if (c->barrier() != 0)
        return -1;
    if (what == 0) {
        t0 = coll_now();
        for (i = 0; i < iters; i++)
            if (c->allreduce8(nb, &in, &out) != 0)
                return -1;
        t = coll_now() - t0;
        if (out != want) {
            fprintf(stderr, "coll: rank %d: %s all-reduce gave %lld, want "
                    "%lld\n", c->rank, c->impl, (long long)out,
                    (long long)want);
            return -1;
        }
    } else {
        for (i = 0; i < iters; i++) {
            if (c->rank == 0)
                memset(buf, (i + 1) & 0xff, len);
            t0 = coll_now();
            if (c->bcast(nb, buf, len) != 0)
                return -1;
            t += coll_now() - t0;
            if ((((unsigned char *)buf)[0] != ((i + 1) & 0xff)) ||
                (((unsigned char *)buf)[len - 1] != ((i + 1) & 0xff))) {
                fprintf(stderr, "coll: rank %d: %s broadcast of %zu B "
                        "delivered wrong bytes\n", c->rank, c->impl, len);
                return -1;
            }
            if (c->barrier() != 0)
                return -1;
        }
    }
    t /= iters;
    if (c->max_double(&t) != 0)
        return -1;
    return t;
}

/* Every measurement; returns the exit status. */
static int coll_run(const coll_impl_t *c, const coll_opts_t *o)
{
    static const struct { int what, small; const char *op; } m[] = {
        {0, 1, "allreduce"}, {1, 1, "bcast"}, {1, 0, "bcast"},
    };
    char   *buf = malloc((size_t)o->big);
    double *v   = malloc(sizeof(double) * (size_t)o->samples);
    size_t  k;
    int     nb, s;

    if ((buf == NULL) || (v == NULL)) {
        fprintf(stderr, "coll: out of memory\n");
        return 1;
    }
    for (k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
        size_t len   = m[k].small ? 8 : (size_t)o->big;
        int    iters = m[k].small ? o->iters : o->iters / 10;
        if (iters < 3)
            iters = 3;
        for (nb = 0; nb <= 1; nb++) {
            double t, mbps;
            if (coll_sample(c, m[k].what, nb, iters, buf, len) < 0)
                return 1;
            for (s = 0; s < o->samples; s++)
                if ((v[s] = coll_sample(c, m[k].what, nb, iters, buf, len)) < 0)
                    return 1;
            for (s = 0; s < o->samples; s++)
                v[s] *= 1e6; /* microseconds */
            if (c->rank == 0) {
                char cfg[64];

                snprintf(cfg, sizeof(cfg), "op=%s,form=%s,calls=%d",
                         m[k].op, nb ? "nonblocking" : "blocking", iters);
                out_row("time", cfg, (long long)len, "us", v, o->samples);
                if (!m[k].small) {
                    double *bw = malloc(sizeof(double) * (size_t)o->samples);

                    if (bw == NULL) {
                        fprintf(stderr, "coll: out of memory\n");
                        return 1;
                    }
                    for (s = 0; s < o->samples; s++)
                        bw[s] = (double)len / v[s];
                    out_row("bw", cfg, (long long)len, "MBps", bw,
                            o->samples);
                    free(bw);
                }
            }
            qsort(v, (size_t)o->samples, sizeof(double), hop_cmp_double);
            t    = v[o->samples / 2] * 1e-6;
            mbps = (double)len / t / 1e6;
            if ((c->rank != 0) || out_machine())
                continue;
            printf("coll impl=%s ranks=%d op=%s form=%s bytes=%zu us=%.3f",
                   c->impl, c->size, m[k].op, nb ? "nonblocking" : "blocking",
                   len, t * 1e6);
            if (!m[k].small)
                printf(" MBps=%.1f", mbps);
            printf("\n# %s %s %zu B: fastest %.3f us, slowest %.3f us, %d "
                   "samples of %d calls\n", m[k].op,
                   nb ? "nonblocking" : "blocking", len, v[0],
                   v[o->samples - 1], o->samples, iters);
            fflush(stdout);
        }
    }
    if (c->rank == 0)
        out_end();
    free(buf);
    free(v);
    return 0;
}

#endif
