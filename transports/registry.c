/* The built-in transports, best first, and selection by GV_TRANSPORT.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "transports/transport.h"
#include "core/plugin.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The static library links every built backend in; the shared library
 * loads those with libraries of their own from plug-ins (core/plugin.h). */
#if GV_PLUGINS
#define ROW(_name, _have, _file, _sym, _ops, _why)                            \
    {_name, NULL, (_have) ? _file : NULL, (_have) ? #_sym : NULL,           \
     (_have) ? NULL : _why}
#define OPS(_sym) NULL
#else
#define ROW(_name, _have, _file, _sym, _ops, _why)                            \
    {_name, _ops, NULL, NULL, (_have) ? NULL : _why}
#define OPS(_sym) &_sym
#endif

const gv_tl_entry_t gv__tl_builtin[] = {
    {"self", &gv_tl_self_ops, NULL, NULL, NULL},
    {"shm", &gv_tl_shm_ops, NULL, NULL, NULL},
#if GV_HAVE_UCX
    ROW("ucx", 1, "gv_tl_ucx.so", gv_tl_ucx_ops, OPS(gv_tl_ucx_ops), NULL),
#else
    ROW("ucx", 0, NULL, none, NULL, "needs libucx-dev; rebuild with UCX=1"),
#endif
#if GV_HAVE_OFI
    ROW("ofi", 1, "gv_tl_ofi.so", gv_tl_ofi_ops, OPS(gv_tl_ofi_ops), NULL),
#else
    ROW("ofi", 0, NULL, none, NULL, "needs libfabric-dev; rebuild with OFI=1"),
#endif
#if GV_HAVE_MPI
    ROW("mpi", 1, "gv_tl_mpi.so", gv_tl_mpi_ops, OPS(gv_tl_mpi_ops), NULL),
#else
    ROW("mpi", 0, NULL, none, NULL, "needs libopenmpi-dev; rebuild with MPI=1"),
#endif
    {"tcp", &gv_tl_tcp_ops, NULL, NULL, NULL},
    /* Composites (transports/hybrid.c): only when GV_TRANSPORT names one,
     * never by auto. */
    {"shm+tcp", &gv_tl_shm_tcp_ops, NULL, NULL, NULL},
#if GV_HAVE_UCX
    {"shm+ucx", &gv_tl_shm_ucx_ops, NULL, NULL, NULL},
#else
    {"shm+ucx", NULL, NULL, NULL, "needs libucx-dev; rebuild with UCX=1"},
#endif
#if GV_HAVE_OFI
    {"shm+ofi", &gv_tl_shm_ofi_ops, NULL, NULL, NULL},
#else
    {"shm+ofi", NULL, NULL, NULL, "needs libfabric-dev; rebuild with OFI=1"},
#endif
};
const size_t gv__tl_nbuiltin = sizeof(gv__tl_builtin) /
                               sizeof(gv__tl_builtin[0]);

/* A composite row: only when named. */
static int is_composite(const gv_tl_entry_t *e)
{
    return strchr(e->name, '+') != NULL;
}

const gv_tl_entry_t *gv__tl_entry(const char *name)
{
    size_t i;

    for (i = 0; i < gv__tl_nbuiltin; i++)
        if (strcmp(gv__tl_builtin[i].name, name) == 0)
            return &gv__tl_builtin[i];
    return NULL;
}

const gv_tl_ops_t *gv__tl_ops(const gv_tl_entry_t *e, char *why, size_t len)
{
    void *addr;

    if (e->ops != NULL)
        return e->ops;
    if (e->plugin == NULL) {
        snprintf(why, len, "not built: %s", e->why_not);
        return NULL;
    }
    if (gv__plugin_sym(e->plugin, e->sym, &addr, why, len) != GV_OK)
        return NULL;
    return (const gv_tl_ops_t *)addr;
}

void gv__tl_caps_str(uint32_t caps, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s%s%s", (caps & GV_TL_CAP_AM) ? "AM" : "",
             (caps & GV_TL_CAP_RMA) ? ",RMA" : "",
             (caps & GV_TL_CAP_ATOMIC64) ? ",ATOMIC64" : "",
             (caps & GV_TL_CAP_WAIT) ? ",WAIT" : "",
             (caps & GV_TL_CAP_WAIT_SEND) ? ",WAIT_SEND" : "",
             (caps & GV_TL_CAP_AM_ID) ? ",AM_ID" : "",
             (caps & GV_TL_CAP_WAIT_FD) ? ",WAIT_FD" : "");
}

gv_status_t gv__tl_check(const gv_tl_ops_t *ops, uint32_t caps, char *why,
                         size_t len)
{
    const char *bad = NULL;

    if (ops->version != GV_TL_OPS_VERSION)
        bad = "ops version mismatch";
    else if (!ops->init || !ops->fini || !ops->progress || !ops->am_send)
        bad = "missing mandatory entry point (init, fini, progress, am_send)";
    else if (!(caps & GV_TL_CAP_AM))
        bad = "does not declare GV_TL_CAP_AM";
    else if ((caps & GV_TL_CAP_RMA) && !(ops->put && ops->get))
        bad = "GV_TL_CAP_RMA without put and get slots";
    else if (!!(caps & GV_TL_CAP_ATOMIC64) && !ops->atomic64)
        bad = "GV_TL_CAP_ATOMIC64 without an atomic64 slot";
    else if ((caps & (GV_TL_CAP_RMA | GV_TL_CAP_ATOMIC64)) && !ops->flush)
        bad = "one-sided capabilities without a flush slot";
    else if (!!(caps & GV_TL_CAP_WAIT) && !ops->wait)
        bad = "GV_TL_CAP_WAIT without a wait slot";
    else if ((caps & GV_TL_CAP_WAIT_SEND) && !(caps & GV_TL_CAP_WAIT))
        bad = "GV_TL_CAP_WAIT_SEND without GV_TL_CAP_WAIT";
    else if ((caps & GV_TL_CAP_AM_ID) && !ops->am_send_id)
        bad = "GV_TL_CAP_AM_ID without an am_send_id slot";
    else if ((caps & GV_TL_CAP_WAIT_FD) && !(ops->wait_fd && ops->arm))
        bad = "GV_TL_CAP_WAIT_FD without wait_fd and arm slots";
    if (bad == NULL)
        return GV_OK;
    snprintf(why, len, "%s", bad);
    return GV_ERR_INVALID;
}

static gv_status_t try_open(const gv_tl_entry_t *e, const gv_tl_ops_t *ops,
                            gv_boot_t *boot, const gv_tl_params_t *params,
                            gv_tl_t **tl_p)
{
    gv_tl_t    *tl = gv_calloc(1, sizeof(*tl));
    gv_status_t status;
    char        why[128];

    tl->ops    = ops;
    tl->boot   = boot;
    tl->rank   = boot->rank;
    tl->size   = boot->size;
    tl->params = *params;
    /* ops NULL: the plug-in did not load here; this rank still takes part
     * in the agreement below, so that a plug-in missing on one node fails
     * the transport on every rank instead of splitting the job. */
    status     = (ops != NULL) ? ops->init(tl) : GV_ERR_UNSUPPORTED;
    /* Every rank must end up on the same transport: agree on the outcome
     * (a rank whose init failed after the transport's last collective would
     * otherwise leave the others using a transport it does not have). */
    {
        int32_t  mine = (int32_t)status, *all;
        int      i, bad = -1;
        all = gv_malloc(sizeof(int32_t) * (size_t)boot->size);
        if (gv__boot_allgather(boot, &mine, sizeof(mine), all) != GV_OK)
            gv_fatal("bootstrap failed while ranks agreed on transport %s",
                     e->name);
        for (i = 0; i < boot->size; i++)
            if ((all[i] != GV_OK) && (bad < 0))
                bad = i;
        gv_free(all);
        if ((bad >= 0) && (status == GV_OK)) {
            gv_info("transport %s started here but not on rank %d", e->name,
                    bad);
            ops->fini(tl);
            status = GV_ERR_UNREACHABLE;
        }
    }
    if (status != GV_OK) {
        gv_free(tl);
        return status;
    }
    if (gv__tl_check(ops, tl->attr.caps, why, sizeof(why)) != GV_OK) {
        gv_error("transport '%s' is broken: %s", e->name, why);
        ops->fini(tl);
        gv_free(tl);
        return GV_ERR_INVALID;
    }
    *tl_p = tl;
    return GV_OK;
}

static void list_available(char *buf, size_t len)
{
    size_t i, off;
    int    n = 0;

    off = (size_t)snprintf(buf, len, "built in:");
    for (i = 0; (i < gv__tl_nbuiltin) && (off < len); i++)
        if (gv__tl_builtin[i].why_not == NULL)
            off += (size_t)snprintf(buf + off, len - off, "%s %s%s",
                                    (n++ > 0) ? "," : "",
                                    gv__tl_builtin[i].name,
                                    gv__tl_builtin[i].plugin ? " (plug-in)"
                                                             : "");
    for (i = 0, n = 0; (i < gv__tl_nbuiltin) && (off < len); i++)
        if (gv__tl_builtin[i].why_not != NULL)
            off += (size_t)snprintf(buf + off, len - off, "%s %s (%s)",
                                    (n++ > 0) ? "," : "; not built:",
                                    gv__tl_builtin[i].name,
                                    gv__tl_builtin[i].why_not);
}

/* The row GV_TRANSPORT names, or NULL after logging why it cannot be used;
 * "auto" is accepted and gives NULL with *is_auto set. The row's plug-in
 * is not loaded here. */
static const gv_tl_entry_t *lookup(const char *name, int *is_auto)
{
    char   avail[1024];
    size_t i;

    *is_auto = (name[0] == '\0') || (strcmp(name, "auto") == 0);
    if (*is_auto)
        return NULL;
    for (i = 0; i < gv__tl_nbuiltin; i++) {
        const gv_tl_entry_t *e = &gv__tl_builtin[i];
        if (strcmp(e->name, name) != 0)
            continue;
        if (e->why_not != NULL) {
            gv_error("transport '%s' (GV_TRANSPORT) was not built: %s", name,
                     e->why_not);
            return NULL;
        }
        return e;
    }
    list_available(avail, sizeof(avail));
    if (strcmp(name, "shm+mpi") == 0) {
        gv_error("transport 'shm+mpi' (GV_TRANSPORT) is not offered: MPI "
                 "brings its own shared memory within a node (Open MPI's "
                 "sm/vader), so use GV_TRANSPORT=mpi; %s", avail);
        return NULL;
    }
    gv_error("transport '%s' (GV_TRANSPORT) is not available; %s", name,
             avail);
    return NULL;
}

gv_status_t gv__tl_name_check(const char *name)
{
    int is_auto;
    return ((lookup(name, &is_auto) != NULL) || is_auto) ? GV_OK
                                                         : GV_ERR_NOT_FOUND;
}

gv_status_t gv__tl_open(const char *name, gv_boot_t *boot,
                        const gv_tl_params_t *params, gv_tl_t **tl_p)
{
    const gv_tl_entry_t *e;
    const gv_tl_ops_t   *ops;
    char                 avail[1024], why[PATH_MAX + 256];
    gv_status_t          status;
    size_t               i;
    unsigned int         nerrors;
    int                  is_auto;

    if ((name[0] == '\0') || (strcmp(name, "auto") == 0)) {
        for (i = 0; i < gv__tl_nbuiltin; i++) {
            e = &gv__tl_builtin[i];
            if (e->why_not != NULL)
                continue;
            /* self is for one rank; mpi needs an MPI launcher (the MPI
             * bootstrap is chosen only when GV_TRANSPORT names it); a
             * composite is taken only when named. */
            if (((strcmp(e->name, "self") == 0) && (boot->size != 1)) ||
                (strcmp(e->name, "mpi") == 0) || is_composite(e))
                continue;
            ops = gv__tl_ops(e, why, sizeof(why));
            if (ops == NULL)
                gv_info("auto: transport %s: %s", e->name, why);
            status = try_open(e, ops, boot, params, tl_p);
            if (status == GV_OK) {
                gv_info("transport %s (auto: first of the built transports "
                        "that works here)", e->name);
                return GV_OK;
            }
            gv_info("auto: transport %s does not work here: %s", e->name,
                    gv_status_str(status));
        }
        list_available(avail, sizeof(avail));
        gv_error("no transport works here (GV_TRANSPORT=auto); %s", avail);
        return GV_ERR_UNSUPPORTED;
    }
    e = lookup(name, &is_auto);
    if (e == NULL)
        return GV_ERR_NOT_FOUND;
    ops = gv__tl_ops(e, why, sizeof(why));
    if (ops == NULL)
        gv_error("transport '%s' (GV_TRANSPORT): %s (GV_PLUGIN_DIR names "
                 "the plug-in folder)", name, why);
    nerrors = __atomic_load_n(&gv__log_nerrors, __ATOMIC_RELAXED);
    status  = try_open(e, ops, boot, params, tl_p);
    /* One line per mistake: the transport named it (a bad selector). */
    if ((status != GV_OK) && (ops != NULL) &&
        (__atomic_load_n(&gv__log_nerrors, __ATOMIC_RELAXED) == nerrors))
        gv_error("transport '%s' (GV_TRANSPORT) failed to start: %s", name,
                 gv_status_str(status));
    return status;
}

void gv__tl_close(gv_tl_t *tl)
{
    if (tl == NULL)
        return;
    tl->ops->fini(tl);
    gv_free(tl);
}
