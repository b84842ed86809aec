#!/bin/bash
# Side-by-side ping-pong: Grapevine's perf/pingpong over each transport
# against that transport's own tool, in the same run, with ratios.
#   tcp, shm       vs ucx_perftest ucp_am_lat/ucp_am_bw (UCX_TLS=tcp / sm)
#   ucx (sm, tcp)  vs ucx_perftest with the same UCX_TLS
#   ofi (shm, tcp;ofi_rxm) vs fi_pingpong with the same provider
#   mpi (vader, tcp) vs perf/mpi_pingpong with the same Open MPI settings
# Usage: perf/compare.sh [BUILD_DIR] [--reps N] [--rounds R] [--only LABELS]
# --only "ucx/sm mpi/vader" measures only those rows (labels: tcp shm
# ucx/sm ucx/tcp ofi/shm ofi/tcp mpi/vader mpi/tcp, as in perf/fig6.sh).
# (prints a Markdown table). Each cell is the median of R rounds (3) in
# which Grapevine and the peer tool run alternately, so that a burst of
# load on a shared machine hits both sides alike.
# Latency: 8-byte one-way, microseconds (half a round trip; ucx_perftest's
# 50th percentile, fi_pingpong's usec/xfer). Bandwidth at 1 MiB in MB/s
# (10^6 B/s; ucx_perftest's MiB/s are converted). fi_pingpong measures a
# ping-pong, so ofi bandwidth is compared ping-pong to ping-pong.
# Host modes: on these VMs a process lands in a mode for its whole life,
# depending on where the host put the two vCPUs when it started: a cache
# line takes about 33, 45 or 160 ns between them. perf/lineping, a launch
# of its own once a round, samples the modes the host gave during the run
# (not the mode of any one measured launch). A median over rounds
# therefore depends on how many launches of each side landed slow. The "best"
# columns give each side's fastest round, the placement both got R
# chances at.
set -u
B=${1:-build}
REPS=5
ROUNDS=3
shift || true
while [ $# -gt 0 ]; do
    case $1 in
    --reps) REPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    *) echo "compare.sh: unknown option $1 (accepted: --reps N, --rounds R, --only LABELS)" >&2
       exit 2 ;;
    esac
done
# shellcheck source=perf/configs.sh
. "$(dirname "$0")/configs.sh"
# shellcheck source=perf/common.sh
. "$(dirname "$0")/common.sh"
check_only compare.sh
PORT=$((20000 + RANDOM % 20000))
T=$(mktemp -d /tmp/gv-compare-XXXXXX)
trap 'rm -rf "$T"' EXIT

have() { command -v "$1" >/dev/null 2>&1; }

# gv_pp LAUNCH SIZE -> "lat_us bw_MBps" for one size
gv_pp() {
    local launch=$1 size=$2
    eval "$launch $B/perf/pingpong -s $size -S $size -r $REPS" 2>"$T/err" |
        awk -v s="$size" '$1 == s { print $2, $3 }'
}

ucx_perf() { # UCX_TLS TEST SIZE -> value (lat: 50%ile us; bw: MB/s)
    local tls=$1 test=$2 size=$3 n=$4
    PORT=$((PORT + 1))
    UCX_TLS=$tls timeout 60 ucx_perftest -t "$test" -s "$size" -n "$n" \
        -p $PORT >/dev/null 2>&1 &
    sleep 0.5
    UCX_TLS=$tls timeout 60 ucx_perftest localhost -t "$test" -s "$size" \
        -n "$n" -p $PORT 2>/dev/null | awk -v t="$test" '/^Final:/ {
            if (t ~ /lat/) print $3; else printf "%.1f\n", $7 * 1.048576 }'
    wait
}

fi_pp() { # PROVIDER SIZE ITERS -> "usec_per_xfer MBps"
    local prov=$1 size=$2 n=$3
    PORT=$((PORT + 1))
    timeout 60 fi_pingpong -p "$prov" -e rdm -S "$size" -I "$n" -B $PORT \
        >/dev/null 2>&1 &
    sleep 0.5
    timeout 60 fi_pingpong -p "$prov" -e rdm -S "$size" -I "$n" -P $PORT \
        localhost 2>/dev/null |
        awk 'NF >= 8 && $1 != "bytes" { l = $7; b = $6 } END { print l, b }'
    wait
}

mpi_pp() { # BTL SIZE -> "lat bw"
    timeout 120 mpirun --oversubscribe -np 2 --mca btl "$1" \
        "$B/perf/mpi_pingpong" -s "$2" -m "$2" -r "$REPS" 2>/dev/null |
        sed -n 's/.*lat_us=\([0-9.]*\) bw_MBps=\([0-9.]*\).*/\1 \2/p'
}

best() { # values... -> the smallest (empty values ignored)
    printf '%s\n' "$@" | awk 'NF' | sort -g | head -n 1
}

LP=() # lineping one-way ns, one per round
lineping() { LP+=("$(timeout 60 "$B/perf/lineping" 2>/dev/null |
    sed -n 's/.*one_way_ns=\([0-9]*\).*/\1/p')"); }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0)
    print "n/a"; else printf "%.2f", a / b }'; }

# row label peer_name: the cells from GL PL GB PB (latencies, bandwidths)
row() {
    local gl pl gf pf gb pb
    gl=$(med "${GL[@]}") pl=$(med "${PL[@]}")
    gf=$(best "${GL[@]}") pf=$(best "${PL[@]}")
    gb=$(med "${GB[@]}") pb=$(med "${PB[@]}")
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" \
        "$1" "${gl:-n/a}" "${pl:-n/a}" "$(ratio "$gl" "$pl")" \
        "${gf:-n/a}" "${pf:-n/a}" "$(ratio "$gf" "$pf")" \
        "${gb:-n/a}" "${pb:-n/a}" "$(ratio "$gb" "$pb")" "$2"
}

echo "| transport | gv lat8 us | peer lat8 us | lat ratio | gv best | peer best | best ratio | gv bw1m MB/s | peer bw1m MB/s | bw ratio | peer tool |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for cfg in "tcp||tcp,self|tcp" "shm||sm,self|shm" \
           "ucx|UCX_TLS=sm,self|sm,self|ucx/sm" \
           "ucx|UCX_TLS=tcp,self|tcp,self|ucx/tcp"; do
    IFS='|' read -r tl env utls label <<<"$cfg"
    want "$label" || continue
    built "$tl" || { echo "| $tl $env | not built | | | | | | | | | |"; continue; }
    L="env GV_TRANSPORT=$tl $env timeout 120 $B/bin/gvrun -n 2"
    GL=() GB=() PL=() PB=()
    for ((r = 0; r < ROUNDS; r++)); do
        lineping
        read -r l _ <<<"$(gv_pp "$L" 8)"; GL+=("$l")
        read -r _ b <<<"$(gv_pp "$L" 1048576)"; GB+=("$b")
        if have ucx_perftest; then
            PL+=("$(ucx_perf "$utls" ucp_am_lat 8 200000)")
            PB+=("$(ucx_perf "$utls" ucp_am_bw 1048576 2000)")
        fi
    done
    row "$tl ${env:-}" "ucx_perftest UCX_TLS=$utls"
done
for prov in "shm" "tcp;ofi_rxm"; do
    want "ofi/${prov%%;*}" || continue
    built ofi || { echo "| ofi | not built | | | | | | | | | |"; break; }
    L="env GV_TRANSPORT=ofi FI_PROVIDER='$prov' timeout 120 $B/bin/gvrun -n 2"
    GL=() GB=() PL=() PB=()
    for ((r = 0; r < ROUNDS; r++)); do
        lineping
        read -r l _ <<<"$(gv_pp "$L" 8)"; GL+=("$l")
        read -r l _ <<<"$(gv_pp "$L" 1048576)"
        GB+=("$(awk -v l="$l" 'BEGIN { if (l > 0) printf "%.1f", 1048576 / l }')")
        if have fi_pingpong; then
            read -r l _ <<<"$(fi_pp "$prov" 8 100000)"; PL+=("$l")
            read -r _ b <<<"$(fi_pp "$prov" 1048576 2000)"; PB+=("$b")
        fi
    done
    row "ofi FI_PROVIDER=$prov" "fi_pingpong -p '$prov' (ping-pong bw)"
done
for btl in "self,vader" "self,tcp"; do
    want "mpi/${btl#self,}" || continue
    [ -x "$B/perf/mpi_pingpong" ] && have mpirun || break
    L="timeout 120 mpirun --oversubscribe -np 2 --mca btl $btl -x GV_TRANSPORT=mpi -x GV_WARN_UNUSED_ENV"
    GL=() GB=() PL=() PB=()
    for ((r = 0; r < ROUNDS; r++)); do
        lineping
        read -r l _ <<<"$(gv_pp "$L" 8)"; GL+=("$l")
        read -r _ b <<<"$(gv_pp "$L" 1048576)"; GB+=("$b")
        read -r l _ <<<"$(mpi_pp "$btl" 8)"; PL+=("$l")
        read -r _ b <<<"$(mpi_pp "$btl" 1048576)"; PB+=("$b")
    done
    row "mpi btl $btl" "perf/mpi_pingpong --mca btl $btl"
done
if [ -n "$(printf '%s' "${LP[@]}")" ]; then
    printf '%s\n' "${LP[@]}" | awk 'NF' | sort -g | awk '
        { if ($1 < 39) a++; else if ($1 < 100) b++; else c++ }
        END { printf "\nHost modes sampled (perf/lineping once a round,"
              printf " one-way ns): under 39 %d, 39-100 %d, over 100 %d\n",
              a, b, c }'
fi
