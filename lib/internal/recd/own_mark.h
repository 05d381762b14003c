/* SPDX-License-Identifier: MIT */
/* recd's mark on the recordings it writes: the extended attribute user.recd, set on NAME.part
 * when it is created and carried by every rename after it (finalize, crash recovery, quarantine).
 * Its value is the relative name the part was created for. Retention deletes only files that
 * carry a mark naming them where they are (same folder, same stem), so nothing an operator keeps
 * under the root is ever taken for a recording because of its extension, and a recording moved
 * or copied elsewhere by hand is kept. */
#ifndef RECD_OWN_MARK_H
#define RECD_OWN_MARK_H

#include <stdbool.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_OWN_MARK_XATTR "user.recd"

/* Marks the open file fd as the recording recd creates as rel (relative to the root). 0 or a
 * negative errno (-ENOTSUP or -EOPNOTSUPP on a filesystem without user extended attributes). */
int recd_own_mark_set(int fd, const char *rel);

/* True when the regular file dir_fd/leaf, found at rel under the root, carries a mark naming it:
 * the marked name's folder is rel's and rel's leaf is the marked leaf or one of recd's renames
 * of it (NAME-N.EXT for a taken name, NAME.part.bad for a quarantined part). Never follows a
 * symlink. */
bool recd_own_mark_matches(int dir_fd, const char *leaf, const char *rel);

#ifdef __cplusplus
}
#endif
#endif
