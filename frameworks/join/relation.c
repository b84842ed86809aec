/* Relations: made from local rows, selection, projection, group-by, and
 * the generated pair of a join benchmark. SPDX-License-Identifier: BSD-3-Clause */
#include "join/join.h"

#include <grapevine/fw/hashmap.h>

#include <math.h>
#include <stdlib.h>

gv_status_t gv_rel_from_local(int ncols, const int64_t *rows, int64_t n,
                              gv_rel_t **rel_p)
{
    int         P = gv_nranks(), me = gv_rank(), r;
    int64_t    *cnt, mm[2] = {ncols, -ncols}, off = 0, total = 0;
    gv_rel_t   *rel;
    gv_status_t status;

    gv_allreduce(mm, 2, GV_INT64, GV_MAX);
    if ((mm[0] != -mm[1]) || (ncols < 1) || (ncols > GV_REL_COLS_MAX)) {
        if (me == 0)
            join_error("relation of %d columns: accepted 1..%d, the same on "
                       "every rank", ncols, GV_REL_COLS_MAX);
        return GV_ERR_INVALID;
    }
    cnt = calloc((size_t)P, sizeof(int64_t));
    rel = calloc(1, sizeof(*rel));
    if ((cnt == NULL) || (rel == NULL))
        gv_abort(1, "join: out of local memory");
    cnt[me] = n;
    gv_allreduce(cnt, (size_t)P, GV_INT64, GV_SUM);
    for (r = 0; r < P; r++) {
        if (r == me)
            off = total;
        total += cnt[r];
    }
    free(cnt);
    rel->ncols = ncols;
    status = gv_array_create(total, sizeof(int64_t) * (size_t)ncols,
                             GV_DIST_BLOCK, 0, &rel->arr);
    if (status != GV_OK) {
        free(rel);
        return status;
    }
    if (n > 0)
        status = gv_array_put_range(rel->arr, off, n, rows);
    {
        int64_t bad = (status != GV_OK);
        gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
        if (bad) {
            gv_rel_destroy(rel);
            return GV_ERR_INVALID;
        }
    }
    *rel_p = rel;
    return GV_OK;
}

void gv_rel_destroy(gv_rel_t *rel)
{
    if (rel == NULL)
        return;
    gv_array_destroy(rel->arr);
    free(rel);
}

int gv_rel_ncols(const gv_rel_t *rel)
{
    return rel->ncols;
}

int64_t gv_rel_size(const gv_rel_t *rel)
{
    return gv_array_size(rel->arr);
}

gv_array_t *gv_rel_array(const gv_rel_t *rel)
{
    return rel->arr;
}

int64_t *gv_rel_local(const gv_rel_t *rel, int64_t *n_p)
{
    *n_p = gv_array_local_count(rel->arr);
    return gv_array_local(rel->arr);
}

gv_status_t gv_rel_select(const gv_rel_t *rel, gv_rel_pred_fn_t pred,
                          void *arg, gv_rel_t **out_p)
{
    rows_t      out = {.width = rel->ncols};
    int64_t     n, i, *v = gv_rel_local(rel, &n);
    gv_status_t status;

    for (i = 0; i < n; i++)
        if (pred(v + i * rel->ncols, arg))
            rows_push(&out, v + i * rel->ncols);
    status = gv_rel_from_local(rel->ncols, out.v, out.n, out_p);
    free(out.v);
    return status;
}

gv_status_t gv_rel_project(const gv_rel_t *rel, const int *cols, int ncols,
                           gv_rel_t **out_p)
{
    int64_t     n, i, *v = gv_rel_local(rel, &n), *o;
    int64_t     bad = 0;
    gv_status_t status;
    int         j;

    for (j = 0; j < ncols; j++)
        if ((cols[j] < 0) || (cols[j] >= rel->ncols))
            bad = 1;
    if (bad || (ncols < 1) || (ncols > GV_REL_COLS_MAX)) {
        if (gv_rank() == 0)
            join_error("projection on %d columns of a relation of %d: "
                       "columns must be 0..%d", ncols, rel->ncols,
                       rel->ncols - 1);
        return GV_ERR_INVALID;
    }
    o = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1) * (size_t)ncols);
    if (o == NULL)
        gv_abort(1, "join: out of local memory for a projection");
    for (i = 0; i < n; i++)
        for (j = 0; j < ncols; j++)
            o[i * ncols + j] = v[i * rel->ncols + cols[j]];
    status = gv_rel_from_local(ncols, o, n, out_p);
    free(o);
    return status;
}

static void collect_entry(gv_hashmap_t *map, const void *key, void *value,
                          void *arg)
{
    int64_t row[2];

    (void)map;
    memcpy(&row[0], key, 8);
    memcpy(&row[1], value, 8);
    rows_push(arg, row);
}

gv_status_t gv_rel_groupby(const gv_rel_t *rel, int keycol, int valcol,
                           gv_agg_t agg, gv_rel_t **out_p)
{
    gv_hashmap_opts_t o = {0};
    gv_hashmap_t     *map;
    rows_t            out = {.width = 2};
    int64_t           n, i, *v = gv_rel_local(rel, &n), one = 1;
    gv_status_t       status;

    if ((keycol < 0) || (keycol >= rel->ncols) ||
        ((agg != GV_AGG_COUNT) && ((valcol < 0) || (valcol >= rel->ncols))) ||
        (agg < GV_AGG_COUNT) || (agg > GV_AGG_MAX)) {
        if (gv_rank() == 0)
            join_error("group-by: key column %d, value column %d of a "
                       "relation of %d columns, aggregate %d", keycol,
                       valcol, rel->ncols, (int)agg);
        return GV_ERR_INVALID;
    }
    o.combine  = (agg == GV_AGG_MIN) ? gv_hashmap_min_i64
               : (agg == GV_AGG_MAX) ? gv_hashmap_max_i64
                                     : gv_hashmap_sum_i64;
    o.capacity = gv_rel_size(rel);
    status     = gv_hashmap_create(8, 8, &o, &map);
    if (status != GV_OK)
        return status;
    /* The default event: one every rank knows, so its wait covers the
     * combines of all ranks. */
    for (i = 0; (status == GV_OK) && (i < n); i++)
        status = gv_hashmap_combine_i64_async(
            map, v[i * rel->ncols + keycol],
            (agg == GV_AGG_COUNT) ? &one : &v[i * rel->ncols + valcol], NULL);
    if (gv_gce_wait(gv_gce_default()) != GV_OK)
        status = GV_ERR_INVALID;
    gv_hashmap_forall(map, collect_entry, &out, NULL);
    gv_hashmap_destroy(map);
    if (status == GV_OK)
        status = gv_rel_from_local(2, out.v, out.n, out_p);
    free(out.v);
    return status;
}

/* A key of 0..nr-1 with P(k - 1) ~ integral of x^-s over [k, k+1). */
static int64_t zipf_key(double u, int64_t nr, double s)
{
    double x, top = (double)nr + 1.0;

    if (fabs(s - 1.0) < 1e-12)
        x = exp(u * log(top));
    else
        x = pow(1.0 + u * (pow(top, 1.0 - s) - 1.0), 1.0 / (1.0 - s));
    if (x < 1.0)
        x = 1.0;
    if (x >= top)
        x = (double)nr;
    return (int64_t)x - 1;
}

gv_status_t gv_rel_generate(int64_t nr, int64_t ns, gv_keys_t keys,
                            double zipf_s, uint64_t seed, gv_rel_t **r_p,
                            gv_rel_t **s_p)
{
    int         P = gv_nranks(), me = gv_rank();
    int64_t     lo, hi, i, *rows;
    gv_status_t status;

    if ((nr < 1) || (ns < 0) || ((keys != GV_KEYS_UNIFORM) &&
                                 (keys != GV_KEYS_ZIPF)) ||
        ((keys == GV_KEYS_ZIPF) && !(zipf_s > 0))) {
        if (me == 0)
            join_error("generate: %lld and %lld tuples (>= 1, >= 0), keys "
                       "uniform or Zipf with an exponent > 0 (%g)",
                       (long long)nr, (long long)ns, zipf_s);
        return GV_ERR_INVALID;
    }
    lo   = nr * me / P;
    hi   = nr * (me + 1) / P;
    rows = malloc(sizeof(int64_t) * 2 * (size_t)((hi - lo) + (ns / P) + 2));
    if (rows == NULL)
        gv_abort(1, "join: out of local memory for generated tuples");
    for (i = lo; i < hi; i++) {
        rows[2 * (i - lo)]     = i;
        rows[2 * (i - lo) + 1] = (int64_t)(join_mix64(seed ^ (uint64_t)i) >> 1);
    }
    status = gv_rel_from_local(2, rows, hi - lo, r_p);
    if (status != GV_OK) {
        free(rows);
        return status;
    }
    lo = ns * me / P;
    hi = ns * (me + 1) / P;
    for (i = lo; i < hi; i++) {
        uint64_t x = join_mix64(seed + 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
        double   u = (double)(x >> 11) * (1.0 / 9007199254740992.0);
        rows[2 * (i - lo)] = (keys == GV_KEYS_UNIFORM)
                                 ? (int64_t)(u * (double)nr)
                                 : zipf_key(u, nr, zipf_s);
        if (rows[2 * (i - lo)] >= nr)
            rows[2 * (i - lo)] = nr - 1;
        rows[2 * (i - lo) + 1] = (int64_t)(join_mix64(x) >> 1);
    }
    status = gv_rel_from_local(2, rows, hi - lo, s_p);
    free(rows);
    if (status != GV_OK)
        gv_rel_destroy(*r_p);
    return status;
}
