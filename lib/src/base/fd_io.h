/* SPDX-License-Identifier: MIT */
/* Positioned full writes for the part files (internal to librecd). Crash recovery does not use
 * it: it writes through its own injectable ops table, so tests can fail its writes. */
#ifndef RECD_BASE_FD_IO_H
#define RECD_BASE_FD_IO_H

#include <stddef.h>
#include <stdint.h>

/* Writes all len bytes at offset off, retrying after EINTR and short writes. 0 or -errno
 * (-EIO when the kernel writes nothing). */
int recd__pwrite_all(int fd, const void *data, size_t len, uint64_t off);

#endif
