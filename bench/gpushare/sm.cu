// libgpushare bench (b): a kernel-bound tenant for the SM limit.
//
//     sm SECONDS KERNEL_US
//
// Launches kernels that keep every SM busy for about KERNEL_US each, as fast as the card (and the
// limit) lets it, for SECONDS; synchronises every 32 launches so the queue stays short. Prints the
// launches made; the caller samples the card's utilisation meanwhile.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include "now.h"

__global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sm SECONDS KERNEL_US\n");
        return 2;
    }
    double secs = atof(argv[1]);
    int khz = 0, sms = 0;
    cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    long long cycles = (long long)atof(argv[2]) * khz / 1000;
    long n = 0;
    double end = now() + secs;
    while (now() < end) {
        spin<<<sms * 4, 256>>>(cycles);
        if (++n % 32 == 0)
            cudaDeviceSynchronize();
    }
    cudaDeviceSynchronize();
    printf("sm launches=%ld seconds=%.1f kernel_us=%s\n", n, secs, argv[2]);
    return cudaGetLastError() != cudaSuccess;
}
