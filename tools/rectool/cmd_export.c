/* SPDX-License-Identifier: MIT */
/* `rectool export FILE... --to jsonl|csv [-o OUT]`: recordings as text messages
 * (docs/protocol.md), glue over librecd's recd_export_msgs() and the JSONL/CSV writers. Several
 * files go to one folder in one run: small recordings cost more to start rectool for than to
 * export. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "edit_util.h"
#include "commands.h"
#include "file_io.h"
#include "progress.h"
#include "recd/format.h"
#include "recd/edit.h"
#include "recd/message.h"
#include "recd/seek_index.h"
#include "seek_util.h"
#include "formats.h"
#include "sniff.h"

/* Text is handed to the output in pieces this big: small enough to stay in cache, and kept for
 * the next file of a run, so its pages are touched once (a fresh page costs a fault). */
#define EXPORT_CHUNK (256u << 10)

static const char usage[] =
    "usage: rectool export FILE... --to jsonl|csv [--from T] [--until T] [-o OUT]\n"
    "\n"
    "Writes a recording (a format with messages, recognised by content) as JSON lines or CSV\n"
    "messages: open, state/event/flush..., close. 'rectool import' turns the text back into a\n"
    "byte-identical file. Only complete, standard files export; run 'rectool repair' first.\n"
    "Foreign replays (StarCraft II, ...) export as the common event stream\n"
    "{source, t, t_raw, actor, kind, fields} (docs/protocol.md, \"Foreign replays\"); they cannot\n"
    "be imported back. Several FILEs are exported in one run into the folder OUT (made if\n"
    "missing), each as OUT/NAME.jsonl or OUT/NAME.csv after its own name.\n"
    "\n"
    "  -t, --to FORMAT     jsonl or csv (required)\n"
    "  -f, --from T        only the samples at or after T (a number in the format's unit, or a\n"
    "                      duration: 90s, 1m30s); open and close are kept. With FILE.idx beside\n"
    "                      FILE (rectool index) reading starts at the keyframe before T\n"
    "  -u, --until T       only the samples before T (--to names the text format)\n"
    "  -o, --output OUT    write to OUT (via OUT.part) instead of standard output; with several\n"
    "                      FILEs, the folder to write into (required)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit: 0 done, 1 a file cannot be exported, 2 usage error, 3 I/O error (the worst of all\n"
    "FILEs: each is exported, or refused, on its own).\n";

typedef struct export_ctx {
    recd_text_encoding enc;
    recd_sink sink;
    recd_buf *text;
    recd_csv_writer csv;
    bool csv_ready;
    rt_progress progress;
    uint64_t states;
    int sink_error;
    const recd_format *format;
    /* --from/--until in the format's unit (until < 0: none); in_range: the last timed message
     * was inside (untimed ones, CARLA's events and flushes, follow it). */
    bool ranged, in_range;
    int64_t from, until;
    uint32_t unit_ms;
} export_ctx;

/* The range options as given; each file's format reads them in its own unit. */
static const char *range_from, *range_until;

static int drain(export_ctx *x)
{
    if (x->text->len == 0)
        return 0;
    int rc = x->sink.write(x->sink.ctx, x->text->data, x->text->len);
    recd_buf_reset(x->text);
    if (rc < 0)
        x->sink_error = rc;
    return rc;
}

static void note_progress(export_ctx *x, const recd_msg *m)
{
    if (m->type != RECD_MSG_STATE)
        return;
    x->states++;
    uint64_t done = x->states;
    int64_t unit = x->format->state_unit ? x->format->state_unit(m) : -1; /* the work estimate's */
    if (unit >= 0)
        done = (uint64_t)unit;
    if ((x->states & 1023) == 0)
        rt_progress_update(&x->progress, done);
}

static int on_message(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    export_ctx *x = ctx;
    int rc;
    if (x->enc == RECD_TEXT_JSONL) {
        rc = recd_msg_to_json(m, x->text);
    } else {
        if (!x->csv_ready) {
            rc = recd_csv_writer_init(&x->csv, m->format);
            if (rc < 0) {
                snprintf(err, errlen, "cannot start CSV for format '%s'",
                         recd_msg_format_name(m->format));
                return rc;
            }
            x->csv_ready = true;
        }
        rc = recd_csv_write(&x->csv, m, x->text);
    }
    if (rc < 0) {
        snprintf(err, errlen, "%s message cannot be written: %s", recd_msg_type_name(m->type),
                 recd_strerror(rc));
        return rc;
    }
    note_progress(x, m);
    if (x->text->len >= EXPORT_CHUNK && (rc = drain(x)) < 0) {
        snprintf(err, errlen, "write failed: %s", recd_strerror(rc));
        return rc;
    }
    return 0;
}

/* on_message for the messages of --from/--until only (open and close always). */
static int on_ranged_message(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    export_ctx *x = ctx;
    if (m->type != RECD_MSG_OPEN && m->type != RECD_MSG_CLOSE) {
        int64_t ms = recd_edit_msg_time_ms(m);
        if (ms >= 0) {
            int64_t t = ms / x->unit_ms;
            x->in_range = t >= x->from && (x->until < 0 || t < x->until);
        }
        if (!x->in_range)
            return 0;
    }
    return on_message(ctx, m, err, errlen);
}

/* Parses --from/--until for f into x: RT_EXIT_OK, or the usage error's exit code. */
static int parse_range(const recd_format *f, const char *path, export_ctx *x)
{
    x->from = 0;
    x->until = -1;
    x->unit_ms = recd_edit_unit_ms(f);
    if (!x->unit_ms) {
        rt_error("%s: %s files have no time line to select from", path, f->name);
        return RT_EXIT_INVALID;
    }
    const char *why = NULL;
    if (range_from && rt_edit_parse_time(range_from, f, &x->from, &why) < 0)
        return rt_usage_error("export", usage, "--from: invalid time '%s': %s", range_from, why);
    if (range_until && rt_edit_parse_time(range_until, f, &x->until, &why) < 0)
        return rt_usage_error("export", usage, "--until: invalid time '%s': %s", range_until, why);
    x->ranged = true;
    return RT_EXIT_OK;
}

/* The messages of --from/--until: from the seek point of --from (FILE.idx, or a scan), unless
 * RECTOOL_FULL_SCAN asks for the whole file (tests compare both). */
static int export_range(const rt_input *in, export_ctx *x, char *err, size_t errlen)
{
    if (rt_seek_full_scan())
        return recd_format_export(x->format, in->data, in->len, on_ranged_message, x, err, errlen);
    rt_input idx;
    rt_seek_index_open(in->path, &idx);
    int rc = recd_export_msgs_range(in->data, in->len, idx.data, idx.len, x->from, x->until,
                                    on_ranged_message, x, err, errlen);
    rt_seek_index_close(&idx);
    return rc;
}

/* A foreign replay's event: the common stream's JSON line or CSV row (recd/replay.h). */
static int on_replay_event(void *ctx, const recd_replay_event *ev)
{
    export_ctx *x = ctx;
    int rc = x->enc == RECD_TEXT_JSONL ? recd_replay_event_jsonl(ev, x->text)
                                       : recd_replay_event_csv(ev, x->text);
    if (rc == 0 && x->text->len >= EXPORT_CHUNK)
        rc = drain(x);
    return rc;
}

/* Read-only entries export events; recorded formats export messages. */
static int export_through_table(const recd_format *f, const rt_input *in, export_ctx *x, char *err,
                                size_t errlen)
{
    if (x->ranged)
        return export_range(in, x, err, errlen);
    if (recd_format_is_recorded(f))
        return recd_format_export(f, in->data, in->len, on_message, x, err, errlen);
    int rc = x->enc == RECD_TEXT_CSV ? recd_replay_event_csv_header(x->text) : 0;
    return rc < 0 ? rc
                  : recd_format_export_events(f, in->data, in->len, on_replay_event, x, err, errlen);
}

static bool exports(const recd_format *f)
{
    return f->export_msgs || f->export_events;
}

/* text: the caller's buffer, empty, kept from file to file. */
static int export_file(const rt_input *in, recd_text_encoding enc, const char *out_path,
                       recd_buf *text)
{
    rt_sniffed what;
    rt_sniff(in->data, in->len, &what);
    if (!rt_sniffed_recording(&what)) {
        char names[200];
        rt_format_names(names, sizeof names, exports, " and ", false);
        rt_error("%s: %s; only standard %s files export", in->path, what.description, names);
        return RT_EXIT_INVALID;
    }
    const recd_format *f = what.format;
    export_ctx x;
    memset(&x, 0, sizeof x);
    if (range_from || range_until) {
        int code = parse_range(f, in->path, &x);
        if (code != RT_EXIT_OK)
            return code;
    }
    rt_output out;
    int rc = rt_output_open(&out, out_path);
    if (rc < 0) {
        rt_error("%s: %s", out_path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    x.enc = enc;
    x.format = f;
    x.text = text;
    x.sink = rt_output_sink(&out);
    /* Progress in the format's units: blocks, or ticks against the header's frame count. */
    uint64_t work = recd_format_count_units(f, in->data, in->len);
    /* Any size: the bar waits RT_PROGRESS_DELAY_S, so quick exports draw nothing. Not when the
     * text itself goes to the same terminal. */
    rt_progress_start(&x.progress, "exporting", work, !rt_output_is_terminal(&out));
    rt_progress_set_unit(&x.progress, RT_UNIT_ITEMS, f->unit);

    char err[256] = "";
    rc = recd_buf_reserve(text, 2 * EXPORT_CHUNK); /* no copies while it fills to a chunk */
    if (rc == 0)
        rc = export_through_table(f, in, &x, err, sizeof err);
    if (rc == 0)
        rc = drain(&x);
    recd_buf_reset(text);
    rt_progress_finish(&x.progress);
    int exit_code = RT_EXIT_OK;
    if (rc < 0) {
        rt_output_abort(&out);
        rt_error("%s: %s", in->path, err[0] ? err : recd_strerror(rc));
        exit_code = x.sink_error < 0 ? RT_EXIT_IO : rt_exit_for_error(rc);
    } else if ((rc = rt_output_commit(&out)) < 0) {
        rt_error("%s: %s", out_path ? out_path : "stdout", recd_strerror(rc));
        exit_code = RT_EXIT_IO;
    }
    return exit_code;
}

static int export_path(const char *input, recd_text_encoding enc, const char *output,
                       recd_buf *text)
{
    rt_input in;
    int rc = rt_input_open(&in, input);
    if (rc < 0) {
        rt_error("%s: %s", input, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    int exit_code = export_file(&in, enc, output, text);
    rt_input_close(&in);
    return exit_code;
}

typedef struct export_into {
    recd_text_encoding enc;
    const char *dir, *ext;
    recd_buf *text; /* one buffer for every file */
} export_into;

/* One of several FILEs, into the folder as NAME.EXT (rt_for_each_file's callback). */
static int export_into_dir(const char *input, const void *opts)
{
    const export_into *o = opts;
    size_t len = strlen(o->dir) + strlen(rt_base_name(input)) + strlen(o->ext) + 3;
    char *out = malloc(len);
    if (!out) {
        rt_error("%s: %s", input, recd_strerror(-ENOMEM));
        return RT_EXIT_IO;
    }
    snprintf(out, len, "%s/%s.%s", o->dir, rt_base_name(input), o->ext);
    int code;
    if (rt_same_file(input, out)) {
        rt_error("%s: the output %s would be the input file; skipped", input, out);
        code = RT_EXIT_INVALID;
    } else {
        code = export_path(input, o->enc, out, o->text);
    }
    free(out);
    return code;
}

/* Several FILEs into the folder dir: every output name is checked before the first is written,
 * then each file is exported on its own; the exit code is the worst of them. */
static int export_many(char **inputs, int n, recd_text_encoding enc, const char *dir)
{
    recd_buf text = {0};
    export_into o = {enc, dir, enc == RECD_TEXT_CSV ? "csv" : "jsonl", &text};
    if (!dir || strcmp(dir, "-") == 0)
        return rt_usage_error("export", usage, "several FILEs need -o FOLDER to write into");
    for (int i = 0; i < n; i++) {
        const char *name = rt_base_name(inputs[i]);
        if (!name[0] || strcmp(name, "-") == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            return rt_usage_error("export", usage, "'%s' names no file to name an output after",
                                  inputs[i]);
        for (int k = 0; k < i; k++)
            if (strcmp(name, rt_base_name(inputs[k])) == 0)
                return rt_usage_error("export", usage,
                                      "'%s' and '%s' would both be written to %s/%s.%s",
                                      inputs[k], inputs[i], dir, name, o.ext);
    }
    struct stat st;
    if (mkdir(dir, 0777) < 0 && (errno != EEXIST || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)))
        return rt_usage_error("export", usage, "-o %s: not a folder to write into (%s)", dir,
                              errno == EEXIST ? "a file is in the way" : strerror(errno));
    int code = rt_for_each_file("exporting", inputs, n, export_into_dir, &o);
    recd_buf_free(&text);
    return code;
}

int cmd_export(int argc, char **argv)
{
    static const struct option options[] = {{"to", required_argument, NULL, 't'},
                                            {"from", required_argument, NULL, 'f'},
                                            {"until", required_argument, NULL, 'u'},
                                            {"output", required_argument, NULL, 'o'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *to = NULL, *output = NULL;
    int c;
    rt_getopt_reset();
    range_from = range_until = NULL;
    while ((c = getopt_long(argc, argv, ":t:f:u:o:h", options, NULL)) != -1) {
        switch (c) {
        case 't': to = optarg; break;
        case 'f': range_from = optarg; break;
        case 'u': range_until = optarg; break;
        case 'o': output = optarg; break;
        case 'h': rt_print_usage("export", usage); return RT_EXIT_OK;
        default: return rt_bad_option("export", usage, argv, c);
        }
    }
    if (optind >= argc)
        return rt_usage_error("export", usage, "no FILE given");
    if (!to)
        return rt_usage_error("export", usage, "say which text format: --to jsonl or --to csv");
    recd_text_encoding enc = recd_text_encoding_parse(to);
    if (enc == RECD_TEXT_NONE)
        return rt_usage_error("export", usage, "unknown format '%s' (jsonl or csv)", to);
    if (argc - optind > 1)
        return export_many(argv + optind, argc - optind, enc, output);
    const char *input = argv[optind];
    if (output && strcmp(output, "-") != 0 && rt_same_file(input, output))
        return rt_usage_error("export", usage, "the output must not be the input file");
    recd_buf text = {0};
    int code = export_path(input, enc, output, &text);
    recd_buf_free(&text);
    return code;
}
