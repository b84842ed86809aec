/* libFuzzer target: the aggregator's batch unpacker over arbitrary bytes.
 * Built alone by `make fuzz-run` (clang -fsanitize=fuzzer,address,undefined).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "aggregator/wire.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Copy into an exact-size heap buffer so ASan sees any overread. */
    uint8_t         *buf = malloc(size ? size : 1);
    gv_wire_cursor_t c;
    const uint8_t   *payload;
    const char      *why;
    size_t           len, seen = 0;
    uint16_t         id;
    int              rc;

    memcpy(buf, data, size);
    c.p   = buf;
    c.end = buf + size;
    while ((rc = gv_wire_rec_next(&c, &id, &payload, &len, &why)) ==
           GV_WIRE_REC_OK) {
        volatile uint8_t sink = 0;
        size_t           i;
        if ((payload < buf) || (payload + len > buf + size) || (c.p > c.end))
            abort();
        for (i = 0; i < len; i++) /* touch every payload byte */
            sink ^= payload[i];
        (void)sink;
        seen += gv_wire_rec_size(len);
        if (seen > size)
            abort();
    }
    if ((rc == GV_WIRE_REC_BAD) && (why == NULL))
        abort();
    free(buf);
    return 0;
}
