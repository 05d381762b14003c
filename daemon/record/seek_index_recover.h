/* SPDX-License-Identifier: MIT */
/* Crash recovery of seek indexes (docs/formats/seek-index.md): once recovery has dealt with the
 * .part files, each NAME.part.idx left behind becomes the index of the part recovery finalized:
 * its longest valid prefix (entries torn, damaged or pointing past the data recovery kept end
 * it), completed by a scan of the part after it; one of another file (its header does not match)
 * is rebuilt from the part, and a part finalized without one gets one. An index whose part is gone is removed. */
#ifndef RECD_SEEK_INDEX_RECOVER_H
#define RECD_SEEK_INDEX_RECOVER_H

#include "recd/recovery.h"

/* The number of indexes kept or rebuilt, or a negative errno when the walk failed. */
int seek_indexes_recover(int root_fd, const recd_recover_summary *sum);

#endif
