/*
 * Test helpers: capture the warnings a call reports through struct gs_diag's callback, and check
 * messages for a substring with the text shown on failure (cmocka would not show it).
 * Include after <cmocka.h>; define MAX_WARNS first to keep more than 8 warnings.
 */
#ifndef GS_TEST_DIAG_CAPTURE_H
#define GS_TEST_DIAG_CAPTURE_H

#include "gpusched/diag.h"

#include <stdio.h>
#include <string.h>

#ifndef MAX_WARNS
#define MAX_WARNS 8
#endif

/* Warnings the call reported, kept for inspection (the count goes on past MAX_WARNS). */
struct warns {
    int n;
    char msg[MAX_WARNS][GS_DIAG_MSG_MAX];
};

static void on_warn(void *ud, const char *msg)
{
    struct warns *w = ud;
    if (w->n < MAX_WARNS)
        snprintf(w->msg[w->n], sizeof(w->msg[w->n]), "%s", msg);
    w->n++;
}

static void diag_with(struct gs_diag *d, struct warns *w)
{
    gs_diag_init(d);
    memset(w, 0, sizeof(*w));
    d->warn = on_warn;
    d->warn_ud = w;
}

/* assert_has() - fail showing @text when it lacks @needle. */
static void assert_has(const char *text, const char *needle)
{
    if (!text || !needle || !strstr(text, needle)) {
        print_error("expected \"%s\" in: %s\n", needle ? needle : "(null)", text ? text : "(null)");
        fail();
    }
}

#endif
