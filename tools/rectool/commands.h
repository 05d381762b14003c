/* SPDX-License-Identifier: MIT */
/* rectool sub-commands. Each takes the arguments after the command name (argv[0] is the command
 * name) and returns the process exit code: 0 success, 1 the input is invalid / the operation found
 * problems, 2 usage error, 3 I/O or internal error. */
#ifndef RECTOOL_COMMANDS_H
#define RECTOOL_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { RT_EXIT_OK = 0, RT_EXIT_INVALID = 1, RT_EXIT_USAGE = 2, RT_EXIT_IO = 3 };

/* A command as `rectool --help` lists it: the ones here (main.c) and those a format brings
 * (formats.h). */
typedef struct rt_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} rt_command;

int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_repair(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_edit_cut(int argc, char **argv);
int cmd_edit_retime(int argc, char **argv);
int cmd_edit_transform(int argc, char **argv);
int cmd_edit_concat(int argc, char **argv);
int cmd_edit_split(int argc, char **argv);
int cmd_edit_diff(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_index(int argc, char **argv);


#endif
