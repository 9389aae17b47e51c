/*
 * gpuschedd: gpusched as a service.
 *
 *   gpuschedd --data-dir DIR --listen 127.0.0.1:PORT [--nodes FILE.csv] [--config FILE]...
 *             [--tls-cert PEM --tls-key PEM [--tls-client-ca PEM]] [--manual-clock]
 *             [--way exclusive|sharing|full]
 *
 * The first --config file is the DaemonConfig; any more hold the simulator's policy kinds
 * (GPUQuota, ResourceQuota, ...; see gsd_quota_load()).
 *
 * The main thread owns the signals: SIGTERM and SIGINT drain (stop listening, finish what is in
 * flight, commit) and exit 0; SIGHUP reloads the config file, and a file that does not load is
 * refused with its reason logged while the one in force stays. Exit status: 0 after a drain,
 * 1 when the store failed, 2 for bad arguments or input at start.
 */
#include "api.h"
#include "inventory.h"
#include "log.h"
#include "nodes.h"
#include "quota.h"
#include "server.h"
#include "state.h"

#include "gpusched/datadir.h"
#include "gpusched/tenancy.h"

#include <curl/curl.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONFIGS_MAX 16

struct opts {
    const char *data_dir, *listen, *nodes, *config, *cert, *key, *client_ca, *way;
    const char *configs[CONFIGS_MAX]; /* every --config, in order; config is the first */
    size_t nconfigs;
    char host[64];
    int port;
    struct gsd_runopts run;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuschedd --data-dir DIR --listen ADDR:PORT [options]\n"
               "  --data-dir DIR     where the store (gpusched.db) lives; created if missing\n"
               "  --listen ADDR:PORT numeric address and port, e.g. 127.0.0.1:8080, [::1]:8080\n"
               "  --nodes FILE       node inventory: CSV (default: the bundled Alibaba nodes),\n"
               "                     a Cluster YAML (.yaml, .yml), or `kubernetes`: the API\n"
               "                     server's Node objects\n"
               "  --config FILE      DaemonConfig YAML: tenants, tokens, limits (SIGHUP reloads);\n"
               "                     again for GPUQuota, ResourceQuota, ... files (up to 15)\n"
               "  --tls-cert PEM     serve HTTPS with this certificate (with --tls-key)\n"
               "  --tls-key PEM      the certificate's private key\n"
               "  --tls-client-ca PEM  /extender/* only from a client certificate this CA signed\n"
               "                     (mutual TLS: kube-scheduler's extender tlsConfig)\n"
               "  --manual-clock     the clock starts at 0 (at a restart: the store's last\n"
               "                     time) and only POST /v1/clock moves it, as a simulated\n"
               "                     run's: walltimes, grace periods (for tests)\n"
               "  --way WAY          exclusive (whole cards only, as a device-plugin cluster),\n"
               "                     sharing or full (the default): what the scheduler may do,\n"
               "                     as gpusched simulate --way\n"
               "  --version          print the version\n");
}

static int bad(const char *msg, const char *arg)
{
    if (arg && *arg)
        gsd_log("error", msg, "arg", arg, NULL);
    else
        gsd_log("error", msg, NULL);
    return 2;
}

/* "127.0.0.1:8080" or "[::1]:8080". */
static int parse_listen(const char *s, struct opts *o)
{
    const char *colon = strrchr(s, ':');
    const char *h = s;
    size_t hl = colon ? (size_t)(colon - s) : 0;
    if (s[0] == '[' && colon && colon > s && colon[-1] == ']') {
        h = s + 1;
        hl -= 2;
    }
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || hl == 0 || hl >= sizeof(o->host))
        return -1;
    if (!colon[1] || *end || port < 0 || port > 65535)
        return -2;
    memcpy(o->host, h, hl);
    o->host[hl] = '\0';
    o->port = (int)port;
    unsigned char addr[sizeof(struct in6_addr)]; /* numeric: no name is looked up */
    return inet_pton(AF_INET, o->host, addr) == 1 || inet_pton(AF_INET6, o->host, addr) == 1 ? 0
                                                                                             : -1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        {"data-dir", required_argument, 0, 'd'},
        {"listen", required_argument, 0, 'l'},
        {"nodes", required_argument, 0, 'n'},
        {"config", required_argument, 0, 'c'},
        {"tls-cert", required_argument, 0, 'C'},
        {"tls-key", required_argument, 0, 'K'},
        {"tls-client-ca", required_argument, 0, 'A'},
        {"help", no_argument, 0, 'h'},
        {"manual-clock", no_argument, 0, 'M'},
        {"way", required_argument, 0, 'w'},
        {"version", no_argument, 0, 'V'},
        {0, 0, 0, 0},
    };
    const char **dst[128] = {
        ['d'] = &o->data_dir, ['l'] = &o->listen, ['n'] = &o->nodes,     ['c'] = &o->config,
        ['C'] = &o->cert,     ['K'] = &o->key,    ['A'] = &o->client_ca, ['w'] = &o->way};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return -1;
        }
        if (c == 'M') {
            o->run.manual_clock = 1;
            continue;
        }
        if (c == 'V') {
            printf("gpuschedd %s\n", GS_VERSION);
            return -1;
        }
        if (c < 0 || c >= 128 || !dst[c])
            return bad(gs_option_problem(c), argv[optind - 1]); /* gpuschedd --help lists them */
        if (c == 'c' && o->nconfigs == CONFIGS_MAX)
            return bad("--config: at most 16 files", optarg);
        if (c == 'c')
            o->configs[o->nconfigs++] = optarg;
        if (c != 'c' || o->nconfigs == 1)
            *dst[c] = optarg;
    }
    if (optind < argc)
        return bad("unexpected argument", argv[optind]);
    if (!o->data_dir || !o->listen)
        return bad("--data-dir and --listen are required", NULL);
    int listen_rc = parse_listen(o->listen, o);
    if (listen_rc == -2)
        return bad("--listen: the port must be a number 0..65535 (0: any free one)", o->listen);
    if (listen_rc)
        return bad("--listen: expected a numeric ADDR:PORT (no host name), e.g. 127.0.0.1:8080",
                   o->listen);
    if (!o->cert != !o->key)
        return bad("--tls-cert and --tls-key go together", NULL);
    if (o->client_ca && !o->cert)
        return bad("--tls-client-ca needs --tls-cert and --tls-key", NULL);
    o->run.way = o->way ? gs_way_find(o->way) : GS_WAY_FULL;
    if (o->run.way < 0)
        return bad("--way: expected exclusive, sharing or full", o->way);
    static char nodes[GS_DATA_PATH_MAX];
    if (!o->nodes)
        o->nodes = gs_data_file(GS_DATA_NODES, nodes, sizeof(nodes));
    return 0;
}

/* The DaemonConfig and the policy files. Return: 0 and *@out; negative errno with @d. */
static int load_config(const struct opts *o, struct gsd_config **out, struct gs_diag *d)
{
    int rc = gsd_config_load(o->config, out, d);
    if (!rc && o->nconfigs > 1)
        rc = gsd_quota_load(*out, o->configs + 1, o->nconfigs - 1, d);
    if (rc && !*out)
        return rc;
    if (rc) {
        gsd_config_free(*out);
        *out = NULL;
    }
    return rc;
}

/*
 * Hold @dir's store alone, for the life of the process: two daemons on one store would each
 * place pods on cards the other holds. An exclusive flock() on DIR/gpusched.lock, released by the
 * kernel however the process ends (kill -9 included). Return: 0; an exit status after a message.
 */
static int lock_store(const char *dir)
{
    char path[4096], pid[32] = "";
    snprintf(path, sizeof(path), "%s/gpusched.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return bad("--data-dir: cannot open its lock file", path);
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        ssize_t n = errno == EWOULDBLOCK ? pread(fd, pid, sizeof(pid) - 1, 0) : -1;
        pid[n > 0 ? strcspn(pid, "\n") : 0] = '\0';
        gsd_log("error",
                "--data-dir: its store is in use by another gpuschedd (pid in the lock file); "
                "stop that one, or give this one another --data-dir",
                "lock", path, "pid", pid[0] ? pid : "-", NULL);
        close(fd);
        return 1; /* it cannot start, as when the port is taken */
    }
    int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n)
        gsd_log("warn", "cannot write the pid into the store's lock file", "path", path, NULL);
    return 0; /* fd stays open: the lock lasts as long as the process */
}

/* Load what the daemon needs before it listens. Return: 0; an exit status. */
static int setup(const struct opts *o, struct gsd_state *st)
{
    struct gs_diag d;
    struct gsd_config *cfg = NULL;
    struct gs_cluster *cluster = NULL;
    struct gs_scenario *inv = NULL;
    struct gsd_runopts run = o->run;
    uint8_t *down = NULL;
    gs_diag_init(&d);
    if (mkdir(o->data_dir, 0700) && errno != EEXIST)
        return bad("--data-dir: cannot create the directory", o->data_dir);
    int rc = lock_store(o->data_dir);
    if (rc)
        return rc;
    rc = load_config(o, &cfg, &d);
    if (!rc)
        rc = gsd_inventory_load(o->nodes, cfg->kube, &cluster, &inv, &down, &d);
    if (rc) {
        gs_cluster_free(cluster);
        gsd_config_free(cfg);
        return bad(d.msg[0] ? d.msg : strerror(-rc), NULL);
    }
    /* A daemon no token reaches still starts (and /healthz answers 200), so the only sign of it
     * would be every client's 401: say so once, in the log an operator reads first. */
    if (!cfg->has_admin && !cfg->ntenants)
        gsd_log("warn",
                "no tokens configured: every /v1 request is refused (401); give --config a "
                "DaemonConfig with adminTokenSHA256 or tenants with tokenSHA256 "
                "(deploy/gpuschedd-config.yaml)",
                "config", o->config ? o->config : "none", NULL);
    run.api_down = down;
    run.nodes_from_kube = !strcmp(o->nodes, "kubernetes");
    gsd_page_key(o->data_dir);
    rc = gsd_state_init(st, cfg, cluster, inv, o->data_dir, &run, &d);
    free(down);
    if (rc) {
        gsd_log("error", "cannot start", "error", d.msg[0] ? d.msg : strerror(-rc), NULL);
        gsd_state_free(st);
        return rc == -EINVAL ? 2 : 1;
    }
    return 0;
}

static void reload(struct gsd_server *srv, const struct opts *o)
{
    struct gs_diag d;
    struct gsd_config *cfg = NULL;
    gs_diag_init(&d);
    if (!o->config) {
        gsd_log("warn", "SIGHUP: no --config file to reload", NULL);
        return;
    }
    int rc = load_config(o, &cfg, &d);
    if (rc) {
        /* the message names the file at fault; --config may be given several times */
        gsd_log("error", "config reload refused: the one in force stays", "error",
                d.msg[0] ? d.msg : strerror(-rc), NULL);
        return;
    }
    gsd_server_reload(srv, cfg);
}

/* The open-file limit raised to its hard limit: every connection is a descriptor, and the soft
 * limit is often 1024 (http.maxConnections is bounded by what this leaves). */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse_args(argc, argv, &o);
    if (rc < 0) /* --help or --version printed: 1 when that write failed */
        return fflush(stdout) || ferror(stdout) ? 1 : 0;
    if (rc)
        return rc;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread: all inherit it */
    signal(SIGXFSZ, SIG_IGN); /* past a file size limit a write fails (the store says so) */
    raise_fd_limit();
    static struct gsd_state st;
    if ((rc = setup(&o, &st)) != 0)
        return rc;
    struct gsd_server *srv;
    struct gs_diag d;
    gs_diag_init(&d);
    curl_global_init(CURL_GLOBAL_DEFAULT); /* before any thread: it is not thread-safe */
    if ((rc =
             gsd_server_start(&st, &(struct gsd_listen){o.host, o.port, o.cert, o.key, o.client_ca},
                              &srv, &d)) != 0) {
        gsd_log("error", "cannot start", "error", d.msg, NULL);
        gsd_state_free(&st);
        curl_global_cleanup();
        return 1;
    }
    char addr[96];
    snprintf(addr, sizeof(addr), "%s:%d", o.host, gsd_server_port(srv));
    gsd_log("info", "listening", "addr", addr, "tls", o.cert ? "on" : "off", "extender_auth",
            o.client_ca ? "client certificate" : "admin token", "nodes", o.nodes, NULL);
    for (;;) {
        int sig;
        if (sigwait(&set, &sig))
            continue;
        if (sig == SIGHUP)
            reload(srv, &o);
        else if (sig != SIGPIPE)
            break;
    }
    gsd_log("info", "draining", NULL);
    int failed = gsd_server_stop(srv);
    gsd_state_free(&st);
    gsd_log("info", "stopped", NULL);
    curl_global_cleanup();
    return failed ? 1 : 0;
}
