# A scenario of an Alibaba node list and pod list (awk -F, -f trace-scenario.awk NODES PODS):
# a node template per node as the list gives it, and the pods arriving a second apart in the
# list's order, in namespace team-a, running until the end. What test_e2e's replay case runs
# `gpusched simulate --scenario` on.
FNR == 1 { next }
NR == FNR {
    t = t sprintf("    - {name: %s, gpuModel: %s, gpus: %d, cpuMilli: %d, memoryMiB: %d}\n",
                  $1, $5, $4, $2, $3)
    n = n sprintf("    - {name: %s, template: %s}\n", $1, $1)
    next
}
!head {
    printf "apiVersion: gpusched.io/v1alpha1\nkind: Cluster\nmetadata: {name: replay}\n"
    printf "spec:\n  nodeTemplates:\n%s  nodes:\n%s", t, n
    head = 1
}
{
    g = $5 < 1000 ? sprintf(", nvidia.com/gpucores: %d", $5 / 10) : ""
    printf "---\n{apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: team-a, ", $1
    printf "annotations: {sim.gpusched.io/arrival: \"%ds\"}}, spec: {containers: [{name: c, ", FNR - 2
    printf "resources: {limits: {cpu: %dm, memory: %dMi, nvidia.com/gpu: %d%s}}}]}}\n", $2, $3, $4, g
}
