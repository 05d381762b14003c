/* SPDX-License-Identifier: MIT */
/* `rectool import FILE.jsonl|FILE.csv -o OUT`: builds a recording of any format the table records
 * from text messages, glue over librecd's readers and recd_importer. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "formats.h"
#include "progress.h"
#include "recd/format.h"
#include "recd/message.h"
#include "sniff.h"

/* The usage names the formats from the format table (those rectool can write), so it cannot
 * drift from it: the first %s is each format with its extension, the second their names. */
static const char usage_fmt[] =
    "usage: rectool import FILE -o OUT [--format FORMAT]\n"
    "\n"
    "Builds a recording from JSON lines or CSV messages (the input encoding is recognised by\n"
    "content: JSON lines start with '{'). The recording format comes from the open message or\n"
    "the CSV columns and must match OUT's extension unless --format forces it:\n"
    "  %s.\n"
    "OUT is written as OUT.part, then renamed.\n"
    "\n"
    "  -o, --output OUT      the recording to write (required)\n"
    "  -f, --format FORMAT   the format the input must hold, whatever OUT is called:\n"
    "                        %s\n"
    "  -h, --help            show this help\n"
    "\n"
    "Exit: 0 written, 1 the input is invalid, 2 usage error, 3 I/O error.\n";

/* Every format the table records, in table order, by name or with extensions. */
static void recorded_formats(char *buf, size_t len, bool with_ext)
{
    rt_format_names(buf, len, recd_format_is_recorded, " or ", with_ext);
}

typedef struct import_ctx {
    recd_importer importer;
    const char *out_ext; /* OUT's extension when several formats share it: any of them is fine */
    const char *out_path;
    rt_progress progress;
    uint64_t messages;
} import_ctx;

static int on_message(void *ctx, const recd_msg *m, char *err, size_t errlen)
{
    import_ctx *x = ctx;
    const recd_format *f = m->type == RECD_MSG_OPEN ? recd_format_of_msg(m->format) : NULL;
    if (f && x->out_ext && strcmp(f->extension, x->out_ext) != 0) {
        snprintf(err, errlen, "the input holds a %s recording but %s ends in .%s "
                 "(use .%s or --format)", f->name, x->out_path, x->out_ext, f->extension);
        return -EBADMSG;
    }
    if ((++x->messages & 1023) == 0)
        rt_progress_update(&x->progress, x->messages);
    return recd_importer_msg(&x->importer, m, err, errlen);
}

/* The recording format OUT's extension asks for (NONE and *shared_ext set when several formats
 * share it); false when no format uses the extension. */
static bool format_from_name(const char *out, recd_msg_format *expect, const char **shared_ext)
{
    char ext[16];
    rt_path_ext(out, ext, sizeof ext);
    const recd_format *first = recd_format_by_extension(ext, 0);
    *shared_ext = NULL;
    if (!first)
        return false;
    bool shared = recd_format_by_extension(ext, 1) != NULL;
    *expect = shared ? RECD_MSG_FMT_NONE : first->msg_format;
    if (shared)
        *shared_ext = first->extension;
    return true;
}

static int import_text(const rt_input *in, recd_text_encoding enc, import_ctx *x, rt_output *out)
{
    char err[256] = "";
    recd_importer_init(&x->importer, x->importer.expect, rt_output_sink(out));
    rt_progress_start(&x->progress, "importing", rt_count_lines(in->data, in->len),
                      !rt_output_is_terminal(out));
    rt_progress_set_unit(&x->progress, RT_UNIT_ITEMS, "lines");
    int rc = enc == RECD_TEXT_JSONL
                 ? recd_jsonl_read(in->data, in->len, on_message, x, err, sizeof err)
                 : recd_csv_read(in->data, in->len, on_message, x, err, sizeof err);
    if (rc == 0)
        rc = recd_importer_finish(&x->importer, err, sizeof err);
    rt_progress_finish(&x->progress);
    if (rc < 0) {
        rt_error("%s: %s", in->path, err[0] ? err : recd_strerror(rc));
        return rc == -EBADMSG || rc == -EINVAL || rc == -ERANGE ? RT_EXIT_INVALID : RT_EXIT_IO;
    }
    return RT_EXIT_OK;
}

int cmd_import(int argc, char **argv)
{
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"format", required_argument, NULL, 'f'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    const char *output = NULL, *forced = NULL;
    char names[256], exts[512], usage[2048];
    recorded_formats(names, sizeof names, false);
    recorded_formats(exts, sizeof exts, true);
    snprintf(usage, sizeof usage, usage_fmt, exts, names);
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":o:f:h", options, NULL)) != -1) {
        switch (c) {
        case 'o': output = optarg; break;
        case 'f': forced = optarg; break;
        case 'h': fputs(usage, stdout); return RT_EXIT_OK;
        default: return rt_bad_option("import", usage, argv, c);
        }
    }
    if (optind >= argc)
        return rt_usage_error("import", usage, "no FILE given");
    if (argc - optind > 1)
        return rt_usage_error("import", usage, "one FILE at a time");
    if (!output)
        return rt_usage_error("import", usage, "say where to write the recording: -o OUT");

    import_ctx x;
    memset(&x, 0, sizeof x);
    x.out_path = output;
    if (forced) {
        x.importer.expect = recd_msg_format_parse(forced);
        if (x.importer.expect == RECD_MSG_FMT_NONE)
            return rt_usage_error("import", usage,
                                  "unknown format '%s' (%s)", forced, names);
    } else if (!format_from_name(output, &x.importer.expect, &x.out_ext)) {
        return rt_usage_error("import", usage,
                              "cannot tell the format from '%s': its extension must be one of "
                              "%s; or use --format", output, exts);
    }
    const char *input = argv[optind];
    if (strcmp(output, "-") != 0 && rt_same_file(input, output))
        return rt_usage_error("import", usage, "the output must not be the input file");

    rt_input in;
    int rc = rt_input_open(&in, input);
    if (rc < 0) {
        rt_error("%s: %s", input, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    int exit_code;
    rt_sniffed what;
    rt_sniff(in.data, in.len, &what);
    if (what.text == RECD_TEXT_NONE) {
        rt_error("%s: %s; import reads JSON lines or CSV", input, what.description);
        exit_code = RT_EXIT_INVALID;
    } else {
        recd_text_encoding enc = what.text;
        rt_output out;
        rc = rt_output_open(&out, output);
        if (rc < 0) {
            rt_error("%s: %s", output, recd_strerror(rc));
            exit_code = RT_EXIT_IO;
        } else {
            exit_code = import_text(&in, enc, &x, &out);
            if (exit_code != RT_EXIT_OK) {
                rt_output_abort(&out);
            } else if ((rc = rt_output_commit(&out)) < 0) {
                rt_error("%s: %s", output, recd_strerror(rc));
                exit_code = RT_EXIT_IO;
            }
            recd_importer_free(&x.importer);
        }
    }
    rt_input_close(&in);
    return exit_code;
}
