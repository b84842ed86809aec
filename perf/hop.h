/* What perf/hop_mpi.c, perf/hop_ofi.c and perf/hop_ucx.c share: their
 * options, their buffers and the median they report; perf/bw_ucx.c and
 * perf/bw_mpi.c take the options parser, the ping handler and the
 * buffers, and bw_ucx.c (through perf/hop_ucp.h) the address swap too;
 * perf/a2a_bw.c takes the options parser and the buffers. The tools with
 * usage texts of their own (pingpong, putbw, uts, ctxswitch, lineping,
 * gups, gups_dsm) take the strict value parsers at the end (hop_arg_*).
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_PERF_HOP_H
#define GV_PERF_HOP_H

#include <grapevine.h>

#include "core/env.h" /* gv__parse_size: sizes as the GV_* variables take */
#include "stamp.h"

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    int blocks;   /* -b: blocks of each way */
    int per;      /* -k: round trips per block */
    int size;     /* -s: bytes per message */
} hop_opts_t;

#define HOP_SIZE_MAX    (4 << 20)  /* -s */
#define HOP_PER_MAX     500        /* -k when not given, ... */
#define HOP_PER_MIN     10         /* ... at least this many, ... */
#define HOP_BLOCK_BYTES (16 << 20) /* ... and this many bytes each way */
#define HOP_MBPS_FROM   4096       /* sizes that get MB/s fields too */

/* One option of a tool: its letter, what its value counts (for the usage
 * line), its range and its default. */
typedef struct {
    char        letter;
    const char *what;
    int         lo, hi, def;
} hop_flag_t;

#define HOP_FLAGS_MAX 8

/* Set by perf/out.h's out_strip(): the tool takes --csv and --format too,
 * and its usage line says so. */
static int hop_out_options;

/* The usage line of tool @a prog: "<prog>: <why>" first unless @a why is
 * NULL, in one write, so that the ranks' lines do not interleave. A usage
 * error (@a why given) goes to stderr and exits 2; -h (@a why NULL) to
 * stdout, exit 0. */
static inline void hop_usage(const char *prog, const hop_flag_t *flags, int n,
                             const char *why)
{
    char   line[1536];
    size_t len;
    int    i;

    line[0] = '\0';
    if (why != NULL)
        snprintf(line, sizeof(line), "%s: %s\n", prog, why);
    len = strlen(line);
    snprintf(line + len, sizeof(line) - len, "usage: %s", prog);
    for (i = 0; i < n; i++) {
        len = strlen(line);
        snprintf(line + len, sizeof(line) - len, " [-%c %s, %d..%d%s]",
                 flags[i].letter, flags[i].what, flags[i].lo, flags[i].hi,
                 (strcmp(flags[i].what, "bytes") == 0) ? ", or 64k, 1m" : "");
    }
    len = strlen(line);
    snprintf(line + len, sizeof(line) - len, "%s [-h]",
             hop_out_options ? " [--csv | --format text|csv|json]" : "");
    fprintf((why != NULL) ? stderr : stdout, "%s\n", line);
    exit((why != NULL) ? 2 : 0);
}

/* Parse the @a n options of @a flags into @a val, in the order of @a flags;
 * an option not given keeps its default. A value counting "bytes" takes a
 * k, m or g suffix as the GV_* variables do (64k, 1m). -h or --help
 * prints the usage line on stdout and exits 0. An unknown option, a missing value, a value
 * that is not a number in the option's range, or any argument that is not
 * an option is a usage error naming it, e.g. "hop_ofi: -s 9999999:
 * accepted 0..4194304" (exit 2). */
static inline void hop_parse(const char *prog, int argc, char **argv,
                             const hop_flag_t *flags, int n, int *val)
{
    char  optstring[2 * HOP_FLAGS_MAX + 3], why[256], *end;
    int   i, opt;
    long  v;

    if (n > HOP_FLAGS_MAX) {
        snprintf(why, sizeof(why), "%d options (at most %d)", n,
                 HOP_FLAGS_MAX);
        hop_usage(prog, flags, n, why);
    }
    optstring[0] = ':'; /* a missing value is ':', not '?' */
    for (i = 0; i < n; i++) {
        optstring[2 * i + 1] = flags[i].letter;
        optstring[2 * i + 2] = ':';
        val[i]               = flags[i].def;
    }
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0)
            hop_usage(prog, flags, n, NULL);
    optstring[2 * n + 1] = 'h';
    optstring[2 * n + 2] = '\0';
    opterr = 0; /* our messages, not getopt's */
    while ((opt = getopt(argc, argv, optstring)) != -1) {
        if (opt == 'h')
            hop_usage(prog, flags, n, NULL);
        /* A known option, or the one whose value is missing (':'). */
        for (i = 0; (i < n) && (flags[i].letter != opt) &&
                    ((opt != ':') || (flags[i].letter != optopt)); i++)
            ;
        if (i == n) {
            snprintf(why, sizeof(why), "-%c: unknown option", optopt);
            hop_usage(prog, flags, n, why);
        }
        if (opt == ':') {
            snprintf(why, sizeof(why), "-%c: no value; accepted %d..%d",
                     optopt, flags[i].lo, flags[i].hi);
            hop_usage(prog, flags, n, why);
        }
        if (strcmp(flags[i].what, "bytes") == 0) {
            uint64_t u;

            v   = (gv__parse_size(optarg, &u) != GV_OK) || (u > INT32_MAX)
                      ? -1 : (long)u;
            end = optarg + strlen(optarg);
        } else {
            v = strtol(optarg, &end, 10);
        }
        if ((*optarg == '\0') || (*end != '\0') || (v < flags[i].lo) ||
            (v > flags[i].hi)) {
            snprintf(why, sizeof(why), "-%c %s: accepted %d..%d%s", opt,
                     optarg, flags[i].lo, flags[i].hi,
                     (strcmp(flags[i].what, "bytes") == 0)
                         ? " bytes, digits with an optional k, m or g suffix"
                         : "");
            hop_usage(prog, flags, n, why);
        }
        val[i] = (int)v;
    }
    if (optind < argc) {
        snprintf(why, sizeof(why), "%s: unexpected argument; accepted "
                 "options only", argv[optind]);
        hop_usage(prog, flags, n, why);
    }
}

/* The hop tools' -b, -k and -s; -k 0 (not a value one can give) stands
 * for the default by size, which hop_opts_of() works out. */
static const hop_flag_t hop_flags[] = {
    {'b', "blocks", 1, 10000, 100},
    {'k', "round trips per block", HOP_PER_MIN, 100000, 0},
    {'s', "bytes", 0, HOP_SIZE_MAX, 8},
};

#define HOP_NFLAGS ((int)(sizeof(hop_flags) / sizeof(hop_flags[0])))

/* -k, when not given: 500 round trips, or as many as move HOP_BLOCK_BYTES
 * each way (10 at least), so that a block of large messages takes about
 * as long as one of small messages (at 1 GB/s, 2 ways x 100 blocks of
 * 16 MiB each way take 7 s). */
static inline int hop_per_default(int size)
{
    int per = (size > 0) ? HOP_BLOCK_BYTES / size : HOP_PER_MAX;

    return (per > HOP_PER_MAX) ? HOP_PER_MAX :
           (per < HOP_PER_MIN) ? HOP_PER_MIN : per;
}

static inline hop_opts_t hop_opts_of(const int *val)
{
    hop_opts_t o = {val[0], val[1], val[2]};

    if (o.per == 0)
        o.per = hop_per_default(o.size);
    return o;
}

/* -b, -k and -s, defaults 100, hop_per_default(-s) (500 up to 33,554
 * bytes) and 8; anything else is a usage error. */
static inline hop_opts_t hop_options(const char *prog, int argc, char **argv)
{
    int val[HOP_NFLAGS];

    hop_parse(prog, argc, argv, hop_flags, HOP_NFLAGS, val);
    return hop_opts_of(val);
}

static int hop_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* @a size bytes for tool @a prog, page-aligned as ucx_perftest's and
 * fi_pingpong's buffers are, in whole pages (one at least), every byte of
 * them zeroed: hop_ucx's 8-byte wire-up message goes out of a buffer of
 * -s bytes, which may be 0. After gv_init. */
static inline void *hop_page_alloc(const char *prog, size_t size)
{
    size_t len = (size > 0) ? (size + 4095) & ~(size_t)4095 : 4096;
    void  *p   = aligned_alloc(4096, len);

    if (p == NULL)
        gv_abort(1, "%s: no memory for %zu bytes", prog, size);
    memset(p, 0, len);
    return p;
}

/* The median of @a n values (sorts them, smallest first). */
static double hop_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), hop_cmp_double);
    return v[n / 2];
}

/* Half the median of @a n round trips (sorts them). */
static double hop_half_median(double *v, int n)
{
    return hop_median(v, n) / 2.0;
}

/* The Grapevine way, the same in every tool: hop_on_ping counts pings
 * (register it before gv_init, as hop_ping_id), and hop_gv_trip is one
 * round trip of perf/pingpong's: rank 0 pings and waits for the pong, rank
 * 1 waits for the ping and pongs. */
static volatile uint64_t hop_arrived;
static gv_am_id_t        hop_ping_id;

static inline void hop_on_ping(int src, const void *payload, size_t len,
                               void *arg)
{
    (void)src;
    (void)payload;
    (void)len;
    (void)arg;
    hop_arrived++;
}

static inline int hop_arrived_at_least(void *arg)
{
    return hop_arrived >= *(const uint64_t *)arg;
}

static inline void hop_gv_trip(int rank, int peer, const void *buf,
                               size_t size, uint64_t *target)
{
    ++*target;
    if (rank == 0)
        gv_am_send_now(peer, hop_ping_id, buf, size);
    gv_wait(hop_arrived_at_least, target);
    if (rank == 1)
        gv_am_send_now(peer, hop_ping_id, buf, size);
}

/* The library's own address (UCP worker address, libfabric endpoint
 * name) travels to the peer as a gv message (hop_swap_addr). */
#define HOP_ADDR_MAX   4096
#define HOP_ADDR_WAIT_S 10
static const char *hop_prog;
static gv_am_id_t  hop_addr_id;
static uint8_t     hop_peer_addr[HOP_ADDR_MAX];
static size_t      hop_peer_addr_len;
static uint64_t    hop_addr_deadline;

static inline void hop_on_addr(int src, const void *payload, size_t len,
                               void *arg)
{
    (void)arg;
    if ((len == 0) || (len > HOP_ADDR_MAX))
        gv_abort(1, "%s: an address of %zu bytes from rank %d (at most %d)",
                 hop_prog, len, src, HOP_ADDR_MAX);
    memcpy(hop_peer_addr, payload, len);
    hop_peer_addr_len = len;
}

static inline int hop_have_addr(void *arg)
{
    if (hop_peer_addr_len > 0)
        return 1;
    if (gv_time_ns() > hop_addr_deadline)
        gv_abort(1, "%s: no address from rank %d in %d s", hop_prog,
                 *(const int *)arg, HOP_ADDR_WAIT_S);
    return 0;
}

/* Send @a peer our address and wait for its own: hop_peer_addr, of
 * hop_peer_addr_len bytes. */
static inline void hop_swap_addr(int peer, const void *addr, size_t len)
{
    if (len > HOP_ADDR_MAX)
        gv_abort(1, "%s: our address has %zu bytes (at most %d)", hop_prog,
                 len, HOP_ADDR_MAX);
    gv_am_send(peer, hop_addr_id, addr, len);
    gv_flush();
    hop_addr_deadline = gv_time_ns() + HOP_ADDR_WAIT_S * 1000000000ull;
    gv_wait(hop_have_addr, &peer);
}

/* The start of a tool run with gvrun: the ping and address handlers
 * registered before gv_init, so that no message can beat a registration,
 * after the @a n options of @a flags into @a val (hop_parse); exactly 2
 * ranks. */
static inline void hop_start_flags(const char *prog, int *argc, char ***argv,
                                   const hop_flag_t *flags, int n, int *val)
{
    hop_prog = prog;
    /* Before gv_init (which takes no arguments of ours), so that -h and
     * a usage error end the process before it joins the job. */
    hop_parse(prog, *argc, *argv, flags, n, val);
    if ((gv_am_register(hop_on_ping, NULL, &hop_ping_id) != GV_OK) ||
        (gv_am_register(hop_on_addr, NULL, &hop_addr_id) != GV_OK)) {
        fprintf(stderr, "%s: cannot register handlers\n", prog);
        exit(1);
    }
    if (gv_init(argc, argv) != GV_OK) {
        fprintf(stderr, "%s: gv_init failed\n", prog);
        exit(1);
    }
    if (gv_nranks() != 2)
        gv_abort(2, "%s needs exactly 2 ranks, got %d", prog, gv_nranks());
}

/* For a tool started with mpirun (hop_mpi, bw_mpi), after gv_init: abort
 * unless this is Grapevine rank gv_rank() of gv_nranks() as MPI rank
 * @a mpi_rank of @a mpi_size (MPI_COMM_WORLD's): under gvrun every rank
 * would be an MPI job of its own. */
static inline void hop_check_mpirun(const char *prog, int mpi_rank,
                                    int mpi_size)
{
    if ((mpi_size != gv_nranks()) || (mpi_rank != gv_rank()))
        gv_abort(2, "%s: Grapevine rank %d of %d is MPI rank %d of %d; "
                    "start it with mpirun, not gvrun", prog, gv_rank(),
                 gv_nranks(), mpi_rank, mpi_size);
}

/* hop_start_flags() with the hop tools' -b, -k and -s. */
static inline hop_opts_t hop_start(const char *prog, int *argc, char ***argv)
{
    int val[HOP_NFLAGS];

    hop_start_flags(prog, argc, argv, hop_flags, HOP_NFLAGS, val);
    return hop_opts_of(val);
}

/* Rank 0 times each round trip of way @a w (cycle-counter ticks). */
static inline void hop_stamp(int rank, double **rtt, int *n, int w,
                             uint64_t *prev)
{
    if (rank == 0) {
        uint64_t now = stamp_ticks();

        rtt[w][n[w]++] = (double)(now - *prev);
        *prev          = now;
    }
}

/* Each way's one-way figure in ns: half its median round trip. */
static inline void hop_results(double **rtt, const int *n, int nways,
                               double ns_per_tick, double *out)
{
    int w;

    for (w = 0; w < nways; w++)
        out[w] = hop_half_median(rtt[w], n[w]) * ns_per_tick;
}

/* The end of a hop tool's result line: for messages of HOP_MBPS_FROM bytes
 * or more, each way's bandwidth as a ping-pong measures it (fi_pingpong's):
 * " <name>_MBps=" the size over the one-way time @a ns, in 10^6 B/s; then
 * the newline. Smaller messages keep the line as it was. */
static inline void hop_line_end(int size, const double *ns,
                                const char *const *names, int nways)
{
    int w;

    if (size >= HOP_MBPS_FROM)
        for (w = 0; w < nways; w++)
            printf(" %s_MBps=%.1f", names[w], (double)size * 1e3 / ns[w]);
    printf("\n");
}

/* Room for -b x -k round trips of each of @a nways ways. */
static inline void hop_rtt_alloc(const char *prog, hop_opts_t o, int nways,
                                 double **rtt)
{
    int w;

    for (w = 0; w < nways; w++)
        if ((rtt[w] = malloc(sizeof(double) * (size_t)o.blocks *
                             (size_t)o.per)) == NULL)
            gv_abort(1, "%s: out of memory", prog);
}

static inline void hop_rtt_free(int nways, double **rtt)
{
    int w;

    for (w = 0; w < nways; w++)
        free(rtt[w]);
}

/* ---- strict option values for the tools with their own usage text -----
 * The rules of hop_parse(): a value is digits only (no sign, no blanks, no
 * k/m/g suffix, no 0x), inside the option's range; anything else is a
 * usage error that names the option, the value and what is accepted. */

/* A usage error of tool @a prog whose usage text is @a usage (lines ending
 * in '\n'; may be NULL): "<prog>: <why>" and the usage text in one write,
 * so that the ranks' lines do not interleave; exit 2. */
static inline void __attribute__((format(printf, 3, 4), noreturn))
hop_fail(const char *prog, const char *usage, const char *fmt, ...)
{
    char    msg[6144];
    size_t  len, off = 0;
    ssize_t n;
    va_list ap;

    len = (size_t)snprintf(msg, sizeof(msg), "%s: ", prog);
    va_start(ap, fmt);
    if (len < sizeof(msg))
        len += (size_t)vsnprintf(msg + len, sizeof(msg) - len, fmt, ap);
    va_end(ap);
    if (len < sizeof(msg))
        len += (size_t)snprintf(msg + len, sizeof(msg) - len, "\n%s",
                                (usage != NULL) ? usage : "");
    if (len >= sizeof(msg))
        len = sizeof(msg) - 1;
    fflush(stderr);
    while ((off < len) &&
           ((n = write(STDERR_FILENO, msg + off, len - off)) > 0))
        off += (size_t)n;
    exit(2);
}

/* Option @a name (as typed: "-s", "--log2") given value @a arg: a whole
 * number in decimal digits from @a lo to @a hi, else a usage error such as
 * "pingpong: -s 1m: accepted 0..67108864 bytes, in decimal digits (no
 * k/m/g suffix: 1m is 1048576)". @a what names the unit ("bytes"). */
static inline uint64_t hop_arg_u64(const char *prog, const char *usage,
                                   const char *name, const char *arg,
                                   uint64_t lo, uint64_t hi, const char *what)
{
    unsigned long long v = 0;
    char               hint[96] = "";
    const char        *p;
    int                ok = (*arg != '\0'), big = 0;

    for (p = arg; ok && (*p != '\0'); p++) {
        if ((*p < '0') || (*p > '9')) {
            ok = 0;
            break;
        }
        if (v > (~0ull - 9) / 10)
            big = 1;
        else
            v = v * 10 + (unsigned long long)(*p - '0');
    }
    if (ok && !big && (v >= lo) && (v <= hi))
        return v;
    /* "1m": say what it would have been, that it is not taken. */
    if ((p != arg) && (*p != '\0') && (p[1] == '\0') &&
        (strchr("kKmMgG", *p) != NULL)) {
        int sh = ((*p | 0x20) == 'k') ? 10 : ((*p | 0x20) == 'm') ? 20 : 30;

        snprintf(hint, sizeof(hint), " (no k/m/g suffix: %s is %llu)", arg,
                 (v <= (~0ull >> sh)) ? v << sh : v);
    }
    hop_fail(prog, usage, "%s %s: accepted %llu..%llu %s, in decimal "
             "digits%s", name, arg, (unsigned long long)lo,
             (unsigned long long)hi, what, hint);
}

/* hop_arg_u64() for an int option. */
static inline int hop_arg_int(const char *prog, const char *usage,
                              const char *name, const char *arg, int lo,
                              int hi, const char *what)
{
    return (int)hop_arg_u64(prog, usage, name, arg, (uint64_t)lo,
                            (uint64_t)hi, what);
}

/* Option @a name given value @a arg: a decimal number (like 0.5 or 2) from
 * @a lo to @a hi, else a usage error naming both. */
static inline double hop_arg_real(const char *prog, const char *usage,
                                  const char *name, const char *arg,
                                  double lo, double hi, const char *what)
{
    char       *end;
    const char *p;
    double      v;
    int         ok = (*arg != '\0');

    /* Digits and points only (strtod() checks there is at most one):
     * strtod's own "inf", "nan", "0x1p3" and " 1" are turned away. */
    for (p = arg; ok && (*p != '\0'); p++)
        ok = ((*p >= '0') && (*p <= '9')) || (*p == '.');
    v = ok ? strtod(arg, &end) : 0;
    if (ok && (*end == '\0') && isfinite(v) && (v >= lo) && (v <= hi))
        return v;
    hop_fail(prog, usage, "%s %s: accepted %g..%g %s, a decimal number "
             "such as 0.5", name, arg, lo, hi, what);
}

/* After getopt()/getopt_long() returned @a c, '?' or ':' (the optstring
 * begins with ':' and opterr is 0): a usage error naming the option as the
 * user typed it, "unknown option" or "no value". @a longopts may be NULL. */
static inline void __attribute__((noreturn))
hop_getopt_fail(const char *prog, const char *usage, int c, char **argv,
                const struct option *longopts)
{
    const char *typed = (optind > 0) ? argv[optind - 1] : "";
    char        name[64];
    int         i;

    snprintf(name, sizeof(name), "-%c", optopt);
    if ((optopt == 0) || (strncmp(typed, "--", 2) == 0)) {
        /* A long option: as typed, without any "=value". */
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(typed, "="),
                 typed);
        for (i = 0; (optopt != 0) && (longopts != NULL) &&
                    (longopts[i].name != NULL); i++)
            if ((longopts[i].val == optopt) &&
                (strncmp(typed + 2, longopts[i].name,
                         strcspn(typed + 2, "=")) == 0))
                snprintf(name, sizeof(name), "--%s", longopts[i].name);
    }
    if (c == ':')
        hop_fail(prog, usage, "%s: no value given", name);
    if ((optopt != 0) && (strchr(typed, '=') != NULL) &&
        (strncmp(typed, "--", 2) == 0))
        hop_fail(prog, usage, "%s: takes no value", name);
    if ((optopt == 0) && (longopts != NULL) && (strncmp(typed, "--", 2) == 0)) {
        char   alts[256] = "";
        size_t len       = strcspn(typed + 2, "=");
        int    many      = 0;

        for (i = 0; longopts[i].name != NULL; i++)
            if ((len > 0) && (strncmp(typed + 2, longopts[i].name, len) == 0)) {
                size_t at = strlen(alts);

                snprintf(alts + at, sizeof(alts) - at, "%s--%s",
                         (many++ > 0) ? ", " : "", longopts[i].name);
            }
        if (many > 1)
            hop_fail(prog, usage, "%s: ambiguous; accepted %s", name, alts);
    }
    hop_fail(prog, usage, "%s: unknown option", name);
}

/* The name of option @a c (getopt_long() just returned it with optarg)
 * as the user typed it: "--log2" for "--log2 5" and "--log2=5", "-n" for
 * "-n 5" and "-n5". Written into @a buf. */
static inline const char *hop_opt_typed(int c, char **argv, char *buf,
                                        size_t len)
{
    const char *tok = argv[optind - 1];

    if ((optarg == tok) && (optind >= 2))
        tok = argv[optind - 2];
    if (strncmp(tok, "--", 2) == 0)
        snprintf(buf, len, "%.*s", (int)strcspn(tok, "="), tok);
    else
        snprintf(buf, len, "-%c", c);
    return buf;
}

/* Any argument left after the options: a usage error naming it. */
static inline void hop_no_operands(const char *prog, const char *usage,
                                   int argc, char **argv)
{
    if (optind < argc)
        hop_fail(prog, usage, "%s: unexpected argument; accepted options "
                 "only", argv[optind]);
}

#endif
