/* SPDX-License-Identifier: MIT */
/* One format's binary payloads (docs/wire.md section 2.3). A format is one entry in
 * Formats.TABLE; NDJSON needs no entry, it passes every field through. */
package recd.client;

import java.util.Map;

public interface WireFormat {
    String name();

    int code(); /* the open payload's format byte */

    /* The message key that becomes the frame's time: "t" or "tick"; null for a format whose
     * payload holds its time (carla): its states and events always carry time 0. */
    String timeKey();

    long timeMax();

    /* Bytes after the open's token (Recap: the header); nothing for most formats. */
    void openExtra(Map<String, Object> open, ByteWriter out);

    void state(Map<String, Object> state, ByteWriter out);

    /* Throws EncodeException for a format without events. */
    void event(Map<String, Object> event, ByteWriter out);
}
