#!/usr/bin/env bash
# How fast gvrun starts and ends ranks: `gvrun --np N true` for each N,
# REPS times, the counts alternating within each round; prints the median,
# minimum and maximum seconds and the median ranks per second per N. The
# 4,096-rank start (gvrun's largest -n) lives here, not in the tests: it
# takes from a few seconds to over 30 s on a loaded 2-core machine.
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: perf/gvrun_start.sh [--build DIR] [--reps N] [--np "256 1024 4096"]
#                            [--timeout S]
set -euo pipefail

build=build
reps=3
nps="256 1024 4096"
limit=300
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --np) nps=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gvrun_start.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
gvrun=$build/bin/gvrun
[ -x "$gvrun" ] || { echo "gvrun_start.sh: no $gvrun (make tools)" >&2; exit 1; }

declare -A times
for ((r = 0; r < reps; r++)); do
    for n in $nps; do
        t0=$(date +%s.%N)
        if ! timeout -k 5 "$limit" "$gvrun" --np "$n" true; then
            echo "gvrun_start.sh: gvrun --np $n true failed or took over" \
                 "$limit s" >&2
            exit 1
        fi
        t1=$(date +%s.%N)
        times[$n]="${times[$n]:-} $(echo "$t1 - $t0" | bc)"
    done
done
echo "# gvrun --np N true, $reps rounds; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%6s %6s %9s %9s %9s %11s\n' np reps median_s min_s max_s ranks_per_s
for n in $nps; do
    echo "${times[$n]}" | tr ' ' '\n' | grep . | sort -g | awk -v n="$n" '
        { v[NR] = $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
              printf "%6d %6d %9.3f %9.3f %9.3f %11.0f\n", n, NR, m, v[1], v[NR], n / m }'
done
