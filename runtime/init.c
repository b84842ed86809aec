/* gv_init / gv_finalize: the one file that names every layer. Up, in
 * order: environment -> bootstrap -> binding -> transport -> active
 * messages and the one-sided heap -> tasking -> DSM; down in reverse.
 * Each layer offers its start and stop to this file and knows nothing of
 * the layers above it. SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"
#include "core/boot.h"
#include "transports/transport.h"
#include "aggregator/progress.h"
#include "aggregator/am_internal.h"
#include "aggregator/rma_internal.h"
#include "aggregator/team_internal.h"
#include "tasking/task_internal.h"
#include "dsm/dsm_internal.h"

#include <stdio.h>
#include <sys/mman.h>

static void  *heap;     /* when the transport has none */
static size_t heap_len;

static void heap_alloc(gv_tl_t *tl, size_t len)
{
    if (tl->attr.heap_base != NULL) {
        gv__rma_start(tl, tl->attr.heap_base, len);
        return;
    }
    heap = mmap(NULL, len, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (heap == MAP_FAILED)
        gv_fatal("mmap of the %zu-byte heap (GV_HEAP) failed: %m", len);
    /* Global memory is touched at random (delegates, GUPS): with 4 KiB
     * pages nearly every access misses the TLB. The kernel may refuse
     * (transparent huge pages off), which only costs that. */
    (void)madvise(heap, len, MADV_HUGEPAGE);
    heap_len = len;
    gv__rma_start(tl, heap, len);
}

gv_status_t gv_init(int *argc_p, char ***argv_p)
{
    char           err[512];
    gv_tl_params_t params;
    gv_status_t    status;
    gv_boot_t     *boot;
    gv_tl_t       *tl;

    if (gv__ctx.initialized) {
        gv_error("gv_init called twice");
        return GV_ERR_STATE;
    }
    if (gv__env_parse(err, sizeof(err)) != GV_OK) {
        fprintf(stderr, "[----] ERROR runtime/init.c gv_init: %s\n", err);
        exit(1);
    }
    status = gv__boot_init(gv__env.TRANSPORT, &boot);
    if (status != GV_OK)
        return status;
    gv__ctx.boot = boot;
    gv__ctx.rank = boot->rank;
    gv__ctx.size = boot->size;
    /* gvrun already warned once for the job. */
    if ((boot->rank == 0) && !gv__env.BOOT_FD_set)
        gv__env_warn_unknown();
    if (gv__env.BIND == GV_BIND_CORE)
        gv__topo_bind(boot->local_rank, boot->local_size);
    gv__wait_init(boot);
    gv__fd_start();

    memset(&params, 0, sizeof(params));
    params.heap_size = gv__env.HEAP;
    gv__am_params(&params);
    status = gv__tl_open(gv__env.TRANSPORT, boot, &params, &tl);
    if (status != GV_OK)
        goto err_boot;
    gv__ctx.tl      = tl;
    gv__ctx.tl_name = tl->ops->name;
    /* What GV_AMO=native needs: refused here, so that a job that asks for
     * it over a transport without it never runs with every delegate
     * failing (every rank has the same environment and transport). */
    if ((gv__env.AMO == GV_AMO_NATIVE) &&
        ((tl->attr.caps & (GV_TL_CAP_ATOMIC64 | GV_TL_CAP_RMA)) !=
         (GV_TL_CAP_ATOMIC64 | GV_TL_CAP_RMA))) {
        gv_error("GV_AMO=native, but transport %s has no native remote %s "
                 "(see gvinfo -t): use GV_AMO=am, or a GV_TRANSPORT with "
                 "atomics and put/get", tl->ops->name,
                 (tl->attr.caps & GV_TL_CAP_ATOMIC64) ? "put/get" : "atomics");
        status = GV_ERR_UNSUPPORTED;
        goto err_tl;
    }
    status     = gv__am_start(tl);
    if (status != GV_OK)
        goto err_tl;
    gv__team_init();
    heap_alloc(tl, params.heap_size);
    gv__ctx.initialized = 1;
    gv__monitor_start();
    gv__task_init();
    gv__dsm_init();
    if (gv__env.INFO && (boot->rank == 0)) {
        char caps[64];
        gv__tl_caps_str(tl->attr.caps, caps, sizeof(caps));
        fprintf(stderr, "[0000] INFO grapevine: %d ranks on %d node(s), "
                "boot %s, transport %s (%s) caps %s\n", boot->size,
                boot->nnodes, boot->ops->name, tl->ops->name,
                tl->attr.detail, caps);
        gv__env_print(stderr, 0);
    }
    gv_barrier();
    return GV_OK;

err_tl:
    gv__tl_close(tl);
    gv__ctx.tl      = NULL;
    gv__ctx.tl_name = NULL;
err_boot:
    gv__boot_fini(boot);
    gv__ctx.boot = NULL;
    return status;
}

void gv_finalize(void)
{
    if (!gv__ctx.initialized)
        return;
    gv_barrier();
    gv_am_wait_local();
    gv__dsm_fini();
    gv__task_fini();
    gv_barrier();
    if (gv__env.STATS)
        gv__am_stats_print();
    /* From here a peer closing its connection is expected. The boot
     * barrier makes sure every rank knows that before anyone closes. */
    gv__ctx.finalizing = 1;
    gv__monitor_stop();
    gv__boot_barrier(gv__ctx.boot);
    gv__rma_fini();
    gv__team_fini();
    gv__tl_close(gv__ctx.tl);
    gv__ctx.tl      = NULL;
    gv__ctx.tl_name = NULL;
    gv__am_fini();
    if (heap != NULL)
        munmap(heap, heap_len);
    heap = NULL;
    gv__boot_fini(gv__ctx.boot);
    gv__ctx.boot        = NULL;
    gv__ctx.initialized = 0;
    gv__ctx.finalizing  = 0;
    gv__progress_hooks_clear();
}
