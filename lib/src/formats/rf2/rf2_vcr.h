/* SPDX-License-Identifier: MIT */
/* Internal: the rFactor 2 replay (.vcr, VCR 1.08) container reader. It unwraps the optional gzip
 * layer, then reads the text preamble, the header, the driver list and the slices of events in
 * place, never past a declared size and never allocating from a length it has not checked
 * against the bytes that remain. Damage stops the reader with a byte offset; what decoded before
 * it stays usable. Layout: docs/formats/rf2-vcr.md. */
#ifndef RECD_RF2_VCR_H
#define RECD_RF2_VCR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recd/common.h"

#define RF2_MAGIC "IRSR"
#define RF2_PREAMBLE_MAX 4096             /* the text line before the magic */
#define RF2_INFLATED_MAX (512u << 20)     /* cap on a gunzipped replay */
#define RF2_DRIVERS_MAX 1024              /* slots are a byte; joins and leaves may repeat them */
#define RF2_SESSION_UNKNOWN_SIZE 67
#define RF2_DRIVER_VEH_SIZE 32
#define RF2_DRIVER_UNKNOWN_SIZE 48
#define RF2_SLOT_NONE 255

/* A string as the file stores it: a view into the (inflated) data, not NUL-terminated. */
typedef struct rf2_text {
    const uint8_t *p;
    size_t len;
} rf2_text;

typedef struct rf2_driver {
    uint8_t slot;
    rf2_text name, co_driver, vehicle, vehicle_version, vehicle_id, veh_file;
    float entry_time, exit_time;
    uint64_t offset; /* of the entry, in the data */
} rf2_driver;

/* One event: the 32-bit header split into its fields, the byte after it and the payload. */
typedef struct rf2_event {
    uint32_t header;
    uint8_t slot;   /* bits 0-7 (255: no driver) */
    uint16_t size;  /* bits 8-16 */
    uint8_t type;   /* bits 17-22 */
    uint8_t extra;  /* bits 23-28, meaning unverified */
    uint8_t cls;    /* bits 29-31 */
    uint8_t time_adjust;
    const uint8_t *payload; /* size bytes */
    uint32_t slice;         /* index of its slice */
    float time;             /* its slice's time */
    uint64_t offset;        /* of the header, in the data */
} rf2_event;

typedef struct rf2_vcr {
    /* The bytes the layout describes: the input, or the gunzipped copy in inflated. */
    const uint8_t *data;
    size_t len;
    bool compressed;
    recd_buf inflated;

    rf2_text preamble; /* without its line feed */
    float version;
    rf2_text rfm, mod_info, scn, aiw;
    uint32_t unknown_after_rfm;
    rf2_text mod_name, mod_version, mod_uid, track;
    uint8_t session_unknown, session_info;

    uint32_t driver_count; /* declared */
    rf2_driver *drivers;   /* the ones read in full */
    uint32_t drivers_read;

    bool header_done;      /* everything up to the first slice was read */
    uint32_t slice_count;  /* declared */
    uint32_t event_count;  /* declared */
    float start_time, end_time;
    uint64_t slices_offset; /* where the first slice starts */

    /* The first damage met, by rf2_vcr_open or rf2_vcr_events. */
    bool damaged;
    uint64_t damage_offset; /* in data (the inflated bytes for a gzip'd file) */
    char damage[200];
} rf2_vcr;

/* True when head looks like a replay: gzip (then the inflated start is checked) or a text line
 * followed by the magic. */
bool rf2_vcr_sniff(const uint8_t *head, size_t len, bool *compressed);

/* Reads everything up to the slices. 0 (check v->damaged: a cut header still fills what it
 * reached), -EBADMSG when this is not a replay at all (no magic), -ENOMEM. Free with
 * rf2_vcr_close() in every case. */
int rf2_vcr_open(rf2_vcr *v, const uint8_t *buf, size_t len);
void rf2_vcr_close(rf2_vcr *v);

/* Called once per event in file (time) order; a non-zero return stops the walk and is returned. */
typedef int (*rf2_event_fn)(void *data, const rf2_event *ev);

typedef struct rf2_walk {
    uint32_t slices; /* read in full */
    uint64_t events;
    uint64_t end;    /* offset after the last whole slice */
} rf2_walk;

/* Walks the slices after a successful open (header_done). Stops at damage (v->damaged set, the
 * events before it delivered) or at the declared slice count; bytes left after it are damage too.
 * 0, or fn's non-zero value. walk may be NULL. */
int rf2_vcr_events(rf2_vcr *v, rf2_event_fn fn, void *data, rf2_walk *walk);

/* Session type name of session_info & 0x0F: "test_day", "practice", "qualifying", "warmup",
 * "race" or "unknown". */
const char *rf2_session_name(uint8_t session_info);

#endif
