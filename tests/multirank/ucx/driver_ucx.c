/* Criterion driver of the cases specific to the ucx transport: its runs
 * of the mr_* programs under settings of its own, and faults injected in
 * front of real UCX (frames forged, a rank stuck inside the library).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

static const mr_case_t cases[] = {
    /* ucx: mid-size frames by UCX's own protocol choice (rendezvous from 8
     * KiB over tcp) instead of forced eager, mixed with tiny ones */
    {DRV_UCX_SM, "mr_ucx_order", 2, "", 90, "GV_UCX_EAGER=0"},
    {DRV_UCX_TCP, "mr_ucx_order", 2, "", 90, "GV_UCX_EAGER=0"},
    /* ... and gv_am_send_now's frames (format I, am_send_id) among them,
     * held behind rendezvous data still arriving */
    {DRV_UCX_SM, "mr_ucx_order", 2, "-N", 90, "GV_UCX_EAGER=0"},
    {DRV_UCX_TCP, "mr_ucx_order", 2, "-N", 90, "GV_UCX_EAGER=0"},
    {DRV_UCX_TCP, "mr_sizes", 2, "", 90, "GV_UCX_EAGER=0"},
};

DRV_MULTIRANK_RUN(cases)

/* Whether the ucx transport logged in @a out that it rejected for @a why
 * a frame whose payload (after the frame header) is longer than @a min
 * bytes. */
static int ucx_rejected_longer(const char *out, const char *why, size_t min)
{
    static const char pre[] = "ucx: rejected a frame (";
    const char       *p     = out;

    while ((p = strstr(p, pre)) != NULL) {
        size_t hbytes, dbytes;
        int    at = 0;

        p += sizeof(pre) - 1;
        if ((sscanf(p, "%zu header bytes, %zu data bytes): %n", &hbytes,
                    &dbytes, &at) == 2) &&
            (at > 0) && (dbytes > min) &&
            (strncmp(p + at, why, strlen(why)) == 0))
            return 1;
    }
    return 0;
}

/* Frames forged in front of real UCX (preload_forge_ucx.c: another job's
 * tag, a source rank out of range, sequence numbers ahead of the window
 * and behind it, a frame shorter than its header) among a stream of real
 * ones, requests and replies (format I) and batches alike: each is
 * rejected with its reason, and every real message still arrives once, in
 * order and intact (mr_ucx_order checks that). Format I frames of 4-16
 * KiB (gv_am_send_now() of mid-size payloads, sent eager in more than one
 * fragment) are forged too, and must be rejected for the same reasons:
 * accepted, a forged copy would pass for the real frame (same payload),
 * so only the log can tell. */
static void forged_frames_rejected(enum drv_tl tl)
{
    static const char *why[] = {
        "job tag mismatch (a frame of another job)",
        "bad source rank",
        "sequence number outside the window (duplicate or forged)",
        "frame without a header",
        "format I frame without its header",
    };
    const tl_cfg_t *t = &drv_tls[tl];
    char            cmd[1024], *out = NULL;
    const char     *line;
    unsigned long   n = 0, mid = 0;
    int             rc, bad, i;

    if (!t->built)
        cr_skip_test("%s was not built (the frames are forged into UCX)",
                     t->name);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s GV_TEST_FORGE_EVERY=7 "
             "GV_WARN_UNUSED_ENV=0 "
             "LD_PRELOAD=%s/tests/multirank/preload_forge_ucx.so "
             "timeout -k 5 90 %s/bin/gvrun -n 2 "
             "%s/tests/multirank/mr_ucx_order -N -n 2000", t->name, t->env,
             GV_BUILD_DIR, GV_BUILD_DIR, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_assert_not_null(out);
    line = strstr(out, "preload_forge_ucx: forged ");
    cr_assert(line != NULL, "the preload did not run:\n%s", out);
    sscanf(line, "preload_forge_ucx: forged %lu", &n);
    cr_assert(n > 0, "nothing was forged:\n%s", out);
    /* Each rank's preload reports its own mid-size forgeries. */
    for (; line != NULL;
         line = strstr(line + 1, "preload_forge_ucx: forged ")) {
        const char   *m   = strstr(line, "mid-size ");
        const char   *eol = strchr(line, '\n');
        unsigned long m_n = 0;

        if ((m != NULL) && ((eol == NULL) || (m < eol)) &&
            (sscanf(m, "mid-size %lu", &m_n) == 1))
            mid += m_n;
    }
    cr_assert(mid > 0, "no frame longer than 4 KiB was forged (format I "
              "frames of 4-16 KiB are not sent, or not forged):\n%s", out);
    cr_expect_eq(rc, 0, "real messages were lost, reordered or corrupted "
                 "(exit %d):\n%s", rc, out);
    bad = drv_expect_lines(out, why, sizeof(why) / sizeof(why[0]),
                           "no frame was rejected for");
    /* The forgeries a mid-size frame makes (its short copy is a tiny
     * frame): the frame header is what they get wrong. */
    for (i = 0; i < 3; i++) {
        if (!ucx_rejected_longer(out, why[i], 4096)) {
            cr_expect_fail("no frame with more than 4096 data bytes was "
                           "rejected for \"%s\" (%lu mid-size forgeries)",
                           why[i], mid);
            bad++;
        }
    }
    if (bad > 0)
        cr_log_error("--- output ---\n%s--- end ---", out);
    free(out);
}

Test(fault, forged_frames_rejected_ucx_sm, .timeout = 120)
{
    forged_frames_rejected(DRV_UCX_SM);
}

Test(fault, forged_frames_rejected_ucx_tcp, .timeout = 120)
{
    forged_frames_rejected(DRV_UCX_TCP);
}

/* A rank stuck inside its network library's progress (fault injected
 * with LD_PRELOAD in front of real UCX: preload_hang.c) holds its only
 * thread, so neither it nor its peer polls: the monitor thread stops the
 * job within GV_TIMEOUT_S and names the rank. */
Test(fault, stuck_in_library_named, .timeout = 60)
{
    const tl_cfg_t *t = &drv_tls[DRV_UCX_SM];
    char            cmd[1024], flag[64], line[64], *out = NULL;
    double          t0;
    int             rc, r;

    if (!t->built)
        cr_skip_test("%s was not built (the fault is injected into UCX)",
                     t->name);
    snprintf(flag, sizeof(flag), "/tmp/gv-hang-%d", (int)getpid());
    rmdir(flag);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s GV_TIMEOUT_S=5 "
             "GV_TEST_HANG_AFTER=100000 GV_TEST_HANG_FLAG=%s "
             "LD_PRELOAD=%s/tests/multirank/preload_hang.so "
             "timeout -k 5 50 %s/bin/gvrun -n 2 %s/perf/pingpong -s 8 -S 8 "
             "-r 64", t->name, t->env, flag, GV_BUILD_DIR, GV_BUILD_DIR,
             GV_BUILD_DIR);
    t0 = drv_now_s();
    rc = drv_run(cmd, &out);
    rmdir(flag);
    cr_assert_not_null(out);
    cr_assert(strstr(out, "now stays inside ucp_worker_progress") != NULL,
              "the fault was not injected (the run ended first?): exit "
              "%d:\n%s", rc, out);
    cr_expect(rc != 0 && rc != 124, "exit %d:\n%s", rc, out);
    cr_expect(drv_now_s() - t0 < 20.0, "took %.1f s to stop:\n%s",
              drv_now_s() - t0, out);
    for (r = 0; r < 2; r++) {
        snprintf(line, sizeof(line), "gvrun: rank %d (pid", r);
        if (strstr(out, line) != NULL)
            break;
    }
    cr_assert(r < 2, "gvrun did not report which rank aborted:\n%s", out);
    snprintf(line, sizeof(line), "rank %d was stuck for 5 s", r);
    cr_expect(strstr(out, line) && strstr(out, "(GV_TIMEOUT_S) inside the "
                                               "transport's progress "
                                               "(transport ucx)"),
              "the message does not name rank %d stuck in the library:\n%s",
              r, out);
    free(out);
}
