/* The node view of the bootstrap (core/boot.h, what shm+<net> opens shm
 * over), on 4 ranks in two nodes {0,1} and {2,3}: node 0 exchanges once
 * and leaves while node 1 goes on; node 1's exchanges still complete with
 * its own entries. Then node 1's rank 3 leaves early: rank 2's next
 * exchange must fail (not hang, not return stale data). Every rank then
 * meets at a barrier of the whole job: no collective was left mismatched.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"
#include "core/core.h"
#include "core/boot.h"

int main(int argc, char **argv)
{
    int        node_of[4] = {0, 0, 1, 1}, i, round;
    uint64_t   mine, all[2];
    gv_boot_t *parent, *v;

    mr_init(&argc, &argv);
    MR_CHECK(gv_nranks() == 4, "needs 4 ranks, has %d", gv_nranks());
    parent = gv__ctx.boot;
    MR_OK(gv__boot_node_view(parent, node_of, &v));
    MR_CHECK((v->size == 2) && (v->rank == gv_rank() % 2) &&
                 (v->world_of[v->rank] == gv_rank()),
             "rank %d: view rank %d of %d", gv_rank(), v->rank, v->size);
    /* Node 0: one exchange of 4 bytes; node 1: three of 8. */
    for (round = 0; round < ((gv_rank() < 2) ? 1 : 3); round++) {
        mine = 1000u * (uint64_t)gv_rank() + (uint64_t)round;
        if (gv_rank() < 2) {
            uint32_t m32 = (uint32_t)mine, a32[2];

            MR_OK(gv__boot_allgather(v, &m32, sizeof(m32), a32));
            for (i = 0; i < 2; i++)
                all[i] = a32[i];
        } else {
            MR_OK(gv__boot_allgather(v, &mine, sizeof(mine), all));
        }
        for (i = 0; i < 2; i++) {
            uint64_t want = 1000u * (uint64_t)v->world_of[i] +
                            (uint64_t)round;

            MR_CHECK(all[i] == want, "rank %d round %d: entry %d is %llu, "
                     "expected %llu", gv_rank(), round, i,
                     (unsigned long long)all[i], (unsigned long long)want);
        }
    }
    /* Rank 3 leaves; rank 2 tries once more and must be told. */
    if (gv_rank() == 2) {
        gv_status_t st = gv__boot_allgather(v, &mine, 8, all);
        MR_CHECK(st != GV_OK, "rank 2: an exchange after its node-mate "
                 "left returned GV_OK");
    }
    MR_OK(gv__boot_view_leave(v));
    gv__boot_view_free(v);
    MR_OK(gv__boot_barrier(parent));
    if (gv_rank() == 0)
        printf("boot view: exchanges of one node went on while the other "
               "had left; a node-mate's leaving was reported: ok\n");
    gv_finalize();
    return 0;
}
