#!/bin/bash
# Launch a short job many times and count the launches that fail or
# stall: start-up races (two ranks connecting to each other at once under
# ofi's tcp;ofi_rxm) show up as rare stalls, which only a loop of launches
# catches. Each launch runs under GV_TIMEOUT_S=20 (a stall is named by the
# watchdog) and a 60 s limit. Prints one line per failed launch, then a
# summary: launches, failures, and the median, minimum and maximum launch
# time in seconds (all measured here).
#
#   perf/launches.sh [-n LAUNCHES] [-r RANKS] [-t TRANSPORT] [-e 'VAR=value ...']
#                    [-- program args...]
#
# Defaults: 50 launches of a 4-rank perf/gups --mode agg --seconds 0.2 over
# GV_TRANSPORT=ofi with FI_PROVIDER='tcp;ofi_rxm'. BUILD names the build
# directory (default build). SPDX-License-Identifier: BSD-3-Clause
set -u
BUILD=${BUILD:-build}
n=50 ranks=4 tl=ofi envs="FI_PROVIDER=tcp;ofi_rxm"
while getopts "n:r:t:e:h" o; do
    case $o in
    n) n=$OPTARG ;;
    r) ranks=$OPTARG ;;
    t) tl=$OPTARG ;;
    e) envs=$OPTARG ;;
    h) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "perf/launches.sh: bad option (see -h)" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
case $n in ''|*[!0-9]*) echo "perf/launches.sh: -n takes a count, not '$n'" >&2; exit 2 ;; esac
case $ranks in ''|*[!0-9]*) echo "perf/launches.sh: -r takes a count, not '$ranks'" >&2; exit 2 ;; esac
if [ $# -eq 0 ]; then
    set -- "$BUILD/perf/gups" --mode agg --seconds 0.2
fi
[ -x "$BUILD/bin/gvrun" ] || { echo "perf/launches.sh: $BUILD/bin/gvrun not built" >&2; exit 2; }
log=$(mktemp /tmp/gv-launches-XXXXXX)
trap 'rm -f "$log"' EXIT
echo "# $(git rev-parse --short HEAD 2>/dev/null || echo unknown) $(hostname) $(date -u +%FT%TZ)"
echo "# $n launches of $ranks ranks over $tl ($envs): $*"
fails=0 times=()
for i in $(seq 1 "$n"); do
    s=$(date +%s.%N)
    # shellcheck disable=SC2086
    env GV_TRANSPORT="$tl" $envs GV_TIMEOUT_S=20 GV_WARN_UNUSED_ENV=0 \
        timeout -k 5 60 "$BUILD/bin/gvrun" -n "$ranks" "$@" > "$log" 2>&1
    rc=$?
    e=$(date +%s.%N)
    t=$(echo "$e - $s" | bc)
    times+=("$t")
    if [ $rc -ne 0 ]; then
        fails=$((fails + 1))
        echo "launch $i: exit $rc after $t s: $(grep -m1 -E 'ERROR|gvrun:' "$log" | cut -c1-200)"
    fi
done
sorted=$(printf '%s\n' "${times[@]}" | sort -g)
med=$(echo "$sorted" | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
echo "launches=$n failed=$fails median_s=$med min_s=$(echo "$sorted" | head -1) max_s=$(echo "$sorted" | tail -1)"
[ "$fails" -eq 0 ]
