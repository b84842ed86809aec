/* Bootstrap selection and the node map every transport reads.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/boot.h"
#include "core/core.h"
#include "core/plugin.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The launcher's own variables tell us who started us; nothing here is a
 * GV_* variable, so reading them directly is fine. */
static int under_pmix(void)
{
    return (getenv("PMIX_RANK") != NULL) || (getenv("PMIX_NAMESPACE") != NULL);
}

static int under_mpi_launcher(void)
{
    return (getenv("OMPI_COMM_WORLD_SIZE") != NULL) ||
           (getenv("PMI_RANK") != NULL) || under_pmix();
}

int gv__boot_under_mpi_launcher(void)
{
    return under_mpi_launcher();
}

/* Every rank sends its host name (and boot id, so that containers with
 * the same host name on different machines differ); equal names are one
 * node. */
static gv_status_t map_nodes(gv_boot_t *boot)
{
    enum { NAMELEN = 96 };
    char        mine[NAMELEN], *all;
    FILE       *f;
    gv_status_t status;
    int         i, j;

    memset(mine, 0, sizeof(mine));
    gethostname(mine, 60);
    f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        size_t n = strlen(mine);
        mine[n] = '/';
        if (fgets(mine + n + 1, NAMELEN - (int)n - 2, f) == NULL)
            mine[n] = '\0';
        fclose(f);
    }
    all    = gv_malloc((size_t)boot->size * NAMELEN);
    status = gv__boot_allgather(boot, mine, NAMELEN, all);
    if (status != GV_OK) {
        gv_free(all);
        return status;
    }
    boot->node_of    = gv_malloc(sizeof(int) * (size_t)boot->size);
    boot->nnodes     = 0;
    boot->local_rank = 0;
    boot->local_size = 0;
    for (i = 0; i < boot->size; i++) {
        all[i * NAMELEN + NAMELEN - 1] = '\0'; /* untrusted: terminate */
        for (j = 0; j < i; j++)
            if (strcmp(all + i * NAMELEN, all + j * NAMELEN) == 0)
                break;
        boot->node_of[i] = (j < i) ? boot->node_of[j] : boot->nnodes++;
    }
    for (i = 0; i < boot->size; i++) {
        if (boot->node_of[i] != boot->node_of[boot->rank])
            continue;
        if (i < boot->rank)
            boot->local_rank++;
        boot->local_size++;
    }
    gv_free(all);
    return GV_OK;
}

int gv__plugins_used(void)
{
    return GV_PLUGINS;
}

#if GV_PLUGINS && (GV_HAVE_MPI || GV_HAVE_PMIX)
/* The MPI and PMIx bootstraps live in plug-ins of the shared library. */
static gv_status_t plugin_init(const char *file, const char *sym,
                               gv_boot_t *boot)
{
    gv_status_t (*init)(gv_boot_t *);
    void       *addr;
    char        why[PATH_MAX + 256];

    if (gv__plugin_sym(file, sym, &addr, why, sizeof(why)) != GV_OK) {
        gv_error("bootstrap: %s (GV_PLUGIN_DIR names the plug-in folder)",
                 why);
        return GV_ERR_UNSUPPORTED;
    }
    init = (gv_status_t (*)(gv_boot_t *))addr;
    return init(boot);
}
#endif

gv_status_t gv__boot_init(const char *transport, gv_boot_t **boot_p)
{
    gv_boot_t  *boot = gv_calloc(1, sizeof(*boot));
    gv_status_t status;

    if (gv__env.BOOT_FD_set) {
        status = gv__boot_gvrun_init(boot);
    } else if (strcmp(transport, "mpi") == 0) {
#if GV_HAVE_MPI && GV_PLUGINS
        status = plugin_init("gv_tl_mpi.so", "gv__boot_mpi_init", boot);
#elif GV_HAVE_MPI
        status = gv__boot_mpi_init(boot);
#else
        gv_error("transport 'mpi' (GV_TRANSPORT) was not built (rebuild "
                 "with MPI=1; needs libopenmpi-dev)");
        status = GV_ERR_UNSUPPORTED;
#endif
    } else if (under_pmix()) {
#if GV_HAVE_PMIX && GV_PLUGINS
        status = plugin_init("gv_boot_pmix.so", "gv__boot_pmix_init", boot);
#elif GV_HAVE_PMIX
        status = gv__boot_pmix_init(boot);
#else
        gv_error("started by a PMIx launcher, but Grapevine was built "
                 "without PMIx (rebuild with PMIX=1; needs libpmix-dev)");
        status = GV_ERR_UNSUPPORTED;
#endif
    } else {
        status = gv__boot_single_init(boot);
    }
    if (status != GV_OK)
        goto err_free;
    gv__log_rank = boot->rank;
    status       = map_nodes(boot);
    if (status != GV_OK)
        goto err_fini;
    *boot_p = boot;
    return GV_OK;

err_fini:
    boot->ops->fini(boot);
err_free:
    gv_free(boot);
    return status;
}

void gv__boot_fini(gv_boot_t *boot)
{
    if (boot == NULL)
        return;
    boot->ops->fini(boot);
    gv_free(boot->node_of);
    gv_free(boot);
}
