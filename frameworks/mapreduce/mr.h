/* What the MapReduce files share: the error log line and the hash of key
 * bytes. Internal to frameworks/mapreduce. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_FW_MAPREDUCE_MR_H
#define GV_FW_MAPREDUCE_MR_H

#include <grapevine/fw/mapreduce.h>
#include "containers/common.h"

#include <stdio.h>
#include <string.h>

#define mr_error(_fmt, ...)                                                   \
    fprintf(stderr, "[%04d] ERROR %s:%d %s: " _fmt "\n", gv_rank(),           \
            __FILE__, __LINE__, __func__, ## __VA_ARGS__)

/* Mark the job's current run failed (its error already logged). */
void gv__mr_fail(gv_mr_t *mr);

/* splitmix64's finaliser: the containers' (one bijection for both). */
#define mr_mix64 gv__fw_mix64

/* Hash of @a len key bytes, 8 at a time then the tail. */
static inline uint64_t mr_hash(const void *p, size_t len)
{
    const uint8_t *b = p;
    uint64_t       h = 0x9e3779b97f4a7c15ull ^ len, w;

    while (len >= 8) {
        memcpy(&w, b, 8);
        h = mr_mix64(h ^ w) + 0x632be59bd9b4e019ull;
        b += 8;
        len -= 8;
    }
    if (len > 0) {
        w = 0;
        memcpy(&w, b, len);
        h = mr_mix64(h ^ w ^ ((uint64_t)len << 56));
    }
    return mr_mix64(h);
}

/* A uniform double in [0, 1) from a counter (seed, a, b). */
static inline double mr_unit(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t x = mr_mix64(seed ^ mr_mix64(a * 0x9e3779b97f4a7c15ull + b +
                                          0x5851f42d4c957f2dull));
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

#endif
