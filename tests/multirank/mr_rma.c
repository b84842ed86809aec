/* One-sided operations on the symmetric heap: remote atomic adds from
 * every rank to random words with exact final sums; fetch-add tickets seen
 * exactly once; compare-and-swap as a lock around a get/put counter; put
 * and get round trips from 8 B to 1 MiB; and argument errors.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#define WORDS   512
#define UPDATES 4000
#define TICKETS 500
#define LOCKED  100

static gv_am_id_t ticket_id;
static uint8_t   *seen;       /* rank 0: which tickets came back */
static uint64_t   nseen;

static void on_ticket(int src, const void *payload, size_t len, void *arg)
{
    uint64_t t;
    MR_CHECK(len == 8, "ticket message of %zu bytes", len);
    memcpy(&t, payload, 8);
    MR_CHECK(t < (uint64_t)TICKETS * gv_nranks(), "ticket %llu out of range",
             (unsigned long long)t);
    MR_CHECK(!seen[t], "ticket %llu fetched twice", (unsigned long long)t);
    seen[t] = 1;
    nseen++;
}

static void test_atomics(uint64_t table, uint64_t counter)
{
    uint64_t *mine = gv_sym_ptr(table), expect[WORDS], rng, old, i;
    int       P = gv_nranks(), r;

    /* Random adds from every rank; each rank then replays every rank's
     * stream to know what its own words must hold. */
    rng = 1000 + (uint64_t)gv_rank();
    for (i = 0; i < UPDATES; i++) {
        uint64_t x = mr_rand(&rng);
        int      dst = (int)(x % (uint64_t)P);
        uint64_t w = (x >> 16) % WORDS;
        MR_OK(gv_amo64(GV_AMO_ADD, dst, table + 8 * w, (x >> 40) | 1, 0,
                       NULL));
        if (i % 256 == 255)
            MR_OK(gv_rma_flush(-1));
    }
    MR_OK(gv_rma_flush(-1));
    gv_barrier();
    memset(expect, 0, sizeof(expect));
    for (r = 0; r < P; r++) {
        rng = 1000 + (uint64_t)r;
        for (i = 0; i < UPDATES; i++) {
            uint64_t x = mr_rand(&rng);
            if ((int)(x % (uint64_t)P) == gv_rank())
                expect[(x >> 16) % WORDS] += (x >> 40) | 1;
        }
    }
    for (i = 0; i < WORDS; i++)
        MR_CHECK(mine[i] == expect[i], "word %llu holds %llu, expected %llu",
                 (unsigned long long)i, (unsigned long long)mine[i],
                 (unsigned long long)expect[i]);

    /* Fetch-add tickets on rank 0's counter: each value exactly once. */
    for (i = 0; i < TICKETS; i++) {
        MR_OK(gv_amo64_fetch_add(0, counter, 1, &old));
        MR_OK(gv_am_send(0, ticket_id, &old, 8));
    }
    gv_barrier();
    if (gv_rank() == 0)
        MR_CHECK(nseen == (uint64_t)TICKETS * P, "%llu tickets, expected %llu",
                 (unsigned long long)nseen, (unsigned long long)TICKETS * P);

    /* Swap returns the previous value. */
    if (gv_rank() == 0) {
        MR_OK(gv_amo64_swap(P - 1, table, 12345, &old));
        MR_CHECK(old == expect[0] || P > 1, "swap returned %llu",
                 (unsigned long long)old);
        MR_OK(gv_amo64_swap(P - 1, table, old, &old));
        MR_CHECK(old == 12345, "second swap returned %llu",
                 (unsigned long long)old);
    }
    gv_barrier();
}

static void test_lock(uint64_t lock, uint64_t counter)
{
    uint64_t old, v, i, spins;

    for (i = 0; i < LOCKED; i++) {
        for (spins = 0;; spins++) {
            MR_OK(gv_amo64_cswap(0, lock, 0, (uint64_t)gv_rank() + 1, &old));
            if (old == 0)
                break;
            MR_CHECK(old <= (uint64_t)gv_nranks(), "lock word holds %llu",
                     (unsigned long long)old);
            if (spins % 16 == 15)
                gv_progress();
        }
        /* Unprotected read-modify-write: only the lock makes it exact. */
        MR_OK(gv_get(0, counter, &v, 8));
        MR_OK(gv_rma_flush(0));
        v++;
        MR_OK(gv_put(0, counter, &v, 8));
        MR_OK(gv_rma_flush(0));
        MR_OK(gv_amo64_swap(0, lock, 0, &old));
        MR_CHECK(old == (uint64_t)gv_rank() + 1, "lock was held by %llu",
                 (unsigned long long)old - 1);
    }
    gv_barrier();
    if (gv_rank() == 0)
        MR_CHECK(*(uint64_t *)gv_sym_ptr(counter) ==
                     (uint64_t)LOCKED * gv_nranks(),
                 "locked counter %llu, expected %llu",
                 (unsigned long long)*(uint64_t *)gv_sym_ptr(counter),
                 (unsigned long long)LOCKED * gv_nranks());
}

static void test_put_get(uint64_t area, size_t max)
{
    int      right = (gv_rank() + 1) % gv_nranks();
    int      left  = (gv_rank() + gv_nranks() - 1) % gv_nranks();
    uint8_t *src = malloc(max), *back = malloc(max);
    size_t   len;

    for (len = 8; len <= max; len *= 4) {
        mr_fill(src, len, ((uint64_t)gv_rank() << 32) | len);
        MR_OK(gv_put(right, area, src, len));
        MR_OK(gv_rma_flush(right));
        gv_barrier();
        MR_CHECK(mr_verify(gv_sym_ptr(area), len,
                           ((uint64_t)left << 32) | len),
                 "%zu bytes put by rank %d are wrong", len, left);
        memset(back, 0, len);
        MR_OK(gv_get(right, area, back, len));
        MR_OK(gv_rma_flush(right));
        MR_CHECK(memcmp(back, src, len) == 0, "get of %zu bytes from rank %d "
                 "differs from what was put", len, right);
        gv_barrier();
    }
    free(src);
    free(back);
}

int main(int argc, char **argv)
{
    uint64_t table, counter, lock, lcounter, area, v = 0;
    size_t   max = 1u << 20;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_ticket, NULL, &ticket_id));
    seen = calloc((size_t)TICKETS * gv_nranks(), 1);
    if (!gv_rma_has_atomics() && !gv_rma_has_put_get()) {
        MR_CHECK(gv_amo64(GV_AMO_ADD, 0, 0, 1, 0, NULL) ==
                     GV_ERR_UNSUPPORTED, "atomics without the capability");
        mr_skip("no native one-sided operations");
    }
    MR_OK(gv_sym_alloc(WORDS * 8, 64, &table));
    MR_OK(gv_sym_alloc(8, 8, &counter));
    MR_OK(gv_sym_alloc(8, 8, &lock));
    MR_OK(gv_sym_alloc(8, 8, &lcounter));
    MR_OK(gv_sym_alloc(max, 64, &area));
    memset(gv_sym_ptr(table), 0, WORDS * 8);
    memset(gv_sym_ptr(counter), 0, 8);
    memset(gv_sym_ptr(lock), 0, 8);
    memset(gv_sym_ptr(lcounter), 0, 8);
    gv_barrier();

    /* Argument errors are errors, not crashes. */
    MR_CHECK(gv_amo64(GV_AMO_ADD, gv_nranks(), table, 1, 0, NULL) ==
                 GV_ERR_INVALID, "rank out of range accepted");
    MR_CHECK(gv_amo64(GV_AMO_ADD, 0, table + 4, 1, 0, NULL) ==
                 GV_ERR_INVALID, "misaligned offset accepted");
    MR_CHECK(gv_amo64(GV_AMO_ADD, 0, gv_sym_heap_size(), 1, 0, NULL) ==
                 GV_ERR_INVALID, "offset past the heap accepted");
    MR_CHECK(gv_put(0, gv_sym_heap_size() - 4, &v, 8) == GV_ERR_INVALID ||
                 !gv_rma_has_put_get(), "put past the heap accepted");
    MR_CHECK(gv_sym_alloc(gv_sym_heap_size(), 8, &v) == GV_ERR_NO_MEMORY,
             "allocation larger than the heap accepted");

    if (gv_rma_has_atomics())
        test_atomics(table, counter);
    else if (gv_rank() == 0)
        printf("skip atomics: transport %s has no native atomics\n",
               gv_transport_name());
    if (gv_rma_has_atomics() && gv_rma_has_put_get())
        test_lock(lock, lcounter);
    if (gv_rma_has_put_get())
        test_put_get(area, max);
    else if (gv_rank() == 0)
        printf("skip put/get: transport %s has no native put/get\n",
               gv_transport_name());
    if (gv_rank() == 0)
        printf("rma over %s: ok\n", gv_transport_name());
    free(seen);
    gv_finalize();
    return 0;
}
