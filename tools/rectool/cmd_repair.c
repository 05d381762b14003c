/* SPDX-License-Identifier: MIT */
/* `rectool repair FILE -o OUT`: writes the longest valid prefix of a damaged recording (its
 * format's repair hook in librecd) through OUT.part + rename, and says what it did. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "progress.h"
#include "recd/common.h"
#include "recd/format.h"
#include "formats.h"
#include "sniff.h"

static const char usage[] =
    "usage: rectool repair FILE -o OUT\n"
    "       rectool repair --in-place FILE...\n"
    "       rectool repair --out-dir DIR FILE...\n"
    "\n"
    "Cuts a damaged recording back to what was completely written: a SA-MP .rec keeps its header\n"
    "and every whole block (a missing 1000 signature is restored); other formats as below.\n"
    "The output is written as OUT.part and renamed when complete; it always verifies.\n"
    "\n"
    "  -o, --output OUT    where to write the repaired file (must not be FILE)\n"
    "  -i, --in-place      replace each FILE with its repaired version\n"
    "  -d, --out-dir DIR   write DIR/<name of FILE> for each FILE\n"
    "  -q, --quiet         print only failures\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit: 0 repaired (or nothing to repair), 1 some file cannot be repaired, 2 usage error,\n"
    "3 I/O error.\n";

typedef struct repair_opts {
    const char *output;
    const char *out_dir;
    bool in_place;
    bool quiet;
} repair_opts;

static char *output_path(const repair_opts *o, const char *input)
{
    if (o->output)
        return strdup(o->output);
    if (o->in_place)
        return strdup(input);
    const char *base = rt_base_name(input);
    size_t n = strlen(o->out_dir) + 1 + strlen(base) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", o->out_dir, base);
    return p;
}

static int write_output(const char *path, const recd_buf *data)
{
    rt_output out;
    int rc = rt_output_open(&out, path);
    if (rc < 0)
        return rc;
    recd_sink sink = rt_output_sink(&out);
    rc = sink.write(sink.ctx, data->data, data->len);
    if (rc < 0) {
        rt_output_abort(&out);
        return rc;
    }
    return rt_output_commit(&out);
}

static bool repairs(const recd_format *f)
{
    return f->repair != NULL;
}

/* Why r's input is not repaired: what it is, and the formats repair handles (the table's). */
static void refuse(recd_repair_result *r, const char *what)
{
    char names[200];
    rt_format_names(names, sizeof names, repairs, " and ", false);
    snprintf(r->detail, sizeof r->detail, "%s; repair only handles standard %s files", what, names);
}

static int repair_file(const char *input, const repair_opts *o)
{
    char *output = output_path(o, input);
    if (!output) {
        rt_error("%s: out of memory", input);
        return RT_EXIT_IO;
    }
    if (!o->in_place && rt_same_file(input, output)) {
        free(output);
        rt_error("%s: the output is the input file; use --in-place to replace it", input);
        return RT_EXIT_USAGE;
    }
    rt_input in;
    int rc = rt_input_open(&in, input);
    if (rc < 0) {
        rt_error("%s: %s", input, recd_strerror(rc));
        free(output);
        return RT_EXIT_IO;
    }
    recd_repair_result r;
    memset(&r, 0, sizeof r);
    rt_sniffed what;
    rt_sniff(in.data, in.len, &what);
    bool supported = rt_sniffed_recording(&what) && what.format->repair;
    if (supported) {
        rt_progress progress;
        rt_progress_start(&progress, "repairing", in.len, in.len >= RT_PROGRESS_MIN_BYTES);
        rt_progress_set_unit(&progress, RT_UNIT_BYTES, NULL);
        r.progress = (recd_progress){rt_progress_lib_cb, &progress};
        rc = recd_format_repair(what.format, in.data, in.len, &r);
        rt_progress_finish(&progress);
    }
    else
        refuse(&r, what.description);
    int exit_code = RT_EXIT_OK;
    if (!supported || rc == -EBADMSG) {
        printf("%s: cannot repair: %s\n", input, r.detail);
        exit_code = RT_EXIT_INVALID;
    } else if (rc < 0) {
        rt_error("%s: %s", input, recd_strerror(rc));
        exit_code = RT_EXIT_IO;
    } else {
        /* In place and unchanged: leave the file alone rather than rewrite identical bytes. */
        bool write = !(o->in_place && !r.changed);
        rc = write ? write_output(output, &r.out) : 0;
        if (rc < 0) {
            rt_error("%s: %s", output, recd_strerror(rc));
            exit_code = RT_EXIT_IO;
        } else if (!o->quiet) {
            printf("%s: %s -> %s: kept %llu %s (%llu bytes), dropped %llu bytes; %s\n", input,
                   r.changed ? "repaired" : "nothing to repair", write ? output : "unchanged",
                   (unsigned long long)r.kept_units, r.unit, (unsigned long long)r.kept_bytes,
                   (unsigned long long)r.dropped_bytes, r.detail);
        }
    }
    recd_buf_free(&r.out);
    rt_input_close(&in);
    free(output);
    return exit_code;
}

static int repair_file_cb(const char *path, const void *opts)
{
    return repair_file(path, opts);
}

int cmd_repair(int argc, char **argv)
{
    static const struct option options[] = {{"output", required_argument, NULL, 'o'},
                                            {"in-place", no_argument, NULL, 'i'},
                                            {"out-dir", required_argument, NULL, 'd'},
                                            {"quiet", no_argument, NULL, 'q'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    repair_opts o = {NULL, NULL, false, false};
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":o:id:qh", options, NULL)) != -1) {
        switch (c) {
        case 'o': o.output = optarg; break;
        case 'i': o.in_place = true; break;
        case 'd': o.out_dir = optarg; break;
        case 'q': o.quiet = true; break;
        case 'h': rt_print_usage("repair", usage); return RT_EXIT_OK;
        default: return rt_bad_option("repair", usage, argv, c);
        }
    }
    int nfiles = argc - optind;
    if (nfiles < 1)
        return rt_usage_error("repair", usage, "no FILE given");
    int destinations = (o.output != NULL) + (o.out_dir != NULL) + (o.in_place && !o.output);
    if (destinations == 0)
        return rt_usage_error("repair", usage, "say where to write: -o OUT, --out-dir or --in-place");
    if (o.output && o.out_dir)
        return rt_usage_error("repair", usage, "-o and --out-dir exclude each other");
    if (o.in_place && o.out_dir)
        return rt_usage_error("repair", usage, "--in-place and --out-dir exclude each other");
    if (o.output && nfiles > 1)
        return rt_usage_error("repair", usage, "-o takes one FILE; use --out-dir for several");
    if (o.output && strcmp(o.output, "-") == 0)
        return rt_usage_error("repair", usage, "the output must be a file");

    return rt_for_each_file("repairing", argv + optind, argc - optind, repair_file_cb, &o);
}
