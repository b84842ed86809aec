/* One-sided layer setup, called by gv_init/gv_finalize.
 * SPDX-License-Identifier: BSD-3-Clause */
#ifndef GV_AGGREGATOR_RMA_INTERNAL_H
#define GV_AGGREGATOR_RMA_INTERNAL_H

#include "transports/transport.h"

void gv__rma_start(gv_tl_t *tl, void *heap, size_t len);
void gv__rma_fini(void);

#endif
