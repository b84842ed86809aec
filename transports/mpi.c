/* The mpi transport: two-sided messages over a ring of pre-posted
 * receives, and the symmetric heap as an MPI-3 window in one passive-target
 * epoch for put, get and 64-bit atomics. SPDX-License-Identifier: BSD-3-Clause
 *
 * Communicators. The transport duplicates the bootstrap's communicator
 * (core/boot_mpi.h) twice: am_comm carries whole messages and control
 * frames and hosts the window; data_comm carries large payloads only, so
 * that the ring's MPI_ANY_TAG receives never match one.
 *
 * Messages. Up to GV_MPI_EAGER bytes (hdr + payload) a message is copied
 * and sent whole with tag EAGER, and am_send returns GV_OK (max_inline):
 * up to 1 KiB with MPI_Send from the stack, above that with MPI_Isend from
 * a send slot (a bounded pool: GV_ERR_NO_RESOURCE when it is empty).
 * am_send_id sends the payload alone, with tag ID + id, the same way: the
 * AM layer's requests and replies. Over Open MPI's shared memory, when the
 * host is in its slow mode, a 16-byte message takes 60 ns longer one way
 * than an 8-byte one (440 against 380 ns; no difference in its fast
 * mode).
 * Larger messages, up to max_msg = 4 MiB + 4 KiB (the AM layer fragments
 * anything bigger), send a control frame (tag RTS) on am_comm and the
 * payload straight from the caller's buffer on data_comm (GV_INPROGRESS):
 *
 *   RTS frame    0            8            12           16
 *                +------------+------------+------------+---------------+
 *                | payload_len| hdr_len    | magic      | hdr (hdr_len) |
 *                +------------+------------+------------+---------------+
 *
 * The receiver keeps GV_MPI_RECVS persistent receives of GV_MPI_EAGER
 * bytes started for (MPI_ANY_SOURCE, MPI_ANY_TAG) and tests them in the
 * order it started them; a handled one is restarted at the back. All those receives match every message, so MPI fills them in
 * posting order; and MPI does not let a message overtake an earlier one
 * from the same sender. Handling completions strictly in posting order
 * (stopping at the first that is not complete) therefore sees each
 * sender's messages in the order they were sent, even when a message
 * larger than MPI's own eager limit is still streaming in.
 *
 * An RTS makes the receiver post a receive for the payload from that
 * sender on data_comm, into a buffer that starts with the header. Until
 * that payload is in, later messages from the same sender are copied aside
 * (the "held" queue of that peer) and delivered after it: per-pair FIFO.
 * Payload receives from one sender are posted in RTS order and match the
 * payload sends in the same order (same source, tag and communicator).
 *
 * One-sided operations go through MPI_Win_allocate'd memory, locked once
 * with MPI_Win_lock_all(MPI_MODE_NOCHECK) for the life of the transport.
 * MPI may read an origin buffer until the operation completes, so the
 * 64-bit operands of atomics are staged in an arena that is recycled once
 * every target with outstanding operations has been flushed.
 */
#include "transports/transport.h"
#include "core/boot_mpi.h"

#include <stdio.h>
#include <string.h>

enum {
    TAG_EAGER = 1,   /* am_comm: a whole message */
    TAG_RTS   = 2,   /* am_comm: header of a message whose payload follows */
    TAG_DATA  = 3,   /* data_comm: the payload announced by an RTS */
    TAG_ID    = 16,  /* am_comm: TAG_ID + id, a payload sent by am_send_id */
    TAG_ID_LAST = TAG_ID + 0xffff,
};

#define RTS_MAGIC     0x67764d52u            /* "RMvg" */
#define PAYLOAD_ALIGN 64                     /* payloads land aligned */
#define MPI_MAX_MSG   ((4u << 20) + 4096u)   /* like tcp: 4 MiB + headers */
/* Open MPI's ob1 PML sends up to btl_tcp_eager_limit (64 KiB) less the
 * size of its largest header (56 bytes), i.e. 65480 bytes of data, in one
 * go and anything larger with a rendezvous round trip (measured: 65481
 * bytes take the rendezvous); aggregation batches stay just under it. */
#define MPI_ONESHOT   (65536u - 64u)
#define STAGE_CHUNK   4096                   /* uint64_t per arena chunk */
#define STAGE_MAX     64                     /* chunks before a flush_all */
#define REJECT_LOG    10                     /* bad frames logged, then counted */
#define SEND_NOW_MAX  1024                   /* sent with MPI_Send (see am_send) */
#define NSPARE        8                      /* payload buffers kept for reuse */
#define SPARE_MAX     ((size_t)16 << 20)     /* ... up to this many bytes */

typedef struct {
    uint64_t payload_len;
    uint32_t hdr_len;
    uint32_t magic;
} rts_t;

/* A message of the held queue of its sender: a large payload announced by
 * an RTS (waiting for a receive slot, or arriving), or a copy of a message
 * that came in behind such a payload. Delivered in queue order. */
enum { HELD_READY, HELD_WAITING, HELD_POSTED };
typedef struct held {
    struct held *next;
    int          state;    /* HELD_* */
    MPI_Request  req;      /* the payload receive while HELD_POSTED */
    uint8_t     *buf;      /* hdr + payload once posted or READY */
    uint8_t     *base;     /* what was allocated (buf lies inside) */
    size_t       len;      /* hdr + payload */
    size_t       cap;      /* bytes allocated at base */
    size_t       expect;   /* payload bytes the RTS announced */
    int          id;       /* am_send_id's id, or -1 for a frame */
    uint32_t     hdr_len;
    uint8_t      hdr[GV_TL_MAX_HDR];
} held_t;

typedef struct {
    held_t *head, *tail;
    int     listed;        /* in held_peers[] */
} mpi_peer_t;

/* One MPI send in flight. */
typedef struct send_slot {
    struct send_slot *next_free;
    uint8_t          *buf;       /* eager copy, GV_MPI_EAGER bytes, or NULL */
    uint8_t          *owned;     /* large copy we made (req == NULL), or NULL */
    gv_req_t         *ureq;      /* caller's completion, or NULL */
    int               dst;
} send_slot_t;

typedef struct stage_chunk {
    struct stage_chunk *next;
    uint64_t            v[STAGE_CHUNK];
} stage_chunk_t;

typedef struct {
    MPI_Comm      am_comm, data_comm;
    size_t        eager;           /* bytes per ring buffer and eager send */

    /* receive ring, tested in posting order from ring_head; the nrepost
     * slots before ring_head are completed and wait to be started again */
    unsigned      nring, ring_head, nrepost;
    int           last_delivered;  /* the last ring_progress() delivered */
    MPI_Request  *ring_req;        /* persistent */
    uint8_t      *ring_on;         /* started, not yet completed */
    uint8_t      *ring_mem;

    /* sends: slots, and the compact array of requests in flight */
    unsigned      nslots, nact;
    send_slot_t  *slots, *free_slots;
    unsigned      nfree;
    MPI_Request  *act_req;
    send_slot_t **act_slot;
    int          *done_idx;
    MPI_Status   *done_st;
    send_slot_t **done_slot;

    /* peers whose messages wait behind a large payload */
    mpi_peer_t   *peers;
    int          *held_peers;
    int           nheld_peers;
    uint8_t      *spare_buf[NSPARE]; /* recycled payload buffers */
    size_t        spare_cap[NSPARE];

    /* one-sided */
    MPI_Win       win;
    int           have_win;
    uint8_t      *heap;
    size_t        heap_size;
    stage_chunk_t *stage_first, *stage_cur;
    unsigned      stage_used, stage_nchunks;
    uint8_t      *dirty;           /* per rank: ops issued since its flush */
    int          *dirty_list;
    int           ndirty;

    uint64_t      rejected;
} mpi_tl_t;

static const char *mpi_err(int rc, char *buf, size_t len)
{
    return gv__mpi_strerror(rc, buf, len);
}

#define ERRBUF char errbuf[MPI_MAX_ERROR_STRING + 32]
#define ERRSTR(_rc) mpi_err((_rc), errbuf, sizeof(errbuf))

static void reject(mpi_tl_t *m, int src, const char *fmt, int a, long long b)
{
    char why[160];

    m->rejected++;
    if (m->rejected > REJECT_LOG)
        return;
    snprintf(why, sizeof(why), fmt, a, b);
    gv_warn("rejected a message from rank %d: %s (%llu rejected so far%s)",
            src, why, (unsigned long long)m->rejected,
            (m->rejected == REJECT_LOG) ? "; no more will be logged" : "");
}

/* ---- receive side -------------------------------------------------- */

static uint8_t *ring_buf(mpi_tl_t *m, unsigned i)
{
    return m->ring_mem + (size_t)i * m->eager;
}

/* Make slot @a i's persistent receive (not started). */
static gv_status_t ring_init_req(mpi_tl_t *m, unsigned i)
{
    ERRBUF;
    int rc = MPI_Recv_init(ring_buf(m, i), (int)m->eager, MPI_BYTE,
                           MPI_ANY_SOURCE, MPI_ANY_TAG, m->am_comm,
                           &m->ring_req[i]);

    if (rc != MPI_SUCCESS) {
        gv_info("mpi: MPI_Recv_init failed: %s", ERRSTR(rc));
        m->ring_req[i] = MPI_REQUEST_NULL;
        return GV_ERR_IO;
    }
    return GV_OK;
}

/* The ring's receives are persistent: re-arming one with MPI_Start skips
 * the request allocation and argument checks of an MPI_Irecv per message. */
static gv_status_t ring_post(mpi_tl_t *m, unsigned i)
{
    ERRBUF;
    int rc = MPI_Start(&m->ring_req[i]);

    if (rc != MPI_SUCCESS) {
        gv_error("MPI_Start of a ring receive failed: %s", ERRSTR(rc));
        return GV_ERR_IO;
    }
    m->ring_on[i] = 1;
    return GV_OK;
}

/* Payload buffers are recycled: fresh pages for every megabyte would cost
 * more in page faults than the transfer itself. Take the smallest cached
 * buffer that fits. */
static uint8_t *payload_buf_get(mpi_tl_t *m, size_t len, size_t *cap_p)
{
    int      i, best = -1;
    uint8_t *p;

    for (i = 0; i < NSPARE; i++)
        if ((m->spare_buf[i] != NULL) && (m->spare_cap[i] >= len) &&
            ((best < 0) || (m->spare_cap[i] < m->spare_cap[best])))
            best = i;
    if (best < 0) {
        *cap_p = (len + PAYLOAD_ALIGN - 1) & ~(size_t)(PAYLOAD_ALIGN - 1);
        return gv_malloc_aligned(PAYLOAD_ALIGN, *cap_p);
    }
    p                  = m->spare_buf[best];
    *cap_p             = m->spare_cap[best];
    m->spare_buf[best] = NULL;
    m->spare_cap[best] = 0;
    return p;
}

/* Keep the buffer in an empty cache slot, or instead of a smaller one,
 * while the cache stays under SPARE_MAX bytes. */
static void payload_buf_put(mpi_tl_t *m, uint8_t *buf, size_t cap)
{
    size_t total = 0;
    int    i, slot = -1;

    for (i = 0; i < NSPARE; i++) {
        total += m->spare_cap[i];
        if ((slot < 0) || (m->spare_cap[i] < m->spare_cap[slot]))
            slot = i;
    }
    if ((cap > m->spare_cap[slot]) &&
        (total - m->spare_cap[slot] + cap <= SPARE_MAX)) {
        gv_free(m->spare_buf[slot]);
        m->spare_buf[slot] = buf;
        m->spare_cap[slot] = cap;
    } else {
        gv_free(buf);
    }
}

static held_t *held_append(mpi_tl_t *m, int src)
{
    mpi_peer_t *p = &m->peers[src];
    held_t     *h = gv_calloc(1, sizeof(*h));

    h->req   = MPI_REQUEST_NULL;
    h->state = HELD_READY;
    h->id    = -1;
    if (p->tail != NULL)
        p->tail->next = h;
    else
        p->head = h;
    p->tail = h;
    if (!p->listed) {
        p->listed                        = 1;
        m->held_peers[m->nheld_peers++] = src;
    }
    return h;
}

/* Post the payload receive of src's first waiting RTS, unless one of src's
 * payloads is already posted: one at a time per sender, so that the same
 * recycled buffer (warm in the cache) takes one payload after another.
 * Within a node MPI copies a payload only once its receive is posted, so
 * posting more would buy no overlap, only colder memory; across nodes it
 * costs one round trip per payload. Delivery is in order anyway. */
static void held_post(mpi_tl_t *m, int src)
{
    ERRBUF;
    held_t *h;
    int     rc;

    for (h = m->peers[src].head; h != NULL; h = h->next) {
        if (h->state == HELD_POSTED)
            return;
        if (h->state == HELD_WAITING)
            break;
    }
    if (h == NULL)
        return;
    /* The payload lands cache-line aligned, right behind the header: the
     * copies into it (CMA, the BTLs' memcpy) are much slower into a
     * misaligned destination. */
    h->base = payload_buf_get(m, PAYLOAD_ALIGN + h->expect, &h->cap);
    h->buf  = h->base + PAYLOAD_ALIGN - h->hdr_len;
    memcpy(h->buf, h->hdr, h->hdr_len);
    rc = MPI_Irecv(h->buf + h->hdr_len, (int)h->expect, MPI_BYTE, src,
                   TAG_DATA, m->data_comm, &h->req);
    if (rc != MPI_SUCCESS) {
        h->req   = MPI_REQUEST_NULL;
        h->state = HELD_READY;
        h->len   = 0; /* delivered as nothing: dropped */
        gv__peer_failed(src, "MPI_Irecv of a %zu-byte payload failed: %s",
                        h->expect, ERRSTR(rc));
        return;
    }
    h->state = HELD_POSTED;
}

/* An RTS from src (already known to be a valid peer): validate it, then
 * queue its payload behind whatever src already has held. */
static void rts_recv(mpi_tl_t *m, gv_tl_t *tl, int src, const uint8_t *buf,
                     int count)
{
    rts_t   r;
    held_t *h;
    size_t  total;

    if ((size_t)count < sizeof(r)) {
        reject(m, src, "control frame of %d bytes (%lld expected at least)",
               count, (long long)sizeof(r));
        return;
    }
    memcpy(&r, buf, sizeof(r));
    if ((r.magic != RTS_MAGIC) || (r.hdr_len > GV_TL_MAX_HDR) ||
        ((size_t)count != sizeof(r) + r.hdr_len)) {
        reject(m, src, "bad control frame: header of %d bytes in a %lld-byte"
               " frame", (int)r.hdr_len, (long long)count);
        return;
    }
    if ((r.payload_len == 0) ||
        (r.payload_len > tl->attr.max_msg - r.hdr_len)) {
        reject(m, src, "control frame announces %d+%lld bytes", (int)r.hdr_len,
               (long long)r.payload_len);
        return;
    }
    total      = r.hdr_len + (size_t)r.payload_len;
    h          = held_append(m, src);
    h->state   = HELD_WAITING;
    h->len     = total;
    h->expect  = (size_t)r.payload_len;
    h->hdr_len = r.hdr_len;
    memcpy(h->hdr, buf + sizeof(r), r.hdr_len);
    held_post(m, src);
}

/* A message that came in behind a large one from src still arriving:
 * keep a copy, delivered after it. */
static held_t *held_copy(mpi_tl_t *m, int src, const uint8_t *buf,
                         size_t len)
{
    held_t *h = held_append(m, src);

    h->len  = len;
    h->cap  = len;
    h->buf  = gv_malloc(len + (len == 0)); /* a 0-byte message is one too */
    h->base = h->buf;
    memcpy(h->buf, buf, len);
    return h;
}

/* The byte count of a completed receive of MPI_BYTE. Open MPI keeps it
 * in the status (what MPI_Get_count divides by the type's size); reading
 * it there takes a load instead of a library call, which was a sixth of
 * what the transport spent on a delivered message. Other MPIs, or a build
 * with make OPT="-O2 -g -DGV_MPI_GET_COUNT": the call. */
static inline size_t status_bytes(const MPI_Status *st)
{
#if defined(OPEN_MPI) && (OMPI_MAJOR_VERSION >= 2) && !defined(GV_MPI_GET_COUNT)
    _Static_assert(sizeof(st->_ucount) == sizeof(size_t),
                   "Open MPI's status keeps the byte count in a size_t");
    return st->_ucount;
#else
    int count = 0;

    MPI_Get_count(st, MPI_BYTE, &count);
    return (count < 0) ? SIZE_MAX : (size_t)count;
#endif
}

/* One completed ring receive, in posting order. */
static void ring_handle(mpi_tl_t *m, gv_tl_t *tl, unsigned i,
                        const MPI_Status *st)
{
    const uint8_t *buf   = ring_buf(m, i);
    int            src   = st->MPI_SOURCE;
    size_t         bytes = status_bytes(st);
    int            count = (bytes <= m->eager) ? (int)bytes : -1;

    if ((src < 0) || (src >= tl->size) || (src == tl->rank)) {
        reject(m, src, "source rank %d is not a peer (%lld bytes)", src,
               (long long)bytes);
        return;
    }
    if (count < 0) {
        reject(m, src, "a %d-byte receive holds %lld bytes", (int)m->eager,
               (long long)bytes);
        return;
    }
    if ((st->MPI_TAG >= TAG_ID) && (st->MPI_TAG <= TAG_ID_LAST) &&
        (tl->attr.caps & GV_TL_CAP_AM_ID)) {
        if (m->peers[src].head != NULL) {
            held_t *h = held_copy(m, src, buf, (size_t)count);
            h->id     = st->MPI_TAG - TAG_ID;
        } else {
            tl->params.recv_id_cb(tl->params.recv_arg, src,
                                  (unsigned)(st->MPI_TAG - TAG_ID), buf,
                                  (size_t)count);
        }
    } else if (st->MPI_TAG == TAG_RTS) {
        rts_recv(m, tl, src, buf, count);
    } else if (st->MPI_TAG != TAG_EAGER) {
        reject(m, src, "unknown tag %d (%lld bytes)", st->MPI_TAG,
               (long long)count);
    } else if (m->peers[src].head != NULL) {
        held_copy(m, src, buf, (size_t)count);
    } else {
        tl->params.recv_cb(tl->params.recv_arg, src, buf, (size_t)count);
    }
}

/* The ring's head slot @a i is done with: move the head on; the slot is
 * started again by the next ring_progress(). */
static inline void ring_advance(mpi_tl_t *m, unsigned i)
{
    m->ring_on[i] = 0;
    m->ring_head  = (i + 1 == m->nring) ? 0 : i + 1;
    m->nrepost++;
}

/* The ring's head slot @a i completed its MPI_Test() with @a rc: deliver
 * or report it, and move the head on. */
static void __attribute__((noinline))
ring_complete(mpi_tl_t *m, gv_tl_t *tl, unsigned i, int rc,
              const MPI_Status *st)
{
    ERRBUF;
    int cls;

    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        if (cls == MPI_ERR_TRUNCATE)
            reject(m, st->MPI_SOURCE, "message from rank %d longer than "
                   "%lld bytes (GV_MPI_EAGER differs between ranks?)",
                   st->MPI_SOURCE, (long long)m->eager);
        else if ((st->MPI_SOURCE >= 0) && (st->MPI_SOURCE < tl->size))
            gv__peer_failed(st->MPI_SOURCE, "MPI receive failed: %s",
                            ERRSTR(rc));
        else
            gv_fatal("MPI receive failed: %s", ERRSTR(rc));
        /* Open MPI (4.1) frees a persistent request whose MPI_Test
         * fails, and MPI_Start on what is left fails: make the slot's
         * receive again, so that one bad message does not end the ring. */
        if (m->ring_req[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&m->ring_req[i]);
        if (ring_init_req(m, i) != GV_OK)
            gv_fatal("cannot make a ring receive again; the mpi transport "
                     "cannot continue");
    } else {
        ring_handle(m, tl, i, st);
    }
    ring_advance(m, i);
}

/* Test the ring's head once: 1 if it completed (and was delivered or
 * reported), 0 if it is still waiting. A request or reply (am_send_id's
 * tag) from a peer with nothing held, of a size that fits, is delivered
 * right here: the same checks as ring_handle()'s, without its call and
 * its branches for the rarer kinds. */
static inline int ring_test_head(mpi_tl_t *m, gv_tl_t *tl)
{
    MPI_Status st;
    unsigned   i    = m->ring_head;
    int        done = 0;
    int        rc   = MPI_Test(&m->ring_req[i], &done, &st);
    unsigned   src;
    size_t     len;

    if (__builtin_expect(rc == MPI_SUCCESS, 1)) {
        if (!done)
            return 0;
        src = (unsigned)st.MPI_SOURCE;
        len = status_bytes(&st);
        if (((unsigned)(st.MPI_TAG - TAG_ID) <= TAG_ID_LAST - TAG_ID) &&
            (tl->attr.caps & GV_TL_CAP_AM_ID) && (src < (unsigned)tl->size) &&
            (src != (unsigned)tl->rank) && (len <= m->eager) &&
            (m->peers[src].head == NULL)) {
            tl->params.recv_id_cb(tl->params.recv_arg, (int)src,
                                  (unsigned)(st.MPI_TAG - TAG_ID),
                                  ring_buf(m, i), len);
            ring_advance(m, i);
            return 1;
        }
    }
    ring_complete(m, tl, i, rc, &st);
    return 1;
}

static unsigned __attribute__((noinline))
ring_progress(mpi_tl_t *m, gv_tl_t *tl)
{
    unsigned i, n = 0, limit;

    /* Start again the receives the last call completed. Doing it here,
     * not right after their handlers, keeps MPI_Start off the path from
     * a request's arrival to the reply its handler queued: the reply goes
     * out first. Slots restart in ring order, so MPI's posting order still
     * matches the order they are tested in. */
    while (m->nrepost > 0) {
        i = (m->ring_head + m->nring - m->nrepost) % m->nring;
        if (ring_post(m, i) != GV_OK)
            gv_fatal("cannot repost a receive; the mpi transport cannot "
                     "continue");
        m->nrepost--;
    }
    /* After a quiet spell, one receive per call: testing the next one
     * after a handler ran would, whenever it is not in yet, run Open MPI's
     * progress (a poll() of every socket over the tcp BTL, 0.7 us here)
     * between a request's arrival and the reply its handler queued. When
     * the last call delivered too, messages are streaming in: drain what
     * has completed. */
    limit = m->last_delivered ? m->nring : 1;
    while ((n < limit) && ring_test_head(m, tl))
        n++;
    m->last_delivered = (n > 0);
    return n;
}

/* Deliver what the held queues allow: each peer's messages in order, up to
 * the first payload not yet in; then post receives for waiting payloads. */
static unsigned held_progress(mpi_tl_t *m, gv_tl_t *tl)
{
    ERRBUF;
    unsigned n = 0;
    int      k = 0;

    while (k < m->nheld_peers) {
        int         src = m->held_peers[k];
        mpi_peer_t *p   = &m->peers[src];
        held_t     *h;

        while ((h = p->head) != NULL) {
            if (h->state == HELD_WAITING)
                held_post(m, src);
            if (h->state == HELD_WAITING)
                break;
            if (h->state == HELD_POSTED) {
                MPI_Status st;
                int        done = 0, count = 0;
                int        rc = MPI_Test(&h->req, &done, &st);

                if ((rc == MPI_SUCCESS) && !done)
                    break;
                h->state = HELD_READY;
                if (rc != MPI_SUCCESS) {
                    reject(m, src, "payload receive from rank %d failed (%lld"
                           " bytes expected)", src, (long long)h->expect);
                    gv_debug("payload receive error: %s", ERRSTR(rc));
                    h->req = MPI_REQUEST_NULL;
                    h->len = 0;
                } else {
                    MPI_Get_count(&st, MPI_BYTE, &count);
                    if ((count < 0) || ((size_t)count != h->expect)) {
                        reject(m, src, "payload of %d bytes, %lld announced",
                               count, (long long)h->expect);
                        h->len = 0;
                    }
                }
            }
            p->head = h->next;
            if (p->head == NULL)
                p->tail = NULL;
            if (h->id >= 0)
                tl->params.recv_id_cb(tl->params.recv_arg, src,
                                      (unsigned)h->id, h->buf, h->len);
            else if (h->len > 0)
                tl->params.recv_cb(tl->params.recv_arg, src, h->buf, h->len);
            if (h->base != NULL)
                payload_buf_put(m, h->base, h->cap);
            gv_free(h);
            n++;
        }
        if (p->head == NULL) {
            p->listed        = 0;
            m->held_peers[k] = m->held_peers[--m->nheld_peers];
        } else {
            held_post(m, src);
            k++;
        }
    }
    return n;
}

/* ---- send side ----------------------------------------------------- */

static send_slot_t *slot_get(mpi_tl_t *m)
{
    send_slot_t *s = m->free_slots;

    if (s == NULL)
        return NULL;
    m->free_slots = s->next_free;
    m->nfree--;
    s->ureq  = NULL;
    s->owned = NULL;
    return s;
}

static void slot_put(mpi_tl_t *m, send_slot_t *s)
{
    gv_free(s->owned);
    s->owned      = NULL;
    s->ureq       = NULL;
    s->next_free  = m->free_slots;
    m->free_slots = s;
    m->nfree++;
}

static void act_add(mpi_tl_t *m, send_slot_t *s, MPI_Request r)
{
    m->act_req[m->nact]  = r;
    m->act_slot[m->nact] = s;
    m->nact++;
}

static unsigned send_progress(mpi_tl_t *m)
{
    ERRBUF;
    unsigned ndone = 0, i, j;
    int      outcount = 0, rc;

    rc = MPI_Testsome((int)m->nact, m->act_req, &outcount, m->done_idx,
                      m->done_st);
    if ((rc != MPI_SUCCESS) && (rc != MPI_ERR_IN_STATUS))
        gv_fatal("MPI_Testsome over %u sends failed: %s", m->nact,
                 ERRSTR(rc));
    if ((outcount == MPI_UNDEFINED) || (outcount <= 0))
        return 0;
    for (i = 0; i < (unsigned)outcount; i++) {
        int e = (rc == MPI_ERR_IN_STATUS) ? m->done_st[i].MPI_ERROR
                                          : MPI_SUCCESS;
        send_slot_t *s = m->act_slot[m->done_idx[i]];

        if ((e != MPI_SUCCESS) && (e != MPI_ERR_PENDING))
            gv__peer_failed(s->dst, "MPI send failed: %s", ERRSTR(e));
        m->done_slot[ndone++] = s;
    }
    /* Compact first: the callbacks below may send, which appends. */
    for (i = 0, j = 0; i < m->nact; i++) {
        if (m->act_req[i] == MPI_REQUEST_NULL)
            continue;
        m->act_req[j]  = m->act_req[i];
        m->act_slot[j] = m->act_slot[i];
        j++;
    }
    m->nact = j;
    for (i = 0; i < ndone; i++) {
        send_slot_t *s    = m->done_slot[i];
        gv_req_t    *ureq = s->ureq;

        slot_put(m, s);
        if (ureq != NULL)
            ureq->cb(ureq, GV_OK);
    }
    return ndone;
}

static gv_status_t isend(mpi_tl_t *m, send_slot_t *s, const void *buf,
                         size_t len, int tag, MPI_Comm comm, int test_now)
{
    ERRBUF;
    MPI_Request r;
    int         done = 0;
    int         rc   = MPI_Isend(buf, (int)len, MPI_BYTE, s->dst, tag, comm,
                                 &r);

    if (rc != MPI_SUCCESS) {
        gv__peer_failed(s->dst, "MPI_Isend of %zu bytes failed: %s", len,
                        ERRSTR(rc));
        slot_put(m, s);
        return GV_ERR_UNREACHABLE;
    }
    /* Small sends usually complete inside MPI_Isend (copied into the
     * shared-memory FIFO or the socket); finish them here so the common
     * case never reaches the in-flight array. */
    if (test_now && (MPI_Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS) &&
        done) {
        slot_put(m, s);
        return GV_OK;
    }
    act_add(m, s, r);
    return GV_OK;
}

/* A whole message of @a len bytes at @a f, up to SEND_NOW_MAX, with @a
 * tag on am_comm. Far below every BTL's and UCX's eager limit, so
 * MPI_Send returns as soon as MPI has copied the bytes, whatever the
 * receiver does; and it costs less than MPI_Isend plus MPI_Test. MPI keeps
 * it in order with earlier MPI_Isend calls to the same rank. */
static inline __attribute__((always_inline)) gv_status_t
send_now(mpi_tl_t *m, int dst, int tag, const void *f, size_t len)
{
    ERRBUF;
    int rc = MPI_Send(f, (int)len, MPI_BYTE, dst, tag, m->am_comm);

    if (__builtin_expect(rc != MPI_SUCCESS, 0)) {
        gv__peer_failed(dst, "MPI_Send of %zu bytes failed: %s", len,
                        ERRSTR(rc));
        return GV_ERR_UNREACHABLE;
    }
    return GV_OK;
}

/* A whole message of at most m->eager bytes, hdr then payload, with @a
 * tag on am_comm: copied or sent on return (max_inline). */
static gv_status_t send_eager(mpi_tl_t *m, int dst, int tag, const void *hdr,
                              size_t hdr_len, const void *payload, size_t len)
{
    size_t       total = hdr_len + len;
    send_slot_t *s;

    if (total <= SEND_NOW_MAX) {
        uint8_t     tmp[SEND_NOW_MAX];
        const void *f = payload; /* already one frame if hdr_len is 0 */

        if (hdr_len != 0) {
            memcpy(tmp, hdr, hdr_len);
            if (len > 0)
                memcpy(tmp + hdr_len, payload, len);
            f = tmp;
        }
        return send_now(m, dst, tag, f, total);
    }
    s = slot_get(m);
    if (s == NULL)
        return GV_ERR_NO_RESOURCE;
    if (s->buf == NULL)
        s->buf = gv_malloc(m->eager);
    s->dst = dst;
    if (hdr_len != 0)
        memcpy(s->buf, hdr, hdr_len);
    if (len > 0)
        memcpy(s->buf + hdr_len, payload, len);
    return isend(m, s, s->buf, total, tag, m->am_comm, 1);
}

static gv_status_t mpi_am_send(gv_tl_t *tl, int dst, const void *hdr,
                               size_t hdr_len, const void *payload,
                               size_t len, gv_req_t *req)
{
    mpi_tl_t    *m     = tl->priv;
    size_t       total = hdr_len + len;
    send_slot_t *s, *d;
    rts_t        r;
    gv_status_t  status;

    if ((dst < 0) || (dst >= tl->size) || (dst == tl->rank) ||
        (hdr_len > GV_TL_MAX_HDR) || (total > tl->attr.max_msg))
        return GV_ERR_INVALID;
    if (total <= m->eager)
        return send_eager(m, dst, TAG_EAGER, hdr, hdr_len, payload, len);

    /* Large: a control frame, then the payload from the caller's buffer. */
    if (m->nfree < 2)
        return GV_ERR_NO_RESOURCE;
    s = slot_get(m);
    d = slot_get(m);
    if (s->buf == NULL)
        s->buf = gv_malloc(m->eager);
    r.payload_len = len;
    r.hdr_len     = (uint32_t)hdr_len;
    r.magic       = RTS_MAGIC;
    memcpy(s->buf, &r, sizeof(r));
    memcpy(s->buf + sizeof(r), hdr, hdr_len);
    s->dst = dst;
    d->dst = dst;
    if (req == NULL) {
        /* No way to tell the caller later: keep our own copy. */
        d->owned = gv_malloc(len);
        memcpy(d->owned, payload, len);
        payload = d->owned;
    }
    d->ureq = req;
    status  = isend(m, s, s->buf, sizeof(r) + hdr_len, TAG_RTS, m->am_comm,
                    1);
    if (status != GV_OK) {
        slot_put(m, d);
        return status;
    }
    /* On failure isend() returns d to the pool (and the job is stopping). */
    status = isend(m, d, payload, len, TAG_DATA, m->data_comm, 0);
    if (status != GV_OK)
        return status;
    return (req != NULL) ? GV_INPROGRESS : GV_OK;
}

/* The payload alone, the id in the tag: Open MPI's shared memory carries
 * 8 bytes at less cost than 16 (see the transport's header comment). */
static gv_status_t mpi_am_send_id(gv_tl_t *tl, int dst, uint16_t id,
                                  const void *payload, size_t len)
{
    if ((dst < 0) || (dst >= tl->size) || (dst == tl->rank) ||
        (len > tl->attr.max_inline))
        return GV_ERR_INVALID;
    /* The payload is the whole message: straight to send_now(), without
     * send_eager()'s call and frame. */
    if (len <= SEND_NOW_MAX)
        return send_now(tl->priv, dst, TAG_ID + (int)id, payload, len);
    return send_eager(tl->priv, dst, TAG_ID + (int)id, NULL, 0, payload, len);
}

static unsigned mpi_progress(gv_tl_t *tl)
{
    mpi_tl_t *m = tl->priv;
    unsigned  n;

    /* Quiet: nothing to repost, held or sending, and the last call
     * delivered nothing, so ring_progress() would test the ring's head
     * once. Do just that, without its frame: most polls end here. */
    if ((m->nrepost == 0) && !m->last_delivered && (m->nheld_peers == 0) &&
        (m->nact == 0)) {
        if (!ring_test_head(m, tl))
            return 0;
        m->last_delivered = 1;
        return 1;
    }
    n = ring_progress(m, tl);

    if (m->nheld_peers > 0)
        n += held_progress(m, tl);
    if (m->nact > 0)
        n += send_progress(m);
    return n;
}

/* ---- one-sided ----------------------------------------------------- */

static void stage_reset(mpi_tl_t *m)
{
    int i;

    for (i = 0; i < m->ndirty; i++)
        m->dirty[m->dirty_list[i]] = 0;
    m->ndirty     = 0;
    m->stage_cur  = m->stage_first;
    m->stage_used = 0;
}

static gv_status_t flush_all(mpi_tl_t *m)
{
    ERRBUF;
    int rc;

    /* Over Open MPI's pt2pt window the flush waits for the targets'
     * progress: the monitor names the target if there is only one. */
    gv__lib_enter((m->ndirty == 1) ? m->dirty_list[0] : -1,
                  "MPI_Win_flush_all");
    rc = MPI_Win_flush_all(m->win);
    gv__lib_leave();

    if (rc != MPI_SUCCESS) {
        gv_error("MPI_Win_flush_all failed: %s", ERRSTR(rc));
        return GV_ERR_IO;
    }
    stage_reset(m);
    return GV_OK;
}

static gv_status_t flush_one(mpi_tl_t *m, int dst)
{
    ERRBUF;
    int rc;

    gv__lib_enter(dst, "MPI_Win_flush");
    rc = MPI_Win_flush(dst, m->win);
    gv__lib_leave();

    if (rc != MPI_SUCCESS) {
        gv_error("MPI_Win_flush to rank %d failed: %s", dst, ERRSTR(rc));
        return GV_ERR_IO;
    }
    if (m->dirty[dst]) {
        int i;

        m->dirty[dst] = 0;
        for (i = 0; i < m->ndirty; i++) {
            if (m->dirty_list[i] == dst) {
                m->dirty_list[i] = m->dirty_list[--m->ndirty];
                break;
            }
        }
    }
    /* No target has unflushed operations: every staged operand is free. */
    if (m->ndirty == 0) {
        m->stage_cur  = m->stage_first;
        m->stage_used = 0;
    }
    return GV_OK;
}

/* Make room for @a n operands in the current arena chunk (n is small):
 * every operand of one operation is staged before it is issued, so a
 * flush_all here never recycles an operand of an op not yet issued. */
static gv_status_t stage_reserve(mpi_tl_t *m, unsigned n)
{
    if (m->stage_used + n <= STAGE_CHUNK)
        return GV_OK;
    if (m->stage_cur->next == NULL) {
        if (m->stage_nchunks == STAGE_MAX)
            return flush_all(m); /* bound the arena: complete, start over */
        m->stage_cur->next = gv_calloc(1, sizeof(stage_chunk_t));
        m->stage_nchunks++;
    }
    m->stage_cur  = m->stage_cur->next;
    m->stage_used = 0;
    return GV_OK;
}

/* A stable home for an operand MPI may read until the op completes. */
static uint64_t *stage(mpi_tl_t *m, uint64_t v)
{
    uint64_t *p = &m->stage_cur->v[m->stage_used++];

    *p = v;
    return p;
}

static void mark_dirty(mpi_tl_t *m, int dst)
{
    if (!m->dirty[dst]) {
        m->dirty[dst]                 = 1;
        m->dirty_list[m->ndirty++]    = dst;
    }
}

static gv_status_t check_range(gv_tl_t *tl, int dst, uint64_t off,
                               size_t len)
{
    mpi_tl_t *m = tl->priv;

    if ((dst < 0) || (dst >= tl->size) || (off > m->heap_size) ||
        (len > m->heap_size - off))
        return GV_ERR_INVALID;
    return GV_OK;
}

static gv_status_t mpi_atomic64(gv_tl_t *tl, gv_tl_amo_t op, int dst,
                                uint64_t off, uint64_t value,
                                uint64_t compare, uint64_t *result_p,
                                gv_req_t *req)
{
    ERRBUF;
    mpi_tl_t   *m = tl->priv;
    uint64_t   *vp, *cp, *rp = result_p;
    gv_status_t status;
    int         rc;

    if ((check_range(tl, dst, off, 8) != GV_OK) || ((off & 7) != 0) ||
        ((unsigned)op >= GV_TL_AMO_LAST))
        return GV_ERR_INVALID;
    status = stage_reserve(m, 3);
    if (status != GV_OK)
        return status;
    vp = stage(m, value);
    cp = stage(m, compare);
    if ((rp == NULL) && (op != GV_TL_AMO_ADD))
        rp = stage(m, 0);
    mark_dirty(m, dst);
    switch (op) {
    case GV_TL_AMO_ADD:
        rc = MPI_Accumulate(vp, 1, MPI_UINT64_T, dst, (MPI_Aint)off, 1,
                            MPI_UINT64_T, MPI_SUM, m->win);
        break;
    case GV_TL_AMO_FADD:
        rc = MPI_Fetch_and_op(vp, rp, MPI_UINT64_T, dst, (MPI_Aint)off,
                              MPI_SUM, m->win);
        break;
    case GV_TL_AMO_SWAP:
        rc = MPI_Fetch_and_op(vp, rp, MPI_UINT64_T, dst, (MPI_Aint)off,
                              MPI_REPLACE, m->win);
        break;
    case GV_TL_AMO_CSWAP:
    default:
        rc = MPI_Compare_and_swap(vp, cp, rp, MPI_UINT64_T, dst,
                                  (MPI_Aint)off, m->win);
        break;
    }
    if (rc != MPI_SUCCESS) {
        gv_error("MPI atomic %d to rank %d offset %llu failed: %s", (int)op,
                 dst, (unsigned long long)off, ERRSTR(rc));
        return GV_ERR_IO;
    }
    return (req != NULL) ? flush_one(m, dst) : GV_OK;
}

/* MPI counts are ints: move at most 1 GiB per call. */
#define RMA_CHUNK ((size_t)1 << 30)

static gv_status_t mpi_put(gv_tl_t *tl, int dst, uint64_t off,
                           const void *buf, size_t len, gv_req_t *req)
{
    ERRBUF;
    mpi_tl_t *m = tl->priv;
    size_t    done;

    if (check_range(tl, dst, off, len) != GV_OK)
        return GV_ERR_INVALID;
    mark_dirty(m, dst);
    for (done = 0; done < len; done += RMA_CHUNK) {
        size_t n  = (len - done < RMA_CHUNK) ? len - done : RMA_CHUNK;
        int    rc = MPI_Put((const uint8_t *)buf + done, (int)n, MPI_BYTE,
                            dst, (MPI_Aint)(off + done), (int)n, MPI_BYTE,
                            m->win);
        if (rc != MPI_SUCCESS) {
            gv_error("MPI_Put of %zu bytes to rank %d failed: %s", n, dst,
                     ERRSTR(rc));
            return GV_ERR_IO;
        }
    }
    return (req != NULL) ? flush_one(m, dst) : GV_OK;
}

static gv_status_t mpi_get(gv_tl_t *tl, int dst, uint64_t off, void *buf,
                           size_t len, gv_req_t *req)
{
    ERRBUF;
    mpi_tl_t *m = tl->priv;
    size_t    done;

    if (check_range(tl, dst, off, len) != GV_OK)
        return GV_ERR_INVALID;
    mark_dirty(m, dst);
    for (done = 0; done < len; done += RMA_CHUNK) {
        size_t n  = (len - done < RMA_CHUNK) ? len - done : RMA_CHUNK;
        int    rc = MPI_Get((uint8_t *)buf + done, (int)n, MPI_BYTE, dst,
                            (MPI_Aint)(off + done), (int)n, MPI_BYTE,
                            m->win);
        if (rc != MPI_SUCCESS) {
            gv_error("MPI_Get of %zu bytes from rank %d failed: %s", n, dst,
                     ERRSTR(rc));
            return GV_ERR_IO;
        }
    }
    return (req != NULL) ? flush_one(m, dst) : GV_OK;
}

static gv_status_t mpi_flush(gv_tl_t *tl, int dst, gv_req_t *req)
{
    mpi_tl_t *m = tl->priv;

    if (dst < 0)
        return flush_all(m);
    if (dst >= tl->size)
        return GV_ERR_INVALID;
    return flush_one(m, dst);
}

/* ---- init / fini --------------------------------------------------- */

/* The heap is zeroed at init, so all of it becomes resident: does this
 * node hold it for every local rank? Logs why not. */
static int heap_fits(gv_tl_t *tl)
{
    return gv__node_mem_fits("mpi", tl->params.heap_size,
                             tl->boot->local_size, "GV_HEAP");
}

static gv_status_t win_open(mpi_tl_t *m, gv_tl_t *tl)
{
    ERRBUF;
    MPI_Info info;
    void    *base = NULL;
    int      rc;

    m->heap_size = tl->params.heap_size;
    MPI_Info_create(&info);
    /* Every rank's share has the same size and byte displacements. */
    MPI_Info_set(info, "same_size", "true");
    MPI_Info_set(info, "same_disp_unit", "true");
    rc = MPI_Win_allocate((MPI_Aint)m->heap_size, 1, info, m->am_comm, &base,
                          &m->win);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        gv_info("mpi: MPI_Win_allocate of %zu bytes failed: %s",
                m->heap_size, ERRSTR(rc));
        return GV_ERR_NO_MEMORY;
    }
    MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN);
    m->heap = base;
    /* The heap starts zeroed on every transport; MPI does not promise it
     * (only some window flavours come from fresh pages). Nobody can reach
     * it yet: the epoch below opens before a barrier. */
    memset(m->heap, 0, m->heap_size);
    rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win);
    if (rc != MPI_SUCCESS) {
        gv_info("mpi: MPI_Win_lock_all failed: %s", ERRSTR(rc));
        MPI_Win_free(&m->win);
        return GV_ERR_IO;
    }
    m->have_win      = 1;
    m->stage_first   = gv_calloc(1, sizeof(stage_chunk_t));
    m->stage_cur     = m->stage_first;
    m->stage_nchunks = 1;
    m->dirty         = gv_calloc((size_t)tl->size, 1);
    m->dirty_list    = gv_calloc((size_t)tl->size, sizeof(int));
    return GV_OK;
}

static void win_close(mpi_tl_t *m)
{
    stage_chunk_t *c, *next;

    if (!m->have_win)
        return;
    MPI_Win_flush_all(m->win);
    MPI_Win_unlock_all(m->win);
    MPI_Win_free(&m->win);
    m->have_win = 0;
    for (c = m->stage_first; c != NULL; c = next) {
        next = c->next;
        gv_free(c);
    }
    gv_free(m->dirty);
    gv_free(m->dirty_list);
}

static void ring_close(mpi_tl_t *m)
{
    unsigned i;

    if (m->ring_req == NULL)
        return;
    for (i = 0; i < m->nring; i++) {
        if (m->ring_req[i] == MPI_REQUEST_NULL)
            continue;
        if (m->ring_on[i]) {
            MPI_Cancel(&m->ring_req[i]);
            MPI_Wait(&m->ring_req[i], MPI_STATUS_IGNORE);
            m->ring_on[i] = 0;
        }
        MPI_Request_free(&m->ring_req[i]);
    }
}

static void sends_close(mpi_tl_t *m)
{
    uint64_t deadline = gv__now_ns() + 1000000000ull;
    unsigned i;

    /* After the final barrier every message was handled, so these are
     * complete or about to be; don't wait on a dead peer forever. */
    while ((m->nact > 0) && (gv__now_ns() < deadline))
        send_progress(m);
    for (i = 0; i < m->nact; i++) {
        /* Still in flight: let MPI finish it, and keep its buffer. */
        MPI_Request_free(&m->act_req[i]);
        m->act_slot[i]->buf   = NULL;
        m->act_slot[i]->owned = NULL;
    }
    m->nact = 0;
}

static void held_close(mpi_tl_t *m, int size)
{
    int i;

    if (m->peers == NULL)
        return;
    for (i = 0; i < size; i++) {
        held_t *h, *next;

        for (h = m->peers[i].head; h != NULL; h = next) {
            next = h->next;
            if (h->state == HELD_POSTED) {
                MPI_Cancel(&h->req);
                MPI_Wait(&h->req, MPI_STATUS_IGNORE);
            }
            gv_free(h->base);
            gv_free(h);
        }
    }
}

static void tl_free(mpi_tl_t *m, int size)
{
    unsigned i;

    if (m->slots != NULL)
        for (i = 0; i < m->nslots; i++)
            gv_free(m->slots[i].buf);
    held_close(m, size);
    for (i = 0; i < NSPARE; i++)
        gv_free(m->spare_buf[i]);
    gv_free(m->slots);
    gv_free(m->act_req);
    gv_free(m->act_slot);
    gv_free(m->done_idx);
    gv_free(m->done_st);
    gv_free(m->done_slot);
    gv_free(m->ring_req);
    gv_free(m->ring_on);
    gv_free(m->ring_mem);
    gv_free(m->peers);
    gv_free(m->held_peers);
    if (m->data_comm != MPI_COMM_NULL)
        MPI_Comm_free(&m->data_comm);
    if (m->am_comm != MPI_COMM_NULL)
        MPI_Comm_free(&m->am_comm);
    gv_free(m);
}

static gv_status_t mpi_init(gv_tl_t *tl)
{
    ERRBUF;
    MPI_Comm    boot_comm = gv__boot_mpi_comm();
    mpi_tl_t   *m;
    gv_status_t status;
    MPI_Request breq;
    unsigned    i;
    int         rc;

    if (boot_comm == MPI_COMM_NULL) {
        const char *boot = (tl->boot != NULL) ? tl->boot->ops->name : "none";
        int         asked = (strcmp(gv__env.TRANSPORT, "mpi") == 0);

        if (strcmp(boot, "gvrun") == 0) {
            if (asked)
                gv_error("the mpi transport needs mpirun (or srun); gvrun "
                         "ranks are not an MPI job");
            else
                gv_info("mpi: needs mpirun (or srun); gvrun ranks are not "
                        "an MPI job");
        } else if (asked) {
            gv_error("the mpi transport bootstraps through MPI, but this "
                     "job bootstrapped through %s", boot);
        } else {
            gv_info("mpi: only with GV_TRANSPORT=mpi (the job bootstrapped "
                    "through %s)", boot);
        }
        return GV_ERR_UNSUPPORTED;
    }

    m            = gv_calloc(1, sizeof(*m));
    m->am_comm   = MPI_COMM_NULL;
    m->data_comm = MPI_COMM_NULL;
    m->eager     = gv__env.MPI_EAGER;
    m->nring     = (unsigned)gv__env.MPI_RECVS;
    m->nslots    = (unsigned)gv__env.MPI_SENDS;
    if (m->eager < sizeof(rts_t) + GV_TL_MAX_HDR)
        m->eager = sizeof(rts_t) + GV_TL_MAX_HDR;
    rc = MPI_Comm_dup(boot_comm, &m->am_comm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_dup(boot_comm, &m->data_comm);
    if (rc != MPI_SUCCESS) {
        gv_info("mpi: MPI_Comm_dup failed: %s", ERRSTR(rc));
        status = GV_ERR_IO;
        goto err_free;
    }
    MPI_Comm_set_errhandler(m->am_comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(m->data_comm, MPI_ERRORS_RETURN);
    /* Every rank must agree on the eager size (a message longer than the
     * receiver's ring buffers would be truncated: take the smallest) and on
     * the heap size (the window is declared same_size). One reduction:
     * the minimum of (eager, heap, ~heap) gives the smallest eager and both
     * the smallest and the largest heap. The window is collective, so also
     * agree on whether every node can hold its ranks' heaps. */
    {
        unsigned long mine[4], least[4] = {0, 0, 0, 0};
        MPI_Request   req;

        mine[0] = m->eager;
        mine[1] = tl->params.heap_size;
        mine[2] = ~(unsigned long)tl->params.heap_size;
        mine[3] = (tl->params.heap_size == 0) || heap_fits(tl);
        rc = MPI_Iallreduce(mine, least, 4, MPI_UNSIGNED_LONG, MPI_MIN,
                            m->am_comm, &req);
        if (rc != MPI_SUCCESS) {
            gv_info("mpi: MPI_Iallreduce failed: %s", ERRSTR(rc));
            status = GV_ERR_IO;
            goto err_free;
        }
        status = gv__mpi_wait(&req, "agreement on sizes");
        if (status != GV_OK)
            goto err_free;
        if (least[0] != mine[0])
            gv_warn("GV_MPI_EAGER is %lu here but %lu on another rank; "
                    "using %lu", mine[0], least[0], least[0]);
        /* Ring slots sit eager bytes apart: a multiple of 64 keeps every
         * payload as aligned as handlers are promised. */
        m->eager = (least[0] + 63) & ~(size_t)63;
        if ((least[1] != mine[1]) || (~least[2] != mine[1])) {
            gv_error("GV_HEAP differs between ranks (%lu to %lu bytes); "
                     "the symmetric heap needs the same size everywhere",
                     least[1], ~least[2]);
            status = GV_ERR_INVALID;
            goto err_free;
        }
        if (least[3] == 0) {
            if (mine[3] != 0)
                gv_error("another rank's node cannot hold the heap (GV_HEAP)");
            status = GV_ERR_NO_MEMORY;
            goto err_free;
        }
    }

    m->peers      = gv_calloc((size_t)tl->size, sizeof(*m->peers));
    m->held_peers = gv_calloc((size_t)tl->size, sizeof(int));
    m->slots      = gv_calloc(m->nslots, sizeof(*m->slots));
    m->act_req    = gv_calloc(m->nslots, sizeof(MPI_Request));
    m->act_slot   = gv_calloc(m->nslots, sizeof(send_slot_t *));
    m->done_idx   = gv_calloc(m->nslots, sizeof(int));
    m->done_st    = gv_calloc(m->nslots, sizeof(MPI_Status));
    m->done_slot  = gv_calloc(m->nslots, sizeof(send_slot_t *));
    for (i = m->nslots; i-- > 0;) {
        m->slots[i].next_free = m->free_slots;
        m->free_slots         = &m->slots[i];
    }
    m->nfree    = m->nslots;
    m->ring_req = gv_malloc(m->nring * sizeof(MPI_Request));
    m->ring_on  = gv_calloc(m->nring, 1);
    m->ring_mem = gv_malloc((size_t)m->nring * m->eager);
    for (i = 0; i < m->nring; i++)
        m->ring_req[i] = MPI_REQUEST_NULL;
    for (i = 0; i < m->nring; i++) {
        status = ring_init_req(m, i);
        if (status != GV_OK)
            goto err_ring;
        status = ring_post(m, i);
        if (status != GV_OK)
            goto err_ring;
    }

    tl->priv             = m;
    tl->attr.caps        = GV_TL_CAP_AM;
    tl->attr.max_msg     = MPI_MAX_MSG;
    tl->attr.max_inline  = m->eager;
    tl->attr.flush_blocks = 1; /* MPI_Win_flush waits inside MPI */
    tl->attr.max_oneshot = MPI_ONESHOT;
    /* A request or reply of 16 KiB or more goes from the caller's memory:
     * against copying it first, a 32768-byte hop over vader took 6.6 us
     * less (perf/hop_mpi; perf/notes/ofi-shm-split-messages.md). */
    tl->attr.now_zcopy_min = 16u << 10;
    /* Ids travel in tags where the library has 64 Ki of them to spare (MPI
     * promises only 32767; Open MPI's ob1 has 2^31 - 1). */
    {
        void *ub  = NULL;
        int   flag = 0;

        if ((MPI_Comm_get_attr(m->am_comm, MPI_TAG_UB, &ub, &flag) ==
             MPI_SUCCESS) && flag && (ub != NULL) &&
            (*(int *)ub >= TAG_ID_LAST) && (tl->params.recv_id_cb != NULL))
            tl->attr.caps |= GV_TL_CAP_AM_ID;
    }
    if (tl->params.heap_size > 0) {
        status = win_open(m, tl);
        if (status != GV_OK)
            goto err_ring;
        tl->attr.caps     |= GV_TL_CAP_RMA | GV_TL_CAP_ATOMIC64;
        tl->attr.heap_base = m->heap;
    }
    /* Nobody touches a peer's window before every heap is zeroed. */
    rc = MPI_Ibarrier(m->am_comm, &breq);
    if (rc != MPI_SUCCESS) {
        gv_info("mpi: barrier after init failed: %s", ERRSTR(rc));
        status = GV_ERR_IO;
        goto err_win;
    }
    status = gv__mpi_wait(&breq, "barrier after the window was made");
    if (status != GV_OK)
        goto err_win;
    snprintf(tl->attr.detail, sizeof(tl->attr.detail),
             "eager %zu B, %u receives posted, %u send slots, window %s, "
             "ids in tags %s", m->eager, m->nring, m->nslots,
             m->have_win ? "yes" : "no",
             (tl->attr.caps & GV_TL_CAP_AM_ID) ? "yes" : "no");
    gv_debug("mpi transport up: %s", tl->attr.detail);
    return GV_OK;

err_win:
    win_close(m);
err_ring:
    ring_close(m);
err_free:
    tl->priv = NULL;
    tl_free(m, tl->size);
    return status;
}

static void mpi_fini(gv_tl_t *tl)
{
    mpi_tl_t *m = tl->priv;

    if (m == NULL)
        return;
    if (m->rejected > 0)
        gv_info("mpi: %llu malformed messages were rejected",
                (unsigned long long)m->rejected);
    win_close(m);
    sends_close(m);
    ring_close(m);
    tl_free(m, tl->size);
    tl->priv = NULL;
}

const gv_tl_ops_t gv_tl_mpi_ops = {
    .version  = GV_TL_OPS_VERSION,
    .name     = "mpi",
    .init     = mpi_init,
    .fini     = mpi_fini,
    .progress = mpi_progress,
    .am_send  = mpi_am_send,
    .am_send_id = mpi_am_send_id,
    .wait     = NULL,
    .put      = mpi_put,
    .get      = mpi_get,
    .atomic64 = mpi_atomic64,
    .flush    = mpi_flush,
};
