/* Criterion driver of the cases specific to the shm transport: the names
 * of its segments gone from /dev/shm once every rank has mapped them, and
 * when the job is stopped while a segment is being reserved.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

#include <signal.h>
#include <sys/wait.h>

static const mr_case_t cases[] = {
    {DRV_SHM, "mr_shm_cleanup", 4, "", 60, ""},
};

DRV_MULTIRANK_RUN(cases)

/* gvrun stopped (SIGTERM) while the shm transport reserves a large
 * segment: the rank must still remove its name. The kernel holds a
 * SIGTERM until posix_fallocate returns, and reserving 6 GiB takes longer
 * than gvrun's second between SIGTERM and SIGKILL: one call for the whole
 * segment left the 6 GiB file in /dev/shm. */
Test(fault, stopped_during_shm_reserve_leaves_nothing, .timeout = 60)
{
    char   before[64][64], after[64][64], cmd[512];
    int    nbefore, nafter, status = 0, seen = 0;
    pid_t  job;
    double t0;

    nbefore = drv_shm_objects(before, 64);
    snprintf(cmd, sizeof(cmd), "exec env GV_TRANSPORT=%s %s GV_HEAP=6g "
             "%s/bin/gvrun -n 1 %s/examples/hello > /dev/null 2>&1",
             drv_tls[DRV_SHM].name, drv_tls[DRV_SHM].env, GV_BUILD_DIR,
             GV_BUILD_DIR);
    job = fork();
    cr_assert(job >= 0);
    if (job == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    for (t0 = drv_now_s(); (drv_now_s() - t0 < 20) && !seen; usleep(2000))
        seen = drv_shm_objects(after, 64) > nbefore;
    kill(job, SIGTERM);
    for (t0 = drv_now_s(); drv_now_s() - t0 < 15; usleep(5000))
        if (waitpid(job, &status, WNOHANG) == job)
            break;
    if (drv_now_s() - t0 >= 15) {
        kill(job, SIGKILL);
        waitpid(job, &status, 0);
    }
    nafter = drv_shm_objects(after, 64);
    cr_expect(seen, "the segment never appeared in /dev/shm");
    cr_expect(nafter <= nbefore, "%d shared-memory objects left in /dev/shm "
              "(first: %s)", nafter - nbefore,
              (nafter > 0) ? after[nafter - 1] : "");
    for (; nafter > nbefore; nafter--) { /* do not leave 6 GiB behind */
        snprintf(cmd, sizeof(cmd), "/dev/shm/%s", after[nafter - 1]);
        unlink(cmd);
    }
}
