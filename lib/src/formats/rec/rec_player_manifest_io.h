/* SPDX-License-Identifier: MIT */
/* Reading a samp-player manifest from an open file, shared by load and crash recovery. */
#ifndef RECD_REC_PLAYER_MANIFEST_IO_H
#define RECD_REC_PLAYER_MANIFEST_IO_H

#include <stddef.h>

#include "recd/player_manifest.h"

/* Reads the whole file fd (refusing one over RECD_PLAYER_MANIFEST_MAX_BYTES) and parses it.
 * 0, -EBADMSG with why, -ENOMEM or -errno. fd stays open. */
int player_manifest_load_fd(int fd, recd_player_manifest *out, char *why, size_t whylen);

#endif
