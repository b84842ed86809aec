/* A first Grapevine program: every rank greets the next one with an active
 * message, and a barrier makes sure every greeting has been handled.
 *   cc hello.c $(pkg-config --cflags --libs grapevine) -o hello
 *   gvrun -n 4 ./hello */
#include <grapevine.h>
#include <stdio.h>
#include <string.h>

static int greeted;

static void on_hello(int src, const void *payload, size_t len, void *arg)
{
    printf("rank %d got \"%.*s\" from rank %d\n", gv_rank(), (int)len,
           (const char *)payload, src);
    greeted = 1;
}

int main(int argc, char **argv)
{
    gv_am_id_t hello;
    char       msg[64];

    gv_am_register(on_hello, NULL, &hello); /* before gv_init: no race */
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    snprintf(msg, sizeof(msg), "hello from %d over %s", gv_rank(),
             gv_transport_name());
    gv_am_send((gv_rank() + 1) % gv_nranks(), hello, msg, strlen(msg));
    gv_barrier(); /* returns once every greeting was handled */
    if (!greeted)
        gv_abort(1, "rank %d was not greeted", gv_rank());
    gv_finalize();
    return 0;
}
