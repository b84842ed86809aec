/* Connected components by label propagation in the linear-algebra engine:
 * min-second products from the vertices whose label fell (activity
 * filtering), with shortcuts inside each leader's segment. SPDX-License-Identifier: BSD-3-Clause */
#include "linalg/la.h"

typedef struct cc_arg {
    int64_t *label;
} cc_arg_t;

static void cc_init(gv_la_segment_t *s)
{
    cc_arg_t *a = s->arg;

    for (int64_t v = 0; v < s->n; v++)
        a->label[v] = s->x[v].i = s->lo + v;
    s->nactive = s->n;
}

/* A label only falls; a vertex's label is an id of its component no
 * larger than its own, so when that id lies in this segment (already
 * updated: ids ascend) its label is a valid and smaller one: the
 * shortcut of Shiloach-Vishkin, local to the segment. */
static void cc_apply(gv_la_segment_t *s)
{
    cc_arg_t *a = s->arg;

    for (int64_t v = 0; v < s->n; v++) {
        int64_t l = a->label[v];

        if (s->y[v].i < l)
            l = s->y[v].i;
        while ((l >= s->lo) && (a->label[l - s->lo] < l))
            l = a->label[l - s->lo];
        if (l == a->label[v])
            continue;
        a->label[v] = s->x[v].i = l;
        s->active[s->nactive++] = (uint32_t)v;
    }
}

static const gv_la_program_t cc = {
    .semiring = GV_LA_MIN_SECOND,
    .x_whole  = 1,
    .init     = cc_init,
    .apply    = cc_apply,
};

gv_status_t gv_la_cc(const gv_la_matrix_t *A, int64_t *label,
                     const gv_la_opts_t *opts, gv_la_stats_t *stats_p)
{
    gv_la_opts_t o = {0};
    cc_arg_t     a = {.label = label};

    if (opts != NULL)
        o = *opts;
    o.arg       = &a;
    o.max_iters = 0;
    o.tol       = 0;
    return gv_la_run(A, &cc, &o, stats_p);
}
