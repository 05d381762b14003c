/* Internal: the hooks of the Recap entry, split over files. */
#ifndef RECD_RECAP_FORMAT_H
#define RECD_RECAP_FORMAT_H

#include "recd/format.h"

int recd_recap__repair(const uint8_t *buf, size_t len, recd_repair_result *r);

#endif
