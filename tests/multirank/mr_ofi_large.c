/* Large and small messages interleaved, in per-sender order. The ofi
 * backend sends frames above 128 KiB as tagged messages into a few
 * dedicated buffers and everything else through its multi-receive
 * buffers, so the two kinds complete independently and the sequence
 * numbers must put them back in order; with many large messages in flight
 * at once (more than there are dedicated buffers), the provider holds the
 * rest as unexpected messages. Over shm, frames past its 4 KiB inject size
 * and up to four parts go as injected parts that the receiver puts back
 * together; a third of those messages here leave with their first part
 * only and owe the rest (gv__tl_ofi_owe: the path of a part that met
 * EAGAIN), so that sends behind them must wait. Every rank sends a mixed
 * stream to every other rank (all-to-all), then all of them to rank 0 at
 * once (fan-in), half with gv_am_send() and half with gv_am_send_nbi();
 * receivers check order, length and every byte. Runs over any transport.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#if GV_HAVE_OFI
#include "core/core.h"
#include "transports/ofi.h"
#endif

#define NMSG 40

/* Sizes around the ofi thresholds: inject (4 KiB), parts (4080 bytes
 * each, up to 16320), the multi-receive limit (128 KiB plus headers), the
 * largest frame (1 MiB plus headers). */
static const size_t sizes[] = {8,      1000,   4097,    65536,  131000,
                               131072, 131073, 200000,  524288, 1048576,
                               24,     1048000, 6000,   8160,   12000,
                               16300,  16320,   16400};
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static gv_am_id_t id;
static uint32_t  *next_seq;   /* per source: the seq expected next */
static uint64_t   received;

static size_t size_of(int src, uint32_t seq)
{
    return sizes[((unsigned)src * 5u + seq * 7u) % NSIZES];
}

static uint64_t seed_of(int src, uint32_t seq)
{
    return ((uint64_t)src << 32) | seq;
}

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    uint32_t seq;

    MR_CHECK((src >= 0) && (src < gv_nranks()) && (src != gv_rank()),
             "message from rank %d", src);
    MR_CHECK(len >= 8, "%zu-byte message from rank %d", len, src);
    memcpy(&seq, payload, sizeof(seq));
    MR_CHECK(seq == next_seq[src], "from rank %d: seq %u arrived, expected "
             "%u", src, seq, next_seq[src]);
    MR_CHECK(len == size_of(src, seq), "from rank %d: seq %u has %zu bytes, "
             "expected %zu", src, seq, len, size_of(src, seq));
    MR_CHECK(mr_verify((const uint8_t *)payload + 8, len - 8,
                       seed_of(src, seq)),
             "corrupt %zu-byte message %u from rank %d", len, seq, src);
    next_seq[src]++;
    received++;
}

static int received_all(void *arg)
{
    return received >= *(uint64_t *)arg;
}

/* Send messages [first, first + n) of this rank's stream to dst: even ones
 * with gv_am_send(), odd ones with gv_am_send_nbi(), each from its own
 * buffer, kept in bufs[] until gv_am_wait_local(). */
static void send_stream(int dst, uint32_t first, uint32_t n, uint8_t **bufs)
{
    uint32_t seq;

    for (seq = first; seq < first + n; seq++) {
        size_t   len = size_of(gv_rank(), seq);
        uint8_t *p   = malloc(len);

        bufs[seq - first] = p;
        memcpy(p, &seq, sizeof(seq));
        memset(p + sizeof(seq), 0, 8 - sizeof(seq));
        mr_fill(p + 8, len - 8, seed_of(gv_rank(), seq));
        if (seq % 2 == 0)
            MR_OK(gv_am_send(dst, id, p, len));
        else
            MR_OK(gv_am_send_nbi(dst, id, p, len));
    }
}

/* Scribble over the buffers first: nothing sent from them may change. */
static void free_bufs(uint8_t **bufs, int n)
{
    int k;

    for (k = 0; k < n; k++) {
        if (bufs[k] != NULL) {
            memset(bufs[k], 0xa5, 8);
            free(bufs[k]);
            bufs[k] = NULL;
        }
    }
}

int main(int argc, char **argv)
{
    int       nranks, me, dst;
    uint8_t **bufs;
    uint64_t  want;
    uint32_t *sent_to;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_msg, NULL, &id));
    nranks = gv_nranks();
    me     = gv_rank();
    if (nranks < 2)
        mr_skip("needs 2 ranks");
    next_seq = calloc((size_t)nranks, sizeof(*next_seq));
    sent_to  = calloc((size_t)nranks, sizeof(*sent_to));
    bufs     = calloc((size_t)nranks * NMSG, sizeof(*bufs));
#if GV_HAVE_OFI
    gv__tl_ofi_owe(gv__ctx.tl, NMSG / 3, 0);
#endif
    gv_barrier();

    /* All-to-all: every rank streams to every other one at once. */
    for (dst = 0; dst < nranks; dst++)
        if (dst != me) {
            send_stream(dst, 0, NMSG, bufs + dst * NMSG);
            sent_to[dst] = NMSG;
        }
    want = (uint64_t)(nranks - 1) * NMSG;
    gv_wait(received_all, &want);
    gv_am_wait_local();
    free_bufs(bufs, nranks * NMSG);
    gv_barrier();

    /* Fan-in: everybody streams to rank 0, which takes the most large
     * messages at once. */
    if (me != 0)
        send_stream(0, sent_to[0], NMSG, bufs);
    else
        want += (uint64_t)(nranks - 1) * NMSG;
    gv_wait(received_all, &want);
    gv_am_wait_local();
    free_bufs(bufs, nranks * NMSG);
    gv_barrier();

#if GV_HAVE_OFI
    {
        gv_tl_ofi_counters_t c;

        /* Where messages go in parts, some did and owed theirs. */
        gv__tl_ofi_counters(gv__ctx.tl, &c);
        MR_CHECK((c.split_max == 0) || ((c.split > 0) && (c.owed > 0)),
                 "over %s: %llu messages sent in parts, %llu of them owed "
                 "(parts up to %zu bytes)", gv_transport_name(),
                 (unsigned long long)c.split, (unsigned long long)c.owed,
                 c.split_max);
    }
#endif
    if (me == 0)
        printf("large and small messages interleaved over %s: ok\n",
               gv_transport_name());
    free(bufs);
    free(sent_to);
    free(next_seq);
    gv_finalize();
    return 0;
}
