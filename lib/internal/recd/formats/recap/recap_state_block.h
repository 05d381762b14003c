/* SPDX-License-Identifier: MIT */
/* A Recap state message's block kept by its receiver for the next state of the same session: the
 * wire decoder reads that state into it (recd/wire_lend.h) instead of a fresh malloc'd block. */
#ifndef RECD_RECAP_STATE_BLOCK_H
#define RECD_RECAP_STATE_BLOCK_H

#include "recd/message.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Frees m as recd_msg_free does, but keeps its block in *spare (freeing the one there) when m is
 * a Recap state made by librecd of at most 4 KiB; a larger one is freed. m is left owning nothing
 * (RECD_MSG_NONE), its other fields as they were. *spare is then what a lend hook may hand to the
 * decoder (recd/wire_lend.h), once: it has one owner at a time. */
void recd_recap__state_keep(recd_msg *m, recd_msg_recap_state **spare);
/* Frees a block kept by recd_recap__state_keep (NULL: nothing). */
void recd_recap__state_block_free(recd_msg_recap_state *s);

#ifdef __cplusplus
}
#endif

#endif
