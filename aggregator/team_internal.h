/* Internal interface of teams and collectives (aggregator/team.c, coll.c).
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_AGGREGATOR_TEAM_INTERNAL_H
#define GV_AGGREGATOR_TEAM_INTERNAL_H

#include "core/core.h"
#include <grapevine/am.h>
#include <grapevine/team.h>

/* Team ids agree on every member: the world is 0, the node team 1, and a
 * split takes the largest next id of the parent's members, so that no
 * member already uses it (ids only need to be unique per rank). */
#define TEAM_ID_WORLD 0u
#define TEAM_ID_NODE  1u

struct gv_team {
    uint32_t       id;
    int            rank, size;
    int           *world;    /* team rank -> world rank */
    int           *of;       /* world rank -> team rank, or -1 */
    uint32_t       seq;      /* number of the next collective started */
    int            nlive;    /* requests started and not yet released */
    int            runtime;  /* world or node team: never freed by users */
    gv_coll_req_t *active;   /* started, not complete */
};

/* The header of every collective message; the data follows. */
typedef struct {
    uint32_t team, seq;
    uint16_t step;
    uint8_t  kind, pad;
    uint32_t pad2;
    uint64_t off, total;  /* where the data goes in the step's @a total */
} coll_hdr_t;

/* Startup (after gv__am_start: registers the handler, makes the world
 * team) and shutdown (after the final barrier). */
void gv__team_init(void);
void gv__team_fini(void);

/* team.c, for coll.c */
gv_am_id_t gv__team_am_id(void);
/* Hand a request just started the messages kept for it, in arrival order
 * (through gv__tcoll_deliver). */
void       gv__team_replay(gv_coll_req_t *req, uint32_t team, uint32_t seq);

/* coll.c, for team.c */
/* The started, incomplete request of @a team numbered @a seq, or NULL. */
gv_coll_req_t *gv__tcoll_find(gv_team_t *team, uint32_t seq);
/* A message for @a req from team rank @a src. */
void gv__tcoll_deliver(gv_coll_req_t *req, int src, const coll_hdr_t *h,
                       const uint8_t *data, size_t len);

#endif
