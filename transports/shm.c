/* Shared-memory transport: one POSIX shared-memory segment per rank holding
 * its incoming rings, its doorbell and its symmetric heap; every rank maps
 * every other rank's segment. SPDX-License-Identifier: BSD-3-Clause
 *
 * Segment of rank r (the owner), mapped by every rank of the job:
 *
 *   0             +----------------------------------------------+
 *                 | symmetric heap, heap_size bytes              |  2 MiB
 *                 |   (put/get/atomics of every rank land here)  |  aligned
 *   heap_end      +----------------------------------------------+
 *                 | segment header: magic, sizes, job id (128 B) |  written
 *                 +----------------------------------------------+  once
 *                 | wake: sleeping flag, doorbell (futex) (128 B)|
 *                 +----------------------------------------------+
 *                 | hint bitmap: one bit per sender (n x 128 B)  |  many
 *                 +----------------------------------------------+  peers
 *   rings_off     | ring from sender s (one per other rank):     |
 *                 |   head: consumer's published index  (128 B)  |  r writes
 *                 |   want: producer is out of space    (128 B)  |  s writes
 *                 |   data: ring_size bytes of records           |  s writes
 *                 +----------------------------------------------+
 *                 | ring from the next sender ...                |
 *   seg_size      +----------------------------------------------+
 *
 * Control words sit 128 bytes apart because the adjacent-line prefetcher
 * moves lines in pairs; two writers on one pair would ping-pong it.
 *
 * A ring is single-producer (rank s), single-consumer (rank r). Records are
 * 8-byte aligned and start with one header word:
 *
 *    63          40 39     32 31                 0
 *   +--------------+---------+--------------------+
 *   |     zero     |  kind   |       length       |   then length bytes,
 *   +--------------+---------+--------------------+   padded to 8
 *   kind 1: a message; kind 2: wrap, continue at offset 0 (length 0).
 *   A header word of 0 means "nothing yet".
 *
 * The producer keeps its tail private: the consumer learns of a record by
 * polling the header word at its own position, so one cache line carries
 * both the signal and (for small messages) the payload. For that to work
 * the word at the producer's position is always 0: before publishing a
 * record the producer zeroes the header word that follows it, and the
 * header itself is stored last (seq_cst, which also orders it before the
 * sender's look at the sleeping flag, see wait()). A record and the zero
 * word after it never straddle the end of the ring; when one would, the
 * producer writes a wrap record and starts again at offset 0.
 *
 * Positions are also counted as absolute byte counts (tail, head) that
 * include the bytes a wrap skips, so "used" is tail - head with no division.
 * The consumer publishes its head lazily (every ring/8 bytes, or at once
 * when the producer has said it is out of space), so in steady state the
 * head line does not bounce with every message. The largest message is
 * ring/4 plus GV_TL_MAX_HDR, so that one always fits once the consumer has
 * caught up (even with a wrap and an unpublished eighth); the aggregator
 * fragments anything larger.
 *
 * Sleeping (wait()): the owner stores its sleeping flag, looks at its
 * rings once more and FUTEX_WAITs on its doorbell; a sender loads the flag
 * after storing its record, and if it is set, clears it, bumps the
 * doorbell and FUTEX_WAKEs (without FUTEX_PRIVATE_FLAG: the word is shared
 * between processes). Store-then-load on both sides, all seq_cst, so one
 * of the two always sees the other. A sender that finds a ring full sets
 * that ring's want flag the same way; the consumer then publishes its head
 * at once and wakes the sender, so wait() also returns when space frees.
 *
 * Life of a segment: shm_open(O_EXCL), posix_fallocate (so that a full
 * /dev/shm fails init with a reason instead of SIGBUS later), mmap, an
 * exchange; map every peer's, an exchange; shm_unlink at once. From then
 * on nothing is left in /dev/shm however the job ends; before that, a
 * signal handler and every error path remove the job's names.
 *
 * Opened on a node view of the bootstrap (core/boot.h; the composite
 * transports shm+<net>, transports/hybrid.c), the transport's ranks are
 * the node's: names, kick sockets, messages and failed peers use the
 * job's rank numbers (boot->world_of), so that every (pretend) node on a
 * machine has names of its own.
 *
 * Everything read from a peer's memory is checked before use: a header
 * whose kind, length or extent is wrong, or a published head that moves
 * backwards or past the tail, stops that ring, is counted and reported as
 * a failed peer; nothing is read out of bounds. Payloads are delivered in
 * place (no copy): a peer can scribble on them while a handler runs, but a
 * peer that wants to corrupt us can write our heap anyway; the transport
 * only promises that its own bookkeeping cannot be driven out of bounds.
 */
#define _GNU_SOURCE
#include "transports/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#define SHM_MAGIC      0x4756534d48524e47ull /* "GNRHMSVG" */
#define SHM_VERSION    1u
#define SHM_LINE       128u   /* spacing of words written by different ranks */
#define SHM_HUGE       (2u << 20)
#define SHM_FALLOC_STEP (256u << 20) /* posix_fallocate in steps */
#define SHM_REC_MSG    1ull
#define SHM_REC_WRAP   2ull
#define SHM_HDR(_k, _len) (((uint64_t)(_k) << 32) | (uint64_t)(_len))
/* Records delivered from one ring per progress() before moving on, so
 * that one busy sender cannot starve the others. */
#define SHM_RX_BUDGET  64u
/* With more peers than this, senders set a bit in the receiver's hint
 * bitmap and the receiver polls only flagged rings. */
#ifndef SHM_HINT_MIN_PEERS
#define SHM_HINT_MIN_PEERS 16
#endif

/* The segment header, written once by the owner before the first
 * exchange and checked by every rank that maps the segment. */
typedef struct {
    uint64_t magic;
    uint32_t version;
    uint32_t rank;
    uint32_t nranks;
    uint32_t use_hint;
    uint64_t job_id;
    uint64_t ring_size;
    uint64_t heap_size;
    uint64_t rings_off;
    uint64_t seg_size;
} shm_seg_hdr_t;

/* Written by the owner when it goes to sleep and by the sender that wakes
 * it; read by every sender after every message (a shared line, so the
 * read is an L1 hit until someone sleeps). */
typedef struct {
    uint32_t sleeping;  /* WAKE_FUTEX | WAKE_FD */
    uint32_t doorbell;  /* futex word: bumped before FUTEX_WAKE */
} shm_wake_t;
/* How the owner sleeps: in wait() on the doorbell, or in the host's loop
 * on its kick socket (gv_wait_fd). */
#define WAKE_FUTEX 1u
#define WAKE_FD    2u

/* What each rank contributes to the exchanges during init. */
typedef struct {
    int32_t  status;
    uint32_t use_hint;
    uint64_t seg_size;
    uint64_t ring_size;
    uint64_t heap_size;
} shm_info_t;

/* Per-peer state, private to this rank. */
typedef struct {
    /* Sending to the peer: our ring inside its segment (hot in am_send). */
    uint8_t    *tx_data;
    uint64_t    tx_off;        /* offset of the next record */
    uint64_t    tx_tail;       /* bytes produced, wraps included */
    uint64_t    tx_head;       /* last head the peer published, checked */
    uint64_t   *tx_head_p;     /* peer writes */
    uint32_t   *tx_want_p;     /* we write when out of space */
    shm_wake_t *tx_wake;
    uint64_t   *tx_hint_p;     /* our word of its hint bitmap, or NULL */
    uint64_t    tx_hint_bit;
    int         tx_blocked;    /* last send found the ring full */
    int         tx_dead;       /* peer corrupted its side: stop sending */
    /* Receiving from the peer: its ring inside our segment. */
    uint8_t    *rx_data;
    uint64_t    rx_off;
    uint64_t    rx_head;       /* bytes consumed, wraps included */
    uint64_t    rx_pub;        /* last value stored to *rx_head_p */
    uint64_t   *rx_head_p;     /* we write */
    uint32_t   *rx_want_p;     /* peer writes */
    int         rx_stopped;    /* protocol error: ring no longer read */
    /* One-sided operations land in the peer's heap. */
    uint8_t    *heap;
    /* The mapping of the peer's segment (ours for the own rank). */
    void       *map;
    size_t      map_len;
} shm_peer_t;

typedef struct {
    int             rank, size;
    uint64_t        ring_size;   /* data bytes per ring, multiple of 128 */
    uint64_t        rec_end;     /* a record must end at or before this */
    uint64_t        pub_every;   /* publish the head after this many bytes */
    size_t          max_msg;
    size_t          heap_size;
    uint64_t        rings_off;
    size_t          seg_size;
    int             use_hint;
    unsigned        hint_words;
    shm_peer_t     *peers;
    int            *poll;        /* ranks to poll, own rank left out */
    int             npoll;
    int             rr;          /* round-robin start in poll[] */
    int             ntx_blocked;
    uint64_t       *pending;     /* hint bits taken but not drained */
    shm_wake_t     *wake;        /* own */
    uint64_t       *hint;        /* own */
    /* Sleeping on an fd (see "Waking the host" below). */
    int             ksock;       /* bound: kicks arrive here */
    int             tsock;       /* unbound: we kick peers from it */
    uint64_t        job_id;
    const int      *world_of;    /* the boot's (a node view), or NULL */
    gv_tl_recv_cb   recv_cb;
    void           *recv_arg;
    /* Counters, printed at fini with GV_STATS. */
    uint64_t        n_sent, n_recv, n_full, n_sleeps, n_wakes, n_proto;
} shm_t;

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) & ~(a - 1);
}

/* Rank @a r of this transport as the job numbers it: what names shared
 * memory objects (unique per node of a composite transport, see
 * transports/hybrid.c), and peers in messages and failures. */
static int wrank(const shm_t *s, int r)
{
    return (s->world_of != NULL) ? s->world_of[r] : r;
}

static int ring_index(int owner, int sender)
{
    return (sender < owner) ? sender : (sender - 1);
}

static long futex(uint32_t *addr, int op, uint32_t val,
                  const struct timespec *ts)
{
    /* No FUTEX_PRIVATE_FLAG: the word is shared between processes. */
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

/* ------------------------------------------------------------------ */
/* Segments.                                                           */

static void seg_name(char *buf, size_t len, uint64_t job_id, int rank)
{
    snprintf(buf, len, "/gv-%llx-%d", (unsigned long long)job_id, rank);
}

/* Between shm_open and shm_unlink a segment exists in /dev/shm: if the job
 * is stopped meanwhile, every rank still running removes all ranks' names
 * (a rank that was SIGKILLed cannot remove its own). */
static void cleanup_arm(shm_t *s, uint64_t job_id)
{
    char   name[64];
    char **paths = gv_calloc((size_t)s->size, sizeof(char *));
    int    r;

    for (r = 0; r < s->size; r++) {
        seg_name(name, sizeof(name), job_id, wrank(s, r));
        paths[r] = gv_malloc(sizeof("/dev/shm") + strlen(name));
        sprintf(paths[r], "/dev/shm%s", name);
    }
    gv__cleanup_arm(paths, s->size);
}

/* Map @a len bytes of @a fd at an address aligned for 2 MiB pages, so that
 * the heap can use huge pages where the kernel offers them for shmem. */
static void *seg_map(int fd, size_t len)
{
    size_t    align = (len >= SHM_HUGE) ? SHM_HUGE : (size_t)getpagesize();
    size_t    resv  = len + align;
    uint8_t  *r, *a;
    void     *m;

    r = mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
             MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return NULL;
    a = (uint8_t *)align_up((uintptr_t)r, align);
    m = mmap(a, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (m == MAP_FAILED) {
        int saved = errno;
        munmap(r, resv);
        errno = saved;
        return NULL;
    }
    if (a > r)
        munmap(r, (size_t)(a - r));
    if (a + len < r + resv)
        munmap(a + len, (size_t)(r + resv - (a + len)));
    return a;
}

static int seg_layout(shm_t *s, size_t heap_req, uint64_t ring_env)
{
    size_t page = (size_t)getpagesize();
    size_t stride, rings, total;

    s->ring_size = ring_env & ~(uint64_t)(SHM_LINE - 1);
    s->rec_end   = s->ring_size - 8;
    s->pub_every = s->ring_size / 8;
    s->max_msg   = (size_t)(s->ring_size / 4) + GV_TL_MAX_HDR;
    if ((heap_req > (SIZE_MAX / 4)) || (s->ring_size > (1ull << 31)))
        return -1;
    s->heap_size = heap_req;
    s->use_hint  = (s->size - 1) > SHM_HINT_MIN_PEERS;
    s->hint_words = s->use_hint ? (unsigned)((s->size + 63) / 64) : 0;
    stride       = 2 * SHM_LINE + (size_t)s->ring_size;
    s->rings_off = align_up(align_up(heap_req, page) + 2 * SHM_LINE +
                            align_up(s->hint_words * 8u, SHM_LINE), SHM_LINE);
    if (__builtin_mul_overflow(stride, (size_t)(s->size - 1), &rings) ||
        __builtin_add_overflow(rings, (size_t)s->rings_off, &total))
        return -1;
    s->seg_size = align_up(total, page);
    return 0;
}

/* Ask for huge pages on the heap (remote atomics and puts land anywhere
 * in it, so TLB reach matters); the kernel may say no, which is fine. */
static void seg_advise(shm_t *s, void *base)
{
    if (s->heap_size >= SHM_HUGE)
        (void)madvise(base, s->heap_size & ~(size_t)(SHM_HUGE - 1),
                      MADV_HUGEPAGE);
}

static shm_seg_hdr_t *seg_hdr(shm_t *s, void *base)
{
    return (shm_seg_hdr_t *)((uint8_t *)base + align_up(s->heap_size,
                                                        (size_t)getpagesize()));
}

/* Create, size and map the own segment. Logs why at info on failure and
 * leaves nothing behind (except the mapping, which the caller drops). */
static gv_status_t seg_create(shm_t *s, uint64_t job_id, int local_size,
                              void **base_p)
{
    char           name[64];
    int            fd, err, tries;
    size_t         off;
    void          *base;
    shm_seg_hdr_t *h;

    seg_name(name, sizeof(name), job_id, wrank(s, s->rank));
    /* The pages are reserved below, and tmpfs is often as large as RAM. */
    if (!gv__node_mem_fits("shm", s->seg_size, local_size,
                           "GV_HEAP or GV_SHM_RING"))
        return GV_ERR_NO_MEMORY;
    for (tries = 0;; tries++) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if ((fd >= 0) || (errno != EEXIST) || (tries > 0))
            break;
        /* Job ids are unique while a job runs, so this is a leftover of a
         * job that died during its init: remove it and try once more. */
        gv_info("shm: removing stale segment %s", name);
        shm_unlink(name);
    }
    if (fd < 0) {
        gv_info("shm: shm_open %s: %m", name);
        return GV_ERR_IO;
    }
    /* The umask may have taken bits away; peers need read and write. */
    if (fchmod(fd, 0600) != 0)
        gv_debug("shm: fchmod %s: %m", name);
    if (ftruncate(fd, (off_t)s->seg_size) != 0) {
        gv_info("shm: ftruncate %s to %zu bytes: %m", name, s->seg_size);
        goto err_unlink;
    }
    /* Reserve the pages now: tmpfs allocates on first touch, and a full
     * /dev/shm would otherwise kill the rank with SIGBUS much later. In
     * steps of SHM_FALLOC_STEP: the kernel holds a SIGTERM until the call
     * returns, and gvrun's SIGKILL a second later (a 6 GiB heap took
     * longer) left the job's names behind; between steps the cleanup
     * handler runs. */
    for (off = 0, err = 0; (off < s->seg_size) && (err == 0);
         off += SHM_FALLOC_STEP)
        err = posix_fallocate(fd, (off_t)off,
                              (off_t)((s->seg_size - off < SHM_FALLOC_STEP)
                                          ? s->seg_size - off
                                          : SHM_FALLOC_STEP));
    if ((err != 0) && (err != EOPNOTSUPP) && (err != EINVAL)) {
        errno = err;
        gv_info("shm: cannot reserve %zu bytes in /dev/shm for %s (%m); "
                "lower GV_HEAP or GV_SHM_RING, or enlarge /dev/shm",
                s->seg_size, name);
        goto err_unlink;
    }
    base = seg_map(fd, s->seg_size);
    if (base == NULL) {
        gv_info("shm: mmap %s (%zu bytes): %m", name, s->seg_size);
        goto err_unlink;
    }
    close(fd);
    seg_advise(s, base);
    h            = seg_hdr(s, base);
    h->version   = SHM_VERSION;
    h->rank      = (uint32_t)s->rank;
    h->nranks    = (uint32_t)s->size;
    h->use_hint  = (uint32_t)s->use_hint;
    h->job_id    = job_id;
    h->ring_size = s->ring_size;
    h->heap_size = s->heap_size;
    h->rings_off = s->rings_off;
    h->seg_size  = s->seg_size;
    __atomic_store_n(&h->magic, SHM_MAGIC, __ATOMIC_RELEASE);
    *base_p = base;
    return GV_OK;

err_unlink:
    close(fd);
    shm_unlink(name);
    return GV_ERR_NO_MEMORY;
}

/* Open and map a peer's segment, and check that it is what we expect. */
static gv_status_t seg_attach(shm_t *s, uint64_t job_id, int peer,
                              void **base_p)
{
    char           name[64];
    struct stat    st;
    int            fd;
    void          *base;
    shm_seg_hdr_t *h;

    seg_name(name, sizeof(name), job_id, wrank(s, peer));
    fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        gv_info("shm: shm_open %s (rank %d): %m", name, wrank(s, peer));
        return GV_ERR_IO;
    }
    if (fstat(fd, &st) != 0) {
        gv_info("shm: fstat %s: %m", name);
        goto err_close;
    }
    /* A shorter file would raise SIGBUS on access, another owner means
     * the name was not created by this job. */
    if (((size_t)st.st_size != s->seg_size) || (st.st_uid != geteuid())) {
        gv_info("shm: segment %s has size %lld and owner %u, expected %zu "
                "and %u", name, (long long)st.st_size, (unsigned)st.st_uid,
                s->seg_size, (unsigned)geteuid());
        goto err_close;
    }
    base = seg_map(fd, s->seg_size);
    if (base == NULL) {
        gv_info("shm: mmap %s (%zu bytes): %m", name, s->seg_size);
        goto err_close;
    }
    close(fd);
    seg_advise(s, base);
    h = seg_hdr(s, base);
    if ((__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC) ||
        (h->version != SHM_VERSION) || (h->rank != (uint32_t)peer) ||
        (h->nranks != (uint32_t)s->size) || (h->job_id != job_id) ||
        (h->ring_size != s->ring_size) || (h->heap_size != s->heap_size) ||
        (h->rings_off != s->rings_off) || (h->seg_size != s->seg_size) ||
        (h->use_hint != (uint32_t)s->use_hint)) {
        gv_info("shm: segment %s does not have the header rank %d should "
                "have written", name, wrank(s, peer));
        munmap(base, s->seg_size);
        return GV_ERR_PROTO;
    }
    *base_p = base;
    return GV_OK;

err_close:
    close(fd);
    return GV_ERR_IO;
}

/* Fill the private peer state from the mapped segments. */
static void peers_setup(shm_t *s)
{
    size_t      stride = 2 * SHM_LINE + (size_t)s->ring_size;
    uint8_t    *own    = s->peers[s->rank].map;
    int         p, n = 0;

    s->wake = (shm_wake_t *)((uint8_t *)seg_hdr(s, own) + SHM_LINE);
    s->hint = s->use_hint ? (uint64_t *)((uint8_t *)s->wake + SHM_LINE) :
                            NULL;
    for (p = 0; p < s->size; p++) {
        shm_peer_t *pe = &s->peers[p];
        uint8_t    *seg = pe->map;

        pe->heap = seg;
        if (p == s->rank)
            continue;
        /* Our ring in the peer's segment. */
        uint8_t *tx = seg + s->rings_off +
                      stride * (size_t)ring_index(p, s->rank);
        pe->tx_head_p = (uint64_t *)tx;
        pe->tx_want_p = (uint32_t *)(tx + SHM_LINE);
        pe->tx_data   = tx + 2 * SHM_LINE;
        pe->tx_wake   = (shm_wake_t *)((uint8_t *)seg_hdr(s, seg) + SHM_LINE);
        if (s->use_hint) {
            pe->tx_hint_p   = (uint64_t *)((uint8_t *)pe->tx_wake + SHM_LINE) +
                              (s->rank >> 6);
            pe->tx_hint_bit = 1ull << (s->rank & 63);
        }
        /* The peer's ring in our segment. */
        uint8_t *rx = own + s->rings_off + stride * (size_t)ring_index(s->rank,
                                                                      p);
        pe->rx_head_p = (uint64_t *)rx;
        pe->rx_want_p = (uint32_t *)(rx + SHM_LINE);
        pe->rx_data   = rx + 2 * SHM_LINE;
        s->poll[n++]  = p;
    }
    s->npoll = n;
}

static void peers_unmap(shm_t *s)
{
    int p;

    for (p = 0; p < s->size; p++) {
        if (s->peers[p].map != NULL)
            munmap(s->peers[p].map, s->peers[p].map_len);
        s->peers[p].map = NULL;
    }
}

static void wake_fd_close(shm_t *s);
static int  wake_fd_open(shm_t *s);

static void shm_free(shm_t *s)
{
    wake_fd_close(s);
    peers_unmap(s);
    gv_free(s->pending);
    gv_free(s->poll);
    gv_free(s->peers);
    gv_free(s);
}

/* One exchange of shm_info_t; fails on every rank if one rank failed. */
static gv_status_t exchange(shm_t *s, gv_boot_t *boot, gv_status_t mine,
                            const char *what)
{
    shm_info_t  info, *all;
    gv_status_t status;
    int         p;

    memset(&info, 0, sizeof(info));
    info.status    = (int32_t)mine;
    info.use_hint  = (uint32_t)s->use_hint;
    info.seg_size  = s->seg_size;
    info.ring_size = s->ring_size;
    info.heap_size = s->heap_size;
    all = gv_calloc((size_t)s->size, sizeof(*all));
    status = gv__boot_allgather(boot, &info, sizeof(info), all);
    if (status != GV_OK) {
        gv_info("shm: bootstrap exchange failed while %s: %s", what,
                gv_status_str(status));
        goto out;
    }
    for (p = 0; p < s->size; p++) {
        if (all[p].status != GV_OK) {
            if (p != s->rank)
                gv_info("shm: rank %d failed %s", wrank(s, p), what);
            status = (gv_status_t)all[p].status;
            /* Only forward codes we know; the byte came from a peer. */
            if ((status > GV_OK) ||
                (strcmp(gv_status_name(status), "UNKNOWN") == 0))
                status = GV_ERR_IO;
            goto out;
        }
        if ((all[p].seg_size != info.seg_size) ||
            (all[p].ring_size != info.ring_size) ||
            (all[p].heap_size != info.heap_size) ||
            (all[p].use_hint != info.use_hint)) {
            gv_info("shm: rank %d uses ring %llu and heap %llu bytes, this "
                    "rank %llu and %llu: GV_SHM_RING and GV_HEAP must be the "
                    "same on every rank", wrank(s, p),
                    (unsigned long long)all[p].ring_size,
                    (unsigned long long)all[p].heap_size,
                    (unsigned long long)info.ring_size,
                    (unsigned long long)info.heap_size);
            status = GV_ERR_INVALID;
            goto out;
        }
    }
out:
    gv_free(all);
    return status;
}

static gv_status_t shm_init(gv_tl_t *tl)
{
    gv_boot_t  *boot = tl->boot;
    shm_t      *s;
    void       *own = NULL;
    char        name[64];
    gv_status_t status, mine;
    int         p;

    /* The same answer on every rank, so no exchange is needed to agree. */
    if (boot->nnodes != 1) {
        gv_info("shm: the job spans %d nodes; shared memory needs every "
                "rank on one node", boot->nnodes);
        return GV_ERR_UNSUPPORTED;
    }
    s          = gv_calloc(1, sizeof(*s));
    s->rank    = tl->rank;
    s->size    = tl->size;
    s->peers   = gv_calloc((size_t)s->size, sizeof(*s->peers));
    s->poll    = gv_calloc((size_t)s->size, sizeof(*s->poll));
    s->recv_cb = tl->params.recv_cb;
    s->recv_arg = tl->params.recv_arg;
    s->ksock   = s->tsock = -1;
    s->job_id  = boot->job_id;
    s->world_of = boot->world_of;

    /* Every failure from here to the first exchange is reported through
     * it, so that no rank waits for one that gave up. */
    if (seg_layout(s, tl->params.heap_size, gv__env.SHM_RING) != 0) {
        gv_info("shm: %d rings of %llu bytes plus a heap of %zu bytes do "
                "not fit in memory", s->size - 1,
                (unsigned long long)gv__env.SHM_RING, tl->params.heap_size);
        mine = GV_ERR_NO_MEMORY;
    } else {
        if (s->use_hint)
            s->pending = gv_calloc(s->hint_words, sizeof(*s->pending));
        cleanup_arm(s, boot->job_id);
        mine = seg_create(s, boot->job_id, boot->local_size, &own);
    }
    if (mine == GV_OK) {
        s->peers[s->rank].map     = own;
        s->peers[s->rank].map_len = s->seg_size;
    }
    seg_name(name, sizeof(name), boot->job_id, wrank(s, s->rank));
    status = exchange(s, boot, mine, "to create its shared-memory segment");
    if (status != GV_OK)
        goto err_unlink;

    mine = GV_OK;
    for (p = 0; (p < s->size) && (mine == GV_OK); p++) {
        if (p == s->rank)
            continue;
        mine = seg_attach(s, boot->job_id, p, &s->peers[p].map);
        s->peers[p].map_len = s->seg_size;
    }
    status = exchange(s, boot, mine, "to map the other ranks' segments");
    if (status != GV_OK)
        goto err_unlink;

    /* Everyone has mapped everything: the names are no longer needed, and
     * without them nothing is left in /dev/shm however the job ends. Every
     * rank removes every name, so that one that dies right after the
     * exchange leaves nothing behind either (a name already gone is
     * fine). */
    if ((shm_unlink(name) != 0) && (errno != ENOENT))
        gv_warn("shm: shm_unlink %s: %m", name);
    gv__cleanup_now();
    gv__cleanup_disarm();

    peers_setup(s);
    tl->priv           = s;
    tl->attr.caps      = GV_TL_CAP_AM | GV_TL_CAP_RMA | GV_TL_CAP_ATOMIC64 |
                         GV_TL_CAP_WAIT | GV_TL_CAP_WAIT_SEND;
    if (wake_fd_open(s) == 0)
        tl->attr.caps |= GV_TL_CAP_WAIT_FD;
    tl->attr.max_msg   = s->max_msg;
    /* Every send is copied into the ring before am_send returns: the AM
     * layer may hand over frames without copying them first. */
    tl->attr.max_inline = s->max_msg;
    tl->attr.heap_base = own;
    snprintf(tl->attr.detail, sizeof(tl->attr.detail),
             "%d peers, ring %llu KiB each, heap %zu KiB%s",
             s->size - 1, (unsigned long long)(s->ring_size >> 10),
             s->heap_size >> 10, s->use_hint ? ", hint bitmap" : "");
    gv_debug("shm: segment %s, %zu bytes, max message %zu", name,
             s->seg_size, s->max_msg);
    return GV_OK;

err_unlink:
    /* Remove every name of this job: a rank that died after creating its
     * segment cannot remove its own. The others are failing too. */
    gv__cleanup_now();
    gv__cleanup_disarm();
    shm_free(s);
    return status;
}

static void shm_fini(gv_tl_t *tl)
{
    shm_t *s = tl->priv;

    if (s == NULL)
        return;
    if (gv__env.STATS)
        fprintf(stderr, "[%04d] STATS shm: sent %llu msgs; recv %llu msgs; "
                "ring full %llu times; slept %llu times; woke peers %llu "
                "times; protocol errors %llu\n",
                s->rank, (unsigned long long)s->n_sent,
                (unsigned long long)s->n_recv, (unsigned long long)s->n_full,
                (unsigned long long)s->n_sleeps,
                (unsigned long long)s->n_wakes,
                (unsigned long long)s->n_proto);
    shm_free(s);
    tl->priv           = NULL;
    tl->attr.heap_base = NULL;
}

/* ------------------------------------------------------------------ */
/* Messages.                                                           */

static void kick(shm_t *s, int rank);

static void wake_owner(shm_t *s, shm_wake_t *w, int rank)
{
    uint32_t how;

    /* Only the sender that takes the flag pays for the system call. */
    how = __atomic_exchange_n(&w->sleeping, 0, __ATOMIC_SEQ_CST);
    if (how & WAKE_FUTEX) {
        __atomic_fetch_add(&w->doorbell, 1, __ATOMIC_SEQ_CST);
        futex(&w->doorbell, FUTEX_WAKE, 1, NULL);
        s->n_wakes++;
    }
    if (how & WAKE_FD) {
        kick(s, rank);
        s->n_wakes++;
    }
}

static gv_status_t tx_peer_corrupt(shm_t *s, int dst, uint64_t head)
{
    shm_peer_t *p = &s->peers[dst];

    gv_error("shm: rank %d published head %llu for our ring, outside "
             "%llu..%llu; no longer sending to it",
             wrank(s, dst), (unsigned long long)head,
             (unsigned long long)p->tx_head, (unsigned long long)p->tx_tail);
    s->n_proto++;
    p->tx_dead = 1;
    gv__peer_failed(wrank(s, dst), "shm: corrupted the head of a ring");
    return GV_ERR_UNREACHABLE;
}

/* Read the head the consumer published; check it moves forward and not
 * past what we produced. */
static int tx_head_load(shm_peer_t *p, uint64_t *head_p)
{
    uint64_t head = __atomic_load_n(p->tx_head_p, __ATOMIC_SEQ_CST);

    *head_p = head;
    return (head - p->tx_head) <= (p->tx_tail - p->tx_head);
}

/* The cached head says the ring is too full for @a need bytes: look at
 * the real one, and if it is still full ask the consumer to publish and
 * wake us as soon as it frees space. */
static gv_status_t tx_space(shm_t *s, int dst, uint64_t need)
{
    shm_peer_t *p = &s->peers[dst];
    uint64_t    head;

    if (p->tx_dead)
        return GV_ERR_UNREACHABLE;
    if (!tx_head_load(p, &head))
        return tx_peer_corrupt(s, dst, head);
    p->tx_head = head;
    if ((p->tx_tail + need - head) > s->ring_size) {
        /* Store the flag, then load the head again (both seq_cst): either
         * we see the consumer's newer head, or it sees our flag. */
        __atomic_store_n(p->tx_want_p, 1, __ATOMIC_SEQ_CST);
        if (!tx_head_load(p, &head))
            return tx_peer_corrupt(s, dst, head);
        p->tx_head = head;
        if ((p->tx_tail + need - head) > s->ring_size) {
            if (!p->tx_blocked) {
                p->tx_blocked = 1;
                s->ntx_blocked++;
            }
            s->n_full++;
            return GV_ERR_NO_RESOURCE;
        }
    }
    if (p->tx_blocked) {
        p->tx_blocked = 0;
        s->ntx_blocked--;
    }
    return GV_OK;
}

static gv_status_t shm_am_send(gv_tl_t *tl, int dst, const void *hdr,
                               size_t hdr_len, const void *payload,
                               size_t len, gv_req_t *req)
{
    shm_t      *s = tl->priv;
    shm_peer_t *p;
    size_t      n = hdr_len + len;
    uint64_t    off, rb, need;
    uint8_t    *d;
    int         wrap;

    (void)req;   /* sends complete in the call */
    if (((unsigned)dst >= (unsigned)s->size) || (dst == s->rank) ||
        (n > s->max_msg)) {
        gv_error("shm: bad send to rank %d of %zu bytes (max %zu)",
                 ((unsigned)dst < (unsigned)s->size) ? wrank(s, dst) : dst, n,
                 s->max_msg);
        return GV_ERR_INVALID;
    }
    p    = &s->peers[dst];
    rb   = 8 + ((n + 7) & ~(uint64_t)7);
    off  = p->tx_off;
    need = rb + 8;                    /* the record and the zero after it */
    wrap = (off + rb) > s->rec_end;
    if (wrap)
        need += s->ring_size - off;   /* the bytes the wrap skips */
    if (__builtin_expect((p->tx_tail + need - p->tx_head) > s->ring_size, 0)) {
        gv_status_t status = tx_space(s, dst, need);
        if (status != GV_OK)
            return status;
    }
    d = p->tx_data;
    if (wrap) {
        /* The consumer reads offset 0 right after the wrap record. */
        __atomic_store_n((uint64_t *)d, 0, __ATOMIC_RELAXED);
        __atomic_store_n((uint64_t *)(d + off), SHM_HDR(SHM_REC_WRAP, 0),
                         __ATOMIC_RELEASE);
        p->tx_tail += s->ring_size - off;
        off = 0;
    }
    if (hdr_len != 0)
        memcpy(d + off + 8, hdr, hdr_len);
    if (len != 0)
        memcpy(d + off + 8 + hdr_len, payload, len);
    __atomic_store_n((uint64_t *)(d + off + rb), 0, __ATOMIC_RELAXED);
    __atomic_store_n((uint64_t *)(d + off), SHM_HDR(SHM_REC_MSG, n),
                     __ATOMIC_SEQ_CST);
    p->tx_off   = off + rb;
    p->tx_tail += rb;
    s->n_sent++;
    if (p->tx_hint_p != NULL) {
        if (!(__atomic_load_n(p->tx_hint_p, __ATOMIC_SEQ_CST) &
              p->tx_hint_bit))
            __atomic_fetch_or(p->tx_hint_p, p->tx_hint_bit, __ATOMIC_SEQ_CST);
    }
    if (__builtin_expect(__atomic_load_n(&p->tx_wake->sleeping,
                                         __ATOMIC_SEQ_CST), 0))
        wake_owner(s, p->tx_wake, dst);
    return GV_OK;
}

static void rx_proto_error(shm_t *s, int src, uint64_t off, uint64_t h,
                           const char *why)
{
    shm_peer_t *p = &s->peers[src];

    gv_error("shm: malformed record from rank %d at offset %llu (header "
             "0x%016llx: %s); its ring is no longer read", wrank(s, src),
             (unsigned long long)off, (unsigned long long)h, why);
    s->n_proto++;
    p->rx_stopped = 1;
    gv__peer_failed(wrank(s, src), "shm: wrote a malformed record (%s)",
                    why);
}

/* Deliver up to SHM_RX_BUDGET records from @a src. Sets *empty_p when the
 * ring was found empty. */
static unsigned rx_drain(shm_t *s, int src, int *empty_p)
{
    shm_peer_t *p   = &s->peers[src];
    uint8_t    *d   = p->rx_data;
    uint64_t    off = p->rx_off;
    uint64_t    start = p->rx_head;
    unsigned    n = 0, steps;

    *empty_p = 0;
    if (p->rx_stopped) {
        *empty_p = 1;
        return 0;
    }
    for (steps = 0; steps < SHM_RX_BUDGET; steps++) {
        uint64_t h = __atomic_load_n((uint64_t *)(d + off), __ATOMIC_ACQUIRE);
        uint64_t len, rb;

        if (h == 0) {
            *empty_p = 1;
            break;
        }
        len = h & 0xffffffffull;
        if ((h >> 32) == SHM_REC_MSG) {
            rb = 8 + ((len + 7) & ~(uint64_t)7);
            if (len > s->max_msg) {
                rx_proto_error(s, src, off, h, "longer than the largest "
                               "message");
                break;
            }
            if ((off + rb) > s->rec_end) {
                rx_proto_error(s, src, off, h, "runs past the end of the "
                               "ring");
                break;
            }
            s->recv_cb(s->recv_arg, src, d + off + 8, (size_t)len);
            off        += rb;
            p->rx_head += rb;
            n++;
        } else if (((h >> 32) == SHM_REC_WRAP) && (len == 0) && (off != 0)) {
            p->rx_head += s->ring_size - off;
            off         = 0;
        } else {
            rx_proto_error(s, src, off, h, "bad kind");
            break;
        }
    }
    p->rx_off = off;
    if (p->rx_head != start) {
        s->n_recv += n;
        /* Publish lazily; at once when the producer has asked for space
         * (store the head, then load the flag: see tx_space()). */
        if (((p->rx_head - p->rx_pub) >= s->pub_every) ||
            __atomic_load_n(p->rx_want_p, __ATOMIC_SEQ_CST)) {
            __atomic_store_n(p->rx_head_p, p->rx_head, __ATOMIC_SEQ_CST);
            p->rx_pub = p->rx_head;
            if (__atomic_load_n(p->rx_want_p, __ATOMIC_SEQ_CST) &&
                __atomic_exchange_n(p->rx_want_p, 0, __ATOMIC_SEQ_CST))
                wake_owner(s, p->tx_wake, src);
        }
    }
    return n;
}

static unsigned progress_hint(shm_t *s)
{
    unsigned n = 0, w;

    for (w = 0; w < s->hint_words; w++) {
        uint64_t bits;

        if (__atomic_load_n(&s->hint[w], __ATOMIC_RELAXED) != 0)
            s->pending[w] |= __atomic_exchange_n(&s->hint[w], 0,
                                                 __ATOMIC_SEQ_CST);
        bits = s->pending[w];
        while (bits != 0) {
            int b   = __builtin_ctzll(bits);
            int src = (int)(w * 64) + b;
            int empty;

            bits &= bits - 1;
            if ((src >= s->size) || (src == s->rank)) {
                s->pending[w] &= ~(1ull << b);
                continue;
            }
            n += rx_drain(s, src, &empty);
            if (empty)
                s->pending[w] &= ~(1ull << b);
        }
    }
    return n;
}

static unsigned shm_progress(gv_tl_t *tl)
{
    shm_t   *s = tl->priv;
    unsigned n = 0;
    int      i, idx, empty;

    if (s->use_hint)
        return progress_hint(s);
    idx = s->rr;
    for (i = 0; i < s->npoll; i++) {
        n += rx_drain(s, s->poll[idx], &empty);
        if (++idx == s->npoll)
            idx = 0;
    }
    if (++s->rr >= s->npoll)
        s->rr = 0;
    return n;
}

/* Is there anything that a progress() would act on? Loads are seq_cst so
 * that they are ordered after the store of the sleeping flag. */
static int shm_ready(shm_t *s)
{
    int i;

    if (s->use_hint) {
        for (i = 0; i < (int)s->hint_words; i++) {
            if ((s->pending[i] != 0) ||
                (__atomic_load_n(&s->hint[i], __ATOMIC_SEQ_CST) != 0))
                return 1;
        }
    } else {
        for (i = 0; i < s->npoll; i++) {
            shm_peer_t *p = &s->peers[s->poll[i]];
            if (!p->rx_stopped &&
                (__atomic_load_n((uint64_t *)(p->rx_data + p->rx_off),
                                 __ATOMIC_SEQ_CST) != 0))
                return 1;
        }
    }
    /* A sender that found a ring full waits for space, not for messages. */
    if (s->ntx_blocked > 0) {
        for (i = 0; i < s->size; i++) {
            shm_peer_t *p = &s->peers[i];
            if (p->tx_blocked &&
                (__atomic_load_n(p->tx_head_p, __ATOMIC_SEQ_CST) !=
                 p->tx_head))
                return 1;
        }
    }
    return 0;
}

static void shm_wait(gv_tl_t *tl, unsigned timeout_us)
{
    shm_t          *s = tl->priv;
    struct timespec ts;
    uint32_t        bell;

    if (timeout_us == 0)
        return;
    bell = __atomic_load_n(&s->wake->doorbell, __ATOMIC_SEQ_CST);
    /* Store the flag, then look (seq_cst both): a sender stores its
     * record, then looks at the flag; one of us sees the other. */
    __atomic_fetch_or(&s->wake->sleeping, WAKE_FUTEX, __ATOMIC_SEQ_CST);
    if (!shm_ready(s)) {
        ts.tv_sec  = timeout_us / 1000000u;
        ts.tv_nsec = (long)(timeout_us % 1000000u) * 1000;
        /* EAGAIN (the bell rang already), EINTR and ETIMEDOUT all mean
         * "go and look", which is what the caller does next. */
        futex(&s->wake->doorbell, FUTEX_WAIT, bell, &ts);
        s->n_sleeps++;
    }
    __atomic_fetch_and(&s->wake->sleeping, ~WAKE_FUTEX, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Waking the host (gv_wait_fd). A futex cannot wake an epoll loop, and an
 * eventfd cannot be handed to another process without a socket to pass
 * it through (or ptrace rights, for pidfd_getfd), so each rank binds an
 * abstract-namespace datagram socket named after the job and its rank
 * (nothing in the file system; it vanishes with the socket): that socket
 * is the fd. arm() drains it, sets WAKE_FD in its sleeping word, and
 * looks at its rings once more (seq_cst, as wait() does); a sender that
 * takes the flag sends one empty datagram, which makes the socket
 * readable. A dead peer is the core's business (core/liveness.c). */

static void kick_addr(const shm_t *s, int rank, struct sockaddr_un *a,
                      socklen_t *len_p)
{
    int n;

    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "gv-%llx-%d",
                 (unsigned long long)s->job_id, wrank(s, rank));
    *len_p = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

static void kick(shm_t *s, int rank)
{
    struct sockaddr_un a;
    socklen_t          len;

    if (s->tsock < 0)
        return;
    kick_addr(s, rank, &a, &len);
    /* A full socket buffer (EAGAIN) already holds a kick. */
    (void)sendto(s->tsock, "", 0, MSG_DONTWAIT | MSG_NOSIGNAL,
                 (struct sockaddr *)&a, len);
}

static void wake_fd_close(shm_t *s)
{
    if (s->ksock >= 0)
        close(s->ksock);
    if (s->tsock >= 0)
        close(s->tsock);
    s->ksock = s->tsock = -1;
}

/* 0, or -1 (logged at info) when this rank cannot offer the fd. */
static int wake_fd_open(shm_t *s)
{
    struct sockaddr_un a;
    socklen_t          len;

    s->ksock = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    s->tsock = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if ((s->ksock < 0) || (s->tsock < 0)) {
        gv_info("shm: no descriptor to sleep on: %m");
        wake_fd_close(s);
        return -1;
    }
    kick_addr(s, s->rank, &a, &len);
    if (bind(s->ksock, (struct sockaddr *)&a, len) != 0) {
        gv_info("shm: binding the kick socket @%s failed: %m", a.sun_path + 1);
        wake_fd_close(s);
        return -1;
    }
    return 0;
}

static int shm_wait_fd(gv_tl_t *tl)
{
    return ((shm_t *)tl->priv)->ksock;
}

static gv_status_t shm_arm(gv_tl_t *tl)
{
    shm_t *s = tl->priv;
    char   b;

    while (recv(s->ksock, &b, sizeof(b), MSG_DONTWAIT) >= 0)
        ;
    /* Store the flag, then look (seq_cst both), as wait() does. */
    __atomic_fetch_or(&s->wake->sleeping, WAKE_FD, __ATOMIC_SEQ_CST);
    if (shm_ready(s)) {
        __atomic_fetch_and(&s->wake->sleeping, ~WAKE_FD, __ATOMIC_SEQ_CST);
        return GV_INPROGRESS;
    }
    return GV_OK;
}

/* ------------------------------------------------------------------ */
/* One-sided operations: CPU loads, stores and atomics on the peer's heap
 * as mapped here; they are complete when the call returns. */

static int rma_check(shm_t *s, int dst, uint64_t off, size_t len)
{
    return ((unsigned)dst < (unsigned)s->size) && (off <= s->heap_size) &&
           (len <= s->heap_size - off);
}

static gv_status_t shm_put(gv_tl_t *tl, int dst, uint64_t off,
                           const void *buf, size_t len, gv_req_t *req)
{
    shm_t *s = tl->priv;

    (void)req;
    if (!rma_check(s, dst, off, len)) {
        gv_error("shm: put of %zu bytes at offset %llu of rank %d is "
                 "outside the %zu-byte heap", len, (unsigned long long)off,
                 dst, s->heap_size);
        return GV_ERR_INVALID;
    }
    if (len != 0)
        memcpy(s->peers[dst].heap + off, buf, len);
    return GV_OK;
}

static gv_status_t shm_get(gv_tl_t *tl, int dst, uint64_t off, void *buf,
                           size_t len, gv_req_t *req)
{
    shm_t *s = tl->priv;

    (void)req;
    if (!rma_check(s, dst, off, len)) {
        gv_error("shm: get of %zu bytes at offset %llu of rank %d is "
                 "outside the %zu-byte heap", len, (unsigned long long)off,
                 dst, s->heap_size);
        return GV_ERR_INVALID;
    }
    if (len != 0)
        memcpy(buf, s->peers[dst].heap + off, len);
    return GV_OK;
}

static gv_status_t shm_atomic64(gv_tl_t *tl, gv_tl_amo_t op, int dst,
                                uint64_t off, uint64_t value,
                                uint64_t compare, uint64_t *result_p,
                                gv_req_t *req)
{
    shm_t    *s = tl->priv;
    uint64_t *w, old;

    (void)req;
    if (!rma_check(s, dst, off, 8) || ((off & 7) != 0) ||
        ((unsigned)op >= GV_TL_AMO_LAST)) {
        gv_error("shm: atomic %d at offset %llu of rank %d: not an aligned "
                 "word of the %zu-byte heap", (int)op,
                 (unsigned long long)off, dst, s->heap_size);
        return GV_ERR_INVALID;
    }
    w = (uint64_t *)(s->peers[dst].heap + off);
    switch (op) {
    case GV_TL_AMO_ADD:
        __atomic_fetch_add(w, value, __ATOMIC_SEQ_CST);
        return GV_OK;
    case GV_TL_AMO_FADD:
        old = __atomic_fetch_add(w, value, __ATOMIC_SEQ_CST);
        break;
    case GV_TL_AMO_CSWAP:
        old = compare;
        __atomic_compare_exchange_n(w, &old, value, 0, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST);
        break;
    case GV_TL_AMO_SWAP:
        old = __atomic_exchange_n(w, value, __ATOMIC_SEQ_CST);
        break;
    default:
        return GV_ERR_INVALID;
    }
    if (result_p != NULL)
        *result_p = old;
    return GV_OK;
}

static gv_status_t shm_flush(gv_tl_t *tl, int dst, gv_req_t *req)
{
    shm_t *s = tl->priv;

    (void)req;
    if ((dst < -1) || (dst >= s->size))
        return GV_ERR_INVALID;
    /* Every operation completed in its call; the fence orders plain puts
     * before whatever the caller does next (an AM that says "done"). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return GV_OK;
}

const gv_tl_ops_t gv_tl_shm_ops = {
    .version  = GV_TL_OPS_VERSION,
    .name     = "shm",
    .init     = shm_init,
    .fini     = shm_fini,
    .progress = shm_progress,
    .am_send  = shm_am_send,
    .wait     = shm_wait,
    .wait_fd  = shm_wait_fd,
    .arm      = shm_arm,
    .put      = shm_put,
    .get      = shm_get,
    .atomic64 = shm_atomic64,
    .flush    = shm_flush,
};
