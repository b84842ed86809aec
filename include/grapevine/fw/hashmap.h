/** @file
 * Grapevine frameworks: a distributed hash map (and set).
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * Keys and values have fixed sizes given at creation (a set is a map with
 * val_size 0). A key lives at its home rank, chosen by a hash of its bytes
 * (gv_hashmap_home); each rank keeps its keys in its own open-addressing
 * table in local memory, which doubles when it fills, on that rank alone:
 * the map grows without a global stop. Every operation on a key runs at
 * its home, one at a time: atomic without locks. In maps of 8-byte keys
 * and values of at most 8 bytes, asynchronous inserts, combines and
 * erases wait at the home in a short queue (at most 64 per map) and are
 * applied in groups, in the order they arrived, at the latest at the end
 * of that rank's progress poll, so that their cache misses overlap;
 * everything that reads or changes the table applies the queue first.
 *
 * Operations travel as small active messages that the aggregator packs
 * into few transport messages; the aggregator's credits bound what is in
 * flight (a sender that runs out waits, progressing), so the map buffers
 * nothing of its own. Asynchronous forms return at once and are counted in
 * a gv_gce_t (NULL: the default event): gv_gce_wait() returns once they
 * have run at their homes. Blocking forms suspend the calling worker until
 * the home has answered (other workers run meanwhile). Messages from one
 * rank to another arrive in order, so one worker's operations on one key
 * apply in the order it issued them.
 *
 * One event for all ranks: gv_gce_wait(e) covers what was enrolled in e
 * on every rank, so a collective phase of async operations uses one event
 * that every rank knows (gv_gce_default(), or one rank's gv_gce_create()
 * passed to the others with gv_broadcast). An event each rank made for
 * itself covers only that rank's operations: after waiting on it, a rank
 * still needs a barrier before it reads what other ranks sent it.
 *
 * Create, destroy, gv_hashmap_forall and gv_hashmap_size are collective
 * (every rank, same order, one worker); the rest may be called from any
 * worker on any rank, and the async forms also from a visitor or combiner
 * running at a home. The _i64 forms take an int64 key by value (the map's
 * key_size must be 8): the fast path of integer-keyed maps.
 *
 *   gv_hashmap_opts_t o = {.combine = gv_hashmap_sum_i64};
 *   gv_hashmap_create(8, 8, &o, &m);
 *   gv_hashmap_combine_i64_async(m, word_id, &one, &gce);  // word count
 *   gv_gce_wait(&gce);
 *   gv_hashmap_lookup_i64(m, word_id, &count);             // GV_OK, or
 *                                                          // GV_ERR_NOT_FOUND
 */
#ifndef GRAPEVINE_FW_HASHMAP_H
#define GRAPEVINE_FW_HASHMAP_H

#include <grapevine.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A distributed hash map (each rank holds its own handle of it). */
typedef struct gv_hashmap gv_hashmap_t;

/** Most bytes of a key, of a value, and of a visitor's arguments. */
#define GV_HASHMAP_KEY_MAX   256
/** Most bytes of a value. */
#define GV_HASHMAP_VAL_MAX   1024
/** Most bytes of a visitor's arguments. */
#define GV_HASHMAP_ARGS_MAX  256

/**
 * Combiner of gv_hashmap_combine*(): fold @a incoming into the stored
 * @a value (both val_size bytes, @a value aligned to 8). Runs at the
 * home; must not block.
 */
typedef void (*gv_hashmap_combine_fn_t)(void *value, const void *incoming,
                                        size_t val_size);

/** Built-in combiners for 8-byte values: int64 sum, min, max; double sum. */
void gv_hashmap_sum_i64(void *value, const void *incoming, size_t val_size);
/** Built-in combiner: int64 minimum. */
void gv_hashmap_min_i64(void *value, const void *incoming, size_t val_size);
/** Built-in combiner: int64 maximum. */
void gv_hashmap_max_i64(void *value, const void *incoming, size_t val_size);
/** Built-in combiner: double sum. */
void gv_hashmap_sum_f64(void *value, const void *incoming, size_t val_size);

/**
 * Visitor of gv_hashmap_visit*(), run at the key's home with the home's
 * handle @a map, the @a key, its @a value (NULL if the key is absent;
 * writable, aligned to 8) and a copy of the caller's @a args (no alignment
 * promised). Must not block; may issue async operations on any container
 * and use gv_hashmap_local_*() on @a map.
 */
typedef void (*gv_hashmap_visit_fn_t)(gv_hashmap_t *map, const void *key,
                                      void *value, const void *args,
                                      size_t len);

/** Body of gv_hashmap_forall(): one entry, at its home (value writable). */
typedef void (*gv_hashmap_entry_fn_t)(gv_hashmap_t *map, const void *key,
                                      void *value, void *arg);

/** Options of gv_hashmap_create(); zero-initialise. */
typedef struct gv_hashmap_opts {
    gv_hashmap_combine_fn_t combine;  /**< for gv_hashmap_combine*(); NULL:
                                           combining is an error */
    int64_t capacity;                 /**< expected keys in all (a hint:
                                           the tables start at about
                                           capacity / P); 0: small */
} gv_hashmap_opts_t;

/**
 * Create a map. Collective; @a opts may be NULL. The combiner is this
 * rank's function pointer (every rank passes the same function).
 * @param [out] map_p  released by gv_hashmap_destroy().
 * @return GV_OK; GV_ERR_INVALID (key_size 0 or over GV_HASHMAP_KEY_MAX,
 *         val_size over GV_HASHMAP_VAL_MAX); GV_ERR_NO_RESOURCE (65535
 *         containers alive).
 */
gv_status_t gv_hashmap_create(size_t key_size, size_t val_size,
                              const gv_hashmap_opts_t *opts,
                              gv_hashmap_t **map_p);

/** Free the map (collective); no operation on it may be in flight. */
void gv_hashmap_destroy(gv_hashmap_t *map);

/** Home rank of @a key (key_size bytes), and of an int64 key. */
int gv_hashmap_home(const gv_hashmap_t *map, const void *key);
/** Home rank of an int64 key. */
int gv_hashmap_home_i64(const gv_hashmap_t *map, int64_t key);

/* ---- asynchronous, aggregated: counted in @a gce ------------------------ */

/** Insert @a key with @a val, replacing the value of a present key. */
gv_status_t gv_hashmap_insert_async(gv_hashmap_t *map, const void *key,
                                    const void *val, gv_gce_t *gce);
/** Insert @a key with @a val if absent, else combine @a val into its value
 *  with the map's combiner (the MapReduce combiner). */
gv_status_t gv_hashmap_combine_async(gv_hashmap_t *map, const void *key,
                                     const void *val, gv_gce_t *gce);
/** Erase @a key if present. */
gv_status_t gv_hashmap_erase_async(gv_hashmap_t *map, const void *key,
                                   gv_gce_t *gce);
/** Run fn(map, key, value or NULL, args, len) at the key's home; @a len at
 *  most GV_HASHMAP_ARGS_MAX. @a fn is code of this program (it is shipped
 *  as a gv_fnref_t). */
gv_status_t gv_hashmap_visit_async(gv_hashmap_t *map, const void *key,
                                   gv_hashmap_visit_fn_t fn, const void *args,
                                   size_t len, gv_gce_t *gce);
/** Asynchronous lookup: @a f is fulfilled with the value, copied to
 *  @a val_buf, with status GV_OK, or GV_ERR_NOT_FOUND if the key is
 *  absent. @a val_buf and @a f stay valid until gv_future_wait(f). */
gv_status_t gv_hashmap_lookup_async(gv_hashmap_t *map, const void *key,
                                    void *val_buf, gv_future_t *f);

/** The same with an int64 key (key_size 8). */
gv_status_t gv_hashmap_insert_i64_async(gv_hashmap_t *map, int64_t key,
                                        const void *val, gv_gce_t *gce);
/** gv_hashmap_combine_async() with an int64 key. */
gv_status_t gv_hashmap_combine_i64_async(gv_hashmap_t *map, int64_t key,
                                         const void *val, gv_gce_t *gce);
/** gv_hashmap_erase_async() with an int64 key. */
gv_status_t gv_hashmap_erase_i64_async(gv_hashmap_t *map, int64_t key,
                                       gv_gce_t *gce);
/** gv_hashmap_visit_async() with an int64 key. */
gv_status_t gv_hashmap_visit_i64_async(gv_hashmap_t *map, int64_t key,
                                       gv_hashmap_visit_fn_t fn,
                                       const void *args, size_t len,
                                       gv_gce_t *gce);
/** gv_hashmap_lookup_async() with an int64 key. */
gv_status_t gv_hashmap_lookup_i64_async(gv_hashmap_t *map, int64_t key,
                                        void *val_buf, gv_future_t *f);

/* ---- blocking (workers): return once the home has done it -------------- */

/** Insert @a key with @a val (replacing a present value) and wait. */
gv_status_t gv_hashmap_insert(gv_hashmap_t *map, const void *key,
                              const void *val);
/** Insert or combine (as gv_hashmap_combine_async()) and wait. */
gv_status_t gv_hashmap_combine(gv_hashmap_t *map, const void *key,
                               const void *val);
/** @return GV_OK, or GV_ERR_NOT_FOUND if the key was absent. */
gv_status_t gv_hashmap_erase(gv_hashmap_t *map, const void *key);
/** @return GV_OK (value copied to @a val_buf; may be NULL for a set), or
 *  GV_ERR_NOT_FOUND. */
gv_status_t gv_hashmap_lookup(gv_hashmap_t *map, const void *key,
                              void *val_buf);
/** Run the visitor at the home and wait until it has run. */
gv_status_t gv_hashmap_visit(gv_hashmap_t *map, const void *key,
                             gv_hashmap_visit_fn_t fn, const void *args,
                             size_t len);
/** gv_hashmap_lookup() with an int64 key. */
gv_status_t gv_hashmap_lookup_i64(gv_hashmap_t *map, int64_t key,
                                  void *val_buf);

/* ---- at the home ---------------------------------------------------------- */

/** Value of @a key if it is in this rank's table (NULL if absent or homed
 *  elsewhere). Valid until this rank's table next changes. */
void *gv_hashmap_local_find(gv_hashmap_t *map, const void *key);
/** Insert or overwrite @a key (homed on this rank) directly; returns its
 *  value's location (as gv_hashmap_local_find). NULL if homed elsewhere. */
void *gv_hashmap_local_insert(gv_hashmap_t *map, const void *key,
                              const void *val);
/** Entries in this rank's table. */
int64_t gv_hashmap_local_size(gv_hashmap_t *map);

/* ---- collective ------------------------------------------------------------ */

/**
 * Collective: every rank runs body(map, key, value, arg) on each entry of
 * its own table as a parallel loop, then waits on @a gce if it is not NULL
 * (covering async operations the bodies issued), else meets the other
 * ranks in a barrier. The bodies must not insert into or erase from this
 * map (other containers are fine); @a arg is this rank's.
 */
gv_status_t gv_hashmap_forall(gv_hashmap_t *map, gv_hashmap_entry_fn_t body,
                              void *arg, gv_gce_t *gce);

/** Collective: number of entries over all ranks, in @a *n_p. */
gv_status_t gv_hashmap_size(gv_hashmap_t *map, int64_t *n_p);

/** Counters of this rank's part of a map. */
typedef struct gv_hashmap_stats {
    uint64_t ops_sent;     /**< operations this rank sent (any home)  */
    uint64_t ops_served;   /**< operations run here                   */
    uint64_t resizes;      /**< times this rank's table doubled       */
    uint64_t capacity;     /**< slots of this rank's table            */
} gv_hashmap_stats_t;

/** This rank's counters of @a map into *@a stats_p. */
void gv_hashmap_stats(const gv_hashmap_t *map, gv_hashmap_stats_t *stats_p);

#ifdef __cplusplus
}
#endif
#endif
