# libgpushare bench (d): PyTorch under a memory limit, as a tenant's training script meets it.
#
#     python3 torch_limit.py CHUNK_MIB
#
# Reports the card PyTorch sees (torch.cuda.mem_get_info), then allocates CHUNK_MIB tensors until
# PyTorch raises torch.OutOfMemoryError, frees half of them, gives its cache back to the driver and
# allocates as many again (what was given back must be had again), and runs a matrix product in
# what is left. The allocator backend is PyTorch's choice of PYTORCH_CUDA_ALLOC_CONF (native, or
# backend:cudaMallocAsync).
import sys

import torch

OOM = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)  # torch.cuda's before 2.1
chunk = int(sys.argv[1]) << 20
free, total = torch.cuda.mem_get_info()
blocks, err = [], "none"
try:
    while len(blocks) < 10000:
        blocks.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
except OOM:
    err = "OutOfMemoryError"
got = len(blocks)
del blocks[got // 2 :]
torch.cuda.synchronize()
torch.cuda.empty_cache()  # back to the driver, so that the refill asks it (and the library) again
again = 0
try:
    while again < got - got // 2:
        blocks.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
        again += 1
except OOM:
    pass
del blocks[got // 2 :]
a = torch.randn(2048, 2048, device="cuda")
ok = bool(torch.isfinite(a @ a).all())
print(
    "torch %s backend=%s reported_total_mib=%d reported_free_mib=%d allocated_mib=%d "
    "first_error=%s refilled=%d/%d matmul_after=%s peak_reserved_mib=%d"
    % (torch.__version__, torch.cuda.get_allocator_backend(), total >> 20, free >> 20,
       got * (chunk >> 20), err, again, got - got // 2, ok, torch.cuda.max_memory_reserved() >> 20)
)
