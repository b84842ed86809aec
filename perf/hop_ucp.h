/* The UCP side that perf/hop_ucx.c and perf/bw_ucx.c share: a context,
 * worker and endpoint of the program's own, made as ucx_perftest makes
 * them, with the UCX_TLS of the environment. Include after hop.h, in a
 * build with UCX. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_PERF_HOP_UCP_H
#define GV_PERF_HOP_UCP_H

#include "hop.h"

#include <ucp/api/ucp.h>

static inline void hop_ucp_check(ucs_status_t s, const char *what)
{
    if (s != UCS_OK)
        gv_abort(1, "%s: %s: %s", hop_prog, what, ucs_status_string(s));
}

/* Active messages only, one thread; @a cb handles message @a am_id with
 * handler flags @a am_flags. The endpoint goes to @a peer's worker, whose
 * address travels through hop_swap_addr(). */
static inline void hop_ucp_open(int peer, unsigned am_id,
                                ucp_am_recv_callback_t cb, uint32_t am_flags,
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
                    UCP_AM_HANDLER_PARAM_FIELD_CB;
    hp.id         = am_id;
    hp.cb         = cb;
    if (am_flags != 0) {
        hp.field_mask |= UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
        hp.flags       = am_flags;
    }
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

#endif
