/* SPDX-License-Identifier: MIT */
/* Recap header: preamble, header body, TLV extension records and the in-place patch of end
 * timestamp and frame count (docs/formats/recap.md sections 2 and 3). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/recap/recap_internal.h"

void recd_recap_header_init(recd_recap_header *h)
{
    memset(h, 0, sizeof(*h));
    h->version = RECD_RECAP_VERSION;
}

static size_t fixed_size(uint8_t version) { return version >= 2 ? 56 : 44; }

static size_t str_len(recd_recap_blob b) { return recap_utf8_fit(b.data, b.len, RECAP_STR_MAX); }

static int put_str(recd_buf *out, recd_recap_blob b)
{
    if (b.len && (!b.data || !recap_utf8_valid(b.data, b.len)))
        return -EINVAL;
    uint8_t n = (uint8_t)str_len(b);
    int rc = recd_buf_append(out, &n, 1);
    return rc ? rc : recd_buf_append(out, b.data, n);
}

static int put_record(recd_buf *out, uint8_t type, const uint8_t *val, size_t len)
{
    if (len > 0xFFFFu)
        return -EMSGSIZE;
    uint8_t tl[3] = {type, 0, 0};
    st_be16(tl + 1, (uint16_t)len);
    int rc = recd_buf_append(out, tl, 3);
    return rc ? rc : recd_buf_append(out, val, len);
}

/* Checks TLV framing of a run of records: types ascending, above min_type, exact fill. Returns
 * the offset of the first bad byte or len when everything is fine. */
static size_t records_check(const uint8_t *p, size_t len, unsigned min_type)
{
    size_t pos = 0;
    unsigned last = min_type;
    while (pos < len) {
        if (len - pos < 3)
            return pos;
        unsigned type = p[pos];
        size_t n = ld_be16(p + pos + 1);
        if (type <= last || len - pos - 3 < n)
            return pos;
        last = type;
        pos += 3 + n;
    }
    return len;
}

int recd_recap_header_encode(const recd_recap_header *h, recd_buf *out)
{
    uint8_t version = h->version ? h->version : RECD_RECAP_VERSION;
    if (version > RECD_RECAP_VERSION)
        return -EINVAL;
    size_t mark = out->len;
    uint8_t pre[RECD_RECAP_PREAMBLE_SIZE] = {'R', 'C', 'A', 'P', version, 0, 0};
    int rc = recd_buf_append(out, pre, sizeof(pre));
    const recd_recap_blob strs[4] = {h->name, h->player_name, h->player_uuid, h->world_name};
    for (int i = 0; rc == 0 && i < 4; i++)
        rc = put_str(out, strs[i]);
    uint8_t fx[56];
    for (int i = 0; i < 3; i++)
        st_be64(fx + 8 * i, f64_to_bits(h->origin[i]));
    st_be64(fx + 24, (uint64_t)h->start_ms);
    st_be64(fx + 32, (uint64_t)h->end_ms);
    st_be32(fx + 40, h->frame_count);
    st_be32(fx + 44, (uint32_t)h->weather);
    st_be64(fx + 48, (uint64_t)h->time_of_day);
    if (rc == 0)
        rc = recd_buf_append(out, fx, fixed_size(version));
    const recd_recap_blob skin[2] = {h->skin_texture, h->skin_signature};
    for (int i = 0; rc == 0 && i < 2; i++) {
        if (skin[i].len == 0)
            continue;
        if (!skin[i].data || !recap_utf8_valid(skin[i].data, skin[i].len))
            rc = -EINVAL;
        else
            rc = put_record(out, (uint8_t)(RECAP_EXT_SKIN_TEXTURE + i), skin[i].data, skin[i].len);
    }
    if (rc == 0 && h->has_encoder_params) {
        if (h->keyframe_interval < 1 || h->gzip_level < 1 || h->gzip_level > 9 ||
            h->member_limit < 1) {
            rc = -EINVAL;
        } else {
            uint8_t enc[RECAP_EXT_ENCODER_SIZE];
            st_be32(enc, h->keyframe_interval);
            enc[4] = h->gzip_level;
            st_be32(enc + 5, h->member_limit);
            rc = put_record(out, RECAP_EXT_ENCODER, enc, sizeof(enc));
        }
    }
    if (rc == 0 && h->compressor) { /* absent means zlib, so zlib files keep their bytes */
        if (h->compressor > RECD_GZIP_LIBDEFLATE || !h->has_encoder_params) {
            rc = -EINVAL;
        } else {
            uint8_t c = h->compressor;
            rc = put_record(out, RECAP_EXT_COMPRESSOR, &c, 1);
        }
    }
    if (rc == 0 && h->ext_unknown.len) {
        if (!h->ext_unknown.data ||
            records_check(h->ext_unknown.data, h->ext_unknown.len, RECAP_EXT_LAST_KNOWN) !=
                h->ext_unknown.len)
            rc = -EINVAL;
        else
            rc = recd_buf_append(out, h->ext_unknown.data, h->ext_unknown.len);
    }
    if (rc == 0) {
        size_t body = out->len - mark - RECD_RECAP_PREAMBLE_SIZE;
        if (body > 0xFFFFu)
            rc = -EMSGSIZE;
        else
            st_be16(out->data + mark + 5, (uint16_t)body);
    }
    if (rc)
        out->len = mark;
    return rc;
}

void recd_recap_header_patch_offsets(const recd_recap_header *h, uint64_t *end_ms_offset,
                                     uint64_t *frame_count_offset)
{
    uint64_t off = RECD_RECAP_PREAMBLE_SIZE + 4 + str_len(h->name) + str_len(h->player_name) +
                   str_len(h->player_uuid) + str_len(h->world_name) + 32;
    if (end_ms_offset)
        *end_ms_offset = off;
    if (frame_count_offset)
        *frame_count_offset = off + 8;
}

static void problem(recd_report *r, uint64_t off, const char *code, const char *msg)
{
    if (r)
        recd_report_add(r, RECD_SEV_ERROR, off, code, "%s", msg);
}

static int get_str(recap_cur *c, recd_recap_blob *b, recd_report *r, const char *what)
{
    if (!cur_has(c, 1) || !cur_has(c, 1 + (size_t)c->p[c->pos])) {
        if (r)
            recd_report_add(r, RECD_SEV_ERROR, c->pos, "bad-header-length",
                            "%s runs past the header length", what);
        return -EBADMSG;
    }
    b->len = c->p[c->pos];
    b->data = c->p + c->pos + 1;
    if (!recap_utf8_valid(b->data, b->len)) {
        if (r)
            recd_report_add(r, RECD_SEV_ERROR, c->pos, "bad-utf8", "%s is not valid UTF-8", what);
        return -EBADMSG;
    }
    c->pos += 1 + b->len;
    return 0;
}

static int parse_extensions(recap_cur *c, recd_recap_header *h, recd_report *r)
{
    unsigned last = 0;
    while (c->pos < c->len) {
        size_t at = c->pos;
        if (!cur_has(c, 3) || !cur_has(c, 3 + (size_t)ld_be16(c->p + at + 1))) {
            problem(r, at, "bad-extension", "extension record runs past the header length");
            return -EBADMSG;
        }
        unsigned type = c->p[at];
        size_t n = ld_be16(c->p + at + 1);
        const uint8_t *val = c->p + at + 3;
        if (type == 0 || type <= last) {
            if (r)
                recd_report_add(r, RECD_SEV_ERROR, at, "bad-extension",
                                "extension record type %u is zero or not ascending", type);
            return -EBADMSG;
        }
        last = type;
        if (type > RECAP_EXT_LAST_KNOWN) {
            /* Newer records sort after all known ones: keep the rest verbatim. */
            h->ext_unknown.data = c->p + at;
            h->ext_unknown.len = c->len - at;
            size_t bad = records_check(c->p + at, c->len - at, type - 1);
            if (bad != c->len - at) {
                problem(r, at + bad, "bad-extension", "malformed or unordered extension record");
                return -EBADMSG;
            }
            c->pos = c->len;
            return 0;
        }
        c->pos += 3 + n;
        if (type == RECAP_EXT_ENCODER) {
            if (n != RECAP_EXT_ENCODER_SIZE) {
                problem(r, at, "bad-extension", "ENCODER record is not 9 bytes");
                return -EBADMSG;
            }
            h->has_encoder_params = true;
            h->keyframe_interval = ld_be32(val);
            h->gzip_level = val[4];
            h->member_limit = ld_be32(val + 5);
            if (h->keyframe_interval < 1 || h->gzip_level < 1 || h->gzip_level > 9 ||
                h->member_limit < 1) {
                problem(r, at, "bad-extension", "ENCODER record holds an out-of-range setting");
                return -EBADMSG;
            }
            continue;
        }
        if (type == RECAP_EXT_COMPRESSOR) {
            /* Written only for a compressor other than zlib, so a 0 here is not canonical. It
             * describes the ENCODER record's members, which comes before it. */
            if (n != 1 || val[0] != RECD_GZIP_LIBDEFLATE || !h->has_encoder_params) {
                problem(r, at, "bad-extension",
                        "COMPRESSOR record is not 1 byte naming libdeflate (1) after an ENCODER one");
                return -EBADMSG;
            }
            h->compressor = val[0];
            continue;
        }
        if (!recap_utf8_valid(val, n)) {
            problem(r, at + 3, "bad-utf8", "skin record is not valid UTF-8");
            return -EBADMSG;
        }
        recd_recap_blob *dst = type == RECAP_EXT_SKIN_TEXTURE ? &h->skin_texture : &h->skin_signature;
        dst->data = val;
        dst->len = n;
    }
    return 0;
}

int recd_recap_header_decode(const uint8_t *buf, size_t len, recd_recap_header *h,
                             recd_report *r)
{
    recd_recap_header_init(h);
    h->version = 0;
    size_t cmp = len < 4 ? len : 4;
    if (len == 0 || !buf || memcmp(buf, RECD_RECAP_MAGIC, cmp) != 0) {
        if (len == 0 || !buf) {
            problem(r, 0, "truncated-header", "file is empty");
            return -EAGAIN;
        }
        problem(r, 0, "bad-magic", "file does not start with \"RCAP\"");
        return -EBADMSG;
    }
    if (len < RECD_RECAP_PREAMBLE_SIZE) {
        problem(r, len, "truncated-header", "file ends inside the 7-byte preamble");
        return -EAGAIN;
    }
    h->version = buf[4];
    if (h->version < 1 || h->version > RECD_RECAP_VERSION) {
        if (r)
            recd_report_add(r, RECD_SEV_ERROR, 4, "bad-version",
                            "format version %u is not supported (1..%d)", buf[4],
                            RECD_RECAP_VERSION);
        return -EBADMSG;
    }
    size_t hlen = ld_be16(buf + 5);
    if (len - RECD_RECAP_PREAMBLE_SIZE < hlen) {
        if (r)
            recd_report_add(r, RECD_SEV_ERROR, len, "truncated-header",
                            "header length %zu runs past the end of the file (%zu bytes)", hlen,
                            len);
        return -EAGAIN;
    }
    /* The cursor covers the preamble too, so positions are file offsets. */
    recap_cur c = {buf, RECD_RECAP_PREAMBLE_SIZE + hlen, RECD_RECAP_PREAMBLE_SIZE};
    static const char *names[4] = {"recording name", "player name", "player UUID", "world name"};
    recd_recap_blob *strs[4] = {&h->name, &h->player_name, &h->player_uuid, &h->world_name};
    for (int i = 0; i < 4; i++)
        if (get_str(&c, strs[i], r, names[i]))
            return -EBADMSG;
    size_t fx = fixed_size(h->version);
    if (!cur_has(&c, fx)) {
        if (r)
            recd_report_add(r, RECD_SEV_ERROR, c.pos, "bad-header-length",
                            "header length %zu is too short for the fixed fields", hlen);
        return -EBADMSG;
    }
    const uint8_t *p = buf + c.pos;
    for (int i = 0; i < 3; i++)
        h->origin[i] = f64_from_bits(ld_be64(p + 8 * i));
    h->start_ms = (int64_t)ld_be64(p + 24);
    h->end_ms = (int64_t)ld_be64(p + 32);
    h->frame_count = ld_be32(p + 40);
    if (h->version >= 2) {
        h->weather = (int32_t)ld_be32(p + 44);
        h->time_of_day = (int64_t)ld_be64(p + 48);
    }
    c.pos += fx;
    if (parse_extensions(&c, h, r))
        return -EBADMSG;
    return (int)(RECD_RECAP_PREAMBLE_SIZE + hlen);
}

int64_t recd_recap_time_after(int64_t start_ms, int64_t ticks)
{
    const int64_t tick = RECD_RECAP_TICK_MS;
    if (ticks > INT64_MAX / tick)
        return INT64_MAX;
    if (ticks < INT64_MIN / tick)
        return INT64_MIN;
    int64_t span = ticks * tick;
    if (span > 0 && start_ms > INT64_MAX - span)
        return INT64_MAX;
    if (span < 0 && start_ms < INT64_MIN - span)
        return INT64_MIN;
    return start_ms + span;
}

int recd_recap_header_patch(uint8_t *buf, size_t len, uint32_t frame_count, int64_t end_ms)
{
    recd_recap_header h;
    int rc = recd_recap_header_decode(buf, len, &h, NULL);
    if (rc < 0)
        return rc;
    uint64_t end_off, frames_off;
    recd_recap_header_patch_offsets(&h, &end_off, &frames_off);
    st_be64(buf + end_off, (uint64_t)end_ms);
    st_be32(buf + frames_off, frame_count);
    return 0;
}
