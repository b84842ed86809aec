/* A split message whose receiver never takes the rest: over ofi/shm, rank
 * 0 sends rank 1 one 8 KiB request with gv_am_send_now() (past shm's
 * inject size, so it leaves in parts), whose parts after the first stay
 * owed for ever (gv__tl_ofi_owe with stuck: every retry meets EAGAIN, as
 * if rank 1's queue stayed full), then waits for a reply that cannot
 * come; rank 1 sleeps 30 s. The AM layer counted the message as sent, so
 * only the transport knows that it still owes rank 1 something. Run with
 * a short GV_TIMEOUT_S, the job must stop with a message naming rank 1
 * well before rank 1 wakes. Exits 77 where ofi does not split (not ofi, or
 * a provider without a large inject size). SPDX-License-Identifier:
 * BSD-3-Clause */
#include "tests/multirank/mr.h"

#if GV_HAVE_OFI
#include "core/core.h"
#include "transports/ofi.h"
#endif

#define MSG_LEN 8192

static gv_am_id_t id;

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    (void)src;
    (void)payload;
    (void)len;
    (void)arg;
}

static int never(void *arg)
{
    (void)arg;
    return 0;
}

int main(int argc, char **argv)
{
    static uint8_t buf[MSG_LEN];

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_msg, NULL, &id));
    if (gv_nranks() != 2)
        mr_skip("needs exactly 2 ranks");
#if GV_HAVE_OFI
    {
        gv_tl_ofi_counters_t c;

        gv__tl_ofi_counters(gv__ctx.tl, &c);
        if (c.split_max < MSG_LEN + 64)
            mr_skip("the transport does not send 8 KiB messages in parts "
                    "(ofi over shm does)");
    }
    if (gv_rank() == 0)
        gv__tl_ofi_owe(gv__ctx.tl, 1, 1);
#else
    mr_skip("built without ofi");
#endif
    gv_barrier();
    if (gv_rank() == 1) {
        sleep(30);
    } else {
        MR_OK(gv_am_send_now(1, id, buf, MSG_LEN));
        gv_wait(never, NULL);
    }
    gv_barrier();
    if (gv_rank() == 0)
        printf("owed: the wait ended although rank 1 slept\n");
    gv_finalize();
    return 0;
}
