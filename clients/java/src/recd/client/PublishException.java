/* SPDX-License-Identifier: MIT */
/* Publishes JetStream did not confirm (nats:// URLs): how many, and the first and last reason. */
package recd.client;

import java.io.IOException;

public final class PublishException extends IOException {
    private static final long serialVersionUID = 1L;
    public final long lost;
    public final String first, last;

    public PublishException(long lost, String first, String last) {
        super(lost + " messages were not confirmed by JetStream (first: " + first
                + (last != null && !last.equals(first) ? "; last: " + last : "") + ")");
        this.lost = lost;
        this.first = first;
        this.last = last;
    }
}
