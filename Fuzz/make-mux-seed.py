#!/usr/bin/env python3
"""Writes a seed for the mux fuzz target (Fuzz/Mux/MuxFuzzer.swift explains the layout).

    Fuzz/make-mux-seed.py OUT VIDEO CLIP [CLIP2] [--loop] [--keep] [--offset QUARTERS]

The seeds in Fuzz/corpus/mux/ were made from these inputs (ffmpeg 5+):
    ffmpeg -f lavfi -i testsrc=size=32x32:rate=10:duration=1 -c:v libx264 -preset ultrafast -g 5 \\
        -pix_fmt yuv420p -movflags +faststart v.mp4
    ffmpeg -f lavfi -i testsrc=size=32x32:rate=10:duration=1 -f lavfi -i sine=duration=1 -c:v libx264 \\
        -preset ultrafast -g 5 -pix_fmt yuv420p -ar 22050 -ac 1 -c:a aac -b:a 16k -shortest va.mp4
    ffmpeg -f lavfi -i sine=frequency=440:duration=0.4 -ar 22050 -ac 1 -c:a aac -b:a 16k c1.m4a
    ffmpeg -f lavfi -i sine=frequency=660:duration=0.3 -ar 22050 -ac 1 -c:a aac -b:a 16k c2.m4a
"""
import argparse
import struct

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("video")
parser.add_argument("clips", nargs="+")
parser.add_argument("--loop", action="store_true")
parser.add_argument("--keep", action="store_true")
parser.add_argument("--offset", type=int, default=0, help="quarter seconds, 0 to 31")
args = parser.parse_args()
assert 1 <= len(args.clips) <= 2 and 0 <= args.offset < 32
video = open(args.video, "rb").read()
clips = [open(c, "rb").read() for c in args.clips]
flags = (args.offset << 3) | (4 if len(clips) == 2 else 0) | (2 if args.keep else 0) | (1 if args.loop else 0)
data = bytes([flags]) + struct.pack(">I", len(video)) + video
if len(clips) == 2:
    data += struct.pack(">I", len(clips[0])) + clips[0] + clips[1]
else:
    data += clips[0]
open(args.out, "wb").write(data)
