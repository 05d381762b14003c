/* SPDX-License-Identifier: MIT */
/* Internal: the actors alive at a point of a CARLA log (their EventAdd records, latest positions
 * and attachments), followed event by event and frame by frame. Cuts and concats (carla_edit.c)
 * and the ranged read that starts a cut in the middle of a log (carla_export.c) share it, so that
 * both learn the same world from the same records. */
#ifndef RECD_CARLA_WORLD_H
#define RECD_CARLA_WORLD_H

#include "formats/carla/carla_actor_index.h"
#include "formats/carla/carla_reader.h"
#include "recd/carla.h"
#include "recd/message.h"

typedef struct carla_actor {
    uint32_t id;
    bool alive;
    uint8_t width;
    uint8_t *add; /* owned copy of its EventAdd record */
    uint32_t add_len;
    uint64_t added_in; /* frames read before its EventAdd (the frame that holds it counts) */
    bool has_pos;
    uint8_t pos[48]; /* latest location and rotation: 6 numbers of the width */
    bool has_parent;
    uint32_t parent;
} carla_actor;

typedef struct carla_world {
    carla_actor *a; /* in the order they were added */
    size_t n, cap;
    carla_actor_index x;
    uint64_t frames; /* frames whose positions were taken (or skipped) so far */
} carla_world;

/* The living actor of id, or NULL. */
carla_actor *carla_world_find(carla_world *w, uint32_t id);
void carla_world_free(carla_world *w);
/* An EventAdd, EventDel or EventParent record (others and short records change nothing). */
int carla_world_event(carla_world *w, const recd_carla_event *e);
/* Each Position record of the frame becomes its actor's latest position; counts the frame. */
void carla_world_positions(carla_world *w, const recd_carla_frame *f);
/* One Position packet's records (kind and size checked by the caller) taken as they would have
 * been in frame `frame` (0-based), read backwards from the latest frame: a record sets the
 * position of a living actor added before that frame that has none yet. How many it set. */
size_t carla_world_positions_back(carla_world *w, const uint8_t *records, uint32_t count,
                                  uint8_t width, uint64_t frame);
/* Events that add every living actor where it stands, then its attachment: the first frame of a
 * piece that replays alone. every_parent: also attachments to actors not alive now (a reader
 * that follows on may see the parent added again). */
int carla_world_emit_alive(carla_world *w, bool every_parent, recd_msg_fn emit, void *ctx,
                           char *err, size_t errlen);
/* EventDel for every living actor (the end of an input in a concat). */
int carla_world_emit_deletes(carla_world *w, recd_msg_fn emit, void *ctx, char *err,
                             size_t errlen);

/* Reads r's frames from its position up to the first that starts at or after `stop` or whose
 * time is `from` or later (r->pos is left at it), and learns the world they leave, as a cut that
 * reads every frame before it would (w NULL: only finds the frame). Reads the event packets'
 * records, and Position packets backwards from the last, as far as an actor still lacks one
 * (records of actors that have one are skipped by id), not every position. 1 when it stopped at such a frame, 0 when the log ends first, -EBADMSG (r->err)
 * for damage before it, -ENOMEM. */
int carla_world_read_to(carla_world *w, carla_reader *r, size_t stop, int64_t from);

#endif
