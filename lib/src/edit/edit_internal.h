/* SPDX-License-Identifier: MIT */
/* Internal to the edit engine: loading a recording as messages and writing messages back as a
 * file through the format's importer. */
#ifndef RECD_EDIT_INTERNAL_H
#define RECD_EDIT_INTERNAL_H

#include "formats/format_edit.h"
#include "recd/message.h"

/* Loads a valid recording of an editable format; err names why not. */
int edit_load(recd_edit_input in, recd_edit_msgs *out, char *err, size_t errlen);
/* The format's edit hooks, or NULL. */
const struct recd_format_edit *edit_hooks(const recd_edit_msgs *l);

/* Writes a file through the importer of one format: begin, feed with edit_out_msg, end. */
typedef struct edit_out {
    recd_importer im;
} edit_out;
void edit_out_begin(edit_out *o, recd_msg_format format, recd_sink sink);
int edit_out_msg(void *out, const recd_msg *m, char *err, size_t errlen); /* a recd_msg_fn */
int edit_out_end(edit_out *o, int rc, char *err, size_t errlen); /* finishes when rc == 0 */

/* "the operation is not available for FORMAT" with -ENOTSUP. */
int edit_unsupported(const recd_edit_msgs *l, const char *op, const char *why, char *err,
                     size_t errlen);

#endif
