/*
 * Kubernetes Pod objects as gpuschedd takes them, through the one Pod parser (gs_pod_parse()).
 */
#ifndef GSD_PODSPEC_H
#define GSD_PODSPEC_H

#include "config.h"

#include "gpusched/diag.h"
#include "gpusched/policy.h"

#include <jansson.h>

#define GSD_UID_MAX 64 /* metadata.uid, with the NUL */
#define GSD_MIG_MAX 16 /* a MIG profile name, "1g.10gb+me", with the NUL */

struct gsd_podspec {
    char ns[GSD_NAME_MAX], name[GSD_OBJ_MAX], uid[GSD_UID_MAX];
    json_t *labels, *annotations; /* objects of strings, owned (never NULL after a parse) */
    char *body;           /* the Pod object as received, compact JSON (owned): what the store
                             keeps and a restart parses again */
    struct gs_pod_spec s; /* what the scheduler reads, as gs_pod_parse() made it */
};

/* A field error: an HTTP status, the message and the JSON path of the field; and, for a pod that
 * parsed, the first warning it gave (what it asks that is taken without effect), "" none. */
struct gsd_ferr {
    int status;
    char field[128];
    char msg[GS_DIAG_MSG_MAX];
    char warning[GS_DIAG_MSG_MAX];
    int stored; /* set by the caller: an object read back from the store, which a cap added since
                 * it was accepted keeps (saying so in warning) rather than refuses */
};

/* gsd_ferr_warning() - a gs_diag warn callback: the first warning a read gives (what it takes
 * without effect), its "body:L:C: " dropped, into the struct gsd_ferr @ud's warning. */
void gsd_ferr_warning(void *ud, const char *msg);

/*
 * gsd_podspec_parse() - read the Kubernetes Pod object of JSON text @text (@len bytes) into
 * @out: the scheduler's view through the one Pod parser (gs_pod_parse(), the simulator's own:
 * resources, GPU models, PodGroup, queue, PriorityClass, annotations), and what the API keeps
 * besides: the uid, the labels and annotations as given. Names are held to
 * Kubernetes' rules (a namespace a DNS label, a name a DNS subdomain, at most 63 bytes). What
 * the daemon would not honour is refused, never accepted and ignored: a field or resource the
 * parser does not interpret (a warning in a scenario file is a 400 here), and the simulator's
 * own annotations sim.gpusched.io/arrival and sim.gpusched.io/gpu-util (a walltime,
 * sim.gpusched.io/duration, is kept: backfill reads it). A namespace the Pod does not give is
 * left "" (the caller picks one and calls gsd_podspec_set_ns()). @strict 1: a Pod to create
 * (POST /v1/pods), held to gsd_create_fields_ok() too. @strict 0 takes what the parser only
 * warns about, and the metadata an API server wrote (a Pod kube-scheduler places, which honours
 * those fields itself).
 * Return: 0; -EINVAL with @e (400 and the field); -ENOMEM with @e (500).
 */
int gsd_podspec_parse(const char *text, size_t len, int strict, struct gsd_podspec *out,
                      struct gsd_ferr *e);

/*
 * gsd_field_msg() - a parser's message @msg ("body:LINE:COL: WHAT ...", whose place the JSON
 * value does not have) as @e's, led by @e->field once: a tail of the field @msg begins with
 * ("requests.cpu", "minResources") is taken as the field, else the field and ": " come first.
 */
void gsd_field_msg(struct gsd_ferr *e, const char *msg);

/*
 * gsd_typed_string() - member @key of object @o (borrowed), a string field of the object at
 * @where ("metadata.", "spec."): a JSON number or boolean there is refused as Kubernetes' API
 * server refuses it ("cannot unmarshal number into Go struct field ... of type string"), not
 * read as its text. Return: 0 (absent, null, a string, or any other shape: the field's own
 * check follows); -EINVAL with @e (400 naming WHERE+KEY).
 */
int gsd_typed_string(const json_t *o, const char *key, const char *where, struct gsd_ferr *e);

/*
 * gsd_create_fields_ok() - may @obj (a Pod or PodGroup object, borrowed) be created as given? An
 * API server sets metadata.uid, resourceVersion, generation, creationTimestamp,
 * deletionTimestamp, deletionGracePeriodSeconds, managedFields and selfLink itself, and status
 * is its to write; ownerReferences and finalizers are for controllers gpuschedd does not run.
 * Return: 0 when @obj gives none of them; -EINVAL with @e (400 naming the first one).
 */
int gsd_create_fields_ok(const json_t *obj, struct gsd_ferr *e);

/*
 * gsd_string_map() - @v (borrowed; NULL or null: none), the object of strings that metadata
 * @field ("metadata.labels", "metadata.annotations") must be, at most 256 keys, each a label key
 * (an annotation's once lowercased) and each label's value a label value, annotations' keys and
 * values at most GS_ANNOTATIONS_MAX_BYTES together, copied into *@out
 * (owned by the caller; an empty object when none). Return: 0; -EINVAL with @e (400 naming the
 * field); -ENOMEM.
 */
int gsd_string_map(const json_t *v, const char *field, json_t **out, struct gsd_ferr *e);

/* A Pod body parsed ahead of its turn, off the scheduler thread (gsd_podparse_new()). */
struct gsd_podparse {
    int rc;                  /* gsd_podspec_parse()'s return */
    struct gsd_podspec spec; /* when rc is 0 */
    struct gsd_ferr e;       /* when rc is not */
};

/*
 * gsd_podparse_new() - gsd_podspec_parse() of @text (@len bytes, strict) into a new record, so
 * that an HTTP event thread does the work the scheduler thread would otherwise do first: the
 * parse reads nothing but the text. Return: the record (owned; gsd_podparse_free()); NULL when
 * out of memory (the scheduler thread then parses the body itself).
 */
struct gsd_podparse *gsd_podparse_new(const char *text, size_t len);
/* gsd_podparse_free() - free @pp and what its spec still owns (NULL is fine). */
void gsd_podparse_free(struct gsd_podparse *pp);

/* gsd_podspec_set_ns() - the pod's namespace is @ns: in its names, its spec and its body.
 * Return: 0; -ENOMEM. */
int gsd_podspec_set_ns(struct gsd_podspec *p, const char *ns);

/* gsd_podspec_clear() - free what @p owns; the struct may be parsed into again. */
void gsd_podspec_clear(struct gsd_podspec *p);

/* gsd_name_ok() - a DNS-1123 label: 1..63 of [a-z0-9-], alphanumeric at both ends. */
int gsd_name_ok(const char *s);
/* gsd_subdomain_ok() - a DNS-1123 subdomain of at most 253 bytes (GSD_OBJ_MAX with the NUL):
 * labels joined by dots, as Kubernetes holds a Pod's or a PodGroup's name. */
int gsd_subdomain_ok(const char *s);

#endif
