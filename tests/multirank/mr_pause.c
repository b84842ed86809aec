/* A sender that stops polling is not a stuck receiver: rank 0 sends rank
 * 1 16 MiB with gv_am_send_nbi() while rank 1 is busy for 1 s, polls for
 * 0.5 s (the watchdog sees the message owed and starts its clock), then
 * computes without calling into Grapevine for 4 s, longer than the
 * GV_TIMEOUT_S=3 the driver sets, and only then waits for the send. Rank
 * 1 was healthy all along, so the job must finish: only time spent
 * polling may count against a peer. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#define LEN (16u << 20)

static uint64_t got;
static double   until;

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    (void)src;
    (void)payload;
    (void)arg;
    got += len;
}

static int past(void *arg)
{
    (void)arg;
    return gv_wtime() > until;
}

int main(int argc, char **argv)
{
    uint8_t          *buf = calloc(1, LEN);
    gv_am_id_t        id;
    double            t0;
    volatile uint64_t spin = 0;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_msg, NULL, &id));
    if (gv_nranks() != 2)
        mr_skip("needs exactly 2 ranks");
    gv_barrier();
    t0 = gv_wtime();
    if (gv_rank() == 1) {
        sleep(1);
    } else {
        MR_OK(gv_am_send_nbi(1, id, buf, LEN));
        until = t0 + 0.5;
        gv_wait(past, NULL);
        while (gv_wtime() < t0 + 4.5)
            spin++;
        gv_am_wait_local();
    }
    gv_barrier();
    if (gv_rank() == 1)
        MR_CHECK(got == LEN, "rank 1 got %llu bytes, expected %u",
                 (unsigned long long)got, LEN);
    free(buf);
    gv_finalize();
    printf("pause: ok\n");
    return 0;
}
