/* The registry of progress callbacks: layers register the work they owe
 * every poll (the DSM's batched delegate adds), and the progress engine
 * (aggregator/progress.c) runs them with gv__progress_hooks_run(). The
 * core names no layer above it. SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"

gv__progress_hooks_t gv__progress_hooks;

void gv__progress_hook_add(gv_progress_hook_fn_t fn)
{
    if (gv__progress_hooks.n == GV__MAX_PROGRESS_HOOKS)
        gv_fatal("more than %d progress hooks", GV__MAX_PROGRESS_HOOKS);
    gv__progress_hooks.fn[gv__progress_hooks.n++] = fn;
}

void gv__progress_hooks_clear(void)
{
    gv__progress_hooks.n = 0;
}
