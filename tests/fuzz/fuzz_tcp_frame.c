/* libFuzzer target for the tcp frame decoder (transports/tcp_frame.h).
 * Consumes frames from the input the way transports/tcp.c does (decode
 * until need-more or malformed, in chunks that arrive like reads), and
 * checks that the decoder never claims bytes it was not given.
 * Compiled alone: only tcp_frame.h and libc. SPDX-License-Identifier: BSD-3-Clause */
#include "transports/tcp_frame.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(_c)                                                            \
    do {                                                                     \
        if (!(_c)) {                                                         \
            fprintf(stderr, "fuzz_tcp_frame: %s:%d: %s\n", __FILE__,         \
                    __LINE__, #_c);                                          \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* Decode everything complete at the head of buf[0..len); returns how many
 * bytes were consumed, or (size_t)-1 for a malformed frame. */
static size_t consume(const uint8_t *buf, size_t len, size_t *need_p)
{
    size_t         pos = 0;
    gv_tcp_frame_t f;

    *need_p = 0;
    for (;;) {
        /* Decode from an exact-size heap copy so that ASan sees any read
         * past what the decoder was given. */
        size_t   avail = len - pos;
        uint8_t *copy  = malloc(avail ? avail : 1);
        gv_tcp_decode_t r;

        CHECK(copy != NULL);
        memcpy(copy, buf + pos, avail);
        r = gv_tcp_frame_decode(copy, avail, &f);
        switch (r) {
        case GV_TCP_DECODE_FRAME:
            CHECK(f.frame_len <= avail);
            CHECK(f.frame_len >= GV_TCP_FRAME_HDR_LEN);
            CHECK(f.frame_len % GV_TCP_FRAME_ALIGN == 0);
            CHECK(f.off == GV_TCP_FRAME_HDR_LEN);
            CHECK(f.off + f.len <= f.frame_len);
            CHECK(f.len <= GV_TCP_FRAME_MAX_PAYLOAD);
            CHECK(f.frame_len == gv_tcp_frame_padded(f.len));
            if (f.type == GV_TCP_FRAME_HELLO) {
                gv_tcp_hello_t h;
                const char    *why = NULL;
                CHECK(f.len == GV_TCP_HELLO_LEN);
                if (gv_tcp_hello_parse(copy + f.off, f.len, &h, &why) !=
                    GV_OK)
                    CHECK(why != NULL);
            } else if (f.type == GV_TCP_FRAME_BYE) {
                CHECK(f.len == 0);
            } else {
                CHECK(f.type == GV_TCP_FRAME_DATA);
            }
            /* Touch the whole payload as a receive callback would. */
            {
                volatile uint8_t sum = 0;
                for (size_t i = 0; i < f.len; i++)
                    sum ^= copy[f.off + i];
                (void)sum;
            }
            free(copy);
            pos += f.frame_len;
            continue;
        case GV_TCP_DECODE_NEED_MORE:
            CHECK((f.need == 0) || (f.need > avail));
            CHECK(f.need <= gv_tcp_frame_padded(GV_TCP_FRAME_MAX_PAYLOAD));
            if (avail >= GV_TCP_FRAME_HDR_LEN)
                CHECK(f.need != 0);
            *need_p = f.need;
            free(copy);
            return pos;
        case GV_TCP_DECODE_BAD:
            CHECK(f.why != NULL);
            free(copy);
            return (size_t)-1;
        }
        CHECK(0 && "decoder returned an unknown result");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first byte picks a read size, so that the same bytes arrive in
     * different pieces: a receive buffer that fills a chunk at a time,
     * consumes complete frames and keeps the rest, like tcp.c. */
    size_t   chunk, in = 1, have = 0, need = 0, whole;
    uint8_t *rx;

    if (size == 0)
        return 0;
    chunk = (size_t)data[0] % 61 + 1;
    data++;
    size--;
    rx = malloc(size ? size : 1);
    CHECK(rx != NULL);

    /* Reference: decoding all at once gives the same consumption as
     * decoding piecewise. */
    whole = consume(data, size, &need);

    size_t done = 0;
    int    bad  = 0;
    while ((in - 1) < size) {
        size_t n = chunk;
        if (n > size - (in - 1))
            n = size - (in - 1);
        memcpy(rx + have, data + (in - 1), n);
        have += n;
        in   += n;
        size_t used = consume(rx, have, &need);
        if (used == (size_t)-1) {
            bad = 1;
            break;
        }
        memmove(rx, rx + used, have - used);
        have -= used;
        done += used;
    }
    if (whole == (size_t)-1)
        CHECK(bad);
    else
        CHECK(!bad && (done == whole));
    free(rx);
    return 0;
}
