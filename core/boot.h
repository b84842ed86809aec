/* Bootstrap: who am I, how many are we, and a slow out-of-band channel for
 * address exchange. Transports read it; they never talk to the launcher.
 * Implementations: boot_gvrun.c (gvrun), boot_pmix.c (mpirun/srun),
 * boot_mpi.c (the mpi transport), boot_single.c (one rank, no launcher).
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_CORE_BOOT_H
#define GV_CORE_BOOT_H

#include <grapevine/core.h>

#include <unistd.h>

typedef struct gv_boot gv_boot_t;

#define GV_JOB_KEY_LEN 16 /* 128 bits from the kernel's random source */

typedef struct gv_boot_ops {
    const char *name;
    /* Mandatory. Every rank contributes @a len bytes (the same len on every
     * rank); on return @a all holds size * len bytes, rank i's at i * len.
     * Collective and blocking; fails if the launcher or a rank is gone. */
    gv_status_t (*allgather)(gv_boot_t *boot, const void *mine, size_t len,
                             void *all);
    /* Mandatory. Collective. */
    gv_status_t (*barrier)(gv_boot_t *boot);
    /* Mandatory. Tell the launcher this rank is stopping the job with
     * @a code and @a msg; returns (the caller exits). Async-signal unsafe. */
    void        (*abort)(gv_boot_t *boot, int code, const char *msg);
    /* Mandatory. Called by gv_finalize after the transport is closed. */
    void        (*fini)(gv_boot_t *boot);
} gv_boot_ops_t;

struct gv_boot {
    const gv_boot_ops_t *ops;
    void                *ctx;         /* the implementation's */
    int                  rank, size;
    /* Filled by the core after init, from an allgather of host names. */
    int                  local_rank;  /* index among ranks on this node */
    int                  local_size;  /* ranks on this node */
    int                 *node_of;     /* size entries: node index per rank */
    int                  nnodes;
    /* 128-bit secret every transport connection must present first; the
     * same on every rank of the job, different for every job. */
    uint8_t              key[GV_JOB_KEY_LEN];
    /* Job id, unique on this machine while the job runs; names shared
     * memory objects ("/gv-<job_id>-..."). */
    uint64_t             job_id;
    /* A view (gv__boot_node_view): its rank i is rank world_of[i] of the
     * whole job, which names shared-memory objects and failed peers.
     * NULL: the job's own bootstrap. */
    const int           *world_of;
};

/* Whether this node runs more of the job's ranks than it has cores: then
 * a rank that polls takes the core a peer needs, and waiting must give it
 * away soon. */
static inline int gv__boot_oversubscribed(const gv_boot_t *boot)
{
    return boot->local_size > sysconf(_SC_NPROCESSORS_ONLN);
}

/* Pick and start the bootstrap: gvrun if GV_BOOT_FD is set, else MPI if
 * the transport is mpi, else PMIx if its server is reachable (PMIX_RANK or
 * PMIX_NAMESPACE set), else a single rank.
 * @param [out] boot_p  released with gv__boot_fini(). */
gv_status_t gv__boot_init(const char *transport, gv_boot_t **boot_p);
void        gv__boot_fini(gv_boot_t *boot);

/* Implementations; each returns GV_ERR_NOT_FOUND when its launcher is not
 * around, so that the next one is tried. */
gv_status_t gv__boot_gvrun_init(gv_boot_t *boot);
gv_status_t gv__boot_single_init(gv_boot_t *boot);
#if GV_HAVE_PMIX
gv_status_t gv__boot_pmix_init(gv_boot_t *boot);
#endif
#if GV_HAVE_MPI
gv_status_t gv__boot_mpi_init(gv_boot_t *boot);
#endif

/* The node of every rank, as the layers above (gv_node_of, gv_team_node,
 * GV_AGG_ROUTE) and the composite transports shm+<net> see it, into
 * @a node_of (boot->size entries), and their number in *nnodes_p.
 * GV_TEST_NODES=k > 0, for tests and benchmarks only: k pretend nodes of
 * contiguous rank blocks (rank i in node i * k / size; at most one node per
 * rank, with a warning from rank 0 once when k is larger), so that several
 * nodes are simulated on one machine; otherwise the real nodes
 * (boot->node_of, all 0 where there is no map). */
void gv__nodes_map(const gv_boot_t *boot, int *node_of, int *nnodes_p);

/* A bootstrap over the ranks of this rank's node alone (node_of as from
 * gv__nodes_map), for a transport opened within a node: rank and size are
 * the index among them and their number, local_rank/local_size the same,
 * one node; key and job id are the parent's; world_of maps back.
 * Collective over the whole job: every rank opens its view, uses it in
 * its own node only, then calls gv__boot_view_leave(), which takes part in
 * the other nodes' remaining collectives until every rank has left.
 *   allgather: two allgathers of the parent over every rank (the length,
 *     then the data at the longest length of the ranks still in), of which
 *     the node's entries are kept; fails if a rank of the node left or
 *     contributes another length, so that a failure on one node can never
 *     leave the parent's collectives mismatched.
 *   barrier, abort: the parent's (a barrier is over the whole job).
 * @param [out] view_p  freed by gv__boot_view_free(). */
gv_status_t gv__boot_node_view(gv_boot_t *parent, const int *node_of,
                               gv_boot_t **view_p);
/* Leave the view (see gv__boot_node_view): its allgathers fail from then
 * on. Collective. GV_OK, or the parent's error. */
gv_status_t gv__boot_view_leave(gv_boot_t *view);
void        gv__boot_view_free(gv_boot_t *view);

static inline gv_status_t gv__boot_allgather(gv_boot_t *b, const void *mine,
                                             size_t len, void *all)
{
    return b->ops->allgather(b, mine, len, all);
}
static inline gv_status_t gv__boot_barrier(gv_boot_t *b)
{
    return b->ops->barrier(b);
}

#endif
