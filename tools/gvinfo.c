/* gvinfo: version, the GV_* table, the transports and their capabilities,
 * and the topology. SPDX-License-Identifier: BSD-3-Clause */
#include "core/core.h"
#include "core/boot.h"
#include "core/plugin.h"
#include "transports/transport.h"
#include "aggregator/am_internal.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gvinfo [-c] [-m] [-t [-n RANKS [-N NODES]]] [-T] [-v] "
               "[-h]\n"
               "  -c  every GV_* variable: value, default, accepted, meaning\n"
               "  -m  the same table in Markdown (for the README)\n"
               "  -t  transports: built or not (why), and what each can do\n"
               "      here, opened on one rank; with -n, the aggregation\n"
               "      buffers per rank for GV_AGG_ROUTE and a job of RANKS\n"
               "      ranks in NODES nodes of contiguous rank blocks (default\n"
               "      GV_TEST_NODES, else 1)\n"
               "  -T  topology (hwloc)\n"
               "  -v  version, and the commit the library was built from\n"
               "  -h, --help  this text\n"
               "With no option: -v -t -T.\n");
}

/* The probe opens each transport as gv_init would, receive callbacks
 * included (a transport offers am_send_id only to a layer that takes its
 * messages); nothing arrives on one rank. */
/* A whole number from @a lo to @a hi, or -1. */
static long count_arg(const char *s, long lo, long hi)
{
    char *end;
    long  v = strtol(s, &end, 10);

    if ((*s == '\0') || (*end != '\0') || (v < lo) || (v > hi))
        return -1;
    return v;
}

/* GV_AGG_ROUTE's values, in env.def's order. */
static const char *const route_names[] = {"direct", "node", "node2"};

/* The bound on one rank's aggregation buffers: the route's destinations
 * times the bound per destination, plus, for a relay under node or node2,
 * the window of envelopes each upstream link (a rank and a position on the
 * way) that hands it some may have there (the largest total over the
 * ranks). */
static void print_route_bound(long ranks, long nodes)
{
    unsigned long long       per = (unsigned long long)(
        (gv__env.AGG_CREDITS + 1) * gv__env.AGG_BYTES);
    unsigned long long       win = (unsigned long long)(
        GV__AM_ROUTE_WINDOW_BATCHES * gv__env.AGG_BYTES);
    unsigned long long       bytes, most_bytes;
    int                     *node_of, r, route, peers, ups, most, most_ups;

    if (nodes > ranks)
        nodes = ranks;
    node_of = malloc((size_t)ranks * sizeof(int));
    if (node_of == NULL)
        return;
    for (r = 0; r < ranks; r++)
        node_of[r] = (int)((int64_t)r * nodes / ranks);
    printf("aggregator: a job of %ld ranks in %ld node(s) (%ld to %ld per "
           "node):\n", ranks, nodes, ranks / nodes,
           (ranks + nodes - 1) / nodes);
    for (route = GV_AGG_ROUTE_DIRECT; route <= GV_AGG_ROUTE_NODE2; route++) {
        most = most_ups = 0;
        most_bytes = 0;
        for (r = 0; r < ranks; r++) {
            peers = gv__am_route_peers(route, node_of, (int)nodes,
                                       (int)ranks, r);
            ups   = gv__am_route_upstreams(route, node_of, (int)nodes,
                                           (int)ranks, r);
            bytes = (unsigned long long)peers * per +
                    (unsigned long long)ups * win;
            if (peers > most)
                most = peers;
            if (ups > most_ups)
                most_ups = ups;
            if (bytes > most_bytes)
                most_bytes = bytes;
        }
        printf("  GV_AGG_ROUTE=%s%s: buffers to at most %d ranks",
               route_names[route],
               (route == gv__env.AGG_ROUTE) ? " (chosen)" : "", most);
        if (most_ups > 0)
            printf(", envelopes to relay from at most %d upstream links "
                   "(%llu bytes each)", most_ups, win);
        printf(", at most %llu bytes per rank\n", most_bytes);
    }
    free(node_of);
}

static void probe_recv(void *arg, int src, const void *data, size_t len)
{
    (void)arg;
    (void)src;
    (void)data;
    (void)len;
}

static void probe_recv_id(void *arg, int src, unsigned id, const void *data,
                          size_t len)
{
    (void)id;
    probe_recv(arg, src, data, len);
}

static void print_transports(void)
{
    gv_boot_t      boot;
    gv_tl_params_t params;
    size_t         i;

    memset(&boot, 0, sizeof(boot));
    gv__boot_single_init(&boot);
    boot.local_size = 1;
    boot.nnodes     = 1;
    boot.node_of    = &boot.local_rank;
    memset(&params, 0, sizeof(params));
    params.heap_size  = 1 << 20;
    params.recv_cb    = probe_recv;
    params.recv_id_cb = probe_recv_id;
    printf("transports (best first; GV_TRANSPORT=auto takes the first that "
           "works; a composite shm+<net> only when named):\n");
    for (i = 0; i < gv__tl_nbuiltin; i++) {
        const gv_tl_entry_t *e = &gv__tl_builtin[i];
        const gv_tl_ops_t   *ops;
        gv_tl_t              tl;
        char                 caps[64], why[PATH_MAX + 256], how[PATH_MAX + 64];

        ops = gv__tl_ops(e, why, sizeof(why));
        if (ops == NULL) {
            /* not built, or its plug-in did not load: dlerror() says why */
            printf("  %-7s %s\n", e->name, why);
            continue;
        }
        if (e->plugin != NULL)
            snprintf(how, sizeof(how), "plug-in %s/%s loaded",
                     gv__plugin_dir(), e->plugin);
        else
            snprintf(how, sizeof(how), "built");
        if (strcmp(e->name, "mpi") == 0) {
            printf("  %-7s %s; caps AM,RMA,ATOMIC64,AM_ID (AM_ID where "
                   "MPI_TAG_UB allows), never WAIT_FD (MPI has no "
                   "descriptor to sleep on: a host polls gv_progress); "
                   "needs mpirun/srun (not probed here)\n", e->name, how);
            continue;
        }
        memset(&tl, 0, sizeof(tl));
        tl.ops    = ops;
        tl.boot   = &boot;
        tl.rank   = 0;
        tl.size   = 1;
        tl.params = params;
        if (ops->init(&tl) != GV_OK) {
            printf("  %-7s %s; does not start here (GV_LOG=info tells "
                   "why)\n", e->name, how);
            continue;
        }
        gv__tl_caps_str(tl.attr.caps, caps, sizeof(caps));
        printf("  %-7s %s; caps %s; max message %zu B%s%s\n", e->name, how,
               caps, tl.attr.max_msg, tl.attr.detail[0] ? "; " : "",
               tl.attr.detail);
        ops->fini(&tl);
    }
    printf("WAIT_FD: gv_wait_fd() gives a descriptor a host's event loop "
           "sleeps on; ofi has it only with an fd wait object "
           "(GV_OFI_WAIT=fd, where the provider has one); without it a "
           "host polls gv_progress()\n");
#if GV_HAVE_PMIX
    {
        void *addr;
        char  why[PATH_MAX + 256];

        if (!gv__plugins_used())
            printf("bootstrap pmix (mpirun/srun): built\n");
        else if (gv__plugin_sym("gv_boot_pmix.so", "gv__boot_pmix_init",
                                &addr, why, sizeof(why)) == GV_OK)
            printf("bootstrap pmix (mpirun/srun): plug-in %s/gv_boot_pmix.so "
                   "loaded\n", gv__plugin_dir());
        else
            printf("bootstrap pmix (mpirun/srun): %s\n", why);
    }
#else
    printf("bootstrap pmix (mpirun/srun): not built: needs libpmix-dev; "
           "rebuild with PMIX=1\n");
#endif
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    char err[512];
    int  c, conf = 0, md = 0, tls = 0, topo = 0, ver = 0;
    long ranks = 0, nodes = 0;

    opterr = 0; /* our own message names the option and shows the usage */
    while ((c = getopt_long(argc, argv, "+cmtTvhn:N:", opts, NULL)) != -1) {
        switch (c) {
        case 'c': conf = 1; break;
        case 'm': md = 1; break;
        case 't': tls = 1; break;
        case 'T': topo = 1; break;
        case 'v': ver = 1; break;
        case 'h': usage(stdout); return 0;
        case 'n':
        case 'N':
            if (count_arg(optarg, 1, 1L << 24) < 0) {
                fprintf(stderr, "gvinfo: -%c takes a number of %s from 1 to "
                        "%ld, not '%s'\n", c, (c == 'n') ? "ranks" : "nodes",
                        1L << 24, optarg);
                return 2;
            }
            *((c == 'n') ? &ranks : &nodes) = count_arg(optarg, 1, 1L << 24);
            break;
        default:
            if ((optopt == 'n') || (optopt == 'N'))
                fprintf(stderr, "gvinfo: -%c needs a number\n", optopt);
            else if (optopt != 0)
                fprintf(stderr, "gvinfo: unknown option '-%c'\n", optopt);
            else
                fprintf(stderr, "gvinfo: unknown option '%s'\n",
                        argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "gvinfo: unexpected argument '%s': gvinfo takes "
                "options only\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    if ((nodes > 0) && (ranks == 0)) {
        fprintf(stderr, "gvinfo: -N NODES goes with -n RANKS\n");
        return 2;
    }
    if (ranks > 0)
        tls = 1;
    if (!(conf || md || tls || topo || ver))
        ver = tls = topo = 1;
    if (gv__env_parse(err, sizeof(err)) != GV_OK) {
        fprintf(stderr, "gvinfo: %s\n", err);
        return 1;
    }
    if (ver)
        printf("grapevine %s (commit %s)\n", gv_version(),
               gv__version_commit());
    if (conf)
        gv__env_print(stdout, 0);
    if (md)
        gv__env_print(stdout, 1);
    if (tls) {
        print_transports();
        printf("aggregator: a sender outside handlers holds at most "
               "(GV_AGG_CREDITS + 1) x GV_AGG_BYTES = %llu bytes per "
               "destination, beyond what the transport copies into buffers "
               "it bounds itself (GV_TCP_SENDQ, GV_SHM_RING, GV_MPI_SENDS, "
               "the libraries' pools)\n",
               (unsigned long long)((gv__env.AGG_CREDITS + 1) *
                                    gv__env.AGG_BYTES));
        if (ranks > 0)
            print_route_bound(ranks, (nodes > 0)              ? nodes
                                     : (gv__env.TEST_NODES > 0) ? (long)gv__env.TEST_NODES
                                                               : 1);
        else
            printf("aggregator: GV_AGG_ROUTE=%s: %s; gvinfo -t -n RANKS "
                   "[-N NODES] prints the bound per rank for a job\n",
                   route_names[gv__env.AGG_ROUTE],
                   (gv__env.AGG_ROUTE == GV_AGG_ROUTE_NODE)
                       ? "a rank buffers to the other ranks of its node and "
                         "to about (nodes - 1) / (ranks per node) ranks on "
                         "other nodes"
                   : (gv__env.AGG_ROUTE == GV_AGG_ROUTE_NODE2)
                       ? "a rank buffers to the other ranks of its node and "
                         "to about 2 sqrt(nodes) / (ranks per node) ranks on "
                         "other nodes"
                       : "a rank buffers to every other rank");
    }
    if (topo)
        gv__topo_print(stdout);
    return 0;
}
