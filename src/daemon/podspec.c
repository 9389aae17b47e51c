/*
 * gpuschedd: a Kubernetes Pod object to a gpusched request.
 *
 * GPU requests follow the HAMi convention the scenario files use: nvidia.com/gpu cards, each with
 * nvidia.com/gpumem MiB and nvidia.com/gpucores percent of one card when shared. A share is
 * gpucores x 10 milli-GPU; a share given only as memory is that memory's part of the smallest
 * card in the cluster, rounded up, so it fits wherever it is put.
 *
 * A pod asks what Kubernetes counts for it (its effective request): the app containers' requests
 * added up, with the restartable init containers (sidecars) that run beside them, or an init
 * container's own request with the sidecars started before it, whichever is larger - for cards,
 * CPU and memory alike, which is also how many devices kubelet's device manager hands the pod's
 * containers (an init container's devices go on to the app containers). The engine places one
 * set of cards per pod, so a pod has one kind of GPU: whole cards, one share (every container that
 * asks a share asks the same one; a share is of one card) or one MIG instance.
 */
#include "podspec.h"

#include "../config/scenario_impl.h" /* gs__qty_parse(): Kubernetes quantities */

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/mig.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONTAINERS_MAX 64
#define KV_MAX         256 /* labels, and annotations, per pod */
#define QTY_MAX        (1LL << 40)

static int ferr(struct gsd_ferr *e, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int ferr(struct gsd_ferr *e, const char *field, const char *fmt, ...)
{
    va_list ap;
    e->status = 400;
    snprintf(e->field, sizeof(e->field), "%s", field);
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return -EINVAL;
}

int gsd_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 63 || s[0] == '-' || s[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return 0;
    return 1;
}

/* A pod name: a DNS subdomain of at most 63 bytes (dots allowed between labels). */
int gsd_subdomain_ok(const char *s)
{
    char buf[GSD_NAME_MAX];
    size_t n = strlen(s);
    if (n < 1 || n >= sizeof(buf))
        return 0;
    memcpy(buf, s, n + 1);
    for (char *save, *lab = strtok_r(buf, ".", &save); lab; lab = strtok_r(NULL, ".", &save))
        if (!gsd_name_ok(lab))
            return 0;
    return s[0] != '.' && s[n - 1] != '.' && !strstr(s, "..");
}

/* "1.25" -> 1250 (value x 1000, at most three decimals); also accepts a plain integer. */
static int parse_milli(const char *s, int64_t *out)
{
    int64_t whole = 0, frac = 0, scale = 1000;
    const char *p = s;
    if (!isdigit((unsigned char)*p))
        return -EINVAL;
    for (; isdigit((unsigned char)*p); p++)
        if ((whole = whole * 10 + (*p - '0')) > QTY_MAX)
            return -EINVAL;
    if (*p == '.') {
        if (!isdigit((unsigned char)p[1]))
            return -EINVAL;
        for (p++; isdigit((unsigned char)*p); p++) {
            if (scale == 1 && *p != '0')
                return -EINVAL; /* finer than a milli */
            if (scale > 1)
                frac += (*p - '0') * (scale /= 10);
        }
    }
    *out = whole * 1000 + frac;
    return *p ? -EINVAL : 0;
}

int gsd_parse_cpu(const char *s, int64_t *milli)
{
    size_t n = strlen(s);
    int64_t v;
    if (n > 1 && s[n - 1] == 'm') { /* "500m": whole milli-cores */
        char buf[32];
        if (n >= sizeof(buf) || strchr(s, '.'))
            return -EINVAL;
        memcpy(buf, s, n - 1);
        buf[n - 1] = '\0';
        if (parse_milli(buf, &v))
            return -EINVAL;
        *milli = v / 1000;
        return 0;
    }
    if (parse_milli(s, &v))
        return -EINVAL;
    *milli = v;
    return 0;
}

int gsd_parse_memory(const char *s, int64_t *mib)
{
    static const struct {
        const char *suf;
        int64_t bytes; /* per unit */
    } units[] = {{"Ki", 1LL << 10}, {"Mi", 1LL << 20}, {"Gi", 1LL << 30},   {"Ti", 1LL << 40},
                 {"k", 1000LL},     {"M", 1000000LL},  {"G", 1000000000LL}, {"T", 1000000000000LL}};
    const int64_t unit = 1000LL << 20; /* one MiB, in the thousandths parse_milli() gives */
    char buf[32];
    size_t n = strlen(s);
    int64_t per = 1, v;
    if (n == 0 || n >= sizeof(buf))
        return -EINVAL;
    memcpy(buf, s, n + 1);
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t k = strlen(units[i].suf);
        if (n > k && strcmp(buf + n - k, units[i].suf) == 0) {
            per = units[i].bytes;
            buf[n - k] = '\0';
            break;
        }
    }
    if (parse_milli(buf, &v)) /* v = amount x 1000 */
        return -EINVAL;
    /* Past 8 PiB the product overflows: no pod asks for that, so it is refused. */
    if ((v > 0 && per > INT64_MAX / v) || v * per > INT64_MAX - unit)
        return -EINVAL;
    int64_t r = (v * per + unit - 1) / unit;
    if (r > QTY_MAX)
        return -EINVAL;
    *mib = r;
    return 0;
}

/* A quantity as a JSON string or integer, into the text form the parsers read. */
static int qty_text(const json_t *v, char *buf, size_t cap)
{
    if (json_is_string(v) && json_string_length(v) < cap) {
        memcpy(buf, json_string_value(v), json_string_length(v) + 1);
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
        return 0;
    }
    return -EINVAL;
}

/* An object of string values (labels, annotations), copied; absent gives an empty object. */
static int string_map(const json_t *v, const char *field, json_t **out, struct gsd_ferr *e)
{
    if (!v || json_is_null(v)) {
        *out = json_object();
        return *out ? 0 : -ENOMEM;
    }
    if (!json_is_object(v))
        return ferr(e, field, "%s: expected an object of strings", field);
    if (json_object_size(v) > KV_MAX)
        return ferr(e, field, "%s: more than %d entries", field, KV_MAX);
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x)
    {
        if (!json_is_string(x))
            return ferr(e, field, "%s.%s: expected a string", field, k);
        if (!*k || strlen(k) > 316) /* Kubernetes: 253-byte prefix, '/', 63-byte name */
            return ferr(e, field, "%s: a key is empty or longer than 316 bytes", field);
    }
    *out = json_deep_copy(v);
    return *out ? 0 : -ENOMEM;
}

static int parse_metadata(const json_t *md, struct gsd_podspec *out, struct gsd_ferr *e)
{
    if (!json_is_object(md))
        return ferr(e, "metadata", "metadata: expected an object");
    const json_t *name = json_object_get(md, "name"), *ns = json_object_get(md, "namespace");
    const json_t *uid = json_object_get(md, "uid");
    if (!json_is_string(name) || !gsd_subdomain_ok(json_string_value(name)))
        return ferr(e, "metadata.name",
                    "metadata.name: expected a DNS name of at most 63 bytes (a-z, 0-9, '-', '.')");
    memcpy(out->name, json_string_value(name), strlen(json_string_value(name)) + 1);
    if (ns && !json_is_null(ns)) {
        if (!json_is_string(ns) || !gsd_name_ok(json_string_value(ns)))
            return ferr(e, "metadata.namespace",
                        "metadata.namespace: expected a DNS label (a-z, 0-9, '-', 1..63)");
        memcpy(out->ns, json_string_value(ns), strlen(json_string_value(ns)) + 1);
    }
    if (uid && !json_is_null(uid)) {
        if (!json_is_string(uid) || json_string_length(uid) >= GSD_UID_MAX)
            return ferr(e, "metadata.uid", "metadata.uid: expected a string of at most 63 bytes");
        memcpy(out->uid, json_string_value(uid), json_string_length(uid) + 1);
    }
    int rc = string_map(json_object_get(md, "labels"), "metadata.labels", &out->labels, e);
    if (!rc)
        rc = string_map(json_object_get(md, "annotations"), "metadata.annotations",
                        &out->annotations, e);
    if (rc)
        return rc;
    const char *model =
        json_string_value(json_object_get(out->annotations, "gpusched.io/gpu-model"));
    if (model) {
        if (strlen(model) >= sizeof(out->models) || gsd_models_mask(model) < 0)
            return ferr(e, "metadata.annotations.gpusched.io/gpu-model",
                        "gpusched.io/gpu-model: \"%.64s\" names a GPU model not in the catalog",
                        model);
        memcpy(out->models, model, strlen(model) + 1);
    }
    const char *queue =
        json_string_value(json_object_get(out->annotations, "scheduling.volcano.sh/queue-name"));
    if (queue && !gsd_subdomain_ok(queue))
        return ferr(e, "metadata.annotations.scheduling.volcano.sh/queue-name",
                    "scheduling.volcano.sh/queue-name: expected a DNS subdomain of 1..63 bytes");
    if (queue)
        memcpy(out->queue, queue, strlen(queue) + 1);
    if (gsd_pod_group(out->labels, out->annotations, out->group))
        return ferr(e, "metadata.annotations.scheduling.k8s.io/group-name",
                    "the PodGroup name (scheduling.k8s.io/group-name or the pod-group label): "
                    "expected 1..%d bytes",
                    GSD_NAME_MAX - 1);
    return 0;
}

int gsd_pod_group(const json_t *labels, const json_t *annotations, char out[GSD_NAME_MAX])
{
    const char *g = json_string_value(json_object_get(annotations, "scheduling.k8s.io/group-name"));
    if (!g)
        g = json_string_value(json_object_get(labels, "scheduling.x-k8s.io/pod-group"));
    if (!g)
        g = json_string_value(json_object_get(labels, "pod-group.scheduling.sigs.k8s.io"));
    out[0] = '\0';
    if (!g)
        return 0;
    if (!*g || strlen(g) >= GSD_NAME_MAX)
        return -EINVAL;
    memcpy(out, g, strlen(g) + 1);
    return 0;
}

int64_t gsd_models_mask(const char *models)
{
    int64_t mask = 0;
    for (const char *p = models; *p;) {
        const char *bar = strchr(p, '|');
        int len = bar ? (int)(bar - p) : (int)strlen(p);
        int m = gs_catalog_find(p, len);
        if (m < 0)
            return -1;
        mask |= 1LL << m;
        p += len + (bar ? 1 : 0);
    }
    return mask;
}

/* What one container asks for; GPU amounts stay -1 when not given. */
struct ask {
    int64_t gpu, gpumem, gpucores, cpu, memory;
    char mig[GSD_MIG_MAX]; /* nvidia.com/mig-<profile>: 1, "" = none */
    char where[40];        /* "spec.containers[2]", "spec.initContainers[0]" */
    int init;              /* 1 an init container, 2 a restartable one (a sidecar) */
};

static int one_quantity(const json_t *v, const char *key, const char *field, struct ask *a,
                        struct gsd_ferr *e)
{
    char buf[48];
    int64_t x;
    if (qty_text(v, buf, sizeof(buf)))
        return ferr(e, field, "%s: expected a quantity (a string or a whole number)", field);
    if (!strcmp(key, "cpu")) {
        if (gsd_parse_cpu(buf, &a->cpu))
            return ferr(e, field, "%s: \"%s\" is not a CPU quantity (\"2\", \"0.5\", \"500m\")",
                        field, buf);
        return 0;
    }
    if (!strcmp(key, "memory")) {
        if (gsd_parse_memory(buf, &a->memory))
            return ferr(e, field, "%s: \"%s\" is not a memory quantity (\"64Gi\", \"512Mi\")",
                        field, buf);
        return 0;
    }
    /* as the API server writes them back: nvidia.com/gpumem 20000 is stored as "20k" */
    const char *why = "";
    int64_t hi = !strcmp(key, "nvidia.com/gpu")        ? GS_GPUS_MAX
                 : !strcmp(key, "nvidia.com/gpucores") ? 100
                                                       : 1 << 24;
    if (gs__qty_parse(buf, 0, 0, 0, &x, &why) || x > hi)
        return ferr(e, field, "%s: \"%s\" is not a whole number in 0..%lld%s%s", field, buf,
                    (long long)hi, *why ? ": it " : "", why);
    if (!strcmp(key, "nvidia.com/gpu"))
        a->gpu = x;
    else if (!strcmp(key, "nvidia.com/gpucores"))
        a->gpucores = x;
    else
        a->gpumem = x;
    return 0;
}

/*
 * known_resource() - whether @key is one of @keys, or a Kubernetes resource the node alone
 * accounts for (ephemeral-storage, hugepages-<size>). Anything else, an extended resource such as
 * nvidia.com/mig-1g.10gb above all, would otherwise be dropped and the pod run without it.
 */
static int known_resource(const char *key, const char *const *keys, int n)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(key, keys[k]))
            return 1;
    return !strcmp(key, "ephemeral-storage") || !strncmp(key, "hugepages-", 10) ||
           !strncmp(key, GS_MIG_RESOURCE_PREFIX, strlen(GS_MIG_RESOURCE_PREFIX));
}

/* The profile of MIG resource @key as NVIDIA names it, from the first model that has it. */
static int mig_profile_of(const char *key, char out[GSD_MIG_MAX])
{
    for (int m = 0; m < gs_mig_model_count(); m++) {
        int k = gs_mig_resource_parse(m, key, NULL);
        if (k >= 0) {
            snprintf(out, GSD_MIG_MAX, "%s", gs_mig_model_at(m)->profiles[k].name);
            return 0;
        }
    }
    return -ENOENT;
}

/* One container's nvidia.com/mig-<profile> limits and requests: one instance of one profile. */
static int container_mig(const json_t *lim, const json_t *req, struct ask *a, struct gsd_ferr *e)
{
    for (int w = 0; w < 2; w++) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)(w ? req : lim), key, v)
        {
            if (strncmp(key, GS_MIG_RESOURCE_PREFIX, strlen(GS_MIG_RESOURCE_PREFIX)))
                continue;
            char field[128], buf[48], prof[GSD_MIG_MAX], *end;
            snprintf(field, sizeof(field), "%s.resources.%s.%.64s", a->where,
                     w ? "requests" : "limits", key);
            if (mig_profile_of(key, prof))
                return ferr(e, field, "%s: no GPU model gpusched knows has that MIG profile",
                            field);
            errno = 0;
            long long n = qty_text(v, buf, sizeof(buf)) ? -1 : strtoll(buf, &end, 10);
            if (n < 0 || errno || *end || !*buf)
                return ferr(e, field, "%s: expected a whole number", field);
            if (n > 1)
                return ferr(e, field,
                            "%s: %lld instances; a pod takes one MIG instance (run more pods)",
                            field, n);
            if (n == 1 && a->mig[0] && strcmp(a->mig, prof))
                return ferr(e, field, "%s: a pod takes one MIG instance; it asks for mig-%s too",
                            field, a->mig);
            if (n == 1)
                memcpy(a->mig, prof, sizeof(prof));
        }
    }
    return 0;
}

/* Container @c of list @list (number @idx) into @a; @init: 1 for spec.initContainers. */
static int container_ask(const json_t *c, const char *list, int idx, int init, struct ask *a,
                         struct gsd_ferr *e)
{
    static const char *const keys[] = {"nvidia.com/gpu", "nvidia.com/gpumem", "nvidia.com/gpucores",
                                       "cpu", "memory"};
    char field[128];
    *a = (struct ask){-1, -1, -1, 0, 0, "", "", init};
    snprintf(a->where, sizeof(a->where), "%s[%d]", list, idx);
    if (!json_is_object(c))
        return ferr(e, a->where, "%s: expected an object", a->where);
    const json_t *rp = json_object_get(c, "restartPolicy");
    if (rp && !json_is_null(rp)) { /* Kubernetes: only an init container's, and only Always */
        snprintf(field, sizeof(field), "%s.restartPolicy", a->where);
        if (!init || !json_is_string(rp) || strcmp(json_string_value(rp), "Always"))
            return ferr(e, field, "%s: only an init container may have one, and only Always",
                        field);
        a->init = 2;
    }
    const json_t *res = json_object_get(c, "resources");
    if (!res || json_is_null(res))
        return 0;
    const json_t *lim = json_object_get(res, "limits"), *req = json_object_get(res, "requests");
    for (int w = 0; w < 2; w++) {
        const json_t *m = w ? req : lim;
        if (m && !json_is_null(m) && !json_is_object(m)) {
            snprintf(field, sizeof(field), "%s.resources.%s", a->where, w ? "requests" : "limits");
            return ferr(e, field, "%s: expected an object", field);
        }
    }
    int rc = container_mig(lim, req, a, e);
    if (rc)
        return rc;
    for (int w = 0; w < 2; w++) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)(w ? req : lim), key, v)
        {
            if (known_resource(key, keys, 5))
                continue;
            snprintf(field, sizeof(field), "%s.resources.%s.%.64s", a->where,
                     w ? "requests" : "limits", key);
            return ferr(e, field,
                        "%s: not a resource gpuschedd places (it places nvidia.com/gpu, "
                        "nvidia.com/gpumem, nvidia.com/gpucores, nvidia.com/mig-<profile>, cpu "
                        "and memory)",
                        field);
        }
    }
    for (int k = 0; k < 5; k++) {
        const json_t *v = json_object_get(lim, keys[k]); /* a limit wins over a request */
        const char *where = "limits";
        const json_t *other = json_object_get(req, keys[k]);
        if (!v) {
            v = other;
            other = NULL;
            where = "requests";
        }
        if (!v)
            continue;
        snprintf(field, sizeof(field), "%s.resources.%s.%s", a->where, where, keys[k]);
        rc = one_quantity(v, keys[k], field, a, e);
        if (rc)
            return rc;
        if (k >= 3 || !other)
            continue;
        /* Kubernetes: an extended resource's request, when given, equals its limit */
        struct ask q = *a;
        snprintf(field, sizeof(field), "%s.resources.requests.%s", a->where, keys[k]);
        if ((rc = one_quantity(other, keys[k], field, &q, e)) != 0)
            return rc;
        if (memcmp(a, &q, sizeof(q)) != 0)
            return ferr(e, field, "%s: must equal the limit (%s is an extended resource)", field,
                        keys[k]);
    }
    return 0;
}

/* The GPU part of the request: @a holds the pod's cards and its share, @where names the first
 * container asking for GPUs. */
static int gpu_request(const struct ask *a, const char *where, uint32_t min_card_mib,
                       struct gsd_podspec *out, struct gsd_ferr *e)
{
    char field[128];
    snprintf(field, sizeof(field), "%s.resources.limits.nvidia.com/gpu", where);
    int64_t n = a->gpu;
    if (n == 0)
        return (a->gpumem > 0 || a->gpucores > 0)
                   ? ferr(e, field, "%s: 0 cards with nvidia.com/gpumem or gpucores", field)
                   : 0;
    out->gpumem_mib = a->gpumem > 0 ? (int32_t)a->gpumem : 0;
    out->gpucores = a->gpucores > 0 ? (int32_t)a->gpucores : 0;
    int64_t milli = 1000;
    if (a->gpucores > 0 && a->gpucores < 100)
        milli = a->gpucores * 10;
    else if (a->gpucores < 0 && a->gpumem > 0 && min_card_mib > 0)
        milli = a->gpumem * 1000 / min_card_mib; /* down, as the simulator: memory decides */
    if (milli > 1000)
        milli = 1000;
    if (milli < 1000 && n > 1)
        return ferr(e, field,
                    "%s: a share of a card (nvidia.com/gpucores or gpumem) is for one card; "
                    "the pod's containers ask for %lld",
                    field, (long long)n);
    if (n > GS_GPUS_MAX)
        return ferr(e, field, "%s: the pod's containers ask for %lld cards; at most %d", field,
                    (long long)n, GS_GPUS_MAX);
    out->req.num_gpu = (uint32_t)n;
    out->req.gpu_milli = (uint32_t)(milli < 1 ? 1 : milli);
    return 0;
}

static int is_share(const struct ask *a)
{
    return a->gpumem > 0 || a->gpucores > 0;
}

static int64_t cards_of(const struct ask *a)
{
    return a->gpu >= 0 ? a->gpu : is_share(a) ? 1 : 0; /* a share alone: one card (HAMi) */
}
static int64_t mig_of(const struct ask *a)
{
    return a->mig[0] != '\0';
}
static int64_t cpu_of(const struct ask *a)
{
    return a->cpu;
}
static int64_t memory_of(const struct ask *a)
{
    return a->memory;
}

/*
 * The pod's effective request of one quantity (@of) over its @ninit init containers and @napp app
 * containers (@c, init ones first): the larger of the app containers' sum plus every restartable
 * init container, and each init container's own plus the restartable ones before it (Kubernetes,
 * "Init Containers: Resource sharing within containers" and "Sidecar Containers: Resource sharing
 * within containers"; kubelet's devicemanager hands devices out the same way).
 */
static int64_t effective(const struct ask *c, size_t ninit, size_t napp,
                         int64_t (*of)(const struct ask *))
{
    int64_t side = 0, init = 0, app = 0;
    for (size_t i = 0; i < ninit; i++) {
        int64_t v = side + of(&c[i]);
        init = v > init ? v : init;
        side += c[i].init == 2 ? of(&c[i]) : 0;
    }
    for (size_t i = ninit; i < ninit + napp; i++)
        app += of(&c[i]);
    return app + side > init ? app + side : init;
}

/* One list of containers (@list: "spec.containers" or "spec.initContainers") into @c. */
static int read_list(const json_t *cs, const char *list, int init, struct ask *c, size_t *n,
                     struct gsd_ferr *e)
{
    *n = 0;
    if (init && (!cs || json_is_null(cs)))
        return 0;
    if (!json_is_array(cs) || (!init && json_array_size(cs) == 0))
        return ferr(e, list, "%s: expected a%s list", list, init ? "" : " non-empty");
    if (json_array_size(cs) > CONTAINERS_MAX)
        return ferr(e, list, "%s: more than %d", list, CONTAINERS_MAX);
    for (size_t i = 0; i < json_array_size(cs); i++) {
        int rc = container_ask(json_array_get(cs, i), list, (int)i, init, &c[i], e);
        if (rc)
            return rc;
    }
    *n = json_array_size(cs);
    return 0;
}

/*
 * The one kind of GPU the containers @c (@n) ask for: the first container asking cards or a share
 * (@gpu), the first asking a share (@share, the others must ask the same), the first asking a MIG
 * instance (@mig, the others the same profile); a MIG instance goes with no cards or share.
 */
static int gpu_kind(const struct ask *c, size_t n, const struct ask **gpu, const struct ask **share,
                    const struct ask **mig, struct gsd_podspec *out, struct gsd_ferr *e)
{
    char field[128];
    *gpu = *share = *mig = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct ask *x = &c[i];
        snprintf(field, sizeof(field), "%s.resources.limits", x->where);
        if (x->mig[0] && *mig && strcmp(x->mig, (*mig)->mig))
            return ferr(e, field, "%s: mig-%s; %s asks for mig-%s: a pod takes one MIG instance",
                        field, x->mig, (*mig)->where, (*mig)->mig);
        if (is_share(x) && *share &&
            (x->gpumem != (*share)->gpumem || x->gpucores != (*share)->gpucores))
            return ferr(e, field,
                        "%s: a share other than %s's (nvidia.com/gpumem, gpucores): a pod's "
                        "containers share one slice of a card",
                        field, (*share)->where);
        if (is_share(x) && x->gpu < 0 && !out->share_no_gpu[0])
            snprintf(out->share_no_gpu, sizeof(out->share_no_gpu), "%s", x->where);
        *mig = x->mig[0] && !*mig ? x : *mig;
        *share = is_share(x) && !*share ? x : *share;
        *gpu = (x->gpu > 0 || is_share(x)) && !*gpu ? x : *gpu;
    }
    if (*mig && *gpu) {
        snprintf(field, sizeof(field), "%s.resources.limits.nvidia.com/%s", (*gpu)->where,
                 (*gpu)->gpu > 0      ? "gpu"
                 : (*gpu)->gpumem > 0 ? "gpumem"
                                      : "gpucores");
        return ferr(e, field,
                    "%s: the pod asks for a MIG instance (mig-%s) too; a pod takes either a MIG "
                    "instance or whole or shared cards",
                    field, (*mig)->mig);
    }
    return 0;
}

static int parse_containers(const json_t *spec, uint32_t min_card_mib, struct gsd_podspec *out,
                            struct gsd_ferr *e)
{
    struct ask c[2 * CONTAINERS_MAX];
    const struct ask *gpu, *share, *mig;
    size_t ninit = 0, napp = 0;
    int rc =
        read_list(json_object_get(spec, "initContainers"), "spec.initContainers", 1, c, &ninit, e);
    if (!rc)
        rc = read_list(json_object_get(spec, "containers"), "spec.containers", 0, c + ninit, &napp,
                       e);
    if (!rc)
        rc = gpu_kind(c, ninit + napp, &gpu, &share, &mig, out, e);
    if (rc)
        return rc;
    out->req.cpu_milli = effective(c, ninit, napp, cpu_of);
    out->req.memory_mib = effective(c, ninit, napp, memory_of);
    if (out->req.cpu_milli > QTY_MAX || out->req.memory_mib > QTY_MAX)
        return ferr(e, "spec.containers", "spec.containers: CPU or memory adds up past the limit");
    if (mig && effective(c, ninit, napp, mig_of) > 1)
        return ferr(e, mig->where,
                    "%s: the pod's containers ask for more than one MIG instance at once; a pod "
                    "takes one (run more pods)",
                    mig->where);
    if (mig) {
        memcpy(out->mig, mig->mig, sizeof(out->mig));
        return 0;
    }
    if (!gpu)
        return 0;
    struct ask pod = {effective(c, ninit, napp, cards_of),
                      share ? share->gpumem : -1,
                      share ? share->gpucores : -1,
                      0,
                      0,
                      "",
                      "",
                      0};
    return gpu_request(&pod, gpu->where, min_card_mib, out, e);
}

int gsd_podspec_parse(const json_t *pod, uint32_t min_card_mib, struct gsd_podspec *out,
                      struct gsd_ferr *e)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(pod))
        return ferr(e, "", "the body must be a Pod object");
    const json_t *kind = json_object_get(pod, "kind");
    if (kind && !json_is_null(kind) &&
        (!json_is_string(kind) || strcmp(json_string_value(kind), "Pod")))
        return ferr(e, "kind", "kind: expected Pod");
    int rc = parse_metadata(json_object_get(pod, "metadata"), out, e);
    const json_t *spec = json_object_get(pod, "spec");
    if (!rc && !json_is_object(spec))
        rc = ferr(e, "spec", "spec: expected an object");
    if (!rc)
        rc = parse_containers(spec, min_card_mib, out, e);
    const json_t *prio = rc ? NULL : json_object_get(spec, "priority");
    if (prio && !json_is_null(prio)) {
        if (!json_is_integer(prio) || json_integer_value(prio) < -2147483647 ||
            json_integer_value(prio) > 2147483647)
            rc = ferr(e, "spec.priority", "spec.priority: expected a 32-bit whole number");
        else
            out->priority = (int32_t)json_integer_value(prio);
        out->has_priority = !rc;
    }
    const json_t *pc = rc ? NULL : json_object_get(spec, "priorityClassName");
    if (pc && !json_is_null(pc)) {
        if (!json_is_string(pc) || !json_string_length(pc) ||
            json_string_length(pc) >= GSD_NAME_MAX)
            rc = ferr(e, "spec.priorityClassName",
                      "spec.priorityClassName: expected a name of 1..%d bytes", GSD_NAME_MAX - 1);
        else
            memcpy(out->pclass, json_string_value(pc), json_string_length(pc) + 1);
    }
    if (!rc && out->models[0] && (out->req.num_gpu || out->mig[0]))
        out->req.model_mask = (uint32_t)gsd_models_mask(out->models);
    if (rc)
        gsd_podspec_clear(out);
    return rc;
}

void gsd_podspec_clear(struct gsd_podspec *p)
{
    json_decref(p->labels);
    json_decref(p->annotations);
    p->labels = p->annotations = NULL;
}
