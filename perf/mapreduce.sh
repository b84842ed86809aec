#!/usr/bin/env bash
# MapReduce benchmark: word count over a generated Zipf corpus and k-means
# (8-dimensional points, K = 10 and K = 1000) with gvmr on 1 and 2 ranks
# over shm and tcp, beside the single-process references of the same run
# (perf/ref_wordcount.c, perf/ref_kmeans.c: plain C, one core). Rows are
# alternated in every repetition and reported as medians. Every run's
# check values must equal the reference's (word totals; the centres'
# checksum and the sum of squared distances to 9 digits).
#
# Usage: perf/mapreduce.sh [--corpus SIZE] [--points N] [--points-k1000 N]
#                          [--iters I] [--reps R] [--out DIR]
#   --corpus SIZE       corpus bytes (k, m, g suffixes; default 1g)
#   --points N          points of the K = 10 runs (default 10000000)
#   --points-k1000 N    points of the K = 1000 runs (default 10000000)
#   --iters I           Lloyd iterations (default 5)
#   --reps R            repetitions (default 3)
#   --out DIR           where the inputs, CSV and chart go (default
#                       build/perf/mapreduce)
# Output: DIR/mapreduce.csv (bench,config,ranks,median_s,cpu_s,vs_ref,
# vs_1rank) and DIR/mapreduce.png (gnuplot). Wall seconds are the
# programs' own seconds= (reading and counting; the k-means iterations and
# the final distances), cpu_s the user + system seconds of the whole job.
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
CORPUS=1g POINTS=10000000 POINTS_K1000=10000000 ITERS=5 REPS=3
OUT=$B/perf/mapreduce
usage() { sed -n '2,/^# SPDX/p' "$0" | sed 's/^# \{0,1\}//;$d' >&2; exit 2; }
while [ $# -gt 0 ]; do
    [ $# -ge 2 ] || { echo "mapreduce.sh: $1 needs a value" >&2; usage; }
    case $1 in
    --corpus) CORPUS=$2 ;;
    --points) POINTS=$2 ;;
    --points-k1000) POINTS_K1000=$2 ;;
    --iters) ITERS=$2 ;;
    --reps) REPS=$2 ;;
    --out) OUT=$2 ;;
    *) echo "mapreduce.sh: unknown option '$1'" >&2; usage ;;
    esac
    shift 2
done
for v in "$POINTS" "$POINTS_K1000" "$ITERS" "$REPS"; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || { echo "mapreduce.sh: '$v' is not a positive integer" >&2; exit 2; }
done
[[ $CORPUS =~ ^[1-9][0-9]*[kKmMgG]?$ ]] || { echo "mapreduce.sh: bad --corpus '$CORPUS'" >&2; exit 2; }
make -s -j2 lib "$B/bin/gvrun" "$B/bin/gvmr" "$B/perf/ref_wordcount" "$B/perf/ref_kmeans" >/dev/null
mkdir -p "$OUT"
# shellcheck source=perf/common.sh
. perf/common.sh

run() { # CMD... -> "seconds cpu line" of the last key=value line
    local t line
    t=$(mktemp)
    if ! /usr/bin/time -f '%U %S' -o "$t.time" "$@" >"$t" 2>"$t.err"; then
        echo "mapreduce.sh: $* failed:" >&2; cat "$t.err" "$t" >&2; exit 1
    fi
    line=$(grep '=' "$t" | tail -1)
    echo "$(field seconds "$line") $(awk '{print $1 + $2}' "$t.time") $line"
    rm -f "$t" "$t.time" "$t.err"
}
# The global heap of each rank holds its points (64 bytes each) on 1 rank.
HEAP=$(( (POINTS > POINTS_K1000 ? POINTS : POINTS_K1000) * 64 + (256 << 20) ))
gv() { # TRANSPORT RANKS ARGS...: the command line of a gvmr job
    local tl=$1 n=$2
    shift 2
    GV=(env GV_TRANSPORT="$tl" GV_HEAP="$HEAP" GV_WARN_UNUSED_ENV=0 timeout 3600 "$B/bin/gvrun" -n "$n" "$B/bin/gvmr" "$@")
}
CONFIGS=(ref shm:1 shm:2 tcp:1 tcp:2)

echo "== inputs: corpus $CORPUS, points $POINTS and $POINTS_K1000 (8-d), $ITERS iterations, $REPS repetitions" >&2
gv shm 2 gencorpus --size "$CORPUS" --out "$OUT/corpus.txt"
"${GV[@]}" >/dev/null
gv shm 2 genpoints --n "$POINTS" --dim 8 --components 10 --out "$OUT/pts10.bin"
"${GV[@]}" >/dev/null
if [ "$POINTS_K1000" = "$POINTS" ]; then
    ln -sf pts10.bin "$OUT/pts1000.bin"
else
    gv shm 2 genpoints --n "$POINTS_K1000" --dim 8 --components 10 --out "$OUT/pts1000.bin"
    "${GV[@]}" >/dev/null
fi

declare -A WALL CPU CHECK
bench_cmd() { # BENCH CONFIG -> runs it, records
    local bench=$1 cfg=$2 r out want
    case $bench:$cfg in
    wordcount:ref) out=$(run "$B/perf/ref_wordcount" "$OUT/corpus.txt") ;;
    wordcount:*) gv "${cfg%:*}" "${cfg#*:}" wordcount --top 1 "$OUT/corpus.txt"
                 out=$(run "${GV[@]}") ;;
    kmeans10:ref) out=$(run "$B/perf/ref_kmeans" "$OUT/pts10.bin" 8 10 "$ITERS") ;;
    kmeans10:*) gv "${cfg%:*}" "${cfg#*:}" kmeans --points "$OUT/pts10.bin" --dim 8 --k 10 --iters "$ITERS"
                out=$(run "${GV[@]}") ;;
    kmeans1000:ref) out=$(run "$B/perf/ref_kmeans" "$OUT/pts1000.bin" 8 1000 "$ITERS") ;;
    kmeans1000:*) gv "${cfg%:*}" "${cfg#*:}" kmeans --points "$OUT/pts1000.bin" --dim 8 --k 1000 --iters "$ITERS"
                  out=$(run "${GV[@]}") ;;
    esac
    read -r s c r <<<"$out"
    WALL[$bench:$cfg]+="$s "
    CPU[$bench:$cfg]+="$c "
    # The check values: word totals, or checksum and sse to 9 digits.
    case $bench in
    wordcount) want="$(field words "$r") $(field distinct "$r")" ;;
    *) want=$(printf '%.9e %.9e' "$(field checksum "$r")" "$(field sse "$r")") ;;
    esac
    if [ -n "${CHECK[$bench]:-}" ] && [ "${CHECK[$bench]}" != "$want" ]; then
        echo "mapreduce.sh: $bench $cfg gave $want, the reference ${CHECK[$bench]}" >&2
        exit 1
    fi
    CHECK[$bench]=$want
    echo "   $bench $cfg: ${s}s (cpu ${c}s) $want" >&2
}
for rep in $(seq "$REPS"); do
    echo "== repetition $rep of $REPS" >&2
    for bench in wordcount kmeans10 kmeans1000; do
        for cfg in "${CONFIGS[@]}"; do
            bench_cmd "$bench" "$cfg"
        done
    done
done

CSV=$OUT/mapreduce.csv
echo "bench,config,ranks,median_s,cpu_s,vs_ref,vs_1rank" >"$CSV"
for bench in wordcount kmeans10 kmeans1000; do
    # shellcheck disable=SC2086
    ref=$(med ${WALL[$bench:ref]})
    for cfg in "${CONFIGS[@]}"; do
        # shellcheck disable=SC2086
        m=$(med ${WALL[$bench:$cfg]})
        # shellcheck disable=SC2086
        c=$(med ${CPU[$bench:$cfg]})
        one=$ref
        [ "$cfg" = ref ] || { # shellcheck disable=SC2086
            one=$(med ${WALL[$bench:${cfg%:*}:1]}); }
        n=1
        [ "$cfg" = ref ] || n=${cfg#*:}
        awk -v b="$bench" -v cf="${cfg%:*}" -v n="$n" -v m="$m" -v c="$c" \
            -v r="$ref" -v o="$one" \
            'BEGIN { printf "%s,%s,%d,%.4f,%.3f,%.3f,%.3f\n", b, cf, n, m, c, r / m, o / m }' >>"$CSV"
    done
done
column -t -s, "$CSV"
if command -v gnuplot >/dev/null; then
    awk -F, 'NR > 1 { printf "%s %s-%s %s\n", $1, $2, $3, $4 }' "$CSV" >"$OUT/plot.dat"
    gnuplot <<EOF
set terminal pngcairo size 900,500
set output "$OUT/mapreduce.png"
set title "gvmr vs the single-process reference (median seconds; lower is better)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "seconds"
set xtics rotate by -30
set key off
plot "$OUT/plot.dat" using 3:xtic(sprintf("%s %s", strcol(1), strcol(2)))
EOF
    echo "chart: $OUT/mapreduce.png" >&2
fi
echo "csv: $CSV" >&2
