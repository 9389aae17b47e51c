/*
 * A fake kubelet for the node agent's tests, built on the same gRPC library as the agent: the
 * Registration service on <dir>/kubelet.sock (it records what registers), and the device manager's
 * side of the device plugin API: list a resource's devices (ListAndWatch), and admit a pod's
 * containers as kubelet's devicemanager does (init containers first; devices of an init container
 * reused by the containers after it; GetPreferredAllocation among the devices not yet handed out,
 * with the reused ones as must-includes, then Allocate). Its pod resources API (List, on
 * fake_kubelet_podres()) names the pods admitted and the one being admitted, as kubelet's does.
 */
#ifndef GS_TEST_FAKE_KUBELET_H
#define GS_TEST_FAKE_KUBELET_H

#define FK_MAX 64

struct fake_kubelet;

/* The Registration service on @dir/kubelet.sock, served from a thread. NULL on failure. */
struct fake_kubelet *fake_kubelet_start(const char *dir);
void fake_kubelet_stop(struct fake_kubelet *k);

/* The socket of its pod resources API (<dir>/../pod-resources.sock). */
const char *fake_kubelet_podres(const struct fake_kubelet *k);

/* The endpoint (socket file name) registered for @resource, or NULL; waits up to @ms. */
const char *fake_kubelet_endpoint(struct fake_kubelet *k, const char *resource, int ms);

/* One device of a ListAndWatch answer. */
struct fk_device {
    char id[128];
    int healthy, numa;
};

/* The first ListAndWatch answer for @resource; -1 on failure (message on stderr). */
int fake_kubelet_list(struct fake_kubelet *k, const char *resource, struct fk_device *out, int max);

/* What Allocate answered for one container. */
struct fk_alloc {
    int nenv, nmount, ncdi;
    char key[16][64], val[16][1024];
    char host[4][256], ctr[4][256];
    int ro[4]; /* the mount is read-only */
    char cdi[16][160];
    char pod[300]; /* the gpusched.io/pod annotation */
    char ids[16][128];
    int nids;
};

/*
 * fake_kubelet_admit() - kubelet admitting pod @pod ("namespace/name") of one container asking @n
 * devices of @resource: its preference among the healthy devices this fake kubelet has not handed
 * out, then Allocate of the devices preferred (or, with @ignore_preference, of the first @n free
 * ones). Return: 0 and @out; the gRPC status or -1 on failure (@err holds the message).
 */
int fake_kubelet_admit(struct fake_kubelet *k, const char *pod, const char *resource, int n,
                       int ignore_preference, struct fk_alloc *out, char *err, int errlen);

/* One container of a pod: @n devices of the resource; @init 1 an init container, 2 a restartable
 * init container (a sidecar), 0 an app container. */
struct fk_container {
    int n, init;
};

/*
 * fake_kubelet_admit_pod() - kubelet admitting pod @pod ("namespace/name"), whose containers @c
 * (@nc, in kubelet's order: init containers first) ask for @resource, one Allocate each, written
 * to @out[i]. A failed container gives back every device the pod got and forgets the pod, as
 * kubelet does with a pod it rejects. Return: 0; the gRPC status or -1 (@err holds the message).
 */
int fake_kubelet_admit_pod(struct fake_kubelet *k, const char *pod, const char *resource,
                           const struct fk_container *c, int nc, int ignore_preference,
                           struct fk_alloc *out, char *err, int errlen);

/* fake_kubelet_release() - pod @pod has gone: its devices (@a, @n containers) are free again. */
void fake_kubelet_release(struct fake_kubelet *k, const char *pod, const struct fk_alloc *a, int n);

/* fk_env() - the value of @key in @a, or NULL. */
const char *fk_env(const struct fk_alloc *a, const char *key);

#endif
