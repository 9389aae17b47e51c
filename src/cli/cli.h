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

#endif
