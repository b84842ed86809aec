/* Character count into a distributed hash table (Grappa ATC'15, Figure 1).
 * Run: gvrun -n 4 build/examples/charcount   SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>
#include <stdio.h>
#define N      1000000 /* characters of input */
#define NCELLS 64      /* hash cells, one 64-byte block each */

typedef struct { uint32_t n; char key[12]; uint32_t count[12]; } cell_t;
static const char text[] = "the quick brown fox jumps over the lazy dog";

static void make_input(int64_t i, void *c, void *arg) /* a distributed "file" */
{ *(char *)c = text[(uint64_t)i * 2654435761u % (sizeof(text) - 1)]; }
static void zero(int64_t i, void *w, void *arg) { *(uint64_t *)w = 0; }

static size_t bump(void *local, const void *args, size_t len, void *result)
{   /* runs at the cell's home, atomically */
    cell_t  *cell = local;
    char     c    = *(const char *)args;
    uint32_t k    = 0;
    while (k < cell->n && cell->key[k] != c)
        k++;
    if (k == cell->n) { cell->key[k] = c; cell->count[k] = 0; cell->n++; }
    cell->count[k]++;
    return 0;
}

static int failed; /* a call returned an error (it logged why): exit 1 */
#define OK(call) do { if ((call) != GV_OK) { failed = 1; return; } } while (0)

static void count(int64_t i, void *c, void *cells) /* hash, then delegate */
{
    size_t idx = (size_t)(*(unsigned char *)c) % NCELLS;
    gv_delegate_call_async(gv_gaddr_add(*(gv_gaddr_t *)cells, 64 * (int64_t)idx), bump, c, 1, NULL);
}

static void run(void *unused) /* rank 0 runs this; every rank serves tasks */
{
    gv_gaddr_t chars, cells;
    cell_t     cell;
    uint64_t   total = 0, k, i;
    OK(gv_global_alloc(N, &chars));
    OK(gv_global_alloc(NCELLS * sizeof(cell_t), &cells));
    OK(gv_forall(cells, NCELLS * 8, 8, 0, zero, NULL, 0, NULL));
    OK(gv_forall(chars, N, 1, 0, make_input, NULL, 0, NULL));
    OK(gv_forall(chars, N, 1, 0, count, &cells, sizeof(cells), NULL));
    for (i = 0; i < NCELLS; i++) {
        OK(gv_delegate_read(gv_gaddr_add(cells, 64 * (int64_t)i), &cell, sizeof(cell)));
        for (k = 0; k < cell.n; total += cell.count[k], k++)
            printf("'%c' %u\n", cell.key[k], cell.count[k]);
    }
    printf("%llu of %d characters counted on %d ranks\n", (unsigned long long)total, N, gv_nranks());
}

int main(int argc, char **argv)
{
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    if (gv_run_main(run, NULL, 0) != GV_OK)
        failed = 1;
    gv_finalize();
    return failed;
}
