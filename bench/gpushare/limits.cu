// libgpushare bench (a): how much one allocation path can take under the memory limit.
//
//     limits PATH CHUNK_MIB [hold]
//
// Allocates CHUNK_MIB at a time by PATH (malloc, pitch, managed, async, pool, vmm, array, graph,
// ctx, none) until the first refusal, then prints what it got, the first error and what cuMemGetInfo says;
// with "hold" it then prints "holding" and waits for a line on stdin, so the caller can read the
// card's real memory use. "ctx" makes one more context per step instead (the context charge);
// "graph" launches one more graph per step, of one allocation node that the graph does not free
// (the graphs' memory grows by a chunk each time), so its first error is what a graph launch
// answers when its allocation cannot be had.
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int step(const char *path, size_t chunk, cudaStream_t s, cudaMemPool_t pool, int dev)
{
    void *p;
    if (!strcmp(path, "none")) /* nothing: what a process costs the card before it allocates */
        return -1;
    if (!strcmp(path, "malloc"))
        return cudaMalloc(&p, chunk);
    if (!strcmp(path, "pitch")) {
        size_t pitch;
        return cudaMallocPitch(&p, &pitch, 1 << 20, chunk >> 20);
    }
    if (!strcmp(path, "managed")) {
        int rc = cudaMallocManaged(&p, chunk);
        if (rc == 0) { /* make it resident, so the card's use shows it */
#if CUDART_VERSION >= 13000
            cudaMemLocation loc = {cudaMemLocationTypeDevice, dev};
            rc = cudaMemPrefetchAsync(p, chunk, loc, 0, s);
#else
            rc = cudaMemPrefetchAsync(p, chunk, dev, s);
#endif
        }
        return rc ? rc : cudaStreamSynchronize(s);
    }
    if (!strcmp(path, "async")) {
        int rc = cudaMallocAsync(&p, chunk, s);
        return rc ? rc : cudaStreamSynchronize(s);
    }
    if (!strcmp(path, "pool")) {
        int rc = cudaMallocFromPoolAsync(&p, chunk, pool, s);
        return rc ? rc : cudaStreamSynchronize(s);
    }
    if (!strcmp(path, "array")) {
        cudaArray_t a;
        cudaChannelFormatDesc d = cudaCreateChannelDesc<float>();
        return cudaMalloc3DArray(&a, &d, make_cudaExtent(1024, 256, chunk >> 20));
    }
    if (!strcmp(path, "vmm")) {
        CUmemAllocationProp prop;
        memset(&prop, 0, sizeof(prop));
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        CUmemGenericAllocationHandle h;
        CUdeviceptr va;
        int rc = cuMemCreate(&h, chunk, &prop, 0);
        if (rc == 0)
            rc = cuMemAddressReserve(&va, chunk, 0, 0, 0);
        if (rc == 0)
            rc = cuMemMap(va, chunk, 0, h, 0);
        return rc;
    }
    if (!strcmp(path, "graph")) {
        cudaGraph_t g;
        cudaGraphExec_t e;
        cudaGraphNode_t n;
        cudaMemAllocNodeParams a;
        memset(&a, 0, sizeof(a));
        a.poolProps.allocType = cudaMemAllocationTypePinned;
        a.poolProps.location.type = cudaMemLocationTypeDevice;
        a.poolProps.location.id = dev;
        a.bytesize = chunk;
        int rc = cudaGraphCreate(&g, 0);
        if (rc == 0)
            rc = cudaGraphAddMemAllocNode(&n, g, NULL, 0, &a);
        if (rc == 0)
#if CUDART_VERSION >= 12000
            rc = cudaGraphInstantiate(&e, g, 0);
#else
            rc = cudaGraphInstantiate(&e, g, NULL, NULL, 0);
#endif
        if (rc == 0)
            rc = cudaGraphLaunch(e, s);
        return rc ? rc : cudaStreamSynchronize(s);
    }
    if (!strcmp(path, "ctx")) {
        CUcontext c;
        CUdevice d;
        cuDeviceGet(&d, dev);
#if CUDA_VERSION >= 13000
        return cuCtxCreate(&c, NULL, 0, d);
#else
        return cuCtxCreate(&c, 0, d);
#endif
    }
    fprintf(stderr, "limits: unknown path %s\n", path);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: limits PATH CHUNK_MIB [hold]\n");
        return 2;
    }
    size_t chunk = (size_t)atoll(argv[2]) << 20, got = 0;
    int dev = 0, err = 0, n = 0;
    cudaStream_t s;
    cudaMemPool_t pool;
    cudaMemPoolProps props;
    memset(&props, 0, sizeof(props));
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    if (cudaSetDevice(dev) || cudaFree(0) || cudaStreamCreate(&s) || cudaMemPoolCreate(&pool, &props)) {
        fprintf(stderr, "limits: no CUDA device\n");
        return 1;
    }
    while (n < 100000 && (err = step(argv[1], chunk, s, pool, dev)) == 0) {
        got += chunk;
        n++;
    }
    cudaGetLastError();
    size_t fr = 0, total = 0;
    cudaMemGetInfo(&fr, &total);
    printf("%s chunk_mib=%zu allocated_mib=%zu steps=%d first_error=%d reported_total_mib=%zu "
           "reported_free_mib=%zu\n",
           argv[1], chunk >> 20, got >> 20, n, err, total >> 20, fr >> 20);
    if (argc > 3) {
        char line[8];
        printf("holding\n");
        fflush(stdout);
        if (!fgets(line, sizeof(line), stdin))
            return 0;
    }
    return 0;
}
