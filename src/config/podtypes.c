/*
 * The core/v1 types of the pod fields read and left without effect on placement (a container's
 * env, ports, probes and mounts; the pod's volumes, security context, DNS settings, ...): checked
 * as the API server checks them when it decodes a pod, so that a typo in them ("vaule",
 * "hostPrt", "persistentVolumeClam") or a value of the wrong type (`value: 8080`,
 * `terminationGracePeriodSeconds: "30"`) is refused here as it is there, not taken and dropped.
 *
 * Source: the Pod of Kubernetes' API reference (kubernetes.io/docs/reference/kubernetes-api/
 * workload-resources/pod-v1/) and its round-trip fixture, which sets every field
 * (k8s.io/api testdata/HEAD/core.v1.Pod.yaml); the enums are those the API server's validation
 * takes. What is checked: every key is a field of its type (an unknown one says the nearest),
 * each value has its type (string, integer, boolean, IntOrString port, quantity, list, object,
 * enum), the fields the API server requires are there, and a union (a volume's source, a probe's
 * handler, an env value's source) has one member at most. Of the ranges, formats and cross-field
 * rules, those in rules[] below are repeated; the rest are the API server's own business.
 */
#include "scenario_impl.h"

#include "gpusched/diag.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

enum kind {
    K_SKIP, /* read by the caller (scenario_pod.c) */
    K_NONE, /* a field its object may not have (an ephemeral container's ports): null or empty */
    K_STR,
    K_INT,
    K_BOOL,
    K_PORT, /* IntOrString: a port number or an IANA service name */
    K_QTY,
    K_STRMAP,
    K_QTYMAP,
    K_STRS,
    K_INTS,
    K_OBJ,
    K_LIST, /* of K_OBJ */
    K_MAP,  /* any mapping (an object's metadata, whose own loader is the API server's) */
    K_ENUM,
};

enum { U_MOST = 1, U_ONE };       /* a union of at most one member; of exactly one */
enum { R_REQUIRED = 1, R_EMPTY }; /* required; a string enum that "" leaves unset (defaulted) */

struct kfield {
    const char *name;
    uint8_t kind;
    uint8_t required;             /* 0, R_REQUIRED or R_EMPTY */
    const struct gs__ktype *type; /* K_OBJ, K_LIST */
    const char *const *values;    /* K_ENUM, NULL-terminated */
};

struct gs__ktype {
    const struct kfield *f;
    int n;
    uint8_t union_of;             /* its K_OBJ fields are a union: U_MOST, U_ONE (or 0) */
    const struct gs__ktype *base; /* fields it has besides its own (an ephemeral container) */
};

/* clang-format off */
#define F(k, t, r, ty, v) {k, t, r, ty, v}
/* clang-format on */
#define S(k)     F(k, K_STR, 0, NULL, NULL)
#define SR(k)    F(k, K_STR, 1, NULL, NULL)
#define I(k)     F(k, K_INT, 0, NULL, NULL)
#define IR(k)    F(k, K_INT, 1, NULL, NULL)
#define B(k)     F(k, K_BOOL, 0, NULL, NULL)
#define SS(k)    F(k, K_STRS, 0, NULL, NULL)
#define O(k, t)  F(k, K_OBJ, 0, &t, NULL)
#define L(k, t)  F(k, K_LIST, 0, &t, NULL)
#define E(k, v)  F(k, K_ENUM, 0, NULL, v)
#define ED(k, v) F(k, K_ENUM, R_EMPTY, NULL, v)
#define NO(k)    F(k, K_NONE, 0, NULL, NULL)
#define TYPE(name, one, base, ...)                                                                 \
    static const struct kfield name##_f[] = {__VA_ARGS__};                                         \
    static const struct gs__ktype name = {name##_f, (int)(sizeof(name##_f) / sizeof(name##_f[0])), \
                                          one, base}

static const char *const pull_policies[] = {"Always", "IfNotPresent", "Never", NULL};
static const char *const protocols[] = {"TCP", "UDP", "SCTP", NULL};
static const char *const schemes[] = {"HTTP", "HTTPS", NULL};
static const char *const propagations[] = {"None", "HostToContainer", "Bidirectional", NULL};
static const char *const recursive_ro[] = {"Disabled", "IfPossible", "Enabled", NULL};
static const char *const message_policies[] = {"File", "FallbackToLogsOnError", NULL};
static const char *const resize_restarts[] = {"NotRequired", "RestartContainer", NULL};
static const char *const rule_actions[] = {"Restart", NULL};
static const char *const in_not_in[] = {"In", "NotIn", NULL};
static const char *const proc_mounts[] = {"Default", "Unmasked", NULL};
static const char *const profile_types[] = {"RuntimeDefault", "Unconfined", "Localhost", NULL};
static const char *const fs_group_policies[] = {"OnRootMismatch", "Always", NULL};
static const char *const selinux_policies[] = {"Recursive", "MountOption", NULL};
static const char *const group_policies[] = {"Merge", "Strict", NULL};
static const char *const os_names[] = {"linux", "windows", NULL};
static const char *const restart_policies[] = {"Always", "OnFailure", "Never", NULL};
static const char *const dns_policies[] = {"ClusterFirstWithHostNet", "ClusterFirst", "Default",
                                           "None", NULL};
static const char *const host_path_types[] = {
    "",           "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket",
    "CharDevice", "BlockDevice",       NULL};
static const char *const volume_modes[] = {"Block", "Filesystem", NULL};
static const char *const selector_ops[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};

/* References and selectors. */
TYPE(local_ref, 0, NULL, S("name"));
TYPE(key_ref, 0, NULL, SR("key"), S("name"), B("optional"));
TYPE(field_ref, 0, NULL, S("apiVersion"), SR("fieldPath"));
TYPE(resource_ref, 0, NULL, S("containerName"), F("divisor", K_QTY, 0, NULL, NULL), SR("resource"));
TYPE(file_key_ref, 0, NULL, SR("key"), B("optional"), SR("path"), SR("volumeName"));
TYPE(selector_req, 0, NULL, SR("key"), F("operator", K_ENUM, 1, NULL, selector_ops), SS("values"));
TYPE(label_selector, 0, NULL, L("matchExpressions", selector_req),
     F("matchLabels", K_STRMAP, 0, NULL, NULL));

/* A container's environment. */
TYPE(env_source, U_ONE, NULL, O("configMapKeyRef", key_ref), O("fieldRef", field_ref),
     O("fileKeyRef", file_key_ref), O("resourceFieldRef", resource_ref),
     O("secretKeyRef", key_ref));
TYPE(env_var, 0, NULL, SR("name"), S("value"), O("valueFrom", env_source));
TYPE(env_from_ref, 0, NULL, S("name"), B("optional"));
TYPE(env_from, U_ONE, NULL, O("configMapRef", env_from_ref), S("prefix"),
     O("secretRef", env_from_ref));

/* Ports, mounts, devices. */
TYPE(container_port, 0, NULL, IR("containerPort"), S("hostIP"), I("hostPort"), S("name"),
     ED("protocol", protocols));
TYPE(volume_mount, 0, NULL, SR("mountPath"), E("mountPropagation", propagations), SR("name"),
     B("readOnly"), E("recursiveReadOnly", recursive_ro), S("subPath"), S("subPathExpr"));
TYPE(volume_device, 0, NULL, SR("devicePath"), SR("name"));

/* Probes and lifecycle hooks. */
TYPE(exec_action, 0, NULL, SS("command"));
TYPE(http_header, 0, NULL, SR("name"), S("value"));
TYPE(http_get, 0, NULL, S("host"), L("httpHeaders", http_header), S("path"),
     F("port", K_PORT, 1, NULL, NULL), ED("scheme", schemes));
TYPE(tcp_socket, 0, NULL, S("host"), F("port", K_PORT, 1, NULL, NULL));
TYPE(grpc_action, 0, NULL, IR("port"), S("service"));
TYPE(sleep_action, 0, NULL, I("seconds"));
TYPE(handler, U_ONE, NULL, O("exec", exec_action), O("httpGet", http_get), O("sleep", sleep_action),
     O("tcpSocket", tcp_socket));
TYPE(lifecycle, 0, NULL, O("postStart", handler), O("preStop", handler), S("stopSignal"));
TYPE(probe, U_ONE, NULL, O("exec", exec_action), I("failureThreshold"), O("grpc", grpc_action),
     O("httpGet", http_get), I("initialDelaySeconds"), I("periodSeconds"), I("successThreshold"),
     O("tcpSocket", tcp_socket), I("terminationGracePeriodSeconds"), I("timeoutSeconds"));
TYPE(resize_policy, 0, NULL, SR("resourceName"),
     F("restartPolicy", K_ENUM, 1, NULL, resize_restarts));
TYPE(exit_codes, 0, NULL, F("operator", K_ENUM, 1, NULL, in_not_in),
     F("values", K_INTS, 0, NULL, NULL));
TYPE(restart_rule, 0, NULL, F("action", K_ENUM, 1, NULL, rule_actions), O("exitCodes", exit_codes));

/* Security contexts. */
TYPE(capabilities, 0, NULL, SS("add"), SS("drop"));
TYPE(selinux_options, 0, NULL, S("level"), S("role"), S("type"), S("user"));
TYPE(profile, 0, NULL, S("localhostProfile"), F("type", K_ENUM, 1, NULL, profile_types));
TYPE(windows_options, 0, NULL, S("gmsaCredentialSpec"), S("gmsaCredentialSpecName"),
     B("hostProcess"), S("runAsUserName"));
TYPE(security_context, 0, NULL, B("allowPrivilegeEscalation"), O("appArmorProfile", profile),
     O("capabilities", capabilities), B("privileged"), E("procMount", proc_mounts),
     B("readOnlyRootFilesystem"), I("runAsGroup"), B("runAsNonRoot"), I("runAsUser"),
     O("seLinuxOptions", selinux_options), O("seccompProfile", profile),
     O("windowsOptions", windows_options));
TYPE(sysctl, 0, NULL, SR("name"), SR("value"));
TYPE(pod_security_context, 0, NULL, O("appArmorProfile", profile), I("fsGroup"),
     E("fsGroupChangePolicy", fs_group_policies), I("runAsGroup"), B("runAsNonRoot"),
     I("runAsUser"), E("seLinuxChangePolicy", selinux_policies),
     O("seLinuxOptions", selinux_options), O("seccompProfile", profile),
     F("supplementalGroups", K_INTS, 0, NULL, NULL), E("supplementalGroupsPolicy", group_policies),
     L("sysctls", sysctl), O("windowsOptions", windows_options));

/* The container: its name, resources, ports and restartPolicy are also read by the caller. */
TYPE(gs__kt_container_t, 0, NULL, F("name", K_SKIP, 0, NULL, NULL),
     F("resources", K_SKIP, 0, NULL, NULL), S("image"), SS("command"), SS("args"),
     L("env", env_var), L("envFrom", env_from), L("ports", container_port),
     L("volumeMounts", volume_mount), S("workingDir"), ED("imagePullPolicy", pull_policies),
     O("livenessProbe", probe), O("readinessProbe", probe), O("startupProbe", probe),
     O("lifecycle", lifecycle), O("securityContext", security_context), B("stdin"), B("stdinOnce"),
     B("tty"), S("terminationMessagePath"), ED("terminationMessagePolicy", message_policies),
     L("volumeDevices", volume_device), L("resizePolicy", resize_policy),
     F("restartPolicy", K_SKIP, 0, NULL, NULL), L("restartPolicyRules", restart_rule));
/* The API server refuses an ephemeral container ports, probes, lifecycle, resources, a restart
 * or resize policy (ValidateEphemeralContainers: it is never restarted nor given resources). */
TYPE(gs__kt_ephemeral_t, 0, &gs__kt_container_t, S("name"), S("targetContainerName"), NO("ports"),
     NO("livenessProbe"), NO("readinessProbe"), NO("startupProbe"), NO("lifecycle"),
     NO("resources"), NO("resizePolicy"), NO("restartPolicy"));

/* Volume sources. */
TYPE(key_to_path, 0, NULL, SR("key"), I("mode"), SR("path"));
TYPE(aws_ebs, 0, NULL, S("fsType"), I("partition"), B("readOnly"), SR("volumeID"));
TYPE(azure_disk, 0, NULL, S("cachingMode"), SR("diskName"), SR("diskURI"), S("fsType"), S("kind"),
     B("readOnly"));
TYPE(azure_file, 0, NULL, B("readOnly"), SR("secretName"), SR("shareName"));
TYPE(cephfs, 0, NULL, SS("monitors"), S("path"), B("readOnly"), S("secretFile"),
     O("secretRef", local_ref), S("user"));
TYPE(cinder, 0, NULL, S("fsType"), B("readOnly"), O("secretRef", local_ref), SR("volumeID"));
TYPE(config_map_volume, 0, NULL, I("defaultMode"), L("items", key_to_path), S("name"),
     B("optional"));
TYPE(csi_volume, 0, NULL, SR("driver"), S("fsType"), O("nodePublishSecretRef", local_ref),
     B("readOnly"), F("volumeAttributes", K_STRMAP, 0, NULL, NULL));
TYPE(downward_file, 0, NULL, O("fieldRef", field_ref), I("mode"), SR("path"),
     O("resourceFieldRef", resource_ref));
TYPE(downward_volume, 0, NULL, I("defaultMode"), L("items", downward_file));
TYPE(empty_dir, 0, NULL, S("medium"), F("sizeLimit", K_QTY, 0, NULL, NULL));
TYPE(typed_ref, 0, NULL, S("apiGroup"), SR("kind"), SR("name"), S("namespace"));
TYPE(volume_resources, 0, NULL, F("limits", K_QTYMAP, 0, NULL, NULL),
     F("requests", K_QTYMAP, 0, NULL, NULL));
TYPE(claim_spec, 0, NULL, SS("accessModes"), O("dataSource", typed_ref),
     O("dataSourceRef", typed_ref), O("resources", volume_resources), O("selector", label_selector),
     S("storageClassName"), S("volumeAttributesClassName"), E("volumeMode", volume_modes),
     S("volumeName"));
TYPE(claim_template, 0, NULL, F("metadata", K_MAP, 0, NULL, NULL),
     F("spec", K_OBJ, 1, &claim_spec, NULL));
TYPE(ephemeral_volume, 0, NULL, O("volumeClaimTemplate", claim_template));
TYPE(fc_volume, 0, NULL, S("fsType"), I("lun"), B("readOnly"), SS("targetWWNs"), SS("wwids"));
TYPE(flex_volume, 0, NULL, SR("driver"), S("fsType"), F("options", K_STRMAP, 0, NULL, NULL),
     B("readOnly"), O("secretRef", local_ref));
TYPE(flocker, 0, NULL, S("datasetName"), S("datasetUUID"));
TYPE(gce_pd, 0, NULL, S("fsType"), I("partition"), SR("pdName"), B("readOnly"));
TYPE(git_repo, 0, NULL, S("directory"), SR("repository"), S("revision"));
TYPE(glusterfs, 0, NULL, SR("endpoints"), SR("path"), B("readOnly"));
TYPE(host_path, 0, NULL, SR("path"), E("type", host_path_types));
TYPE(image_volume, 0, NULL, ED("pullPolicy", pull_policies), S("reference"));
TYPE(iscsi, 0, NULL, B("chapAuthDiscovery"), B("chapAuthSession"), S("fsType"), S("initiatorName"),
     SR("iqn"), S("iscsiInterface"), I("lun"), SS("portals"), B("readOnly"),
     O("secretRef", local_ref), SR("targetPortal"));
TYPE(nfs, 0, NULL, SR("path"), B("readOnly"), SR("server"));
TYPE(pvc_source, 0, NULL, SR("claimName"), B("readOnly"));
TYPE(photon_pd, 0, NULL, S("fsType"), SR("pdID"));
TYPE(portworx, 0, NULL, S("fsType"), B("readOnly"), SR("volumeID"));
TYPE(trust_bundle, 0, NULL, O("labelSelector", label_selector), S("name"), B("optional"),
     SR("path"), S("signerName"));
TYPE(projected_items, 0, NULL, L("items", key_to_path), S("name"), B("optional"));
TYPE(projected_downward, 0, NULL, L("items", downward_file));
TYPE(pod_certificate, 0, NULL, S("certificateChainPath"), S("credentialBundlePath"), S("keyPath"),
     SR("keyType"), I("maxExpirationSeconds"), SR("signerName"),
     F("userAnnotations", K_STRMAP, 0, NULL, NULL));
TYPE(sa_token, 0, NULL, S("audience"), I("expirationSeconds"), SR("path"));
TYPE(projection, U_ONE, NULL, O("clusterTrustBundle", trust_bundle),
     O("configMap", projected_items), O("downwardAPI", projected_downward),
     O("podCertificate", pod_certificate), O("secret", projected_items),
     O("serviceAccountToken", sa_token));
TYPE(projected, 0, NULL, I("defaultMode"), L("sources", projection));
TYPE(quobyte, 0, NULL, S("group"), B("readOnly"), SR("registry"), S("tenant"), S("user"),
     SR("volume"));
TYPE(rbd, 0, NULL, S("fsType"), SR("image"), S("keyring"), SS("monitors"), S("pool"), B("readOnly"),
     O("secretRef", local_ref), S("user"));
TYPE(scale_io, 0, NULL, S("fsType"), SR("gateway"), S("protectionDomain"), B("readOnly"),
     O("secretRef", local_ref), B("sslEnabled"), S("storageMode"), S("storagePool"), SR("system"),
     S("volumeName"));
TYPE(secret_volume, 0, NULL, I("defaultMode"), L("items", key_to_path), B("optional"),
     S("secretName"));
TYPE(storageos, 0, NULL, S("fsType"), B("readOnly"), O("secretRef", local_ref), S("volumeName"),
     S("volumeNamespace"));
TYPE(vsphere, 0, NULL, S("fsType"), S("storagePolicyID"), S("storagePolicyName"), SR("volumePath"));
TYPE(volume, U_MOST, NULL, SR("name"), O("awsElasticBlockStore", aws_ebs),
     O("azureDisk", azure_disk), O("azureFile", azure_file), O("cephfs", cephfs),
     O("cinder", cinder), O("configMap", config_map_volume), O("csi", csi_volume),
     O("downwardAPI", downward_volume), O("emptyDir", empty_dir), O("ephemeral", ephemeral_volume),
     O("fc", fc_volume), O("flexVolume", flex_volume), O("flocker", flocker),
     O("gcePersistentDisk", gce_pd), O("gitRepo", git_repo), O("glusterfs", glusterfs),
     O("hostPath", host_path), O("image", image_volume), O("iscsi", iscsi), O("nfs", nfs),
     O("persistentVolumeClaim", pvc_source), O("photonPersistentDisk", photon_pd),
     O("portworxVolume", portworx), O("projected", projected), O("quobyte", quobyte), O("rbd", rbd),
     O("scaleIO", scale_io), O("secret", secret_volume), O("storageos", storageos),
     O("vsphereVolume", vsphere));

/* The pod spec's fields of no effect on placement (the rest are read in scenario_pod.c). */
TYPE(dns_option, 0, NULL, S("name"), S("value"));
TYPE(dns_config, 0, NULL, SS("nameservers"), L("options", dns_option), SS("searches"));
TYPE(host_alias, 0, NULL, SS("hostnames"), SR("ip"));
TYPE(pod_os, 0, NULL, F("name", K_ENUM, 1, NULL, os_names));
TYPE(readiness_gate, 0, NULL, SR("conditionType"));
TYPE(gs__kt_pod_spec_t, 0, NULL, B("automountServiceAccountToken"), O("dnsConfig", dns_config),
     ED("dnsPolicy", dns_policies), B("enableServiceLinks"),
     F("ephemeralContainers", K_SKIP, 0, NULL, NULL), L("hostAliases", host_alias), B("hostIPC"),
     B("hostPID"), B("hostUsers"), S("hostname"), S("hostnameOverride"),
     L("imagePullSecrets", local_ref), O("os", pod_os), L("readinessGates", readiness_gate),
     ED("restartPolicy", restart_policies), S("runtimeClassName"),
     O("securityContext", pod_security_context), S("serviceAccount"), S("serviceAccountName"),
     B("setHostnameAsFQDN"), B("shareProcessNamespace"), S("subdomain"),
     I("terminationGracePeriodSeconds"));

/* ObjectMeta's fields the API server sets (kubectl get -o yaml writes them), which a scenario
 * sets aside: typed as the API server decodes them (metadata.name, namespace, labels and
 * annotations are read by gs__scn_meta()). */
TYPE(owner_ref, 0, NULL, SR("apiVersion"), SR("kind"), SR("name"), SR("uid"), B("controller"),
     B("blockOwnerDeletion"));
TYPE(managed_entry, 0, NULL, S("manager"), S("operation"), S("apiVersion"), S("time"),
     S("fieldsType"), F("fieldsV1", K_MAP, 0, NULL, NULL), S("subresource"));
TYPE(gs__kt_meta_t, 0, NULL, S("generateName"), S("uid"), S("resourceVersion"), I("generation"),
     S("creationTimestamp"), S("deletionTimestamp"), I("deletionGracePeriodSeconds"),
     L("managedFields", managed_entry), L("ownerReferences", owner_ref), SS("finalizers"),
     S("selfLink"));

const struct gs__ktype *const gs__kt_meta = &gs__kt_meta_t;
const struct gs__ktype *const gs__kt_container = &gs__kt_container_t;
const struct gs__ktype *const gs__kt_ephemeral = &gs__kt_ephemeral_t;
const struct gs__ktype *const gs__kt_pod_spec = &gs__kt_pod_spec_t;
const struct gs__ktype *const gs__kt_volume = &volume;

static int check_value(struct gs__yctx *c, const struct kfield *f, yaml_node_t *v,
                       const char *what);

/* The fields of @t, its own first, then its base's that it does not redefine, into @out. */
static int fields_of(const struct gs__ktype *t, const struct kfield **out)
{
    int n = 0;
    for (int i = 0; i < t->n && n < GS__YAML_KEYS_MAX; i++)
        out[n++] = &t->f[i];
    for (int i = 0; t->base && i < t->base->n && n < GS__YAML_KEYS_MAX; i++) {
        int k = 0;
        while (k < t->n && strcmp(t->f[k].name, t->base->f[i].name))
            k++;
        if (k == t->n)
            out[n++] = &t->base->f[i];
    }
    return n;
}

struct obj_walk {
    const struct gs__ktype *t;
    const struct kfield *const *f;
    int nf;
    const char *where;
    uint64_t given;
    const char *member; /* the union member given, NULL none */
};

/*
 * A value of the wrong type in a pod read leniently (one kube-scheduler passed on, which the API
 * server had taken: the type is this table's, and a field never changes type within v1) is a
 * warning, as an unknown field there is: nothing else in the pod is lost. The walk's budget
 * spent is an error all the same.
 */
static int lenient_end(struct gs__yctx *c, int rc)
{
    if (rc != -EINVAL || !c->lenient || c->budget == 0)
        return rc;
    if (c->d) {
        char msg[GS_DIAG_MSG_MAX];
        memcpy(msg, c->d->msg, sizeof(msg));
        c->d->msg[0] = '\0';
        if (!c->warn_at)
            c->warn_at = c->err_at;
        if (!c->quiet)
            gs_diag_warn(c->d, "%s", msg);
    }
    return 0;
}

static int obj_field(struct gs__yctx *c, int i, yaml_node_t *v, void *arg)
{
    struct obj_walk *w = arg;
    const struct kfield *f = w->f[i];
    char what[192];
    if (gs__yaml_is_null(v))
        return 0;
    w->given |= (uint64_t)1 << i;
    gs__yaml_label(what, sizeof(what), "%s.%s", w->where, f->name);
    if (w->t->union_of && f->kind == K_OBJ) {
        if (w->member)
            return lenient_end(c, gs__yaml_err(c, v,
                                               "%s: %s and %s are both given; it takes one "
                                               "of them",
                                               w->where, w->member, f->name));
        w->member = f->name;
    }
    return lenient_end(c, check_value(c, f, v, what));
}

/* A union that needs one member and has none: "one of exec, httpGet, ... is required". */
static int union_missing(struct gs__yctx *c, const struct obj_walk *w, yaml_node_t *n)
{
    char list[256];
    size_t k = 0;
    list[0] = '\0';
    for (int i = 0; i < w->nf && k < sizeof(list); i++)
        if (w->f[i]->kind == K_OBJ)
            k += (size_t)snprintf(list + k, sizeof(list) - k, "%s%s", k ? ", " : "", w->f[i]->name);
    return gs__yaml_err(c, n,
                        "%s: one of %s is required: the API server refuses the pod without one",
                        w->where, list);
}

/* The text of field @key of mapping @n, NULL when absent or not a string. */
static const char *text_of(struct gs__yctx *c, yaml_node_t *n, const char *key, yaml_node_t **at)
{
    if (gs__yaml_map_get(c, n, key, at) || !*at)
        return NULL;
    return gs__yaml_text(*at);
}

/* EnvVar: a name of printable ASCII but '=' (the API server's rule since Kubernetes 1.30, looser
 * than a C identifier), and valueFrom only with an empty value. */
static int env_var_rule(struct gs__yctx *c, yaml_node_t *n, const char *where)
{
    yaml_node_t *at, *from;
    const char *name = text_of(c, n, "name", &at), *value;
    int bad = name && !*name;
    for (const char *s = name; s && *s && !bad; s++)
        bad = *s < 0x20 || *s > 0x7e || *s == '=';
    if (bad)
        return gs__yaml_err(c, at,
                            "%s.name: a valid environment variable name must consist only "
                            "of printable ASCII characters other than '=', as the API server "
                            "says",
                            where);
    if ((value = text_of(c, n, "value", &at)) && *value &&
        !gs__yaml_map_get(c, n, "valueFrom", &from) && from && !gs__yaml_is_null(from))
        return gs__yaml_err(c, from, "%s.valueFrom: may not be specified when `value` is not empty",
                            where);
    return 0;
}

/* Volume: its name a DNS label, as volumeMounts name it. */
static int volume_rule(struct gs__yctx *c, yaml_node_t *n, const char *where)
{
    yaml_node_t *at;
    const char *name = text_of(c, n, "name", &at);
    if (name && !gs_dns_label_ok(name, strlen(name)))
        return gs__yaml_err(c, at,
                            "%s.name: \"%.80s\" is not a DNS label (1-63 bytes of a-z, 0-9 and "
                            "'-', a letter or digit at both ends), as the API server refuses it",
                            where, name);
    return 0;
}

/* SecurityContext: a privileged container escalates whatever it says. */
static int security_rule(struct gs__yctx *c, yaml_node_t *n, const char *where)
{
    yaml_node_t *priv, *esc;
    if (gs__yaml_map_get(c, n, "privileged", &priv) ||
        gs__yaml_map_get(c, n, "allowPrivilegeEscalation", &esc))
        return -EINVAL;
    const char *p = priv ? gs__yaml_str(priv) : NULL, *e = esc ? gs__yaml_str(esc) : NULL;
    if (p && e && !strcmp(p, "true") && !strcmp(e, "false"))
        return gs__yaml_err(c, esc,
                            "%s: cannot set `allowPrivilegeEscalation` to false and `privileged` "
                            "to true, as the API server says",
                            where);
    return 0;
}

/* ContainerPort: containerPort a port number, and hostPort one too where given (0 is none). The
 * API server says "must be between 1 and 65535, inclusive" of either; a wrong type was said. */
static int port_rule(struct gs__yctx *c, yaml_node_t *n, const char *where)
{
    static const char *const keys[] = {"containerPort", "hostPort"};
    for (int i = 0; i < 2; i++) {
        yaml_node_t *at;
        long long v;
        if (gs__yaml_map_get(c, n, keys[i], &at) || !at || !gs__yaml_is_plain(at) ||
            !gs__yaml_parse_int(gs__yaml_str(at), &v) || (v >= 1 && v <= 65535) || (i && !v))
            continue;
        return gs__yaml_err(c, at,
                            "%s.%s: Invalid value: %lld: must be between 1 and 65535, inclusive, "
                            "as the API server says",
                            where, keys[i], v);
    }
    return 0;
}

/* An IANA service name, as a port's name must be (RFC 6335 5.1; the API server's
 * IsValidPortName): 1..15 of a-z, 0-9 and '-', a letter among them, no '-' at either end or
 * twice running. */
static int iana_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > 15 || strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") != n || s[0] == '-' ||
        s[n - 1] == '-' || strstr(s, "--"))
        return 0;
    return strpbrk(s, "abcdefghijklmnopqrstuvwxyz") != NULL;
}

#define PORTS_MAX 1024

/* A container's ports: each name an IANA service name, and no two alike (the API server's
 * validateContainerPorts). */
static int ports_rule(struct gs__yctx *c, yaml_node_t *n, const char *where)
{
    yaml_node_t *ports;
    if (gs__yaml_map_get(c, n, "ports", &ports) || !ports || ports->type != YAML_SEQUENCE_NODE)
        return 0;
    yaml_node_item_t *first = ports->data.sequence.items.start;
    if (ports->data.sequence.items.top - first > PORTS_MAX) /* names compared pairwise */
        return gs__yaml_err(c, ports, "%s.ports: more than %d ports in one container", where,
                            PORTS_MAX);
    for (yaml_node_item_t *it = first; it < ports->data.sequence.items.top; it++) {
        yaml_node_t *at, *other;
        const char *name = text_of(c, yaml_document_get_node(c->doc, *it), "name", &at);
        if (!name || !*name)
            continue;
        if (!iana_name_ok(name))
            return gs__yaml_err(c, at,
                                "%s.ports[%d].name: Invalid value: \"%s\": must be an IANA service "
                                "name (1-15 of a-z, 0-9 and '-', with a letter), as the API server "
                                "says",
                                where, (int)(it - first), name);
        for (yaml_node_item_t *e = first; e < it; e++) {
            const char *was = text_of(c, yaml_document_get_node(c->doc, *e), "name", &other);
            if (was && !strcmp(was, name))
                return gs__yaml_err(c, at,
                                    "%s.ports[%d].name: Duplicate value: \"%s\", as the API "
                                    "server says",
                                    where, (int)(it - first), name);
        }
    }
    return 0;
}

/* PodOS: every node gpusched models runs Linux (the nodes NVIDIA's GPU Operator serves), so a
 * Windows pod could never start; refused here rather than left pending without a reason. */
static int os_rule(struct gs__yctx *c, yaml_node_t *n, const char *where)
{
    yaml_node_t *at;
    const char *name = text_of(c, n, "name", &at);
    if (!name || strcmp(name, "windows"))
        return 0;
    return gs__yaml_err(c, at,
                        "%s.name: windows: every node gpusched models runs Linux, so the pod "
                        "could never start; give linux or leave spec.os out",
                        where);
}

/* The API server's validation rules beyond the types, by type: each after its fields passed. */
static const struct {
    const struct gs__ktype *t;
    int (*fn)(struct gs__yctx *c, yaml_node_t *n, const char *where);
} rules[] = {{&env_var, env_var_rule},           {&volume, volume_rule},
             {&security_context, security_rule}, {&container_port, port_rule},
             {&gs__kt_container_t, ports_rule},  {&pod_os, os_rule}};

static int check_obj(struct gs__yctx *c, const struct gs__ktype *t, yaml_node_t *n,
                     const char *where)
{
    const struct kfield *f[GS__YAML_KEYS_MAX];
    const char *names[GS__YAML_KEYS_MAX];
    int nf = fields_of(t, f);
    for (int i = 0; i < nf; i++)
        names[i] = f[i]->name;
    struct obj_walk w = {t, f, nf, where, 0, NULL};
    int rc = gs__yaml_each_field(c, n, names, nf, where, obj_field, &w);
    if (!rc && t->union_of == U_ONE && !w.member)
        rc = lenient_end(c, union_missing(c, &w, n));
    for (int i = 0; !rc && i < nf; i++)
        if (f[i]->required == R_REQUIRED && !(w.given & ((uint64_t)1 << i)))
            rc = gs__yaml_err(c, n, "%s.%s is required: the API server refuses the pod without it",
                              where, f[i]->name);
    for (size_t i = 0; !rc && i < sizeof(rules) / sizeof(rules[0]); i++)
        if (rules[i].t == t)
            rc = lenient_end(c, rules[i].fn(c, n, where));
    return rc;
}

struct item_walk {
    const struct kfield *f;
    const char *where;
};

static int item(struct gs__yctx *c, int idx, yaml_node_t *n, void *arg)
{
    const struct item_walk *w = arg;
    char what[192];
    gs__yaml_label(what, sizeof(what), "%s[%d]", w->where, idx);
    if (w->f->kind == K_LIST)
        return check_obj(c, w->f->type, n, what);
    const struct kfield scalar = {w->f->name, w->f->kind == K_STRS ? K_STR : K_INT, 0, NULL, NULL};
    return check_value(c, &scalar, n, what);
}

static int pair(struct gs__yctx *c, yaml_node_t *k, yaml_node_t *v, void *arg)
{
    const struct item_walk *w = arg;
    char what[192];
    gs__yaml_label(what, sizeof(what), "%s.%s", w->where, gs__yaml_str(k));
    if (w->f->kind == K_QTYMAP)
        return gs__scn_qty_unread(c, v, what);
    return gs__yaml_text(v) ? 0 : gs__yaml_text_error(c, v, what);
}

static int check_value(struct gs__yctx *c, const struct kfield *f, yaml_node_t *v, const char *what)
{
    struct item_walk w = {f, what};
    int64_t x;
    int b;
    if (gs__yaml_is_null(v))
        return 0;
    switch ((enum kind)f->kind) {
    case K_SKIP:
        return 0;
    case K_NONE:
        if (gs__yaml_is_empty(v))
            return 0;
        return gs__yaml_err(c, v,
                            "%s: an ephemeral container may not have it, as the API server "
                            "refuses it",
                            what);
    case K_STR:
        return gs__yaml_text(v) ? 0 : gs__yaml_text_error(c, v, what);
    case K_INT:
        return gs__scn_int(c, v, what, INT64_MIN, INT64_MAX, &x);
    case K_BOOL:
        return gs__scn_bool(c, v, what, &b);
    case K_PORT:
        if (gs__yaml_text(v) ||
            (gs__yaml_scalar_type(v) && !strcmp(gs__yaml_scalar_type(v), "integer")))
            return 0;
        return gs__yaml_type_error(c, v, what, "a port number or name");
    case K_QTY:
        return gs__scn_qty_unread(c, v, what);
    case K_STRMAP:
    case K_QTYMAP:
        return gs__yaml_each_pair(c, v, what, pair, &w);
    case K_STRS:
    case K_INTS:
    case K_LIST:
        return gs__yaml_each_item(c, v, what, item, &w);
    case K_OBJ:
        return check_obj(c, f->type, v, what);
    case K_MAP:
        return v->type == YAML_MAPPING_NODE ? 0 : gs__yaml_type_error(c, v, what, "a mapping");
    case K_ENUM: {
        int n = 0;
        if (f->required == R_EMPTY && gs__yaml_text(v) && !*gs__yaml_text(v))
            return 0;
        while (f->values[n])
            n++;
        return gs__scn_enum(c, v, what, f->values, n, &b);
    }
    }
    return 0;
}

int gs__scn_typed(struct gs__yctx *c, const struct gs__ktype *t, yaml_node_t *n, const char *where)
{
    if (gs__yaml_is_null(n))
        return 0;
    return check_obj(c, t, n, where);
}

int gs__scn_typed_field(struct gs__yctx *c, const struct gs__ktype *t, const char *key,
                        yaml_node_t *v, const char *where)
{
    const struct kfield *f[GS__YAML_KEYS_MAX];
    int nf = fields_of(t, f);
    char what[192];
    for (int i = 0; i < nf; i++)
        if (!strcmp(f[i]->name, key)) {
            gs__yaml_label(what, sizeof(what), "%s.%s", where, key);
            return lenient_end(c, check_value(c, f[i], v, what));
        }
    return 0;
}

int gs__scn_typed_names(const struct gs__ktype *t, const char **out, int max)
{
    const struct kfield *f[GS__YAML_KEYS_MAX];
    int nf = fields_of(t, f), n = 0;
    for (int i = 0; i < nf && n < max; i++)
        out[n++] = f[i]->name;
    return n;
}
