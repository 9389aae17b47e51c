/*
 * gpusched topo FILE: read the text of `nvidia-smi topo -m` and print the machine's topology tree:
 * for people (default), --json, or --yaml as a ready spec.nodeTemplates entry of a Cluster.
 * Exit status: 0 printed, 2 bad input or usage (one message naming file:line:column), 1 I/O.
 */
#include "cli.h"

#include "gpusched/catalog.h"
#include "gpusched/cluster.h"
#include "gpusched/diag.h"
#include "gpusched/topo.h"
#include "gpusched/topotext.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(
        f, "usage: gpusched topo [options] FILE   (FILE: `nvidia-smi topo -m` output, - = stdin)\n"
           "  --json         the tree as one JSON object\n"
           "  --yaml         a spec.nodeTemplates entry of a Cluster (needs --model)\n"
           "  --name NAME    the template's name (--yaml; default: node) or the node's (the\n"
           "                 tree's name; default: the file's path)\n"
           "  --model MODEL  the GPU model, a catalog name (A100-SXM4-80GB, H100-SXM5-80GB, ...);\n"
           "                 --yaml only: nvidia-smi's text does not name it\n");
}

static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= 64)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_' || *s == '.'))
            return 0;
    return 1;
}

int cmd_topo(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, 'j'},       {"yaml", no_argument, NULL, 'y'},
        {"name", required_argument, NULL, 'n'}, {"model", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0}};
    enum gs_topo_format fmt = GS_TOPO_HUMAN;
    const char *name = NULL, *model = NULL;
    int c;
    opterr = 0; /* its message would echo the option as typed */
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if ((c == 'j' && fmt == GS_TOPO_YAML) || (c == 'y' && fmt == GS_TOPO_JSON)) {
            gs__cli_say("topo", "--json and --yaml: give one of them");
            return EXIT_BAD_INPUT;
        } else if (c == 'j' || c == 'y') {
            fmt = c == 'j' ? GS_TOPO_JSON : GS_TOPO_YAML;
        } else if (c == 'n') {
            name = optarg;
        } else if (c == 'm') {
            model = optarg;
        } else if (c == 'h') {
            usage(stdout);
            return 0;
        } else {
            gs__cli_say("topo", "%s \"%s\" (see gpusched topo --help)", gs_option_problem(c),
                        argv[optind - 1]);
            return EXIT_BAD_INPUT;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return EXIT_BAD_INPUT;
    }
    if (model && fmt != GS_TOPO_YAML) { /* the tree shows what the text says, which has none */
        gs__cli_say("topo", "--model is for --yaml, whose template names its GPU model");
        return EXIT_BAD_INPUT;
    }
    if (name && !name_ok(name)) {
        gs__cli_say("topo", "--name \"%s\": 1-63 letters, digits, '-', '_', '.'", name);
        return EXIT_BAD_INPUT;
    }
    int m = model ? gs_catalog_find_product(model) : 0;
    if (m < 0) {
        char names[1024];
        gs__cli_say("topo", "--model %s is not in the GPU catalog (%s)", model,
                    gs_catalog_names(names, sizeof(names)));
        return EXIT_BAD_INPUT;
    }
    if (model)
        model = gs_catalog_at(m)->name;
    struct gs_topo *t = malloc(sizeof(*t));
    struct gs_diag d;
    gs_diag_init(&d);
    if (!t) {
        gs__cli_say("topo", "out of memory");
        return 1;
    }
    int rc = gs_topo_load(argv[optind], t, &d);
    char why[160];
    if (!rc && model &&
        gs_topology_check(m, t->ngpus, t->nvlink_group, (const uint8_t(*)[GS_GPUS_MAX])t->nvlinks,
                          why, sizeof(why)))
        rc = gs_diag_error(&d, "--model %s: %s: %s", model, argv[optind], why);
    int read = !rc;
    if (!rc)
        rc = gs_topo_write(stdout, t, fmt,
                           name                  ? name
                           : fmt == GS_TOPO_YAML ? "node"
                                                 : argv[optind],
                           model, &d);
    free(t); /* a failed write to stdout: main() */
    if (rc) {
        gs__cli_say("topo", "%s", d.msg);
        /* a failed write or no memory fail this run; a file missing or unreadable is bad input,
         * as for every command */
        return (read && rc != -EINVAL && rc != -E2BIG) || rc == -ENOMEM ? 1 : EXIT_BAD_INPUT;
    }
    return 0;
}
