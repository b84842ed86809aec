/* Relations and joins against sequential references: CSV files read in
 * parallel (blanks, CRLF, empty lines, a header), hash joins with
 * duplicate keys, an empty relation and a key that matches everything,
 * selection, projection, group-by, generated relations (uniform and Zipf
 * keys), triangle counts of a Kronecker graph and of a graph with
 * self-loops and duplicate edges, and malformed CSV files refused.
 * Run: gvrun -n 3 build/tests/frameworks/fw_join
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/mr.h"
#include "check/mr_ref.h"
#include <grapevine/fw/graph.h>
#include <grapevine/fw/join.h>

static char dir[64];

static const char *path_of(const char *name)
{
    static char p[8][128];
    static int  k;

    k = (k + 1) % 8;
    snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
    return p[k];
}

static void put_file(const char *name, const char *text)
{
    FILE *f;

    if (gv_rank() != 0)
        return;
    f = fopen(path_of(name), "wb");
    MR_CHECK(f != NULL, "cannot create %s", name);
    fputs(text, f);
    fclose(f);
}

/* Every row of @a rel on every rank (free it). */
static int64_t *gather(const gv_rel_t *rel)
{
    int64_t  n = gv_rel_size(rel);
    int64_t *v = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1) *
                        (size_t)gv_rel_ncols(rel));

    MR_CHECK(v != NULL, "no memory");
    if (n > 0)
        MR_OK(gv_array_get_range(gv_rel_array(rel), 0, n, v));
    gv_coll_barrier();
    return v;
}

/* R: 3 columns, key in column 1; rows i = 0..nr-1 written with varied
 * blanks and line ends. */
static int64_t *r_rows, *s_rows;
static int64_t  nr = 1500, ns = 1100;

static void make_files(void)
{
    char   *t = malloc(200000), *u = malloc(200000);
    size_t  a = 0, b = 0;
    int64_t i;

    if (gv_rank() == 0) {
        snprintf(dir, sizeof(dir), "/tmp/gv-fwjoin-XXXXXX");
        MR_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MR_OK(gv_broadcast(0, dir, sizeof(dir)));
    r_rows = malloc(sizeof(int64_t) * 3 * (size_t)nr);
    s_rows = malloc(sizeof(int64_t) * 2 * (size_t)ns);
    a += (size_t)sprintf(t + a, "id,key,val\n");
    for (i = 0; i < nr; i++) {
        r_rows[3 * i]     = i;
        r_rows[3 * i + 1] = (i * 7) % 301 - 20;     /* duplicates, negatives */
        r_rows[3 * i + 2] = i * 1000003 - 5000000;
        a += (size_t)sprintf(t + a, (i % 3 == 0) ? " %lld , %lld,%lld\r\n"
                                  : (i % 3 == 1) ? "%lld,\t%lld ,%lld\n"
                                                 : "%lld,%lld,%lld\n\n",
                             (long long)r_rows[3 * i],
                             (long long)r_rows[3 * i + 1],
                             (long long)r_rows[3 * i + 2]);
    }
    for (i = 0; i < ns; i++) {
        s_rows[2 * i]     = (i * 13) % 350 - 30;
        s_rows[2 * i + 1] = -i;
        b += (size_t)sprintf(u + b, "%lld,%lld\n", (long long)s_rows[2 * i],
                             (long long)s_rows[2 * i + 1]);
    }
    t[a] = u[b] = '\0';
    put_file("r.csv", t);
    put_file("s.csv", u);
    put_file("empty.csv", "");
    put_file("all_r.csv", "5,1\n5,2\n5,3\n5,4\n5,5\n5,6\n5,7\n");
    put_file("all_s.csv", "9,5\n8,5\n7,5\n6,5\n5,5\n");
    put_file("bad_field.csv", "1,2\n3,4\n5,x\n7,8\n");
    put_file("bad_missing.csv", "1,2\n3,4\n\n5\n");
    put_file("bad_extra.csv", "1,2\n3,4,5\n");
    put_file("bad_big.csv", "1,2\n99999999999999999999,4\n");
    put_file("bad_empty_field.csv", "1,2\n,4\n");
    free(t);
    free(u);
    gv_coll_barrier();
}

static void test_load(void)
{
    gv_rel_t *r;
    int64_t  *v;

    MR_OK(gv_rel_load_csv(path_of("r.csv"), 1, &r));
    MR_CHECK((gv_rel_size(r) == nr) && (gv_rel_ncols(r) == 3),
             "r.csv: %lld rows of %d", (long long)gv_rel_size(r),
             gv_rel_ncols(r));
    v = gather(r);
    MR_CHECK(memcmp(v, r_rows, sizeof(int64_t) * 3 * (size_t)nr) == 0,
             "r.csv loaded differently");
    free(v);
    gv_rel_destroy(r);
    MR_OK(gv_rel_load_csv(path_of("empty.csv"), 0, &r));
    MR_CHECK(gv_rel_size(r) == 0, "an empty file gave %lld rows",
             (long long)gv_rel_size(r));
    gv_rel_destroy(r);
    if (gv_rank() == 0)
        printf("ok: CSV files loaded in parallel as written\n");
}

static void join_case(const char *rf, int rh, int rcol, const char *sf,
                      int sh, int scol)
{
    gv_rel_t *r, *s, *o;
    int64_t  *rv, *sv, *ov, *want, n, cnt;

    MR_OK(gv_rel_load_csv(path_of(rf), rh, &r));
    MR_OK(gv_rel_load_csv(path_of(sf), sh, &s));
    rv   = gather(r);
    sv   = gather(s);
    n    = ref_join(rv, gv_rel_size(r), gv_rel_ncols(r), rcol, sv,
                    gv_rel_size(s), gv_rel_ncols(s), scol, NULL);
    want = malloc(sizeof(int64_t) * (size_t)(n + 1) *
                  (size_t)(gv_rel_ncols(r) + gv_rel_ncols(s)));
    ref_join(rv, gv_rel_size(r), gv_rel_ncols(r), rcol, sv, gv_rel_size(s),
             gv_rel_ncols(s), scol, want);
    MR_OK(gv_rel_join(r, rcol, s, scol, &o, &cnt, NULL));
    MR_CHECK((cnt == n) && (gv_rel_size(o) == n), "%s x %s: %lld rows "
             "(relation %lld), reference %lld", rf, sf, (long long)cnt,
             (long long)gv_rel_size(o), (long long)n);
    ov = gather(o);
    ref_sort_rows(ov, n, gv_rel_ncols(o));
    ref_sort_rows(want, n, gv_rel_ncols(o));
    MR_CHECK(memcmp(ov, want, sizeof(int64_t) * (size_t)n *
                                  (size_t)gv_rel_ncols(o)) == 0,
             "%s x %s: rows differ from the reference", rf, sf);
    MR_OK(gv_rel_join(r, rcol, s, scol, NULL, &cnt, NULL));
    MR_CHECK(cnt == n, "count-only join: %lld, want %lld", (long long)cnt,
             (long long)n);
    gv_rel_destroy(o);
    gv_rel_destroy(r);
    gv_rel_destroy(s);
    free(rv);
    free(sv);
    free(ov);
    free(want);
}

static void test_join(void)
{
    join_case("r.csv", 1, 1, "s.csv", 0, 0);
    join_case("s.csv", 0, 0, "r.csv", 1, 1);
    join_case("r.csv", 1, 1, "empty.csv", 0, 0);
    join_case("empty.csv", 0, 0, "s.csv", 0, 0);
    join_case("all_r.csv", 0, 0, "all_s.csv", 0, 1); /* 7 x 5 = 35 rows */
    if (gv_rank() == 0)
        printf("ok: hash joins equal nested loops (duplicates, empty, a key "
               "matching everything)\n");
}

static int pred_even(const int64_t *t, void *arg)
{
    (void)arg;
    return (t[1] % 2) == 0;
}

static void test_operators(void)
{
    gv_rel_t *r, *sel, *pr, *g;
    int64_t  *v, *gv, i, j, k, m = 0;
    int       cols[3] = {2, 0, 2};

    MR_OK(gv_rel_load_csv(path_of("r.csv"), 1, &r));
    MR_OK(gv_rel_select(r, pred_even, NULL, &sel));
    v = gather(sel);
    for (i = 0; i < nr; i++)
        if (r_rows[3 * i + 1] % 2 == 0) {
            MR_CHECK(memcmp(v + 3 * m, r_rows + 3 * i, 24) == 0,
                     "selection row %lld", (long long)m);
            m++;
        }
    MR_CHECK(gv_rel_size(sel) == m, "selection: %lld rows, want %lld",
             (long long)gv_rel_size(sel), (long long)m);
    free(v);
    MR_OK(gv_rel_project(r, cols, 3, &pr));
    v = gather(pr);
    for (i = 0; i < nr; i++)
        MR_CHECK((v[3 * i] == r_rows[3 * i + 2]) && (v[3 * i + 1] == i) &&
                 (v[3 * i + 2] == r_rows[3 * i + 2]), "projection row %lld",
                 (long long)i);
    free(v);
    for (k = GV_AGG_COUNT; k <= GV_AGG_MAX; k++) {
        MR_OK(gv_rel_groupby(r, 1, 2, (gv_agg_t)k, &g));
        gv = gather(g);
        for (j = 0; j < gv_rel_size(g); j++) {
            int64_t key = gv[2 * j], want = 0, seen = 0;
            for (i = 0; i < nr; i++) {
                int64_t x = r_rows[3 * i + 2];
                if (r_rows[3 * i + 1] != key)
                    continue;
                if (k == GV_AGG_COUNT)
                    want++;
                else if (k == GV_AGG_SUM)
                    want += x;
                else if (!seen || (k == GV_AGG_MIN ? x < want : x > want))
                    want = x;
                seen = 1;
            }
            MR_CHECK(gv[2 * j + 1] == want, "group-by %lld key %lld: %lld, "
                     "want %lld", (long long)k, (long long)key,
                     (long long)gv[2 * j + 1], (long long)want);
        }
        MR_CHECK(gv_rel_size(g) == 43, "group-by: %lld groups, want 43 "
                 "((7 i) mod 301 takes 43 values)", (long long)gv_rel_size(g));
        free(gv);
        gv_rel_destroy(g);
    }
    gv_rel_destroy(pr);
    gv_rel_destroy(sel);
    gv_rel_destroy(r);
    if (gv_rank() == 0)
        printf("ok: selection, projection and group-by equal the reference\n");
}

static void test_generated(void)
{
    gv_rel_t *r, *s;
    int64_t  *rv, *sv, cnt, n, top0 = 0, i;
    int       z;

    for (z = 0; z < 2; z++) {
        MR_OK(gv_rel_generate(2000, 5000, z ? GV_KEYS_ZIPF : GV_KEYS_UNIFORM,
                              1.0, 3, &r, &s));
        MR_OK(gv_rel_join(r, 0, s, 0, NULL, &cnt, NULL));
        MR_CHECK(cnt == 5000, "generated join: %lld rows, want 5000",
                 (long long)cnt);
        rv = gather(r);
        sv = gather(s);
        n  = ref_join(rv, 2000, 2, 0, sv, 5000, 2, 0, NULL);
        MR_CHECK(n == 5000, "reference: %lld rows", (long long)n);
        for (i = 0; i < 5000; i++)
            top0 += (sv[2 * i] == 0);
        if (z)
            MR_CHECK(top0 > 300, "Zipf keys: key 0 drawn %lld times of 5000",
                     (long long)top0);
        free(rv);
        free(sv);
        gv_rel_destroy(r);
        gv_rel_destroy(s);
    }
    if (gv_rank() == 0)
        printf("ok: generated relations (uniform, Zipf) join to NS rows\n");
}

static void tri_case(gv_edgelist_t *el, const char *what)
{
    gv_rel_t *e;
    int64_t  *rows = malloc(sizeof(int64_t) * 2 * (size_t)(el->n + 1));
    int64_t  *all, *src, *dst, i, tri, wedges, want, n, nv = 0;

    for (i = 0; i < el->n; i++) {
        rows[2 * i]     = el->src[i];
        rows[2 * i + 1] = el->dst[i];
    }
    MR_OK(gv_rel_from_local(2, rows, el->n, &e));
    MR_OK(gv_rel_triangles(e, &tri, &wedges));
    all = gather(e);
    n   = gv_rel_size(e);
    src = malloc(sizeof(int64_t) * (size_t)(n + 1));
    dst = malloc(sizeof(int64_t) * (size_t)(n + 1));
    for (i = 0; i < n; i++) {
        src[i] = all[2 * i];
        dst[i] = all[2 * i + 1];
        if (src[i] >= nv)
            nv = src[i] + 1;
        if (dst[i] >= nv)
            nv = dst[i] + 1;
    }
    want = ref_triangles(src, dst, n, nv);
    MR_CHECK(tri == want, "%s: %lld triangles, reference %lld", what,
             (long long)tri, (long long)want);
    gv_rel_destroy(e);
    free(rows);
    free(all);
    free(src);
    free(dst);
}

static void test_triangles(void)
{
    gv_kron_opts_t ko = {.scale = 9, .edgefactor = 8, .seed = 5};
    gv_edgelist_t  el;
    /* two triangles sharing 1-2, with a self-loop, duplicates both ways */
    static const int64_t hand[][2] = {{0, 1}, {1, 2}, {2, 0}, {1, 0}, {3, 3},
                                      {2, 3}, {3, 1}, {0, 1}, {2, 1}, {4, 5}};
    size_t         i;

    MR_OK(gv_kron_generate(&ko, &el));
    tri_case(&el, "kronecker scale 9");
    gv_edgelist_free(&el);
    gv_edgelist_init(&el, 6, 0);
    for (i = 0; i < sizeof(hand) / sizeof(hand[0]); i++)
        if ((int)(i % (size_t)gv_nranks()) == gv_rank())
            MR_OK(gv_edgelist_push(&el, hand[i][0], hand[i][1], 0));
    tri_case(&el, "hand graph");
    gv_edgelist_free(&el);
    if (gv_rank() == 0)
        printf("ok: triangle counts equal the sequential count\n");
}

static void test_bad(void)
{
    static const char *bad[] = {"bad_field.csv", "bad_missing.csv",
                                "bad_extra.csv", "bad_big.csv",
                                "bad_empty_field.csv"};
    gv_rel_t *r;
    size_t    i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        MR_CHECK(gv_rel_load_csv(path_of(bad[i]), 0, &r) == GV_ERR_INVALID,
                 "%s was not refused", bad[i]);
    MR_CHECK(gv_rel_load_csv(path_of("missing.csv"), 0, &r) == GV_ERR_IO,
             "a missing file was not GV_ERR_IO");
    if (gv_rank() == 0)
        printf("ok: malformed CSV files refused\n");
}

static void body(void *arg)
{
    (void)arg;
    make_files();
    test_load();
    test_join();
    test_operators();
    test_generated();
    test_triangles();
    test_bad();
    gv_coll_barrier();
    if (gv_rank() == 0) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
            printf("note: could not remove %s\n", dir);
        printf("ok: fw_join on %d ranks\n", gv_nranks());
    }
    free(r_rows);
    free(s_rows);
}

int main(int argc, char **argv)
{
    mr_init(&argc, &argv);
    MR_OK(gv_run_all(body, NULL, 0));
    gv_finalize();
    return 0;
}
