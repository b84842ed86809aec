/* The tcp transport's wire format: frame header, HELLO payload, and a pure
 * encoder/decoder that the transport, the unit tests and the fuzzer share.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Everything here is static inline and depends only on libc and the status
 * codes of <grapevine/core.h>, so that the fuzz target can compile this
 * header on its own. Every byte the decoder looks at came from the network
 * and is untrusted: it never reads past the length it is given, never
 * trusts a length before checking it against the cap, and reports malformed
 * input with a reason instead of asserting.
 *
 * A frame on the wire (all integers little endian):
 *
 *   byte  0      1      2        3       4      5      6      7
 *       +------+------+--------+------+------+------+------+------+
 *       | 'G'  | 'v'  |version | type |   length (u32, LE)        |
 *       +------+------+--------+------+------+------+------+------+
 *       | payload: length bytes                                   |
 *       |   ...                                                   |
 *       +-----------------------------------+---------------------+
 *       | (payload continued)               | padding: 0..7 bytes |
 *       +-----------------------------------+---------------------+
 *
 * The whole frame (header + payload + padding) is a multiple of 8 bytes,
 * so that when frames sit back to back in a receive buffer every payload
 * starts 8-byte aligned. Padding bytes are sent as zero and ignored.
 *
 * Types and their payloads:
 *   HELLO (1)  exactly GV_TCP_HELLO_LEN bytes, the first frame each way on
 *              every connection:
 *
 *                0                16      20      24      28      32
 *                +----------------+-------+-------+-------+-------+
 *                | job key (16 B) | rank  | size  | proto | zero  |
 *                +----------------+-------+-------+-------+-------+
 *                rank, size, proto: u32 LE; zero: u32, must be 0.
 *
 *   DATA (2)   0..GV_TCP_FRAME_MAX_PAYLOAD bytes: one transport message
 *              (the upper layer's header followed by its payload).
 *   BYE  (3)   empty: the sender passed the final barrier and will send
 *              nothing more; an end of stream after it is not a failure.
 */
#ifndef GV_TRANSPORTS_TCP_FRAME_H
#define GV_TRANSPORTS_TCP_FRAME_H

#include <grapevine/core.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GV_TCP_MAGIC0         0x47u /* 'G' */
#define GV_TCP_MAGIC1         0x76u /* 'v' */
#define GV_TCP_PROTO_VERSION  1u
#define GV_TCP_FRAME_HDR_LEN  8u
#define GV_TCP_FRAME_ALIGN    8u
/* Largest payload of one frame. The AM layer fragments anything larger, so
 * this only has to be comfortably above its buffers (1 MiB + headers). */
#define GV_TCP_FRAME_MAX_PAYLOAD ((4u << 20) + 4096u)
#define GV_TCP_HELLO_LEN      32u
#define GV_TCP_KEY_LEN        16u

enum {
    GV_TCP_FRAME_HELLO = 1,
    GV_TCP_FRAME_DATA  = 2,
    GV_TCP_FRAME_BYE   = 3,
};

/* What the decoder says about the bytes at the head of a buffer. */
typedef enum {
    GV_TCP_DECODE_NEED_MORE = 0, /* a prefix of a valid frame: read more */
    GV_TCP_DECODE_FRAME     = 1, /* one complete frame */
    GV_TCP_DECODE_BAD       = 2, /* not a frame: close the connection */
} gv_tcp_decode_t;

typedef struct gv_tcp_frame {
    uint8_t     type;        /* GV_TCP_FRAME_* (FRAME) */
    size_t      off;         /* payload offset from the buffer start (FRAME) */
    size_t      len;         /* payload length (FRAME) */
    size_t      frame_len;   /* bytes to consume, padding included (FRAME) */
    size_t      need;        /* total bytes the frame needs (NEED_MORE; 0
                                while the header is incomplete) */
    const char *why;         /* static reason (BAD) */
} gv_tcp_frame_t;

typedef struct gv_tcp_hello {
    uint8_t  key[GV_TCP_KEY_LEN];
    uint32_t rank;
    uint32_t size;
    uint32_t proto;
} gv_tcp_hello_t;

static inline size_t gv_tcp_frame_padded(size_t payload_len)
{
    return (GV_TCP_FRAME_HDR_LEN + payload_len + (GV_TCP_FRAME_ALIGN - 1)) &
           ~(size_t)(GV_TCP_FRAME_ALIGN - 1);
}

static inline void gv_tcp_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline uint32_t gv_tcp_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
           ((uint32_t)p[3] << 24);
}

/* Write the 8-byte header of a frame whose payload is @a len bytes (the
 * caller checked len <= GV_TCP_FRAME_MAX_PAYLOAD). */
static inline void gv_tcp_frame_hdr_encode(uint8_t out[GV_TCP_FRAME_HDR_LEN],
                                           uint8_t type, uint32_t len)
{
    out[0] = GV_TCP_MAGIC0;
    out[1] = GV_TCP_MAGIC1;
    out[2] = GV_TCP_PROTO_VERSION;
    out[3] = type;
    gv_tcp_put32(out + 4, len);
}

/* 1 if this protocol version knows frame type @a type. */
static inline int gv_tcp_frame_type_known(uint8_t type)
{
    return (type == GV_TCP_FRAME_HELLO) || (type == GV_TCP_FRAME_DATA) ||
           (type == GV_TCP_FRAME_BYE);
}

/**
 * Decode the frame at the head of @a buf, of which @a avail bytes are
 * present. Header bytes are checked as soon as they arrive, so a stranger
 * that sends one wrong byte is told apart at once.
 * @param [out] f  filled as the result says (see gv_tcp_frame_t).
 * @return GV_TCP_DECODE_NEED_MORE, GV_TCP_DECODE_FRAME or GV_TCP_DECODE_BAD.
 */
static inline gv_tcp_decode_t gv_tcp_frame_decode(const void *buf,
                                                  size_t avail,
                                                  gv_tcp_frame_t *f)
{
    const uint8_t *p = (const uint8_t *)buf;
    uint32_t       len;
    size_t         total;

    f->type      = 0;
    f->off       = 0;
    f->len       = 0;
    f->frame_len = 0;
    f->need      = 0;
    f->why       = NULL;

    if ((avail >= 1) && (p[0] != GV_TCP_MAGIC0)) {
        f->why = "bad magic";
        return GV_TCP_DECODE_BAD;
    }
    if ((avail >= 2) && (p[1] != GV_TCP_MAGIC1)) {
        f->why = "bad magic";
        return GV_TCP_DECODE_BAD;
    }
    if ((avail >= 3) && (p[2] != GV_TCP_PROTO_VERSION)) {
        f->why = "unsupported protocol version";
        return GV_TCP_DECODE_BAD;
    }
    if ((avail >= 4) && !gv_tcp_frame_type_known(p[3])) {
        f->why = "unknown frame type";
        return GV_TCP_DECODE_BAD;
    }
    if (avail < GV_TCP_FRAME_HDR_LEN)
        return GV_TCP_DECODE_NEED_MORE;

    len = gv_tcp_get32(p + 4);
    switch (p[3]) {
    case GV_TCP_FRAME_HELLO:
        if (len != GV_TCP_HELLO_LEN) {
            f->why = "hello of the wrong length";
            return GV_TCP_DECODE_BAD;
        }
        break;
    case GV_TCP_FRAME_BYE:
        if (len != 0) {
            f->why = "bye with a payload";
            return GV_TCP_DECODE_BAD;
        }
        break;
    default: /* DATA */
        if (len > GV_TCP_FRAME_MAX_PAYLOAD) {
            f->why = "frame longer than the maximum";
            return GV_TCP_DECODE_BAD;
        }
        break;
    }

    total = gv_tcp_frame_padded(len);
    if (avail < total) {
        f->need = total;
        return GV_TCP_DECODE_NEED_MORE;
    }
    f->type      = p[3];
    f->off       = GV_TCP_FRAME_HDR_LEN;
    f->len       = len;
    f->frame_len = total;
    return GV_TCP_DECODE_FRAME;
}

/* A whole HELLO frame (header, payload; its length is already a multiple
 * of 8) into @a out. */
#define GV_TCP_HELLO_FRAME_LEN (GV_TCP_FRAME_HDR_LEN + GV_TCP_HELLO_LEN)

static inline void gv_tcp_hello_encode(uint8_t out[GV_TCP_HELLO_FRAME_LEN],
                                       const uint8_t key[GV_TCP_KEY_LEN],
                                       uint32_t rank, uint32_t size)
{
    uint8_t *p = out + GV_TCP_FRAME_HDR_LEN;

    gv_tcp_frame_hdr_encode(out, GV_TCP_FRAME_HELLO, GV_TCP_HELLO_LEN);
    memcpy(p, key, GV_TCP_KEY_LEN);
    gv_tcp_put32(p + 16, rank);
    gv_tcp_put32(p + 20, size);
    gv_tcp_put32(p + 24, GV_TCP_PROTO_VERSION);
    gv_tcp_put32(p + 28, 0);
}

/**
 * Parse a HELLO payload (what the decoder reported at f.off, f.len).
 * Checks only the shape; the key, rank and size are the caller's to judge.
 * @return GV_OK, or GV_ERR_PROTO with *why_p set to a static reason.
 */
static inline gv_status_t gv_tcp_hello_parse(const void *payload, size_t len,
                                             gv_tcp_hello_t *h,
                                             const char **why_p)
{
    const uint8_t *p = (const uint8_t *)payload;

    if (len != GV_TCP_HELLO_LEN) {
        *why_p = "hello of the wrong length";
        return GV_ERR_PROTO;
    }
    if (gv_tcp_get32(p + 28) != 0) {
        *why_p = "hello with a non-zero reserved field";
        return GV_ERR_PROTO;
    }
    memcpy(h->key, p, GV_TCP_KEY_LEN);
    h->rank  = gv_tcp_get32(p + 16);
    h->size  = gv_tcp_get32(p + 20);
    h->proto = gv_tcp_get32(p + 24);
    if (h->proto != GV_TCP_PROTO_VERSION) {
        *why_p = "hello with an unsupported protocol version";
        return GV_ERR_PROTO;
    }
    return GV_OK;
}

/* Compare two keys in time that does not depend on where they differ, so
 * that a stranger cannot learn the key a byte at a time. 1 if equal. */
static inline int gv_tcp_key_equal(const uint8_t *a, const uint8_t *b)
{
    volatile uint8_t diff = 0;
    size_t           i;

    for (i = 0; i < GV_TCP_KEY_LEN; i++)
        diff |= (uint8_t)(a[i] ^ b[i]);
    return diff == 0;
}

#endif
