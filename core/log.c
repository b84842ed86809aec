/* Logging and fatal errors. SPDX-License-Identifier: BSD-3-Clause */
#include "core/log.h"
#include "core/core.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int          gv__log_level = GV_LOG_WARN;
int          gv__log_rank  = -1;
unsigned int gv__log_nerrors;

/* The last error logged on each thread, for gv_last_error(). */
static __thread char last_error[1024];

const char *gv_last_error(void)
{
    return last_error;
}

void gv__last_error_clear(void)
{
    last_error[0] = '\0';
}

static const char *level_names[] = {"FATAL", "ERROR", "WARN", "INFO",
                                    "DEBUG", "TRACE"};

static void vlog(int level, const char *file, int line, const char *func,
                 const char *fmt, va_list ap)
{
    char msg[1024];
    int  saved = errno;
    int  off;

    if (level <= GV_LOG_ERROR)
        __atomic_add_fetch(&gv__log_nerrors, 1, __ATOMIC_RELAXED);
    if (gv__log_rank >= 0)
        off = snprintf(msg, sizeof(msg), "[%04d] %s %s:%d %s: ",
                       gv__log_rank, level_names[level], file, line, func);
    else
        off = snprintf(msg, sizeof(msg), "[----] %s %s:%d %s: ",
                       level_names[level], file, line, func);
    errno = saved; /* so that %m in fmt reports the caller's errno */
    if ((off >= 0) && ((size_t)off < sizeof(msg)))
        vsnprintf(msg + off, sizeof(msg) - (size_t)off, fmt, ap);
    if (level <= GV_LOG_ERROR)
        memcpy(last_error, msg, sizeof(last_error));
    /* One write per line so that lines from many ranks do not interleave. */
    fprintf(stderr, "%s\n", msg);
    errno = saved;
}

void gv__log(int level, const char *file, int line, const char *func,
             const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, file, line, func, fmt, ap);
    va_end(ap);
}

void gv__fatal(const char *file, int line, const char *func,
               const char *fmt, ...)
{
    char    msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    gv__log(GV_LOG_FATAL, file, line, func, "%s", msg);
    gv__job_abort(1, msg);
}
