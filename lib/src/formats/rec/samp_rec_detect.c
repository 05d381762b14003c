/* SPDX-License-Identifier: MIT */
/* Layout identification for .rec files. The header alone is not enough: legacy 56-byte on-foot
 * files carry the same 1000/2 header as 72-byte ones, VC:MP plugin files reuse the 1000 magic,
 * and the oldest files have no header. So sizes are checked against each candidate block size and
 * the content is scored (unit quaternions, plausible timestamps, plausible facing angles). */
#include "formats/rec/samp_rec_detect.h"

#include <math.h>
#include <string.h>

#include "base/bytes.h"

/* Content-test thresholds. The 0.9 fraction and the 0.02 quaternion tolerance come from the scan
 * of 129 public files (reference/samp-rec.md §5.1); the time bounds are generous on purpose:
 * real files start within about 1 s and their gaps stay far below a minute. */
#define FIRST_TIME_MAX_MS 600000u /* first block within 10 min of the start */
#define STEP_MAX_MS 60000u        /* a "plausible" step: 0 .. 60 s forward */
#define ANGLE_MAX_DEG 720.0f      /* legacy facing angle, degrees */

#define VEHICLE_QUAT_OFFSET 12
#define ONFOOT_QUAT_OFFSET 22
#define LEGACY_ANGLE_OFFSET 22

/* At least 90 % of n; false for n == 0 (no evidence). */
static bool mostly(uint64_t good, uint64_t n) { return n > 0 && good * 10 >= n * 9; }

bool recd_rec__quat_is_unit(const uint8_t *p)
{
    double s = 0.0;
    for (int i = 0; i < 4; i++) {
        double c = f32_from_bits(ld_le32(p + 4 * i));
        s += c * c;
    }
    return fabs(s - 1.0) < RECD_REC__QUAT_TOLERANCE; /* false for NaN and Inf */
}

/* Quaternion-norm test: most blocks of size bs starting at off have a unit quaternion at qoff. */
static bool quats_plausible(const uint8_t *buf, size_t len, size_t off, size_t bs, size_t qoff)
{
    uint64_t n = (len - off) / bs, good = 0;
    for (uint64_t i = 0; i < n; i++)
        good += recd_rec__quat_is_unit(buf + off + i * bs + qoff);
    return mostly(good, n);
}

/* Time test: the u32 at the start of each block behaves like a recording clock. */
static bool times_plausible(const uint8_t *buf, size_t len, size_t off, size_t bs)
{
    uint64_t n = (len - off) / bs;
    if (n == 0)
        return false;
    uint32_t prev = ld_le32(buf + off);
    uint64_t good = prev <= FIRST_TIME_MAX_MS;
    for (uint64_t i = 1; i < n; i++) {
        uint32_t t = ld_le32(buf + off + i * bs);
        good += t >= prev && t - prev <= STEP_MAX_MS;
        prev = t;
    }
    return mostly(good, n);
}

static bool angles_plausible(const uint8_t *buf, size_t len, size_t off)
{
    const size_t bs = RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE;
    uint64_t n = (len - off) / bs, good = 0;
    for (uint64_t i = 0; i < n; i++) {
        float a = f32_from_bits(ld_le32(buf + off + i * bs + LEGACY_ANGLE_OFFSET));
        good += isfinite(a) && fabsf(a) <= ANGLE_MAX_DEG;
    }
    return mostly(good, n);
}

static bool fits(size_t payload, size_t bs) { return payload > 0 && payload % bs == 0; }

static bool legacy56_plausible(const uint8_t *buf, size_t len)
{
    return fits(len - RECD_REC_HEADER_SIZE, RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE) &&
           times_plausible(buf, len, RECD_REC_HEADER_SIZE, RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE) &&
           angles_plausible(buf, len, RECD_REC_HEADER_SIZE);
}

static bool vcmp76_plausible(const uint8_t *buf, size_t len)
{
    return fits(len - RECD_REC_HEADER_SIZE, RECD_REC_VCMP_BLOCK_SIZE) &&
           times_plausible(buf, len, RECD_REC_HEADER_SIZE, RECD_REC_VCMP_BLOCK_SIZE);
}

/* min_blocks > 1 demands more than the single-block evidence a short file can give. */
static bool headerless75_plausible(const uint8_t *buf, size_t len, uint64_t min_blocks)
{
    const size_t bs = RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE;
    return len % bs == 0 && len / bs >= min_blocks && times_plausible(buf, len, 0, bs);
}

static bool vehicle_quats(const uint8_t *buf, size_t len)
{
    return quats_plausible(buf, len, RECD_REC_HEADER_SIZE, RECD_REC_VEHICLE_BLOCK_SIZE,
                           VEHICLE_QUAT_OFFSET);
}

static bool onfoot_quats(const uint8_t *buf, size_t len)
{
    return quats_plausible(buf, len, RECD_REC_HEADER_SIZE, RECD_REC_ONFOOT_BLOCK_SIZE,
                           ONFOOT_QUAT_OFFSET);
}

static rec_detection make(recd_rec_layout layout, size_t data_offset, size_t block_size)
{
    rec_detection d = {layout, data_offset, block_size};
    return d;
}

static rec_detection vehicle(void) { return make(RECD_REC_LAYOUT_VEHICLE, 8, RECD_REC_VEHICLE_BLOCK_SIZE); }
static rec_detection onfoot(void) { return make(RECD_REC_LAYOUT_ONFOOT, 8, RECD_REC_ONFOOT_BLOCK_SIZE); }
static rec_detection vcmp(void) { return make(RECD_REC_LAYOUT_VCMP, 8, 0); }

/* Whether content evidence for the other layout may overrule the stored type. A single block of
 * it can be chance (a stray unit quaternion), so it does not outweigh a stored type whose block
 * size explains the length exactly while the other's leaves a partial block. */
static bool content_overrules(size_t len, size_t stored_bs, size_t other_bs)
{
    size_t payload = len - RECD_REC_HEADER_SIZE;
    return payload / other_bs >= 2 || fits(payload, other_bs) || !fits(payload, stored_bs);
}

/* Header 1000, type 1: SA-MP driver, or VC:MP on-foot, or an open.mp build of June 2023 that
 * wrote 72-byte on-foot blocks into DRIVER files. */
static rec_detection detect_type1(const uint8_t *buf, size_t len)
{
    if (vehicle_quats(buf, len))
        return vehicle();
    if (onfoot_quats(buf, len) &&
        content_overrules(len, RECD_REC_VEHICLE_BLOCK_SIZE, RECD_REC_ONFOOT_BLOCK_SIZE))
        return onfoot();
    if (vcmp76_plausible(buf, len))
        return vcmp();
    return vehicle();
}

/* Header 1000, type 2: SA-MP on-foot (72), pre-0.3d on-foot (56), or VC:MP vehicle. */
static rec_detection detect_type2(const uint8_t *buf, size_t len)
{
    if (len == RECD_REC_HEADER_SIZE || onfoot_quats(buf, len))
        return onfoot();
    if (legacy56_plausible(buf, len))
        return make(RECD_REC_LAYOUT_LEGACY_ONFOOT_56, 8, RECD_REC_LEGACY_ONFOOT_BLOCK_SIZE);
    if (vehicle_quats(buf, len) &&
        content_overrules(len, RECD_REC_ONFOOT_BLOCK_SIZE, RECD_REC_VEHICLE_BLOCK_SIZE))
        return vehicle();
    if (vcmp76_plausible(buf, len))
        return vcmp();
    return onfoot();
}

/* Type 0 or unknown: the 0.3.7 client ignores the stored type, so go by content. */
static rec_detection detect_by_content(const uint8_t *buf, size_t len)
{
    if (len == RECD_REC_HEADER_SIZE)
        return make(RECD_REC_LAYOUT_HEADER_ONLY, 8, 0);
    if (vehicle_quats(buf, len))
        return vehicle();
    if (onfoot_quats(buf, len))
        return onfoot();
    return make(RECD_REC_LAYOUT_UNKNOWN, 0, 0);
}

rec_detection recd_rec__detect(const uint8_t *buf, size_t len)
{
    size_t evidence;
    if (len < RECD_REC_HEADER_SIZE)
        return make(RECD_REC_LAYOUT_UNKNOWN, 0, 0);
    if (recd_rec__text_mangled(buf, len, &evidence))
        return make(RECD_REC_LAYOUT_TEXT_MANGLED, 0, 0);
    uint32_t sig = ld_le32(buf), type = ld_le32(buf + 4);
    if (sig == RECD_REC_SIGNATURE) {
        if (type == RECD_REC_TYPE_VEHICLE)
            return detect_type1(buf, len);
        if (type == RECD_REC_TYPE_ONFOOT)
            return detect_type2(buf, len);
        return detect_by_content(buf, len);
    }
    /* A headerless file's first u32 is a time and may be 1001..1005: accept that reading only
     * with more than one block of evidence. */
    if (sig >= RECD_REC__VCMP_SIG_MIN && sig <= RECD_REC__VCMP_SIG_MAX && type <= 8 &&
        !headerless75_plausible(buf, len, 2))
        return vcmp();
    /* open.mp and FCNPC ignore the signature: a standard body under a damaged signature. This
     * goes first because 8 + 67 * k is a multiple of 75 whenever k % 75 == 1. */
    if (type == RECD_REC_TYPE_VEHICLE && vehicle_quats(buf, len))
        return vehicle();
    if (type == RECD_REC_TYPE_ONFOOT && onfoot_quats(buf, len))
        return onfoot();
    if (headerless75_plausible(buf, len, 1))
        return make(RECD_REC_LAYOUT_LEGACY_HEADERLESS_75, 0, RECD_REC_LEGACY_VEHICLE_BLOCK_SIZE);
    /* Too short to hold one block: nothing contradicts the stored type. */
    if (type == RECD_REC_TYPE_VEHICLE && len < 8 + RECD_REC_VEHICLE_BLOCK_SIZE)
        return vehicle();
    if (type == RECD_REC_TYPE_ONFOOT && len < 8 + RECD_REC_ONFOOT_BLOCK_SIZE)
        return onfoot();
    return make(RECD_REC_LAYOUT_UNKNOWN, 0, 0);
}

/* Length of the UTF-8 sequence led by b (2..4), or 0 when b cannot lead one. */
static size_t utf8_sequence_length(uint8_t b)
{
    if (b >= 0xC2 && b <= 0xDF)
        return 2;
    if (b >= 0xE0 && b <= 0xEF)
        return 3;
    if (b >= 0xF0 && b <= 0xF4)
        return 4;
    return 0;
}

/* True when none of the 8 bytes at p is NUL or >= 0x80. The zero-byte test is exact (a borrow
 * only flags bytes above a real zero), so the byte order of the load does not matter. */
static inline bool plain_ascii8(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    return ((w | ((w - ones) & ~w)) & highs) == 0;
}

bool recd_rec__text_mangled(const uint8_t *buf, size_t len, size_t *evidence_offset)
{
    /* E8 03 00 00 after the conversion: E8 -> C3 A8, 03 stays, NUL -> space. */
    static const uint8_t mangled_signature[] = {0xC3, 0xA8, 0x03, 0x20, 0x20};
    *evidence_offset = 0;
    if (len >= sizeof mangled_signature && memcmp(buf, mangled_signature, sizeof mangled_signature) == 0)
        return true;
    /* Otherwise: not a single NUL (every real header and small u32 time has some), valid UTF-8
     * throughout (a truncated last sequence is tolerated), and at least one multi-byte sequence. */
    bool seen_multibyte = false;
    size_t i = 0;
    while (i < len) {
        /* Text is mostly ASCII (a JSON-lines file is sniffed through here): skip it 16 bytes at
         * a time. */
        while (len - i >= 16 && plain_ascii8(buf + i) && plain_ascii8(buf + i + 8))
            i += 16;
        if (i >= len)
            break;
        uint8_t b = buf[i];
        if (b == 0)
            return false;
        if (b < 0x80) {
            i++;
            continue;
        }
        size_t n = utf8_sequence_length(b);
        if (n == 0)
            return false;
        for (size_t k = 1; k < n && i + k < len; k++)
            if ((buf[i + k] & 0xC0) != 0x80)
                return false;
        if (!seen_multibyte)
            *evidence_offset = i;
        seen_multibyte = true;
        i += n;
    }
    return seen_multibyte;
}
