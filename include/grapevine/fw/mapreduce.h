/** @file
 * Grapevine frameworks: in-memory MapReduce (word count, k-means).
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * The Grappa paper's MapReduce (section 4.3): a parallel loop over the
 * input whose map function emits key/value pairs; an optional combiner
 * folds pairs with equal keys into a table on the mapping rank before they
 * travel (the paper's local hash table); each remaining pair travels, as a
 * small active message packed with others by the aggregator, to its key's
 * home (a hash of the key's bytes), where the reduce folds it into the
 * home's table. The result stays at the homes: iterate it there
 * (gv_mr_forall), count it, copy it into a gv_hashmap_t or a gv_array_t,
 * or take the top k values.
 *
 * Reduce is a fold: combine(value, incoming, val_size) merges one value
 * into the stored one (associative and commutative, as the combiner must
 * be; gv_hashmap_sum_i64 and friends fit). Keys are byte strings: of a
 * fixed size (key_size > 0), or of any length up to GV_MR_KEY_MAX
 * (key_size 0: words). Values have a fixed size (at most GV_MR_VAL_MAX).
 *
 * Every call here except gv_mr_emit() is collective: every rank calls it
 * in the same order from one worker (the function given to gv_run_all).
 *
 *   gv_mr_opts_t o = {.key_size = 0, .val_size = 8,
 *                     .combine = gv_hashmap_sum_i64, .local_combine = 1};
 *   gv_mr_create(&o, &mr);
 *   gv_mr_run_files(mr, paths, n, map_words, NULL);  // emits (word, 1)
 *   gv_mr_size(mr, &distinct);
 *   gv_mr_destroy(mr);
 */
#ifndef GRAPEVINE_FW_MAPREDUCE_H
#define GRAPEVINE_FW_MAPREDUCE_H

#include <grapevine.h>
#include <grapevine/fw/array.h>
#include <grapevine/fw/hashmap.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest key, and largest value, in bytes. */
#define GV_MR_KEY_MAX 1000
/** Largest value, in bytes. */
#define GV_MR_VAL_MAX 1024

/** A MapReduce job and its result (every rank holds its own handle). */
typedef struct gv_mr gv_mr_t;

/** Options of gv_mr_create(); zero-initialise. */
typedef struct gv_mr_opts {
    size_t key_size;   /**< bytes of every key; 0: variable length       */
    size_t val_size;   /**< bytes of every value, 1..GV_MR_VAL_MAX       */
    gv_hashmap_combine_fn_t combine; /**< the fold of equal keys (required) */
    int    local_combine; /**< non-zero: fold on the mapping rank first  */
    int    progress;   /**< non-zero: rank 0 reports its input read so
                            far on stderr every 2 seconds of a run      */
} gv_mr_opts_t;

/**
 * Create an empty job. Collective.
 * @return GV_OK, GV_ERR_INVALID (a size out of range, no combine),
 *         GV_ERR_NO_RESOURCE (64 jobs alive). Logged once.
 */
gv_status_t gv_mr_create(const gv_mr_opts_t *opts, gv_mr_t **mr_p);

/** Free the job and its result (collective). */
void gv_mr_destroy(gv_mr_t *mr);

/** Empty the result (collective), to run the job again (k-means). */
gv_status_t gv_mr_clear(gv_mr_t *mr);

/**
 * Emit a pair from a map function: @a klen bytes of key (equal to
 * key_size for fixed keys) and val_size bytes of value, both copied.
 * Only from a map function of this job, on its rank.
 * @return GV_OK, or GV_ERR_INVALID (a key of the wrong length, or longer
 *         than GV_MR_KEY_MAX: logged, and the run then fails).
 */
gv_status_t gv_mr_emit(gv_mr_t *mr, const void *key, size_t klen,
                       const void *val);

/** Map over an array: one call per element at its home. */
typedef void (*gv_mr_map_fn_t)(gv_mr_t *mr, int64_t i, const void *elem,
                               void *arg);

/**
 * Collective: map every element of @a a (each rank its own part, as a
 * parallel loop), combine, shuffle and reduce; returns once every pair has
 * been folded at its home. The result accumulates over runs until
 * gv_mr_clear().
 * @return GV_OK, or GV_ERR_INVALID if an emit failed on some rank.
 */
gv_status_t gv_mr_run_array(gv_mr_t *mr, gv_array_t *a, gv_mr_map_fn_t map,
                            void *arg);

/** Map over text: @a len bytes at @a text (no terminating zero), holding
 *  whole words; @a path and @a off say where they come from (for errors). */
typedef void (*gv_mr_text_fn_t)(gv_mr_t *mr, const char *text, size_t len,
                                const char *path, int64_t off, void *arg);

/**
 * Collective: read the @a nfiles files in parallel and map their text.
 * The files are seen as one sequence of bytes cut into one byte range per
 * rank; a rank's pieces start after a whitespace byte (or at a file's
 * start) and end at whitespace (or a file's end), so a word (a maximal run
 * of bytes other than space, \\t, \\n, \\v, \\f, \\r) is mapped by exactly the
 * rank whose range holds its first byte, never cut between two ranks.
 * Every rank sees the same @a paths. The map function gets pieces of at
 * most about 1 MiB.
 * @return GV_OK; GV_ERR_IO (a file that cannot be opened or read: logged
 *         with its path and the system's reason, on the rank that found
 *         it; every rank returns it); GV_ERR_INVALID (an emit failed).
 */
gv_status_t gv_mr_run_files(gv_mr_t *mr, const char *const *paths,
                            int nfiles, gv_mr_text_fn_t map, void *arg);

/**
 * Collective: run map(mr, text, len, NULL, off, arg) over text this rank
 * makes itself: gen(index, buf, cap, arg) fills @a buf with the text of
 * piece @a index (whole words, at most @a cap bytes) and returns its
 * length. Pieces 0..npieces-1 are dealt to the ranks in blocks. For
 * generated corpora (gv_mr_zipf_piece).
 */
typedef size_t (*gv_mr_gen_fn_t)(int64_t index, char *buf, size_t cap,
                                 void *arg);
/** Run the job over @a npieces pieces that @a gen makes (at most @a cap
 *  bytes each), each mapped by @a map. Collective. */
gv_status_t gv_mr_run_generated(gv_mr_t *mr, int64_t npieces, size_t cap,
                                gv_mr_gen_fn_t gen, void *gen_arg,
                                gv_mr_text_fn_t map, void *arg);

/* ---- the result, at the homes -------------------------------------------- */

/** Body of gv_mr_forall(): one key with its reduced value, at its home. */
typedef void (*gv_mr_entry_fn_t)(const void *key, size_t klen,
                                 const void *val, void *arg);

/** Collective: run body on every entry at its home (sequentially on each
 *  rank: the bodies may not block), then a barrier. */
gv_status_t gv_mr_forall(gv_mr_t *mr, gv_mr_entry_fn_t body, void *arg);

/** Entries held on this rank; collective: over all ranks. */
int64_t     gv_mr_local_size(const gv_mr_t *mr);
/** Entries over all ranks into *@a n_p (collective). */
gv_status_t gv_mr_size(gv_mr_t *mr, int64_t *n_p);

/** Collective: insert every entry into @a map (key_size and val_size must
 *  match the job's fixed ones), waiting until all have landed. */
gv_status_t gv_mr_to_hashmap(gv_mr_t *mr, gv_hashmap_t *map);

/** Collective: for an 8-byte int64 key k in [0, n) write the value into
 *  element k of @a a (elem_size val_size); other keys are an error. */
gv_status_t gv_mr_to_array(gv_mr_t *mr, gv_array_t *a);

/** One of the top entries of gv_mr_top(). */
typedef struct gv_mr_top {
    int64_t  value;                  /**< the int64 value (first 8 bytes) */
    uint32_t klen; /**< bytes of the key */
    char     key[GV_MR_KEY_MAX + 1]; /**< zero-terminated copy            */
} gv_mr_top_t;

/**
 * Collective: the @a k entries with the largest int64 value (ties: the
 * smaller key bytes first), in order, on every rank, in @a top (room for
 * k); *n_p gets how many there are (fewer if the result is smaller).
 */
gv_status_t gv_mr_top(gv_mr_t *mr, int k, gv_mr_top_t *top, int *n_p);

/* ---- word count ------------------------------------------------------------ */

/** A map function emitting (word, int64 1) for every word of the text
 *  (the job: key_size 0, val_size 8, combine gv_hashmap_sum_i64). */
void gv_mr_map_words(gv_mr_t *mr, const char *text, size_t len,
                     const char *path, int64_t off, void *arg);

/**
 * A synthetic Zipf corpus. Words are the vocabulary's word ranks 1..vocab
 * written in bijective base 26 ("a".."z", "aa", ...): rank r is drawn with
 * probability proportional to 1 / r^s. The corpus is pieces of
 * GV_MR_ZIPF_PIECE bytes; piece i draws its words from a counter-based
 * generator of (seed, i), separated by one space, a newline after every
 * 16th word and at the piece's end, padded with newlines: the same bytes
 * whatever the number of ranks.
 */
#define GV_MR_ZIPF_PIECE 65536
/** A Zipf corpus model (gv_mr_zipf_new()). */
typedef struct gv_mr_zipf gv_mr_zipf_t;

/** A corpus model: @a vocab words (1..2^31), exponent @a s (> 0), seed.
 *  Not collective (a table of vocab doubles, local). NULL if out of
 *  memory or a bad parameter (logged). */
gv_mr_zipf_t *gv_mr_zipf_new(int64_t vocab, double s, uint64_t seed);
/** Free a model of gv_mr_zipf_new(). */
void          gv_mr_zipf_free(gv_mr_zipf_t *z);
/** Piece @a index into @a buf (cap >= GV_MR_ZIPF_PIECE): a gv_mr_gen_fn_t
 *  whose argument is the model. Returns GV_MR_ZIPF_PIECE. */
size_t gv_mr_zipf_piece(int64_t index, char *buf, size_t cap, void *z);

/* ---- k-means ------------------------------------------------------------------ */

/** Options and results of gv_mr_kmeans(). */
typedef struct gv_kmeans {
    int     k;          /**< centres, 2..10000                          */
    int     dim;        /**< coordinates per point, 1..512              */
    int     max_iter;   /**< at most this many iterations (>= 1)        */
    double  tol;        /**< stop once no centre moved farther than this
                             (Euclidean); 0: run max_iter iterations    */
    int     progress;   /**< non-zero: rank 0 prints each iteration's
                             largest move and time on stderr            */
    /* results */
    int     iters;      /**< iterations run                              */
    double  sse;        /**< sum of squared distances of the points to
                             their nearest final centre                 */
    double  moved;      /**< the last iteration's largest centre move    */
} gv_kmeans_t;

/**
 * Collective: Lloyd's algorithm on the points of @a pts (elements of dim
 * doubles). @a centres (k * dim doubles, the same on every rank) holds
 * the start and gets the final centres. Each iteration maps every point
 * to its nearest centre (squared distance summed over the coordinates in
 * order; ties to the lower index), reduces (sum of coordinates, count)
 * per centre with the combiner on the mapping rank, and broadcasts the
 * new centres (a centre with no point stays where it was).
 * @return GV_OK, GV_ERR_INVALID (bad options), or what the job returned.
 */
gv_status_t gv_mr_kmeans(gv_array_t *pts, double *centres, gv_kmeans_t *km);

/**
 * Collective: fill @a pts (dim doubles each) from a Gaussian mixture:
 * @a ncomp component means uniform in [-10, 10)^dim, point i from
 * component (counter-based random of (seed, i)) mod ncomp, each
 * coordinate its mean plus sigma times a standard normal (Box-Muller).
 * The same points whatever the number of ranks.
 */
gv_status_t gv_mr_gen_gaussian(gv_array_t *pts, int dim, int ncomp,
                               double sigma, uint64_t seed);

/**
 * Collective: read points from a binary file of little-endian float32
 * (@a f32 non-zero) or float64 coordinates, dim per point, in parallel;
 * creates the array (GV_DIST_BLOCK). A file whose size is not a multiple
 * of a point is GV_ERR_INVALID naming the file and its size; a file that
 * cannot be read GV_ERR_IO.
 */
gv_status_t gv_mr_load_points(const char *path, int dim, int f32,
                              gv_array_t **pts_p);

#ifdef __cplusplus
}
#endif
#endif
