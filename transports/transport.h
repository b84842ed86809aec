/* The transport abstraction: one const ops table per backend, capability
 * bits, and the registry that picks one from GV_TRANSPORT. Internal: nothing
 * above transports/ names a backend. SPDX-License-Identifier: BSD-3-Clause
 *
 * Threading: calls never overlap (the thread level the host chose,
 * grapevine/core.h, is at most SERIALIZED); they may come from different
 * threads one after the other, so a transport keeps no per-thread state.
 *
 * Messages. A transport delivers byte messages reliably and in order per
 * pair of ranks. The upper layer (aggregator/) gives each message a header
 * of at most GV_TL_MAX_HDR bytes and a payload; the transport may copy them
 * into one frame. Receives are pushed: from inside progress() the transport
 * calls params->recv_cb(arg, src, data, len) once per message, with a
 * borrowed buffer valid until the callback returns (header and payload are
 * contiguous in it). The callback may call am_send() (replies) but never
 * progress(); if am_send() says GV_ERR_NO_RESOURCE there, the upper layer
 * queues the message and retries later.
 *
 * Send completion: am_send() returns
 *   GV_OK             the bytes were consumed (sent or copied): the caller
 *                     may reuse hdr and payload at once; req is not used.
 *   GV_INPROGRESS     hdr and payload must stay valid and unchanged until
 *                     req->cb(req, status) runs from a later progress().
 *   GV_ERR_NO_RESOURCE nothing was sent; progress and retry.
 *   GV_ERR_UNREACHABLE the peer is gone (already reported).
 * am_send() is never called with dst == own rank (the layer above
 * short-circuits), and 0 < hdr_len + len <= attr.max_msg (a transport may
 * use empty frames for its own purposes).
 *
 * One-sided operations (optional, capability bits) address a peer's
 * symmetric heap by (rank, byte offset). The transport allocates the heap
 * itself when it has GV_TL_CAP_RMA or GV_TL_CAP_ATOMIC64 (so that it can
 * live in shared memory or be registered) and reports its base in
 * attr.heap_base; otherwise gv_init allocates it. Operations to the own
 * rank must work. They are non-blocking: issued ops complete at the latest
 * when a later flush() covering their destination completes; a fetched
 * result (get's buffer, *result_p) is valid only after that. A non-NULL req
 * asks for completion of that one op: GV_OK means already complete,
 * GV_INPROGRESS means req->cb runs later (a transport may complete more
 * than it was asked to).
 *
 * Peer failure: a transport that notices a peer is gone calls
 * gv__peer_failed(rank, reason), which stops the job, or returns 0 (during
 * finalize, or when the host installed a peer-failure callback): the
 * transport then forgets the peer, and from then on answers every send
 * and one-sided operation to it with GV_ERR_UNREACHABLE (never
 * GV_ERR_NO_RESOURCE, which the layer above would retry forever) and
 * completes what it held for it with an error.
 *
 * Sleeping on an fd (GV_TL_CAP_WAIT_FD): wait_fd() gives a descriptor
 * that becomes readable when progress() may find something (a message, a
 * completion, send space that was refused, a peer's death where the
 * transport notices it); arm() is the race-free step before sleeping:
 * GV_OK if nothing is pending, so that any later event makes the fd
 * readable; GV_INPROGRESS if events are pending (the caller progresses and
 * arms again). Level-triggered from the host's point of view: a wake-up
 * stays visible until the next arm() or progress().
 */
#ifndef GV_TRANSPORTS_TRANSPORT_H
#define GV_TRANSPORTS_TRANSPORT_H

#include "core/core.h"
#include "core/boot.h"

#define GV_TL_OPS_VERSION 1
#define GV_TL_MAX_HDR     32   /* bytes of header any transport accepts */

/* Capability bits. The registry rejects a table whose bits and non-NULL
 * slots disagree. */
enum {
    GV_TL_CAP_AM       = 1u << 0, /* am_send (mandatory) */
    GV_TL_CAP_RMA      = 1u << 1, /* put, get */
    GV_TL_CAP_ATOMIC64 = 1u << 2, /* atomic64: add, fetch-add, cswap, swap */
    GV_TL_CAP_WAIT     = 1u << 3, /* wait(): block until an event may be in */
    GV_TL_CAP_WAIT_SEND = 1u << 4, /* wait() also returns when send space
                                      that was refused frees up */
    GV_TL_CAP_AM_ID    = 1u << 5, /* am_send_id: a 16-bit id beside the
                                     payload, outside the message */
    GV_TL_CAP_WAIT_FD  = 1u << 6, /* wait_fd, arm: an fd the host sleeps
                                     on (gv_wait_fd) */
};

typedef enum {
    GV_TL_AMO_ADD,    /* *p += v               (no result)           */
    GV_TL_AMO_FADD,   /* old = *p; *p += v     (result old)          */
    GV_TL_AMO_CSWAP,  /* old = *p; if (old == cmp) *p = v (result old) */
    GV_TL_AMO_SWAP,   /* old = *p; *p = v      (result old)          */
    GV_TL_AMO_LAST
} gv_tl_amo_t;

typedef struct gv_req gv_req_t;
typedef void (*gv_req_cb)(gv_req_t *req, gv_status_t status);
/* Owned by the caller, which keeps it valid until cb has run. */
struct gv_req {
    gv_req_cb cb;
    void     *arg;
};

typedef void (*gv_tl_recv_cb)(void *arg, int src, const void *data,
                              size_t len);
/* A message sent with am_send_id(): its id, and its payload alone. The
 * transport checked src; the id is what arrived (any 16-bit value). */
typedef void (*gv_tl_recv_id_cb)(void *arg, int src, unsigned id,
                                 const void *data, size_t len);

/* What gv_init asks of a transport. */
typedef struct gv_tl_params {
    gv_tl_recv_cb recv_cb;
    gv_tl_recv_id_cb recv_id_cb; /* for GV_TL_CAP_AM_ID */
    void         *recv_arg;
    size_t        heap_size;   /* bytes of symmetric heap per rank */
} gv_tl_params_t;

/* What the transport reports from init. */
typedef struct gv_tl_attr {
    uint32_t caps;             /* GV_TL_CAP_* */
    size_t   max_msg;          /* largest hdr_len + len of one message */
    size_t   max_inline;       /* messages up to this hdr_len + len never
                                  return GV_INPROGRESS (the transport copies
                                  them), so callers need not copy first;
                                  0 (the default) promises nothing */
    size_t   max_oneshot;      /* largest hdr_len + len the library under
                                  the transport sends eagerly, without a
                                  rendezvous or segmentation of its own
                                  (Open MPI's or rxm's eager limit); the AM
                                  layer keeps batches of the default size
                                  within it if it is at least 4 KiB + 8.
                                  0: no such limit */
    size_t   max_id;           /* largest len am_send_id() takes (it
                                  copies or sends it before returning);
                                  0: max_inline. A transport whose
                                  requests and replies pay for a larger
                                  message's batch copy more than for a
                                  copy of its own sets it higher */
    size_t   now_zcopy_min;    /* gv_am_send_now() sends a message that
                                  travels alone with a payload this large
                                  from the caller's memory and, outside
                                  handlers, waits for the transport,
                                  instead of copying it first (as
                                  gv_am_send() does below 64 KiB); 0: the
                                  AM layer's own 64 KiB */
    int      flush_blocks;     /* flush() completes inside the call (the
                                  library waits there): flushing ranks one
                                  at a time would serialize them, so the
                                  layer above flushes everything at once */
    void    *heap_base;        /* own heap, heap_size bytes, or NULL */
    char     detail[256];      /* e.g. "provider tcp;ofi_rxm", for gvinfo */
} gv_tl_attr_t;

typedef struct gv_tl gv_tl_t;
typedef struct gv_tl_ops gv_tl_ops_t;

struct gv_tl {
    const gv_tl_ops_t *ops;
    void              *priv;   /* the backend's state */
    gv_boot_t         *boot;
    int                rank, size;
    gv_tl_params_t     params;
    gv_tl_attr_t       attr;
};

struct gv_tl_ops {
    uint32_t    version;       /* GV_TL_OPS_VERSION */
    const char *name;          /* lower case, unique: what GV_TRANSPORT says */
    /* Mandatory. Collective (may use tl->boot to exchange addresses). Reads
     * tl->params, fills tl->priv and tl->attr. On failure returns an error
     * after logging why at info level (auto tries the next backend) and
     * leaves nothing behind. GV_ERR_UNSUPPORTED: cannot work here. */
    gv_status_t (*init)(gv_tl_t *tl);
    /* Mandatory. Called after a global barrier; peers may close at once. */
    void        (*fini)(gv_tl_t *tl);
    /* Mandatory. Deliver arrived messages, complete sends. Never blocks.
     * Returns the number of events handled (0: nothing happened). */
    unsigned    (*progress)(gv_tl_t *tl);
    /* Mandatory. See the header comment. */
    gv_status_t (*am_send)(gv_tl_t *tl, int dst, const void *hdr,
                           size_t hdr_len, const void *payload, size_t len,
                           gv_req_t *req);
    /* Optional (GV_TL_CAP_AM_ID). Send len bytes of payload as one message
     * with @a id carried beside them, not in an upper header: by the
     * library where it can (MPI: in the tag, so that the message is no
     * larger than its payload: Open MPI's shared memory carries 8 bytes at
     * less cost than 16), else in the transport's own frame header (ucx),
     * which saves the layer above building a header that is then copied.
     * Delivered through params.recv_id_cb, in order with the sender's
     * am_send() messages.
     * len <= attr.max_id: GV_OK (copied or sent), GV_ERR_NO_RESOURCE
     * or GV_ERR_UNREACHABLE, never GV_INPROGRESS. */
    gv_status_t (*am_send_id)(gv_tl_t *tl, int dst, uint16_t id,
                              const void *payload, size_t len);
    /* Optional (GV_TL_CAP_WAIT). Block until a message may have arrived or
     * timeout_us passed. Spurious returns are fine; sleeping through an
     * arrival is not. A rank waiting for send resources (after
     * GV_ERR_NO_RESOURCE) calls it only if the transport also declares
     * GV_TL_CAP_WAIT_SEND (wait() returns when refused space frees up);
     * otherwise it yields and sleeps briefly between polls. */
    void        (*wait)(gv_tl_t *tl, unsigned timeout_us);
    /* Optional (GV_TL_CAP_RMA). */
    gv_status_t (*put)(gv_tl_t *tl, int dst, uint64_t off, const void *buf,
                       size_t len, gv_req_t *req);
    gv_status_t (*get)(gv_tl_t *tl, int dst, uint64_t off, void *buf,
                       size_t len, gv_req_t *req);
    /* Optional (GV_TL_CAP_ATOMIC64). off is 8-byte aligned. */
    gv_status_t (*atomic64)(gv_tl_t *tl, gv_tl_amo_t op, int dst,
                            uint64_t off, uint64_t value, uint64_t compare,
                            uint64_t *result_p, gv_req_t *req);
    /* Mandatory when RMA or ATOMIC64: complete every one-sided op issued so
     * far to dst (-1: to every rank). GV_OK or GV_INPROGRESS (req->cb). */
    gv_status_t (*flush)(gv_tl_t *tl, int dst, gv_req_t *req);
    /* Optional (GV_TL_CAP_WAIT_FD), see "Sleeping on an fd" above. The
     * same descriptor from init to fini; the transport owns it. */
    int         (*wait_fd)(gv_tl_t *tl);
    gv_status_t (*arm)(gv_tl_t *tl);
};

/* A registry row: a backend linked in (ops), one in a plug-in of the
 * shared library (plugin: its file in gv__plugin_dir(), whose symbol sym
 * is the ops table), or one that was not built (why_not). */
typedef struct gv_tl_entry {
    const char        *name;
    const gv_tl_ops_t *ops;
    const char        *plugin;
    const char        *sym;
    const char        *why_not;
} gv_tl_entry_t;

/* Every backend, best first. */
extern const gv_tl_entry_t gv__tl_builtin[];
extern const size_t        gv__tl_nbuiltin;

/* The row's ops table: linked in, or from its plug-in, loaded on the first
 * call. NULL when not built or the plug-in does not load: then @a why says
 * why (for a plug-in: its path and dlerror()'s text); nothing logged. */
const gv_tl_ops_t *gv__tl_ops(const gv_tl_entry_t *e, char *why, size_t len);

/* The row named @a name, or NULL. */
const gv_tl_entry_t *gv__tl_entry(const char *name);

/* Open the transport GV_TRANSPORT names (or the first that works, for
 * auto). Logs one error that lists what is available on failure. */
gv_status_t gv__tl_open(const char *name, gv_boot_t *boot,
                        const gv_tl_params_t *params, gv_tl_t **tl_p);
void        gv__tl_close(gv_tl_t *tl);
/* Is GV_TRANSPORT's value usable (auto, or a built transport)? Logs the
 * error that lists what is available when not. */
gv_status_t gv__tl_name_check(const char *name);
/* Check a table's bits against its slots: GV_OK or GV_ERR_INVALID. */
gv_status_t gv__tl_check(const gv_tl_ops_t *ops, uint32_t caps, char *why,
                         size_t len);
/* "AM,RMA,ATOMIC64,WAIT" */
void        gv__tl_caps_str(uint32_t caps, char *buf, size_t len);

/* The backends' tables (one per file). */
extern const gv_tl_ops_t gv_tl_self_ops;
extern const gv_tl_ops_t gv_tl_tcp_ops;
extern const gv_tl_ops_t gv_tl_shm_ops;
/* The composites shm+<net> (transports/hybrid.c): linked in; the network
 * part's table comes from its row (a plug-in where it is one). */
extern const gv_tl_ops_t gv_tl_shm_tcp_ops;
#if GV_HAVE_UCX
extern const gv_tl_ops_t gv_tl_shm_ucx_ops;
#endif
#if GV_HAVE_OFI
extern const gv_tl_ops_t gv_tl_shm_ofi_ops;
#endif
#if GV_HAVE_UCX
extern const gv_tl_ops_t gv_tl_ucx_ops;
#endif
#if GV_HAVE_OFI
extern const gv_tl_ops_t gv_tl_ofi_ops;
#endif
#if GV_HAVE_MPI
extern const gv_tl_ops_t gv_tl_mpi_ops;
#endif

#endif
