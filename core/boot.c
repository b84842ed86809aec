/* Bootstrap selection and the node map every transport reads.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "core/boot.h"
#include "core/core.h"
#include "core/plugin.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The launcher's own variables tell us who started us; nothing here is a
 * GV_* variable, so reading them directly is fine. */
static int under_pmix(void)
{
    return (getenv("PMIX_RANK") != NULL) || (getenv("PMIX_NAMESPACE") != NULL);
}

static int under_mpi_launcher(void)
{
    return (getenv("OMPI_COMM_WORLD_SIZE") != NULL) ||
           (getenv("PMI_RANK") != NULL) || under_pmix();
}

int gv__boot_under_mpi_launcher(void)
{
    return under_mpi_launcher();
}

/* Every rank sends its host name (and boot id, so that containers with
 * the same host name on different machines differ); equal names are one
 * node. */
static gv_status_t map_nodes(gv_boot_t *boot)
{
    enum { NAMELEN = 96 };
    char        mine[NAMELEN], *all;
    FILE       *f;
    gv_status_t status;
    int         i, j;

    memset(mine, 0, sizeof(mine));
    gethostname(mine, 60);
    f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        size_t n = strlen(mine);
        mine[n] = '/';
        if (fgets(mine + n + 1, NAMELEN - (int)n - 2, f) == NULL)
            mine[n] = '\0';
        fclose(f);
    }
    all    = gv_malloc((size_t)boot->size * NAMELEN);
    status = gv__boot_allgather(boot, mine, NAMELEN, all);
    if (status != GV_OK) {
        gv_free(all);
        return status;
    }
    boot->node_of    = gv_malloc(sizeof(int) * (size_t)boot->size);
    boot->nnodes     = 0;
    boot->local_rank = 0;
    boot->local_size = 0;
    for (i = 0; i < boot->size; i++) {
        all[i * NAMELEN + NAMELEN - 1] = '\0'; /* untrusted: terminate */
        for (j = 0; j < i; j++)
            if (strcmp(all + i * NAMELEN, all + j * NAMELEN) == 0)
                break;
        boot->node_of[i] = (j < i) ? boot->node_of[j] : boot->nnodes++;
    }
    for (i = 0; i < boot->size; i++) {
        if (boot->node_of[i] != boot->node_of[boot->rank])
            continue;
        if (i < boot->rank)
            boot->local_rank++;
        boot->local_size++;
    }
    gv_free(all);
    return GV_OK;
}

int gv__plugins_used(void)
{
    return GV_PLUGINS;
}

#if GV_PLUGINS && (GV_HAVE_MPI || GV_HAVE_PMIX)
/* The MPI and PMIx bootstraps live in plug-ins of the shared library. */
static gv_status_t plugin_init(const char *file, const char *sym,
                               gv_boot_t *boot)
{
    gv_status_t (*init)(gv_boot_t *);
    void       *addr;
    char        why[PATH_MAX + 256];

    if (gv__plugin_sym(file, sym, &addr, why, sizeof(why)) != GV_OK) {
        gv_error("bootstrap: %s (GV_PLUGIN_DIR names the plug-in folder)",
                 why);
        return GV_ERR_UNSUPPORTED;
    }
    init = (gv_status_t (*)(gv_boot_t *))addr;
    return init(boot);
}
#endif

gv_status_t gv__boot_init(const char *transport, gv_boot_t **boot_p)
{
    gv_boot_t  *boot = gv_calloc(1, sizeof(*boot));
    gv_status_t status;

    if (gv__env.BOOT_FD_set) {
        status = gv__boot_gvrun_init(boot);
    } else if (strcmp(transport, "mpi") == 0) {
#if GV_HAVE_MPI && GV_PLUGINS
        status = plugin_init("gv_tl_mpi.so", "gv__boot_mpi_init", boot);
#elif GV_HAVE_MPI
        status = gv__boot_mpi_init(boot);
#else
        gv_error("transport 'mpi' (GV_TRANSPORT) was not built (rebuild "
                 "with MPI=1; needs libopenmpi-dev)");
        status = GV_ERR_UNSUPPORTED;
#endif
    } else if (under_pmix()) {
#if GV_HAVE_PMIX && GV_PLUGINS
        status = plugin_init("gv_boot_pmix.so", "gv__boot_pmix_init", boot);
#elif GV_HAVE_PMIX
        status = gv__boot_pmix_init(boot);
#else
        gv_error("started by a PMIx launcher, but Grapevine was built "
                 "without PMIx (rebuild with PMIX=1; needs libpmix-dev)");
        status = GV_ERR_UNSUPPORTED;
#endif
    } else {
        status = gv__boot_single_init(boot);
    }
    if (status != GV_OK)
        goto err_free;
    gv__log_rank = boot->rank;
    status       = map_nodes(boot);
    if (status != GV_OK)
        goto err_fini;
    *boot_p = boot;
    return GV_OK;

err_fini:
    boot->ops->fini(boot);
err_free:
    gv_free(boot);
    return status;
}

void gv__boot_fini(gv_boot_t *boot)
{
    if (boot == NULL)
        return;
    boot->ops->fini(boot);
    gv_free(boot->node_of);
    gv_free(boot);
}

/* ---- the node view (core/boot.h) ---------------------------------------- */

typedef struct {
    gv_boot_t *parent;
    int       *members;   /* the node's ranks in the parent, ascending */
    int        left;      /* gv__boot_view_leave() was called */
} view_t;

/* The word each rank contributes first: its length with VIEW_IN set
 * while it is in the view, 0 once it has left. */
#define VIEW_IN (1ull << 63)

/* One round of the protocol: every rank's word, then (if some rank is
 * still in) the data at the longest length. @a mine NULL: this rank has
 * left. *in_p: how many ranks are still in. */
static gv_status_t view_round(view_t *v, const void *mine, size_t len,
                              void *all, int size, int *in_p)
{
    gv_boot_t  *p = v->parent;
    uint64_t    word = (mine != NULL) ? (VIEW_IN | len) : 0, *words;
    uint8_t    *buf = NULL, *data = NULL;
    size_t      longest = 0;
    gv_status_t status;
    int         i, in = 0, bad = 0;

    words  = gv_malloc((size_t)p->size * sizeof(*words));
    status = gv__boot_allgather(p, &word, sizeof(word), words);
    if (status != GV_OK)
        goto out;
    for (i = 0; i < p->size; i++) {
        if (!(words[i] & VIEW_IN))
            continue;
        in++;
        if ((words[i] & ~VIEW_IN) > longest)
            longest = (size_t)(words[i] & ~VIEW_IN);
    }
    *in_p = in;
    if ((in == 0) || (longest == 0))
        goto check;
    if (longest > (64u << 20)) {
        gv_error("bootstrap: a rank contributes %zu bytes to a node's "
                 "exchange", longest);
        status = GV_ERR_PROTO;
        goto out;
    }
    buf  = gv_calloc(1, longest);
    data = gv_malloc((size_t)p->size * longest);
    if (mine != NULL)
        memcpy(buf, mine, len);
    status = gv__boot_allgather(p, buf, longest, data);
    if (status != GV_OK)
        goto out;
check:
    if (mine == NULL)
        goto out;
    for (i = 0; i < size; i++) {
        uint64_t w = words[v->members[i]];
        if (w != (VIEW_IN | len)) {
            gv_info("bootstrap: rank %d %s the exchange of its node",
                    v->members[i], (w & VIEW_IN) ? "contributes another "
                    "length to" : "has left");
            bad = 1;
        } else if (len != 0) {
            memcpy((uint8_t *)all + (size_t)i * len,
                   data + (size_t)v->members[i] * longest, len);
        }
    }
    if (bad)
        status = GV_ERR_IO;
out:
    gv_free(words);
    gv_free(buf);
    gv_free(data);
    return status;
}

static gv_status_t view_allgather(gv_boot_t *boot, const void *mine,
                                  size_t len, void *all)
{
    view_t *v = boot->ctx;
    int     in;

    if (v->left) {
        gv_error("bootstrap: allgather on a node view after it was left");
        return GV_ERR_STATE;
    }
    if (len >= VIEW_IN)
        return GV_ERR_INVALID;
    return view_round(v, (mine != NULL) ? mine : "", len, all, boot->size,
                      &in);
}

static gv_status_t view_barrier(gv_boot_t *boot)
{
    return gv__boot_barrier(((view_t *)boot->ctx)->parent);
}

static void view_abort(gv_boot_t *boot, int code, const char *msg)
{
    gv_boot_t *p = ((view_t *)boot->ctx)->parent;

    p->ops->abort(p, code, msg);
}

static void view_fini(gv_boot_t *boot)
{
    (void)boot;
}

static const gv_boot_ops_t view_ops = {
    .name      = "node-view",
    .allgather = view_allgather,
    .barrier   = view_barrier,
    .abort     = view_abort,
    .fini      = view_fini,
};

gv_status_t gv__boot_node_view(gv_boot_t *parent, const int *node_of,
                               gv_boot_t **view_p)
{
    gv_boot_t *b = gv_calloc(1, sizeof(*b));
    view_t    *v = gv_calloc(1, sizeof(*v));
    int        i, n = 0, me = node_of[parent->rank];

    v->parent  = parent;
    v->members = gv_malloc((size_t)parent->size * sizeof(int));
    for (i = 0; i < parent->size; i++) {
        if (node_of[i] != me)
            continue;
        if (i == parent->rank)
            b->rank = n;
        v->members[n++] = i;
    }
    b->ops        = &view_ops;
    b->ctx        = v;
    b->size       = n;
    b->local_rank = b->rank;
    b->local_size = n;
    b->node_of    = gv_calloc((size_t)n, sizeof(int));
    b->nnodes     = 1;
    memcpy(b->key, parent->key, sizeof(b->key));
    b->job_id     = parent->job_id;
    b->world_of   = v->members;
    *view_p       = b;
    return GV_OK;
}

gv_status_t gv__boot_view_leave(gv_boot_t *view)
{
    view_t     *v = view->ctx;
    gv_status_t status;
    int         in = 1;

    v->left = 1;
    do {
        status = view_round(v, NULL, 0, NULL, view->size, &in);
    } while ((status == GV_OK) && (in > 0));
    return status;
}

void gv__boot_view_free(gv_boot_t *view)
{
    view_t *v;

    if (view == NULL)
        return;
    v = view->ctx;
    gv_free(v->members);
    gv_free(v);
    gv_free(view->node_of);
    gv_free(view);
}
