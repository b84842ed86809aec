/* Payload sizes from 0 bytes to past 1 MiB, each verified byte for byte,
 * from every rank to the next and to itself, in order: first with
 * gv_am_send(), then with gv_am_send_nbi() from buffers that are all in
 * flight at once and overwritten as soon as gv_am_wait_local() returns,
 * then with gv_am_send_now() (every fourth message with gv_am_send(), so
 * that what is buffered ships ahead of the next gv_am_send_now(), and
 * direct sends follow batches still in flight, in order).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"
#include "aggregator/am_internal.h"
#include "aggregator/wire.h"
#include "core/core.h"
#include "core/env.h"

/* 8100 .. 32768 straddle the part boundaries of a message the ofi
 * transport splits over shm (parts of at most 4080 body bytes, inject_size
 * 4096 less its header; the AM layer adds 8 to 16 bytes), up to its limit
 * of about 16 KiB and past it. Only unbatched (GV_AGGREGATE=0, as
 * ofi/driver_ofi runs it too) does each message leave in a frame of its own. */
static const size_t sizes[] = {0, 1, 3, 7, 8, 9, 63, 64, 65, 1000, 4095,
                               4096, 4097, 8100, 8160, 8192, 12000, 12240,
                               16320, 16384, 16400, 20000, 32768, 65535,
                               65536, 65537, 100000, 262144, 1048575,
                               1048576, 1048577, (2u << 20) + 13};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static unsigned next_idx[2]; /* [0] from the left neighbour, [1] from self */
static gv_am_id_t id;

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    int      self = (src == gv_rank());
    unsigned k    = next_idx[self];

    MR_CHECK(k < NSIZES, "more messages than sent from rank %d", src);
    MR_CHECK(len == sizes[k], "from rank %d: message %u has %zu bytes, "
             "expected %zu", src, k, len, sizes[k]);
    MR_CHECK(mr_verify(payload, len, ((uint64_t)src << 32) | k),
             "corrupt %zu-byte payload from rank %d", len, src);
    next_idx[self]++;
}

static void check_counts(const char *how)
{
    MR_CHECK(next_idx[1] == NSIZES, "%s: %u of %zu messages to self", how,
             next_idx[1], NSIZES);
    if (gv_nranks() > 1)
        MR_CHECK(next_idx[0] == NSIZES, "%s: %u of %zu messages from the "
                 "left", how, next_idx[0], NSIZES);
}

/* Default batches fit one eager message of the library under the
 * transport, where it has a limit: Open MPI's 65480 bytes of data (64 KiB
 * less ob1's largest header, 56 bytes) and rxm's 16 KiB frame (with the
 * ofi transport's 16-byte header). A larger batch costs a rendezvous or
 * segmentation per batch. Elsewhere a batch is 64 KiB, or the transport's
 * largest message. */
static void check_batch_size(void)
{
    const gv_tl_attr_t *a  = &gv__ctx.tl->attr;
    const char         *tl = gv_transport_name();
    size_t              batch, lo, hi;

    if (gv__env.AGG_BYTES_set)
        return;
    batch = gv__am_memory_bound() / (gv__env.AGG_CREDITS + 1);
    if (strcmp(tl, "mpi") == 0) {
        lo = 60000;
        hi = 65536 - 56 - sizeof(gv_wire_hdr_t);
    } else if (strstr(a->detail, "ofi_rxm") != NULL) {
        if ((getenv("FI_OFI_RXM_EAGER_LIMIT") != NULL) ||
            (getenv("FI_OFI_RXM_BUFFER_SIZE") != NULL))
            return; /* rxm's limit is what the user set */
        lo = 15000;
        hi = 16384 - 16 - sizeof(gv_wire_hdr_t);
    } else {
        lo = hi = (a->max_msg - sizeof(gv_wire_hdr_t) < 64 * 1024)
                      ? a->max_msg - sizeof(gv_wire_hdr_t)
                      : 64 * 1024;
    }
    MR_CHECK((batch >= lo) && (batch <= hi),
             "batches of %zu bytes over %s (%s): want %zu .. %zu", batch, tl,
             a->detail, lo, hi);
}

int main(int argc, char **argv)
{
    uint8_t *buf = malloc(sizes[NSIZES - 1]);
    uint8_t *nbi[NSIZES];
    unsigned k;
    int      right;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_msg, NULL, &id));
    MR_CHECK(gv_am_max_payload() >= (1u << 20), "max payload %zu",
             gv_am_max_payload());
    check_batch_size();
    right = (gv_rank() + 1) % gv_nranks();
    gv_barrier();
    for (k = 0; k < NSIZES; k++) {
        mr_fill(buf, sizes[k], ((uint64_t)gv_rank() << 32) | k);
        if (right != gv_rank())
            MR_OK(gv_am_send(right, id, buf, sizes[k]));
        MR_OK(gv_am_send(gv_rank(), id, buf, sizes[k]));
    }
    /* Out of range is an error, not a crash. */
    MR_CHECK(gv_am_send(gv_nranks(), id, buf, 8) == GV_ERR_INVALID,
             "send to rank %d accepted", gv_nranks());
    MR_CHECK(gv_am_send(-1, id, buf, 8) == GV_ERR_INVALID, "rank -1");
    MR_CHECK(gv_am_send(0, (gv_am_id_t)(id + 100), buf, 8) == GV_ERR_INVALID,
             "unregistered handler id accepted");
    gv_barrier();
    check_counts("gv_am_send");

    /* Again without copies: every buffer stays in flight until
     * gv_am_wait_local(); scribbling on them right after must not reach
     * any receiver. */
    next_idx[0] = next_idx[1] = 0;
    gv_barrier();
    for (k = 0; k < NSIZES; k++) {
        nbi[k] = malloc(sizes[k] + 1);
        mr_fill(nbi[k], sizes[k], ((uint64_t)gv_rank() << 32) | k);
        if (right != gv_rank())
            MR_OK(gv_am_send_nbi(right, id, nbi[k], sizes[k]));
        MR_OK(gv_am_send_nbi(gv_rank(), id, nbi[k], sizes[k]));
    }
    MR_CHECK(gv_am_send_nbi(gv_nranks(), id, buf, 1u << 20) ==
                 GV_ERR_INVALID, "nbi send to rank %d accepted", gv_nranks());
    gv_am_wait_local();
    for (k = 0; k < NSIZES; k++) {
        memset(nbi[k], 0xa5, sizes[k]);
        free(nbi[k]);
    }
    gv_barrier();
    check_counts("gv_am_send_nbi");

    /* Again through gv_am_send_now(), whose messages of up to the
     * transport's max_id (ucx: 16 KiB) skip the batches; the buffer is
     * overwritten as soon as each call returns. The buffered ones (k % 4
     * == 1) miss 4095-4097 and 16320-16400, so that those sizes, around
     * ucx's 4 KiB frame and 16 KiB max_id and ofi's split limit, go
     * through gv_am_send_now(). To the own rank it is gv_am_send(). */
    next_idx[0] = next_idx[1] = 0;
    gv_barrier();
    for (k = 0; k < NSIZES; k++) {
        gv_status_t (*send)(int, gv_am_id_t, const void *, size_t) =
            (k % 4 == 1) ? gv_am_send : gv_am_send_now;

        mr_fill(buf, sizes[k], ((uint64_t)gv_rank() << 32) | k);
        if (right != gv_rank())
            MR_OK(send(right, id, buf, sizes[k]));
        MR_OK(send(gv_rank(), id, buf, sizes[k]));
        memset(buf, 0x5a, sizes[k]);
    }
    gv_barrier();
    check_counts("gv_am_send_now");
    if (gv_rank() == 0)
        printf("sizes: 0 B .. %zu B over %s: ok\n", sizes[NSIZES - 1],
               gv_transport_name());
    free(buf);
    gv_finalize();
    return 0;
}
