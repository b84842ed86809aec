/* Sequential references for the MapReduce and join tests: word count,
 * Lloyd's k-means, equi-join and triangle count, written plainly.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TESTS_CHECK_MR_REF_H
#define GV_TESTS_CHECK_MR_REF_H

#include <stddef.h>
#include <stdint.h>

/* Word counts of some text: a chained hash table of words. */
typedef struct ref_wc ref_wc_t;

ref_wc_t *ref_wc_new(void);
void      ref_wc_free(ref_wc_t *wc);
/* Count the words (runs of bytes other than space, \t, \n, \v, \f, \r). */
void      ref_wc_text(ref_wc_t *wc, const char *text, size_t len);
/* Count the words of a file; -1 if it cannot be read. */
int       ref_wc_file(ref_wc_t *wc, const char *path);
int64_t   ref_wc_count(const ref_wc_t *wc, const char *word, size_t len);
int64_t   ref_wc_total(const ref_wc_t *wc);
int64_t   ref_wc_distinct(const ref_wc_t *wc);

/* Lloyd's algorithm as gv_mr_kmeans() documents it, on n points of dim
 * doubles; centres (k * dim) start and end there. Returns iterations;
 * *sse_p and *moved_p as gv_kmeans_t's. */
int ref_kmeans(const double *pts, int64_t n, int dim, int k, double *centres,
               int max_iter, double tol, double *sse_p, double *moved_p);

/* r.rcol = s.scol by nested loops: the number of result rows; if out is
 * not NULL, the rows (r's columns then s's), in r-major order. */
int64_t ref_join(const int64_t *r, int64_t nr, int rw, int rcol,
                 const int64_t *s, int64_t ns, int sw, int scol,
                 int64_t *out);

/* Triangles of the undirected simple graph of the n edges (self-loops and
 * duplicates either way ignored), vertices 0..nverts-1. */
int64_t ref_triangles(const int64_t *src, const int64_t *dst, int64_t n,
                      int64_t nverts);

/* Sort rows of w int64 columns lexicographically (to compare multisets). */
void ref_sort_rows(int64_t *rows, int64_t n, int w);

#endif
