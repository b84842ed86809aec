/* What the join files share. Internal to frameworks/join.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_FW_JOIN_JOIN_H
#define GV_FW_JOIN_JOIN_H

#include <grapevine/fw/join.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define join_error(_fmt, ...)                                                 \
    fprintf(stderr, "[%04d] ERROR %s:%d %s: " _fmt "\n", gv_rank(),           \
            __FILE__, __LINE__, __func__, ## __VA_ARGS__)

struct gv_rel {
    gv_array_t *arr;
    int         ncols;
};

/* splitmix64's finaliser. */
static inline uint64_t join_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* A growing local array of int64 rows. */
typedef struct {
    int64_t *v;
    int64_t  n, cap; /* rows */
    int      width;
} rows_t;

static inline void rows_push(rows_t *r, const int64_t *row)
{
    if (r->n == r->cap) {
        int64_t  ncap = (r->cap == 0) ? 1024 : r->cap * 2;
        int64_t *nv   = realloc(r->v, sizeof(int64_t) * (size_t)ncap *
                                          (size_t)(r->width > 0 ? r->width : 1));
        if (nv == NULL)
            gv_abort(1, "join: out of local memory for %lld rows",
                     (long long)ncap);
        r->v   = nv;
        r->cap = ncap;
    }
    memcpy(r->v + r->n * r->width, row, sizeof(int64_t) * (size_t)r->width);
    r->n++;
}

#endif
