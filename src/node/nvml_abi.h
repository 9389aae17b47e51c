/*
 * The part of NVIDIA's NVML C API (nvml.h, the NVML API Reference Guide) the node agent and
 * libgpushare (src/shim/nvml.c) call: types, constants and the functions' parameter lists, declared
 * here once because libnvidia-ml.so.1 is loaded with dlopen() and never linked, so a machine
 * without NVIDIA's driver still runs the agent (and the tests build their fake library,
 * tests/nvml/fake_nvml.c, from these same declarations). Every layout and value is NVML's own, as
 * nvml.h of driver R470 and later defines it; the *_v2/_v3 suffixes are the versioned symbols
 * nvml.h maps the plain names to.
 */
#ifndef GS_NODE_NVML_ABI_H
#define GS_NODE_NVML_ABI_H

typedef int nvmlReturn_t;
#define NVML_SUCCESS                      0
#define NVML_ERROR_UNINITIALIZED          1
#define NVML_ERROR_INVALID_ARGUMENT       2
#define NVML_ERROR_NOT_SUPPORTED          3
#define NVML_ERROR_NO_PERMISSION          4
#define NVML_ERROR_NOT_FOUND              6
#define NVML_ERROR_INSUFFICIENT_SIZE      7
#define NVML_ERROR_TIMEOUT                10
#define NVML_ERROR_FUNCTION_NOT_FOUND     13
#define NVML_ERROR_IN_USE                 19
#define NVML_ERROR_INSUFFICIENT_RESOURCES 23
#define NVML_ERROR_UNKNOWN                999

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpuInstance_st *nvmlGpuInstance_t;
typedef struct nvmlComputeInstance_st *nvmlComputeInstance_t;
typedef struct nvmlEventSet_st *nvmlEventSet_t;

#define NVML_DEVICE_UUID_V2_BUFFER_SIZE       96
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE       96
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE    32
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE 16
#define NVML_NVLINK_MAX_LINKS                 18

typedef struct {
    unsigned long long total, free, used; /* bytes */
} nvmlMemory_t;

typedef struct {
    char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE]; /* "00000000:07:00.0" */
} nvmlPciInfo_t;

/* nvmlGpuTopologyLevel_t: the nearest common ancestor of two devices. */
#define NVML_TOPOLOGY_INTERNAL   0
#define NVML_TOPOLOGY_SINGLE     10 /* PIX */
#define NVML_TOPOLOGY_MULTIPLE   20 /* PXB */
#define NVML_TOPOLOGY_HOSTBRIDGE 30 /* PHB */
#define NVML_TOPOLOGY_NODE       40 /* NODE */
#define NVML_TOPOLOGY_SYSTEM     50 /* SYS */
typedef int nvmlGpuTopologyLevel_t;

typedef int nvmlEnableState_t; /* NVML_FEATURE_DISABLED 0, NVML_FEATURE_ENABLED 1 */

/* MIG (nvml.h "MIG" section). */
#define NVML_DEVICE_MIG_DISABLE                     0
#define NVML_DEVICE_MIG_ENABLE                      1
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE           0
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE           1
#define NVML_GPU_INSTANCE_PROFILE_3_SLICE           2
#define NVML_GPU_INSTANCE_PROFILE_4_SLICE           3
#define NVML_GPU_INSTANCE_PROFILE_7_SLICE           4
#define NVML_GPU_INSTANCE_PROFILE_8_SLICE           5
#define NVML_GPU_INSTANCE_PROFILE_6_SLICE           6
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1      7 /* 1g with media extensions (+me) */
#define NVML_GPU_INSTANCE_PROFILE_2_SLICE_REV1      8
#define NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV2      9 /* 1g with twice the memory (1g.20gb) */
#define NVML_GPU_INSTANCE_PROFILE_COUNT             10
#define NVML_COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED 0

typedef struct {
    unsigned int start, size; /* memory slices */
} nvmlGpuInstancePlacement_t;

typedef struct {
    unsigned int id; /* the profile ID `nvidia-smi mig -lgip` prints */
    unsigned int isP2pSupported, sliceCount, instanceCount, multiprocessorCount;
    unsigned int copyEngineCount, decoderCount, encoderCount, jpegCount, ofaCount;
    unsigned long long memorySizeMB;
} nvmlGpuInstanceProfileInfo_t;

typedef struct {
    nvmlDevice_t device;
    unsigned int id, profileId;
    nvmlGpuInstancePlacement_t placement;
} nvmlGpuInstanceInfo_t;

typedef struct {
    unsigned int id, sliceCount, instanceCount, multiprocessorCount, sharedCopyEngineCount;
    unsigned int sharedDecoderCount, sharedEncoderCount, sharedJpegCount, sharedOfaCount;
} nvmlComputeInstanceProfileInfo_t;

/* Events (nvml.h "Event Handling Methods"). */
#define nvmlEventTypeXidCriticalError 0x0000000000000008ULL
typedef struct {
    nvmlDevice_t device;
    unsigned long long eventType, eventData; /* eventData: the Xid */
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

/* Utilisation, for libgpushare's compute limit (nvmlDeviceGetUtilizationRates,
 * nvmlDeviceGetProcessUtilization, and the v1 layout the unversioned
 * nvmlDeviceGetComputeRunningProcesses symbol fills). */
typedef struct {
    unsigned int gpu, memory; /* percent over the last sample period */
} nvmlUtilization_t;

typedef struct {
    unsigned int pid;
    unsigned long long timeStamp; /* CPU time of the sample, microseconds */
    unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* nvmlDeviceGetSamples: the driver's buffer of recent samples of one kind, each stamped; the
 * utilisation ones carry an unsigned int (nvmlValue_t's uiVal). The two enums are int-sized. */
typedef int nvmlSamplingType_t;
#define NVML_GPU_UTILIZATION_SAMPLES 1
typedef int nvmlValueType_t;
typedef union {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
} nvmlValue_t;
typedef struct {
    unsigned long long timeStamp; /* CPU time of the sample, microseconds */
    nvmlValue_t sampleValue;
} nvmlSample_t;

/* The NVML functions the agent resolves with dlsym() and needs, as X(name, parameters); each
 * returns nvmlReturn_t. */
#define GS_NVML_FUNCS(X)                                                                           \
    X(nvmlInit_v2, (void))                                                                         \
    X(nvmlShutdown, (void))                                                                        \
    X(nvmlDeviceGetCount_v2, (unsigned int *count))                                                \
    X(nvmlDeviceGetHandleByIndex_v2, (unsigned int index, nvmlDevice_t *dev))                      \
    X(nvmlDeviceGetUUID, (nvmlDevice_t dev, char *uuid, unsigned int len))                         \
    X(nvmlDeviceGetName, (nvmlDevice_t dev, char *name, unsigned int len))                         \
    X(nvmlDeviceGetMemoryInfo, (nvmlDevice_t dev, nvmlMemory_t * mem))                             \
    X(nvmlDeviceGetPciInfo_v3, (nvmlDevice_t dev, nvmlPciInfo_t * pci))                            \
    X(nvmlDeviceGetMinorNumber, (nvmlDevice_t dev, unsigned int *minor))                           \
    X(nvmlDeviceGetTopologyCommonAncestor,                                                         \
      (nvmlDevice_t a, nvmlDevice_t b, nvmlGpuTopologyLevel_t * level))                            \
    X(nvmlDeviceGetNvLinkState, (nvmlDevice_t dev, unsigned int link, nvmlEnableState_t *on))      \
    X(nvmlDeviceGetNvLinkRemotePciInfo_v2,                                                         \
      (nvmlDevice_t dev, unsigned int link, nvmlPciInfo_t *pci))                                   \
    X(nvmlDeviceGetMigMode, (nvmlDevice_t dev, unsigned int *current, unsigned int *pending))      \
    X(nvmlDeviceSetMigMode, (nvmlDevice_t dev, unsigned int mode, nvmlReturn_t *activation))       \
    X(nvmlDeviceGetMaxMigDeviceCount, (nvmlDevice_t dev, unsigned int *count))                     \
    X(nvmlDeviceGetMigDeviceHandleByIndex,                                                         \
      (nvmlDevice_t dev, unsigned int index, nvmlDevice_t *mig))                                   \
    X(nvmlDeviceGetGpuInstanceId, (nvmlDevice_t mig, unsigned int *id))                            \
    X(nvmlDeviceGetGpuInstanceProfileInfo,                                                         \
      (nvmlDevice_t dev, unsigned int profile, nvmlGpuInstanceProfileInfo_t *info))                \
    X(nvmlDeviceGetGpuInstances,                                                                   \
      (nvmlDevice_t dev, unsigned int profile_id, nvmlGpuInstance_t *gis, unsigned int *count))    \
    X(nvmlDeviceCreateGpuInstanceWithPlacement,                                                    \
      (nvmlDevice_t dev, unsigned int profile_id, const nvmlGpuInstancePlacement_t *placement,     \
       nvmlGpuInstance_t *gi))                                                                     \
    X(nvmlGpuInstanceGetInfo, (nvmlGpuInstance_t gi, nvmlGpuInstanceInfo_t * info))                \
    X(nvmlGpuInstanceDestroy, (nvmlGpuInstance_t gi))                                              \
    X(nvmlGpuInstanceGetComputeInstanceProfileInfo,                                                \
      (nvmlGpuInstance_t gi, unsigned int profile, unsigned int eng,                               \
       nvmlComputeInstanceProfileInfo_t *info))                                                    \
    X(nvmlGpuInstanceCreateComputeInstance,                                                        \
      (nvmlGpuInstance_t gi, unsigned int profile_id, nvmlComputeInstance_t *ci))                  \
    X(nvmlGpuInstanceGetComputeInstances, (nvmlGpuInstance_t gi, unsigned int profile_id,          \
                                           nvmlComputeInstance_t *cis, unsigned int *count))       \
    X(nvmlComputeInstanceDestroy, (nvmlComputeInstance_t ci))                                      \
    X(nvmlDeviceGetComputeRunningProcesses_v3,                                                     \
      (nvmlDevice_t dev, unsigned int *count, void *infos))                                        \
    X(nvmlEventSetCreate, (nvmlEventSet_t * set))                                                  \
    X(nvmlDeviceRegisterEvents, (nvmlDevice_t dev, unsigned long long types, nvmlEventSet_t set))  \
    X(nvmlEventSetWait_v2, (nvmlEventSet_t set, nvmlEventData_t * data, unsigned int timeout_ms))  \
    X(nvmlEventSetFree, (nvmlEventSet_t set))

/* What the agent uses when the driver has it (nvmlDeviceGetNumaNodeId: R535 and later). */
#define GS_NVML_AGENT_OPTIONAL(X) X(nvmlDeviceGetNumaNodeId, (nvmlDevice_t dev, unsigned int *node))

/* What libgpushare resolves besides nvmlInit_v2, for its compute limit (the unversioned
 * nvmlDeviceGetComputeRunningProcesses fills the v1 layout). */
#define GS_NVML_SHIM_FUNCS(X)                                                                      \
    X(nvmlDeviceGetHandleByUUID, (const char *uuid, nvmlDevice_t *dev))                            \
    X(nvmlDeviceGetUtilizationRates, (nvmlDevice_t dev, nvmlUtilization_t * u))                    \
    X(nvmlDeviceGetProcessUtilization,                                                             \
      (nvmlDevice_t dev, nvmlProcessUtilizationSample_t * samples, unsigned int *count,            \
       unsigned long long lastSeen))                                                               \
    X(nvmlDeviceGetComputeRunningProcesses,                                                        \
      (nvmlDevice_t dev, unsigned int *count, nvmlProcessInfo_v1_t *infos))                        \
    X(nvmlDeviceGetSamples,                                                                        \
      (nvmlDevice_t dev, nvmlSamplingType_t type, unsigned long long lastSeen,                     \
       nvmlValueType_t *valType, unsigned int *count, nvmlSample_t *samples))

/* nvmlErrorString, the one function here that does not return nvmlReturn_t. */
typedef const char *gs_nvml_error_string_fn(nvmlReturn_t r);

#endif
