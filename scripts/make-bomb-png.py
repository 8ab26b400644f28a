#!/usr/bin/env python3
"""Writes the decompression-bomb fixture: a valid 50,000 x 50,000 1-bit greyscale PNG whose
IDAT is ~300 KB of deflated zeros (312 MB of pixels once decoded; 10 GB as RGBA).
Usage: make-bomb-png.py OUTPUT"""
import struct, sys, zlib

width = height = 50_000
row = b"\x00" + b"\x00" * ((width + 7) // 8)  # filter byte + packed 1-bit pixels

def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

compressor = zlib.compressobj(9)
idat = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
with open(sys.argv[1], "wb") as out:
    out.write(b"\x89PNG\r\n\x1a\n")
    out.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)))
    out.write(chunk(b"IDAT", idat))
    out.write(chunk(b"IEND", b""))
