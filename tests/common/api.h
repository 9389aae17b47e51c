/*
 * The integration tests' calls of gpuschedd's API that must succeed: each fails the running test
 * (cmocka's fail_msg, naming the request, the status and the body) when the answer is not the one
 * expected. Over the harness of harness.h.
 */
#ifndef GS_TEST_API_H
#define GS_TEST_API_H

#include "harness.h"

/* h_expect() - one request as h_call(), answered with @status. @a: the answer (free it). */
void h_expect(const struct daemon *d, const char *method, const char *path, const char *token,
              const char *body, long status, struct answer *a);

/* h_request() - h_expect(), the answer dropped. */
void h_request(const struct daemon *d, const char *method, const char *path, const char *token,
               const char *body, long status);

/*
 * h_submit() - POST the Pod @body (consumed) to /v1/pods with @token (NULL: the token of the
 * tenant owning its namespace, h_token_of()), answered with @status.
 * Return: the answer's JSON (new reference; NULL when it has none).
 */
json_t *h_submit(const struct daemon *d, const char *token, char *body, long status);

/* h_podgroup() - POST the PodGroup @ns/@name with spec.minMember @min and nothing else to
 * /v1/podgroups with the token of @ns's tenant (h_token_of()), answered with @status. */
void h_podgroup(const struct daemon *d, const char *ns, const char *name, int min, long status);

/* h_token_of() - the token of the tenant owning namespace @ns: team-a's, else team-b's. */
const char *h_token_of(const char *ns);

/* h_pod_json() - h_pod() as a JSON tree (new reference). */
json_t *h_pod_json(const char *ns, const char *name, int gpus, int cores);

/* h_annotate() - set annotation @key: @value on Pod tree @pod. */
void h_annotate(json_t *pod, const char *key, const char *value);

/* h_pod_get() - GET /v1/pods/@ns/@name with the admin token, answered 200: its JSON (new
 * reference). */
json_t *h_pod_get(const struct daemon *d, const char *ns, const char *name);

/* h_continued() - `gpusched simulate --scenario @path --from-now --horizon 1h`, its --json
 * written to @json: that JSON (new reference; NULL when unreadable). Fails the test when the run
 * does not exit 0. */
json_t *h_continued(const char *path, const char *json);

#endif
