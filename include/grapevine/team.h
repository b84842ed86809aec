/** @file
 * Grapevine teams and non-blocking collectives: sub-groups of ranks (like
 * MPI communicators, GASNet-EX teams, UPC++ teams) and barrier, broadcast,
 * reduce, all-reduce, all-gather, all-to-all(v) on them, each blocking and
 * non-blocking. Built on active messages (aggregator layer), so usable
 * from plain programs, from workers and from a host loop that only calls
 * gv_progress(). SPDX-License-Identifier: BSD-3-Clause
 *
 * Rules common to every call here:
 * - Collective calls on a team are made by every member, in the same order
 *   on every member (like MPI). Several may be outstanding at once, on one
 *   team or on several: each team numbers its collectives, so they never
 *   mix, and a message that arrives before the local rank started the
 *   collective it belongs to is kept until it does.
 * - Call from the rank's thread (the thread allowed to call, see
 *   gv_thread_level_t in grapevine/core.h): the main flow, a worker, or a
 *   host loop; never from an active-message handler. A collective whose
 *   team has a failed member (gv_on_peer_failure) stops the job, naming
 *   it. A blocking call (and
 *   gv_coll_wait()) made by a worker suspends only that worker: the
 *   rank's other workers run while it waits; from the main flow it
 *   progresses, polling and then blocking in the transport.
 * - A non-blocking call returns a request that completes through progress
 *   (gv_progress(), gv_wait(), any wait of the runtime): poll it with
 *   gv_coll_test() or finish it with gv_coll_wait(). Until then the
 *   buffers given to it belong to the collective: do not read the output
 *   nor change the input.
 * - Every member passes the same sizes, counts, types, ops and root; a
 *   member that does not (or that starts collectives in another order)
 *   makes the collective fail with GV_ERR_PROTO on a rank that sees the
 *   mismatch, logged there, instead of a hang or a wrong answer.
 * - A peer that dies is detected by the runtime (GV_TIMEOUT_S), which
 *   stops the job: no collective waits forever.
 *
 * Point-to-point messages within a team are active messages
 * (grapevine/am.h) to gv_team_world_rank(team, r).
 */
#ifndef GRAPEVINE_TEAM_H
#define GRAPEVINE_TEAM_H

#include <grapevine/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Element types and operations of reductions (also gv_allreduce()). */
typedef enum { GV_INT64, GV_UINT64, GV_DOUBLE } gv_dtype_t;
/** Reduction operations. */
typedef enum { GV_SUM, GV_MIN, GV_MAX } gv_redop_t;

/** A team: an ordered set of ranks. Opaque; valid on the calling rank. */
typedef struct gv_team gv_team_t;

/** A non-blocking collective in flight. Opaque. */
typedef struct gv_coll_req gv_coll_req_t;

/** Every rank of the job, team rank = world rank. Valid between gv_init()
 *  and gv_finalize(); never freed by the user. */
gv_team_t *gv_team_world(void);
/** The team of every rank (gv_team_world()). */
#define GV_TEAM_WORLD (gv_team_world())

/** Color of a rank that joins no team in gv_team_split(). */
#define GV_TEAM_NO_COLOR (-1)

/**
 * Split @a parent into disjoint teams, like MPI_Comm_split: the members
 * that pass the same @a color (>= 0) form one team, ordered by @a key,
 * then by their rank in @a parent. Collective and blocking over @a parent.
 * @param [in]  color  >= 0, or GV_TEAM_NO_COLOR: then *team_p is NULL.
 * @param [out] team_p the new team (free with gv_team_free()).
 * @return GV_OK; GV_ERR_INVALID (NULL parent or team_p, color < -1);
 *         GV_ERR_STATE outside gv_init..gv_finalize.
 */
gv_status_t gv_team_split(gv_team_t *parent, int color, int key,
                          gv_team_t **team_p);

/**
 * The node-local team: the ranks on this rank's node, ordered by world
 * rank. Not collective (every rank knows the job's layout); the same team
 * on every call, owned by the runtime (gv_team_free() ignores it).
 * The node layout comes from the bootstrap (host names), or, for tests
 * only, from GV_TEST_NODES=k: the ranks are then taken as k pretend nodes
 * of contiguous rank blocks (rank r on node r * k / nranks), so that
 * several nodes can be simulated on one machine. It changes what this
 * API reports (this team, gv_node_of(), gv_nnodes()) and GV_AGG_ROUTE's
 * nodes; the transport paths change only under a composite transport
 * (GV_TRANSPORT=shm+tcp, shm+ucx, shm+ofi), which then uses shared memory
 * within a pretend node and the network transport between them.
 * @param [out] team_p  the team.
 */
gv_status_t gv_team_node(gv_team_t **team_p);

/** Node index (0..gv_nnodes()-1) of world rank @a world_rank, as the node
 *  team sees it; -1 for a rank out of range. */
int gv_node_of(int world_rank);
/** Number of nodes (pretend nodes under GV_TEST_NODES). */
int gv_nnodes(void);

/** This rank's rank in @a team (0..size-1). */
int gv_team_rank(const gv_team_t *team);
/** Number of ranks in @a team. */
int gv_team_size(const gv_team_t *team);
/** World rank of @a team's rank @a team_rank; -1 if out of range. */
int gv_team_world_rank(const gv_team_t *team, int team_rank);
/** Rank in @a team of world rank @a world_rank; -1 if not a member. */
int gv_team_rank_of(const gv_team_t *team, int world_rank);

/**
 * Release a team made by gv_team_split(). Local (not collective); the
 * rank must have finished (tested or waited) every collective it started
 * on the team. The world and node teams are not freed (GV_OK).
 * @return GV_OK; GV_ERR_STATE if a collective of the team is in flight.
 */
gv_status_t gv_team_free(gv_team_t *team);

/* ---- completion of non-blocking collectives --------------------------- */

/**
 * Make progress and test @a *req_p. Once it returns anything but
 * GV_INPROGRESS the request is released and *req_p set to NULL.
 * @return GV_INPROGRESS; GV_OK (done, output valid); or the collective's
 *         error (GV_ERR_PROTO on a mismatch between members).
 */
gv_status_t gv_coll_test(gv_coll_req_t **req_p);

/**
 * Wait for @a *req_p (suspending only the calling worker, if a worker),
 * release it and set *req_p to NULL. A NULL *req_p returns GV_OK.
 * @return GV_OK or the collective's error.
 */
gv_status_t gv_coll_wait(gv_coll_req_t **req_p);

/** Non-zero once @a req is complete (no progress made, nothing released);
 *  for a host loop that progresses by itself. */
int gv_coll_done(const gv_coll_req_t *req);

/* ---- collectives ------------------------------------------------------- */
/* Each gv_team_iX() starts the collective and returns its request in
 * *req_p; gv_team_X() is gv_team_iX() followed by gv_coll_wait(). Sizes
 * are in bytes unless named count. Input and output buffers must not
 * overlap unless stated. Algorithms: dissemination barrier; broadcasts
 * of at most 1 KiB to at most 8 members straight from the root to each;
 * binomial-tree broadcast and reduce, with large broadcasts (from 64 KiB)
 * pipelined down a chain in 64 KiB segments; all-reduces of at most
 * 1 KiB on at most 4 members in one round of every member to every other,
 * larger ones by recursive doubling (with the usual fold for team sizes
 * that are not powers of two); direct exchange for all-gather and
 * all-to-all(v). */

/** Barrier: no member leaves before every member entered. Not a
 *  quiescence barrier (see gv_barrier() for that). */
gv_status_t gv_team_barrier(gv_team_t *team);
/** The non-blocking form of gv_team_barrier(): complete at gv_coll_wait()
 *  on *@a req_p. */
gv_status_t gv_team_ibarrier(gv_team_t *team, gv_coll_req_t **req_p);

/** Broadcast @a len bytes of team rank @a root's @a buf into @a buf on
 *  every member. */
gv_status_t gv_team_bcast(gv_team_t *team, int root, void *buf, size_t len);
/** The non-blocking form of gv_team_bcast(): complete at gv_coll_wait()
 *  on *@a req_p. */
gv_status_t gv_team_ibcast(gv_team_t *team, int root, void *buf, size_t len,
                           gv_coll_req_t **req_p);

/** Reduce @a count elements of every member's @a send with @a op into
 *  @a recv on team rank @a root (recv is ignored elsewhere and may be
 *  NULL). @a send may equal @a recv on the root. */
gv_status_t gv_team_reduce(gv_team_t *team, int root, const void *send,
                           void *recv, size_t count, gv_dtype_t type,
                           gv_redop_t op);
/** The non-blocking form of gv_team_reduce(): complete at gv_coll_wait()
 *  on *@a req_p. */
gv_status_t gv_team_ireduce(gv_team_t *team, int root, const void *send,
                            void *recv, size_t count, gv_dtype_t type,
                            gv_redop_t op, gv_coll_req_t **req_p);

/** All-reduce: every member gets the reduction of every member's @a send
 *  in @a recv, bitwise identical on every member. @a send may equal
 *  @a recv. */
gv_status_t gv_team_allreduce(gv_team_t *team, const void *send, void *recv,
                              size_t count, gv_dtype_t type, gv_redop_t op);
/** The non-blocking form of gv_team_allreduce(): complete at gv_coll_wait()
 *  on *@a req_p. */
gv_status_t gv_team_iallreduce(gv_team_t *team, const void *send, void *recv,
                               size_t count, gv_dtype_t type, gv_redop_t op,
                               gv_coll_req_t **req_p);

/** A user reduction: @a inout[i] = @a inout[i] op @a in[i] for @a count
 *  elements of @a elem_size bytes. It must be associative and
 *  commutative; it runs inside progress (like a handler: it must not
 *  wait or start collectives). */
typedef void (*gv_reduce_fn_t)(void *inout, const void *in, size_t count,
                               void *arg);

/** All-reduce with a user operation over elements of @a elem_size bytes
 *  (unaligned: @a fn should memcpy its elements). */
gv_status_t gv_team_allreduce_fn(gv_team_t *team, const void *send,
                                 void *recv, size_t count, size_t elem_size,
                                 gv_reduce_fn_t fn, void *arg);
/** The non-blocking form of gv_team_allreduce_fn(): complete at gv_coll_wait()
 *  on *@a req_p. */
gv_status_t gv_team_iallreduce_fn(gv_team_t *team, const void *send,
                                  void *recv, size_t count, size_t elem_size,
                                  gv_reduce_fn_t fn, void *arg,
                                  gv_coll_req_t **req_p);

/** All-gather: member i's @a len bytes of @a send land at
 *  recv + i * len on every member (recv holds size * len bytes). */
gv_status_t gv_team_allgather(gv_team_t *team, const void *send, void *recv,
                              size_t len);
/** The non-blocking form of gv_team_allgather(): complete at gv_coll_wait()
 *  on *@a req_p. */
gv_status_t gv_team_iallgather(gv_team_t *team, const void *send, void *recv,
                               size_t len, gv_coll_req_t **req_p);

/** All-to-all: member i's bytes send + j * len land at recv + i * len on
 *  member j (both buffers hold size * len bytes). */
gv_status_t gv_team_alltoall(gv_team_t *team, const void *send, void *recv,
                             size_t len);
/** The non-blocking form of gv_team_alltoall(): complete at gv_coll_wait()
 *  on *@a req_p. */
gv_status_t gv_team_ialltoall(gv_team_t *team, const void *send, void *recv,
                              size_t len, gv_coll_req_t **req_p);

/** All-to-all with sizes per pair, in bytes: member i sends
 *  @a send_lens[j] bytes from send + send_offs[j] to member j, which
 *  receives them at recv + recv_offs[i] and must pass recv_lens[i] equal
 *  to them. The arrays (size entries each) are read during the call only. */
gv_status_t gv_team_alltoallv(gv_team_t *team, const void *send,
                              const size_t *send_lens,
                              const size_t *send_offs, void *recv,
                              const size_t *recv_lens,
                              const size_t *recv_offs);
/** The non-blocking form of gv_team_alltoallv(): complete at gv_coll_wait()
 *  on *@a req_p. */
gv_status_t gv_team_ialltoallv(gv_team_t *team, const void *send,
                               const size_t *send_lens,
                               const size_t *send_offs, void *recv,
                               const size_t *recv_lens,
                               const size_t *recv_offs,
                               gv_coll_req_t **req_p);

#ifdef __cplusplus
}
#endif
#endif
