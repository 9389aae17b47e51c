/*
 * libgpushare — the pod's shared usage region (region.h says what it guarantees).
 */
#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REGION_MAGIC   0x68737067u /* "gpsh" */
#define REGION_VERSION 1u

enum { ST_READY = 2 }; /* any other state: not set up (yet) */

struct region_dev {
    _Atomic uint32_t used;
    unsigned char uuid[16];
};

struct region_proc {
    _Atomic int32_t pid; /* 0: free */
    uint64_t start;
    uint64_t pidns;
    _Atomic uint64_t bytes[GS_REGION_DEVICES];
    _Atomic uint32_t util[GS_REGION_DEVICES];
    _Atomic uint64_t util_us[GS_REGION_DEVICES];
};

struct gs_region {
    _Atomic uint32_t state;
    uint32_t magic;
    uint32_t version;
    uint32_t size;
    _Atomic uint32_t hi; /* slots at and above this index have never been used */
    pthread_mutex_t lock;
    struct region_dev dev[GS_REGION_DEVICES];
    struct region_proc proc[GS_REGION_PROCS];
};

/* Fields 3 (state) and 22 (start time) of /proc/PID/stat. Return 0, or -1 when unreadable. */
static int read_stat(const char *path, char *state, uint64_t *start)
{
    char buf[1024];
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    unsigned long long st;
    if (!p || sscanf(p + 1,
                     " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                     "%*s %*s %llu",
                     state, &st) != 2)
        return -1;
    *start = st;
    return 0;
}

void gs_region_who_self(struct gs_region_who *who)
{
    char state;
    struct stat st;
    who->pid = (int32_t)getpid();
    if (read_stat("/proc/self/stat", &state, &who->start) < 0)
        who->start = 0;
    who->pidns = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static int same_ns(const struct region_proc *p, uint64_t ns)
{
    return p->pidns == ns || p->pidns == 0 || ns == 0;
}

/* Whether the process in slot @p is gone: no such pid, a zombie, or a new process on its pid. */
static int proc_dead(const struct region_proc *p, uint64_t my_ns)
{
    int32_t pid = atomic_load(&p->pid);
    if (pid <= 0 || !same_ns(p, my_ns))
        return 0;
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return 1;
    char path[64], state;
    uint64_t start;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (read_stat(path, &state, &start) < 0)
        return 0; /* no /proc: kill(2) said it exists */
    return state == 'Z' || state == 'X' || (p->start != 0 && start != p->start);
}

static void slot_clear(struct region_proc *p)
{
    for (int d = 0; d < GS_REGION_DEVICES; d++) {
        atomic_store(&p->bytes[d], 0);
        atomic_store(&p->util[d], 0);
        atomic_store(&p->util_us[d], 0);
    }
}

static int lock(struct gs_region *r)
{
    int rc = pthread_mutex_lock(&r->lock);
    if (rc == EOWNERDEAD) /* every field is written by one atomic store: nothing to undo */
        rc = pthread_mutex_consistent(&r->lock);
    return rc == 0 ? 0 : -EIO;
}

static void unlock(struct gs_region *r)
{
    pthread_mutex_unlock(&r->lock);
}

/* The slots in use: the region's high mark, which any process of the container can write,
 * bounded by the table (past it a read would leave the mapping). */
static int slots_hi(const struct gs_region *r)
{
    uint32_t hi = atomic_load(&r->hi);
    return hi < GS_REGION_PROCS ? (int)hi : GS_REGION_PROCS;
}

static int reap_locked(struct gs_region *r)
{
    struct gs_region_who me;
    gs_region_who_self(&me);
    int n = 0, hi = slots_hi(r);
    for (int i = 0; i < hi; i++) {
        struct region_proc *p = &r->proc[i];
        if (atomic_load(&p->pid) > 0 && proc_dead(p, me.pidns)) {
            slot_clear(p);
            atomic_store(&p->pid, 0);
            n++;
        }
    }
    return n;
}

static int init_map(struct gs_region *r)
{
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a) != 0)
        return -EIO;
    int rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0)
        rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (rc == 0)
        rc = pthread_mutex_init(&r->lock, &a);
    pthread_mutexattr_destroy(&a);
    if (rc != 0)
        return -EIO;
    r->magic = REGION_MAGIC;
    r->version = REGION_VERSION;
    r->size = (uint32_t)sizeof(*r);
    atomic_store(&r->state, ST_READY);
    return 0;
}

/* A system call on the region failed: say which and why. Return: -errno. */
static int sys_fail(const char *name, const char *call, char *err)
{
    int e = errno;
    snprintf(err, 256, "region %s: %s: %s", name, call, strerror(e));
    return -e;
}

static int check_layout(const struct gs_region *r, const char *name, char *err)
{
    if (r->magic != REGION_MAGIC || r->version != REGION_VERSION || r->size != sizeof(*r)) {
        snprintf(err, 256, "region %s was made by another version of libgpushare", name);
        return -EPROTO;
    }
    return 0;
}

/* The object must be this user's alone: counts another user can write are not a limit. */
static int check_owner(const struct stat *st, const char *name, char *err)
{
    if (st->st_uid == geteuid() && (st->st_mode & 077) == 0)
        return 0;
    snprintf(err, 256,
             "region %s belongs to uid %u with mode %03o; it must be this user's (uid %u) and "
             "closed to others",
             name, (unsigned)st->st_uid, (unsigned)(st->st_mode & 0777), (unsigned)geteuid());
    return -EPERM;
}

/* Set the region up unless it is ready. Under the object's flock(2), which the kernel drops if
 * its holder dies: a region left half set up by a dead creator is set up again by the next. */
static int set_up(int fd, struct gs_region *r, const char *name, char *err)
{
    int rc;
    while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
        ;
    if (rc < 0)
        return sys_fail(name, "flock", err);
    rc = atomic_load(&r->state) == ST_READY ? 0 : init_map(r);
    flock(fd, LOCK_UN);
    if (rc < 0)
        snprintf(err, 256, "region %s: cannot make a process-shared robust mutex", name);
    return rc < 0 ? rc : check_layout(r, name, err);
}

static int map_fd(int fd, const char *name, int file, struct gs_region **out, char *err)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return sys_fail(name, "fstat", err);
    if (file && !S_ISREG(st.st_mode)) {
        snprintf(err, 256, "region %s is not a regular file", name);
        return -EINVAL;
    }
    int rc = file ? 0 : check_owner(&st, name, err);
    if (rc < 0)
        return rc;
    if (st.st_size == 0 && ftruncate(fd, (off_t)sizeof(struct gs_region)) < 0)
        return sys_fail(name, "ftruncate", err);
    if (st.st_size != 0 && st.st_size != (off_t)sizeof(struct gs_region)) {
        snprintf(err, 256, "region %s was made by another version of libgpushare", name);
        return -EPROTO;
    }
    void *m = mmap(NULL, sizeof(struct gs_region), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return sys_fail(name, "mmap", err);
    rc = set_up(fd, m, name, err);
    if (rc < 0) {
        munmap(m, sizeof(struct gs_region));
        return rc;
    }
    *out = m;
    return 0;
}

int gs_region_open(const char *name, struct gs_region **out, char *err)
{
    int file = strchr(name + 1, '/') != NULL;
    int fd = file ? open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
                  : shm_open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return sys_fail(name, file ? "open" : "shm_open", err);
    int rc = map_fd(fd, name, file, out, err);
    close(fd);
    return rc;
}

void gs_region_close(struct gs_region *r)
{
    if (r)
        munmap(r, sizeof(*r));
}

int gs_region_device(struct gs_region *r, const unsigned char uuid[16])
{
    for (int d = 0; d < GS_REGION_DEVICES; d++)
        if (atomic_load(&r->dev[d].used) && memcmp(r->dev[d].uuid, uuid, 16) == 0)
            return d;
    if (lock(r) < 0)
        return -EIO;
    int found = -ENOSPC;
    for (int d = 0; d < GS_REGION_DEVICES && found < 0; d++) {
        if (!atomic_load(&r->dev[d].used)) {
            memcpy(r->dev[d].uuid, uuid, 16);
            atomic_store(&r->dev[d].used, 1);
            found = d;
        } else if (memcmp(r->dev[d].uuid, uuid, 16) == 0) {
            found = d;
        }
    }
    unlock(r);
    return found;
}

static int find_free_locked(struct gs_region *r, const struct gs_region_who *who)
{
    int free_slot = -1;
    for (int i = 0; i < GS_REGION_PROCS; i++) {
        struct region_proc *p = &r->proc[i];
        int32_t pid = atomic_load(&p->pid);
        /* Our pid and start time but not our slot: left by this process before it exec'd. */
        if (pid == who->pid && p->start == who->start && p->pidns == who->pidns)
            return i;
        if (pid == 0 && free_slot < 0)
            free_slot = i;
    }
    return free_slot;
}

int gs_region_attach(struct gs_region *r, const struct gs_region_who *who)
{
    if (lock(r) < 0)
        return -EIO;
    int i = find_free_locked(r, who);
    if (i < 0 && reap_locked(r) > 0)
        i = find_free_locked(r, who);
    if (i >= 0) {
        struct region_proc *p = &r->proc[i];
        slot_clear(p);
        p->start = who->start;
        p->pidns = who->pidns;
        atomic_store(&p->pid, who->pid);
        if ((uint32_t)i >= atomic_load(&r->hi))
            atomic_store(&r->hi, (uint32_t)i + 1);
    }
    unlock(r);
    return i >= 0 ? i : -ENOSPC;
}

uint64_t gs_region_used(const struct gs_region *r, int dev)
{
    uint64_t sum = 0;
    int hi = slots_hi(r);
    for (int i = 0; i < hi; i++)
        if (atomic_load(&r->proc[i].pid) != 0)
            sum += atomic_load(&r->proc[i].bytes[dev]);
    return sum;
}

uint64_t gs_region_slot_used(const struct gs_region *r, int slot, int dev)
{
    return atomic_load(&r->proc[slot].bytes[dev]);
}

int gs_region_reserve(struct gs_region *r, int slot, int dev, uint64_t bytes, uint64_t limit)
{
    if (lock(r) < 0)
        return -EIO;
    uint64_t used = gs_region_used(r, dev);
    if ((bytes > limit || used > limit - bytes) && reap_locked(r) > 0)
        used = gs_region_used(r, dev);
    int rc = -ENOMEM;
    if (bytes <= limit && used <= limit - bytes) {
        atomic_fetch_add(&r->proc[slot].bytes[dev], bytes);
        rc = 0;
    }
    unlock(r);
    return rc;
}

void gs_region_release(struct gs_region *r, int slot, int dev, uint64_t bytes)
{
    _Atomic uint64_t *b = &r->proc[slot].bytes[dev];
    uint64_t cur = atomic_load(b);
    while (!atomic_compare_exchange_weak(b, &cur, cur > bytes ? cur - bytes : 0))
        ;
}

int gs_region_reap(struct gs_region *r)
{
    if (lock(r) < 0)
        return -EIO;
    int n = reap_locked(r);
    unlock(r);
    return n;
}

void gs_region_set_util(struct gs_region *r, int slot, int dev, unsigned pct, uint64_t now_us)
{
    atomic_store(&r->proc[slot].util[dev], pct);
    atomic_store(&r->proc[slot].util_us[dev], now_us);
}

unsigned gs_region_util(const struct gs_region *r, int dev, uint64_t now_us, uint64_t max_age_us)
{
    unsigned sum = 0;
    int hi = slots_hi(r);
    for (int i = 0; i < hi; i++) {
        const struct region_proc *p = &r->proc[i];
        uint64_t at = atomic_load(&p->util_us[dev]);
        if (atomic_load(&p->pid) != 0 && at != 0 && at + max_age_us >= now_us)
            sum += atomic_load(&p->util[dev]);
    }
    return sum;
}
