/* The private protocol between gvrun and its ranks, over one inherited
 * AF_UNIX socketpair per rank (nothing else can reach it).
 *
 *   0       4       6       8      12
 *   +-------+-------+-------+-------+----------------------+
 *   | magic | type  | rsvd  |  len  |  len bytes of payload|
 *   +-------+-------+-------+-------+----------------------+
 *
 * launcher -> rank  HELLO      {u32 rank, u32 size, u64 job_id, key[16]}
 * rank -> launcher  ALLGATHER  contribution (same length on every rank)
 * launcher -> rank  RESULT     size * len bytes, rank order
 * rank -> launcher  ABORT      {i32 code} + message text
 * rank -> launcher  FINALIZE   {} : past gv_finalize's last collective
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_CORE_GVRUN_PROTO_H
#define GV_CORE_GVRUN_PROTO_H

#include <stdint.h>

#define GVRUN_MAGIC      0x47565255u /* "GVRU" */
#define GVRUN_MAX_LEN    (1u << 20)  /* per-rank contribution cap */

enum {
    GVRUN_HELLO = 1,
    GVRUN_ALLGATHER,
    GVRUN_RESULT,
    GVRUN_ABORT,
    GVRUN_FINALIZE,
};

typedef struct {
    uint32_t magic;
    uint16_t type;
    uint16_t rsvd;
    uint32_t len;
} gvrun_hdr_t;

typedef struct {
    uint32_t rank, size;
    uint64_t job_id;
    uint8_t  key[16];
} gvrun_hello_t;

#endif
