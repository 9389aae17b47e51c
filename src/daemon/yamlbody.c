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
    size_t left; /* what the walk may still spend: about twice the body's bytes */
};

static int one_doc(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct yaml_body *b = arg;
    if (b->docs++)
        return gs__yaml_err(c, root,
                            "one object per request, not several YAML documents (gpusched "
                            "submit posts each of a file's)");
    return gs__yaml_manifest(c, root, &b->left, &b->obj);
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
            gsd_reply_error(r, 400, "", "%s", d.msg);
        return -1;
    }
    free(r->body);
    r->body = text;
    r->len = strlen(text);
    return 0;
}
