/*
 * gpusched report without a browser (tests/browser/report.test.js opens its pages in one): the
 * JSON reader it streams its input with, the page it writes (self-contained, deterministic, its
 * data unable to end its script), and bad input refused with one line naming the place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cli/jstream.h"
#include "common/util.h"
#include "gpusched/diag.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmpdir[64];
static const char *bin;

static int setup(void **state)
{
    (void)state;
    bin = getenv("GPUSCHED_BIN");
    if (!bin || !*bin) {
        fprintf(stderr, "test_report: GPUSCHED_BIN must name the gpusched executable\n");
        return -1;
    }
    return t_tmpdir(tmpdir, sizeof(tmpdir), "gs_test_report");
}

static int teardown(void **state)
{
    (void)state;
    return t_rmtree(tmpdir);
}

/* @name in the temporary directory, in a rotating buffer: enough for every path one test holds. */
static const char *tmp_path(const char *name)
{
    static char buf[64][256];
    static int next;
    char *p = buf[next++ % 64];
    snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
    return p;
}

static const char *write_tmp(const char *name, const char *text)
{
    return t_write(tmp_path(name), text);
}

/* gpusched with @args (NULL-terminated); the result is the caller's to free. */
static struct t_run gpusched(const char *const *args)
{
    const char *argv[32] = {bin};
    size_t n = 1;
    while (*args && n < 31)
        argv[n++] = *args++;
    struct t_run r;
    t_run(argv, &r);
    return r;
}

static void expect(const struct t_run *r, int status, const char *err)
{
    if (!r->exited || r->status != status || (err && !strstr(r->err, err)))
        fail_msg("expected exit %d and \"%s\" on stderr; got exit %d:\n%s", status, err ? err : "",
                 r->status, r->err);
}

/* ---- The reader ---- */

struct seen {
    char keys[256];
    long long sum;
    size_t elements;
};

static int element(struct gs_js *s, size_t i, void *ud)
{
    struct seen *w = ud;
    json_t *v = NULL;
    (void)i;
    int rc = gs_js_value(s, &v);
    if (!rc && json_is_integer(v))
        w->sum += json_integer_value(v);
    json_decref(v);
    w->elements++;
    return rc;
}

static int member(struct gs_js *s, const char *key, void *ud)
{
    struct seen *w = ud;
    strncat(w->keys, key, sizeof(w->keys) - strlen(w->keys) - 2);
    strcat(w->keys, ",");
    if (strcmp(key, "list") == 0)
        return gs_js_array(s, element, w);
    if (strcmp(key, "deep") == 0)
        return gs_js_object(s, member, w);
    return gs_js_skip(s);
}

static int walk(const char *text, size_t value_max, struct seen *w, struct gs_diag *d)
{
    struct gs_js s;
    memset(w, 0, sizeof(*w));
    gs_diag_init(d);
    int rc = gs_js_open(&s, write_tmp("walk.json", text), value_max, d);
    if (!rc)
        rc = gs_js_object(&s, member, w);
    if (!rc)
        rc = gs_js_end(&s);
    gs_js_close(&s);
    return rc;
}

/* Numbers end where the next byte is not theirs: that byte is handed back, whatever it is. */
static void test_reader_walks(void **state)
{
    struct seen w;
    struct gs_diag d;
    (void)state;
    assert_int_equal(walk("{\"list\": [1,2 ,3\n,40\t],\"skip\":{\"a\":[{},[],\"]\\\"\"]},"
                          "\"deep\":{\"list\":[]},\"n\":-7e2, \"t\":true}\n",
                          64, &w, &d),
                     0);
    assert_string_equal(w.keys, "list,skip,deep,list,n,t,");
    assert_int_equal(w.sum, 46);
    assert_int_equal(w.elements, 4);
    assert_int_equal(walk("{}", 64, &w, &d), 0);
    assert_int_equal(walk(" {\"list\":[ ]} ", 64, &w, &d), 0);
    assert_int_equal(w.elements, 0);
}

/* Errors name the file's line and column. */
static void test_reader_errors(void **state)
{
    static const struct {
        const char *text, *where, *what;
    } cases[] = {
        {"{\"list\": [1, 2,, 3]}", ":1:16:", "JSON error"},
        {"{\n  \"list\": [1,\n  2 3]}", ":3:5:", "expected ',' or ']', found '3'"},
        {"{\"a\": 1 \"b\": 2}", ":1:9:", "expected ',' or '}'"},
        {"{\"a\" 1}", ":1:6:", "expected ':'"},
        {"[1]", ":1:1:", "expected an object ('{')"},
        {"{\"a\": 1} x", ":1:10:", "expected the end of the document"},
        {"{\"list\": [1", ":1:12:", "found the end of the file"},
        {"{\"skip\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
         ":1:", "nested more than 64 deep"},
        {"{\"skip\": \"a string longer than the cap\"}", ":1:10:", "longer than 16 bytes"},
    };
    struct seen w;
    struct gs_diag d;
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_true(walk(cases[i].text, 16, &w, &d) < 0);
        if (!strstr(d.msg, cases[i].where) || !strstr(d.msg, cases[i].what))
            fail_msg("case %zu: \"%s\" lacks \"%s\" or \"%s\"", i, d.msg, cases[i].where,
                     cases[i].what);
    }
}

/* ---- The page ---- */

/* A scenario run three ways (MIG, shared and whole cards, evictions) into @json. */
static void simulate(const char *json, const char *sharing)
{
    const char *yaml = tmp_path("day.yaml");
    struct t_run r =
        gpusched((const char *[]){"generate", "tenant-day", "--nodes", "8", "--pods", "150",
                                  "--sharing", sharing, "--quiet", "-o", yaml, NULL});
    expect(&r, 0, NULL);
    t_run_free(&r);
    r = gpusched((const char *[]){"simulate", "--scenario", yaml, "--json", json, "--quiet", NULL});
    expect(&r, 0, NULL);
    t_run_free(&r);
}

/* The data between <script ... id="gs-report-data"> and </script>, parsed. */
static json_t *page_data(const char *html)
{
    const char *start = strstr(html, "id=\"gs-report-data\">");
    assert_non_null(start);
    start = strchr(start, '>') + 1;
    const char *end = strstr(start, "</script>");
    assert_non_null(end);
    assert_null(memchr(start, '<', (size_t)(end - start))); /* nothing in it can end it */
    json_error_t je;
    json_t *v = json_loadb(start, (size_t)(end - start), 0, &je);
    if (!v)
        fail_msg("the page's data is not JSON: %s", je.text);
    return v;
}

static json_t *load_json(const char *path)
{
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_PRESERVE_ORDER, &je);
    if (!doc)
        fail_msg("%s: %s", path, je.text);
    return doc;
}

/* gpusched report of @json into @html with @title (NULL: none), which must succeed quietly;
 * the page's data, and the page itself in *@page when @page is not NULL. */
static json_t *report_data(const char *json, const char *html, const char *title, char **page)
{
    struct t_run r = gpusched(
        (const char *[]){"report", json, "-o", html, title ? "--title" : NULL, title, NULL});
    expect(&r, 0, NULL);
    assert_string_equal(r.err, "");
    t_run_free(&r);
    char *text = t_slurp(html, NULL);
    assert_non_null(text);
    json_t *data = page_data(text);
    if (page)
        *page = text;
    else
        free(text);
    return data;
}

static void test_scenario_page(void **state)
{
    (void)state;
    const char *json = tmp_path("run.json"), *html = tmp_path("run.html");
    simulate(json, "mig/slices");
    char *page;
    json_t *data = report_data(json, html, NULL, &page);
    assert_non_null(strstr(page, "Chart.js v3")); /* inlined: the page needs nothing else */
    assert_null(strstr(page, "src=\"http"));
    assert_null(strstr(page, "<link"));
    assert_string_equal(json_string_value(json_object_get(data, "kind")), "scenario");
    json_t *ways = json_object_get(data, "ways");
    assert_int_equal(json_array_size(ways), 3);
    json_t *full = json_array_get(ways, 2);
    assert_string_equal(json_string_value(json_object_get(full, "way")), "full");
    /* Money as people read it, and exactly. */
    const char *total = json_string_value(json_object_get(json_object_get(full, "bill"), "total"));
    assert_non_null(total);
    assert_int_equal(total[0], '$');
    assert_non_null(strchr(total, ','));
    /* The map: one cell per card and time, the states it names. */
    json_t *map = json_object_get(full, "map");
    size_t times = json_array_size(json_object_get(map, "times_s"));
    assert_true(times > 10);
    assert_true(json_array_size(json_object_get(data, "states")) > 3);
    size_t cards = 0, i, j;
    json_t *z, *node;
    json_array_foreach(json_object_get(json_object_get(data, "cluster"), "zones"), i, z)
        json_array_foreach(json_object_get(z, "nodes"), j, node) cards +=
        (size_t)json_integer_value(json_object_get(node, "gpus"));
    size_t bytes = cards * times * (size_t)json_integer_value(json_object_get(map, "width"));
    assert_int_equal(json_string_length(json_object_get(map, "cells")), (bytes + 2) / 3 * 4);
    json_decref(data);
    /* The same file gives the same page, byte for byte. */
    char *page2;
    json_decref(report_data(json, tmp_path("again.html"), NULL, &page2));
    assert_string_equal(page, page2);
    free(page);
    free(page2);
}

static void test_replay_page(void **state)
{
    (void)state;
    const char *json = tmp_path("replay.json"), *html = tmp_path("replay.html");
    struct t_run r = gpusched((const char *[]){
        "simulate", "--nodes", "data/fgd-reference/openb-eighth/nodes.csv", "--sequence",
        "data/fgd-reference/openb-eighth/sequence.csv", "--policy", "all", "--json", json, NULL});
    expect(&r, 0, NULL);
    t_run_free(&r);
    char *page;
    json_t *data = report_data(json, html, "<b>eighth</b>", &page);
    assert_non_null(strstr(page, "<title>&lt;b&gt;eighth&lt;/b&gt;</title>"));
    json_t *pols = json_object_get(data, "policies");
    assert_int_equal(json_array_size(pols), 7);
    json_t *fgd = json_array_get(pols, 1);
    assert_string_equal(json_string_value(json_object_get(fgd, "name")), "fgd");
    json_t *curve = json_object_get(fgd, "curve");
    assert_true(json_array_size(json_object_get(curve, "arrived_pct")) > 100);
    json_decref(data);
    free(page);
}

/* Every run the simulator writes is drawn: evictions by a node's failure (kind "node") and two
 * slices of one pod on one card (gpusched.io/same-card) were refused as malformed. */
static void test_simulator_output(void **state)
{
    (void)state;
    const char *json = tmp_path("failure.json");
    struct t_run r =
        gpusched((const char *[]){"simulate", "--scenario", "tests/data/scenario/node-failure.yaml",
                                  "--way", "compare", "--quiet", "--json", json, NULL});
    expect(&r, 0, NULL);
    t_run_free(&r);
    char *page;
    json_t *data = report_data(json, tmp_path("failure.html"), NULL, &page);
    json_t *series = json_object_get(
        json_object_get(json_array_get(json_object_get(data, "ways"), 2), "evictions"), "series");
    int node = 0;
    size_t i;
    json_t *x;
    json_array_foreach(series, i, x) node +=
        !strcmp(json_string_value(json_object_get(x, "kind")), "node");
    assert_true(node > 0);
    json_decref(data);
    free(page);
    const char *yaml = write_tmp(
        "same-card.yaml",
        "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: c}\nspec:\n"
        "  nodeTemplates: [{name: a100, gpuModel: A100-SXM4-80GB, gpus: 8}]\n"
        "  nodes: [{name: n1, template: a100}]\n---\n"
        "{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: t, annotations: "
        "{gpusched.io/same-card: \"true\", sim.gpusched.io/duration: 1h}}, spec: {containers: "
        "[{name: m, resources: {limits: {nvidia.com/gpu: 2, nvidia.com/gpumem: 1000}}}]}}\n");
    json = tmp_path("same-card.json");
    r = gpusched((const char *[]){"simulate", "--scenario", yaml, "--quiet", "--json", json, NULL});
    expect(&r, 0, NULL);
    t_run_free(&r);
    data = report_data(json, tmp_path("same-card.html"), NULL, &page);
    /* its pod has no gpusched.io/workload label: its wait series is named so, not "" */
    json_t *kinds = json_object_get(
        json_object_get(json_array_get(json_object_get(data, "ways"), 0), "waits"), "kinds");
    assert_int_equal(json_array_size(kinds), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(kinds, 0), "name")),
                        "(none)");
    json_decref(data);
    free(page);
}

/* A file written before the report's keys: no map, said so; the rest drawn. */
static void test_older_file(void **state)
{
    (void)state;
    const char *json = tmp_path("old.json"), *html = tmp_path("old.html");
    simulate(json, "slices");
    json_t *doc = load_json(json), *w, *p;
    size_t i, j;
    json_object_del(doc, "cluster");
    json_array_foreach(json_object_get(doc, "ways"), i, w)
    {
        json_object_del(w, "timeline");
        json_array_foreach(json_object_get(w, "pods"), j, p) json_object_del(p, "placements");
    }
    json_object_del(doc, "ways");
    json_object_del(doc, "timeline");
    assert_int_equal(json_dump_file(doc, json, 0), 0);
    json_decref(doc);
    json_t *data = report_data(json, html, NULL, NULL);
    assert_non_null(strstr(json_string_value(json_object_get(data, "map_note")), "no cluster"));
    json_decref(data);
}

/* Bad input: exit 2, one line naming the place; nothing written. */
static void test_bad_input(void **state)
{
    (void)state;
    const char *run = tmp_path("run.json"), *out = tmp_path("bad.html");
    simulate(run, "slices");
    json_t *doc = load_json(run);
    json_t *pods = json_object_get(json_array_get(json_object_get(doc, "ways"), 0), "pods");
    /* Twice the same pod in a way: gpusched bill refuses it, so does the report. */
    json_array_append_new(pods, json_deep_copy(json_array_get(pods, 0)));
    const char *dup = tmp_path("twice.json");
    assert_int_equal(json_dump_file(doc, dup, 0), 0);
    json_array_remove(pods, json_array_size(pods) - 1);
    /* A placement on a node the cluster has not (the pod saying so too, as its last placement) */
    json_t *pod0 = json_array_get(pods, 0);
    json_t *pl = json_array_get(json_object_get(pod0, "placements"), 0);
    json_t *node0 = json_incref(json_object_get(pl, "node"));
    json_object_set_new(pl, "node", json_string("no-such-node"));
    json_object_set_new(pod0, "node", json_string("no-such-node"));
    const char *ghost = tmp_path("ghost.json");
    assert_int_equal(json_dump_file(doc, ghost, 0), 0);
    /* A placement whose cards are not the usage's: one card more, or one card twice. */
    json_t *u = json_array_get(json_object_get(json_array_get(pods, 0), "usage"), 0);
    json_int_t cards = json_integer_value(json_object_get(u, "cards"));
    json_t *gpus = json_array();
    for (json_int_t g = 0; g <= cards; g++)
        json_array_append_new(gpus, json_integer(g));
    json_object_set(pod0, "node", node0);
    json_object_set_new(pl, "node", node0);
    json_object_set_new(pl, "gpus", gpus);
    json_object_set(pod0, "gpus", gpus);
    const char *more = tmp_path("more-cards.json");
    assert_int_equal(json_dump_file(doc, more, 0), 0);
    json_array_set_new(gpus, (size_t)cards, json_integer(0));
    json_object_set_new(u, "cards", json_integer(cards + 1));
    const char *twice = tmp_path("card-twice.json");
    assert_int_equal(json_dump_file(doc, twice, 0), 0);
    json_decref(doc);
    /* The top level, a copy of the last way, billed to another tenant than that way is. */
    doc = load_json(run);
    json_object_set_new(json_array_get(json_object_get(doc, "pods"), 0), "tenant",
                        json_string("tenant-x"));
    const char *top = tmp_path("top.json");
    assert_int_equal(json_dump_file(doc, top, 0), 0);
    json_decref(doc);
    /* ... and one whose timeline counts an eviction the last way's does not. */
    doc = load_json(run);
    json_array_append_new(
        json_object_get(json_object_get(doc, "timeline"), "evictions"),
        json_pack("{s:i,s:s,s:s}", "t_s", 0, "tenant", "tenant-a", "kind", "preemption"));
    const char *top_tl = tmp_path("top-timeline.json");
    assert_int_equal(json_dump_file(doc, top_tl, 0), 0);
    json_decref(doc);
    /* ... and one whose timeline has a key the report does not read and the last way's not */
    doc = load_json(run);
    json_object_set_new(json_object_get(doc, "timeline"), "extra", json_integer(1));
    const char *top_extra = tmp_path("top-extra.json");
    assert_int_equal(json_dump_file(doc, top_extra, 0), 0);
    json_decref(doc);
    /* ... and one listing a pod without its name twice, in place of another in its state (the
     * summary's counts hold) */
    doc = load_json(run);
    pods = json_object_get(json_array_get(json_object_get(doc, "ways"), 0), "pods");
    json_object_del(json_array_get(pods, 0), "name");
    const char *st = json_string_value(json_object_get(json_array_get(pods, 0), "state"));
    size_t j = 1;
    while (strcmp(json_string_value(json_object_get(json_array_get(pods, j), "state")), st))
        j++;
    json_array_set_new(pods, j, json_deep_copy(json_array_get(pods, 0)));
    const char *noname = tmp_path("no-name.json");
    assert_int_equal(json_dump_file(doc, noname, 0), 0);
    json_decref(doc);
    /* A node's cards drawn from lists the simulator never writes, or of a model it has not. */
    const char *node_key[] = {"pcie_domain", "nvlink_group", "model"}, *node_bad[3];
    json_t *node_val[] = {json_pack("[i]", 0),
                          json_pack("[s,s,s,s,s,s,s,s]", "x", "x", "x", "x", "x", "x", "x", "x"),
                          json_string("bogus")};
    for (int k = 0; k < 3; k++) {
        char name[32];
        doc = load_json(run);
        json_t *n0 = json_array_get(
            json_object_get(
                json_array_get(json_object_get(json_object_get(doc, "cluster"), "zones"), 0),
                "nodes"),
            0);
        json_object_set_new(n0, node_key[k], node_val[k]);
        snprintf(name, sizeof(name), "node-%s.json", node_key[k]);
        node_bad[k] = tmp_path(name);
        assert_int_equal(json_dump_file(doc, node_bad[k], 0), 0);
        json_decref(doc);
    }
    /* A timeline whose use is below 0, or that draws one tenant twice; a pod whose figures are
     * not what the simulator writes (gpusched bill refuses it too). */
    const char *tl_bad[3];
    for (int k = 0; k < 3; k++) {
        char name[32];
        doc = load_json(run);
        json_t *tl = json_object_get(json_array_get(json_object_get(doc, "ways"), 0), "timeline");
        json_t *t0 = json_array_get(json_object_get(tl, "tenants"), 0);
        if (k == 0)
            json_array_set_new(json_object_get(t0, "allocated_milli"), 0, json_integer(-1));
        else if (k == 1)
            json_array_append_new(json_object_get(tl, "tenants"), json_deep_copy(t0));
        else
            json_object_set_new(
                json_array_get(
                    json_object_get(json_array_get(json_object_get(doc, "ways"), 0), "pods"), 0),
                "preemptions", json_integer(-1));
        snprintf(name, sizeof(name), "timeline-%d.json", k);
        tl_bad[k] = tmp_path(name);
        assert_int_equal(json_dump_file(doc, tl_bad[k], 0), 0);
        json_decref(doc);
    }
    /* seed-rates.yaml's pods[1], a 4g.40gb instance at slice 0 of a1-n02's card 0, at a slice
     * no 4g.40gb starts, or on a1-n01's card 0, which pods[0] holds whole at the same time */
    const char *rates = tmp_path("rates.json"), *card_bad[2];
    struct t_run sr =
        gpusched((const char *[]){"simulate", "--scenario", "tests/data/scenario/seed-rates.yaml",
                                  "--way", "full", "--json", rates, "--quiet", NULL});
    expect(&sr, 0, NULL);
    t_run_free(&sr);
    for (int k = 0; k < 2; k++) {
        doc = load_json(rates);
        json_t *p1 = json_array_get(json_object_get(doc, "pods"), 1);
        json_t *pl1 = json_array_get(json_object_get(p1, "placements"), 0);
        assert_string_equal(json_string_value(json_object_get(pl1, "mig")), "4g.40gb@0");
        if (k == 0) {
            json_object_set_new(pl1, "mig", json_string("4g.40gb@7"));
            json_object_set_new(p1, "mig", json_string("4g.40gb@7"));
        } else {
            json_object_set_new(pl1, "node", json_string("a1-n01"));
            json_object_set_new(p1, "node", json_string("a1-n01"));
        }
        card_bad[k] = tmp_path(k ? "card-overlap.json" : "mig-slot.json");
        assert_int_equal(json_dump_file(doc, card_bad[k], 0), 0);
        json_decref(doc);
    }
    /* MIG instances on cards the file says are of a model without MIG. */
    const char *mig = tmp_path("mig.json");
    simulate(mig, "mig/slices");
    doc = load_json(mig);
    json_t *z, *n;
    size_t zi, ni;
    json_array_foreach(json_object_get(json_object_get(doc, "cluster"), "zones"), zi, z)
        json_array_foreach(json_object_get(z, "nodes"), ni, n)
            json_object_set_new(n, "model", json_string("L40S"));
    assert_int_equal(json_dump_file(doc, mig, 0), 0);
    json_decref(doc);
    const char *notjs = write_tmp("not-chart.js", "window.Chart = {};\n");
    const char *ending = write_tmp("ending.js", "/* Chart.js v3 */ var s = '</script>';\n");
    static const char *const none[] = {NULL};
    /* a file refused names the option it came from */
    const char *norates = tmp_path("none.yaml"), *nodir = tmp_path("no-dir/page.html");
    char want_rates[320], want_nodir[320];
    snprintf(want_rates, sizeof(want_rates), "--rates %s: cannot open", norates);
    snprintf(want_nodir, sizeof(want_nodir), "-o %s: cannot write", nodir);
    struct {
        const char *const *args;
        const char *err;
    } cases[] = {
        {(const char *const[]){"report", run, NULL}, "no -o REPORT.html given"},
        {(const char *const[]){"report", "-o", out, NULL}, "no RUN.json given"},
        {(const char *const[]){"report", run, run, "-o", out, NULL}, "give one RUN.json"},
        {(const char *const[]){"report", "--bogus", run, "-o", out, NULL}, "\"--bogus\""},
        {(const char *const[]){"report", tmp_path("nothing.json"), "-o", out, NULL},
         "nothing.json: cannot open"},
        {(const char *const[]){"report",
                               write_tmp("syntax.json", "{\"way\": \"full\",\n \"pods\": "
                                                        "[{]}"),
                               "-o", out, NULL},
         "syntax.json:2:"},
        {(const char *const[]){"report", write_tmp("other.json", "{\"x\": 1}"), "-o", out, NULL},
         "neither a replay nor a scenario run"},
        {(const char *const[]){"report",
                               write_tmp("type.json", "{\"way\": \"full\", \"summary\": []}"), "-o",
                               out, NULL},
         "summary: expected an object, got array"},
        /* the figures the page draws, as the simulator writes them */
        {(const char *const[]){"report",
                               write_tmp("figure.json", "{\"way\": \"full\", \"summary\": "
                                                        "{\"gpu_allocation_ratio\": \"lots\"}}"),
                               "-o", out, NULL},
         "summary.gpu_allocation_ratio: expected a fraction 0..1"},
        {(const char *const[]){"report",
                               write_tmp("reasons.json", "{\"summary\": {\"failed_by_reason\": "
                                                         "{\"x\": -1}}}"),
                               "-o", out, NULL},
         "summary.failed_by_reason: expected an object of integers >= 0"},
        {(const char *const[]){"report",
                               write_tmp("twice-key.json", "{\"way\": \"a\", \"way\": \"b\"}"),
                               "-o", out, NULL},
         "way: given twice"},
        {(const char *const[]){"report", dup, "-o", out, NULL}, "is listed twice"},
        {(const char *const[]){"report", ghost, "-o", out, NULL}, "which the cluster has not"},
        {(const char *const[]){"report", more, "-o", out, NULL},
         "card indexes where usage[0] says"},
        {(const char *const[]){"report", twice, "-o", out, NULL}, "card 0 is listed twice"},
        {(const char *const[]){"report", card_bad[0], "-o", out, NULL},
         "MIG 4g.40gb at memory slice 7 on card 0 of node \"a1-n02\": not one of the profile's "
         "starts"},
        {(const char *const[]){"report", card_bad[1], "-o", out, NULL},
         "card 0 of node \"a1-n01\" is held whole from 0 s and MIG from 0 s at once"},
        {(const char *const[]){"report", tl_bad[0], "-o", out, NULL},
         "timeline.tenants[0].allocated_milli: [0]: expected an integer in 0..2^61"},
        {(const char *const[]){"report", tl_bad[1], "-o", out, NULL},
         "tenants[0] has that name too"},
        {(const char *const[]){"report", tl_bad[2], "-o", out, NULL},
         "pods[0].preemptions: -1 is below 0"},
        {(const char *const[]){"report",
                               write_tmp("no-ways.json", "{\"ways\": [], \"way\": \"full\", "
                                                         "\"summary\": {}, \"pods\": []}"),
                               "-o", out, NULL},
         "ways: empty"},
        {(const char *const[]){
             "report",
             write_tmp("same-way.json",
                       "{\"ways\": [{\"way\": \"full\", \"summary\": {}, \"pods\": "
                       "[]}, {\"way\": \"full\", \"summary\": {}, \"pods\": []}]}"),
             "-o", out, NULL},
         "ways[1].way: \"full\" is also ways[0]"},
        {(const char *const[]){
             "report",
             write_tmp("odd-way.json",
                       "{\"ways\": [{\"way\": \"mine\", \"summary\": {}, \"pods\": []}]}"),
             "-o", out, NULL},
         "ways[0].way: \"mine\" is not a way the simulator runs"},
        {(const char *const[]){
             "report",
             write_tmp("count.json",
                       "{\"way\": \"full\", \"summary\": {\"completed\": 1}, \"pods\": "
                       "[{\"name\": \"a/p\", \"tenant\": \"t\", \"state\": \"pending\", "
                       "\"submit_s\": 0, \"start_s\": null, \"end_s\": null, \"wait_s\": null, "
                       "\"usage\": []}]}"),
             "-o", out, NULL},
         "summary.completed: 1, but pods lists 0 completed"},
        /* a pod without a name escaped the check for a pod listed twice */
        {(const char *const[]){"report", noname, "-o", out, NULL}, "pods[0].name: expected string"},
        {(const char *const[]){"report", top, "-o", out, NULL},
         "pods: not ways[2].pods: a comparison's top level repeats its last way"},
        {(const char *const[]){"report", top_tl, "-o", out, NULL},
         "timeline: not ways[2].timeline: a comparison's top level repeats its last way"},
        {(const char *const[]){"report", top_extra, "-o", out, NULL},
         "timeline: not ways[2].timeline: a comparison's top level repeats its last way"},
        {(const char *const[]){"report", node_bad[0], "-o", out, NULL},
         "cluster.zones[0].nodes[0].pcie_domain: expected an array of 8"},
        {(const char *const[]){"report", node_bad[1], "-o", out, NULL},
         "cluster.zones[0].nodes[0].nvlink_group[0]: expected an integer 0..63 or null"},
        {(const char *const[]){"report", node_bad[2], "-o", out, NULL},
         "cluster.zones[0].nodes[0].model: unknown GPU model \"bogus\""},
        {(const char *const[]){"report", mig, "-o", out, NULL}, "is not one of L40S's"},
        {(const char *const[]){"report", run, "-o", out, "--chart-js", tmp_path("none.js"), NULL},
         "libjs-chart.js"},
        {(const char *const[]){"report", run, "-o", out, "--chart-js", notjs, NULL},
         "not Chart.js"},
        {(const char *const[]){"report", run, "-o", out, "--chart-js", ending, NULL},
         "would end its <script> early"},
        {(const char *const[]){"report", run, "-o", out, "--title", "a\x1b[31m", NULL},
         "--title: holds a control"},
        {(const char *const[]){"report", run, "-o", out, "--rates", norates, NULL}, want_rates},
        {(const char *const[]){"report", run, "-o", nodir, NULL}, want_nodir},
        {none, NULL},
    };
    for (size_t i = 0; cases[i].args[0]; i++) {
        struct t_run r = gpusched(cases[i].args);
        expect(&r, 2, cases[i].err);
        assert_string_equal(r.out, "");
        if (access(out, F_OK) == 0) /* no page, not even half of one */
            fail_msg("case %zu (%s) wrote a page", i, cases[i].err);
        t_run_free(&r);
    }
}

/* A key it does not read is said, not silently dropped; the page is still written. */
static void test_unknown_key_warns(void **state)
{
    (void)state;
    const char *run = tmp_path("run.json"), *out = tmp_path("extra.html");
    simulate(run, "slices");
    char *text = t_slurp(run, NULL);
    char *with = malloc(strlen(text) + 32);
    sprintf(with, "{\"future\": [1, {\"a\": 2}],%s", text + 1);
    json_t *doc = json_loads(with, 0, NULL);
    json_t *z0 = json_array_get(json_object_get(json_object_get(doc, "cluster"), "zones"), 0);
    json_object_set_new(json_array_get(json_object_get(z0, "nodes"), 0), "nvswitch",
                        json_integer(1));
    const char *extra = tmp_path("extra.json");
    assert_int_equal(json_dump_file(doc, extra, 0), 0);
    json_decref(doc);
    struct t_run r = gpusched((const char *[]){"report", extra, "-o", out, NULL});
    expect(&r, 0, "warning: ");
    assert_non_null(strstr(r.err, "future is not read by this report"));
    assert_non_null(strstr(r.err, "cluster.zones[0].nodes[0].nvswitch is not read by this report"));
    assert_int_equal(access(out, F_OK), 0);
    t_run_free(&r);
    free(text);
    free(with);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_walks),     cmocka_unit_test(test_reader_errors),
        cmocka_unit_test(test_scenario_page),    cmocka_unit_test(test_replay_page),
        cmocka_unit_test(test_older_file),       cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_simulator_output), cmocka_unit_test(test_unknown_key_warns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
