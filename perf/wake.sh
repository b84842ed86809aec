#!/usr/bin/env bash
# Waking a host's epoll loop (perf/wake.c) over shm, tcp and ucx (shared
# memory and tcp) on 2 ranks: one-way latency to a rank asleep on
# gv_wait_fd() against one polling gv_progress(), alternated in one run,
# and the sleeping rank's CPU while idle.
#   perf/wake.sh [BUILD_DIR] [ITERS]
# SPDX-License-Identifier: BSD-3-Clause
set -u
BUILD=${1:-build}
ITERS=${2:-1000}
GVRUN=$BUILD/bin/gvrun
built=$("$BUILD/bin/gvinfo" -t 2>/dev/null)
run() { # label, GV_TRANSPORT, the library's variables
    if ! echo "$built" | grep -Eq "^  $2 +built"; then
        echo "# skip $1: transport $2 not built"
        return
    fi
    echo "# $1"
    env GV_TRANSPORT="$2" $3 timeout 600 "$GVRUN" -n 2 "$BUILD/perf/wake" \
        -n "$ITERS" 2>&1 | grep -v 'UCX  WARN'
}
run shm shm ""
run tcp tcp ""
run ucx/sm ucx "UCX_TLS=sm,self"
run ucx/tcp ucx "UCX_TLS=tcp,self"
