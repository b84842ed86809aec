/* Sequential reference checkers for the graph applications (in the style
 * of LAGraph's LG_check_*): plain C, no Grapevine call, linked into the
 * framework tests. They define "the right answer" for every engine and
 * for the GraphBLAS peer (perf/grb_graph.c), by the definitions of the
 * graph applications:
 *
 * - PageRank and SSSP read the edge list as directed (src -> dst), with
 *   self-loops dropped and duplicate pairs collapsed into one edge (SSSP
 *   keeps the smallest weight of the copies); out-degree counts distinct
 *   out-neighbours.
 * - BFS and connected components read it as undirected (each edge both
 *   ways, self-loops dropped, duplicates collapsed).
 * - PageRank: rank(v) = 0.15 + 0.85 * sum over in-neighbours u of
 *   rank(u) / outdeg(u), every rank starting at 1.0, synchronous sweeps;
 *   vertices with no out-edges distribute nothing.
 * - The default root (chk_root_maxdeg) is the vertex with the most
 *   distinct undirected neighbours, the smallest id on ties.
 * - Connected components: the label of a vertex is the smallest vertex id
 *   of its component; isolated vertices are components of their own.
 * - SSSP: weights are read as float32 and widened to double; distances
 *   are sums of those doubles along shortest paths, computed in double
 *   (Dijkstra). Unreached vertices have distance INFINITY. Negative or NaN
 *   weights are rejected.
 *
 * Every function that can fail returns 0 or -1 and, on -1, writes a
 * message into msg (msg_len bytes, may be 0) naming the first bad vertex
 * or edge. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TESTS_CHECK_H
#define GV_TESTS_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* An edge list in memory: m edges src[i] -> dst[i] over vertices 0..n-1,
 * with optional float32 weights (w may be NULL: every weight is 1). */
typedef struct {
    int64_t         n;
    int64_t         m;
    const uint64_t *src;
    const uint64_t *dst;
    const float    *w;
} chk_edges_t;

/* A compressed sparse row graph built by the definitions above:
 * neighbours of v are adj[ptr[v] .. ptr[v+1]-1], sorted ascending and
 * distinct; w (directed weighted graphs only, else NULL) is the smallest
 * weight of each collapsed pair, as double. */
typedef struct {
    int64_t  n;
    int64_t  nnz;
    int64_t *ptr;
    int64_t *adj;
    double  *w;
} chk_csr_t;

/* Directed graph (out-edges; with weights if weighted and el->w). */
int  chk_csr_directed(const chk_edges_t *el, int weighted, chk_csr_t *g_p,
                      char *msg, size_t msg_len);
/* Undirected graph (each edge both ways). */
int  chk_csr_undirected(const chk_edges_t *el, chk_csr_t *g_p, char *msg,
                        size_t msg_len);
void chk_csr_free(chk_csr_t *g);

/* The default root: the most distinct undirected neighbours, the smallest
 * id on ties; -1 if the edge list is invalid or n == 0. */
int64_t chk_root_maxdeg(const chk_edges_t *el);

/* ---- Reference results. Output arrays have el->n entries. ---- */

/* PageRank: at most @a iters sweeps; stops earlier after a sweep whose
 * largest change |new - old| is below @a tol (tol <= 0: exactly @a iters
 * sweeps). Sweeps done in *iters_done_p (may be NULL). */
int chk_pagerank(const chk_edges_t *el, int iters, double tol, double *rank,
                 int *iters_done_p, char *msg, size_t msg_len);
/* BFS from root: level (root 0, -1 unreached) and parent (root's parent is
 * itself, -1 unreached); parent is the smallest-id neighbour one level up.
 * Either array may be NULL. */
int chk_bfs(const chk_edges_t *el, int64_t root, int64_t *level,
            int64_t *parent, char *msg, size_t msg_len);
/* Connected components: label = smallest vertex id of the component. */
int chk_cc(const chk_edges_t *el, int64_t *label, char *msg, size_t msg_len);
/* SSSP from root (see the definitions above for the arithmetic). */
int chk_sssp(const chk_edges_t *el, int64_t root, double *dist, char *msg,
             size_t msg_len);

/* ---- The check fields each application prints on its last line. ---- */

/* PageRank: sum= and max= of all ranks. */
void chk_pagerank_fields(int64_t n, const double *rank, double *sum_p,
                         double *max_p);
/* BFS: reached= (vertices with a level >= 0, the root included) and
 * depth= (largest level; -1 if none reached). */
void chk_bfs_fields(int64_t n, const int64_t *level, int64_t *reached_p,
                    int64_t *depth_p);
/* CC: components= (distinct labels, single vertices included) and
 * largest= (size of the largest component; 0 if n == 0). Labels must lie
 * in 0..n-1. */
void chk_cc_fields(int64_t n, const int64_t *label, int64_t *components_p,
                   int64_t *largest_p);
/* SSSP: reached= (finite distances, the root included) and sumdist= (sum
 * of the finite distances). */
void chk_sssp_fields(int64_t n, const double *dist, int64_t *reached_p,
                     double *sumdist_p);

/* ---- Validation of a result computed by someone else. ---- */

/* Levels exactly the reference's (level may be NULL: only the parents are
 * checked, against the reference levels); the root's parent is itself;
 * the parent of every other reached vertex is an undirected neighbour at
 * level - 1; unreached vertices have parent -1. */
int chk_check_bfs(const chk_edges_t *el, int64_t root, const int64_t *level,
                  const int64_t *parent, char *msg, size_t msg_len);
/* Labels exactly the reference's (smallest id of the component). */
int chk_check_cc(const chk_edges_t *el, const int64_t *label, char *msg,
                 size_t msg_len);
/* Each distance within relative CHK_SSSP_RTOL of the reference, INFINITY
 * exactly where the reference has it. */
#define CHK_SSSP_RTOL 1e-6
int chk_check_sssp(const chk_edges_t *el, int64_t root, const double *dist,
                   char *msg, size_t msg_len);
/* Each rank within relative CHK_PAGERANK_RTOL of the reference after
 * exactly @a iters sweeps. */
#define CHK_PAGERANK_RTOL 1e-9
int chk_check_pagerank(const chk_edges_t *el, int iters, const double *rank,
                       char *msg, size_t msg_len);

/* The Graph500 specification's validation of a BFS parent tree, without a
 * reference search: parent[root] == root, every other parent is -1 or a
 * vertex id, and
 *  1. the tree has no cycle (every reached vertex's chain of parents ends
 *     at the root);
 *  2. each tree edge joins vertices whose levels differ by exactly one
 *     (the levels are the depths in the tree, so this holds once 1 does;
 *     a parent one level too deep is caught by 3);
 *  3. every input edge joins vertices whose levels differ by at most one,
 *     or two vertices both outside the tree;
 *  4. the tree spans the root's whole connected component (no input edge
 *     joins a reached and an unreached vertex);
 *  5. every vertex and its parent are joined by an input edge.
 * Input edges are read as undirected; self-loops are ignored. On success
 * *reached_p (may be NULL) is the number of vertices in the tree. */
int chk_graph500_validate(const chk_edges_t *el, int64_t root,
                          const int64_t *parent, int64_t *reached_p,
                          char *msg, size_t msg_len);

#endif
