/* SPDX-License-Identifier: MIT */
/* Internal: the .rec edit hooks (rec_edit.c: time line, cut, concat, tracks; rec_edit_motion.c:
 * interpolation, speed and turning). */
#ifndef RECD_REC_EDIT_H
#define RECD_REC_EDIT_H

#include "formats/format_edit.h"

extern const struct recd_format_edit recd_rec__edit;

void rec_edit_interpolate(const recd_msg *a, const recd_msg *b, double f, recd_msg *out);
bool rec_edit_same_controls(const recd_msg *a, const recd_msg *b);
void rec_edit_scale_velocity(recd_msg *m, double k);
void rec_edit_transform(recd_msg *m, const recd_edit_xform *x);
bool rec_edit_position(const recd_msg *m, double pos[3]);

#endif
