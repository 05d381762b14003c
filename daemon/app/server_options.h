/* SPDX-License-Identifier: MIT */
/* recd's command line: options, their overrides of the configuration file, and --help text. */
#ifndef RECD_DAEMON_SERVER_OPTIONS_H
#define RECD_DAEMON_SERVER_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "support/config.h"

typedef struct recd_cli {
    const char *config_path;  /* --config; NULL: built-in defaults */
    const char *check_config; /* --check-config FILE */
    const char *listen[RECD_CONFIG_MAX_LISTEN]; /* --listen, in order; replace the file's list */
    size_t listen_count;
    const char *output;         /* --output DIR */
    const char *metrics;        /* --metrics HOST:PORT (also turns metrics on) */
    const char *flush_interval; /* --flush-interval DUR */
    const char *log_level;      /* --log-level LEVEL */
    bool print_ports;           /* --print-ports: bound addresses on stdout */
    bool print_config;          /* --print-config: effective configuration, then exit */
    bool version, help;
} recd_cli;

/* Parses argv (argv[0] is the program). 0, or -EINVAL with why (a usage error). */
int recd_cli_parse(int argc, char **argv, recd_cli *cli, char *why, size_t cap);

/* The configuration the command line names: the --config file (or the built-in defaults) with
 * the overrides applied. cfg must be empty. 0, or a negative errno with why ready to print
 * ("file:line:col: ..." for file errors). */
int recd_cli_load_config(const recd_cli *cli, recd_config *cfg, char *why, size_t cap);


void recd_cli_usage(FILE *out);

#endif
