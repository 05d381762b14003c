/* SPDX-License-Identifier: MIT */
/* benchgen entry point: dispatches to prepare, send-tcp, send-udp, send-nats and sink-udp. */
#include <stdio.h>
#include <string.h>

#include "benchgen.h"

static const char usage[] =
    "usage: benchgen prepare  --format F --sessions N --samples TOTAL --out DIR [options]\n"
    "       benchgen send-tcp --to 127.0.0.1:PORT --conn FILE[,FILE...] [--conn ...] [options]\n"
    "       benchgen send-udp --to 127.0.0.1:PORT --file FILE --framing wire|lines --rate R\n"
    "                         --seconds S\n"
    "       benchgen send-nats --to nats://127.0.0.1:PORT/PREFIX --file FILE [--file ...]\n"
    "                         [--partitions N] [--max-in-flight N]\n"
    "       benchgen sink-udp --listen 127.0.0.1:PORT --out FILE   (until SIGTERM)\n"
    "Run a subcommand with --help for its options. Traffic only ever goes to 127.0.0.0/8.\n";

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "prepare") == 0)
        return bg_cmd_prepare(argc - 1, argv + 1);
    if (strcmp(argv[1], "send-tcp") == 0)
        return bg_cmd_send_tcp(argc - 1, argv + 1);
    if (strcmp(argv[1], "send-udp") == 0)
        return bg_cmd_send_udp(argc - 1, argv + 1);
    if (strcmp(argv[1], "send-nats") == 0)
        return bg_cmd_send_nats(argc - 1, argv + 1);
    if (strcmp(argv[1], "sink-udp") == 0)
        return bg_cmd_sink_udp(argc - 1, argv + 1);
    fprintf(stderr, "benchgen: unknown subcommand '%s'\n%s", argv[1], usage);
    return 2;
}
