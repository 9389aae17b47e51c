/*
 * Prints "next N": the probe_value RTLD_NEXT finds from inside libprobe_a (2: libprobe_b's, as it
 * must be, with or without libgpushare's dlsym preloaded).
 */
#include <stdio.h>

int probe_next(void);
int probe_value(void);
int probe_b_marker(void);

int main(void)
{
    printf("next %d\n", probe_value() == 1 ? probe_next() + probe_b_marker() : -1);
    return 0;
}
