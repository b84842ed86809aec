/* A receiver that stops taking messages while messages wait for it:
 * rank 1 sleeps 30 s without progressing, rank 0 sends it up to 64
 * messages of 1 MiB with gv_am_send() (which waits until the transport is
 * done with each buffer; 64 MiB is more than any transport here buffers,
 * TCP's socket buffers included). With --tasks, 4 tasks of rank 0 send 16
 * each, so that the waiting senders hand the core to each other. Run with
 * a short GV_TIMEOUT_S, the job must stop with a message naming rank 1
 * well before rank 1 wakes; if rank 0's sends complete instead, this
 * program exits 0 and the driver's fault test fails.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#define MSG_LEN (1u << 20)

static gv_am_id_t id;
static uint8_t   *buf;

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    (void)src;
    (void)payload;
    (void)len;
    (void)arg;
}

static void send_some(int64_t task, void *arg)
{
    int i;

    (void)task;
    for (i = 0; i < *(int *)arg; i++)
        MR_OK(gv_am_send(1, id, buf, MSG_LEN));
}

static void body(void *args)
{
    int each = 16;

    (void)args;
    if (gv_rank() == 0)
        MR_OK(gv_parallel_for(0, 4, 1, send_some, &each));
}

int main(int argc, char **argv)
{
    int tasks = (argc > 1) && (strcmp(argv[1], "--tasks") == 0);
    int all   = 64;

    buf = calloc(1, MSG_LEN);
    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_msg, NULL, &id));
    if (gv_nranks() != 2)
        mr_skip("needs exactly 2 ranks");
    gv_barrier();
    if (gv_rank() == 1)
        sleep(30);
    else if (tasks)
        MR_OK(gv_run_all(body, NULL, 0));
    else
        send_some(0, &all);
    if (tasks && (gv_rank() == 1))
        MR_OK(gv_run_all(body, NULL, 0));
    gv_barrier();
    if (gv_rank() == 0)
        printf("stuck: the sends completed although rank 1 slept\n");
    free(buf);
    gv_finalize();
    return 0;
}
