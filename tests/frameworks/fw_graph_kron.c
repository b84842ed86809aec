/* The Kronecker generator: the list's size, ids and weights in range, a
 * skewed degree distribution, and checksums of the list (in order, and as
 * a set) that the driver compares across 1, 2, 3 and 4 ranks; optionally
 * the written file, which the driver compares byte for byte.
 * Run: gvrun -n 2 build/tests/frameworks/fw_graph_kron SCALE EF SEED [FILE]
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/mr.h"

#include <grapevine/fw/graph.h>

#include <inttypes.h>

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static struct {
    gv_kron_opts_t o;
    const char    *file;
} A;

static void run(void *unused)
{
    gv_edgelist_t el;
    uint64_t      sums[3] = {0, 0, 0};
    int64_t       i, *deg, maxdeg = 0, m;

    MR_OK(gv_kron_generate(&A.o, &el));
    m = A.o.edgefactor << A.o.scale;
    MR_CHECK(el.total == m && el.nverts == ((int64_t)1 << A.o.scale),
             "%" PRId64 " edges over %" PRId64 " vertices", el.total,
             el.nverts);
    deg = calloc((size_t)el.nverts, sizeof(int64_t));
    for (i = 0; i < el.n; i++) {
        uint32_t wb = 0;
        uint64_t h;

        MR_CHECK(el.src[i] >= 0 && el.src[i] < el.nverts && el.dst[i] >= 0 &&
                 el.dst[i] < el.nverts, "edge %" PRId64 " out of range",
                 el.first + i);
        if (A.o.weighted) {
            MR_CHECK(el.w[i] > 0 && el.w[i] <= 1, "weight %g", el.w[i]);
            memcpy(&wb, &el.w[i], 4);
        }
        h = mix((uint64_t)el.src[i] * 0x9e3779b97f4a7c15ull ^
                mix((uint64_t)el.dst[i]) ^ ((uint64_t)wb << 20));
        sums[0] += mix(h ^ mix((uint64_t)(el.first + i)));
        sums[1] += h;
        sums[2] += (uint64_t)el.src[i] + (uint64_t)el.dst[i];
        deg[el.src[i]]++;
        deg[el.dst[i]]++;
    }
    for (i = 0; i < el.nverts; i += 131072) {
        int64_t c = (el.nverts - i < 131072) ? el.nverts - i : 131072;

        MR_OK(gv_allreduce(deg + i, (size_t)c, GV_INT64, GV_SUM));
    }
    for (i = 0; i < el.nverts; i++)
        maxdeg = (deg[i] > maxdeg) ? deg[i] : maxdeg;
    /* a Kronecker graph is skewed: its largest degree is far above the
     * mean (2 * edgefactor); a uniform random graph's is not */
    if (A.o.scale >= 8)
        MR_CHECK(maxdeg > 8 * 2 * A.o.edgefactor, "max degree %" PRId64
                 " of mean %" PRId64 ": not a Kronecker graph",
                 maxdeg, 2 * A.o.edgefactor);
    MR_OK(gv_allreduce(sums, 3, GV_UINT64, GV_SUM));
    if (A.file != NULL) {
        char wpath[512];

        snprintf(wpath, sizeof(wpath), "%s.w", A.file);
        MR_OK(gv_edgelist_write(&el, A.file, A.o.weighted ? wpath : NULL));
    }
    if (gv_rank() == 0)
        printf("kron scale=%d edgefactor=%" PRId64 " seed=%" PRIu64
               " edges=%" PRId64 " maxdeg=%" PRId64 " list=%016" PRIx64
               " set=%016" PRIx64 " idsum=%" PRIu64 "\n", A.o.scale,
               A.o.edgefactor, A.o.seed, el.total, maxdeg, sums[0], sums[1],
               sums[2]);
    free(deg);
    gv_edgelist_free(&el);
}

int main(int argc, char **argv)
{
    mr_init(&argc, &argv);
    if ((argc < 4) || (argc > 5)) {
        fprintf(stderr, "usage: %s SCALE EDGEFACTOR SEED [FILE]\n", argv[0]);
        return 2;
    }
    A.o.scale      = atoi(argv[1]);
    A.o.edgefactor = atoll(argv[2]);
    A.o.seed       = strtoull(argv[3], NULL, 0);
    A.o.weighted   = 1;
    A.file         = (argc == 5) ? argv[4] : NULL;
    MR_OK(gv_run_all(run, NULL, 0));
    gv_finalize();
    return 0;
}
