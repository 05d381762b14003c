/* SPDX-License-Identifier: MIT */
/* A message that cannot be encoded; the text names the field (e.g. "state.health: 300 does not
 * fit u8"), in the words of docs/protocol.md. */
package recd.client;

public class EncodeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public EncodeException(String message) { super(message); }
}
