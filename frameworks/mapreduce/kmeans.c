/* k-means (Lloyd's algorithm) on the MapReduce engine, its Gaussian-
 * mixture generator and its binary point loader.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "mapreduce/mr.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define KM_DIM_MAX 512
/* Doubles per gv_allreduce call (its limit is 1 MiB). */
#define RED_STEP   65536

typedef struct {
    const double *c;
    int           k, dim;
} assign_t;

/* Index of the centre nearest to @a p (squared distance summed over the
 * coordinates in order; the first of equals), its distance in *d_p. */
static int nearest(const assign_t *a, const double *p, double *d_p)
{
    int    best = 0, c, j;
    double bd   = INFINITY;

    for (c = 0; c < a->k; c++) {
        const double *q = a->c + (size_t)c * (size_t)a->dim;
        double        d = 0;
        for (j = 0; j < a->dim; j++) {
            double t = p[j] - q[j];
            d += t * t;
        }
        if (d < bd) {
            bd   = d;
            best = c;
        }
    }
    *d_p = bd;
    return best;
}

static void sum_f64s(void *value, const void *incoming, size_t val_size)
{
    double *v = value, x;
    size_t  i;

    for (i = 0; i < val_size / 8; i++) {
        memcpy(&x, (const uint8_t *)incoming + 8 * i, 8);
        v[i] += x;
    }
}

static void km_map(gv_mr_t *mr, int64_t i, const void *elem, void *arg)
{
    const assign_t *a = arg;
    double          p[KM_DIM_MAX + 1], d;
    int64_t         c;

    (void)i;
    memcpy(p, elem, sizeof(double) * (size_t)a->dim);
    c          = nearest(a, p, &d);
    p[a->dim]  = 1.0;
    gv_mr_emit(mr, &c, 8, p);
}

typedef struct {
    double *acc;
    int     dim;
} gather_t;

static void km_gather(const void *key, size_t klen, const void *val,
                      void *arg)
{
    gather_t *g = arg;
    int64_t   c;

    (void)klen;
    memcpy(&c, key, 8);
    memcpy(g->acc + (size_t)c * (size_t)(g->dim + 1), val,
           sizeof(double) * (size_t)(g->dim + 1));
}

typedef struct {
    assign_t a;
    double   sse;
} sse_t;

static void km_sse(int64_t i, void *elem, void *arg)
{
    sse_t *s = arg;
    double d, p[KM_DIM_MAX];

    (void)i;
    memcpy(p, elem, sizeof(double) * (size_t)s->a.dim);
    nearest(&s->a, p, &d);
    s->sse += d;
}

gv_status_t gv_mr_kmeans(gv_array_t *pts, double *centres, gv_kmeans_t *km)
{
    gv_mr_opts_t o = {0};
    gv_mr_t     *mr;
    gv_status_t  status;
    assign_t     a;
    gather_t     g;
    sse_t        s;
    size_t       nacc, off;
    int          it, c, j;
    double       t0 = gv_wtime();

    if ((km->k < 2) || (km->k > 10000) || (km->dim < 1) ||
        (km->dim > KM_DIM_MAX) || (km->max_iter < 1) || !(km->tol >= 0) ||
        (gv_array_elem_size(pts) != sizeof(double) * (size_t)km->dim)) {
        if (gv_rank() == 0)
            mr_error("k-means: k %d (accepted 2..10000), dim %d (1..%d), "
                     "max_iter %d (>= 1), tol %g (>= 0), points of %zu "
                     "bytes (dim doubles)", km->k, km->dim, KM_DIM_MAX,
                     km->max_iter, km->tol, gv_array_elem_size(pts));
        return GV_ERR_INVALID;
    }
    o.key_size      = 8;
    o.val_size      = sizeof(double) * (size_t)(km->dim + 1);
    o.combine       = sum_f64s;
    o.local_combine = 1;
    status = gv_mr_create(&o, &mr);
    if (status != GV_OK)
        return status;
    nacc  = (size_t)km->k * (size_t)(km->dim + 1);
    g.acc = malloc(sizeof(double) * nacc);
    g.dim = km->dim;
    if (g.acc == NULL)
        gv_abort(1, "k-means: out of local memory for %d centres", km->k);
    a.c   = centres;
    a.k   = km->k;
    a.dim = km->dim;
    km->iters = 0;
    km->moved = 0;
    for (it = 0; it < km->max_iter; it++) {
        status = gv_mr_run_array(mr, pts, km_map, &a);
        if (status != GV_OK)
            break;
        memset(g.acc, 0, sizeof(double) * nacc);
        gv_mr_forall(mr, km_gather, &g);
        /* Each centre's sums are on one rank: adding zeros elsewhere is
         * exact, so every rank gets the same bits. */
        for (off = 0; off < nacc; off += RED_STEP)
            gv_allreduce(g.acc + off, (nacc - off < RED_STEP) ? nacc - off
                                                               : RED_STEP,
                         GV_DOUBLE, GV_SUM);
        km->moved = 0;
        for (c = 0; c < km->k; c++) {
            double *sum = g.acc + (size_t)c * (size_t)(km->dim + 1);
            double *q   = centres + (size_t)c * (size_t)km->dim, m = 0;
            if (sum[km->dim] == 0)
                continue;
            for (j = 0; j < km->dim; j++) {
                double nv = sum[j] / sum[km->dim];
                m += (nv - q[j]) * (nv - q[j]);
                q[j] = nv;
            }
            if (sqrt(m) > km->moved)
                km->moved = sqrt(m);
        }
        km->iters = it + 1;
        if (km->progress && (gv_rank() == 0))
            fprintf(stderr, "k-means: iteration %d, largest move %.6g, "
                    "%.3f s\n", it + 1, km->moved, gv_wtime() - t0);
        gv_mr_clear(mr);
        if ((km->tol > 0) && (km->moved <= km->tol))
            break;
    }
    free(g.acc);
    gv_mr_destroy(mr);
    if (status != GV_OK)
        return status;
    s.a   = a;
    s.sse = 0;
    status = gv_array_forall(pts, 0, km_sse, &s, NULL);
    if (status == GV_OK)
        status = gv_allreduce(&s.sse, 1, GV_DOUBLE, GV_SUM);
    km->sse = s.sse;
    return status;
}

typedef struct {
    int      dim, ncomp;
    double   sigma;
    uint64_t seed;
} gauss_t;

static void gauss_body(int64_t i, void *elem, void *arg)
{
    const gauss_t *g = arg;
    double        *p = elem;
    uint64_t       comp = mr_mix64(g->seed ^ mr_mix64((uint64_t)i + 1)) %
                    (uint64_t)g->ncomp;
    int            j;

    for (j = 0; j < g->dim; j++) {
        double mean = -10.0 + 20.0 * mr_unit(g->seed ^ 0x6d65616e73ull, comp,
                                             (uint64_t)j);
        double u1   = 1.0 - mr_unit(g->seed, (uint64_t)i, 2 * (uint64_t)j);
        double u2   = mr_unit(g->seed, (uint64_t)i, 2 * (uint64_t)j + 1);
        p[j] = mean + g->sigma * sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
    }
}

gv_status_t gv_mr_gen_gaussian(gv_array_t *pts, int dim, int ncomp,
                               double sigma, uint64_t seed)
{
    gauss_t g = {dim, ncomp, sigma, seed};

    if ((dim < 1) || (dim > KM_DIM_MAX) || (ncomp < 1) || !(sigma >= 0) ||
        (gv_array_elem_size(pts) != sizeof(double) * (size_t)dim)) {
        if (gv_rank() == 0)
            mr_error("gaussian points: dim %d (1..%d), components %d "
                     "(>= 1), sigma %g (>= 0), elements of dim doubles",
                     dim, KM_DIM_MAX, ncomp, sigma);
        return GV_ERR_INVALID;
    }
    return gv_array_forall(pts, 0, gauss_body, &g, NULL);
}

gv_status_t gv_mr_load_points(const char *path, int dim, int f32,
                              gv_array_t **pts_p)
{
    size_t      w = f32 ? 4 : 8, pt;
    struct stat st;
    int64_t     n, lo, cnt, bad = 0, i, done;
    gv_array_t *a;
    gv_status_t status;
    double     *out;
    uint8_t    *buf;
    int         fd, j;

    if ((dim < 1) || (dim > KM_DIM_MAX)) {
        if (gv_rank() == 0)
            mr_error("points: dim %d, accepted 1..%d", dim, KM_DIM_MAX);
        return GV_ERR_INVALID;
    }
    pt = w * (size_t)dim;
    if (stat(path, &st) != 0) {
        if (gv_rank() == 0)
            mr_error("cannot read %s: %s", path, strerror(errno));
        return GV_ERR_IO;
    }
    if ((st.st_size % (off_t)pt) != 0) {
        if (gv_rank() == 0)
            mr_error("%s: %lld bytes is not a whole number of points of %d "
                     "%s coordinates (%zu bytes each)", path,
                     (long long)st.st_size, dim, f32 ? "float32" : "float64",
                     pt);
        return GV_ERR_INVALID;
    }
    n      = st.st_size / (off_t)pt;
    status = gv_array_create(n, sizeof(double) * (size_t)dim, GV_DIST_BLOCK,
                             0, &a);
    if (status != GV_OK)
        return status;
    lo  = gv_array_local_lo(a);
    cnt = gv_array_local_count(a);
    out = gv_array_local(a);
    buf = malloc(1 << 20);
    fd  = open(path, O_RDONLY);
    if ((fd < 0) || (buf == NULL)) {
        mr_error("cannot open %s: %s", path, strerror(errno));
        bad = 1;
    }
    for (done = 0; !bad && (done < cnt);) {
        int64_t take = (int64_t)((1 << 20) / pt);
        ssize_t got;
        if (take > cnt - done)
            take = cnt - done;
        got = pread(fd, buf, (size_t)take * pt, (off_t)((lo + done) * (int64_t)pt));
        if (got != (ssize_t)((size_t)take * pt)) {
            mr_error("cannot read %s at byte %lld: %s", path,
                     (long long)((lo + done) * (int64_t)pt),
                     (got < 0) ? strerror(errno) : "short read");
            bad = 1;
            break;
        }
        for (i = 0; i < take; i++)
            for (j = 0; j < dim; j++) {
                double *d = out + (size_t)(done + i) * (size_t)dim + (size_t)j;
                if (f32) {
                    float f;
                    memcpy(&f, buf + (size_t)i * pt + 4 * (size_t)j, 4);
                    *d = f;
                } else {
                    memcpy(d, buf + (size_t)i * pt + 8 * (size_t)j, 8);
                }
            }
        done += take;
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    if (bad) {
        gv_array_destroy(a);
        return GV_ERR_IO;
    }
    *pts_p = a;
    return GV_OK;
}
