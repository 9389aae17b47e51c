/* The machine's topology tree from NVML, nvidia-smi text or hwloc. Contract: discover.h. */
#include "discover.h"

#include "nvml.h"

#include "gpusched/diag.h"
#include "gpusched/topo.h"
#include "gpusched/topotext.h"

#include <errno.h>
#include <hwloc.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *gs_discover_source_name(enum gs_discover_source s)
{
    return s == GS_FROM_NVML ? "nvml" : s == GS_FROM_SMI ? "nvidia-smi" : "hwloc";
}

/* What waitpid()'s @status says of `@smi topo -m`, with the first line it wrote to standard
 * error (@err, "" none: nvidia-smi says there why it failed, "NVIDIA-SMI has failed because it
 * couldn't communicate with the NVIDIA driver"); the shell answers 127 for a command it cannot
 * find (POSIX, "Command Search and Execution"). Returns -ENOENT. */
static int smi_failed(const char *smi, int status, const char *err, struct gs_diag *d)
{
    int line = (int)strcspn(err, "\n");
    if (WIFSIGNALED(status))
        return gs_diag_error_code(d, -ENOENT, "%s topo -m killed by signal %d", smi,
                                  WTERMSIG(status));
    if (WEXITSTATUS(status) == 127)
        return gs_diag_error_code(d, -ENOENT, "%s: not found", smi);
    return gs_diag_error_code(d, -ENOENT, "%s topo -m exited with status %d%s%.*s", smi,
                              WEXITSTATUS(status), line ? ": " : "", line, err);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* `sh -c @cmd` in a process group of its own (so that whatever it starts can be killed with it),
 * its standard output into *@fd, its standard error into *@efd. Return: the child's pid; -errno. */
static pid_t spawn_sh(const char *cmd, int *fd, int *efd)
{
    int p[2], q[2];
    if (pipe(p))
        return -errno;
    if (pipe(q)) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return -e;
    }
    pid_t pid = fork();
    if (pid == 0) { /* only async-signal-safe calls until exec */
        setpgid(0, 0);
        dup2(p[1], 1);
        dup2(q[1], 2);
        close(p[0]);
        close(p[1]);
        close(q[0]);
        close(q[1]);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int e = errno;
    if (pid > 0) /* also here: a kill of the group must not come before the child's own call */
        setpgid(pid, pid);
    close(p[1]);
    close(q[1]);
    if (pid < 0) {
        close(p[0]);
        close(q[0]);
        return -e;
    }
    *fd = p[0];
    *efd = q[0];
    return pid;
}

/* What is ready on standard error @efd: the first @ecap - 1 bytes kept in @err (NUL-ended, @got
 * so far), the rest dropped so that the command never waits on a full pipe. Return: 0; -1 at
 * its end (or an error: it is read no more). */
static int read_err(int efd, char *err, size_t ecap, size_t *got)
{
    char tmp[512];
    ssize_t k = read(efd, tmp, sizeof(tmp));
    if (k < 0 && errno == EINTR)
        return 0;
    if (k <= 0)
        return -1;
    size_t take = *got + 1 < ecap ? ecap - 1 - *got : 0;
    take = take < (size_t)k ? take : (size_t)k;
    memcpy(err + *got, tmp, take);
    *got += take;
    err[*got] = '\0';
    return 0;
}

/*
 * Reads @fd into @buf until end of file, @cap + 1 bytes (one past the cap: over it) or @deadline
 * (now_ms()), and meanwhile standard error @efd as read_err() reads it into @err (@ecap bytes).
 * Return: the bytes read; -ETIMEDOUT; -EIO.
 */
static ssize_t read_until(int fd, char *buf, size_t cap, int efd, char *err, size_t ecap,
                          int64_t deadline)
{
    size_t n = 0, got = 0;
    err[0] = '\0';
    while (n <= cap) {
        int64_t left = deadline - now_ms();
        struct pollfd pf[2] = {{fd, POLLIN, 0}, {efd, POLLIN, 0}};
        int r =
            left > 0 ? poll(pf, efd >= 0 ? 2 : 1, (int)(left < INT32_MAX ? left : INT32_MAX)) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -EIO;
        if (r == 0)
            return -ETIMEDOUT;
        if (efd >= 0 && pf[1].revents && read_err(efd, err, ecap, &got))
            efd = -1;
        if (!pf[0].revents)
            continue;
        ssize_t k = read(fd, buf + n, cap + 1 - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -EIO;
        if (k == 0)
            break;
        n += (size_t)k;
    }
    return (ssize_t)n;
}

/*
 * `nvidia-smi topo -m`, run and read: at most GS_TOPOTEXT_MAX_BYTES within @timeout_ms; past
 * either, the command and what it started are killed and that is the error.
 */
static int from_smi(const char *smi, int timeout_ms, struct gs_topo *t, struct gs_diag *d)
{
    char cmd[512];
    const char *name = smi ? smi : GS_DISCOVER_SMI;
    snprintf(cmd, sizeof(cmd), "%s topo -m", name);
    char *buf = malloc(GS_TOPOTEXT_MAX_BYTES + 1), err[256];
    if (!buf)
        return gs_diag_error_code(d, -ENOMEM, "out of memory");
    int fd = -1, efd = -1, status = 0, rc;
    pid_t pid = spawn_sh(cmd, &fd, &efd);
    if (pid < 0) {
        free(buf);
        return gs_diag_error_code(d, (int)pid, "%s: %s", cmd, strerror((int)-pid));
    }
    ssize_t n =
        read_until(fd, buf, GS_TOPOTEXT_MAX_BYTES, efd, err, sizeof(err), now_ms() + timeout_ms);
    close(fd);
    if (n < 0 || (size_t)n > GS_TOPOTEXT_MAX_BYTES) { /* it would write or wait on: unread */
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL); /* itself too, even where its group could not be made */
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    size_t got = strlen(err); /* what it wrote to standard error once its output ended */
    for (struct pollfd pe = {efd, POLLIN, 0};
         poll(&pe, 1, 0) > 0 && !read_err(efd, err, sizeof(err), &got);)
        ;
    close(efd);
    if (!err[0] && n > 0 && (size_t)n <= GS_TOPOTEXT_MAX_BYTES) /* it may say why on its output */
        snprintf(err, sizeof(err), "%.*s", (int)n, buf);
    if (n == -ETIMEDOUT)
        rc = gs_diag_error_code(d, -ETIMEDOUT, "%s topo -m timed out after %g s: killed", name,
                                timeout_ms / 1000.0);
    else if (n < 0)
        rc = gs_diag_error_code(d, -EIO, "%s topo -m: read error", name);
    else if ((size_t)n > GS_TOPOTEXT_MAX_BYTES)
        rc =
            gs_diag_error_code(d, -E2BIG, "%s topo -m printed more than %zu bytes, the cap: killed",
                               name, GS_TOPOTEXT_MAX_BYTES);
    else if (status != 0)
        rc = smi_failed(name, status, err, d);
    else
        rc = gs_topo_parse_text("nvidia-smi topo -m", buf, (size_t)n, t, d);
    free(buf);
    return rc;
}

/* The bridges from @o up to its host bridge, nearest first; returns how many. */
static int bridges_up(hwloc_obj_t o, hwloc_obj_t *out, int max)
{
    int n = 0;
    for (hwloc_obj_t p = o->parent; p && p->type == HWLOC_OBJ_BRIDGE && n < max; p = p->parent)
        out[n++] = p;
    return n;
}

/* nvidia-smi's class of two PCI devices from the bridges above them and their CPU sets. */
static enum gs_link hwloc_class(hwloc_obj_t a, hwloc_obj_t b)
{
    hwloc_obj_t ua[32], ub[32];
    int na = bridges_up(a, ua, 32), nb = bridges_up(b, ub, 32);
    for (int i = 0; i < na; i++)
        for (int k = 0; k < nb; k++) {
            if (ua[i] != ub[k])
                continue;
            if (ua[i]->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST)
                return GS_LINK_PHB;
            /* one PCIe switch between them (its upstream bridge, and at most its downstream
             * port above each) is PIX; more bridges is PXB: nvidia-smi's legend */
            return i <= 1 && k <= 1 ? GS_LINK_PIX : GS_LINK_PXB;
        }
    hwloc_obj_t ca = hwloc_get_non_io_ancestor_obj(NULL, a);
    hwloc_obj_t cb = hwloc_get_non_io_ancestor_obj(NULL, b);
    if (ca && cb && ca->nodeset && cb->nodeset && hwloc_bitmap_isequal(ca->nodeset, cb->nodeset))
        return GS_LINK_NODE;
    return GS_LINK_SYS;
}

int gs_discover_hwloc(const char *xml, struct gs_topo *t, struct gs_diag *d)
{
    hwloc_topology_t topo;
    hwloc_obj_t gpu[GS_GPUS_MAX];
    gs_topo_init(t);
    if (hwloc_topology_init(&topo) < 0)
        return gs_diag_error_code(d, -EIO, "hwloc_topology_init failed");
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    if ((xml && hwloc_topology_set_xml(topo, xml) < 0) || hwloc_topology_load(topo) < 0) {
        hwloc_topology_destroy(topo);
        return xml ? gs_diag_error_code(d, -EINVAL,
                                        "hwloc cannot load %s: not a topology as `lstopo "
                                        "FILE.xml` writes one",
                                        xml)
                   : gs_diag_error_code(d, -EIO, "hwloc cannot load this machine's topology");
    }
    int rc = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(topo, o)) != NULL;) {
        unsigned cls = o->attr->pcidev.class_id >> 8;
        if (o->attr->pcidev.vendor_id != 0x10de || cls != 0x03)
            continue; /* NVIDIA's display (0x0300) and 3D (0x0302) controllers only */
        if (t->ngpus == GS_GPUS_MAX) {
            rc = gs_diag_error_code(d, -E2BIG, "hwloc: more than %d NVIDIA GPUs", GS_GPUS_MAX);
            break;
        }
        struct gs_topo_gpu *u = &t->gpu[t->ngpus];
        snprintf(u->pci, sizeof(u->pci), "%08x:%02x:%02x.%x", o->attr->pcidev.domain,
                 o->attr->pcidev.bus, o->attr->pcidev.dev, o->attr->pcidev.func);
        hwloc_obj_t cpu = hwloc_get_non_io_ancestor_obj(topo, o);
        if (cpu && cpu->nodeset && !hwloc_bitmap_iszero(cpu->nodeset)) {
            u->numa = hwloc_bitmap_first(cpu->nodeset);
            hwloc_bitmap_list_snprintf(u->numa_list, sizeof(u->numa_list), cpu->nodeset);
        }
        if (cpu && cpu->cpuset)
            hwloc_bitmap_list_snprintf(u->cpus, sizeof(u->cpus), cpu->cpuset);
        gpu[t->ngpus++] = o;
    }
    for (int a = 0; !rc && a < t->ngpus; a++)
        for (int b = 0; b < t->ngpus; b++)
            t->link[a][b] = (uint8_t)(a == b ? GS_LINK_SELF : hwloc_class(gpu[a], gpu[b]));
    hwloc_topology_destroy(topo);
    if (!rc)
        gs_topo_derive(t);
    return rc;
}

int gs_discover(const struct gs_discover_opts *o, struct gs_topo *t, struct gs_nvml **nvml,
                struct gs_diag *d)
{
    struct gs_nvml *n = NULL;
    struct gs_diag why;
    char first[GS_DIAG_MSG_MAX / 2], second[GS_DIAG_MSG_MAX / 2];
    gs_diag_init(&why);
    if (nvml)
        *nvml = NULL;
    int rc = gs_nvml_open(o->nvml_lib, &n, &why);
    if (!rc && (rc = gs_nvml_discover(n, o->sysfs ? o->sysfs : GS_DISCOVER_SYSFS, t, &why)) == 0 &&
        t->ngpus > 0) {
        if (nvml)
            *nvml = n;
        else
            gs_nvml_close(n);
        return GS_FROM_NVML;
    }
    gs_nvml_close(n);
    snprintf(first, sizeof(first), "NVML: %.200s", rc ? why.msg : "no GPU");
    if (o->log)
        fprintf(o->log, "discovery: %s; trying nvidia-smi\n", first);
    gs_diag_init(&why);
    rc = from_smi(o->smi, o->smi_timeout_ms > 0 ? o->smi_timeout_ms : GS_DISCOVER_SMI_TIMEOUT_MS, t,
                  &why);
    if (!rc && t->ngpus > 0)
        return GS_FROM_SMI;
    snprintf(second, sizeof(second), "%.200s", rc ? why.msg : "nvidia-smi: no GPU");
    if (o->log)
        fprintf(o->log, "discovery: %s; trying hwloc\n", second);
    gs_diag_init(&why);
    rc = gs_discover_hwloc(o->hwloc_xml, t, &why);
    if (!rc && t->ngpus > 0)
        return GS_FROM_HWLOC;
    return gs_diag_error_code(d, -ENODEV, "no GPU found: %s; %s; hwloc: %s", first, second,
                              rc ? why.msg : "no NVIDIA PCI device");
}
