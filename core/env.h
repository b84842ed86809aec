/* The GV_* configuration: one struct generated from core/env.def.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_CORE_ENV_H
#define GV_CORE_ENV_H

#include <grapevine/core.h>
#include <stdio.h>

typedef enum {
    GV_ENV_STRING, GV_ENV_ENUM, GV_ENV_BOOL, GV_ENV_UINT, GV_ENV_SIZE
} gv_env_type_t;

/* Field types per TYPE: STRING -> const char *, ENUM -> int (index into
 * ACCEPT), BOOL -> int, UINT and SIZE -> uint64_t. */
#define GV__ENV_CT_STRING const char *
#define GV__ENV_CT_ENUM   int
#define GV__ENV_CT_BOOL   int
#define GV__ENV_CT_UINT   uint64_t
#define GV__ENV_CT_SIZE   uint64_t

typedef struct gv_env {
#define GV_ENV(_n, _t, _d, _a, _min, _max, _c, _doc)                         \
    GV__ENV_CT_##_t _n;                                                      \
    int _n##_set;
#include "core/env.def"
#undef GV_ENV
} gv_env_t;

extern gv_env_t gv__env;

/* Enum values, in ACCEPT order. */
enum { GV_LOG_ENV_ERROR, GV_LOG_ENV_WARN, GV_LOG_ENV_INFO, GV_LOG_ENV_DEBUG,
       GV_LOG_ENV_TRACE };
enum { GV_BIND_CORE, GV_BIND_NONE };
enum { GV_AMO_AM, GV_AMO_NATIVE };
enum { GV_AGG_ROUTE_DIRECT, GV_AGG_ROUTE_NODE, GV_AGG_ROUTE_NODE2 };

/**
 * Parse every GV_* variable from the environment into gv__env.
 * @param [out] err  on failure, one line naming the variable, the value
 *                   and what is accepted.
 * @return GV_OK or GV_ERR_INVALID.
 */
gv_status_t gv__env_parse(char *err, size_t errlen);

/* Warn about GV_* variables no row defines, suggesting the closest. */
void gv__env_warn_unknown(void);

/* Parse one value of a given row (tests use it). */
gv_status_t gv__env_parse_one(const char *name, const char *value,
                              char *err, size_t errlen);

/* Print the table: name, value, default, accepted, doc. */
void gv__env_print(FILE *f, int markdown);

/* Parse "64k", "1m", "4096" into bytes. */
gv_status_t gv__parse_size(const char *s, uint64_t *val_p);

#endif
