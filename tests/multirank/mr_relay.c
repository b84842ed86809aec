/* A slow or stopped relay under GV_AGG_ROUTE=node or node2 (GV_TEST_NODES
 * of 2 or more): every rank sends a stream of numbered 8-byte updates to
 * every rank on the other nodes, which all pass through relays, while the
 * rank of node 0 that serves its link towards node 1 (a relay both ways:
 * first hop for its node's updates to node 1, and under node2 to the
 * nodes beyond it, second hop for node 1's to its node) is
 *   --stop S: stopped (SIGSTOP) for S seconds before it sends anything,
 *   --slow:   slowed (its handler sleeps 1 ms every 200 updates).
 * Every update must arrive exactly once and in order, and every rank's
 * send queues, what it relays included, must stay within the bound the
 * aggregator states for it (gv__am_route_bound(), which gvinfo -t
 * prints) plus a fixed allowance of one aggregation buffer.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"
#include "aggregator/am_internal.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#define UPDATES_DEFAULT 200000 /* per sending rank, over its remote ranks */

static gv_am_id_t upd_id;
static uint64_t  *next_seq; /* per source: the number expected next */
static uint64_t   got;
static int        slow, mode_slow;

static void on_update(int src, const void *p, size_t len, void *arg)
{
    uint64_t v;

    (void)arg;
    MR_CHECK(len == 8, "rank %d: update of %zu bytes from %d", gv_rank(),
             len, src);
    memcpy(&v, p, 8);
    MR_CHECK(v == next_seq[src], "rank %d: from %d got update %llu, "
             "expected %llu (lost, duplicated or reordered)", gv_rank(), src,
             (unsigned long long)v, (unsigned long long)next_seq[src]);
    next_seq[src]++;
    if (slow && ((++got % 200) == 0)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* The rank of node 0 that serves its link towards node 1 (the first hop
 * from node 0's first rank to node 1's, gv__am_route_hop). */
static int relay_0_to_1(void)
{
    gv__route_shape_t sh;
    int               n = gv_nranks(), r, hop, *node_of, *members, *start;

    node_of = malloc((size_t)n * sizeof(int));
    members = malloc((size_t)n * sizeof(int));
    start   = malloc(((size_t)gv_nnodes() + 1) * sizeof(int));
    MR_CHECK(node_of && members && start, "out of memory");
    for (r = 0; r < n; r++)
        node_of[r] = gv_node_of(r);
    gv__am_route_shape(&sh, (int)gv__env.AGG_ROUTE, node_of, gv_nnodes(), n,
                       members, start);
    r   = members[start[0]];
    hop = gv__am_route_hop(&sh, r, members[start[1]]);
    if (node_of[hop] == 0)
        r = hop;
    free(node_of);
    free(members);
    free(start);
    return r;
}

/* Whether process @a pid is stopped, read with system calls only (this
 * runs in a child forked from a process with threads). */
static int is_stopped(pid_t pid)
{
    char    path[64], buf[256], *c;
    int     fd;
    ssize_t n;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if ((fd = open(path, O_RDONLY)) < 0)
        return 0;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    c      = strrchr(buf, ')');
    return (c != NULL) && (c[1] == ' ') && (c[2] == 'T');
}

/* Stop this process for @a s seconds: a child resumes it once it has
 * seen it stopped and waited that long. */
static void stop_self(unsigned s)
{
    pid_t parent = getpid(), child = fork();
    int   i;

    MR_CHECK(child >= 0, "rank %d: fork failed", gv_rank());
    if (child == 0) {
        struct timespec ms = {0, 1000000};

        for (i = 0; (i < 60000) && !is_stopped(parent); i++)
            nanosleep(&ms, NULL);
        sleep(s);
        kill(parent, SIGCONT);
        _exit(0);
    }
    raise(SIGSTOP);
    MR_CHECK(waitpid(child, NULL, 0) == child, "rank %d: waitpid failed",
             gv_rank());
}

int main(int argc, char **argv)
{
    int           n, me, r, relay, nremote = 0, *remote;
    unsigned      stop_s  = 0;
    uint64_t      updates = UPDATES_DEFAULT, i, *seq, per, bound, allow;
    const char   *route;
    gv_am_stats_t st;

    mr_init(&argc, &argv);
    for (r = 1; r < argc; r++) {
        if ((strcmp(argv[r], "--stop") == 0) && (r + 1 < argc) &&
            (atoi(argv[r + 1]) > 0) && (atoi(argv[r + 1]) <= 30)) {
            stop_s = (unsigned)atoi(argv[++r]);
        } else if (strcmp(argv[r], "--slow") == 0) {
            slow = 1;
        } else if ((strcmp(argv[r], "--updates") == 0) && (r + 1 < argc) &&
                   (strtoull(argv[r + 1], NULL, 10) > 0)) {
            updates = strtoull(argv[++r], NULL, 10);
        } else {
            fprintf(stderr, "mr_relay: bad option '%s' (accepted: --stop "
                    "SECONDS of 1 to 30, --slow, --updates N)\n", argv[r]);
            gv_finalize();
            return 2;
        }
    }
    route = getenv("GV_AGG_ROUTE");
    if ((gv_nnodes() < 2) || (route == NULL) ||
        ((strcasecmp(route, "node") != 0) &&
         (strcasecmp(route, "node2") != 0)))
        mr_skip("mr_relay needs GV_AGG_ROUTE=node or node2 and "
                "GV_TEST_NODES of 2 or more");
    n        = gv_nranks();
    me       = gv_rank();
    relay    = relay_0_to_1();
    next_seq = calloc((size_t)n, sizeof(*next_seq));
    seq      = calloc((size_t)n, sizeof(*seq));
    remote   = calloc((size_t)n, sizeof(*remote));
    MR_CHECK(next_seq && seq && remote, "out of memory");
    for (r = 0; r < n; r++) {
        next_seq[r] = 1;
        if (gv_node_of(r) != gv_node_of(me))
            remote[nremote++] = r;
    }
    mode_slow = slow;
    slow      = slow && (me == relay);
    MR_OK(gv_am_register(on_update, NULL, &upd_id));
    gv_barrier();
    if ((stop_s > 0) && (me == relay))
        stop_self(stop_s);
    for (i = 0; i < updates; i++) {
        r = remote[i % (uint64_t)nremote];
        seq[r]++;
        MR_OK(gv_am_send(r, upd_id, &seq[r], 8));
    }
    gv_barrier();
    /* Every rank on another node sent us updates / (its remote ranks)
     * each, give or take one. */
    for (r = 0; r < n; r++) {
        int k = 0, j;

        if (gv_node_of(r) == gv_node_of(me))
            continue;
        for (j = 0; j < n; j++)
            if (gv_node_of(j) != gv_node_of(r))
                k++;
        /* remote[] of rank r: ranks of other nodes in rank order; we are
         * at position j there. */
        {
            int pos = 0;

            for (j = 0; j < me; j++)
                if (gv_node_of(j) != gv_node_of(r))
                    pos++;
            per = updates / (uint64_t)k +
                  ((uint64_t)pos < updates % (uint64_t)k);
        }
        MR_CHECK(next_seq[r] - 1 == per, "rank %d: %llu updates from rank "
                 "%d, expected %llu", me,
                 (unsigned long long)(next_seq[r] - 1), r,
                 (unsigned long long)per);
    }
    gv_am_stats(&st);
    allow = gv__am_memory_bound() / (gv__env.AGG_CREDITS + 1);
    bound = gv__am_route_bound();
    printf("rank %d%s: queued at most %llu B, bound %llu B + allowance "
           "%llu B\n", me, (me == relay) ? " (the relay)" : "",
           (unsigned long long)st.queued_bytes_max,
           (unsigned long long)bound, (unsigned long long)allow);
    fflush(stdout);
    MR_CHECK(st.queued_bytes_max <= bound + allow, "rank %d%s: send queues "
             "peaked at %llu bytes, above its bound of %llu + %llu",
             me, (me == relay) ? " (the relay)" : "",
             (unsigned long long)st.queued_bytes_max,
             (unsigned long long)bound, (unsigned long long)allow);
    gv_barrier();
    if (me == 0)
        printf("relay %d %s over %s, %d ranks in %d nodes: every update "
               "once and in order, every rank within its bound: ok\n",
               relay, (stop_s > 0) ? "stopped" : mode_slow ? "slowed" : "running",
               gv_transport_name(), n, gv_nnodes());
    free(next_seq);
    free(seq);
    free(remote);
    gv_finalize();
    return 0;
}
