/* Text answers written piece by piece; see textbuf.h. */
#include "textbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for @n more bytes and the NUL. Return: 0; -1 (now full). */
static int room(struct gsd_text *t, size_t n)
{
    if (t->full)
        return -1;
    if (t->len + n + 1 <= t->cap)
        return 0;
    size_t cap = t->cap ? t->cap : 65536;
    while (cap < t->len + n + 1)
        cap *= 2;
    char *m = cap <= t->max ? realloc(t->s, cap) : NULL;
    if (!m) {
        t->full = 1;
        return -1;
    }
    t->s = m;
    t->cap = cap;
    return 0;
}

void gsd_text_put(struct gsd_text *t, const char *s, size_t n)
{
    if (room(t, n))
        return;
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

void gsd_text_printf(struct gsd_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || room(t, (size_t)n)) {
        t->full = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}
