/* Usage errors, getopt glue and path helpers shared by the rectool commands. */
#include "cli.h"

#include <ctype.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"

int rt_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rectool %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n%s", usage);
    return RT_EXIT_USAGE;
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

const char *rt_path_ext(const char *path, char *buf, unsigned buflen)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
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
