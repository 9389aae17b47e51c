/*
 * libgpushare — the pod's shared usage region (region.h says what it guarantees).
 */
#define _GNU_SOURCE /* F_OFD_SETLK */
#include "region.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REGION_MAGIC   0x68737067u /* "gpsh" */
#define REGION_VERSION 2u

enum { ST_READY = 2 }; /* any other state: not set up (yet) */

struct region_dev {
    _Atomic uint32_t used;
    unsigned char uuid[16];
};

struct region_proc {
    _Atomic uint32_t held; /* 0: free; else taken, and its process alive while its lock is held */
    _Atomic uint64_t bytes[GS_REGION_DEVICES];
    _Atomic uint32_t util[GS_REGION_DEVICES];
    _Atomic uint64_t util_us[GS_REGION_DEVICES];
};

/* The shared object's layout. */
struct region_map {
    _Atomic uint32_t state;
    uint32_t magic;
    uint32_t version;
    uint32_t size;
    _Atomic uint32_t hi; /* slots at and above this index have never been used */
    pthread_mutex_t lock;
    struct region_dev dev[GS_REGION_DEVICES];
    struct region_proc proc[GS_REGION_PROCS];
};

/* This process's view: the mapping, and the descriptor its slot's lock lives on. */
struct gs_region {
    struct region_map *m;
    int fd;   /* -1 in a forked child until it takes a slot */
    int slot; /* the slot this descriptor holds, -1 none */
    dev_t dev;
    ino_t ino;
    char *name;
};

/* A slot's lock: one byte of the object at the slot's offset (locks need no data there). */
static int slot_lock(int fd, int i, int cmd, short type)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_len = 1};
    fl.l_start =
        (off_t)(offsetof(struct region_map, proc) + (size_t)i * sizeof(struct region_proc));
    if (fcntl(fd, cmd, &fl) < 0)
        return -errno;
    return cmd == F_OFD_GETLK && fl.l_type != F_UNLCK;
}

/* Whether slot @i's process is gone: no open file description holds its lock any more (the
 * kernel drops it when the process dies or execs, whatever pid namespace it ran in). The
 * caller's own slot reads as unlocked to it, and is not gone. */
static int proc_dead(const struct gs_region *r, int i)
{
    return i != r->slot && slot_lock(r->fd, i, F_OFD_GETLK, F_WRLCK) == 0;
}

static void slot_clear(struct region_proc *p)
{
    for (int d = 0; d < GS_REGION_DEVICES; d++) {
        atomic_store(&p->bytes[d], 0);
        atomic_store(&p->util[d], 0);
        atomic_store(&p->util_us[d], 0);
    }
}

static int lock(struct region_map *m)
{
    int rc = pthread_mutex_lock(&m->lock);
    if (rc == EOWNERDEAD) /* every field is written by one atomic store: nothing to undo */
        rc = pthread_mutex_consistent(&m->lock);
    return rc == 0 ? 0 : -EIO;
}

static void unlock(struct region_map *m)
{
    pthread_mutex_unlock(&m->lock);
}

/* The slots in use: the region's high mark, which any process of the container can write,
 * bounded by the table (past it a read would leave the mapping). */
static int slots_hi(const struct region_map *m)
{
    uint32_t hi = atomic_load(&m->hi);
    return hi < GS_REGION_PROCS ? (int)hi : GS_REGION_PROCS;
}

static int reap_locked(struct gs_region *r)
{
    int n = 0, hi = slots_hi(r->m);
    for (int i = 0; i < hi; i++) {
        struct region_proc *p = &r->m->proc[i];
        if (atomic_load(&p->held) && proc_dead(r, i)) {
            slot_clear(p);
            atomic_store(&p->held, 0);
            n++;
        }
    }
    return n;
}

static int init_map(struct region_map *m)
{
    pthread_mutexattr_t a;
    if (pthread_mutexattr_init(&a) != 0)
        return -EIO;
    int rc = pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    if (rc == 0)
        rc = pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    if (rc == 0)
        rc = pthread_mutex_init(&m->lock, &a);
    pthread_mutexattr_destroy(&a);
    if (rc != 0)
        return -EIO;
    m->magic = REGION_MAGIC;
    m->version = REGION_VERSION;
    m->size = (uint32_t)sizeof(*m);
    atomic_store(&m->state, ST_READY);
    return 0;
}

/* A system call on the region failed: say which and why. Return: -errno. */
static int sys_fail(const char *name, const char *call, char *err)
{
    int e = errno;
    snprintf(err, 256, "region %s: %s: %s", name, call, strerror(e));
    return -e;
}

static int check_layout(const struct region_map *m, const char *name, char *err)
{
    if (m->magic != REGION_MAGIC || m->version != REGION_VERSION || m->size != sizeof(*m)) {
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
 * its holder dies: a region left half set up by a dead creator (no magic yet, or ours) is set up
 * again by the next. Anything else is not ours to overwrite: check_layout() refuses it. */
static int set_up(int fd, struct region_map *m, const char *name, char *err)
{
    int rc;
    while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
        ;
    if (rc < 0)
        return sys_fail(name, "flock", err);
    int fresh = atomic_load(&m->state) != ST_READY && (m->magic == 0 || m->magic == REGION_MAGIC);
    rc = fresh ? init_map(m) : 0;
    flock(fd, LOCK_UN);
    if (rc < 0)
        snprintf(err, 256, "region %s: cannot make a process-shared robust mutex", name);
    return rc < 0 ? rc : check_layout(m, name, err);
}

static int map_fd(struct gs_region *r, int file, char *err)
{
    struct stat st;
    if (fstat(r->fd, &st) < 0)
        return sys_fail(r->name, "fstat", err);
    if (file && !S_ISREG(st.st_mode)) {
        snprintf(err, 256, "region %s is not a regular file", r->name);
        return -EINVAL;
    }
    int rc = file ? 0 : check_owner(&st, r->name, err);
    if (rc < 0)
        return rc;
    if (st.st_size == 0 && ftruncate(r->fd, (off_t)sizeof(*r->m)) < 0)
        return sys_fail(r->name, "ftruncate", err);
    if (st.st_size != 0 && st.st_size != (off_t)sizeof(*r->m)) {
        snprintf(err, 256, "region %s was made by another version of libgpushare", r->name);
        return -EPROTO;
    }
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    void *m = mmap(NULL, sizeof(*r->m), PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (m == MAP_FAILED)
        return sys_fail(r->name, "mmap", err);
    rc = set_up(r->fd, m, r->name, err);
    if (rc < 0)
        munmap(m, sizeof(*r->m));
    else
        r->m = m;
    return rc;
}

/* Open the object @r->name; the descriptor is closed at exec, so that an exec'd image's lock
 * goes with it. Return: the descriptor, or -1 with errno set. */
static int open_name(const struct gs_region *r, int create)
{
    if (strchr(r->name + 1, '/'))
        return open(r->name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    return shm_open(r->name, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
}

int gs_region_open(const char *name, struct gs_region **out, char *err)
{
    struct gs_region *r = calloc(1, sizeof(*r));
    if (r)
        r->name = strdup(name);
    if (!r || !r->name) {
        free(r);
        snprintf(err, 256, "region %s: out of memory", name);
        return -ENOMEM;
    }
    r->slot = -1;
    int file = strchr(name + 1, '/') != NULL;
    r->fd = open_name(r, 1);
    int rc = r->fd < 0 ? sys_fail(name, file ? "open" : "shm_open", err) : map_fd(r, file, err);
    if (rc < 0) {
        if (r->fd >= 0)
            close(r->fd);
        free(r->name);
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

void gs_region_close(struct gs_region *r)
{
    if (!r)
        return;
    munmap(r->m, sizeof(*r->m));
    if (r->fd >= 0)
        close(r->fd);
    free(r->name);
    free(r);
}

void gs_region_forget(struct gs_region *r)
{
    if (r->fd >= 0)
        close(r->fd);
    r->fd = -1;
    r->slot = -1;
}

/* A forked child's own descriptor of the object: opened by name again, and refused unless the
 * name still leads to the object mapped. Return: 0 or a negative errno. */
static int own_fd(struct gs_region *r)
{
    if (r->fd >= 0)
        return 0;
    int fd = open_name(r, 0);
    struct stat st;
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0 || st.st_dev != r->dev || st.st_ino != r->ino) {
        close(fd);
        return -ESTALE;
    }
    r->fd = fd;
    return 0;
}

int gs_region_device(struct gs_region *r, const unsigned char uuid[16])
{
    struct region_map *m = r->m;
    for (int d = 0; d < GS_REGION_DEVICES; d++)
        if (atomic_load(&m->dev[d].used) && memcmp(m->dev[d].uuid, uuid, 16) == 0)
            return d;
    if (lock(m) < 0)
        return -EIO;
    int found = -ENOSPC;
    for (int d = 0; d < GS_REGION_DEVICES && found < 0; d++) {
        if (!atomic_load(&m->dev[d].used)) {
            memcpy(m->dev[d].uuid, uuid, 16);
            atomic_store(&m->dev[d].used, 1);
            found = d;
        } else if (memcmp(m->dev[d].uuid, uuid, 16) == 0) {
            found = d;
        }
    }
    unlock(m);
    return found;
}

/* Take a free slot and its lock, both under the region's mutex: a reaper never sees a slot
 * taken whose lock is not held yet. Return: the slot, -ENOSPC, or fcntl's -errno. */
static int claim_locked(struct gs_region *r)
{
    for (int i = 0; i < GS_REGION_PROCS; i++) {
        struct region_proc *p = &r->m->proc[i];
        if (atomic_load(&p->held))
            continue;
        int rc = slot_lock(r->fd, i, F_OFD_SETLK, F_WRLCK);
        if (rc == -EAGAIN || rc == -EACCES)
            continue; /* freed by hand while its owner lives: not ours to take */
        if (rc < 0)
            return rc;
        slot_clear(p);
        atomic_store(&p->held, 1);
        if ((uint32_t)i >= atomic_load(&r->m->hi))
            atomic_store(&r->m->hi, (uint32_t)i + 1);
        return r->slot = i;
    }
    return -ENOSPC;
}

int gs_region_attach(struct gs_region *r)
{
    if (r->slot >= 0)
        return r->slot;
    int i = own_fd(r);
    if (i < 0)
        return i;
    if (lock(r->m) < 0)
        return -EIO;
    i = claim_locked(r);
    if (i == -ENOSPC && reap_locked(r) > 0)
        i = claim_locked(r);
    unlock(r->m);
    return i;
}

uint64_t gs_region_used(const struct gs_region *r, int dev)
{
    uint64_t sum = 0;
    int hi = slots_hi(r->m);
    for (int i = 0; i < hi; i++)
        if (atomic_load(&r->m->proc[i].held) != 0)
            sum += atomic_load(&r->m->proc[i].bytes[dev]);
    return sum;
}

uint64_t gs_region_slot_used(const struct gs_region *r, int slot, int dev)
{
    return atomic_load(&r->m->proc[slot].bytes[dev]);
}

int gs_region_reserve(struct gs_region *r, int slot, int dev, uint64_t bytes, uint64_t limit)
{
    if (lock(r->m) < 0)
        return -EIO;
    uint64_t used = gs_region_used(r, dev);
    if ((bytes > limit || used > limit - bytes) && reap_locked(r) > 0)
        used = gs_region_used(r, dev);
    int rc = -ENOMEM;
    if (bytes <= limit && used <= limit - bytes) {
        atomic_fetch_add(&r->m->proc[slot].bytes[dev], bytes);
        rc = 0;
    }
    unlock(r->m);
    return rc;
}

void gs_region_release(struct gs_region *r, int slot, int dev, uint64_t bytes)
{
    _Atomic uint64_t *b = &r->m->proc[slot].bytes[dev];
    uint64_t cur = atomic_load(b);
    while (!atomic_compare_exchange_weak(b, &cur, cur > bytes ? cur - bytes : 0))
        ;
}

int gs_region_reap(struct gs_region *r)
{
    if (own_fd(r) < 0)
        return 0; /* a forked child that cannot judge: the next process will */
    if (lock(r->m) < 0)
        return -EIO;
    int n = reap_locked(r);
    unlock(r->m);
    return n;
}

void gs_region_set_util(struct gs_region *r, int slot, int dev, unsigned pct, uint64_t now_us)
{
    atomic_store(&r->m->proc[slot].util[dev], pct);
    atomic_store(&r->m->proc[slot].util_us[dev], now_us);
}

unsigned gs_region_util(const struct gs_region *r, int dev, uint64_t now_us, uint64_t max_age_us)
{
    unsigned sum = 0;
    int hi = slots_hi(r->m);
    for (int i = 0; i < hi; i++) {
        const struct region_proc *p = &r->m->proc[i];
        uint64_t at = atomic_load(&p->util_us[dev]);
        if (atomic_load(&p->held) != 0 && at != 0 && at + max_age_us >= now_us)
            sum += atomic_load(&p->util[dev]);
    }
    return sum;
}
