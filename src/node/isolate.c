/* Tenants' CPU weights on pod cgroups, and the CDI spec. Contract: isolate.h. */
#include "isolate.h"

#include "plan.h"

#include "gpusched/diag.h"
#include "gpusched/topo.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_text(const char *path, const char *text, struct gs_diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return gs_diag_error_code(d, -errno, "%s: %s", path, strerror(errno));
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    return bad ? gs_diag_error_code(d, -EIO, "%s: write failed", path) : 0;
}

/* The folder of pod @uid's cgroup under @root, in either of kubelet's layouts; -ENOENT if none. */
static int pod_cgroup(const char *root, const char *uid, char *out, size_t n)
{
    static const char *const qos[] = {"", "burstable", "besteffort"};
    char u[64];
    struct stat st;
    size_t k = strlen(uid);
    if (k == 0 || k >= sizeof(u) || strspn(uid, "0123456789abcdefABCDEF-") != k)
        return -EINVAL; /* Kubernetes pod UIDs are RFC 4122 UUIDs */
    for (size_t i = 0; i <= k; i++)
        u[i] = uid[i] == '-' ? '_' : uid[i];
    for (int q = 0; q < 3; q++)
        for (int driver = 0; driver < 2; driver++) {
            if (driver == 0 && *qos[q])
                snprintf(out, n, "%s/kubepods.slice/kubepods-%s.slice/kubepods-%s-pod%s.slice",
                         root, qos[q], qos[q], u);
            else if (driver == 0)
                snprintf(out, n, "%s/kubepods.slice/kubepods-pod%s.slice", root, u);
            else
                snprintf(out, n, "%s/kubepods/%s%spod%s", root, qos[q], *qos[q] ? "/" : "", uid);
            if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
                return 0;
        }
    return -ENOENT;
}

/* Pod @q's cpu.weight in @dir, as the formula in isolate.h has it. */
static int weigh(struct gs_plan_pod *q, const char *dir, struct gs_diag *d)
{
    char path[600], buf[32], *end;
    snprintf(path, sizeof(path), "%s/cpu.weight", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return gs_diag_error_code(d, -errno, "%s: %s", path, strerror(errno));
    char *got = fgets(buf, sizeof(buf), f);
    fclose(f);
    long now = got ? strtol(buf, &end, 10) : 0;
    if (!got || now < 1 || now > 10000 || (*end && *end != '\n'))
        return gs_diag_error_code(d, -EINVAL, "%s: not a cgroup v2 cpu.weight (1..10000)", path);
    if (now != q->cg_wrote) /* kubelet's (or systemd's) own, first seen or written again */
        q->cg_base = (uint16_t)now;
    int64_t want = q->tenant_weight_min > 0
                       ? (int64_t)q->cg_base * q->tenant_weight / q->tenant_weight_min
                       : q->cg_base;
    want = want < 1 ? 1 : want > 10000 ? 10000 : want;
    snprintf(buf, sizeof(buf), "%lld", (long long)want);
    int rc = want == now ? 0 : write_text(path, buf, d);
    if (!rc)
        q->cg_wrote = (uint16_t)want;
    return rc;
}

int gs_cgroup_apply(struct gs_plan *p, const char *root, struct gs_diag *d)
{
    char dir[512];
    int first = 0;
    for (int i = 0; i < p->npods; i++) {
        struct gs_plan_pod *q = &p->pods[i];
        if (pod_cgroup(root, q->uid, dir, sizeof(dir)))
            continue; /* not started yet, or not a Kubernetes pod */
        int rc = weigh(q, dir, first ? NULL : d);
        first = first ? first : rc;
    }
    return first;
}

static json_t *device(const char *name, int minor, const char *visible)
{
    char node[40];
    json_t *nodes = json_array();
    if (minor >= 0) {
        snprintf(node, sizeof(node), "/dev/nvidia%d", minor);
        json_array_append_new(nodes, json_pack("{s:s}", "path", node));
    }
    char env[160];
    snprintf(env, sizeof(env), "NVIDIA_VISIBLE_DEVICES=%s", visible);
    return json_pack("{s:s, s:{s:o, s:[s]}}", "name", name, "containerEdits", "deviceNodes", nodes,
                     "env", env);
}

/* @dir and every missing folder above it, each made mode 0755 whatever the umask, as mkdir -p
 * (and the CDI library's os.MkdirAll) makes them. Return: 0; -errno of the first that failed. */
static int make_folders(const char *dir)
{
    char p[512];
    if (!*dir)
        return -ENOENT;
    if (snprintf(p, sizeof(p), "%s", dir) >= (int)sizeof(p))
        return -ENAMETOOLONG;
    for (char *c = p + 1;; c++) {
        int last = !*c;
        if (*c != '/' && !last)
            continue;
        *c = '\0';
        if (c > p && c[-1] != '/') {
            if (mkdir(p, 0755) == 0) {
                if (chmod(p, 0755) != 0)
                    return -errno;
            } else if (errno != EEXIST) {
                return -errno;
            }
        }
        if (last)
            return 0;
        *c = '/';
    }
}

int gs_cdi_write(const struct gs_topo *t, const char *dir, struct gs_diag *d)
{
    json_t *devs = json_array();
    for (int g = 0; devs && g < t->ngpus; g++) {
        json_array_append_new(devs, device(t->gpu[g].uuid, t->gpu[g].minor, t->gpu[g].uuid));
        for (int i = 0; i < t->gpu[g].nmig; i++)
            json_array_append_new(
                devs, device(t->gpu[g].mig[i].uuid, t->gpu[g].minor, t->gpu[g].mig[i].uuid));
    }
    /* CDI specification 0.6.0: cdiVersion, kind, devices, containerEdits */
    json_t *spec =
        json_pack("{s:s, s:s, s:o, s:{s:[{s:s},{s:s},{s:s}]}}", "cdiVersion", "0.6.0", "kind",
                  "gpusched.io/gpu", "devices", devs, "containerEdits", "deviceNodes", "path",
                  "/dev/nvidiactl", "path", "/dev/nvidia-uvm", "path", "/dev/nvidia-uvm-tools");
    char path[512], tmp[520];
    snprintf(path, sizeof(path), "%s/gpusched.io-gpu.json", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    /* the spec folder is made by whoever writes a spec first, as the CDI library does */
    int rc = make_folders(dir);
    errno = 0;
    if (!rc && (!spec || json_dump_file(spec, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))
        rc = errno ? -errno : -EIO;
    json_decref(spec);
    if (!rc && rename(tmp, path) != 0)
        rc = -errno;
    return rc ? gs_diag_error_code(d, rc, "%s: cannot write the CDI spec: %s", path, strerror(-rc))
              : 0;
}

/* Make @path a folder of @mode, or give the folder there that mode (kubelet makes a hostPath
 * folder 0755). Return: 0; -errno with @d. */
static int folder(const char *path, mode_t mode, struct gs_diag *d)
{
    struct stat st;
    if (mkdir(path, mode) != 0 &&
        (errno != EEXIST || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)))
        return gs_diag_error_code(d, errno == EEXIST ? -ENOTDIR : -errno, "%s: %s", path,
                                  errno == EEXIST ? "not a folder" : strerror(errno));
    return chmod(path, mode) == 0 ? 0
                                  : gs_diag_error_code(d, -errno, "%s: %s", path, strerror(errno));
}

/* Pod @q's folder and region file under @root (modes: isolate.h). */
static int pod_region(const char *root, const struct gs_plan_pod *q, struct gs_diag *d)
{
    char dir[600], file[620];
    snprintf(dir, sizeof(dir), "%s/%s", root, q->uid);
    snprintf(file, sizeof(file), "%s/%s", dir, GS_PLAN_REGION_FILE);
    int rc = folder(dir, 0711, d);
    if (rc)
        return rc;
    /* umask would narrow the mode: fchmod sets it exactly, on the file that was opened */
    int fd = open(file, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 || fchmod(fd, 0666) != 0)
        rc = gs_diag_error_code(d, -errno, "%s: %s", file, strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

static int bound(const struct gs_plan *p, const char *uid)
{
    for (int i = 0; i < p->npods; i++)
        if (gs_plan_pod_shared(&p->pods[i]) && !strcmp(p->pods[i].uid, uid))
            return 1;
    return 0;
}

/* Remove entry @name of the folder open as @dfd: a pod's folder with its region file; anything
 * else (a link, a file) itself, never what a link names, even one swapped in meanwhile (no
 * path through the entry is followed). Return: 0; -errno. */
static int remove_entry(int dfd, const char *name)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : -errno;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(dfd, name, 0) == 0 || errno == ENOENT ? 0 : -errno;
    int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0)
        return -errno;
    int rc = unlinkat(sub, GS_PLAN_REGION_FILE, 0) == 0 || errno == ENOENT ? 0 : -errno;
    close(sub);
    return rc ? rc : unlinkat(dfd, name, AT_REMOVEDIR) == 0 ? 0 : -errno;
}

int gs_pod_regions_sync(const struct gs_plan *p, const char *root, struct gs_diag *d)
{
    int first = folder(root, 0700, d);
    if (first)
        return first;
    for (int i = 0; i < p->npods; i++) {
        int rc =
            gs_plan_pod_shared(&p->pods[i]) ? pod_region(root, &p->pods[i], first ? NULL : d) : 0;
        first = first ? first : rc;
    }
    DIR *dir = opendir(root);
    if (!dir)
        return first ? first : gs_diag_error_code(d, -errno, "%s: %s", root, strerror(errno));
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.' || bound(p, e->d_name))
            continue;
        int rc = remove_entry(dirfd(dir), e->d_name);
        if (rc)
            rc = gs_diag_error_code(first ? NULL : d, rc, "%s/%s: cannot remove: %s", root,
                                    e->d_name, strerror(-rc));
        first = first ? first : rc;
    }
    closedir(dir);
    return first;
}
