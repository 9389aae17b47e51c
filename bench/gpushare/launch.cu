// libgpushare bench (c): what the library adds to kernel launches.
//
//     launch latency N     N launches of an empty kernel, back to back: ns per launch (CPU side)
//     launch loop N        N iterations of a small real kernel (saxpy on 1 Mi floats),
//                          synchronised every 100: seconds for the whole loop
//
// The best of 5 repetitions, after a warm-up of WARMUP seconds (environment, default 0) of
// launches, so that a compute limiter's bucket has reached its steady rate.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "now.h"

__global__ void empty(void)
{
}

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: launch latency|loop N\n");
        return 2;
    }
    long n = atol(argv[2]);
    const int len = 1 << 20;
    float *x, *y;
    if (cudaMalloc(&x, len * sizeof(float)) || cudaMalloc(&y, len * sizeof(float)))
        return 1;
    double warm = getenv("WARMUP") ? atof(getenv("WARMUP")) : 0, until = now() + warm;
    while (now() < until) {
        for (int i = 0; i < 1000; i++)
            empty<<<1, 1>>>();
        cudaDeviceSynchronize();
    }
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        cudaDeviceSynchronize();
        double t0 = now();
        for (long i = 0; i < n; i++) {
            if (!strcmp(argv[1], "latency")) {
                empty<<<1, 1>>>();
            } else {
                saxpy<<<(len + 255) / 256, 256>>>(len, 2.0f, x, y);
                if (i % 100 == 99)
                    cudaDeviceSynchronize();
            }
        }
        double cpu = now() - t0;
        cudaDeviceSynchronize();
        double t = !strcmp(argv[1], "latency") ? cpu / n * 1e9 : now() - t0;
        if (t < best)
            best = t;
    }
    if (!strcmp(argv[1], "latency"))
        printf("launch latency_ns=%.1f n=%ld\n", best, n);
    else
        printf("launch loop_s=%.4f n=%ld\n", best, n);
    return cudaGetLastError() != cudaSuccess;
}
