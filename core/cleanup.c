/* The rank's handlers of the signals that stop a job (SIGTERM, SIGINT,
 * SIGHUP), and the files in /dev/shm they must not leave behind.
 *
 * gvrun (and mpirun) stop the other ranks of a failed job with SIGTERM.
 * The handler removes the armed names (every rank that still runs removes
 * the names of all of them: a rank that was SIGKILLed cannot remove its
 * own), then puts the default action back and raises the signal again:
 * the process ends by that signal. It never calls exit() and never chains
 * to a handler installed before it: a library's (PSM's libinfinipath,
 * which libfabric loads, installs one in its constructor that calls
 * exit()) would run the libraries' destructors inside a signal handler,
 * and a rank stopped inside malloc then deadlocks on the allocator's lock.
 * A signal ignored when the handlers are installed stays ignored. One list
 * of names at a time: a process has one transport.
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

/* Async-signal-safe: unlink, sigaction, raise. */
static void handler(int sig)
{
    struct sigaction dfl;
    int              saved = errno;

    if (cl.armed) {
        cl.armed = 0;
        unlink_all();
    }
    /* The signal is blocked while we run: raised again with the default
     * action, it ends the process as soon as we return. */
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    errno = saved;
}

void gv__signals_install(void)
{
    struct sigaction sa, cur;
    size_t           i;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags   = SA_RESTART; /* do not turn the boot's reads into EINTR */
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < NSIGS; i++) {
        if (sigaction(cleanup_sigs[i], NULL, &cur) != 0)
            continue;
        /* Already ours, or ignored by the program (nohup): leave it. */
        if ((cur.sa_handler == handler) ||
            (!cl.installed[i] && (cur.sa_handler == SIG_IGN)))
            continue;
        /* A library that replaced ours since is replaced in turn; what
         * was there before the first install is what goes back. */
        if (sigaction(cleanup_sigs[i], &sa, cl.installed[i] ? NULL
                                                           : &cl.old[i]) == 0)
            cl.installed[i] = 1;
    }
}

void gv__signals_restore(void)
{
    size_t i;

    for (i = 0; i < NSIGS; i++) {
        if (cl.installed[i]) {
            sigaction(cleanup_sigs[i], &cl.old[i], NULL);
            cl.installed[i] = 0;
        }
    }
}

void gv__cleanup_arm(char **paths, int npaths)
{
    gv__cleanup_disarm();
    cl.paths  = paths;
    cl.npaths = npaths;
    gv__signals_install();
    cl.armed = 1;
}

void gv__cleanup_now(void)
{
    if (cl.armed)
        unlink_all();
}

void gv__cleanup_disarm(void)
{
    int i;

    cl.armed = 0;
    /* The handler runs on the thread that armed (the others block these
     * signals) or removes nothing once disarmed: the list may go. */
    for (i = 0; (cl.paths != NULL) && (i < cl.npaths); i++)
        gv_free(cl.paths[i]);
    gv_free(cl.paths);
    cl.paths  = NULL;
    cl.npaths = 0;
}
