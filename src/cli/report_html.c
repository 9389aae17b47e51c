/*
 * The page of gpusched report: the run's data in the report's page (gpusched/page.h), written
 * beside @out and then renamed, so a page is whole or not there (a device, FIFO or symbolic link
 * named as @out is written in place).
 */
#include "report.h"

#include "gpusched/diag.h"
#include "gpusched/page.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int rp_write_html(const char *out, const char *title, const json_t *data, const char *chart_js,
                  const char *assets_dir, struct gs_diag *d)
{
    char *text = json_dumps(data, JSON_COMPACT | JSON_REAL_PRECISION(6)), *page = NULL, tmp[4096];
    size_t len = 0;
    if (!text)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    struct gs_page_spec spec = {
        .title = title, .chart_js = chart_js, .assets_dir = assets_dir, .data_json = text};
    int rc = gs_page_html(&spec, &page, &len, d);
    free(text);
    if (rc)
        return rc;
    /* a regular file is replaced whole (a reader never sees half a page); anything else — a
     * device, a FIFO, a symbolic link such as /dev/stdout — is written in place (through the
     * link), never replaced by a file */
    struct stat st;
    int in_place = lstat(out, &st) == 0 && !S_ISREG(st.st_mode);
    snprintf(tmp, sizeof(tmp), "%s.tmp", out);
    const char *path = in_place ? out : tmp;
    FILE *f = fopen(path, "w");
    if (!f) {
        rc = gs_diag_error_code(d, -EIO, "%s: cannot write: %s", path, strerror(errno));
    } else {
        int bad = fwrite(page, 1, len, f) != len;
        if (fclose(f) != 0 || bad || (!in_place && rename(tmp, out) != 0)) {
            rc = gs_diag_error_code(d, -EIO, "%s: cannot write: %s", out, strerror(errno));
            if (!in_place)
                remove(tmp);
        }
    }
    free(page);
    return rc;
}
