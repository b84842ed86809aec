/* The containers' shared parts: the table of live containers, handler
 * registration, reply tokens. SPDX-License-Identifier: BSD-3-Clause
 *
 * Handlers are registered the first time a container is created in this
 * process, by every rank at the same point (creates are collective), then
 * a barrier: grapevine/am.h allows registering after gv_init if a barrier
 * separates registration from the first message with the new ids (no
 * container exists before it, so no message of ours can be in flight and
 * gv_coll_barrier suffices; gv_barrier's quiescence is not needed). The
 * runtime keeps its handler table across gv_finalize/gv_init, so the ids
 * stay valid for the life of the process.
 */
#include "containers/common.h"

#include <stdlib.h>

#define FW_MAX_OBJS 65535

gv_am_id_t gv__fw_am_map, gv__fw_am_reply, gv__fw_am_bag;

static int registered;

static struct {
    void   **obj;
    uint8_t *kind;
    unsigned n, cap;
} tab;

/* Reply tokens: slot index in the low 32 bits, a generation above. */
static struct {
    gv_future_t **f;
    uint32_t     *gen;
    uint32_t     *free_list;
    unsigned      nfree, n, cap;
} tok;

static void reply_am(int src, const void *payload, size_t len, void *arg)
{
    struct {
        uint64_t token;
        int32_t  status;
        uint32_t len;
    } h;
    uint32_t     slot, gen;
    gv_future_t *f;

    if (len < sizeof(h)) {
        fw_error("short container reply from rank %d (%zu bytes)", src, len);
        return;
    }
    memcpy(&h, payload, sizeof(h));
    slot = (uint32_t)h.token;
    gen  = (uint32_t)(h.token >> 32);
    if ((slot >= tok.n) || (tok.f[slot] == NULL) || (tok.gen[slot] != gen) ||
        (h.len != len - sizeof(h))) {
        fw_error("container reply from rank %d names no waiting request",
                 src);
        return;
    }
    f           = tok.f[slot];
    tok.f[slot] = NULL;
    tok.gen[slot]++;
    tok.free_list[tok.nfree++] = slot;
    gv_future_fulfil(f, (gv_status_t)h.status, (const uint8_t *)payload +
                     sizeof(h), h.len);
}

uint64_t gv__fw_token_new(gv_future_t *f)
{
    uint32_t slot;

    if (tok.nfree > 0) {
        slot = tok.free_list[--tok.nfree];
    } else {
        if (tok.n == tok.cap) {
            unsigned cap = (tok.cap == 0) ? 256 : 2 * tok.cap;
            void    *a = realloc(tok.f, cap * sizeof(*tok.f));
            void    *b = realloc(tok.gen, cap * sizeof(*tok.gen));
            void    *c = realloc(tok.free_list, cap * sizeof(uint32_t));
            if ((a == NULL) || (b == NULL) || (c == NULL))
                gv_abort(1, "containers: out of local memory for %u "
                         "outstanding requests", cap);
            tok.f = a;
            tok.gen = b;
            tok.free_list = c;
            tok.cap = cap;
        }
        slot          = tok.n++;
        tok.gen[slot] = 1;
    }
    tok.f[slot] = f;
    return ((uint64_t)tok.gen[slot] << 32) | slot;
}

static gv_status_t start(void)
{
    if (registered)
        return GV_OK;
    if ((gv_am_register(gv__hashmap_am, NULL, &gv__fw_am_map) != GV_OK) ||
        (gv_am_register(reply_am, NULL, &gv__fw_am_reply) != GV_OK) ||
        (gv_am_register(gv__bag_am, NULL, &gv__fw_am_bag) != GV_OK))
        return GV_ERR_NO_RESOURCE; /* gv_am_register logged it */
    registered = 1;
    /* No rank sends with the new ids before every rank has them. */
    gv_coll_barrier();
    return GV_OK;
}

gv_status_t gv__fw_add(void *obj, int kind, uint16_t *id_p)
{
    gv_status_t status = start();
    unsigned    i;

    if (status != GV_OK)
        return status;
    for (i = 0; i < tab.n; i++)
        if (tab.obj[i] == NULL)
            break;
    if (i == tab.n) {
        if (tab.n == FW_MAX_OBJS) {
            fw_error("gv_hashmap_create, gv_bag_create: %d containers are alive: destroy some first",
                     FW_MAX_OBJS);
            return GV_ERR_NO_RESOURCE;
        }
        if (tab.n == tab.cap) {
            unsigned cap = (tab.cap == 0) ? 16 : 2 * tab.cap;
            void    *a = realloc(tab.obj, cap * sizeof(*tab.obj));
            void    *b = realloc(tab.kind, cap);
            if ((a == NULL) || (b == NULL))
                gv_abort(1, "containers: out of local memory");
            tab.obj = a;
            tab.kind = b;
            tab.cap = cap;
        }
        tab.n++;
    }
    tab.obj[i]  = obj;
    tab.kind[i] = (uint8_t)kind;
    *id_p       = (uint16_t)i;
    return GV_OK;
}

void gv__fw_remove(uint16_t id)
{
    if (id < tab.n)
        tab.obj[id] = NULL;
}

void *gv__fw_get(uint16_t id, int kind)
{
    if ((id >= tab.n) || (tab.obj[id] == NULL) || (tab.kind[id] != kind)) {
        fw_error("a message names container %u, which is not a live %s "
                 "here", id, (kind == FW_KIND_HASHMAP) ? "hash map" : "bag");
        return NULL;
    }
    return tab.obj[id];
}
