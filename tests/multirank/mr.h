/* Helpers for multi-rank test programs (run under gvrun by the drivers):
 * exit 0 on success, 77 to skip (with the reason on stdout), anything
 * else on failure with a message naming the rank. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TESTS_MR_H
#define GV_TESTS_MR_H

#include <grapevine.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define MR_SKIP_CODE 77

#define MR_CHECK(_cond, _fmt, ...)                                           \
    do {                                                                     \
        if (!(_cond))                                                        \
            gv_abort(1, "FAIL %s:%d: %s: " _fmt, __FILE__, __LINE__, #_cond, \
                     ##__VA_ARGS__);                                         \
    } while (0)

#define MR_OK(_expr)                                                         \
    do {                                                                     \
        gv_status_t _st = (_expr);                                           \
        if (_st != GV_OK)                                                    \
            gv_abort(1, "FAIL %s:%d: %s returned %s", __FILE__, __LINE__,    \
                     #_expr, gv_status_str(_st));                            \
    } while (0)

/* Every rank calls this collectively. */
static inline void mr_skip(const char *why)
{
    if (gv_rank() == 0)
        printf("skip: %s (transport %s)\n", why, gv_transport_name());
    gv_finalize();
    exit(MR_SKIP_CODE);
}

/* gv_init, or exit: 77 (skip) where it refuses GV_AMO=native because the
 * transport has no native atomics (it logged why), 1 for any other
 * failure, a transport that does not start included. */
static inline void mr_init(int *argc, char ***argv)
{
    gv_status_t st    = gv_init(argc, argv);
    const char *amo   = getenv("GV_AMO");

    if ((st == GV_ERR_UNSUPPORTED) && (amo != NULL) &&
        (strcasecmp(amo, "native") == 0)) {
        printf("skip: gv_init refused this configuration (%s; its ERROR "
               "line says why)\n", gv_status_str(st));
        exit(MR_SKIP_CODE);
    }
    if (st != GV_OK) {
        fprintf(stderr, "gv_init failed: %s\n", gv_status_str(st));
        exit(1);
    }
}

/* Exactly 2 ranks with native remote atomics, and an 8-byte word of the
 * symmetric heap at *off_p (the same offset on both); otherwise every rank
 * skips, before any rank waits for another. */
static inline void mr_need_atomic_pair(uint64_t *off_p)
{
    if (gv_nranks() != 2)
        mr_skip("needs exactly 2 ranks");
    if (!gv_rma_has_atomics())
        mr_skip("no native atomics");
    if (gv_sym_alloc(8, 8, off_p) != GV_OK)
        mr_skip("no symmetric heap");
}

/* splitmix64: a small, good, seedable generator for test data. */
static inline uint64_t mr_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z          = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Fill a payload that carries (src, seq) and a checksum of itself. */
static inline void mr_fill(uint8_t *p, size_t len, uint64_t seed)
{
    size_t i;
    for (i = 0; i < len; i++)
        p[i] = (uint8_t)(mr_rand(&seed) >> 56);
}

static inline int mr_verify(const uint8_t *p, size_t len, uint64_t seed)
{
    size_t i;
    for (i = 0; i < len; i++)
        if (p[i] != (uint8_t)(mr_rand(&seed) >> 56))
            return 0;
    return 1;
}

static inline int mr_done_flag(void *arg)
{
    return *(volatile int *)arg != 0;
}

#endif
