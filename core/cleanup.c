/* Files in /dev/shm that a job stopped by a signal must not leave behind.
 * gvrun (and mpirun) stop the other ranks of a failed job with SIGTERM; a
 * rank that was SIGKILLed cannot remove its own names, so every rank that
 * still runs removes the names of all of them, then lets the signal take
 * its previous course. One list at a time: a process has one transport.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static const int cleanup_sigs[] = {SIGTERM, SIGINT, SIGHUP};
#define NSIGS (sizeof(cleanup_sigs) / sizeof(cleanup_sigs[0]))

static struct {
    volatile sig_atomic_t armed;
    char                **paths;  /* ours: freed by gv__cleanup_disarm() */
    int                   npaths;
    int                   installed[NSIGS];
    struct sigaction      old[NSIGS];
} cl;

/* Async-signal-safe: unlink only. */
static void unlink_all(void)
{
    int i;

    for (i = 0; i < cl.npaths; i++)
        if (cl.paths[i] != NULL)
            unlink(cl.paths[i]);
}

static void handler(int sig)
{
    int    saved = errno;
    size_t i;

    if (cl.armed) {
        cl.armed = 0;
        unlink_all();
    }
    /* Put the previous disposition back and raise again: the signal is
     * blocked while we run, so it goes to that disposition as soon as we
     * return. */
    for (i = 0; i < NSIGS; i++) {
        if ((cleanup_sigs[i] == sig) && cl.installed[i]) {
            sigaction(sig, &cl.old[i], NULL);
            cl.installed[i] = 0;
        }
    }
    raise(sig);
    errno = saved;
}

void gv__cleanup_arm(char **paths, int npaths)
{
    struct sigaction sa;
    size_t           i;

    gv__cleanup_disarm();
    cl.paths  = paths;
    cl.npaths = npaths;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags   = SA_RESTART; /* do not turn the boot's reads into EINTR */
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < NSIGS; i++) {
        struct sigaction old;

        /* Leave ignored signals ignored: removing the names on a signal
         * that does not stop the process would break a job that goes on. */
        if ((sigaction(cleanup_sigs[i], NULL, &old) != 0) ||
            (old.sa_handler == SIG_IGN))
            continue;
        if (sigaction(cleanup_sigs[i], &sa, &cl.old[i]) == 0)
            cl.installed[i] = 1;
    }
    cl.armed = 1;
}

void gv__cleanup_now(void)
{
    if (cl.armed)
        unlink_all();
}

void gv__cleanup_disarm(void)
{
    size_t i;

    cl.armed = 0;
    for (i = 0; i < NSIGS; i++) {
        if (cl.installed[i]) {
            sigaction(cleanup_sigs[i], &cl.old[i], NULL);
            cl.installed[i] = 0;
        }
    }
    /* The handler can no longer run: the list may go. */
    for (i = 0; (cl.paths != NULL) && (i < (size_t)cl.npaths); i++)
        gv_free(cl.paths[i]);
    gv_free(cl.paths);
    cl.paths  = NULL;
    cl.npaths = 0;
}
