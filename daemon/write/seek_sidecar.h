/* SPDX-License-Identifier: MIT */
/* The seek index of a part being written (docs/formats/seek-index.md): NAME.part.idx grows beside
 * NAME.part as the part does, one entry per keyframe or frame appended after the data it points
 * to is on disk, and becomes NAME.idx with the part's rename. Its points are either handed over
 * by the writer as it writes the data that holds them (fed: the encoder above knows them), or
 * found by scanning the part's new bytes (read back through a mapping). Runs in writer jobs
 * (thread pool), never on the loop: the loop only says which format a part has and hands the
 * points with the data. Failures are logged once per part and leave the part alone (recovery and
 * `rectool index` rebuild an index). */
#ifndef RECD_DAEMON_SEEK_SIDECAR_H
#define RECD_DAEMON_SEEK_SIDECAR_H

#include <stdbool.h>
#include <stdint.h>

#include "recd/format.h"
#include "recd/part_file.h"
#include "recd/seek_index.h"

/* An update waits until the part has grown by an eighth of its size since the last one, at least
 * SEEK_SIDECAR_STEP_MIN and at most SEEK_SIDECAR_STEP_MAX bytes; the part's end always updates.
 * Each update maps the part to read it (its header, and the bytes after the last point unless
 * the points are fed), and unmapping costs every CPU a TLB flush: a fixed 16 KiB step, with
 * CARLA's 16 KB frames, was over half of recd's CPU in S7. A small part is still indexed early,
 * and a crash loses at most SEEK_SIDECAR_STEP_MAX of the index, which recovery scans for. */
#define SEEK_SIDECAR_STEP_MIN (16u * 1024u)
#define SEEK_SIDECAR_STEP_MAX (1024u * 1024u)

typedef struct seek_sidecar {
    const recd_format *format;   /* the part's table entry (an index is wanted) */
    recd_seek_index_writer w;
    uint64_t scanned_size;       /* part size at the last update */
    char *rel;                   /* the index as stored (relative to the root), or NULL */
    bool failed;                 /* given up for this part (logged) */
    bool fed;                    /* points come through seek_sidecar_point: no scan */
    recd_buf pending;            /* fed: entries not yet stored */
    bool point_lost;             /* fed: a point found no memory (the next update gives up) */
    /* fed: pending's last entry, from held_at, is of a unit that may still be cut short in the
     * file (seek_sidecar_point_started): not stored until the next point or the part's end shows
     * it whole. In the struct's padding: a sidecar per open part, 100,000 sessions. */
    bool held;
    uint32_t held_at;
} seek_sidecar;

/* A sidecar for a part of format f, or NULL when f needs none (or without memory). */
seek_sidecar *seek_sidecar_new(const recd_format *f);
void seek_sidecar_free(seek_sidecar *s);

/* The part's points will be handed over (seek_sidecar_point) instead of scanned for. */
void seek_sidecar_set_fed(seek_sidecar *s);

/* Fed: point p is in the part's file now (p->offset in that file), probe its first
 * RECD_SEEK_INDEX_PROBE_SIZE bytes; stored with the next update. Points come in file order. */
void seek_sidecar_point(seek_sidecar *s, const recd_seek_point *p, const uint8_t *probe);
/* Fed: like seek_sidecar_point, for a point whose unit (a CARLA frame) may not be whole in the
 * file yet, only its first bytes: it is stored once the next point comes (units do not overlap)
 * or the part ends, as a scan only finds whole units. */
void seek_sidecar_point_started(seek_sidecar *s, const recd_seek_point *p, const uint8_t *probe);
/* Fed: a point of the part was lost (no memory): the next update gives the index up. */
void seek_sidecar_lose_point(seek_sidecar *s);

/* After bytes were appended to file (NAME.part under root_fd): appends the entries of the seek
 * points that are now complete to NAME.part.idx (spaced as the steps above say, unless
 * final). */
void seek_sidecar_update(seek_sidecar *s, int root_fd, const recd_part *file, bool final);

/* The part's file vanished and starts again in a new one: the index starts again with it. */
void seek_sidecar_restart(seek_sidecar *s);

/* The part was finalized as final_rel: NAME.part.idx becomes final_rel + ".idx". */
void seek_sidecar_finalize(seek_sidecar *s, int root_fd, const char *final_rel);

#endif
