/* The MapReduce engine: local tables, emit, the shuffle to the homes,
 * parallel input (arrays, files by byte ranges, generated pieces) and the
 * result. SPDX-License-Identifier: BSD-3-Clause
 *
 * Each rank keeps two tables of the same kind: the combiner's (pairs
 * emitted here, folded before they travel; used only with local_combine)
 * and the home's (the reduced result of the keys homed here), each open
 * addressing with linear probing over entries held in the slots.
 *
 * Pairs travel in batches of up to BATCH bytes per destination, one active
 * message each: {job id} then records {u16 key length, key, value}; the
 * handler folds them into the home table. A job's run ends with every
 * batch sent, then gv_barrier(), whose quiescence covers their handling.
 */
#include "mapreduce/mr.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_JOBS 64
#define BATCH    (32 * 1024)
#define CHUNK    (1 << 20)

typedef struct {
    uint8_t *slots;  /* cap entries of mr->stride bytes */
    uint64_t cap, n;
    uint8_t *arena;  /* keys longer than INLINE bytes */
    size_t   used, room;
} table_t;

typedef struct {
    uint8_t *data;
    size_t   len;
} batch_t;

struct gv_mr {
    uint16_t                id;
    size_t                  ks, vs, vs8, stride;
    gv_hashmap_combine_fn_t combine;
    int                     local_combine, rank, nranks, failed, progress;
    int64_t                 done, todo;    /* input bytes, for progress */
    double                  t0, last;
    table_t                 comb, home;
    batch_t                *out;   /* per destination */
};

static gv_mr_t   *jobs[MAX_JOBS];
static gv_am_id_t am_id;
static int        registered;

/* ---- tables ---------------------------------------------------------------- */

/* An entry is one slot: {tag (the hash with its low bit set: 0 is an
 * empty slot; its other bits pick the first slot to probe), key length, value (8-aligned),
 * key}: the key in place if at most INLINE bytes (so a fold touches one
 * cache line or two), else its offset in the arena. */
#define ENT_HDR 16
#define INLINE  16

static void table_init(gv_mr_t *mr, table_t *t)
{
    memset(t, 0, sizeof(*t));
    t->cap   = 64;
    t->slots = calloc(t->cap, mr->stride);
    if (t->slots == NULL)
        gv_abort(1, "mapreduce: out of local memory for a table");
}

static void table_free(table_t *t)
{
    free(t->slots);
    free(t->arena);
    memset(t, 0, sizeof(*t));
}

static inline uint32_t ent_klen(const uint8_t *e)
{
    uint32_t k;
    memcpy(&k, e + 8, 4);
    return k;
}

static inline uint8_t *ent_val(uint8_t *e)
{
    return e + ENT_HDR;
}

static inline const uint8_t *ent_key(const gv_mr_t *mr, const table_t *t,
                                     const uint8_t *e)
{
    uint64_t off;

    if (ent_klen(e) <= INLINE)
        return e + ENT_HDR + mr->vs8;
    memcpy(&off, e + ENT_HDR + mr->vs8, 8);
    return t->arena + off;
}

static void table_grow(gv_mr_t *mr, table_t *t)
{
    uint64_t ncap = t->cap * 2, i, j, tg;
    uint8_t *ns   = calloc(ncap, mr->stride);

    if (ns == NULL)
        gv_abort(1, "mapreduce: out of local memory for a table of %llu "
                 "entries", (unsigned long long)ncap);
    for (i = 0; i < t->cap; i++) {
        const uint8_t *e = t->slots + i * mr->stride;
        memcpy(&tg, e, 8);
        if (tg == 0)
            continue;
        for (j = (tg >> 1) & (ncap - 1); *(const uint64_t *)(ns + j * mr->stride) != 0;
             j = (j + 1) & (ncap - 1))
            ;
        memcpy(ns + j * mr->stride, e, mr->stride);
    }
    free(t->slots);
    t->slots = ns;
    t->cap   = ncap;
}

/* Fold (key, val) into @a t: a new entry copies @a val, a present one
 * combines it. */
static void table_fold(gv_mr_t *mr, table_t *t, uint64_t h, const void *key,
                       size_t klen, const void *val)
{
    uint64_t tg = h | 1, i, et;
    uint8_t *e;
    uint32_t k32 = (uint32_t)klen;

    for (i = (tg >> 1) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        e = t->slots + i * mr->stride;
        memcpy(&et, e, 8);
        if (et == 0)
            break;
        if ((et == tg) && (ent_klen(e) == klen) &&
            (memcmp(ent_key(mr, t, e), key, klen) == 0)) {
            mr->combine(ent_val(e), val, mr->vs);
            return;
        }
    }
    memcpy(e, &tg, 8);
    memcpy(e + 8, &k32, 4);
    memcpy(ent_val(e), val, mr->vs);
    if (klen <= INLINE) {
        memcpy(e + ENT_HDR + mr->vs8, key, klen);
    } else {
        uint64_t off = t->used;
        if (t->used + klen > t->room) {
            size_t   nroom = (t->room == 0) ? 65536 : t->room * 2;
            uint8_t *na;
            while (nroom < t->used + klen)
                nroom *= 2;
            na = realloc(t->arena, nroom);
            if (na == NULL)
                gv_abort(1, "mapreduce: out of local memory for %zu bytes "
                         "of keys", nroom);
            t->arena = na;
            t->room  = nroom;
        }
        memcpy(t->arena + off, key, klen);
        t->used += klen;
        memcpy(e + ENT_HDR + mr->vs8, &off, 8);
    }
    if (++t->n * 10 > t->cap * 7)
        table_grow(mr, t);
}

static void table_clear(gv_mr_t *mr, table_t *t)
{
    memset(t->slots, 0, t->cap * mr->stride);
    t->n    = 0;
    t->used = 0;
}

/* Visit every entry of @a t. */
#define TABLE_EACH(_t, _mr, _e)                                               \
    for (uint64_t _i = 0; _i < (_t)->cap; _i++)                               \
        if (*(const uint64_t *)((_e) = (_t)->slots + _i * (_mr)->stride) != 0)

static inline int home_of(const gv_mr_t *mr, uint64_t h)
{
    return (int)(((h >> 32) * (uint64_t)mr->nranks) >> 32);
}

/* ---- the shuffle ------------------------------------------------------------ */

static void batch_send(gv_mr_t *mr, int dst)
{
    batch_t    *b = &mr->out[dst];
    uint8_t    *p = b->data;
    size_t      n = b->len;
    gv_status_t status;

    if (n <= 2)
        return;
    /* Detach first: sending may progress and let other workers emit. */
    b->data = malloc(BATCH);
    if (b->data == NULL)
        gv_abort(1, "mapreduce: out of local memory for a batch");
    memcpy(b->data, &mr->id, 2);
    b->len = 2;
    status = gv_am_send(dst, am_id, p, n);
    free(p);
    if (status != GV_OK)
        gv_abort(1, "mapreduce: cannot send pairs to rank %d: %s", dst,
                 gv_status_str(status));
}

/* Send (key, val) to its home, or fold it there if that is here. */
static void ship(gv_mr_t *mr, uint64_t h, const void *key, size_t klen,
                 const void *val)
{
    int      dst = home_of(mr, h);
    batch_t *b;
    uint16_t k16 = (uint16_t)klen;

    if (dst == mr->rank) {
        table_fold(mr, &mr->home, h, key, klen, val);
        return;
    }
    b = &mr->out[dst];
    /* Sending may progress and let other workers fill this batch. */
    while (b->len + 2 + klen + mr->vs > BATCH)
        batch_send(mr, dst);
    memcpy(b->data + b->len, &k16, 2);
    memcpy(b->data + b->len + 2, key, klen);
    memcpy(b->data + b->len + 2 + klen, val, mr->vs);
    b->len += 2 + klen + mr->vs;
}

static void pairs_am(int src, const void *payload, size_t len, void *arg)
{
    const uint8_t *p = payload, *end = p + len;
    uint16_t       id, klen;
    uint64_t       val[GV_MR_VAL_MAX / 8];
    gv_mr_t       *mr;

    if (len < 2)
        goto bad;
    memcpy(&id, p, 2);
    mr = (id < MAX_JOBS) ? jobs[id] : NULL;
    if (mr == NULL)
        goto bad;
    for (p += 2; p < end; p += 2 + klen + mr->vs) {
        if (end - p < 2)
            goto bad;
        memcpy(&klen, p, 2);
        if (((size_t)(end - p) < 2 + klen + mr->vs) ||
            ((mr->ks != 0) && (klen != mr->ks)))
            goto bad;
        memcpy(val, p + 2 + klen, mr->vs);
        table_fold(mr, &mr->home, mr_hash(p + 2, klen), p + 2, klen, val);
    }
    return;
bad:
    mr_error("malformed mapreduce batch from rank %d (%zu bytes): dropped",
             src, len);
}

/* Collective end of a run: combiner table to the homes, batches out,
 * quiescence; then whether any rank failed. */
static gv_status_t finish_run(gv_mr_t *mr, gv_status_t mine)
{
    int64_t  bad;
    uint8_t *e;
    int      r;

    if (mr->local_combine) {
        TABLE_EACH(&mr->comb, mr, e) {
            const uint8_t *k = ent_key(mr, &mr->comb, e);
            ship(mr, mr_hash(k, ent_klen(e)), k, ent_klen(e), ent_val(e));
        }
        table_clear(mr, &mr->comb);
    }
    for (r = 0; r < mr->nranks; r++)
        batch_send(mr, r);
    gv_barrier();
    bad = ((mine != GV_OK) || mr->failed) ? 1 : 0;
    if (mine == GV_ERR_IO)
        bad = 2;
    mr->failed = 0;
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    return (bad == 0) ? GV_OK : (bad == 2) ? GV_ERR_IO : GV_ERR_INVALID;
}

/* ---- the job ---------------------------------------------------------------- */

gv_status_t gv_mr_create(const gv_mr_opts_t *o, gv_mr_t **mr_p)
{
    gv_mr_t *mr;
    int      id, r;

    if ((o == NULL) || (o->key_size > GV_MR_KEY_MAX) || (o->val_size == 0) ||
        (o->val_size > GV_MR_VAL_MAX) || (o->combine == NULL)) {
        if (gv_rank() == 0)
            mr_error("bad options: key_size 0..%d, val_size 1..%d and a "
                     "combine function are needed", GV_MR_KEY_MAX,
                     GV_MR_VAL_MAX);
        return GV_ERR_INVALID;
    }
    for (id = 0; (id < MAX_JOBS) && (jobs[id] != NULL); id++)
        ;
    if (id == MAX_JOBS) {
        if (gv_rank() == 0)
            mr_error("%d mapreduce jobs alive: destroy some", MAX_JOBS);
        return GV_ERR_NO_RESOURCE;
    }
    if (!registered) {
        if (gv_am_register(pairs_am, NULL, &am_id) != GV_OK)
            return GV_ERR_NO_RESOURCE; /* logged by gv_am_register */
        registered = 1;
        gv_barrier();
    }
    mr = calloc(1, sizeof(*mr));
    if (mr == NULL)
        gv_abort(1, "mapreduce: out of local memory");
    mr->id            = (uint16_t)id;
    mr->ks            = o->key_size;
    mr->vs            = o->val_size;
    mr->vs8           = (o->val_size + 7) & ~(size_t)7;
    mr->stride        = ENT_HDR + mr->vs8 + INLINE;
    mr->combine       = o->combine;
    mr->local_combine = o->local_combine;
    mr->progress      = o->progress;
    mr->rank          = gv_rank();
    mr->nranks        = gv_nranks();
    table_init(mr, &mr->comb);
    table_init(mr, &mr->home);
    mr->out = calloc((size_t)mr->nranks, sizeof(batch_t));
    if (mr->out == NULL)
        gv_abort(1, "mapreduce: out of local memory");
    for (r = 0; r < mr->nranks; r++) {
        mr->out[r].data = malloc(BATCH);
        if (mr->out[r].data == NULL)
            gv_abort(1, "mapreduce: out of local memory");
        memcpy(mr->out[r].data, &mr->id, 2);
        mr->out[r].len = 2;
    }
    jobs[id] = mr;
    *mr_p    = mr;
    /* No rank sends pairs of this job before every rank knows it. */
    gv_coll_barrier();
    return GV_OK;
}

void gv_mr_destroy(gv_mr_t *mr)
{
    int r;

    if (mr == NULL)
        return;
    gv_barrier();
    jobs[mr->id] = NULL;
    table_free(&mr->comb);
    table_free(&mr->home);
    for (r = 0; r < mr->nranks; r++)
        free(mr->out[r].data);
    free(mr->out);
    free(mr);
}

gv_status_t gv_mr_clear(gv_mr_t *mr)
{
    gv_barrier();
    table_clear(mr, &mr->comb);
    table_clear(mr, &mr->home);
    gv_barrier();
    return GV_OK;
}

void gv__mr_fail(gv_mr_t *mr)
{
    mr->failed = 1;
}

gv_status_t gv_mr_emit(gv_mr_t *mr, const void *key, size_t klen,
                       const void *val)
{
    uint64_t h;

    if (((mr->ks != 0) && (klen != mr->ks)) || (klen > GV_MR_KEY_MAX)) {
        if (!mr->failed)
            mr_error("emit: a key of %zu bytes (the job takes %s %zu)", klen,
                     (mr->ks != 0) ? "exactly" : "at most",
                     (mr->ks != 0) ? mr->ks : (size_t)GV_MR_KEY_MAX);
        mr->failed = 1;
        return GV_ERR_INVALID;
    }
    h = mr_hash(key, klen);
    if (mr->local_combine)
        table_fold(mr, &mr->comb, h, key, klen, val);
    else
        ship(mr, h, key, klen, val);
    return GV_OK;
}

/* ---- input: arrays ------------------------------------------------------------ */

typedef struct {
    gv_mr_t       *mr;
    gv_mr_map_fn_t map;
    void          *arg;
} arr_ctx_t;

static void arr_body(int64_t i, void *elem, void *arg)
{
    arr_ctx_t *c = arg;
    c->map(c->mr, i, elem, c->arg);
}

gv_status_t gv_mr_run_array(gv_mr_t *mr, gv_array_t *a, gv_mr_map_fn_t map,
                            void *arg)
{
    arr_ctx_t   c = {mr, map, arg};
    gv_status_t status;

    status = gv_array_forall(a, 0, arr_body, &c, NULL);
    return finish_run(mr, status);
}

/* ---- input: files by byte ranges ---------------------------------------------- */

static inline int is_space(int c)
{
    return (c == ' ') || ((c >= '\t') && (c <= '\r'));
}

/* First offset >= @a from in the file that is whitespace (its size if
 * none); -1 on a read error (logged). */
static int64_t next_space(int fd, const char *path, int64_t from, int64_t size,
                          char *buf)
{
    while (from < size) {
        int64_t want = (size - from < 65536) ? size - from : 65536, i;
        ssize_t got  = pread(fd, buf, (size_t)want, from);
        if (got <= 0) {
            mr_error("cannot read %s at byte %lld: %s", path,
                     (long long)from, (got < 0) ? strerror(errno)
                                                : "unexpected end of file");
            return -1;
        }
        for (i = 0; i < got; i++)
            if (is_space((unsigned char)buf[i]))
                return from + i;
        from += got;
    }
    return size;
}

/* Rank 0's progress line, every 2 seconds of a run. */
static void report(gv_mr_t *mr)
{
    double now;

    if (!mr->progress || (mr->rank != 0))
        return;
    now = gv_wtime();
    if (now - mr->last < 2.0)
        return;
    mr->last = now;
    fprintf(stderr, "mapreduce: rank 0 mapped %.1f of %.1f MiB in %.1f s\n",
            (double)mr->done / 1048576.0, (double)mr->todo / 1048576.0,
            now - mr->t0);
}

/* Map the words of @a path whose first byte is in [a, b). */
static gv_status_t map_file_range(gv_mr_t *mr, const char *path, int64_t a,
                                  int64_t b, int64_t size,
                                  gv_mr_text_fn_t map, void *arg, char *buf)
{
    int64_t s = a, e = b, pos;
    size_t  carry = 0;
    char    c;
    int     fd = open(path, O_RDONLY);

    if (fd < 0) {
        mr_error("cannot open %s: %s", path, strerror(errno));
        return GV_ERR_IO;
    }
    if (a > 0) {
        if (pread(fd, &c, 1, a - 1) != 1)
            goto err_read;
        if (!is_space((unsigned char)c) &&
            ((s = next_space(fd, path, a, size, buf)) < 0))
            goto err_close;
    }
    if (b < size) {
        if (pread(fd, &c, 1, b - 1) != 1)
            goto err_read;
        if (!is_space((unsigned char)c) &&
            ((e = next_space(fd, path, b, size, buf)) < 0))
            goto err_close;
    }
    /* Chunks of [s, e) cut after their last whitespace; the rest carried. */
    for (pos = s; pos < e;) {
        int64_t want = e - pos;
        ssize_t got;
        size_t  n, cut;

        if (want > (int64_t)(CHUNK - carry))
            want = (int64_t)(CHUNK - carry);
        got = pread(fd, buf + carry, (size_t)want, pos);
        if (got <= 0)
            goto err_read_at;
        pos += got;
        n = carry + (size_t)got;
        cut = n;
        if (pos < e) {
            while ((cut > 0) && !is_space((unsigned char)buf[cut - 1]))
                cut--;
            if (cut == 0) {
                mr_error("%s: a word of more than %d bytes at byte %lld",
                         path, CHUNK, (long long)(pos - (int64_t)n));
                close(fd);
                return GV_ERR_INVALID;
            }
        }
        map(mr, buf, cut, path, pos - (int64_t)n, arg);
        mr->done += (int64_t)cut;
        report(mr);
        carry = n - cut;
        memmove(buf, buf + cut, carry);
        gv_yield();
    }
    close(fd);
    return GV_OK;
err_read_at:
    a = pos;
err_read:
    mr_error("cannot read %s near byte %lld: %s", path, (long long)a,
             strerror(errno));
err_close:
    close(fd);
    return GV_ERR_IO;
}

gv_status_t gv_mr_run_files(gv_mr_t *mr, const char *const *paths,
                            int nfiles, gv_mr_text_fn_t map, void *arg)
{
    int64_t     total = 0, lo, hi, base = 0, *sizes;
    gv_status_t status = GV_OK;
    struct stat st;
    char       *buf;
    int         f;

    sizes = calloc((size_t)nfiles + 1, sizeof(int64_t));
    buf   = malloc(CHUNK);
    if ((sizes == NULL) || (buf == NULL))
        gv_abort(1, "mapreduce: out of local memory for reading files");
    for (f = 0; f < nfiles; f++) {
        if (stat(paths[f], &st) != 0) {
            if (mr->rank == 0)
                mr_error("cannot read %s: %s", paths[f], strerror(errno));
            status = GV_ERR_IO;
            break;
        }
        if (!S_ISREG(st.st_mode)) {
            if (mr->rank == 0)
                mr_error("%s is not a regular file", paths[f]);
            status = GV_ERR_IO;
            break;
        }
        sizes[f] = st.st_size;
        total += st.st_size;
    }
    lo = total / mr->nranks * mr->rank + ((total % mr->nranks) * mr->rank) / mr->nranks;
    hi = total / mr->nranks * (mr->rank + 1) +
         ((total % mr->nranks) * (mr->rank + 1)) / mr->nranks;
    mr->done = 0;
    mr->todo = hi - lo;
    mr->t0 = mr->last = gv_wtime();
    for (f = 0; (status == GV_OK) && (f < nfiles); base += sizes[f], f++) {
        int64_t a = (lo > base) ? lo - base : 0;
        int64_t b = (hi < base + sizes[f]) ? hi - base : sizes[f];
        if (a < b)
            status = map_file_range(mr, paths[f], a, b, sizes[f], map, arg,
                                    buf);
    }
    free(buf);
    free(sizes);
    return finish_run(mr, status);
}

gv_status_t gv_mr_run_generated(gv_mr_t *mr, int64_t npieces, size_t cap,
                                gv_mr_gen_fn_t gen, void *gen_arg,
                                gv_mr_text_fn_t map, void *arg)
{
    int64_t i, lo = npieces * mr->rank / mr->nranks,
               hi = npieces * (mr->rank + 1) / mr->nranks;
    char   *buf = malloc(cap);

    if (buf == NULL)
        gv_abort(1, "mapreduce: out of local memory for %zu bytes", cap);
    mr->done = 0;
    mr->todo = (hi - lo) * (int64_t)cap;
    mr->t0 = mr->last = gv_wtime();
    for (i = lo; i < hi; i++) {
        size_t n = gen(i, buf, cap, gen_arg);
        map(mr, buf, n, NULL, i * (int64_t)cap, arg);
        mr->done += (int64_t)n;
        report(mr);
        gv_yield();
    }
    free(buf);
    return finish_run(mr, GV_OK);
}

/* ---- the result ------------------------------------------------------------------ */

gv_status_t gv_mr_forall(gv_mr_t *mr, gv_mr_entry_fn_t body, void *arg)
{
    uint8_t *e;

    TABLE_EACH(&mr->home, mr, e)
        body(ent_key(mr, &mr->home, e), ent_klen(e), ent_val(e), arg);
    gv_barrier();
    return GV_OK;
}

int64_t gv_mr_local_size(const gv_mr_t *mr)
{
    return (int64_t)mr->home.n;
}

gv_status_t gv_mr_size(gv_mr_t *mr, int64_t *n_p)
{
    int64_t n = (int64_t)mr->home.n;
    gv_status_t status = gv_allreduce(&n, 1, GV_INT64, GV_SUM);

    if (status == GV_OK)
        *n_p = n;
    return status;
}

gv_status_t gv_mr_to_hashmap(gv_mr_t *mr, gv_hashmap_t *map)
{
    gv_status_t status = GV_OK;
    uint8_t    *e;

    if (mr->ks == 0) {
        if (mr->rank == 0)
            mr_error("a job with variable-length keys has no hash-map form");
        return GV_ERR_INVALID;
    }
    /* The default event: every rank knows it, so the wait covers all. */
    TABLE_EACH(&mr->home, mr, e) {
        status = gv_hashmap_insert_async(map, ent_key(mr, &mr->home, e),
                                         ent_val(e), NULL);
        if (status != GV_OK)
            break;
    }
    if (gv_gce_wait(gv_gce_default()) != GV_OK)
        status = GV_ERR_INVALID;
    return status;
}

gv_status_t gv_mr_to_array(gv_mr_t *mr, gv_array_t *a)
{
    gv_status_t status = GV_OK;
    int64_t     k, bad = 0;
    uint8_t    *e;

    if ((mr->ks != 8) || (gv_array_elem_size(a) != mr->vs)) {
        if (mr->rank == 0)
            mr_error("array form: keys must be int64 and the array's "
                     "elements %zu bytes", mr->vs);
        return GV_ERR_INVALID;
    }
    TABLE_EACH(&mr->home, mr, e) {
        memcpy(&k, ent_key(mr, &mr->home, e), 8);
        if ((k < 0) || (k >= gv_array_size(a))) {
            if (!bad)
                mr_error("array form: key %lld outside [0, %lld)",
                         (long long)k, (long long)gv_array_size(a));
            bad = 1;
            continue;
        }
        if (gv_array_put_async(a, k, ent_val(e), NULL) != GV_OK)
            bad = 1;
    }
    if (gv_gce_wait(gv_gce_default()) != GV_OK)
        bad = 1;
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    if (bad)
        status = GV_ERR_INVALID;
    return status;
}

static int top_cmp(const void *x, const void *y)
{
    const gv_mr_top_t *a = x, *b = y;
    size_t             n = (a->klen < b->klen) ? a->klen : b->klen;
    int                c;

    if (a->value != b->value)
        return (a->value > b->value) ? -1 : 1;
    c = memcmp(a->key, b->key, n);
    if (c != 0)
        return c;
    return (a->klen < b->klen) ? -1 : (a->klen > b->klen);
}

/* Keep the k best of n + 1 sorted entries (insertion into a sorted list). */
static int top_insert(gv_mr_top_t *top, int n, int k, const gv_mr_top_t *t)
{
    int i = n;

    if ((n == k) && (top_cmp(t, &top[k - 1]) >= 0))
        return n;
    if (n == k)
        i = k - 1;
    while ((i > 0) && (top_cmp(t, &top[i - 1]) < 0)) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = *t;
    return (n == k) ? k : n + 1;
}

gv_status_t gv_mr_top(gv_mr_t *mr, int k, gv_mr_top_t *top, int *n_p)
{
    gv_mr_top_t *mine, *theirs, t;
    int          n = 0, r, i;
    int64_t      cnt;
    uint8_t     *e;

    if ((k < 1) || (k > 1000)) {
        if (mr->rank == 0)
            mr_error("top: k is %d, accepted 1..1000", k);
        return GV_ERR_INVALID;
    }
    mine   = calloc((size_t)k + 1, sizeof(*mine));
    theirs = calloc((size_t)k + 1, sizeof(*theirs));
    if ((mine == NULL) || (theirs == NULL))
        gv_abort(1, "mapreduce: out of local memory for the top %d", k);
    TABLE_EACH(&mr->home, mr, e) {
        memset(&t, 0, sizeof(t));
        memcpy(&t.value, ent_val(e), (mr->vs < 8) ? mr->vs : 8);
        t.klen = ent_klen(e);
        memcpy(t.key, ent_key(mr, &mr->home, e), t.klen);
        n = top_insert(mine, n, k, &t);
    }
    /* Every rank's list to every rank, merged in the same order. */
    *n_p = 0;
    for (r = 0; r < mr->nranks; r++) {
        cnt = n;
        if (r == mr->rank)
            memcpy(theirs, mine, sizeof(*mine) * (size_t)n);
        gv_broadcast(r, &cnt, 8);
        if (cnt > 0)
            gv_broadcast(r, theirs, sizeof(*theirs) * (size_t)cnt);
        for (i = 0; i < cnt; i++)
            *n_p = top_insert(top, *n_p, k, &theirs[i]);
    }
    free(mine);
    free(theirs);
    return GV_OK;
}
