# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# bench/python/callgrind_per_op.sh — sourced by real_instructions.sh and
# server_instructions.sh: the per-operation difference of two callgrind
# runs of one workload, by shared object.
#
#   per_op_by_object PREFIX N1 N2 LABEL UNIT
#
# reads PREFIX.N1 and PREFIX.N2 (callgrind files of the same program run
# with N1 and N2 operations) and prints "LABEL: T instructions per UNIT"
# and a row for each object whose share moves by more than 100 a unit.
# Start-up, imports and connecting are in both runs, so they cancel out.

per_op_by_object() {
    local prefix="$1" n1="$2" n2="$3" label="$4" unit="$5" n
    for n in "$n1" "$n2"; do
        callgrind_annotate --threshold=100 "$prefix.$n" 2>/dev/null |
            awk -v n="$n" '/\[.*\]$/ { gsub(",", "", $1); o = $NF; gsub(/^\[|\]$/, "", o); sub(/.*\//, "", o); s[o] += $1 }
                           END { for (k in s) print n, k, s[k] }'
    done | awk -v a="$n1" -v b="$n2" -v label="$label" -v unit="$unit" '
        { v[$2, $1] = $3; objs[$2] = 1 }
        END {
            total = 0
            for (o in objs) { d = (v[o, b] - v[o, a]) / (b - a); total += d; if (d > 100 || d < -100) rows[o] = d }
            printf "%s: %.0f instructions per %s\n", label, total, unit
            for (o in rows) printf "  %8.0f  %s\n", rows[o], o
        }'
}
