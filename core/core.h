/* Internal core API shared by every layer: the rank's context, memory,
 * time, job abort and the registry of progress callbacks.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_CORE_CORE_H
#define GV_CORE_CORE_H

#include <grapevine/core.h>
#include "core/log.h"
#include "core/env.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct gv_boot;
struct gv_tl;

/* Everything a rank knows about its job. One per process. */
typedef struct gv_core {
    int             initialized;
    int             finalizing;   /* past the final barrier: EOFs are benign */
    int             rank, size;
    struct gv_boot *boot;
    struct gv_tl   *tl;
    const char     *tl_name;      /* the open transport's, or NULL */
    int             thread_level; /* gv_thread_level_t */
    int             layers;       /* gv_layers_t started */
    /* Peer failure with a callback installed (gv_on_peer_failure):
     * failed[r] is set once rank r is declared failed; nfailed counts
     * them, failed_owed the callbacks not run yet (progress runs them). */
    uint8_t        *failed;
    int             nfailed;
    int             failed_owed;
} gv_core_t;

extern gv_core_t gv__ctx;

/* Stop the whole job with @a code and a one-line reason: tells the
 * launcher (which stops the other ranks) and exits. Never returns. */
void gv__job_abort(int code, const char *msg) __attribute__((noreturn));

/* A peer failed (closed, reset, unreachable): log one line naming it and
 * stop the job. Transports call this; after the final barrier it is a
 * no-op that returns 0, and the transport just drops the peer. With a
 * callback installed (gv_on_peer_failure) it marks the rank failed, tells
 * the layer above (gv__peer_failed_hook: the AM layer drops what it
 * queued to it), owes the host's callback to the next progress, and
 * returns 0: the transport drops the peer and from then on answers
 * GV_ERR_UNREACHABLE for it. */
int gv__peer_failed(int rank, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Set by the AM layer: forget what is queued to a failed rank. */
extern void (*gv__peer_failed_hook)(int rank);
/* Run the host's callbacks owed (from progress, when failed_owed). */
void gv__peer_failures_run(void);
/* Whether rank @a r was declared failed (a callback is installed). */
static inline int gv__is_failed(int r)
{
    return (gv__ctx.failed != NULL) && gv__ctx.failed[r];
}
/* Liveness of the peers on this node (core/liveness.c): pidfds, one
 * bootstrap exchange of pids at init. gv__live_fd is an epoll fd over
 * them (-1: none); gv__live_check declares failed (gv__peer_failed) every
 * local peer whose process exited. */
void gv__live_init(struct gv_boot *boot);
void gv__live_fini(void);
int  gv__live_fd(void);
void gv__live_check(void);
/* Allocate and free the failure table (gv_init, gv_finalize). */
void gv__failures_init(int size);
void gv__failures_fini(void);

/* Memory: gv_malloc aborts with a message on failure, callers don't check. */
void *gv__malloc(size_t len, const char *what);
void *gv__calloc(size_t n, size_t len, const char *what);
void *gv__realloc(void *p, size_t len, const char *what);
/* @a len bytes starting on a multiple of @a align (a power of two); freed
 * with gv_free. */
void *gv__malloc_aligned(size_t align, size_t len, const char *what);
#define gv_malloc(_len)           gv__malloc(_len, __func__)
#define gv_malloc_aligned(_a, _len) gv__malloc_aligned(_a, _len, __func__)
#define gv_calloc(_n, _len)       gv__calloc(_n, _len, __func__)
#define gv_realloc(_p, _len)      gv__realloc(_p, _len, __func__)
#define gv_malloc_allowfail(_len) malloc(_len)
#define gv_free(_p)               free(_p)

/* memcpy() for the few bytes of a request or reply on the latency path:
 * up to 16 bytes in at most two pairs of overlapping moves, inline, where
 * a variable-length memcpy() is a call into libc. */
static inline void gv__copy_small(void *dst, const void *src, size_t len)
{
    uint8_t       *d = dst;
    const uint8_t *s = src;
    uint64_t       a, b;
    uint32_t       c, e;

    if ((len >= 8) && (len <= 16)) {
        memcpy(&a, s, 8);
        memcpy(&b, s + len - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + len - 8, &b, 8);
    } else if ((len >= 4) && (len < 8)) {
        memcpy(&c, s, 4);
        memcpy(&e, s + len - 4, 4);
        memcpy(d, &c, 4);
        memcpy(d + len - 4, &e, 4);
    } else if (len != 0) {
        memcpy(d, s, len);
    }
}

static inline uint64_t gv__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* GV_TIMEOUT_S in nanoseconds: how long anything may wait on a peer. */
static inline uint64_t gv__timeout_ns(void)
{
    return gv__env.TIMEOUT_S * 1000000000ull;
}

/* Why transport @a _tl did not start: an error when GV_TRANSPORT names
 * it (the user asked for it, and the registry's one-line failure then has
 * its reason beside it), info otherwise (auto goes on to the next one). */
#define gv__tl_why(_tl, _fmt, ...)                                           \
    gv_log((strcmp(gv__env.TRANSPORT, (_tl)) == 0) ? GV_LOG_ERROR            \
                                                   : GV_LOG_INFO,            \
           _fmt, ##__VA_ARGS__)

/* A watchdog counts only time spent polling: a gap this long between two
 * of its looks (the rank computed, or was stopped) starts its clocks
 * again, since completions could not have been seen meanwhile. */
#define GV__WATCH_GAP_NS 1000000000ull

#if defined(__x86_64__) || defined(__i386__)
#define gv__cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define gv__cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define gv__cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

/* The registry of progress callbacks (core/hooks.c): work a layer above
 * owes every poll (the DSM's batched delegate adds, dsm/delegate.c), and
 * the hooks users add with gv_progress_hook_add(). The progress engine
 * (aggregator/progress.c) runs them after the transport's progress and the
 * AM layer's; each returns the number of events it handled. Cleared at
 * finalize. */
typedef struct {
    int                   n;
    gv_progress_hook_fn_t fn[GV_PROGRESS_HOOKS_MAX];
    void                 *arg[GV_PROGRESS_HOOKS_MAX];
} gv__progress_hooks_t;
extern gv__progress_hooks_t gv__progress_hooks;
void gv__progress_hook_add(gv_progress_hook_fn_t fn);
void gv__progress_hooks_clear(void);

/* Run every registered callback: inline in the progress engine's poll. */
static inline unsigned gv__progress_hooks_run(void)
{
    unsigned n = 0;
    int      i;

    for (i = 0; i < gv__progress_hooks.n; i++)
        n += gv__progress_hooks.fn[i](gv__progress_hooks.arg[i]);
    return n;
}

/* Calls into the network library that may wait inside it for a peer
 * (MPI_Win_flush) or never return (a provider spinning in its progress).
 * The AM watchdog cannot see these: it runs between polls. A monitor
 * thread (core/monitor.c) reads this record; if the rank stays inside one
 * call for GV_TIMEOUT_S it stops the job, naming the peer waited for, or
 * this rank when no peer is known. seq changes on every transition, so
 * an unchanged odd state across the monitor's looks means one call.
 * Stores only: a few cycles per poll. */
typedef struct {
    uint64_t    seq;    /* bumped on every enter, leave, out and back */
    int         inside; /* in a watched call, and not in a handler */
    int         rank;   /* the peer the call waits for, or -1 */
    const char *what;   /* the call, for the message */
} gv__libcall_t;
extern gv__libcall_t gv__libcall;

static inline void gv__lib_enter(int rank, const char *what)
{
    __atomic_store_n(&gv__libcall.rank, rank, __ATOMIC_RELAXED);
    __atomic_store_n(&gv__libcall.what, what, __ATOMIC_RELAXED);
    __atomic_store_n(&gv__libcall.inside, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&gv__libcall.seq, gv__libcall.seq + 1, __ATOMIC_RELEASE);
}

static inline void gv__lib_leave(void)
{
    __atomic_store_n(&gv__libcall.inside, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&gv__libcall.seq, gv__libcall.seq + 1, __ATOMIC_RELEASE);
}

/* Around our own code called back from inside the library (a message's
 * handlers, which may compute as long as they like, or enter a watched
 * call themselves): not the library's time. */
typedef struct {
    int         inside, rank;
    const char *what;
} gv__libcall_saved_t;

static inline void gv__lib_out(gv__libcall_saved_t *s)
{
    s->inside = gv__libcall.inside;
    s->rank   = gv__libcall.rank;
    s->what   = gv__libcall.what;
    __atomic_store_n(&gv__libcall.inside, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&gv__libcall.seq, gv__libcall.seq + 1, __ATOMIC_RELEASE);
}

static inline void gv__lib_back(const gv__libcall_saved_t *s)
{
    __atomic_store_n(&gv__libcall.rank, s->rank, __ATOMIC_RELAXED);
    __atomic_store_n(&gv__libcall.what, s->what, __ATOMIC_RELAXED);
    __atomic_store_n(&gv__libcall.inside, s->inside, __ATOMIC_RELAXED);
    __atomic_store_n(&gv__libcall.seq, gv__libcall.seq + 1, __ATOMIC_RELEASE);
}

/* Start (gv_init, once the transport is up) and stop (gv_finalize) the
 * monitor thread. */
void gv__monitor_start(void);
void gv__monitor_stop(void);

/* Open file descriptors (core/fdwatch.c): raise the soft limit to the
 * hard one (gv_init, before the transport opens); count them about once a
 * second (the monitor thread), warning past half the limit and logging an
 * error near it, with the likely cause. */
void gv__fd_start(void);
void gv__fd_watch(uint64_t now);

/* Bind this rank (hwloc); print topology (gvinfo). */
void gv__topo_bind(int local_rank, int local_size);
void gv__topo_print(FILE *f);

/* MemAvailable from /proc/meminfo in bytes, or 0 if unknown: transports
 * that reserve large heaps check it first instead of waking the OOM
 * killer. */
uint64_t gv__mem_available(void);
/* The rank's own handlers of SIGTERM, SIGINT and SIGHUP (core/cleanup.c):
 * each removes the armed files, then ends the process by the signal's
 * default action; it never chains to an earlier handler (a library's may
 * call exit() and deadlock in malloc). gv_init installs them after its
 * transport opened (again, if a library replaced them meanwhile);
 * gv_finalize puts back what was there before. A signal ignored at the
 * first install stays ignored. */
void gv__signals_install(void);
void gv__signals_restore(void);
/* Remove the files @a paths (absolute; NULL entries skipped) if SIGTERM,
 * SIGINT or SIGHUP stops the process, or the job aborts (gv__job_abort),
 * before gv__cleanup_disarm() (arming installs the handlers). The array
 * and its strings, from gv_malloc, become the cleanup's:
 * gv__cleanup_disarm() frees them. One list at a time: arming again
 * replaces it. gv__cleanup_now() removes the files at once (an init that
 * fails, an abort), leaving the list armed; both do nothing when nothing
 * is armed. Async-signal-safe: gv__cleanup_now(). */
void gv__cleanup_arm(char **paths, int npaths);
void gv__cleanup_now(void);
void gv__cleanup_disarm(void);
/* Whether @a local ranks of this node can each take @a per_rank bytes that
 * become resident at once (shared memory reserved, or a heap zeroed at
 * init), with an eighth of the memory the kernel calls available kept
 * spare: asking for more wakes the OOM killer, which may pick any process.
 * If not, says why, naming transport @a tl and what to lower, @a what (at
 * error level when GV_TRANSPORT names @a tl, else info: auto goes on to
 * the next transport), and returns 0. */
int gv__node_mem_fits(const char *tl, uint64_t per_rank, int local,
                      const char *what);

/* Random bytes from the kernel. */
gv_status_t gv__random_bytes(void *buf, size_t len);

/* The commit the library was built from (`git describe --always --dirty`),
 * or "unknown" (core/version.c; gv_version() is the public part). */
const char *gv__version_commit(void);

#endif
