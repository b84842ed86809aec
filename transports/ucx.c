/* The ucx transport: UCP active messages, put/get and 64-bit atomics on one
 * UCP worker per rank. SPDX-License-Identifier: BSD-3-Clause
 *
 * Setup. One UCP context (features AM, RMA, AMO64 and, when UCX can, WAKEUP)
 * and one single-threaded worker. UCX reads its own variables (UCX_TLS,
 * UCX_NET_DEVICES, UCX_RNDV_THRESH, ...) through ucp_config_read(); we
 * touch one: a job whose ranks are all on this node gets NET_DEVICES set
 * to the loopback interface unless the user set UCX_NET_DEVICES, so that
 * UCX's tcp listens on nothing a stranger beyond the machine can reach
 * (transports/loopback.h). The symmetric heap comes from ucp_mem_map(ALLOCATE), so that
 * UCX places it where its transports reach it best (System V or POSIX
 * shared memory first: peers on the node then run CPU atomics on it). Worker
 * addresses, heap bases and packed rkeys go through the bootstrap in two
 * allgathers (lengths, then records padded to the longest); every rank then
 * creates one endpoint per rank, itself included, and unpacks each rkey.
 *
 * Messages. One UCX active-message id carries every message. A frame is
 *
 *     UCX user header                          UCX data
 *     +-----+-----+-----+ - - - - - - - - +    +----------------------------+
 *     | src | seq | tag | upper hdr (B)   |    | A: upper hdr | payload     |
 *     +-----+-----+-----+ - - - - - - - - +    | B: payload                 |
 *      u32   u32   u32   0..GV_TL_MAX_HDR      +----------------------------+
 *
 * Format A (hdr_len + len <= UCX_COPY_MAX): we copy header and payload into
 * one contiguous buffer, which UCX sends with its short/eager path; the
 * receiver gets exactly the bytes recv_cb wants. Format B (larger): the upper
 * header rides in the UCX header and the payload is sent in place (zero copy,
 * rendezvous when UCX chooses it); the receiver assembles header and payload
 * into one buffer (for rendezvous it receives the payload right behind the
 * header, so nothing is copied twice). Format S (tiny frames, up to
 * UCX_STACK_MAX bytes with src/seq/tag): no UCX user header; src, seq and
 * tag lead the data, then upper header and payload: without a user header
 * ucp_am_send_nbx() takes ~50 instructions less per frame over shared
 * memory (UCX 1.13). src is validated against the job size, tag (from the
 * job key) rejects frames of another job. Format I (am_send_id, the layer
 * above's requests and replies) is format S with UCX's AM id UCX_AM_ID_I
 * and the upper layer's message id in place of its header: src, seq, tag,
 * id (u32, at most 0xffff), then the payload alone. It is always eager
 * (tiny from the stack, else from a descriptor with
 * UCP_AM_SEND_FLAG_EAGER), and is held and ordered like the others. It
 * saves the layer above building its 8-byte header and us copying it:
 * about 35 instructions a hop (callgrind, perf/hop_ucx). It takes
 * payloads up to UCX_ID_MAX (attr.max_id), past format A's 4 KiB: a
 * request or reply of 4-16 KiB is copied once, into the descriptor's
 * mid-size buffer, instead of into a batch that format B then sends with
 * the upper header apart, which the receiver must put back together
 * (over shared memory 4 KiB went from 1.7x UCP's own hop to 1.4x,
 * perf/notes/ucx-mid-size.md).
 *
 * Ordering. UCX delivers eager messages of one endpoint in order, but a
 * rendezvous message only announces itself in order: its data lands later,
 * possibly after eager messages sent behind it. The layer above needs FIFO
 * per pair, so every frame carries a per-destination sequence number and the
 * receiver delivers strictly in sequence: a frame that is next and complete
 * is delivered at once (the common case, no copy); anything else waits in a
 * per-source queue sorted by seq until the frames before it are delivered.
 * We chose this over forcing eager (UCP_AM_SEND_FLAG_EAGER) for every
 * size because rendezvous is what makes large messages fast (zero copy via
 * CMA or RDMA).
 *
 * Protocol by size. Frames of format B up to GV_UCX_EAGER bytes (256 KiB)
 * are sent with UCP_AM_SEND_FLAG_EAGER; larger ones leave the choice to
 * UCX, which takes rendezvous. UCX 1.13's own threshold puts rendezvous at
 * 8 KiB over tcp, where its handshake made 8 KiB take 45-55 us one way
 * (ucp_am_lat: 85) against 9-15 us eager, and halved the aggregator's
 * throughput: its 64 KiB batches then wait for the receiver's answer. Over
 * shared memory, eager took 16-64 KiB from 7-12 us to 2.5-9 us. A user who
 * sets UCX_RNDV_THRESH and not GV_UCX_EAGER gets UCX's choice throughout.
 *
 * Peer failure. Endpoints in UCP_ERR_HANDLING_MODE_PEER get an error
 * callback that reports the rank through gv__peer_failed() (a failed send
 * or rendezvous receive does the same), so a dead rank stops the job
 * instead of hanging it. By default (GV_UCX_ERR_MODE peer) that is the mode
 * towards ranks on other nodes; towards ranks on the same node UCX 1.13's
 * peer mode would drop shared memory and tcp's put/get lanes, and the
 * launcher watches local ranks anyway, so those endpoints use mode none
 * unless the user sets GV_UCX_ERR_MODE=peer (see ucx_connect()).
 */
#define _GNU_SOURCE /* ppoll */
#include "transports/transport.h"
#include "transports/loopback.h"

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

#include <errno.h>
#include <stdarg.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UCX_AM_ID       0x4756u      /* "GV" */
#define UCX_AM_ID_I     0x4757u      /* format I frames (am_send_id) */
#define UCX_COPY_MAX    4096         /* format A up to this many bytes */
#define UCX_ID_MAX      16384        /* attr.max_id: format I payloads */
#define UCX_MID_SIZE    (16 + UCX_ID_MAX) /* a format I frame past COPY_MAX */
#define UCX_MID_KEEP    16           /* idle mid-size buffers kept */
#define UCX_STACK_MAX   256          /* try the short path from the stack */
#define UCX_MAX_MSG     (256u << 20) /* attr.max_msg: caps receive buffers */
#define UCX_RX_WINDOW   (1u << 20)   /* seq distance accepted ahead */
#define UCX_TXD_MAX     4096         /* copies in flight before back-pressure */
#define UCX_TX_COPY_BUDGET (64u << 20) /* ... and bytes of large copies */
#define UCX_EXCH_MAX    (1u << 20)   /* longest address or rkey we accept */
#define UCX_RBUF_KEEP    64          /* cached receive buffers, at most ... */
#define UCX_RBUF_BUDGET  (128u << 20) /* ... and in bytes */
#define UCX_RBUF_ALIGN   (64u << 10) /* their sizes are multiples of this */
#define UCX_RX_ALIGN     64          /* rendezvous payloads start aligned */
#define UCX_FINI_MAX_S   10          /* longest fini waits for a flush/close */
/* Rendezvous receives started at once over shared memory, and else (see
 * ucx_rndv_pump); build-time settings for measuring, e.g.
 * make OPT="-O2 -g -DUCX_RNDV_SHM=2" (not UCX variables). */
#ifndef UCX_RNDV_SHM
#define UCX_RNDV_SHM      1
#endif
#ifndef UCX_RNDV_NET
#define UCX_RNDV_NET      4
#endif
_Static_assert((UCX_RNDV_SHM >= 1) && (UCX_RNDV_NET >= 1),
               "with no rendezvous receive allowed, large messages hang");

enum { UCX_ERR_MODE_PEER, UCX_ERR_MODE_NONE }; /* GV_UCX_ERR_MODE values */

/* The frame header, sent as the UCX user header. */
typedef struct {
    uint32_t src;
    uint32_t seq;
    uint32_t tag;
} ucx_fhdr_t;

/* The header of a format I frame: the frame header and the upper layer's
 * message id (16 bits on the wire in 32, so the payload stays aligned). */
typedef struct {
    ucx_fhdr_t f;
    uint32_t   id;
} ucx_ihdr_t;
_Static_assert(UCX_MID_SIZE >= sizeof(ucx_ihdr_t) + UCX_ID_MAX,
               "a mid-size buffer holds the largest format I frame");

typedef struct ucx_tl   ucx_tl_t;
typedef struct ucx_peer ucx_peer_t;

/* A received frame waiting for its turn (or for its rendezvous data). */
typedef enum {
    RX_PENDING, /* rendezvous announced, receive not started yet */
    RX_WAIT,    /* rendezvous receive in flight */
    RX_READY,
    RX_DROP
} ucx_rx_state_t;
typedef struct ucx_rx ucx_rx_t;
struct ucx_rx {
    ucx_rx_t      *next;
    ucx_rx_t      *pnext;   /* queue of rendezvous receives to start */
    void          *desc;    /* UCX's rendezvous descriptor while pending */
    uint8_t        hdr[GV_TL_MAX_HDR]; /* format B upper header */
    size_t         hlen;
    ucx_peer_t    *peer;
    uint32_t       seq;
    ucx_rx_state_t state;
    void          *buf;     /* upper header + payload, contiguous */
    void          *base;    /* what ucx_rbuf_get() returned, or NULL */
    size_t         len;
    size_t         expect;  /* rendezvous bytes still to arrive */
    size_t         cap;     /* size of buf when it is ours */
    int            ucx_data; /* buf is UCX's: ucp_am_data_release() */
    int32_t        id;      /* a format I frame's id, -1 for the others */
};

struct ucx_peer {
    ucx_tl_t  *ux;
    int        rank;
    int        failed;      /* the error callback ran: the ep is dead */
    int        err_peer;    /* ep uses UCP_ERR_HANDLING_MODE_PEER */
    ucp_ep_h   ep;
    ucp_rkey_h rkey;
    uint64_t   heap_base;   /* the peer's heap address, for raddr */
    uint32_t   tx_seq;      /* next seq we send to this peer */
    uint32_t   rx_next;     /* next seq we deliver from this peer */
    int        rq;          /* its rendezvous class, index into ux->rq */
    ucx_rx_t  *rx_head, *rx_tail;
};

/* A send descriptor: keeps the UCX user header (and, for formats A and
 * I, the frame) alive until UCX is done with them. */
typedef struct ucx_txd ucx_txd_t;
struct ucx_txd {
    ucx_txd_t *next;        /* free list */
    ucx_tl_t  *ux;
    gv_req_t  *req;         /* caller's, for zero-copy sends */
    int        dst;
    void      *big;         /* copy of a large payload sent without req */
    size_t     big_cap;
    uint8_t    uhdr[sizeof(ucx_fhdr_t) + GV_TL_MAX_HDR];
    uint8_t    frame[sizeof(ucx_ihdr_t) + UCX_COPY_MAX];
    void      *mid;         /* a format I frame past UCX_COPY_MAX */
};

struct ucx_tl {
    gv_tl_t      *tl;
    ucp_context_h ctx;
    ucp_worker_h  worker;
    ucp_mem_h     memh;
    void         *heap;
    size_t        heap_size;
    int           efd;          /* worker event fd, -1 without WAKEUP */
    int           err_local;    /* peer error mode to ranks on this node */
    int           err_remote;   /* ... and to ranks on other nodes */
    int           closing;
    uint32_t      tag;
    uint64_t      features;
    size_t        eager_max;    /* format B frames up to this: forced eager */
    ucx_peer_t   *peers;
    /* Rendezvous receives to start ([0] from ranks reached over shared
     * memory, [1] the others), RX_PENDING entries in arrival order. */
    struct {
        unsigned  inflight, limit;
        ucx_rx_t *head, *tail;
    } rq[2];
    int           rndv_pumping;
    ucx_txd_t    *txd_free;
    unsigned      txd_out;
    size_t        tx_copy_bytes; /* large payloads copied, in flight */
    unsigned      txd_count;
    void         *mid_free[UCX_MID_KEEP]; /* idle UCX_MID_SIZE buffers */
    unsigned      nmid_free;
    struct {
        void  *p;
        size_t cap;
    } rbuf[UCX_RBUF_KEEP];      /* idle receive buffers */
    unsigned      nrbuf;
    size_t        rbuf_bytes;   /* held in rbuf[] */
    /* Assembles small frames that arrive misaligned or in two parts. The
     * recv_cb never re-enters the receive path, so one buffer suffices. */
    uint64_t      rx_tmp[(UCX_COPY_MAX + GV_TL_MAX_HDR + 7) / 8];
    struct {
        uint64_t rx_bad, rx_held, rx_rndv, tx_err, tx_backpressure;
    } st;
};

/* -------------------------------------------------------------------- */
/* Status translation                                                    */
/* -------------------------------------------------------------------- */

static gv_status_t ucx_status(ucs_status_t s)
{
    switch (s) {
    case UCS_OK:                   return GV_OK;
    case UCS_INPROGRESS:           return GV_INPROGRESS;
    case UCS_ERR_NO_RESOURCE:      return GV_ERR_NO_RESOURCE;
    case UCS_ERR_NO_MEMORY:        return GV_ERR_NO_MEMORY;
    case UCS_ERR_INVALID_PARAM:    return GV_ERR_INVALID;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:    return GV_ERR_UNREACHABLE;
    case UCS_ERR_TIMED_OUT:        return GV_ERR_TIMEOUT;
    case UCS_ERR_CANCELED:         return GV_ERR_CANCELED;
    case UCS_ERR_UNSUPPORTED:      return GV_ERR_UNSUPPORTED;
    case UCS_ERR_NO_ELEM:          return GV_ERR_NOT_FOUND;
    default:                       return GV_ERR_IO;
    }
}

static const char *ucx_tls_env(void)
{
    /* UCX's own variable, read only to describe the setup (gvinfo). */
    const char *tls = getenv("UCX_TLS");

    return ((tls != NULL) && (tls[0] != '\0')) ? tls : "default";
}

/* -------------------------------------------------------------------- */
/* Buffers                                                               */
/* -------------------------------------------------------------------- */

static ucx_txd_t *ucx_txd_get(ucx_tl_t *ux)
{
    ucx_txd_t *txd = ux->txd_free;

    if (txd != NULL) {
        ux->txd_free = txd->next;
    } else {
        if (ux->txd_count >= UCX_TXD_MAX)
            return NULL;
        txd = gv_malloc(sizeof(*txd));
        ux->txd_count++;
    }
    txd->ux  = ux;
    txd->req = NULL;
    txd->big = NULL;
    txd->mid = NULL;
    ux->txd_out++;
    return txd;
}

static void ucx_rbuf_put(ucx_tl_t *ux, void *p, size_t cap);
static void ucx_txd_put(ucx_tl_t *ux, ucx_txd_t *txd);

/* Copies in flight are bounded, or a sender that is never refused would
 * queue without limit: 1 (and @a txd given back) when @a bytes more would
 * pass UCX_TX_COPY_BUDGET. */
static int ucx_copy_refused(ucx_tl_t *ux, ucx_txd_t *txd, size_t bytes)
{
    if ((ux->tx_copy_bytes == 0) ||
        (ux->tx_copy_bytes + bytes <= UCX_TX_COPY_BUDGET))
        return 0;
    ux->st.tx_backpressure++;
    ucx_txd_put(ux, txd);
    return 1;
}

static void ucx_txd_put(ucx_tl_t *ux, ucx_txd_t *txd)
{
    if (txd->big != NULL) {
        ux->tx_copy_bytes -= txd->big_cap;
        ucx_rbuf_put(ux, txd->big, txd->big_cap);
        txd->big = NULL;
    }
    if (txd->mid != NULL) {
        ux->tx_copy_bytes -= UCX_MID_SIZE;
        if (ux->nmid_free < UCX_MID_KEEP)
            ux->mid_free[ux->nmid_free++] = txd->mid;
        else
            gv_free(txd->mid);
    }
    txd->next    = ux->txd_free;
    ux->txd_free = txd;
    ux->txd_out--;
}

/* Receive buffers for rendezvous and reassembly. A stream of large
 * messages keeps dozens in flight; receiving into fresh memory costs a
 * page fault per 4 KiB (as much as the copy itself), so idle buffers are
 * kept for reuse, up to UCX_RBUF_KEEP of them and UCX_RBUF_BUDGET bytes.
 * The best fit wins, and no buffer more than a quarter too large. */
static void *ucx_rbuf_get(ucx_tl_t *ux, size_t len, size_t *cap_p)
{
    unsigned i, best = UINT32_MAX;
    void    *p;

    /* Newest first: the buffer returned last is the one still in cache. */
    for (i = ux->nrbuf; i-- > 0;)
        if ((ux->rbuf[i].cap >= len) && (ux->rbuf[i].cap <= len + len / 4) &&
            ((best == UINT32_MAX) || (ux->rbuf[i].cap < ux->rbuf[best].cap)))
            best = i;
    if (best != UINT32_MAX) {
        p               = ux->rbuf[best].p;
        *cap_p          = ux->rbuf[best].cap;
        ux->rbuf_bytes -= ux->rbuf[best].cap;
        ux->nrbuf--;
        memmove(&ux->rbuf[best], &ux->rbuf[best + 1],
                (ux->nrbuf - best) * sizeof(ux->rbuf[0]));
        return p;
    }
    *cap_p = (len + UCX_RBUF_ALIGN - 1) & ~(size_t)(UCX_RBUF_ALIGN - 1);
    if (*cap_p == 0)
        *cap_p = UCX_RBUF_ALIGN;
    return gv_malloc_aligned(UCX_RX_ALIGN, *cap_p);
}

static void ucx_rbuf_put(ucx_tl_t *ux, void *p, size_t cap)
{
    unsigned i, small = 0;

    if (cap > UCX_RBUF_BUDGET) {
        gv_free(p);
        return;
    }
    /* Make room by dropping the smallest idle buffers: big ones are the
     * expensive ones to fault in again. */
    while ((ux->nrbuf > 0) && ((ux->nrbuf == UCX_RBUF_KEEP) ||
                               (ux->rbuf_bytes + cap > UCX_RBUF_BUDGET))) {
        for (i = 1, small = 0; i < ux->nrbuf; i++)
            if (ux->rbuf[i].cap < ux->rbuf[small].cap)
                small = i;
        if (ux->rbuf[small].cap > cap) {
            gv_free(p);
            return;
        }
        gv_free(ux->rbuf[small].p);
        ux->rbuf_bytes -= ux->rbuf[small].cap;
        ux->nrbuf--;
        memmove(&ux->rbuf[small], &ux->rbuf[small + 1],
                (ux->nrbuf - small) * sizeof(ux->rbuf[0]));
    }
    ux->rbuf[ux->nrbuf].p   = p;
    ux->rbuf[ux->nrbuf].cap = cap;
    ux->nrbuf++;
    ux->rbuf_bytes += cap;
}

static void ucx_rx_free(ucx_tl_t *ux, ucx_rx_t *rx)
{
    if (rx->ucx_data)
        ucp_am_data_release(ux->worker, rx->buf);
    else if (rx->base != NULL)
        ucx_rbuf_put(ux, rx->base, rx->cap);
    gv_free(rx);
}

/* -------------------------------------------------------------------- */
/* Receive path                                                          */
/* -------------------------------------------------------------------- */

/* The layer above promises its handlers 4-byte aligned payloads; UCX's tcp
 * hands over data at any byte offset. */
static inline int ucx_aligned(const void *p)
{
    return ((uintptr_t)p & 3) == 0;
}

/* Hand a frame to the layer above: through recv_id_cb for a format I
 * frame (@a id >= 0), else through recv_cb. */
static inline void ucx_deliver(ucx_tl_t *ux, int src, int32_t id,
                               const void *data, size_t len)
{
    gv_tl_t *tl = ux->tl;

    if (id >= 0)
        tl->params.recv_id_cb(tl->params.recv_arg, src, (unsigned)id, data,
                              len);
    else
        tl->params.recv_cb(tl->params.recv_arg, src, data, len);
}

/* Deliver the queued frames of @a peer that are next in sequence. */
static void ucx_rx_drain(ucx_tl_t *ux, ucx_peer_t *peer)
{
    ucx_rx_t *rx;

    while (((rx = peer->rx_head) != NULL) && (rx->seq == peer->rx_next) &&
           (rx->state != RX_WAIT) && (rx->state != RX_PENDING)) {
        peer->rx_head = rx->next;
        if (peer->rx_head == NULL)
            peer->rx_tail = NULL;
        peer->rx_next++;
        if (rx->state == RX_READY)
            ucx_deliver(ux, peer->rank, rx->id, rx->buf, rx->len);
        ucx_rx_free(ux, rx);
    }
}

/* Queue @a rx in seq order. Returns 0 if that seq is already queued. */
static int ucx_rx_insert(ucx_peer_t *peer, ucx_rx_t *rx)
{
    ucx_rx_t **pp;
    uint32_t   d = rx->seq - peer->rx_next;

    rx->next = NULL;
    if ((peer->rx_tail == NULL) || ((peer->rx_tail->seq - peer->rx_next) < d)) {
        if (peer->rx_tail != NULL)
            peer->rx_tail->next = rx;
        else
            peer->rx_head = rx;
        peer->rx_tail = rx;
        return 1;
    }
    for (pp = &peer->rx_head; *pp != NULL; pp = &(*pp)->next) {
        uint32_t e = (*pp)->seq - peer->rx_next;
        if (e == d)
            return 0;
        if (e > d)
            break;
    }
    rx->next = *pp;
    *pp      = rx;
    return 1;
}

static ucx_rx_t *ucx_rx_new(ucx_peer_t *peer, uint32_t seq)
{
    ucx_rx_t *rx = gv_calloc(1, sizeof(*rx));

    rx->peer = peer;
    rx->seq  = seq;
    rx->id   = -1;
    return rx;
}

/* A frame with a plausible seq that we cannot deliver: its seq is used up
 * so that the frames behind it are not held forever. */
static void ucx_rx_skip(ucx_tl_t *ux, ucx_peer_t *peer, uint32_t seq)
{
    ucx_rx_t *rx = ucx_rx_new(peer, seq);

    rx->state = RX_DROP;
    if (!ucx_rx_insert(peer, rx)) {
        gv_free(rx);
        return;
    }
    ucx_rx_drain(ux, peer);
}

/* A message to or from @a peer was lost. Report the peer once (the job
 * stops, except during fini, where we only forget it). */
static void ucx_peer_lost(ucx_peer_t *peer, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void ucx_peer_lost(ucx_peer_t *peer, const char *fmt, ...)
{
    char    msg[256];
    va_list ap;

    if (peer->failed)
        return;
    peer->failed = 1;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (peer->ux->closing) {
        gv_debug("ucx: rank %d during fini: %s", peer->rank, msg);
        return;
    }
    gv__peer_failed(peer->rank, "ucx: %s", msg);
}

static void ucx_rndv_pump(ucx_tl_t *ux);

static void ucx_rndv_done(void *request, ucs_status_t status, size_t length,
                          void *user_data)
{
    ucx_rx_t   *rx   = user_data;
    ucx_peer_t *peer = rx->peer;
    ucx_tl_t   *ux   = peer->ux;

    ucp_request_free(request);
    ux->rq[peer->rq].inflight--;
    if ((status == UCS_OK) && (length == rx->expect)) {
        rx->state = RX_READY;
    } else {
        /* The message is lost: the pair's stream is broken, which only a
         * dead or misbehaving sender explains. Say so (this stops the job
         * unless we are finalizing); then keep the order moving. */
        ux->st.rx_bad++;
        rx->state = RX_DROP;
        ucx_peer_lost(peer, "rendezvous receive of %zu bytes failed: %s "
                      "(%zu bytes arrived)", rx->expect,
                      ucs_status_string(status), length);
    }
    /* Deliver first, then start the next: the buffer this one came in
     * goes back to the cache and takes the next, still warm (4 MiB over
     * ucx/sm, perf/bw_ucx: 0.91-0.94x of ucp_am_bw against 0.77-0.92x). */
    ucx_rx_drain(ux, peer);
    ucx_rndv_pump(ux);
}

/* Start the rendezvous receive of @a rx: into a reused buffer, right
 * behind the upper header, so that the delivered frame is contiguous. */
static void ucx_rndv_start(ucx_tl_t *ux, ucx_rx_t *rx)
{
    ucp_request_param_t p;
    ucs_status_ptr_t    sp;
    void               *desc = rx->desc;

    /* The payload lands cache-line aligned (the header just before it):
     * the kernel's and UCX's copies run at full speed only with an
     * aligned destination. */
    rx->base  = ucx_rbuf_get(ux, UCX_RX_ALIGN + rx->expect, &rx->cap);
    rx->buf   = (uint8_t *)rx->base + UCX_RX_ALIGN - rx->hlen;
    rx->state = RX_WAIT;
    rx->desc  = NULL;
    memcpy(rx->buf, rx->hdr, rx->hlen);
    ux->rq[rx->peer->rq].inflight++;
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am   = ucx_rndv_done;
    p.user_data    = rx;
    /* The completion may run inside this call (a transport that fetches
     * at once), and ucx_rndv_done() may then deliver and free rx: rx is
     * touched afterwards only where UCX did not call back (an error, or
     * NULL: done in place), and a returned request never. */
    sp = ucp_am_recv_data_nbx(ux->worker, desc,
                              (uint8_t *)rx->buf + rx->hlen, rx->expect, &p);
    if (UCS_PTR_IS_ERR(sp)) {
        ux->rq[rx->peer->rq].inflight--;
        ux->st.rx_bad++;
        rx->state = RX_DROP;
        ucx_peer_lost(rx->peer, "cannot start a rendezvous receive of %zu "
                      "bytes: %s", rx->expect,
                      ucs_status_string(UCS_PTR_STATUS(sp)));
    } else if (sp == NULL) {
        ux->rq[rx->peer->rq].inflight--;
        rx->state = RX_READY;
    }
}

/* Start queued rendezvous receives while fewer than the class limit run.
 * Over shared memory, starting all at once (a burst of announcements
 * arrives in one progress call) spreads the data over as many buffers as
 * messages in flight, out of the cache by the time they are delivered, and
 * the receiving core copies one at a time anyway: one at a time streams
 * 1 MiB messages at 0.97x of ucp_am_bw in the same process, against
 * 0.72-0.84x with 8 (perf/bw_ucx; perf/notes/bandwidth.md). Over tcp the
 * same holds now that the sender keeps windows of messages in flight
 * (gv_am_send_nbi): 4 at a time rather than 32 took loopback from 3.0-4.8
 * to 5.5-6.1 GB/s at 1 MiB. Peers off the node keep their own class, so
 * that a network whose round trip wants more in flight can get it from
 * UCX_RNDV_NET alone. Not re-entrant: a receive that completes inside
 * ucx_rndv_start() calls back here. */
static void ucx_rndv_pump(ucx_tl_t *ux)
{
    ucx_rx_t   *rx;
    ucx_peer_t *peer;
    int         c;

    if (ux->rndv_pumping)
        return;
    ux->rndv_pumping = 1;
    for (c = 0; c < 2; c++) {
        while ((ux->rq[c].inflight < ux->rq[c].limit) &&
               ((rx = ux->rq[c].head) != NULL)) {
            ux->rq[c].head = rx->pnext;
            if (ux->rq[c].head == NULL)
                ux->rq[c].tail = NULL;
            peer = rx->peer; /* rx may be gone after the start */
            ucx_rndv_start(ux, rx);
            ucx_rx_drain(ux, peer);
        }
    }
    ux->rndv_pumping = 0;
}

/* Every frame ucx_am_cb() and ucx_am_id_cb() do not deliver on their fast
 * paths: out of sequence, rendezvous, format A and B, misaligned,
 * malformed. @a with_id: the frame came with UCX_AM_ID_I (format I). */
static ucs_status_t __attribute__((noinline))
ucx_am_cb_slow(ucx_tl_t *ux, int with_id, const void *header,
               size_t header_length, void *data, size_t length,
               const ucp_am_recv_param_t *param)
{
    gv_tl_t       *tl    = ux->tl;
    int            rndv  = !!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);
    void          *udata = data; /* UCX's, for ucp_am_data_release() */
    const uint8_t *uh    = NULL; /* the upper header, hlen bytes */
    ucx_fhdr_t     fh;
    ucx_peer_t    *peer;
    ucx_rx_t      *rx;
    uint32_t       ahead;
    size_t         hlen = 0;
    uint32_t       id32 = 0;
    int32_t        id   = -1;
    const char    *why;

    if (with_id) {
        /* Format I: frame header and id lead the data. Always eager. */
        ucx_ihdr_t ih;

        if ((header_length != 0) || rndv || (length < sizeof(ih))) {
            why = "format I frame without its header";
            goto reject;
        }
        memcpy(&ih, data, sizeof(ih));
        fh   = ih.f;
        id32 = ih.id;
        data = (uint8_t *)data + sizeof(ih);
        length -= sizeof(ih);
    } else if (header_length == 0) {
        /* Format S: the frame header leads the data. A rendezvous
         * announcement's data is UCX's descriptor, not bytes. */
        if (rndv || (length < sizeof(fh))) {
            why = "frame without a header";
            goto reject;
        }
        memcpy(&fh, data, sizeof(fh));
        data = (uint8_t *)data + sizeof(fh);
        length -= sizeof(fh);
    } else if ((header_length < sizeof(fh)) ||
               (header_length > sizeof(fh) + GV_TL_MAX_HDR)) {
        why = "bad header length";
        goto reject;
    } else {
        memcpy(&fh, header, sizeof(fh));
        uh   = (const uint8_t *)header + sizeof(fh);
        hlen = header_length - sizeof(fh);
    }
    if (fh.tag != ux->tag) {
        why = "job tag mismatch (a frame of another job)";
        goto reject;
    }
    if ((fh.src >= (uint32_t)tl->size) || ((int)fh.src == tl->rank)) {
        why = "bad source rank";
        goto reject;
    }
    peer  = &ux->peers[fh.src];
    ahead = fh.seq - peer->rx_next;
    if (ahead >= UCX_RX_WINDOW) {
        why = "sequence number outside the window (duplicate or forged)";
        goto reject;
    }
    if ((length > UCX_MAX_MSG) || (hlen + length > UCX_MAX_MSG)) {
        ux->st.rx_bad++;
        gv_warn("ucx: rejected a frame from rank %d: %zu bytes exceed the "
                "limit of %u", (int)fh.src, hlen + length, UCX_MAX_MSG);
        ucx_rx_skip(ux, peer, fh.seq);
        return UCS_OK;
    }
    if (with_id) {
        if (id32 > 0xffffu) {
            ux->st.rx_bad++;
            gv_warn("ucx: rejected a frame from rank %d: message id %u "
                    "(ids have 16 bits)", (int)fh.src, (unsigned)id32);
            ucx_rx_skip(ux, peer, fh.seq);
            return UCS_OK;
        }
        id = (int32_t)id32;
    }

    /* The common case: eager, next in sequence. */
    if (!rndv && (ahead == 0) &&
        ((peer->rx_head == NULL) || (peer->rx_head->seq != fh.seq))) {
        peer->rx_next++;
        if ((hlen == 0) && ucx_aligned(data)) {
            ucx_deliver(ux, peer->rank, id, data, length);
        } else if ((hlen + length) <= sizeof(ux->rx_tmp)) {
            /* Small and misaligned (tcp) or split (format B): assemble it
             * in an aligned buffer. */
            if (hlen != 0)
                memcpy(ux->rx_tmp, uh, hlen);
            memcpy((uint8_t *)ux->rx_tmp + hlen, data, length);
            ucx_deliver(ux, peer->rank, id, ux->rx_tmp, hlen + length);
        } else {
            size_t cap;
            void  *buf = ucx_rbuf_get(ux, hlen + length, &cap);

            if (hlen != 0)
                memcpy(buf, uh, hlen);
            memcpy((uint8_t *)buf + hlen, data, length);
            ucx_deliver(ux, peer->rank, id, buf, hlen + length);
            ucx_rbuf_put(ux, buf, cap);
        }
        ucx_rx_drain(ux, peer);
        return UCS_OK;
    }

    rx      = ucx_rx_new(peer, fh.seq);
    rx->len = hlen + length;
    rx->id  = id;
    if (!ucx_rx_insert(peer, rx)) {
        gv_free(rx);
        why = "duplicate sequence number";
        goto reject;
    }

    if (rndv) {
        ux->st.rx_rndv++;
        rx->desc   = data;
        rx->expect = length;
        rx->hlen   = hlen;
        rx->state  = RX_PENDING;
        if (hlen != 0)
            memcpy(rx->hdr, uh, hlen);
        if (ux->rq[peer->rq].tail != NULL)
            ux->rq[peer->rq].tail->pnext = rx;
        else
            ux->rq[peer->rq].head = rx;
        ux->rq[peer->rq].tail = rx;
        ucx_rndv_pump(ux);
        /* Still the tail of the start queue: not started (and not freed,
         * which a started one may be by now). UCX keeps the descriptor
         * until we start the receive. */
        if (ux->rq[peer->rq].tail == rx)
            return UCS_INPROGRESS;
        ucx_rx_drain(ux, peer);
        return UCS_OK;
    }

    /* Eager but early: keep it until the frames before it are delivered.
     * It cannot become deliverable within this call (only frames already
     * queued and complete could advance rx_next, and those are never left
     * queued), so holding UCX's descriptor is safe. */
    ux->st.rx_held++;
    rx->state = RX_READY;
    if ((header_length == sizeof(fh)) &&
        (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) && ucx_aligned(data)) {
        rx->buf      = udata;
        rx->ucx_data = 1;
        return UCS_INPROGRESS;
    }
    rx->base = ucx_rbuf_get(ux, rx->len, &rx->cap);
    rx->buf  = rx->base;
    if (hlen != 0)
        memcpy(rx->buf, uh, hlen);
    memcpy((uint8_t *)rx->buf + hlen, data, length);
    return UCS_OK;

reject:
    ux->st.rx_bad++;
    gv_warn("ucx: rejected a frame (%zu header bytes, %zu data bytes): %s",
            header_length, length, why);
    return UCS_OK;
}

/* The common frame (format S, or I when @a with_id: eager, the next in
 * sequence from its peer, nothing held from it, aligned) is delivered
 * here with the same checks as in ucx_am_cb_slow(), which takes the rest.
 * Nothing here trusts the bytes. Inlined into each of UCX's two receive
 * callbacks below, with @a with_id a constant there. */
static inline __attribute__((always_inline)) ucs_status_t
ucx_am_fast(ucx_tl_t *ux, int with_id, const void *header,
            size_t header_length, void *data, size_t length,
            const ucp_am_recv_param_t *param)
{
    gv_tl_t    *tl  = ux->tl;
    size_t      hsz = with_id ? sizeof(ucx_ihdr_t) : sizeof(ucx_fhdr_t);
    ucx_ihdr_t  ih;
    ucx_peer_t *peer;

    if (__builtin_expect((header_length == 0) && (length >= hsz) &&
                             (length <= UCX_MAX_MSG) &&
                             !(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) &&
                             ucx_aligned(data), 1)) {
        if (with_id)
            memcpy(&ih, data, sizeof(ih));
        else
            memcpy(&ih.f, data, sizeof(ih.f));
        if (__builtin_expect((ih.f.tag == ux->tag) &&
                                 (ih.f.src < (uint32_t)tl->size) &&
                                 ((int)ih.f.src != tl->rank) &&
                                 (!with_id || (ih.id <= 0xffffu)), 1)) {
            peer = &ux->peers[ih.f.src];
            if (__builtin_expect((ih.f.seq == peer->rx_next) &&
                                     (peer->rx_head == NULL), 1)) {
                peer->rx_next++;
                if (with_id)
                    tl->params.recv_id_cb(tl->params.recv_arg, peer->rank,
                                          ih.id, (uint8_t *)data + hsz,
                                          length - hsz);
                else
                    tl->params.recv_cb(tl->params.recv_arg, peer->rank,
                                       (uint8_t *)data + hsz, length - hsz);
                if (peer->rx_head != NULL)
                    ucx_rx_drain(ux, peer);
                return UCS_OK;
            }
        }
    }
    return ucx_am_cb_slow(ux, with_id, header, header_length, data, length,
                          param);
}

/* UCX's receive callback for UCX_AM_ID: formats S, A and B. */
static ucs_status_t ucx_am_cb(void *arg, const void *header,
                              size_t header_length, void *data, size_t length,
                              const ucp_am_recv_param_t *param)
{
    return ucx_am_fast(arg, 0, header, header_length, data, length, param);
}

/* UCX's receive callback for UCX_AM_ID_I: format I (am_send_id). */
static ucs_status_t ucx_am_id_cb(void *arg, const void *header,
                                 size_t header_length, void *data,
                                 size_t length,
                                 const ucp_am_recv_param_t *param)
{
    return ucx_am_fast(arg, 1, header, header_length, data, length, param);
}

/* -------------------------------------------------------------------- */
/* Send path                                                             */
/* -------------------------------------------------------------------- */

static void ucx_send_done(void *request, ucs_status_t status, void *user_data)
{
    ucx_txd_t *txd = user_data;
    ucx_tl_t  *ux  = txd->ux;
    gv_req_t  *req = txd->req;
    int        dst = txd->dst;

    ucx_txd_put(ux, txd);
    ucp_request_free(request);
    if (status != UCS_OK) {
        ux->st.tx_err++;
        ucx_peer_lost(&ux->peers[dst], "send failed: %s",
                      ucs_status_string(status));
    }
    if (req != NULL)
        req->cb(req, ucx_status(status));
}

/* A send to @a dst failed with @a s (not for want of resources). */
static gv_status_t ucx_send_err(ucx_peer_t *peer, int dst, ucs_status_t s)
{
    if (peer->failed)
        return GV_ERR_UNREACHABLE;
    gv_error("ucx: am_send to rank %d: %s", dst, ucs_status_string(s));
    return ucx_status(s);
}

/* What ucx_send_imm() makes of a send UCX did not complete at once. */
static gv_status_t __attribute__((noinline))
ucx_send_imm_fail(ucx_peer_t *peer, int dst, ucs_status_ptr_t sp)
{
    if (!UCS_PTR_IS_ERR(sp)) { /* not allowed with FORCE_IMM_CMPL */
        ucp_request_free(sp);
        gv_fatal("ucx: a forced-immediate send returned a request");
    }
    if (UCS_PTR_STATUS(sp) == UCS_ERR_NO_RESOURCE)
        return GV_ERR_NO_RESOURCE;
    return ucx_send_err(peer, dst, UCS_PTR_STATUS(sp));
}

/* Offer a tiny frame, built on the caller's stack, to UCX's short path:
 * GV_OK when UCX took it (and copied it), GV_ERR_NO_RESOURCE when it sent
 * nothing and the frame needs a descriptor, else the error. */
static inline __attribute__((always_inline)) gv_status_t
ucx_send_imm(ucx_peer_t *peer, int dst, unsigned am_id, const void *frame,
             size_t flen)
{
    ucp_request_param_t p;
    ucs_status_ptr_t    sp;

    p.op_attr_mask = UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    sp = ucp_am_send_nbx(peer->ep, am_id, NULL, 0, frame, flen, &p);
    if (sp == NULL) {
        peer->tx_seq++;
        return GV_OK;
    }
    return ucx_send_imm_fail(peer, dst, sp);
}

/* A send descriptor for a frame to @a dst, or NULL (back-pressure). */
static ucx_txd_t *ucx_txd_for(ucx_tl_t *ux, int dst)
{
    ucx_txd_t *txd = ucx_txd_get(ux);

    if (txd == NULL) {
        ux->st.tx_backpressure++;
        return NULL;
    }
    txd->dst = dst;
    return txd;
}

/* What ucp_am_send_nbx() made of a frame sent with @a txd. */
static gv_status_t ucx_sent(ucx_tl_t *ux, ucx_peer_t *peer, ucx_txd_t *txd,
                            ucs_status_ptr_t sp)
{
    if (sp == NULL) {
        peer->tx_seq++;
        ucx_txd_put(ux, txd);
        return GV_OK;
    }
    if (UCS_PTR_IS_ERR(sp)) {
        ucs_status_t s = UCS_PTR_STATUS(sp);

        ucx_txd_put(ux, txd);
        if (s == UCS_ERR_NO_RESOURCE)
            return peer->failed ? GV_ERR_UNREACHABLE : GV_ERR_NO_RESOURCE;
        return ucx_send_err(peer, txd->dst, s);
    }
    peer->tx_seq++;
    return (txd->req != NULL) ? GV_INPROGRESS : GV_OK;
}

static gv_status_t ucx_am_send(gv_tl_t *tl, int dst, const void *hdr,
                               size_t hdr_len, const void *payload, size_t len,
                               gv_req_t *req)
{
    ucx_tl_t           *ux = tl->priv;
    ucx_peer_t         *peer;
    ucx_txd_t          *txd;
    ucx_fhdr_t          fh;
    ucp_request_param_t p;
    ucs_status_ptr_t    sp;
    size_t              total = hdr_len + len;

    if ((dst < 0) || (dst >= tl->size) || (hdr_len > GV_TL_MAX_HDR) ||
        (len > UCX_MAX_MSG) || (total > UCX_MAX_MSG)) {
        gv_error("ucx: am_send to rank %d with %zu+%zu bytes: invalid", dst,
                 hdr_len, len);
        return GV_ERR_INVALID;
    }
    peer = &ux->peers[dst];
    if (peer->failed)
        return GV_ERR_UNREACHABLE;
    fh.src = (uint32_t)tl->rank;
    fh.seq = peer->tx_seq;
    fh.tag = ux->tag;

    if (sizeof(fh) + total <= UCX_STACK_MAX) {
        /* Tiny frames (format S) try UCX's short path straight from the
         * stack: when it takes them it has copied them on return, no
         * descriptor needed. When not (too long for short here, or no
         * room), UCX sent nothing and the descriptor path below queues
         * it. */
        uint64_t    frame[UCX_STACK_MAX / 8];
        uint8_t    *f = (uint8_t *)frame;
        gv_status_t st;

        memcpy(f, &fh, sizeof(fh));
        if (hdr_len != 0)
            memcpy(f + sizeof(fh), hdr, hdr_len);
        if (len != 0)
            memcpy(f + sizeof(fh) + hdr_len, payload, len);
        st = ucx_send_imm(peer, dst, UCX_AM_ID, f, sizeof(fh) + total);
        if (st != GV_ERR_NO_RESOURCE)
            return st;
    }

    txd = ucx_txd_for(ux, dst);
    if (txd == NULL)
        return GV_ERR_NO_RESOURCE;
    memcpy(txd->uhdr, &fh, sizeof(fh));
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send      = ucx_send_done;
    p.user_data    = txd;

    if (total <= UCX_COPY_MAX) {
        /* Format A: one contiguous frame, so UCX can use its short path. */
        if (hdr_len != 0)
            memcpy(txd->frame, hdr, hdr_len);
        if (len != 0)
            memcpy(txd->frame + hdr_len, payload, len);
        sp = ucp_am_send_nbx(peer->ep, UCX_AM_ID, txd->uhdr, sizeof(fh),
                             txd->frame, total, &p);
    } else {
        /* Format B: the upper header travels in the UCX header and the
         * payload in place. Without a req the caller may reuse the payload
         * at once, so it gets copied (rare: the aggregator passes a req). */
        const void *data = payload;

        if (hdr_len != 0)
            memcpy(txd->uhdr + sizeof(fh), hdr, hdr_len);
        if (req == NULL) {
            if (ucx_copy_refused(ux, txd, len))
                return GV_ERR_NO_RESOURCE;
            txd->big = ucx_rbuf_get(ux, len, &txd->big_cap);
            ux->tx_copy_bytes += txd->big_cap;
            memcpy(txd->big, payload, len);
            data = txd->big;
        } else {
            txd->req = req;
        }
        if (total <= ux->eager_max) {
            p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
            p.flags         = UCP_AM_SEND_FLAG_EAGER;
        }
        sp = ucp_am_send_nbx(peer->ep, UCX_AM_ID, txd->uhdr,
                             sizeof(fh) + hdr_len, data, len, &p);
    }
    return ucx_sent(ux, peer, txd, sp);
}

/* am_send_id: a format I frame (frame header, id, payload) with UCX's AM
 * id UCX_AM_ID_I, from the stack through UCX's short path when it takes
 * it, else copied into a descriptor and sent eager (the receiver takes
 * format I only whole), so never GV_INPROGRESS. */
static gv_status_t ucx_am_send_id(gv_tl_t *tl, int dst, uint16_t id,
                                  const void *payload, size_t len)
{
    ucx_tl_t           *ux = tl->priv;
    ucx_peer_t         *peer;
    ucx_txd_t          *txd;
    ucx_ihdr_t          ih;
    ucp_request_param_t p;
    ucs_status_ptr_t    sp;
    uint8_t            *f;

    if ((dst < 0) || (dst >= tl->size) || (len > UCX_ID_MAX)) {
        gv_error("ucx: am_send_id to rank %d with %zu bytes: invalid (ranks "
                 "0..%d, at most %u bytes)", dst, len, tl->size - 1,
                 UCX_ID_MAX);
        return GV_ERR_INVALID;
    }
    peer = &ux->peers[dst];
    if (peer->failed)
        return GV_ERR_UNREACHABLE;
    ih.f.src = (uint32_t)tl->rank;
    ih.f.seq = peer->tx_seq;
    ih.f.tag = ux->tag;
    ih.id    = id;

    if (sizeof(ih) + len <= UCX_STACK_MAX) {
        uint64_t    frame[UCX_STACK_MAX / 8];
        gv_status_t st;

        memcpy(frame, &ih, sizeof(ih));
        gv__copy_small((uint8_t *)frame + sizeof(ih), payload, len);
        st = ucx_send_imm(peer, dst, UCX_AM_ID_I, frame, sizeof(ih) + len);
        if (st != GV_ERR_NO_RESOURCE)
            return st;
    }

    txd = ucx_txd_for(ux, dst);
    if (txd == NULL)
        return GV_ERR_NO_RESOURCE;
    f = txd->frame;
    if (len > UCX_COPY_MAX) {
        if (ucx_copy_refused(ux, txd, UCX_MID_SIZE))
            return GV_ERR_NO_RESOURCE;
        txd->mid = (ux->nmid_free > 0)
                       ? ux->mid_free[--ux->nmid_free]
                       : gv_malloc_aligned(UCX_RX_ALIGN, UCX_MID_SIZE);
        ux->tx_copy_bytes += UCX_MID_SIZE;
        f = txd->mid;
    }
    memcpy(f, &ih, sizeof(ih));
    if (len != 0)
        memcpy(f + sizeof(ih), payload, len);
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                     UCP_OP_ATTR_FIELD_FLAGS;
    p.cb.send      = ucx_send_done;
    p.user_data    = txd;
    p.flags        = UCP_AM_SEND_FLAG_EAGER;
    sp = ucp_am_send_nbx(peer->ep, UCX_AM_ID_I, NULL, 0, f, sizeof(ih) + len,
                         &p);
    return ucx_sent(ux, peer, txd, sp);
}

/* -------------------------------------------------------------------- */
/* One-sided operations                                                  */
/* -------------------------------------------------------------------- */

static void ucx_req_done(void *request, ucs_status_t status, void *user_data)
{
    gv_req_t *req = user_data;

    ucp_request_free(request);
    req->cb(req, ucx_status(status));
}

static void ucx_op_param(ucp_request_param_t *p, gv_req_t *req)
{
    p->op_attr_mask = 0;
    if (req != NULL) {
        p->op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                          UCP_OP_ATTR_FIELD_USER_DATA;
        p->cb.send      = ucx_req_done;
        p->user_data    = req;
    }
}

/* Turn what a UCX nbx call returned into the transport.h contract. */
static gv_status_t ucx_op_result(ucx_tl_t *ux, ucs_status_ptr_t sp,
                                 gv_req_t *req, int dst, const char *what)
{
    if (sp == NULL)
        return GV_OK;
    if (UCS_PTR_IS_ERR(sp)) {
        ucs_status_t s = UCS_PTR_STATUS(sp);

        if ((dst >= 0) && ux->peers[dst].failed)
            return GV_ERR_UNREACHABLE;
        gv_error("ucx: %s to rank %d: %s", what, dst, ucs_status_string(s));
        return ucx_status(s);
    }
    if (req != NULL)
        return GV_INPROGRESS;
    /* Nobody waits for this one op: it completes by itself, a later flush
     * covers it. */
    ucp_request_free(sp);
    return GV_OK;
}

static gv_status_t ucx_onesided_check(ucx_tl_t *ux, int dst, uint64_t off,
                                      size_t len, uint32_t cap,
                                      const char *what)
{
    gv_tl_t *tl = ux->tl;

    if (!(tl->attr.caps & cap)) {
        gv_error("ucx: %s: this UCX setup has no %s (UCX_TLS %s)", what,
                 (cap == GV_TL_CAP_RMA) ? "RMA" : "ATOMIC64", ucx_tls_env());
        return GV_ERR_UNSUPPORTED;
    }
    if ((dst < 0) || (dst >= tl->size) || (off > ux->heap_size) ||
        (len > ux->heap_size - off)) {
        gv_error("ucx: %s of %zu bytes at rank %d offset %llu: outside the "
                 "heap (%zu bytes)", what, len, dst, (unsigned long long)off,
                 ux->heap_size);
        return GV_ERR_INVALID;
    }
    if (ux->peers[dst].failed)
        return GV_ERR_UNREACHABLE;
    return GV_OK;
}

static gv_status_t ucx_put(gv_tl_t *tl, int dst, uint64_t off, const void *buf,
                           size_t len, gv_req_t *req)
{
    ucx_tl_t           *ux = tl->priv;
    ucx_peer_t         *peer;
    ucp_request_param_t p;
    gv_status_t         status;

    status = ucx_onesided_check(ux, dst, off, len, GV_TL_CAP_RMA, "put");
    if (status != GV_OK)
        return status;
    peer = &ux->peers[dst];
    ucx_op_param(&p, req);
    return ucx_op_result(ux, ucp_put_nbx(peer->ep, buf, len,
                                         peer->heap_base + off, peer->rkey,
                                         &p),
                         req, dst, "put");
}

static gv_status_t ucx_get(gv_tl_t *tl, int dst, uint64_t off, void *buf,
                           size_t len, gv_req_t *req)
{
    ucx_tl_t           *ux = tl->priv;
    ucx_peer_t         *peer;
    ucp_request_param_t p;
    gv_status_t         status;

    status = ucx_onesided_check(ux, dst, off, len, GV_TL_CAP_RMA, "get");
    if (status != GV_OK)
        return status;
    peer = &ux->peers[dst];
    ucx_op_param(&p, req);
    return ucx_op_result(ux, ucp_get_nbx(peer->ep, buf, len,
                                         peer->heap_base + off, peer->rkey,
                                         &p),
                         req, dst, "get");
}

static gv_status_t ucx_atomic64(gv_tl_t *tl, gv_tl_amo_t op, int dst,
                                uint64_t off, uint64_t value, uint64_t compare,
                                uint64_t *result_p, gv_req_t *req)
{
    ucx_tl_t           *ux = tl->priv;
    ucx_peer_t         *peer;
    ucp_request_param_t p;
    ucp_atomic_op_t     uop;
    uint64_t            operand = value; /* UCX copies it at issue */
    gv_status_t         status;

    status = ucx_onesided_check(ux, dst, off, 8, GV_TL_CAP_ATOMIC64,
                                "atomic64");
    if (status != GV_OK)
        return status;
    if ((off % 8) != 0) {
        gv_error("ucx: atomic64 at offset %llu: not 8-byte aligned",
                 (unsigned long long)off);
        return GV_ERR_INVALID;
    }
    if ((op != GV_TL_AMO_ADD) && (op != GV_TL_AMO_FADD) && (result_p == NULL)) {
        gv_error("ucx: atomic64 op %d needs a result buffer", (int)op);
        return GV_ERR_INVALID;
    }
    peer = &ux->peers[dst];
    ucx_op_param(&p, req);
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
    p.datatype      = ucp_dt_make_contig(8);

    switch (op) {
    case GV_TL_AMO_ADD:
        uop = UCP_ATOMIC_OP_ADD;
        break;
    case GV_TL_AMO_FADD:
        uop = UCP_ATOMIC_OP_ADD;
        if (result_p != NULL) {
            p.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
            p.reply_buffer  = result_p;
        }
        break;
    case GV_TL_AMO_SWAP:
        uop             = UCP_ATOMIC_OP_SWAP;
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        p.reply_buffer  = result_p;
        break;
    case GV_TL_AMO_CSWAP:
        /* UCX: buffer holds the compare value, the reply buffer holds the
         * new value on input and the old one on output. */
        uop             = UCP_ATOMIC_OP_CSWAP;
        operand         = compare;
        *result_p       = value;
        p.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        p.reply_buffer  = result_p;
        break;
    default:
        gv_error("ucx: atomic64: unknown op %d", (int)op);
        return GV_ERR_INVALID;
    }
    return ucx_op_result(ux, ucp_atomic_op_nbx(peer->ep, uop, &operand, 1,
                                               peer->heap_base + off,
                                               peer->rkey, &p),
                         req, dst, "atomic64");
}

/* Progress until @a sp completes or @a deadline_ns passes. */
static ucs_status_t ucx_wait_sp(ucx_tl_t *ux, ucs_status_ptr_t sp,
                                uint64_t deadline_ns)
{
    ucs_status_t s;

    if (sp == NULL)
        return UCS_OK;
    if (UCS_PTR_IS_ERR(sp))
        return UCS_PTR_STATUS(sp);
    while ((s = ucp_request_check_status(sp)) == UCS_INPROGRESS) {
        if (ucp_worker_progress(ux->worker) == 0) {
            if (gv__now_ns() > deadline_ns) {
                ucp_request_free(sp); /* released when it completes */
                return UCS_ERR_TIMED_OUT;
            }
            sched_yield();
        }
    }
    ucp_request_free(sp);
    return s;
}

static gv_status_t ucx_flush(gv_tl_t *tl, int dst, gv_req_t *req)
{
    ucx_tl_t           *ux = tl->priv;
    ucp_request_param_t p;
    ucs_status_ptr_t    sp;
    ucs_status_t        s;

    if ((dst < -1) || (dst >= tl->size)) {
        gv_error("ucx: flush of rank %d: out of range", dst);
        return GV_ERR_INVALID;
    }
    if ((dst >= 0) && ux->peers[dst].failed)
        return GV_ERR_UNREACHABLE;
    ucx_op_param(&p, req);
    sp = (dst < 0) ? ucp_worker_flush_nbx(ux->worker, &p) :
                     ucp_ep_flush_nbx(ux->peers[dst].ep, &p);
    if ((req != NULL) || (sp == NULL) || UCS_PTR_IS_ERR(sp))
        return ucx_op_result(ux, sp, req, dst, "flush");
    /* No req: the caller wants it done on return. */
    s = ucx_wait_sp(ux, sp, gv__now_ns() + gv__timeout_ns());
    if (s != UCS_OK) {
        if ((dst >= 0) && ux->peers[dst].failed)
            return GV_ERR_UNREACHABLE;
        gv_error("ucx: flush of rank %d: %s", dst, ucs_status_string(s));
    }
    return ucx_status(s);
}

/* -------------------------------------------------------------------- */
/* Progress and wait                                                     */
/* -------------------------------------------------------------------- */

static unsigned ucx_progress(gv_tl_t *tl)
{
    ucx_tl_t *ux = tl->priv;

    return ucp_worker_progress(ux->worker);
}

static void ucx_wait(gv_tl_t *tl, unsigned timeout_us)
{
    ucx_tl_t       *ux = tl->priv;
    struct pollfd   pfd;
    struct timespec ts;
    ucs_status_t    s;

    if (ux->efd < 0) {
        /* No event fd (and no GV_TL_CAP_WAIT): give the core away briefly
         * rather than sleep through an arrival. */
        sched_yield();
        return;
    }
    /* Arming fails with BUSY when events are already waiting: return so
     * that the caller progresses them. */
    s = ucp_worker_arm(ux->worker);
    if (s != UCS_OK) {
        if (s != UCS_ERR_BUSY)
            gv_debug("ucx: ucp_worker_arm: %s", ucs_status_string(s));
        return;
    }
    pfd.fd      = ux->efd;
    pfd.events  = POLLIN;
    pfd.revents = 0;
    ts.tv_sec   = timeout_us / 1000000u;
    ts.tv_nsec  = (long)(timeout_us % 1000000u) * 1000;
    if ((ppoll(&pfd, 1, &ts, NULL) < 0) && (errno != EINTR))
        gv_debug("ucx: ppoll on the worker fd: %m");
}

/* The host sleeps on the worker's event fd (ucp_worker_get_efd); arming
 * is ucp_worker_arm, which answers BUSY while events wait. */
static int ucx_wait_fd(gv_tl_t *tl)
{
    return ((ucx_tl_t *)tl->priv)->efd;
}

static gv_status_t ucx_arm(gv_tl_t *tl)
{
    ucx_tl_t    *ux = tl->priv;
    ucs_status_t s  = ucp_worker_arm(ux->worker);

    if (s == UCS_OK)
        return GV_OK;
    if (s != UCS_ERR_BUSY)
        gv_debug("ucx: ucp_worker_arm: %s", ucs_status_string(s));
    return GV_INPROGRESS;
}

/* -------------------------------------------------------------------- */
/* Setup and teardown                                                    */
/* -------------------------------------------------------------------- */

static void ucx_ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    ucx_peer_t *peer = arg;

    (void)ep;
    ucx_peer_lost(peer, "%s", ucs_status_string(status));
}

static ucs_status_t ucx_ep_create(ucx_tl_t *ux, int rank, const void *addr,
                                  int err_peer)
{
    ucx_peer_t     *peer = &ux->peers[rank];
    ucp_ep_params_t ep_params;

    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                                UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep_params.address         = addr;
    ep_params.err_mode        = err_peer ? UCP_ERR_HANDLING_MODE_PEER :
                                           UCP_ERR_HANDLING_MODE_NONE;
    ep_params.err_handler.cb  = ucx_ep_err_cb;
    ep_params.err_handler.arg = peer;
    return ucp_ep_create(ux->worker, &ep_params, &peer->ep);
}

/* Close every endpoint (FORCE in peer mode: no traffic, no waiting for a
 * peer that may already be gone; FLUSH otherwise, as UCX asks), waiting at
 * most until @a deadline_ns. */
static void ucx_eps_close(ucx_tl_t *ux, uint64_t deadline_ns)
{
    gv_tl_t            *tl = ux->tl;
    ucp_request_param_t p;
    ucs_status_ptr_t   *sps;
    int                 i;

    sps = gv_calloc((size_t)tl->size, sizeof(*sps));
    for (i = 0; i < tl->size; i++) {
        ucx_peer_t *peer = &ux->peers[i];

        if (peer->rkey != NULL) {
            ucp_rkey_destroy(peer->rkey);
            peer->rkey = NULL;
        }
        if (peer->ep == NULL)
            continue;
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags        = (peer->err_peer || peer->failed) ?
                         UCP_EP_CLOSE_FLAG_FORCE : 0;
        sps[i]   = ucp_ep_close_nbx(peer->ep, &p);
        peer->ep = NULL;
    }
    for (i = 0; i < tl->size; i++) {
        ucs_status_t s = ucx_wait_sp(ux, sps[i], deadline_ns);

        if ((s != UCS_OK) && (s != UCS_ERR_CANCELED))
            gv_debug("ucx: closing the endpoint to rank %d: %s", i,
                     ucs_status_string(s));
    }
    gv_free(sps);
}

static void ucx_free_all(ucx_tl_t *ux)
{
    gv_tl_t   *tl = ux->tl;
    ucx_txd_t *txd;
    int        i;

    if (ux->peers != NULL) {
        for (i = 0; i < tl->size; i++) {
            ucx_rx_t *rx;

            while ((rx = ux->peers[i].rx_head) != NULL) {
                ux->peers[i].rx_head = rx->next;
                /* A rendezvous receive still in flight owns its buffer
                 * until the worker is destroyed; leak it rather than free
                 * memory UCX may write. One not started gives its
                 * descriptor back. */
                if (rx->state == RX_PENDING)
                    ucp_am_data_release(ux->worker, rx->desc);
                if (rx->state != RX_WAIT)
                    ucx_rx_free(ux, rx);
            }
        }
    }
    if (ux->memh != NULL)
        ucp_mem_unmap(ux->ctx, ux->memh);
    if (ux->worker != NULL)
        ucp_worker_destroy(ux->worker);
    if (ux->ctx != NULL)
        ucp_cleanup(ux->ctx);
    while ((txd = ux->txd_free) != NULL) {
        ux->txd_free = txd->next;
        gv_free(txd);
    }
    while (ux->nmid_free > 0)
        gv_free(ux->mid_free[--ux->nmid_free]);
    for (i = 0; i < (int)ux->nrbuf; i++)
        gv_free(ux->rbuf[i].p);
    gv_free(ux->peers);
    gv_free(ux);
}

static gv_status_t ucx_context_open(ucx_tl_t *ux)
{
    gv_tl_t      *tl = ux->tl;
    ucp_config_t *config;
    ucp_params_t  params;
    ucs_status_t  s;

    s = ucp_config_read(NULL, NULL, &config);
    if (s != UCS_OK) {
        gv_info("ucx: ucp_config_read: %s", ucs_status_string(s));
        return ucx_status(s);
    }
    {
        const char *nd = getenv("UCX_NET_DEVICES");
        char        lo[IFNAMSIZ];

        if (((nd == NULL) || (nd[0] == '\0')) &&
            gv__tl_loopback_name(tl->boot, lo, sizeof(lo))) {
            s = ucp_config_modify(config, "NET_DEVICES", lo);
            if (s != UCS_OK)
                gv_info("ucx: NET_DEVICES=%s: %s", lo,
                        ucs_status_string(s));
            else
                gv_debug("ucx: one node: network devices limited to %s "
                         "(set UCX_NET_DEVICES to choose)", lo);
        }
    }
    memset(&params, 0, sizeof(params));
    params.field_mask        = UCP_PARAM_FIELD_FEATURES |
                               UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                               UCP_PARAM_FIELD_ESTIMATED_NUM_EPS |
                               UCP_PARAM_FIELD_ESTIMATED_NUM_PPN;
    params.mt_workers_shared = 0;
    params.estimated_num_eps = (size_t)tl->size;
    params.estimated_num_ppn = (size_t)((tl->boot->local_size > 0) ?
                                        tl->boot->local_size : tl->size);
    params.features          = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    if (tl->params.heap_size != 0)
        params.features |= UCP_FEATURE_RMA | UCP_FEATURE_AMO64;
    s = ucp_init(&params, config, &ux->ctx);
    if ((s != UCS_OK) && (s != UCS_ERR_NO_ELEM) &&
        (params.features & UCP_FEATURE_WAKEUP)) {
        /* Without wakeup we still work; we just do not offer WAIT. */
        gv_info("ucx: no wakeup support (%s); continuing without it",
                ucs_status_string(s));
        params.features &= ~(uint64_t)UCP_FEATURE_WAKEUP;
        s = ucp_init(&params, config, &ux->ctx);
    }
    ucp_config_release(config);
    if (s != UCS_OK) {
        gv_info("ucx: ucp_init: %s", ucs_status_string(s));
        ux->ctx = NULL;
        return ucx_status(s);
    }
    ux->features = params.features;
    return GV_OK;
}

static gv_status_t ucx_worker_open(ucx_tl_t *ux, ucp_address_t **addr_p,
                                   size_t *addr_len_p)
{
    ucp_worker_params_t    wp;
    ucp_worker_attr_t      wa;
    ucp_am_handler_param_t hp;
    ucs_status_t           s;

    memset(&wp, 0, sizeof(wp));
    wp.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    s = ucp_worker_create(ux->ctx, &wp, &ux->worker);
    if (s != UCS_OK) {
        gv_info("ucx: ucp_worker_create: %s", ucs_status_string(s));
        ux->worker = NULL;
        return ucx_status(s);
    }

    memset(&wa, 0, sizeof(wa));
    wa.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS |
                    UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER;
    s = ucp_worker_query(ux->worker, &wa);
    if (s != UCS_OK) {
        gv_info("ucx: ucp_worker_query: %s", ucs_status_string(s));
        return ucx_status(s);
    }
    *addr_p     = wa.address;
    *addr_len_p = wa.address_length;
    if (wa.max_am_header < sizeof(ucx_fhdr_t) + GV_TL_MAX_HDR) {
        gv_info("ucx: active-message headers are limited to %zu bytes here; "
                "need %zu", wa.max_am_header,
                sizeof(ucx_fhdr_t) + GV_TL_MAX_HDR);
        return GV_ERR_UNSUPPORTED;
    }

    ux->efd = -1;
    if (ux->features & UCP_FEATURE_WAKEUP) {
        s = ucp_worker_get_efd(ux->worker, &ux->efd);
        if (s != UCS_OK) {
            gv_info("ucx: no worker event fd (%s): no blocking wait",
                    ucs_status_string(s));
            ux->efd = -1;
        }
    }

    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                    UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                    UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_ARG;
    hp.id         = UCX_AM_ID;
    hp.flags      = UCP_AM_FLAG_WHOLE_MSG;
    hp.cb         = ucx_am_cb;
    hp.arg        = ux;
    s = ucp_worker_set_am_recv_handler(ux->worker, &hp);
    if ((s == UCS_OK) && (ux->tl->params.recv_id_cb != NULL)) {
        hp.id = UCX_AM_ID_I;
        hp.cb = ucx_am_id_cb;
        s     = ucp_worker_set_am_recv_handler(ux->worker, &hp);
    }
    if (s != UCS_OK) {
        gv_info("ucx: ucp_worker_set_am_recv_handler: %s",
                ucs_status_string(s));
        return ucx_status(s);
    }
    return GV_OK;
}

/* UCX allocates the heap in System V shared memory, which takes pages
 * only as they are touched; the kernel refuses a segment larger than the
 * node's memory, and UCX then falls back to a file in /dev/shm, which it
 * fills page by page: a GV_HEAP of 32 GiB here filled the node's memory,
 * woke the OOM killer and left the file behind. A heap larger than the
 * node's memory is refused here instead; smaller ones stay lazy. */
static int ucx_heap_fits(ucx_tl_t *ux)
{
    long     pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    uint64_t ram   = 0;

    if ((pages > 0) && (psz > 0))
        ram = (uint64_t)pages * (uint64_t)psz;
    if ((ram == 0) || (ux->heap_size <= ram))
        return 1;
    gv__tl_why("ucx", "ucx: a heap of %.2f GiB (GV_HEAP) is more than this "
               "node's %.2f GiB of memory: the kernel refuses such a System V "
               "segment, and UCX's fallback would fill /dev/shm with it; "
               "lower GV_HEAP", (double)ux->heap_size / (1 << 30),
               (double)ram / (1 << 30));
    return 0;
}

static gv_status_t ucx_heap_map(ucx_tl_t *ux, void **rkey_p,
                                size_t *rkey_len_p)
{
    ucp_mem_map_params_t mp;
    ucp_mem_attr_t       ma;
    ucs_status_t         s;

    if (!ucx_heap_fits(ux))
        return GV_ERR_NO_MEMORY;
    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                    UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                    UCP_MEM_MAP_PARAM_FIELD_FLAGS;
    mp.address    = NULL;
    mp.length     = ux->heap_size;
    mp.flags      = UCP_MEM_MAP_ALLOCATE;
    s = ucp_mem_map(ux->ctx, &mp, &ux->memh);
    if (s != UCS_OK) {
        gv_info("ucx: ucp_mem_map of a %zu-byte heap: %s", ux->heap_size,
                ucs_status_string(s));
        ux->memh = NULL;
        return ucx_status(s);
    }
    memset(&ma, 0, sizeof(ma));
    ma.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS | UCP_MEM_ATTR_FIELD_LENGTH;
    s = ucp_mem_query(ux->memh, &ma);
    if ((s != UCS_OK) || (ma.length < ux->heap_size)) {
        gv_info("ucx: ucp_mem_query: %s", ucs_status_string(s));
        return GV_ERR_NO_MEMORY;
    }
    /* UCX allocates in this order (UCX_ALLOC_PRIO): System V and POSIX
     * shared memory, huge pages, mmap; all come zeroed from the kernel. */
    ux->heap = ma.address;
    s = ucp_rkey_pack(ux->ctx, ux->memh, rkey_p, rkey_len_p);
    if (s != UCS_OK) {
        gv_info("ucx: ucp_rkey_pack: %s", ucs_status_string(s));
        return ucx_status(s);
    }
    return GV_OK;
}

/* The record every rank publishes in the second allgather. */
typedef struct {
    uint64_t heap_base;
    uint32_t addr_len;
    uint32_t rkey_len;
    /* followed by addr_max address bytes, then rkey_max rkey bytes */
} ucx_rec_t;

/* Capture what a UCX print function writes, for parsing. */
static char *ucx_capture(void (*fn)(void *obj, FILE *f), void *obj)
{
    char  *text = NULL;
    size_t len  = 0;
    FILE  *f    = open_memstream(&text, &len);

    if (f == NULL)
        return NULL;
    fn(obj, f);
    fclose(f);
    return text;
}

static void ucx_print_ctx(void *obj, FILE *f)
{
    ucp_context_print_info((ucp_context_h)obj, f);
}

static void ucx_print_worker(void *obj, FILE *f)
{
    ucp_worker_print_info((ucp_worker_h)obj, f);
}

/* Does UCX_TLS leave a shared-memory transport that carries active
 * messages? UCX 1.13 has no peer-failure support on those (sysv, posix,
 * xpmem), so peer mode would move node-local traffic onto tcp, or fail. */
static int ucx_has_shm_am(ucx_tl_t *ux)
{
    static const char *const shm[] = {" sysv/", " posix/", " xpmem/"};
    char  *text = ucx_capture(ucx_print_ctx, ux->ctx);
    int    found = 0;
    size_t i;

    if (text == NULL)
        return 1; /* unknown: keep shared memory usable */
    for (i = 0; i < sizeof(shm) / sizeof(shm[0]); i++)
        if (strstr(text, shm[i]) != NULL)
            found = 1;
    free(text);
    return found;
}

/* UCX logs why an endpoint cannot be created as an ERROR; while we only
 * probe, that is our debug information, not the user's problem. */
static ucs_log_func_rc_t ucx_quiet_log(const char *file, unsigned line,
                                       const char *function,
                                       ucs_log_level_t level,
                                       const ucs_log_component_config_t *comp,
                                       const char *message, va_list ap)
{
    char buf[512];

    (void)comp;
    if (level > UCS_LOG_LEVEL_WARN)
        return UCS_LOG_FUNC_RC_CONTINUE;
    vsnprintf(buf, sizeof(buf), message, ap);
    gv_debug("ucx: (probe) %s:%u %s: %s", file, line, function, buf);
    return UCS_LOG_FUNC_RC_STOP;
}

static int ucx_same_node(ucx_tl_t *ux, int rank)
{
    gv_boot_t *boot = ux->tl->boot;

    return (boot->node_of == NULL) ||
           (boot->node_of[rank] == boot->node_of[ux->tl->rank]);
}

/* Create every endpoint. Error mode, per pair of ranks (both ends of a
 * pair must agree, or their lanes would not match):
 *   GV_UCX_ERR_MODE none           none everywhere.
 *   GV_UCX_ERR_MODE peer, default  peer to ranks on other nodes, none to
 *       ranks on this node. Within a node, peer mode costs more than it
 *       gives in UCX 1.13: it drops the shared-memory transports (no peer
 *       failure support: UCX_TLS=sm fails, the default UCX_TLS falls back
 *       to tcp at 30x the latency) and tcp's put/get lanes (rendezvous then
 *       goes over active messages: 0.6x the bandwidth at 1 MiB), while the
 *       launcher on the node (gvrun, mpirun, srun) sees a local rank die
 *       and stops the job anyway (and UCX's tcp reports a reset peer to the
 *       error callback in mode none too).
 *   GV_UCX_ERR_MODE=peer, set by the user  peer everywhere it works; if
 *       it cannot reach a rank on this node (UCX_TLS=sm), every rank
 *       falls back to none on the node, with a warning. */
static gv_status_t ucx_connect(ucx_tl_t *ux, const uint8_t *recs,
                               size_t rec_len, size_t addr_max)
{
    gv_tl_t     *tl   = ux->tl;
    int          want = (gv__env.UCX_ERR_MODE == UCX_ERR_MODE_PEER);
    int          local_peer, has_shm, probe = -1, i;
    uint8_t      ok = 1, *oks;
    ucs_status_t s;
    gv_status_t  status;

#define REC(_i) ((const ucx_rec_t *)(recs + (size_t)(_i) * rec_len))
#define ADDR(_i) (recs + (size_t)(_i) * rec_len + sizeof(ucx_rec_t))

    has_shm    = ucx_has_shm_am(ux);
    local_peer = want && gv__env.UCX_ERR_MODE_set;
    ux->rq[0].limit = UCX_RNDV_SHM;
    ux->rq[1].limit = UCX_RNDV_NET;
    for (i = 0; i < tl->size; i++)
        ux->peers[i].rq = (has_shm && ucx_same_node(ux, i)) ? 0 : 1;
    if (local_peer) {
        /* Probe one rank of this node (ourselves if alone). */
        for (i = 1; (i <= tl->size) && (probe < 0); i++)
            if (ucx_same_node(ux, (tl->rank + i) % tl->size))
                probe = (tl->rank + i) % tl->size;
        ucs_log_push_handler(ucx_quiet_log);
        s = ucx_ep_create(ux, probe, ADDR(probe), 1);
        ucs_log_pop_handler();
        ux->peers[probe].err_peer = 1;
        if (s != UCS_OK) {
            gv_info("ucx: no endpoint in peer error mode to rank %d: %s",
                    probe, ucs_status_string(s));
            ux->peers[probe].ep = NULL;
            ok                  = 0;
        }
        oks    = gv_malloc((size_t)tl->size);
        status = gv__boot_allgather(tl->boot, &ok, 1, oks);
        if (status != GV_OK) {
            gv_free(oks);
            gv_info("ucx: allgather of the error mode: %s",
                    gv_status_str(status));
            return status;
        }
        for (i = 0; i < tl->size; i++)
            ok &= oks[i];
        gv_free(oks);
        if (!ok) {
            if (tl->rank == 0)
                gv_warn("ucx: GV_UCX_ERR_MODE peer: the transports of "
                        "UCX_TLS %s cannot report peer failures; endpoints "
                        "within a node use mode none (the launcher still "
                        "stops the job when a rank dies)", ucx_tls_env());
            local_peer = 0;
            if (ux->peers[probe].ep != NULL) {
                ucp_request_param_t p = {.op_attr_mask =
                                             UCP_OP_ATTR_FIELD_FLAGS,
                                         .flags = UCP_EP_CLOSE_FLAG_FORCE};
                ucx_wait_sp(ux, ucp_ep_close_nbx(ux->peers[probe].ep, &p),
                            gv__now_ns() + 1000000000ull);
                ux->peers[probe].ep = NULL;
            }
        }
    }
    ux->err_local  = local_peer;
    ux->err_remote = want;
    for (i = 0; i < tl->size; i++) {
        int peer_mode = ucx_same_node(ux, i) ? local_peer : want;

        if (ux->peers[i].ep != NULL)
            continue;
        s = ucx_ep_create(ux, i, ADDR(i), peer_mode);
        if (s != UCS_OK) {
            ux->peers[i].ep = NULL;
            gv_info("ucx: no endpoint to rank %d (error mode %s): %s%s", i,
                    peer_mode ? "peer" : "none", ucs_status_string(s),
                    peer_mode ? "; GV_UCX_ERR_MODE=none may help" : "");
            return ucx_status(s);
        }
        ux->peers[i].err_peer = peer_mode;
    }
    if (ux->heap == NULL)
        return GV_OK;
    for (i = 0; i < tl->size; i++) {
        ux->peers[i].heap_base = REC(i)->heap_base;
        s = ucp_ep_rkey_unpack(ux->peers[i].ep, ADDR(i) + addr_max,
                               &ux->peers[i].rkey);
        if (s != UCS_OK) {
            ux->peers[i].rkey = NULL;
            gv_info("ucx: cannot unpack the rkey of rank %d: %s", i,
                    ucs_status_string(s));
            return ucx_status(s);
        }
    }
    return GV_OK;
#undef REC
#undef ADDR
}

/* Exchange addresses and rkeys through the bootstrap, then connect. */
static gv_status_t ucx_exchange(ucx_tl_t *ux, const void *addr,
                                size_t addr_len, const void *rkey,
                                size_t rkey_len)
{
    gv_tl_t    *tl = ux->tl;
    uint32_t    mine[2], *lens;
    size_t      addr_max = 0, rkey_max = 0, rec_len;
    uint8_t    *rec, *recs = NULL;
    gv_status_t status;
    int         i;

    lens    = gv_malloc((size_t)tl->size * sizeof(mine));
    mine[0] = (uint32_t)addr_len;
    mine[1] = (uint32_t)rkey_len;
    status  = gv__boot_allgather(tl->boot, mine, sizeof(mine), lens);
    if (status != GV_OK) {
        gv_info("ucx: allgather of address lengths: %s",
                gv_status_str(status));
        goto out;
    }
    for (i = 0; i < tl->size; i++) {
        if ((lens[2 * i] == 0) || (lens[2 * i] > UCX_EXCH_MAX) ||
            (lens[2 * i + 1] > UCX_EXCH_MAX)) {
            gv_info("ucx: rank %d published an address of %u bytes and an "
                    "rkey of %u", i, lens[2 * i], lens[2 * i + 1]);
            status = GV_ERR_PROTO;
            goto out;
        }
        if (lens[2 * i] > addr_max)
            addr_max = lens[2 * i];
        if (lens[2 * i + 1] > rkey_max)
            rkey_max = lens[2 * i + 1];
    }
    rec_len = (sizeof(ucx_rec_t) + addr_max + rkey_max + 7) & ~(size_t)7;
    rec     = gv_calloc(1, rec_len);
    recs    = gv_malloc((size_t)tl->size * rec_len);
    ((ucx_rec_t *)rec)->heap_base = (uint64_t)(uintptr_t)ux->heap;
    ((ucx_rec_t *)rec)->addr_len  = (uint32_t)addr_len;
    ((ucx_rec_t *)rec)->rkey_len  = (uint32_t)rkey_len;
    memcpy(rec + sizeof(ucx_rec_t), addr, addr_len);
    if (rkey_len != 0)
        memcpy(rec + sizeof(ucx_rec_t) + addr_max, rkey, rkey_len);
    status = gv__boot_allgather(tl->boot, rec, rec_len, recs);
    gv_free(rec);
    if (status != GV_OK) {
        gv_info("ucx: allgather of addresses: %s", gv_status_str(status));
        goto out;
    }
    for (i = 0; i < tl->size; i++) {
        const ucx_rec_t *r = (const ucx_rec_t *)(recs + (size_t)i * rec_len);

        if ((r->addr_len != lens[2 * i]) || (r->rkey_len != lens[2 * i + 1])) {
            gv_info("ucx: rank %d published inconsistent lengths", i);
            status = GV_ERR_PROTO;
            goto out;
        }
        if ((ux->heap != NULL) && (r->rkey_len == 0)) {
            gv_info("ucx: rank %d has no heap rkey", i);
            status = GV_ERR_PROTO;
            goto out;
        }
    }
    status = ucx_connect(ux, recs, rec_len, addr_max);
out:
    gv_free(recs);
    gv_free(lens);
    return status;
}

/* The transports that run atomics for peers in hardware or through shared
 * memory, from the worker's "atomics:" line ("0:self/memory0, 3:sysv/
 * memory"); an empty list means UCX emulates them with active messages
 * (tcp), which needs the target to progress. */
static void ucx_amo_tls(ucx_tl_t *ux, char *buf, size_t len)
{
    char       *text = ucx_capture(ucx_print_worker, ux->worker);
    const char *p, *end;
    size_t      off = 0;

    buf[0] = '\0';
    if (text == NULL)
        return;
    p = strstr(text, "atomics:");
    if (p != NULL) {
        p  += strlen("atomics:");
        end = strchr(p, '\n');
        if (end == NULL)
            end = p + strlen(p);
        while ((p < end) && (off + 1 < len)) {
            const char *colon = memchr(p, ':', (size_t)(end - p));
            const char *slash;

            if (colon == NULL)
                break;
            slash = memchr(colon, '/', (size_t)(end - colon));
            if (slash == NULL)
                break;
            /* self only serves the own rank: not what peers get. */
            if (strncmp(colon + 1, "self/", 5) != 0)
                off += (size_t)snprintf(buf + off, len - off, "%s%.*s",
                                        (off != 0) ? "," : "",
                                        (int)(slash - colon - 1), colon + 1);
            p = strchr(slash, ',');
            if ((p == NULL) || (p > end))
                break;
        }
    }
    free(text);
}

/* attr.detail: what UCX picked, for gvinfo and GV_INFO. */
static void ucx_detail(ucx_tl_t *ux)
{
    gv_tl_t *tl = ux->tl;
    unsigned major, minor, release;
    char     amo[48], eager[48];

    ucp_get_version(&major, &minor, &release);
    ucx_amo_tls(ux, amo, sizeof(amo));
    if (ux->eager_max > UCX_COPY_MAX)
        snprintf(eager, sizeof(eager), "eager to %zu B", ux->eager_max);
    else
        snprintf(eager, sizeof(eager), "eager or rendezvous as UCX chooses");
    snprintf(tl->attr.detail, sizeof(tl->attr.detail),
             "ucx %u.%u.%u; UCX_TLS %s; err mode %s on node, %s off node; "
             "atomics %s; %s%s", major, minor, release,
             ucx_tls_env(), ux->err_local ? "peer" : "none",
             ux->err_remote ? "peer" : "none",
             (ux->heap == NULL) ? "off (no heap)" :
             (amo[0] != '\0') ? amo : "emulated over am",
             eager,
             (ux->efd >= 0) ? "; wakeup" : "");
}

static gv_status_t ucx_init(gv_tl_t *tl)
{
    ucx_tl_t      *ux;
    ucp_address_t *addr      = NULL;
    size_t         addr_len  = 0;
    void          *rkey      = NULL;
    size_t         rkey_len  = 0;
    gv_status_t    status;
    int            i;

    ux            = gv_calloc(1, sizeof(*ux));
    ux->tl        = tl;
    ux->efd       = -1;
    ux->heap_size = tl->params.heap_size;
    memcpy(&ux->tag, tl->boot->key, sizeof(ux->tag));
    /* The user's UCX_RNDV_THRESH wins over our default, not over an
     * explicit GV_UCX_EAGER. */
    ux->eager_max = gv__env.UCX_EAGER;
    if (!gv__env.UCX_EAGER_set && (getenv("UCX_RNDV_THRESH") != NULL))
        ux->eager_max = 0;
    ux->peers = gv_calloc((size_t)tl->size, sizeof(*ux->peers));
    for (i = 0; i < tl->size; i++) {
        ux->peers[i].ux   = ux;
        ux->peers[i].rank = i;
    }
    tl->priv = ux;

    status = ucx_context_open(ux);
    if (status != GV_OK)
        goto err_free;
    status = ucx_worker_open(ux, &addr, &addr_len);
    if (status != GV_OK)
        goto err_free;
    if (ux->heap_size != 0) {
        status = ucx_heap_map(ux, &rkey, &rkey_len);
        if (status != GV_OK)
            goto err_release_addr;
    }
    status = ucx_exchange(ux, addr, addr_len, rkey, rkey_len);
    if (status != GV_OK)
        goto err_close;

    if (rkey != NULL)
        ucp_rkey_buffer_release(rkey);
    ucp_worker_release_address(ux->worker, addr);

    tl->attr.caps    = GV_TL_CAP_AM;
    tl->attr.max_msg = UCX_MAX_MSG;
    /* Format A frames are copied into the send descriptor: never
     * INPROGRESS, so the layer above need not copy them first. Larger ones
     * are copied too when sent without a req, but advertising that makes
     * the layer above wait for our copy budget instead of pipelining its
     * own buffers, which measured 2-3x slower at 1 MiB. */
    tl->attr.max_inline = UCX_COPY_MAX;
    tl->attr.max_id     = UCX_ID_MAX;
    if (ux->heap != NULL) {
        tl->attr.caps     |= GV_TL_CAP_RMA | GV_TL_CAP_ATOMIC64;
        tl->attr.heap_base = ux->heap;
    }
    if (ux->efd >= 0)
        tl->attr.caps |= GV_TL_CAP_WAIT | GV_TL_CAP_WAIT_FD;
    if (tl->params.recv_id_cb != NULL)
        tl->attr.caps |= GV_TL_CAP_AM_ID;
    ucx_detail(ux);
    gv_debug("ucx: %s", tl->attr.detail);
    return GV_OK;

err_close:
    ucx_eps_close(ux, gv__now_ns() + 1000000000ull);
    if (rkey != NULL)
        ucp_rkey_buffer_release(rkey);
err_release_addr:
    ucp_worker_release_address(ux->worker, addr);
err_free:
    ucx_free_all(ux);
    tl->priv = NULL;
    return status;
}

static void ucx_fini(gv_tl_t *tl)
{
    ucx_tl_t           *ux = tl->priv;
    ucp_request_param_t p  = {.op_attr_mask = 0};
    unsigned            wait_s;
    ucs_status_t        s;
    gv_status_t         status;

    if (ux == NULL)
        return;
    wait_s = (gv__env.TIMEOUT_S < UCX_FINI_MAX_S) ? (unsigned)gv__env.TIMEOUT_S :
                                                    UCX_FINI_MAX_S;
    /* 1. Our last messages (the final barrier's) reach their peers. */
    s = ucx_wait_sp(ux, ucp_worker_flush_nbx(ux->worker, &p),
                    gv__now_ns() + wait_s * 1000000000ull);
    if (s != UCS_OK)
        gv_debug("ucx: final flush: %s", ucs_status_string(s));
    /* 2. Nobody closes before everybody has flushed, so a peer never sees
     * an endpoint vanish while it still has traffic for it. */
    ux->closing = 1;
    /* After a peer failed (the host handles it) no collective completes,
     * the bootstrap's neither: close alone. */
    status = (gv__ctx.nfailed > 0) ? GV_OK : gv__boot_barrier(tl->boot);
    if (status != GV_OK)
        gv_debug("ucx: fini barrier: %s", gv_status_str(status));
    /* 3. Close, unmap, destroy. */
    ucx_eps_close(ux, gv__now_ns() + wait_s * 1000000000ull);
    gv_debug("ucx: rx rejected %llu held %llu rendezvous %llu; tx errors "
             "%llu back-pressure %llu; %u idle buffers (%zu bytes)",
             (unsigned long long)ux->st.rx_bad,
             (unsigned long long)ux->st.rx_held,
             (unsigned long long)ux->st.rx_rndv,
             (unsigned long long)ux->st.tx_err,
             (unsigned long long)ux->st.tx_backpressure, ux->nrbuf,
             ux->rbuf_bytes);
    ucx_free_all(ux);
    tl->priv = NULL;
}

const gv_tl_ops_t gv_tl_ucx_ops = {
    .version  = GV_TL_OPS_VERSION,
    .name     = "ucx",
    .init     = ucx_init,
    .fini     = ucx_fini,
    .progress = ucx_progress,
    .am_send  = ucx_am_send,
    .am_send_id = ucx_am_send_id,
    .wait     = ucx_wait,
    .wait_fd  = ucx_wait_fd,
    .arm      = ucx_arm,
    .put      = ucx_put,
    .get      = ucx_get,
    .atomic64 = ucx_atomic64,
    .flush    = ucx_flush,
};
