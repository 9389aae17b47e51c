/* The agent's plan: bound pods, device IDs, kubelet's Allocate matched to a pod. See plan.h. */
#include "plan.h"

#include "gpusched/diag.h"
#include "gpusched/gpushare_env.h"
#include "gpusched/mig.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GPU_RES "nvidia.com/gpu"

int gs_plan_init(struct gs_plan *p, const struct gs_topo *topo, int replicas, const char *shim_host,
                 const char *mps_pipe)
{
    if (replicas < 1 || replicas > GS_PLAN_REPLICAS_MAX)
        return -EINVAL;
    memset(p, 0, sizeof(*p));
    p->topo = topo;
    p->replicas = replicas;
    if (shim_host &&
        snprintf(p->shim_host, sizeof(p->shim_host), "%s", shim_host) >= (int)sizeof(p->shim_host))
        return -EINVAL;
    memcpy(p->shim_ctr, p->shim_host, sizeof(p->shim_ctr));
    if (mps_pipe &&
        snprintf(p->mps_pipe, sizeof(p->mps_pipe), "%s", mps_pipe) >= (int)sizeof(p->mps_pipe))
        return -EINVAL;
    return 0;
}

static int str_field(json_t *o, const char *key, char *out, size_t n, int idx, struct gs_diag *d)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (!s || !*s || strlen(s) >= n)
        return gs_diag_error(d, "pods[%d].%s: a string of 1..%zu bytes is needed", idx, key, n - 1);
    memcpy(out, s, strlen(s) + 1);
    return 0;
}

static int int_field(json_t *o, const char *key, int64_t lo, int64_t hi, int64_t *v, int idx,
                     struct gs_diag *d)
{
    json_t *j = json_object_get(o, key);
    *v = 0;
    if (!j || json_is_null(j))
        return 0;
    if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi)
        return gs_diag_error(d, "pods[%d].%s: an integer in %lld..%lld is needed", idx, key,
                             (long long)lo, (long long)hi);
    *v = json_integer_value(j);
    return 0;
}

static int one_pod(json_t *o, int i, struct gs_plan_pod *p, struct gs_diag *d)
{
    int64_t v;
    memset(p, 0, sizeof(*p));
    p->mig_start = -1;
    if (!json_is_object(o))
        return gs_diag_error(d, "pods[%d]: an object is needed", i);
    int rc = str_field(o, "namespace", p->ns, sizeof(p->ns), i, d);
    if (!rc)
        rc = str_field(o, "name", p->name, sizeof(p->name), i, d);
    if (!rc)
        rc = str_field(o, "uid", p->uid, sizeof(p->uid), i, d);
    if (!rc)
        rc = str_field(o, "tenant", p->tenant, sizeof(p->tenant), i, d);
    json_t *gpus = json_object_get(o, "gpus"), *g;
    size_t k;
    if (!rc && gpus && !json_is_array(gpus))
        rc = gs_diag_error(d, "pods[%d].gpus: a list of GPU indexes is needed", i);
    json_array_foreach(gpus, k, g)
    {
        if (rc)
            break;
        if (!json_is_integer(g) || json_integer_value(g) < 0 ||
            json_integer_value(g) >= GS_GPUS_MAX)
            rc = gs_diag_error(d, "pods[%d].gpus[%zu]: a GPU index 0..%d is needed", i, k,
                               GS_GPUS_MAX - 1);
        else
            p->cards |= 1u << json_integer_value(g);
    }
    if (!rc && !(rc = int_field(o, "gpumem_mib", 0, INT64_MAX / 2, &v, i, d)))
        p->gpumem_mib = v;
    if (!rc && !(rc = int_field(o, "gpucores", 0, 100, &v, i, d)))
        p->gpucores = (int32_t)v;
    if (!rc && !(rc = int_field(o, "cpu_milli", 0, INT64_MAX / 2, &v, i, d)))
        p->cpu_milli = v;
    json_t *mig = json_object_get(o, "mig");
    if (!rc && mig && !json_is_null(mig)) {
        rc = str_field(mig, "profile", p->mig, sizeof(p->mig), i, d);
        if (!rc && !(rc = int_field(mig, "start", 0, GS_MIG_SLOTS_MAX - 1, &v, i, d)))
            p->mig_start = (int)v;
        if (!rc && __builtin_popcount(p->cards) != 1)
            rc = gs_diag_error(d, "pods[%d]: a MIG instance is on exactly one card", i);
    }
    return rc;
}

int gs_plan_pods_json(const char *text, struct gs_plan_pod *out, int max, struct gs_diag *d)
{
    json_error_t e;
    json_t *a = json_loads(text, JSON_REJECT_DUPLICATES, &e), *o;
    size_t i;
    int rc = 0;
    if (!json_is_array(a)) {
        json_decref(a);
        return gs_diag_error(d, "pods: %s", a ? "a JSON list is needed" : e.text);
    }
    if (json_array_size(a) > (size_t)max) {
        json_decref(a);
        return gs_diag_error_code(d, -E2BIG, "pods: %zu bound pods; at most %d", json_array_size(a),
                                  max);
    }
    json_array_foreach(a, i, o)
    {
        if ((rc = one_pod(o, (int)i, &out[i], d)) != 0)
            break;
    }
    int n = (int)json_array_size(a);
    json_decref(a);
    return rc ? rc : n;
}

static const struct gs_plan_pod *find_uid(const struct gs_plan *p, const char *uid)
{
    for (int i = 0; i < p->npods; i++)
        if (!strcmp(p->pods[i].uid, uid))
            return &p->pods[i];
    return NULL;
}

/* Give every card of @q one replica no pod of @taken holds yet. */
static int give_replicas(const struct gs_plan *p, uint64_t *taken, struct gs_plan_pod *q,
                         struct gs_diag *d)
{
    for (uint32_t m = q->cards; m; m &= m - 1) {
        int c = __builtin_ctz(m), k = 0;
        while (k < p->replicas && (taken[c] >> k & 1u))
            k++;
        if (k == p->replicas)
            return gs_diag_error(d, "pod %s/%s: card %d has no free nvidia.com/gpu replica (%d)",
                                 q->ns, q->name, c, p->replicas);
        q->replica[c] = (uint8_t)k;
        taken[c] |= 1ull << k;
    }
    return 0;
}

int gs_plan_set_pods(struct gs_plan *p, const struct gs_plan_pod *pods, int n, struct gs_diag *d)
{
    static struct gs_plan_pod next[GS_PLAN_PODS_MAX]; /* the agent has one plan */
    uint64_t taken[GS_GPUS_MAX] = {0};
    if (n > GS_PLAN_PODS_MAX)
        return gs_diag_error(d, "%d bound pods; at most %d", n, GS_PLAN_PODS_MAX);
    for (int i = 0; i < n; i++) {
        const struct gs_plan_pod *old = find_uid(p, pods[i].uid);
        /* bound elsewhere since (requeued and placed again): a new binding */
        if (old && (old->cards != pods[i].cards || strcmp(old->mig, pods[i].mig) ||
                    old->mig_start != pods[i].mig_start))
            old = NULL;
        next[i] = pods[i];
        next[i].seen = old != NULL;
        if ((pods[i].cards >> p->topo->ngpus) != 0)
            return gs_diag_error(d, "pod %s/%s: bound to a card this node does not have",
                                 pods[i].ns, pods[i].name);
        if (old) { /* keeps its IDs and its allocation */
            next[i].allocated = old->allocated;
            memcpy(next[i].replica, old->replica, sizeof(next[i].replica));
            for (uint32_t m = old->cards & pods[i].cards; m; m &= m - 1)
                taken[__builtin_ctz(m)] |= 1ull << old->replica[__builtin_ctz(m)];
        }
    }
    for (int i = 0; i < n; i++)
        if (!next[i].seen) {
            next[i].allocated = 0;
            memset(next[i].replica, 0, sizeof(next[i].replica));
            int rc = give_replicas(p, taken, &next[i], d);
            if (rc)
                return rc;
        }
    memcpy(p->pods, next, (size_t)n * sizeof(*next));
    p->npods = n;
    return 0;
}

const char *gs_plan_mig_uuid(const struct gs_topo *t, int gpu, int start)
{
    for (int i = 0; gpu >= 0 && gpu < t->ngpus && i < t->gpu[gpu].nmig; i++)
        if (t->gpu[gpu].mig[i].start == start && t->gpu[gpu].mig[i].uuid[0])
            return t->gpu[gpu].mig[i].uuid;
    return NULL;
}

/* The MIG resource of the instance of card @g number @i: "nvidia.com/mig-2g.20gb". */
static int mig_res(const struct gs_topo *t, int g, int i, char *out, size_t n)
{
    const struct gs_topo_mig *m = &t->gpu[g].mig[i];
    return m->profile[0] ? snprintf(out, n, "nvidia.com/mig-%s", m->profile) : -1;
}

static void gpu_id(const struct gs_plan *p, int card, int k, char *out)
{
    snprintf(out, GS_PLAN_ID_MAX, "%.90s::%d", p->topo->gpu[card].uuid, k);
}

int gs_plan_devices(const struct gs_plan *p, const char *res, char (*ids)[GS_PLAN_ID_MAX],
                    int *card, int max)
{
    const struct gs_topo *t = p->topo;
    int n = 0;
    char r[GS_PLAN_RES_MAX];
    for (int g = 0; g < t->ngpus; g++) {
        if (!strcmp(res, GPU_RES) && t->gpu[g].mig_mode != 1)
            for (int k = 0; k < p->replicas && n < max; k++, n++) {
                gpu_id(p, g, k, ids[n]);
                card[n] = g;
            }
        for (int i = 0; i < t->gpu[g].nmig && n < max; i++)
            if (mig_res(t, g, i, r, sizeof(r)) > 0 && !strcmp(r, res)) {
                snprintf(ids[n], GS_PLAN_ID_MAX, "%s", t->gpu[g].mig[i].uuid);
                card[n++] = g;
            }
    }
    return n;
}

static int add_res(char (*res)[GS_PLAN_RES_MAX], int n, int max, const char *r)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(res[i], r))
            return n;
    if (n < max)
        snprintf(res[n++], GS_PLAN_RES_MAX, "%s", r);
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(a, b);
}

int gs_plan_resources(const struct gs_plan *p, char (*res)[GS_PLAN_RES_MAX], int max)
{
    const struct gs_topo *t = p->topo;
    int n = 0;
    char r[GS_PLAN_RES_MAX];
    for (int g = 0; g < t->ngpus; g++) {
        if (t->gpu[g].mig_mode != 1)
            n = add_res(res, n, max, GPU_RES);
        for (int i = 0; i < t->gpu[g].nmig; i++)
            if (mig_res(t, g, i, r, sizeof(r)) > 0)
                n = add_res(res, n, max, r);
    }
    qsort(res, (size_t)n, GS_PLAN_RES_MAX, by_name);
    return n;
}

/* The IDs pod @q holds of @res (none when it asks nothing of it). */
static int pod_ids(const struct gs_plan *p, const struct gs_plan_pod *q, const char *res,
                   char (*out)[GS_PLAN_ID_MAX])
{
    int n = 0;
    if (q->mig[0]) {
        char r[GS_PLAN_RES_MAX];
        const char *uuid = gs_plan_mig_uuid(p->topo, __builtin_ctz(q->cards), q->mig_start);
        snprintf(r, sizeof(r), "nvidia.com/mig-%s", q->mig);
        if (uuid && !strcmp(r, res))
            snprintf(out[n++], GS_PLAN_ID_MAX, "%s", uuid);
        return n;
    }
    if (strcmp(res, GPU_RES))
        return 0;
    for (uint32_t m = q->cards; m; m &= m - 1, n++)
        gpu_id(p, __builtin_ctz(m), q->replica[__builtin_ctz(m)], out[n]);
    return n;
}

static int in(const char *id, const char *const *set, int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(id, set[i]))
            return 1;
    return 0;
}

static int held(const char *id, char (*ids)[GS_PLAN_ID_MAX], int n)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(id, ids[i]))
            return 1;
    return 0;
}

int gs_plan_prefer(struct gs_plan *p, const char *res, const char *const *avail, int navail,
                   const char *const *must, int nmust, int size, char (*out)[GS_PLAN_ID_MAX])
{
    char ids[GS_GPUS_MAX][GS_PLAN_ID_MAX];
    if (size < 1 || size > navail || size > GS_GPUS_MAX)
        return 0;
    for (int i = 0; i < p->npods; i++) {
        const struct gs_plan_pod *q = &p->pods[i];
        int n = q->allocated ? 0 : pod_ids(p, q, res, ids), ok = n == size;
        for (int k = 0; ok && k < n; k++)
            ok = in(ids[k], avail, navail);
        for (int k = 0; ok && k < nmust; k++)
            ok = held(must[k], ids, n);
        if (!ok)
            continue;
        memcpy(out, ids, (size_t)n * GS_PLAN_ID_MAX);
        snprintf(p->last_res, sizeof(p->last_res), "%s", res);
        memcpy(p->last_uid, q->uid, sizeof(p->last_uid));
        return n;
    }
    int n = 0; /* no bound pod fits: kubelet's own choice, must-includes first */
    for (int k = 0; k < nmust && n < size; k++)
        snprintf(out[n++], GS_PLAN_ID_MAX, "%s", must[k]);
    for (int k = 0; k < navail && n < size; k++)
        if (!in(avail[k], must, nmust))
            snprintf(out[n++], GS_PLAN_ID_MAX, "%s", avail[k]);
    p->last_res[0] = '\0';
    return n;
}

static void env(struct gs_plan_alloc *a, const char *key, const char *val)
{
    snprintf(a->env_key[a->nenv], sizeof(a->env_key[0]), "%s", key);
    snprintf(a->env_val[a->nenv++], GS_PLAN_VAL_MAX, "%s", val);
}

/* "<a>,<b>" lists of the pod's cards: @fmt gets (uuid, ordinal) for each card. */
static void per_card(const struct gs_plan *p, const struct gs_plan_pod *q, char *out,
                     const char *what)
{
    size_t off = 0;
    int ord = 0;
    out[0] = '\0';
    for (uint32_t m = q->cards; m; m &= m - 1, ord++) {
        const char *uuid = p->topo->gpu[__builtin_ctz(m)].uuid;
        const char *sep = ord ? "," : "";
        int w = 0;
        if (!strcmp(what, "uuid"))
            w = snprintf(out + off, GS_PLAN_VAL_MAX - off, "%s%s", sep, uuid);
        else if (!strcmp(what, "mps-mem"))
            w = snprintf(out + off, GS_PLAN_VAL_MAX - off, "%s%d=%lldM", sep, ord,
                         (long long)q->gpumem_mib);
        else if (!strcmp(what, "mem"))
            w = snprintf(out + off, GS_PLAN_VAL_MAX - off, "%s%s=%lld", sep, uuid,
                         (long long)q->gpumem_mib);
        else
            w = snprintf(out + off, GS_PLAN_VAL_MAX - off, "%s%s=%d", sep, uuid, q->gpucores);
        off += w > 0 ? (size_t)w : 0;
        if (off >= GS_PLAN_VAL_MAX)
            break;
    }
}

/* What the container of pod @q gets (environment, mounts, CDI names). */
static void answer(const struct gs_plan *p, const struct gs_plan_pod *q, struct gs_plan_alloc *a)
{
    char v[GS_PLAN_VAL_MAX];
    memset(a, 0, sizeof(*a));
    snprintf(a->pod, sizeof(a->pod), "%s/%.180s", q->ns, q->name);
    const char *mig =
        q->mig[0] ? gs_plan_mig_uuid(p->topo, __builtin_ctz(q->cards), q->mig_start) : NULL;
    if (mig) {
        env(a, "NVIDIA_VISIBLE_DEVICES", mig);
        snprintf(a->cdi[a->ncdi++], sizeof(a->cdi[0]), "gpusched.io/gpu=%s", mig);
        return;
    }
    per_card(p, q, v, "uuid");
    env(a, "NVIDIA_VISIBLE_DEVICES", v);
    for (uint32_t m = q->cards; m; m &= m - 1)
        snprintf(a->cdi[a->ncdi++], sizeof(a->cdi[0]), "gpusched.io/gpu=%s",
                 p->topo->gpu[__builtin_ctz(m)].uuid);
    if (!q->gpumem_mib && !q->gpucores)
        return;           /* whole cards */
    if (p->mps_pipe[0]) { /* NVIDIA MPS client limits (MPS documentation, "Environment") */
        env(a, "CUDA_MPS_PIPE_DIRECTORY", p->mps_pipe);
        if (q->gpucores) {
            snprintf(v, sizeof(v), "%d", q->gpucores);
            env(a, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", v);
        }
        if (q->gpumem_mib) {
            per_card(p, q, v, "mps-mem");
            env(a, "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", v);
        }
        snprintf(a->mount[a->nmount].host, GS_PLAN_PATH_MAX, "%s", p->mps_pipe);
        snprintf(a->mount[a->nmount++].ctr, GS_PLAN_PATH_MAX, "%s", p->mps_pipe);
    }
    if (p->shim_host[0]) { /* libgpushare's limits (gpusched/gpushare_env.h) */
        if (q->gpumem_mib) {
            per_card(p, q, v, "mem");
            env(a, GS_GPUSHARE_ENV_MEMORY_MIB, v);
        }
        if (q->gpucores) {
            per_card(p, q, v, "cores");
            env(a, GS_GPUSHARE_ENV_CORES_PERCENT, v);
        }
        snprintf(v, sizeof(v), "/gpushare-%.180s", q->uid);
        env(a, GS_GPUSHARE_ENV_REGION, v);
        env(a, "LD_PRELOAD", p->shim_ctr);
        snprintf(a->mount[a->nmount].host, GS_PLAN_PATH_MAX, "%s", p->shim_host);
        snprintf(a->mount[a->nmount].ctr, GS_PLAN_PATH_MAX, "%s", p->shim_ctr);
        a->mount[a->nmount++].ro = 1;
    }
}

static int same_set(char (*a)[GS_PLAN_ID_MAX], int na, const char *const *b, int nb)
{
    if (na != nb)
        return 0;
    for (int i = 0; i < nb; i++)
        if (!held(b[i], a, na))
            return 0;
    return 1;
}

int gs_plan_allocate(struct gs_plan *p, const char *res, const char *const *ids, int n,
                     struct gs_plan_alloc *out, struct gs_diag *d)
{
    char mine[GS_GPUS_MAX][GS_PLAN_ID_MAX];
    int exact = -1, last = -1, only = -1, fits = 0;
    if (n < 1 || n > GS_GPUS_MAX)
        return gs_diag_error(d, "Allocate of %d %s devices; 1..%d", n, res, GS_GPUS_MAX);
    for (int i = 0; i < p->npods; i++) {
        struct gs_plan_pod *q = &p->pods[i];
        int k = q->allocated ? 0 : pod_ids(p, q, res, mine);
        if (k != n)
            continue;
        fits++;
        only = i;
        if (exact < 0 && same_set(mine, k, ids, n))
            exact = i;
        if (!strcmp(p->last_res, res) && !strcmp(p->last_uid, q->uid))
            last = i;
    }
    int pick = exact >= 0 ? exact : last >= 0 ? last : fits == 1 ? only : -1;
    if (pick < 0)
        return gs_diag_error_code(d, -ENOENT, "Allocate of %d %s device%s (%s...): %s", n, res,
                                  n == 1 ? "" : "s", ids[0],
                                  fits ? "several bound pods ask that many and none holds these "
                                         "IDs; refused rather than guessed"
                                       : "no pod bound to this node waits for them");
    p->pods[pick].allocated = 1;
    p->last_res[0] = '\0';
    answer(p, &p->pods[pick], out);
    return 0;
}

int gs_plan_save(const struct gs_plan *p, const char *path, struct gs_diag *d)
{
    json_t *a = json_array();
    for (int i = 0; a && i < p->npods; i++) {
        const struct gs_plan_pod *q = &p->pods[i];
        json_t *r = json_array();
        for (uint32_t m = q->cards; r && m; m &= m - 1)
            json_array_append_new(
                r, json_pack("[i,i]", __builtin_ctz(m), q->replica[__builtin_ctz(m)]));
        json_array_append_new(a, json_pack("{s:s, s:b, s:o, s:s, s:i}", "uid", q->uid, "allocated",
                                           q->allocated, "replicas", r, "mig", q->mig, "migStart",
                                           q->mig_start));
    }
    char tmp[GS_PLAN_PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    int rc = a && !json_dump_file(a, tmp, JSON_COMPACT) ? 0 : -EIO;
    json_decref(a);
    if (!rc && rename(tmp, path) != 0)
        rc = -errno;
    return rc ? gs_diag_error_code(d, rc, "%s: cannot write the agent's state", path) : 0;
}

int gs_plan_load(struct gs_plan *p, const char *path, struct gs_diag *d)
{
    json_error_t e;
    FILE *f = fopen(path, "r");
    if (!f)
        return errno == ENOENT ? 0 : gs_diag_error_code(d, -errno, "%s: %s", path, strerror(errno));
    json_t *a = json_loadf(f, 0, &e), *o;
    int parsed = a != NULL;
    fclose(f);
    size_t i;
    int rc = json_is_array(a) && json_array_size(a) <= GS_PLAN_PODS_MAX ? 0 : -EINVAL;
    json_array_foreach(a, i, o)
    {
        struct gs_plan_pod *q = &p->pods[i];
        const char *uid = json_string_value(json_object_get(o, "uid"));
        json_t *r = json_object_get(o, "replicas"), *x;
        size_t k;
        if (rc || !uid || strlen(uid) >= sizeof(q->uid) || !json_is_array(r)) {
            rc = -EINVAL;
            break;
        }
        memset(q, 0, sizeof(*q));
        memcpy(q->uid, uid, strlen(uid) + 1);
        const char *mig = json_string_value(json_object_get(o, "mig"));
        snprintf(q->mig, sizeof(q->mig), "%s", mig ? mig : "");
        q->mig_start = (int)json_integer_value(json_object_get(o, "migStart"));
        if (!mig || !json_is_integer(json_object_get(o, "migStart")))
            rc = -EINVAL;
        q->allocated = json_is_true(json_object_get(o, "allocated"));
        json_array_foreach(r, k, x)
        {
            json_int_t c = json_integer_value(json_array_get(x, 0));
            json_int_t v = json_integer_value(json_array_get(x, 1));
            if (c < 0 || c >= GS_GPUS_MAX || v < 0 || v >= p->replicas)
                rc = -EINVAL;
            else {
                q->cards |= 1u << c;
                q->replica[c] = (uint8_t)v;
            }
        }
        p->npods = (int)i + 1;
    }
    json_decref(a);
    if (rc)
        p->npods = 0;
    return rc ? gs_diag_error(d, "%s: not the agent's state (%s); move it away to start afresh",
                              path, parsed ? "bad content" : e.text)
              : 0;
}
