/* Criterion driver of the cases specific to the tcp transport: strangers
 * that connect to a job's listening ports (mr_tcp_stranger.c).
 * SPDX-License-Identifier: BSD-3-Clause */
#include "tests/multirank/driver_common.h"

static const mr_case_t cases[] = {
    {DRV_TCP, "mr_tcp_stranger", 4, "", 90, ""},
};

DRV_MULTIRANK_RUN(cases)
