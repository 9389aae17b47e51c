/*
 * A library loaded by one thread whose constructor calls cuInit while the main thread makes its
 * first CUDA call: the loader's lock and the library's initialisation taken in both orders. As
 * dlrace PLUGIN: prints "done" when both calls returned; killed by SIGALRM after 20 s when they
 * deadlock. Built with -DDLRACE_PLUGIN: the plugin, whose constructor sleeps 300 ms (the main
 * thread calls at 100 ms, while the loader's lock is held) and calls cuInit.
 */
#define _GNU_SOURCE
#include "fns.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

CUresult cuInit(unsigned int flags);

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, ms % 1000 * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

#ifdef DLRACE_PLUGIN
__attribute__((constructor)) static void plugin_init(void)
{
    sleep_ms(300);
    fprintf(stderr, "plugin: cuInit -> %d\n", cuInit(0));
}
#else
static void *load(void *path)
{
    if (!dlopen(path, RTLD_NOW))
        fprintf(stderr, "dlrace: %s\n", dlerror());
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;
    alarm(20);
    if (argc != 2 || pthread_create(&t, NULL, load, argv[1]) != 0)
        return 2;
    sleep_ms(100);
    fprintf(stderr, "main: cuInit -> %d\n", cuInit(0));
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
#endif
