/* SPDX-License-Identifier: MIT */
/* The public importer API: recd_importer_msg/_finish/_free and recd_import_text look the
 * session's importer up in the format table and run the importer engine
 * (format_import_engine.c) with it. recd_importer_init, which needs no lookup, is the engine's. */
#include "formats/format_import.h"

static const struct recd_format_importer *importer_of(recd_msg_format f)
{
    const recd_format *entry = recd_format_of_msg(f);
    return entry ? entry->importer : NULL;
}

void recd_importer_free(recd_importer *im)
{
    recd_format__importer_free(im, importer_of(im->format));
}

int recd_importer_msg(void *importer, const recd_msg *m, char *err, size_t errlen)
{
    recd_importer *im = importer;
    return recd_format__importer_msg(im, importer_of(im->opened ? im->format : m->format), m, err,
                                     errlen);
}

int recd_importer_finish(recd_importer *im, char *err, size_t errlen)
{
    return recd_format__importer_finish(im, importer_of(im->format), err, errlen);
}

int recd_import_text(const uint8_t *text, size_t len, recd_text_encoding enc,
                     recd_msg_format expect, recd_sink out, recd_import_stats *stats, char *err,
                     size_t errlen)
{
    /* The open message names the format, and so the importer. Text whose open cannot be read
     * fails the import at the same place with the same error, so its peek error is not needed. */
    recd_msg_format format;
    recd_text_peek_format(text, len, enc, &format, NULL, 0);
    return recd_format__import_text(importer_of(format), text, len, enc, expect, out, stats, err,
                                    errlen);
}
