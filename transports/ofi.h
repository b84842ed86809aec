/* Internal hooks into the ofi transport for tests (mr_ofi_stranger,
 * mr_ofi_large): the endpoint name it has for a rank, what it rejected and
 * split, where the frame sequences to and from a rank stand, and a way to
 * make split messages take the path of a part that met EAGAIN.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TRANSPORTS_OFI_H
#define GV_TRANSPORTS_OFI_H

#include "transports/transport.h"

typedef struct gv_tl_ofi_counters {
    uint64_t rejected;  /* frames rejected since init: logged and counted,
                           never delivered ("A frame is rejected" in ofi.c) */
    int      tagged_rx; /* buffers for tagged frames are posted, so that a
                           tagged message, a stranger's too, is taken */
    size_t   split_max; /* longest message sent in parts; 0: none are */
    uint64_t split;     /* messages sent in parts */
    uint64_t owed;      /*   of which some parts were owed (EAGAIN) */
} gv_tl_ofi_counters_t;

/* For tests only: copy the endpoint name this rank's ofi transport has for
 * @a rank (from its AV, fi_av_lookup) into @a buf, at most @a len bytes.
 * Returns the name's full length (more than @a len: cut short), or 0 if tl
 * is not an ofi transport or the lookup failed. */
size_t gv__tl_ofi_name(gv_tl_t *tl, int rank, void *buf, size_t len);

/* For tests only: copy the counters; zeros if tl is not ofi. */
void gv__tl_ofi_counters(gv_tl_t *tl, gv_tl_ofi_counters_t *c_p);

/* For tests only: the sequence number of the next frame this rank sends
 * to @a rank (*tx_p) and the one it expects next from @a rank (*rx_p);
 * zeros if tl is not ofi or @a rank is out of range. */
void gv__tl_ofi_seqs(gv_tl_t *tl, int rank, uint32_t *tx_p, uint32_t *rx_p);

/* For tests only: the next @a n messages sent in parts leave with their
 * first part only, and owe the rest as if the second had met EAGAIN
 * (progress sends it; sends to that rank are refused until then). With
 * @a stuck, every try of progress meets EAGAIN too, as if the receiver's
 * queue stayed full. */
void gv__tl_ofi_owe(gv_tl_t *tl, unsigned n, int stuck);

#endif
