/* Word count's map function and the synthetic Zipf corpus.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "mapreduce/mr.h"

#include <math.h>
#include <stdlib.h>

static inline int is_space(int c)
{
    return (c == ' ') || ((c >= '\t') && (c <= '\r'));
}

void gv_mr_map_words(gv_mr_t *mr, const char *text, size_t len,
                     const char *path, int64_t off, void *arg)
{
    static const int64_t one = 1;
    size_t               i = 0, w;

    (void)arg;
    while (i < len) {
        while ((i < len) && is_space((unsigned char)text[i]))
            i++;
        w = i;
        while ((i < len) && !is_space((unsigned char)text[i]))
            i++;
        if (i == w)
            break;
        if (i - w > GV_MR_KEY_MAX) {
            mr_error("%s: a word of %zu bytes at byte %lld (at most %d "
                     "accepted)", (path != NULL) ? path : "generated text",
                     i - w, (long long)(off + (int64_t)w), GV_MR_KEY_MAX);
            gv__mr_fail(mr);
            continue;
        }
        gv_mr_emit(mr, text + w, i - w, &one);
    }
}

struct gv_mr_zipf {
    int64_t  vocab;
    uint64_t seed;
    double  *cdf; /* cdf[r - 1]: probability of ranks 1..r */
};

gv_mr_zipf_t *gv_mr_zipf_new(int64_t vocab, double s, uint64_t seed)
{
    gv_mr_zipf_t *z;
    double        sum = 0;
    int64_t       r;

    if ((vocab < 1) || (vocab > (1ll << 31)) || !(s > 0) || (s > 100)) {
        mr_error("zipf corpus: vocabulary %lld (accepted 1..2^31) and "
                 "exponent %g (accepted (0, 100])", (long long)vocab, s);
        return NULL;
    }
    z = calloc(1, sizeof(*z));
    if (z == NULL)
        return NULL;
    z->cdf = malloc(sizeof(double) * (size_t)vocab);
    if (z->cdf == NULL) {
        mr_error("zipf corpus: no memory for a vocabulary of %lld words",
                 (long long)vocab);
        free(z);
        return NULL;
    }
    z->vocab = vocab;
    z->seed  = seed;
    for (r = 1; r <= vocab; r++) {
        sum += pow((double)r, -s);
        z->cdf[r - 1] = sum;
    }
    for (r = 0; r < vocab; r++)
        z->cdf[r] /= sum;
    z->cdf[vocab - 1] = 1.0;
    return z;
}

void gv_mr_zipf_free(gv_mr_zipf_t *z)
{
    if (z != NULL)
        free(z->cdf);
    free(z);
}

/* Word of rank @a r (1-based) in bijective base 26, into @a out. */
static size_t word_of(int64_t r, char *out)
{
    char   tmp[16];
    size_t n = 0, i;

    while (r > 0) {
        r--;
        tmp[n++] = (char)('a' + r % 26);
        r /= 26;
    }
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

size_t gv_mr_zipf_piece(int64_t index, char *buf, size_t cap, void *arg)
{
    const gv_mr_zipf_t *z = arg;
    size_t              pos = 0;
    uint64_t            j;
    char                w[16];

    (void)cap;
    for (j = 0;; j++) {
        double  u  = mr_unit(z->seed, (uint64_t)index, j);
        int64_t lo = 0, hi = z->vocab - 1;
        size_t  n;

        while (lo < hi) {
            int64_t mid = (lo + hi) / 2;
            if (z->cdf[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        n = word_of(lo + 1, w);
        if (pos + n + 1 >= GV_MR_ZIPF_PIECE)
            break;
        memcpy(buf + pos, w, n);
        pos += n;
        buf[pos++] = ((j % 16) == 15) ? '\n' : ' ';
    }
    memset(buf + pos, '\n', GV_MR_ZIPF_PIECE - pos);
    return GV_MR_ZIPF_PIECE;
}
