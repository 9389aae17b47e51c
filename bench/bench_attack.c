/*
 * gpuschedd attacked on 127.0.0.1 (tests/common/attack.h), with the latencies printed: /healthz
 * and extender filter under 2,000 idle connections and 128 slow uploads, and extender filter +
 * prioritize and POST /v1/pods while 8 scrapers and a tenant listing 5,000 pods 20 times a
 * second read. Asserts nothing (the attack test does that). The daemon: $GPUSCHEDD_BIN, or
 * build/gpuschedd.
 *   bench_attack [NODES [PODS [PHASE_SECONDS]]]   (defaults 5,000, 20,000, 20)
 */
#include "../tests/common/attack.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    struct attack_opts o;
    struct attack_report r;
    attack_opts_default(&o, 0);
    if (argc > 1)
        o.nodes = atoi(argv[1]);
    if (argc > 2)
        o.pods = atoi(argv[2]);
    if (argc > 3)
        o.phase_s = atof(argv[3]);
    if (o.nodes < 10 || o.pods < 10 || o.phase_s < 1) {
        fprintf(stderr, "usage: bench_attack [NODES >= 10 [PODS >= 10 [PHASE_SECONDS >= 1]]]\n");
        return 2;
    }
    if (!getenv("GPUSCHEDD_BIN"))
        setenv("GPUSCHEDD_BIN", "build/gpuschedd", 0);
    int rc = attack_run(&o, &r);
    attack_report_print(&r, &o);
    attack_report_free(&r);
    return rc ? 1 : 0;
}
