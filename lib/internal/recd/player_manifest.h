/* SPDX-License-Identifier: MIT */
/* The manifest of a samp-player session: the ordered list of the .rec parts a player's on-foot
 * and vehicle states were split into, written by recd as <session>.json beside the parts and read
 * by `rectool npc script` (docs/formats/samp-player.md). The code is the .rec format's
 * (lib/src/formats/rec/rec_player_manifest*.c); the daemon's player session and rectool's npc
 * command reach it through this private header, as lib/src stays off the daemon's include path. */
#ifndef RECD_PLAYER_MANIFEST_H
#define RECD_PLAYER_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"
#include "recd/message.h" /* also the part types (recd_rec_type) */
#include "recd/path_template.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RECD_PLAYER_MANIFEST_VERSION 1
#define RECD_PLAYER_MANIFEST_MAX_PARTS 100000 /* a reader refuses longer lists */
#define RECD_PLAYER_MANIFEST_MAX_BYTES (64u << 20)

typedef struct recd_player_part {
    char path[RECD_PATH_MAX]; /* relative to the output root (the manifest's own root) */
    recd_rec_type type;       /* on foot or vehicle */
    uint64_t start_ms;        /* offset of its first state from the session start */
    uint64_t duration_ms;     /* time of its last state (the part is rebased to 0) */
    bool has_model, has_seat; /* what the vehicle states carried (vehicle parts only) */
    uint16_t vehicle_model;
    uint8_t seat;
    bool complete; /* false while recd still writes it: duration is what it had then */
} recd_player_part;

typedef struct recd_player_manifest {
    char session[RECD_SESSION_KEY_MAX + 1];
    int64_t start_time_ms; /* session start, Unix ms */
    bool complete;         /* the session ended (closed, or put right by recovery) */
    bool recovered;        /* recovery finished it after recd stopped without closing it */
    recd_player_part *parts;
    size_t nparts, cap;
} recd_player_manifest;

/* Appends a zeroed part; NULL without memory or past RECD_PLAYER_MANIFEST_MAX_PARTS. */
recd_player_part *recd_player_manifest_add(recd_player_manifest *m);
void recd_player_manifest_free(recd_player_manifest *m);

/* The manifest as JSON text, one part per line, ending in a newline (NUL-terminated, malloc'd);
 * NULL without memory. */
char *recd_player_manifest_to_json(const recd_player_manifest *m);
/* Its pieces, for a writer that appends: the first line (up to "parts":[ and its newline; as
 * long when complete as when not), and one part's line (a comma after it when more follow).
 * Each returns the length written into out (NUL-terminated), or -ENOSPC / -ENOMEM. */
#define RECD_PLAYER_LINE_MAX (2 * RECD_PATH_MAX + 256)
int recd_player_manifest_header(const recd_player_manifest *m, char *out, size_t cap);
int recd_player_part_line(const recd_player_part *p, bool comma, char *out, size_t cap);
/* Parses manifest text (len bytes). 0, -ENOMEM, or -EBADMSG with why naming the field. Text that
 * is not JSON but has recd's layout (a first line, then one part a line), as recd leaves it when
 * it stopped in the middle of appending, is read as far as its whole part lines go. */
int recd_player_manifest_parse(const char *text, size_t len, recd_player_manifest *out,
                               char *why, size_t whylen);
int recd_player_manifest_load(const char *file, recd_player_manifest *out, char *why,
                              size_t whylen);
/* Writes text to rel (relative to root_fd, directories made) through rel.tmp, fsync and rename:
 * a reader sees the old manifest or the new one, never a mix. 0 or a negative errno. */
int recd_player_manifest_store(int root_fd, const char *rel, const char *text);

/* After a crash: every manifest under root_fd that is not complete is put right against the
 * parts on disk (recovery has already finalized the .part files): a part found gets its real
 * duration, a part that is gone (empty, removed) is dropped, and the manifest is stored again as
 * complete and recovered. Returns how many manifests were rewritten, or a negative errno. */
int recd_player_manifest_recover_root(int root_fd);

#ifdef __cplusplus
}
#endif

#endif
