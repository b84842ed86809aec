/* Forged frames must not disturb an ofi job: while every rank exchanges
 * checksummed active messages with every other (small ones and, at the end
 * of each round, a few large enough for the tagged path), rank 0 opens a
 * libfabric endpoint of its own on the transport's provider (libfabric's
 * fi_* calls are inline, so LD_PRELOAD cannot forge in front of them),
 * puts every other rank's transport endpoint name in its own AV and sends
 * each of them frames that transports/ofi.c must reject (logged and
 * counted, never delivered):
 *   short      8 bytes, shorter than the header;
 *   long       longer than the job's largest frame (untagged);
 *   key        another job's key (tag bytes);
 *   src        a source rank no job has;
 *   self       the receiver's own rank as the source;
 *   stale      rank 0's seq 0, delivered in the round before;
 *   ahead      rank 0's seq 2^30, far past anything in flight;
 *   pad        byte 15 claims 8 bytes of padding (at most 7);
 *   grant_len  a grant (byte 15 = 0x80) of 24 bytes, not 16;
 *   grant_far  a grant for 2^30 frames, more than the receiver sent;
 * id frames (a request's or a reply's shape; fcont_lone and fmore_long
 * aside) that carry
 * the very seq the receiver expects next from rank 0, sent before round 0
 * while every receiver waits for them, so that they pass the sequence
 * check and meet the others (those of ofi.c's fast path, frame_fast,
 * first); each names handler id 0xfff0, which no job registers, so that
 * one taken by mistake is refused by the AM layer instead and the
 * transport's count falls short:
 *   fkey       another job's key;
 *   fsrc       a source rank no job has;
 *   fself      the receiver's own rank as the source (its seq 0);
 *   fstale     rank 0's seq just before the expected one;
 *   fid_big    an id word over 16 bits;
 *   fpad       7 bytes of padding claimed for a frame that ends with its
 *              id word (the slow path then finds no id: "without a valid
 *              id", id_big's reason);
 *   fmore_pad  a first part of a split message (OFI_MORE) with 1 byte of
 *              padding: only a message's last part has any;
 *   fcont_idf  a continuation (OFI_CONT) marked as an id frame: the id
 *              word is on a message's first part only;
 *   fcont_lone a continuation while no message from rank 0 is in progress
 *              (no id frame: CONT excludes IDF, so its body is an AM
 *              message to handler 0xfff0 instead, for the same reason);
 *   fmore_long a first part (OFI_MORE) whose body alone is 8 bytes past
 *              split_max, the longest message the job sends in parts (0
 *              where none are: rxm), which bounds the receiver's copy of
 *              the parts (its body is 0xa5 bytes: a part is never
 *              delivered on its own, and without the bound the copy would
 *              overrun the message buffer over shm and find none over
 *              rxm);
 * and, where the receiver posts buffers for tagged (large) frames and the
 * stranger's endpoint has FI_TAGGED, tagged ones:
 *   tkey       another job's key;
 *   tlong      longer than the job's largest frame;
 *   tpad       byte 15 puts the upper header 64 bytes in (at most 63).
 * Forgeries a receiver could not tell from real frames (the right header
 * with other bytes, a seq just ahead) are not sent: the job key is what keeps
 * strangers out, and a job's own ranks are trusted. Every receiver must
 * count exactly as many rejections as frames were forged to it, rank 0
 * none, and every real message must arrive once, in order and intact.
 * Each rejection is logged with its reason (ofi/driver_ofi greps them).
 *
 * Not over shm: long and tlong. A message longer than the receive buffer
 * it lands in (a tagged buffer holds exactly the largest frame; a
 * multi-receive buffer may have as little as FI_OPT_MIN_MULTI_RECV left)
 * makes libfabric 1.17's shm provider call process_vm_readv for ever
 * inside the receiver's fi_cq_read (seen: 1 MiB + 8 bytes tagged, 3 MiB
 * untagged), so the receiver is wedged. --oversize sends them anyway.
 *
 * Run: GV_TRANSPORT=ofi FI_PROVIDER=shm gvrun -n 2
 * build/tests/multirank/mr_ofi_stranger [--oversize] (or
 * FI_PROVIDER="tcp;ofi_rxm"; exits 77 over other transports).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/mr_stream.h"

#if GV_HAVE_OFI
#include "aggregator/wire.h"
#include "core/boot.h"
#include "core/core.h"
#include "transports/ofi.h"
#include "transports/transport.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

/* The frame layout of transports/ofi.c (its header comment; keep in step):
 *    0        4        8            15   16
 *    | src u32| seq u32| 7 bytes of  |pad | upper header, payload, pad
 *                        the job key   u8
 * byte 15 is the padding after the frame (< 8), with OFI_IDF added in an
 * id frame (whose first 8 bytes after the header hold a 16-bit id) and
 * OFI_CONT / OFI_MORE in the parts of a message split over several
 * injected frames (shm: more than inject_size), or in a tagged frame the
 * lead before the upper header (< OFI_RX_ALIGN), or OFI_GRANT. */
#define WIRE_HDR   16        /* OFI_WIRE_HDR */
#define TAG_LEN    7         /* OFI_TAG_LEN */
#define RX_ALIGN   64        /* OFI_RX_ALIGN */
#define GRANT      0x80      /* OFI_GRANT */
#define IDF        0x40      /* OFI_IDF: an id frame (am_send_id) */
#define MORE       0x20      /* OFI_MORE: more parts of the message follow */
#define CONT       0x10      /* OFI_CONT: continues the previous frame's */
#define NAME_LEN   256
#define RAW_BUF    (4u << 20)
#define RAW_WAIT_S 10

#define MSGS       1500      /* per destination per round */
#define MAX_BYTES  600       /* payload bytes after the header */
#define NLARGE     4         /* the round's last messages are large: */
#define LARGE      300000    /*   tagged over shm and tcp;ofi_rxm */
#define MAX_RANKS  64

enum {
    K_SHORT, K_LONG, K_KEY, K_SRC, K_SELF, K_STALE, K_AHEAD, K_PAD,
    K_GRANT_LEN, K_GRANT_FAR, K_ID_BIG, K_ID_SHORT, K_FKEY, K_FSRC, K_FSELF,
    K_FSTALE, K_FID_BIG, K_FPAD, K_FMORE_PAD, K_FCONT_IDF, K_FCONT_LONE,
    K_FMORE_LONG, K_TKEY, K_TLONG, K_TPAD, NKINDS
};
#define K_FIRST_FRESH  K_FKEY
#define K_FIRST_TAGGED K_TKEY
#define FRESH_ID       0xfff0u  /* a handler id no job registers */

static const char *const kind_name[NKINDS] = {
    "short", "long", "key", "src", "self", "stale", "ahead", "pad",
    "grant_len", "grant_far", "id_big", "id_short", "fkey", "fsrc", "fself",
    "fstale", "fid_big", "fpad", "fmore_pad", "fcont_idf", "fcont_lone",
    "fmore_long", "tkey", "tlong", "tpad",
};

/* The stranger's own libfabric objects (rank 0). */
typedef struct {
    struct fi_info     *info;
    struct fid_fabric  *fabric;
    struct fid_domain  *domain;
    struct fid_av      *av;
    struct fid_cq      *cq;
    struct fid_ep      *ep;
    struct fid_mr      *mr;
    void               *desc;
    uint8_t            *buf;
    int                 tagged;      /* the endpoint has FI_TAGGED */
    fi_addr_t           addr[MAX_RANKS];
    struct fi_context2  ctx;
} raw_t;

static int       me, np;
static raw_t     raw;
static uint32_t  tagged_rx[MAX_RANKS];           /* per rank */
static uint32_t  forged[MAX_RANKS][NKINDS];      /* rank 0: per victim */
static int       oversize;   /* --oversize: long and tlong over shm too */
static int       failures;

static void attack_all(void);

/* MSGS messages to every other rank; rank 0 attacks halfway through when
 * @a attack is set. */
static void all_to_all(gv_am_id_t id, uint64_t round, int attack)
{
    static uint8_t buf[sizeof(mr_msg_hdr_t) + LARGE];
    uint64_t       rng = 0x5151 + (uint64_t)me * 7919 + round;
    int            i, k;

    for (i = 0; i < MSGS; i++) {
        if (attack && (me == 0) && (i == MSGS / 2))
            attack_all();
        for (k = 1; k < np; k++)
            mr_stream_send(id, (me + k) % np, round * MSGS + (uint64_t)i, buf,
                           sizeof(mr_msg_hdr_t) +
                               ((i >= MSGS - NLARGE)
                                    ? LARGE
                                    : mr_rand(&rng) % (MAX_BYTES + 1)));
    }
}

/* ---- the stranger (rank 0) ---------------------------------------------- */

static void check(long ret, const char *what)
{
    if (ret != 0)
        gv_abort(1, "mr_ofi_stranger: %s failed: %s", what,
                 fi_strerror((int)((ret < 0) ? -ret : ret)));
}

/* The provider the transport opened: its detail reads "provider NAME ...". */
static void transport_provider(char *name, size_t len)
{
    const char *d = gv__ctx.tl->attr.detail;
    size_t      n;

    if (strncmp(d, "provider ", 9) != 0)
        gv_abort(1, "mr_ofi_stranger: no provider in '%s'", d);
    d += 9;
    n = strcspn(d, " ");
    if (n >= len)
        gv_abort(1, "mr_ofi_stranger: provider name '%s' too long", d);
    memcpy(name, d, n);
    name[n] = '\0';
}

/* A fabric, domain, RDM endpoint, AV and CQ of our own on the transport's
 * provider (as perf/hop_ofi.c opens them), with FI_TAGGED if it has it. */
static void raw_open(void)
{
    static const uint64_t caps[] = {FI_MSG | FI_TAGGED, FI_MSG};
    struct fi_info       *hints;
    struct fi_cq_attr     cq_attr;
    struct fi_av_attr     av_attr;
    char                  prov[64];
    unsigned              c;
    int                   ret = -FI_ENODATA;

    transport_provider(prov, sizeof(prov));
    for (c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
        hints = fi_allocinfo();
        if (hints == NULL)
            gv_abort(1, "mr_ofi_stranger: fi_allocinfo failed");
        hints->caps                  = caps[c];
        hints->mode                  = FI_CONTEXT | FI_CONTEXT2;
        hints->ep_attr->type         = FI_EP_RDM;
        hints->domain_attr->mr_mode  = FI_MR_LOCAL | FI_MR_VIRT_ADDR |
                                       FI_MR_ALLOCATED | FI_MR_PROV_KEY;
        hints->fabric_attr->prov_name = strdup(prov);
        ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
                         NULL, NULL, 0, hints, &raw.info);
        fi_freeinfo(hints);
        if (ret == 0)
            break;
    }
    check(ret, "fi_getinfo");
    raw.tagged = !!(raw.info->caps & FI_TAGGED);

    check(fi_fabric(raw.info->fabric_attr, &raw.fabric, NULL), "fi_fabric");
    check(fi_domain(raw.fabric, raw.info, &raw.domain, NULL), "fi_domain");
    memset(&cq_attr, 0, sizeof(cq_attr));
    cq_attr.format   = FI_CQ_FORMAT_CONTEXT;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size     = raw.info->tx_attr->size + raw.info->rx_attr->size;
    check(fi_cq_open(raw.domain, &cq_attr, &raw.cq, NULL), "fi_cq_open");
    memset(&av_attr, 0, sizeof(av_attr));
    av_attr.type = raw.info->domain_attr->av_type;
    check(fi_av_open(raw.domain, &av_attr, &raw.av, NULL), "fi_av_open");
    check(fi_endpoint(raw.domain, raw.info, &raw.ep, NULL), "fi_endpoint");
    check(fi_ep_bind(raw.ep, &raw.av->fid, 0), "fi_ep_bind (av)");
    check(fi_ep_bind(raw.ep, &raw.cq->fid, FI_TRANSMIT | FI_RECV),
          "fi_ep_bind (cq)");
    check(fi_enable(raw.ep), "fi_enable");
    if (posix_memalign((void **)&raw.buf, 4096, RAW_BUF) != 0)
        gv_abort(1, "mr_ofi_stranger: out of memory");
    memset(raw.buf, 0, RAW_BUF);
    if (raw.info->domain_attr->mr_mode & FI_MR_LOCAL) {
        check(fi_mr_reg(raw.domain, raw.buf, RAW_BUF, FI_SEND, 0, 0, 0,
                        &raw.mr, NULL), "fi_mr_reg");
        raw.desc = fi_mr_desc(raw.mr);
    }
}

static void raw_close(void)
{
    check(fi_close(&raw.ep->fid), "fi_close (endpoint)");
    if (raw.mr != NULL)
        check(fi_close(&raw.mr->fid), "fi_close (mr)");
    check(fi_close(&raw.av->fid), "fi_close (av)");
    check(fi_close(&raw.cq->fid), "fi_close (cq)");
    check(fi_close(&raw.domain->fid), "fi_close (domain)");
    check(fi_close(&raw.fabric->fid), "fi_close (fabric)");
    fi_freeinfo(raw.info);
    free(raw.buf);
}

/* Put rank @a v's transport endpoint name in our AV. */
static void raw_insert(int v)
{
    uint8_t name[NAME_LEN];
    size_t  len = gv__tl_ofi_name(gv__ctx.tl, v, name, sizeof(name));
    int     ret;

    if ((len == 0) || (len > sizeof(name)))
        gv_abort(1, "mr_ofi_stranger: no endpoint name for rank %d (%zu "
                 "bytes)", v, len);
    ret = fi_av_insert(raw.av, name, 1, &raw.addr[v], 0, NULL);
    if (ret != 1)
        check((ret < 0) ? ret : -FI_EOTHER, "fi_av_insert");
}

/* Send raw.buf's first @a len bytes to rank @a v and wait for the send's
 * completion, so that the buffer may be reused; progresses our endpoint
 * only (the receiver progresses its own: it is sending or waiting). 1 if
 * it completed without error. */
static int raw_send(int v, size_t len, int tagged)
{
    uint64_t deadline = gv__now_ns() + RAW_WAIT_S * 1000000000ull;
    struct fi_cq_entry     ent;
    struct fi_cq_err_entry err;
    ssize_t                ret;

    for (;;) {
        if (tagged)
            ret = fi_tsend(raw.ep, raw.buf, len, raw.desc, raw.addr[v],
                           0x5eed, &raw.ctx);
        else
            ret = fi_send(raw.ep, raw.buf, len, raw.desc, raw.addr[v],
                          &raw.ctx);
        if (ret != -FI_EAGAIN)
            break;
        (void)fi_cq_read(raw.cq, &ent, 1);
        if (gv__now_ns() > deadline)
            gv_abort(1, "mr_ofi_stranger: rank %d took no frame from the "
                     "stranger for %d s", v, RAW_WAIT_S);
    }
    check(ret, tagged ? "fi_tsend" : "fi_send");
    for (;;) {
        ret = fi_cq_read(raw.cq, &ent, 1);
        if (ret == 1)
            return 1;
        if (ret == -FI_EAVAIL) {
            memset(&err, 0, sizeof(err));
            if (fi_cq_readerr(raw.cq, &err, 0) < 0)
                gv_abort(1, "mr_ofi_stranger: fi_cq_readerr failed");
            fprintf(stderr, "[%04d] mr_ofi_stranger: a %zu-byte forged "
                    "frame to rank %d failed: %s\n", me, len, v,
                    fi_strerror(err.err));
            return 0;
        }
        if (ret != -FI_EAGAIN)
            check(ret, "fi_cq_read");
        if (gv__now_ns() > deadline)
            gv_abort(1, "mr_ofi_stranger: a %zu-byte forged frame to rank "
                     "%d did not complete in %d s", len, v, RAW_WAIT_S);
    }
}

/* Our header at raw.buf; a body of @a len - WIRE_HDR bytes of 0xa5. */
static void forge_hdr(uint32_t src, uint32_t seq, uint8_t b15, size_t len)
{
    memset(raw.buf, 0xa5, len);
    memcpy(raw.buf, &src, 4);
    memcpy(raw.buf + 4, &seq, 4);
    memcpy(raw.buf + 8, gv__ctx.boot->key, TAG_LEN);
    raw.buf[15] = b15;
}

static void attack(int v)
{
    /* Longer than any frame the job takes: the transport's largest
     * message plus the most header it adds, and 8. */
    size_t too_long = ((gv__ctx.tl->attr.max_msg + RX_ALIGN + 8) + 7) &
                      ~(size_t)7;
    int    shm = (strcmp(raw.info->fabric_attr->prov_name, "shm") == 0);
    int    k;

    if (too_long > RAW_BUF)
        gv_abort(1, "mr_ofi_stranger: frames of %zu bytes do not fit the "
                 "stranger's buffer", too_long);
    for (k = 0; k < NKINDS; k++) {
        int    tagged = (k >= K_FIRST_TAGGED);
        size_t len    = WIRE_HDR + 8;

        if ((k >= K_FIRST_FRESH) && !tagged)
            continue; /* attack_fresh() */
        if (tagged && !(raw.tagged && tagged_rx[v]))
            continue;
        if (((k == K_LONG) || (k == K_TLONG)) && shm && !oversize)
            continue; /* wedges the receiver: see the top */
        switch (k) {
        case K_SHORT:
            forge_hdr(0, 0, 0, WIRE_HDR);
            len = 8;
            break;
        case K_LONG:
        case K_TLONG:
            len = too_long;
            forge_hdr(0, 0, 0, len);
            break;
        case K_KEY:
        case K_TKEY:
            len = tagged ? RX_ALIGN + 8 : len;
            forge_hdr(0, 0, 0, len);
            raw.buf[8 + (k % TAG_LEN)] ^= 0x01;
            break;
        case K_SRC:
            forge_hdr(0x7fffffffu, 0, 0, len);
            break;
        case K_SELF:
            forge_hdr((uint32_t)v, 0, 0, len);
            break;
        case K_STALE:
            /* Rank 0's frame 0 to v was delivered in round 0. */
            forge_hdr(0, 0, 0, len);
            break;
        case K_AHEAD:
            forge_hdr(0, 1u << 30, 0, len);
            break;
        case K_PAD:
            forge_hdr(0, 0, 8, len);
            break;
        case K_GRANT_LEN:
            forge_hdr(0, 0, GRANT, len);
            break;
        case K_GRANT_FAR:
            len = WIRE_HDR;
            forge_hdr(0, 1u << 30, GRANT, len);
            break;
        case K_ID_BIG: /* the id word reads 0xa5a5...: over 16 bits */
            forge_hdr(0, 0, IDF, len);
            break;
        case K_ID_SHORT: /* an id frame with no room for its id word */
            len = WIRE_HDR;
            forge_hdr(0, 0, IDF, len);
            break;
        case K_TPAD:
            len = 2 * RX_ALIGN;
            forge_hdr(0, 0, RX_ALIGN, len);
            break;
        }
        forged[v][k] += (uint32_t)raw_send(v, len, tagged);
    }
}

/* The fresh kinds to rank @a v, which expects @a seq next from rank 0. */
static void attack_fresh(int v, uint32_t seq)
{
    const uint64_t       fresh_id = FRESH_ID;
    gv_tl_ofi_counters_t c;
    int                  k;

    gv__tl_ofi_counters(gv__ctx.tl, &c);

    for (k = K_FIRST_FRESH; k < K_FIRST_TAGGED; k++) {
        size_t len = WIRE_HDR + 8 + 8; /* header, id word, 8 bytes */

        switch (k) {
        case K_FKEY:
            forge_hdr(0, seq, IDF, len);
            raw.buf[8 + 3] ^= 0x01;
            break;
        case K_FSRC:
            forge_hdr(0x7fffffffu, seq, IDF, len);
            break;
        case K_FSELF:
            forge_hdr((uint32_t)v, 0, IDF, len);
            break;
        case K_FSTALE:
            forge_hdr(0, seq - 1, IDF, len);
            break;
        case K_FID_BIG: /* the id word reads 0xa5a5... */
            forge_hdr(0, seq, IDF, len);
            break;
        case K_FPAD:
            len = WIRE_HDR + 8;
            forge_hdr(0, seq, IDF | 7, len);
            break;
        case K_FMORE_PAD:
            forge_hdr(0, seq, IDF | MORE | 1, len);
            break;
        case K_FCONT_IDF:
            forge_hdr(0, seq, IDF | CONT, len);
            break;
        case K_FCONT_LONE:
            forge_hdr(0, seq, CONT, len);
            break;
        case K_FMORE_LONG: /* a body of 0xa5 bytes (see the top) */
            len = WIRE_HDR + c.split_max + 8;
            forge_hdr(0, seq, MORE, len);
            break;
        }
        if (k == K_FCONT_LONE) {
            /* Not an id frame: the body is an AM message (8-byte header,
             * 8 bytes of payload) to the handler no job registers. */
            gv_wire_hdr_t h = {.type = GV_WIRE_AM,
                               .id   = (uint16_t)FRESH_ID,
                               .len  = 8};

            memcpy(raw.buf + WIRE_HDR, &h, sizeof(h));
        } else if ((k != K_FID_BIG) && (k != K_FMORE_LONG)) {
            memcpy(raw.buf + WIRE_HDR, &fresh_id, 8);
        }
        forged[v][k] += (uint32_t)raw_send(v, len, 0);
    }
}

static void attack_all(void)
{
    int v;

    for (v = 1; v < np; v++)
        attack(v);
}

/* ---- main --------------------------------------------------------------- */

/* What a wait below waits for (rejections, a seq), and until when. */
struct wait_until {
    uint64_t want;
    uint64_t deadline_ns;
};

static int rejected_enough(void *arg)
{
    struct wait_until   *w = arg;
    gv_tl_ofi_counters_t c;

    gv__tl_ofi_counters(gv__ctx.tl, &c);
    return (c.rejected >= w->want) || (gv__now_ns() > w->deadline_ns);
}

/* Rank 0's frames taken: w->want is the seq expected next from it. */
static int seq_reached(void *arg)
{
    struct wait_until *w = arg;
    uint32_t           tx, rx;

    gv__tl_ofi_seqs(gv__ctx.tl, 0, &tx, &rx);
    return (rx == w->want) || (gv__now_ns() > w->deadline_ns);
}

/* The fresh kinds (see the top), before any other forgery: every rank
 * first takes every frame rank 0 has sent it, so that rank 0 knows the seq
 * it expects next; rank 0 forges while every other rank waits until it has
 * rejected them, before rank 0 sends it anything real. Synchronised
 * through the bootstrap, which does not use the transport's sequences. */
static void fresh_phase(void)
{
    uint32_t next[MAX_RANKS] = {0}, *all, tx, rx, sent;
    int      v, k;

    all = calloc((size_t)np, sizeof(next));
    if (all == NULL)
        gv_abort(1, "mr_ofi_stranger: out of memory");
    if (me == 0)
        for (v = 1; v < np; v++)
            gv__tl_ofi_seqs(gv__ctx.tl, v, &next[v], &rx);
    MR_OK(gv__boot_allgather(gv__ctx.boot, next, sizeof(next), all));
    if (me != 0) {
        struct wait_until w = {
            .want        = all[me], /* rank 0's row comes first */
            .deadline_ns = gv__now_ns() + RAW_WAIT_S * 1000000000ull,
        };
        gv_wait(seq_reached, &w);
        gv__tl_ofi_seqs(gv__ctx.tl, 0, &tx, &rx);
        if (rx != w.want) {
            fprintf(stderr, "[%04d] FAIL expects seq %u from rank 0, which "
                    "sent %u frames\n", me, rx, all[me]);
            failures++;
        }
    }
    MR_OK(gv__boot_allgather(gv__ctx.boot, next, sizeof(next), all));
    /* The receivers poll while rank 0 sends: a provider may need them to
     * (rxm connects on the first frame). Every fresh kind goes out. */
    memset(next, 0, sizeof(next));
    if (me == 0) {
        for (v = 1; v < np; v++) {
            uint32_t seq;

            gv__tl_ofi_seqs(gv__ctx.tl, v, &seq, &rx);
            attack_fresh(v, seq);
            for (k = K_FIRST_FRESH; k < K_FIRST_TAGGED; k++)
                next[v] += forged[v][k];
        }
    } else {
        struct wait_until w = {
            .want        = K_FIRST_TAGGED - K_FIRST_FRESH,
            .deadline_ns = gv__now_ns() + RAW_WAIT_S * 1000000000ull,
        };

        gv_wait(rejected_enough, &w);
    }
    MR_OK(gv__boot_allgather(gv__ctx.boot, next, sizeof(next), all));
    sent = all[me];
    if (me != 0) {
        gv_tl_ofi_counters_t c;

        gv__tl_ofi_counters(gv__ctx.tl, &c);
        if (c.rejected != sent) {
            fprintf(stderr, "[%04d] FAIL rejected %llu of the %u fresh "
                    "frames forged to it\n", me,
                    (unsigned long long)c.rejected, sent);
            failures++;
        }
    }
    free(all);
    /* A frame taken by mistake has moved a sequence on (the real frame it
     * took the place of would be dropped as stale, and round 0 wait for
     * it) or counts as handled for quiescence (the barriers would wait):
     * stop here, with the reason above, rather than at the time limit. */
    if (failures > 0)
        gv_abort(1, "mr_ofi_stranger: rank %d failed before the rounds, "
                 "with the fresh forged frames (see FAIL above)", me);
}

int main(int argc, char **argv)
{
    gv_am_id_t           id;
    gv_tl_ofi_counters_t c;
    uint32_t             mine[MAX_RANKS * NKINDS], *all;
    uint64_t             expect = 0, want;
    int                  i, k;

    mr_init(&argc, &argv);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--oversize") == 0) {
            oversize = 1;
        } else {
            fprintf(stderr, "usage: mr_ofi_stranger [--oversize]\n");
            return 2;
        }
    }
    me = gv_rank();
    np = gv_nranks();
    if (strcmp(gv_transport_name(), "ofi") != 0)
        mr_skip("not ofi");
    if (np > MAX_RANKS)
        mr_skip("at most 64 ranks");
    if (np < 2)
        mr_skip("needs 2 ranks");
    mr_stream_init(0x0f1d0f1dull);
    MR_OK(gv_am_register(mr_stream_on_msg, NULL, &id));

    /* Who posts buffers for tagged frames. */
    gv__tl_ofi_counters(gv__ctx.tl, &c);
    mine[0] = (uint32_t)c.tagged_rx;
    MR_OK(gv__boot_allgather(gv__ctx.boot, mine, sizeof(mine[0]),
                             tagged_rx));
    if (me == 0) {
        raw_open();
        for (i = 1; i < np; i++)
            raw_insert(i);
    }
    gv_barrier();
    fresh_phase();

    /* Round 0: every rank delivers frames from every other (so rank 0's
     * seq 0 is stale everywhere before the attack). */
    all_to_all(id, 0, 0);
    want = (uint64_t)(np - 1) * MSGS;
    gv_wait(mr_stream_received_at_least, &want);
    gv_barrier();

    /* Round 1: the attack lands while the messages fly. */
    all_to_all(id, 1, 1);
    want = (uint64_t)(np - 1) * MSGS * 2;
    gv_wait(mr_stream_received_at_least, &want);

    /* Everyone learns how many frames were forged to whom. */
    memset(mine, 0, sizeof(mine));
    if (me == 0)
        memcpy(mine, forged, sizeof(mine));
    all = calloc((size_t)np, sizeof(mine));
    MR_OK(gv__boot_allgather(gv__ctx.boot, mine, sizeof(mine), all));
    if (me != 0) /* rank 0's forged[me][], first in all */
        for (k = 0; k < NKINDS; k++)
            expect += all[me * NKINDS + k];
    if (expect > 0) {
        struct wait_until w = {
            .want        = expect,
            .deadline_ns = gv__now_ns() + RAW_WAIT_S * 1000000000ull,
        };
        gv_wait(rejected_enough, &w);
    }
    gv_barrier();

    gv__tl_ofi_counters(gv__ctx.tl, &c);
    if (mr_stream.received != want) {
        fprintf(stderr, "[%04d] FAIL received %llu messages, expected %llu\n",
                me, (unsigned long long)mr_stream.received,
                (unsigned long long)want);
        failures++;
    }
    if (c.rejected != expect) {
        fprintf(stderr, "[%04d] FAIL rejected %llu frames, %llu were "
                "forged to it\n", me, (unsigned long long)c.rejected,
                (unsigned long long)expect);
        failures++;
    }
    if (me == 0) {
        for (i = 1; i < np; i++) {
            char line[512] = "";
            int  n = 0, kinds = 0;

            for (k = 0; k < NKINDS; k++) {
                if (forged[i][k] == 0)
                    continue;
                kinds++;
                n += snprintf(line + n, sizeof(line) - (size_t)n, " %s %u",
                              kind_name[k], forged[i][k]);
            }
            printf("[0000] mr_ofi_stranger: forged to rank %d (%d kinds, "
                   "provider %s):%s\n", i, kinds,
                   raw.info->fabric_attr->prov_name, line);
            /* Every untagged kind must have gone out. */
            for (k = 0; k < K_FIRST_TAGGED; k++)
                if ((forged[i][k] == 0) &&
                    ((k != K_LONG) || oversize ||
                     (strcmp(raw.info->fabric_attr->prov_name, "shm") != 0))) {
                    fprintf(stderr, "[0000] FAIL no %s frame reached rank "
                            "%d\n", kind_name[k], i);
                    failures++;
                }
        }
    }
    printf("[%04d] received %llu, rejected %llu of %llu forged frames\n", me,
           (unsigned long long)mr_stream.received,
           (unsigned long long)c.rejected,
           (unsigned long long)expect);

    /* Everyone learns whether anyone failed, so that no rank says ok for
     * a job that did not pass. */
    {
        int *fails = calloc((size_t)np, sizeof(*fails)), total = 0;
        MR_OK(gv__boot_allgather(gv__ctx.boot, &failures, sizeof(failures),
                                 fails));
        for (i = 0; i < np; i++)
            total += fails[i];
        free(fails);
        failures = total;
    }
    gv_barrier();
    if (me == 0)
        raw_close();
    gv_barrier();
    gv_finalize();
    if (me == 0) {
        if (failures == 0)
            printf("mr_ofi_stranger: ok (%d ranks)\n", np);
        else
            printf("mr_ofi_stranger: FAIL (%d failed checks)\n", failures);
    }
    free(all);
    mr_stream_fini();
    return (failures == 0) ? 0 : 1;
}

#else

int main(void)
{
    printf("skip: built without libfabric (OFI=1; needs libfabric-dev)\n");
    return 77;
}

#endif
