/*
 * GET /metrics on the real daemon: without a token aggregates only, with the metrics token (or
 * the admin's) the names and labels a dashboard joins on, pods only with metrics.perPod; and
 * `promtool check metrics` passes every level of a real scrape with nothing to report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/api.h"
#include "common/harness.h"

#include <curl/curl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOKEN_METRICS "metrics-token-0123456789"

static const char policy[] = "kind: GPUQuota\n"
                             "metadata: {name: q, namespace: team-a}\n"
                             "spec:\n"
                             "  tenant: team-a\n"
                             "  quotas: {a100-80gb: {total: 64, dedicated: 8, shared: 56}}\n"
                             "---\n"
                             "kind: ResourceQuota\n"
                             "metadata: {name: rq, namespace: team-b}\n"
                             "spec: {hard: {requests.nvidia.com/gpu: 4, requests.memory: 8Gi,\n"
                             "              requests.cpu: 3500m, pods: 10}}\n"
                             "---\n"
                             "apiVersion: nvidia.com/v1\n"
                             "kind: GpuClusterPolicy\n"
                             "spec:\n"
                             "  mig: {strategy: mixed}\n"
                             "  devices: [{name: A100-SXM4-80GB, migEnabled: true}]\n";

/* Start a daemon with the policy above and six pods: two wait, one holds a MIG instance. */
static void start(struct daemon *d, int per_pod)
{
    char extra[160];
    struct answer a;
    snprintf(extra, sizeof(extra), "metrics: {token: %s, perPod: %s}\n", TOKEN_METRICS,
             per_pod ? "true" : "false");
    assert_int_equal(h_setup(d, extra), 0);
    assert_int_equal(h_policy(d, policy), 0);
    assert_int_equal(h_start(d), 0);
    const int gpus[] = {2, 1, 8, 8, 8}; /* three 8-card pods, two 8-card A100 boards: m4 waits */
    for (int i = 0; i < 5; i++) {
        char name[16], *body;
        snprintf(name, sizeof(name), "m%d", i);
        body = h_pod(i % 2 ? "team-b" : "team-a", name, gpus[i], i == 1 ? 40 : 0);
        assert_int_equal(h_call(d, "POST", "/v1/pods", i % 2 ? TOKEN_B : TOKEN_A, body, &a), 0);
        assert_int_equal(a.status, 201);
        h_answer_free(&a);
        free(body);
    }
    json_t *mig =
        json_pack("{s:s, s:{s:s, s:s}, s:{s:[{s:s, s:{s:{s:i, s:s, s:s}}}]}}", "kind", "Pod",
                  "metadata", "name", "m5", "namespace", "team-b", "spec", "containers", "name",
                  "main", "resources", "limits", "nvidia.com/mig-1g.10gb", 1, "cpu", "1", "memory",
                  "1Gi"); /* the ResourceQuota tracks both: a pod must ask them */
    char *body = json_dumps(mig, JSON_COMPACT);
    json_decref(mig);
    assert_int_equal(h_call(d, "POST", "/v1/pods", TOKEN_B, body, &a), 0);
    assert_int_equal(a.status, 201);
    h_answer_free(&a);
    free(body);
}

/* GET /metrics with @token; 200 expected; the text (caller frees). */
static char *scrape(const struct daemon *d, const char *token)
{
    struct answer a;
    assert_int_equal(h_call(d, "GET", "/metrics", token, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    char *text = strdup(a.body);
    h_answer_free(&a);
    return text;
}

/* Scrapes until one has @needle, 20 s at most, with no request in between: a forecast fit that
 * lands has the scheduler thread publish a snapshot with its gauges. Return: that scrape. */
static char *scrape_for(const struct daemon *d, const char *needle)
{
    for (int i = 0; i < 80; i++) { /* 4 a second: under metrics.scrapesPerSecond's 5 */
        char *text = scrape(d, TOKEN_METRICS);
        if (strstr(text, needle))
            return text;
        free(text);
        usleep(250000);
    }
    fail_msg("no scrape has %s", needle);
    return NULL;
}

/* A line of @text that begins with @head and ends with @tail (the card the policy picked in
 * between). */
static void has_line(const char *text, const char *head, const char *tail)
{
    for (const char *p = strstr(text, head); p; p = strstr(p + 1, head)) {
        const char *end = strchr(p, '\n');
        size_t n = strlen(tail);
        if (end && (size_t)(end - p) >= n && !strncmp(end - n, tail, n) &&
            (p == text || p[-1] == '\n'))
            return;
    }
    fail_msg("scrape lacks a line %s...%s", head, tail);
}

static void has(const char *text, const char *const *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strstr(text, want[i]))
            fail_msg("scrape lacks: %s", want[i]);
}

/* Every queue /v1/queues shows (with the admin's token) has its weight, deserved, allocated and
 * pending GPUs in @text with the same figures; @n the queues expected. */
static void queues_match(const struct daemon *d, const char *text, size_t n)
{
    struct answer a;
    assert_int_equal(h_call(d, "GET", "/v1/queues", TOKEN_ADMIN, NULL, &a), 0);
    assert_int_equal(a.status, 200);
    json_t *doc = json_loads(a.body, 0, NULL), *items = json_object_get(doc, "items"), *q;
    size_t i;
    assert_int_equal(json_array_size(items), n);
    json_array_foreach(items, i, q)
    {
        const char *name = json_string_value(json_object_get(q, "name"));
        static const char *const key[3] = {"deserved_milli", "allocated_milli", "pending_milli"};
        static const char *const metric[3] = {"deserved", "allocated", "pending"};
        char want[256];
        snprintf(want, sizeof(want), "gpusched_queue_weight{queue=\"%s\"} %lld\n", name,
                 (long long)json_integer_value(json_object_get(q, "weight")));
        has(text, (const char *const[]){want}, 1);
        for (int k = 0; k < 3; k++) {
            long long v = (long long)json_integer_value(json_object_get(q, key[k]));
            snprintf(want, sizeof(want), "gpusched_queue_%s_gpus{queue=\"%s\"} %lld.%03lld\n",
                     metric[k], name, v / 1000, v % 1000);
            has(text, (const char *const[]){want}, 1);
        }
    }
    json_decref(doc);
    h_answer_free(&a);
}

/*
 * `promtool check metrics` on @text: it parses the exposition and lints it (names, units,
 * _total on counters, snake_case labels, help texts); it must exit 0 and report nothing.
 */
static void promtool_passes(const struct daemon *d, const char *text, const char *name)
{
    char path[160], cmd[512], out[4096] = "";
    snprintf(path, sizeof(path), "%s/%s.txt", d->dir, name);
    assert_int_equal(h_write(path, text), 0);
    snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' 2>&1", path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p); /* scripts/install-deps installs Debian's prometheus package */
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || n > 0)
        fail_msg("promtool check metrics on the %s scrape: exit %d: %s", name,
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1, out);
}

static void test_levels(void **state)
{
    (void)state;
    struct daemon d;
    start(&d, 0);
    /* Without a token: aggregates, nothing naming a tenant, namespace, queue, pod or node. */
    char *anon = scrape(&d, NULL);
    static const char *const aggregate[] = {
        "gpusched_build_info{version=\"",
        "gpusched_pods{state=\"running\"} 4\ngpusched_pods{state=\"pending\"} 2\n",
        "gpusched_pending_pods{reason=\"Insufficient nvidia.com/gpu\"} 1\n",
        "gpusched_pending_pods{reason=\"other\"} 1\n", /* m3, over team-b's ResourceQuota */
        "gpusched_nodes{ready=\"true\"} 4\n",
        "gpusched_gpus 20\n",
        /* 2 + 8 cards, 0.4 of one, and the 1g.10gb instance's 1/7 of a card in MIG mode: the
         * sum of gpusched_allocated_gpus over tenants */
        "gpusched_gpus_allocated 10.542\n",
        "gpusched_scheduling_duration_seconds_bucket{le=\"+Inf\"} ",
        "gpusched_store_commit_duration_seconds_count ",
        "gpusched_http_requests_total{code=\"2xx\"} ",
        "gpusched_http_rejected_total{reason=\"unauthenticated\"} 0\n",
        "gpusched_preemption_victims_total 0\n",
    };
    has(anon, aggregate, sizeof(aggregate) / sizeof(aggregate[0]));
    static const char *const secret[] = {"team-a", "team-b", "m0", "m5", "n-a100", "n-t4", "rq"};
    for (size_t i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
        if (strstr(anon, secret[i]))
            fail_msg("the scrape without a token names %s", secret[i]);
    promtool_passes(&d, anon, "aggregate");
    /* With the metrics token: per tenant, queue and namespace, per card, quotas and bills (the
     * forecast needs an hour of history: test_forecast_refit). */
    char *named = scrape(&d, TOKEN_METRICS);
    struct answer a;
    static const char *const names[] = {
        "gpusched_allocated_gpus{tenant=\"team-a\",queue=\"default\",namespace=\"team-a\"} "
        "10.000\n",
        /* 0.4: a 40 % share; 0.142: the 1g.10gb instance, one of the card's 7 compute slices */
        "gpusched_allocated_gpus{tenant=\"team-b\",queue=\"default\",namespace=\"team-b\"} 0.542\n",
        "gpusched_mig_instances_allocated{tenant=\"team-b\",queue=\"default\",namespace=\"team-b\","
        "profile=\"1g.10gb\"} 1\n",
        "gpusched_node_ready{hostname=\"n-a100-1\"} 1\n",
        "gpusched_gpuquota_gpus{tenant=\"team-a\",model_name=\"A100-SXM4-80GB\",resource=\"nvidia."
        "com/gpu\",type=\"hard\"} 64.000\n",
        "gpusched_gpuquota_gpus{tenant=\"team-a\",model_name=\"A100-SXM4-80GB\",resource=\"nvidia."
        "com/gpu.dedicated\",type=\"used\"} 2.000\n",
        "gpusched_gpuquota_gpus{tenant=\"team-a\",model_name=\"A100-SXM4-80GB\",resource=\"nvidia."
        "com/gpu.shared\",type=\"used\"} 8.000\n",
        "gpusched_resourcequota_pods{tenant=\"team-b\",namespace=\"team-b\",resourcequota=\"rq\","
        "resource=\"pods\",type=\"used\"} 2\n",
        "gpusched_resourcequota_memory_bytes{tenant=\"team-b\",namespace=\"team-b\",resourcequota="
        "\"rq\",resource=\"requests.memory\",type=\"hard\"} 8589934592\n",
        "gpusched_resourcequota_cpu_cores{tenant=\"team-b\",namespace=\"team-b\",resourcequota="
        "\"rq\",resource=\"requests.cpu\",type=\"hard\"} 3.500\n",
        "gpusched_bill_accrued_total{tenant=\"team-a\",currency=\"USD\"} 0.0",
    };
    has(named, names, sizeof(names) / sizeof(names[0]));
    has_line(named, "gpusched_gpu_allocated_ratio{hostname=\"", "} 0.400"); /* m1's 40 % */
    if (strstr(named, "gpusched_pod_gpu_allocated_ratio"))
        fail_msg("a series per pod without metrics.perPod");
    queues_match(&d, named, 1); /* no Queue document: every pod in `default`, as in Volcano */
    promtool_passes(&d, named, "named");
    /* The admin's token sees the same; a tenant's is refused (its view is the API's). */
    char *admin = scrape(&d, TOKEN_ADMIN);
    has(admin, names, 1);
    assert_int_equal(h_call(&d, "GET", "/metrics", TOKEN_A, NULL, &a), 0);
    assert_int_equal(a.status, 403);
    h_answer_free(&a);
    assert_int_equal(h_call(&d, "GET", "/metrics", "not-a-token-0123456789", NULL, &a), 0);
    assert_int_equal(a.status, 401);
    h_answer_free(&a);
    free(anon);
    free(named);
    free(admin);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static void test_per_pod(void **state)
{
    (void)state;
    struct daemon d;
    start(&d, 1);
    /* a name of 253 bytes is its pod's label whole (it was cut at 157, two pods one series) */
    char name[254], want[320];
    memset(name, 'y', 253);
    name[253] = '\0';
    struct answer a0;
    char *body = h_pod("team-a", name, 1, 30);
    assert_int_equal(h_call(&d, "POST", "/v1/pods", TOKEN_A, body, &a0), 0);
    assert_int_equal(a0.status, 201);
    h_answer_free(&a0);
    free(body);
    snprintf(want, sizeof(want),
             "gpusched_pod_gpu_allocated_ratio{namespace=\"team-a\",pod=\"%s\",", name);
    char *text = scrape(&d, TOKEN_METRICS);
    const char *const pods[] = {
        "gpusched_pod_gpu_allocated_ratio{namespace=\"team-a\",pod=\"m2\",hostname=",
        want,
    };
    has(text, pods, sizeof(pods) / sizeof(pods[0]));
    has_line(text, "gpusched_pod_gpu_allocated_ratio{namespace=\"team-b\",pod=\"m1\",hostname=\"",
             "} 0.400");
    promtool_passes(&d, text, "per-pod");
    free(text);
    text = scrape(&d, NULL); /* perPod or not, no names without a token */
    if (strstr(text, "gpusched_pod_gpu_allocated_ratio"))
        fail_msg("pods shown without a token");
    free(text);
    /* metrics.scrapesPerSecond (5, a burst of 10) from one address: then 429 with Retry-After */
    struct answer a;
    long last = 0;
    for (int i = 0; i < 30 && last != 429; i++) {
        assert_int_equal(h_call(&d, "GET", "/metrics", NULL, NULL, &a), 0);
        last = a.status;
        if (last == 429)
            assert_string_equal(a.retry_after, "1");
        h_answer_free(&a);
    }
    assert_int_equal(last, 429);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* With Volcano Queue documents: a queue per document and the implicit default, each with the
 * figures GET /v1/queues gives, the capability capping what one deserves. */
static void test_queues(void **state)
{
    (void)state;
    struct daemon d;
    char extra[96];
    snprintf(extra, sizeof(extra), "metrics: {token: %s}\n", TOKEN_METRICS);
    assert_int_equal(h_setup(&d, extra), 0);
    assert_int_equal(h_policy(&d, "apiVersion: scheduling.volcano.sh/v1beta1\n"
                                  "kind: Queue\n"
                                  "metadata: {name: team-a}\n"
                                  "spec: {weight: 3}\n"
                                  "---\n"
                                  "apiVersion: scheduling.volcano.sh/v1beta1\n"
                                  "kind: Queue\n"
                                  "metadata: {name: team-b}\n"
                                  "spec: {weight: 1, capability: {nvidia.com/gpu: 3}}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    const int gpus[] = {8, 2, 8, 4}; /* no pod larger than a node: that is a 400 */
    for (int i = 0; i < 4; i++) {
        char name[16], *body;
        struct answer a;
        snprintf(name, sizeof(name), "q%d", i);
        body = h_pod_annotated(i % 2 ? "team-b" : "team-a", name, gpus[i], 0,
                               "scheduling.volcano.sh/queue-name", i % 2 ? "team-b" : "team-a");
        assert_int_equal(h_call(&d, "POST", "/v1/pods", i % 2 ? TOKEN_B : TOKEN_A, body, &a), 0);
        assert_int_equal(a.status, 201);
        h_answer_free(&a);
        free(body);
    }
    char *text = scrape(&d, TOKEN_METRICS);
    queues_match(&d, text, 3);
    has(text,
        (const char *const[]){"gpusched_queue_deserved_gpus{queue=\"team-b\"} 3.000\n",
                              "gpusched_queue_pending_gpus{queue=\"team-b\"} 4.000\n"},
        2);
    promtool_passes(&d, text, "queues");
    free(text);
    /* A tenant has no queue of its own (its pods name theirs, else `default`): GET /v1/tenants
     * shows its CPU weight only, so no second "weight" disagrees with the Queue's 3. */
    struct answer t;
    h_expect(&d, "GET", "/v1/tenants", TOKEN_ADMIN, NULL, 200, &t);
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(t.json, "items"), i, item)
    {
        assert_null(json_object_get(item, "queue"));
        assert_null(json_object_get(item, "weight"));
        assert_int_equal(json_integer_value(json_object_get(item, "cpu_weight")), 1);
    }
    assert_int_equal(i, 2);
    h_answer_free(&t);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    if (sz * n >= 22 && !strncasecmp(p, "Content-Encoding: gzip", 22))
        *(int *)ud = 1;
    return sz * n;
}

/* GET /metrics with the metrics token asking for gzip, as Prometheus does: the body inflated
 * (caller frees); *@gzipped whether it came gzipped. */
static char *scrape_gzip(const struct daemon *d, int *gzipped)
{
    CURL *c = curl_easy_init();
    char url[96];
    struct h_sink b = {0};
    struct curl_slist *h = curl_slist_append(NULL, "Authorization: Bearer " TOKEN_METRICS);
    long status = 0;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", d->port);
    *gzipped = 0;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip"); /* sends it, and inflates */
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, h_on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, gzipped);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    assert_int_equal(status, 200);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return b.s;
}

/* A scrape's text is kept while the state moves for metrics.maxAgeMilliseconds, then made
 * again; the pods' reads show every write at once all along. A scraper that takes gzip gets the
 * same text gzipped. */
static void test_max_age(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    struct timespec t0, t1;
    assert_int_equal(h_setup(&d, "metrics: {token: " TOKEN_METRICS ", maxAgeMilliseconds: 2000}\n"),
                     0);
    assert_int_equal(h_start(&d), 0);
    free(scrape(&d, TOKEN_METRICS)); /* asks for the forecast, in the snapshots after it */
    h_request(&d, "POST", "/v1/pods", TOKEN_A, "{}", 400); /* a batch: the next snapshot */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    char *text = scrape(&d, TOKEN_METRICS);
    has(text, (const char *const[]){"gpusched_pods{state=\"running\"} 0\n"}, 1);
    free(text);
    char *body = h_pod("team-a", "kept", 1, 0);
    h_request(&d, "POST", "/v1/pods", TOKEN_A, body, 201);
    free(body);
    h_expect(&d, "GET", "/v1/pods", TOKEN_A, NULL, 200, &a);
    assert_int_equal(json_array_size(json_object_get(a.json, "items")), 1);
    h_answer_free(&a);
    text = scrape(&d, TOKEN_METRICS);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (t1.tv_sec - t0.tv_sec < 2) /* a machine slower than that: the bound has passed */
        has(text, (const char *const[]){"gpusched_pods{state=\"running\"} 0\n"}, 1);
    free(text);
    sleep(2);
    text = scrape(&d, TOKEN_METRICS);
    has(text, (const char *const[]){"gpusched_pods{state=\"running\"} 1\n"}, 1);
    /* the same text gzipped for a scraper that takes gzip (the state has not moved since) */
    int gzipped;
    char *inflated = scrape_gzip(&d, &gzipped);
    assert_true(gzipped);
    assert_string_equal(inflated, text);
    free(inflated);
    free(text);
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A daemon of configuration @cfg (on the manual clock when @manual) whose store's ledger holds,
 * from its start, the run @values (a store edited by hand: gpus, gpu_milli, start_us, end_us,
 * model). */
static void start_with_run(struct daemon *d, const char *cfg, int manual, const char *values)
{
    char path[128], sql[512];
    sqlite3 *db;
    assert_int_equal(h_setup(d, cfg), 0);
    d->manual_clock = manual;
    assert_int_equal(h_start(d), 0); /* makes the store */
    assert_int_equal(h_stop(d), 0);
    snprintf(path, sizeof(path), "%s/data/gpusched.db", d->dir);
    snprintf(sql, sizeof(sql),
             "INSERT INTO ledger(pod_seq, namespace, name, tenant, uid, node, gpus, gpu_milli,"
             " start_us, end_us, model) VALUES (900001, 'team-a', 'r', 'team-a', 'u1',"
             " 'n-a100-0', %s)",
             values);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(h_start(d), 0);
}

/* The value after @mid on the line of @text that begins with @head and holds @mid, into @v
 * (@n bytes); "" when no line does. Return: @v. */
static const char *gauge(const char *text, const char *head, const char *mid, char *v, size_t n)
{
    v[0] = '\0';
    for (const char *p = strstr(text, head); p; p = strstr(p + 1, head)) {
        const char *end = strchr(p, '\n'), *m = strstr(p, mid);
        if (end && m && m < end && (p == text || p[-1] == '\n')) {
            snprintf(v, n, "%.*s", (int)(end - m - strlen(mid)), m + strlen(mid));
            break;
        }
    }
    return v;
}

/* Scrapes, each after a batch (a snapshot, which asks a refit every second here), until the
 * gauge of @head and @mid (gauge()) is there and not @old; 20 s at most. Return: its value. */
static const char *refit_gauge(const struct daemon *d, const char *head, const char *mid,
                               const char *old, char *v, size_t n)
{
    for (int i = 0; i < 200; i++) { /* the refit runs beside the requests */
        usleep(100000);
        h_request(d, "POST", "/v1/pods", TOKEN_A, "{}", 400);
        char *text = scrape(d, TOKEN_METRICS);
        gauge(text, head, mid, v, n);
        free(text);
        if (*v && strcmp(v, old) != 0)
            return v;
    }
    fail_msg("no scrape has %s...%s other than \"%s\"", head, mid, old);
    return v;
}

/*
 * A fit goes to a thread of its own, the first too (seconds on a long ledger, which a restart
 * would have spent on the scheduler thread), and a scrape meanwhile gets the last gauges: the
 * first fit's show with no request after the scrape that asked. A fit reads whole hours (here
 * on the manual clock): team-b's run, started after the first fit, counts in the gauges once
 * its hour is over; while it is under way its history is 0 GPUs (the mean of the hour so far
 * passed for an hour of history: 0.321 GPU where 3 cards were held).
 */
static void test_forecast_refit(void **state)
{
    (void)state;
    struct daemon d;
    static const char *const b = "gpusched_forecast_gpus{tenant=\"team-b\",model=\"";
    static const char *const median = "quantile=\"0.5\"} ";
    char v[32];
    start_with_run(&d,
                   "metrics: {token: " TOKEN_METRICS ", forecastRefreshSeconds: 1,"
                   " scrapesPerSecond: 100}\n",
                   1, "'0', 1000, 0, NULL, 'A100-SXM4-80GB'");
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 3600}", 200);
    char *text = scrape_for(&d, "gpusched_forecast_gpus{tenant=\"team-a\""); /* the first fit */
    if (strstr(text, "gpusched_forecast_gpus{tenant=\"team-b\""))
        fail_msg("team-b before it ran");
    promtool_passes(&d, text, "forecast");
    free(text);
    json_decref(h_submit(&d, TOKEN_B, h_pod("team-b", "b1", 2, 0), 201)); /* from 3600 s */
    assert_string_equal(refit_gauge(&d, b, median, "", v, sizeof(v)), "0.000");
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 3600}", 200);
    /* its whole hours, 0 and 2 GPUs, averaged (under 4 hours the forecast is their mean); with
     * the second of the hour under way counted too, 1.333 */
    assert_string_equal(refit_gauge(&d, b, median, "0.000", v, sizeof(v)), "1.000");
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* On the manual clock the bills' totals follow the clock's steps at once: they were kept for a
 * minute of the wall clock, so a scrape after a step of hours said what the bills said before. */
static void test_bill_on_manual_clock(void **state)
{
    (void)state;
    struct daemon d;
    struct answer a;
    char needle[160];
    assert_int_equal(h_setup(&d, "metrics: {token: " TOKEN_METRICS "}\n"), 0);
    d.manual_clock = 1;
    assert_int_equal(h_start(&d), 0);
    json_decref(h_submit(&d, NULL, h_pod("team-a", "a1", 2, 0), 201));
    free(scrape(&d, TOKEN_METRICS)); /* the totals at the clock's 0 */
    h_request(&d, "POST", "/v1/clock", TOKEN_ADMIN, "{\"advance_seconds\": 18000}", 200);
    h_expect(&d, "GET", "/v1/bills", TOKEN_ADMIN, NULL, 200, &a);
    long long total = (long long)json_integer_value(json_object_get(a.json, "total_udollars"));
    h_answer_free(&a);
    assert_true(total > 0);
    snprintf(needle, sizeof(needle),
             "gpusched_bill_accrued_total{tenant=\"team-a\",currency=\"USD\"} %lld.%06lld\n",
             total / 1000000, total % 1000000);
    free(scrape_for(&d, needle));
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A ledger row ending at 2^63-1 us is a run going on past the end, as gpusched forecast --store
 * reads it: the gauges computed end + 999999 past INT64_MAX (undefined behaviour, a wrapped
 * negative end) and went missing. */
static void test_forecast_far_end(void **state)
{
    (void)state;
    struct daemon d;
    char values[160];
    /* from the start of an hour: a first hour held in part would be a low hour of the day */
    snprintf(values, sizeof(values), "'0', 1000, %lld, 9223372036854775807, 'A100-SXM4-80GB'",
             ((long long)time(NULL) / 3600 * 3600 - 3 * 86400) * 1000000LL);
    start_with_run(&d, "metrics: {token: " TOKEN_METRICS "}\n", 0, values);
    free(scrape_for(&d, "gpusched_forecast_gpus{tenant=\"team-a\",model=\"A100-SXM4-80GB\","
                        "quantile=\"0.5\"} 1.000\n"));
    assert_int_equal(h_stop(&d), 0);
    h_cleanup(&d);
}

/* A row no run can have written (it ends before it starts) keeps the gauges away until the next
 * refit: the ledger was read whole again, and the error logged, at every snapshot. */
static void test_forecast_bad_row(void **state)
{
    (void)state;
    struct daemon d;
    start_with_run(&d, "metrics: {token: " TOKEN_METRICS "}\n", 0,
                   "'0', 1000, 5000000, 1000000, 'A100-SXM4-80GB'");
    for (int i = 0; i < 4; i++) {
        free(scrape(&d, TOKEN_METRICS));
        h_request(&d, "POST", "/v1/pods", TOKEN_A, "{}", 400); /* a batch: the next snapshot */
    }
    char *text = scrape(&d, TOKEN_METRICS);
    if (strstr(text, "gpusched_forecast_gpus{"))
        fail_msg("gauges from a ledger that cannot be read");
    free(text);
    assert_int_equal(h_stop(&d), 0);
    FILE *f = fopen(d.log, "r");
    char line[4096];
    int n = 0;
    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, "cannot forecast the demand from the ledger") != NULL;
    if (f)
        fclose(f);
    assert_int_equal(n, 1);
    h_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_levels),           cmocka_unit_test(test_per_pod),
        cmocka_unit_test(test_queues),           cmocka_unit_test(test_max_age),
        cmocka_unit_test(test_forecast_far_end), cmocka_unit_test(test_forecast_bad_row),
        cmocka_unit_test(test_forecast_refit),   cmocka_unit_test(test_bill_on_manual_clock)};
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
