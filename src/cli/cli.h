/* Subcommands of the gpusched command. Each returns the process exit status. */
#ifndef GS_CLI_H
#define GS_CLI_H

/* Exit statuses: 0 success, 1 internal failure (out of memory, I/O), 2 bad input or usage. */
#define EXIT_BAD_INPUT 2

int cmd_simulate(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_simulate_scenario(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_bill(int argc, char **argv);
int cmd_forecast(int argc, char **argv);
int cmd_topo(int argc, char **argv);

/* submit, get, list, cancel, status: talk to gpuschedd (@argv[0] names the subcommand). */
int cmd_client(int argc, char **argv);
int cmd_report(int argc, char **argv);

#include <stdarg.h>
/*
 * gs__cli_say() - "gpusched[ @cmd]: " (@cmd NULL: none), @fmt formatted, and a newline on standard
 * error, the formatted text written as messages are (gs_text_escape()): the arguments, file names
 * and answers it quotes cannot move the cursor, recolour the terminal or reorder the line. Cut at
 * 4 KiB. gs__cli_vsay() the same with a va_list (main.c).
 */
void gs__cli_say(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gs__cli_vsay(const char *cmd, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* gs__cli_of_option() - @d's message about the file of option @opt (a load's, whose result is
 * @rc), @opt put before it: "--rates X: cannot open: ..." tells which option to fix.
 * Out of memory is left as it is. Return: @rc. */
struct gs_diag;
int gs__cli_of_option(const char *opt, int rc, struct gs_diag *d);

/* gs__cli_placed() - @s's first pod a snapshot placed (sim.gpusched.io/node), NULL none: what
 * simulate takes with --from-now only. */
struct gs_scenario;
struct gs_pod_spec;
const struct gs_pod_spec *gs__cli_placed(const struct gs_scenario *s);

/* gs__cli_cell() - @s (NULL: "-") as a table prints it: gs_text_escape()d, cut at 511 bytes, in
 * one of 8 buffers used in turn (valid until 8 more calls), so one printf may hold 8 cells. */
const char *gs__cli_cell(const char *s);

/* gs__cli_duration() - "90s", "10m", "24h", "7d", "2w" (digits, then one unit) -> seconds
 * (forecast.c). Return: 0; -EINVAL. */
#include <stdint.h>
int gs__cli_duration(const char *s, int64_t *out);

/*
 * gs__cli_check_outputs() - before anything is read: none of the files @outs[0..@nout) (NULL:
 * not given; @flags their options, for messages) is one of @ins[0..@nin) (NULL skipped), and each
 * can be written, without emptying one that exists (simulate.c). Return: 0; -EINVAL with @d
 * ("--json X: is an input file; name another file", "X: cannot write: ...").
 */
#include <stddef.h>
struct gs_diag;
/* gs__cli_same_file() - @out and @in (NULL: none) name one existing file (simulate.c). */
int gs__cli_same_file(const char *out, const char *in);
int gs__cli_check_outputs(const char *const *outs, const char *const *flags, size_t nout,
                          const char *const *ins, size_t nin, struct gs_diag *d);

/* gs__cli_policy() - --policy @name is one of gs_policy_names(), or "all" unless @no_all says
 * why it is not taken (simulate.c); else a message for @cmd naming the option.
 * Return: 0; EXIT_BAD_INPUT. */
int gs__cli_policy(const char *cmd, const char *name, const char *no_all);

/* Reading the simulator's JSON (bill.c), shared by bill and report. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
struct gs_bill;
struct gs_diag;

/* gs__json_type_name() - "object", "array", "string", "integer", "real", "null", "boolean". */
const char *gs__json_type_name(const json_t *v);

/*
 * gs__json_field() - @obj's member @key, which must be of @type (object, array, string or
 * integer; a string without NUL). @at: the JSON path of @obj for messages ("" at the top).
 * Return: 0 with *@out (borrowed); -EINVAL with @d ("ways[0].pods[3].tenant: expected string,
 * missing").
 */
int gs__json_field(const json_t *obj, const char *key, const char *at, json_type type, json_t **out,
                   struct gs_diag *d);
/* gs__json_field_int() - gs__json_field() of an integer, its value in *@out. */
int gs__json_field_int(const json_t *obj, const char *key, const char *at, int64_t *out,
                       struct gs_diag *d);

/*
 * gs__json_top_is_last_way() - a comparison @root ({"ways": [...]}) keeps at its top level the
 * last way's "way", "pods", "summary" and "timeline", as the simulator writes it; any of them given
 * there must equal that way's, so what a reader of one run sees is what the comparison says.
 * Return: 0 (also without "ways"); -EINVAL with @d ("pods: not ways[2].pods: ...").
 */
int gs__json_top_is_last_way(const json_t *root, struct gs_diag *d);

/* What a run's pods read so far say: the use that ends latest (its end, seconds, INT64_MIN
 * none, and its path), and how many pods are in each state (enum gs_pod_state's order). */
struct gs__pods_seen {
    int64_t end_s;
    char at[160];
    int64_t pods, in_state[5];
};

/*
 * gs__bill_pod() - meter every "usage" entry of the simulator's pod object @pod (at path @at)
 * into @b, as `gpusched bill` does: the pod has only keys the simulator writes, a name
 * NAMESPACE/NAME (its namespace, where given, the same), a state the simulator writes, and its
 * times (submit_s an integer, start_s and end_s integers or null where not yet, a completed
 * pod's end_s given); each use must lie inside the pod's life (not before its submit_s or
 * start_s, not after its end_s, not overlapping the previous use; a rejected pod and one never
 * started have none). *@seen (in and out): the use that ends latest so far, and the pod counted
 * in its state.
 * Return: 0; -EINVAL (a malformed pod, named by path); gs_bill_add_use()'s errors.
 */
int gs__bill_pod(const json_t *pod, const char *at, struct gs_bill *b, struct gs__pods_seen *seen,
                 struct gs_diag *d);

/* gs__summary_agrees() - the run's @summary (NULL: nothing to check) says what its pods
 * (@seen) do: no use ends after its "horizon_s", and its "pods", "completed", "running",
 * "pending" and "rejected", where given, count them; at path @at. Return: 0; -EINVAL naming the
 * use or the count. */
int gs__summary_agrees(const json_t *summary, const struct gs__pods_seen *seen, const char *at,
                       struct gs_diag *d);

/* gs__names_unique() - no two of @names (sorted in place) are equal: a pod listed twice would be
 * billed twice. Return: 0; -EINVAL naming the pod, in @at's pods. */
int gs__names_unique(const char **names, size_t n, const char *at, struct gs_diag *d);

/* Headings of the columns a bill's lines share in `gpusched bill` and `gpusched bills`: one
 * line read in either table is headed the same. */
#define GS__BILL_HEAD_DAY  "DAY"
#define GS__BILL_HEAD_RATE "RATE/HOUR"

/*
 * gs__client_table() - print gpuschedd's answer @ans to GET /v1/@cmd (tenants, queues, bills) as
 * a table on standard output (client_tables.c). Return: 0; -1 for another @cmd (nothing printed).
 */
int gs__client_table(const char *cmd, const json_t *ans);

#endif
