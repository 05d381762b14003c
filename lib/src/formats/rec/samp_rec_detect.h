/* SPDX-License-Identifier: MIT */
/* Internal: layout identification for .rec files (which block layout a buffer holds), shared by
 * the probe. The decision rules are documented in docs/formats/samp-rec.md, "Telling layouts apart". */
#ifndef RECD_SAMP_REC_DETECT_H
#define RECD_SAMP_REC_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/samp_rec.h"

typedef struct rec_detection {
    recd_rec_layout layout;
    size_t data_offset; /* where blocks start: 8, or 0 when headerless */
    size_t block_size;  /* 0 when the layout has no blocks librecd decodes */
} rec_detection;

/* Identifies the layout of a buffer of at least RECD_REC_HEADER_SIZE bytes. */
rec_detection recd_rec__detect(const uint8_t *buf, size_t len);

/* True when the buffer went through a text conversion (NUL -> 0x20, bytes >= 0x80 re-encoded as
 * UTF-8). *evidence_offset is where the first re-encoded sequence starts. */
bool recd_rec__text_mangled(const uint8_t *buf, size_t len, size_t *evidence_offset);

/* |q|^2 within RECD_REC__QUAT_TOLERANCE of 1 for the four floats (w, x, y, z) at p. */
#define RECD_REC__QUAT_TOLERANCE 0.02
bool recd_rec__quat_is_unit(const uint8_t *p);

/* Signatures the VC:MP NPC plugin writes besides 1000. */
#define RECD_REC__VCMP_SIG_MIN 1001u
#define RECD_REC__VCMP_SIG_MAX 1005u

#endif
