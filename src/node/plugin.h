/*
 * The kubelet device plugin (API v1beta1, kubelet's deviceplugin api.proto): one gRPC socket per
 * resource the node offers (gs_plan_resources()) in the device plugin folder
 * (/var/lib/kubelet/device-plugins), each registered with kubelet's Registration service at
 * <dir>/kubelet.sock, each serving GetDevicePluginOptions, ListAndWatch, GetPreferredAllocation,
 * Allocate and PreStartContainer from the agent's plan (plan.h).
 *
 * Which pod kubelet is admitting: before each GetPreferredAllocation and Allocate the plugin asks
 * kubelet's pod resources API (List, on @podres) for the pods kubelet has and hands them to the
 * plan (gs_plan_kubelet()); without that socket the plan's own rules decide alone.
 *
 * Thread safety: the plugin serves on its own thread; it reads and changes the plan under @lock,
 * which the agent holds whenever it changes the plan too. gs_plugin_changed() makes every
 * ListAndWatch stream send the device list again (a card's health changed, pods came or went).
 */
#ifndef GS_NODE_PLUGIN_H
#define GS_NODE_PLUGIN_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

struct gs_diag;
struct gs_plan;
struct gs_plugin;

#define GS_PLUGIN_API     "v1beta1"
#define GS_PLUGIN_KUBELET "kubelet.sock"

/*
 * gs_plugin_start() - listen on a socket per resource of @plan in @dir, start serving, and
 * register each with kubelet (@dir/kubelet.sock), waiting up to @timeout_ms for kubelet.
 * @unhealthy: cards (bit g) to advertise Unhealthy, read under @lock at each ListAndWatch answer.
 * @state: where gs_plan_save() keeps the plan after each Allocate ("" = nowhere).
 * @podres: kubelet's pod resources socket (/var/lib/kubelet/pod-resources/kubelet.sock), or NULL.
 * Return: 0 and *@out; -errno with @d (nothing left running).
 */
int gs_plugin_start(struct gs_plan *plan, pthread_mutex_t *lock, const uint32_t *unhealthy,
                    const char *dir, const char *state, const char *podres, int timeout_ms,
                    FILE *log, struct gs_plugin **out, struct gs_diag *d);

/* gs_plugin_changed() - every ListAndWatch stream sends its devices again. Any thread. */
void gs_plugin_changed(struct gs_plugin *p);

/*
 * gs_plugin_stale() - whether the plugin must start again: kubelet restarted (its socket is
 * another file now, or gone, or one of ours was removed) or @plan offers other resources now.
 * Call under @lock.
 */
int gs_plugin_stale(const struct gs_plugin *p);

/* gs_plugin_stop() - stop serving, remove the sockets; NULL allowed. */
void gs_plugin_stop(struct gs_plugin *p);

#endif
