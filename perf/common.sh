# shellcheck shell=bash
# Helpers perf/compare.sh and perf/inproc.sh share, sourced after
# perf/configs.sh; they read B (the build directory) and ONLY (--only).
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

med() { # values... -> median (empty values ignored)
    printf '%s\n' "$@" | awk 'NF' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}
