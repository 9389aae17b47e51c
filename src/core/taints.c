/*
 * Taints and tolerations (gpusched/policy.h): Kubernetes' rules, once, for every driver. Sources:
 * k8s.io/api core/v1 toleration.go (ToleratesTaint), k8s.io/kubernetes pkg/apis/core/validation
 * (validateTaints, ValidateTolerations), kube-scheduler's TaintToleration plugin (its filter
 * reads NoSchedule and NoExecute taints).
 */
#include "gpusched/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const effects[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};

int gs_effect_find(const char *name, int any_ok)
{
    for (int e = any_ok ? 0 : 1; name && e < 4; e++)
        if (strcmp(name, effects[e]) == 0)
            return e;
    return -EINVAL;
}

const char *gs_effect_name(enum gs_effect e)
{
    return (unsigned)e < 4 ? effects[e] : "";
}

static int alnum(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

int gs_label_word_ok(const char *s, size_t n)
{
    if (n > 63 || (n && (!alnum(s[0]) || !alnum(s[n - 1]))))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

int gs_dns_subdomain_ok(const char *s, size_t n)
{
    size_t lab = 0;
    if (n < 1 || n > 253)
        return 0;
    for (size_t i = 0; i <= n; i++) {
        char ch = i < n ? s[i] : '.';
        if (ch == '.') {
            if (!lab || !alnum(s[i - 1]) || s[i - lab] == '-')
                return 0;
            lab = 0;
        } else if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-') {
            lab++;
        } else {
            return 0;
        }
    }
    return 1;
}

int gs_dns_label_ok(const char *s, size_t n)
{
    return n <= 63 && !memchr(s, '.', n) && gs_dns_subdomain_ok(s, n);
}

int gs_uid_ok(const char *s)
{
    size_t n = strlen(s);
    return n && n <= 63 && s[0] != '.' &&
           strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

int gs_label_key_ok(const char *key)
{
    const char *slash = key ? strchr(key, '/') : NULL, *name = slash ? slash + 1 : key;
    return key && (!slash || gs_dns_subdomain_ok(key, (size_t)(slash - key))) && *name &&
           gs_label_word_ok(name, strlen(name));
}

int gs_annotation_key_ok(const char *key)
{
    char low[320];
    size_t n = key ? strlen(key) : sizeof(low);
    if (n >= sizeof(low))
        return 0;
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] - 'A' + 'a' : key[i]);
    return gs_label_key_ok(low);
}

static int refuse(const char **field, const char *f, char *why, size_t wsize, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, wsize, fmt, ap);
    va_end(ap);
    *field = f;
    return -EINVAL;
}

/* A key and value both kinds share: a label key shorter than GS_SCN_NAME_MAX, a label value. */
static int key_value(const char *key, const char *value, char *k, char *v, const char **field,
                     char *why, size_t wsize)
{
    if (*key && (!gs_label_key_ok(key) || strlen(key) >= GS_SCN_NAME_MAX))
        return refuse(field, "key", why, wsize,
                      "%.80s: expected a label key: an optional DNS subdomain prefix and '/', "
                      "then a name of 1-63 bytes: alphanumerics at both ends, '-', '_', '.' "
                      "between; at most %d bytes in all",
                      key, GS_SCN_NAME_MAX - 1);
    if (!gs_label_word_ok(value, strlen(value)))
        return refuse(field, "value", why, wsize,
                      "%.80s: expected at most 63 bytes, empty or alphanumerics at both ends, "
                      "'-', '_', '.' between",
                      value);
    memcpy(k, key, strlen(key) + 1);
    memcpy(v, value, strlen(value) + 1);
    return 0;
}

int gs_taint_make(const char *key, const char *value, const char *effect, struct gs_taint *out,
                  const char **field, char *why, size_t wsize)
{
    if (!key || !*key)
        return refuse(field, "key", why, wsize, "a taint needs a key");
    int e = gs_effect_find(effect, 0);
    if (e < 0)
        return refuse(field, "effect", why, wsize,
                      "%.40s: expected NoSchedule, PreferNoSchedule or NoExecute",
                      effect ? effect : "(none)");
    out->effect = (enum gs_effect)e;
    return key_value(key, value ? value : "", out->key, out->value, field, why, wsize);
}

int gs_toleration_make(const char *key, const char *op, const char *value, const char *effect,
                       int64_t seconds, struct gs_toleration *out, const char **field, char *why,
                       size_t wsize)
{
    int e = gs_effect_find(effect ? effect : "", 1);
    if (op && strcmp(op, "Equal") && strcmp(op, "Exists") && *op)
        return refuse(field, "operator", why, wsize, "%.40s: expected Equal or Exists", op);
    out->exists = op && !strcmp(op, "Exists");
    key = key ? key : "";
    value = value ? value : "";
    if (!*key && !out->exists)
        return refuse(field, "operator", why, wsize,
                      "an empty key needs operator Exists (it then tolerates every taint)");
    if (out->exists && *value)
        return refuse(field, "value", why, wsize,
                      "operator Exists takes no value (it tolerates every value)");
    if (e < 0)
        return refuse(field, "effect", why, wsize,
                      "%.40s: expected NoSchedule, PreferNoSchedule, NoExecute, or none (all)",
                      effect);
    if (seconds != GS_UNSET && e != GS_EFFECT_NO_EXECUTE)
        return refuse(field, "tolerationSeconds", why, wsize,
                      "tolerationSeconds needs effect NoExecute");
    out->effect = (enum gs_effect)e;
    out->seconds = seconds;
    return key_value(key, value, out->key, out->value, field, why, wsize);
}

int gs_tolerates(const struct gs_toleration *tl, const struct gs_taint *tn)
{
    if (tl->effect != GS_EFFECT_ANY && tl->effect != tn->effect)
        return 0;
    if (tl->key[0] && strcmp(tl->key, tn->key))
        return 0;
    return tl->exists || !strcmp(tl->value, tn->value);
}

/* The first taint of @node of a kind (@prefer: PreferNoSchedule; else the others) @sp does not
 * tolerate; NULL none. */
static const struct gs_taint *untolerated(const struct gs_policy *pol, size_t node,
                                          const struct gs_pod_spec *sp, int prefer)
{
    const struct gs_scn_node *n = &pol->nodes[node];
    for (int32_t i = 0; i < n->ntaints; i++) {
        const struct gs_taint *tn = &pol->taints[n->taint_first + i];
        int ok = (tn->effect == GS_EFFECT_PREFER_NO_SCHEDULE) != prefer;
        for (int k = 0; !ok && k < sp->ntolerations; k++)
            ok = gs_tolerates(&sp->tolerations[k], tn);
        if (!ok)
            return tn;
    }
    return NULL;
}

const struct gs_taint *gs_node_untolerated(const struct gs_policy *pol, size_t node,
                                           const struct gs_pod_spec *sp)
{
    return untolerated(pol, node, sp, 0);
}

const struct gs_taint *gs_node_prefers_not(const struct gs_policy *pol, size_t node,
                                           const struct gs_pod_spec *sp)
{
    return untolerated(pol, node, sp, 1);
}

int gs_node_set_taints(struct gs_policy *pol, size_t node, const struct gs_taint *tn, int n)
{
    if (node >= pol->nnodes || n < 0 || n > GS_NODE_TAINTS)
        return -EINVAL;
    size_t total = (size_t)n;
    for (size_t i = 0; i < pol->nnodes; i++)
        total += i == node ? 0 : (size_t)pol->nodes[i].ntaints;
    struct gs_taint *v = malloc((total ? total : 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    size_t at = 0;
    for (size_t i = 0; i < pol->nnodes; i++) { /* every node's taints in node order */
        struct gs_scn_node *nd = &pol->nodes[i];
        const struct gs_taint *from = i == node ? tn : &pol->taints[nd->taint_first];
        int32_t k = i == node ? n : nd->ntaints;
        if (k)
            memcpy(&v[at], from, (size_t)k * sizeof(*v));
        nd->taint_first = (int32_t)at;
        nd->ntaints = k;
        at += (size_t)k;
    }
    free(pol->taints);
    pol->taints = v;
    pol->ntaints = total;
    return 0;
}
