/* Bad addresses across ranks: delegates to memory outside any allocation
 * (freed, past the end, never exported) fail with GV_ERR_INVALID, the
 * asynchronous ones make gv_gce_wait fail, the error message names the
 * address (at the home, or at the caller with GV_AMO=native), nothing
 * crashes, and the heap's exhaustion names GV_HEAP. Run as
 * `gvrun -n 2|4 mr_dsm_bad` (also with GV_AMO=native).
 * SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include "mr.h"
#include "dsm/dsm_internal.h"
#include "tasking/task_internal.h"

#include <inttypes.h>

static FILE *capture;
static int   saved_fd;

/* Send this rank's stderr to a temporary file. */
static void capture_begin(void)
{
    fflush(stderr);
    capture  = tmpfile();
    saved_fd = dup(2);
    MR_CHECK((capture != NULL) && (saved_fd >= 0), "cannot capture stderr");
    dup2(fileno(capture), 2);
}

/* Restore stderr; return what was written (static buffer). */
static const char *capture_end(void)
{
    static char buf[65536];
    size_t      n;

    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    rewind(capture);
    n      = fread(buf, 1, sizeof(buf) - 1, capture);
    buf[n] = '\0';
    fclose(capture);
    fputs(buf, stderr); /* keep it visible in the test's log */
    return buf;
}

int main(int argc, char **argv)
{
    gv_gaddr_t  a, freed = GV_GADDR_NULL, past;
    uint64_t    v = 0, hits, P;
    int64_t     old;
    gv_gce_t    gce;
    const char *log;
    char        hex1[32], hex2[32];
    int         me;

    mr_init(&argc, &argv);
    gv_barrier();
    me = gv_rank();
    P  = (uint64_t)gv_nranks();

    /* A freed block homed on rank 0, and the word past a live allocation
     * of one block (its next block is on rank 1 and allocated to nobody). */
    if (me == 0) {
        MR_OK(gv_global_alloc(8 * gv_global_block_size() * P, &a));
        MR_OK(gv_global_free(a));
        freed = a;
        MR_OK(gv_global_alloc(gv_global_block_size(), &a));
        past = gv_gaddr_add(a, (int64_t)gv_global_block_size());
        MR_CHECK(a == freed, "first fit should reuse the freed range");
        freed = gv_gaddr_add(a, 2 * (int64_t)gv_global_block_size() *
                                    (int64_t)P);
    }
    MR_OK(gv_broadcast(0, &freed, sizeof(freed)));
    MR_OK(gv_broadcast(0, &past, sizeof(past)));
    snprintf(hex1, sizeof(hex1), "%#" PRIx64, freed);
    snprintf(hex2, sizeof(hex2), "%#" PRIx64, past);

    capture_begin();
    MR_OK(gv_coll_barrier());
    if (me == (int)(P - 1)) {
        MR_CHECK(gv_delegate_read(freed, &v, 8) == GV_ERR_INVALID,
                 "read of freed memory succeeded");
        MR_CHECK(gv_delegate_fetch_add(past, 1, &old) == GV_ERR_INVALID,
                 "fetch-and-add past the allocation succeeded");
        MR_CHECK(gv_delegate_cswap(freed, 0, 1, &v) == GV_ERR_INVALID,
                 "cswap of freed memory succeeded");
        MR_CHECK(gv_delegate_write(past, &v, 8) == GV_ERR_INVALID,
                 "write past the allocation succeeded");
        /* Never exported: a stack address of rank 0. */
        MR_CHECK(gv_delegate_read((gv_gaddr_t)(uintptr_t)&v & ((1ull << 48) - 1),
                                  &v, 8) == GV_ERR_INVALID,
                 "read of unexported memory succeeded");
    }
    MR_OK(gv_gce_create(&gce));
    MR_OK(gv_delegate_add(past, 1, &gce));
    MR_CHECK(gv_gce_wait(&gce) == GV_ERR_INVALID,
             "wait on a failed asynchronous add returned success");
    MR_OK(gv_coll_barrier());
    gv_flush();
    log = capture_end();
    hits = (strstr(log, hex1) != NULL) + (strstr(log, hex2) != NULL);
    MR_OK(gv_allreduce(&hits, 1, GV_UINT64, GV_SUM));
    MR_CHECK(hits >= 2, "the bad addresses %s and %s were not named in any "
             "rank's errors", hex1, hex2);

    /* The heap is still sound: a good address works from everywhere. */
    if (me == 0) {
        uint64_t z = 0;
        MR_OK(gv_delegate_write(a, &z, 8));
    }
    MR_OK(gv_broadcast(0, &a, sizeof(a)));
    MR_OK(gv_delegate_fetch_add(a, 1, &old));
    MR_OK(gv_coll_barrier());
    MR_OK(gv_delegate_read(a, &v, 8));
    MR_CHECK(v == P, "counter %llu after %llu adds", (unsigned long long)v,
             (unsigned long long)P);

    /* Exhaustion names GV_HEAP, and the heap survives it. */
    if (me == (int)(P - 1)) {
        gv_gaddr_t huge;
        capture_begin();
        MR_CHECK(gv_global_alloc(gv_sym_heap_size() * P * 2, &huge) ==
                     GV_ERR_NO_MEMORY, "a huge allocation succeeded");
        MR_CHECK(gv_global_alloc_symmetric(gv_sym_heap_size(), &huge) ==
                     GV_ERR_NO_MEMORY, "a huge symmetric allocation "
                     "succeeded");
        log = capture_end();
        MR_CHECK(strstr(log, "GV_HEAP") != NULL, "exhaustion does not name "
                 "GV_HEAP: %s", log);
        MR_OK(gv_global_alloc(64, &huge));
        MR_OK(gv_global_free(huge));
    }
    MR_OK(gv_coll_barrier());
    if (me == 0) {
        MR_OK(gv_global_free(a));
        printf("mr_dsm_bad: bad addresses refused and named: ok\n");
    }
    gv_barrier();
    gv_finalize();
    return 0;
}
