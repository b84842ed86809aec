/* Barrier quiescence under load: chains of messages that handlers forward
 * hop by hop must all have ended when gv_barrier returns, round after
 * round. Each rank receives exactly msgs * hops messages per round.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

static gv_am_id_t id;
static uint64_t   received;

static void on_hop(int src, const void *payload, size_t len, void *arg)
{
    uint32_t hops;

    MR_CHECK(len == sizeof(hops), "hop message of %zu bytes", len);
    memcpy(&hops, payload, sizeof(hops));
    received++;
    if (--hops > 0)
        MR_OK(gv_am_send((gv_rank() + 1) % gv_nranks(), id, &hops,
                         sizeof(hops)));
}

int main(int argc, char **argv)
{
    uint32_t msgs = 500, hops = 6, rounds = 5, r, i;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_hop, NULL, &id));
    for (r = 0; r < rounds; r++) {
        received = 0;
        gv_barrier();
        for (i = 0; i < msgs; i++)
            MR_OK(gv_am_send((gv_rank() + 1) % gv_nranks(), id, &hops,
                             sizeof(hops)));
        gv_barrier();
        MR_CHECK(received == (uint64_t)msgs * hops, "round %u: %llu messages "
                 "handled when the barrier returned, expected %llu", r,
                 (unsigned long long)received,
                 (unsigned long long)msgs * hops);
    }
    if (gv_rank() == 0)
        printf("barrier: %u rounds of %u chains x %u hops over %s: ok\n",
               rounds, msgs, hops, gv_transport_name());
    gv_finalize();
    return 0;
}
