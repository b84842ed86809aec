/* The distributed hash join and the triangle query: a global hash table
 * whose parts live at the homes of their keys, built and probed by
 * batches of tuples. SPDX-License-Identifier: BSD-3-Clause
 *
 * A job holds, on every rank, a multimap from an int64 key to rows, a set
 * of keys and a counter per key, and one outgoing batch per destination
 * (this rank's own too: its records run here when it is flushed). A
 * batch is {job id} then records {op, payload}, the payload's size fixed
 * by the op; another rank's batch is one active message. Handlers may
 * append records themselves (an edge's orientation goes on to the other
 * endpoint: one record for one), so a phase ends with rounds of flush +
 * gv_barrier() until no handler appended. A record that fans out (an
 * edge meeting the edges of its head, each a wedge to check) is only kept
 * by its handler and expanded afterwards by the worker, so that what it
 * sends is flow-controlled like any other send from a worker.
 *
 * The multimap is built in two steps: the build tuples are appended to a
 * flat array as they arrive (no table yet), then mt_finish() makes, in
 * one pass with prefetching, an open-addressing table of the distinct
 * keys (key and count side by side) sized for them, and lays each key's
 * rows side by side. A count-only join ships and keeps only the keys and
 * its table only the counts. A batch's records are run with the table
 * slot of a record a few ahead prefetched.
 */
#include "join/join.h"

#include <stdlib.h>

#define MAX_JOBS 16
#define BATCH    (32 * 1024)
#define PAIR_MAX ((int64_t)1 << 32)
#define AHEAD    16 /* records prefetched ahead of the one being run */

enum { OP_BUILD = 1, OP_PROBE, OP_SETADD, OP_WEDGE, OP_CHECK, OP_DEG,
       OP_ORIENT1, OP_ORIENT2, OP_LAST = OP_ORIENT2 };

/* A set of keys, or a counter per key: open addressing, head -1 empty
 * (a set: 0 for present; a counter: the count). */
typedef struct {
    int64_t *keys, *head;
    uint64_t cap, n;
} kset_t;

/* A slot of the multimap: a key and its number of rows (0: empty). */
typedef struct {
    int64_t key, cnt;
} slot_t;

/* The multimap: rows appended while building, then (mt_finish) a table
 * of cap slots; a key's rows are rows start[s] .. start[s] + cnt - 1
 * (start NULL and no rows when only counts are kept). */
typedef struct {
    rows_t   rows;
    int      kcol;   /* the key's column in a row */
    slot_t  *slot;
    int64_t *start;
    uint64_t cap;
} mtab_t;

typedef struct {
    uint16_t id;
    int      P, me, rw, sw, rcol, scol, keep, emit;
    int      bw, pw;   /* columns a build / probe record carries */
    mtab_t   t1;
    kset_t   t2, deg;
    rows_t   out;      /* emitted join tuples */
    rows_t   pend;     /* wedges to expand: (a, slot of b in t1) */
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

static void ks_init(kset_t *m)
{
    memset(m, 0, sizeof(*m));
    m->cap  = 1024;
    m->keys = malloc(sizeof(int64_t) * m->cap);
    m->head = malloc(sizeof(int64_t) * m->cap);
    if ((m->keys == NULL) || (m->head == NULL))
        gv_abort(1, "join: out of local memory for a hash table");
    memset(m->head, 0xff, sizeof(int64_t) * m->cap);
}

static void ks_free(kset_t *m)
{
    free(m->keys);
    free(m->head);
    memset(m, 0, sizeof(*m));
}

/* Slot of @a k: present (head >= 0) or where it would go. */
static inline uint64_t ks_slot(const kset_t *m, int64_t k)
{
    uint64_t i = key_hash(k) & (m->cap - 1);

    while ((m->head[i] >= 0) && (m->keys[i] != k))
        i = (i + 1) & (m->cap - 1);
    return i;
}

static inline void ks_prefetch(const kset_t *m, int64_t k)
{
    uint64_t i = key_hash(k) & (m->cap - 1);

    __builtin_prefetch(m->keys + i);
    __builtin_prefetch(m->head + i);
}

static void ks_grow(kset_t *m)
{
    kset_t   old = *m;
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
        s          = ks_slot(m, old.keys[i]);
        m->keys[s] = old.keys[i];
        m->head[s] = old.head[i];
    }
    free(old.keys);
    free(old.head);
}

/* Add @a k to the set (once), or count one more of it (@a count). */
static void ks_add(kset_t *m, int64_t k, int count)
{
    uint64_t s = ks_slot(m, k);

    if (m->head[s] >= 0) {
        m->head[s] += count;
        return;
    }
    m->keys[s] = k;
    m->head[s] = count;
    if (++m->n * 10 > m->cap * 7)
        ks_grow(m);
}

static void mt_free(mtab_t *m)
{
    free(m->rows.v);
    free(m->slot);
    free(m->start);
    memset(m, 0, sizeof(*m));
}

static inline uint64_t mt_slot(const mtab_t *m, int64_t k)
{
    uint64_t i = key_hash(k) & (m->cap - 1);

    while ((m->slot[i].cnt != 0) && (m->slot[i].key != k))
        i = (i + 1) & (m->cap - 1);
    return i;
}

static inline void mt_prefetch(const mtab_t *m, int64_t k)
{
    __builtin_prefetch(m->slot + (key_hash(k) & (m->cap - 1)));
}

/* Make the table of the appended rows (once, after they all came): one
 * pass counts each key in a table of a power of two slots, at most 70%
 * of them used even if every row's key is distinct, the slot of the row
 * AHEAD further prefetched; then, keeping rows
 * (@a keep), each key gets its place and its rows are laid there. */
static void mt_finish(mtab_t *m, int keep)
{
    int64_t   n = m->rows.n, w = m->rows.width, i, pos = 0, *nv = NULL;
    int64_t  *v = m->rows.v;
    uint32_t *at = NULL;
    uint64_t  s, mask;

    m->cap = 16;
    while (m->cap * 7 < 10 * (uint64_t)n)
        m->cap *= 2;
    if (keep && (m->cap > ((uint64_t)1 << 32)))
        gv_abort(1, "join: %lld build tuples at one rank (at most 2^31: "
                 "use more ranks)", (long long)n);
    mask    = m->cap - 1;
    m->slot = calloc(m->cap, sizeof(slot_t));
    if (keep) {
        at       = malloc(sizeof(uint32_t) * (size_t)(n + 1));
        m->start = malloc(sizeof(int64_t) * m->cap);
        nv       = malloc(sizeof(int64_t) * (size_t)(n + 1) * (size_t)w);
    }
    if ((m->slot == NULL) ||
        (keep && ((at == NULL) || (m->start == NULL) || (nv == NULL))))
        gv_abort(1, "join: out of local memory for a table of %lld rows",
                 (long long)n);
    for (i = 0; i < n; i++) {
        int64_t k = v[i * w + m->kcol];
        if (i + AHEAD < n)
            mt_prefetch(m, v[(i + AHEAD) * w + m->kcol]);
        s = key_hash(k) & mask;
        while ((m->slot[s].cnt != 0) && (m->slot[s].key != k))
            s = (s + 1) & mask;
        m->slot[s].key = k;
        m->slot[s].cnt++;
        if (keep)
            at[i] = (uint32_t)s;
    }
    if (keep) {
        for (s = 0; s < m->cap; s++) {
            m->start[s] = pos;
            pos += m->slot[s].cnt;
        }
        for (i = 0; i < n; i++) {
            if (i + AHEAD < n)
                __builtin_prefetch(nv + m->start[at[i + AHEAD]] * w, 1);
            memcpy(nv + m->start[at[i]]++ * w, v + i * w,
                   sizeof(int64_t) * (size_t)w);
        }
        for (s = 0; s < m->cap; s++)
            m->start[s] -= m->slot[s].cnt;
        free(at);
        m->rows.cap = n;
    } else {
        m->rows.n = m->rows.cap = 0;
    }
    free(v);
    m->rows.v = nv;
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
    case OP_BUILD:  return 8 * (size_t)j->bw;
    case OP_PROBE:  return 8 * (size_t)j->pw;
    case OP_WEDGE:
    case OP_ORIENT1: return 16;
    case OP_ORIENT2: return 24;
    default:        return 8; /* SETADD, CHECK, DEG */
    }
}

static int run_batch(job_t *j, const uint8_t *p, const uint8_t *end);

static void flush_to(job_t *j, int dst)
{
    uint8_t    *p = j->buf[dst];
    size_t      n = j->len[dst];
    gv_status_t status = GV_OK;

    if (n <= 2)
        return;
    j->buf[dst] = malloc(BATCH);
    if (j->buf[dst] == NULL)
        gv_abort(1, "join: out of local memory for a batch");
    memcpy(j->buf[dst], &j->id, 2);
    j->len[dst] = 2;
    if (dst == j->me) {
        in_handler++;
        (void)run_batch(j, p + 2, p + n);
        in_handler--;
    } else {
        status = gv_am_send(dst, am_id, p, n);
    }
    free(p);
    if (status != GV_OK)
        gv_abort(1, "join: cannot send tuples to rank %d: %s", dst,
                 gv_status_str(status));
}

/* Append a record for rank @a dst (this rank too) to its batch. */
static void push(job_t *j, int dst, int op, const void *payload)
{
    size_t n = payload_of(j, op);

    if (in_handler)
        j->pushed_in_handlers++;
    /* Sending may run handlers that append to this batch too. */
    while (j->len[dst] + 1 + n > BATCH)
        flush_to(j, dst);
    j->buf[dst][j->len[dst]] = (uint8_t)op;
    memcpy(j->buf[dst] + j->len[dst] + 1, payload, n);
    j->len[dst] += 1 + n;
}

/* ---- operations at the home ---------------------------------------------- */

/* Prefetch the table slot the record @a op, @a pl will read. */
static inline void prefetch_op(const job_t *j, int op, const uint8_t *pl)
{
    int64_t k;

    switch (op) {
    case OP_PROBE:
        memcpy(&k, pl + 8 * (j->emit ? j->scol : 0), 8);
        mt_prefetch(&j->t1, k);
        break;
    case OP_WEDGE:
        memcpy(&k, pl + 8, 8);
        mt_prefetch(&j->t1, k);
        break;
    case OP_CHECK:
        memcpy(&k, pl, 8);
        ks_prefetch(&j->t2, k);
        break;
    default:
        break;
    }
}

static void run_op(job_t *j, int op, const uint8_t *pl)
{
    int64_t  row[2 * GV_REL_COLS_MAX], k, r, end;
    uint64_t s;

    switch (op) {
    case OP_BUILD:
        memcpy(row, pl, 8 * (size_t)j->bw);
        rows_push(&j->t1.rows, row);
        break;
    case OP_PROBE:
        memcpy(row + j->rw, pl, 8 * (size_t)j->pw);
        k = row[j->rw + (j->emit ? j->scol : 0)];
        s = mt_slot(&j->t1, k);
        if (j->t1.slot[s].cnt == 0)
            break;
        j->matches += j->t1.slot[s].cnt;
        if (j->emit)
            for (r = j->t1.start[s], end = r + j->t1.slot[s].cnt; r < end;
                 r++) {
                memcpy(row, j->t1.rows.v + r * j->rw, 8 * (size_t)j->rw);
                rows_push(&j->out, row);
            }
        break;
    case OP_SETADD:
        memcpy(&k, pl, 8);
        ks_add(&j->t2, k, 0);
        break;
    case OP_WEDGE: /* (a, b): every c with (b, c) closes a wedge, later */
        memcpy(row, pl, 16);
        s = mt_slot(&j->t1, row[1]);
        if (j->t1.slot[s].cnt == 0)
            break;
        j->wedges += j->t1.slot[s].cnt;
        row[1] = (int64_t)s;
        rows_push(&j->pend, row);
        break;
    case OP_DEG:
        memcpy(&k, pl, 8);
        ks_add(&j->deg, k, 1);
        break;
    case OP_ORIENT1: /* (a, b) at a's home: add a's degree, on to b's */
        memcpy(row, pl, 16);
        row[2] = j->deg.head[ks_slot(&j->deg, row[0])];
        push(j, home_of(j, row[1]), OP_ORIENT2, row);
        break;
    case OP_ORIENT2: { /* (a, b, deg a) at b's home: from lower degree */
        int64_t db, e2[2];
        memcpy(row, pl, 24);
        db = j->deg.head[ks_slot(&j->deg, row[1])];
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
        if (j->t2.head[ks_slot(&j->t2, k)] >= 0)
            j->matches++;
        break;
    default:
        break;
    }
}

/* Run the records p .. end, the slot of the one AHEAD further (if it has
 * the same size) prefetched. -1 if a record is malformed. */
static int run_batch(job_t *j, const uint8_t *p, const uint8_t *end)
{
    while (p < end) {
        int            op = *p;
        size_t         n;
        const uint8_t *q;

        if ((op < OP_BUILD) || (op > OP_LAST) ||
            ((size_t)(end - p) < 1 + (n = payload_of(j, op))))
            return -1;
        q = p + AHEAD * (1 + n);
        if ((q < end) && ((size_t)(end - q) >= 1 + n) && (*q == op))
            prefetch_op(j, op, q + 1);
        run_op(j, op, p + 1);
        p += 1 + n;
    }
    return 0;
}

static void join_am(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *p = payload;
    uint16_t       id;
    job_t         *j;
    int            rc;

    (void)arg;
    if (len < 2)
        goto bad;
    memcpy(&id, p, 2);
    j = (id < MAX_JOBS) ? jobs[id] : NULL;
    if (j == NULL)
        goto bad;
    in_handler++;
    rc = run_batch(j, p + 2, p + len);
    in_handler--;
    if (rc == 0)
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
        flush_to(j, j->me);
        for (r = 0; r < j->P; r++)
            flush_to(j, r);
        gv_barrier();
        more = j->pushed_in_handlers;
        j->pushed_in_handlers = 0;
        gv_allreduce(&more, 1, GV_INT64, GV_SUM);
    } while (more > 0);
}

/* Collective: a job whose multimap keeps rows of @a rw columns keyed on
 * column @a rcol (@a keep; else only the keys' counts), probed by rows of
 * @a sw columns keyed on @a scol (emitting the joined rows: @a emit). */
static gv_status_t job_new(int rw, int sw, int rcol, int scol, int keep,
                           int emit, job_t **j_p)
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
    j->keep = keep;
    j->emit = emit;
    j->bw   = keep ? rw : 1;
    j->pw   = emit ? sw : 1;
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
    j->t1.rows.width = j->bw;
    j->t1.kcol       = keep ? rcol : 0;
    ks_init(&j->t2);
    ks_init(&j->deg);
    j->out.width  = rw + sw;
    j->pend.width = 2;
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
    mt_free(&j->t1);
    ks_free(&j->t2);
    ks_free(&j->deg);
    free(j->out.v);
    free(j->pend.v);
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
    status = job_new(r->ncols, s->ncols, rcol, scol, out_p != NULL,
                     out_p != NULL, &j);
    if (status != GV_OK)
        return status;

    t = gv_wtime();
    v = gv_rel_local(r, &n);
    for (i = 0; i < n; i++) {
        push(j, home_of(j, v[i * r->ncols + rcol]), OP_BUILD,
             v + i * r->ncols + (j->keep ? 0 : rcol));
        if ((i & 65535) == 65535)
            gv_yield();
    }
    settle(j);
    mt_finish(&j->t1, j->keep);
    gv_coll_barrier(); /* no probe reaches a table not yet made */
    st.built   = n;
    st.build_s = gv_wtime() - t;

    t = gv_wtime();
    v = gv_rel_local(s, &n);
    for (i = 0; i < n; i++) {
        push(j, home_of(j, v[i * s->ncols + scol]), OP_PROBE,
             v + i * s->ncols + (j->emit ? 0 : scol));
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
    status = job_new(2, 2, 0, 0, 1, 0, &j);
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
    mt_finish(&j->t1, 1);
    gv_coll_barrier(); /* no wedge reaches a table not yet made */
    /* Each edge (u, v) meets the edges (v, w) at v's home; each wedge
     * (u, v, w) looks the pair {u, w} up in the set at its home. */
    for (i = 0; i < j->t1.rows.n; i++) {
        push(j, home_of(j, j->t1.rows.v[2 * i + 1]), OP_WEDGE,
             j->t1.rows.v + 2 * i);
        if ((i & 65535) == 65535)
            gv_yield();
    }
    settle(j);
    for (i = 0, n = 0; i < j->pend.n; i++) {
        int64_t sb = j->pend.v[2 * i + 1], r = j->t1.start[sb];
        int64_t end = r + j->t1.slot[sb].cnt;

        for (; r < end; r++) {
            k = pair_key(j->pend.v[2 * i], j->t1.rows.v[2 * r + 1]);
            push(j, home_of(j, k), OP_CHECK, &k);
            if ((++n & 65535) == 0)
                gv_yield();
        }
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
