/* SPDX-License-Identifier: MIT */
/* Internal: the parts of crash recovery that the format table's planner (formats/format_recover.c)
 * and the per-format plans build on, so storage applies plans without looking formats up. */
#ifndef RECD_RECOVERY_INTERNAL_H
#define RECD_RECOVERY_INTERNAL_H

#include "recd/recovery.h"

/* Sets plan's action, kind and reason (printf-style); returns 0. */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
int recd_recover__decide(recd_recover_plan *plan, recd_recover_action action, const char *kind,
                         const char *fmt, ...);

/* Plans one .part's content, as recd_recover_plan_buffer() does. */
typedef int (*recd_recover_planner)(uint8_t *buf, size_t len, recd_recover_plan *plan);

/* recd_recover_root() with plan deciding each .part. */
int recd_recover__root(int root_fd, const recd_recover_options *opt, recd_recover_summary *out,
                       recd_recover_planner plan);

#endif
