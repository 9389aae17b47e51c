/*
 * libgpushare — the part of the CUDA driver ABI the library touches, declared here so it builds
 * without NVIDIA's headers (the NVML part is src/node/nvml_abi.h, shared with the node agent).
 * Names, layouts and values are NVIDIA's (cuda.h of CUDA 12 and 13); bench/gpushare/abi_check.c
 * compiles fns.def against the real cuda.h to prove the function signatures match. The fake
 * driver of the tests includes this header too.
 */
#ifndef GPUSHARE_CUDA_ABI_H
#define GPUSHARE_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
typedef int CUdevice_v1;
typedef unsigned long long CUdeviceptr;
typedef unsigned int CUdeviceptr_v1;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUfunc_st *CUfunction;
typedef struct CUarray_st *CUarray;
typedef struct CUmipmappedArray_st *CUmipmappedArray;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUexecAffinityParam_st CUexecAffinityParam;
typedef struct CUctxCreateParams_st CUctxCreateParams;
typedef struct CUlaunchConfig_st CUlaunchConfig;
typedef int CUdriverProcAddressQueryResult;

/* cuCtxSetLimit: the limits whose size is device memory of the context. */
typedef int CUlimit;
#define CU_LIMIT_STACK_SIZE       0x00
#define CU_LIMIT_PRINTF_FIFO_SIZE 0x01
#define CU_LIMIT_MALLOC_HEAP_SIZE 0x02

/* The per-thread default stream, named as such (what a _ptsz entry point's stream 0 means). */
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

/* cuPointerGetAttribute: the device a pointer's memory is on. */
typedef int CUpointer_attribute;
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9

typedef struct CUuuid_st {
    char bytes[16];
} CUuuid;

/* CUresult values the library returns or tests for. */
#define CUDA_SUCCESS               0
#define CUDA_ERROR_INVALID_VALUE   1
#define CUDA_ERROR_OUT_OF_MEMORY   2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE       100
#define CUDA_ERROR_INVALID_DEVICE  101
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_HANDLE  400
#define CUDA_ERROR_NOT_FOUND       500
#define CUDA_ERROR_NOT_PERMITTED   800
#define CUDA_ERROR_NOT_SUPPORTED   801

/* cuGetProcAddress flags and the status it reports. */
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM 2
#define CU_GET_PROC_ADDRESS_SUCCESS                   0
#define CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND          1
#define CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT    2

/* Arrays: CUarray_format values whose element size is known exactly. */
typedef int CUarray_format;
#define CU_AD_FORMAT_UNSIGNED_INT8  0x01
#define CU_AD_FORMAT_UNSIGNED_INT16 0x02
#define CU_AD_FORMAT_UNSIGNED_INT32 0x03
#define CU_AD_FORMAT_SIGNED_INT8    0x08
#define CU_AD_FORMAT_SIGNED_INT16   0x09
#define CU_AD_FORMAT_SIGNED_INT32   0x0a
#define CU_AD_FORMAT_HALF           0x10
#define CU_AD_FORMAT_FLOAT          0x20

/* CUDA_ARRAY3D_DESCRIPTOR flags: arrays that hold no memory of their own (their memory is mapped
 * in later from cuMemCreate handles, with cuMemMapArrayAsync). */
#define CUDA_ARRAY3D_SPARSE           0x40
#define CUDA_ARRAY3D_DEFERRED_MAPPING 0x80

typedef struct CUDA_ARRAY_DESCRIPTOR_st {
    size_t Width;
    size_t Height;
    CUarray_format Format;
    unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;

typedef struct CUDA_ARRAY_DESCRIPTOR_v1_st {
    unsigned int Width;
    unsigned int Height;
    CUarray_format Format;
    unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR_v1;

typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
    size_t Width;
    size_t Height;
    size_t Depth;
    CUarray_format Format;
    unsigned int NumChannels;
    unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

typedef struct CUDA_ARRAY3D_DESCRIPTOR_v1_st {
    unsigned int Width;
    unsigned int Height;
    unsigned int Depth;
    CUarray_format Format;
    unsigned int NumChannels;
    unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR_v1;

/* The virtual memory management API: where cuMemCreate puts its memory. */
#define CU_MEM_LOCATION_TYPE_DEVICE 1

typedef struct CUmemLocation_st {
    int type; /* CUmemLocationType */
    int id;   /* device ordinal when type is CU_MEM_LOCATION_TYPE_DEVICE */
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
    int type;                 /* CUmemAllocationType */
    int requestedHandleTypes; /* CUmemAllocationHandleType */
    CUmemLocation location;
    void *win32HandleMetaData;
    struct {
        unsigned char compressionType;
        unsigned char gpuDirectRDMACapable;
        unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} CUmemAllocationProp;

/* A memory pool's properties: its memory lives at `location`. Only the leading fields are read;
 * the tail is as CUDA 12.2 and later declare it (88 bytes in all in every CUDA 12 and 13 header).
 */
typedef struct CUmemPoolProps_st {
    int allocType;   /* CUmemAllocationType */
    int handleTypes; /* CUmemAllocationHandleType */
    CUmemLocation location;
    void *win32SecurityAttributes;
    size_t maxSize;
    unsigned short usage;
    unsigned char reserved[54];
} CUmemPoolProps;

/* Stream-ordered memory pools: what cuMemPoolGetAttribute reports (value type cuuint64_t). */
typedef int CUmemPool_attribute;
#define CU_MEMPOOL_ATTR_RELEASE_THRESHOLD    4
#define CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT 5
#define CU_MEMPOOL_ATTR_USED_MEM_CURRENT     7

/* Stream capture. */
typedef int CUstreamCaptureStatus;
#define CU_STREAM_CAPTURE_STATUS_NONE   0
#define CU_STREAM_CAPTURE_STATUS_ACTIVE 1
typedef int CUstreamCaptureMode;

/* CUDA graphs: node types, memory allocation nodes, instantiation, and the memory the graphs of a
 * device hold (cuDeviceGetGraphMemAttribute, value type cuuint64_t). */
typedef int CUgraphNodeType;
#define CU_GRAPH_NODE_TYPE_KERNEL    0
#define CU_GRAPH_NODE_TYPE_GRAPH     4
#define CU_GRAPH_NODE_TYPE_MEM_ALLOC 10
#define CU_GRAPH_NODE_TYPE_MEM_FREE  11

typedef int CUgraphMem_attribute;
#define CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT     0
#define CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT 2

typedef struct CUmemAccessDesc_st CUmemAccessDesc;

typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_st {
    CUmemPoolProps poolProps; /* where: poolProps.location */
    const CUmemAccessDesc *accessDescs;
    size_t accessDescCount;
    size_t bytesize;
    CUdeviceptr dptr; /* out: the allocation's address */
} CUDA_MEM_ALLOC_NODE_PARAMS;

#define CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH 1
#define CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD              2

typedef struct CUDA_GRAPH_INSTANTIATE_PARAMS_st {
    cuuint64_t flags;
    CUstream hUploadStream;
    CUgraphNode hErrNode_out;
    int result_out; /* CUgraphInstantiateResult */
} CUDA_GRAPH_INSTANTIATE_PARAMS;

#endif
