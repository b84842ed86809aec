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
#include <stdlib.h>
#include <string.h>
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

/* The bootstrap outlives gv_finalize where it can start the job again
 * (gvrun, a single rank): a later gv_init reuses it, and it says goodbye
 * to the launcher at exit. MPI and PMIx initialize once per process: their
 * bootstrap closes at gv_finalize, and a later gv_init is refused. */
static gv_boot_t  *kept_boot;
static const char *closed_boot; /* the name of one that cannot reopen */

static void kept_boot_fini(void)
{
    if (kept_boot != NULL)
        gv__boot_fini(kept_boot);
    kept_boot = NULL;
}

static int boot_reusable(const gv_boot_t *boot)
{
    return (strcmp(boot->ops->name, "gvrun") == 0) ||
           (strcmp(boot->ops->name, "single") == 0);
}

void gv_init_opts_default(gv_init_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->layers       = GV_LAYERS_MESSAGES;
    opts->bind         = GV_INIT_BIND_NONE;
    opts->thread_level = GV_THREAD_FUNNELED;
    opts->errors_fatal = 0;
}

gv_thread_level_t gv_thread_level(void)
{
    return (gv_thread_level_t)gv__ctx.thread_level;
}

static gv_status_t opts_check(const gv_init_opts_t *opts)
{
    if (opts == NULL) {
        gv_error("gv_init_opts: opts must not be NULL (fill it with "
                 "gv_init_opts_default)");
        return GV_ERR_INVALID;
    }
    if ((opts->layers < GV_LAYERS_MESSAGES) || (opts->layers > GV_LAYERS_ALL)) {
        gv_error("gv_init_opts: layers %d is not one of GV_LAYERS_MESSAGES "
                 "(1), GV_LAYERS_HEAP (2), GV_LAYERS_ALL (3)",
                 (int)opts->layers);
        return GV_ERR_INVALID;
    }
    if ((opts->bind != GV_INIT_BIND_NONE) && (opts->bind != GV_INIT_BIND_ENV)) {
        gv_error("gv_init_opts: bind %d is not GV_INIT_BIND_NONE (0) or "
                 "GV_INIT_BIND_ENV (1)", (int)opts->bind);
        return GV_ERR_INVALID;
    }
    if (opts->thread_level == GV_THREAD_MULTIPLE) {
        gv_error("gv_init_opts: GV_THREAD_MULTIPLE is not offered (calls "
                 "from many threads at once); use GV_THREAD_SERIALIZED with "
                 "a lock of your own around every call");
        return GV_ERR_UNSUPPORTED;
    }
    if ((opts->thread_level < GV_THREAD_SINGLE) ||
        (opts->thread_level > GV_THREAD_MULTIPLE)) {
        gv_error("gv_init_opts: thread level %d is not one of "
                 "GV_THREAD_SINGLE (0), FUNNELED (1), SERIALIZED (2)",
                 (int)opts->thread_level);
        return GV_ERR_INVALID;
    }
    return GV_OK;
}

/* Set when init failed on a bad GV_* value: gv_init exits then. */
static int config_error;

static gv_status_t init(const gv_init_opts_t *opts)
{
    char           err[512];
    gv_tl_params_t params;
    gv_status_t    status;
    gv_boot_t     *boot;
    gv_tl_t       *tl;

    gv__last_error_clear();
    config_error = 0;
    status = opts_check(opts);
    if (status != GV_OK)
        return status;
    if (gv__ctx.initialized) {
        gv_error("gv_init called twice (without gv_finalize between)");
        return GV_ERR_STATE;
    }
    if (gv__env_parse(err, sizeof(err)) != GV_OK) {
        gv_error("%s", err);
        config_error = 1;
        return GV_ERR_INVALID;
    }
    status = gv__tl_name_check(gv__env.TRANSPORT);
    if (status != GV_OK)
        return status; /* GV_ERR_NOT_FOUND: returned by gv_init too */
    if (closed_boot != NULL) {
        gv_error("gv_init after gv_finalize: the %s bootstrap initializes "
                 "once per process (MPI and PMIx cannot start again); start "
                 "the ranks with gvrun to finalize and init again",
                 closed_boot);
        return GV_ERR_UNSUPPORTED;
    }
    gv__signals_install();
    if (kept_boot != NULL) {
        boot      = kept_boot;
        kept_boot = NULL;
    } else {
        status = gv__boot_init(gv__env.TRANSPORT, &boot);
        if (status != GV_OK) {
            gv__signals_restore();
            return status;
        }
        /* gvrun already warned once for the job. */
        if ((boot->rank == 0) && !gv__env.BOOT_FD_set)
            gv__env_warn_unknown();
        if ((opts->bind == GV_INIT_BIND_ENV) && (gv__env.BIND == GV_BIND_CORE))
            gv__topo_bind(boot->local_rank, boot->local_size);
    }
    gv__ctx.boot         = boot;
    gv__ctx.rank         = boot->rank;
    gv__ctx.size         = boot->size;
    gv__ctx.thread_level = opts->thread_level;
    gv__ctx.layers       = opts->layers;
    gv__wait_init(boot);
    gv__failures_init(boot->size);
    gv__fd_start();

    memset(&params, 0, sizeof(params));
    params.heap_size = (opts->layers >= GV_LAYERS_HEAP) ? gv__env.HEAP : 0;
    gv__am_params(&params);
    status = gv__tl_open(gv__env.TRANSPORT, boot, &params, &tl);
    if (status != GV_OK)
        goto err_boot;
    gv__ctx.tl      = tl;
    gv__ctx.tl_name = tl->ops->name;
    gv__live_init(boot);
    /* Again, after the network libraries opened: a handler of theirs is
     * replaced (core/cleanup.c says why). */
    gv__signals_install();
    /* What GV_AMO=native needs: refused here, so that a job that asks for
     * it over a transport without it never runs with every delegate
     * failing (every rank has the same environment and transport). */
    if ((opts->layers >= GV_LAYERS_HEAP) && (gv__env.AMO == GV_AMO_NATIVE) &&
        ((tl->attr.caps & (GV_TL_CAP_ATOMIC64 | GV_TL_CAP_RMA)) !=
         (GV_TL_CAP_ATOMIC64 | GV_TL_CAP_RMA))) {
        gv_error("GV_AMO=native, but transport %s has no native remote %s "
                 "(see gvinfo -t): use GV_AMO=am, or a GV_TRANSPORT with "
                 "atomics and put/get", tl->ops->name,
                 (tl->attr.caps & GV_TL_CAP_ATOMIC64) ? "put/get"
                 : (tl->attr.caps & GV_TL_CAP_RMA) ? "atomics"
                                                   : "atomics or put/get");
        status = GV_ERR_UNSUPPORTED;
        goto err_tl;
    }
    status     = gv__am_start(tl);
    if (status != GV_OK)
        goto err_am;
    gv__team_init();
    gv__am_route_start();
    if (opts->layers >= GV_LAYERS_HEAP)
        heap_alloc(tl, params.heap_size);
    gv__ctx.initialized = 1;
    gv__monitor_start();
    if (opts->layers >= GV_LAYERS_ALL) {
        gv__task_init();
        gv__dsm_init();
    }
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
    gv__am_announce_kept();
    return GV_OK;

err_am:
    gv__am_fini();
err_tl:
    gv__live_fini();
    gv__tl_close(tl);
    gv__ctx.tl      = NULL;
    gv__ctx.tl_name = NULL;
err_boot:
    gv__failures_fini();
    if (boot_reusable(boot)) {
        kept_boot = boot; /* the job goes on; a later init may succeed */
    } else {
        closed_boot = boot->ops->name;
        gv__boot_fini(boot);
    }
    gv__ctx.boot = NULL;
    gv__signals_restore();
    return status;
}

static int exit_registered;

static gv_status_t init_or_die(const gv_init_opts_t *opts, int fatal)
{
    gv_status_t status = init(opts);

    if (!exit_registered) {
        exit_registered = 1;
        atexit(kept_boot_fini);
    }
    if ((status != GV_OK) && fatal) {
        fprintf(stderr, "[----] grapevine: gv_init failed (%s); exiting\n",
                gv_status_name(status));
        exit(1);
    }
    return status;
}

gv_status_t gv_init_opts(const gv_init_opts_t *opts)
{
    return init_or_die(opts, (opts != NULL) && opts->errors_fatal);
}

gv_status_t gv_init(int *argc_p, char ***argv_p)
{
    gv_init_opts_t opts;

    (void)argc_p;
    (void)argv_p;
    opts.layers       = GV_LAYERS_ALL;
    opts.bind         = GV_INIT_BIND_ENV;
    opts.thread_level = GV_THREAD_SINGLE;
    opts.errors_fatal = 0;
    /* A bad GV_* value exits, as it always did; anything else is returned
     * (already logged). */
    {
        gv_status_t status = init_or_die(&opts, 0);

        if (config_error)
            exit(1);
        return status;
    }
}

void gv_finalize(void)
{
    int failed;

    if (!gv__ctx.initialized)
        return;
    /* After a peer failed, no collective can complete: tear this rank
     * down alone. */
    failed = gv__ctx.nfailed > 0;
    if (!failed) {
        gv_barrier();
        gv_am_wait_local();
    }
    if (gv__ctx.layers >= GV_LAYERS_ALL) {
        gv__dsm_fini();
        gv__task_fini();
    }
    if (!failed)
        gv_barrier();
    if (gv__env.STATS)
        gv__am_stats_print();
    /* From here a peer closing its connection is expected. The boot
     * barrier makes sure every rank knows that before anyone closes. */
    gv__ctx.finalizing = 1;
    gv__monitor_stop();
    if (!failed)
        gv__boot_barrier(gv__ctx.boot);
    if (gv__ctx.layers >= GV_LAYERS_HEAP)
        gv__rma_fini();
    gv__team_fini();
    gv__wait_fini();
    gv__live_fini();
    gv__tl_close(gv__ctx.tl);
    gv__ctx.tl      = NULL;
    gv__ctx.tl_name = NULL;
    gv__am_fini();
    if (heap != NULL)
        munmap(heap, heap_len);
    heap = NULL;
    if (boot_reusable(gv__ctx.boot)) {
        kept_boot = gv__ctx.boot;
    } else {
        closed_boot = gv__ctx.boot->ops->name;
        gv__boot_fini(gv__ctx.boot);
    }
    gv__failures_fini();
    gv__ctx.boot        = NULL;
    gv__ctx.initialized = 0;
    gv__ctx.finalizing  = 0;
    gv__ctx.layers      = 0;
    gv__progress_hooks_clear();
    gv__signals_restore();
}
