/*
 * Internals of the scenario loader (gpusched/scenario.h), shared by src/config/scenario*.c.
 *
 * Invariants:
 * - Record arrays grow geometrically; struct gs_scn_priv keeps their capacities. A caller may also
 *   fill arrays itself (malloc'd): a capacity below the count is read as "exactly full".
 * - Name indexes (open addressing over record indexes) cover records 0..indexed-1 of their array;
 *   before each use they catch up with records appended since, and are rebuilt when the count
 *   went down. Look-ups are O(1) expected, so loading n records is O(n) expected.
 * - Quantities are parsed as exact decimals (a 64-bit mantissa, a flag for any non-zero digit
 *   past it, times a power of ten and a power of two), never through floating point.
 */
#ifndef GS_SCENARIO_IMPL_H
#define GS_SCENARIO_IMPL_H

#include "gpusched/scenario.h"
#include "yamlutil.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest scenario file accepted (a workload of GS_SCN_PODS_MAX flow-style pods fits). */
#define GS_SCN_FILE_MAX_BYTES ((size_t)1 << 30)
#define GS_SCN_MAX_DEPTH      64
/* YAML nodes of one document (a `kubectl get pods -o yaml` List of ~80,000 pods): bounds the
 * memory one document's tree takes, at roughly 100 bytes a node. */
#define GS_SCN_DOC_NODES_MAX ((size_t)8 << 20)
#define GS_SCN_RANGE_DIGITS  9 /* digits of a bound in a node name range "[01-08]" */

/* The record arrays of a scenario, for generic growth and indexing. */
enum gs__scn_kind {
    GS__K_TENANT,
    GS__K_PROFILE,
    GS__K_QUEUE,
    GS__K_PODGROUP,
    GS__K_PRIORITY_CLASS,
    GS__K_RQUOTA,
    GS__K_LIMIT_RANGE,
    GS__K_TEMPLATE,
    GS__K_NODE,
    GS__K_POD,
    GS__K_VGPU_CLASS,
    GS__K_COUNT
};

/* Open-addressing index of record numbers by (namespace, name); slot v is the number + 1, 0 =
 * empty; h the key's hash, so growing needs no keys. cap is 0 or a power of two. */
struct gs__nslot {
    uint32_t v, h;
};
struct gs__nidx {
    struct gs__nslot *slot;
    size_t cap, n; /* n: values 0..n-1 are in the index */
};

/* The key of value @v: its namespace ("" for cluster-scoped records) and name. */
typedef void (*gs__nidx_key)(const void *ctx, uint32_t v, const char **ns, const char **name);

uint32_t gs__nidx_hash(const char *ns, const char *name);
/* gs__nidx_find() - the value with key (@ns, @name) and hash @h, or -1. */
long gs__nidx_find(const struct gs__nidx *x, uint32_t h, gs__nidx_key key, const void *ctx,
                   const char *ns, const char *name);
/* gs__nidx_add() - add value @v (hash @h); grows the table. Return: 0 or -ENOMEM. */
int gs__nidx_add(struct gs__nidx *x, uint32_t h, uint32_t v);
void gs__nidx_clear(struct gs__nidx *x);

/* Nodes whose template was not defined yet when they were read; resolve fills them. */
struct gs__pending_tpl {
    size_t first, count; /* nodes first..first+count-1 */
    char name[GS_SCN_NAME_MAX];
    struct gs_scn_src src;
};

/* Where a loaded pod writes one field admission may name (scenario_pod.c's F_*), in its file: a
 * pod's entries are gs_pod_spec's fields_first.. in gs_scn_priv's pod_at. */
struct gs__pod_at {
    uint32_t line;
    uint16_t col;
    uint8_t field; /* F_* */
    int8_t at;     /* its container (an index in the pod's containers), -1 a pod's field */
};

struct gs_scn_priv {
    struct gs__pod_at *pod_at; /* every pod's, in load order */
    size_t npod_at, cap_pod_at;
    size_t cap[GS__K_COUNT];
    struct gs__nidx idx[GS__K_COUNT];
    struct gs__nidx ns_tenant; /* namespace -> tenant * GS_SCN_NAMESPACES + k, built by resolve */
    size_t ns_tenant_for;      /* ntenants when ns_tenant was built; (size_t)-1 = never */
    struct gs__pending_tpl *pending;
    size_t npending, cap_pending;
    bool policy_tenants;             /* a topology policy with a tenants: map was loaded */
    struct gs_scn_src policy_src;    /* its position */
    bool policy_seen, profiles_seen; /* one topology policy and one profiles ConfigMap */
    bool stdin_read;                 /* "-" was loaded: a second would read an empty stream */
};

/* One gs_scenario_load() call. */
struct gs__scn_load {
    struct gs_scenario *s;
    const unsigned char *buf; /* the file's bytes, for positions inside embedded documents */
    size_t len;
    char file[sizeof(((struct gs_scn_src *)0)->file)]; /* path as records keep it */
    size_t ndocs;                                      /* documents read */
};

/* --- scenario.c: records, indexes and field parsers --- */

/* gs__scn_priv() - the private part of @s, created on first use. Return: NULL when out of memory.
 */
struct gs_scn_priv *gs__scn_priv(struct gs_scenario *s);

/*
 * gs__scn_add() - append a copy of the complete record @rec to array @kind and index it.
 * Return: the new record's index; -E2BIG past the kind's limit; -ENOMEM. No message.
 */
long gs__scn_add(struct gs_scenario *s, int kind, const void *rec);

/* gs__scn_kind_what() - the records of @kind in words ("pods"); gs__scn_kind_max() their limit. */
const char *gs__scn_kind_what(int kind);
size_t gs__scn_kind_max(int kind);

/*
 * gs__scn_push() - append a copy of the complete record @rec to array @kind and index it.
 * Return: the new record's index; -E2BIG past the kind's limit; -ENOMEM; @d set naming @at.
 */
long gs__scn_push(struct gs__yctx *c, const yaml_node_t *at, struct gs_scenario *s, int kind,
                  const void *rec);

/*
 * gs__scn_commit() - add the complete record @rec of @kind (but its src, set from @root) read
 * from @root; a second record of the same (namespace,) name is an error at @name_at naming the
 * first. Not for nodes, which have no src. Return: 0; -EINVAL; -E2BIG; -ENOMEM.
 */
int gs__scn_commit(struct gs__yctx *c, struct gs__scn_load *L, const yaml_node_t *root,
                   const yaml_node_t *name_at, int kind, void *rec);

/*
 * gs__scn_find() - index of the @kind record named (@ns, @name) (@ns ignored for cluster-scoped
 * kinds), or -1. O(1) expected; a linear scan when the index cannot catch up (out of memory).
 */
long gs__scn_find(struct gs_scenario *s, int kind, const char *ns, const char *name);

/* gs__scn_src() - the position of @n into @src. */
void gs__scn_src(const struct gs__yctx *c, const struct gs__scn_load *L, const yaml_node_t *n,
                 struct gs_scn_src *src);

/* gs__scn_gpus() - milli-GPUs @milli as GPUs ("8", "0.250") into @buf (@size bytes); @buf. */
const char *gs__scn_gpus(int64_t milli, char *buf, size_t size);
/* gs__scn_where() - "file:line:col" of @src into @buf (a gs_scn_src prints this way). */
const char *gs__scn_where(const struct gs_scn_src *src, char *buf, size_t size);

/* gs__scn_keep() - a gs__yaml_field_fn storing each value at its key's index of the
 * yaml_node_t *[] @arg, for readers that look at the fields after the whole mapping is checked. */
int gs__scn_keep(struct gs__yctx *c, int field, yaml_node_t *val, void *arg);

/* gs__scn_tenant_owns() - tenant @t owns the namespaces of sequence @seq, in place of those it
 * had. */
int gs__scn_tenant_owns(struct gs__yctx *c, struct gs__scn_load *L, long t, yaml_node_t *seq);

/* Field parsers: each checks @n's type and range and names @what and the place on error. A
 * name and an enum's word are strings: a plain number or boolean is refused (gs__yaml_text()). */
int gs__scn_name(struct gs__yctx *c, const yaml_node_t *n, const char *what, char *dst,
                 size_t size);
/* gs__scn_key_name() - gs__scn_name() for a mapping key, which is text whatever it looks like. */
int gs__scn_key_name(struct gs__yctx *c, const yaml_node_t *k, const char *what, char *dst,
                     size_t size);
/*
 * gs__scn_dns_name() - a Kubernetes name @n as an API server takes it: a DNS subdomain (@label
 * 0: an object's name) or a DNS label (@label 1: a namespace, and a tenant, which gpuschedd
 * names in URLs), checked before gs__scn_key_name()'s byte set so that a byte outside it is
 * named by the DNS rule. Return: 0; -EINVAL with the error at @n.
 */
int gs__scn_dns_name(struct gs__yctx *c, const yaml_node_t *n, int label, const char *what,
                     char *dst, size_t size);
int gs__scn_bool(struct gs__yctx *c, const yaml_node_t *n, const char *what, int *out);
int gs__scn_int(struct gs__yctx *c, const yaml_node_t *n, const char *what, int64_t lo, int64_t hi,
                int64_t *out);
int gs__scn_enum(struct gs__yctx *c, const yaml_node_t *n, const char *what,
                 const char *const *names, int count, int *out);

/*
 * The core/v1 types of the pod fields that do not change placement (podtypes.c): a container
 * (gs__kt_container; an ephemeral one, gs__kt_ephemeral), a volume, and the pod spec's fields
 * of that kind (gs__kt_pod_spec: those gs__scn_typed_names() lists), and ObjectMeta's fields
 * the API server sets (gs__kt_meta).
 */
struct gs__ktype;
extern const struct gs__ktype *const gs__kt_container,
    *const gs__kt_ephemeral, *const gs__kt_volume, *const gs__kt_pod_spec, *const gs__kt_meta;

/*
 * gs__scn_typed() - object @n (null counts as empty) checked against type @t as the API server
 * decodes it: every key a field of @t (an unknown one an error naming the nearest, a warning
 * when @c->lenient), each value of its field's type, the required fields given, one member of
 * a union at most. Fields @t marks as the caller's are left to it. @where names @n in messages
 * ("spec.containers[0]"). Under @c->lenient a value of the wrong type is a warning too.
 * Return: 0; -EINVAL with the error at its place; -ENOMEM.
 */
int gs__scn_typed(struct gs__yctx *c, const struct gs__ktype *t, yaml_node_t *n, const char *where);

/* gs__scn_typed_field() - value @v of field @key of an object of type @t (at @where) checked as
 * gs__scn_typed() checks it; 0 for a key @t does not type. */
int gs__scn_typed_field(struct gs__yctx *c, const struct gs__ktype *t, const char *key,
                        yaml_node_t *v, const char *where);

/* gs__scn_typed_names() - the field names of @t, at most @max, into @out. Return: how many. */
int gs__scn_typed_names(const struct gs__ktype *t, const char **out, int max);

/* Quantity flags: round a remainder up (else it is an error); a count in the resource's own
 * unit (decimal suffixes and exponents as Kubernetes writes them, no binary suffix). */
#define GS__Q_CEIL  1u
#define GS__Q_PLAIN 2u
#define GS__Q_FLOOR 4u

/*
 * gs__scn_qty() - Kubernetes quantity @n (plain or quoted scalar) times 10^@e10 x 2^@e2, as an
 * integer in lo..hi. @unit names the integer's unit in messages ("whole GPUs", "MiB").
 */
int gs__scn_qty(struct gs__yctx *c, const yaml_node_t *n, const char *what, int e10, int e2,
                unsigned flags, const char *unit, int64_t lo, int64_t hi, int64_t *out);

/*
 * gs__scn_qty_unread() - quantity @n of a resource nothing here reads (ephemeral-storage, pods,
 * a quota of services): still checked as the API server checks every ResourceList value (a
 * Kubernetes quantity, not negative, here at most 2^63-1 in its own unit), then dropped.
 * Return: 0; -EINVAL with the error recorded at @n.
 */
int gs__scn_qty_unread(struct gs__yctx *c, const yaml_node_t *n, const char *what);

/*
 * gs__scn_gpumem() - nvidia.com/gpumem @v: MiB as a plain number (HAMi's unit), 0..@hi; a byte
 * quantity ("20Gi") is refused with the number it most likely meant. A pod's limit and a
 * ResourceQuota's hard value alike. Return: 0; -EINVAL with the error recorded at @v.
 */
int gs__scn_gpumem(struct gs__yctx *c, yaml_node_t *v, const char *what, int64_t hi, int64_t *out);

/*
 * gs__scn_bytes() - byte quantity @n in MiB, 1..@hi, as gs__scn_qty() reads it with @flags (0 or
 * GS__Q_CEIL), but a bare number — bytes, as Kubernetes reads it, never what a GPU memory size
 * means — is refused naming the likely NUMBERMi. Return: 0; -EINVAL with the error recorded at @n.
 */
int gs__scn_bytes(struct gs__yctx *c, yaml_node_t *n, const char *what, unsigned flags, int64_t hi,
                  int64_t *out);

/* gs__scn_dur() - a duration ("90s", "1h30m", "1.5d") in microseconds, >= 0. */
int gs__scn_dur(struct gs__yctx *c, const yaml_node_t *n, const char *what, int64_t *out);

/* --- quantity.c --- */

/*
 * gs__qty_parse() - Kubernetes quantity @s times 10^@e10 x 2^@e2 into *@out.
 * Return: 0; or a negative errno with *@why a phrase ("is not a Kubernetes quantity", ...).
 */
int gs__qty_parse(const char *s, int e10, int e2, unsigned flags, int64_t *out, const char **why);

/* gs__duration_parse() - a Go-style duration (units us, ms, s, m, h, d) in microseconds. */
int gs__duration_parse(const char *s, int64_t *out, const char **why);

/* --- the kinds: each reads one document root whose kind was recognised --- */

struct gs__scn_meta {
    yaml_node_t *name, *ns, *labels, *annotations;
    char name_s[GS_SCN_OBJ_MAX], ns_s[GS_SCN_NAME_MAX]; /* ns "default" when absent */
    size_t name_size; /* the kind's name buffer: a longer name is refused */
};

/* gs__scn_meta() - read metadata @n (NULL = absent); @need_name: a missing name is an error;
 * @name_size: bytes of the kind's name with the NUL (GS_SCN_NAME_MAX, or GS_SCN_OBJ_MAX for the
 * kinds controllers name), at most sizeof(m->name_s). */
int gs__scn_meta(struct gs__yctx *c, yaml_node_t *root, yaml_node_t *n, bool need_name,
                 size_t name_size, struct gs__scn_meta *m);

typedef int (*gs__scn_kind_fn)(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);

int gs__scn_cluster(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_pod(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_gpuquota(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_configmap(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_queue(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_podgroup(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_priority_class(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_rquota(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_limit_range(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_vgpu_class(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_simulation(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);
int gs__scn_mig_policy(struct gs__yctx *c, struct gs__scn_load *L, yaml_node_t *root);

/* gs__scn_tenant() - the tenant named @name, created (with @src) when absent; index into *@out. */
int gs__scn_tenant(struct gs__yctx *c, struct gs__scn_load *L, const yaml_node_t *at,
                   const char *name, long *out);

/* gs__scn_ns_key() - the key of a ns_tenant index value (a gs__nidx_key; @ctx the scenario). */
void gs__scn_ns_key(const void *ctx, uint32_t v, const char **ns, const char **name);

/* gs__scn_resolve_templates() - fill the nodes whose template came later. */
int gs__scn_resolve_templates(struct gs_scenario *s, struct gs_diag *d);

#endif
