/* The active-message wire format carried inside transport messages, and
 * its checked decoder (also the fuzz target's). Self-contained: libc only.
 *
 * Every transport message starts with an 8-byte header:
 *
 *   0      1       2        4                8
 *   +------+-------+--------+----------------+
 *   | type | flags |   id   |      len       |  little-endian as the host
 *   +------+-------+--------+----------------+
 *
 *   GV_WIRE_AM     one message: id = handler, len = payload bytes
 *   GV_WIRE_BATCH  aggregated: id = record count, len = record bytes;
 *                  records follow, each padded to 4 bytes:
 *                    +-----+-----+---------+        +-----+-------+---------+---------+
 *                    | id  | len | payload |   or   | id  |0xFFFF | u32 len | payload |
 *                    +-----+-----+---------+        +-----+-------+---------+---------+
 *   GV_WIRE_FRAG   one piece of a message larger than the transport's
 *                  largest: id = handler, len = bytes in this piece, then
 *                  u32 total, u32 offset, u32 stream (20-byte header);
 *                  pieces of one stream arrive in order, and pieces of
 *                  different streams from one sender may interleave.
 *   GV_WIRE_CTRL   runtime control (barrier waves): id = op, len = bytes.
 *
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_AGGREGATOR_WIRE_H
#define GV_AGGREGATOR_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    GV_WIRE_AM    = 1,
    GV_WIRE_BATCH = 2,
    GV_WIRE_FRAG  = 3,
    GV_WIRE_CTRL  = 4,
};

typedef struct {
    uint8_t  type;
    uint8_t  flags;
    uint16_t id;
    uint32_t len;
} gv_wire_hdr_t;

typedef struct {
    gv_wire_hdr_t h;
    uint32_t      total;
    uint32_t      offset;
    uint32_t      stream;  /* the sender's id of this fragmented message */
} gv_wire_frag_t;

#define GV_WIRE_LONG_REC 0xFFFFu
/* Largest payload a batch record or a fragmented message may announce. */
#define GV_WIRE_MAX_PAYLOAD (64u << 20)

static inline size_t gv_wire_pad4(size_t n)
{
    return (n + 3) & ~(size_t)3;
}

/* Bytes a record of @a len payload bytes takes in a batch. */
static inline size_t gv_wire_rec_size(size_t len)
{
    return gv_wire_pad4(((len < GV_WIRE_LONG_REC) ? 4 : 8) + len);
}

/* Write a record at @a p; returns bytes written (gv_wire_rec_size). */
static inline size_t gv_wire_rec_put(uint8_t *p, uint16_t id,
                                     const void *payload, size_t len)
{
    size_t   hl = (len < GV_WIRE_LONG_REC) ? 4 : 8;
    uint16_t l  = (len < GV_WIRE_LONG_REC) ? (uint16_t)len : GV_WIRE_LONG_REC;

    memcpy(p, &id, 2);
    memcpy(p + 2, &l, 2);
    if (hl == 8) {
        uint32_t l32 = (uint32_t)len;
        memcpy(p + 4, &l32, 4);
    }
    if (len > 0)
        memcpy(p + hl, payload, len);
    return gv_wire_pad4(hl + len);
}

/* Cursor over the records of a batch. */
typedef struct {
    const uint8_t *p, *end;
} gv_wire_cursor_t;

enum { GV_WIRE_REC_OK, GV_WIRE_REC_END, GV_WIRE_REC_BAD };

/* Next record: returns GV_WIRE_REC_OK with id/payload/len filled,
 * GV_WIRE_REC_END at the end, GV_WIRE_REC_BAD (and *why) if the bytes do
 * not hold a whole record. Never reads outside [p, end). */
static inline int gv_wire_rec_next(gv_wire_cursor_t *c, uint16_t *id_p,
                                   const uint8_t **payload_p, size_t *len_p,
                                   const char **why)
{
    size_t   avail = (size_t)(c->end - c->p), hl = 4, len, total;
    uint16_t id, l16;

    /* The common record first: a whole header in the batch, then two
     * tests, a short header and the padded record inside the batch (which
     * bounds its payload too). */
    if (__builtin_expect(avail >= 4, 1)) {
        memcpy(&id, c->p, 2);
        memcpy(&l16, c->p + 2, 2);
        total = gv_wire_pad4(4 + (size_t)l16);
        if (__builtin_expect((l16 != GV_WIRE_LONG_REC) && (total <= avail),
                             1)) {
            *id_p      = id;
            *payload_p = c->p + 4;
            *len_p     = l16;
            c->p += total;
            return GV_WIRE_REC_OK;
        }
    }
    if (avail == 0)
        return GV_WIRE_REC_END;
    if (avail < 4) {
        *why = "truncated record header";
        return GV_WIRE_REC_BAD;
    }
    memcpy(&id, c->p, 2);
    memcpy(&l16, c->p + 2, 2);
    len = l16;
    if (l16 == GV_WIRE_LONG_REC) {
        uint32_t l32;
        if (avail < 8) {
            *why = "truncated long record header";
            return GV_WIRE_REC_BAD;
        }
        memcpy(&l32, c->p + 4, 4);
        len = l32;
        hl  = 8;
        if ((len < GV_WIRE_LONG_REC) || (len > GV_WIRE_MAX_PAYLOAD)) {
            *why = "long record with a length that needs no long header or "
                   "exceeds the cap";
            return GV_WIRE_REC_BAD;
        }
    }
    if (len > avail - hl) {
        *why = "record length runs past the end of the batch";
        return GV_WIRE_REC_BAD;
    }
    total = gv_wire_pad4(hl + len);
    if (total > avail) {
        *why = "record padding runs past the end of the batch";
        return GV_WIRE_REC_BAD;
    }
    *id_p      = id;
    *payload_p = c->p + hl;
    *len_p     = len;
    c->p += total;
    return GV_WIRE_REC_OK;
}

#endif
