/* Writing an edge list as a binary edge file (and its weight file), each
 * rank its share at its offset. SPDX-License-Identifier: BSD-3-Clause */
#include "graph/graph_internal.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK 65536

static int write_at(int fd, const char *path, const void *buf, size_t len,
                    int64_t off, gv__gerr_t *err)
{
    size_t done = 0;

    while (done < len) {
        ssize_t n = pwrite(fd, (const char *)buf + done, len - done,
                           (off_t)(off + (int64_t)done));

        if ((n < 0) && (errno == EINTR))
            continue;
        if (n <= 0) {
            gv__gerr_set(err, -1, GV_ERR_IO, "%s: byte offset %" PRId64
                         ": write failed: %s", path, off + (int64_t)done,
                         (n < 0) ? strerror(errno) : "no progress");
            return -1;
        }
        done += (size_t)n;
    }
    return 0;
}

/* One file: rank 0 creates it at its final size, then every rank writes
 * its records (@a rec bytes each: 16 for edges, 4 for weights). */
static gv_status_t write_file(const gv_edgelist_t *el, const char *path,
                              int weights)
{
    size_t      rec = weights ? 4 : 16;
    gv__gerr_t  err;
    gv_status_t status;
    int         fd = -1;
    int64_t     k;
    uint8_t    *buf = NULL;

    gv__gerr_init(&err);
    if (gv_rank() == 0) {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
            gv__gerr_set(&err, -1, GV_ERR_IO, "%s: cannot create: %s", path,
                         strerror(errno));
        else if (ftruncate(fd, (off_t)(el->total * (int64_t)rec)) != 0)
            gv__gerr_set(&err, -1, GV_ERR_IO, "%s: cannot size to %" PRId64
                         " bytes: %s", path, el->total * (int64_t)rec,
                         strerror(errno));
    }
    status = gv__gerr_agree(&err);
    if (status != GV_OK)
        goto out;
    if (fd < 0) {
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            gv__gerr_set(&err, -1, GV_ERR_IO, "%s: rank %d cannot open it "
                         "(do the ranks share a file system?): %s", path,
                         gv_rank(), strerror(errno));
    }
    buf = malloc(CHUNK * 16);
    if (buf == NULL)
        gv__gerr_set(&err, -1, GV_ERR_NO_MEMORY, "%s: no memory", path);
    for (k = 0; (k < el->n) && (err.key == INT64_MAX); k += CHUNK) {
        int64_t c = (el->n - k < CHUNK) ? el->n - k : CHUNK, i;

        for (i = 0; i < c; i++) {
            if (weights) {
                uint32_t b;

                memcpy(&b, &el->w[k + i], 4);
                b = htole32(b);
                memcpy(buf + 4 * i, &b, 4);
            } else {
                uint64_t v[2] = {htole64((uint64_t)el->src[k + i]),
                                 htole64((uint64_t)el->dst[k + i])};

                memcpy(buf + 16 * i, v, 16);
            }
        }
        if (write_at(fd, path, buf, (size_t)c * rec,
                     (el->first + k) * (int64_t)rec, &err) != 0)
            break;
        gv_yield();
    }
    if ((fd >= 0) && (close(fd) != 0))
        gv__gerr_set(&err, -1, GV_ERR_IO, "%s: close failed: %s", path,
                     strerror(errno));
    fd = -1;
    status = gv__gerr_agree(&err);
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    return status;
}

gv_status_t gv_edgelist_write(gv_edgelist_t *el, const char *path,
                              const char *weights_path)
{
    gv__gerr_t  err;
    gv_status_t status;

    gv__gerr_init(&err);
    if ((el == NULL) || (path == NULL))
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "write: NULL list or path");
    status = gv__gerr_agree(&err);
    if (status == GV_OK)
        status = gv_edgelist_sync(el);
    if ((status == GV_OK) && (weights_path != NULL) && !el->weighted) {
        gv__gerr_set(&err, 0, GV_ERR_INVALID, "%s: the edge list has no "
                     "weights to write", weights_path);
        status = gv__gerr_agree(&err);
    }
    if (status == GV_OK)
        status = write_file(el, path, 0);
    if ((status == GV_OK) && (weights_path != NULL))
        status = write_file(el, weights_path, 1);
    return status;
}
