/* Helpers for the cmocka tests; see util.h. */
#include "util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *t_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *s = malloc(cap);
    if (!s)
        fail_msg("%s: out of memory", path);
    for (;;) {
        n += fread(s + n, 1, cap - n - 1, f);
        if (n + 1 < cap)
            break;
        cap *= 2;
        char *m = realloc(s, cap);
        if (!m)
            fail_msg("%s: out of memory", path);
        s = m;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(s);
        return NULL;
    }
    s[n] = '\0';
    if (len)
        *len = n;
    return s;
}

static int temp_file(char *path)
{
    int fd = mkstemp(path);
    if (fd < 0)
        fail_msg("mkstemp %s: %s", path, strerror(errno));
    return fd;
}

void t_run(const char *const *argv, struct t_run *r)
{
    t_run_env(argv, environ, r);
}

void t_run_env(const char *const *argv, char *const *envp, struct t_run *r)
{
    char out[] = "/tmp/gs_test_out.XXXXXX", err[] = "/tmp/gs_test_err.XXXXXX";
    int fo = temp_file(out), fe = temp_file(err);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fo, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, fe, STDERR_FILENO);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    close(fo);
    close(fe);
    if (rc != 0)
        fail_msg("cannot start %s: %s", argv[0], strerror(rc));
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            fail_msg("waitpid: %s", strerror(errno));
    memset(r, 0, sizeof(*r));
    r->exited = WIFEXITED(st);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r->signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    r->out = t_slurp(out, &r->out_len);
    r->err = t_slurp(err, &r->err_len);
    unlink(out);
    unlink(err);
    if (!r->out || !r->err)
        fail_msg("cannot read what %s wrote", argv[0]);
}

void t_run_free(struct t_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int t_tmpdir(char *dir, size_t size, const char *prefix)
{
    snprintf(dir, size, "/tmp/%s.XXXXXX", prefix);
    return mkdtemp(dir) ? 0 : -1;
}

int t_rmtree(const char *dir)
{
    char cmd[512];
    if (strchr(dir, '\'') || snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir) >= (int)sizeof(cmd))
        return -1;
    return system(cmd) == 0 ? 0 : -1;
}

const char *t_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0)
        fail_msg("%s: cannot write: %s", path, strerror(errno));
    return path;
}

pid_t t_odd_server(int n, int status, const char *body, char *server)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    snprintf(server, 64, "http://127.0.0.1:%d", ntohs(sa.sin_port));
    pid_t pid = fork();
    if (pid != 0) {
        close(fd);
        return pid;
    }
    for (int i = 0; i < n; i++) {
        char req[4096], head[160];
        int c = accept(fd, NULL, NULL);
        size_t got = 0;
        ssize_t k;
        while (c >= 0 && got < sizeof(req) - 1 &&
               (k = read(c, req + got, sizeof(req) - 1 - got)) > 0) {
            req[got += (size_t)k] = '\0';
            if (strstr(req, "\r\n\r\n"))
                break;
        }
        int h = snprintf(head, sizeof(head),
                         "HTTP/1.1 %d Odd\r\nContent-Type: application/json\r\n"
                         "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                         status, strlen(body));
        if (c >= 0 && write(c, head, (size_t)h) == h && write(c, body, strlen(body)) < 0)
            i = n;
        if (c >= 0)
            close(c);
    }
    _exit(0);
}
