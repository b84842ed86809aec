/* The composite transports shm+<net> (shm+tcp, shm+ucx, shm+ofi): shared
 * memory between the ranks of a node, the network transport between
 * nodes, as GASNet's PSHM or Open MPI's vader beside tcp do.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Nodes are gv__nodes_map()'s (core/boot.h): the real ones, or under
 * GV_TEST_NODES=k (tests and benchmarks only) k pretend nodes of one
 * machine, so that what travels between pretend nodes goes through the
 * network transport and what stays within one through shared memory, as
 * on a cluster. The layers above see the same map (gv_node_of), so
 * GV_AGG_ROUTE=node's hops within a node are shared-memory messages.
 *
 * Parts:
 *   net  the network transport, opened over every rank of the job (its
 *        own bootstrap); used only for ranks on other nodes.
 *   shm  transports/shm.c, opened over a node view of the bootstrap
 *        (gv__boot_node_view: the node's ranks with indices 0..n-1), only
 *        where the node has more than one rank; its segments and kick
 *        sockets are named by job rank, so pretend nodes do not collide.
 *        Its receives are handed up with the sender's job rank.
 * Both are opened with no symmetric heap and without am_send_id: the
 * composite offers messages only (no RMA, no atomics: gv_init allocates
 * the heap, and the DSM's one-sided operations travel as active
 * messages, as over tcp; GV_AMO=native is refused by gv_init).
 *
 * With one node (no GV_TEST_NODES, one machine) everything goes over shm;
 * the network transport is opened all the same (the capabilities do not
 * depend on the job's shape) and carries nothing.
 *
 * Sleeping: with WAIT_FD on both parts, an epoll set over their two fds is
 * the composite's fd; arm() arms both; wait() arms both and sleeps on the
 * set. Send completion, ordering (each pair of ranks uses one part) and
 * peer failure (both parts report failed job ranks) are the parts'.
 */
#define _GNU_SOURCE
#include "transports/transport.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    gv_tl_t        net;
    gv_tl_t        shm;
    int            has_shm;
    gv_boot_t     *view;
    int           *node_of;   /* job rank -> node */
    int           *local_of;  /* job rank -> shm rank, -1 on other nodes */
    int            mynode, nnodes, nlocal;
    int            ep;        /* epoll set over both fds, or -1 */
    unsigned       tick;      /* progress() calls since the net's poll */
    unsigned       net_every; /* poll the net every this many calls */
    gv_tl_recv_cb  recv_cb;
    void          *recv_arg;
} hy_t;

/* shm's receives, its ranks made the job's. */
static void shm_recv(void *arg, int src, const void *data, size_t len)
{
    hy_t *h = arg;

    h->recv_cb(h->recv_arg, h->view->world_of[src], data, len);
}

/* One int32 from every rank; the first rank whose value is not GV_OK, or
 * -1. -2 when the exchange itself failed. */
static int agree(gv_boot_t *boot, gv_status_t mine)
{
    int32_t  v = (int32_t)mine, *all;
    int      i, bad = -1;

    all = gv_malloc((size_t)boot->size * sizeof(*all));
    if (gv__boot_allgather(boot, &v, sizeof(v), all) != GV_OK)
        bad = -2;
    for (i = 0; (bad == -1) && (i < boot->size); i++)
        if (all[i] != GV_OK)
            bad = i;
    gv_free(all);
    return bad;
}

static void hy_free(hy_t *h)
{
    if (h->ep >= 0)
        close(h->ep);
    gv__boot_view_free(h->view);
    gv_free(h->node_of);
    gv_free(h->local_of);
    gv_free(h);
}

/* Every pretend node within one real node: the same answer on every
 * rank. */
static int nodes_fit(const gv_boot_t *boot, const int *node_of, int *a_p,
                     int *b_p)
{
    int i, j;

    if ((boot->node_of == NULL) || (boot->nnodes <= 1))
        return 1;
    for (i = 0; i < boot->size; i++)
        for (j = i + 1; (j < boot->size) && (node_of[j] == node_of[i]); j++)
            if (boot->node_of[j] != boot->node_of[i]) {
                *a_p = i;
                *b_p = j;
                return 0;
            }
    return 1;
}

static gv_status_t ep_add(hy_t *h, gv_tl_t *part)
{
    struct epoll_event e;

    memset(&e, 0, sizeof(e));
    e.events = EPOLLIN;
    if (epoll_ctl(h->ep, EPOLL_CTL_ADD, part->ops->wait_fd(part), &e) != 0) {
        gv_info("%s: epoll_ctl: %m", part->ops->name);
        return GV_ERR_IO;
    }
    return GV_OK;
}

/* The composite's attributes from its parts'. */
static void attr_setup(gv_tl_t *tl, hy_t *h, const char *net_name)
{
    const gv_tl_attr_t *n = &h->net.attr, *s = &h->shm.attr;
    uint32_t            both = n->caps;
    gv_tl_attr_t       *a = &tl->attr;

    if (h->has_shm)
        both &= s->caps;
    a->caps        = GV_TL_CAP_AM;
    a->max_msg     = n->max_msg;
    a->max_inline  = n->max_inline;
    a->max_oneshot = n->max_oneshot;
    a->now_zcopy_min = n->now_zcopy_min;
    if (h->has_shm) {
        if (s->max_msg < a->max_msg)
            a->max_msg = s->max_msg;
        if (s->max_inline < a->max_inline)
            a->max_inline = s->max_inline;
        /* 0: no limit */
        if ((s->max_oneshot != 0) &&
            ((a->max_oneshot == 0) || (s->max_oneshot < a->max_oneshot)))
            a->max_oneshot = s->max_oneshot;
    }
    if (a->max_inline > a->max_msg)
        a->max_inline = a->max_msg;
    if (both & GV_TL_CAP_WAIT_FD) {
        h->ep = epoll_create1(EPOLL_CLOEXEC);
        if ((h->ep >= 0) && (ep_add(h, &h->net) == GV_OK) &&
            (!h->has_shm || (ep_add(h, &h->shm) == GV_OK))) {
            a->caps |= GV_TL_CAP_WAIT_FD | GV_TL_CAP_WAIT;
            /* Each part's fd also shows refused send space freeing up
             * where the part says wait() does. */
            if (both & GV_TL_CAP_WAIT_SEND)
                a->caps |= GV_TL_CAP_WAIT_SEND;
        } else {
            gv_info("shm+%s: no descriptor to sleep on: %m", net_name);
            if (h->ep >= 0)
                close(h->ep);
            h->ep = -1;
        }
    }
    snprintf(a->detail, sizeof(a->detail),
             "shm within %d %snode%s%s; %s between%s [shm: %.80s; %s: %.80s]",
             h->nnodes, (gv__env.TEST_NODES > 0) ? "pretend " : "",
             (h->nnodes == 1) ? "" : "s",
             h->has_shm ? "" : " (alone on this one)", net_name,
             (h->nnodes == 1) ? " (unused: one node)" : "",
             h->has_shm ? s->detail : "not opened", net_name, n->detail);
}

static gv_status_t hy_init(gv_tl_t *tl, const char *net_name)
{
    const gv_tl_entry_t *e = gv__tl_entry(net_name);
    const gv_tl_ops_t   *ops = NULL;
    gv_boot_t           *boot = tl->boot;
    gv_tl_params_t       p;
    gv_status_t          status, mine;
    char                 why[4096];
    hy_t                *h;
    int                  i, a = 0, b = 0, bad;

    h           = gv_calloc(1, sizeof(*h));
    h->ep       = -1;
    h->net_every = 1;
    h->recv_cb  = tl->params.recv_cb;
    h->recv_arg = tl->params.recv_arg;
    h->node_of  = gv_malloc((size_t)tl->size * sizeof(int));
    h->local_of = gv_malloc((size_t)tl->size * sizeof(int));
    gv__nodes_map(boot, h->node_of, &h->nnodes);
    h->mynode = h->node_of[tl->rank];
    for (i = 0; i < tl->size; i++)
        h->local_of[i] = (h->node_of[i] == h->mynode) ? h->nlocal++ : -1;
    /* The same on every rank: no exchange needed to agree. */
    if (!nodes_fit(boot, h->node_of, &a, &b)) {
        gv_error("shm+%s: GV_TEST_NODES=%llu puts ranks %d and %d, which "
                 "run on different machines, in one pretend node: pretend "
                 "nodes must split real ones (a multiple of the %d real "
                 "nodes, with as many ranks on each), or leave "
                 "GV_TEST_NODES unset", net_name,
                 (unsigned long long)gv__env.TEST_NODES, a, b, boot->nnodes);
        hy_free(h);
        return GV_ERR_INVALID;
    }
    /* The network part: every rank must have it before any opens it (a
     * plug-in missing on one node would leave the others waiting in its
     * exchanges). */
    if (e != NULL)
        ops = gv__tl_ops(e, why, sizeof(why));
    else
        snprintf(why, sizeof(why), "no such transport");
    if (ops == NULL)
        gv_error("shm+%s: transport %s: %s", net_name, net_name, why);
    bad = agree(boot, (ops != NULL) ? GV_OK : GV_ERR_UNSUPPORTED);
    if (bad != -1) {
        if ((bad >= 0) && (ops != NULL))
            gv_info("shm+%s: rank %d cannot load %s", net_name, bad,
                    net_name);
        hy_free(h);
        return GV_ERR_UNSUPPORTED;
    }
    memset(&p, 0, sizeof(p));
    p.recv_cb      = tl->params.recv_cb;   /* the job's ranks already */
    p.recv_arg     = tl->params.recv_arg;
    h->net.ops     = ops;
    h->net.boot    = boot;
    h->net.rank    = tl->rank;
    h->net.size    = tl->size;
    h->net.params  = p;
    mine           = ops->init(&h->net);
    bad            = agree(boot, mine);
    if (bad != -1) {
        if (bad >= 0)
            gv_info("shm+%s: %s did not start on rank %d", net_name,
                    net_name, bad);
        if (mine == GV_OK)
            ops->fini(&h->net);
        hy_free(h);
        return (mine != GV_OK) ? mine : GV_ERR_UNREACHABLE;
    }
    /* The shared-memory part, over this node's ranks; every rank takes
     * part in the view's exchanges until all have left. */
    status = gv__boot_node_view(boot, h->node_of, &h->view);
    if (status != GV_OK)
        goto err_net;
    mine = GV_OK;
    if (h->view->size > 1) {
        p.recv_cb      = shm_recv;
        p.recv_arg     = h;
        h->shm.ops     = &gv_tl_shm_ops;
        h->shm.boot    = h->view;
        h->shm.rank    = h->view->rank;
        h->shm.size    = h->view->size;
        h->shm.params  = p;
        mine           = gv_tl_shm_ops.init(&h->shm);
        h->has_shm     = (mine == GV_OK);
    }
    status = gv__boot_view_leave(h->view);
    if ((mine != GV_OK) || (status != GV_OK)) {
        gv_info("shm+%s: shared memory within node %d did not start: %s",
                net_name, h->mynode,
                gv_status_str((mine != GV_OK) ? mine : status));
        status = (mine != GV_OK) ? mine : status;
        goto err_shm;
    }
    attr_setup(tl, h, net_name);
    tl->priv = h;
    if ((tl->rank == 0) && (h->nnodes == 1))
        gv_info("shm+%s: one node: every message goes over shm", net_name);
    return GV_OK;

err_shm:
    if (h->has_shm)
        gv_tl_shm_ops.fini(&h->shm);
err_net:
    ops->fini(&h->net);
    hy_free(h);
    return status;
}

static void hy_fini(gv_tl_t *tl)
{
    hy_t *h = tl->priv;

    if (h == NULL)
        return;
    if (h->has_shm)
        h->shm.ops->fini(&h->shm);
    h->net.ops->fini(&h->net);
    hy_free(h);
    tl->priv = NULL;
}

/* With a shm part, the network part is polled at most every net_every
 * calls: a poll of tcp (or of UCX's tcp) is an epoll_wait system call,
 * which would otherwise hold a rank waiting for a shared-memory message
 * for a few hundred nanoseconds at every poll. net_every is 1 while the
 * network part finds work, and doubles (up to HY_NET_EVERY_MAX) with every
 * poll that finds none, so a network message that follows quiet waits at
 * most that many shm polls (tens of nanoseconds each) more. A rank that
 * sleeps arms both parts (hy_arm), so nothing is missed. */
#define HY_NET_EVERY_MAX 16u

static unsigned hy_progress(gv_tl_t *tl)
{
    hy_t    *h = tl->priv;
    unsigned n = 0, m;

    if (h->has_shm) {
        n = gv_tl_shm_ops.progress(&h->shm);
        if (++h->tick < h->net_every)
            return n;
        h->tick = 0;
    }
    m = h->net.ops->progress(&h->net);
    if (m > 0)
        h->net_every = 1;
    else if (h->net_every < HY_NET_EVERY_MAX)
        h->net_every *= 2;
    return n + m;
}

static gv_status_t hy_am_send(gv_tl_t *tl, int dst, const void *hdr,
                              size_t hdr_len, const void *payload,
                              size_t len, gv_req_t *req)
{
    hy_t *h = tl->priv;

    if ((unsigned)dst >= (unsigned)tl->size) {
        gv_error("%s: send to rank %d of %d", tl->ops->name, dst, tl->size);
        return GV_ERR_INVALID;
    }
    if (h->local_of[dst] >= 0)
        return gv_tl_shm_ops.am_send(&h->shm, h->local_of[dst], hdr, hdr_len,
                                     payload, len, req);
    return h->net.ops->am_send(&h->net, dst, hdr, hdr_len, payload, len,
                               req);
}

static int hy_wait_fd(gv_tl_t *tl)
{
    return ((hy_t *)tl->priv)->ep;
}

static gv_status_t hy_arm(gv_tl_t *tl)
{
    hy_t *h = tl->priv;

    if (h->has_shm && (gv_tl_shm_ops.arm(&h->shm) != GV_OK))
        return GV_INPROGRESS;
    return h->net.ops->arm(&h->net);
}

static void hy_wait(gv_tl_t *tl, unsigned timeout_us)
{
    hy_t              *h = tl->priv;
    struct epoll_event ev;
    struct timespec    ts;
    int                n;

    if ((timeout_us == 0) || (hy_arm(tl) != GV_OK))
        return;
    ts.tv_sec  = (time_t)(timeout_us / 1000000u);
    ts.tv_nsec = (long)(timeout_us % 1000000u) * 1000;
    /* Whatever is ready is handled by the parts' next progress(). */
    n = epoll_pwait2(h->ep, &ev, 1, &ts, NULL);
    if ((n < 0) && (errno == ENOSYS))
        (void)epoll_wait(h->ep, &ev, 1, (int)((timeout_us + 999) / 1000));
}

#define HY_OPS(_sym, _net)                                                   \
    static gv_status_t _sym##_init(gv_tl_t *tl)                              \
    {                                                                        \
        return hy_init(tl, _net);                                            \
    }                                                                        \
    const gv_tl_ops_t _sym = {                                               \
        .version  = GV_TL_OPS_VERSION,                                       \
        .name     = "shm+" _net,                                             \
        .init     = _sym##_init,                                             \
        .fini     = hy_fini,                                                 \
        .progress = hy_progress,                                             \
        .am_send  = hy_am_send,                                              \
        .wait     = hy_wait,                                                 \
        .wait_fd  = hy_wait_fd,                                              \
        .arm      = hy_arm,                                                  \
    };

HY_OPS(gv_tl_shm_tcp_ops, "tcp")
#if GV_HAVE_UCX
HY_OPS(gv_tl_shm_ucx_ops, "ucx")
#endif
#if GV_HAVE_OFI
HY_OPS(gv_tl_shm_ofi_ops, "ofi")
#endif
