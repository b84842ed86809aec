/* Exactly-once, in-order delivery and the barrier's quiescence under any
 * GV_AGG_ROUTE, with pretend nodes (GV_TEST_NODES): every rank sends every
 * other rank a stream of numbered messages of mixed sizes (small ones
 * batched, some sent with gv_am_send_now(), some too large for a batch,
 * one larger than a transport message), each of which the receiver checks
 * against its source (the original sender, whatever the hops), its
 * number (per-pair order: each must be the next) and its contents. Half
 * the small ones ask for a reply sent from inside the handler. After one
 * gv_barrier() every message and every reply must have been handled: the
 * barrier may not return while one is still on its way through a relay.
 * Then the global counts of gv_am_stats() must agree (a relay counts
 * nothing), and under GV_AGG_ROUTE=node every batched message to another
 * node must have been counted once on the node-to-node hop
 * (internode_msgs), in no more batches than messages; only those a rank
 * sends to the rank it relays to itself may go without an envelope, and
 * uncounted, when a batch to it is open.
 *
 * With --kill-relay (GV_AGG_ROUTE=node or node2, at least 2 nodes): a
 * relay on the way from rank 0 to the last rank (node: the first; node2:
 * the last on a node in between, if the way crosses one) kills itself
 * (SIGKILL) halfway through the stream; the job must stop, its launcher
 * naming that rank.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"
#include "aggregator/am_internal.h"
#include "core/env.h"

#include <signal.h>

#define PER_PEER  3000       /* messages to each other rank */
#define MID_EVERY 211        /* every so many: a message too large to batch */
#define MID_BYTES (70 << 10)
#define BIG_BYTES (5 << 20)  /* more than tcp's largest transport message */

typedef struct {
    uint32_t src, seq;
    uint32_t want_reply, pad;
    uint64_t check;
} head_t;

static gv_am_id_t msg_id, reply_id;
static uint32_t  *next_seq; /* per source: the number expected next */
static uint64_t   got, replies, reply_sum;
static uint64_t   to_other_node; /* hops between nodes of batched messages */
static uint64_t   to_own_relay;  /* of them, first hops straight to the
                                    destination */

/* The route's shape (GV_AGG_ROUTE=node or node2), built on first use. */
static gv__route_shape_t shape;
static int              *shape_mem;

static const gv__route_shape_t *route_shape(int route)
{
    int n = gv_nranks(), i;

    if (shape_mem == NULL) {
        shape_mem = calloc((size_t)(2 * n + gv_nnodes() + 1), sizeof(int));
        MR_CHECK(shape_mem != NULL, "out of memory");
        for (i = 0; i < n; i++)
            shape_mem[i] = gv_node_of(i);
        gv__am_route_shape(&shape, route, shape_mem, gv_nnodes(), n,
                           shape_mem + n, shape_mem + 2 * n);
    }
    return &shape;
}

/* Small enough to go into a batch (a 64 KiB GV_AGG_BYTES, in an
 * envelope): all but the MID_BYTES and BIG_BYTES ones. Counts the hops
 * between nodes on the route's path to @a dst (one under node, up to two
 * under node2); a first hop that crosses straight to @a dst may leave
 * without an envelope, uncounted. */
static void count_sent(int dst, size_t len)
{
    const char              *route = getenv("GV_AGG_ROUTE");
    const gv__route_shape_t *sh;
    int                      r, next;

    if ((len >= 1024) || (gv_node_of(dst) == gv_node_of(gv_rank())) ||
        (route == NULL) || ((strcasecmp(route, "node") != 0) &&
                            (strcasecmp(route, "node2") != 0)))
        return;
    sh = route_shape((strcasecmp(route, "node") == 0) ? GV_AGG_ROUTE_NODE
                                                      : GV_AGG_ROUTE_NODE2);
    next = gv__am_route_hop(sh, gv_rank(), dst);
    to_own_relay += (next == dst);
    for (r = gv_rank(); r != dst; r = next) {
        next = gv__am_route_hop(sh, r, dst);
        to_other_node += (gv_node_of(next) != gv_node_of(r));
    }
}

/* The relay to kill under @a route (see above), walking the route's hops
 * from rank 0 to the last rank. */
static int relay_to_kill(int route)
{
    const gv__route_shape_t *sh = route_shape(route);
    int                      n  = gv_nranks(), r, next, victim = -1;

    for (r = 0; (next = gv__am_route_hop(sh, r, n - 1)) != n - 1; r = next) {
        if ((victim < 0) || ((route == GV_AGG_ROUTE_NODE2) &&
                             (gv_node_of(next) != 0) &&
                             (gv_node_of(next) != gv_node_of(n - 1))))
            victim = next;
    }
    return victim;
}

static uint64_t fill_byte(uint32_t src, uint32_t seq, size_t i)
{
    return (uint8_t)(src * 131u + seq * 7u + (uint32_t)i);
}

static void on_msg(int src, const void *p, size_t len, void *arg)
{
    head_t h;
    size_t i;

    (void)arg;
    MR_CHECK(len >= sizeof(h), "rank %d: message of %zu bytes from %d",
             gv_rank(), len, src);
    memcpy(&h, p, sizeof(h));
    MR_CHECK(h.src == (uint32_t)src, "rank %d: handler saw source %d, the "
             "message came from %u", gv_rank(), src, h.src);
    MR_CHECK(h.seq == next_seq[src], "rank %d: from %d got message %u, "
             "expected %u (lost, duplicated or reordered)", gv_rank(), src,
             h.seq, next_seq[src]);
    MR_CHECK(h.check == ((uint64_t)h.src << 32 | h.seq) * 0x9E3779B97F4A7C15ull,
             "rank %d: message %u from %d corrupted", gv_rank(), h.seq, src);
    for (i = sizeof(h); i < len; i += 4093)
        MR_CHECK(((const uint8_t *)p)[i] == fill_byte(h.src, h.seq, i),
                 "rank %d: byte %zu of message %u from %d corrupted",
                 gv_rank(), i, h.seq, src);
    next_seq[src]++;
    got++;
    if (h.want_reply) {
        uint64_t v = (uint64_t)h.seq * 3 + (uint64_t)gv_rank();
        MR_OK(gv_am_send(src, reply_id, &v, 8));
        count_sent(src, 8);
    }
}

static void on_reply(int src, const void *p, size_t len, void *arg)
{
    uint64_t v;

    (void)arg;
    MR_CHECK(len == 8, "reply of %zu bytes", len);
    memcpy(&v, p, 8);
    reply_sum += v - (uint64_t)src;
    replies++;
}

static void send_one(int dst, uint32_t seq, size_t len, int now,
                     uint8_t *buf, uint64_t *reply_expect,
                     uint64_t *nreply)
{
    head_t h = {(uint32_t)gv_rank(), seq, 0, 0, 0};
    size_t i;

    h.want_reply = (len == sizeof(h)) && (seq % 2 == 0);
    h.check      = ((uint64_t)h.src << 32 | seq) * 0x9E3779B97F4A7C15ull;
    memcpy(buf, &h, sizeof(h));
    for (i = sizeof(h); i < len; i += 4093)
        buf[i] = (uint8_t)fill_byte(h.src, seq, i);
    if (now)
        MR_OK(gv_am_send_now(dst, msg_id, buf, len));
    else
        MR_OK(gv_am_send(dst, msg_id, buf, len));
    count_sent(dst, len);
    if (h.want_reply) {
        *reply_expect += (uint64_t)seq * 3;
        (*nreply)++;
    }
}

int main(int argc, char **argv)
{
    int           n, me, d, k;
    uint32_t      seq;
    uint8_t      *buf;
    uint64_t      reply_expect = 0, nreply = 0, v[8], sums[8];
    const char   *route = getenv("GV_AGG_ROUTE");
    const char   *agg   = getenv("GV_AGGREGATE");
    int           routed, batching;
    gv_am_stats_t st;
    int           victim = -1;

    mr_init(&argc, &argv);
    if ((argc > 1) && (strcmp(argv[1], "--kill-relay") == 0)) {
        if ((gv_nnodes() < 2) || (route == NULL) ||
            ((strcasecmp(route, "node") != 0) &&
             (strcasecmp(route, "node2") != 0)))
            mr_skip("--kill-relay needs GV_AGG_ROUTE=node or node2 and "
                    "GV_TEST_NODES of 2 or more");
        victim = relay_to_kill((strcasecmp(route, "node") == 0)
                                   ? GV_AGG_ROUTE_NODE
                                   : GV_AGG_ROUTE_NODE2);
        MR_CHECK(victim >= 0, "no relay between rank 0 and rank %d",
                 gv_nranks() - 1);
        if (gv_rank() == 0)
            printf("relay to be killed: rank %d\n", victim);
        fflush(stdout);
    } else if (argc > 1) {
        fprintf(stderr, "mr_route: unknown option '%s' (accepted: "
                "--kill-relay)\n", argv[1]);
        gv_finalize();
        return 2;
    }
    n        = gv_nranks();
    me       = gv_rank();
    next_seq = calloc((size_t)n, sizeof(*next_seq));
    buf      = calloc(1, BIG_BYTES);
    MR_CHECK(next_seq != NULL && buf != NULL, "out of memory");
    MR_OK(gv_am_register(on_msg, NULL, &msg_id));
    MR_OK(gv_am_register(on_reply, NULL, &reply_id));
    gv_barrier();

    /* Interleave the destinations, so that every queue and relay is busy
     * at once. */
    for (seq = 0; seq < PER_PEER; seq++) {
        if ((victim == me) && (seq == PER_PEER / 2))
            raise(SIGKILL);
        for (k = 1; k < n; k++) {
            size_t len = sizeof(head_t);

            d = (me + k) % n;
            if (seq % MID_EVERY == MID_EVERY - 1)
                len = MID_BYTES;
            else if (seq % 7 == 3)
                len = sizeof(head_t) + 40;
            send_one(d, seq, len, seq % 5 == 1, buf, &reply_expect, &nreply);
        }
    }
    /* One message larger than the transport carries, to the next rank. */
    d = (me + 1) % n;
    if (d != me)
        send_one(d, PER_PEER, BIG_BYTES, 0, buf, &reply_expect, &nreply);
    gv_barrier();
    MR_CHECK(victim < 0, "rank %d: the barrier completed though relay rank "
             "%d was killed", me, victim);

    MR_CHECK(got == (uint64_t)(n - 1) * PER_PEER + (n > 1 ? 1 : 0),
             "rank %d: handled %llu messages after the barrier, expected "
             "%llu", me, (unsigned long long)got,
             (unsigned long long)((uint64_t)(n - 1) * PER_PEER + 1));
    MR_CHECK(replies == nreply && reply_sum == reply_expect,
             "rank %d: %llu replies (sum %llu) after the barrier, expected "
             "%llu (sum %llu)", me, (unsigned long long)replies,
             (unsigned long long)reply_sum, (unsigned long long)nreply,
             (unsigned long long)reply_expect);

    gv_am_stats(&st);
    v[0] = st.msgs_sent;
    v[1] = st.msgs_recv;
    v[2] = got + replies;
    v[3] = st.rejected;
    v[4] = st.internode_msgs;
    v[5] = st.internode_batches;
    v[6] = to_other_node;
    v[7] = to_own_relay;
    /* Every rank has read its counters once this barrier returns (its
     * own messages are not counted), before the reduction sends any. */
    gv_barrier();
    MR_OK(gv_team_allreduce(GV_TEAM_WORLD, v, sums, 8, GV_UINT64, GV_SUM));
    /* Every message sent was received exactly once; relays count
     * neither. */
    MR_CHECK(sums[3] == 0, "%llu messages rejected",
             (unsigned long long)sums[3]);
    MR_CHECK(sums[0] == sums[1], "job sent %llu messages and received "
             "%llu", (unsigned long long)sums[0],
             (unsigned long long)sums[1]);
    MR_CHECK(sums[0] >= sums[2], "job sent %llu messages, fewer than the "
             "%llu its handlers counted", (unsigned long long)sums[0],
             (unsigned long long)sums[2]);
    routed   = (route != NULL) &&
               ((strcasecmp(route, "node") == 0) ||
                (strcasecmp(route, "node2") == 0)) &&
               (gv_nnodes() > 1);
    batching = (agg == NULL) ||
               ((strcmp(agg, "0") != 0) && (strcasecmp(agg, "no") != 0) &&
                (strcasecmp(agg, "off") != 0) && (strcasecmp(agg, "n") != 0) &&
                (strcasecmp(agg, "false") != 0));
    if (!(routed && batching))
        sums[6] = sums[7] = 0;
    /* count_sent() knows which messages go into batches for the default
     * GV_AGG_BYTES only. */
    if (!routed || !batching || (getenv("GV_AGG_BYTES") == NULL))
        MR_CHECK((sums[4] <= sums[6]) && (sums[4] >= sums[6] - sums[7]),
                 "%llu messages counted on the node-to-node hop, expected "
                 "%llu (%llu of them may go uncounted)",
                 (unsigned long long)sums[4], (unsigned long long)sums[6],
                 (unsigned long long)sums[7]);
    MR_CHECK((sums[5] <= sums[4]) && ((sums[4] == 0) == (sums[5] == 0)),
             "%llu batches to other nodes for %llu messages",
             (unsigned long long)sums[5], (unsigned long long)sums[4]);
    if (me == 0)
        printf("route: %d ranks in %d nodes, %llu messages and replies, "
               "each once and in order: ok\n", n, gv_nnodes(),
               (unsigned long long)sums[2]);
    free(buf);
    free(next_seq);
    gv_finalize();
    return 0;
}
