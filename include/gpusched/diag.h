/*
 * gpusched — diagnostics carried out of fallible calls.
 *
 * Invariants: a struct gs_diag is a caller-owned value (stack or embedded); no call allocates for
 * it. `msg` always holds a NUL-terminated string; it is the empty string until an error is set.
 * Error text names the place the problem is (file:line:column, the request field, the pod or the
 * node) so a person can act on it without a debugger. Warnings do not stop a call: each is passed
 * to `warn` when set, otherwise counted only.
 */
#ifndef GPUSCHED_DIAG_H
#define GPUSCHED_DIAG_H

#include <stddef.h>
#include <stdint.h>

#define GS_DIAG_MSG_MAX 512

struct gs_diag {
    char msg[GS_DIAG_MSG_MAX]; /* last error, "" when none */
    unsigned nwarn;            /* warnings reported so far */
    /* Called once per warning with the formatted text; may be NULL. */
    void (*warn)(void *ud, const char *msg);
    void *warn_ud;
};

/*
 * gs_diag_init() - reset @d to no error and no warnings, keeping no callback.
 * @d: may be NULL (then nothing happens).
 */
void gs_diag_init(struct gs_diag *d);

/*
 * gs_diag_error() - record an error message, printf-style, truncated to GS_DIAG_MSG_MAX - 1 bytes,
 * its control bytes (those of a name quoted in it) written as \xNN; gs_diag_warn() likewise.
 * @d: may be NULL (then the message is dropped).
 * Return: always -EINVAL, so callers can write `return gs_diag_error(d, ...)`.
 */
int gs_diag_error(struct gs_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * gs_diag_errorf_code() - as gs_diag_error() but returns @code (a negative errno) instead.
 */
int gs_diag_error_code(struct gs_diag *d, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * gs_diag_warn() - report a warning: counted in @d->nwarn and passed to @d->warn when set.
 * @d: may be NULL.
 */
void gs_diag_warn(struct gs_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * gs_utf8_len() - the bytes of the well-formed UTF-8 character at @c (RFC 3629: no overlong form,
 * no surrogate, nothing above U+10FFFF; reads no further than a byte outside its sequence), 1
 * for ASCII, NUL included. Return: 1..4; 0 when @c starts none (a stray continuation byte, a
 * sequence cut short, 0xc0, 0xc1, 0xf5-0xff).
 */
int gs_utf8_len(const unsigned char *c);

/*
 * gs_bearer_token_ok() - @s (@n bytes) is a bearer token as an Authorization header carries one:
 * RFC 6750 section 2.1's b64token, 1 or more letters, digits and "-._~+/", then "=" only at its
 * end. Anything else (a space, a line break, a control byte) could not be sent, or would bend
 * the header. Return: 1 or 0.
 */
int gs_bearer_token_ok(const char *s, size_t n);
/* Bytes of a token a node agent sends (its --bootstrap-token-file's line) at most, and of any
 * other bearer token gpuschedd takes: a request header of 16 KB already fails in libmicrohttpd's
 * default 32 KiB of memory per connection, so a longer token could never be sent. */
#define GS_NODE_TOKEN_MAX   160
#define GS_BEARER_TOKEN_MAX 4096

/*
 * gs_text_plain() - @s (NUL-terminated) holds nothing the messages above write escaped: it is
 * well-formed UTF-8 (RFC 3629), with no C0 control or DEL, no C1 control, and none of Unicode's
 * bidirectional format characters (UAX #9), line and paragraph separators (U+2028, U+2029) or
 * zero-width characters (U+200B-U+200D, U+2060, U+FEFF). Such text prints as itself in a table, a
 * CSV row or a terminal. Return: 1 or 0.
 */
int gs_text_plain(const char *s);
/* What gs_text_plain() takes, as a message says it after "must be". */
#define GS_TEXT_PLAIN_IS                                                                           \
    "plain text (UTF-8 without control, bidirectional or zero-width characters)"

/*
 * gs_text_escape() - @src (NUL-terminated) into @dst (@cap bytes, caller's), as the messages
 * above write it: what gs_text_plain() refuses as \xNN (C0 controls, DEL, each byte that is not
 * part of well-formed UTF-8) or \uNNNN (the others); the rest as it is. Cut short, at a whole
 * character, where @dst is full. Return: the bytes written, without the NUL (0 and nothing written
 * when @cap is 0).
 */
size_t gs_text_escape(char *dst, size_t cap, const char *src);

#define GS_TIME_TEXT_MAX 48 /* gs_time_text()'s room, with the NUL */

/*
 * gs_time_text() - @us (microseconds since the Unix epoch) as RFC 3339 UTC, the one form every
 * output gives a time of the wall clock in: "2026-12-04T21:00:00Z", or with @micro its
 * microseconds too, "2026-12-04T21:00:00.000000Z" (Kubernetes' MicroTime). A time before the
 * epoch, or past what the calendar functions take, is written as "<us> us". Into @buf (caller's).
 * Return: @buf.
 */
const char *gs_time_text(char buf[GS_TIME_TEXT_MAX], int64_t us, int micro);

/*
 * gs_option_problem() - what is wrong with the option getopt_long() just refused, as a message
 * says it before the option: @c is what it returned, ':' for an option given without its value
 * (the option string must start with ':'), '?' (or anything else) for one it does not know.
 * Return: a static string, "missing value for option" or "unknown option".
 */
const char *gs_option_problem(int c);

#endif
