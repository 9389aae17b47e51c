/*
 * gpuschedd: a request body sent as YAML (Content-Type: application/yaml, as kubectl users paste
 * manifests) turned into the JSON text every route reads, on the HTTP event thread before the
 * request is queued. The body cap has already held the YAML bytes; here the work is bounded too:
 * one document, nesting at most YAML_BODY_DEPTH deep, and aliases followed within a budget of
 * about twice the body's bytes, so a body cannot expand without end ("billion laughs").
 */
#include "api.h"
#include "server.h"

#include "../config/scenario_impl.h"
#include "../config/yamlutil.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define YAML_BODY_DEPTH 32 /* gs__yaml_json()'s own bound */

struct yaml_body {
    json_t *obj; /* the one document, as JSON */
    int docs;
    size_t left; /* what the walk may still spend: about twice the body's bytes */
};

/* Walk @n's tree against *@left (each node costs 2 plus its scalar's bytes, each key its bytes;
 * aliases followed, so the budget bounds the JSON made), refusing a key given twice in one mapping
 * as JSON bodies are refused (Kubernetes' strict decoding does too). Return: 0; -EINVAL with @c->d
 * set; -ENOMEM. */
static int walk(struct gs__yctx *c, yaml_node_t *n, int depth, size_t *left)
{
    size_t cost = 2 + (n && n->type == YAML_SCALAR_NODE ? n->data.scalar.length : 0);
    if (!n || depth > YAML_BODY_DEPTH || *left < cost)
        return gs__yaml_err(c, n,
                            "more than %d levels deep, or aliases that repeat more than the body "
                            "holds",
                            YAML_BODY_DEPTH);
    *left -= cost;
    int rc = 0;
    if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *i = n->data.sequence.items.start;
             !rc && i < n->data.sequence.items.top; i++)
            rc = walk(c, yaml_document_get_node(c->doc, *i), depth + 1, left);
    } else if (n->type == YAML_MAPPING_NODE) {
        json_t *seen = json_object();
        for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
             !rc && p < n->data.mapping.pairs.top; p++) {
            yaml_node_t *kn = yaml_document_get_node(c->doc, p->key);
            const char *k = gs__yaml_str(kn);
            if (!seen)
                rc = -ENOMEM;
            else if (!k)
                rc = gs__yaml_err(c, kn, "a mapping key must be a scalar");
            else if (json_object_get(seen, k))
                rc = gs__yaml_err(c, kn, "key \"%.64s\" given twice in one mapping", k);
            else if (*left < kn->data.scalar.length)
                rc = gs__yaml_err(c, kn, "aliases that repeat more than the body holds");
            else if (json_object_set_new(seen, k, json_null()))
                rc = -ENOMEM;
            else {
                *left -= kn->data.scalar.length;
                rc = walk(c, yaml_document_get_node(c->doc, p->value), depth + 1, left);
            }
        }
        json_decref(seen);
    }
    return rc;
}

static int one_doc(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct yaml_body *b = arg;
    if (b->docs++)
        return gs__yaml_err(c, root,
                            "one object per request, not several YAML documents (gpusched "
                            "submit posts each of a file's)");
    int rc = walk(c, root, 0, &b->left);
    if (!rc && !(b->obj = gs__yaml_json(c->doc, root, 0)))
        rc = -ENOMEM;
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
