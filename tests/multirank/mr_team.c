/* Teams and collectives: splits, the node team (with GV_TEST_NODES when
 * set), every collective blocking and non-blocking on the world, a split
 * team and the node team, several outstanding at once on different teams
 * and on one team, from the main flow and from workers; exact results for
 * pseudo-random data, sizes 0 to 1 MiB. SPDX-License-Identifier: BSD-3-Clause */
#include "mr.h"

#include <grapevine.h>

/* Element i of world rank w's contribution to test number t: small
 * integers, so that double sums are exact in any order. */
static int64_t val(int t, int w, size_t i)
{
    uint64_t s = ((uint64_t)t << 40) ^ ((uint64_t)w << 24) ^ i;

    return (int64_t)(mr_rand(&s) % 2001) - 1000;
}

static uint8_t byte(int t, int w, size_t i)
{
    return (uint8_t)(val(t, w, i) * 7 + (int64_t)(i >> 8));
}

static const size_t bytes_sizes[] = {0, 1, 8, 1000, 65536, 65536 + 24,
                                     300000, 1u << 20};
#define NSIZES (sizeof(bytes_sizes) / sizeof(bytes_sizes[0]))

static int test_no;

static void fill_vec(int t, int w, size_t n, gv_dtype_t type, void *buf)
{
    size_t i;

    for (i = 0; i < n; i++) {
        int64_t v = val(t, w, i);
        if (type == GV_DOUBLE) {
            double d = (double)v;
            memcpy((char *)buf + 8 * i, &d, 8);
        } else {
            memcpy((char *)buf + 8 * i, &v, 8);
        }
    }
}

/* The expected reduction over the team's members. */
static void expect_vec(gv_team_t *team, int t, size_t n, gv_dtype_t type,
                       gv_redop_t op, void *out)
{
    size_t i;
    int    m;

    for (i = 0; i < n; i++) {
        int64_t  a = 0;
        uint64_t u = 0;
        double   d = 0;

        for (m = 0; m < gv_team_size(team); m++) {
            int64_t v = val(t, gv_team_world_rank(team, m), i);
            if (m == 0) {
                a = v;
                u = (uint64_t)v;
                d = (double)v;
                continue;
            }
            if (op == GV_SUM) {
                a += v;
                u += (uint64_t)v;
                d += (double)v;
            } else if (op == GV_MIN) {
                a = (v < a) ? v : a;
                u = ((uint64_t)v < u) ? (uint64_t)v : u;
                d = ((double)v < d) ? (double)v : d;
            } else {
                a = (v > a) ? v : a;
                u = ((uint64_t)v > u) ? (uint64_t)v : u;
                d = ((double)v > d) ? (double)v : d;
            }
        }
        if (type == GV_DOUBLE)
            memcpy((char *)out + 8 * i, &d, 8);
        else if (type == GV_INT64)
            memcpy((char *)out + 8 * i, &a, 8);
        else
            memcpy((char *)out + 8 * i, &u, 8);
    }
}

static void wait_or_test(gv_coll_req_t **req, int use_test)
{
    if (use_test) {
        gv_status_t st;
        while ((st = gv_coll_test(req)) == GV_INPROGRESS)
            ;
        MR_OK(st);
    } else {
        MR_OK(gv_coll_wait(req));
    }
    MR_CHECK(*req == NULL, "request not released");
}

static void check_bcast(gv_team_t *team, size_t len, int nb)
{
    int            t    = ++test_no, root = t % gv_team_size(team);
    uint8_t       *buf  = malloc(len + 1);
    size_t         i;
    gv_coll_req_t *req;
    int            rw = gv_team_world_rank(team, root);

    for (i = 0; i < len; i++)
        buf[i] = (gv_team_rank(team) == root) ? byte(t, rw, i) : 0xEE;
    if (nb) {
        MR_OK(gv_team_ibcast(team, root, buf, len, &req));
        wait_or_test(&req, nb == 2);
    } else {
        MR_OK(gv_team_bcast(team, root, buf, len));
    }
    for (i = 0; i < len; i++)
        MR_CHECK(buf[i] == byte(t, rw, i), "bcast of %zu bytes from %d: "
                 "byte %zu", len, root, i);
    free(buf);
}

static void check_allreduce(gv_team_t *team, size_t n, gv_dtype_t type,
                            gv_redop_t op, int nb, int reduce)
{
    int            t = ++test_no, root = t % gv_team_size(team);
    int64_t       *in = malloc(8 * n + 8), *out = malloc(8 * n + 8);
    int64_t       *exp = malloc(8 * n + 8);
    gv_coll_req_t *req;
    int            me = gv_team_rank(team);

    fill_vec(t, gv_rank(), n, type, in);
    expect_vec(team, t, n, type, op, exp);
    memset(out, 0xAB, 8 * n);
    if (reduce) {
        if (nb) {
            MR_OK(gv_team_ireduce(team, root, in, out, n, type, op, &req));
            wait_or_test(&req, nb == 2);
        } else {
            MR_OK(gv_team_reduce(team, root, in, out, n, type, op));
        }
    } else if (nb) {
        MR_OK(gv_team_iallreduce(team, in, out, n, type, op, &req));
        wait_or_test(&req, nb == 2);
    } else {
        MR_OK(gv_team_allreduce(team, in, out, n, type, op));
    }
    if (!reduce || (me == root))
        MR_CHECK(memcmp(out, exp, 8 * n) == 0, "%s of %zu elements, type %d "
                 "op %d (team of %d)", reduce ? "reduce" : "allreduce", n,
                 (int)type, (int)op, gv_team_size(team));
    free(in);
    free(out);
    free(exp);
}

/* len_of(t, src, dst): bytes src sends dst in all-to-all-v test t. */
static size_t vlen(int t, int src, int dst, size_t scale)
{
    return (size_t)((src * 3 + dst * 5 + t) % 4) * scale;
}

static void check_exchange(gv_team_t *team, size_t len, int kind, int nb)
{
    int            t = ++test_no, p = gv_team_size(team);
    int            me = gv_team_rank(team), i;
    size_t        *sl = calloc((size_t)p, sizeof(size_t));
    size_t        *so = calloc((size_t)p, sizeof(size_t));
    size_t        *rl = calloc((size_t)p, sizeof(size_t));
    size_t        *ro = calloc((size_t)p, sizeof(size_t));
    size_t         stot = 0, rtot = 0, k;
    uint8_t       *send, *recv;
    gv_coll_req_t *req;
    gv_status_t    st;

    for (i = 0; i < p; i++) {
        sl[i] = (kind == 2) ? vlen(t, me, i, len) : len;
        rl[i] = (kind == 2) ? vlen(t, i, me, len) : len;
        so[i] = stot;
        ro[i] = rtot;
        stot += (kind == 0) ? 0 : sl[i];
        rtot += rl[i];
    }
    if (kind == 0)
        stot = len;
    send = malloc(stot + 1);
    recv = malloc(rtot + 1);
    memset(recv, 0xEE, rtot);
    for (i = 0; i < p; i++)
        for (k = 0; k < ((kind == 0) ? ((i == 0) ? len : 0) : sl[i]); k++)
            send[((kind == 0) ? 0 : so[i]) + k] =
                byte(t, gv_rank() * 1000 + ((kind == 0) ? 0 : i), k);
    if (kind == 0)
        st = nb ? gv_team_iallgather(team, send, recv, len, &req)
                : gv_team_allgather(team, send, recv, len);
    else if (kind == 1)
        st = nb ? gv_team_ialltoall(team, send, recv, len, &req)
                : gv_team_alltoall(team, send, recv, len);
    else
        st = nb ? gv_team_ialltoallv(team, send, sl, so, recv, rl, ro, &req)
                : gv_team_alltoallv(team, send, sl, so, recv, rl, ro);
    MR_OK(st);
    if (nb)
        wait_or_test(&req, nb == 2);
    for (i = 0; i < p; i++) {
        int w = gv_team_world_rank(team, i);
        for (k = 0; k < rl[i]; k++)
            MR_CHECK(recv[ro[i] + k] ==
                         byte(t, w * 1000 + ((kind == 0) ? 0 : me), k),
                     "exchange kind %d, %zu bytes: from team rank %d byte "
                     "%zu", kind, len, i, k);
    }
    free(send);
    free(recv);
    free(sl);
    free(so);
    free(rl);
    free(ro);
}

static void check_team(gv_team_t *team, int nb)
{
    size_t s;
    int    ty, op;

    MR_OK(gv_team_barrier(team));
    for (s = 0; s < NSIZES; s++) {
        check_bcast(team, bytes_sizes[s], nb);
        for (ty = 0; ty < 3; ty++)
            for (op = 0; op < 3; op++)
                if ((bytes_sizes[s] <= 8192) || ((ty == 2) && (op == 0)))
                    check_allreduce(team, bytes_sizes[s] / 8, ty, op, nb,
                                    (ty + op + s) % 3 == 0);
        if (bytes_sizes[s] <= 65536 + 24)
            for (ty = 0; ty < 3; ty++)
                check_exchange(team, bytes_sizes[s] / 8 + (ty == 2), ty, nb);
    }
    {
        gv_coll_req_t *req;
        MR_OK(gv_team_ibarrier(team, &req));
        wait_or_test(&req, nb);
    }
}

/* Several at once: on three teams and twice on one, waited for out of
 * order. */
static void check_outstanding(gv_team_t *world, gv_team_t *half,
                              gv_team_t *node)
{
    int64_t        a[4], b[4], ea[4], eb[4];
    uint8_t        big[200000];
    int            t1 = ++test_no, t2 = ++test_no, tb = ++test_no;
    int64_t        g[64];
    int            root = 0, i;
    size_t         k;
    gv_coll_req_t *r[5];

    fill_vec(t1, gv_rank(), 4, GV_INT64, a);
    fill_vec(t2, gv_rank(), 4, GV_INT64, b);
    expect_vec(world, t1, 4, GV_INT64, GV_SUM, ea);
    expect_vec(world, t2, 4, GV_INT64, GV_MAX, eb);
    for (k = 0; k < sizeof(big); k++)
        big[k] = (gv_team_rank(half) == root) ? byte(tb, gv_team_world_rank(
                                                         half, root), k) : 0;
    int64_t mine = gv_rank();
    MR_OK(gv_team_iallreduce(world, a, a, 4, GV_INT64, GV_SUM, &r[0]));
    MR_OK(gv_team_ibcast(half, root, big, sizeof(big), &r[1]));
    MR_OK(gv_team_iallreduce(world, b, b, 4, GV_INT64, GV_MAX, &r[2]));
    MR_OK(gv_team_iallgather(node, &mine, g, 8, &r[3]));
    MR_OK(gv_team_ibarrier(world, &r[4]));
    for (i = 4; i >= 0; i--)
        MR_OK(gv_coll_wait(&r[i]));
    MR_CHECK(memcmp(a, ea, sizeof(a)) == 0, "outstanding allreduce 1");
    MR_CHECK(memcmp(b, eb, sizeof(b)) == 0, "outstanding allreduce 2");
    for (k = 0; k < sizeof(big); k++)
        MR_CHECK(big[k] == byte(tb, gv_team_world_rank(half, root), k),
                 "outstanding bcast byte %zu", k);
    for (i = 0; i < gv_team_size(node); i++)
        MR_CHECK(g[i] == gv_team_world_rank(node, i), "node allgather %d",
                 i);
}

static gv_team_t *W, *H, *N;
static gv_cc_t    cc;

static void on_half(void *arg)
{
    int i;

    (void)arg;
    for (i = 0; i < 20; i++) {
        int64_t x = gv_rank() + i, s = 0, e = 0;
        int     m;
        MR_OK(gv_team_allreduce(H, &x, &s, 1, GV_INT64, GV_SUM));
        for (m = 0; m < gv_team_size(H); m++)
            e += gv_team_world_rank(H, m) + i;
        MR_CHECK(s == e, "worker allreduce on the split team");
    }
    gv_cc_done(&cc, 1);
}

static void in_workers(void *arg)
{
    int i;

    (void)arg;
    /* One worker on the split team while this one uses the world. */
    gv_cc_init(&cc, 1);
    MR_OK(gv_spawn_private(on_half, NULL, 0));
    for (i = 0; i < 20; i++) {
        int64_t x = gv_rank() * 2 + i, s = 0;
        MR_OK(gv_team_allreduce(W, &x, &s, 1, GV_INT64, GV_SUM));
        MR_CHECK(s == (int64_t)gv_nranks() * (gv_nranks() - 1) +
                          (int64_t)gv_nranks() * i,
                 "worker allreduce on the world");
    }
    gv_cc_wait(&cc);
    check_team(H, 1);
}

int main(int argc, char **argv)
{
    int        n, me, i, k;
    const char *tn = getenv("GV_TEST_NODES");
    gv_team_t  *none, *rev;

    mr_init(&argc, &argv);
    n  = gv_nranks();
    me = gv_rank();
    W  = GV_TEAM_WORLD;
    MR_CHECK(gv_team_size(W) == n && gv_team_rank(W) == me, "world team");

    /* Split: two halves by parity, ordered by descending rank. */
    MR_OK(gv_team_split(W, me % 2, -me, &H));
    MR_CHECK(gv_team_size(H) == (n - me % 2 + 1) / 2, "half size %d",
             gv_team_size(H));
    for (i = 0; i < gv_team_size(H); i++) {
        int w = gv_team_world_rank(H, i);
        MR_CHECK(w % 2 == me % 2, "half member %d", w);
        MR_CHECK(gv_team_rank_of(H, w) == i, "translation");
        if (i > 0)
            MR_CHECK(w < gv_team_world_rank(H, i - 1), "key order");
    }
    MR_CHECK(gv_team_world_rank(H, gv_team_rank(H)) == me, "own rank");
    if ((me ^ 1) < n)
        MR_CHECK(gv_team_rank_of(H, me ^ 1) == -1, "non-member");
    /* A color nobody else has, and no color. */
    MR_OK(gv_team_split(W, (me == 0) ? GV_TEAM_NO_COLOR : 1, me, &none));
    MR_CHECK((me == 0) == (none == NULL), "GV_TEAM_NO_COLOR");
    if (none != NULL)
        MR_CHECK(gv_team_size(none) == n - 1, "team without rank 0");
    /* A split of a split. */
    MR_OK(gv_team_split(H, 0, gv_team_rank(H) % 2, &rev));
    MR_CHECK(gv_team_size(rev) == gv_team_size(H), "split of a split");

    /* The node team. */
    MR_OK(gv_team_node(&N));
    k = gv_nnodes();
    if ((tn != NULL) && (atoi(tn) > 0)) {
        int want = (atoi(tn) > n) ? n : atoi(tn);
        MR_CHECK(k == want, "GV_TEST_NODES=%s gives %d nodes", tn, k);
        for (i = 0; i < n; i++)
            MR_CHECK(gv_node_of(i) == (int)((int64_t)i * k / n), "node_of");
    }
    for (i = 0; i < gv_team_size(N); i++)
        MR_CHECK(gv_node_of(gv_team_world_rank(N, i)) == gv_node_of(me),
                 "node team member");
    {
        int c = 0;
        for (i = 0; i < n; i++)
            c += gv_node_of(i) == gv_node_of(me);
        MR_CHECK(c == gv_team_size(N), "node team size");
    }

    /* Every collective, blocking, non-blocking with wait and with test. */
    check_team(W, 0);
    check_team(H, 1);
    check_team(N, 2);
    /* Rank 0 is not in none: number the tests after it alike. */
    test_no = 100000;
    if (none != NULL)
        check_team(none, 1);
    test_no = 200000;
    check_team(rev, 0);
    check_outstanding(W, H, N);
    MR_OK(gv_run_all(in_workers, NULL, 0));

    MR_OK(gv_team_free(rev));
    /* Bad arguments: an error, not a crash. */
    MR_CHECK(gv_team_bcast(W, n, NULL, 0) == GV_ERR_INVALID, "bad root");
    MR_CHECK(gv_team_split(NULL, 0, 0, &rev) == GV_ERR_INVALID, "NULL parent");

    MR_OK(gv_team_free(H));
    MR_OK(gv_team_free(none));
    MR_OK(gv_team_free(N));
    if (me == 0)
        printf("team: %d ranks, %d node(s): ok\n", n, k);
    gv_finalize();
    return 0;
}
