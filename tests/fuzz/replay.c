/*
 * Runs a fuzz target over files, without libFuzzer: the ordinary builds (gcc, release and
 * ASan+UBSan) replay the seed corpus and every input that once crashed (regress/), so a fixed
 * crash stays fixed in `make test`. Arguments: files or directories (their files, one level).
 * Exit status: 0 when every input ran; 1 when one could not be read.
 */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define INPUT_MAX (1u << 20)

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = malloc(INPUT_MAX);
    size_t n = f && buf ? fread(buf, 1, INPUT_MAX, f) : 0;
    int bad = !f || !buf || ferror(f);
    if (f)
        fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of directory @dir in name order, so a replay is the same every time. */
static int run_dir(const char *dir, int *count)
{
    DIR *d = opendir(dir);
    char *names[4096];
    size_t n = 0;
    int bad = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 4096)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "README.md"))
            names[n++] = strdup(e->d_name);
    if (d)
        closedir(d);
    qsort(names, n, sizeof(*names), cmp_names);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        bad |= names[i] ? run_file(path) : 1;
        (*count)++;
        free(names[i]);
    }
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0, count = 0;
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb)) {
            fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
            bad = 1;
        } else if (S_ISDIR(sb.st_mode)) {
            bad |= run_dir(argv[i], &count);
        } else {
            bad |= run_file(argv[i]);
            count++;
        }
    }
    printf("replay: %d inputs run\n", count);
    return bad;
}
