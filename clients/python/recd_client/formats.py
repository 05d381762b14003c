# SPDX-License-Identifier: MIT
# The format table: how each recd format's open, state and event payloads become binary frame
# bytes (docs/wire.md section 2.3). Messages are the dicts of docs/protocol.md (the JSON model).
# Adding a format = one WireFormat entry in FORMATS; NDJSON needs no entry at all (fields pass
# through), so a format without an entry still works over NDJSON.
import base64
import math
import struct
from dataclasses import dataclass
from typing import Callable, Dict, Optional


class EncodeError(ValueError):
    """A message that cannot be encoded; the text names the field."""


@dataclass(frozen=True)
class WireFormat:
    name: str
    code: int  # the open payload's format byte
    time_key: Optional[str]  # the key that becomes the frame's time ("t", "tick"; None: always 0)
    time_max: int  # largest frame time the format allows
    open_extra: Callable[[dict], bytes]  # bytes after the token (recap: the header)
    state: Callable[[dict], bytes]
    event: Optional[Callable[[dict], bytes]]  # None: the format has no events


# ---- checked scalar packing ----

_INT_RANGES = {
    "u8": ("B", 0, 0xFF), "u16": ("H", 0, 0xFFFF), "s16": ("h", -0x8000, 0x7FFF),
    "u32": ("I", 0, 0xFFFFFFFF), "i32": ("i", -2**31, 2**31 - 1), "i64": ("q", -2**63, 2**63 - 1),
}
_FLT_MAX = 3.4028234663852886e38


def _need(msg: dict, key: str, where: str):
    if key not in msg:
        raise EncodeError(f"{where}.{key}: missing")
    return msg[key]


def _int(v, kind: str, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise EncodeError(f"{where}: {v!r} is not an integer")
    lo, hi = _INT_RANGES[kind][1:]
    if not lo <= v <= hi:
        raise EncodeError(f"{where}: {v} does not fit {kind}")
    return v


def _float(v, kind: str, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EncodeError(f"{where}: {v!r} is not a number")
    v = float(v)
    if not math.isfinite(v):
        raise EncodeError(f"{where}: NaN and infinities are refused")
    if kind == "f32" and abs(v) > _FLT_MAX:
        raise EncodeError(f"{where}: {v} does not fit f32")
    return v


def _vec(v, n: int, where: str) -> list:
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise EncodeError(f"{where}: expected an array of {n} numbers")
    return [_float(x, "f32", f"{where}[{i}]") for i, x in enumerate(v)]


def _bits(v, nbits: int, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < (1 << nbits):
        raise EncodeError(f"{where}: {v!r} does not fit {nbits} bits")
    return v


# ---- SA-MP .rec blocks (docs/formats/samp-rec.md, little-endian, block without its time) ----

def _weapon_byte(m: dict, where: str) -> int:
    weapon = _bits(_need(m, "weapon", where), 6, where + ".weapon")
    extra = _bits(_need(m, "additional_key", where), 2, where + ".additional_key")
    return weapon | extra << 6


def _anim_flags(m: dict, where: str) -> int:
    f = _need(m, "anim_flags", where)
    w = where + ".anim_flags"
    if not isinstance(f, dict):
        raise EncodeError(f"{w}: expected an object")
    v = _bits(_need(f, "frame_delta", w), 8, w + ".frame_delta")
    for bit, key in ((8, "loop"), (9, "lock_x"), (10, "lock_y"), (11, "freeze")):
        if not isinstance(_need(f, key, w), bool):
            raise EncodeError(f"{w}.{key}: expected true or false")
        v |= int(f[key]) << bit
    return v | _bits(_need(f, "time", w), 4, w + ".time") << 12


def onfoot_state(m: dict) -> bytes:
    w = "state"
    g = lambda k, kind: _int(_need(m, k, w), kind, f"{w}.{k}")  # noqa: E731
    return struct.pack(
        "<hhH3f4fBBBB3f3fHHH",
        g("left_right", "s16"), g("up_down", "s16"), g("keys", "u16"),
        *_vec(_need(m, "position", w), 3, w + ".position"),
        *_vec(_need(m, "rotation", w), 4, w + ".rotation"),
        g("health", "u8"), g("armour", "u8"), _weapon_byte(m, w), g("special_action", "u8"),
        *_vec(_need(m, "velocity", w), 3, w + ".velocity"),
        *_vec(_need(m, "surf_offset", w), 3, w + ".surf_offset"),
        g("surf_id", "u16"), g("anim_id", "u16"), _anim_flags(m, w))


def vehicle_state(m: dict) -> bytes:
    w = "state"
    g = lambda k, kind: _int(_need(m, k, w), kind, f"{w}.{k}")  # noqa: E731
    if ("hydra_thrust" in m) == ("train_speed" in m):
        raise EncodeError(f"{w}: exactly one of hydra_thrust and train_speed is required")
    if "train_speed" in m:
        extra = struct.pack("<f", _float(m["train_speed"], "f32", w + ".train_speed"))
    else:
        t = m["hydra_thrust"]
        if not isinstance(t, (list, tuple)) or len(t) != 2:
            raise EncodeError(f"{w}.hydra_thrust: expected [low u16, high u16]")
        extra = struct.pack("<HH", *(_int(x, "u16", f"{w}.hydra_thrust[{i}]") for i, x in enumerate(t)))
    return struct.pack(
        "<HhhH4f3f3ffBBBBBH",
        g("vehicle_id", "u16"), g("left_right", "s16"), g("up_down", "s16"), g("keys", "u16"),
        *_vec(_need(m, "rotation", w), 4, w + ".rotation"),
        *_vec(_need(m, "position", w), 3, w + ".position"),
        *_vec(_need(m, "velocity", w), 3, w + ".velocity"),
        _float(_need(m, "vehicle_health", w), "f32", w + ".vehicle_health"),
        g("driver_health", "u8"), g("driver_armour", "u8"), _weapon_byte(m, w),
        g("siren", "u8"), g("landing_gear", "u8"), g("trailer_id", "u16")) + extra


def _no_extra(_open: dict) -> bytes:
    return b""


def player_state(m: dict) -> bytes:
    """samp-player (docs/wire.md 2.3): the .rec type, for a vehicle its model (0: not given) and
    seat (0xFF: not given), then the on-foot or vehicle payload."""
    w = "state"
    if "vehicle_id" not in m:
        if "vehicle_model" in m or "seat" in m:
            raise EncodeError(f"{w}: vehicle_model and seat belong to vehicle states")
        return b"\x02" + onfoot_state(m)
    model = _int(m.get("vehicle_model", 0), "u16", w + ".vehicle_model")
    if model and not 400 <= model <= 611:
        raise EncodeError(f"{w}.vehicle_model: {model} is not 400..611")
    seat = m.get("seat")
    seat = 0xFF if seat is None else _int(seat, "u8", w + ".seat")
    if seat != 0xFF and seat > 3:
        raise EncodeError(f"{w}.seat: {seat} is not 0..3")
    return struct.pack("<BHB", 1, model, seat) + vehicle_state(m)


# ---- Recap (docs/formats/recap.md, big-endian) ----

def _utf8(v, where: str) -> bytes:
    if not isinstance(v, str):
        raise EncodeError(f"{where}: expected a string")
    try:
        return v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise EncodeError(f"{where}: not valid UTF-8 ({e.reason})") from None


def _raw(v, where: str) -> bytes:
    """bytes fields: bytes as they are, or the base64 text of the JSON mapping."""
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, str):
        try:
            return base64.b64decode(v, validate=True)
        except ValueError:
            raise EncodeError(f"{where}: not valid base64") from None
    raise EncodeError(f"{where}: expected bytes or a base64 string")


def _prefixed(data: bytes, width: str, where: str) -> bytes:
    limit = {"B": 0xFF, "H": 0xFFFF, "I": 0xFFFFFFFF}[width]
    if len(data) > limit:
        raise EncodeError(f"{where}: {len(data)} bytes is longer than {limit}")
    return struct.pack(">" + width, len(data)) + data


def _item(v, where: str) -> bytes:
    if not isinstance(v, dict):
        raise EncodeError(f"{where}: expected an item object")
    key = _utf8(v.get("key", ""), where + ".key")
    if not key:
        return b"\x00"
    count = _int(_need(v, "count", where), "u8", where + ".count")
    flags = _int(v.get("flags", 0), "u8", where + ".flags")
    data = _raw(v.get("data", b""), where + ".data")
    return (_prefixed(key, "B", where + ".key") + struct.pack(">BB", count, flags)
            + _prefixed(data, "H", where + ".data"))


def _parse_fields(spec: str):
    """'i32 x y z; text block' -> [('x', 'i32'), ('y', 'i32'), ('z', 'i32'), ('block', 'text')]"""
    out = []
    for part in spec.split(";"):
        words = part.split()
        if words:
            out.extend((name, words[0]) for name in words[1:])
    return out


def _encode_fields(fields, m, where: str) -> bytes:
    if not isinstance(m, dict):
        raise EncodeError(f"{where}: expected an object")
    return b"".join(_field(kind, _need(m, name, where), f"{where}.{name}") for name, kind in fields)


_EQUIP = "item main_hand off_hand feet legs chest head"
# tag -> (action name, fields). The event half of the Recap tag table (recap.md section 6.4).
RECAP_EVENTS = {
    0x05: ("SWING_ARM", "u8 hand"),
    0x06: ("USE_ITEM", "u8 hand"),
    0x07: ("BLOCK_PLACE", "i32 x y z; text block"),
    0x08: ("BLOCK_BREAK", "i32 x y z; text block"),
    0x09: ("DAMAGE", "u8 cause; f32 amount; u8 flags; i32 attacker_id"),
    0x0D: ("BLOCK_DAMAGE_START", "i32 x y z; u8 stage"),
    0x0E: ("BLOCK_DAMAGE_ABORT", "i32 x y z"),
    0x0F: ("SIGN_CHANGE", "i32 x y z; u8 side; text line1 line2 line3 line4"),
    0x11: ("CONTAINER_OPEN", "i32 x y z; str container_type; u8 open"),
    0x12: ("CONTAINER_UPDATE", "u16 slot; item item"),
    0x14: ("PROJECTILE", "str entity_type; f64 x y z vx vy vz; i32 projectile_id"),
    0x15: ("DEATH", "text message"),
    0x17: ("RIPTIDE", "u8 level"),
    0x18: ("BED_ENTER", "i32 x y z"),
    0x19: ("BED_LEAVE", "i32 x y z"),
    0x1A: ("REDSTONE_INTERACTION", "i32 x y z; text block"),
    0x1B: ("CRITICAL_HIT", "i32 target_id"),
    0x1C: ("ENCHANT_CRIT", "i32 target_id"),
    0x1D: ("CHAT_MESSAGE", "text message"),
    0x1E: ("ENTITY_INTERACTION", "i32 entity_id; str entity_type; u8 hand; item item"),
    0x1F: ("VEHICLE_ENTER", "i32 entity_id; str entity_type"),
    0x20: ("VEHICLE_LEAVE", "i32 entity_id; str entity_type"),
    0x21: ("MOB_STATES", ("mobs", "i32 entity_id; str entity_type; f64 x y z; "
                          "f32 yaw pitch head_yaw health; u8 flags; i32 variant; " + _EQUIP)),
    0x22: ("POTION_EFFECTS", ("i32 color", "effects", "str effect; u8 amplifier; i32 duration; u8 flags")),
    0x23: ("TOTEM", ""),
    0x24: ("ARROWS_IN_BODY", "u8 count"),
    0x25: ("EXPLOSION", ("f64 x y z; f32 power", "blocks", "i32 x y z")),
    0x26: ("PARTICLES", ("particles", "str particle; f64 x y z; f32 dx dy dz speed; i32 count; bytes data")),
    0x27: ("SIGN_EXTRAS", "i32 x y z; u8 side color glowing"),
    0x28: ("ITEM_DROP", "item item; f64 x y z vx vy vz"),
    0x29: ("CAPTURED_PACKETS", ("packets", "str type; bytes data")),
    0x2B: ("BLOCK_CHANGES", ("changes", "i32 x y z; text block")),
    0xFF: ("EXTENSION", "u8 id; bytes data"),
}


def _event_fields(spec):
    """Spec forms: "fields", ("list_name", "row fields") or ("fields", "list_name", "row fields")."""
    if isinstance(spec, str):
        return _parse_fields(spec)
    if len(spec) == 2:
        return [(spec[0], ("list", _parse_fields(spec[1])))]
    return _parse_fields(spec[0]) + [(spec[1], ("list", _parse_fields(spec[2])))]


def _field(kind, v, where: str) -> bytes:
    """One field; a list kind is ("list", row fields)."""
    if isinstance(kind, tuple):
        if not isinstance(v, (list, tuple)) or len(v) > 0xFFFF:
            raise EncodeError(f"{where}: expected an array of at most 65535 rows")
        return struct.pack(">H", len(v)) + b"".join(
            _encode_fields(kind[1], row, f"{where}[{i}]") for i, row in enumerate(v))
    if kind in ("u8", "u16", "i32", "i64"):
        return struct.pack(">" + _INT_RANGES[kind][0], _int(v, kind, where))
    if kind in ("f32", "f64"):
        return struct.pack(">f" if kind == "f32" else ">d", _float(v, kind, where))
    if kind == "str":
        return _prefixed(_utf8(v, where), "B", where)
    if kind == "text":
        return _prefixed(_utf8(v, where), "H", where)
    if kind == "bytes":
        return _prefixed(_raw(v, where), "I", where)
    if kind == "item":
        return _item(v, where)
    raise AssertionError(kind)


_EVENTS_BY_NAME = {name: (tag, _event_fields(spec)) for tag, (name, spec) in RECAP_EVENTS.items()}


def recap_event(m: dict) -> bytes:
    action = _need(m, "action", "event")
    if action not in _EVENTS_BY_NAME:
        raise EncodeError(f"event.action: {action!r} is not a Recap event action")
    tag, fields = _EVENTS_BY_NAME[action]
    return bytes([tag]) + _encode_fields(fields, m, "event")


_EQUIP_SLOTS = 6
_INVENTORY_SLOTS = 41


def _slots(items, count: int, where: str) -> dict:
    if items is None:
        return {}
    if not isinstance(items, (list, tuple)):
        raise EncodeError(f"{where}: expected an array of items")
    out = {}
    for i, it in enumerate(items):
        w = f"{where}[{i}]"
        if not isinstance(it, dict):
            raise EncodeError(f"{w}: expected an item object")
        slot = _int(_need(it, "slot", w), "u8", w + ".slot")
        if slot >= count or slot in out:
            raise EncodeError(f"{w}.slot: {slot} is out of range or repeated")
        if not it.get("key"):
            raise EncodeError(f"{w}.key: a state lists non-empty slots only")
        out[slot] = _item(it, w)
    return out


def recap_state(m: dict) -> bytes:
    w = "state"
    vals = []
    for key in ("pos", "rot", "vel"):
        v = _need(m, key, w)
        if not isinstance(v, (list, tuple)) or len(v) != 3:
            raise EncodeError(f"{w}.{key}: expected an array of 3 numbers")
        vals += [_float(x, "f64", f"{w}.{key}[{i}]") for i, x in enumerate(v)]
    out = [struct.pack(">9d", *vals),
           struct.pack(">HBBB", _int(_need(m, "flags", w), "u16", w + ".flags"),
                       _int(_need(m, "pose", w), "u8", w + ".pose"),
                       _int(_need(m, "game_mode", w), "u8", w + ".game_mode"),
                       _int(_need(m, "hand_state", w), "u8", w + ".hand_state")),
           struct.pack(">ff", _float(_need(m, "health", w), "f32", w + ".health"),
                       _float(_need(m, "absorption", w), "f32", w + ".absorption"))]
    equip = _slots(m.get("equipment"), _EQUIP_SLOTS, w + ".equipment")
    out += [equip.get(s, b"\x00") for s in range(_EQUIP_SLOTS)]
    inv = _slots(m.get("inventory"), _INVENTORY_SLOTS, w + ".inventory")
    out.append(struct.pack(">H", len(inv)))
    out += [bytes([s]) + inv[s] for s in sorted(inv)]
    return b"".join(out)


_RECAP_MAGIC = b"RCAP"
_RECAP_VERSION = 4


def recap_header(o: dict) -> bytes:
    """A complete .recap header (magic through the extension area) from an open message."""
    r = o.get("recap")
    w = "open.recap"
    if not isinstance(r, dict):
        raise EncodeError(f"{w}: required for format recap (an object)")
    version = _int(r.get("version", _RECAP_VERSION), "u8", w + ".version")
    if not 1 <= version <= 4:
        raise EncodeError(f"{w}.version: {version} is not 1..4")
    body = [_prefixed(_utf8(r.get(k, ""), f"{w}.{k}"), "B", f"{w}.{k}")
            for k in ("name", "player", "uuid", "world")]
    origin = r.get("origin", [0.0, 0.0, 0.0])
    if not isinstance(origin, (list, tuple)) or len(origin) != 3:
        raise EncodeError(f"{w}.origin: expected an array of 3 numbers")
    body.append(struct.pack(">3d", *(_float(x, "f64", f"{w}.origin[{i}]") for i, x in enumerate(origin))))
    start = r.get("start_time", o.get("start_time", 0))
    body.append(struct.pack(">qqI", _int(start, "i64", w + ".start_time"),
                            _int(r.get("end_time", 0), "i64", w + ".end_time"),
                            _int(r.get("frame_count", 0), "u32", w + ".frame_count")))
    if version >= 2:
        body.append(struct.pack(">iq", _int(r.get("weather", 0), "i32", w + ".weather"),
                                _int(r.get("time_of_day", 0), "i64", w + ".time_of_day")))
    elif r.get("weather", 0) or r.get("time_of_day", 0):
        raise EncodeError(f"{w}: weather and time_of_day need version 2 or later")
    for rtype, key in ((1, "skin_texture"), (2, "skin_signature")):
        value = _utf8(r.get(key, ""), f"{w}.{key}")
        if value:
            body.append(bytes([rtype]) + _prefixed(value, "H", f"{w}.{key}"))
    enc = r.get("encoder")
    if enc is not None:
        e = f"{w}.encoder"
        if not isinstance(enc, dict):
            raise EncodeError(f"{e}: expected an object")
        body.append(b"\x03\x00\x09" + struct.pack(
            ">IBI", _int(_need(enc, "keyframe_interval", e), "u32", e + ".keyframe_interval"),
            _int(_need(enc, "gzip_level", e), "u8", e + ".gzip_level"),
            _int(_need(enc, "member_limit", e), "u32", e + ".member_limit")))
    if "extensions" in r:
        body.append(_raw(r["extensions"], w + ".extensions"))
    data = b"".join(body)
    if len(data) > 0xFFFF:
        raise EncodeError(f"{w}: the header is {len(data)} bytes, more than 65535")
    return _RECAP_MAGIC + struct.pack(">BH", version, len(data)) + data


# name -> WireFormat. A new format is one entry here (its payload encoders beside it).
FORMATS: Dict[str, WireFormat] = {
    "samp-onfoot": WireFormat("samp-onfoot", 1, "t", 0xFFFFFFFF, _no_extra, onfoot_state, None),
    "samp-vehicle": WireFormat("samp-vehicle", 2, "t", 0xFFFFFFFF, _no_extra, vehicle_state, None),
    "recap": WireFormat("recap", 3, "tick", 2**63 - 1, recap_header, recap_state, recap_event),
    "samp-player": WireFormat("samp-player", 5, "t", 0xFFFFFFFF, _no_extra, player_state, None),
}


def _register_carla():
    from . import carla_format as c  # its own file: the record tables are long
    FORMATS["carla"] = WireFormat("carla", 4, None, 0, c.carla_open, c.carla_state, c.carla_event)


_register_carla()
