/* Criterion driver of the bound on a sender's memory: mr_stopped over
 * every transport configuration of drv_tls[], one named test each (so that
 * --filter 'mem/stopped_tcp' runs one), with GV_AGG_TIMEOUT_US=50 so that
 * the timeout flush closes batches while the receiver is stopped.
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

static void stopped(enum drv_tl tl)
{
    mr_case_t c = {.tl = tl, .prog = "mr_stopped", .nranks = 2,
                   .args = "", .timeout_s = 60,
                   .env = "GV_AGG_TIMEOUT_US=50"};

    drv_run_case(&c);
}

/* Each run stops the receiver for 3 s; 60 s is the limit of the run. */
Test(mem, stopped_tcp, .timeout = 90) { stopped(DRV_TCP); }
Test(mem, stopped_shm, .timeout = 90) { stopped(DRV_SHM); }
Test(mem, stopped_ucx_sm, .timeout = 90) { stopped(DRV_UCX_SM); }
Test(mem, stopped_ucx_tcp, .timeout = 90) { stopped(DRV_UCX_TCP); }
Test(mem, stopped_ofi_shm, .timeout = 90) { stopped(DRV_OFI_SHM); }
Test(mem, stopped_ofi_rxm, .timeout = 90) { stopped(DRV_OFI_RXM); }
