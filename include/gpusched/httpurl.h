/*
 * gpusched — the URL of a server gpusched's programs talk to: gpuschedd for the CLI and
 * gpusched-agent, the Kubernetes API server for gpuschedd.
 */
#ifndef GPUSCHED_HTTPURL_H
#define GPUSCHED_HTTPURL_H

#include <stddef.h>

#define GS_HTTP_URL_MAX 512 /* bytes, without the terminating NUL */

/*
 * gs_http_url() - check @s as a server's base URL and copy it into @out without trailing '/'
 * (paths are appended to it). A base URL is http:// or https://, then a host that libcurl's parser
 * takes (a port, if given, in 1..65535) and an optional path; at most GS_HTTP_URL_MAX bytes of
 * printable ASCII, without user information, space, query or fragment: anything else would be
 * cut, bend the request, send a bearer token over another protocol, or print a password in every
 * message that names the server.
 * @s: NUL-terminated, may be NULL (refused). @out: GS_HTTP_URL_MAX + 1 bytes, the caller's.
 * @why: @wsize bytes, the caller's (about 420 are enough to hold it whole).
 * Return: 0; -1 when @s is not such a URL: @out is then "" and @why reads "\"URL\": what is
 * wrong", the URL shown as its first 300 bytes (then "...") with any user information masked as
 * "***", for the caller to put after the name of the setting.
 */
int gs_http_url(const char *s, char out[GS_HTTP_URL_MAX + 1], char *why, size_t wsize);

#endif
