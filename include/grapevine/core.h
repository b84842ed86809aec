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
 * MPI), bind to a core, open the transport chosen by GV_TRANSPORT.
 * A bad GV_* value prints one message naming the variable, the value and
 * what is accepted, and exits the process with status 1.
 * @param [in,out] argc_p, argv_p  may be NULL; reserved for launchers.
 * @return GV_OK, or an error already logged (the job cannot continue).
 */
gv_status_t gv_init(int *argc_p, char ***argv_p);

/** Quiesce (a barrier), close the transport, print GV_STATS. */
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

/**
 * A progress hook: work a library owes at every poll, such as applying
 * what its handlers queued so that they could overlap its memory misses.
 * Runs at the end of every gv_progress() (and of every poll of a wait),
 * after the handlers of what arrived, outside any handler, with the
 * @a arg it was added with. It may send messages and call gv_progress()
 * (a hook then runs nested in itself: make it safe for that), but must
 * not wait for a reply or block. @return the number of events it handled
 * (0 when it had nothing to do), which gv_progress() adds to its count.
 */
typedef unsigned (*gv_progress_hook_fn_t)(void *arg);

/** Most progress hooks at a time (the runtime's own included). */
#define GV_PROGRESS_HOOKS_MAX 16

/**
 * Run @a fn(@a arg) at every poll from now until gv_progress_hook_remove()
 * or gv_finalize() (which removes every hook). Adding a pair (fn, arg)
 * that is already there adds nothing. Not from inside a hook.
 * @return GV_OK; GV_ERR_INVALID (@a fn NULL); GV_ERR_NO_RESOURCE
 *         (GV_PROGRESS_HOOKS_MAX hooks already).
 */
gv_status_t gv_progress_hook_add(gv_progress_hook_fn_t fn, void *arg);

/** Stop running the hook (@a fn, @a arg). Not from inside a hook.
 *  @return GV_OK, or GV_ERR_NOT_FOUND if it was not added. */
gv_status_t gv_progress_hook_remove(gv_progress_hook_fn_t fn, void *arg);

/** Progress until @a done(arg) returns non-zero. Polls for GV_SPIN_US,
 *  then yields the core or blocks in the transport between polls. */
void gv_wait(int (*done)(void *arg), void *arg);

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
