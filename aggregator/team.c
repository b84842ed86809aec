/* Teams: the world, the node-local team, splits by color and key; the one
 * active-message handler of collectives, and the messages kept for teams
 * and collectives this rank has not reached yet.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "aggregator/team_internal.h"
#include "core/boot.h"

#include <stdio.h>

/* A message that came before its team or collective existed here. */
typedef struct kept {
    struct kept *next;
    int          src;     /* world rank */
    size_t       len;
    uint8_t      msg[];   /* header and data, as they came */
} kept_t;

static struct {
    int         up;
    gv_am_id_t  am_id;
    gv_team_t  *world, *node;
    gv_team_t **by_id;      /* live teams by id */
    uint32_t    nids;       /* entries of by_id */
    uint32_t    next_id;    /* lowest id no team of this rank uses */
    kept_t     *kept, **kept_tail;
    int        *node_of;    /* world rank -> node, as this API sees it */
    int         nnodes;
} T;

gv_am_id_t gv__team_am_id(void)
{
    return T.am_id;
}

static gv_team_t *lookup(uint32_t id)
{
    return (id < T.nids) ? T.by_id[id] : NULL;
}

static void add(gv_team_t *t)
{
    if (t->id >= T.nids) {
        uint32_t n = (t->id + 1 > 2 * T.nids) ? t->id + 1 : 2 * T.nids;

        T.by_id = gv_realloc(T.by_id, n * sizeof(*T.by_id));
        memset(T.by_id + T.nids, 0, (n - T.nids) * sizeof(*T.by_id));
        T.nids = n;
    }
    T.by_id[t->id] = t;
}

/* A team of the @a n world ranks @a members (in team order). */
static gv_team_t *team_new(uint32_t id, const int *members, int n)
{
    gv_team_t *t = gv_calloc(1, sizeof(*t));
    int        i;

    t->id    = id;
    t->size  = n;
    t->rank  = -1;
    t->world = gv_malloc((size_t)n * sizeof(int));
    t->of    = gv_malloc((size_t)gv__ctx.size * sizeof(int));
    for (i = 0; i < gv__ctx.size; i++)
        t->of[i] = -1;
    for (i = 0; i < n; i++) {
        t->world[i]          = members[i];
        t->of[members[i]]    = i;
        if (members[i] == gv__ctx.rank)
            t->rank = i;
    }
    add(t);
    return t;
}

static void team_delete(gv_team_t *t)
{
    if (lookup(t->id) == t)
        T.by_id[t->id] = NULL;
    gv_free(t->world);
    gv_free(t->of);
    gv_free(t);
}

/* ---- the handler -------------------------------------------------------- */

static void keep(int src, const void *msg, size_t len)
{
    kept_t *k = gv_malloc(sizeof(*k) + len);

    k->next = NULL;
    k->src  = src;
    k->len  = len;
    memcpy(k->msg, msg, len);
    *T.kept_tail = k;
    T.kept_tail  = &k->next;
}

static void coll_am(int src, const void *payload, size_t len, void *arg)
{
    coll_hdr_t     h;
    gv_team_t     *t;
    gv_coll_req_t *req;

    (void)arg;
    if (len < sizeof(h)) {
        gv_error("collective message of %zu bytes from rank %d: dropped",
                 len, src);
        return;
    }
    memcpy(&h, payload, sizeof(h));
    if ((h.off > h.total) || (len - sizeof(h) > h.total - h.off)) {
        gv_error("collective message from rank %d with %zu bytes at offset "
                 "%llu of %llu: dropped", src, len - sizeof(h),
                 (unsigned long long)h.off, (unsigned long long)h.total);
        return;
    }
    t = lookup(h.team);
    if ((t == NULL) || ((int32_t)(h.seq - t->seq) >= 0)) {
        /* This rank has not made the team or started the collective. */
        keep(src, payload, len);
        return;
    }
    if ((t->of[src] < 0) || ((req = gv__tcoll_find(t, h.seq)) == NULL)) {
        gv_error("collective message from rank %d for collective %u of team "
                 "%u, which %s: dropped", src, h.seq, h.team,
                 (t->of[src] < 0) ? "it is not a member of"
                                  : "is complete here");
        return;
    }
    gv__tcoll_deliver(req, t->of[src], &h,
                      (const uint8_t *)payload + sizeof(h), len - sizeof(h));
}

void gv__team_replay(gv_coll_req_t *req, uint32_t team, uint32_t seq)
{
    kept_t   **pp = &T.kept, *k;
    gv_team_t *t  = lookup(team);

    while ((k = *pp) != NULL) {
        coll_hdr_t h;

        memcpy(&h, k->msg, sizeof(h));
        if ((h.team != team) || (h.seq != seq)) {
            pp = &k->next;
            continue;
        }
        *pp = k->next;
        if (*pp == NULL)
            T.kept_tail = pp;
        if (t->of[k->src] < 0)
            gv_error("collective message from rank %d, not a member of team "
                     "%u: dropped", k->src, team);
        else
            gv__tcoll_deliver(req, t->of[k->src], &h, k->msg + sizeof(h),
                              k->len - sizeof(h));
        gv_free(k);
    }
}

/* ---- teams ---------------------------------------------------------------- */

static void nodes_setup(void)
{
    T.node_of = gv_malloc((size_t)gv__ctx.size * sizeof(int));
    gv__nodes_map(gv__ctx.boot, T.node_of, &T.nnodes);
}

void gv__team_init(void)
{
    gv_status_t status;
    int        *all;
    int         i;

    memset(&T, 0, sizeof(T));
    T.kept_tail = &T.kept;
    status      = gv_am_register(coll_am, NULL, &T.am_id);
    if (status != GV_OK)
        gv_fatal("cannot register the collectives' handler: %s",
                 gv_status_str(status));
    all = gv_malloc((size_t)gv__ctx.size * sizeof(int));
    for (i = 0; i < gv__ctx.size; i++)
        all[i] = i;
    T.world          = team_new(TEAM_ID_WORLD, all, gv__ctx.size);
    T.world->runtime = 1;
    gv_free(all);
    T.next_id = TEAM_ID_NODE + 1;
    nodes_setup();
    T.up = 1;
}

void gv__team_fini(void)
{
    uint32_t i;

    while (T.kept != NULL) {
        kept_t *k = T.kept;
        T.kept    = k->next;
        gv_free(k);
    }
    for (i = 0; i < T.nids; i++)
        if (T.by_id[i] != NULL)
            team_delete(T.by_id[i]);
    gv_free(T.by_id);
    gv_free(T.node_of);
    memset(&T, 0, sizeof(T));
}

gv_team_t *gv_team_world(void)
{
    return T.world;
}

int gv_node_of(int world_rank)
{
    if (!T.up || (world_rank < 0) || (world_rank >= gv__ctx.size))
        return -1;
    return T.node_of[world_rank];
}

int gv_nnodes(void)
{
    return T.up ? T.nnodes : 0;
}

gv_status_t gv_team_node(gv_team_t **team_p)
{
    int *members, i, n = 0, me;

    if (team_p == NULL) {
        gv_error("gv_team_node: NULL team_p");
        return GV_ERR_INVALID;
    }
    if (!T.up) {
        gv_error("gv_team_node outside gv_init() .. gv_finalize()");
        return GV_ERR_STATE;
    }
    if (T.node == NULL) {
        me      = T.node_of[gv__ctx.rank];
        members = gv_malloc((size_t)gv__ctx.size * sizeof(int));
        for (i = 0; i < gv__ctx.size; i++)
            if (T.node_of[i] == me)
                members[n++] = i;
        T.node          = team_new(TEAM_ID_NODE, members, n);
        T.node->runtime = 1;
        gv_free(members);
    }
    *team_p = T.node;
    return GV_OK;
}

int gv_team_rank(const gv_team_t *team)
{
    return (team != NULL) ? team->rank : -1;
}

int gv_team_size(const gv_team_t *team)
{
    return (team != NULL) ? team->size : 0;
}

int gv_team_world_rank(const gv_team_t *team, int team_rank)
{
    if ((team == NULL) || (team_rank < 0) || (team_rank >= team->size))
        return -1;
    return team->world[team_rank];
}

int gv_team_rank_of(const gv_team_t *team, int world_rank)
{
    if ((team == NULL) || (world_rank < 0) || (world_rank >= gv__ctx.size))
        return -1;
    return team->of[world_rank];
}

/* One member's entry in a split's all-gather. */
typedef struct {
    int64_t color, key, next_id, rank;
} split_entry_t;

static int entry_cmp(const void *a, const void *b)
{
    const split_entry_t *x = a, *y = b;

    if (x->key != y->key)
        return (x->key < y->key) ? -1 : 1;
    return (x->rank < y->rank) ? -1 : (x->rank > y->rank);
}

gv_status_t gv_team_split(gv_team_t *parent, int color, int key,
                          gv_team_t **team_p)
{
    split_entry_t  mine, *all;
    gv_status_t    status;
    int64_t        id = 0;
    int            i, n = 0, *members;

    if ((parent == NULL) || (team_p == NULL) || (color < GV_TEAM_NO_COLOR)) {
        gv_error("gv_team_split: %s (color %d; a color is >= 0 or "
                 "GV_TEAM_NO_COLOR)", (parent == NULL) ? "NULL parent"
                 : (team_p == NULL) ? "NULL team_p" : "bad color", color);
        return GV_ERR_INVALID;
    }
    if (!T.up) {
        gv_error("gv_team_split outside gv_init() .. gv_finalize()");
        return GV_ERR_STATE;
    }
    *team_p      = NULL;
    mine.color   = color;
    mine.key     = key;
    mine.next_id = T.next_id;
    mine.rank    = parent->rank;
    all          = gv_malloc((size_t)parent->size * sizeof(*all));
    status = gv_team_allgather(parent, &mine, all, sizeof(mine));
    if (status != GV_OK) {
        gv_free(all);
        return status;
    }
    for (i = 0; i < parent->size; i++)
        if (all[i].next_id > id)
            id = all[i].next_id;
    if (id >= UINT32_MAX) {
        gv_free(all);
        gv_error("gv_team_split: team ids exhausted");
        return GV_ERR_NO_RESOURCE;
    }
    T.next_id = (uint32_t)id + 1;
    if (color == GV_TEAM_NO_COLOR) {
        gv_free(all);
        return GV_OK;
    }
    for (i = 0; i < parent->size; i++)
        if (all[i].color == color)
            all[n++] = all[i];
    qsort(all, (size_t)n, sizeof(*all), entry_cmp);
    members = gv_malloc((size_t)n * sizeof(int));
    for (i = 0; i < n; i++)
        members[i] = parent->world[all[i].rank];
    *team_p = team_new((uint32_t)id, members, n);
    gv_free(members);
    gv_free(all);
    return GV_OK;
}

gv_status_t gv_team_free(gv_team_t *team)
{
    if ((team == NULL) || team->runtime)
        return GV_OK;
    if (team->nlive > 0) {
        gv_error("gv_team_free: %d collective(s) of the team not yet tested "
                 "complete or waited for", team->nlive);
        return GV_ERR_STATE;
    }
    team_delete(team);
    return GV_OK;
}
