#!/bin/bash
# The containers' rates as fractions of GUPS agg's (the messaging bound),
# measured in the same run: on each transport, perf/containers and
# perf/gups --mode agg take turns on 2 ranks, ROUNDS times; prints each
# launch's rates, then the median rate of each operation and its median
# ratio to the GUPS agg rate of the same round.
# GUPS agg runs with a table of 2^n words per rank (8 * 2^n bytes), the
# containers with 2^(n-2) keys per rank, whose hash table (2^(n-1) slots
# of 24 bytes at most half full) takes 12 * 2^n bytes: tables of about the
# same size, since both rates are bound by misses into them.
# Usage: perf/containers.sh [--rounds N] [--log2 n] [--transports "shm tcp"]
# SPDX-License-Identifier: BSD-3-Clause
set -u
B=${B:-build}
ROUNDS=5 LOG2=22 TLS="shm tcp"
usage() {
    echo "usage: perf/containers.sh [--rounds N] [--log2 n] [--transports LIST]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --rounds) [ $# -ge 2 ] || usage; ROUNDS=$2; shift 2 ;;
    --log2) [ $# -ge 2 ] || usage; LOG2=$2; shift 2 ;;
    --transports) [ $# -ge 2 ] || usage; TLS=$2; shift 2 ;;
    *) usage ;;
    esac
done
case $ROUNDS in '' | *[!0-9]* | 0) echo "containers.sh: --rounds wants a positive integer, got '$ROUNDS'" >&2; exit 2 ;; esac
case $LOG2 in '' | *[!0-9]*) echo "containers.sh: --log2 wants an integer 14..30, got '$LOG2'" >&2; exit 2 ;; esac
[ "$LOG2" -ge 14 ] && [ "$LOG2" -le 30 ] || { echo "containers.sh: --log2 wants 14..30, got $LOG2" >&2; exit 2; }
for p in "$B/bin/gvrun" "$B/perf/gups" "$B/perf/containers"; do
    [ -x "$p" ] || { echo "containers.sh: $p is not built (make $p)" >&2; exit 2; }
done
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
med() { printf '%s\n' "$@" | awk 'NF' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
OPS="insert lookup bag dinsert"
status=0
for tl in $TLS; do
    declare -A rate=() ratio=()
    gups_all=""
    for r in $(seq "$ROUNDS"); do
        g=$(GV_TRANSPORT=$tl timeout 300 "$B/bin/gvrun" -n 2 "$B/perf/gups" \
              --mode agg --log2 "$LOG2" 2>/dev/null | grep '^gups ')
        c=$(GV_TRANSPORT=$tl timeout 300 "$B/bin/gvrun" -n 2 "$B/perf/containers" \
              --log2 $((LOG2 - 2)) 2>/dev/null | grep '^containers ')
        gm=$(field mups "$g")
        if [ -z "$gm" ] || [ "$(grep -c mups <<<"$c")" -ne 4 ] ||
           [ "$(field errors "$g")" != 0 ]; then
            echo "containers.sh: round $r over $tl failed:" >&2
            printf '%s\n%s\n' "$g" "$c" >&2
            status=1
            continue
        fi
        echo "$g"
        echo "$c"
        gups_all+=" $gm"
        while read -r line; do
            op=$(field op "$line") m=$(field mups "$line")
            rate[$op]+=" $m"
            ratio[$op]+=" $(awk -v a="$m" -v b="$gm" 'BEGIN { printf "%.3f", a / b }')"
        done <<<"$c"
    done
    printf '\n%-8s %-8s %10s %14s\n' transport op "Mops/s" "x GUPS agg"
    # shellcheck disable=SC2086
    printf '%-8s %-8s %10s %14s\n' "$tl" "gups-agg" "$(med $gups_all)" 1
    for op in $OPS; do
        # shellcheck disable=SC2086
        printf '%-8s %-8s %10s %14s\n' "$tl" "$op" "$(med ${rate[$op]:-})" \
            "$(med ${ratio[$op]:-})"
    done
    echo
    unset rate ratio
done
exit $status
