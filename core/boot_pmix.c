/* Bootstrap through PMIx, for ranks started by mpirun or srun with any
 * transport: rank and size from the PMIx server, exchange by put, commit,
 * fence and get. SPDX-License-Identifier: BSD-3-Clause */
#include "core/boot.h"
#include "core/core.h"

#include <pmix.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    pmix_proc_t me;
    pmix_proc_t all;   /* our namespace, every rank */
    unsigned    seq;   /* allgathers so far: each uses its own key */
} boot_pmix_t;

/* A fence in flight. PMIx completes it from its own progress thread; the
 * object is on the heap so that a fence we stopped waiting for (timeout)
 * can still complete into valid memory. */
typedef struct {
    atomic_int    done;
    pmix_status_t status;
} fence_t;

static void fence_done_cb(pmix_status_t status, void *cbdata)
{
    fence_t *f = cbdata;

    f->status = status;
    atomic_store_explicit(&f->done, 1, memory_order_release);
}

/* Fence over the whole namespace, optionally collecting what every rank
 * put, within GV_TIMEOUT_S. Waiting ranks sleep between polls: the server
 * answers through another thread and latency matters little here. */
static gv_status_t fence(boot_pmix_t *p, int collect, const char *what)
{
    fence_t    *f = gv_calloc(1, sizeof(*f));
    pmix_info_t info;
    bool        flag = true;
    uint64_t    start = gv__now_ns();
    uint64_t    limit_ns = gv__timeout_ns();
    pmix_status_t rc;

    atomic_init(&f->done, 0);
    PMIX_INFO_CONSTRUCT(&info);
    PMIx_Info_load(&info, PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
    rc = PMIx_Fence_nb(&p->all, 1, collect ? &info : NULL, collect ? 1 : 0,
                       fence_done_cb, f);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS) {
        gv_error("PMIx_Fence_nb (%s) failed: %s", what,
                 PMIx_Error_string(rc));
        gv_free(f);
        return GV_ERR_IO;
    }
    while (!atomic_load_explicit(&f->done, memory_order_acquire)) {
        uint64_t waited = gv__now_ns() - start;

        if (waited > limit_ns) {
            gv_error("PMIx fence (%s) did not complete within %llu s "
                     "(GV_TIMEOUT_S)", what,
                     (unsigned long long)gv__env.TIMEOUT_S);
            return GV_ERR_TIMEOUT; /* f is left to the late callback */
        }
        if (waited < gv__env.SPIN_US * 1000ull) {
            sched_yield();
        } else {
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
    }
    rc = f->status;
    gv_free(f);
    if (rc != PMIX_SUCCESS) {
        gv_error("PMIx fence (%s) failed: %s", what, PMIx_Error_string(rc));
        return GV_ERR_IO;
    }
    return GV_OK;
}

static gv_status_t put_blob(const char *key, const void *data, size_t len)
{
    pmix_value_t  val;
    pmix_status_t rc;

    PMIX_VALUE_CONSTRUCT(&val);
    val.type          = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)data;
    val.data.bo.size  = len;
    /* PMIx_Put copies the value; nothing to release for our pointer. */
    rc = PMIx_Put(PMIX_GLOBAL, key, &val);
    if (rc == PMIX_SUCCESS)
        rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) {
        gv_error("PMIx_Put/Commit of %s (%zu bytes) failed: %s", key, len,
                 PMIx_Error_string(rc));
        return GV_ERR_IO;
    }
    return GV_OK;
}

/* Fetch rank's blob under key; it must be exactly len bytes (anything else
 * is a protocol error, not something to copy). */
static gv_status_t get_blob(boot_pmix_t *p, int rank, const char *key,
                            void *out, size_t len)
{
    pmix_proc_t   proc;
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    gv_status_t   status = GV_OK;

    PMIX_LOAD_PROCID(&proc, p->me.nspace, (pmix_rank_t)rank);
    rc = PMIx_Get(&proc, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) {
        gv_error("PMIx_Get of %s from rank %d failed: %s", key, rank,
                 PMIx_Error_string(rc));
        return GV_ERR_IO;
    }
    if ((val->type != PMIX_BYTE_OBJECT) || (val->data.bo.size != len) ||
        ((len > 0) && (val->data.bo.bytes == NULL))) {
        gv_error("PMIx value %s from rank %d has type %d and %zu bytes "
                 "(expected %zu bytes)", key, rank, (int)val->type,
                 (val->type == PMIX_BYTE_OBJECT) ? val->data.bo.size : 0,
                 len);
        status = GV_ERR_PROTO;
    } else if (len > 0) {
        memcpy(out, val->data.bo.bytes, len);
    }
    PMIX_VALUE_RELEASE(val);
    return status;
}

static gv_status_t pmix_allgather(gv_boot_t *boot, const void *mine,
                                  size_t len, void *all)
{
    boot_pmix_t *p = boot->ctx;
    char         key[PMIX_MAX_KEYLEN];
    gv_status_t  status;
    int          i;

    snprintf(key, sizeof(key), "gv.ag.%u", p->seq++);
    status = put_blob(key, mine, len);
    if (status != GV_OK)
        return status;
    status = fence(p, 1, key);
    if (status != GV_OK)
        return status;
    for (i = 0; i < boot->size; i++) {
        status = get_blob(p, i, key, (uint8_t *)all + (size_t)i * len, len);
        if (status != GV_OK)
            return status;
    }
    return GV_OK;
}

static gv_status_t pmix_barrier(gv_boot_t *boot)
{
    return fence(boot->ctx, 0, "barrier");
}

static void pmix_abort(gv_boot_t *boot, int code, const char *msg)
{
    /* NULL procs: the whole namespace. The launcher prints msg (Open MPI
     * names the rank) and stops the other ranks. */
    fflush(stdout);
    fflush(stderr);
    PMIx_Abort((code != 0) ? code : 1, msg, NULL, 0);
}

static void pmix_fini(gv_boot_t *boot)
{
    PMIx_Finalize(NULL, 0);
    gv_free(boot->ctx);
    boot->ctx = NULL;
}

static const gv_boot_ops_t pmix_boot_ops = {
    .name      = "pmix",
    .allgather = pmix_allgather,
    .barrier   = pmix_barrier,
    .abort     = pmix_abort,
    .fini      = pmix_fini,
};

gv_status_t gv__boot_pmix_init(gv_boot_t *boot)
{
    boot_pmix_t  *p = gv_calloc(1, sizeof(*p));
    pmix_value_t *val = NULL;
    pmix_status_t rc;
    gv_status_t   status;
    /* Rank 0 draws the job key and the job id; everyone fetches them. */
    uint8_t       secret[GV_JOB_KEY_LEN + sizeof(uint64_t)];

    rc = PMIx_Init(&p->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        gv_error("PMIx_Init failed: %s (started by a launcher without a "
                 "PMIx server?)", PMIx_Error_string(rc));
        gv_free(p);
        return GV_ERR_NOT_FOUND;
    }
    PMIX_LOAD_PROCID(&p->all, p->me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&p->all, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) {
        gv_error("PMIx_Get(PMIX_JOB_SIZE) failed: %s", PMIx_Error_string(rc));
        status = GV_ERR_IO;
        goto err_fini;
    }
    if ((val->type != PMIX_UINT32) || (val->data.uint32 == 0) ||
        (val->data.uint32 > (1u << 24)) || (p->me.rank >= val->data.uint32)) {
        gv_error("PMIx job size is unusable: type %d, rank %u",
                 (int)val->type, (unsigned)p->me.rank);
        PMIX_VALUE_RELEASE(val);
        status = GV_ERR_PROTO;
        goto err_fini;
    }
    boot->size = (int)val->data.uint32;
    boot->rank = (int)p->me.rank;
    PMIX_VALUE_RELEASE(val);
    boot->ops = &pmix_boot_ops;
    boot->ctx = p;

    if (boot->rank == 0) {
        status = gv__random_bytes(secret, sizeof(secret));
        if (status == GV_OK)
            status = put_blob("gv.key", secret, sizeof(secret));
        if (status != GV_OK)
            goto err_fini;
    }
    status = fence(p, 1, "job key");
    if (status == GV_OK)
        status = get_blob(p, 0, "gv.key", secret, sizeof(secret));
    if (status != GV_OK)
        goto err_fini;
    memcpy(boot->key, secret, GV_JOB_KEY_LEN);
    memcpy(&boot->job_id, secret + GV_JOB_KEY_LEN, sizeof(boot->job_id));
    memset(secret, 0, sizeof(secret));
    gv_debug("PMIx bootstrap: rank %d of %d in namespace %s", boot->rank,
             boot->size, p->me.nspace);
    return GV_OK;

err_fini:
    PMIx_Finalize(NULL, 0);
    boot->ops = NULL;
    boot->ctx = NULL;
    gv_free(p);
    return status;
}
