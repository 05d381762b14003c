/* The table of session formats. A new output format is one file with its session_format and
 * one entry here. */
#include "session_formats.h"

#include "session_rec.h"
#include "session_recap.h"

const session_format *session_format_for(recd_msg_format f)
{
    switch (f) {
    case RECD_MSG_FMT_SAMP_ONFOOT:
    case RECD_MSG_FMT_SAMP_VEHICLE: return &session_rec_format;
    case RECD_MSG_FMT_RECAP: return &session_recap_format;
    default: return NULL;
    }
}
