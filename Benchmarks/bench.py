#!/usr/bin/env python3
"""Helpers for Benchmarks/run.sh (standard library only).

  bench.py measure --json OUT [--rm PATH] [--drop-caches] -- CMD ARGS...
      Runs CMD once and records its exit status, wall/user/sys time, peak RSS and the
      bytes it read (see "How peak RSS and bytes read are measured" below).
  bench.py info INPUT --json OUT
      Size, top-level layout (moov offset and size, mdat, moof = fragmented, co64).
  bench.py compare OURS REF --json OUT
      ffprobe -show_packets -show_data_hash CRC32 of the first audio stream of both files,
      read in lockstep; every packet field but `pos` (pts, dts, duration, size, flags,
      side data, CRC-32 of the payload) must agree. Records packet count and audio bytes.
  bench.py meta --bin BIN --json OUT
      Date, machine, ffmpeg/hyperfine versions, git commit of the repository.
  bench.py report --work DIR --inputs NAME... --out RESULTS.md [--mode full|quick]
      Builds the table and the PASS/FAIL list from the JSON files of a run.

How peak RSS and bytes read are measured
  The command runs as a ptrace'd child (PTRACE_TRACEME, then exec). The tracer asks for
  PTRACE_O_TRACEEXIT, so the child stops once more in the kernel's do_exit, *before* its
  address space is torn down: at that stop /proc/PID/status still holds VmHWM, the peak
  resident set of the exec'd program's own address space. (ru_maxrss from wait4 is not
  used for that: the kernel folds the pre-exec RSS of the forking parent -- here the Python
  interpreter, ~10 MB -- into it.) Then the tracer lets the child finish and waits for it
  with waitid(WEXITED | WNOWAIT): the child is a zombie whose /proc/PID/io is still
  readable and final (all its threads have exited and been summed), so rchar (bytes
  returned by read/pread/readv... system calls, page cache hits included) and read_bytes
  (bytes the process caused to be fetched from the block device; 0 when everything is
  cached) are exact. Only then is the zombie reaped with wait4 (user and system time).
  ptrace stops only at exec and exit (no system-call tracing), so it costs nothing
  measurable.
"""

import ctypes
import datetime
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time

PTRACE_TRACEME = 0
PTRACE_CONT = 7
PTRACE_SETOPTIONS = 0x4200
PTRACE_O_TRACEEXIT = 0x40
PTRACE_O_EXITKILL = 0x100000
PTRACE_EVENT_EXIT = 6

MiB = 1024 * 1024


# ------------------------------------------------------------------------- measure

def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    libc.ptrace.restype = ctypes.c_long
    return libc


def _proc_kv(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k.strip()] = v.strip()
    return out


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def measure(cmd, rm=None, drop=False):
    if rm:
        for path in rm:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    if drop:
        drop_caches()
    libc = _libc()
    devnull = os.open(os.devnull, os.O_RDWR)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # child: become traceable, silence, exec
        try:
            if libc.ptrace(PTRACE_TRACEME, 0, None, None) != 0:
                os._exit(126)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    os.close(devnull)
    hwm_kb = None
    stderr_note = None
    # first stop: SIGTRAP after exec
    _, status = os.waitpid(pid, 0)
    if os.WIFSTOPPED(status):
        libc.ptrace(PTRACE_SETOPTIONS, pid, None, ctypes.c_void_p(PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL))
        libc.ptrace(PTRACE_CONT, pid, None, None)
        while True:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WSTOPPED | os.WNOWAIT)
            if info.si_code in (os.CLD_EXITED, os.CLD_KILLED, os.CLD_DUMPED):
                break
            _, status = os.waitpid(pid, os.WUNTRACED)  # consume the stop
            sig = os.WSTOPSIG(status)
            if sig == signal.SIGTRAP and (status >> 16) == PTRACE_EVENT_EXIT:
                st = _proc_kv(f"/proc/{pid}/status")
                if "VmHWM" in st:
                    hwm_kb = int(st["VmHWM"].split()[0])
                libc.ptrace(PTRACE_CONT, pid, None, None)
            else:  # pass any other signal on to the child
                libc.ptrace(PTRACE_CONT, pid, None, ctypes.c_void_p(0 if sig == signal.SIGTRAP else sig))
    else:  # already reaped by waitpid: exec failed (status 127) or ptrace refused (126)
        return {"cmd": cmd, "exit": os.waitstatus_to_exitcode(status), "wall_s": time.perf_counter() - t0,
                "peak_rss_kib": None, "rchar": None, "read_bytes": None, "cold": drop,
                "note": "the command could not be started under ptrace"}
    # the child is a zombie now (WNOWAIT): its io counters are final and still readable
    io = {}
    try:
        io = {k: int(v) for k, v in _proc_kv(f"/proc/{pid}/io").items()}
    except OSError as e:
        stderr_note = f"/proc/{pid}/io: {e}"
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    return {
        "cmd": cmd,
        "exit": os.waitstatus_to_exitcode(status),
        "wall_s": wall,
        "user_s": ru.ru_utime,
        "sys_s": ru.ru_stime,
        "peak_rss_kib": hwm_kb,
        "ru_maxrss_kib": ru.ru_maxrss,
        "rchar": io.get("rchar"),
        "read_bytes": io.get("read_bytes"),
        "syscr": io.get("syscr"),
        "wchar": io.get("wchar"),
        "cold": drop,
        "note": stderr_note,
    }


# ------------------------------------------------------------------------- info

CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf", b"mvex"}


def _boxes(f, start, end):
    pos = start
    while pos + 8 <= end:
        f.seek(pos)
        hdr = f.read(16)
        size, kind = struct.unpack(">I4s", hdr[:8])
        hlen = 8
        if size == 1:
            size = struct.unpack(">Q", hdr[8:16])[0]
            hlen = 16
        elif size == 0:
            size = end - pos
        if size < hlen:
            break
        yield kind, pos, size, hlen
        pos += size


def info(path):
    size = os.path.getsize(path)
    out = {"size": size, "moov_offset": None, "moov_size": 0, "fragmented": False,
           "co64": False, "top": []}
    with open(path, "rb") as f:
        for kind, pos, bsize, hlen in _boxes(f, 0, size):
            k = kind.decode("latin-1")
            if len(out["top"]) < 12:
                out["top"].append([k, pos, bsize])
            if kind == b"moov":
                out["moov_offset"], out["moov_size"] = pos, bsize
                stack = [(pos + hlen, pos + bsize)]
                while stack:
                    s, e = stack.pop()
                    for ck, cpos, csize, chlen in _boxes(f, s, e):
                        if ck == b"co64":
                            out["co64"] = True
                        if ck in CONTAINERS:
                            stack.append((cpos + chlen, cpos + csize))
            elif kind == b"moof":
                out["fragmented"] = True
    return out


# ------------------------------------------------------------------------- compare

def _packets(path):
    """Yields one packet at a time as a tuple of 'key=value' lines, without pos."""
    p = subprocess.Popen(
        ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_packets",
         "-show_data_hash", "CRC32", path],
        stdout=subprocess.PIPE, text=True, bufsize=1 << 20)
    cur = None
    for line in p.stdout:
        line = line.rstrip("\n")
        if line == "[PACKET]":
            cur = []
        elif line == "[/PACKET]":
            yield tuple(cur)
            cur = None
        elif cur is not None and not line.startswith("pos="):
            cur.append(line)
    if p.wait() != 0:
        raise RuntimeError(f"ffprobe failed on {path}")


def _size(pkt):
    for line in pkt:
        if line.startswith("size="):
            return int(line[5:])
    return 0


def compare(ours, ref):
    res = {"identical": False, "packets": 0, "audio_bytes": 0, "ref_packets": 0,
           "ref_audio_bytes": 0, "differing_packets": 0, "first_difference": None}
    if ours == "-":  # ffmpeg's output alone (ours failed): count its packets and bytes
        for pb in _packets(ref):
            res["ref_packets"] += 1
            res["ref_audio_bytes"] += _size(pb)
        res["identical"] = None
        return res
    a, b = _packets(ours), _packets(ref)
    sentinel = object()
    while True:
        pa, pb = next(a, sentinel), next(b, sentinel)
        if pa is sentinel and pb is sentinel:
            break
        if pa is not sentinel:
            res["packets"] += 1
            res["audio_bytes"] += _size(pa)
        if pb is not sentinel:
            res["ref_packets"] += 1
            res["ref_audio_bytes"] += _size(pb)
        if pa != pb:
            res["differing_packets"] += 1
        if res["first_difference"] is None and pa != pb:
            res["first_difference"] = {
                "index": max(res["packets"], res["ref_packets"]) - 1,
                "ours": None if pa is sentinel else list(pa),
                "ffmpeg": None if pb is sentinel else list(pb)}
    res["identical"] = res["first_difference"] is None and res["packets"] > 0
    return res


# ------------------------------------------------------------------------- meta

def _run(cmd, cwd=None):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def meta(binary, root, source=None):
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = _proc_kv("/proc/meminfo").get("MemTotal", "0 kB")
    commit = _run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root)
    dirty = _run(["git", "status", "--porcelain", "--untracked-files=no", "--", "Sources", "Package.swift"], cwd=root)
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "mem_gib": round(int(mem.split()[0]) / MiB, 1),
        "kernel": platform.release(),
        "ffmpeg": (_run(["ffmpeg", "-version"]) or "?").splitlines()[0],
        "hyperfine": _run(["hyperfine", "--version"]),
        "ours": _run([binary, "--version"]),
        "ours_sha256": hashlib.sha256(open(binary, "rb").read()).hexdigest()[:16],
        "ours_built": datetime.datetime.fromtimestamp(os.path.getmtime(source or binary),
                                                      datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "ours_path": source or binary,
        "commit": commit,
        "dirty": bool(dirty),
        "load": open("/proc/loadavg").read().split()[:3],
    }


# ------------------------------------------------------------------------- report

def _load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _hf(path):
    """{'ours': {'min':..,'median':..,'runs':..}, 'ffmpeg': ...} from a hyperfine export."""
    data = _load(path)
    if not data:
        return None
    out = {}
    for r in data["results"]:
        times = r["times"]
        out[r["command"]] = {"min": min(times), "median": statistics.median(times),
                             "runs": len(times), "codes": sorted(set(r.get("exit_codes") or [0]))}
    return out


def _fmt_s(s):
    if s is None:
        return "–"
    if s < 0.1:
        return f"{s * 1000:.1f} ms"
    return f"{s:.3f} s" if s < 10 else f"{s:.2f} s"


def _fmt_b(n):
    if n is None:
        return "–"
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:.2f} {unit}" if n < 10 * div else f"{n / div:.1f} {unit}"
    return f"{n} B"


def _ratio(a, b):
    return None if not a or not b else a / b


# title, input name, kind, threshold
TARGETS = [
    ("warm ≥ 6× faster than ffmpeg on the 2 GB file", "1h-720p", "warm", 6),
    ("warm ≥ 8× faster on the 300 MB file", "1h-360p", "warm", 8),
    ("warm ≥ 15× faster on the 10-hour-audio file", "10h-audio", "warm", 15),
    ("warm ≥ 20× faster on the 10 s clip", "clip-10s-720p", "warm", 20),
    ("cold ≥ 2× faster on the 300 MB file", "1h-360p", "cold", 2),
    ("peak RSS ≤ 16 MiB on the 2 GB file", "1h-720p", "rss", 16),
    ("peak RSS ≤ 40 MiB on the 10-hour file", "10h-audio", "rss", 40),
]

INPUT_LABEL = {
    "clip-10s-720p": "10 s 720p clip (faststart)",
    "1h-360p": "1 h 360p",
    "1h-720p": "1 h 720p",
    "10h-audio": "10 h AAC + tiny video",
    "1h-360p-frag": "1 h 360p, fragmented",
    "2.5h-720p-co64": "2.5 h 720p, > 4 GiB (co64)",
}


def report(work, names, out_path, mode):
    J = lambda *p: os.path.join(work, "json", *p)
    m = _load(J("meta.json")) or {}
    rows = {}
    for n in names:
        r = {"name": n, "info": _load(J(f"{n}.info.json")) or {},
             "status": _load(J(f"{n}.status.json")) or {},
             "verify": _load(J(f"{n}.verify.json")),
             "warm": _hf(J(f"{n}.warm.json")), "cold": _hf(J(f"{n}.cold.json"))}
        for tool in ("ours", "ffmpeg"):
            for c in ("warm", "cold"):
                r[f"m_{tool}_{c}"] = _load(J(f"{n}.measure-{tool}-{c}.json"))
        rows[n] = r

    L = []
    P = L.append
    P("# Benchmark results" + {"quick": " (quick mode)", "partial": " (partial run)"}.get(mode, ""))
    P("")
    P("Produced by `Benchmarks/run.sh`" + {"quick": " --quick", "partial": " --only …"}.get(mode, "") +
      "; see `Benchmarks/README.md` for the inputs, the commands and how each number is measured.")
    P("")
    P(f"- date: {m.get('date', '?')}")
    P(f"- machine: {m.get('nproc', '?')} × {m.get('cpu', '?')}, {m.get('mem_gib', '?')} GiB RAM, "
      f"Linux {m.get('kernel', '?')}; load average at start {' '.join(m.get('load', []))}")
    P(f"- ffmpeg: {m.get('ffmpeg', '?')}; {m.get('hyperfine', '?')}")
    P(f"- extract-audio: {m.get('ours', '?')}, commit {m.get('commit', '?')}"
      + (" + uncommitted changes in Sources/" if m.get("dirty") else "")
      + (f"; binary `{m.get('ours_path')}` built {m.get('ours_built')}, sha256 {m.get('ours_sha256')}…"
         if m.get("ours_sha256") else ""))
    P("- ours: `extract-audio IN OUT.m4a`; ffmpeg: `ffmpeg -nostdin -v error -y -i IN -map 0:a:0 -vn -c:a copy -f ipod OUT.m4a`")
    cold_any = any(r["cold"] for r in rows.values())
    P(f"- cold cache: {'yes (sync; echo 3 > /proc/sys/vm/drop_caches before every run)' if cold_any else 'not measured (drop_caches not writable, or --no-cold)'}")
    P("")

    # --- main table
    P("## Wall time (hyperfine)")
    P("")
    P("| input | size | audio bytes | same packets | ours warm min / median | ffmpeg warm min / median | warm ×ffmpeg | ours MB/s | ours cold median | ffmpeg cold median | cold ×ffmpeg |")
    P("|---|---:|---:|:---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, r in rows.items():
        size = r["info"].get("size")
        v = r["verify"]
        st = r["status"]
        unsupported = st.get("ours_exit") == 69
        failed = st.get("ours_exit") not in (None, 0, 69)
        same = ("unsupported" if unsupported else f"FAIL (exit {st.get('ours_exit')})" if failed
                else "–" if not v else "yes" if v["identical"] else
                f"**NO** ({v.get('differing_packets', '?')} of {v['ref_packets']:,} packets differ)")
        ab = v["ref_audio_bytes"] if v else None
        w, c = r["warm"] or {}, r["cold"] or {}
        ow, fw, oc, fc = w.get("ours"), w.get("ffmpeg"), c.get("ours"), c.get("ffmpeg")
        def mm(x):
            return "–" if not x else f"{_fmt_s(x['min'])} / {_fmt_s(x['median'])}"
        if unsupported or failed:
            ours_w, ratio_w, mbps, ours_c, ratio_c = "unsupported" if unsupported else "failed", "–", "–", "–", "–"
        else:
            ours_w = mm(ow)
            rw = _ratio(fw and fw["median"], ow and ow["median"])
            ratio_w = f"{rw:.1f}×" if rw else "–"
            mbps = f"{size / 1e6 / ow['median']:,.0f}" if ow and size else "–"
            ours_c = _fmt_s(oc["median"]) if oc else "–"
            rc = _ratio(fc and fc["median"], oc and oc["median"])
            ratio_c = f"{rc:.1f}×" if rc else "–"
        P(f"| {INPUT_LABEL.get(n, n)} | {_fmt_b(size)} | {_fmt_b(ab)} | {same} | {ours_w} | {mm(fw)} | {ratio_w} | {mbps} | {ours_c} | {_fmt_s(fc['median']) if fc else '–'} | {ratio_c} |")
    P("")
    P("×ffmpeg = ffmpeg median / ours median (higher is better). MB/s = input size (10^6 bytes) / ours warm median.")
    P("")

    # --- against the floor (issue 15): ideal_extract -s, pread and mmap, in the same warm runs
    P("## Against the floor (warm medians, `ideal_extract -s`)")
    P("")
    P("| input | ours | floor pread | floor mmap | ours / best floor | target ≤ 1.25× |")
    P("|---|---:|---:|---:|---:|:---:|")
    for n, r in rows.items():
        w = r["warm"] or {}
        ow, fp, fm = w.get("ours"), w.get("floor-pread"), w.get("floor-mmap")
        floors = [x["median"] for x in (fp, fm) if x]
        if not ow or not floors:
            P(f"| {INPUT_LABEL.get(n, n)} | {_fmt_s(ow['median']) if ow else '–'} | "
              + ("floor absent | floor absent | – | – |" if not floors else "– | – | – | – |"))
            continue
        x = ow["median"] / min(floors)
        P(f"| {INPUT_LABEL.get(n, n)} | {_fmt_s(ow['median'])} | {_fmt_s(fp['median']) if fp else '–'} | "
          f"{_fmt_s(fm['median']) if fm else '–'} | {x:.2f}× | {'PASS' if x <= 1.25 else '**FAIL**'} |")
    P("")
    P("The floor is `../shared/bench/ideal_extract.c` built with `cc -O2`: it parses the tables, copies the audio "
      "ranges and fsyncs the output (`-s`), as ours does, with no boxes and no checks.")
    P("")

    # --- resources table
    base = {f"{t}_{c}": _load(J(f"baseline-{t}-{c}.json")) for t in ("ours", "ffmpeg") for c in ("warm", "cold")}
    start_rchar = {t: (base[f"{t}_warm"] or {}).get("rchar") or 0 for t in ("ours", "ffmpeg")}

    def input_read(d, tool):
        return None if not d or d.get("rchar") is None else max(0, d["rchar"] - start_rchar[tool])

    mmap_note = []
    P("## Bytes read and peak memory (one run each, `bench.py measure`)")
    P("")
    P("| input | moov | audio + moov | ours: input bytes read | ÷ (audio + moov) | ours: read_bytes cold | ours: peak RSS | ffmpeg: input bytes read | ffmpeg: read_bytes cold | ffmpeg: peak RSS |")
    P("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, r in rows.items():
        inf, v = r["info"], r["verify"]
        moov = inf.get("moov_size")
        ab = v["ref_audio_bytes"] if v else None
        need = (ab or 0) + (moov or 0) if ab else None
        ow, oc, fw, fc = r["m_ours_warm"], r["m_ours_cold"], r["m_ffmpeg_warm"], r["m_ffmpeg_cold"]
        unsupported = r["status"].get("ours_exit") == 69
        g = lambda d, k: d.get(k) if d else None
        rss = lambda d: _fmt_b(d["peak_rss_kib"] * 1024) if d and d.get("peak_rss_kib") else "–"
        ours_in = input_read(ow, "ours")
        ratio = _ratio(ours_in, need)
        if ours_in is not None and ab and ours_in < 0.9 * ab and not unsupported:
            mmap_note.append(INPUT_LABEL.get(n, n))
        frag = " + moofs" if inf.get("fragmented") else ""
        P(f"| {INPUT_LABEL.get(n, n)} | {_fmt_b(moov)}{frag} | {_fmt_b(need)} | "
          f"{'unsupported' if unsupported else _fmt_b(ours_in)} | {f'{ratio:.3f}' if ratio and not unsupported else '–'} | "
          f"{_fmt_b(g(oc, 'read_bytes'))} | {rss(ow)} | {_fmt_b(input_read(fw, 'ffmpeg'))} | {_fmt_b(g(fc, 'read_bytes'))} | {rss(fw)} |")
    P("")
    r10 = rows.get("10h-audio")
    if r10 and r10["m_ours_warm"] and r10["verify"] and r10["status"].get("ours_exit") == 0:
        rss_b = r10["m_ours_warm"]["peak_rss_kib"] * 1024
        base_rss = (base["ours_warm"] or {}).get("peak_rss_kib")
        pk = r10["verify"]["ref_packets"]
        line = f"10-hour file: {pk:,} audio samples; ours peak RSS {_fmt_b(rss_b)} = {rss_b / pk:.1f} bytes per audio sample"
        if base_rss:
            line += (f", or {(rss_b - base_rss * 1024) / pk:.1f} bytes per sample above the {_fmt_b(base_rss * 1024)} "
                     f"that `extract-audio --version` needs (runtime and libraries)")
        P(line + ".")
        P("")
    P("- input bytes read: `rchar` of `/proc/PID/io` (bytes returned by read, pread, copy_file_range… "
      "system calls, page-cache hits included) in a warm run, minus the program's start-up reads "
      f"(rchar of `extract-audio --version`: {_fmt_b(start_rchar['ours'])}; of `ffmpeg -version`: {_fmt_b(start_rchar['ffmpeg'])}).")
    cold_note = ", ".join(f"{t}: {_fmt_b(base[f'{t}_cold']['read_bytes'])}" for t in ("ours", "ffmpeg") if base[f"{t}_cold"])
    P("- read_bytes cold: bytes the process made the kernel fetch from the block device in a run right after "
      "`drop_caches`: the input, with kernel readahead, plus the program's own executable and libraries"
      + (f" (start-up alone, `--version`/`-version` cold: {cold_note})" if cold_note else "") + ".")
    P("- peak RSS: VmHWM of the process, read at its exit (ptrace exit stop).")
    if mmap_note:
        P("- **warning**: ours read fewer bytes than the audio itself on " + ", ".join(mmap_note) +
          ": the input is probably memory-mapped, and rchar does not count bytes read through a "
          "mapping; judge the bytes-read target by the cold read_bytes instead.")
    P("")

    # --- targets
    P("## Targets")
    P("")
    results = []

    def target(title, ok, detail):
        results.append((title, ok, detail))

    for title, n, kind, thr in TARGETS:
        r = rows.get(n)
        if not r:
            target(title, None, "input not in this run")
            continue
        if r["status"].get("ours_exit") not in (0, None):
            target(title, False, f"extract-audio exited {r['status'].get('ours_exit')}")
            continue
        if kind in ("warm", "cold"):
            t = r[kind]
            if not t or "ours" not in t or "ffmpeg" not in t:
                target(title, None, f"no {kind} measurement")
                continue
            x = t["ffmpeg"]["median"] / t["ours"]["median"]
            target(title, x >= thr, f"{x:.1f}× ({_fmt_s(t['ours']['median'])} vs {_fmt_s(t['ffmpeg']['median'])})")
        else:
            d = r["m_ours_warm"]
            if not d or not d.get("peak_rss_kib"):
                target(title, None, "not measured")
                continue
            mib = d["peak_rss_kib"] / 1024
            target(title, mib <= thr, f"{mib:.1f} MiB")
    # cold never slower
    colds = [(n, r) for n, r in rows.items() if r["cold"] and "ours" in r["cold"] and "ffmpeg" in r["cold"]
             and r["status"].get("ours_exit") == 0]
    if colds:
        worst = min(colds, key=lambda nr: nr[1]["cold"]["ffmpeg"]["median"] / nr[1]["cold"]["ours"]["median"])
        x = worst[1]["cold"]["ffmpeg"]["median"] / worst[1]["cold"]["ours"]["median"]
        target("cold never slower than ffmpeg", x >= 1.0, f"worst {x:.1f}× on {INPUT_LABEL.get(worst[0], worst[0])}")
    else:
        target("cold never slower than ffmpeg", None, "no cold measurements")
    # bytes read
    worst = None
    for n, r in rows.items():
        inf, v, d = r["info"], r["verify"], r["m_ours_warm"]
        if inf.get("fragmented") or not v or not d or r["status"].get("ours_exit") != 0:
            continue
        x = input_read(d, "ours") / (v["ref_audio_bytes"] + inf["moov_size"])
        if worst is None or x > worst[1]:
            worst = (n, x)
    if worst:
        target("bytes read ≤ 1.1 × (audio + moov) on non-fragmented inputs", worst[1] <= 1.1,
               f"worst {worst[1]:.3f}× on {INPUT_LABEL.get(worst[0], worst[0])}")
    # identical packets
    bad = [n for n, r in rows.items() if r["status"].get("ours_exit") == 0 and not (r["verify"] or {}).get("identical")]
    target("identical audio packets to ffmpeg on every supported input", not bad,
           "all identical" if not bad else "differs: " + ", ".join(bad))

    P("| target | result | measured |")
    P("|---|:---:|---|")
    for title, ok, detail in results:
        P(f"| {title} | {'PASS' if ok else 'n/a' if ok is None else '**FAIL**'} | {detail} |")
    P("")
    unsup = [n for n, r in rows.items() if r["status"].get("ours_exit") == 69]
    if unsup:
        P("Unsupported by this version (exit status 69), reported as such and left out of the targets: "
          + ", ".join(INPUT_LABEL.get(n, n) for n in unsup) + ".")
        P("")
    diffs = [(n, r["verify"]["first_difference"]) for n, r in rows.items()
             if r["verify"] and r["verify"].get("first_difference")]
    for n, d in diffs:
        P(f"First packet difference on {n} (packet {d['index']}): ours `{d['ours']}` vs ffmpeg `{d['ffmpeg']}`")
        P("")
    text = "\n".join(L)
    with open(out_path, "w") as f:
        f.write(text)
    return text, results


# ------------------------------------------------------------------------- main

def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 64
    cmd = argv[1]
    args = argv[2:]

    def opt(name, default=None):
        if name in args:
            i = args.index(name)
            v = args[i + 1]
            del args[i:i + 2]
            return v
        return default

    def flag(name):
        if name in args:
            args.remove(name)
            return True
        return False

    def dump(obj, path):
        with open(path, "w") as f:
            json.dump(obj, f, indent=1)

    if cmd == "measure":
        out = opt("--json")
        rms = []
        while "--rm" in args:
            rms.append(opt("--rm"))
        drop = flag("--drop-caches")
        if args and args[0] == "--":
            args = args[1:]
        res = measure(args, rm=rms, drop=drop)
        dump(res, out)
        print(f"exit {res['exit']}, {res['wall_s']:.3f} s, peak RSS {res['peak_rss_kib']} KiB, "
              f"rchar {res['rchar']}, read_bytes {res['read_bytes']}", file=sys.stderr)
        return 0
    if cmd == "info":
        out = opt("--json")
        dump(info(args[0]), out)
        return 0
    if cmd == "compare":
        out = opt("--json")
        res = compare(args[0], args[1])
        dump(res, out)
        return 0 if res["identical"] is not False else 1
    if cmd == "meta":
        out, binary, root, source = opt("--json"), opt("--bin"), opt("--root", "."), opt("--bin-source")
        dump(meta(binary, root, source), out)
        return 0
    if cmd == "report":
        work, out, mode = opt("--work"), opt("--out"), opt("--mode", "full")  # full, quick, partial
        names = args[args.index("--inputs") + 1:] if "--inputs" in args else []
        text, results = report(work, names, out, mode)
        print(text)
        return 0
    print(__doc__)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv))
