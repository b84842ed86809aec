/* GUPS at test size: perf/gups built with a small default table, so that
 * the driver checks every mode over every transport and rank count. The
 * mode comes from the arguments (--mode agg|am|native), because agg and am
 * need different GV_AGGREGATE values at gv_init. Exits 0 when every word
 * verified and every update message ran once, 1 otherwise, and 77 (skip)
 * for --mode native over a transport without remote atomics.
 * SPDX-License-Identifier: BSD-3-Clause */
#define _GNU_SOURCE /* before any header: gups.c's RUSAGE_THREAD */
#include "tests/multirank/mr.h"

#define GUPS_NO_ATOMICS_EXIT MR_SKIP_CODE
#define GUPS_DEFAULT_LOG2    12
#include "perf/gups.c"
