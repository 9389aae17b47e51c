/* gpusched: the command-line front end. */
#include "cli.h"

#include "gpusched/diag.h"
#include "gpusched/scenario.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpusched <command> [options]\n"
               "\n"
               "commands:\n"
               "  simulate   replay a trace through the scheduler and report GPU allocation\n"
               "  validate   load scenario files and print what was understood\n"
               "  generate   write a scenario: generate tenant-day models the tenants' day\n"
               "  bill       price a simulation's GPU use per tenant, resource and day\n"
               "  report     one HTML page of a simulation's JSON: charts and a cluster map\n"
               "  forecast   GPU demand series, forecasts, backtests and capacity advice\n"
               "  topo       read `nvidia-smi topo -m` text; print the topology tree\n"
               "  version    print the version (also --version)\n"
               "  submit, get, list, cancel, status, tenants, queues, bills\n"
               "             talk to a running gpuschedd (gpusched submit --help)\n"
               "\n"
               "gpusched <command> --help shows a command's options.\n");
}

void gs__cli_vsay(const char *cmd, const char *fmt, va_list ap)
{
    char raw[4096], out[4096];
    vsnprintf(raw, sizeof(raw), fmt, ap);
    gs_text_escape(out, sizeof(out), raw);
    fprintf(stderr, "gpusched%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", out);
}

void gs__cli_say(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gs__cli_vsay(cmd, fmt, ap);
    va_end(ap);
}

int gs__cli_of_option(const char *opt, int rc, struct gs_diag *d)
{
    if (rc < 0 && rc != -ENOMEM && d->msg[0]) {
        char msg[GS_DIAG_MSG_MAX];
        memcpy(msg, d->msg, sizeof(msg));
        gs_diag_error_code(d, rc, "%s %s", opt, msg);
    }
    return rc;
}

const struct gs_pod_spec *gs__cli_placed(const struct gs_scenario *s)
{
    for (size_t i = 0; i < s->npods; i++)
        if (s->pods[i].placed_node[0])
            return &s->pods[i];
    return NULL;
}

const char *gs__cli_cell(const char *s)
{
    static char ring[8][512];
    static unsigned next;
    if (!s)
        return "-";
    char *b = ring[next++ % 8];
    gs_text_escape(b, sizeof(ring[0]), s);
    return b;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_BAD_INPUT;
    }
    if (strcmp(argv[1], "simulate") == 0)
        return cmd_simulate(argc - 1, argv + 1);
    if (strcmp(argv[1], "validate") == 0)
        return cmd_validate(argc - 1, argv + 1);
    if (strcmp(argv[1], "generate") == 0)
        return cmd_generate(argc - 1, argv + 1);
    if (strcmp(argv[1], "bill") == 0)
        return cmd_bill(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(argv[1], "forecast") == 0)
        return cmd_forecast(argc - 1, argv + 1);
    if (strcmp(argv[1], "topo") == 0)
        return cmd_topo(argc - 1, argv + 1);
    static const char *const client_cmds[] = {"submit", "get",     "list",   "cancel",
                                              "status", "tenants", "queues", "bills"};
    for (size_t i = 0; i < sizeof(client_cmds) / sizeof(client_cmds[0]); i++)
        if (strcmp(argv[1], client_cmds[i]) == 0)
            return cmd_client(argc - 1, argv + 1);
    if (strcmp(argv[1], "version") == 0 || strcmp(argv[1], "--version") == 0) {
        if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
            printf("usage: gpusched version   print the version\n");
            return 0;
        }
        if (argc > 2) {
            gs__cli_say(argv[1], "unexpected argument \"%s\"", argv[2]);
            return EXIT_BAD_INPUT;
        }
        printf("gpusched %s\n", GS_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    gs__cli_say(NULL, "unknown command \"%s\"", argv[1]);
    usage(stderr);
    return EXIT_BAD_INPUT;
}

/* What a command printed must have reached its reader: output cut short by a full disk or a
 * closed pipe is a failed run (1), said once, not a success. */
int main(int argc, char **argv)
{
    int rc = dispatch(argc, argv);
    errno = 0;
    if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
        gs__cli_say(argc > 1 ? argv[1] : NULL, "cannot write to standard output: %s",
                    errno ? strerror(errno) : "a write failed");
        return 1;
    }
    return rc;
}
