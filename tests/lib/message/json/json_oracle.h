/* SPDX-License-Identifier: MIT */
/* jansson as the oracle for the tree-free JSON readers: a line read both ways must give the same
 * decision, error text and message, on hand-made, mutated and truncated lines. Shared by the
 * .rec, Recap and CARLA fast-reader tests. */
#ifndef RECD_TEST_JSON_ORACLE_H
#define RECD_TEST_JSON_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "recd/message.h"

#define JSON_ORACLE_COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Reads text both ways (recd_msg_from_json and the jansson reader) as session format sf and
 * fails the test where they differ. The line is copied to a block of its exact size, so a
 * sanitizer build sees any read past its end. */
void json_oracle_compare(const char *text, size_t len, recd_msg_format sf);

/* line with its first from replaced by to, into out (the test fails when from is absent). */
void json_oracle_replace(char *out, size_t cap, const char *line, const char *from,
                         const char *to);

/* Random edits of a line: each mutant gets one to three edits (a run deleted, one of the
 * inserts put in, a byte or a digit changed) and is compared as one of the formats, chosen at
 * random. */
typedef struct json_oracle_mutations {
    const char *const *inserts;
    size_t ninserts;
    const recd_msg_format *formats;
    size_t nformats;
    unsigned iterations;
    uint64_t seed;
} json_oracle_mutations;
void json_oracle_mutate(const char *line, size_t len, const json_oracle_mutations *m);

/* Every prefix of line closed by each of tails (the closing bytes that bound the fast readers'
 * scans, now anywhere in the line), compared as formats[(prefix + tail) % nformats]. */
void json_oracle_truncate(const char *line, const char *const *tails, size_t ntails,
                          const recd_msg_format *formats, size_t nformats);

#endif
