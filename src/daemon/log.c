/* gpuschedd: logfmt lines on stderr, each whole in one write(2) so threads never interleave. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 2048
#define HOLD_BYTES     32768

/* The lines a thread holds (gsd_log_hold()). */
static _Thread_local struct {
    int on;
    size_t len;
    char buf[HOLD_BYTES];
} held;

static void put(const char *buf, size_t len)
{
    ssize_t w = write(STDERR_FILENO, buf, len);
    (void)w; /* a log line that cannot be written has nowhere else to go */
}

void gsd_log_hold(void)
{
    held.on = 1;
}

void gsd_log_flush(void)
{
    if (held.len)
        put(held.buf, held.len);
    held.len = 0;
    held.on = 0;
}

/* Append @v to @buf, quoted and escaped when logfmt needs it. */
static size_t put_value(char *buf, size_t off, size_t cap, const char *v)
{
    int quote = *v == '\0';
    for (const char *p = v; *p && !quote; p++)
        quote = *p == ' ' || *p == '=' || *p == '"' || (unsigned char)*p < 0x20;
    if (quote && off < cap)
        buf[off++] = '"';
    for (const char *p = v; *p && off + 2 < cap; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '"' || ch == '\\') {
            buf[off++] = '\\';
            buf[off++] = (char)ch;
        } else if (ch < 0x20) {
            buf[off++] = '\\';
            buf[off++] = ch == '\n' ? 'n' : ch == '\t' ? 't' : '?';
        } else {
            buf[off++] = (char)ch;
        }
    }
    if (quote && off < cap)
        buf[off++] = '"';
    return off;
}

void gsd_log(const char *level, const char *msg, ...)
{
    char buf[LINE_MAX_BYTES];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t off = strftime(buf, sizeof(buf), "ts=%Y-%m-%dT%H:%M:%S", &tm);
    off += (size_t)snprintf(buf + off, sizeof(buf) - off,
                            ".%06ldZ level=%s msg=", ts.tv_nsec / 1000, level);
    size_t cap = sizeof(buf) - 2; /* room for the newline */
    off = put_value(buf, off, cap, msg);
    va_list ap;
    va_start(ap, msg);
    for (;;) {
        const char *k = va_arg(ap, const char *);
        if (!k)
            break;
        const char *v = va_arg(ap, const char *);
        if (off + strlen(k) + 3 >= cap)
            break;
        off += (size_t)snprintf(buf + off, cap - off, " %s=", k);
        off = put_value(buf, off, cap, v ? v : "");
    }
    va_end(ap);
    buf[off++] = '\n';
    if (!held.on) {
        put(buf, off);
        return;
    }
    if (held.len + off > sizeof(held.buf)) {
        put(held.buf, held.len);
        held.len = 0;
    }
    memcpy(held.buf + held.len, buf, off);
    held.len += off;
}

void gsd_log_warning(void *ud, const char *msg)
{
    gsd_log("warn", (const char *)ud, "warning", msg, NULL);
}
