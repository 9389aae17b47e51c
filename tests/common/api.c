/* The integration tests' checked API calls; see api.h. */
#include "api.h"
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void h_expect(const struct daemon *d, const char *method, const char *path, const char *token,
              const char *body, long status, struct answer *a)
{
    if (h_call(d, method, path, token, body, a) != 0)
        fail_msg("%s %s: no answer", method, path);
    if (a->status != status)
        fail_msg("%s %s: %ld, expected %ld: %s", method, path, a->status, status,
                 a->body ? a->body : "");
}

void h_request(const struct daemon *d, const char *method, const char *path, const char *token,
               const char *body, long status)
{
    struct answer a;
    h_expect(d, method, path, token, body, status, &a);
    h_answer_free(&a);
}

const char *h_token_of(const char *ns)
{
    return strcmp(ns, "team-a") ? TOKEN_B : TOKEN_A;
}

void h_podgroup(const struct daemon *d, const char *ns, const char *name, int min, long status)
{
    char body[512]; /* a 253-byte name and a 63-byte namespace fit */
    snprintf(body, sizeof(body),
             "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\"},"
             "\"spec\":{\"minMember\":%d}}",
             name, ns, min);
    h_request(d, "POST", "/v1/podgroups", h_token_of(ns), body, status);
}

json_t *h_submit(const struct daemon *d, const char *token, char *body, long status)
{
    if (!token) {
        json_t *pod = json_loads(body, 0, NULL);
        const char *ns =
            json_string_value(json_object_get(json_object_get(pod, "metadata"), "namespace"));
        token = h_token_of(ns ? ns : "");
        json_decref(pod);
    }
    struct answer a;
    h_expect(d, "POST", "/v1/pods", token, body, status, &a);
    free(body);
    json_t *j = json_incref(a.json);
    h_answer_free(&a);
    return j;
}

json_t *h_pod_json(const char *ns, const char *name, int gpus, int cores)
{
    char *s = h_pod(ns, name, gpus, cores);
    json_t *p = json_loads(s, 0, NULL);
    free(s);
    return p;
}

void h_annotate(json_t *pod, const char *key, const char *value)
{
    json_t *md = json_object_get(pod, "metadata"), *an = json_object_get(md, "annotations");
    if (!an)
        json_object_set_new(md, "annotations", an = json_object());
    json_object_set_new(an, key, json_string(value));
}

json_t *h_pod_get(const struct daemon *d, const char *ns, const char *name)
{
    struct answer a;
    char path[128];
    snprintf(path, sizeof(path), "/v1/pods/%s/%s", ns, name);
    h_expect(d, "GET", path, TOKEN_ADMIN, NULL, 200, &a);
    json_t *j = json_incref(a.json);
    h_answer_free(&a);
    return j;
}

json_t *h_continued(const char *path, const char *json)
{
    const char *argv[] = {getenv("GPUSCHED_BIN"),
                          "simulate",
                          "--scenario",
                          path,
                          "--from-now",
                          "--horizon",
                          "1h",
                          "--json",
                          json,
                          "--quiet",
                          NULL};
    struct t_run r;
    t_run(argv, &r);
    if (r.status != 0)
        fail_msg("simulate --from-now: exit %d: %s", r.status, r.err);
    t_run_free(&r);
    return json_load_file(json, 0, NULL);
}
