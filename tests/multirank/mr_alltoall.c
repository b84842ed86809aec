/* All-to-all active messages of random sizes with content checks and
 * per-pair ordering: every rank sends N messages to every rank (itself
 * included); each carries its sequence number and bytes derived from
 * (src, dst, seq). Usage: mr_alltoall [-n msgs_per_pair] [-S max_size]
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

typedef struct {
    uint32_t src, dst;
    uint64_t seq;
} hdr_t;

static uint64_t  *next_seq;   /* per source: the sequence expected next */
static uint64_t   received;
static gv_am_id_t id;

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    hdr_t h;

    MR_CHECK(len >= sizeof(h), "message of %zu bytes from %d", len, src);
    memcpy(&h, payload, sizeof(h));
    MR_CHECK((int)h.src == src, "header says source %u, transport says %d",
             h.src, src);
    MR_CHECK((int)h.dst == gv_rank(), "message for rank %u arrived at %d",
             h.dst, gv_rank());
    MR_CHECK(h.seq == next_seq[src], "from rank %d: got sequence %llu, "
             "expected %llu (reordered or lost)", src,
             (unsigned long long)h.seq, (unsigned long long)next_seq[src]);
    MR_CHECK(mr_verify((const uint8_t *)payload + sizeof(h), len - sizeof(h),
                       ((uint64_t)src << 48) ^ ((uint64_t)h.dst << 32) ^
                           h.seq),
             "corrupt payload from rank %d seq %llu (%zu bytes)", src,
             (unsigned long long)h.seq, len);
    next_seq[src]++;
    received++;
}

int main(int argc, char **argv)
{
    uint64_t n = 2000, max_size = 4096, rng = 42, seq, i;
    uint8_t *buf;
    int      c, dst, P;

    while ((c = getopt(argc, argv, "n:S:")) != -1) {
        if (c == 'n')
            n = strtoull(optarg, NULL, 0);
        else if (c == 'S')
            max_size = strtoull(optarg, NULL, 0);
        else
            return 2;
    }
    if (max_size < sizeof(hdr_t))
        max_size = sizeof(hdr_t);
    mr_init(&argc, &argv);
    P        = gv_nranks();
    next_seq = calloc((size_t)P, sizeof(uint64_t));
    buf      = malloc(max_size);
    MR_OK(gv_am_register(on_msg, NULL, &id));
    gv_barrier();
    rng ^= (uint64_t)gv_rank() * 7919;
    for (seq = 0; seq < n; seq++) {
        for (i = 0; i < (uint64_t)P; i++) {
            hdr_t  h;
            size_t len;
            dst = (int)((gv_rank() + i) % (uint64_t)P);
            /* mostly small messages, sometimes up to max_size */
            len = sizeof(h) + ((mr_rand(&rng) % 8 == 0)
                                   ? mr_rand(&rng) % (max_size - sizeof(h) + 1)
                                   : mr_rand(&rng) % 32);
            if (len > max_size)
                len = max_size;
            h.src = (uint32_t)gv_rank();
            h.dst = (uint32_t)dst;
            h.seq = seq;
            memcpy(buf, &h, sizeof(h));
            mr_fill(buf + sizeof(h), len - sizeof(h),
                    ((uint64_t)h.src << 48) ^ ((uint64_t)h.dst << 32) ^ seq);
            MR_OK(gv_am_send(dst, id, buf, len));
        }
        if (seq % 64 == 0)
            gv_progress();
    }
    gv_barrier();
    /* Quiescence: right after the barrier everything must be here. */
    MR_CHECK(received == n * (uint64_t)P, "received %llu messages, expected "
             "%llu", (unsigned long long)received,
             (unsigned long long)(n * (uint64_t)P));
    for (dst = 0; dst < P; dst++)
        MR_CHECK(next_seq[dst] == n, "from rank %d: %llu of %llu", dst,
                 (unsigned long long)next_seq[dst], (unsigned long long)n);
    if (gv_rank() == 0)
        printf("alltoall: %d ranks x %llu messages per pair (up to %llu B) "
               "over %s: ok\n", P, (unsigned long long)n,
               (unsigned long long)max_size, gv_transport_name());
    free(buf);
    free(next_seq);
    gv_finalize();
    return 0;
}
