/* cgroup v2 CPU weights per tenant, and the CDI spec. Contract: isolate.h. */
#define _DEFAULT_SOURCE /* DT_DIR */
#include "isolate.h"

#include "plan.h"

#include "gpusched/diag.h"
#include "gpusched/topo.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t gs_cpu_shares(int64_t milli)
{
    uint64_t s = milli <= 0 ? 2 : (uint64_t)milli * 1024 / 1000;
    return s < 2 ? 2 : s > 262144 ? 262144 : s;
}

uint64_t gs_cpu_weight(uint64_t shares)
{
    shares = shares < 2 ? 2 : shares > 262144 ? 262144 : shares;
    return 1 + ((shares - 2) * 9999) / 262142;
}

static int write_text(const char *path, const char *text, struct gs_diag *d)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return gs_diag_error_code(d, -errno, "%s: %s", path, strerror(errno));
    int bad = fputs(text, f) < 0;
    bad |= fclose(f) != 0;
    return bad ? gs_diag_error_code(d, -EIO, "%s: write failed", path) : 0;
}

static int mkdir_ok(const char *path, struct gs_diag *d)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    return gs_diag_error_code(d, -errno, "%s: %s", path, strerror(errno));
}

int gs_cgroup_apply(const struct gs_plan *p, const char *root, const char *parent,
                    struct gs_diag *d)
{
    char path[512], val[32];
    snprintf(path, sizeof(path), "%s/%s", root, parent);
    int rc = mkdir_ok(path, d);
    snprintf(path, sizeof(path), "%s/%s/cgroup.subtree_control", root, parent);
    if (!rc)
        rc = write_text(path, "+cpu", d);
    for (int i = 0; !rc && i < p->npods; i++) {
        const char *tenant = p->pods[i].tenant;
        int64_t milli = 0, seen = 0;
        for (int k = 0; k < p->npods; k++) {
            seen |= k < i && !strcmp(p->pods[k].tenant, tenant);
            milli += strcmp(p->pods[k].tenant, tenant) ? 0 : p->pods[k].cpu_milli;
        }
        if (seen)
            continue;
        snprintf(path, sizeof(path), "%s/%s/tenant-%.63s", root, parent, tenant);
        if ((rc = mkdir_ok(path, d)) != 0)
            break;
        snprintf(path, sizeof(path), "%s/%s/tenant-%.63s/cpu.weight", root, parent, tenant);
        snprintf(val, sizeof(val), "%llu", (unsigned long long)gs_cpu_weight(gs_cpu_shares(milli)));
        rc = write_text(path, val, d);
    }
    snprintf(path, sizeof(path), "%s/%s", root, parent);
    DIR *dir = rc ? NULL : opendir(path);
    for (struct dirent *e; dir && (e = readdir(dir)) != NULL;) {
        if (strncmp(e->d_name, "tenant-", 7) != 0)
            continue;
        int live = 0;
        for (int k = 0; k < p->npods && !live; k++)
            live = !strcmp(p->pods[k].tenant, e->d_name + 7);
        if (live)
            continue;
        /* a cgroup is removed with rmdir once empty; a test tree holds the files we wrote */
        snprintf(path, sizeof(path), "%s/%s/%s/cpu.weight", root, parent, e->d_name);
        unlink(path);
        snprintf(path, sizeof(path), "%s/%s/%s", root, parent, e->d_name);
        rmdir(path);
    }
    if (dir)
        closedir(dir);
    return rc;
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
    int rc = spec && !json_dump_file(spec, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ? 0 : -EIO;
    json_decref(spec);
    if (!rc && rename(tmp, path) != 0)
        rc = -errno;
    return rc ? gs_diag_error_code(d, rc, "%s: cannot write the CDI spec", path) : 0;
}
