/* The batch format: records round-trip; truncated, oversized and garbage
 * batches are rejected without reading outside the buffer.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

#include "aggregator/wire.h"

#include <stdlib.h>

static int count_records(const uint8_t *p, size_t len, const char **why)
{
    gv_wire_cursor_t c = {p, p + len};
    const uint8_t   *payload;
    size_t           plen;
    uint16_t         id;
    int              n = 0, rc;

    while ((rc = gv_wire_rec_next(&c, &id, &payload, &plen, why)) ==
           GV_WIRE_REC_OK) {
        cr_assert(payload >= p && payload + plen <= p + len,
                  "record points outside the buffer");
        n++;
    }
    return (rc == GV_WIRE_REC_BAD) ? -1 : n;
}

Test(wire, records_round_trip)
{
    static const size_t lens[] = {0, 1, 3, 4, 8, 13, 65534, 65535, 70000};
    uint8_t            *buf = calloc(1, 1 << 18), payload[70000];
    size_t              off = 0, i;
    gv_wire_cursor_t    c;
    const uint8_t      *p;
    const char         *why;
    size_t              plen;
    uint16_t            id;

    for (i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)(i * 7);
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        size_t n = gv_wire_rec_put(buf + off, (uint16_t)(i + 1), payload,
                                   lens[i]);
        cr_assert_eq(n, gv_wire_rec_size(lens[i]));
        cr_assert_eq(n % 4, 0);
        off += n;
    }
    c.p   = buf;
    c.end = buf + off;
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        cr_assert_eq(gv_wire_rec_next(&c, &id, &p, &plen, &why),
                     GV_WIRE_REC_OK);
        cr_assert_eq(id, i + 1);
        cr_assert_eq(plen, lens[i]);
        cr_assert(memcmp(p, payload, plen) == 0);
    }
    cr_assert_eq(gv_wire_rec_next(&c, &id, &p, &plen, &why), GV_WIRE_REC_END);
    free(buf);
}

Test(wire, eight_byte_records_are_twelve_bytes)
{
    cr_assert_eq(gv_wire_rec_size(8), 12);
    cr_assert_eq(gv_wire_rec_size(0), 4);
}

Test(wire, truncated_and_oversized_are_rejected)
{
    uint8_t     b[64];
    const char *why = NULL;
    uint16_t    v;
    uint32_t    big;

    memset(b, 0, sizeof(b));
    /* header cut short */
    cr_assert_eq(count_records(b, 3, &why), -1);
    cr_assert_str_eq(why, "truncated record header");
    /* length runs past the end */
    v = 40;
    memcpy(b + 2, &v, 2);
    cr_assert_eq(count_records(b, 20, &why), -1);
    cr_assert(strstr(why, "past the end") != NULL);
    /* long record whose length needs no long header */
    v = GV_WIRE_LONG_REC;
    memcpy(b + 2, &v, 2);
    big = 10;
    memcpy(b + 4, &big, 4);
    cr_assert_eq(count_records(b, 64, &why), -1);
    /* long record beyond the cap */
    big = GV_WIRE_MAX_PAYLOAD + 1;
    memcpy(b + 4, &big, 4);
    cr_assert_eq(count_records(b, 64, &why), -1);
    /* padding missing after the last record */
    v = 5;
    memcpy(b + 2, &v, 2);
    cr_assert_eq(count_records(b, 9, &why), -1);
    cr_assert_eq(count_records(b, 12, &why), 1);
}

Test(wire, garbage_never_escapes_the_buffer)
{
    uint64_t s = 12345;
    int      round;

    for (round = 0; round < 20000; round++) {
        size_t   len = (size_t)(s % 97), i;
        uint8_t *b   = malloc(len + 1);
        const char *why;
        for (i = 0; i < len; i++) {
            s    = s * 6364136223846793005ull + 1442695040888963407ull;
            b[i] = (uint8_t)(s >> 56);
        }
        count_records(b, len, &why); /* asserts bounds inside */
        free(b);
        s = s * 6364136223846793005ull + 1;
    }
}
