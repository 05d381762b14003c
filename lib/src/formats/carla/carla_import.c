/* SPDX-License-Identifier: MIT */
/* The carla importer: messages into a CARLA log through the writer, frame by frame (one frame
 * held back for its duration), so an import needs no more memory than a frame. */
#include <errno.h>
#include <stdlib.h>

#include "formats/carla/carla_format.h"
#include "formats/carla/carla_writer.h"
#include "formats/format_import.h"
#include "base/why.h"

static int carla_open(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    carla_writer *w = calloc(1, sizeof *w);
    if (!w)
        return -ENOMEM;
    im->impl = w;
    if (!m->open.carla) {
        recd_why(err, errlen, "open: missing the carla object");
        return -EBADMSG;
    }
    return carla_writer_init(w, m->open.carla, im->sink);
}

static int carla_state(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    if (m->format != RECD_MSG_FMT_CARLA || !m->carla_state) {
        recd_why(err, errlen, "state: a %s state in a carla session", recd_msg_format_name(m->format));
        return -EBADMSG;
    }
    int rc = carla_writer_state(im->impl, m->carla_state, err, errlen);
    im->states += rc == 0;
    return rc;
}

static int carla_event(recd_importer *im, const recd_msg *m, char *err, size_t errlen)
{
    if (m->format != RECD_MSG_FMT_CARLA || !m->carla_event) {
        recd_why(err, errlen, "event: a %s event in a carla session", recd_msg_format_name(m->format));
        return -EBADMSG;
    }
    int rc = carla_writer_event(im->impl, m->carla_event, err, errlen);
    im->events += rc == 0;
    return rc;
}

static int carla_finish(recd_importer *im, char *err, size_t errlen)
{
    return carla_writer_finish(im->impl, err, errlen);
}

static void carla_release(recd_importer *im)
{
    if (im->impl)
        carla_writer_free(im->impl);
}

const struct recd_format_importer recd_carla__importer = {
    .formats = {RECD_MSG_FMT_CARLA},
    .open = carla_open,
    .state = carla_state,
    .event = carla_event,
    .finish = carla_finish,
    .release = carla_release,
};
