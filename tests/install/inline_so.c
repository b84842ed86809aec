/* Built by `make install-check` against the installed libgrapevine.so:
 * the inline gv_am_send_u64() must see the library's own state (a copy
 * relocation gives this program its own gv__am_hot, which the library must
 * use too), and words sent through it must arrive. Run: gvrun -n 2.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>

#include <stdio.h>
#include <string.h>

#define N 100000

static uint64_t sum, got;

static void on_word(int src, const void *payload, size_t len, void *arg)
{
    uint64_t w;

    (void)src;
    (void)arg;
    if (len == sizeof(w)) {
        memcpy(&w, payload, sizeof(w));
        sum += w;
    }
    got++;
}

int main(int argc, char **argv)
{
    gv_am_stats_t s;
    gv_am_id_t    id;
    uint64_t      i;
    int           P, dst;

    gv_am_register(on_word, NULL, &id);
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    P = gv_nranks();
    if (gv__am_hot.size != (unsigned)P)
        gv_abort(1, "inline_so: the inline send path sees %u ranks, the "
                 "library %d: it reads another copy of gv__am_hot",
                 gv__am_hot.size, P);
    dst = (gv_rank() + 1) % P;
    for (i = 1; i <= N; i++)
        if (gv_am_send_u64(dst, id, i) != GV_OK)
            gv_abort(1, "inline_so: gv_am_send_u64 failed");
    gv_barrier();
    gv_am_stats(&s);
    if ((got != N) || (sum != (uint64_t)N * (N + 1) / 2) ||
        (s.msgs_sent < N))
        gv_abort(1, "inline_so: %llu words summing to %llu arrived, %llu "
                 "counted sent; expected %d summing to %llu",
                 (unsigned long long)got, (unsigned long long)sum,
                 (unsigned long long)s.msgs_sent, N,
                 (unsigned long long)N * (N + 1) / 2);
    if (gv_rank() == 0)
        printf("inline_so: %d words per rank through the inline path of "
               "the shared library: ok\n", N);
    gv_finalize();
    return 0;
}
