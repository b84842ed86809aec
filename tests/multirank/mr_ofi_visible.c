/* "Complete" means "visible at the target": after gv_rma_flush(dst)
 * returns, puts and atomic adds issued to dst must already be in dst's
 * memory. Every rank writes its right neighbour across the transport's size
 * thresholds (inject, eager, rendezvous), flushes, and then (1) tells the
 * target, whose handler reads its own heap directly, and (2) tells a third
 * rank, two to the right, which reads the target's heap with gv_get and a
 * fetching atomic over its own connection: a put that had only left the
 * sender (transmit-complete) could still be overtaken there. Written for the ofi backend (delivery-complete puts,
 * fetching adds on shm), runs over any transport with native one-sided
 * operations. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#include <grapevine/rma.h>

#define ROUNDS 20
#define ADDS   64

typedef struct {
    uint64_t len;     /* bytes put at slot of the sender */
    uint64_t seed;
    uint64_t adds;    /* the sender's counter must hold this */
} look_t;

static gv_am_id_t look_id, watch_id;
static uint64_t   area, counters;
static size_t     slot;
static int        checked, watched;
static look_t     watch;      /* what the third rank is asked to verify */
static int        watch_src;

static void on_look(int src, const void *payload, size_t len, void *arg)
{
    look_t          l;
    const uint8_t  *mine;
    const uint64_t *ctr;

    MR_CHECK(len == sizeof(l), "look message of %zu bytes", len);
    memcpy(&l, payload, sizeof(l));
    MR_CHECK(l.len <= slot, "look at %llu bytes", (unsigned long long)l.len);
    mine = (const uint8_t *)gv_sym_ptr(area) + (size_t)src * slot;
    MR_CHECK(mr_verify(mine, (size_t)l.len, l.seed),
             "put of %llu bytes from rank %d not visible after its flush",
             (unsigned long long)l.len, src);
    ctr = (const uint64_t *)gv_sym_ptr(counters) + src;
    MR_CHECK(__atomic_load_n(ctr, __ATOMIC_ACQUIRE) == l.adds,
             "rank %d's counter holds %llu after its flush, expected %llu",
             src, (unsigned long long)*ctr, (unsigned long long)l.adds);
    checked++;
}

static void on_watch(int src, const void *payload, size_t len, void *arg)
{
    MR_CHECK(len == sizeof(watch), "watch message of %zu bytes", len);
    MR_CHECK(!watched, "second watch request in one step from rank %d", src);
    memcpy(&watch, payload, sizeof(watch));
    watch_src = src;
    watched   = 1;
}

static int checked_at_least(void *arg)
{
    return (checked >= *(const int *)arg) && watched;
}

/* The third rank's check: read the writer's slot and counter at the
 * target through the transport. */
static void verify_watch(uint8_t *buf)
{
    int      P      = gv_nranks();
    int      target = (watch_src + 1) % P;
    uint64_t old    = 0;

    MR_CHECK(watch.len <= slot, "watch of %llu bytes",
             (unsigned long long)watch.len);
    MR_OK(gv_get(target, area + (uint64_t)watch_src * slot, buf,
                 (size_t)watch.len));
    MR_OK(gv_amo64(GV_AMO_FADD, target, counters + 8 * (uint64_t)watch_src,
                   0, 0, &old));
    MR_OK(gv_rma_flush(target));
    MR_CHECK(mr_verify(buf, (size_t)watch.len, watch.seed),
             "rank %d's put of %llu bytes to rank %d not visible to a third "
             "rank after its flush", watch_src,
             (unsigned long long)watch.len, target);
    MR_CHECK(old == watch.adds, "rank %d's counter at rank %d holds %llu "
             "for a third rank after the flush, expected %llu", watch_src,
             target, (unsigned long long)old,
             (unsigned long long)watch.adds);
    watched = 0;
}

int main(int argc, char **argv)
{
    static const size_t sizes[] = {1,    8,     48,    64,     65,
                                   4080, 4096,  4097,  16384,  65536,
                                   300000, 1u << 20};
    const size_t        nsizes  = sizeof(sizes) / sizeof(sizes[0]);
    uint8_t            *src, *chk;
    uint64_t            adds = 0;
    int                 P, right, round, expect;
    size_t              s;

    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_look, NULL, &look_id));
    MR_OK(gv_am_register(on_watch, NULL, &watch_id));
    if (!gv_rma_has_put_get() || !gv_rma_has_atomics())
        mr_skip("no native put/get and atomics");
    P     = gv_nranks();
    right = (gv_rank() + 1) % P;
    slot  = 1u << 20;
    if ((size_t)P * slot + 4096 * (size_t)P > gv_sym_heap_size() / 2)
        slot = gv_sym_heap_size() / 2 / (size_t)P & ~(size_t)4095;
    MR_OK(gv_sym_alloc(slot * (size_t)P, 64, &area));
    MR_OK(gv_sym_alloc(8 * (size_t)P, 8, &counters));
    memset(gv_sym_ptr(counters), 0, 8 * (size_t)P);
    src = malloc(slot);
    chk = malloc(slot);
    MR_CHECK((src != NULL) && (chk != NULL), "malloc");
    gv_barrier();

    for (round = 0; round < ROUNDS; round++) {
        for (s = 0; s < nsizes; s++) {
            look_t l;
            int    i;

            l.len  = (sizes[s] <= slot) ? sizes[s] : slot;
            l.seed = ((uint64_t)gv_rank() << 40) ^ ((uint64_t)round << 20) ^ s;
            mr_fill(src, (size_t)l.len, l.seed);
            MR_OK(gv_put(right, area + (uint64_t)gv_rank() * slot, src,
                         (size_t)l.len));
            /* The source may change at once: the put owns its bytes. */
            memset(src, 0xee, (size_t)l.len);
            for (i = 0; i < ADDS; i++)
                MR_OK(gv_amo64(GV_AMO_ADD, right,
                               counters + 8 * (uint64_t)gv_rank(), 1, 0,
                               NULL));
            adds  += ADDS;
            l.adds = adds;
            MR_OK(gv_rma_flush(right));
            MR_OK(gv_am_send(right, look_id, &l, sizeof(l)));
            MR_OK(gv_am_send((gv_rank() + 2) % P, watch_id, &l, sizeof(l)));
            gv_flush();
            /* The next put overwrites the slot: every check of this step
             * is done before anyone moves on (the barrier). */
            expect = round * (int)nsizes + (int)s + 1;
            gv_wait(checked_at_least, &expect);
            verify_watch(chk);
            gv_barrier();
        }
    }
    if (gv_rank() == 0)
        printf("visible: %d ranks, %d rounds of %zu sizes up to %zu B, "
               "puts and adds visible after flush, to target and third rank, over %s: ok\n", P,
               ROUNDS, nsizes, slot, gv_transport_name());
    free(src);
    free(chk);
    gv_finalize();
    return 0;
}
