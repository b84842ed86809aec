/* Internal interface of the active-message layer for gv_init/gv_finalize
 * and the layers above. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_AGGREGATOR_AM_INTERNAL_H
#define GV_AGGREGATOR_AM_INTERNAL_H

#include "transports/transport.h"
#include "aggregator/progress.h"
#include <grapevine/am.h>

/* Before the transport opens: the receive callback to give it. */
void        gv__am_params(gv_tl_params_t *params);
/* After the transport opened. */
gv_status_t gv__am_start(gv_tl_t *tl);
/* After the final barrier. */
void        gv__am_fini(void);
/* Progress the AM layer (pending sends, aged buffers, local queue). */
unsigned    gv__am_progress(void);
/* The rank is idle: ship every open buffer. */
void        gv__am_idle(void);
/* The rank is about to sleep on gv_wait_fd(): ship what is buffered;
 * 1 if work is left that only progress can do (messages to self; sends
 * the transport refused, unless @a wait_send: the fd wakes when it has
 * room). */
int         gv__am_busy(int wait_send);
/* After gv_init's barrier: announce the names registered before it. */
void        gv__am_announce_kept(void);
/* From progress: declare failed a rank that took none of the messages
 * owed to it for GV_TIMEOUT_S of polling. */
void        gv__am_watch(uint64_t now);
/* A blocking one-sided operation starts (+1) or stops (-1) waiting for
 * @a rank to complete it (@a done: it did): the watchdog counts it as
 * owed to that rank. */
void        gv__am_owe(int rank, int delta, int done);
/* A one-sided operation to @a rank starts (+1) or stops (-1) waiting for
 * the transport to take it (a resource it may share among peers). */
void        gv__am_room(int rank, int delta);
/* Print the stats line (GV_STATS). */
void        gv__am_stats_print(void);
/* Bytes the send queues to one destination may hold when the sender is
 * outside handlers (GV_AGG_CREDITS + 1 buffers). */
size_t      gv__am_memory_bound(void);
/* After the teams (gv_node_of): set up GV_AGG_ROUTE=node's or node2's
 * hops. */
void        gv__am_route_start(void);
/* A job's shape as a route sees it: rank i is on node node_of[i] of
 * nnodes (each with at least one rank); node k's ranks, in rank order,
 * are members[start[k] .. start[k + 1]). */
typedef struct {
    int        route; /* GV_AGG_ROUTE_NODE or _NODE2 */
    int        nnodes;
    int        cols;  /* node2: the grid's width, ceil(sqrt(nnodes)) */
    const int *node_of, *members, *start;
} gv__route_shape_t;
/* Fill @a members (one per rank) and @a start (nnodes + 1) from
 * @a node_of, and @a sh with them. */
void        gv__am_route_shape(gv__route_shape_t *sh, int route,
                               const int *node_of, int nnodes, int size,
                               int *members, int *start);
/* The rank to which @a rank hands a message for @a dst (!= @a rank) under
 * @a sh's route: @a dst itself on the same node, else the next relay; never
 * @a rank. A function of (@a rank, @a dst) only: a pair's messages always
 * take the same hops. */
int         gv__am_route_hop(const gv__route_shape_t *sh, int rank, int dst);
/* Ranks that @a rank may hold aggregation buffers to under route @a route
 * (GV_AGG_ROUTE_DIRECT, _NODE or _NODE2), in a job of @a size ranks where
 * rank i is on node node_of[i] of @a nnodes (each with at least one
 * rank). */
int         gv__am_route_peers(int route, const int *node_of, int nnodes,
                               int size, int rank);
/* Under route @a route (as for gv__am_route_peers): the upstream links of
 * @a rank, the (rank u, position p) pairs such that some way hands @a rank
 * from u, as its p-th hop (p from 0 at the way's source), an envelope
 * that @a rank forwards rather than handles; each has its own credit
 * window. 0 under direct, and for a rank that forwards nothing. */
int         gv__am_route_upstreams(int route, const int *node_of, int nnodes,
                                   int size, int rank);
/* Envelope bytes a rank may have charged at one hop and not returned, in
 * aggregation buffers (GV_AGG_BYTES): what a relay may stash per upstream
 * link. */
#define GV__AM_ROUTE_WINDOW_BATCHES 2
/* This rank's bound on its aggregation buffers, all destinations: its
 * route's peers times gv__am_memory_bound(), plus the window
 * (GV__AM_ROUTE_WINDOW_BATCHES buffers) per upstream link, which a relay
 * may hold in its stash. */
size_t      gv__am_route_bound(void);

#endif
