/* A receiver that stops taking messages while messages wait for it:
 * rank 1 sleeps without progressing, rank 0 sends it up to 64 messages of
 * 1 MiB with gv_am_send() (which waits until the transport is done with
 * each buffer; 64 MiB is more than any transport here buffers, TCP's
 * socket buffers included). Run with a short GV_TIMEOUT_S, the job must
 * stop with a message naming rank 1 well before rank 1 wakes; if rank 0's
 * sends complete instead, this program exits 0 and the driver's fault
 * test fails. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    (void)src;
    (void)payload;
    (void)len;
    (void)arg;
}

int main(int argc, char **argv)
{
    size_t     len = 1u << 20;
    uint8_t   *buf = calloc(1, len);
    gv_am_id_t id;
    int        i;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_msg, NULL, &id));
    if (gv_nranks() != 2)
        mr_skip("needs exactly 2 ranks");
    gv_barrier();
    if (gv_rank() == 1)
        sleep(20);
    else
        for (i = 0; i < 64; i++)
            MR_OK(gv_am_send(1, id, buf, len));
    gv_barrier();
    if (gv_rank() == 0)
        printf("stuck: the send completed although rank 1 slept\n");
    free(buf);
    gv_finalize();
    return 0;
}
