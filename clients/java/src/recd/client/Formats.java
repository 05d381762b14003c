/* SPDX-License-Identifier: MIT */
/* The format table: name -> binary payload encoders. A new format is one entry here. */
package recd.client;

import java.util.Map;

public final class Formats {
    private Formats() {}

    public static final Map<String, WireFormat> TABLE = Map.of(
            "samp-onfoot", SampFormats.ONFOOT,
            "samp-vehicle", SampFormats.VEHICLE,
            "recap", RecapFormat.INSTANCE,
            "carla", CarlaFormat.INSTANCE,
            "samp-player", SampFormats.PLAYER);
}
