/* Bootstrap for ranks started by gvrun: a blocking exchange with the
 * launcher over the inherited socket named by GV_BOOT_FD.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/boot.h"
#include "core/core.h"
#include "core/gvrun_proto.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    int fd;
} gvrun_boot_t;

static gv_status_t io_full(int fd, void *buf, size_t len, int writing)
{
    uint8_t *p       = buf;
    int      timeout = (int)gv__env.TIMEOUT_S * 1000;

    while (len > 0) {
        struct pollfd pfd = {.fd = fd, .events = writing ? POLLOUT : POLLIN};
        ssize_t       n;
        int           rc = poll(&pfd, 1, timeout);

        if (rc == 0) {
            gv_error("gvrun did not answer within %llu s (GV_TIMEOUT_S)",
                     (unsigned long long)gv__env.TIMEOUT_S);
            return GV_ERR_TIMEOUT;
        }
        if ((rc < 0) && (errno == EINTR))
            continue;
        n = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if ((n < 0) && (errno == EINTR))
            continue;
        if (n <= 0) {
            gv_error("lost the connection to gvrun: %s",
                     (n == 0) ? "closed" : strerror(errno));
            return GV_ERR_UNREACHABLE;
        }
        p   += n;
        len -= (size_t)n;
    }
    return GV_OK;
}

static gv_status_t send_frame(int fd, uint16_t type, const void *a,
                              size_t alen, const void *b, size_t blen)
{
    gvrun_hdr_t h = {GVRUN_MAGIC, type, 0, (uint32_t)(alen + blen)};
    gv_status_t status = io_full(fd, &h, sizeof(h), 1);

    if ((status == GV_OK) && (alen > 0))
        status = io_full(fd, (void *)a, alen, 1);
    if ((status == GV_OK) && (blen > 0))
        status = io_full(fd, (void *)b, blen, 1);
    return status;
}

static gv_status_t recv_frame(int fd, uint16_t type, void *buf, size_t len)
{
    gvrun_hdr_t h;
    gv_status_t status = io_full(fd, &h, sizeof(h), 0);

    if (status != GV_OK)
        return status;
    if ((h.magic != GVRUN_MAGIC) || (h.type != type) || (h.len != len)) {
        gv_error("unexpected message from gvrun: magic 0x%x type %u len %u "
                 "(expected type %u len %zu)", h.magic, h.type, h.len, type,
                 len);
        return GV_ERR_PROTO;
    }
    return io_full(fd, buf, len, 0);
}

static gv_status_t gvrun_allgather(gv_boot_t *boot, const void *mine,
                                   size_t len, void *all)
{
    gvrun_boot_t *g = boot->ctx;
    gv_status_t   status;

    if (len > GVRUN_MAX_LEN)
        return GV_ERR_INVALID;
    status = send_frame(g->fd, GVRUN_ALLGATHER, mine, len, NULL, 0);
    if (status != GV_OK)
        return status;
    return recv_frame(g->fd, GVRUN_RESULT, all, len * (size_t)boot->size);
}

static gv_status_t gvrun_barrier(gv_boot_t *boot)
{
    return gvrun_allgather(boot, NULL, 0, NULL);
}

static void gvrun_abort(gv_boot_t *boot, int code, const char *msg)
{
    gvrun_boot_t *g = boot->ctx;
    int32_t       c = code;

    send_frame(g->fd, GVRUN_ABORT, &c, sizeof(c), msg, strlen(msg));
}

static void gvrun_fini(gv_boot_t *boot)
{
    gvrun_boot_t *g = boot->ctx;

    send_frame(g->fd, GVRUN_FINALIZE, NULL, 0, NULL, 0);
    close(g->fd);
    gv_free(g);
}

static const gv_boot_ops_t gvrun_ops = {
    .name      = "gvrun",
    .allgather = gvrun_allgather,
    .barrier   = gvrun_barrier,
    .abort     = gvrun_abort,
    .fini      = gvrun_fini,
};

gv_status_t gv__boot_gvrun_init(gv_boot_t *boot)
{
    gvrun_boot_t *g = gv_calloc(1, sizeof(*g));
    gvrun_hello_t hello;
    gv_status_t   status;

    g->fd = (int)gv__env.BOOT_FD;
    /* If gvrun dies, so do we: no orphans. SIGTERM (not gvrun's SIGKILL)
     * so that our handler removes the files in /dev/shm first; it ends
     * the process whatever library handler was there (core/cleanup.c).
     * Should the program block or ignore it, the monitor thread exits
     * when this socket closes (core/monitor.c). */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) {
        gv_error("gvrun exited before this rank started");
        status = GV_ERR_UNREACHABLE;
        goto err;
    }
    status = recv_frame(g->fd, GVRUN_HELLO, &hello, sizeof(hello));
    if (status != GV_OK)
        goto err;
    if ((hello.size == 0) || (hello.size > (1u << 20)) ||
        (hello.rank >= hello.size)) {
        gv_error("bad hello from gvrun: rank %u size %u", hello.rank,
                 hello.size);
        status = GV_ERR_PROTO;
        goto err;
    }
    boot->ops    = &gvrun_ops;
    boot->ctx    = g;
    boot->rank   = (int)hello.rank;
    boot->size   = (int)hello.size;
    boot->job_id = hello.job_id;
    memcpy(boot->key, hello.key, sizeof(boot->key));
    return GV_OK;

err:
    close(g->fd);
    gv_free(g);
    return status;
}
