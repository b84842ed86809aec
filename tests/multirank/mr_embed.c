/* Grapevine embedded in a host program: gv_init_opts and re-init, errors
 * returned, thread levels, sleeping on gv_wait_fd, named handlers, the
 * peer-failure callback. One mode per run (argv[1]); run by
 * driver_embed.c under gvrun over every transport.
 * SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE
#include <grapevine.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define SKIP 77

static int rank = -1;

/* Before gv_init (or after a failed one) gv_abort has no job to stop. */
#define CHECK(_cond, _fmt, ...)                                              \
    do {                                                                     \
        if (!(_cond)) {                                                      \
            fprintf(stderr, "FAIL rank %d %s:%d: %s: " _fmt "\n", rank,      \
                    __FILE__, __LINE__, #_cond, ##__VA_ARGS__);              \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static void start(gv_layers_t layers, gv_thread_level_t level)
{
    gv_init_opts_t o;
    gv_status_t    st;

    gv_init_opts_default(&o);
    o.layers       = layers;
    o.thread_level = level;
    st             = gv_init_opts(&o);
    CHECK(st == GV_OK, "gv_init_opts: %s: %s", gv_status_str(st),
          gv_last_error());
    rank = gv_rank();
}

static int skip_all(const char *why)
{
    if (gv_rank() == 0)
        printf("skip: %s (transport %s)\n", why, gv_transport_name());
    gv_finalize();
    return SKIP;
}

static double cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

/* ---- a ring of counted messages, used by several modes ----------------- */

static volatile uint64_t got, got_sum;

static void count_cb(int src, const void *p, size_t len, void *arg)
{
    uint64_t v;

    (void)src;
    (void)arg;
    CHECK(len == 8, "payload of %zu bytes", len);
    memcpy(&v, p, 8);
    got_sum += v;
    got++;
}

static int have(void *arg)
{
    return got >= *(uint64_t *)arg;
}

/* Every rank sends n messages to every rank (itself too), then waits for
 * them; checks the sum. */
static void exchange(gv_am_id_t id, uint64_t n)
{
    static uint64_t want, want_sum; /* over every exchange so far: a
                                       peer's messages may come before
                                       this rank left the last barrier */
    int             r;

    for (uint64_t i = 1; i <= n; i++)
        for (r = 0; r < gv_nranks(); r++)
            CHECK(gv_am_send(r, id, &i, 8) == GV_OK, "send");
    gv_flush();
    want     += n * (uint64_t)gv_nranks();
    want_sum += (uint64_t)gv_nranks() * n * (n + 1) / 2;
    gv_wait(have, &want);
    gv_barrier();
    CHECK((got == want) && (got_sum == want_sum), "got %llu messages, sum "
          "%llu; want %llu, %llu", (unsigned long long)got,
          (unsigned long long)got_sum, (unsigned long long)want,
          (unsigned long long)want_sum);
}

/* ---- reinit: three starts in one process ------------------------------- */

static int mode_reinit(void)
{
    gv_am_id_t id;
    uint64_t   off;
    int        round;

    for (round = 0; round < 2; round++) {
        start(GV_LAYERS_MESSAGES, GV_THREAD_FUNNELED);
        CHECK(gv_am_register(count_cb, NULL, &id) == GV_OK, "register");
        gv_barrier();
        exchange(id, 100);
        /* The heap is not started: one-sided calls say so. */
        CHECK(gv_put((gv_rank() + 1) % gv_nranks(), 0, &off, 8) ==
                  GV_ERR_STATE, "gv_put without the heap layer");
        gv_finalize();

        start(GV_LAYERS_HEAP, GV_THREAD_SINGLE);
        CHECK(gv_am_register(count_cb, NULL, &id) == GV_OK, "register");
        gv_barrier();
        exchange(id, 50);
        CHECK(gv_sym_alloc(8, 8, &off) == GV_OK, "sym_alloc: %s",
              gv_last_error());
        gv_finalize();
    }
    CHECK(gv_init(NULL, NULL) == GV_OK, "plain gv_init after finalize");
    CHECK(gv_am_register(count_cb, NULL, &id) == GV_OK, "register");
    gv_barrier();
    exchange(id, 10);
    gv_finalize();
    if (rank == 0)
        printf("reinit ok\n");
    return 0;
}

/* ---- reinit-once: under an MPI launcher, a second init is refused ----- */

static int mode_reinit_once(void)
{
    gv_init_opts_t o;
    gv_am_id_t     id;
    gv_status_t    st;

    start(GV_LAYERS_HEAP, GV_THREAD_FUNNELED);
    CHECK(gv_am_register(count_cb, NULL, &id) == GV_OK, "register");
    gv_barrier();
    exchange(id, 20);
    gv_finalize();
    gv_init_opts_default(&o);
    st = gv_init_opts(&o);
    CHECK(st == GV_ERR_UNSUPPORTED, "a second init under an MPI launcher "
          "gave %s", gv_status_str(st));
    CHECK(strstr(gv_last_error(), "once per process") != NULL, "message: %s",
          gv_last_error());
    if (rank == 0)
        printf("reinit-once ok\n");
    return 0;
}

/* ---- errors: returned, with the message -------------------------------- */

static int mode_errors(void)
{
    gv_init_opts_t o;
    gv_status_t    st;
    gv_am_id_t     id;

    setenv("GV_AGG_BYTES", "lots", 1);
    gv_init_opts_default(&o);
    st = gv_init_opts(&o);
    CHECK(st == GV_ERR_INVALID, "bad GV_AGG_BYTES gave %s", gv_status_str(st));
    CHECK(strstr(gv_last_error(), "GV_AGG_BYTES") != NULL, "message: %s",
          gv_last_error());
    unsetenv("GV_AGG_BYTES");

    o.thread_level = GV_THREAD_MULTIPLE;
    st = gv_init_opts(&o);
    CHECK(st == GV_ERR_UNSUPPORTED, "MULTIPLE gave %s", gv_status_str(st));
    CHECK(strstr(gv_last_error(), "GV_THREAD_MULTIPLE") != NULL, "message: %s",
          gv_last_error());
    gv_init_opts_default(&o);
    o.layers = (gv_layers_t)7;
    st = gv_init_opts(&o);
    CHECK(st == GV_ERR_INVALID, "layers 7 gave %s", gv_status_str(st));
    CHECK(strstr(gv_last_error(), "layers 7") != NULL, "message: %s",
          gv_last_error());
    CHECK(gv_init_opts(NULL) == GV_ERR_INVALID, "NULL opts");

    /* After all that, a good start works, and a second is refused. */
    start(GV_LAYERS_MESSAGES, GV_THREAD_FUNNELED);
    gv_init_opts_default(&o);
    CHECK(gv_init_opts(&o) == GV_ERR_STATE, "second init");
    CHECK(gv_thread_level() == GV_THREAD_FUNNELED, "level");
    CHECK(gv_am_register(count_cb, NULL, &id) == GV_OK, "register");
    gv_barrier();
    exchange(id, 10);
    gv_finalize();
    if (rank == 0)
        printf("errors ok\n");
    return 0;
}

/* ---- thread levels ----------------------------------------------------- */

static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static gv_am_id_t      ser_id;
static uint64_t        ser_n = 2000;

/* SERIALIZED: two threads of the host send, progress and wait, one at a
 * time under the host's lock; both see the handlers' counts. */
static void *ser_thread(void *arg)
{
    int      me = (int)(intptr_t)arg;
    uint64_t i, one = 1;

    for (i = 0; i < ser_n; i++) {
        pthread_mutex_lock(&host_lock);
        CHECK(gv_am_send((gv_rank() + 1 + me) % gv_nranks(), ser_id, &one, 8) ==
                  GV_OK, "send from thread %d", me);
        if ((i & 15) == 0)
            gv_progress();
        pthread_mutex_unlock(&host_lock);
    }
    return NULL;
}

static void *barrier_thread(void *arg)
{
    (void)arg;
    gv_barrier();
    return NULL;
}

static int mode_serialized(void)
{
    pthread_t t[2];
    uint64_t  want;
    int       i;

    start(GV_LAYERS_MESSAGES, GV_THREAD_SERIALIZED);
    CHECK(gv_thread_level() == GV_THREAD_SERIALIZED, "level");
    CHECK(gv_am_register(count_cb, NULL, &ser_id) == GV_OK, "register");
    gv_barrier();
    for (i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, ser_thread, (void *)(intptr_t)i) ==
                  0, "pthread_create");
    for (i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    /* Each rank gets ser_n from each of its two senders. */
    want = 2 * ser_n;
    gv_flush();
    gv_wait(have, &want);
    CHECK(got == 2 * ser_n, "got %llu of %llu", (unsigned long long)got,
          (unsigned long long)(2 * ser_n));
    /* The barrier, and finalize, from a thread that did not init. */
    {
        pthread_t b;

        CHECK(pthread_create(&b, NULL, barrier_thread, NULL) == 0,
              "pthread_create");
        pthread_join(b, NULL);
    }
    gv_finalize();
    if (rank == 0)
        printf("serialized ok\n");
    return 0;
}

static volatile int spin_stop;

static void *busy(void *arg)
{
    volatile uint64_t x = 0;

    (void)arg;
    while (!spin_stop)
        x++;
    return NULL;
}

/* FUNNELED: another thread exists (and computes); only the main one
 * calls. Affinity is left alone: that thread may use another CPU. */
static int mode_funneled(void)
{
    cpu_set_t before, after;
    pthread_t t;
    gv_am_id_t id;

    CHECK(sched_getaffinity(0, sizeof(before), &before) == 0, "affinity");
    start(GV_LAYERS_MESSAGES, GV_THREAD_FUNNELED);
    CHECK(sched_getaffinity(0, sizeof(after), &after) == 0, "affinity");
    CHECK(CPU_EQUAL(&before, &after), "gv_init_opts changed the affinity "
          "(%d CPUs before, %d after)", CPU_COUNT(&before), CPU_COUNT(&after));
    CHECK(pthread_create(&t, NULL, busy, NULL) == 0, "pthread_create");
    CHECK(gv_am_register(count_cb, NULL, &id) == GV_OK, "register");
    gv_barrier();
    exchange(id, 500);
    spin_stop = 1;
    pthread_join(t, NULL);
    gv_finalize();
    if (rank == 0)
        printf("funneled ok\n");
    return 0;
}

/* ---- fd: a rank asleep in its own epoll wakes for a message ------------ */

/* Sleep in epoll on the Grapevine fd until have(want) or timeout_ms;
 * returns 0 when it came. */
static int sleep_until(int ep, uint64_t want, int timeout_ms)
{
    struct epoll_event ev;
    double             end = gv_wtime() + timeout_ms * 1e-3;

    for (;;) {
        while (gv_progress() > 0)
            ;
        if (got >= want)
            return 0;
        if (gv_wtime() > end)
            return -1;
        if (gv_wait_arm() != GV_OK)
            continue;
        if ((epoll_wait(ep, &ev, 1, 100) < 0) && (errno != EINTR))
            CHECK(0, "epoll_wait: %s", strerror(errno));
    }
}

static int mode_fd(void)
{
    struct epoll_event ev;
    gv_am_id_t         id;
    gv_status_t        st;
    uint64_t           v = 7, round;
    int                fd, ep;

    start(GV_LAYERS_MESSAGES, GV_THREAD_FUNNELED);
    CHECK(gv_am_register(count_cb, NULL, &id) == GV_OK, "register");
    gv_barrier();
    st = gv_wait_fd(&fd);
    if (st == GV_ERR_UNSUPPORTED)
        return skip_all("the transport has no descriptor to sleep on (no "
                        "WAIT_FD in gvinfo -t)");
    CHECK(st == GV_OK, "gv_wait_fd: %s", gv_status_str(st));
    ep = epoll_create1(0);
    memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl");
    /* Rounds of: rank 0 idles 400 ms, then sends to every rank; the others
     * sleep in epoll meanwhile and must use little CPU. Rank 0 keeps
     * sleeping on the fd too while waiting for the replies. */
    for (round = 1; round <= 3; round++) {
        if (gv_rank() == 0) {
            struct timespec ts = {0, 400 * 1000 * 1000};
            int             r;

            nanosleep(&ts, NULL);
            for (r = 1; r < gv_nranks(); r++)
                CHECK(gv_am_send(r, id, &v, 8) == GV_OK, "send");
            gv_flush();
            CHECK(sleep_until(ep, got + (uint64_t)gv_nranks() - 1, 30000) ==
                      0, "round %llu: no replies in 30 s",
                  (unsigned long long)round);
        } else {
            double c0 = cpu_s(), w0 = gv_wtime(), c, w;

            CHECK(sleep_until(ep, round, 30000) == 0,
                  "round %llu: slept through the message",
                  (unsigned long long)round);
            c = cpu_s() - c0;
            w = gv_wtime() - w0;
            /* 400 ms idle: a polling rank would burn all of it. Allow a
             * tenth on a loaded machine. */
            CHECK(c < 0.1 * w + 0.02, "round %llu: %.1f ms of CPU in %.1f "
                  "ms asleep", (unsigned long long)round, c * 1e3, w * 1e3);
            printf("rank %d round %llu: %.2f ms CPU over %.1f ms asleep\n",
                   gv_rank(), (unsigned long long)round, c * 1e3, w * 1e3);
            CHECK(gv_am_send(0, id, &v, 8) == GV_OK, "reply");
            gv_flush();
        }
    }
    close(ep);
    gv_barrier();
    gv_finalize();
    if (rank == 0)
        printf("fd ok\n");
    return 0;
}

/* ---- named handlers in different orders -------------------------------- */

#define NNAMES 6
static const char *const names[NNAMES] = {"actor.ping", "actor.pong",
                                          "plugin.a", "plugin.b.stats",
                                          "x", "a.much.longer.handler.name"};
static volatile uint64_t named_got[NNAMES];

static void named_cb(int src, const void *p, size_t len, void *arg)
{
    int which = (int)(intptr_t)arg;
    int v;

    (void)src;
    CHECK(len == sizeof(v), "len %zu", len);
    memcpy(&v, p, sizeof(v));
    CHECK(v == which, "handler of \"%s\" got a message for \"%s\"",
          names[which], names[v]);
    named_got[which]++;
}

static int named_done(void *arg)
{
    uint64_t want = *(uint64_t *)arg, n = 0;

    for (int i = 0; i < NNAMES; i++)
        n += named_got[i];
    return n >= want;
}

static int mode_named(void)
{
    gv_am_id_t    ids[NNAMES], id2, ghost, extra;
    gv_am_stats_t s;
    uint64_t      want;
    int           i, k, r;

    /* Half before gv_init, in an order that differs between processes
     * (the rank is not known yet), half after, in an order by rank. */
    for (k = 0; k < NNAMES / 2; k++) {
        i = (getpid() & 1) ? (NNAMES / 2 - 1 - k) : k;
        CHECK(gv_am_register_named(names[i], named_cb, (void *)(intptr_t)i,
                                   &ids[i]) == GV_OK,
              "register %s before init: %s", names[i], gv_last_error());
    }
    start(GV_LAYERS_MESSAGES, GV_THREAD_FUNNELED);
    for (k = 0; k < NNAMES / 2; k++) {
        i = NNAMES / 2 + ((gv_rank() % 2) ? (NNAMES / 2 - 1 - k)
                                          : ((k + gv_rank()) % (NNAMES / 2)));
        CHECK(gv_am_register_named(names[i], named_cb, (void *)(intptr_t)i,
                                   &ids[i]) == GV_OK,
              "register %s: %s", names[i], gv_last_error());
    }
    /* The same name again is refused; looking it up is not. */
    CHECK(gv_am_register_named(names[0], named_cb, NULL, &id2) ==
              GV_ERR_INVALID, "second registration");
    CHECK(gv_am_id_named(names[0], &id2) == GV_OK && id2 == ids[0], "lookup");
    CHECK(gv_am_register_named("", named_cb, NULL, &id2) == GV_ERR_INVALID,
          "empty name");
    gv_barrier();
    for (r = 0; r < gv_nranks(); r++)
        for (i = 0; i < NNAMES; i++)
            CHECK(gv_am_send(r, ids[i], &i, sizeof(i)) == GV_OK, "send");
    gv_flush();
    want = (uint64_t)NNAMES * gv_nranks();
    gv_wait(named_done, &want);
    for (i = 0; i < NNAMES; i++)
        CHECK(named_got[i] == (uint64_t)gv_nranks(), "%s got %llu", names[i],
              (unsigned long long)named_got[i]);
    gv_barrier();

    /* A name the receivers never registered: rejected there, named. A
     * name not looked up here cannot be sent to. */
    {
        gv_am_id_t nobody = GV_AM_MAX_HANDLERS;

        for (i = 0; i < NNAMES; i++)
            if (ids[i] == nobody)
                nobody++, i = -1;
        CHECK(gv_am_send(0, nobody, &i, 4) == GV_ERR_INVALID,
              "a send to id %u, which nobody looked up", nobody);
    }
    /* A collective id registered on rank 0 only, without a barrier. */
    if (gv_rank() == 0) {
        CHECK(gv_am_id_named("never.registered", &ghost) == GV_OK, "lookup");
        CHECK(gv_am_register(count_cb, NULL, &extra) == GV_OK, "register");
        for (r = 1; r < gv_nranks(); r++) {
            CHECK(gv_am_send(r, ghost, &i, 4) == GV_OK, "send to ghost");
            CHECK(gv_am_send(r, extra, &i, 8) == GV_OK, "send to extra");
        }
        printf("ghost id %u extra id %u\n", ghost, extra);
    }
    gv_barrier();
    gv_am_stats(&s);
    CHECK(s.rejected == ((gv_rank() == 0) ? 0u : 2u), "rejected %llu",
          (unsigned long long)s.rejected);
    gv_finalize();
    if (rank == 0)
        printf("named ok\n");
    return 0;
}

/* ---- failure: a rank is killed; the others get the callback ------------ */

static volatile int failed_rank = -1;
static char         failed_why[512];

static void on_failure(int r, const char *why, void *arg)
{
    (void)arg;
    failed_rank = r;
    snprintf(failed_why, sizeof(failed_why), "%s", why);
}

static int mode_failure(void)
{
    gv_am_id_t  id;
    gv_status_t st;
    uint64_t    v = 1, want;
    double      end;
    int         victim, peer;

    start(GV_LAYERS_MESSAGES, GV_THREAD_FUNNELED);
    if (gv_nranks() < 3)
        return skip_all("needs 3 ranks");
    CHECK(gv_am_register(count_cb, NULL, &id) == GV_OK, "register");
    CHECK(gv_on_peer_failure(on_failure, NULL) == GV_OK, "install");
    gv_barrier();
    victim = gv_nranks() - 1;
    if (gv_rank() == victim) {
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    /* Keep sending to the victim while waiting: transports learn of a
     * dead peer by a failed send as well as by a closed connection. */
    end = gv_wtime() + 60;
    while (failed_rank < 0) {
        st = gv_am_send_now(victim, id, &v, 8);
        CHECK((st == GV_OK) || (st == GV_ERR_UNREACHABLE), "send: %s",
              gv_status_str(st));
        gv_progress();
        CHECK(gv_wtime() < end, "no failure callback after 60 s");
        usleep(1000);
    }
    CHECK(failed_rank == victim, "callback for rank %d", failed_rank);
    CHECK(gv_peer_failed(victim) && !gv_peer_failed(0), "gv_peer_failed");
    st = gv_am_send(victim, id, &v, 8);
    CHECK(st == GV_ERR_UNREACHABLE, "send to the dead rank: %s",
          gv_status_str(st));
    /* The living go on: an exchange between ranks 0 and 1. */
    peer = (gv_rank() == 0) ? 1 : 0;
    if (gv_rank() < 2) {
        want = 100; /* the only messages to the living */
        for (int i = 0; i < 100; i++)
            CHECK(gv_am_send(peer, id, &v, 8) == GV_OK, "send to the living");
        gv_flush();
        end = gv_wtime() + 60;
        while (got < want) {
            gv_progress();
            CHECK(gv_wtime() < end, "messages between the living lost");
        }
    }
    printf("rank %d saw rank %d fail: %s\n", gv_rank(), failed_rank,
           failed_why);
    gv_finalize();
    printf("rank %d failure ok\n", rank);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = (argc > 1) ? argv[1] : "";

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "reinit") == 0)
        return mode_reinit();
    if (strcmp(mode, "reinit-once") == 0)
        return mode_reinit_once();
    if (strcmp(mode, "errors") == 0)
        return mode_errors();
    if (strcmp(mode, "serialized") == 0)
        return mode_serialized();
    if (strcmp(mode, "funneled") == 0)
        return mode_funneled();
    if (strcmp(mode, "fd") == 0)
        return mode_fd();
    if (strcmp(mode, "named") == 0)
        return mode_named();
    if (strcmp(mode, "failure") == 0)
        return mode_failure();
    fprintf(stderr, "usage: mr_embed reinit|reinit-once|errors|serialized|funneled|fd|"
            "named|failure (got '%s')\n", mode);
    return 2;
}
