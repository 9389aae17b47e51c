/*
 * gpusched — NVIDIA Multi-Instance GPU (MIG): the real geometry of each MIG-capable model, and a
 * per-card allocator of GPU instances that follows the hardware's placement rules.
 *
 * Terms, as in NVIDIA's MIG User Guide ("Concepts" > "Terminology"): a card is cut into memory
 * slices (8; the A30 has 4) and compute (SM) slices (7; the A30 has 4). A GPU instance of a
 * profile ("3g.40gb": 3 compute slices, about 40 GB) occupies `memory_slices` consecutive memory
 * slices starting at one of the profile's valid start slots. Those starts and sizes are exactly
 * what `nvidia-smi mig -lgipp` prints ("Profile ID 9 Placements: {0,4}:4"); the other profile
 * figures are what `nvidia-smi mig -lgip` prints. Where every figure comes from, per model and
 * profile, is in data/mig/README.md (the same table, shipped as data/mig/mig_profiles.csv).
 *
 * Rules a card obeys, all of them the hardware's:
 * - an instance starts only at one of its profile's -lgipp starts (so 7g/4g start at 0 and 3g at
 *   0 or 4 on an 8-slice card);
 * - live instances never share a memory slice (an occupied slice blocks every placement that
 *   overlaps it, which is how a card with 5 free slices can still refuse a 3g.40gb);
 * - at most `max_instances` live instances of a profile (the -lgip "Instances Total");
 * - the card has one optical-flow accelerator (OFA, with the single JPEG unit on A100/A30): the
 *   full-card profile and the "+me" (media extension) profiles hold it, so at most one of them
 *   lives on a card at a time (MIG User Guide, "Supported MIG Profiles": "A single 1g profile can
 *   include media extensions").
 * The memory-slice rule implies the compute limit: no set of non-overlapping placements uses more
 * than the card's compute slices (tests/unit/test_mig.c checks this on every model).
 *
 * Never repartition: instances are created only in free slices and destroyed one by one; nothing
 * here moves or resets a live instance. Turning MIG mode off is refused while an instance lives.
 *
 * Invariants: the model table is constant and compiled in; model and profile indexes are stable
 * within one build (profile i of a model is row i of that model in the CSV). A struct gs_mig_card
 * is a caller-owned value changed only through gs_mig_card_*(): its instances are sorted by start
 * slot, never overlap, and `used` is the union of their slices. Every function is deterministic
 * and allocation-free. Thread safety: the table is read-only (any thread); a card has one owner.
 */
#ifndef GPUSCHED_MIG_H
#define GPUSCHED_MIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gs_diag;

#define GS_MIG_SLOTS_MAX       8 /* memory slices of the largest geometry */
#define GS_MIG_PROFILES_MAX    8 /* GPU instance profiles of one model */
#define GS_MIG_INSTANCES_MAX   7 /* live instances on one card (one per compute slice at most) */
#define GS_MIG_ALLOW_ALL       0xffu
#define GS_MIG_LIST_MAX        128 /* gs_mig_card_list() output, NUL included, always enough */
#define GS_MIG_RESOURCE_MAX    48  /* "nvidia.com/mig-1g.10gb.me", NUL included, always enough */
#define GS_MIG_RESOURCE_PREFIX "nvidia.com/mig-"

/* One GPU instance profile of one model: one row of `nvidia-smi mig -lgip` and of -lgipp. */
struct gs_mig_profile {
    const char *name;       /* NVIDIA's spelling without "MIG ": "1g.10gb", "1g.10gb+me" */
    uint8_t id;             /* GPU instance profile ID (-lgip "ID"); numbering is per model */
    uint8_t compute_slices; /* the "Ng" of the name */
    uint8_t memory_slices;  /* placement size (-lgipp ":size") */
    uint8_t starts;         /* bit s set: an instance may start at memory slice s (-lgipp {..}) */
    uint8_t max_instances;  /* -lgip "Instances Total" on an empty card */
    uint8_t ofa;            /* 1 when it holds the card's OFA (-lgip "OFA"): "+me" and full card */
    uint16_t sm_count;      /* streaming multiprocessors (-lgip "SM") */
    uint32_t memory_mib;    /* framebuffer, MiB: the -lgip "GiB" figure x 1024 (README) */
};

/* A MIG-capable model: its slices and its profiles, in the order -lgip lists them. */
struct gs_mig_model {
    const char *name;       /* the catalog name (gpusched/catalog.h), e.g. "A100-SXM4-80GB" */
    uint8_t memory_slices;  /* 8, or 4 on the A30 */
    uint8_t compute_slices; /* 7, or 4 on the A30 */
    uint8_t nprofiles;
    struct gs_mig_profile profiles[GS_MIG_PROFILES_MAX];
    const char *source; /* one line: where the figures come from (details in data/mig/README.md) */
};

/* gs_mig_model_count() - number of MIG-capable models in the table. */
int gs_mig_model_count(void);

/*
 * gs_mig_model_at() - the model at index @idx.
 * Return: the entry (owned by the library, never freed), or NULL when @idx is out of range.
 */
const struct gs_mig_model *gs_mig_model_at(int idx);

/*
 * gs_mig_model_find() - the MIG model of a GPU named as the catalog names it.
 * @name: NUL-terminated; any catalog name or alias, ASCII case ignored ("A100-80GB", "H200-141GB").
 * Return: the model index (>= 0); -ENOENT when no catalog model has that name (or @name is NULL);
 * -EOPNOTSUPP when the catalog knows the model but it has no MIG (T4, V100, L40S ...).
 * Complexity: O(catalog + models).
 */
int gs_mig_model_find(const char *name);

/*
 * gs_mig_profile_find() - a profile of model @model by NVIDIA's name ("2g.20gb", "1g.10gb+me").
 * @len: bytes of @name to compare, or -1 for the whole string. The match is exact (case too).
 * Return: the profile index within the model (>= 0); -ENOENT when the model has no such profile;
 * -EINVAL when @model is out of range or @name is NULL.
 */
int gs_mig_profile_find(int model, const char *name, int len);

/*
 * gs_mig_profile_names() - the model's profile names, ", "-separated, for messages:
 * "1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb".
 * @buf, @size: output, cut to fit (NUL-terminated when @size > 0); 128 bytes always suffice.
 * Return: the length written (0 when @size is 0); -EINVAL when @model is out of range.
 */
int gs_mig_profile_names(int model, char *buf, size_t size);

/*
 * gs_mig_profile_placements() - the placements of profile @profile of model @model as
 * `nvidia-smi mig -lgipp` prints them: "{0,2,4}:2".
 * @buf, @size: output; 24 bytes always suffice.
 * Return: the length written (without the NUL); -EINVAL for a bad index; -ENOSPC when @size is too
 * small (@buf untouched).
 */
int gs_mig_profile_placements(int model, int profile, char *buf, size_t size);

/*
 * gs_mig_profile_share_milli() - the part of a card an instance of profile @profile of model
 * @model counts as in GPUQuota, in milli-GPU: its compute slices over the model's, rounded down
 * (3g on a 7-slice A100: 428). One rule for the simulator (src/sim/tenancy_admit.c) and gpuschedd
 * (src/daemon/quota.c), both of which then count it as a shared, not a dedicated, share
 * (gs_quota_bucket() with whole 0).
 * Return: 1..1000; -EINVAL for a bad index.
 */
int gs_mig_profile_share_milli(int model, int profile);

/*
 * gs_mig_resource_parse() - the profile a pod asks for with the mixed strategy's extended
 * resource name, "nvidia.com/mig-<profile>" (NVIDIA k8s-device-plugin, MIG strategy "mixed").
 * Kubernetes resource names cannot hold '+', so the device plugin advertises a "+me" profile with
 * a '.': "nvidia.com/mig-1g.10gb.me" is profile "1g.10gb+me".
 * @model: a gs_mig_model index (the card model the pod would land on).
 * @d: error text on failure, naming the resource and, for an unknown profile, the model's
 *     profiles and any other model that has it. May be NULL.
 * Return: the profile index (>= 0); -EINVAL when @resource is not a MIG resource name (no
 * "nvidia.com/mig-" prefix, empty profile, a '+' in it) or @model is out of range; -ENOENT when
 * the model has no such profile.
 */
int gs_mig_resource_parse(int model, const char *resource, struct gs_diag *d);

/*
 * gs_mig_resource_name() - the inverse: "nvidia.com/mig-1g.10gb.me" for profile 1g.10gb+me.
 * @buf, @size: output; GS_MIG_RESOURCE_MAX bytes always suffice.
 * Return: the length written; -EINVAL for a bad index; -ENOSPC when @size is too small.
 */
int gs_mig_resource_name(int model, int profile, char *buf, size_t size);

/* One live GPU instance. */
struct gs_mig_instance {
    uint8_t profile; /* index within the card's model */
    uint8_t start;   /* first memory slice */
};

/*
 * A card's MIG state, a small value meant to be embedded in the GPU it describes (copying it
 * copies the state). Read the fields freely; change them only through gs_mig_card_*().
 */
struct gs_mig_card {
    int16_t model;   /* gs_mig_model index */
    bool mig_mode;   /* MIG mode on: set by the first create, or by gs_mig_card_set_mode() */
    uint8_t ninst;   /* live instances, 0..GS_MIG_INSTANCES_MAX */
    uint8_t used;    /* bit s set: memory slice s is held by a live instance */
    uint8_t allowed; /* bit i set: profile i may be created here (a policy's migProfiles) */
    struct gs_mig_instance inst[GS_MIG_INSTANCES_MAX]; /* [0, ninst), sorted by start */
};

/*
 * gs_mig_card_init() - an empty card of model @model, MIG mode off.
 * @allowed: bit i allows profile i of the model (GS_MIG_ALLOW_ALL: every profile); bits past the
 *           model's profiles are dropped.
 * Return: 0; -EINVAL when @model is out of range or no profile of the model is allowed (@c then
 * untouched).
 */
int gs_mig_card_init(struct gs_mig_card *c, int model, unsigned allowed);

/*
 * gs_mig_card_set_mode() - turn MIG mode on or off, as `nvidia-smi -i N -mig 1|0` does.
 * Return: 0; -EBUSY when turning it off while an instance lives (a card with live instances is
 * never reset).
 */
int gs_mig_card_set_mode(struct gs_mig_card *c, bool on);

/*
 * gs_mig_card_starts() - where profile @profile could be created now: NVIDIA's placements whose
 * memory slices are all free, provided the profile is allowed here, under its max_instances and,
 * for an OFA profile, the OFA is free.
 * @mask: out, bit s set for start slot s (0 when it fits nowhere).
 * Return: the number of such starts (>= 0); -EINVAL for a bad profile index.
 */
int gs_mig_card_starts(const struct gs_mig_card *c, int profile, unsigned *mask);

/*
 * gs_mig_card_create() - create an instance of @profile starting at memory slice @start, and turn
 * MIG mode on.
 * @d: the reason on failure; may be NULL.
 * Return: 0; -EINVAL when @profile is out of range or @start is not one of NVIDIA's starts for it;
 * -EPERM when the profile is not allowed on this card; -EBUSY when a live instance holds one of
 * the slices; -ENOSPC when the profile already has max_instances live, or it needs the OFA and
 * another instance holds it. The card is unchanged on failure.
 */
int gs_mig_card_create(struct gs_mig_card *c, int profile, int start, struct gs_diag *d);

/*
 * gs_mig_card_destroy() - destroy the instance that starts at memory slice @start. MIG mode stays
 * on, as on the hardware.
 * Return: 0; -ENOENT (with @d) when no instance starts there. The card is unchanged on failure.
 */
int gs_mig_card_destroy(struct gs_mig_card *c, int start, struct gs_diag *d);

/*
 * gs_mig_card_placeable() - how much the card can still take: the sum, over the profiles it
 * allows, of how many more instances of that profile alone could be created now (its free
 * non-overlapping placements, capped by max_instances less the live ones and by the OFA).
 * An empty A100-SXM4-80GB allowing everything scores 7+1+4+3+2+1+1 = 19.
 * Return: the sum (>= 0). Complexity: O(profiles x slots).
 */
int gs_mig_card_placeable(const struct gs_mig_card *c);

/*
 * gs_mig_card_best_start() - the start a best-fit allocator picks for @profile: among the starts
 * gs_mig_card_starts() gives, the one that leaves gs_mig_card_placeable() highest afterwards; ties
 * go to the lowest start. On an empty A100 or H100 this puts a 1g instance at slot 6, where it
 * blocks neither the 4g (0-3) nor the 3g at 0, and seven 1g instances land at 6, 4, 5, 0, 1, 2, 3:
 * the order NVIDIA's driver chose in the H100 output in tests/data/mig/.
 * @start: out, written only on success.
 * Return: 0; -ENOSPC when it fits nowhere; -EINVAL for a bad profile index.
 */
int gs_mig_card_best_start(const struct gs_mig_card *c, int profile, int *start);

/*
 * gs_mig_card_place() - gs_mig_card_best_start() then gs_mig_card_create().
 * @start: out, the chosen start, written only on success; may be NULL.
 * Return: as gs_mig_card_best_start() (-ENOSPC with @d when it fits nowhere).
 */
int gs_mig_card_place(struct gs_mig_card *c, int profile, int *start, struct gs_diag *d);

/*
 * gs_mig_card_score() - how good a home this card is for one more @profile, so that a scheduler
 * can compare cards: 500..999 for a card already in MIG mode, 0..499 for one that would have to
 * be turned to MIG mode (so a card already partitioned always wins over converting a whole one);
 * within a band, higher when the best start costs less placeability:
 *     band + 499 * (full - (before - after)) / full
 * with before/after gs_mig_card_placeable() around the best start and full its value on an empty
 * card of the model with the same allowed profiles. Integer arithmetic; deterministic.
 * @score: out, written only on success.
 * Return: 0; -ENOSPC when the profile fits nowhere on the card; -EINVAL for a bad profile index.
 */
int gs_mig_card_score(const struct gs_mig_card *c, int profile, int *score);

/*
 * gs_mig_card_list() - the live instances as "profile@start", comma-separated, by start:
 * "1g.10gb@0,2g.20gb@2,3g.40gb@4"; "" for none.
 * @buf, @size: output; GS_MIG_LIST_MAX bytes always suffice.
 * Return: the length written (without the NUL); -ENOSPC when @size is too small (@buf untouched).
 */
int gs_mig_card_list(const struct gs_mig_card *c, char *buf, size_t size);

#endif
