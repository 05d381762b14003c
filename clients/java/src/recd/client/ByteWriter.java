/* SPDX-License-Identifier: MIT */
/* A growable byte buffer with the little-endian writes of recd's frames and the big-endian
 * writes of Recap payloads. */
package recd.client;

import java.util.Arrays;

public final class ByteWriter {
    private byte[] data;
    private int len;

    public ByteWriter() { this(256); }

    public ByteWriter(int capacity) { data = new byte[Math.max(16, capacity)]; }

    public int length() { return len; }

    public byte[] toBytes() { return Arrays.copyOf(data, len); }

    public void clear() { len = 0; }

    private void need(int n) {
        if (len + n > data.length)
            data = Arrays.copyOf(data, Math.max(data.length * 2, len + n));
    }

    public ByteWriter u8(int v) {
        need(1);
        data[len++] = (byte) v;
        return this;
    }

    public ByteWriter bytes(byte[] b) { return bytes(b, 0, b.length); }

    public ByteWriter bytes(byte[] b, int off, int n) {
        need(n);
        System.arraycopy(b, off, data, len, n);
        len += n;
        return this;
    }

    public ByteWriter le(long v, int width) {
        need(width);
        for (int i = 0; i < width; i++)
            data[len++] = (byte) (v >>> (8 * i));
        return this;
    }

    public ByteWriter be(long v, int width) {
        need(width);
        for (int i = width - 1; i >= 0; i--)
            data[len++] = (byte) (v >>> (8 * i));
        return this;
    }

    public ByteWriter f32le(double v) { return le(Float.floatToRawIntBits((float) v) & 0xFFFFFFFFL, 4); }

    public ByteWriter f32be(double v) { return be(Float.floatToRawIntBits((float) v) & 0xFFFFFFFFL, 4); }

    public ByteWriter f64be(double v) { return be(Double.doubleToRawLongBits(v), 8); }

    /* Overwrites 4 bytes at off, little-endian (a frame's body length). */
    public void patchLe32(int off, long v) {
        for (int i = 0; i < 4; i++)
            data[off + i] = (byte) (v >>> (8 * i));
    }
}
