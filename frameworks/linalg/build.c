/* Tiling a distributed edge list: every edge goes to the owner of its tile
 * in bulk exchanges; each owner sorts its tiles and compresses them twice
 * (DCSC and DCSR, no empty columns or rows), then the leaders learn the
 * degrees of their vertices. SPDX-License-Identifier: BSD-3-Clause */
#include "linalg/la.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An edge on its way to its tile: local row and column, the tile's index
 * in its owner's list, the weight. */
typedef struct rec {
    uint32_t r, c, t;
    float    w;
} rec_t;

/* Edges sent per rank per exchange round. */
#define ROUND_EDGES (1 << 21)

void gv__la_err(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "[%04d] ERROR linalg: ", gv_rank());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

gv_status_t gv__la_agree(gv_status_t st)
{
    int64_t v = -(int64_t)st; /* statuses are 0 or negative */

    if (gv_allreduce(&v, 1, GV_INT64, GV_MAX) != GV_OK)
        return GV_ERR_STATE;
    return (gv_status_t)-v;
}

static void tile_free(gv_la_tile_t *t)
{
    free(t->jc);
    free(t->cp);
    free(t->ir);
    free(t->cw);
    free(t->ir2);
    free(t->rp);
    free(t->jc2);
    free(t->rw);
}

void gv_la_free(gv_la_matrix_t *A)
{
    for (int k = 0; k < A->ntiles; k++)
        tile_free(&A->tiles[k]);
    free(A->tiles);
    free(A->out_deg);
    free(A->in_deg);
    if (A->row_team != NULL)
        gv_team_free(A->row_team);
    if (A->col_team != NULL)
        gv_team_free(A->col_team);
    gv_la_layout_free(&A->L);
    memset(A, 0, sizeof(*A));
}

/* Compress the @a m records of one tile (sorted here) into @a t. */
static gv_status_t tile_compress(gv_la_tile_t *t, rec_t *e, rec_t *tmp,
                                 int64_t m, int64_t hr, int64_t wc,
                                 int weighted, int dedup)
{
    int64_t *cnt = calloc((size_t)((hr > wc ? hr : wc) + 1), sizeof(int64_t));
    int64_t  k, n;

    if (cnt == NULL)
        return GV_ERR_NO_MEMORY;
    /* stable counting sorts: by row, then by column: (c, r) order */
    for (k = 0; k < m; k++)
        cnt[e[k].r + 1]++;
    for (k = 0; k < hr; k++)
        cnt[k + 1] += cnt[k];
    for (k = 0; k < m; k++)
        tmp[cnt[e[k].r]++] = e[k];
    memset(cnt, 0, (size_t)(wc + 1) * sizeof(int64_t));
    for (k = 0; k < m; k++)
        cnt[tmp[k].c + 1]++;
    for (k = 0; k < wc; k++)
        cnt[k + 1] += cnt[k];
    for (k = 0; k < m; k++)
        e[cnt[tmp[k].c]++] = tmp[k];
    /* collapse copies, keeping the smallest weight */
    n = 0;
    for (k = 0; k < m; k++) {
        if (dedup && (n > 0) && (e[n - 1].r == e[k].r) &&
            (e[n - 1].c == e[k].c)) {
            if (e[k].w < e[n - 1].w)
                e[n - 1].w = e[k].w;
            continue;
        }
        e[n++] = e[k];
    }
    t->nnz = n;
    t->nzc = 0;
    for (k = 0; k < n; k++)
        t->nzc += (k == 0) || (e[k].c != e[k - 1].c);
    t->jc = malloc((size_t)(t->nzc + 1) * sizeof(uint32_t));
    t->cp = malloc((size_t)(t->nzc + 1) * sizeof(int64_t));
    t->ir = malloc((size_t)(n + 1) * sizeof(uint32_t));
    t->cw = weighted ? malloc((size_t)(n + 1) * sizeof(float)) : NULL;
    if (!t->jc || !t->cp || !t->ir || (weighted && !t->cw)) {
        free(cnt);
        return GV_ERR_NO_MEMORY;
    }
    {
        int64_t q = 0;

        for (k = 0; k < n; k++) {
            if ((k == 0) || (e[k].c != e[k - 1].c)) {
                t->jc[q] = e[k].c;
                t->cp[q] = k;
                q++;
            }
            t->ir[k] = e[k].r;
            if (weighted)
                t->cw[k] = e[k].w;
        }
        t->cp[q] = n;
    }
    /* DCSR: a stable counting sort by row of the (c, r) order */
    memset(cnt, 0, (size_t)(hr + 1) * sizeof(int64_t));
    for (k = 0; k < n; k++)
        cnt[e[k].r + 1]++;
    t->nzr = 0;
    for (k = 0; k < hr; k++)
        t->nzr += cnt[k + 1] > 0;
    for (k = 0; k < hr; k++)
        cnt[k + 1] += cnt[k];
    t->ir2 = malloc((size_t)(t->nzr + 1) * sizeof(uint32_t));
    t->rp  = malloc((size_t)(t->nzr + 1) * sizeof(int64_t));
    t->jc2 = malloc((size_t)(n + 1) * sizeof(uint32_t));
    t->rw  = weighted ? malloc((size_t)(n + 1) * sizeof(float)) : NULL;
    if (!t->ir2 || !t->rp || !t->jc2 || (weighted && !t->rw)) {
        free(cnt);
        return GV_ERR_NO_MEMORY;
    }
    {
        int64_t q = 0;

        for (k = 0; k < hr; k++) {
            if (cnt[k + 1] > cnt[k]) {
                t->ir2[q] = (uint32_t)k;
                t->rp[q]  = cnt[k];
                q++;
            }
        }
        t->rp[q] = n;
    }
    for (k = 0; k < n; k++) {
        int64_t p = cnt[e[k].r]++;

        t->jc2[p] = e[k].c;
        if (weighted)
            t->rw[p] = e[k].w;
    }
    free(cnt);
    return GV_OK;
}

/* Collective: the exchange of edges to their tiles' owners, in rounds of
 * at most ROUND_EDGES edges per rank. */
static gv_status_t exchange(const gv_edgelist_t *el, gv_la_matrix_t *A,
                            const int *tidx, int sym, int noself,
                            rec_t **recs_p, int64_t *nrecs_p)
{
    const gv_la_layout_t *L = &A->L;
    int      P      = L->nranks;
    size_t  *scnt   = calloc((size_t)P, sizeof(size_t));
    size_t  *rcnt   = calloc((size_t)P, sizeof(size_t));
    size_t  *soff   = calloc((size_t)P, sizeof(size_t));
    size_t  *roff   = calloc((size_t)P, sizeof(size_t));
    size_t  *fill   = calloc((size_t)P, sizeof(size_t));
    rec_t   *sbuf   = malloc((size_t)2 * ROUND_EDGES * sizeof(rec_t));
    rec_t   *recs   = malloc(sizeof(rec_t));
    int64_t  nrecs  = 0, cap = 0, rounds;
    gv_status_t rc  = GV_OK;

    if (!scnt || !rcnt || !soff || !roff || !fill || !sbuf || !recs)
        rc = GV_ERR_NO_MEMORY;
    rounds = (el->n + ROUND_EDGES - 1) / ROUND_EDGES;
    if (gv_allreduce(&rounds, 1, GV_INT64, GV_MAX) != GV_OK)
        rc = GV_ERR_STATE;
    rc = gv__la_agree(rc);
    for (int64_t round = 0; (rc == GV_OK) && (round < rounds); round++) {
        int64_t b = round * ROUND_EDGES, e = b + ROUND_EDGES, tot = 0;

        if (b > el->n)
            b = el->n;
        if (e > el->n)
            e = el->n;
        memset(scnt, 0, (size_t)P * sizeof(size_t));
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                size_t o = 0;

                for (int r = 0; r < P; r++) {
                    soff[r] = fill[r] = o;
                    o += scnt[r];
                }
            }
            for (int64_t k = b; k < e; k++) {
                int64_t u = el->src[k], v = el->dst[k];
                float   w = el->weighted ? el->w[k] : 1.0f;

                for (int d = 0; d < 2; d++) {
                    int64_t row = d ? u : v, col = d ? v : u;
                    int     si, sj, t;

                    if (d && (!sym || (u == v)))
                        break;
                    if (noself && (u == v))
                        break;
                    si = gv_la_seg_of_vertex(L, row);
                    sj = gv_la_seg_of_vertex(L, col);
                    t  = gv_la_tile_owner(L, si, sj);
                    if (pass == 0) {
                        scnt[t]++;
                    } else {
                        rec_t *x = &sbuf[fill[t]++];

                        x->r = (uint32_t)(row - gv_la_seg_lo(L, si));
                        x->c = (uint32_t)(col - gv_la_seg_lo(L, sj));
                        x->t = (uint32_t)tidx[(int64_t)si * P + sj];
                        x->w = w;
                    }
                }
            }
        }
        for (int r = 0; r < P; r++)
            scnt[r] *= sizeof(rec_t), soff[r] *= sizeof(rec_t);
        rc = gv_team_alltoall(GV_TEAM_WORLD, scnt, rcnt, sizeof(size_t));
        if (rc != GV_OK)
            break;
        for (int r = 0; r < P; r++) {
            roff[r] = (size_t)nrecs * sizeof(rec_t) + (size_t)tot;
            tot += (int64_t)rcnt[r];
        }
        if (nrecs + tot / (int64_t)sizeof(rec_t) > cap) {
            int64_t nc = (cap * 2 > nrecs + tot / (int64_t)sizeof(rec_t))
                             ? cap * 2 : nrecs + tot / (int64_t)sizeof(rec_t);
            rec_t *x = realloc(recs, (size_t)(nc + 1) * sizeof(rec_t));

            if (x == NULL) {
                rc = GV_ERR_NO_MEMORY;
                gv__la_err("build: out of memory for %lld edges",
                           (long long)nc);
            } else {
                recs = x;
                cap  = nc;
            }
        }
        rc = gv__la_agree(rc); /* every rank leaves together */
        if (rc != GV_OK)
            break;
        rc = gv_team_alltoallv(GV_TEAM_WORLD, sbuf, scnt, soff, recs, rcnt,
                               roff);
        nrecs += tot / (int64_t)sizeof(rec_t);
    }
    free(scnt);
    free(rcnt);
    free(soff);
    free(roff);
    free(fill);
    free(sbuf);
    *recs_p  = recs;
    *nrecs_p = nrecs;
    return rc;
}

/* Collective: each leader's degrees, by reducing the tiles' counts over
 * the column team (out) or the row team (in). */
static gv_status_t degrees(gv_la_matrix_t *A, int out)
{
    const gv_la_layout_t *L = &A->L;
    gv_team_t *team = out ? A->col_team : A->row_team;
    int64_t   *deg  = calloc((size_t)(A->nloc + 1), sizeof(int64_t));
    int64_t    wmax = (L->n + L->nranks - 1) / L->nranks;
    int64_t   *cnt  = malloc((size_t)(wmax + 2) * sizeof(int64_t));
    gv_status_t rc  = (deg && cnt) ? GV_OK : GV_ERR_NO_MEMORY;

    if (out)
        A->out_deg = deg;
    else
        A->in_deg = deg;
    rc = gv__la_agree(rc);
    /* The groups this rank has tiles in, ascending: the same order on every
     * member of the team. */
    for (int g = 0; (rc == GV_OK) && (g < L->nranks); g++) {
        int64_t wd = gv__la_width(L, g);
        int     mine = 0, root;

        for (int k = 0; k < A->ntiles; k++)
            mine |= (out ? A->tiles[k].j : A->tiles[k].i) == g;
        if (!mine)
            continue;
        memset(cnt, 0, (size_t)(wd + 1) * sizeof(int64_t));
        for (int k = 0; k < A->ntiles; k++) {
            const gv_la_tile_t *t = &A->tiles[k];

            if ((out ? t->j : t->i) != g)
                continue;
            if (out)
                for (int64_t q = 0; q < t->nzc; q++)
                    cnt[t->jc[q]] += t->cp[q + 1] - t->cp[q];
            else
                for (int64_t q = 0; q < t->nzr; q++)
                    cnt[t->ir2[q]] += t->rp[q + 1] - t->rp[q];
        }
        root = gv_team_rank_of(team, L->leader[g]);
        rc   = gv_team_reduce(team, root, cnt,
                              (g == A->seg) ? deg : NULL, (size_t)wd,
                              GV_INT64, GV_SUM);
    }
    free(cnt);
    return rc;
}

gv_status_t gv_la_build(gv_edgelist_t *el, unsigned flags,
                        gv_la_matrix_t *A_p)
{
    gv_la_matrix_t A;
    const unsigned known = GV_GRAPH_SYMMETRIZE | GV_GRAPH_NO_SELF_LOOPS |
                           GV_GRAPH_DEDUP | GV_GRAPH_UNWEIGHTED;
    int      P = gv_nranks(), *node_of = NULL, *tidx = NULL;
    rec_t   *recs = NULL, *tmp = NULL;
    int64_t  nrecs = 0, *tstart = NULL;
    gv_status_t rc;

    memset(&A, 0, sizeof(A));
    if (flags & ~known) {
        gv__la_err("build: flags 0x%x not supported (accepted: "
                   "GV_GRAPH_SYMMETRIZE, NO_SELF_LOOPS, DEDUP, UNWEIGHTED)",
                   flags & ~known);
        return GV_ERR_INVALID;
    }
    rc = gv_edgelist_sync(el);
    if (rc != GV_OK)
        return rc;
    A.n        = el->nverts;
    A.flags    = flags;
    A.weighted = el->weighted && !(flags & GV_GRAPH_UNWEIGHTED);
    A.rank     = gv_rank();
    node_of    = malloc((size_t)P * sizeof(int));
    if (node_of == NULL)
        rc = GV_ERR_NO_MEMORY;
    else {
        for (int r = 0; r < P; r++)
            node_of[r] = gv_node_of(r);
        rc = gv_la_layout_init(P, node_of, A.n, &A.L);
    }
    free(node_of);
    rc = gv__la_agree(rc);
    if (rc != GV_OK)
        return rc;
    A.seg  = A.L.seg_of[A.rank];
    A.lo   = gv_la_seg_lo(&A.L, A.seg);
    A.nloc = gv__la_width(&A.L, A.seg);
    {
        int vid = A.L.vid_of[A.rank];

        rc = gv_team_split(GV_TEAM_WORLD, vid / A.L.pr, vid, &A.row_team);
        if (rc == GV_OK)
            rc = gv_team_split(GV_TEAM_WORLD, vid % A.L.pr, vid,
                               &A.col_team);
    }
    /* this rank's tiles, by row group then column group */
    tidx    = malloc((size_t)P * (size_t)P * sizeof(int));
    A.tiles = calloc((size_t)P, sizeof(gv_la_tile_t));
    if ((rc == GV_OK) && (!tidx || !A.tiles))
        rc = GV_ERR_NO_MEMORY;
    rc = gv__la_agree(rc);
    if (rc != GV_OK)
        goto out;
    {
        int *cnt = calloc((size_t)P, sizeof(int));

        if (cnt == NULL) {
            rc = GV_ERR_NO_MEMORY;
        } else {
            for (int i = 0; i < P; i++)
                for (int j = 0; j < P; j++) {
                    int o = gv_la_tile_owner(&A.L, i, j);

                    tidx[(int64_t)i * P + j] = cnt[o]++;
                    if (o == A.rank) {
                        A.tiles[A.ntiles].i = i;
                        A.tiles[A.ntiles].j = j;
                        A.ntiles++;
                    }
                }
            free(cnt);
        }
    }
    rc = gv__la_agree(rc);
    if (rc == GV_OK)
        rc = exchange(el, &A, tidx, (flags & GV_GRAPH_SYMMETRIZE) != 0,
                      (flags & GV_GRAPH_NO_SELF_LOOPS) != 0, &recs, &nrecs);
    rc = gv__la_agree(rc);
    if (rc != GV_OK)
        goto out;
    /* group the records by tile, then compress each tile */
    tstart = calloc((size_t)A.ntiles + 1, sizeof(int64_t));
    tmp    = malloc((size_t)(nrecs + 1) * sizeof(rec_t));
    if (!tstart || !tmp) {
        rc = GV_ERR_NO_MEMORY;
    } else {
        for (int64_t k = 0; k < nrecs; k++)
            tstart[recs[k].t + 1]++;
        for (int t = 0; t < A.ntiles; t++)
            tstart[t + 1] += tstart[t];
        for (int64_t k = 0; k < nrecs; k++)
            tmp[tstart[recs[k].t]++] = recs[k];
        for (int t = A.ntiles; t > 0; t--)
            tstart[t] = tstart[t - 1];
        tstart[0] = 0;
        for (int t = 0; (rc == GV_OK) && (t < A.ntiles); t++) {
            gv_la_tile_t *tl = &A.tiles[t];

            rc = tile_compress(tl, tmp + tstart[t], recs + tstart[t],
                               tstart[t + 1] - tstart[t],
                               gv__la_width(&A.L, tl->i),
                               gv__la_width(&A.L, tl->j), A.weighted,
                               (flags & GV_GRAPH_DEDUP) != 0);
            A.nnz += tl->nnz;
        }
    }
    free(recs);
    recs = NULL;
    free(tmp);
    tmp = NULL;
    rc = gv__la_agree(rc);
    if (rc == GV_OK)
        rc = gv_allreduce(&A.nnz, 1, GV_INT64, GV_SUM);
    if (rc == GV_OK)
        rc = degrees(&A, 1);
    if (rc == GV_OK)
        rc = degrees(&A, 0);
    rc = gv__la_agree(rc);
out:
    free(tidx);
    free(tstart);
    free(recs);
    free(tmp);
    if (rc != GV_OK) {
        gv_la_free(&A);
        return rc;
    }
    *A_p = A;
    return GV_OK;
}
