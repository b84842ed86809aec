/* Topology and binding through hwloc; the node map the layers and the
 * composite transports share. SPDX-License-Identifier: BSD-3-Clause */
#include "core/boot.h"
#include "core/core.h"

#include <stdio.h>

void gv__nodes_map(const gv_boot_t *boot, int *node_of, int *nnodes_p)
{
    static int warned;
    int        i, n = boot->size;
    int        k = (int)gv__env.TEST_NODES;

    if (k > 0) {
        if (k > n) {
            if ((boot->rank == 0) && !warned)
                gv_warn("GV_TEST_NODES=%d is more than the %d ranks: %d "
                        "pretend nodes of one rank each", k, n, n);
            warned = 1;
            k      = n;
        }
        for (i = 0; i < n; i++)
            node_of[i] = (int)((int64_t)i * k / n);
        *nnodes_p = k;
    } else if (boot->node_of != NULL) {
        for (i = 0; i < n; i++)
            node_of[i] = boot->node_of[i];
        *nnodes_p = boot->nnodes;
    } else {
        for (i = 0; i < n; i++)
            node_of[i] = 0;
        *nnodes_p = 1;
    }
}

#if GV_HAVE_HWLOC
#include <hwloc.h>

void gv__topo_bind(int local_rank, int local_size)
{
    hwloc_topology_t topo;
    hwloc_obj_t      core;
    int              ncores;

    if (hwloc_topology_init(&topo) != 0)
        return;
    if (hwloc_topology_load(topo) != 0) {
        gv_warn("hwloc could not load the topology; not binding");
        goto out;
    }
    ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    if (ncores <= 0)
        ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    if (local_size > ncores) {
        /* Binding several spinning ranks to one core hurts more than the
         * scheduler moving them. */
        gv_info("%d ranks on %d cores: oversubscribed, not binding",
                local_size, ncores);
        goto out;
    }
    core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)local_rank);
    if (core == NULL)
        core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)local_rank);
    if ((core == NULL) ||
        (hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_PROCESS) != 0)) {
        gv_warn("could not bind local rank %d to a core: %m", local_rank);
        goto out;
    }
    gv_debug("bound local rank %d to core %u", local_rank, core->logical_index);
out:
    hwloc_topology_destroy(topo);
}

void gv__topo_print(FILE *f)
{
    hwloc_topology_t topo;
    int              depth, d;

    if ((hwloc_topology_init(&topo) != 0) ||
        (hwloc_topology_load(topo) != 0)) {
        fprintf(f, "topology: hwloc could not load it\n");
        return;
    }
    depth = hwloc_topology_get_depth(topo);
    fprintf(f, "topology (hwloc %s):\n", HWLOC_VERSION);
    for (d = 0; d < depth; d++) {
        hwloc_obj_t obj = hwloc_get_obj_by_depth(topo, d, 0);
        char        type[64];
        hwloc_obj_type_snprintf(type, sizeof(type), obj, 1);
        fprintf(f, "  %-12s x %u\n", type, hwloc_get_nbobjs_by_depth(topo, d));
    }
    hwloc_topology_destroy(topo);
}
#else
#include <sched.h>

void gv__topo_bind(int local_rank, int local_size)
{
    gv_info("built without hwloc: not binding (rebuild with HWLOC=1)");
}

void gv__topo_print(FILE *f)
{
    fprintf(f, "topology: built without hwloc (rebuild with HWLOC=1)\n");
}
#endif
