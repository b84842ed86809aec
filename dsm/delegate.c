/* Delegate operations: read, write, fetch-and-add, add, compare-and-swap
 * and call, run at the home of their address; blocking and asynchronous;
 * over active messages or (GV_AMO=native) the transport's atomics.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Over active messages. A request names the operation, the global address
 * (the home checks it against its allocation table: the bytes came from
 * the network) and a token of the caller's request table (dsm.c); the home
 * runs the operation on its own memory, which is atomic because one thread
 * runs everything on a rank, and replies {token, status, data}. The reply
 * wakes the worker that waits (a blocking delegate), or fulfils a future
 * (an asynchronous read). Asynchronous writes and calls carry token 0 and
 * an event id instead: the home counts them completed in that event.
 *
 * Packed adds. gv_delegate_add is the hot path of GUPS-like programs: it
 * appends {address, value} to a small per-home pack (PACK_MAX entries, no
 * allocation) and returns; a full pack travels as one active message, and
 * partial packs go out from the progress hook, before this rank waits for
 * anything, before any other delegate to the same home (so that one
 * worker's operations to one home stay in order), and when another rank
 * asks for this rank's completion counts. Nothing comes back: the event
 * counts enrollments here per pack and completions at the home per pack
 * (dsm/gce.c), and the home applies a pack in two passes, first checking
 * and prefetching every word, then adding, so the cache misses of one pack
 * overlap.
 *
 * Local addresses short-circuit: at the home, the operation runs at once
 * on local memory (still checked against the allocations). With
 * GV_AMO=native, heap words go through gv_amo64/gv_put/gv_get even when
 * local, because a NIC's atomics are not atomic with respect to the CPU's.
 */
#include "dsm/dsm_internal.h"

#include <inttypes.h>

#define PACK_MAX 32

enum { OP_READ = 1, OP_WRITE, OP_FADD, OP_CSWAP, OP_CALL, OP_MAX };
static const char *const op_names[] = {
    "", "gv_delegate_read", "gv_delegate_write", "gv_delegate_fetch_add",
    "gv_delegate_cswap", "gv_delegate_call"};

typedef struct {
    uint64_t    token;  /* 0: asynchronous, completes in event gce */
    uint64_t    addr;
    uint64_t    v0, v1;
    uint32_t    op;
    uint32_t    len;    /* READ: bytes wanted; WRITE, CALL: bytes after */
    uint32_t    gce;
    uint32_t    pad;
    gv__fnref_t fn;     /* CALL */
} req_t;

typedef struct {
    uint64_t token;
    int32_t  status;
    uint32_t len;       /* bytes of data after */
} rep_t;

typedef struct {
    uint32_t gce;
    uint32_t n;
    uint64_t e[2 * PACK_MAX]; /* address, value */
} pack_t;

static struct {
    pack_t    *packs;      /* one per rank */
    int       *dirty;      /* ranks with a non-empty pack */
    uint8_t   *listed;     /* rank is in dirty[] */
    int        ndirty;
    int        native;     /* GV_AMO=native */
    uint64_t   native_out; /* native adds issued, not yet flushed */
    uint32_t  *native_gce; /* their events, by outstanding count (small) */
    int        in_flush;   /* re-entrancy guard of the progress hook */
    gv_am_id_t am_addb, am_req, am_rep;
} D;

/* Native adds of an event wait for a flush to count as completed. We keep
 * one pending count per event id seen since the last flush: usually one. */
#define NATIVE_IDS 8
static struct {
    uint32_t id[NATIVE_IDS];
    uint64_t n[NATIVE_IDS];
    unsigned used;
} nat;

static inline uint32_t gce_of(const gv_gce_t *g)
{
    return (g == NULL) ? 0 : g->id;
}

static void send_or_die(int dst, gv_am_id_t id, const void *p, size_t len)
{
    gv_status_t status = gv_am_send(dst, id, p, len);

    if (status != GV_OK)
        gv_fatal("dsm: cannot send to rank %d: %s", dst,
                 gv_status_str(status));
}

/* ---- packed adds ---------------------------------------------------------- */

static uint32_t pack_apply(const uint8_t *e, uint32_t n, int src);

static void pack_flush(int dst)
{
    pack_t        *p = &D.packs[dst];
    pack_t         copy;
    gv__gce_rec_t *r;
    uint32_t       n = p->n;

    if (n == 0)
        return;
    p->n = 0;
    r    = gv__gce_rec(p->gce);
    if (dst == gv__geo.rank) {
        /* Our own words: apply now (enrolled and completed at once), in
         * place: nothing here can add to the pack meanwhile. */
        uint32_t bad = pack_apply((const uint8_t *)p->e, n, dst);
        gv__dsm_st.ops_local += n;
        if ((bad != 0) && (r != NULL)) {
            r->enrolled += bad;
            r->completed += bad;
            r->errors += bad;
        }
        return;
    }
    /* Take the pack away first: gv_am_send may progress, and a handler
     * may add to this same pack meanwhile. */
    memcpy(&copy, p, 8 + (size_t)n * 16);
    copy.n = n;
    if (r != NULL)
        r->enrolled += n;
    gv__dsm_st.add_msgs++;
    gv__dsm_st.ops_remote += n;
    send_or_die(dst, D.am_addb, &copy, 8 + (size_t)n * 16);
}

void gv__delegate_flush_adds(void)
{
    while (D.ndirty > 0) {
        int dst = D.dirty[--D.ndirty];
        D.listed[dst] = 0;
        pack_flush(dst);
    }
}

static void native_count(uint32_t id, uint64_t n)
{
    unsigned i;

    for (i = 0; i < nat.used; i++) {
        if (nat.id[i] == id) {
            nat.n[i] += n;
            return;
        }
    }
    if (nat.used == NATIVE_IDS)
        gv_fatal("more than %d completion events with native adds in "
                 "flight", NATIVE_IDS);
    nat.id[nat.used] = id;
    nat.n[nat.used]  = n;
    nat.used++;
}

/* Complete the native adds issued so far (waits: not from a handler). */
static void native_flush(void)
{
    gv_status_t status;
    unsigned    i;

    if (D.native_out == 0)
        return;
    status = gv_rma_flush(-1);
    for (i = 0; i < nat.used; i++) {
        gv__gce_rec_t *r = gv__gce_rec(nat.id[i]);
        if (r == NULL)
            continue;
        r->completed += nat.n[i];
        if (status != GV_OK)
            r->errors += nat.n[i];
    }
    nat.used     = 0;
    D.native_out = 0;
}

void gv__delegate_flush_all(void)
{
    gv__delegate_flush_adds();
    if (!D.in_flush) {
        D.in_flush = 1;
        native_flush();
        D.in_flush = 0;
    }
}

static unsigned progress_hook(void)
{
    unsigned n;

    if (((D.ndirty == 0) && (D.native_out == 0)) || D.in_flush ||
        !gv__geo.up)
        return 0;
    D.in_flush = 1;
    n = (unsigned)D.ndirty;
    gv__delegate_flush_adds();
    native_flush();
    D.in_flush = 0;
    return n;
}

/* Apply @a n packed adds at this rank (their home): first check every
 * address and start fetching its word, then add, so that the cache misses
 * overlap. Returns the number refused (logged). */
static uint32_t pack_apply(const uint8_t *e, uint32_t n, int src)
{
    int64_t *ptr[PACK_MAX];
    int64_t  val[PACK_MAX];
    uint32_t i, bad = 0;

    for (i = 0; i < n; i++) {
        uint64_t a, off;
        int      home, kind;

        memcpy(&a, e + 16 * i, 8);
        memcpy(&val[i], e + 16 * i + 8, 8);
        kind   = gv__ga_decode(a, &home, &off);
        ptr[i] = NULL;
        if ((kind >= 0) && (home == gv__geo.rank) && ((a & 7) == 0))
            ptr[i] = gv__heap_check_local(a, kind, off, 8);
        if (ptr[i] == NULL) {
            gv__dsm_bad_addr("gv_delegate_add", a, 8, src);
            bad++;
            continue;
        }
        __builtin_prefetch(ptr[i], 1, 3);
    }
    for (i = 0; i < n; i++)
        if (ptr[i] != NULL)
            *ptr[i] += val[i];
    return bad;
}

static void am_addb_cb(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *d = payload;
    uint32_t       gce, n, bad;
    gv__gce_rec_t *r;

    if (len < 8) {
        gv__dsm_reject(src, "truncated add pack");
        return;
    }
    memcpy(&gce, d, 4);
    memcpy(&n, d + 4, 4);
    if ((n == 0) || (n > PACK_MAX) || (len != 8 + (size_t)n * 16)) {
        gv__dsm_reject(src, "add pack of the wrong size");
        return;
    }
    r = gv__gce_rec(gce);
    if (r == NULL) {
        gv__dsm_reject(src, "add pack for an impossible completion event");
        return;
    }
    bad = pack_apply(d + 8, n, src);
    gv__dsm_st.ops_served += n;
    r->completed += n;
    r->errors += bad;
}

/* ---- running an operation at the home -------------------------------------- */

/* Run @a q on local memory @a p (already checked). Result data goes to
 * @a out (room for GV_DELEGATE_DATA_MAX bytes), its length to *out_len. */
static gv_status_t exec(const req_t *q, void *p, const void *data,
                        void *out, size_t *out_len)
{
    uint64_t old;

    *out_len = 0;
    switch (q->op) {
    case OP_READ:
        memcpy(out, p, q->len);
        *out_len = q->len;
        return GV_OK;
    case OP_WRITE:
        memcpy(p, data, q->len);
        return GV_OK;
    case OP_FADD:
        old = *(uint64_t *)p;
        *(uint64_t *)p = old + q->v0;
        memcpy(out, &old, 8);
        *out_len = 8;
        return GV_OK;
    case OP_CSWAP:
        old = *(uint64_t *)p;
        if (old == q->v0)
            *(uint64_t *)p = q->v1;
        memcpy(out, &old, 8);
        *out_len = 8;
        return GV_OK;
    case OP_CALL: {
        gv_delegate_fn_t fn = (gv_delegate_fn_t)gv__fn_decode(&q->fn);
        size_t           n;
        if (fn == NULL)
            return GV_ERR_INVALID;
        n = fn(p, data, q->len, out);
        *out_len = (n < GV_DELEGATE_RESULT_MAX) ? n : GV_DELEGATE_RESULT_MAX;
        return GV_OK;
    }
    default:
        return GV_ERR_INVALID;
    }
}

/* Bytes of memory an operation touches (for the allocation check). */
static size_t op_span(const req_t *q)
{
    switch (q->op) {
    case OP_READ:
    case OP_WRITE:
        return q->len;
    case OP_FADD:
    case OP_CSWAP:
        return 8;
    default:
        return 1;
    }
}

/* Check and resolve @a q at this rank (its home). Logs a bad address. */
static void *resolve_here(const req_t *q, int src)
{
    uint64_t off;
    int      home, kind = gv__ga_decode(q->addr, &home, &off);
    size_t   span = op_span(q);
    void    *p    = NULL;

    if (((q->op == OP_FADD) || (q->op == OP_CSWAP)) && (q->addr & 7))
        kind = -1;
    if ((kind >= 0) && (home == gv__geo.rank))
        p = gv__heap_check_local(q->addr, kind, off, span);
    if (p == NULL)
        gv__dsm_bad_addr(op_names[q->op], q->addr, span, src);
    return p;
}

static void am_req_cb(int src, const void *payload, size_t len, void *arg)
{
    req_t       q;
    struct {
        rep_t   h;
        uint8_t data[GV_DELEGATE_DATA_MAX];
    } rep;
    const void *data;
    size_t      out_len = 0;
    void       *p;
    gv_status_t status;

    if (len < sizeof(q)) {
        gv__dsm_reject(src, "truncated delegate request");
        return;
    }
    memcpy(&q, payload, sizeof(q));
    data = (const uint8_t *)payload + sizeof(q);
    if ((q.op == 0) || (q.op >= OP_MAX) ||
        ((q.op == OP_READ) && ((q.len == 0) || (q.len > GV_DELEGATE_DATA_MAX) ||
                               (len != sizeof(q)))) ||
        ((q.op == OP_WRITE) && ((q.len == 0) || (q.len > GV_DELEGATE_DATA_MAX) ||
                                (len != sizeof(q) + q.len))) ||
        ((q.op == OP_CALL) && ((q.len > GV_DELEGATE_ARGS_MAX) ||
                               (len != sizeof(q) + q.len))) ||
        (((q.op == OP_FADD) || (q.op == OP_CSWAP)) && (len != sizeof(q)))) {
        gv__dsm_reject(src, "malformed delegate request");
        if (q.token != 0) {
            rep.h.token  = q.token;
            rep.h.status = GV_ERR_PROTO;
            rep.h.len    = 0;
            send_or_die(src, D.am_rep, &rep.h, sizeof(rep.h));
        }
        return;
    }
    gv__dsm_st.ops_served++;
    p = resolve_here(&q, src);
    if (p == NULL) {
        status = GV_ERR_INVALID;
    } else {
        status = exec(&q, p, data, rep.data, &out_len);
        if (status != GV_OK)
            gv__dsm_reject(src, "delegate call of a function that is not "
                           "code here");
    }
    if (q.token == 0) {
        gv__gce_rec_t *r = gv__gce_rec(q.gce);
        if (r == NULL) {
            gv__dsm_reject(src, "asynchronous delegate for an impossible "
                           "completion event");
            return;
        }
        r->completed++;
        if (status != GV_OK)
            r->errors++;
        return;
    }
    rep.h.token  = q.token;
    rep.h.status = status;
    rep.h.len    = (uint32_t)out_len;
    send_or_die(src, D.am_rep, &rep, sizeof(rep.h) + out_len);
}

static void am_rep_cb(int src, const void *payload, size_t len, void *arg)
{
    rep_t h;

    if ((len < sizeof(h))) {
        gv__dsm_reject(src, "truncated delegate reply");
        return;
    }
    memcpy(&h, payload, sizeof(h));
    if (h.len != len - sizeof(h)) {
        gv__dsm_reject(src, "delegate reply of the wrong size");
        return;
    }
    gv__dreq_reply(h.token, (gv_status_t)h.status,
                   (const uint8_t *)payload + sizeof(h), h.len, src);
}

/* ---- the caller's side ------------------------------------------------------ */

/* Where an operation goes. Returns the home, or -1 after logging. */
static int route(const req_t *q, int *kind_p, uint64_t *off_p)
{
    int home, kind = gv__ga_decode(q->addr, &home, off_p);

    if (!gv__geo.up) {
        gv_error("%s before gv_init", op_names[q->op]);
        return -1;
    }
    if ((kind < 0) ||
        (((q->op == OP_FADD) || (q->op == OP_CSWAP)) && (q->addr & 7)) ||
        ((kind == GV__GA_KIND_LIN) &&
         ((q->addr & gv__geo.bmask) + op_span(q) > gv__geo.bsize))) {
        char s[64];
        gv_error("%s: address %#" PRIx64 " (%s), %zu bytes: %s",
                 op_names[q->op], q->addr, gv_gaddr_str(q->addr, s, sizeof(s)),
                 op_span(q),
                 (kind < 0) ? "names no rank, or lies outside the heap"
                 : ((q->op == OP_FADD) || (q->op == OP_CSWAP))
                     ? "not 8-byte aligned"
                     : "crosses a block boundary");
        gv__dsm_st.bad_addr++;
        return -1;
    }
    *kind_p = kind;
    return home;
}

static inline int use_native(int kind, size_t span)
{
    return D.native && (kind != GV__GA_KIND_PTR) && (span == 8);
}

/* A native word operation (blocking). */
static gv_status_t native_op(const req_t *q, int home, int kind, uint64_t off,
                             void *out)
{
    gv_status_t status;

    if (!gv__heap_valid(q->addr, kind, off, 8)) {
        gv__dsm_bad_addr(op_names[q->op], q->addr, 8, gv__geo.rank);
        return GV_ERR_INVALID;
    }
    gv__dsm_st.ops_native++;
    switch (q->op) {
    case OP_FADD:
        return gv_amo64_fetch_add(home, off, q->v0, out);
    case OP_CSWAP:
        return gv_amo64_cswap(home, off, q->v0, q->v1, out);
    case OP_READ:
        status = gv_get(home, off, out, 8);
        break;
    default: /* OP_WRITE: out holds the data */
        status = gv_put(home, off, out, 8);
        break;
    }
    if (status == GV_OK)
        status = gv_rma_flush(home);
    return status;
}

/*
 * Run @a q: at once if local, natively, or as a request whose reply data
 * (up to @a cap bytes) lands in @a out. Blocking unless @a fut or async.
 */
static gv_status_t issue(req_t *q, const void *data, void *out, size_t cap,
                         size_t *out_len_p, gv_future_t *fut, int async)
{
    uint64_t    off;
    int         kind, home = route(q, &kind, &off);
    uint8_t     tmp[GV_DELEGATE_DATA_MAX];
    size_t      n = 0;
    gv_status_t status;

    if (home < 0) {
        status = GV_ERR_INVALID;
        goto done_now;
    }
    if (use_native(kind, op_span(q)) && (q->op != OP_CALL)) {
        uint64_t word = 0;
        if (q->op == OP_WRITE)
            memcpy(&word, data, 8);
        status = native_op(q, home, kind, off, &word);
        if (status == GV_OK)
            n = (q->op == OP_WRITE) ? 0 : 8;
        memcpy(tmp, &word, 8);
        goto copy_out;
    }
    if (home == gv__geo.rank) {
        void *p;
        pack_flush(home); /* this worker's earlier adds come first */
        gv__dsm_st.ops_local++;
        p = resolve_here(q, home);
        if (p == NULL) {
            status = GV_ERR_INVALID;
            goto done_now;
        }
        status = exec(q, p, data, tmp, &n);
        goto copy_out;
    }
    /* Remote: keep this worker's earlier adds to that home ahead. */
    gv__dsm_st.ops_remote++;
    pack_flush(home);
    {
        struct {
            req_t   q;
            uint8_t data[GV_DELEGATE_DATA_MAX];
        } m;
        size_t      dlen = ((q->op == OP_WRITE) || (q->op == OP_CALL))
                               ? q->len : 0;
        gv__dreq_t *r;

        if (async) {
            gv__gce_rec_t *g = gv__gce_rec(q->gce);
            q->token = 0;
            g->enrolled++;
        } else {
            q->token = gv__dreq_new(1, out, cap, &r);
            r->fut   = fut;
        }
        m.q = *q;
        if (dlen > 0)
            memcpy(m.data, data, dlen);
        send_or_die(home, D.am_req, &m, sizeof(m.q) + dlen);
        if (async || (fut != NULL))
            return GV_OK;
        return gv__dreq_wait(q->token, out_len_p);
    }

copy_out:
    if ((out != NULL) && (n > 0))
        memcpy(out, tmp, (n < cap) ? n : cap);
    if (out_len_p != NULL)
        *out_len_p = n;
done_now:
    if (fut != NULL) {
        /* Completed here and now: the future is fulfilled already. */
        gv_future_fulfil(fut, status, tmp, n);
        return GV_OK;
    }
    if (async) {
        /* Done at once; an error counts in the event like a remote one. */
        if (status != GV_OK) {
            gv__gce_rec_t *g = gv__gce_rec(q->gce);
            g->enrolled++;
            g->completed++;
            g->errors++;
        }
        return (home < 0) ? status : GV_OK;
    }
    return status;
}

static void req_init(req_t *q, int op, gv_gaddr_t a)
{
    memset(q, 0, sizeof(*q));
    q->op   = (uint32_t)op;
    q->addr = a;
}

static gv_status_t check_len(const char *what, size_t len, size_t max)
{
    if ((len == 0) || (len > max)) {
        gv_error("%s: %zu bytes (1 to %zu)", what, len, max);
        return GV_ERR_INVALID;
    }
    return GV_OK;
}

gv_status_t gv_delegate_read(gv_gaddr_t a, void *buf, size_t len)
{
    req_t q;

    if (check_len("gv_delegate_read", len, GV_DELEGATE_DATA_MAX) != GV_OK)
        return GV_ERR_INVALID;
    req_init(&q, OP_READ, a);
    q.len = (uint32_t)len;
    return issue(&q, NULL, buf, len, NULL, NULL, 0);
}

gv_status_t gv_delegate_write(gv_gaddr_t a, const void *buf, size_t len)
{
    req_t q;

    if (check_len("gv_delegate_write", len, GV_DELEGATE_DATA_MAX) != GV_OK)
        return GV_ERR_INVALID;
    req_init(&q, OP_WRITE, a);
    q.len = (uint32_t)len;
    return issue(&q, buf, NULL, 0, NULL, NULL, 0);
}

gv_status_t gv_delegate_fetch_add(gv_gaddr_t a, int64_t v, int64_t *old_p)
{
    req_t   q;
    int64_t old;

    req_init(&q, OP_FADD, a);
    q.v0 = (uint64_t)v;
    return issue(&q, NULL, (old_p != NULL) ? (void *)old_p : (void *)&old,
                 8, NULL, NULL, 0);
}

gv_status_t gv_delegate_cswap(gv_gaddr_t a, uint64_t expected,
                              uint64_t desired, uint64_t *old_p)
{
    req_t    q;
    uint64_t old;

    req_init(&q, OP_CSWAP, a);
    q.v0 = expected;
    q.v1 = desired;
    return issue(&q, NULL, (old_p != NULL) ? (void *)old_p : (void *)&old,
                 8, NULL, NULL, 0);
}

static gv_status_t call_init(req_t *q, gv_gaddr_t a, gv_delegate_fn_t fn,
                             const void *args, size_t len)
{
    req_init(q, OP_CALL, a);
    if ((fn == NULL) || (len > GV_DELEGATE_ARGS_MAX) ||
        ((len > 0) && (args == NULL)) ||
        !gv__fn_encode((const void *)fn, &q->fn)) {
        gv_error("gv_delegate_call: bad call (function %p, %zu bytes of "
                 "arguments, at most %d)", (void *)fn, len,
                 GV_DELEGATE_ARGS_MAX);
        return GV_ERR_INVALID;
    }
    q->len = (uint32_t)len;
    return GV_OK;
}

gv_status_t gv_delegate_call(gv_gaddr_t a, gv_delegate_fn_t fn,
                             const void *args, size_t len, void *result,
                             size_t cap, size_t *res_len_p)
{
    req_t q;

    if (call_init(&q, a, fn, args, len) != GV_OK)
        return GV_ERR_INVALID;
    return issue(&q, args, result, (result != NULL) ? cap : 0, res_len_p,
                 NULL, 0);
}

gv_status_t gv_delegate_add(gv_gaddr_t a, int64_t v, gv_gce_t *gce)
{
    uint32_t id = gce_of(gce);
    int      home;
    pack_t  *p;

    if (D.native || ((home = gv__ga_home(a)) < 0) || (a & 7)) {
        /* The less common paths. */
        uint64_t off;
        int      kind;
        req_t    q;

        req_init(&q, OP_FADD, a);
        q.v0  = (uint64_t)v;
        q.gce = id;
        if (gv__gce_rec(id) == NULL) {
            gv_error("gv_delegate_add: no such completion event");
            return GV_ERR_INVALID;
        }
        if (!D.native || ((home = route(&q, &kind, &off)) < 0) ||
            (kind == GV__GA_KIND_PTR))
            return issue(&q, NULL, NULL, 0, NULL, NULL, 1);
        if (!gv__heap_valid(a, kind, off, 8)) {
            gv__gce_rec_t *g = gv__gce_rec(id);
            gv__dsm_bad_addr("gv_delegate_add", a, 8, gv__geo.rank);
            g->enrolled++;
            g->completed++;
            g->errors++;
            return GV_OK;
        }
        gv__dsm_st.ops_native++;
        if (gv_amo64(GV_AMO_ADD, home, off, (uint64_t)v, 0, NULL) != GV_OK)
            return GV_ERR_INVALID; /* logged by gv_amo64 */
        gv__gce_rec(id)->enrolled++;
        native_count(id, 1);
        if (++D.native_out >= 512 && !D.in_flush) {
            D.in_flush = 1;
            native_flush();
            D.in_flush = 0;
        }
        return GV_OK;
    }
    p = &D.packs[home];
    if ((p->n != 0) && (p->gce != id))
        pack_flush(home);
    if (p->n == 0) {
        if (gv__gce_rec(id) == NULL) {
            gv_error("gv_delegate_add: no such completion event");
            return GV_ERR_INVALID;
        }
        p->gce = id;
        if (!D.listed[home]) {
            D.listed[home]        = 1;
            D.dirty[D.ndirty++] = home;
        }
    }
    p->e[2 * p->n]     = a;
    p->e[2 * p->n + 1] = (uint64_t)v;
    if (++p->n == PACK_MAX)
        pack_flush(home); /* stays listed; flushing it empty is a no-op */
    return GV_OK;
}

gv_status_t gv_delegate_write_async(gv_gaddr_t a, const void *buf,
                                    size_t len, gv_gce_t *gce)
{
    req_t q;

    if ((check_len("gv_delegate_write_async", len, GV_DELEGATE_DATA_MAX) !=
         GV_OK) || (gv__gce_rec(gce_of(gce)) == NULL))
        return GV_ERR_INVALID;
    req_init(&q, OP_WRITE, a);
    q.len = (uint32_t)len;
    q.gce = gce_of(gce);
    return issue(&q, buf, NULL, 0, NULL, NULL, 1);
}

gv_status_t gv_delegate_call_async(gv_gaddr_t a, gv_delegate_fn_t fn,
                                   const void *args, size_t len,
                                   gv_gce_t *gce)
{
    req_t q;

    if ((call_init(&q, a, fn, args, len) != GV_OK) ||
        (gv__gce_rec(gce_of(gce)) == NULL))
        return GV_ERR_INVALID;
    q.gce = gce_of(gce);
    return issue(&q, args, NULL, 0, NULL, NULL, 1);
}

gv_status_t gv_delegate_read_async(gv_gaddr_t a, void *buf, size_t len,
                                   gv_future_t *f)
{
    req_t q;

    if ((f == NULL) ||
        (check_len("gv_delegate_read_async", len, GV_DELEGATE_DATA_MAX) !=
         GV_OK))
        return GV_ERR_INVALID;
    gv_future_init(f, buf, len);
    req_init(&q, OP_READ, a);
    q.len = (uint32_t)len;
    return issue(&q, NULL, NULL, 0, NULL, f, 0);
}

gv_status_t gv_delegate_fetch_add_async(gv_gaddr_t a, int64_t v,
                                        int64_t *old_p, gv_future_t *f)
{
    req_t q;

    if ((f == NULL) || (old_p == NULL))
        return GV_ERR_INVALID;
    gv_future_init(f, old_p, 8);
    req_init(&q, OP_FADD, a);
    q.v0 = (uint64_t)v;
    return issue(&q, NULL, NULL, 0, NULL, f, 0);
}

int gv_dsm_amo_native(void)
{
    return D.native;
}

/* ---- setup ------------------------------------------------------------------- */

void gv__delegate_init(void)
{
    gv_status_t status;

    memset(&D, 0, sizeof(D));
    memset(&nat, 0, sizeof(nat));
    D.packs  = gv_calloc((size_t)gv__geo.size, sizeof(pack_t));
    D.dirty  = gv_calloc((size_t)gv__geo.size, sizeof(int));
    D.listed = gv_calloc((size_t)gv__geo.size, 1);
    D.native = (gv__env.AMO == GV_AMO_NATIVE);
    /* gv_init refused GV_AMO=native on a transport without atomics or
     * put/get. */
    status = gv_am_register(am_addb_cb, NULL, &D.am_addb);
    if (status == GV_OK)
        status = gv_am_register(am_req_cb, NULL, &D.am_req);
    if (status == GV_OK)
        status = gv_am_register(am_rep_cb, NULL, &D.am_rep);
    if (status != GV_OK)
        gv_fatal("cannot register the delegate handlers: %s",
                 gv_status_str(status));
    gv__progress_hook_add(progress_hook);
}

void gv__delegate_fini(void)
{
    gv__delegate_flush_all();
    gv_free(D.packs);
    gv_free(D.dirty);
    gv_free(D.listed);
    D.packs  = NULL;
    D.dirty  = NULL;
    D.listed = NULL;
}
