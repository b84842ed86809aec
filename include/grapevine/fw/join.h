/** @file
 * Grapevine frameworks: relations and distributed hash joins.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The Grappa paper's query engine (section 4.2): a hash join is a global
 * hash table. The build relation's tuples travel to the homes of their
 * keys (a hash of the key picks the rank) and go into that rank's table;
 * the probe relation's tuples travel to the same homes, where each match
 * is counted or emitted into the result, which stays where it was made.
 * Tuples travel in batches, one active message per batch and destination.
 *
 * A relation is a distributed array (grapevine/fw/array.h, blocks) of
 * tuples of ncols int64 columns (1..GV_REL_COLS_MAX), row-major: each
 * rank holds a contiguous run of rows. Every call here is collective
 * (every rank, same order, one worker), except the accessors.
 *
 *   gv_rel_load_csv("a.csv", 0, &a);   gv_rel_load_csv("b.csv", 0, &b);
 *   gv_rel_join(a, 0, b, 0, &ab, &rows);  // a.col0 = b.col0
 *   gv_rel_groupby(ab, 0, 1, GV_AGG_SUM, &g);
 */
#ifndef GRAPEVINE_FW_JOIN_H
#define GRAPEVINE_FW_JOIN_H

#include <grapevine.h>
#include <grapevine/fw/array.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most columns of a tuple (a tuple is at most GV_DELEGATE_DATA_MAX bytes). */
#define GV_REL_COLS_MAX 64

/** A relation (each rank holds its own handle of it). */
typedef struct gv_rel gv_rel_t;

/**
 * Collective: a relation of the rows each rank gives: @a n rows of
 * @a ncols columns at @a rows (row-major; n may differ per rank, 0 too).
 * The relation holds rank 0's rows first, then rank 1's, and so on.
 * @return GV_OK, GV_ERR_INVALID (ncols out of range or not the same on
 *         every rank), GV_ERR_NO_MEMORY (raise GV_HEAP).
 */
gv_status_t gv_rel_from_local(int ncols, const int64_t *rows, int64_t n,
                              gv_rel_t **rel_p);

/** Free it (collective). */
void gv_rel_destroy(gv_rel_t *rel);

/** Columns of a row. */
int         gv_rel_ncols(const gv_rel_t *rel);
/** Rows in all (global). */
int64_t     gv_rel_size(const gv_rel_t *rel);
/** The distributed array holding the rows (row-major). */
gv_array_t *gv_rel_array(const gv_rel_t *rel);
/** This rank's rows: *n_p of them, row-major. */
int64_t    *gv_rel_local(const gv_rel_t *rel, int64_t *n_p);

/**
 * Collective: load a CSV file in parallel (each rank the lines that start
 * in its byte range). One tuple a line: comma-separated decimal int64
 * fields, blanks around them allowed, every line the same number of
 * fields (that of the first tuple line); empty lines are skipped; with
 * @a header non-zero the file's first line is skipped. A bad line (a
 * field that is not an int64, a missing or extra field) is GV_ERR_INVALID
 * logged as "FILE:LINE: problem" by the rank that read it; a file that
 * cannot be read GV_ERR_IO. Every rank returns the same status.
 */
gv_status_t gv_rel_load_csv(const char *path, int header, gv_rel_t **rel_p);

/** Collective: write the relation as CSV (the form gv_rel_load_csv reads,
 *  no header), each rank its rows at their offset (one file system).
 *  @return GV_OK, GV_ERR_IO (logged with the path). */
gv_status_t gv_rel_write_csv(const gv_rel_t *rel, const char *path);

/** Predicate of gv_rel_select(): non-zero keeps the tuple. */
typedef int (*gv_rel_pred_fn_t)(const int64_t *tuple, void *arg);

/** Collective: the tuples of @a rel for which pred(tuple, arg) holds
 *  (@a arg is this rank's). */
gv_status_t gv_rel_select(const gv_rel_t *rel, gv_rel_pred_fn_t pred,
                          void *arg, gv_rel_t **out_p);

/** Collective: the columns @a cols[0..ncols-1] of every tuple, in that
 *  order (a column may repeat). */
gv_status_t gv_rel_project(const gv_rel_t *rel, const int *cols, int ncols,
                           gv_rel_t **out_p);

/** Aggregates of gv_rel_groupby(). */
typedef enum { GV_AGG_COUNT, GV_AGG_SUM, GV_AGG_MIN, GV_AGG_MAX } gv_agg_t;

/** Collective: one tuple (key, aggregate) per distinct value of column
 *  @a keycol, aggregating column @a valcol (ignored for GV_AGG_COUNT),
 *  in no particular order. */
gv_status_t gv_rel_groupby(const gv_rel_t *rel, int keycol, int valcol,
                           gv_agg_t agg, gv_rel_t **out_p);

/** Times and sizes of the last gv_rel_join() on this rank. */
typedef struct gv_join_stats {
    double  build_s, probe_s;  /**< the phases, wall clock (every rank)   */
    int64_t built, probed;     /**< tuples this rank sent into each phase */
} gv_join_stats_t;
/** @var gv_join_stats::build_s
 *  the build phase, seconds of wall clock
 *  @var gv_join_stats::built
 *  tuples this rank sent into the build phase */

/**
 * Collective equi-join of @a r and @a s on r.rcol = s.scol: build a global
 * hash table on r's key, probe it with s's tuples at their homes. Every
 * pair of matching tuples (duplicates included) is one result tuple: r's
 * columns then s's (at most GV_REL_COLS_MAX in all).
 * @param [out] out_p    the result, or NULL to count only.
 * @param [out] count_p  result tuples over all ranks; may be NULL.
 * @param [out] st_p     phase times and sizes; may be NULL.
 */
gv_status_t gv_rel_join(const gv_rel_t *r, int rcol, const gv_rel_t *s,
                        int scol, gv_rel_t **out_p, int64_t *count_p,
                        gv_join_stats_t *st_p);

/**
 * Collective: triangles of the undirected graph whose edges are the
 * tuples (u, v) of @a edges (2 columns; vertex ids 0..2^32-1), as the
 * three-way self-join of the symmetrized edge relation: E(a,b), E(b,c),
 * E(a,c) with a < b < c. Self-loops and duplicate edges (either
 * direction) count once. A global hash table of E keyed on its first
 * column is probed with E's second column, and each wedge (a, b, c) so
 * found probes a hash set of E at the home of (a, c).
 * @param [out] count_p  triangles (every rank).
 * @param [out] wedges_p wedges probed (every rank); may be NULL.
 */
gv_status_t gv_rel_triangles(const gv_rel_t *edges, int64_t *count_p,
                             int64_t *wedges_p);

/** Key distributions of gv_rel_generate(). */
typedef enum { GV_KEYS_UNIFORM, GV_KEYS_ZIPF } gv_keys_t;

/**
 * Collective: two relations for a join benchmark, the same whatever the
 * number of ranks. @a r_p gets (key, payload) for key 0..nr-1 (each once,
 * a primary key); @a s_p gets ns tuples (key, payload) whose keys are in
 * 0..nr-1, uniform or Zipf: P(key = k - 1) proportional to the integral
 * of x^-zipf_s over [k, k+1) for k = 1..nr (drawn by inverting that
 * continuous law), so key 0 is the most frequent. Payloads are hashes of
 * (seed, row). Joined on column 0 the result has exactly ns tuples.
 */
gv_status_t gv_rel_generate(int64_t nr, int64_t ns, gv_keys_t keys,
                            double zipf_s, uint64_t seed, gv_rel_t **r_p,
                            gv_rel_t **s_p);

#ifdef __cplusplus
}
#endif
#endif
