/* Rank-prefixed logging: "[rank] LEVEL file:line func: message".
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_CORE_LOG_H
#define GV_CORE_LOG_H

#include <stdarg.h>

typedef enum {
    GV_LOG_FATAL = 0,
    GV_LOG_ERROR,
    GV_LOG_WARN,
    GV_LOG_INFO,
    GV_LOG_DEBUG,
    GV_LOG_TRACE
} gv_log_level_t;

/* Compile-time ceiling: release builds carry no trace code. */
#ifndef GV_MAX_LOG_LEVEL
#define GV_MAX_LOG_LEVEL GV_LOG_DEBUG
#endif

extern int gv__log_level;  /* run-time level from GV_LOG */
extern int gv__log_rank;   /* -1 until the rank is known */
/* Error and fatal lines printed so far: a caller that reports a failure
 * of a callee says nothing more when the callee already said why. */
extern unsigned int gv__log_nerrors;

void gv__log(int level, const char *file, int line, const char *func,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Forget the calling thread's last error (gv_last_error()). */
void gv__last_error_clear(void);
void gv__fatal(const char *file, int line, const char *func,
               const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

#define gv_log(_lvl, _fmt, ...)                                              \
    do {                                                                     \
        if (((_lvl) <= GV_MAX_LOG_LEVEL) && ((_lvl) <= gv__log_level))       \
            gv__log(_lvl, __FILE__, __LINE__, __func__, _fmt,                \
                    ##__VA_ARGS__);                                          \
    } while (0)
#define gv_error(_fmt, ...) gv_log(GV_LOG_ERROR, _fmt, ##__VA_ARGS__)
#define gv_warn(_fmt, ...)  gv_log(GV_LOG_WARN, _fmt, ##__VA_ARGS__)
#define gv_info(_fmt, ...)  gv_log(GV_LOG_INFO, _fmt, ##__VA_ARGS__)
#define gv_debug(_fmt, ...) gv_log(GV_LOG_DEBUG, _fmt, ##__VA_ARGS__)
#define gv_trace(_fmt, ...) gv_log(GV_LOG_TRACE, _fmt, ##__VA_ARGS__)

/* Unrecoverable: log, tell the launcher, exit. Never assert(0). */
#define gv_fatal(_fmt, ...)                                                  \
    gv__fatal(__FILE__, __LINE__, __func__, _fmt, ##__VA_ARGS__)

/* Internal invariants only; never for user input or wire data. */
#define gv_assert(_cond)                                                     \
    do {                                                                     \
        if (__builtin_expect(!(_cond), 0))                                   \
            gv_fatal("assertion failed: %s", #_cond);                        \
    } while (0)

#endif
