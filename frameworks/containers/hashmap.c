/* A distributed hash map: per-rank open-addressing tables that grow on
 * their own, operations shipped to a key's home as aggregated active
 * messages. SPDX-License-Identifier: BSD-3-Clause
 *
 * A key's 64-bit hash h picks its home from the high half (multiply-shift
 * over the ranks) and its slot from the low bits. Each rank's table is one
 * array of entries {tag, key, value}, each field padded to 8 bytes: tag 0
 * is an empty slot, 1 a tombstone, anything else the key's hash (moved off
 * 0 and 1), compared before the key. Linear probing; the table doubles
 * (or is rebuilt without tombstones) when live entries and tombstones pass
 * 70% of the slots, so the load after a rebuild is at most 50%.
 *
 * An operation is one message {map id, op, flags, event id} [token] key
 * [value | function, arguments]: the aggregator packs messages to one rank
 * into few transport messages, and its credits bound how many are in
 * flight. Asynchronous operations are enrolled in their event at the
 * sender and completed at the home; blocking ones carry a reply token. An
 * operation whose home is the calling rank runs at once, without a
 * message.
 *
 * Maps of 8-byte keys and values of at most 8 bytes queue their
 * asynchronous inserts, combines and erases at the home, remote and local
 * alike, in a ring of QCAP operations, and start fetching each one's slot
 * as it is queued: an operation is applied once QDIST newer ones are
 * queued behind it, and the rest at the end of the poll (a progress hook),
 * so that up to QDIST cache and TLB misses into the table overlap instead
 * of one per message. The ring is applied in order, before anything else
 * touches the table (any other operation, the local functions, forall,
 * size), and a drain nested in another (a combiner that sends and so
 * progresses) continues the same ring, so each sender's order holds.
 */
#include "containers/common.h"
#include <grapevine/fw/hashmap.h>

#include <stdlib.h>
#include <sys/mman.h>

/* Tables from this size on are mapped on their own, with transparent huge
 * pages asked for: random probes into a large table otherwise miss the
 * TLB on nearly every operation. */
#define BIG_TABLE (2u << 20)

enum { OP_INSERT = 1, OP_COMBINE, OP_ERASE, OP_VISIT, OP_LOOKUP, OP_MAX };
#define FL_REPLY 1

typedef struct {
    uint16_t map;
    uint8_t  op;
    uint8_t  flags;
    uint32_t gce;
} hdr_t;

typedef struct {
    uint8_t *slots;
    uint64_t cap, mask, live, tombs;
} table_t;

/* A queued operation (maps of 8-byte keys, values of at most 8 bytes). */
typedef struct {
    uint64_t key, val, hash;
    uint32_t gce;
    uint8_t  op;
} qop_t;

#define QCAP  64 /* queued operations per map, a power of two */
#define QDIST 16 /* operations in flight between fetch and apply */

struct gv_hashmap {
    uint16_t                id;
    size_t                  ks, vs;       /* key and value bytes          */
    size_t                  koff_end;     /* 8 + ks rounded up to 8       */
    size_t                  stride;       /* bytes per entry              */
    int                     nranks, rank;
    gv_hashmap_combine_fn_t combine;
    table_t                 t;
    gv_hashmap_stats_t      st;
    gv_fnref_t              last_ref;     /* the last visitor decoded     */
    gv_hashmap_visit_fn_t   last_fn;
    int                     queued;       /* queues its async operations  */
    int                     listed;       /* on the list of pending maps  */
    gv_hashmap_t           *next_pending;
    uint32_t                qh, qt;       /* ring's head and tail counts  */
    qop_t                   q[QCAP];
};

/* Maps whose ring holds operations, for the progress hook; and the maps
 * alive, while which the hook stays added. */
static gv_hashmap_t *pending;
static unsigned      maps_alive;

static inline size_t round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static inline uint64_t tag_of(uint64_t h)
{
    return (h < 2) ? h + 2 : h;
}

static inline int home_of(const gv_hashmap_t *m, uint64_t h)
{
    return (int)(((h >> 32) * (uint64_t)m->nranks) >> 32);
}

/* ---- the local table ------------------------------------------------------ */

static void table_free(const gv_hashmap_t *m, table_t *t)
{
    size_t bytes = t->cap * m->stride;

    if (bytes >= BIG_TABLE)
        munmap(t->slots, bytes);
    else
        free(t->slots);
    t->slots = NULL;
}

static void table_alloc(gv_hashmap_t *m, table_t *t, uint64_t cap)
{
    size_t bytes = cap * m->stride;

    if (bytes >= BIG_TABLE) {
        t->slots = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (t->slots == MAP_FAILED) {
            t->slots = NULL;
        } else {
            (void)madvise(t->slots, bytes, MADV_HUGEPAGE);
            /* Fault the pages in now, in large pages where the kernel has
             * them, rather than one by one under the first inserts. */
            memset(t->slots, 0, bytes);
        }
    } else {
        t->slots = calloc(cap, m->stride);
    }
    if (t->slots == NULL)
        gv_abort(1, "hash map: out of local memory for a table of %llu "
                 "entries (%llu bytes) on rank %d",
                 (unsigned long long)cap,
                 (unsigned long long)(cap * m->stride), m->rank);
    t->cap   = cap;
    t->mask  = cap - 1;
    t->live  = 0;
    t->tombs = 0;
}

static inline int key_eq(const gv_hashmap_t *m, const uint8_t *a,
                         const void *b)
{
    if (m->ks == 8) {
        uint64_t x, y;
        memcpy(&x, a, 8);
        memcpy(&y, b, 8);
        return x == y;
    }
    return memcmp(a, b, m->ks) == 0;
}

/* The entry of @a key, or where it would go (*found_p 0). */
static inline uint8_t *probe(const gv_hashmap_t *m, const table_t *t,
                             const void *key, uint64_t tg, int *found_p)
{
    uint64_t i    = tg & t->mask;
    uint8_t *tomb = NULL;

    for (;;) {
        uint8_t *e  = t->slots + i * m->stride;
        uint64_t et = *(const uint64_t *)e;

        if (et == 0) {
            *found_p = 0;
            return (tomb != NULL) ? tomb : e;
        }
        if (et == 1) {
            if (tomb == NULL)
                tomb = e;
        } else if ((et == tg) && key_eq(m, e + 8, key)) {
            *found_p = 1;
            return e;
        }
        i = (i + 1) & t->mask;
    }
}

static void rebuild(gv_hashmap_t *m)
{
    table_t  old = m->t;
    uint64_t cap = old.cap, i;

    while ((old.live + 1) * 2 > cap)
        cap *= 2;
    table_alloc(m, &m->t, cap);
    for (i = 0; i < old.cap; i++) {
        uint8_t *e = old.slots + i * m->stride, *d;
        uint64_t et = *(const uint64_t *)e;
        int      found;
        if (et < 2)
            continue;
        d = probe(m, &m->t, e + 8, et, &found);
        memcpy(d, e, m->stride);
        m->t.live++;
    }
    table_free(m, &old);
    m->st.resizes++;
    m->st.capacity = m->t.cap;
}

/* The entry of @a key, inserted (value zero) if absent: *created_p. */
static uint8_t *find_or_add(gv_hashmap_t *m, const void *key, uint64_t tg,
                            int *created_p)
{
    int      found;
    uint8_t *e = probe(m, &m->t, key, tg, &found);

    if (found) {
        *created_p = 0;
        return e;
    }
    if ((m->t.live + m->t.tombs + 1) * 10 > m->t.cap * 7) {
        rebuild(m);
        e = probe(m, &m->t, key, tg, &found);
    }
    if (*(const uint64_t *)e == 1)
        m->t.tombs--;
    *(uint64_t *)e = tg;
    memcpy(e + 8, key, m->ks);
    memset(e + m->koff_end, 0, m->stride - m->koff_end);
    m->t.live++;
    *created_p = 1;
    return e;
}

/* ---- the ring of queued operations ---------------------------------------- */

/* Apply the oldest queued operation. It leaves the ring before it runs:
 * a drain nested in a combiner takes the next one. */
static void apply_oldest(gv_hashmap_t *m)
{
    qop_t    o = m->q[m->qh & (QCAP - 1)];
    uint64_t tg = tag_of(o.hash);
    uint8_t *e;
    int      found, created;

    m->qh++;
    m->st.ops_served++;
    if (o.op == OP_ERASE) {
        e = probe(m, &m->t, &o.key, tg, &found);
        if (found) {
            *(uint64_t *)e = 1;
            m->t.live--;
            m->t.tombs++;
        }
    } else {
        e = find_or_add(m, &o.key, tg, &created);
        if ((o.op == OP_INSERT) || created)
            memcpy(e + m->koff_end, &o.val, m->vs);
        else
            m->combine(e + m->koff_end, &o.val, m->vs);
    }
    gv__fw_complete(o.gce, 1);
}

/* Apply everything queued. @return how many operations that was. */
static unsigned drain(gv_hashmap_t *m)
{
    unsigned n = 0;

    while (m->qh != m->qt) {
        apply_oldest(m);
        n++;
    }
    return n;
}

static unsigned progress_hook(void *arg)
{
    unsigned n = 0;

    while (pending != NULL) {
        gv_hashmap_t *m = pending;
        pending   = m->next_pending;
        m->listed = 0;
        n += drain(m);
    }
    return n;
}

/* Queue an operation (its event already counts it), fetching its slot. */
static void enqueue(gv_hashmap_t *m, int op, const void *key,
                    const void *val, uint64_t hash, uint32_t gce)
{
    qop_t         *o;
    const uint8_t *e;

    if (m->qt - m->qh == QCAP)
        apply_oldest(m);
    o       = &m->q[m->qt & (QCAP - 1)];
    memcpy(&o->key, key, 8);
    o->val  = 0;
    if (val != NULL)
        memcpy(&o->val, val, m->vs);
    o->hash = hash;
    o->gce  = gce;
    o->op   = (uint8_t)op;
    m->qt++;
    /* Start fetching its slot (written out here: GCC 12 finds a function
     * that only prefetches free of effects and drops its calls). */
    e = m->t.slots + (tag_of(hash) & m->t.mask) * m->stride;
    __builtin_prefetch(e, 1, 3);
    __builtin_prefetch(e + m->koff_end - 1, 1, 3); /* the key's end */
    if (m->qt - m->qh > QDIST)
        apply_oldest(m);
    if (!m->listed) {
        m->listed       = 1;
        m->next_pending = pending;
        pending         = m;
    }
}

static inline int queues(const gv_hashmap_t *m, int op)
{
    return m->queued && ((op == OP_INSERT) || (op == OP_COMBINE) ||
                         (op == OP_ERASE));
}

/* ---- running an operation at the home ------------------------------------ */

/* Run @a op on @a key (hash @a h) here. @a rest holds the value or the
 * visitor and its arguments. A lookup's value goes to @a out.
 * @return GV_OK, GV_ERR_NOT_FOUND (erase, lookup, visit of an absent key
 *         report it only to a blocking caller), GV_ERR_INVALID. */
static gv_status_t run_op(gv_hashmap_t *m, int op, const void *key,
                          uint64_t h, const uint8_t *rest, size_t rest_len,
                          void *out)
{
    uint64_t tg = tag_of(h);
    uint8_t *e;
    int      found, created;

    drain(m);
    m->st.ops_served++;
    switch (op) {
    case OP_INSERT:
        e = find_or_add(m, key, tg, &created);
        memcpy(e + m->koff_end, rest, m->vs);
        return GV_OK;
    case OP_COMBINE:
        e = find_or_add(m, key, tg, &created);
        if (created)
            memcpy(e + m->koff_end, rest, m->vs);
        else
            m->combine(e + m->koff_end, rest, m->vs);
        return GV_OK;
    case OP_ERASE:
        e = probe(m, &m->t, key, tg, &found);
        if (!found)
            return GV_ERR_NOT_FOUND;
        *(uint64_t *)e = 1;
        m->t.live--;
        m->t.tombs++;
        return GV_OK;
    case OP_LOOKUP:
        e = probe(m, &m->t, key, tg, &found);
        if (!found)
            return GV_ERR_NOT_FOUND;
        if (out != NULL)
            memcpy(out, e + m->koff_end, m->vs);
        return GV_OK;
    case OP_VISIT: {
        gv_fnref_t            ref;
        gv_hashmap_visit_fn_t fn;
        memcpy(&ref, rest, sizeof(ref));
        if ((ref.mod == m->last_ref.mod) && (ref.off == m->last_ref.off) &&
            (m->last_fn != NULL)) {
            fn = m->last_fn;
        } else {
            fn = (gv_hashmap_visit_fn_t)gv_fn_decode(&ref);
            if (fn == NULL) {
                fw_error("gv_hashmap_visit: the function does not name code "
                         "of this program");
                return GV_ERR_INVALID;
            }
            m->last_ref = ref;
            m->last_fn  = fn;
        }
        e = probe(m, &m->t, key, tg, &found);
        fn(m, key, found ? e + m->koff_end : NULL, rest + sizeof(ref),
           rest_len - sizeof(ref));
        return GV_OK;
    }
    default:
        return GV_ERR_INVALID;
    }
}

/* Bytes after the key that an operation carries (-1: a bad length). */
static ssize_t rest_len_of(const gv_hashmap_t *m, int op, size_t have)
{
    switch (op) {
    case OP_INSERT:
    case OP_COMBINE:
        return (have == m->vs) ? (ssize_t)have : -1;
    case OP_ERASE:
    case OP_LOOKUP:
        return (have == 0) ? 0 : -1;
    case OP_VISIT:
        return ((have >= sizeof(gv_fnref_t)) &&
                (have <= sizeof(gv_fnref_t) + GV_HASHMAP_ARGS_MAX))
                   ? (ssize_t)have : -1;
    default:
        return -1;
    }
}

void gv__hashmap_am(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *p = payload;
    hdr_t          h;
    gv_hashmap_t  *m;
    uint64_t       token = 0, hash;
    size_t         off   = sizeof(h);
    uint8_t        key[GV_HASHMAP_KEY_MAX];
    gv_status_t    status;
    struct {
        uint64_t token;
        int32_t  status;
        uint32_t len;
        uint8_t  val[GV_HASHMAP_VAL_MAX];
    } rep;

    if (len < sizeof(h))
        goto bad;
    memcpy(&h, p, sizeof(h));
    m = gv__fw_get(h.map, FW_KIND_HASHMAP);
    if (m == NULL)
        return;
    if (h.flags & FL_REPLY) {
        if (len < off + 8)
            goto bad;
        memcpy(&token, p + off, 8);
        off += 8;
    }
    if ((len < off + m->ks) ||
        (rest_len_of(m, h.op, len - off - m->ks) < 0) ||
        ((h.op == OP_COMBINE) && (m->combine == NULL)))
        goto bad;
    memcpy(key, p + off, m->ks);
    off += m->ks;
    hash = gv__fw_hash(key, m->ks);
    if (home_of(m, hash) != m->rank)
        goto bad;
    if (!(h.flags & FL_REPLY) && queues(m, h.op)) {
        enqueue(m, h.op, key, (h.op == OP_ERASE) ? NULL : p + off, hash,
                h.gce);
        return;
    }
    status = run_op(m, h.op, key, hash, p + off, len - off, rep.val);
    if (h.flags & FL_REPLY) {
        rep.token  = token;
        rep.status = (int32_t)status;
        rep.len    = ((h.op == OP_LOOKUP) && (status == GV_OK))
                         ? (uint32_t)m->vs : 0;
        if (gv_am_send(src, gv__fw_am_reply, &rep, 16 + rep.len) != GV_OK)
            gv_abort(1, "hash map: cannot reply to rank %d", src);
    } else {
        gv__fw_complete(h.gce, 1);
    }
    return;
bad:
    fw_error("malformed hash-map message from rank %d (%zu bytes): dropped",
             src, len);
}

/* ---- issuing operations ----------------------------------------------------- */

/* Issue @a op on @a key: run here if this is its home, else send it.
 * @a f (blocking and lookup forms) gets the answer; else @a gce counts it. */
static gv_status_t issue(gv_hashmap_t *m, int op, const void *key,
                         const void *rest, size_t rest_len,
                         const void *rest2, size_t rest2_len, gv_gce_t *gce,
                         gv_future_t *f)
{
    uint64_t    hash = gv__fw_hash(key, m->ks);
    int         home = home_of(m, hash);
    gv_status_t status;
    uint8_t     msg[sizeof(hdr_t) + 8 + GV_HASHMAP_KEY_MAX +
                    sizeof(gv_fnref_t) + GV_HASHMAP_ARGS_MAX +
                    GV_HASHMAP_VAL_MAX];
    hdr_t       h;
    size_t      off;

    if ((op == OP_COMBINE) && (m->combine == NULL)) {
        fw_error("gv_hashmap_combine: the map was created without a "
                 "combiner (gv_hashmap_opts_t.combine)");
        return GV_ERR_INVALID;
    }
    m->st.ops_sent++;
    if ((home == m->rank) && (f == NULL) && queues(m, op)) {
        gv_gce_enroll((gce == NULL) ? gv_gce_default() : gce, 1);
        enqueue(m, op, key, rest, hash, gv__fw_gce_id(gce));
        return GV_OK;
    }
    if (home == m->rank) {
        uint8_t rest_all[sizeof(gv_fnref_t) + GV_HASHMAP_ARGS_MAX];
        uint8_t out[GV_HASHMAP_VAL_MAX];
        const uint8_t *r = rest;
        if (rest2_len > 0) {
            memcpy(rest_all, rest, rest_len);
            memcpy(rest_all + rest_len, rest2, rest2_len);
            r = rest_all;
        }
        status = run_op(m, op, key, hash, r, rest_len + rest2_len, out);
        if (f != NULL) {
            gv_future_fulfil(f, status, out,
                             ((op == OP_LOOKUP) && (status == GV_OK))
                                 ? m->vs : 0);
            return GV_OK;
        }
        return (status == GV_ERR_NOT_FOUND) ? GV_OK : status;
    }
    h.map   = m->id;
    h.op    = (uint8_t)op;
    h.flags = (f != NULL) ? FL_REPLY : 0;
    h.gce   = gv__fw_gce_id(gce);
    memcpy(msg, &h, sizeof(h));
    off = sizeof(h);
    if (f != NULL) {
        uint64_t token = gv__fw_token_new(f);
        memcpy(msg + off, &token, 8);
        off += 8;
    } else {
        gv_gce_enroll(gce, 1);
    }
    memcpy(msg + off, key, m->ks);
    off += m->ks;
    if (rest_len > 0)
        memcpy(msg + off, rest, rest_len);
    off += rest_len;
    if (rest2_len > 0)
        memcpy(msg + off, rest2, rest2_len);
    off += rest2_len;
    status = gv_am_send(home, gv__fw_am_map, msg, off);
    if (status != GV_OK)
        gv_abort(1, "hash map: cannot send to rank %d: %s", home,
                 gv_status_str(status));
    return GV_OK;
}

/* A blocking operation: issue with a future on this stack, wait. */
static gv_status_t issue_wait(gv_hashmap_t *m, int op, const void *key,
                              const void *rest, size_t rest_len,
                              const void *rest2, size_t rest2_len, void *out)
{
    gv_future_t f;
    gv_status_t status;

    gv_future_init(&f, out, ((op == OP_LOOKUP) && (out != NULL)) ? m->vs : 0);
    status = issue(m, op, key, rest, rest_len, rest2, rest2_len, NULL, &f);
    if (status != GV_OK)
        return status;
    return gv_future_wait(&f, NULL);
}

static gv_status_t visit_ref(gv_hashmap_visit_fn_t fn, size_t len,
                             gv_fnref_t *ref_p)
{
    if ((fn == NULL) || (len > GV_HASHMAP_ARGS_MAX)) {
        fw_error("gv_hashmap_visit: %s", (fn == NULL)
                     ? "NULL function"
                     : "arguments longer than GV_HASHMAP_ARGS_MAX (256)");
        return GV_ERR_INVALID;
    }
    return gv_fn_encode((const void *)fn, ref_p);
}

gv_status_t gv_hashmap_insert_async(gv_hashmap_t *map, const void *key,
                                    const void *val, gv_gce_t *gce)
{
    return issue(map, OP_INSERT, key, val, map->vs, NULL, 0, gce, NULL);
}

gv_status_t gv_hashmap_combine_async(gv_hashmap_t *map, const void *key,
                                     const void *val, gv_gce_t *gce)
{
    return issue(map, OP_COMBINE, key, val, map->vs, NULL, 0, gce, NULL);
}

gv_status_t gv_hashmap_erase_async(gv_hashmap_t *map, const void *key,
                                   gv_gce_t *gce)
{
    return issue(map, OP_ERASE, key, NULL, 0, NULL, 0, gce, NULL);
}

gv_status_t gv_hashmap_visit_async(gv_hashmap_t *map, const void *key,
                                   gv_hashmap_visit_fn_t fn, const void *args,
                                   size_t len, gv_gce_t *gce)
{
    gv_fnref_t  ref;
    gv_status_t status = visit_ref(fn, len, &ref);

    if (status != GV_OK)
        return status;
    return issue(map, OP_VISIT, key, &ref, sizeof(ref), args, len, gce, NULL);
}

gv_status_t gv_hashmap_lookup_async(gv_hashmap_t *map, const void *key,
                                    void *val_buf, gv_future_t *f)
{
    if (f == NULL)
        return GV_ERR_INVALID;
    gv_future_init(f, val_buf, (val_buf != NULL) ? map->vs : 0);
    return issue(map, OP_LOOKUP, key, NULL, 0, NULL, 0, NULL, f);
}

static gv_status_t need_i64(const gv_hashmap_t *m, const char *fn)
{
    if (m->ks != 8) {
        fw_error("%s: the map's keys are %zu bytes, not 8", fn, m->ks);
        return GV_ERR_INVALID;
    }
    return GV_OK;
}

gv_status_t gv_hashmap_insert_i64_async(gv_hashmap_t *map, int64_t key,
                                        const void *val, gv_gce_t *gce)
{
    if (need_i64(map, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return issue(map, OP_INSERT, &key, val, map->vs, NULL, 0, gce, NULL);
}

gv_status_t gv_hashmap_combine_i64_async(gv_hashmap_t *map, int64_t key,
                                         const void *val, gv_gce_t *gce)
{
    if (need_i64(map, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return issue(map, OP_COMBINE, &key, val, map->vs, NULL, 0, gce, NULL);
}

gv_status_t gv_hashmap_erase_i64_async(gv_hashmap_t *map, int64_t key,
                                       gv_gce_t *gce)
{
    if (need_i64(map, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return issue(map, OP_ERASE, &key, NULL, 0, NULL, 0, gce, NULL);
}

gv_status_t gv_hashmap_visit_i64_async(gv_hashmap_t *map, int64_t key,
                                       gv_hashmap_visit_fn_t fn,
                                       const void *args, size_t len,
                                       gv_gce_t *gce)
{
    if (need_i64(map, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_hashmap_visit_async(map, &key, fn, args, len, gce);
}

gv_status_t gv_hashmap_lookup_i64_async(gv_hashmap_t *map, int64_t key,
                                        void *val_buf, gv_future_t *f)
{
    if (need_i64(map, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_hashmap_lookup_async(map, &key, val_buf, f);
}

gv_status_t gv_hashmap_insert(gv_hashmap_t *map, const void *key,
                              const void *val)
{
    return issue_wait(map, OP_INSERT, key, val, map->vs, NULL, 0, NULL);
}

gv_status_t gv_hashmap_combine(gv_hashmap_t *map, const void *key,
                               const void *val)
{
    return issue_wait(map, OP_COMBINE, key, val, map->vs, NULL, 0, NULL);
}

gv_status_t gv_hashmap_erase(gv_hashmap_t *map, const void *key)
{
    return issue_wait(map, OP_ERASE, key, NULL, 0, NULL, 0, NULL);
}

gv_status_t gv_hashmap_lookup(gv_hashmap_t *map, const void *key,
                              void *val_buf)
{
    return issue_wait(map, OP_LOOKUP, key, NULL, 0, NULL, 0, val_buf);
}

gv_status_t gv_hashmap_lookup_i64(gv_hashmap_t *map, int64_t key,
                                  void *val_buf)
{
    if (need_i64(map, __func__) != GV_OK)
        return GV_ERR_INVALID;
    return gv_hashmap_lookup(map, &key, val_buf);
}

gv_status_t gv_hashmap_visit(gv_hashmap_t *map, const void *key,
                             gv_hashmap_visit_fn_t fn, const void *args,
                             size_t len)
{
    gv_fnref_t  ref;
    gv_status_t status = visit_ref(fn, len, &ref);

    if (status != GV_OK)
        return status;
    status = issue_wait(map, OP_VISIT, key, &ref, sizeof(ref), args, len,
                        NULL);
    return status;
}

/* ---- combiners ---------------------------------------------------------------- */

void gv_hashmap_sum_i64(void *value, const void *incoming, size_t val_size)
{
    int64_t a, b;
    memcpy(&a, value, 8);
    memcpy(&b, incoming, 8);
    a += b;
    memcpy(value, &a, 8);
}

void gv_hashmap_min_i64(void *value, const void *incoming, size_t val_size)
{
    int64_t a, b;
    memcpy(&a, value, 8);
    memcpy(&b, incoming, 8);
    if (b < a)
        memcpy(value, &b, 8);
}

void gv_hashmap_max_i64(void *value, const void *incoming, size_t val_size)
{
    int64_t a, b;
    memcpy(&a, value, 8);
    memcpy(&b, incoming, 8);
    if (b > a)
        memcpy(value, &b, 8);
}

void gv_hashmap_sum_f64(void *value, const void *incoming, size_t val_size)
{
    double a, b;
    memcpy(&a, value, 8);
    memcpy(&b, incoming, 8);
    a += b;
    memcpy(value, &a, 8);
}

/* ---- at the home ------------------------------------------------------------- */

int gv_hashmap_home(const gv_hashmap_t *map, const void *key)
{
    return home_of(map, gv__fw_hash(key, map->ks));
}

int gv_hashmap_home_i64(const gv_hashmap_t *map, int64_t key)
{
    return gv_hashmap_home(map, &key);
}

void *gv_hashmap_local_find(gv_hashmap_t *map, const void *key)
{
    uint64_t h = gv__fw_hash(key, map->ks);
    uint8_t *e;
    int      found;

    if (home_of(map, h) != map->rank)
        return NULL;
    drain(map);
    e = probe(map, &map->t, key, tag_of(h), &found);
    return found ? e + map->koff_end : NULL;
}

void *gv_hashmap_local_insert(gv_hashmap_t *map, const void *key,
                              const void *val)
{
    uint64_t h = gv__fw_hash(key, map->ks);
    uint8_t *e;
    int      created;

    if (home_of(map, h) != map->rank)
        return NULL;
    drain(map);
    e = find_or_add(map, key, tag_of(h), &created);
    if (map->vs > 0)
        memcpy(e + map->koff_end, val, map->vs);
    return e + map->koff_end;
}

int64_t gv_hashmap_local_size(gv_hashmap_t *map)
{
    drain(map);
    return (int64_t)map->t.live;
}

/* ---- collective ------------------------------------------------------------ */

gv_status_t gv_hashmap_create(size_t key_size, size_t val_size,
                              const gv_hashmap_opts_t *opts,
                              gv_hashmap_t **map_p)
{
    gv_hashmap_t *m;
    gv_status_t   status;
    uint64_t      cap = 64;

    if ((map_p == NULL) || (key_size == 0) ||
        (key_size > GV_HASHMAP_KEY_MAX) || (val_size > GV_HASHMAP_VAL_MAX)) {
        fw_error("gv_hashmap_create: key size %zu (1..%d) or value size %zu "
                 "(0..%d) out of range", key_size, GV_HASHMAP_KEY_MAX,
                 val_size, GV_HASHMAP_VAL_MAX);
        return GV_ERR_INVALID;
    }
    m = calloc(1, sizeof(*m));
    if (m == NULL)
        return GV_ERR_NO_MEMORY;
    m->ks       = key_size;
    m->vs       = val_size;
    m->koff_end = 8 + round8(key_size);
    m->stride   = m->koff_end + round8(val_size);
    m->nranks   = gv_nranks();
    m->rank     = gv_rank();
    if (opts != NULL) {
        m->combine = opts->combine;
        while ((opts->capacity > 0) &&
               ((int64_t)cap * m->nranks < 2 * opts->capacity))
            cap *= 2;
    }
    m->queued   = (key_size == 8) && (val_size <= 8);
    table_alloc(m, &m->t, cap);
    m->st.capacity = cap;
    status = gv__fw_add(m, FW_KIND_HASHMAP, &m->id);
    if (status == GV_OK) {
        /* The hook that applies queued operations (added once). */
        status = gv_progress_hook_add(progress_hook, NULL);
        if (status != GV_OK)
            gv__fw_remove(m->id);
    }
    if (status != GV_OK) {
        table_free(m, &m->t);
        free(m);
        return status;
    }
    maps_alive++;
    /* No message reaches a rank before it has the map. */
    gv_coll_barrier();
    *map_p = m;
    return GV_OK;
}

void gv_hashmap_destroy(gv_hashmap_t *map)
{
    if (map == NULL)
        return;
    gv_coll_barrier();
    drain(map);
    if (map->listed) {
        gv_hashmap_t **pp = &pending;
        while (*pp != map)
            pp = &(*pp)->next_pending;
        *pp = map->next_pending;
    }
    if (--maps_alive == 0)
        (void)gv_progress_hook_remove(progress_hook, NULL);
    gv__fw_remove(map->id);
    table_free(map, &map->t);
    free(map);
}

#define FORALL_CHUNK 512

typedef struct {
    gv_hashmap_t         *m;
    table_t               t;
    gv_hashmap_entry_fn_t body;
    void                 *arg;
} forall_t;

static void forall_chunk(int64_t c, void *arg)
{
    forall_t *fa = arg;
    uint64_t  i, lo = (uint64_t)c * FORALL_CHUNK,
                 hi = lo + FORALL_CHUNK;

    if (hi > fa->t.cap)
        hi = fa->t.cap;
    for (i = lo; i < hi; i++) {
        uint8_t *e = fa->t.slots + i * fa->m->stride;
        if (*(const uint64_t *)e >= 2)
            fa->body(fa->m, e + 8, e + fa->m->koff_end, fa->arg);
    }
}

gv_status_t gv_hashmap_forall(gv_hashmap_t *map, gv_hashmap_entry_fn_t body,
                              void *arg, gv_gce_t *gce)
{
    forall_t    fa;
    gv_status_t status;

    drain(map);
    fa = (forall_t){map, map->t, body, arg};
    if (body == NULL) {
        fw_error("gv_hashmap_forall: NULL body");
        return GV_ERR_INVALID;
    }
    status = gv_parallel_for(0, (int64_t)((fa.t.cap + FORALL_CHUNK - 1) /
                                          FORALL_CHUNK),
                             1, forall_chunk, &fa);
    if (status != GV_OK)
        return status;
    return (gce != NULL) ? gv_gce_wait(gce) : gv_coll_barrier();
}

gv_status_t gv_hashmap_size(gv_hashmap_t *map, int64_t *n_p)
{
    int64_t     n = gv_hashmap_local_size(map);
    gv_status_t status = gv_allreduce(&n, 1, GV_INT64, GV_SUM);

    if (status == GV_OK)
        *n_p = n;
    return status;
}

void gv_hashmap_stats(const gv_hashmap_t *map, gv_hashmap_stats_t *stats_p)
{
    *stats_p = map->st;
}
