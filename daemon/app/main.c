/* SPDX-License-Identifier: MIT */
/* recd: the recorder daemon's entry point. Parses the command line, loads the configuration
 * (file or built-in defaults, flags on top), answers --help / --version / --check-config /
 * --print-config, and otherwise runs the server until it has shut down. */
#include <stdio.h>
#include <string.h>

#include "support/config.h"
#include "support/log.h"
#include "recd/common.h"
#include "record/session_formats.h"
#include "server.h"
#include "server_options.h"

int main(int argc, char **argv)
{
    recd_cli cli;
    char why[1200];
    if (session_formats_install_config() < 0) {
        fprintf(stderr, "recd: the formats' config rows do not fit the schema\n");
        return 1;
    }
    if (recd_cli_parse(argc, argv, &cli, why, sizeof why) < 0) {
        fprintf(stderr, "recd: %s\n", why);
        return 2;
    }
    if (cli.help) {
        recd_cli_usage(stdout);
        return 0;
    }
    if (cli.version) {
        printf("recd %s\n", recd_version());
        return 0;
    }
    if (cli.check_config) {
        recd_config cfg;
        recd_config_error err;
        memset(&err, 0, sizeof err);
        if (recd_config_load_file(cli.check_config, &cfg, &err) < 0) {
            fprintf(stderr, "%s\n", err.text);
            return 1;
        }
        recd_config_free(&cfg);
        return 0;
    }
    recd_config cfg;
    memset(&cfg, 0, sizeof cfg);
    if (recd_cli_load_config(&cli, &cfg, why, sizeof why) < 0) {
        fprintf(stderr, "recd: %s\n", why);
        return 1;
    }
    if (cli.print_config) {
        recd_buf out = {0};
        int rc = recd_config_dump(&cfg, &out);
        if (rc == 0)
            fwrite(out.data, 1, out.len, stdout);
        recd_buf_free(&out);
        recd_config_free(&cfg);
        return rc == 0 ? 0 : 1;
    }
    return recd_server_run(&cfg, &cli);
}
