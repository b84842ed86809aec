/* A job that keeps exchanging messages until it is killed or 30 s pass;
 * each rank writes its pid to DIR/rank.<r> so that a fault test can kill
 * one. With --hang-in-exit, exit() never returns (an atexit handler
 * waits for ever), as when a library's signal handler calls exit() while
 * the rank is inside malloc and a destructor waits for the allocator's
 * lock: a rank stopped by a signal must end by that signal, never through
 * exit(). Usage: mr_longrun DIR [--hang-in-exit].
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#include <stdlib.h>

static gv_am_id_t id;
static void on_msg(int src, const void *p, size_t len, void *arg) {}

static void hang_in_exit(void)
{
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    char   path[512];
    FILE  *f;
    double t0;
    int    i;

    if (argc < 2)
        return 2;
    if ((argc > 2) && (strcmp(argv[2], "--hang-in-exit") == 0))
        atexit(hang_in_exit);
    mr_init(&argc, &argv);
    MR_OK(gv_am_register(on_msg, NULL, &id));
    gv_barrier(); /* every rank has the handler before anyone sends */
    snprintf(path, sizeof(path), "%s/rank.%d", argv[1], gv_rank());
    f = fopen(path, "w");
    MR_CHECK(f != NULL, "cannot write %s", path);
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    t0 = gv_wtime();
    while (gv_wtime() - t0 < 30) {
        for (i = 0; i < gv_nranks(); i++)
            gv_am_send(i, id, path, 16);
        gv_barrier();
    }
    gv_finalize();
    if (argc > 2)
        _exit(0); /* past the atexit handler that hangs */
    return 0;
}
