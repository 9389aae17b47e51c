/*
 * The page of gpusched report: one HTML file that needs nothing else to open (it may come as a
 * mail attachment). It holds its style, Chart.js (read from where Debian's libjs-chart.js puts
 * it, or --chart-js), the report's data as JSON, and the page's own script, which draws the
 * charts with Chart.js and the cluster map as a grid of boxes.
 * Nothing read ends a <script> early: the data's '<' are written as \u003c, and a script that
 * holds "</script" or "<!--" is refused.
 */
#include "report.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ASSET_MAX (8u << 20) /* bytes of a script or a style sheet */

/* slurp() - the whole of @path (at most ASSET_MAX bytes), NUL-terminated; NULL with @d set. */
static char *slurp(const char *path, const char *what, struct gs_diag *d)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;
    if (!f) {
        gs_diag_error_code(d, -ENOENT, "%s: cannot read %s: %s", path, what, strerror(errno));
        return NULL;
    }
    if ((buf = malloc(ASSET_MAX + 1)) != NULL)
        n = fread(buf, 1, ASSET_MAX + 1, f);
    int err = ferror(f);
    fclose(f);
    if (!buf || err || n > ASSET_MAX) {
        gs_diag_error_code(d, buf ? -EIO : -ENOMEM, "%s: %s", path,
                           !buf  ? "out of memory"
                           : err ? "cannot read"
                                 : "larger than 8 MiB");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    return buf;
}

/* inline_safe() - @text can stand inside <script> or <style>: no "</script", "</style", "<!--". */
static int inline_safe(const char *text, const char *path, struct gs_diag *d)
{
    for (const char *p = strchr(text, '<'); p; p = strchr(p + 1, '<'))
        if (strncasecmp(p, "</script", 8) == 0 || strncasecmp(p, "</style", 7) == 0 ||
            strncmp(p, "<!--", 4) == 0)
            return gs_diag_error(d, "%s: holds \"%.8s\", which would end its <script> early", path,
                                 p);
    return 0;
}

/* html_text() - @s with &, <, > and " escaped. */
static void html_text(FILE *f, const char *s)
{
    for (; *s; s++)
        fputs(*s == '&'   ? "&amp;"
              : *s == '<' ? "&lt;"
              : *s == '>' ? "&gt;"
              : *s == '"' ? "&quot;"
                          : (char[]){*s, 0},
              f);
}

static void write_page(FILE *f, const char *title, const char *css, const char *chart,
                       const char *data, const char *js)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"gpusched report\">\n<title>",
          f);
    html_text(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
    fputs("<noscript>This report draws its charts with JavaScript: allow scripts to see "
          "them.</noscript>\n<main id=\"report\"></main>\n<script>\n",
          f);
    fputs(chart, f);
    fputs("\n</script>\n<script type=\"application/json\" id=\"gs-report-data\">", f);
    for (const char *p = data; *p; p++) /* JSON has '<' only inside strings */
        if (*p == '<')
            fputs("\\u003c", f);
        else
            fputc(*p, f);
    fprintf(f, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", js);
}

int rp_write_html(const char *out, const char *title, const json_t *data, const char *chart_js,
                  const char *assets_dir, struct gs_diag *d)
{
    char js_path[4096], css_path[4096], tmp[4096];
    snprintf(js_path, sizeof(js_path), "%s/report.js", assets_dir);
    snprintf(css_path, sizeof(css_path), "%s/report.css", assets_dir);
    char *chart = NULL, *js = NULL, *css = NULL, *text = NULL;
    int rc = 0;
    if (!(chart =
              slurp(chart_js, "Chart.js (Debian's libjs-chart.js; or give --chart-js FILE)", d)) ||
        !(js = slurp(js_path, "the report's script", d)) ||
        !(css = slurp(css_path, "the report's style sheet", d)))
        rc = -ENOENT;
    if (!rc && !strstr(chart, "Chart.js v"))
        rc = gs_diag_error(d, "%s: not Chart.js (no \"Chart.js vN\" banner)", chart_js);
    if (!rc)
        rc = inline_safe(chart, chart_js, d);
    if (!rc)
        rc = inline_safe(js, js_path, d);
    if (!rc)
        rc = inline_safe(css, css_path, d);
    if (!rc && !(text = json_dumps(data, JSON_COMPACT | JSON_REAL_PRECISION(6))))
        rc = gs_diag_error_code(d, -ENOMEM, "out of memory");
    if (!rc) {
        /* Written beside, then renamed: a page is whole or not there. */
        snprintf(tmp, sizeof(tmp), "%s.tmp", out);
        FILE *f = fopen(tmp, "w");
        if (!f) {
            rc = gs_diag_error_code(d, -EIO, "%s: cannot write: %s", tmp, strerror(errno));
        } else {
            write_page(f, title, css, chart, text, js);
            int bad = ferror(f);
            if (fclose(f) != 0 || bad || rename(tmp, out) != 0) {
                rc = gs_diag_error_code(d, -EIO, "%s: cannot write: %s", out, strerror(errno));
                remove(tmp);
            }
        }
    }
    free(chart);
    free(js);
    free(css);
    free(text);
    return rc;
}
