/* SPDX-License-Identifier: MIT */
/* benchgen text lines: .rec blocks as CSV rows for the rsyslog baseline (see textline.c). */
#ifndef BENCHGEN_TEXTLINE_H
#define BENCHGEN_TEXTLINE_H

#include <stddef.h>

#include "recd/samp_rec.h"

#define BG_TEXT_MAX 1024 /* a row is far shorter: 30 cells of at most 17 bytes */

/* Writes the row without a line end into out (BG_TEXT_MAX bytes); returns its length. */
size_t bg_text_onfoot(const recd_rec_onfoot *b, char *out);
size_t bg_text_vehicle(const recd_rec_vehicle *b, char *out);

#endif
