/* SPDX-License-Identifier: MIT */
/* Format-specific parts of `rectool info`: each adds its keys to the file's JSON description. */
#ifndef RECTOOL_INFO_H
#define RECTOOL_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* Keys added: "valid", "<format>" details, "timing", "anomalies", "problems". show_progress lets
 * a big single file draw its own progress bar (callers walking many files draw one per file set).
 * 0, or a negative errno when the description could not be built (out of memory). */
int rt_info_rec(const uint8_t *buf, size_t len, json_t *out, bool show_progress);
int rt_info_recap(const uint8_t *buf, size_t len, json_t *out, bool show_progress);

#endif
