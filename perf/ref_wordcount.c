/* The single-process reference of perf/mapreduce.sh: a plain C word count
 * (one thread, one open-addressing hash table, files read in 1 MiB
 * chunks), the one-core bound gvmr wordcount is compared with.
 * Run: build/perf/ref_wordcount FILE...
 * Last line: words=T distinct=D seconds=S (reading and counting).
 * SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

typedef struct {
    uint64_t hash;   /* 0: empty */
    int64_t  count;
    uint32_t len;
    char     key[20]; /* in place up to 20 bytes, else an arena offset */
} ent_t;

static ent_t  *tab;
static uint64_t cap = 1 << 16, used;
static char   *arena;
static size_t  arena_used, arena_room;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t hash(const char *p, size_t len)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;

    while (len >= 8) {
        memcpy(&w, p, 8);
        h = mix(h ^ w) + 0x632be59bd9b4e019ull;
        p += 8;
        len -= 8;
    }
    if (len > 0) {
        w = 0;
        memcpy(&w, p, len);
        h = mix(h ^ w ^ ((uint64_t)len << 56));
    }
    return mix(h) | 1;
}

static const char *key_of(const ent_t *e)
{
    uint64_t off;

    if (e->len <= sizeof(e->key))
        return e->key;
    memcpy(&off, e->key, 8);
    return arena + off;
}

static void grow(void)
{
    ent_t   *old = tab;
    uint64_t i, j, ocap = cap;

    cap *= 2;
    tab = calloc(cap, sizeof(ent_t));
    if (tab == NULL) {
        fprintf(stderr, "ref_wordcount: out of memory\n");
        exit(1);
    }
    for (i = 0; i < ocap; i++) {
        if (old[i].hash == 0)
            continue;
        for (j = (old[i].hash >> 1) & (cap - 1); tab[j].hash != 0; j = (j + 1) & (cap - 1))
            ;
        tab[j] = old[i];
    }
    free(old);
}

static void add(const char *w, size_t len)
{
    uint64_t h = hash(w, len), i;
    ent_t   *e;

    for (i = (h >> 1) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        e = &tab[i];
        if (e->hash == 0)
            break;
        if ((e->hash == h) && (e->len == len) && !memcmp(key_of(e), w, len)) {
            e->count++;
            return;
        }
    }
    e->hash  = h;
    e->count = 1;
    e->len   = (uint32_t)len;
    if (len <= sizeof(e->key)) {
        memcpy(e->key, w, len);
    } else {
        uint64_t off = arena_used;
        if (arena_used + len > arena_room) {
            arena_room = (arena_room + len) * 2;
            arena      = realloc(arena, arena_room);
            if (arena == NULL) {
                fprintf(stderr, "ref_wordcount: out of memory\n");
                exit(1);
            }
        }
        memcpy(arena + off, w, len);
        arena_used += len;
        memcpy(e->key, &off, 8);
    }
    if (++used * 10 > cap * 7)
        grow();
}

static int sp(int c)
{
    return (c == ' ') || ((c >= '\t') && (c <= '\r'));
}

int main(int argc, char **argv)
{
    char           *buf = malloc(CHUNK);
    struct timespec t0, t1;
    int64_t         total = 0;
    uint64_t        i;
    int             f;

    if (argc < 2) {
        fprintf(stderr, "usage: ref_wordcount FILE...\n");
        return 2;
    }
    tab = calloc(cap, sizeof(ent_t));
    if ((buf == NULL) || (tab == NULL))
        return 1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (f = 1; f < argc; f++) {
        int    fd = open(argv[f], O_RDONLY);
        size_t carry = 0;
        if (fd < 0) {
            fprintf(stderr, "ref_wordcount: cannot open %s: %s\n", argv[f],
                    strerror(errno));
            return 1;
        }
        for (;;) {
            ssize_t got = read(fd, buf + carry, CHUNK - carry);
            size_t  n, p = 0, w, end;
            if (got < 0) {
                fprintf(stderr, "ref_wordcount: cannot read %s: %s\n",
                        argv[f], strerror(errno));
                return 1;
            }
            n   = carry + (size_t)got;
            end = n;
            if (got > 0)
                while ((end > 0) && !sp((unsigned char)buf[end - 1]))
                    end--;
            if ((got > 0) && (end == 0)) {
                fprintf(stderr, "ref_wordcount: a word over 1 MiB in %s\n",
                        argv[f]);
                return 1;
            }
            while (p < end) {
                while ((p < end) && sp((unsigned char)buf[p]))
                    p++;
                w = p;
                while ((p < end) && !sp((unsigned char)buf[p]))
                    p++;
                if (p > w)
                    add(buf + w, p - w);
            }
            carry = n - end;
            memmove(buf, buf + end, carry);
            if (got == 0)
                break;
        }
        close(fd);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    for (i = 0; i < cap; i++)
        total += tab[i].count;
    printf("words=%lld distinct=%llu seconds=%.6f\n", (long long)total,
           (unsigned long long)used,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    return 0;
}
