/*
 * libgpushare — the shared-memory region in which all processes of a container count their GPU
 * memory, per device.
 *
 * Invariants: the region is one file per pod (the node agent's, mounted into that pod's containers
 * only) or, without the agent, one POSIX shared-memory object (shm_open) per user, mapped by every
 * process that uses the GPU. It holds a table of devices (by UUID) and a table of process
 * slots; each slot holds what its process has reserved on each device. A device's usage is the sum
 * of the slots, so nothing but the slots needs repair. A process holds its slot's lock, an open
 * file description lock (fcntl F_OFD_SETLK) on the object, through a descriptor closed at exec;
 * the kernel drops it when the process dies or execs, in whatever pid namespace it ran, and a
 * slot whose lock nobody holds is reaped — zeroed — by whoever finds it: its memory returns to
 * the container. A slot is taken and locked under the region's robust process-shared mutex, which
 * reservations take too so that check-and-add is atomic across processes; a process that dies
 * holding it hands a consistent state to the next (every update is a single atomic store).
 * Releases and reads take no lock. Needs Linux 3.15 or later (open file description locks).
 */
#ifndef GPUSHARE_REGION_H
#define GPUSHARE_REGION_H

#include <stdint.h>

#define GS_REGION_DEVICES 16
#define GS_REGION_PROCS   1024

struct gs_region;

/*
 * gs_region_open() - open and map the region @name, setting it up if no process has (or one died
 * doing it; an empty file or object is one no process has set up).
 * @name: "/name", a shared-memory object as shm_open(3) takes it, created (mode 0600) when absent
 *        and used only while it is this user's alone; or "/dir/.../file", an existing regular
 *        file (not a symbolic link), which whoever may open it read-write shares: the node agent
 *        makes it, and mounts it into one pod's containers only.
 * @err: 256 bytes; the reason on failure.
 * Return: 0 and *@out set to a handle the caller owns (gs_region_close() frees it), or a negative
 * errno: -EPERM when the object belongs to another user or
 * others may open it (group or other permission bits), -EINVAL when the file is not a regular
 * file, -EPROTO when it has another layout, -ENOMEM, or what opening or mapping it failed with.
 */
int gs_region_open(const char *name, struct gs_region **out, char *err);

/* gs_region_close() - unmap and free @r, giving up its slot (reaped by the next process that
 * needs room); the object stays for the container's other processes. NULL is accepted. */
void gs_region_close(struct gs_region *r);

/* gs_region_forget() - in a forked child: drop the slot the parent holds through @r (the child's
 * copy of its descriptor is closed; the parent's lock stays). The child's first
 * gs_region_attach() opens the object again by name and takes a slot of its own. */
void gs_region_forget(struct gs_region *r);

/*
 * gs_region_device() - the index of the device @uuid, adding it on first sight.
 * Return: 0 .. GS_REGION_DEVICES - 1, or -ENOSPC when the table is full, -EIO when the lock is
 * unrecoverable.
 */
int gs_region_device(struct gs_region *r, const unsigned char uuid[16]);

/*
 * gs_region_attach() - the slot @r holds, taking a free one first (reaping dead processes' slots
 * when none is free). A slot is held until @r is closed, its process dies or execs.
 * Return: the slot index, or -ENOSPC when GS_REGION_PROCS live processes hold slots, -EIO, -ESTALE
 * when in a forked child the name no longer leads to the object mapped, or what opening it again
 * or locking failed with.
 */
int gs_region_attach(struct gs_region *r);

/*
 * gs_region_reserve() - add @bytes to @slot's usage of device @dev if the device's total stays
 * within @limit; when it would not, reap dead processes and check again.
 * Return: 0, -ENOMEM (over the limit; nothing changed), -EIO.
 */
int gs_region_reserve(struct gs_region *r, int slot, int dev, uint64_t bytes, uint64_t limit);

/* gs_region_release() - take @bytes back from @slot's usage of @dev (saturating at 0). */
void gs_region_release(struct gs_region *r, int slot, int dev, uint64_t bytes);

/* gs_region_used() - the sum of all slots' usage of @dev, in bytes (no reaping). */
uint64_t gs_region_used(const struct gs_region *r, int dev);

/* gs_region_slot_used() - @slot's usage of @dev, in bytes. */
uint64_t gs_region_slot_used(const struct gs_region *r, int slot, int dev);

/* gs_region_reap() - zero the slots no live process holds (dead, or exec'd). Return: how many were
 * reaped, or -EIO. */
int gs_region_reap(struct gs_region *r);

/*
 * gs_region_set_util() / gs_region_util() - a process's measured SM utilisation of a device, in
 * percent, stamped @now_us (CLOCK_MONOTONIC microseconds); gs_region_util() sums the live slots'
 * values stamped within @max_age_us of @now_us: the container's utilisation.
 */
void gs_region_set_util(struct gs_region *r, int slot, int dev, unsigned pct, uint64_t now_us);
unsigned gs_region_util(const struct gs_region *r, int dev, uint64_t now_us, uint64_t max_age_us);

#endif
