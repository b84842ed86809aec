/* Sequential references for the MapReduce and join tests.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "check/mr_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NB 65536

typedef struct wnode {
    struct wnode *next;
    int64_t       count;
    size_t        len;
    char          word[];
} wnode_t;

struct ref_wc {
    wnode_t *b[NB];
    int64_t  total, distinct;
};

ref_wc_t *ref_wc_new(void)
{
    return calloc(1, sizeof(ref_wc_t));
}

void ref_wc_free(ref_wc_t *wc)
{
    size_t i;

    for (i = 0; i < NB; i++)
        while (wc->b[i] != NULL) {
            wnode_t *n = wc->b[i];
            wc->b[i]   = n->next;
            free(n);
        }
    free(wc);
}

static size_t bucket(const char *w, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    size_t   i;

    for (i = 0; i < len; i++)
        h = (h ^ (unsigned char)w[i]) * 1099511628211ull;
    return (size_t)(h % NB);
}

static int sp(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
           c == '\r';
}

void ref_wc_text(ref_wc_t *wc, const char *t, size_t len)
{
    size_t i = 0, w;

    while (i < len) {
        while (i < len && sp((unsigned char)t[i]))
            i++;
        w = i;
        while (i < len && !sp((unsigned char)t[i]))
            i++;
        if (i > w) {
            size_t   b = bucket(t + w, i - w);
            wnode_t *n;
            for (n = wc->b[b]; n != NULL; n = n->next)
                if (n->len == i - w && memcmp(n->word, t + w, i - w) == 0)
                    break;
            if (n == NULL) {
                n = calloc(1, sizeof(*n) + i - w);
                n->len = i - w;
                memcpy(n->word, t + w, i - w);
                n->next  = wc->b[b];
                wc->b[b] = n;
                wc->distinct++;
            }
            n->count++;
            wc->total++;
        }
    }
}

int ref_wc_file(ref_wc_t *wc, const char *path)
{
    FILE  *f = fopen(path, "rb");
    char  *buf;
    long   len;

    if (f == NULL)
        return -1;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len + 1);
    if ((buf == NULL) || (fread(buf, 1, (size_t)len, f) != (size_t)len)) {
        free(buf);
        fclose(f);
        return -1;
    }
    fclose(f);
    ref_wc_text(wc, buf, (size_t)len);
    free(buf);
    return 0;
}

int64_t ref_wc_count(const ref_wc_t *wc, const char *word, size_t len)
{
    const wnode_t *n;

    for (n = wc->b[bucket(word, len)]; n != NULL; n = n->next)
        if (n->len == len && memcmp(n->word, word, len) == 0)
            return n->count;
    return 0;
}

int64_t ref_wc_total(const ref_wc_t *wc)
{
    return wc->total;
}

int64_t ref_wc_distinct(const ref_wc_t *wc)
{
    return wc->distinct;
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

int ref_kmeans(const double *pts, int64_t n, int dim, int k, double *c,
               int max_iter, double tol, double *sse_p, double *moved_p)
{
    double *sum = malloc(sizeof(double) * (size_t)k * (dim + 1)), d, moved = 0;
    int     it, iters = 0, i, j;
    int64_t p;

    for (it = 0; it < max_iter; it++) {
        memset(sum, 0, sizeof(double) * (size_t)k * (dim + 1));
        for (p = 0; p < n; p++) {
            int b = nearest(pts + p * dim, c, k, dim, &d);
            for (j = 0; j < dim; j++)
                sum[(size_t)b * (dim + 1) + j] += pts[p * dim + j];
            sum[(size_t)b * (dim + 1) + dim] += 1;
        }
        moved = 0;
        for (i = 0; i < k; i++) {
            double *s = sum + (size_t)i * (dim + 1), m = 0;
            if (s[dim] == 0)
                continue;
            for (j = 0; j < dim; j++) {
                double nv = s[j] / s[dim], *q = c + (size_t)i * dim + j;
                m += (nv - *q) * (nv - *q);
                *q = nv;
            }
            if (sqrt(m) > moved)
                moved = sqrt(m);
        }
        iters = it + 1;
        if (tol > 0 && moved <= tol)
            break;
    }
    *sse_p = 0;
    for (p = 0; p < n; p++) {
        nearest(pts + p * dim, c, k, dim, &d);
        *sse_p += d;
    }
    *moved_p = moved;
    free(sum);
    return iters;
}

int64_t ref_join(const int64_t *r, int64_t nr, int rw, int rcol,
                 const int64_t *s, int64_t ns, int sw, int scol, int64_t *out)
{
    int64_t i, j, n = 0;

    for (i = 0; i < nr; i++)
        for (j = 0; j < ns; j++)
            if (r[i * rw + rcol] == s[j * sw + scol]) {
                if (out != NULL) {
                    memcpy(out + n * (rw + sw), r + i * rw, 8 * (size_t)rw);
                    memcpy(out + n * (rw + sw) + rw, s + j * sw, 8 * (size_t)sw);
                }
                n++;
            }
    return n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t ref_triangles(const int64_t *src, const int64_t *dst, int64_t n,
                      int64_t nverts)
{
    int64_t *deg = calloc((size_t)nverts + 1, sizeof(int64_t)), *adj, *fill;
    int64_t  i, a, tri = 0;

    /* Oriented adjacency a -> b for a < b, sorted, duplicates dropped. */
    for (i = 0; i < n; i++)
        if (src[i] != dst[i])
            deg[(src[i] < dst[i] ? src[i] : dst[i]) + 1]++;
    for (i = 0; i < nverts; i++)
        deg[i + 1] += deg[i];
    adj  = malloc(sizeof(int64_t) * (size_t)(deg[nverts] + 1));
    fill = calloc((size_t)nverts, sizeof(int64_t));
    for (i = 0; i < n; i++)
        if (src[i] != dst[i]) {
            int64_t lo = src[i] < dst[i] ? src[i] : dst[i];
            int64_t hi = src[i] < dst[i] ? dst[i] : src[i];
            adj[deg[lo] + fill[lo]++] = hi;
        }
    for (a = 0; a < nverts; a++) {
        int64_t *l = adj + deg[a], m = 0, k;
        qsort(l, (size_t)fill[a], 8, cmp_i64);
        for (k = 0; k < fill[a]; k++)
            if (k == 0 || l[k] != l[k - 1])
                l[m++] = l[k];
        fill[a] = m;
    }
    for (a = 0; a < nverts; a++) {
        int64_t k;
        for (k = 0; k < fill[a]; k++) {
            int64_t b = adj[deg[a] + k], x = k + 1, y = 0;
            /* common members of out(a) after b and out(b) */
            while (x < fill[a] && y < fill[b]) {
                int64_t u = adj[deg[a] + x], v = adj[deg[b] + y];
                if (u == v) {
                    tri++;
                    x++;
                    y++;
                } else if (u < v) {
                    x++;
                } else {
                    y++;
                }
            }
        }
    }
    free(deg);
    free(adj);
    free(fill);
    return tri;
}

static int row_w;

static int cmp_row(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    int            i;

    for (i = 0; i < row_w; i++)
        if (x[i] != y[i])
            return (x[i] > y[i]) - (x[i] < y[i]);
    return 0;
}

void ref_sort_rows(int64_t *rows, int64_t n, int w)
{
    row_w = w;
    qsort(rows, (size_t)n, 8 * (size_t)w, cmp_row);
}
