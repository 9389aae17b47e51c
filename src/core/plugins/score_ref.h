/*
 * Constants of the FGD study's baseline scores (github.com/hkust-adsl/kubernetes-scheduler-
 * simulator, pkg/simulator/plugin): resources are normalised by the largest node of the Alibaba
 * trace, 128 CPU cores and 8 GPUs, not by each node's own capacity. Their scores are 0..100;
 * ours are 0..1000, so each is multiplied by 10 (orders and ties unchanged).
 */
#ifndef GS_SCORE_REF_H
#define GS_SCORE_REF_H

#define REF_MAX_CPU_MILLI 128000
#define REF_MAX_GPU_MILLI 8000
#define REF_SCALE         10

#endif
