/* SPDX-License-Identifier: MIT */
/* A CARLA part's seek points, handed to the writer with its frames (carla_state.h): each frame
 * the writer puts into the session's batch is one, as the index's scan would find it, so the
 * writer jobs never read the part back to find them. Shared by parts and ring saves. */
#include <stdbool.h>

#include "carla_state.h"
#include "recd/seek_index.h"

/* A frame is written straight into the session's batch: one copy from the writer's held frame. */
uint8_t *carla_frame_room(void *session, size_t len)
{
    recd_session *s = session;
    carla_session *cs = cs_of(s);
    cs->frame_at = session_reserve(s, len);
    cs->frame_len = len;
    return cs->frame_at;
}

void carla_feed_part(recd_session *s, carla_session *cs)
{
    cs->format = recd_format_of_msg(RECD_MSG_FMT_CARLA);
    cs->frame_at = NULL;
    cs->point_any = false;
    writer_part_feed_seek(s->part);
}

void carla_feed_frame(recd_session *s, carla_session *cs)
{
    recd_seek_point p;
    if (cs->frame_at && recd_seek_index_point_at(cs->format, cs->frame_at, cs->frame_len, &p) &&
        (!cs->point_any || p.time >= cs->point_last)) {
        cs->point_any = true;
        cs->point_last = p.time;
        writer_put_point(&s->queue, s->part, cs->frame_at, &p);
    }
    cs->frame_at = NULL;
}
