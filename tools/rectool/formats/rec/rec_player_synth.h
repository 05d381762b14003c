/* SPDX-License-Identifier: MIT */
/* samp-player's synthetic sessions for generate and send --synthetic: librecd's walking and
 * driving generators taking turns, their blocks moved onto one session clock. */
#ifndef RECTOOL_REC_PLAYER_SYNTH_H
#define RECTOOL_REC_PLAYER_SYNTH_H

#include "formats.h"

extern const rt_session_synth rt_rec_player_synth; /* the rec entry's session_synth */

#endif
