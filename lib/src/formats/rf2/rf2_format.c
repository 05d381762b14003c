/* SPDX-License-Identifier: MIT */
/* The rFactor 2 replay entry of the format table (read-only): .vcr files of VCR 1.08, recognised
 * by the "IRSR" magic after a text line (inside gzip or not). Verification walks every slice;
 * export turns the events into the common event stream; describe summarises session, track, mod,
 * drivers and lap counts. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/rf2/rf2_events.h"
#include "formats/rf2/rf2_json.h"
#include "formats/rf2/rf2_vcr.h"
#include "base/text.h"
#include "recd/buf_printf.h"
#include "recd/format.h"

#define SOURCE "rf2-vcr"
#define DOCUMENTED_VERSION 1.08f

static int rf2_sniff(const uint8_t *head, size_t len, recd_sniff_result *out)
{
    bool compressed;
    if (!rf2_vcr_sniff(head, len, &compressed))
        return RECD_SNIFF_NONE;
    out->standard = true;
    out->kind = "rf2-vcr";
    out->description = compressed ? "rFactor 2 replay (gzip'd VCR)" : "rFactor 2 replay (VCR)";
    return RECD_SNIFF_SIGNATURE;
}

static void set_err(char *err, size_t errlen, const rf2_vcr *v)
{
    if (err && errlen)
        snprintf(err, errlen, "offset %llu%s: %s", (unsigned long long)v->damage_offset,
                 v->compressed ? " of the inflated data" : "", v->damage);
}

static int count_event(void *data, const rf2_event *ev)
{
    (void)data;
    (void)ev;
    return 0;
}

static int rf2_verify(const uint8_t *buf, size_t len, recd_format_verdict *out, recd_report *report)
{
    rf2_vcr v;
    rf2_walk w = {0};
    int rc = rf2_vcr_open(&v, buf, len);
    if (rc == -ENOMEM) {
        rf2_vcr_close(&v);
        return rc;
    }
    if (rc == 0)
        rf2_vcr_events(&v, count_event, NULL, &w);
    out->units = w.slices;
    out->valid = rc == 0 && v.header_done && !v.damaged;
    const char *where = v.compressed ? " (offset in the inflated data)" : "";
    if (!out->valid) {
        snprintf(out->fallback, sizeof out->fallback, "%s%s", v.damage, where);
        out->fallback_offset = v.damage_offset;
        if (report)
            recd_report_add(report, RECD_SEV_ERROR, v.damage_offset, "rf2-damaged", "%s%s", v.damage, where);
    } else {
        snprintf(out->summary, sizeof out->summary, "rf2-vcr %.2f%s, %u slices, %llu events, %u drivers",
                 (double)v.version, v.compressed ? " gzip'd" : "", w.slices, (unsigned long long)w.events,
                 v.drivers_read);
        if (report && w.events != v.event_count)
            recd_report_add(report, RECD_SEV_WARNING, v.slices_offset - 12, "rf2-event-count",
                            "the header declares %u events, the slices hold %llu", v.event_count,
                            (unsigned long long)w.events);
    }
    if (report && rc == 0 && fabsf(v.version - DOCUMENTED_VERSION) > 0.001f)
        recd_report_add(report, RECD_SEV_WARNING, 0, "rf2-version",
                        "VCR version %g: only 1.08 is documented, fields may mean other things",
                        (double)v.version);
    rf2_vcr_close(&v);
    return out->valid ? 0 : -EBADMSG;
}

/* export_events: each event decoded and handed on as the common stream. */
typedef struct export_ctx {
    recd_replay_event_fn fn;
    void *data;
    recd_buf fields;
} export_ctx;

static int export_one(void *data, const rf2_event *ev)
{
    export_ctx *x = data;
    const char *kind = "unknown";
    recd_buf_reset(&x->fields);
    int rc = rf2_event_decode(ev, &kind, &x->fields);
    if (rc < 0)
        return rc;
    double t = isfinite(ev->time) ? (double)ev->time : 0.0; /* damaged clocks read as 0 */
    recd_replay_event out = {SOURCE, t, (int64_t)llround(t * 1000.0),
                             ev->slot == RF2_SLOT_NONE ? -1 : ev->slot, kind,
                             (const char *)x->fields.data, x->fields.len};
    return x->fn(x->data, &out);
}

static int rf2_export_events(const uint8_t *buf, size_t len, recd_replay_event_fn on_event, void *data,
                             char *err, size_t errlen)
{
    rf2_vcr v;
    export_ctx x = {on_event, data, {0}};
    int rc = rf2_vcr_open(&v, buf, len);
    if (rc == 0)
        rc = rf2_vcr_events(&v, export_one, &x, NULL);
    if (rc == 0 && v.damaged)
        rc = -EBADMSG;
    if (rc == -EBADMSG)
        set_err(err, errlen, &v);
    recd_buf_free(&x.fields);
    rf2_vcr_close(&v);
    return rc;
}

/* describe: counts gathered in one walk. */
#define KIND_SLOTS 16
typedef struct summary {
    const rf2_vcr *v;
    uint64_t *laps; /* per driver entry */
    const char *kinds[KIND_SLOTS];
    uint64_t kind_counts[KIND_SLOTS];
} summary;

/* The driver entry an event of slot at time belongs to: slots are reused when drivers leave, so
 * the entry whose stay covers the time wins, else the last one that entered before it. */
static long driver_of(const rf2_vcr *v, uint8_t slot, float time)
{
    long best = -1;
    for (uint32_t i = 0; i < v->drivers_read; i++) {
        const rf2_driver *d = &v->drivers[i];
        if (d->slot != slot)
            continue;
        if (time >= d->entry_time && time <= d->exit_time)
            return (long)i;
        if (best < 0 || d->entry_time <= time)
            best = (long)i;
    }
    return best;
}

static int summarise_one(void *data, const rf2_event *ev)
{
    summary *s = data;
    const char *kind = rf2_event_kind(ev);
    for (size_t i = 0; i < KIND_SLOTS; i++) {
        if (!s->kinds[i])
            s->kinds[i] = kind;
        if (s->kinds[i] == kind) { /* static strings: one pointer per kind */
            s->kind_counts[i]++;
            break;
        }
    }
    rf2_checkpoint cp;
    if (rf2_event_checkpoint(ev, &cp) && cp.sector == 3 && cp.lap_time > 0) {
        long d = driver_of(s->v, ev->slot, ev->time);
        if (d >= 0)
            s->laps[d]++;
    }
    return 0;
}

static int put_text(recd_buf *out, const char *key, rf2_text t)
{
    int rc = recd_buf_printf(out, ",\"%s\":", key);
    return rc < 0 ? rc : rf2_json_text(out, t.p, t.len);
}

static int put_float(recd_buf *out, const char *key, float f)
{
    int rc = recd_buf_printf(out, ",\"%s\":", key);
    return rc < 0 ? rc : rf2_json_f32(out, f);
}

static int describe_drivers(recd_buf *out, const rf2_vcr *v, const uint64_t *laps)
{
    int rc = text_puts(out, ",\"drivers\":[");
    for (uint32_t i = 0; rc == 0 && i < v->drivers_read; i++) {
        const rf2_driver *d = &v->drivers[i];
        rc = recd_buf_printf(out, "%s{\"slot\":%u", i ? "," : "", d->slot);
        if (rc == 0)
            rc = put_text(out, "name", d->name);
        if (rc == 0)
            rc = put_text(out, "co_driver", d->co_driver);
        if (rc == 0)
            rc = put_text(out, "vehicle", d->vehicle);
        if (rc == 0)
            rc = put_text(out, "vehicle_version", d->vehicle_version);
        if (rc == 0)
            rc = put_text(out, "vehicle_id", d->vehicle_id);
        if (rc == 0)
            rc = put_text(out, "veh_file", d->veh_file);
        if (rc == 0)
            rc = put_float(out, "entry_time", d->entry_time);
        if (rc == 0)
            rc = put_float(out, "exit_time", d->exit_time);
        if (rc == 0)
            rc = recd_buf_printf(out, ",\"laps\":%llu}", (unsigned long long)laps[i]);
    }
    return rc < 0 ? rc : text_puts(out, "]");
}

static int describe_header(recd_buf *out, const rf2_vcr *v)
{
    int rc = recd_buf_printf(out, "{\"format\":\"" SOURCE "\",\"compressed\":%s",
                             v->compressed ? "true" : "false");
    if (rc == 0)
        rc = put_text(out, "preamble", v->preamble);
    if (rc == 0)
        rc = put_float(out, "version", v->version);
    if (rc == 0)
        rc = recd_buf_printf(out, ",\"session\":\"%s\",\"session_code\":%u,\"private\":%s",
                             rf2_session_name(v->session_info), v->session_info & 0x0F,
                             v->session_info & 0x80 ? "true" : "false");
    if (rc == 0)
        rc = put_text(out, "track", v->track);
    if (rc == 0)
        rc = text_puts(out, ",\"mod\":{\"name\":");
    if (rc == 0)
        rc = rf2_json_text(out, v->mod_name.p, v->mod_name.len);
    if (rc == 0)
        rc = put_text(out, "version", v->mod_version);
    if (rc == 0)
        rc = put_text(out, "uid", v->mod_uid);
    if (rc == 0)
        rc = text_puts(out, "}");
    if (rc == 0)
        rc = put_text(out, "rfm", v->rfm);
    if (rc == 0)
        rc = put_text(out, "scn", v->scn);
    if (rc == 0)
        rc = put_text(out, "aiw", v->aiw);
    return rc;
}

static int describe_counts(recd_buf *out, const rf2_vcr *v, const rf2_walk *w, const summary *s)
{
    int rc = recd_buf_printf(out, ",\"slices\":%u,\"events\":%llu,\"declared_slices\":%u,\"declared_events\":%u",
                             w->slices, (unsigned long long)w->events, v->slice_count, v->event_count);
    if (rc == 0)
        rc = put_float(out, "start_time", v->start_time);
    if (rc == 0)
        rc = put_float(out, "end_time", v->end_time);
    if (rc == 0)
        rc = text_puts(out, ",\"event_kinds\":{");
    for (size_t i = 0; rc == 0 && i < KIND_SLOTS && s->kinds[i]; i++)
        rc = recd_buf_printf(out, "%s\"%s\":%llu", i ? "," : "", s->kinds[i],
                             (unsigned long long)s->kind_counts[i]);
    if (rc == 0)
        rc = text_puts(out, "}");
    if (rc == 0 && v->damaged) {
        rc = recd_buf_printf(out, ",\"damage\":{\"offset\":%llu,\"in_inflated_data\":%s,\"message\":",
                             (unsigned long long)v->damage_offset, v->compressed ? "true" : "false");
        if (rc == 0)
            rc = rf2_json_text(out, (const uint8_t *)v->damage, strlen(v->damage));
        if (rc == 0)
            rc = text_puts(out, "}");
    }
    return rc;
}

static int rf2_describe(const uint8_t *buf, size_t len, recd_buf *out, char *err, size_t errlen)
{
    rf2_vcr v;
    rf2_walk w = {0};
    summary s;
    memset(&s, 0, sizeof s);
    int rc = rf2_vcr_open(&v, buf, len);
    if (rc == -EBADMSG)
        set_err(err, errlen, &v);
    s.v = &v;
    if (rc == 0 && !(s.laps = calloc(v.drivers_read ? v.drivers_read : 1, sizeof *s.laps)))
        rc = -ENOMEM;
    if (rc == 0)
        rc = rf2_vcr_events(&v, summarise_one, &s, &w);
    size_t start = out->len;
    if (rc == 0)
        rc = describe_header(out, &v);
    if (rc == 0)
        rc = describe_drivers(out, &v, s.laps);
    if (rc == 0)
        rc = describe_counts(out, &v, &w, &s);
    if (rc == 0)
        rc = text_puts(out, "}");
    if (rc < 0)
        out->len = start;
    free(s.laps);
    rf2_vcr_close(&v);
    return rc;
}

const recd_format recd_format__rf2_vcr = {
    .name = "rf2-vcr",
    .extension = "vcr",
    .description = "rFactor 2 replay, VCR 1.08 (read-only: gzip'd or plain, header, drivers, slices of events)",
    .unit = "slices",
    .msg_format = RECD_MSG_FMT_NONE,
    .sniff = rf2_sniff,
    .verify = rf2_verify,
    .export_events = rf2_export_events,
    .describe = rf2_describe,
};
