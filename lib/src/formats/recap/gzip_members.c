/* SPDX-License-Identifier: MIT */
/* gzip members (RFC 1952) written in one go with a fixed header (by zlib or libdeflate), and read
 * back one complete member at a time with a bound on the inflated size, stopping cleanly at a cut
 * or corrupt tail. */
#include "recd/gzip_members.h"

#include <errno.h>
#include <limits.h>
#include <libdeflate.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/bytes.h"

#define DEFAULT_MAX_OUT (64u * 1024u * 1024u)

struct recd_gzip_deflater {
    z_stream z;
    int level;
    bool ready;
    struct libdeflate_compressor *ld; /* made on first use, for ld_level */
    int ld_level;
};

recd_gzip_deflater *recd_gzip_deflater_new(void) { return calloc(1, sizeof(recd_gzip_deflater)); }

void recd_gzip_deflater_free(recd_gzip_deflater *d)
{
    if (!d)
        return;
    if (d->ready)
        deflateEnd(&d->z);
    if (d->ld)
        libdeflate_free_compressor(d->ld);
    free(d);
}

static int deflater_prepare(recd_gzip_deflater *d, int level)
{
    if (d->ready && d->level == level)
        return deflateReset(&d->z) == Z_OK ? 0 : -EIO;
    if (d->ready) {
        deflateEnd(&d->z);
        d->ready = false;
    }
    memset(&d->z, 0, sizeof(d->z));
    int rc = deflateInit2(&d->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    if (rc != Z_OK)
        return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
    d->level = level;
    d->ready = true;
    return 0;
}

static int deflate_all(z_stream *z, const uint8_t *in, size_t len, recd_buf *out)
{
    size_t in_left = len;
    z->next_in = (Bytef *)(uintptr_t)in;
    for (;;) {
        uInt give = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
        z->avail_in = give;
        int rc = recd_buf_reserve(out, 64 * 1024);
        if (rc)
            return rc;
        size_t room = out->cap - out->len;
        z->next_out = out->data + out->len;
        z->avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
        uInt avail_out_before = z->avail_out;
        int zrc = deflate(z, in_left == give ? Z_FINISH : Z_NO_FLUSH);
        out->len += avail_out_before - z->avail_out;
        in_left -= give - z->avail_in;
        if (zrc == Z_STREAM_END)
            return 0;
        if (zrc != Z_OK && zrc != Z_BUF_ERROR)
            return -EIO;
    }
}

static int deflate_zlib(recd_gzip_deflater *d, int level, const void *data, size_t len,
                        recd_buf *out)
{
    int rc = deflater_prepare(d, level);
    if (!rc)
        rc = recd_buf_reserve(out, deflateBound(&d->z, (uLong)len) + RECD_GZIP_TRAILER_SIZE);
    return rc ? rc : deflate_all(&d->z, data, len, out);
}

/* One call for the whole member: libdeflate compresses whole buffers only. */
static int deflate_libdeflate(recd_gzip_deflater *d, int level, const void *data, size_t len,
                              recd_buf *out)
{
    if (!d->ld || d->ld_level != level) {
        if (d->ld)
            libdeflate_free_compressor(d->ld);
        d->ld = libdeflate_alloc_compressor(level);
        if (!d->ld)
            return -ENOMEM;
        d->ld_level = level;
    }
    size_t bound = libdeflate_deflate_compress_bound(d->ld, len);
    int rc = recd_buf_reserve(out, bound + RECD_GZIP_TRAILER_SIZE);
    if (rc)
        return rc;
    size_t n = libdeflate_deflate_compress(d->ld, data, len, out->data + out->len, bound);
    if (n == 0)
        return -EIO; /* cannot happen with the bound's room */
    out->len += n;
    return 0;
}

int recd_gzip_member_write_with(recd_gzip_deflater *d, recd_gzip_compressor compressor, int level,
                                const void *data, size_t len, recd_buf *out)
{
    if (level < 1 || level > 9 || (len && !data) ||
        (compressor != RECD_GZIP_ZLIB && compressor != RECD_GZIP_LIBDEFLATE))
        return -EINVAL;
    recd_gzip_deflater tmp = {0};
    recd_gzip_deflater *def = d ? d : &tmp;
    size_t mark = out->len;
    static const uint8_t header[RECD_GZIP_HEADER_SIZE] = {0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0,
                                                          RECD_GZIP_OS_BYTE};
    int rc = recd_buf_append(out, header, sizeof(header));
    if (!rc)
        rc = compressor == RECD_GZIP_LIBDEFLATE ? deflate_libdeflate(def, level, data, len, out)
                                                : deflate_zlib(def, level, data, len, out);
    if (!rc) {
        uLong crc = crc32(0L, Z_NULL, 0);
        const uint8_t *p = data;
        for (size_t left = len; left;) {
            uInt n = left > UINT_MAX ? UINT_MAX : (uInt)left;
            crc = crc32(crc, p, n);
            p += n;
            left -= n;
        }
        uint8_t trailer[RECD_GZIP_TRAILER_SIZE];
        st_le32(trailer, (uint32_t)crc);
        st_le32(trailer + 4, (uint32_t)len);
        rc = recd_buf_append(out, trailer, sizeof(trailer));
    }
    if (rc)
        out->len = mark;
    if (def == &tmp) {
        if (tmp.ready)
            deflateEnd(&tmp.z);
        if (tmp.ld)
            libdeflate_free_compressor(tmp.ld);
    }
    return rc;
}

static const char *const compressor_names[] = {[RECD_GZIP_ZLIB] = "zlib",
                                               [RECD_GZIP_LIBDEFLATE] = "libdeflate"};

const char *recd_gzip_compressor_name(recd_gzip_compressor compressor)
{
    return (unsigned)compressor < sizeof compressor_names / sizeof *compressor_names
               ? compressor_names[compressor]
               : NULL;
}

int recd_gzip_compressor_from_name(const char *name, recd_gzip_compressor *out)
{
    for (unsigned i = 0; name && i < sizeof compressor_names / sizeof *compressor_names; i++)
        if (strcmp(name, compressor_names[i]) == 0) {
            *out = (recd_gzip_compressor)i;
            return 0;
        }
    return -EINVAL;
}

int recd_gzip_member_write(recd_gzip_deflater *d, int level, const void *data, size_t len,
                           recd_buf *out)
{
    return recd_gzip_member_write_with(d, RECD_GZIP_ZLIB, level, data, len, out);
}

/* ---- reading -------------------------------------------------------------------------------------- */

typedef struct member_reader {
    z_stream z;
    bool ready;
    recd_buf out;
    size_t max_out;
} member_reader;

static void set_tail(recd_gzip_scan *s, int err, const char *why)
{
    s->tail_error = err;
    s->truncated = err == -EAGAIN;
    s->corrupt = !s->truncated;
    snprintf(s->tail_reason, sizeof(s->tail_reason), "%s", why);
}

/* Size of the member header at buf, -EAGAIN when cut, -EBADMSG when invalid. */
static long parse_header(const uint8_t *buf, size_t len, const char **why)
{
    if (len < 1 || buf[0] != 0x1F) {
        *why = "not a gzip member (bad magic)";
        return len < 1 ? -EAGAIN : -EBADMSG;
    }
    if (len < 2)
        return *why = "member header cut short", -EAGAIN;
    if (buf[1] != 0x8B)
        return *why = "not a gzip member (bad magic)", -EBADMSG;
    if (len < 3)
        return *why = "member header cut short", -EAGAIN;
    if (buf[2] != 8)
        return *why = "unknown compression method", -EBADMSG;
    if (len < 10)
        return *why = "member header cut short", -EAGAIN;
    uint8_t flg = buf[3];
    if (flg & 0xE0)
        return *why = "reserved header flag set", -EBADMSG;
    size_t pos = 10;
    if (flg & 4) { /* FEXTRA */
        if (len - pos < 2)
            return *why = "member header cut short", -EAGAIN;
        size_t xlen = ld_le16(buf + pos);
        pos += 2;
        if (len - pos < xlen)
            return *why = "member header cut short", -EAGAIN;
        pos += xlen;
    }
    for (int bit = 8; bit <= 16; bit *= 2) { /* FNAME, FCOMMENT: zero-terminated */
        if (!(flg & bit))
            continue;
        const uint8_t *nul = memchr(buf + pos, 0, len - pos);
        if (!nul)
            return *why = "member header cut short", -EAGAIN;
        pos = (size_t)(nul - buf) + 1;
    }
    if (flg & 2) { /* FHCRC */
        if (len - pos < 2)
            return *why = "member header cut short", -EAGAIN;
        uint32_t crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), buf, (uInt)pos);
        if ((crc & 0xFFFFu) != ld_le16(buf + pos))
            return *why = "header CRC mismatch", -EBADMSG;
        pos += 2;
    }
    return (long)pos;
}

/* Inflates the member at buf; returns its total size or a negative errno with *why set. */
static long read_member(member_reader *m, const uint8_t *buf, size_t len, const char **why)
{
    long hlen = parse_header(buf, len, why);
    if (hlen < 0)
        return hlen;
    if (!m->ready) {
        memset(&m->z, 0, sizeof(m->z));
        if (inflateInit2(&m->z, -15) != Z_OK)
            return *why = "out of memory", -ENOMEM;
        m->ready = true;
    } else if (inflateReset(&m->z) != Z_OK) {
        return *why = "inflate reset failed", -EIO;
    }
    m->out.len = 0;
    size_t pos = (size_t)hlen;
    uLong crc = crc32(0L, Z_NULL, 0);
    for (;;) {
        size_t in_left = len - pos;
        m->z.next_in = (Bytef *)(uintptr_t)(buf + pos);
        m->z.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
        uInt in_before = m->z.avail_in;
        /* Room for one byte beyond the bound, so a member of exactly max_out bytes still ends. */
        size_t want = m->max_out + 1 - m->out.len;
        if (want > 256 * 1024)
            want = 256 * 1024;
        if (m->out.cap - m->out.len < want && recd_buf_reserve(&m->out, want))
            return *why = "out of memory", -ENOMEM;
        size_t room = m->out.cap - m->out.len;
        if (room > m->max_out + 1 - m->out.len)
            room = m->max_out + 1 - m->out.len;
        m->z.next_out = m->out.data + m->out.len;
        m->z.avail_out = room > UINT_MAX ? UINT_MAX : (uInt)room;
        uInt out_before = m->z.avail_out;
        int zrc = inflate(&m->z, Z_NO_FLUSH);
        size_t produced = out_before - m->z.avail_out;
        if (produced)
            crc = crc32(crc, m->out.data + m->out.len, (uInt)produced);
        m->out.len += produced;
        pos += in_before - m->z.avail_in;
        if (m->out.len > m->max_out)
            return *why = "member inflates beyond the size limit", -EMSGSIZE;
        if (zrc == Z_STREAM_END)
            break;
        if (zrc == Z_NEED_DICT || zrc == Z_DATA_ERROR)
            return *why = "invalid deflate data", -EBADMSG;
        if (zrc == Z_MEM_ERROR)
            return *why = "out of memory", -ENOMEM;
        if (zrc == Z_BUF_ERROR || zrc == Z_OK) {
            if (pos == len && m->z.avail_out > 0)
                return *why = "deflate data cut short", -EAGAIN;
            if (produced == 0 && in_before == m->z.avail_in && m->z.avail_out > 0)
                return *why = "inflate made no progress", -EBADMSG;
            continue;
        }
        return *why = "inflate failed", -EBADMSG;
    }
    if (len - pos < RECD_GZIP_TRAILER_SIZE)
        return *why = "member trailer cut short", -EAGAIN;
    if (ld_le32(buf + pos) != (uint32_t)crc)
        return *why = "CRC-32 mismatch", -EBADMSG;
    if (ld_le32(buf + pos + 4) != (uint32_t)m->out.len)
        return *why = "size (ISIZE) mismatch", -EBADMSG;
    pos += RECD_GZIP_TRAILER_SIZE;
    if (pos > (size_t)LONG_MAX)
        return *why = "member too large", -EMSGSIZE;
    return (long)pos;
}

int recd_gzip_members_read(const uint8_t *buf, size_t len, size_t max_out, recd_gzip_member_fn fn,
                           void *ctx, recd_gzip_scan *scan)
{
    memset(scan, 0, sizeof(*scan));
    member_reader m = {.max_out = max_out ? max_out : DEFAULT_MAX_OUT};
    if (m.max_out == SIZE_MAX)
        m.max_out--;
    size_t pos = 0;
    int result = 0;
    while (pos < len) {
        const char *why = "";
        long n = read_member(&m, buf + pos, len - pos, &why);
        if (n < 0) {
            if (n == -ENOMEM || n == -EIO) {
                result = (int)n;
                break;
            }
            set_tail(scan, (int)n, why);
            result = (int)n;
            break;
        }
        scan->members++;
        scan->valid_end = pos + (size_t)n;
        if (fn) {
            int rc = fn(ctx, pos, pos + (size_t)n, m.out.data, m.out.len);
            if (rc) {
                result = rc;
                break;
            }
        }
        pos += (size_t)n;
    }
    if (m.ready)
        inflateEnd(&m.z);
    recd_buf_free(&m.out);
    return result;
}
