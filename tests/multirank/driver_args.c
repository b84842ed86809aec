/* Criterion driver of the launcher's (gvrun) and gvinfo's arguments and
 * of what gvrun does with the program it is given: a bad argument is
 * named, with what is accepted, and a non-zero exit; the values at the
 * ends of each range still run. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

#include <fcntl.h>
#include <signal.h>

/* --timeout is parsed strictly, within a range whose nanoseconds fit 64
 * bits: 18446744074 s once overflowed to half a second, and '' meant
 * "never". */
Test(args, gvrun_timeout_strict_and_bounded, .timeout = 60)
{
    static const char *bad[] = {"18446744074", "", " 5", "5s", "-1",
                                "1000000001"};
    const char *lines[3];
    char        cmd[512], quoted[64];
    double      t0;
    size_t      i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun --timeout "
                 "'%s' -n 2 sleep 3", GV_BUILD_DIR, bad[i]);
        snprintf(quoted, sizeof(quoted), "--timeout '%s'", bad[i]);
        lines[0] = quoted;
        lines[1] = "from 0 (never) to 1000000000";
        t0       = drv_now_s();
        drv_expect_run(cmd, 2, lines, 2);
        cr_expect(drv_now_s() - t0 < 2.0, "%s ran the job", cmd);
    }
    /* The largest accepted value runs the job to its end. */
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun --timeout "
             "1000000000 -n 2 sleep 1", GV_BUILD_DIR);
    drv_expect_run(cmd, 0, NULL, 0);
    /* A small one still stops the job, with 124. */
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun --timeout 1 "
             "-n 2 sleep 20", GV_BUILD_DIR);
    lines[0] = "the job ran longer than --timeout 1 s";
    drv_expect_run(cmd, 124, lines, 1);
}

/* -n is range-checked before it becomes an int (4294967298 started 2
 * ranks) and takes digits only. The largest count is shown accepted
 * without starting thousands of ranks (4,096 took 32 s on a loaded 2-core
 * machine: perf/gvrun_start.sh measures that): the GV_* check that comes
 * after the options stops the run. */
Test(args, gvrun_np_strict, .timeout = 60)
{
    static const char *bad[] = {"4294967298", " 2", "", "0", "4097", "2x",
                                "+2"};
    const char *lines[2];
    char        cmd[512], quoted[64], *out = NULL;
    size_t      i;
    int         rc;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun -n '%s' "
                 "echo ran", GV_BUILD_DIR, bad[i]);
        snprintf(quoted, sizeof(quoted), "-n '%s'", bad[i]);
        lines[0] = quoted;
        lines[1] = "from 1 to 4096";
        drv_expect_run(cmd, 2, lines, 2);
    }
    snprintf(cmd, sizeof(cmd), "env GV_LOG=bogus timeout -k 5 30 "
             "%s/bin/gvrun --np 4096 echo ran", GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_expect(rc == 1 && out && strstr(out, "GV_LOG='bogus'") &&
                  !strstr(out, "-n '") && !strstr(out, "ran"),
              "--np 4096 was not accepted (exit %d):\n%s", rc,
              out ? out : "");
    free(out);
    /* A few ranks start and end; 16 take well under a second. */
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun --np 16 true",
             GV_BUILD_DIR);
    drv_expect_run(cmd, 0, NULL, 0);
}

/* A rank that exits 0 before it joins the bootstrap is named at once (the
 * others waited GV_TIMEOUT_S, and the message did not say it had exited);
 * programs that never call gv_init still run, as do ones that finalize. */
Test(args, gvrun_rank_exits_0_before_bootstrap, .timeout = 90)
{
    const char *lines[1];
    char        cmd[768];
    double      t0;
    int         n;

    for (n = 2; n <= 3; n++) {
        snprintf(cmd, sizeof(cmd), "env GV_TIMEOUT_S=30 timeout -k 5 60 "
                 "%s/bin/gvrun -n %d sh -c 'if [ $(( $$ %% %d )) = 0 ]; "
                 "then exit 0; else exec %s/examples/hello; fi'",
                 GV_BUILD_DIR, n, n, GV_BUILD_DIR);
        lines[0] = "exited with status 0 before it joined the job's "
                   "bootstrap (gv_init), while";
        t0       = drv_now_s();
        drv_expect_run(cmd, 1, lines, 1);
        cr_expect(drv_now_s() - t0 < 10.0, "%d ranks: took %.1f s to stop", n,
                  drv_now_s() - t0);
    }
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun -n 2 sh -c "
             "'sleep 1; exit 0'", GV_BUILD_DIR);
    drv_expect_run(cmd, 0, NULL, 0);
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun -n 3 "
             "%s/examples/hello", GV_BUILD_DIR, GV_BUILD_DIR);
    drv_expect_run(cmd, 0, NULL, 0);
}

/* A name without a '/' is looked up on PATH only: a file of that name in
 * the current directory is not run, and the message says so (it said "No
 * such file or directory" of a file that is there). */
Test(args, gvrun_program_in_cwd_not_on_path, .timeout = 60)
{
    const char *lines[1];
    char        cmd[768];

    snprintf(cmd, sizeof(cmd), "env PATH=/usr/bin:/bin timeout -k 5 30 "
             "%s/bin/gvrun -n 2 README.md", GV_BUILD_DIR);
    lines[0] = "gvrun: cannot run README.md: not found in PATH; ./README.md "
               "exists but is not an executable file";
    drv_expect_run(cmd, 127, lines, 1);
    snprintf(cmd, sizeof(cmd), "cd %s/examples && env PATH=/usr/bin:/bin "
             "timeout -k 5 30 ../bin/gvrun -n 1 hello", GV_BUILD_DIR);
    lines[0] = "gvrun: cannot run hello: not found in PATH; use ./hello";
    drv_expect_run(cmd, 127, lines, 1);
    snprintf(cmd, sizeof(cmd), "timeout -k 5 30 %s/bin/gvrun -n 1 "
             "./README.md", GV_BUILD_DIR);
    lines[0] = "gvrun: cannot run ./README.md: permission denied";
    drv_expect_run(cmd, 127, lines, 1);
}

/* gvinfo takes options only: anything else is named, with the usage, and
 * exit 2 (it was ignored, exit 0); --help is the usage, exit 0. */
Test(args, gvinfo_rejects_unknown_arguments, .timeout = 60)
{
    static const char *bad[][2] = {
        {"extra", "gvinfo: unexpected argument 'extra'"},
        {"-t junk", "gvinfo: unexpected argument 'junk'"},
        {"-q", "gvinfo: unknown option '-q'"},
        {"--bogus", "gvinfo: unknown option '--bogus'"},
    };
    const char *lines[2];
    char        cmd[512];
    size_t      i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(cmd, sizeof(cmd), "timeout 30 %s/bin/gvinfo %s",
                 GV_BUILD_DIR, bad[i][0]);
        lines[0] = bad[i][1];
        lines[1] = "usage: gvinfo";
        drv_expect_run(cmd, 2, lines, 2);
    }
    lines[0] = "usage: gvinfo";
    snprintf(cmd, sizeof(cmd), "timeout 30 %s/bin/gvinfo --help",
             GV_BUILD_DIR);
    drv_expect_run(cmd, 0, lines, 1);
    snprintf(cmd, sizeof(cmd), "timeout 30 %s/bin/gvinfo -h", GV_BUILD_DIR);
    drv_expect_run(cmd, 0, lines, 1);
    lines[0] = "grapevine ";
    snprintf(cmd, sizeof(cmd), "timeout 30 %s/bin/gvinfo -v", GV_BUILD_DIR);
    drv_expect_run(cmd, 0, lines, 1);
}

/* The pids of @a pid's children (/proc/<pid>/task/<pid>/children) added
 * to @a seen (@a n_p of them, room for @a max) once each; returns how many
 * children it has now. */
static int children_of(pid_t pid, pid_t *seen, int *n_p, int max)
{
    char  path[96];
    FILE *f;
    int   c, now = 0, j;

    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
             (int)pid);
    if ((f = fopen(path, "r")) == NULL)
        return 0;
    while (fscanf(f, "%d", &c) == 1) {
        now++;
        for (j = 0; (j < *n_p) && (seen[j] != c); j++)
            ;
        if ((j == *n_p) && (*n_p < max))
            seen[(*n_p)++] = c;
    }
    fclose(f);
    return now;
}

/* SIGINT while gvrun starts 4,096 ranks stops the start: no rank starts
 * after it (it once started all 2,048 of --np 2048 and exited 26 s
 * later), the ones started get the signal, and gvrun exits 130. Judged
 * by the ranks counted, not by how fast this machine forks. */
Test(args, gvrun_signal_while_spawning, .timeout = 120)
{
    enum { MAX = 4096 };
    static pid_t seen[MAX];
    int          nseen = 0, at_signal = 0, most = 0, now, status = 0, i;
    int          alive = 0;
    pid_t        job;
    double       t0;
    char         np[8];

    snprintf(np, sizeof(np), "%d", MAX);
    job = fork();
    cr_assert(job >= 0);
    if (job == 0) {
        int devnull = open("/dev/null", O_RDWR);

        dup2(devnull, 1);
        execl(GV_BUILD_DIR "/bin/gvrun", "gvrun", "--np", np, "sleep", "600",
              (char *)NULL);
        _exit(127);
    }
    /* A few ranks have started, far from all. */
    t0 = drv_now_s();
    while ((at_signal < 8) && (drv_now_s() - t0 < 60))
        at_signal = children_of(job, seen, &nseen, MAX);
    cr_assert(at_signal >= 8, "gvrun started %d ranks in 60 s", at_signal);
    kill(job, SIGINT);
    at_signal = children_of(job, seen, &nseen, MAX);
    t0        = drv_now_s();
    while (drv_now_s() - t0 < 60) {
        now  = children_of(job, seen, &nseen, MAX);
        most = (now > most) ? now : most;
        if (waitpid(job, &status, WNOHANG) == job)
            break;
        usleep(2000);
    }
    if (drv_now_s() - t0 >= 60) {
        kill(job, SIGKILL);
        waitpid(job, &status, 0);
    }
    for (i = 0; i < nseen; i++)
        if (kill(seen[i], 0) == 0) {
            alive++;
            kill(seen[i], SIGKILL);
        }
    /* The rank being started when the signal came may still start. */
    cr_expect(most <= at_signal + 2, "gvrun had %d ranks when it got SIGINT, "
              "and went on to %d", at_signal, most);
    cr_expect(WIFEXITED(status) && (WEXITSTATUS(status) == 130),
              "gvrun ended with status 0x%x, expected exit 130", status);
    cr_expect(alive == 0, "%d of the %d ranks started are still alive",
              alive, nseen);
}

/* What a user sees when a rank stops is documented where they look:
 * gvinfo -c's GV_TIMEOUT_S row gives the default and names gvrun
 * --timeout as the bound for a job that may stall silently. */
Test(args, gvinfo_documents_silent_stall, .timeout = 60)
{
    const char *lines[3];
    char        cmd[512];

    snprintf(cmd, sizeof(cmd), "env -u GV_TIMEOUT_S timeout 30 "
             "%s/bin/gvinfo -c", GV_BUILD_DIR);
    lines[0] = "A rank that stops while nobody waits on it is not named: the "
               "job waits, silently, until someone has waited this long (60 "
               "s by default)";
    lines[1] = "bound the whole run with gvrun --timeout SECONDS (exit 124)";
    lines[2] = "GV_TIMEOUT_S=60    (default)";
    drv_expect_run(cmd, 0, lines, 3);
}
