/* The distributed hash join and the triangle query: a global hash table
 * whose parts live at the homes of their keys, built and probed by
 * batches of tuples. SPDX-License-Identifier: BSD-3-Clause
 *
 * A job holds, on every rank, up to two local tables (a multimap from an
 * int64 key to rows, or a set of keys) and one outgoing batch per
 * destination. A batch is one active message: {job id} then records
 * {op, payload}, the payload's size fixed by the op. Handlers may append
 * records themselves (a wedge probes the closing edge), so a phase ends
 * with rounds of flush + gv_barrier() until no handler appended anything.
 */
#include "join/join.h"

#include <stdlib.h>

#define MAX_JOBS 16
#define BATCH    (32 * 1024)
#define PAIR_MAX ((int64_t)1 << 32)

enum { OP_BUILD = 1, OP_PROBE, OP_SETADD, OP_WEDGE, OP_CHECK, OP_DEG,
       OP_ORIENT1, OP_ORIENT2, OP_LAST = OP_ORIENT2 };

/* A local multimap: open addressing over keys; a key's rows are chained
 * (rows_t row i, next[i]). A set keeps no rows (head 0 for present). */
typedef struct {
    int64_t *keys, *head; /* head -1: empty slot */
    uint64_t cap, n;
    rows_t   rows;
    int64_t *next;
    int64_t  next_cap;
    int64_t *cnt;         /* once compacted: a key's rows are rows
                             head[s] .. head[s] + cnt[s] - 1 */
} mmap_t;

typedef struct {
    uint16_t id;
    int      P, me, rw, sw, rcol, scol, emit;
    mmap_t   t1, t2, deg; /* deg: a counter per key (in head) */
    rows_t   out;        /* emitted join tuples */
    int64_t  matches, wedges, pushed_in_handlers;
    uint8_t **buf;
    size_t   *len;
} job_t;

static job_t     *jobs[MAX_JOBS];
static gv_am_id_t am_id;
static int        registered, in_handler;

/* ---- local tables -------------------------------------------------------- */

static inline uint64_t key_hash(int64_t k)
{
    return join_mix64((uint64_t)k ^ 0x2545f4914f6cdd1dull);
}

static inline int home_of(const job_t *j, int64_t k)
{
    return (int)(((key_hash(k) >> 32) * (uint64_t)j->P) >> 32);
}

static void mm_init(mmap_t *m, int width)
{
    memset(m, 0, sizeof(*m));
    m->cap  = 1024;
    m->keys = malloc(sizeof(int64_t) * m->cap);
    m->head = malloc(sizeof(int64_t) * m->cap);
    if ((m->keys == NULL) || (m->head == NULL))
        gv_abort(1, "join: out of local memory for a hash table");
    memset(m->head, 0xff, sizeof(int64_t) * m->cap);
    m->rows.width = width;
}

static void mm_free(mmap_t *m)
{
    free(m->keys);
    free(m->head);
    free(m->rows.v);
    free(m->next);
    free(m->cnt);
    memset(m, 0, sizeof(*m));
}

/* Slot of @a k: present (head >= 0) or where it would go. */
static inline uint64_t mm_slot(const mmap_t *m, int64_t k)
{
    uint64_t i = key_hash(k) & (m->cap - 1);

    while ((m->head[i] >= 0) && (m->keys[i] != k))
        i = (i + 1) & (m->cap - 1);
    return i;
}

static void mm_grow(mmap_t *m)
{
    mmap_t   old = *m;
    uint64_t i, s;

    m->cap *= 2;
    m->keys = malloc(sizeof(int64_t) * m->cap);
    m->head = malloc(sizeof(int64_t) * m->cap);
    if ((m->keys == NULL) || (m->head == NULL))
        gv_abort(1, "join: out of local memory for a hash table of %llu "
                 "slots", (unsigned long long)m->cap);
    memset(m->head, 0xff, sizeof(int64_t) * m->cap);
    for (i = 0; i < old.cap; i++) {
        if (old.head[i] < 0)
            continue;
        s          = mm_slot(m, old.keys[i]);
        m->keys[s] = old.keys[i];
        m->head[s] = old.head[i];
    }
    free(old.keys);
    free(old.head);
}

/* Add a row under @a k (a set: add @a k once). */
static void mm_add(mmap_t *m, int64_t k, const int64_t *row)
{
    uint64_t s = mm_slot(m, k);
    int64_t  r;

    if (m->rows.width == 0) {
        if (m->head[s] >= 0)
            return;
        m->keys[s] = k;
        m->head[s] = 0;
    } else {
        r = m->rows.n;
        rows_push(&m->rows, row);
        if (m->next_cap < m->rows.cap) {
            m->next_cap = m->rows.cap;
            m->next = realloc(m->next, sizeof(int64_t) * (size_t)m->next_cap);
            if (m->next == NULL)
                gv_abort(1, "join: out of local memory for rows");
        }
        if (m->head[s] < 0) {
            m->keys[s] = k;
            m->next[r] = -1;
        } else {
            m->next[r] = m->head[s];
        }
        m->head[s] = r;
        if (m->next[r] >= 0)
            return;
    }
    if (++m->n * 10 > m->cap * 7)
        mm_grow(m);
}

/* Lay each key's rows side by side (its chain in order), so that probes
 * read them from consecutive memory. No adds afterwards. */
static void mm_compact(mmap_t *m)
{
    int64_t *nv, pos = 0, r;
    uint64_t s;

    m->cnt = calloc(m->cap, sizeof(int64_t));
    nv     = malloc(sizeof(int64_t) * (size_t)(m->rows.n + 1) *
                    (size_t)m->rows.width);
    if ((m->cnt == NULL) || (nv == NULL))
        gv_abort(1, "join: out of local memory for %lld rows",
                 (long long)m->rows.n);
    for (s = 0; s < m->cap; s++) {
        int64_t start = pos;
        if (m->head[s] < 0)
            continue;
        for (r = m->head[s]; r >= 0; r = m->next[r], pos++)
            memcpy(nv + pos * m->rows.width, m->rows.v + r * m->rows.width,
                   sizeof(int64_t) * (size_t)m->rows.width);
        m->head[s] = start;
        m->cnt[s]  = pos - start;
    }
    free(m->rows.v);
    free(m->next);
    m->next     = NULL;
    m->next_cap = 0;
    m->rows.v   = nv;
    m->rows.cap = m->rows.n;
}

/* Count one more of @a k (a counter set: the count is in head). */
static void mm_count(mmap_t *m, int64_t k)
{
    uint64_t s = mm_slot(m, k);

    if (m->head[s] >= 0) {
        m->head[s]++;
        return;
    }
    m->keys[s] = k;
    m->head[s] = 1;
    if (++m->n * 10 > m->cap * 7)
        mm_grow(m);
}

/* The pair {a, b} as one key, the smaller id in the high half. */
static inline int64_t pair_key(int64_t a, int64_t b)
{
    return (a < b) ? (a << 32) | b : (b << 32) | a;
}

/* ---- batches ------------------------------------------------------------- */

static size_t payload_of(const job_t *j, int op)
{
    switch (op) {
    case OP_BUILD:  return 8 * (size_t)j->rw;
    case OP_PROBE:  return 8 * (size_t)j->sw;
    case OP_WEDGE:
    case OP_ORIENT1: return 16;
    case OP_ORIENT2: return 24;
    default:        return 8; /* SETADD, CHECK, DEG */
    }
}

static void flush_to(job_t *j, int dst)
{
    uint8_t    *p = j->buf[dst];
    size_t      n = j->len[dst];
    gv_status_t status;

    if (n <= 2)
        return;
    j->buf[dst] = malloc(BATCH);
    if (j->buf[dst] == NULL)
        gv_abort(1, "join: out of local memory for a batch");
    memcpy(j->buf[dst], &j->id, 2);
    j->len[dst] = 2;
    status = gv_am_send(dst, am_id, p, n);
    free(p);
    if (status != GV_OK)
        gv_abort(1, "join: cannot send tuples to rank %d: %s", dst,
                 gv_status_str(status));
}

static void run_op(job_t *j, int op, const uint8_t *pl);

/* Send a record to rank @a dst, or run it here if that is this rank. */
static void push(job_t *j, int dst, int op, const void *payload)
{
    size_t n = payload_of(j, op);

    if (in_handler)
        j->pushed_in_handlers++;
    if (dst == j->me) {
        run_op(j, op, payload);
        return;
    }
    /* Sending may run handlers that append to this batch too. */
    while (j->len[dst] + 1 + n > BATCH)
        flush_to(j, dst);
    j->buf[dst][j->len[dst]] = (uint8_t)op;
    memcpy(j->buf[dst] + j->len[dst] + 1, payload, n);
    j->len[dst] += 1 + n;
}

/* ---- operations at the home ---------------------------------------------- */

static void run_op(job_t *j, int op, const uint8_t *pl)
{
    int64_t  row[2 * GV_REL_COLS_MAX], k, r;
    uint64_t s;

    switch (op) {
    case OP_BUILD:
        memcpy(row, pl, 8 * (size_t)j->rw);
        mm_add(&j->t1, row[j->rcol], row);
        break;
    case OP_PROBE:
        memcpy(row + j->rw, pl, 8 * (size_t)j->sw);
        k = row[j->rw + j->scol];
        s = mm_slot(&j->t1, k);
        if (j->t1.head[s] < 0)
            break;
        j->matches += j->t1.cnt[s];
        if (j->emit)
            for (r = j->t1.head[s]; r < j->t1.head[s] + j->t1.cnt[s]; r++) {
                memcpy(row, j->t1.rows.v + r * j->rw, 8 * (size_t)j->rw);
                rows_push(&j->out, row);
            }
        break;
    case OP_SETADD:
        memcpy(&k, pl, 8);
        mm_add(&j->t2, k, NULL);
        break;
    case OP_WEDGE: /* (a, b): every c with (b, c) closes a wedge */
        memcpy(row, pl, 16);
        s = mm_slot(&j->t1, row[1]);
        if (j->t1.head[s] < 0)
            break;
        j->wedges += j->t1.cnt[s];
        for (r = j->t1.head[s]; r < j->t1.head[s] + j->t1.cnt[s]; r++) {
            k = pair_key(row[0], j->t1.rows.v[2 * r + 1]);
            push(j, home_of(j, k), OP_CHECK, &k);
        }
        break;
    case OP_DEG:
        memcpy(&k, pl, 8);
        mm_count(&j->deg, k);
        break;
    case OP_ORIENT1: /* (a, b) at a's home: add a's degree, on to b's */
        memcpy(row, pl, 16);
        row[2] = j->deg.head[mm_slot(&j->deg, row[0])];
        push(j, home_of(j, row[1]), OP_ORIENT2, row);
        break;
    case OP_ORIENT2: { /* (a, b, deg a) at b's home: from lower degree */
        int64_t db, e2[2];
        memcpy(row, pl, 24);
        db = j->deg.head[mm_slot(&j->deg, row[1])];
        if ((row[2] < db) || ((row[2] == db) && (row[0] < row[1]))) {
            e2[0] = row[0];
            e2[1] = row[1];
        } else {
            e2[0] = row[1];
            e2[1] = row[0];
        }
        push(j, home_of(j, e2[0]), OP_BUILD, e2);
        break;
    }
    case OP_CHECK:
        memcpy(&k, pl, 8);
        if (j->t2.head[mm_slot(&j->t2, k)] >= 0)
            j->matches++;
        break;
    default:
        break;
    }
}

static void join_am(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *p = payload, *end = p + len;
    uint16_t       id;
    job_t         *j;

    (void)arg;
    if (len < 2)
        goto bad;
    memcpy(&id, p, 2);
    j = (id < MAX_JOBS) ? jobs[id] : NULL;
    if (j == NULL)
        goto bad;
    in_handler++;
    for (p += 2; p < end;) {
        int    op = *p;
        size_t n;
        if ((op < OP_BUILD) || (op > OP_LAST) ||
            ((size_t)(end - p) < 1 + (n = payload_of(j, op)))) {
            in_handler--;
            goto bad;
        }
        run_op(j, op, p + 1);
        p += 1 + n;
    }
    in_handler--;
    return;
bad:
    join_error("malformed join batch from rank %d (%zu bytes): dropped", src,
               len);
}

/* Collective: flush and wait for quiescence until no handler appended. */
static void settle(job_t *j)
{
    int64_t more;
    int     r;

    do {
        for (r = 0; r < j->P; r++)
            flush_to(j, r);
        gv_barrier();
        more = j->pushed_in_handlers;
        j->pushed_in_handlers = 0;
        gv_allreduce(&more, 1, GV_INT64, GV_SUM);
    } while (more > 0);
}

/* Collective: a job whose first table keeps rows of @a rw columns (the
 * second is a set). Ready before any rank can send to it. */
static gv_status_t job_new(int rw, int sw, int rcol, int scol, int emit,
                          job_t **j_p)
{
    job_t *j;
    int    id, r;

    for (id = 0; (id < MAX_JOBS) && (jobs[id] != NULL); id++)
        ;
    if (id == MAX_JOBS) {
        join_error("%d joins running at once", MAX_JOBS);
        return GV_ERR_NO_RESOURCE;
    }
    if (!registered) {
        if (gv_am_register(join_am, NULL, &am_id) != GV_OK)
            return GV_ERR_NO_RESOURCE;
        registered = 1;
        gv_barrier();
    }
    j = calloc(1, sizeof(*j));
    if (j == NULL)
        gv_abort(1, "join: out of local memory");
    j->id = (uint16_t)id;
    j->P  = gv_nranks();
    j->me = gv_rank();
    j->rw = rw;
    j->sw = sw;
    j->rcol = rcol;
    j->scol = scol;
    j->emit = emit;
    j->buf = calloc((size_t)j->P, sizeof(uint8_t *));
    j->len = calloc((size_t)j->P, sizeof(size_t));
    if ((j->buf == NULL) || (j->len == NULL))
        gv_abort(1, "join: out of local memory");
    for (r = 0; r < j->P; r++) {
        j->buf[r] = malloc(BATCH);
        if (j->buf[r] == NULL)
            gv_abort(1, "join: out of local memory");
        memcpy(j->buf[r], &j->id, 2);
        j->len[r] = 2;
    }
    mm_init(&j->t1, rw);
    mm_init(&j->t2, 0);
    mm_init(&j->deg, 0);
    j->out.width = rw + sw;
    jobs[id] = j;
    gv_coll_barrier(); /* every rank knows the job before tuples come */
    *j_p = j;
    return GV_OK;
}

static void job_free(job_t *j)
{
    int r;

    gv_coll_barrier();
    jobs[j->id] = NULL;
    for (r = 0; r < j->P; r++)
        free(j->buf[r]);
    free(j->buf);
    free(j->len);
    mm_free(&j->t1);
    mm_free(&j->t2);
    mm_free(&j->deg);
    free(j->out.v);
    free(j);
}

/* ---- the join ------------------------------------------------------------ */

gv_status_t gv_rel_join(const gv_rel_t *r, int rcol, const gv_rel_t *s,
                        int scol, gv_rel_t **out_p, int64_t *count_p,
                        gv_join_stats_t *st_p)
{
    job_t          *j;
    int64_t         n, i, *v;
    gv_join_stats_t st = {0};
    gv_status_t     status;
    double          t;

    if ((rcol < 0) || (rcol >= r->ncols) || (scol < 0) ||
        (scol >= s->ncols) || (r->ncols + s->ncols > GV_REL_COLS_MAX)) {
        if (gv_rank() == 0)
            join_error("join on column %d of %d = column %d of %d (at most "
                       "%d columns in the result)", rcol, r->ncols, scol,
                       s->ncols, GV_REL_COLS_MAX);
        return GV_ERR_INVALID;
    }
    status = job_new(r->ncols, s->ncols, rcol, scol, out_p != NULL, &j);
    if (status != GV_OK)
        return status;

    t = gv_wtime();
    v = gv_rel_local(r, &n);
    for (i = 0; i < n; i++) {
        push(j, home_of(j, v[i * r->ncols + rcol]), OP_BUILD, v + i * r->ncols);
        if ((i & 65535) == 65535)
            gv_yield();
    }
    settle(j);
    mm_compact(&j->t1);
    gv_coll_barrier(); /* no probe reaches a table not yet compacted */
    st.built   = n;
    st.build_s = gv_wtime() - t;

    t = gv_wtime();
    v = gv_rel_local(s, &n);
    for (i = 0; i < n; i++) {
        push(j, home_of(j, v[i * s->ncols + scol]), OP_PROBE, v + i * s->ncols);
        if ((i & 65535) == 65535)
            gv_yield();
    }
    settle(j);
    st.probed  = n;
    st.probe_s = gv_wtime() - t;

    n = j->matches;
    gv_allreduce(&n, 1, GV_INT64, GV_SUM);
    if (count_p != NULL)
        *count_p = n;
    if (out_p != NULL)
        status = gv_rel_from_local(j->out.width, j->out.v, j->out.n, out_p);
    if (st_p != NULL)
        *st_p = st;
    job_free(j);
    return status;
}

/* ---- triangles ------------------------------------------------------------- */

gv_status_t gv_rel_triangles(const gv_rel_t *e, int64_t *count_p,
                             int64_t *wedges_p)
{
    job_t      *j;
    int64_t     n, i, *v, bad = 0, k, row[3], w[2];
    uint64_t    s;
    gv_status_t status;

    if (e->ncols != 2) {
        if (gv_rank() == 0)
            join_error("triangles: the edge relation has %d columns, not 2",
                       e->ncols);
        return GV_ERR_INVALID;
    }
    v = gv_rel_local(e, &n);
    for (i = 0; i < n; i++)
        if ((v[2 * i] < 0) || (v[2 * i] >= PAIR_MAX) || (v[2 * i + 1] < 0) ||
            (v[2 * i + 1] >= PAIR_MAX)) {
            join_error("triangles: edge %lld has a vertex id outside "
                       "0..2^32-1 (%lld, %lld)",
                       (long long)(gv_array_local_lo(e->arr) + i),
                       (long long)v[2 * i], (long long)v[2 * i + 1]);
            bad = 1;
            break;
        }
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    if (bad)
        return GV_ERR_INVALID;
    status = job_new(2, 2, 0, 0, 0, &j);
    if (status != GV_OK)
        return status;
    /* E as a set of (a, b), a < b: self-loops and duplicates go. */
    for (i = 0; i < n; i++) {
        int64_t a = v[2 * i], b = v[2 * i + 1];
        if (a == b)
            continue;
        k = pair_key(a, b);
        push(j, home_of(j, k), OP_SETADD, &k);
    }
    settle(j);
    /* Degrees at the vertices' homes; then each edge, oriented from the
     * endpoint of lower (degree, id) to the other (few wedges at hubs),
     * goes into the multimap u -> v at u's home. */
    for (s = 0; s < j->t2.cap; s++) {
        if (j->t2.head[s] < 0)
            continue;
        row[0] = (int64_t)((uint64_t)j->t2.keys[s] >> 32);
        row[1] = j->t2.keys[s] & (PAIR_MAX - 1);
        push(j, home_of(j, row[0]), OP_DEG, &row[0]);
        push(j, home_of(j, row[1]), OP_DEG, &row[1]);
    }
    settle(j);
    for (s = 0; s < j->t2.cap; s++) {
        if (j->t2.head[s] < 0)
            continue;
        row[0] = (int64_t)((uint64_t)j->t2.keys[s] >> 32);
        row[1] = j->t2.keys[s] & (PAIR_MAX - 1);
        push(j, home_of(j, row[0]), OP_ORIENT1, row);
        if ((s & 65535) == 65535)
            gv_yield();
    }
    settle(j);
    mm_compact(&j->t1);
    gv_coll_barrier(); /* no wedge reaches a table not yet compacted */
    /* Each edge (u, v) meets the edges (v, w) at v's home; each wedge
     * (u, v, w) looks the pair {u, w} up in the set at its home. */
    for (i = 0; i < j->t1.rows.n; i++) {
        push(j, home_of(j, j->t1.rows.v[2 * i + 1]), OP_WEDGE,
             j->t1.rows.v + 2 * i);
        if ((i & 65535) == 65535)
            gv_yield();
    }
    settle(j);
    w[0] = j->matches;
    w[1] = j->wedges;
    gv_allreduce(w, 2, GV_INT64, GV_SUM);
    *count_p = w[0];
    if (wedges_p != NULL)
        *wedges_p = w[1];
    job_free(j);
    return GV_OK;
}
