/* The global heap: block-cyclic and symmetric allocation from any rank,
 * the allocation table every rank keeps, and exported memory.
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Why rank 0 keeps the free list. An allocation is a contiguous range of
 * global blocks, so that p + i walks it; a symmetric one is P * k blocks
 * starting at a multiple of P, which gives every rank the local blocks
 * j0 .. j0 + k - 1: the same heap offset everywhere. Ranges must not
 * overlap, and a per-rank slice of the block space would break the
 * striping (a rank's slice would be homed round-robin anyway, but its
 * size would be fixed in advance and a large allocation could not use the
 * others' slices). One first-fit free list on rank 0, reached by a
 * request message, is simple and exact; allocation is rare next to
 * delegates, so its latency (two round trips) does not matter.
 *
 * Why every rank keeps the table of allocations. A delegate arriving from
 * the network must be checked at its home against the live allocations;
 * with GV_AMO=native there is no home in the loop and the check happens
 * at the caller. So every rank holds the table (one entry per allocation,
 * not per block, so it scales with the number of allocations), sorted,
 * with the last hit cached: a program with one big array checks an address
 * with two compares. gv_global_alloc returns only after every rank
 * acknowledged the new entry, and gv_global_free removes it everywhere
 * before rank 0 may hand the blocks out again, so a valid address is in
 * every table while it is valid.
 *
 * Sequence of gv_global_alloc on rank A:
 *   A -> 0   ALLOC  n blocks, alignment      0 -> A  start block or error
 *   A -> *   MARK   start, n, bytes          * -> A  ok, or no memory here
 *   (if some rank refused: A -> * UNMARK, A -> 0 FREED; GV_ERR_NO_MEMORY)
 * gv_global_free: A -> 0 FREE (0 marks it freeing), A -> * UNMARK (acks),
 * A -> 0 FREED (blocks back on the free list).
 */
#include "dsm/dsm_internal.h"

#include <inttypes.h>

enum { KIND_LIN = 0, KIND_SYM = 1 };

/* An interval [lo, hi) of one table. */
typedef struct {
    uint64_t lo, hi;
} range_t;

typedef struct {
    range_t *v;
    size_t   n, cap;
    size_t   last;   /* index of the last hit */
} table_t;

static table_t lin_tab, sym_tab, exp_tab;

/* Rank 0's allocator. */
typedef struct {
    uint64_t start, n;
} run_t;
typedef struct {
    uint64_t   key;       /* the address the user holds */
    uint64_t   start, n;  /* blocks */
    uint64_t   bytes;
    int        kind;
    int        freeing;
} live_t;

static struct {
    run_t  *free_v;
    size_t  nfree, free_cap;
    live_t *live_v;
    size_t  nlive, live_cap;
} al;

static gv_am_id_t am_alloc, am_mark, am_free, am_freed, am_reply;

typedef struct {
    uint64_t token;
    uint64_t a, b, c;   /* per message */
    uint32_t kind, on;
} heap_msg_t;

typedef struct {
    uint64_t token;
    int32_t  status;
    uint32_t pad;
    uint64_t v[2];
} heap_rep_t;

/* ---- tables ----------------------------------------------------------- */

/* Index of the last entry with lo <= x, or SIZE_MAX. */
static size_t tab_floor(const table_t *t, uint64_t x)
{
    size_t lo = 0, hi = t->n;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->v[mid].lo <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo == 0) ? SIZE_MAX : lo - 1;
}

static inline int tab_has(table_t *t, uint64_t x, uint64_t len)
{
    size_t i = t->last;

    if ((i < t->n) && (x >= t->v[i].lo) && (x + len <= t->v[i].hi) &&
        (x + len >= x))
        return 1;
    i = tab_floor(t, x);
    if ((i == SIZE_MAX) || (x + len > t->v[i].hi) || (x + len < x))
        return 0;
    t->last = i;
    return 1;
}

/* Insert [lo, hi); fails if it overlaps an entry. */
static int tab_insert(table_t *t, uint64_t lo, uint64_t hi)
{
    size_t i = tab_floor(t, lo), at = (i == SIZE_MAX) ? 0 : i + 1;

    if ((i != SIZE_MAX) && (t->v[i].hi > lo))
        return 0;
    if ((at < t->n) && (t->v[at].lo < hi))
        return 0;
    if (t->n == t->cap) {
        t->cap = (t->cap == 0) ? 16 : t->cap * 2;
        t->v   = gv_realloc(t->v, t->cap * sizeof(*t->v));
    }
    memmove(&t->v[at + 1], &t->v[at], (t->n - at) * sizeof(*t->v));
    t->v[at].lo = lo;
    t->v[at].hi = hi;
    t->n++;
    return 1;
}

static int tab_remove(table_t *t, uint64_t lo)
{
    size_t i = tab_floor(t, lo);

    if ((i == SIZE_MAX) || (t->v[i].lo != lo))
        return 0;
    memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof(*t->v));
    t->n--;
    t->last = 0;
    return 1;
}

int gv__heap_valid(gv_gaddr_t a, int kind, uint64_t off, size_t len)
{
    switch (kind) {
    case GV__GA_KIND_LIN: {
        uint64_t o = a & GV__GA_OFF_MASK;
        /* One block holds it, so one home does. */
        if ((o & gv__geo.bmask) + len > gv__geo.bsize)
            return 0;
        return tab_has(&lin_tab, o, len);
    }
    case GV__GA_KIND_HEAP:
        return tab_has(&sym_tab, off, len);
    case GV__GA_KIND_PTR:
        return tab_has(&exp_tab, off, len);
    default:
        return 0;
    }
}

int gv__heap_lin_range_valid(uint64_t o, uint64_t len)
{
    return tab_has(&lin_tab, o, len);
}

void *gv__heap_check_local(gv_gaddr_t a, int kind, uint64_t off, size_t len)
{
    if (!gv__heap_valid(a, kind, off, len))
        return NULL;
    return (kind == GV__GA_KIND_PTR) ? (void *)(uintptr_t)off
                                     : (void *)(gv__geo.heap + off);
}

/* ---- exports ---------------------------------------------------------- */

gv_status_t gv_export(void *ptr, size_t len, gv_gaddr_t *addr_p)
{
    uint64_t p = (uint64_t)(uintptr_t)ptr;

    if (!gv__geo.up)
        return GV_ERR_STATE;
    if ((ptr == NULL) || (len == 0) || ((p + len) >> GV__GA_PTR_BITS) ||
        (gv__geo.rank > GV__GA_PTR_RANK_MAX)) {
        gv_error("gv_export: %p (%zu bytes) cannot be exported", ptr, len);
        return GV_ERR_INVALID;
    }
    if (!tab_insert(&exp_tab, p, p + len)) {
        gv_error("gv_export: %p (%zu bytes) overlaps an export", ptr, len);
        return GV_ERR_INVALID;
    }
    *addr_p = gv__ga_ptr(gv__geo.rank, ptr);
    return GV_OK;
}

gv_status_t gv_unexport(gv_gaddr_t addr)
{
    if ((gv__ga_kind(addr) != GV__GA_KIND_PTR) ||
        (gv__ga_home(addr) != gv__geo.rank) ||
        !tab_remove(&exp_tab, addr & ((1ull << GV__GA_PTR_BITS) - 1))) {
        char s[64];
        gv_error("gv_unexport: %s is not an export of this rank",
                 gv_gaddr_str(addr, s, sizeof(s)));
        return GV_ERR_NOT_FOUND;
    }
    return GV_OK;
}

/* ---- marking (every rank) ------------------------------------------------ */

/* The range of table entries an allocation makes, and the lowest heap
 * offset it uses on this rank (UINT64_MAX if none). */
static void alloc_extent(int kind, uint64_t start, uint64_t n, uint64_t bytes,
                         range_t *r, uint64_t *low_p)
{
    uint64_t B = gv__geo.bsize;
    int      P = gv__geo.size, me = gv__geo.rank;

    if (kind == KIND_LIN) {
        uint64_t last = start + n - 1, b;
        r->lo = start * B;
        r->hi = r->lo + bytes;
        /* The highest block of the range homed here sits lowest. */
        b = last - (uint64_t)((gv__blk_home(last) - me + P) % P);
        *low_p = ((b >= start) && (b <= last))
                     ? gv__lblk_off(gv__blk_local(b), 0) : UINT64_MAX;
    } else {
        uint64_t k = n / (uint64_t)P, j0 = start / (uint64_t)P;
        r->lo  = gv__lblk_off(j0 + k - 1, 0);
        r->hi  = r->lo + bytes;
        *low_p = r->lo;
    }
}

static gv_status_t mark_here(int on, int kind, uint64_t start, uint64_t n,
                             uint64_t bytes, int src)
{
    table_t *t = (kind == KIND_LIN) ? &lin_tab : &sym_tab;
    range_t  r;
    uint64_t low, brk;

    if ((kind != KIND_LIN && kind != KIND_SYM) || (n == 0) ||
        (start >= gv__geo.nglobal) || (n > gv__geo.nglobal - start) ||
        (bytes == 0) ||
        ((kind == KIND_LIN) && (bytes > n * gv__geo.bsize)) ||
        ((kind == KIND_SYM) &&
         (((start % (uint64_t)gv__geo.size) != 0) ||
          ((n % (uint64_t)gv__geo.size) != 0) ||
          (bytes > (n / (uint64_t)gv__geo.size) * gv__geo.bsize)))) {
        gv__dsm_reject(src, "allocation mark out of range");
        return GV_ERR_PROTO;
    }
    alloc_extent(kind, start, n, bytes, &r, &low);
    if (!on)
        return tab_remove(t, r.lo) ? GV_OK : GV_ERR_NOT_FOUND;
    /* The program's gv_sym_alloc objects grow up from offset 0: a global
     * allocation must stay above them. */
    if ((low != UINT64_MAX) && (gv_sym_alloc(0, 1, &brk) == GV_OK) &&
        (low < brk)) {
        gv_debug("global allocation reaches heap offset %#" PRIx64 ", below "
                 "the symmetric break %#" PRIx64, low, brk);
        return GV_ERR_NO_MEMORY;
    }
    return tab_insert(t, r.lo, r.hi) ? GV_OK : GV_ERR_PROTO;
}

static void send_or_die(int dst, gv_am_id_t id, const void *p, size_t len)
{
    gv_status_t status = gv_am_send(dst, id, p, len);

    if (status != GV_OK)
        gv_fatal("dsm: cannot send to rank %d: %s", dst,
                 gv_status_str(status));
}

static void reply(int dst, uint64_t token, gv_status_t status, uint64_t v0,
                  uint64_t v1)
{
    heap_rep_t m = {token, (int32_t)status, 0, {v0, v1}};
    send_or_die(dst, am_reply, &m, sizeof(m));
}

static int msg_parse(int src, const void *payload, size_t len, heap_msg_t *m)
{
    if (len != sizeof(*m)) {
        gv__dsm_reject(src, "heap message of the wrong size");
        return 0;
    }
    memcpy(m, payload, sizeof(*m));
    return 1;
}

static void am_mark_cb(int src, const void *payload, size_t len, void *arg)
{
    heap_msg_t m;

    if (!msg_parse(src, payload, len, &m))
        return;
    reply(src, m.token, mark_here((int)m.on, (int)m.kind, m.a, m.b, m.c, src),
          0, 0);
}

static void am_reply_cb(int src, const void *payload, size_t len, void *arg)
{
    heap_rep_t m;

    if (len != sizeof(m)) {
        gv__dsm_reject(src, "heap reply of the wrong size");
        return;
    }
    memcpy(&m, payload, sizeof(m));
    gv__dreq_reply(m.token, (gv_status_t)m.status, m.v, sizeof(m.v), src);
}

/* ---- rank 0's allocator ------------------------------------------------- */

static void free_insert(uint64_t start, uint64_t n)
{
    size_t i, at;

    for (at = 0; (at < al.nfree) && (al.free_v[at].start < start); at++)
        ;
    /* Coalesce with the neighbours. */
    if ((at > 0) &&
        (al.free_v[at - 1].start + al.free_v[at - 1].n == start)) {
        al.free_v[at - 1].n += n;
        if ((at < al.nfree) &&
            (al.free_v[at - 1].start + al.free_v[at - 1].n ==
             al.free_v[at].start)) {
            al.free_v[at - 1].n += al.free_v[at].n;
            for (i = at; i + 1 < al.nfree; i++)
                al.free_v[i] = al.free_v[i + 1];
            al.nfree--;
        }
        return;
    }
    if ((at < al.nfree) && (start + n == al.free_v[at].start)) {
        al.free_v[at].start = start;
        al.free_v[at].n += n;
        return;
    }
    if (al.nfree == al.free_cap) {
        al.free_cap = (al.free_cap == 0) ? 16 : al.free_cap * 2;
        al.free_v   = gv_realloc(al.free_v, al.free_cap * sizeof(run_t));
    }
    for (i = al.nfree; i > at; i--)
        al.free_v[i] = al.free_v[i - 1];
    al.free_v[at].start = start;
    al.free_v[at].n     = n;
    al.nfree++;
}

/* First fit: the lowest run that holds @a n blocks from a multiple of
 * @a align. Returns 0 and sets *start_p, or -1. */
static int first_fit(uint64_t n, uint64_t align, uint64_t *start_p)
{
    size_t i;

    for (i = 0; i < al.nfree; i++) {
        run_t   *r = &al.free_v[i];
        uint64_t s = (r->start + align - 1) / align * align;
        uint64_t end = r->start + r->n;
        if ((s >= end) || (end - s < n))
            continue;
        /* Cut [s, s + n) out of the run. */
        if (s + n < end) {
            uint64_t tail = s + n, tail_n = end - tail;
            r->n = s - r->start;
            if (r->n == 0) {
                r->start = tail;
                r->n     = tail_n;
            } else {
                free_insert(tail, tail_n);
            }
        } else {
            r->n = s - r->start;
            if (r->n == 0) {
                for (; i + 1 < al.nfree; i++)
                    al.free_v[i] = al.free_v[i + 1];
                al.nfree--;
            }
        }
        *start_p = s;
        return 0;
    }
    return -1;
}

static void free_stats(uint64_t *total_p, uint64_t *largest_p)
{
    size_t i;

    *total_p = *largest_p = 0;
    for (i = 0; i < al.nfree; i++) {
        *total_p += al.free_v[i].n;
        if (al.free_v[i].n > *largest_p)
            *largest_p = al.free_v[i].n;
    }
}

static void am_alloc_cb(int src, const void *payload, size_t len, void *arg)
{
    heap_msg_t m;
    uint64_t   start, tot, big;
    live_t    *l;

    if (!msg_parse(src, payload, len, &m))
        return;
    if ((gv__geo.rank != 0) || (m.a == 0) || (m.b == 0) ||
        (m.kind > KIND_SYM)) {
        gv__dsm_reject(src, "bad allocation request");
        reply(src, m.token, GV_ERR_PROTO, 0, 0);
        return;
    }
    if (first_fit(m.a, m.b, &start) != 0) {
        free_stats(&tot, &big);
        reply(src, m.token, GV_ERR_NO_MEMORY, tot, big);
        return;
    }
    if (al.nlive == al.live_cap) {
        al.live_cap = (al.live_cap == 0) ? 16 : al.live_cap * 2;
        al.live_v   = gv_realloc(al.live_v, al.live_cap * sizeof(live_t));
    }
    l          = &al.live_v[al.nlive++];
    l->start   = start;
    l->n       = m.a;
    l->bytes   = m.c;
    l->kind    = (int)m.kind;
    l->freeing = 0;
    if (m.kind == KIND_LIN) {
        l->key = gv__ga_linear(start * gv__geo.bsize);
    } else {
        range_t  r;
        uint64_t low;
        alloc_extent(KIND_SYM, start, m.a, m.c, &r, &low);
        l->key = r.lo; /* heap offset; the rank part varies */
    }
    reply(src, m.token, GV_OK, start, 0);
}

static live_t *live_find(uint64_t key, int kind)
{
    size_t i;

    for (i = 0; i < al.nlive; i++)
        if ((al.live_v[i].key == key) && (al.live_v[i].kind == kind))
            return &al.live_v[i];
    return NULL;
}

static void am_free_cb(int src, const void *payload, size_t len, void *arg)
{
    heap_msg_t m;
    live_t    *l;

    if (!msg_parse(src, payload, len, &m))
        return;
    l = (gv__geo.rank == 0) ? live_find(m.a, (int)m.kind) : NULL;
    if ((l == NULL) || l->freeing) {
        reply(src, m.token, GV_ERR_INVALID, 0, 0);
        return;
    }
    l->freeing = 1;
    reply(src, m.token, GV_OK, l->start, l->n);
}

static void am_freed_cb(int src, const void *payload, size_t len, void *arg)
{
    heap_msg_t m;
    size_t     i;

    if (!msg_parse(src, payload, len, &m) || (gv__geo.rank != 0))
        return;
    for (i = 0; i < al.nlive; i++) {
        if ((al.live_v[i].start == m.a) && (al.live_v[i].n == m.b)) {
            free_insert(m.a, m.b);
            al.live_v[i] = al.live_v[--al.nlive];
            return;
        }
    }
    gv__dsm_reject(src, "freed blocks that were not allocated");
}

/* ---- the public calls ---------------------------------------------------- */

static gv_status_t request(int dst, gv_am_id_t id, const heap_msg_t *tmpl,
                           uint64_t v_p[2])
{
    gv__dreq_t *r;
    heap_msg_t  m = *tmpl;

    v_p[0] = v_p[1] = 0;
    m.token = gv__dreq_new(1, v_p, 2 * sizeof(uint64_t), &r);
    send_or_die(dst, id, &m, sizeof(m));
    return gv__dreq_wait(m.token, NULL);
}

/* Mark (or unmark) an allocation on every rank; returns the first error. */
static gv_status_t mark_all(int on, int kind, uint64_t start, uint64_t n,
                            uint64_t bytes)
{
    gv__dreq_t *r;
    uint64_t    tok = gv__dreq_new(gv__geo.size, NULL, 0, &r);
    heap_msg_t  m   = {tok, start, n, bytes, (uint32_t)kind, (uint32_t)on};
    int         i;

    for (i = 0; i < gv__geo.size; i++)
        send_or_die(i, am_mark, &m, sizeof(m));
    return gv__dreq_wait(tok, NULL);
}

static gv_status_t global_alloc(int kind, size_t len, gv_gaddr_t *addr_p)
{
    uint64_t    B = gv__geo.bsize, P = (uint64_t)gv__geo.size, n, v[2];
    heap_msg_t  m;
    gv_status_t status;
    const char *what = (kind == KIND_LIN) ? "gv_global_alloc"
                                          : "gv_global_alloc_symmetric";

    if (!gv__geo.up)
        return GV_ERR_STATE;
    if (len == 0) {
        gv_error("%s: zero bytes", what);
        return GV_ERR_INVALID;
    }
    n = (len + B - 1) / B;
    if (kind == KIND_SYM)
        n *= P;
    if (n > gv__geo.nglobal) {
        v[0] = v[1] = 0;
        status = GV_ERR_NO_MEMORY;
        goto err_nomem;
    }
    memset(&m, 0, sizeof(m));
    m.a    = n;
    m.b    = (kind == KIND_SYM) ? P : 1;
    m.c    = len;
    m.kind = (uint32_t)kind;
    status = request(0, am_alloc, &m, v);
    if (status == GV_ERR_NO_MEMORY)
        goto err_nomem;
    if (status != GV_OK) {
        gv_error("%s: the allocator on rank 0 failed: %s", what,
                 gv_status_str(status));
        return status;
    }
    {
        uint64_t start = v[0];
        status = mark_all(1, kind, start, n, len);
        if (status != GV_OK) {
            /* Undo where it took, then give the blocks back. */
            (void)mark_all(0, kind, start, n, len);
            m.a = start;
            m.b = n;
            send_or_die(0, am_freed, &m, sizeof(m));
            if (status == GV_ERR_NO_MEMORY) {
                gv_error("%s: %zu bytes reach below the objects of "
                         "gv_sym_alloc on some rank; the global heap shares "
                         "GV_HEAP (%llu bytes per rank) with them: raise "
                         "GV_HEAP", what, len,
                         (unsigned long long)gv__geo.heap_len);
                return status;
            }
            gv_error("%s: marking the allocation failed: %s", what,
                     gv_status_str(status));
            return status;
        }
        if (kind == KIND_LIN) {
            *addr_p = gv__ga_linear(start * B);
        } else {
            range_t  r;
            uint64_t low;
            alloc_extent(KIND_SYM, start, n, len, &r, &low);
            *addr_p = gv__ga_heap(gv__geo.rank, r.lo);
        }
    }
    return GV_OK;

err_nomem:
    if ((v[0] == 0) && (v[1] == 0)) {
        gv_error("%s: %zu bytes are more than the whole global heap (%llu "
                 "blocks of %llu bytes over %d ranks): raise GV_HEAP (%llu "
                 "bytes per rank)", what, len,
                 (unsigned long long)gv__geo.nglobal, (unsigned long long)B,
                 gv__geo.size, (unsigned long long)gv__geo.heap_len);
        return GV_ERR_NO_MEMORY;
    }
    gv_error("%s: %zu bytes do not fit in the global heap (%llu of %llu "
             "blocks of %llu bytes free, largest free run %llu blocks): "
             "raise GV_HEAP (%llu bytes per rank)", what, len,
             (unsigned long long)v[0], (unsigned long long)gv__geo.nglobal,
             (unsigned long long)B, (unsigned long long)v[1],
             (unsigned long long)gv__geo.heap_len);
    return GV_ERR_NO_MEMORY;
}

gv_status_t gv_global_alloc(size_t len, gv_gaddr_t *addr_p)
{
    return global_alloc(KIND_LIN, len, addr_p);
}

gv_status_t gv_global_alloc_symmetric(size_t len, gv_gaddr_t *addr_p)
{
    return global_alloc(KIND_SYM, len, addr_p);
}

gv_status_t gv_global_free(gv_gaddr_t addr)
{
    heap_msg_t  m;
    uint64_t    v[2];
    gv_status_t status;
    char        s[64];
    int         k = gv__ga_kind(addr);
    live_t      info;

    if (!gv__geo.up)
        return GV_ERR_STATE;
    memset(&m, 0, sizeof(m));
    if (k == GV__GA_KIND_LIN) {
        m.a    = addr;
        m.kind = KIND_LIN;
    } else if (k == GV__GA_KIND_HEAP) {
        m.a    = addr & ((1ull << GV__GA_HEAP_OFF_BITS) - 1);
        m.kind = KIND_SYM;
    } else {
        status = GV_ERR_INVALID;
        goto err;
    }
    status = request(0, am_free, &m, v);
    if (status != GV_OK)
        goto err;
    memset(&info, 0, sizeof(info));
    info.start = v[0];
    info.n     = v[1];
    /* The entry's byte length is not needed to remove it: removal is by
     * its first byte. Give a length that passes the range checks. */
    status = mark_all(0, (int)m.kind, info.start, info.n,
                      (m.kind == KIND_LIN)
                          ? info.n * gv__geo.bsize
                          : info.n / (uint64_t)gv__geo.size * gv__geo.bsize);
    if (status != GV_OK)
        gv_warn("gv_global_free: %s was missing from some rank's table (%s)",
                gv_gaddr_str(addr, s, sizeof(s)), gv_status_str(status));
    m.a = info.start;
    m.b = info.n;
    send_or_die(0, am_freed, &m, sizeof(m));
    return GV_OK;

err:
    gv_error("gv_global_free: %#" PRIx64 " (%s) is not the start of a live "
             "global allocation", addr, gv_gaddr_str(addr, s, sizeof(s)));
    return GV_ERR_INVALID;
}

/* ---- setup ---------------------------------------------------------------- */

void gv__heap_init(void)
{
    gv_status_t status;

    memset(&lin_tab, 0, sizeof(lin_tab));
    memset(&sym_tab, 0, sizeof(sym_tab));
    memset(&exp_tab, 0, sizeof(exp_tab));
    memset(&al, 0, sizeof(al));
    if (gv__geo.rank == 0)
        free_insert(0, gv__geo.nglobal);
    status = gv_am_register(am_alloc_cb, NULL, &am_alloc);
    if (status == GV_OK)
        status = gv_am_register(am_mark_cb, NULL, &am_mark);
    if (status == GV_OK)
        status = gv_am_register(am_free_cb, NULL, &am_free);
    if (status == GV_OK)
        status = gv_am_register(am_freed_cb, NULL, &am_freed);
    if (status == GV_OK)
        status = gv_am_register(am_reply_cb, NULL, &am_reply);
    if (status != GV_OK)
        gv_fatal("cannot register the global heap's handlers: %s",
                 gv_status_str(status));
}

void gv__heap_fini(void)
{
    gv_free(lin_tab.v);
    gv_free(sym_tab.v);
    gv_free(exp_tab.v);
    gv_free(al.free_v);
    gv_free(al.live_v);
    memset(&lin_tab, 0, sizeof(lin_tab));
    memset(&sym_tab, 0, sizeof(sym_tab));
    memset(&exp_tab, 0, sizeof(exp_tab));
    memset(&al, 0, sizeof(al));
}
