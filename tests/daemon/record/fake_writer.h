/* SPDX-License-Identifier: MIT */
/* A stand-in for the writer stage (daemon/write/writer.c) in record-layer tests: it keeps each
 * part's bytes in memory, runs no thread pool and opens no file. A kicked job completes only when
 * the test calls fake_writer_run(), as the loop would run its callback later. Linked instead of
 * writer.c: it defines every writer_* function the record layer calls. */
#ifndef RECD_TEST_FAKE_WRITER_H
#define RECD_TEST_FAKE_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include "recd/common.h"
#include "write/writer.h"

typedef struct fake_file {
    writer_part *part;
    recd_buf bytes;     /* plain bytes in the order they were queued */
    recd_buf members;   /* uncompressed member bodies (Recap) */
    bool ended;         /* writer_end_part was called */
    uint8_t *header;    /* the end patch, if any */
    size_t header_len;
    char *sidecar;      /* its sidecar's text, rendered with the part's name when it was given */
} fake_file;

size_t fake_writer_files(void);
fake_file *fake_writer_file(size_t i); /* in the order parts were created */
size_t fake_writer_jobs(void);          /* kicked and not yet completed */
/* Completes every job kicked so far (their done callbacks run). Returns how many ran. */
size_t fake_writer_run(void);
void fake_writer_reset(void); /* forgets and frees every part */

#endif
