/* Unit tests of the tcp wire format (transports/tcp_frame.h): encoding,
 * decoding, and the rejection of everything that is not a frame.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "transports/tcp_frame.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t test_key[GV_TCP_KEY_LEN] = {
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
};

/* Build one DATA frame of @a len payload bytes (pattern i*7+seed) at buf;
 * returns the frame length. */
static size_t make_data(uint8_t *buf, size_t len, uint8_t seed)
{
    size_t flen = gv_tcp_frame_padded(len);
    size_t i;

    memset(buf, 0xee, flen); /* padding content must not matter */
    gv_tcp_frame_hdr_encode(buf, GV_TCP_FRAME_DATA, (uint32_t)len);
    for (i = 0; i < len; i++)
        buf[GV_TCP_FRAME_HDR_LEN + i] = (uint8_t)(i * 7 + seed);
    return flen;
}

Test(tcp_frame, header_layout_is_little_endian_with_magic)
{
    uint8_t h[GV_TCP_FRAME_HDR_LEN];

    gv_tcp_frame_hdr_encode(h, GV_TCP_FRAME_DATA, 0x01020304u);
    cr_assert_eq(h[0], 'G');
    cr_assert_eq(h[1], 'v');
    cr_assert_eq(h[2], GV_TCP_PROTO_VERSION);
    cr_assert_eq(h[3], GV_TCP_FRAME_DATA);
    cr_assert_eq(h[4], 0x04);
    cr_assert_eq(h[5], 0x03);
    cr_assert_eq(h[6], 0x02);
    cr_assert_eq(h[7], 0x01);
}

Test(tcp_frame, padded_length_is_multiple_of_eight)
{
    cr_assert_eq(gv_tcp_frame_padded(0), 8);
    cr_assert_eq(gv_tcp_frame_padded(1), 16);
    cr_assert_eq(gv_tcp_frame_padded(8), 16);
    cr_assert_eq(gv_tcp_frame_padded(9), 24);
    cr_assert_eq(gv_tcp_frame_padded(GV_TCP_HELLO_LEN),
                 GV_TCP_HELLO_FRAME_LEN);
}

Test(tcp_frame, data_round_trip_for_many_sizes)
{
    static const size_t sizes[] = { 0, 1, 7, 8, 9, 31, 32, 33, 1000, 65536,
                                    GV_TCP_FRAME_MAX_PAYLOAD };
    size_t  k;
    uint8_t *buf = malloc(gv_tcp_frame_padded(GV_TCP_FRAME_MAX_PAYLOAD));

    cr_assert_not_null(buf);
    for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        gv_tcp_frame_t f;
        size_t         flen = make_data(buf, sizes[k], (uint8_t)k);
        size_t         i;

        cr_assert_eq(gv_tcp_frame_decode(buf, flen, &f), GV_TCP_DECODE_FRAME,
                     "size %zu", sizes[k]);
        cr_assert_eq(f.type, GV_TCP_FRAME_DATA);
        cr_assert_eq(f.off, GV_TCP_FRAME_HDR_LEN);
        cr_assert_eq(f.len, sizes[k]);
        cr_assert_eq(f.frame_len, flen);
        cr_assert_eq(f.off % 8, 0);
        for (i = 0; i < f.len; i++)
            cr_assert_eq(buf[f.off + i], (uint8_t)(i * 7 + k));
    }
    free(buf);
}

Test(tcp_frame, every_truncation_needs_more)
{
    uint8_t        buf[256];
    size_t         flen = make_data(buf, 100, 3);
    size_t         avail;
    gv_tcp_frame_t f;

    for (avail = 0; avail < flen; avail++) {
        cr_assert_eq(gv_tcp_frame_decode(buf, avail, &f),
                     GV_TCP_DECODE_NEED_MORE, "avail %zu", avail);
        /* Once the header is in, the decoder says how much it needs. */
        if (avail >= GV_TCP_FRAME_HDR_LEN)
            cr_assert_eq(f.need, flen);
        else
            cr_assert_eq(f.need, 0);
    }
    cr_assert_eq(gv_tcp_frame_decode(buf, flen, &f), GV_TCP_DECODE_FRAME);
}

Test(tcp_frame, back_to_back_frames_decode_in_order)
{
    uint8_t        buf[1024];
    size_t         pos = 0, n = 0, lens[5] = { 3, 0, 17, 64, 5 };
    gv_tcp_frame_t f;
    int            k;

    for (k = 0; k < 5; k++)
        pos += make_data(buf + pos, lens[k], (uint8_t)k);
    size_t end = pos;
    pos        = 0;
    while (gv_tcp_frame_decode(buf + pos, end - pos, &f) ==
           GV_TCP_DECODE_FRAME) {
        cr_assert_eq(f.len, lens[n]);
        cr_assert_eq((pos + f.off) % 8, 0, "payload aligned");
        pos += f.frame_len;
        n++;
    }
    cr_assert_eq(n, 5);
    cr_assert_eq(pos, end);
}

Test(tcp_frame, oversized_length_is_bad_before_any_payload)
{
    uint8_t        h[GV_TCP_FRAME_HDR_LEN];
    gv_tcp_frame_t f;

    gv_tcp_frame_hdr_encode(h, GV_TCP_FRAME_DATA,
                            GV_TCP_FRAME_MAX_PAYLOAD + 1);
    cr_assert_eq(gv_tcp_frame_decode(h, sizeof(h), &f), GV_TCP_DECODE_BAD);
    cr_assert_not_null(f.why);
    cr_assert_eq(f.need, 0);

    gv_tcp_frame_hdr_encode(h, GV_TCP_FRAME_DATA, 0xffffffffu);
    cr_assert_eq(gv_tcp_frame_decode(h, sizeof(h), &f), GV_TCP_DECODE_BAD);
}

Test(tcp_frame, bad_magic_is_bad_from_the_first_byte)
{
    uint8_t        buf[64];
    gv_tcp_frame_t f;
    size_t         flen = make_data(buf, 10, 0);

    buf[0] = 'X';
    cr_assert_eq(gv_tcp_frame_decode(buf, 1, &f), GV_TCP_DECODE_BAD);
    cr_assert_str_eq(f.why, "bad magic");
    buf[0] = 'G';
    buf[1] = 'V';
    cr_assert_eq(gv_tcp_frame_decode(buf, 1, &f), GV_TCP_DECODE_NEED_MORE);
    cr_assert_eq(gv_tcp_frame_decode(buf, flen, &f), GV_TCP_DECODE_BAD);
    cr_assert_str_eq(f.why, "bad magic");
}

Test(tcp_frame, bad_version_is_bad)
{
    uint8_t        buf[64];
    gv_tcp_frame_t f;

    make_data(buf, 10, 0);
    buf[2] = GV_TCP_PROTO_VERSION + 1;
    cr_assert_eq(gv_tcp_frame_decode(buf, 3, &f), GV_TCP_DECODE_BAD);
    cr_assert_str_eq(f.why, "unsupported protocol version");
    buf[2] = 0;
    cr_assert_eq(gv_tcp_frame_decode(buf, sizeof(buf), &f),
                 GV_TCP_DECODE_BAD);
}

Test(tcp_frame, unknown_type_is_bad)
{
    uint8_t        buf[64];
    gv_tcp_frame_t f;
    int            type;

    for (type = 0; type < 256; type++) {
        make_data(buf, 0, 0);
        buf[3] = (uint8_t)type;
        gv_tcp_decode_t r = gv_tcp_frame_decode(buf, 4, &f);
        if ((type == GV_TCP_FRAME_HELLO) || (type == GV_TCP_FRAME_DATA) ||
            (type == GV_TCP_FRAME_BYE)) {
            cr_assert_eq(r, GV_TCP_DECODE_NEED_MORE, "type %d", type);
        } else {
            cr_assert_eq(r, GV_TCP_DECODE_BAD, "type %d", type);
            cr_assert_str_eq(f.why, "unknown frame type");
        }
    }
}

Test(tcp_frame, hello_and_bye_have_fixed_lengths)
{
    uint8_t        h[GV_TCP_FRAME_HDR_LEN];
    gv_tcp_frame_t f;

    gv_tcp_frame_hdr_encode(h, GV_TCP_FRAME_HELLO, GV_TCP_HELLO_LEN + 8);
    cr_assert_eq(gv_tcp_frame_decode(h, sizeof(h), &f), GV_TCP_DECODE_BAD);
    gv_tcp_frame_hdr_encode(h, GV_TCP_FRAME_HELLO, 1u << 30);
    cr_assert_eq(gv_tcp_frame_decode(h, sizeof(h), &f), GV_TCP_DECODE_BAD);
    gv_tcp_frame_hdr_encode(h, GV_TCP_FRAME_BYE, 0);
    cr_assert_eq(gv_tcp_frame_decode(h, sizeof(h), &f), GV_TCP_DECODE_FRAME);
    cr_assert_eq(f.type, GV_TCP_FRAME_BYE);
    cr_assert_eq(f.frame_len, GV_TCP_FRAME_HDR_LEN);
    gv_tcp_frame_hdr_encode(h, GV_TCP_FRAME_BYE, 8);
    cr_assert_eq(gv_tcp_frame_decode(h, sizeof(h), &f), GV_TCP_DECODE_BAD);
}

Test(tcp_frame, hello_round_trip)
{
    uint8_t        buf[GV_TCP_HELLO_FRAME_LEN];
    gv_tcp_frame_t f;
    gv_tcp_hello_t h;
    const char    *why = NULL;

    gv_tcp_hello_encode(buf, test_key, 5, 8);
    cr_assert_eq(gv_tcp_frame_decode(buf, sizeof(buf), &f),
                 GV_TCP_DECODE_FRAME);
    cr_assert_eq(f.type, GV_TCP_FRAME_HELLO);
    cr_assert_eq(f.frame_len, sizeof(buf));
    cr_assert_eq(gv_tcp_hello_parse(buf + f.off, f.len, &h, &why), GV_OK);
    cr_assert_eq(h.rank, 5);
    cr_assert_eq(h.size, 8);
    cr_assert_eq(h.proto, GV_TCP_PROTO_VERSION);
    cr_assert(gv_tcp_key_equal(h.key, test_key));
}

Test(tcp_frame, hello_with_bad_fields_is_rejected)
{
    uint8_t        buf[GV_TCP_HELLO_FRAME_LEN];
    gv_tcp_hello_t h;
    const char    *why = NULL;
    uint8_t       *p   = buf + GV_TCP_FRAME_HDR_LEN;

    gv_tcp_hello_encode(buf, test_key, 1, 2);
    cr_assert_eq(gv_tcp_hello_parse(p, GV_TCP_HELLO_LEN - 1, &h, &why),
                 GV_ERR_PROTO);
    cr_assert_not_null(why);

    p[28] = 1; /* reserved */
    cr_assert_eq(gv_tcp_hello_parse(p, GV_TCP_HELLO_LEN, &h, &why),
                 GV_ERR_PROTO);
    p[28] = 0;
    p[24] = GV_TCP_PROTO_VERSION + 1; /* protocol version inside hello */
    cr_assert_eq(gv_tcp_hello_parse(p, GV_TCP_HELLO_LEN, &h, &why),
                 GV_ERR_PROTO);
    cr_assert_str_eq(why, "hello with an unsupported protocol version");
}

Test(tcp_frame, key_compare_sees_every_byte)
{
    uint8_t  k[GV_TCP_KEY_LEN];
    unsigned i;

    memcpy(k, test_key, sizeof(k));
    cr_assert(gv_tcp_key_equal(k, test_key));
    for (i = 0; i < GV_TCP_KEY_LEN; i++) {
        k[i] ^= 0x80;
        cr_assert_not(gv_tcp_key_equal(k, test_key), "byte %u", i);
        k[i] ^= 0x80;
    }
}

Test(tcp_frame, garbage_never_decodes_past_the_buffer)
{
    /* Random bytes: whatever the decoder says must be consistent with the
     * bytes it was given. */
    uint8_t buf[128];
    unsigned seed = 12345;
    int      iter, i;

    for (iter = 0; iter < 20000; iter++) {
        gv_tcp_frame_t f;
        size_t         avail;

        for (i = 0; i < (int)sizeof(buf); i++) {
            seed   = seed * 1103515245u + 12345u;
            buf[i] = (uint8_t)(seed >> 16);
        }
        /* Make half of them look like frames so that the length checks
         * run too. */
        if (iter & 1) {
            buf[0] = 'G';
            buf[1] = 'v';
            buf[2] = GV_TCP_PROTO_VERSION;
            buf[3] = (uint8_t)(1 + (iter >> 1) % 3);
        }
        avail = (size_t)(seed % (sizeof(buf) + 1));
        switch (gv_tcp_frame_decode(buf, avail, &f)) {
        case GV_TCP_DECODE_FRAME:
            cr_assert_leq(f.frame_len, avail);
            cr_assert_leq(f.off + f.len, f.frame_len);
            cr_assert_eq(f.frame_len % 8, 0);
            break;
        case GV_TCP_DECODE_NEED_MORE:
            cr_assert(f.need == 0 || f.need > avail);
            cr_assert_leq(f.need, gv_tcp_frame_padded(
                                      GV_TCP_FRAME_MAX_PAYLOAD));
            break;
        case GV_TCP_DECODE_BAD:
            cr_assert_not_null(f.why);
            break;
        }
    }
}

Test(tcp_frame, plain_text_is_rejected)
{
    const char    *http = "GET / HTTP/1.0\r\n\r\n";
    gv_tcp_frame_t f;

    cr_assert_eq(gv_tcp_frame_decode(http, strlen(http), &f),
                 GV_TCP_DECODE_BAD);
    cr_assert_eq(gv_tcp_frame_decode("SSH-2.0-OpenSSH", 15, &f),
                 GV_TCP_DECODE_BAD);
}
