/* Active messages: the handler table, per-destination send queues with
 * aggregation, fragmentation of large messages, checked unpacking and
 * dispatch, messages to self, and the quiescence barrier.
 *
 * Every message to a rank goes through that rank's FIFO queue of transport
 * messages, so per-pair order holds whatever the path: an open batch is
 * the queue's tail while it fills; a message too large for a batch closes
 * it and queues behind it.
 *
 * Flow control. A sender outside handlers may have at most GV_AGG_CREDITS
 * transport messages per destination beyond the open batch, counting both
 * those queued here and those the transport accepted from our buffers but
 * has not completed (UCX and libfabric's rxm accept everything and hold
 * it: owed()); past that it progresses (receiving, completing) before it
 * ships or opens another batch, so memory held per destination is at most
 * (credits + 1) buffers and two ranks flooding each other keep draining
 * each other. Inside a
 * handler a send is never refused and never waits: it queues. Handlers
 * thus cannot deadlock, and the memory their sends take is bounded by
 * what arrives, which the senders' credits bound (a handler that sends k
 * messages per message it handles multiplies that bound by k). Relays
 * under GV_AGG_ROUTE=node and node2, which forward from their handler,
 * are held by hop-by-hop credits instead (see "routing" below). The
 * transports bound their own buffers (GV_TCP_SENDQ, GV_SHM_RING).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "aggregator/am_internal.h"
#include "aggregator/wire.h"
#include <grapevine/team.h>

#include <stdio.h>

#define REJECT_LOG_MAX   10  /* log this many rejections, then count only */

typedef struct out_msg {
    struct out_msg *next;
    gv_req_t        req;      /* for GV_INPROGRESS completions */
    uint8_t         hdr[sizeof(gv_wire_frag_t)];
    uint8_t         hdr_len;
    uint8_t         is_batch; /* buf is an AGG_BYTES buffer to recycle */
    uint8_t         ctrl;     /* a barrier message: not in queued_bytes */
    int             dst;
    size_t          len;      /* bytes of data to send after hdr */
    size_t          cap;      /* bytes allocated for data */
    uint8_t        *data;     /* HEADROOM bytes after the struct */
} out_msg_t;

/* Room before a message's data for its 8-byte header, so that a small
 * batch goes to the transport as one contiguous frame: one copy there,
 * not two, for the messages whose latency counts. */
#define HEADROOM sizeof(gv_wire_hdr_t)

typedef struct {
    out_msg_t *head, *tail;  /* not yet accepted by the transport */
    out_msg_t *open;         /* open batch (== tail) or NULL */
    uint64_t   open_ns;      /* when progress first saw it open; 0: not yet
                                (no clock read on the send path) */
    unsigned   queued;       /* messages in the queue, open batch included */
    int        backlogged;   /* in the backlog list */
    int        dirty;        /* in the open list ... */
    int        open_slot;    /* ... at this index */
    uint32_t   next_stream;  /* id of our next fragmented message to it */
    /* The watchdog (gv__am_watch): messages to it the transport holds
     * (sent in place or from a batch, not complete), sends and one-sided
     * operations to it waiting for the transport to take them, blocking
     * one-sided operations waiting for it to complete them, and when the
     * watchdog first saw it owed something; a message taken or completed
     * and a completed blocking operation reset that to 0 (a store, no
     * clock read on the send path). */
    unsigned   held;
    unsigned   inflight; /* of held: our own buffers (queue messages) */
    unsigned   waiting;
    unsigned   onesided;
    uint64_t   owed_ns;
    /* fragmented messages from this rank being reassembled: usually none
     * or one, more when several workers send large messages at once */
    struct reasm *reasm;
    unsigned      nreasm;
    /* the last reassembly buffer, kept for the next large message: a fresh
     * one per message costs an mmap, page faults and an munmap */
    uint8_t      *spare;
    size_t        spare_cap;
} peer_t;

#define SPARE_MAX (16u << 20) /* largest reassembly buffer kept per peer */

#define REASM_MAX 64 /* concurrent fragmented messages from one rank */
typedef struct reasm {
    struct reasm *next;
    uint32_t      stream, total, got;
    uint16_t      id;
    uint8_t      *buf;
} reasm_t;

typedef struct {
    gv_am_handler_fn_t fn;
    void              *arg;
} handler_t;

/* Named handlers (gv_am_register_named): the id is a pure function of the
 * name, NAMED_BASE + hash % NAMED_SLOTS, so ranks agree without a common
 * order. Two names may share a slot; so that a message never reaches the
 * wrong handler, every rank that registers or looks up a name announces
 * (slot, hash, name) to every other rank before it can send with the id
 * (messages between two ranks stay in order). A rank that learns of two
 * names in one slot poisons it: messages to it are rejected, naming both,
 * and registering either name there fails. */
#define NAMED_BASE  GV_AM_MAX_HANDLERS
#define NAMED_END   GV_AM_NAMED_END
#define NAMED_SLOTS (NAMED_END - NAMED_BASE)
enum { NAMED_MINE = 1, NAMED_THEIRS = 2 };
typedef struct {
    gv_am_handler_fn_t fn;       /* NULL: looked up or announced only */
    void              *arg;
    uint64_t           hash;
    uint8_t            state;    /* NAMED_MINE or NAMED_THEIRS */
    uint8_t            preinit;  /* registered before gv_init: kept */
    uint8_t            poisoned; /* two names met here */
    char               name[GV_AM_NAME_MAX + 1];
    char               other[GV_AM_NAME_MAX + 1]; /* the second name */
} named_t;

/* Where the next record to a rank goes, and where its buffer ends: the
 * open batch to a peer, the self buffer for the own rank, or NULL/NULL
 * (no room). The send fast paths read only this: one load, not the chain
 * peer -> batch -> length -> data. An open batch's len is brought up to
 * date from it when the batch closes. */
typedef gv__am_cursor_t cursor_t;

/* What gv_am_send_u64()'s inline fast path reads (grapevine/am.h): the
 * cursors, the bounds it checks, and the send counters it bumps. This
 * file reads it by its exported name, which under -fPIC costs a load of
 * its address from the GOT (and gv_am_send a saved register), and must:
 * a program linked against libgrapevine.so gets its own copy of it (a
 * copy relocation) that the library's GOT then points to. A local alias
 * would keep the library on the original, and the program's inline path
 * would see a rank count of 0 forever (make install-check tests this). */
struct gv__am_hot gv__am_hot;

/* A gv_am_send_nbi() message the transport sends from the caller's buffer:
 * the header must outlive the call too, so it lives here. */
typedef struct nbi_req {
    gv_req_t        req;
    struct nbi_req *next;
    int             dst;
    uint8_t         hdr[sizeof(gv_wire_frag_t)];
} nbi_req_t;

/* Record bytes of the lone area: an 8-byte request is 12. */
#define LONE_MAX 120

/* Barrier waves: a reduction up a binary tree, a broadcast down. */
enum { CTRL_UP = 1, CTRL_DOWN = 2 };
typedef struct {
    uint32_t wave;
    uint32_t pad;
    uint64_t vals[2];
} ctrl_msg_t;
typedef struct {
    int      nup, down;
    unsigned up_from;  /* bit c: child 2 * rank + 1 + c has sent UP */
    uint64_t sum[2];
    uint64_t result[2];
} wave_slot_t;

static struct {
    gv_tl_t      *tl;
    int           rank, size;
    int           aggregate;
    int           open_small;     /* aggregate, and every record of
                                     FAST_MAX bytes fits batch_max_rec */
    size_t        agg_bytes;      /* records bytes per batch */
    size_t        batch_max_rec;  /* larger payloads travel on their own */
    uint64_t      timeout_ns;
    size_t        max_msg;        /* transport's, minus nothing */
    size_t        max_inline;
    size_t        now_zcopy_min;  /* gv_am_send_now() from here: zcopy */
    size_t        now_lim;        /* ... and straight to the transport
                                     below this payload size (0: never) */
    int           send_id;        /* the transport has am_send_id */
    unsigned      credits;        /* GV_AGG_CREDITS */
    handler_t     handlers[GV_AM_MAX_HANDLERS];
    unsigned      nhandlers_kept; /* registered before gv_init: kept */
    named_t     **named;          /* NAMED_SLOTS, allocated on first use */
    gv_am_id_t    am_named;       /* the announcement handler */
    peer_t       *peers;
    int          *backlog;        /* ranks with messages the tl refused */
    int           nbacklog;
    int          *openlist;       /* ranks with an open batch */
    int           nopen;
    /* The lone area: the first small message to a rank with nothing
     * queued (a request, a reply) goes here instead of into a batch, and
     * a flush hands it to the transport as it is, with no queue to keep.
     * One rank at a time; more messages to it append until it is full,
     * and then, or when anything else is sent to that rank, it becomes an
     * open batch (lone_promote). Only over transports that copy frames
     * this small (max_inline), so it is free again once am_send returns. */
    int           lone_dst;       /* its rank, or -1 */
    size_t        lone_cap;       /* record bytes it takes; 0: not used */
    uint64_t      lone_ns;        /* when progress first saw it */
    gv_req_t      lone_req;       /* never completes (max_inline) */
    uint64_t      lone[(HEADROOM + LONE_MAX) / 8]; /* header room, records */
    out_msg_t    *free_batches;
    unsigned      nfree_batches;
    nbi_req_t    *nbi_free;       /* spare gv_am_send_nbi() requests */
    uint64_t      nbi_pending;    /* ... and those the transport holds */
    unsigned      in_handler;
    uint64_t      handled_count;  /* for quiescence, rejected included */
    /* messages to self: a byte FIFO of batch records, filled up to
     * cur[rank].pos, allocated up to cur[rank].end */
    uint8_t      *self_buf;
    /* barrier */
    uint32_t      wave;
    wave_slot_t   slot[2];
    gv_am_stats_t stats;
    unsigned      rejects_logged;
} am = {.lone_dst = -1}; /* gv_flush() before gv_init() finds nothing */

/* ---- buffers ---------------------------------------------------------- */

/* Large messages that travel on their own (up to the transport's largest,
 * 4 MiB over tcp and mpi) keep a few buffers for reuse: a fresh one per
 * message costs an mmap, page faults and an munmap. */
#define BIG_MIN   (64u << 10)
#define BIG_CACHE 4

static out_msg_t *big_cache[BIG_CACHE];

static void msg_sent_cb(gv_req_t *req, gv_status_t status);

/* A fresh message with room for @a data_cap bytes after its headroom. */
static out_msg_t *msg_alloc(size_t data_cap, int is_batch)
{
    out_msg_t *m = gv_malloc(sizeof(*m) + HEADROOM + data_cap);

    m->data     = (uint8_t *)(m + 1) + HEADROOM;
    m->cap      = data_cap;
    m->req.cb   = msg_sent_cb;
    m->req.arg  = m;
    m->is_batch = (uint8_t)is_batch;
    m->ctrl     = 0;
    m->hdr_len  = sizeof(gv_wire_hdr_t);
    return m;
}

/* A spare AGG_BYTES batch, or NULL: the send path opens one per flush,
 * so the free list's pop stays inline (and allocates nothing, so that
 * send_open() stays a leaf). A batch keeps its 8-byte header. */
static inline out_msg_t *batch_pop(void)
{
    out_msg_t *m = am.free_batches;

    if (m != NULL) {
        am.free_batches = m->next;
        am.nfree_batches--;
    }
    return m;
}

/* A message that travels on its own, with @a data_cap bytes of data. */
static out_msg_t *msg_new(int dst, size_t data_cap)
{
    out_msg_t *m = NULL;
    unsigned   i;

    if (data_cap >= BIG_MIN) {
        for (i = 0; i < BIG_CACHE; i++) {
            if ((big_cache[i] != NULL) && (big_cache[i]->cap >= data_cap) &&
                (big_cache[i]->cap <= 4 * data_cap)) {
                m            = big_cache[i];
                big_cache[i] = NULL;
                break;
            }
        }
    }
    if (m == NULL)
        m = msg_alloc(data_cap, 0);
    m->next    = NULL;
    m->dst     = dst;
    m->len     = 0;
    m->ctrl    = 0;
    m->hdr_len = sizeof(gv_wire_hdr_t);
    return m;
}

static void msg_free_slow(out_msg_t *m)
{
    unsigned i;

    if (!m->is_batch && (m->cap >= BIG_MIN)) {
        for (i = 0; i < BIG_CACHE; i++) {
            if ((big_cache[i] == NULL) || (big_cache[i]->cap < m->cap)) {
                gv_free(big_cache[i]); /* keep the larger one */
                big_cache[i] = m;
                return;
            }
        }
    }
    gv_free(m);
}

/* Every flush frees a batch: its push on the free list stays inline. */
static inline void msg_free(out_msg_t *m)
{
    if (m->is_batch && (am.nfree_batches < 64)) {
        m->next         = am.free_batches;
        am.free_batches = m;
        am.nfree_batches++;
        return;
    }
    msg_free_slow(m);
}

/* The transport could not send to @a dst: stop the job, naming the rank
 * (during finalize gv__peer_failed() only forgets the peer). */
static void __attribute__((noinline)) send_failed(int dst, gv_status_t status)
{
    gv__peer_failed(dst, "send failed: %s", gv_status_str(status));
}

static void msg_sent_cb(gv_req_t *req, gv_status_t status)
{
    out_msg_t *m = req->arg;

    am.peers[m->dst].held--;
    am.peers[m->dst].inflight--;
    am.peers[m->dst].owed_ns = 0;
    if (status != GV_OK)
        send_failed(m->dst, status);
    msg_free(m);
}

static void set_hdr(out_msg_t *m, uint8_t type, uint16_t id)
{
    gv_wire_hdr_t h = {type, 0, id, (uint32_t)m->len};
    memcpy(m->hdr, &h, sizeof(h));
}

/* ---- queues ----------------------------------------------------------- */

/* Bytes of active messages held in send queues: an open or queued batch
 * counts whole, since its buffer is allocated whole. The barrier's own
 * 24-byte messages (at most two per destination and wave) are not
 * counted: the bound that queued_bytes_max checks is the users'. */
static inline size_t queued_size(const out_msg_t *m)
{
    return m->is_batch ? am.agg_bytes : m->ctrl ? 0 : m->len;
}

static inline void account(size_t n)
{
    am.stats.queued_bytes += n;
    if (am.stats.queued_bytes > am.stats.queued_bytes_max)
        am.stats.queued_bytes_max = am.stats.queued_bytes;
}

static void unaccount(const out_msg_t *m)
{
    am.stats.queued_bytes -= queued_size(m);
}

static inline void enqueue(peer_t *p, out_msg_t *m)
{
    if (p->tail != NULL)
        p->tail->next = m;
    else
        p->head = m;
    p->tail = m;
    p->queued++;
    account(queued_size(m));
}

/* The open list holds the ranks with an open batch (or one closed since
 * the last flush); each knows its slot, so that a flush takes it off in
 * O(1) however many ranks it holds. */
static inline void add_open(peer_t *p, int dst)
{
    p->dirty                = 1;
    p->open_slot            = am.nopen;
    am.openlist[am.nopen++] = dst;
}

/* Make the empty batch m dst's open batch, the tail of its queue. */
static inline void open_batch(peer_t *p, int dst, out_msg_t *m)
{
    cursor_t *c = &gv__am_hot.cur[dst];

    m->next    = NULL;
    m->dst     = dst;
    m->len     = 0;
    p->open    = m;
    p->open_ns = 0;
    c->pos     = m->data;
    c->end     = m->data + am.agg_bytes;
    enqueue(p, m);
    if (!p->dirty)
        add_open(p, dst);
}

/* Take dst (dirty) off the open list: the last entry moves into its slot. */
static inline void remove_open(int dst)
{
    peer_t *p    = &am.peers[dst];
    int     last = am.openlist[--am.nopen];

    am.openlist[p->open_slot] = last;
    am.peers[last].open_slot  = p->open_slot;
    p->dirty                  = 0;
}

/* Open a batch to dst, from the free list or freshly allocated. */
static void open_fresh(peer_t *p, int dst)
{
    out_msg_t *m = batch_pop();

    if (m == NULL)
        m = msg_alloc(am.agg_bytes, 1);
    open_batch(p, dst, m);
}

#define LONE_DATA ((uint8_t *)am.lone + HEADROOM)

/* The lone area's records become dst's open batch, the head of its queue
 * (the area is used only while that queue is empty, and everything that
 * queues or sends to its rank calls lone_settle() first). */
static void __attribute__((noinline)) lone_promote(void)
{
    int       dst = am.lone_dst;
    cursor_t *c   = &gv__am_hot.cur[dst];
    size_t    len = (size_t)(c->pos - LONE_DATA);

    am.lone_dst = -1;
    open_fresh(&am.peers[dst], dst);
    memcpy(c->pos, LONE_DATA, len);
    c->pos += len;
}

static void lone_req_cb(gv_req_t *req, gv_status_t status)
{
    (void)req;
    gv_fatal("transport %s completed a frame it had to copy (max_inline): "
             "%s", am.tl->ops->name, gv_status_str(status));
}

/* A transport that kept a message it promised to copy (am_send up to
 * max_inline, am_send_id up to max_id): the AM layer would reuse the
 * memory under it. */
static void __attribute__((noinline)) inline_kept(size_t bytes, int with_id)
{
    gv_fatal("transport %s kept a %zu-byte message after %s, within the "
             "%zu bytes it promised to copy (%s)", am.tl->ops->name, bytes,
             with_id ? "am_send_id" : "am_send",
             with_id ? am.now_lim - 1 : am.max_inline,
             with_id ? "max_id" : "max_inline");
}

static inline void lone_settle(int dst)
{
    if (__builtin_expect(am.lone_dst == dst, 0))
        lone_promote();
}

static void close_open(peer_t *p)
{
    out_msg_t *m = p->open;
    cursor_t  *c = &gv__am_hot.cur[p - am.peers];

    if (m == NULL)
        return;
    m->len = (size_t)(c->pos - m->data);
    c->pos = c->end = NULL;
    set_hdr(m, GV_WIRE_BATCH, 0);
    p->open = NULL;
}

/* Queue a message that travels on its own. The open batch, if any, is
 * closed first: it must stay the queue's tail, and the message must not
 * overtake what is already in it. */
static void enqueue_single(int dst, out_msg_t *m)
{
    peer_t *p = &am.peers[dst];

    lone_settle(dst);

    if (p->open != NULL) {
        close_open(p);
        remove_open(dst);
    }
    enqueue(p, m);
}

/* The transport took (or failed) the queue's head @a m, @a bytes in all:
 * off the queue, counted, and freed unless the transport still holds it. */
static inline void shipped(peer_t *p, int dst, out_msg_t *m,
                           gv_status_t status, size_t bytes)
{
    p->head = m->next;
    if (p->head == NULL)
        p->tail = NULL;
    p->queued--;
    p->owed_ns = 0;
    unaccount(m);
    am.stats.tl_msgs_sent++;
    am.stats.tl_bytes_sent += bytes;
    if (status == GV_OK) {
        msg_free(m);
    } else if (status == GV_INPROGRESS) {
        p->held++;
        p->inflight++;
    } else {
        send_failed(dst, status);
        msg_free(m);
    }
}

/* Hand queued messages to the transport until it refuses one. */
static void ship(int dst)
{
    peer_t     *p = &am.peers[dst];
    out_msg_t  *m;
    gv_status_t status;

    while (((m = p->head) != NULL) && (m != p->open)) {
        if (m->hdr_len == HEADROOM) {
            /* One contiguous frame: small ones are copied by the transport
             * anyway, and a receiver that gets a large one whole (ucx
             * eager) hands it up in place instead of joining header and
             * records in a buffer of its own. */
            uint8_t *f = m->data - HEADROOM;

            memcpy(f, m->hdr, HEADROOM);
            status = am.tl->ops->am_send(am.tl, dst, f, 0, f,
                                         HEADROOM + m->len, &m->req);
        } else {
            status = am.tl->ops->am_send(am.tl, dst, m->hdr, m->hdr_len,
                                         m->data, m->len, &m->req);
        }
        if (status == GV_ERR_NO_RESOURCE) {
            if (!p->backlogged) {
                p->backlogged              = 1;
                am.backlog[am.nbacklog++] = dst;
            }
            return;
        }
        shipped(p, dst, m, status, m->hdr_len + m->len);
    }
}

/* Close the open batch to dst, if any, and hand the queue to the
 * transport: what travels on its own must not overtake it. */
static void ship_open(int dst)
{
    peer_t *p = &am.peers[dst];

    lone_settle(dst);
    if (p->open != NULL) {
        close_open(p);
        remove_open(dst);
        ship(dst);
    }
}

/* Hand the @a len bytes of records at @a data (HEADROOM bytes of room
 * before them) to the transport as one frame, header in the headroom;
 * *flen_p is the frame's length. One record alone (a request, a reply)
 * travels as a plain message: its header goes where the record's ends,
 * and the frame is 4 bytes shorter. Over UCX shared memory a frame that
 * grows past a cache line of fifo element costs more than anything here.
 * On GV_ERR_NO_RESOURCE the records are as they were. */
static gv_status_t send_frame(int dst, uint8_t *data, size_t len,
                              gv_req_t *req, size_t *flen_p)
{
    uint8_t      *f    = data - HEADROOM;
    size_t        flen = HEADROOM + len;
    gv_wire_hdr_t h    = {GV_WIRE_BATCH, 0, 0, (uint32_t)len};
    uint16_t      rec[2];
    gv_status_t   status;

    memcpy(rec, data, sizeof(rec));
    if ((rec[1] != GV_WIRE_LONG_REC) && (gv_wire_pad4(4 + rec[1]) == len)) {
        h.type = GV_WIRE_AM;
        h.id   = rec[0];
        h.len  = rec[1];
        f      = data + 4 - sizeof(h);
        flen   = sizeof(h) + rec[1];
    }
    memcpy(f, &h, sizeof(h));
    status = am.tl->ops->am_send(am.tl, dst, f, 0, f, flen, req);
    if (status == GV_ERR_NO_RESOURCE)
        memcpy(data, rec, sizeof(rec)); /* the header overwrote it */
    *flen_p = flen;
    return status;
}

/* The common flush: the open batch is all that is queued to dst (a
 * request, a reply) and small enough that the transport copies it. Hand it
 * over as one frame without the queue walk; 0 if the transport has no room
 * now (nothing sent: the queue path retries). */
static int ship_lone(peer_t *p, int dst, out_msg_t *m)
{
    cursor_t   *c   = &gv__am_hot.cur[dst];
    size_t      len = (size_t)(c->pos - m->data);
    size_t      flen;
    gv_status_t status;

    if (HEADROOM + len > am.max_inline)
        return 0;
    status = send_frame(dst, m->data, len, &m->req, &flen);
    if (status == GV_ERR_NO_RESOURCE)
        return 0;
    c->pos = c->end = NULL;
    m->len  = len;
    p->open = NULL;
    remove_open(dst);
    shipped(p, dst, m, status, flen);
    return 1;
}

static inline void count_internode_batch(int dst);

static void flush_peer(int dst, uint64_t *reason_counter)
{
    peer_t *p = &am.peers[dst];

    if (p->open != NULL) {
        (*reason_counter)++;
        count_internode_batch(dst);
        if ((p->head == p->open) && ship_lone(p, dst, p->open))
            return;
        close_open(p);
    }
    if (p->dirty)
        remove_open(dst);
    ship(dst);
}

/* Hand the lone area to the transport as one frame (send_frame). If the
 * transport has no room, the records become an open batch, which the
 * caller's flush of the open list then queues. */
static void __attribute__((noinline)) lone_ship(uint64_t *reason_counter)
{
    int         dst = am.lone_dst;
    cursor_t   *c   = &gv__am_hot.cur[dst];
    size_t      flen;
    gv_status_t status;

    status = send_frame(dst, LONE_DATA, (size_t)(c->pos - LONE_DATA),
                        &am.lone_req, &flen);
    if (status == GV_ERR_NO_RESOURCE) {
        lone_promote();
        return;
    }
    if (status == GV_INPROGRESS)
        inline_kept(flen, 0);
    c->pos = c->end = NULL;
    am.lone_dst     = -1;
    (*reason_counter)++;
    am.stats.tl_msgs_sent++;
    am.stats.tl_bytes_sent += flen;
    if (status != GV_OK)
        send_failed(dst, status);
}

/* Buffers of ours to dst beyond its open batch: queued here, or accepted
 * by the transport and not yet completed (what it sends from them, or a
 * copy the library below keeps until the receiver takes it). */
static inline unsigned owed(const peer_t *p)
{
    return p->queued - (p->open != NULL) + p->inflight;
}

/* Outside handlers, a sender that owes dst more than @a limit buffers
 * progresses until the transport took and completed enough: memory held
 * per destination stays bounded. */
static void drain_to(int dst, unsigned limit)
{
    peer_t     *p = &am.peers[dst];
    gv_waiter_t w;

    if ((owed(p) <= limit) || (am.in_handler > 0))
        return;
    am.stats.credit_stalls++;
    gv__wait_begin_send(&w);
    while ((owed(p) > limit) && !gv__is_failed(dst)) {
        ship(dst);
        if (owed(p) > limit)
            gv__wait_poll(&w);
    }
}

/* ---- receive ---------------------------------------------------------- */

static void reject(int src, const char *why)
{
    am.stats.rejected++;
    if (am.rejects_logged++ < REJECT_LOG_MAX)
        gv_warn("rejected a message from rank %d: %s", src, why);
}

static named_t *named_at(unsigned id)
{
    if ((am.named == NULL) || (id < NAMED_BASE) || (id >= NAMED_END))
        return NULL;
    return am.named[id - NAMED_BASE];
}

/* Whether this rank may send with @a id: a collective id, or a name it
 * registered or looked up (so that its announcement went first). */
static inline int id_ok(unsigned id)
{
    named_t *n;

    if (id < gv__am_hot.nhandlers)
        return 1;
    n = named_at(id);
    return (n != NULL) && (n->state == NAMED_MINE) && !n->poisoned;
}

/* A message for an id with no handler here: rejected, naming the id and
 * what this rank knows of it. */
static void __attribute__((noinline)) reject_id(int src, unsigned id)
{
    named_t *n = named_at(id);
    char     why[2 * GV_AM_NAME_MAX + 200];

    if (id < NAMED_BASE)
        snprintf(why, sizeof(why), "handler id %u is not registered on "
                 "this rank (%u registered; gv_am_register() gives ids in "
                 "registration order, which every rank must share, and a "
                 "barrier must follow registrations after gv_init)", id,
                 gv__am_hot.nhandlers);
    else if ((n != NULL) && n->poisoned)
        snprintf(why, sizeof(why), "named handler id %u is shared by "
                 "\"%s\" and \"%s\" (a hash collision): messages to it are "
                 "refused; rename one", id, n->name, n->other);
    else if (n != NULL)
        snprintf(why, sizeof(why), "named handler id %u (\"%s\") is not "
                 "registered on this rank", id, n->name);
    else if (id < NAMED_END)
        snprintf(why, sizeof(why), "named handler id %u is not registered "
                 "on this rank, and no rank announced its name", id);
    else
        snprintf(why, sizeof(why), "handler id %u is out of range", id);
    reject(src, why);
}

/* A handler id at or past the collective ones: a named handler, or none. */
static void __attribute__((noinline))
dispatch_named(int src, unsigned id, const void *payload, size_t len)
{
    named_t *n = named_at(id);

    if ((n == NULL) || (n->fn == NULL) || n->poisoned) {
        reject_id(src, id);
        return;
    }
    n->fn(src, payload, len, n->arg);
}

static inline void dispatch(int src, uint16_t id, const void *payload,
                            size_t len)
{
    handler_t *h;

    /* Counted as handled even when rejected, so that quiescence still
     * terminates: the message arrived, it is just not run. */
    am.handled_count++;
    if (id >= gv__am_hot.nhandlers) {
        am.stats.msgs_recv++;
        am.stats.bytes_recv += len;
        am.in_handler++;
        dispatch_named(src, id, payload, len);
        am.in_handler--;
        return;
    }
    h = &am.handlers[id];
    am.stats.msgs_recv++;
    am.stats.bytes_recv += len;
    am.in_handler++;
    h->fn(src, payload, len, h->arg);
    am.in_handler--;
}

/* The hot loop of delivery: one batch's records, bookkeeping once per
 * batch rather than once per message. The cursor is a local copy, so that
 * it stays in registers across the handler calls. */
static int dispatch_batch(int src, gv_wire_cursor_t *cp, const char **why)
{
    gv_wire_cursor_t c = *cp;
    const uint8_t   *payload;
    uint64_t         n = 0, bytes = 0;
    size_t           plen;
    uint16_t         id;
    int              rc;

    am.in_handler++;
    while ((rc = gv_wire_rec_next(&c, &id, &payload, &plen, why)) ==
           GV_WIRE_REC_OK) {
        n++;
        if (__builtin_expect(id >= gv__am_hot.nhandlers, 0)) {
            bytes += plen;
            dispatch_named(src, id, payload, plen);
            continue;
        }
        bytes += plen;
        am.handlers[id].fn(src, payload, plen, am.handlers[id].arg);
    }
    am.in_handler--;
    *cp = c;
    /* Rejected records count as handled: they arrived (quiescence). */
    am.handled_count    += n;
    am.stats.msgs_recv  += n;
    am.stats.bytes_recv += bytes;
    return rc;
}

static void ctrl_recv(int src, uint16_t op, const uint8_t *p, size_t len);

static void recv_frag(int src, const uint8_t *data, size_t len)
{
    peer_t        *p = &am.peers[src];
    gv_wire_frag_t f;
    reasm_t       *r, **rp;

    if (len < sizeof(f)) {
        reject(src, "truncated fragment header");
        goto broken;
    }
    memcpy(&f, data, sizeof(f));
    if (f.h.len != len - sizeof(f) || f.total > GV_WIRE_MAX_PAYLOAD ||
        f.offset > f.total || f.h.len > f.total - f.offset) {
        reject(src, "fragment lengths do not add up");
        goto broken;
    }
    for (rp = &p->reasm; (*rp != NULL) && ((*rp)->stream != f.stream);
         rp = &(*rp)->next)
        ;
    r = *rp;
    if (f.offset == 0) {
        if ((r != NULL) || (p->nreasm >= REASM_MAX)) {
            reject(src, (r != NULL) ? "fragmented message restarted"
                                    : "too many fragmented messages at once");
            goto broken;
        }
        r         = gv_malloc(sizeof(*r));
        r->stream = f.stream;
        r->total  = f.total;
        r->got    = 0;
        r->id     = f.h.id;
        if ((p->spare != NULL) && (p->spare_cap >= f.total)) {
            r->buf   = p->spare;
            p->spare = NULL;
        } else {
            r->buf = gv_malloc(f.total);
        }
        r->next   = p->reasm;
        p->reasm  = r;
        rp        = &p->reasm;
        p->nreasm++;
    } else if ((r == NULL) || (f.offset != r->got) || (f.total != r->total) ||
               (f.h.id != r->id)) {
        reject(src, "fragment out of sequence");
        goto broken;
    }
    memcpy(r->buf + f.offset, data + sizeof(f), f.h.len);
    r->got += f.h.len;
    if (r->got == r->total) {
        *rp = r->next;
        p->nreasm--;
        dispatch(src, r->id, r->buf, r->total);
        if ((r->total <= SPARE_MAX) &&
            ((p->spare == NULL) || (p->spare_cap < r->total))) {
            gv_free(p->spare);
            p->spare     = r->buf;
            p->spare_cap = r->total;
        } else {
            gv_free(r->buf);
        }
        gv_free(r);
    }
    return;
broken:
    gv__peer_failed(src, "malformed fragment stream");
}

/* Everything am_recv() does not take on its fast path. Nothing here
 * trusts the bytes. */
static void __attribute__((noinline))
am_recv_slow(int src, const void *data, size_t len)
{
    const uint8_t   *d = data;
    gv_wire_hdr_t    h;
    gv_wire_cursor_t c;
    const char      *why = NULL;
    int              rc;

    if ((src < 0) || (src >= am.size)) {
        reject(src, "source rank out of range");
        return;
    }
    am.stats.tl_msgs_recv++;
    am.stats.tl_bytes_recv += len;
    if (len < sizeof(h)) {
        reject(src, "message shorter than its header");
        gv__peer_failed(src, "malformed message");
        return;
    }
    memcpy(&h, d, sizeof(h));
    if ((h.type != GV_WIRE_FRAG) && (h.len != len - sizeof(h))) {
        reject(src, "header length disagrees with the message length");
        gv__peer_failed(src, "malformed message");
        return;
    }
    switch (h.type) {
    case GV_WIRE_AM:
        dispatch(src, h.id, d + sizeof(h), h.len);
        return;
    case GV_WIRE_BATCH:
        c.p   = d + sizeof(h);
        c.end = d + len;
        rc    = dispatch_batch(src, &c, &why);
        if (rc == GV_WIRE_REC_BAD) {
            reject(src, why);
            gv__peer_failed(src, "malformed batch: %s", why);
        }
        return;
    case GV_WIRE_FRAG:
        recv_frag(src, d, len);
        return;
    case GV_WIRE_CTRL:
        ctrl_recv(src, h.id, d + sizeof(h), h.len);
        return;
    default:
        reject(src, "unknown message type");
        gv__peer_failed(src, "malformed message (type %u)", h.type);
    }
}

/* The transport's receive callback. One message whose header agrees
 * with its length (a request, a reply) is dispatched right here, with no
 * frame to set up beyond the handler call; anything else, malformed
 * included, goes to am_recv_slow(), which checks it all. */
static void am_recv(void *arg, int src, const void *data, size_t len)
{
    gv__libcall_saved_t saved;
    gv_wire_hdr_t       h;

    (void)arg;
    /* Handlers run on the library's time but are not the library's: the
     * monitor must not count a handler that computes. */
    gv__lib_out(&saved);
    if (__builtin_expect(((unsigned)src < (unsigned)am.size) &&
                             (len >= sizeof(h)), 1)) {
        memcpy(&h, data, sizeof(h));
        if (__builtin_expect((h.type == GV_WIRE_AM) &&
                                 (h.len == len - sizeof(h)), 1)) {
            am.stats.tl_msgs_recv++;
            am.stats.tl_bytes_recv += len;
            dispatch(src, h.id, (const uint8_t *)data + sizeof(h), h.len);
            gv__lib_back(&saved);
            return;
        }
    }
    am_recv_slow(src, data, len);
    gv__lib_back(&saved);
}

/* A message the transport carried with its id beside it (am_send_id):
 * the payload alone. The id is checked as a batch's are. */
static void am_recv_id(void *arg, int src, unsigned id, const void *data,
                       size_t len)
{
    gv__libcall_saved_t saved;

    (void)arg;
    gv__lib_out(&saved);
    if (__builtin_expect(((unsigned)src < (unsigned)am.size) &&
                             (len <= GV_WIRE_MAX_PAYLOAD), 1)) {
        am.stats.tl_msgs_recv++;
        am.stats.tl_bytes_recv += len;
        dispatch(src, (uint16_t)id, data, len);
    } else {
        reject(src, "a message of a bad size or from a bad rank");
    }
    gv__lib_back(&saved);
}

/* ---- routing (GV_AGG_ROUTE=node, node2) -------------------------------
 *
 * node: a message from rank s to a rank d on another node travels inside
 * an envelope {s, d, id, flags} to the rank of s's node that serves d's
 * node (its local index: d's node mod the ranks of s's node), which
 * aggregates what its node sends to that node into its one queue to the
 * serving rank there (index: s's node mod the ranks of d's node), which
 * hands it to d; d runs the handler with s as the source: at most three
 * hops, one between nodes.
 *
 * node2: the nodes are a grid of ceil(sqrt(nodes)) columns, node k at row
 * k / cols, column k % cols (the last row may be short). Two nodes in one
 * row or one column are linked; a message from node A to node B not
 * linked to it goes through C, the node in A's row and B's column, or,
 * when A is in the short last row and C does not exist, the node in B's
 * row and A's column. A node's links are served by its ranks in turn (the
 * row's nodes, then the column's, each list without A itself, the i-th
 * link by local index i mod the node's ranks), so a rank holds buffers to
 * the other ranks of its node and to about 2 sqrt(nodes) / (ranks per
 * node) ranks of other nodes. A hop between nodes goes from the rank that
 * serves the link on one side to the rank that serves it on the other;
 * on C the message may move once more within the node, to the rank that
 * serves the link to B: at most five hops, two between nodes.
 *
 * With either route the next hop is a function of (this rank, d) only: a
 * pair's messages always take the same hops, and each hop is FIFO (a
 * stash, below, then the queue), so per-pair order holds as with direct
 * sends. Messages within a node are ordinary transport messages, not
 * routed.
 *
 * Flow control through the relays: hop-by-hop credits in bytes, per link.
 * A link is a next hop and the position of the hop on the message's way:
 * how many hops the envelope has taken before it (0 at s, up to
 * rt.nlink - 1: 2 under node, 4 under node2). A hop does not carry it:
 * the rank receiving an envelope from rank u finds it by following the
 * hops from s until u (route_pos(), which checks that u is on the way
 * from s to d at all), and hands it on at that position plus one. Every
 * rank that hands an envelope to a link charges charge(len) to it
 * (rt.out) and may have at most rt.window bytes charged there (one
 * envelope more if it alone is larger). The hop returns the charge (a
 * credit message, rt.ack, coalesced per upstream rank and sent from
 * progress) once the envelope has left it: handled (the hop is d), or
 * accepted into its send queue to the next hop. A relay forwards inside
 * its handler, which must not wait: if its stash to the next link holds
 * anything, or its window there is full, or its queue to that rank would
 * grow past the credits of a direct sender ((credits + 1) buffers), the
 * envelope goes to the link's stash, a FIFO counted in queued_bytes, and
 * progress moves it on when there is room (and only then returns its
 * charge). So a slow or stopped next hop holds the upstream senders back,
 * and a relay holds at most what its upstream links' windows let in: its
 * memory bound is the direct one over its route's destinations plus
 * rt.window per upstream link, an (upstream rank, position) pair that may
 * hand it envelopes to forward (gv__am_route_upstreams()). A sender
 * outside handlers waits until its window to the first link (position 0)
 * has room and its stash there is empty; a handler's routed send never
 * waits: it stashes (bounded by what arrives, as every handler send).
 * Credit messages never wait either; they go out when their queue has
 * room, which it gets whatever the hop does.
 *
 * No deadlock, for any route whose ways have at most rt.nlink hops: a
 * rank waits (outside handlers only) for its queue to a rank to drain,
 * which needs nothing but that rank's receiving, or for credit on its
 * first link; while it waits it polls, so it keeps receiving, running
 * handlers, moving its stashes on and returning credit: a relay out of
 * credits still progresses its own receives. Credit on a link at position
 * i comes back once the envelope left its hop: at once if the hop is d
 * (the handler ran; never withheld), else once it left the hop's stash on
 * a link at position i + 1, which needs credit at position i + 1 and
 * queue room only. By induction from the last position down, every credit
 * comes back: waits go strictly forward along a way, so no wait closes a
 * cycle, whatever the ways' shapes. This is why windows and stashes are
 * per position: with one per rank pair, a rank's own envelopes could hold
 * the window its forwards need; and a kind of hop (first, node-to-node,
 * last) is not enough once a way takes two hops of a kind, as node2's
 * ways through C do (node to node, within C, node to node), where full
 * windows could wait on one another in a ring through three nodes.
 * Replies sent from handlers stash and do not wait, so they cannot close
 * a cycle; credit messages are outside the windows. gv_am_send_now
 * (ROUTE_NOW) flushes every hop as the envelope leaves it (from a stash
 * too), and waits for credit as gv_am_send does.
 *
 * Quiescence counts the message once at s (sent) and once at d
 * (handled): a relay takes its receive back when it forwards or stashes
 * the envelope. A credit message counts in rt.acks when it becomes owed
 * and once handled, so a barrier waits for the stashes to drain and the
 * credits to return. A stash to a failed hop is dropped, each envelope
 * counted as handled. */
typedef struct {
    uint32_t src, dst;
    uint16_t id, flags;
} route_hdr_t;
#define ROUTE_NOW 1u /* gv_am_send_now(): every hop ships at once */

/* Positions along a way: node2's five hops at most. */
#define ROUTE_MAX_HOPS 5
#define LINK(rank, pos) ((rank) * rt.nlink + (pos))

/* A FIFO of envelopes, each {upstream link, length} then the envelope
 * padded to 8 bytes: charge(length) bytes. */
typedef struct {
    uint8_t *buf;
    size_t   head, tail, cap;
} stash_t;
typedef struct {
    int32_t  up;  /* the link to return the charge on, or -1 (our own) */
    uint32_t len;
} stash_rec_t;

static struct {
    int       *node_of;  /* NULL: direct */
    int       *members;  /* the ranks by node, in rank order */
    int       *start;    /* node k's: members[start[k] .. start[k + 1]) */
    int        nnodes, mynode;
    gv__route_shape_t sh; /* the above, for gv__am_route_hop() */
    gv_am_id_t id;       /* the envelope's handler */
    gv_am_id_t ack;      /* the credit message's */
    int        nlink;    /* positions: the most hops a way takes */
    int        ups;      /* links that may hand us envelopes to forward */
    uint64_t   relayed;  /* messages this rank forwarded */
    size_t     window;   /* bytes charged per link at most */
    uint64_t  *out;      /* per link: charged, not returned yet */
    uint64_t  *ret;      /* per upstream link: to return */
    int       *pend;     /* upstream ranks with some ret > 0 */
    int        npend;
    stash_t   *stash;    /* per link */
    int       *stashed;  /* links with a stash */
    int        nstashed;
    uint64_t   acks;     /* credit messages owed or sent (quiescence) */
} rt;

static const char *const route_name[] = {"direct", "node", "node2"};

/* node2's grid: the smallest width whose square holds @a nnodes. */
static int grid_cols(int nnodes)
{
    int c = 1;

    while (c * c < nnodes)
        c++;
    return c;
}

/* Nodes in node @a a's row, and in its column, of a grid of @a cols
 * columns over @a nnodes nodes. */
static int grid_row_len(int a, int nnodes, int cols)
{
    int first = a - a % cols;

    return (nnodes - first < cols) ? nnodes - first : cols;
}

static int grid_col_len(int a, int nnodes, int cols)
{
    return (nnodes - 1 - a % cols) / cols + 1;
}

/* The link from node @a a to node @a n (in its row or column), numbered
 * from 0 over the row's nodes and then the column's, a itself left out. */
static int grid_link(int a, int n, int nnodes, int cols)
{
    int ca = a % cols, cn = n % cols, ra = a / cols, rn = n / cols;

    if (rn == ra)
        return cn - (cn > ca);
    return grid_row_len(a, nnodes, cols) - 1 + rn - (rn > ra);
}

/* The next node after @a a (!= @a b) on node2's way to node @a b. */
static int grid_next(int a, int b, int nnodes, int cols)
{
    int c;

    if ((a / cols == b / cols) || (a % cols == b % cols))
        return b;
    c = a - a % cols + b % cols; /* a's row, b's column */
    return (c < nnodes) ? c : b - b % cols + a % cols;
}

void gv__am_route_shape(gv__route_shape_t *sh, int route, const int *node_of,
                        int nnodes, int size, int *members, int *start)
{
    int i, k;

    memset(start, 0, ((size_t)nnodes + 1) * sizeof(int));
    for (i = 0; i < size; i++)
        start[node_of[i] + 1]++;
    for (k = 0; k < nnodes; k++)
        start[k + 1] += start[k];
    /* Fill each node's slice in rank order, using start[k] as a cursor,
     * then shift the cursors back. */
    for (i = 0; i < size; i++)
        members[start[node_of[i]]++] = i;
    for (k = nnodes; k > 0; k--)
        start[k] = start[k - 1];
    start[0]    = 0;
    sh->route   = route;
    sh->nnodes  = nnodes;
    sh->cols    = grid_cols(nnodes);
    sh->node_of = node_of;
    sh->members = members;
    sh->start   = start;
}

int gv__am_route_hop(const gv__route_shape_t *sh, int rank, int dst)
{
    int a = sh->node_of[rank], b = sh->node_of[dst], n, out, in, r;

    if (a == b)
        return dst;
    if (sh->route == GV_AGG_ROUTE_NODE2) {
        n   = grid_next(a, b, sh->nnodes, sh->cols);
        out = grid_link(a, n, sh->nnodes, sh->cols);
        in  = grid_link(n, a, sh->nnodes, sh->cols);
    } else {
        n   = b;
        out = b;
        in  = a;
    }
    r = sh->members[sh->start[a] + out % (sh->start[a + 1] - sh->start[a])];
    if (r != rank)
        return r;
    return sh->members[sh->start[n] + in % (sh->start[n + 1] - sh->start[n])];
}

/* Under GV_AGG_ROUTE=node: a batch to a rank on another node closed (the
 * node-to-node hop's batches, apart from the hops within a node). Per
 * batch, not per message. */
static inline void count_internode_batch(int dst)
{
    if (__builtin_expect(rt.node_of != NULL, 0) &&
        (rt.node_of[dst] != rt.mynode))
        am.stats.internode_batches++;
}

/* What an envelope of @a len bytes is charged, and takes in a stash. */
static inline size_t charge(size_t len)
{
    return sizeof(stash_rec_t) + ((len + 7) & ~(size_t)7);
}

/* The next rank on the way to @a dst (on another node than ours, or it). */
static int route_hop(int dst)
{
    return gv__am_route_hop(&rt.sh, am.rank, dst);
}

/* The position of rank @a from on the way from @a src to @a dst: the
 * hops from @a src to it (0 for @a src itself), or -1 if the way does not
 * pass @a from within rt.nlink - 1 hops. */
static int route_pos(int src, int from, int dst)
{
    int q = src, k;

    for (k = 0; (q != from) && (q != dst) && (k < rt.nlink); k++)
        q = gv__am_route_hop(&rt.sh, q, dst);
    return ((q == from) && (k < rt.nlink)) ? k : -1;
}

static void flush_now(int dst);
static gv_status_t send_slow(int dst, gv_am_id_t id, const void *payload,
                             size_t len, int now) __attribute__((noinline));

/* An envelope of @a len bytes went to @a hop: count it if it went into a
 * batch to another node. */
static inline void count_internode_msg(int hop, size_t len)
{
    if ((rt.node_of[hop] != rt.mynode) && am.aggregate &&
        (gv_wire_rec_size(len) <= am.batch_max_rec))
        am.stats.internode_msgs++;
}

static inline int window_room(int link, size_t c)
{
    return (rt.out[link] == 0) || (rt.out[link] + c <= rt.window);
}

/* Whether a message of @a len bytes to @a hop keeps its queue within a
 * direct sender's credits: it fits the open batch, or the queue owes at
 * most the credits once the open batch is closed. */
static int queue_room(int hop, size_t len)
{
    peer_t   *p   = &am.peers[hop];
    cursor_t *c   = &gv__am_hot.cur[hop];
    size_t    rec = gv_wire_rec_size(len);

    if (am.aggregate && (rec <= am.batch_max_rec) && (p->open != NULL) &&
        ((size_t)(c->end - c->pos) >= rec))
        return 1;
    return owed(p) + (p->open != NULL) <= am.credits;
}

/* Owe upstream link @a up (-1: nobody) the return of @a c bytes. */
static void credit_back(int up, size_t c)
{
    int r, k;

    if ((up < 0) || (rt.ret == NULL))
        return;
    r = up / rt.nlink;
    for (k = 0; (k < rt.nlink) && (rt.ret[LINK(r, k)] == 0); k++)
        ;
    if (k == rt.nlink) {
        rt.pend[rt.npend++] = r;
        rt.acks++;
    }
    rt.ret[up] += c;
}

/* Queue an envelope on @a link without waiting (as from a handler), not
 * counted as a message sent, and charge it there. */
static gv_status_t route_push(int link, const void *env, size_t len)
{
    int         hop = link / rt.nlink;
    gv_status_t status;

    am.in_handler++;
    status = send_slow(hop, rt.id, env, len, 0);
    am.in_handler--;
    if (status != GV_OK)
        return status;
    count_internode_msg(hop, len);
    gv__am_hot.msgs_sent--;
    gv__am_hot.bytes_sent -= len;
    rt.out[link] += charge(len);
    if (((const route_hdr_t *)env)->flags & ROUTE_NOW)
        flush_now(hop);
    return GV_OK;
}

static int stash_empty(int link)
{
    return rt.stash[link].head == rt.stash[link].tail;
}

static void stash_put(int link, const void *env, size_t len, int up)
{
    stash_t    *s = &rt.stash[link];
    stash_rec_t r = {up, (uint32_t)len};
    size_t      c = charge(len);

    if (s->head == s->tail) {
        s->head = s->tail = 0;
        rt.stashed[rt.nstashed++] = link;
    }
    if (s->tail + c > s->cap) {
        if (s->head > 0) {
            memmove(s->buf, s->buf + s->head, s->tail - s->head);
            s->tail -= s->head;
            s->head  = 0;
        }
        if (s->tail + c > s->cap) {
            s->cap = (s->cap * 2 > s->tail + c) ? s->cap * 2
                                                : s->tail + c + 4096;
            s->buf = gv_realloc(s->buf, s->cap);
        }
    }
    memcpy(s->buf + s->tail, &r, sizeof(r));
    memcpy(s->buf + s->tail + sizeof(r), env, len);
    s->tail += c;
    account(c);
}

/* Take an envelope of @a len bytes from upstream link @a up (-1: our own)
 * on along @a link without waiting: into the queue if nothing is stashed
 * there and the window and queue have room, else into the stash. */
static gv_status_t route_put(int link, const void *env, size_t len, int up)
{
    int         hop = link / rt.nlink;
    gv_status_t status;

    if (stash_empty(link) && window_room(link, charge(len)) &&
        queue_room(hop, len)) {
        status = route_push(link, env, len);
        credit_back(up, charge(len));
        return status;
    }
    if (gv__is_failed(hop)) {
        credit_back(up, charge(len));
        return GV_ERR_UNREACHABLE;
    }
    stash_put(link, env, len, up);
    return GV_OK;
}

/* Move @a link's stash on as far as its window and queue allow; drop it
 * if the hop failed. */
static unsigned stash_drain(int link)
{
    stash_t    *s   = &rt.stash[link];
    int         hop = link / rt.nlink, failed = gv__is_failed(hop);
    stash_rec_t r;
    unsigned    n = 0;

    while (s->head != s->tail) {
        const uint8_t *env = s->buf + s->head + sizeof(r);

        memcpy(&r, s->buf + s->head, sizeof(r));
        if (!failed && !(window_room(link, charge(r.len)) &&
                         queue_room(hop, r.len)))
            break;
        s->head += charge(r.len);
        am.stats.queued_bytes -= charge(r.len);
        if (failed || (route_push(link, env, r.len) != GV_OK))
            am.handled_count++; /* dropped: as handled, for quiescence */
        credit_back(r.up, charge(r.len));
        n++;
    }
    if ((s->head == s->tail) && (s->cap > 4 * rt.window)) {
        gv_free(s->buf);
        s->buf = NULL;
        s->cap = 0;
    }
    return n;
}

/* Progress's part: move stashes on, send the credits owed. */
static unsigned __attribute__((noinline)) route_progress(void)
{
    unsigned n = 0;
    int      i, k;

    for (i = 0; i < rt.nstashed;) {
        int link = rt.stashed[i];

        n += stash_drain(link);
        if (stash_empty(link))
            rt.stashed[i] = rt.stashed[--rt.nstashed];
        else
            i++;
    }
    for (i = 0; i < rt.npend;) {
        int      up = rt.pend[i];
        uint64_t v[ROUTE_MAX_HOPS];
        size_t   vlen = (size_t)rt.nlink * sizeof(v[0]);

        if (gv__is_failed(up)) {
            am.handled_count++; /* dropped: as handled */
        } else if (queue_room(up, vlen)) {
            for (k = 0; k < rt.nlink; k++)
                v[k] = rt.ret[LINK(up, k)];
            am.in_handler++;
            if (send_slow(up, rt.ack, v, vlen, 0) == GV_OK) {
                gv__am_hot.msgs_sent--; /* counted in rt.acks */
                gv__am_hot.bytes_sent -= vlen;
            } else {
                am.handled_count++;
            }
            am.in_handler--;
        } else {
            i++;
            continue;
        }
        for (k = 0; k < rt.nlink; k++)
            rt.ret[LINK(up, k)] = 0;
        rt.pend[i] = rt.pend[--rt.npend];
        n++;
    }
    return n;
}

/* Outside handlers: wait until nothing is stashed on @a link and its
 * window has room for @a c bytes more. */
static void route_wait(int link, size_t c)
{
    int         hop = link / rt.nlink;
    gv_waiter_t w;

    if (stash_empty(link) && window_room(link, c))
        return;
    am.stats.credit_stalls++;
    /* What we queued to it must leave for it to return the charge. */
    ship_open(hop);
    am.peers[hop].waiting++; /* the watchdog names a hop that stopped */
    gv__wait_begin_send(&w);
    while (!(stash_empty(link) && window_room(link, c)) &&
           !gv__is_failed(hop))
        gv__wait_poll(&w);
    if (!gv__is_failed(hop))
        am.peers[hop].waiting--;
}

/* send_slow() for a rank on another node: wrap, forward, count once. */
static gv_status_t __attribute__((noinline))
route_send(int dst, gv_am_id_t id, const void *payload, size_t len, int now)
{
    uint64_t    stack[(sizeof(route_hdr_t) + 256) / 8];
    uint8_t    *env = (uint8_t *)stack;
    route_hdr_t h   = {(uint32_t)am.rank, (uint32_t)dst, id,
                       now ? ROUTE_NOW : 0};
    size_t      elen = sizeof(h) + len;
    int         hop  = route_hop(dst), link = LINK(hop, 0);
    gv_status_t status;

    if (len > GV_WIRE_MAX_PAYLOAD - sizeof(h)) {
        gv_error("active message of %zu bytes to rank %d on another node: "
                 "GV_AGG_ROUTE=%s carries at most %zu (unset it for %u)",
                 len, dst, route_name[rt.sh.route],
                 GV_WIRE_MAX_PAYLOAD - sizeof(h), GV_WIRE_MAX_PAYLOAD);
        return GV_ERR_INVALID;
    }
    if (elen > sizeof(stack))
        env = gv_malloc(elen);
    memcpy(env, &h, sizeof(h));
    if (len > 0)
        memcpy(env + sizeof(h), payload, len);
    if (am.in_handler > 0) {
        status = route_put(link, env, elen, -1);
    } else {
        route_wait(link, charge(elen));
        /* Charged before send_slow(), whose wait for queue credit may
         * move a stash on this link meanwhile. */
        rt.out[link] += charge(elen);
        status = send_slow(hop, rt.id, env, elen, now);
        if (status == GV_OK) {
            count_internode_msg(hop, elen);
            gv__am_hot.msgs_sent--;
            gv__am_hot.bytes_sent -= elen;
            if (now)
                flush_now(hop);
        } else {
            rt.out[link] -= charge(elen);
        }
    }
    if (env != (uint8_t *)stack)
        gv_free(env);
    if (status == GV_OK) {
        gv__am_hot.msgs_sent++;
        gv__am_hot.bytes_sent += len;
    }
    return status;
}

/* The envelope's handler: run the message here, as from its source, or
 * take it on towards its destination. Either way the charge goes back to
 * the rank that sent it here, on the link it charged (its position on the
 * way), once the envelope has left this rank. */
static void route_cb(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *p = payload;
    route_hdr_t    h;
    int            pos = -1, hop = -1;

    (void)arg;
    if (len < sizeof(h)) {
        reject(src, "routed message shorter than its envelope");
        return;
    }
    memcpy(&h, p, sizeof(h));
    if ((rt.node_of != NULL) && (h.src < (uint32_t)am.size) &&
        (h.dst < (uint32_t)am.size) && (h.src != h.dst) &&
        (gv__am_route_hop(&rt.sh, src, (int)h.dst) == am.rank)) {
        pos = route_pos((int)h.src, src, (int)h.dst);
        if (h.dst != (uint32_t)am.rank)
            hop = route_hop((int)h.dst);
    }
    if ((pos < 0) ||
        ((h.dst != (uint32_t)am.rank) && (pos + 1 >= rt.nlink))) {
        reject(src, "routed message with a bad source or destination, or "
                    "not for this rank to forward (is GV_AGG_ROUTE the same "
                    "on every rank?)");
        return;
    }
    am.stats.bytes_recv -= sizeof(h);
    if (h.dst == (uint32_t)am.rank) {
        if (h.id >= gv__am_hot.nhandlers)
            dispatch_named((int)h.src, h.id, p + sizeof(h), len - sizeof(h));
        else
            am.handlers[h.id].fn((int)h.src, p + sizeof(h), len - sizeof(h),
                                 am.handlers[h.id].arg);
        credit_back(LINK(src, pos), charge(len));
        return;
    }
    /* A relay: the message is neither received nor sent here. If the next
     * hop failed, it counts as handled here (dropped), as a rejected one. */
    if (route_put(LINK(hop, pos + 1), payload, len, LINK(src, pos)) ==
        GV_OK) {
        am.handled_count--;
        am.stats.msgs_recv--;
        am.stats.bytes_recv -= len - sizeof(h);
        rt.relayed++;
    }
}

/* A credit message: @a src returns charge of ours, per position. */
static void route_ack_cb(int src, const void *payload, size_t len, void *arg)
{
    uint64_t v[ROUTE_MAX_HOPS];
    int      k;

    (void)arg;
    am.stats.msgs_recv--; /* not a user's message */
    am.stats.bytes_recv -= len;
    if ((rt.out == NULL) || (len != (size_t)rt.nlink * sizeof(v[0]))) {
        reject(src, "malformed routing credit message");
        return;
    }
    memcpy(v, payload, len);
    for (k = 0; k < rt.nlink; k++) {
        if (v[k] > rt.out[LINK(src, k)]) {
            reject(src, "routing credit larger than what was charged there");
            return;
        }
    }
    for (k = 0; k < rt.nlink; k++)
        rt.out[LINK(src, k)] -= v[k];
}

int gv__am_route_peers(int route, const int *node_of, int nnodes, int size,
                       int rank)
{
    int i, local = 0, idx = 0, links, me = node_of[rank], cols;

    if ((route == GV_AGG_ROUTE_DIRECT) || (nnodes <= 1))
        return size - 1;
    for (i = 0; i < size; i++) {
        if (node_of[i] == me) {
            if (i < rank)
                idx++;
            local++;
        }
    }
    if (route == GV_AGG_ROUTE_NODE2) {
        /* Links 0 .. links - 1, the i-th served by local index i mod
         * local (gv__am_route_hop). */
        cols  = grid_cols(nnodes);
        links = grid_row_len(me, nnodes, cols) - 1 +
                grid_col_len(me, nnodes, cols) - 1;
        return local - 1 + links / local + (idx < links % local);
    }
    links = 0;
    for (i = 0; i < nnodes; i++)
        if ((i != me) && (i % local == idx))
            links++;
    return local - 1 + links;
}

/* A set of upstream links, each upstream rank x ROUTE_MAX_HOPS +
 * position, duplicates allowed until counted. */
typedef struct {
    int   *key;
    size_t n, cap;
} linkset_t;

static void linkset_add(linkset_t *ls, int key)
{
    if (ls->n == ls->cap) {
        ls->cap = ls->cap ? 2 * ls->cap : 64;
        ls->key = gv_realloc(ls->key, ls->cap * sizeof(int));
    }
    ls->key[ls->n++] = key;
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;

    return (x > y) - (x < y);
}

/* Add to @a marks the links (upstream rank, position) on which rank @a x,
 * not on node @a a, receives envelopes to forward on the ways from node
 * @a a's ranks to node @a b's. A way from a rank of a other than r1, the
 * one serving the first link, goes to r1 and on as r1's own, one position
 * later: r1's way, walked at both offsets, covers all of a's ranks. */
static void upstream_walk(const gv__route_shape_t *sh, int x, int a, int b,
                          linkset_t *marks)
{
    int q, nq, k, off, db = sh->members[sh->start[b]];
    int la = sh->start[a + 1] - sh->start[a];
    int lb = sh->start[b + 1] - sh->start[b];
    int r1 = gv__am_route_hop(sh, sh->members[sh->start[a]], db);

    if (sh->node_of[r1] != a)
        r1 = sh->members[sh->start[a]];
    for (off = 0; off < ((la > 1) ? 2 : 1); off++) {
        q = r1;
        for (k = off; (sh->node_of[q] != b) && (k < ROUTE_MAX_HOPS); k++) {
            nq = gv__am_route_hop(sh, q, db);
            /* On b, the rank the way enters by forwards to the others. */
            if ((nq == x) && ((sh->node_of[x] != b) || (lb > 1)))
                linkset_add(marks, q * ROUTE_MAX_HOPS + k);
            q = nq;
        }
    }
}

/* node2: node @a a's linked nodes, its row's then its column's without
 * itself, in the order of its links (grid_link); returns their number. */
static int grid_line(int a, int nnodes, int cols, int *line)
{
    int k, n = 0;

    for (k = a - a % cols; (k < nnodes) && (k / cols == a / cols); k++)
        if (k != a)
            line[n++] = k;
    for (k = a % cols; k < nnodes; k += cols)
        if (k != a)
            line[n++] = k;
    return n;
}

int gv__am_route_upstreams(int route, const int *node_of, int nnodes,
                           int size, int rank)
{
    gv__route_shape_t sh;
    linkset_t         marks = {NULL, 0, 0};
    int              *members, *start, *line, *nline_of;
    int               me = node_of[rank], local, idx, a, b, i, j, m;
    int               nline, first = 0, n = 0;

    if ((route == GV_AGG_ROUTE_DIRECT) || (nnodes <= 1))
        return 0;
    members = gv_malloc((size_t)size * sizeof(int));
    start   = gv_malloc(((size_t)nnodes + 1) * sizeof(int));
    gv__am_route_shape(&sh, route, node_of, nnodes, size, members, start);
    /* node: every other node; node2: a row and a column, twice. */
    line     = gv_malloc(((size_t)nnodes + 4 * ((size_t)sh.cols + 1)) *
                         sizeof(int));
    nline_of = line + nnodes + 2 * ((size_t)sh.cols + 1);
    local    = start[me + 1] - start[me];
    for (idx = 0; members[start[me] + idx] != rank; idx++)
        ;
    /* The nodes this rank serves: the links i with i mod local == idx
     * (gv__am_route_hop). A way enters a node only by the rank serving
     * the link it comes by, so this rank forwards only what comes by its
     * links (to the node's other ranks, or on through the node), and,
     * as the first hop, what its node's other ranks send by them. */
    if (route == GV_AGG_ROUTE_NODE2)
        nline = grid_line(me, nnodes, sh.cols, line);
    else
        for (a = 0, nline = 0; a < nnodes; a++)
            if (a != me)
                line[nline++] = a;
    for (i = 0; i < nline; i++) {
        /* node2's link i; node's link to node line[i]. */
        if (((route == GV_AGG_ROUTE_NODE2) ? i : line[i]) % local != idx)
            continue;
        first = 1;
        b = line[i];
        upstream_walk(&sh, rank, b, me, &marks);
        if (route != GV_AGG_ROUTE_NODE2)
            continue;
        /* node2, through b to this node; from b through this node; and
         * through this node to b. */
        m = grid_line(b, nnodes, sh.cols, nline_of);
        for (j = 0; j < m; j++)
            if ((nline_of[j] != me) &&
                (grid_next(nline_of[j], me, nnodes, sh.cols) == b))
                upstream_walk(&sh, rank, nline_of[j], me, &marks);
        for (j = 0; j < nline; j++) {
            if ((line[j] != b) &&
                (grid_next(b, line[j], nnodes, sh.cols) == me))
                upstream_walk(&sh, rank, b, line[j], &marks);
            if ((line[j] != b) &&
                (grid_next(line[j], b, nnodes, sh.cols) == me))
                upstream_walk(&sh, rank, line[j], b, &marks);
        }
    }
    if (first && (local > 1))
        for (i = start[me]; i < start[me + 1]; i++)
            if (members[i] != rank)
                linkset_add(&marks, members[i] * ROUTE_MAX_HOPS);
    if (marks.n > 0)
        qsort(marks.key, marks.n, sizeof(int), int_cmp);
    for (i = 0; i < (int)marks.n; i++)
        n += (i == 0) || (marks.key[i] != marks.key[i - 1]);
    gv_free(line);
    gv_free(marks.key);
    gv_free(start);
    gv_free(members);
    return n;
}

void gv__am_route_start(void)
{
    int i, n = am.size;

    if ((gv__env.AGG_ROUTE == GV_AGG_ROUTE_DIRECT) || (am.tl == NULL) || (gv_nnodes() <= 1))
        return;
    rt.nnodes  = gv_nnodes();
    rt.node_of = gv_malloc((size_t)n * sizeof(int));
    rt.members = gv_malloc((size_t)n * sizeof(int));
    rt.start   = gv_malloc(((size_t)rt.nnodes + 1) * sizeof(int));
    for (i = 0; i < n; i++)
        rt.node_of[i] = gv_node_of(i);
    gv__am_route_shape(&rt.sh, (int)gv__env.AGG_ROUTE, rt.node_of,
                       rt.nnodes, n, rt.members, rt.start);
    rt.mynode  = rt.node_of[am.rank];
    rt.nlink   = (rt.sh.route == GV_AGG_ROUTE_NODE2) ? ROUTE_MAX_HOPS : 3;
    rt.window  = GV__AM_ROUTE_WINDOW_BATCHES * am.agg_bytes;
    rt.ups     = gv__am_route_upstreams(rt.sh.route, rt.node_of, rt.nnodes,
                                        n, am.rank);
    rt.out     = gv_calloc((size_t)n * rt.nlink, sizeof(*rt.out));
    rt.ret     = gv_calloc((size_t)n * rt.nlink, sizeof(*rt.ret));
    rt.pend    = gv_calloc((size_t)n, sizeof(*rt.pend));
    rt.stash   = gv_calloc((size_t)n * rt.nlink, sizeof(*rt.stash));
    rt.stashed = gv_calloc((size_t)n * rt.nlink, sizeof(*rt.stashed));
    /* Every message to another node takes send_slow(): no batch or lone
     * area opens to such a rank, and gv_am_send_now() always goes the
     * slow way (it ships the first hop at once and flags the rest). */
    am.open_small = 0;
    am.now_lim    = 0;
}

size_t gv__am_route_bound(void)
{
    int peers = am.size - 1, ups = 0;

    if (rt.node_of != NULL) {
        peers = gv__am_route_peers(rt.sh.route, rt.node_of, rt.nnodes,
                                   am.size, am.rank);
        ups   = rt.ups;
    }
    return (size_t)peers * gv__am_memory_bound() + (size_t)ups * rt.window;
}

/* ---- send ------------------------------------------------------------- */

static void self_push(gv_am_id_t id, const void *payload, size_t len)
{
    cursor_t *c    = &gv__am_hot.cur[am.rank];
    size_t    need = gv_wire_rec_size(len);

    if ((size_t)(c->end - c->pos) < need) {
        size_t used = (size_t)(c->pos - am.self_buf);
        size_t cap  = (size_t)(c->end - am.self_buf);

        cap         = (cap * 2 > used + need) ? cap * 2 : used + need + 4096;
        am.self_buf = gv_realloc(am.self_buf, cap);
        c->pos      = am.self_buf + used;
        c->end      = am.self_buf + cap;
    }
    c->pos += gv_wire_rec_put(c->pos, id, payload, len);
}

/* Deliver messages to self that were queued before this call, with the
 * batch loop (they are records like a batch's, written by us). */
static unsigned self_drain(void)
{
    gv_wire_cursor_t c;
    const char      *why;
    uint8_t         *buf;
    size_t           len, cap;
    uint64_t         before;
    cursor_t        *sc = &gv__am_hot.cur[am.rank];

    if (sc->pos == am.self_buf)
        return 0;
    /* Handlers may send to self again: take the current batch away. */
    buf         = am.self_buf;
    len         = (size_t)(sc->pos - buf);
    cap         = (size_t)(sc->end - buf);
    am.self_buf = NULL;
    sc->pos = sc->end = NULL;
    c.p         = buf;
    c.end       = buf + len;
    before      = am.handled_count;
    dispatch_batch(am.rank, &c, &why);
    am.stats.msgs_self += am.handled_count - before;
    if (am.self_buf == NULL) { /* keep the buffer if nobody made one */
        am.self_buf = buf;
        sc->pos     = buf;
        sc->end     = buf + cap;
    } else {
        gv_free(buf);
    }
    return (unsigned)(am.handled_count - before);
}

/* Hand hdr and payload to the transport as they are, with @a req for the
 * completion. Waits for send resources, except inside a handler or once
 * something got queued to dst before it (order): then GV_ERR_NO_RESOURCE,
 * nothing sent. */
static gv_status_t send_inplace(int dst, const void *hdr, size_t hdr_len,
                                const void *payload, size_t len,
                                gv_req_t *req)
{
    gv_waiter_t w;
    gv_status_t status;
    int         waiting = 0;

    gv__wait_begin_send(&w);
    for (;;) {
        /* Something queued to dst (or in the lone area, from a handler
         * that ran while we waited) goes first: the caller queues this
         * behind it. */
        if ((am.peers[dst].head != NULL) || (am.lone_dst == dst)) {
            status = GV_ERR_NO_RESOURCE;
            break;
        }
        status = am.tl->ops->am_send(am.tl, dst, hdr, hdr_len, payload, len,
                                     req);
        if ((status != GV_ERR_NO_RESOURCE) || (am.in_handler > 0))
            break;
        if (!waiting) {
            waiting = 1;
            am.peers[dst].waiting++;
        }
        gv__wait_poll(&w);
    }
    if (waiting)
        am.peers[dst].waiting--;
    return status;
}

/* Account for a message the transport took (or report why it did not). */
static inline void sent_inplace(int dst, gv_status_t status, size_t bytes)
{
    if (__builtin_expect((status != GV_OK) && (status != GV_INPROGRESS), 0)) {
        send_failed(dst, status);
        return;
    }
    am.peers[dst].owed_ns = 0;
    am.stats.tl_msgs_sent++;
    am.stats.tl_bytes_sent += bytes;
}

/* Try to hand one message straight to the transport, without a copy:
 * only when nothing is queued before it and the transport promised to
 * copy messages this small (max_inline). Outside handlers it waits for
 * send resources; inside one it gives up and the caller queues a copy. */
static int send_direct(int dst, const void *hdr, size_t hdr_len,
                       const void *payload, size_t len)
{
    gv_status_t status;

    if ((am.peers[dst].head != NULL) || (hdr_len + len > am.max_inline))
        return 0;
    status = send_inplace(dst, hdr, hdr_len, payload, len, NULL);
    if (status == GV_ERR_NO_RESOURCE)
        return 0;
    sent_inplace(dst, status, hdr_len + len);
    return 1;
}

/* A large message the transport would not copy: send it from the caller's
 * buffer and wait until the transport is done with it, instead of copying
 * it first (a copy per message halves bandwidth and its pages cost
 * faults). Only outside handlers (which must not wait), from @a min bytes
 * (BIG_MIN, or the transport's now_zcopy_min for gv_am_send_now()) and
 * with nothing queued before it; other workers may send meanwhile, and
 * the transports keep per-pair order for what they accepted. */
static int send_zcopy(int dst, const void *hdr, size_t hdr_len,
                      const void *payload, size_t len, size_t min)
{
    gv__wreq_t  r;
    gv_status_t status;

    if ((am.in_handler > 0) || (len < min) ||
        (hdr_len + len <= am.max_inline))
        return 0;
    gv__wreq_init(&r);
    status = send_inplace(dst, hdr, hdr_len, payload, len, &r.req);
    if (status == GV_ERR_NO_RESOURCE)
        return 0;
    if (status == GV_INPROGRESS) {
        am.peers[dst].held++;
        am.peers[dst].owed_ns = 0;
        status = gv__wreq_wait(&r);
        am.peers[dst].held--;
    }
    sent_inplace(dst, status, hdr_len + len);
    return 1;
}

static void nbi_done(gv_req_t *req, gv_status_t status)
{
    nbi_req_t *n = (nbi_req_t *)req;

    am.peers[n->dst].held--;
    am.peers[n->dst].owed_ns = 0;
    if (status != GV_OK)
        send_failed(n->dst, status);
    am.nbi_pending--;
    n->next     = am.nbi_free;
    am.nbi_free = n;
}

/* gv_am_send_nbi()'s large messages: hand the caller's buffer to the
 * transport and count it until the transport is done with it. Needs
 * nothing queued before it (order) and a transport that does not copy it
 * anyway (max_inline); inside a handler, which must not wait, a refusal
 * leaves it to the copying path. */
static int send_nbi(int dst, const void *hdr, size_t hdr_len,
                    const void *payload, size_t len)
{
    nbi_req_t  *n;
    gv_status_t status;

    if ((am.peers[dst].head != NULL) || (hdr_len + len <= am.max_inline))
        return 0;
    if ((n = am.nbi_free) != NULL) {
        am.nbi_free = n->next;
    } else {
        n         = gv_malloc(sizeof(*n));
        n->req.cb = nbi_done;
    }
    n->dst = dst;
    memcpy(n->hdr, hdr, hdr_len);
    status = send_inplace(dst, n->hdr, hdr_len, payload, len, &n->req);
    if (status == GV_INPROGRESS) {
        am.nbi_pending++;
        am.peers[dst].held++;
    } else {
        n->next     = am.nbi_free;
        am.nbi_free = n;
        if (status == GV_ERR_NO_RESOURCE)
            return 0;
    }
    sent_inplace(dst, status, hdr_len + len);
    return 1;
}

static int nbi_idle(void *arg)
{
    (void)arg;
    return am.nbi_pending == 0;
}

void gv_am_wait_local(void)
{
    if (am.nbi_pending != 0)
        gv_wait(nbi_idle, NULL);
}

/* A message larger than the transport carries travels as fragments of one
 * stream. Waiting between fragments may run handlers or other workers that
 * send to dst too, even large messages: streams carry ids, so the receiver
 * reassembles interleaved ones. */
static void send_large(int dst, gv_am_id_t id, const uint8_t *payload,
                       size_t len, int nbi)
{
    peer_t  *p      = &am.peers[dst];
    size_t   chunk  = am.max_msg - sizeof(gv_wire_frag_t);
    size_t   off    = 0;
    uint32_t stream = p->next_stream++;

    do {
        size_t         n = (len - off < chunk) ? len - off : chunk;
        gv_wire_frag_t f = {{GV_WIRE_FRAG, 0, id, (uint32_t)n},
                            (uint32_t)len, (uint32_t)off, stream};
        out_msg_t     *m;

        ship_open(dst);
        if (!(nbi && send_nbi(dst, &f, sizeof(f), payload + off, n)) &&
            !send_direct(dst, &f, sizeof(f), payload + off, n) &&
            !send_zcopy(dst, &f, sizeof(f), payload + off, n, BIG_MIN)) {
            m = msg_new(dst, n);
            memcpy(m->hdr, &f, sizeof(f));
            m->hdr_len = sizeof(f);
            m->len     = n;
            memcpy(m->data, payload + off, n);
            enqueue_single(dst, m);
            ship(dst);
            drain_to(dst, am.credits);
        }
        off += n;
    } while (off < len);
}

/* Append a record of a payload of at most FAST_MAX bytes with word moves
 * and no library call, so that the fast path stays a leaf (no frame, no
 * saved registers): an 8-byte update is a few moves. */
#define FAST_MAX 64
static inline void rec_put_small(uint8_t *p, uint16_t id, const void *payload,
                                 size_t len)
{
    const uint8_t *s = payload;
    uint16_t       l = (uint16_t)len;
    uint64_t       w;

    memcpy(p, &id, 2);
    memcpy(p + 2, &l, 2);
    p += 4;
    if (len == 8) { /* a word: GUPS's update, a delegate's operand */
        memcpy(&w, s, 8);
        memcpy(p, &w, 8);
        return;
    }
    for (; len >= 8; len -= 8, s += 8, p += 8) {
        memcpy(&w, s, 8);
        memcpy(p, &w, 8);
        __asm__("" : "+r"(p)); /* keep it a loop of moves, not memcpy() */
    }
    for (; len > 0; len--)
        *p++ = *s++;
}

static gv_status_t send_open(int dst, gv_am_id_t id, const void *payload,
                             size_t len) __attribute__((noinline));
static void send_alone(int dst, gv_am_id_t id, const void *payload,
                       size_t len, int nbi, int now);

/* The fast path is a leaf: a small message to a peer whose open batch has
 * room. Everything else goes out of line, so the common case saves no
 * registers and calls nothing. */
gv_status_t gv_am_send(int dst, gv_am_id_t id, const void *payload,
                       size_t len)
{
    if (__builtin_expect(((unsigned)dst < (unsigned)am.size) &&
                             (id < gv__am_hot.nhandlers) &&
                             (len <= FAST_MAX) &&
                             ((payload != NULL) || (len == 0)),
                         1)) {
        cursor_t *c   = &gv__am_hot.cur[dst];
        size_t    rec = gv_wire_pad4(4 + len);
        if ((size_t)(c->end - c->pos) >= rec) {
            rec_put_small(c->pos, id, payload, len);
            c->pos += rec;
            gv__am_hot.msgs_sent++;
            gv__am_hot.bytes_sent += len;
            return GV_OK;
        }
        /* No batch open to a peer (a request, a reply): open one. */
        if ((c->pos == NULL) && (dst != am.rank) && am.open_small)
            return send_open(dst, id, payload, len);
    }
    return send_slow(dst, id, payload, len, 0);
}

/* gv_am_send_u64() when its inline path has no room: out of line, so
 * that its caller need not keep the value in memory. */
gv_status_t gv__am_send_u64_slow(int dst, gv_am_id_t id, uint64_t value)
{
    return gv_am_send(dst, id, &value, sizeof(value));
}

/* gv_am_send() with no batch open to peer dst and a record it checked,
 * of at most FAST_MAX bytes: open a batch from the free list and put the
 * record in. A leaf like the fast path (send_slow allocates), so that it
 * saves no registers: the first message to a peer after a flush is a
 * request or a reply, whose latency counts. */
static gv_status_t send_open(int dst, gv_am_id_t id, const void *payload,
                             size_t len)
{
    cursor_t  *c   = &gv__am_hot.cur[dst];
    size_t     rec = gv_wire_pad4(4 + len);
    out_msg_t *m;

    /* A failed peer, or no batch open to dst (the cursor says so) while
     * owing it all its credits already: the sender takes the slow path
     * (send_slow), which waits first. */
    if (__builtin_expect(gv__ctx.nfailed > 0, 0) ||
        (am.peers[dst].queued + am.peers[dst].inflight > am.credits))
        return send_slow(dst, id, payload, len, 0);
    if ((am.lone_dst < 0) && (rec <= am.lone_cap) &&
        (am.peers[dst].head == NULL)) {
        am.lone_dst = dst;
        am.lone_ns  = 0;
        c->pos      = LONE_DATA;
        c->end      = LONE_DATA + am.lone_cap;
    } else {
        if ((m = batch_pop()) == NULL)
            return send_slow(dst, id, payload, len, 0);
        open_batch(&am.peers[dst], dst, m);
    }
    rec_put_small(c->pos, id, payload, len);
    c->pos += rec;
    gv__am_hot.msgs_sent++;
    gv__am_hot.bytes_sent += len;
    return GV_OK;
}

/* gv_am_send()'s path for all but a small message into an open batch;
 * @a now: for gv_am_send_now(). */
static gv_status_t send_slow(int dst, gv_am_id_t id, const void *payload,
                             size_t len, int now)
{
    peer_t    *p;
    out_msg_t *m;
    size_t     rec;

    if (am.tl == NULL) {
        gv_error("active message sent outside gv_init() .. gv_finalize()");
        return GV_ERR_INVALID;
    }
    if (((unsigned)dst >= (unsigned)am.size) || !id_ok(id) ||
        (len > GV_WIRE_MAX_PAYLOAD) || ((payload == NULL) && (len > 0))) {
        named_t *n = named_at(id);

        gv_error("bad active message: rank %d of %d, handler %u (%s%s%s), "
                 "%zu bytes (at most %u)", dst, am.size, id,
                 (id < gv__am_hot.nhandlers) ? "registered"
                 : (id < NAMED_BASE)        ? "not registered"
                 : (n == NULL)              ? "no such name registered or "
                                              "looked up here"
                 : n->poisoned              ? "two names collide at it: "
                                              "rename one; "
                                            : "not looked up here: "
                                              "gv_am_id_named() first; ",
                 ((n != NULL) && (id >= NAMED_BASE)) ? "name " : "",
                 ((n != NULL) && (id >= NAMED_BASE)) ? n->name : "", len,
                 GV_WIRE_MAX_PAYLOAD);
        return GV_ERR_INVALID;
    }
    if (__builtin_expect(gv__ctx.nfailed > 0, 0) && gv__is_failed(dst))
        return GV_ERR_UNREACHABLE;
    if (__builtin_expect(rt.node_of != NULL, 0) && (dst != am.rank) &&
        (rt.node_of[dst] != rt.mynode) && (id != rt.id) && (id != rt.ack))
        return route_send(dst, id, payload, len, now);
    gv__am_hot.msgs_sent++;
    gv__am_hot.bytes_sent += len;
    if (dst == am.rank) {
        self_push(id, payload, len);
        return GV_OK;
    }
    lone_settle(dst);
    p   = &am.peers[dst];
    rec = gv_wire_rec_size(len);
    if (am.aggregate && (rec <= am.batch_max_rec)) {
        /* Waiting for credit runs handlers (and other workers) that may
         * send to dst as well and open a batch: look again after it. */
        cursor_t *c = &gv__am_hot.cur[dst];

        while (((m = p->open) == NULL) || ((size_t)(c->end - c->pos) < rec)) {
            if (m == NULL) {
                /* A batch closed by the timeout or an idle flush and
                 * refused by the transport, or one it holds, is owed
                 * too: no fresh one past the credits. */
                if ((owed(p) > am.credits) && (am.in_handler == 0)) {
                    drain_to(dst, am.credits);
                    lone_settle(dst);
                    continue;
                }
                open_fresh(p, dst);
                break;
            }
            close_open(p); /* full: ship it */
            am.stats.flush_full++;
            count_internode_batch(dst);
            ship(dst);
            drain_to(dst, am.credits);
            /* The wait may have sent to dst from a handler or a hook into
             * the lone area: its records go first. */
            lone_settle(dst);
        }
        if (len <= FAST_MAX) {
            rec_put_small(c->pos, id, payload, len);
            c->pos += rec;
        } else {
            c->pos += gv_wire_rec_put(c->pos, id, payload, len);
        }
        return GV_OK;
    }
    send_alone(dst, id, payload, len, 0, now);
    return GV_OK;
}

/* A message that travels on its own: close the open batch first so that
 * order holds. A request or reply (@a now) goes from the caller's memory
 * from the transport's now_zcopy_min: over ofi and mpi a copy of 16-64 KiB
 * cost more than waiting for the library
 * (perf/notes/ofi-shm-split-messages.md); a stream of gv_am_send()s keeps
 * the copies, which let the messages overlap. */
static void send_alone(int dst, gv_am_id_t id, const void *payload,
                       size_t len, int nbi, int now)
{
    out_msg_t *m;

    ship_open(dst);
    if (sizeof(gv_wire_hdr_t) + len > am.max_msg) {
        send_large(dst, id, payload, len, nbi);
        return;
    }
    {
        gv_wire_hdr_t h = {GV_WIRE_AM, 0, id, (uint32_t)len};
        if ((nbi && send_nbi(dst, &h, sizeof(h), payload, len)) ||
            send_direct(dst, &h, sizeof(h), payload, len) ||
            send_zcopy(dst, &h, sizeof(h), payload, len,
                       now ? am.now_zcopy_min : BIG_MIN))
            return;
    }
    m      = msg_new(dst, len);
    m->len = len;
    if (len > 0)
        memcpy(m->data, payload, len);
    set_hdr(m, GV_WIRE_AM, id);
    enqueue_single(dst, m);
    ship(dst);
    drain_to(dst, am.credits);
}

gv_status_t gv_am_send_nbi(int dst, gv_am_id_t id, const void *payload,
                           size_t len)
{
    /* What would be batched, or copied by the transport anyway, goes the
     * usual way; so does everything to self. */
    if (((unsigned)dst >= (unsigned)am.size) || (dst == am.rank) ||
        (id >= gv__am_hot.nhandlers) || (len > GV_WIRE_MAX_PAYLOAD) ||
        (payload == NULL) ||
        (am.aggregate && (gv_wire_rec_size(len) <= am.batch_max_rec)) ||
        (sizeof(gv_wire_hdr_t) + len <= am.max_inline) ||
        (gv__ctx.nfailed > 0) || (rt.node_of != NULL))
        return send_slow(dst, id, payload, len, 0);
    gv__am_hot.msgs_sent++;
    gv__am_hot.bytes_sent += len;
    send_alone(dst, id, payload, len, 1, 0);
    return GV_OK;
}

void gv_flush(void)
{
    if (am.lone_dst >= 0)
        lone_ship(&am.stats.flush_explicit);
    while (am.nopen > 0)
        flush_peer(am.openlist[am.nopen - 1], &am.stats.flush_explicit);
}

/* gv_am_send_now() when its message cannot go straight to the transport:
 * hand it over as gv_am_send() does (buffered, or from now_zcopy_min sent
 * from the caller's memory, waiting outside handlers), then ship what is
 * buffered to dst. */
static void flush_now(int dst)
{
    if (am.lone_dst == dst)
        lone_ship(&am.stats.flush_explicit); /* no room: now a batch */
    if ((am.peers[dst].open != NULL) || (am.peers[dst].head != NULL))
        flush_peer(dst, &am.stats.flush_explicit);
}

static gv_status_t __attribute__((noinline))
send_now_slow(int dst, gv_am_id_t id, const void *payload, size_t len)
{
    gv_status_t status = ((len > FAST_MAX) || (rt.node_of != NULL))
                             ? send_slow(dst, id, payload, len, 1)
                             : gv_am_send(dst, id, payload, len);

    if ((status != GV_OK) || (dst == am.rank))
        return status;
    flush_now(dst);
    return GV_OK;
}

/* The path of a request or a reply whose latency counts: nothing is
 * buffered or queued to dst (so order holds) and the transport copies a
 * message this small before it returns (max_id with am_send_id, else
 * max_inline with our header: now_lim), so the message goes to it from
 * the caller's memory, with no record built and read back. */
gv_status_t gv_am_send_now(int dst, gv_am_id_t id, const void *payload,
                           size_t len)
{
    if (__builtin_expect(((unsigned)dst < (unsigned)am.size) &&
                             (dst != am.rank) &&
                             (id < gv__am_hot.nhandlers) &&
                             (len < am.now_lim) &&
                             ((payload != NULL) || (len == 0)) &&
                             (gv__am_hot.cur[dst].pos == NULL) &&
                             (am.peers[dst].head == NULL),
                         1)) {
        gv_status_t status;
        size_t      flen;

        if (am.send_id) { /* the id beside the payload, not before it */
            flen   = len;
            status = am.tl->ops->am_send_id(am.tl, dst, id, payload, len);
        } else {
            gv_wire_hdr_t h = {GV_WIRE_AM, 0, id, (uint32_t)len};

            flen   = sizeof(h) + len;
            status = am.tl->ops->am_send(am.tl, dst, &h, sizeof(h), payload,
                                         len, NULL);
        }
        if (__builtin_expect(status != GV_ERR_NO_RESOURCE, 1)) {
            if (__builtin_expect(status == GV_INPROGRESS, 0))
                inline_kept(flen, am.send_id);
            /* As gv_am_send() accounts a message it hands over (and
             * reports a failed send the same way). */
            gv__am_hot.msgs_sent++;
            gv__am_hot.bytes_sent += len;
            sent_inplace(dst, status, flen);
            return (status == GV_ERR_UNREACHABLE) ? status : GV_OK;
        }
    }
    return send_now_slow(dst, id, payload, len);
}

void gv__am_idle(void)
{
    if (am.lone_dst >= 0)
        lone_ship(&am.stats.flush_idle);
    while (am.nopen > 0)
        flush_peer(am.openlist[am.nopen - 1], &am.stats.flush_idle);
}

int gv__am_busy(int wait_send)
{
    gv__am_idle();
    return (gv__am_hot.cur[am.rank].pos != am.self_buf) ||
           (((am.nbacklog > 0) || (rt.nstashed > 0) || (rt.npend > 0)) &&
            !wait_send) ||
           (am.lone_dst >= 0) ||
           (am.nopen > 0);
}

static unsigned __attribute__((noinline)) am_progress_work(void)
{
    unsigned n;
    int      i;

    n = self_drain();
    if ((rt.nstashed > 0) || (rt.npend > 0))
        n += route_progress();

    /* Retry what the transport refused before. */
    for (i = 0; i < am.nbacklog;) {
        int dst = am.backlog[i];
        ship(dst);
        if (am.peers[dst].head == NULL ||
            am.peers[dst].head == am.peers[dst].open) {
            am.peers[dst].backlogged = 0;
            am.backlog[i]            = am.backlog[--am.nbacklog];
            n++;
        } else {
            i++;
        }
    }
    if ((am.nopen > 0) || (am.lone_dst >= 0)) {
        uint64_t now = gv__now_ns();
        if (am.lone_dst >= 0) {
            if (am.lone_ns == 0) {
                am.lone_ns = now;
            } else if (now - am.lone_ns >= am.timeout_ns) {
                lone_ship(&am.stats.flush_timeout);
                n++;
            }
        }
        for (i = 0; i < am.nopen;) {
            int dst = am.openlist[i];
            if (am.peers[dst].open_ns == 0) {
                am.peers[dst].open_ns = now;
                i++;
            } else if (now - am.peers[dst].open_ns >= am.timeout_ns) {
                flush_peer(dst, &am.stats.flush_timeout);
                n++;
            } else {
                i++;
            }
        }
    }
    return n;
}

unsigned gv__am_progress(void)
{
    /* Every poll of every wait comes here: nothing to do is the common
     * case, and it should cost a few loads, not the prologue of the
     * work. */
    if ((gv__am_hot.cur[am.rank].pos == am.self_buf) && (am.nbacklog == 0) &&
        (am.nopen == 0) && (am.lone_dst < 0) && (rt.nstashed == 0) &&
        (rt.npend == 0))
        return 0;
    return am_progress_work();
}

/* Nothing may hang forever: a rank that takes none of the messages owed
 * to it for GV_TIMEOUT_S, while we keep polling, is declared failed
 * (stopped, stuck in a loop or inside its network library). Owed: the
 * transport holds messages to it that it has not completed (sent in
 * place, or batches it sends from our buffers), messages to it wait in
 * our queue because the transport refused them, or a send to it waits for
 * the transport to take it. Every transport's flow control ends there
 * when the receiver takes nothing: shm's ring fills, tcp's socket and send
 * queue, UCX's and MPI's rendezvous wait for the receiver, libfabric's
 * shm keeps large messages in the sender's memory. A blocking one-sided
 * operation waiting for a rank (rma.c) is owed to it too: over UCX's tcp
 * and libfabric only the target's progress completes it (a flush to
 * every rank is one flush per rank, each owed to its rank). Not watched
 * here: waits inside the library (mpi's one-sided operations wait inside
 * MPI_Win_flush): the monitor thread (core/monitor.c) watches those.
 * Called from progress (every 256 polls), it looks at most every
 * WATCH_NS. Only time spent polling counts: after a gap of GV__WATCH_GAP_NS
 * without a look (this rank computed, or was stopped itself), every clock
 * starts again, since completions could not have been seen meanwhile.
 * Transports share some send resources among peers (MPI's and
 * libfabric's request pools, UCX's send budget), so a stuck rank can make
 * sends to others wait too: the rank named is, if any, one that holds
 * unfinished messages or blocking operations, the longest. */
#define WATCH_NS     100000000ull

/* Owed something only it can finish (not merely a resource the transport
 * may share among peers): the better rank to name. */
static int firm(const peer_t *p)
{
    return (p->held > 0) || (p->onesided > 0);
}

void gv__am_watch(uint64_t now)
{
    static uint64_t last_ns;
    uint64_t        limit_ns = gv__timeout_ns();
    int             i, worst = -1, restart;
    peer_t         *p;

    if ((am.peers == NULL) || (now - last_ns < WATCH_NS))
        return;
    restart = (now - last_ns > GV__WATCH_GAP_NS);
    last_ns = now;
    for (i = 0; i < am.size; i++) {
        p = &am.peers[i];
        if (gv__is_failed(i)) {
            p->owed_ns = 0;
            continue;
        }
        if ((p->held == 0) && (p->waiting == 0) && (p->onesided == 0) &&
            ((p->head == NULL) || (p->head == p->open))) {
            p->owed_ns = 0;
        } else if ((p->owed_ns == 0) || restart) {
            p->owed_ns = now;
        } else if ((now - p->owed_ns > limit_ns) &&
                   ((worst < 0) ||
                    (firm(p) && !firm(&am.peers[worst])) ||
                    ((firm(p) == firm(&am.peers[worst])) &&
                     (p->owed_ns < am.peers[worst].owed_ns)))) {
            worst = i;
        }
    }
    if (worst < 0)
        return;
    p = &am.peers[worst];
    gv__peer_failed(worst, "rank %d took none of the messages sent to it "
                    "for %llu s (GV_TIMEOUT_S); held by the transport: %u, "
                    "queued: %u, waiting for the transport to take them: "
                    "%u, one-sided operations waiting to complete: %u. It "
                    "is stopped or stuck, or ran that long without calling "
                    "into Grapevine (raise GV_TIMEOUT_S if it computes that "
                    "long)", worst, (unsigned long long)gv__env.TIMEOUT_S,
                    p->held, p->queued - (p->open != NULL), p->waiting,
                    p->onesided);
}

static peer_t *watched(int rank)
{
    if ((am.peers == NULL) || (rank < 0) || (rank >= am.size) ||
        (rank == am.rank))
        return NULL;
    return &am.peers[rank];
}

void gv__am_owe(int rank, int delta, int done)
{
    peer_t *p = watched(rank);

    if (p == NULL)
        return;
    p->onesided += (unsigned)delta;
    if (done)
        p->owed_ns = 0;
}

void gv__am_room(int rank, int delta)
{
    peer_t *p = watched(rank);

    if (p != NULL)
        p->waiting += (unsigned)delta;
}

/* ---- barrier ---------------------------------------------------------- */

static void ctrl_send(int dst, uint16_t op, const ctrl_msg_t *c)
{
    out_msg_t *m = msg_new(dst, sizeof(*c));

    m->len  = sizeof(*c);
    m->ctrl = 1;
    memcpy(m->data, c, sizeof(*c));
    set_hdr(m, GV_WIRE_CTRL, op);
    enqueue_single(dst, m);
    ship(dst);
}

static void ctrl_recv(int src, uint16_t op, const uint8_t *p, size_t len)
{
    ctrl_msg_t   c;
    wave_slot_t *s;
    int          parent = (am.rank - 1) / 2;

    if (len != sizeof(c)) {
        reject(src, "control message of the wrong size");
        gv__peer_failed(src, "malformed control message");
        return;
    }
    memcpy(&c, p, sizeof(c));
    s = &am.slot[c.wave & 1];
    if ((op == CTRL_UP) && ((src - 1) / 2 == am.rank) && (src != am.rank) &&
        ((c.wave == am.wave) || (c.wave == am.wave + 1))) {
        s->nup++;
        s->up_from |= 1u << (src - (2 * am.rank + 1));
        s->sum[0] += c.vals[0];
        s->sum[1] += c.vals[1];
    } else if ((op == CTRL_DOWN) && (src == parent) && (am.rank != 0) &&
               (c.wave == am.wave)) {
        s->down      = 1;
        s->result[0] = c.vals[0];
        s->result[1] = c.vals[1];
    } else {
        reject(src, "unexpected barrier message");
        gv__peer_failed(src, "unexpected barrier message (op %u, wave %u, "
                        "mine %u)", op, c.wave, am.wave);
    }
}

/* A barrier cannot complete without a failed rank: stop the job, naming
 * it, instead of waiting forever. */
static void __attribute__((noreturn)) barrier_failed(int rank)
{
    gv_fatal("gv_barrier cannot complete: rank %d failed (see "
             "gv_on_peer_failure: collectives need every rank)", rank);
}

/* A child this rank still waits for that failed, or -1. A failed rank
 * that already did its part (sent UP, or is not waited for here) does not
 * stop the barrier: the rank that waits for it does. */
static int child_failed(const wave_slot_t *s)
{
    int c;

    for (c = 2 * am.rank + 1; (c <= 2 * am.rank + 2) && (c < am.size); c++)
        if (!(s->up_from & (1u << (c - (2 * am.rank + 1)))) &&
            gv__is_failed(c))
            return c;
    return -1;
}

static int wave_nchild(void)
{
    int nchild = 0, c;

    for (c = 2 * am.rank + 1; (c <= 2 * am.rank + 2) && (c < am.size); c++)
        nchild++;
    return nchild;
}

static int wave_children_in(void *arg)
{
    wave_slot_t *s = arg;

    return (s->nup == wave_nchild()) ||
           ((gv__ctx.nfailed > 0) && (child_failed(s) >= 0));
}

static int wave_down_in(void *arg)
{
    return ((wave_slot_t *)arg)->down ||
           ((gv__ctx.nfailed > 0) && gv__is_failed((am.rank - 1) / 2));
}

/* Sum two counters over all ranks. */
static void allreduce2(uint64_t v0, uint64_t v1, uint64_t *out)
{
    wave_slot_t *s;
    ctrl_msg_t   c;
    int          ch;

    am.wave++;
    s = &am.slot[am.wave & 1];
    gv_wait(wave_children_in, s);
    if (s->nup != wave_nchild())
        barrier_failed(child_failed(s));
    c.wave    = am.wave;
    c.pad     = 0;
    c.vals[0] = s->sum[0] + v0;
    c.vals[1] = s->sum[1] + v1;
    if (am.rank != 0) {
        ctrl_send((am.rank - 1) / 2, CTRL_UP, &c);
        gv_wait(wave_down_in, s);
        if (!s->down)
            barrier_failed((am.rank - 1) / 2);
        c.vals[0] = s->result[0];
        c.vals[1] = s->result[1];
    }
    for (ch = 2 * am.rank + 1; (ch <= 2 * am.rank + 2) && (ch < am.size);
         ch++)
        ctrl_send(ch, CTRL_DOWN, &c);
    out[0] = c.vals[0];
    out[1] = c.vals[1];
    memset(s, 0, sizeof(*s));
}

/* Quiescence by counting: every message is counted when sent and when
 * handled; the job is quiet when two consecutive waves find the global sums
 * equal and unchanged (the four-counter method), since a message in flight
 * between the waves would have changed one of them. */
void gv_barrier(void)
{
    uint64_t prev[2] = {UINT64_MAX, UINT64_MAX - 1}, cur[2];

    if (am.in_handler > 0)
        gv_fatal("gv_barrier called from inside an active-message handler");
    for (;;) {
        gv_flush();
        /* Handle our own messages before counting them. */
        while (self_drain() > 0)
            ;
        allreduce2(gv__am_hot.msgs_sent + rt.acks, am.handled_count, cur);
        if ((cur[0] == cur[1]) && (cur[0] == prev[0]) && (cur[1] == prev[1]))
            break;
        prev[0] = cur[0];
        prev[1] = cur[1];
    }
}

/* ---- registration, setup, stats --------------------------------------- */

gv_status_t gv_am_register(gv_am_handler_fn_t fn, void *arg, gv_am_id_t *id_p)
{
    if ((fn == NULL) || (id_p == NULL)) {
        gv_error("handler and id pointer must not be NULL");
        return GV_ERR_INVALID;
    }
    if (gv__am_hot.nhandlers >= GV_AM_MAX_HANDLERS) {
        gv_error("all %d handler ids are taken",
                 GV_AM_MAX_HANDLERS);
        return GV_ERR_NO_RESOURCE;
    }
    am.handlers[gv__am_hot.nhandlers].fn  = fn;
    am.handlers[gv__am_hot.nhandlers].arg = arg;
    *id_p = (gv_am_id_t)gv__am_hot.nhandlers++;
    return GV_OK;
}

/* ---- named handlers ---------------------------------------------------- */

static uint64_t name_hash(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

    for (; *name != '\0'; name++)
        h = (h ^ (uint8_t)*name) * 0x100000001b3ull;
    return h;
}

static unsigned name_id(uint64_t hash)
{
    return NAMED_BASE + (unsigned)(hash % NAMED_SLOTS);
}

/* An announcement: hash, id, name length, name. */
typedef struct {
    uint64_t hash;
    uint16_t id;
    uint8_t  len;
    char     name[GV_AM_NAME_MAX];
} __attribute__((packed)) announce_t;
#define ANNOUNCE_HDR offsetof(announce_t, name)

static void poison(named_t *n, const char *other, int src)
{
    if (n->poisoned)
        return;
    n->poisoned = 1;
    snprintf(n->other, sizeof(n->other), "%s", other);
    gv_error("named handlers \"%s\" (%s) and \"%s\" (rank %d) share id "
             "%u (a hash collision): messages to it are refused; rename "
             "one", n->name, (n->state == NAMED_MINE) ? "here" : "a rank",
             other, src, name_id(n->hash));
}

static void announce_cb(int src, const void *payload, size_t len,
                        void *arg)
{
    announce_t a;
    named_t   *n;

    (void)arg;
    memset(&a, 0, sizeof(a));
    if ((len < ANNOUNCE_HDR) || (len > sizeof(a))) {
        reject(src, "malformed handler name announcement");
        return;
    }
    memcpy(&a, payload, len);
    if ((a.len == 0) || (a.len > GV_AM_NAME_MAX) ||
        (ANNOUNCE_HDR + a.len != len) ||
        (memchr(a.name, '\0', a.len) != NULL)) {
        reject(src, "malformed handler name announcement");
        return;
    }
    {
        char name[GV_AM_NAME_MAX + 1];

        memcpy(name, a.name, a.len);
        name[a.len] = '\0';
        if ((name_hash(name) != a.hash) || (name_id(a.hash) != a.id)) {
            reject(src, "handler name announcement with a wrong hash");
            return;
        }
        if (am.named == NULL)
            am.named = gv_calloc(NAMED_SLOTS, sizeof(*am.named));
        n = am.named[a.id - NAMED_BASE];
        if (n == NULL) {
            n = gv_calloc(1, sizeof(*n));
            n->hash  = a.hash;
            n->state = NAMED_THEIRS;
            memcpy(n->name, name, a.len + 1);
            am.named[a.id - NAMED_BASE] = n;
        } else if (n->hash != a.hash) {
            poison(n, name, src);
        }
    }
}

static void announce(const named_t *n)
{
    announce_t a;
    size_t     len = strlen(n->name);
    int        r;

    a.hash = n->hash;
    a.id   = (uint16_t)name_id(n->hash);
    a.len  = (uint8_t)len;
    memcpy(a.name, n->name, len);
    for (r = 0; r < am.size; r++)
        if ((r != am.rank) && !gv__is_failed(r))
            (void)gv_am_send(r, am.am_named, &a, ANNOUNCE_HDR + len);
}

static gv_status_t named_claim(const char *name, gv_am_handler_fn_t fn,
                               void *arg, gv_am_id_t *id_p)
{
    size_t   len = (name != NULL) ? strlen(name) : 0;
    uint64_t h;
    unsigned id;
    named_t *n;
    int      fresh;

    if ((name == NULL) || (id_p == NULL) || (len == 0) ||
        (len > GV_AM_NAME_MAX)) {
        gv_error("a handler name must have 1 to %d bytes (got %s%s%s) and "
                 "an id pointer", GV_AM_NAME_MAX, (name != NULL) ? "\"" : "",
                 (name != NULL) ? name : "NULL", (name != NULL) ? "\"" : "");
        return GV_ERR_INVALID;
    }
    if (gv__ctx.finalizing) {
        gv_error("handler \"%s\" registered during gv_finalize", name);
        return GV_ERR_STATE;
    }
    if (am.in_handler > 0) {
        gv_error("handler \"%s\" registered from inside a handler", name);
        return GV_ERR_STATE;
    }
    h  = name_hash(name);
    id = name_id(h);
    if (am.named == NULL)
        am.named = gv_calloc(NAMED_SLOTS, sizeof(*am.named));
    n     = am.named[id - NAMED_BASE];
    fresh = (n == NULL) || (n->state != NAMED_MINE);
    if ((n != NULL) && (n->hash != h)) {
        gv_error("handler name \"%s\" falls on id %u, which \"%s\" %s "
                 "(a hash collision): rename one", name, id, n->name,
                 (n->state == NAMED_MINE) ? "holds on this rank"
                                          : "holds on another rank");
        return GV_ERR_INVALID;
    }
    if ((n != NULL) && n->poisoned) {
        gv_error("handler name \"%s\" (id %u) collides with \"%s\" on "
                 "another rank: rename one", name, id, n->other);
        return GV_ERR_INVALID;
    }
    if ((n != NULL) && (fn != NULL) && (n->fn != NULL)) {
        gv_error("handler name \"%s\" (id %u) is already registered on "
                 "this rank", name, id);
        return GV_ERR_INVALID;
    }
    if (n == NULL) {
        n = gv_calloc(1, sizeof(*n));
        n->hash = h;
        memcpy(n->name, name, len + 1);
        am.named[id - NAMED_BASE] = n;
    }
    n->state = NAMED_MINE;
    if (fn != NULL) {
        n->fn  = fn;
        n->arg = arg;
    }
    if (am.tl == NULL)
        n->preinit = 1; /* announced by gv__am_start */
    else if (fresh)
        announce(n);
    *id_p = (gv_am_id_t)id;
    return GV_OK;
}

gv_status_t gv_am_register_named(const char *name, gv_am_handler_fn_t fn,
                                 void *arg, gv_am_id_t *id_p)
{
    if (fn == NULL) {
        gv_error("handler \"%s\": the function must not be NULL",
                 (name != NULL) ? name : "NULL");
        return GV_ERR_INVALID;
    }
    return named_claim(name, fn, arg, id_p);
}

gv_status_t gv_am_id_named(const char *name, gv_am_id_t *id_p)
{
    return named_claim(name, NULL, NULL, id_p);
}

/* Forget what gv_init..gv_finalize registered or learned; keep what was
 * registered before gv_init. */
static void named_reset(void)
{
    unsigned i;

    if (am.named == NULL)
        return;
    for (i = 0; i < NAMED_SLOTS; i++) {
        named_t *n = am.named[i];

        if (n == NULL)
            continue;
        if (n->preinit && (n->state == NAMED_MINE)) {
            n->poisoned = 0;
            n->other[0] = '\0';
            continue;
        }
        gv_free(n);
        am.named[i] = NULL;
    }
}

/* ---- a failed peer (gv_on_peer_failure) ------------------------------- */

/* Run from progress (core/job.c), never inside a send: drop everything
 * queued to @a rank; sends to it now fail with GV_ERR_UNREACHABLE. What
 * the transport holds completes through its own callbacks. */
static void peer_gone(int rank)
{
    peer_t    *p;
    out_msg_t *m;

    if ((am.peers == NULL) || (rank == am.rank))
        return;
    p = &am.peers[rank];
    if (am.lone_dst == rank) {
        am.lone_dst = -1;
        gv__am_hot.cur[rank].pos = gv__am_hot.cur[rank].end = NULL;
    }
    if (p->open != NULL)
        close_open(p);
    if (p->dirty)
        remove_open(rank);
    gv__am_hot.cur[rank].pos = gv__am_hot.cur[rank].end = NULL;
    while ((m = p->head) != NULL) {
        p->head = m->next;
        unaccount(m);
        msg_free(m);
    }
    p->tail    = NULL;
    p->queued  = 0;
    p->waiting = 0;
    p->owed_ns = 0;
}

size_t gv_am_max_payload(void)
{
    return GV_WIRE_MAX_PAYLOAD;
}

void gv__am_params(gv_tl_params_t *params)
{
    params->recv_cb    = am_recv;
    params->recv_id_cb = am_recv_id;
    params->recv_arg   = NULL;
}

gv_status_t gv__am_start(gv_tl_t *tl)
{
    am.tl         = tl;
    am.rank       = tl->rank;
    am.size       = tl->size;
    am.aggregate  = gv__env.AGGREGATE;
    am.max_msg    = tl->attr.max_msg;
    am.max_inline = tl->attr.max_inline;
    am.now_zcopy_min =
        (tl->attr.now_zcopy_min != 0) ? tl->attr.now_zcopy_min : BIG_MIN;
    am.send_id    = (tl->attr.caps & GV_TL_CAP_AM_ID) != 0;
    if (am.send_id)
        am.now_lim = ((tl->attr.max_id != 0) ? tl->attr.max_id
                                             : am.max_inline) + 1;
    else if (am.max_inline >= sizeof(gv_wire_hdr_t))
        am.now_lim = am.max_inline - sizeof(gv_wire_hdr_t) + 1;
    else
        am.now_lim = 0;
    am.credits    = (unsigned)gv__env.AGG_CREDITS;
    if (am.max_msg < 256 + sizeof(gv_wire_frag_t)) {
        gv_error("transport %s takes messages of at most %zu bytes; the AM "
                 "layer needs 256", tl->ops->name, am.max_msg);
        /* gv_init closes the transport: sends stay errors, not reads of
         * cursors that were never allocated. */
        am.tl   = NULL;
        am.size = 0;
        return GV_ERR_UNSUPPORTED;
    }
    /* A batch must fit one transport message. */
    am.agg_bytes = gv__env.AGG_BYTES;
    if (am.agg_bytes > am.max_msg - sizeof(gv_wire_hdr_t)) {
        gv_info("GV_AGG_BYTES %zu is more than transport %s carries in one "
                "message; using %zu", am.agg_bytes, tl->ops->name,
                am.max_msg - sizeof(gv_wire_hdr_t));
        am.agg_bytes = am.max_msg - sizeof(gv_wire_hdr_t);
    }
    /* A batch over the eager limit of the library under the transport
     * costs a rendezvous or segmentation per batch: GUPS over Open MPI's
     * tcp BTL 82 -> 94 M updates/s with batches under it, over ofi's
     * tcp;ofi_rxm 58 -> 71 (perf/notes/aggregation.md). An explicit GV_AGG_BYTES
     * stands. */
    if (!gv__env.AGG_BYTES_set && tl->attr.max_oneshot &&
        (am.agg_bytes + sizeof(gv_wire_hdr_t) > tl->attr.max_oneshot)) {
        if (tl->attr.max_oneshot >= 4096 + sizeof(gv_wire_hdr_t)) {
            am.agg_bytes = tl->attr.max_oneshot - sizeof(gv_wire_hdr_t);
            gv_info("aggregation batches of %zu bytes, so that each goes "
                    "eagerly through the library under transport %s",
                    am.agg_bytes, tl->ops->name);
        } else {
            gv_info("transport %s's library sends only %zu bytes eagerly; "
                    "batches stay at %zu bytes all the same", tl->ops->name,
                    tl->attr.max_oneshot, am.agg_bytes);
        }
    }
    am.batch_max_rec = am.agg_bytes / 4;
    am.open_small    = am.aggregate &&
                    (gv_wire_rec_size(FAST_MAX) <= am.batch_max_rec);
    am.timeout_ns    = gv__env.AGG_TIMEOUT_US * 1000ull;
    /* The lone area needs a transport that copies its frames (see am). */
    am.lone_cap = 0;
    if (am.open_small && (am.max_inline > HEADROOM + gv_wire_rec_size(8)))
        am.lone_cap = (am.max_inline - HEADROOM < LONE_MAX)
                          ? ((am.max_inline - HEADROOM) & ~(size_t)3)
                          : LONE_MAX;
    am.lone_req.cb   = lone_req_cb;
    am.lone_req.arg  = NULL;
    am.peers         = gv_calloc((size_t)am.size, sizeof(*am.peers));
    am.backlog       = gv_calloc((size_t)am.size, sizeof(int));
    am.openlist      = gv_calloc((size_t)am.size, sizeof(int));
    gv__am_hot.cur   = gv_calloc((size_t)am.size, sizeof(cursor_t));
    gv__am_hot.size  = (unsigned)am.size;
    gv__peer_failed_hook = peer_gone;
    /* Handlers registered from here on are gv_init's (the layers') and
     * the program's after it: gv__am_fini forgets them. */
    am.nhandlers_kept = gv__am_hot.nhandlers;
    {
        gv_status_t status = gv_am_register(announce_cb, NULL, &am.am_named);

        if ((status != GV_OK) ||
            (gv__env.AGG_ROUTE == GV_AGG_ROUTE_DIRECT))
            return status;
        status = gv_am_register(route_cb, NULL, &rt.id);
        if (status != GV_OK)
            return status;
        return gv_am_register(route_ack_cb, NULL, &rt.ack);
    }
}

void gv__am_announce_kept(void)
{
    unsigned i;

    if (am.named != NULL)
        for (i = 0; i < NAMED_SLOTS; i++)
            if ((am.named[i] != NULL) && am.named[i]->preinit)
                announce(am.named[i]);
}

void gv__am_fini(void)
{
    int        i;
    out_msg_t *m;

    for (i = 0; i < am.size; i++) {
        while ((m = am.peers[i].head) != NULL) {
            am.peers[i].head = m->next;
            msg_free(m);
        }
        gv_free(am.peers[i].spare);
        while (am.peers[i].reasm != NULL) {
            reasm_t *r         = am.peers[i].reasm;
            am.peers[i].reasm = r->next;
            gv_free(r->buf);
            gv_free(r);
        }
    }
    while ((m = am.free_batches) != NULL) {
        am.free_batches = m->next;
        gv_free(m);
    }
    for (i = 0; i < BIG_CACHE; i++) {
        gv_free(big_cache[i]);
        big_cache[i] = NULL;
    }
    am.nfree_batches = 0;
    while (am.nbi_free != NULL) {
        nbi_req_t *n = am.nbi_free;
        am.nbi_free  = n->next;
        gv_free(n);
    }
    gv_free(rt.node_of);
    gv_free(rt.members);
    gv_free(rt.start);
    if (rt.stash != NULL)
        for (i = 0; i < am.size * rt.nlink; i++)
            gv_free(rt.stash[i].buf);
    gv_free(rt.stash);
    gv_free(rt.stashed);
    gv_free(rt.out);
    gv_free(rt.ret);
    gv_free(rt.pend);
    memset(&rt, 0, sizeof(rt));
    gv_free(am.peers);
    gv_free(am.backlog);
    gv_free(am.openlist);
    gv_free(am.self_buf);
    gv_free(gv__am_hot.cur);
    am.peers        = NULL;
    am.lone_dst     = -1;
    am.self_buf     = NULL;
    am.tl           = NULL;
    am.size         = 0;
    gv__am_hot.cur  = NULL;
    gv__am_hot.size = 0;
    /* A later gv_init registers the layers' handlers again. */
    memset(&am.handlers[am.nhandlers_kept], 0,
           (GV_AM_MAX_HANDLERS - am.nhandlers_kept) * sizeof(handler_t));
    gv__am_hot.nhandlers = am.nhandlers_kept;
    named_reset();
    gv__peer_failed_hook = NULL;
    am.wave             = 0;
    memset(am.slot, 0, sizeof(am.slot));
    am.handled_count    = 0;
    gv__am_hot.msgs_sent  = 0;
    gv__am_hot.bytes_sent = 0;
    memset(&am.stats, 0, sizeof(am.stats));
    am.rejects_logged = 0;
}

size_t gv__am_memory_bound(void)
{
    return (size_t)(am.credits + 1) * am.agg_bytes;
}

void gv_am_stats(gv_am_stats_t *stats_p)
{
    *stats_p              = am.stats;
    stats_p->msgs_sent    = gv__am_hot.msgs_sent;
    stats_p->bytes_sent   = gv__am_hot.bytes_sent;
    stats_p->msgs_relayed = rt.relayed;
}

void gv__am_stats_print(void)
{
    gv_am_stats_t  st;
    gv_am_stats_t *s = &st;
    uint64_t       ships;

    gv_am_stats(s);
    ships = s->flush_full + s->flush_timeout + s->flush_idle +
            s->flush_explicit;

    fprintf(stderr,
            "[%04d] STATS am: sent %llu msgs %llu B; recv %llu msgs %llu B; "
            "tl sent %llu msgs %llu B (avg %.1f B); tl recv %llu msgs %llu "
            "B; batches full %llu timeout %llu idle %llu explicit %llu "
            "(avg %.1f msgs/batch); stalls %llu; rejected %llu\n",
            am.rank, (unsigned long long)s->msgs_sent,
            (unsigned long long)s->bytes_sent,
            (unsigned long long)s->msgs_recv,
            (unsigned long long)s->bytes_recv,
            (unsigned long long)s->tl_msgs_sent,
            (unsigned long long)s->tl_bytes_sent,
            s->tl_msgs_sent ? (double)s->tl_bytes_sent / s->tl_msgs_sent : 0.,
            (unsigned long long)s->tl_msgs_recv,
            (unsigned long long)s->tl_bytes_recv,
            (unsigned long long)s->flush_full,
            (unsigned long long)s->flush_timeout,
            (unsigned long long)s->flush_idle,
            (unsigned long long)s->flush_explicit,
            ships ? (double)s->msgs_sent / (double)ships : 0.,
            (unsigned long long)s->credit_stalls,
            (unsigned long long)s->rejected);
    if (rt.node_of != NULL)
        fprintf(stderr, "[%04d] STATS route: %s, %d nodes; buffers to at "
                "most %d ranks, %zu bytes; queued at most %llu B; relayed "
                "%llu msgs; to other nodes %llu msgs in %llu batches\n",
                am.rank, route_name[rt.sh.route], rt.nnodes,
                gv__am_route_peers(rt.sh.route, rt.node_of, rt.nnodes,
                                   am.size, am.rank),
                gv__am_route_bound(),
                (unsigned long long)s->queued_bytes_max,
                (unsigned long long)rt.relayed,
                (unsigned long long)s->internode_msgs,
                (unsigned long long)s->internode_batches);
}
