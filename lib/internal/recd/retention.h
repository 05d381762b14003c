/* SPDX-License-Identifier: MIT */
/* Retention: deletes old finalized recordings under the output root by age, per-session count
 * and total size, then removes the directories it emptied.
 *
 * Candidates are regular files found by a confined walk (symlinks never followed, hidden or
 * oddly named entries ignored) named like a recording recd writes (*.rec, *.recap, CARLA *.log)
 * or *.part.bad (recovery's quarantine, so those age out) AND carrying recd's own mark naming
 * them where they are (own_mark.h: set when recd created the part). A file is never a candidate
 * because of its extension alone: an operator's notes.log or README.rec, or a recording another
 * program wrote in recd's naming scheme, is left alone. *.part files are never candidates: an
 * open recording is never removed, and .part files do not count towards the size budget.
 *
 * Session of a file = the directory that holds it (its relative parent path). That is exact when
 * the path template puts {session} in the directory part and no time/part placeholder there
 * (recd_path_template.session_dir, true for the default template); with other templates the
 * per-session limit applies per directory, so the daemon should only enable max_files_per_session
 * when session_dir is true.
 *
 * Order: oldest first by (mtime, path), so a run is deterministic. Rules apply in this order:
 * age, then per-session count over the survivors (keeping the newest), then total size over the
 * survivors (deleting the oldest until under the budget). */
#ifndef RECD_RETENTION_H
#define RECD_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/part_file.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum recd_retention_reason {
    RECD_RETENTION_AGE = 1,
    RECD_RETENTION_SESSION_COUNT,
    RECD_RETENTION_TOTAL_SIZE
} recd_retention_reason;

/* "age", "count", "size" */
const char *recd_retention_reason_name(recd_retention_reason r);

typedef struct recd_retention_policy {
    int64_t max_age_s;              /* delete files modified more than this long ago; 0 = off */
    uint32_t max_files_per_session; /* keep the newest N per session; 0 = off */
    uint64_t max_total_bytes;       /* budget for all finalized files; 0 = off */
    int64_t now_s;                  /* Unix time the age refers to; 0 = the current time */
    unsigned max_depth;             /* 0 = RECD_WALK_DEFAULT_DEPTH */
    bool dry_run;                   /* report what would be deleted; delete nothing */
} recd_retention_policy;

typedef struct recd_retention_item {
    char path[RECD_PATH_MAX]; /* relative to the root */
    uint64_t size;
    int64_t mtime_ns;
    recd_retention_reason reason;
    int error; /* negative errno when the unlink failed (0 in a dry run) */
} recd_retention_item;

typedef struct recd_retention_result {
    size_t files_scanned;  /* finalized candidates */
    uint64_t bytes_scanned;
    size_t parts_skipped;  /* *.part files seen and left alone */
    size_t others_skipped; /* files that are not recordings, left alone */
    size_t unmarked_skipped; /* named like recordings but without recd's mark, left alone */
    size_t deleted;        /* items without error (would be deleted, in a dry run) */
    uint64_t bytes_deleted;
    uint64_t bytes_kept;   /* candidates' bytes left after the run */
    size_t dirs_removed;
    size_t errors;
    recd_retention_item *items; /* deletions in the order done, oldest first */
    size_t count, cap;
} recd_retention_result;

/* Applies policy under root_fd. out must be zeroed (or freed) before the call. Returns the
 * number of items (deletions, including failed ones), or a negative errno when the scan failed
 * (nothing is deleted then). */
int recd_retention_run(int root_fd, const recd_retention_policy *policy,
                       recd_retention_result *out);
void recd_retention_result_free(recd_retention_result *r);

#ifdef __cplusplus
}
#endif
#endif
