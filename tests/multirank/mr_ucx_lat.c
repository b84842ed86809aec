/* Active-message ping-pong between ranks 0 and 1 that reports the median
 * (and the mean) one-way latency per size, comparable with the "typical"
 * column of ucx_perftest -t ucp_am_lat: on a busy machine the mean is
 * dominated by descheduled rounds, the median (of batches of 8 round
 * trips, so that reading the clock is hardly measured) is not. Both ranks
 * spin in gv_progress() (no blocking wait), as ucx_perftest does. Checks that
 * every reply arrived with the right size. Options: -n iterations,
 * -s size (repeatable). Run with GV_AGGREGATE=0 for one transport message
 * per active message. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

static volatile uint64_t arrived;
static size_t            expect_len;
static gv_am_id_t        id;

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    MR_CHECK(len == expect_len, "%zu-byte message from rank %d, expected "
             "%zu", len, src, expect_len);
    arrived++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Round trips are timed in batches of LAT_BATCH, so that reading the
 * clock stays off the measured path; the median is over batch means. */
#define LAT_BATCH 8

static void run(size_t size, int iters, uint8_t *buf, uint64_t *bat)
{
    int      me = gv_rank(), nb = (iters + LAT_BATCH - 1) / LAT_BATCH, b, i;
    uint64_t sum = 0, k = 0;

    expect_len = size;
    arrived    = 0;
    gv_barrier();
    for (b = -nb / 10 - 1; b < nb; b++) {
        uint64_t t0 = gv_time_ns();

        for (i = 0; i < LAT_BATCH; i++) {
            k++;
            if (me == 0) {
                MR_OK(gv_am_send(1, id, buf, size));
                gv_flush();
                while (arrived < k)
                    gv_progress();
            } else if (me == 1) {
                while (arrived < k)
                    gv_progress();
                MR_OK(gv_am_send(0, id, buf, size));
                gv_flush();
            }
        }
        if (b >= 0)
            bat[b] = gv_time_ns() - t0;
    }
    gv_barrier();
    if (me != 0)
        return;
    for (b = 0; b < nb; b++)
        sum += bat[b];
    qsort(bat, (size_t)nb, sizeof(*bat), cmp_u64);
    printf("am_lat %s size %zu iters %d median_us %.3f mean_us %.3f "
           "min_us %.3f\n", gv_transport_name(), size, nb * LAT_BATCH,
           bat[nb / 2] / 2e3 / LAT_BATCH, (double)sum / nb / 2e3 / LAT_BATCH,
           bat[0] / 2e3 / LAT_BATCH);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    size_t    sizes[16], nsizes = 0, i, max = 8;
    int       iters = 100000, c;
    uint8_t  *buf;
    uint64_t *rtt;

    mr_init(&argc, &argv);
    while ((c = getopt(argc, argv, "n:s:")) != -1) {
        switch (c) {
        case 'n': iters = atoi(optarg); break;
        case 's':
            if (nsizes < 16)
                sizes[nsizes++] = strtoull(optarg, NULL, 0);
            break;
        default: gv_abort(2, "usage: mr_ucx_lat [-n iters] [-s size]...");
        }
    }
    if (nsizes == 0)
        sizes[nsizes++] = 8;
    if (gv_nranks() < 2)
        mr_skip("needs 2 ranks");
    MR_CHECK(iters > 0, "-n %d", iters);
    for (i = 0; i < nsizes; i++) {
        MR_CHECK(sizes[i] <= gv_am_max_payload(), "-s %zu is too large",
                 sizes[i]);
        if (sizes[i] > max)
            max = sizes[i];
    }
    MR_OK(gv_am_register(on_msg, NULL, &id));
    buf = calloc(1, max);
    rtt = calloc((size_t)(iters / 8 + 2), sizeof(*rtt));
    MR_CHECK((buf != NULL) && (rtt != NULL), "oom");
    for (i = 0; i < nsizes; i++)
        run(sizes[i], iters, buf, rtt);
    gv_finalize();
    free(rtt);
    free(buf);
    return 0;
}
