/* Criterion driver of the cases specific to the ofi transport: its runs
 * of the mr_* programs under settings of its own, ranks that opened their
 * provider differently, and frames forged or left owed at an ofi job.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

static const mr_case_t cases[] = {
    /* ofi over rxm: idle without a CQ wait object (GV_OFI_WAIT=auto when
     * ranks fit the cores), and either choice forced */
    {DRV_OFI_RXM, "mr_idle", 2, "", 60, ""},
    {DRV_OFI_RXM, "mr_idle", 2, "", 60, "GV_OFI_WAIT=fd"},
    {DRV_OFI_RXM, "mr_idle", 4, "", 60, "GV_OFI_WAIT=none"},
    {DRV_OFI_RXM, "mr_ucx_order", 2, "-N", 90, "GV_OFI_WAIT=fd"},
    /* ofi/shm: a frame per message, so that those past inject_size go as
     * split parts (batched, the same sizes leave in larger frames) */
    {DRV_OFI_SHM, "mr_sizes", 2, "", 90, "GV_AGGREGATE=0"},
    {DRV_OFI_SHM, "mr_sizes", 4, "", 120, "GV_AGGREGATE=0"},
    /* A flood of unaggregated messages both ways: over ofi/shm it wedged a
     * rank before the ofi transport had flow control (2^20 words). */
    {DRV_OFI_SHM, "mr_gups", 2, "--mode am --log2 20", 120, ""},
    {DRV_OFI_SHM, "mr_gups", 4, "--mode am --log2 18", 120, ""},
};

DRV_MULTIRANK_RUN(cases)

/* The libfabric provider of the ofi configuration @a t: its label after
 * "ofi/". */
static const char *provider(const tl_cfg_t *t)
{
    const char *slash = strchr(t->label, '/');

    return (slash != NULL) ? slash + 1 : t->label;
}

/* One rank without the tagged large-frame path (GV_OFI_TAGGED=0, as when
 * its first open failed and it settled for the next rung) and the others
 * with it: frames must go untagged and within every rank's limit, or the
 * job hangs (tagged frames nobody matches, or 1 MiB frames copied into a
 * multi-receive buffer that has 128 KiB left). mr_ofi_large checks every
 * byte; the first rank to start is the one without. */
static void ofi_one_untagged(enum drv_tl tl, int nranks)
{
    const tl_cfg_t *t = &drv_tls[tl];
    char            cmd[1024], flag[64], *out = NULL;
    int             rc;

    if (!t->built)
        cr_skip_test("%s was not built", t->name);
    snprintf(flag, sizeof(flag), "/tmp/gv-untagged-%d", (int)getpid());
    rmdir(flag);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s GV_LOG=info "
             "timeout -k 5 90 %s/bin/gvrun -n %d sh -c 'if mkdir %s "
             "2>/dev/null; then export GV_OFI_TAGGED=0; fi; exec "
             "%s/tests/multirank/mr_ofi_large'", t->name, t->env,
             GV_BUILD_DIR, nranks, flag, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    rmdir(flag);
    cr_expect_eq(rc, 0, "%s, %d ranks, one without tagged frames: "
                 "exit %d%s:\n%s", t->label, nranks, rc,
                 (rc == 124) ? " (timed out)" : "", out ? out : "");
    cr_expect(out && strstr(out, "opened without tagged messages, so no "
                                 "rank sends frames tagged"),
              "%s: no rank said it saw a peer without tagged frames:\n%s",
              t->label, out ? out : "");
    free(out);
}

Test(ofi, one_rank_untagged_shm, .timeout = 120)
{
    ofi_one_untagged(DRV_OFI_SHM, 2);
}

Test(ofi, one_rank_untagged_of_four_rxm, .timeout = 120)
{
    ofi_one_untagged(DRV_OFI_RXM, 4);
}

/* The rest of a split message that the receiver never takes: the AM
 * layer counted the message as sent, so the ofi transport itself must
 * name the rank (mr_ofi_owed.c). */
Test(fault, owed_parts_named_ofi_shm, .timeout = 60)
{
    drv_expect_stuck_named(&drv_tls[DRV_OFI_SHM], "mr_ofi_owed", "",
                       "still owes it the last 4120 bytes of a split "
                       "message", 1);
}

/* Frames forged at an ofi job from a libfabric endpoint of rank 0's own
 * (mr_ofi_stranger: too short, too long, another job's key, impossible
 * sources, a delivered seq and one far ahead, bad padding, malformed
 * grants, id frames without a valid id; untagged and tagged) while real
 * messages fly, and before them id frames and parts of split messages out
 * of place with the very seq the receiver expects next (so that they meet
 * every check of the transport's fast path and its reassembly): each is
 * rejected with its reason, and every real message still arrives once, in
 * order and intact. Over shm the frames longer than the receive buffer
 * are left out (they wedge libfabric 1.17's shm receiver: see
 * mr_ofi_stranger.c). */
static void forged_frames_rejected_ofi(enum drv_tl tl, int kinds)
{
    static const char *why[] = {
        "dropped a 8-byte frame (frames are 16 to",
        "dropped a 24-byte frame without this job's key",
        "dropped a frame from invalid rank 2147483647",
        "dropped a frame from invalid rank 1",
        "dropped a stale frame from rank 0 (seq 0,",
        "dropped a frame from rank 0 too far ahead (seq 1073741824,",
        "dropped a 24-byte frame with 8 bytes of padding",
        "dropped a malformed grant (24 bytes, rank 0)",
        "dropped a grant from rank 0 for 1073741824 frames",
        "dropped a 24-byte id frame without a valid id",
        "dropped a 16-byte id frame without a valid id",
        "dropped a 72-byte frame without this job's key",
        "dropped a 128-byte frame with 64 bytes of padding",
        "dropped a 32-byte frame without this job's key",
        "dropped a 32-byte id frame without a valid id",
        /* fmore_pad, fcont_idf, fcont_lone (whose seq is the one rank 1
         * expects next: not known here) */
        "dropped a 32-byte part frame with 1 bytes of padding (only a "
        "message's last frame has any)",
        "dropped a 32-byte continuation frame marked as an id frame",
        "dropped a continuation frame from rank 0 (seq ",
        ") without a message in progress",
        /* fmore_long (split_max differs: 16320 over shm, 0 over rxm) */
        "): its message would be longer than ",
        "a receive failed: Truncation error", /* long, tlong: not shm */
    };
    const tl_cfg_t *t    = &drv_tls[tl];
    const char     *prov = provider(t);
    char            cmd[1024], line[96], *out = NULL;
    size_t          n = sizeof(why) / sizeof(why[0]);
    int             rc;

    if (!t->built)
        cr_skip_test("%s was not built", t->name);
    snprintf(cmd, sizeof(cmd),
             "env GV_TRANSPORT=%s %s GV_WARN_UNUSED_ENV=0 "
             "timeout -k 5 90 %s/bin/gvrun -n 2 "
             "%s/tests/multirank/mr_ofi_stranger", t->name, t->env,
             GV_BUILD_DIR, GV_BUILD_DIR);
    rc = drv_run(cmd, &out);
    cr_assert_not_null(out);
    snprintf(line, sizeof(line), "forged to rank 1 (%d kinds, provider %s)",
             kinds, prov);
    cr_assert(strstr(out, line) != NULL, "not every kind was forged (%s):\n%s",
              line, out);
    cr_expect_eq(rc, 0, "a forged frame was not rejected, or real messages "
                 "were lost, reordered or corrupted (exit %d%s):\n%s", rc,
                 (rc == 124) ? ", timed out" : "", out);
    if (strcmp(prov, "shm") == 0)
        n--;
    if (drv_expect_lines(out, why, n, "no frame was rejected for") > 0)
        cr_log_error("--- output ---\n%s--- end ---", out);
    free(out);
}

Test(fault, forged_frames_rejected_ofi_shm, .timeout = 120)
{
    forged_frames_rejected_ofi(DRV_OFI_SHM, 23);
}

Test(fault, forged_frames_rejected_ofi_rxm, .timeout = 120)
{
    forged_frames_rejected_ofi(DRV_OFI_RXM, 25);
}
