/* Internals of the DSM layer shared by its files: setup, the table of
 * requests that wait for replies, function pointers on the wire, the
 * allocation table every rank keeps, and the hooks between delegates and
 * completion events. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_DSM_DSM_INTERNAL_H
#define GV_DSM_DSM_INTERNAL_H

#include <grapevine/am.h>
#include <grapevine/dsm.h>
#include <grapevine/rma.h>
#include "core/core.h"
#include "core/fnref.h"
#include "dsm/gaddr.h"

/* Called by gv_init after the tasking layer is up (it registers handlers,
 * so in the same order on every rank), and by gv_finalize before tasking
 * goes down. Failure is fatal: a bad GV_BLOCK, or GV_AMO=native on a
 * transport without remote atomics (the message names both). */
void gv__dsm_init(void);
void gv__dsm_fini(void);

/* ---- requests waiting for replies (dsm.c) -------------------------------- */

/* A request lives in a table; the wire carries its token (index and
 * generation), never a pointer, so a reply naming a request that is gone
 * or never was is detected and dropped. */
typedef struct gv__dreq {
    uint32_t     gen;
    int          busy;
    int          pending;   /* replies still expected */
    gv_status_t  status;    /* first error reply, else GV_OK */
    gv_worker_t *waiter;    /* parked worker, or NULL */
    void        *buf;       /* where the reply's data goes */
    size_t       cap, len;
    gv_future_t *fut;       /* asynchronous read: fulfilled on reply */
    uint64_t     aux[2];    /* small results (alloc: block, bytes) */
} gv__dreq_t;

uint64_t    gv__dreq_new(int pending, void *buf, size_t cap, gv__dreq_t **r_p);
gv__dreq_t *gv__dreq_get(uint64_t token);   /* NULL if stale or bad */
/* One reply arrived: record status/data; fulfil or wake when the last. */
void        gv__dreq_reply(uint64_t token, gv_status_t status,
                           const void *data, size_t len, int src);
/* Wait for every reply (suspends a worker, progresses the main flow),
 * release the request, return its status; *len_p (may be NULL) gets the
 * bytes the last data reply offered. */
gv_status_t gv__dreq_wait(uint64_t token, size_t *len_p);
void        gv__dreq_free(uint64_t token);

/* Function pointers travel as gv__fnref_t (core/fnref.h). */

/* ---- counters ------------------------------------------------------------ */

extern gv_dsm_stats_t gv__dsm_st;
/* Log a bad address once it is decided to be bad (rate-limited). */
void gv__dsm_bad_addr(const char *what, gv_gaddr_t a, size_t len, int src);
void gv__dsm_reject(int src, const char *why);

/* ---- the allocation table (heap.c) --------------------------------------- */

void gv__heap_init(void);
void gv__heap_fini(void);
/* Local pointer of [a, a+len) if it is homed here and inside an allocation
 * (or export), else NULL. @a kind/@a off from gv__ga_decode. */
void *gv__heap_check_local(gv_gaddr_t a, int kind, uint64_t off, size_t len);
/* At any rank: is [a, a+len) (linear or 2D heap) inside an allocation?
 * Every rank holds the whole table, so the native path checks here. */
int   gv__heap_valid(gv_gaddr_t a, int kind, uint64_t off, size_t len);
/* Is the linear range [o, o+len) (any number of blocks) one allocation's? */
int   gv__heap_lin_range_valid(uint64_t o, uint64_t len);

/* ---- delegates <-> completion events ------------------------------------- */

void gv__delegate_init(void);
void gv__delegate_fini(void);
/* Push out packed adds and complete native operations: before a wait, and
 * from the progress hook. */
void gv__delegate_flush_all(void);
/* Flush packed adds only (safe in a handler). */
void gv__delegate_flush_adds(void);

void gv__gce_init(void);
void gv__gce_fini(void);
/* The counters of an event by id (created on demand at non-creators); NULL
 * for an id that cannot exist. */
typedef struct gv__gce_rec {
    uint64_t enrolled, completed, errors;
} gv__gce_rec_t;
gv__gce_rec_t *gv__gce_rec(uint32_t id);
static inline uint32_t gv__gce_id(const gv_gce_t *g)
{
    return (g == NULL) ? 0 : g->id;
}

void gv__coll_init(void);
void gv__coll_fini(void);
void gv__loop_init(void);

#endif
