/* gvmr: MapReduce programs on the frameworks library: word count (files
 * or a generated Zipf corpus), k-means (a binary points file or a
 * generated Gaussian mixture), and the generators that write their inputs.
 * Run under gvrun; the last line is key=value check values.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <grapevine.h>
#include <grapevine/fw/mapreduce.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: gvrun -n N gvmr COMMAND [options]\n"
    "  wordcount [--top K] FILE...       count the words of the files (read\n"
    "                                    in parallel by byte ranges)\n"
    "  wordcount --generate SIZE [--vocab V] [--zipf S] [--seed X] [--top K]\n"
    "                                    count a Zipf corpus made in memory\n"
    "  gencorpus --size SIZE --out FILE [--vocab V] [--zipf S] [--seed X]\n"
    "                                    write that corpus to FILE\n"
    "  kmeans --points FILE --dim D [--f32] --k K [--iters N] [--tol T]\n"
    "  kmeans --generate N --dim D --k K [--components C] [--sigma S]\n"
    "         [--seed X] [--iters N] [--tol T]\n"
    "  genpoints --n N --dim D --out FILE [--components C] [--sigma S]\n"
    "            [--seed X]              write float64 points to FILE\n"
    "SIZE takes k, m, g suffixes (powers of 1024). The corpus: V words (default\n"
    "100000), word rank r drawn with probability ~ 1/r^S (S default 1.0),\n"
    "seed default 1. Points: C Gaussian components (default 10) with means\n"
    "uniform in [-10,10)^D and standard deviation S (default 1.0); k-means\n"
    "starts from the points i*N/K, runs N iterations (default 10) or until no\n"
    "centre moves more than T (default 0: all iterations).\n";

typedef struct {
    const char  *cmd;
    const char **files;
    int          nfiles, top, dim, k, iters, f32, comps;
    int64_t      size, n, vocab;
    double       zipf, sigma, tol;
    uint64_t     seed;
    const char  *out, *points;
} cfg_t;

static cfg_t cfg;
static int   exit_code;

static int bad_usage(const char *fmt, const char *what)
{
    if (gv_rank() == 0) {
        fprintf(stderr, "gvmr: ");
        fprintf(stderr, fmt, what);
        fprintf(stderr, "\n%s", usage_text);
    }
    return 2;
}

/* A size with an optional k/m/g suffix; -1 if malformed. */
static int64_t parse_size(const char *s)
{
    char   *end;
    int64_t v;

    errno = 0;
    v     = strtoll(s, &end, 10);
    if ((errno != 0) || (end == s) || (v < 0))
        return -1;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    return (*end == '\0') ? v : -1;
}

static int parse_double(const char *s, double *d_p)
{
    char *end;

    errno = 0;
    *d_p  = strtod(s, &end);
    return (errno == 0) && (end != s) && (*end == '\0');
}

static int parse_args(int argc, char **argv)
{
    int i;

    if (argc < 2)
        return bad_usage("%s", "no command given");
    cfg.cmd   = argv[1];
    cfg.top   = 10;
    cfg.iters = 10;
    cfg.comps = 10;
    cfg.sigma = 1.0;
    cfg.vocab = 100000;
    cfg.zipf  = 1.0;
    cfg.seed  = 1;
    cfg.size  = -1;
    cfg.n     = -1;
    cfg.files = calloc((size_t)argc, sizeof(char *));
    if (strcmp(cfg.cmd, "wordcount") && strcmp(cfg.cmd, "gencorpus") &&
        strcmp(cfg.cmd, "kmeans") && strcmp(cfg.cmd, "genpoints"))
        return bad_usage("unknown command '%s' (accepted: wordcount, "
                         "gencorpus, kmeans, genpoints)", cfg.cmd);
    for (i = 2; i < argc; i++) {
        const char *o = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        int64_t     x;

        if (o[0] != '-' || o[1] == '\0') {
            if (strcmp(cfg.cmd, "wordcount") != 0)
                return bad_usage("unexpected argument '%s'", o);
            cfg.files[cfg.nfiles++] = o;
            continue;
        }
        if (!strcmp(o, "--f32")) {
            cfg.f32 = 1;
            continue;
        }
        if (v == NULL)
            return bad_usage("option %s needs a value", o);
        i++;
        if (!strcmp(o, "--generate") || !strcmp(o, "--size")) {
            x = parse_size(v);
            if (x <= 0)
                return bad_usage("bad size '%s' (a positive number with an "
                                 "optional k, m or g)", v);
            if (!strcmp(cfg.cmd, "kmeans") && !strcmp(o, "--generate"))
                cfg.n = x;
            else
                cfg.size = x;
        } else if (!strcmp(o, "--n")) {
            if ((cfg.n = parse_size(v)) <= 0)
                return bad_usage("bad point count '%s'", v);
        } else if (!strcmp(o, "--vocab")) {
            if ((cfg.vocab = parse_size(v)) <= 0)
                return bad_usage("bad vocabulary size '%s'", v);
        } else if (!strcmp(o, "--top") || !strcmp(o, "--dim") ||
                   !strcmp(o, "--k") || !strcmp(o, "--iters") ||
                   !strcmp(o, "--components")) {
            x = parse_size(v);
            if ((x <= 0) || (x > 1000000000))
                return bad_usage("bad number '%s'", v);
            *(!strcmp(o, "--top") ? &cfg.top : !strcmp(o, "--dim") ? &cfg.dim
              : !strcmp(o, "--k") ? &cfg.k : !strcmp(o, "--iters") ? &cfg.iters
              : &cfg.comps) = (int)x;
        } else if (!strcmp(o, "--zipf")) {
            if (!parse_double(v, &cfg.zipf) || !(cfg.zipf > 0))
                return bad_usage("bad Zipf exponent '%s' (> 0)", v);
        } else if (!strcmp(o, "--sigma")) {
            if (!parse_double(v, &cfg.sigma) || !(cfg.sigma >= 0))
                return bad_usage("bad sigma '%s' (>= 0)", v);
        } else if (!strcmp(o, "--tol")) {
            if (!parse_double(v, &cfg.tol) || !(cfg.tol >= 0))
                return bad_usage("bad tolerance '%s' (>= 0)", v);
        } else if (!strcmp(o, "--seed")) {
            if ((x = parse_size(v)) < 0)
                return bad_usage("bad seed '%s'", v);
            cfg.seed = (uint64_t)x;
        } else if (!strcmp(o, "--out")) {
            cfg.out = v;
        } else if (!strcmp(o, "--points")) {
            cfg.points = v;
        } else {
            return bad_usage("unknown option '%s'", o);
        }
    }
    if (!strcmp(cfg.cmd, "wordcount") &&
        ((cfg.nfiles > 0) == (cfg.size > 0)))
        return bad_usage("%s", "wordcount takes FILE... or --generate SIZE");
    if (!strcmp(cfg.cmd, "gencorpus") && ((cfg.size <= 0) || !cfg.out))
        return bad_usage("%s", "gencorpus needs --size and --out");
    if (!strcmp(cfg.cmd, "kmeans") &&
        (((cfg.points != NULL) == (cfg.n > 0)) || (cfg.dim == 0) ||
         (cfg.k == 0)))
        return bad_usage("%s", "kmeans needs --points FILE or --generate N, "
                         "and --dim and --k");
    if (!strcmp(cfg.cmd, "genpoints") &&
        ((cfg.n <= 0) || (cfg.dim == 0) || !cfg.out))
        return bad_usage("%s", "genpoints needs --n, --dim and --out");
    return 0;
}

static void say(const char *fmt, double t)
{
    if (gv_rank() == 0) {
        fprintf(stderr, fmt, t);
        fflush(stderr);
    }
}

static void sum_counts(const void *key, size_t klen, const void *val,
                       void *arg)
{
    int64_t v;

    (void)key;
    (void)klen;
    memcpy(&v, val, 8);
    *(int64_t *)arg += v;
}

static int wordcount(void)
{
    gv_mr_opts_t  o = {.key_size = 0, .val_size = 8,
                       .combine = gv_hashmap_sum_i64, .local_combine = 1,
                       .progress = 1};
    gv_mr_t      *mr;
    gv_mr_zipf_t *z = NULL;
    gv_mr_top_t  *top;
    gv_status_t   status;
    int64_t       total = 0, distinct;
    double        t0;
    int           n, i;

    if (cfg.size > 0) {
        z = gv_mr_zipf_new(cfg.vocab, cfg.zipf, cfg.seed);
        if (z == NULL)
            return 1;
    }
    if (gv_mr_create(&o, &mr) != GV_OK)
        return 1;
    say("gvmr: counting words...\n", 0);
    t0 = gv_wtime();
    if (z != NULL)
        status = gv_mr_run_generated(mr, (cfg.size + GV_MR_ZIPF_PIECE - 1) /
                                             GV_MR_ZIPF_PIECE,
                                     GV_MR_ZIPF_PIECE, gv_mr_zipf_piece, z,
                                     gv_mr_map_words, NULL);
    else
        status = gv_mr_run_files(mr, cfg.files, cfg.nfiles, gv_mr_map_words,
                                 NULL);
    t0 = gv_wtime() - t0;
    if (status != GV_OK) {
        gv_mr_destroy(mr);
        gv_mr_zipf_free(z);
        return 1;
    }
    gv_mr_forall(mr, sum_counts, &total);
    gv_allreduce(&total, 1, GV_INT64, GV_SUM);
    gv_mr_size(mr, &distinct);
    top = calloc((size_t)cfg.top, sizeof(*top));
    if ((top == NULL) || (gv_mr_top(mr, cfg.top, top, &n) != GV_OK))
        return 1;
    if (gv_rank() == 0) {
        for (i = 0; i < n; i++)
            printf("%12lld %s\n", (long long)top[i].value, top[i].key);
        printf("words=%lld distinct=%lld seconds=%.6f\n", (long long)total,
               (long long)distinct, t0);
    }
    free(top);
    gv_mr_destroy(mr);
    gv_mr_zipf_free(z);
    return 0;
}

static int gencorpus(void)
{
    gv_mr_zipf_t *z = gv_mr_zipf_new(cfg.vocab, cfg.zipf, cfg.seed);
    int64_t       np = (cfg.size + GV_MR_ZIPF_PIECE - 1) / GV_MR_ZIPF_PIECE;
    int64_t       lo = np * gv_rank() / gv_nranks(),
                  hi = np * (gv_rank() + 1) / gv_nranks(), i, bad = 0;
    char         *buf = malloc(GV_MR_ZIPF_PIECE);
    int           fd = -1;

    if ((z == NULL) || (buf == NULL))
        bad = 1;
    if (!bad && (gv_rank() == 0)) {
        fd = open(cfg.out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if ((fd < 0) || (ftruncate(fd, np * GV_MR_ZIPF_PIECE) != 0)) {
            fprintf(stderr, "gvmr: cannot create %s: %s\n", cfg.out,
                    strerror(errno));
            bad = 1;
        }
    }
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    if (!bad && (gv_rank() != 0)) {
        fd = open(cfg.out, O_WRONLY);
        if (fd < 0) {
            fprintf(stderr, "gvmr: cannot open %s: %s\n", cfg.out,
                    strerror(errno));
            bad = 1;
        }
    }
    for (i = lo; !bad && (i < hi); i++) {
        gv_mr_zipf_piece(i, buf, GV_MR_ZIPF_PIECE, z);
        if (pwrite(fd, buf, GV_MR_ZIPF_PIECE, i * GV_MR_ZIPF_PIECE) !=
            GV_MR_ZIPF_PIECE) {
            fprintf(stderr, "gvmr: cannot write %s: %s\n", cfg.out,
                    strerror(errno));
            bad = 1;
        }
    }
    if ((fd >= 0) && (close(fd) != 0))
        bad = 1;
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    free(buf);
    gv_mr_zipf_free(z);
    if (!bad && (gv_rank() == 0))
        printf("bytes=%lld pieces=%lld\n",
               (long long)(np * GV_MR_ZIPF_PIECE), (long long)np);
    return bad ? 1 : 0;
}

static int kmeans(void)
{
    gv_array_t *pts;
    gv_kmeans_t km = {.k = cfg.k, .dim = cfg.dim, .max_iter = cfg.iters,
                      .tol = cfg.tol, .progress = 1};
    double     *c, sum = 0, t0;
    int64_t     n, i;
    gv_status_t status;

    t0 = gv_wtime();
    if (cfg.points != NULL) {
        if (gv_mr_load_points(cfg.points, cfg.dim, cfg.f32, &pts) != GV_OK)
            return 1;
    } else {
        if (gv_array_create(cfg.n, sizeof(double) * (size_t)cfg.dim,
                            GV_DIST_BLOCK, 0, &pts) != GV_OK)
            return 1;
        if (gv_mr_gen_gaussian(pts, cfg.dim, cfg.comps, cfg.sigma,
                               cfg.seed) != GV_OK) {
            gv_array_destroy(pts);
            return 1;
        }
    }
    n = gv_array_size(pts);
    if (gv_rank() == 0)
        fprintf(stderr, "gvmr: %lld points of %d coordinates ready in %.3f s\n",
                (long long)n, cfg.dim, gv_wtime() - t0);
    if (n < cfg.k) {
        if (gv_rank() == 0)
            fprintf(stderr, "gvmr: %lld points, fewer than k %d\n",
                    (long long)n, cfg.k);
        gv_array_destroy(pts);
        return 1;
    }
    c = malloc(sizeof(double) * (size_t)cfg.k * (size_t)cfg.dim);
    if (c == NULL)
        return 1;
    if (gv_rank() == 0)
        for (i = 0; i < cfg.k; i++)
            gv_array_get(pts, i * n / cfg.k, c + i * cfg.dim);
    gv_broadcast(0, c, sizeof(double) * (size_t)cfg.k * (size_t)cfg.dim);
    t0     = gv_wtime();
    status = gv_mr_kmeans(pts, c, &km);
    t0     = gv_wtime() - t0;
    for (i = 0; i < (int64_t)cfg.k * cfg.dim; i++)
        sum += c[i];
    if ((status == GV_OK) && (gv_rank() == 0))
        printf("k=%d iters=%d moved=%.9f checksum=%.12e sse=%.12e "
               "seconds=%.6f\n", cfg.k, km.iters, km.moved, sum, km.sse, t0);
    free(c);
    gv_array_destroy(pts);
    return (status == GV_OK) ? 0 : 1;
}

static int genpoints(void)
{
    gv_array_t *pts;
    int64_t     bad = 0, lo, cnt;
    size_t      len;
    int         fd = -1;

    if (gv_array_create(cfg.n, sizeof(double) * (size_t)cfg.dim,
                        GV_DIST_BLOCK, 0, &pts) != GV_OK)
        return 1;
    if (gv_mr_gen_gaussian(pts, cfg.dim, cfg.comps, cfg.sigma, cfg.seed) !=
        GV_OK) {
        gv_array_destroy(pts);
        return 1;
    }
    if (gv_rank() == 0) {
        fd = open(cfg.out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            fprintf(stderr, "gvmr: cannot create %s: %s\n", cfg.out,
                    strerror(errno));
            bad = 1;
        }
    }
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    if (!bad && (gv_rank() != 0) && ((fd = open(cfg.out, O_WRONLY)) < 0)) {
        fprintf(stderr, "gvmr: cannot open %s: %s\n", cfg.out, strerror(errno));
        bad = 1;
    }
    lo  = gv_array_local_lo(pts);
    cnt = gv_array_local_count(pts);
    len = (size_t)cnt * sizeof(double) * (size_t)cfg.dim;
    if (!bad && (pwrite(fd, gv_array_local(pts), len,
                        (off_t)((size_t)lo * sizeof(double) * (size_t)cfg.dim)) !=
                 (ssize_t)len)) {
        fprintf(stderr, "gvmr: cannot write %s: %s\n", cfg.out, strerror(errno));
        bad = 1;
    }
    if (fd >= 0)
        close(fd);
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    gv_array_destroy(pts);
    if (!bad && (gv_rank() == 0))
        printf("points=%lld dim=%d bytes=%lld\n", (long long)cfg.n, cfg.dim,
               (long long)(cfg.n * 8 * cfg.dim));
    return bad ? 1 : 0;
}

static void body(void *arg)
{
    (void)arg;
    if (!strcmp(cfg.cmd, "wordcount"))
        exit_code = wordcount();
    else if (!strcmp(cfg.cmd, "gencorpus"))
        exit_code = gencorpus();
    else if (!strcmp(cfg.cmd, "kmeans"))
        exit_code = kmeans();
    else
        exit_code = genpoints();
}

int main(int argc, char **argv)
{
    if ((argc == 2) && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (gv_init(&argc, &argv) != GV_OK)
        return 1;
    exit_code = parse_args(argc, argv);
    if (exit_code == 0)
        gv_run_all(body, NULL, 0);
    gv_finalize();
    return exit_code;
}
