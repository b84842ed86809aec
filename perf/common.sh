# shellcheck shell=bash
# Helpers perf/compare.sh, perf/inproc.sh and perf/ab.sh share, sourced
# after perf/configs.sh; they read B (the build directory) and ONLY
# (--only).
# SPDX-License-Identifier: BSD-3-Clause

# check_only PROG: every label in ONLY is one of LABELS, or exit 2.
check_only() {
    local l
    for l in ${ONLY:-}; do
        case " ${LABELS[*]} " in
        *" $l "*) ;;
        *) echo "$1: --only: unknown label '$l' (accepted: ${LABELS[*]})" >&2
           exit 2 ;;
        esac
    done
}

# want LABEL: measure this row (no --only, or LABEL is in it)
want() { [ -z "${ONLY:-}" ] || case " $ONLY " in *" $1 "*) ;; *) false ;; esac; }

# built TRANSPORT: gvinfo lists it as built
built() { "$B/bin/gvinfo" -t 2>/dev/null | grep -q "^  $1 *built"; }

# field KEY LINE -> the value of KEY=value in LINE (a perf tool's output)
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

med() { # values... -> median (empty values ignored)
    printf '%s\n' "$@" | awk 'NF' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# hop_way LABEL BUILD: how BUILD measures LABEL's hop against the peer
# library's inside one process (perf/inproc.sh's latency column, and
# perf/ab.sh), as "LAUNCH|TOOL|GV_KEY|PEER_KEY|NEEDS": LAUNCH runs a
# 2-rank job, TOOL is the perf/ program, the keys name its two one-way
# figures, NEEDS the transports that must be built.
hop_way() {
    local b
    b=$(printf '%q' "$2")
    case $1 in
    tcp | shm | ucx/sm | ucx/tcp)
        local tl=${1%%/*} tls
        case $1 in
        tcp | ucx/tcp) tls=tcp,self ;;
        *) tls=sm,self ;;
        esac
        echo "env GV_TRANSPORT=$tl UCX_TLS=$tls timeout 120 $b/bin/gvrun -n 2|hop_ucx|gv_ns|ucp_ns|$tl ucx" ;;
    ofi/shm | ofi/tcp)
        local prov=shm
        [ "$1" = ofi/tcp ] && prov='tcp;ofi_rxm'
        echo "env GV_TRANSPORT=ofi FI_PROVIDER='$prov' timeout 120 $b/bin/gvrun -n 2|hop_ofi|gv_ns|ofi_ns|ofi" ;;
    mpi/vader | mpi/tcp)
        echo "timeout 120 mpirun --oversubscribe -np 2 --mca btl self,${1#mpi/} -x GV_TRANSPORT=mpi -x GV_WARN_UNUSED_ENV|hop_mpi|gv_ns|recv_ns|mpi" ;;
    *) return 1 ;;
    esac
}
