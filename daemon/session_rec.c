/* .rec sessions: samples become 67/72-byte blocks through recd_rec_writer, straight into the
 * session's pending buffer. Binary frames arrive as blocks already and are stored as they are
 * (only the time is rewritten); decoded messages (NDJSON) are encoded into a block first. Times
 * count from the session start (stamped on arrival when the client left them out); part 1 keeps
 * them as given, later parts start again at 0 when output.rebase_parts is set. Each part is a
 * complete file with its own header. */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "server.h"
#include "session.h"

/* A block's time: its first four bytes, little-endian. */
static uint32_t block_time(const uint8_t *b)
{
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

static void set_block_time(uint8_t *b, uint32_t t)
{
    b[0] = (uint8_t)t;
    b[1] = (uint8_t)(t >> 8);
    b[2] = (uint8_t)(t >> 16);
    b[3] = (uint8_t)(t >> 24);
}

static int rec_sink(void *ctx, const void *data, size_t len) { return session_put(ctx, data, len); }

static uint32_t stamp(const recd_session *s, uint64_t now_ms)
{
    uint64_t t = now_ms - s->start_mono_ms;
    return t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

static int start_part(recd_session *s, uint32_t t)
{
    const recd_config *cfg = &s->srv->cfg;
    bool first = s->part_no == 0;
    int rc = session_start_part(s, first ? s->start_epoch_ms : s->start_epoch_ms + t, 0);
    if (rc < 0)
        return rc;
    s->rec_base = !first && cfg->output.rebase_parts ? t : 0;
    s->rec_part_first = t;
    recd_rec_type type =
        s->format == RECD_MSG_FMT_SAMP_ONFOOT ? RECD_REC_TYPE_ONFOOT : RECD_REC_TYPE_VEHICLE;
    recd_sink sink = {rec_sink, s};
    /* Time order is enforced here, across parts, so the writer never sees a decrease. */
    return recd_rec_writer_init(&s->rec, type, RECD_REC_TIME_REJECT, sink);
}

int session_rec_block(recd_session *s, session_input *in, uint8_t *block, bool has_time,
                      uint64_t now_ms)
{
    const recd_config *cfg = &s->srv->cfg;
    uint32_t t = has_time ? block_time(block) : stamp(s, now_ms);
    if (s->rec_any && t < s->rec_last) {
        if (cfg->rec.time_policy == RECD_REC_TIME_REJECT) {
            recd_metrics_decode_error(&s->srv->metrics, RECD_M_TIME_ORDER);
            log_warn("session '%s': sample at %u ms is before the previous one at %u ms: dropped "
                     "(rec.time_policy: reject)",
                     s->key, t, s->rec_last);
            return 0;
        }
        t = s->rec_last;
    }
    size_t len = s->format == RECD_MSG_FMT_SAMP_ONFOOT ? RECD_REC_ONFOOT_BLOCK_SIZE
                                                      : RECD_REC_VEHICLE_BLOCK_SIZE;
    int rc;
    if (s->part && session_should_rotate(s, len, t - s->rec_part_first))
        session_rec_end_part(s);
    if (!s->part && (rc = start_part(s, t)) < 0) {
        if (rc == -ENOMEM)
            return rc;
        log_err("session '%s': sample dropped: no output file", s->key);
        return 0;
    }
    set_block_time(block, t - s->rec_base);
    if ((rc = recd_rec_writer_block(&s->rec, block, len)) < 0) {
        log_err("session '%s': cannot buffer a block: %s", s->key, recd_strerror(rc));
        return rc == -ENOMEM ? rc : 0;
    }
    s->rec_last = t;
    s->rec_any = true;
    in->accepted = true;
    return 0;
}

int session_rec_state(recd_session *s, session_input *in, const recd_msg *m, bool has_time,
                      uint64_t now_ms, char *why, size_t whylen)
{
    uint8_t block[RECD_REC_ONFOOT_BLOCK_SIZE];
    bool onfoot = s->format == RECD_MSG_FMT_SAMP_ONFOOT;
    int rc = onfoot ? recd_rec_onfoot_check(&m->onfoot) : recd_rec_vehicle_check(&m->vehicle);
    if (rc < 0)
        return session_refuse(in, RECD_M_SCHEMA, why, whylen,
                              "state for session '%s': a float is NaN or infinite, or weapon / "
                              "additional_key is out of range",
                              s->key);
    if (onfoot)
        recd_rec_onfoot_encode(&m->onfoot, block);
    else
        recd_rec_vehicle_encode(&m->vehicle, block);
    return session_rec_block(s, in, block, has_time, now_ms);
}

void session_rec_end_part(recd_session *s)
{
    if (s->part)
        session_end_part(s, NULL, 0);
}
