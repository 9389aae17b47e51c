/*
 * gpusched submit | get | list | cancel | status: the client of gpuschedd's REST API.
 *
 * libcurl does the HTTP: it brings HTTPS (a daemon started with --tls-cert), proxies, timeouts
 * and connection reuse, which a hand-written socket client would have to grow one by one.
 * The token comes from --token or $GPUSCHED_TOKEN, the server from --server or
 * $GPUSCHED_SERVER (default http://127.0.0.1:8080). Exit status: 0 on a 2xx answer, 2 on bad
 * usage or a 4xx answer (the request was wrong), 1 when the server failed or cannot be reached.
 */
#include "cli.h"
#include "../config/scenario_impl.h"
#include "gpusched/diag.h"
#include "gpusched/httpurl.h"
#include "gpusched/grow.h"
#include "../config/yamlutil.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define ANSWER_MAX   (256u << 20) /* bytes of an answer kept */
#define POD_FILE_MAX (4u << 20)   /* bytes of a pod file */
#define TOKEN_MAX    4096         /* bytes of a bearer token */

struct copts {
    const char *server, *token, *cacert, *tenant, *state, *queue, *ns;
    int json;  /* -o: 0 table, 1 json, OUT_YAML yaml */
    int table; /* -o table given */
};
#define OUT_YAML 2

struct buf {
    char *s;
    size_t len, cap;
};

/* curl's chunks are 16 KiB at most: room doubles, so a large answer is not copied per chunk */
static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
    struct buf *b = ud;
    size_t add = sz * n;
    if (b->len + add + 1 > ANSWER_MAX)
        return 0; /* curl reports a write error */
    if (b->len + add + 1 > b->cap) {
        size_t cap = gs_grow_cap(b->cap, b->len + add + 1, 16384);
        cap = !cap || cap > ANSWER_MAX ? ANSWER_MAX : cap;
        char *m = realloc(b->s, cap);
        if (!m)
            return 0;
        b->s = m;
        b->cap = cap;
    }
    memcpy(b->s + b->len, p, add);
    b->len += add;
    b->s[b->len] = '\0';
    return add;
}

/* A Warning header of the answer (RFC 9110: 299 - "text") printed as kubectl prints one,
 * "Warning: text", on standard error; other headers are not read. */
static size_t on_header(char *p, size_t sz, size_t n, void *ud)
{
    size_t len = sz * n;
    static const char name[] = "Warning: 299 - \"";
    if (len > sizeof(name) && !strncasecmp(p, name, sizeof(name) - 1)) {
        const char *t = p + sizeof(name) - 1, *end = p + len;
        while (end > t && (end[-1] == '\r' || end[-1] == '\n'))
            end--;
        if (end > t && end[-1] == '"')
            end--;
        fprintf(stderr, "Warning: ");
        for (; t < end; t++) /* the quoted-string's escapes undone; printable ASCII only */
            if (!(*t == '\\' && t + 1 < end))
                fputc(*t >= 0x20 && *t < 0x7f ? *t : '?', stderr);
            else
                fputc(*++t >= 0x20 && *t < 0x7f ? *t : '?', stderr);
        fputc('\n', stderr);
    }
    (void)ud;
    return len;
}

/* One request. Return: the HTTP status and *@out (JSON, may be NULL); -1 after a message. */
static long call(const char *cmd, const struct copts *o, const char *method, const char *path,
                 const char *body, json_t **out)
{
    CURL *c = curl_easy_init();
    struct buf b = {0};
    char url[2048], auth[TOKEN_MAX + 32];
    struct curl_slist *h = NULL;
    long status = -1;
    *out = NULL;
    snprintf(url, sizeof(url), "%s%s", o->server, path);
    if (o->token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", o->token);
        h = curl_slist_append(h, auth);
    }
    h = curl_slist_append(h, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L); /* an address that never answers */
    if (o->cacert)
        curl_easy_setopt(c, CURLOPT_CAINFO, o->cacert);
    if (body)
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST)
        gs__cli_say(cmd, "%s: %s: is gpuschedd running there? (--server or $GPUSCHED_SERVER)", url,
                    curl_easy_strerror(rc));
    else if (rc != CURLE_OK)
        gs__cli_say(cmd, "%s: %s", url, curl_easy_strerror(rc));
    else
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (b.s)
        *out = json_loads(b.s, 0, NULL);
    if (status >= 200 && status < 300 && !json_is_object(*out)) {
        /* another server (--server naming a web page, a proxy's sign-in) would read as an
         * empty table and exit 0 */
        gs__cli_say(cmd, "%s: the answer (HTTP %ld) is not a JSON object: is it a gpuschedd?", url,
                    status);
        json_decref(*out);
        *out = NULL;
        status = -1;
    }
    free(b.s);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    return status;
}

/* Whether plain scalar @s could read as a number, a boolean or null (YAML 1.1, which libyaml
 * and PyYAML read: "0x1f", "1_000", "1:30" and ".inf" are numbers there). */
static int reads_typed(const char *s)
{
    static const char *const words[] = {"",     "~",     "null",  "true", "false",
                                        ".inf", "-.inf", "+.inf", ".nan", "yes",
                                        "no",   "on",    "off",   "y",    "n"};
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (!strcasecmp(s, words[i]))
            return 1;
    return strchr("0123456789+-.", s[0]) &&
           strspn(s, "0123456789abcdefABCDEFxXoO_:.+-") == strlen(s);
}

/* A scalar event of @text: plain for a number, a boolean or null; a string quoted where plain
 * would read as another type ("8", "true"). */
static int yaml_scalar(yaml_emitter_t *em, const char *text, int is_string)
{
    yaml_event_t ev;
    return yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, -1,
                                        !is_string || !reads_typed(text), 1,
                                        YAML_ANY_SCALAR_STYLE) &&
           yaml_emitter_emit(em, &ev);
}

/* Emit JSON value @v as YAML events. Return: 1; 0 when the emitter failed. */
static int yaml_value(yaml_emitter_t *em, const json_t *v)
{
    yaml_event_t ev;
    char num[64];
    const char *k;
    const json_t *x;
    size_t i;
    int ok;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        ok = yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_MAPPING_STYLE) &&
             yaml_emitter_emit(em, &ev);
        json_object_foreach((json_t *)v, k, x) ok =
            ok && yaml_scalar(em, k, 1) && yaml_value(em, x);
        return ok && yaml_mapping_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
    case JSON_ARRAY:
        ok = yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_ANY_SEQUENCE_STYLE) &&
             yaml_emitter_emit(em, &ev);
        json_array_foreach(v, i, x) ok = ok && yaml_value(em, x);
        return ok && yaml_sequence_end_event_initialize(&ev) && yaml_emitter_emit(em, &ev);
    case JSON_STRING:
        return yaml_scalar(em, json_string_value(v), 1);
    case JSON_INTEGER:
        snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return yaml_scalar(em, num, 0);
    case JSON_REAL:
        snprintf(num, sizeof(num), "%.17g", json_real_value(v));
        return yaml_scalar(em, num, 0);
    default:
        return yaml_scalar(em, json_is_true(v) ? "true" : json_is_false(v) ? "false" : "null", 0);
    }
}

/* @v on stdout as one YAML document, as kubectl get -o yaml prints an object. */
static void print_yaml(const json_t *v)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    if (!yaml_emitter_initialize(&em))
        return;
    yaml_emitter_set_output_file(&em, stdout);
    yaml_emitter_set_unicode(&em, 1);
    int ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING) &&
             yaml_emitter_emit(&em, &ev) &&
             yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1) &&
             yaml_emitter_emit(&em, &ev) && yaml_value(&em, v) &&
             yaml_document_end_event_initialize(&ev, 1) && yaml_emitter_emit(&em, &ev) &&
             yaml_stream_end_event_initialize(&ev) && yaml_emitter_emit(&em, &ev);
    if (!ok)
        gs__cli_say(NULL, "cannot write the answer as YAML: %s",
                    em.problem ? em.problem : "out of memory");
    yaml_emitter_delete(&em);
}

/* Print the answer (or its error) and map the status to an exit status; a 2xx answer as YAML
 * when @yaml, else JSON. */
static int finish(const char *cmd, long status, json_t *ans, int yaml)
{
    int rc = status < 0 ? 1 : status >= 500 ? 1 : status >= 400 ? EXIT_BAD_INPUT : 0;
    if (status >= 400) {
        const char *err = json_string_value(json_object_get(ans, "error"));
        const char *field = json_string_value(json_object_get(ans, "field"));
        gs__cli_say(cmd, "%ld: %s%s%s%s%s", status, err ? err : "(no message)",
                    field && *field ? " (field " : "", field && *field ? field : "",
                    field && *field ? ")" : "",
                    status == 401 ? ": the token comes from --token or $GPUSCHED_TOKEN" : "");
    } else if (status > 0 && ans && yaml) {
        print_yaml(ans);
    } else if (status > 0 && ans) {
        json_dumpf(ans, stdout, JSON_INDENT(2));
        putchar('\n');
    }
    json_decref(ans);
    return rc;
}

#define OBJECTS_MAX 10000 /* objects one submit sends */

/* Add @obj (consumed) to @out, or, for a list (v1 List, or a PodList as the API server answers
 * a list of pods: a kind ending in "List"), each of its items: what kubectl takes. */
static int add_object(const char *path, size_t line, json_t *obj, json_t *out)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    size_t klen = kind ? strlen(kind) : 0;
    int list = klen >= 4 && !strcmp(kind + klen - 4, "List");
    json_t *items = list ? json_object_get(obj, "items") : NULL;
    size_t i;
    json_t *item;
    int bad = !json_is_object(obj) || (list && !json_is_array(items));
    json_array_foreach(items, i, item) bad |= !json_is_object(item);
    if (bad)
        gs__cli_say("submit", "%s:%zu: not a Pod, a PodGroup or a List of them", path, line);
    else if (json_array_size(out) + (items ? json_array_size(items) : 1) > OBJECTS_MAX)
        gs__cli_say("submit", "%s: more than %d objects", path, OBJECTS_MAX);
    else if (items)
        json_array_extend(out, items);
    else
        json_array_append(out, obj);
    json_decref(obj);
    return bad || json_array_size(out) > OBJECTS_MAX ? -1 : 0;
}

struct yaml_objects {
    json_t *out;
    size_t left; /* gs__yaml_manifest()'s budget for the whole file */
};

/* One YAML document into the array (an empty one, as a trailing "---" leaves, is none). */
static int yaml_object(struct gs__yctx *c, yaml_node_t *root, void *arg)
{
    struct yaml_objects *y = arg;
    size_t line, col;
    json_t *j;
    if (root->type == YAML_SCALAR_NODE && !root->data.scalar.length)
        return 0;
    int rc = gs__yaml_manifest(c, root, &y->left, &j);
    gs__yaml_pos(c, root, &line, &col);
    return rc ? rc : add_object(c->path, line, j, y->out) ? -EINVAL : 0;
}

/*
 * The objects of a file (JSON, or YAML as kubectl takes it: every document, and the items of a
 * v1 List; "-" = standard input) as a JSON array. Return: the array; NULL after a message.
 */
static json_t *read_objects(const char *path)
{
    struct gs_diag d;
    unsigned char *buf = NULL;
    size_t n = 0;
    gs_diag_init(&d);
    int rc = gs__yaml_read(path, true, POD_FILE_MAX, "not a pod file", &buf, &n, &d);
    if (rc)
        gs__cli_say("submit", "%s", d.msg);
    json_t *out = rc ? NULL : json_array();
    rc = rc ? rc : out ? 0 : -1;
    /* JSON when it reads as JSON; else YAML, whose flow style ({apiVersion: v1, ...}) starts
     * with '{' too, and whose reader names the line and column of what is wrong */
    json_t *j = NULL;
    if (!rc && buf[strspn((char *)buf, " \t\r\n")] == '{')
        j = json_loadb((char *)buf, n, JSON_REJECT_DUPLICATES, NULL);
    if (j) {
        rc = add_object(path, 1, j, out);
    } else if (!rc) {
        struct yaml_objects y = {out, 2 * n + 4096};
        struct gs__yctx proto = {.path = path, .d = &d, .quiet = true};
        rc = gs__yaml_stream_documents(&proto, buf, n, GS_SCN_MAX_DEPTH, GS_SCN_DOC_NODES_MAX,
                                       yaml_object, &y);
        if (rc && d.msg[0])
            gs__cli_say("submit", "%s", d.msg);
    }
    if (!rc && json_array_size(out) == 0) {
        gs__cli_say("submit", "%s: no object in it", path);
        rc = -1;
    }
    free(buf);
    if (rc) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* Where a submitted object goes: a Volcano PodGroup to /v1/podgroups, anything else is a Pod. */
static const char *submit_path(const json_t *obj)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    return kind && !strcmp(kind, "PodGroup") ? "/v1/podgroups" : "/v1/pods";
}

/* POST every object of @path, in order, each answer printed. Return: the exit status, the worst
 * of the answers' (0 all accepted, 2 one refused, 1 one failed or not sent). */
static int submit_all(const char *cmd, const struct copts *o, const char *path)
{
    json_t *objs = read_objects(path), *obj;
    size_t i;
    int worst = objs ? 0 : EXIT_BAD_INPUT;
    json_array_foreach(objs, i, obj)
    {
        char *body = json_dumps(obj, JSON_COMPACT);
        json_t *ans = NULL;
        long st = body ? call(cmd, o, "POST", submit_path(obj), body, &ans) : -1;
        int rc = finish(cmd, st, ans, o->json == OUT_YAML);
        const json_t *md = json_object_get(obj, "metadata");
        const char *ns = json_string_value(json_object_get(md, "namespace")),
                   *name = json_string_value(json_object_get(md, "name"));
        if (rc) /* which one of which file it was */
            gs__cli_say(cmd, "%s: object %zu of %zu (%s/%s) not accepted", path, i + 1,
                        json_array_size(objs), ns ? ns : "-", name ? name : "-");
        worst = rc == 1 || worst == 1 ? 1 : rc > worst ? rc : worst;
        free(body);
    }
    json_decref(objs);
    return worst;
}

/* The row of pod @p: NAMESPACE/NAME STATE NODE GPUS REASON (the header when @p is NULL). */
static void pod_row(const json_t *p)
{
    char pod[GS_SCN_POD_KEY_MAX], gpus[64] = "";
    size_t k, off = 0;
    const json_t *g;
    if (!p) {
        printf("%-40s %-9s %-20s %-10s %s\n", "POD", "STATE", "NODE", "GPUS", "REASON");
        return;
    }
    const char *ns = json_string_value(json_object_get(p, "namespace")),
               *name = json_string_value(json_object_get(p, "name")),
               *state = json_string_value(json_object_get(p, "state"));
    snprintf(pod, sizeof(pod), "%s/%s", ns ? ns : "-", name ? name : "-");
    snprintf(pod, sizeof(pod), "%s", gs__cli_cell(pod));
    json_array_foreach(json_object_get(p, "gpus"), k, g)
    {
        if (off < sizeof(gpus))
            off += (size_t)snprintf(gpus + off, sizeof(gpus) - off, off ? ",%lld" : "%lld",
                                    (long long)json_integer_value(g));
    }
    const char *node = json_string_value(json_object_get(p, "node"));
    const char *why = json_string_value(json_object_get(p, "reason"));
    printf("%-40s %-9s %-20s %-10s %s\n", pod, gs__cli_cell(state), gs__cli_cell(node),
           gpus[0] ? gpus : "-", why ? gs__cli_cell(why) : "");
}

/* One line per pod, as kubectl get prints its objects (get: the one pod). */
static void print_table(const json_t *ans)
{
    size_t i;
    const json_t *p;
    pod_row(NULL);
    json_array_foreach(json_object_get(ans, "items"), i, p) pod_row(p);
    const char *more = json_string_value(json_object_get(ans, "continue"));
    if (more && *more)
        printf("(more: --continue %s)\n", gs__cli_cell(more));
}

static void client_usage(FILE *f)
{
    fprintf(f,
            "usage: gpusched submit FILE.yaml|FILE.json|-  submit its Pods and Volcano PodGroups\n"
            "                                               (every document, a List's items)\n"
            "       gpusched get NAMESPACE/NAME             show one pod\n"
            "       gpusched list [-n, --namespace NS] [--tenant T] [--queue Q]\n"
            "                     [--state pending|allocated|running] [--continue TOKEN]\n"
            "                                               500 pods a page, then the next page's\n"
            "                                               TOKEN\n"
            "       gpusched cancel NAMESPACE/NAME          cancel a pod, freeing its cards\n"
            "       gpusched status                         the daemon's totals and age\n"
            "       gpusched tenants | queues               use and deserved share per tenant\n"
            "       gpusched bills [--tenant T]             what each tenant owes so far\n"
            "get, list, status, tenants, queues and bills print a table; -o json (or --json)\n"
            "the answer as it came, exact amounts and every field included; -o yaml the same\n"
            "as YAML\n"
            "options: --server URL (or $GPUSCHED_SERVER; default http://127.0.0.1:8080)\n"
            "         --token TOKEN (or $GPUSCHED_TOKEN)   --cacert PEM (HTTPS)\n"
            "         -o, --output table|json|yaml   --json (the same as -o json)\n");
}

static int parse_client(int argc, char **argv, struct copts *o, char **cont)
{
    static const struct option lo[] = {
        {"server", required_argument, 0, 's'},
        {"token", required_argument, 0, 't'},
        {"cacert", required_argument, 0, 'c'},
        {"tenant", required_argument, 0, 'T'},
        {"state", required_argument, 0, 'S'},
        {"queue", required_argument, 0, 'Q'},
        {"namespace", required_argument, 0, 'n'},
        {"continue", required_argument, 0, 'C'},
        {"json", no_argument, 0, 'j'},
        {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *env_server = getenv("GPUSCHED_SERVER"), *env_token = getenv("GPUSCHED_TOKEN");
    *o = (struct copts){.server = env_server && *env_server ? env_server : "http://127.0.0.1:8080",
                        .token = env_token && *env_token ? env_token : NULL};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:n:", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            o->server = optarg;
            break;
        case 'o':
            if (strcmp(optarg, "json") && strcmp(optarg, "yaml") && strcmp(optarg, "table")) {
                gs__cli_say(argv[0], "-o \"%s\": expected table, json or yaml", optarg);
                return EXIT_BAD_INPUT;
            }
            o->json = !strcmp(optarg, "json") ? 1 : !strcmp(optarg, "yaml") ? OUT_YAML : 0;
            o->table = !strcmp(optarg, "table");
            break;
        case 't':
            o->token = optarg;
            break;
        case 'c':
            o->cacert = optarg;
            break;
        case 'T':
            o->tenant = optarg;
            break;
        case 'S':
            o->state = optarg;
            break;
        case 'Q':
            o->queue = optarg;
            break;
        case 'n':
            o->ns = optarg;
            break;
        case 'C':
            *cont = optarg;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'h':
            client_usage(stdout);
            return -1;
        default:
            gs__cli_say(argv[0], "%s \"%s\" (see gpusched %s --help)", gs_option_problem(c),
                        argv[optind - 1], argv[0]);
            return EXIT_BAD_INPUT;
        }
    }
    static char server[GS_HTTP_URL_MAX + 1];
    char why[512];
    if (gs_http_url(o->server, server, why, sizeof(why))) {
        gs__cli_say(argv[0], "the server (--server or $GPUSCHED_SERVER) %s", why);
        return EXIT_BAD_INPUT;
    }
    o->server = server;
    /* A bearer token is RFC 6750's b64token: anything else (a line break would add a header
     * of its own to the request) is refused, not sent. */
    if (o->token &&
        (!gs_bearer_token_ok(o->token, strlen(o->token)) || strlen(o->token) > TOKEN_MAX)) {
        gs__cli_say(argv[0],
                    "the token (--token or $GPUSCHED_TOKEN): expected 1..%d letters, digits and "
                    "-._~+/, then = only at its end (RFC 6750)",
                    TOKEN_MAX);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

/* "NS/NAME" from the one positional argument, checked so it cannot bend the URL. */
static int pod_arg(const char *cmd, int argc, char **argv, char *path, size_t cap)
{
    if (optind != argc - 1) {
        gs__cli_say(cmd, "expected one NAMESPACE/NAME");
        return EXIT_BAD_INPUT;
    }
    const char *a = argv[optind], *slash = strchr(a, '/');
    if (!slash || slash == a || !slash[1] || strchr(slash + 1, '/') ||
        strspn(a, "abcdefghijklmnopqrstuvwxyz0123456789-./") != strlen(a)) {
        gs__cli_say(cmd, "\"%s\" is not NAMESPACE/NAME", a);
        return EXIT_BAD_INPUT;
    }
    /* whole or not at all: a path cut short would name another pod */
    if (slash - a >= GS_SCN_NAME_MAX || strlen(slash + 1) >= GS_SCN_OBJ_MAX ||
        (size_t)snprintf(path, cap, "/v1/pods/%s", a) >= cap) {
        gs__cli_say(cmd, "\"%.80s...\": a namespace is at most %d bytes, a pod's name %d", a,
                    GS_SCN_NAME_MAX - 1, GS_SCN_OBJ_MAX - 1);
        return EXIT_BAD_INPUT;
    }
    return 0;
}

static int list(const char *cmd, const struct copts *o, const char *cont)
{
    char path[1024] = "/v1/pods";
    const char *keys[] = {"tenant", "state", "queue", "namespace", "continue"},
               *vals[] = {o->tenant, o->state, o->queue, o->ns, cont};
    CURL *c = curl_easy_init();
    size_t len = strlen(path);
    for (int i = 0; i < 5; i++) {
        char *e = c && vals[i] ? curl_easy_escape(c, vals[i], 0) : NULL;
        int n =
            e ? snprintf(path + len, sizeof(path) - len, "%c%s=%s", len > 8 ? '&' : '?', keys[i], e)
              : 0;
        curl_free(e);
        if ((vals[i] && !e) || len + (size_t)n >= sizeof(path)) { /* never sent without it */
            gs__cli_say(cmd, "--%s: %s", keys[i], c ? "too long for a query" : "out of memory");
            curl_easy_cleanup(c);
            return EXIT_BAD_INPUT;
        }
        len += (size_t)n;
    }
    curl_easy_cleanup(c);
    json_t *ans;
    long st = call(cmd, o, "GET", path, NULL, &ans);
    if (st >= 200 && st < 300 && !o->json) {
        print_table(ans);
        json_decref(ans);
        return 0;
    }
    return finish(cmd, st, ans, o->json == OUT_YAML);
}

/* An option @cmd does not read is refused, not dropped: --tenant, --queue, --state, --namespace
 * and --continue are list's, --tenant bills' too, and submit and cancel print no table. */
static int options_taken(const char *cmd, const struct copts *o, const char *cont)
{
    int list = !strcmp(cmd, "list"), bills = !strcmp(cmd, "bills");
    int no_table = !strcmp(cmd, "submit") || !strcmp(cmd, "cancel");
    const char *names[] = {"--tenant",   "--queue",     "--state",
                           "--continue", "--namespace", "-o table"};
    const char *given[] = {o->tenant, o->queue, o->state,
                           cont,      o->ns,    o->table && no_table ? "" : NULL};
    for (int i = 0; i < 6; i++)
        if (given[i] && (i == 5 || (!list && !(bills && i == 0)))) {
            gs__cli_say(cmd, "%s is not an option of %s", names[i], cmd);
            return EXIT_BAD_INPUT;
        }
    return 0;
}

int cmd_client(int argc, char **argv)
{
    const char *cmd = argv[0];
    struct copts o;
    char *cont = NULL, path[sizeof("/v1/pods/") + GS_SCN_POD_KEY_MAX];
    json_t *ans = NULL;
    int rc = parse_client(argc, argv, &o, &cont);
    if (!rc)
        rc = options_taken(cmd, &o, cont);
    if (rc)
        return rc < 0 ? 0 : rc;
    curl_global_init(CURL_GLOBAL_DEFAULT);
    long st = -1;
    if (!strcmp(cmd, "submit")) {
        if (optind != argc - 1) {
            gs__cli_say("submit", "expected one file (or - for stdin)");
            rc = EXIT_BAD_INPUT;
        } else {
            rc = submit_all(cmd, &o, argv[optind]);
        }
    } else if (!strcmp(cmd, "get") || !strcmp(cmd, "cancel")) {
        rc = pod_arg(cmd, argc, argv, path, sizeof(path));
        if (!rc)
            st = call(cmd, &o, cmd[0] == 'g' ? "GET" : "DELETE", path, NULL, &ans);
        if (!rc && cmd[0] == 'g' && st >= 200 && st < 300 && !o.json) {
            pod_row(NULL);
            pod_row(ans);
            json_decref(ans);
        } else if (!rc) {
            rc = finish(cmd, st, ans, o.json == OUT_YAML);
        }
    } else if (optind != argc) {
        gs__cli_say(cmd, "unexpected argument \"%s\"", argv[optind]);
        rc = EXIT_BAD_INPUT;
    } else if (!strcmp(cmd, "list")) {
        rc = list(cmd, &o, cont);
    } else if (o.tenant &&
               strspn(o.tenant, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(o.tenant)) {
        gs__cli_say(cmd, "--tenant \"%s\" is not a tenant name", o.tenant);
        rc = EXIT_BAD_INPUT;
    } else { /* status, tenants, queues, bills (tables) */
        snprintf(path, sizeof(path), "/v1/%s%s%s", cmd, o.tenant ? "?tenant=" : "",
                 o.tenant ? o.tenant : "");
        st = call(cmd, &o, "GET", path, NULL, &ans);
        if (st >= 200 && st < 300 && !o.json && !gs__client_table(cmd, ans)) {
            json_decref(ans);
            rc = 0;
        } else {
            rc = finish(cmd, st, ans, o.json == OUT_YAML);
        }
    }
    curl_global_cleanup();
    return rc;
}
