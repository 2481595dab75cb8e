/* Entry points of the dpusim subcommands (one tools/cmd_NAME.c each). */
#ifndef DPUSIM_TOOLS_COMMANDS_H
#define DPUSIM_TOOLS_COMMANDS_H

int cmd_bench(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_coll(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_plan(int argc, char **argv);

#endif
