/*
 * A fake kubelet for the node agent's tests, built on the same gRPC library as the agent: the
 * Registration service on <dir>/kubelet.sock (it records what registers), and the device manager's
 * side of the device plugin API: list a resource's devices (ListAndWatch), and admit a container
 * as kubelet does (GetPreferredAllocation among the devices not yet handed out, then Allocate of
 * the preferred ones).
 */
#ifndef GS_TEST_FAKE_KUBELET_H
#define GS_TEST_FAKE_KUBELET_H

#define FK_MAX 64

struct fake_kubelet;

/* The Registration service on @dir/kubelet.sock, served from a thread. NULL on failure. */
struct fake_kubelet *fake_kubelet_start(const char *dir);
void fake_kubelet_stop(struct fake_kubelet *k);

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
    char cdi[16][160];
    char pod[300]; /* the gpusched.io/pod annotation */
    char ids[16][128];
    int nids;
};

/*
 * fake_kubelet_admit() - kubelet admitting a container asking @n devices of @resource: its
 * preference among the healthy devices this fake kubelet has not handed out, then Allocate of the
 * devices preferred (or, with @ignore_preference, of the first @n free ones). Return: 0 and @out;
 * the gRPC status or -1 on failure (@err holds the message).
 */
int fake_kubelet_admit(struct fake_kubelet *k, const char *resource, int n, int ignore_preference,
                       struct fk_alloc *out, char *err, int errlen);

/* fk_env() - the value of @key in @a, or NULL. */
const char *fk_env(const struct fk_alloc *a, const char *key);

#endif
