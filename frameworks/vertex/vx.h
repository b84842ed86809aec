/* Internal to frameworks/vertex: error reporting and small helpers shared
 * by the engine and the applications. SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_FW_VERTEX_VX_H
#define GV_FW_VERTEX_VX_H

#include <grapevine/fw/vertex.h>

/** Where each neighbour of the local vertices lives: a local vertex, or a
 *  "ghost" slot standing for a vertex of another rank, where values bound
 *  for it are combined before they travel. */
typedef struct gv__vx_ghosts {
    int64_t   nl, ng;   /* local vertices, ghosts                          */
    int64_t  *gstart;   /* [P + 1] ghosts are grouped by owner rank        */
    int64_t  *gidx;     /* [ng] local index of each ghost at its owner     */
    uint32_t *out_slot; /* [nlocal_out] slot of each out-edge's target: < nl
                           a local index, else nl + the ghost; or NULL     */
    uint32_t *in_slot;  /* [nlocal_in] the same for in-edges, or NULL      */
} gv__vx_ghosts_t;

/** Build the tables of the out-edges and/or in-edges (not collective). */
gv_status_t gv__vx_ghosts_build(const gv_graph_t *g, int use_out, int use_in,
                                gv__vx_ghosts_t *gh);
void        gv__vx_ghosts_free(gv__vx_ghosts_t *gh);

/** The tables of @a g: those of gv_vx_attach() if @a g is attached (then
 *  @a own is emptied), else built into @a own (free it after the run). */
gv_status_t gv__vx_ghosts_get(const gv_graph_t *g, int use_out, int use_in,
                              gv__vx_ghosts_t *own,
                              const gv__vx_ghosts_t **gh_p);

/** Log an error of the vertex framework once, with the rank. */
void gv__vx_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** The same for an error every rank decides alike: rank 0 says it. */
void gv__vx_err0(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Combine @a v into *@a dst with a built-in operator. */
static inline void gv__vx_combine(gv_vx_op_t op, gv_vx_word_t *dst,
                                  gv_vx_word_t v,
                                  gv_vx_word_t (*sum)(gv_vx_word_t,
                                                      gv_vx_word_t))
{
    switch (op) {
    case GV_VX_SUM_F64:
        dst->f += v.f;
        break;
    case GV_VX_MIN_I64:
        if (v.i < dst->i)
            dst->i = v.i;
        break;
    case GV_VX_MIN_F64:
        if (v.f < dst->f)
            dst->f = v.f;
        break;
    case GV_VX_SUM_I64:
        dst->i += v.i;
        break;
    default:
        *dst = sum(*dst, v);
        break;
    }
}

/** The identity of @a op (for GV_VX_CUSTOM: @a custom). */
gv_vx_word_t gv__vx_identity(gv_vx_op_t op, gv_vx_word_t custom);

/** Collective: an all-reduction of @a n int64 of any length (chunked). */
gv_status_t gv__vx_allreduce_i64(int64_t *buf, size_t n, gv_redop_t op);

/** Collective: OR of bitmaps of @a nwords words in which every bit is set
 *  by at most one rank (the owner of its vertex): a sum, chunked. */
gv_status_t gv__vx_allreduce_bits(uint64_t *bits, size_t nwords);

/** Collective: GV_OK if @a rc is GV_OK on every rank, else the error of
 *  this rank (or GV_ERR_NO_MEMORY for a failure elsewhere). */
gv_status_t gv__vx_agree(gv_status_t rc);

/** Print step @a k of @a st, labelled @a label (rank 0 only). */
void gv__vx_step_print(const gv_vx_stats_t *st, int k, int label, FILE *f);

/** Collective: append step @a t (this rank's counts; summed over ranks
 *  here) to @a st, printing it if @a verbose. */
gv_status_t gv__vx_add_step(gv_vx_stats_t *st, gv_vx_step_t *t, int verbose);

#endif
