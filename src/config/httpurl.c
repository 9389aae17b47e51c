/* A server's base URL. Contract: gpusched/httpurl.h. */
#include "gpusched/httpurl.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

/* @s as a message may show it, into @out: its first bytes, with user information masked. */
static void shown(const char *s, char out[GS_HTTP_URL_MAX + 1])
{
    snprintf(out, GS_HTTP_URL_MAX - 2, "%s", s); /* room for "***" in place of one byte */
    const char *p = strstr(out, "://");
    char *host = p ? out + (p - out) + 3 : out;
    size_t n = strcspn(host, "/?#");
    char *at = NULL;
    for (char *c = host; c < host + n; c++)
        at = *c == '@' ? c : at;
    if (at) {
        memmove(host + 3, at, strlen(at) + 1);
        memcpy(host, "***", 3);
    }
}

int gs_http_url(const char *s, char out[GS_HTTP_URL_MAX + 1])
{
    size_t scheme = !s ? 0 : !strncmp(s, "https://", 8) ? 8 : !strncmp(s, "http://", 7) ? 7 : 0;
    size_t n = scheme ? strlen(s) : 0;
    int ok = scheme && s[scheme] && s[scheme] != '/' && n <= GS_HTTP_URL_MAX;
    for (const char *p = s; ok && *p; p++)
        ok = *p > ' ' && *p < 0x7f && *p != '?' && *p != '#';
    CURLU *u = ok ? curl_url() : NULL;
    ok = ok && u && curl_url_set(u, CURLUPART_URL, s, 0) == CURLUE_OK;
    char *user = NULL, *port = NULL;
    /* user:password@ would be printed in every message naming the server */
    ok = ok && curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_NO_USER;
    if (ok && curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK)
        ok = strcmp(port, "0") != 0;
    curl_free(user);
    curl_free(port);
    curl_url_cleanup(u);
    if (!ok) {
        shown(s ? s : "", out);
        return -1;
    }
    while (n > scheme && s[n - 1] == '/')
        n--;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}
