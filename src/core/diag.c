#include "gpusched/diag.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void gs_diag_init(struct gs_diag *d)
{
    if (!d)
        return;
    d->msg[0] = '\0';
    d->nwarn = 0;
    d->warn = NULL;
    d->warn_ud = NULL;
}

/* @fmt formatted into @dst (GS_DIAG_MSG_MAX bytes), control bytes written as \xNN: messages
 * quote what users wrote, and an escape sequence or a line break in a name must not reach the
 * terminal or the log line as itself. */
static void format_msg(char *dst, const char *fmt, va_list ap)
{
    char raw[GS_DIAG_MSG_MAX];
    vsnprintf(raw, sizeof(raw), fmt, ap);
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)raw; *c; c++) {
        int ctl = *c < 0x20 || *c == 0x7f;
        if (o + (ctl ? 4 : 1) >= GS_DIAG_MSG_MAX)
            break;
        if (ctl)
            o += (size_t)snprintf(dst + o, 5, "\\x%02x", *c);
        else
            dst[o++] = (char)*c;
    }
    dst[o] = '\0';
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
