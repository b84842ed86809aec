/** @file
 * Grapevine frameworks: distributed arrays of fixed-size elements.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * A gv_array_t is n elements of elem_size bytes spread over the ranks,
 * either in blocks (rank r holds one contiguous slice, the n/P elements
 * from gv_array_local_lo(), the first n mod P ranks one more: owner-
 * computes loops) or block-cyclically (blocks of `block` elements dealt
 * round-robin: block b lives on rank b mod P). Each rank's part is one
 * contiguous piece of the symmetric global heap (GV_HEAP bytes per rank;
 * creating an array that does not fit is GV_ERR_NO_MEMORY and the error
 * names GV_HEAP), so every element has a global address (gv_array_addr)
 * and is read, written and updated by delegates at its home, one at a
 * time: atomic without locks (see grapevine/dsm.h).
 *
 * One event for all ranks: gv_gce_wait(e) covers what was enrolled in e
 * on every rank, so a collective phase of async operations uses one event
 * that every rank knows (gv_gce_default(), or one rank's gv_gce_create()
 * passed to the others with gv_broadcast). An event each rank made for
 * itself covers only that rank's operations: after waiting on it, a rank
 * still needs a barrier before it reads what other ranks sent it.
 *
 * Create, destroy and the loops, scans and reductions are collective:
 * every rank calls them, in the same order, from one worker. Element
 * operations may be called from any worker on any rank; their async forms
 * are counted in a gv_gce_t (NULL: the default event).
 *
 *   gv_array_t *a;
 *   gv_array_create(n, sizeof(int64_t), GV_DIST_BLOCK, 0, &a);
 *   gv_array_add_i64(a, i, 1, &gce);            // from any worker
 *   gv_gce_wait(&gce);
 *   gv_array_scan(a, GV_INT64, GV_SUM, &total); // exclusive prefix sum
 */
#ifndef GRAPEVINE_FW_ARRAY_H
#define GRAPEVINE_FW_ARRAY_H

#include <grapevine.h>

#ifdef __cplusplus
extern "C" {
#endif

/** How elements are spread over the ranks. */
typedef enum {
    GV_DIST_BLOCK  = 0, /**< one contiguous slice per rank            */
    GV_DIST_CYCLIC = 1  /**< blocks of `block` elements, round-robin  */
} gv_dist_t;

/** A distributed array (the handle is valid on the rank that holds it;
 *  every rank holds its own handle of the same array). */
typedef struct gv_array gv_array_t;

/**
 * Create an array of @a n elements of @a elem_size bytes, zero-filled.
 * Collective.
 * @param [in] dist   GV_DIST_BLOCK or GV_DIST_CYCLIC.
 * @param [in] block  elements per block for GV_DIST_CYCLIC (0: as many as
 *                    fit in 4 KiB, at least 1); ignored for GV_DIST_BLOCK.
 * @param [out] arr_p the handle; released by gv_array_destroy().
 * @return GV_OK; GV_ERR_INVALID (n < 0, elem_size 0 or over
 *         GV_DELEGATE_DATA_MAX, a bad dist); GV_ERR_NO_MEMORY (the global
 *         heap is full: raise GV_HEAP). Logged once, on every rank.
 */
gv_status_t gv_array_create(int64_t n, size_t elem_size, gv_dist_t dist,
                            int64_t block, gv_array_t **arr_p);

/** Free the array (collective). No operation may be in flight on it. */
void gv_array_destroy(gv_array_t *a);

/** Number of elements, and bytes per element. */
int64_t gv_array_size(const gv_array_t *a);
/** Bytes per element. */
size_t  gv_array_elem_size(const gv_array_t *a);

/** Rank that holds element @a i (0 <= i < n). */
int gv_array_owner(const gv_array_t *a, int64_t i);

/** Global address of element @a i (for any delegate of grapevine/dsm.h:
 *  the element is contiguous at its home). */
gv_gaddr_t gv_array_addr(const gv_array_t *a, int64_t i);

/* ---- local views ------------------------------------------------------- */

/**
 * This rank's part: @a *base_p points to gv_array_local_count() elements,
 * contiguous. For GV_DIST_BLOCK they are the global indices
 * [gv_array_local_lo(), gv_array_local_lo() + count); for GV_DIST_CYCLIC
 * local element k is global element gv_array_global_index(a, rank, k).
 * Local memory is read and written directly (no delegate): the owner-
 * computes way. Safe against delegates because one thread runs the rank.
 */
void   *gv_array_local(const gv_array_t *a);
/** Elements held on this rank. */
int64_t gv_array_local_count(const gv_array_t *a);
/** Global index of this rank's first element (GV_DIST_BLOCK). */
int64_t gv_array_local_lo(const gv_array_t *a);
/** Global index of local element @a k of rank @a rank. */
int64_t gv_array_global_index(const gv_array_t *a, int rank, int64_t k);

/* ---- element operations (any worker, any rank) ------------------------- */

/** Blocking read and write of element @a i (elem_size bytes). */
gv_status_t gv_array_get(const gv_array_t *a, int64_t i, void *buf);
/** Blocking write of element @a i from @a buf. */
gv_status_t gv_array_put(gv_array_t *a, int64_t i, const void *buf);

/** Asynchronous write (@a buf copied at once), counted in @a gce. */
gv_status_t gv_array_put_async(gv_array_t *a, int64_t i, const void *buf,
                               gv_gce_t *gce);

/** Asynchronous atomic add to an int64 element (elem_size 8), packed with
 *  other adds to the same home; counted in @a gce. */
gv_status_t gv_array_add_i64(gv_array_t *a, int64_t i, int64_t v,
                             gv_gce_t *gce);

/** Blocking atomic fetch-and-add on an int64 element: *old_p gets the
 *  value before (@a old_p may be NULL). */
gv_status_t gv_array_fetch_add_i64(gv_array_t *a, int64_t i, int64_t v,
                                   int64_t *old_p);

/** Blocking compare-and-swap on an 8-byte element; succeeded iff
 *  *old_p == expected. */
gv_status_t gv_array_cswap_u64(gv_array_t *a, int64_t i, uint64_t expected,
                               uint64_t desired, uint64_t *old_p);

/**
 * Atomic update with a user function run at the element's home:
 * fn(elem, args, len, result) where elem points to the element (the
 * gv_delegate_fn_t contract: no blocking). The async form discards the
 * result and is counted in @a gce; the blocking form copies up to @a cap
 * bytes of result to @a result.
 */
gv_status_t gv_array_update_async(gv_array_t *a, int64_t i,
                                  gv_delegate_fn_t fn, const void *args,
                                  size_t len, gv_gce_t *gce);
/** The blocking form of gv_array_update_async(), with up to @a cap bytes
 *  of result in @a result. */
gv_status_t gv_array_update(gv_array_t *a, int64_t i, gv_delegate_fn_t fn,
                            const void *args, size_t len, void *result,
                            size_t cap);

/**
 * Bulk blocking copies of the @a count elements [lo, lo + count): split
 * into pieces at owner boundaries (and GV_DELEGATE_DATA_MAX bytes), many
 * in flight at once. @return GV_OK, GV_ERR_INVALID (range outside the
 * array), or the first error of a piece.
 */
gv_status_t gv_array_get_range(const gv_array_t *a, int64_t lo,
                               int64_t count, void *buf);
/** Bulk blocking write of elements [lo, lo + count) from @a buf (as
 *  gv_array_get_range()). */
gv_status_t gv_array_put_range(gv_array_t *a, int64_t lo, int64_t count,
                               const void *buf);

/* ---- collective loops, scans and reductions ---------------------------- */

/** Body of gv_array_forall(): global index @a i, its element (local
 *  pointer) and the caller's argument. It may block and issue delegates. */
typedef void (*gv_array_fn_t)(int64_t i, void *elem, void *arg);

/**
 * Collective: every rank runs body(i, elem, arg) over its own elements as
 * a parallel loop (gv_parallel_for, leaves of @a grain elements, 0 for
 * the default), then, if @a gce is not NULL, waits on it (so asynchronous
 * operations the bodies issued have landed everywhere), else meets the
 * other ranks in a barrier. @a arg is this rank's (not copied).
 */
gv_status_t gv_array_forall(gv_array_t *a, int64_t grain, gv_array_fn_t body,
                            void *arg, gv_gce_t *gce);

/** Collective: set every element to the @a elem_size bytes at @a value. */
gv_status_t gv_array_fill(gv_array_t *a, const void *value);

/**
 * Collective exclusive prefix scan in place, in global index order:
 * element i becomes the combination of elements 0..i-1 (the identity for
 * i = 0: 0 for GV_SUM, the type's largest value for GV_MIN, smallest for
 * GV_MAX). Elements are 8 bytes of @a type.
 * @param [out] total_p  the combination of all elements (every rank);
 *                       may be NULL.
 * @return GV_OK, GV_ERR_INVALID (elem_size not 8, a bad type or op).
 */
gv_status_t gv_array_scan(gv_array_t *a, gv_dtype_t type, gv_redop_t op,
                          void *total_p);

/** Collective reduction of all elements (8 bytes of @a type) with @a op;
 *  every rank gets the result in @a *result_p (8 bytes). */
gv_status_t gv_array_reduce(const gv_array_t *a, gv_dtype_t type,
                            gv_redop_t op, void *result_p);

#ifdef __cplusplus
}
#endif
#endif
