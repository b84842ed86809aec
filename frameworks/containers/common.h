/* What the containers share: the container table (a collective create
 * gives the same small id on every rank, which messages carry), the
 * active-message handlers registered once per process, reply tokens for
 * blocking operations, and the hashes. Internal to frameworks/containers.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_FW_CONTAINERS_COMMON_H
#define GV_FW_CONTAINERS_COMMON_H

#include <grapevine.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Log an error with the rank in front, as the runtime's log lines do; the
 * message starts with the public function it concerns. */
#define fw_error(_fmt, ...)                                                   \
    fprintf(stderr, "[%04d] ERROR %s:%d: " _fmt "\n", gv_rank(), __FILE__,    \
            __LINE__, ## __VA_ARGS__)

enum { FW_KIND_HASHMAP = 1, FW_KIND_BAG };

/* Handler ids, valid once gv__fw_start() returned GV_OK. */
extern gv_am_id_t gv__fw_am_map;    /* a hash-map operation at its home  */
extern gv_am_id_t gv__fw_am_reply;  /* a blocking operation's answer     */
extern gv_am_id_t gv__fw_am_bag;    /* elements appended to a bag        */

/* Collective: register the handlers (first time in this process: every
 * rank does it at the same point, then a barrier) and give @a obj the
 * lowest free id, the same on every rank since creates and destroys are
 * collective. */
gv_status_t gv__fw_add(void *obj, int kind, uint16_t *id_p);
void        gv__fw_remove(uint16_t id);
/* The object of that id and kind, or NULL (logged: the id came off the
 * wire). */
void *gv__fw_get(uint16_t id, int kind);

/* Handlers, in their containers' files. */
void gv__hashmap_am(int src, const void *payload, size_t len, void *arg);
void gv__bag_am(int src, const void *payload, size_t len, void *arg);

/* Reply tokens: a blocking request carries one; the reply names it, and
 * the token is checked before its future is touched. */
uint64_t gv__fw_token_new(gv_future_t *f);

/* The event of an asynchronous operation (NULL: the default). */
static inline uint32_t gv__fw_gce_id(gv_gce_t *gce)
{
    return ((gce == NULL) ? gv_gce_default() : gce)->id;
}

/* Complete @a n operations in the event named by id (at a home). */
static inline void gv__fw_complete(uint32_t gce_id, int64_t n)
{
    gv_gce_t g = {gce_id};
    gv_gce_complete(&g, n);
}

/* splitmix64's finaliser: a bijection with full avalanche. */
static inline uint64_t gv__fw_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Hash of @a len bytes (8 at a time, then the tail), seeded by length. */
static inline uint64_t gv__fw_hash(const void *p, size_t len)
{
    const uint8_t *b = p;
    uint64_t       h = 0x9e3779b97f4a7c15ull ^ len, w;

    if (len == 8) {
        memcpy(&w, b, 8);
        return gv__fw_mix64(w ^ 0x9e3779b97f4a7c15ull);
    }
    while (len >= 8) {
        memcpy(&w, b, 8);
        h = gv__fw_mix64(h ^ w) + 0x632be59bd9b4e019ull;
        b += 8;
        len -= 8;
    }
    if (len > 0) {
        w = 0;
        memcpy(&w, b, len);
        h = gv__fw_mix64(h ^ w ^ ((uint64_t)len << 56));
    }
    return gv__fw_mix64(h);
}

#endif
