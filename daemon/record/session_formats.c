/* SPDX-License-Identifier: MIT */
/* The table of session formats. A new output format is one file with its session_format and
 * one entry here. */
#include "session_formats.h"

#include "session_carla.h"
#include "session_player.h"
#include "session_rec.h"
#include "session_recap.h"
#include "sessions.h"
#include "support/log.h"

/* Indexed by recd_msg_format; a format the daemon does not record has no entry. */
static const session_format *const session_formats[] = {
    [RECD_MSG_FMT_SAMP_ONFOOT] = &session_rec_format,
    [RECD_MSG_FMT_SAMP_VEHICLE] = &session_rec_format,
    [RECD_MSG_FMT_RECAP] = &session_recap_format,
    [RECD_MSG_FMT_CARLA] = &session_carla_format,
    [RECD_MSG_FMT_SAMP_PLAYER] = &session_player_format,
};

const session_format *session_format_for(recd_msg_format f)
{
    size_t i = (size_t)f;
    return i < sizeof session_formats / sizeof session_formats[0] ? session_formats[i] : NULL;
}

void sessions_recover_root(int root_fd)
{
    for (size_t f = 0; f < sizeof session_formats / sizeof session_formats[0]; f++) {
        const session_format *ops = session_formats[f];
        if (!ops || !ops->recover_root)
            continue;
        const char *name = recd_msg_format_name((recd_msg_format)f);
        int rc = ops->recover_root(root_fd);
        if (rc < 0)
            log_err("recovery: %s %s: %s", name, ops->recover_what, recd_strerror(rc));
        else if (rc > 0)
            log_notice("recovery: %d %s %s completed", rc, name, ops->recover_what);
    }
}
