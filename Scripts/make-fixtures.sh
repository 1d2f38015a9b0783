#!/usr/bin/env bash
# Regenerate everything in Fixtures/ (except README.md) from FFmpeg's lavfi sources.
# Run from anywhere; needs ffmpeg/ffprobe (made with 5.1, libx264) and python3.
# Deterministic: bit-exact flags, no metadata, one encoder thread, fixed sources.
set -euo pipefail

cd "$(dirname "$0")/.."
FIX=Fixtures

# GStreamer is needed only for frag-gstreamer.mp4: without gst-launch-1.0 (or with
# NO_GST=1) the committed file is kept (and its expectation still re-derived with ffmpeg).
GST=frag-gstreamer.mp4
have_gst=0
if [[ -z ${NO_GST:-} ]] && command -v gst-launch-1.0 >/dev/null \
        && gst-inspect-1.0 mp4mux >/dev/null 2>&1 && gst-inspect-1.0 qtdemux >/dev/null 2>&1; then
    have_gst=1
fi

# Only the generated files are removed; README.md stays (and the GStreamer file when it
# cannot be remade).
rm -rf "$FIX/corrupt" "$FIX/damaged" "$FIX/expected"
for file in "$FIX"/*.mp4 "$FIX"/*.mov "$FIX"/*.m4a "$FIX"/*.m4v "$FIX"/*.3gp "$FIX"/*.3g2; do
    [[ -e $file ]] || continue
    [[ $have_gst -eq 0 && $(basename "$file") == "$GST" ]] && continue
    rm -f "$file"
done
mkdir -p "$FIX/corrupt" "$FIX/expected"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/make-fixtures.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

DUR=3
VIDEO=(-f lavfi -i "testsrc=size=160x120:rate=25:duration=$DUR")
VCODEC=(-c:v libx264 -preset ultrafast -pix_fmt yuv420p)
EXACT=(-fflags +bitexact -flags:v +bitexact -flags:a +bitexact -map_metadata -1 -threads 1)

sine() { # sine FREQUENCY RATE
    echo "sine=frequency=$1:sample_rate=$2:duration=$DUR"
}

ff() {
    ffmpeg -nostdin -hide_banner -v error -y "$@"
}

echo "good fixtures"
# AAC 44.1 kHz stereo + H.264; FFmpeg's default mp4 layout puts moov after mdat.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 44100)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 2 "${EXACT[@]}" "$FIX/aac-h264-moov-end.mp4"

# The same with moov moved in front of mdat.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 44100)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 2 "${EXACT[@]}" -movflags +faststart \
    "$FIX/aac-h264-faststart.mp4"

# Audio is track 1, video track 2.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 660 44100)" -map 1:a -map 0:v \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 2 "${EXACT[@]}" "$FIX/aac-audio-first.mp4"

# Video + two audio tracks: 440 Hz at 64k (a:0, the one -map 0:a:0 takes), then 880 Hz at 96k.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 44100)" -f lavfi -i "$(sine 880 44100)" \
    -map 0:v -map 1:a -map 2:a "${VCODEC[@]}" \
    -c:a aac -ac 2 -b:a:0 64k -b:a:1 96k "${EXACT[@]}" "$FIX/aac-two-audio.mp4"

# 48 kHz mono.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 1000 48000)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 1 "${EXACT[@]}" "$FIX/aac-48k-mono.mp4"

# 5.1: one sine per channel (FL FR FC LFE BL BR), merged into a 5.1 layout.
ff "${VIDEO[@]}" \
    -f lavfi -i "$(sine 220 48000)" -f lavfi -i "$(sine 330 48000)" -f lavfi -i "$(sine 440 48000)" \
    -f lavfi -i "$(sine 55 48000)" -f lavfi -i "$(sine 550 48000)" -f lavfi -i "$(sine 660 48000)" \
    -filter_complex "[1:a][2:a][3:a][4:a][5:a][6:a]amerge=inputs=6,aformat=channel_layouts=5.1[a]" \
    -map 0:v -map "[a]" "${VCODEC[@]}" -c:a aac -b:a 64k "${EXACT[@]}" "$FIX/aac-5.1.mp4"

# QuickTime: FFmpeg's mov muxer (see README for the sound description it writes).
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 44100)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a aac -b:a 64k -ac 2 "${EXACT[@]}" -f mov "$FIX/aac-quicktime.mov"

echo "bad fixtures"
ff "${VIDEO[@]}" -map 0:v "${VCODEC[@]}" -an "${EXACT[@]}" "$FIX/video-only.mp4"

# The first half of the bytes of the moov-at-end file: ftyp and part of mdat, no moov.
size=$(wc -c < "$FIX/aac-h264-moov-end.mp4")
head -c $((size / 2)) "$FIX/aac-h264-moov-end.mp4" > "$FIX/truncated-no-moov.mp4"

# 16-bit little-endian PCM (QuickTime 'sowt'), 8 kHz mono to keep the file small.
ff "${VIDEO[@]}" -f lavfi -i "$(sine 440 8000)" -map 0:v -map 1:a \
    "${VCODEC[@]}" -c:a pcm_s16le -ac 1 "${EXACT[@]}" -f mov "$FIX/pcm-in-mov.mov"

python3 Scripts/corrupt.py "$FIX/aac-h264-faststart.mp4" "$FIX/corrupt"
python3 Scripts/damage.py "$FIX/aac-h264-faststart.mp4" "$FIX/damaged"

# ---------------------------------------------------------------------------------------
# Second round: 2-second clips, video at CRF 40 with a keyframe every 10 frames (so the
# fragmented files have 5 fragments), to keep the files small.
DUR2=2
VIDEO2=(-f lavfi -i "testsrc=size=160x120:rate=25:duration=$DUR2")
VCODEC2=(-c:v libx264 -preset ultrafast -pix_fmt yuv420p -crf 40 -g 10)
AAC=(-c:a aac -b:a 64k -ac 2)

sine2() { # sine2 FREQUENCY RATE [DURATION]
    echo "sine=frequency=$1:sample_rate=$2:duration=${3:-$DUR2}"
}

# Six sines (FL FR FC LFE BL BR) merged into 5.1 at RATE: the input options and the filter.
six_sines() { # six_sines RATE FIRST_INPUT_INDEX
    local rate=$1 i=$2
    SIX=(-f lavfi -i "$(sine2 220 "$rate")" -f lavfi -i "$(sine2 330 "$rate")"
         -f lavfi -i "$(sine2 440 "$rate")" -f lavfi -i "$(sine2 55 "$rate")"
         -f lavfi -i "$(sine2 550 "$rate")" -f lavfi -i "$(sine2 660 "$rate")")
    SIX_FILTER="[$i:a][$((i+1)):a][$((i+2)):a][$((i+3)):a][$((i+4)):a][$((i+5)):a]amerge=inputs=6,aformat=channel_layouts=5.1[a]"
}

# video + 440 Hz AAC 44.1 kHz stereo, 2 s, with extra output options.
av2() { # av2 OUTPUT [OPTIONS...]
    local out=$1
    shift
    ff "${VIDEO2[@]}" -f lavfi -i "$(sine2 440 44100)" -map 0:v -map 1:a \
        "${VCODEC2[@]}" "${AAC[@]}" "${EXACT[@]}" "$@" "$out"
}

variant() { # variant KIND SOURCE OUTPUT
    python3 Scripts/variants.py "$@"
}

echo "fragmented"
av2 "$FIX/frag-keyframe.mp4" -movflags frag_keyframe+empty_moov
av2 "$FIX/frag-default-base-moof.mp4" -movflags frag_keyframe+empty_moov+default_base_moof
av2 "$FIX/frag-dash.mp4" -movflags +dash
av2 "$FIX/frag-cmaf.mp4" -movflags +cmaf
# Audio only: every AAC packet is a keyframe, so fragment by duration (0.5 s) instead.
ff -f lavfi -i "$(sine2 440 44100)" "${AAC[@]}" "${EXACT[@]}" \
    -movflags empty_moov -frag_duration 500000 -f ipod "$FIX/frag-audio-only.m4a"
if [[ $have_gst -eq 1 ]]; then
    # GStreamer has no AAC or H.264 encoder here: it re-muxes an FFmpeg file (qtdemux).
    av2 "$TMP/gst-source.mp4"
    timeout 120 gst-launch-1.0 -q filesrc location="$TMP/gst-source.mp4" ! qtdemux name=d \
        mp4mux name=m fragment-duration=500 ! filesink location="$TMP/gst.mp4" \
        d.video_0 ! queue ! m.video_0 d.audio_0 ! queue ! m.audio_0 >/dev/null
    # mp4mux writes the wall-clock time into mvhd/tkhd/mdhd: zero it.
    variant zero-times "$TMP/gst.mp4" "$FIX/$GST"
else
    echo "NO_GST set, or gst-launch-1.0 with mp4mux/qtdemux not found (apt-get install gstreamer1.0-tools" \
         "gstreamer1.0-plugins-good gstreamer1.0-plugins-base): keeping the committed $GST"
    [[ -f $FIX/$GST ]] || { echo "error: $FIX/$GST is missing and cannot be made" >&2; exit 1; }
fi

echo "QuickTime and ISO family"
# FFmpeg writes sound description version 1 for AAC in mov; version 0 is a rewrite.
av2 "$TMP/mov-v1.mov" -f mov
variant sound-v0 "$TMP/mov-v1.mov" "$FIX/mov-sound-v0.mov"
# A stray descriptor where the DecoderConfigDescriptor must stand (issue 20, item 5).
variant esds-junk "$FIX/mov-sound-v0.mov" "$FIX/mov-esds-junk.mov"
# A media timescale above 65535 makes FFmpeg write version 2.
ff "${VIDEO2[@]}" -f lavfi -i "$(sine2 440 96000)" -map 0:v -map 1:a \
    "${VCODEC2[@]}" "${AAC[@]}" "${EXACT[@]}" -f mov "$FIX/mov-sound-v2-96k.mov"
six_sines 48000 1
ff "${VIDEO2[@]}" "${SIX[@]}" -filter_complex "$SIX_FILTER" -map 0:v -map "[a]" \
    "${VCODEC2[@]}" -c:a aac -b:a 64k "${EXACT[@]}" -f mov "$FIX/mov-5.1-chan.mov"
av2 "$FIX/mov-timecode.mov" -timecode 01:00:00:00 -f mov
av2 "$FIX/aac-3gp.3gp" -f 3gp
av2 "$FIX/aac-3g2.3g2" -f 3g2
av2 "$FIX/aac-m4v.m4v" -f ipod
# mov_text subtitles and chapters. -map_metadata -1 would drop the chapter titles and with
# them FFmpeg's chapter text track, so metadata comes from the (otherwise empty) chapter file.
printf '1\n00:00:00,000 --> 00:00:01,000\nOne\n\n2\n00:00:01,000 --> 00:00:02,000\nTwo\n' \
    > "$TMP/subtitles.srt"
printf ';FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1000\ntitle=One\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1000\nEND=2000\ntitle=Two\n' \
    > "$TMP/chapters.txt"
ff "${VIDEO2[@]}" -f lavfi -i "$(sine2 440 44100)" -i "$TMP/subtitles.srt" -i "$TMP/chapters.txt" \
    -map 0:v -map 1:a -map 2:s -map_chapters 3 -map_metadata 3 \
    "${VCODEC2[@]}" "${AAC[@]}" -c:s mov_text \
    -fflags +bitexact -flags:v +bitexact -flags:a +bitexact -threads 1 \
    "$FIX/mp4-subtitle-chapters.mp4"
# Box layouts, rewritten from FFmpeg's two layouts.
av2 "$TMP/faststart.mp4" -movflags +faststart
av2 "$TMP/moov-end.mp4"
variant free-skip-wide "$TMP/faststart.mp4" "$FIX/layout-free-skip-wide.mp4"
variant mdat-size-zero "$TMP/faststart.mp4" "$FIX/layout-mdat-size-zero.mp4"
variant mdat-largesize "$TMP/faststart.mp4" "$FIX/layout-mdat-largesize.mp4"
variant trailing-garbage "$TMP/moov-end.mp4" "$FIX/layout-trailing-garbage.mp4"
variant two-mdats "$TMP/faststart.mp4" "$FIX/layout-two-mdats.mp4"

echo "codecs"
ff -f lavfi -i "$(sine2 440 16000)" -c:a alac -ac 1 -sample_fmt s16p "${EXACT[@]}" -f ipod \
    "$FIX/codec-alac.m4a"
ff -f lavfi -i "$(sine2 440 48000)" -c:a ac3 -b:a 64k -ac 2 "${EXACT[@]}" "$FIX/codec-ac3.mp4"
six_sines 48000 0
ff "${SIX[@]}" -filter_complex "$SIX_FILTER" -map "[a]" -c:a ac3 -b:a 96k "${EXACT[@]}" \
    "$FIX/codec-ac3-5.1.mp4"
ff -f lavfi -i "$(sine2 440 48000)" -c:a eac3 -b:a 64k -ac 2 "${EXACT[@]}" "$FIX/codec-eac3.mp4"
ff -f lavfi -i "$(sine2 440 48000)" -c:a libopus -b:a 32k -ac 2 "${EXACT[@]}" "$FIX/codec-opus.mp4"
ff -f lavfi -i "$(sine2 440 16000)" -c:a flac -ac 1 -strict -2 "${EXACT[@]}" "$FIX/codec-flac.mp4"
# MP3 at 44.1 kHz: objectTypeIndication 0x6B (MPEG-1 audio).
ff -f lavfi -i "$(sine2 440 44100)" -c:a libmp3lame -b:a 64k -ac 2 "${EXACT[@]}" "$FIX/codec-mp3.mp4"
# MP2 at 24 kHz: objectTypeIndication 0x69 (MPEG-2 audio, lower sampling rates).
ff -f lavfi -i "$(sine2 440 24000)" -c:a mp2 -b:a 32k -ac 1 "${EXACT[@]}" "$FIX/codec-mp2.mp4"
ff -f lavfi -i "$(sine2 440 44100)" -c:a aac -profile:a aac_main -b:a 48k -ac 2 "${EXACT[@]}" \
    "$FIX/codec-aac-main.mp4"
ff -f lavfi -i "$(sine2 440 44100)" -c:a aac -profile:a aac_ltp -strict -2 -b:a 48k -ac 2 \
    "${EXACT[@]}" "$FIX/codec-aac-ltp.mp4"
# FFmpeg writes objectTypeIndication 0x40 for every AAC profile: the MPEG-2 AAC types are
# rewrites of that byte.
ff -f lavfi -i "$(sine2 440 44100)" -c:a aac -profile:a mpeg2_aac_low -b:a 48k -ac 2 \
    "${EXACT[@]}" "$TMP/mpeg2-lc.mp4"
variant oti-0x67 "$TMP/mpeg2-lc.mp4" "$FIX/codec-aac-mpeg2-lc.mp4"
ff -f lavfi -i "$(sine2 440 44100)" -c:a aac -profile:a aac_main -b:a 48k -ac 2 \
    "${EXACT[@]}" "$TMP/mpeg2-main.mp4"
variant oti-0x66 "$TMP/mpeg2-main.mp4" "$FIX/codec-aac-mpeg2-main.mp4"
# Entries extraction refuses, for remux and mux (issue 20, item 5).
variant oti-0x00 "$FIX/aac-h264-faststart.mp4" "$FIX/codec-mp4a-oti-0.mp4"
variant opus-no-dops "$FIX/codec-opus.mp4" "$FIX/codec-opus-no-dops.mp4"
# HE-AAC v1/v2: FFmpeg cannot encode them. An AAC-LC stream at 22.05 kHz gets the explicit
# SBR (object type 5) or PS (29, mono core) AudioSpecificConfig, then FFmpeg stream-copies
# that file, as any muxer of HE-AAC would write it: timescale 44100, 2048-sample packets.
ff -f lavfi -i "$(sine2 440 22050)" -c:a aac -b:a 32k -ac 2 "${EXACT[@]}" "$TMP/lc-22k-stereo.mp4"
variant he-aac "$TMP/lc-22k-stereo.mp4" "$TMP/he-aac-core.mp4"
ff -i "$TMP/he-aac-core.mp4" -c copy "${EXACT[@]}" -f mp4 "$FIX/codec-he-aac.mp4"
ff -f lavfi -i "$(sine2 440 22050)" -c:a aac -b:a 24k -ac 1 "${EXACT[@]}" "$TMP/lc-22k-mono.mp4"
variant he-aac-v2 "$TMP/lc-22k-mono.mp4" "$TMP/he-aac-v2-core.mp4"
ff -i "$TMP/he-aac-v2-core.mp4" -c copy "${EXACT[@]}" -f mp4 "$FIX/codec-he-aac-v2.mp4"

echo "bad fixtures (second round)"
# PCM: 1 s at 8 kHz mono, audio only.
ff -f lavfi -i "$(sine2 440 8000 1)" -c:a pcm_s24be "${EXACT[@]}" -f mov "$FIX/pcm-in24.mov"
ff -f lavfi -i "$(sine2 440 8000 1)" -c:a pcm_f32be "${EXACT[@]}" -f mov "$FIX/pcm-fl32.mov"
ff -f lavfi -i "$(sine2 440 8000 1)" -c:a pcm_s16be "${EXACT[@]}" -f mov "$FIX/pcm-twos.mov"
variant dref-external "$TMP/faststart.mp4" "$FIX/dref-external.mp4"
variant enca "$TMP/faststart.mp4" "$FIX/enca-renamed.mp4"
variant truncate "$FIX/aac-h264-faststart.mp4" "$FIX/aac-h264-faststart-truncated.mp4"
variant truncate "$FIX/frag-keyframe.mp4" "$FIX/frag-keyframe-truncated.mp4"
variant tracks-in-turn "$FIX/aac-h264-moov-end.mp4" "$TMP/tracks-in-turn.mp4"
variant truncate "$TMP/tracks-in-turn.mp4" "$FIX/tracks-in-turn-truncated.mp4"

echo "metadata, gapless, chapters"
# Cover art: two small images (PNG and JPEG), attached as pictures: FFmpeg's mp4/ipod
# muxer writes attached_pic streams as the images of one moov/udta/meta/ilst/covr item.
ff -f lavfi -i "testsrc=size=96x96:rate=1:duration=1" -frames:v 1 -c:v png "${EXACT[@]}" "$TMP/cover.png"
ff -f lavfi -i "smptebars=size=96x96:rate=1:duration=1" -frames:v 1 -c:v mjpeg "${EXACT[@]}" \
    "$TMP/cover.jpg"
# iTunes tags FFmpeg writes (ilst); tmpo is written but FFmpeg 5.1 does not read it back.
TAGS=(-metadata "title=Fixture Title — ünïcödé" -metadata "artist=Fixture Artist"
      -metadata "album_artist=Fixture Album Artist" -metadata "album=Fixture Album"
      -metadata date=2024 -metadata genre=Electronic -metadata track=3/12 -metadata disc=1/2
      -metadata "composer=Fixture Composer" -metadata "comment=a comment" -metadata "lyrics=la la la"
      -metadata compilation=1 -metadata tmpo=120 -metadata grouping=Fixtures
      -metadata "copyright=(c) 2024 Fixtures" -metadata creation_time=2024-05-01T10:34:56.000000Z)
ff -f lavfi -i "$(sine2 440 44100)" -i "$TMP/cover.png" -i "$TMP/cover.jpg" -map 0:a -map 1:v -map 2:v \
    "${AAC[@]}" -c:v copy -disposition:v attached_pic "${EXACT[@]}" "${TAGS[@]}" -f ipod "$TMP/itunes.m4a"
variant itunes-freeform "$TMP/itunes.m4a" "$FIX/meta-itunes.m4a"
# The same tags and covers with a video track, moov first (+faststart).
ff "${VIDEO2[@]}" -f lavfi -i "$(sine2 440 44100)" -i "$TMP/cover.png" -i "$TMP/cover.jpg" \
    -map 0:v -map 1:a -map 2:v -map 3:v "${VCODEC2[@]}" -c:v:1 copy -c:v:2 copy "${AAC[@]}" \
    -disposition:v:1 attached_pic -disposition:v:2 attached_pic "${EXACT[@]}" "${TAGS[@]}" \
    -movflags +faststart -f mp4 "$TMP/itunes.mp4"
variant itunes-freeform "$TMP/itunes.mp4" "$FIX/meta-itunes-video.mp4"
# iPhone-style keys metadata: FFmpeg writes it as moov/udta/meta (a FullBox); the rewrite
# moves it to moov/meta (a plain container) and adds the QuickTime udta text items.
av2 "$TMP/iphone.mov" -movflags use_metadata_tags \
    -metadata com.apple.quicktime.creationdate=2024-05-01T12:34:56+0200 \
    -metadata com.apple.quicktime.location.ISO6709=+48.8584+002.2945+035.000/ \
    -metadata com.apple.quicktime.make=Apple -metadata "com.apple.quicktime.model=iPhone 15 Pro" \
    -metadata com.apple.quicktime.software=17.4.1 -f mov
variant iphone-keys "$TMP/iphone.mov" "$FIX/meta-iphone.mov"
# An audiobook-like file: 3 s, three chapters (QuickTime chapter track + Nero chpl, both
# from the ffmetadata file), book tags, stik 2 (Audiobook).
printf '%s\n' ';FFMETADATA1' 'title=The Fixture Book' 'artist=A. N. Author' \
    'album_artist=A. N. Author' 'album=The Fixture Book' 'genre=Audiobook' \
    'composer=Read by N. Arrator' 'date=2024' 'media_type=2' \
    '[CHAPTER]' 'TIMEBASE=1/1000' 'START=0' 'END=1000' 'title=Opening Credits' \
    '[CHAPTER]' 'TIMEBASE=1/1000' 'START=1000' 'END=2250' 'title=Chapitre 1 — L’été' \
    '[CHAPTER]' 'TIMEBASE=1/1000' 'START=2250' 'END=3000' 'title=Épilogue' > "$TMP/book.txt"
ff -f lavfi -i "$(sine2 440 44100 3)" -i "$TMP/book.txt" -map 0:a -map_metadata 1 -map_chapters 1 \
    "${AAC[@]}" -fflags +bitexact -flags:a +bitexact -threads 1 -f mp4 "$FIX/meta-chapters-both.mp4"
# Gapless: an iTunSMPB (and iTunNORM) item already there.
ff -f lavfi -i "$(sine2 440 44100)" "${AAC[@]}" "${EXACT[@]}" -metadata "title=Gapless Fixture" \
    -metadata gapless_playback=1 -f ipod "$TMP/gapless.m4a"
variant itunes-gapless "$TMP/gapless.m4a" "$FIX/meta-gapless-itunsmpb.m4a"
# 2112 samples of priming and a trimmed tail in the edit list; no tags at all.
ff -f lavfi -i "$(sine2 440 44100)" "${AAC[@]}" "${EXACT[@]}" -f mp4 "$TMP/lc.mp4"
variant priming-2112 "$TMP/lc.mp4" "$FIX/meta-2112-priming.mp4"

echo "expectations"
# Every good fixture and every truncated one of Scripts/fixtures.list and every metadata
# fixture of Scripts/metadata.list, in parallel (each
# runs ffmpeg and ffprobe; the results do not depend on the order).
expectation_for() { # expectation_for NAME KIND ARGS...
    local name=$1 kind=$2
    shift 2
    case $kind in
        good | meta)
            python3 Scripts/expectations.py write "$FIX/$name" "$FIX/expected/${name%.*}.json" "$@" ;;
        salvage)
            local uncut=$1 options
            options=$(awk -v n="$uncut" '$1 == n && $2 == "good" { $1 = $2 = ""; print }' Scripts/fixtures.list)
            # shellcheck disable=SC2086  # the reference options are words
            python3 Scripts/expectations.py salvage-write "$FIX/$name" "$FIX/$uncut" \
                "$FIX/expected/${name%.*}.json" $options ;;
    esac
}
export -f expectation_for
export FIX
grep -hv '^[[:space:]]*\(#\|$\)' Scripts/fixtures.list Scripts/metadata.list \
    | grep -E '^\S+\s+(good|meta|salvage)\s' \
    | xargs -P "$(nproc)" -L 1 bash -c 'expectation_for "$@"' _

# Packet fixtures (B-frames, negative ctts, a first tfdt other than 0) and the expected
# probe --packets output (ffprobe's), after the fixtures they copy.
python3 Scripts/packets-conformance.py --make-fixtures
python3 Scripts/packets-conformance.py --write

echo "done: $(find "$FIX" -type f ! -name README.md | wc -l) files, $(du -sk "$FIX" | cut -f1) KiB"
