/* A job on one node listens on loopback only: after gv_init and some
 * traffic, every TCP socket of this rank in the LISTEN state (found by
 * matching /proc/net/tcp and tcp6 against the socket inodes of
 * /proc/self/fd) must be bound to 127.0.0.0/8 or ::1, not to an external
 * address or the wildcard. Exit 77 when this host has no address beyond
 * loopback (nothing to tell apart then). Meant for the library transports
 * (ucx over tcp, ofi over tcp;ofi_rxm), whose libraries open the sockets.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#define MAX_INODES 4096

static unsigned long inodes[MAX_INODES];
static int           ninodes;

static void own_sockets(void)
{
    DIR           *d = opendir("/proc/self/fd");
    struct dirent *e;
    char           path[300], link[128];
    ssize_t        n;

    MR_CHECK(d != NULL, "cannot list /proc/self/fd");
    while (((e = readdir(d)) != NULL) && (ninodes < MAX_INODES)) {
        snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
        n = readlink(path, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (sscanf(link, "socket:[%lu]", &inodes[ninodes]) == 1)
            ninodes++;
    }
    closedir(d);
}

static int own(unsigned long inode)
{
    int i;

    for (i = 0; i < ninodes; i++)
        if (inodes[i] == inode)
            return 1;
    return 0;
}

/* Loopback in /proc/net/tcp's hex: 127.x.x.x (little-endian word ending
 * in 7F), ::1, or ::ffff:127.x.x.x. */
static int loopback_hex(const char *a, int v6)
{
    size_t len = strlen(a);

    if (!v6)
        return (len == 8) && (strncasecmp(a + 6, "7F", 2) == 0);
    return (strcasecmp(a, "00000000000000000000000001000000") == 0) ||
           ((strncasecmp(a, "0000000000000000FFFF0000", 24) == 0) &&
            (strncasecmp(a + 30, "7F", 2) == 0));
}

/* Listening sockets of ours in @a file not on loopback: counted and
 * named. */
static int check_file(const char *file, int v6, int *listening_p)
{
    FILE         *f = fopen(file, "r");
    char          line[512], local[64], remote[64];
    unsigned      st;
    unsigned long inode;
    int           bad = 0;

    if (f == NULL)
        return 0; /* no IPv6 here */
    if (fgets(line, sizeof(line), f) == NULL) { /* the header */
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, " %*d: %63s %63s %x %*s %*s %*s %*s %*s %lu",
                   local, remote, &st, &inode) != 4)
            continue;
        if ((st != 0x0A) || !own(inode))
            continue;
        (*listening_p)++;
        *strchr(local, ':') = '\0';
        if (!loopback_hex(local, v6)) {
            fprintf(stderr, "rank %d (%s): listening socket (inode %lu) on "
                    "address %s (%s hex), not loopback\n", gv_rank(),
                    gv_transport_name(), inode, local, file);
            bad++;
        }
    }
    fclose(f);
    return bad;
}

static int has_external_address(void)
{
    struct ifaddrs *ifa, *i;
    int             found = 0;

    if (getifaddrs(&ifa) != 0)
        return 0;
    for (i = ifa; i != NULL; i = i->ifa_next)
        if ((i->ifa_addr != NULL) && !(i->ifa_flags & IFF_LOOPBACK) &&
            (i->ifa_flags & IFF_UP) &&
            ((i->ifa_addr->sa_family == AF_INET) ||
             (i->ifa_addr->sa_family == AF_INET6)))
            found = 1;
    freeifaddrs(ifa);
    return found;
}

static gv_am_id_t id;
static uint64_t   got;

static void on_msg(int src, const void *p, size_t len, void *arg)
{
    (void)src;
    (void)p;
    (void)len;
    (void)arg;
    got++;
}

int main(int argc, char **argv)
{
    int      listening = 0, bad, r;
    uint64_t v = 1;

    /* Before gv_init: a peer may send as soon as it is up. */
    MR_OK(gv_am_register(on_msg, NULL, &id));
    mr_init(&argc, &argv);
    if (!has_external_address())
        mr_skip("this host has no address beyond loopback");
    /* Traffic to every rank, so that connections on demand are up. */
    for (r = 0; r < gv_nranks(); r++)
        MR_OK(gv_am_send(r, id, &v, 8));
    gv_barrier();
    MR_CHECK(got == (uint64_t)gv_nranks(), "%llu messages arrived",
             (unsigned long long)got);
    own_sockets();
    bad = check_file("/proc/net/tcp", 0, &listening) +
          check_file("/proc/net/tcp6", 1, &listening);
    MR_CHECK(bad == 0, "%d of %d listening sockets are not on loopback "
             "(the lines above name them)", bad, listening);
    printf("rank %d over %s: %d listening sockets, all on loopback: ok\n",
           gv_rank(), gv_transport_name(), listening);
    gv_finalize();
    return 0;
}
