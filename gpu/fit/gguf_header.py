"""Read a GGUF file's header (metadata + tensor table) without touching tensor data.

`gguf.GGUFReader` memory-maps the whole file and builds numpy views for every metadata item, which takes
seconds to tens of seconds on a real tokenizer and needs the complete file. This reader walks the header
sequentially with the `gguf` package's own type tables (GGUFValueType, GGML_QUANT_SIZES), stops at the
tensor table, and so works on the first few megabytes of a file (what a chat upload can carry). Every
length is bounded, so a malformed or hostile header fails with a clear message instead of a huge read.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import IO, Any

from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFValueType

MAX_HEADER_BYTES = 64 * 2**20
MAX_STRING = 16 * 2**20
MAX_ITEMS = 10_000_000
MAX_TENSORS = 1_000_000

_SCALAR = {
    GGUFValueType.UINT8: "<B", GGUFValueType.INT8: "<b", GGUFValueType.UINT16: "<H",
    GGUFValueType.INT16: "<h",
    GGUFValueType.UINT32: "<I", GGUFValueType.INT32: "<i", GGUFValueType.FLOAT32: "<f",
    GGUFValueType.BOOL: "<?", GGUFValueType.UINT64: "<Q", GGUFValueType.INT64: "<q",
    GGUFValueType.FLOAT64: "<d",
}


class GGUFHeaderError(ValueError):
    pass


@dataclass(frozen=True)
class TensorInfo:
    name: str
    n_elements: int
    n_bytes: int
    type_name: str


@dataclass(frozen=True)
class GGUFHeader:
    version: int
    metadata: dict[str, Any]
    array_lengths: dict[str, int]
    tensors: list[TensorInfo]


class _Stream:
    def __init__(self, handle: IO[bytes], limit: int) -> None:
        self.handle = handle
        self.limit = limit
        self.read_bytes = 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.read_bytes + size > self.limit:
            raise GGUFHeaderError(f"the header is larger than {self.limit // 2**20} MiB or malformed")
        data = self.handle.read(size)
        if len(data) != size:
            raise GGUFHeaderError("the file ends inside its header (truncated or not a GGUF file)")
        self.read_bytes += size
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > MAX_STRING:
            raise GGUFHeaderError(f"a metadata string claims {length:,} bytes")
        return self.take(length).decode("utf-8", errors="replace")


def _value(stream: _Stream, kind: int, key: str, lengths: dict[str, int]) -> Any:
    try:
        vtype = GGUFValueType(kind)
    except ValueError:
        raise GGUFHeaderError(f"unknown metadata type {kind} for '{key}'") from None
    if vtype == GGUFValueType.STRING:
        return stream.string()
    if vtype == GGUFValueType.ARRAY:
        item_kind = stream.unpack("<I")
        count = stream.unpack("<Q")
        if count > MAX_ITEMS:
            raise GGUFHeaderError(f"the array '{key}' claims {count:,} items")
        lengths[key] = count
        try:
            item_type = GGUFValueType(item_kind)
        except ValueError:
            raise GGUFHeaderError(f"unknown array item type {item_kind} for '{key}'") from None
        if item_type in _SCALAR:
            # numbers: keep small arrays (per-layer head counts), skip big ones (token scores)
            size = struct.calcsize(_SCALAR[item_type])
            raw = stream.take(size * count)
            if count <= 4096:
                return list(struct.unpack(f"<{count}{_SCALAR[item_type][1]}", raw))
            return None
        for _ in range(count):  # strings (the vocabulary) or nested arrays: walk, keep nothing
            _value(stream, item_kind, key, {})
        return None
    return stream.unpack(_SCALAR[vtype])


def read_gguf_header(handle: IO[bytes], limit: int = MAX_HEADER_BYTES) -> GGUFHeader:
    stream = _Stream(handle, limit)
    if stream.take(4) != b"GGUF":
        raise GGUFHeaderError("not a GGUF file (it does not start with 'GGUF')")
    version = stream.unpack("<I")
    if version not in (2, 3):
        raise GGUFHeaderError(f"unsupported GGUF version {version}")
    n_tensors = stream.unpack("<Q")
    n_kv = stream.unpack("<Q")
    if n_tensors > MAX_TENSORS or n_kv > MAX_ITEMS:
        raise GGUFHeaderError(f"implausible counts ({n_tensors:,} tensors, {n_kv:,} metadata items)")
    metadata: dict[str, Any] = {}
    lengths: dict[str, int] = {}
    for _ in range(n_kv):
        key = stream.string()
        metadata[key] = _value(stream, stream.unpack("<I"), key, lengths)
    tensors = []
    for _ in range(n_tensors):
        name = stream.string()
        n_dims = stream.unpack("<I")
        if n_dims > 8:
            raise GGUFHeaderError(f"tensor '{name}' claims {n_dims} dimensions")
        elements = 1
        for _ in range(n_dims):
            elements *= stream.unpack("<Q")
        raw_type = stream.unpack("<I")
        stream.unpack("<Q")  # data offset
        try:
            qtype = GGMLQuantizationType(raw_type)
            block, type_size = GGML_QUANT_SIZES[qtype]
        except (ValueError, KeyError):
            raise GGUFHeaderError(f"tensor '{name}' has unknown type {raw_type}") from None
        tensors.append(TensorInfo(name, elements, elements // block * type_size, qtype.name))
    return GGUFHeader(version, metadata, lengths, tensors)
