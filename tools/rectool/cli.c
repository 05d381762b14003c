/* SPDX-License-Identifier: MIT */
/* Usage errors, getopt glue and path helpers shared by the rectool commands. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "recd/format_list.h"
#include "recd/units.h"

#include "commands.h"
#include "formats.h"
#include "progress.h"

/* One line saying what is wrong and where the options are: the whole help text would bury it. */
int rt_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    (void)usage; /* printed by --help only */
    va_list ap;
    fprintf(stderr, "rectool %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "; see 'rectool %s --help'\n", cmd);
    return RT_EXIT_USAGE;
}

int rt_exit_for_error(int rc)
{
    return rc == -ENOMEM || rc == -ELIBACC ? RT_EXIT_IO : RT_EXIT_INVALID;
}

int rt_parse_duration(const char *cmd, const char *usage, const char *option, const char *text,
                      uint64_t *ms)
{
    const char *why = NULL;
    if (recd_parse_duration_ms(text, ms, &why) < 0)
        return rt_usage_error(cmd, usage, "%s: invalid duration '%s': %s", option, text, why);
    return 0;
}

uint64_t rt_count_lines(const uint8_t *p, size_t len)
{
    uint64_t n = 0;
    const uint8_t *end = p + len;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        n++;
        if (!nl)
            break;
        p = nl + 1;
    }
    return n;
}

void rt_error(const char *fmt, ...)
{
    va_list ap;
    fputs("rectool: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void rt_getopt_reset(void)
{
    optind = 1;
    opterr = 0;
}

int rt_bad_option(const char *cmd, const char *usage, char **argv, int ret)
{
    /* getopt_long has already advanced optind past the offending argument. */
    const char *arg = optind > 0 ? argv[optind - 1] : "?";
    if (ret == ':')
        return rt_usage_error(cmd, usage, "option '%s' needs a value", arg);
    if (optopt && optopt != '?')
        return rt_usage_error(cmd, usage, "unknown option '-%c'", optopt);
    return rt_usage_error(cmd, usage, "unknown option '%s'", arg);
}

const char *rt_base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

const char *rt_path_ext(const char *path, char *buf, unsigned buflen)
{
    const char *base = rt_base_name(path);
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base || buflen == 0) {
        if (buflen)
            buf[0] = '\0';
        return buflen ? buf : "";
    }
    unsigned i = 0;
    for (const char *p = dot + 1; *p && i + 1 < buflen; p++)
        buf[i++] = (char)tolower((unsigned char)*p);
    buf[i] = '\0';
    return buf;
}

int rt_for_each_file(const char *label, char **files, int n,
                     int (*fn)(const char *path, const void *opts), const void *opts)
{
    rt_progress progress;
    rt_progress_start(&progress, label, (uint64_t)n, (unsigned)n >= RT_PROGRESS_MIN_FILES);
    rt_progress_set_unit(&progress, RT_UNIT_ITEMS, "files");
    int exit_code = RT_EXIT_OK;
    for (int i = 0; i < n; i++) {
        rt_progress_clear(&progress);
        int rc = fn(files[i], opts);
        fflush(stdout);
        if (rc > exit_code)
            exit_code = rc;
        rt_progress_update(&progress, (uint64_t)(i + 1));
    }
    rt_progress_finish(&progress);
    return exit_code;
}

/* The rectool entry's sessions for f, when it has any (whether generate and send make f). */
static const rt_session_synth *session_synth_of(const recd_format *f)
{
    const rt_format_tool *t = rt_format_tool_of(f);
    return t ? t->session_synth : NULL;
}

void rt_synth_format_names(char *buf, size_t len, const char *sep)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < recd_format__all_count() && used < len; i++) {
        const recd_format *f = recd_format__all_at(i);
        if (!recd_synth_has_format(f) && !session_synth_of(f))
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? sep : "", f->name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

int rt_parse_synth_format(const char *cmd, const char *usage, const char *text,
                          const recd_format **format, const rt_session_synth **session)
{
    const rt_format_tool *tool;
    const recd_format *f = rt_format_find_any(text, &tool);
    /* The entry's sessions are for its formats librecd has no generator for. */
    *session = f && tool && !recd_synth_has_format(f) ? tool->session_synth : NULL;
    if (*session) {
        *format = recd_synth_format_find((*session)->base);
        return 0;
    }
    char names[256];
    rt_synth_format_names(names, sizeof names, ", ");
    if (f && !recd_synth_has_format(f))
        return rt_usage_error(cmd, usage, "format '%s' has no synthetic data (these have: %s)", text,
                              names);
    if (!f)
        return rt_usage_error(cmd, usage, "unknown format '%s' (%s)", text, names);
    *format = f;
    return 0;
}

int rt_parse_synth_scenario(const char *cmd, const char *usage, const char *text,
                            recd_synth_scenario *scenario)
{
    if (recd_synth_scenario_parse(text, scenario) < 0)
        return rt_usage_error(cmd, usage, "unknown scenario '%s' (idle, walk, drive, mixed, traffic)", text);
    return 0;
}
