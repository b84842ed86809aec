/* Request/reply storm: every rank sends requests to random ranks; each
 * request's handler replies from inside the handler. Run with minimal
 * credits and small buffers on many oversubscribed ranks: it must neither
 * deadlock nor lose a reply. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#define REQUESTS 20000

static gv_am_id_t req_id, rep_id;
static uint64_t   replies, reply_sum, served;

static void on_reply(int src, const void *p, size_t len, void *arg)
{
    uint64_t v;
    MR_CHECK(len == 8, "reply of %zu bytes", len);
    memcpy(&v, p, 8);
    reply_sum += v;
    replies++;
}

static void on_request(int src, const void *p, size_t len, void *arg)
{
    uint64_t v;
    MR_CHECK(len == 8, "request of %zu bytes", len);
    memcpy(&v, p, 8);
    v = v * 2 + 1;
    served++;
    MR_OK(gv_am_send(src, rep_id, &v, 8));
}

int main(int argc, char **argv)
{
    uint64_t i, rng, expect = 0;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_request, NULL, &req_id));
    MR_OK(gv_am_register(on_reply, NULL, &rep_id));
    gv_barrier();
    rng = 99 + (uint64_t)gv_rank();
    for (i = 0; i < REQUESTS; i++) {
        uint64_t x = mr_rand(&rng);
        MR_OK(gv_am_send((int)(x % (uint64_t)gv_nranks()), req_id, &i, 8));
        expect += i * 2 + 1;
    }
    gv_barrier();
    MR_CHECK(replies == REQUESTS, "%llu replies, expected %d",
             (unsigned long long)replies, REQUESTS);
    MR_CHECK(reply_sum == expect, "reply sum %llu, expected %llu",
             (unsigned long long)reply_sum, (unsigned long long)expect);
    if (gv_rank() == 0)
        printf("storm over %s: %d ranks x %d requests: ok\n",
               gv_transport_name(), gv_nranks(), REQUESTS);
    gv_finalize();
    return 0;
}
