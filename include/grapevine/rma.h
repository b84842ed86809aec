/** @file
 * Grapevine one-sided operations on the symmetric heap: remote 64-bit
 * atomics, put and get, addressed by (rank, byte offset), with explicit
 * completion. Uses the transport's native operations; a transport without
 * them (tcp) returns GV_ERR_UNSUPPORTED. Needs the heap layer (gv_init, or
 * gv_init_opts with GV_LAYERS_HEAP or more): otherwise GV_ERR_STATE.
 * Threads: call from the thread allowed to call (gv_thread_level_t in
 * grapevine/core.h), from the main flow or a worker; not from a handler
 * (the blocking forms wait). To a failed peer (gv_on_peer_failure):
 * GV_ERR_UNREACHABLE. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GRAPEVINE_RMA_H
#define GRAPEVINE_RMA_H

#include <grapevine/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Remote 64-bit atomic operations. */
typedef enum {
    GV_AMO_ADD,   /**< *p += v                                  */
    GV_AMO_FADD,  /**< old = *p; *p += v                        */
    GV_AMO_CSWAP, /**< old = *p; if (old == compare) *p = v     */
    GV_AMO_SWAP   /**< old = *p; *p = v                         */
} gv_amo_op_t;

/**
 * Allocate @a len bytes from this rank's symmetric heap (GV_HEAP bytes).
 * Allocation is deterministic: ranks that make the same calls in the same
 * order get the same offsets, so an offset names "the same object" on every
 * rank. @param [out] off_p  byte offset into every rank's heap.
 * @return GV_OK, GV_ERR_INVALID (align not a power of two), or
 *         GV_ERR_NO_MEMORY (the heap is exhausted: raise GV_HEAP).
 */
gv_status_t gv_sym_alloc(size_t len, size_t align, uint64_t *off_p);

/** Local address of offset @a off in this rank's heap. */
void *gv_sym_ptr(uint64_t off);
/** Size of each rank's heap in bytes. */
size_t gv_sym_heap_size(void);

/** @return non-zero if the transport has native one-sided atomics / RMA. */
int gv_rma_has_atomics(void);
/** @return non-zero if the transport has native put and get. */
int gv_rma_has_put_get(void);

/**
 * Issue a remote atomic on the 8-byte word at (@a rank, @a off). Non-
 * blocking: for fetching ops *@a result_p is valid once a gv_rma_flush()
 * covering @a rank returned. @a result_p may be NULL for GV_AMO_ADD.
 * @return GV_OK (issued), GV_ERR_INVALID (rank or offset out of range, off
 *         not 8-byte aligned), GV_ERR_UNSUPPORTED (transport has none).
 */
gv_status_t gv_amo64(gv_amo_op_t op, int rank, uint64_t off, uint64_t value,
                     uint64_t compare, uint64_t *result_p);

/** Blocking forms: issue, then wait for this one operation. */
gv_status_t gv_amo64_fetch_add(int rank, uint64_t off, uint64_t value,
                               uint64_t *old_p);
/** Blocking compare-and-swap: *@a old_p = word; if it equals @a compare,
 *  the word becomes @a value. */
gv_status_t gv_amo64_cswap(int rank, uint64_t off, uint64_t compare,
                           uint64_t value, uint64_t *old_p);
/** Blocking swap: *@a old_p = word; the word becomes @a value. */
gv_status_t gv_amo64_swap(int rank, uint64_t off, uint64_t value,
                          uint64_t *old_p);

/** Non-blocking put / get of @a len bytes; complete at gv_rma_flush(). */
gv_status_t gv_put(int rank, uint64_t off, const void *buf, size_t len);
/** Non-blocking get of @a len bytes at (@a rank, @a off) into @a buf;
 *  complete at gv_rma_flush(). */
gv_status_t gv_get(int rank, uint64_t off, void *buf, size_t len);

/** Complete every one-sided operation issued to @a rank (-1: to all). */
gv_status_t gv_rma_flush(int rank);

#ifdef __cplusplus
}
#endif
#endif
