/** @file
 * Grapevine frameworks: the vertex-centric graph engine (GraphLab's
 * gather-apply-scatter model, as Grappa runs it on a DSM) and its
 * applications: PageRank, BFS, connected components, SSSP, and the
 * Graph500 BFS written natively with Beamer's direction optimisation.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Model. A vertex program is a struct of callbacks over a gv_graph_t
 * (grapevine/fw/graph.h). The engine runs synchronous supersteps:
 *
 *   gather   every vertex contributes one value (gather()) along its
 *            edges, changed per edge by edge(); the values reaching a
 *            vertex are combined with the program's sum into its
 *            accumulator (computed for every vertex, used by the active
 *            ones: the gathers travel as pushes from the neighbours, so
 *            that each rank reads only its own vertices' state). "In" gathers the in-neighbours' values
 *            (contributed along out-edges); "out" the out-neighbours'
 *            (along in-edges: the graph needs GV_GRAPH_IN_EDGES).
 *            With delta caching, gather runs in the first superstep only:
 *            afterwards a vertex's accumulator is kept and scatters add to
 *            it (GraphLab's delta caching, as the Grappa paper ran
 *            PageRank).
 *   apply    every active vertex: apply(state, accumulator) updates the
 *            state and says whether the vertex scatters.
 *   scatter  scatter() gives one message value, sent along the scatter
 *            direction's edges (changed per edge by edge()); messages to
 *            one vertex are combined with sum; a vertex that receives one
 *            is active in the next superstep and gets the combined value
 *            as its accumulator (added to the cached one with delta
 *            caching). A value equal to the identity of the sum counts
 *            as no message (the engine tells slots that got something
 *            from the others by that).
 *
 * The run stops when no vertex is active, or after max_supersteps.
 *
 * Where the work happens. Vertices live where the graph placed them
 * (hashed by default). A rank runs the callbacks of its own vertices on
 * plain memory, and combines at the sender: values bound for a vertex of
 * another rank are summed into one slot per remote vertex (a "ghost"),
 * so a superstep sends each remote vertex at most one value per rank.
 * The ghosts then go to their owners as aggregated delegate operations:
 * batches of (vertex, value) applied by the owner with the program's sum
 * (active messages), or, when the job runs with GV_AMO=native and the sum
 * is a built-in word operation, one transport remote atomic per ghost
 * (an atomic add for int64 sums, a compare-and-swap loop for min and for
 * double add) on the owner's accumulator word in the symmetric heap.
 *
 * Values are one 64-bit word (gv_vx_word_t); graphs up to 2^31 - P
 * vertices. gv_bfs500() and gv_vx_cc_native() always send batches of
 * messages (GV_AMO does not change them). Collective: gv_vx_run()
 * and every application below are called by every rank, in the same
 * order, from the function given to gv_run_all().
 */
#ifndef GRAPEVINE_FW_VERTEX_H
#define GRAPEVINE_FW_VERTEX_H

#include <grapevine.h>
#include <grapevine/fw/graph.h>

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A value of a gather, a message or an accumulator. */
typedef union gv_vx_word {
    double   f; /**< as a double */
    int64_t  i; /**< as an int64 */
    uint64_t u; /**< as a uint64 */
} gv_vx_word_t;

/** Edge directions of gather and scatter. */
typedef enum {
    GV_VX_NONE = 0,
    GV_VX_IN   = 1, /**< in-edges (in-neighbours)                      */
    GV_VX_OUT  = 2, /**< out-edges (out-neighbours)                    */
    GV_VX_BOTH = 3,
} gv_vx_dir_t;

/** How values are combined (the program's sum). The built-in ones are
 *  plain word operations and may use native remote atomics. */
typedef enum {
    GV_VX_SUM_F64 = 0, /**< double +, identity 0.0                     */
    GV_VX_MIN_I64 = 1, /**< signed min, identity INT64_MAX              */
    GV_VX_MIN_F64 = 2, /**< min of non-negative doubles, identity +inf  */
    GV_VX_SUM_I64 = 3, /**< int64 + (native: one remote atomic add)     */
    GV_VX_CUSTOM  = 4, /**< the program's sum(); identity given; always
                            by messages                                 */
} gv_vx_op_t;

/** What apply() returns to stay active without scattering. */
#define GV_VX_HOLD 2

/** A vertex program. Callbacks get the graph, the vertex's local index
 *  @a i (its global id is gv_graph_global(g, i)), its state, and the run's
 *  argument. NULL callbacks: see each. */
typedef struct gv_vx_program {
    size_t      state_size;    /**< bytes of per-vertex state (may be 0) */
    gv_vx_dir_t gather_dir; /**< edges gathered over */
    gv_vx_dir_t scatter_dir; /**< edges scattered over */
    gv_vx_op_t  op; /**< how gathered values combine */
    /** GV_VX_CUSTOM: combine two values (associative, commutative). */
    gv_vx_word_t (*sum)(gv_vx_word_t a, gv_vx_word_t b);
    gv_vx_word_t identity;     /**< GV_VX_CUSTOM: the identity of sum()  */
    int delta_caching;         /**< gather once, then scatters add       */
    /** Initialise the state; return non-zero if the vertex is active in
     *  the first superstep. NULL: state zeroed, every vertex active. */
    int (*init)(const gv_graph_t *g, int64_t i, void *state, void *arg);
    /** The value vertex i contributes to its neighbours' gathers; return
     *  0 to contribute nothing. */
    int (*gather)(const gv_graph_t *g, int64_t i, const void *state,
                  gv_vx_word_t *value_p, void *arg);
    /** Per-edge change of a gathered or scattered value (weight @a w, 1.0
     *  on an unweighted graph). NULL: the value as it is. */
    gv_vx_word_t (*edge)(gv_vx_word_t value, float w, void *arg);
    /** Update an active vertex. @a has_acc is 0 when nothing was gathered
     *  or received (then @a acc is the identity). Return 0 to rest,
     *  GV_VX_HOLD to stay active in the next superstep without scattering
     *  (work put off, as delta-stepping puts off its later buckets), any
     *  other value to scatter. Required. */
    int (*apply)(const gv_graph_t *g, int64_t i, void *state,
                 gv_vx_word_t acc, int has_acc, void *arg);
    /** The message vertex i sends along its scatter edges; return 0 to
     *  send none. NULL with a scatter direction: an error. */
    int (*scatter)(const gv_graph_t *g, int64_t i, const void *state,
                   gv_vx_word_t *msg_p, void *arg);
} gv_vx_program_t;

/** What one superstep did, summed over the ranks (seconds: rank 0's). */
typedef struct gv_vx_step {
    int64_t  active;      /**< vertices applied (BFS500: the frontier)    */
    int      bottom_up;   /**< BFS500: this level searched bottom-up      */
    int64_t  scattered;   /**< vertices that scattered                    */
    int64_t  edges;       /**< edges traversed by gather and scatter      */
    int64_t  remote;      /**< values sent to other ranks (after combining) */
    uint64_t msgs;        /**< active messages sent (gv_am_stats)         */
    uint64_t bytes;       /**< their payload bytes                        */
    double   gather_s;    /**< gather, with its exchange                */
    double   apply_s;     /**< apply and the local part of the scatter  */
    double   exchange_s;  /**< the scatter's remote updates, to quiescence */
    double   seconds;     /**< the whole superstep                       */
} gv_vx_step_t;

/**
 * Prepare @a g for runs: build the tables that say where each neighbour of
 * the local vertices lives (its owner and index there, or its combining
 * slot), once, instead of in every run. Runs and gv_bfs500() on @a g use
 * them until gv_vx_detach(@a g) (a second attach replaces the first). Call
 * it on every rank after gv_graph_build(), and detach before
 * gv_graph_destroy(). Not collective (no communication).
 * @return GV_OK, GV_ERR_INVALID (too many vertices, logged),
 *         GV_ERR_NO_MEMORY.
 */
gv_status_t gv_vx_attach(const gv_graph_t *g);
/** Detach the engine from @a g (before gv_graph_destroy()). */
void        gv_vx_detach(const gv_graph_t *g);

/** Statistics of a run (filled by gv_vx_run and the applications). */
typedef struct gv_vx_stats {
    int           steps;      /**< supersteps (or BFS levels) run        */
    int           native;     /**< remote updates used native atomics    */
    double        seconds;    /**< the run, setup included               */
    double        setup_s;    /**< the engine's setup (ghost tables)      */
    gv_vx_step_t *step;       /**< [steps], malloc'ed; gv_vx_stats_free() */
} gv_vx_stats_t;

/** Free what gv_vx_run() allocated in @a st. */
void gv_vx_stats_free(gv_vx_stats_t *st);

/** Print one line per superstep of @a st on @a f (rank 0 only prints). */
void gv_vx_stats_print(const gv_vx_stats_t *st, FILE *f);

/** Options of gv_vx_run(). */
typedef struct gv_vx_opts {
    int   max_supersteps; /**< 0: until no vertex is active              */
    void *arg;            /**< given to every callback                   */
    int   verbose;        /**< print each superstep on rank 0's stderr    */
    /** Called on every rank after each superstep (collective calls
     *  allowed: every rank calls it at the same point); return non-zero to
     *  stop the run there (a global convergence test). May be NULL. */
    int (*after_step)(int step, void *arg);
} gv_vx_opts_t;

/**
 * Collective: run @a prog on @a g. @a state (nlocal * state_size bytes of
 * this rank, caller-allocated) holds the local vertices' states in local
 * index order; it is initialised by init() and holds the result.
 * @param [out] stats_p  may be NULL; else free with gv_vx_stats_free().
 * @return GV_OK; GV_ERR_INVALID (a bad program: missing callback, a
 *         direction the graph lacks; logged); GV_ERR_NO_MEMORY;
 *         what the runtime returned.
 */
gv_status_t gv_vx_run(const gv_graph_t *g, const gv_vx_program_t *prog,
                      void *state, const gv_vx_opts_t *opts,
                      gv_vx_stats_t *stats_p);

/* ------------------------------------------------------------------------ */
/* Applications (one file each). Results are per local vertex, in local
 * index order; the graph must be built as each says. All collective.     */

/**
 * Collective: the vertex with the most distinct undirected neighbours, the
 * smallest id on ties (the default root of BFS and SSSP). On a graph
 * built with GV_GRAPH_SYMMETRIZE | GV_GRAPH_DEDUP this is the out-degree;
 * otherwise the graph needs in-edges (it counts |out(v) u in(v) - {v}|).
 * @return GV_OK, GV_ERR_INVALID (neither; or an empty graph).
 */
gv_status_t gv_vx_root_maxdeg(const gv_graph_t *g, int64_t *root_p);

/**
 * PageRank with GraphLab's definition on a directed graph
 * (GV_GRAPH_DIRECTED_SIMPLE): rank = 0.15 + 0.85 * sum over in-neighbours
 * u of rank(u) / outdeg(u), from 1.0, synchronous sweeps, vertices with no
 * out-edges distributing nothing; delta caching (every vertex scatters
 * its change every sweep, so the sweeps are exactly synchronous). At most
 * @a iters sweeps (0: no limit); with @a tol > 0 the run stops after the
 * first sweep whose largest change |new - old| is below @a tol.
 * @param [out] iters_p  sweeps done (with @a tol 0, @a iters: the engine
 *                       skips the sweeps where no vertex would change);
 *                       may be NULL.
 * @param [out] rank  [nlocal]
 */
gv_status_t gv_vx_pagerank(const gv_graph_t *g, int iters, double tol,
                           double *rank, int *iters_p,
                           const gv_vx_opts_t *opts,
                           gv_vx_stats_t *stats_p);

/**
 * BFS from @a root on an undirected graph (GV_GRAPH_UNDIRECTED_SIMPLE):
 * level (-1: not reached) and parent (-1: not reached; the root is its own
 * parent) of every local vertex, through the engine (level-synchronous;
 * the parent is the smallest-id neighbour of the previous level).
 */
gv_status_t gv_vx_bfs(const gv_graph_t *g, int64_t root, int64_t *parent,
                      int64_t *level, const gv_vx_opts_t *opts,
                      gv_vx_stats_t *stats_p);

/**
 * Connected components by label propagation through the engine, on an
 * undirected graph: @a label of each vertex is the smallest vertex id of
 * its component.
 */
gv_status_t gv_vx_cc(const gv_graph_t *g, int64_t *label,
                     const gv_vx_opts_t *opts, gv_vx_stats_t *stats_p);

/**
 * Connected components written natively on the graph (not through the
 * engine): union-find over the edges within a rank, then rounds in which
 * components exchange their smallest labels over the edges that cross
 * ranks (combined per remote vertex at the sender, sent in batches), a
 * component taking a smaller label as a whole. The same labels as
 * gv_vx_cc() (smallest id of the component) in fewer rounds and edge
 * visits. stats_p->step[k] is round k (active: border vertices that
 * spoke; scattered: components whose label fell).
 */
gv_status_t gv_vx_cc_native(const gv_graph_t *g, int64_t *label,
                            const gv_vx_opts_t *opts, gv_vx_stats_t *stats_p);

/**
 * Single-source shortest paths through the engine, on a directed graph
 * with float weights (weight 1 if unweighted; distances summed in
 * double), by delta-stepping: a vertex whose distance fell scatters once
 * its distance is below the current bucket's end (a multiple of @a
 * delta), and holds (stays active, GV_VX_HOLD) until then; when nothing
 * scatters, the bucket moves on to the smallest held distance. @a delta
 * 0 picks the largest weight / the average out-degree; @a delta < 0 is
 * Bellman-Ford (every improved vertex scatters at once). @a dist is +inf
 * for vertices not reached. Weights must be non-negative (GV_ERR_INVALID).
 */
gv_status_t gv_vx_sssp(const gv_graph_t *g, int64_t root, double delta,
                       double *dist, const gv_vx_opts_t *opts,
                       gv_vx_stats_t *stats_p);

/* ------------------------------------------------------------------------ */
/* The Graph500 BFS, written natively on the graph (not through the engine) */

/**
 * Direction-optimising BFS (Beamer): top-down steps push the frontier's
 * edges (remote discoveries combined per target and sent in batches),
 * bottom-up steps let unvisited vertices look for a parent in the frontier
 * (a bitmap of all vertices shared by every rank), switching to bottom-up
 * when the frontier's edges exceed the unexplored edges / 14 and back when
 * the frontier falls below nverts / 24. On an undirected graph.
 * @param [out] parent  [nlocal] parent id, root's parent the root, -1 not
 *                      reached. stats_p->step[k] is level k.
 */
gv_status_t gv_bfs500(const gv_graph_t *g, int64_t root, int64_t *parent,
                      const gv_vx_opts_t *opts, gv_vx_stats_t *stats_p);

/**
 * The Graph500 specification's validation of a BFS parent tree on the
 * undirected graph @a g: (1) the tree has no cycles and reaches the root;
 * (2) tree edges join vertices whose levels differ by one; (3) every edge
 * joins vertices whose levels differ by at most one, or two unreached
 * ones; (4) the tree spans the root's component (follows from 3);
 * (5) every vertex and its parent are joined by an edge.
 * @param [out] edges_p  undirected edges inside the component (for TEPS);
 *                       may be NULL.
 * @param [out] depth_p  the largest level; may be NULL.
 * @return GV_OK if valid; GV_ERR_INVALID naming the first failed check on
 *         rank 0's stderr.
 */
gv_status_t gv_bfs500_validate(const gv_graph_t *g, int64_t root,
                               const int64_t *parent, int64_t *edges_p,
                               int64_t *depth_p);

#ifdef __cplusplus
}
#endif
#endif
