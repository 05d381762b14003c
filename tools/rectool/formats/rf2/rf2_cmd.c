/* SPDX-License-Identifier: MIT */
/* `rectool rf2 laps FILE [--json|--csv]`: the lap and sector table of every driver of an rFactor 2
 * replay, built from the replay's checkpoint events as librecd exports them (the common event
 * stream) and the drivers its summary lists. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "commands.h"
#include "file_io.h"
#include "formats.h"
#include "recd/format.h"

static const char usage[] =
    "usage: rectool rf2 laps [--json | --csv] FILE\n"
    "\n"
    "Lists every timed lap of every driver of an rFactor 2 replay (.vcr, VCR 1.08, gzip'd or not):\n"
    "lap number, lap time and the three sector times, from the replay's checkpoint events. A lap is\n"
    "a finish-line crossing with a lap time; its sectors come from the sector 1 and 2 crossings\n"
    "since the driver's previous finish-line crossing (empty when one is missing). Times are in\n"
    "seconds. A damaged replay prints the laps before the damage and exits 1.\n"
    "\n"
    "  -j, --json   one JSON object: {file, drivers: [{slot, name, vehicle, best, laps: [...]}]}\n"
    "  -c, --csv    CSV rows: slot,driver,vehicle,lap,crossing_time,lap_time,s1,s2,s3\n"
    "  -h, --help   show this help\n"
    "\n"
    "Exit: 0 ok, 1 not a replay or damaged, 2 usage error, 3 I/O error.\n";

typedef struct lap_row {
    int lap;
    double crossing_time, lap_time, s1, s2, s3; /* NAN when unknown */
} lap_row;

typedef struct driver_laps {
    int slot;
    const char *name, *vehicle; /* owned by the summary */
    double entry_time, exit_time;
    lap_row *rows;
    size_t count, cap;
    double split1, split2; /* time into the lap at the sector 1 and 2 crossings since the last lap */
} driver_laps;

typedef struct laps_table {
    driver_laps *drivers;
    size_t count;
    int error; /* -ENOMEM from the event callback */
} laps_table;

static double number_or_nan(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The driver entry of a slot at a time: the same rule as the summary's lap counts (slots are
 * reused when drivers leave, so the entry whose stay covers the time wins). */
static driver_laps *driver_of(laps_table *t, int slot, double time)
{
    driver_laps *best = NULL;
    for (size_t i = 0; i < t->count; i++) {
        driver_laps *d = &t->drivers[i];
        if (d->slot != slot)
            continue;
        if (time >= d->entry_time && time <= d->exit_time)
            return d;
        if (!best || d->entry_time <= time)
            best = d;
    }
    return best;
}

static int add_row(driver_laps *d, const lap_row *row)
{
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        lap_row *p = realloc(d->rows, cap * sizeof *p);
        if (!p)
            return -ENOMEM;
        d->rows = p;
        d->cap = cap;
    }
    d->rows[d->count++] = *row;
    return 0;
}

static int on_event(void *data, const recd_replay_event *ev)
{
    laps_table *t = data;
    if (strcmp(ev->kind, "checkpoint") != 0)
        return 0;
    json_t *f = json_loadb(ev->fields, ev->fields_len, 0, NULL);
    if (!f)
        return 0; /* librecd writes these fields: cannot happen, and one checkpoint is no reason to stop */
    driver_laps *d = driver_of(t, (int)ev->actor, ev->t);
    double sector = number_or_nan(f, "sector"), in_lap = number_or_nan(f, "lap_time");
    if (d && sector == 1) {
        d->split1 = in_lap;
    } else if (d && sector == 2) {
        d->split2 = in_lap;
    } else if (d && sector == 3 && in_lap > 0) {
        lap_row row = {(int)number_or_nan(f, "lap"), number_or_nan(f, "crossing_time"), in_lap,
                       d->split1, d->split2 - d->split1, in_lap - d->split2};
        if ((t->error = add_row(d, &row)) != 0) {
            json_decref(f);
            return t->error;
        }
    }
    if (d && sector == 3)
        d->split1 = d->split2 = NAN;
    json_decref(f);
    return 0;
}

/* Driver entries from the replay's summary (kept alive in *summary for their strings). */
static int load_drivers(const rt_input *in, const recd_format *f, json_t **summary, laps_table *t,
                        char *err, size_t errlen)
{
    recd_buf text = {0};
    int rc = recd_format_describe(f, in->data, in->len, &text, err, errlen);
    if (rc < 0) {
        recd_buf_free(&text);
        return rc;
    }
    *summary = json_loadb((const char *)text.data, text.len, 0, NULL);
    recd_buf_free(&text);
    if (!*summary)
        return -ENOMEM;
    json_t *list = json_object_get(*summary, "drivers");
    size_t n = json_array_size(list);
    t->drivers = calloc(n ? n : 1, sizeof *t->drivers);
    if (!t->drivers)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *d = json_array_get(list, i);
        driver_laps *dl = &t->drivers[t->count++];
        dl->slot = (int)json_integer_value(json_object_get(d, "slot"));
        dl->name = json_string_value(json_object_get(d, "name"));
        dl->vehicle = json_string_value(json_object_get(d, "vehicle"));
        dl->entry_time = number_or_nan(d, "entry_time");
        dl->exit_time = number_or_nan(d, "exit_time");
        dl->split1 = dl->split2 = NAN;
    }
    return 0;
}

static double best_lap(const driver_laps *d)
{
    double best = NAN;
    for (size_t i = 0; i < d->count; i++)
        if (isnan(best) || d->rows[i].lap_time < best)
            best = d->rows[i].lap_time;
    return best;
}

/* Milliseconds are what timing screens show; the f32 sources hold no more. */
static json_t *json_time(double s)
{
    return isfinite(s) ? json_real(round(s * 1000.0) / 1000.0) : json_null();
}

static void print_time(FILE *out, double s, const char *sep)
{
    if (isfinite(s))
        fprintf(out, "%s%.3f", sep, s);
    else
        fprintf(out, "%s", sep);
}

static int print_json(const char *path, const laps_table *t)
{
    json_t *root = json_object(), *drivers = json_array();
    json_object_set_new(root, "file", json_string(path));
    for (size_t i = 0; i < t->count; i++) {
        const driver_laps *d = &t->drivers[i];
        json_t *o = json_object(), *laps = json_array();
        json_object_set_new(o, "slot", json_integer(d->slot));
        json_object_set_new(o, "name", json_string(d->name ? d->name : ""));
        json_object_set_new(o, "vehicle", json_string(d->vehicle ? d->vehicle : ""));
        json_object_set_new(o, "best", json_time(best_lap(d)));
        for (size_t k = 0; k < d->count; k++) {
            const lap_row *r = &d->rows[k];
            json_t *l = json_object();
            json_object_set_new(l, "lap", json_integer(r->lap));
            json_object_set_new(l, "crossing_time", json_time(r->crossing_time));
            json_object_set_new(l, "lap_time", json_time(r->lap_time));
            json_object_set_new(l, "s1", json_time(r->s1));
            json_object_set_new(l, "s2", json_time(r->s2));
            json_object_set_new(l, "s3", json_time(r->s3));
            json_array_append_new(laps, l);
        }
        json_object_set_new(o, "laps", laps);
        json_array_append_new(drivers, o);
    }
    json_object_set_new(root, "drivers", drivers);
    int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    fputc('\n', stdout);
    json_decref(root);
    return rc;
}

/* RFC 4180: a cell with a comma, quote or line break is quoted, its quotes doubled. */
static void print_csv_cell(FILE *out, const char *s)
{
    if (!s || !strpbrk(s, ",\"\r\n")) {
        fputs(s ? s : "", out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void print_csv(const laps_table *t)
{
    printf("slot,driver,vehicle,lap,crossing_time,lap_time,s1,s2,s3\n");
    for (size_t i = 0; i < t->count; i++) {
        const driver_laps *d = &t->drivers[i];
        for (size_t k = 0; k < d->count; k++) {
            const lap_row *r = &d->rows[k];
            printf("%d,", d->slot);
            print_csv_cell(stdout, d->name);
            fputc(',', stdout);
            print_csv_cell(stdout, d->vehicle);
            printf(",%d", r->lap);
            print_time(stdout, r->crossing_time, ",");
            print_time(stdout, r->lap_time, ",");
            print_time(stdout, r->s1, ",");
            print_time(stdout, r->s2, ",");
            print_time(stdout, r->s3, ",");
            fputc('\n', stdout);
        }
    }
}

static void print_text(const laps_table *t)
{
    for (size_t i = 0; i < t->count; i++) {
        const driver_laps *d = &t->drivers[i];
        double best = best_lap(d);
        printf("%sslot %d: %s (%s), %zu timed laps", i ? "\n" : "", d->slot, d->name ? d->name : "",
               d->vehicle ? d->vehicle : "", d->count);
        print_time(stdout, best, ", best ");
        printf("\n  %4s %10s %9s %9s %9s\n", "lap", "lap_time", "s1", "s2", "s3");
        for (size_t k = 0; k < d->count; k++) {
            const lap_row *r = &d->rows[k];
            printf("  %4d", r->lap);
            const double cells[4] = {r->lap_time, r->s1, r->s2, r->s3};
            for (int c = 0; c < 4; c++) {
                if (isfinite(cells[c]))
                    printf(c ? " %9.3f" : " %10.3f", cells[c]);
                else
                    printf(c ? " %9s" : " %10s", "-");
            }
            printf("%s\n", r->lap_time == best ? "  best" : "");
        }
    }
}

enum { OUT_TEXT, OUT_JSON, OUT_CSV };

static int laps(int argc, char **argv)
{
    static const struct option options[] = {{"json", no_argument, NULL, 'j'},
                                            {"csv", no_argument, NULL, 'c'},
                                            {"help", no_argument, NULL, 'h'},
                                            {NULL, 0, NULL, 0}};
    int mode = OUT_TEXT, c;
    rt_getopt_reset();
    while ((c = getopt_long(argc, argv, ":jch", options, NULL)) != -1) {
        switch (c) {
        case 'j': mode = OUT_JSON; break;
        case 'c': mode = OUT_CSV; break;
        case 'h': fputs(usage, stdout); return RT_EXIT_OK;
        default: return rt_bad_option("rf2 laps", usage, argv, c);
        }
    }
    if (argc - optind != 1)
        return rt_usage_error("rf2 laps", usage, argc - optind < 1 ? "no FILE given" : "one FILE only");
    const char *path = argv[optind];
    const recd_format *f = recd_format_find("rf2-vcr");
    rt_input in;
    int rc = rt_input_open(&in, path);
    if (rc < 0) {
        rt_error("%s: %s", path, recd_strerror(rc));
        return RT_EXIT_IO;
    }
    if (!f || recd_format_sniff(in.data, in.len, NULL) != f) {
        rt_error("%s: not an rFactor 2 replay (no \"IRSR\" magic after a text line, gzip'd or not)", path);
        rt_input_close(&in);
        return RT_EXIT_INVALID;
    }
    char err[256] = "", damage[256] = "";
    json_t *summary = NULL;
    laps_table t = {NULL, 0, 0};
    int result = RT_EXIT_OK;
    rc = load_drivers(&in, f, &summary, &t, err, sizeof err);
    if (rc == 0) {
        rc = recd_format_export_events(f, in.data, in.len, on_event, &t, damage, sizeof damage);
        if (rc == -EBADMSG) { /* the laps before the damage still print */
            result = RT_EXIT_INVALID;
            rc = 0;
        }
    }
    if (rc < 0) {
        rt_error("%s: %s", path, rc == -EBADMSG && err[0] ? err : recd_strerror(rc));
        result = rc == -EBADMSG ? RT_EXIT_INVALID : RT_EXIT_IO;
    } else if (mode == OUT_JSON) {
        if (print_json(path, &t) < 0)
            result = RT_EXIT_IO;
    } else if (mode == OUT_CSV) {
        print_csv(&t);
    } else {
        print_text(&t);
    }
    if (fflush(stdout) != 0)
        result = RT_EXIT_IO;
    if (damage[0])
        rt_error("%s: damaged replay, laps up to the damage shown: %s", path, damage);
    for (size_t i = 0; i < t.count; i++)
        free(t.drivers[i].rows);
    free(t.drivers);
    json_decref(summary);
    rt_input_close(&in);
    return result;
}

static const char rf2_usage[] =
    "usage: rectool rf2 COMMAND [ARGS...]\n"
    "\n"
    "rFactor 2 replays (.vcr). Commands:\n"
    "  laps   lap and sector times per driver (rectool rf2 laps --help)\n";

static int cmd_rf2(int argc, char **argv)
{
    if (argc < 2)
        return rt_usage_error("rf2", rf2_usage, "no command given");
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(rf2_usage, stdout);
        return RT_EXIT_OK;
    }
    if (strcmp(argv[1], "laps") == 0)
        return laps(argc - 1, argv + 1);
    return rt_usage_error("rf2", rf2_usage, "unknown command '%s'", argv[1]);
}

static const char *const rf2_names[] = {"rf2-vcr", NULL};

static const rt_command rf2_commands[] = {
    {"rf2", cmd_rf2, "rFactor 2 replays: lap and sector table (rf2 laps)"},
    {NULL, NULL, NULL},
};

const rt_format_tool rt_format_tool__rf2 = {.names = rf2_names, .commands = rf2_commands};
