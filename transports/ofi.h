/* Internal hooks into the ofi transport for tests (mr_ofi_stranger): the
 * endpoint name it has for a rank, and what it rejected.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_TRANSPORTS_OFI_H
#define GV_TRANSPORTS_OFI_H

#include "transports/transport.h"

typedef struct gv_tl_ofi_counters {
    uint64_t rejected;  /* frames rejected since init: logged and counted,
                           never delivered ("A frame is rejected" in ofi.c) */
    int      tagged_rx; /* buffers for tagged frames are posted, so that a
                           tagged message, a stranger's too, is taken */
} gv_tl_ofi_counters_t;

/* For tests only: copy the endpoint name this rank's ofi transport has for
 * @a rank (from its AV, fi_av_lookup) into @a buf, at most @a len bytes.
 * Returns the name's full length (more than @a len: cut short), or 0 if tl
 * is not an ofi transport or the lookup failed. */
size_t gv__tl_ofi_name(gv_tl_t *tl, int rank, void *buf, size_t len);

/* For tests only: copy the counters; zeros if tl is not ofi. */
void gv__tl_ofi_counters(gv_tl_t *tl, gv_tl_ofi_counters_t *c_p);

#endif
