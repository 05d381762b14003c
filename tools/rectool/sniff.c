/* Content sniffing. Order matters: the Recap magic is unambiguous; text is checked before the
 * .rec probe because a binary .rec always has control bytes in its first line (the 1000 header
 * holds NULs, a headerless file starts with a small u32 time), while a headerless-75 guess could
 * match any file whose size happens to be a multiple of 75. */
#include "sniff.h"

#include <stdbool.h>
#include <string.h>

#define TEXT_PROBE_BYTES 4096

static size_t skip_bom_and_blanks(const uint8_t *buf, size_t len)
{
    size_t i = 0;
    if (len >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF)
        i = 3;
    while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
        i++;
    return i;
}

/* The first line (or the first 4 KiB of it) has no control bytes other than tab and CR. */
static bool first_line_is_text(const uint8_t *buf, size_t len, bool *has_comma)
{
    *has_comma = false;
    size_t end = len < TEXT_PROBE_BYTES ? len : TEXT_PROBE_BYTES;
    for (size_t i = 0; i < end; i++) {
        uint8_t c = buf[i];
        if (c == '\n')
            return true;
        if (c == ',')
            *has_comma = true;
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7F)
            return false;
    }
    return end > 0;
}

static rt_format format_of_layout(recd_rec_layout l)
{
    switch (l) {
    case RECD_REC_LAYOUT_VEHICLE:
    case RECD_REC_LAYOUT_ONFOOT:
    case RECD_REC_LAYOUT_HEADER_ONLY:
        return RT_FMT_SAMP_REC;
    case RECD_REC_LAYOUT_LEGACY_ONFOOT_56:
    case RECD_REC_LAYOUT_LEGACY_HEADERLESS_75:
        return RT_FMT_LEGACY_REC;
    case RECD_REC_LAYOUT_VCMP:
        return RT_FMT_VCMP_REC;
    case RECD_REC_LAYOUT_TEXT_MANGLED:
        return RT_FMT_MANGLED_REC;
    case RECD_REC_LAYOUT_UNKNOWN:
    default:
        return RT_FMT_UNKNOWN;
    }
}

rt_format rt_sniff(const uint8_t *buf, size_t len, recd_rec_layout *rec_layout)
{
    if (rec_layout)
        *rec_layout = RECD_REC_LAYOUT_UNKNOWN;
    if (len == 0)
        return RT_FMT_EMPTY;
    if (len >= 4 && memcmp(buf, "RCAP", 4) == 0)
        return RT_FMT_RECAP;

    size_t start = skip_bom_and_blanks(buf, len);
    bool has_comma = false;
    if (start < len && first_line_is_text(buf + start, len - start, &has_comma)) {
        if (buf[start] == '{')
            return RT_FMT_JSONL;
        if (has_comma)
            return RT_FMT_CSV;
    }

    recd_rec_info info;
    memset(&info, 0, sizeof info);
    recd_rec_probe(buf, len, &info, NULL);
    if (rec_layout)
        *rec_layout = info.layout;
    return format_of_layout(info.layout);
}

const char *rt_format_name(rt_format f)
{
    switch (f) {
    case RT_FMT_EMPTY: return "empty";
    case RT_FMT_SAMP_REC: return "samp-rec";
    case RT_FMT_LEGACY_REC: return "legacy-rec";
    case RT_FMT_VCMP_REC: return "vcmp-rec";
    case RT_FMT_MANGLED_REC: return "text-mangled-rec";
    case RT_FMT_RECAP: return "recap";
    case RT_FMT_JSONL: return "jsonl";
    case RT_FMT_CSV: return "csv";
    case RT_FMT_UNKNOWN:
    default: return "unknown";
    }
}

const char *rt_format_describe(rt_format f)
{
    switch (f) {
    case RT_FMT_EMPTY: return "empty file";
    case RT_FMT_SAMP_REC: return "SA-MP NPC recording";
    case RT_FMT_LEGACY_REC:
        return "legacy SA-MP recording (pre-0.3d layout); SA-MP 0.3.7 and open.mp cannot play it";
    case RT_FMT_VCMP_REC:
        return "VC:MP NPC recording (same 1000 signature, different blocks); not a SA-MP file";
    case RT_FMT_MANGLED_REC:
        return "recording damaged by a text conversion (NUL -> space, bytes re-encoded as UTF-8); "
               "not recoverable";
    case RT_FMT_RECAP: return "Recap recording";
    case RT_FMT_JSONL: return "JSON lines text";
    case RT_FMT_CSV: return "CSV text";
    case RT_FMT_UNKNOWN:
    default: return "not a recognised recording";
    }
}
