/* SPDX-License-Identifier: MIT */
/* Internal to the edit engine: loading a recording as messages and writing messages back as a
 * file through the format's importer. */
#ifndef RECD_EDIT_INTERNAL_H
#define RECD_EDIT_INTERNAL_H

#include "formats/format_edit.h"
#include "recd/message.h"

/* The job's progress (recd/edit.h): messages read, then written or compared. Reported every
 * EDIT_PROGRESS_STEP messages, so the watcher costs nothing per message. */
#define EDIT_PROGRESS_STEP 2048u
typedef struct edit_progress {
    const recd_progress *watch; /* NULL: nobody watches */
    uint64_t done, total;
    uint64_t next; /* done at which to report again */
} edit_progress;

/* Starts with an estimate from the n inputs' headers (their unit counts) for passes over them:
 * 2 to read and then write or compare, 1 to read only. */
void edit_progress_begin(edit_progress *p, const recd_progress *watch, const recd_edit_input *in,
                         size_t n, unsigned passes);
/* Once the inputs are loaded: still to come are that many messages (written or compared). */
void edit_progress_loaded(edit_progress *p, uint64_t still_to_do);
void edit_progress_step(edit_progress *p); /* one message; p may be NULL */
void edit_progress_end(edit_progress *p, int rc); /* done == total when rc == 0 */

/* Loads a valid recording of an editable format; err names why not. progress (may be NULL) counts
 * every message read. */
int edit_load(recd_edit_input in, recd_edit_msgs *out, edit_progress *progress, char *err,
              size_t errlen);
/* The format's edit hooks, or NULL. */
const struct recd_format_edit *edit_hooks(const recd_edit_msgs *l);

/* Writes a file through the importer of one format: begin, feed with edit_out_msg, end. */
typedef struct edit_out {
    recd_importer im;
    edit_progress *progress; /* counts every message written; may be NULL */
} edit_out;
void edit_out_begin(edit_out *o, recd_msg_format format, recd_sink sink, edit_progress *progress);
int edit_out_msg(void *out, const recd_msg *m, char *err, size_t errlen); /* a recd_msg_fn */
int edit_out_end(edit_out *o, int rc, char *err, size_t errlen); /* finishes when rc == 0 */

/* "the operation is not available for FORMAT" with -ENOTSUP. */
int edit_unsupported(const recd_edit_msgs *l, const char *op, const char *why, char *err,
                     size_t errlen);

#endif
