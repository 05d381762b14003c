/* SPDX-License-Identifier: MIT */
/* A StarCraft II replay as recd reads it without per-build tables: the header, replay.details,
 * replay.attributes.events, replay.gamemetadata.json, the member list and the tracker events
 * (docs/formats/sc2replay.md). Decoding keeps everything read before the first damage. */
#ifndef RECD_SC2_REPLAY_H
#define RECD_SC2_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/sc2/sc2_mpq.h"
#include "formats/sc2/sc2_versioned.h"
#include "recd/common.h"

#define SC2_MAX_PLAYERS 16
#define SC2_MAX_ATTRIBUTES 4096
#define SC2_MEMBER_CAP (64u << 20) /* no member of a real replay comes near this */
#define SC2_TRACKER_KINDS 10

typedef struct sc2_player {
    char name[256];       /* as stored, clan markup included */
    char name_plain[256]; /* <sp/> and HTML entities unescaped */
    char race[64];        /* localized, as stored */
    char race_code[8];    /* attribute 3001 ("Prot", "Terr", "Zerg", "RAND"), "" when absent */
    int64_t result;       /* 1 win, 2 loss, 3 tie, else undecided */
    int64_t team;
    int64_t control; /* 2 human, 3 computer */
    char control_code[8]; /* attribute 500 ("Humn", "Comp"), "" when absent */
    uint8_t argb[4];
    int64_t handicap;
    int64_t region, realm, toon_id;
    char program[8];
    bool has_mmr, has_apm;
    int64_t mmr;
    double apm;
} sc2_player;

typedef struct sc2_attribute {
    uint32_t ns, id;
    uint8_t scope;
    char value[5]; /* the 4 value bytes in reading order, trailing NULs dropped */
} sc2_attribute;

typedef struct sc2_replay {
    bool has_header;
    int64_t major, minor, revision, build, base_build, loops;
    int mpq_format_version;

    bool has_details;
    char map[256];
    int64_t time_utc;          /* FILETIME: 100 ns since 1601-01-01 UTC */
    int64_t time_local_offset; /* 100 ns; already corrected when the file holds an absolute time */
    size_t nplayers;
    sc2_player players[SC2_MAX_PLAYERS];

    recd_buf members; /* names, each ending in '\0' */
    size_t nmembers;

    bool has_attributes;
    size_t nattributes;
    sc2_attribute attributes[SC2_MAX_ATTRIBUTES];

    bool has_metadata;
    char metadata_version[32];

    bool has_tracker;
    uint64_t tracker_counts[SC2_TRACKER_KINDS];
    uint64_t tracker_events;

    /* The first damage; decoding stops there, keeping what came before. */
    bool damaged;
    char err[320];
} sc2_replay;

/* The stable snake_case name of tracker event id k (0..9), or NULL. */
const char *sc2_tracker_kind(int64_t id);

/* True when buf starts with the user-data block of an SC2 replay header. */
bool sc2_is_replay(const uint8_t *buf, size_t len);

/* Decodes everything the struct holds; r must be freed with sc2_replay_free() whatever the result.
 * with_tracker false skips the tracker walk (counts stay 0). 0, -EBADMSG (r->err says what and
 * where, the fields before it are set) or -ENOMEM. */
int sc2_replay_read(sc2_replay *r, const uint8_t *buf, size_t len, bool with_tracker);
void sc2_replay_free(sc2_replay *r);


/* Tracker events: fn(data, game loop, event id, tree, the event's struct) per event in order; a
 * non-zero return stops the walk and is returned. -EBADMSG with err (member offsets) on damage. */
typedef int (*sc2_tracker_fn)(void *data, int64_t loop, int64_t id, const sc2v_tree *t,
                              const sc2v_node *ev);
int sc2_tracker_walk(const uint8_t *buf, size_t len, sc2_tracker_fn fn, void *data, char *err,
                     size_t errlen);

/* Reads one member of buf's archive into out (appended): 0, -ENOENT when absent, -EBADMSG with
 * err, or a negative errno. */
int sc2_replay_member(const uint8_t *buf, size_t len, const char *name, recd_buf *out, char *err,
                      size_t errlen);

/* ISO 8601 UTC text of a FILETIME into out (at least 32 bytes); false when out of range. */
bool sc2_filetime_iso(int64_t filetime, char *out, size_t outlen);

#endif
