/* The distributed bag against a sequential reference: thousands of workers
 * append random elements, locally and to chosen ranks (aggregated); every
 * element must be at the rank it was sent to, each exactly as many times
 * as the reference counts; then a traversal step (a loop over one bag that
 * appends to another at the elements' next owners) and a cleared bag's
 * reuse. Run: gvrun -n 3 build/tests/frameworks/fw_containers_bag
 * [-w workers] [-n appends per worker] [-e element bytes >= 16]
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/mr.h"
#include <grapevine/fw/bag.h>

#include <getopt.h>

#define VALUES 1024 /* element values 0..VALUES-1, counted per rank */

static struct {
    int64_t workers, ops;
    size_t  es;
} o = {2000, 50, 24};

static gv_bag_t *bag, *next;
static gv_gce_t  gce;
static int64_t  *want;   /* [rank][value] appearances */
static int64_t  *have;

/* An element: {value, target rank, filler derived from both}. */
static void elem_make(uint8_t *e, int64_t v, int64_t r)
{
    size_t i;

    memcpy(e, &v, 8);
    memcpy(e + 8, &r, 8);
    for (i = 16; i < o.es; i++)
        e[i] = (uint8_t)(v * 13 + r + (int64_t)i);
}

static void elem_check(const uint8_t *e, int64_t *v_p, int64_t *r_p)
{
    uint8_t good[1024];

    memcpy(v_p, e, 8);
    memcpy(r_p, e + 8, 8);
    MR_CHECK((*v_p >= 0) && (*v_p < VALUES) && (*r_p >= 0) &&
             (*r_p < gv_nranks()), "garbled element (%lld, %lld)",
             (long long)*v_p, (long long)*r_p);
    elem_make(good, *v_p, *r_p);
    MR_CHECK(memcmp(good, e, o.es) == 0, "element (%lld, %lld) corrupted",
             (long long)*v_p, (long long)*r_p);
}

static uint64_t seed_of(int64_t w)
{
    return 0xba9ull + (uint64_t)w * 104729u;
}

/* Append k of worker w: value, target rank (-1: the worker's own rank,
 * with gv_bag_append). */
static void draw(uint64_t *s, int64_t w, int64_t *v_p, int64_t *r_p)
{
    int64_t wrank = w / (o.workers / gv_nranks());

    *v_p = (int64_t)(mr_rand(s) % VALUES);
    *r_p = (int64_t)(mr_rand(s) % (uint64_t)(gv_nranks() + 1)) - 1;
    if (*r_p < 0)
        *r_p = wrank;
    else
        *r_p = -1 - *r_p; /* to rank -1 - r, through a message */
}

static void replay(void)
{
    int64_t w, k, v, r;

    for (w = 0; w < o.workers; w++) {
        uint64_t s = seed_of(w);
        for (k = 0; k < o.ops; k++) {
            draw(&s, w, &v, &r);
            if (r < 0)
                r = -1 - r;
            want[r * VALUES + v]++;
        }
    }
}

static void worker(int64_t i, void *arg)
{
    int64_t  w = gv_rank() * (o.workers / gv_nranks()) + i, k, v, r;
    uint64_t s = seed_of(w);
    uint8_t  e[1024];

    for (k = 0; k < o.ops; k++) {
        draw(&s, w, &v, &r);
        if (r >= 0) {
            elem_make(e, v, r);
            MR_OK(gv_bag_append(bag, e));
        } else {
            elem_make(e, v, -1 - r);
            MR_OK(gv_bag_append_on(bag, (int)(-1 - r), e, &gce));
        }
    }
}

static void count(gv_bag_t *b, void *elem, void *arg)
{
    int64_t v, r;

    elem_check(elem, &v, &r);
    MR_CHECK(r == gv_rank(), "element for rank %lld found on rank %d",
             (long long)r, gv_rank());
    have[r * VALUES + v]++;
}

/* A traversal step: each element (v, r) moves to (v, (v + r) mod P). */
static void step(gv_bag_t *b, void *elem, void *arg)
{
    int64_t v, r, to;
    uint8_t e[1024];

    elem_check(elem, &v, &r);
    to = (v + r) % gv_nranks();
    elem_make(e, v, to);
    MR_OK(gv_bag_append_on(next, (int)to, e, &gce));
}

static void compare(const char *what)
{
    int64_t i;

    MR_OK(gv_allreduce(have, (size_t)gv_nranks() * VALUES, GV_INT64,
                       GV_SUM));
    for (i = 0; i < (int64_t)gv_nranks() * VALUES; i++)
        MR_CHECK(have[i] == want[i], "%s: value %lld on rank %lld seen %lld "
                 "times, expected %lld", what, (long long)(i % VALUES),
                 (long long)(i / VALUES), (long long)have[i],
                 (long long)want[i]);
}

static void run(void *arg)
{
    int64_t per = o.workers / gv_nranks(), n, total, i, r, v, *copy;
    size_t  cells = (size_t)gv_nranks() * VALUES;

    MR_OK(gv_bag_create(o.es, &bag));
    MR_OK(gv_bag_create(o.es, &next));
    /* One event for all ranks: rank 0 makes it, everyone learns it. */
    if (gv_rank() == 0)
        MR_OK(gv_gce_create(&gce));
    MR_OK(gv_broadcast(0, &gce, sizeof(gce)));
    for (int round = 0; round < 2; round++) {
        memset(want, 0, cells * 8);
        memset(have, 0, cells * 8);
        replay();
        MR_OK(gv_parallel_for(0, per, 1, worker, NULL));
        MR_OK(gv_gce_wait(&gce));
        MR_OK(gv_bag_size(bag, &total));
        MR_CHECK(total == o.workers * o.ops, "round %d: %lld elements, "
                 "expected %lld", round, (long long)total,
                 (long long)(o.workers * o.ops));
        MR_OK(gv_bag_forall(bag, 0, count, NULL, NULL));
        compare("appends");

        /* The local copy holds the same elements as the loop saw. */
        n    = gv_bag_local_size(bag);
        copy = malloc((size_t)(n + 1) * o.es);
        MR_CHECK(copy != NULL, "out of memory");
        gv_bag_local_copy(bag, copy);
        for (i = 0; i < n; i++)
            MR_CHECK(memcmp((uint8_t *)copy + (size_t)i * o.es,
                            gv_bag_local_at(bag, i), o.es) == 0,
                     "local copy differs at %lld", (long long)i);
        free(copy);

        /* One traversal step into next, at the new owners. */
        memset(have, 0, cells * 8);
        for (i = 0; i < (int64_t)cells; i++) {
            want[i] = 0;
        }
        {
            /* Rebuild the step's reference from the appends' reference. */
            int64_t *before = calloc(cells, 8);
            MR_CHECK(before != NULL, "out of memory");
            memset(want, 0, cells * 8);
            replay();
            memcpy(before, want, cells * 8);
            memset(want, 0, cells * 8);
            for (r = 0; r < gv_nranks(); r++)
                for (v = 0; v < VALUES; v++)
                    want[((v + r) % gv_nranks()) * VALUES + v] +=
                        before[r * VALUES + v];
            free(before);
        }
        MR_OK(gv_bag_forall(bag, 0, step, NULL, &gce));
        MR_OK(gv_bag_forall(next, 0, count, NULL, NULL));
        compare("step");
        MR_OK(gv_bag_clear(bag));
        MR_OK(gv_bag_clear(next));
        MR_OK(gv_bag_size(next, &total));
        MR_CHECK(total == 0, "cleared bag holds %lld", (long long)total);
    }
    if (gv_rank() == 0)
        gv_gce_destroy(&gce);
    gv_bag_destroy(next);
    gv_bag_destroy(bag);
    if (gv_rank() == 0)
        printf("ok: %lld appends of %zu bytes by %lld workers, twice\n",
               (long long)(o.workers * o.ops), o.es, (long long)o.workers);
}

int main(int argc, char **argv)
{
    int c;

    while ((c = getopt(argc, argv, "w:n:e:")) != -1) {
        switch (c) {
        case 'w': o.workers = strtoll(optarg, NULL, 0); break;
        case 'n': o.ops = strtoll(optarg, NULL, 0); break;
        case 'e': o.es = strtoul(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: fw_containers_bag [-w workers] [-n "
                    "appends] [-e element bytes, 16..1024]\n");
            return 2;
        }
    }
    if ((o.workers < 1) || (o.ops < 1) || (o.es < 16) || (o.es > 1024)) {
        fprintf(stderr, "fw_containers_bag: bad option values\n");
        return 2;
    }
    mr_init(&argc, &argv);
    o.workers = (o.workers / gv_nranks()) * gv_nranks();
    if (o.workers == 0)
        o.workers = gv_nranks();
    want = calloc((size_t)gv_nranks() * VALUES, 8);
    have = calloc((size_t)gv_nranks() * VALUES, 8);
    MR_CHECK((want != NULL) && (have != NULL), "out of memory");
    MR_OK(gv_run_all(run, NULL, 0));
    gv_finalize();
    return 0;
}
