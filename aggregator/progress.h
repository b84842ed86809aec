/* Progress and waiting, owned by the aggregator layer: one poll (the
 * transport's progress, then the AM layer's work and the core's registered
 * callbacks), the wait policy (spin, yield, block in the transport), and
 * requests waited for in place. gv_progress() and gv_wait() are their
 * public face (grapevine/core.h). SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_AGGREGATOR_PROGRESS_H
#define GV_AGGREGATOR_PROGRESS_H

#include "core/core.h"
#include "core/boot.h"
#include "transports/transport.h"

/* Set the wait policy for the job @a boot describes (gv_init, before the
 * transport opens): GV_SPIN_US, or 2 us when ranks outnumber this node's
 * cores and the user did not choose. */
void gv__wait_init(const gv_boot_t *boot);
/* Close gv_wait_fd's descriptor (gv_finalize). */
void gv__wait_fini(void);

/* Wait policy for ranks that wait on something (barriers, ping-pong,
 * credits): call gv__wait_poll() in the loop with a state that
 * gv__wait_begin() initialised. It progresses; after GV_SPIN_US of fruitless
 * polling it blocks in the transport (or yields) between polls, so
 * oversubscribed ranks do not burn the core their peer needs. */
typedef struct {
    uint64_t start_ns;
    unsigned idle_rounds;     /* empty polls since something happened */
    unsigned blocked_rounds;  /* times we blocked or yielded since */
    int      for_send;  /* waiting for send resources: never block in the
                           transport, whose wait() watches arrivals only */
} gv_waiter_t;
void gv__wait_begin(gv_waiter_t *w);
void gv__wait_begin_send(gv_waiter_t *w);
/* Installed by the tasking layer: called when a wait finds nothing to do;
 * inside a user-level worker it yields to the rank's other workers and
 * returns 1, elsewhere it returns 0 and the wait polls or blocks. */
extern int (*gv__wait_yield_hook)(void);
void gv__wait_poll(gv_waiter_t *w);

/* A request the caller waits for in place: gv__wreq_init, pass &r.req to
 * the transport, and on GV_INPROGRESS gv__wreq_wait (which progresses). */
typedef struct {
    gv_req_t    req;
    int         done;
    gv_status_t status;
} gv__wreq_t;

static inline void gv__wreq_cb(gv_req_t *req, gv_status_t status)
{
    gv__wreq_t *r = (gv__wreq_t *)req;
    r->status     = status;
    r->done       = 1;
}

static inline int gv__wreq_done(void *arg)
{
    return ((gv__wreq_t *)arg)->done;
}

static inline void gv__wreq_init(gv__wreq_t *r)
{
    r->req.cb  = gv__wreq_cb;
    r->req.arg = NULL;
    r->done    = 0;
    r->status  = GV_OK;
}

static inline gv_status_t gv__wreq_wait(gv__wreq_t *r)
{
    gv_wait(gv__wreq_done, r);
    return r->status;
}

#endif
