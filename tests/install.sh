#!/bin/sh
# `meson install` gives a gpusched that needs no source tree: every shipped file lands under
# $datadir/gpusched and the installed programs read it from there (include/gpusched/datadir.h),
# libgpushare.so lands where gpusched-agent's --shim looks by default.
# Usage: install.sh MESON BUILD_DIR PREFIX DATADIR LIBDIR
set -eu
meson=$1 build=$2 prefix=$3 datadir=$4 libdir=$5
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
"$meson" install -C "$build" --no-rebuild --quiet --destdir "$stage" >/dev/null
fail() { echo "install: $*" >&2; exit 1; }
share=$prefix/$datadir/gpusched
for f in billing/rates.yaml report/report.css report/report.js report/ui.js \
    alibaba-gpu-v2023/README.md alibaba-gpu-v2023/openb_node_list_gpu_node.csv \
    alibaba-gpu-v2023/openb_pod_list_default.csv; do
    cmp -s "data/$f" "$stage$share/$f" || fail "$share/$f is not data/$f"
done
for p in gpusched gpuschedd gpusched-agent; do
    [ -x "$stage$prefix/bin/$p" ] || fail "no $prefix/bin/$p"
done
shim=$prefix/$libdir/gpusched/libgpushare.so
[ -f "$stage$shim" ] || fail "no $shim"
# The installed programs name the installed files as their defaults, not the source tree's.
"$stage$prefix/bin/gpusched" bill --help | grep -qF "(default: $share/billing/rates.yaml)" ||
    fail "installed gpusched bill does not default to $share/billing/rates.yaml"
"$stage$prefix/bin/gpusched-agent" --help | grep -qF "($shim;" ||
    fail "installed gpusched-agent's --shim does not default to $shim"
# ... and read them from there: a replay with the default trace opens the installed node list
# (absent here unless gpusched is installed under $prefix too, then it must run).
if [ ! -e "$share" ]; then
    if "$stage$prefix/bin/gpusched" simulate --quiet >/dev/null 2>"$stage/err"; then
        fail "installed gpusched replayed a trace $share does not hold"
    fi
    grep -qF "$share/alibaba-gpu-v2023/openb_node_list_gpu_node.csv" "$stage/err" ||
        fail "installed gpusched did not look in $share: $(cat "$stage/err")"
fi
# deploy/Containerfile's runtime stage installs the Debian package of every library the installed
# programs link (libc6 is in every image; the sanitizers' runtimes belong to a test build only).
if command -v dpkg >/dev/null && command -v readelf >/dev/null; then
    for p in gpusched gpuschedd gpusched-agent; do
        readelf -d "$stage$prefix/bin/$p" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'
    done | sort -u | grep -vE '^lib(a|ub|l|t)san\.so' | while read -r lib; do
        path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
        [ -n "$path" ] || fail "$lib: ldconfig does not know it"
        real=$(readlink -f "$path")
        pkg=$(dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null) ||
            fail "$lib: no Debian package holds $real"
        pkg=${pkg%%:*}
        [ "$pkg" = libc6 ] || grep -qE "(^| )$pkg( |\$)" deploy/Containerfile ||
            fail "deploy/Containerfile's runtime stage does not install $pkg (for $lib)"
    done
fi
echo "installed under $prefix: data in $share, libgpushare in $shim"
