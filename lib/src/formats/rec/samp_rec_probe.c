/* SPDX-License-Identifier: MIT */
/* .rec reader/validator: identifies the layout (samp_rec_detect.c), fills recd_rec_info and reports,
 * with byte offsets, what the real readers (samp-npc 0.3.7, open.mp, FCNPC) would reject as errors
 * and suspicious content (time steps, non-finite floats, non-unit quaternions) as warnings/info. */
#include "recd/samp_rec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/bytes.h"
#include "formats/rec/samp_rec_detect.h"

#define LISTED_PER_KIND 16     /* individual problems of one kind before a summary line */
#define LONG_GAP_MS 10000u     /* a gap this long is a paused client or a splice: worth an INFO */

/* A problem kind that may occur once per block: the first few are listed, the rest summarised. */
typedef struct capped {
    const char *code;
    recd_severity severity;
    uint64_t count;
    uint64_t first_unlisted_offset;
} capped;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void add_capped(recd_report *r, capped *c, uint64_t offset, const char *fmt, ...)
{
    if (c->count++ >= LISTED_PER_KIND) {
        if (c->count == LISTED_PER_KIND + 1)
            c->first_unlisted_offset = offset;
        return;
    }
    if (!r)
        return;
    char msg[sizeof ((recd_problem *)0)->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    recd_report_add(r, c->severity, offset, c->code, "%s", msg);
}

static void finish_capped(recd_report *r, const capped *c, const char *what)
{
    if (c->count > LISTED_PER_KIND)
        recd_report_add(r, c->severity, c->first_unlisted_offset, c->code,
                        "%llu more %s not listed (%llu in all)",
                        (unsigned long long)(c->count - LISTED_PER_KIND), what,
                        (unsigned long long)c->count);
}

const char *recd_rec_layout_name(recd_rec_layout l)
{
    switch (l) {
    case RECD_REC_LAYOUT_VEHICLE: return "samp-vehicle";
    case RECD_REC_LAYOUT_ONFOOT: return "samp-onfoot";
    case RECD_REC_LAYOUT_HEADER_ONLY: return "samp-header-only";
    case RECD_REC_LAYOUT_LEGACY_ONFOOT_56: return "legacy-onfoot-56";
    case RECD_REC_LAYOUT_LEGACY_HEADERLESS_75: return "legacy-headerless-75";
    case RECD_REC_LAYOUT_VCMP: return "vcmp";
    case RECD_REC_LAYOUT_TEXT_MANGLED: return "text-mangled";
    case RECD_REC_LAYOUT_UNKNOWN: break;
    }
    return "unknown";
}

bool recd_rec_layout_is_standard(recd_rec_layout l)
{
    return l == RECD_REC_LAYOUT_VEHICLE || l == RECD_REC_LAYOUT_ONFOOT ||
           l == RECD_REC_LAYOUT_HEADER_ONLY;
}

size_t recd_rec_valid_prefix(const recd_rec_info *info)
{
    if (!info || !recd_rec_layout_is_standard(info->layout))
        return 0;
    return info->data_offset + (size_t)info->block_count * info->block_size;
}

const uint8_t *recd_rec_block_at(const uint8_t *buf, const recd_rec_info *info, uint64_t i)
{
    if (!buf || !info || info->block_size == 0 || i >= info->block_count)
        return NULL;
    switch (info->layout) {
    case RECD_REC_LAYOUT_VEHICLE:
    case RECD_REC_LAYOUT_ONFOOT:
    case RECD_REC_LAYOUT_LEGACY_ONFOOT_56:
    case RECD_REC_LAYOUT_LEGACY_HEADERLESS_75:
        return buf + info->data_offset + (size_t)i * info->block_size;
    default:
        return NULL;
    }
}

/* Offsets of the f32 fields inside each block kind (the Hydra/train union is not a float). */
static const uint8_t vehicle_floats[] = {12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52};
static const uint8_t onfoot_floats[] = {10, 14, 18, 22, 26, 30, 34, 42, 46, 50, 54, 58, 62};
static const uint8_t legacy56_floats[] = {10, 14, 18, 22, 30, 34, 38, 42, 46, 50};
static const uint8_t legacy75_floats[] = {12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60};

typedef struct block_kind {
    const uint8_t *floats;
    size_t float_count;
    int quat_offset; /* -1: no quaternion */
} block_kind;

static block_kind kind_of(recd_rec_layout l)
{
    block_kind k = {NULL, 0, -1};
    switch (l) {
    case RECD_REC_LAYOUT_VEHICLE:
        k.floats = vehicle_floats;
        k.float_count = sizeof vehicle_floats;
        k.quat_offset = 12;
        break;
    case RECD_REC_LAYOUT_ONFOOT:
        k.floats = onfoot_floats;
        k.float_count = sizeof onfoot_floats;
        k.quat_offset = 22;
        break;
    case RECD_REC_LAYOUT_LEGACY_ONFOOT_56:
        k.floats = legacy56_floats;
        k.float_count = sizeof legacy56_floats;
        break;
    case RECD_REC_LAYOUT_LEGACY_HEADERLESS_75:
        k.floats = legacy75_floats;
        k.float_count = sizeof legacy75_floats;
        break;
    default:
        break;
    }
    return k;
}

/* Walks the blocks once: time statistics and per-block anomalies. */
static void scan_blocks(const uint8_t *buf, recd_rec_info *info, recd_report *r)
{
    block_kind k = kind_of(info->layout);
    capped backwards = {"time-backwards", RECD_SEV_WARNING, 0, 0};
    capped gaps = {"long-gap", RECD_SEV_INFO, 0, 0};
    capped nonfinite = {"non-finite", RECD_SEV_WARNING, 0, 0};
    capped nonunit = {"non-unit-quaternion", RECD_SEV_WARNING, 0, 0};
    uint64_t first_equal = 0, first_equal_offset = 0;
    uint32_t prev = 0;

    for (uint64_t i = 0; i < info->block_count; i++) {
        const uint8_t *b = recd_rec_block_at(buf, info, i);
        uint64_t off = (uint64_t)(b - buf);
        uint32_t t = ld_le32(b);
        if (i == 0) {
            info->first_time_ms = t;
        } else if (t == prev) {
            if (info->equal_time_steps++ == 0)
                first_equal = i, first_equal_offset = off;
        } else if (t < prev) {
            info->decreasing_time_steps++;
            add_capped(r, &backwards, off,
                       "block %llu: time goes back from %u to %u ms; playback sends the blocks "
                       "that are already due one per tick (fast-forward)",
                       (unsigned long long)i, prev, t);
        } else {
            uint32_t gap = t - prev;
            if (gap > info->max_gap_ms)
                info->max_gap_ms = gap;
            if (gap >= LONG_GAP_MS)
                add_capped(r, &gaps, off, "block %llu: %u ms after the previous block (the NPC freezes)",
                           (unsigned long long)i, gap);
        }
        prev = t;
        info->last_time_ms = t;

        for (size_t f = 0; f < k.float_count; f++) {
            uint32_t bits = ld_le32(b + k.floats[f]);
            if (!isfinite(f32_from_bits(bits))) {
                add_capped(r, &nonfinite, off + k.floats[f],
                           "block %llu: float at block byte %u is %s (bits 0x%08x)",
                           (unsigned long long)i, (unsigned)k.floats[f],
                           isnan(f32_from_bits(bits)) ? "NaN" : "infinite", (unsigned)bits);
                break;
            }
        }
        if (k.quat_offset >= 0 && !recd_rec__quat_is_unit(b + k.quat_offset)) {
            const uint8_t *q = b + k.quat_offset;
            double s = 0;
            for (int c = 0; c < 4; c++) {
                double v = f32_from_bits(ld_le32(q + 4 * c));
                s += v * v;
            }
            if (isfinite(s)) /* NaN/Inf components are already reported as non-finite */
                    add_capped(r, &nonunit, off + (uint64_t)k.quat_offset,
                           "block %llu: quaternion |q|^2 = %g, not within %g of 1",
                           (unsigned long long)i, s, RECD_REC__QUAT_TOLERANCE);
        }
    }
    finish_capped(r, &backwards, "decreasing time steps");
    finish_capped(r, &gaps, "long gaps");
    finish_capped(r, &nonfinite, "blocks with NaN/Inf floats");
    finish_capped(r, &nonunit, "non-unit quaternions");
    if (info->equal_time_steps)
        recd_report_add(r, RECD_SEV_INFO, first_equal_offset, "equal-times",
                        "%llu time steps of 0 ms (first: block %llu); playback sends such blocks "
                        "in consecutive ticks, as a burst",
                        (unsigned long long)info->equal_time_steps, (unsigned long long)first_equal);
}

/* Block size the 0.3.7 client uses: chosen by the script; assume it matches the header type. */
static size_t samp_block_size(const recd_rec_info *info)
{
    if (info->type == RECD_REC_TYPE_VEHICLE)
        return RECD_REC_VEHICLE_BLOCK_SIZE;
    if (info->type == RECD_REC_TYPE_ONFOOT)
        return RECD_REC_ONFOOT_BLOCK_SIZE;
    if (info->layout == RECD_REC_LAYOUT_VEHICLE || info->layout == RECD_REC_LAYOUT_ONFOOT)
        return info->block_size;
    return 0;
}

static bool samp_would_load(const recd_rec_info *info, size_t len)
{
    if (len < RECD_REC_HEADER_SIZE || info->signature != RECD_REC_SIGNATURE)
        return false;
    size_t payload = len - RECD_REC_HEADER_SIZE, bs = samp_block_size(info);
    if (bs == 0)
        return payload == 0 && info->layout == RECD_REC_LAYOUT_HEADER_ONLY;
    return payload % bs == 0;
}

static const char *samp_verdict(const recd_rec_info *info, size_t len)
{
    return samp_would_load(info, len) ? "the 0.3.7 client would play garbage"
                                      : "the 0.3.7 client exits on it";
}

/* Errors and warnings about the header and the layout as a whole. */
static void report_layout(const uint8_t *buf, size_t len, const recd_rec_info *info, recd_report *r)
{
    size_t evidence, payload = len - RECD_REC_HEADER_SIZE;
    switch (info->layout) {
    case RECD_REC_LAYOUT_TEXT_MANGLED:
        recd_rec__text_mangled(buf, len, &evidence);
        recd_report_add(r, RECD_SEV_ERROR, evidence, "text-mangled",
                        "mangled by a text conversion (NUL -> space, bytes >= 0x80 -> UTF-8, e.g. "
                        "E8 03 00 00 -> C3 A8 03 20 20); the original bytes are lost, use another "
                        "copy");
        return;
    case RECD_REC_LAYOUT_UNKNOWN:
        recd_report_add(r, RECD_SEV_ERROR, 0, "unknown-layout",
                        "not a recording librecd recognises (signature %u, type %u, %zu bytes)",
                        info->signature, info->type, len);
        return;
    case RECD_REC_LAYOUT_VCMP:
        recd_report_add(r, RECD_SEV_ERROR, 0, "vcmp",
                        "VC:MP NPC plugin recording (signature %u, type %u: 1 = on foot, 2 = vehicle "
                        "there), not a SA-MP file; SA-MP readers would decode garbage",
                        info->signature, info->type);
        return;
    case RECD_REC_LAYOUT_LEGACY_ONFOOT_56:
        recd_report_add(r, RECD_SEV_ERROR, RECD_REC_HEADER_SIZE, "legacy-onfoot-56",
                        "1000/2 header with %llu pre-0.3d 56-byte on-foot blocks (facing angle, "
                        "no quaternion); %s (payload %% 72 = %zu); open.mp/FCNPC decode garbage",
                        (unsigned long long)info->block_count, samp_verdict(info, len), payload % 72);
        return;
    case RECD_REC_LAYOUT_LEGACY_HEADERLESS_75:
        recd_report_add(r, RECD_SEV_ERROR, 0, "legacy-headerless-75",
                        "no header, %llu pre-0.3d 75-byte vehicle blocks (roll/direction, no "
                        "quaternion); 0.3.7 converts it in place and exits, open.mp/FCNPC misread "
                        "it",
                        (unsigned long long)info->block_count);
        return;
    default:
        break;
    }
    if (info->signature != RECD_REC_SIGNATURE)
        recd_report_add(r, RECD_SEV_ERROR, 0, "bad-signature",
                        "signature is %u, the 0.3.7 client requires 1000 and exits (open.mp and "
                        "FCNPC do not check it)", info->signature);
    if (info->type == RECD_REC_TYPE_NONE)
        recd_report_add(r, RECD_SEV_WARNING, 4, "type-none",
                        "type 0 (NONE): the recorder writes only a header for it; open.mp and FCNPC "
                        "refuse type 0, the 0.3.7 client uses the type the script asks for");
    else if (info->type != RECD_REC_TYPE_VEHICLE && info->type != RECD_REC_TYPE_ONFOOT)
        recd_report_add(r, RECD_SEV_WARNING, 4, "unknown-type",
                        "unknown type %u (1 = driver, 2 = on foot); open.mp and FCNPC refuse it, the "
                        "blocks look like %s", info->type, recd_rec_layout_name(info->layout));
    else if ((info->type == RECD_REC_TYPE_VEHICLE) != (info->layout == RECD_REC_LAYOUT_VEHICLE))
        recd_report_add(r, RECD_SEV_ERROR, 4, "type-mismatch",
                        "header type %u but the blocks are %s (open.mp builds of June 2023 wrote "
                        "on-foot blocks into driver files); every reader decodes garbage",
                        info->type, recd_rec_layout_name(info->layout));
    if (info->layout != RECD_REC_LAYOUT_HEADER_ONLY && info->block_count == 0 && !info->trailing_bytes)
        recd_report_add(r, RECD_SEV_INFO, RECD_REC_HEADER_SIZE, "no-blocks",
                        "header only, no blocks: playback ends at once");
}

static void report_partial(const recd_rec_info *info, recd_report *r)
{
    if (!info->trailing_bytes)
        return;
    uint64_t off = info->data_offset + info->block_count * info->block_size;
    recd_report_add(r, RECD_SEV_ERROR, off, "partial-block",
                    "trailing partial block at offset %llu: %zu of %zu bytes present, %zu missing; "
                    "the 0.3.7 client exits, open.mp and FCNPC drop it",
                    (unsigned long long)off, info->trailing_bytes, info->block_size,
                    info->block_size - info->trailing_bytes);
}

/* The conditions under which report_layout()/report_partial() add an ERROR, judged from the info
 * alone so the result does not depend on the report's limit. */
static bool has_errors(const recd_rec_info *info)
{
    if (!recd_rec_layout_is_standard(info->layout))
        return true;
    if (info->signature != RECD_REC_SIGNATURE || info->trailing_bytes)
        return true;
    return (info->layout == RECD_REC_LAYOUT_VEHICLE && info->type == RECD_REC_TYPE_ONFOOT) ||
           (info->layout == RECD_REC_LAYOUT_ONFOOT && info->type == RECD_REC_TYPE_VEHICLE);
}

int recd_rec_probe(const uint8_t *buf, size_t len, recd_rec_info *info, recd_report *report)
{
    if (!info || (!buf && len))
        return -EINVAL;
    memset(info, 0, sizeof *info);
    if (len == 0) {
        recd_report_add(report, RECD_SEV_ERROR, 0, "empty", "empty file: every reader refuses it");
        return -EBADMSG;
    }
    if (len < RECD_REC_HEADER_SIZE) {
        recd_report_add(report, RECD_SEV_ERROR, 0, "short-header",
                        "%zu bytes, shorter than the 8-byte header: every reader refuses it", len);
        return -EBADMSG;
    }
    info->signature = ld_le32(buf);
    info->type = ld_le32(buf + 4);
    info->open_mp_accepts = info->type == RECD_REC_TYPE_VEHICLE || info->type == RECD_REC_TYPE_ONFOOT;

    rec_detection d = recd_rec__detect(buf, len);
    info->layout = d.layout;
    info->data_offset = d.data_offset;
    info->block_size = d.block_size;
    if (d.block_size) {
        info->block_count = (len - d.data_offset) / d.block_size;
        info->trailing_bytes = (len - d.data_offset) % d.block_size;
    }
    info->samp_accepts = samp_would_load(info, len);

    report_layout(buf, len, info, report);
    report_partial(info, report);
    scan_blocks(buf, info, report);

    return has_errors(info) ? -EBADMSG : 0;
}
