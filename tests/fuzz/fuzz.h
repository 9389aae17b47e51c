/*
 * The fuzz targets' shared helpers. Each target defines LLVMFuzzerTestOneInput() (libFuzzer's
 * entry point); built with -Dfuzz=true and clang it runs under libFuzzer, and in the ordinary
 * builds replay.c's main() runs it over the seed corpus and the regression inputs.
 */
#ifndef GS_FUZZ_H
#define GS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* FUZZ_CHECK() - a property every input must keep; checked in release builds too (unlike
 * assert()), so a replay in `make test` fails the same way libFuzzer would. */
#define FUZZ_CHECK(x)                                                                              \
    ((x) ? (void)0                                                                                 \
         : (fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #x), abort()))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/*
 * fuzz_file() - the @size bytes at @data as a file the loaders can open by name: one memfd per
 * process, rewritten at each call, named "/proc/self/fd/N". Return: the path (static storage);
 * NULL when the memfd cannot be made or written.
 */
const char *fuzz_file(const uint8_t *data, size_t size);

/* fuzz_str() - @data as a NUL-terminated string (cut at the first NUL), malloc'd; NULL no memory.
 */
char *fuzz_str(const uint8_t *data, size_t size);

#endif
