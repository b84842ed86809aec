/* The MapReduce engine against sequential references: word counts of
 * files with every kind of whitespace, empty files and words spanning the
 * ranks' byte ranges (with and without the combiner), a generated Zipf
 * corpus, the top words, fixed-size keys from an array into a hash map
 * and an array, k-means against a sequential Lloyd's from the same start,
 * points from a float32 file, and the errors of bad input.
 * Run: gvrun -n 3 build/tests/frameworks/fw_mr
 * SPDX-License-Identifier: BSD-3-Clause */
#include "../multirank/mr.h"
#include "check/mr_ref.h"
#include <grapevine/fw/mapreduce.h>

#include <math.h>

static char dir[64];
static char paths[8][96];

static void put_file(const char *name, const char *text, size_t len, int i)
{
    FILE *f;

    snprintf(paths[i], sizeof(paths[i]), "%s/%s", dir, name);
    if (gv_rank() != 0)
        return;
    f = fopen(paths[i], "wb");
    MR_CHECK(f != NULL, "cannot create %s", paths[i]);
    MR_CHECK(fwrite(text, 1, len, f) == len, "cannot write %s", paths[i]);
    fclose(f);
}

static void make_files(void)
{
    static const char ws[] = "  alpha beta\tgamma\n\nalpha\v\vbeta\fdelta\r\n"
                             "\t \r\f\valpha   gamma\t\talpha";
    char  *lng = malloc(40000);
    size_t n = 0;
    int    w = 0;

    if (gv_rank() == 0) {
        snprintf(dir, sizeof(dir), "/tmp/gv-fwmr-XXXXXX");
        MR_CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    }
    MR_OK(gv_broadcast(0, dir, sizeof(dir)));
    /* Long words of 50..950 letters: every rank boundary cuts one. */
    while (n < 38000) {
        size_t len = 50 + (size_t)(w * 37) % 900, k;
        for (k = 0; k < len; k++)
            lng[n + k] = (char)('a' + (w % 7) + (k % 3));
        n += len;
        lng[n++] = (w % 5 == 0) ? '\n' : ' ';
        w++;
    }
    put_file("empty.txt", "", 0, 0);
    put_file("ws.txt", ws, sizeof(ws) - 1, 1);
    put_file("empty2.txt", "", 0, 2);
    put_file("long.txt", lng, n, 3);
    put_file("spaces.txt", " \n\t\r\f\v ", 7, 4);
    put_file("tail.txt", "omega", 5, 5);
    free(lng);
    gv_coll_barrier();
}

typedef struct {
    ref_wc_t *ref;
    int64_t   seen, total, bad;
} cmp_t;

static void cmp_entry(const void *key, size_t klen, const void *val,
                      void *arg)
{
    cmp_t  *c = arg;
    int64_t v;

    memcpy(&v, val, 8);
    if (ref_wc_count(c->ref, key, klen) != v) {
        if (c->bad++ == 0)
            fprintf(stderr, "rank %d: word '%.*s' counted %lld, reference "
                    "%lld\n", gv_rank(), (int)(klen > 40 ? 40 : klen),
                    (const char *)key, (long long)v,
                    (long long)ref_wc_count(c->ref, key, klen));
    }
    c->seen++;
    c->total += v;
}

/* The job's result equals the reference exactly. */
static void check_counts(gv_mr_t *mr, ref_wc_t *ref, const char *what)
{
    cmp_t c = {ref, 0, 0, 0};

    MR_OK(gv_mr_forall(mr, cmp_entry, &c));
    MR_CHECK(c.bad == 0, "%s: %lld words counted wrong", what,
             (long long)c.bad);
    MR_OK(gv_allreduce(&c.seen, 1, GV_INT64, GV_SUM));
    MR_OK(gv_allreduce(&c.total, 1, GV_INT64, GV_SUM));
    MR_CHECK(c.seen == ref_wc_distinct(ref), "%s: %lld distinct words, "
             "reference %lld", what, (long long)c.seen,
             (long long)ref_wc_distinct(ref));
    MR_CHECK(c.total == ref_wc_total(ref), "%s: %lld words, reference %lld",
             what, (long long)c.total, (long long)ref_wc_total(ref));
}

static void test_wordcount(void)
{
    const char  *files[6];
    ref_wc_t    *ref = ref_wc_new();
    gv_mr_opts_t o   = {.key_size = 0, .val_size = 8,
                        .combine = gv_hashmap_sum_i64};
    gv_mr_t     *mr;
    gv_mr_top_t  top[4];
    int64_t      none;
    int          i, comb, n;

    for (i = 0; i < 6; i++) {
        files[i] = paths[i];
        MR_CHECK(ref_wc_file(ref, paths[i]) == 0, "reference cannot read %s",
                 paths[i]);
    }
    for (comb = 0; comb < 2; comb++) {
        o.local_combine = comb;
        MR_OK(gv_mr_create(&o, &mr));
        MR_OK(gv_mr_run_files(mr, files, 6, gv_mr_map_words, NULL));
        check_counts(mr, ref, comb ? "files, combiner" : "files");
        if (comb) {
            /* alpha 4, then beta and gamma 2 (beta first), then the rest */
            MR_OK(gv_mr_top(mr, 3, top, &n));
            MR_CHECK((n == 3) && !strcmp(top[0].key, "alpha") &&
                     (top[0].value == 4) && !strcmp(top[1].key, "beta") &&
                     (top[1].value == 2) && !strcmp(top[2].key, "gamma"),
                     "top 3: %s %lld, %s, %s", top[0].key,
                     (long long)top[0].value, top[1].key, top[2].key);
        }
        gv_mr_destroy(mr);
    }
    /* Only empty files: nothing, no error. */
    files[0] = paths[0];
    files[1] = paths[4];
    MR_OK(gv_mr_create(&o, &mr));
    MR_OK(gv_mr_run_files(mr, files, 2, gv_mr_map_words, NULL));
    MR_OK(gv_mr_size(mr, &none));
    MR_CHECK(none == 0, "%lld words in files of whitespace", (long long)none);
    gv_mr_destroy(mr);
    ref_wc_free(ref);
    if (gv_rank() == 0)
        printf("ok: word counts of files equal the reference\n");
}

static void test_generated(void)
{
    gv_mr_zipf_t *z   = gv_mr_zipf_new(500, 1.1, 7);
    ref_wc_t     *ref = ref_wc_new();
    gv_mr_opts_t  o   = {.key_size = 0, .val_size = 8,
                         .combine = gv_hashmap_sum_i64, .local_combine = 1};
    gv_mr_t      *mr;
    char         *buf = malloc(GV_MR_ZIPF_PIECE);
    int64_t       i;

    MR_CHECK((z != NULL) && (buf != NULL), "zipf model");
    for (i = 0; i < 37; i++) {
        size_t n = gv_mr_zipf_piece(i, buf, GV_MR_ZIPF_PIECE, z);
        MR_CHECK((n == GV_MR_ZIPF_PIECE) && (buf[n - 1] == '\n'),
                 "piece %lld: %zu bytes", (long long)i, n);
        ref_wc_text(ref, buf, n);
    }
    MR_OK(gv_mr_create(&o, &mr));
    MR_OK(gv_mr_run_generated(mr, 37, GV_MR_ZIPF_PIECE, gv_mr_zipf_piece, z,
                              gv_mr_map_words, NULL));
    check_counts(mr, ref, "zipf corpus");
    gv_mr_destroy(mr);
    MR_CHECK(ref_wc_count(ref, "a", 1) > ref_wc_count(ref, "b", 1),
             "rank 1 is not the most frequent word");
    free(buf);
    ref_wc_free(ref);
    gv_mr_zipf_free(z);
    if (gv_rank() == 0)
        printf("ok: a generated Zipf corpus counted as the reference\n");
}

static void test_errors(void)
{
    gv_mr_opts_t o = {.key_size = 0, .val_size = 8,
                      .combine = gv_hashmap_sum_i64, .local_combine = 1};
    gv_mr_t     *mr;
    const char  *files[2];
    char         missing[128];
    char        *big = malloc(1500);

    memset(big, 'x', 1500);
    put_file("big.txt", big, 1500, 6);
    gv_coll_barrier();
    snprintf(missing, sizeof(missing), "%s/no-such-file.txt", dir);
    MR_OK(gv_mr_create(&o, &mr));
    files[0] = paths[1];
    files[1] = missing;
    MR_CHECK(gv_mr_run_files(mr, files, 2, gv_mr_map_words, NULL) ==
             GV_ERR_IO, "a missing file was not GV_ERR_IO");
    files[0] = paths[6];
    MR_CHECK(gv_mr_run_files(mr, files, 1, gv_mr_map_words, NULL) ==
             GV_ERR_INVALID, "a word of 1500 bytes was not GV_ERR_INVALID");
    gv_mr_destroy(mr);
    o.combine = NULL;
    MR_CHECK(gv_mr_create(&o, &mr) == GV_ERR_INVALID, "no combine accepted");
    free(big);
    if (gv_rank() == 0)
        printf("ok: a missing file, a word too long and bad options refused\n");
}

/* Fixed keys from an array, without the combiner: key i % 97, value i. */
static void map_mod(gv_mr_t *mr, int64_t i, const void *elem, void *arg)
{
    int64_t v, k;

    (void)arg;
    memcpy(&v, elem, 8);
    k = v % 97;
    gv_mr_emit(mr, &k, 8, &v);
}

static void fill_idx(int64_t i, void *elem, void *arg)
{
    (void)arg;
    memcpy(elem, &i, 8);
}

static void test_fixed(void)
{
    const int64_t     n = 10007;
    gv_array_t       *a, *out;
    gv_hashmap_t     *map;
    gv_hashmap_opts_t ho = {0};
    gv_mr_opts_t      o = {.key_size = 8, .val_size = 8,
                           .combine = gv_hashmap_sum_i64};
    gv_mr_t          *mr;
    int64_t           k, want, got, i, d;

    MR_OK(gv_array_create(n, 8, GV_DIST_BLOCK, 0, &a));
    MR_OK(gv_array_forall(a, 0, fill_idx, NULL, NULL));
    MR_OK(gv_mr_create(&o, &mr));
    MR_OK(gv_mr_run_array(mr, a, map_mod, NULL));
    MR_OK(gv_mr_size(mr, &d));
    MR_CHECK(d == 97, "%lld keys, not 97", (long long)d);
    MR_OK(gv_hashmap_create(8, 8, &ho, &map));
    MR_OK(gv_mr_to_hashmap(mr, map));
    MR_OK(gv_array_create(97, 8, GV_DIST_BLOCK, 0, &out));
    MR_OK(gv_mr_to_array(mr, out));
    if (gv_rank() == gv_nranks() - 1)
        for (k = 0; k < 97; k++) {
            for (want = 0, i = k; i < n; i += 97)
                want += i;
            MR_OK(gv_hashmap_lookup_i64(map, k, &got));
            MR_CHECK(got == want, "key %lld: %lld in the map, want %lld",
                     (long long)k, (long long)got, (long long)want);
            MR_OK(gv_array_get(out, k, &got));
            MR_CHECK(got == want, "key %lld: %lld in the array, want %lld",
                     (long long)k, (long long)got, (long long)want);
        }
    gv_coll_barrier();
    gv_array_destroy(out);
    gv_hashmap_destroy(map);
    gv_mr_destroy(mr);
    gv_array_destroy(a);
    if (gv_rank() == 0)
        printf("ok: fixed keys from an array into a hash map and an array\n");
}

static void kmeans_case(int64_t n, int dim, int k, int comps, int iters,
                        double tol)
{
    gv_array_t *pts;
    gv_kmeans_t km = {.k = k, .dim = dim, .max_iter = iters, .tol = tol};
    double     *all = malloc(sizeof(double) * (size_t)(n * dim));
    double     *c   = malloc(sizeof(double) * (size_t)(k * dim));
    double     *rc  = malloc(sizeof(double) * (size_t)(k * dim));
    double      sse, moved;
    int64_t     i;
    int         it;

    MR_OK(gv_array_create(n, sizeof(double) * (size_t)dim, GV_DIST_BLOCK, 0,
                          &pts));
    MR_OK(gv_mr_gen_gaussian(pts, dim, comps, 1.5, 42));
    MR_OK(gv_array_get_range(pts, 0, n, all));
    for (i = 0; i < k; i++)
        memcpy(c + i * dim, all + (i * n / k) * dim, sizeof(double) * (size_t)dim);
    memcpy(rc, c, sizeof(double) * (size_t)(k * dim));
    gv_coll_barrier();
    MR_OK(gv_mr_kmeans(pts, c, &km));
    it = ref_kmeans(all, n, dim, k, rc, iters, tol, &sse, &moved);
    MR_CHECK(it == km.iters, "k-means ran %d iterations, reference %d",
             km.iters, it);
    for (i = 0; i < k * dim; i++)
        MR_CHECK(fabs(c[i] - rc[i]) <= 1e-9, "centre %lld coordinate %lld: "
                 "%.17g, reference %.17g", (long long)(i / dim),
                 (long long)(i % dim), c[i], rc[i]);
    MR_CHECK(fabs(km.sse - sse) <= 1e-9 * fabs(sse), "sse %.17g, reference "
             "%.17g", km.sse, sse);
    gv_array_destroy(pts);
    free(all);
    free(c);
    free(rc);
}

static void test_kmeans(void)
{
    kmeans_case(4001, 3, 6, 4, 7, 0);
    kmeans_case(3000, 2, 2, 2, 50, 1e-6);
    kmeans_case(2500, 8, 40, 10, 4, 0);
    if (gv_rank() == 0)
        printf("ok: k-means equals a sequential Lloyd's within 1e-9\n");
}

static void test_points(void)
{
    const int64_t n = 1001;
    const int     dim = 3;
    float         f[1001 * 3];
    double        want[1001 * 3], got[1001 * 3];
    gv_array_t   *pts;
    int64_t       i;

    for (i = 0; i < n * dim; i++) {
        f[i]    = (float)(i * 0.25 - 7.0);
        want[i] = f[i];
    }
    put_file("pts.f32", (const char *)f, sizeof(f), 7);
    gv_coll_barrier();
    MR_OK(gv_mr_load_points(paths[7], dim, 1, &pts));
    MR_CHECK(gv_array_size(pts) == n, "%lld points", (long long)gv_array_size(pts));
    MR_OK(gv_array_get_range(pts, 0, n, got));
    MR_CHECK(memcmp(got, want, sizeof(got)) == 0, "points differ from the file");
    gv_array_destroy(pts);
    /* 1001 * 12 bytes is no whole number of float64 points of 3. */
    MR_CHECK(gv_mr_load_points(paths[7], dim, 0, &pts) == GV_ERR_INVALID,
             "a file of no whole number of points was accepted");
    MR_CHECK(gv_mr_load_points(paths[6], 7, 1, &pts) == GV_ERR_INVALID,
             "1500 bytes accepted as points of 7 float32");
    if (gv_rank() == 0)
        printf("ok: points from a float32 file; bad sizes refused\n");
}

static void body(void *arg)
{
    (void)arg;
    make_files();
    test_wordcount();
    test_generated();
    test_errors();
    test_fixed();
    test_kmeans();
    test_points();
    gv_coll_barrier();
    if (gv_rank() == 0) {
        int i;
        for (i = 0; i < 8; i++)
            unlink(paths[i]);
        rmdir(dir);
        printf("ok: fw_mr on %d ranks\n", gv_nranks());
    }
}

int main(int argc, char **argv)
{
    mr_init(&argc, &argv);
    MR_OK(gv_run_all(body, NULL, 0));
    gv_finalize();
    return 0;
}
