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
/* CARLA's show_recorder_file_info text of one file on stdout (cmd_carla.c); an exit code. */
int rt_carla_info(const char *path, bool show_all);
/* The same as JSON (events, or every record with show_all); NULL when it is no CARLA log. */
json_t *rt_carla_info_json(const uint8_t *buf, size_t len, bool show_all);

#endif
