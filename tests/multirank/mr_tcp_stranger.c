/* Strangers must not disturb a tcp job: while every rank exchanges
 * checksummed active messages with every other, rank 0 opens raw sockets
 * to the other ranks' listening ports and (a) says nothing, (b) sends
 * garbage, (c) sends a well-formed HELLO with a wrong job key, (d) sends a
 * frame header with an absurd length, (e) sends a HELLO with the right key
 * that claims a rank which may not connect. Every attacked rank must count
 * all five rejections, close all five sockets, and the job must finish with
 * every message delivered intact and in order.
 * Run: gvrun -n 4 build/tests/multirank/mr_tcp_stranger (needs tcp; exits
 * 77 otherwise). SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr_stream.h"

#include "core/boot.h"
#include "core/core.h"
#include "transports/tcp.h"
#include "transports/tcp_frame.h"
#include "transports/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>

#define NATTACKS   5
#define MSGS       1500      /* per destination per round */
#define MAX_BYTES  600       /* payload bytes after the header */

static int me, np;

static void all_to_all(gv_am_id_t id, uint64_t round)
{
    uint8_t  buf[sizeof(mr_msg_hdr_t) + MAX_BYTES];
    uint64_t rng = 0x1234 + (uint64_t)me * 7919 + round;
    int      i, k;

    for (i = 0; i < MSGS; i++)
        for (k = 1; k < np; k++)
            mr_stream_send(id, (me + k) % np, round * MSGS + (uint64_t)i, buf,
                           sizeof(mr_msg_hdr_t) +
                               mr_rand(&rng) % (MAX_BYTES + 1));
}

/* ---- the stranger (rank 0) ---------------------------------------------- */

static int dial(int port)
{
    struct sockaddr_in a;
    struct timeval     tv = { 10, 0 };
    int                fd = socket(AF_INET, SOCK_STREAM, 0);

    if (fd < 0)
        return -1;
    memset(&a, 0, sizeof(a));
    a.sin_family      = AF_INET;
    a.sin_port        = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void send_all(int fd, const void *buf, size_t len)
{
    if (send(fd, buf, len, MSG_NOSIGNAL) != (ssize_t)len)
        fprintf(stderr, "[%04d] mr_tcp_stranger: stranger send failed: %s\n",
                me, strerror(errno));
}

static void attack(int victim, int port, int fds[NATTACKS])
{
    static const char garbage[] =
        "GET / HTTP/1.1\r\nHost: grapevine\r\n\r\n\x00\xff\x13\x37";
    uint8_t hello[GV_TCP_HELLO_FRAME_LEN];
    uint8_t key[GV_JOB_KEY_LEN];
    uint8_t hdr[GV_TCP_FRAME_HDR_LEN];
    int     i;

    for (i = 0; i < NATTACKS; i++) {
        fds[i] = dial(port);
        if (fds[i] < 0)
            gv_abort(1, "stranger cannot connect to rank %d port %d: %s",
                     victim, port, strerror(errno));
    }
    /* (a) fds[0] connects and says nothing. */
    /* (b) garbage */
    send_all(fds[1], garbage, sizeof(garbage) - 1);
    /* (c) a well-formed HELLO with a wrong key */
    memcpy(key, gv__ctx.boot->key, sizeof(key));
    key[7] ^= 0x01;
    gv_tcp_hello_encode(hello, key, (uint32_t)(np - 1), (uint32_t)np);
    send_all(fds[2], hello, sizeof(hello));
    /* (d) a valid header announcing a 4 GiB frame */
    gv_tcp_frame_hdr_encode(hdr, GV_TCP_FRAME_DATA, 0xfffffff0u);
    send_all(fds[3], hdr, sizeof(hdr));
    /* (e) the right key, but a rank that may not connect to the victim:
     * itself, or the highest rank, which is connected already. */
    gv_tcp_hello_encode(hello, gv__ctx.boot->key,
                        (uint32_t)((victim == np - 1) ? victim : np - 1),
                        (uint32_t)np);
    send_all(fds[4], hello, sizeof(hello));
}

/* 1 if the victim closed the socket (EOF or reset), 0 if it is open. */
static int was_dropped(int fd)
{
    char    buf[256];
    ssize_t n;

    for (;;) {
        n = recv(fd, buf, sizeof(buf), 0);
        if (n == 0)
            return 1;
        if (n < 0)
            return (errno == ECONNRESET) || (errno == EPIPE);
        /* The victim must never talk to a stranger. */
        fprintf(stderr, "[%04d] mr_tcp_stranger: a victim sent %zd bytes to "
                "a stranger\n", me, n);
        return 0;
    }
}

/* ---- main --------------------------------------------------------------- */

struct wait_rej {
    uint64_t want;
    uint64_t deadline_ns;
};

static int rejected_enough(void *arg)
{
    struct wait_rej *w = arg;

    return (gv__tl_tcp_rejected(gv__ctx.tl) >= w->want) ||
           (gv__now_ns() > w->deadline_ns);
}

int main(int argc, char **argv)
{
    gv_am_id_t           id;
    int                 *ports;
    int                  fds[64][NATTACKS];
    int                  failures = 0, port, i, k;
    gv_tl_tcp_counters_t c;
    uint64_t             expect;

    /* Short, so that case (a) expires during the test; a value from the
     * environment wins. */
    setenv("GV_TCP_KEY_TIMEOUT_MS", "300", 0);
    mr_init(&argc, &argv);
    me = gv_rank();
    np = gv_nranks();
    if (strcmp(gv_transport_name(), "tcp") != 0)
        mr_skip("not tcp");
    if (gv__ctx.boot->nnodes > 1)
        mr_skip("the stranger dials 127.0.0.1 and the job spans nodes");
    if (np > 64)
        mr_skip("at most 64 ranks");
    mr_stream_init(0x5eed5eedull);
    MR_OK(gv_am_register(mr_stream_on_msg, NULL, &id));

    port  = gv__tl_tcp_listen_port(gv__ctx.tl);
    ports = calloc((size_t)np, sizeof(*ports));
    if ((port <= 0) ||
        (gv__boot_allgather(gv__ctx.boot, &port, sizeof(port), ports) !=
         GV_OK))
        gv_abort(1, "cannot exchange listen ports (port %d)", port);
    gv_barrier();

    /* Round 1: the attack lands while the messages fly. */
    if (me == 0)
        for (i = 1; i < np; i++)
            attack(i, ports[i], fds[i]);
    all_to_all(id, 0);
    gv_barrier();

    /* Victims: wait past the key timeout for case (a). */
    expect = (me == 0) ? 0 : NATTACKS;
    if (expect > 0) {
        struct wait_rej w = {
            .want        = expect,
            .deadline_ns = gv__now_ns() +
                           gv__env.TCP_KEY_TIMEOUT_MS * 1000000ull * 5 +
                           10000000000ull,
        };
        gv_wait(rejected_enough, &w);
    }

    /* Round 2: the job still works after the strangers were dropped. */
    all_to_all(id, 1);
    gv_barrier();

    gv__tl_tcp_counters(gv__ctx.tl, &c);
    if (mr_stream.received != (uint64_t)(np - 1) * MSGS * 2) {
        fprintf(stderr, "[%04d] FAIL received %llu messages, expected %llu\n",
                me, (unsigned long long)mr_stream.received,
                (unsigned long long)(np - 1) * MSGS * 2);
        failures++;
    }
    if (expect > 0) {
        if ((c.conn_rejected < expect) || (c.key_timeouts < 1) ||
            (c.bad_key < 1)) {
            fprintf(stderr, "[%04d] FAIL rejected %llu connections (expected "
                    ">= %llu), %llu key timeouts, %llu wrong keys\n", me,
                    (unsigned long long)c.conn_rejected,
                    (unsigned long long)expect,
                    (unsigned long long)c.key_timeouts,
                    (unsigned long long)c.bad_key);
            failures++;
        }
    }
    if (c.frame_rejected != 0) {
        fprintf(stderr, "[%04d] FAIL %llu frames rejected on job "
                "connections\n", me, (unsigned long long)c.frame_rejected);
        failures++;
    }
    printf("[%04d] received %llu, rejected %llu connections (%llu key "
           "timeouts, %llu wrong keys)\n", me,
           (unsigned long long)mr_stream.received,
           (unsigned long long)c.conn_rejected,
           (unsigned long long)c.key_timeouts, (unsigned long long)c.bad_key);

    /* The stranger checks that every victim hung up on it. */
    if (me == 0) {
        for (i = 1; i < np; i++) {
            for (k = 0; k < NATTACKS; k++) {
                if (!was_dropped(fds[i][k])) {
                    fprintf(stderr, "[0000] FAIL rank %d kept stranger "
                            "connection %c open\n", i, 'a' + k);
                    failures++;
                }
                close(fds[i][k]);
            }
        }
    }
    /* Everyone learns whether anyone failed, so that no rank says ok for
     * a job that did not pass. */
    {
        int *all = calloc((size_t)np, sizeof(*all)), total = 0;
        MR_OK(gv__boot_allgather(gv__ctx.boot, &failures, sizeof(failures),
                                 all));
        for (i = 0; i < np; i++)
            total += all[i];
        free(all);
        failures = total;
    }
    gv_barrier();
    gv_finalize();
    if (me == 0) {
        if (failures == 0)
            printf("mr_tcp_stranger: ok (%d ranks)\n", np);
        else
            printf("mr_tcp_stranger: FAIL (%d failed checks)\n", failures);
    }
    free(ports);
    mr_stream_fini();
    return (failures == 0) ? 0 : 1;
}
