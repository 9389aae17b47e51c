#!/bin/sh
# gpusched report on the two large runs: the full-trace replay (7 policies x seeds 42..51, 70
# runs) and the 5,000-node, 100,000-pod tenants' day (three ways). For each: the JSON's size,
# the report's seconds and peak memory (GNU time), the page's size and how long it takes to open
# in Debian's chromium (bench/report/load.js). Run from the source root after `make`; scratch
# files go to ${TMPDIR:-/tmp}/gs-bench-report.
set -eu
B=build/gpusched
D=${TMPDIR:-/tmp}/gs-bench-report
mkdir -p "$D"
$B simulate --policy all --seeds 42..51 --json "$D/replay.json" --quiet >/dev/null
$B generate tenant-day --nodes 5000 --pods 100000 --quiet -o "$D/day5000.yaml"
$B simulate --scenario "$D/day5000.yaml" --json "$D/day5000.json" --quiet
for run in replay day5000; do
    /usr/bin/time -f "$run: report %e s, %M KiB peak" $B report "$D/$run.json" -o "$D/$run.html"
    echo "$run: JSON $(stat -c %s "$D/$run.json") bytes"
done
node bench/report/load.js "$D/replay.html" "$D/day5000.html"
