/* Per-pair FIFO under a mix of tiny and large messages: every rank sends
 * every other rank a stream where large payloads (rendezvous in UCX, so
 * their data lands after later eager messages) alternate with tiny ones at
 * random; each receiver checks that sequence numbers arrive in order and
 * that every payload is intact. Runs over any transport; written for the
 * ucx backend's reorder stage (payloads must also be 4-byte aligned, as
 * am.h promises, which UCX's tcp does not give by itself). Options: -n
 * messages per pair, -L largest, -N: one message in three at random goes
 * out with gv_am_send_now() (straight to the transport when nothing is
 * buffered to its rank, else behind what is), the rest with gv_am_send(),
 * and one in eight (taken from the tiny ones) is of 4-16 KiB: what
 * gv_am_send_now() hands a transport with am_send_id whole (ucx: format I
 * frames from its mid-size buffers, which ucx/driver_ucx forges copies of).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

typedef struct {
    uint64_t seq;
    uint64_t src;
} order_hdr_t;

static gv_am_id_t id;
static uint64_t  *expect;    /* next seq per source */
static uint64_t   received;

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    order_hdr_t h;

    MR_CHECK(len >= sizeof(h), "%zu-byte message from rank %d", len, src);
    MR_CHECK(((uintptr_t)payload & 3) == 0, "payload at %p from rank %d is "
             "not 4-byte aligned (gv_am_handler_fn_t promises it)", payload,
             src);
    memcpy(&h, payload, sizeof(h));
    MR_CHECK(h.src == (uint64_t)src, "message says it is from rank %llu, "
             "arrived from rank %d", (unsigned long long)h.src, src);
    MR_CHECK(h.seq == expect[src], "from rank %d: seq %llu arrived, "
             "expected %llu (out of order)", src, (unsigned long long)h.seq,
             (unsigned long long)expect[src]);
    MR_CHECK(mr_verify((const uint8_t *)payload + sizeof(h), len - sizeof(h),
                       ((uint64_t)src << 32) ^ h.seq),
             "corrupt %zu-byte payload, seq %llu from rank %d", len,
             (unsigned long long)h.seq, src);
    expect[src]++;
    received++;
}

static int all_in(void *arg)
{
    return received >= *(uint64_t *)arg;
}

int main(int argc, char **argv)
{
    uint64_t  nmsg = 600, largest = 300000, mid_max, rng, target, *sent;
    uint8_t  *buf;
    int       c, me, n, k, left, now = 0;

    mr_init(&argc, &argv);
    while ((c = getopt(argc, argv, "n:L:N")) != -1) {
        switch (c) {
        case 'n': nmsg = strtoull(optarg, NULL, 0); break;
        case 'L': largest = strtoull(optarg, NULL, 0); break;
        case 'N': now = 1; break;
        default:
            gv_abort(2, "usage: mr_ucx_order [-n msgs per pair] [-L bytes] "
                        "[-N]");
        }
    }
    me = gv_rank();
    n  = gv_nranks();
    if (largest > gv_am_max_payload())
        largest = gv_am_max_payload();
    MR_CHECK(largest >= 10000, "-L %llu is too small (large messages are "
             "9000 bytes and up; at least 10000)",
             (unsigned long long)largest);
    mid_max = (largest < 16384) ? largest : 16384;
    MR_OK(gv_am_register(on_msg, NULL, &id));
    expect = calloc((size_t)n, sizeof(*expect));
    sent   = calloc((size_t)n, sizeof(*sent));
    buf    = malloc(largest);
    MR_CHECK((expect != NULL) && (sent != NULL) && (buf != NULL), "oom");
    rng = 0x5eed0000u + (uint64_t)me;
    /* A length whose sum with the header wraps must not slip past the
     * checks of the path that hands a message straight to the
     * transport (found in review). */
    MR_CHECK(gv_am_send_now((me + 1) % n, id, buf, (size_t)0 - 8) ==
                 GV_ERR_INVALID,
             "gv_am_send_now() of 2^64-8 bytes was not refused");
    gv_barrier();

    /* Round-robin over destinations so that every pair sees the mix. */
    left = (n - 1) * (int)nmsg;
    while (left > 0) {
        for (k = 1; k < n; k++) {
            int         dst = (me + k) % n;
            uint64_t    r   = mr_rand(&rng);
            size_t      len;
            order_hdr_t h;

            if (sent[dst] == nmsg)
                continue;
            /* One in four is large: past UCX's rendezvous threshold for
             * shared memory (8 KiB) and usually for tcp (20 KiB). With -N
             * one in eight is mid-size: past 4 KiB, at most the 16 KiB
             * that gv_am_send_now() passes on whole (ucx's max_id). */
            if ((r & 3) == 0)
                len = 9000 + (size_t)((r >> 8) % (largest - 9000));
            else if (now && ((r & 7) == 1))
                len = 4097 + (size_t)((r >> 8) % (mid_max - 4096));
            else
                len = sizeof(h) + (size_t)((r >> 8) % 48);
            h.seq = sent[dst];
            h.src = (uint64_t)me;
            memcpy(buf, &h, sizeof(h));
            mr_fill(buf + sizeof(h), len - sizeof(h),
                    ((uint64_t)me << 32) ^ h.seq);
            if (now && ((r >> 40) % 3 == 0))
                MR_OK(gv_am_send_now(dst, id, buf, len));
            else
                MR_OK(gv_am_send(dst, id, buf, len));
            sent[dst]++;
            left--;
        }
        gv_progress();
    }
    gv_flush();
    target = (uint64_t)(n - 1) * nmsg;
    gv_wait(all_in, &target);
    gv_barrier();
    MR_CHECK(received == target, "received %llu, expected %llu",
             (unsigned long long)received, (unsigned long long)target);
    if (me == 0)
        printf("order: %d ranks, %llu messages per pair up to %llu B over "
               "%s%s: in order and intact\n", n, (unsigned long long)nmsg,
               (unsigned long long)largest, gv_transport_name(),
               now ? ", a third with gv_am_send_now()" : "");
    gv_finalize();
    free(buf);
    free(sent);
    free(expect);
    return 0;
}
