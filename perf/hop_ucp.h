/* The UCP side that perf/hop_ucx.c and perf/bw_ucx.c share: a context,
 * worker and endpoint of the program's own, made as ucx_perftest makes
 * them, with the UCX_TLS of the environment, and the handler that receives
 * on it. Include after hop.h, in a build with UCX.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_PERF_HOP_UCP_H
#define GV_PERF_HOP_UCP_H

#include "hop.h"

#include <ucp/api/ucp.h>

#define HOP_UCP_WAIT_S 30 /* longest wait without progress */

static inline void hop_ucp_check(ucs_status_t s, const char *what)
{
    if (s != UCS_OK)
        gv_abort(1, "%s: %s: %s", hop_prog, what, ucs_status_string(s));
}

/* The receiving side, as ucx_perftest's ucp_am tests have it: the handler
 * takes eager data where it lies and receives a rendezvous message with
 * ucp_am_recv_data_nbx() into one fixed buffer; hop_ucp_in counts the
 * messages complete at this end. */
static ucp_worker_h        hop_ucp_worker;
static int                 hop_ucp_peer;
static void               *hop_ucp_rx_buf;
static size_t              hop_ucp_rx_len;
static ucp_request_param_t hop_ucp_recv_param;
static volatile uint64_t   hop_ucp_in;

static inline void hop_ucp_on_received(void *request, ucs_status_t status,
                                       size_t length, void *user_data)
{
    (void)length;
    (void)user_data;
    hop_ucp_check(status, "ucp_am_recv_data_nbx");
    hop_ucp_in++;
    ucp_request_free(request);
}

static inline ucs_status_t hop_ucp_on_am(void *arg, const void *header,
                                         size_t header_length, void *data,
                                         size_t length,
                                         const ucp_am_recv_param_t *param)
{
    ucs_status_ptr_t sp;

    (void)arg;
    (void)header;
    (void)header_length;
    if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {
        hop_ucp_in++;
        return UCS_OK;
    }
    if (length > hop_ucp_rx_len)
        gv_abort(1, "%s: a rendezvous of %zu bytes (at most %zu)", hop_prog,
                 length, hop_ucp_rx_len);
    sp = ucp_am_recv_data_nbx(hop_ucp_worker, data, hop_ucp_rx_buf, length,
                              &hop_ucp_recv_param);
    if (UCS_PTR_IS_ERR(sp))
        hop_ucp_check(UCS_PTR_STATUS(sp), "ucp_am_recv_data_nbx");
    /* Never NULL (UCP_OP_ATTR_FLAG_NO_IMM_CMPL): a request, which the
     * callback counts and frees. */
    return UCS_INPROGRESS;
}

/* The clock of a bounded wait on our worker. */
typedef struct {
    uint64_t seen;     /* the awaited count at the last clock reading */
    uint64_t deadline; /* 0 before the first reading */
    unsigned turns;
} hop_ucp_wait_t;

/* One more turn of a wait for @a what that has not ended, whose progress
 * is @a count: every 1024 turns the clock is read (a wait that ends sooner
 * costs no reading), and the deadline, HOP_UCP_WAIT_S away, restarts
 * whenever @a count has moved since the last reading. Past it, the job
 * aborts naming the peer and @a what. */
static inline void hop_ucp_wait_turn(hop_ucp_wait_t *w, uint64_t count,
                                     const char *what)
{
    uint64_t now;

    if ((++w->turns & 1023) != 0)
        return;
    now = gv_time_ns();
    if ((w->deadline == 0) || (count != w->seen)) {
        w->seen     = count;
        w->deadline = now + HOP_UCP_WAIT_S * 1000000000ull;
    } else if (now > w->deadline) {
        gv_abort(1, "%s: no progress in %d s waiting for %s (peer rank %d)",
                 hop_prog, HOP_UCP_WAIT_S, what, hop_ucp_peer);
    }
}

/* Progress the worker until *@a count reaches @a target, for at most
 * HOP_UCP_WAIT_S without *@a count moving: a stream of large messages over
 * a slow transport may take longer in all and still be healthy. */
static inline void hop_ucp_progress_until(volatile uint64_t *count,
                                          uint64_t target, const char *what)
{
    hop_ucp_wait_t w = {0, 0, 0};

    while (*count < target) {
        ucp_worker_progress(hop_ucp_worker);
        hop_ucp_wait_turn(&w, *count, what);
    }
}

/* Wait for request @a sp of a send or a close (NULL: done already),
 * progressing the worker, for at most HOP_UCP_WAIT_S; then free it. A
 * failed operation aborts naming @a what. */
static inline void hop_ucp_wait_req(ucs_status_ptr_t sp, const char *what)
{
    hop_ucp_wait_t w = {0, 0, 0};
    ucs_status_t   s;

    if (sp == NULL)
        return;
    if (UCS_PTR_IS_ERR(sp))
        hop_ucp_check(UCS_PTR_STATUS(sp), what);
    while ((s = ucp_request_check_status(sp)) == UCS_INPROGRESS) {
        ucp_worker_progress(hop_ucp_worker);
        hop_ucp_wait_turn(&w, 0, what);
    }
    ucp_request_free(sp);
    hop_ucp_check(s, what);
}

/* Active messages only, one thread; hop_ucp_on_am() handles message
 * @a am_id, whole, and receives rendezvous messages of up to @a rx_len
 * bytes. The endpoint goes to @a peer's worker, whose address travels
 * through hop_swap_addr(); the waits above progress this worker and name
 * @a peer. hop_ucp_close() undoes it but the endpoint. */
static inline void hop_ucp_open(int peer, unsigned am_id, size_t rx_len,
                                ucp_context_h *context_p,
                                ucp_worker_h *worker_p, ucp_ep_h *ep_p)
{
    ucp_params_t           cp;
    ucp_worker_params_t    wp;
    ucp_ep_params_t        ep_params;
    ucp_am_handler_param_t hp;
    ucp_address_t         *addr;
    size_t                 addr_len;

    memset(&cp, 0, sizeof(cp));
    cp.field_mask = UCP_PARAM_FIELD_FEATURES;
    cp.features   = UCP_FEATURE_AM;
    hop_ucp_check(ucp_init(&cp, NULL, context_p), "ucp_init");
    memset(&wp, 0, sizeof(wp));
    wp.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SINGLE;
    hop_ucp_check(ucp_worker_create(*context_p, &wp, worker_p),
                  "ucp_worker_create");
    memset(&hp, 0, sizeof(hp));
    hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID |
                    UCP_AM_HANDLER_PARAM_FIELD_CB |
                    UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    hp.id         = am_id;
    hp.cb         = hop_ucp_on_am;
    hp.flags      = UCP_AM_FLAG_WHOLE_MSG;
    hop_ucp_worker = *worker_p;
    hop_ucp_peer   = peer;
    hop_ucp_rx_buf = hop_page_alloc(hop_prog, rx_len);
    hop_ucp_rx_len = rx_len;
    /* No rendezvous receive complete in place: every one returns a
     * request and completes in hop_ucp_on_received(), as in
     * ucx_perftest. */
    memset(&hop_ucp_recv_param, 0, sizeof(hop_ucp_recv_param));
    hop_ucp_recv_param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                      UCP_OP_ATTR_FLAG_NO_IMM_CMPL |
                                      UCP_OP_ATTR_FLAG_MULTI_SEND;
    hop_ucp_recv_param.cb.recv_am   = hop_ucp_on_received;
    hop_ucp_check(ucp_worker_set_am_recv_handler(*worker_p, &hp),
                  "set_am_recv_handler");
    hop_ucp_check(ucp_worker_get_address(*worker_p, &addr, &addr_len),
                  "ucp_worker_get_address");
    hop_swap_addr(peer, addr, addr_len);
    ucp_worker_release_address(*worker_p, addr);
    memset(&ep_params, 0, sizeof(ep_params));
    ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    ep_params.address    = (const ucp_address_t *)hop_peer_addr;
    hop_ucp_check(ucp_ep_create(*worker_p, &ep_params, ep_p), "ucp_ep_create");
}

/* After the endpoint is closed: the worker, the context, the buffer. */
static inline void hop_ucp_close(ucp_context_h context, ucp_worker_h worker)
{
    ucp_worker_destroy(worker);
    ucp_cleanup(context);
    free(hop_ucp_rx_buf);
}

#endif
