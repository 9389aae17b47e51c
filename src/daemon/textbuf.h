/*
 * Text answers written piece by piece (a scrape, a list of pods): a buffer that grows by doubling
 * up to a cap. Once a piece does not fit (past the cap, or out of memory) it is full: nothing more
 * is written and the answer is to be refused.
 */
#ifndef GSD_TEXTBUF_H
#define GSD_TEXTBUF_H

#include <stddef.h>

struct gsd_text {
    char *s; /* NUL-terminated once anything is written; owned */
    size_t len, cap, max;
    int full;
};

/* gsd_text_put() - append the @n bytes at @s. */
void gsd_text_put(struct gsd_text *t, const char *s, size_t n);
/* gsd_text_printf() - append printf-style. */
void gsd_text_printf(struct gsd_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
