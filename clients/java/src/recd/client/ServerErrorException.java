/* SPDX-License-Identifier: MIT */
/* The server refused the data and said why: its error reply (docs/wire.md section 5.1). */
package recd.client;

import java.io.IOException;

public class ServerErrorException extends IOException {
    private static final long serialVersionUID = 1L;

    public ServerErrorException(String message) { super(message); }
}
