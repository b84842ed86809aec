/* One rank on the self transport: active messages to oneself arrive in
 * order through progress and barriers, large ones too; bad arguments are
 * errors; one-sided operations on the own heap; transport selection errors.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <grapevine.h>

#include "transports/transport.h"

#include <stdlib.h>

static uint32_t next_seq, handled;
static size_t   last_len;

static void on_seq(int src, const void *p, size_t len, void *arg)
{
    uint32_t s;
    cr_assert_eq(src, 0);
    memcpy(&s, p, 4);
    cr_assert_eq(s, next_seq, "got %u, expected %u", s, next_seq);
    next_seq++;
    handled++;
    last_len = len;
}

static void setup(void)
{
    setenv("GV_TRANSPORT", "self", 1);
    setenv("GV_WARN_UNUSED_ENV", "0", 1);
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
}

Test(am_self, messages_to_self_in_order, .init = setup, .fini = gv_finalize)
{
    gv_am_id_t id;
    uint32_t   i;
    uint8_t   *big = calloc(1, 3 << 20);
    gv_am_stats_t st;

    cr_assert_eq(gv_rank(), 0);
    cr_assert_eq(gv_nranks(), 1);
    cr_assert_str_eq(gv_transport_name(), "self");
    cr_assert_eq(gv_am_register(on_seq, NULL, &id), GV_OK);
    for (i = 0; i < 10000; i++)
        cr_assert_eq(gv_am_send(0, id, &i, sizeof(i)), GV_OK);
    memcpy(big, &i, 4);
    cr_assert_eq(gv_am_send(0, id, big, 3 << 20), GV_OK);
    /* Sending does not run handlers; progress and barriers do. */
    cr_assert_eq(handled, 0);
    gv_barrier();
    cr_assert_eq(handled, 10001);
    cr_assert_eq(last_len, 3 << 20);
    gv_am_stats(&st);
    cr_assert_eq(st.msgs_sent, 10001);
    cr_assert_eq(st.msgs_recv, 10001);
    cr_assert_eq(st.msgs_self, 10001, "msgs_self %llu, 10001 sent to self",
                 (unsigned long long)st.msgs_self);
    cr_assert_eq(st.msgs_relayed + st.internode_msgs + st.internode_batches,
                 0);
    free(big);
}

/* gv_am_send_now() to self is gv_am_send(): in order with it. */
Test(am_self, send_now_keeps_order, .init = setup, .fini = gv_finalize)
{
    gv_am_id_t id;
    uint32_t   i;

    cr_assert_eq(gv_am_register(on_seq, NULL, &id), GV_OK);
    for (i = 0; i < 1000; i++)
        cr_assert_eq((i % 3) ? gv_am_send(0, id, &i, sizeof(i))
                             : gv_am_send_now(0, id, &i, sizeof(i)),
                     GV_OK);
    gv_barrier();
    cr_assert_eq(handled, 1000);
}

Test(am_self, bad_arguments_are_errors, .init = setup, .fini = gv_finalize)
{
    gv_am_id_t id;
    char       b[8] = {0};

    cr_assert_eq(gv_am_register(on_seq, NULL, &id), GV_OK);
    cr_assert_eq(gv_am_send(1, id, b, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_am_send(-1, id, b, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_am_send(0, (gv_am_id_t)(id + 1), b, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_am_send(0, id, NULL, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_am_send(0, id, b, gv_am_max_payload() + 1),
                 GV_ERR_INVALID);
    cr_assert_eq(gv_am_send_now(1, id, b, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_am_send_now(-1, id, b, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_am_send_now(0, (gv_am_id_t)(id + 1), b, 8),
                 GV_ERR_INVALID);
    cr_assert_eq(gv_am_send_now(0, id, NULL, 8), GV_ERR_INVALID);
    cr_assert_eq(gv_am_send_now(0, id, b, gv_am_max_payload() + 1),
                 GV_ERR_INVALID);
    cr_assert_eq(gv_am_register(NULL, NULL, &id), GV_ERR_INVALID);
}

Test(am_self, one_sided_on_own_heap, .init = setup, .fini = gv_finalize)
{
    uint64_t off, off2, old, v = 0;
    char     in[100], out[100];

    cr_assert(gv_rma_has_atomics());
    cr_assert_eq(gv_sym_alloc(64, 64, &off), GV_OK);
    cr_assert_eq(off % 64, 0);
    cr_assert_eq(gv_sym_alloc(8, 8, &off2), GV_OK);
    cr_assert_geq(off2, off + 64);
    memset(gv_sym_ptr(off), 0, 64);
    cr_assert_eq(gv_amo64(GV_AMO_ADD, 0, off, 5, 0, NULL), GV_OK);
    cr_assert_eq(gv_amo64_fetch_add(0, off, 2, &old), GV_OK);
    cr_assert_eq(old, 5);
    cr_assert_eq(gv_amo64_cswap(0, off, 7, 100, &old), GV_OK);
    cr_assert_eq(old, 7);
    cr_assert_eq(gv_amo64_cswap(0, off, 7, 200, &old), GV_OK);
    cr_assert_eq(old, 100);
    cr_assert_eq(gv_amo64_swap(0, off, 1, &old), GV_OK);
    cr_assert_eq(old, 100);
    memset(in, 'x', sizeof(in));
    cr_assert_eq(gv_put(0, off2, in, 8), GV_OK);
    cr_assert_eq(gv_get(0, off2, out, 8), GV_OK);
    cr_assert_eq(gv_rma_flush(-1), GV_OK);
    cr_assert(memcmp(in, out, 8) == 0);
    cr_assert_eq(gv_amo64(GV_AMO_ADD, 0, off + 3, 1, 0, NULL), GV_ERR_INVALID);
    cr_assert_eq(gv_amo64(GV_AMO_FADD, 0, off, 1, 0, NULL), GV_ERR_INVALID);
    cr_assert_eq(gv_sym_alloc(8, 3, &v), GV_ERR_INVALID);
    cr_assert_eq(gv_sym_alloc(gv_sym_heap_size(), 8, &v), GV_ERR_NO_MEMORY);
}

static char *read_stderr(void)
{
    static char buf[8192];
    size_t      n;
    fflush(stderr);
    n      = fread(buf, 1, sizeof(buf) - 1, cr_get_redirected_stderr());
    buf[n] = '\0';
    return buf;
}

/* Flushing and progressing outside gv_init .. gv_finalize do nothing (the
 * first lone area crashed in gv_flush before gv_init). */
Test(am_self, flush_outside_init_is_harmless)
{
    char b[8] = {0};

    cr_assert_eq(gv_am_send_now(1, 0, b, 8), GV_ERR_INVALID);
    gv_flush();
    cr_assert_eq(gv_progress(), 0);
    cr_assert_eq(gv_init(NULL, NULL), GV_OK);
    gv_finalize();
    gv_flush();
    cr_assert_eq(gv_progress(), 0);
}

Test(am_self, unknown_transport_lists_available, .init = cr_redirect_stderr)
{
    setenv("GV_TRANSPORT", "ucxx", 1);
    cr_assert_eq(gv_init(NULL, NULL), GV_ERR_NOT_FOUND);
    {
        char *out = read_stderr();
        cr_assert(strstr(out, "transport 'ucxx' (GV_TRANSPORT) is not "
                              "available; built in: self,") != NULL, "%s", out);
    }
}

Test(am_self, bad_value_exits_with_message, .init = cr_redirect_stderr,
     .exit_code = 1)
{
    setenv("GV_AGG_BYTES", "-3", 1);
    gv_init(NULL, NULL);
}

static gv_status_t fake_init(gv_tl_t *tl) { return GV_OK; }
static void fake_fini(gv_tl_t *tl) {}
static unsigned fake_progress(gv_tl_t *tl) { return 0; }
static gv_status_t fake_send(gv_tl_t *tl, int d, const void *h, size_t hl,
                             const void *p, size_t l, gv_req_t *r)
{
    return GV_OK;
}

Test(registry, capability_bits_must_match_slots)
{
    gv_tl_ops_t ops = {.version = GV_TL_OPS_VERSION, .name = "fake",
                       .init = fake_init, .fini = fake_fini,
                       .progress = fake_progress, .am_send = fake_send};
    char why[128];

    cr_assert_eq(gv__tl_check(&ops, GV_TL_CAP_AM, why, sizeof(why)), GV_OK);
    cr_assert_eq(gv__tl_check(&ops, GV_TL_CAP_AM | GV_TL_CAP_ATOMIC64, why,
                              sizeof(why)), GV_ERR_INVALID);
    cr_assert(strstr(why, "ATOMIC64") != NULL, "%s", why);
    cr_assert_eq(gv__tl_check(&ops, GV_TL_CAP_AM | GV_TL_CAP_WAIT, why,
                              sizeof(why)), GV_ERR_INVALID);
    cr_assert_eq(gv__tl_check(&ops, GV_TL_CAP_AM | GV_TL_CAP_AM_ID, why,
                              sizeof(why)), GV_ERR_INVALID);
    cr_assert(strstr(why, "am_send_id") != NULL, "%s", why);
    cr_assert_eq(gv__tl_check(&ops, 0, why, sizeof(why)), GV_ERR_INVALID);
    ops.am_send = NULL;
    cr_assert_eq(gv__tl_check(&ops, GV_TL_CAP_AM, why, sizeof(why)),
                 GV_ERR_INVALID);
    cr_assert(strstr(why, "mandatory") != NULL, "%s", why);
}
