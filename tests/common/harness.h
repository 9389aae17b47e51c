/*
 * The integration tests' harness: the real gpuschedd ($GPUSCHEDD_BIN) on 127.0.0.1 with a real
 * store in a fresh temporary directory, and HTTP through libcurl.
 */
#ifndef GS_HARNESS_H
#define GS_HARNESS_H

#include <jansson.h>
#include <stddef.h>
#include <sys/types.h>

#define TOKEN_A     "token-a-0123456789abcdef"
#define TOKEN_B     "token-b-0123456789abcdef"
#define TOKEN_ADMIN "admin-token-0123456789"

struct daemon {
    pid_t pid;
    int port;
    char dir[64];    /* temporary directory: store in dir/data, config in dir/config.yaml */
    char log[96];    /* its stderr */
    char nodes[128]; /* inventory CSV */
    char config[96]; /* "" (set after h_setup()): started without --config */
    char tls_cert[96], tls_key[96]; /* when set: --tls-cert/--tls-key, and h_call speaks HTTPS */
    int manual_clock;               /* 1: --manual-clock (POST /v1/clock moves node time) */
    char policy[96]; /* when set: a second --config (GPUQuota, ResourceQuota, PodGroup, ...) */
    char way[16];    /* when set: --way (exclusive, sharing, full) */
};

struct answer {
    long status;
    char *body; /* NUL-terminated, owned */
    json_t *json;
    char retry_after[16];
    char warning[640]; /* a Warning header's value, "" none */
};

/* A fresh directory with config.yaml (two tenants, an admin) and a small node CSV. */
int h_setup(struct daemon *d, const char *extra_config);
/* Write @text to dir/policy.yaml and pass it as the second --config from the next start on. */
int h_policy(struct daemon *d, const char *text);
/* Start the daemon and wait until it answers (or fail after 30 s). Return: 0 or -1. */
int h_start(struct daemon *d);
/* SIGTERM and wait. Return: the exit status, or -1 when it died of a signal. */
int h_stop(struct daemon *d);
/* SIGKILL and reap. */
void h_kill(struct daemon *d);
/* Remove the directory. */
void h_cleanup(struct daemon *d);
/* One request; @token may be NULL. */
int h_call(const struct daemon *d, const char *method, const char *path, const char *token,
           const char *body, struct answer *a);
/* h_call_as() - h_call() with the body's Content-Type @ctype (NULL: curl's default). */
int h_call_as(const struct daemon *d, const char *method, const char *path, const char *token,
              const char *ctype, const char *body, struct answer *a);
void h_answer_free(struct answer *a);
/* POST @args (consumed) to /extender/@verb with the admin token: the JSON answer when it is a
 * 200 (new reference), else NULL. */
json_t *h_verb(const struct daemon *d, const char *verb, json_t *args);
/* A pod JSON text with @gpus cards (or a share when @cores in 1..99). Caller frees. */
char *h_pod(const char *ns, const char *name, int gpus, int cores);
/*
 * POST kube-scheduler's ExtenderArgs {"Pod": @pod (JSON text), "NodeNames": @nodes[0..@n)} (or
 * ExtenderBindingArgs when @verb is "bind": PodName/PodNamespace from @pod, Node @nodes[0]) to
 * /extender/@verb with the admin token. Return: the 200 answer's JSON (new reference); NULL
 * otherwise.
 */
json_t *h_extender(const struct daemon *d, const char *verb, const char *pod,
                   const char *const *nodes, size_t n);
/* h_pod() with the annotation @key: @value (none when @key is NULL). Caller frees. */
char *h_pod_annotated(const char *ns, const char *name, int gpus, int cores, const char *key,
                      const char *value);
/* Does the daemon's log contain @needle? */
int h_log_has(const struct daemon *d, const char *needle);
/* h_reload() - SIGHUP the daemon, its config files unchanged, and wait (10 s at most) until it
 * logs "config reloaded" once more: it then runs a new scheduler of the pods it holds. Return: 0;
 * -1 when it did not. */
int h_reload(const struct daemon *d);
/* Write a file. */
int h_write(const char *path, const char *text);
/* libcurl's CURLOPT_WRITEFUNCTION gathering a body into a struct h_sink (@ud): s NUL-terminated,
 * malloc'd, NULL until something came. */
struct h_sink {
    char *s;
    size_t len;
};
size_t h_on_body(char *p, size_t sz, size_t n, void *ud);
/* A TCP port on 127.0.0.1 free at the time of the call; -1 when none. */
int h_free_port(void);
/* Remember process @pid (@on 1) or forget it (0): whatever is remembered when the test binary
 * exits is killed (a failed cmocka assertion jumps out of a test and its stop). */
void h_track(pid_t pid, int on);

#endif
