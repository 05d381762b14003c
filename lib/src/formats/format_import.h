/* Internal: how recd_importer writes one format (a family of formats may share one). The
 * importer checks the message order and hands each message to the hooks of its session's format;
 * the hooks own im->impl. */
#ifndef RECD_FORMAT_IMPORT_H
#define RECD_FORMAT_IMPORT_H

#include "recd/format.h"

struct recd_format_importer {
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

#endif
