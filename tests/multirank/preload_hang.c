/* Fault injection for the monitor thread's test (ucx/driver_ucx,
 * fault/stuck_in_library_named): loaded with LD_PRELOAD in front of real
 * UCX, it passes ucp_worker_progress() through until the process has made
 * GV_TEST_HANG_AFTER calls; then the one process that creates the
 * directory GV_TEST_HANG_FLAG first never returns from the call (it
 * sleeps there), as a network library stuck in its progress would.
 * Nothing else is replaced. SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

unsigned ucp_worker_progress(ucp_worker_h worker)
{
    static unsigned (*real)(ucp_worker_h);
    static unsigned long calls, after;
    static int           armed = -1;
    const char          *flag;

    if (real == NULL) {
        real = (unsigned (*)(ucp_worker_h))dlsym(RTLD_NEXT,
                                                 "ucp_worker_progress");
        if (real == NULL) {
            fprintf(stderr, "preload_hang: no ucp_worker_progress to "
                            "call: %s\n", dlerror());
            abort();
        }
    }
    if (armed < 0) {
        const char *a = getenv("GV_TEST_HANG_AFTER");
        after = (a != NULL) ? strtoul(a, NULL, 0) : 0;
        armed = (after > 0) && (getenv("GV_TEST_HANG_FLAG") != NULL);
    }
    if (armed && (++calls == after)) {
        flag = getenv("GV_TEST_HANG_FLAG");
        if (mkdir(flag, 0700) == 0) {
            fprintf(stderr, "preload_hang: pid %d now stays inside "
                            "ucp_worker_progress\n", (int)getpid());
            for (;;)
                sleep(1);
        }
    }
    return real(worker);
}
