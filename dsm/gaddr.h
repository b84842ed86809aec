/* Global addresses: packing, unpacking, and the linear heap's geometry
 * (block-cyclic striping). Inline: the delegate fast path decodes one per
 * operation. SPDX-License-Identifier: BSD-3-Clause
 *
 * Where a linear block lives. Global block b (GV_BLOCK bytes) has home
 * b mod P and is that rank's local block j = b / P. Local blocks are laid
 * out from the top of the rank's symmetric heap downwards:
 *
 *   heap offset 0                                               top
 *   | gv_sym_alloc() objects grow up ->   ...   | j=2 | j=1 | j=0 |
 *
 * so that the global heap and the program's own gv_sym_alloc() objects
 * (which grow up from offset 0) share GV_HEAP without either reserving a
 * fixed part of it; a global allocation that would reach below the
 * symmetric allocator's break fails with GV_ERR_NO_MEMORY.
 */
#ifndef GV_DSM_GADDR_H
#define GV_DSM_GADDR_H

#include <grapevine/dsm.h>
#include <stdint.h>

#define GV__GA_LINEAR   (1ull << 63)
#define GV__GA_HEAP     (1ull << 62)
#define GV__GA_OFF_MASK ((1ull << 63) - 1)
#define GV__GA_HEAP_OFF_BITS 40
#define GV__GA_HEAP_RANK_MAX ((1 << 22) - 1)
#define GV__GA_PTR_BITS 48
#define GV__GA_PTR_RANK_MAX  ((1 << 14) - 1)

enum { GV__GA_KIND_PTR = 0, GV__GA_KIND_HEAP = 1, GV__GA_KIND_LIN = 2 };

/* This rank's view of the geometry; set by gv__dsm_init. */
typedef struct {
    int      up;
    int      rank, size;
    unsigned bshift;     /* log2(GV_BLOCK) */
    uint64_t bsize, bmask;
    int      pshift;     /* log2(P) if P is a power of two, else -1 */
    uint8_t *heap;       /* this rank's symmetric heap */
    uint64_t heap_len;
    uint64_t top;        /* heap_len rounded down to a block */
    uint64_t nlocal;     /* local blocks under top */
    uint64_t nglobal;    /* nlocal * P */
} gv__dsm_geo_t;

extern gv__dsm_geo_t gv__geo;

static inline int gv__ga_kind(gv_gaddr_t a)
{
    if (a & GV__GA_LINEAR)
        return GV__GA_KIND_LIN;
    return (a & GV__GA_HEAP) ? GV__GA_KIND_HEAP : GV__GA_KIND_PTR;
}

static inline gv_gaddr_t gv__ga_linear(uint64_t off)
{
    return GV__GA_LINEAR | off;
}

static inline gv_gaddr_t gv__ga_heap(int rank, uint64_t off)
{
    return GV__GA_HEAP | ((uint64_t)rank << GV__GA_HEAP_OFF_BITS) | off;
}

static inline gv_gaddr_t gv__ga_ptr(int rank, const void *p)
{
    return ((uint64_t)rank << GV__GA_PTR_BITS) | (uint64_t)(uintptr_t)p;
}

/* Home of global block @a b, and its local block index there. */
static inline int gv__blk_home(uint64_t b)
{
    if (gv__geo.pshift >= 0)
        return (int)(b & (((uint64_t)1 << gv__geo.pshift) - 1));
    return (int)(b % (uint64_t)gv__geo.size);
}

static inline uint64_t gv__blk_local(uint64_t b)
{
    if (gv__geo.pshift >= 0)
        return b >> gv__geo.pshift;
    return b / (uint64_t)gv__geo.size;
}

/* Heap offset of byte @a inblk of local block @a j. */
static inline uint64_t gv__lblk_off(uint64_t j, uint64_t inblk)
{
    return gv__geo.top - ((j + 1) << gv__geo.bshift) + inblk;
}

/*
 * Decode @a a into (home rank, heap offset) for the heap forms, or (home,
 * pointer) for the pointer form. Returns the kind, or -1 if the address
 * names no rank or lies outside the heap region. For the pointer form
 * *off_p is the raw address bits.
 */
static inline int gv__ga_decode(gv_gaddr_t a, int *home_p, uint64_t *off_p)
{
    if (a & GV__GA_LINEAR) {
        uint64_t o = a & GV__GA_OFF_MASK;
        uint64_t b = o >> gv__geo.bshift;
        uint64_t j;

        if (b >= gv__geo.nglobal)
            return -1;
        j       = gv__blk_local(b);
        *home_p = gv__blk_home(b);
        *off_p  = gv__lblk_off(j, o & gv__geo.bmask);
        return GV__GA_KIND_LIN;
    }
    if (a & GV__GA_HEAP) {
        uint64_t r = (a >> GV__GA_HEAP_OFF_BITS) & GV__GA_HEAP_RANK_MAX;
        uint64_t o = a & ((1ull << GV__GA_HEAP_OFF_BITS) - 1);
        if ((r >= (uint64_t)gv__geo.size) || (o >= gv__geo.heap_len))
            return -1;
        *home_p = (int)r;
        *off_p  = o;
        return GV__GA_KIND_HEAP;
    }
    {
        uint64_t r = a >> GV__GA_PTR_BITS;
        if ((r >= (uint64_t)gv__geo.size) || (a == 0))
            return -1;
        *home_p = (int)r;
        *off_p  = a & ((1ull << GV__GA_PTR_BITS) - 1);
        return GV__GA_KIND_PTR;
    }
}

/* Home rank only (the cheap part of the decode). */
static inline int gv__ga_home(gv_gaddr_t a)
{
    if (a & GV__GA_LINEAR) {
        uint64_t b = (a & GV__GA_OFF_MASK) >> gv__geo.bshift;
        return (b < gv__geo.nglobal) ? gv__blk_home(b) : -1;
    }
    if (a & GV__GA_HEAP) {
        uint64_t r = (a >> GV__GA_HEAP_OFF_BITS) & GV__GA_HEAP_RANK_MAX;
        return (r < (uint64_t)gv__geo.size) ? (int)r : -1;
    }
    if (a == 0)
        return -1;
    return ((a >> GV__GA_PTR_BITS) < (uint64_t)gv__geo.size)
               ? (int)(a >> GV__GA_PTR_BITS) : -1;
}

#endif
