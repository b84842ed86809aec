/* The vertex-centric engine: synchronous gather-apply-scatter supersteps
 * with combining at the sender (one slot per remote vertex, a "ghost") and
 * remote updates as batched delegate messages or native remote atomics.
 * See grapevine/fw/vertex.h. SPDX-License-Identifier: BSD-3-Clause */
#include "vertex/vx.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* One edge set (the out- or the in-edges of the local vertices) with each
 * edge's neighbour translated to a slot: < nl a local vertex, else the
 * ghost slot - nl. */
typedef struct eset {
    const int64_t  *off;
    const float    *w;
    const uint32_t *slot;
} eset_t;

typedef struct vx {
    const gv_graph_t      *g;
    const gv_vx_program_t *p;
    void                  *arg;
    gv_vx_word_t           id;      /* identity of the operator */
    int64_t                nl, ng;  /* local vertices, ghosts */
    int                    me, P;
    gv__vx_ghosts_t        gh;
    const int64_t         *gstart;  /* [P + 1] ghosts grouped by owner */
    const int64_t         *gidx;    /* [ng] the ghost's local index at home */
    gv_vx_word_t          *sl;      /* [nl + ng] combining slots; a slot
                                       holding the identity got nothing */
    eset_t                 out, in;
    int                    native;  /* remote updates by atomics */
    uint64_t               sym_off; /* native: [maxnl] words, every rank */
    int64_t                edges, remote;
} vx_t;

static vx_t      *cur;       /* the run in progress on this rank */
static gv_am_id_t am_upd;
static int        am_ready;
static uint64_t   sym_off;   /* native slots, reused across runs */
static size_t     sym_len;

void gv__vx_err(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "[%04d] ERROR vertex: ", gv_rank());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void gv__vx_err0(const char *fmt, ...)
{
    va_list ap;

    if (gv_rank() != 0)
        return;
    fprintf(stderr, "[%04d] ERROR vertex: ", gv_rank());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

gv_vx_word_t gv__vx_identity(gv_vx_op_t op, gv_vx_word_t custom)
{
    gv_vx_word_t w;

    switch (op) {
    case GV_VX_SUM_F64: w.f = 0.0; break;
    case GV_VX_MIN_I64: w.i = INT64_MAX; break;
    case GV_VX_MIN_F64: w.f = INFINITY; break;
    case GV_VX_SUM_I64: w.i = 0; break;
    default: w = custom; break;
    }
    return w;
}

gv_status_t gv__vx_agree(gv_status_t rc)
{
    int64_t     bad = (rc != GV_OK);
    gv_status_t s2  = gv_allreduce(&bad, 1, GV_INT64, GV_MAX);

    if (rc != GV_OK)
        return rc;
    if (s2 != GV_OK)
        return s2;
    return bad ? GV_ERR_NO_MEMORY : GV_OK;
}

#define RED_CHUNK ((size_t)1 << 17) /* elements of one gv_allreduce */

gv_status_t gv__vx_allreduce_i64(int64_t *buf, size_t n, gv_redop_t op)
{
    for (size_t k = 0; k < n; k += RED_CHUNK) {
        size_t      c  = (n - k < RED_CHUNK) ? n - k : RED_CHUNK;
        gv_status_t st = gv_allreduce(buf + k, c, GV_INT64, op);

        if (st != GV_OK)
            return st;
    }
    return GV_OK;
}

gv_status_t gv__vx_allreduce_bits(uint64_t *bits, size_t nwords)
{
    for (size_t k = 0; k < nwords; k += RED_CHUNK) {
        size_t      c  = (nwords - k < RED_CHUNK) ? nwords - k : RED_CHUNK;
        gv_status_t st = gv_allreduce(bits + k, c, GV_UINT64, GV_SUM);

        if (st != GV_OK)
            return st;
    }
    return GV_OK;
}

/* ---- delegate messages: batches of (local index u32, value u64) -------- */

#define REC 12

static void am_upd_cb(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *p = payload;
    vx_t          *x = cur;

    (void)src;
    (void)arg;
    if ((x == NULL) || (len % REC) != 0) {
        gv__vx_err("update batch of %zu bytes from rank %d %s", len, src,
                   (x == NULL) ? "outside a run" : "is not whole records");
        return;
    }
    for (size_t k = 0; k < len; k += REC) {
        uint32_t     i;
        gv_vx_word_t v;

        memcpy(&i, p + k, 4);
        memcpy(&v, p + k + 4, 8);
        if (i >= (uint64_t)x->nl) {
            gv__vx_err("update of local vertex %u from rank %d: only %lld",
                       i, src, (long long)x->nl);
            continue;
        }
        gv__vx_combine(x->p->op, &x->sl[i], v, x->p->sum);
    }
}

static gv_status_t register_handlers(void)
{
    gv_status_t st;

    if (am_ready)
        return GV_OK;
    st = gv_am_register(am_upd_cb, NULL, &am_upd);
    if (st != GV_OK) {
        gv__vx_err("cannot register the update handler: %s",
                   gv_status_str(st));
        return st;
    }
    am_ready = 1;
    gv_barrier(); /* every rank registered before anyone sends */
    return GV_OK;
}

/* ---- setup: ghost tables ------------------------------------------------ */

static uint32_t *slots_of(const int32_t *gmap, const int64_t *nbr, int64_t m)
{
    uint32_t *slot = malloc((size_t)(m > 0 ? m : 1) * sizeof(uint32_t));

    for (int64_t e = 0; (slot != NULL) && (e < m); e++)
        slot[e] = (uint32_t)gmap[nbr[e]];
    return slot;
}

void gv__vx_ghosts_free(gv__vx_ghosts_t *gh)
{
    free(gh->gstart);
    free(gh->gidx);
    free(gh->out_slot);
    free(gh->in_slot);
    memset(gh, 0, sizeof(*gh));
}

gv_status_t gv__vx_ghosts_build(const gv_graph_t *g, int use_out, int use_in,
                                gv__vx_ghosts_t *gh)
{
    int32_t    *gmap;
    int64_t    *rem = NULL, nrem = 0, cap = 0;
    int64_t    *cnt;
    int        *own = NULL;
    gv_status_t st = GV_OK;

    memset(gh, 0, sizeof(*gh));
    gh->nl = g->nlocal;
    if (g->nverts + g->nranks >= INT32_MAX) {
        gv__vx_err0("%lld vertices: the engine numbers them in 31 bits",
                   (long long)g->nverts);
        return GV_ERR_INVALID;
    }
    gmap = malloc((size_t)(g->nverts > 0 ? g->nverts : 1) * sizeof(int32_t));
    cnt  = calloc((size_t)g->nranks + 1, sizeof(int64_t));
    if ((gmap == NULL) || (cnt == NULL)) {
        st = GV_ERR_NO_MEMORY;
        goto out;
    }
    memset(gmap, 0xff, (size_t)g->nverts * sizeof(int32_t));
    for (int64_t i = 0; i < g->nlocal; i++)
        gmap[g->local_ids[i]] = (int32_t)i;
    for (int s = 0; s < 2; s++) {
        const int64_t *nbr = (s == 0) ? g->out_dst : g->in_src;
        int64_t        m   = (s == 0) ? g->nlocal_out : g->nlocal_in;

        if ((s == 0) ? !use_out : !use_in)
            continue;
        for (int64_t e = 0; e < m; e++) {
            int64_t v = nbr[e];

            if (gmap[v] != -1)
                continue;
            gmap[v] = -2; /* remote, listed */
            if (nrem == cap) {
                int64_t *n;

                cap = cap ? 2 * cap : 4096;
                n   = realloc(rem, (size_t)cap * sizeof(int64_t));
                if (n == NULL) {
                    st = GV_ERR_NO_MEMORY;
                    goto out;
                }
                rem = n;
            }
            rem[nrem++] = v;
        }
    }
    gh->ng     = nrem;
    gh->gstart = calloc((size_t)g->nranks + 1, sizeof(int64_t));
    gh->gidx   = malloc((size_t)(nrem > 0 ? nrem : 1) * sizeof(int64_t));
    own        = malloc((size_t)(nrem > 0 ? nrem : 1) * sizeof(int));
    if ((gh->gstart == NULL) || (gh->gidx == NULL) || (own == NULL)) {
        st = GV_ERR_NO_MEMORY;
        goto out;
    }
    /* Owners: counted, then each ghost placed in its owner's range. */
    for (int64_t k = 0; k < nrem; k++) {
        own[k] = gv_graph_owner(g, rem[k]);
        gh->gstart[own[k] + 1]++;
    }
    for (int r = 0; r < g->nranks; r++)
        gh->gstart[r + 1] += gh->gstart[r];
    memcpy(cnt, gh->gstart, (size_t)g->nranks * sizeof(int64_t));
    for (int64_t k = 0; k < nrem; k++) {
        int64_t gi = cnt[own[k]]++;

        gh->gidx[gi] = gv_graph_local(g, rem[k]);
        gmap[rem[k]] = (int32_t)(g->nlocal + gi);
    }
    if (use_out && ((gh->out_slot = slots_of(gmap, g->out_dst,
                                             g->nlocal_out)) == NULL))
        st = GV_ERR_NO_MEMORY;
    if (use_in && ((gh->in_slot = slots_of(gmap, g->in_src,
                                           g->nlocal_in)) == NULL))
        st = GV_ERR_NO_MEMORY;
out:
    free(own);
    free(rem);
    free(cnt);
    free(gmap);
    if (st == GV_ERR_NO_MEMORY)
        gv__vx_err("out of memory building the ghost tables");
    if (st != GV_OK)
        gv__vx_ghosts_free(gh);
    return st;
}

/* The tables of the graph attached with gv_vx_attach(), if any. */
static struct {
    const gv_graph_t *g;
    const int64_t    *out_dst, *in_src;
    gv__vx_ghosts_t   gh;
} att;

gv_status_t gv_vx_attach(const gv_graph_t *g)
{
    gv_status_t st;

    gv_vx_detach(att.g);
    st = gv__vx_ghosts_build(g, 1, g->in_off != NULL, &att.gh);
    if (st != GV_OK)
        return st;
    att.g       = g;
    att.out_dst = g->out_dst;
    att.in_src  = g->in_src;
    return GV_OK;
}

void gv_vx_detach(const gv_graph_t *g)
{
    if ((g == NULL) || (g != att.g))
        return;
    gv__vx_ghosts_free(&att.gh);
    memset(&att, 0, sizeof(att));
}

gv_status_t gv__vx_ghosts_get(const gv_graph_t *g, int use_out, int use_in,
                              gv__vx_ghosts_t *own, const gv__vx_ghosts_t **gh_p)
{
    gv_status_t st;

    if ((g == att.g) && (g->out_dst == att.out_dst) &&
        (g->in_src == att.in_src) && (!use_in || att.gh.in_slot)) {
        memset(own, 0, sizeof(*own));
        *gh_p = &att.gh;
        return GV_OK;
    }
    st    = gv__vx_ghosts_build(g, use_out, use_in, own);
    *gh_p = own;
    return st;
}

static gv_status_t setup(vx_t *x, int use_out, int use_in)
{
    const gv_graph_t      *g = x->g;
    const gv__vx_ghosts_t *gh;
    gv_status_t            st = gv__vx_ghosts_get(g, use_out, use_in, &x->gh,
                                                  &gh);
    size_t                 n;

    if (st != GV_OK)
        return st;
    x->ng     = gh->ng;
    x->gstart = gh->gstart;
    x->gidx   = gh->gidx;
    x->out    = (eset_t){g->out_off, g->out_w, gh->out_slot};
    x->in     = (eset_t){g->in_off, g->in_w, gh->in_slot};
    n         = (size_t)(x->nl + x->ng);
    x->sl     = malloc((n > 0 ? n : 1) * sizeof(gv_vx_word_t));
    if (x->sl == NULL)
        return GV_ERR_NO_MEMORY;
    for (size_t k = 0; k < n; k++)
        x->sl[k] = x->id;
    return GV_OK;
}

/* Collective: the symmetric-heap words remote atomics update (native). */
static gv_status_t setup_native(vx_t *x)
{
    int64_t     maxnl = x->nl;
    gv_status_t st    = gv_allreduce(&maxnl, 1, GV_INT64, GV_MAX);

    if (st != GV_OK)
        return st;
    if ((size_t)maxnl * 8 > sym_len) {
        size_t len = (size_t)(maxnl > 0 ? maxnl : 1) * 8;

        st = gv_sym_alloc(len, 64, &sym_off);
        if (st != GV_OK) {
            gv__vx_err0("GV_AMO=native: no room for %zu bytes of vertex "
                       "accumulators in the symmetric heap (raise GV_HEAP)",
                       len);
            return st;
        }
        sym_len = len;
    }
    x->sym_off = sym_off;
    return GV_OK;
}

/* ---- the phases --------------------------------------------------------- */

/* Send value @a v along local vertex i's edges of @a es: the hot loop,
 * one copy per built-in operator. */
#define PUSH_LOOP(_combine)                                                  \
    do {                                                                     \
        if (p->edge == NULL) {                                               \
            for (int64_t k = b; k < e; k++) {                                \
                gv_vx_word_t *d = &x->sl[es->slot[k]];                       \
                gv_vx_word_t  u = v;                                         \
                _combine;                                                    \
            }                                                                \
        } else {                                                             \
            for (int64_t k = b; k < e; k++) {                                \
                gv_vx_word_t *d = &x->sl[es->slot[k]];                       \
                gv_vx_word_t  u =                                            \
                    p->edge(v, es->w ? es->w[k] : 1.0f, x->arg);             \
                _combine;                                                    \
            }                                                                \
        }                                                                    \
    } while (0)

static inline void push(vx_t *x, const eset_t *es, int64_t i, gv_vx_word_t v)
{
    const gv_vx_program_t *p = x->p;
    int64_t                b = es->off[i], e = es->off[i + 1];

    x->edges += e - b;
    switch (p->op) {
    case GV_VX_SUM_F64:
        PUSH_LOOP(d->f += u.f);
        break;
    case GV_VX_MIN_I64:
        PUSH_LOOP(if (u.i < d->i) d->i = u.i);
        break;
    case GV_VX_MIN_F64:
        PUSH_LOOP(if (u.f < d->f) d->f = u.f);
        break;
    case GV_VX_SUM_I64:
        PUSH_LOOP(d->i += u.i);
        break;
    default:
        PUSH_LOOP(*d = p->sum(*d, u));
        break;
    }
}

static void push_dir(vx_t *x, gv_vx_dir_t d, int64_t i, gv_vx_word_t v,
                     int gather)
{
    /* A gather from the in-neighbours travels their out-edges; a scatter
     * to the out-neighbours travels this vertex's out-edges. */
    int via_out = gather ? (d & GV_VX_IN) : (d & GV_VX_OUT);
    int via_in  = gather ? (d & GV_VX_OUT) : (d & GV_VX_IN);

    if (via_out)
        push(x, &x->out, i, v);
    if (via_in)
        push(x, &x->in, i, v);
}

/* Native: combine each ghost that got a value into its owner's word with
 * a remote atomic add (int64 sums) or compare-and-swap loops (min of int64
 * or of non-negative doubles, which order as their bits do; double add),
 * many in flight at once. */
#define CAS_BATCH 4096

static gv_status_t ship_native(vx_t *x)
{
    int64_t  *pend = malloc(CAS_BATCH * sizeof(int64_t));
    uint64_t *expv = malloc(CAS_BATCH * sizeof(uint64_t));
    uint64_t *res  = malloc(CAS_BATCH * sizeof(uint64_t));
    gv_status_t st = GV_OK;

    if ((pend == NULL) || (expv == NULL) || (res == NULL)) {
        st = GV_ERR_NO_MEMORY;
        goto out;
    }
    for (int d = 1; d < x->P && st == GV_OK; d++) {
        int     r = (x->me + d) % x->P;
        int64_t k = x->gstart[r], end = x->gstart[r + 1];

        while ((k < end) && (st == GV_OK)) {
            int n = 0;

            for (; (k < end) && (n < CAS_BATCH); k++) {
                if (x->sl[x->nl + k].u == x->id.u)
                    continue;
                pend[n]   = k;
                expv[n++] = x->id.u;
                x->remote++;
            }
            if (x->p->op == GV_VX_SUM_I64) {
                /* A plain remote atomic add: no loop. */
                for (int j = 0; (j < n) && (st == GV_OK); j++)
                    st = gv_amo64(GV_AMO_ADD, r,
                                  x->sym_off + 8 * (uint64_t)x->gidx[pend[j]],
                                  x->sl[x->nl + pend[j]].u, 0, NULL);
                if (st == GV_OK)
                    st = gv_rma_flush(r);
                n = 0;
            }
            while ((n > 0) && (st == GV_OK)) {
                int m = 0;

                for (int j = 0; j < n; j++) {
                    gv_vx_word_t old = {.u = expv[j]}, nw = old;

                    gv__vx_combine(x->p->op, &nw, x->sl[x->nl + pend[j]],
                                   x->p->sum);
                    if (nw.u == old.u)
                        continue; /* nothing to change */
                    st = gv_amo64(GV_AMO_CSWAP, r,
                                  x->sym_off + 8 * (uint64_t)x->gidx[pend[j]],
                                  nw.u, old.u, &res[m]);
                    if (st != GV_OK)
                        break;
                    pend[m] = pend[j];
                    expv[m] = old.u;
                    m++;
                }
                if (st == GV_OK)
                    st = gv_rma_flush(r);
                n = 0;
                for (int j = 0; (st == GV_OK) && (j < m); j++) {
                    if (res[j] == expv[j])
                        continue; /* swapped */
                    pend[n]   = pend[j];
                    expv[n++] = res[j]; /* retry against what is there */
                }
            }
        }
    }
    if (st != GV_OK)
        gv__vx_err("remote atomic failed: %s", gv_status_str(st));
out:
    free(pend);
    free(expv);
    free(res);
    return st;
}

#define BATCH (REC * 5000)

static gv_status_t ship_am(vx_t *x)
{
    uint8_t     buf[BATCH];
    gv_status_t st = GV_OK;

    for (int d = 1; d < x->P && st == GV_OK; d++) {
        int    r = (x->me + d) % x->P;
        size_t n = 0;

        for (int64_t k = x->gstart[r]; k < x->gstart[r + 1]; k++) {
            uint32_t i = (uint32_t)x->gidx[k];

            if (x->sl[x->nl + k].u == x->id.u)
                continue;
            memcpy(buf + n, &i, 4);
            memcpy(buf + n + 4, &x->sl[x->nl + k], 8);
            n += REC;
            x->remote++;
            if (n == BATCH) {
                st = gv_am_send(r, am_upd, buf, n);
                n  = 0;
                if (st != GV_OK)
                    break;
            }
        }
        if ((st == GV_OK) && (n > 0))
            st = gv_am_send(r, am_upd, buf, n);
    }
    if (st != GV_OK)
        gv__vx_err("sending updates failed: %s", gv_status_str(st));
    return st;
}

/* Collective: deliver every ghost that got a value to its owner;
 * afterwards sl[0..nl) holds the combined values of this phase. */
static gv_status_t exchange(vx_t *x)
{
    gv_status_t st = GV_OK, st2;

    if (x->P == 1)
        return GV_OK;
    if (x->native) {
        gv_vx_word_t *home = gv_sym_ptr(x->sym_off);

        memcpy(home, x->sl, (size_t)x->nl * sizeof(gv_vx_word_t));
        st = gv_coll_barrier(); /* every home word is ready */
        if (st == GV_OK)
            st = ship_native(x);
        st2 = gv_coll_barrier(); /* every remote atomic is done */
        if (st == GV_OK)
            st = st2;
        memcpy(x->sl, home, (size_t)x->nl * sizeof(gv_vx_word_t));
    } else {
        st = ship_am(x);
        gv_barrier(); /* quiescence: every batch handled */
    }
    /* The ghosts start the next phase clean. */
    for (int64_t k = x->nl; k < x->nl + x->ng; k++)
        x->sl[k] = x->id;
    return st;
}

static void clear_local(vx_t *x)
{
    for (int64_t i = 0; i < x->nl; i++)
        x->sl[i] = x->id;
}

/* ---- statistics --------------------------------------------------------- */

void gv_vx_stats_free(gv_vx_stats_t *st)
{
    if (st == NULL)
        return;
    free(st->step);
    memset(st, 0, sizeof(*st));
}

void gv__vx_step_print(const gv_vx_stats_t *st, int k, int label, FILE *f)
{
    const gv_vx_step_t *t = &st->step[k];

    if (gv_rank() != 0)
        return;
    fprintf(f,
            "superstep %d active=%lld scattered=%lld edges=%lld remote=%lld "
            "msgs=%llu bytes=%llu gather_s=%.4f apply_s=%.4f "
            "exchange_s=%.4f seconds=%.4f%s\n",
            label, (long long)t->active, (long long)t->scattered,
            (long long)t->edges, (long long)t->remote,
            (unsigned long long)t->msgs, (unsigned long long)t->bytes,
            t->gather_s, t->apply_s, t->exchange_s, t->seconds,
            t->bottom_up ? " bottom-up" : "");
    fflush(f);
}

void gv_vx_stats_print(const gv_vx_stats_t *st, FILE *f)
{
    if (st == NULL)
        return;
    for (int s = 0; s < st->steps; s++)
        gv__vx_step_print(st, s, s, f);
}

gv_status_t gv__vx_add_step(gv_vx_stats_t *st, gv_vx_step_t *t, int verbose)
{
    int64_t       sums[6] = {t->active, t->scattered, t->edges, t->remote,
                             (int64_t)t->msgs, (int64_t)t->bytes};
    gv_vx_step_t *n;
    gv_status_t   s2 = gv_allreduce(sums, 6, GV_INT64, GV_SUM);

    if (s2 != GV_OK)
        return s2;
    t->active    = sums[0];
    t->scattered = sums[1];
    t->edges     = sums[2];
    t->remote    = sums[3];
    t->msgs      = (uint64_t)sums[4];
    t->bytes     = (uint64_t)sums[5];
    n = realloc(st->step, (size_t)(st->steps + 1) * sizeof(*n));
    if (n == NULL)
        return GV_ERR_NO_MEMORY;
    st->step            = n;
    st->step[st->steps] = *t;
    st->steps++;
    if (verbose) {
        gv_vx_stats_t one = {.steps = 1, .step = t};

        gv__vx_step_print(&one, 0, st->steps - 1, stderr);
    }
    return GV_OK;
}

/* ---- the run ------------------------------------------------------------ */

static gv_status_t check_program(const gv_graph_t *g,
                                 const gv_vx_program_t *p)
{
    int need_in;

    if ((p->apply == NULL) ||
        ((unsigned)p->gather_dir > GV_VX_BOTH) ||
        ((unsigned)p->scatter_dir > GV_VX_BOTH) ||
        ((unsigned)p->op > GV_VX_CUSTOM)) {
        gv__vx_err0("bad vertex program: apply() is required, directions "
                   "are none/in/out/both, op one of gv_vx_op_t");
        return GV_ERR_INVALID;
    }
    if ((p->op == GV_VX_CUSTOM) && (p->sum == NULL)) {
        gv__vx_err0("bad vertex program: GV_VX_CUSTOM needs sum()");
        return GV_ERR_INVALID;
    }
    if ((p->gather_dir != GV_VX_NONE) && (p->gather == NULL)) {
        gv__vx_err0("bad vertex program: a gather direction needs gather()");
        return GV_ERR_INVALID;
    }
    if ((p->scatter_dir != GV_VX_NONE) && (p->scatter == NULL)) {
        gv__vx_err0("bad vertex program: a scatter direction needs "
                   "scatter()");
        return GV_ERR_INVALID;
    }
    need_in = (p->gather_dir & GV_VX_OUT) || (p->scatter_dir & GV_VX_IN);
    if (need_in && (g->in_off == NULL)) {
        gv__vx_err0("this vertex program needs in-edges: build the graph "
                   "with GV_GRAPH_IN_EDGES");
        return GV_ERR_INVALID;
    }
    return GV_OK;
}

gv_status_t gv_vx_run(const gv_graph_t *g, const gv_vx_program_t *prog,
                      void *state, const gv_vx_opts_t *opts,
                      gv_vx_stats_t *stats_p)
{
    static const gv_vx_opts_t defaults;
    vx_t           x;
    gv_vx_stats_t  st;
    gv_vx_word_t  *acc    = NULL;
    uint8_t       *hasacc = NULL, *active = NULL;
    gv_status_t    rc, s2;
    double         t0     = gv_wtime();
    int            use_out, use_in, max;
    char          *sp     = state;

    if (opts == NULL)
        opts = &defaults;
    memset(&st, 0, sizeof(st));
    memset(&x, 0, sizeof(x));
    rc = check_program(g, prog);
    if (rc == GV_OK)
        rc = register_handlers();
    /* Every rank checks the same program: agree before going on. */
    if (rc != GV_OK)
        return rc;
    x.g      = g;
    x.p      = prog;
    x.arg    = opts->arg;
    x.id     = gv__vx_identity(prog->op, prog->identity);
    x.nl     = g->nlocal;
    x.me     = g->rank;
    x.P      = g->nranks;
    x.native = gv_dsm_amo_native() && (prog->op != GV_VX_CUSTOM);
    max      = opts->max_supersteps;
    use_out  = (prog->gather_dir & GV_VX_IN) || (prog->scatter_dir & GV_VX_OUT);
    use_in   = (prog->gather_dir & GV_VX_OUT) || (prog->scatter_dir & GV_VX_IN);
    rc       = setup(&x, use_out, use_in);
    /* Updates from a faster rank may arrive from the next collective on. */
    if (rc == GV_OK)
        cur = &x;
    {
        int64_t bad = (rc != GV_OK);

        s2 = gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
        if ((rc == GV_OK) && ((s2 != GV_OK) || bad))
            rc = (s2 != GV_OK) ? s2 : GV_ERR_NO_MEMORY;
    }
    if ((rc == GV_OK) && x.native)
        rc = setup_native(&x);
    if (rc == GV_OK) {
        size_t n = (size_t)(x.nl > 0 ? x.nl : 1);

        acc    = malloc(n * sizeof(*acc));
        hasacc = calloc(n, 1);
        active = calloc(n, 1);
        if ((acc == NULL) || (hasacc == NULL) || (active == NULL))
            rc = GV_ERR_NO_MEMORY;
    }
    if (rc != GV_OK)
        goto out;
    for (int64_t i = 0; i < x.nl; i++) {
        void *s = sp + (size_t)i * prog->state_size;

        acc[i] = x.id;
        if (prog->init == NULL) {
            memset(s, 0, prog->state_size);
            active[i] = 1;
        } else {
            active[i] = prog->init(g, i, s, x.arg) != 0;
        }
    }
    st.native  = x.native;
    st.setup_s = gv_wtime() - t0;
    for (int step = 0; (max <= 0) || (step < max); step++) {
        gv_vx_step_t  t;
        gv_am_stats_t a0, a1;
        double        ts = gv_wtime(), tp;
        int64_t       nact = 0;
        int           last = (max > 0) && (step == max - 1);

        memset(&t, 0, sizeof(t));
        gv_am_stats(&a0);
        x.edges  = 0;
        x.remote = 0;
        /* Gather. */
        if ((prog->gather_dir != GV_VX_NONE) &&
            (!prog->delta_caching || (step == 0))) {
            for (int64_t i = 0; i < x.nl; i++) {
                gv_vx_word_t v;

                if (prog->gather(g, i, sp + (size_t)i * prog->state_size, &v,
                                 x.arg))
                    push_dir(&x, prog->gather_dir, i, v, 1);
            }
            rc = exchange(&x);
            for (int64_t i = 0; i < x.nl; i++) {
                acc[i]    = x.sl[i];
                hasacc[i] = x.sl[i].u != x.id.u;
            }
            clear_local(&x);
            if (rc != GV_OK)
                break;
        }
        tp         = gv_wtime();
        t.gather_s = tp - ts;
        for (int64_t i = 0; i < x.nl; i++)
            nact += active[i];
        t.active = nact;
        rc       = gv_allreduce(&nact, 1, GV_INT64, GV_SUM);
        if ((rc != GV_OK) || (nact == 0))
            break;
        /* Apply, and scatter at once from the vertices that ask to. */
        for (int64_t i = 0; i < x.nl; i++) {
            void        *s = sp + (size_t)i * prog->state_size;
            gv_vx_word_t m;

            int          r;

            if (!active[i])
                continue;
            r         = prog->apply(g, i, s, acc[i], hasacc[i], x.arg);
            active[i] = (r == GV_VX_HOLD) ? 2 : 0; /* 2: active next too */
            if ((r == 0) || (r == GV_VX_HOLD) || last ||
                (prog->scatter_dir == GV_VX_NONE))
                continue;
            if (prog->scatter(g, i, s, &m, x.arg)) {
                t.scattered++;
                push_dir(&x, prog->scatter_dir, i, m, 0);
            }
        }
        t.apply_s   = gv_wtime() - tp; /* apply and the local scatter */
        tp          = gv_wtime();
        rc          = exchange(&x);
        t.exchange_s = gv_wtime() - tp;
        for (int64_t i = 0; i < x.nl; i++) {
            int got = x.sl[i].u != x.id.u;

            if (!prog->delta_caching) {
                acc[i]    = x.sl[i];
                hasacc[i] = got;
            } else if (got) {
                gv__vx_combine(prog->op, &acc[i], x.sl[i], prog->sum);
                hasacc[i] = 1;
            }
            active[i] = got || (active[i] == 2);
        }
        clear_local(&x);
        gv_am_stats(&a1);
        t.edges   = x.edges;
        t.remote  = x.remote;
        t.msgs    = a1.msgs_sent - a0.msgs_sent;
        t.bytes   = a1.bytes_sent - a0.bytes_sent;
        t.seconds = gv_wtime() - ts;
        s2        = gv__vx_add_step(&st, &t, opts->verbose);
        if (rc == GV_OK)
            rc = s2;
        if (rc != GV_OK)
            break;
        if ((opts->after_step != NULL) && opts->after_step(step, x.arg))
            break;
    }
out:
    cur = NULL;
    free(acc);
    free(hasacc);
    free(active);
    gv__vx_ghosts_free(&x.gh);
    free(x.sl);
    st.seconds = gv_wtime() - t0;
    if (stats_p != NULL)
        *stats_p = st;
    else
        gv_vx_stats_free(&st);
    return rc;
}
