/* Internal to frameworks/linalg: error reporting and small functions
 * shared by the tiling, the engine and the applications.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_FW_LINALG_LA_H
#define GV_FW_LINALG_LA_H

#include <grapevine/fw/linalg.h>

#include <stdint.h>

/** Log an error of the linear-algebra framework once, with the rank. */
void gv__la_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Width of segment @a k. */
static inline int64_t gv__la_width(const gv_la_layout_t *L, int k)
{
    return gv_la_seg_lo(L, k + 1) - gv_la_seg_lo(L, k);
}

/** Collective over the world: every rank's status is the worst one. */
gv_status_t gv__la_agree(gv_status_t st);

#endif
