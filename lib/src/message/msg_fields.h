/* SPDX-License-Identifier: MIT */
/* Internal: the .rec field tables that drive both text encodings, plus the exact number text,
 * range-checked number reading and string helpers they share. */
#ifndef RECD_MSG_FIELDS_H
#define RECD_MSG_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf_grow.h"
#include "recd/message.h"

typedef enum msg_ftype {
    MF_U8,
    MF_U16,
    MF_S16,
    MF_U32,
    MF_F32,
    MF_BITS, /* unsigned integer of `bits` width */
    MF_BOOL  /* one bit: JSON true/false, CSV 0/1 */
} msg_ftype;

/* Fields with alt != 0 are optional alternatives: exactly one alt group must be present. */
typedef struct msg_field {
    const char *csv; /* column name */
    const char *key; /* JSON key of the scalar or of its group */
    const char *sub; /* member name when the group is a JSON object, else NULL */
    int index;       /* position when the group is a JSON array, else -1 */
    int count;       /* array length when index >= 0 */
    msg_ftype type;
    unsigned bits;
    int alt;
    uint8_t key_len, sub_len; /* strlen of key and sub (0 without one): the JSON reader's keys */
} msg_field;

typedef struct msg_value {
    bool set;
    int64_t i; /* integer types */
    float f;   /* MF_F32 */
} msg_value;

#define MSG_REC_MAX_FIELDS 40

/* The table for a .rec format (NULL for other formats); *count receives its length. */
const msg_field *msg_rec_fields(recd_msg_format f, size_t *count);
/* Field values of a .rec STATE message in table order; unused alternatives are left unset. */
void msg_rec_flatten(const recd_msg *m, msg_value *vals);
/* Builds the block from values (all required ones set, one alt group; checked by the caller). */
void msg_rec_unflatten(const msg_value *vals, recd_msg *m);
/* Which alt group the flatten step uses for a vehicle extra field. */
bool msg_extra_is_train_speed(uint32_t bits);

/* "t", "vehicle_id", "position[1]", "anim_flags.loop": the field's name in error messages. */
void msg_field_path(const msg_field *f, char *buf, size_t n);
const char *msg_ftype_name(const msg_field *f); /* "u8", "6-bit unsigned", ... */
/* Largest value the integer field holds. */
int64_t msg_field_max(const msg_field *f);
int64_t msg_field_min(const msg_field *f);

/* Reads a parsed JSON number/boolean into a field value with range checks. bool_as_int: booleans
 * are written 0/1 (CSV). On failure why gets e.g. "300 does not fit u8". */
bool msg_read_value(const msg_field *f, const json_t *j, bool bool_as_int, msg_value *v, char *why,
                    size_t whylen);
/* The same checks for numbers read as text (CSV): integer or real syntax already decided. */
bool msg_value_from_int(const msg_field *f, int64_t i, msg_value *v, char *why, size_t whylen);
bool msg_value_from_double(const msg_field *f, double d, msg_value *v, char *why, size_t whylen);
/* Parses a JSON-syntax number (no spaces); *is_int tells integer syntax. false when malformed or an
 * integer outside int64. */
bool msg_parse_number(const char *s, size_t len, bool *is_int, int64_t *i, double *d);
const char *msg_json_type_name(const json_t *j); /* "string", "array", ... */
/* Copies s for an error message: at most 40 bytes, control and non-ASCII bytes as '?'. */
void msg_safe_text(const char *s, size_t len, char out[48]);

/* Shortest decimal text that reads back as exactly f, always with a '.' or an exponent
 * ("-0.0", "1.5", "1e-45"). -EINVAL for NaN/Inf. buf must hold 32 bytes. */
int msg_format_f32(float f, char buf[32]);
/* A %g precision of at least prec that prints every integer digit of d (1000.0, not 1e+03). */
int msg_g_precision(double d, int prec);
/* Shortest decimal text that reads back as exactly d ("-0.0" included). -EINVAL for NaN/Inf.
 * buf must hold 40 bytes. */
int msg_format_f64(double d, char buf[40]);
/* Append the decimal text of an integer, or msg_format_f32/f64's text, straight into out
 * (no printf, no copy); -EINVAL for NaN/Inf. */
int msg_buf_put_i64(recd_buf *out, int64_t v);
int msg_buf_put_u64(recd_buf *out, uint64_t v);
int msg_buf_put_f32(recd_buf *out, float f);
int msg_buf_put_f64(recd_buf *out, double d);
/* Standard base64 with padding. */
int msg_base64_append(recd_buf *out, const uint8_t *data, size_t len);
/* Decodes into out (appending); false when s is not canonical padded base64. */
bool msg_base64_decode(const char *s, size_t len, recd_buf *out);

/* Checks a parsed double fits f32 (finite, |d| <= FLT_MAX) and converts it. */
bool msg_double_to_f32(double d, float *out);

/* Appends s[0..len) as a JSON string literal; -EINVAL when s is not valid UTF-8. */
int msg_json_append_string(recd_buf *out, const char *s, size_t len);
int msg_buf_puts(recd_buf *out, const char *s);
/* Room for n more bytes in out: the capacity check inline, the growth out of line. */
static inline int msg_buf_room(recd_buf *out, size_t n)
{
    return out->cap - out->len >= n ? 0 : recd__buf_grow(out, n);
}
/* One byte appended: the JSON writers' punctuation, without a strlen and a call per byte. */
static inline int msg_buf_putc(recd_buf *out, char c)
{
    if (out->len == out->cap) {
        int rc = recd__buf_grow(out, 1);
        if (rc < 0)
            return rc;
    }
    out->data[out->len++] = (uint8_t)c;
    return 0;
}
bool msg_utf8_valid(const uint8_t *s, size_t len);

/* A message as one JSON object (no newline); omit drops "type" and/or an event's "tick" (CSV
 * rows carry them in columns). */
#define MSG_OMIT_TYPE 1u
#define MSG_OMIT_TICK 2u
int msg_json_object(const recd_msg *m, recd_buf *out, unsigned omit);
/* recd_msg_from_json on an already parsed object. */
int msg_from_json_value(const json_t *root, recd_msg_format session_format, recd_msg *out,
                        char *err, size_t errlen);

/* snprintf into err when err is non-NULL. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
void msg_err(char *err, size_t errlen, const char *fmt, ...);

#endif
