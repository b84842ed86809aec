/* The ground every layer stands on: the rank's context (gv__ctx), its
 * rank and job size, stopping the job (gv__job_abort, gv_abort) and a
 * peer's failure (gv__peer_failed). Logging, the monitor thread and every
 * transport call these; they use nothing above core.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"
#include "core/boot.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

gv_core_t gv__ctx = {.rank = 0, .size = 1};

int gv_rank(void)
{
    return gv__ctx.rank;
}

int gv_nranks(void)
{
    return gv__ctx.size;
}

const char *gv_transport_name(void)
{
    return (gv__ctx.tl_name != NULL) ? gv__ctx.tl_name : "none";
}

void gv__job_abort(int code, const char *msg)
{
    static int aborting;

    /* The files this rank's transport keeps in /dev/shm (ofi's shm
     * regions) go first: _exit runs no cleanup, and gvrun's SIGTERM no
     * longer finds the rank. */
    gv__cleanup_now();
    /* The monitor thread may abort while the main thread does. */
    if (!__atomic_exchange_n(&aborting, 1, __ATOMIC_ACQ_REL) &&
        (gv__ctx.boot != NULL))
        gv__ctx.boot->ops->abort(gv__ctx.boot, code, msg);
    fflush(stdout);
    _exit((code != 0) ? code : 1);
}

void gv_abort(int code, const char *fmt, ...)
{
    char    msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gv__log(GV_LOG_ERROR, "user", 0, "gv_abort", "%s", msg);
    gv__job_abort(code, msg);
}

/* The host's peer-failure callback and the reasons owed to it. */
static gv_peer_failure_fn_t failure_fn;
static void                *failure_arg;
static char               **failure_why;   /* per rank, until reported */

void (*gv__peer_failed_hook)(int rank);

void gv__failures_init(int size)
{
    gv__ctx.failed      = NULL;
    gv__ctx.nfailed     = 0;
    gv__ctx.failed_owed = 0;
    failure_fn          = NULL;
    failure_arg         = NULL;
    failure_why         = NULL;
    (void)size;
}

void gv__failures_fini(void)
{
    int i;

    if (failure_why != NULL)
        for (i = 0; i < gv__ctx.size; i++)
            gv_free(failure_why[i]);
    gv_free(failure_why);
    gv_free(gv__ctx.failed);
    gv__failures_init(0);
}

gv_status_t gv_on_peer_failure(gv_peer_failure_fn_t fn, void *arg)
{
    if (!gv__ctx.initialized) {
        gv_error("gv_on_peer_failure outside gv_init..gv_finalize");
        return GV_ERR_STATE;
    }
    if ((fn != NULL) && (gv__ctx.failed == NULL)) {
        gv__ctx.failed = gv_calloc((size_t)gv__ctx.size, 1);
        failure_why    = gv_calloc((size_t)gv__ctx.size, sizeof(char *));
    }
    failure_fn  = fn;
    failure_arg = arg;
    return GV_OK;
}

int gv_peer_failed(int rank)
{
    return ((unsigned)rank < (unsigned)gv__ctx.size) && gv__is_failed(rank);
}

void gv__peer_failures_run(void)
{
    int i;

    gv__ctx.failed_owed = 0;
    for (i = 0; i < gv__ctx.size; i++) {
        char *why = (failure_why != NULL) ? failure_why[i] : NULL;

        if (why == NULL)
            continue;
        failure_why[i] = NULL;
        if (failure_fn != NULL)
            failure_fn(i, why, failure_arg);
        gv_free(why);
    }
}

int gv__peer_failed(int rank, const char *fmt, ...)
{
    char    msg[384], line[512];
    va_list ap;

    if (gv__ctx.finalizing)
        return 0;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "rank %d failed or is unreachable (%s): %s",
             rank, gv_transport_name(), msg);
    if ((failure_fn == NULL) || ((unsigned)rank >= (unsigned)gv__ctx.size) ||
        (rank == gv__ctx.rank)) {
        gv_error("%s", line);
        gv__job_abort(1, line);
    }
    if (gv__ctx.failed[rank])
        return 0;
    /* The host handles it: the job goes on without the rank. */
    gv_warn("%s; reported to the peer-failure callback", line);
    gv__ctx.failed[rank] = 1;
    gv__ctx.nfailed++;
    failure_why[rank] = strdup(line);
    if (failure_why[rank] == NULL)
        gv_fatal("out of memory recording rank %d's failure", rank);
    gv__ctx.failed_owed = 1;
    if (gv__peer_failed_hook != NULL)
        gv__peer_failed_hook(rank);
    return 0;
}
