/*
 * gpuschedd: a request body sent as YAML (Content-Type: application/yaml, as kubectl users paste
 * manifests) turned into the JSON text every route reads, on the HTTP event thread before the
 * request is queued. The body cap has already held the YAML bytes; here the work is bounded too:
 * one document, read by gs__yaml_manifest() (the rule `gpusched submit` follows for a file), with
 * aliases followed within a budget of about twice the body's bytes.
 */
#include "api.h"
#include "server.h"

#include "../config/scenario_impl.h"
#include "../config/yamlutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct yaml_body {
    json_t *obj; /* the one document, as JSON */
    int docs;
    size_t left;     /* what the walk may still spend: about twice the body's bytes */
    char field[192]; /* the field a refusal names, "" for the body as a whole */
};

static int one_doc(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct yaml_body *b = arg;
    if (b->docs++)
        return gs__yaml_err(c, root,
                            "one object per request, not several YAML documents (gpusched "
                            "submit posts each of a file's)");
    if (root->type != YAML_MAPPING_NODE) /* as JSON it would be told "not JSON" */
        return gs__yaml_err(c, root,
                            "expected an object (a YAML mapping, as a manifest is), not %s",
                            root->type == YAML_SCALAR_NODE ? "a scalar" : "a sequence");
    int rc = gs__yaml_manifest(c, root, &b->left, &b->obj);
    if (rc == -EINVAL && c->err_at)
        gs__yaml_path(c, c->err_at, b->field, sizeof(b->field));
    return rc;
}

int gsd_body_is_yaml(const char *ctype)
{
    static const char *const types[] = {"application/yaml", "application/x-yaml", "text/yaml"};
    size_t n = ctype ? strcspn(ctype, "; \t") : 0;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (n == strlen(types[i]) && !strncasecmp(ctype, types[i], n))
            return 1;
    return 0;
}

/* The value of parameter @name (lower case) in Content-Type @ctype's parameters, into @out. */
static int ctype_param(const char *ctype, const char *name, char *out, size_t size)
{
    size_t len = strlen(name);
    for (const char *p = strchr(ctype, ';'); p; p = strchr(p + 1, ';')) {
        const char *k = p + 1 + strspn(p + 1, " \t");
        if (strncasecmp(k, name, len) || k[len] != '=')
            continue;
        const char *v = k + len + 1;
        v += *v == '"';
        size_t n = strcspn(v, "\"; \t");
        snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), v);
        return 1;
    }
    return 0;
}

const char *gsd_body_type_refused(const char *ctype, const char *cenc, const char **header,
                                  char *why, size_t size)
{
    char charset[32];
    size_t n = ctype ? strcspn(ctype, "; \t") : 0;
    if (cenc && strcasecmp(cenc, "identity")) {
        *header = "Content-Encoding";
        snprintf(why, size,
                 "Content-Encoding %.40s: gpuschedd reads a body as it is sent; send it "
                 "unencoded",
                 cenc);
    } else if (n && !(n == 16 && !strncasecmp(ctype, "application/json", n)) &&
               !gsd_body_is_yaml(ctype)) {
        *header = "Content-Type";
        snprintf(why, size,
                 "Content-Type %.*s: a body is application/json or application/yaml "
                 "(also application/x-yaml, text/yaml)",
                 (int)(n < 64 ? n : 64), ctype);
    } else if (n && ctype_param(ctype, "charset", charset, sizeof(charset)) &&
               strcasecmp(charset, "utf-8") && strcasecmp(charset, "utf8")) {
        *header = "Content-Type";
        snprintf(why, size, "Content-Type charset %s: a body is UTF-8", charset);
    } else {
        return NULL;
    }
    return why;
}

int gsd_body_from_yaml(struct gsd_req *r)
{
    struct gs_diag d;
    struct yaml_body b = {.left = 2 * r->len + 4096};
    struct gs__yctx proto = {.path = "body", .d = &d, .quiet = true};
    gs_diag_init(&d);
    int rc = gs__yaml_stream_documents(&proto, (const unsigned char *)(r->body ? r->body : ""),
                                       r->len, GS_SCN_MAX_DEPTH, GS_SCN_DOC_NODES_MAX, one_doc, &b);
    char *text = NULL;
    if (!rc && !b.obj)
        rc = gs_diag_error(&d, "body: no YAML document in it");
    if (!rc && !(text = json_dumps(b.obj, JSON_COMPACT | JSON_ENCODE_ANY)))
        rc = -ENOMEM;
    json_decref(b.obj);
    if (rc) {
        if (rc == -ENOMEM)
            gsd_reply_error(r, 500, "", "out of memory");
        else
            gsd_reply_error(r, 400, b.field, "%s", d.msg);
        return -1;
    }
    free(r->body);
    r->body = text;
    r->len = strlen(text);
    return 0;
}
