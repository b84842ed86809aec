/** @file
 * Grapevine distributed shared memory: global addresses, the global heap,
 * delegate operations, global completion events, collectives for workers
 * and loops over global memory. SPDX-License-Identifier: BSD-3-Clause
 *
 * Threads: as tasking (grapevine/task.h): from the rank's thread, from
 * workers and the main flow; from a handler only where noted. Needs
 * gv_init (or gv_init_opts with GV_LAYERS_ALL).
 *
 * Model (Grappa ATC'15, section 3.1). Every byte of global memory has a
 * home rank. It is read, written and updated only by *delegate operations*
 * that run at the home, one at a time on the home's single thread, so each
 * one is atomic without locks and all of them on one word are linearizable.
 * A worker that issues a blocking delegate is suspended until the reply
 * comes back (other workers run meanwhile); a worker has at most one
 * blocking delegate in flight, so a data-race-free program sees sequential
 * consistency. Asynchronous forms return at once and are counted in a
 * global completion event (gv_gce_t), or fulfil a future (reads).
 *
 * Addresses. A gv_gaddr_t is 64 bits in one of three forms:
 *
 *   63 62 61                       40 39                               0
 *   +-+---------------------------------------------------------------+
 *   |1|        global byte offset into the linear global heap         |  linear
 *   +-+-+-----------------------------+-------------------------------+
 *   |0|1|        rank (22 bits)       |  byte offset in the heap (40)  |  2D heap
 *   +-+-+-------------------+---------+-------------------------------+
 *   |0|0|  rank (14 bits)   |   address in that rank's memory (48)     |  2D pointer
 *   +-+-+-------------------+-----------------------------------------+
 *
 * Linear addresses walk the global heap, which is striped block-cyclically
 * over the ranks: block b (GV_BLOCK bytes, default 64) lives on rank
 * b mod P, so p + i for i = 0, 1, 2, ... visits rank 0's block, then rank
 * 1's, and so on: a distributed array. 2D addresses name (rank, object):
 * the heap form names memory of the symmetric allocations (the same offset
 * on every rank); the pointer form names memory a worker exported from its
 * stack or its heap with gv_export(). Adding n to any address moves n
 * bytes: gv_gaddr_add(). GV_GADDR_NULL (0) is no address.
 *
 * Safety. Every delegate is checked at the home against the allocations
 * (and exports) it knows: an address outside all of them is an error that
 * names the address, logged at the home; blocking forms return
 * GV_ERR_INVALID, asynchronous ones make gv_gce_wait() return it.
 *
 * GV_AMO=native: fetch-and-add, add, compare-and-swap and 8-byte reads and
 * writes of heap words (linear and 2D heap addresses, 8-byte aligned) use
 * the transport's own one-sided operations instead of messages; the
 * allocation check is then made at the caller (every rank holds the table
 * of allocations). Selecting it on a transport without remote atomics (tcp)
 * is an error naming GV_AMO and the transport. Do not mix native atomics
 * with delegate calls (gv_delegate_call) on the same words.
 *
 * Everything here is called from workers, or from the program's main flow
 * (which then progresses while it waits); never from an active-message
 * handler, except where noted.
 */
#ifndef GRAPEVINE_DSM_H
#define GRAPEVINE_DSM_H

#include <grapevine/core.h>
#include <grapevine/task.h>
#include <grapevine/team.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Global addresses                                                          */

/** A global address (see the layout above). */
typedef uint64_t gv_gaddr_t;

/** The null global address (no allocation has it). */
#define GV_GADDR_NULL ((gv_gaddr_t)0)

/** @return non-zero if @a a is a linear (block-cyclic heap) address. */
static inline int gv_gaddr_is_linear(gv_gaddr_t a)
{
    return (int)(a >> 63);
}

/** @a a moved by @a bytes (may be negative). Linear addresses walk blocks
 *  across ranks; 2D addresses stay on their rank. */
static inline gv_gaddr_t gv_gaddr_add(gv_gaddr_t a, int64_t bytes)
{
    return a + (uint64_t)bytes;
}

/** Home rank of the byte at @a a (-1 for an address of no rank). */
int gv_gaddr_rank(gv_gaddr_t a);

/**
 * Local pointer to the byte at @a a if its home is the calling rank, else
 * NULL. No allocation check: direct access is for the home's own code
 * (Grappa's "local memory addressing").
 */
void *gv_gaddr_local(gv_gaddr_t a);

/** The same symmetric object on rank @a rank: a 2D heap address with its
 *  rank replaced. @return GV_GADDR_NULL if @a a is not a 2D heap address. */
gv_gaddr_t gv_gaddr_on(gv_gaddr_t a, int rank);

/** Write a readable form of @a a ("lin:0x40", "heap:1:0x1000",
 *  "ptr:0:0x7ffc...") into @a buf. @return @a buf. */
char *gv_gaddr_str(gv_gaddr_t a, char *buf, size_t len);

/**
 * Export @a len bytes at @a ptr (this rank's stack or heap) to the global
 * address space, so that delegates from other ranks may reach them.
 * @param [out] addr_p  a 2D pointer address of @a ptr on this rank.
 * @return GV_OK, GV_ERR_INVALID (NULL, zero length, overlaps an export).
 */
gv_status_t gv_export(void *ptr, size_t len, gv_gaddr_t *addr_p);

/** Withdraw an export (before its memory goes away). @return GV_OK or
 *  GV_ERR_NOT_FOUND. */
gv_status_t gv_unexport(gv_gaddr_t addr);

/* ------------------------------------------------------------------------ */
/* The global heap                                                           */

/**
 * Allocate @a len bytes of the linear global heap: a contiguous range of
 * blocks, striped block-cyclically over the ranks. Not collective: any
 * rank may allocate, any time (rank 0 keeps the free list; every rank
 * learns the allocation before this returns). Blocks while it waits.
 * @param [out] addr_p  linear address of the first byte (block-aligned).
 * @return GV_OK; GV_ERR_INVALID (@a len 0); GV_ERR_NO_MEMORY (the global
 *         heap, GV_HEAP bytes per rank, is exhausted: the error says so).
 */
gv_status_t gv_global_alloc(size_t len, gv_gaddr_t *addr_p);

/**
 * Symmetric allocation: @a len bytes on every rank at the same heap offset
 * (per-rank proxies of a global object). Not collective either.
 * @param [out] addr_p  2D heap address of the calling rank's copy; the
 *                      copy on rank r is gv_gaddr_on(*addr_p, r).
 * @return as gv_global_alloc().
 */
gv_status_t gv_global_alloc_symmetric(size_t len, gv_gaddr_t *addr_p);

/**
 * Free what gv_global_alloc() or gv_global_alloc_symmetric() returned
 * (any rank may free it; no delegate may use it afterwards).
 * @return GV_OK, GV_ERR_INVALID (not the start of a live allocation: the
 *         error names the address).
 */
gv_status_t gv_global_free(gv_gaddr_t addr);

/** Size of one block of the linear heap (GV_BLOCK). */
size_t gv_global_block_size(void);

/* ------------------------------------------------------------------------ */
/* Global completion events (Grappa's GlobalCompletionEvent)                */

/**
 * A global completion event: operations enroll in it on any rank and
 * complete on any rank; gv_gce_wait() returns once everything enrolled
 * anywhere has completed. A plain value: copy it into task arguments or
 * messages freely; it names the same event on every rank.
 */
typedef struct gv_gce {
    uint32_t id; /**< the event's number, the same on every rank */
} gv_gce_t;

/** The job's default event: asynchronous delegates given a NULL event and
 *  the loops of gv_forall() enroll in it. */
gv_gce_t *gv_gce_default(void);

/** Make a new event (not collective). @return GV_OK, GV_ERR_NO_RESOURCE
 *  (65535 live events on this rank). */
gv_status_t gv_gce_create(gv_gce_t *gce);

/** Release an event once no operation is enrolled in it (after a wait). */
void gv_gce_destroy(gv_gce_t *gce);

/** Enroll @a n operations (counted on this rank). NULL: the default. */
void gv_gce_enroll(gv_gce_t *gce, int64_t n);

/** @a n enrolled operations completed (on this rank, whichever rank
 *  enrolled them). May be called from a handler. */
void gv_gce_complete(gv_gce_t *gce, int64_t n);

/**
 * Wait until every operation enrolled in @a gce, on any rank, has
 * completed (termination detection by counting waves; see dsm/gce.c).
 * Several workers on several ranks may wait on one event.
 * @return GV_OK, or GV_ERR_INVALID if some enrolled asynchronous delegate
 *         failed (its home logged why) since the event was created.
 */
gv_status_t gv_gce_wait(gv_gce_t *gce);

/** Most argument bytes of a task spawned with gv_gce_spawn*(). */
#define GV_GCE_ARGS_MAX 40

/** Spawn a task enrolled in @a gce that may be stolen by any rank; it
 *  completes in @a gce when it returns. @return as gv_spawn(). */
gv_status_t gv_gce_spawn(gv_gce_t *gce, gv_task_fn_t fn, const void *args,
                         size_t len);

/** As gv_gce_spawn(), on rank @a rank. */
gv_status_t gv_gce_spawn_on(gv_gce_t *gce, int rank, gv_task_fn_t fn,
                            const void *args, size_t len);

/* ------------------------------------------------------------------------ */
/* Delegate operations                                                       */

/** Most bytes of arguments and of result of gv_delegate_call(). */
#define GV_DELEGATE_ARGS_MAX   64
/** Most bytes of result of gv_delegate_call(). */
#define GV_DELEGATE_RESULT_MAX 64
/** Most bytes one gv_delegate_read/write moves. */
#define GV_DELEGATE_DATA_MAX   4096

/**
 * A function run at the home of an address by gv_delegate_call(). It must
 * not block, yield or wait (it runs inside message handling), and should
 * touch only memory of that rank.
 * @param [in]  local   the local pointer of the address at its home.
 * @param [in]  args    the arguments (copied; no alignment promised).
 * @param [in]  len     their length.
 * @param [out] result  room for GV_DELEGATE_RESULT_MAX bytes.
 * @return bytes of result written (at most GV_DELEGATE_RESULT_MAX).
 */
typedef size_t (*gv_delegate_fn_t)(void *local, const void *args,
                                   size_t len, void *result);

/**
 * Blocking reads and writes of @a len bytes (at most GV_DELEGATE_DATA_MAX,
 * all in one block for a linear address, so that one home holds them).
 * @return GV_OK; GV_ERR_INVALID (address outside any allocation, or range
 *         crossing a block: logged with the address); what the transport
 *         returned.
 */
gv_status_t gv_delegate_read(gv_gaddr_t a, void *buf, size_t len);
/** The blocking write of @a len bytes of @a buf to @a a (as above). */
gv_status_t gv_delegate_write(gv_gaddr_t a, const void *buf, size_t len);

/** Blocking 64-bit fetch-and-add: *old_p = *a; *a += v. @a old_p may be
 *  NULL. The address must be 8-byte aligned. @return as above. */
gv_status_t gv_delegate_fetch_add(gv_gaddr_t a, int64_t v, int64_t *old_p);

/** Blocking 64-bit compare-and-swap: *old_p = *a; if it equals @a expected,
 *  *a = @a desired. Succeeded iff *old_p == expected. */
gv_status_t gv_delegate_cswap(gv_gaddr_t a, uint64_t expected,
                              uint64_t desired, uint64_t *old_p);

/**
 * Blocking call: run fn(local, args, len, result) at the home of @a a and
 * copy up to @a cap bytes of its result to @a result.
 * @param [out] res_len_p  bytes the function returned; may be NULL.
 * @return as above; GV_ERR_INVALID also if @a fn is not code of this
 *         program or @a len is too large.
 */
gv_status_t gv_delegate_call(gv_gaddr_t a, gv_delegate_fn_t fn,
                             const void *args, size_t len, void *result,
                             size_t cap, size_t *res_len_p);

/**
 * Asynchronous 64-bit add: *a += v at the home, some time later. Returns
 * at once; the operation is enrolled in @a gce (NULL: the default event),
 * whose wait covers it. Adds to one home are packed into few messages.
 * @return GV_OK, or GV_ERR_INVALID for an address of no rank or not
 *         8-byte aligned (a bad address at a remote home is reported by
 *         the home and by gv_gce_wait()).
 */
gv_status_t gv_delegate_add(gv_gaddr_t a, int64_t v, gv_gce_t *gce);

/** Asynchronous write of @a len bytes (copied at once), in @a gce. */
gv_status_t gv_delegate_write_async(gv_gaddr_t a, const void *buf,
                                    size_t len, gv_gce_t *gce);

/** Asynchronous call (result discarded), in @a gce. */
gv_status_t gv_delegate_call_async(gv_gaddr_t a, gv_delegate_fn_t fn,
                                   const void *args, size_t len,
                                   gv_gce_t *gce);

/**
 * Asynchronous read: returns at once; @a f (initialised here) is fulfilled
 * with the bytes, copied to @a buf, when they arrive. Wait with
 * gv_future_wait(f), which returns the status of the read. @a buf and @a f
 * must stay valid until then.
 */
gv_status_t gv_delegate_read_async(gv_gaddr_t a, void *buf, size_t len,
                                   gv_future_t *f);

/** Asynchronous fetch-and-add whose old value arrives in @a old_p through
 *  the future @a f. */
gv_status_t gv_delegate_fetch_add_async(gv_gaddr_t a, int64_t v,
                                        int64_t *old_p, gv_future_t *f);

/** Counters of this rank's delegate layer. */
typedef struct gv_dsm_stats {
    uint64_t ops_local;      /**< delegates short-circuited at home        */
    uint64_t ops_remote;     /**< delegates sent to another home           */
    uint64_t ops_native;     /**< delegates done with transport atomics    */
    uint64_t ops_served;     /**< delegates run here for other ranks       */
    uint64_t add_msgs;       /**< messages that carried packed adds        */
    uint64_t bad_addr;       /**< delegates refused: address out of range  */
    uint64_t rejected;       /**< malformed messages dropped               */
} gv_dsm_stats_t;

/** This rank's delegate counters into *@a stats_p. */
void gv_dsm_stats(gv_dsm_stats_t *stats_p);

/**
 * @return non-zero if this job runs with GV_AMO=native: delegates on heap
 * words use the transport's remote atomics, and gv_amo64() is available on
 * every rank. A framework that offers both forms of an update (aggregated
 * messages, or one remote atomic per word) follows this choice, so that
 * one variable switches a whole application. Valid after gv_init().
 */
int gv_dsm_amo_native(void);

/* ------------------------------------------------------------------------ */
/* Collectives for workers                                                   */

/* Every rank calls a collective, in the same order, from one worker (or
 * the main flow) at a time; the caller is suspended, not spinning. */

/* Element types and operations of gv_allreduce(): gv_dtype_t and
 * gv_redop_t, from grapevine/team.h. */

/** Synchronise every rank. Not a quiescence barrier: asynchronous
 *  delegates still in flight are the business of gv_gce_wait(). */
gv_status_t gv_coll_barrier(void);

/** Copy @a len bytes (at most 1 MiB) of rank @a root's @a buf into @a buf
 *  on every rank. */
gv_status_t gv_broadcast(int root, void *buf, size_t len);

/** Reduce @a count elements of @a buf over all ranks with @a op; every
 *  rank gets the result in @a buf (identical on all ranks). */
gv_status_t gv_allreduce(void *buf, size_t count, gv_dtype_t type,
                         gv_redop_t op);

/* ------------------------------------------------------------------------ */
/* Loops over global memory                                                  */

/** Most bytes of the argument block copied to every rank by gv_forall*. */
#define GV_FORALL_ARG_MAX 256

/** Body of gv_forall(): element @a i of the array, at @a elem (a local
 *  pointer: the body runs at the element's home). */
typedef void (*gv_forall_fn_t)(int64_t i, void *elem, void *arg);

/**
 * Run body(i, &element_i, arg) for every element of the global array of
 * @a n elements of @a elem_size bytes at @a base, each at the element's
 * home (localized): every rank runs a parallel loop over its own blocks.
 * Blocks until every iteration, and every asynchronous delegate the bodies
 * enrolled in @a gce, has completed. Elements must not straddle blocks:
 * @a elem_size divides GV_BLOCK and @a base is aligned to it.
 * @param [in] arg, arg_len  copied to every rank (at most
 *             GV_FORALL_ARG_MAX); the body gets a pointer to the copy.
 * @param [in] grain  elements per leaf task; 0 means GV_LOOP_GRAIN.
 * @param [in] gce    event the loop waits on; NULL: the default.
 * @return GV_OK, GV_ERR_INVALID (bad arguments, logged), GV_ERR_STATE
 *         (tasking not running), or what gv_gce_wait() returned.
 */
gv_status_t gv_forall(gv_gaddr_t base, int64_t n, size_t elem_size,
                      int64_t grain, gv_forall_fn_t body, const void *arg,
                      size_t arg_len, gv_gce_t *gce);

/** Body of gv_forall_index(). */
typedef void (*gv_index_fn_t)(int64_t i, void *arg);

/**
 * Run body(i, arg) for every i in [lo, hi) on all ranks: the range is cut
 * into P equal slices, rank r runs slice r as a parallel loop. Blocks as
 * gv_forall() does (and covers the asynchronous delegates in @a gce).
 */
gv_status_t gv_forall_index(int64_t lo, int64_t hi, int64_t grain,
                            gv_index_fn_t body, const void *arg,
                            size_t arg_len, gv_gce_t *gce);

#ifdef __cplusplus
}
#endif
#endif
