# SPDX-License-Identifier: MIT
# The `carla` format's binary payloads (docs/wire.md section 2.3): the open's log header and
# writer settings, a frame as FrameStart fields plus packets of records exactly as CARLA's log
# stores them (docs/formats/carla.md section 2.5, little-endian), and one event record. Driven by
# the record tables below, by the JSON names of docs/protocol.md section 2.8.
import base64
import math
import struct

from .formats import EncodeError, _int, _need

# Field types: u8 u16 u32 i32 u64 f32 f64; V = 3 numbers of the frame's vector width; str = u16
# length + UTF-8; "n16:NAME" / "n32:NAME" = a list of NAME's rows behind a u16 / u32 count.
_ROWS = {
    "attr": "u8 type; str id value",
    "bone": "str name; V location rotation",
    "wheel": "u8 location; f32 steering_angle tire_rotation",
    "xy": "f32 x y",
    "gear": "f32 ratio down_ratio up_ratio",
    "pwheel": "f32 tire_friction damping_rate max_steer_angle radius max_brake_torque "
              "max_handbrake_torque lat_stiff_max_load lat_stiff_value long_stiff_value "
              "position_x position_y position_z",
}
_BOX = "u32 id; V origin extent"
# message key -> (0.9.16 packet id, record fields); None fields: a single f64/u64 payload.
PACKETS = {
    "positions": (6, "u32 id; V location rotation"),
    "traffic_lights": (7, "u32 id; u8 frozen; f32 elapsed; u8 state"),
    "vehicle_animations": (8, "u32 id; f32 steering throttle brake; u8 handbrake; i32 gear"),
    "walker_animations": (9, "u32 id; f32 speed"),
    "vehicle_lights": (10, "u32 id state"),
    "scene_lights": (11, "i32 id; f32 intensity r g b a; u8 on type"),
    "kinematics": (12, "u32 id; V linear_velocity angular_velocity"),
    "bounding_boxes": (13, _BOX),
    "platform_time": (14, "f64"),
    "physics_controls": (15, "u32 id; f32 max_rpm moi damping_rate_full_throttle "
                             "damping_rate_zero_throttle_clutch_engaged "
                             "damping_rate_zero_throttle_clutch_disengaged; u8 use_gear_autobox; "
                             "f32 clutch_strength final_ratio mass drag_coefficient center_of_mass_x "
                             "center_of_mass_y center_of_mass_z; n32:xy torque_curve; "
                             "n32:gear forward_gears; n32:xy steering_curve; n32:pwheel wheels"),
    "traffic_light_times": (16, "u32 id; f32 green_time yellow_time red_time"),
    "trigger_volumes": (17, _BOX),
    "frame_counter": (18, "u64"),
    "walker_bones": (19, "u32 id; n16:bone bones"),
    "visual_time": (20, "f64"),
    "wheel_animations": (21, "u32 id; n32:wheel wheels"),
    "biker_animations": (22, "u32 id; f32 forward_speed engine_rotation"),
    "doors": (23, "u32 id; u8 doors open"),
    "weather": (24, "f32 cloudiness precipitation precipitation_deposits wind_intensity "
                    "sun_azimuth_angle sun_altitude_angle fog_density fog_distance fog_falloff "
                    "wetness scattering_intensity mie_scattering_scale rayleigh_scattering_scale "
                    "dust_storm"),
}
EVENTS = {
    "add": (2, "u32 id; u8 actor_type; V location rotation; u32 uid; str blueprint; n16:attr attributes"),
    "delete": (3, "u32 id"),
    "parent": (4, "u32 id parent"),
    "collision": (5, "u32 id actor1 actor2; u8 hero1 hero2"),
}
_IDS = {"0.9.13": 13, "0.9.15": 15, "0.9.16": 16}
_WIDTH = 8  # frames carry f64 vectors: exact for both log widths (recd converts)
_NONFINITE = {"nan": math.nan, "-nan": -math.nan, "inf": math.inf, "-inf": -math.inf}


def _spec(text):
    out = []
    for part in text.split(";"):
        words = part.split()
        out.extend((name, words[0]) for name in words[1:])
    return out


_ROW_SPECS = {k: _spec(v) for k, v in _ROWS.items()}


def _widen(b32):
    """f64 bits of f32 bits; a NaN keeps its payload (shifted up) and stays signalling if it was."""
    if b32 & 0x7F800000 == 0x7F800000 and b32 & 0x007FFFFF:
        return (b32 >> 31) << 63 | 0x7FF0000000000000 | (b32 & 0x007FFFFF) << 29
    return struct.unpack("<Q", struct.pack("<d", struct.unpack("<f", struct.pack("<I", b32))[0]))[0]


def _narrow(b64):
    """f32 bits of f64 bits, a NaN's payload kept where f32 has room for it (as librecd does)."""
    mant = b64 & 0x000FFFFFFFFFFFFF
    if b64 & 0x7FF0000000000000 == 0x7FF0000000000000 and mant >> 29:
        return (b64 >> 63) << 31 | 0x7F800000 | mant >> 29
    return struct.unpack("<I", struct.pack("<f", struct.unpack("<d", struct.pack("<Q", b64))[0]))[0]


def _nan_bits(v, where):
    """("f32" or "f64", bits) of a "nan:0x..." string: 8 hex digits are f32 bits, 16 f64 bits."""
    digits = v[6:]
    if len(digits) not in (8, 16) or any(c not in "0123456789abcdef" for c in digits):
        raise EncodeError(f"{where}: {v!r}: \"nan:0x\" takes 8 or 16 lowercase hex digits")
    bits = int(digits, 16)
    width = "f32" if len(digits) == 8 else "f64"
    exp, mant = (0x7F800000, 0x007FFFFF) if width == "f32" else (0x7FF0000000000000, 0x000FFFFFFFFFFFFF)
    if bits & exp != exp or not bits & mant:
        raise EncodeError(f"{where}: {v!r} is not a NaN")
    return width, bits


def _real(v, where):
    """A float of a CARLA record; NaN and infinities are allowed (CARLA logs hold them). A
    "nan:0x..." NaN comes back as its f64 bits' float, which struct.pack("<d") keeps exactly."""
    if isinstance(v, str) and v in _NONFINITE:
        return _NONFINITE[v]
    if isinstance(v, str) and v.startswith("nan:0x"):
        width, bits = _nan_bits(v, where)
        return struct.unpack("<d", struct.pack("<Q", _widen(bits) if width == "f32" else bits))[0]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EncodeError(f"{where}: {v!r} is not a number (or \"nan\", \"inf\", \"-inf\", \"nan:0x...\")")
    return float(v)


def _f32_bits(v, where):
    """The f32 bits of a CARLA f32 field: a "nan:0x" + 8 digits NaN exactly as given."""
    if isinstance(v, str) and v.startswith("nan:0x"):
        width, bits = _nan_bits(v, where)
        return bits if width == "f32" else _narrow(bits)
    x = _real(v, where)
    if math.isfinite(x) and abs(x) > 3.4028234663852886e38:
        raise EncodeError(f"{where}: {x} does not fit f32")
    if math.isnan(x):
        return _narrow(struct.unpack("<Q", struct.pack("<d", x))[0])
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _value(kind, v, where, out):
    if kind.startswith("n16:") or kind.startswith("n32:"):
        if not isinstance(v, (list, tuple)):
            raise EncodeError(f"{where}: expected an array")
        out.append(struct.pack("<H" if kind[1:3] == "16" else "<I", len(v)))
        for i, row in enumerate(v):
            _record(_ROW_SPECS[kind[4:]], row, f"{where}[{i}]", out)
    elif kind == "V":
        if not isinstance(v, (list, tuple)) or len(v) != 3:
            raise EncodeError(f"{where}: expected an array of 3 numbers")
        out.append(struct.pack("<3d", *(_real(x, f"{where}[{i}]") for i, x in enumerate(v))))
    elif kind == "f32":
        out.append(struct.pack("<I", _f32_bits(v, where)))
    elif kind == "f64":
        out.append(struct.pack("<d", _real(v, where)))
    elif kind == "str":
        if not isinstance(v, str):
            raise EncodeError(f"{where}: expected a string")
        b = v.encode("utf-8")
        if len(b) > 0xFFFF:
            raise EncodeError(f"{where}: longer than 65535 bytes")
        out.append(struct.pack("<H", len(b)) + b)
    elif kind == "u64":
        out.append(struct.pack("<Q", _int(v, "i64", where)))
    else:
        out.append(struct.pack("<" + {"u8": "B", "u16": "H", "u32": "I", "i32": "i"}[kind],
                               _int(v, kind, where)))


def _record(fields, m, where, out):
    if not isinstance(m, dict):
        raise EncodeError(f"{where}: expected an object")
    for name, kind in fields:
        _value(kind, _need(m, name, where), f"{where}.{name}", out)


_PACKET_SPECS = {k: (pid, _spec(f) if " " in f else f) for k, (pid, f) in PACKETS.items()}
_EVENT_SPECS = {k: (pid, _spec(f)) for k, (pid, f) in EVENTS.items()}


def carla_open(o: dict) -> bytes:
    w = "open.carla"
    c = o.get("carla")
    if not isinstance(c, dict):
        raise EncodeError(f"{w}: required for format carla (an object)")
    width = c.get("width", "f32")
    ids = c.get("ids", "0.9.16")
    if width not in ("f32", "f64"):
        raise EncodeError(f"{w}.width: {width!r} is not \"f32\" or \"f64\"")
    if ids not in _IDS:
        raise EncodeError(f"{w}.ids: {ids!r} is not one of {', '.join(_IDS)}")
    extra = c.get("additional_data", False)
    if not isinstance(extra, bool):
        raise EncodeError(f"{w}.additional_data: expected true or false")
    mp = _need(c, "map", w)
    if not isinstance(mp, str) or len(mp.encode()) > 0xFFFF or "\0" in mp:
        raise EncodeError(f"{w}.map: a string of at most 65535 bytes without NUL")
    mb = mp.encode("utf-8")
    return struct.pack("<qBBBH", _int(c.get("date", 0), "i64", w + ".date"), 4 if width == "f32" else 8,
                       _IDS[ids], int(extra), len(mb)) + mb


_KNOWN_IDS = {pid for pid, _ in _PACKET_SPECS.values()}


def _raw_packet(raw, where):
    """{"id", "data"}: a packet kept byte for byte; with "parsed": false, a known kind in a
    layout recd does not parse, its data a u16 count and the records."""
    if not isinstance(raw, dict):
        raise EncodeError(f"{where}: expected an object")
    pid = _int(_need(raw, "id", where), "u8", where + ".id")
    if pid < 2:
        raise EncodeError(f"{where}.id: {pid} is not 2..255")
    data = base64.b64decode(_need(raw, "data", where), validate=True)
    if "parsed" not in raw:
        return struct.pack("<BBII", pid, 1, 0, len(data)) + data
    if raw["parsed"] is not False:
        raise EncodeError(f"{where}.parsed: only false is allowed")
    if len(data) < 2 or pid not in _KNOWN_IDS:
        raise EncodeError(f"{where}: unparsed packets hold a known id and a count")
    count = struct.unpack_from("<H", data)[0]
    return struct.pack("<BBII", pid, 0, count, len(data) - 2) + data[2:]


def carla_state(m: dict) -> bytes:
    packets = []
    # Packets in the message's key order, as librecd's JSON reader takes them (recd writes the
    # log's own order either way); "raw" packets where the "raw" key stands.
    for key in m:
        if key == "raw":
            packets.extend(_raw_packet(raw, f"state.raw[{i}]") for i, raw in enumerate(m["raw"]))
            continue
        if key not in _PACKET_SPECS:
            continue
        pid, fields = _PACKET_SPECS[key]
        where = f"state.{key}"
        out = []
        if fields in ("f64", "u64"):
            _value(fields, m[key], where, out)
            count = 0
        else:
            rows = m[key]
            if not isinstance(rows, (list, tuple)):
                raise EncodeError(f"{where}: expected an array of records")
            for i, row in enumerate(rows):
                _record(fields, row, f"{where}[{i}]", out)
            count = len(rows)
        body = b"".join(out)
        packets.append(struct.pack("<BBII", pid, 0, count, len(body)) + body)
    if len(packets) > 1024:
        raise EncodeError("state: more than 1024 packets")
    has_duration = "duration" in m
    head = struct.pack("<QdBdBH", _int(_need(m, "frame", "state"), "i64", "state.frame"),
                       _real(_need(m, "elapsed", "state"), "state.elapsed"), int(has_duration),
                       _real(m.get("duration", 0.0), "state.duration"), _WIDTH, len(packets))
    return head + b"".join(packets)


def carla_event(m: dict) -> bytes:
    kind = _need(m, "kind", "event")
    if kind not in _EVENT_SPECS:
        raise EncodeError(f"event.kind: {kind!r} is not add, delete, parent or collision")
    pid, fields = _EVENT_SPECS[kind]
    out = [struct.pack("<BB", pid, _WIDTH)]
    _record(fields, m, "event", out)
    return b"".join(out)
