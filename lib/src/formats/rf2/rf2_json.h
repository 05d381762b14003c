/* SPDX-License-Identifier: MIT */
/* Internal: JSON text for the rFactor 2 reader. The game stores names in whatever code page the
 * user typed them in; text that is not UTF-8 is read as Latin-1 so every name survives export. */
#ifndef RECD_RF2_JSON_H
#define RECD_RF2_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

/* p[0..len) up to its first NUL as a JSON string literal. 0 or -ENOMEM. */
int rf2_json_text(recd_buf *out, const uint8_t *p, size_t len);
/* p[0..len) as a JSON string of lower-case hex digits. */
int rf2_json_hex(recd_buf *out, const uint8_t *p, size_t len);
/* The shortest text that reads back as f; null for NaN and infinities. */
int rf2_json_f32(recd_buf *out, float f);

#endif
