#!/bin/sh
# The seeds' claim on the tenants' day (docs/utilisation.md): for each seed, each way's GPU
# allocation, busy and goodput (% of the cards over the day), the busy ceiling of the day's mix,
# GPU-hours discarded, inference p99
# and interactive p95 waits (s), and the most GPU-hours any tenant spent below its dedicated
# quota while asking for it. Usage: bench/utilisation.sh [FIRST [LAST [generate options...]]]
# (default seeds 42..46); run from the repository root after `make`.
set -eu
first=${1:-42}
last=${2:-46}
[ $# -ge 2 ] && shift 2 || shift $#
bin=${GPUSCHED:-build/gpusched}
printf '%-5s %-10s %7s %7s %8s %8s %9s %10s %10s %10s\n' seed way alloc busy goodput ceiling \
    discard-h infer-p99 inter-p95 below-ded
seed=$first
while [ "$seed" -le "$last" ]; do
    "$bin" generate tenant-day --seed "$seed" "$@" 2>/dev/null |
        "$bin" simulate --scenario - --way compare |
        awk -v seed="$seed" '
        /^ +exclusive +sharing +full/ { head = 1; next }
        head && /^GPU allocation/ { for (i = 0; i < 3; i++) alloc[i] = $(5 + 2 * i) }
        head && /^GPU busy \(modelled\)/ { for (i = 0; i < 3; i++) busy[i] = $(4 + 2 * i) }
        head && /^GPU goodput/ { for (i = 0; i < 3; i++) good[i] = $(4 + 2 * i) }
        head && /^GPU busy ceiling/ { for (i = 0; i < 3; i++) ceil[i] = $(6 + 2 * i) }
        head && /^GPU-hours discarded/ { for (i = 0; i < 3; i++) lost[i] = $(3 + i) }
        head && /^wait p99 inference/ { for (i = 0; i < 3; i++) inf[i] = $(5 + i) }
        head && /^wait p95 interactive/ { for (i = 0; i < 3; i++) itr[i] = $(5 + i) }
        /^way / { w++; next }
        /^  tenant-/ && w > 0 { if ($9 > below[w - 1]) below[w - 1] = $9 }
        END {
            split("exclusive sharing full", name, " ")
            for (i = 0; i < 3; i++)
                printf "%-5s %-10s %7s %7s %8s %8s %9s %10s %10s %10.1f\n", seed, name[i + 1],
                    alloc[i], busy[i], good[i], ceil[i], lost[i], inf[i], itr[i], below[i]
        }'
    seed=$((seed + 1))
done
