/* SPDX-License-Identifier: MIT */
/* SA-MP payloads of binary frames (docs/wire.md section 2.3) and their wire hooks: an on-foot or
 * vehicle state is its .rec block without the time, a samp-player state adds the block's type
 * and, for a vehicle, its model and seat. A samp open has nothing after its token. */
#include <errno.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/rec/rec_format.h"
#include "recd/format_wire.h"

/* Payload sizes of a samp state: the block without its leading u32 time. */
#define ONFOOT_FIELDS_SIZE (RECD_REC_ONFOOT_BLOCK_SIZE - 4)
#define VEHICLE_FIELDS_SIZE (RECD_REC_VEHICLE_BLOCK_SIZE - 4)

/* The field checks of the decoder's block path, one per block type (recd_rec_fields_check with
 * its type fixed: a tail call). */
static int onfoot_fields_check(const uint8_t *fields)
{
    return recd_rec_fields_check(RECD_REC_TYPE_ONFOOT, fields);
}

static int vehicle_fields_check(const uint8_t *fields)
{
    return recd_rec_fields_check(RECD_REC_TYPE_VEHICLE, fields);
}

static int block_refuse(const struct recd_format_wire *w, size_t len, uint64_t time, int check,
                        char *why, size_t whylen)
{
    size_t want = (size_t)w->block_len - 4;
    if (len != want)
        recd_why(why, whylen, "state: a %s payload is %lu bytes, this one is %lu",
                 recd_msg_format_name(w->format), (unsigned long)want, (unsigned long)len);
    else if (time > UINT32_MAX)
        recd_why(why, whylen, "state: time %llu ms does not fit the u32 clock of a .rec block",
                 (unsigned long long)time);
    else if (check < 0)
        recd_why(why, whylen, "state: a float is NaN or infinite, or weapon/additional key is out "
                              "of range");
    return -EBADMSG;
}

static void onfoot_block_decode(uint32_t time, const uint8_t *fields, recd_msg *m)
{
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    st_le32(block, time);
    memcpy(block + 4, fields, ONFOOT_FIELDS_SIZE);
    recd_rec_onfoot_decode(block, &m->onfoot);
}

static void vehicle_block_decode(uint32_t time, const uint8_t *fields, recd_msg *m)
{
    uint8_t block[RECD_REC_VEHICLE_BLOCK_SIZE];
    st_le32(block, time);
    memcpy(block + 4, fields, VEHICLE_FIELDS_SIZE);
    recd_rec_vehicle_decode(block, &m->vehicle);
}

/* The whole check of a state payload against hooks w, then its decode. */
static int block_read(const struct recd_format_wire *w, const uint8_t *p, size_t len,
                      uint64_t time, recd_msg *m, char *why, size_t whylen)
{
    int check = 0;
    if (len != (size_t)w->block_len - 4 || time > UINT32_MAX ||
        (check = w->block_fields_check(p)) < 0)
        return w->block_refuse(w, len, time, check, why, whylen);
    w->block_decode((uint32_t)time, p, m);
    return 0;
}

static int samp_open_read(const uint8_t *p, size_t len, recd_msg *m, char *why, size_t whylen)
{
    (void)p;
    (void)m;
    if (len) {
        recd_why(why, whylen, "open: %lu bytes after the payload (a samp open ends after the token)",
                 (unsigned long)len);
        return -EBADMSG;
    }
    return 0;
}

static int onfoot_state_read(const uint8_t *p, size_t len, uint64_t time, recd_msg *m, char *why,
                             size_t whylen)
{
    return block_read(&recd_rec__wire_onfoot, p, len, time, m, why, whylen);
}

static int vehicle_state_read(const uint8_t *p, size_t len, uint64_t time, recd_msg *m,
                              char *why, size_t whylen)
{
    return block_read(&recd_rec__wire_vehicle, p, len, time, m, why, whylen);
}

/* A samp-player state: u8 .rec type, for a vehicle u16 model (0: not given) and u8 seat (0xFF:
 * not given), then the block's fields as for that type. */
static int player_state_read(const uint8_t *p, size_t len, uint64_t time, recd_msg *m, char *why,
                             size_t whylen)
{
    if (len < 1) {
        recd_why(why, whylen, "state: body ends inside the payload");
        return -EBADMSG;
    }
    uint8_t type = p[0];
    size_t pos = 1;
    if (type != RECD_REC_TYPE_ONFOOT && type != RECD_REC_TYPE_VEHICLE) {
        recd_why(why, whylen, "state: samp-player type %u (1 vehicle, 2 on foot)", type);
        return -EBADMSG;
    }
    m->player.rec_type = (recd_rec_type)type;
    if (type == RECD_REC_TYPE_VEHICLE) {
        if (len - pos < 3) {
            recd_why(why, whylen, "state: body ends inside the payload");
            return -EBADMSG;
        }
        uint16_t mod = ld_le16(p + pos);
        uint8_t seat = p[pos + 2];
        pos += 3;
        if (mod && (mod < 400 || mod > 611)) {
            recd_why(why, whylen, "state: vehicle model %u is not 400..611 (0: not given)", mod);
            return -EBADMSG;
        }
        if (seat > 3 && seat != 0xFF) {
            recd_why(why, whylen, "state: seat %u is not 0..3 (0xFF: not given)", seat);
            return -EBADMSG;
        }
        m->player.has_model = mod != 0;
        m->player.vehicle_model = mod;
        m->player.has_seat = seat != 0xFF;
        m->player.seat = seat == 0xFF ? 0 : seat;
    }
    const struct recd_format_wire *block = type == RECD_REC_TYPE_ONFOOT ? &recd_rec__wire_onfoot
                                                                        : &recd_rec__wire_vehicle;
    return block_read(block, p + pos, len - pos, time, m, why, whylen);
}

static int onfoot_state_write(const recd_msg *m, recd_buf *out)
{
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    if (recd_rec_onfoot_check(&m->onfoot) < 0)
        return -EINVAL;
    recd_rec_onfoot_encode(&m->onfoot, block);
    return recd_buf_append(out, block + 4, ONFOOT_FIELDS_SIZE);
}

static int vehicle_state_write(const recd_msg *m, recd_buf *out)
{
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    if (recd_rec_vehicle_check(&m->vehicle) < 0)
        return -EINVAL;
    recd_rec_vehicle_encode(&m->vehicle, block);
    return recd_buf_append(out, block + 4, VEHICLE_FIELDS_SIZE);
}

static int player_state_write(const recd_msg *m, recd_buf *out)
{
    const recd_msg_player *pl = &m->player;
    /* Checked before the head goes out, so an invalid block is -EINVAL even without memory. */
    if (pl->rec_type == RECD_REC_TYPE_ONFOOT) {
        if (recd_rec_onfoot_check(&m->onfoot) < 0)
            return -EINVAL;
        uint8_t type = RECD_REC_TYPE_ONFOOT;
        int rc = recd_buf_append(out, &type, 1);
        return rc ? rc : onfoot_state_write(m, out);
    }
    if (pl->rec_type != RECD_REC_TYPE_VEHICLE || recd_rec_vehicle_check(&m->vehicle) < 0 ||
        (pl->has_model && (pl->vehicle_model < 400 || pl->vehicle_model > 611)) ||
        (pl->has_seat && pl->seat > 3))
        return -EINVAL;
    uint16_t model = pl->has_model ? pl->vehicle_model : 0;
    uint8_t head[4] = {RECD_REC_TYPE_VEHICLE, (uint8_t)model, (uint8_t)(model >> 8),
                       pl->has_seat ? pl->seat : 0xFF};
    int rc = recd_buf_append(out, head, sizeof head);
    return rc ? rc : vehicle_state_write(m, out);
}

/* A state frame carries its block's time; a samp session has no events. */
static int onfoot_msg_time(const recd_msg *m, uint64_t *t)
{
    *t = m->onfoot.time_ms;
    return m->type == RECD_MSG_STATE ? 0 : -EINVAL;
}

static int vehicle_msg_time(const recd_msg *m, uint64_t *t)
{
    *t = m->vehicle.time_ms;
    return m->type == RECD_MSG_STATE ? 0 : -EINVAL;
}

static int player_msg_time(const recd_msg *m, uint64_t *t)
{
    *t = m->player.rec_type == RECD_REC_TYPE_VEHICLE ? m->vehicle.time_ms : m->onfoot.time_ms;
    return m->type == RECD_MSG_STATE ? 0 : -EINVAL;
}

/* Both kinds of block in one session: not the block path (its states carry their type). */
const struct recd_format_wire recd_rec__wire_player = {
    .format = RECD_MSG_FMT_SAMP_PLAYER,
    .code = 5,
    .open_read = samp_open_read,
    .state_read = player_state_read,
    .state_write = player_state_write,
    .msg_time = player_msg_time,
};

const struct recd_format_wire recd_rec__wire_onfoot = {
    .format = RECD_MSG_FMT_SAMP_ONFOOT,
    .code = 1,
    .block_len = RECD_REC_ONFOOT_BLOCK_SIZE,
    .block_fields_check = onfoot_fields_check,
    .block_refuse = block_refuse,
    .block_decode = onfoot_block_decode,
    .open_read = samp_open_read,
    .state_read = onfoot_state_read,
    .state_write = onfoot_state_write,
    .msg_time = onfoot_msg_time,
};

const struct recd_format_wire recd_rec__wire_vehicle = {
    .format = RECD_MSG_FMT_SAMP_VEHICLE,
    .code = 2,
    .block_len = RECD_REC_VEHICLE_BLOCK_SIZE,
    .block_fields_check = vehicle_fields_check,
    .block_refuse = block_refuse,
    .block_decode = vehicle_block_decode,
    .open_read = samp_open_read,
    .state_read = vehicle_state_read,
    .state_write = vehicle_state_write,
    .msg_time = vehicle_msg_time,
};
