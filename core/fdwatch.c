/* Open file descriptors: the soft limit raised to the hard one at start-up,
 * and a watch (from the monitor thread, about once a second) that names
 * their growth. A rank's descriptors are its own files and the
 * connections its transport keeps; strangers that connect to a network
 * library's listening port can add to them where the library, not
 * Grapevine, owns the socket and cannot check the job key: libfabric's
 * tcp provider under ofi's tcp;ofi_rxm accepts every connection and keeps
 * it open (README, "Security"). At the limit a rank can no longer accept
 * its own peers or open a file, so growth is named before that.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"

#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>

#define FD_LOOK_NS 1000000000ull /* count at most once a second */
#define FD_GROWTH  64            /* more than this above the start ... */

static struct {
    unsigned long long limit;   /* the soft limit after raising it */
    int                base;    /* descriptors at the first look */
    int                warned;  /* 1: past half the limit; 2: near it */
    uint64_t           last_ns;
} fdw = {0, -1, 0, 0};

void gv__fd_start(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t was = rl.rlim_cur;

        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
            gv_debug("open file limit raised from %llu to the hard limit "
                     "%llu", (unsigned long long)was,
                     (unsigned long long)rl.rlim_max);
        else
            rl.rlim_cur = was;
    }
    fdw.limit   = (rl.rlim_cur == RLIM_INFINITY) ? 0 : rl.rlim_cur;
    fdw.base    = -1;
    fdw.warned  = 0;
    fdw.last_ns = 0;
}

/* Open descriptors of this process, or -1 when none is left to look. */
static int fd_count(void)
{
    DIR           *d = opendir("/proc/self/fd");
    struct dirent *e;
    int            n = 0;

    if (d == NULL)
        return ((errno == EMFILE) || (errno == ENFILE)) ? -1 : 0;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory's own */
}

void gv__fd_watch(uint64_t now)
{
    int n;

    if ((fdw.limit == 0) || (fdw.warned >= 2) ||
        (now - fdw.last_ns < FD_LOOK_NS))
        return;
    fdw.last_ns = now;
    n           = fd_count();
    if (n == 0)
        return; /* no /proc here */
    if (fdw.base < 0) {
        fdw.base = (n < 0) ? 0 : n;
        return;
    }
    if ((n < 0) || ((unsigned long long)n >= fdw.limit - fdw.limit / 10)) {
        fdw.warned = 2;
        gv_error("open file descriptors: %s the limit of %llu (%d at "
                 "start-up). This rank cannot accept more connections, "
                 "not even from its own peers, nor open files. Something "
                 "keeps connecting to it: over ofi with tcp;ofi_rxm, "
                 "libfabric accepts every connection to the rank's port "
                 "and keeps it open, and Grapevine cannot check the job "
                 "key there (README, \"Security\"): keep such ports behind "
                 "a firewall, or raise the hard limit (ulimit -Hn)",
                 (n < 0) ? "at" : "near", fdw.limit, fdw.base);
    } else if ((fdw.warned == 0) && (n > fdw.base + FD_GROWTH) &&
               ((unsigned long long)n > fdw.limit / 2)) {
        fdw.warned = 1;
        gv_warn("open file descriptors grew from %d at start-up to %d, "
                "past half the limit of %llu: something keeps connecting "
                "to this rank (over ofi with tcp;ofi_rxm, libfabric keeps "
                "every connection to the rank's port open; README, "
                "\"Security\")", fdw.base, n, fdw.limit);
    }
}
