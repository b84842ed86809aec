#!/bin/bash
# Two builds of Grapevine against each other on one transport's hop, for a
# change too small to see in two launches. Launches of BUILD_A's and
# BUILD_B's in-process hop tool (perf/hop_ucx, hop_ofi or hop_mpi, the
# latency column of perf/inproc.sh) take turns, N pairs. Each launch
# measures our hop and the peer library's in the same process, so its gap
# (ours minus the library's, one-way ns) depends far less on the vCPU
# placement the launch got than either figure does.
# Prints each build's median gap and median ratio (ours over the
# library's), then the paired differences of the gaps, B minus A: their
# median, and in how many pairs B's gap was lower and higher. On a shared
# VM a 10 ns difference takes 50-100 pairs to show
# (perf/notes/receive-paths.md).
# Usage: perf/ab.sh BUILD_A BUILD_B LABEL [--pairs N] [-- TOOL_ARGS...]
#   LABEL: one of perf/configs.sh's (ucx/sm, ofi/shm, mpi/vader, ...)
#   TOOL_ARGS go to the hop tool (default: -b 40; -s for another size)
set -u
usage() {
    echo "usage: perf/ab.sh BUILD_A BUILD_B LABEL [--pairs N] [-- TOOL_ARGS...]" >&2
    exit 2
}
[ $# -ge 3 ] || usage
A=$1 BB=$2 LABEL=$3
shift 3
PAIRS=30
ARGS=(-b 40)
while [ $# -gt 0 ]; do
    case $1 in
    --pairs) [ $# -ge 2 ] || usage; PAIRS=$2; shift 2 ;;
    --) shift; ARGS=("$@"); break ;;
    *) echo "ab.sh: unknown option $1 (accepted: --pairs N, -- TOOL_ARGS)" >&2
       exit 2 ;;
    esac
done
case $PAIRS in
'' | *[!0-9]* | 0) echo "ab.sh: --pairs wants a positive integer, got '$PAIRS'" >&2
                   exit 2 ;;
esac
# shellcheck source=perf/configs.sh
. "$(dirname "$0")/configs.sh"
# shellcheck source=perf/common.sh
. "$(dirname "$0")/common.sh"
for d in "$A" "$BB"; do
    if [ ! -x "$d/bin/gvinfo" ]; then
        echo "ab.sh: $d is not a build directory (no $d/bin/gvinfo): make BUILD=$d" >&2
        exit 2
    fi
done
if ! hop_way "$LABEL" "$A" >/dev/null; then
    echo "ab.sh: unknown label '$LABEL' (accepted: ${LABELS[*]})" >&2
    exit 2
fi
IFS='|' read -r _ TOOL GK PK NEEDS <<<"$(hop_way "$LABEL" "$A")"
if [ "$TOOL" = hop_mpi ] && ! command -v mpirun >/dev/null 2>&1; then
    echo "ab.sh: $LABEL needs mpirun (apt-get install openmpi-bin)" >&2
    exit 77
fi
for d in "$A" "$BB"; do
    # shellcheck disable=SC2034 # B: read by built() in common.sh
    B=$d
    for t in $NEEDS; do
        if ! built "$t"; then
            echo "ab.sh: $d was built without $t, which $LABEL needs" >&2
            exit 77
        fi
    done
    if [ ! -x "$d/perf/$TOOL" ]; then
        echo "ab.sh: no $d/perf/$TOOL (make BUILD=$d)" >&2
        exit 2
    fi
done
T=$(mktemp -d /tmp/gv-ab-XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT

# one BUILD: one launch; appends "gap ratio" to $T/BUILD's file, or "-"
one() {
    local d=$1 launch line g p
    IFS='|' read -r launch _ <<<"$(hop_way "$LABEL" "$d")"
    line=$(eval "$launch $(printf '%q ' "$d/perf/$TOOL" "${ARGS[@]}")" \
               2>"$T/err" | grep "^$TOOL " | tail -n 1)
    g=$(field "$GK" "$line") p=$(field "$PK" "$line")
    if [ -z "$g" ] || [ -z "$p" ] || ! awk -v p="$p" 'BEGIN { exit !(p > 0) }'; then
        echo "ab.sh: no figures from $d/perf/$TOOL:" >&2
        tail -n 3 "$T/err" >&2
        echo "-"
        return
    fi
    awk -v g="$g" -v p="$p" 'BEGIN { printf "%.1f %.4f\n", g - p, g / p }'
}

for ((i = 0; i < PAIRS; i++)); do
    a=$(one "$A") b=$(one "$BB")
    [ "$a" = - ] || [ "$b" = - ] && continue
    echo "$a $b" >>"$T/pairs"
done
if [ ! -s "$T/pairs" ]; then
    echo "ab.sh: no pair gave figures" >&2
    exit 1
fi
awk -v a="$A" -v b="$BB" -v label="$LABEL" -v tool="$TOOL ${ARGS[*]}" '
function med(v, n,   i, j, t) {
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
            t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
        }
    return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{ n++; ga[n] = $1; ra[n] = $2; gb[n] = $3; rb[n] = $4; d[n] = $3 - $1
  if ($3 < $1) lower++; else if ($3 > $1) higher++ }
END {
    printf "ab.sh: %s, %s, %d pairs\n", label, tool, n
    printf "  A %s: median gap %.1f ns, median ratio %.3f\n", a, med(ga, n), med(ra, n)
    printf "  B %s: median gap %.1f ns, median ratio %.3f\n", b, med(gb, n), med(rb, n)
    printf "  B - A: median %+.1f ns; B lower in %d pairs, higher in %d\n", med(d, n), lower, higher
}' "$T/pairs"
