/* SPDX-License-Identifier: MIT */
/* `rectool info FILE... [--json]`: what a recording is, how it is timed and what looks wrong. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "formats.h"
#include "info_at.h"
#include "json_dump.h"
#include "json_text.h"
#include "recd/common.h"
#include "recd/format.h"
#include "report_util.h"
#include "sniff.h"

static const char usage[] =
    "usage: rectool info [--json] [--all] FILE...\n"
    "       rectool info --at T FILE...\n"
    "\n"
    "Describes recordings, recognised by content (SA-MP .rec incl. legacy, VC:MP and damaged\n"
    "files, and the table's other formats): header, counts, duration, sample rates (median/mean interval, samples\n"
    "per second), anomalies (equal or decreasing timestamps, gaps, teleports) and the problems\n"
    "a validating reader reports. Foreign replays (StarCraft II, ...) are read-only:\n"
    "their summary (version, map, players, event counts) comes from the format's describe hook.\n"
    "\n"
    "  -j, --json   print JSON: one indented object for one file, one object per line for several\n"
    "  -a, --all    every record, in the formats that have more to show (below)\n"
    "  -t, --at T   the state in effect at time T (the format's unit, or 90s, 1h2m) and the\n"
    "               seek point a reader starts at for it, read from there (FILE.idx: rectool index)\n"
    "  -h, --help   show this help\n"
    "\n"
    "Exit: 0 every file was recognised, 1 some file is not a recording or a replay is damaged,\n"
    "3 I/O error.\n";

/* A foreign replay (read-only entry): the describe hook's JSON object, merged into obj. Damage is
 * no I/O error: the keys decoded before it are kept, with "valid": false and the hook's error. */
static int describe_replay(const recd_format *f, const rt_input *in, json_t *obj, bool *damaged)
{
    recd_buf text = {0};
    char err[256] = "";
    int rc = recd_format_describe(f, in->data, in->len, &text, err, sizeof err);
    json_t *keys = text.len ? json_loadb((const char *)text.data, text.len, 0, NULL) : NULL;
    recd_buf_free(&text);
    if (rc == -ENOMEM || rc == -ELIBACC) { /* ELIBACC: the format's library is missing */
        json_decref(keys);
        if (rc == -ELIBACC)
            json_object_set_new(obj, "error", json_string(err));
        return rc;
    }
    if (json_is_object(keys))
        json_object_update(obj, keys);
    json_decref(keys);
    *damaged = rc < 0;
    json_object_set_new(obj, "valid", json_boolean(rc == 0));
    if (rc < 0 && !json_object_get(obj, "error"))
        json_object_set_new(obj, "error", json_string(err[0] ? err : recd_strerror(rc)));
    return 0;
}

/* The format's own keys: rectool's presentation when it has one, else the verify hook's verdict. */
static int describe_recording(const recd_format *f, const rt_input *in, json_t *obj,
                              bool show_progress, bool *damaged)
{
    if (!recd_format_is_recorded(f))
        return describe_replay(f, in, obj, damaged);
    const rt_format_tool *tool = rt_format_tool_of(f);
    if (tool && tool->info)
        return tool->info(in->data, in->len, obj, show_progress);
    recd_format_verdict verdict;
    recd_report report = {.limit = RT_REPORT_LIMIT};
    int rc = recd_format_verify(f, in->data, in->len, &verdict, &report);
    json_object_set_new(obj, "valid", json_boolean(verdict.valid));
    json_object_set_new(obj, f->unit, json_integer((json_int_t)verdict.units));
    json_object_set_new(obj, "problems", rt_report_json(&report));
    recd_report_free(&report);
    return rc == -ENOMEM ? rc : 0;
}

/* Builds the description of one file; *exit_code is raised for unrecognised or unreadable files. */
static json_t *describe(const char *path, bool show_progress, bool show_all, int *exit_code)
{
    json_t *obj = json_object();
    json_object_set_new(obj, "file", json_string(path));
    rt_input in;
    int rc = rt_input_open(&in, path);
    if (rc < 0) {
        rt_error("%s: %s", path, recd_strerror(rc));
        json_object_set_new(obj, "error", json_string(recd_strerror(rc)));
        *exit_code = RT_EXIT_IO;
        return obj;
    }
    rt_sniffed what;
    rt_sniff(in.data, in.len, &what);
    json_object_set_new(obj, "size", json_integer((json_int_t)in.len));
    json_object_set_new(obj, "format", json_string(what.name));
    json_object_set_new(obj, "description", json_string(what.description));
    if (what.format) {
        bool damaged = false;
        rc = describe_recording(what.format, &in, obj, show_progress, &damaged);
        if (damaged && *exit_code < RT_EXIT_INVALID)
            *exit_code = RT_EXIT_INVALID;
        const rt_format_tool *tool = rt_format_tool_of(what.format);
        json_t *details = tool && tool->info_details
                              ? tool->info_details(in.data, in.len, show_all)
                              : NULL;
        if (details)
            json_object_set_new(obj, what.format->name, details);
    } else if (what.text != RECD_TEXT_NONE) {
        rc = 0; /* text: rectool import turns it into a recording */
    } else {
        json_object_set_new(obj, "valid", json_false());
        if (*exit_code < RT_EXIT_INVALID)
            *exit_code = RT_EXIT_INVALID;
        rc = 0;
    }
    if (rc < 0) {
        json_t *said = json_object_get(obj, "error");
        rt_error("%s: %s", path,
                 json_is_string(said) ? json_string_value(said) : recd_strerror(rc));
        if (!said)
            json_object_set_new(obj, "error", json_string(recd_strerror(rc)));
        *exit_code = RT_EXIT_IO;
    }
    rt_input_close(&in);
    return obj;
}

/* The format tool of path's content when it prints a text of its own for `info`, else NULL. */
static const rt_format_tool *own_text_tool(const char *path)
{
    rt_input in;
    if (rt_input_open(&in, path) < 0)
        return NULL; /* describe() reports the error */
    const rt_format_tool *tool = rt_format_tool_of(recd_format_sniff(in.data, in.len, NULL));
    rt_input_close(&in);
    return tool && tool->info_text ? tool : NULL;
}

int cmd_info(int argc, char **argv)
{
    static const struct option options[] = {
        {"json", no_argument, NULL, 'j'}, {"all", no_argument, NULL, 'a'},
        {"at", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    bool as_json = false, show_all = false;
    const char *at = NULL;
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":jat:h", options, NULL)) != -1) {
        switch (c) {
        case 't': at = optarg; break;
        case 'j': as_json = true; break;
        case 'a': show_all = true; break;
        case 'h': rt_print_usage("info", usage); return RT_EXIT_OK;
        default: return rt_bad_option("info", usage, argv, c);
        }
    }
    int nfiles = argc - optind;
    if (nfiles < 1)
        return rt_usage_error("info", usage, "no FILE given");

    int exit_code = RT_EXIT_OK;
    for (int i = optind; at && i < argc; i++) {
        int rc = rt_info_at(argv[i], at);
        exit_code = rc > exit_code ? rc : exit_code;
    }
    for (int i = optind; !at && i < argc; i++) {
        const rt_format_tool *text_tool = as_json ? NULL : own_text_tool(argv[i]);
        if (text_tool) {
            if (i > optind)
                fputc('\n', stdout);
            int rc = text_tool->info_text(argv[i], show_all);
            exit_code = rc > exit_code ? rc : exit_code;
            continue;
        }
        json_t *obj = describe(argv[i], nfiles == 1, show_all, &exit_code);
        if (as_json) {
            if (rt_json_dump(stdout, obj, nfiles == 1) < 0)
                exit_code = RT_EXIT_IO;
            fputc('\n', stdout);
        } else {
            if (i > optind)
                fputc('\n', stdout);
            rt_print_json_as_text(stdout, obj);
        }
        json_decref(obj);
    }
    if (fflush(stdout) != 0)
        exit_code = RT_EXIT_IO;
    return exit_code;
}
