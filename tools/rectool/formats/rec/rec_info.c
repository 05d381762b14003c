/* SPDX-License-Identifier: MIT */
/* `rectool info` for SA-MP .rec files (and the legacy layouts librecd can decode): the probe's
 * header and validation facts plus timing statistics over every block; and the .rec formats'
 * rectool entry (formats.h). */
#include <errno.h>
#include <string.h>

#include "formats.h"
#include "progress.h"
#include "rec_npc.h"
#include "rec_player_synth.h"
#include "recd/samp_rec.h"
#include "report_util.h"
#include "timing_stats.h"

/* SA-MP units are metres; the fastest aircraft stay well under 150 m/s, so a faster jump of more
 * than 25 m is a teleport (set position, spliced files) rather than movement or packet jitter. */
#define REC_MAX_SPEED 150.0
#define REC_MIN_JUMP 25.0

static const char *type_name(uint32_t type)
{
    switch (type) {
    case RECD_REC_TYPE_NONE: return "none";
    case RECD_REC_TYPE_VEHICLE: return "vehicle";
    case RECD_REC_TYPE_ONFOOT: return "onfoot";
    default: return "unknown";
    }
}

/* Position of a block, or false when the layout carries none that librecd decodes. */
static bool block_position(recd_rec_layout layout, const uint8_t *block, double pos[3])
{
    recd_vec3f p;
    switch (layout) {
    case RECD_REC_LAYOUT_VEHICLE: {
        recd_rec_vehicle b;
        recd_rec_vehicle_decode(block, &b);
        p = b.position;
        break;
    }
    case RECD_REC_LAYOUT_ONFOOT: {
        recd_rec_onfoot b;
        recd_rec_onfoot_decode(block, &b);
        p = b.position;
        break;
    }
    case RECD_REC_LAYOUT_LEGACY_ONFOOT_56: {
        recd_rec_legacy_onfoot b;
        recd_rec_legacy_onfoot_decode(block, &b);
        p = b.position;
        break;
    }
    case RECD_REC_LAYOUT_LEGACY_HEADERLESS_75: {
        recd_rec_legacy_vehicle b;
        recd_rec_legacy_vehicle_decode(block, &b);
        p = b.position;
        break;
    }
    default:
        return false;
    }
    pos[0] = p.x;
    pos[1] = p.y;
    pos[2] = p.z;
    return true;
}

/* Every layout librecd decodes starts its blocks with the u32 time in ms. */
static uint32_t block_time(const uint8_t *block)
{
    return (uint32_t)block[0] | ((uint32_t)block[1] << 8) | ((uint32_t)block[2] << 16) |
           ((uint32_t)block[3] << 24);
}

static int walk_blocks(const uint8_t *buf, const recd_rec_info *info, rt_timing *timing,
                       rt_progress *progress)
{
    for (uint64_t i = 0;; i++) {
        const uint8_t *block = recd_rec_block_at(buf, info, i);
        if (!block)
            break;
        double pos[3];
        bool has_pos = block_position(info->layout, block, pos);
        rt_timing_add(timing, block_time(block), has_pos ? pos : NULL,
                      (uint64_t)(block - buf));
        if ((i & 4095) == 0)
            rt_progress_update(progress, i);
    }
    rt_timing_finish(timing);
    return timing->failed ? -ENOMEM : 0;
}

static json_t *details_json(const recd_rec_info *info)
{
    json_t *o = json_object();
    json_object_set_new(o, "layout", json_string(recd_rec_layout_name(info->layout)));
    json_object_set_new(o, "signature", json_integer(info->signature));
    json_object_set_new(o, "type", json_integer(info->type));
    json_object_set_new(o, "type_name", json_string(type_name(info->type)));
    json_object_set_new(o, "header_bytes", json_integer((json_int_t)info->data_offset));
    json_object_set_new(o, "block_size", json_integer((json_int_t)info->block_size));
    json_object_set_new(o, "blocks", json_integer((json_int_t)info->block_count));
    json_object_set_new(o, "trailing_bytes", json_integer((json_int_t)info->trailing_bytes));
    json_object_set_new(o, "first_time_ms", json_integer(info->first_time_ms));
    json_object_set_new(o, "last_time_ms", json_integer(info->last_time_ms));
    json_object_set_new(o, "max_gap_ms", json_integer(info->max_gap_ms));
    json_object_set_new(o, "valid_prefix_bytes",
                        json_integer((json_int_t)recd_rec_valid_prefix(info)));
    json_object_set_new(o, "open_mp_accepts", json_boolean(info->open_mp_accepts));
    json_object_set_new(o, "samp_accepts", json_boolean(info->samp_accepts));
    return o;
}

static int rec_info(const uint8_t *buf, size_t len, json_t *out, bool show_progress)
{
    recd_rec_info info;
    recd_report report = {.limit = RT_REPORT_LIMIT};
    memset(&info, 0, sizeof info);
    int rc = recd_rec_probe(buf, len, &info, &report);
    bool valid = rc == 0 && recd_report_errors(&report) == 0;

    rt_timing timing;
    rt_timing_config cfg = {REC_MAX_SPEED, REC_MIN_JUMP, 0};
    int err = rt_timing_init(&timing, cfg);
    if (err == 0) {
        rt_progress progress;
        rt_progress_start(&progress, "reading blocks", info.block_count,
                          show_progress && len >= RT_PROGRESS_MIN_BYTES);
        rt_progress_set_unit(&progress, RT_UNIT_ITEMS, "blocks");
        err = walk_blocks(buf, &info, &timing, &progress);
        rt_progress_finish(&progress);
    }

    json_object_set_new(out, "valid", json_boolean(valid));
    json_object_set_new(out, "rec", details_json(&info));
    if (info.block_size > 0) {
        json_object_set_new(out, "timing", rt_timing_rates_json(&timing));
        json_object_set_new(out, "anomalies", rt_timing_anomalies_json(&timing));
    }
    json_object_set_new(out, "problems", rt_report_json(&report));
    if (report.dropped)
        json_object_set_new(out, "problems_not_listed", json_integer((json_int_t)report.dropped));
    rt_timing_free(&timing);
    recd_report_free(&report);
    return err;
}

static const char *const rec_names[] = {"samp-onfoot", "samp-vehicle", "samp-player", NULL};

static const rt_command rec_commands[] = {
    {"npc", rt_rec_npc, "NPC scripts for samp-player sessions (npc script)"},
    {NULL, NULL, NULL},
};

/* Its lines of the commands' --help (rt_print_usage). */
static const rt_help_note rec_notes[] = {
    {"concat",
     "  .rec: the next file starts one step after the previous file's last block (the previous\n"
     "    file's last step, or --gap ms).\n"},
    {"cut",
     "  .rec: milliseconds; --keep-time applies.\n"},
    {"split",
     "  .rec: milliseconds; --keep-time applies.\n"},
    {"diff",
     "  .rec: a sample is a block.\n"},
    {"generate",
     "  samp-onfoot has no 'drive' and samp-vehicle no 'walk' (a .rec holds one block type).\n"
     "  samp-player: a player who walks and drives in turns, 5 s each: one session as JSON\n"
     "    lines, for 'rectool send'; --scenario does not apply.\n"},
    {"send",
     "  samp-onfoot, samp-vehicle: a sample is one .rec block.\n"
     "  samp-player: a player who walks and drives in turns, 5 s each, in one session; a sample\n"
     "    is one state.\n"},
    {NULL, NULL},
};

const rt_format_tool rt_format_tool__rec = {
    .help_notes = rec_notes,
    .names = rec_names,
    .info = rec_info,
    .commands = rec_commands,
    .session_synth = &rt_rec_player_synth,
};
