/*
 * Helpers every cmocka test may use: reading a file whole and running a command. They fail the
 * running test (cmocka's fail_msg) on what a test cannot go on from: out of memory, a command
 * that cannot start.
 */
#ifndef GS_TEST_UTIL_H
#define GS_TEST_UTIL_H

#include <stddef.h>
#include <sys/types.h>

/*
 * t_slurp() - the whole of file @path, NUL-terminated (malloc'd: the caller frees), its length
 * in *@len when @len is not NULL. Return: NULL when the file cannot be opened or read.
 */
char *t_slurp(const char *path, size_t *len);

/* What a command did: its exit status (-1 when it did not exit), the signal that ended it (0
 * when none), and all it wrote to standard output and standard error, NUL-terminated. */
struct t_run {
    int exited, status, signal;
    char *out, *err;
    size_t out_len, err_len;
};

/*
 * t_run() - run @argv[0] (a path) with @argv (NULL-terminated), standard input /dev/null, wait
 * for it and fill @r (free with t_run_free()). Stdout and stderr go through temporary files.
 */
void t_run(const char *const *argv, struct t_run *r);
/* t_run_env() - t_run() with the environment @envp (NULL-terminated NAME=VALUE strings). */
void t_run_env(const char *const *argv, char *const *envp, struct t_run *r);
void t_run_free(struct t_run *r);

/* t_tmpdir() - make a fresh directory /tmp/@prefix.XXXXXX, its path into @dir (@size bytes).
 * Return: 0; -1 (errno set). t_rmtree() - remove @dir and everything under it: 0 or -1. */
int t_tmpdir(char *dir, size_t size, const char *prefix);
int t_rmtree(const char *dir);

/* t_write() - write @text to @path (the running test fails when it cannot). Return: @path. */
const char *t_write(const char *path, const char *text);

/* t_odd_server() - a server on 127.0.0.1, in a child, that answers each of @n requests (read up
 * to the end of their headers) with HTTP @status and @body, then exits: a peer answering as
 * nothing real would. Its URL into @server (64 bytes). Return: the child's pid (kill, waitpid). */
pid_t t_odd_server(int n, int status, const char *body, char *server);

#endif
