/* SPDX-License-Identifier: MIT */
/* `rectool carla collisions|blocked` and the CARLA text of `rectool info`: CARLA's recorder
 * queries (show_recorder_file_info, _collisions, _actors_blocked) answered from the file,
 * without a CARLA server, as CARLA's exact text or as JSON; CARLA's rectool entry (formats.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "carla_generate.h"
#include "cli.h"
#include "commands.h"
#include "formats.h"
#include "file_io.h"
#include "recd/carla.h"
#include "recd/format.h"

static const char usage[] =
    "usage: rectool carla COMMAND FILE [ARGS...]\n"
    "\n"
    "CARLA's recorder queries on a CARLA .log, without a CARLA server. The text is byte for\n"
    "byte what show_recorder_collisions and show_recorder_actors_blocked print (quirks\n"
    "included: docs/formats/carla.md, \"Queries\"), or the same rows as JSON.\n"
    "Commands:\n"
    "  collisions   pairs of actors that start touching (rectool carla collisions --help)\n"
    "  blocked      actors that stood still long enough (rectool carla blocked --help)\n"
    "\n"
    "Exit: 0 answered, 1 not a CARLA log, 2 usage error, 3 I/O error.\n";

static const char collisions_usage[] =
    "usage: rectool carla collisions FILE CAT1 CAT2 [--json]\n"
    "\n"
    "Pairs of actors that start touching, as show_recorder_collisions prints them. CAT1 and\n"
    "CAT2 are h (hero), v (vehicle), w (walker), t (traffic light), o (other) or a (any).\n"
    "\n"
    "  -j, --json      print JSON\n"
    "  -h, --help      show this help\n"
    "\n"
    "Exit: 0 answered, 1 not a CARLA log, 2 usage error, 3 I/O error.\n";

static const char blocked_usage[] =
    "usage: rectool carla blocked FILE [--min-time S] [--min-distance CM] [--json]\n"
    "\n"
    "Actors that moved less than --min-distance (cm, default 10) for at least --min-time\n"
    "(seconds, default 30), as show_recorder_actors_blocked prints them.\n"
    "\n"
    "  -t, --min-time S       seconds without moving (default 30)\n"
    "  -d, --min-distance CM  how far counts as not moving (default 10)\n"
    "  -j, --json             print JSON\n"
    "  -h, --help             show this help\n"
    "\n"
    "Exit: 0 answered, 1 not a CARLA log, 2 usage error, 3 I/O error.\n";

static int rt_carla_query(const char *path, int (*fn)(const uint8_t *, size_t, const void *, bool,
                                               recd_buf *, char *, size_t),
                   const void *args, bool json)
{
    rt_input in;
    int rc = rt_input_open(&in, path);
    if (rc < 0) {
        rt_error("%s: %s", path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    recd_buf out = {0};
    char err[256] = "";
    rc = fn(in.data, in.len, args, json, &out, err, sizeof err);
    rt_input_close(&in);
    int exit_code = RT_EXIT_OK;
    if (rc < 0) {
        rt_error("%s: %s", path, err[0] ? err : recd_strerror(rc));
        exit_code = rt_exit_for_error(rc);
    }
    if (out.len && fwrite(out.data, 1, out.len, stdout) != out.len)
        exit_code = RT_EXIT_IO;
    recd_buf_free(&out);
    if (fflush(stdout) != 0)
        exit_code = RT_EXIT_IO;
    return exit_code;
}

typedef struct info_args {
    bool show_all;
} info_args;
typedef struct collision_args {
    char c1, c2;
} collision_args;
typedef struct blocked_args {
    double min_time, min_distance;
} blocked_args;

static int run_info(const uint8_t *b, size_t n, const void *a, bool json, recd_buf *out,
                    char *err, size_t errlen)
{
    return recd_carla_info(b, n, ((const info_args *)a)->show_all, json, out, err, errlen);
}

static int run_collisions(const uint8_t *b, size_t n, const void *a, bool json, recd_buf *out,
                          char *err, size_t errlen)
{
    const collision_args *c = a;
    return recd_carla_collisions(b, n, c->c1, c->c2, json, out, err, errlen);
}

static int run_blocked(const uint8_t *b, size_t n, const void *a, bool json, recd_buf *out,
                       char *err, size_t errlen)
{
    const blocked_args *c = a;
    return recd_carla_blocked(b, n, c->min_time, c->min_distance, json, out, err, errlen);
}

static int carla_info_text(const char *path, bool show_all)
{
    info_args a = {show_all};
    return rt_carla_query(path, run_info, &a, false);
}

static json_t *carla_info_json(const uint8_t *buf, size_t len, bool show_all)
{
    recd_buf out = {0};
    char err[256];
    json_t *j = NULL;
    if (recd_carla_info(buf, len, show_all, true, &out, err, sizeof err) == 0)
        j = json_loadb((const char *)out.data, out.len, JSON_DECODE_ANY, NULL);
    recd_buf_free(&out);
    return j;
}

static bool parse_number(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return *s && !*end && *out >= 0 && *out < 1e15;
}

/* `rectool carla collisions|blocked ...`: argv[0] is the query. */
static int carla_query(int argc, char **argv, bool blocked)
{
    static const struct option collision_options[] = {{"json", no_argument, NULL, 'j'},
                                                      {"help", no_argument, NULL, 'h'},
                                                      {NULL, 0, NULL, 0}};
    static const struct option blocked_options[] = {{"json", no_argument, NULL, 'j'},
                                                    {"min-time", required_argument, NULL, 't'},
                                                    {"min-distance", required_argument, NULL, 'd'},
                                                    {"help", no_argument, NULL, 'h'},
                                                    {NULL, 0, NULL, 0}};
    const char *name = blocked ? "carla blocked" : "carla collisions";
    const char *use = blocked ? blocked_usage : collisions_usage;
    bool json = false;
    blocked_args b = {30.0, 10.0};
    rt_getopt_reset();
    int c;
    while ((c = getopt_long(argc, argv, blocked ? ":jht:d:" : ":jh",
                            blocked ? blocked_options : collision_options, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 't':
            if (!parse_number(optarg, &b.min_time))
                return rt_usage_error(name, use, "bad --min-time '%s' (seconds)", optarg);
            break;
        case 'd':
            if (!parse_number(optarg, &b.min_distance))
                return rt_usage_error(name, use, "bad --min-distance '%s' (cm)", optarg);
            break;
        case 'h': fputs(use, stdout); return RT_EXIT_OK;
        default: return rt_bad_option(name, use, argv, c);
        }
    }
    int n = argc - optind;
    if (blocked) {
        if (n != 1)
            return rt_usage_error(name, use, "blocked takes FILE");
        return rt_carla_query(argv[optind], run_blocked, &b, json);
    }
    if (n != 3)
        return rt_usage_error(name, use, "collisions takes FILE CAT1 CAT2");
    const char *c1 = argv[optind + 1], *c2 = argv[optind + 2];
    if (strlen(c1) != 1 || strlen(c2) != 1 || !strchr("hvwtoa", c1[0]) || !strchr("hvwtoa", c2[0]))
        return rt_usage_error(name, use, "categories are one of h v w t o a");
    collision_args a = {c1[0], c2[0]};
    return rt_carla_query(argv[optind], run_collisions, &a, json);
}

static int cmd_carla(int argc, char **argv)
{
    if (argc < 2)
        return rt_usage_error("carla", usage, "no query given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(usage, stdout);
        return RT_EXIT_OK;
    }
    if (strcmp(argv[1], "collisions") == 0)
        return carla_query(argc - 1, argv + 1, false);
    if (strcmp(argv[1], "blocked") == 0)
        return carla_query(argc - 1, argv + 1, true);
    return rt_usage_error("carla", usage, "unknown query '%s'", argv[1]);
}

static const char *const carla_names[] = {"carla", NULL};

static const rt_command carla_commands[] = {
    {"carla", cmd_carla, "CARLA's recorder queries on a CARLA .log: collisions, blocked actors"},
    {NULL, NULL, NULL},
};

/* Its lines of the commands' --help (rt_print_usage). */
static const rt_help_note carla_notes[] = {
    {"concat",
     "  CARLA .log: the next file is renumbered and timed like a .rec's, after deleting the\n"
     "    previous file's actors.\n"},
    {"cut",
     "  CARLA .log: milliseconds; --keep-time applies; the first frame adds every actor alive\n"
     "    then, where it stands.\n"},
    {"split",
     "  CARLA .log: milliseconds; --keep-time applies.\n"},
    {"info",
     "  CARLA .log: described as CARLA's show_recorder_file_info describes it, byte for byte\n"
     "    (--all: show_all=True); with --json its events (--all: every record) join the object.\n"},
    {"plot",
     "  CARLA .log: every vehicle and walker is a track.\n"},
    {"generate",
     "  carla: 'traffic' is its scenario (mixed means traffic too).\n"},
    {NULL, NULL},
};

const rt_format_tool rt_format_tool__carla = {
    .help_notes = carla_notes,
    .names = carla_names,
    .info_details = carla_info_json,
    .info_text = carla_info_text,
    .commands = carla_commands,
    .generate = &rt_carla_generate,
};
