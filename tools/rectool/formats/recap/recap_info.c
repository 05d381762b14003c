/* SPDX-License-Identifier: MIT */
/* `rectool info` for Recap .recap files: header fields, counted vs recorded frames, gzip members,
 * keyframes and the action mix, and timing statistics over the ticks that carried actions; and
 * Recap's rectool entry (formats.h). */
#include <errno.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "formats.h"
#include "progress.h"
#include "recap_census.h"
#include "recd/recap.h"
#include "report_util.h"
#include "timing_stats.h"

/* Minecraft blocks per second: elytra with rockets stays near 35, riptide bursts below 100. A jump
 * of more than 10 blocks within one tick is a teleport (or a respawn). */
#define RECAP_MAX_SPEED 100.0
#define RECAP_MIN_JUMP 10.0

typedef struct recap_walk {
    rt_timing timing;
    rt_progress progress;
    uint64_t member_start; /* offset of the member being decoded: ticks have no own offset */
    uint64_t action_ticks, events;
} recap_walk;

static int on_tick(void *ctx, uint64_t tick, const recd_recap_state *state,
                   const recd_recap_event *events, size_t n)
{
    recap_walk *w = ctx;
    (void)events;
    w->action_ticks++;
    w->events += n;
    int64_t t = tick > (uint64_t)INT64_MAX / RECD_RECAP_TICK_MS ? INT64_MAX
                                                                 : (int64_t)tick * RECD_RECAP_TICK_MS;
    rt_timing_add(&w->timing, t, state->pos, w->member_start);
    if ((w->action_ticks & 1023) == 0)
        rt_progress_update(&w->progress, tick);
    return 0;
}

static int on_member_end(void *ctx, uint64_t end_tick, uint64_t end_offset)
{
    recap_walk *w = ctx;
    (void)end_tick;
    w->member_start = end_offset;
    return 0;
}

/* Header strings are validated UTF-8 when the header decoded; guard anyway so JSON stays valid. */
static json_t *blob_json(recd_recap_blob b)
{
    json_t *s = json_stringn((const char *)b.data, b.len);
    return s ? s : json_string("(invalid UTF-8)");
}

static json_t *utc_json(int64_t ms)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    char buf[40];
    if (ms < 0 || !gmtime_r(&secs, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm))
        return json_null();
    return json_string(buf);
}

/* The header decoder accepts only compressors it knows; "unknown" would be a reader's bug. */
static const char *compressor_name(const recd_recap_header *h)
{
    const char *name = recd_gzip_compressor_name((recd_gzip_compressor)h->compressor);
    return name ? name : "unknown";
}

static json_t *header_json(const recd_recap_decode_result *res)
{
    const recd_recap_header *h = &res->header;
    json_t *o = json_object();
    json_object_set_new(o, "version", json_integer(h->version));
    json_object_set_new(o, "header_length",
                        json_integer((json_int_t)(res->data_offset - RECD_RECAP_PREAMBLE_SIZE)));
    json_object_set_new(o, "name", blob_json(h->name));
    json_object_set_new(o, "player_name", blob_json(h->player_name));
    json_object_set_new(o, "player_uuid", blob_json(h->player_uuid));
    json_object_set_new(o, "world_name", blob_json(h->world_name));
    json_t *origin = json_array();
    for (int i = 0; i < 3; i++) /* JSON has no NaN or infinities: those become null */
        json_array_append_new(origin, isfinite(h->origin[i]) ? json_real(h->origin[i]) : json_null());
    json_object_set_new(o, "origin", origin);
    json_object_set_new(o, "start_ms", json_integer(h->start_ms));
    json_object_set_new(o, "start_utc", utc_json(h->start_ms));
    json_object_set_new(o, "end_ms", json_integer(h->end_ms));
    json_object_set_new(o, "end_utc", utc_json(h->end_ms));
    json_object_set_new(o, "frame_count", json_integer(h->frame_count));
    if (h->version >= 2) {
        json_object_set_new(o, "weather", json_integer(h->weather));
        json_object_set_new(o, "time_of_day", json_integer(h->time_of_day));
    }
    json_object_set_new(o, "skin_texture_bytes", json_integer((json_int_t)h->skin_texture.len));
    json_object_set_new(o, "skin_signature_bytes", json_integer((json_int_t)h->skin_signature.len));
    if (h->has_encoder_params)
        json_object_set_new(o, "encoder",
                            json_pack("{s:I, s:i, s:I, s:s}", "keyframe_interval",
                                      (json_int_t)h->keyframe_interval, "gzip_level",
                                      (int)h->gzip_level, "member_limit",
                                      (json_int_t)h->member_limit, "compressor",
                                      compressor_name(h)));
    if (h->ext_unknown.len)
        json_object_set_new(o, "unknown_extension_bytes", json_integer((json_int_t)h->ext_unknown.len));
    return o;
}

static json_t *census_json(const rt_recap_census *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "complete", json_boolean(c->complete));
    if (!c->complete)
        json_object_set_new(o, "stopped_at_member", json_integer((json_int_t)c->stop_member_offset));
    json_object_set_new(o, "inflated_bytes", json_integer((json_int_t)c->inflated_bytes));
    json_object_set_new(o, "keyframes",
                        json_integer((json_int_t)c->tag_counts[RECD_RECAP_FULL_STATE]));
    json_object_set_new(o, "skip_runs", json_integer((json_int_t)c->skip_runs));
    json_object_set_new(o, "idle_ticks", json_integer((json_int_t)c->skipped_ticks));
    json_object_set_new(o, "longest_idle_ticks", json_integer((json_int_t)c->longest_idle));
    json_t *tags = json_object();
    for (int tag = 0; tag < 256; tag++) {
        if (!c->tag_counts[tag])
            continue;
        const recd_recap_tag_info *ti = recd_recap_tag_info_get((uint8_t)tag);
        json_object_set_new(tags, ti ? ti->name : "?", json_integer((json_int_t)c->tag_counts[tag]));
    }
    json_object_set_new(o, "by_tag", tags);
    return o;
}

static json_t *details_json(const recd_recap_decode_result *res, const recap_walk *w,
                            const rt_recap_census *census, size_t len)
{
    json_t *o = res->header_valid ? header_json(res) : json_object();
    json_object_set_new(o, "ticks", json_integer((json_int_t)res->ticks));
    json_object_set_new(o, "duration_ms", json_integer((json_int_t)(res->ticks * RECD_RECAP_TICK_MS)));
    json_object_set_new(o, "frame_count_matches",
                        json_boolean(res->header_valid && res->header.frame_count == res->ticks));
    json_object_set_new(o, "action_ticks", json_integer((json_int_t)w->action_ticks));
    json_object_set_new(o, "events", json_integer((json_int_t)w->events));
    json_object_set_new(o, "members", json_integer((json_int_t)res->members));
    json_object_set_new(o, "data_offset", json_integer((json_int_t)res->data_offset));
    json_object_set_new(o, "valid_end", json_integer((json_int_t)res->valid_end));
    json_object_set_new(o, "truncated", json_boolean(res->truncated));
    json_object_set_new(o, "trailing_bytes",
                        json_integer((json_int_t)(res->valid_end <= len ? len - res->valid_end : 0)));
    if (res->header_valid)
        json_object_set_new(o, "actions", census_json(census));
    return o;
}

static int recap_info(const uint8_t *buf, size_t len, json_t *out, bool show_progress)
{
    recap_walk w;
    rt_recap_census census;
    recd_recap_decode_result res;
    recd_recap_header peek;
    recd_report report = {.limit = RT_REPORT_LIMIT};
    memset(&w, 0, sizeof w);
    memset(&census, 0, sizeof census);
    memset(&res, 0, sizeof res);
    rt_timing_config cfg = {RECAP_MAX_SPEED, RECAP_MIN_JUMP, RECD_RECAP_TICK_MS};
    int err = rt_timing_init(&w.timing, cfg);
    if (err < 0)
        return err;

    /* Ticks start at the first member, right after the header; the header's frame count (when
     * finalized) sizes the progress bar. */
    int header_size = recd_recap_header_decode(buf, len, &peek, NULL);
    w.member_start = header_size > 0 ? (uint64_t)header_size : 0;
    rt_progress_start(&w.progress, "reading ticks", header_size > 0 ? peek.frame_count : 0,
                      show_progress && len >= RT_PROGRESS_MIN_BYTES);
    rt_progress_set_unit(&w.progress, RT_UNIT_ITEMS, "ticks");
    recd_recap_callbacks cb = {NULL, on_tick, NULL, on_member_end, &w};
    int rc = recd_recap_decode(buf, len, NULL, &cb, &res, &report);
    rt_progress_finish(&w.progress);
    rt_timing_finish(&w.timing);
    if (rc < 0 && rc != -EBADMSG)
        err = rc;
    else if (res.header_valid)
        err = rt_recap_census_run(buf, len, res.data_offset, &census);
    if (err == 0 && w.timing.failed)
        err = -ENOMEM;
    if (err == 0) {
        json_object_set_new(out, "valid", json_boolean(rc == 0 && recd_report_errors(&report) == 0));
        json_object_set_new(out, "recap", details_json(&res, &w, &census, len));
        json_object_set_new(out, "timing", rt_timing_rates_json(&w.timing));
        json_object_set_new(out, "anomalies", rt_timing_anomalies_json(&w.timing));
        json_object_set_new(out, "problems", rt_report_json(&report));
        if (report.dropped)
            json_object_set_new(out, "problems_not_listed", json_integer((json_int_t)report.dropped));
    }
    rt_timing_free(&w.timing);
    recd_report_free(&report);
    return err;
}

static const char *const recap_names[] = {"recap", NULL};

/* Its lines of the commands' --help (rt_print_usage). */
static const rt_help_note recap_notes[] = {
    {"concat",
     "  .recap: the next file starts at the previous file's frame count (plus --gap idle ticks).\n"},
    {"cut",
     "  .recap: ticks; it starts with the full player state of its first tick, and its header's\n"
     "    start time moves with the cut.\n"},
    {"split",
     "  .recap: ticks.\n"},
    {"diff",
     "  .recap: a sample is a tick.\n"},
    {"retime",
     "  .recap: not retimed; its clock is the game's fixed tick.\n"},
    {"repair",
     "  Recap .recap: keeps its header and every complete gzip member, and its frame count and\n"
     "    end time are recomputed (a complete file whose frame count is right keeps its end time).\n"},
    {"verify",
     "  Recap .recap: its header and every gzip member decode.\n"},
    {"export",
     "  Recap .recap: messages, imported back byte for byte.\n"},
    {"plot",
     "  .recap: every player is a track.\n"},
    {"generate",
     "  recap: 'drive' rides a horse.\n"},
    {"send",
     "  recap: a sample is one tick (its full state plus that tick's events).\n"},
    {NULL, NULL},
};

const rt_format_tool rt_format_tool__recap = {
    .names = recap_names,
    .info = recap_info,
    .help_notes = recap_notes,
};
