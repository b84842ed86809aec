/** @file
 * Grapevine active messages: register handlers, send, barrier.
 * Threads: every call here is made by the thread allowed to call (see
 * gv_thread_level_t in grapevine/core.h), from the main flow or a worker;
 * from a handler only the sends (gv_am_send and its forms, gv_flush).
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GRAPEVINE_AM_H
#define GRAPEVINE_AM_H

#include <grapevine/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Handler identifier returned by gv_am_register(). */
typedef uint16_t gv_am_id_t;

/**
 * An active-message handler. Runs on the destination rank, from inside
 * gv_progress() (or anything that progresses: gv_wait, a barrier, a
 * blocking send that waits), one message at a time, on the thread that
 * made that call (see gv_thread_level_t).
 * @param [in] src      rank that sent the message.
 * @param [in] payload  borrowed; valid until the handler returns. No
 *                      alignment is promised: copy out with memcpy.
 * @param [in] len      payload length in bytes.
 * @param [in] arg      the pointer given to gv_am_register().
 * A handler may send messages (replies); it must not wait for them.
 */
typedef void (*gv_am_handler_fn_t)(int src, const void *payload, size_t len,
                                   void *arg);

/** Largest number of handlers (including the runtime's own). */
#define GV_AM_MAX_HANDLERS 1024

/**
 * Register a handler. Collective in effect: every rank must register the
 * same handlers in the same order (the id is the registration index).
 * Register before gv_init(), or at any time after it followed by a
 * gv_barrier() before sending with the new id: a message that reaches a
 * rank before it registered the id is rejected (counted, logged naming
 * the id, never called). Handlers registered after gv_init() are forgotten
 * by gv_finalize(); those registered before it stay for the next init.
 * Not from a handler. Thread: as every call (see gv_thread_level_t).
 * @param [out] id_p  the handler id (below GV_AM_MAX_HANDLERS).
 * @return GV_OK, GV_ERR_NO_RESOURCE (table full) or GV_ERR_INVALID.
 */
gv_status_t gv_am_register(gv_am_handler_fn_t fn, void *arg, gv_am_id_t *id_p);

/** Named handler ids lie in [GV_AM_MAX_HANDLERS, GV_AM_NAMED_END). */
#define GV_AM_NAMED_END 32768
/** Longest handler name, in bytes. */
#define GV_AM_NAME_MAX 63

/**
 * Register a handler by name, at any time (before or after gv_init, from
 * a plug-in loaded late), without a common order: the id is derived from
 * the name (a 64-bit hash folded into the named range), so every rank
 * that registers "actor.ping" gets the same id. Not collective: ranks
 * register what they handle. Each rank announces the name to the others;
 * if two different names fall on one id, every rank that learns of both
 * refuses messages to that id (logging both names), and registering the
 * second name here fails with GV_ERR_INVALID naming the first: a message
 * never reaches the wrong handler. A message must reach a rank after it
 * registered the name (a barrier after registering, or the host's own
 * handshake); before that it is rejected, logged with the id and name.
 * Not from a handler. Forgotten by gv_finalize() when registered after
 * gv_init().
 * @param [in]  name  1..GV_AM_NAME_MAX bytes.
 * @param [out] id_p  the id to send to.
 * @return GV_OK; GV_ERR_INVALID (bad name, NULL fn, already registered, a
 *         collision); GV_ERR_STATE (gv_finalize is running).
 */
gv_status_t gv_am_register_named(const char *name, gv_am_handler_fn_t fn,
                                 void *arg, gv_am_id_t *id_p);

/**
 * The id of a named handler, for a rank that sends to it without handling
 * it itself (it announces the name as gv_am_register_named() does, so the
 * same collision checks hold). A rank must call this or register the name
 * before it sends with the id (gv_am_send() refuses it otherwise).
 * @return as gv_am_register_named() (without the fn errors).
 */
gv_status_t gv_am_id_named(const char *name, gv_am_id_t *id_p);

/**
 * Send an active message. The payload is copied before return (or held in
 * an aggregation buffer), so the caller may reuse it at once. Messages
 * from one rank to another are delivered in the order they were sent.
 * If the transport is out of resources this progresses until it is not.
 * @return GV_OK; GV_ERR_INVALID for a bad rank, unknown id or a payload
 *         longer than gv_am_max_payload(); GV_ERR_UNREACHABLE.
 */
gv_status_t gv_am_send(int dst, gv_am_id_t id, const void *payload,
                       size_t len);

/* Internal: what gv_am_send_u64()'s inline fast path reads. Not part of
 * the API. Its layout is compiled into every program that calls the inline
 * path (and, linked against libgrapevine.so, its size into a copy
 * relocation), so changing it means a new version node in
 * core/libgrapevine.map: old programs then refuse to load instead of
 * misreading it. */
typedef struct {
    uint8_t *pos, *end;  /* where the next record to a rank goes, its end */
} gv__am_cursor_t;
struct gv__am_hot {
    gv__am_cursor_t *cur;        /* per rank */
    unsigned         size;       /* ranks; 0 outside gv_init..gv_finalize */
    unsigned         nhandlers;
    uint64_t         msgs_sent, bytes_sent;
};
extern struct gv__am_hot gv__am_hot;
gv_status_t gv__am_send_u64_slow(int dst, gv_am_id_t id, uint64_t value);

/**
 * Send an active message whose payload is one 64-bit word (an index, a
 * value, a delegate's operand), passed by value: gv_am_send(dst, id,
 * &value, 8), with the same order, errors and handler call (the handler
 * gets 8 bytes in host byte order). The GASNet-EX analogue is a short AM
 * with integer arguments. Inline: while a batch to dst has room, a send is
 * a few stores into it, with no call; everything else (no batch open,
 * GV_AGGREGATE=0, bad arguments) is gv_am_send().
 */
static inline gv_status_t gv_am_send_u64(int dst, gv_am_id_t id,
                                         uint64_t value)
{
    if (__builtin_expect(((unsigned)dst < gv__am_hot.size) &&
                             (id < gv__am_hot.nhandlers), 1)) {
        gv__am_cursor_t *c = &gv__am_hot.cur[dst];
        uint8_t         *p = c->pos;

        /* A batch record: u16 id, u16 length, the payload (see
         * aggregator/wire.h); 12 bytes, already a multiple of 4. */
        if (__builtin_expect((size_t)(c->end - p) >= 12, 1)) {
            const uint16_t h[2] = {id, 8};

            __builtin_memcpy(p, h, 4);
            __builtin_memcpy(p + 4, &value, 8);
            c->pos = p + 12;
            gv__am_hot.msgs_sent++;
            gv__am_hot.bytes_sent += 8;
            return GV_OK;
        }
    }
    return gv__am_send_u64_slow(dst, id, value);
}

/**
 * Send an active message without copying a large payload: like
 * gv_am_send() (same order, same errors), but a payload the layer would
 * otherwise copy may be sent from where it is, so it must stay valid and
 * unchanged until gv_am_wait_local() returns. Small payloads are batched
 * or copied as by gv_am_send(). This is what keeps many large messages in
 * flight from one thread (gv_am_send() of a large payload waits until the
 * transport is done with it, or copies it).
 */
gv_status_t gv_am_send_nbi(int dst, gv_am_id_t id, const void *payload,
                           size_t len);

/**
 * Wait until every payload given to gv_am_send_nbi() so far may be reused
 * or freed (local completion: not necessarily handled by its receiver).
 * Progresses while it waits; not from a handler.
 */
void gv_am_wait_local(void);

/** Largest payload gv_am_send() accepts (at least 1 MiB). */
size_t gv_am_max_payload(void);

/**
 * Send an active message and ship it at once: gv_am_send() followed by
 * shipping what is buffered to dst (not to other ranks), with the same
 * order, errors and handler call. For a request or a reply whose latency
 * counts, where gv_am_send() would buffer it until a flush. When nothing
 * is buffered to dst and the transport copies a message this small, it
 * goes to the transport from the caller's memory, as GASNet-EX's and
 * UCX's active-message sends do; otherwise it is buffered and shipped.
 * A large one (from about 16 KiB over ofi and mpi, 64 KiB elsewhere) goes
 * from the caller's memory too, and outside a handler the call then waits,
 * progressing (other workers and handlers run), until the transport is
 * done with the buffer, which may take the receiver's progress.
 * To the own rank it is gv_am_send(): handled at the next progress.
 * Messages that should share a transport message belong in gv_am_send().
 */
gv_status_t gv_am_send_now(int dst, gv_am_id_t id, const void *payload,
                           size_t len);

/** Ship every buffered message now (does not wait for delivery). */
void gv_flush(void);

/**
 * Barrier with quiescence: returns on every rank only once every message
 * sent by any rank before it entered the barrier, and every message those
 * handlers sent in turn, has been handled. One flow per rank calls it (the
 * main flow or one worker); while it waits, the rank's other workers and
 * queued tasks run. Not from a handler.
 */
void gv_barrier(void);

/** Counters of this rank (see GV_STATS). */
typedef struct gv_am_stats {
    uint64_t msgs_sent, bytes_sent;     /**< user messages and payload bytes */
    uint64_t msgs_recv, bytes_recv;
    uint64_t tl_msgs_sent, tl_bytes_sent; /**< transport messages (batches)  */
    uint64_t tl_msgs_recv, tl_bytes_recv;
    uint64_t flush_full, flush_timeout, flush_idle, flush_explicit;
    uint64_t credit_stalls;             /**< times a sender waited for credit */
    uint64_t queued_bytes;              /**< active-message bytes held in send
                                             queues now (a batch counts whole;
                                             gv_barrier's own messages not) */
    uint64_t queued_bytes_max;          /**< their high-water mark           */
    uint64_t rejected;                  /**< malformed or unknown from the wire */
    uint64_t msgs_self;                 /**< of msgs_sent, to this rank itself */
    uint64_t msgs_relayed;              /**< forwarded here (GV_AGG_ROUTE) */
    uint64_t internode_msgs;            /**< batched toward another node */
    uint64_t internode_batches;         /**< batches to another node */
} gv_am_stats_t;
/** @var gv_am_stats::msgs_sent
 *  user messages sent
 *  @var gv_am_stats::msgs_recv
 *  user messages received
 *  @var gv_am_stats::bytes_recv
 *  payload bytes received
 *  @var gv_am_stats::tl_msgs_sent
 *  transport messages (batches) sent
 *  @var gv_am_stats::tl_msgs_recv
 *  transport messages received
 *  @var gv_am_stats::tl_bytes_recv
 *  transport bytes received
 *  @var gv_am_stats::flush_full
 *  batches sent because they were full
 *  @var gv_am_stats::flush_timeout
 *  batches sent by the GV_AGG_TIMEOUT_US flush
 *  @var gv_am_stats::flush_idle
 *  batches sent when the rank went idle
 *  @var gv_am_stats::flush_explicit
 *  batches sent by gv_flush()
 *  @var gv_am_stats::msgs_self
 *  messages this rank sent to itself and handled (they take no transport
 *  message: msgs_sent - msgs_self went to other ranks)
 *  @var gv_am_stats::msgs_relayed
 *  messages of other ranks this rank forwarded under GV_AGG_ROUTE=node
 *  (counted neither as sent nor as received here). The records this rank
 *  put into batches are msgs_sent - msgs_self + msgs_relayed, less those
 *  too large for a batch
 *  @var gv_am_stats::internode_msgs
 *  under GV_AGG_ROUTE=node, messages in envelopes (own or relayed) this
 *  rank put into a batch to a rank on another node: the node-to-node hop
 *  (0 under direct). A rank's own message to the rank it relays to goes
 *  without an envelope, uncounted, when a batch to that rank is open
 *  @var gv_am_stats::internode_batches
 *  under GV_AGG_ROUTE=node, batches this rank closed to ranks on another
 *  node, out of flush_full + flush_timeout + flush_idle + flush_explicit:
 *  internode_msgs / internode_batches is that hop's fill (0 under
 *  direct) */

/** Copy this rank's counters into @a stats_p. */
void gv_am_stats(gv_am_stats_t *stats_p);

#ifdef __cplusplus
}
#endif
#endif
