/* Unit tests of the routes' hop function (gv__am_route_hop) over many job
 * shapes: every (source, destination) pair arrives, within the route's
 * hops, never through the rank itself, with the nodes in the order the
 * route promises; gv__am_route_peers counts exactly the ranks the hop
 * function sends to, and gv__am_route_upstreams exactly the (rank,
 * position on the way) links that hand a rank envelopes to forward (the
 * bound gvinfo prints counts both).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "aggregator/am_internal.h"
#include "core/env.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

/* A job of @a nnodes nodes whose node k has rpn[k % nrpn] ranks (uneven
 * when nrpn > 1), numbered in node order, or, when @a interleave, rank i
 * on node i mod nnodes as far as the nodes' sizes allow (ranks of a node
 * not contiguous). */
typedef struct {
    int  size, nnodes;
    int *node_of, *members, *start;
} job_t;

static void job_make(job_t *j, int nnodes, const int *rpn, int nrpn,
                     int interleave)
{
    int k, i, r, *left;

    j->nnodes = nnodes;
    j->size   = 0;
    for (k = 0; k < nnodes; k++)
        j->size += rpn[k % nrpn];
    j->node_of = malloc((size_t)j->size * sizeof(int));
    j->members = malloc((size_t)j->size * sizeof(int));
    j->start   = malloc(((size_t)nnodes + 1) * sizeof(int));
    left       = malloc((size_t)nnodes * sizeof(int));
    cr_assert(j->node_of && j->members && j->start && left);
    for (k = 0; k < nnodes; k++)
        left[k] = rpn[k % nrpn];
    if (!interleave) {
        for (k = 0, r = 0; k < nnodes; k++)
            for (i = 0; i < left[k]; i++)
                j->node_of[r++] = k;
    } else {
        for (r = 0, k = 0; r < j->size; k = (k + 1) % nnodes)
            if (left[k] > 0) {
                left[k]--;
                j->node_of[r++] = k;
            }
    }
    free(left);
}

static void job_free(job_t *j)
{
    free(j->node_of);
    free(j->members);
    free(j->start);
}

/* Walk every pair of @a j under @a route; check the path and the peers. */
static void check_job(job_t *j, int route)
{
    gv__route_shape_t sh;
    int               s, d, r, hops, node_hops, prev_node, *seen, peers, n;
    unsigned char    *ups; /* [rank][upstream rank][position] */
    int               max_hops = (route == GV_AGG_ROUTE_NODE2) ? 5 : 3;
    int               max_node_hops = (route == GV_AGG_ROUTE_NODE2) ? 2 : 1;

    gv__am_route_shape(&sh, route, j->node_of, j->nnodes, j->size,
                       j->members, j->start);
    seen = calloc((size_t)j->size, sizeof(int));
    ups  = calloc((size_t)j->size * (size_t)j->size * 5, 1);
    cr_assert((seen != NULL) && (ups != NULL));
    for (s = 0; s < j->size; s++) {
        memset(seen, 0, (size_t)j->size * sizeof(int));
        for (d = 0; d < j->size; d++) {
            int nodes_on_path[8], nn = 0, a = j->node_of[s];

            if (d == s)
                continue;
            /* The sender's first hop: one of the ranks it buffers to. */
            seen[gv__am_route_hop(&sh, s, d)] = 1;
            r         = s;
            hops      = 0;
            node_hops = 0;
            prev_node = a;
            nodes_on_path[nn++] = a;
            while (r != d) {
                int next = gv__am_route_hop(&sh, r, d);

                cr_assert_neq(next, r, "route %d, %d ranks in %d nodes: "
                              "rank %d forwards to itself (to %d)", route,
                              j->size, j->nnodes, r, d);
                /* The hop is a function of (rank, destination). */
                cr_assert_eq(next, gv__am_route_hop(&sh, r, d));
                cr_assert(next >= 0 && next < j->size);
                /* A rank that forwards: an upstream link (r, hops). */
                if (next != d)
                    ups[((size_t)next * (size_t)j->size + (size_t)r) * 5 +
                        (size_t)hops] = 1;
                if (j->node_of[next] != prev_node) {
                    node_hops++;
                    prev_node = j->node_of[next];
                    nodes_on_path[nn++] = prev_node;
                }
                r = next;
                hops++;
                cr_assert(hops <= max_hops, "route %d, %d ranks in %d nodes: "
                          "%d to %d takes more than %d hops", route,
                          j->size, j->nnodes, s, d, max_hops);
            }
            cr_assert(node_hops <= max_node_hops, "route %d, %d ranks in %d "
                      "nodes: %d to %d crosses %d nodes", route, j->size,
                      j->nnodes, s, d, node_hops);
            if ((route == GV_AGG_ROUTE_NODE2) && (nn == 3)) {
                /* Through C in A's row and B's column, or, when that node
                 * does not exist, in B's row and A's column. */
                int cols = sh.cols, b = j->node_of[d], c = nodes_on_path[1];
                int want = a - a % cols + b % cols;

                if (want >= j->nnodes)
                    want = b - b % cols + a % cols;
                cr_assert_eq(c, want, "%d nodes: node %d to %d goes "
                             "through %d, not %d", j->nnodes, a, b, c, want);
                cr_assert(a / cols != b / cols && a % cols != b % cols);
            }
        }
        /* Every rank a relay forwards to is a next hop of some destination
         * from it, so the ranks this rank sends to are exactly these. */
        for (d = 0, peers = 0; d < j->size; d++)
            peers += seen[d];
        cr_assert_eq(peers, gv__am_route_peers(route, j->node_of, j->nnodes,
                                               j->size, s),
                     "route %d, %d ranks in %d nodes: rank %d sends to %d "
                     "ranks, gv__am_route_peers says %d", route, j->size,
                     j->nnodes, s, peers,
                     gv__am_route_peers(route, j->node_of, j->nnodes,
                                        j->size, s));
    }
    for (r = 0; r < j->size; r++) {
        for (d = 0, n = 0; d < j->size * 5; d++)
            n += ups[(size_t)r * (size_t)j->size * 5 + (size_t)d];
        cr_assert_eq(n, gv__am_route_upstreams(route, j->node_of, j->nnodes,
                                               j->size, r),
                     "route %d, %d ranks in %d nodes: rank %d forwards from "
                     "%d upstream links, gv__am_route_upstreams says %d",
                     route, j->size, j->nnodes, r, n,
                     gv__am_route_upstreams(route, j->node_of, j->nnodes,
                                            j->size, r));
    }
    free(ups);
    free(seen);
}

Test(route_hop, every_pair_arrives_within_the_hops, .timeout = 120)
{
    static const int rpns[][3] = {{1}, {2}, {3}, {4}, {8}, {1, 3}, {5, 2, 7},
                                  {8, 1}};
    static const int nrpn[]    = {1, 1, 1, 1, 1, 2, 3, 2};
    int              k, v, route, inter;
    job_t            j;

    for (k = 1; k <= 64; k++)
        for (v = 0; v < (int)(sizeof(nrpn) / sizeof(nrpn[0])); v++)
            for (inter = 0; inter < 2; inter++) {
                /* The walk is O(ranks^2 x hops): large shapes only for
                 * some node counts. */
                if ((k > 20) && (k % 7 != 0) && (k != 64) && (rpns[v][0] > 2))
                    continue;
                job_make(&j, k, rpns[v], nrpn[v], inter);
                for (route = GV_AGG_ROUTE_NODE; route <= GV_AGG_ROUTE_NODE2;
                     route++)
                    check_job(&j, route);
                job_free(&j);
            }
}

/* node2 is worth having: on a full grid a rank buffers to the ranks of
 * its node and to at most ceil(2 (sqrt(nodes) - 1) / (ranks per node))
 * others, fewer than node once the nodes outnumber the ranks per node. */
Test(route_hop, node2_bound_grows_with_the_root_of_the_nodes)
{
    static const int shapes[][2] = {{16, 4}, {64, 8}, {256, 8}, {1024, 32},
                                    {4096, 32}};
    size_t           i;

    for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        int   nodes = shapes[i][0], rpn = shapes[i][1], size = nodes * rpn;
        int   side = 1, r, most2 = 0, most1 = 0, p;
        int  *node_of = malloc((size_t)size * sizeof(int));

        cr_assert(node_of != NULL);
        while (side * side < nodes)
            side++;
        for (r = 0; r < size; r++)
            node_of[r] = r / rpn;
        /* Every rank position within a node is the same for every node
         * of a full grid: one node's ranks suffice. */
        for (r = 0; r < rpn; r++) {
            p = gv__am_route_peers(GV_AGG_ROUTE_NODE2, node_of, nodes, size,
                                   r);
            most2 = (p > most2) ? p : most2;
            p = gv__am_route_peers(GV_AGG_ROUTE_NODE, node_of, nodes, size,
                                   r);
            most1 = (p > most1) ? p : most1;
        }
        cr_expect_eq(most2, rpn - 1 + (2 * (side - 1) + rpn - 1) / rpn,
                     "%d nodes of %d: node2 buffers to %d ranks", nodes,
                     rpn, most2);
        if (nodes > rpn)
            cr_expect_lt(most2, most1, "%d nodes of %d: node2 %d, node %d",
                         nodes, rpn, most2, most1);
        free(node_of);
    }
}
