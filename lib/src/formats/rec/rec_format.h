/* Internal: the hooks of the SA-MP .rec entries (samp-onfoot, samp-vehicle), split over files. */
#ifndef RECD_REC_FORMAT_H
#define RECD_REC_FORMAT_H

#include "recd/format.h"

int recd_rec__repair(const uint8_t *buf, size_t len, recd_repair_result *r);

#endif
