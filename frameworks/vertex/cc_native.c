/* Connected components written natively on the graph: union-find over the
 * edges whose ends share a rank (plain memory), then rounds in which the
 * local components exchange their smallest labels over the edges that
 * cross ranks (combined per remote vertex, sent in batches), a component
 * taking a smaller label as a whole. The labels are those of label
 * propagation (the smallest id of each component) in far fewer rounds.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

#include <stdlib.h>
#include <string.h>

typedef struct ccn {
    int64_t *up;      /* [nl] union-find parent (local index) */
    int64_t *lab;     /* [nl] at a root: the component's smallest id */
    uint8_t *chg;     /* [nl] at a root: label fell this round */
    int64_t  nl;
} ccn_t;

static ccn_t     *cur;
static gv_am_id_t am_lab;
static int        am_ready;

#define REC 12 /* u32 local index at the owner, i64 label */

static inline int64_t find(int64_t *up, int64_t x)
{
    while (up[x] != x) {
        up[x] = up[up[x]]; /* path halving */
        x     = up[x];
    }
    return x;
}

static void am_lab_cb(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *p = payload;
    ccn_t         *c = cur;

    (void)arg;
    if ((c == NULL) || (len % REC) != 0) {
        gv__vx_err("cc: label batch of %zu bytes from rank %d %s", len, src,
                   (c == NULL) ? "outside a run" : "is not whole records");
        return;
    }
    for (size_t k = 0; k < len; k += REC) {
        uint32_t i;
        int64_t  l, r;

        memcpy(&i, p + k, 4);
        memcpy(&l, p + k + 4, 8);
        if (i >= (uint64_t)c->nl) {
            gv__vx_err("cc: label for local vertex %u from rank %d: only "
                       "%lld", i, src, (long long)c->nl);
            continue;
        }
        r = find(c->up, i);
        if (l < c->lab[r]) {
            c->lab[r] = l;
            c->chg[r] = 1;
        }
    }
}

gv_status_t gv_vx_cc_native(const gv_graph_t *g, int64_t *label,
                            const gv_vx_opts_t *opts, gv_vx_stats_t *stats_p)
{
    static const gv_vx_opts_t defaults;
    gv__vx_ghosts_t        own;
    const gv__vx_ghosts_t *gh = NULL;
    gv_vx_stats_t          st;
    ccn_t                  c;
    int64_t                nl = g->nlocal, *gmin = NULL, *gsent = NULL;
    int64_t               *border = NULL, nborder = 0;
    int64_t               *xoff = NULL, nx = 0; /* cross edges of border */
    uint32_t              *xslot = NULL;        /* vertices, as ghosts   */
    uint8_t               *chg_now = NULL, *buf = NULL;
    const size_t           BATCH = REC * 5000;
    gv_status_t            rc;
    double                 t0 = gv_wtime();

    if (opts == NULL)
        opts = &defaults;
    memset(&st, 0, sizeof(st));
    memset(&c, 0, sizeof(c));
    if (!am_ready) {
        rc = gv_am_register(am_lab_cb, NULL, &am_lab);
        if (rc != GV_OK) {
            gv__vx_err("cc: cannot register a handler: %s",
                       gv_status_str(rc));
            return rc;
        }
        am_ready = 1;
        gv_barrier();
    }
    rc = gv__vx_ghosts_get(g, 1, 0, &own, &gh);
    if (rc == GV_OK) {
        size_t n = (size_t)(nl > 0 ? nl : 1), m = (size_t)(gh->ng ? gh->ng : 1);

        c.nl    = nl;
        c.up    = malloc(n * sizeof(int64_t));
        c.lab   = malloc(n * sizeof(int64_t));
        c.chg   = calloc(n, 1);
        chg_now = calloc(n, 1);
        border  = malloc(n * sizeof(int64_t));
        xoff    = malloc((n + 1) * sizeof(int64_t));
        xslot   = malloc((size_t)(g->nlocal_out > 0 ? g->nlocal_out : 1) *
                         sizeof(uint32_t));
        gmin    = malloc(m * sizeof(int64_t));
        gsent   = malloc(m * sizeof(int64_t));
        buf     = malloc(BATCH);
        if (!c.up || !c.lab || !c.chg || !chg_now || !border || !gmin ||
            !gsent || !buf || !xoff || !xslot)
            rc = GV_ERR_NO_MEMORY;
    }
    if (rc == GV_OK) {
        for (int64_t k = 0; k < gh->ng; k++)
            gmin[k] = gsent[k] = INT64_MAX;
        /* Local components: union by smallest id. */
        for (int64_t i = 0; i < nl; i++) {
            c.up[i]  = i;
            c.lab[i] = gv_graph_global(g, i);
        }
        for (int64_t i = 0; i < nl; i++) {
            int cross = 0;

            for (int64_t e = g->out_off[i]; e < g->out_off[i + 1]; e++) {
                uint32_t s = gh->out_slot[e];
                int64_t  a, b;

                if (s >= nl) {
                    if (!cross)
                        xoff[nborder] = nx;
                    cross       = 1;
                    xslot[nx++] = s - (uint32_t)nl;
                    continue;
                }
                a = find(c.up, i);
                b = find(c.up, s);
                if (a == b)
                    continue;
                if (c.lab[a] < c.lab[b]) {
                    c.up[b] = a;
                } else {
                    c.up[a] = b;
                }
            }
            if (cross)
                border[nborder++] = i;
        }
        xoff[nborder] = nx;
        for (int64_t i = 0; i < nl; i++) {
            int64_t r = find(c.up, i);

            chg_now[r] = 1; /* every component speaks in the first round */
        }
        cur = &c; /* labels may arrive from the next collective on */
    }
    {
        int64_t     bad = (rc != GV_OK);
        gv_status_t s2  = gv_allreduce(&bad, 1, GV_INT64, GV_MAX);

        if ((rc == GV_OK) && ((s2 != GV_OK) || bad))
            rc = (s2 != GV_OK) ? s2 : GV_ERR_NO_MEMORY;
    }
    if (rc != GV_OK)
        goto out;
    st.setup_s = gv_wtime() - t0;
    for (int round = 0;; round++) {
        gv_vx_step_t  t;
        gv_am_stats_t a0, a1;
        double        ts = gv_wtime();
        int64_t       nchg = 0;

        memset(&t, 0, sizeof(t));
        gv_am_stats(&a0);
        /* Border vertices of components whose label fell tell their
         * remote neighbours, combined per remote vertex. */
        for (int64_t k = 0; k < nborder; k++) {
            int64_t i = border[k], r = find(c.up, i), l = c.lab[r];

            if (!chg_now[r])
                continue;
            t.active++;
            t.edges += xoff[k + 1] - xoff[k];
            for (int64_t e = xoff[k]; e < xoff[k + 1]; e++)
                if (l < gmin[xslot[e]])
                    gmin[xslot[e]] = l;
        }
        for (int d = 1; (d < g->nranks) && (rc == GV_OK); d++) {
            int    r = (g->rank + d) % g->nranks;
            size_t n = 0;

            for (int64_t k = gh->gstart[r]; k < gh->gstart[r + 1]; k++) {
                uint32_t li = (uint32_t)gh->gidx[k];

                if (gmin[k] >= gsent[k])
                    continue; /* nothing smaller than what it got */
                gsent[k] = gmin[k];
                memcpy(buf + n, &li, 4);
                memcpy(buf + n + 4, &gmin[k], 8);
                n += REC;
                t.remote++;
                if (n == BATCH) {
                    rc = gv_am_send(r, am_lab, buf, n);
                    n  = 0;
                    if (rc != GV_OK)
                        break;
                }
            }
            if ((rc == GV_OK) && (n > 0))
                rc = gv_am_send(r, am_lab, buf, n);
        }
        gv_barrier(); /* quiescence: every label handled */
        if (rc != GV_OK) {
            gv__vx_err("cc: sending labels failed: %s", gv_status_str(rc));
            break;
        }
        /* The components whose label fell speak next round; marks made
         * from here on (a faster rank's next round) go to the fresh set. */
        {
            uint8_t *tmp = chg_now;

            chg_now = c.chg;
            c.chg   = tmp;
            memset(c.chg, 0, (size_t)nl);
        }
        for (int64_t i = 0; i < nl; i++)
            nchg += chg_now[i];
        gv_am_stats(&a1);
        t.scattered = nchg;
        t.msgs      = a1.msgs_sent - a0.msgs_sent;
        t.bytes     = a1.bytes_sent - a0.bytes_sent;
        t.seconds   = gv_wtime() - ts;
        rc          = gv__vx_add_step(&st, &t, opts->verbose);
        if (rc == GV_OK)
            rc = gv_allreduce(&nchg, 1, GV_INT64, GV_SUM);
        if ((rc != GV_OK) || (nchg == 0))
            break;
    }
    for (int64_t i = 0; (rc == GV_OK) && (i < nl); i++)
        label[i] = c.lab[find(c.up, i)];
out:
    cur = NULL;
    gv__vx_ghosts_free(&own);
    free(c.up);
    free(c.lab);
    free(c.chg);
    free(chg_now);
    free(border);
    free(xoff);
    free(xslot);
    free(gmin);
    free(gsent);
    free(buf);
    st.seconds = gv_wtime() - t0;
    if (stats_p != NULL)
        *stats_p = st;
    else
        gv_vx_stats_free(&st);
    return rc;
}
