/* A small actor runtime that uses Grapevine only for its messages: each
 * rank runs its own epoll loop with its own timers (timerfd), sleeps on
 * gv_wait_fd() beside them, registers its handlers by name after
 * gv_init_opts(), and survives a killed peer through the peer-failure
 * callback. The actors pass a token around the ring of living ranks; each
 * holds it for --hop-ms on a timer before passing it on.
 *
 *   cc actors.c $(pkg-config --cflags --libs grapevine) -o actors
 *   gvrun -n 3 ./actors --hops 300
 *   gvrun --keep-going -n 3 ./actors --hops 300 --kill 2:40
 *
 * --kill R:H: rank R kills itself (SIGKILL) when it gets the token at hop
 * H or later, taking the token with it; the living ranks hear of it
 * through the callback, drop it from the ring, and the lowest living rank
 * makes a new token when none came for a second.
 * Exit status 0 when the ring reached --hops; 1 on any error.
 * SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include <grapevine.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

typedef struct {
    uint32_t gen;   /* a new token after a loss has a higher generation */
    uint32_t pad;
    uint64_t hops;
} token_t;

/* The runtime: one per rank. */
static struct {
    int        ep, gvfd, hold_fd, tick_fd;
    gv_am_id_t id_token, id_stop;
    uint8_t   *dead;
    int        stop;
    uint64_t   hops_goal, hop_ns;
    int        kill_rank;
    uint64_t   kill_hop;
    /* the token, while this rank holds it */
    int        holding;
    token_t    tok;
    uint32_t   gen_seen;
    uint64_t   hops_seen, last_seen_ns, due_ns;
    /* statistics */
    uint64_t   passed, late_ns_sum, late_ns_max;
    int        failures;
} rt;

static void die(const char *what)
{
    fprintf(stderr, "actors: rank %d: %s\n", gv_rank(), what);
    exit(1);
}

static uint64_t now_ns(void)
{
    return gv_time_ns();
}

static void arm_timer(int fd, uint64_t ns, int periodic)
{
    struct itimerspec its;

    memset(&its, 0, sizeof(its));
    its.it_value.tv_sec  = (time_t)(ns / 1000000000u);
    its.it_value.tv_nsec = (long)(ns % 1000000000u);
    if (periodic)
        its.it_interval = its.it_value;
    if (timerfd_settime(fd, 0, &its, NULL) != 0)
        die("timerfd_settime failed");
}

/* The next living rank after this one (itself when alone). */
static int next_living(void)
{
    int n = gv_nranks(), r;

    for (r = (gv_rank() + 1) % n; r != gv_rank(); r = (r + 1) % n)
        if (!rt.dead[r])
            return r;
    return gv_rank();
}

static int lowest_living(void)
{
    int r;

    for (r = 0; r < gv_nranks(); r++)
        if (!rt.dead[r])
            return r;
    return gv_rank();
}

static void stop_all(void)
{
    int r;

    for (r = 0; r < gv_nranks(); r++)
        if (!rt.dead[r] && (r != gv_rank()))
            (void)gv_am_send_now(r, rt.id_stop, NULL, 0);
    rt.stop = 1;
}

/* The hold timer fired: pass the token on (or finish). */
static void pass_token(void)
{
    uint64_t late = now_ns() - rt.due_ns;
    int      to;

    rt.holding = 0;
    rt.passed++;
    rt.late_ns_sum += late;
    if (late > rt.late_ns_max)
        rt.late_ns_max = late;
    rt.tok.hops++;
    if (rt.tok.hops >= rt.hops_goal) {
        printf("actors: the token made %llu hops (generation %u) over %s\n",
               (unsigned long long)rt.tok.hops, rt.tok.gen,
               gv_transport_name());
        stop_all();
        return;
    }
    for (;;) {
        gv_status_t st;

        to = next_living();
        st = gv_am_send_now(to, rt.id_token, &rt.tok, sizeof(rt.tok));
        if (st == GV_OK)
            return;
        if (st != GV_ERR_UNREACHABLE)
            die("sending the token failed");
        rt.dead[to] = 1; /* the callback will say why */
    }
}

static void take_token(const token_t *t)
{
    if ((t->gen < rt.gen_seen) || rt.holding)
        return; /* a stale token, from before a loss */
    rt.gen_seen     = t->gen;
    rt.hops_seen    = t->hops;
    rt.last_seen_ns = now_ns();
    if ((gv_rank() == rt.kill_rank) && (t->hops >= rt.kill_hop)) {
        printf("actors: rank %d dies holding the token at hop %llu\n",
               gv_rank(), (unsigned long long)t->hops);
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    rt.tok     = *t;
    rt.holding = 1;
    rt.due_ns  = now_ns() + rt.hop_ns;
    arm_timer(rt.hold_fd, rt.hop_ns, 0);
}

/* ---- handlers, registered by name after init --------------------------- */

static void on_token(int src, const void *p, size_t len, void *arg)
{
    token_t t;

    (void)src;
    (void)arg;
    if (len != sizeof(t))
        die("a token of the wrong size");
    memcpy(&t, p, sizeof(t));
    /* Everyone sees the latest token's progress: the regenerated one goes
     * on from there. */
    take_token(&t);
}

static void on_stop(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)p;
    (void)len;
    (void)arg;
    rt.stop = 1;
}

static void on_peer_failure(int rank, const char *why, void *arg)
{
    (void)arg;
    rt.dead[rank] = 1;
    rt.failures++;
    printf("actors: rank %d hears that rank %d failed (%s); the ring goes "
           "on without it\n", gv_rank(), rank, why);
    /* The token may have died with it: look again in a second. */
    rt.last_seen_ns = now_ns();
}

/* The periodic tick: a lost token is made anew by the lowest living rank,
 * one hop on from the last it saw. */
static void tick(void)
{
    if ((rt.failures == 0) || rt.holding ||
        (lowest_living() != gv_rank()) ||
        (now_ns() - rt.last_seen_ns < 1000000000ull))
        return;
    printf("actors: rank %d makes a new token at hop %llu\n", gv_rank(),
           (unsigned long long)rt.hops_seen);
    rt.tok.gen  = rt.gen_seen + 1;
    rt.tok.hops = rt.hops_seen;
    take_token(&rt.tok);
}

static void add_fd(int fd, uint32_t tag)
{
    struct epoll_event e;

    memset(&e, 0, sizeof(e));
    e.events = EPOLLIN;
    e.data.u32 = tag;
    if (epoll_ctl(rt.ep, EPOLL_CTL_ADD, fd, &e) != 0)
        die("epoll_ctl failed");
}

enum { TAG_GV, TAG_HOLD, TAG_TICK };

static void loop(void)
{
    struct epoll_event ev[8];
    uint64_t           expirations;
    int                n, i, timeout;

    while (!rt.stop) {
        /* Grapevine first: run what arrived, until nothing is left. */
        while ((gv_progress() > 0) && !rt.stop)
            ;
        if (rt.stop)
            break;
        /* Sleep only once armed; without an fd, poll every millisecond. */
        timeout = 1;
        if (rt.gvfd >= 0) {
            if (gv_wait_arm() != GV_OK)
                continue;
            timeout = -1;
        }
        n = epoll_wait(rt.ep, ev, 8, timeout);
        if ((n < 0) && (errno != EINTR))
            die("epoll_wait failed");
        for (i = 0; i < n; i++) {
            switch (ev[i].data.u32) {
            case TAG_HOLD:
                if (read(rt.hold_fd, &expirations, 8) == 8 && rt.holding)
                    pass_token();
                break;
            case TAG_TICK:
                if (read(rt.tick_fd, &expirations, 8) == 8)
                    tick();
                break;
            default: /* Grapevine's fd: the progress above handles it */
                break;
            }
        }
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: actors [--hops N] [--hop-ms MS] [--kill R:H]\n"
            "  --hops N     stop when the token made N hops (default 300)\n"
            "  --hop-ms MS  each rank holds the token MS ms on a timer "
            "(default 2)\n"
            "  --kill R:H   rank R dies at hop H (run gvrun --keep-going)\n");
    exit(1);
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"hops", required_argument, NULL, 'n'},
                                         {"hop-ms", required_argument, NULL, 'm'},
                                         {"kill", required_argument, NULL, 'k'},
                                         {NULL, 0, NULL, 0}};
    gv_init_opts_t o;
    gv_status_t    st;
    struct rusage  ru;
    double         t0, cpu, wall;
    char          *end;
    int            c;

    rt.hops_goal = 300;
    rt.hop_ns    = 2000000;
    rt.kill_rank = -1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            rt.hops_goal = strtoull(optarg, &end, 10);
            if ((*end != '\0') || (rt.hops_goal == 0))
                usage();
            break;
        case 'm':
            rt.hop_ns = strtoull(optarg, &end, 10) * 1000000ull;
            if ((*end != '\0') || (rt.hop_ns == 0))
                usage();
            break;
        case 'k':
            if (sscanf(optarg, "%d:%llu", &rt.kill_rank,
                       (unsigned long long *)&rt.kill_hop) != 2)
                usage();
            break;
        default:
            usage();
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    /* Messages only, no binding (this program's threads keep every CPU),
     * errors returned. */
    gv_init_opts_default(&o);
    st = gv_init_opts(&o);
    if (st != GV_OK) {
        fprintf(stderr, "actors: gv_init_opts: %s: %s\n", gv_status_str(st),
                gv_last_error());
        return 1;
    }
    if ((rt.kill_rank == 0) || (rt.kill_rank >= gv_nranks()))
        die("--kill needs a rank from 1 to the number of ranks - 1");
    rt.dead = calloc((size_t)gv_nranks(), 1);
    if ((gv_am_register_named("actors.token", on_token, NULL,
                              &rt.id_token) != GV_OK) ||
        (gv_am_register_named("actors.stop", on_stop, NULL, &rt.id_stop) !=
         GV_OK))
        die(gv_last_error());
    if (gv_on_peer_failure(on_peer_failure, NULL) != GV_OK)
        die(gv_last_error());

    rt.ep      = epoll_create1(EPOLL_CLOEXEC);
    rt.hold_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    rt.tick_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if ((rt.ep < 0) || (rt.hold_fd < 0) || (rt.tick_fd < 0))
        die("epoll or timerfd failed");
    add_fd(rt.hold_fd, TAG_HOLD);
    add_fd(rt.tick_fd, TAG_TICK);
    arm_timer(rt.tick_fd, 100000000ull, 1);
    st = gv_wait_fd(&rt.gvfd);
    if (st == GV_OK) {
        add_fd(rt.gvfd, TAG_GV);
    } else {
        rt.gvfd = -1;
        if (gv_rank() == 0)
            printf("actors: transport %s has no descriptor to sleep on; "
                   "polling every millisecond instead\n",
                   gv_transport_name());
    }
    /* Every rank registered its handlers before the token moves. */
    gv_barrier();
    t0              = gv_wtime();
    rt.last_seen_ns = now_ns();
    if (gv_rank() == 0) {
        token_t first = {0, 0, 0};
        take_token(&first);
    }
    loop();
    wall = gv_wtime() - t0;
    getrusage(RUSAGE_SELF, &ru);
    cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
          (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    printf("actors: rank %d passed the token %llu times; its timers fired "
           "%.1f us late on average, %.1f us at most; %.1f%% of a core over "
           "%.2f s\n", gv_rank(), (unsigned long long)rt.passed,
           rt.passed ? rt.late_ns_sum / 1e3 / (double)rt.passed : 0.0,
           rt.late_ns_max / 1e3, 100.0 * cpu / wall, wall);
    gv_finalize();
    free(rt.dead);
    return 0;
}
