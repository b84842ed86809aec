#!/bin/bash
# Our 8-byte latency and 1 MiB bandwidth against each library's own, each
# pair measured inside one process (perf/hop_*, perf/bw_*), so that both
# sides share the vCPU placement a launch gets. On a shared VM that
# placement swings a hop by up to 3x from launch to launch, which is why
# perf/compare.sh's separate launches need many rounds; here one launch
# gives a ratio, and R launches give R ratios to take the median of.
#   tcp, shm       vs UCP with UCX_TLS=tcp / sm (hop_ucx, bw_ucx)
#   ucx (sm, tcp)  vs UCP with the same UCX_TLS (hop_ucx, bw_ucx)
#   ofi (shm, tcp;ofi_rxm) vs a libfabric endpoint used as fi_pingpong
#                  uses it (hop_ofi; bandwidth is a 1 MiB ping-pong, as
#                  fi_pingpong's)
#   mpi (vader, tcp) vs MPI_Recv's hop (hop_mpi) and perf/mpi_pingpong's
#                  streaming (bw_mpi), same Open MPI settings
# Usage: perf/inproc.sh [BUILD_DIR] [--runs R] [--only LABELS]
# Labels as in perf/compare.sh. Prints a Markdown table: for each side the
# median over R runs (3) of its figure (one-way ns; MB/s, 10^6 B/s), and
# the median of the R per-run ratios, ours over theirs.
set -u
B=${1:-build}
RUNS=3
shift || true
while [ $# -gt 0 ]; do
    case $1 in
    --runs) RUNS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "inproc.sh: unknown option $1 (accepted: --runs R, --only LABELS)" >&2
       exit 2 ;;
    esac
done
case $RUNS in
'' | *[!0-9]* | 0) echo "inproc.sh: --runs wants a positive integer, got '$RUNS'" >&2
                   exit 2 ;;
esac
# shellcheck source=perf/configs.sh
. "$(dirname "$0")/configs.sh"
# shellcheck source=perf/common.sh
. "$(dirname "$0")/common.sh"
check_only inproc.sh
T=$(mktemp -d /tmp/gv-inproc-XXXXXX)
trap 'rm -rf "$T"' EXIT

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0)
    print ""; else printf "%.3f", a / b }'; }

# run_tool OUT_PREFIX "LAUNCH TOOL ARGS" GVKEY PEERKEY: R runs; appends the
# two figures and their ratio to the arrays named OUT_PREFIX{G,P,R}.
run_tool() {
    local out=$1 cmd=$2 gk=$3 pk=$4 r line g p
    for ((r = 0; r < RUNS; r++)); do
        line=$(eval "$cmd" 2>"$T/err" | grep -v '^#' | tail -n 1)
        g=$(field "$gk" "$line") p=$(field "$pk" "$line")
        if [ -z "$g" ] || [ -z "$p" ]; then
            echo "inproc.sh: no figures from: $cmd" >&2
            tail -n 3 "$T/err" >&2
            continue
        fi
        eval "${out}G+=(\"\$g\") ${out}P+=(\"\$p\")"
        eval "${out}R+=(\"\$(ratio \"\$g\" \"\$p\")\")"
    done
}

# measure LABEL LAUNCH PEER LAT_TOOL GVKEY PEERKEY BW_TOOL GVKEY PEERKEY:
# R runs of each tool under LAUNCH, then the row's cells: medians of the
# figures and of the per-run ratios, latency then bandwidth.
measure() {
    LG=() LP=() LR=() BG=() BP=() BR=()
    run_tool L "$2 $B/perf/$4" "$5" "$6"
    run_tool B "$2 $B/perf/$7" "$8" "$9"
    printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n" "$1" \
        "$(med "${LG[@]}")" "$(med "${LP[@]}")" "$(med "${LR[@]}")" \
        "$(med "${BG[@]}")" "$(med "${BP[@]}")" "$(med "${BR[@]}")" "$3"
}

echo "| transport | gv lat8 ns | peer lat8 ns | lat ratio | gv bw1m MB/s | peer bw1m MB/s | bw ratio | peer, in the same process |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for cfg in "tcp|tcp,self|tcp" "shm|sm,self|shm" "ucx|sm,self|ucx/sm" \
           "ucx|tcp,self|ucx/tcp"; do
    IFS='|' read -r tl utls label <<<"$cfg"
    want "$label" || continue
    built "$tl" || { echo "| $label | not built | | | | | | |"; continue; }
    if ! built ucx; then
        echo "| $label | (the peer side needs UCX) | | | | | | |"
        continue
    fi
    IFS='|' read -r launch tool gk pk _ <<<"$(hop_way "$label" "$B")"
    measure "$label" "$launch" "UCP, UCX_TLS=$utls (ucp_am_lat, ucp_am_bw)" \
        "$tool" "$gk" "$pk" bw_ucx gv_MBps ucp_MBps
done
for prov in "shm" "tcp;ofi_rxm"; do
    label="ofi/${prov%%;*}"
    want "$label" || continue
    built ofi || { echo "| $label | not built | | | | | | |"; continue; }
    IFS='|' read -r launch tool gk pk _ <<<"$(hop_way "$label" "$B")"
    measure "$label" "$launch" \
        "libfabric endpoint, $prov (fi_pingpong's way; ping-pong bw)" \
        "$tool" "$gk" "$pk" "$tool -s 1048576" gv_MBps ofi_MBps
done
for btl in "self,vader" "self,tcp"; do
    label="mpi/${btl#self,}"
    want "$label" || continue
    if ! built mpi || ! command -v mpirun >/dev/null 2>&1; then
        echo "| $label | not built | | | | | | |"
        continue
    fi
    IFS='|' read -r launch tool gk pk _ <<<"$(hop_way "$label" "$B")"
    measure "$label" "$launch" \
        "MPI_Send/MPI_Recv; perf/mpi_pingpong's streaming, btl $btl" \
        "$tool" "$gk" "$pk" bw_mpi gv_MBps mpi_MBps
done
