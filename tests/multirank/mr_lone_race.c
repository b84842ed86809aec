/* The lone area and a send that waits (a regression test: the first
 * version of the lone area crashed here every run). Rank 0 floods rank 1
 * with 200-byte records while rank 1 sleeps, so rank 0's sends wait for
 * credits inside send_slow. Rank 1 then pings rank 0; rank 0's ping
 * handler does a delegate add to a word at rank 1, whose progress hook
 * sends a small message to rank 1 from inside that wait: it lands in the
 * lone area while send_slow is about to open a batch to the same rank.
 * Rank 1 checks that every record arrives, once and in order. Run with
 * GV_AGG_BYTES=1024 GV_AGG_CREDITS=1 (driver_matrix).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#define PAYLOAD 200
#define N       200000

static gv_am_id_t        big_id, ping_id, done_id;
static gv_gaddr_t        word;
static volatile uint64_t next_seq, pings, done;

static void on_big(int src, const void *p, size_t len, void *arg)
{
    uint64_t s;

    (void)src;
    (void)arg;
    MR_CHECK(len == PAYLOAD, "record of %zu bytes, expected %d", len,
             PAYLOAD);
    memcpy(&s, p, 8);
    MR_CHECK(s == next_seq, "record %llu arrived, expected %llu",
             (unsigned long long)s, (unsigned long long)next_seq);
    next_seq++;
}

static void on_ping(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)p;
    (void)len;
    (void)arg;
    pings++;
    MR_OK(gv_delegate_add(gv_gaddr_on(word, 1), 1, gv_gce_default()));
}

static void on_done(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)p;
    (void)len;
    (void)arg;
    done = 1;
}

int main(int argc, char **argv)
{
    uint8_t  buf[PAYLOAD];
    uint64_t i, z = 0;

    MR_OK(gv_am_register(on_big, NULL, &big_id));
    MR_OK(gv_am_register(on_ping, NULL, &ping_id));
    MR_OK(gv_am_register(on_done, NULL, &done_id));
    mr_init(&argc, &argv);
    if (gv_nranks() != 2)
        mr_skip("needs exactly 2 ranks");
    MR_OK(gv_global_alloc_symmetric(8, &word));
    gv_barrier();
    memset(buf, 0xab, sizeof(buf));
    if (gv_rank() == 0) {
        for (i = 0; i < N; i++) {
            memcpy(buf, &i, 8);
            MR_OK(gv_am_send(1, big_id, buf, PAYLOAD));
        }
        gv_flush();
        MR_OK(gv_am_send(1, done_id, NULL, 0));
        gv_flush();
    } else {
        usleep(1500000); /* let rank 0's sends back up */
        while (!done) {
            MR_OK(gv_am_send(0, ping_id, &z, 8));
            gv_flush();
            gv_progress();
        }
        MR_CHECK(next_seq == N, "rank 1 got %llu records, expected %d",
                 (unsigned long long)next_seq, N);
    }
    gv_barrier();
    gv_finalize();
    printf("lone_race: ok\n");
    return 0;
}
