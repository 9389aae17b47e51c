#include "../sched_impl.h"

#define GS_PLUGIN(sym) extern const struct gs_plugin gs_plugin_##sym;
#include "plugins.def"
#undef GS_PLUGIN

const struct gs_plugin *const gs__plugins[] = {
#define GS_PLUGIN(sym) &gs_plugin_##sym,
#include "plugins.def"
#undef GS_PLUGIN
    NULL,
};
