/* A topology tree written out: for people, as JSON, as a Cluster nodeTemplates entry. */
#include "gpusched/topotext.h"

#include "gpusched/diag.h"
#include "gpusched/topo.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

/* The GPUs of PCIe domain (@nvlink 0) or NVLink group (@nvlink 1) number @k, as a mask. */
static uint32_t members(const struct gs_topo *t, int nvlink, int k)
{
    uint32_t m = 0;
    for (int g = 0; g < t->ngpus; g++)
        if ((nvlink ? t->nvlink_group[g] : t->pcie_domain[g]) == k)
            m |= 1u << g;
    return m;
}

/* The GPUs of @m between @pre and @post: "GPU0 GPU1" for people, "0, 1" (@bare) for YAML. */
static void print_mask(FILE *f, uint32_t m, int bare, const char *pre, const char *post)
{
    fputs(pre, f);
    for (int first = 1; m; m &= m - 1, first = 0)
        fprintf(f, "%s%s%d", first ? "" : bare ? ", " : " ", bare ? "" : "GPU", __builtin_ctz(m));
    fputs(post, f);
}

static void human(FILE *f, const struct gs_topo *t, const char *name)
{
    fprintf(f, "%s: %d GPU%s, %d PCIe domain%s, %d NVLink group%s, %d NIC%s\n", name, t->ngpus,
            t->ngpus == 1 ? "" : "s", t->npcie, t->npcie == 1 ? "" : "s", t->nnvlink,
            t->nnvlink == 1 ? "" : "s", t->nnics, t->nnics == 1 ? "" : "s");
    for (int k = 0; k < t->npcie; k++) {
        fprintf(f, "  PCIe domain %d:", k);
        print_mask(f, members(t, 0, k), 0, " ", "\n");
    }
    for (int k = 0; k < t->nnvlink; k++) {
        fprintf(f, "  NVLink group %d:", k);
        print_mask(f, members(t, 1, k), 0, " ", "\n");
    }
    int cross = 0;
    for (int e = 0; e < t->nedges; e++) {
        const struct gs_topo_edge *x = &t->edges[e];
        if (t->nvlink_group[x->a] != GS_NO_GROUP && t->nvlink_group[x->a] == t->nvlink_group[x->b])
            continue;
        fprintf(f, "%sGPU%d-GPU%d NV%d", cross++ ? ", " : "  NVLinks between groups: ", x->a, x->b,
                x->links);
    }
    if (cross)
        fputc('\n', f);
    for (int g = 0; g < t->ngpus; g++) {
        const struct gs_topo_gpu *u = &t->gpu[g];
        fprintf(f, "  GPU%d  PCIe domain %d  NVLink group ", g, t->pcie_domain[g]);
        fprintf(f, t->nvlink_group[g] == GS_NO_GROUP ? "-" : "%d", t->nvlink_group[g]);
        fprintf(f, "  NUMA %s  CPUs %s", u->numa_list[0] ? u->numa_list : "-",
                u->cpus[0] ? u->cpus : "-");
        if (u->uuid[0])
            fprintf(f, "  %s %s %s", u->uuid, u->pci, u->name);
        if (u->memory_mib)
            fprintf(f, "  %lld MiB", (long long)u->memory_mib);
        if (u->mig_mode == 1)
            fprintf(f, "  MIG on, %d instance%s", u->nmig, u->nmig == 1 ? "" : "s");
        fputc('\n', f);
    }
    for (int n = 0; n < t->nnics; n++) {
        enum gs_link best = GS_LINK_NONE;
        for (int g = 0; g < t->ngpus; g++)
            if (t->nic_link[n][g] > best)
                best = t->nic_link[n][g];
        fprintf(f, "  NIC %s: nearest %s to", t->nic[n], gs_link_name(best));
        for (int g = 0; g < t->ngpus; g++)
            if (t->nic_link[n][g] == best)
                fprintf(f, " GPU%d", g);
        fputc('\n', f);
    }
}

static json_t *mask_json(uint32_t m)
{
    json_t *a = json_array();
    for (; a && m; m &= m - 1)
        json_array_append_new(a, json_integer(__builtin_ctz(m)));
    return a;
}

static json_t *gpu_json(const struct gs_topo *t, int g)
{
    const struct gs_topo_gpu *u = &t->gpu[g];
    json_t *o = json_pack("{s:i, s:i, s:o, s:o, s:s, s:s, s:o}", "index", g, "pcieDomain",
                          t->pcie_domain[g], "nvlinkGroup",
                          t->nvlink_group[g] == GS_NO_GROUP ? json_null()
                                                            : json_integer(t->nvlink_group[g]),
                          "numa", u->numa < 0 ? json_null() : json_integer(u->numa), "numaAffinity",
                          u->numa_list, "cpuAffinity", u->cpus, "gpuNumaId",
                          u->gpu_numa < 0 ? json_null() : json_integer(u->gpu_numa));
    if (o && u->uuid[0]) {
        json_object_set_new(o, "uuid", json_string(u->uuid));
        json_object_set_new(o, "name", json_string(u->name));
        json_object_set_new(o, "pciBusId", json_string(u->pci));
        json_object_set_new(o, "memoryMiB", json_integer(u->memory_mib));
        json_object_set_new(o, "migMode",
                            u->mig_mode < 0 ? json_null() : json_boolean(u->mig_mode == 1));
        json_t *mig = json_array();
        for (int i = 0; mig && i < u->nmig; i++)
            json_array_append_new(mig, json_pack("{s:s, s:i, s:i, s:i, s:I}", "uuid",
                                                 u->mig[i].uuid, "giProfile", u->mig[i].gi_profile,
                                                 "start", u->mig[i].start, "size", u->mig[i].size,
                                                 "memoryMiB", (json_int_t)u->mig[i].memory_mib));
        json_object_set_new(o, "migInstances", mig);
    }
    return o;
}

/* Pair @a, @b's cell of `links`: its PCIe class where the source told it (NVML does for an
 * NVLinked pair too), else "NV<n>" where the source hid the PCIe path behind NVLink (nvidia-smi's
 * text): what gs_topo_derive() reads, so that gpuschedd derives the domains the agent did. */
static char *link_text(const struct gs_topo *t, int a, int b, char *buf, size_t n)
{
    if (t->link[a][b] == GS_LINK_NV && t->nvlinks[a][b])
        snprintf(buf, n, "NV%d", t->nvlinks[a][b]);
    else
        snprintf(buf, n, "%s", gs_link_name(t->link[a][b]));
    return buf;
}

static json_t *topo_json(const struct gs_topo *t, const char *name)
{
    json_t *o = json_object(), *gpus = json_array(), *pcie = json_array(), *nv = json_array();
    json_t *edges = json_array(), *nics = json_array(), *links = json_array();
    char buf[16];
    for (int g = 0; g < t->ngpus; g++) {
        json_array_append_new(gpus, gpu_json(t, g));
        json_t *row = json_array();
        for (int k = 0; k < t->ngpus; k++)
            json_array_append_new(row, json_string(link_text(t, g, k, buf, sizeof(buf))));
        json_array_append_new(links, row);
    }
    for (int k = 0; k < t->npcie; k++)
        json_array_append_new(pcie, mask_json(members(t, 0, k)));
    for (int k = 0; k < t->nnvlink; k++)
        json_array_append_new(nv, mask_json(members(t, 1, k)));
    for (int e = 0; e < t->nedges; e++)
        json_array_append_new(
            edges, json_pack("[i,i,i]", t->edges[e].a, t->edges[e].b, t->edges[e].links));
    for (int n = 0; n < t->nnics; n++) {
        json_t *near = json_array();
        for (int g = 0; g < t->ngpus; g++)
            json_array_append_new(near, json_string(gs_link_name(t->nic_link[n][g])));
        json_array_append_new(nics, json_pack("{s:s, s:o}", "name", t->nic[n], "links", near));
    }
    json_object_set_new(o, "name", json_string(name));
    json_object_set_new(o, "gpus", gpus);
    json_object_set_new(o, "pcieDomains", pcie);
    json_object_set_new(o, "nvlinkGroups", nv);
    json_object_set_new(o, "nvlinks", edges);
    json_object_set_new(o, "nics", nics);
    json_object_set_new(o, "links", links);
    return o;
}

static void yaml_lists(FILE *f, const struct gs_topo *t, int nvlink, int count)
{
    fprintf(f, "      %s: [", nvlink ? "nvlinkGroups" : "pcieDomains");
    for (int k = 0; k < count; k++)
        print_mask(f, members(t, nvlink, k), 1, k ? ", [" : "[", "]");
    fputs("]\n", f);
}

static int yaml(FILE *f, const struct gs_topo *t, const char *name, const char *model,
                struct gs_diag *d)
{
    if (!model)
        return gs_diag_error(d, "a nodeTemplates entry needs the GPU model (gpuModel): "
                                "`nvidia-smi topo -m` does not print it; give --model");
    fprintf(f,
            "    # gpusched topo: a spec.nodeTemplates entry of a Cluster (gpusched.io/v1alpha1);\n"
            "    # add cpuMilli and memoryMiB, the host's, which nvidia-smi does not print:\n"
            "    # without them the node's CPU and memory bound no pod\n"
            "    - name: %s\n      gpuModel: %s\n      gpus: %d\n",
            name, model, t->ngpus);
    if (t->ngpus > 0)
        yaml_lists(f, t, 0, t->npcie);
    if (t->nnvlink > 0)
        yaml_lists(f, t, 1, t->nnvlink);
    if (t->nedges > 0) {
        fputs("      nvlinks: [", f); /* [GPU a, GPU b, bonded links] per linked pair */
        for (int e = 0; e < t->nedges; e++)
            fprintf(f, "%s[%d, %d, %d]", e ? ", " : "", t->edges[e].a, t->edges[e].b,
                    t->edges[e].links);
        fputs("]\n", f);
    }
    return 0;
}

int gs_topo_write(FILE *f, const struct gs_topo *t, enum gs_topo_format fmt, const char *name,
                  const char *model, struct gs_diag *d)
{
    int rc = 0;
    if (fmt == GS_TOPO_HUMAN) {
        human(f, t, name);
    } else if (fmt == GS_TOPO_JSON) {
        json_t *o = topo_json(t, name);
        if (!o)
            return gs_diag_error_code(d, -ENOMEM, "out of memory");
        rc = json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ? -EIO : 0;
        fputc('\n', f);
        json_decref(o);
    } else {
        rc = yaml(f, t, name, model, d);
    }
    if (!rc && ferror(f))
        rc = gs_diag_error_code(d, -EIO, "write error");
    return rc;
}
