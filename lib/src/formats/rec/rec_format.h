/* SPDX-License-Identifier: MIT */
/* Internal: the hooks of the SA-MP .rec entries (samp-onfoot, samp-vehicle), split over files. */
#ifndef RECD_REC_FORMAT_H
#define RECD_REC_FORMAT_H

#include "recd/format.h"

int recd_rec__repair(const uint8_t *buf, size_t len, recd_repair_result *r);
/* In rec_export.c. */
int recd_rec__export_msgs(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                          char *err, size_t errlen);
/* In rec_import.c. */
extern const struct recd_format_importer recd_rec__importer;
/* In rec_recover.c. */
int recd_rec__recover_plan(uint8_t *buf, size_t len, recd_recover_plan *plan);
/* In rec_synth.c. */
extern const struct recd_format_synth recd_rec__synth_onfoot;
extern const struct recd_format_synth recd_rec__synth_vehicle;

#endif
