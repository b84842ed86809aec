/* The registry of progress callbacks: layers register the work they owe
 * every poll (the DSM's batched delegate adds), users theirs through
 * gv_progress_hook_add(), and the progress engine (aggregator/progress.c)
 * runs them with gv__progress_hooks_run(). The core names no layer above
 * it. SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"

gv__progress_hooks_t gv__progress_hooks;

static int find(gv_progress_hook_fn_t fn, void *arg)
{
    int i;

    for (i = 0; i < gv__progress_hooks.n; i++)
        if ((gv__progress_hooks.fn[i] == fn) &&
            (gv__progress_hooks.arg[i] == arg))
            return i;
    return -1;
}

gv_status_t gv_progress_hook_add(gv_progress_hook_fn_t fn, void *arg)
{
    int n = gv__progress_hooks.n;

    if (fn == NULL) {
        gv_error("NULL function");
        return GV_ERR_INVALID;
    }
    if (find(fn, arg) >= 0)
        return GV_OK;
    if (n == GV_PROGRESS_HOOKS_MAX) {
        gv_error("%d hooks already (the most)",
                 GV_PROGRESS_HOOKS_MAX);
        return GV_ERR_NO_RESOURCE;
    }
    gv__progress_hooks.fn[n]  = fn;
    gv__progress_hooks.arg[n] = arg;
    gv__progress_hooks.n      = n + 1;
    return GV_OK;
}

gv_status_t gv_progress_hook_remove(gv_progress_hook_fn_t fn, void *arg)
{
    int i = find(fn, arg);

    if (i < 0)
        return GV_ERR_NOT_FOUND;
    for (; i + 1 < gv__progress_hooks.n; i++) {
        gv__progress_hooks.fn[i]  = gv__progress_hooks.fn[i + 1];
        gv__progress_hooks.arg[i] = gv__progress_hooks.arg[i + 1];
    }
    gv__progress_hooks.n--;
    return GV_OK;
}

void gv__progress_hook_add(gv_progress_hook_fn_t fn)
{
    if (gv_progress_hook_add(fn, NULL) != GV_OK)
        gv_fatal("cannot add the runtime's progress hook");
}

void gv__progress_hooks_clear(void)
{
    gv__progress_hooks.n = 0;
}
