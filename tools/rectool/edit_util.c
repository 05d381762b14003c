/* SPDX-License-Identifier: MIT */
/* Input, argument parsing and verified output for the editing commands. */
#include "edit_util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "recd/format.h"
#include "recd/units.h"

int rt_edit_open(const char *cmd, const char *path, rt_input *in)
{
    int rc = rt_input_open(in, path);
    if (rc < 0) {
        fprintf(stderr, "rectool %s: %s: %s\n", cmd, path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    return 0;
}

recd_edit_input rt_edit_input_of(const rt_input *in)
{
    recd_edit_input e = {in->data, in->len};
    return e;
}

int rt_edit_parse_number(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno || !isfinite(v))
        return -EINVAL;
    *out = v;
    return 0;
}

int rt_edit_parse_time(const char *text, const recd_format *f, int64_t *out, const char **why)
{
    *why = NULL;
    bool digits = *text != '\0';
    for (const char *p = text; *p; p++)
        digits = digits && *p >= '0' && *p <= '9';
    if (digits) { /* a position in the file's own unit */
        char *end;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno || *end) {
            *why = "number too large";
            return -ERANGE;
        }
        *out = v;
        return 0;
    }
    uint64_t ms;
    int rc = recd_parse_duration_ms(text, &ms, why);
    if (rc < 0)
        return rc;
    uint64_t unit_ms = recd_edit_unit_ms(f);
    if (unit_ms == 0) {
        *why = "the file cannot be edited";
        return -EINVAL;
    }
    uint64_t v = (ms + unit_ms / 2) / unit_ms; /* whole units, rounded */
    if (v > (uint64_t)INT64_MAX) {
        *why = "value too large";
        return -ERANGE;
    }
    *out = (int64_t)v;
    return 0;
}

int rt_edit_parse_seconds(const char *text, double *out, const char **why)
{
    *why = NULL;
    double s;
    if (rt_edit_parse_number(text, &s) == 0) {
        if (s < 0) {
            *why = "negative values are not allowed";
            return -EINVAL;
        }
        *out = s;
        return 0;
    }
    uint64_t ms;
    int rc = recd_parse_duration_ms(text, &ms, why);
    if (rc == 0)
        *out = (double)ms / 1000.0;
    return rc;
}

const char *rt_edit_unit_words(const recd_format *f, char *buf, size_t n)
{
    uint32_t unit_ms = recd_edit_unit_ms(f);
    if (unit_ms <= 1)
        return "milliseconds";
    snprintf(buf, n, "%ss of %" PRIu32 " ms", recd_edit_time_unit(f), unit_ms);
    return buf;
}

int rt_edit_parse_vec3(const char *text, double out[3])
{
    char buf[256];
    if (strlen(text) >= sizeof buf)
        return -EINVAL;
    snprintf(buf, sizeof buf, "%s", text);
    char *save = NULL, *p = strtok_r(buf, ",", &save);
    for (int i = 0; i < 3; i++) {
        if (!p || rt_edit_parse_number(p, &out[i]) < 0)
            return -EINVAL;
        p = strtok_r(NULL, ",", &save);
    }
    return p ? -EINVAL : 0;
}

const recd_format *rt_edit_format(const char *cmd, const rt_input *in)
{
    const recd_format *f = recd_format_sniff(in->data, in->len, NULL);
    if (!recd_edit_time_unit(f)) {
        fprintf(stderr, "rectool %s: %s: %s%s\n", cmd, in->path, f ? f->name : "not a recording recd knows",
                f ? " files cannot be edited (.rec, .recap and CARLA .log can)" : "");
        return NULL;
    }
    return f;
}

int rt_edit_write(const char *cmd, const char *path, const recd_buf *data, bool quiet)
{
    const recd_format *f = recd_format_sniff(data->data, data->len, NULL);
    recd_format_verdict v;
    memset(&v, 0, sizeof v);
    if (!f || recd_format_verify(f, data->data, data->len, &v, NULL) < 0 || !v.valid) {
        fprintf(stderr, "rectool %s: internal error: the result does not verify (%s); %s not "
                        "written\n", cmd, v.fallback[0] ? v.fallback : "unknown format", path);
        return RT_EXIT_INVALID;
    }
    rt_output out;
    int rc = rt_output_open(&out, path);
    if (rc == 0) {
        recd_sink sink = rt_output_sink(&out);
        rc = sink.write(sink.ctx, data->data, data->len);
        if (rc < 0)
            rt_output_abort(&out);
        else
            rc = rt_output_commit(&out);
    }
    if (rc < 0) {
        fprintf(stderr, "rectool %s: %s: %s\n", cmd, path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    if (!quiet && strcmp(path, "-") != 0)
        fprintf(stderr, "%s: ok (%s)\n", path, v.summary);
    return RT_EXIT_OK;
}

int rt_edit_fail(const char *cmd, int rc, const char *err)
{
    fprintf(stderr, "rectool %s: %s\n", cmd, err && err[0] ? err : recd_strerror(rc));
    if (rc == -ENOMEM || rc == -EIO)
        return RT_EXIT_IO;
    return rc == -EINVAL ? RT_EXIT_USAGE : RT_EXIT_INVALID; /* EINVAL: options that do not fit */
}
