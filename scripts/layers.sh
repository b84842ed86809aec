#!/bin/bash
# The layer check: each folder uses only the layers below it.
#   core < transports < aggregator < tasking < dsm < runtime < frameworks
# tools/, perf/, tests/ and examples/ stand above all and may use anything;
# frameworks/ may include only the public headers (include/grapevine/*)
# and its own; the public headers include only public headers.
# Checked: every #include of the sources, the calls between the compiled
# objects (an undefined gv_ symbol of an object that only a higher layer's
# object defines), that frameworks/ objects call only what libgrapevine.so
# exports, and that only core/env.c reads a GV_ variable with getenv().
# A call or include upward is the only way a cycle can cross two folders,
# so none is left when this passes.
# Usage: scripts/layers.sh [BUILD]  (BUILD: the build directory, for the
# calls; without its objects only the sources are checked, and it says so.)
# Prints one line per violation, naming the file and line (or object and
# symbol), and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
LAYERS="core transports aggregator tasking dsm runtime frameworks"
FREE="tools perf tests examples"

rank() {
    local i=0 l
    for l in $LAYERS; do
        [ "$l" = "$1" ] && { echo $i; return; }
        i=$((i + 1))
    done
    for l in $FREE; do
        [ "$l" = "$1" ] && { echo 100; return; }
    done
    echo -1
}

bad=0
srcs=$(for l in $LAYERS; do
           [ -d "$l" ] && find "$l" -name '*.[chS]' -o -name '*.def' | grep -v '^$' || true
       done | sort)

# 1. Includes.
for f in $srcs; do
    own=${f%%/*}
    r_own=$(rank "$own")
    while IFS=: read -r line inc; do
        dir=${inc%%/*}
        [ "$dir" = "$inc" ] && dir=""
        if [ "$own" = frameworks ]; then
            case "$inc" in
            grapevine/* | grapevine.h) continue ;;
            esac
            r=$(rank "$dir")
            if [ -n "$dir" ] && [ "$r" -ge 0 ] && [ "$dir" != frameworks ]; then
                echo "$f:$line: includes $inc: frameworks/ may include only include/grapevine/* and frameworks/ headers"
                bad=1
            fi
            continue
        fi
        [ -z "$dir" ] && continue
        r=$(rank "$dir")
        [ "$r" -lt 0 ] && continue
        if [ "$r" -gt "$r_own" ]; then
            echo "$f:$line: includes $inc, of layer $dir, above $own"
            bad=1
        fi
    done < <(grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<][^">]+[">]' "$f" |
             sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]+)[">].*/\1:\2/')
done

# The public headers: only public headers.
while IFS=: read -r f line inc; do
    case "$inc" in
    grapevine/* | grapevine.h) ;;
    *) echo "$f:$line: a public header includes \"$inc\", not a public header"; bad=1 ;;
    esac
done < <(grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' include/grapevine.h include/grapevine/*.h include/grapevine/fw/*.h 2>/dev/null |
         sed -E 's/^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1:\2:\3/')

# 2. GV_ variables are read in one place, core/env.c (core/env.def lists them).
while IFS= read -r hit; do
    echo "$hit: reads a GV_ variable with getenv(): declare it in core/env.def and read gv__env"
    bad=1
done < <(for l in $LAYERS; do [ -d "$l" ] && grep -n -E 'getenv\("GV_' -r "$l" --include='*.[ch]' || true; done |
         grep -v '^core/env\.c:' | cut -d: -f1,2)

# 3. Calls, from the objects.
# Objects of sources that still exist: a removed file's object may linger.
objs=$(for l in $LAYERS; do [ -d "$BUILD/obj/$l" ] && find "$BUILD/obj/$l" -name '*.o'; done | sort |
       while read -r o; do r=${o#"$BUILD"/obj/}; r=${r%.o}; [ -e "$r.c" ] || [ -e "$r.S" ] && echo "$o"; done || true)
if [ -z "$objs" ]; then
    echo "layers: no objects under $BUILD/obj: calls not checked (make lib first)"
else
    defs=$(mktemp)
    trap 'rm -f "$defs"' EXIT
    # "symbol object" for every global symbol an object defines.
    for o in $objs; do
        nm -g --defined-only "$o" | awk -v o="$o" 'NF == 3 && $3 ~ /^gv_/ { print $3, o }'
    done | sort > "$defs"
    exported=""
    if [ -e "$BUILD/lib/libgrapevine.so" ]; then
        exported=$(nm -D --defined-only "$BUILD/lib/libgrapevine.so" | awk '{ print $3 }' | sed 's/@.*//' | sort -u)
    fi
    for o in $objs; do
        rel=${o#"$BUILD"/obj/}
        own=${rel%%/*}
        r_own=$(rank "$own")
        for s in $(nm -u "$o" | awk '$2 ~ /^gv_/ { print $2 }'); do
            where=$(awk -v s="$s" '$1 == s { print $2 }' "$defs")
            [ -z "$where" ] && continue
            ok=0
            for d in $where; do
                drel=${d#"$BUILD"/obj/}
                dl=${drel%%/*}
                if [ "$(rank "$dl")" -le "$r_own" ]; then ok=1; fi
            done
            if [ "$own" = frameworks ] && [ "$ok" = 1 ]; then
                continue
            fi
            if [ "$own" = frameworks ] && [ -n "$exported" ] &&
               ! grep -qx "$s" <<< "$exported"; then
                echo "$o (${rel%.o}.c): calls $s, defined in ${where//$BUILD\/obj\//} and not exported by libgrapevine.so"
                bad=1
                continue
            fi
            [ "$own" = frameworks ] && continue
            if [ "$ok" = 0 ]; then
                d=${where%% *}
                d=${d#"$BUILD"/obj/}
                echo "$o (${rel%.o}.c): calls $s, defined only in $d, of layer ${d%%/*}, above $own"
                bad=1
            fi
        done
    done
fi

if [ "$bad" != 0 ]; then
    echo "layers: FAILED: each folder may use only the layers below it ($LAYERS)"
    exit 1
fi
echo "== layers: no include or call reaches a higher layer ($LAYERS; $(echo "$srcs" | wc -l) files, $(echo "$objs" | grep -c . || true) objects)"
