/* Grapevine frameworks: the linear-algebra graph engine (Graphite's
 * matrix computing model: 2D tiles over ranks with 2DT-Staggered
 * placement, compressed tiles, sparse-matrix times sparse-vector products
 * over semirings) and its applications: PageRank, BFS, connected
 * components, SSSP. SPDX-License-Identifier: BSD-3-Clause
 *
 * Tiling. The n x n matrix A of a graph (A(v, u) is the edge u -> v, so
 * that y = A x gathers over in-neighbours) is cut into a P x P grid of
 * tiles over the P ranks: vertex segment k is the ids
 * [floor(k n / P), floor((k+1) n / P)), tile (i, j) holds the edges from
 * segment j into segment i. Placement is the paper's 2DT-Staggered with
 * one thread per rank: (pr, pc) = the factor pair of P with pr <= pc
 * closest to each other, and tile (i, j) goes to the rank of virtual id
 *     T(i, j) = ((i mod pc) pr + (j mod pr) + floor(i / (P / g)) pr) mod P
 * with g = gcd(pr, pc). Every diagonal tile (k, k) lands on a distinct
 * rank, the leader of segment k: it owns the vertex values of the segment
 * and leads row group k and column group k. The ranks with tiles in a row
 * group form a block of pr virtual ids (pr ranks; a prime P gives pr = 1:
 * row groups of one rank, whose partial sums never move); those of a
 * column group the pc virtual ids of one class modulo pr. Virtual ids are
 * mapped to ranks so that as many row blocks as possible lie within one
 * node (gv_node_of()): partial sums then travel over shared memory and
 * only column broadcasts cross nodes. Each rank is in one row team and
 * one column team (gv_team_split()).
 *
 * Tiles. Each tile is kept twice, with no empty rows or columns:
 * doubly compressed sparse columns (DCSC: the non-empty columns, each
 * with its rows) for pushes from sparse inputs, and doubly compressed
 * sparse rows (DCSR) for pulls into dense outputs; indices are 32-bit
 * offsets inside the segments. Tiles and vector segments are allocated
 * (and first touched) by the rank that uses them.
 *
 * The computing model (Graphite's Algorithm 2), one iteration:
 *   Broadcast  every leader sends its new input segment x_k to its column
 *              team (a non-blocking team broadcast), sparse (indices and
 *              values of active vertices) below 60% active, dense (values
 *              and a bitmap) above, or full;
 *   Combine    every rank multiplies its tiles row group by row group
 *              (y_i (+)= A_ij (x) x_j, starting each tile as soon as x_j
 *              has arrived), pushing over DCSC when x_j is sparse and
 *              pulling over DCSR when it is dense; when a row group is
 *              done its partial y_i goes to the row group's leader (a
 *              non-blocking team reduce with the semiring's add) while
 *              the next row group is computed;
 *   Apply      every leader runs the program's apply() on its segment:
 *              y_k -> vertex values -> the next x_k and its active list.
 * The run ends when no vertex is active anywhere, after max_iters, or
 * when the largest change reported by apply() is below the tolerance.
 *
 * Collective: every call below that takes a matrix, and the build, is
 * called by every rank in the same order from the function given to
 * gv_run_all().
 */
#ifndef GRAPEVINE_FW_LINALG_H
#define GRAPEVINE_FW_LINALG_H

#include <grapevine.h>
#include <grapevine/team.h>
#include <grapevine/fw/graph.h>

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Layout (pure functions: no communication, usable outside gv_init)      */

/** The tiling of n vertices over P ranks. */
typedef struct gv_la_layout {
    int      nranks;  /**< P                                               */
    int      pr;      /**< ranks per row group (pr * pc = P)               */
    int      pc;      /**< ranks per column group                          */
    int64_t  n;       /**< vertices                                        */
    int     *rank_of; /**< [P] world rank of each virtual id               */
    int     *vid_of;  /**< [P] virtual id of each world rank               */
    int     *leader;  /**< [P] world rank leading each segment             */
    int     *seg_of;  /**< [P] the segment each world rank leads           */
} gv_la_layout_t;

/**
 * Compute the layout of @a n vertices over @a nranks ranks, @a node_of
 * giving each rank's node (NULL: one node). Row blocks are filled from
 * one node first, so that a block lies within a node whenever the node's
 * rank count allows it.
 * @return GV_OK; GV_ERR_INVALID (nranks < 1, n < 0, a segment of 2^32
 *         vertices or more); GV_ERR_NO_MEMORY.
 */
gv_status_t gv_la_layout_init(int nranks, const int *node_of, int64_t n,
                              gv_la_layout_t *L);
void        gv_la_layout_free(gv_la_layout_t *L);

/** First vertex of segment @a k (k = P: n). */
static inline int64_t gv_la_seg_lo(const gv_la_layout_t *L, int k)
{
    return (int64_t)(((unsigned __int128)(uint64_t)k * (uint64_t)L->n) /
                     (unsigned)L->nranks);
}

/** The segment of vertex @a v. */
static inline int gv_la_seg_of_vertex(const gv_la_layout_t *L, int64_t v)
{
    return (int)((((unsigned __int128)(uint64_t)v + 1) *
                      (unsigned)L->nranks - 1) / (uint64_t)L->n);
}

/** World rank that owns tile (@a i, @a j). */
int gv_la_tile_owner(const gv_la_layout_t *L, int i, int j);

/* ------------------------------------------------------------------------ */
/* Matrices                                                                 */

/** One compressed tile (row group i, column group j). Local indices are
 *  offsets from the first vertex of the segment. */
typedef struct gv_la_tile {
    int       i;   /**< row group (segment of the edges' heads)         */
    int       j;   /**< column group (segment of the edges' tails)      */
    int64_t   nnz; /**< nonzeros of the tile                            */
    /* DCSC: column jc[k] holds rows ir[cp[k] .. cp[k+1]-1] (ascending) */
    int64_t   nzc; /**< DCSC: non-empty columns                         */
    uint32_t *jc;  /**< DCSC: [nzc] the non-empty columns, ascending    */
    int64_t  *cp;  /**< DCSC: [nzc + 1] where each column's rows start  */
    uint32_t *ir;  /**< DCSC: [nnz] the rows of each column, ascending  */
    float    *cw;  /**< [nnz] weights in DCSC order, or NULL             */
    /* DCSR: row ir2[k] holds columns jc2[rp[k] .. rp[k+1]-1] (ascending) */
    int64_t   nzr; /**< DCSR: non-empty rows                            */
    uint32_t *ir2; /**< DCSR: [nzr] the non-empty rows, ascending       */
    int64_t  *rp;  /**< DCSR: [nzr + 1] where each row's columns start  */
    uint32_t *jc2; /**< DCSR: [nnz] the columns of each row, ascending  */
    float    *rw;  /**< [nnz] weights in DCSR order, or NULL             */
} gv_la_tile_t;

/** This rank's part of a tiled matrix. Read the fields; do not change. */
typedef struct gv_la_matrix {
    gv_la_layout_t L;        /**< the tiling                              */
    int64_t        n;        /**< vertices                                */
    int64_t        nnz;      /**< nonzeros (global)                       */
    int            weighted; /**< tiles carry float weights               */
    unsigned       flags;    /**< the build's GV_GRAPH_* flags            */
    int            rank;     /**< this rank                               */
    int            seg;      /**< the segment it leads                    */
    int64_t        lo;       /**< the led segment's first vertex          */
    int64_t        nloc;     /**< the led segment's vertices              */
    int            ntiles;   /**< tiles of this rank, by row then column  */
    gv_la_tile_t  *tiles;    /**< [ntiles] this rank's tiles              */
    int64_t       *out_deg;  /**< [nloc] nonzeros of each led column
                                  (out-degree: edges leaving the vertex)  */
    int64_t       *in_deg;   /**< [nloc] nonzeros of each led row         */
    gv_team_t     *row_team; /**< this rank's row group                   */
    gv_team_t     *col_team; /**< this rank's column group                */
} gv_la_matrix_t;

/**
 * Collective: tile the edges of @a el (each rank's share, any split) by
 * the options' GV_GRAPH_SYMMETRIZE, GV_GRAPH_NO_SELF_LOOPS, GV_GRAPH_DEDUP
 * (copies collapse, keeping the smallest weight) and GV_GRAPH_UNWEIGHTED
 * (other flags: GV_ERR_INVALID). Edge u -> v is A(v, u). Every edge goes
 * in one bulk exchange to its tile's owner, who sorts and compresses.
 * @return GV_OK; GV_ERR_INVALID (bad flags, ids out of range: logged);
 *         GV_ERR_NO_MEMORY; what the runtime returned.
 */
gv_status_t gv_la_build(gv_edgelist_t *el, unsigned flags,
                        gv_la_matrix_t *A_p);

/** Collective: free this rank's part (the struct is zeroed). */
void gv_la_free(gv_la_matrix_t *A);

/* ------------------------------------------------------------------------ */
/* The engine                                                               */

/** A value of the vectors: a double or an int64, by semiring. */
typedef union gv_la_word {
    double  f; /**< the value of the double semirings  */
    int64_t i; /**< the value of the int64 semirings   */
} gv_la_word_t;

/** Semirings of the Combine: y(v) = add over active u of A(v,u) mul x(u). */
typedef enum {
    /** y = sum A x (doubles; A's weight, or 1): PageRank. Identity 0. */
    GV_LA_PLUS_TIMES = 0,
    /** y = min (x + A) (doubles; A's weight, or 1): SSSP. Identity +inf. */
    GV_LA_MIN_PLUS   = 1,
    /** y = min u over the active u (the column's vertex id; x's values are
     *  not used nor sent): BFS parents. Identity INT64_MAX. */
    GV_LA_MIN_SECONDI = 2,
    /** y = min x(u) (int64): label propagation. Identity INT64_MAX. */
    GV_LA_MIN_SECOND = 3,
} gv_la_semiring_t;

/** What apply() and init() see: the leader's segment. */
typedef struct gv_la_segment {
    int                 iter;   /**< 0 for init(), then 1, 2, ...        */
    int64_t             lo;     /**< the segment's first vertex          */
    int64_t             n;      /**< its vertices: lo .. lo + n - 1      */
    const gv_la_word_t *y;      /**< [n] the combined output (identity
                                     where nothing arrived); NULL in init */
    gv_la_word_t       *x;      /**< [n] write the next input values of the
                                     active vertices                      */
    uint32_t           *active; /**< [n] write the local indices of the
                                     active vertices, ascending           */
    int64_t             nactive;/**< set: how many; n means every vertex
                                     (then active[] need not be written)  */
                                /* (the engine sums the out-degrees of
                                     the active vertices: the input's edges,
                                     which choose push or pull) */
    uint64_t           *mask;   /**< [ceil(n/64)] programs with a mask: a
                                     set bit drops the row from the next
                                     products (set them; never clear)    */
    double              change; /**< set: the largest change (tolerance)  */
    const gv_la_matrix_t *A;    /**< the matrix                          */
    void               *arg;    /**< the argument given to gv_la_run()   */
} gv_la_segment_t;

/** A program. */
typedef struct gv_la_program {
    gv_la_semiring_t semiring; /**< the Combine's semiring */
    /** Non-zero: rows whose mask bit is set are skipped by the products
     *  (BFS: visited vertices). */
    int use_mask;
    /** Non-zero: x holds a current value for every vertex (inactive ones
     *  included) and the semiring's add is idempotent (min), so a mostly
     *  active input may travel and be used whole (no bitmap) and the
     *  inactive vertices change nothing (CC, SSSP). */
    int x_whole;
    /** Set the first input (iter 0; y is NULL). Required. */
    void (*init)(gv_la_segment_t *s);
    /** Update the vertex values from y and set the next input. Required. */
    void (*apply)(gv_la_segment_t *s);
} gv_la_program_t;

/** One iteration, summed over ranks (bytes, active) or rank 0's (times)
 *  and the largest over ranks (_max times). */
typedef struct gv_la_iter {
    int64_t  active;     /**< vertices in the input of this iteration   */
    int      sparse;     /**< segments broadcast sparse                 */
    int64_t  pushed;     /**< tile products done by push (DCSC)         */
    int64_t  pulled;     /**< tile products done by pull (DCSR)         */
    uint64_t bcast_bytes;   /**< bytes sent while broadcasting          */
    uint64_t combine_bytes; /**< bytes sent while combining             */
    double   bcast_s;    /**< waiting for input segments                */
    double   combine_s;  /**< tile products                            */
    double   reduce_s;   /**< waiting for partial outputs              */
    double   apply_s;    /**< apply and the iteration's vote            */
    double   seconds;    /**< the whole iteration                       */
} gv_la_iter_t;

/** Statistics of a run. */
typedef struct gv_la_stats {
    int           iters;    /**< iterations run                          */
    double        seconds;  /**< the whole run                           */
    gv_la_iter_t *iter;   /**< [iters], malloc'ed; gv_la_stats_free()    */
    gv_la_iter_t  total;  /**< the sums over the iterations              */
} gv_la_stats_t;

void gv_la_stats_free(gv_la_stats_t *st);
/** Print one line per iteration and a total (rank 0 prints). */
void gv_la_stats_print(const gv_la_stats_t *st, FILE *f);

/** Options of gv_la_run(). */
typedef struct gv_la_opts {
    int    max_iters; /**< 0: until nothing is active                     */
    double tol;       /**< > 0: stop after an iteration whose largest
                           change (apply's) is below it                    */
    int    verbose;   /**< print each iteration on rank 0's stderr        */
    void  *arg;       /**< given to init() and apply()                    */
} gv_la_opts_t;

/**
 * Collective: run @a prog on @a A.
 * @param [out] stats_p  may be NULL; else free with gv_la_stats_free().
 * @return GV_OK; GV_ERR_INVALID (a bad program, logged); GV_ERR_NO_MEMORY;
 *         what the runtime returned.
 */
gv_status_t gv_la_run(const gv_la_matrix_t *A, const gv_la_program_t *prog,
                      const gv_la_opts_t *opts, gv_la_stats_t *stats_p);

/* ------------------------------------------------------------------------ */
/* Applications (one file each). Results are per vertex of the calling
 * rank's led segment (A->lo .. A->lo + A->nloc - 1), in id order. The
 * definitions are those of grapevine/fw/vertex.h. All collective.        */

/** The vertex with the most distinct undirected neighbours, the smallest
 *  id on ties, of the edges of @a el (built here as an undirected simple
 *  pattern). @return GV_OK, GV_ERR_INVALID (no vertex). */
gv_status_t gv_la_root_maxdeg(gv_edgelist_t *el, int64_t *root_p);
/** The same from a matrix built GV_GRAPH_UNDIRECTED_SIMPLE (its row
 *  counts); GV_ERR_INVALID for another matrix or no vertex. */
gv_status_t gv_la_matrix_root_maxdeg(const gv_la_matrix_t *A,
                                     int64_t *root_p);

/** PageRank on A built GV_GRAPH_DIRECTED_SIMPLE: at most @a iters sweeps
 *  (0: no limit), stopping after a sweep whose largest change is below
 *  @a tol > 0. @a rank [nloc]. */
gv_status_t gv_la_pagerank(const gv_la_matrix_t *A, int iters, double tol,
                           double *rank, int *iters_p,
                           const gv_la_opts_t *opts, gv_la_stats_t *stats_p);

/** BFS on A built GV_GRAPH_UNDIRECTED_SIMPLE: level (-1 unreached) and
 *  parent (the smallest-id neighbour one level up; the root's is itself;
 *  -1 unreached), each [nloc]; either may be NULL. */
gv_status_t gv_la_bfs(const gv_la_matrix_t *A, int64_t root, int64_t *parent,
                      int64_t *level, const gv_la_opts_t *opts,
                      gv_la_stats_t *stats_p);

/** Connected components by label propagation with activity filtering on A
 *  built GV_GRAPH_UNDIRECTED_SIMPLE: label = the smallest id of the
 *  component. @a label [nloc]. */
gv_status_t gv_la_cc(const gv_la_matrix_t *A, int64_t *label,
                     const gv_la_opts_t *opts, gv_la_stats_t *stats_p);

/** SSSP by Bellman-Ford relaxation (min-plus, only vertices whose distance
 *  fell are active) on A built GV_GRAPH_DIRECTED_SIMPLE (weight 1 if
 *  unweighted); @a dist [nloc], +inf unreached. Negative or NaN weights:
 *  GV_ERR_INVALID. */
gv_status_t gv_la_sssp(const gv_la_matrix_t *A, int64_t root, double *dist,
                       const gv_la_opts_t *opts, gv_la_stats_t *stats_p);

#ifdef __cplusplus
}
#endif
#endif
