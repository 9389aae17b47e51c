/* The kubelet device plugin, v1beta1, over grpcio.c. Contract: plugin.h. */
#include "plugin.h"

#include "deviceplugin.pb-c.h"
#include "grpcio.h"
#include "podresources.pb-c.h"
#include "plan.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <grpc/status.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RES_MAX      16
#define KUBELET_PODS 1024 /* pods kubelet's List may name; more and the list is not used */

struct gs_plugin {
    struct gs_plan *plan;
    pthread_mutex_t *lock;
    const uint32_t *unhealthy;
    char dir[256], state[256], podres[256];
    FILE *log;
    int podres_ok; /* the last List answered (to log changes only) */
    int nres;
    char res[RES_MAX][GS_PLAN_RES_MAX];
    char sock[RES_MAX][GS_PLAN_RES_MAX + 16]; /* file names in dir */
    uint64_t kubelet_ino;                     /* which kubelet.sock we registered with (inode())) */
    struct gs_grpc_server *srv;
    pthread_t thread;
    volatile int stop;
};

/* Every handler's answer, packed; the message itself lives on the handler's stack. */
static int packed(const ProtobufCMessage *m, uint8_t **out, size_t *len, char *err, size_t n)
{
    if (gs_grpc_pack(m, out, len)) {
        snprintf(err, n, "out of memory");
        return GRPC_STATUS_RESOURCE_EXHAUSTED;
    }
    return 0;
}

static int options(void *ud, int ep, const ProtobufCMessage *req, uint8_t **out, size_t *len,
                   char *err, size_t n)
{
    V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
    (void)ud, (void)ep, (void)req;
    o.get_preferred_allocation_available = 1;
    return packed(&o.base, out, len, err, n);
}

static int prestart(void *ud, int ep, const ProtobufCMessage *req, uint8_t **out, size_t *len,
                    char *err, size_t n)
{
    V1beta1__PreStartContainerResponse r = V1BETA1__PRE_START_CONTAINER_RESPONSE__INIT;
    (void)ud, (void)ep, (void)req;
    return packed(&r.base, out, len, err, n);
}

/* The devices of resource @ep, with each card's health and NUMA node. */
static int list(void *ud, int ep, const ProtobufCMessage *req, uint8_t **out, size_t *len,
                char *err, size_t n)
{
    struct gs_plugin *p = ud;
    static char ids[GS_GPUS_MAX * GS_PLAN_REPLICAS_MAX][GS_PLAN_ID_MAX];
    static int card[GS_GPUS_MAX * GS_PLAN_REPLICAS_MAX];
    static V1beta1__Device dev[GS_GPUS_MAX * GS_PLAN_REPLICAS_MAX],
        *devp[GS_GPUS_MAX * GS_PLAN_REPLICAS_MAX];
    static V1beta1__TopologyInfo topo[GS_GPUS_MAX];
    static V1beta1__NUMANode numa[GS_GPUS_MAX], *nump[GS_GPUS_MAX];
    V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
    (void)req;
    pthread_mutex_lock(p->lock);
    int k = gs_plan_devices(p->plan, p->res[ep], ids, card, GS_GPUS_MAX * GS_PLAN_REPLICAS_MAX);
    uint32_t bad = *p->unhealthy;
    for (int g = 0; g < p->plan->topo->ngpus; g++) {
        v1beta1__numanode__init(&numa[g]);
        v1beta1__topology_info__init(&topo[g]);
        numa[g].id = p->plan->topo->gpu[g].numa;
        nump[g] = &numa[g];
        topo[g].n_nodes = p->plan->topo->gpu[g].numa >= 0;
        topo[g].nodes = &nump[g];
    }
    pthread_mutex_unlock(p->lock);
    for (int i = 0; i < k; i++) {
        v1beta1__device__init(&dev[i]);
        dev[i].id = ids[i];
        dev[i].health = bad >> card[i] & 1u ? "Unhealthy" : "Healthy";
        dev[i].topology = topo[card[i]].n_nodes ? &topo[card[i]] : NULL;
        devp[i] = &dev[i];
    }
    r.n_devices = (size_t)k;
    r.devices = devp;
    return packed(&r.base, out, len, err, n);
}

/*
 * The pods kubelet has, from its pod resources List, into @names ("namespace/name"). Called
 * outside the plan's lock. Return: the count; -1 when there is no list (no socket configured,
 * kubelet did not answer, or too many pods).
 */
static int kubelet_pods(struct gs_plugin *p, const char **names)
{
    static char buf[KUBELET_PODS][360];
    V1__ListPodResourcesRequest q = V1__LIST_POD_RESOURCES_REQUEST__INIT;
    ProtobufCMessage *m = NULL;
    struct gs_diag d;
    if (!p->podres[0])
        return -1;
    gs_diag_init(&d);
    if (access(p->podres, F_OK) != 0) { /* no kubelet there: no wait for one */
        if (p->log && p->podres_ok != 0)
            fprintf(p->log, "kubelet's pod resources at %s: %s\n", p->podres, strerror(errno));
        p->podres_ok = 0;
        return -1;
    }
    int rc = gs_grpc_call(p->podres, "/v1.PodResourcesLister/List", &q.base,
                          &v1__list_pod_resources_response__descriptor, &m, 2000, &d);
    const V1__ListPodResourcesResponse *r = rc ? NULL : (const void *)m;
    int n = r && r->n_pod_resources <= KUBELET_PODS ? (int)r->n_pod_resources : -1;
    for (int i = 0; i < n; i++) {
        snprintf(buf[i], sizeof(buf[i]), "%.100s/%.253s", r->pod_resources[i]->namespace_,
                 r->pod_resources[i]->name);
        names[i] = buf[i];
    }
    if (p->log && (n >= 0) != p->podres_ok)
        fprintf(p->log, "kubelet's pod resources at %s: %s\n", p->podres,
                n >= 0 ? "read; Allocate matches the pods kubelet has"
                : rc   ? d.msg
                       : "more pods than the agent reads; Allocate matches without them");
    p->podres_ok = n >= 0;
    if (m)
        protobuf_c_message_free_unpacked(m, NULL);
    return n;
}

static int prefer(void *ud, int ep, const ProtobufCMessage *req, uint8_t **out, size_t *len,
                  char *err, size_t n)
{
    struct gs_plugin *p = ud;
    const V1beta1__PreferredAllocationRequest *q = (const void *)req;
    V1beta1__PreferredAllocationResponse r = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
    V1beta1__ContainerPreferredAllocationResponse cr[8], *crp[8];
    static char ids[8][GS_GPUS_MAX][GS_PLAN_ID_MAX];
    static char *idp[8][GS_GPUS_MAX];
    static const char *names[KUBELET_PODS];
    if (q->n_container_requests > 8) {
        snprintf(err, n, "more than 8 containers in one request");
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    int nk = kubelet_pods(p, names);
    pthread_mutex_lock(p->lock);
    gs_plan_kubelet(p->plan, names, nk);
    for (size_t c = 0; c < q->n_container_requests; c++) {
        const V1beta1__ContainerPreferredAllocationRequest *x = q->container_requests[c];
        int size = x->allocation_size > GS_GPUS_MAX ? 0 : x->allocation_size;
        int k = gs_plan_prefer(p->plan, p->res[ep], (const char *const *)x->available_deviceids,
                               (int)x->n_available_deviceids,
                               (const char *const *)x->must_include_deviceids,
                               (int)x->n_must_include_deviceids, size, ids[c]);
        v1beta1__container_preferred_allocation_response__init(&cr[c]);
        for (int i = 0; i < k; i++)
            idp[c][i] = ids[c][i];
        cr[c].n_deviceids = (size_t)k;
        cr[c].deviceids = idp[c];
        crp[c] = &cr[c];
    }
    pthread_mutex_unlock(p->lock);
    r.n_container_responses = q->n_container_requests;
    r.container_responses = crp;
    return packed(&r.base, out, len, err, n);
}

/* Builds one container's answer from @a (its strings stay in @a). */
static void container(struct gs_plan_alloc *a, V1beta1__ContainerAllocateResponse *r,
                      V1beta1__ContainerAllocateResponse__EnvsEntry *env,
                      V1beta1__ContainerAllocateResponse__EnvsEntry **envp, V1beta1__Mount *mnt,
                      V1beta1__Mount **mntp, V1beta1__CDIDevice *cdi, V1beta1__CDIDevice **cdip,
                      V1beta1__ContainerAllocateResponse__AnnotationsEntry *ann,
                      V1beta1__ContainerAllocateResponse__AnnotationsEntry **annp)
{
    v1beta1__container_allocate_response__init(r);
    for (int i = 0; i < a->nenv; i++) {
        v1beta1__container_allocate_response__envs_entry__init(&env[i]);
        env[i].key = a->env_key[i];
        env[i].value = a->env_val[i];
        envp[i] = &env[i];
    }
    for (int i = 0; i < a->nmount; i++) {
        v1beta1__mount__init(&mnt[i]);
        mnt[i].host_path = a->mount[i].host;
        mnt[i].container_path = a->mount[i].ctr;
        mnt[i].read_only = a->mount[i].ro;
        mntp[i] = &mnt[i];
    }
    for (int i = 0; i < a->ncdi; i++) {
        v1beta1__cdidevice__init(&cdi[i]);
        cdi[i].name = a->cdi[i];
        cdip[i] = &cdi[i];
    }
    v1beta1__container_allocate_response__annotations_entry__init(ann);
    ann->key = "gpusched.io/pod"; /* which bound pod the container was matched to */
    ann->value = a->pod;
    *annp = ann;
    r->n_envs = (size_t)a->nenv;
    r->envs = envp;
    r->n_mounts = (size_t)a->nmount;
    r->mounts = mntp;
    r->n_cdi_devices = (size_t)a->ncdi;
    r->cdi_devices = cdip;
    r->n_annotations = 1;
    r->annotations = annp;
}

static int allocate(void *ud, int ep, const ProtobufCMessage *req, uint8_t **out, size_t *len,
                    char *err, size_t n)
{
    struct gs_plugin *p = ud;
    const V1beta1__AllocateRequest *q = (const void *)req;
    enum { C = 8 };
    static struct gs_plan_alloc a[C];
    static V1beta1__ContainerAllocateResponse r[C], *rp[C];
    static V1beta1__ContainerAllocateResponse__EnvsEntry env[C][GS_PLAN_ENV_MAX],
        *envp[C][GS_PLAN_ENV_MAX];
    static V1beta1__Mount mnt[C][GS_PLAN_MOUNTS_MAX], *mntp[C][GS_PLAN_MOUNTS_MAX];
    static V1beta1__CDIDevice cdi[C][GS_GPUS_MAX], *cdip[C][GS_GPUS_MAX];
    static V1beta1__ContainerAllocateResponse__AnnotationsEntry ann[C], *annp[C];
    V1beta1__AllocateResponse resp = V1BETA1__ALLOCATE_RESPONSE__INIT;
    struct gs_diag d;
    int st = 0;
    gs_diag_init(&d);
    static const char *names[KUBELET_PODS];
    if (q->n_container_requests > C) {
        snprintf(err, n, "more than %d containers in one request", C);
        return GRPC_STATUS_INVALID_ARGUMENT;
    }
    int nk = kubelet_pods(p, names);
    pthread_mutex_lock(p->lock);
    gs_plan_kubelet(p->plan, names, nk);
    for (size_t c = 0; !st && c < q->n_container_requests; c++) {
        const V1beta1__ContainerAllocateRequest *x = q->container_requests[c];
        if (gs_plan_allocate(p->plan, p->res[ep], (const char *const *)x->devices_ids,
                             (int)x->n_devices_ids, &a[c], &d) != 0) {
            snprintf(err, n, "%s", d.msg);
            st = GRPC_STATUS_FAILED_PRECONDITION;
            break;
        }
        container(&a[c], &r[c], env[c], envp[c], mnt[c], mntp[c], cdi[c], cdip[c], &ann[c],
                  &annp[c]);
        rp[c] = &r[c];
        if (p->log) {
            char pod[4 * GS_PLAN_PATH_MAX]; /* the name as it came, escaped for a log line */
            gs_text_escape(pod, sizeof(pod), a[c].pod);
            fprintf(p->log, "Allocate %s: %s\n", p->res[ep], pod);
        }
    }
    if (!st && p->state[0] && gs_plan_save(p->plan, p->state, &d) != 0 && p->log)
        fprintf(p->log, "%s\n", d.msg);
    pthread_mutex_unlock(p->lock);
    if (st) {
        if (p->log) {
            char why[1024];
            gs_text_escape(why, sizeof(why), err);
            fprintf(p->log, "Allocate %s refused: %s\n", p->res[ep], why);
        }
        return st;
    }
    resp.n_container_responses = q->n_container_requests;
    resp.container_responses = rp;
    return packed(&resp.base, out, len, err, n);
}

static const struct gs_grpc_method methods[] = {
    {"/v1beta1.DevicePlugin/GetDevicePluginOptions", &v1beta1__empty__descriptor, 0, options},
    {"/v1beta1.DevicePlugin/ListAndWatch", &v1beta1__empty__descriptor, 1, list},
    {"/v1beta1.DevicePlugin/GetPreferredAllocation",
     &v1beta1__preferred_allocation_request__descriptor, 0, prefer},
    {"/v1beta1.DevicePlugin/Allocate", &v1beta1__allocate_request__descriptor, 0, allocate},
    {"/v1beta1.DevicePlugin/PreStartContainer", &v1beta1__pre_start_container_request__descriptor,
     0, prestart},
};

static void *serve(void *arg)
{
    struct gs_plugin *p = arg;
    gs_grpc_server_run(p->srv, &p->stop);
    return NULL;
}

/* Which file @dir/@file is: its inode and change time, 0 when it is not there. */
static uint64_t inode(const char *dir, const char *file)
{
    char path[600];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    if (stat(path, &st) != 0)
        return 0;
    return ((uint64_t)st.st_ino * 1000003u) ^ ((uint64_t)st.st_ctim.tv_sec * 1000000000u) ^
           (uint64_t)st.st_ctim.tv_nsec;
}

static int register_all(struct gs_plugin *p, int timeout_ms, struct gs_diag *d)
{
    char kubelet[300];
    snprintf(kubelet, sizeof(kubelet), "%s/%s", p->dir, GS_PLUGIN_KUBELET);
    p->kubelet_ino = inode(p->dir, GS_PLUGIN_KUBELET);
    for (int i = 0; i < p->nres; i++) {
        V1beta1__RegisterRequest r = V1BETA1__REGISTER_REQUEST__INIT;
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        ProtobufCMessage *resp = NULL;
        o.get_preferred_allocation_available = 1;
        r.version = GS_PLUGIN_API;
        r.endpoint = p->sock[i];
        r.resource_name = p->res[i];
        r.options = &o;
        int rc = gs_grpc_call(kubelet, "/v1beta1.Registration/Register", &r.base,
                              &v1beta1__empty__descriptor, &resp, timeout_ms, d);
        if (rc)
            return rc < 0 ? rc : -ECONNREFUSED;
        protobuf_c_message_free_unpacked(resp, NULL);
        if (p->log)
            fprintf(p->log, "registered %s at %s/%s\n", p->res[i], p->dir, p->sock[i]);
    }
    return 0;
}

int gs_plugin_start(struct gs_plan *plan, pthread_mutex_t *lock, const uint32_t *unhealthy,
                    const char *dir, const char *state, const char *podres, int timeout_ms,
                    FILE *log, struct gs_plugin **out, struct gs_diag *d)
{
    struct gs_plugin *p = calloc(1, sizeof(*p));
    if (!p)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    p->plan = plan;
    p->lock = lock;
    p->unhealthy = unhealthy;
    p->log = log;
    snprintf(p->dir, sizeof(p->dir), "%s", dir);
    snprintf(p->state, sizeof(p->state), "%s", state ? state : "");
    snprintf(p->podres, sizeof(p->podres), "%s", podres ? podres : "");
    p->podres_ok = -1;
    pthread_mutex_lock(lock);
    p->nres = gs_plan_resources(plan, p->res, RES_MAX);
    pthread_mutex_unlock(lock);
    int rc = gs_grpc_server_new(methods, (int)(sizeof(methods) / sizeof(methods[0])), p, &p->srv);
    for (int i = 0; !rc && i < p->nres; i++) {
        char path[600];
        snprintf(p->sock[i], sizeof(p->sock[i]), "gpusched-%s.sock", p->res[i]);
        for (char *c = p->sock[i]; *c; c++)
            *c = *c == '/' ? '_' : *c;
        snprintf(path, sizeof(path), "%s/%s", dir, p->sock[i]);
        rc = gs_grpc_server_listen(p->srv, path, d);
        rc = rc < 0 ? rc : 0;
    }
    if (!rc && pthread_create(&p->thread, NULL, serve, p) != 0)
        rc = gs_diag_error_code(d, -EAGAIN, "cannot start the device plugin's thread");
    else if (!rc && (rc = register_all(p, timeout_ms, d)) != 0)
        gs_plugin_stop(p);
    if (rc && !p->thread)
        gs_grpc_server_free(p->srv), free(p);
    if (!rc)
        *out = p;
    return rc;
}

void gs_plugin_changed(struct gs_plugin *p)
{
    if (p)
        gs_grpc_server_notify(p->srv);
}

int gs_plugin_stale(const struct gs_plugin *p)
{
    char res[RES_MAX][GS_PLAN_RES_MAX];
    int n = gs_plan_resources(p->plan, res, RES_MAX);
    if (n != p->nres)
        return 1;
    for (int i = 0; i < n; i++)
        if (strcmp(res[i], p->res[i]) != 0)
            return 1;
    for (int i = 0; i < p->nres; i++)
        if (!inode(p->dir, p->sock[i]))
            return 1;
    return inode(p->dir, GS_PLUGIN_KUBELET) != p->kubelet_ino;
}

void gs_plugin_stop(struct gs_plugin *p)
{
    if (!p)
        return;
    p->stop = 1;
    pthread_join(p->thread, NULL);
    gs_grpc_server_free(p->srv);
    for (int i = 0; i < p->nres; i++) {
        char path[600];
        snprintf(path, sizeof(path), "%s/%s", p->dir, p->sock[i]);
        unlink(path);
    }
    free(p);
}
