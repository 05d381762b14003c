/* Internal: the hooks of the Recap entry, split over files. */
#ifndef RECD_RECAP_FORMAT_H
#define RECD_RECAP_FORMAT_H

#include "recd/format.h"

int recd_recap__repair(const uint8_t *buf, size_t len, recd_repair_result *r);
/* In message_export.c, beside the message model it builds on. */
int recd_recap__export_msgs(const uint8_t *buf, size_t len, recd_msg_fn on_msg, void *ctx,
                            char *err, size_t errlen);
/* In message_import.c, beside the importer it serves. */
extern const struct recd_format_importer recd_recap__importer;
/* In recovery.c, beside the rest of crash recovery. */
int recd_recap__recover_plan(uint8_t *buf, size_t len, recd_recover_plan *plan);

#endif
