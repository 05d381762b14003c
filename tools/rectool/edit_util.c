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
#include "formats.h"
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

static bool editable(const recd_format *f)
{
    return recd_edit_time_unit(f) != NULL;
}

const recd_format *rt_edit_format(const char *cmd, const rt_input *in)
{
    const recd_format *f = recd_format_sniff(in->data, in->len, NULL);
    if (!recd_edit_time_unit(f)) {
        char names[200];
        rt_format_names(names, sizeof names, editable, " and ", false);
        if (f)
            fprintf(stderr, "rectool %s: %s: %s files cannot be edited (%s can)\n", cmd, in->path,
                    f->name, names);
        else
            fprintf(stderr, "rectool %s: %s: not a recording recd knows\n", cmd, in->path);
        return NULL;
    }
    return f;
}

void rt_edit_progress_start(rt_edit_progress *p, const char *label, uint64_t input_bytes,
                            unsigned first_share)
{
    memset(p, 0, sizeof *p);
    /* Any size: the bar waits RT_PROGRESS_DELAY_S, so quick edits draw nothing. */
    rt_progress_start(&p->bar, label, input_bytes, true);
    rt_progress_set_unit(&p->bar, RT_UNIT_BYTES, NULL);
    p->first_part = first_share >= 100 ? input_bytes : input_bytes / 100 * first_share;
}

static void edit_part(void *data, uint64_t done, uint64_t total)
{
    rt_edit_progress *p = data;
    if (total)
        rt_progress_update(&p->bar, (uint64_t)((double)p->first_part * (double)done / (double)total));
}

recd_progress rt_edit_progress_watch(rt_edit_progress *p)
{
    recd_progress w = {edit_part, p};
    return w;
}

void rt_edit_progress_second_part(rt_edit_progress *p, uint64_t total)
{
    p->second_total = total;
    p->second_done = 0;
    rt_progress_update(&p->bar, p->first_part);
}

static void rt_edit_progress_second(void *data, uint64_t done, uint64_t total)
{
    rt_edit_progress *p = data;
    (void)total;
    if (p->second_total == 0)
        return;
    double f = (double)(p->second_done + done) / (double)p->second_total;
    uint64_t rest = p->bar.total - p->first_part;
    rt_progress_update(&p->bar, p->first_part + (uint64_t)((double)rest * (f < 1 ? f : 1)));
}

void rt_edit_progress_second_fraction(void *data, uint64_t done, uint64_t total)
{
    rt_edit_progress *p = data;
    if (total == 0)
        return;
    double f = (double)done / (double)total;
    uint64_t rest = p->bar.total - p->first_part;
    rt_progress_update(&p->bar, p->first_part + (uint64_t)((double)rest * (f < 1 ? f : 1)));
}

static void rt_edit_progress_step_done(rt_edit_progress *p, uint64_t n)
{
    p->second_done += n;
    rt_edit_progress_second(p, 0, 0);
}

void rt_edit_progress_finish(rt_edit_progress *p) { rt_progress_finish(&p->bar); }

int rt_edit_check(const char *cmd, const char *path, const recd_buf *data, recd_format_verdict *v,
                  rt_edit_progress *progress)
{
    const recd_format *f = recd_format_sniff(data->data, data->len, NULL);
    memset(v, 0, sizeof *v);
    recd_report report = {.limit = 1}; /* only for its progress: the verdict says what is wrong */
    if (progress)
        report.progress = (recd_progress){rt_edit_progress_second, progress};
    int checked = f ? recd_format_verify(f, data->data, data->len, v, &report) : -EBADMSG;
    recd_report_free(&report);
    if (progress) {
        rt_edit_progress_step_done(progress, data->len);
        rt_progress_clear(&progress->bar); /* before "ok" or an error; a next step redraws it */
    }
    if (checked < 0 || !v->valid) {
        fprintf(stderr, "rectool %s: internal error: the result does not verify (%s); %s not "
                        "written\n", cmd, v->fallback[0] ? v->fallback : "unknown format", path);
        return RT_EXIT_INVALID;
    }
    return 0;
}

int rt_edit_put(const char *cmd, const char *path, const recd_buf *data,
                const recd_format_verdict *v, bool quiet)
{
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
        fprintf(stderr, "%s: ok (%s)\n", path, v->summary);
    return RT_EXIT_OK;
}

/* Checks data with its format's verify hook and writes it to path (OUT.part + rename). An output
 * that does not verify is not written: "rectool CMD: internal error: ..." and RT_EXIT_INVALID.
 * Returns an exit code; prints "path: ok (summary)" unless quiet. progress (may be NULL) watches
 * the check as one step of its second part (rt_edit_progress_second_part); the bar is erased
 * before anything is printed. */
static int rt_edit_write(const char *cmd, const char *path, const recd_buf *data, bool quiet,
                         rt_edit_progress *progress)
{
    recd_format_verdict v;
    int exit_code = rt_edit_check(cmd, path, data, &v, progress);
    return exit_code ? exit_code : rt_edit_put(cmd, path, data, &v, quiet);
}

int rt_edit_conclude(const char *cmd, int rc, const char *err, const char *path,
                     const recd_buf *result, bool quiet, rt_edit_progress *progress)
{
    if (rc < 0) {
        rt_edit_progress_finish(progress);
        return rt_edit_fail(cmd, rc, err);
    }
    rt_edit_progress_second_part(progress, result->len);
    int exit_code = rt_edit_write(cmd, path, result, quiet, progress);
    rt_edit_progress_finish(progress);
    return exit_code;
}

int rt_edit_fail(const char *cmd, int rc, const char *err)
{
    fprintf(stderr, "rectool %s: %s\n", cmd, err && err[0] ? err : recd_strerror(rc));
    if (rc == -ENOMEM || rc == -EIO)
        return RT_EXIT_IO;
    return rc == -EINVAL ? RT_EXIT_USAGE : RT_EXIT_INVALID; /* EINVAL: options that do not fit */
}
