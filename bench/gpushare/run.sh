#!/bin/sh
# libgpushare on a real GPU: builds the library and three small CUDA programs here (nvcc), then
# measures (a) how much each allocation path gets under a memory limit and what the card really
# holds meanwhile, (d) where PyTorch is refused under that limit, (b) the utilisation achieved
# under SM limits of 30 % and 70 %, and (c) what the library adds to cuLaunchKernel and to a
# kernel-heavy loop. It changes no setting of the card and expects to be alone on it. Figures go
# to stdout and to $OUT/figures.txt (OUT defaults to /tmp/gpushare-bench). Run from anywhere:
#     sh bench/gpushare/run.sh
set -eu
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/gpushare-bench}
B="$OUT/build"
mkdir -p "$B"
FIG="$OUT/figures.txt"
: >"$FIG"
say() { echo "$*" | tee -a "$FIG"; }

NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_INC="$(dirname "$NVCC")/../include"
say "# $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader)"
say "# nvcc: $("$NVCC" --version | tail -1)"

# The library exactly as meson builds it, without meson: only the C runtime.
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -fPIC -shared -fvisibility=hidden -Wall -Werror \
    -Iinclude -Isrc src/shim/*.c -ldl -lpthread -lrt -o "$B/libgpushare.so"
cc -std=c11 -Wall -Werror -fsyntax-only -I"$CUDA_INC" bench/gpushare/abi_check.c
say "# ABI of src/shim/fns.def checked against $CUDA_INC/cuda.h"
for p in limits sm launch; do
    "$NVCC" -O2 -o "$B/$p" "bench/gpushare/$p.cu" -lcuda
done
LIB="$B/libgpushare.so"
REGION=/gpushare-bench-$$
trap 'rm -f /dev/shm$REGION' EXIT

used_mib() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -i 0; }

# Run limits with the environment in $1 (may be empty) and print its line plus the card's memory
# use while it holds what it got, less the use before it started.
held() {
    before=$(used_mib)
    fifo="$OUT/hold.$$"
    rm -f "$fifo" "$OUT/limits.out"
    mkfifo "$fifo"
    # shellcheck disable=SC2086
    (env $1 "$B/limits" "$2" "$3" hold <"$fifo" >"$OUT/limits.out") &
    pid=$!
    exec 3>"$fifo"
    # a program that fails before it holds must not leave this waiting
    while ! grep -q holding "$OUT/limits.out" 2>/dev/null && kill -0 "$pid" 2>/dev/null; do
        sleep 0.2
    done
    during=$(used_mib)
    exec 3>&-
    wait
    rm -f "$fifo"
    echo "$(head -1 "$OUT/limits.out") card_used_mib=$((during - before))"
}

# (a) The context's real cost, then each path under an 8 GiB limit with that cost charged.
ctx=$(held "" none 0 | sed 's/.*card_used_mib=//')
say "a context (and the runtime's modules) cost the card $ctx MiB"
LIMIT=8192
for path in malloc pitch managed async pool vmm array graph; do
    say "limit $LIMIT MiB: $(held "LD_PRELOAD=$LIB GPUSHARE_REGION=$REGION GPUSHARE_MEMORY_LIMIT_MIB=$LIMIT GPUSHARE_CONTEXT_MIB=$ctx" "$path" 256)"
done
say "limit 4096 MiB: $(held "LD_PRELOAD=$LIB GPUSHARE_REGION=$REGION GPUSHARE_MEMORY_LIMIT_MIB=4096 GPUSHARE_CONTEXT_MIB=$ctx" ctx 0)"
# What the driver itself answers a graph launch whose allocation the card cannot hold (no library):
# libgpushare answers CUDA_ERROR_OUT_OF_MEMORY (2) for one past the limit.
say "no library, graphs until the card is full: $(held "" graph 4096)"
say "default context charge, limit $LIMIT MiB: $(held "LD_PRELOAD=$LIB GPUSHARE_REGION=$REGION GPUSHARE_MEMORY_LIMIT_MIB=$LIMIT" malloc 256)"

# (d) PyTorch, where python3 has it: the card it sees and where it is refused under the same limit,
# with its native caching allocator and with cudaMallocAsync.
if python3 -c 'import torch' 2>/dev/null; then
    for conf in "" backend:cudaMallocAsync; do
        say "pytorch ${conf:-native allocator}, limit $LIMIT MiB: $(env LD_PRELOAD="$LIB" \
            GPUSHARE_REGION=$REGION GPUSHARE_MEMORY_LIMIT_MIB=$LIMIT GPUSHARE_CONTEXT_MIB="$ctx" \
            ${conf:+PYTORCH_CUDA_ALLOC_CONF=$conf} python3 bench/gpushare/torch_limit.py 256 2>&1 |
            tail -1)"
    done
else
    say "pytorch: python3 has no torch; (d) skipped"
fi

# (b) Utilisation sampled every 200 ms by nvidia-smi; the mean of seconds 8 to 28 of a 30 s run.
util() {
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 -lms 200 \
        >"$OUT/util.txt" &
    smi=$!
    # shellcheck disable=SC2086
    line=$(env $1 "$B/sm" 30 "$2") || line="sm failed (exit status $?)"
    kill "$smi" 2>/dev/null || true
    wait "$smi" 2>/dev/null || true
    mean=$(awk 'NR > 40 && NR <= 140 { s += $1; n++ } END { if (n) printf "%.1f", s / n }' "$OUT/util.txt")
    echo "$line utilisation_pct=$mean"
}
say "no limit: $(util "" 1000)"
for pct in 30 70; do
    for k in 1000 100; do
        say "limit $pct %: $(util "LD_PRELOAD=$LIB GPUSHARE_REGION=$REGION GPUSHARE_CORES_LIMIT_PERCENT=$pct" $k)"
    done
done

# (c) Launch overhead: without the library, preloaded with no limit, with a memory limit, and with
# a compute limit that does not bind (99 %, after a 6 s warm-up that lets the bucket grow).
for run in latency:200000 loop:20000; do
    m=${run%:*}
    n=${run#*:}
    say "without libgpushare: $("$B/launch" "$m" "$n")"
    say "libgpushare, no limit: $(env LD_PRELOAD="$LIB" "$B/launch" "$m" "$n")"
    say "libgpushare, memory limit: $(env LD_PRELOAD="$LIB" GPUSHARE_REGION=$REGION \
        GPUSHARE_MEMORY_LIMIT_MIB=65536 "$B/launch" "$m" "$n")"
    say "libgpushare, compute limit 99 %: $(env LD_PRELOAD="$LIB" GPUSHARE_REGION=$REGION \
        GPUSHARE_CORES_LIMIT_PERCENT=99 WARMUP=6 "$B/launch" "$m" "$n")"
done
