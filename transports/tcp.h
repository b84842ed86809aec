/* Internal hooks into the tcp transport for tests: the listening port and
 * the counters of what was rejected. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TRANSPORTS_TCP_H
#define GV_TRANSPORTS_TCP_H

#include "transports/transport.h"

/* What the tcp transport refused since init. */
typedef struct gv_tl_tcp_counters {
    uint64_t conn_rejected;   /* connections closed before or at HELLO:
                                 garbage, wrong key/rank/size/version,
                                 no HELLO in time, too many pending */
    uint64_t key_timeouts;    /* of which: no HELLO within
                                 GV_TCP_KEY_TIMEOUT_MS */
    uint64_t bad_key;         /* of which: a well-formed HELLO with the
                                 wrong job key */
    uint64_t frame_rejected;  /* malformed frames on authenticated
                                 connections (each closes the connection) */
    uint64_t sendq_full;      /* am_send said GV_ERR_NO_RESOURCE because a
                                 peer's queue held GV_TCP_SENDQ bytes */
} gv_tl_tcp_counters_t;

/* The TCP port this rank listens on (host byte order); tl must be a tcp
 * transport (ops == &gv_tl_tcp_ops), else returns -1. */
int gv__tl_tcp_listen_port(gv_tl_t *tl);

/* Copy the counters; zeros if tl is not a tcp transport. */
void gv__tl_tcp_counters(gv_tl_t *tl, gv_tl_tcp_counters_t *c_p);

/* conn_rejected alone, for tests that only want one number. */
uint64_t gv__tl_tcp_rejected(gv_tl_t *tl);

#endif
