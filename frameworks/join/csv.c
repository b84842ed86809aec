/* Relations from CSV files, read in parallel: each rank parses the lines
 * that start in its byte range. SPDX-License-Identifier: BSD-3-Clause */
#include "join/join.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (4 << 20)

static inline int blank(int c)
{
    return (c == ' ') || (c == '\t') || (c == '\r');
}

/* Parse one line [p, end) into @a row (at most @a max fields): the number
 * of fields (0 for an empty line), or -1 with @a why set. */
static int parse_line(const char *p, const char *end, int64_t *row, int max,
                      const char **why)
{
    int n = 0;

    while ((p < end) && blank((unsigned char)*p))
        p++;
    if (p == end)
        return 0;
    for (;;) {
        uint64_t v = 0, lim;
        int      neg = 0, digits = 0;

        while ((p < end) && blank((unsigned char)*p))
            p++;
        if ((p < end) && ((*p == '-') || (*p == '+'))) {
            neg = (*p == '-');
            p++;
        }
        lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        while ((p < end) && (*p >= '0') && (*p <= '9')) {
            uint64_t d = (uint64_t)(*p - '0');
            if (v > (lim - d) / 10) {
                *why = "a number outside int64";
                return -1;
            }
            v = v * 10 + d;
            digits++;
            p++;
        }
        if (digits == 0) {
            *why = (p == end || *p == ',') ? "an empty field"
                                           : "a field that is not an integer";
            return -1;
        }
        while ((p < end) && blank((unsigned char)*p))
            p++;
        if (n == max) {
            *why = "more fields than the first line";
            return -1;
        }
        row[n++] = neg ? (int64_t)(0 - v) : (int64_t)v;
        if (p == end)
            return n;
        if (*p != ',') {
            *why = "a field that is not an integer";
            return -1;
        }
        p++;
    }
}

/* Offset of the first byte after the first newline at or after @a from
 * (the file's size if none); -1 on a read error. */
static int64_t next_line(int fd, int64_t from, int64_t size, char *buf)
{
    while (from < size) {
        ssize_t got = pread(fd, buf, (size_t)((size - from < 65536) ? size - from
                                                                  : 65536), from);
        char   *nl;
        if (got <= 0)
            return -1;
        nl = memchr(buf, '\n', (size_t)got);
        if (nl != NULL)
            return from + (nl - buf) + 1;
        from += got;
    }
    return size;
}

gv_status_t gv_rel_load_csv(const char *path, int header, gv_rel_t **rel_p)
{
    int         P = gv_nranks(), me = gv_rank(), ncols = 0, fd, r;
    int64_t     size, start = 0, lo, hi, s, pos, line = 0, err_line = -1;
    int64_t     st[3] = {0, 0, 0}; /* io error, bad content, ncols */
    int64_t    *lines;
    rows_t      out = {0};
    const char *why = NULL;
    struct stat sb;
    char       *buf;
    size_t      carry = 0;
    gv_status_t status;
    int64_t     row[GV_REL_COLS_MAX];

    buf = malloc(CHUNK);
    if (buf == NULL)
        gv_abort(1, "join: out of local memory for reading %s", path);
    fd = open(path, O_RDONLY);
    if ((fd < 0) || (fstat(fd, &sb) != 0)) {
        if (me == 0)
            join_error("cannot read %s: %s", path, strerror(errno));
        free(buf);
        if (fd >= 0)
            close(fd);
        return GV_ERR_IO;
    }
    size = sb.st_size;
    /* The data start after the header; the first tuple line gives ncols. */
    if (header && ((start = next_line(fd, 0, size, buf)) < 0))
        goto err_io;
    for (pos = start; (pos < size) && (ncols == 0);) {
        int64_t e = next_line(fd, pos, size, buf);
        size_t  len;
        if (e < 0)
            goto err_io;
        len = (size_t)(e - pos);
        if (len > 65536)
            len = 65536;
        if (pread(fd, buf, len, pos) != (ssize_t)len)
            goto err_io;
        if ((len > 0) && (buf[len - 1] == '\n'))
            len--;
        ncols = parse_line(buf, buf + len, row, GV_REL_COLS_MAX, &why);
        if (ncols < 0) {
            if (me == 0)
                join_error("%s: its first tuple line: %s (at most %d fields)",
                           path, why, GV_REL_COLS_MAX);
            close(fd);
            free(buf);
            return GV_ERR_INVALID;
        }
        pos = e;
    }
    if (ncols == 0)
        ncols = 1; /* no tuple at all: an empty one-column relation */
    out.width = ncols;
    lo = start + (size - start) * me / P;
    hi = start + (size - start) * (me + 1) / P;
    /* Lines starting in [lo, hi): from the first line start >= lo. */
    s = lo;
    if ((lo > start) && ((s = next_line(fd, lo - 1, size, buf)) < 0))
        goto err_io;
    for (pos = s; (pos < hi) || (carry > 0);) {
        ssize_t got = 0;
        char   *p, *q, *end;

        if (pos < size) {
            got = pread(fd, buf + carry, CHUNK - carry, pos);
            if (got < 0)
                goto err_io;
            pos += got;
        }
        end = buf + carry + got;
        p   = buf;
        /* Whole lines; the last one without a newline only at the end. */
        while ((p < end) && (pos - (end - p) < hi)) {
            int n;
            q = memchr(p, '\n', (size_t)(end - p));
            if ((q == NULL) && (pos < size))
                break;
            if (q == NULL)
                q = end;
            line++;
            if (err_line < 0) {
                n = parse_line(p, q, row, ncols, &why);
                if ((n > 0) && (n != ncols)) {
                    why = "fewer fields than the first line";
                    n   = -1;
                }
                if (n < 0)
                    err_line = line;
                else if (n > 0)
                    rows_push(&out, row);
            }
            p = (q < end) ? q + 1 : end;
        }
        if ((p < end) && (pos - (end - p) >= hi)) {
            carry = 0; /* the rest starts in the next rank's range */
            break;
        }
        carry = (size_t)(end - p);
        if (carry == CHUNK) {
            if (err_line < 0) {
                err_line = line + 1;
                why      = "a line longer than 4 MiB";
            }
            carry = 0;
            break;
        }
        memmove(buf, p, carry);
        if ((got == 0) && (carry == 0))
            break;
        gv_yield();
    }
    goto done;
err_io:
    join_error("cannot read %s: %s", path, strerror(errno));
    st[0] = 1;
done:
    close(fd);
    free(buf);
    /* Lines before each rank's: the line numbers of errors. */
    lines = calloc((size_t)P, sizeof(int64_t));
    if (lines == NULL)
        gv_abort(1, "join: out of local memory");
    lines[me] = line;
    gv_allreduce(lines, (size_t)P, GV_INT64, GV_SUM);
    if (err_line >= 0) {
        int64_t base = header ? 1 : 0;
        for (r = 0; r < me; r++)
            base += lines[r];
        join_error("%s:%lld: %s (expected %d comma-separated int64 fields)",
                   path, (long long)(base + err_line), why, ncols);
        st[1] = 1;
    }
    free(lines);
    gv_allreduce(st, 2, GV_INT64, GV_MAX);
    if (st[0] || st[1]) {
        free(out.v);
        return st[0] ? GV_ERR_IO : GV_ERR_INVALID;
    }
    status = gv_rel_from_local(ncols, out.v, out.n, rel_p);
    free(out.v);
    return status;
}

gv_status_t gv_rel_write_csv(const gv_rel_t *rel, const char *path)
{
    int64_t  n, i, *v = gv_rel_local(rel, &n), *len, off = 0, bad = 0;
    int      P = gv_nranks(), me = gv_rank(), j, fd = -1, r;
    size_t   cap = (size_t)(n > 0 ? n : 1) * (size_t)rel->ncols * 21 + 1, pos = 0;
    char    *buf = malloc(cap);

    len = calloc((size_t)P, sizeof(int64_t));
    if ((buf == NULL) || (len == NULL))
        gv_abort(1, "join: out of local memory for writing %s", path);
    for (i = 0; i < n; i++)
        for (j = 0; j < rel->ncols; j++)
            pos += (size_t)snprintf(buf + pos, cap - pos, "%lld%c",
                                    (long long)v[i * rel->ncols + j],
                                    (j + 1 < rel->ncols) ? ',' : '\n');
    len[me] = (int64_t)pos;
    gv_allreduce(len, (size_t)P, GV_INT64, GV_SUM);
    for (r = 0; r < me; r++)
        off += len[r];
    if (me == 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            join_error("cannot create %s: %s", path, strerror(errno));
            bad = 1;
        }
    }
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    if (!bad && (me != 0) && ((fd = open(path, O_WRONLY)) < 0)) {
        join_error("cannot open %s: %s", path, strerror(errno));
        bad = 1;
    }
    if (!bad && (pos > 0) && (pwrite(fd, buf, pos, off) != (ssize_t)pos)) {
        join_error("cannot write %s: %s", path, strerror(errno));
        bad = 1;
    }
    if (fd >= 0)
        close(fd);
    free(buf);
    free(len);
    gv_allreduce(&bad, 1, GV_INT64, GV_MAX);
    return bad ? GV_ERR_IO : GV_OK;
}
