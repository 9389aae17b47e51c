/*
 * gpuschedd: the /ui page (ui.h). Made once, kept for the daemon's life, handed to
 * libmicrohttpd without a copy. Its scripts are inline, so its Content-Security-Policy allows
 * exactly those scripts (by their SHA-256), connections to this origin only, and no framing:
 * the bearer token typed into it goes nowhere but this daemon's API.
 */
#include "ui.h"
#include "api.h"
#include "log.h"
#include "server.h"

#include "gpusched/datadir.h"
#include "gpusched/diag.h"
#include "gpusched/page.h"

#include <nettle/base64.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SCRIPTS_MAX 8

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *page, why[GS_DIAG_MSG_MAX];
static size_t page_len;
static char csp[160 + SCRIPTS_MAX * 56];
static const char *headers[] = {"Content-Security-Policy",
                                csp,
                                "X-Content-Type-Options",
                                "nosniff",
                                "Referrer-Policy",
                                "no-referrer",
                                "Cache-Control",
                                "no-cache",
                                NULL};

/* The policy: each inline <script> of the page by its hash ('sha256-BASE64'). */
static void make_csp(void)
{
    size_t o = (size_t)snprintf(csp, sizeof(csp), "default-src 'none'; script-src");
    int n = 0;
    for (const char *p = strstr(page, "<script>"); p && n < SCRIPTS_MAX;
         p = strstr(p, "<script>"), n++) {
        const char *body = p + 8, *end = strstr(body, "</script>");
        uint8_t digest[SHA256_DIGEST_SIZE];
        char b64[BASE64_ENCODE_RAW_LENGTH(SHA256_DIGEST_SIZE) + 1];
        struct sha256_ctx h;
        sha256_init(&h);
        sha256_update(&h, (size_t)(end - body), (const uint8_t *)body);
        sha256_digest(&h, sizeof(digest), digest);
        base64_encode_raw(b64, sizeof(digest), digest);
        b64[sizeof(b64) - 1] = '\0';
        o += (size_t)snprintf(csp + o, sizeof(csp) - o, " 'sha256-%s'", b64);
        p = end;
    }
    snprintf(csp + o, sizeof(csp) - o,
             "; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; "
             "form-action 'none'; frame-ancestors 'none'");
}

static void load(void)
{
    struct gs_diag d;
    gs_diag_init(&d);
    char assets[GS_DATA_PATH_MAX];
    struct gs_page_spec spec = {.title = "gpuschedd",
                                .chart_js = GS_PAGE_CHART_JS,
                                .assets_dir = gs_data_file(GS_DATA_REPORT, assets, sizeof(assets)),
                                .extra_js = "ui.js"};
    if (gs_page_html(&spec, &page, &page_len, &d)) {
        snprintf(why, sizeof(why), "%s", d.msg);
        gsd_log("error", "the /ui page cannot be made", "reason", why, NULL);
        page = NULL;
        return;
    }
    make_csp();
}

int gsd_ui_path(const char *path)
{
    return !strcmp(path, "/ui") || !strcmp(path, "/ui/");
}

static void keep(void *cls)
{
    (void)cls; /* the page stays: every answer shares it */
}

int gsd_ui_answer(struct gsd_req *r)
{
    if (!gsd_ui_path(r->path))
        return 0;
    if (strcmp(r->method, "GET") && strcmp(r->method, "HEAD")) {
        gsd_reply_405(r, "GET, HEAD", NULL);
        return 1;
    }
    pthread_once(&once, load);
    if (!page) {
        gsd_reply_error(r, 503, "", "/ui is off: %s", why);
        return 1;
    }
    r->status = 200;
    r->resp = page;
    r->resp_len = page_len;
    r->resp_release = keep;
    r->resp_cls = NULL;
    r->ctype = "text/html; charset=utf-8";
    r->headers = headers;
    return 1;
}
