/* SPDX-License-Identifier: MIT */
/* CARLA recorder logs (.log): the packet kinds, id tables and vector widths of the message model's
 * `carla` format, and the query texts CARLA's server prints for a log (show_recorder_file_info and
 * friends), produced here without a server. Byte layout: docs/formats/carla.md. */
#ifndef RECD_CARLA_H
#define RECD_CARLA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Packet kinds, numbered as CARLA 0.9.16 numbers its packet ids (24 = Weather of later builds).
 * A file's own ids are mapped through its id table (recd_carla_ids). */
typedef enum recd_carla_kind {
    RECD_CARLA_FRAME_START = 0,
    RECD_CARLA_FRAME_END = 1,
    RECD_CARLA_EVENT_ADD = 2,
    RECD_CARLA_EVENT_DEL = 3,
    RECD_CARLA_EVENT_PARENT = 4,
    RECD_CARLA_COLLISION = 5,
    RECD_CARLA_POSITION = 6,
    RECD_CARLA_STATE = 7, /* traffic lights */
    RECD_CARLA_ANIM_VEHICLE = 8,
    RECD_CARLA_ANIM_WALKER = 9,
    RECD_CARLA_VEHICLE_LIGHT = 10,
    RECD_CARLA_SCENE_LIGHT = 11,
    RECD_CARLA_KINEMATICS = 12,
    RECD_CARLA_BOUNDING_BOX = 13,
    RECD_CARLA_PLATFORM_TIME = 14,
    RECD_CARLA_PHYSICS_CONTROL = 15,
    RECD_CARLA_TRAFFIC_LIGHT_TIME = 16,
    RECD_CARLA_TRIGGER_VOLUME = 17,
    RECD_CARLA_FRAME_COUNTER = 18,
    RECD_CARLA_WALKER_BONES = 19,
    RECD_CARLA_VISUAL_TIME = 20,
    RECD_CARLA_ANIM_WHEELS = 21,
    RECD_CARLA_ANIM_BIKER = 22,
    RECD_CARLA_VEHICLE_DOOR = 23,
    RECD_CARLA_WEATHER = 24,
    RECD_CARLA_KIND_COUNT = 25
} recd_carla_kind;

/* Packet-id tables: which kinds a CARLA release writes and under which ids. */
typedef enum recd_carla_ids {
    RECD_CARLA_IDS_0_9_13 = 13,
    RECD_CARLA_IDS_0_9_15 = 15,
    RECD_CARLA_IDS_0_9_16 = 16 /* the default; 0.10 (UE5) uses the same ids */
} recd_carla_ids;

RECD_API const char *recd_carla_ids_name(recd_carla_ids ids); /* "0.9.16"; "" when unknown */
RECD_API bool recd_carla_ids_parse(const char *name, recd_carla_ids *out);
RECD_API const char *recd_carla_kind_name(unsigned kind); /* "positions"; "" when unknown */

/* One packet of a frame. Records are CARLA's bytes with vectors of the frame's width. */
typedef struct recd_carla_packet {
    uint8_t kind;    /* recd_carla_kind, or the file's id when raw */
    bool raw;        /* an id this model does not know (>= 100: user data), kept as it was */
    uint32_t count;  /* records; 0 for raw packets and the kinds without a count */
    uint32_t len;    /* bytes at data: the records after the count, or the whole payload */
    const uint8_t *data;
} recd_carla_packet;

/* A simulation frame (message model: a carla `state`; event packets travel as events). */
typedef struct recd_carla_frame {
    uint64_t id;          /* FrameStart.Id: 1, 2, ... */
    double elapsed;       /* seconds since the episode started */
    bool has_duration;    /* else the writer derives it from the next frame (the last keeps -1) */
    double duration;
    uint8_t width;        /* bytes per vector number in data: 4 (UE4) or 8 (UE5) */
    size_t count;
    recd_carla_packet *packets;
    void *storage;        /* owner of packets and their data (messages) */
} recd_carla_frame;

/* A carla `event`: one record of EventAdd, EventDel, EventParent or Collision. */
typedef struct recd_carla_event {
    uint8_t kind;  /* RECD_CARLA_EVENT_ADD .. RECD_CARLA_COLLISION */
    uint8_t width;
    uint32_t len;
    const uint8_t *data;
    void *storage;
} recd_carla_event;

/* The session's file header and writer settings. */
typedef struct recd_carla_open {
    int64_t date;           /* Unix seconds (the header's std::time_t) */
    char *map;              /* owned, NUL-terminated; at most 65535 bytes */
    uint8_t width;          /* 4 (f32, 0.9.x replayers; default) or 8 (f64, 0.10 / UE5) */
    recd_carla_ids ids;     /* default 0.9.16 */
    bool additional_data;   /* start_recorder(..., additional_data=True): empty BoundingBox,
                               WalkerBones and PlatformTime packets are written every frame */
} recd_carla_open;

/* ---- Writing a log frame by frame (what the daemon and the importer use) ----------------------
 * Header, then each frame's packets in the order of open->ids with CARLA's empty packets; one
 * frame is held back until the next state so its duration is known (docs/formats/carla.md,
 * "How recd writes"). Events belong to the frame of the state before them. */
typedef struct recd_carla_writer recd_carla_writer;

/* 0, -EINVAL (width not 4 or 8, map over 65535 bytes) or -ENOMEM. Nothing is written yet. */
RECD_API int recd_carla_writer_new(recd_carla_writer **out, const recd_carla_open *o,
                                   recd_sink sink);
/* The next frame: writes the held one. -EBADMSG with err for a frame the release cannot hold
 * (a kind its id table lacks, more than 65535 positions, records that do not match). */
RECD_API int recd_carla_writer_state(recd_carla_writer *w, const recd_carla_frame *f, char *err,
                                     size_t errlen);
RECD_API int recd_carla_writer_event(recd_carla_writer *w, const recd_carla_event *e, char *err,
                                     size_t errlen);
/* Writes the header (if nothing was written) and the held frame, its duration -1. */
RECD_API int recd_carla_writer_finish(recd_carla_writer *w, char *err, size_t errlen);
/* Bytes of the records (and raw packets) of the frame it holds back: what the next state or
 * the finish writes. */
RECD_API uint64_t recd_carla_writer_held_bytes(const recd_carla_writer *w);
RECD_API void recd_carla_writer_free(recd_carla_writer *w);

/* ---- CARLA's queries, without a server (docs/formats/carla.md, "Queries") -------------------
 * Text: byte for byte what CARLA's server returns (C locale, %g numbers, the date in local time
 * as "%m/%d/%y %H:%M:%S"). json: the same content as one JSON object with a trailing newline.
 * Each appends to out; -EBADMSG with err for a file that is not a CARLA recorder log (the text
 * form still appends CARLA's "File is not a CARLA recorder" line, so a caller can show what
 * CARLA would, and still tell the failure). */

/* show_recorder_file_info(path, show_all). */
RECD_API int recd_carla_info(const uint8_t *buf, size_t len, bool show_all, bool json, recd_buf *out,
                             char *err, size_t errlen);
/* show_recorder_collisions(path, cat1, cat2): categories h v w t o a. */
RECD_API int recd_carla_collisions(const uint8_t *buf, size_t len, char cat1, char cat2, bool json,
                                   recd_buf *out, char *err, size_t errlen);
/* show_recorder_actors_blocked(path, min_time s, min_distance cm); CARLA's defaults 30 and 10. */
RECD_API int recd_carla_blocked(const uint8_t *buf, size_t len, double min_time,
                                double min_distance, bool json, recd_buf *out, char *err,
                                size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
