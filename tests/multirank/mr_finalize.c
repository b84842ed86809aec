/* Finalize with half-full buffers: every rank sends a burst of small
 * messages (which sit in open aggregation buffers) and calls gv_finalize
 * at once, without a barrier. gv_finalize must deliver them all; the count
 * is checked after it returns, and a wrong count fails the rank's exit.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#define BURST 777

static gv_am_id_t id;
static uint64_t   received;

static void on_msg(int src, const void *p, size_t len, void *arg)
{
    received++;
}

int main(int argc, char **argv)
{
    uint64_t expect;
    int      i, rank, P;

    gv_am_register(on_msg, NULL, &id);
    mr_init(&argc, &argv);
    rank = gv_rank();
    P    = gv_nranks();
    for (i = 0; i < BURST; i++)
        MR_OK(gv_am_send((rank + 1 + i) % P, id, &i, sizeof(i)));
    gv_finalize();
    expect = (uint64_t)BURST; /* each rank receives BURST in total */
    if (received != expect) {
        fprintf(stderr, "[%04d] FAIL: %llu messages arrived before "
                "gv_finalize returned, expected %llu\n", rank,
                (unsigned long long)received, (unsigned long long)expect);
        return 1;
    }
    if (rank == 0)
        printf("finalize with half-full buffers: ok\n");
    return 0;
}
