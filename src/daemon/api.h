/*
 * The HTTP API's routes and answers.
 */
#ifndef GSD_API_H
#define GSD_API_H

#include <jansson.h>
#include <stdint.h>

struct gsd_pod;
struct gsd_req;
struct gsd_state;

#define GSD_LIST_MAX 5000 /* pods in one list answer */

/* Answers (api.c). */
void gsd_reply_json(struct gsd_req *r, int status, json_t *body);
void gsd_reply_error(struct gsd_req *r, int status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/*
 * gsd_reply_405() - answer @r 405 with the methods its route takes: @allow ("GET, DELETE", as the
 * Allow header RFC 9110 15.5.6 asks of a 405 writes them; static) and @more (NULL: none), words
 * after them in the message.
 */
void gsd_reply_405(struct gsd_req *r, const char *allow, const char *more);
/* gsd_reply_warning() - answer @r with a Warning header (RFC 9110's 299 code, as the Kubernetes
 * API server gives one) of @text ("" none; the first only), non-printable bytes as '?'. */
void gsd_reply_warning(struct gsd_req *r, const char *text);
/*
 * gsd_reply_pod() - answer @r @status with pod @p as GET /v1/pods/NS/NAME shows it now: its
 * view is copied (with what it points to) and rendered as JSON later by gsd_reply_render(), on
 * the HTTP event thread, so the one scheduler thread does not build and print the JSON.
 */
void gsd_reply_pod(struct gsd_state *st, struct gsd_req *r, int status, struct gsd_pod *p);
/* gsd_reply_render() - the JSON text of an answer gsd_reply_pod() left as a view; else nothing. */
void gsd_reply_render(struct gsd_req *r);
/*
 * gsd_ns_owned() - whether namespace @ns belongs to a tenant of the config (always, when the config
 * names no tenant); otherwise answers @r 400 on metadata.namespace. Return: 1 owned, 0 answered.
 */
int gsd_ns_owned(struct gsd_state *st, const char *ns, struct gsd_req *r);
/*
 * gsd_ns_unowned() - NULL when namespace @ns belongs to a tenant of the config (or the config names
 * none); else @buf (@cap bytes, the caller's), filled with why a pod there is refused.
 */
const char *gsd_ns_unowned(const struct gsd_state *st, const char *ns, char *buf, size_t cap);
/*
 * gsd_api_prepare() - the work of @r that reads no state, done by the HTTP event thread before
 * @r is queued, so that the one scheduler thread does less per request: a POST /v1/pods body is
 * parsed into @r->pod (left NULL when out of memory: the scheduler thread parses it then).
 */
void gsd_api_prepare(struct gsd_req *r);
/* gsd_api_handle() - route and answer one HTTP request (inside the batch's transaction). */
void gsd_api_handle(struct gsd_state *st, struct gsd_req *r);
const char *gsd_qarg(const struct gsd_req *r, const char *key);

/* What a 404 for a pod says after its name: that an ended pod is not kept, which a Kubernetes
 * user, who sees Succeeded pods listed, would not expect. */
#define GSD_POD_GONE                                                                               \
    "not found (pods are held while pending or running: one that ended or was cancelled is "       \
    "forgotten, its use kept in /v1/bills)"

/* gsd_page_args() - a list's page: ?limit (1..GSD_LIST_MAX, 500 unless given, digits only:
 * strtoll() would take leading blanks and a sign, as in "?limit=%201") into *@limit and
 * ?continue (a token gsd_page_token() made for @list, 0 unless given) into *@from; else a 400
 * naming the argument is written (a token of another list too), or a 410 for a token of the right
 * form not made under this key (the API server's answer to an expired one). Return: 0; -1. */
enum gsd_page_list { GSD_PAGE_PODS = 1, GSD_PAGE_PODGROUPS = 2 };
int gsd_page_args(struct gsd_req *r, enum gsd_page_list list, int64_t *limit, int64_t *from);

/* The page tokens' key in the data dir (AES-128, drawn once, 0600). */
#define GSD_PAGE_KEY_FILE "page-tokens.key"

/* gsd_page_key() - the page tokens' key from @data_dir's GSD_PAGE_KEY_FILE, drawn and written
 * there when absent, so that a list paged across a restart goes on; before the HTTP threads
 * start. Unreadable or unwritable: logged, and a key drawn at first use (tokens last the run). */
void gsd_page_key(const char *data_dir);

/* The room a page token takes, its NUL included. */
#define GSD_PAGE_TOKEN_MAX 33

/* gsd_page_token() - the ?continue token of position @seq (>= 0) of @list into @out: opaque, 32
 * hex digits, AES-128 under gsd_page_key()'s random key, so that a tenant paging its own objects
 * learns nothing of how many others' were made between them. Thread-safe. */
void gsd_page_token(int64_t seq, enum gsd_page_list list, char out[GSD_PAGE_TOKEN_MAX]);

/* gsd_args_known() - whether every query argument of @r is one of @known (NULL-terminated),
 * each given once; else a 400 naming the first that is not is written: a misspelt filter
 * (?tenat=team-a) would otherwise list everything, ?dryRun=All create the pod, as if honoured,
 * and of ?tenant=a&tenant=b only the first would count. Return: 1; 0. */
int gsd_args_known(struct gsd_req *r, const char *const *known);
/* gsd_args_given() - whether each of @keys (NULL-terminated) that @r gives has a value; else a 400
 * naming the first empty one is written: "?namespace=" would otherwise filter nothing and list
 * everything, as though the filter had been left out. Return: 1; 0. */
int gsd_args_given(struct gsd_req *r, const char *const *keys);
/* gsd_args_fit() - whether @r's path and query arguments were kept whole (server.h's caps);
 * else a 400 naming the argument (or the path) and the cap is written. Return: 1; 0. */
int gsd_args_fit(struct gsd_req *r);
/*
 * gsd_body_json() - @r's body as JSON (RFC 8259), each object's keys once. Return: 0 and *@out
 * (new reference); -1 after answering @r 400 with what is wrong and where: bytes that are not
 * UTF-8 (with their offset), a key given twice (named), or where the syntax breaks.
 */
int gsd_body_json(struct gsd_req *r, json_t **out);
/*
 * gsd_body_is_yaml() - whether Content-Type @ctype (may be NULL; parameters after ';' ignored)
 * names YAML: application/yaml, as kubectl and Kubernetes' API server take it, or
 * application/x-yaml, text/yaml.
 */
int gsd_body_is_yaml(const char *ctype);
/*
 * gsd_body_type_refused() - why a request body declared as Content-Type @ctype and
 * Content-Encoding @cenc (each may be NULL: absent) cannot be read, as Kubernetes' API server
 * answers 415 Unsupported Media Type: a type that is neither JSON (application/json, the default
 * when none is given) nor YAML (gsd_body_is_yaml()), a charset other than UTF-8, an encoding
 * other than identity (gpuschedd reads bodies as sent). Return: NULL readable; else the words,
 * *@header set to the header at fault, @why (@size bytes) holding them.
 */
const char *gsd_body_type_refused(const char *ctype, const char *cenc, const char **header,
                                  char *why, size_t size);
/*
 * gsd_body_from_yaml() - replace @r's body, one YAML document (Kubernetes' YAML as kubectl reads
 * it: plain numbers and booleans typed, every other scalar a string), with its compact JSON text,
 * so every route reads it as a JSON body (yamlbody.c). Bounded: nesting, aliases followed within
 * about twice the body's bytes. Return: 0; -1 after answering @r 400 with "body:LINE:COL: ..."
 * (a YAML error, several documents, a key given twice, past a bound), or 500 out of memory.
 */
int gsd_body_from_yaml(struct gsd_req *r);
/*
 * gsd_json_error() - @e (from jansson, parsing @what) as one message into @buf: the same words
 * gsd_body_json() answers with. Return: @buf.
 */
const char *gsd_json_error(const json_error_t *e, const char *what, char *buf, size_t size);

#endif
