#!/bin/sh
# ab_core.sh - a bench_core key of two source trees compared in one process
# (ab_core.c, ab_core_drv.c): both orders, and the mean of their differences.
#
#   sh bench/harness/ab_core.sh TREE_A TREE_B KEY [ROUNDS [PAIRS]]
#
# x86-64 Linux with gcc; each tree's core is built as setup.py builds it
# (-O2, link-time optimisation), both with the bench/bench_core.c beside this
# script: the keys' code is the same, only the cores differ.
set -e
[ $# -ge 3 ] || { echo "usage: $0 TREE_A TREE_B KEY [ROUNDS [PAIRS]]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
bench=$(cd "$here/.." && pwd)/bench_core.c
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for side in A B; do
    if [ $side = A ]; then tree=$(cd "$1" && pwd); else tree=$(cd "$2" && pwd); fi
    gcc -std=gnu11 -O2 -flto=auto -fPIC -fvisibility=hidden -shared -DBENCH_CORE="\"$bench\"" \
        -I"$tree/csrc/core" -I"$tree/csrc/include" $(find "$tree/csrc/core" -name '*.c') "$here/ab_core.c" \
        -o "$out/$side.so" -lm -pthread
done
gcc -std=gnu11 -O2 "$here/ab_core_drv.c" -o "$out/drv" -ldl
# Each process places its machines' shared memory and its code anew, which
# moves a ratio by up to 0.02 for the whole process (two builds of one tree
# differ by that much in one process): the comparison is the mean over
# PAIRS processes of each order.
pairs=${5:-3}
i=0
sum=0
while [ $i -lt "$pairs" ]; do
    one=$("$out/drv" "$out/A.so" "$out/B.so" "$3" "${4:-301}")
    two=$("$out/drv" "$out/B.so" "$out/A.so" "$3" "${4:-301}")
    echo "$one"
    echo "$two   (swapped: A is TREE_B)"
    d1=$(echo "$one" | sed 's/.*median(B - A) //')
    d2=$(echo "$two" | sed 's/.*median(B - A) //')
    sum=$(awk -v s="$sum" -v a="$d1" -v b="$d2" 'BEGIN { printf "%.6f", s + (a - b) / 2 }')
    i=$((i + 1))
done
echo "$3: TREE_B - TREE_A $(awk -v s="$sum" -v n="$pairs" 'BEGIN { printf "%+.4f", s / n }') (mean over $pairs pairs of orders)"
