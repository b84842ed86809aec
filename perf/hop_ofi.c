/* hop_ofi: Grapevine's hop against libfabric's, inside one process.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 *   GV_TRANSPORT=ofi FI_PROVIDER=shm build/bin/gvrun -n 2 \
 *       build/perf/hop_ofi [-b blocks] [-k round_trips_per_block] [-s bytes]
 *   (or FI_PROVIDER="tcp;ofi_rxm", quoted)
 *
 * Ranks 0 and 1 ping-pong -s bytes (8, up to 4 MiB) two ways, in blocks of
 * -k round trips (by default 500 up to 33,554 bytes, then as many as fit
 * in 16 MiB each way, but 10 at least, so that from 1.6 MiB a block moves
 * more: 40 MiB at 4 MiB; hop_per_default() in perf/hop.h), the ways
 * taking turns block by block, -b blocks each (100):
 *   gv   gv_am_send_now() and gv_wait(), as perf/pingpong's latency loop
 *        (a message too large to go out in place is buffered and shipped);
 *   ofi  a fabric, domain, RDM endpoint, AV and two CQs of this program's
 *        own, from the provider the transport gets (libfabric applies
 *        FI_PROVIDER; GV_OFI_PROVIDER, if set, names it in the hints, as
 *        for the transport), used as fi_pingpong (fabtests' pingpong.c)
 *        uses them: FI_MSG, one receive posted ahead and posted again as
 *        soon as its completion is read, fi_inject when the message is
 *        under the endpoint's inject_size and otherwise fi_send and a wait
 *        for its completion, fi_cq_read one entry at a time in a busy loop;
 *        its buffers, page-aligned, are -s bytes each way.
 * The raw endpoint names travel as gv active messages; one message each
 * way connects the raw endpoints (tcp;ofi_rxm connects on first use)
 * before anything is timed. Why in one process: see perf/hop_mpi.c. The
 * two ways share the run's vCPU placement, so their difference is the
 * code's.
 *
 * A raw wait that sees nothing for OFI_RAW_TIMEOUT_S seconds aborts the
 * job naming the peer; every libfabric call that fails aborts it naming
 * the call and fi_strerror().
 *
 * Prints "hop_ofi transport=T provider=P bytes=S gv_ns=X ofi_ns=Y
 * gv_over_ofi=R": one-way nanoseconds, half the median round trip of each
 * way over all its blocks; P is the raw endpoint's provider. From 4 KiB,
 * "gv_MBps=A ofi_MBps=B" follow: S over each one-way time in 10^6 B/s,
 * the kind of bandwidth fi_pingpong reports, a ping-pong's (perf/
 * compare.sh sets perf/pingpong's latency at 1 MiB beside it the same way);
 * but fi_pingpong divides by its mean time per transfer, not the median,
 * and where round trips spread (tcp;ofi_rxm) the two part by 2x and more.
 *
 *   GV_TRANSPORT=ofi FI_PROVIDER=shm build/bin/gvrun -n 2 \
 *       build/perf/hop_ofi -s 1048576
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if GV_HAVE_OFI
#include <grapevine.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include "hop.h"
#include "out.h"
#include "stamp.h"

#define NAME_MAX_LEN      256
#define OFI_RAW_TIMEOUT_S 10
#define POLLS_PER_CHECK   (1u << 14) /* empty polls between clock reads */

enum { WAY_GV, WAY_OFI, NWAYS };
static const char *const way_names[NWAYS] = {"gv", "ofi"};

/* The raw side: what fi_pingpong opens, and its two counters. */
typedef struct {
    struct fi_info     *info;
    struct fid_fabric  *fabric;
    struct fid_domain  *domain;
    struct fid_av      *av;
    struct fid_cq      *txcq, *rxcq;
    struct fid_ep      *ep;
    struct fid_mr      *mr;
    void               *desc;
    char               *buf;        /* receive half, then send half */
    size_t              half;       /* bytes in each, -s in whole pages */
    fi_addr_t           peer_addr;
    int                 peer;
    struct fi_context2  tx_ctx, rx_ctx;
    uint64_t            rx_done;    /* receive completions read */
} raw_t;

static void check(long ret, const char *what)
{
    if (ret != 0)
        gv_abort(1, "hop_ofi: %s failed: %s", what,
                 fi_strerror((int)(ret < 0 ? -ret : ret)));
}

/* One more empty poll of a raw wait: every POLLS_PER_CHECK of them the
 * clock is read (the first read starts the wait's clock), so that a wait
 * that is answered costs no clock read. */
static void raw_idle(const raw_t *r, unsigned *polls, uint64_t *since,
                     const char *what)
{
    uint64_t now;

    if (++*polls % POLLS_PER_CHECK != 0)
        return;
    now = stamp_mono_ns();
    if (*since == 0)
        *since = now;
    else if (now - *since > (uint64_t)OFI_RAW_TIMEOUT_S * 1000000000ull)
        gv_abort(1, "hop_ofi: %s: nothing from rank %d's raw endpoint "
                 "(provider %s) for %d s", what, r->peer,
                 r->info->fabric_attr->prov_name, OFI_RAW_TIMEOUT_S);
}

/* One fi_cq_read of one entry: 1 if it read one, 0 if the CQ was empty;
 * an error completion aborts. */
static int raw_cq_read(struct fid_cq *cq, const char *which)
{
    struct fi_cq_entry     ent;
    struct fi_cq_err_entry err;
    ssize_t                n;

    n = fi_cq_read(cq, &ent, 1);
    if (n == 1)
        return 1;
    if ((n == -FI_EAGAIN) || (n == 0))
        return 0;
    if (n == -FI_EAVAIL) {
        memset(&err, 0, sizeof(err));
        n = fi_cq_readerr(cq, &err, 0);
        if (n < 0)
            check(n, "fi_cq_readerr");
        gv_abort(1, "hop_ofi: %s completion: %s (%s)", which,
                 fi_strerror(err.err),
                 fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
    }
    check(n, "fi_cq_read");
    return 0;
}

static void raw_post_recv(raw_t *r)
{
    check(fi_recv(r->ep, r->buf, r->half, r->desc, FI_ADDR_UNSPEC,
                  &r->rx_ctx), "fi_recv");
}

/* Wait for the next receive completion, then post the next receive
 * before anything else (fi_pingpong's pp_rx). */
static void raw_recv(raw_t *r)
{
    unsigned polls = 0;
    uint64_t since = 0;

    while (!raw_cq_read(r->rxcq, "receive"))
        raw_idle(r, &polls, &since, "receive");
    r->rx_done++;
    raw_post_recv(r);
}

/* fi_inject when the message is under inject_size, else fi_send and its
 * completion (fi_pingpong's pp_inject and pp_tx); EAGAIN reads the send
 * CQ and tries again. */
static void raw_send(raw_t *r, size_t size)
{
    int      inject = size < r->info->tx_attr->inject_size;
    unsigned polls  = 0;
    uint64_t since  = 0;
    ssize_t  ret;

    for (;;) {
        if (inject)
            ret = fi_inject(r->ep, r->buf + r->half, size, r->peer_addr);
        else
            ret = fi_send(r->ep, r->buf + r->half, size, r->desc,
                          r->peer_addr, &r->tx_ctx);
        if (ret != -FI_EAGAIN)
            break;
        (void)raw_cq_read(r->txcq, "send");
        raw_idle(r, &polls, &since, inject ? "fi_inject" : "fi_send");
    }
    check(ret, inject ? "fi_inject" : "fi_send");
    if (!inject)
        while (!raw_cq_read(r->txcq, "send"))
            raw_idle(r, &polls, &since, "send completion");
}

/* fi_pingpong's resources, with its hints: an RDM endpoint with FI_MSG,
 * contexts supplied, local registration if the provider wants it; buffers
 * for messages of @a size bytes, which the endpoint must carry. */
static void raw_open(raw_t *r, size_t size)
{
    struct fi_info   *hints;
    struct fi_cq_attr cq_attr;
    struct fi_av_attr av_attr;
    const char       *want = getenv("GV_OFI_PROVIDER");
    int               ret;

    hints = fi_allocinfo();
    if (hints == NULL)
        gv_abort(1, "hop_ofi: fi_allocinfo failed");
    hints->caps                 = FI_MSG;
    hints->mode                 = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type        = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                                  FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    if ((want != NULL) && (want[0] != '\0') &&
        ((hints->fabric_attr->prov_name = strdup(want)) == NULL))
        gv_abort(1, "hop_ofi: out of memory");
    ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), NULL,
                     NULL, 0, hints, &r->info);
    fi_freeinfo(hints);
    check(ret, "fi_getinfo");

    check(fi_fabric(r->info->fabric_attr, &r->fabric, NULL), "fi_fabric");
    check(fi_domain(r->fabric, r->info, &r->domain, NULL), "fi_domain");

    memset(&cq_attr, 0, sizeof(cq_attr));
    cq_attr.format   = FI_CQ_FORMAT_CONTEXT;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size     = r->info->tx_attr->size;
    check(fi_cq_open(r->domain, &cq_attr, &r->txcq, NULL), "fi_cq_open (tx)");
    cq_attr.size = r->info->rx_attr->size;
    check(fi_cq_open(r->domain, &cq_attr, &r->rxcq, NULL), "fi_cq_open (rx)");

    memset(&av_attr, 0, sizeof(av_attr));
    av_attr.type = r->info->domain_attr->av_type;
    check(fi_av_open(r->domain, &av_attr, &r->av, NULL), "fi_av_open");
    check(fi_endpoint(r->domain, r->info, &r->ep, NULL), "fi_endpoint");
    check(fi_ep_bind(r->ep, &r->av->fid, 0), "fi_ep_bind (av)");
    check(fi_ep_bind(r->ep, &r->txcq->fid, FI_TRANSMIT), "fi_ep_bind (tx)");
    check(fi_ep_bind(r->ep, &r->rxcq->fid, FI_RECV), "fi_ep_bind (rx)");
    check(fi_enable(r->ep), "fi_enable");
    if (size > r->info->ep_attr->max_msg_size)
        gv_abort(2, "hop_ofi: -s %zu over the raw endpoint's max_msg_size "
                 "(%zu, provider %s)", size, r->info->ep_attr->max_msg_size,
                 r->info->fabric_attr->prov_name);

    r->half = (size + 4095) & ~(size_t)4095;
    if (r->half == 0)
        r->half = 4096;
    r->buf = hop_page_alloc("hop_ofi", 2 * r->half);
    if (r->info->domain_attr->mr_mode & FI_MR_LOCAL) {
        check(fi_mr_reg(r->domain, r->buf, 2 * r->half, FI_SEND | FI_RECV,
                        0, 0, 0, &r->mr, NULL), "fi_mr_reg");
        r->desc = fi_mr_desc(r->mr);
    }
    raw_post_recv(r);
}

static void raw_close_fid(struct fid *fid, const char *what)
{
    if (fid != NULL)
        check(fi_close(fid), what);
}

int main(int argc, char **argv)
{
    hop_opts_t   o;
    int          b, i, w;
    int          rank, peer, n[NWAYS] = {0};
    char        *sbuf, name[NAME_MAX_LEN];
    size_t       name_len = sizeof(name);
    double      *rtt[NWAYS], ns_per_tick, out[NWAYS];
    uint64_t     target = 0, prev;
    stamp_span_t span;
    raw_t        r;
    int          ret;

    out_strip("hop_ofi", &argc, argv);
    o = hop_start("hop_ofi", &argc, &argv);
    rank = gv_rank();
    peer = 1 - rank;
    hop_rtt_alloc("hop_ofi", o, NWAYS, rtt);
    sbuf = hop_page_alloc("hop_ofi", (size_t)o.size);

    /* libfabric of our own, as fi_pingpong sets it up. */
    memset(&r, 0, sizeof(r));
    r.peer = peer;
    raw_open(&r, (size_t)o.size);
    ret = fi_getname(&r.ep->fid, name, &name_len);
    if (ret == -FI_ETOOSMALL)
        gv_abort(1, "hop_ofi: an endpoint name of %zu bytes (at most %d)",
                 name_len, NAME_MAX_LEN);
    check(ret, "fi_getname");
    hop_swap_addr(peer, name, name_len);
    ret = fi_av_insert(r.av, hop_peer_addr, 1, &r.peer_addr, 0, NULL);
    if (ret != 1)
        check(ret < 0 ? ret : -FI_EOTHER, "fi_av_insert");
    /* Connect the raw endpoints both ways before timing anything. */
    raw_send(&r, (size_t)o.size);
    raw_recv(&r);
    gv_barrier();

    stamp_span_begin(&span);
    for (b = 0; b < o.blocks * NWAYS; b++) {
        w = b % NWAYS;
        gv_barrier();
        prev = stamp_ticks();
        for (i = 0; i < o.per; i++) {
            if (w == WAY_GV) {
                hop_gv_trip(rank, peer, sbuf, (size_t)o.size, &target);
            } else {
                if (rank == 0)
                    raw_send(&r, (size_t)o.size);
                raw_recv(&r);
                if (rank == 1)
                    raw_send(&r, (size_t)o.size);
            }
            hop_stamp(rank, rtt, n, w, &prev);
        }
    }
    ns_per_tick = stamp_span_rate(&span);
    if (rank == 0) {
        hop_results(rtt, n, NWAYS, ns_per_tick, out);
        out_begin("hop_ofi", gv_transport_name(), gv_nranks());
        out_hop(o.size, rtt, n, NWAYS, ns_per_tick, way_names);
        out_end();
    }
    if ((rank == 0) && !out_machine()) {
        printf("hop_ofi transport=%s provider=%s bytes=%d gv_ns=%.1f "
               "ofi_ns=%.1f gv_over_ofi=%.3f", gv_transport_name(),
               r.info->fabric_attr->prov_name, o.size, out[WAY_GV],
               out[WAY_OFI], out[WAY_GV] / out[WAY_OFI]);
        hop_line_end(o.size, out, way_names, NWAYS);
    }
    /* Every raw message is in (each rank saw its last one arrive or be
     * answered), so the endpoints may go: the posted receive with them. */
    if (r.rx_done != (uint64_t)o.blocks * (uint64_t)o.per + 1)
        gv_abort(1, "hop_ofi: %llu raw messages in, %llu expected",
                 (unsigned long long)r.rx_done,
                 (unsigned long long)o.blocks * (unsigned long long)o.per + 1);
    gv_barrier();
    raw_close_fid(&r.ep->fid, "fi_close (endpoint)");
    gv_barrier();
    if (r.mr != NULL)
        raw_close_fid(&r.mr->fid, "fi_close (mr)");
    raw_close_fid(&r.av->fid, "fi_close (av)");
    raw_close_fid(&r.rxcq->fid, "fi_close (rx cq)");
    raw_close_fid(&r.txcq->fid, "fi_close (tx cq)");
    raw_close_fid(&r.domain->fid, "fi_close (domain)");
    raw_close_fid(&r.fabric->fid, "fi_close (fabric)");
    fi_freeinfo(r.info);
    free(r.buf);
    free(sbuf);
    hop_rtt_free(NWAYS, rtt);
    gv_finalize();
    return 0;
}

#else

int main(void)
{
    fprintf(stderr, "hop_ofi: built without libfabric (rebuild with OFI=1; "
            "needs libfabric-dev)\n");
    return 77;
}

#endif
