/* The perf tools' machine-readable output: --csv or --format csv|json,
 * -h/--help, sizes with k/m/g suffixes, and a header naming what was
 * measured where (version, commit, date, host, transport, ranks, library
 * versions, the command line). Every tool prints, per size or
 * configuration, the median, minimum and maximum of its samples and how
 * many there were; the columns are described in perf/README.md.
 *
 * A tool adds OUT_LONGOPTS to its getopt_long() options and OUT_USAGE to
 * its usage text, hands each option to out_option() first, and on rank 0
 * calls out_begin() once, out_row() per result and out_end() at the end;
 * its own text lines print only while !out_machine().
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_PERF_OUT_H
#define GV_PERF_OUT_H

#include <grapevine.h>

#include "core/core.h" /* gv__version_commit */
#include "core/env.h"  /* gv__parse_size: the GV_* variables' sizes */
#include "hop.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if GV_HAVE_HWLOC
#include <hwloc.h>
#endif
#if GV_HAVE_UCX
#include <ucp/api/ucp.h>
#endif
#if GV_HAVE_OFI
#include <rdma/fabric.h>
#endif
#if GV_HAVE_MPI
#include <mpi.h>
#endif

typedef enum { OUT_TEXT = 0, OUT_CSV, OUT_JSON } out_fmt_t;

static out_fmt_t out_fmt;
static int       out_nrows;
static char      out_cmdline[1024];
static const char *out_tool = "", *out_transport = "";
static int         out_ranks;

#define OUT_OPT_CSV    0x4f01
#define OUT_OPT_FORMAT 0x4f02

/* The options every tool takes, for its getopt_long() table. */
#define OUT_LONGOPTS                                        \
    {"csv", no_argument, NULL, OUT_OPT_CSV},                \
    {"format", required_argument, NULL, OUT_OPT_FORMAT},    \
    {"help", no_argument, NULL, 'h'}

/* Their lines in a usage text. */
#define OUT_USAGE                                                        \
    "  --csv          results as CSV (same as --format csv)\n"           \
    "  --format F     text (default), csv or json (perf/README.md)\n"    \
    "  -h, --help     this text\n"

/* Whether the output is CSV or JSON (a tool's own lines are then left
 * out, so that the output parses). */
static inline int out_machine(void)
{
    return out_fmt != OUT_TEXT;
}

/* Option @a c of tool @a prog, whose usage text is @a usage: --csv,
 * --format (text, csv, json; else a usage error, exit 2) and -h/--help
 * (the usage on stdout, exit 0). Returns 1 if it was one of those. */
static inline int out_option(const char *prog, const char *usage, int c)
{
    switch (c) {
    case OUT_OPT_CSV: out_fmt = OUT_CSV; return 1;
    case OUT_OPT_FORMAT:
        if (strcmp(optarg, "text") == 0)
            out_fmt = OUT_TEXT;
        else if (strcmp(optarg, "csv") == 0)
            out_fmt = OUT_CSV;
        else if (strcmp(optarg, "json") == 0)
            out_fmt = OUT_JSON;
        else
            hop_fail(prog, usage, "--format %s: accepted text, csv or json",
                     optarg);
        return 1;
    case 'h':
        fputs(usage, stdout);
        fflush(stdout);
        exit(0);
    default: return 0;
    }
}

/* Option @a name given size @a arg: bytes as the GV_* variables take them
 * ("4096", "64k", "1m", "1g"; k = 1024), from @a lo to @a hi, else a usage
 * error naming the option, the value and what is accepted (exit 2). */
static inline uint64_t out_arg_size(const char *prog, const char *usage,
                                    const char *name, const char *arg,
                                    uint64_t lo, uint64_t hi)
{
    uint64_t v;

    if ((gv__parse_size(arg, &v) != GV_OK) || (v < lo) || (v > hi))
        hop_fail(prog, usage, "%s %s: accepted %llu..%llu bytes, digits "
                 "with an optional k, m or g suffix (64k, 1m)", name, arg,
                 (unsigned long long)lo, (unsigned long long)hi);
    return v;
}

/* Remember the command line for the header (call before getopt, which
 * may permute argv). */
static inline void out_args(int argc, char **argv)
{
    size_t len = 0, cap = sizeof(out_cmdline) - 1;
    int    i;

    for (i = 1; (i < argc) && (len < cap); i++) {
        const char *p;

        if (i > 1)
            out_cmdline[len++] = ' ';
        for (p = argv[i]; (*p != '\0') && (len < cap); p++)
            /* Keep the header one field: no quotes, commas or newlines. */
            out_cmdline[len++] = ((*p == '"') || (*p == ',') ||
                                  (*p == '\\') || (*p < ' ')) ? '_' : *p;
    }
    out_cmdline[len] = '\0';
}

/* For the tools whose options hop_parse() reads (a2a_bw, hop_*, bw_*):
 * take --csv, --format F and --format=F (else a usage error naming the
 * value, exit 2) and --help (as -h) out of @a argv, before hop_parse(),
 * which then also names them in its usage line. Records the command
 * line first (out_args). */
static inline void out_strip(const char *prog, int *argc, char **argv)
{
    int i, j = 1;

    out_args(*argc, argv);
    hop_out_options = 1;
    for (i = 1; i < *argc; i++) {
        const char *f = NULL;

        if (strcmp(argv[i], "--") == 0) {
            while (i < *argc)
                argv[j++] = argv[i++];
            break;
        }
        if (strcmp(argv[i], "--csv") == 0)
            f = "csv";
        else if (strncmp(argv[i], "--format=", 9) == 0)
            f = argv[i] + 9;
        else if (strcmp(argv[i], "--format") == 0) {
            if (i + 1 == *argc)
                hop_fail(prog, NULL, "--format: no value given; accepted "
                         "text, csv or json");
            f = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            argv[j++] = "-h";
            continue;
        }
        if (f == NULL) {
            argv[j++] = argv[i];
            continue;
        }
        optarg = (char *)f;
        out_option(prog, NULL, OUT_OPT_FORMAT);
    }
    argv[j] = NULL;
    *argc   = j;
}

/* The versions of the libraries linked in, "ucx-1.14.1 libfabric-1.17
 * hwloc-2.9.0 openmpi-4.1.4" (those the build has). */
static inline void out_libs(char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = '\0';
#if GV_HAVE_UCX
    at += (size_t)snprintf(buf + at, len - at, "%sucx-%s", at ? " " : "",
                           ucp_get_version_string());
#endif
#if GV_HAVE_OFI
    if (at < len) {
        uint32_t v = fi_version();

        at += (size_t)snprintf(buf + at, len - at, "%slibfabric-%u.%u",
                               at ? " " : "", FI_MAJOR(v), FI_MINOR(v));
    }
#endif
#if GV_HAVE_HWLOC
    if (at < len) {
        unsigned v = hwloc_get_api_version();

        at += (size_t)snprintf(buf + at, len - at, "%shwloc-%u.%u.%u",
                               at ? " " : "", v >> 16, (v >> 8) & 0xff,
                               v & 0xff);
    }
#endif
#if GV_HAVE_MPI && defined(OMPI_MAJOR_VERSION)
    if (at < len)
        at += (size_t)snprintf(buf + at, len - at, "%sopenmpi-%d.%d.%d",
                               at ? " " : "", OMPI_MAJOR_VERSION,
                               OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION);
#endif
    (void)at;
}

/* The header: in CSV a comment line "# tool=... version=... commit=...
 * date=... host=... transport=... ranks=... libs=\"...\" args=\"...\""
 * then the column names; in JSON the opening of the document and its
 * "meta" object. Nothing in text. Rank 0 only. */
static inline void out_begin(const char *tool, const char *transport,
                             int ranks)
{
    char      host[256] = "unknown", date[32] = "unknown", libs[256];
    time_t    now       = time(NULL);
    struct tm tm;

    if (!out_machine())
        return;
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = '\0';
    if (gmtime_r(&now, &tm) != NULL)
        strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
    out_libs(libs, sizeof(libs));
    out_nrows     = 0;
    out_tool      = tool;
    out_transport = transport;
    out_ranks     = ranks;
    if (out_fmt == OUT_CSV) {
        printf("# tool=%s version=%s commit=%s date=%s host=%s "
               "transport=%s ranks=%d libs=\"%s\" args=\"%s\"\n",
               tool, gv_version(), gv__version_commit(), date, host,
               transport, ranks, libs, out_cmdline);
        printf("tool,transport,ranks,metric,config,bytes,unit,median,min,"
               "max,iters\n");
    } else {
        printf("{\"meta\": {\"tool\": \"%s\", \"version\": \"%s\", "
               "\"commit\": \"%s\", \"date\": \"%s\", \"host\": \"%s\", "
               "\"transport\": \"%s\", \"ranks\": %d, \"libs\": \"%s\", "
               "\"args\": \"%s\"},\n \"rows\": [",
               tool, gv_version(), gv__version_commit(), date, host,
               transport, ranks, libs, out_cmdline);
    }
    fflush(stdout);
}

/* One result: @a metric ("lat", "bw", "gups"...) of configuration
 * @a config (a word such as "agg" or "impl=pthread,workers=4"; "" for
 * none) at @a bytes bytes (negative: no size), in @a unit, over the @a n
 * samples @a v (sorted here, in every format, so that a text line
 * may read v[n / 2] after; n > 0), under out_begin()'s tool, transport
 * and ranks: median (v[n/2] of the sorted
 * samples), minimum, maximum and n. Rank 0 only. */
static inline void out_row(const char *metric, const char *config,
                           long long bytes, const char *unit, double *v,
                           int n)
{
    char b[32] = "";

    if (n <= 0)
        return;
    qsort(v, (size_t)n, sizeof(*v), hop_cmp_double);
    if (!out_machine())
        return;
    if (out_fmt == OUT_CSV) {
        if (bytes >= 0)
            snprintf(b, sizeof(b), "%lld", bytes);
        printf("%s,%s,%d,%s,%s%s%s,%s,%s,%.6g,%.6g,%.6g,%d\n", out_tool,
               out_transport, out_ranks, metric,
               (strchr(config, ',') != NULL) ? "\"" : "", config,
               (strchr(config, ',') != NULL) ? "\"" : "", b, unit,
               v[n / 2], v[0], v[n - 1], n);
    } else {
        snprintf(b, sizeof(b), (bytes >= 0) ? "%lld" : "null", bytes);
        printf("%s\n  {\"tool\": \"%s\", \"transport\": \"%s\", \"ranks\": "
               "%d, \"metric\": \"%s\", \"config\": \"%s\", \"bytes\": %s, "
               "\"unit\": \"%s\", \"median\": %.6g, \"min\": %.6g, "
               "\"max\": %.6g, \"iters\": %d}",
               (out_nrows > 0) ? "," : "", out_tool, out_transport,
               out_ranks, metric,
               config, b, unit, v[n / 2], v[0], v[n - 1], n);
    }
    out_nrows++;
    fflush(stdout);
}

/* out_row() of one sample. */
static inline void out_row1(const char *metric, const char *config,
                            long long bytes, const char *unit, double value)
{
    out_row(metric, config, bytes, unit, &value, 1);
}

/* The end of the output (JSON closes its document). Rank 0 only. */
static inline void out_end(void)
{
    if (out_fmt == OUT_JSON)
        printf("]}\n");
    fflush(stdout);
}

/* A key=value summary field measured or not: " key=<value>" with
 * @a fmt, or " key=n/a" when !@a measured. */
static inline void out_kv(const char *key, const char *fmt, double value,
                          int measured)
{
    printf(" %s=", key);
    if (measured)
        printf(fmt, value);
    else
        printf("n/a");
}

/* The hop tools' result (perf/hop.h): each way's one-way time of every
 * round trip, half of @a rtt (cycle-counter ticks, @a ns_per_tick each),
 * as a "one_way" row in ns, config "way=<name>", @a size bytes. Converts
 * @a rtt in place. Rank 0 only. */
static inline void out_hop(int size, double **rtt, const int *n, int nways,
                           double ns_per_tick, const char *const *names)
{
    char cfg[48];
    int  w, i;

    for (w = 0; w < nways; w++) {
        for (i = 0; i < n[w]; i++)
            rtt[w][i] *= ns_per_tick / 2;
        snprintf(cfg, sizeof(cfg), "way=%s", names[w]);
        out_row("one_way", cfg, size, "ns", rtt[w], n[w]);
    }
}

#endif
