/* A server's base URL. Contract: gpusched/httpurl.h. */
#include "gpusched/httpurl.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

#define SHOWN_MAX  160             /* bytes of a refused URL a message repeats, the reason after */
#define SHOWN_SIZE (SHOWN_MAX + 7) /* with "***" for user information, "..." and the NUL */

/* @s as a message may show it, into @out (SHOWN_SIZE bytes): its scheme, "***" in place of any
 * user information (wherever it ends: a password is never shown, however long the URL), then
 * the rest, SHOWN_MAX bytes in all but the mask, and "..." where it was cut. */
static void shown(const char *s, char out[SHOWN_SIZE])
{
    const char *p = strstr(s, "://");
    size_t host = p ? (size_t)(p - s) + 3 : 0, n = strcspn(s + host, "/?#");
    const char *at = NULL;
    for (const char *c = s + host; c < s + host + n; c++)
        at = *c == '@' ? c : at;
    const char *rest = at ? at : s + host;
    size_t lead = host < SHOWN_MAX ? host : SHOWN_MAX, room = SHOWN_MAX - lead;
    snprintf(out, SHOWN_SIZE, "%.*s%s%.*s%s", (int)lead, s, at ? "***" : "", (int)room, rest,
             host > SHOWN_MAX || strlen(rest) > room ? "..." : "");
}

/* What is wrong with @s (its scheme @scheme bytes long), or NULL when it is a base URL. */
static const char *fault(const char *s, size_t scheme, char *buf, size_t size)
{
    if (!scheme)
        return "expected http:// or https://";
    if (!s[scheme] || s[scheme] == '/')
        return "no host after \"://\"";
    if (strlen(s) > GS_HTTP_URL_MAX) {
        snprintf(buf, size, "longer than %d bytes", GS_HTTP_URL_MAX);
        return buf;
    }
    for (const char *p = s; *p; p++) {
        if (*p == '?' || *p == '#')
            return *p == '?' ? "a query (\"?\"): paths are appended to a base URL"
                             : "a fragment (\"#\"): paths are appended to a base URL";
        if (*p <= ' ' || *p >= 0x7f) {
            snprintf(buf, size, "byte %zu is 0x%02x: expected printable ASCII without space",
                     (size_t)(p - s) + 1, (unsigned char)*p);
            return buf;
        }
    }
    size_t auth = strcspn(s + scheme, "/");
    if (s[scheme + auth - 1] == ':')
        return "a ':' without a port after it";
    CURLU *u = curl_url();
    CURLUcode rc = u ? curl_url_set(u, CURLUPART_URL, s, 0) : CURLUE_OUT_OF_MEMORY;
    char *user = NULL, *port = NULL;
    const char *why = NULL;
    if (rc != CURLUE_OK) {
        snprintf(buf, size, "libcurl cannot parse it: %s", curl_url_strerror(rc));
        why = buf;
    } else if (curl_url_get(u, CURLUPART_USER, &user, 0) != CURLUE_NO_USER) {
        /* user:password@ would be printed in every message naming the server */
        why = "user information (\"user:password@\"): give the credentials as a token, not in the "
              "URL";
    } else if (curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK && !strcmp(port, "0")) {
        why = "port 0: expected 1..65535";
    }
    curl_free(user);
    curl_free(port);
    curl_url_cleanup(u);
    return why;
}

int gs_http_url(const char *s, char out[GS_HTTP_URL_MAX + 1], char *why, size_t wsize)
{
    size_t scheme = !s ? 0 : !strncmp(s, "https://", 8) ? 8 : !strncmp(s, "http://", 7) ? 7 : 0;
    char buf[96], show[SHOWN_SIZE];
    const char *bad = fault(s ? s : "", scheme, buf, sizeof(buf));
    out[0] = '\0';
    if (bad) {
        shown(s ? s : "", show);
        snprintf(why, wsize, "\"%s\": %s", show, bad);
        return -1;
    }
    size_t n = strlen(s);
    while (n > scheme && s[n - 1] == '/')
        n--;
    memcpy(out, s, n);
    out[n] = '\0';
    return 0;
}
