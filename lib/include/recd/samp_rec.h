/* SPDX-License-Identifier: MIT */
/* SA-MP / open.mp NPC recordings (.rec): typed blocks, exact little-endian codec, streaming
 * writer and a validating reader. Format spec: docs/formats/samp-rec.md. */
#ifndef RECD_SAMP_REC_H
#define RECD_SAMP_REC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_REC_SIGNATURE 1000u
#define RECD_REC_HEADER_SIZE 8
#define RECD_REC_VEHICLE_BLOCK_SIZE 67
#define RECD_REC_ONFOOT_BLOCK_SIZE 72
#define RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE 56  /* header 1000/2, pre-0.3d on-foot body */
#define RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE 75 /* headerless, roll/direction instead of quaternion */
#define RECD_REC_VCMP_BLOCK_SIZE 76           /* VC:MP NPC plugin on-foot block (not SA-MP) */
#define RECD_REC_OBJECT_SURF_BASE 2000u       /* surf ids >= this are objects (id - 2000) */
#define RECD_REC_OBJECT_SURF_END 3000u

typedef enum recd_rec_type {
    RECD_REC_TYPE_NONE = 0,
    RECD_REC_TYPE_VEHICLE = 1, /* "driver" */
    RECD_REC_TYPE_ONFOOT = 2
} recd_rec_type;

typedef struct recd_vec3f {
    float x, y, z;
} recd_vec3f;

/* Rotation quaternion, stored w first in the file. */
typedef struct recd_quat {
    float w, x, y, z;
} recd_quat;

/* On-foot animation parameters (block bytes 70-71), lossless: 8+1+1+1+1+4 = 16 bits. */
typedef struct recd_rec_anim_flags {
    unsigned frame_delta : 8; /* bits 0-7 */
    unsigned loop : 1;        /* bit 8 */
    unsigned lock_x : 1;      /* bit 9 */
    unsigned lock_y : 1;      /* bit 10 */
    unsigned freeze : 1;      /* bit 11 */
    unsigned time : 4;        /* bits 12-15 */
} recd_rec_anim_flags;

RECD_API uint16_t recd_rec_anim_flags_pack(recd_rec_anim_flags f);
RECD_API recd_rec_anim_flags recd_rec_anim_flags_unpack(uint16_t raw);

/* Vehicle block bytes 63-66: Hydra thrust (two u16, model 520) or train speed (f32, trains).
 * bits holds the little-endian u32 as read; the accessors interpret it. */
typedef union recd_rec_vehicle_extra {
    uint32_t bits;
    float train_speed;
} recd_rec_vehicle_extra;

/* Sets a block's time_ms (its first four bytes, little-endian) in place, for writers that copy
 * the other fields of a block through as they arrived. */
static inline void recd_rec_block_set_time(uint8_t *block, uint32_t time_ms)
{
    block[0] = (uint8_t)time_ms;
    block[1] = (uint8_t)(time_ms >> 8);
    block[2] = (uint8_t)(time_ms >> 16);
    block[3] = (uint8_t)(time_ms >> 24);
}

/* A block's time_ms (its first four bytes, little-endian). */
static inline uint32_t recd_rec_block_time(const uint8_t *block)
{
    return (uint32_t)block[0] | (uint32_t)block[1] << 8 | (uint32_t)block[2] << 16 |
           (uint32_t)block[3] << 24;
}

static inline uint16_t recd_rec_hydra_thrust(recd_rec_vehicle_extra e, int i)
{
    return (uint16_t)(i == 0 ? e.bits & 0xFFFFu : e.bits >> 16);
}
static inline recd_rec_vehicle_extra recd_rec_hydra_extra(uint16_t t0, uint16_t t1)
{
    recd_rec_vehicle_extra e;
    e.bits = (uint32_t)t0 | ((uint32_t)t1 << 16);
    return e;
}

typedef enum recd_rec_surf_kind {
    RECD_REC_SURF_NONE = 0,    /* 0 or 0xFFFF */
    RECD_REC_SURF_VEHICLE = 1, /* 1 .. 1999 */
    RECD_REC_SURF_OBJECT = 2,  /* 2000 .. 2999, object id = surf_id - 2000 */
    RECD_REC_SURF_OTHER = 3    /* out of the known ranges */
} recd_rec_surf_kind;

RECD_API recd_rec_surf_kind recd_rec_surf_classify(uint16_t surf_id);

/* 72-byte on-foot block; comments give the byte offset. */
typedef struct recd_rec_onfoot {
    uint32_t time_ms;                /* 0 */
    int16_t left_right;              /* 4 */
    int16_t up_down;                 /* 6 */
    uint16_t keys;                   /* 8 */
    recd_vec3f position;             /* 10 */
    recd_quat rotation;              /* 22, w x y z */
    uint8_t health;                  /* 38 */
    uint8_t armour;                  /* 39 */
    uint8_t weapon;                  /* 40, bits 0-5 */
    uint8_t additional_key;          /* 40, bits 6-7: 1 YES, 2 NO, 3 CTRL_BACK */
    uint8_t special_action;          /* 41 */
    recd_vec3f velocity;             /* 42 */
    recd_vec3f surf_offset;          /* 54 */
    uint16_t surf_id;                /* 66 */
    uint16_t anim_id;                /* 68 */
    recd_rec_anim_flags anim_flags;  /* 70 */
} recd_rec_onfoot;

/* 67-byte vehicle (driver) block. */
typedef struct recd_rec_vehicle {
    uint32_t time_ms;             /* 0 */
    uint16_t vehicle_id;          /* 4 */
    int16_t left_right;           /* 6 */
    int16_t up_down;              /* 8 */
    uint16_t keys;                /* 10 */
    recd_quat rotation;           /* 12, w x y z */
    recd_vec3f position;          /* 28 */
    recd_vec3f velocity;          /* 40 */
    float vehicle_health;         /* 52 */
    uint8_t driver_health;        /* 56 */
    uint8_t driver_armour;        /* 57 */
    uint8_t weapon;               /* 58, bits 0-5 */
    uint8_t additional_key;       /* 58, bits 6-7 */
    uint8_t siren;                /* 59 */
    uint8_t landing_gear;         /* 60 */
    uint16_t trailer_id;          /* 61 */
    recd_rec_vehicle_extra extra; /* 63, Hydra thrust / train speed */
} recd_rec_vehicle;

/* Legacy 56-byte on-foot block (header 1000/2, pre-0.3d). */
typedef struct recd_rec_legacy_onfoot {
    uint32_t time_ms;
    int16_t left_right, up_down;
    uint16_t keys;
    recd_vec3f position;
    float facing_angle_deg;
    uint8_t health, armour, weapon, additional_key, special_action;
    recd_vec3f velocity, surf_offset;
    uint16_t surf_id;
} recd_rec_legacy_onfoot;

/* Legacy headerless 75-byte vehicle block. */
typedef struct recd_rec_legacy_vehicle {
    uint32_t time_ms;
    uint16_t vehicle_id;
    int16_t left_right, up_down;
    uint16_t keys;
    recd_vec3f roll, direction, position, velocity;
    float vehicle_health;
    uint8_t driver_health, driver_armour, weapon, additional_key, siren, landing_gear;
    uint16_t trailer_id;
    recd_rec_vehicle_extra extra;
} recd_rec_legacy_vehicle;

/* Exact codec: every bit of a block maps to a field, so decode(encode(x)) == x and
 * encode(decode(b)) == b for every 67/72-byte input. */
RECD_API void recd_rec_onfoot_encode(const recd_rec_onfoot *in,
                                     uint8_t out[RECD_REC_ONFOOT_BLOCK_SIZE]);
RECD_API void recd_rec_onfoot_decode(const uint8_t in[RECD_REC_ONFOOT_BLOCK_SIZE],
                                     recd_rec_onfoot *out);
RECD_API void recd_rec_vehicle_encode(const recd_rec_vehicle *in,
                                      uint8_t out[RECD_REC_VEHICLE_BLOCK_SIZE]);
RECD_API void recd_rec_vehicle_decode(const uint8_t in[RECD_REC_VEHICLE_BLOCK_SIZE],
                                      recd_rec_vehicle *out);
RECD_API void recd_rec_legacy_onfoot_decode(const uint8_t in[RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE],
                                            recd_rec_legacy_onfoot *out);
RECD_API void recd_rec_legacy_vehicle_decode(const uint8_t in[RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE],
                                             recd_rec_legacy_vehicle *out);
/* Legacy encoders: exact inverses of the decoders (tests, conversion tools). */
RECD_API void recd_rec_legacy_onfoot_encode(const recd_rec_legacy_onfoot *in,
                                            uint8_t out[RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE]);
RECD_API void recd_rec_legacy_vehicle_encode(const recd_rec_legacy_vehicle *in,
                                             uint8_t out[RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE]);

/* 0, or -EINVAL when a float field is NaN or infinite (no reader checks; we never write them) or
 * when weapon > 63 or additional_key > 3 (they share one byte and would be silently cut).
 * The Hydra/train union is not checked: its meaning depends on the vehicle model. */
RECD_API int recd_rec_onfoot_check(const recd_rec_onfoot *b);
RECD_API int recd_rec_vehicle_check(const recd_rec_vehicle *b);
/* The same check on an encoded 72-byte (ONFOOT) or 67-byte (VEHICLE) block, read in place: 0, or
 * -EINVAL for a NaN or infinite float (the weapon byte always decodes into range) or another type.
 * For receivers that store blocks as they arrive instead of decoding them. */
RECD_API int recd_rec_block_check(recd_rec_type type, const uint8_t *block);
/* The same on a block's bytes after its u32 time (block + 4; what a wire frame carries). */
RECD_API int recd_rec_fields_check(recd_rec_type type, const uint8_t *fields);

/* ---- Streaming writer ----------------------------------------------------------------------- */

typedef enum recd_rec_time_policy {
    RECD_REC_TIME_REJECT = 0, /* a decreasing time_ms is an error (-ERANGE) */
    RECD_REC_TIME_CLAMP = 1   /* a decreasing time_ms is raised to the previous block's */
} recd_rec_time_policy;

typedef struct recd_rec_writer {
    recd_sink sink;
    recd_rec_type type;
    recd_rec_time_policy time_policy;
    bool header_written;
    uint32_t last_time_ms;
    uint64_t blocks;  /* blocks written */
    uint64_t clamped; /* times raised under RECD_REC_TIME_CLAMP */
} recd_rec_writer;

/* The 8-byte file header: signature 1000, then type (VEHICLE or ONFOOT). */
RECD_API void recd_rec_header_encode(recd_rec_type type, uint8_t out[RECD_REC_HEADER_SIZE]);

/* type must be VEHICLE or ONFOOT. Writes nothing yet. */
RECD_API int recd_rec_writer_init(recd_rec_writer *w, recd_rec_type type,
                                  recd_rec_time_policy policy, recd_sink sink);
/* Writes the 8-byte header (1000, type). Called implicitly by the first block; once the header
 * is out, further calls do nothing and return 0. */
RECD_API int recd_rec_writer_header(recd_rec_writer *w);
/* Each call writes exactly one whole block with one sink call, or nothing on error: -EINVAL for
 * a block of the other type or one failing recd_rec_*_check(), -ERANGE for a decreasing time
 * under RECD_REC_TIME_REJECT, or the sink's error. */
RECD_API int recd_rec_writer_onfoot(recd_rec_writer *w, const recd_rec_onfoot *b);
RECD_API int recd_rec_writer_vehicle(recd_rec_writer *w, const recd_rec_vehicle *b);

/* ---- Reader / validator --------------------------------------------------------------------- */

typedef enum recd_rec_layout {
    RECD_REC_LAYOUT_UNKNOWN = 0,
    RECD_REC_LAYOUT_VEHICLE,              /* 1000/1 + 67-byte blocks */
    RECD_REC_LAYOUT_ONFOOT,               /* 1000/2 + 72-byte blocks */
    RECD_REC_LAYOUT_HEADER_ONLY,          /* 1000/0 (type NONE): header and nothing else */
    RECD_REC_LAYOUT_LEGACY_ONFOOT_56,     /* 1000/2 + 56-byte blocks */
    RECD_REC_LAYOUT_LEGACY_HEADERLESS_75, /* no header, 75-byte vehicle blocks */
    RECD_REC_LAYOUT_VCMP,                 /* VC:MP NPC plugin file: 1000..1005 header, other blocks */
    RECD_REC_LAYOUT_TEXT_MANGLED          /* went through a text conversion; unrecoverable */
} recd_rec_layout;

/* "samp-vehicle", "legacy-onfoot-56", ... */
RECD_API const char *recd_rec_layout_name(recd_rec_layout l);

typedef struct recd_rec_info {
    recd_rec_layout layout;
    uint32_t signature;     /* header u32 0 (0 when headerless) */
    uint32_t type;          /* header u32 1 as stored */
    size_t data_offset;     /* 8, or 0 when headerless */
    size_t block_size;      /* 67, 72, 56, 75, or 0 */
    uint64_t block_count;   /* whole blocks */
    size_t trailing_bytes;  /* bytes after the last whole block */
    uint32_t first_time_ms, last_time_ms;
    uint64_t equal_time_steps, decreasing_time_steps;
    uint32_t max_gap_ms;
    bool open_mp_accepts; /* open.mp and FCNPC would load it (type 1/2, whole-block prefix) */
    bool samp_accepts;    /* the legacy samp-npc 0.3.7 client would load it */
} recd_rec_info;

/* Identifies the layout of buf and validates it. Adds a problem with a byte offset for everything
 * a real reader would reject (RECD_SEV_ERROR) and for anomalies (WARNING/INFO). Returns 0 when
 * the layout is standard and nothing is an error, -EBADMSG otherwise; info is filled either way.
 * report may be NULL. */
RECD_API int recd_rec_probe(const uint8_t *buf, size_t len, recd_rec_info *info,
                            recd_report *report);

/* Bytes of buf that form a valid standard file: header + whole blocks (repair = truncate here).
 * 0 when the layout is not standard. The header itself is not rewritten: a repair tool must also
 * check info->signature (1000) and info->type against info->layout. */
RECD_API size_t recd_rec_valid_prefix(const recd_rec_info *info);

/* True for VEHICLE, ONFOOT and HEADER_ONLY: the layouts 0.3.7, open.mp and FCNPC decode. */
RECD_API bool recd_rec_layout_is_standard(recd_rec_layout l);

/* Start of block i of a probed buffer, or NULL when i >= info->block_count or the layout has no
 * decodable blocks (VCMP, TEXT_MANGLED, UNKNOWN). The block is info->block_size bytes long. */
RECD_API const uint8_t *recd_rec_block_at(const uint8_t *buf, const recd_rec_info *info,
                                          uint64_t i);

/* A samp-player message's state (recd_msg.player, recd/message.h): its .rec type, and for a vehicle
 * the model and seat when given. */
typedef struct recd_msg_player {
    recd_rec_type rec_type; /* RECD_REC_TYPE_ONFOOT or RECD_REC_TYPE_VEHICLE */
    bool has_model, has_seat;
    uint16_t vehicle_model; /* 400..611 */
    uint8_t seat;           /* 0 driver, 1..3 passengers */
} recd_msg_player;

#ifdef __cplusplus
}
#endif
#endif
