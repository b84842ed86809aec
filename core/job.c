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
    gv_error("%s", line);
    gv__job_abort(1, line);
}
