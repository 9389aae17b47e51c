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

static void set_msg(struct gs_diag *d, const char *fmt, va_list ap)
{
    if (!d)
        return;
    vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
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
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    d->warn(d->warn_ud, buf);
}
