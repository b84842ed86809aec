/* The libfabric transport: reliable-datagram endpoints (FI_EP_RDM) with
 * FI_MSG for active messages, FI_RMA and FI_ATOMIC on the registered heap.
 * Tested with Debian's tcp;ofi_rxm and shm providers.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Provider choice. GV_OFI_PROVIDER names a provider (hints' prov_name);
 * when it is empty libfabric applies its own FI_PROVIDER filter and we take
 * the first provider that opens. Every rank must end up on the same
 * provider, so the choice is part of the address exchange and checked.
 * The frame sizes every rank takes and the one-sided operations it has
 * travel with it, and the job keeps to what every rank can do (agree).
 * fi_getinfo is asked, best first, for FI_MSG|FI_RMA|FI_ATOMIC, then
 * FI_MSG|FI_RMA, then FI_MSG, each first with FI_TAGGED (large frames,
 * below) and FI_MULTI_RECV; what we got is in attr.detail, and each
 * atomic is advertised only if fi_atomicvalid (or its fetch / compare
 * variants) accepts it for FI_UINT64.
 *
 * Messages. Every frame starts with our own 16-byte header:
 *
 *    0        4        8            15   16
 *    +--------+--------+-------------+----+-----------+---------+-----+
 *    | src    | seq    | tag         |pad | upper hdr | payload | pad |
 *    +--------+--------+-------------+----+-----------+---------+-----+
 *      u32      u32      7 bytes of    u8                         0..7
 *                        the job key                              zeros
 *
 * Frames are padded to a multiple of 8 bytes, so that back-to-back frames
 * in a multi-receive buffer stay 8-byte aligned for the layer above (one
 * that arrives misaligned anyway is copied to an aligned buffer first).
 * Large frames (below) are not padded; their byte 15 counts zeros between
 * our header and the upper one instead (the lead, < OFI_RX_ALIGN). An id
 * frame (am_send_id: a request or reply of gv_am_send_now) has OFI_IDF
 * added to its pad count and, in place of the upper header, an 8-byte
 * word holding the upper layer's 16-bit id: over ofi/shm that saved
 * about 70 instructions a send (callgrind, perf/hop_ofi).
 *
 * Split messages. Over shm a frame past inject_size (4096 bytes) takes
 * the provider's CMA protocol: a system call in the receiver and a reply
 * to the sender, about 5 us a hop in these VMs against 0.6-0.8 us for an
 * injected 4 KiB, so a 4 KiB payload, whose frame our header takes past
 * 4096, cost 3-8x libfabric's own 4 KiB hop. A frame of up to
 * OFI_SPLIT_PARTS times inject_size (less our headers, and at most as
 * many parts as a peer grants credits; split_max, agreed by every rank,
 * 0 where it would not fit the shared receive buffers' frames) goes
 * instead as that many injected parts with
 * consecutive seqs (send_split), byte 15 saying how each continues:
 * OFI_MORE (more follow; no pad) and OFI_CONT (it continues the previous
 * one; never OFI_IDF, which only the first part has, before its id word).
 * The receiver copies the parts of a message together in a buffer of its
 * sender's and delivers it with the last (take_part). Providers with a
 * small inject_size (rxm: 64) do not split.
 * src names the sender (tcp;ofi_rxm has no FI_SOURCE), tag drops frames
 * from anything outside this job (rxm accepts any connection), and seq
 * restores per-pair order: both providers match sends in order
 * (FI_ORDER_SAS) but rxm reports receive completions out of order
 * (comp_order FI_ORDER_NONE: a rendezvous message completes after the
 * eager one behind it). A frame that comes early is copied aside and
 * delivered when the gap closes; in order, frames are handed to recv_cb
 * straight from the receive buffer.
 *
 * Receive buffers are FI_MULTI_RECV when the provider completes receives in
 * order (shm; see has_multi for why rxm does not qualify): OFI_NRBUF
 * buffers, each OFI_RBUF_FRAMES times the largest frame they take, filled
 * with as many frames as fit and reposted when a completion says the
 * provider released the buffer. Otherwise they are a ring of OFI_RING_N
 * one-frame buffers. FI_OPT_MIN_MULTI_RECV is that largest frame, so it
 * always fits. The multi-receive buffers are kept small because every frame
 * lands on the next fresh bytes of one, and the provider's copy into bytes
 * that have left this core's cache is slow. 4 x 512 KiB (tagged frames, so
 * 4 of the largest untagged ones each) rather than 4 x 2 MiB took our hop
 * over libfabric's own at 64 KiB from 1.64x to 1.33x
 * (perf/notes/receive-paths.md); 4 x 256 KiB would hold only two of the
 * largest frames, and a buffer released every second frame made those
 * hops 3x as long. Bigger buffers only delay what flow control (below) prevents,
 * shm running out of receive entries in a flood (4 x 512 KiB wedged a rank
 * sooner than 4 x 2 MiB before there was flow control): it bounds the frames
 * in flight by entries, not bytes.
 *
 * Large frames. With FI_TAGGED, frames above OFI_LARGE_MIN (with the ring:
 * above a ring buffer) up to OFI_MAX_FRAME travel as tagged messages into
 * OFI_NLBUF buffers of max_frame bytes (OFI_NLBUF_SHM over shm) posted
 * with fi_trecv (any tag matches: our header identifies a frame), one
 * frame each, reposted as soon as the frame is delivered (or copied
 * aside). The provider's large-message protocol lands the frame in a
 * buffer posted for it (shm: one process_vm_readv, rxm: rendezvous), and
 * the same few buffers take every large frame, so that copy, too, writes
 * into cache: at 1 MiB, copying into fresh memory ran at half the speed
 * (measured with process_vm_readv alone). Over shm a single buffer does
 * best, every frame landing in the same warm memory: a 1 MiB ping-pong in
 * one process (perf/hop_ofi -s 1048576) went from 0.90-0.94x of
 * libfabric's own endpoint with two to 0.96-1.00x with one (4 pairs), and
 * streaming (perf/pingpong) did not change. Over rxm one buffer gained
 * nothing in ping-pong and lost streaming in 2 of 4 pairs, so rxm keeps
 * two. The lead puts the payload OFI_RX_ALIGN bytes into the buffer
 * (exactly when the upper header is a multiple of 8 bytes long; the upper
 * header itself stays 8-byte aligned): copying into an unaligned
 * destination cost another 10% at 1 MiB. A tagged frame is
 * self-contained (same header, same seq space), so the reorder stage
 * needs nothing new. When every large buffer is taken, the provider
 * holds the next large frame as an unexpected message (shm keeps the
 * sender's buffer, rxm the rendezvous request) until one is reposted.
 *
 * Flow control (with multi-receive buffers, i.e. shm). shm takes every
 * send while the peer's queue has room and keeps a frame that finds no
 * posted buffer as an "unexpected" message in an entry of the receive pool
 * (rx_attr.size: 1024 entries), the pool that posting a receive needs too.
 * A flood of tiny frames at a receiver that is busy sending can take every
 * entry, after which no buffer can be posted again and the rank is wedged
 * (seen: GUPS without aggregation). So a sender may have at most
 * `credits` frames to a peer that the peer has not yet taken from its
 * completion queue, chosen so that all peers' frames together fit the
 * pool beside our posted buffers; past that am_send says
 * GV_ERR_NO_RESOURCE and the layer above queues and progresses. A receiver
 * returns credit with a header-only grant frame (byte 15 = OFI_GRANT, seq
 * = how many frames from that peer it has taken so far) once a quarter of
 * a window is taken. Grants have no seq and need no credit; one that meets
 * EAGAIN is retried by progress. A peer that grants nothing, or accepts
 * nothing (rxm retrying the connection to a dead peer answers EAGAIN for
 * ever, shm's queue to it stays full), leaves our messages to it refused:
 * the AM layer's watchdog names it after GV_TIMEOUT_S.
 *
 * A frame is rejected (logged and counted, never delivered) if it is
 * shorter than our header or longer than the job's largest frame, carries
 * another job key, has impossible padding, is an id frame without a
 * 16-bit id, names an impossible source, or repeats a delivered seq; also
 * a part with padding before its last, a continuation marked as an id
 * frame, and, when it is next in its sender's sequence, a continuation
 * without a message in progress, another frame in the middle of one, or
 * a part that would make its message longer than split_max. Those last
 * three do not take their seq, so that the frame really sent with it is
 * still taken. (A frame with the job's key and the next seq is trusted:
 * a forged first part of a message would make its sender's real frames
 * look like the middle of a message, to be dropped, and so stop that
 * sender; the job's watchdog names a rank once its messages back up,
 * not necessarily the forger. The key is what keeps strangers out.)
 *
 * Sends: a frame that fits in inject_size goes out with fi_inject (done on
 * return), one up to split_max as injected parts (attr.max_inline says
 * both are copied); a larger one goes out with fi_sendv, or
 * fi_tsendv when it is large (our header plus a copy of the upper header,
 * then the caller's payload in place) and completes from the CQ. Without a
 * request the frame is copied first. At fini every peer we sent to gets a
 * header-only "bye" frame with a completion, so that injected bytes still
 * queued in the provider leave before the endpoint closes (see
 * drain_sends).
 *
 * One-sided operations. The heap is mmap'ed here and registered with
 * FI_REMOTE_READ|FI_REMOTE_WRITE; base address and key travel with the
 * endpoint address. Remote addresses are base + off under FI_MR_VIRT_ADDR,
 * off otherwise. flush(dst) waits until no one-sided op to dst is
 * outstanding, and an op counts as done only when the target has it:
 *  - puts are issued with FI_DELIVERY_COMPLETE (completion = the bytes are
 *    in the target's memory, not merely sent);
 *  - gets and fetching atomics complete when their result is here, which
 *    implies the target applied them;
 *  - the non-fetching add is fi_atomic with FI_DELIVERY_COMPLETE, except on
 *    shm, whose delivery-complete atomics corrupt memory in 1.17 (seen:
 *    crashes in fi_cq_read, wrong compare-and-swap results); there it is a
 *    fetching FI_SUM whose old value is dropped.
 * A put's source may be reused on return: small ones are FI_INJECT, larger
 * ones without a request are sent from a copy. Operations to the own rank
 * go through the provider too (loopback), so that they serialise with the
 * ones peers issue on the same words.
 *
 * Waiting. When the CQ has an fd wait object (tcp;ofi_rxm), wait() blocks in
 * fi_cq_sread and the entries it reads are handled by the next progress().
 * shm has none: GV_TL_CAP_WAIT is not advertised. The wait object has a
 * price: with one, rxm over tcp polls its sockets through the wait set's
 * epoll_wait instead of poll(), and every fi_cq_read, so every message,
 * took 1-2 us longer (perf/hop_ofi: 1.17-1.25x libfabric's own hop with
 * it, 1.03-1.08x without). So the CQ gets one only where blocking pays
 * (GV_OFI_WAIT=auto): when this node runs more ranks than it has cores.
 * Otherwise a rank idle past GV_SPIN_US yields, then sleeps 50 us at a
 * time, which on these VMs is no slower than a wake-up from a blocking
 * wait (60-80 us).
 *
 * Memory registration modes: FI_MR_VIRT_ADDR, FI_MR_PROV_KEY (keys are
 * exchanged either way), FI_MR_ALLOCATED (the heap is mmap'ed), FI_MR_ENDPOINT
 * (regions are bound to the endpoint) and FI_MR_LOCAL (our own buffers are
 * registered at init; a caller's buffer outside them is registered for the
 * duration of the operation).
 */
#include "transports/ofi.h"
#include "transports/transport.h"
#include "transports/loopback.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#define OFI_API_VERSION FI_VERSION(1, 10)
#define OFI_WIRE_HDR    16                 /* src, seq, tag, pad */
#define OFI_TAG_LEN     7
#define OFI_MAX_FRAME   ((1u << 20) + 4096) /* one 1 MiB payload + headers */
#ifndef OFI_NRBUF
#define OFI_NRBUF       4                  /* multi-receive buffers, each */
#endif                                     /*   holding this many of the */
#ifndef OFI_RBUF_FRAMES                    /*   largest frames they take */
#define OFI_RBUF_FRAMES 4                  /*   (build-time settings, as */
#endif                                     /*   OFI_NLBUF below) */
_Static_assert((OFI_NRBUF >= 1) && (OFI_RBUF_FRAMES >= 2),
               "multi-receive buffers: at least one, of two frames each");
#define OFI_RING_FRAME  ((64u << 10) + 64) /* without FI_MULTI_RECV: a ring */
#define OFI_RING_N      256                /*   of buffers, one frame each
                                              (a 64 KiB batch and headers) */
#define OFI_LARGE_MIN   (128u << 10)       /* larger frames go tagged into */
#ifndef OFI_NLBUF
#define OFI_NLBUF       2                  /*   this many reused buffers */
#endif                                     /*   (shm: OFI_NLBUF_SHM; both */
#ifndef OFI_NLBUF_SHM                      /*   build-time settings, e.g. */
#define OFI_NLBUF_SHM   1                  /*   make OPT="-O2 -g */
#endif                                     /*   -DOFI_NLBUF_SHM=2") */
#define OFI_LARGE_TAG   0                  /* their tag (received: any) */
#define OFI_RX_ALIGN    64                 /* where their payload lands */
_Static_assert(OFI_WIRE_HDR + GV_TL_MAX_HDR + 8 <= OFI_RX_ALIGN,
               "op->wire holds our header, a lead or pad, the upper header");
#ifndef OFI_USE_MULTI_RECV
#define OFI_USE_MULTI_RECV 1               /* 0: always the ring (tests) */
#endif
#ifndef OFI_USE_TAGGED
#define OFI_USE_TAGGED  1                  /* 0: no large-frame path (tests) */
#endif
#define OFI_ADDR_MAX    128                /* endpoint name we can exchange */
#define OFI_OPEN_TRIES  5                  /* opens of one fi_info, if busy */
#define OFI_FRAME_MIN   (8u << 10)         /* frames any rank must take */
#define OFI_OP_RMA      1u                 /* card.ops: put and get */
#define OFI_OP_AMO      2u                 /*   atomics, << GV_TL_AMO_* */
#define OFI_CQ_BATCH    32
#define OFI_GRANT       0x80               /* byte 15 of a grant frame */
#define OFI_IDF         0x40               /* byte 15: an id frame (+ pad) */
#define OFI_MORE        0x20               /*   more parts of it follow */
#define OFI_CONT        0x10               /*   it continues a message */
#ifndef OFI_SPLIT_PARTS
#define OFI_SPLIT_PARTS 4                  /* a frame past inject_size goes */
#endif                                     /*   as up to this many injected */
#define OFI_SPLIT_INJECT_MIN 1024          /*   parts where inject_size is */
#define OFI_SPLIT_INJECT_MAX (64u << 10)   /*   in this range (0: never) */
_Static_assert((OFI_SPLIT_PARTS == 0) || (OFI_SPLIT_PARTS >= 2),
               "a split frame has at least two parts");
#define OFI_ID_WORD     8                  /* the id, before its payload */
#define OFI_CREDITS_MAX 1024               /* frames in flight per peer */
#define OFI_CREDITS_MIN 4
#define OFI_STASH_MAX   (256ull << 20)     /* bytes held for reordering */
#define OFI_RX_WINDOW   (1 << 20)          /* seq distance accepted ahead */
#define OFI_NOPS_MIN    256
#ifndef OFI_FORCE_MR_LOCAL
#define OFI_FORCE_MR_LOCAL 0               /* 1: register as if FI_MR_LOCAL */
#endif

enum { OFI_WAIT_AUTO, OFI_WAIT_FD, OFI_WAIT_NONE }; /* GV_OFI_WAIT values */

/* Why init failed (gv__tl_why). */
#define ofi_why(_fmt, ...) gv__tl_why("ofi", _fmt, ##__VA_ARGS__)

/* The caps ladder fi_getinfo is asked for, best first. */
static const struct {
    uint64_t    caps;
    const char *what;
} ofi_ladder[] = {
    {FI_MSG | FI_MULTI_RECV | FI_RMA | FI_ATOMIC, "FI_MSG|FI_RMA|FI_ATOMIC"},
    {FI_MSG | FI_RMA | FI_ATOMIC, "FI_MSG|FI_RMA|FI_ATOMIC"},
    {FI_MSG | FI_MULTI_RECV | FI_RMA, "FI_MSG|FI_RMA"},
    {FI_MSG | FI_RMA, "FI_MSG|FI_RMA"},
    {FI_MSG | FI_MULTI_RECV, "FI_MSG"},
    {FI_MSG, "FI_MSG"},
};

enum { OFI_CTX_RBUF = 1, OFI_CTX_LBUF, OFI_CTX_SEND, OFI_CTX_RMA };

/* Every context handed to libfabric starts with this, so that a completion
 * can tell receive buffers from operations. */
typedef struct {
    struct fi_context2 fctx; /* the provider's scratch (FI_CONTEXT[2]) */
    uint8_t            kind; /* OFI_CTX_* */
} ofi_ctx_t;

typedef struct {
    ofi_ctx_t ctx;
    char     *base;
    int       posted;
} ofi_rbuf_t;

/* One operation in flight: a send, a put/get or an atomic. */
typedef struct ofi_op {
    ofi_ctx_t      ctx;
    int            dst;
    int            in_use;
    gv_req_t      *req;
    struct fid_mr *mr;          /* on-the-fly registration (FI_MR_LOCAL) */
    void          *bounce;      /* owned copy of a payload (req == NULL) */
    uint64_t      *result_p;    /* where a fetched value goes */
    uint64_t       operand;     /* atomic operand, compare value, result */
    uint64_t       compare;
    uint64_t       result;
    uint64_t       rseq;        /* one-sided ops: issue order, for flush */
    struct ofi_op *next_free;
    uint8_t        wire[OFI_RX_ALIGN]; /* our header, lead or pad, upper */
    uint8_t        zeros[8];    /* pad source; never written */
} ofi_op_t;

/* A frame that arrived before its predecessors. */
typedef struct ofi_stash {
    struct ofi_stash *next;
    uint32_t          seq;
    int32_t           id;   /* an id frame's id, else -1 */
    unsigned          flags; /* OFI_MORE, OFI_CONT */
    size_t            len;
    uint8_t           data[];
} ofi_stash_t;

typedef struct {
    fi_addr_t    addr;
    uint64_t     rbase;       /* remote address of offset 0 */
    uint64_t     rkey;
    uint32_t     tx_seq;      /* next seq we send */
    uint32_t     tx_taken;    /* of those, how many the peer has taken */
    uint32_t     rx_seq;      /* next seq we deliver */
    uint32_t     rx_taken;    /* frames from the peer taken off our CQ */
    uint32_t     rx_granted;  /* ... as far as we told it */
    uint8_t      grant_due;   /* a grant met EAGAIN: progress retries */
    uint8_t      msg_on;      /* parts of a split message were taken */
    uint8_t      owing;       /* parts of a split message are owed */
    ofi_stash_t *stash;       /* early frames, sorted by seq */
    size_t       outstanding; /* one-sided ops not yet complete */
} ofi_peer_t;
/* The paths of every frame read it, o->splits[] has the rarer rest. */
_Static_assert(sizeof(ofi_peer_t) <= 64, "a peer fits a cache line");

/* A peer's split messages (send_split, take_part). */
typedef struct {
    uint8_t *msg;             /* the one being put together, split_max */
    size_t   msg_len;         /*   bytes, while the peer's msg_on */
    int32_t  msg_id;          /*   its id, or -1 */
    uint8_t *owed;            /* parts that met EAGAIN: the bytes still to */
    size_t   owed_len;        /*   go, padded, while the peer's owing; */
    size_t   owed_off;        /*   progress injects them */
    size_t   owed_pad;
    uint64_t owed_ns;         /* when a part last went, or owed_watch's
                                 clock restarted */
} ofi_split_t;

/* A flush waits for the one-sided ops issued before it, not for ones
 * issued while it waits (with thousands of workers issuing, "until nothing
 * is outstanding" would wait for a lull): remaining counts its ops down. */
typedef struct ofi_flush {
    struct ofi_flush *next;
    int               dst;        /* -1: every rank */
    uint64_t          before;     /* ops with rseq < before are its */
    size_t            remaining;
    gv_req_t         *req;
} ofi_flush_t;

/* What each rank publishes through the bootstrap. */
typedef struct {
    char     prov[48];
    uint32_t addr_format;
    uint32_t addrlen;
    uint64_t heap_base;
    uint64_t heap_key;
    uint32_t small_max;   /* the largest untagged frame it takes */
    uint32_t split_max;   /* the longest split message it sends */
    uint32_t max_frame;   /* the largest frame, tagged or not */
    uint32_t tagged;      /* it posts buffers for tagged large frames */
    uint32_t ops;         /* OFI_OP_RMA, OFI_OP_AMO << GV_TL_AMO_*: usable */
    uint8_t  addr[OFI_ADDR_MAX];
} ofi_card_t;

typedef struct {
    struct fi_info    *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av     *av;
    struct fid_cq     *cq;
    struct fid_ep     *ep;
    struct fid_mr     *heap_mr, *pool_mr, *rbuf_mr;
    void              *pool_desc, *rbuf_desc, *heap_desc;
    int                wait_fd;     /* -1: no wait object */
    int                mr_local, virt_addr, prov_key, mr_endpoint;
    uint64_t           key_mask;
    uint64_t           next_key;    /* requested keys when !prov_key */
    size_t             inject_size;
    size_t             iov_limit;
    uint8_t            tag[OFI_TAG_LEN];
    uint64_t           tag_word;    /* bytes 8..15 of a frame, as loaded: */
    uint64_t           tag_mask;    /*   the tag, and which bits hold it */
    int                has_rma;
    int                dc_atomic_broken;
    int                amo_ok[GV_TL_AMO_LAST];
    const char        *ladder_what;

    uint8_t           *heap;
    size_t             heap_size;

    ofi_peer_t        *peers;
    ofi_split_t       *splits;      /* per peer, where split_max > 0 */
    ofi_op_t          *ops;
    size_t             nops;
    ofi_op_t          *free_ops;
    size_t             total_outstanding;
    uint64_t           rseq_next;
    ofi_flush_t       *flushes;

    int                multi;       /* FI_MULTI_RECV, else a ring */
    size_t             nrbuf, rbuf_size, max_frame;
    size_t             small_max;   /* larger frames go tagged */
    int                tagged;      /* every rank takes tagged frames */
    uint32_t           ops_dropped; /* OFI_OP_*: ours, not every rank's */
    size_t             nlbuf, lbuf_size; /* tagged receive buffers */
    size_t             nrbuf_unposted; /* reposts that met EAGAIN */
    char              *rmem;        /* the nlbuf (page-aligned), then the
                                       nrbuf buffers */
    size_t             rmem_size;
    ofi_rbuf_t        *rbufs;       /* nrbuf + nlbuf */
    size_t             stash_bytes;

    uint32_t           credits;     /* frames in flight per peer; 0: no
                                       flow control */
    uint32_t           grant_every; /* frames taken between grants */
    int                ngrant_due;  /* peers with grant_due set */
    size_t             split_chunk; /* bytes of a message in one part */
    size_t             split_max;   /* longest split message; 0: none */
    int                nowed;       /* peers with parts owed */
    unsigned           owed_polls;  /* progress calls while owing */
    uint64_t           owed_look_ns; /* owed_watch's last look */
    unsigned           test_owe;    /* gv__tl_ofi_owe() */
    int                test_owe_stuck; /* ... and owed parts never go */

    /* Counters, logged at fini (debug). */
    uint64_t           n_grants, n_credit_stalls;
    uint64_t           n_rx, n_tx, n_large, n_reordered, n_bad, n_eagain;
    uint64_t           n_blocked, n_realigned, n_split, n_owed;
    uint8_t           *align_buf;   /* for frames that arrive misaligned */
    unsigned           idle_waits;  /* waits since the last event */
    struct fi_cq_data_entry pend[OFI_CQ_BATCH]; /* read by wait() */
    size_t             npend;
} ofi_t;

static const char *prov_name(const ofi_t *o)
{
    return o->info->fabric_attr->prov_name;
}

/* The largest frame rxm sends eagerly: FI_OFI_RXM_EAGER_LIMIT, else
 * FI_OFI_RXM_BUFFER_SIZE, else 16 KiB (libfabric 1.17's defaults; either
 * variable moves the limit, measured). Above it rxm segments the frame
 * (SAR, to 128 KiB) or uses a rendezvous, and 64 KiB batches over SAR ran
 * at about 60 M GUPS updates/s against 85 for 16 KiB ones. The variables
 * are read as libfabric reads them (strtol with base 0: "16k" is 16).
 * 0 for other providers. */
static size_t rxm_eager_limit(const ofi_t *o)
{
    static const char *const vars[] = {"FI_OFI_RXM_EAGER_LIMIT",
                                       "FI_OFI_RXM_BUFFER_SIZE"};
    const char              *s;
    char                    *end;
    long                     v;
    unsigned                 i;

    if (strstr(prov_name(o), "ofi_rxm") == NULL)
        return 0;
    for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        s = getenv(vars[i]);
        if (s == NULL)
            continue;
        v = strtol(s, &end, 0);
        if ((end != s) && (v > 0))
            return (size_t)v;
        gv_warn("ofi: %s='%s' is not a positive number of bytes; not "
                "sizing aggregation batches by it", vars[i], s);
    }
    return 16384;
}

/* --- memory registration ------------------------------------------------ */

static int mr_open(ofi_t *o, void *buf, size_t len, uint64_t access,
                   struct fid_mr **mr_p)
{
    uint64_t key = (o->next_key++) & o->key_mask;
    int      ret;

    ret = fi_mr_reg(o->domain, buf, len, access, 0, key, 0, mr_p, NULL);
    if (ret != 0) {
        ofi_why("ofi: provider %s: fi_mr_reg of %zu bytes failed: %s",
                prov_name(o), len, fi_strerror(-ret));
        return ret;
    }
    if (o->mr_endpoint) {
        ret = fi_mr_bind(*mr_p, &o->ep->fid, 0);
        if (ret == 0)
            ret = fi_mr_enable(*mr_p);
        if (ret != 0) {
            ofi_why("ofi: provider %s: binding a memory region to the "
                    "endpoint failed: %s", prov_name(o), fi_strerror(-ret));
            fi_close(&(*mr_p)->fid);
            *mr_p = NULL;
            return ret;
        }
    }
    return 0;
}

static int in_range(const void *p, size_t len, const void *base, size_t size)
{
    const uint8_t *a = p, *b = base;
    return (b != NULL) && (a >= b) && (len <= size) &&
           ((size_t)(a - b) <= size - len);
}

/* The descriptor for a local buffer under FI_MR_LOCAL: one of our regions
 * if it lies inside one, else a registration kept in op->mr until the
 * operation completes. Without FI_MR_LOCAL the descriptor is NULL. */
static int local_desc(ofi_t *o, ofi_op_t *op, const void *buf, size_t len,
                      void **desc_p)
{
    *desc_p = NULL;
    if (!o->mr_local || (len == 0))
        return 0;
    if (in_range(buf, len, o->heap, o->heap_size)) {
        *desc_p = o->heap_desc;
    } else if (in_range(buf, len, o->ops, o->nops * sizeof(*o->ops))) {
        *desc_p = o->pool_desc;
    } else {
        int ret = mr_open(o, (void *)buf, len,
                          FI_SEND | FI_RECV | FI_READ | FI_WRITE, &op->mr);
        if (ret != 0)
            return ret;
        *desc_p = fi_mr_desc(op->mr);
    }
    return 0;
}

/* --- operation pool ----------------------------------------------------- */

static ofi_op_t *op_get(ofi_t *o, uint8_t kind, int dst, gv_req_t *req)
{
    ofi_op_t *op = o->free_ops;
    if (op == NULL)
        return NULL;
    o->free_ops  = op->next_free;
    op->ctx.kind = kind;
    op->dst      = dst;
    op->in_use   = 1;
    op->req      = req;
    op->mr       = NULL;
    op->bounce   = NULL;
    op->result_p = NULL;
    return op;
}

static void op_put(ofi_t *o, ofi_op_t *op)
{
    if (op->mr != NULL)
        fi_close(&op->mr->fid);
    gv_free(op->bounce);
    op->in_use    = 0;
    op->next_free = o->free_ops;
    o->free_ops   = op;
}

/* Translate a libfabric error from posting an operation. */
static gv_status_t post_error(ofi_t *o, int dst, const char *what,
                              ssize_t ret)
{
    if (ret == -FI_EAGAIN) {
        o->n_eagain++;
        return GV_ERR_NO_RESOURCE;
    }
    if ((ret == -FI_ECONNREFUSED) || (ret == -FI_ECONNRESET) ||
        (ret == -FI_EHOSTUNREACH) || (ret == -FI_ENOTCONN) ||
        (ret == -FI_ECONNABORTED) || (ret == -FI_ETIMEDOUT)) {
        gv__peer_failed(dst, "ofi: %s to rank %d failed: %s", what, dst,
                        fi_strerror((int)-ret));
        return GV_ERR_UNREACHABLE;
    }
    gv_error("ofi: provider %s: %s to rank %d failed: %s", prov_name(o),
             what, dst, fi_strerror((int)-ret));
    return GV_ERR_IO;
}

/* Frames in flight per peer: every peer's together, beside our posted
 * buffers and a margin, fit the provider's receive pool. */
static uint32_t credits_of(const ofi_t *o, int size)
{
    size_t pool = o->info->rx_attr->size, used = o->nrbuf + o->nlbuf + 16;
    size_t c    = (pool > used) ? (pool - used) / (size_t)((size > 1) ?
                                                           size - 1 : 1)
                                : 0;

    if (c > OFI_CREDITS_MAX)
        c = OFI_CREDITS_MAX;
    if (c < OFI_CREDITS_MIN) {
        c = OFI_CREDITS_MIN;
        if (size > 1)
            gv_warn("ofi: provider %s: its receive pool (%zu entries) is "
                    "too small for %d ranks to have frames in flight to "
                    "one rank at once; a flood of tiny messages may still "
                    "exhaust it", prov_name(o), pool, size);
    }
    return (uint32_t)c;
}

/* --- receive ------------------------------------------------------------ */

static int post_err_said; /* rbuf_post() logged a failure */

static int rbuf_post(ofi_t *o, ofi_rbuf_t *rb)
{
    struct iovec iov = {.iov_base = rb->base, .iov_len = o->rbuf_size};
    void        *desc = o->rbuf_desc;
    struct fi_msg msg = {
        .msg_iov   = &iov,
        .desc      = &desc,
        .iov_count = 1,
        .addr      = FI_ADDR_UNSPEC,
        .context   = &rb->ctx.fctx,
    };
    ssize_t ret;

    if (rb->ctx.kind == OFI_CTX_LBUF)
        /* Any tag: a stranger's tagged message is consumed and then
         * rejected by handle_frame, instead of waiting unmatched in the
         * provider for ever. */
        ret = fi_trecv(o->ep, rb->base, o->lbuf_size, desc, FI_ADDR_UNSPEC,
                       OFI_LARGE_TAG, ~(uint64_t)0, &rb->ctx.fctx);
    else
        ret = fi_recvmsg(o->ep, &msg, o->multi ? FI_MULTI_RECV : 0);
    if (ret == 0)
        rb->posted = 1;
    else
        o->nrbuf_unposted++; /* progress() tries again */
    /* Said once: progress retries it on every call. */
    if ((ret != 0) && (ret != -FI_EAGAIN) && !post_err_said) {
        post_err_said = 1;
        gv_error("ofi: provider %s: posting a receive buffer failed: %s "
                 "(retrying; a flood of unexpected messages can exhaust the "
                 "provider's receive entries)", prov_name(o),
                 fi_strerror((int)-ret));
    }
    return (int)ret;
}

/* Hand a frame's body to the layer above: upper header and payload, or
 * for an id frame (@a id >= 0) the payload and its id. */
static void deliver(gv_tl_t *tl, int src, int32_t id, const uint8_t *body,
                    size_t len)
{
    /* A frame with nothing after our header is a peer's "bye" (see
     * drain_sends): it only takes its place in the sequence. */
    ofi_t *o = tl->priv;

    if ((len == 0) && (id < 0))
        return;
    /* Multi-receive buffers pack frames back to back, so one may start at
     * any byte; the layer above gets its bytes 8-byte aligned (its
     * handlers' payloads 4-byte aligned, as they are promised). */
    if (__builtin_expect(((uintptr_t)body & 7) != 0, 0)) {
        if (o->align_buf == NULL)
            o->align_buf = gv_malloc(o->max_frame);
        memcpy(o->align_buf, body, len);
        body = o->align_buf;
        o->n_realigned++;
    }
    if (id >= 0)
        tl->params.recv_id_cb(tl->params.recv_arg, src, (unsigned)id, body,
                              len);
    else
        tl->params.recv_cb(tl->params.recv_arg, src, body, len);
}

/* Keep the body of a frame that arrived before its predecessors, sorted
 * by seq. */
static void stash_frame(gv_tl_t *tl, int src, uint32_t seq, int32_t id,
                        unsigned flags, const uint8_t *body, size_t len)
{
    ofi_t        *o = tl->priv;
    ofi_peer_t   *p = &o->peers[src];
    ofi_stash_t **pp, *s;

    for (pp = &p->stash; *pp != NULL; pp = &(*pp)->next) {
        int32_t d = (int32_t)((*pp)->seq - seq);
        if (d == 0) {
            o->n_bad++;
            gv_warn("ofi: rank %d sent seq %u twice; dropped", src, seq);
            return;
        }
        if (d > 0)
            break;
    }
    if (o->stash_bytes + len > OFI_STASH_MAX) {
        gv__peer_failed(src, "ofi: rank %d: %zu bytes wait for a missing "
                        "message (seq %u); giving up", src, o->stash_bytes,
                        p->rx_seq);
        return;
    }
    s       = gv_malloc(sizeof(*s) + len);
    s->seq   = seq;
    s->id    = id;
    s->flags = flags;
    s->len   = len;
    memcpy(s->data, body, len);
    s->next = *pp;
    *pp     = s;
    o->stash_bytes += len;
    o->n_reordered++;
}

static void send_grant(gv_tl_t *tl, int dst);

/* A grant from @a src: it has taken @a taken of our frames so far. */
static void grant_recv(gv_tl_t *tl, uint32_t src, uint32_t taken,
                       size_t len, int large)
{
    ofi_t      *o = tl->priv;
    ofi_peer_t *p;

    if (large || (len != OFI_WIRE_HDR) || (src >= (uint32_t)tl->size) ||
        ((int)src == tl->rank)) {
        o->n_bad++;
        gv_warn("ofi: dropped a malformed grant (%zu bytes, rank %u)", len,
                src);
        return;
    }
    p = &o->peers[src];
    /* Counts only grow, and never past what we sent. */
    if (((int32_t)(taken - p->tx_taken) < 0) ||
        ((int32_t)(p->tx_seq - taken) < 0)) {
        o->n_bad++;
        gv_warn("ofi: dropped a grant from rank %u for %u frames (sent %u, "
                "granted %u before)", src, taken, p->tx_seq, p->tx_taken);
        return;
    }
    p->tx_taken = taken;
}

/* One more frame from @a src is off our queue: return credit once a
 * quarter of a window is taken. */
static void frame_taken(gv_tl_t *tl, int src)
{
    ofi_t      *o = tl->priv;
    ofi_peer_t *p = &o->peers[src];

    if (o->credits == 0)
        return;
    p->rx_taken++;
    if (!p->grant_due && (p->rx_taken - p->rx_granted >= o->grant_every))
        send_grant(tl, src);
}

/* Bytes 8..14 of a frame of at least OFI_WIRE_HDR bytes hold this job's
 * key: one masked 64-bit compare (byte 15 is left out). */
static inline int frame_key_ok(const ofi_t *o, const uint8_t *frame)
{
    uint64_t w;

    memcpy(&w, frame + 8, 8);
    return ((w ^ o->tag_word) & o->tag_mask) == 0;
}

/* A part of a split message from @a src, next in its sequence (see
 * ofi_take). A part that does not fit the message in progress is dropped
 * without taking its place in the sequence, so that the frame its sender
 * really sent with that seq is still taken. Returns 0 for a dropped one. */
static int __attribute__((noinline))
take_part(gv_tl_t *tl, int src, ofi_peer_t *p, uint32_t seq, unsigned flags,
          int32_t id, const uint8_t *body, size_t len)
{
    ofi_t       *o = tl->priv;
    ofi_split_t *sp;
    size_t       have;

    if ((flags & OFI_CONT) && !p->msg_on) {
        o->n_bad++;
        gv_warn("ofi: dropped a continuation frame from rank %d (seq %u) "
                "without a message in progress", src, seq);
        return 0;
    }
    if (!(flags & OFI_CONT) && p->msg_on) {
        o->n_bad++;
        gv_warn("ofi: dropped a frame from rank %d (seq %u) in the middle "
                "of its %zu-byte message", src, seq, o->splits[src].msg_len);
        return 0;
    }
    /* A continuation passed the first check, so a message is in progress
     * and o->splits exists (split_max > 0). */
    have = (flags & OFI_CONT) ? o->splits[src].msg_len : 0;
    if ((o->split_max == 0) || (len > o->split_max - have)) {
        o->n_bad++;
        gv_warn("ofi: dropped a frame from rank %d (seq %u): its message "
                "would be longer than %zu bytes", src, seq, o->split_max);
        return 0;
    }
    sp = &o->splits[src];
    if (!(flags & OFI_CONT)) {
        if (sp->msg == NULL)
            sp->msg = gv_malloc(o->split_max);
        p->msg_on  = 1;
        sp->msg_id = id;
    }
    memcpy(sp->msg + have, body, len);
    sp->msg_len = have + len;
    p->rx_seq++;
    if (!(flags & OFI_MORE)) {
        p->msg_on   = 0;
        sp->msg_len = 0;
        deliver(tl, src, sp->msg_id, sp->msg, have + len);
    }
    return 1;
}

/* The frame next in @a src's sequence: delivered, or kept as a part of a
 * split message. Returns 0 if it was dropped (take_part). */
static inline int ofi_take(gv_tl_t *tl, int src, ofi_peer_t *p, uint32_t seq,
                           unsigned flags, int32_t id, const uint8_t *body,
                           size_t len)
{
    if ((flags != 0) || p->msg_on)
        return take_part(tl, src, p, seq, flags, id, body, len);
    p->rx_seq++;
    deliver(tl, src, id, body, len);
    return 1;
}

/* A frame from a tagged buffer (large) or a multi-receive or ring one. */
static void __attribute__((noinline))
handle_frame(gv_tl_t *tl, const uint8_t *frame, size_t len, int large)
{
    ofi_t         *o = tl->priv;
    uint32_t       src, seq;
    size_t         skip;
    const uint8_t *body;
    ofi_peer_t    *p;
    int32_t        d, id = -1;
    int            idf;
    unsigned       flags;

    if ((len < OFI_WIRE_HDR) || (len > o->max_frame)) {
        o->n_bad++;
        gv_warn("ofi: dropped a %zu-byte frame (frames are %d to %zu bytes "
                "long)", len, OFI_WIRE_HDR, o->max_frame);
        return;
    }
    memcpy(&src, frame, 4);
    memcpy(&seq, frame + 4, 4);
    if (!frame_key_ok(o, frame)) {
        o->n_bad++;
        gv_warn("ofi: dropped a %zu-byte frame without this job's key", len);
        return;
    }
    if (frame[15] == OFI_GRANT) {
        grant_recv(tl, src, seq, len, large);
        return;
    }
    /* Byte 15 counts zeros: after the frame in a multi-receive or ring
     * buffer (keeping the next frame aligned), before the upper header in
     * a large one (placing the payload on a cache line). In a frame that
     * is not large, OFI_IDF marks an id frame (am_send_id): an 8-byte
     * word with the upper layer's id, then the payload; OFI_MORE and
     * OFI_CONT a part of a split message (send_split), the id word in its
     * first part, the padding in its last. */
    idf   = !large && (frame[15] & OFI_IDF);
    flags = large ? 0 : (frame[15] & (OFI_MORE | OFI_CONT));
    skip  = large ? frame[15]
                  : (frame[15] & ~(unsigned)(OFI_IDF | OFI_MORE | OFI_CONT));
    if ((skip >= (large ? OFI_RX_ALIGN : 8)) ||
        (skip > len - OFI_WIRE_HDR)) {
        o->n_bad++;
        gv_warn("ofi: dropped a %zu-byte frame with %zu bytes of padding",
                len, skip);
        return;
    }
    if ((flags & OFI_MORE) && (skip != 0)) {
        o->n_bad++;
        gv_warn("ofi: dropped a %zu-byte part frame with %zu bytes of "
                "padding (only a message's last frame has any)", len, skip);
        return;
    }
    if ((flags & OFI_CONT) && idf) {
        o->n_bad++;
        gv_warn("ofi: dropped a %zu-byte continuation frame marked as an id "
                "frame", len);
        return;
    }
    body = frame + OFI_WIRE_HDR + (large ? skip : 0);
    len -= OFI_WIRE_HDR + skip;
    if (idf) {
        uint64_t w = UINT64_MAX;

        if (len >= OFI_ID_WORD)
            memcpy(&w, body, OFI_ID_WORD);
        if (w > 0xffffu) {
            o->n_bad++;
            gv_warn("ofi: dropped a %zu-byte id frame without a valid id "
                    "(ids have 16 bits)", len + OFI_WIRE_HDR + skip);
            return;
        }
        id = (int32_t)w;
        body += OFI_ID_WORD;
        len -= OFI_ID_WORD;
    }
    if ((src >= (uint32_t)tl->size) || ((int)src == tl->rank)) {
        o->n_bad++;
        gv_warn("ofi: dropped a frame from invalid rank %u", src);
        return;
    }
    p = &o->peers[src];
    d = (int32_t)(seq - p->rx_seq);
    if (d < 0) {
        o->n_bad++;
        gv_warn("ofi: dropped a stale frame from rank %u (seq %u, "
                "expected %u)", src, seq, p->rx_seq);
        return;
    }
    /* A real frame is ahead by at most what its sender has in flight
     * (credits, large frames): far less than the window. */
    if (d >= OFI_RX_WINDOW) {
        o->n_bad++;
        gv_warn("ofi: dropped a frame from rank %u too far ahead (seq %u, "
                "expected %u)", src, seq, p->rx_seq);
        return;
    }
    if (d > 0) {
        o->n_rx++;
        frame_taken(tl, (int)src);
        stash_frame(tl, (int)src, seq, id, flags, body, len);
        return;
    }
    /* Only frames its sender really sent count towards the credit we
     * grant it. */
    if (!ofi_take(tl, (int)src, p, seq, flags, id, body, len))
        return;
    o->n_rx++;
    frame_taken(tl, (int)src);
    while ((p->stash != NULL) && (p->stash->seq == p->rx_seq)) {
        ofi_stash_t *s = p->stash;
        p->stash = s->next;
        o->stash_bytes -= s->len;
        /* A stashed frame was counted and credited when it was stashed,
         * even one that take_part() now drops: one is dropped here only
         * after a forgery with the job's key (a seq ahead, or a first
         * part that left a message in progress), and then the sender's
         * real frames may be among them. */
        ofi_take(tl, (int)src, p, s->seq, s->flags, s->id, s->data, s->len);
        gv_free(s);
    }
}

/* --- completions -------------------------------------------------------- */

/* One-sided op number @a rseq to @a dst completed. */
static void flushes_count(ofi_t *o, int dst, uint64_t rseq)
{
    ofi_flush_t **pp = &o->flushes, *f;

    while ((f = *pp) != NULL) {
        if (((f->dst < 0) || (f->dst == dst)) && (rseq < f->before) &&
            (--f->remaining == 0)) {
            *pp = f->next;
            f->req->cb(f->req, GV_OK);
            gv_free(f);
        } else {
            pp = &f->next;
        }
    }
}

static void op_complete(ofi_t *o, ofi_op_t *op, gv_status_t status)
{
    gv_req_t *req  = op->req;
    int       rma  = (op->ctx.kind == OFI_CTX_RMA);
    int       dst  = op->dst;
    uint64_t  rseq = op->rseq;

    if (rma) {
        if ((status == GV_OK) && (op->result_p != NULL))
            *op->result_p = op->result;
        o->peers[dst].outstanding--;
        o->total_outstanding--;
    }
    op_put(o, op);
    if (req != NULL)
        req->cb(req, status);
    if (rma && (o->flushes != NULL))
        flushes_count(o, dst, rseq);
}

static int is_peer_error(int err)
{
    return (err == FI_ECONNREFUSED) || (err == FI_ECONNRESET) ||
           (err == FI_EHOSTUNREACH) || (err == FI_ENOTCONN) ||
           (err == FI_ECONNABORTED) || (err == FI_ETIMEDOUT) ||
           (err == FI_EIO) || (err == FI_EHOSTDOWN) ||
           (err == FI_ENETUNREACH) || (err == FI_ENETDOWN);
}

static int is_rbuf(const ofi_ctx_t *ctx)
{
    return (ctx->kind == OFI_CTX_RBUF) || (ctx->kind == OFI_CTX_LBUF);
}

/* Ring and tagged buffers hold one frame and are consumed by any
 * completion; a multi-receive buffer only when the provider says it
 * released it. */
static int rbuf_released(const ofi_t *o, const ofi_rbuf_t *rb,
                         uint64_t flags)
{
    return (rb->ctx.kind == OFI_CTX_LBUF) || !o->multi ||
           (flags & FI_MULTI_RECV);
}

static void handle_cq_error(gv_tl_t *tl)
{
    ofi_t               *o   = tl->priv;
    struct fi_cq_err_entry err = {0};
    char                 buf[256];
    const char          *pstr;
    ofi_ctx_t           *ctx;
    ssize_t              ret;

    ret = fi_cq_readerr(o->cq, &err, 0);
    if (ret < 0)
        return;
    ctx  = err.op_context;
    pstr = fi_cq_strerror(o->cq, err.prov_errno, err.err_data, buf,
                          sizeof(buf));
    if ((ctx != NULL) && is_rbuf(ctx)) {
        ofi_rbuf_t *rb = (ofi_rbuf_t *)ctx;
        if (err.err != FI_ECANCELED) {
            /* e.g. FI_ETRUNC: a tagged frame larger than max_frame. */
            o->n_bad++;
            gv_warn("ofi: provider %s: a receive failed: %s (%s)",
                    prov_name(o), fi_strerror(err.err), pstr ? pstr : "");
        }
        if (rbuf_released(o, rb, err.flags)) {
            rb->posted = 0;
            if (!gv__ctx.finalizing)
                rbuf_post(o, rb);
        }
        return;
    }
    if (ctx == NULL) {
        gv_error("ofi: provider %s: completion error without a context: "
                 "%s (%s)", prov_name(o), fi_strerror(err.err),
                 pstr ? pstr : "");
        return;
    }
    {
        ofi_op_t   *op = (ofi_op_t *)ctx;
        gv_status_t status;

        if (err.err == FI_ECANCELED) {
            status = GV_ERR_CANCELED;
        } else if (is_peer_error(err.err)) {
            gv__peer_failed(op->dst, "ofi: provider %s: %s to rank %d "
                            "failed: %s (%s)", prov_name(o),
                            (op->ctx.kind == OFI_CTX_SEND) ? "send"
                                                           : "one-sided op",
                            op->dst, fi_strerror(err.err), pstr ? pstr : "");
            status = GV_ERR_UNREACHABLE;
        } else {
            gv_error("ofi: provider %s: %s to rank %d failed: %s (%s)",
                     prov_name(o),
                     (op->ctx.kind == OFI_CTX_SEND) ? "send" : "one-sided op",
                     op->dst, fi_strerror(err.err), pstr ? pstr : "");
            status = GV_ERR_IO;
        }
        op_complete(o, op, status);
    }
}

/* The common frame, taken here without handle_frame()'s call and its
 * branches for the rarer kinds: an id frame (a request or a reply) from a
 * multi-receive or ring buffer, of this job, from a peer, next in its
 * sequence with nothing stashed, its id in 16 bits and its payload
 * aligned. The checks are handle_frame()'s; 0 (nothing taken) sends
 * anything else there, which says what was wrong with it. */
static inline int frame_fast(gv_tl_t *tl, ofi_t *o, const uint8_t *frame,
                             size_t len)
{
    uint64_t    id;
    uint32_t    src, seq;
    unsigned    pad;
    ofi_peer_t *p;

    if ((len < OFI_WIRE_HDR + OFI_ID_WORD) || (len > o->max_frame))
        return 0;
    pad = frame[15];
    if (!frame_key_ok(o, frame) || ((pad & ~7u) != OFI_IDF))
        return 0;
    pad &= 7u;
    len -= OFI_WIRE_HDR + OFI_ID_WORD;
    memcpy(&src, frame, 4);
    memcpy(&seq, frame + 4, 4);
    memcpy(&id, frame + OFI_WIRE_HDR, 8);
    if ((pad > len) || (src >= (uint32_t)tl->size) ||
        ((int)src == tl->rank) || (id > 0xffffu) ||
        (((uintptr_t)frame & 7) != 0))
        return 0;
    p = &o->peers[src];
    if ((seq != p->rx_seq) || (p->stash != NULL) || p->msg_on)
        return 0;
    p->rx_seq++;
    o->n_rx++;
    frame_taken(tl, (int)src);
    tl->params.recv_id_cb(tl->params.recv_arg, (int)src, (unsigned)id,
                          frame + OFI_WIRE_HDR + OFI_ID_WORD, len - pad);
    return 1;
}

static void handle_entries(gv_tl_t *tl, struct fi_cq_data_entry *ent,
                           size_t n)
{
    ofi_t *o = tl->priv;
    size_t i;

    for (i = 0; i < n; i++) {
        ofi_ctx_t *ctx = ent[i].op_context;
        if (is_rbuf(ctx)) {
            ofi_rbuf_t *rb = (ofi_rbuf_t *)ctx;
            /* The entry's buf is defined for multi-receive buffers only;
             * every other buffer holds its one frame at its start. */
            int large = (ctx->kind == OFI_CTX_LBUF);
            if ((ent[i].flags & FI_RECV) && (ent[i].len > 0)) {
                const uint8_t *frame = (o->multi && !large)
                                           ? ent[i].buf
                                           : (const uint8_t *)rb->base;
                if (large || !frame_fast(tl, o, frame, ent[i].len))
                    handle_frame(tl, frame, ent[i].len, large);
            }
            if (rbuf_released(o, rb, ent[i].flags)) {
                rb->posted = 0;
                rbuf_post(o, rb);
            }
        } else {
            op_complete(o, (ofi_op_t *)ctx, GV_OK);
        }
    }
}

static gv_status_t send_owed(gv_tl_t *tl, int dst);
static void       owed_watch(gv_tl_t *tl);

static unsigned ofi_progress(gv_tl_t *tl)
{
    ofi_t                  *o = tl->priv;
    struct fi_cq_data_entry ent[OFI_CQ_BATCH];
    unsigned                events = 0;
    ssize_t                 n;
    int                     round;

    if (o->npend > 0) {
        /* Completions wait() read while it blocked. */
        size_t np = o->npend;
        memcpy(ent, o->pend, np * sizeof(ent[0]));
        o->npend = 0;
        handle_entries(tl, ent, np);
        events += (unsigned)np;
    }
    for (round = 0; round < 4; round++) {
        n = fi_cq_read(o->cq, ent, OFI_CQ_BATCH);
        if (n == -FI_EAGAIN)
            break;
        if (n == -FI_EAVAIL) {
            handle_cq_error(tl);
            events++;
            continue;
        }
        if (n < 0) {
            gv_error("ofi: provider %s: fi_cq_read failed: %s", prov_name(o),
                     fi_strerror((int)-n));
            break;
        }
        handle_entries(tl, ent, (size_t)n);
        events += (unsigned)n;
        if (n < OFI_CQ_BATCH)
            break;
    }
    if (events > 0)
        o->idle_waits = 0;
    if (o->ngrant_due > 0) {
        int k;
        for (k = 0; (k < tl->size) && (o->ngrant_due > 0); k++)
            if (o->peers[k].grant_due)
                send_grant(tl, k);
    }
    if (o->nowed > 0) {
        int k;
        for (k = 0; (k < tl->size) && (o->nowed > 0); k++)
            if (o->peers[k].owing && (send_owed(tl, k) == GV_OK))
                events++;
        /* A clock read per poll would cost more than the poll while
         * sends meet EAGAIN: look every 256th. */
        if ((o->nowed > 0) && ((++o->owed_polls & 255) == 0))
            owed_watch(tl);
    }
    /* A buffer whose repost met -FI_EAGAIN is retried here. */
    if (o->nrbuf_unposted > 0) {
        size_t k;
        o->nrbuf_unposted = 0;
        for (k = 0; k < o->nrbuf + o->nlbuf; k++)
            if (!o->rbufs[k].posted)
                rbuf_post(o, &o->rbufs[k]);
    }
    return events;
}

/* --- messages ----------------------------------------------------------- */

static void wire_hdr(const gv_tl_t *tl, uint8_t *w, uint32_t seq,
                     size_t pad)
{
    const ofi_t *o   = tl->priv;
    uint32_t     src = (uint32_t)tl->rank;

    memcpy(w, &src, 4);
    memcpy(w + 4, &seq, 4);
    memcpy(w + 8, o->tag, OFI_TAG_LEN);
    w[15] = (uint8_t)pad;
}

/* Tell @a dst how many of its frames we have taken; on EAGAIN progress
 * tries again. */
static void send_grant(gv_tl_t *tl, int dst)
{
    ofi_t      *o = tl->priv;
    ofi_peer_t *p = &o->peers[dst];
    uint8_t     w[OFI_WIRE_HDR];
    ssize_t     ret;

    wire_hdr(tl, w, p->rx_taken, OFI_GRANT);
    ret = fi_inject(o->ep, w, sizeof(w), p->addr);
    if (ret == 0) {
        p->rx_granted = p->rx_taken;
        o->n_grants++;
        if (p->grant_due) {
            p->grant_due = 0;
            o->ngrant_due--;
        }
        return;
    }
    if (ret != -FI_EAGAIN) {
        /* At finalize a peer may be gone after its last frame: no news. */
        if (!gv__ctx.finalizing)
            post_error(o, dst, "fi_inject (grant)", ret);
        return;
    }
    if (!p->grant_due) {
        p->grant_due = 1;
        o->ngrant_due++;
    }
}

/* Out of credit towards @a p: it has not taken enough of our frames. */
static inline int credit_stalled(ofi_t *o, const ofi_peer_t *p)
{
    if ((o->credits != 0) && (p->tx_seq - p->tx_taken >= o->credits)) {
        o->n_credit_stalls++;
        return 1;
    }
    return 0;
}

/* A whole frame of at most inject_size bytes, copied by the provider. */
static inline gv_status_t inject_frame(ofi_t *o, ofi_peer_t *p, int dst,
                                       const void *frame, size_t padded)
{
    ssize_t ret = fi_inject(o->ep, frame, padded, p->addr);

    if (ret != 0)
        return post_error(o, dst, "fi_inject", ret);
    p->tx_seq++;
    o->n_tx++;
    return GV_OK;
}

/* Bytes [off, off + n) of @a a followed by @a b, zeros past their end. */
static void gather(uint8_t *to, const uint8_t *a, size_t alen,
                   const uint8_t *b, size_t blen, size_t off, size_t n)
{
    size_t c;

    if (off < alen) {
        c = (alen - off < n) ? alen - off : n;
        memcpy(to, a + off, c);
        to += c;
        n -= c;
        off = 0;
    } else {
        off -= alen;
    }
    if ((n > 0) && (off < blen)) {
        c = (blen - off < n) ? blen - off : n;
        memcpy(to, b + off, c);
        to += c;
        n -= c;
    }
    memset(to, 0, n);
}

/* One part of a split message: our header with @a flags, then bytes
 * [off, off + n) of @a a and @a b, injected. */
static ssize_t inject_part(gv_tl_t *tl, ofi_t *o, ofi_peer_t *p,
                           unsigned flags, const void *a, size_t alen,
                           const void *b, size_t blen, size_t off, size_t n)
{
    uint8_t part[OFI_WIRE_HDR + o->split_chunk];
    ssize_t ret;

    wire_hdr(tl, part, p->tx_seq, flags);
    gather(part + OFI_WIRE_HDR, a, alen, b, blen, off, n);
    ret = fi_inject(o->ep, part, OFI_WIRE_HDR + n, p->addr);
    if (ret == 0) {
        p->tx_seq++;
        o->n_tx++;
    }
    return ret;
}

/* A part after a message's first failed (not EAGAIN): the receiver holds
 * the parts before it and will take nothing else from us, so the peer is
 * as good as gone. */
static gv_status_t part_failed(ofi_t *o, int dst, ssize_t ret)
{
    gv__peer_failed(dst, "ofi: provider %s: a part of a split message to "
                    "rank %d failed: %s", prov_name(o), dst,
                    fi_strerror((int)-ret));
    return GV_ERR_UNREACHABLE;
}

/* Inject what is owed to @a dst (send_split); on EAGAIN progress tries
 * again. GV_OK once nothing is owed. */
static gv_status_t send_owed(gv_tl_t *tl, int dst)
{
    ofi_t       *o  = tl->priv;
    ofi_peer_t  *p  = &o->peers[dst];
    ofi_split_t *sp = &o->splits[dst];
    size_t       was = sp->owed_off;

    while (sp->owed_off < sp->owed_len) {
        size_t   n    = sp->owed_len - sp->owed_off;
        unsigned more = (n > o->split_chunk);
        ssize_t  ret;

        if (more)
            n = o->split_chunk;
        ret = o->test_owe_stuck
                  ? -FI_EAGAIN
                  : inject_part(tl, o, p,
                                OFI_CONT | (more ? OFI_MORE
                                                 : (unsigned)sp->owed_pad),
                                sp->owed + sp->owed_off, n, NULL, 0, 0, n);
        if (ret == -FI_EAGAIN) {
            if (sp->owed_off != was)
                sp->owed_ns = gv__now_ns();
            return GV_ERR_NO_RESOURCE;
        }
        if (ret != 0) {
            gv_free(sp->owed);
            sp->owed = NULL;
            p->owing = 0;
            o->nowed--;
            return part_failed(o, dst, ret);
        }
        sp->owed_off += n;
    }
    gv_free(sp->owed);
    sp->owed = NULL;
    p->owing = 0;
    o->nowed--;
    return GV_OK;
}

/* The AM layer counted a split message as sent once its first part went,
 * so its watchdog does not see the parts we still owe: a receiver that
 * takes nothing more (stopped, stuck, its queue full for ever) would leave
 * a sender that sends it nothing else waiting without a word. Declare
 * such a rank failed once no part has gone to it for GV_TIMEOUT_S of
 * polling; as the AM layer's watchdog does, a gap of GV__WATCH_GAP_NS
 * between looks (this rank computed; 256 polls take far less, even
 * napping) starts the clocks again. The message starts as the AM layer's
 * does, though the rank took the message's first part. */
static void __attribute__((noinline)) owed_watch(gv_tl_t *tl)
{
    ofi_t   *o   = tl->priv;
    uint64_t now = gv__now_ns();
    int      k, restart = (now - o->owed_look_ns > GV__WATCH_GAP_NS);

    o->owed_look_ns = now;
    for (k = 0; k < tl->size; k++) {
        ofi_split_t *sp;

        if (!o->peers[k].owing)
            continue;
        sp = &o->splits[k];
        if (restart)
            sp->owed_ns = now;
        else if (now - sp->owed_ns > gv__timeout_ns())
            gv__peer_failed(k, "rank %d took none of the messages sent to "
                            "it for %llu s (GV_TIMEOUT_S): ofi (provider "
                            "%s) still owes it the last %zu bytes of a "
                            "split message. It is stopped or stuck, or ran "
                            "that long without calling into Grapevine", k,
                            (unsigned long long)gv__env.TIMEOUT_S,
                            prov_name(o), sp->owed_len - sp->owed_off);
    }
}

/* A frame past inject_size whose message (@a a, then @a b) is at most
 * split_max bytes, padded, goes out as parts of split_chunk bytes, each
 * injected: over shm a frame past inject_size would take the CMA path, a
 * system call and a reply from the receiver (about 5 us a hop here,
 * against 0.6 us for an injected 4 KiB), and the receiver copies the
 * parts together (take_part). Each part takes a seq and a credit. A part
 * after the first that meets EAGAIN is copied and owed: progress injects
 * it, and until then sends to @a dst are refused, so that order holds.
 * @a first is OFI_IDF for an id frame. Never GV_INPROGRESS. */
static gv_status_t send_split(gv_tl_t *tl, ofi_t *o, ofi_peer_t *p, int dst,
                              unsigned first, const void *a, size_t alen,
                              const void *b, size_t blen)
{
    size_t   body = alen + blen, padded = (body + 7) & ~(size_t)7;
    size_t   chunk = o->split_chunk, off, n;
    uint32_t k = (uint32_t)((padded + chunk - 1) / chunk), i;
    ssize_t  ret;
    ofi_split_t *sp;

    if ((o->credits != 0) && (p->tx_seq + k - p->tx_taken > o->credits)) {
        o->n_credit_stalls++;
        return GV_ERR_NO_RESOURCE;
    }
    for (i = 0, off = 0; i < k; i++, off += n) {
        n = (padded - off < chunk) ? padded - off : chunk;
        if ((i == 1) && (o->test_owe > 0)) {
            o->test_owe--; /* as if the second part met EAGAIN */
            ret = -FI_EAGAIN;
            o->n_eagain--; /* ... which it did not */
        } else {
            ret = inject_part(tl, o, p,
                              ((i == 0) ? first : OFI_CONT) |
                                  ((i + 1 < k) ? OFI_MORE
                                               : (unsigned)(padded - body)),
                              a, alen, b, blen, off, n);
        }
        if (ret == 0)
            continue;
        if (i == 0)
            return post_error(o, dst, "fi_inject", ret);
        if (ret != -FI_EAGAIN)
            return part_failed(o, dst, ret);
        sp           = &o->splits[dst];
        sp->owed     = gv_malloc(padded - off);
        gather(sp->owed, a, alen, b, blen, off, padded - off);
        sp->owed_len = padded - off;
        sp->owed_off = 0;
        sp->owed_pad = padded - body;
        sp->owed_ns  = gv__now_ns();
        p->owing     = 1;
        o->nowed++;
        o->n_owed++;
        o->n_eagain++;
        break;
    }
    o->n_split++;
    return GV_OK;
}

static gv_status_t ofi_am_send(gv_tl_t *tl, int dst, const void *hdr,
                               size_t hdr_len, const void *payload,
                               size_t len, gv_req_t *req)
{
    ofi_t       *o = tl->priv;
    ofi_peer_t  *p;
    size_t       total = OFI_WIRE_HDR + hdr_len + len;
    size_t       padded = (total + 7) & ~(size_t)7;
    size_t       pad    = padded - total;
    size_t       lead   = 0;
    int          large;
    ofi_op_t    *op;
    struct iovec iov[3];
    void        *desc[3] = {NULL, NULL, NULL};
    size_t       niov;
    ssize_t      ret;

    if ((dst < 0) || (dst >= tl->size) || (dst == tl->rank) ||
        (hdr_len > GV_TL_MAX_HDR) || (hdr_len + len > tl->attr.max_msg) ||
        (hdr_len + len == 0)) /* an empty frame means "bye" */
        return GV_ERR_INVALID;
    p = &o->peers[dst];
    if (credit_stalled(o, p) || p->owing)
        return GV_ERR_NO_RESOURCE;

    if (padded <= o->inject_size) {
        uint8_t frame[padded];
        wire_hdr(tl, frame, p->tx_seq, pad);
        memcpy(frame + OFI_WIRE_HDR, hdr, hdr_len);
        if (len > 0)
            memcpy(frame + OFI_WIRE_HDR + hdr_len, payload, len);
        memset(frame + total, 0, pad);
        return inject_frame(o, p, dst, frame, padded);
    }
    if (padded - OFI_WIRE_HDR <= o->split_max)
        return send_split(tl, o, p, dst, 0, hdr, hdr_len, payload, len);

    /* A large frame has its buffer to itself: no pad after it, but zeros
     * before the upper header, so that the payload lands on a cache line
     * (the provider's copy into an unaligned destination is slower). */
    large = o->tagged && (padded > o->small_max);
    if (large) {
        lead   = (OFI_RX_ALIGN - OFI_WIRE_HDR - hdr_len) & ~(size_t)7;
        total += lead;
        padded = total;
        pad    = 0;
    }
    op = op_get(o, OFI_CTX_SEND, dst, req);
    if (op == NULL)
        return GV_ERR_NO_RESOURCE;
    wire_hdr(tl, op->wire, p->tx_seq, large ? lead : pad);
    memset(op->wire + OFI_WIRE_HDR, 0, lead);
    memcpy(op->wire + OFI_WIRE_HDR + lead, hdr, hdr_len);
    iov[0].iov_base = op->wire;
    iov[0].iov_len  = OFI_WIRE_HDR + lead + hdr_len;
    desc[0]         = o->pool_desc;
    niov            = 1;
    if (len == 0) {
        /* The pad follows the header in op->wire. */
        memset(op->wire + total, 0, pad);
        iov[0].iov_len = padded;
    } else if ((req == NULL) || (o->iov_limit < 3)) {
        /* Without a request the caller reuses its buffer on return, and a
         * provider with short iovs wants one contiguous frame: copy. */
        op->bounce = gv_malloc(padded);
        memcpy(op->bounce, op->wire, iov[0].iov_len);
        memcpy((uint8_t *)op->bounce + iov[0].iov_len, payload, len);
        memset((uint8_t *)op->bounce + total, 0, pad);
        iov[0].iov_base = op->bounce;
        iov[0].iov_len  = padded;
        desc[0]         = NULL;
        if (local_desc(o, op, op->bounce, padded, &desc[0]) != 0) {
            op_put(o, op);
            return GV_ERR_IO;
        }
    } else {
        iov[1].iov_base = (void *)payload;
        iov[1].iov_len  = len;
        if (local_desc(o, op, payload, len, &desc[1]) != 0) {
            op_put(o, op);
            return GV_ERR_IO;
        }
        niov = 2;
        if (pad > 0) {
            iov[2].iov_base = (void *)op->zeros;
            iov[2].iov_len  = pad;
            desc[2]         = o->pool_desc;
            niov            = 3;
        }
    }
    if (large)
        ret = fi_tsendv(o->ep, iov, desc, niov, p->addr, OFI_LARGE_TAG,
                        &op->ctx.fctx);
    else
        ret = fi_sendv(o->ep, iov, desc, niov, p->addr, &op->ctx.fctx);
    if (ret != 0) {
        op_put(o, op);
        return post_error(o, dst, large ? "fi_tsendv" : "fi_sendv", ret);
    }
    p->tx_seq++;
    o->n_tx++;
    o->n_large += (uint64_t)large;
    if (req == NULL) {
        /* The frame is ours (bounce); complete silently. */
        return GV_OK;
    }
    return GV_INPROGRESS;
}

/* Build an id frame of @a padded bytes in @a frame and inject it. */
static inline gv_status_t id_frame_inject(gv_tl_t *tl, ofi_t *o,
                                          ofi_peer_t *p, int dst,
                                          uint64_t *frame, size_t total,
                                          size_t padded, uint16_t id,
                                          const void *payload, size_t len)
{
    uint64_t w = id;

    frame[padded / 8 - 1] = 0; /* the pad; all the rest is written */
    wire_hdr(tl, (uint8_t *)frame, p->tx_seq,
             OFI_IDF | (unsigned)(padded - total));
    memcpy((uint8_t *)frame + OFI_WIRE_HDR, &w, OFI_ID_WORD);
    gv__copy_small((uint8_t *)frame + OFI_WIRE_HDR + OFI_ID_WORD, payload,
                   len);
    return inject_frame(o, p, dst, frame, padded);
}

/* am_send_id: an id frame (our header with OFI_IDF, the id in an 8-byte
 * word, the payload, zeros to a multiple of 8) through fi_inject, built
 * on the stack, or past inject_size as a split message (max_inline leaves
 * room for the id word). Never GV_INPROGRESS. */
static gv_status_t ofi_am_send_id(gv_tl_t *tl, int dst, uint16_t id,
                                  const void *payload, size_t len)
{
    ofi_t      *o = tl->priv;
    ofi_peer_t *p;
    size_t      total = OFI_WIRE_HDR + OFI_ID_WORD + len;
    size_t      padded = (total + 7) & ~(size_t)7;

    if (__builtin_expect(((unsigned)dst >= (unsigned)tl->size) ||
                             (dst == tl->rank) ||
                             (len > tl->attr.max_inline), 0)) {
        gv_error("ofi: am_send_id to rank %d with %zu bytes: invalid (ranks "
                 "0..%d but this one, at most %zu bytes)", dst, len,
                 tl->size - 1, tl->attr.max_inline);
        return GV_ERR_INVALID;
    }
    p = &o->peers[dst];
    if (credit_stalled(o, p) || p->owing)
        return GV_ERR_NO_RESOURCE;
    if (padded <= 128) { /* requests and replies: no variable-length frame */
        uint64_t frame[16];

        return id_frame_inject(tl, o, p, dst, frame, total, padded, id,
                               payload, len);
    } else if ((padded > o->inject_size) && (o->split_max > 0)) {
        uint64_t w = id;

        return send_split(tl, o, p, dst, OFI_IDF, &w, OFI_ID_WORD, payload,
                          len);
    } else {
        uint64_t frame[padded / 8];

        return id_frame_inject(tl, o, p, dst, frame, total, padded, id,
                               payload, len);
    }
}

/* --- one-sided ---------------------------------------------------------- */

static gv_status_t check_range(gv_tl_t *tl, int dst, uint64_t off,
                               size_t len)
{
    ofi_t *o = tl->priv;
    if ((dst < 0) || (dst >= tl->size) || (off > o->heap_size) ||
        (len > o->heap_size - off))
        return GV_ERR_INVALID;
    return GV_OK;
}

static uint64_t raddr(const ofi_t *o, int dst, uint64_t off)
{
    return o->virt_addr ? o->peers[dst].rbase + off : off;
}

/* Account an issued one-sided op; it completes in op_complete. */
static gv_status_t rma_issued(ofi_t *o, ofi_op_t *op)
{
    o->peers[op->dst].outstanding++;
    o->total_outstanding++;
    op->rseq = o->rseq_next++;
    return (op->req != NULL) ? GV_INPROGRESS : GV_OK;
}

static gv_status_t ofi_put(gv_tl_t *tl, int dst, uint64_t off,
                           const void *buf, size_t len, gv_req_t *req)
{
    ofi_t          *o = tl->priv;
    ofi_op_t       *op;
    struct iovec    iov;
    struct fi_rma_iov rma;
    void           *desc = NULL;
    uint64_t        flags = FI_DELIVERY_COMPLETE | FI_COMPLETION;
    ssize_t         ret;
    gv_status_t     status = check_range(tl, dst, off, len);

    if (status != GV_OK)
        return status;
    if (len == 0)
        return GV_OK;
    op = op_get(o, OFI_CTX_RMA, dst, req);
    if (op == NULL)
        return GV_ERR_NO_RESOURCE;
    iov.iov_base = (void *)buf;
    iov.iov_len  = len;
    if (len <= o->inject_size) {
        /* The provider copies the source before returning. */
        flags |= FI_INJECT;
    } else if (req == NULL) {
        /* Nobody would tell the caller when the source is free again:
         * send from a copy. */
        op->bounce = gv_malloc(len);
        memcpy(op->bounce, buf, len);
        iov.iov_base = op->bounce;
    }
    if ((flags & FI_INJECT) == 0) {
        if (local_desc(o, op, iov.iov_base, len, &desc) != 0) {
            op_put(o, op);
            return GV_ERR_IO;
        }
    }
    rma.addr = raddr(o, dst, off);
    rma.len  = len;
    rma.key  = o->peers[dst].rkey;
    {
        struct fi_msg_rma msg = {
            .msg_iov       = &iov,
            .desc          = &desc,
            .iov_count     = 1,
            .addr          = o->peers[dst].addr,
            .rma_iov       = &rma,
            .rma_iov_count = 1,
            .context       = &op->ctx.fctx,
        };
        ret = fi_writemsg(o->ep, &msg, flags);
    }
    if (ret != 0) {
        op_put(o, op);
        return post_error(o, dst, "fi_writemsg", ret);
    }
    return rma_issued(o, op);
}

static gv_status_t ofi_get(gv_tl_t *tl, int dst, uint64_t off, void *buf,
                           size_t len, gv_req_t *req)
{
    ofi_t      *o = tl->priv;
    ofi_op_t   *op;
    void       *desc = NULL;
    ssize_t     ret;
    gv_status_t status = check_range(tl, dst, off, len);

    if (status != GV_OK)
        return status;
    if (len == 0)
        return GV_OK;
    op = op_get(o, OFI_CTX_RMA, dst, req);
    if (op == NULL)
        return GV_ERR_NO_RESOURCE;
    if (local_desc(o, op, buf, len, &desc) != 0) {
        op_put(o, op);
        return GV_ERR_IO;
    }
    ret = fi_read(o->ep, buf, len, desc, o->peers[dst].addr,
                  raddr(o, dst, off), o->peers[dst].rkey, &op->ctx.fctx);
    if (ret != 0) {
        op_put(o, op);
        return post_error(o, dst, "fi_read", ret);
    }
    return rma_issued(o, op);
}

static const char *amo_name[GV_TL_AMO_LAST] = {
    [GV_TL_AMO_ADD]   = "fi_atomic FI_SUM",
    [GV_TL_AMO_FADD]  = "fi_fetch_atomic FI_SUM",
    [GV_TL_AMO_CSWAP] = "fi_compare_atomic FI_CSWAP",
    [GV_TL_AMO_SWAP]  = "fi_fetch_atomic FI_ATOMIC_WRITE",
};

static gv_status_t ofi_atomic64(gv_tl_t *tl, gv_tl_amo_t amo, int dst,
                                uint64_t off, uint64_t value,
                                uint64_t compare, uint64_t *result_p,
                                gv_req_t *req)
{
    ofi_t            *o = tl->priv;
    ofi_op_t         *op;
    struct fi_ioc     ioc, cioc, rioc;
    struct fi_rma_ioc rioc_remote;
    void             *desc, *cdesc, *rdesc;
    ssize_t           ret;
    gv_status_t       status = check_range(tl, dst, off, 8);

    if ((status != GV_OK) || ((off & 7) != 0) || ((unsigned)amo >= GV_TL_AMO_LAST))
        return GV_ERR_INVALID;
    if (!o->amo_ok[amo]) {
        gv_error("ofi: provider %s does not support %s on FI_UINT64",
                 prov_name(o), amo_name[amo]);
        return GV_ERR_UNSUPPORTED;
    }
    op = op_get(o, OFI_CTX_RMA, dst, req);
    if (op == NULL)
        return GV_ERR_NO_RESOURCE;
    op->operand  = value;
    op->compare  = compare;
    op->result_p = result_p;
    /* Operand, compare value and result all live in the op, which is in
     * the registered pool. */
    desc = cdesc = rdesc = o->pool_desc;
    ioc.addr          = &op->operand;
    ioc.count         = 1;
    cioc.addr         = &op->compare;
    cioc.count        = 1;
    rioc.addr         = &op->result;
    rioc.count        = 1;
    rioc_remote.addr  = raddr(o, dst, off);
    rioc_remote.count = 1;
    rioc_remote.key   = o->peers[dst].rkey;
    {
        struct fi_msg_atomic msg = {
            .msg_iov       = &ioc,
            .desc          = &desc,
            .iov_count     = 1,
            .addr          = o->peers[dst].addr,
            .rma_iov       = &rioc_remote,
            .rma_iov_count = 1,
            .datatype      = FI_UINT64,
            .op            = FI_SUM,
            .context       = &op->ctx.fctx,
        };
        switch (amo) {
        case GV_TL_AMO_ADD:
            if (!o->dc_atomic_broken) {
                ret = fi_atomicmsg(o->ep, &msg,
                                   FI_DELIVERY_COMPLETE | FI_COMPLETION);
                break;
            }
            /* A fetching add completes only once the target applied it,
             * which is what flush needs; the old value is dropped. */
            ret = fi_fetch_atomicmsg(o->ep, &msg, &rioc, &rdesc, 1,
                                     FI_COMPLETION);
            break;
        case GV_TL_AMO_FADD:
            ret = fi_fetch_atomicmsg(o->ep, &msg, &rioc, &rdesc, 1,
                                     FI_COMPLETION);
            break;
        case GV_TL_AMO_SWAP:
            msg.op = FI_ATOMIC_WRITE;
            ret    = fi_fetch_atomicmsg(o->ep, &msg, &rioc, &rdesc, 1,
                                        FI_COMPLETION);
            break;
        case GV_TL_AMO_CSWAP:
        default:
            msg.op = FI_CSWAP;
            ret    = fi_compare_atomicmsg(o->ep, &msg, &cioc, &cdesc, 1,
                                          &rioc, &rdesc, 1, FI_COMPLETION);
            break;
        }
    }
    if (ret != 0) {
        op_put(o, op);
        return post_error(o, dst, amo_name[amo], ret);
    }
    return rma_issued(o, op);
}

static gv_status_t ofi_flush(gv_tl_t *tl, int dst, gv_req_t *req)
{
    ofi_t       *o = tl->priv;
    ofi_flush_t *f;
    size_t       n;

    if ((dst < -1) || (dst >= tl->size))
        return GV_ERR_INVALID;
    n = (dst < 0) ? o->total_outstanding : o->peers[dst].outstanding;
    if (n == 0)
        return GV_OK;
    if (req == NULL) {
        gv_error("ofi: flush with operations outstanding needs a request");
        return GV_ERR_INVALID;
    }
    f            = gv_malloc(sizeof(*f));
    f->dst       = dst;
    f->before    = o->rseq_next;
    f->remaining = n;
    f->req       = req;
    f->next      = o->flushes;
    o->flushes   = f;
    return GV_INPROGRESS;
}

/* --- wait --------------------------------------------------------------- */

static void ofi_wait(gv_tl_t *tl, unsigned timeout_us)
{
    ofi_t  *o = tl->priv;
    ssize_t n;

    if (o->wait_fd < 0) {
        /* No wait object (shm): GV_TL_CAP_WAIT is not advertised, but a
         * caller that calls anyway gets the core given away, briefly. */
        if (++o->idle_waits < 64)
            sched_yield();
        else
            usleep(timeout_us < 50 ? timeout_us : 50);
        return;
    }
    if (o->npend > 0)
        return;
    /* Block inside the provider. fi_trywait + poll on the CQ's fd is the
     * textbook way, but rxm's fi_trywait answers -FI_EAGAIN nearly always
     * on an idle endpoint (measured: 2 of ~10000 calls could block), so
     * the rank would spin. fi_cq_sread sleeps in the provider's wait set
     * (the sockets included) and runs its progress when woken. What it
     * reads is handled by the next progress(), so receive callbacks still
     * run from progress() only. Milliseconds are its granularity. */
    n = fi_cq_sread(o->cq, o->pend, OFI_CQ_BATCH, NULL,
                    (int)((timeout_us + 999) / 1000));
    o->n_blocked++;
    if (n > 0)
        o->npend = (size_t)n;
}

/* The host sleeps on the CQ's wait object (fi_control FI_GETWAIT), armed
 * with fi_trywait, which says -FI_EAGAIN while completions or provider
 * work wait (rxm over tcp says so often; the host then progresses and
 * arms again). Completions wait() read and progress() has not handled
 * count as pending too. */
static int ofi_wait_fd(gv_tl_t *tl)
{
    return ((ofi_t *)tl->priv)->wait_fd;
}

static gv_status_t ofi_arm(gv_tl_t *tl)
{
    ofi_t     *o = tl->priv;
    struct fid *fids[1];

    if (o->npend > 0)
        return GV_INPROGRESS;
    fids[0] = &o->cq->fid;
    return (fi_trywait(o->fabric, fids, 1) == FI_SUCCESS) ? GV_OK
                                                          : GV_INPROGRESS;
}

/* --- init / fini -------------------------------------------------------- */

static void close_fid(struct fid *fid, const char *what)
{
    int ret;
    if (fid == NULL)
        return;
    ret = fi_close(fid);
    if (ret != 0)
        gv_debug("ofi: closing the %s failed: %s", what, fi_strerror(-ret));
}

/* Release everything open_info and setup created, in reverse order. */
static void ofi_teardown(ofi_t *o)
{
    size_t i;

    close_fid(o->ep ? &o->ep->fid : NULL, "endpoint");
    /* Operations the endpoint still held are cancelled. */
    if (o->ops != NULL) {
        for (i = 0; i < o->nops; i++) {
            ofi_op_t *op = &o->ops[i];
            if (op->in_use) {
                gv_req_t *req = op->req;
                op_put(o, op);
                if (req != NULL)
                    req->cb(req, GV_ERR_CANCELED);
            }
        }
    }
    while (o->flushes != NULL) {
        ofi_flush_t *f = o->flushes;
        o->flushes     = f->next;
        f->req->cb(f->req, GV_ERR_CANCELED);
        gv_free(f);
    }
    close_fid(o->av ? &o->av->fid : NULL, "address vector");
    close_fid(o->cq ? &o->cq->fid : NULL, "completion queue");
    close_fid(o->heap_mr ? &o->heap_mr->fid : NULL, "heap region");
    close_fid(o->pool_mr ? &o->pool_mr->fid : NULL, "op pool region");
    close_fid(o->rbuf_mr ? &o->rbuf_mr->fid : NULL, "receive region");
    close_fid(o->domain ? &o->domain->fid : NULL, "domain");
    close_fid(o->fabric ? &o->fabric->fid : NULL, "fabric");
    o->ep      = NULL;
    o->av      = NULL;
    o->cq      = NULL;
    o->heap_mr = o->pool_mr = o->rbuf_mr = NULL;
    o->domain  = NULL;
    o->fabric  = NULL;
}

/* Multi-receive buffers need receive completions in order: a buffer's
 * release comes with the completion of the last frame placed in it, and
 * rxm (comp_order FI_ORDER_NONE) completes a frame that is still arriving
 * (segmented or rendezvous) after later ones, so the buffer came back
 * while the provider was still writing into it (seen: corrupt 30-70 KiB
 * frames in mr_alltoall). Such a provider gets the ring. FI_MULTI_RECV is
 * a secondary capability, reported whether the hints asked for it or not,
 * so OFI_USE_MULTI_RECV is checked here too. */
static int has_multi(const struct fi_info *info)
{
    return OFI_USE_MULTI_RECV && (info->caps & FI_MULTI_RECV) &&
           ((info->rx_attr->comp_order & FI_ORDER_STRICT) == FI_ORDER_STRICT);
}

/* The largest frame that goes to the multi-receive buffers or the ring;
 * with FI_TAGGED, larger ones (up to OFI_MAX_FRAME) go tagged. */
static size_t small_max_of(const struct fi_info *info)
{
    if (!has_multi(info))
        return OFI_RING_FRAME;
    return (info->caps & FI_TAGGED) ? OFI_LARGE_MIN : OFI_MAX_FRAME;
}

/* The CQ's wait object, from GV_OFI_WAIT (see "Waiting" above). */
static enum fi_wait_obj cq_wait_obj(const gv_tl_t *tl)
{
    switch (gv__env.OFI_WAIT) {
    case OFI_WAIT_FD: return FI_WAIT_FD;
    case OFI_WAIT_NONE: return FI_WAIT_NONE;
    default:
        return gv__boot_oversubscribed(tl->boot) ? FI_WAIT_FD : FI_WAIT_NONE;
    }
}

/* Open fabric, domain, CQ, AV and endpoint for one fi_info. Returns 0 or a
 * negative fi_errno; on failure the caller tears down. */
static int open_info(ofi_t *o, gv_tl_t *tl, struct fi_info *info)
{
    struct fi_cq_attr cq_attr = {0};
    struct fi_av_attr av_attr = {0};
    size_t            min_mr  = small_max_of(info);
    int               ret;

    o->info = info;
    ret = fi_fabric(info->fabric_attr, &o->fabric, NULL);
    if (ret != 0)
        return ret;
    ret = fi_domain(o->fabric, info, &o->domain, NULL);
    if (ret != 0)
        return ret;

    cq_attr.format   = FI_CQ_FORMAT_DATA;
    cq_attr.size     = info->tx_attr->size + info->rx_attr->size + 64;
    cq_attr.wait_obj = cq_wait_obj(tl);
    ret = fi_cq_open(o->domain, &cq_attr, &o->cq, NULL);
    if ((ret == 0) && (cq_attr.wait_obj == FI_WAIT_FD)) {
        ret = fi_control(&o->cq->fid, FI_GETWAIT, &o->wait_fd);
        if (ret != 0) {
            fi_close(&o->cq->fid);
            o->cq = NULL;
        }
    }
    if ((o->cq != NULL) && (cq_attr.wait_obj != FI_WAIT_FD)) {
        o->wait_fd = -1;
    } else if (o->cq == NULL) {
        gv_debug("ofi: provider %s has no fd wait object for its CQ",
                 info->fabric_attr->prov_name);
        o->wait_fd       = -1;
        cq_attr.wait_obj = FI_WAIT_NONE;
        ret = fi_cq_open(o->domain, &cq_attr, &o->cq, NULL);
        if (ret != 0)
            return ret;
    }

    av_attr.type  = FI_AV_TABLE;
    av_attr.count = (size_t)tl->size;
    ret = fi_av_open(o->domain, &av_attr, &o->av, NULL);
    if (ret != 0)
        return ret;

    ret = fi_endpoint(o->domain, info, &o->ep, NULL);
    if (ret != 0)
        return ret;
    ret = fi_ep_bind(o->ep, &o->av->fid, 0);
    if (ret != 0)
        return ret;
    ret = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV);
    if (ret != 0)
        return ret;
    ret = fi_enable(o->ep);
    if (ret != 0)
        return ret;
    if (!has_multi(info))
        return 0;
    /* After fi_enable: shm 1.17 dereferences its receive context, which
     * exists only once the endpoint is enabled. */
    return fi_setopt(&o->ep->fid, FI_OPT_ENDPOINT, FI_OPT_MIN_MULTI_RECV,
                     &min_mr, sizeof(min_mr));
}

/* Undo what a failed open_info(fi) opened, saying why at GV_LOG=debug. */
static void close_failed(ofi_t *o, struct fi_info *fi, const char *what,
                         int ret)
{
    gv_debug("ofi: provider %s (%s) %s: %s", fi->fabric_attr->prov_name,
             fi->domain_attr->name, what, fi_strerror(-ret));
    o->info = fi;
    ofi_teardown(o);
    o->info = NULL;
}

/* The names of the providers that offer reliable-datagram endpoints with
 * FI_MSG here, ", "-separated, for a message ("none" if none). */
static void rdm_providers(char *buf, size_t len)
{
    struct fi_info *hints = fi_allocinfo(), *list = NULL, *fi, *seen;
    size_t          off   = 0;

    snprintf(buf, len, "none");
    if (hints == NULL)
        return;
    hints->caps          = FI_MSG;
    hints->ep_attr->type = FI_EP_RDM;
    if (fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, hints, &list) == 0) {
        for (fi = list; (fi != NULL) && (off < len); fi = fi->next) {
            for (seen = list; (seen != fi) &&
                              (strcmp(seen->fabric_attr->prov_name,
                                      fi->fabric_attr->prov_name) != 0);
                 seen = seen->next)
                ;
            if (seen == fi)
                off += (size_t)snprintf(buf + off, len - off, "%s%s",
                                        (off > 0) ? ", " : "",
                                        fi->fabric_attr->prov_name);
        }
        fi_freeinfo(list);
    }
    fi_freeinfo(hints);
}

/* Pick and open a provider: walk the caps ladder, and for each step every
 * fi_info libfabric offers, until one opens. */
static gv_status_t choose_provider(ofi_t *o, gv_tl_t *tl)
{
    const size_t nsteps = sizeof(ofi_ladder) / sizeof(ofi_ladder[0]);
    const char  *want   = gv__env.OFI_PROVIDER;
    const char  *fi_env;
    char         have[256];
    size_t       try;
    int          ret = -FI_ENODATA;

    /* A job on one node: libfabric's tcp (under rxm) and sockets listen
     * on loopback only, unless the user chose an interface. They read
     * these variables when the first fi_getinfo loads them, below. */
    {
        static const char *const ifvars[] = {"FI_TCP_IFACE",
                                             "FI_SOCKETS_IFACE"};
        char   lo[IFNAMSIZ];
        size_t v;

        if (gv__tl_loopback_name(tl->boot, lo, sizeof(lo)))
            for (v = 0; v < sizeof(ifvars) / sizeof(ifvars[0]); v++)
                if ((getenv(ifvars[v]) == NULL) &&
                    (setenv(ifvars[v], lo, 0) == 0))
                    gv_debug("ofi: one node: %s=%s (set it to choose)",
                             ifvars[v], lo);
    }
    /* Every step first with send-after-send ordering, which spares the
     * reorder stage most of its work, then (a provider that cannot promise
     * it) without: the sequence numbers restore the order either way. Each
     * is asked first with FI_TAGGED (the large-frame path), then without. */
    for (try = 0; try < 4 * nsteps; try++) {
        size_t          step    = (try / 2) % nsteps;
        int             ordered = try < 2 * nsteps;
        int             tagged  = (try % 2) == 0;
        struct fi_info *hints, *list = NULL, *fi;

        if (!OFI_USE_MULTI_RECV && (ofi_ladder[step].caps & FI_MULTI_RECV))
            continue;
        if ((!OFI_USE_TAGGED || !gv__env.OFI_TAGGED) && tagged)
            continue;
        hints = fi_allocinfo();
        if (hints == NULL)
            return GV_ERR_NO_MEMORY;
        hints->caps                   = ofi_ladder[step].caps |
                                        (tagged ? FI_TAGGED : 0);
        hints->mode                   = FI_CONTEXT | FI_CONTEXT2;
        hints->ep_attr->type          = FI_EP_RDM;
        hints->domain_attr->threading = FI_THREAD_DOMAIN;
        hints->domain_attr->mr_mode   = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                                      FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                                      FI_MR_ENDPOINT;
        hints->tx_attr->msg_order = ordered ? FI_ORDER_SAS : FI_ORDER_NONE;
        hints->rx_attr->msg_order = ordered ? FI_ORDER_SAS : FI_ORDER_NONE;
        if ((want != NULL) && (want[0] != '\0'))
            hints->fabric_attr->prov_name = strdup(want);
        ret = fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, hints, &list);
        fi_freeinfo(hints);
        if (ret != 0) {
            gv_debug("ofi: fi_getinfo for %s%s%s: %s", ofi_ladder[step].what,
                     tagged ? "|FI_TAGGED" : "",
                     ordered ? " with FI_ORDER_SAS" : "", fi_strerror(-ret));
            continue;
        }
        for (fi = list; fi != NULL; fi = fi->next) {
            int again;
            /* shm only reaches ranks on this node. */
            if ((tl->boot->nnodes > 1) &&
                (strcmp(fi->fabric_attr->prov_name, "shm") == 0))
                continue;
            /* A busy provider gets a few more tries before the next rung:
             * shm 1.17 fails an open now and then with EBUSY under load,
             * and a rank that settles for less than its peers costs the
             * whole job its large-frame path (agree). */
            for (again = 1;; again++) {
                ret = open_info(o, tl, fi);
                if (((ret != -FI_EBUSY) && (ret != -FI_EAGAIN)) ||
                    (again == OFI_OPEN_TRIES))
                    break;
                close_failed(o, fi, "is busy", ret);
                usleep(10000u << again);
            }
            if (ret == 0) {
                o->info        = fi_dupinfo(fi);
                o->ladder_what = ofi_ladder[step].what;
                fi_freeinfo(list);
                if (o->info == NULL)
                    return GV_ERR_NO_MEMORY;
                return GV_OK;
            }
            close_failed(o, fi, "does not open", ret);
        }
        fi_freeinfo(list);
    }
    rdm_providers(have, sizeof(have));
    fi_env = getenv("FI_PROVIDER");
    ofi_why("ofi: no libfabric provider%s%s%s offers a reliable-datagram "
            "endpoint with FI_MSG here (%s); providers that offer one: "
            "%s%s%s%s",
            ((want != NULL) && want[0]) ? " named '" : "",
            ((want != NULL) && want[0]) ? want : "",
            ((want != NULL) && want[0]) ? "' (GV_OFI_PROVIDER)" : "",
            fi_strerror(-ret), have,
            (fi_env != NULL) ? " (FI_PROVIDER='" : "",
            (fi_env != NULL) ? fi_env : "",
            (fi_env != NULL) ? "' hides the providers it does not name)" : "");
    return GV_ERR_UNSUPPORTED;
}

static gv_status_t setup_memory(ofi_t *o, gv_tl_t *tl)
{
    size_t   i;
    uint64_t local = FI_SEND | FI_RECV | FI_READ | FI_WRITE;

    /* Operation pool: our headers, operands and results live here. */
    o->nops = o->info->tx_attr->size * 2;
    if (o->nops < OFI_NOPS_MIN)
        o->nops = OFI_NOPS_MIN;
    o->ops = gv_calloc(o->nops, sizeof(*o->ops));
    for (i = o->nops; i-- > 0;) {
        o->ops[i].next_free = o->free_ops;
        o->free_ops         = &o->ops[i];
    }
    if (o->mr_local) {
        if (mr_open(o, o->ops, o->nops * sizeof(*o->ops), local,
                    &o->pool_mr) != 0)
            return GV_ERR_IO;
        o->pool_desc = fi_mr_desc(o->pool_mr);
    }

    /* Receive buffers. */
    o->rmem_size = o->nrbuf * o->rbuf_size + o->nlbuf * o->lbuf_size;
    o->rmem = mmap(NULL, o->rmem_size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (o->rmem == MAP_FAILED) {
        o->rmem = NULL;
        ofi_why("ofi: mmap of the receive buffers failed: %m");
        return GV_ERR_NO_MEMORY;
    }
    if (o->mr_local) {
        if (mr_open(o, o->rmem, o->rmem_size, FI_RECV, &o->rbuf_mr) != 0)
            return GV_ERR_IO;
        o->rbuf_desc = fi_mr_desc(o->rbuf_mr);
    }

    /* The heap, when we have one-sided operations and the layers above
     * want one (gv_init_opts may start messages only). */
    if (o->has_rma && (tl->params.heap_size != 0)) {
        uint64_t access = FI_REMOTE_READ | FI_REMOTE_WRITE;
        if (o->mr_local)
            access |= local;
        o->heap_size = tl->params.heap_size;
        o->heap = mmap(NULL, o->heap_size, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (o->heap == MAP_FAILED) {
            o->heap = NULL;
            ofi_why("ofi: mmap of a %zu-byte heap failed: %m", o->heap_size);
            return GV_ERR_NO_MEMORY;
        }
        if (mr_open(o, o->heap, o->heap_size, access, &o->heap_mr) != 0)
            return GV_ERR_IO;
        o->heap_desc = fi_mr_desc(o->heap_mr);
    }
    return GV_OK;
}

/* What every rank can do. Ranks on one provider usually open it the same
 * way, but not always: libfabric 1.17's shm now and then fails one rank's
 * first open with EBUSY (seen under load), and that rank settles for a
 * lower rung of the ladder, without FI_TAGGED (or, failing more, without
 * FI_ATOMIC or FI_RMA). A sender that sent it tagged frames would leave
 * them unmatched for ever, and one that lacks the tagged path would put
 * frames of up to 1 MiB into buffers meant for 128 KiB at most (seen:
 * libfabric's shm copying past the end of our multi-receive buffer,
 * spinning there). So frames go tagged only when every rank posts tagged
 * buffers, no frame is larger than the smallest limit any rank
 * published, and one-sided operations are offered only if every rank
 * has them. */
static gv_status_t agree(ofi_t *o, gv_tl_t *tl, const ofi_card_t *cards)
{
    size_t   small_max = o->small_max, max_frame = o->max_frame;
    size_t   split_max = o->split_max;
    int      i, untagged = -1, fewer = -1;
    uint32_t mine = cards[tl->rank].ops, ops = mine;

    for (i = 0; i < tl->size; i++) {
        if ((cards[i].small_max < OFI_FRAME_MIN) ||
            (cards[i].max_frame < cards[i].small_max)) {
            ofi_why("ofi: rank %d takes frames of %u bytes, tagged ones of "
                    "%u (at least %u, and tagged ones no smaller)", i,
                    cards[i].small_max, cards[i].max_frame,
                    (unsigned)OFI_FRAME_MIN);
            return GV_ERR_UNSUPPORTED;
        }
        if (cards[i].small_max < small_max)
            small_max = cards[i].small_max;
        if (cards[i].max_frame < max_frame)
            max_frame = cards[i].max_frame;
        if (cards[i].split_max < split_max)
            split_max = cards[i].split_max;
        if (!cards[i].tagged && (untagged < 0))
            untagged = i;
        if (((ops & cards[i].ops) != ops) && (fewer < 0))
            fewer = i;
        ops &= cards[i].ops;
    }
    /* Atomics address the heap that put/get need registered. */
    if (!(ops & OFI_OP_RMA))
        ops = 0;
    o->ops_dropped = mine & ~ops;
    o->has_rma = !!(ops & OFI_OP_RMA);
    for (i = 0; i < GV_TL_AMO_LAST; i++)
        o->amo_ok[i] = !!(ops & (OFI_OP_AMO << i));
    if (fewer >= 0)
        gv_info("ofi: provider %s: rank %d opened without some one-sided "
                "operations (ours 0x%x, the job's 0x%x: 1 put/get, 2 add, "
                "4 fetch-add, 8 compare-and-swap, 16 swap)", prov_name(o),
                fewer, mine, ops);
    o->tagged = (untagged < 0);
    if (!o->tagged) {
        max_frame = small_max;
        if (o->nlbuf > 0)
            gv_info("ofi: provider %s: rank %d opened without tagged "
                    "messages, so no rank sends frames tagged in this job "
                    "(frames up to %zu bytes)", prov_name(o), untagged,
                    max_frame);
    }
    o->small_max = small_max;
    o->max_frame = max_frame;
    /* Split messages are put together in a buffer of split_max bytes,
     * which a split frame must also not outgrow. */
    if (split_max + OFI_WIRE_HDR > small_max)
        split_max = 0;
    o->split_max = split_max;
    if (split_max > 0)
        o->splits = gv_calloc((size_t)tl->size, sizeof(*o->splits));
    return GV_OK;
}

/* The file in /dev/shm behind shm address @a addr (FI_ADDR_STR,
 * "fi_shm://<name>", @a len bytes from the bootstrap), or NULL when it is
 * not one, or its name could reach outside /dev/shm. */
static char *shm_region_path(const char *addr, size_t len)
{
    static const char pre[] = "fi_shm://";
    const char       *name;
    size_t            n, i;
    char             *path;

    if ((len <= sizeof(pre) - 1) || (strncmp(addr, pre, sizeof(pre) - 1) != 0))
        return NULL;
    name = addr + sizeof(pre) - 1;
    n    = strnlen(name, len - (sizeof(pre) - 1));
    if ((n == 0) || (name[0] == '.'))
        return NULL;
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) &&
            (strchr(":_.-", name[i]) == NULL))
            return NULL;
    path = gv_malloc(sizeof("/dev/shm/") + n);
    memcpy(path, "/dev/shm/", sizeof("/dev/shm/") - 1);
    memcpy(path + sizeof("/dev/shm/") - 1, name, n);
    path[sizeof("/dev/shm/") - 1 + n] = '\0';
    return path;
}

/* libfabric's shm provider keeps each endpoint's region as a file in
 * /dev/shm for the endpoint's life, and removes it at close (or on a
 * signal it catches); a rank that is SIGKILLed leaves its file behind, 16
 * MiB a rank. gvrun and mpirun stop the rest of the job with SIGTERM: then
 * every rank still running removes all ranks' files. */
static void shm_paths_arm(ofi_t *o, const ofi_card_t *cards, int n)
{
    char **paths;
    int    i, k = 0;

    if ((strcmp(prov_name(o), "shm") != 0) ||
        (o->info->addr_format != FI_ADDR_STR))
        return;
    paths = gv_calloc((size_t)n, sizeof(char *));
    for (i = 0; i < n; i++)
        if ((paths[i] = shm_region_path((const char *)cards[i].addr,
                                        cards[i].addrlen)) != NULL)
            k++;
    gv_debug("ofi: %d of %d shm regions known, removed if the job is "
             "stopped", k, n);
    gv__cleanup_arm(paths, n);
}

/* Exchange cards, check every rank chose the same provider, fill the AV. */
static gv_status_t exchange(ofi_t *o, gv_tl_t *tl)
{
    ofi_card_t *cards, mine = {0};
    size_t      addrlen = sizeof(mine.addr);
    gv_status_t status;
    int         ret, i;

    ret = fi_getname(&o->ep->fid, mine.addr, &addrlen);
    if (ret != 0) {
        ofi_why("ofi: provider %s: fi_getname failed: %s%s", prov_name(o),
                fi_strerror(-ret),
                (ret == -FI_ETOOSMALL) ? " (address too long)" : "");
        return GV_ERR_UNSUPPORTED;
    }
    snprintf(mine.prov, sizeof(mine.prov), "%s", prov_name(o));
    mine.addr_format = o->info->addr_format;
    mine.addrlen     = (uint32_t)addrlen;
    if (o->heap_mr != NULL) {
        mine.heap_base = (uint64_t)(uintptr_t)o->heap;
        mine.heap_key  = fi_mr_key(o->heap_mr);
    }
    mine.small_max = (uint32_t)((o->small_max < o->max_frame) ? o->small_max
                                                              : o->max_frame);
    mine.max_frame = (uint32_t)o->max_frame;
    mine.split_max = (uint32_t)o->split_max;
    mine.tagged    = o->nlbuf > 0;
    mine.ops       = o->has_rma ? OFI_OP_RMA : 0;
    for (i = 0; i < GV_TL_AMO_LAST; i++)
        if (o->amo_ok[i])
            mine.ops |= OFI_OP_AMO << i;
    cards  = gv_calloc((size_t)tl->size, sizeof(*cards));
    status = gv__boot_allgather(tl->boot, &mine, sizeof(mine), cards);
    if (status != GV_OK) {
        ofi_why("ofi: exchanging endpoint names failed: %s",
                gv_status_str(status));
        goto out;
    }
    for (i = 0; i < tl->size; i++) {
        ofi_card_t *c = &cards[i];
        fi_addr_t   fa;

        c->prov[sizeof(c->prov) - 1] = '\0';
        if ((strcmp(c->prov, mine.prov) != 0) ||
            (c->addr_format != mine.addr_format) ||
            (c->addrlen == 0) || (c->addrlen > sizeof(c->addr))) {
            ofi_why("ofi: rank %d chose provider %s, rank %d %s (address "
                    "formats %u, %u): set GV_OFI_PROVIDER", tl->rank,
                    mine.prov, i, c->prov, mine.addr_format,
                    c->addr_format);
            status = GV_ERR_UNSUPPORTED;
            goto out;
        }
        ret = fi_av_insert(o->av, c->addr, 1, &fa, 0, NULL);
        if (ret != 1) {
            ofi_why("ofi: provider %s: fi_av_insert of rank %d failed: %s",
                    prov_name(o), i, fi_strerror(ret < 0 ? -ret : FI_EINVAL));
            status = GV_ERR_UNSUPPORTED;
            goto out;
        }
        o->peers[i].addr  = fa;
        o->peers[i].rbase = c->heap_base;
        o->peers[i].rkey  = c->heap_key;
    }
    status = agree(o, tl, cards);
    if (status == GV_OK)
        shm_paths_arm(o, cards, tl->size);
out:
    gv_free(cards);
    return status;
}

/* Providers that connect on demand (rxm over tcp or verbs, tcp's own RDM
 * endpoint, sockets) connect a pair of ranks when the first frame goes
 * either way, and two ranks that send to each other first at once race:
 * libfabric 1.17's rxm settles simultaneous connection requests by
 * comparing addresses on each side, and when the connection events reach
 * one side out of order it closes the connection its peer kept and keeps
 * one the peer dropped (ofiwg/libfabric#7396, #9052): both ranks then sit
 * in fi_sendv retrying EAGAIN for ever (a 4-rank GUPS in 3 of 42 launches).
 * So the pairs connect one way only, before any rank sends anything else:
 * every rank sends a header-only frame (delivered as nothing, as a bye) to
 * every higher rank, which connects the pair from the lower side, and
 * waits until each lower rank's frame arrived, which means that pair's
 * connection is up and the way back uses it. Bounded by GV_TIMEOUT_S. */
static int connects_on_demand(const ofi_t *o)
{
    const char *p = prov_name(o);

    return (strstr(p, "ofi_rxm") != NULL) || (strcmp(p, "tcp") == 0) ||
           (strcmp(p, "sockets") == 0);
}

static gv_status_t wire_up(gv_tl_t *tl)
{
    ofi_t   *o        = tl->priv;
    uint64_t deadline = gv__now_ns() + gv__timeout_ns();
    int      r, missing;
    ssize_t  ret;

    if (!connects_on_demand(o))
        return GV_OK;
    for (r = tl->rank + 1; r < tl->size; r++) {
        ofi_peer_t *p = &o->peers[r];
        ofi_op_t   *op;

        while ((op = op_get(o, OFI_CTX_SEND, r, NULL)) == NULL) {
            ofi_progress(tl);
            if (gv__now_ns() > deadline)
                goto late;
        }
        wire_hdr(tl, op->wire, p->tx_seq, 0);
        for (;;) {
            ret = fi_send(o->ep, op->wire, OFI_WIRE_HDR, o->pool_desc,
                          p->addr, &op->ctx.fctx);
            if (ret != -FI_EAGAIN)
                break;
            ofi_progress(tl);
            if (gv__now_ns() > deadline) {
                op_put(o, op);
                goto late;
            }
        }
        if (ret != 0) {
            op_put(o, op);
            ofi_why("ofi: provider %s: connecting to rank %d failed: %s",
                    prov_name(o), r, fi_strerror((int)-ret));
            return GV_ERR_IO;
        }
        p->tx_seq++;
        o->n_tx++;
    }
    for (;;) {
        missing = -1;
        for (r = 0; (r < tl->rank) && (missing < 0); r++)
            if (o->peers[r].rx_seq == 0)
                missing = r;
        if (missing < 0)
            return GV_OK;
        ofi_progress(tl);
        if (gv__now_ns() > deadline)
            break;
    }
late:
    ofi_why("ofi: provider %s: connections between the ranks were not all "
            "up after %llu s (GV_TIMEOUT_S)", prov_name(o),
            (unsigned long long)gv__env.TIMEOUT_S);
    return GV_ERR_TIMEOUT;
}

static void ofi_free(ofi_t *o)
{
    ofi_teardown(o);
    if (o->heap != NULL)
        munmap(o->heap, o->heap_size);
    if (o->rmem != NULL)
        munmap(o->rmem, o->rmem_size);
    gv_free(o->rbufs);
    gv_free(o->align_buf);
    gv_free(o->ops);
    if (o->info != NULL)
        fi_freeinfo(o->info);
    gv_free(o);
}

static void free_peers(ofi_t *o, int size)
{
    int i;
    for (i = 0; (o->peers != NULL) && (i < size); i++) {
        while (o->peers[i].stash != NULL) {
            ofi_stash_t *s      = o->peers[i].stash;
            o->peers[i].stash = s->next;
            gv_free(s);
        }
        if (o->splits != NULL) {
            gv_free(o->splits[i].msg);
            gv_free(o->splits[i].owed);
        }
    }
    gv_free(o->splits);
    o->splits = NULL;
    gv_free(o->peers);
    o->peers = NULL;
}

static gv_status_t ofi_init(gv_tl_t *tl)
{
    ofi_t      *o = gv_calloc(1, sizeof(*o));
    gv_status_t status;
    uint64_t    mr_mode;
    size_t      i, max_frame, eager;
    char        missing[96] = "";

    o->wait_fd = -1;
    o->peers   = gv_calloc((size_t)tl->size, sizeof(*o->peers));
    tl->priv   = o;

    status = choose_provider(o, tl);
    if (status != GV_OK)
        goto err;

    mr_mode        = o->info->domain_attr->mr_mode;
    o->mr_local    = !!(mr_mode & FI_MR_LOCAL) || OFI_FORCE_MR_LOCAL;
    o->virt_addr   = !!(mr_mode & FI_MR_VIRT_ADDR);
    o->prov_key    = !!(mr_mode & FI_MR_PROV_KEY);
    o->mr_endpoint = !!(mr_mode & FI_MR_ENDPOINT);
    o->key_mask    = (o->info->domain_attr->mr_key_size >= 8)
                         ? ~0ull
                         : ((1ull << (8 * o->info->domain_attr->mr_key_size)) - 1);
    memcpy(o->tag, tl->boot->key, OFI_TAG_LEN);
    {
        uint8_t b[8] = {0};

        memcpy(b, o->tag, OFI_TAG_LEN);
        memcpy(&o->tag_word, b, 8);
        memset(b, 0xff, OFI_TAG_LEN);
        memcpy(&o->tag_mask, b, 8);
    }
    /* Requested keys (without FI_MR_PROV_KEY) start from a value derived
     * from the job key, so that another job cannot guess them. */
    memcpy(&o->next_key, tl->boot->key + 8, sizeof(o->next_key));
    o->inject_size = o->info->tx_attr->inject_size;
    o->iov_limit   = o->info->tx_attr->iov_limit;
    o->has_rma     = !!(o->info->caps & FI_RMA);
    o->multi       = has_multi(o->info);
    o->small_max   = small_max_of(o->info);
    o->nrbuf       = o->multi ? OFI_NRBUF : OFI_RING_N;
    o->rbuf_size   = o->multi ? OFI_RBUF_FRAMES * o->small_max
                              : OFI_RING_FRAME;
    o->max_frame   = (o->info->caps & FI_TAGGED) ? OFI_MAX_FRAME
                                                 : o->small_max;
    if (o->info->ep_attr->max_msg_size < o->max_frame)
        o->max_frame = o->info->ep_attr->max_msg_size;
    if (o->max_frame > o->small_max) {
        o->nlbuf     = (strcmp(prov_name(o), "shm") == 0) ? OFI_NLBUF_SHM
                                                          : OFI_NLBUF;
        o->lbuf_size = (o->max_frame + 4095) & ~(size_t)4095;
    }
    o->rbufs       = gv_calloc(o->nrbuf + o->nlbuf, sizeof(*o->rbufs));
    /* Flow control where unexpected frames share the receive pool with
     * our few multi-receive buffers (shm). The ring (rxm) keeps hundreds
     * of receives posted, and TCP pushes back by itself when a receiver
     * does not read: there credits only slowed a flood down (GUPS without
     * aggregation over tcp;ofi_rxm: 1.3 -> 0.6 M updates/s). */
    if (o->multi) {
        o->credits     = credits_of(o, tl->size);
        o->grant_every = o->credits / 4;
    }
    /* Split messages (send_split) where inject_size is large enough for
     * parts to pay: shm's 4096, not rxm's 64. Every part takes a credit. */
    if ((OFI_SPLIT_PARTS > 0) && (o->inject_size >= OFI_SPLIT_INJECT_MIN) &&
        (o->inject_size <= OFI_SPLIT_INJECT_MAX)) {
        size_t parts = OFI_SPLIT_PARTS;

        if ((o->credits != 0) && (parts > o->credits))
            parts = o->credits;
        o->split_chunk = (o->inject_size & ~(size_t)7) - OFI_WIRE_HDR;
        o->split_max   = parts * o->split_chunk;
    }

    if (o->info->caps & FI_ATOMIC) {
        size_t count;
        /* shm (seen with libfabric 1.17) mishandles the delivery-complete
         * acknowledgement of a non-fetching atomic: crashes in fi_cq_read
         * and corrupted results of later compare-and-swaps. Which release
         * fixes it is not known here, so shm always gets the fetching
         * form (same cost there: the target answers either way). */
        o->dc_atomic_broken = (strcmp(prov_name(o), "shm") == 0);
        o->amo_ok[GV_TL_AMO_ADD] =
            fi_atomicvalid(o->ep, FI_UINT64, FI_SUM, &count) == 0;
        o->amo_ok[GV_TL_AMO_FADD] =
            fi_fetch_atomicvalid(o->ep, FI_UINT64, FI_SUM, &count) == 0;
        o->amo_ok[GV_TL_AMO_SWAP] =
            fi_fetch_atomicvalid(o->ep, FI_UINT64, FI_ATOMIC_WRITE,
                                 &count) == 0;
        o->amo_ok[GV_TL_AMO_CSWAP] =
            fi_compare_atomicvalid(o->ep, FI_UINT64, FI_CSWAP, &count) == 0;
    }

    status = setup_memory(o, tl);
    if (status != GV_OK)
        goto err;
    /* Buffers go up before anyone learns our address. */
    for (i = 0; i < o->nrbuf + o->nlbuf; i++) {
        ofi_rbuf_t *rb = &o->rbufs[i];
        if (i < o->nrbuf) {
            rb->ctx.kind = OFI_CTX_RBUF;
            rb->base     = o->rmem + o->nlbuf * o->lbuf_size +
                           i * o->rbuf_size;
        } else {
            rb->ctx.kind = OFI_CTX_LBUF;
            rb->base     = o->rmem + (i - o->nrbuf) * o->lbuf_size;
        }
        if (rbuf_post(o, rb) != 0) {
            status = GV_ERR_IO;
            goto err;
        }
    }
    status = exchange(o, tl);
    if (status != GV_OK)
        goto err;
    status = wire_up(tl);
    if (status != GV_OK)
        goto err;
    for (i = 0; i < GV_TL_AMO_LAST; i++)
        if (!o->amo_ok[i])
            snprintf(missing + strlen(missing),
                     sizeof(missing) - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", amo_name[i]);

    /* Frames are padded to 8 bytes: the largest padded one must still fit
     * the receive side (FI_OPT_MIN_MULTI_RECV, or a ring buffer). A large
     * frame's header and lead take OFI_RX_ALIGN bytes at most. */
    max_frame        = o->max_frame & ~(size_t)7;
    tl->attr.caps    = GV_TL_CAP_AM;
    tl->attr.max_msg = max_frame - (o->tagged ? OFI_RX_ALIGN
                                              : OFI_WIRE_HDR);
    if (o->has_rma)
        tl->attr.caps |= GV_TL_CAP_RMA;
    if (o->amo_ok[GV_TL_AMO_ADD] && o->amo_ok[GV_TL_AMO_FADD] &&
        o->amo_ok[GV_TL_AMO_CSWAP] && o->amo_ok[GV_TL_AMO_SWAP])
        tl->attr.caps |= GV_TL_CAP_ATOMIC64;
    if (o->wait_fd >= 0)
        tl->attr.caps |= GV_TL_CAP_WAIT | GV_TL_CAP_WAIT_FD;
    tl->attr.heap_base = o->heap;
    /* A request or reply of 16 KiB or more goes from the caller's memory:
     * against copying it first, a 32768-byte hop over shm took 9.1 us less
     * (perf/hop_ofi; perf/notes/ofi-shm-split-messages.md). */
    tl->attr.now_zcopy_min = 16u << 10;
    eager = rxm_eager_limit(o);
    if ((eager & ~(size_t)7) > OFI_WIRE_HDR)
        tl->attr.max_oneshot = (eager & ~(size_t)7) - OFI_WIRE_HDR;
    /* fi_inject copies (a padded frame up to inject_size goes that way,
     * an id frame's id word included). */
    tl->attr.max_inline =
        ((o->inject_size & ~(size_t)7) > OFI_WIRE_HDR + OFI_ID_WORD)
            ? (o->inject_size & ~(size_t)7) - OFI_WIRE_HDR - OFI_ID_WORD
            : 0;
    /* ... and so does send_split, for messages up to split_max. */
    if (o->split_max > tl->attr.max_inline + OFI_ID_WORD)
        tl->attr.max_inline = o->split_max - OFI_ID_WORD;
    if (tl->attr.max_inline > 0)
        tl->attr.caps |= GV_TL_CAP_AM_ID;
    if (tl->attr.caps & GV_TL_CAP_ATOMIC64)
        snprintf(tl->attr.detail, sizeof(tl->attr.detail), "provider %s",
                 prov_name(o));
    else if (o->ops_dropped != 0)
        snprintf(tl->attr.detail, sizeof(tl->attr.detail),
                 "provider %s (one-sided operations: only what every rank "
                 "opened with; see GV_LOG=info)", prov_name(o));
    else if (o->info->caps & FI_ATOMIC)
        snprintf(tl->attr.detail, sizeof(tl->attr.detail),
                 "provider %s (no native atomics: no %s on FI_UINT64)",
                 prov_name(o), missing);
    else
        snprintf(tl->attr.detail, sizeof(tl->attr.detail),
                 "provider %s (%s only)", prov_name(o), o->ladder_what);
    gv_debug("ofi: provider %s, domain %s, inject %zu, mr_mode 0x%llx, "
             "wait fd %d, rx comp_order 0x%llx, frames up to %zu %s, "
             "larger up to %zu %s, split up to %zu", prov_name(o),
             o->info->domain_attr->name, o->inject_size,
             (unsigned long long)mr_mode, o->wait_fd,
             (unsigned long long)o->info->rx_attr->comp_order,
             o->tagged ? o->small_max : max_frame,
             o->multi ? "multi-receive" : "ring", o->tagged ? max_frame : 0,
             o->tagged ? "tagged" : "(no tagged path)", o->split_max);
    return GV_OK;

err:
    gv__cleanup_disarm(); /* shm_paths_arm()'s */
    free_peers(o, tl->size);
    ofi_free(o);
    tl->priv = NULL;
    return status;
}

static size_t ops_busy(const ofi_t *o)
{
    size_t i, busy = 0;
    for (i = 0; i < o->nops; i++)
        busy += (size_t)o->ops[i].in_use;
    return busy;
}

/* Before closing: fi_inject returns before the bytes left (rxm queues them
 * on a busy socket and only progress moves them), and the last message of
 * the final barrier may be one of them. A completed send to a peer means
 * everything sent to it before has left too (one connection, in order), so
 * every peer we ever sent to gets a header-only "bye" frame with a
 * completion, and we progress until those and all other sends completed.
 * A peer that is gone fails its bye, which is harmless now. Bounded, so
 * fini never hangs: first the rest of split messages, for all peers at
 * once (progress moves every peer's), for up to 2 s; then the byes and
 * the final drain, for 2 s more, so that one peer that never takes what
 * it is owed costs the others none of their byes. */
#define DRAIN_NS 2000000000ull

static void drain_sends(gv_tl_t *tl)
{
    ofi_t   *o        = tl->priv;
    uint64_t deadline = gv__now_ns() + DRAIN_NS;
    int      dst;

    while ((o->nowed > 0) && (gv__now_ns() < deadline))
        ofi_progress(tl);
    deadline = gv__now_ns() + DRAIN_NS;
    for (dst = 0; dst < tl->size; dst++) {
        ofi_peer_t *p = &o->peers[dst];
        ofi_op_t   *op;
        ssize_t     ret;

        if ((dst == tl->rank) || (p->tx_seq == 0))
            continue;
        if (p->owing) { /* no bye behind a message cut short */
            gv_warn("ofi: rank %d did not take the last %zu bytes of a "
                    "split message before finalize; they are lost", dst,
                    o->splits[dst].owed_len - o->splits[dst].owed_off);
            continue;
        }
        while ((op = op_get(o, OFI_CTX_SEND, dst, NULL)) == NULL) {
            ofi_progress(tl);
            if (gv__now_ns() > deadline)
                return;
        }
        wire_hdr(tl, op->wire, p->tx_seq, 0);
        do {
            ret = fi_send(o->ep, op->wire, OFI_WIRE_HDR, o->pool_desc,
                          p->addr, &op->ctx.fctx);
            if (ret == -FI_EAGAIN)
                ofi_progress(tl);
        } while ((ret == -FI_EAGAIN) && (gv__now_ns() < deadline));
        if (ret != 0) {
            op_put(o, op);
            continue;
        }
        p->tx_seq++;
    }
    while ((ops_busy(o) > 0) && (gv__now_ns() < deadline))
        ofi_progress(tl);
}

static void ofi_fini(gv_tl_t *tl)
{
    ofi_t *o = tl->priv;

    drain_sends(tl);
    gv_debug("ofi: %llu frames sent (%llu tagged, %llu split messages, "
             "%llu of them in part owed), %llu received, %llu reordered, "
             "%llu rejected, %llu realigned, %llu EAGAIN, %llu blocking "
             "waits, %llu credit stalls, %llu grants sent (%u credits per "
             "peer)", (unsigned long long)o->n_tx,
             (unsigned long long)o->n_large,
             (unsigned long long)o->n_split,
             (unsigned long long)o->n_owed,
             (unsigned long long)o->n_rx, (unsigned long long)o->n_reordered,
             (unsigned long long)o->n_bad,
             (unsigned long long)o->n_realigned,
             (unsigned long long)o->n_eagain,
             (unsigned long long)o->n_blocked,
             (unsigned long long)o->n_credit_stalls,
             (unsigned long long)o->n_grants, o->credits);
    gv__cleanup_disarm(); /* shm_paths_arm()'s */
    free_peers(o, tl->size);
    ofi_free(o);
    tl->priv = NULL;
}

/* --- for tests (transports/ofi.h) ---------------------------------------- */

size_t gv__tl_ofi_name(gv_tl_t *tl, int rank, void *buf, size_t len)
{
    ofi_t *o;
    int    ret;

    if ((tl == NULL) || (tl->ops != &gv_tl_ofi_ops) || (tl->priv == NULL) ||
        (rank < 0) || (rank >= tl->size))
        return 0;
    o   = tl->priv;
    ret = fi_av_lookup(o->av, o->peers[rank].addr, buf, &len);
    return ((ret == 0) || (ret == -FI_ETOOSMALL)) ? len : 0;
}

void gv__tl_ofi_counters(gv_tl_t *tl, gv_tl_ofi_counters_t *c_p)
{
    memset(c_p, 0, sizeof(*c_p));
    if ((tl == NULL) || (tl->ops != &gv_tl_ofi_ops) || (tl->priv == NULL))
        return;
    c_p->rejected  = ((ofi_t *)tl->priv)->n_bad;
    c_p->tagged_rx = ((ofi_t *)tl->priv)->nlbuf > 0;
    c_p->split_max = ((ofi_t *)tl->priv)->split_max;
    c_p->split     = ((ofi_t *)tl->priv)->n_split;
    c_p->owed      = ((ofi_t *)tl->priv)->n_owed;
}

void gv__tl_ofi_owe(gv_tl_t *tl, unsigned n, int stuck)
{
    if ((tl != NULL) && (tl->ops == &gv_tl_ofi_ops) && (tl->priv != NULL)) {
        ((ofi_t *)tl->priv)->test_owe       = n;
        ((ofi_t *)tl->priv)->test_owe_stuck = stuck;
    }
}

void gv__tl_ofi_seqs(gv_tl_t *tl, int rank, uint32_t *tx_p, uint32_t *rx_p)
{
    const ofi_t *o;

    *tx_p = *rx_p = 0;
    if ((tl == NULL) || (tl->ops != &gv_tl_ofi_ops) || (tl->priv == NULL) ||
        (rank < 0) || (rank >= tl->size))
        return;
    o     = tl->priv;
    *tx_p = o->peers[rank].tx_seq;
    *rx_p = o->peers[rank].rx_seq;
}

const gv_tl_ops_t gv_tl_ofi_ops = {
    .version  = GV_TL_OPS_VERSION,
    .name     = "ofi",
    .init     = ofi_init,
    .fini     = ofi_fini,
    .progress = ofi_progress,
    .am_send  = ofi_am_send,
    .am_send_id = ofi_am_send_id,
    .wait     = ofi_wait,
    .wait_fd  = ofi_wait_fd,
    .arm      = ofi_arm,
    .put      = ofi_put,
    .get      = ofi_get,
    .atomic64 = ofi_atomic64,
    .flush    = ofi_flush,
};
