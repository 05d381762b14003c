/* `rectool verify FILE...`: exit 0 only when every file is complete and valid for its format;
 * otherwise one "FILE: offset N: what is wrong" line per problem and exit 1. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "recd/recap.h"
#include "recd/samp_rec.h"
#include "report_util.h"
#include "sniff.h"

static const char usage[] =
    "usage: rectool verify [-q] [-w] FILE...\n"
    "\n"
    "Checks that each file is a complete, valid recording for its format (recognised by content):\n"
    "a SA-MP .rec that SA-MP 0.3.7, open.mp and FCNPC all load, or a Recap .recap whose header\n"
    "and every gzip member decode. Legacy, VC:MP and text-damaged .rec files are named and\n"
    "rejected. Each problem prints as 'FILE: offset N: what is wrong'.\n"
    "\n"
    "  -q, --quiet      print nothing for valid files\n"
    "  -w, --warnings   also print warnings and notes (they never fail a file)\n"
    "  -h, --help       show this help\n"
    "\n"
    "Exit: 0 all valid, 1 some file is invalid, 3 I/O error.\n";

typedef struct verify_opts {
    bool quiet;
    bool warnings;
} verify_opts;

static int verify_rec(const rt_input *in, rt_format fmt, const verify_opts *o)
{
    recd_rec_info info;
    recd_report report = {.limit = RT_REPORT_LIMIT};
    memset(&info, 0, sizeof info);
    int rc = recd_rec_probe(in->data, in->len, &info, &report);
    bool valid = fmt == RT_FMT_SAMP_REC && rc == 0 && recd_report_errors(&report) == 0;
    if (fmt != RT_FMT_SAMP_REC)
        printf("%s: offset 0: %s (%s), not a valid SA-MP recording\n", in->path,
               rt_format_describe(fmt), recd_rec_layout_name(info.layout));
    size_t printed = rt_report_print(stdout, in->path, &report,
                                     o->warnings ? RECD_SEV_INFO : RECD_SEV_ERROR);
    if (!valid && fmt == RT_FMT_SAMP_REC && recd_report_errors(&report) == 0 && printed == 0)
        printf("%s: offset 0: rejected by the .rec reader (%s)\n", in->path,
               recd_rec_layout_name(info.layout));
    if (valid && !o->quiet)
        printf("%s: ok (samp-rec %s, %llu blocks)\n", in->path, recd_rec_layout_name(info.layout),
               (unsigned long long)info.block_count);
    recd_report_free(&report);
    return valid ? RT_EXIT_OK : RT_EXIT_INVALID;
}

static int verify_recap(const rt_input *in, const verify_opts *o)
{
    recd_recap_decode_result res;
    recd_report report = {.limit = RT_REPORT_LIMIT};
    memset(&res, 0, sizeof res);
    int rc = recd_recap_verify(in->data, in->len, &res, &report);
    bool valid = rc == 0 && recd_report_errors(&report) == 0;
    size_t printed = rt_report_print(stdout, in->path, &report,
                                     o->warnings ? RECD_SEV_INFO : RECD_SEV_ERROR);
    if (!valid && printed == 0)
        printf("%s: offset %llu: %s\n", in->path, (unsigned long long)res.valid_end,
               recd_strerror(rc));
    if (valid && !o->quiet)
        printf("%s: ok (recap, %llu ticks in %llu gzip members)\n", in->path,
               (unsigned long long)res.ticks, (unsigned long long)res.members);
    recd_report_free(&report);
    return valid ? RT_EXIT_OK : RT_EXIT_INVALID;
}

/* Names the first bytes, so a wrong file can be recognised by eye. */
static void print_unknown(const rt_input *in)
{
    printf("%s: offset 0: %s (%zu bytes, starting", in->path, rt_format_describe(RT_FMT_UNKNOWN),
           in->len);
    for (size_t i = 0; i < in->len && i < 8; i++)
        printf(" %02X", in->data[i]);
    printf(")\n");
}

static int verify_file(const char *path, const verify_opts *o)
{
    rt_input in;
    int rc = rt_input_open(&in, path);
    if (rc < 0) {
        rt_error("%s: %s", path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    int result = RT_EXIT_INVALID;
    rt_format fmt = rt_sniff(in.data, in.len, NULL);
    switch (fmt) {
    case RT_FMT_SAMP_REC:
    case RT_FMT_LEGACY_REC:
    case RT_FMT_VCMP_REC:
    case RT_FMT_MANGLED_REC:
        result = verify_rec(&in, fmt, o);
        break;
    case RT_FMT_RECAP:
        result = verify_recap(&in, o);
        break;
    case RT_FMT_JSONL:
    case RT_FMT_CSV:
        printf("%s: offset 0: %s, not a recording (rectool import converts it)\n", path,
               rt_format_describe(fmt));
        break;
    case RT_FMT_EMPTY:
        printf("%s: offset 0: %s\n", path, rt_format_describe(fmt));
        break;
    case RT_FMT_UNKNOWN:
    default:
        print_unknown(&in);
        break;
    }
    rt_input_close(&in);
    return result;
}

static int verify_file_cb(const char *path, const void *opts)
{
    return verify_file(path, opts);
}

int cmd_verify(int argc, char **argv)
{
    static const struct option options[] = {{"quiet", no_argument, NULL, 'q'},
                                            {"warnings", no_argument, NULL, 'w'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    verify_opts o = {false, false};
    int c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":qwh", options, NULL)) != -1) {
        switch (c) {
        case 'q': o.quiet = true; break;
        case 'w': o.warnings = true; break;
        case 'h': fputs(usage, stdout); return RT_EXIT_OK;
        default: return rt_bad_option("verify", usage, argv, c);
        }
    }
    if (optind >= argc)
        return rt_usage_error("verify", usage, "no FILE given");

    return rt_for_each_file("verifying", argv + optind, argc - optind, verify_file_cb, &o);
}
