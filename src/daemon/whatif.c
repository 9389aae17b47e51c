/*
 * gpuschedd: GET /v1/snapshot, the live state as a scenario `gpusched simulate --from-now`
 * continues from (docs/whatif.md). Runs on the scheduler thread, which owns the state, so what it
 * writes is one instant: the inventory as a Cluster (a node whose agent registered its topology
 * with a template of its own), the policy files in force as they were read,
 * the PodGroups posted, the nodes NotReady as nodeFailures and the cards unhealthy as
 * cardFailures at now, the cards of a node a pod evicted through Kubernetes still stops on as
 * cardHolds until its grace period ends, and every pod held in arrival order (its Pod as posted,
 * with its arrival and, running, its node, cards, MIG instance and start as sim.gpusched.io/
 * annotations). Times are microseconds since an origin: 0 on the manual clock, else the earliest
 * submission held (written as a comment).
 */
#include "whatif.h"
#include "agents.h"
#include "api.h"
#include "gang.h"
#include "log.h"
#include "nodes.h"
#include "sched.h"
#include "state.h"
#include "textbuf.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/fleet.h"
#include "gpusched/scenario.h"
#include "gpusched/tenancy.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define SNAPSHOT_MAX ((size_t)1 << 30) /* bytes: past it the answer is refused (507) */

/* "[[0,1],[2,3]]": the cards of each group index of @of (GS_NO_GROUP: in none), @n cards. */
static void groups(struct gsd_text *t, const uint8_t *of, int n)
{
    gsd_text_put(t, "[", 1);
    int ngroups = 0;
    for (int g = 0; g < GS_NO_GROUP; g++) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (of[i] == g)
                gsd_text_printf(t, "%s%d", k++ ? "," : ngroups ? ",[" : "[", i);
        if (k) {
            gsd_text_put(t, "]", 1);
            ngroups++;
        }
    }
    gsd_text_put(t, "]", 1);
}

/* One node template, named @name. */
static void template(struct gsd_text *t, const struct gs_node_template *tp, const char *name)
{
    gsd_text_printf(t, "    - name: \"%s\"\n      gpus: %d\n", name, tp->gpus);
    if (tp->model >= 0)
        gsd_text_printf(t, "      gpuModel: \"%s\"\n", gs_catalog_at(tp->model)->name);
    if (tp->cpu_milli != GS_UNSET)
        gsd_text_printf(t, "      cpuMilli: %" PRId64 "\n", tp->cpu_milli);
    if (tp->memory_mib != GS_UNSET)
        gsd_text_printf(t, "      memoryMiB: %" PRId64 "\n", tp->memory_mib);
    if (tp->max_pods)
        gsd_text_printf(t, "      maxPods: %d\n", (int)tp->max_pods);
    if (tp->timeslice_replicas)
        gsd_text_printf(t, "      timeSlicing: {replicas: %d}\n", (int)tp->timeslice_replicas);
    if (tp->gpus <= 0)
        return;
    gsd_text_printf(t, "      pcieDomains: ");
    groups(t, tp->pcie_domain, tp->gpus);
    gsd_text_printf(t, "\n      nvlinkGroups: ");
    groups(t, tp->nvlink_group, tp->gpus);
    gsd_text_printf(t, "\n");
    int any = 0;
    for (int a = 0; a < tp->gpus; a++)
        for (int b = a + 1; b < tp->gpus; b++)
            if (tp->nvlinks[a][b])
                gsd_text_printf(t, "%s[%d,%d,%d]", any++ ? "," : "      nvlinks: [", a, b,
                                (int)tp->nvlinks[a][b]);
    if (any)
        gsd_text_printf(t, "]\n");
}

static int template_named(const struct gs_policy *p, const char *name)
{
    for (size_t i = 0; i < p->ntemplates; i++)
        if (strcmp(p->templates[i].name, name) == 0)
            return 1;
    return 0;
}

/* The template a node whose agent registered a topology is written with: its own, named after
 * its index ("reported-7"), with more '-' while the inventory has a template of that name. */
static void reported_name(const struct gs_policy *p, size_t node, char *name, size_t size)
{
    int dashes = 1;
    do
        snprintf(name, size, "reported%.*s%zu", dashes, "--------", node);
    while (template_named(p, name) && ++dashes < 8);
}

static void cluster(struct gsd_text *t, const struct gsd_state *st)
{
    const struct gs_policy *p = &st->inv->policy;
    char name[GS_SCN_NAME_MAX];
    gsd_text_printf(t, "---\napiVersion: gpusched.io/v1alpha1\nkind: Cluster\n"
                       "metadata: {name: snapshot}\nspec:\n  nodeTemplates:\n");
    for (size_t i = 0; i < p->ntemplates; i++)
        template(t, &p->templates[i], p->templates[i].name);
    for (size_t i = 0; i < p->nnodes; i++) { /* what an agent found replaces its template's */
        struct gs_node_template tp = p->templates[p->nodes[i].template_index];
        if (gsd_agent_topology(st, i, &tp)) {
            reported_name(p, i, name, sizeof(name));
            template(t, &tp, name);
        }
    }
    gsd_text_printf(t, "  nodes:\n");
    for (size_t i = 0; i < p->nnodes; i++) { /* a node of no zone (CSV) is in "default" there */
        const char *z = p->nodes[i].zone;
        struct gs_node_template tp;
        snprintf(name, sizeof(name), "%s", p->templates[p->nodes[i].template_index].name);
        if (gsd_agent_topology(st, i, &tp))
            reported_name(p, i, name, sizeof(name));
        gsd_text_printf(t, "    - {name: \"%s\", %s%s%stemplate: \"%s\"", p->nodes[i].name,
                        *z ? "zone: \"" : "", z, *z ? "\", " : "", name);
        for (int32_t k = 0; k < p->nodes[i].ntaints; k++) {
            const struct gs_taint *tn = &p->taints[p->nodes[i].taint_first + k];
            gsd_text_printf(t, "%s{key: \"%s\", value: \"%s\", effect: %s}",
                            k ? ", " : ", taints: [", tn->key, tn->value,
                            gs_effect_name(tn->effect));
        }
        gsd_text_printf(t, "%s}\n", p->nodes[i].ntaints ? "]" : "");
    }
}

/*
 * json_dumps() of @j with @flags, as YAML reads it back: JSON is YAML's flow style, but for the
 * characters YAML takes as line breaks (U+0085, U+2028, U+2029: "\u0085---" in a string would
 * end the document) or refuses in a stream (DEL, the C1 controls, U+FEFF, U+FFFE, U+FFFF), which
 * JSON writes raw; each is written as its \u escape, which JSON and YAML read alike and which
 * stand only inside strings. Return: a new string (free()); NULL out of memory.
 */
static char *yaml_json(const json_t *j, size_t flags)
{
    char *s = json_dumps(j, flags);
    size_t n = s ? strlen(s) : 0, k = 0;
    char *out = s ? malloc(6 * n + 1) : NULL; /* \uXXXX, 6 bytes, for one byte (DEL) at most */
    for (size_t i = 0; out && i < n;) {
        const unsigned char *u = (const unsigned char *)s + i;
        unsigned cp = 0, len = 1;
        if (u[0] == 0x7f)
            cp = 0x7f;
        else if (u[0] == 0xc2 && i + 1 < n && u[1] >= 0x80 && u[1] <= 0x9f)
            cp = u[1], len = 2;
        else if (u[0] == 0xe2 && i + 2 < n && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
            cp = u[2] == 0xa8 ? 0x2028 : 0x2029, len = 3;
        else if (u[0] == 0xef && i + 2 < n &&
                 ((u[1] == 0xbb && u[2] == 0xbf) || (u[1] == 0xbf && u[2] >= 0xbe)))
            cp = 0xf000u | (u[1] & 0x3fu) << 6 | (u[2] & 0x3fu), len = 3;
        if (cp)
            k += (size_t)sprintf(out + k, "\\u%04x", cp);
        else
            out[k++] = s[i];
        i += len;
    }
    if (out)
        out[k] = '\0';
    free(s);
    return out;
}

/* A PodGroup's labels and annotations as posted, each given one as ", KEY: {JSON}" (JSON is
 * YAML's flow style). */
static void group_meta(struct gsd_text *t, const struct gsd_group *g)
{
    json_t *m = json_loads(g->meta ? g->meta : "{}", 0, NULL);
    const char *k;
    json_t *v;
    json_object_foreach(m, k, v)
    {
        char *text = json_object_size(v) ? yaml_json(v, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        if (text)
            gsd_text_printf(t, ", %s: %s", k, text);
        free(text);
    }
    json_decref(m);
}

static void podgroups(struct gsd_text *t, const struct gsd_state *st)
{
    for (size_t i = 0; i < st->ngroups; i++) {
        const struct gsd_group *g = st->groups[i];
        gsd_text_printf(t,
                        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                        "metadata: {name: \"%s\", namespace: \"%s\"",
                        g->spec.name, g->spec.ns);
        group_meta(t, g);
        /* the queue its members run in, `default` where it names none (gs_podgroup_queue()):
         * as Volcano shows it, and as the reader would take it anyway */
        gsd_text_printf(t, "}\nspec:\n  minMember: %d\n  queue: \"%s\"\n", (int)g->spec.min_member,
                        gs_podgroup_queue(&g->spec));
        if (g->spec.priority_class[0])
            gsd_text_printf(t, "  priorityClassName: \"%s\"\n", g->spec.priority_class);
        json_t *mr = gsd_group_min_json(g);
        char *text =
            mr && json_object_size(mr) ? yaml_json(mr, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
        if (text) /* JSON is YAML's flow style */
            gsd_text_printf(t, "  minResources: %s\n", text);
        free(text);
        json_decref(mr);
        json_t *tm = g->spec.ntasks > 0 ? gsd_group_tasks_json(&g->spec) : NULL;
        text = tm ? yaml_json(tm, JSON_COMPACT) : NULL;
        if (text) /* task names are DNS labels: plain YAML keys */
            gsd_text_printf(t, "  minTaskMember: %s\n", text);
        free(text);
        json_decref(tm);
    }
}

/*
 * The PodGroups pods wait for that neither the API nor the config files hold (a member may come
 * before its PodGroup): each written with minMember one more than its pods held, so they wait on
 * in the continuation, as here, and the snapshot still loads (the reader refuses a pod of an
 * undefined PodGroup). An annotation says so. Its spec.queue is the first queue-name annotation
 * among its pods, the queue they are counted in meanwhile: a PodGroup written without one would
 * be in `default`, and the reader would refuse each pod whose annotation names another. Under
 * gangScheduling: false they start there (whatif.md says so). O(pods).
 */
static void unmade_podgroups(struct gsd_text *t, const struct gsd_state *st)
{
    json_t *waiting = json_object(), *queue = json_object(); /* "NS/NAME": its pods, its queue */
    char key[GSD_KEY_MAX];
    for (const struct gsd_pod *p = st->head; p && waiting && queue; p = p->next) {
        if (!p->spec.group[0] || p->grp || gsd_group_of_files(st->cfg, p->spec.ns, p->spec.group))
            continue;
        snprintf(key, sizeof(key), "%s/%s", p->spec.ns, p->spec.group);
        json_int_t n = json_integer_value(json_object_get(waiting, key));
        if (json_object_set_new(waiting, key, json_integer(n + 1)))
            t->full = 1; /* out of memory: the answer says so */
        if (p->spec.queue[0] && !json_object_get(queue, key) &&
            json_object_set_new(queue, key, json_string(p->spec.queue)))
            t->full = 1;
    }
    const char *k;
    json_t *n;
    json_object_foreach(waiting, k, n)
    {
        const char *slash = strchr(k, '/');
        gsd_text_printf(t,
                        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                        "metadata: {name: \"%s\", namespace: \"%.*s\", annotations: "
                        "{gpusched.io/snapshot: \"not made in gpuschedd: its %lld pods wait for "
                        "it\"}}\nspec:\n  minMember: %lld\n",
                        slash + 1, (int)(slash - k), k, (long long)json_integer_value(n),
                        (long long)json_integer_value(n) + 1);
        const char *q = json_string_value(json_object_get(queue, k));
        if (q)
            gsd_text_printf(t, "  queue: \"%s\"\n", q);
    }
    t->full |= !waiting || !queue;
    json_decref(waiting);
    json_decref(queue);
}

/* Each card's mode history (the mode it last took, kept when empty, and since when): what
 * cardModes lets it take next. gpuschedd runs with cardModes' defaults (convert, no hold). */
static void card_modes(struct gsd_text *t, const struct gsd_state *st, int64_t origin)
{
    const struct gs_fleet *f = gs_tenancy_fleet(st->sched.tn);
    int any = 0;
    for (size_t i = 0; i < st->inv->policy.nnodes; i++)
        for (int g = 0; g < gs_fleet_node_gpus(f, i); g++) {
            int64_t since;
            enum gs_card_mode m = gs_fleet_card_history(f, i, g, &since);
            if (m == GS_CARD_FREE)
                continue;
            gsd_text_printf(t,
                            "%s      - {node: \"%s\", gpu: %d, mode: %s, since: %" PRId64 "us}\n",
                            any++ ? "" : "  cardModes:\n    cards:\n",
                            st->inv->policy.nodes[i].name, g, gs_card_mode_name(m), since - origin);
        }
}

/* Microseconds: how long pod @p takes to stop once evicted, its terminationGracePeriodSeconds
 * (Kubernetes' default 30 s when absent; the Eviction gpuschedd sends sets none of its own; a
 * negative one is 1 s, as the API server has made it since Kubernetes 1.27, kubernetes#115606). */
static int64_t grace_us(const struct gsd_pod *p)
{
    json_t *j = json_loads(p->body, 0, NULL);
    json_t *g = json_object_get(json_object_get(j, "spec"), "terminationGracePeriodSeconds");
    int64_t s = !json_is_integer(g) ? 30 : json_integer_value(g) < 0 ? 1 : json_integer_value(g);
    json_decref(j);
    return (s < INT64_MAX / 2000000 ? s : INT64_MAX / 2000000) * 1000000;
}

/*
 * The cards of the Ready nodes a pod evicted through Kubernetes still stops on: no pod goes
 * there through the extender until the API server says it is gone (extender.c), at the latest
 * its grace period after its Eviction (from now, when a restart lost when that was). Every card
 * of the node is held, as the extender holds the node; an unhealthy card is a cardFailures
 * entry already. Each is held from @now to the last such pod's end; a node whose pods' grace
 * periods have run out is not held (the kubelet has killed them).
 */
static void card_holds(struct gsd_text *t, const struct gsd_state *st, int64_t now, int64_t origin)
{
    size_t nn = st->inv->policy.nnodes;
    int64_t *until = st->nevicting ? calloc(nn ? nn : 1, sizeof(*until)) : NULL;
    int any = 0;
    for (const struct gsd_pod *p = until ? st->head : NULL; p; p = p->next) {
        if (p->state != GSD_EVICTING || p->pl.node < 0 || (size_t)p->pl.node >= nn)
            continue;
        int64_t end = (p->evicted_us ? p->evicted_us : now + origin) + grace_us(p) - origin;
        until[p->pl.node] = end > until[p->pl.node] ? end : until[p->pl.node];
    }
    const struct gs_fleet *f = gs_tenancy_fleet(st->sched.tn);
    for (size_t i = 0; until && i < nn; i++) {
        if (until[i] <= now || (i < st->nhealth && !gsd_node_ready(&st->health[i])))
            continue;
        for (int g = 0; g < gs_fleet_node_gpus(f, i); g++)
            if (!(i < st->nhealth && st->health[i].bad_mask >> g & 1))
                gsd_text_printf(
                    t, "%s    - {node: \"%s\", gpu: %d, at: %" PRId64 "us, until: %" PRId64 "us}\n",
                    any++ ? "" : "  cardHolds:\n", st->inv->policy.nodes[i].name, g, now, until[i]);
    }
    if (st->nevicting && !until)
        t->full = 1; /* out of memory: the answer says so */
    free(until);
}

/* The Simulation: now, the daemon's way, the cards' modes, the DaemonConfig's tenants and the
 * namespaces each owns, the nodes NotReady (down from now on), the cards marked unhealthy, with
 * the Xid their agent reported (what runs there runs on), and the cards a pod evicted through
 * Kubernetes still holds. */
static void simulation(struct gsd_text *t, const struct gsd_state *st, int64_t now, int64_t origin)
{
    gsd_text_printf(t,
                    "---\napiVersion: sim.gpusched.io/v1alpha1\nkind: Simulation\n"
                    "metadata: {name: snapshot}\nspec:\n  now: %" PRId64 "us\n  compare: [%s]\n",
                    now, gs_way_name((enum gs_way)st->way));
    card_modes(t, st, origin);
    /* the DaemonConfig's tenants own their namespaces, as merge_tenants() gives them the core */
    for (size_t i = 0; i < st->cfg->ntenants; i++) {
        const struct gsd_tenant *dt = &st->cfg->tenants[i];
        gsd_text_printf(t, "%s    - {name: \"%s\", namespaces: [", i ? "" : "  tenants:\n",
                        dt->name);
        for (size_t k = 0; k < dt->nns && k < GS_SCN_NAMESPACES; k++) /* what the core has */
            gsd_text_printf(t, "%s\"%s\"", k ? ", " : "", dt->ns[k]);
        gsd_text_printf(t, "]}\n");
    }
    int any = 0;
    for (size_t i = 0; i < st->nhealth && i < st->inv->policy.nnodes; i++)
        if (!gsd_node_ready(&st->health[i]))
            gsd_text_printf(t, "%s    - {node: \"%s\", at: %" PRId64 "us}\n",
                            any++ ? "" : "  nodeFailures:\n", st->inv->policy.nodes[i].name, now);
    any = 0;
    for (size_t i = 0; i < st->nhealth && i < st->inv->policy.nnodes; i++)
        for (int g = 0; g < GS_GPUS_MAX; g++) {
            if (!(st->health[i].bad_mask >> g & 1))
                continue;
            gsd_text_printf(t, "%s    - {node: \"%s\", gpu: %d, at: %" PRId64 "us",
                            any++ ? "" : "  cardFailures:\n", st->inv->policy.nodes[i].name, g,
                            now);
            if (st->health[i].xid[g] > 0)
                gsd_text_printf(t, ", xid: %d", (int)st->health[i].xid[g]);
            gsd_text_printf(t, "}\n");
        }
    card_holds(t, st, now, origin);
}

/* Pod @p as posted, with its arrival, progress and placement annotations, as indented JSON; one
 * whose stored body cannot be read again (a store damaged or edited: it waits, saying so) is left
 * out, a comment saying which. Return: 0; -1 out of memory. */
static int pod(struct gsd_text *t, const struct gsd_state *st, const struct gsd_pod *p,
               int64_t origin, const char *node)
{
    struct gs_tenancy_pod v = {0};
    if (p->sid >= 0)
        gs_tenancy_pod(st->sched.tn, p->sid, &v);
    json_error_t e;
    json_t *j = json_loads(p->body, 0, &e);
    json_t *md = json_object_get(j, "metadata");
    if (!json_is_object(md)) {
        json_decref(j);
        gsd_text_printf(t, "# pod %s/%s left out: its stored Pod cannot be read again\n",
                        p->spec.ns, p->spec.name);
        return 0;
    }
    json_t *an = json_object_get(md, "annotations");
    if (!json_is_object(an)) {
        an = json_object();
        json_object_set_new(md, "annotations", an);
    }
    char buf[64];
    json_object_set_new(md, "namespace", json_string(p->spec.ns));
    json_object_set_new(md, "name", json_string(p->spec.name)); /* the row's, whatever its body */
    if (!json_object_get(j, "kind")) /* posted without them, as the API allows: a scenario needs */
        json_object_set_new(j, "kind", json_string("Pod"));
    if (!json_object_get(j, "apiVersion"))
        json_object_set_new(j, "apiVersion", json_string("v1"));
    snprintf(buf, sizeof(buf), "%" PRId64 "us", p->submit_us - origin);
    json_object_set_new(an, "sim.gpusched.io/arrival", json_string(buf));
    if (v.preemptions > 0) {
        snprintf(buf, sizeof(buf), "%d", (int)v.preemptions);
        json_object_set_new(an, "sim.gpusched.io/evictions", json_string(buf));
    }
    if (p->sid >= 0 && v.first_start_us >= 0) {
        snprintf(buf, sizeof(buf), "%" PRId64 "us", v.first_start_us - origin);
        json_object_set_new(an, "sim.gpusched.io/first-start", json_string(buf));
    }
    if (v.saved_us > 0) {
        snprintf(buf, sizeof(buf), "%" PRId64 "us", v.saved_us);
        json_object_set_new(an, "sim.gpusched.io/saved", json_string(buf));
    }
    if (p->state == GSD_RUNNING) {
        json_object_set_new(an, "sim.gpusched.io/node", json_string(node));
        size_t off = 0;
        buf[0] = '\0';
        for (int g = 0; g < GS_GPUS_MAX; g++)
            if (p->pl.gpu_mask >> g & 1)
                off += (size_t)snprintf(buf + off, sizeof(buf) - off, off ? ",%d" : "%d", g);
        json_object_set_new(an, "sim.gpusched.io/gpus", json_string(buf));
        if (p->mig[0]) {
            snprintf(buf, sizeof(buf), "%d", (int)p->mig_start);
            json_object_set_new(an, "sim.gpusched.io/mig-start", json_string(buf));
        }
        snprintf(buf, sizeof(buf), "%" PRId64 "us", p->start_us - origin);
        json_object_set_new(an, "sim.gpusched.io/start", json_string(buf));
        snprintf(buf, sizeof(buf), "%" PRId64 "us", v.done_us);
        json_object_set_new(an, "sim.gpusched.io/done", json_string(buf));
        if (v.charged)
            json_object_set_new(an, "sim.gpusched.io/charged",
                                json_string(v.charged == 1 ? "dedicated" : "shared"));
    }
    char *s = yaml_json(j, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (!s)
        return -1;
    gsd_text_printf(t, "---\n%s\n", s);
    free(s);
    return 0;
}

void gsd_whatif_snapshot(struct gsd_state *st, struct gsd_req *r)
{
    int64_t now = gsd_sched_now(st), origin = st->manual_clock ? 0 : now;
    /* the running pods' progress up to now (the manual clock's passes have settled it) */
    if (!st->manual_clock && gs_tenancy_advance(st->sched.tn, now) < 0) {
        gsd_reply_error(r, 500, "", "out of memory");
        return;
    }
    for (const struct gsd_pod *p = st->head; p && !st->manual_clock; p = p->next)
        origin = p->submit_us < origin ? p->submit_us : origin;
    const struct gs_fleet *f = gs_tenancy_fleet(st->sched.tn);
    for (size_t i = 0; i < st->inv->policy.nnodes && !st->manual_clock; i++)
        for (int g = 0; g < gs_fleet_node_gpus(f, i); g++) { /* a card's mode since */
            int64_t since;
            if (gs_fleet_card_history(f, i, g, &since) != GS_CARD_FREE && since < origin)
                origin = since;
        }
    struct gsd_text t = {.max = SNAPSHOT_MAX};
    gsd_text_printf(
        &t,
        "# gpuschedd snapshot: `gpusched simulate --scenario FILE --from-now` continues "
        "it.\n# Times are microseconds since %s; a pod without "
        "sim.gpusched.io/duration runs until the horizon.\n",
        st->manual_clock ? "the manual clock's 0"
                         : "the earliest submission held or card mode taken");
    if (!st->manual_clock) {
        json_t *j = gsd_time_json(origin);
        char *at = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
        gsd_text_printf(&t, "# origin: %s\n", at ? at : "?");
        free(at);
        json_decref(j);
    }
    cluster(&t, st);
    if (st->cfg->policy_text)
        gsd_text_put(&t, st->cfg->policy_text, strlen(st->cfg->policy_text));
    podgroups(&t, st);
    unmade_podgroups(&t, st);
    simulation(&t, st, now - origin, origin);
    for (const struct gsd_pod *p = st->head; p && !t.full; p = p->next) {
        if (p->state == GSD_EVICTING) /* leaving: its node's cards are held (card_holds()) */
            continue;
        int running = p->state == GSD_RUNNING && p->pl.node >= 0 &&
                      (size_t)p->pl.node < st->inv->policy.nnodes;
        const char *node = running ? st->inv->policy.nodes[p->pl.node].name : NULL;
        if (pod(&t, st, p, origin, node))
            t.full = 1;
    }
    if (t.full || !t.s) {
        free(t.s);
        gsd_reply_error(r, t.len >= SNAPSHOT_MAX ? 507 : 500, "",
                        t.len >= SNAPSHOT_MAX ? "the snapshot is larger than 1 GiB"
                                              : "out of memory");
        return;
    }
    r->status = 200;
    r->ctype = "application/yaml";
    r->resp = t.s;
    r->resp_len = t.len;
}
