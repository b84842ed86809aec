/* Criterion driver of the cases specific to the shm transport: the names
 * of its segments gone from /dev/shm once every rank has mapped them, and
 * when the job is stopped while a segment is being reserved.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

#include <dirent.h>
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
/* The name in /dev/shm that process @a pid has open, into @a name (room
 * for 64); 1 if found. */
static int open_shm_name(pid_t pid, char *name)
{
    char           dir[64], path[320], target[512];
    struct dirent *e;
    DIR           *d;
    ssize_t        n;
    int            found = 0;

    snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
    if ((d = opendir(dir)) == NULL)
        return 0;
    while (!found && ((e = readdir(d)) != NULL)) {
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        n = readlink(path, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if ((strncmp(target, "/dev/shm/gv-", 12) == 0) &&
            (strlen(target + 9) < 64)) {
            strcpy(name, target + 9);
            found = 1;
        }
    }
    closedir(d);
    return found;
}

/* Judged by the job's own name (the rank's open file), not by a count of
 * all of /dev/shm: other jobs on the machine have names of their own. */
Test(fault, stopped_during_shm_reserve_leaves_nothing, .timeout = 60)
{
    char   name[64], path[96], cmd[512], kids[64];
    int    status = 0, seen = 0, rank = 0;
    pid_t  job;
    double t0;
    FILE  *f;

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
    snprintf(kids, sizeof(kids), "/proc/%d/task/%d/children", (int)job,
             (int)job);
    for (t0 = drv_now_s(); (drv_now_s() - t0 < 20) && !seen; usleep(2000)) {
        if ((rank == 0) && ((f = fopen(kids, "r")) != NULL)) {
            if (fscanf(f, "%d", &rank) != 1)
                rank = 0;
            fclose(f);
        }
        seen = (rank > 0) && open_shm_name(rank, name);
    }
    kill(job, SIGTERM);
    for (t0 = drv_now_s(); drv_now_s() - t0 < 15; usleep(5000))
        if (waitpid(job, &status, WNOHANG) == job)
            break;
    if (drv_now_s() - t0 >= 15) {
        kill(job, SIGKILL);
        waitpid(job, &status, 0);
    }
    cr_assert(seen, "the rank never had its segment open in /dev/shm");
    snprintf(path, sizeof(path), "/dev/shm/%s", name);
    cr_expect(access(path, F_OK) != 0, "the job's segment %s was left in "
              "/dev/shm", name);
    unlink(path); /* do not leave 6 GiB behind */
}
