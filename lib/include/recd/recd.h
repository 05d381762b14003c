/* SPDX-License-Identifier: MIT */
/* Every public librecd header in one include: #include <recd/recd.h>. Private headers
 * (lib/internal/recd/) are not installed and not included here. Each format's own header
 * (recd/samp_rec.h, recd/recap.h, recd/carla.h) comes with recd/message.h, whose messages carry
 * its payloads, so this list names no format. */
#ifndef RECD_RECD_H
#define RECD_RECD_H

#include "recd/api.h"
#include "recd/client.h"
#include "recd/fleet.h"
#include "recd/common.h"
#include "recd/edit.h"
#include "recd/fd_sink.h"
#include "recd/format.h"
#include "recd/gzip_members.h"
#include "recd/message.h"
#include "recd/recovery.h"
#include "recd/replay.h"
#include "recd/version.h"
#include "recd/wire.h"

#endif
