/* Bootstrap for a program started without a launcher: one rank.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/boot.h"
#include "core/core.h"

#include <string.h>

static gv_status_t single_allgather(gv_boot_t *boot, const void *mine,
                                    size_t len, void *all)
{
    memcpy(all, mine, len);
    return GV_OK;
}

static gv_status_t single_barrier(gv_boot_t *boot)
{
    return GV_OK;
}

static void single_abort(gv_boot_t *boot, int code, const char *msg)
{
}

static void single_fini(gv_boot_t *boot)
{
}

static const gv_boot_ops_t single_ops = {
    .name      = "single",
    .allgather = single_allgather,
    .barrier   = single_barrier,
    .abort     = single_abort,
    .fini      = single_fini,
};

gv_status_t gv__boot_single_init(gv_boot_t *boot)
{
    boot->ops  = &single_ops;
    boot->rank = 0;
    boot->size = 1;
    if (gv__random_bytes(boot->key, sizeof(boot->key)) != GV_OK)
        return GV_ERR_IO;
    return gv__random_bytes(&boot->job_id, sizeof(boot->job_id));
}
