/*
 * gpusched — where shipped files are read from (include/gpusched/datadir.h). The build defines
 * GS_SOURCE_DATA_DIR (the source tree's data/), GS_BUILD_ROOT (the build tree) and
 * GS_INSTALLED_DATA_DIR ($prefix/$datadir/gpusched) in meson.build.
 */
#define _DEFAULT_SOURCE /* realpath() */
#include "gpusched/datadir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the running program lies under the build tree it was built in. */
static int in_build_tree(void)
{
    char exe[GS_DATA_PATH_MAX], root[GS_DATA_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0 || !realpath(GS_BUILD_ROOT, root))
        return 0;
    exe[n] = '\0';
    size_t len = strlen(root);
    return strncmp(exe, root, len) == 0 && exe[len] == '/';
}

char *gs_data_file(const char *rel, char *buf, size_t size)
{
    const char *dir = in_build_tree() ? GS_SOURCE_DATA_DIR : GS_INSTALLED_DATA_DIR;
    int n = snprintf(buf, size, "%s/%s", dir, rel);
    if (n < 0 || (size_t)n >= size)
        *buf = '\0';
    return buf;
}
