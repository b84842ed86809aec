/** @file
 * Grapevine frameworks: a distributed bag (unordered multiset).
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Elements of a fixed size given at creation. Any worker on any rank
 * appends: to its own rank's part (gv_bag_append: no message) or to a
 * chosen rank's (gv_bag_append_on: an active message, packed by the
 * aggregator with others to that rank, counted in a gv_gce_t). Each rank
 * stores its part in chunks that never move, so iterating a bag while
 * appending to it is safe (the loop sees the elements that were there when
 * it started). The frontier of graph traversals: append each discovered
 * vertex at its owner, then gv_bag_forall() runs at the owners.
 *
 * One event for all ranks: gv_gce_wait(e) covers what was enrolled in e
 * on every rank, so a collective phase of async operations uses one event
 * that every rank knows (gv_gce_default(), or one rank's gv_gce_create()
 * passed to the others with gv_broadcast). An event each rank made for
 * itself covers only that rank's operations: after waiting on it, a rank
 * still needs a barrier before it reads what other ranks sent it.
 *
 * Create, destroy, gv_bag_forall, gv_bag_clear and gv_bag_size are
 * collective (every rank, same order, one worker).
 *
 *   gv_bag_append_on(next, owner_of(v), &v, &gce);  // any worker
 *   gv_gce_wait(&gce);
 *   gv_bag_forall(next, visit, &ctx, &gce);         // at the homes
 */
#ifndef GRAPEVINE_FW_BAG_H
#define GRAPEVINE_FW_BAG_H

#include <grapevine.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A distributed bag (each rank holds its own handle of it). */
typedef struct gv_bag gv_bag_t;

/** Most bytes of one element. */
#define GV_BAG_ELEM_MAX 1024

/**
 * Create an empty bag of @a elem_size-byte elements. Collective.
 * @return GV_OK; GV_ERR_INVALID (elem_size 0 or over GV_BAG_ELEM_MAX);
 *         GV_ERR_NO_RESOURCE (65535 containers alive).
 */
gv_status_t gv_bag_create(size_t elem_size, gv_bag_t **bag_p);

/** Free the bag (collective); no append may be in flight. */
void gv_bag_destroy(gv_bag_t *bag);

/** Append @a elem to this rank's part at once (no message). Also from a
 *  handler, visitor or combiner. */
gv_status_t gv_bag_append(gv_bag_t *bag, const void *elem);

/** Append @a elem to rank @a rank's part: an aggregated active message,
 *  counted in @a gce (NULL: the default event). */
gv_status_t gv_bag_append_on(gv_bag_t *bag, int rank, const void *elem,
                             gv_gce_t *gce);

/** Elements in this rank's part. */
int64_t gv_bag_local_size(const gv_bag_t *bag);

/** Element @a k (0 <= k < gv_bag_local_size) of this rank's part: a local
 *  pointer, stable until gv_bag_clear() or gv_bag_destroy(). */
void *gv_bag_local_at(const gv_bag_t *bag, int64_t k);

/** Copy this rank's elements, in local order, to @a buf (room for
 *  gv_bag_local_size() elements). */
void gv_bag_local_copy(const gv_bag_t *bag, void *buf);

/** Body of gv_bag_forall(): element @a k of this rank's part. May block
 *  and issue operations (also appends to this bag: not visited by this
 *  loop). */
typedef void (*gv_bag_fn_t)(gv_bag_t *bag, void *elem, void *arg);

/**
 * Collective: every rank runs body(bag, elem, arg) on each element of its
 * part (those present at the start) as a parallel loop (@a grain elements
 * per leaf, 0 for the default), then waits on @a gce if not NULL, else
 * meets the other ranks in a barrier. @a arg is this rank's.
 */
gv_status_t gv_bag_forall(gv_bag_t *bag, int64_t grain, gv_bag_fn_t body,
                          void *arg, gv_gce_t *gce);

/** Collective: empty the bag on every rank (memory kept for reuse). */
gv_status_t gv_bag_clear(gv_bag_t *bag);

/** Collective: number of elements over all ranks, in @a *n_p. */
gv_status_t gv_bag_size(gv_bag_t *bag, int64_t *n_p);

#ifdef __cplusplus
}
#endif
#endif
