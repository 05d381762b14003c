/* SPDX-License-Identifier: MIT */
/* Transitional, removed by /work/wt/i36-text-rename.sh (which points every include of it at the
 * headers below that the file needs): the grab-bag the message model's encodings used to share. */
#ifndef RECD_MSG_FIELDS_H
#define RECD_MSG_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/json_text.h"
#include "base/text.h"
#include "base/why.h"
#include "message/json/msg_json.h"
#include "recd/message.h"

#endif
