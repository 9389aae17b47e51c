/* Layouts shared by the files of src/forecast; not a public interface. */
#ifndef GS_FORECAST_IMPL_H
#define GS_FORECAST_IMPL_H

#include "gpusched/forecast.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FC_MILLI_MAX   16000000 /* one record: 16,000 GPUs */
#define FC_SOURCES_MAX 16

/* Interned labels of one key; index 0 is "" (name[0] NULL). */
struct fc_labels {
    char **name;
    size_t n;
    int32_t *slot; /* open addressing, cap slots, -1 empty */
    size_t cap;
};

/* fc_intern() - the index of @s in @t, added when absent ("" and NULL are 0). Return: >= 0;
 * -ENOMEM. fc_labels_free() - release @t's names. */
int32_t fc_intern(struct fc_labels *t, const char *s);
void fc_labels_free(struct fc_labels *t);

struct fc_rec {
    int64_t start, end, milli; /* seconds, seconds (INT64_MAX open), milli-GPU */
    int32_t lab[GS_FC_KEYS];   /* label per key; [GS_FC_TOTAL] unused */
};

struct gs_demand {
    struct fc_rec *rec;
    size_t n, cap;
    int64_t end_s;
    struct fc_labels labels[GS_FC_KEYS];
    char source[FC_SOURCES_MAX][256]; /* files read, for messages about keys they lack */
    unsigned source_keys[FC_SOURCES_MAX];
    size_t nsources;
};

/* Bits of a source's mask past its keys (1 << enum gs_fc_key): what its clock is. */
#define FC_SRC_UTC  (1u << 8) /* seconds of the Unix epoch: the store, the GenAI log */
#define FC_SRC_LIVE (1u << 9) /* still written to (the store): its hour under way is no history */

/* fc_demand_source() - record that @path was read and names the keys of bit mask @keys (and
 * the FC_SRC_* bits of its clock). */
void fc_demand_source(struct gs_demand *dm, const char *path, unsigned keys);

/* fc_demand_truncate() - drop the records past @n and restore the end (an undo after an error). */
void fc_demand_truncate(struct gs_demand *dm, size_t n, int64_t end_s);

#endif
