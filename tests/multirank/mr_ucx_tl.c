/* The ucx transport on its own, below the active-message layer: the test
 * opens a second instance of the backend (its own UCP context and worker,
 * its own receive callback) through the job's bootstrap and measures, from
 * rank 0 to rank 1, the median one-way latency of 8-byte messages and the
 * bandwidth of zero-copy messages per size with a window of sends in
 * flight, the numbers ucx_perftest -t ucp_am_lat / ucp_am_bw report for
 * UCX itself. Every message is checked (size, first and last byte) and
 * counted; a lost or corrupt one fails the test. Other transports skip.
 * Options: -n latency iterations, -w window, -s size (repeatable).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"
#include "transports/transport.h"

#if GV_HAVE_UCX

typedef struct {
    gv_req_t req;
    int     *inflight;
} win_req_t;

static volatile uint64_t arrived;
static size_t            expect_len;
static uint8_t           expect_mark;

static void recv_cb(void *arg, int src, const void *data, size_t len)
{
    const uint8_t *p = data;

    MR_CHECK(len == expect_len, "%zu-byte message from rank %d, expected %zu",
             len, src, expect_len);
    MR_CHECK((len < 2) || ((p[1] == expect_mark) && (p[len - 1] ==
                                                      expect_mark)),
             "corrupt %zu-byte message from rank %d", len, src);
    arrived++;
}

static void win_done(gv_req_t *req, gv_status_t status)
{
    win_req_t *w = (win_req_t *)req;

    MR_CHECK(status == GV_OK, "send completed with %s",
             gv_status_str(status));
    (*w->inflight)--;
}

static void send_one(gv_tl_t *tl, int dst, const uint8_t *buf, size_t len,
                     win_req_t *w, int *inflight)
{
    gv_status_t status;

    w->req.cb   = win_done;
    w->inflight = inflight;
    (*inflight)++;
    while ((status = tl->ops->am_send(tl, dst, buf, (len < 8) ? len : 8,
                                      buf + ((len < 8) ? len : 8),
                                      len - ((len < 8) ? len : 8),
                                      &w->req)) == GV_ERR_NO_RESOURCE)
        tl->ops->progress(tl);
    if (status == GV_OK)
        (*inflight)--;
    else
        MR_CHECK(status == GV_INPROGRESS, "am_send: %s", gv_status_str(status));
}

static void wait_arrived(gv_tl_t *tl, uint64_t n)
{
    while (arrived < n)
        tl->ops->progress(tl);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Round trips are timed in batches of LAT_BATCH, so that reading the
 * clock (tens of ns) stays off the measured path; the median batch mean
 * resists descheduled rounds like ucx_perftest's "typical" column. */
#define LAT_BATCH 8

static void latency(gv_tl_t *tl, uint8_t *buf, int iters)
{
    int        nb  = (iters + LAT_BATCH - 1) / LAT_BATCH;
    uint64_t  *bat = calloc((size_t)nb, sizeof(*bat));
    win_req_t  w;
    int        inflight = 0, b, i, me = tl->rank;
    uint64_t   k = 0;

    MR_CHECK(bat != NULL, "oom");
    expect_len  = 8;
    expect_mark = buf[1];
    arrived     = 0;
    gv__boot_barrier(tl->boot);
    for (b = -nb / 10 - 1; b < nb; b++) {
        uint64_t t0 = gv_time_ns();

        for (i = 0; i < LAT_BATCH; i++) {
            k++;
            if (me == 0) {
                send_one(tl, 1, buf, 8, &w, &inflight);
                wait_arrived(tl, k);
            } else {
                wait_arrived(tl, k);
                send_one(tl, 0, buf, 8, &w, &inflight);
            }
        }
        if (b >= 0)
            bat[b] = gv_time_ns() - t0;
    }
    while (inflight > 0)
        tl->ops->progress(tl);
    if (me == 0) {
        qsort(bat, (size_t)nb, sizeof(*bat), cmp_u64);
        printf("tl_lat ucx size 8 iters %d median_us %.3f min_us %.3f\n",
               nb * LAT_BATCH, bat[nb / 2] / 2e3 / LAT_BATCH,
               bat[0] / 2e3 / LAT_BATCH);
        fflush(stdout);
    }
    free(bat);
}

static void bandwidth(gv_tl_t *tl, uint8_t *buf, size_t size, int window)
{
    win_req_t *w = calloc((size_t)window, sizeof(*w));
    int        inflight = 0, me = tl->rank, i;
    uint64_t   n = (uint64_t)(512u << 20) / size; /* 512 MiB per size */
    double     t0;

    MR_CHECK(w != NULL, "oom");
    if (n > 200000)
        n = 200000;
    if (n < 200)
        n = 200;
    /* Rank 1 receives the stream, rank 0 only the final 8-byte reply. */
    expect_len  = (me == 0) ? 8 : size;
    expect_mark = buf[1];
    arrived     = 0;
    gv__boot_barrier(tl->boot);
    t0 = gv_wtime();
    if (me == 0) {
        for (i = 0; (uint64_t)i < n; i++) {
            while (inflight >= window)
                tl->ops->progress(tl);
            /* The slot is free once its send completed: reuse it. */
            send_one(tl, 1, buf, size, &w[i % window], &inflight);
        }
        while (inflight > 0)
            tl->ops->progress(tl);
        wait_arrived(tl, 1); /* rank 1 has them all */
        printf("tl_bw ucx size %zu msgs %llu window %d MBps %.1f\n", size,
               (unsigned long long)n, window,
               (double)size * (double)n / ((gv_wtime() - t0) * 1e6));
        fflush(stdout);
    } else {
        wait_arrived(tl, n);
        send_one(tl, 0, buf, 8, &w[0], &inflight);
        while (inflight > 0)
            tl->ops->progress(tl);
    }
    free(w);
}

int main(int argc, char **argv)
{
    size_t      sizes[16], nsizes = 0, max = 8, i;
    int         iters = 100000, window = 32, c;
    gv_tl_t    *tl;
    gv_status_t status;
    uint8_t    *buf;

    mr_init(&argc, &argv);
    while ((c = getopt(argc, argv, "n:w:s:")) != -1) {
        switch (c) {
        case 'n': iters = atoi(optarg); break;
        case 'w': window = atoi(optarg); break;
        case 's':
            if (nsizes < 16)
                sizes[nsizes++] = strtoull(optarg, NULL, 0);
            break;
        default:
            gv_abort(2, "usage: mr_ucx_tl [-n iters] [-w window] [-s size]...");
        }
    }
    if (strcmp(gv_transport_name(), "ucx") != 0)
        mr_skip("measures the ucx backend (GV_TRANSPORT=ucx)");
    if (gv_nranks() != 2)
        mr_skip("needs exactly 2 ranks");
    MR_CHECK((iters > 0) && (window > 0), "-n %d -w %d", iters, window);
    if (nsizes == 0) {
        sizes[nsizes++] = 65536;
        sizes[nsizes++] = 1048576;
    }
    for (i = 0; i < nsizes; i++) {
        MR_CHECK(sizes[i] >= 8, "-s %zu: at least 8 bytes", sizes[i]);
        if (sizes[i] > max)
            max = sizes[i];
    }
    buf = malloc(max);
    MR_CHECK(buf != NULL, "oom");
    memset(buf, 0xA5, max);

    /* A second instance of the backend, beside the one gv_init opened. */
    tl = calloc(1, sizeof(*tl));
    MR_CHECK(tl != NULL, "oom");
    tl->ops              = &gv_tl_ucx_ops;
    tl->boot             = gv__ctx.boot;
    tl->rank             = gv_rank();
    tl->size             = gv_nranks();
    tl->params.recv_cb   = recv_cb;
    tl->params.heap_size = 0;
    status = tl->ops->init(tl);
    MR_CHECK(status == GV_OK, "ucx init: %s", gv_status_str(status));
    MR_CHECK(tl->attr.max_msg >= max, "max_msg %zu", tl->attr.max_msg);
    if (tl->rank == 0)
        printf("tl ucx: %s\n", tl->attr.detail);

    latency(tl, buf, iters);
    for (i = 0; i < nsizes; i++)
        bandwidth(tl, buf, sizes[i], window);

    tl->ops->fini(tl);
    free(tl);
    free(buf);
    gv_finalize();
    return 0;
}

#else /* the backend under test was not built */

int main(int argc, char **argv)
{
    mr_init(&argc, &argv);
    mr_skip("built without UCX");
    return 0;
}

#endif
