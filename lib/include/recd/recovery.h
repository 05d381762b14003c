/* SPDX-License-Identifier: MIT */
/* Crash recovery at startup: finds every NAME.part under the output root (bounded depth, symlinks
 * never followed), repairs it by content and gives it its final name, before the daemon accepts
 * data.
 *
 * Per file, by content (the extension is not trusted): the format whose recover hook claims the
 * content (recd/format.h, the format table) plans it, keeping the header and every complete
 * record (the format's unit: blocks, ticks, frames) and patching header totals to what decodes;
 * then renamed NAME.part -> NAME (NAME-N when NAME exists; never overwritten).
 * Files without anything worth keeping:
 *   - empty, or holding only a (possibly cut) header and no block/member: REMOVED, since nothing
 *     of value is lost and a header-only file would only clutter the output;
 *   - unrecognised or invalid content (not a recd header): renamed to NAME.part.bad and left for
 *     a human (QUARANTINED). Recovery never touches *.part.bad again; retention ages them out.
 * A .part that is not a plain file with one link (hard link, FIFO, symlink) is left alone and
 * reported FAILED, as is one larger than max_file_size (no limit by default: a large part is
 * mapped, not read into memory, so a part of any size is recovered). Running recovery twice is harmless; it
 * must not run while a writer has parts open under the same root (it is a startup step). */
#ifndef RECD_RECOVERY_H
#define RECD_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_RECOVER_BAD_SUFFIX ".bad"
#define RECD_RECOVER_DEFAULT_MAX_FILE 0 /* no limit */

typedef enum recd_recover_action {
    RECD_RECOVER_FINALIZED = 0, /* repaired as needed, renamed to its final name */
    RECD_RECOVER_REMOVED,       /* nothing worth keeping: deleted */
    RECD_RECOVER_QUARANTINED,   /* unrecognised content: renamed to NAME.part.bad */
    RECD_RECOVER_FAILED         /* error: the file was left as it was */
} recd_recover_action;

RECD_API const char *recd_recover_action_name(recd_recover_action a); /* "finalized", ... */

/* What to do with one .part, decided from its content alone. */
typedef struct recd_recover_plan {
    recd_recover_action action; /* FINALIZED, REMOVED or QUARANTINED */
    char kind[16];              /* the sniffed kind (recd_sniff_result.kind), "empty", "unknown" */
    uint64_t keep;              /* bytes to keep (FINALIZED) */
    uint64_t units;             /* whole records kept, in unit */
    uint64_t header_len;        /* leading bytes of buf patched in place, to write back */
    char reason[200];
    const char *unit;           /* the planning format's record unit ("blocks"), static; NULL
                                   when no format claimed the content */
} recd_recover_plan;

/* Plans the recovery of buf[0..len) (a .part's content). May patch the header inside buf (see
 * plan->header_len). Returns 0 or -ENOMEM. Pure: no I/O, safe on hostile input. */
RECD_API int recd_recover_plan_buffer(uint8_t *buf, size_t len, recd_recover_plan *plan);

typedef struct recd_recover_file {
    char part[RECD_PATH_MAX];  /* the .part as found, relative to the root */
    char final[RECD_PATH_MAX]; /* its new name (FINALIZED, QUARANTINED), else "" */
    recd_recover_action action;
    char kind[16];
    uint64_t size_before, size_after, bytes_dropped;
    uint64_t units_kept; /* whole records kept, in unit */
    int error;           /* negative errno when FAILED */
    char message[200];
    const char *unit;    /* the format's record unit ("blocks", "ticks"), static; NULL: none */
} recd_recover_file;

typedef struct recd_recover_options {
    unsigned max_depth;     /* directory levels below the root; 0 = RECD_WALK_DEFAULT_DEPTH */
    uint64_t max_file_size; /* larger .part files are left alone (FAILED); 0 = no limit */
    bool sync;              /* fdatasync repaired files and fsync their directories */
    bool dry_run;           /* plan and report only; change nothing */
} recd_recover_options;

typedef struct recd_recover_summary {
    size_t found, finalized, removed, quarantined, failed;
    uint64_t bytes_dropped; /* cut from finalized files plus the size of removed ones */
    uint64_t records_kept;  /* whole records in finalized files, each in its format's unit */
    size_t symlinks_skipped, too_deep, bad_names; /* entries the walk did not enter or use */
    recd_recover_file *files; /* one per .part, in walk order */
    size_t count, cap;
} recd_recover_summary;

/* Recovers every *.part under root_fd. out must be zeroed (or freed) before the call. Returns the
 * number of .part files found (per-file failures: out->failed and out->files[i].error), or a
 * negative errno when the walk itself failed (out holds what was done until then). */
RECD_API int recd_recover_root(int root_fd, const recd_recover_options *opt,
                               recd_recover_summary *out);
RECD_API void recd_recover_summary_free(recd_recover_summary *s);

#ifdef __cplusplus
}
#endif
#endif
