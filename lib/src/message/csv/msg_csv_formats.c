/* SPDX-License-Identifier: MIT */
/* The CSV codec's lookups of a format's CSV hooks, over the one format list
 * (formats/format_table.c). A header is the format's whose signature column it has, the lowest
 * header_rank winning when several match; the format without a signature takes what is left. */
#include "message/csv/msg_csv_formats.h"

#include <string.h>

#include "recd/format_list.h"

const recd_format *msg_csv_format_of(recd_msg_format f)
{
    const recd_format *d = recd_format__by_msg(f);
    return d && d->csv ? d : NULL;
}

static bool has_column(const char *const *names, size_t ncells, const char *name)
{
    for (size_t i = 0; i < ncells; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

const recd_format *msg_csv_header_format(const char *const *names, size_t ncells)
{
    const recd_format *best = NULL, *fallback = NULL;
    for (size_t i = 0; i < recd_format__all_count(); i++) {
        const recd_format *f = recd_format__all_at(i);
        if (!f->csv)
            continue;
        if (!f->csv->signature)
            fallback = f;
        else if ((!best || f->csv->header_rank < best->csv->header_rank) &&
                 has_column(names, ncells, f->csv->signature))
            best = f;
    }
    return best ? best : fallback;
}
