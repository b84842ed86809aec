/* Liveness of the peers on this node, whatever the transport: a pidfd per
 * local peer (pids exchanged through the bootstrap at init) becomes
 * readable when that process exits, however it died (kill -9 included).
 * The progress engine looks at them when the host handles peer failures
 * (gv_on_peer_failure), and gv_wait_fd's descriptor holds them, so that a
 * host asleep in its loop wakes for a death too. Peers on other nodes
 * are left to the transports (a closed connection, a failed send) and to
 * the AM layer's watchdog. SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"
#include "core/boot.h"

#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

static int  live_ep = -1; /* epoll over the pidfds, or -1 */
static int *pidfd;        /* per rank, -1 where none */
static int *pid;

void gv__live_init(gv_boot_t *boot)
{
    int32_t            mine = (int32_t)getpid(), *all;
    struct epoll_event e;
    int                r, n = 0;

    gv__live_fini();
    all = gv_calloc((size_t)boot->size, sizeof(*all));
    if (gv__boot_allgather(boot, &mine, sizeof(mine), all) != GV_OK) {
        gv_info("liveness: the pid exchange failed: dead local peers are "
                "noticed by the transport and the watchdog only");
        gv_free(all);
        return;
    }
    pidfd   = gv_malloc(sizeof(int) * (size_t)boot->size);
    pid     = gv_malloc(sizeof(int) * (size_t)boot->size);
    live_ep = epoll_create1(EPOLL_CLOEXEC);
    for (r = 0; r < boot->size; r++) {
        pidfd[r] = -1;
        pid[r]   = all[r];
        if ((r == boot->rank) || (boot->node_of == NULL) ||
            (boot->node_of[r] != boot->node_of[boot->rank]) ||
            (live_ep < 0))
            continue;
        pidfd[r] = (int)syscall(SYS_pidfd_open, all[r], 0);
        if (pidfd[r] < 0) {
            gv_info("liveness: pidfd_open(%d) for rank %d: %m", all[r], r);
            continue;
        }
        memset(&e, 0, sizeof(e));
        e.events   = EPOLLIN;
        e.data.u32 = (uint32_t)r;
        if (epoll_ctl(live_ep, EPOLL_CTL_ADD, pidfd[r], &e) != 0) {
            close(pidfd[r]);
            pidfd[r] = -1;
            continue;
        }
        n++;
    }
    gv_free(all);
    if (n == 0) {
        if (live_ep >= 0)
            close(live_ep);
        live_ep = -1;
    }
}

void gv__live_fini(void)
{
    int r;

    if (pidfd != NULL)
        for (r = 0; r < gv__ctx.size; r++)
            if (pidfd[r] >= 0)
                close(pidfd[r]);
    if (live_ep >= 0)
        close(live_ep);
    gv_free(pidfd);
    gv_free(pid);
    pidfd   = NULL;
    pid     = NULL;
    live_ep = -1;
}

int gv__live_fd(void)
{
    return live_ep;
}

void gv__live_check(void)
{
    struct epoll_event ev[8];
    int                n, i;

    if (live_ep < 0)
        return;
    n = epoll_wait(live_ep, ev, 8, 0);
    for (i = 0; i < n; i++) {
        int r = (int)ev[i].data.u32;

        if ((r < 0) || (r >= gv__ctx.size) || (pidfd[r] < 0))
            continue;
        epoll_ctl(live_ep, EPOLL_CTL_DEL, pidfd[r], NULL);
        close(pidfd[r]);
        pidfd[r] = -1;
        gv__peer_failed(r, "its process (pid %d) exited", pid[r]);
    }
}
