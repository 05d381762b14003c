/* SPDX-License-Identifier: MIT */
/* The SA-MP .rec entries of the format table: samp-onfoot (type 2, 72-byte blocks) and
 * samp-vehicle (type 1, 67-byte blocks). Both share one sniff, which also names the legacy, VC:MP
 * and text-damaged files that look like a .rec, so tools can say why those are not loadable. */
#include "formats/rec/rec_format.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/format_import.h"
#include "formats/rec/rec_edit.h"
#include "recd/samp_rec.h"

extern const recd_format recd_format__samp_onfoot;
extern const recd_format recd_format__samp_vehicle;
extern const recd_format recd_format__samp_player;

typedef struct rec_kind {
    const char *kind;
    const char *description;
} rec_kind;

static const rec_kind kind_standard = {"samp-rec", "SA-MP NPC recording"};
static const rec_kind kind_legacy = {
    "legacy-rec",
    "legacy SA-MP recording (pre-0.3d layout); SA-MP 0.3.7 and open.mp cannot play it"};
static const rec_kind kind_vcmp = {
    "vcmp-rec",
    "VC:MP NPC recording (same 1000 signature, different blocks); not a SA-MP file"};
static const rec_kind kind_mangled = {
    "text-mangled-rec",
    "recording damaged by a text conversion (NUL -> space, bytes re-encoded as UTF-8); "
    "not recoverable"};

/* What a layout is called, or NULL when it is no .rec at all. */
static const rec_kind *kind_of(recd_rec_layout l)
{
    switch (l) {
    case RECD_REC_LAYOUT_VEHICLE:
    case RECD_REC_LAYOUT_ONFOOT:
    case RECD_REC_LAYOUT_HEADER_ONLY: return &kind_standard;
    case RECD_REC_LAYOUT_LEGACY_ONFOOT_56:
    case RECD_REC_LAYOUT_LEGACY_HEADERLESS_75: return &kind_legacy;
    case RECD_REC_LAYOUT_VCMP: return &kind_vcmp;
    case RECD_REC_LAYOUT_TEXT_MANGLED: return &kind_mangled;
    case RECD_REC_LAYOUT_UNKNOWN:
    default: return NULL;
    }
}

/* Vehicle block layouts belong to samp-vehicle; the rest (on-foot blocks, or none to go by) to
 * samp-onfoot. */
static const recd_format *entry_of(recd_rec_layout l)
{
    return l == RECD_REC_LAYOUT_VEHICLE || l == RECD_REC_LAYOUT_LEGACY_HEADERLESS_75
               ? &recd_format__samp_vehicle
               : &recd_format__samp_onfoot;
}

static int rec_sniff(const uint8_t *head, size_t len, recd_sniff_result *out)
{
    recd_rec_info info;
    memset(&info, 0, sizeof info);
    recd_rec_probe(head, len, &info, NULL);
    const rec_kind *k = kind_of(info.layout);
    if (!k)
        return RECD_SNIFF_NONE;
    out->format = entry_of(info.layout);
    out->standard = recd_rec_layout_is_standard(info.layout);
    out->kind = k->kind;
    out->description = k->description;
    /* A 1000..1005 signature holds NULs, so no text reading can compete with it. */
    bool signed_header = info.data_offset == RECD_REC_HEADER_SIZE &&
                         info.signature >= RECD_REC_SIGNATURE && info.signature <= 1005u;
    return signed_header ? RECD_SNIFF_SIGNATURE : RECD_SNIFF_GUESS;
}

static int rec_verify(const uint8_t *buf, size_t len, recd_format_verdict *out,
                      recd_report *report)
{
    recd_rec_info info;
    memset(&info, 0, sizeof info);
    int rc = recd_rec_probe(buf, len, &info, report);
    bool standard = recd_rec_layout_is_standard(info.layout);
    size_t errors = report ? recd_report_errors(report) : 0;
    out->valid = standard && rc == 0 && errors == 0;
    out->units = info.block_count;
    const rec_kind *k = kind_of(info.layout);
    if (!standard)
        snprintf(out->note, sizeof out->note, "%s (%s), not a valid SA-MP recording",
                 k ? k->description : "not a recognised recording",
                 recd_rec_layout_name(info.layout));
    else if (!out->valid && errors == 0)
        snprintf(out->fallback, sizeof out->fallback, "rejected by the .rec reader (%s)",
                 recd_rec_layout_name(info.layout));
    if (out->valid)
        snprintf(out->summary, sizeof out->summary, "%s %s, %llu blocks", kind_standard.kind,
                 recd_rec_layout_name(info.layout), (unsigned long long)info.block_count);
    return out->valid ? 0 : -EBADMSG;
}

static int rec_recover(uint8_t *buf, size_t len, recd_recover_plan *plan)
{
    if (len == 0 || buf[0] != 0xE8) /* the first byte of the little-endian 1000 */
        return 0;
    int rc = recd_rec__recover_plan(buf, len, plan);
    return rc < 0 ? rc : 1;
}

static uint64_t rec_count_units(const uint8_t *buf, size_t len)
{
    recd_rec_info info;
    memset(&info, 0, sizeof info);
    recd_rec_probe(buf, len, &info, NULL);
    return info.block_count;
}

const recd_format recd_format__samp_onfoot = {
    .name = "samp-onfoot",
    .extension = "rec",
    .description = "SA-MP NPC recording on foot (.rec type 2, 72-byte blocks)",
    .unit = "blocks",
    .msg_format = RECD_MSG_FMT_SAMP_ONFOOT,
    .sniff = rec_sniff,
    .verify = rec_verify,
    .repair = recd_rec__repair,
    .recover = rec_recover,
    .end_part = NULL, /* the header holds no totals */
    .count_units = rec_count_units,
    .export_msgs = recd_rec__export_msgs,
    .import_text = recd_format__import_through_importer,
    .importer = &recd_rec__importer,
    .edit = &recd_rec__edit,
    .wire = &recd_rec__wire_onfoot,
    .json = &recd_rec__json_onfoot,
    .csv = &recd_rec__csv_onfoot,
    .synth = &recd_rec__synth_onfoot,
    .seek = &recd_rec__seek,
};

const recd_format recd_format__samp_vehicle = {
    .name = "samp-vehicle",
    .extension = "rec",
    .description = "SA-MP NPC recording in a vehicle (.rec type 1, 67-byte blocks)",
    .unit = "blocks",
    .msg_format = RECD_MSG_FMT_SAMP_VEHICLE,
    .sniff = rec_sniff,
    .verify = rec_verify,
    .repair = recd_rec__repair,
    .recover = rec_recover,
    .end_part = NULL,
    .count_units = rec_count_units,
    .export_msgs = recd_rec__export_msgs,
    .import_text = recd_format__import_through_importer,
    .importer = &recd_rec__importer,
    .edit = &recd_rec__edit,
    .wire = &recd_rec__wire_vehicle,
    .json = &recd_rec__json_vehicle,
    .csv = &recd_rec__csv_vehicle,
    .synth = &recd_rec__synth_vehicle,
    .seek = &recd_rec__seek,
};

/* Recorded by the daemon only, as a sequence of on-foot and vehicle .rec parts and a manifest: a
 * session-only entry (formats/format_table.c), never sniffed. Its states are read from JSON, not
 * written (recd_msg_to_json refuses them), and it has no CSV. */
const recd_format recd_format__samp_player = {
    .name = "samp-player",
    .extension = "rec",
    .description = "SA-MP player session (on-foot and vehicle .rec parts and a manifest)",
    .unit = "blocks",
    .msg_format = RECD_MSG_FMT_SAMP_PLAYER,
    .json = &recd_rec__json_player,
    .wire = &recd_rec__wire_player,
};
