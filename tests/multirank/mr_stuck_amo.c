/* A target that stops while a one-sided operation waits for it: rank 1
 * sleeps 30 s without progressing; rank 0 issues remote fetch-adds to
 * rank 1's heap (transports without native atomics skip). Over
 * transports whose atomics need the target's progress (UCX over TCP,
 * libfabric, MPI's pt2pt window) the operation cannot complete while
 * rank 1 sleeps: run with a short GV_TIMEOUT_S, the job must stop with a
 * message naming rank 1 (over mpi the wait is inside MPI_Win_flush, where
 * the monitor thread names it). With --flush-all the adds are issued
 * without waiting (gv_amo64) and completed by a flush to every rank.
 * Over shm and ucx/sm the
 * atomics complete without rank 1, which is not an error: the program
 * then exits 0. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

int main(int argc, char **argv)
{
    uint64_t off, old = 0;
    double   t0, took = 0;
    int      i, flush_all;

    mr_init(&argc, &argv);
    flush_all = (argc > 1) && (strcmp(argv[1], "--flush-all") == 0);
    mr_need_atomic_pair(&off);
    gv_barrier();
    if (gv_rank() == 1) {
        sleep(30);
    } else {
        t0 = gv_wtime();
        for (i = 0; i < 1000; i++) {
            MR_OK(flush_all ? gv_amo64(GV_AMO_ADD, 1, off, 1, 0, NULL)
                            : gv_amo64_fetch_add(1, off, 1, &old));
            if (flush_all && ((i % 100) == 99))
                MR_OK(gv_rma_flush(-1));
        }
        took = gv_wtime() - t0;
    }
    gv_barrier();
    if (gv_rank() == 0)
        printf("stuck_amo: the fetch-adds took %.1f s (last old value "
               "%llu)\n", took, (unsigned long long)old);
    gv_finalize();
    return 0;
}
