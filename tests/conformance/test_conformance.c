/*
 * Conformance: the two drivers of the one scheduler give the same run. Every scenario of
 * tests/data/scenario/ (each way its Simulation compares) and the tenants' day (64 nodes, 2,000
 * pods, each of its three ways) goes through `gpusched simulate --scenario` and through a real
 * gpuschedd on 127.0.0.1 started with --manual-clock and --way, driven as the simulator drives
 * its clock: at each instant the clock moves there (the walltimes due end, with a pass at each
 * end on the way), the nodes the Simulation fails stop beating, the pods arriving then are
 * POSTed, and a pass runs. Pod by pod, the simulator's JSON is compared with the daemon's own
 * record, the runs of its SQLite ledger (node, cards, start, end; an eviction closes a run) and
 * what GET /v1/pods says of the pods left (state, reason): each difference is printed and fails
 * the test.
 *
 * What only a simulation gives a meaning to is left out of both runs alike: the annotation
 * sim.gpusched.io/gpu-util (gpuschedd refuses it; the cards' utilisation is DCGM's there).
 * A node fails in the daemon as it does in a cluster: its agent stops beating, and the
 * nodeMonitorGracePeriodSeconds (GRACE_S) later it is NotReady; the harness beats it until
 * GRACE_S before the failure (a failure must come at least GRACE_S after the start), and a
 * restore is its next heartbeat.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/harness.h"
#include "common/util.h"
#include "config/yamlutil.h"
#include "gpusched/diag.h"
#include "gpusched/scenario.h"

#include <dirent.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define GRACE_S   60
#define CASES_MAX 64
#define SEC       1000000LL

struct kase {
    char name[96];
    char file[256]; /* the scenario */
    char way[16];
};

/* One run's view of a pod: its runs (node, cards, start and end in seconds; end -1: running). */
struct run {
    char node[64], gpus[64], mig[32];
    long long start, end;
};
struct view {
    char state[16]; /* completed, running, pending, rejected, absent */
    char reason[512];
    struct run runs[16];
    int nruns;
};

/* The events of the daemon's run at one instant. */
enum { EV_BEAT, EV_ARRIVE, EV_TICK }; /* a tick only moves the clock there */
struct event {
    int64_t t;
    int kind;
    size_t order; /* arrivals: scenario order; beats: after */
    const char *node;
    json_t *pod; /* arrivals: the Pod to POST (borrowed) */
};

struct work {
    struct gs_scenario *s;
    json_t *docs; /* every document of the scenario, as JSON */
    char dir[128];
    struct event *ev;
    size_t nev, capev;
    int64_t end_us;
    json_t *sim;    /* the simulator's pods, by name */
    json_t *posted; /* name -> the 400's message, for the pods gpuschedd refused */
    int diffs;
};

static void add_event(struct work *w, struct event e)
{
    if (w->nev == w->capev) {
        w->capev = w->capev ? 2 * w->capev : 256;
        w->ev = realloc(w->ev, w->capev * sizeof(*w->ev));
        assert_non_null(w->ev);
    }
    w->ev[w->nev++] = e;
}

/* ---- the scenario as JSON documents, and the two inputs made of them ---- */

static json_t *read_docs(const char *path)
{
    size_t n;
    char *buf = t_slurp(path, &n);
    assert_non_null(buf);
    yaml_parser_t ps;
    yaml_parser_initialize(&ps);
    yaml_parser_set_input_string(&ps, (const unsigned char *)buf, n);
    json_t *docs = json_array();
    for (;;) {
        yaml_document_t doc;
        assert_true(yaml_parser_load(&ps, &doc));
        yaml_node_t *root = yaml_document_get_root_node(&doc);
        json_t *j = root ? gs__yaml_json(&doc, root, 0) : NULL;
        yaml_document_delete(&doc);
        if (!root)
            break;
        if (json_is_object(j))
            json_array_append(docs, j);
        json_decref(j);
    }
    yaml_parser_delete(&ps);
    free(buf);
    return docs;
}

static const char *kind_of(const json_t *doc)
{
    const char *k = json_string_value(json_object_get(doc, "kind"));
    return k ? k : "";
}

/* The documents of @docs for which @pick says 1, as YAML (JSON is YAML) into @path; how many. */
static size_t write_docs(const char *path, const json_t *docs, int (*pick)(const json_t *))
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    size_t i, n = 0;
    json_t *d;
    json_array_foreach(docs, i, d) if (pick(d))
    {
        fputs(n++ ? "---\n" : "", f);
        json_dumpf(d, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
    return n;
}

static int is_cluster(const json_t *d)
{
    return !strcmp(kind_of(d), "Cluster");
}

static int is_policy(const json_t *d)
{
    const char *k = kind_of(d);
    return strcmp(k, "Cluster") && strcmp(k, "Pod") && strcmp(k, "List") && strcmp(k, "Simulation");
}

static int any(const json_t *d)
{
    (void)d;
    return 1;
}

/* The pods of @docs (items of a List too) with gpu-util taken out, in file order (borrowed). */
static json_t *pods_of(json_t *docs)
{
    json_t *pods = json_array(), *d, *item;
    size_t i, k;
    json_array_foreach(docs, i, d)
    {
        if (!strcmp(kind_of(d), "Pod"))
            json_array_append(pods, d);
        if (!strcmp(kind_of(d), "List"))
            json_array_foreach(json_object_get(d, "items"), k, item) json_array_append(pods, item);
    }
    json_array_foreach(pods, i, d) json_object_del(
        json_object_get(json_object_get(d, "metadata"), "annotations"), "sim.gpusched.io/gpu-util");
    return pods;
}

/* ---- the simulator's run ---- */

/* gpusched simulate --scenario @in --way @way --json @json (with @extra, NULL-terminated, after):
 * its exit status; the JSON (pods by name) into *@out when it ran; its stderr into *@err when
 * @err is not NULL (caller frees). */
static int run_sim(const char *in, const char *json, const char *way, const char *const *extra,
                   json_t **out, char **err)
{
    const char *argv[16] = {getenv("GPUSCHED_BIN"),
                            "simulate",
                            "--scenario",
                            in,
                            "--way",
                            way,
                            "--json",
                            json,
                            "--quiet"};
    for (size_t i = 0; extra && extra[i] && i < 6; i++)
        argv[9 + i] = extra[i];
    struct t_run r;
    t_run(argv, &r);
    int status = r.status;
    if (err)
        *err = strdup(r.err ? r.err : "");
    if (status != 0 && status != 2)
        fail_msg("%s: gpusched simulate exited %d: %s", in, r.status, r.err);
    t_run_free(&r);
    if (status)
        return status;
    json_error_t e;
    json_t *j = json_load_file(json, 0, &e);
    assert_non_null(j);
    json_t *byname = json_object(), *p;
    size_t i;
    json_array_foreach(json_object_get(j, "pods"), i, p)
        json_object_set(byname, json_string_value(json_object_get(p, "name")), p);
    json_decref(j);
    *out = byname;
    return 0;
}

/* gpusched simulate on the scenario as written to @w->dir: its exit status; the JSON (pods by
 * name) into *@out when it ran. */
static int simulate(struct work *w, const struct kase *k, json_t **out)
{
    char in[192], json[192];
    snprintf(in, sizeof(in), "%s/scenario.yaml", w->dir);
    snprintf(json, sizeof(json), "%s/sim.json", w->dir);
    write_docs(in, w->docs, any);
    return run_sim(in, json, k->way, NULL, out, NULL);
}

/* The simulator's view of pod @p: its runs are its uses (times) at its placements (where). */
static void sim_view(const json_t *p, struct view *v)
{
    memset(v, 0, sizeof(*v));
    snprintf(v->state, sizeof(v->state), "%s", json_string_value(json_object_get(p, "state")));
    const char *why = json_string_value(json_object_get(p, "reason"));
    snprintf(v->reason, sizeof(v->reason), "%s", why ? why : "");
    const json_t *use = json_object_get(p, "usage"), *where = json_object_get(p, "placements");
    for (size_t i = 0; i < json_array_size(use) && v->nruns < 16; i++) {
        struct run *r = &v->runs[v->nruns++];
        const json_t *u = json_array_get(use, i), *at = json_array_get(where, i), *g;
        const char *node = json_string_value(json_object_get(at, "node"));
        const char *mig = json_string_value(json_object_get(at, "mig"));
        snprintf(r->node, sizeof(r->node), "%s", node ? node : "?");
        snprintf(r->mig, sizeof(r->mig), "%.*s", mig ? (int)strcspn(mig, "@") : 0, mig ? mig : "");
        size_t k, off = 0;
        json_array_foreach(json_object_get(at, "gpus"), k, g) off +=
            (size_t)snprintf(r->gpus + off, sizeof(r->gpus) - off, off ? ",%lld" : "%lld",
                             (long long)json_integer_value(g));
        r->start = json_integer_value(json_object_get(u, "start_s"));
        r->end = json_integer_value(json_object_get(u, "end_s"));
    }
    if (!strcmp(v->state, "running") && v->nruns)
        v->runs[v->nruns - 1].end = -1;
    if (!strcmp(v->state, "preempted")) /* evicted and waiting again at the end */
        snprintf(v->state, sizeof(v->state), "pending");
}

/* ---- the daemon's run ---- */

/* DaemonConfig: the admin, a tenant for each tenant of the simulator's pods owning the
 * namespaces its pods are in, and the grace after which a silent node is NotReady. */
static void write_config(struct work *w, struct daemon *d)
{
    json_t *owners = json_object(), *p;
    const char *name;
    json_object_foreach(w->sim, name, p)
    {
        const char *t = json_string_value(json_object_get(p, "tenant"));
        const char *ns = json_string_value(json_object_get(p, "namespace"));
        if (!t || !*t || !ns)
            continue;
        if (!json_object_get(owners, t))
            json_object_set_new(owners, t, json_array());
        json_t *a = json_object_get(owners, t), *x;
        size_t i;
        int seen = 0;
        json_array_foreach(a, i, x) seen |= !strcmp(json_string_value(x), ns);
        if (!seen)
            json_array_append_new(a, json_string(ns));
    }
    FILE *f = fopen(d->config, "w");
    assert_non_null(f);
    fprintf(f,
            "apiVersion: gpusched.io/v1alpha1\nkind: DaemonConfig\nadminToken: " TOKEN_ADMIN
            "\nmaxBodyBytes: 1048576\nnodeToken: node-token-0123456789abcdef\n"
            "nodeMonitorGracePeriodSeconds: %d\ntenants:\n",
            GRACE_S);
    json_t *nss;
    int k = 0;
    json_object_foreach(owners, name, nss)
    {
        char *list = json_dumps(nss, JSON_COMPACT);
        fprintf(f, "  - {name: %s, token: tenant-token-%04d-0123456789, namespaces: %s}\n", name,
                k++, list);
        free(list);
    }
    fclose(f);
    json_decref(owners);
}

static int cmp_event(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* Heartbeats of node @node from @from on, every GRACE_S / 2, the last at @to (its failure's
 * time less the grace), or up to the end of the run when @to is negative. */
static void beats(struct work *w, const char *node, int64_t from, int64_t to)
{
    int64_t last = to >= 0 ? to : w->end_us;
    for (int64_t t = from; t < last; t += GRACE_S * SEC / 2)
        add_event(w, (struct event){t, EV_BEAT, SIZE_MAX, node, NULL});
    if (to >= 0)
        add_event(w, (struct event){to, EV_BEAT, SIZE_MAX, node, NULL});
}

/* Every arrival, and the heartbeats that fail and restore nodes as the Simulation says. */
static void plan(struct work *w, json_t *pods)
{
    const struct gs_scenario *s = w->s;
    assert_int_equal(json_array_size(pods), s->npods);
    w->end_us = 0;
    for (size_t i = 0; i < s->npods; i++) {
        add_event(
            w, (struct event){s->pods[i].arrival_us, EV_ARRIVE, i, NULL, json_array_get(pods, i)});
        w->end_us = s->pods[i].arrival_us > w->end_us ? s->pods[i].arrival_us : w->end_us;
    }
    const json_t *p;
    const char *name;
    json_object_foreach(w->sim, name, p)
    {
        const json_t *u;
        size_t i;
        json_array_foreach(json_object_get(p, "usage"), i, u)
        {
            int64_t e = json_integer_value(json_object_get(u, "end_s")) * SEC;
            w->end_us = e > w->end_us ? e : w->end_us;
        }
    }
    if (s->sim.horizon_us != GS_UNSET)
        w->end_us = s->sim.horizon_us;
    /* a node's heartbeats: from GRACE_S before its first failure, or from a restore, up to
     * GRACE_S before its next failure (the loader keeps a node's failures apart) */
    for (size_t i = 0; i < s->sim.nfailures; i++) {
        const struct gs_node_failure *f = &s->sim.failures[i];
        int64_t last = f->at_us - GRACE_S * SEC, from = last;
        int later = 0;
        for (size_t k = 0; k < s->sim.nfailures; k++) {
            const struct gs_node_failure *e = &s->sim.failures[k];
            if (k == i || strcmp(e->node, f->node))
                continue;
            if (e->restore_us != GS_UNSET && e->restore_us <= f->at_us &&
                (from == last || e->restore_us > from))
                from = e->restore_us; /* beating again since */
            later |= e->at_us > f->at_us;
        }
        if (last < 0 || from > last)
            fail_msg("%s: nodeFailures: node %s fails at %lld s, less than GRACE_S (%d s) after "
                     "the start or its restore: gpuschedd sees a node fail that long after its "
                     "last heartbeat",
                     f->src.file, f->node, (long long)(f->at_us / SEC), GRACE_S);
        beats(w, f->node, from, last);
        add_event(w, (struct event){f->at_us, EV_TICK, SIZE_MAX, f->node, NULL});
        if (f->restore_us != GS_UNSET && !later)
            beats(w, f->node, f->restore_us, -1);
    }
    qsort(w->ev, w->nev, sizeof(*w->ev), cmp_event);
}

static void call_ok(const struct daemon *d, const char *method, const char *path, const char *body)
{
    struct answer a;
    if (h_call(d, method, path, TOKEN_ADMIN, body, &a) || a.status != 200)
        fail_msg("%s %s %s: %ld %s", method, path, body ? body : "", a.status,
                 a.body ? a.body : "");
    h_answer_free(&a);
}

static void clock_to(const struct daemon *d, int64_t t, int pass)
{
    char body[96];
    snprintf(body, sizeof(body), "{\"to_us\": %lld, \"pass\": %s}", (long long)t,
             pass ? "true" : "false");
    call_ok(d, "POST", "/v1/clock", body);
}

/* POST pod @pod (without the annotations only a simulation reads); a refusal's message is
 * kept as the simulator keeps a rejected pod's reason. */
static void post_pod(struct work *w, const struct daemon *d, const json_t *pod)
{
    json_t *copy = json_deep_copy(pod);
    json_t *md = json_object_get(copy, "metadata");
    json_object_del(json_object_get(md, "annotations"), "sim.gpusched.io/arrival");
    char *body = json_dumps(copy, JSON_COMPACT), key[160];
    const char *ns = json_string_value(json_object_get(md, "namespace"));
    snprintf(key, sizeof(key), "%s/%s", ns ? ns : "default",
             json_string_value(json_object_get(md, "name")));
    json_decref(copy);
    struct answer a;
    assert_int_equal(h_call(d, "POST", "/v1/pods", TOKEN_ADMIN, body, &a), 0);
    if (a.status == 400)
        json_object_set_new(w->posted, key,
                            json_string(json_string_value(json_object_get(a.json, "error"))));
    else if (a.status != 201)
        fail_msg("POST /v1/pods %s: %ld %s", key, a.status, a.body ? a.body : "");
    h_answer_free(&a);
    free(body);
}

/* The events from the @i-th on that come before @until; the index of the first left. */
static size_t drive_until(struct work *w, const struct daemon *d, size_t i, int64_t until)
{
    while (i < w->nev && w->ev[i].t < until) {
        int64_t t = w->ev[i].t;
        clock_to(d, t, 0);
        for (; i < w->nev && w->ev[i].t == t; i++) {
            char path[128];
            if (w->ev[i].kind == EV_ARRIVE)
                post_pod(w, d, w->ev[i].pod);
            if (w->ev[i].kind != EV_BEAT)
                continue;
            snprintf(path, sizeof(path), "/v1/nodes/%s/heartbeat", w->ev[i].node);
            call_ok(d, "POST", path, NULL);
        }
        clock_to(d, t, 1);
    }
    return i;
}

static void drive(struct work *w, const struct daemon *d)
{
    drive_until(w, d, 0, INT64_MAX);
    clock_to(d, w->end_us, 1);
}

/* The pods gpuschedd still holds: state and reason, by name. */
static json_t *held_pods(const struct daemon *d)
{
    json_t *out = json_object();
    char path[128], cont[40] = "";
    do {
        struct answer a;
        snprintf(path, sizeof(path), "/v1/pods?limit=1000%s%s", *cont ? "&continue=" : "", cont);
        assert_int_equal(h_call(d, "GET", path, TOKEN_ADMIN, NULL, &a), 0);
        assert_int_equal(a.status, 200);
        json_t *p;
        size_t i;
        json_array_foreach(json_object_get(a.json, "items"), i, p)
        {
            char key[160];
            snprintf(key, sizeof(key), "%s/%s", json_string_value(json_object_get(p, "namespace")),
                     json_string_value(json_object_get(p, "name")));
            json_object_set(out, key, p);
        }
        const char *c = json_string_value(json_object_get(a.json, "continue"));
        snprintf(cont, sizeof(cont), "%s", c ? c : "");
        h_answer_free(&a);
    } while (*cont);
    return out;
}

/* The daemon's view of every pod: its runs from the store's ledger, the rest from @held. */
static json_t *daemon_runs(const struct daemon *d)
{
    char db[192];
    snprintf(db, sizeof(db), "%s/data/gpusched.db", d->dir);
    sqlite3 *h;
    sqlite3_stmt *q;
    assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(h,
                                        "SELECT namespace || '/' || name, node, gpus, start_us, "
                                        "end_us, ifnull(mig_profile, '') FROM ledger ORDER BY id",
                                        -1, &q, NULL),
                     SQLITE_OK);
    json_t *runs = json_object();
    while (sqlite3_step(q) == SQLITE_ROW) {
        const char *key = (const char *)sqlite3_column_text(q, 0);
        if (!json_object_get(runs, key))
            json_object_set_new(runs, key, json_array());
        json_array_append_new(
            json_object_get(runs, key),
            json_pack(
                "{s:s, s:s, s:I, s:I, s:s}", "node", sqlite3_column_text(q, 1), "gpus",
                sqlite3_column_text(q, 2), "start", (json_int_t)sqlite3_column_int64(q, 3), "end",
                (json_int_t)(sqlite3_column_type(q, 4) == SQLITE_NULL ? -1
                                                                      : sqlite3_column_int64(q, 4)),
                "mig", sqlite3_column_text(q, 5)));
    }
    sqlite3_finalize(q);
    sqlite3_close(h);
    return runs;
}

static void daemon_view(const char *key, const json_t *runs, const json_t *held,
                        const json_t *posted, struct view *v)
{
    memset(v, 0, sizeof(*v));
    const json_t *r, *p = json_object_get(held, key);
    size_t i;
    json_array_foreach(json_object_get(runs, key), i, r)
    {
        if (v->nruns == 16)
            break;
        struct run *x = &v->runs[v->nruns++];
        snprintf(x->node, sizeof(x->node), "%s", json_string_value(json_object_get(r, "node")));
        snprintf(x->gpus, sizeof(x->gpus), "%s", json_string_value(json_object_get(r, "gpus")));
        snprintf(x->mig, sizeof(x->mig), "%s", json_string_value(json_object_get(r, "mig")));
        x->start = json_integer_value(json_object_get(r, "start")) / SEC;
        json_int_t e = json_integer_value(json_object_get(r, "end"));
        x->end = e < 0 ? -1 : e / SEC;
    }
    const char *why = NULL;
    if (json_object_get(posted, key)) {
        snprintf(v->state, sizeof(v->state), "rejected");
        why = json_string_value(json_object_get(posted, key));
    } else if (p) {
        snprintf(v->state, sizeof(v->state), "%s", json_string_value(json_object_get(p, "state")));
        why = json_string_value(json_object_get(p, "reason"));
    } else {
        snprintf(v->state, sizeof(v->state), v->nruns ? "completed" : "absent");
    }
    snprintf(v->reason, sizeof(v->reason), "%s", why ? why : "");
}

/* ---- the comparison ---- */

static void differ(struct work *w, const struct kase *k, const char *pod, const char *what,
                   const char *sim, const char *dmn)
{
    if (!strcmp(sim, dmn))
        return;
    if (w->diffs++ < 200)
        printf("%s: %s: %s: simulate %s | gpuschedd %s\n", k->name, pod, what, sim, dmn);
}

static void runs_text(const struct view *v, char *buf, size_t cap)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < v->nruns && off < cap; i++) {
        const struct run *r = &v->runs[i];
        char end[24];
        snprintf(end, sizeof(end), r->end < 0 ? "on" : "%lld", r->end);
        off += (size_t)snprintf(buf + off, cap - off, "%s%s[%s]%s%s %llds-%s", i ? "; " : "",
                                r->node, r->gpus, *r->mig ? " " : "", r->mig, r->start, end);
    }
}

static void compare_pod(struct work *w, const struct kase *k, const char *key, const struct view *s,
                        const struct view *d)
{
    char a[2048], b[2048];
    differ(w, k, key, "state", s->state, d->state);
    runs_text(s, a, sizeof(a));
    runs_text(d, b, sizeof(b));
    differ(w, k, key, "runs (node[cards] start-end)", a, b);
    snprintf(a, sizeof(a), "%d", s->nruns - (strcmp(s->state, "pending") != 0 && s->nruns > 0));
    snprintf(b, sizeof(b), "%d", d->nruns - (strcmp(d->state, "pending") != 0 && d->nruns > 0));
    differ(w, k, key, "evictions", a, b);
    if (!strcmp(s->state, "pending") || !strcmp(s->state, "rejected"))
        differ(w, k, key, "reason", s->reason, d->reason);
}

/* ---- one case ---- */

/* Case @k's scenario through the simulator, and gpuschedd started on it with the arrivals
 * planned: 0; 1 when both refuse the scenario (nothing left to do but case_free()). */
static int case_start(const struct kase *k, struct work *w, struct daemon *d, json_t **pods)
{
    struct gs_diag diag;
    gs_diag_init(&diag);
    assert_int_equal(h_setup(d, NULL), 0);
    snprintf(w->dir, sizeof(w->dir), "%s", d->dir);
    snprintf(d->way, sizeof(d->way), "%s", k->way);
    d->manual_clock = 1;
    assert_int_equal(gs_scenario_new(&w->s), 0);
    if (gs_scenario_load(w->s, k->file, &diag) || gs_scenario_resolve(w->s, &diag))
        fail_msg("%s: %s", k->file, diag.msg);
    w->docs = read_docs(k->file);
    *pods = pods_of(w->docs);
    int sim_status = simulate(w, k, &w->sim);
    w->posted = json_object();
    if (sim_status) { /* a scenario the simulator refuses (no nodes): the daemon refuses too */
        snprintf(d->nodes, sizeof(d->nodes), "%s/nodes.yaml", d->dir);
        write_docs(d->nodes, w->docs, is_cluster);
        assert_int_not_equal(h_start(d), 0);
        printf("%s: both refuse it (gpusched simulate exit %d, gpuschedd does not start)\n",
               k->name, sim_status);
        return 1;
    }
    plan(w, *pods);
    snprintf(d->nodes, sizeof(d->nodes), "%s/nodes.yaml", d->dir);
    write_docs(d->nodes, w->docs, is_cluster);
    snprintf(d->policy, sizeof(d->policy), "%s/policy.yaml", d->dir);
    if (!write_docs(d->policy, w->docs, is_policy))
        d->policy[0] = '\0'; /* no policy document: no second --config */
    write_config(w, d);
    if (h_start(d)) {
        char *log = t_slurp(d->log, NULL);
        fail_msg("%s: gpuschedd did not start: %s", k->name, log ? log : "");
    }
    return 0;
}

static void case_free(struct work *w, struct daemon *d, json_t *pods)
{
    json_decref(pods);
    json_decref(w->docs);
    json_decref(w->sim);
    json_decref(w->posted);
    free(w->ev);
    gs_scenario_free(w->s);
    h_cleanup(d);
}

/* Every pod of @sim (the simulator's, by name) against gpuschedd's stopped run @d, over the
 * runs that end after @from_s (seconds; 0: all): the differences into @w->diffs. */
static size_t compare_all(struct work *w, const struct kase *k, const json_t *sim,
                          const struct daemon *d, const json_t *held, long long from_s)
{
    json_t *runs = daemon_runs(d);
    const char *key;
    json_t *p;
    size_t n = 0;
    json_object_foreach((json_t *)sim, key, p)
    {
        struct view sv, dv;
        sim_view(p, &sv);
        daemon_view(key, runs, held, w->posted, &dv);
        int kept = 0;
        for (int i = 0; i < dv.nruns; i++)
            if (dv.runs[i].end < 0 || dv.runs[i].end > from_s)
                dv.runs[kept++] = dv.runs[i];
        dv.nruns = kept;
        compare_pod(w, k, key, &sv, &dv);
        n++;
    }
    json_decref(runs);
    return n;
}

static void run_case(void **state)
{
    const struct kase *k = *state;
    struct work w = {0};
    struct daemon d;
    json_t *pods;
    if (case_start(k, &w, &d, &pods)) {
        case_free(&w, &d, pods);
        return;
    }
    drive(&w, &d);
    json_t *held = held_pods(&d);
    assert_int_equal(h_stop(&d), 0);
    size_t n = compare_all(&w, k, w.sim, &d, held, 0);
    printf("%s: %zu pods, %d differences\n", k->name, n, w.diffs);
    fflush(stdout);
    int diffs = w.diffs;
    json_decref(held);
    case_free(&w, &d, pods);
    assert_int_equal(diffs, 0);
}

/* ---- what-if: GET /v1/snapshot half-way, continued by simulate --from-now ---- */

/* GET /v1/snapshot: the admin's (a tenant's token is refused 403, none 401); the text. */
static char *take_snapshot(const struct daemon *d)
{
    struct answer a;
    assert_int_equal(h_call(d, "GET", "/v1/snapshot", NULL, NULL, &a), 0);
    assert_int_equal(a.status, 401);
    h_answer_free(&a);
    assert_int_equal(h_call(d, "GET", "/v1/snapshot", "tenant-token-0000-0123456789", NULL, &a), 0);
    assert_int_equal(a.status, 403);
    h_answer_free(&a);
    assert_int_equal(h_call(d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, &a), 0);
    if (a.status != 200)
        fail_msg("GET /v1/snapshot: %ld %s", a.status, a.body ? a.body : "");
    char *text = a.body;
    a.body = NULL;
    h_answer_free(&a);
    return text;
}

/*
 * The daemon runs the scenario to a second half-way with no event at it, answers GET
 * /v1/snapshot, and runs on to the end; the snapshot, with the pods arriving later appended as
 * an operator would add them, goes through `simulate --from-now` to the same end. Every pod the
 * snapshot or the later arrivals hold must have the same runs from then on (node, cards, start,
 * end), evictions, state and reason in both.
 */
static void snapshot_case(void **state)
{
    const struct kase *k = *state;
    struct work w = {0};
    struct daemon d;
    json_t *pods;
    if (case_start(k, &w, &d, &pods)) {
        case_free(&w, &d, pods);
        return;
    }
    int64_t mid = w.end_us / 2 / SEC * SEC;
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < w.nev && !again; i++)
            again = w.ev[i].t == mid;
        mid += again ? SEC : 0;
    }
    assert_true(mid < w.end_us);
    size_t i = drive_until(&w, &d, 0, mid);
    clock_to(&d, mid, 1);
    char *snap = take_snapshot(&d), path[192], json[192], horizon[48];
    snprintf(path, sizeof(path), "%s/snapshot.yaml", w.dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(snap, f);
    for (size_t j = i; j < w.nev; j++)
        if (w.ev[j].kind == EV_ARRIVE) {
            fputs("---\n", f);
            json_dumpf(w.ev[j].pod, f, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
            fputc('\n', f);
        }
    assert_int_equal(fclose(f), 0);
    free(snap);
    drive_until(&w, &d, i, INT64_MAX);
    clock_to(&d, w.end_us, 1);
    json_t *held = held_pods(&d);
    assert_int_equal(h_stop(&d), 0);

    snprintf(json, sizeof(json), "%s/from-now.json", w.dir);
    snprintf(horizon, sizeof(horizon), "%lldus", (long long)(w.end_us - mid));
    const char *extra[] = {"--from-now", "--horizon", horizon, NULL};
    json_t *cont = NULL;
    char *err = NULL;
    if (run_sim(path, json, k->way, extra, &cont, &err))
        fail_msg("%s: simulate --from-now refused the snapshot: %s", k->name, err);
    free(err);
    size_t n = compare_all(&w, k, cont, &d, held, (long long)(mid / SEC));
    printf("%s: snapshot at %lld s, %zu pods continued, %d differences\n", k->name,
           (long long)(mid / SEC), n, w.diffs);
    fflush(stdout);
    int diffs = w.diffs;
    assert_true(n > 0);
    json_decref(cont);
    json_decref(held);
    case_free(&w, &d, pods);
    assert_int_equal(diffs, 0);
}

/* A snapshot placing a pod on a node the Cluster lacks, or on cards another pod holds: one
 * message naming file:line:column, exit 2. */
static void snapshot_refused(void **state)
{
    (void)state;
    char dir[64], path[128], json[160];
    assert_int_equal(t_tmpdir(dir, sizeof(dir), "gs_whatif"), 0);
    snprintf(path, sizeof(path), "%s/snap.yaml", dir);
    snprintf(json, sizeof(json), "%s/out.json", dir);
    static const char *const head =
        "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
        "  nodeTemplates: [{name: t, gpuModel: A100-SXM4-80GB, gpus: 2}]\n"
        "  nodes: [{name: n1, template: t}, {name: n2, template: t}]\n---\n"
        "apiVersion: sim.gpusched.io/v1alpha1\n"
        "kind: Simulation\nmetadata: {name: s}\nspec: {now: 60s}\n";
    static const char *const pod =
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  annotations:\n"
        "    sim.gpusched.io/node: %s\n    sim.gpusched.io/gpus: \"%s\"\n"
        "    sim.gpusched.io/start: %s\nspec:\n  containers:\n  - name: m\n    resources:\n"
        "      limits: {nvidia.com/gpu: 1}\n";
    static const struct {
        const char *node2, *gpus2, *start2, *says;
        int line; /* the node's line, the cards' (33) or the start's (34) when they are wrong */
    } cases[] = {{"n9", "0", "10s", "is not a node of the Cluster", 32},
                 {"n2", "0", "90s", "sim.gpusched.io/start 90000000us is after now", 34},
                 {"n1", "0", "10s", "cannot run on node n1", 33},
                 {"n2", "", "10s", "sim.gpusched.io/gpus gives no card, and it asks some", 33}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(head, f);
        fprintf(f, pod, "a", "n1", "0", "10s");
        fprintf(f, pod, "b", cases[c].node2, cases[c].gpus2, cases[c].start2);
        assert_int_equal(fclose(f), 0);
        const char *argv[] = {getenv("GPUSCHED_BIN"),
                              "simulate",
                              "--scenario",
                              path,
                              "--from-now",
                              "--json",
                              json,
                              "--quiet",
                              NULL};
        struct t_run r;
        t_run(argv, &r);
        char where[192];
        snprintf(where, sizeof(where), "%s:%d:", path, cases[c].line);
        if (r.status != 2 || !strstr(r.err, where) || !strstr(r.err, cases[c].says) ||
            strchr(r.err, '\n') != r.err + strlen(r.err) - 1)
            fail_msg("case %zu: exit %d, want 2 and one line with %s ... %s: %s", c, r.status,
                     where, cases[c].says, r.err);
        t_run_free(&r);
    }
    /* placements without --from-now would be read and ignored: refused */
    const char *argv[] = {getenv("GPUSCHED_BIN"), "simulate", "--scenario", path, "--quiet", NULL};
    struct t_run r;
    t_run(argv, &r);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "--from-now"));
    t_run_free(&r);
    t_rmtree(dir);
}

/* ---- the cases ---- */

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct kase *)a)->file, ((const struct kase *)b)->file);
}

/* Each scenario of tests/data/scenario/, once per way its Simulation compares (else full). */
static size_t scenario_cases(struct kase *v, size_t cap)
{
    const char *dir = "tests/data/scenario";
    DIR *dp = opendir(dir);
    assert_non_null(dp);
    struct kase files[CASES_MAX];
    size_t nf = 0, n = 0;
    for (struct dirent *e; (e = readdir(dp)) && nf < CASES_MAX;) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml"))
            snprintf(files[nf++].file, sizeof(files[0].file), "%s/%.200s", dir, e->d_name);
    }
    closedir(dp);
    qsort(files, nf, sizeof(files[0]), cmp_name);
    for (size_t i = 0; i < nf; i++) {
        struct gs_scenario *s;
        struct gs_diag diag;
        gs_diag_init(&diag);
        assert_int_equal(gs_scenario_new(&s), 0);
        if (gs_scenario_load(s, files[i].file, &diag) || gs_scenario_resolve(s, &diag))
            fail_msg("%s: %s", files[i].file, diag.msg);
        int nw = s->sim.ncompare ? s->sim.ncompare : 1;
        for (int k = 0; k < nw && n < cap; k++, n++) {
            v[n] = files[i];
            snprintf(v[n].way, sizeof(v[n].way), "%s",
                     s->sim.ncompare ? s->sim.compare[k] : "full");
            snprintf(v[n].name, sizeof(v[n].name), "%.60s/%s", strrchr(files[i].file, '/') + 1,
                     v[n].way);
        }
        gs_scenario_free(s);
    }
    return n;
}

int main(void)
{
    static struct kase cases[CASES_MAX];
    static char day_dir[64], day[96];
    size_t n = scenario_cases(cases, CASES_MAX - 3);
    assert_int_equal(t_tmpdir(day_dir, sizeof(day_dir), "gs_conformance"), 0);
    snprintf(day, sizeof(day), "%s/tenant-day.yaml", day_dir);
    const char *argv[] = {getenv("GPUSCHED_BIN"),
                          "generate",
                          "tenant-day",
                          "--nodes",
                          "64",
                          "--pods",
                          "2000",
                          "--quiet",
                          "-o",
                          day,
                          NULL};
    struct t_run r;
    t_run(argv, &r);
    assert_int_equal(r.status, 0);
    t_run_free(&r);
    static const char *const ways[] = {"exclusive", "sharing", "full"};
    for (int w = 0; w < 3; w++, n++) {
        snprintf(cases[n].file, sizeof(cases[n].file), "%s", day);
        snprintf(cases[n].way, sizeof(cases[n].way), "%s", ways[w]);
        snprintf(cases[n].name, sizeof(cases[n].name), "tenant-day/%s", ways[w]);
    }
    struct CMUnitTest tests[CASES_MAX + 8];
    for (size_t i = 0; i < n; i++)
        tests[i] = (struct CMUnitTest){cases[i].name, run_case, NULL, NULL, &cases[i]};
    /* what-if: the tenants' day, snapshot half-way, each of its three ways; the node taints
     * of taints.yaml, which a pod arriving after the snapshot must still be kept off; and the
     * PodGroups' minResources of gang-minresources.yaml, a gang still held back by them */
    static struct kase snap[5];
    size_t nt = n;
    for (int w = 0; w < 3; w++) {
        snap[w] = cases[n - 3 + (size_t)w];
        snprintf(snap[w].name, sizeof(snap[w].name), "snapshot/tenant-day/%s", ways[w]);
        tests[nt++] = (struct CMUnitTest){snap[w].name, snapshot_case, NULL, NULL, &snap[w]};
    }
    for (size_t i = 0; i < n; i++)
        if (strstr(cases[i].file, "/taints.yaml") && !strcmp(cases[i].way, "full")) {
            snap[3] = cases[i];
            snprintf(snap[3].name, sizeof(snap[3].name), "snapshot/taints/full");
            tests[nt++] = (struct CMUnitTest){snap[3].name, snapshot_case, NULL, NULL, &snap[3]};
        } else if (strstr(cases[i].file, "/gang-minresources.yaml")) {
            snap[4] = cases[i];
            snprintf(snap[4].name, sizeof(snap[4].name), "snapshot/gang-minresources/full");
            tests[nt++] = (struct CMUnitTest){snap[4].name, snapshot_case, NULL, NULL, &snap[4]};
        }
    tests[nt++] = (struct CMUnitTest){"snapshot/refused", snapshot_refused, NULL, NULL, NULL};
    if (getenv("CMOCKA_TEST_FILTER")) /* one case while working on it: "snapshot*" */
        cmocka_set_test_filter(getenv("CMOCKA_TEST_FILTER"));
    int failed = _cmocka_run_group_tests("conformance", tests, nt, NULL, NULL);
    t_rmtree(day_dir);
    return failed;
}
