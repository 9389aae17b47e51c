/*
 * The report's page (include/gpusched/page.h): the style sheet, Chart.js, the data and the
 * scripts put together into one HTML string, written through open_memstream().
 */
#include "gpusched/page.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ASSET_MAX (8u << 20) /* bytes of a script or a style sheet */

const int64_t gs_wait_edges_s[GS_WAIT_BINS - 1] = {0, 60, 300, 900, 3600, 10800, 21600, 43200};

int gs_wait_bin(int64_t wait_s)
{
    int b = 0;
    while (b < GS_WAIT_BINS - 1 && wait_s > gs_wait_edges_s[b])
        b++;
    return b;
}

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

static void write_page(FILE *f, const struct gs_page_spec *s, const char *css, const char *chart,
                       const char *js, const char *extra)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"gpusched report\">\n<title>",
          f);
    html_text(f, s->title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", css);
    fputs("<noscript>This report draws its charts with JavaScript: allow scripts to see "
          "them.</noscript>\n<main id=\"report\"></main>\n<script>\n",
          f);
    fputs(chart, f);
    fputs("\n</script>\n", f);
    if (s->data_json) {
        fputs("<script type=\"application/json\" id=\"gs-report-data\">", f);
        for (const char *p = s->data_json; *p; p++) /* JSON has '<' only inside strings */
            if (*p == '<')
                fputs("\\u003c", f);
            else
                fputc(*p, f);
        fputs("</script>\n", f);
    }
    fprintf(f, "<script>\n%s</script>\n", js);
    if (extra)
        fprintf(f, "<script>\n%s</script>\n", extra);
    fputs("</body>\n</html>\n", f);
}

int gs_page_html(const struct gs_page_spec *s, char **out, size_t *len, struct gs_diag *d)
{
    char js_path[4096], css_path[4096], extra_path[4096];
    snprintf(js_path, sizeof(js_path), "%s/report.js", s->assets_dir);
    snprintf(css_path, sizeof(css_path), "%s/report.css", s->assets_dir);
    snprintf(extra_path, sizeof(extra_path), "%s/%s", s->assets_dir,
             s->extra_js ? s->extra_js : "");
    char *chart = NULL, *js = NULL, *css = NULL, *extra = NULL, *text = NULL;
    size_t n = 0;
    int rc = 0;
    if (!(chart = slurp(s->chart_js, "Chart.js (Debian's libjs-chart.js; or give --chart-js FILE)",
                        d)) ||
        !(js = slurp(js_path, "the report's script", d)) ||
        !(css = slurp(css_path, "the report's style sheet", d)) ||
        (s->extra_js && !(extra = slurp(extra_path, "the page's script", d))))
        rc = -ENOENT;
    if (!rc && !strstr(chart, "Chart.js v"))
        rc = gs_diag_error(d, "%s: not Chart.js (no \"Chart.js vN\" banner)", s->chart_js);
    if (!rc)
        rc = inline_safe(chart, s->chart_js, d);
    if (!rc)
        rc = inline_safe(js, js_path, d);
    if (!rc)
        rc = inline_safe(css, css_path, d);
    if (!rc && extra)
        rc = inline_safe(extra, extra_path, d);
    if (!rc) {
        FILE *f = open_memstream(&text, &n);
        if (!f) {
            rc = gs_diag_error_code(d, -ENOMEM, "out of memory");
        } else {
            write_page(f, s, css, chart, js, extra);
            if (ferror(f) | fclose(f)) {
                rc = gs_diag_error_code(d, -ENOMEM, "out of memory writing the page");
                free(text);
            }
        }
    }
    free(chart);
    free(js);
    free(css);
    free(extra);
    if (!rc) {
        *out = text;
        *len = n;
    }
    return rc;
}
