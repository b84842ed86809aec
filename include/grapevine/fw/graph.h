/** @file
 * Grapevine frameworks: distributed graphs. Edge lists (a Graph500
 * Kronecker generator and parallel loaders of binary, SNAP text and Matrix
 * Market files) and a distributed compressed-sparse-row graph built from
 * them. SPDX-License-Identifier: BSD-3-Clause
 *
 * Model. Every call that creates, loads, builds, writes or destroys is
 * collective: every rank calls it, in the same order, from the function
 * given to gv_run_all() (one flow per rank at a time; threads: as
 * grapevine/task.h, never from a handler). Handles are plain
 * structs holding this rank's part; the same call returns the same logical
 * object on every rank.
 *
 * Edge lists. A gv_edgelist_t holds this rank's share of a list of
 * directed edges (src, dst[, weight]) over the vertices 0..nverts-1. The
 * generator and the loaders give rank r a contiguous range of the list's
 * edges (the edges numbered first..first+n-1 of the whole list, in file
 * order), so that writing the list back reproduces the file; a list a
 * program fills by hand (gv_edgelist_push) may split its edges any way.
 *
 * Errors. A collective call that fails returns the same status on every
 * rank (bad input is GV_ERR_INVALID, an unreadable file GV_ERR_IO); the
 * message, which names the file, the line (text formats) or byte offset
 * (binary) and the problem, is printed once (by rank 0) and is the same on
 * every rank in gv_graph_errmsg(). Outputs are set only on success.
 *
 * Graphs. A gv_graph_t is the CSR of the edges whose source each rank
 * owns: out-edges always, in-edges (for pull-style gathers) on request,
 * float weights if the list has them. Every vertex has one owner rank and
 * a local index there, fixed at construction by the placement:
 *
 *   GV_GRAPH_HASH   a pseudo-random bijection p = perm(v) of 0..nverts-1
 *                   (fixed, depending only on nverts), then owner p mod P,
 *                   local index p / P: vertices spread evenly and at random
 *                   whatever the id order (Grappa's random placement; the
 *                   default, as zero-initialised options give it).
 *   GV_GRAPH_BLOCK  contiguous ranges: rank r owns [lo(r), lo(r+1)) with
 *                   lo(r) = floor(r * nverts / P); local index v - lo(r).
 *
 * gv_graph_owner(), gv_graph_local() and gv_graph_global() translate (all
 * inline, no communication). Local vertices are numbered 0..nlocal-1; the
 * adjacency of local vertex i is out_dst[out_off[i] .. out_off[i+1]-1]
 * (global ids, sorted ascending; with duplicates kept, copies of one pair
 * are sorted by weight), the same for in_src/in_off with the sources.
 */
#ifndef GRAPEVINE_FW_GRAPH_H
#define GRAPEVINE_FW_GRAPH_H

#include <grapevine.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Edge lists                                                                */

/** Vertex count to infer from the edges (largest id + 1). */
#define GV_GRAPH_NVERTS_AUTO ((int64_t)-1)

/** This rank's share of a distributed list of directed edges. */
typedef struct gv_edgelist {
    int64_t  nverts;   /**< vertices of the graph: ids are 0..nverts-1   */
    int64_t  n;        /**< edges held by this rank                        */
    int64_t  first;    /**< global number of this rank's first edge        */
    int64_t  total;    /**< edges of the whole list (all ranks)            */
    int64_t *src;      /**< [n] sources                                    */
    int64_t *dst;      /**< [n] destinations                               */
    float   *w;        /**< [n] weights if weighted (NULL while empty)     */
    int      weighted; /**< non-zero: one float weight per edge in w       */
    int64_t  cap;      /**< room in src/dst/w (gv_edgelist_push)           */
} gv_edgelist_t;

/**
 * Start an empty list of this rank (not collective). @a weighted non-zero
 * keeps a weight per edge. @a nverts may be GV_GRAPH_NVERTS_AUTO: the
 * first collective use (build, write) then sets it to the largest id + 1
 * over all ranks.
 */
void gv_edgelist_init(gv_edgelist_t *el, int64_t nverts, int weighted);

/** Append one edge to this rank's share (not collective; @a w ignored for
 *  an unweighted list). @return GV_OK, GV_ERR_NO_MEMORY. */
gv_status_t gv_edgelist_push(gv_edgelist_t *el, int64_t src, int64_t dst,
                             float w);

/** Free this rank's share; the list is empty (as after init) afterwards. */
void gv_edgelist_free(gv_edgelist_t *el);

/**
 * Collective: settle the global fields of a hand-filled list: total,
 * first (ranks' shares in rank order), and nverts if it was
 * GV_GRAPH_NVERTS_AUTO. Checks that every rank gives the same nverts and
 * weightedness and that every id lies in 0..nverts-1 (GV_ERR_INVALID
 * naming the edge otherwise). Called by gv_graph_build() and
 * gv_edgelist_write(); call it yourself only to read the fields.
 */
gv_status_t gv_edgelist_sync(gv_edgelist_t *el);

/* ------------------------------------------------------------------------ */
/* The Graph500 Kronecker generator                                          */

/** What gv_kron_generate() makes. */
typedef struct gv_kron_opts {
    int      scale;       /**< 2^scale vertices (0..40)                    */
    int64_t  edgefactor;  /**< edgefactor * 2^scale edges (Graph500: 16)   */
    uint64_t seed;        /**< any value; the same seed, the same graph    */
    int      weighted;    /**< non-zero: a uniform (0, 1] float per edge   */
} gv_kron_opts_t;

/**
 * Collective: the Graph500 Kronecker graph (initiator A, B, C, D = 0.57,
 * 0.19, 0.19, 0.05, no noise), vertex labels permuted and edges shuffled.
 * Each rank generates its share (a contiguous range of the edge list)
 * with no communication: edge number k of the list is edge perm_E(k) of
 * the generator, whose bits come from a counter-based generator (a
 * SplitMix64 stream keyed by the seed and the edge's number), and vertex
 * v is labelled perm_V(v); both permutations are seeded bijections. The
 * list is therefore identical, edge for edge, whatever the number of
 * ranks. Self-loops and duplicate edges are kept, as the specification
 * does; the graph builder removes them on request.
 * @return GV_OK; GV_ERR_INVALID (scale outside 0..40, edge factor < 0 or
 *         the edge count overflowing); GV_ERR_NO_MEMORY.
 */
gv_status_t gv_kron_generate(const gv_kron_opts_t *opts,
                             gv_edgelist_t *el_p);

/* ------------------------------------------------------------------------ */
/* Files                                                                     */

/** Formats of edge-list files. */
typedef enum {
    /** Little-endian uint64 pairs (src, dst), 16 bytes an edge, no header;
     *  weights, if any, in a separate file of little-endian float32, one
     *  per edge in the same order. What gv_edgelist_write() writes. */
    GV_GRAPH_FMT_BINARY,
    /** SNAP-style text: one edge a line, "src dst" or "src dst weight"
     *  separated by blanks or tabs; lines starting with '#' (after
     *  optional blanks) and blank lines are skipped. Every edge line has
     *  the same number of fields. Ids are non-negative decimal integers,
     *  weights finite decimal numbers. */
    GV_GRAPH_FMT_TEXT,
    /** Matrix Market "%%MatrixMarket matrix coordinate F S" with F one of
     *  pattern, integer, real and S general or symmetric; a square
     *  matrix; 1-based indices; exactly the declared number of entries.
     *  Entry (i, j) is the edge i-1 -> j-1 with the value as its weight
     *  (pattern: unweighted); symmetric files give each off-diagonal
     *  entry in both directions. */
    GV_GRAPH_FMT_MTX,
} gv_graph_fmt_t;

/**
 * Collective: load an edge list, each rank reading its byte range of the
 * file (a line belongs to the rank in whose range it starts) into its
 * share. Everything is checked: a binary file whose size is not a multiple
 * of 16 (truncated), a weight file of the wrong length, an id beyond the
 * declared count or beyond int64, a non-numeric or missing field, extra
 * fields, a bad Matrix Market banner or size line, a wrong entry count.
 * @param [in] path          the edge file.
 * @param [in] weights_path  binary only: the weight file, or NULL; must be
 *                           NULL for the text formats (weights are in the
 *                           lines).
 * @param [in] nverts        the declared vertex count (an id >= nverts is
 *                           an error), or GV_GRAPH_NVERTS_AUTO for the
 *                           largest id + 1; ignored for Matrix Market,
 *                           whose size line declares it.
 * @return GV_OK; GV_ERR_IO (a file that cannot be opened or read);
 *         GV_ERR_INVALID (bad content, bad arguments); GV_ERR_NO_MEMORY.
 *         The message is in gv_graph_errmsg() on every rank.
 */
gv_status_t gv_edgelist_load(gv_graph_fmt_t fmt, const char *path,
                             const char *weights_path, int64_t nverts,
                             gv_edgelist_t *el_p);

/**
 * Collective: write the list as a binary edge file (and, if the list is
 * weighted and @a weights_path is not NULL, its weight file), each rank
 * writing its share at its offset (the ranks must see one file system).
 * The files hold the edges in list order, so a generated graph gives the
 * same bytes whatever the number of ranks. Existing files are replaced.
 * @return GV_OK, GV_ERR_IO (named in the message), GV_ERR_INVALID.
 */
gv_status_t gv_edgelist_write(gv_edgelist_t *el, const char *path,
                              const char *weights_path);

/** The message of this rank's last failed graph call ("" if none). */
const char *gv_graph_errmsg(void);

/* ------------------------------------------------------------------------ */
/* Distributed CSR graphs                                                    */

/** Vertex placement (see the top of this header). */
typedef enum {
    GV_GRAPH_HASH  = 0, /**< pseudo-random, even (the default)            */
    GV_GRAPH_BLOCK = 1, /**< contiguous ranges of ids                     */
} gv_graph_placement_t;

/** Flags of gv_graph_opts_t. */
enum {
    /** Add the reverse of every edge (an undirected graph stored as two
     *  directed edges; a self-loop stays one edge; with GV_GRAPH_DEDUP,
     *  u-v and v-u given both collapse into one pair). */
    GV_GRAPH_SYMMETRIZE   = 1u << 0,
    /** Drop edges v -> v. */
    GV_GRAPH_NO_SELF_LOOPS = 1u << 1,
    /** Collapse copies of a directed pair into one edge, keeping the
     *  smallest weight. */
    GV_GRAPH_DEDUP        = 1u << 2,
    /** Also build the in-edges (in_off, in_src, in_w). */
    GV_GRAPH_IN_EDGES     = 1u << 3,
    /** Ignore the list's weights (an unweighted graph). */
    GV_GRAPH_UNWEIGHTED   = 1u << 4,
};

/** The definitions the engines use: PageRank and SSSP read a list as
 *  directed, self-loops dropped, duplicates collapsed (smallest weight);
 *  BFS and connected components as undirected. */
#define GV_GRAPH_DIRECTED_SIMPLE   (GV_GRAPH_NO_SELF_LOOPS | GV_GRAPH_DEDUP)
/** Undirected: symmetrized, self-loops dropped, duplicates collapsed. */
#define GV_GRAPH_UNDIRECTED_SIMPLE \
    (GV_GRAPH_SYMMETRIZE | GV_GRAPH_NO_SELF_LOOPS | GV_GRAPH_DEDUP)

/** Options of gv_graph_build(); zero-initialised: hashed placement,
 *  directed, everything kept, out-edges only, no vertex data. */
typedef struct gv_graph_opts {
    unsigned             flags;      /**< GV_GRAPH_* flags above          */
    gv_graph_placement_t placement; /**< how vertices are placed on ranks */
    size_t               vdata_size; /**< bytes of user data per vertex  */
} gv_graph_opts_t;

/** This rank's part of a distributed graph. Read the fields freely; do not
 *  change them. */
typedef struct gv_graph {
    int64_t  nverts;      /**< vertices (global)                          */
    int64_t  nedges;      /**< directed edges stored (global, after the
                               options: an undirected edge counts twice) */
    int      rank, nranks; /**< this rank, and the ranks of the job       */
    gv_graph_placement_t placement; /**< how vertices are placed on ranks */
    unsigned flags;       /**< the build's flags                          */
    int      weighted;    /**< out_w (and in_w) present                   */
    int      hash_bits;   /**< GV_GRAPH_HASH: bits of the permutation     */

    int64_t  nlocal;      /**< vertices owned by this rank                */
    int64_t  lo;          /**< GV_GRAPH_BLOCK: first id owned here        */
    int64_t *local_ids;   /**< [nlocal] global id of each local vertex    */

    int64_t  nlocal_out;  /**< out-edges of local vertices                */
    int64_t *out_off;     /**< [nlocal + 1]                               */
    int64_t *out_dst;     /**< [nlocal_out] targets (global ids)          */
    float   *out_w;       /**< [nlocal_out] weights, or NULL              */
    int64_t *out_deg;     /**< [nlocal] out-degree of each local vertex   */

    int64_t  nlocal_in;   /**< in-edges of local vertices (0 if not built) */
    int64_t *in_off;      /**< [nlocal + 1], or NULL                      */
    int64_t *in_src;      /**< [nlocal_in] sources (global ids), or NULL  */
    float   *in_w;        /**< [nlocal_in] weights, or NULL               */
    int64_t *in_deg;      /**< [nlocal] in-degree, or NULL                */

    size_t      vdata_size; /**< bytes of user data per vertex            */
    void       *vdata;      /**< [nlocal * vdata_size], zeroed, or NULL   */
    gv_gaddr_t *vdata_addr; /**< [nranks] global address of each rank's
                                 vdata (exported), for delegates           */
} gv_graph_t;
/** @var gv_graph::rank
 *  this rank */

/**
 * Collective: build the graph of @a el (each rank's share, any split).
 * Edges travel to the owner of their source (and, for in-edges, of their
 * target) in bulk active messages; each rank then sorts its adjacency
 * lists. The result depends only on the list's edges and the options, not
 * on how they were split over ranks.
 * @param [in]  el    the edge list (gv_edgelist_sync() is applied first).
 * @param [in]  opts  NULL for the defaults.
 * @param [out] g_p   filled with this rank's part.
 * @return GV_OK; GV_ERR_INVALID (an id out of range, ranks disagreeing on
 *         nverts, unknown flags: in the message); GV_ERR_NO_MEMORY.
 */
gv_status_t gv_graph_build(gv_edgelist_t *el, const gv_graph_opts_t *opts,
                           gv_graph_t *g_p);

/** Collective: free this rank's part (the struct is zeroed). */
void gv_graph_destroy(gv_graph_t *g);

/** The GV_GRAPH_HASH permutation of @a v in a graph of 2^bits >= nverts
 *  vertices, by cycle-walking a bijection of 0..2^bits-1 (exposed for the
 *  inline functions below; use gv_graph_owner()/gv_graph_local()). */
int64_t gv__graph_perm(int64_t v, int64_t nverts, int bits);

/** Rank that owns vertex @a v (0 <= v < nverts). */
static inline int gv_graph_owner(const gv_graph_t *g, int64_t v)
{
    if (g->placement == GV_GRAPH_BLOCK)
        return (int)((((unsigned __int128)v + 1) * (unsigned)g->nranks - 1) /
                     (uint64_t)g->nverts);
    return (int)(gv__graph_perm(v, g->nverts, g->hash_bits) % g->nranks);
}

/** Local index of @a v at its owner. */
static inline int64_t gv_graph_local(const gv_graph_t *g, int64_t v)
{
    if (g->placement == GV_GRAPH_BLOCK) {
        int r = gv_graph_owner(g, v);
        return v - (int64_t)(((unsigned __int128)r * (uint64_t)g->nverts) /
                             (unsigned)g->nranks);
    }
    return gv__graph_perm(v, g->nverts, g->hash_bits) / g->nranks;
}

/** Global id of this rank's local vertex @a i (0 <= i < nlocal). */
static inline int64_t gv_graph_global(const gv_graph_t *g, int64_t i)
{
    return g->local_ids[i];
}

/** Number of vertices rank @a r owns. */
int64_t gv_graph_nlocal_of(const gv_graph_t *g, int r);

/** This rank's user data of local vertex @a i. */
static inline void *gv_graph_vdata(const gv_graph_t *g, int64_t i)
{
    return (char *)g->vdata + (size_t)i * g->vdata_size;
}

/** Global address of the user data of vertex @a v (any rank), for
 *  delegate operations at its owner. GV_GADDR_NULL without vertex data. */
static inline gv_gaddr_t gv_graph_vdata_gaddr(const gv_graph_t *g, int64_t v)
{
    if (g->vdata_addr == NULL)
        return GV_GADDR_NULL;
    return gv_gaddr_add(g->vdata_addr[gv_graph_owner(g, v)],
                        gv_graph_local(g, v) * (int64_t)g->vdata_size);
}

/** Which degrees gv_graph_degrees_all() gathers. */
typedef enum { GV_GRAPH_OUT, GV_GRAPH_IN } gv_graph_dir_t;

/**
 * Collective: the degree of every vertex, indexed by global id, in
 * @a deg (nverts entries, on every rank). GV_GRAPH_IN needs in-edges.
 * @return GV_OK, GV_ERR_INVALID (no in-edges built), GV_ERR_NO_MEMORY.
 */
gv_status_t gv_graph_degrees_all(const gv_graph_t *g, gv_graph_dir_t dir,
                                 int64_t *deg);

#ifdef __cplusplus
}
#endif
#endif
