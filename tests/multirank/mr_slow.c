/* A slow receiver: rank 1 sleeps in its handler now and then while every
 * other rank floods it. The senders' queued bytes must stay within the
 * configured bound ((GV_AGG_CREDITS + 1) x GV_AGG_BYTES), and every update
 * must land exactly once. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#include <time.h>

#define UPDATES 200000

static gv_am_id_t id;
static uint64_t   sum, count;

static void on_update(int src, const void *p, size_t len, void *arg)
{
    uint64_t v;
    MR_CHECK(len == 8, "update of %zu bytes", len);
    memcpy(&v, p, 8);
    sum += v;
    if ((++count % 2000) == 0) {
        struct timespec ts = {0, 2000000}; /* 2 ms: a slow consumer */
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    gv_am_stats_t st;
    uint64_t      i, bound, agg, credits;
    int           P;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_update, NULL, &id));
    gv_barrier();
    P = gv_nranks();
    if (gv_rank() != 1)
        for (i = 1; i <= UPDATES; i++)
            MR_OK(gv_am_send(1, id, &i, 8));
    gv_barrier();
    if (gv_rank() == 1) {
        uint64_t n = (uint64_t)(P - 1) * UPDATES;
        MR_CHECK(count == n, "%llu updates arrived, expected %llu",
                 (unsigned long long)count, (unsigned long long)n);
        MR_CHECK(sum == n / (P - 1) * (n / (P - 1) + 1) / 2 * (P - 1),
                 "sum of updates %llu is wrong", (unsigned long long)sum);
    }
    gv_am_stats(&st);
    agg     = getenv("GV_AGG_BYTES") ? strtoull(getenv("GV_AGG_BYTES"), NULL, 0)
                                     : 65536;
    credits = getenv("GV_AGG_CREDITS") ? strtoull(getenv("GV_AGG_CREDITS"),
                                                  NULL, 0) : 4;
    bound   = (credits + 1) * agg;
    MR_CHECK(st.queued_bytes_max <= bound, "send queues peaked at %llu bytes,"
             " above the bound of %llu", (unsigned long long)st.queued_bytes_max,
             (unsigned long long)bound);
    if (gv_rank() == 0)
        printf("slow receiver over %s: queues peaked at %llu of %llu bytes, "
               "%llu credit stalls: ok\n", gv_transport_name(),
               (unsigned long long)st.queued_bytes_max,
               (unsigned long long)bound,
               (unsigned long long)st.credit_stalls);
    gv_finalize();
    return 0;
}
