/* kron: write a Graph500 Kronecker graph as a binary edge list, for the
 * graph benchmarks (perf/graph.sh) and their GraphBLAS peer.
 *
 *   kron --scale S [--edgefactor E] [--seed X] --output FILE.el [--weights FILE.w]
 *
 * The specification's generator: 2^S vertices, E * 2^S edges (default
 * E = 16), each edge placed by S recursive choices of a quadrant with the
 * initiator probabilities 0.57, 0.19, 0.19, 0.05; then the vertex labels
 * are permuted and the edges shuffled. Every random number comes from a
 * counter-based generator (splitmix64 of seed and a counter), so a file
 * depends only on S, E and the seed. FILE.el holds little-endian uint64
 * pairs (src, dst); FILE.w one little-endian float32 weight in (0, 1] per
 * edge. SPDX-License-Identifier: BSD-3-Clause */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The @a i-th random number of stream @a stream. */
static uint64_t rnd(uint64_t seed, uint64_t stream, uint64_t i)
{
    return mix(mix(seed ^ mix(stream)) + i);
}

/* Uniform in [0, 1) with 53 bits. */
static double unif(uint64_t r)
{
    return (double)(r >> 11) * 0x1.0p-53;
}

static long long parse_ll(const char *opt, const char *s, long long lo, long long hi)
{
    char     *end;
    long long v;

    errno = 0;
    v = strtoll(s, &end, 10);
    if ((errno != 0) || (end == s) || (*end != '\0') || (v < lo) || (v > hi)) {
        fprintf(stderr, "kron: %s '%s': expected an integer in %lld..%lld\n", opt, s, lo, hi);
        exit(1);
    }
    return v;
}

int main(int argc, char **argv)
{
    int         scale = -1, ef = 16;
    uint64_t    seed = 1, n, m, *edges, *perm;
    const char *out = NULL, *wout = NULL;
    FILE       *f;

    for (int i = 1; i < argc; i++) {
        const char *v = (i + 1 < argc) ? argv[i + 1] : NULL;

        if ((strcmp(argv[i], "-h") == 0) || (strcmp(argv[i], "--help") == 0)) {
            printf("usage: kron --scale S [--edgefactor E] [--seed X] --output FILE.el "
                   "[--weights FILE.w]\n");
            return 0;
        }
        if (v == NULL) {
            fprintf(stderr, "kron: option '%s' needs a value (or is unknown; see --help)\n",
                    argv[i]);
            return 1;
        }
        if (strcmp(argv[i], "--scale") == 0)
            scale = (int)parse_ll("--scale", v, 1, 40);
        else if (strcmp(argv[i], "--edgefactor") == 0)
            ef = (int)parse_ll("--edgefactor", v, 1, 1024);
        else if (strcmp(argv[i], "--seed") == 0)
            seed = (uint64_t)parse_ll("--seed", v, 0, INT64_MAX);
        else if (strcmp(argv[i], "--output") == 0)
            out = v;
        else if (strcmp(argv[i], "--weights") == 0)
            wout = v;
        else {
            fprintf(stderr, "kron: option '%s' unknown (see --help)\n", argv[i]);
            return 1;
        }
        i++;
    }
    if ((scale < 0) || (out == NULL)) {
        fprintf(stderr, "kron: --scale S and --output FILE.el are required\n");
        return 1;
    }
    n = (uint64_t)1 << scale;
    m = n * (uint64_t)ef;
    edges = malloc(2 * m * sizeof(*edges));
    perm = malloc(n * sizeof(*perm));
    if ((edges == NULL) || (perm == NULL)) {
        fprintf(stderr, "kron: out of memory for %" PRIu64 " edges\n", m);
        return 1;
    }
    /* Each edge: one quadrant per bit, from its own counter range. */
    for (uint64_t e = 0; e < m; e++) {
        uint64_t s = 0, d = 0;

        for (int b = 0; b < scale; b++) {
            double r = unif(rnd(seed, 1, e * (uint64_t)scale + (uint64_t)b));

            s <<= 1;
            d <<= 1;
            if (r < 0.57) {
            } else if (r < 0.76) {
                d |= 1;
            } else if (r < 0.95) {
                s |= 1;
            } else {
                s |= 1;
                d |= 1;
            }
        }
        edges[2 * e] = s;
        edges[2 * e + 1] = d;
    }
    /* Permute the labels and shuffle the edges (Fisher-Yates). */
    for (uint64_t v = 0; v < n; v++)
        perm[v] = v;
    for (uint64_t v = n - 1; v > 0; v--) {
        uint64_t j = rnd(seed, 2, v) % (v + 1), t = perm[v];

        perm[v] = perm[j];
        perm[j] = t;
    }
    for (uint64_t e = m - 1; e > 0; e--) {
        uint64_t j = rnd(seed, 3, e) % (e + 1), s = edges[2 * e], d = edges[2 * e + 1];

        edges[2 * e] = edges[2 * j];
        edges[2 * e + 1] = edges[2 * j + 1];
        edges[2 * j] = s;
        edges[2 * j + 1] = d;
    }
    for (uint64_t i = 0; i < 2 * m; i++)
        edges[i] = htole64(perm[edges[i]]);
    f = fopen(out, "wb");
    if ((f == NULL) || (fwrite(edges, sizeof(*edges), 2 * m, f) != 2 * m) || (fclose(f) != 0)) {
        fprintf(stderr, "kron: %s: cannot write: %s\n", out, strerror(errno));
        return 1;
    }
    if (wout != NULL) {
        uint32_t *w = (uint32_t *)edges; /* reuse: m floats fit in 2m words */

        for (uint64_t e = 0; e < m; e++) {
            /* (0, 1]: 24 random bits, plus one, over 2^24. */
            float    x = (float)((rnd(seed, 4, e) >> 40) + 1) * 0x1.0p-24f;
            uint32_t bits;

            memcpy(&bits, &x, sizeof(bits));
            w[e] = htole32(bits);
        }
        f = fopen(wout, "wb");
        if ((f == NULL) || (fwrite(w, sizeof(*w), m, f) != m) || (fclose(f) != 0)) {
            fprintf(stderr, "kron: %s: cannot write: %s\n", wout, strerror(errno));
            return 1;
        }
    }
    printf("kron scale=%d edgefactor=%d seed=%" PRIu64 " vertices=%" PRIu64 " edges=%" PRIu64
           " output=%s%s%s\n",
           scale, ef, seed, n, m, out, wout ? " weights=" : "", wout ? wout : "");
    free(edges);
    free(perm);
    return 0;
}
