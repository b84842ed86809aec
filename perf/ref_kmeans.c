/* The single-process reference of perf/mapreduce.sh: a plain C Lloyd's
 * loop on float64 points, from the start gvmr kmeans takes (points i*N/K),
 * the one-core bound gvmr kmeans is compared with.
 * Run: build/perf/ref_kmeans FILE DIM K ITERS
 * Last line: k=K iters=I checksum=C sse=S seconds=T (the iterations and
 * the final sum of squared distances; reading the file apart).
 * SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int nearest(const double *p, const double *c, int k, int dim,
                   double *d_p)
{
    int    best = 0, i, j;
    double bd   = INFINITY;

    for (i = 0; i < k; i++) {
        double d = 0;
        for (j = 0; j < dim; j++) {
            double t = p[j] - c[(size_t)i * dim + j];
            d += t * t;
        }
        if (d < bd) {
            bd   = d;
            best = i;
        }
    }
    *d_p = bd;
    return best;
}

int main(int argc, char **argv)
{
    FILE   *f;
    long    bytes;
    double *pts, *c, *sum, d, sse = 0, chk = 0, t0;
    int64_t n, p;
    int     dim, k, iters, it, i, j;

    if (argc != 5 || (dim = atoi(argv[2])) < 1 || (k = atoi(argv[3])) < 2 ||
        (iters = atoi(argv[4])) < 1) {
        fprintf(stderr, "usage: ref_kmeans FILE DIM K ITERS\n");
        return 2;
    }
    f = fopen(argv[1], "rb");
    if (f == NULL) {
        fprintf(stderr, "ref_kmeans: cannot open %s\n", argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    n   = bytes / (8 * dim);
    pts = malloc((size_t)bytes);
    if ((pts == NULL) || (fread(pts, 1, (size_t)bytes, f) != (size_t)bytes) ||
        (n < k)) {
        fprintf(stderr, "ref_kmeans: cannot read %s (or fewer points than "
                "k)\n", argv[1]);
        return 1;
    }
    fclose(f);
    c   = malloc(sizeof(double) * (size_t)k * dim);
    sum = malloc(sizeof(double) * (size_t)k * (dim + 1));
    for (i = 0; i < k; i++)
        memcpy(c + (size_t)i * dim, pts + (i * n / k) * dim, 8 * (size_t)dim);
    t0 = now();
    for (it = 0; it < iters; it++) {
        memset(sum, 0, sizeof(double) * (size_t)k * (dim + 1));
        for (p = 0; p < n; p++) {
            int b = nearest(pts + p * dim, c, k, dim, &d);
            for (j = 0; j < dim; j++)
                sum[(size_t)b * (dim + 1) + j] += pts[p * dim + j];
            sum[(size_t)b * (dim + 1) + dim] += 1;
        }
        for (i = 0; i < k; i++) {
            double *s = sum + (size_t)i * (dim + 1);
            if (s[dim] == 0)
                continue;
            for (j = 0; j < dim; j++)
                c[(size_t)i * dim + j] = s[j] / s[dim];
        }
    }
    for (p = 0; p < n; p++) {
        nearest(pts + p * dim, c, k, dim, &d);
        sse += d;
    }
    t0 = now() - t0;
    for (i = 0; i < k * dim; i++)
        chk += c[i];
    printf("k=%d iters=%d checksum=%.12e sse=%.12e seconds=%.6f\n", k, iters,
           chk, sse, t0);
    free(pts);
    free(c);
    free(sum);
    return 0;
}
