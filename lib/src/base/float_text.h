/* SPDX-License-Identifier: MIT */
/* Fast exact number text for f32/f64: the same text as the printf/strtod search in
 * number_text.c, computed with exact 128-bit fixed-point digits instead of printing and parsing. */
#ifndef RECD_BASE_FLOAT_TEXT_H
#define RECD_BASE_FLOAT_TEXT_H

/* "00" to "99", two characters each: number text is written a digit pair at a time. */
extern const char text_digit_pairs[201];

/* Each writes the text of a finite value into buf and returns its length, or -ERANGE when the
 * value is outside the range the exact 128-bit arithmetic covers (very small or very large
 * magnitudes) or is too close to a double-rounding tie to decide cheaply; the caller then falls
 * back to the search. buf must hold 32 bytes (f32) or 40 (f64). */
int float_text_f32(float f, char buf[32]);
int float_text_f64(double d, char buf[40]);
/* float_text_f32 without its f32 fast path (f32_shortest): the 19-digit algorithm for every
 * value, the reference bench/float_text/f32_exhaustive checks the fast path against. */
int float_text_f32_wide(float f, char buf[32]);

/* The text of a finite f32 (float_text_f32, else the search) through this thread's memo of
 * recent values (f32_text.c): its length, unterminated; -EINVAL for NaN or infinity. */
int text_f32_cached(float f, char buf[32]);

/* The printf/strtod search the fast path must equal (number_text.c); the oracle in tests. */
int text_format_f32_search(float f, char buf[32]);
int text_format_f64_search(double d, char buf[40]);

#endif
