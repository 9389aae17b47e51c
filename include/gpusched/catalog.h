/*
 * gpusched — the GPU model catalog.
 *
 * Invariants: the catalog is a constant table compiled into the library; indexes are stable within
 * one build and below GS_MODEL_MAX, so a set of models fits a 32-bit mask (bit i = model index i).
 * Memory is what `nvidia-smi` reports as total framebuffer, in MiB; SM counts are NVIDIA's
 * published figures (CUDA deviceQuery / product briefs). Models G1-G3 of the Alibaba trace are
 * undisclosed: their figures are assumptions, marked as such in `note`.
 * Thread safety: read-only, safe from any thread.
 */
#ifndef GPUSCHED_CATALOG_H
#define GPUSCHED_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#define GS_MODEL_MAX 32

/* Form factor; decides the default topology template of a node (see gs_topology_default()). */
enum gs_form { GS_FORM_PCIE = 0, GS_FORM_SXM = 1 };

struct gs_gpu_model {
    const char *name;    /* catalog name, e.g. "A100-SXM4-80GB" */
    const char *aliases; /* '|'-separated other spellings (trace codes), may be "" */
    uint32_t memory_mib; /* framebuffer, MiB */
    uint16_t sm_count;   /* streaming multiprocessors */
    enum gs_form form;
    const char *note; /* source of the figures, or the assumption made */
    int nvlink;       /* 1: the card has NVLink (an SXM board, or a PCIe card's NVLink bridge) */
};

/* gs_catalog_count() - number of models in the catalog (<= GS_MODEL_MAX). */
int gs_catalog_count(void);

/*
 * gs_catalog_at() - the model at index @idx.
 * Return: the entry, or NULL when @idx is out of range. Owned by the library; never free it.
 */
const struct gs_gpu_model *gs_catalog_at(int idx);

/*
 * gs_catalog_find() - look a model up by name or alias, ignoring ASCII case.
 * @name: NUL-terminated; @len: bytes of @name to compare, or -1 for the whole string.
 * Return: the model index (>= 0), or -ENOENT when no model has that name.
 * Complexity: O(models).
 */
int gs_catalog_find(const char *name, int len);

/*
 * gs_catalog_find_product() - look a model up by the name a node reports for it: a catalog name
 * or alias in any ASCII case, or with the vendor's prefix and spaces as NVML names it ("NVIDIA
 * A100-SXM4-80GB", "Tesla V100-SXM2-16GB") or as NVIDIA GPU feature discovery's nvidia.com/
 * gpu.product label writes it ("NVIDIA-A100-SXM4-80GB", with a "-SHARED" suffix where its device
 * plugin shares the card by time slicing).
 * @product: NUL-terminated, not owned.
 * Return: the model index (>= 0), or -ENOENT when no model has that name.
 */
int gs_catalog_find_product(const char *product);

/*
 * gs_catalog_product_mig() - the card of a MIG instance's product name, as GPU feature discovery
 * writes nvidia.com/gpu.product under MIG strategy single ("NVIDIA-A100-SXM4-80GB-MIG-1g.10gb",
 * "-SHARED" after it where the instances are time-sliced) and each nvidia.com/mig-<profile>.product
 * under strategy mixed. Such a name is an instance, not a card: gs_catalog_find_product() does
 * not know it. @profile (@size bytes, may be 0) gets the profile ("1g.10gb").
 * Return: the model index of the card (>= 0), or -ENOENT when @product names no MIG instance of
 * a catalog model.
 */
int gs_catalog_product_mig(const char *product, char *profile, size_t size);

/*
 * gs_catalog_names() - every model's name, comma-separated, into @buf of @size bytes (cut short
 * when it does not fit), for messages about a name the catalog lacks.
 * Return: @buf.
 */
const char *gs_catalog_names(char *buf, size_t size);

#endif
