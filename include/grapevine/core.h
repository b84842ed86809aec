/* Grapevine core API: status codes, init/finalize, rank queries, progress.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GRAPEVINE_CORE_H
#define GRAPEVINE_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: 0 is success, 1 is "in progress", negatives are errors. */
#define GV_STATUS_MAP(XX)                                                    \
    XX(OK,               0,  "success")                                      \
    XX(INPROGRESS,       1,  "operation in progress")                        \
    XX(ERR_NO_RESOURCE, -2,  "out of resources, retry after progress")       \
    XX(ERR_NO_MEMORY,   -4,  "out of memory")                                \
    XX(ERR_INVALID,     -5,  "invalid argument")                             \
    XX(ERR_UNREACHABLE, -6,  "peer unreachable")                             \
    XX(ERR_IO,          -7,  "input/output error")                           \
    XX(ERR_PROTO,       -8,  "protocol error: malformed data from a peer")   \
    XX(ERR_TIMEOUT,     -9,  "timed out")                                    \
    XX(ERR_CANCELED,    -10, "operation canceled")                           \
    XX(ERR_NOT_FOUND,   -11, "not found")                                    \
    XX(ERR_STATE,       -12, "called in the wrong state")                    \
    XX(ERR_UNSUPPORTED, -22, "not supported by this transport")

#define GV__STATUS_ENUM(_name, _val, _msg) GV_##_name = _val,
typedef enum { GV_STATUS_MAP(GV__STATUS_ENUM) } gv_status_t;
#undef GV__STATUS_ENUM

/** @return a static English description of @a status ("success", ...). */
const char *gv_status_str(gv_status_t status);
/** @return the status' symbolic name without the prefix ("ERR_INVALID"). */
const char *gv_status_name(gv_status_t status);

/**
 * Start the runtime: read the GV_* variables, bootstrap (gvrun, PMIx or
 * MPI), bind to a core (GV_BIND), open the transport chosen by
 * GV_TRANSPORT, and start every layer (messages, the one-sided heap,
 * tasking, the DSM) at thread level GV_THREAD_SINGLE. A bad GV_* value
 * prints one message naming the variable, the value and what is accepted,
 * and exits the process with status 1. gv_init_opts() is the form for a
 * program embedding Grapevine.
 * @param [in,out] argc_p, argv_p  may be NULL; reserved for launchers.
 * @return GV_OK, or an error already logged (the job cannot continue).
 * Thread safety of the whole API: see gv_thread_level_t.
 */
gv_status_t gv_init(int *argc_p, char ***argv_p);

/**
 * Thread levels, with MPI's meanings. The level only says which threads
 * may call; Grapevine takes no lock of its own on any path.
 *  - SINGLE: the process has one thread that calls Grapevine (others may
 *    exist only if they never call it). What gv_init() asks for.
 *  - FUNNELED: other threads exist (a host's pool), but only the thread
 *    that called gv_init_opts() calls Grapevine.
 *  - SERIALIZED: any thread may call, one at a time: the host holds its
 *    own lock around every call (and across a gv_wait(), which runs
 *    handlers) so that no two calls overlap; the lock's acquire and release
 *    order the state between threads. Handlers run on the thread that
 *    called the progressing function, with that lock held.
 *  - MULTIPLE (concurrent calls from many threads) is not offered:
 *    gv_init_opts() refuses it with GV_ERR_UNSUPPORTED.
 * At every level: handlers may send (gv_am_send and its forms, never a
 * wait, gv_barrier, a blocking collective or gv_finalize); user-level
 * workers (grapevine/task.h) run on the thread that runs gv_run_all() and
 * may call everything a plain program may; the few calls safe from any
 * thread at any time, without the host's lock, are gv_rank(),
 * gv_nranks(), gv_time_ns(), gv_wtime(), gv_status_str() and
 * gv_last_error() (which is per thread).
 */
typedef enum {
    GV_THREAD_SINGLE     = 0,
    GV_THREAD_FUNNELED   = 1,
    GV_THREAD_SERIALIZED = 2,
    GV_THREAD_MULTIPLE   = 3  /**< not offered: refused */
} gv_thread_level_t;

/** Which layers gv_init_opts() starts; each includes those before it. */
typedef enum {
    GV_LAYERS_MESSAGES = 1, /**< active messages, barrier, teams and
                                 collectives (grapevine/am.h, team.h) */
    GV_LAYERS_HEAP     = 2, /**< plus the symmetric heap and one-sided
                                 operations (grapevine/rma.h) */
    GV_LAYERS_ALL      = 3  /**< plus tasking and the DSM (task.h, dsm.h):
                                 what gv_init() starts */
} gv_layers_t;

/** Binding of the process to a core, for gv_init_opts(). */
typedef enum {
    GV_INIT_BIND_NONE = 0,  /**< leave the affinity alone (the default: the
                                 host's threads keep every CPU it had) */
    GV_INIT_BIND_ENV  = 1   /**< as GV_BIND says (gv_init()'s behaviour) */
} gv_init_bind_t;

/** Options of gv_init_opts(). Fill with gv_init_opts_default() first, so
 *  that a field added later gets its default. */
typedef struct gv_init_opts {
    gv_layers_t       layers;        /**< default GV_LAYERS_MESSAGES */
    gv_init_bind_t    bind;          /**< default GV_INIT_BIND_NONE */
    gv_thread_level_t thread_level;  /**< default GV_THREAD_FUNNELED */
    int               errors_fatal;  /**< non-zero: an init error exits the
                                          process with status 1 after its
                                          message (as gv_init()); default 0:
                                          it is returned, gv_last_error()
                                          holds the message */
} gv_init_opts_t;

/** The defaults of an embedded start (see the fields). */
void gv_init_opts_default(gv_init_opts_t *opts);

/**
 * Start the runtime as gv_init() does, with @a opts choosing the layers,
 * the binding, the thread level and what happens on error. With
 * errors_fatal 0, every configuration error (a bad GV_* value, an unknown
 * transport, a transport that cannot start, a bad option) returns a status
 * and leaves the process as it was, with the message in gv_last_error();
 * a fatal condition deeper down (out of memory) still stops the job.
 * Call it from the thread that will call Grapevine (FUNNELED), or under the
 * host's lock (SERIALIZED).
 * gv_finalize() leaves the process able to call gv_init_opts() or gv_init()
 * again, within the same launcher job: every rank finalizes and starts
 * again, together. Under gvrun and singleton starts this works over every
 * transport but mpi; under an MPI launcher (GV_TRANSPORT=mpi, or PMIx
 * bootstrap) it fails with GV_ERR_UNSUPPORTED, because MPI and PMIx can
 * be initialized once per process.
 * @return GV_OK; GV_ERR_INVALID (a bad option or GV_* value);
 *         GV_ERR_NOT_FOUND (GV_TRANSPORT names no built transport);
 *         GV_ERR_UNSUPPORTED (GV_THREAD_MULTIPLE, or a re-init the
 *         bootstrap cannot do); GV_ERR_STATE (already started); or the
 *         bootstrap's or transport's error.
 */
gv_status_t gv_init_opts(const gv_init_opts_t *opts);

/** The thread level the runtime was started with (SINGLE before init). */
gv_thread_level_t gv_thread_level(void);

/** The last error message logged on the calling thread ("" if none): what
 *  a failed call returned a status for, naming what was wrong. */
const char *gv_last_error(void);

/**
 * A peer was declared failed (its connection broke, it stopped taking
 * messages for GV_TIMEOUT_S, it sent malformed data). Installed with
 * gv_on_peer_failure(); runs from inside a progressing call (as a handler
 * does, with the same rules: it may send, not wait), once per failed rank.
 * @a reason is borrowed for the call.
 */
typedef void (*gv_peer_failure_fn_t)(int rank, const char *reason,
                                     void *arg);

/**
 * Install @a fn (NULL: remove it) to be called when a peer fails, instead
 * of stopping the job (the default without a callback). From then on, a
 * send, one-sided operation or flush to that rank returns
 * GV_ERR_UNREACHABLE; messages queued to it are dropped; what waited on it
 * (a gv_am_wait_local(), a one-sided completion) completes with the error.
 * Collectives that include the rank cannot complete: gv_barrier() and
 * team collectives stop the job instead of waiting forever, naming it.
 * gv_finalize() after a failure tears this rank down without the final
 * barriers. Under gvrun, pass --keep-going so that a rank's death does not
 * stop the others. Call after gv_init; it stays installed until
 * gv_finalize.
 * @return GV_OK, or GV_ERR_STATE outside gv_init..gv_finalize.
 */
gv_status_t gv_on_peer_failure(gv_peer_failure_fn_t fn, void *arg);

/** Whether @a rank was declared failed (see gv_on_peer_failure()). */
int gv_peer_failed(int rank);

/** Quiesce (a barrier), stop the layers, close the transport, print
 *  GV_STATS. Collective (after a peer failed: local, see
 *  gv_on_peer_failure()). The process may call gv_init() or
 *  gv_init_opts() again afterwards (see gv_init_opts()). */
void gv_finalize(void);

/** Rank of this process in the job, 0..gv_nranks()-1. */
int gv_rank(void);
/** Number of ranks in the job. */
int gv_nranks(void);
/** Name of the transport in use ("tcp", "shm", ...). */
const char *gv_transport_name(void);

/** Stop the whole job: print the message with this rank's prefix, tell the
 *  launcher, and exit with @a code (1 if 0 is given). Never returns. */
void gv_abort(int code, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

/** Make communication progress: deliver arrived messages, complete sends,
 *  ship aged buffers. Never blocks. @return number of events handled. */
unsigned gv_progress(void);

/** Progress until @a done(arg) returns non-zero. Polls for GV_SPIN_US,
 *  then yields the core or blocks in the transport between polls. */
void gv_wait(int (*done)(void *arg), void *arg);

/**
 * A file descriptor to sleep on in the host's own event loop (epoll, poll,
 * select): it becomes readable when this rank may have work: a message
 * arrived, a send that waited for the transport can go on, a peer failed.
 * Valid from gv_init until gv_finalize; the same descriptor every call.
 * Never read it or write it; only wait for it to become readable, and
 * always arm with gv_wait_arm() before sleeping:
 *
 *     for (;;) {
 *         while (gv_progress() > 0) ;               // drain
 *         if (gv_wait_arm() == GV_OK)               // nothing pending
 *             epoll_wait(host_ep, ev, n, timeout);  // gv_wait_fd() in it
 *     }
 *
 * An event that lands after gv_wait_arm() returned GV_OK makes the fd
 * readable (level-triggered) until the next gv_wait_arm() or progress;
 * spurious wake-ups can happen. Needs a transport with GV_TL_CAP_WAIT_FD
 * (gvinfo -t): tcp, shm, ucx, and ofi providers with an fd wait object.
 * Thread: the thread that calls Grapevine (see gv_thread_level_t); the
 * host may wait on the fd in any thread.
 * @param [out] fd_p  the descriptor.
 * @return GV_OK; GV_ERR_UNSUPPORTED (the transport cannot wake an fd:
 *         mpi, ofi without a wait object; poll with gv_progress() then);
 *         GV_ERR_STATE outside gv_init..gv_finalize.
 */
gv_status_t gv_wait_fd(int *fd_p);

/**
 * Arm gv_wait_fd() before sleeping on it (the race-free protocol of
 * fi_trywait() and ucp_worker_arm()). Ships every buffered message first
 * (the rank is about to idle).
 * @return GV_OK: nothing is pending, sleep until the fd is readable;
 *         GV_INPROGRESS: work is pending (arrived messages, buffered sends
 *         that could not go yet): call gv_progress() and try again;
 *         GV_ERR_UNSUPPORTED / GV_ERR_STATE as for gv_wait_fd().
 */
gv_status_t gv_wait_arm(void);

/** Monotonic clock in nanoseconds and seconds. */
uint64_t gv_time_ns(void);
double gv_wtime(void);

/* ---- Functions on the wire ----------------------------------------------- */

/**
 * A function of this program as it travels between ranks: address-space
 * randomisation loads the same binary at different addresses on every
 * rank, so a code address travels as (loaded object, offset). What the
 * tasking layer does for spawned tasks and the DSM layer for delegate
 * calls, for layers above that ship functions in their own messages.
 */
typedef struct gv_fnref {
    uint32_t mod;  /**< index of the loaded object              */
    uint32_t pad;  /**< zero                                      */
    uint64_t off;  /**< address minus the object's load address   */
} gv_fnref_t;

/** Encode @a fn. @return GV_OK, or GV_ERR_INVALID (logged) if @a fn is not
 *  in the code of a loaded object. */
gv_status_t gv_fn_encode(const void *fn, gv_fnref_t *ref_p);

/** The local address of @a ref (which may come from the wire, untrusted),
 *  or NULL if it does not name code of a loaded object here. */
void *gv_fn_decode(const gv_fnref_t *ref);

#ifdef __cplusplus
}
#endif
#endif
