/*
 * The fake card's shared file (fake_state.h).
 */
#define _GNU_SOURCE
#include "fake_state.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKE_MAGIC 0x66616b65u

int fake_state_create(const char *path, int ndev, const uint64_t *total, uint64_t ctx_bytes,
                      uint64_t kernel_us, uint32_t pid_offset)
{
    struct fake_state s;
    memset(&s, 0, sizeof(s));
    s.magic = FAKE_MAGIC;
    s.ndev = ndev;
    for (int i = 0; i < ndev && i < FAKE_DEVS; i++)
        s.total[i] = total[i];
    s.ctx_bytes = ctx_bytes;
    s.kernel_us = kernel_us;
    s.pid_offset = pid_offset;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, &s, sizeof(s));
    close(fd);
    return n == (ssize_t)sizeof(s) ? 0 : -EIO;
}

struct fake_state *fake_state_map(const char *path, int *fd)
{
    *fd = open(path, O_RDWR | O_CLOEXEC);
    if (*fd < 0)
        return NULL;
    void *m = mmap(NULL, sizeof(struct fake_state), PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (m == MAP_FAILED || ((struct fake_state *)m)->magic != FAKE_MAGIC) {
        close(*fd);
        return NULL;
    }
    return m;
}

void fake_lock(int fd)
{
    while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
        ;
}

void fake_unlock(int fd)
{
    flock(fd, LOCK_UN);
}

int fake_alive(int32_t pid)
{
    if (pid == (int32_t)getpid())
        return 1;
    if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH))
        return 0;
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    return !(p && (p[2] == 'Z' || p[2] == 'X'));
}

void fake_uuid(int dev, unsigned char out[16])
{
    static const unsigned char base[16] = {0x6a, 0x7e, 0, 0, 0, 0, 0x40, 0,
                                           0x80, 0,    0, 0, 0, 0, 0,    0};
    memcpy(out, base, 16);
    out[15] = (unsigned char)dev;
}

uint64_t fake_used(const struct fake_state *s, int tenant, int dev)
{
    uint64_t sum = 0;
    for (int i = 0; i < FAKE_PROCS; i++) {
        const struct fake_proc *p = &s->proc[i];
        int32_t pid = atomic_load(&p->pid);
        if (pid != 0 && (tenant < 0 || p->tenant == tenant) && fake_alive(pid))
            sum += p->used[dev];
    }
    return sum;
}

int fake_tenant(struct fake_state *s, const char *name)
{
    for (int i = 0; i < FAKE_TENANTS; i++) {
        if (s->tenant[i][0] == '\0') {
            snprintf(s->tenant[i], FAKE_NAME, "%s", name);
            return i;
        }
        if (strncmp(s->tenant[i], name, FAKE_NAME) == 0)
            return i;
    }
    return -1;
}
