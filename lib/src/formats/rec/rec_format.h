/* SPDX-License-Identifier: MIT */
/* Internal: the hooks of the SA-MP .rec entries (samp-onfoot, samp-vehicle), split over files. */
#ifndef RECD_REC_FORMAT_H
#define RECD_REC_FORMAT_H

#include "recd/format.h"
#include "recd/samp_rec.h"

int recd_rec__repair(const uint8_t *buf, size_t len, recd_repair_result *r);
/* In rec_export.c. */
int recd_rec__export_msgs(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                          char *err, size_t errlen);
/* In rec_import.c. */
extern const struct recd_format_importer recd_rec__importer;
/* The message model's hooks (rec_json.c, rec_csv.c): .rec states own nothing (no model). */
extern const struct recd_format_json recd_rec__json_onfoot, recd_rec__json_vehicle,
    recd_rec__json_player;
extern const struct recd_format_csv recd_rec__csv_onfoot, recd_rec__csv_vehicle;
/* In rec_recover.c. */
int recd_rec__recover_plan(uint8_t *buf, size_t len, recd_recover_plan *plan);
/* In rec_wire.c: the wire hooks of each block type (samp-onfoot's carry samp-player's). */
extern const struct recd_format_wire recd_rec__wire_onfoot;
extern const struct recd_format_wire recd_rec__wire_vehicle;
extern const struct recd_format_wire recd_rec__wire_player;
/* In rec_synth.c. */
extern const struct recd_format_synth recd_rec__synth_onfoot;
extern const struct recd_format_synth recd_rec__synth_vehicle;

/* In samp_rec_writer.c, for the tests (not exported): an encoded block of the writer's type (len
 * 72 or 67; anything else is -EINVAL), checked with recd_rec_block_check() and written as it is,
 * but for a time raised under CLAMP. */
int recd_rec_writer_block(recd_rec_writer *w, const uint8_t *block, size_t len);

extern const struct recd_format_seek recd_rec__seek; /* rec_seek.c */

#endif
