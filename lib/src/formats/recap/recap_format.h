/* SPDX-License-Identifier: MIT */
/* Internal: the hooks of the Recap entry, split over files. */
#ifndef RECD_RECAP_FORMAT_H
#define RECD_RECAP_FORMAT_H

#include "formats/format_seek.h"
#include "recd/format.h"

int recd_recap__repair(const uint8_t *buf, size_t len, recd_repair_result *r);
/* In recap_export.c. */
int recd_recap__export_msgs(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                            char *err, size_t errlen);
/* From a seek point on, stopping after tick r->to (recap_export.c; recd_format_seek.export_from). */
int recd_recap__export_from(const uint8_t *buf, size_t len, const recd_seek_point *p,
                            const recd_seek_read *r, recd_msg_fn on_msg, void *ctx, char *err,
                            size_t errlen);
extern const struct recd_format_seek recd_recap__seek; /* recap_seek.c */
/* In recap_import.c. */
extern const struct recd_format_importer recd_recap__importer;
extern const struct recd_format_edit recd_recap__edit; /* recap_edit.c */
extern const struct recd_format_wire recd_recap__wire; /* recap_wire.c */
/* The message model's hooks (recap_msg.c, recap_json.c, recap_csv.c). */
extern const struct recd_format_model recd_recap__model;
extern const struct recd_format_json recd_recap__json;
extern const struct recd_format_csv recd_recap__csv;
/* In recap_recover.c. */
int recd_recap__recover_plan(uint8_t *buf, size_t len, recd_recover_plan *plan);
/* In recap_synth.c. */
extern const struct recd_format_synth recd_recap__synth;

#endif
