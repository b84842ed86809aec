/* Fault injection for the mpi transport's checks of what its ring of
 * receives gets (driver_mpirun, mpirun/forged_*): loaded with LD_PRELOAD,
 * it defines MPI_Send and MPI_Isend, which pass every call on to
 * PMPI_Send and PMPI_Isend; and before every GV_TEST_FORGE_EVERY-th
 * message the transport sends on its am_comm (unset or 0: none), it first
 * sends that message's destination forged messages on the same
 * communicator, of kinds a correct receiver rejects and carries on from.
 * At exit it says on stderr how many it forged.
 * SPDX-License-Identifier: BSD-3-Clause */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* From transports/mpi.c (private there; keep in step). */
enum {
    TAG_EAGER   = 1,
    TAG_RTS     = 2,
    TAG_DATA    = 3,
    TAG_ID      = 16,
    TAG_ID_LAST = TAG_ID + 0xffff,
};
#define RTS_MAGIC   0x67764d52u
#define RTS_SIZE    16                       /* payload_len, hdr_len, magic */
#define MAX_HDR     32                       /* GV_TL_MAX_HDR */
#define MPI_MAX_MSG ((4ull << 20) + 4096u)
#define EAGER_MIN   256                      /* GV_MPI_EAGER's range */
#define EAGER_MAX   (16ull << 20)

/* What is forged, and what the receiver says about it (mpi.c's reject()).
 * Each is consumed by one ring receive and dropped there, before it can
 * touch a peer's held queue, so real messages keep their order.
 *
 * Not forged, because a correct receiver cannot tell them from real ones
 * and would lose its place: an RTS that passes rts_recv's checks (it posts
 * a receive on data_comm that takes the sender's next real payload); any
 * message on data_comm (it would match a posted payload receive, or never
 * be received); and a well-formed EAGER or ID frame with a bad batch or an
 * unknown handler id: the AM layer rejects those, but counts them as
 * handled for quiescence although no sender counted them as sent. */
enum {
    FORGE_TAG,       /* a tag mpi.c does not use: "unknown tag" */
    FORGE_LONG,      /* longer than the ring's buffers: MPI_ERR_TRUNCATE,
                        "longer than". Open MPI (4.1) frees a request whose
                        MPI_Test fails, persistent or not, so the receiver
                        must make that ring receive again (before it did,
                        the next MPI_Start ended the job). */
    FORGE_RTS_SHORT, /* an RTS shorter than rts_t: "control frame of" */
    FORGE_RTS_BAD,   /* magic or header length wrong: "bad control frame" */
    FORGE_RTS_LEN,   /* payload of 0 or more than max_msg bytes:
                        "control frame announces" */
    FORGE_SELF,      /* sent to itself: "is not a peer". With an id tag
                        (handler 0xfff0, which no job registers), the shape
                        of a request, so that it meets the checks of
                        ring_test_head()'s fast path; taken by mistake, the
                        AM layer would refuse it and this line be missing */
    FORGE_NKINDS
};

#define NPENDING 64 /* forged long messages in flight */

static unsigned long every, nsent;
static int           armed = -1;
static size_t        eager;
static uint8_t      *junk;  /* eager + 64 bytes of a pattern */
static unsigned long nforged, per_kind[FORGE_NKINDS];
static unsigned      variant;
static MPI_Request   pending[NPENDING];

/* GV_MPI_EAGER as core/env.c reads it and mpi_init() rounds it. */
static size_t eager_size(void)
{
    const char        *s = getenv("GV_MPI_EAGER");
    unsigned long long v = 16ull << 10;
    char              *end;

    if (s != NULL) {
        v = strtoull(s, &end, 10);
        if ((*end == 'k') || (*end == 'K'))
            v <<= 10;
        else if ((*end == 'm') || (*end == 'M'))
            v <<= 20;
    }
    if (v < EAGER_MIN)
        v = EAGER_MIN;
    if (v > EAGER_MAX)
        v = EAGER_MAX;
    if (v < RTS_SIZE + MAX_HDR)
        v = RTS_SIZE + MAX_HDR;
    return (size_t)((v + 63) & ~63ull);
}

static int arm(void)
{
    const char *e = getenv("GV_TEST_FORGE_EVERY");
    size_t      i;

    every = (e != NULL) ? strtoul(e, NULL, 0) : 0;
    if (every == 0)
        return 0;
    eager = eager_size();
    junk  = malloc(eager + 64);
    if (junk == NULL)
        return 0;
    for (i = 0; i < eager + 64; i++)
        junk[i] = (uint8_t)(0xa5 ^ i);
    for (i = 0; i < NPENDING; i++)
        pending[i] = MPI_REQUEST_NULL;
    return 1;
}

/* A message of the transport's am_comm: never MPI_COMM_WORLD, never the
 * payload tag (that one goes on data_comm). */
static int am_message(int tag, MPI_Comm comm)
{
    return (comm != MPI_COMM_WORLD) &&
           ((tag == TAG_EAGER) || (tag == TAG_RTS) ||
            ((tag >= TAG_ID) && (tag <= TAG_ID_LAST)));
}

static void sent(int kind, int rc)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "preload_forge_mpi: a forged message of kind %d "
                        "failed to send (%d)\n", kind, rc);
        return;
    }
    nforged++;
    per_kind[kind]++;
}

/* A small forged message: sent with PMPI_Send, which returns once MPI
 * has copied it (far below every eager limit), as mpi.c's own. */
static void forge_small(int kind, const void *buf, int len, int dst, int tag,
                        MPI_Comm comm)
{
    sent(kind, PMPI_Send(buf, len, MPI_BYTE, dst, tag, comm));
}

/* The long one goes with PMPI_Isend: above the BTL's eager limit a
 * blocking send would wait for a ring receive while the receiver may sit
 * in a blocking send of its own. Its request is reaped later. */
static void forge_long(int dst, MPI_Comm comm)
{
    int i, done, slot = -1;

    for (i = 0; i < NPENDING; i++) {
        if (pending[i] != MPI_REQUEST_NULL) {
            done = 0;
            PMPI_Test(&pending[i], &done, MPI_STATUS_IGNORE);
        }
        if ((pending[i] == MPI_REQUEST_NULL) && (slot < 0))
            slot = i;
    }
    if (slot < 0)
        return; /* all in flight: skip this one rather than wait */
    sent(FORGE_LONG, PMPI_Isend(junk, (int)eager + 64, MPI_BYTE, dst,
                                TAG_EAGER, comm, &pending[slot]));
}

static void put_rts(uint8_t *f, uint64_t payload_len, uint32_t hdr_len,
                    uint32_t magic)
{
    memcpy(f, &payload_len, 8);
    memcpy(f + 8, &hdr_len, 4);
    memcpy(f + 12, &magic, 4);
    memset(f + RTS_SIZE, 0x5a, MAX_HDR + 8);
}

static void forge(int dst, MPI_Comm comm)
{
    static const int tags[] = {TAG_DATA, 4, TAG_ID - 1, TAG_ID_LAST + 1};
    static const uint64_t lens[] = {0, MPI_MAX_MSG + 1, UINT64_MAX};
    uint8_t  f[RTS_SIZE + MAX_HDR + 8];
    unsigned v = variant++;
    int      me;

    /* Each kind once, a different variant each time. */
    forge_small(FORGE_TAG, junk, (int)(v % 48), dst, tags[v % 4], comm);
    forge_long(dst, comm);
    forge_small(FORGE_RTS_SHORT, junk, (int)(v % RTS_SIZE), dst, TAG_RTS,
                comm);
    switch (v % 3) {
    case 0: /* wrong magic */
        put_rts(f, 100000, 8, RTS_MAGIC ^ 1);
        forge_small(FORGE_RTS_BAD, f, RTS_SIZE + 8, dst, TAG_RTS, comm);
        break;
    case 1: /* a header longer than any transport's */
        put_rts(f, 100000, MAX_HDR + 8, RTS_MAGIC);
        forge_small(FORGE_RTS_BAD, f, RTS_SIZE + MAX_HDR + 8, dst, TAG_RTS,
                    comm);
        break;
    default: /* a frame longer than its header says */
        put_rts(f, 100000, 8, RTS_MAGIC);
        forge_small(FORGE_RTS_BAD, f, RTS_SIZE + 12, dst, TAG_RTS, comm);
        break;
    }
    put_rts(f, lens[v % 3], 8, RTS_MAGIC);
    forge_small(FORGE_RTS_LEN, f, RTS_SIZE + 8, dst, TAG_RTS, comm);
    /* Last, so that the receiver's first few rejections (it logs ten)
     * are all the peer's kinds rather than its own. */
    if (PMPI_Comm_rank(comm, &me) == MPI_SUCCESS)
        forge_small(FORGE_SELF, junk, 8, me, TAG_ID + 0xfff0, comm);
}

static void maybe_forge(int dst, int tag, MPI_Comm comm)
{
    if (armed < 0)
        armed = arm();
    if ((armed > 0) && am_message(tag, comm) && (++nsent % every == 0))
        forge(dst, comm);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dst, int tag,
             MPI_Comm comm)
{
    maybe_forge(dst, tag, comm);
    return PMPI_Send(buf, count, type, dst, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dst,
              int tag, MPI_Comm comm, MPI_Request *req)
{
    maybe_forge(dst, tag, comm);
    return PMPI_Isend(buf, count, type, dst, tag, comm, req);
}

/* The forged long messages were all received (a real message followed
 * each), so their sends complete; wait a bounded time all the same. */
int MPI_Finalize(void)
{
    struct timespec t0, t;
    int             i, left = 1;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    t = t0;
    while ((armed > 0) && left && (t.tv_sec - t0.tv_sec < 10)) {
        left = 0;
        for (i = 0; i < NPENDING; i++) {
            int done = 0;

            if (pending[i] == MPI_REQUEST_NULL)
                continue;
            PMPI_Test(&pending[i], &done, MPI_STATUS_IGNORE);
            left += !done;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
    }
    if ((armed > 0) && left)
        fprintf(stderr, "preload_forge_mpi: %d forged sends still in "
                        "flight at MPI_Finalize\n", left);
    return PMPI_Finalize();
}

__attribute__((destructor)) static void report(void)
{
    int i, kinds = 0;

    if (armed <= 0)
        return;
    for (i = 0; i < FORGE_NKINDS; i++)
        kinds += (per_kind[i] > 0);
    fprintf(stderr, "preload_forge_mpi: forged %lu messages (%d kinds)\n",
            nforged, kinds);
    free(junk);
}
