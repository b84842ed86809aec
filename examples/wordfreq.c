/* Distributed word frequencies with the hash map: each rank reads its byte
 * range of the file (a word belongs to the rank where it starts), combines
 * (word, 1) into the map, then the ranks' most frequent words are merged.
 * Words are runs of letters, lower-cased, cut to 31 bytes.
 * Run: gvrun -n 2 build/examples/wordfreq FILE   SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>
#include <grapevine/fw/hashmap.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
enum { KEY = 32, TOP = 10 };
typedef struct { int64_t n; char w[KEY]; } top_t;
static const char *path;
static top_t top[TOP]; /* this rank's most frequent, count descending */
static void keep(gv_hashmap_t *m, const void *key, void *val, void *arg)
{   /* insert into this rank's top list */
    int64_t n = *(int64_t *)val; int i = TOP - 1;
    if (n <= top[i].n) return;
    for (; i > 0 && top[i - 1].n < n; i--) top[i] = top[i - 1];
    top[i].n = n; memcpy(top[i].w, key, KEY);
}
static void run(void *arg)
{
    gv_hashmap_opts_t o = {gv_hashmap_sum_i64, 1 << 16};
    gv_hashmap_t *map; gv_gce_t *gce = gv_gce_default();
    FILE *f = fopen(path, "rb"); int64_t size, lo, hi, one = 1, words = 0, i, n, distinct;
    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0)
        gv_abort(1, "wordfreq: cannot read %s", path);
    lo = size * gv_rank() / gv_nranks(); hi = size * (gv_rank() + 1) / gv_nranks();
    n = (hi + KEY < size ? hi + KEY : size) - (lo > 0 ? lo - 1 : 0); /* room for a word's first 31 bytes */
    char *buf = malloc((size_t)n + 1), w[KEY];
    if (buf == NULL || fseek(f, lo > 0 ? lo - 1 : 0, SEEK_SET) != 0 || fread(buf, 1, (size_t)n, f) != (size_t)n)
        gv_abort(1, "wordfreq: cannot read %s", path);
    fclose(f); gv_hashmap_create(KEY, 8, &o, &map);
    for (i = (lo > 0); i < n && lo - (lo > 0) + i < hi; i++) { /* words starting in [lo, hi) */
        int len = 0;
        if (!isalpha((unsigned char)buf[i]) || (i > 0 && isalpha((unsigned char)buf[i - 1]))) continue;
        memset(w, 0, KEY);
        for (; i < n && isalpha((unsigned char)buf[i]); i++) if (len < KEY - 1) w[len++] = (char)tolower((unsigned char)buf[i]);
        gv_hashmap_combine_async(map, w, &one, gce); words++;
    }
    gv_gce_wait(gce);
    gv_hashmap_forall(map, keep, NULL, NULL);
    gv_hashmap_size(map, &distinct); gv_allreduce(&words, 1, GV_INT64, GV_SUM);
    for (int r = 0; r < gv_nranks(); r++) { /* rank 0 merges every rank's top list */
        top_t t[TOP]; memcpy(t, top, sizeof(t)); gv_broadcast(r, t, sizeof(t));
        for (int k = 0; k < TOP && gv_rank() == 0 && r > 0; k++) if (t[k].n > 0) keep(map, t[k].w, &t[k].n, NULL);
    }
    if (gv_rank() == 0) printf("%lld words, %lld distinct\n", (long long)words, (long long)distinct);
    for (int k = 0; k < TOP && gv_rank() == 0 && top[k].n > 0; k++) printf("%8lld %s\n", (long long)top[k].n, top[k].w);
    gv_hashmap_destroy(map); free(buf);
}
int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: wordfreq FILE\n"); return 2; } path = argv[1];
    if (gv_init(&argc, &argv) != GV_OK) return 1;
    gv_run_all(run, NULL, 0); gv_finalize(); return 0;
}
