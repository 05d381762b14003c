/* SPDX-License-Identifier: MIT */
/* Explicit little- and big-endian loads and stores. Formats are defined byte by byte, so codecs
 * never memcpy structs and work on any host byte order. */
#ifndef RECD_BYTES_H
#define RECD_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t ld_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t ld_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t ld_le64(const uint8_t *p) { return ld_le32(p) | ((uint64_t)ld_le32(p + 4) << 32); }
static inline void st_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void st_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void st_le64(uint8_t *p, uint64_t v) { st_le32(p, (uint32_t)v); st_le32(p + 4, (uint32_t)(v >> 32)); }

static inline uint16_t ld_be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t ld_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
static inline uint64_t ld_be64(const uint8_t *p) { return ((uint64_t)ld_be32(p) << 32) | ld_be32(p + 4); }
static inline void st_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void st_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void st_be64(uint8_t *p, uint64_t v) { st_be32(p, (uint32_t)(v >> 32)); st_be32(p + 4, (uint32_t)v); }

/* IEEE-754 bit casts (memcpy of a scalar is the portable, optimised-away way). */
/* 8 bytes in host order in one load, for comparing or testing bytes where the order does not
 * matter (the byte-wise ld_le64 is not always merged into one load by the compiler). */
static inline uint64_t ld_host64(const void *p) { uint64_t w; memcpy(&w, p, 8); return w; }

static inline float f32_from_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t f32_to_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline double f64_from_bits(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }
static inline uint64_t f64_to_bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

#endif
