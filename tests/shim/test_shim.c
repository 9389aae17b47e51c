/*
 * libgpushare end to end: the real library preloaded into the test application (shimapp), against
 * the fake driver and fake NVML of this directory, each case in its own fake card and region. The
 * runner itself loads nothing of them: it starts processes, reads their output, the fake card's
 * file and the region (through src/shim/region.c), so it may carry sanitizers while they do not.
 *
 * Paths come from the environment meson sets: GPUSHARE_LIB, SHIMAPP, SHIMAPP_DL, RTLDNEXT,
 * INTERPOSER, DLRACE, DLRACE_PLUGIN, FAKE_DIR, OLD_DIR, NVML_DIR, VALGRIND ("" when absent).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"
#include "fake_state.h"
#include "region.h"

#define MIB (UINT64_C(1) << 20)
#define GIB (UINT64_C(1) << 30)

static char dir[64];
static int ncase;

struct card {
    char path[128];
    char region[2][160];
    struct fake_state *s;
    int fd;
};

static const char *need(const char *var)
{
    const char *v = getenv(var);
    if (!v) {
        fprintf(stderr, "test_shim: %s is not set (run through meson test)\n", var);
        exit(1);
    }
    return v;
}

/* A fresh fake card of @ndev devices of @gib GiB, contexts of @ctx_mib MiB, kernels of @kernel_us,
 * and two pods' region files, empty, as the node agent makes them (mode 0666). */
static void card_new(struct card *c, int ndev, uint64_t gib, uint64_t ctx_mib, uint64_t kernel_us,
                     uint32_t pid_offset)
{
    uint64_t total[FAKE_DEVS] = {gib * GIB, gib * GIB, gib * GIB, gib * GIB};
    ncase++;
    snprintf(c->path, sizeof(c->path), "%s/card%d", dir, ncase);
    for (int i = 0; i < 2; i++) {
        snprintf(c->region[i], sizeof(c->region[i]), "%s/region%d-%d", dir, ncase, i);
        int fd = open(c->region[i], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        assert_true(fd >= 0 && fchmod(fd, 0666) == 0);
        close(fd);
    }
    assert_int_equal(fake_state_create(c->path, ndev, total, ctx_mib * MIB, kernel_us, pid_offset),
                     0);
    c->s = fake_state_map(c->path, &c->fd);
    assert_non_null(c->s);
}

static void card_free(struct card *c)
{
    for (int i = 0; i < 2; i++)
        unlink(c->region[i]);
    munmap(c->s, sizeof(*c->s));
    close(c->fd);
    unlink(c->path);
}

static uint64_t size_mib(const char *s)
{
    return strtoull(s, NULL, 10);
}

/* What the region @name counts on device @dev (reaping dead processes first when @reap). */
static uint64_t region_used(const char *name, int dev, int reap)
{
    struct gs_region *r;
    char err[256];
    unsigned char uuid[16];
    assert_int_equal(gs_region_open(name, &r, err), 0);
    fake_uuid(dev, uuid);
    int d = gs_region_device(r, uuid);
    assert_true(d >= 0);
    if (reap)
        gs_region_reap(r);
    uint64_t used = gs_region_used(r, d);
    gs_region_close(r);
    return used;
}

/* An environment: NAME=VALUE strings, NULL-terminated, in a static pool. */
struct env {
    char *kv[32];
    char pool[8192];
    size_t used;
    int n;
};

/* Set @name (replacing an earlier value). */
static void env_set(struct env *e, const char *name, const char *fmt, ...)
{
    char *slot = e->pool + e->used;
    size_t room = sizeof(e->pool) - e->used;
    int n = snprintf(slot, room, "%s=", name);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(slot + n, room - (size_t)n, fmt, ap);
    va_end(ap);
    assert_true((size_t)n < room && e->n < 31);
    e->used += (size_t)n + 1;
    size_t len = strlen(name);
    for (int i = 0; i < e->n; i++) {
        if (strncmp(e->kv[i], name, len) == 0 && e->kv[i][len] == '=') {
            e->kv[i] = slot;
            return;
        }
    }
    e->kv[e->n++] = slot;
    e->kv[e->n] = NULL;
}

/* The environment the node agent would give container @which of @c, with the fake driver (and the
 * fake NVML when @nvml). @mem: the memory limit's value ("" for none). */
static void env_for(struct env *e, const struct card *c, int which, const char *mem, int nvml)
{
    memset(e, 0, sizeof(*e));
    env_set(e, "PATH", "%s", "/usr/bin:/bin");
    env_set(e, "LD_PRELOAD", "%s", need("GPUSHARE_LIB"));
    env_set(e, "LD_LIBRARY_PATH", "%s%s%s", need("FAKE_DIR"), nvml ? ":" : "",
            nvml ? need("NVML_DIR") : "");
    env_set(e, "FAKECUDA_STATE", "%s", c->path);
    env_set(e, "FAKECUDA_TENANT", "tenant%d", which);
    env_set(e, "GPUSHARE_REGION", "%s", c->region[which]);
    env_set(e, "GPUSHARE_CONTEXT_MIB", "%llu", (unsigned long long)(c->s->ctx_bytes / MIB));
    if (mem[0])
        env_set(e, "GPUSHARE_MEMORY_LIMIT_MIB", "%s", mem);
}

/* A process started with a pipe on its standard input and output, for the cases that must act
 * while it runs (it prints "holding" and waits for the end of its input). Its stderr goes to a
 * file. */
struct proc {
    pid_t pid;
    int in, out; /* its stdin (ours to write) and stdout (ours to read) */
    char errpath[160];
};

static void start(struct proc *p, char *const argv[], char *const envp[])
{
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    snprintf(p->errpath, sizeof(p->errpath), "%s/stderr%d", dir, ++ncase);
    p->pid = fork();
    assert_true(p->pid >= 0);
    if (p->pid == 0) {
        int err = open(p->errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(err, 2);
        close(in[1]);
        close(out[0]);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    p->in = in[1];
    p->out = out[0];
}

static void finish(struct proc *p, struct t_run *r);
static void expect_ok(const struct t_run *r);

/* Wait until @p prints its "holding" line; when it ends first, show why and fail. */
static void wait_holding(struct proc *p, struct t_run *r)
{
    char line[256] = "";
    size_t n = 0;
    while (strcmp(line, "holding") != 0 && read(p->out, &line[n], 1) == 1) {
        if (line[n] == '\n' || n + 2 == sizeof(line)) { /* a line other than "holding" */
            line[n] = '\0';
            n = strcmp(line, "holding") == 0 ? n : 0;
            continue;
        }
        line[++n] = '\0';
    }
    if (strcmp(line, "holding") != 0) {
        finish(p, r);
        expect_ok(r);
        fail_msg("the application did not reach its hold step");
    }
}

/* End @p's input, wait for it and fill @r as t_run() does (free with t_run_free()). */
static void finish(struct proc *p, struct t_run *r)
{
    int st;
    size_t cap = 1 << 16;
    memset(r, 0, sizeof(*r));
    close(p->in);
    r->out = malloc(cap);
    assert_non_null(r->out);
    ssize_t k;
    while (r->out_len + 1 < cap &&
           ((k = read(p->out, r->out + r->out_len, cap - 1 - r->out_len)) > 0 ||
            (k < 0 && errno == EINTR)))
        r->out_len += k > 0 ? (size_t)k : 0;
    r->out[r->out_len] = '\0';
    close(p->out);
    while (waitpid(p->pid, &st, 0) < 0 && errno == EINTR)
        ;
    r->exited = WIFEXITED(st);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r->err = t_slurp(p->errpath, &r->err_len);
    assert_non_null(r->err);
    unlink(p->errpath);
}

static void run_argv(char *const argv[], const struct env *e, struct t_run *r)
{
    t_run_free(r);
    t_run_env((const char *const *)argv, e->kv, r);
}

/* shimapp (or @app) with @via and the steps in @steps (space-separated). */
static void app(const char *exe, const char *via, const char *steps, const struct env *e,
                struct t_run *r)
{
    char buf[4096], *argv[256];
    int n = 0;
    snprintf(buf, sizeof(buf), "%s", steps);
    argv[n++] = (char *)exe;
    if (via) {
        argv[n++] = "--via";
        argv[n++] = (char *)via;
    }
    for (char *t = strtok(buf, " "); t && n < 255; t = strtok(NULL, " "))
        argv[n++] = t;
    argv[n] = NULL;
    run_argv(argv, e, r);
}

static void expect_ok(const struct t_run *r)
{
    if (r->status != 0)
        fprintf(stderr, "status %d\nstdout:\n%s\nstderr:\n%s\n", r->status, r->out, r->err);
    assert_int_equal(r->status, 0);
}

static void shimapp(const char *via, const char *steps, const struct env *e)
{
    struct t_run r = {0};
    app(need("SHIMAPP"), via, steps, e, &r);
    expect_ok(&r);
    t_run_free(&r);
}

/* One container on a fresh one-device card, its environment and its run. */
struct tc {
    struct card c;
    struct env e;
    struct t_run r;
};

static void tc_new(struct tc *t, uint64_t gib, uint64_t ctx_mib, uint64_t kernel_us,
                   const char *mem, int nvml)
{
    memset(t, 0, sizeof(*t));
    card_new(&t->c, 1, gib, ctx_mib, kernel_us, 0);
    env_for(&t->e, &t->c, 0, mem, nvml);
}

static void tc_free(struct tc *t)
{
    card_free(&t->c);
    t_run_free(&t->r);
}

/* One container with a limit of @mem MiB on a fresh card: shimapp's @steps must all hold. */
static void one_container(uint64_t card_gib, uint64_t ctx_mib, const char *mem, const char *steps)
{
    struct card c;
    struct env e;
    card_new(&c, 1, card_gib, ctx_mib, 100, 0);
    env_for(&e, &c, 0, mem, 0);
    shimapp("proc", steps, &e);
    assert_true(c.s->peak[0][0] <= size_mib(mem) * MIB);
    card_free(&c);
}

/* The library links the C runtime and nothing else. */
static void test_ldd_c_runtime_only(void **state)
{
    char cmd[512], line[512];
    snprintf(cmd, sizeof(cmd), "ldd '%s'", need("GPUSHARE_LIB"));
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    static const char *const ok[] = {"linux-vdso.so",   "libc.so.6",  "libdl.so.2",
                                     "libpthread.so.0", "librt.so.1", "ld-linux"};
    int lines = 0;
    while (fgets(line, sizeof(line), f)) {
        int known = 0;
        for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
            known |= strstr(line, ok[i]) != NULL;
        if (!known)
            fprintf(stderr, "unexpected dependency: %s", line);
        assert_true(known);
        lines++;
    }
    assert_int_equal(pclose(f), 0);
    assert_true(lines >= 2);
}

/* A program that never touches the GPU behaves the same with the library preloaded, limits set or
 * not, and the library neither loads the driver nor creates a region. */
static void test_no_gpu_app_unchanged(void **state)
{
    struct card c;
    struct env plain, pre;
    struct t_run a = {0}, b = {0};
    char *argv[] = {"/bin/sh", "-c",
                    "echo out; echo err >&2; printf '%s\\n' c b a | sort; "
                    "(sleep 0 &); wait; exit 3",
                    NULL};
    card_new(&c, 1, 40, 300, 100, 0);
    memset(&plain, 0, sizeof(plain));
    env_set(&plain, "PATH", "%s", "/usr/bin:/bin");
    env_for(&pre, &c, 0, "1024", 0);
    run_argv(argv, &plain, &a);
    run_argv(argv, &pre, &b);
    assert_int_equal(a.status, 3);
    assert_int_equal(b.status, a.status);
    assert_string_equal(b.out, a.out);
    assert_string_equal(b.err, a.err);
    struct t_run n = {0};
    app(need("SHIMAPP_DL"), NULL, "nogpu", &pre, &n);
    expect_ok(&n);
    assert_non_null(strstr(n.out, "libcuda loaded=0"));
    assert_int_equal(n.err[0], '\0');
    struct stat st;
    assert_int_equal(stat(c.region[0], &st), 0);
    assert_int_equal(st.st_size, 0); /* the region was never set up: nothing was counted */
    t_run_free(&a);
    t_run_free(&b);
    t_run_free(&n);
    card_free(&c);
}

/* Every allocation path and its free, through each way of finding the driver: what
 * cuMemGetInfo reports free moves by exactly what was allocated and freed, or for a pool what it
 * still holds until a synchronisation gives it back, and for a graph what the device's graph
 * memory holds until it is trimmed (here for a plain allocation that needs the room). Limit
 * 2048 MiB, contexts 64 MiB. */
static const char *const tour =
    "init ctx:0 info:1984:2048 "
    "alloc:100M info:1884:2048 free info:1984:2048 "
    "alloc1:100M info:1884:2048 free info:1984:2048 "
    "managed:100M info:1884:2048 free info:1984:2048 "
    "async:100M info:1884:2048 free info:1884:2048 sync info:1984:2048 "
    "pool:100M info:1884:2048 free info:1884:2048 streamsync info:1984:2048 "
    "pitch:4000:25600 info:1884:2048 free info:1984:2048 "
    "pitch:3800:4096 info:1969:2048 free info:1984:2048 "
    "vmm:100M:0 info:1884:2048 retain info:1884:2048 free info:1984:2048 "
    "vmmearly:100M:0 info:1884:2048 free info:1984:2048 "
    "array:5120:5120 info:1884:2048 free info:1984:2048 "
    "array3d:1024:1024:25 info:1884:2048 free info:1984:2048 "
    "mipmap:4096:4096:2 info:1904:2048 free info:1984:2048 "
    "ctx:0 info:1920:2048 alloc:100M destroy use:0 info:1984:2048 free=1 info:1984:2048 "
    "ctx1:0 info:1920:2048 destroy use:0 "
    "ctx4:0 info:1920:2048 destroy use:0 "
    "primary:0 info:1920:2048 alloc:200M info:1720:2048 reset:0 use:0 info:1920:2048 free=1 "
    "primary:0 release:0 use:0 info:1920:2048 release:0 use:0 info:1984:2048 "
    "graph galloc:100M:0 gexec glaunch info:1884:2048 gptrfree eventsync info:1884:2048 "
    "alloc:1885M info:99:2048 free info:1984:2048 gdestroy "
    "total:0:2048 launchkinds";

static void test_every_path_and_free(void **state)
{
    static const char *const vias[] = {"direct", "dlsym", "proc"};
    for (int i = 0; i < 3; i++) {
        struct card c;
        struct env e;
        card_new(&c, 1, 40, 64, 100, 0);
        env_for(&e, &c, 0, "2048", 0);
        shimapp(vias[i], tour, &e);
        assert_int_equal(atomic_load(&c.s->proc[0].launches[0]), 12);
        /* The fake card never saw the tenant above its limit. */
        assert_true(c.s->peak[0][0] <= 2048 * MIB);
        card_free(&c);
    }
}

/* At the limit the call gets CUDA_ERROR_OUT_OF_MEMORY (2), the process goes on and a smaller
 * request succeeds. Sizes whose products overflow 64 bits are refused, not wrapped around. */
static void test_native_oom_code(void **state)
{
    one_container(40, 300, "1024",
                  "init ctx:0 alloc:2G=2 alloc:725M=2 alloc:18446744073709551615=2 "
                  "pitch:18446744073709551615:3=2 pitch:4294967296:4294967297=2 "
                  "array3d:4294967296:4294967296:4294967296=2 "
                  "mipmap:18446744073709551615:18446744073709551615:64=2 "
                  "vmm:18446744073709551615:0=2 limit:2:18446744073709551615=2 "
                  "alloc:512M info:212:1024 alloc:212M");
}

/* Without GPUSHARE_REGION (a machine without the node agent), each user counts in a region of its
 * own: another user's region, which this one may not use, does not refuse it the GPU. */
static void test_default_region_per_user(void **state)
{
    char mine[64];
    if (geteuid() != 0)
        skip(); /* giving the region to another user needs root */
    snprintf(mine, sizeof(mine), "/gpushare-%u", (unsigned)geteuid());
    int fd = shm_open("/gpushare", O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        skip(); /* in use on this machine: not ours to change */
    assert_int_equal(fchown(fd, 65534, 65534), 0);
    close(fd);
    struct tc t;
    tc_new(&t, 40, 300, 100, "1024", 0);
    for (int i = 0; t.e.kv[i]; i++)
        if (strncmp(t.e.kv[i], "GPUSHARE_REGION=", 16) == 0)
            t.e.kv[i] = "GPUSHARE_UNSET=1";
    shm_unlink(mine);
    app(need("SHIMAPP"), "proc", "init ctx:0 info:724:1024", &t.e, &t.r);
    shm_unlink("/gpushare");
    shm_unlink(mine);
    expect_ok(&t.r);
    tc_free(&t);
}

/* @argv run as user and group @uid, without supplementary groups (setpriv, util-linux). */
static void as_user(char **out, char *const *argv, unsigned uid)
{
    static char ids[2][32];
    int n = 0;
    snprintf(ids[0], sizeof(ids[0]), "--reuid=%u", uid);
    snprintf(ids[1], sizeof(ids[1]), "--regid=%u", uid);
    out[n++] = "/usr/bin/setpriv";
    out[n++] = ids[0];
    out[n++] = ids[1];
    out[n++] = "--clear-groups";
    for (int i = 0; argv[i]; i++)
        out[n++] = argv[i];
    out[n] = NULL;
}

/* Two containers of one pod running as two users share the pod's region file (the node agent's,
 * mode 0666): both count in it, so together they stay within the limit; the file was never given
 * to either user. Needs root, to run the two users. */
static void test_file_region_two_users(void **state)
{
    struct card c;
    struct env e;
    struct proc p;
    struct t_run r = {0};
    if (geteuid() != 0) {
        fprintf(stderr, "not root: two users cannot be run; the case is skipped\n");
        skip();
    }
    card_new(&c, 1, 40, 100, 100, 0);
    env_for(&e, &c, 0, "1024", 0);
    /* the users reach the card's file and the region through the test's folder */
    assert_int_equal(chmod(dir, 0711), 0);
    assert_int_equal(chmod(c.path, 0666), 0);
    char *probe[] = {"/bin/sh",
                     "-c",
                     "test -x \"$0\" && test -r \"$1\"",
                     (char *)need("SHIMAPP"),
                     (char *)need("GPUSHARE_LIB"),
                     NULL},
         *argv[16];
    as_user(argv, probe, 65534);
    run_argv(argv, &e, &r);
    if (r.status != 0) {
        fprintf(stderr, "uid 65534 cannot run %s: the case is skipped\n", need("SHIMAPP"));
        card_free(&c);
        t_run_free(&r);
        skip();
    }
    char *hold[] = {(char *)need("SHIMAPP"), "init", "ctx:0", "alloc:600M", "hold", NULL};
    as_user(argv, hold, 65534);
    start(&p, argv, e.kv);
    wait_holding(&p, &r);
    assert_int_equal(region_used(c.region[0], 0, 0), 700 * MIB);
    char *other[] = {(char *)need("SHIMAPP"), "init",       "ctx:0",      "alloc:600M=2",
                     "info:224:1024",         "alloc:224M", "alloc:1M=2", NULL};
    as_user(argv, other, 65533);
    run_argv(argv, &e, &r);
    expect_ok(&r);
    t_run_free(&r);
    finish(&p, &r);
    expect_ok(&r);
    struct stat st;
    assert_int_equal(stat(c.region[0], &st), 0);
    assert_int_equal(st.st_uid, 0); /* still the agent's (root's), as it was made */
    assert_int_equal(st.st_mode & 07777, 0666);
    assert_true(c.s->peak[0][0] <= 1024 * MIB);
    assert_true(c.s->peak[0][0] >= 1000 * MIB);
    assert_int_equal(chmod(dir, 0700), 0);
    t_run_free(&r);
    card_free(&c);
}

/* Calls before cuInit get the driver's own answer (CUDA_ERROR_NOT_INITIALIZED, 3), are not
 * counted, and do not keep the device from being counted once cuInit is called. */
static void test_before_cuinit(void **state)
{
    one_container(40, 300, "1024",
                  "alloc:1M=3 ctx:0=3 vmm:2M:0=3 pool:1M:0=3 primary:0=3 limit:2:1G=3 "
                  "init ctx:0 info:724:1024 alloc:725M=2");
}

/* A malformed limit is reported with its column, and the process is refused rather than let run
 * unlimited; a device the limits do not name is refused. */
static void test_malformed_and_unnamed(void **state)
{
    struct tc t;
    tc_new(&t, 40, 300, 100, "12x", 0);
    app(need("SHIMAPP"), "direct", "init=800 ctx:0=3", &t.e, &t.r);
    expect_ok(&t.r);
    assert_non_null(strstr(t.r.err, "libgpushare: GPUSHARE_MEMORY_LIMIT_MIB, column 3: expected "
                                    "',' or the end of the value"));
    env_for(&t.e, &t.c, 0, "GPU-6a7e0000-0000-4000-8000-000000000009=1024", 0);
    app(need("SHIMAPP"), "proc", "init ctx:0=2 primary:0=2", &t.e, &t.r);
    expect_ok(&t.r);
    assert_non_null(strstr(t.r.err, "GPU-6a7e0000-0000-4000-8000-000000000000: not named in "
                                    "GPUSHARE_MEMORY_LIMIT_MIB"));
    env_for(&t.e, &t.c, 0, "", 0);
    env_set(&t.e, "GPUSHARE_CORES_LIMIT_PERCENT", "%s",
            "GPU-6a7e0000-0000-4000-8000-000000000009=50");
    app(need("SHIMAPP"), "proc", "init ctx:0=2", &t.e, &t.r);
    expect_ok(&t.r);
    assert_non_null(strstr(t.r.err, "GPU-6a7e0000-0000-4000-8000-000000000000: not named in "
                                    "GPUSHARE_CORES_LIMIT_PERCENT"));
    env_for(&t.e, &t.c, 0, "GPU-6a7e0000-0000-4000-8000-000000000000=1024", 0);
    shimapp("proc", "init ctx:0 info:724:1024", &t.e);
    /* A region of another layout in the pod's file. */
    assert_int_equal(truncate(t.c.region[1], 4096), 0);
    env_for(&t.e, &t.c, 1, "1024", 0);
    app(need("SHIMAPP"), "proc", "init=800", &t.e, &t.r);
    expect_ok(&t.r);
    assert_non_null(strstr(t.r.err, "was made by another version of libgpushare; cuInit fails"));
    /* No file where the region should be (the node agent makes it): refused, never unlimited. */
    unlink(t.c.region[1]);
    app(need("SHIMAPP"), "proc", "init=800 ctx:0=3", &t.e, &t.r);
    expect_ok(&t.r);
    assert_non_null(strstr(t.r.err, "/region"));
    assert_non_null(strstr(t.r.err, ": open: No such file or directory; cuInit fails"));
    tc_free(&t);
}

/* A child holds none of its parent's memory; its own is counted while it lives and given back
 * when it exits without freeing. */
static void test_fork(void **state)
{
    one_container(40, 100, "8192",
                  "init ctx:0 alloc:2G fork init ctx:0 info:5944:8192 alloc:1G info:4920:8192 exit "
                  "wait info:6044:8192");
}

/* kill -9 of a process holding memory: its usage leaves the count. */
static void test_killed_process(void **state)
{
    struct tc t;
    struct proc p;
    tc_new(&t, 40, 300, 100, "8192", 0);
    char *argv[] = {(char *)need("SHIMAPP"), "init", "ctx:0", "alloc:4G", "hold", NULL};
    start(&p, argv, t.e.kv);
    wait_holding(&p, &t.r);
    assert_int_equal(region_used(t.c.region[0], 0, 0), 4 * GIB + 300 * MIB);
    kill(p.pid, SIGKILL);
    finish(&p, &t.r);
    assert_int_equal(t.r.signal, SIGKILL);
    assert_int_equal(region_used(t.c.region[0], 0, 0), 4 * GIB + 300 * MIB); /* not yet reaped */
    assert_int_equal(region_used(t.c.region[0], 0, 1), 0);
    shimapp("proc", "init ctx:0 info:7892:8192 alloc:7892M", &t.e);
    tc_free(&t);
}

/* An exec'd image that does not use the GPU holds none of its earlier image's memory: the driver
 * freed it at exec, and the count gives it back (the slot's lock went with the descriptor). */
static void test_exec_gives_back(void **state)
{
    struct tc t;
    struct proc p;
    tc_new(&t, 40, 300, 100, "8192", 0);
    char *argv[] = {(char *)need("SHIMAPP"), "init", "ctx:0", "alloc:4G", "exec", NULL};
    start(&p, argv, t.e.kv);
    wait_holding(&p, &t.r); /* the shell the process became */
    assert_int_equal(region_used(t.c.region[0], 0, 1), 0);
    shimapp("proc", "init ctx:0 info:7892:8192 alloc:7892M", &t.e);
    finish(&p, &t.r);
    expect_ok(&t.r);
    tc_free(&t);
}

/* The pid of the only child of @pid (unshare's: the first process of the new pid namespace). */
static pid_t child_of(pid_t pid)
{
    char path[64], buf[64] = "";
    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
    for (int i = 0; i < 200 && !buf[0]; i++) {
        FILE *f = fopen(path, "re");
        if (f && !fgets(buf, sizeof(buf), f))
            buf[0] = '\0';
        if (f)
            fclose(f);
        if (!buf[0])
            usleep(10000);
    }
    return (pid_t)atoi(buf);
}

/* A container restarted (Kubernetes gives each container of a pod a pid namespace of its own):
 * the process killed in one namespace leaves no charge for its replacement in another. */
static void test_pid_namespace_gone(void **state)
{
    static const char unshare[] = "/usr/bin/unshare";
    struct t_run probe = {0};
    const char *const try[] = {unshare, "--pid", "--fork", "--mount-proc", "/bin/true", NULL};
    if (access(unshare, X_OK) == 0)
        t_run(try, &probe);
    int can = access(unshare, X_OK) == 0 && probe.status == 0;
    t_run_free(&probe);
    if (!can) {
        fprintf(stderr, "pid namespaces: unshare --pid is not allowed here; case skipped\n");
        skip();
    }
    struct tc t;
    struct proc p;
    tc_new(&t, 40, 300, 100, "8192", 0);
    char *argv[] = {(char *)unshare, "--pid", "--fork",   "--mount-proc", (char *)need("SHIMAPP"),
                    "init",          "ctx:0", "alloc:4G", "hold",         NULL};
    start(&p, argv, t.e.kv);
    wait_holding(&p, &t.r);
    assert_int_equal(region_used(t.c.region[0], 0, 1), 4 * GIB + 300 * MIB);
    pid_t app_pid = child_of(p.pid);
    assert_true(app_pid > 0);
    kill(app_pid, SIGKILL);
    finish(&p, &t.r);
    assert_int_equal(region_used(t.c.region[0], 0, 1), 0);
    char steps[512];
    snprintf(steps, sizeof(steps),
             "--pid --fork --mount-proc %s init ctx:0 info:7892:8192 "
             "alloc:7892M",
             need("SHIMAPP"));
    app(unshare, NULL, steps, &t.e, &t.r);
    expect_ok(&t.r);
    tc_free(&t);
}

/* A library's constructor calls cuInit (inside the dynamic loader, its lock held) while the main
 * thread makes its first CUDA call: the library loads the driver before it takes a lock of its own,
 * so neither waits for the other. A deadlock is killed after 20 s by the program's alarm. */
static void test_loader_race(void **state)
{
    struct tc t;
    tc_new(&t, 40, 300, 100, "8192", 0);
    const char *argv[] = {need("DLRACE"), need("DLRACE_PLUGIN"), NULL};
    run_argv((char *const *)argv, &t.e, &t.r);
    if (t.r.signal == SIGALRM)
        fail_msg("cuInit deadlocked with a library's constructor:\n%s", t.r.err);
    expect_ok(&t.r);
    assert_string_equal(t.r.out, "done\n");
    assert_non_null(strstr(t.r.err, "main: cuInit -> 0"));
    assert_non_null(strstr(t.r.err, "plugin: cuInit -> 0"));
    tc_free(&t);
}

/* An interposer preloaded before the library resolves the next cuInit and cuMemAlloc_v2 for
 * itself: the library's lookups hand out its own wrappers, never the interposer's functions of the
 * same names (which would call themselves), and its limit holds behind the interposer. */
static void test_interposer_before(void **state)
{
    struct tc t;
    tc_new(&t, 40, 100, 100, "4096", 0);
    env_set(&t.e, "LD_PRELOAD", "%s %s", need("INTERPOSER"), need("GPUSHARE_LIB"));
    app(need("SHIMAPP_DL"), "proc",
        "init ctx:0 getproc:cuMemAlloc:12000:0 lookup:cuMemAlloc_v2 alloc:3G alloc:2G=2", &t.e,
        &t.r);
    expect_ok(&t.r);
    assert_non_null(strstr(t.r.out, "getproc cuMemAlloc -> libgpushare.so:cuMemAlloc_v2 "));
    assert_non_null(strstr(t.r.out, "lookup cuMemAlloc_v2 -> libgpushare.so:cuMemAlloc_v2\n"));
    assert_null(strstr(t.r.err, "called itself"));
    tc_free(&t);
}

/* A program that never loaded the driver probes the process for it: it finds none, as without the
 * library, and the library neither loads the driver nor says anything (with the driver installed
 * and without it). */
static void test_probe_without_driver(void **state)
{
    struct tc t;
    tc_new(&t, 40, 100, 100, "", 0);
    for (int installed = 1; installed >= 0; installed--) {
        if (!installed)
            env_set(&t.e, "LD_LIBRARY_PATH", "%s", "/nonexistent");
        app(need("SHIMAPP_DL"), NULL, "nogpu dlookup:cuInit dlookup:cuMemAlloc_v2 nogpu", &t.e,
            &t.r);
        expect_ok(&t.r);
        assert_non_null(strstr(t.r.out, "dlookup cuInit -> null\n"));
        assert_non_null(strstr(t.r.out, "dlookup cuMemAlloc_v2 -> null\n"));
        assert_null(strstr(t.r.out, "libcuda loaded=1"));
        assert_string_equal(t.r.err, "");
    }
    tc_free(&t);
}

/* Many threads allocating and freeing at once near the limit: never above it, nothing left. */
static void test_threads(void **state)
{
    struct tc t;
    tc_new(&t, 40, 100, 100, "4096", 0);
    app(need("SHIMAPP"), "proc", "init ctx:0 threads:16:300:700M info:3996:4096", &t.e, &t.r);
    expect_ok(&t.r);
    unsigned long long ok = 0, oom = 0;
    assert_int_equal(sscanf(strstr(t.r.out, "threads"), "threads ok=%llu oom=%llu", &ok, &oom), 2);
    assert_int_equal(ok + oom, 16 * 300);
    assert_true(ok > 0);
    assert_true(t.c.s->peak[0][0] <= 4096 * MIB);
    tc_free(&t);
}

/* cuGetProcAddress hands out the wrapper of exactly the version asked for; lookups of what the
 * library does not wrap, and of what the driver lacks, pass through. */
static void test_get_proc_address(void **state)
{
    struct tc t;
    tc_new(&t, 40, 100, 100, "4096", 0);
    app(need("SHIMAPP_DL"), "proc",
        "init getproc:cuMemAlloc:12000:0 getproc:cuMemAlloc:3000:0 "
        "getproc:cuLaunchKernel:12000:2 getproc:cuLaunchKernel:12000:0 "
        "getproc:cuCtxCreate:12080:0 getproc:cuCtxCreate:11000:0 "
        "getproc:cuGetProcAddress:12000:0 getproc:cuCtxGetCurrent:12000:0 "
        "getproc:cuNoSuchThing:12000:0 getproc:cuMemAllocAsync:11000:0 "
        "getproc:cuGraphInstantiate:12000:0 getproc:cuGraphInstantiate:11000:0 "
        "lookup:cuMemAlloc_v2 lookup:cuCtxGetCurrent lookup:cuNoSuchThing "
        "vlookup:cuMemAlloc_v2:GLIBC_2.2.5 vlookup:cuMemAlloc_v2:libcuda.so.1 "
        "dlookup:cuMemAlloc_v2",
        &t.e, &t.r);
    expect_ok(&t.r);
    static const char *const want[] = {
        "getproc cuMemAlloc -> libgpushare.so:cuMemAlloc_v2 status=0",
        "getproc cuMemAlloc -> libgpushare.so:cuMemAlloc status=0",
        "getproc cuLaunchKernel -> libgpushare.so:cuLaunchKernel_ptsz status=0",
        "getproc cuLaunchKernel -> libgpushare.so:cuLaunchKernel status=0",
        "getproc cuCtxCreate -> libgpushare.so:cuCtxCreate_v4 status=0",
        "getproc cuCtxCreate -> libgpushare.so:cuCtxCreate_v2 status=0",
        "getproc cuGetProcAddress -> libgpushare.so:cuGetProcAddress_v2 status=0",
        "getproc cuCtxGetCurrent -> libcuda.so.1:cuCtxGetCurrent status=0",
        "getproc cuNoSuchThing -> null status=1",
        "getproc cuMemAllocAsync -> null status=2",
        /* from CUDA 12.0 cuGraphInstantiate is the ABI of cuGraphInstantiateWithFlags */
        "getproc cuGraphInstantiate -> libgpushare.so:cuGraphInstantiateWithFlags status=0",
        "getproc cuGraphInstantiate -> libgpushare.so:cuGraphInstantiate_v2 status=0",
        "lookup cuMemAlloc_v2 -> libgpushare.so:cuMemAlloc_v2",
        "lookup cuCtxGetCurrent -> libcuda.so.1:cuCtxGetCurrent",
        "lookup cuNoSuchThing -> null",
        /* dlvsym finds no unversioned symbol in a library that has version information (the
         * driver has: it uses glibc's versioned symbols), whatever version it is asked for. */
        "vlookup cuMemAlloc_v2 -> null",
        "dlookup cuMemAlloc_v2 -> libgpushare.so:cuMemAlloc_v2",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        if (!strstr(t.r.out, want[i]))
            fprintf(stderr, "missing \"%s\" in:\n%s", want[i], t.r.out);
        assert_non_null(strstr(t.r.out, want[i]));
    }
    tc_free(&t);
}

/* Whether the dynamic loader finds @soname on this machine, as it would for the library. */
static int system_has(const char *soname)
{
    char line[512];
    int found = 0;
    FILE *f = popen("/sbin/ldconfig -p 2>/dev/null", "r");
    while (f && fgets(line, sizeof(line), f))
        found |= strstr(line, soname) != NULL;
    if (f)
        pclose(f);
    return found;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* A driver that lacks an entry point: a lookup gets NULL, a direct call CUDA_ERROR_NOT_FOUND
 * (500), reported once, and nothing is called through NULL. */
static void test_missing_symbol(void **state)
{
    struct tc t;
    tc_new(&t, 40, 100, 100, "4096", 0);
    env_set(&t.e, "LD_LIBRARY_PATH", "%s", need("OLD_DIR"));
    app(need("SHIMAPP"), "direct",
        "init ctx:0 async:1M=500 async:1M=500 ctx4:0=500 alloc:1M info:3995:4096 "
        "lookup:cuMemAllocAsync lookup:cuMemAlloc_v2 dlookup:cuCtxCreate_v4 dlookup:cuMemAlloc_v2",
        &t.e, &t.r);
    expect_ok(&t.r);
    assert_int_equal(count(t.r.err, "the CUDA driver has no cuMemAllocAsync"), 1);
    assert_int_equal(count(t.r.err, "the CUDA driver has no cuCtxCreate_v4"), 1);
    assert_non_null(strstr(t.r.out, "lookup cuMemAllocAsync -> null"));
    assert_non_null(strstr(t.r.out, "lookup cuMemAlloc_v2 -> libgpushare.so:cuMemAlloc_v2"));
    /* RTLD_DEFAULT finds the library's exports first: what the driver lacks is not there. */
    assert_non_null(strstr(t.r.out, "dlookup cuCtxCreate_v4 -> null"));
    assert_non_null(strstr(t.r.out, "dlookup cuMemAlloc_v2 -> libgpushare.so:cuMemAlloc_v2"));
    /* Nor is anything of a driver that is not installed: a program probing for CUDA runs on. */
    if (system_has("libcuda.so.1")) {
        tc_free(&t);
        return;
    }
    memset(&t.e, 0, sizeof(t.e));
    env_set(&t.e, "PATH", "%s", "/usr/bin:/bin");
    env_set(&t.e, "LD_PRELOAD", "%s", need("GPUSHARE_LIB"));
    app(need("SHIMAPP_DL"), NULL, "nogpu dlookup:cuInit dlookup:cuMemAlloc_v2", &t.e, &t.r);
    expect_ok(&t.r);
    assert_non_null(strstr(t.r.out, "dlookup cuInit -> null"));
    assert_non_null(strstr(t.r.out, "dlookup cuMemAlloc_v2 -> null"));
    tc_free(&t);
}

/* The driver hands a freed address out again, and another thread may get it before the thread that
 * freed it has done its books (the fake waits 2 ms after each free): the count still ends at the
 * live set. */
static void test_freed_address_reused(void **state)
{
    struct tc t;
    tc_new(&t, 40, 100, 100, "4096", 0);
    env_set(&t.e, "FAKECUDA_SLOW_MS", "%s", "2");
    app(need("SHIMAPP"), "proc", "init ctx:0 threads:4:50:300M info:3996:4096 alloc:3996M", &t.e,
        &t.r);
    expect_ok(&t.r);
    assert_true(t.c.s->peak[0][0] <= 4096 * MIB);
    tc_free(&t);
}

/* A context destroyed in one thread while another makes a context, which the driver puts at the
 * same address, and allocates in it; and a primary context released for the last time while
 * another thread retains it again: neither the new context nor what it holds leaves the count.
 * (The fake waits 100 ms after destroying, releasing and retaining.) */
static void test_context_reborn(void **state)
{
    struct tc t;
    tc_new(&t, 40, 300, 100, "2048", 0);
    env_set(&t.e, "FAKECUDA_SLOW_MS", "%s", "100");
    shimapp("proc",
            "init ctx:0 ctx:0 bgdestroy sleep:20 ctx:0 alloc:600M join info:848:2048 "
            "alloc:849M=2",
            &t.e);
    shimapp("proc",
            "init primary:0 bgrelease:0 sleep:20 primary:0 join alloc:100M info:1648:2048 "
            "alloc:1649M=2",
            &t.e);
    assert_true(t.c.s->peak[0][0] <= 2048 * MIB);
    tc_free(&t);
}

/* A pool's memory is on the pool's device, not the stream's: a 1 GiB limit on device 1 holds for
 * allocations from device 1's pools on a stream of device 0, for pools got every way. */
static void test_pool_on_another_device(void **state)
{
    struct card c;
    struct env e;
    card_new(&c, 2, 40, 300, 100, 0);
    env_for(&e, &c, 0,
            "GPU-6a7e0000-0000-4000-8000-000000000000=8192,"
            "GPU-6a7e0000-0000-4000-8000-000000000001=1024",
            0);
    shimapp("proc",
            "init ctx:0 pool:2G:1=2 newpool:2G:1=2 pool:512M:1 newpool:512M:1 pool:1M:1=2 "
            "info:7892:8192 free pool:256M:1=2 sync pool:256M:1 freeall",
            &e);
    assert_true(c.s->peak[0][1] <= GIB);
    /* A pool the library never saw handed out: the first pointer from it says where it is. */
    shimapp("proc", "init ctx:0 rawpool:512M:1 rawpool:2G:1=2 rawpool:512M:1 rawpool:1M:1=2", &e);
    card_free(&c);
}

/* A pool's cache is charged: what a stream-ordered free leaves in the pool stays counted until a
 * synchronisation gives it back (release threshold 0); kept by its threshold, it is trimmed when
 * the room is needed rather than the allocation refused — unless the stream has not reached the
 * free yet (no synchronisation since), when the pool may not give it back. */
static void test_pool_cache(void **state)
{
    one_container(40, 100, "1024",
                  "init ctx:0 async:600M free info:324:1024 sync info:924:1024 threshold:max:0 "
                  "async:600M free sync info:324:1024 alloc:900M info:24:1024 free info:924:1024 "
                  "async:600M free alloc:900M=2 sync alloc:900M info:24:1024");
}

/* A tenant allocating from two pools cannot hold more than its limit through their caches: a pool
 * is refused while another holds what was freed from it before the stream got there, and gets
 * the room once the other one can be trimmed. Before the pools were charged what they hold, the
 * second pool was let take its 600 MiB beside the first one's cache: 1300 MiB of a 1024 MiB
 * limit on the card. */
static void test_two_pools_within_limit(void **state)
{
    one_container(40, 100, "1024",
                  "init ctx:0 threshold:max:0 pool:600M:0 newpool:600M:0=2 free newpool:600M:0=2 "
                  "streamsync info:324:1024 newpool:600M:0 info:324:1024 free sync pool:600M:0 "
                  "info:324:1024");
}

/* PyTorch's cudaMallocAsync backend near its limit: stream-ordered allocations and frees from the
 * device's pool, its cache kept (release threshold: all), the pool holding 900 MiB of a 1024 MiB
 * limit with the context: never refused; a plain allocation between gets the room the pool
 * caches, and the pool grows again after it. */
static void test_torch_like_near_limit(void **state)
{
    one_container(40, 100, "1024",
                  "init ctx:0 threshold:max:0 torchlike:3000:600M info:24:1024 streamsync "
                  "alloc:900M info:24:1024 free torchlike:1000:600M info:24:1024");
}

/* CUDA graphs' allocation nodes: a launch is charged what they need beyond what the device's graph
 * memory has free, and what that memory holds stays charged until trimmed; one that would pass the
 * limit is refused with CUDA_ERROR_OUT_OF_MEMORY and does not run; a relaunch whose allocations
 * are still live is the driver's CUDA_ERROR_INVALID_VALUE, unless the graph frees them on
 * relaunch (then its own allocations count as free); a plain allocation gets the room graph
 * memory holds unused. */
static void test_graph_memory(void **state)
{
    struct tc t;
    tc_new(&t, 40, 100, 100, "2048", 0);
    shimapp("proc",
            "init ctx:0 graph galloc:300M:0 gfree gexec glaunch info:1648:2048 glaunch "
            "graph galloc:600M:0 gexec5 glaunch info:1348:2048 glaunch=1 sync info:1348:2048 "
            "gptrfree glaunch info:1348:2048 graph galloc:1900M:0 gexec glaunch=2 "
            "info:1348:2048",
            &t.e);
    /* four launches ran: not the relaunch the driver refused, nor the one refused for memory */
    assert_int_equal(atomic_load(&t.c.s->proc[0].launches[0]), 4);
    shimapp("proc",
            "init ctx:0 graph galloc:1000M:0 gexec:1 glaunch glaunch glaunch info:948:2048 "
            "graph galloc:1100M:0 gfree gexec glaunch=2 info:948:2048",
            &t.e);
    shimapp("proc",
            "init ctx:0 graph galloc:1000M:0 gfree gexec glaunch info:948:2048 "
            "graph galloc:1500M:0 gfree gexec glaunch info:448:2048 alloc:1500M info:448:2048",
            &t.e);
    assert_true(t.c.s->peak[0][0] <= 2048 * MIB);
    tc_free(&t);
}

/* A stream-ordered allocation captured into a graph is the graph's: charged when the graph runs,
 * not when captured; child graphs' allocations count; an upload (cuGraphUpload, or the
 * instantiation's) maps the graph's memory, and is refused when it would pass the limit. */
static void test_graph_capture_upload(void **state)
{
    one_container(40, 100, "2048",
                  "init ctx:0 capture async:600M free endcapture info:1948:2048 gexec glaunch "
                  "info:1348:2048 graph galloc:300M:0 gfree gchild gexec glaunch info:1348:2048 "
                  "graph galloc:2000M:0 gfree gexecp:0 gupload=2 gexecp:2=2 "
                  "graph galloc:1900M:0 gfree gexecp:2 info:48:2048 glaunch info:48:2048");
}

/* A context's malloc heap and printf FIFO are its device memory: what they are set to beyond their
 * defaults is charged, given back when lowered, and goes with the context. */
static void test_context_limits(void **state)
{
    one_container(40, 300, "1024",
                  "init ctx:0 limit:2:2G=2 limit:2:508M info:224:1024 alloc:225M=2 limit:1:101M "
                  "info:124:1024 limit:2:8M info:624:1024 ctx:0 limit:2:108M info:224:1024 "
                  "destroy use:0 info:624:1024");
}

/* A deferred-mapping array holds no memory of its own (what is mapped into it comes from
 * cuMemCreate): a 64 GiB one fits a 1 GiB limit. */
static void test_unbacked_array(void **state)
{
    one_container(40, 300, "1024", "init ctx:0 sparse:65536:65536:4 info:724:1024 free");
}

/* A 40 GiB card, two 20 GiB tenants: A makes two contexts and 17 GiB classic, is refused 3 GiB
 * through cuMemCreate, and can take exactly what is left of its 20 GiB; B then gets its full
 * 20 GiB while A holds everything it has. */
static void test_case_40g_two_tenants(void **state)
{
    struct card c;
    struct env ea, eb;
    struct proc pa;
    struct t_run ra = {0}, rb = {0};
    card_new(&c, 1, 40, 300, 100, 0);
    env_for(&ea, &c, 0, "20480", 0);
    env_for(&eb, &c, 1, "20480", 0);
    char *argv[] = {(char *)need("SHIMAPP"),
                    "init",
                    "ctx:0",
                    "ctx:0",
                    "alloc:17G",
                    "vmm:3G:0=2",
                    "vmm:2G:0",
                    "alloc:424M",
                    "alloc:1M=2",
                    "info:0:20480",
                    "hold",
                    NULL};
    start(&pa, argv, ea.kv);
    wait_holding(&pa, &ra);
    assert_int_equal(region_used(c.region[0], 0, 0), 20 * GIB);
    app(need("SHIMAPP"), "proc", "init ctx:0 alloc:20180M alloc:1M=2 info:0:20480", &eb, &rb);
    finish(&pa, &ra);
    expect_ok(&ra);
    expect_ok(&rb);
    assert_int_equal(c.s->peak[0][0], 20 * GIB);
    assert_int_equal(c.s->peak[1][0], 20 * GIB);
    t_run_free(&ra);
    t_run_free(&rb);
    card_free(&c);
}

/* 10,000 allocate/free cycles of 1 GiB across a parent and a forked child that exits without
 * freeing its live allocation: the count ends at the live set. Then a 1 GiB container asking for
 * 2 GiB gets the native OOM code, goes on, and a smaller retry succeeds. */
static void test_case_10000_cycles(void **state)
{
    struct tc t;
    struct proc p;
    tc_new(&t, 40, 300, 100, "8192", 0);
    char *argv[] = {(char *)need("SHIMAPP"),
                    "init",
                    "ctx:0",
                    "alloc:1G",
                    "fork",
                    "init",
                    "ctx:0",
                    "alloc:1G",
                    "cycles:5000:1G",
                    "exit",
                    "cycles:5000:1G",
                    "wait",
                    "info:6868:8192",
                    "hold",
                    NULL};
    start(&p, argv, t.e.kv);
    wait_holding(&p, &t.r);
    assert_int_equal(region_used(t.c.region[0], 0, 0), GIB + 300 * MIB);
    finish(&p, &t.r);
    expect_ok(&t.r);
    assert_true(t.c.s->peak[0][0] <= 8192 * MIB);
    env_for(&t.e, &t.c, 1, "1024", 0);
    shimapp("proc", "init ctx:0 alloc:2G=2 alloc:512M info:212:1024", &t.e);
    tc_free(&t);
}

/* An 11 GiB card, a 1 GiB and a 5 GiB container: the first cannot take more than 1 GiB by any
 * path, thread or child, and each sees its own limit as the card's total. */
static void test_case_11g_card(void **state)
{
    struct card c;
    struct env ex, ey;
    card_new(&c, 1, 11, 300, 100, 0);
    env_for(&ex, &c, 0, "1024", 0);
    env_for(&ey, &c, 1, "5120", 0);
    shimapp("proc",
            "init ctx:0 info:724:1024 total:0:1024 alloc:2G=2 alloc:700M managed:100M=2 "
            "async:100M=2 pool:100M=2 pitch:4096:25600=2 vmm:100M:0=2 vmmearly:100M:0=2 "
            "array:5120:5120=2 array3d:1024:1024:25=2 mipmap:4096:4096:2=2 ctx:0=2 ctx4:0=2 "
            "primary:0=2 threads:8:50:100M fork init ctx:0=2 exit wait alloc1:30M=2 alloc:24M "
            "alloc:1M=2 info:0:1024",
            &ex);
    shimapp("direct", "init ctx:0 info:4820:5120 total:0:5120 alloc:4820M alloc:1M=2", &ey);
    assert_true(c.s->peak[0][0] <= GIB);
    assert_int_equal(c.s->peak[0][0], GIB);
    assert_int_equal(c.s->peak[1][0], 5 * GIB);
    card_free(&c);
}

/* The compute limit, per device, for a tenant alone on the card: the achieved utilisation of
 * the second half of a 4 s run (kernel time launched / wall time) stays near the limit. Only the
 * upper side is asserted, with margin: a loaded machine can only launch less. */
static void launched(const char *out, int dev, unsigned long long *second)
{
    char key[32];
    snprintf(key, sizeof(key), "launched %d ", dev);
    const char *p = strstr(out, key);
    unsigned long long first;
    assert_non_null(p);
    assert_int_equal(sscanf(p + strlen(key), "%llu %llu", &first, second), 2);
}

static void test_compute_limit(void **state)
{
    struct card c;
    struct env e;
    struct t_run r = {0};
    unsigned long long d0, d1, free0;
    card_new(&c, 2, 40, 100, 1000, 100000); /* 1 ms kernels; NVML in another pid namespace */
    env_for(&e, &c, 0, "", 1);
    app(need("SHIMAPP"), "proc", "init ctx:0 launchfor:2000", &e, &r);
    expect_ok(&r);
    launched(r.out, 0, &free0);
    assert_true(free0 > 4000); /* unlimited: far past 100 % of the card */
    env_set(&e, "GPUSHARE_CORES_LIMIT_PERCENT", "%s",
            "GPU-6a7e0000-0000-4000-8000-000000000000=30,"
            "GPU-6a7e0000-0000-4000-8000-000000000001=70");
    app(need("SHIMAPP"), "proc", "init ctx:0 ctx:1 launchfor:4000", &e, &r);
    expect_ok(&r);
    launched(r.out, 0, &d0);
    launched(r.out, 1, &d1);
    fprintf(stderr, "compute: 30 %% -> %llu %%, 70 %% -> %llu %% (second half)\n", d0 / 20,
            d1 / 20);
    assert_true(d0 <= 2000 * 40 / 100); /* 2 s of 1 ms kernels at most 40 % */
    assert_true(d1 <= 2000 * 80 / 100);
    assert_true(d0 > 0 && d1 > d0);
    /* NVML numbers this process differently; it was found by its first context. */
    assert_null(strstr(r.err, "NVML does not list this process"));
    t_run_free(&r);
    card_free(&c);
}

/* One process on fresh card @t under a 30 % compute limit, the fake NVML set by @env ("NAME=VALUE"
 * strings, NULL-terminated), launching kernels of @kernel_us by @prog; the caller frees @t. */
static void run_30(struct tc *t, uint64_t kernel_us, const char *const *env, const char *prog)
{
    tc_new(t, 40, 100, kernel_us, "", 1);
    for (int i = 0; env[i]; i++) {
        char name[64];
        const char *eq = strchr(env[i], '=');
        snprintf(name, sizeof(name), "%.*s", (int)(eq - env[i]), env[i]);
        env_set(&t->e, name, "%s", eq + 1);
    }
    env_set(&t->e, "GPUSHARE_CORES_LIMIT_PERCENT", "%s", "30");
    app(need("SHIMAPP"), "proc", prog, &t->e, &t->r);
    expect_ok(&t->r);
}

/* run_30() of one launchfor:@ms. Return: the kernels launched in its second half. */
static unsigned long long under_30(uint64_t kernel_us, const char *const *env, int ms)
{
    struct tc t;
    unsigned long long second;
    char prog[64];
    snprintf(prog, sizeof(prog), "init ctx:0 launchfor:%d", ms);
    run_30(&t, kernel_us, env, prog);
    launched(t.r.out, 0, &second);
    tc_free(&t);
    return second;
}

#define ENV(...) ((const char *const[]){__VA_ARGS__, NULL})

/* NVML samples once per period, 1/6 s to 1 s by product, and a watcher pass between two samples
 * learns nothing new: the process's latest sample stands, and is corrected for once (taking such
 * a pass for idle let an H200 run at 61 % under a 30 % limit). At NVML's longest period the
 * limit holds too, once the first samples have come: the second half of a 10 s run. */
static void test_compute_slow_samples(void **state)
{
    unsigned long long d0 = under_30(1000, ENV("FAKENVML_SAMPLE_US=1000000"), 10000);
    fprintf(stderr, "compute, 1 s samples: 30 %% -> %llu %% (second half)\n", d0 / 50);
    assert_true(d0 <= 5000 * 40 / 100); /* 5 s of 1 ms kernels at most 40 % */
    assert_true(d0 >= 5000 * 15 / 100); /* and not held back by a sample standing too long */
}

/* A tenant back from 3 s idle starts from the rate it had, not from a burst: idle stands as a
 * sample of 0 does, spread over the ticks to the next, so the rate climbs slowly until NVML
 * measures the work (counting 0 afresh each tick let the first half-second run at 2-6 times the
 * card with 1 s samples). */
static void test_compute_after_idle(void **state)
{
    struct tc t;
    run_30(&t, 1000, ENV("FAKENVML_SAMPLE_US=1000000"),
           "init ctx:0 launchfor:3000 sleep:3000 launchfor:3000");
    const char *p = strstr(t.r.out, "launched 0 ");
    assert_non_null(p);
    p = strstr(p + 1, "launched 0 ");
    assert_non_null(p);
    unsigned long long first, second;
    assert_int_equal(sscanf(p, "launched 0 %llu %llu", &first, &second), 2);
    fprintf(stderr, "compute, after 3 s idle, 1 s samples: 30 %% -> %llu %%, %llu %%\n", first / 15,
            second / 15);
    assert_true(first <= 1500 * 60 / 100); /* its first 1.5 s of 1 ms kernels at most 60 % */
    tc_free(&t);
}

/* A board whose NVML has no per-process utilisation: the limit is held against the whole card's,
 * not left at the rate it started with (10 launches a tick: of 10 ms kernels, the whole card):
 * from the driver's stamped samples (every 1/6 s, and every second), or where there are none
 * from the latest period's figure. */
static void test_compute_without_process_util(void **state)
{
    unsigned long long d0 = under_30(10000, ENV("FAKENVML_NO_PROCESS_UTIL=1"), 4000);
    fprintf(stderr, "compute, whole-card measure: 30 %% -> %llu %% (second half)\n", d0 / 2);
    assert_true(d0 <= 2000 * 40 / 100 / 10); /* 2 s of 10 ms kernels at most 40 % */
    assert_true(d0 > 0);
    d0 = under_30(1000, ENV("FAKENVML_NO_PROCESS_UTIL=1", "FAKENVML_SAMPLE_US=1000000"), 10000);
    fprintf(stderr, "compute, whole-card, 1 s samples: 30 %% -> %llu %% (second half)\n", d0 / 50);
    assert_true(d0 <= 5000 * 40 / 100 && d0 >= 5000 * 15 / 100);
    d0 = under_30(10000, ENV("FAKENVML_NO_PROCESS_UTIL=1", "FAKENVML_NO_DEVICE_SAMPLES=1"), 4000);
    fprintf(stderr, "compute, whole-card, no samples: 30 %% -> %llu %% (second half)\n", d0 / 2);
    assert_true(d0 <= 2000 * 40 / 100 / 10 && d0 > 0);
}

/* Four threads launching on one device at once share its limit. */
static void test_compute_many_threads(void **state)
{
    struct tc t;
    unsigned long long sum = 0, first, second;
    tc_new(&t, 40, 100, 1000, "", 1);
    t.c.s->pid_offset = 100000;
    env_set(&t.e, "GPUSHARE_CORES_LIMIT_PERCENT", "%s", "30");
    app(need("SHIMAPP"), "proc", "init ctx:0 ctx:0 ctx:0 ctx:0 launchfor:4000", &t.e, &t.r);
    expect_ok(&t.r);
    for (const char *p = t.r.out; (p = strstr(p, "launched 0 ")); p++) {
        assert_int_equal(sscanf(p, "launched 0 %llu %llu", &first, &second), 2);
        sum += second;
    }
    fprintf(stderr, "compute, four threads: 30 %% -> %llu %% (second half)\n", sum / 20);
    assert_true(sum <= 2000 * 40 / 100); /* 2 s of 1 ms kernels at most 40 % */
    assert_true(sum > 0);
    tc_free(&t);
}

/* Without NVML the limit cannot be measured: that is said, not silently skipped. */
static void test_compute_without_nvml(void **state)
{
    struct tc t;
    if (system_has("libnvidia-ml.so.1"))
        skip(); /* this machine has a real NVML: the library would find it */
    tc_new(&t, 40, 100, 1000, "", 0);
    env_set(&t.e, "GPUSHARE_CORES_LIMIT_PERCENT", "%s", "50");
    app(need("SHIMAPP"), "proc", "init ctx:0 launch:100", &t.e, &t.r);
    expect_ok(&t.r);
    assert_non_null(strstr(t.r.err, "cannot load libnvidia-ml.so.1"));
    assert_non_null(strstr(t.r.err, "compute limits are not enforced"));
    /* 100 % is no limit: nothing to enforce, nothing to warn of. */
    env_set(&t.e, "GPUSHARE_CORES_LIMIT_PERCENT", "%s", "100");
    app(need("SHIMAPP"), "proc", "init ctx:0 launch:100", &t.e, &t.r);
    expect_ok(&t.r);
    assert_string_equal(t.r.err, "");
    tc_free(&t);
}

/* dlsym(RTLD_NEXT, ...) keeps meaning "after the caller" with the library's dlsym in between. */
static void test_rtld_next(void **state)
{
    struct tc t;
    tc_new(&t, 40, 100, 100, "1024", 0);
    char *argv[] = {(char *)need("RTLDNEXT"), NULL};
    run_argv(argv, &t.e, &t.r);
    expect_ok(&t.r);
    assert_string_equal(t.r.out, "next 2\n");
    tc_free(&t);
}

/* The library under valgrind: every path, a fork, threads, the limiter's thread; no error. */
static void test_valgrind(void **state)
{
    const char *vg = need("VALGRIND");
    if (!vg[0]) {
        fprintf(stderr, "valgrind not found: scripts/install-deps installs it\n");
        fail();
    }
    struct card c;
    struct env e;
    struct t_run r = {0};
    card_new(&c, 1, 40, 64, 1000, 100000);
    env_for(&e, &c, 0, "2048", 1);
    env_set(&e, "GPUSHARE_CORES_LIMIT_PERCENT", "%s", "50");
    char steps[4096];
    snprintf(steps, sizeof(steps),
             "%s threads:4:20:300M fork init ctx:0 alloc:100M exit wait launchfor:600 alloc:2G=2",
             tour);
    char buf[8192], *argv[300];
    int n = 0;
    snprintf(buf, sizeof(buf), "%s", steps);
    argv[n++] = (char *)vg;
    argv[n++] = "--quiet";
    argv[n++] = "--error-exitcode=99";
    argv[n++] = "--leak-check=full";
    argv[n++] = "--show-leak-kinds=definite";
    argv[n++] = "--errors-for-leak-kinds=definite";
    argv[n++] = (char *)need("SHIMAPP");
    argv[n++] = "--via";
    argv[n++] = "proc";
    for (char *t = strtok(buf, " "); t && n < 299; t = strtok(NULL, " "))
        argv[n++] = t;
    argv[n] = NULL;
    run_argv(argv, &e, &r);
    expect_ok(&r);
    assert_null(strstr(r.err, "=="));
    t_run_free(&r);
    card_free(&c);
}

static int setup(void **state)
{
    snprintf(dir, sizeof(dir), "/tmp/gpushare-test-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

/* What a failed case left: its cards, stderr files and regions. */
static int teardown(void **state)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ldd_c_runtime_only),
        cmocka_unit_test(test_no_gpu_app_unchanged),
        cmocka_unit_test(test_every_path_and_free),
        cmocka_unit_test(test_native_oom_code),
        cmocka_unit_test(test_default_region_per_user),
        cmocka_unit_test(test_file_region_two_users),
        cmocka_unit_test(test_before_cuinit),
        cmocka_unit_test(test_malformed_and_unnamed),
        cmocka_unit_test(test_fork),
        cmocka_unit_test(test_killed_process),
        cmocka_unit_test(test_exec_gives_back),
        cmocka_unit_test(test_pid_namespace_gone),
        cmocka_unit_test(test_loader_race),
        cmocka_unit_test(test_interposer_before),
        cmocka_unit_test(test_probe_without_driver),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_get_proc_address),
        cmocka_unit_test(test_missing_symbol),
        cmocka_unit_test(test_freed_address_reused),
        cmocka_unit_test(test_context_reborn),
        cmocka_unit_test(test_pool_on_another_device),
        cmocka_unit_test(test_pool_cache),
        cmocka_unit_test(test_two_pools_within_limit),
        cmocka_unit_test(test_torch_like_near_limit),
        cmocka_unit_test(test_graph_memory),
        cmocka_unit_test(test_graph_capture_upload),
        cmocka_unit_test(test_context_limits),
        cmocka_unit_test(test_unbacked_array),
        cmocka_unit_test(test_case_40g_two_tenants),
        cmocka_unit_test(test_case_10000_cycles),
        cmocka_unit_test(test_case_11g_card),
        cmocka_unit_test(test_compute_limit),
        cmocka_unit_test(test_compute_many_threads),
        cmocka_unit_test(test_compute_slow_samples),
        cmocka_unit_test(test_compute_after_idle),
        cmocka_unit_test(test_compute_without_process_util),
        cmocka_unit_test(test_compute_without_nvml),
        cmocka_unit_test(test_rtld_next),
        cmocka_unit_test(test_valgrind),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
