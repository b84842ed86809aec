/* Shared by the Criterion drivers of multi-rank tests: run a shell
 * command with its output captured, read a file whole, and expect lines
 * in an output. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TESTS_DRIVER_H
#define GV_TESTS_DRIVER_H

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every transport configuration the multi-rank tests run over: the one
 * list a new backend adds its rows to, and the only one. Each row is
 * (id, GV_TRANSPORT, the library's own variables, built, label); the id
 * names the row's index in drv_tls[] (enum drv_tl), for the tests of one
 * configuration. A row whose backend was not built stays, with built 0, so
 * that its tests say why they skip. */
#define DRV_TLS(X)                                                           \
    X(DRV_TCP, "tcp", "", 1, "tcp")                                          \
    X(DRV_SHM, "shm", "", 1, "shm")                                          \
    X(DRV_UCX_SM, "ucx", "UCX_TLS=sm,self", GV_HAVE_UCX, "ucx/sm")           \
    X(DRV_UCX_TCP, "ucx", "UCX_TLS=tcp,self", GV_HAVE_UCX, "ucx/tcp")        \
    X(DRV_OFI_SHM, "ofi", "FI_PROVIDER=shm", GV_HAVE_OFI, "ofi/shm")         \
    X(DRV_OFI_RXM, "ofi", "FI_PROVIDER='tcp;ofi_rxm'", GV_HAVE_OFI,          \
      "ofi/tcp;ofi_rxm")
/* The composites shm+<net> (shared memory within a node, the network
 * transport between), after the rows above: DRV_NTLS counts those only, so
 * the drivers that loop over every configuration leave these out (each
 * would add its time to every such test); the tests of the composites
 * (driver_route.c, driver_matrix.c, driver_fault.c) name them, with
 * GV_TEST_NODES for pretend nodes. */
#define DRV_TLS_COMPOSITE(X)                                                 \
    X(DRV_SHM_TCP, "shm+tcp", "", 1, "shm+tcp")                              \
    X(DRV_SHM_UCX, "shm+ucx", "UCX_TLS=tcp,self", GV_HAVE_UCX,               \
      "shm+ucx/tcp")

typedef struct {
    const char *name;  /* GV_TRANSPORT */
    const char *env;   /* the library's own variables */
    int         built;
    const char *label;
} tl_cfg_t;

#define DRV_TL_ID(_id, _name, _env, _built, _label) _id,
enum drv_tl { DRV_TLS(DRV_TL_ID) DRV_TLS_COMPOSITE(DRV_TL_ID) };
#undef DRV_TL_ID

#define DRV_TL_ROW(_id, _name, _env, _built, _label) \
    [_id] = {_name, _env, _built, _label},
static const tl_cfg_t drv_tls[] = { DRV_TLS(DRV_TL_ROW)
                                    DRV_TLS_COMPOSITE(DRV_TL_ROW) };
#undef DRV_TL_ROW
/* The rows of DRV_TLS (the composites come after them). */
#define DRV_NTLS ((size_t)DRV_SHM_TCP)

/* The file's contents (at most its last MiB, for a runaway log), or NULL;
 * free it. */
static inline char *drv_slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *out;
    long  len;

    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    len = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (len > (1 << 20)) {
        fseek(f, len - (1 << 20), SEEK_SET);
        len = 1 << 20;
    }
    out = calloc(1, (size_t)len + 1);
    if ((out != NULL) && (fread(out, 1, (size_t)len, f) != (size_t)len))
        out[0] = '\0';
    fclose(f);
    return out;
}

/* Run a shell command, output to a temporary file; returns its exit
 * status (128 + signal if killed, -1 if it could not run) and the output
 * in *out_p (free it). */
static inline int drv_run(const char *cmd, char **out_p)
{
    char path[] = "/tmp/gv-driver-XXXXXX", full[2048];
    int  fd = mkstemp(path), status;

    *out_p = NULL;
    if (fd < 0)
        return -1;
    close(fd);
    snprintf(full, sizeof(full), "%s > %s 2>&1 < /dev/null", cmd, path);
    status = system(full);
    *out_p = drv_slurp(path);
    unlink(path);
    if (status == -1)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Expect each of the @a n @a lines somewhere in @a out: every one missing
 * fails the test with "@a what \"line\"". Returns how many were missing
 * (the caller shows the output then). */
static inline int drv_expect_lines(const char *out, const char *const *lines,
                                   size_t n, const char *what)
{
    size_t i;
    int    missing = 0;

    for (i = 0; i < n; i++) {
        if (strstr(out, lines[i]) == NULL) {
            cr_expect_fail("%s \"%s\"", what, lines[i]);
            missing++;
        }
    }
    return missing;
}

#endif
