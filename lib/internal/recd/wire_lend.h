/* SPDX-License-Identifier: MIT */
/* Internal: a stream decoder's lend hook, through which the receiver lends a session's spare
 * state block to the decoder for the session's next state (a format with a state_read_lent hook,
 * recd/format_wire.h), so a live session reuses one block instead of a malloc and free a state. */
#ifndef RECD_WIRE_LEND_H
#define RECD_WIRE_LEND_H

#include "recd/wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called with the handle format_of set, just before a state of that session is read, only when
 * its format reads into lent blocks: a block the session's earlier states of that format were read
 * into (kept with the format's keep function), given up by the session (the decoder owns it from
 * then on), or NULL. */
typedef void *(*recd_wire_lend_fn)(void *ctx, void *handle);

/* Sets d's lend hook (NULL: none, the default). */
void recd_wire__decoder_set_lend(recd_wire_decoder *d, recd_wire_lend_fn lend);

#ifdef __cplusplus
}
#endif

#endif
