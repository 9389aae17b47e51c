/* Reading a large JSON document a piece at a time (jstream.h). */
#include "jstream.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <string.h>

#define KEEP 4 /* bytes kept readable before the read position, for handing back */

int gs_js_open(struct gs_js *s, const char *path, size_t value_max, struct gs_diag *d)
{
    memset(s, 0, sizeof(*s));
    s->path = path;
    s->d = d;
    s->value_max = value_max;
    s->line = s->col = 1;
    s->f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!s->f)
        return gs_diag_error_code(d, -errno, "%s: cannot open: %s", path, strerror(errno));
    return 0;
}

void gs_js_close(struct gs_js *s)
{
    if (s->f && s->f != stdin)
        fclose(s->f);
    s->f = NULL;
}

static int fill(struct gs_js *s)
{
    size_t keep = s->pos < KEEP ? s->pos : KEEP;
    memmove(s->buf, s->buf + s->pos - keep, keep);
    s->pos = keep;
    size_t n = fread(s->buf + keep, 1, sizeof(s->buf) - keep, s->f);
    s->len = keep + n;
    if (n == 0 && ferror(s->f))
        s->read_error = 1;
    return n > 0;
}

/* next() - the next byte, consumed; EOF at the end (or on a read error). */
static int next(struct gs_js *s)
{
    if (s->pos == s->len && !fill(s))
        return EOF;
    int c = s->buf[s->pos++];
    if (c == '\n') {
        s->nl_col = s->col;
        s->line++;
        s->col = 1;
    } else {
        s->col++;
    }
    return c;
}

/* back() - hand back the byte last consumed (at most KEEP in a row). */
static void back(struct gs_js *s)
{
    if (s->buf[--s->pos] == '\n') {
        s->line--;
        s->col = s->nl_col;
    } else {
        s->col--;
    }
}

/* peek() - the next byte that is not white space, not consumed; EOF at the end. */
static int peek(struct gs_js *s)
{
    int c;
    while ((c = next(s)) == ' ' || c == '\t' || c == '\n' || c == '\r')
        ;
    if (c != EOF)
        back(s);
    return c;
}

/* expected() - "FILE:LINE:COL: expected WHAT, found ...", at the next byte. */
static int expected(struct gs_js *s, const char *what)
{
    int c = peek(s);
    if (s->read_error)
        return gs_diag_error_code(s->d, -EIO, "%s: cannot read", s->path);
    char found[24];
    if (c == EOF)
        snprintf(found, sizeof(found), "the end of the file");
    else if (c >= 0x20 && c < 0x7f)
        snprintf(found, sizeof(found), "'%c'", c);
    else
        snprintf(found, sizeof(found), "byte 0x%02x", c);
    return gs_diag_error(s->d, "%s:%ld:%ld: expected %s, found %s", s->path, s->line, s->col, what,
                         found);
}

/* feed() - jansson's input: one byte a call, so it never reads past the value. */
static size_t feed(void *buf, size_t len, void *ud)
{
    struct gs_js *s = ud;
    (void)len;
    if (s->value_used == s->value_max) {
        s->over = 1;
        return (size_t)-1;
    }
    int c = next(s);
    if (c == EOF)
        return s->read_error ? (size_t)-1 : 0;
    s->value_used++;
    *(unsigned char *)buf = (unsigned char)c;
    return 1;
}

int gs_js_value(struct gs_js *s, json_t **out)
{
    json_error_t je;
    if (peek(s) == EOF)
        return expected(s, "a value");
    long line = s->line, col = s->col;
    s->value_used = 0;
    s->over = 0;
    json_t *v = json_load_callback(
        feed, s, JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &je);
    if (!v && s->read_error)
        return gs_diag_error_code(s->d, -EIO, "%s: cannot read", s->path);
    if (!v && s->over)
        return gs_diag_error_code(s->d, -E2BIG, "%s:%ld:%ld: a value longer than %zu bytes",
                                  s->path, line, col, s->value_max);
    if (!v)
        return gs_diag_error(s->d, "%s:%ld:%ld: JSON error: %s", s->path, line + je.line - 1,
                             je.line == 1 ? col + je.column - 1 : (long)je.column, je.text);
    /* A number or a literal ends where the next byte is not part of it: hand that byte back. */
    for (size_t extra = s->value_used - (size_t)je.position; extra > 0; extra--)
        back(s);
    *out = v;
    return 0;
}

/* enter() - into the container next, which opens with @open: 1 when it closes at once with
 * @close (then stepped over whole), 0 when members follow, or an error. */
static int enter(struct gs_js *s, int open, int close, const char *what)
{
    if (peek(s) != open)
        return expected(s, what);
    if (s->depth == GS_JS_DEPTH_MAX)
        return gs_diag_error(s->d, "%s:%ld:%ld: containers nested more than %d deep", s->path,
                             s->line, s->col, GS_JS_DEPTH_MAX);
    next(s);
    if (peek(s) == close) {
        next(s);
        return 1;
    }
    s->depth++;
    return 0;
}

/* after() - past a member or an element: 1 when another follows, 0 at @close, or an error. */
static int after(struct gs_js *s, int close, const char *what)
{
    int c = peek(s);
    if (c != ',' && c != close)
        return expected(s, what);
    next(s);
    if (c == close)
        s->depth--;
    return c == ',';
}

int gs_js_object(struct gs_js *s, gs_js_member_fn fn, void *ud)
{
    int rc = enter(s, '{', '}', "an object ('{')");
    if (rc)
        return rc < 0 ? rc : 0;
    do {
        char key[GS_JS_KEY_MAX + 1];
        json_t *k;
        long line = s->line, col = s->col;
        if (peek(s) != '"')
            return expected(s, "a key (a string)");
        if ((rc = gs_js_value(s, &k)) != 0)
            return rc;
        size_t n = json_string_length(k);
        if (n > GS_JS_KEY_MAX || strlen(json_string_value(k)) != n) {
            json_decref(k);
            return gs_diag_error(s->d, "%s:%ld:%ld: a key longer than %d bytes or with a NUL",
                                 s->path, line, col, GS_JS_KEY_MAX);
        }
        memcpy(key, json_string_value(k), n + 1);
        json_decref(k);
        if (peek(s) != ':')
            return expected(s, "':'");
        next(s);
        if ((rc = fn(s, key, ud)) != 0)
            return rc;
    } while ((rc = after(s, '}', "',' or '}'")) == 1);
    return rc;
}

int gs_js_array(struct gs_js *s, gs_js_element_fn fn, void *ud)
{
    int rc = enter(s, '[', ']', "an array ('[')");
    if (rc)
        return rc < 0 ? rc : 0;
    size_t i = 0;
    do {
        if ((rc = fn(s, i++, ud)) != 0)
            return rc;
    } while ((rc = after(s, ']', "',' or ']'")) == 1);
    return rc;
}

static int skip_member(struct gs_js *s, const char *key, void *ud)
{
    (void)key;
    (void)ud;
    return gs_js_skip(s);
}

static int skip_element(struct gs_js *s, size_t i, void *ud)
{
    (void)i;
    (void)ud;
    return gs_js_skip(s);
}

int gs_js_skip(struct gs_js *s)
{
    int c = peek(s);
    if (c == '{')
        return gs_js_object(s, skip_member, NULL);
    if (c == '[')
        return gs_js_array(s, skip_element, NULL);
    json_t *v = NULL;
    int rc = gs_js_value(s, &v);
    json_decref(v);
    return rc;
}

int gs_js_end(struct gs_js *s)
{
    return peek(s) == EOF && !s->read_error ? 0 : expected(s, "the end of the document");
}
