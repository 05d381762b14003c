/* SPDX-License-Identifier: MIT */
/* A packed JetStream message (docs/fleet.md, "Packed messages"): consecutive binary frames of one
 * session after a header naming the session, the first and last seq and the frame count. Byte for
 * byte what librecd's publisher builds (lib/src/wire/fleet_pack.c). The first frame added must
 * name the session, the later ones must not (Wire.encodeBinary with omitKey true), as on a
 * stream. */
package recd.client;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

public final class FleetPack {
    public static final int MAGIC = 0xD8; // a binary frame starts with 0xD7
    public static final int VERSION = 1;
    public static final int FLAG_SEQS = 1; // every frame carries a seq, strictly increasing
    public static final int HEAD = 24;     // bytes before the key
    public static final int DEFAULT_PACK_BYTES = 64 << 10;
    public static final int DEFAULT_LINGER_MS = 20;

    private final byte[] key;
    private final ByteArrayOutputStream frames = new ByteArrayOutputStream();
    private int count;
    private boolean seqs = true;
    private long firstSeq, lastSeq;

    public FleetPack(String session) {
        this.key = session.getBytes(StandardCharsets.US_ASCII);
    }

    /** Appends one frame; seq is the message's seq, or null when it has none. */
    public void add(byte[] frame, Long seq) {
        if (seq == null || (count > 0 && seq <= lastSeq))
            seqs = false;
        long s = seq == null ? 0 : seq;
        if (count == 0)
            firstSeq = s;
        lastSeq = s;
        frames.writeBytes(frame);
        count++;
    }

    public int count() {
        return count;
    }

    /** The packed message's size, what a publisher compares with its pack_bytes. */
    public int size() {
        return HEAD + key.length + frames.size();
    }

    public byte[] message() {
        ByteBuffer b = ByteBuffer.allocate(size()).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) MAGIC).put((byte) VERSION).put((byte) (seqs ? FLAG_SEQS : 0)).put((byte) key.length);
        b.putInt(count).putLong(seqs ? firstSeq : 0).putLong(seqs ? lastSeq : 0);
        b.put(key).put(frames.toByteArray());
        return b.array();
    }
}
