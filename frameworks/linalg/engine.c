/* The matrix computing model (Broadcast, Combine, Apply) over the tiles of
 * a rank, with push (DCSC, sparse input) and pull (DCSR, dense input)
 * products over the semirings. SPDX-License-Identifier: BSD-3-Clause */
#include "linalg/la.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Input segments travel sparse below 60% active (the paper's threshold).
 * A tile pushes from a sparse input when the input's edges (the out-degrees
 * of its active vertices) times PUSH_RATIO are fewer than the column
 * group's edges, else pulls; with a mask (BFS) pulls skip the visited rows
 * and stop at the first active column, so they win earlier (Beamer's
 * alpha). */
#define SPARSE_NUM 6
#define SPARSE_DEN 10
#define PUSH_RATIO      4
#define PUSH_RATIO_MASK 14

/* Progress the runtime every so many rows or columns inside a product, so
 * that broadcasts and reductions in flight move while a rank computes. */
#define PROGRESS_EVERY 16384

typedef enum { X_SPARSE, X_DENSE, X_FULL } xmode_t;

/* One input segment x_j as this rank sees it. The wire buffer is what the
 * leader broadcasts: sparse: idx[nnz] (padded to 8 bytes) then vals[nnz];
 * dense: vals[w] then bits; full: vals[w] (no values for structural
 * semirings). */
typedef struct colseg {
    int            j;
    int64_t        w, nnz;
    double         edges, colnnz; /* the input's edges, the group's    */
    xmode_t        mode;
    unsigned char *wire;
    size_t         len;       /* bytes of this iteration's wire           */
    gv_coll_req_t *req;       /* its broadcast, while in flight           */
    /* views into the wire */
    const uint32_t     *idx;
    const gv_la_word_t *vals; /* dense/full: [w]; sparse: [nnz]           */
    const uint64_t     *bits; /* dense only                               */
    /* pulls from a sparse input: it is spread into these */
    gv_la_word_t *dvals;
    uint64_t     *dbits;
} colseg_t;

/* One row group's output as this rank computes it. */
typedef struct rowseg {
    int            i;
    int64_t        w;
    gv_la_word_t  *y;
    gv_coll_req_t *req;
    int            first, ntiles; /* this rank's tiles of the row group  */
} rowseg_t;

typedef struct ctx {
    const gv_la_matrix_t  *A;
    const gv_la_program_t *prog;
    int          sr, structural;
    gv_la_word_t ident;
    int          ncol, nrow;
    colseg_t    *col;
    rowseg_t    *row;
    int         *tile_col;    /* [ntiles] index into col[]                */
    gv_la_segment_t seg;      /* the led segment                          */
    gv_la_word_t *y_own;      /* the led segment's output                 */
    int64_t     *nnz_all;     /* [P] active count of each segment         */
    double      *edges_all;   /* [P] their out-edges                      */
    double      *colnnz_all;  /* [P] nonzeros of each column group        */
    double       colnnz;      /* the led segment's                        */
    gv_la_iter_t it;
} ctx_t;

static inline int bit(const uint64_t *b, uint64_t k)
{
    return (int)((b[k >> 6] >> (k & 63)) & 1);
}

/* ---- the products -------------------------------------------------------- */

/* y[r] (+)= A(r, c) (x) x (for one entry), by semiring. Returns non-zero
 * when the row needs no more entries (MIN_SECONDI: columns ascend). */
static inline __attribute__((always_inline)) void
entry(int sr, gv_la_word_t *acc, gv_la_word_t x, float a, int64_t gcol)
{
    switch (sr) {
    case GV_LA_PLUS_TIMES:
        acc->f += x.f * (double)a;
        break;
    case GV_LA_MIN_PLUS: {
        double d = x.f + (double)a;

        if (d < acc->f)
            acc->f = d;
        break;
    }
    case GV_LA_MIN_SECONDI:
        if (gcol < acc->i)
            acc->i = gcol;
        break;
    default:
        if (x.i < acc->i)
            acc->i = x.i;
        break;
    }
}

/* Pull: every non-empty row of the tile (skipping masked rows) over the
 * dense input @a vals / @a bits (bits NULL: every column active). */
static inline __attribute__((always_inline)) void
pull(int sr, const gv_la_tile_t *t, gv_la_word_t *y, const gv_la_word_t *vals,
     const uint64_t *bits, const uint64_t *mask, int64_t clo)
{
    const int64_t  *rp = t->rp;
    const uint32_t *jc = t->jc2;
    const float    *w  = t->rw;

    for (int64_t q = 0; q < t->nzr; q++) {
        uint32_t     r = t->ir2[q];
        gv_la_word_t acc;

        if ((q & (PROGRESS_EVERY - 1)) == PROGRESS_EVERY - 1)
            gv_progress();
        if ((mask != NULL) && bit(mask, r))
            continue;
        acc = y[r];
        if ((sr == GV_LA_PLUS_TIMES) && (bits == NULL) && (w == NULL)) {
            double s = 0;

            for (int64_t p = rp[q]; p < rp[q + 1]; p++)
                s += vals[jc[p]].f;
            acc.f += s;
        } else if (sr == GV_LA_MIN_SECONDI) {
            for (int64_t p = rp[q]; p < rp[q + 1]; p++) {
                if ((bits == NULL) || bit(bits, jc[p])) {
                    if (clo + jc[p] < acc.i)
                        acc.i = clo + jc[p];
                    break; /* columns ascend: the first is the smallest */
                }
            }
        } else {
            for (int64_t p = rp[q]; p < rp[q + 1]; p++) {
                uint32_t c = jc[p];

                if ((bits != NULL) && !bit(bits, c))
                    continue;
                entry(sr, &acc, vals[c], (w != NULL) ? w[p] : 1.0f, clo + c);
            }
        }
        y[r] = acc;
    }
}

/* Push: the active columns (@a idx, ascending, with @a vals) found in the
 * tile's column list, their rows updated. */
static inline __attribute__((always_inline)) void
push(int sr, const gv_la_tile_t *t, gv_la_word_t *y, const uint32_t *idx,
     const gv_la_word_t *vals, int64_t nnz, const uint64_t *mask,
     int64_t clo)
{
    const uint32_t *jc = t->jc;
    int64_t         q = 0, nzc = t->nzc;
    int             bsearch = (nnz * 16 < nzc);

    for (int64_t k = 0; (k < nnz) && (q < nzc); k++) {
        uint32_t c = idx[k];

        if ((k & (PROGRESS_EVERY - 1)) == PROGRESS_EVERY - 1)
            gv_progress();
        if (bsearch) { /* the first jc[q..] >= c */
            int64_t lo = q, hi = nzc;

            while (lo < hi) {
                int64_t m = lo + (hi - lo) / 2;

                if (jc[m] < c)
                    lo = m + 1;
                else
                    hi = m;
            }
            q = lo;
        } else {
            while ((q < nzc) && (jc[q] < c))
                q++;
        }
        if ((q == nzc) || (jc[q] != c))
            continue;
        for (int64_t p = t->cp[q]; p < t->cp[q + 1]; p++) {
            uint32_t r = t->ir[p];

            if ((mask != NULL) && bit(mask, r))
                continue;
            entry(sr, &y[r], (vals != NULL) ? vals[k] : (gv_la_word_t){0},
                  (t->cw != NULL) ? t->cw[p] : 1.0f, clo + c);
        }
    }
}

/* One tile product, the semiring made a constant of each copy. */
static void product(ctx_t *c, const gv_la_tile_t *t, colseg_t *x,
                    gv_la_word_t *y, const uint64_t *mask)
{
    int64_t clo = gv_la_seg_lo(&c->A->L, t->j);
    int     ratio = c->prog->use_mask ? PUSH_RATIO_MASK : PUSH_RATIO;
    int     dopush = (x->mode == X_SPARSE) && (x->edges * ratio < x->colnnz);

    if (t->nnz == 0 || x->nnz == 0)
        return;
    if (dopush) {
        c->it.pushed++;
        switch (c->sr) {
#define PUSH_CASE(S) \
        case S: push(S, t, y, x->idx, x->vals, x->nnz, mask, clo); break;
        PUSH_CASE(GV_LA_PLUS_TIMES)
        PUSH_CASE(GV_LA_MIN_PLUS)
        PUSH_CASE(GV_LA_MIN_SECONDI)
        PUSH_CASE(GV_LA_MIN_SECOND)
#undef PUSH_CASE
        }
        return;
    }
    c->it.pulled++;
    {
        const gv_la_word_t *vals = x->vals;
        const uint64_t     *bits = (x->mode == X_FULL) ? NULL : x->bits;

        if (x->mode == X_SPARSE) { /* spread it (once per iteration) */
            if (x->dvals == NULL) {
                x->dvals = malloc((size_t)(x->w + 1) * sizeof(gv_la_word_t));
                x->dbits = calloc((size_t)(x->w / 64 + 1), 8);
                if (!x->dvals || !x->dbits)
                    gv_abort(1, "linalg: out of memory for an input segment "
                             "of %lld vertices", (long long)x->w);
            }
            if (x->bits == NULL) {
                for (int64_t k = 0; k < x->nnz; k++) {
                    if (x->vals != NULL)
                        x->dvals[x->idx[k]] = x->vals[k];
                    x->dbits[x->idx[k] >> 6] |= 1ull << (x->idx[k] & 63);
                }
                x->bits = x->dbits; /* marks it spread; cleared in reset */
            }
            vals = x->dvals;
            bits = x->dbits;
        }
        switch (c->sr) {
#define PULL_CASE(S) \
        case S: pull(S, t, y, vals, bits, mask, clo); break;
        PULL_CASE(GV_LA_PLUS_TIMES)
        PULL_CASE(GV_LA_MIN_PLUS)
        PULL_CASE(GV_LA_MIN_SECONDI)
        PULL_CASE(GV_LA_MIN_SECOND)
#undef PULL_CASE
        }
    }
}

/* ---- the wire of an input segment ------------------------------------------ */

static size_t wire_len(const ctx_t *c, xmode_t mode, int64_t w, int64_t nnz)
{
    size_t vb = c->structural ? 0 : 8;

    switch (mode) {
    case X_SPARSE:
        return (size_t)((nnz * 4 + 7) & ~(int64_t)7) + (size_t)nnz * vb;
    case X_DENSE:
        return (size_t)w * vb + (size_t)((w + 63) / 64) * 8;
    default:
        return (size_t)w * vb;
    }
}

static xmode_t mode_of(const ctx_t *c, int64_t w, int64_t nnz)
{
    if (nnz >= w)
        return X_FULL;
    if (nnz * SPARSE_DEN < w * SPARSE_NUM)
        return X_SPARSE;
    return c->prog->x_whole ? X_FULL : X_DENSE;
}

/* Point the views of @a x at its wire for this iteration's mode. */
static void wire_views(const ctx_t *c, colseg_t *x)
{
    size_t vb = c->structural ? 0 : 8;

    x->idx  = NULL;
    x->bits = NULL;
    x->vals = NULL;
    switch (x->mode) {
    case X_SPARSE:
        x->idx = (const uint32_t *)x->wire;
        if (vb)
            x->vals = (const gv_la_word_t *)(x->wire +
                                             ((x->nnz * 4 + 7) & ~7ll));
        break;
    case X_DENSE:
        if (vb)
            x->vals = (const gv_la_word_t *)x->wire;
        x->bits = (const uint64_t *)(x->wire + (size_t)x->w * vb);
        break;
    default:
        if (vb)
            x->vals = (const gv_la_word_t *)x->wire;
        break;
    }
}

/* The leader writes its segment's wire from apply's output. */
static void wire_pack(ctx_t *c, colseg_t *x)
{
    const gv_la_segment_t *s = &c->seg;
    int64_t                n = x->nnz;

    if (x->mode == X_SPARSE) {
        uint32_t     *idx = (uint32_t *)x->wire;
        gv_la_word_t *v   = (gv_la_word_t *)(x->wire + ((n * 4 + 7) & ~7ll));

        memcpy(idx, s->active, (size_t)n * 4);
        if (!c->structural)
            for (int64_t k = 0; k < n; k++)
                v[k] = s->x[s->active[k]];
    } else {
        size_t    vb = c->structural ? 0 : 8;
        uint64_t *b  = (uint64_t *)(x->wire + (size_t)x->w * vb);

        if (vb)
            memcpy(x->wire, s->x, (size_t)x->w * 8);
        if (x->mode == X_DENSE) {
            memset(b, 0, (size_t)((x->w + 63) / 64) * 8);
            for (int64_t k = 0; k < n; k++)
                b[s->active[k] >> 6] |= 1ull << (s->active[k] & 63);
        }
    }
}

/* ---- setup ---------------------------------------------------------------- */

static void ctx_free(ctx_t *c)
{
    for (int k = 0; k < c->ncol; k++) {
        free(c->col[k].wire);
        free(c->col[k].dvals);
        free(c->col[k].dbits);
    }
    for (int k = 0; k < c->nrow; k++)
        if (c->row[k].y != c->y_own)
            free(c->row[k].y);
    free(c->col);
    free(c->row);
    free(c->tile_col);
    free(c->y_own);
    free(c->seg.x);
    free(c->seg.active);
    free(c->seg.mask);
    free(c->nnz_all);
    free(c->edges_all);
    free(c->colnnz_all);
}

static gv_status_t ctx_init(ctx_t *c, const gv_la_matrix_t *A,
                            const gv_la_program_t *prog, void *arg)
{
    const gv_la_layout_t *L = &A->L;
    int P = L->nranks, *cidx = calloc((size_t)P, sizeof(int));

    memset(c, 0, sizeof(*c));
    c->A          = A;
    c->prog       = prog;
    c->sr         = (int)prog->semiring;
    c->structural = prog->semiring == GV_LA_MIN_SECONDI;
    if (c->sr == GV_LA_PLUS_TIMES)
        c->ident.f = 0.0;
    else if (c->sr == GV_LA_MIN_PLUS)
        c->ident.f = INFINITY;
    else
        c->ident.i = INT64_MAX;
    c->col      = calloc((size_t)P, sizeof(colseg_t));
    c->row      = calloc((size_t)P, sizeof(rowseg_t));
    c->tile_col = calloc((size_t)A->ntiles + 1, sizeof(int));
    c->nnz_all  = calloc((size_t)P, sizeof(int64_t));
    c->edges_all  = calloc((size_t)P, sizeof(double));
    c->colnnz_all = calloc((size_t)P, sizeof(double));
    c->y_own    = malloc((size_t)(A->nloc + 1) * sizeof(gv_la_word_t));
    c->seg.x    = malloc((size_t)(A->nloc + 1) * sizeof(gv_la_word_t));
    c->seg.active = malloc((size_t)(A->nloc + 1) * sizeof(uint32_t));
    if (prog->use_mask)
        c->seg.mask = calloc((size_t)(A->nloc / 64 + 1), 8);
    if (!cidx || !c->col || !c->row || !c->tile_col || !c->nnz_all ||
        !c->edges_all || !c->colnnz_all ||
        !c->y_own || !c->seg.x || !c->seg.active ||
        (prog->use_mask && !c->seg.mask)) {
        free(cidx);
        return GV_ERR_NO_MEMORY;
    }
    for (int64_t v = 0; v < A->nloc; v++)
        c->colnnz += (double)A->out_deg[v];
    c->seg.lo  = A->lo;
    c->seg.n   = A->nloc;
    c->seg.A   = A;
    c->seg.arg = arg;
    for (int j = 0; j < P; j++)
        cidx[j] = -1;
    for (int k = 0; k < A->ntiles; k++) {
        const gv_la_tile_t *t = &A->tiles[k];

        if (cidx[t->j] < 0) {
            colseg_t *x = &c->col[c->ncol];
            int64_t   w = gv__la_width(L, t->j);

            x->j  = t->j;
            x->w  = w;
            /* room for the largest wire: dense */
            x->wire = malloc(wire_len(c, X_DENSE, w, w) +
                             wire_len(c, X_SPARSE, w, w) + 8);
            if (x->wire == NULL) {
                free(cidx);
                return GV_ERR_NO_MEMORY;
            }
            cidx[t->j] = c->ncol++;
        }
        c->tile_col[k] = cidx[t->j];
        if ((c->nrow == 0) || (c->row[c->nrow - 1].i != t->i)) {
            rowseg_t *y = &c->row[c->nrow++];

            y->i     = t->i;
            y->w     = gv__la_width(L, t->i);
            y->first = k;
            y->y     = (t->i == A->seg) ? c->y_own
                                        : malloc((size_t)(y->w + 1) * 8);
            if (y->y == NULL) {
                free(cidx);
                return GV_ERR_NO_MEMORY;
            }
        }
        c->row[c->nrow - 1].ntiles++;
    }
    free(cidx);
    return GV_OK;
}

/* ---- one iteration ---------------------------------------------------------- */

/* Broadcast: start the broadcast of every input segment this rank uses. */
static gv_status_t broadcast(ctx_t *c)
{
    const gv_la_matrix_t *A = c->A;
    double t0 = gv_wtime();

    for (int k = 0; k < c->ncol; k++) {
        colseg_t *x = &c->col[k];
        int       leader = A->L.leader[x->j];
        gv_status_t rc;

        x->nnz    = c->nnz_all[x->j];
        x->edges  = c->edges_all[x->j];
        x->colnnz = c->colnnz_all[x->j];
        x->mode   = mode_of(c, x->w, x->nnz);
        x->len  = wire_len(c, x->mode, x->w, x->nnz);
        if (x->dbits != NULL && x->bits == x->dbits) { /* unspread */
            memset(x->dbits, 0, (size_t)(x->w / 64 + 1) * 8);
        }
        wire_views(c, x);
        c->it.sparse += (x->mode == X_SPARSE) && (leader == A->rank);
        if (leader == A->rank)
            wire_pack(c, x);
        if ((gv_team_size(A->col_team) > 1) && (x->len > 0)) {
            rc = gv_team_ibcast(A->col_team,
                                gv_team_rank_of(A->col_team, leader),
                                x->wire, x->len, &x->req);
            if (rc != GV_OK)
                return rc;
            if (leader == A->rank)
                c->it.bcast_bytes +=
                    (uint64_t)x->len * (uint64_t)(gv_team_size(A->col_team) - 1);
        }
    }
    gv_progress();
    c->it.bcast_s += gv_wtime() - t0;
    return GV_OK;
}

/* Combine: the row groups in order; in each, the tiles whose input has
 * arrived first; then the partial output to the row group's leader. */
static gv_status_t combine(ctx_t *c)
{
    const gv_la_matrix_t *A = c->A;
    int       pr  = gv_team_size(A->row_team);
    char     *done = calloc((size_t)A->ntiles + 1, 1);
    gv_status_t rc = GV_OK;

    if (done == NULL)
        return GV_ERR_NO_MEMORY;
    for (int g = 0; (rc == GV_OK) && (g < c->nrow); g++) {
        rowseg_t       *y = &c->row[g];
        const uint64_t *mask = (y->i == A->seg) ? c->seg.mask : NULL;
        int             left = y->ntiles;

        for (int64_t r = 0; r < y->w; r++)
            y->y[r] = c->ident;
        while ((rc == GV_OK) && (left > 0)) {
            int pick = -1;

            for (int k = y->first; k < y->first + y->ntiles; k++) {
                colseg_t *x = &c->col[c->tile_col[k]];

                if (done[k])
                    continue;
                if ((x->req == NULL) || gv_coll_done(x->req)) {
                    pick = k;
                    break;
                }
                if (pick < 0)
                    pick = -2 - k; /* the first one still in flight */
            }
            if (pick < -1) {
                colseg_t *x = &c->col[c->tile_col[-2 - pick]];
                double    t0 = gv_wtime();

                pick = -2 - pick;
                rc   = gv_coll_wait(&x->req);
                c->it.bcast_s += gv_wtime() - t0;
                if (rc != GV_OK)
                    break;
            } else {
                colseg_t *x = &c->col[c->tile_col[pick]];

                if (x->req != NULL)
                    rc = gv_coll_wait(&x->req); /* done: releases it */
            }
            {
                double t0 = gv_wtime();

                product(c, &A->tiles[pick], &c->col[c->tile_col[pick]], y->y,
                        mask);
                c->it.combine_s += gv_wtime() - t0;
            }
            done[pick] = 1;
            left--;
        }
        if ((rc == GV_OK) && (pr > 1)) {
            int root = gv_team_rank_of(A->row_team, A->L.leader[y->i]);
            int dbl  = (c->sr == GV_LA_PLUS_TIMES) || (c->sr == GV_LA_MIN_PLUS);

            rc = gv_team_ireduce(A->row_team, root, y->y,
                                 (y->i == A->seg) ? y->y : NULL,
                                 (size_t)y->w, dbl ? GV_DOUBLE : GV_INT64,
                                 (c->sr == GV_LA_PLUS_TIMES) ? GV_SUM : GV_MIN,
                                 &y->req);
            if (y->i != A->seg)
                c->it.combine_bytes += (uint64_t)y->w * 8;
        }
    }
    free(done);
    for (int g = 0; g < c->nrow; g++) {
        double      t0 = gv_wtime();
        gv_status_t r2 = gv_coll_wait(&c->row[g].req);

        c->it.reduce_s += gv_wtime() - t0;
        if (rc == GV_OK)
            rc = r2;
    }
    for (int k = 0; k < c->ncol; k++) { /* (only after an error) */
        gv_status_t r2 = gv_coll_wait(&c->col[k].req);

        if (rc == GV_OK)
            rc = r2;
    }
    return rc;
}

/* The iteration's vote: every segment's active count and the largest
 * change. Returns the total active count in *active_p. */
static gv_status_t vote(ctx_t *c, int64_t *active_p, double *change_p)
{
    const gv_la_matrix_t *A = c->A;
    int     P = A->L.nranks;
    double *all = malloc((size_t)P * 4 * sizeof(double));
    double  mine[4] = {0, 0, 0, 0};
    gv_status_t rc;

    if (all == NULL)
        return GV_ERR_NO_MEMORY;
    mine[0] = (double)c->seg.nactive; /* exact below 2^53 */
    mine[1] = c->seg.change;
    if (c->seg.nactive >= c->seg.n)
        mine[2] = c->colnnz;
    else
        for (int64_t k = 0; k < c->seg.nactive; k++)
            mine[2] += (double)A->out_deg[c->seg.active[k]];
    mine[3] = c->colnnz;
    rc = gv_team_allgather(GV_TEAM_WORLD, mine, all, sizeof(mine));
    *active_p = 0;
    *change_p = 0;
    for (int r = 0; (rc == GV_OK) && (r < P); r++) {
        int64_t n = (int64_t)all[4 * r];
        int     k = A->L.seg_of[r];

        c->nnz_all[k]    = n;
        c->edges_all[k]  = all[4 * r + 2];
        c->colnnz_all[k] = all[4 * r + 3];
        *active_p += n;
        if (all[4 * r + 1] > *change_p)
            *change_p = all[4 * r + 1];
    }
    free(all);
    return rc;
}

void gv_la_stats_free(gv_la_stats_t *st)
{
    free(st->iter);
    st->iter  = NULL;
    st->iters = 0;
}

static void iter_print(const gv_la_iter_t *it, const char *label, FILE *f)
{
    fprintf(f, "linalg %s active=%lld sparse_segs=%d push=%lld pull=%lld "
            "bcast_s=%.6f combine_s=%.6f reduce_s=%.6f apply_s=%.6f "
            "seconds=%.6f bcast_bytes=%llu combine_bytes=%llu\n", label,
            (long long)it->active, it->sparse, (long long)it->pushed,
            (long long)it->pulled, it->bcast_s, it->combine_s, it->reduce_s,
            it->apply_s, it->seconds, (unsigned long long)it->bcast_bytes,
            (unsigned long long)it->combine_bytes);
}

void gv_la_stats_print(const gv_la_stats_t *st, FILE *f)
{
    char label[32];

    if (gv_rank() != 0)
        return;
    for (int k = 0; k < st->iters; k++) {
        snprintf(label, sizeof(label), "iter=%d", k + 1);
        iter_print(&st->iter[k], label, f);
    }
    iter_print(&st->total, "total", f);
}

/* Collective: sum the counts over ranks; times: rank 0's. */
static gv_status_t iter_close(ctx_t *c, gv_la_stats_t *st, int verbose)
{
    int64_t v[5] = {c->it.sparse, c->it.pushed, c->it.pulled,
                    (int64_t)c->it.bcast_bytes, (int64_t)c->it.combine_bytes};
    gv_status_t rc = gv_allreduce(v, 5, GV_INT64, GV_SUM);
    gv_la_iter_t *x;

    if (rc != GV_OK)
        return rc;
    c->it.sparse        = (int)v[0];
    c->it.pushed        = v[1];
    c->it.pulled        = v[2];
    c->it.bcast_bytes   = (uint64_t)v[3];
    c->it.combine_bytes = (uint64_t)v[4];
    x = realloc(st->iter, (size_t)(st->iters + 1) * sizeof(*x));
    if (x == NULL)
        return GV_ERR_NO_MEMORY;
    st->iter              = x;
    st->iter[st->iters++] = c->it;
    st->total.active += c->it.active;
    st->total.sparse += c->it.sparse;
    st->total.pushed += c->it.pushed;
    st->total.pulled += c->it.pulled;
    st->total.bcast_bytes += c->it.bcast_bytes;
    st->total.combine_bytes += c->it.combine_bytes;
    st->total.bcast_s += c->it.bcast_s;
    st->total.combine_s += c->it.combine_s;
    st->total.reduce_s += c->it.reduce_s;
    st->total.apply_s += c->it.apply_s;
    st->total.seconds += c->it.seconds;
    if (verbose && (gv_rank() == 0)) {
        char label[32];

        snprintf(label, sizeof(label), "iter=%d", st->iters);
        iter_print(&c->it, label, stderr);
    }
    return GV_OK;
}

gv_status_t gv_la_run(const gv_la_matrix_t *A, const gv_la_program_t *prog,
                      const gv_la_opts_t *opts, gv_la_stats_t *stats_p)
{
    gv_la_opts_t  o = {0};
    gv_la_stats_t st;
    ctx_t         c;
    gv_status_t   rc;
    int64_t       active;
    double        change, t_run = gv_wtime();

    memset(&st, 0, sizeof(st));
    if (opts != NULL)
        o = *opts;
    if ((prog == NULL) || (prog->init == NULL) || (prog->apply == NULL) ||
        ((unsigned)prog->semiring > GV_LA_MIN_SECOND) || (o.max_iters < 0)) {
        gv__la_err("run: a program needs init and apply and one of the four "
                   "semirings, and max_iters >= 0");
        return GV_ERR_INVALID;
    }
    rc = gv__la_agree(ctx_init(&c, A, prog, o.arg));
    if (rc == GV_OK) {
        c.seg.iter    = 0;
        c.seg.y       = NULL;
        c.seg.nactive = 0;
        c.seg.change  = 0;
        prog->init(&c.seg);
        rc = vote(&c, &active, &change);
    }
    while ((rc == GV_OK) && (active > 0)) {
        double t0 = gv_wtime(), t1;

        memset(&c.it, 0, sizeof(c.it));
        c.it.active = active;
        rc = broadcast(&c);
        if (rc == GV_OK)
            rc = combine(&c);
        if (rc != GV_OK)
            break;
        t1            = gv_wtime();
        c.seg.iter    = st.iters + 1;
        c.seg.y       = c.y_own;
        c.seg.nactive = 0;
        c.seg.change  = 0;
        prog->apply(&c.seg);
        rc = vote(&c, &active, &change);
        c.it.apply_s = gv_wtime() - t1;
        c.it.seconds = gv_wtime() - t0;
        if (rc == GV_OK)
            rc = iter_close(&c, &st, o.verbose);
        if ((o.max_iters > 0) && (st.iters >= o.max_iters))
            break;
        if ((o.tol > 0) && (change < o.tol))
            break;
    }
    if (o.verbose && (rc == GV_OK) && (gv_rank() == 0))
        iter_print(&st.total, "total", stderr);
    ctx_free(&c);
    st.seconds = gv_wtime() - t_run;
    if (stats_p != NULL)
        *stats_p = st;
    else
        gv_la_stats_free(&st);
    return rc;
}
