/* Bootstrap through MPI itself, for the mpi transport: rank and size from
 * a duplicate of MPI_COMM_WORLD, exchange and barrier as MPI collectives.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/boot.h"
#include "core/boot_mpi.h"
#include "core/core.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    MPI_Comm  comm;
    int       we_initialized; /* we called MPI_Init, so we finalize */
    pthread_t main_thread;    /* the one that calls MPI */
} boot_mpi_t;

/* The transport finds the communicator here (core/boot_mpi.h). */
static MPI_Comm boot_comm = MPI_COMM_NULL;

MPI_Comm gv__boot_mpi_comm(void)
{
    return boot_comm;
}

const char *gv__mpi_strerror(int rc, char *buf, size_t len)
{
    char text[MPI_MAX_ERROR_STRING];
    int  n = 0;

    if (MPI_Error_string(rc, text, &n) != MPI_SUCCESS)
        snprintf(buf, len, "MPI error %d", rc);
    else
        snprintf(buf, len, "%.*s", n, text);
    return buf;
}

/* Complete a non-blocking collective, within GV_TIMEOUT_S. Blocking
 * collectives would do, but they spin without a bound; this way a rank
 * that never arrives shows up as a timeout with a message, and waiting
 * ranks give their core away (tests oversubscribe). */
gv_status_t gv__mpi_wait(MPI_Request *req, const char *what)
{
    uint64_t start    = gv__now_ns();
    uint64_t limit_ns = gv__timeout_ns();
    uint64_t spin_ns  = gv__env.SPIN_US * 1000ull;
    char     err[MPI_MAX_ERROR_STRING + 32];
    int      done = 0, rc;

    for (;;) {
        uint64_t waited;

        rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS) {
            gv_error("MPI %s failed: %s", what,
                     gv__mpi_strerror(rc, err, sizeof(err)));
            return GV_ERR_IO;
        }
        if (done)
            return GV_OK;
        waited = gv__now_ns() - start;
        if (waited > limit_ns) {
            gv_error("MPI %s did not complete within %llu s (GV_TIMEOUT_S)",
                     what, (unsigned long long)gv__env.TIMEOUT_S);
            return GV_ERR_TIMEOUT;
        }
        if (waited > spin_ns) {
            /* Past the spin budget: let a peer rank have the core. */
            struct timespec ts = {0, (waited > 1000 * spin_ns) ? 200000 : 0};
            if (ts.tv_nsec == 0)
                sched_yield();
            else
                nanosleep(&ts, NULL);
        }
    }
}

static gv_status_t mpi_allgather(gv_boot_t *boot, const void *mine,
                                 size_t len, void *all)
{
    boot_mpi_t *b = boot->ctx;
    MPI_Request req;
    uint8_t    *tmp;
    gv_status_t status;
    char        err[MPI_MAX_ERROR_STRING + 32];
    int         rc;

    if (len > (size_t)(1 << 30)) {
        gv_error("allgather of %zu bytes per rank is too large", len);
        return GV_ERR_INVALID;
    }
    /* Gather into our own buffer: if the collective times out, MPI may
     * still write into it later, so it must not be the caller's. */
    tmp = gv_malloc(len * (size_t)boot->size);
    rc  = MPI_Iallgather(mine, (int)len, MPI_BYTE, tmp, (int)len, MPI_BYTE,
                         b->comm, &req);
    if (rc != MPI_SUCCESS) {
        gv_error("MPI_Iallgather failed: %s",
                 gv__mpi_strerror(rc, err, sizeof(err)));
        gv_free(tmp);
        return GV_ERR_IO;
    }
    status = gv__mpi_wait(&req, "allgather");
    if (status == GV_OK) {
        memcpy(all, tmp, len * (size_t)boot->size);
        gv_free(tmp);
    }
    /* else: tmp is leaked on purpose (see above); the job is ending. */
    return status;
}

static gv_status_t mpi_barrier(gv_boot_t *boot)
{
    boot_mpi_t *b = boot->ctx;
    MPI_Request req;
    char        err[MPI_MAX_ERROR_STRING + 32];
    int         rc;

    rc = MPI_Ibarrier(b->comm, &req);
    if (rc != MPI_SUCCESS) {
        gv_error("MPI_Ibarrier failed: %s",
                 gv__mpi_strerror(rc, err, sizeof(err)));
        return GV_ERR_IO;
    }
    return gv__mpi_wait(&req, "barrier");
}

static void mpi_abort(gv_boot_t *boot, int code, const char *msg)
{
    boot_mpi_t *b = boot->ctx;

    /* The core has printed msg with our rank; mpirun prints that this rank
     * called MPI_Abort and stops the other ranks. The monitor thread
     * (core/monitor.c) must not call MPI (MPI_THREAD_SINGLE, and the main
     * thread is inside MPI): it exits, and mpirun stops the job for a rank
     * that exited non-zero. */
    fflush(stdout);
    fflush(stderr);
    if (!pthread_equal(pthread_self(), b->main_thread))
        _exit((code != 0) ? code : 1);
    MPI_Abort(b->comm, (code != 0) ? code : 1);
}

static void mpi_fini(gv_boot_t *boot)
{
    boot_mpi_t *b = boot->ctx;

    boot_comm = MPI_COMM_NULL;
    MPI_Comm_free(&b->comm);
    if (b->we_initialized)
        MPI_Finalize();
    gv_free(b);
    boot->ctx = NULL;
}

static const gv_boot_ops_t mpi_boot_ops = {
    .name      = "mpi",
    .allgather = mpi_allgather,
    .barrier   = mpi_barrier,
    .abort     = mpi_abort,
    .fini      = mpi_fini,
};

gv_status_t gv__boot_mpi_init(gv_boot_t *boot)
{
    boot_mpi_t *b = gv_calloc(1, sizeof(*b));
    /* Rank 0 draws the job key and the job id; everyone gets them. */
    uint8_t     secret[GV_JOB_KEY_LEN + sizeof(uint64_t)];
    MPI_Request req;
    gv_status_t status;
    char        err[MPI_MAX_ERROR_STRING + 32];
    int         inited = 0, finalized = 0, provided, rc;

    b->main_thread = pthread_self();
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (finalized) {
        gv_error("MPI was already finalized; the mpi transport needs an "
                 "active MPI library");
        status = GV_ERR_STATE;
        goto err_free;
    }
    if (!inited) {
#if defined(OPEN_MPI) && (OMPI_MAJOR_VERSION == 4)
        /* Open MPI 4.1's osc/rdma over btl/vader with CMA single-copy
         * dereferences a peer's window address locally and crashes (seen
         * with 4.1.4 on put, get and compare-and-swap in plain MPI
         * programs). Unless the user picked osc components (mpirun --mca
         * osc ... sets this variable), leave rdma out: osc/sm serves a
         * window within a node, osc/ucx or osc/pt2pt across nodes. */
        if (getenv("OMPI_MCA_osc") == NULL)
            setenv("OMPI_MCA_osc", "^rdma", 0);
#endif
        /* Grapevine calls MPI from one thread: its only other thread, the
         * monitor (core/monitor.c), makes no MPI call. Open MPI
         * takes a mutex for every match, receive start and send at any
         * level above MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED included. A
         * program that runs threads of its own initializes MPI itself,
         * before gv_init, at the level it needs. */
        rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided);
        if (rc != MPI_SUCCESS) {
            gv_error("MPI_Init_thread failed: %s",
                     gv__mpi_strerror(rc, err, sizeof(err)));
            status = GV_ERR_IO;
            goto err_free;
        }
        b->we_initialized = 1;
    }
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &b->comm);
    if (rc != MPI_SUCCESS) {
        gv_error("MPI_Comm_dup failed: %s",
                 gv__mpi_strerror(rc, err, sizeof(err)));
        status = GV_ERR_IO;
        goto err_finalize;
    }
    /* Errors come back as codes that we translate, instead of MPI's
     * default of aborting the job from inside the library. */
    MPI_Comm_set_errhandler(b->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(b->comm, &boot->rank);
    MPI_Comm_size(b->comm, &boot->size);
    boot->ops = &mpi_boot_ops;
    boot->ctx = b;

    memset(secret, 0, sizeof(secret));
    if (boot->rank == 0) {
        status = gv__random_bytes(secret, sizeof(secret));
        if (status != GV_OK)
            goto err_comm;
    }
    rc = MPI_Ibcast(secret, (int)sizeof(secret), MPI_BYTE, 0, b->comm, &req);
    if (rc != MPI_SUCCESS) {
        gv_error("MPI_Ibcast failed: %s",
                 gv__mpi_strerror(rc, err, sizeof(err)));
        status = GV_ERR_IO;
        goto err_comm;
    }
    status = gv__mpi_wait(&req, "broadcast of the job key");
    if (status != GV_OK)
        goto err_comm;
    memcpy(boot->key, secret, GV_JOB_KEY_LEN);
    memcpy(&boot->job_id, secret + GV_JOB_KEY_LEN, sizeof(boot->job_id));
    memset(secret, 0, sizeof(secret));
    boot_comm = b->comm;
    gv_debug("MPI bootstrap: rank %d of %d", boot->rank, boot->size);
    return GV_OK;

err_comm:
    MPI_Comm_free(&b->comm);
err_finalize:
    if (b->we_initialized)
        MPI_Finalize();
err_free:
    boot->ops = NULL;
    boot->ctx = NULL;
    gv_free(b);
    return status;
}
