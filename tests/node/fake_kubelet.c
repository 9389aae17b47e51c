/* A fake kubelet: Registration, and the device manager's calls. See fake_kubelet.h. */
#include "fake_kubelet.h"

#include "deviceplugin.pb-c.h"
#include "node/grpcio.h"
#include "podresources.pb-c.h"

#include "gpusched/diag.h"

#include <dirent.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct fake_kubelet {
    char dir[256];
    struct gs_grpc_server *srv;
    pthread_t thread;
    volatile int stop;
    pthread_mutex_t lock;
    int nreg;
    char res[FK_MAX][64], ep[FK_MAX][128];
    int nused;
    char used[FK_MAX * 4][128]; /* device IDs handed out */
    char podres[300];           /* its pod resources socket */
    int npods;
    char pods[FK_MAX][320]; /* "namespace/name" of the pods it has */
};

static int reg(void *ud, int ep, const ProtobufCMessage *req, uint8_t **out, size_t *len, char *err,
               size_t n)
{
    struct fake_kubelet *k = ud;
    const V1beta1__RegisterRequest *r = (const void *)req;
    V1beta1__Empty e = V1BETA1__EMPTY__INIT;
    (void)ep;
    if (strcmp(r->version, "v1beta1") != 0) {
        snprintf(err, n, "version %s not supported", r->version);
        return 3; /* INVALID_ARGUMENT */
    }
    pthread_mutex_lock(&k->lock);
    int i = 0;
    while (i < k->nreg && strcmp(k->res[i], r->resource_name) != 0)
        i++;
    if (i < FK_MAX) {
        snprintf(k->res[i], sizeof(k->res[i]), "%s", r->resource_name);
        snprintf(k->ep[i], sizeof(k->ep[i]), "%s", r->endpoint);
        k->nreg += i == k->nreg;
    }
    pthread_mutex_unlock(&k->lock);
    return gs_grpc_pack(&e.base, out, len);
}

/* The pod resources API's List: the pods it has (their devices are not the agent's business). */
static int list_pods(void *ud, int ep, const ProtobufCMessage *req, uint8_t **out, size_t *len,
                     char *err, size_t n)
{
    struct fake_kubelet *k = ud;
    static V1__PodResources pr[FK_MAX], *prp[FK_MAX];
    static char ns[FK_MAX][320];
    V1__ListPodResourcesResponse r = V1__LIST_POD_RESOURCES_RESPONSE__INIT;
    (void)ep, (void)req, (void)err, (void)n;
    pthread_mutex_lock(&k->lock);
    for (int i = 0; i < k->npods; i++) {
        v1__pod_resources__init(&pr[i]);
        snprintf(ns[i], sizeof(ns[i]), "%s", k->pods[i]);
        char *slash = strchr(ns[i], '/');
        *slash = '\0';
        pr[i].namespace_ = ns[i];
        pr[i].name = slash + 1;
        prp[i] = &pr[i];
    }
    r.n_pod_resources = (size_t)k->npods;
    r.pod_resources = prp;
    int rc = gs_grpc_pack(&r.base, out, len);
    pthread_mutex_unlock(&k->lock);
    return rc;
}

static const struct gs_grpc_method methods[] = {
    {"/v1beta1.Registration/Register", &v1beta1__register_request__descriptor, 0, reg},
    {"/v1.PodResourcesLister/List", &v1__list_pod_resources_request__descriptor, 0, list_pods}};

static void *serve(void *arg)
{
    struct fake_kubelet *k = arg;
    gs_grpc_server_run(k->srv, &k->stop);
    return NULL;
}

struct fake_kubelet *fake_kubelet_start(const char *dir)
{
    struct fake_kubelet *k = calloc(1, sizeof(*k));
    char path[300];
    struct gs_diag d;
    gs_diag_init(&d);
    snprintf(k->dir, sizeof(k->dir), "%s", dir);
    snprintf(path, sizeof(path), "%s/kubelet.sock", dir);
    pthread_mutex_init(&k->lock, NULL);
    /* kubelet's device manager empties the folder when it starts: plugins must register again */
    DIR *dd = opendir(dir);
    for (struct dirent *e; dd && (e = readdir(dd)) != NULL;) {
        char f[600];
        snprintf(f, sizeof(f), "%s/%s", dir, e->d_name);
        if (strstr(e->d_name, ".sock"))
            unlink(f);
    }
    if (dd)
        closedir(dd);
    snprintf(k->podres, sizeof(k->podres), "%s/../pod-resources.sock", dir);
    if (gs_grpc_server_new(methods, 2, k, &k->srv) || gs_grpc_server_listen(k->srv, path, &d) < 0 ||
        gs_grpc_server_listen(k->srv, k->podres, &d) < 0 ||
        pthread_create(&k->thread, NULL, serve, k)) {
        fprintf(stderr, "fake kubelet: %s\n", d.msg);
        return NULL;
    }
    return k;
}

void fake_kubelet_stop(struct fake_kubelet *k)
{
    if (!k)
        return;
    k->stop = 1;
    pthread_join(k->thread, NULL);
    gs_grpc_server_free(k->srv);
    pthread_mutex_destroy(&k->lock);
    free(k);
}

const char *fake_kubelet_podres(const struct fake_kubelet *k)
{
    return k->podres;
}

/* Pod @pod joins (@on) or leaves the pods it has. Return: whether it was new. */
static int has_pod(struct fake_kubelet *k, const char *pod, int on)
{
    int at = -1, added = 0;
    pthread_mutex_lock(&k->lock);
    for (int i = 0; i < k->npods; i++)
        at = strcmp(k->pods[i], pod) ? at : i;
    if (on && at < 0 && k->npods < FK_MAX && strchr(pod, '/')) {
        snprintf(k->pods[k->npods++], sizeof(k->pods[0]), "%s", pod);
        added = 1;
    } else if (!on && at >= 0) {
        memcpy(k->pods[at], k->pods[--k->npods], sizeof(k->pods[0]));
    }
    pthread_mutex_unlock(&k->lock);
    return added;
}

const char *fake_kubelet_endpoint(struct fake_kubelet *k, const char *resource, int ms)
{
    for (int waited = 0; waited <= ms; waited += 20) {
        pthread_mutex_lock(&k->lock);
        for (int i = 0; i < k->nreg; i++)
            if (!strcmp(k->res[i], resource)) {
                pthread_mutex_unlock(&k->lock);
                return k->ep[i];
            }
        pthread_mutex_unlock(&k->lock);
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int sock_of(struct fake_kubelet *k, const char *resource, char *path, size_t n)
{
    const char *ep = fake_kubelet_endpoint(k, resource, 5000);
    if (!ep) {
        fprintf(stderr, "fake kubelet: %s never registered\n", resource);
        return -1;
    }
    snprintf(path, n, "%s/%s", k->dir, ep);
    return 0;
}

int fake_kubelet_list(struct fake_kubelet *k, const char *resource, struct fk_device *out, int max)
{
    char path[400];
    struct gs_grpc_stream *st;
    ProtobufCMessage *m;
    struct gs_diag d;
    V1beta1__Empty e = V1BETA1__EMPTY__INIT;
    gs_diag_init(&d);
    if (sock_of(k, resource, path, sizeof(path)) ||
        gs_grpc_stream_open(path, "/v1beta1.DevicePlugin/ListAndWatch", &e.base, &st, 5000, &d) ||
        gs_grpc_stream_next(st, &v1beta1__list_and_watch_response__descriptor, &m, 5000, &d)) {
        fprintf(stderr, "fake kubelet: ListAndWatch %s: %s\n", resource, d.msg);
        return -1;
    }
    const V1beta1__ListAndWatchResponse *r = (const void *)m;
    int n = 0;
    for (size_t i = 0; i < r->n_devices && n < max; i++, n++) {
        snprintf(out[n].id, sizeof(out[n].id), "%s", r->devices[i]->id);
        out[n].healthy = !strcmp(r->devices[i]->health, "Healthy");
        out[n].numa = r->devices[i]->topology && r->devices[i]->topology->n_nodes
                          ? (int)r->devices[i]->topology->nodes[0]->id
                          : -1;
    }
    protobuf_c_message_free_unpacked(m, NULL);
    gs_grpc_stream_close(st);
    return n;
}

static int used(struct fake_kubelet *k, const char *id)
{
    for (int i = 0; i < k->nused; i++)
        if (!strcmp(k->used[i], id))
            return 1;
    return 0;
}

static void fill(struct fk_alloc *a, const V1beta1__ContainerAllocateResponse *r)
{
    for (size_t i = 0; i < r->n_envs && a->nenv < 16; i++, a->nenv++) {
        snprintf(a->key[a->nenv], sizeof(a->key[0]), "%s", r->envs[i]->key);
        snprintf(a->val[a->nenv], sizeof(a->val[0]), "%s", r->envs[i]->value);
    }
    for (size_t i = 0; i < r->n_mounts && a->nmount < 4; i++, a->nmount++) {
        snprintf(a->host[a->nmount], sizeof(a->host[0]), "%s", r->mounts[i]->host_path);
        snprintf(a->ctr[a->nmount], sizeof(a->ctr[0]), "%s", r->mounts[i]->container_path);
        a->ro[a->nmount] = r->mounts[i]->read_only;
    }
    for (size_t i = 0; i < r->n_cdi_devices && a->ncdi < 16; i++, a->ncdi++)
        snprintf(a->cdi[a->ncdi], sizeof(a->cdi[0]), "%s", r->cdi_devices[i]->name);
    for (size_t i = 0; i < r->n_annotations; i++)
        if (!strcmp(r->annotations[i]->key, "gpusched.io/pod"))
            snprintf(a->pod, sizeof(a->pod), "%s", r->annotations[i]->value);
}

static int in_list(char (*list)[128], int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i], id))
            return 1;
    return 0;
}

/* kubelet's GetPreferredAllocation for @n devices, must-including @chosen[0..*@have-1]: adds to
 * @chosen (and *@have) what the preference names among @avail. Return: 0; the gRPC status. */
static int prefer(const char *path, char **avail, int na, char **chosen, int *have_io, int n,
                  char *err, int errlen)
{
    int have = *have_io;
    static char *offer[1024];
    ProtobufCMessage *m = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    int no = 0;
    for (int i = 0; i < have; i++) /* kubelet offers the reused ones too */
        offer[no++] = chosen[i];
    for (int i = 0; i < na && no < 1024; i++)
        offer[no++] = avail[i];
    V1beta1__ContainerPreferredAllocationRequest c =
        V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
    V1beta1__ContainerPreferredAllocationRequest *cp = &c;
    V1beta1__PreferredAllocationRequest q = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
    c.n_available_deviceids = (size_t)no;
    c.available_deviceids = offer;
    c.n_must_include_deviceids = (size_t)have;
    c.must_include_deviceids = chosen;
    c.allocation_size = n;
    q.n_container_requests = 1;
    q.container_requests = &cp;
    int rc = gs_grpc_call(path, "/v1beta1.DevicePlugin/GetPreferredAllocation", &q.base,
                          &v1beta1__preferred_allocation_response__descriptor, &m, 5000, &d);
    if (rc) {
        snprintf(err, (size_t)errlen, "%s", d.msg);
        return rc;
    }
    const V1beta1__PreferredAllocationResponse *r = (const void *)m;
    for (size_t i = 0; r->n_container_responses && i < r->container_responses[0]->n_deviceids; i++)
        for (int a = 0; a < na && have < n; a++) /* kubelet takes only IDs it offered */
            if (!strcmp(avail[a], r->container_responses[0]->deviceids[i])) {
                int dup = 0;
                for (int j = 0; j < have; j++)
                    dup |= chosen[j] == avail[a];
                if (!dup)
                    chosen[have++] = avail[a];
            }
    protobuf_c_message_free_unpacked(m, NULL);
    *have_io = have;
    return 0;
}

/* One container: devices @chosen (@n) chosen, then Allocate. */
static int container(struct fake_kubelet *k, const char *path, char (*reuse)[128], int nreuse,
                     int n, int ignore_preference, struct fk_alloc *out, char *err, int errlen,
                     const char *resource)
{
    static struct fk_device dev[1024];
    static char *avail[1024];
    char *chosen[16];
    ProtobufCMessage *m = NULL;
    struct gs_diag d;
    gs_diag_init(&d);
    memset(out, 0, sizeof(*out));
    int have = 0, na = 0, rc;
    for (int i = 0; i < nreuse && have < n; i++) /* "Allocates from reusableDevices list first" */
        chosen[have++] = reuse[i];
    if (have < n) {
        int nd = fake_kubelet_list(k, resource, dev, 1024);
        if (nd < 0)
            return -1;
        for (int i = 0; i < nd; i++)
            if (dev[i].healthy && !used(k, dev[i].id) && !in_list(reuse, nreuse, dev[i].id))
                avail[na++] = dev[i].id;
        if (na < n - have) {
            snprintf(err, (size_t)errlen, "only %d free %s", na, resource);
            return -1;
        }
        int from = have;
        if (!ignore_preference && (rc = prefer(path, avail, na, chosen, &have, n, err, errlen)))
            return rc;
        for (int i = 0; i < na && have < n; i++) { /* what the preference did not name */
            int dup = 0;
            for (int j = from; j < have; j++)
                dup |= chosen[j] == avail[i];
            if (!dup)
                chosen[have++] = avail[i];
        }
    }
    V1beta1__ContainerAllocateRequest c = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
    V1beta1__ContainerAllocateRequest *cp = &c;
    V1beta1__AllocateRequest q = V1BETA1__ALLOCATE_REQUEST__INIT;
    c.n_devices_ids = (size_t)n;
    c.devices_ids = chosen;
    q.n_container_requests = 1;
    q.container_requests = &cp;
    rc = gs_grpc_call(path, "/v1beta1.DevicePlugin/Allocate", &q.base,
                      &v1beta1__allocate_response__descriptor, &m, 5000, &d);
    if (rc) {
        snprintf(err, (size_t)errlen, "%s", d.msg);
        return rc;
    }
    const V1beta1__AllocateResponse *r = (const void *)m;
    if (r->n_container_responses == 1)
        fill(out, r->container_responses[0]);
    protobuf_c_message_free_unpacked(m, NULL);
    for (int i = 0; i < n; i++)
        snprintf(out->ids[out->nids++], sizeof(out->ids[0]), "%s", chosen[i]);
    return 0;
}

int fake_kubelet_admit_pod(struct fake_kubelet *k, const char *pod, const char *resource,
                           const struct fk_container *c, int nc, int ignore_preference,
                           struct fk_alloc *out, char *err, int errlen)
{
    char path[400], reuse[16][128];
    int nreuse = 0, first = k->nused;
    if (sock_of(k, resource, path, sizeof(path)))
        return -1;
    int added = has_pod(k, pod, 1); /* kubelet's pod manager has it before admission */
    for (int i = 0; i < nc; i++) {
        int rc = container(k, path, reuse, nreuse, c[i].n, ignore_preference, &out[i], err, errlen,
                           resource);
        if (rc) {
            k->nused = first;
            if (added)
                has_pod(k, pod, 0);
            return rc;
        }
        for (int j = 0; j < out[i].nids; j++) {
            const char *id = out[i].ids[j];
            if (!used(k, id) && k->nused < FK_MAX * 4)
                snprintf(k->used[k->nused++], sizeof(k->used[0]), "%s", id);
            int at = -1;
            for (int r = 0; r < nreuse; r++)
                at = strcmp(reuse[r], id) ? at : r;
            if (c[i].init == 1 && at < 0 && nreuse < 16) /* an init container's: reusable */
                snprintf(reuse[nreuse++], sizeof(reuse[0]), "%s", id);
            else if (c[i].init != 1 && at >= 0) /* an app container's or a sidecar's: its own */
                memcpy(reuse[at], reuse[--nreuse], sizeof(reuse[0]));
        }
    }
    return 0;
}

int fake_kubelet_admit(struct fake_kubelet *k, const char *pod, const char *resource, int n,
                       int ignore_preference, struct fk_alloc *out, char *err, int errlen)
{
    struct fk_container c = {n, 0};
    return fake_kubelet_admit_pod(k, pod, resource, &c, 1, ignore_preference, out, err, errlen);
}

void fake_kubelet_release(struct fake_kubelet *k, const char *pod, const struct fk_alloc *a, int n)
{
    has_pod(k, pod, 0);
    for (int c = 0; c < n; c++)
        for (int j = 0; j < a[c].nids; j++)
            for (int i = 0; i < k->nused; i++)
                if (!strcmp(k->used[i], a[c].ids[j])) {
                    memcpy(k->used[i], k->used[--k->nused], sizeof(k->used[0]));
                    break;
                }
}

const char *fk_env(const struct fk_alloc *a, const char *key)
{
    for (int i = 0; i < a->nenv; i++)
        if (!strcmp(a->key[i], key))
            return a->val[i];
    return NULL;
}
