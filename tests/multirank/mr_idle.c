/* Idle ranks must not spin: while rank 0 computes for a while without
 * communicating, every other rank waits in gv_barrier and must use only a
 * small fraction of a core (it polls briefly, then blocks or yields).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#include <sys/resource.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    double t0, c0, wall, cpu;

    mr_init(&argc, &argv);
    gv_barrier();
    t0 = gv_wtime();
    c0 = cpu_seconds();
    if (gv_rank() == 0) {
        struct timespec ts = {1, 500000000};
        nanosleep(&ts, NULL); /* busy elsewhere: not progressing */
    }
    gv_barrier();
    wall = gv_wtime() - t0;
    cpu  = cpu_seconds() - c0;
    if (gv_rank() != 0)
        MR_CHECK(cpu < 0.25 * wall, "waiting rank used %.2f s of CPU in %.2f "
                 "s (it spins instead of blocking or yielding)", cpu, wall);
    if (gv_rank() == 0)
        printf("idle: waiting ranks stayed quiet over %s: ok\n",
               gv_transport_name());
    gv_finalize();
    return 0;
}
