/* SPDX-License-Identifier: MIT */
/* Test-only writer of rFactor 2 replays from the documented VCR 1.08 layout, and the sample replay
 * shared by the rectool tests and the fuzz seeds. */
#include "vcr_test_writer.h"

#include <errno.h>
#include <string.h>

#include "base/bytes.h"
#include "recd/gzip_members.h"

static int put(vcrw *w, const void *p, size_t n)
{
    return recd_buf_append(&w->b, p, n);
}

static int put_u8(vcrw *w, uint8_t v)
{
    return put(w, &v, 1);
}

static int put_u16(vcrw *w, uint16_t v)
{
    uint8_t b[2];
    st_le16(b, v);
    return put(w, b, 2);
}

static int put_u32(vcrw *w, uint32_t v)
{
    uint8_t b[4];
    st_le32(b, v);
    return put(w, b, 4);
}

static int put_f32(vcrw *w, float f)
{
    return put_u32(w, f32_to_bits(f));
}

/* A string with an unsigned length prefix of width bytes. */
static int put_text(vcrw *w, unsigned width, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    int rc = width == 1 ? put_u8(w, (uint8_t)n) : width == 2 ? put_u16(w, (uint16_t)n) : put_u32(w, (uint32_t)n);
    return rc < 0 ? rc : put(w, s ? s : "", n);
}

int vcrw_begin(vcrw *w, const vcrw_header *h, const vcrw_driver *drivers, uint32_t count)
{
    memset(w, 0, sizeof *w);
    uint8_t zeros[67] = {0};
    int rc = 0;
    if (h->preamble)
        rc |= put(w, h->preamble, strlen(h->preamble)) | put_u8(w, '\n');
    rc |= put(w, "IRSR", 4) | put_f32(w, h->version);
    rc |= put_text(w, 4, h->rfm) | put_u32(w, 0) | put_text(w, 4, h->mod_info) | put_text(w, 4, h->scn) |
          put_text(w, 4, h->aiw);
    rc |= put_text(w, 2, h->mod_name) | put_text(w, 2, h->mod_version) | put_text(w, 2, h->mod_uid) |
          put_text(w, 2, h->track);
    rc |= put_u8(w, 0) | put_u8(w, h->session_info) | put(w, zeros, 67);
    rc |= put_u32(w, count);
    for (uint32_t i = 0; i < count; i++) {
        const vcrw_driver *d = &drivers[i];
        char veh[32] = {0};
        if (d->veh_file) /* a fixed 32-byte field: no terminator when the name fills it */
            memcpy(veh, d->veh_file, strnlen(d->veh_file, sizeof veh));
        rc |= put_u8(w, d->slot) | put_text(w, 1, d->name) | put_text(w, 1, d->co_driver);
        rc |= put_text(w, 2, d->vehicle) | put_text(w, 2, d->vehicle_version) | put_text(w, 2, d->vehicle_id);
        rc |= put(w, veh, 32) | put(w, zeros, 48) | put_f32(w, d->entry_time) | put_f32(w, d->exit_time);
    }
    w->counts_at = w->b.len;
    rc |= put(w, zeros, 16);
    return rc ? -ENOMEM : 0;
}

int vcrw_slice(vcrw *w, float time)
{
    if (w->slices)
        st_le16(w->b.data + w->slice_events_at, w->slice_events);
    w->slices++;
    w->slice_events = 0;
    int rc = put_f32(w, time);
    w->slice_events_at = w->b.len;
    return rc < 0 ? rc : put_u16(w, 0);
}

int vcrw_event(vcrw *w, uint8_t cls, uint8_t type, uint8_t slot, uint8_t time_adjust, const void *payload,
               uint16_t size)
{
    uint32_t h = slot | ((uint32_t)(size & 0x1FF) << 8) | ((uint32_t)(type & 0x3F) << 17) |
                 ((uint32_t)(cls & 7) << 29);
    w->events++;
    w->slice_events++;
    int rc = put_u32(w, h) | put_u8(w, time_adjust) | put(w, payload, size);
    return rc ? -ENOMEM : 0;
}

int vcrw_finish(vcrw *w, float start, float end, bool gzip, recd_buf *out)
{
    if (w->slices)
        st_le16(w->b.data + w->slice_events_at, w->slice_events);
    uint8_t *c = w->b.data + w->counts_at;
    st_le32(c, w->slices);
    st_le32(c + 4, w->events);
    st_le32(c + 8, f32_to_bits(start));
    st_le32(c + 12, f32_to_bits(end));
    memset(out, 0, sizeof *out);
    int rc = gzip ? recd_gzip_member_write(NULL, 6, w->b.data, w->b.len, out)
                  : recd_buf_append(out, w->b.data, w->b.len);
    recd_buf_free(&w->b);
    return rc;
}

void vcrw_pose_encode(const vcrw_pose *p, uint8_t out[63])
{
    uint32_t info1 = (p->steer & 0x3FF) | (uint32_t)p->horn << 10 | (p->throttle & 0x3F) << 11 |
                     (uint32_t)p->in_pit_lane << 17 | (p->engine & 0x3FFF) << 18;
    uint32_t info2 = (p->damage & 0x3FFFF) | (p->current_driver & 3) << 18 | (uint32_t)p->headlight << 20 |
                     (uint32_t)p->driver_visible << 21 | (uint32_t)p->warning_light << 22 |
                     (uint32_t)p->following << 23 | (p->acceleration & 0xFF) << 24;
    st_le32(out, info1);
    st_le32(out + 4, info2);
    memcpy(out + 8, p->velocity, 5);
    memcpy(out + 13, p->unknown, 25);
    out[38] = (uint8_t)((p->brake & 0x3F) | (p->traction_control & 3) << 6);
    for (int i = 0; i < 3; i++) {
        st_le32(out + 39 + 4 * i, f32_to_bits(p->pos[i]));
        st_le32(out + 51 + 4 * i, f32_to_bits(p->rot[i]));
    }
}

void vcrw_checkpoint_encode(float lap_time, float time, uint8_t lap, unsigned sector, uint8_t out[11])
{
    st_le32(out, f32_to_bits(lap_time));
    st_le32(out + 4, f32_to_bits(time));
    out[8] = lap;
    out[9] = (uint8_t)((sector == 3 ? 0 : sector) << 6);
    out[10] = 0;
}

/* Sample laps: sector split times (seconds into the lap) and lap times, per driver. */
static const float sample_splits[2][3][3] = {
    {{25.25f, 52.5f, 80.5f}, {24.75f, 51.0f, 78.25f}, {25.0f, 51.5f, 79.0f}},
    {{26.0f, 53.25f, 81.75f}, {25.5f, 52.75f, 80.0f}, {25.125f, 52.0f, 79.5f}},
};

int vcrw_sample(bool gzip, recd_buf *out)
{
    char long_name[201];
    memset(long_name, 'L', 200);
    memcpy(long_name, "Long ", 5);
    long_name[200] = 0;
    vcrw_header h = {"rFactor 2 replay sample written by recd's tests", 1.08f, "Sample.rfm",
                     "Mod=Sample Series\nVersion=1.0\n", "Sample/Track.scn", "Sample/Track.aiw",
                     "Sample Series", "1.0", "0123456789abcdef", "Locations/Sample/Track", 10};
    vcrw_driver d[2] = {
        {0, "Alice Example", "", "Sample Car #1", "1.01", "SAMPLE_CAR_1", "SampleCar1.veh", 0.0f, 1000.0f},
        {3, long_name, "Co Driver", "Sample Car #7", "1.01", "SAMPLE_CAR_7", "SampleCar7.veh", 0.0f, 1000.0f},
    };
    vcrw w;
    int rc = vcrw_begin(&w, &h, d, 2);
    uint8_t p[64];
    /* The start: lights, countdown, a countdown period. */
    rc |= vcrw_slice(&w, 0.0f);
    p[0] = 5, p[1] = 0, p[2] = 0;
    rc |= vcrw_event(&w, 1, 10, 255, 0, p, 3);
    st_le32(p, 5);
    rc |= vcrw_event(&w, 1, 23, 255, 0, p, 4);
    st_le32(p, f32_to_bits(0.0f)), st_le32(p + 4, f32_to_bits(5.0f));
    rc |= vcrw_event(&w, 3, 9, 255, 0, p, 8);
    /* Laps: one slice per crossing, each with both cars' poses; positions change after lap 1. */
    float lap_start[2] = {5.0f, 5.0f};
    for (int lap = 0; lap < 3; lap++) {
        for (int sec = 0; sec < 3; sec++) {
            for (int car = 0; car < 2; car++) {
                float split = sample_splits[car][lap][sec];
                float t = lap_start[car] + split;
                rc |= vcrw_slice(&w, t);
                vcrw_pose pose = {.steer = 512, .throttle = 63, .engine = 9000, .acceleration = 20,
                                  .driver_visible = true, .brake = (unsigned)sec,
                                  .pos = {(float)lap * 100.0f + (float)sec, 1.5f, (float)car}, .rot = {0, 1.5f, 0}};
                vcrw_pose_encode(&pose, p);
                rc |= vcrw_event(&w, 0, (uint8_t)(10 + sec), d[car].slot, 0, p, 63);
                vcrw_checkpoint_encode(split, t, (uint8_t)(lap + 1), (unsigned)sec + 1, p);
                rc |= vcrw_event(&w, 3, 6, d[car].slot, 0, p, 11);
                if (sec == 2)
                    lap_start[car] = t;
            }
        }
        memset(p, 0, 21);
        p[21] = lap == 0 ? 0 : 3, p[22] = lap == 0 ? 3 : 0;
        rc |= vcrw_event(&w, 3, 48, 255, 0, p, 23);
    }
    /* Penalties, pit lane, garage, and two events nobody has decoded. */
    float end = lap_start[0] + 10.0f;
    rc |= vcrw_slice(&w, end);
    p[0] = 1, p[1] = 2, p[2] = 0;
    memcpy(p + 3, "Speeding in pit lane", 20);
    rc |= vcrw_event(&w, 2, 5, 3, 0, p, 23);
    p[0] = 1;
    rc |= vcrw_event(&w, 2, 7, 3, 0, p, 1);
    p[0] = 0;
    rc |= vcrw_event(&w, 2, 8, 0, 0, p, 1);
    p[0] = 34;
    rc |= vcrw_event(&w, 5, 2, 3, 0, p, 1);
    p[0] = 3;
    rc |= vcrw_event(&w, 3, 49, 3, 0, p, 1);
    st_le32(p, f32_to_bits(end));
    rc |= vcrw_event(&w, 1, 7, 3, 0, p, 4);
    for (int i = 0; i < 41; i++)
        p[i] = (uint8_t)(i * 7);
    rc |= vcrw_event(&w, 1, 4, 255, 9, p, 41);
    rc |= vcrw_event(&w, 2, 15, 0, 0, p, 0);
    rc |= vcrw_finish(&w, 0.0f, end, gzip, out);
    return rc ? -ENOMEM : 0;
}
