/* SPDX-License-Identifier: MIT */
/* Every public librecd header in one include: #include <recd/recd.h>. */
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
#include "recd/part_file.h"
#include "recd/path_template.h"
#include "recd/player_manifest.h"
#include "recd/recap.h"
#include "recd/recovery.h"
#include "recd/replay.h"
#include "recd/retention.h"
#include "recd/samp_rec.h"
#include "recd/units.h"
#include "recd/version.h"
#include "recd/wire.h"

#endif
