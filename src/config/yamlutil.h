/*
 * Helpers the YAML loaders of src/config share: reading a file with a size cap, a syntax and depth
 * pass, walking libyaml document trees with messages that name "path:LINE:COL", and checking the
 * keys of a mapping against a list of known fields with a "did you mean" suggestion.
 *
 * Invariants:
 * - Every error and warning names the place: "path:LINE:COL: ..." (1-based), or "path: ..." when
 *   the problem is the file as a whole. A document parsed from a string inside a file (a
 *   ConfigMap's data entry) reports positions in the outer file: exact for a literal block scalar
 *   (`key: |`), otherwise the scalar's own position with the inner line and column added.
 * - Bounded work: a walk spends one unit of its budget per mapping pair or sequence item it visits,
 *   so aliases that repeat a subtree cannot multiply the work without end.
 * - A scalar quoted back in a message is cut to GS__YAML_SHOW_MAX bytes with control bytes
 *   replaced, so a hostile file cannot garble a terminal.
 * Thread safety: reentrant; no global state.
 */
#ifndef GS_CONFIG_YAMLUTIL_H
#define GS_CONFIG_YAMLUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include <yaml.h>

struct gs_diag;

#define GS__YAML_SHOW_MAX 64 /* bytes of a user's scalar quoted back in a message */
#define GS__YAML_SHOW_BUF (GS__YAML_SHOW_MAX + 8)
#define GS__YAML_KEYS_MAX 64 /* known keys of one mapping (each_field keeps a 64-bit seen-set) */
#define GS__YAML_NKEYS(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The fields of a Kubernetes ObjectMeta an object may carry (kubectl get -o yaml writes them all;
 * the API server refuses any other): name, namespace, labels, annotations, generateName first. */
#define GS__YAML_NMETA 15
extern const char *const gs__yaml_meta_keys[GS__YAML_NMETA];

/* One document being walked, and how to report on it. */
struct gs__yctx {
    const char *path;           /* file named in messages */
    struct gs_diag *d;          /* may be NULL */
    yaml_document_t *doc;       /* set per document by gs__yaml_each_document() */
    size_t budget;              /* visits left */
    bool quiet;                 /* drop warnings */
    bool lenient;               /* an unknown key is a warning and skipped, not an error */
    size_t line0, col0;         /* added to 0-based marks: where an embedded document starts */
    const char *inner;          /* NULL, or the data entry's name when only line0/col0 are exact */
    const yaml_node_t *err_at;  /* the node the last error named, NULL none */
    const yaml_node_t *warn_at; /* the node the first warning named, NULL none */
    bool noting;                /* set by gs__yaml_note() while it warns */
};

typedef int (*gs__yaml_field_fn)(struct gs__yctx *c, int field, yaml_node_t *val, void *arg);
typedef int (*gs__yaml_pair_fn)(struct gs__yctx *c, yaml_node_t *key, yaml_node_t *val, void *arg);
typedef int (*gs__yaml_item_fn)(struct gs__yctx *c, int idx, yaml_node_t *item, void *arg);
typedef int (*gs__yaml_doc_fn)(struct gs__yctx *c, yaml_node_t *root, void *arg);

/* gs__yaml_pos() - the 1-based position of @n in the outer file. */
void gs__yaml_pos(const struct gs__yctx *c, const yaml_node_t *n, size_t *line, size_t *col);

/* gs__yaml_err() - set @c->d to "path:LINE:COL: <message>" at @n. Return: -EINVAL. */
int gs__yaml_err(struct gs__yctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* gs__yaml_err_code() - as gs__yaml_err() but returns @code (a negative errno, e.g. -E2BIG). */
int gs__yaml_err_code(struct gs__yctx *c, const yaml_node_t *n, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* gs__yaml_path() - the path of node @n of the current document, as a JSON path with the keys
 * joined by '.' and items as [i] ("spec.containers[0].resources"); "" for the root or a node not
 * found. @buf: @size bytes, cut to fit. */
void gs__yaml_path(const struct gs__yctx *c, const yaml_node_t *n, char *buf, size_t size);

/* gs__yaml_note() - gs__yaml_warn(), for what stays a warning where a reader turns warnings into
 * refusals (a Pod's fields): @c->noting is set while it warns, @c->warn_at left as it was. */
void gs__yaml_note(struct gs__yctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* gs__yaml_warn() - warn "path:LINE:COL: <message>" at @n, unless @c->quiet. */
void gs__yaml_warn(struct gs__yctx *c, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* gs__yaml_label() - snprintf for message labels; a label cut at @size loses nothing vital. */
void gs__yaml_label(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* gs__yaml_kind_name() - "a scalar", "a sequence", "a mapping" or "an empty node". */
const char *gs__yaml_kind_name(const yaml_node_t *n);

/* gs__yaml_show() - @n for a message: a scalar quoted and cut (control bytes left to gs_diag,
 * which writes them \xNN; quotes as '?'), otherwise its kind.
 * @buf: GS__YAML_SHOW_BUF bytes. Return: @buf or a constant string. */
const char *gs__yaml_show(const yaml_node_t *n, char *buf);

/* gs__yaml_str() - a scalar's text, or NULL for a non-scalar or one with a NUL inside. */
const char *gs__yaml_str(const yaml_node_t *n);

/* gs__yaml_is_null() - a plain null scalar ("", "~", "null", "Null", "NULL"). */
bool gs__yaml_is_null(const yaml_node_t *n);

/* gs__yaml_is_empty() - a sequence or mapping with no items ("[]", "{}"). */
bool gs__yaml_is_empty(const yaml_node_t *n);

/* gs__yaml_is_plain() - a plain (unquoted) scalar: numbers and booleans must be plain. */
bool gs__yaml_is_plain(const yaml_node_t *n);

/*
 * gs__yaml_scalar_type() - what a plain scalar is to YAML 1.2's core schema (yaml.org/spec/1.2.2
 * §10.3.2), which JSON's values map onto: "null", "boolean", "integer" (decimal, 0o octal, 0x
 * hex), "float" (1.5, 1e3, .inf, .nan); NULL for a string: any quoted scalar (JSON's strings
 * are), a plain one the schema leaves text, or a non-scalar.
 */
const char *gs__yaml_scalar_type(const yaml_node_t *n);

/*
 * gs__yaml_text() - a scalar's text when it is a string, as a field of type string needs it:
 * NULL for a non-scalar, a NUL inside, or a plain null, boolean or number (123, true, 1.5).
 * Kubernetes' API server refuses those for a string field ("cannot unmarshal number into Go
 * struct field ... of type string"), and kubectl reads `name: 123` in YAML as that number;
 * quoted ('123') it is text. Mapping keys are not checked with it: sigs.k8s.io/yaml turns every
 * key into text (its YAMLToJSON), so `123:` is the key "123" there too.
 */
const char *gs__yaml_text(const yaml_node_t *n);

/* gs__yaml_text_error() - "WHAT must be a string, not the integer 123: ..." at @n, a node
 * gs__yaml_text() refused (a non-scalar named by its kind). Return: -EINVAL. */
int gs__yaml_text_error(struct gs__yctx *c, const yaml_node_t *n, const char *what);

/* gs__yaml_not_typed() - 0 unless @n is a plain boolean or number (gs__yaml_scalar_type(), null
 * aside: each field says what its null means), then gs__yaml_text_error(). */
int gs__yaml_not_typed(struct gs__yctx *c, const yaml_node_t *n, const char *what);

/* gs__yaml_type_error() - "WHERE must be WANT, not ..." at @n. Return: -EINVAL. */
int gs__yaml_type_error(struct gs__yctx *c, const yaml_node_t *n, const char *where,
                        const char *want);

/* gs__yaml_spend() - take one unit of the walk budget. Return: 0, or -EINVAL when spent. */
int gs__yaml_spend(struct gs__yctx *c, const yaml_node_t *n);

/* gs__yaml_child() - node @id of the current document, or NULL. */
yaml_node_t *gs__yaml_child(struct gs__yctx *c, int id);

/*
 * gs__yaml_each_field() - check every key of mapping @map (a null scalar counts as empty) against
 * @known (@n <= GS__YAML_KEYS_MAX entries), each at most once, and pass each value to @fn with
 * the key's index. An unknown key is an error suggesting the nearest known key, or, when
 * @c->lenient, the same text as a warning and the key is skipped.
 * Return: 0, or the first non-zero return of @fn, or -EINVAL with @c->d set.
 */
int gs__yaml_each_field(struct gs__yctx *c, yaml_node_t *map, const char *const *known, int n,
                        const char *where, gs__yaml_field_fn fn, void *arg);

/*
 * gs__nearest() - the index in @known (@n entries) of the entry nearest the string @s (edit
 * distance at most 2; the first of equal distance), or -1 when none is that near.
 * gs__yaml_nearest() - the same for the scalar key @k; -1 for a key that is not a scalar.
 */
int gs__nearest(const char *s, const char *const *known, int n);
int gs__yaml_nearest(const yaml_node_t *k, const char *const *known, int n);

/*
 * gs__yaml_hint() - " (did you mean \"NAME\"?)" for the entry of @known (@n entries) nearest key
 * @k, or "" when none is within an edit distance of 2; written to @buf (@size bytes, caller's).
 * Return: @buf.
 */
const char *gs__yaml_hint(const yaml_node_t *k, const char *const *known, int n, char *buf,
                          size_t size);
/* gs__hint() - gs__yaml_hint() of the string @s (a JSON key, an option's word). */
const char *gs__hint(const char *s, const char *const *known, int n, char *buf, size_t size);

/*
 * gs__yaml_each_pair() - every pair of mapping @map (null counts as empty) to @fn; keys must be
 * strings, each once (a key given twice is refused at its second place).
 * Return: 0, the first non-zero return of @fn, -EINVAL, or -ENOMEM.
 */
int gs__yaml_each_pair(struct gs__yctx *c, yaml_node_t *map, const char *where, gs__yaml_pair_fn fn,
                       void *arg);

/*
 * gs__yaml_each_item() - every item of sequence @seq (null counts as empty) to @fn with its index.
 * Return: 0, the first non-zero return of @fn, or -EINVAL.
 */
int gs__yaml_each_item(struct gs__yctx *c, yaml_node_t *seq, const char *where, gs__yaml_item_fn fn,
                       void *arg);

/* gs__yaml_map_get() - the value of key @key in mapping @map into *@out (NULL when absent). */
int gs__yaml_map_get(struct gs__yctx *c, yaml_node_t *map, const char *key, yaml_node_t **out);

/* gs__yaml_earlier() - an item of sequence @seq before its item @idx with the same text: the
 * scalar itself, or with @key the scalar under @key of a mapping. Return: that item; NULL none. */
yaml_node_t *gs__yaml_earlier(struct gs__yctx *c, yaml_node_t *seq, int idx, const char *key);

/* gs__yaml_parse_int() - a decimal integer, saturated to the long long range; false if not one
 * (@s NULL included). */
bool gs__yaml_parse_int(const char *s, long long *v);

/*
 * gs__fopen_read() - @path opened for reading as fopen(@path, "rb") does, but a FIFO without a
 * writer gives an empty stream at once instead of blocking the caller until one comes.
 * Return: the stream (the caller fcloses it); NULL with errno set.
 */
FILE *gs__fopen_read(const char *path);

/*
 * gs__yaml_read() - all of @path into a malloc'd *@out (NUL-terminated, the NUL not counted in
 * *@len), refusing more than @max bytes ("-" reads standard input when @allow_stdin). @what ends
 * the too-large message ("not a scheduler configuration").
 * Return: 0; -ENOENT; -EIO; -EINVAL (too large, or a directory); -ENOMEM; with @d set.
 */
int gs__yaml_read(const char *path, bool allow_stdin, size_t max, const char *what,
                  unsigned char **out, size_t *len, struct gs_diag *d);

/*
 * gs__yaml_check_syntax() - the event pass: a syntax error or nesting deeper than @max_depth is
 * an error naming the place (mapped through @proto's offsets). Return: 0; -EINVAL; -ENOMEM.
 */
int gs__yaml_check_syntax(const struct gs__yctx *proto, const unsigned char *buf, size_t len,
                          int max_depth);

/*
 * gs__yaml_each_document() - load each document of @buf in turn and pass its root (never NULL) to
 * @fn with a context copied from @proto, its document and budget set. Stops at the first error.
 * Return: 0; -EINVAL with a YAML error; -ENOMEM; or @fn's non-zero return.
 */
int gs__yaml_each_document(const struct gs__yctx *proto, const unsigned char *buf, size_t len,
                           gs__yaml_doc_fn fn, void *arg);

/*
 * gs__yaml_stream_documents() - one pass over @buf: build each document's tree from the parser's
 * events (libyaml's document API), refusing nesting deeper than @max_depth and documents of more
 * than @max_nodes nodes, and pass each root to @fn as gs__yaml_each_document() does. Memory
 * follows the largest document, and the bytes are parsed once, not twice.
 * Return: 0; -EINVAL with a YAML error or past a limit; -ENOMEM; or @fn's non-zero return.
 */
int gs__yaml_stream_documents(const struct gs__yctx *proto, const unsigned char *buf, size_t len,
                              int max_depth, size_t max_nodes, gs__yaml_doc_fn fn, void *arg);

/*
 * gs__yaml_json_document() - JSON value @v (borrowed) as the document libyaml would build from
 * its compact text (jansson's json_dumps()): strings double-quoted, numbers, booleans and null
 * plain, in the same order, without writing or scanning that text; its root to @fn as
 * gs__yaml_stream_documents() passes one, with the same bounds (@max_depth, @max_nodes). Nodes
 * carry no position (marks 0).
 * Return: 0; -EINVAL past a bound; -ENOMEM; or @fn's non-zero return.
 */
int gs__yaml_json_document(const struct gs__yctx *proto, const json_t *v, int max_depth,
                           size_t max_nodes, gs__yaml_doc_fn fn, void *arg);

/*
 * gs__json_real_text() - JSON number @v as its shortest text that reads back as the same double,
 * as Go's encoding/json writes one (strconv 'g', precision -1: what kubectl sends and an API
 * server's Quantity reads): 0.1, not jansson's 17-digit 0.10000000000000001, which is 101m of a
 * cpu. @buf: @size bytes (32 holds any double).
 */
void gs__json_real_text(double v, char *buf, size_t size);

/*
 * gs__yaml_json() - node @n of @doc as JSON, as kubectl reads a manifest: plain numbers (1.5 a
 * JSON real, so a string field refuses it as Kubernetes does), true/false and null typed, every
 * other scalar a string; depth-bounded (32), so an aliased cycle stops. Return: a new reference;
 * NULL on a bad shape (a non-scalar key) or out of memory.
 */
json_t *gs__yaml_json(yaml_document_t *doc, yaml_node_t *n, int depth);

#define GS__YAML_MANIFEST_DEPTH 32 /* gs__yaml_json()'s own bound */

/*
 * gs__yaml_manifest() - node @root of @c->doc (a Pod, a PodGroup: a manifest a user pastes) as
 * gs__yaml_json() makes it, after refusing what kubectl would read otherwise or Kubernetes
 * refuses, so nothing is silently dropped or changed: a key given twice in one mapping (the API
 * server's strict decoding refuses it), a NUL inside a string, a plain scalar YAML 1.1 types
 * otherwise (yes/no/on/off, 010, 0x10, 1_000), a float JSON cannot carry (.inf, .nan, 1e999),
 * nesting deeper than GS__YAML_MANIFEST_DEPTH, and
 * aliases that expand past *@left (each node costs 2 plus its scalar's bytes, each key its bytes:
 * give about twice the text's bytes, so a "billion laughs" cannot grow without end).
 * Return: 0 and *@out (a new reference); -EINVAL with @c->d at "path:LINE:COL"; -ENOMEM.
 */
int gs__yaml_manifest(struct gs__yctx *c, yaml_node_t *root, size_t *left, json_t **out);

/* gs__yaml_manifest_check() - gs__yaml_manifest()'s refusals but a key given twice (its reader
 * names those with their field), making nothing: for a
 * document read in place, as kubectl would read it. Return: 0; -EINVAL with @c->d; -ENOMEM. */
int gs__yaml_manifest_check(struct gs__yctx *c, yaml_node_t *root, size_t *left);

#endif
