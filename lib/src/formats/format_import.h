/* SPDX-License-Identifier: MIT */
/* Internal: how recd_importer writes one format (a family of formats may share one). The
 * importer engine checks the message order and hands each message to the hooks of its session's
 * format; the hooks own im->impl. */
#ifndef RECD_FORMAT_IMPORT_H
#define RECD_FORMAT_IMPORT_H

#include "recd/format.h"

struct recd_format_importer {
    /* The message formats it writes, so the engine can refuse another family's state without a
     * table lookup; unused slots are NONE. test_format_table.c checks them against the table. */
    recd_msg_format formats[4];
    /* The session's open message: allocates im->impl and starts the file. */
    int (*open)(recd_importer *im, const recd_msg *m, char *err, size_t errlen);
    /* A state of a format sharing this importer. */
    int (*state)(recd_importer *im, const recd_msg *m, char *err, size_t errlen);
    int (*event)(recd_importer *im, const recd_msg *m, char *err, size_t errlen); /* NULL: none */
    int (*flush)(recd_importer *im, const recd_msg *m, char *err, size_t errlen); /* NULL: ignored */
    void (*close)(recd_importer *im, const recd_msg *m); /* NULL: close carries nothing */
    /* Completes the file into im->sink. */
    int (*finish)(recd_importer *im, char *err, size_t errlen);
    void (*release)(recd_importer *im); /* frees what impl holds besides itself; NULL: nothing */
};

/* The importer engine, given the importer (ops) instead of looking it up: ops writes the session's
 * format, or before the open the open's format; NULL when that format has no importer. The table
 * entries import through it with their own importer, so the engine needs no table; the public
 * recd_importer_* and recd_import_text (format_import.c) look ops up in the table. */
int recd_format__importer_msg(recd_importer *im, const struct recd_format_importer *ops,
                              const recd_msg *m, char *err, size_t errlen);
int recd_format__importer_finish(recd_importer *im, const struct recd_format_importer *ops,
                                 char *err, size_t errlen);
void recd_format__importer_free(recd_importer *im, const struct recd_format_importer *ops);
/* recd_import_text() through ops. */
int recd_format__import_text(const struct recd_format_importer *ops, const uint8_t *text,
                             size_t len, recd_text_encoding enc, recd_msg_format expect,
                             recd_sink out, recd_import_stats *stats, char *err, size_t errlen);
/* The import_text hook of an entry whose text import is the generic one through its importer. */
int recd_format__import_through_importer(const recd_format *self, const uint8_t *text, size_t len,
                                         recd_text_encoding enc, recd_sink out,
                                         recd_import_stats *stats, char *err, size_t errlen);
/* Whether ops writes message format f. */
bool recd_format__importer_writes(const struct recd_format_importer *ops, recd_msg_format f);

#endif
