/* A checked message stream for the tests that attack a job while it works
 * (mr_tcp_stranger, mr_ofi_stranger): every rank sends every other
 * numbered messages whose bytes derive from source, destination and
 * number (mr_fill); the receiver checks all three and the bytes, so a
 * message lost, reordered, duplicated, misdelivered or corrupted fails
 * the run. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TESTS_MR_STREAM_H
#define GV_TESTS_MR_STREAM_H

#include "tests/multirank/mr.h"

/* One message: who and which, then bytes derived from both. */
typedef struct {
    uint32_t src, dst;
    uint64_t seq;
} mr_msg_hdr_t;

static struct {
    int       me, np;
    uint64_t  salt;      /* each test's own, in every seed */
    uint64_t *next_seq;  /* expected seq per source */
    uint64_t  received;
} mr_stream;

static inline uint64_t mr_stream_seed(uint32_t src, uint32_t dst,
                                      uint64_t seq)
{
    return ((uint64_t)src << 48) ^ ((uint64_t)dst << 32) ^ seq ^
           mr_stream.salt;
}

/* The handler: register it with gv_am_register(mr_stream_on_msg, ...). */
static inline void mr_stream_on_msg(int src, const void *payload,
                                    size_t len, void *arg)
{
    mr_msg_hdr_t h;

    (void)arg;
    MR_CHECK(len >= sizeof(h), "message of %zu bytes from %d", len, src);
    memcpy(&h, payload, sizeof(h));
    MR_CHECK((int)h.src == src, "header says source %u, transport says %d",
             h.src, src);
    MR_CHECK((int)h.dst == mr_stream.me, "message for rank %u arrived at %d",
             h.dst, mr_stream.me);
    MR_CHECK(h.seq == mr_stream.next_seq[src], "from rank %d: sequence %llu, "
             "expected %llu (reordered, lost or forged)", src,
             (unsigned long long)h.seq,
             (unsigned long long)mr_stream.next_seq[src]);
    MR_CHECK(mr_verify((const uint8_t *)payload + sizeof(h), len - sizeof(h),
                       mr_stream_seed(h.src, h.dst, h.seq)),
             "corrupt payload from rank %d seq %llu (%zu bytes)", src,
             (unsigned long long)h.seq, len);
    mr_stream.next_seq[src]++;
    mr_stream.received++;
}

/* After gv_init. */
static inline void mr_stream_init(uint64_t salt)
{
    mr_stream.me       = gv_rank();
    mr_stream.np       = gv_nranks();
    mr_stream.salt     = salt;
    mr_stream.next_seq = calloc((size_t)mr_stream.np,
                                sizeof(*mr_stream.next_seq));
    MR_CHECK(mr_stream.next_seq != NULL, "out of memory");
}

static inline void mr_stream_fini(void)
{
    free(mr_stream.next_seq);
    mr_stream.next_seq = NULL;
}

/* Send message @a seq of @a len bytes (header included, at least the
 * header) to @a dst, built in @a buf. */
static inline void mr_stream_send(gv_am_id_t id, int dst, uint64_t seq,
                                  uint8_t *buf, size_t len)
{
    mr_msg_hdr_t h;

    h.src = (uint32_t)mr_stream.me;
    h.dst = (uint32_t)dst;
    h.seq = seq;
    memcpy(buf, &h, sizeof(h));
    mr_fill(buf + sizeof(h), len - sizeof(h), mr_stream_seed(h.src, h.dst,
                                                             h.seq));
    MR_OK(gv_am_send(dst, id, buf, len));
}

/* gv_wait() predicate: at least *(uint64_t *)arg messages received. */
static inline int mr_stream_received_at_least(void *arg)
{
    return mr_stream.received >= *(const uint64_t *)arg;
}

#endif
