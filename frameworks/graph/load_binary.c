/* Loading binary edge lists (little-endian uint64 pairs, and an optional
 * file of little-endian float32 weights), each rank its range of edges;
 * and the entry point of every loader. SPDX-License-Identifier: BSD-3-Clause */
#include "graph/graph_internal.h"
#include "graph/load_internal.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_EDGES 65536

/* Open @a path and learn its size; errors go to @a err (key -1). */
int gv__graph_open(const char *path, int64_t *size_p, gv__gerr_t *err)
{
    struct stat st;
    int         fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        gv__gerr_set(err, -1, GV_ERR_IO, "%s: cannot open: %s", path,
                     strerror(errno));
        return -1;
    }
    if ((fstat(fd, &st) != 0) || !S_ISREG(st.st_mode)) {
        gv__gerr_set(err, -1, GV_ERR_IO, "%s: not a regular file", path);
        close(fd);
        return -1;
    }
    *size_p = (int64_t)st.st_size;
    return fd;
}

/* Read exactly @a len bytes at @a off, or record why not. */
static int read_at(int fd, const char *path, void *buf, size_t len,
                   int64_t off, gv__gerr_t *err)
{
    size_t done = 0;

    while (done < len) {
        ssize_t n = pread(fd, (char *)buf + done, len - done,
                          (off_t)(off + (int64_t)done));

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            gv__gerr_set(err, off + (int64_t)done, GV_ERR_IO,
                         "%s: byte offset %" PRId64 ": read failed: %s", path,
                         off + (int64_t)done,
                         (n < 0) ? strerror(errno) : "the file ended early");
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

static gv_status_t load_binary(const char *path, const char *wpath,
                               int64_t nverts, gv_edgelist_t *el_p)
{
    gv_edgelist_t el;
    gv__gerr_t    err;
    gv_status_t   status;
    int64_t       size = 0, wsize = 0, m, lo, hi, k, maxid = -1;
    int           fd, wfd = -1, P = gv_nranks(), me = gv_rank();
    uint64_t     *buf = NULL;
    uint32_t     *wbuf = NULL;

    gv__gerr_init(&err);
    fd = gv__graph_open(path, &size, &err);
    if (wpath != NULL)
        wfd = gv__graph_open(wpath, &wsize, &err);
    if ((fd >= 0) && (size % 16 != 0))
        gv__gerr_set(&err, 0, GV_ERR_INVALID,
                     "%s: size %" PRId64 " bytes is not a multiple of 16 (an "
                     "edge is two little-endian uint64; truncated file?)",
                     path, size);
    else if ((fd >= 0) && (wfd >= 0) && (wsize != size / 4))
        gv__gerr_set(&err, 0, GV_ERR_INVALID,
                     "%s: size %" PRId64 " bytes; the %" PRId64 " edges of "
                     "%s need %" PRId64 " bytes (one little-endian float32 "
                     "each)", wpath, wsize, size / 16, path, size / 4);
    status = gv__gerr_agree(&err);
    if (status != GV_OK)
        goto out_close;

    m  = size / 16;
    lo = (int64_t)(((unsigned __int128)m * (unsigned)me) / (unsigned)P);
    hi = (int64_t)(((unsigned __int128)m * (unsigned)(me + 1)) / (unsigned)P);
    gv_edgelist_init(&el, nverts, wpath != NULL);
    el.n = el.cap = hi - lo;
    el.first = lo;
    el.total = m;
    el.src = malloc((size_t)(el.n ? el.n : 1) * sizeof(int64_t));
    el.dst = malloc((size_t)(el.n ? el.n : 1) * sizeof(int64_t));
    if (wpath != NULL)
        el.w = malloc((size_t)(el.n ? el.n : 1) * sizeof(float));
    buf  = malloc(CHUNK_EDGES * 16);
    wbuf = malloc(CHUNK_EDGES * 4);
    if ((el.src == NULL) || (el.dst == NULL) || (buf == NULL) ||
        (wbuf == NULL) || ((wpath != NULL) && (el.w == NULL)))
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY,
                     "%s: rank %d: no memory for %" PRId64 " edges", path, me,
                     el.n);
    for (k = 0; (k < el.n) && (err.key == INT64_MAX); k += CHUNK_EDGES) {
        int64_t c = (el.n - k < CHUNK_EDGES) ? el.n - k : CHUNK_EDGES, i;

        if (read_at(fd, path, buf, (size_t)c * 16, (lo + k) * 16, &err) != 0)
            break;
        if ((wpath != NULL) &&
            (read_at(wfd, wpath, wbuf, (size_t)c * 4, (lo + k) * 4, &err) != 0))
            break;
        for (i = 0; i < 2 * c; i++) {
            uint64_t v   = le64toh(buf[i]);
            int64_t  off = (lo + k) * 16 + i * 8;

            if (v > (uint64_t)INT64_MAX) {
                gv__gerr_set(&err, off, GV_ERR_INVALID,
                             "%s: byte offset %" PRId64 ": vertex id %" PRIu64
                             " does not fit in int64", path, off, v);
                break;
            }
            if ((nverts >= 0) && ((int64_t)v >= nverts)) {
                gv__gerr_set(&err, off, GV_ERR_INVALID,
                             "%s: byte offset %" PRId64 ": vertex id %" PRIu64
                             " is not below the declared vertex count %"
                             PRId64, path, off, v, nverts);
                break;
            }
            if ((int64_t)v > maxid)
                maxid = (int64_t)v;
            if (i & 1)
                el.dst[k + i / 2] = (int64_t)v;
            else
                el.src[k + i / 2] = (int64_t)v;
        }
        for (i = 0; (wpath != NULL) && (i < c) && (err.key == INT64_MAX);
             i++) {
            uint32_t bits = le32toh(wbuf[i]);
            float    w;

            memcpy(&w, &bits, 4);
            if (!isfinite(w))
                gv__gerr_set(&err, (lo + k + i) * 4, GV_ERR_INVALID,
                             "%s: byte offset %" PRId64 ": weight is not a "
                             "finite number", wpath, (lo + k + i) * 4);
            el.w[k + i] = w;
        }
        gv_yield();
    }
    status = gv__gerr_agree(&err);
    if ((status == GV_OK) && (nverts == GV_GRAPH_NVERTS_AUTO)) {
        status    = gv_allreduce(&maxid, 1, GV_INT64, GV_MAX);
        el.nverts = maxid + 1;
    }
    if (status == GV_OK)
        *el_p = el;
    else
        gv_edgelist_free(&el);
out_close:
    free(buf);
    free(wbuf);
    if (fd >= 0)
        close(fd);
    if (wfd >= 0)
        close(wfd);
    return status;
}

gv_status_t gv_edgelist_load(gv_graph_fmt_t fmt, const char *path,
                             const char *weights_path, int64_t nverts,
                             gv_edgelist_t *el_p)
{
    gv__gerr_t  err;
    gv_status_t status;

    gv__gerr_init(&err);
    if ((path == NULL) || (el_p == NULL))
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "load: NULL path or output");
    else if ((nverts < 0) && (nverts != GV_GRAPH_NVERTS_AUTO))
        gv__gerr_set(&err, 0, GV_ERR_INVALID,
                     "%s: vertex count %" PRId64 " (expected >= 0 or "
                     "GV_GRAPH_NVERTS_AUTO)", path, nverts);
    else if ((fmt != GV_GRAPH_FMT_BINARY) && (weights_path != NULL))
        gv__gerr_set(&err, 0, GV_ERR_INVALID,
                     "%s: a separate weight file (%s) goes only with a binary "
                     "edge list; text formats carry weights in their lines",
                     path, weights_path);
    else if ((unsigned)fmt > GV_GRAPH_FMT_MTX)
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "%s: unknown format %d", path,
                     (int)fmt);
    status = gv__gerr_agree(&err);
    if (status != GV_OK)
        return status;
    switch (fmt) {
    case GV_GRAPH_FMT_BINARY:
        return load_binary(path, weights_path, nverts, el_p);
    case GV_GRAPH_FMT_TEXT:
        return gv__graph_load_text(path, nverts, el_p);
    default:
        return gv__graph_load_mtx(path, el_p);
    }
}
