/* SPDX-License-Identifier: MIT */
/* Internal: reading a CARLA recorder log (hostile input): the header, what the packets say about
 * the release that wrote it (id table, vector width, additional data), and its frames one by
 * one as views into the buffer. Tolerant as CARLA's replayer is (unknown ids are skipped and
 * kept), stricter in what it reports (every short or overlong packet with its byte offset). */
#ifndef RECD_CARLA_READER_H
#define RECD_CARLA_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bytes.h"
#include "recd/carla.h"

#define CARLA_MAGIC "CARLA_RECORDER"
#define CARLA_MAGIC_LEN 14
#define CARLA_PACKET_HEADER 5 /* u8 id + u32 size */
#define CARLA_MAX_MS 1e15      /* elapsed seconds beyond 1e12 are no simulation time */

typedef struct carla_header {
    uint16_t version;
    int64_t date;
    const uint8_t *map;
    uint16_t map_len;
    size_t size; /* bytes of the header */
} carla_header;

/* 0, or -EBADMSG when buf does not start with a whole header with CARLA's magic (*why says
 * which: "cut header", "not a CARLA recorder log"). A cut header still matching the magic's
 * prefix sets *prefix. */
int carla_read_header(const uint8_t *buf, size_t len, carla_header *h, bool *prefix,
                      const char **why);

typedef struct carla_reader {
    const uint8_t *buf;
    size_t len;
    carla_header hdr;
    recd_carla_ids ids;   /* detected */
    bool interim_ids;     /* ids 21-23 as ue4-dev wrote them Nov 2023 .. Mar 2025 */
    unsigned width;       /* 4 or 8, detected from Position packets */
    bool additional_data; /* PlatformTime packets seen */
    bool times_sorted;    /* every frame's elapsed ms (rounded, as edits round it) is valid and
                             no smaller than the frame's before */
    size_t pos;           /* next frame */
    uint64_t frames;      /* frames read so far */
    uint64_t raw_packets; /* kept unparsed */
    recd_report *report;  /* may be NULL */
    recd_carla_packet *packets;
    size_t cap;
    char err[200]; /* why the last next() failed */
    uint64_t err_offset;
} carla_reader;

/* Reads the header and detects the layout. -EBADMSG (err) when it is no CARLA log. */
int carla_reader_init(carla_reader *r, const uint8_t *buf, size_t len, recd_report *report);
/* The next frame (FrameStart .. FrameEnd) into *f, views valid until the next call; *offset =
 * where it starts. 1 = a frame, 0 = end of file, -EBADMSG = a truncated, torn or misplaced
 * packet (r->err, r->err_offset; r->pos stays at the frame's start), -ENOMEM. */
int carla_reader_next(carla_reader *r, recd_carla_frame *f, size_t *offset);
/* carla_reader_next with only the frame's EventAdd, EventDel, EventParent and Position packets
 * in *f (parsed as carla_reader_next parses them); the others are checked for their size and
 * place only. Same errors. */
int carla_reader_next_world(carla_reader *r, recd_carla_frame *f, size_t *offset);
/* The id table's name for people: "ue4-dev-interim" for ue4-dev's Nov 2023 .. Mar 2025
 * numbering (the test export refuses files by), else the release's ("0.9.16"). */
const char *carla_reader_ids_label(const carla_reader *r);
/* Elapsed of the frame at r->pos, when a whole FrameStart is there. */
bool carla_reader_peek_elapsed(const carla_reader *r, double *elapsed);
void carla_reader_free(carla_reader *r);

/* A frame's elapsed seconds as the edit operations' milliseconds (rounded), or -1 when negative,
 * not finite or beyond any simulation time. */
int64_t carla_elapsed_ms(double elapsed);

/* A record's f32 at p, and component k of a vector of width w (4: f32, 8: f64) at p. */
static inline double carla_f32at(const uint8_t *p) { return (double)f32_from_bits(ld_le32(p)); }
static inline double carla_vat(const uint8_t *p, unsigned w, int k)
{
    return w == 4 ? carla_f32at(p + 4 * k) : f64_from_bits(ld_le64(p + 8 * k));
}

#endif
