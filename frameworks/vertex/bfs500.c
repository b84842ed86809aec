/* The Graph500 BFS written natively on the distributed graph, with
 * Beamer's direction optimisation, and the specification's validation of
 * its parent tree. SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

#include <stdlib.h>
#include <string.h>

#define ALPHA 14 /* top-down -> bottom-up when m_f > m_u / ALPHA */
#define BETA  24 /* bottom-up -> top-down when n_f < n / BETA    */

typedef struct b5 {
    const gv_graph_t *g;
    int64_t          *parent; /* [nl] */
    int64_t          *next;   /* [nl] next frontier (local indices) */
    int64_t           nnext;
    int64_t           edges;
} b5_t;

static b5_t      *cur;
static gv_am_id_t am_disc;
static int        am_ready;

#define REC 12 /* u32 local index at the owner, u64 parent id */

static void am_disc_cb(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *p = payload;
    b5_t          *b = cur;

    (void)arg;
    if ((b == NULL) || (len % REC) != 0) {
        gv__vx_err("bfs500: discovery batch of %zu bytes from rank %d %s",
                   len, src, (b == NULL) ? "outside a search"
                                         : "is not whole records");
        return;
    }
    for (size_t k = 0; k < len; k += REC) {
        uint32_t i;
        int64_t  par;

        memcpy(&i, p + k, 4);
        memcpy(&par, p + k + 4, 8);
        if (i >= (uint64_t)b->g->nlocal) {
            gv__vx_err("bfs500: discovery of local vertex %u from rank %d: "
                       "only %lld", i, src, (long long)b->g->nlocal);
            continue;
        }
        if (b->parent[i] == -1) {
            b->parent[i]         = par;
            b->next[b->nnext++] = i;
        }
    }
}

static inline void bit_set(uint64_t *bm, int64_t v)
{
    bm[v >> 6] |= 1ull << (v & 63);
}

static inline int bit_get(const uint64_t *bm, int64_t v)
{
    return (int)((bm[v >> 6] >> (v & 63)) & 1);
}

gv_status_t gv_bfs500(const gv_graph_t *g, int64_t root, int64_t *parent,
                      const gv_vx_opts_t *opts, gv_vx_stats_t *stats_p)
{
    static const gv_vx_opts_t defaults;
    gv__vx_ghosts_t own;
    const gv__vx_ghosts_t *ghp = NULL;
    gv_vx_stats_t   st;
    b5_t            b;
    int64_t         nl = g->nlocal, nw = (g->nverts + 63) / 64;
    int64_t        *front = NULL, nfront = 0;
    uint64_t       *bm = NULL;
    uint8_t        *gsent = NULL;
    uint8_t        *buf = NULL;
    size_t         *blen = NULL;
    int64_t         m_u = 0, prev_nf = 0;
    int             bu = 0;
    gv_status_t     rc;
    double          t0 = gv_wtime();
    const size_t    BATCH = REC * 5000;

    if (opts == NULL)
        opts = &defaults;
    memset(&st, 0, sizeof(st));
    if ((root < 0) || (root >= g->nverts)) {
        gv__vx_err0("bfs500: root %lld is not a vertex (0..%lld)",
                   (long long)root, (long long)g->nverts - 1);
        return GV_ERR_INVALID;
    }
    if (!am_ready) {
        rc = gv_am_register(am_disc_cb, NULL, &am_disc);
        if (rc != GV_OK) {
            gv__vx_err("bfs500: cannot register a handler: %s",
                       gv_status_str(rc));
            return rc;
        }
        am_ready = 1;
        gv_barrier();
    }
    rc = gv__vx_ghosts_get(g, 1, 0, &own, &ghp);
    if (rc == GV_OK) {
        front = malloc((size_t)(nl > 0 ? nl : 1) * sizeof(int64_t));
        b.next = malloc((size_t)(nl > 0 ? nl : 1) * sizeof(int64_t));
        bm    = calloc((size_t)(nw > 0 ? nw : 1), sizeof(uint64_t));
        gsent = calloc((size_t)(ghp->ng > 0 ? ghp->ng : 1), 1);
        buf   = malloc(BATCH * (size_t)g->nranks);
        blen  = calloc((size_t)g->nranks, sizeof(size_t));
        if ((front == NULL) || (b.next == NULL) || (bm == NULL) ||
            (gsent == NULL) || (buf == NULL) || (blen == NULL))
            rc = GV_ERR_NO_MEMORY;
    } else {
        b.next = NULL;
    }
    {
        int64_t bad = (rc != GV_OK);
        gv_status_t s2 = gv_allreduce(&bad, 1, GV_INT64, GV_MAX);

        if ((rc == GV_OK) && ((s2 != GV_OK) || bad))
            rc = (s2 != GV_OK) ? s2 : GV_ERR_NO_MEMORY;
    }
    if (rc != GV_OK)
        goto out;
    b.g      = g;
    b.parent = parent;
    b.nnext  = 0;
    for (int64_t i = 0; i < nl; i++) {
        parent[i] = -1;
        m_u += g->out_off[i + 1] - g->out_off[i];
        if (gv_graph_global(g, i) == root) {
            parent[i]       = root;
            front[nfront++] = i;
        }
    }
    st.setup_s = gv_wtime() - t0;
    cur        = &b;
    for (int level = 0;; level++) {
        gv_vx_step_t  t;
        gv_am_stats_t a0, a1;
        double        ts = gv_wtime();
        int64_t       cnt[3] = {nfront, 0, 0}; /* n_f, m_f, m_u */

        for (int64_t k = 0; k < nfront; k++) {
            int64_t i = front[k];

            cnt[1] += g->out_off[i + 1] - g->out_off[i];
        }
        m_u -= cnt[1];
        cnt[2] = m_u;
        rc     = gv_allreduce(cnt, 3, GV_INT64, GV_SUM);
        if ((rc != GV_OK) || (cnt[0] == 0))
            break;
        /* Beamer's switch. */
        if (!bu && (cnt[1] > cnt[2] / ALPHA))
            bu = 1;
        else if (bu && (cnt[0] < g->nverts / BETA) && (cnt[0] < prev_nf))
            bu = 0;
        prev_nf = cnt[0];
        memset(&t, 0, sizeof(t));
        t.active    = nfront;
        t.bottom_up = bu;
        gv_am_stats(&a0);
        b.edges = 0;
        if (bu) {
            /* Every rank learns the whole frontier, then each unvisited
             * local vertex looks for a parent in it. */
            memset(bm, 0, (size_t)nw * sizeof(uint64_t));
            for (int64_t k = 0; k < nfront; k++)
                bit_set(bm, gv_graph_global(g, front[k]));
            rc = gv__vx_allreduce_bits(bm, (size_t)nw);
            if (rc != GV_OK)
                break;
            for (int64_t i = 0; i < nl; i++) {
                if (parent[i] != -1)
                    continue;
                for (int64_t e = g->out_off[i]; e < g->out_off[i + 1]; e++) {
                    int64_t u = g->out_dst[e];

                    b.edges++;
                    if (bit_get(bm, u)) {
                        parent[i]           = u;
                        b.next[b.nnext++] = i;
                        break;
                    }
                }
            }
        } else {
            /* Top-down: local discoveries at once, remote ones once per
             * target (the first parent proposed wins) in batches. */
            for (int64_t k = 0; (k < nfront) && (rc == GV_OK); k++) {
                int64_t i = front[k], uid = gv_graph_global(g, i);

                for (int64_t e = g->out_off[i]; e < g->out_off[i + 1]; e++) {
                    uint32_t s = ghp->out_slot[e];

                    b.edges++;
                    if (s < nl) {
                        if (parent[s] == -1) {
                            parent[s]           = uid;
                            b.next[b.nnext++] = s;
                        }
                    } else if (!gsent[s - nl]) {
                        int64_t  gk = s - nl;
                        int      r  = gv_graph_owner(g, g->out_dst[e]);
                        uint8_t *p  = buf + (size_t)r * BATCH + blen[r];
                        uint32_t li = (uint32_t)ghp->gidx[gk];

                        gsent[gk] = 1;
                        memcpy(p, &li, 4);
                        memcpy(p + 4, &uid, 8);
                        blen[r] += REC;
                        t.remote++;
                        if (blen[r] == BATCH) {
                            rc      = gv_am_send(r, am_disc,
                                                 buf + (size_t)r * BATCH,
                                                 BATCH);
                            blen[r] = 0;
                            if (rc != GV_OK)
                                break;
                        }
                    }
                }
            }
            for (int r = 0; (r < g->nranks) && (rc == GV_OK); r++) {
                if (blen[r] > 0)
                    rc = gv_am_send(r, am_disc, buf + (size_t)r * BATCH,
                                    blen[r]);
                blen[r] = 0;
            }
            gv_barrier(); /* quiescence: every discovery handled */
        }
        if (rc != GV_OK) {
            gv__vx_err("bfs500: sending discoveries failed: %s",
                       gv_status_str(rc));
            break;
        }
        gv_am_stats(&a1);
        t.edges   = b.edges;
        t.msgs    = a1.msgs_sent - a0.msgs_sent;
        t.bytes   = a1.bytes_sent - a0.bytes_sent;
        t.seconds = gv_wtime() - ts;
        rc        = gv__vx_add_step(&st, &t, opts->verbose);
        if (rc != GV_OK)
            break;
        {
            int64_t *tmp = front;

            front   = b.next;
            b.next  = tmp;
            nfront  = b.nnext;
            /* From here on discoveries of the next level may arrive. */
            b.nnext = 0;
        }
    }
    cur = NULL;
out:
    gv__vx_ghosts_free(&own);
    free(front);
    free(b.next);
    free(bm);
    free(gsent);
    free(buf);
    free(blen);
    st.seconds = gv_wtime() - t0;
    if (stats_p != NULL)
        *stats_p = st;
    else
        gv_vx_stats_free(&st);
    return rc;
}

/* ---- the Graph500 validation ------------------------------------------- */

static int has_nbr(const gv_graph_t *g, int64_t i, int64_t v)
{
    int64_t lo = g->out_off[i], hi = g->out_off[i + 1];

    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;

        if (g->out_dst[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < g->out_off[i + 1]) && (g->out_dst[lo] == v);
}

gv_status_t gv_bfs500_validate(const gv_graph_t *g, int64_t root,
                               const int64_t *parent, int64_t *edges_p,
                               int64_t *depth_p)
{
    int64_t     n = g->nverts, bad = 0, edges = 0;
    int64_t    *par, *lvl;
    char        why[200] = "";
    gv_status_t rc;

    if ((root < 0) || (root >= n)) {
        gv__vx_err0("bfs500 validation: root %lld is not a vertex",
                   (long long)root);
        return GV_ERR_INVALID;
    }
    par = calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t));
    lvl = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    bad = (par == NULL) || (lvl == NULL);
    rc  = gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    if ((rc != GV_OK) || bad) {
        free(par);
        free(lvl);
        return (rc != GV_OK) ? rc : GV_ERR_NO_MEMORY;
    }
    /* Every rank gets the whole parent array (owner's value + 1, summed). */
    for (int64_t i = 0; i < g->nlocal; i++)
        par[gv_graph_global(g, i)] = parent[i] + 1;
    rc = gv__vx_allreduce_i64(par, (size_t)n, GV_SUM);
    if (rc != GV_OK)
        goto out;
    for (int64_t v = 0; v < n; v++) {
        par[v] -= 1;
        lvl[v] = -2; /* not computed */
    }
    if (par[root] != root) {
        snprintf(why, sizeof(why), "the root %lld has parent %lld, not "
                 "itself", (long long)root, (long long)par[root]);
        bad = 1;
    }
    /* Check 1: levels by walking each chain to the root or a vertex of
     * known level; a chain longer than n is a cycle. */
    lvl[root] = 0;
    for (int64_t v = 0; (v < n) && !bad; v++) {
        int64_t u = v, len = 0;

        if (par[v] == -1) {
            lvl[v] = -1;
            continue;
        }
        if ((par[v] < -1) || (par[v] >= n)) {
            snprintf(why, sizeof(why), "vertex %lld has parent %lld, not a "
                     "vertex", (long long)v, (long long)par[v]);
            bad = 1;
            break;
        }
        while ((lvl[u] == -2) && (len <= n)) {
            u = par[u];
            len++;
            if ((u < 0) || (u >= n) || (par[u] == -1)) {
                snprintf(why, sizeof(why), "check 1: the parent chain of "
                         "vertex %lld ends at %lld, not at the root",
                         (long long)v, (long long)u);
                bad = 1;
                break;
            }
        }
        if (bad)
            break;
        if (len > n) {
            snprintf(why, sizeof(why), "check 1: the parent chain of vertex "
                     "%lld has a cycle", (long long)v);
            bad = 1;
            break;
        }
        /* Fill the chain's levels from u's down to v's. */
        {
            int64_t d = lvl[u] + len, w = v;

            while (w != u) {
                lvl[w] = d--;
                w      = par[w];
            }
        }
    }
    /* Checks 2-5 on this rank's vertices and edges. */
    for (int64_t i = 0; (i < g->nlocal) && !bad; i++) {
        int64_t v = gv_graph_global(g, i), p = par[v];

        if (lvl[v] >= 0) {
            edges += g->out_off[i + 1] - g->out_off[i];
            if ((v != root) && (lvl[v] != lvl[p] + 1)) {
                snprintf(why, sizeof(why), "check 2: tree edge %lld-%lld "
                         "joins levels %lld and %lld", (long long)v,
                         (long long)p, (long long)lvl[v], (long long)lvl[p]);
                bad = 2;
                break;
            }
            if ((v != root) && !has_nbr(g, i, p)) {
                snprintf(why, sizeof(why), "check 5: vertex %lld and its "
                         "parent %lld are not joined by an edge",
                         (long long)v, (long long)p);
                bad = 5;
                break;
            }
        }
        for (int64_t e = g->out_off[i]; e < g->out_off[i + 1]; e++) {
            int64_t u = g->out_dst[e], a = lvl[v], c = lvl[u];

            if (u == v)
                continue;
            if ((a < 0) != (c < 0)) {
                snprintf(why, sizeof(why), "check 4: edge %lld-%lld joins "
                         "a vertex of the tree and one outside it",
                         (long long)v, (long long)u);
                bad = 4;
                break;
            }
            if ((a >= 0) && ((a - c > 1) || (c - a > 1))) {
                snprintf(why, sizeof(why), "check 3: edge %lld-%lld joins "
                         "levels %lld and %lld", (long long)v, (long long)u,
                         (long long)a, (long long)c);
                bad = 3;
                break;
            }
        }
    }
    /* Check 1 and the root are decided alike on every rank: one says so. */
    if ((bad > 1) || ((bad == 1) && (g->rank == 0)))
        gv__vx_err("bfs500 validation from root %lld failed: %s",
                   (long long)root, why);
    {
        int64_t r[2] = {bad != 0, edges};

        rc = gv_allreduce(r, 2, GV_INT64, GV_SUM);
        if ((rc == GV_OK) && (r[0] != 0))
            rc = GV_ERR_INVALID;
        if ((rc == GV_OK) && (edges_p != NULL))
            *edges_p = r[1] / 2; /* each undirected edge twice */
        if ((rc == GV_OK) && (depth_p != NULL)) {
            *depth_p = -1;
            for (int64_t v = 0; v < n; v++)
                if (lvl[v] > *depth_p)
                    *depth_p = lvl[v];
        }
    }
out:
    free(par);
    free(lvl);
    return rc;
}
