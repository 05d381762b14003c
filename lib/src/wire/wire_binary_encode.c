/* SPDX-License-Identifier: MIT */
/* recd_msg -> one binary frame: header, session key, optional seq and time, per-type payload.
 * The body length is patched in at the end; on any error the output is rolled back. */
#include <errno.h>
#include <string.h>

#include "base/bytes.h"
#include "wire/wire_internal.h"

static int put(recd_buf *out, const void *p, size_t n) { return recd_buf_append(out, p, n); }

static int put_u8(recd_buf *out, uint8_t v) { return put(out, &v, 1); }

static int put_u64(recd_buf *out, uint64_t v)
{
    uint8_t b[8];
    st_le64(b, v);
    return put(out, b, 8);
}

static uint8_t frame_type(recd_msg_type t)
{
    switch (t) {
    case RECD_MSG_OPEN: return WIRE_T_OPEN;
    case RECD_MSG_STATE: return WIRE_T_STATE;
    case RECD_MSG_EVENT: return WIRE_T_EVENT;
    case RECD_MSG_FLUSH: return WIRE_T_FLUSH;
    case RECD_MSG_CLOSE: return WIRE_T_CLOSE;
    case RECD_MSG_SAVE: return WIRE_T_SAVE;
    default: return 0;
    }
}

static bool token_valid(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7F)
            return false;
    return true;
}

static int put_open(const recd_msg *m, recd_buf *out)
{
    uint8_t fmt;
    switch (m->format) {
    case RECD_MSG_FMT_SAMP_ONFOOT: fmt = WIRE_FMT_SAMP_ONFOOT; break;
    case RECD_MSG_FMT_SAMP_VEHICLE: fmt = WIRE_FMT_SAMP_VEHICLE; break;
    case RECD_MSG_FMT_RECAP: fmt = WIRE_FMT_RECAP; break;
    case RECD_MSG_FMT_CARLA: fmt = WIRE_FMT_CARLA; break;
    case RECD_MSG_FMT_SAMP_PLAYER: fmt = WIRE_FMT_SAMP_PLAYER; break;
    default: return -EINVAL;
    }
    size_t tlen = m->open.auth ? strlen(m->open.auth) : 0;
    if (tlen > 255 || !token_valid(m->open.auth, tlen))
        return -EINVAL; /* the binary token length is one byte */
    int rc = put_u8(out, fmt);
    if (rc == 0)
        rc = put_u64(out, m->open.has_start_time ? (uint64_t)m->open.start_time_ms : 0);
    if (rc == 0)
        rc = put_u8(out, (uint8_t)tlen);
    if (rc == 0)
        rc = put(out, m->open.auth, tlen);
    if (rc == 0 && fmt == WIRE_FMT_RECAP)
        rc = m->open.recap ? wire_recap_open_write(m->open.recap, out) : -EINVAL;
    if (rc == 0 && fmt == WIRE_FMT_CARLA)
        rc = m->open.carla ? wire_carla_open_write(m->open.carla, out) : -EINVAL;
    return rc;
}

/* A samp-player state: its .rec type, for a vehicle the model (0: not given) and seat (0xFF: not
 * given), then the block without its time. */
static int put_player_state(const recd_msg *m, recd_buf *out)
{
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    const recd_msg_player *pl = &m->player;
    if (pl->rec_type == RECD_REC_TYPE_ONFOOT) {
        if (recd_rec_onfoot_check(&m->onfoot) < 0)
            return -EINVAL;
        recd_rec_onfoot_encode(&m->onfoot, block);
        int rc = put_u8(out, RECD_REC_TYPE_ONFOOT);
        return rc ? rc : put(out, block + 4, WIRE_ONFOOT_STATE_SIZE);
    }
    if (pl->rec_type != RECD_REC_TYPE_VEHICLE || recd_rec_vehicle_check(&m->vehicle) < 0 ||
        (pl->has_model && (pl->vehicle_model < 400 || pl->vehicle_model > 611)) ||
        (pl->has_seat && pl->seat > 3))
        return -EINVAL;
    recd_rec_vehicle_encode(&m->vehicle, block);
    uint16_t model = pl->has_model ? pl->vehicle_model : 0;
    uint8_t head[4] = {RECD_REC_TYPE_VEHICLE, (uint8_t)model, (uint8_t)(model >> 8),
                       pl->has_seat ? pl->seat : 0xFF};
    int rc = put(out, head, sizeof head);
    return rc ? rc : put(out, block + 4, WIRE_VEHICLE_STATE_SIZE);
}

static int put_state(const recd_msg *m, recd_buf *out)
{
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    switch (m->format) {
    case RECD_MSG_FMT_SAMP_ONFOOT:
        if (recd_rec_onfoot_check(&m->onfoot) < 0)
            return -EINVAL;
        recd_rec_onfoot_encode(&m->onfoot, block);
        return put(out, block + 4, WIRE_ONFOOT_STATE_SIZE);
    case RECD_MSG_FMT_SAMP_VEHICLE:
        if (recd_rec_vehicle_check(&m->vehicle) < 0)
            return -EINVAL;
        recd_rec_vehicle_encode(&m->vehicle, block);
        return put(out, block + 4, WIRE_VEHICLE_STATE_SIZE);
    case RECD_MSG_FMT_RECAP:
        return m->recap_state ? wire_recap_state_write(m->recap_state, out) : -EINVAL;
    case RECD_MSG_FMT_CARLA:
        return m->carla_state ? wire_carla_state_write(m->carla_state, out) : -EINVAL;
    case RECD_MSG_FMT_SAMP_PLAYER: return put_player_state(m, out);
    default: return -EINVAL;
    }
}

/* The time a STATE or EVENT carries: .rec ms or Recap tick. */
static int message_time(const recd_msg *m, uint64_t *t)
{
    if (m->format == RECD_MSG_FMT_CARLA) { /* a frame's time is in its payload */
        *t = 0;
        return 0;
    }
    if (m->type == RECD_MSG_EVENT) {
        if (!m->recap_event)
            return -EINVAL;
        *t = m->recap_event->tick;
    } else if (m->format == RECD_MSG_FMT_RECAP) {
        if (!m->recap_state)
            return -EINVAL;
        *t = m->recap_state->tick;
    } else {
        bool veh = m->format == RECD_MSG_FMT_SAMP_VEHICLE ||
                   (m->format == RECD_MSG_FMT_SAMP_PLAYER &&
                    m->player.rec_type == RECD_REC_TYPE_VEHICLE);
        *t = veh ? m->vehicle.time_ms : m->onfoot.time_ms;
    }
    return *t > INT64_MAX ? -EINVAL : 0;
}

static int put_body(const recd_msg *m, recd_buf *out)
{
    switch (m->type) {
    case RECD_MSG_OPEN: return put_open(m, out);
    case RECD_MSG_STATE: return put_state(m, out);
    case RECD_MSG_EVENT:
        if (m->format == RECD_MSG_FMT_CARLA)
            return m->carla_event ? wire_carla_event_write(m->carla_event, out) : -EINVAL;
        return m->recap_event ? wire_recap_event_write(m->recap_event, out) : -EINVAL;
    case RECD_MSG_FLUSH:
        if (!m->flush.has_end_tick)
            return 0;
        return m->flush.end_tick > INT64_MAX ? -EINVAL : put_u64(out, m->flush.end_tick);
    case RECD_MSG_CLOSE:
        return m->close.has_end_time ? put_u64(out, (uint64_t)m->close.end_time_ms) : 0;
    case RECD_MSG_SAVE: {
        size_t n = strnlen(m->save.label, sizeof m->save.label);
        uint8_t head[5] = {(uint8_t)m->save.last_ms, (uint8_t)(m->save.last_ms >> 8),
                           (uint8_t)(m->save.last_ms >> 16), (uint8_t)(m->save.last_ms >> 24),
                           (uint8_t)n};
        if (!m->save.last_ms || !recd_session_key_valid(m->save.label, n))
            return -EINVAL;
        int rc = put(out, head, sizeof head);
        return rc ? rc : put(out, m->save.label, n);
    }
    default: return -EINVAL;
    }
}

int wire_binary_encode(const recd_msg *m, size_t max_frame, bool omit_key, bool with_time,
                       recd_buf *out)
{
    uint8_t type = frame_type(m->type);
    bool timed = with_time && (m->type == RECD_MSG_STATE || m->type == RECD_MSG_EVENT);
    size_t klen = strnlen(m->session, sizeof m->session);
    uint64_t time = 0;
    if (!type || (!omit_key && !recd_session_key_valid(m->session, klen)))
        return -EINVAL;
    if ((m->has_seq && m->seq > INT64_MAX) || (timed && message_time(m, &time) < 0))
        return -EINVAL;
    if (m->type == RECD_MSG_EVENT && m->format != RECD_MSG_FMT_RECAP &&
        m->format != RECD_MSG_FMT_CARLA && m->format != RECD_MSG_FMT_NONE)
        return -EINVAL;
    size_t start = out->len;
    uint8_t hdr[RECD_WIRE_HEADER_SIZE] = {RECD_WIRE_MAGIC, RECD_WIRE_VERSION, type,
                                          (uint8_t)((m->has_seq ? WIRE_F_SEQ : 0) |
                                                    (timed ? WIRE_F_TIME : 0) |
                                                    (m->type == RECD_MSG_OPEN && m->open.resume
                                                         ? WIRE_F_RESUME
                                                         : 0) |
                                                    (m->type == RECD_MSG_OPEN && m->open.ring
                                                         ? WIRE_F_RING
                                                         : 0)),
                                          0, 0, 0, 0};
    int rc = put(out, hdr, sizeof hdr);
    if (rc == 0)
        rc = put_u8(out, omit_key ? 0 : (uint8_t)klen);
    if (rc == 0 && !omit_key)
        rc = put(out, m->session, klen);
    if (rc == 0 && m->has_seq)
        rc = put_u64(out, m->seq);
    if (rc == 0 && timed)
        rc = put_u64(out, time);
    if (rc == 0)
        rc = put_body(m, out);
    size_t body = rc == 0 ? out->len - start - RECD_WIRE_HEADER_SIZE : 0;
    if (rc == 0 && (body > wire_max_frame(max_frame) || body > UINT32_MAX))
        rc = -EMSGSIZE;
    if (rc < 0) {
        out->len = start;
        return rc;
    }
    st_le32(out->data + start + 4, (uint32_t)body);
    return 0;
}
