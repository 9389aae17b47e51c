/*
 * Benchmark of gpuschedd through its API on 127.0.0.1 (the daemon binary: $GPUSCHEDD_BIN, or
 * build/gpuschedd). Prints figures; asserts nothing.
 *   1. submissions per second and latency percentiles: CLIENTS keep-alive clients POST pods;
 *   2. extender filter and prioritize with 5,000 NodeNames, a different pod every call: latency
 *      percentiles, with the same names every call and with their order changing from call to
 *      call, and for pods asking a MIG instance (the A100 nodes may turn MIG);
 *   3. GET /v1/snapshot with the SUBMISSIONS pods held: its size and time, and `gpusched simulate
 *      --from-now` ($GPUSCHED_BIN, or build/gpusched) continuing it for an hour;
 *   4. restart time with 100,000 pods in the store: from exec to the first answer;
 *   5. churn: CHURN cycles of a distinct one-card pod (a user of its own) POSTed and DELETEd, one
 * client, on a daemon of the tests' inventory: its RSS as the cycles go, and cycles per second.
 * Usage: bench_daemon [SUBMISSIONS [STORE_PODS [CHURN]]]
 */
#include "../tests/common/harness.h"
#include "../tests/common/load.h"

#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CLIENTS   8
#define EXT_NODES 5000
#define EXT_CALLS 200

static struct daemon d;

struct client {
    const char *prefix;
    int id, from, to;
    double *lat;
    int failed;
};

/* CPU seconds (user + system) the daemon has used so far, from /proc: what it costs, whatever
 * else shares the machine. */
static double daemon_cpu(void)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)d.pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* after the command name: fields 3 on */
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static size_t discard(char *p, size_t sz, size_t n, void *ud)
{
    (void)p;
    (void)ud;
    return sz * n;
}

/* One keep-alive connection submitting pods [from, to). */
static void *submitter(void *arg)
{
    struct client *c = arg;
    CURL *h = curl_easy_init();
    char url[64];
    struct curl_slist *hd = curl_slist_append(NULL, "Authorization: Bearer " TOKEN_A);
    hd = curl_slist_append(hd, "Expect:");
    hd = curl_slist_append(hd, "Content-Type: application/json");
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/pods", d.port);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    for (int i = c->from; i < c->to; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s-%d", c->prefix, i);
        int share = i % 3 == 0; /* a third shares a card, the rest take 1 or 2 whole */
        char *body = h_pod("team-a", name, share || i % 4 ? 1 : 2, share ? 10 + i % 80 : 0);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        double t0 = l_now();
        long st = 0;
        if (curl_easy_perform(h) == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
        c->lat[i - c->from] = l_now() - t0;
        c->failed += st != 201;
        free(body);
    }
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    return NULL;
}

/* @n submissions from CLIENTS threads: pods per second and latency. */
static void bench_submit(int n, const char *prefix, const char *what)
{
    pthread_t t[CLIENTS];
    struct client c[CLIENTS];
    double *lat = calloc((size_t)n, sizeof(*lat));
    int per = n / CLIENTS, failed = 0;
    double t0 = l_now(), cpu0 = daemon_cpu();
    for (int i = 0; i < CLIENTS; i++) {
        c[i] = (struct client){prefix, i, i * per, (i + 1) * per, lat + i * per, 0};
        pthread_create(&t[i], NULL, submitter, &c[i]);
    }
    for (int i = 0; i < CLIENTS; i++) {
        pthread_join(t[i], NULL);
        failed += c[i].failed;
    }
    double el = l_now() - t0, cpu = daemon_cpu() - cpu0;
    int done = per * CLIENTS;
    if (what)
        printf("%s: %d pods by %d clients in %.2f s: %.0f submissions/s; latency p50 %.2f ms, "
               "p99 %.2f ms, max %.2f ms; %d not 201; daemon CPU %.2f s (%.0f us a pod)\n",
               what, done, CLIENTS, el, done / el, l_pct(lat, (size_t)done, 0.50) * 1e3,
               l_pct(lat, (size_t)done, 0.99) * 1e3, l_pct(lat, (size_t)done, 1.0) * 1e3, failed,
               cpu, cpu / done * 1e6);
    free(lat);
}

/* @n create-and-delete cycles of distinct pods through one keep-alive client, on a daemon of
 * the tests' inventory: RSS at each tenth, and the cycles' rate. */
/* A one-card pod of team-a named @name, of a user of that name (notebooks of many users): a
 * JSON string to free. */
static char *user_pod(const char *name)
{
    char *body = h_pod("team-a", name, 1, 0);
    json_t *pod = json_loads(body, 0, NULL);
    free(body);
    json_object_set_new(json_object_get(json_object_get(pod, "metadata"), "labels"), "user",
                        json_string(name));
    body = json_dumps(pod, JSON_COMPACT);
    json_decref(pod);
    return body;
}

static void bench_churn(int n)
{
    struct daemon c;
    if (h_setup(&c, NULL) || h_start(&c)) {
        fprintf(stderr, "bench_daemon: churn: gpuschedd did not start\n");
        return;
    }
    CURL *h = curl_easy_init();
    char url[128], at[16][24];
    struct curl_slist *hd = curl_slist_append(NULL, "Authorization: Bearer " TOKEN_A);
    hd = curl_slist_append(hd, "Expect:");
    hd = curl_slist_append(hd, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    int failed = 0, tenth = n / 10 > 0 ? n / 10 : 1, k = 0;
    double t0 = l_now();
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "churn-%d", i);
        char *body = user_pod(name);
        long st = 0, st2 = 0;
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/pods", c.port);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, NULL);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        if (curl_easy_perform(h) == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st);
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/pods/team-a/%s", c.port, name);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
        curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
        if (curl_easy_perform(h) == CURLE_OK)
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &st2);
        failed += st != 201 || st2 != 200;
        free(body);
        if ((i + 1) % tenth == 0 && k < 16)
            snprintf(at[k++], sizeof(at[0]), "%.1f", l_rss_kb(c.pid) / 1024.0);
    }
    double el = l_now() - t0;
    printf("churn: %d create-and-delete cycles in %.1f s, %.0f cycles/s, %d failed; RSS MB at "
           "each tenth:",
           n, el, n / el, failed);
    for (int i = 0; i < k; i++)
        printf(" %s", at[i]);
    printf("\n");
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    h_stop(&c);
    h_cleanup(&c);
}

/* The MIG profiles of an A100-SXM4-80GB, one per extender call in turn. */
static const char *const mig_profiles[] = {"nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb",
                                           "nvidia.com/mig-3g.40gb", "nvidia.com/mig-4g.40gb",
                                           "nvidia.com/mig-7g.80gb"};

/*
 * filter then prioritize, EXT_CALLS times, each call for another pod (as kube-scheduler asks
 * about each pod it places): a name of its own and, in turn, one or two whole cards or a share
 * of 10-89 % of one; with @mig, one MIG instance of each A100 profile in turn. @vary: every
 * call names the nodes in another order than the call before (as kube-scheduler does when the
 * feasible nodes change), so nothing read for one call serves the next; else every call sends
 * the same names.
 */
static void bench_extender(int vary, int mig)
{
    static int row;
    char **body = calloc(2 * EXT_CALLS, sizeof(*body));
    for (int i = 0; i < EXT_CALLS; i++) {
        char pod[32];
        int share = i % 3 == 0;
        const char *m = mig ? mig_profiles[i % 5] : NULL;
        snprintf(pod, sizeof(pod), "ext-%d-%d", row, i);
        for (int k = 0; k < 2; k++)
            body[2 * i + k] = l_extender_args(EXT_NODES, vary && (k + i) % 2, pod,
                                              share ? 1 : 1 + i % 2, share ? 10 + i % 80 : 0, m);
    }
    row++;
    double *lf = calloc(EXT_CALLS, sizeof(double)), *lp = calloc(EXT_CALLS, sizeof(double));
    double *lb = calloc(EXT_CALLS, sizeof(double));
    CURL *h = curl_easy_init();
    struct curl_slist *hd = curl_slist_append(NULL, "Expect:");
    hd = curl_slist_append(hd, "Authorization: Bearer " TOKEN_ADMIN);
    hd = curl_slist_append(hd, "Content-Type: application/json");
    char url[64];
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    double cpu0 = daemon_cpu();
    for (int i = 0; i < EXT_CALLS; i++) {
        double t0 = l_now();
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/extender/filter", d.port);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body[2 * i]);
        curl_easy_perform(h);
        double t1 = l_now();
        snprintf(url, sizeof(url), "http://127.0.0.1:%d/extender/prioritize", d.port);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body[2 * i + 1]);
        curl_easy_perform(h);
        double t2 = l_now();
        lf[i] = t1 - t0;
        lp[i] = t2 - t1;
        lb[i] = t2 - t0;
    }
    printf("extender, %d NodeNames%s, a different pod every call%s, request body %zu bytes, %d "
           "calls each: filter p50 %.2f ms p99 %.2f ms; prioritize p50 %.2f ms p99 %.2f ms; "
           "filter+prioritize p99 %.2f ms; daemon CPU %.2f ms a pair\n",
           EXT_NODES, vary ? " (order changing every call)" : "",
           mig ? " (one MIG instance each, A100 profiles in turn)" : "", strlen(body[0]), EXT_CALLS,
           l_pct(lf, EXT_CALLS, 0.5) * 1e3, l_pct(lf, EXT_CALLS, 0.99) * 1e3,
           l_pct(lp, EXT_CALLS, 0.5) * 1e3, l_pct(lp, EXT_CALLS, 0.99) * 1e3,
           l_pct(lb, EXT_CALLS, 0.99) * 1e3, (daemon_cpu() - cpu0) / EXT_CALLS * 1e3);
    curl_slist_free_all(hd);
    curl_easy_cleanup(h);
    for (int i = 0; i < 2 * EXT_CALLS; i++)
        free(body[i]);
    free(body);
    free(lf);
    free(lp);
    free(lb);
}

/* GET /v1/snapshot now, and the simulator continuing it an hour: sizes and times. */
static void bench_snapshot(void)
{
    struct answer a;
    double t0 = l_now();
    if (h_call(&d, "GET", "/v1/snapshot", TOKEN_ADMIN, NULL, &a) || a.status != 200) {
        printf("snapshot: GET /v1/snapshot answered %ld\n", a.status);
        h_answer_free(&a);
        return;
    }
    double got = l_now() - t0;
    size_t len = strlen(a.body);
    char path[128];
    snprintf(path, sizeof(path), "%s/snapshot.yaml", d.dir);
    h_write(path, a.body);
    h_answer_free(&a);
    const char *bin = getenv("GPUSCHED_BIN") ? getenv("GPUSCHED_BIN") : "build/gpusched";
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "'%s' simulate --scenario '%s' --from-now --horizon 1h --quiet", bin,
             path);
    t0 = l_now();
    int rc = system(cmd);
    printf("snapshot: GET /v1/snapshot %.1f MiB in %.2f s; simulate --from-now --horizon 1h on it "
           "%.2f s (exit %d)\n",
           (double)len / 1048576.0, got, l_now() - t0, rc);
}

int main(int argc, char **argv)
{
    int subs = argc > 1 ? atoi(argv[1]) : 20000, store = argc > 2 ? atoi(argv[2]) : 100000;
    int churn = argc > 3 ? atoi(argv[3]) : 100000;
    signal(SIGPIPE, SIG_IGN);
    if (!getenv("GPUSCHEDD_BIN"))
        setenv("GPUSCHEDD_BIN", "build/gpuschedd", 0);
    if (subs < CLIENTS || store < subs || churn < 10 || h_setup(&d, NULL)) {
        fprintf(stderr, "usage: bench_daemon [SUBMISSIONS >= 8 [STORE_PODS >= SUBMISSIONS "
                        "[CHURN >= 10]]]\n");
        return 2;
    }
    unsetenv("GPUSCHEDD_VERIFY_SNAPSHOTS"); /* the tests' O(pods) check at each publish */
    l_write_nodes(d.nodes, EXT_NODES);
    h_policy(&d, "apiVersion: nvidia.com/v1\nkind: GpuClusterPolicy\nspec:\n"
                 "  mig: {strategy: mixed}\n"
                 "  devices: [{name: A100-SXM4-80GB, migEnabled: true}]\n");
    if (h_start(&d)) {
        fprintf(stderr, "bench_daemon: gpuschedd did not start (log: %s)\n", d.log);
        return 1;
    }
    printf("gpuschedd on 127.0.0.1, store in %s (storeSync: normal, the default), %d nodes\n",
           d.dir, EXT_NODES);
    bench_submit(subs, "b", "submit");
    bench_extender(0, 0);
    bench_extender(1, 0);
    bench_extender(0, 1);
    bench_snapshot();
    bench_submit(store - subs, "fill", NULL);
    struct answer a;
    h_call(&d, "GET", "/v1/status", TOKEN_ADMIN, NULL, &a);
    long long run = json_integer_value(json_object_get(a.json, "pods_running"));
    long long pend = json_integer_value(json_object_get(a.json, "pods_pending"));
    h_answer_free(&a);
    h_stop(&d);
    double t0 = l_now();
    if (h_start(&d)) {
        fprintf(stderr, "bench_daemon: gpuschedd did not restart (log: %s)\n", d.log);
        return 1;
    }
    printf("restart with %lld pods in the store (%lld running, %lld pending): first answer "
           "after %.2f s\n",
           run + pend, run, pend, l_now() - t0);
    h_stop(&d);
    h_cleanup(&d);
    bench_churn(churn);
    return 0;
}
