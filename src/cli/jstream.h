/*
 * Reading a large JSON document a piece at a time: the containers a caller names are walked
 * member by member, every other value is decoded whole by jansson. Memory is bounded by the
 * largest value decoded whole, not by the document: a 300 MB simulation file is read one pod at a
 * time.
 *
 * jansson decodes every value and key (json_load_callback() fed one byte per call, so it never
 * reads past the value; the one character a number or a literal makes it look ahead is handed
 * back). This module only steps over the punctuation of the containers walked.
 *
 * Errors name the file, line and column ("run.json:12:7: expected ',' or '}'"); errors a caller
 * finds in what it was given name the value's path in the document instead.
 * Containers walked nest at most GS_JS_DEPTH_MAX deep (jansson caps what it decodes itself).
 * Not thread-safe; one reader per file.
 */
#ifndef GS_CLI_JSTREAM_H
#define GS_CLI_JSTREAM_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

struct gs_diag;

#define GS_JS_BUF       65536
#define GS_JS_KEY_MAX   256 /* bytes of a key */
#define GS_JS_DEPTH_MAX 64

struct gs_js {
    FILE *f;
    const char *path;
    struct gs_diag *d;
    size_t value_max;  /* bytes one value decoded whole may take */
    size_t value_used; /* of the value being decoded */
    int over;          /* it passed value_max */
    unsigned char buf[GS_JS_BUF];
    size_t pos, len;        /* buf[pos..len) not yet read; 4 bytes before pos stay readable */
    long line, col, nl_col; /* of the next byte (1-based); the column the last newline ended */
    int read_error;
    int depth; /* containers being walked */
};

/* gs_js_open() - read @path ("-": standard input), decoding values of at most @value_max bytes.
 * Return: 0; -ENOENT/-EACCES/... with @d naming the file. */
int gs_js_open(struct gs_js *s, const char *path, size_t value_max, struct gs_diag *d);
void gs_js_close(struct gs_js *s);

/* A member of an object being walked: @key (NUL-terminated), the value next in @s, which the
 * callback must read (gs_js_value(), gs_js_object(), gs_js_array() or gs_js_skip()).
 * Return: 0 to go on, negative to stop the walk with that code. */
typedef int (*gs_js_member_fn)(struct gs_js *s, const char *key, void *ud);
/* An element @i of an array being walked, next in @s; as gs_js_member_fn. */
typedef int (*gs_js_element_fn)(struct gs_js *s, size_t i, void *ud);

/* gs_js_object() - walk the object next in @s, calling @fn for each member in order.
 * Return: 0; -EINVAL (not an object, malformed, a key longer than GS_JS_KEY_MAX); @fn's code. */
int gs_js_object(struct gs_js *s, gs_js_member_fn fn, void *ud);

/* gs_js_array() - walk the array next in @s, calling @fn for each element.
 * Return: 0; -EINVAL (not an array, malformed); @fn's code. */
int gs_js_array(struct gs_js *s, gs_js_element_fn fn, void *ud);

/* gs_js_value() - decode the value next in @s whole. Return: 0 with *@out (the caller's
 * reference); -EINVAL malformed; -E2BIG longer than value_max; -EIO unreadable. */
int gs_js_value(struct gs_js *s, json_t **out);

/* gs_js_skip() - step over the value next in @s: objects and arrays are walked, so a container of
 * any size is skipped in bounded memory. Return: as gs_js_array(). */
int gs_js_skip(struct gs_js *s);

/* gs_js_end() - nothing but white space is left. Return: 0; -EINVAL naming what follows. */
int gs_js_end(struct gs_js *s);

#endif
