/* A storm of silent connections to an ofi tcp;ofi_rxm rank, more than its
 * descriptor limit: rank 1 finds its own listening sockets (its socket
 * inodes in /proc/net/tcp) and tells rank 0, which forks STORMERS
 * processes that each open PER_STORMER connections to them and hold them
 * for HOLD_S seconds, while the two ranks keep exchanging messages. The
 * job key cannot be checked there (libfabric owns the socket and keeps
 * what it accepted), so this checks that the damage is bounded: the job
 * finishes with every message delivered, and the rank names the cause
 * (its "open file descriptors" warning, which the driver greps). The
 * driver runs it under a lowered limit (ulimit -n 256); with
 * --raised it checks instead that gv_init raised a lowered soft limit to
 * the hard one (ulimit -Sn 256), which the storm then stays under. Exits 77 over
 * other transports. SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#define STORMERS     2
#define PER_STORMER  200
#define HOLD_S       4
#define MAX_PORTS    8
#define ROUNDS       ((HOLD_S + 2) * 20) /* of 50 ms and more */

typedef struct {
    uint32_t addr; /* as /proc/net/tcp prints it: the raw network word */
    uint32_t port; /* host order */
} listener_t;

static gv_am_id_t id_ports, id_msg;
static listener_t ports[MAX_PORTS];
static int        nports = -1;
static uint64_t   got;

static void on_ports(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)arg;
    MR_CHECK((len % sizeof(listener_t)) == 0 &&
             len <= sizeof(ports), "ports message of %zu bytes", len);
    memcpy(ports, p, len);
    nports = (int)(len / sizeof(listener_t));
}

static void on_msg(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)p;
    (void)len;
    (void)arg;
    got++;
}

static int is_own_socket(unsigned long inode)
{
    DIR           *d = opendir("/proc/self/fd");
    struct dirent *e;
    char           path[300], link[128];
    unsigned long  v;
    ssize_t        n;
    int            found = 0;

    MR_CHECK(d != NULL, "cannot list /proc/self/fd");
    while (!found && ((e = readdir(d)) != NULL)) {
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        n = readlink(path, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        found = (sscanf(link, "socket:[%lu]", &v) == 1) && (v == inode);
    }
    closedir(d);
    return found;
}

/* This rank's IPv4 listening sockets. */
static int own_listeners(listener_t *out, int max)
{
    FILE         *f = fopen("/proc/net/tcp", "r");
    char          line[512];
    unsigned      addr, port, st;
    unsigned long inode;
    int           n = 0;

    MR_CHECK(f != NULL, "cannot read /proc/net/tcp");
    while ((fgets(line, sizeof(line), f) != NULL) && (n < max)) {
        if (sscanf(line, " %*d: %x:%x %*s %x %*s %*s %*s %*s %*s %lu",
                   &addr, &port, &st, &inode) != 4)
            continue;
        if ((st == 0x0A) && is_own_socket(inode)) {
            out[n].addr = addr;
            out[n].port = port;
            n++;
        }
    }
    fclose(f);
    return n;
}

static int count_fds(void)
{
    DIR           *d = opendir("/proc/self/fd");
    struct dirent *e;
    int            n = 0;

    if (d == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += (e->d_name[0] != '.');
    closedir(d);
    return n - 1;
}

/* A stormer: drop what it inherited, open its connections (silent: no
 * byte sent), hold them, leave. */
static void storm(int which)
{
    int fd, i, opened = 0;

    for (fd = 3; fd < 4096; fd++)
        close(fd);
    for (i = 0; i < PER_STORMER; i++) {
        const listener_t  *l = &ports[i % nports];
        struct sockaddr_in sa;
        int                s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK,
                                      0);

        if (s < 0)
            break;
        memset(&sa, 0, sizeof(sa));
        sa.sin_family      = AF_INET;
        sa.sin_addr.s_addr = l->addr;
        sa.sin_port        = htons((uint16_t)l->port);
        if ((connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0) ||
            (errno == EINPROGRESS))
            opened++;
    }
    fprintf(stderr, "stormer %d: %d connections opened\n", which, opened);
    sleep(HOLD_S);
    _exit(0);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    pid_t    kids[STORMERS] = {0};
    uint64_t sent = 0, v = 1, total = 0;
    int      i, r, me, status, peak = 0, n;

    /* Before gv_init: a peer may send as soon as it is up. */
    MR_OK(gv_am_register(on_ports, NULL, &id_ports));
    MR_OK(gv_am_register(on_msg, NULL, &id_msg));
    mr_init(&argc, &argv);
    me = gv_rank();
    if (strcmp(gv_transport_name(), "ofi") != 0)
        mr_skip("a connection storm against libfabric's tcp provider");
    if ((argc > 1) && (strcmp(argv[1], "--raised") == 0)) {
        struct rlimit rl;

        MR_CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit failed");
        MR_CHECK(rl.rlim_cur == rl.rlim_max, "the soft descriptor limit "
                 "%llu was not raised to the hard limit %llu",
                 (unsigned long long)rl.rlim_cur,
                 (unsigned long long)rl.rlim_max);
    }
    MR_CHECK(gv_nranks() == 2, "runs on 2 ranks, not %d", gv_nranks());
    if (me == 1) {
        listener_t mine[MAX_PORTS];
        int        k = own_listeners(mine, MAX_PORTS);

        MR_OK(gv_am_send(0, id_ports, mine, (size_t)k * sizeof(*mine)));
    }
    gv_barrier();
    if (me == 0) {
        if (nports <= 0) {
            printf("skip: rank 1 has no IPv4 listening socket (provider "
                   "not tcp?)\n");
        } else {
            for (i = 0; i < STORMERS; i++) {
                kids[i] = fork();
                MR_CHECK(kids[i] >= 0, "fork failed");
                if (kids[i] == 0)
                    storm(i);
            }
        }
    }
    /* Both ranks keep talking through the storm and after it: the same
     * number of rounds each, a barrier and 50 ms of polling apart. */
    for (r = 0; r < ROUNDS; r++) {
        double t0 = now_s();

        for (i = 0; i < 64; i++, sent++)
            MR_OK(gv_am_send(1 - me, id_msg, &v, 8));
        gv_barrier();
        while (now_s() - t0 < 0.05) /* libfabric accepts as it progresses */
            gv_progress();
        if (me == 1) {
            n = count_fds();
            if (n > peak)
                peak = n;
        }
    }
    if ((me == 0) && (nports > 0))
        for (i = 0; i < STORMERS; i++)
            waitpid(kids[i], &status, 0);
    gv_barrier();
    MR_CHECK(got == sent, "rank %d got %llu messages, expected %llu", me,
             (unsigned long long)got, (unsigned long long)sent);
    total = got;
    if (me == 1)
        printf("rank 1 over ofi took %llu messages through a storm of %d "
               "connections; its descriptors peaked at %d (the limit is "
               "read by ulimit -n): ok\n", (unsigned long long)total,
               STORMERS * PER_STORMER, peak);
    gv_finalize();
    return 0;
}
