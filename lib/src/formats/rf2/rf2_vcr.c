/* SPDX-License-Identifier: MIT */
/* The rFactor 2 replay container: gzip wrapper, preamble, header, drivers, slices and events.
 * Every read goes through a cursor that refuses to pass the end, and every count is checked
 * against the bytes left before anything is allocated for it. */
#include "formats/rf2/rf2_vcr.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "base/bytes.h"

/* The smallest driver entry: slot, three empty strings' prefixes (1+1+2+2+2), VEH, unknown, times. */
#define DRIVER_MIN_SIZE (1 + 1 + 1 + 2 + 2 + 2 + RF2_DRIVER_VEH_SIZE + RF2_DRIVER_UNKNOWN_SIZE + 8)

typedef struct cursor {
    const uint8_t *p;
    size_t len, pos;
    rf2_vcr *v;
} cursor;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void damage(rf2_vcr *v, uint64_t offset, const char *fmt, ...)
{
    if (v->damaged)
        return;
    v->damaged = true;
    v->damage_offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->damage, sizeof v->damage, fmt, ap);
    va_end(ap);
}

/* Takes n bytes or records why it cannot. what names the field for the message. */
static const uint8_t *take(cursor *c, size_t n, const char *what)
{
    if (c->len - c->pos < n) {
        damage(c->v, c->pos, "%s: needs %zu bytes, %zu left", what, n, c->len - c->pos);
        return NULL;
    }
    const uint8_t *p = c->p + c->pos;
    c->pos += n;
    return p;
}

static bool get_u8(cursor *c, uint8_t *out, const char *what)
{
    const uint8_t *p = take(c, 1, what);
    return p ? (*out = p[0], true) : false;
}

static bool get_u16(cursor *c, uint16_t *out, const char *what)
{
    const uint8_t *p = take(c, 2, what);
    return p ? (*out = ld_le16(p), true) : false;
}

static bool get_u32(cursor *c, uint32_t *out, const char *what)
{
    const uint8_t *p = take(c, 4, what);
    return p ? (*out = ld_le32(p), true) : false;
}

static bool get_f32(cursor *c, float *out, const char *what)
{
    uint32_t u;
    return get_u32(c, &u, what) ? (*out = f32_from_bits(u), true) : false;
}

/* A string with a length prefix of width bytes (1, 2 or 4), always unsigned. */
static bool get_text(cursor *c, unsigned width, rf2_text *out, const char *what)
{
    size_t at = c->pos;
    uint32_t n = 0;
    uint8_t n8;
    uint16_t n16;
    bool ok = width == 1   ? (get_u8(c, &n8, what) && (n = n8, true))
              : width == 2 ? (get_u16(c, &n16, what) && (n = n16, true))
                           : get_u32(c, &n, what);
    if (!ok)
        return false;
    if (n > c->len - c->pos) {
        damage(c->v, at, "%s: length %u runs past the end (%zu bytes left)", what, n, c->len - c->pos);
        return false;
    }
    out->p = c->p + c->pos;
    out->len = n;
    c->pos += n;
    return true;
}

/* Inflates a gzip'd replay into v->inflated, capped. A cut or corrupt stream keeps what inflated
 * before the fault: the reader then reports damage where those bytes end. */
static int gunzip(rf2_vcr *v, const uint8_t *buf, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return -ENOMEM;
    z.next_in = (Bytef *)buf;
    int rc = Z_OK;
    size_t in_left = len;
    while (rc != Z_STREAM_END) {
        if (v->inflated.len >= RF2_INFLATED_MAX) {
            damage(v, RF2_INFLATED_MAX, "inflated replay exceeds %u MiB; the rest is ignored",
                   RF2_INFLATED_MAX >> 20);
            break;
        }
        size_t want = v->inflated.len < (1u << 16) ? (1u << 16) : v->inflated.len;
        if (want > RF2_INFLATED_MAX - v->inflated.len)
            want = RF2_INFLATED_MAX - v->inflated.len;
        if (recd_buf_reserve(&v->inflated, want) < 0) {
            inflateEnd(&z);
            return -ENOMEM;
        }
        uInt chunk_in = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        z.avail_in = chunk_in;
        z.next_out = v->inflated.data + v->inflated.len;
        z.avail_out = (uInt)want;
        rc = inflate(&z, Z_NO_FLUSH);
        in_left -= chunk_in - z.avail_in;
        v->inflated.len += want - z.avail_out;
        if (rc == Z_MEM_ERROR) {
            inflateEnd(&z);
            return -ENOMEM;
        }
        if (rc == Z_STREAM_END) {
            if (in_left)
                damage(v, v->inflated.len, "%zu bytes after the gzip stream are ignored", in_left);
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            damage(v, v->inflated.len, "gzip data is corrupt at compressed byte %zu (%s); %zu bytes inflated before it",
                   len - in_left, z.msg ? z.msg : "inflate error", v->inflated.len);
            break;
        }
        if (in_left == 0 && z.avail_out != 0) {
            damage(v, v->inflated.len, "gzip data is cut after %zu compressed bytes; %zu bytes inflated",
                   len, v->inflated.len);
            break;
        }
    }
    inflateEnd(&z);
    return 0;
}

/* Where the magic starts: right after the first line feed of the preamble, or at 0 without one.
 * len may be a head of the file. */
static bool find_magic(const uint8_t *p, size_t len, size_t *at)
{
    if (len >= 4 && memcmp(p, RF2_MAGIC, 4) == 0) {
        *at = 0;
        return true;
    }
    const uint8_t *lf = memchr(p, '\n', len < RF2_PREAMBLE_MAX ? len : RF2_PREAMBLE_MAX);
    if (!lf)
        return false;
    size_t m = (size_t)(lf - p) + 1;
    if (len - m < 4 || memcmp(p + m, RF2_MAGIC, 4) != 0)
        return false;
    *at = m;
    return true;
}

bool rf2_vcr_sniff(const uint8_t *head, size_t len, bool *compressed)
{
    size_t at;
    *compressed = false;
    if (len >= 3 && head[0] == 0x1F && head[1] == 0x8B && head[2] == 8) {
        /* Inflate just enough of the start to see the preamble and the magic. */
        uint8_t out[RF2_PREAMBLE_MAX + 8];
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
            return false;
        z.next_in = (Bytef *)head;
        z.avail_in = len > (1u << 30) ? (1u << 30) : (uInt)len;
        z.next_out = out;
        z.avail_out = sizeof out;
        int rc = inflate(&z, Z_SYNC_FLUSH);
        size_t got = sizeof out - z.avail_out;
        inflateEnd(&z);
        if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
            return false;
        *compressed = true;
        return find_magic(out, got, &at);
    }
    return find_magic(head, len, &at);
}

const char *rf2_session_name(uint8_t session_info)
{
    unsigned t = session_info & 0x0F;
    return t == 0 ? "test_day" : t <= 4 ? "practice" : t <= 8 ? "qualifying" : t == 9 ? "warmup"
                                                                     : t <= 13 ? "race" : "unknown";
}

static bool read_driver(cursor *c, rf2_driver *d)
{
    d->offset = c->pos;
    const uint8_t *veh;
    if (!get_u8(c, &d->slot, "driver slot") || !get_text(c, 1, &d->name, "driver name") ||
        !get_text(c, 1, &d->co_driver, "co-driver name") ||
        !get_text(c, 2, &d->vehicle, "vehicle name") ||
        !get_text(c, 2, &d->vehicle_version, "vehicle version") ||
        !get_text(c, 2, &d->vehicle_id, "vehicle id") ||
        !(veh = take(c, RF2_DRIVER_VEH_SIZE, "VEH file name")) ||
        !take(c, RF2_DRIVER_UNKNOWN_SIZE, "driver block") ||
        !get_f32(c, &d->entry_time, "driver entry time") ||
        !get_f32(c, &d->exit_time, "driver exit time"))
        return false;
    const uint8_t *nul = memchr(veh, 0, RF2_DRIVER_VEH_SIZE);
    d->veh_file.p = veh;
    d->veh_file.len = nul ? (size_t)(nul - veh) : RF2_DRIVER_VEH_SIZE;
    return true;
}

static int read_header(rf2_vcr *v, cursor *c)
{
    if (!get_f32(c, &v->version, "version") || !get_text(c, 4, &v->rfm, "RFM name") ||
        !get_u32(c, &v->unknown_after_rfm, "header") || !get_text(c, 4, &v->mod_info, "mod info") ||
        !get_text(c, 4, &v->scn, "SCN file name") || !get_text(c, 4, &v->aiw, "AIW file name") ||
        !get_text(c, 2, &v->mod_name, "mod name") || !get_text(c, 2, &v->mod_version, "mod version") ||
        !get_text(c, 2, &v->mod_uid, "mod UID") || !get_text(c, 2, &v->track, "track path") ||
        !get_u8(c, &v->session_unknown, "session") || !get_u8(c, &v->session_info, "session info") ||
        !take(c, RF2_SESSION_UNKNOWN_SIZE, "session block"))
        return 0;
    size_t count_at = c->pos;
    if (!get_u32(c, &v->driver_count, "driver count"))
        return 0;
    if (v->driver_count > RF2_DRIVERS_MAX || v->driver_count > (c->len - c->pos) / DRIVER_MIN_SIZE) {
        damage(v, count_at, "driver count %u is more than %s", v->driver_count,
               v->driver_count > RF2_DRIVERS_MAX ? "the reader accepts (1024)" : "the bytes left hold");
        return 0;
    }
    if (v->driver_count) {
        v->drivers = calloc(v->driver_count, sizeof *v->drivers);
        if (!v->drivers)
            return -ENOMEM;
    }
    for (uint32_t i = 0; i < v->driver_count; i++) {
        if (!read_driver(c, &v->drivers[i]))
            return 0;
        v->drivers_read++;
    }
    if (!get_u32(c, &v->slice_count, "slice count") || !get_u32(c, &v->event_count, "event count") ||
        !get_f32(c, &v->start_time, "start time") || !get_f32(c, &v->end_time, "end time"))
        return 0;
    v->slices_offset = c->pos;
    v->header_done = true;
    return 0;
}

int rf2_vcr_open(rf2_vcr *v, const uint8_t *buf, size_t len)
{
    memset(v, 0, sizeof *v);
    v->data = buf;
    v->len = len;
    if (len >= 2 && buf[0] == 0x1F && buf[1] == 0x8B) {
        v->compressed = true;
        int rc = gunzip(v, buf, len);
        if (rc < 0)
            return rc;
        v->data = v->inflated.data ? v->inflated.data : (const uint8_t *)"";
        v->len = v->inflated.len;
    }
    size_t at;
    if (!find_magic(v->data, v->len, &at)) {
        /* A cut stream may still hold the start: say so rather than "not a replay". */
        if (!v->damaged)
            damage(v, 0, "no \"IRSR\" magic after a text line at the start");
        return -EBADMSG;
    }
    v->preamble.p = v->data;
    v->preamble.len = at ? at - 1 : 0;
    cursor c = {v->data, v->len, at + 4, v};
    return read_header(v, &c);
}

void rf2_vcr_close(rf2_vcr *v)
{
    free(v->drivers);
    recd_buf_free(&v->inflated);
    memset(v, 0, sizeof *v);
}

int rf2_vcr_events(rf2_vcr *v, rf2_event_fn fn, void *data, rf2_walk *walk)
{
    rf2_walk w = {0, 0, v->slices_offset};
    if (!v->header_done) {
        if (walk)
            *walk = w;
        return 0;
    }
    cursor c = {v->data, v->len, (size_t)v->slices_offset, v};
    int rc = 0;
    for (uint32_t s = 0; s < v->slice_count && !rc; s++) {
        float time;
        uint16_t n;
        if (c.pos == c.len) {
            damage(v, c.pos, "the file ends after %u of %u slices", s, v->slice_count);
            break;
        }
        if (!get_f32(&c, &time, "slice time") || !get_u16(&c, &n, "slice event count"))
            break;
        uint16_t k;
        for (k = 0; k < n; k++) {
            rf2_event ev;
            uint32_t h;
            ev.offset = c.pos;
            if (!get_u32(&c, &h, "event header") || !get_u8(&c, &ev.time_adjust, "event time adjustment"))
                break;
            ev.header = h;
            ev.slot = (uint8_t)(h & 0xFF);
            ev.size = (uint16_t)((h >> 8) & 0x1FF);
            ev.type = (uint8_t)((h >> 17) & 0x3F);
            ev.extra = (uint8_t)((h >> 23) & 0x3F);
            ev.cls = (uint8_t)(h >> 29);
            ev.slice = s;
            ev.time = time;
            if (ev.size > c.len - c.pos) { /* name the event: its header is intact */
                damage(v, ev.offset, "event (class %u, type %u) of slice %u declares %u payload bytes, %zu left",
                       ev.cls, ev.type, s, ev.size, c.len - c.pos);
                break;
            }
            ev.payload = take(&c, ev.size, "event payload");
            w.events++;
            if ((rc = fn(data, &ev)) != 0)
                break;
        }
        if (k < n)
            break;
        w.slices++;
        w.end = c.pos;
    }
    if (!rc && !v->damaged && c.pos < c.len && w.slices == v->slice_count)
        damage(v, c.pos, "%zu bytes after the last of %u slices", c.len - c.pos, v->slice_count);
    if (walk)
        *walk = w;
    return rc;
}
