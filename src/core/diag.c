#include "gpusched/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void gs_diag_init(struct gs_diag *d)
{
    if (!d)
        return;
    d->msg[0] = '\0';
    d->nwarn = 0;
    d->warn = NULL;
    d->warn_ud = NULL;
}

/* The code point of the UTF-8 sequence at @c (*@len its bytes) when it is a C1 control
 * (U+0080-U+009F), one of Unicode's bidirectional format characters (UAX #9: U+061C, U+200E,
 * U+200F, U+202A-U+202E, U+2066-U+2069), which reorder what a terminal shows, a line or paragraph
 * separator (U+2028, U+2029), which break a line in many viewers, or a zero-width one (U+200B-
 * U+200D, U+2060, U+FEFF), which hides in a name; else 0, *@len untouched. */
static unsigned invisible(const unsigned char *c, int *len)
{
    unsigned cp = 0;
    if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f)
        cp = c[1];
    else if (c[0] == 0xd8 && c[1] == 0x9c)
        cp = 0x061c;
    else if (c[0] == 0xef && c[1] == 0xbb && c[2] == 0xbf)
        cp = 0xfeff;
    else if (c[0] == 0xe2 && (c[1] == 0x80 || c[1] == 0x81) && c[2] >= 0x80 && c[2] <= 0xbf)
        cp = 0x2000u | (unsigned)(c[1] & 0x3f) << 6 | (c[2] & 0x3fu);
    if (cp >= 0x2000 && cp < 0xfeff &&
        !((cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x2029) ||
          (cp >= 0x202a && cp <= 0x202e) || cp == 0x2060 || (cp >= 0x2066 && cp <= 0x2069)))
        cp = 0;
    if (cp)
        *len = cp >= 0x800 ? 3 : 2;
    return cp;
}

int gs_utf8_len(const unsigned char *c)
{
    int n = c[0] < 0x80   ? 1
            : c[0] < 0xc2 ? 0
            : c[0] < 0xe0 ? 2
            : c[0] < 0xf0 ? 3
            : c[0] < 0xf5 ? 4
                          : 0;
    unsigned lo = c[0] == 0xe0 ? 0xa0 : c[0] == 0xf0 ? 0x90 : 0x80;
    unsigned hi = c[0] == 0xed ? 0x9f : c[0] == 0xf4 ? 0x8f : 0xbf;
    for (int i = 1; i < n; i++)
        if (c[i] < (i == 1 ? lo : 0x80) || c[i] > (i == 1 ? hi : 0xbf))
            return 0;
    return n;
}

int gs_text_plain(const char *s)
{
    int len;
    for (const unsigned char *c = (const unsigned char *)s; *c; c += len) {
        if (*c < 0x20 || *c == 0x7f || !(len = gs_utf8_len(c)))
            return 0;
        int n;
        if (*c >= 0xc2 && invisible(c, &n))
            return 0;
    }
    return 1;
}

size_t gs_text_escape(char *dst, size_t cap, const char *src)
{
    size_t o = 0;
    if (!cap)
        return 0;
    for (const unsigned char *c = (const unsigned char *)src; *c; c++) {
        int len = gs_utf8_len(c), ctl = *c < 0x20 || *c == 0x7f || !len;
        unsigned cp = !ctl && *c >= 0xc2 ? invisible(c, &len) : 0;
        len = ctl ? 1 : len; /* a character's bytes go whole or not at all */
        size_t need = cp ? 6 : ctl ? 4 : (size_t)len;
        if (o + need >= cap)
            break;
        if (cp) {
            o += (size_t)snprintf(dst + o, 7, "\\u%04x", cp);
        } else if (ctl) {
            o += (size_t)snprintf(dst + o, 5, "\\x%02x", *c);
        } else {
            memcpy(dst + o, c, (size_t)len);
            o += (size_t)len;
        }
        c += len - 1;
    }
    dst[o] = '\0';
    return o;
}

/* @fmt formatted into @dst (GS_DIAG_MSG_MAX bytes) by gs_text_escape(): messages quote what
 * users wrote, and an escape sequence, a line break, a right-to-left override or a zero-width
 * space in a name must not reach the terminal or the log line as itself. */
static void format_msg(char *dst, const char *fmt, va_list ap)
{
    char raw[GS_DIAG_MSG_MAX];
    vsnprintf(raw, sizeof(raw), fmt, ap);
    gs_text_escape(dst, GS_DIAG_MSG_MAX, raw);
}

static void set_msg(struct gs_diag *d, const char *fmt, va_list ap)
{
    if (!d)
        return;
    format_msg(d->msg, fmt, ap);
}

int gs_diag_error(struct gs_diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_msg(d, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

int gs_diag_error_code(struct gs_diag *d, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_msg(d, fmt, ap);
    va_end(ap);
    return code;
}

void gs_diag_warn(struct gs_diag *d, const char *fmt, ...)
{
    char buf[GS_DIAG_MSG_MAX];
    va_list ap;
    if (!d)
        return;
    d->nwarn++;
    if (!d->warn)
        return;
    va_start(ap, fmt);
    format_msg(buf, fmt, ap);
    va_end(ap);
    d->warn(d->warn_ud, buf);
}

int gs_bearer_token_ok(const char *s, size_t n)
{
    static const char b64token[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                   "0123456789-._~+/";
    size_t i = 0;
    while (i < n && s[i] && strchr(b64token, s[i]))
        i++;
    size_t body = i;
    while (i < n && s[i] == '=')
        i++;
    return body > 0 && i == n;
}

const char *gs_time_text(char buf[GS_TIME_TEXT_MAX], int64_t us, int micro)
{
    time_t s = (time_t)(us / 1000000);
    struct tm tm;
    size_t off = us >= 0 && gmtime_r(&s, &tm)
                     ? strftime(buf, GS_TIME_TEXT_MAX, "%Y-%m-%dT%H:%M:%S", &tm)
                     : 0;
    if (!off)
        snprintf(buf, GS_TIME_TEXT_MAX, "%lld us", (long long)us);
    else if (micro)
        snprintf(buf + off, GS_TIME_TEXT_MAX - off, ".%06dZ", (int)(us % 1000000));
    else
        snprintf(buf + off, GS_TIME_TEXT_MAX - off, "Z");
    return buf;
}

const char *gs_option_problem(int c)
{
    return c == ':' ? "missing value for option" : "unknown option";
}
