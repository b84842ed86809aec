#!/usr/bin/env bash
# How large an aggregation buffer should be: GUPS in agg mode over every
# transport at each GV_AGG_BYTES, the rounds interleaved (every size of a
# configuration once, then again) so that the host's load hits all sizes
# alike. Prints, per configuration and rank count, the median million
# updates per second at each size and each size's median relative to the
# best, and writes OUT/aggsweep.csv. This is the measurement behind
# GV_AGG_BYTES's default (perf/notes/aggregation.md). With --timeouts it sweeps
# GV_AGG_TIMEOUT_US instead, at the default buffer size.
# SPDX-License-Identifier: BSD-3-Clause
#
# usage: perf/aggsweep.sh [--build DIR] [--out DIR] [--rounds R]
#                         [--sizes "4k 16k 64k ..."] [--ranks "2 4"]
#                         [--seconds S] [--log2 N] [--only "shm ucx/sm ..."]
#                         [--timeouts "100 300 1000"]
#   defaults: --rounds 3 --sizes "1k 4k 16k 64k 256k 1m" --ranks 2
#             --seconds 0.5 --log2 20: about 6 minutes on 2 cores
# Every run is under `timeout`; a run that fails is recorded in the CSV with
# its status (its log kept in OUT/logs) and left out of the medians.
#
# CSV columns: config,ranks,variable,value,round,mups,errors,note
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=$root/build
OUT=$here/out
ROUNDS=3
SIZES="1k 4k 16k 64k 256k 1m"
RANKS="2"
SECS=0.5
LOG2=20
ONLY=""
VAR=GV_AGG_BYTES

while [ $# -gt 0 ]; do
    case "$1" in
    --build) BUILD=$(cd "$2" && pwd); shift ;;
    --out) OUT=$2; shift ;;
    --rounds) ROUNDS=$2; shift ;;
    --sizes) SIZES=$2; shift ;;
    --ranks) RANKS=$2; shift ;;
    --seconds) SECS=$2; shift ;;
    --log2) LOG2=$2; shift ;;
    --only) ONLY=$2; shift ;;
    --timeouts) VAR=GV_AGG_TIMEOUT_US; SIZES=$2; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next }
                    NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "aggsweep.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
    shift
done
case "$ROUNDS" in
''|*[!0-9]*|0) echo "aggsweep.sh: --rounds '$ROUNDS': expected a positive integer" >&2
     exit 2 ;;
esac
for p in "$BUILD/bin/gvrun" "$BUILD/bin/gvinfo" "$BUILD/perf/gups"; do
    if [ ! -x "$p" ]; then
        echo "aggsweep.sh: $p is missing: run make BUILD=$BUILD first" >&2
        exit 1
    fi
done
# A value the variable refuses is a usage error, caught before any run.
for s in $SIZES; do
    if ! err=$(env "$VAR=$s" "$BUILD/bin/gvinfo" 2>&1 >/dev/null); then
        echo "aggsweep.sh: $VAR=$s: $err" >&2
        exit 2
    fi
done

mkdir -p "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
CSV=$OUT/aggsweep.csv
echo "config,ranks,variable,value,round,mups,errors,note" > "$CSV"

# shellcheck source=perf/transports.sh
. "$here/transports.sh"

for n in $RANKS; do
    for i in "${CONFIGS[@]}"; do
        lab=${LABELS[$i]}
        for ((r = 1; r <= ROUNDS; r++)); do
            line=""
            for s in $SIZES; do
                log=$OUT/logs/aggsweep_$(echo "$lab" | tr '/;' '__')_${n}_${s}_$r.log
                export "$VAR=$s"
                launch "$i" "$n" 120 "$log" "$BUILD/perf/gups" \
                    --mode agg --log2 "$LOG2" --seconds "$SECS" \
                    --progress-interval 0
                rc=$?
                unset "$VAR"
                res=$(grep '^gups transport=' "$log" | tail -1)
                mups=$(echo "$res" | sed -n 's/.* mups=\([0-9.]*\).*/\1/p')
                errs=$(echo "$res" | sed -n 's/.* errors=\([-0-9]*\).*/\1/p')
                if [ "$rc" = 0 ] && [ -n "$mups" ] && [ "$errs" = 0 ]; then
                    echo "$lab,$n,$VAR,$s,$r,$mups,$errs,ok" >> "$CSV"
                    line="$line $s=$mups"
                else
                    note=$(note_of "$rc")
                    [ "$rc" = 0 ] && note="wrong words: ${errs:-none reported}"
                    echo "$lab,$n,$VAR,$s,$r,$mups,$errs,$note" >> "$CSV"
                    line="$line $s=FAIL"
                fi
            done
            printf '  %-10s -n %d round %d:%s\n' "$lab" "$n" "$r" "$line"
        done
    done
done

# ---- table: medians per size, and relative to the best size --------------
echo
echo "GUPS agg, million updates per second, median of $ROUNDS rounds," \
     "by $VAR (log2 table words per rank: $LOG2; at most $SECS s per run)"
awk -F, -v sizes="$SIZES" '
function median(list,    a, m, i, j, t) {
    m = split(list, a, " ")
    for (i = 2; i <= m; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
NR > 1 {
    k = $1 " " $2
    if (!(k in seen)) { seen[k] = 1; order[n++] = k }
    if ($8 == "ok") v[k, $4] = v[k, $4] " " $6
}
END {
    ns = split(sizes, sz, " ")
    printf "%-10s %5s", "config", "ranks"
    for (j = 1; j <= ns; j++) printf " %9s", sz[j]
    printf "   best\n"
    for (i = 0; i < n; i++) {
        k = order[i]; split(k, a, " "); best = 0; bs = "-"
        for (j = 1; j <= ns; j++) {
            med[j] = ((k, sz[j]) in v) ? median(v[k, sz[j]]) : -1
            if (med[j] > best) { best = med[j]; bs = sz[j] }
        }
        printf "%-10s %5s", a[1], a[2]
        for (j = 1; j <= ns; j++)
            if (med[j] < 0) printf " %9s", "FAIL"
            else printf " %9.1f", med[j]
        printf "   %s\n", bs
        printf "%-10s %5s", "", ""
        for (j = 1; j <= ns; j++)
            if (med[j] < 0 || best == 0) printf " %9s", "-"
            else printf " %8.2fx", med[j] / best
        printf "\n"
    }
}' "$CSV"
echo "CSV: $CSV"
fails=$(awk -F, 'NR > 1 && $8 != "ok"' "$CSV" | wc -l)
if [ "$fails" -gt 0 ]; then
    echo "aggsweep.sh: $fails run(s) failed; see $OUT/logs" >&2
    exit 1
fi
