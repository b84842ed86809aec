/* The tcp transport: a full mesh of non-blocking TCP sockets driven by
 * epoll, authenticated by the job key. SPDX-License-Identifier: BSD-3-Clause
 *
 * Connection set-up (init, collective). Every rank listens (127.0.0.1 when
 * the job is on one node, the address of GV_TCP_IFACE otherwise) and the
 * listen addresses go round through gv__boot_allgather. Rank i then
 * connects to every rank j < i and accepts from every rank j > i. Because
 * every listening socket exists before the exchange, a connect completes in
 * the kernel's backlog whether or not the acceptor is looking yet, so the
 * order cannot deadlock. The connector's first frame is a HELLO (job key,
 * rank, size, protocol version); the acceptor checks it (constant-time key
 * compare) and answers with its own HELLO, which the connector checks in
 * turn. init returns once every peer is authenticated both ways. While init
 * runs, authenticated sockets are not read (their epoll mask is empty):
 * nothing may reach the upper layer before init has returned.
 *
 * Strangers. The listening socket stays open for the whole job. Anything
 * that connects later is held in a small pending list and must present a
 * valid HELLO within GV_TCP_KEY_TIMEOUT_MS; garbage, a wrong key, rank,
 * size or version, a rank that is already connected, or silence get the
 * connection closed with a warning naming the address and a counter bumped
 * (when more than TCP_MAX_PENDING wait, the oldest is dropped). Pending
 * connections are read at most one HELLO frame at a time into a fixed
 * 40-byte buffer, so a stranger cannot make a rank allocate anything.
 *
 * Data path. am_send builds an 8-byte frame header and tries one sendmsg
 * straight to the socket; only what the kernel did not take is copied into
 * the peer's send queue, which is bounded by GV_TCP_SENDQ (back-pressure:
 * GV_ERR_NO_RESOURCE). EPOLLOUT is armed only while a queue is non-empty,
 * so the common send costs one syscall. progress() polls epoll with a zero
 * timeout and reads readable sockets into a per-peer buffer; every complete
 * frame goes to params.recv_cb straight from that buffer (frames are padded
 * to 8 bytes, so payloads arrive 8-byte aligned).
 *
 * Shutdown. fini sends BYE to every peer, drains its queues, half-closes,
 * and reads until every peer has half-closed too, so that no socket is
 * closed with unread data (which would send a reset).
 */
#define _GNU_SOURCE
#include "transports/tcp.h"
#include "transports/tcp_frame.h"
#include "transports/transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define TCP_MAX_EVENTS    64
#define TCP_MAX_PENDING   64          /* unauthenticated connections held;
                                         the oldest goes when one more comes */
#define TCP_RX_INIT       (128u << 10)
#define TCP_RX_MAX        (GV_TCP_FRAME_MAX_PAYLOAD + (256u << 10))
#define TCP_TX_INIT       (64u << 10)
#define TCP_SMALL_SEND    512         /* copy into one buffer below this */
#define TCP_READ_ROUNDS   4           /* recv calls per readable socket */
#define TCP_WARN_LIMIT    100         /* rejection warnings before debug */
#define TCP_FINI_WAIT_S   5

typedef enum {
    CONN_CONNECTING, /* connect() in flight (we are the connector) */
    CONN_HELLO_WAIT, /* waiting for the peer's HELLO */
    CONN_OPEN,       /* authenticated both ways */
    CONN_CLOSED,     /* fd closed; struct kept until it is safe to free */
} conn_state_t;

typedef struct tcp_conn {
    int              fd;
    conn_state_t     state;
    int              rank;        /* peer rank; -1 while a stranger */
    int              accepted;    /* we accepted it (else we connected) */
    int              bye;         /* peer sent BYE: its EOF is benign */
    int              wr_shut;     /* fini: we half-closed */
    uint32_t         ev;          /* epoll mask currently registered */
    uint64_t         deadline_ns; /* accepted: HELLO due by then */
    /* HELLO phase: exact-size reads, so nothing past HELLO is consumed. */
    uint8_t          hello[GV_TCP_HELLO_FRAME_LEN];
    size_t           hello_len;
    /* Receive buffer of an open connection. */
    uint8_t         *rx;
    size_t           rx_len, rx_cap;
    /* Send queue: bytes tx[tx_head .. tx_head + tx_len). */
    uint8_t         *tx;
    size_t           tx_head, tx_len, tx_cap;
    struct tcp_conn *next;        /* pending list or graveyard */
    char             addr[INET6_ADDRSTRLEN + 10];
} tcp_conn_t;

/* A listen address as it goes through the allgather. */
typedef struct tcp_addr {
    uint16_t family;   /* AF_INET or AF_INET6 */
    uint16_t port;     /* network byte order */
    uint32_t scope_id; /* IPv6 link-local */
    uint8_t  addr[16];
} tcp_addr_t;

typedef struct tcp_tl {
    int                  epfd;
    int                  lfd;
    int                  port;
    int                  rank, size;
    int                  connecting;   /* inside init */
    int                  finalizing;   /* inside fini */
    int                  failed;       /* init: a fatal set-up error */
    uint8_t              key[GV_JOB_KEY_LEN];
    tcp_conn_t         **peers;        /* size entries, NULL for self */
    unsigned             nopen;        /* peers authenticated */
    tcp_conn_t          *pending;      /* accepted, not yet authenticated */
    unsigned             npending;
    tcp_conn_t          *graveyard;    /* closed strangers, freed later */
    size_t               sendq_max;
    uint64_t             key_timeout_ns;
    unsigned             nwarn;
    uint64_t             dropped;      /* frames discarded in fini */
    gv_tl_tcp_counters_t cnt;
    gv_tl_recv_cb        recv_cb;
    void                *recv_arg;
    int                  nstash;       /* events wait() left in events[] */
    struct epoll_event   events[TCP_MAX_EVENTS];
} tcp_tl_t;

static const uint8_t zeros[GV_TCP_FRAME_ALIGN];

/* Why init failed (gv__tl_why). */
#define init_log(_fmt, ...) gv__tl_why("tcp", _fmt, ##__VA_ARGS__)

static void sockaddr_str(const struct sockaddr_storage *ss, char *buf,
                         size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    int  port                   = 0;

    if (ss->ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
        inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
        port = ntohs(in->sin_port);
    } else if (ss->ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
        port = ntohs(in6->sin6_port);
    }
    /* [v6]:port, so that the port cannot be read as part of the address */
    if (ss->ss_family == AF_INET6)
        snprintf(buf, len, "[%s]:%d", host, port);
    else
        snprintf(buf, len, "%s:%d", host, port);
}

static socklen_t addr_to_sockaddr(const tcp_addr_t *a,
                                  struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof(*ss));
    if (a->family == AF_INET6) {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        in6->sin6_family   = AF_INET6;
        in6->sin6_port     = a->port;
        in6->sin6_scope_id = a->scope_id;
        memcpy(&in6->sin6_addr, a->addr, 16);
        return sizeof(*in6);
    }
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    in->sin_family = AF_INET;
    in->sin_port   = a->port;
    memcpy(&in->sin_addr, a->addr, 4);
    return sizeof(*in);
}

/* ---- connections ------------------------------------------------------ */

static uint32_t conn_wanted_events(const tcp_tl_t *t, const tcp_conn_t *c)
{
    uint32_t ev = 0;

    switch (c->state) {
    case CONN_CONNECTING: ev = EPOLLOUT; break;
    case CONN_HELLO_WAIT: ev = EPOLLIN; break;
    case CONN_OPEN:       ev = t->connecting ? 0 : EPOLLIN; break;
    case CONN_CLOSED:     return 0;
    }
    if (c->tx_len > 0)
        ev |= EPOLLOUT;
    return ev;
}

static void conn_update_events(tcp_tl_t *t, tcp_conn_t *c)
{
    struct epoll_event e;
    uint32_t           ev;

    if (c->state == CONN_CLOSED)
        return;
    ev = conn_wanted_events(t, c);
    if (ev == c->ev)
        return;
    e.events   = ev;
    e.data.ptr = c;
    if (epoll_ctl(t->epfd, EPOLL_CTL_MOD, c->fd, &e) != 0)
        gv_fatal("tcp: epoll_ctl(mod) on the connection to %s failed: %m",
                 c->addr);
    c->ev = ev;
}

static tcp_conn_t *conn_new(tcp_tl_t *t, int fd, conn_state_t state,
                            int rank, int accepted)
{
    tcp_conn_t        *c = gv_calloc(1, sizeof(*c));
    struct epoll_event e;
    int                one = 1;

    c->fd       = fd;
    c->state    = state;
    c->rank     = rank;
    c->accepted = accepted;
    /* Latency matters more than packet count: the aggregator already
     * batches, so Nagle would only delay. */
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        gv_debug("tcp: TCP_NODELAY failed: %m");
    c->ev      = conn_wanted_events(t, c);
    e.events   = c->ev;
    e.data.ptr = c;
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &e) != 0) {
        gv_warn("tcp: epoll_ctl(add) failed: %m");
        gv_free(c);
        return NULL;
    }
    return c;
}

/* Close the socket now; the struct stays valid (events later in the same
 * epoll batch may still point at it). */
static void conn_close(tcp_tl_t *t, tcp_conn_t *c)
{
    if (c->state == CONN_CLOSED)
        return;
    /* close() drops the fd from the epoll set (we never dup it). */
    close(c->fd);
    c->fd    = -1;
    c->state = CONN_CLOSED;
    c->ev    = 0;
}

static void conn_free(tcp_conn_t *c)
{
    if (c == NULL)
        return;
    if (c->fd >= 0)
        close(c->fd);
    gv_free(c->rx);
    gv_free(c->tx);
    gv_free(c);
}

static void pending_remove(tcp_tl_t *t, tcp_conn_t *c)
{
    tcp_conn_t **pp;

    for (pp = &t->pending; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp     = c->next;
            c->next = NULL;
            t->npending--;
            return;
        }
    }
}

/* Refuse an unauthenticated connection: log, count, close. */
static void conn_reject(tcp_tl_t *t, tcp_conn_t *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void conn_reject(tcp_tl_t *t, tcp_conn_t *c, const char *fmt, ...)
{
    char    why[160];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    t->cnt.conn_rejected++;
    /* A flood of strangers must not flood the log either. */
    if (t->nwarn < TCP_WARN_LIMIT) {
        t->nwarn++;
        gv_warn("tcp: rejected connection from %s: %s%s", c->addr, why,
                (t->nwarn == TCP_WARN_LIMIT) ?
                    " (further rejections are logged at debug level)" : "");
    } else {
        gv_debug("tcp: rejected connection from %s: %s", c->addr, why);
    }
    conn_close(t, c);
    if (!c->accepted) {
        /* The peer we dialled answered wrongly: set-up cannot finish. */
        t->failed = 1;
    } else if (c->rank < 0) {
        pending_remove(t, c);
        c->next      = t->graveyard;
        t->graveyard = c;
    }
}

/* An authenticated peer is gone (EOF, reset, bad frame). Outside fini this
 * stops the job; during finalize gv__peer_failed returns and we forget the
 * peer. */
static void conn_lost(tcp_tl_t *t, tcp_conn_t *c, const char *what)
{
    int rank   = c->rank;
    int benign = c->bye || t->finalizing;

    if (c->state == CONN_OPEN)
        t->nopen--;
    conn_close(t, c);
    if (benign) {
        gv_debug("tcp: connection to rank %d closed (%s)", rank, what);
        return;
    }
    if (t->connecting) {
        /* gv_init has not returned: fail it instead of the job. */
        init_log("tcp: connection to rank %d (%s) lost during set-up: %s",
                 rank, c->addr, what);
        t->failed = 1;
        return;
    }
    gv__peer_failed(rank, "tcp: connection to rank %d (%s): %s", rank,
                    c->addr, what);
}

/* ---- sending ---------------------------------------------------------- */

/* Append iov[] to the send queue, skipping the first @a skip bytes. */
static void txq_append(tcp_conn_t *c, const struct iovec *iov, int iovcnt,
                       size_t skip)
{
    size_t total = 0, need;
    int    i;

    for (i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    total -= skip;
    need = c->tx_len + total;
    if (c->tx_head + need > c->tx_cap) {
        if (need <= c->tx_cap) {
            memmove(c->tx, c->tx + c->tx_head, c->tx_len);
        } else {
            size_t   cap = (c->tx_cap < TCP_TX_INIT) ? TCP_TX_INIT : c->tx_cap;
            uint8_t *tx;

            while (cap < need)
                cap *= 2;
            tx = gv_malloc(cap);
            if (c->tx_len > 0)
                memcpy(tx, c->tx + c->tx_head, c->tx_len);
            gv_free(c->tx);
            c->tx     = tx;
            c->tx_cap = cap;
        }
        c->tx_head = 0;
    }
    for (i = 0; i < iovcnt; i++) {
        size_t len = iov[i].iov_len;
        const uint8_t *p = iov[i].iov_base;

        if (skip >= len) {
            skip -= len;
            continue;
        }
        p   += skip;
        len -= skip;
        skip = 0;
        memcpy(c->tx + c->tx_head + c->tx_len, p, len);
        c->tx_len += len;
    }
}

/* Write as much of the queue as the socket takes. 0, or -1 if the
 * connection was lost (already handled). */
static int conn_flush(tcp_tl_t *t, tcp_conn_t *c)
{
    while (c->tx_len > 0) {
        ssize_t n = send(c->fd, c->tx + c->tx_head, c->tx_len,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            c->tx_head += (size_t)n;
            c->tx_len  -= (size_t)n;
            continue;
        }
        if ((n < 0) && (errno == EINTR))
            continue;
        if ((n < 0) && ((errno == EAGAIN) || (errno == EWOULDBLOCK)))
            break;
        char what[96];
        snprintf(what, sizeof(what), "send failed: %s", strerror(errno));
        conn_lost(t, c, what);
        return -1;
    }
    if (c->tx_len == 0)
        c->tx_head = 0;
    conn_update_events(t, c);
    return 0;
}

/* Send a frame given as iov[] (already framed and padded): directly if the
 * queue is empty, queueing the rest. @a force ignores the queue bound (for
 * control frames). GV_OK, GV_ERR_NO_RESOURCE or GV_ERR_UNREACHABLE. */
static gv_status_t conn_sendv(tcp_tl_t *t, tcp_conn_t *c, struct iovec *iov,
                              int iovcnt, size_t flen, int force)
{
    struct msghdr msg;
    ssize_t       n;

    if (c->tx_len > 0) {
        if (!force && (c->tx_len + flen > t->sendq_max)) {
            /* Full: see whether the socket drained meanwhile. */
            if (conn_flush(t, c) < 0)
                return GV_ERR_UNREACHABLE;
            if ((c->tx_len > 0) && (c->tx_len + flen > t->sendq_max)) {
                t->cnt.sendq_full++;
                return GV_ERR_NO_RESOURCE;
            }
        }
        if (c->tx_len > 0) {
            /* Order: behind what is queued. EPOLLOUT is already armed. */
            txq_append(c, iov, iovcnt, 0);
            return GV_OK;
        }
    }

    memset(&msg, 0, sizeof(msg));
    msg.msg_iov    = iov;
    msg.msg_iovlen = (size_t)iovcnt;
    do {
        /* send() skips the iovec import that sendmsg() pays for. */
        if (iovcnt == 1)
            n = send(c->fd, iov[0].iov_base, iov[0].iov_len,
                     MSG_NOSIGNAL | MSG_DONTWAIT);
        else
            n = sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while ((n < 0) && (errno == EINTR));
    if ((size_t)n == flen)
        return GV_OK;
    if (n < 0) {
        if ((errno != EAGAIN) && (errno != EWOULDBLOCK)) {
            char what[96];
            snprintf(what, sizeof(what), "send failed: %s", strerror(errno));
            conn_lost(t, c, what);
            return GV_ERR_UNREACHABLE;
        }
        n = 0;
    }
    /* The kernel took a prefix: the rest must follow before anything else,
     * so it is queued even if it exceeds the bound (at most one frame). */
    txq_append(c, iov, iovcnt, (size_t)n);
    conn_update_events(t, c);
    return GV_OK;
}

static gv_status_t conn_send_hello(tcp_tl_t *t, tcp_conn_t *c)
{
    uint8_t      frame[GV_TCP_HELLO_FRAME_LEN];
    struct iovec iov = { frame, sizeof(frame) };

    gv_tcp_hello_encode(frame, t->key, (uint32_t)t->rank, (uint32_t)t->size);
    return conn_sendv(t, c, &iov, 1, sizeof(frame), 1);
}

static gv_status_t tcp_am_send(gv_tl_t *tl, int dst, const void *hdr,
                               size_t hdr_len, const void *payload,
                               size_t len, gv_req_t *req)
{
    tcp_tl_t    *t = tl->priv;
    tcp_conn_t  *c;
    size_t       mlen = hdr_len + len;
    size_t       flen;
    uint8_t      small[TCP_SMALL_SEND];
    struct iovec iov[4];

    (void)req; /* bytes are always sent or copied: never GV_INPROGRESS */
    if ((dst < 0) || (dst >= t->size) || (t->peers[dst] == NULL) ||
        (mlen > GV_TCP_FRAME_MAX_PAYLOAD))
        return GV_ERR_INVALID;
    c = t->peers[dst];
    if (__builtin_expect(c->state != CONN_OPEN, 0)) {
        /* A peer that said BYE has passed the final barrier: nothing it
         * could still need is sent after that. */
        return c->bye ? GV_OK : GV_ERR_UNREACHABLE;
    }
    flen = gv_tcp_frame_padded(mlen);
    if (flen <= sizeof(small)) {
        /* One contiguous buffer: the cheapest way into the kernel. */
        gv_tcp_frame_hdr_encode(small, GV_TCP_FRAME_DATA, (uint32_t)mlen);
        if (hdr_len > 0)
            memcpy(small + GV_TCP_FRAME_HDR_LEN, hdr, hdr_len);
        if (len > 0)
            memcpy(small + GV_TCP_FRAME_HDR_LEN + hdr_len, payload, len);
        memset(small + GV_TCP_FRAME_HDR_LEN + mlen, 0,
               flen - GV_TCP_FRAME_HDR_LEN - mlen);
        iov[0].iov_base = small;
        iov[0].iov_len  = flen;
        return conn_sendv(t, c, iov, 1, flen, 0);
    }
    uint8_t fh[GV_TCP_FRAME_HDR_LEN];
    gv_tcp_frame_hdr_encode(fh, GV_TCP_FRAME_DATA, (uint32_t)mlen);
    iov[0].iov_base = fh;
    iov[0].iov_len  = sizeof(fh);
    iov[1].iov_base = (void *)hdr;
    iov[1].iov_len  = hdr_len;
    iov[2].iov_base = (void *)payload;
    iov[2].iov_len  = len;
    iov[3].iov_base = (void *)zeros;
    iov[3].iov_len  = flen - GV_TCP_FRAME_HDR_LEN - mlen;
    return conn_sendv(t, c, iov, 4, flen, 0);
}

/* ---- authentication --------------------------------------------------- */

/* The peer @a c presented a HELLO: judge it. Returns 1 if accepted. */
static int hello_check(tcp_tl_t *t, tcp_conn_t *c, const gv_tcp_frame_t *f)
{
    gv_tcp_hello_t h;
    const char    *why = NULL;

    if (f->type != GV_TCP_FRAME_HELLO) {
        conn_reject(t, c, "first frame is not a hello (type %u)", f->type);
        return 0;
    }
    if (gv_tcp_hello_parse(c->hello + f->off, f->len, &h, &why) != GV_OK) {
        conn_reject(t, c, "%s", why);
        return 0;
    }
    if (!gv_tcp_key_equal(h.key, t->key)) {
        t->cnt.bad_key++;
        conn_reject(t, c, "wrong job key");
        return 0;
    }
    if (h.size != (uint32_t)t->size) {
        conn_reject(t, c, "hello for a job of %u ranks, this one has %d",
                    h.size, t->size);
        return 0;
    }
    if (c->accepted) {
        /* Only higher ranks connect to us, once each. */
        if ((h.rank >= (uint32_t)t->size) || (h.rank <= (uint32_t)t->rank)) {
            conn_reject(t, c, "hello from rank %u, which does not connect "
                        "to rank %d", h.rank, t->rank);
            return 0;
        }
        if (t->peers[h.rank] != NULL) {
            conn_reject(t, c, "rank %u is already connected", h.rank);
            return 0;
        }
    } else if (h.rank != (uint32_t)c->rank) {
        conn_reject(t, c, "answered as rank %u, expected rank %d", h.rank,
                    c->rank);
        return 0;
    }
    return 1;
}

static void conn_open(tcp_tl_t *t, tcp_conn_t *c, int rank)
{
    if (c->accepted) {
        pending_remove(t, c);
        c->rank        = rank;
        t->peers[rank] = c;
    }
    c->state  = CONN_OPEN;
    c->rx_cap = TCP_RX_INIT;
    c->rx     = gv_malloc(c->rx_cap);
    c->rx_len = 0;
    t->nopen++;
    gv_debug("tcp: rank %d authenticated (%s)", rank, c->addr);
    if (c->accepted && (conn_send_hello(t, c) != GV_OK))
        return; /* lost; already handled */
    conn_update_events(t, c);
}

/* Read towards a HELLO with exact-size reads. */
static void hello_read(tcp_tl_t *t, tcp_conn_t *c)
{
    gv_tcp_frame_t  f;
    gv_tcp_decode_t r;
    ssize_t         n;

    n = recv(c->fd, c->hello + c->hello_len,
             sizeof(c->hello) - c->hello_len, 0);
    if (n == 0) {
        if (c->accepted)
            conn_reject(t, c, "closed before presenting the job key");
        else
            conn_lost(t, c, "closed before answering hello");
        return;
    }
    if (n < 0) {
        if ((errno == EAGAIN) || (errno == EWOULDBLOCK) || (errno == EINTR))
            return;
        if (c->accepted) {
            conn_reject(t, c, "receive failed: %s", strerror(errno));
        } else {
            char what[96];
            snprintf(what, sizeof(what), "receive failed: %s",
                     strerror(errno));
            conn_lost(t, c, what);
        }
        return;
    }
    c->hello_len += (size_t)n;
    r = gv_tcp_frame_decode(c->hello, c->hello_len, &f);
    if (r == GV_TCP_DECODE_BAD) {
        if (c->accepted) {
            conn_reject(t, c, "%s", f.why);
        } else {
            t->cnt.frame_rejected++;
            conn_lost(t, c, f.why);
        }
        return;
    }
    if (r == GV_TCP_DECODE_NEED_MORE) {
        /* A valid header of a frame bigger than a HELLO is no HELLO. */
        if (f.need > sizeof(c->hello))
            conn_reject(t, c, "first frame is not a hello (type %u)",
                        c->hello[3]);
        return;
    }
    if (!hello_check(t, c, &f))
        return;
    conn_open(t, c, (int)gv_tcp_get32(c->hello + GV_TCP_FRAME_HDR_LEN + 16));
}

static void do_accept(tcp_tl_t *t)
{
    int i;

    for (i = 0; i < 16; i++) {
        struct sockaddr_storage ss;
        socklen_t               sl = sizeof(ss);
        tcp_conn_t             *c;
        char                    addr[sizeof(c->addr)];
        int                     fd;

        fd = accept4(t->lfd, (struct sockaddr *)&ss, &sl,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if ((errno != EAGAIN) && (errno != EWOULDBLOCK) &&
                (errno != EINTR) && (errno != ECONNABORTED))
                gv_debug("tcp: accept failed: %m");
            return;
        }
        sockaddr_str(&ss, addr, sizeof(addr));
        if (t->npending >= TCP_MAX_PENDING) {
            /* Make room by dropping the connection that has waited
             * longest (the list's tail): a peer of the job presents its
             * key at once, so silent strangers cannot crowd it out. */
            tcp_conn_t *old = t->pending;
            while (old->next != NULL)
                old = old->next;
            conn_reject(t, old, "evicted: %u connections wait for their key",
                        t->npending);
        }
        c = conn_new(t, fd, CONN_HELLO_WAIT, -1, 1);
        if (c == NULL) {
            close(fd);
            continue;
        }
        memcpy(c->addr, addr, sizeof(addr));
        c->deadline_ns = gv__now_ns() + t->key_timeout_ns;
        c->next        = t->pending;
        t->pending     = c;
        t->npending++;
    }
}

static void pending_expire(tcp_tl_t *t)
{
    uint64_t    now = gv__now_ns();
    tcp_conn_t *c, *next;

    for (c = t->pending; c != NULL; c = next) {
        next = c->next;
        if (now >= c->deadline_ns) {
            t->cnt.key_timeouts++;
            conn_reject(t, c, "no job key within %llu ms",
                        (unsigned long long)(t->key_timeout_ns / 1000000));
        }
    }
}

static void graveyard_free(tcp_tl_t *t)
{
    while (t->graveyard != NULL) {
        tcp_conn_t *c = t->graveyard;
        t->graveyard  = c->next;
        conn_free(c);
    }
}

/* ---- receiving -------------------------------------------------------- */

/* Frame the bytes in c->rx and hand them up. 0 if the connection closed. */
static int conn_parse(tcp_tl_t *t, tcp_conn_t *c)
{
    size_t          pos = 0;
    gv_tcp_frame_t  f;
    gv_tcp_decode_t r = GV_TCP_DECODE_NEED_MORE;

    while (c->state == CONN_OPEN) {
        r = gv_tcp_frame_decode(c->rx + pos, c->rx_len - pos, &f);
        if (r != GV_TCP_DECODE_FRAME)
            break;
        switch (f.type) {
        case GV_TCP_FRAME_DATA:
            if (!t->finalizing)
                t->recv_cb(t->recv_arg, c->rank, c->rx + pos + f.off, f.len);
            else
                t->dropped++;
            break;
        case GV_TCP_FRAME_BYE:
            c->bye = 1;
            break;
        default: /* HELLO */
            r     = GV_TCP_DECODE_BAD;
            f.why = "hello on an open connection";
            break;
        }
        if (r == GV_TCP_DECODE_BAD)
            break;
        pos += f.frame_len;
    }
    /* The callback may have lost this connection (a failed reply). */
    if (c->state != CONN_OPEN)
        return 0;
    if (r == GV_TCP_DECODE_BAD) {
        t->cnt.frame_rejected++;
        gv_warn("tcp: malformed frame from rank %d (%s): %s; closing the "
                "connection", c->rank, c->addr, f.why);
        conn_lost(t, c, "sent a malformed frame");
        return 0;
    }
    if (pos > 0) {
        c->rx_len -= pos;
        if (c->rx_len > 0)
            memmove(c->rx, c->rx + pos, c->rx_len);
    }
    /* f.need is capped by the decoder (GV_TCP_FRAME_MAX_PAYLOAD). */
    if (f.need > c->rx_cap) {
        size_t cap = c->rx_cap * 2;
        if (cap > TCP_RX_MAX)
            cap = TCP_RX_MAX;
        if (cap < f.need)
            cap = f.need;
        c->rx     = gv_realloc(c->rx, cap);
        c->rx_cap = cap;
    }
    return 1;
}

static void conn_read(tcp_tl_t *t, tcp_conn_t *c)
{
    int round;

    for (round = 0; round < TCP_READ_ROUNDS; round++) {
        size_t  space = c->rx_cap - c->rx_len;
        ssize_t n     = recv(c->fd, c->rx + c->rx_len, space, 0);

        if (n > 0) {
            c->rx_len += (size_t)n;
            if (!conn_parse(t, c))
                return;
            /* A short read means the socket is (very likely) empty: save
             * the recv that would say EAGAIN; epoll is level triggered. */
            if ((size_t)n < space)
                return;
            continue;
        }
        if (n == 0) {
            conn_lost(t, c, c->bye ? "closed after bye" :
                                     "connection closed by the peer");
            return;
        }
        if ((errno == EAGAIN) || (errno == EWOULDBLOCK))
            return;
        if (errno == EINTR)
            continue;
        char what[96];
        snprintf(what, sizeof(what), "receive failed: %s", strerror(errno));
        conn_lost(t, c, what);
        return;
    }
}

static void connect_done(tcp_tl_t *t, tcp_conn_t *c)
{
    int       err = 0;
    socklen_t sl  = sizeof(err);

    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0)
        err = errno;
    if (err != 0) {
        char what[96];
        snprintf(what, sizeof(what), "connect failed: %s", strerror(err));
        conn_lost(t, c, what);
        return;
    }
    c->state = CONN_HELLO_WAIT;
    if (conn_send_hello(t, c) != GV_OK)
        return;
    conn_update_events(t, c);
}

static void handle_event(tcp_tl_t *t, void *ptr, uint32_t ev)
{
    tcp_conn_t *c = ptr;

    if (ptr == NULL) {
        do_accept(t);
        return;
    }
    switch (c->state) {
    case CONN_CONNECTING:
        connect_done(t, c);
        break;
    case CONN_HELLO_WAIT:
        if ((ev & EPOLLOUT) && (conn_flush(t, c) < 0))
            break;
        if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
            hello_read(t, c);
        break;
    case CONN_OPEN:
        if ((ev & EPOLLOUT) && (conn_flush(t, c) < 0))
            break;
        if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
            if (!t->connecting)
                conn_read(t, c);
            else if (ev & (EPOLLHUP | EPOLLERR))
                conn_lost(t, c, "closed during set-up");
        }
        break;
    case CONN_CLOSED:
        break;
    }
}

/* One round of events; @a timeout_ms as for epoll_wait. */
static unsigned tcp_step(tcp_tl_t *t, int timeout_ms)
{
    int n, i;

    /* Events that wait() just collected are handled without asking epoll
     * again. They are still current: nothing reads or frees connections
     * between wait() and the next step. */
    if (t->nstash > 0) {
        n         = t->nstash;
        t->nstash = 0;
    } else {
        n = epoll_wait(t->epfd, t->events, TCP_MAX_EVENTS, timeout_ms);
    }
    for (i = 0; i < n; i++)
        handle_event(t, t->events[i].data.ptr, t->events[i].events);
    if (__builtin_expect(t->npending > 0, 0))
        pending_expire(t);
    if (__builtin_expect(t->graveyard != NULL, 0))
        graveyard_free(t);
    return (n > 0) ? (unsigned)n : 0;
}

static unsigned tcp_progress(gv_tl_t *tl)
{
    return tcp_step(tl->priv, 0);
}

static void tcp_wait(gv_tl_t *tl, unsigned timeout_us)
{
    tcp_tl_t       *t = tl->priv;
    struct timespec ts;
    uint64_t        us = timeout_us;
    int             n;

    /* Wake up in time to expire strangers that owe us a key. */
    if (t->npending > 0) {
        uint64_t now = gv__now_ns(), first = UINT64_MAX;
        for (tcp_conn_t *c = t->pending; c != NULL; c = c->next)
            if (c->deadline_ns < first)
                first = c->deadline_ns;
        if (first <= now)
            us = 0;
        else if ((first - now) / 1000 < us)
            us = (first - now) / 1000 + 1;
    }
    ts.tv_sec  = (time_t)(us / 1000000);
    ts.tv_nsec = (long)(us % 1000000) * 1000;
    /* The events are handled by the next progress(), which the caller
     * runs right after this returns. */
    n = epoll_pwait2(t->epfd, t->events, TCP_MAX_EVENTS, &ts, NULL);
    if ((n < 0) && (errno == ENOSYS))
        n = epoll_wait(t->epfd, t->events, TCP_MAX_EVENTS,
                       (int)((us + 999) / 1000));
    t->nstash = (n > 0) ? n : 0;
}

/* The host sleeps on our epoll set itself (an epoll fd is readable while
 * one of its descriptors is ready): a message, send room (EPOLLOUT is
 * armed while a send queue waits), a new or closed connection. */
static int tcp_wait_fd(gv_tl_t *tl)
{
    return ((tcp_tl_t *)tl->priv)->epfd;
}

/* Events wait() collected but progress() has not handled are the only
 * ones the fd would not show; a stranger that owes us its key expires at
 * a deadline, which needs a poll then. */
static gv_status_t tcp_arm(gv_tl_t *tl)
{
    tcp_tl_t *t = tl->priv;

    return ((t->nstash > 0) || (t->npending > 0)) ? GV_INPROGRESS : GV_OK;
}

/* ---- init and fini ---------------------------------------------------- */

/* Where to listen: loopback for a one-node job, GV_TCP_IFACE otherwise. */
static gv_status_t pick_address(const gv_boot_t *boot,
                                struct sockaddr_storage *ss, socklen_t *sl_p,
                                char *what, size_t whatlen)
{
    const char     *ifname = gv__env.TCP_IFACE;
    struct ifaddrs *ifa, *i;
    int             found_if = 0;
    socklen_t       sl = 0;

    memset(ss, 0, sizeof(*ss));
    if ((ifname == NULL) || (ifname[0] == '\0')) {
        if (boot->nnodes > 1) {
            init_log("tcp: the job spans %d nodes: set GV_TCP_IFACE to the "
                     "network interface tcp should use (see ip -br addr)",
                     boot->nnodes);
            return GV_ERR_INVALID;
        }
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        in->sin_family      = AF_INET;
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        *sl_p               = sizeof(*in);
        snprintf(what, whatlen, "loopback");
        return GV_OK;
    }
    if (getifaddrs(&ifa) != 0) {
        init_log("tcp: getifaddrs failed: %m");
        return GV_ERR_IO;
    }
    /* Prefer IPv4, then any IPv6 address of the interface. */
    for (int pass = 0; (pass < 2) && (sl == 0); pass++) {
        for (i = ifa; i != NULL; i = i->ifa_next) {
            if (strcmp(i->ifa_name, ifname) != 0)
                continue;
            found_if = 1;
            if (i->ifa_addr == NULL)
                continue;
            if ((pass == 0) && (i->ifa_addr->sa_family == AF_INET)) {
                sl = sizeof(struct sockaddr_in);
            } else if ((pass == 1) &&
                       (i->ifa_addr->sa_family == AF_INET6)) {
                sl = sizeof(struct sockaddr_in6);
            } else {
                continue;
            }
            memcpy(ss, i->ifa_addr, sl);
            break;
        }
    }
    if (!found_if) {
        char   names[256];
        size_t off = 0;

        names[0] = '\0';
        for (i = ifa; (i != NULL) && (off < sizeof(names)); i = i->ifa_next) {
            struct ifaddrs *j;
            for (j = ifa; (j != i) && (strcmp(j->ifa_name, i->ifa_name) != 0);
                 j = j->ifa_next)
                ;
            if (j == i)
                off += (size_t)snprintf(names + off, sizeof(names) - off,
                                        "%s%s", (off > 0) ? ", " : "",
                                        i->ifa_name);
        }
        freeifaddrs(ifa);
        init_log("tcp: GV_TCP_IFACE names '%s', but there is no such "
                 "network interface here; there are: %s", ifname, names);
        return GV_ERR_INVALID;
    }
    freeifaddrs(ifa);
    if (sl == 0) {
        init_log("tcp: interface '%s' (GV_TCP_IFACE) has no IPv4 or IPv6 "
                 "address", ifname);
        return GV_ERR_INVALID;
    }
    *sl_p = sl;
    snprintf(what, whatlen, "%s", ifname);
    return GV_OK;
}

static gv_status_t tcp_listen(tcp_tl_t *t, const gv_boot_t *boot,
                              tcp_addr_t *me, char *detail, size_t dlen)
{
    struct sockaddr_storage ss;
    socklen_t               sl;
    char                    where[IF_NAMESIZE + 16], astr[80];
    struct epoll_event      e;
    gv_status_t             status;

    status = pick_address(boot, &ss, &sl, where, sizeof(where));
    if (status != GV_OK)
        return status;
    /* Port 0: the kernel picks a free one. */
    if (ss.ss_family == AF_INET)
        ((struct sockaddr_in *)&ss)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&ss)->sin6_port = 0;
    t->lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                    0);
    if (t->lfd < 0) {
        init_log("tcp: socket failed: %m");
        return GV_ERR_IO;
    }
    if (bind(t->lfd, (struct sockaddr *)&ss, sl) != 0) {
        sockaddr_str(&ss, astr, sizeof(astr));
        init_log("tcp: bind to %s (%s) failed: %m", astr, where);
        return GV_ERR_IO;
    }
    if (listen(t->lfd, SOMAXCONN) != 0) {
        init_log("tcp: listen failed: %m");
        return GV_ERR_IO;
    }
    sl = sizeof(ss);
    if (getsockname(t->lfd, (struct sockaddr *)&ss, &sl) != 0) {
        init_log("tcp: getsockname failed: %m");
        return GV_ERR_IO;
    }
    memset(me, 0, sizeof(*me));
    me->family = ss.ss_family;
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        me->port = in->sin_port;
        memcpy(me->addr, &in->sin_addr, 4);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        me->port     = in6->sin6_port;
        me->scope_id = in6->sin6_scope_id;
        memcpy(me->addr, &in6->sin6_addr, 16);
    }
    t->port = ntohs(me->port);
    sockaddr_str(&ss, astr, sizeof(astr));
    snprintf(detail, dlen, "%s %s", where, astr);

    e.events   = EPOLLIN;
    e.data.ptr = NULL; /* the listening socket; connections are non-NULL */
    if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, t->lfd, &e) != 0) {
        init_log("tcp: epoll_ctl(add) failed: %m");
        return GV_ERR_IO;
    }
    return GV_OK;
}

static gv_status_t tcp_connect(tcp_tl_t *t, int rank, const tcp_addr_t *a)
{
    struct sockaddr_storage ss;
    socklen_t               sl = addr_to_sockaddr(a, &ss);
    tcp_conn_t             *c;
    int                     fd, rc;

    fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        init_log("tcp: socket failed: %m");
        return GV_ERR_IO;
    }
    do {
        rc = connect(fd, (struct sockaddr *)&ss, sl);
    } while ((rc != 0) && (errno == EINTR));
    if ((rc != 0) && (errno != EINPROGRESS)) {
        char astr[80];
        sockaddr_str(&ss, astr, sizeof(astr));
        init_log("tcp: connect to rank %d at %s failed: %m", rank, astr);
        close(fd);
        return GV_ERR_UNREACHABLE;
    }
    c = conn_new(t, fd, CONN_CONNECTING, rank, 0);
    if (c == NULL) {
        close(fd);
        return GV_ERR_IO;
    }
    sockaddr_str(&ss, c->addr, sizeof(c->addr));
    t->peers[rank] = c;
    if (rc == 0)
        connect_done(t, c); /* loopback often connects at once */
    return GV_OK;
}

static void tcp_free(tcp_tl_t *t)
{
    int i;

    if (t->peers != NULL) {
        for (i = 0; i < t->size; i++)
            conn_free(t->peers[i]);
        gv_free(t->peers);
    }
    while (t->pending != NULL) {
        tcp_conn_t *c = t->pending;
        t->pending    = c->next;
        conn_free(c);
    }
    graveyard_free(t);
    if (t->lfd >= 0)
        close(t->lfd);
    if (t->epfd >= 0)
        close(t->epfd);
    gv_free(t);
}

static gv_status_t tcp_init(gv_tl_t *tl)
{
    gv_boot_t  *boot = tl->boot;
    tcp_tl_t   *t;
    tcp_addr_t  me, *all = NULL;
    gv_status_t status;
    uint64_t    deadline;
    int         i;

    t                 = gv_calloc(1, sizeof(*t));
    t->epfd           = -1;
    t->lfd            = -1;
    t->rank           = boot->rank;
    t->size           = boot->size;
    t->connecting     = 1;
    t->sendq_max      = (size_t)gv__env.TCP_SENDQ;
    t->key_timeout_ns = gv__env.TCP_KEY_TIMEOUT_MS * 1000000ull;
    t->recv_cb        = tl->params.recv_cb;
    t->recv_arg       = tl->params.recv_arg;
    memcpy(t->key, boot->key, sizeof(t->key));
    t->peers = gv_calloc((size_t)t->size, sizeof(*t->peers));

    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (t->epfd < 0) {
        init_log("tcp: epoll_create1 failed: %m");
        status = GV_ERR_IO;
        goto err_free;
    }
    status = tcp_listen(t, boot, &me, tl->attr.detail,
                        sizeof(tl->attr.detail));
    if (status != GV_OK)
        goto err_free;

    all    = gv_calloc((size_t)t->size, sizeof(*all));
    status = gv__boot_allgather(boot, &me, sizeof(me), all);
    if (status != GV_OK) {
        init_log("tcp: address exchange failed: %s", gv_status_str(status));
        goto err_free_all;
    }
    for (i = 0; i < t->rank; i++) {
        status = tcp_connect(t, i, &all[i]);
        if (status != GV_OK)
            goto err_free_all;
    }

    /* Run events until every peer is authenticated both ways. */
    deadline = gv__now_ns() + gv__timeout_ns();
    while ((t->nopen < (unsigned)(t->size - 1)) && !t->failed) {
        if (gv__now_ns() > deadline) {
            char missing[128] = "";
            size_t off = 0;
            for (i = 0; (i < t->size) && (off < sizeof(missing) - 12); i++)
                if ((i != t->rank) && ((t->peers[i] == NULL) ||
                                       (t->peers[i]->state != CONN_OPEN)))
                    off += (size_t)snprintf(missing + off,
                                            sizeof(missing) - off, " %d", i);
            init_log("tcp: ranks%s did not connect within %llu s "
                     "(GV_TIMEOUT_S)", missing,
                     (unsigned long long)gv__env.TIMEOUT_S);
            status = GV_ERR_TIMEOUT;
            goto err_free_all;
        }
        tcp_step(t, 10);
    }
    if (t->failed) {
        status = GV_ERR_UNREACHABLE;
        goto err_free_all;
    }
    t->connecting = 0;
    for (i = 0; i < t->size; i++)
        if (t->peers[i] != NULL)
            conn_update_events(t, t->peers[i]);
    gv_free(all);

    tl->priv          = t;
    tl->attr.caps     = GV_TL_CAP_AM | GV_TL_CAP_WAIT | GV_TL_CAP_WAIT_FD;
    tl->attr.max_msg  = GV_TCP_FRAME_MAX_PAYLOAD;
    /* Every send is sent or copied into the send queue in the call (or
     * refused): the AM layer may hand over frames without copying them. */
    tl->attr.max_inline = GV_TCP_FRAME_MAX_PAYLOAD;
    tl->attr.heap_base = NULL;
    gv_debug("tcp: listening on %s, %d peers connected", tl->attr.detail,
             t->size - 1);
    return GV_OK;

err_free_all:
    gv_free(all);
err_free:
    tcp_free(t);
    return status;
}

static void tcp_fini(gv_tl_t *tl)
{
    tcp_tl_t    *t = tl->priv;
    uint64_t     deadline;
    uint8_t      bye[GV_TCP_FRAME_HDR_LEN];
    struct iovec iov = { bye, sizeof(bye) };
    int          i, busy;

    if (t == NULL)
        return;
    t->finalizing = 1;
    /* Strangers need not be heard any more. */
    epoll_ctl(t->epfd, EPOLL_CTL_DEL, t->lfd, NULL);
    close(t->lfd);
    t->lfd = -1;

    gv_tcp_frame_hdr_encode(bye, GV_TCP_FRAME_BYE, 0);
    for (i = 0; i < t->size; i++)
        if ((t->peers[i] != NULL) && (t->peers[i]->state == CONN_OPEN))
            conn_sendv(t, t->peers[i], &iov, 1, sizeof(bye), 1);

    /* Drain, half-close, and read until each peer half-closed too. */
    deadline = gv__now_ns() + TCP_FINI_WAIT_S * 1000000000ull;
    for (;;) {
        busy = 0;
        for (i = 0; i < t->size; i++) {
            tcp_conn_t *c = t->peers[i];
            if ((c == NULL) || (c->state != CONN_OPEN))
                continue;
            busy = 1;
            if ((c->tx_len == 0) && !c->wr_shut) {
                shutdown(c->fd, SHUT_WR);
                c->wr_shut = 1;
            }
        }
        if (!busy)
            break;
        if (gv__now_ns() > deadline) {
            gv_debug("tcp: peers did not close within %d s; closing anyway",
                     TCP_FINI_WAIT_S);
            break;
        }
        tcp_step(t, 10);
    }
    if (t->dropped > 0)
        gv_debug("tcp: dropped %llu frames that arrived during fini",
                 (unsigned long long)t->dropped);
    tcp_free(t);
    tl->priv = NULL;
}

/* ---- test hooks ------------------------------------------------------- */

int gv__tl_tcp_listen_port(gv_tl_t *tl)
{
    if ((tl == NULL) || (tl->ops != &gv_tl_tcp_ops) || (tl->priv == NULL))
        return -1;
    return ((tcp_tl_t *)tl->priv)->port;
}

void gv__tl_tcp_counters(gv_tl_t *tl, gv_tl_tcp_counters_t *c_p)
{
    memset(c_p, 0, sizeof(*c_p));
    if ((tl == NULL) || (tl->ops != &gv_tl_tcp_ops) || (tl->priv == NULL))
        return;
    *c_p = ((tcp_tl_t *)tl->priv)->cnt;
}

uint64_t gv__tl_tcp_rejected(gv_tl_t *tl)
{
    gv_tl_tcp_counters_t c;

    gv__tl_tcp_counters(tl, &c);
    return c.conn_rejected;
}

const gv_tl_ops_t gv_tl_tcp_ops = {
    .version  = GV_TL_OPS_VERSION,
    .name     = "tcp",
    .init     = tcp_init,
    .fini     = tcp_fini,
    .progress = tcp_progress,
    .am_send  = tcp_am_send,
    .wait     = tcp_wait,
    .wait_fd  = tcp_wait_fd,
    .arm      = tcp_arm,
    .put      = NULL,
    .get      = NULL,
    .atomic64 = NULL,
    .flush    = NULL,
};
