/*
 * Volcano queues: capability, deserved share and what each queue's running pods hold.
 */
#ifndef GSD_QUEUE_H
#define GSD_QUEUE_H

#include <stddef.h>
#include <stdint.h>

struct gsd_config;
struct gsd_pod;
struct gsd_req;
struct gsd_state;

/* What the running pods of one Volcano queue hold. */
struct gsd_queue_use {
    int64_t gpu_milli, cpu_milli, memory_mib;
};

/*
 * With Queue documents (scheduling.volcano.sh/v1beta1) among the policy files, a pod belongs to
 * the queue its PodGroup's spec.queue names, else the one its annotation
 * scheduling.volcano.sh/queue-name names, else the queue named after its tenant when there is
 * one, else `default` — Volcano's default queue, implicit (weight 1, no capability) unless a Queue
 * document defines it: the simulator's rule. Each queue's capability caps
 * what its running pods hold (nvidia.com/gpu with overcommitRatio for shares, cpu, memory); its
 * deserved share is the cluster's GPU capacity water-filled by weight, capped at its demand and
 * capability. Without Queue documents each tenant is one queue weighted by its DaemonConfig
 * `weight` (accounts.c), and queue names in pods are only shown.
 */

/* gsd_queues_volcano() - whether the configuration has Queue documents. */
int gsd_queues_volcano(const struct gsd_config *c);
/* gsd_pod_queue() - the name of @p's queue (the tenant's name without Queue documents). */
const char *gsd_pod_queue(const struct gsd_state *st, const struct gsd_pod *p);
/*
 * gsd_queue_find() - the index of queue @name among the Queue documents; their count for the
 * implicit `default`; -1 when no such queue exists.
 */
int gsd_queue_find(const struct gsd_config *c, const char *name);
/*
 * gsd_queue_check() - may @p start as far as its queue goes? Return: 0; GS_UNSCHEDULABLE with
 * @why (the queue does not exist, or the capability it would pass, with use, cap and ask).
 */
int gsd_queue_check(const struct gsd_state *st, const struct gsd_pod *p, char *why, size_t size);
/*
 * gsd_queue_known() - whether queue @name ("" = none named) may be named: always without Queue
 * documents; otherwise answers @r 400 on @field when no such queue exists, as Volcano's
 * admission refuses a job or PodGroup of an unknown queue. Return: 1 known, 0 answered.
 */
int gsd_queue_known(const struct gsd_state *st, const char *name, const char *field,
                    struct gsd_req *r);
/*
 * gsd_queue_limit() - the most queue @i (gsd_queue_find()) may deserve when its pods ask @demand
 * milli-GPU (allocated plus pending): @demand, capped at the queue's nvidia.com/gpu capability
 * when its Queue document sets one. @i < 0 (a tenant's own queue, without Queue documents) and
 * the implicit default are capped at @demand only. Any thread (reads @c only). O(1).
 */
int64_t gsd_queue_limit(const struct gsd_config *c, int i, int64_t demand);
/* gsd_queue_charge() - count running pod @p in (@sign 1) or out of (-1) its queue's use. */
void gsd_queue_charge(struct gsd_state *st, struct gsd_pod *p, int sign);
/*
 * gsd_queues_list() - GET /v1/queues (or /v1/queues/@name: 404 when unknown) with Queue
 * documents: weight, capability, reclaimable, deserved, allocated and pending GPU share, pods.
 */
void gsd_queues_list(struct gsd_state *st, struct gsd_req *r, const char *name);

#endif
