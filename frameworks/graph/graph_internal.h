/* Shared by the files of frameworks/graph: errors agreed over ranks, the
 * bulk all-to-all exchange, the bijections of the generator and of hashed
 * placement. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_FW_GRAPH_INTERNAL_H
#define GV_FW_GRAPH_INTERNAL_H

#include <grapevine/fw/graph.h>

#include <stdarg.h>
#include <stddef.h>

/* The largest message of a collective (gv_allreduce / gv_broadcast). */
#define GV__GRAPH_COLL_ELEMS ((size_t)1 << 17)

/* An error found by one rank, waiting for the others to agree on it. The
 * earliest key wins (a byte offset in the file; -1 for errors that come
 * before any content, such as a file that cannot be opened). */
typedef struct {
    int64_t     key;          /* INT64_MAX: no error */
    gv_status_t status;
    char        msg[512];
} gv__gerr_t;

void gv__gerr_init(gv__gerr_t *e);
/* Record an error unless an earlier one (smaller key) is already there. */
void gv__gerr_set(gv__gerr_t *e, int64_t key, gv_status_t status,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Collective: every rank learns the earliest error of any rank; rank 0
 * prints it once; every rank returns its status (GV_OK if none) and keeps
 * the message for gv_graph_errmsg(). */
gv_status_t gv__gerr_agree(gv__gerr_t *e);

/* Collective all-to-all of fixed-size records: @a send holds this rank's
 * records grouped by destination rank, @a counts[r] of them for rank r.
 * Returns in *recv_p (malloc'd, free it) every record sent to this rank,
 * in no particular order, and their number in *nrecv_p. */
gv_status_t gv__graph_alltoallv(const void *send, const int64_t *counts,
                                size_t rec, void **recv_p, int64_t *nrecv_p);

/* Collective: each rank's value, indexed by rank, in @a all (nranks). */
gv_status_t gv__graph_allgather64(int64_t mine, int64_t *all);

/* A keyed bijection of 0..n-1 (cycle-walking over 0..2^bits-1, bits the
 * smallest with 2^bits >= n) and its inverse. */
typedef struct {
    uint64_t rk[3]; /* round keys */
    int64_t  n;
    int      bits;
} gv__perm_t;

int     gv__graph_bits(int64_t n);
void    gv__perm_init(gv__perm_t *p, int64_t n, uint64_t key);
int64_t gv__perm_fwd(const gv__perm_t *p, int64_t v);
int64_t gv__perm_bwd(const gv__perm_t *p, int64_t v);

/* The key of hashed placement (fixed: placement depends only on n). */
#define GV__GRAPH_HASH_KEY 0x6a09e667f3bcc908ull

/* SplitMix64's finaliser. */
static inline uint64_t gv__graph_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

#endif
