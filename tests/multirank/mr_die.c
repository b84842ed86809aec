/* A rank that dies: with --die, rank 2 kills itself (SIGKILL) once every
 * rank is up, and the others keep waiting in barriers; the launcher must
 * stop the job and name rank 2. With --all-abort every rank calls
 * gv_abort(5) at once: the job must exit 5, though every rank is gone
 * before the launcher would report the abort (each names its pid, so that
 * a test can look for what it left in /dev/shm). With --init-only it starts
 * and finalizes (used to check transports that must refuse a launcher).
 * Without a flag
 * it does nothing and exits 77 (skip), so that running every mr_* program
 * never kills anything by accident. SPDX-License-Identifier: BSD-3-Clause
 *
 *   mpirun -np 4 build/tests/multirank/mr_die --die
 */
#include <grapevine.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define VICTIM      2
#define SURVIVE_S   60  /* survivors give up (and fail) after this long */

int main(int argc, char **argv)
{
    int    die = 0, init_only = 0, all_abort = 0;
    double t0;

    if ((argc > 1) && (strcmp(argv[1], "--die") == 0))
        die = 1;
    else if ((argc > 1) && (strcmp(argv[1], "--init-only") == 0))
        init_only = 1;
    else if ((argc > 1) && (strcmp(argv[1], "--all-abort") == 0))
        all_abort = 1;
    if (!die && !init_only && !all_abort) {
        printf("skip: mr_die kills a rank only when asked (--die)\n");
        return 77;
    }
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    if (init_only) {
        gv_barrier();
        gv_finalize();
        return 0;
    }
    if (all_abort) {
        gv_barrier();
        gv_abort(5, "mr_die: rank %d (pid %d) aborts", gv_rank(),
                 (int)getpid());
    }
    if (gv_nranks() <= VICTIM) {
        if (gv_rank() == 0)
            fprintf(stderr, "mr_die: needs at least %d ranks\n", VICTIM + 1);
        gv_finalize();
        return 2;
    }
    gv_barrier(); /* everyone is up before the victim goes */
    if (gv_rank() == VICTIM) {
        fprintf(stderr, "mr_die: rank %d kills itself now\n", VICTIM);
        fflush(stderr);
        raise(SIGKILL);
    }
    /* Survivors wait for a rank that will never come; the launcher (or
     * the transport noticing the dead peer) must end the job first. */
    t0 = gv_wtime();
    while (gv_wtime() - t0 < SURVIVE_S)
        gv_barrier();
    fprintf(stderr, "mr_die: rank %d still running %d s after rank %d "
            "died: nobody stopped the job\n", gv_rank(), SURVIVE_S, VICTIM);
    return 3;
}
