/* gv_am_send_u64(): one-word messages from every rank to every rank (self
 * included), interleaved on the same handler with gv_am_send() of 8, 20
 * and 3000 bytes, so that the inline path and its fallback meet in one
 * stream (with GV_AGG_BYTES=256 the 3000-byte ones also close batches).
 * Receivers check each word, each length and the per-pair order; then
 * the counters (bytes too), the inline path's cursor, the errors, and a
 * send after gv_finalize() (an error, not a crash).
 * Run: gvrun -n 4 mr_word [-n per-destination]
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr.h"

#define BIG 3000

static gv_am_id_t id, probe_id;
static uint64_t   probes;
static uint64_t  *next_seq; /* per source */
static uint64_t   got;

/* Message k from src: which call sent it, and its first word. */
static size_t len_of(uint64_t k)
{
    switch (k % 16) {
    case 5:
        return 20;
    case 11:
        return (k % 64 == 11) ? BIG : 8; /* 8 through gv_am_send() */
    default:
        return 8;                        /* gv_am_send_u64() */
    }
}

static uint64_t word_of(int src, uint64_t k)
{
    return ((uint64_t)src << 48) | k;
}

static void on_msg(int src, const void *payload, size_t len, void *arg)
{
    uint64_t k = next_seq[src], w;

    (void)arg;
    MR_CHECK(len == len_of(k), "from rank %d: message %llu has %zu bytes, "
             "expected %zu", src, (unsigned long long)k, len, len_of(k));
    memcpy(&w, payload, sizeof(w));
    MR_CHECK(w == word_of(src, k), "from rank %d: message %llu carries "
             "%#llx, expected %#llx (lost, duplicated or reordered)", src,
             (unsigned long long)k, (unsigned long long)w,
             (unsigned long long)word_of(src, k));
    if (len > 8)
        MR_CHECK(mr_verify((const uint8_t *)payload + 8, len - 8, w),
                 "corrupt %zu-byte payload from rank %d", len, src);
    next_seq[src]++;
    got++;
}

static void on_probe(int src, const void *payload, size_t len, void *arg)
{
    (void)src;
    (void)payload;
    (void)arg;
    MR_CHECK(len == 0 || len == 8, "probe message of %zu bytes", len);
    probes++;
}

int main(int argc, char **argv)
{
    uint64_t      n = 50000, k, sent = 0, bytes = 0;
    uint8_t       buf[BIG];
    gv_am_stats_t s0, s1;
    int           c, P, me, d, i;

    mr_init(&argc, &argv);
    while ((c = getopt(argc, argv, "n:")) != -1) {
        if (c != 'n') {
            fprintf(stderr, "usage: mr_word [-n messages per destination]\n");
            return 2;
        }
        n = strtoull(optarg, NULL, 10);
    }
    P        = gv_nranks();
    me       = gv_rank();
    next_seq = calloc((size_t)P, sizeof(*next_seq));
    MR_OK(gv_am_register(on_msg, NULL, &id));
    MR_OK(gv_am_register(on_probe, NULL, &probe_id));
    gv_barrier();
    /* The inline path reads the library's state, or it never runs. */
    MR_CHECK(gv__am_hot.size == (unsigned)P &&
                 gv__am_hot.nhandlers > id,
             "the inline send path sees %u ranks and %u handlers",
             gv__am_hot.size, gv__am_hot.nhandlers);
    gv_am_stats(&s0);

    for (k = 0; k < n; k++) {
        for (i = 0; i < P; i++) {
            uint64_t w = word_of(me, k);
            size_t   len = len_of(k);

            d = (me + i) % P;
            if ((len == 8) && (k % 16 != 11)) {
                MR_OK(gv_am_send_u64(d, id, w));
            } else {
                memcpy(buf, &w, 8);
                if (len > 8)
                    mr_fill(buf + 8, len - 8, w);
                MR_OK(gv_am_send(d, id, buf, len));
            }
            sent++;
            bytes += len;
        }
        if ((k & 255) == 0)
            gv_progress();
    }
    gv_barrier();
    gv_am_stats(&s1);
    for (d = 0; d < P; d++)
        MR_CHECK(next_seq[d] == n, "%llu of %llu messages from rank %d",
                 (unsigned long long)next_seq[d], (unsigned long long)n, d);
    MR_CHECK(got == n * (uint64_t)P, "handled %llu, expected %llu",
             (unsigned long long)got, (unsigned long long)(n * P));
    MR_CHECK(s1.msgs_sent - s0.msgs_sent == sent, "stats count %llu sent, "
             "the test sent %llu",
             (unsigned long long)(s1.msgs_sent - s0.msgs_sent),
             (unsigned long long)sent);
    MR_CHECK(s1.bytes_sent - s0.bytes_sent == bytes, "stats count %llu "
             "bytes sent, the test sent %llu",
             (unsigned long long)(s1.bytes_sent - s0.bytes_sent),
             (unsigned long long)bytes);

    /* With a batch open to a rank, the word goes into it right behind
     * the last record: the cursor the inline path reads moves by one
     * 12-byte record. Without aggregation there is no cursor. */
    {
        const char *agg = getenv("GV_AGGREGATE");
        uint8_t    *before;

        d = (me + 1) % P;
        MR_OK(gv_am_send(d, probe_id, buf, 0));
        before = gv__am_hot.cur[d].pos;
        if ((agg == NULL) || (strcmp(agg, "0") != 0)) {
            MR_CHECK(before != NULL, "no batch open to rank %d after a "
                     "send", d);
            MR_OK(gv_am_send_u64(d, probe_id, 0));
            MR_CHECK(gv__am_hot.cur[d].pos == before + 12, "the word "
                     "moved the cursor by %td bytes, not 12",
                     gv__am_hot.cur[d].pos - before);
        } else {
            MR_CHECK(before == NULL, "a batch open with GV_AGGREGATE=0");
            MR_OK(gv_am_send_u64(d, probe_id, 0));
        }
        gv_barrier();
        MR_CHECK(probes == 2, "%llu of 2 probe messages arrived",
                 (unsigned long long)probes);
    }

    /* Bad arguments are errors, as for gv_am_send(). */
    MR_CHECK(gv_am_send_u64(P, id, 1) == GV_ERR_INVALID,
             "send to rank %d accepted", P);
    MR_CHECK(gv_am_send_u64(-1, id, 1) == GV_ERR_INVALID, "rank -1");
    MR_CHECK(gv_am_send_u64(0, (gv_am_id_t)(id + 100), 1) == GV_ERR_INVALID,
             "unregistered handler id accepted");
    gv_barrier();
    if (me == 0)
        printf("word: %llu messages per pair over %s: ok\n",
               (unsigned long long)n, gv_transport_name());
    gv_finalize();

    if (gv_am_send_u64(0, id, 1) != GV_ERR_INVALID) {
        fprintf(stderr, "FAIL: gv_am_send_u64 after gv_finalize was not "
                        "an error\n");
        return 1;
    }
    free(next_seq);
    return 0;
}
