/* Loading text edge lists (SNAP style) and Matrix Market coordinate files,
 * each rank the lines that start in its byte range of the file (mapped
 * read-only). Line numbers in messages come from the ranks' line counts.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "graph/load_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAXF 5 /* fields looked at; more is "too many" */

typedef struct {
    const char *p[MAXF];
    size_t      len[MAXF];
    int         n;     /* fields found (MAXF means MAXF or more) */
} fields_t;

static void split(const char *s, const char *e, fields_t *f)
{
    f->n = 0;
    while ((e > s) && ((e[-1] == '\r') || (e[-1] == ' ') || (e[-1] == '\t')))
        e--;
    while (s < e) {
        while ((s < e) && ((*s == ' ') || (*s == '\t')))
            s++;
        if (s == e)
            break;
        if (f->n == MAXF)
            return;
        f->p[f->n] = s;
        while ((s < e) && (*s != ' ') && (*s != '\t'))
            s++;
        f->len[f->n] = (size_t)(s - f->p[f->n]);
        f->n++;
    }
}

/* A field for a message: at most 24 characters, printable. */
static const char *show(const char *p, size_t len, char *buf)
{
    size_t i, n = (len > 24) ? 24 : len;

    for (i = 0; i < n; i++)
        buf[i] = ((unsigned char)p[i] < 32 || (unsigned char)p[i] > 126) ?
                     '?' : p[i];
    strcpy(buf + n, (len > n) ? "..." : "");
    return buf;
}

/* A non-negative decimal integer; 0 ok, -1 not a number, -2 too large. */
static int parse_u(const char *p, size_t len, int64_t *v_p)
{
    uint64_t v = 0;
    size_t   i;

    if (len == 0)
        return -1;
    for (i = 0; i < len; i++) {
        if ((p[i] < '0') || (p[i] > '9'))
            return -1;
        if (v > ((uint64_t)INT64_MAX - (uint64_t)(p[i] - '0')) / 10)
            return -2;
        v = v * 10 + (uint64_t)(p[i] - '0');
    }
    *v_p = (int64_t)v;
    return 0;
}

/* A finite decimal number (integer_only: [+-]digits). */
static int parse_num(const char *p, size_t len, int integer_only, float *w_p)
{
    char   buf[64], *end;
    double d;
    size_t i = 0;

    if ((len == 0) || (len >= sizeof(buf)))
        return -1;
    if (integer_only) {
        if ((p[0] == '-') || (p[0] == '+'))
            i = 1;
        if (i == len)
            return -1;
        for (; i < len; i++)
            if ((p[i] < '0') || (p[i] > '9'))
                return -1;
    }
    memcpy(buf, p, len);
    buf[len] = '\0';
    errno    = 0;
    d        = strtod(buf, &end);
    if ((end != buf + len) || !isfinite(d) || !isfinite((float)d))
        return -1;
    *w_p = (float)d;
    return 0;
}

/* One rank's view of a text file. */
typedef struct {
    const char *path;
    const char *map;
    int64_t     size;
    int64_t     lo, hi;          /* lines starting in [lo, hi) are ours */
    int64_t     lines;           /* lines of ours */
    /* the first error of this rank, its line (ours) and message tail */
    int64_t     err_off, err_line;
    gv_status_t err_status;
    char        err_msg[400];
} text_t;

static void text_err(text_t *t, int64_t off, int64_t line, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));
static void text_err(text_t *t, int64_t off, int64_t line, const char *fmt,
                     ...)
{
    va_list ap;

    if (off >= t->err_off)
        return;
    t->err_off    = off;
    t->err_line   = line;
    t->err_status = GV_ERR_INVALID;
    va_start(ap, fmt);
    vsnprintf(t->err_msg, sizeof(t->err_msg), fmt, ap);
    va_end(ap);
}

/* Map the file read-only (an empty file maps nothing). */
static int text_open(text_t *t, const char *path, gv__gerr_t *err)
{
    int fd;

    memset(t, 0, sizeof(*t));
    t->path    = path;
    t->err_off = INT64_MAX;
    fd         = gv__graph_open(path, &t->size, err);
    if (fd < 0)
        return -1;
    if (t->size > 0) {
        void *m = mmap(NULL, (size_t)t->size, PROT_READ, MAP_PRIVATE, fd, 0);

        if (m == MAP_FAILED) {
            gv__gerr_set(err, -1, GV_ERR_IO, "%s: cannot map: %s", path,
                         strerror(errno));
            close(fd);
            return -1;
        }
        t->map = m;
    }
    close(fd);
    return 0;
}

static void text_range(text_t *t, int64_t start)
{
    int     P = gv_nranks(), me = gv_rank();
    int64_t len = t->size - start;

    t->lo = start + (int64_t)(((unsigned __int128)len * (unsigned)me) /
                              (unsigned)P);
    t->hi = start + (int64_t)(((unsigned __int128)len * (unsigned)(me + 1)) /
                              (unsigned)P);
}

static void text_close(text_t *t)
{
    if (t->map != NULL)
        munmap((void *)t->map, (size_t)t->size);
    t->map = NULL;
}

/* The first line of ours: at lo if a line starts there. */
static int64_t first_line(const text_t *t)
{
    int64_t p = t->lo;

    if ((p == 0) || (p >= t->size))
        return p;
    if (t->map[p - 1] == '\n')
        return p;
    while ((p < t->size) && (t->map[p] != '\n'))
        p++;
    return p + 1;
}

static int64_t line_end(const text_t *t, int64_t p)
{
    const char *nl = memchr(t->map + p, '\n', (size_t)(t->size - p));

    return (nl == NULL) ? t->size : (int64_t)(nl - t->map);
}

/* Collective: turn the ranks' first errors into one, with the line number
 * counted over every rank's lines (plus @a line0 lines before the range). */
static gv_status_t text_agree(text_t *t, int64_t line0)
{
    int         P = gv_nranks(), me = gv_rank(), r;
    int64_t    *lines = malloc((size_t)P * sizeof(int64_t)), base = line0;
    gv__gerr_t  err;
    gv_status_t status;

    gv__gerr_init(&err);
    if (lines == NULL)
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY, "%s: no memory", t->path);
    else if (gv__graph_allgather64(t->lines, lines) == GV_OK) {
        for (r = 0; r < me; r++)
            base += lines[r];
        if (t->err_off != INT64_MAX)
            gv__gerr_set(&err, t->err_off, t->err_status,
                         "%s: line %" PRId64 ": %s", t->path,
                         base + t->err_line + 1, t->err_msg);
    }
    free(lines);
    status = gv__gerr_agree(&err);
    return status;
}

/* ------------------------------------------------------------------------ */
/* SNAP text                                                                 */

gv_status_t gv__graph_load_text(const char *path, int64_t nverts,
                                gv_edgelist_t *el_p)
{
    gv_edgelist_t el;
    text_t        t;
    gv__gerr_t    err;
    gv_status_t   status;
    fields_t      f;
    int64_t       p, maxid = -1, g[2];
    int64_t       first2 = INT64_MAX, first3 = INT64_MAX, line2 = 0, line3 = 0;
    char          sb[32];

    gv__gerr_init(&err);
    text_open(&t, path, &err);
    status = gv__gerr_agree(&err);
    if (status != GV_OK) {
        text_close(&t);
        return status;
    }
    text_range(&t, 0);
    gv_edgelist_init(&el, nverts, 1);
    for (p = first_line(&t); (p < t.hi) && (p < t.size); t.lines++) {
        int64_t e = line_end(&t, p), ids[2];
        float   w = 0;
        int     i, rc;

        split(t.map + p, t.map + e, &f);
        if ((f.n == 0) || (f.p[0][0] == '#'))
            goto next;
        if ((f.n < 2) || (f.n > 3)) {
            text_err(&t, p, t.lines, "%s%d field%s; expected 'src dst' or "
                     "'src dst weight'", (f.n == MAXF) ? "at least " : "",
                     f.n, (f.n == 1) ? "" : "s");
            break;
        }
        for (i = 0; i < 2; i++) {
            rc = parse_u(f.p[i], f.len[i], &ids[i]);
            if (rc != 0) {
                text_err(&t, p, t.lines, "%s '%s' %s",
                         i ? "destination" : "source",
                         show(f.p[i], f.len[i], sb),
                         (rc == -1) ? "is not a non-negative integer" :
                                      "does not fit in int64");
                break;
            }
            if ((nverts >= 0) && (ids[i] >= nverts)) {
                text_err(&t, p, t.lines, "vertex id %" PRId64 " is not below "
                         "the declared vertex count %" PRId64, ids[i],
                         nverts);
                break;
            }
        }
        if (i < 2)
            break;
        if ((f.n == 3) && (parse_num(f.p[2], f.len[2], 0, &w) != 0)) {
            text_err(&t, p, t.lines, "weight '%s' is not a finite number",
                     show(f.p[2], f.len[2], sb));
            break;
        }
        if ((f.n == 2) && (first2 == INT64_MAX)) {
            first2 = p;
            line2  = t.lines;
        }
        if ((f.n == 3) && (first3 == INT64_MAX)) {
            first3 = p;
            line3  = t.lines;
        }
        if (gv_edgelist_push(&el, ids[0], ids[1], w) != GV_OK) {
            t.err_off    = -1;
            t.err_status = GV_ERR_NO_MEMORY;
            snprintf(t.err_msg, sizeof(t.err_msg), "no memory for %" PRId64
                     " edges", el.n);
            break;
        }
        maxid = (ids[0] > maxid) ? ids[0] : maxid;
        maxid = (ids[1] > maxid) ? ids[1] : maxid;
    next:
        p = e + 1;
        if ((t.lines & 0xffff) == 0xffff)
            gv_yield();
    }
    /* Every edge line the same number of fields: the first line whose
     * count differs from the first edge line's is the error. */
    g[0] = first2;
    g[1] = first3;
    status = gv_allreduce(g, 2, GV_INT64, GV_MIN);
    if ((status == GV_OK) && (g[0] != INT64_MAX) && (g[1] != INT64_MAX)) {
        if (first2 == ((g[0] > g[1]) ? g[0] : g[1]))
            text_err(&t, first2, line2, "2 fields, but the edge lines before "
                     "it have 3 (src dst weight); every edge line needs the "
                     "same fields");
        if (first3 == ((g[0] > g[1]) ? g[0] : g[1]))
            text_err(&t, first3, line3, "3 fields, but the edge lines before "
                     "it have 2 (src dst); every edge line needs the same "
                     "fields");
    }
    if (status == GV_OK)
        status = text_agree(&t, 0);
    text_close(&t);
    if ((status == GV_OK) && (nverts == GV_GRAPH_NVERTS_AUTO)) {
        status    = gv_allreduce(&maxid, 1, GV_INT64, GV_MAX);
        el.nverts = maxid + 1;
    }
    if (status == GV_OK) {
        if (g[1] == INT64_MAX) { /* no weights anywhere */
            free(el.w);
            el.w        = NULL;
            el.weighted = 0;
        }
        status = gv_edgelist_sync(&el);
    }
    if (status != GV_OK) {
        gv_edgelist_free(&el);
        return status;
    }
    *el_p = el;
    return GV_OK;
}

/* ------------------------------------------------------------------------ */
/* Matrix Market                                                             */

enum { MM_PATTERN, MM_INTEGER, MM_REAL };

typedef struct {
    int     field, symmetric;
    int64_t n, nnz;
    int64_t data_off;   /* first byte after the size line */
    int64_t data_line;  /* lines before data_off */
    int64_t size_line;  /* line number of the size line */
} mm_hdr_t;

static int tok_is(const fields_t *f, int i, const char *s)
{
    return (f->len[i] == strlen(s)) && (strncasecmp(f->p[i], s, f->len[i]) == 0);
}

/* Every rank reads the header itself (it is small). */
static void mm_header(const text_t *t, mm_hdr_t *h, gv__gerr_t *err)
{
    static const char *hint = "expected '%%MatrixMarket matrix coordinate "
                              "pattern|integer|real general|symmetric'";
    fields_t    f;
    int64_t     p = 0, e, line = 1, v[3];
    char        sb[32];
    int         i;

    memset(h, 0, sizeof(*h));
    if (t->size == 0) {
        gv__gerr_set(err, 0, GV_ERR_INVALID, "%s: empty file; %s", t->path,
                     hint);
        return;
    }
    e = line_end(t, 0);
    split(t->map, t->map + e, &f);
    if ((f.n < 1) || !tok_is(&f, 0, "%%MatrixMarket")) {
        gv__gerr_set(err, 0, GV_ERR_INVALID, "%s: line 1: not a Matrix "
                     "Market banner; %s", t->path, hint);
        return;
    }
    if ((f.n != 5) || !tok_is(&f, 1, "matrix")) {
        gv__gerr_set(err, 0, GV_ERR_INVALID, "%s: line 1: bad banner (%d "
                     "words); %s", t->path, f.n, hint);
        return;
    }
    if (!tok_is(&f, 2, "coordinate")) {
        gv__gerr_set(err, 0, GV_ERR_INVALID, "%s: line 1: format '%s' is not "
                     "supported (only coordinate)", t->path,
                     show(f.p[2], f.len[2], sb));
        return;
    }
    if (tok_is(&f, 3, "pattern"))
        h->field = MM_PATTERN;
    else if (tok_is(&f, 3, "integer"))
        h->field = MM_INTEGER;
    else if (tok_is(&f, 3, "real"))
        h->field = MM_REAL;
    else {
        gv__gerr_set(err, 0, GV_ERR_INVALID, "%s: line 1: field '%s' is not "
                     "supported (pattern, integer or real)", t->path,
                     show(f.p[3], f.len[3], sb));
        return;
    }
    if (tok_is(&f, 4, "symmetric"))
        h->symmetric = 1;
    else if (!tok_is(&f, 4, "general")) {
        gv__gerr_set(err, 0, GV_ERR_INVALID, "%s: line 1: symmetry '%s' is "
                     "not supported (general or symmetric)", t->path,
                     show(f.p[4], f.len[4], sb));
        return;
    }
    /* Comments, then the size line. */
    for (p = e + 1; p < t->size; p = e + 1) {
        e = line_end(t, p);
        line++;
        split(t->map + p, t->map + e, &f);
        if ((f.n > 0) && (f.p[0][0] != '%'))
            break;
    }
    if (p >= t->size) {
        gv__gerr_set(err, t->size, GV_ERR_INVALID, "%s: line %" PRId64
                     ": the file ends before the size line 'rows columns "
                     "entries'", t->path, line);
        return;
    }
    if (f.n != 3) {
        gv__gerr_set(err, p, GV_ERR_INVALID, "%s: line %" PRId64 ": size "
                     "line has %d field%s; expected 'rows columns entries'",
                     t->path, line, f.n, (f.n == 1) ? "" : "s");
        return;
    }
    for (i = 0; i < 3; i++) {
        if (parse_u(f.p[i], f.len[i], &v[i]) != 0) {
            gv__gerr_set(err, p, GV_ERR_INVALID, "%s: line %" PRId64 ": size "
                         "field '%s' is not a non-negative integer", t->path,
                         line, show(f.p[i], f.len[i], sb));
            return;
        }
    }
    if (v[0] != v[1]) {
        gv__gerr_set(err, p, GV_ERR_INVALID, "%s: line %" PRId64 ": the "
                     "matrix is %" PRId64 " x %" PRId64 "; a graph needs a "
                     "square one", t->path, line, v[0], v[1]);
        return;
    }
    h->n         = v[0];
    h->nnz       = v[2];
    h->size_line = line;
    h->data_line = line;
    h->data_off  = (e < t->size) ? e + 1 : t->size;
}

/* Parse our lines; stop after entry @a stop (>= 0) and return its line in
 * *stop_line_p. @return entries parsed. */
static int64_t mm_scan(text_t *t, const mm_hdr_t *h, gv_edgelist_t *el,
                       int64_t stop, int64_t *stop_line_p)
{
    fields_t f;
    int64_t  p, entries = 0, ij[2];
    int      want = (h->field == MM_PATTERN) ? 2 : 3, i;
    char     sb[32];

    t->lines = 0;
    for (p = first_line(t); (p < t->hi) && (p < t->size); t->lines++) {
        int64_t e = line_end(t, p);
        float   w = 1;

        split(t->map + p, t->map + e, &f);
        if ((f.n == 0) || (f.p[0][0] == '%'))
            goto next;
        if (f.n != want) {
            text_err(t, p, t->lines, "%s%d field%s; a %s entry is '%s'",
                     (f.n == MAXF) ? "at least " : "", f.n,
                     (f.n == 1) ? "" : "s",
                     (want == 2) ? "pattern" : "valued",
                     (want == 2) ? "row column" : "row column value");
            break;
        }
        for (i = 0; i < 2; i++) {
            if ((parse_u(f.p[i], f.len[i], &ij[i]) != 0) || (ij[i] < 1) ||
                (ij[i] > h->n)) {
                text_err(t, p, t->lines, "%s index '%s' is not an integer in "
                         "1..%" PRId64 " (the size on line %" PRId64 ")",
                         i ? "column" : "row", show(f.p[i], f.len[i], sb),
                         h->n, h->size_line);
                break;
            }
        }
        if (i < 2)
            break;
        if ((want == 3) &&
            (parse_num(f.p[2], f.len[2], h->field == MM_INTEGER, &w) != 0)) {
            text_err(t, p, t->lines, "value '%s' is not a%s",
                     show(f.p[2], f.len[2], sb),
                     (h->field == MM_INTEGER) ? "n integer" :
                                                " finite real number");
            break;
        }
        if (h->symmetric && (ij[0] < ij[1])) {
            text_err(t, p, t->lines, "entry (%" PRId64 ", %" PRId64 ") above "
                     "the diagonal of a symmetric matrix (only the lower "
                     "triangle is stored)", ij[0], ij[1]);
            break;
        }
        if (entries == stop) {
            *stop_line_p = t->lines;
            return entries;
        }
        entries++;
        if (el != NULL) {
            if ((gv_edgelist_push(el, ij[0] - 1, ij[1] - 1, w) != GV_OK) ||
                (h->symmetric && (ij[0] != ij[1]) &&
                 (gv_edgelist_push(el, ij[1] - 1, ij[0] - 1, w) != GV_OK))) {
                t->err_off    = -1;
                t->err_status = GV_ERR_NO_MEMORY;
                snprintf(t->err_msg, sizeof(t->err_msg),
                         "no memory for %" PRId64 " edges", el->n);
                break;
            }
        }
    next:
        p = e + 1;
        if ((t->lines & 0xffff) == 0xffff)
            gv_yield();
    }
    return entries;
}

gv_status_t gv__graph_load_mtx(const char *path, gv_edgelist_t *el_p)
{
    gv_edgelist_t el;
    text_t        t;
    mm_hdr_t      h;
    gv__gerr_t    err;
    gv_status_t   status;
    int64_t      *counts = NULL, entries, total = 0, base = 0, stop_line = 0;
    int           P = gv_nranks(), me = gv_rank(), r;

    gv__gerr_init(&err);
    if (text_open(&t, path, &err) == 0)
        mm_header(&t, &h, &err);
    status = gv__gerr_agree(&err);
    if (status != GV_OK) {
        text_close(&t);
        return status;
    }
    text_range(&t, h.data_off);
    gv_edgelist_init(&el, h.n, h.field != MM_PATTERN);
    entries = mm_scan(&t, &h, &el, -1, &stop_line);
    status  = text_agree(&t, h.data_line);
    if (status == GV_OK) {
        counts = malloc((size_t)P * sizeof(int64_t));
        if (counts == NULL)
            gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY, "%s: no memory", path);
        else if (gv__graph_allgather64(entries, counts) == GV_OK) {
            for (r = 0; r < P; r++) {
                if (r == me)
                    base = total;
                total += counts[r];
            }
        }
        if (total < h.nnz)
            gv__gerr_set(&err, t.size, GV_ERR_INVALID,
                         "%s: the file ends after %" PRId64 " of the %"
                         PRId64 " entries declared on line %" PRId64
                         " (truncated?)", path, total, h.nnz, h.size_line);
        status = gv__gerr_agree(&err);
    }
    if ((status == GV_OK) && (total > h.nnz)) {
        /* The rank holding entry nnz + 1 finds its line by a second scan. */
        if ((base <= h.nnz) && (base + entries > h.nnz)) {
            int64_t lines = t.lines;

            mm_scan(&t, &h, NULL, h.nnz - base, &stop_line);
            t.lines = lines;
            text_err(&t, t.lo, stop_line, "entry %" PRId64 " is beyond the %"
                     PRId64 " entries declared on line %" PRId64, h.nnz + 1,
                     h.nnz, h.size_line);
        }
        status = text_agree(&t, h.data_line);
    }
    free(counts);
    text_close(&t);
    if (status == GV_OK)
        status = gv_edgelist_sync(&el);
    if (status != GV_OK) {
        gv_edgelist_free(&el);
        return status;
    }
    *el_p = el;
    return GV_OK;
}
