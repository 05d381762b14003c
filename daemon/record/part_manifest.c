/* SPDX-License-Identifier: MIT */
/* A part's manifest (part_manifest.h): the values are copied on the loop thread when the part
 * ends and rendered by jansson on the thread pool once the writer knows the part's final name. */
#include "part_manifest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

typedef struct part_manifest {
    writer_sidecar sc; /* first: the writer hands it back as this */
    part_manifest_fields f;
    char *session, *instance, *format, *identity;
} part_manifest;

/* "2026-11-26T04:44:27.123Z"; "" when the time does not fit. */
static void utc_text(int64_t ms, char *out, size_t cap)
{
    out[0] = '\0';
    time_t sec = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)sec * 1000);
    struct tm tm;
    char day[32];
    if (!gmtime_r(&sec, &tm) || !strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm))
        return;
    snprintf(out, cap, "%s.%03dZ", day, frac);
}

/* Sets key to v (a new reference it steals); false when v or the set failed. */
static bool put(json_t *o, const char *key, json_t *v)
{
    return v && json_object_set_new(o, key, v) == 0;
}

static json_t *u64(uint64_t v) { return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v)); }

char *part_manifest_text(const part_manifest_fields *f)
{
    const part_tally *t = &f->tally;
    char start[40], end[40];
    utc_text(t->start_ms, start, sizeof start);
    utc_text(f->end_ms, end, sizeof end);
    json_t *o = json_object();
    if (!o)
        return NULL;
    bool ok = put(o, "manifest", json_string("recd-part")) &&
              put(o, "version", json_integer(PART_MANIFEST_VERSION)) &&
              put(o, "session", json_string(f->session)) &&
              put(o, "instance", json_string(f->instance)) &&
              put(o, "format", json_string(f->format)) &&
              (!f->identity || put(o, "identity", json_string(f->identity))) &&
              put(o, "part", u64(f->part)) &&
              put(o, "file", json_string(f->file)) && put(o, "samples", u64(t->samples)) &&
              put(o, "first_seq", t->has_seq ? u64(t->first_seq) : json_null()) &&
              put(o, "last_seq", t->has_seq ? u64(t->last_seq) : json_null()) &&
              put(o, "first_time_ms", t->has_time ? u64(t->first_time_ms) : json_null()) &&
              put(o, "last_time_ms", t->has_time ? u64(t->last_time_ms) : json_null()) &&
              put(o, "start_ms", json_integer(t->start_ms)) &&
              put(o, "end_ms", json_integer(f->end_ms)) &&
              put(o, "start", json_string(start)) && put(o, "end", json_string(end)) &&
              put(o, f->in_progress ? "in_progress" : "recovered",
                  json_boolean(f->in_progress || f->recovered));
    char *text = ok ? part_manifest_dump(o) : NULL;
    json_decref(o);
    return text;
}

char *part_manifest_dump(const json_t *o)
{
    char *text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_INDENT(2));
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return NULL;
    }
    line[n] = '\n';
    line[n + 1] = '\0';
    return line;
}

/* The writer's render, on the thread pool: only the final name is new. */
static char *render(const writer_sidecar *sc, const char *final_rel)
{
    const part_manifest *pm = (const part_manifest *)sc;
    part_manifest_fields f = pm->f;
    f.file = final_rel;
    return part_manifest_text(&f);
}

static void manifest_free(writer_sidecar *sc)
{
    part_manifest *pm = (part_manifest *)sc;
    free(pm->session);
    free(pm->instance);
    free(pm->format);
    free(pm->identity);
    free(pm);
}

writer_sidecar *part_manifest_sidecar(const part_manifest_fields *f)
{
    part_manifest *pm = calloc(1, sizeof *pm);
    if (!pm)
        return NULL;
    pm->sc.suffix = ".json";
    pm->sc.render = render;
    pm->sc.free = manifest_free;
    pm->session = strdup(f->session);
    pm->instance = strdup(f->instance);
    pm->format = strdup(f->format);
    pm->identity = f->identity ? strdup(f->identity) : NULL;
    if (!pm->session || !pm->instance || !pm->format || (f->identity && !pm->identity)) {
        manifest_free(&pm->sc);
        return NULL;
    }
    pm->f = *f;
    pm->f.session = pm->session;
    pm->f.instance = pm->instance;
    pm->f.format = pm->format;
    pm->f.identity = pm->identity;
    pm->f.file = NULL;
    return &pm->sc;
}
