import ISOBMFF

/// Writing a package's files: each track's init and media segments (or one file of them),
/// their byte layout and `sidx`, the playlists' names, published into the output folder.
extension Packager {
    /// What one media segment holds, found as it is streamed or measured.
    struct SegmentFacts: Equatable {
        var decodeTime: UInt64 = 0
        var duration: UInt64 = 0
        var sampleBytes: UInt64 = 0
        /// The earliest presentation time of its samples (for a `sidx`).
        var earliestPresentation: Int64 = 0
        var startsWithSync = false
        /// Its size: `styp` + `moof` + `mdat`.
        var size: UInt64 = 0
        /// From its start to the end of its first sample: `styp`, `moof`, the `mdat` header
        /// and the key frame (an I-frame playlist's range).
        var keyFrameEnd: UInt64 = 0
        var samples = 0
        var firstSampleSize: UInt64 = 0

        /// Counts `sample`, the next of the segment, its composition offset shifted.
        mutating func add(_ sample: Sample) {
            if samples == 0 {
                decodeTime = sample.decodeTime
                startsWithSync = sample.isSync
                earliestPresentation = sample.presentationTime
                firstSampleSize = UInt64(sample.size)
            }
            samples += 1
            earliestPresentation = min(earliestPresentation, sample.presentationTime)
            duration &+= UInt64(sample.duration)  // A track's ticks: < 2^64, checked by the writer.
            sampleBytes &+= UInt64(sample.size)
        }
    }

    /// Where streamed bytes go: a file being written, or nowhere (a first pass that only
    /// measures, or ``SegmentSource`` recording the segment as ``parts``). Counts the bytes
    /// and remembers the size of each `write` (`styp`, then the fragment's `moof` and `mdat`
    /// header).
    struct PackageSink: MovieSink {
        var file: MovieFileSink?
        var count: UInt64 = 0
        var writes: [UInt64] = []
        /// When not nil, what was performed: written bytes and copied ranges of the input,
        /// adjacent ones joined.
        var parts: [SegmentPart]?

        mutating func perform(_ operation: MuxOperation) throws {
            if case .write(let bytes) = operation { writes.append(UInt64(bytes.count)) }
            if parts != nil { record(operation) }
            try file?.perform(operation)
            count &+= operation.byteCount
        }

        mutating func record(_ operation: MuxOperation) {
            guard var list = parts else { return }
            parts = nil  // Not copied on append.
            switch (operation, list.last) {
            case (.write(let bytes), .bytes(var last)?):
                list.removeLast()
                last.append(contentsOf: bytes)
                list.append(.bytes(last))
            case (.write(let bytes), _):
                list.append(.bytes(Array(bytes)))
            case let (.copy(_, offset, count), .range(start, length)?) where start &+ length == offset:
                list[list.count - 1] = .range(offset: start, count: length &+ count)
            case let (.copy(_, offset, count), _):
                list.append(.range(offset: offset, count: count))
            }
            parts = list
        }
    }

    /// The writer of one track's segments, its track number in it, set to start at the
    /// track's first decode time.
    static func segmentWriter(_ prepared: PreparedTrack, movieTimescale: UInt32) throws -> (MovieWriter, UInt32) {
        var writer = MovieWriter(movieTimescale: movieTimescale)
        writer.fileType = FileTypeBox(majorBrand: "iso6", minorVersion: 0,
                                      compatibleBrands: ["iso6", "cmfc", "dash", "msdh", "msix"])
        let track = try writer.addTrack(prepared.description)
        try writer.setEdits(prepared.edits, for: track)
        // Every packaged track has samples (prepare leaves out the others).
        if prepared.samples.count > 0 { try writer.setFirstDecodeTime(prepared.samples.firstDecodeTime, for: track) }
        return (writer, track)
    }

    /// Streams the init segment of `prepared` into `initSink()`'s sink and each media segment
    /// (`styp` + `moof` + `mdat`) into `segmentSink(k)`'s, calling back after each: the one
    /// loop behind separate files, a single file, the single file's measuring pass and
    /// ``SegmentSource``'s plan, so that all hold the same bytes.
    /// `segmentStarted` is given the cursor at each segment's first sample (``SegmentSource``
    /// keeps them to resume there).
    static func streamTrack(_ prepared: PreparedTrack, source: InputFile, movieTimescale: UInt32,
                            isCancelled: () -> Bool,
                            initSink: () throws -> PackageSink, initFinished: (PackageSink) throws -> Void,
                            segmentSink: (Int) throws -> PackageSink,
                            segmentStarted: (Int, PackageCursor) -> Void = { _, _ in },
                            segmentFinished: (Int, PackageSink, SegmentFacts) throws -> Void) throws {
        var (writer, track) = try segmentWriter(prepared, movieTimescale: movieTimescale)
        var head = try initSink()
        try writer.writeFragment(into: &head)  // No samples yet: the init segment alone.
        try initFinished(head)
        var iterator = try prepared.samples.cursor(from: 0, source: source)
        for (number, range) in prepared.segments.enumerated() {
            if isCancelled() { throw RemuxError.cancelled }
            segmentStarted(number, iterator)
            var sink = try segmentSink(number)
            let facts = try writeSegment(range.count, of: prepared, from: &iterator, writer: &writer, track: track,
                                         into: &sink)
            try segmentFinished(number, sink, facts)
        }
    }

    /// Appends the next `count` samples of `iterator` to `writer` and streams them as one
    /// media segment (`styp` + `moof` + `mdat`) into `sink`: every segment the package and
    /// ``SegmentSource`` give is made here.
    static func writeSegment(_ count: Int, of prepared: PreparedTrack, from iterator: inout PackageCursor,
                             writer: inout MovieWriter, track: UInt32, into sink: inout PackageSink) throws
        -> SegmentFacts {
        var facts = SegmentFacts()
        for _ in 0..<count {
            guard var sample = try iterator.next() else { break }
            sample.compositionOffset &+= prepared.compositionShift  // |offset| < 2^32 each.
            facts.add(sample)
            try writer.append(sample, from: 0, to: track)
        }
        sink.writes = []
        let start = sink.count
        try sink.perform(.write(segmentType[...]))
        try writer.writeFragment(into: &sink)
        facts.size = sink.count - start
        if sink.writes.count >= 3 {
            facts.keyFrameEnd = sink.writes[0] + sink.writes[1] + sink.writes[2] + facts.firstSampleSize
        }
        return facts
    }

    /// The size of the init segment of `prepared` and the facts of each media segment as
    /// ``streamTrack`` writes them, from one walk over its samples without building a
    /// segment: each `moof` and `mdat` header sized by the writer's own rule
    /// (`MovieWriter.FragmentSizer`), a few comparisons per sample (what ``SegmentSource``
    /// and a single file's `sidx` need). `segmentStarted` is given the cursor at each
    /// segment's first sample.
    static func measureTrack(_ prepared: PreparedTrack, source: InputFile, movieTimescale: UInt32,
                             isCancelled: () -> Bool, segmentStarted: (Int, PackageCursor) -> Void = { _, _ in })
        throws -> (initSize: UInt64, segments: [SegmentFacts]) {
        var (writer, _) = try segmentWriter(prepared, movieTimescale: movieTimescale)
        var head = PackageSink()
        try writer.writeFragment(into: &head)  // No samples yet: the init segment alone.
        var segments: [SegmentFacts] = []
        segments.reserveCapacity(prepared.segments.count)
        // The writer's tfdt: from the first decode time, plus each segment's ticks (saturating as the writer does).
        var decodeTime = prepared.samples.firstDecodeTime
        var iterator = try prepared.samples.cursor(from: 0, source: source)
        for (number, range) in prepared.segments.enumerated() {
            if isCancelled() { throw RemuxError.cancelled }
            segmentStarted(number, iterator)
            var facts = SegmentFacts()
            var fragment = MovieWriter.FragmentSizer(decodeTime: decodeTime)
            for _ in 0..<range.count {
                guard var sample = try iterator.next() else { break }
                sample.compositionOffset &+= prepared.compositionShift  // |offset| < 2^32 each.
                facts.add(sample)
                fragment.add(sample)
            }
            let sizes = fragment.sizes
            let head = UInt64(segmentType.count) + sizes.movieFragment + sizes.mediaDataHeader  // A few KiB.
            facts.size = head + sizes.payload
            if sizes.movieFragment > 0 { facts.keyFrameEnd = head + facts.firstSampleSize }
            let (next, overflow) = decodeTime.addingReportingOverflow(facts.duration)
            decodeTime = overflow ? .max : next
            segments.append(facts)
        }
        return (head.count, segments)
    }

    /// Writes the init segment and the media segments of one track, as files of their own or
    /// (`singleFile`) one file `trackN.mp4`: its init segment, a `sidx` indexing every segment
    /// (ISO/IEC 14496-12 § 8.16.3), then the segments, the same bytes as separate files; a
    /// first pass measures them. Returns the track's manifest entry.
    static func writeSegments(of prepared: PreparedTrack, reader: MovieReader<InputFile>, input: InputFile,
                              folder: OutputDirectory, iFrames: Bool, singleFile: Bool, written: inout Written,
                              progress: ((RemuxProgress) -> Void)?, isCancelled: @escaping () -> Bool) throws
        -> StreamTrack {
        let id = prepared.track.id
        let movieTimescale = prepared.edits == nil ? reader.movie.header.timescale : prepared.editTimescale
        var done = written
        func report(_ facts: SegmentFacts) {
            done.sampleBytes &+= facts.sampleBytes
            progress?(RemuxProgress(bytesDone: done.sampleBytes, bytesTotal: done.total))
        }
        var initSize: UInt64 = 0
        var measured: [SegmentFacts] = []
        let result: (stream: StreamTrack, index: [UInt8])
        if !singleFile {
            try streamTrack(prepared, source: input, movieTimescale: movieTimescale, isCancelled: isCancelled,
                            initSink: {
                PackageSink(file: try MovieFileSink(destination: folder.path(of: prepared.stream.initURI),
                                                    overwrite: false, sources: [input]))
            }, initFinished: { sink in
                initSize = sink.count
                try publish(sink, in: folder, &done)
            }, segmentSink: { number in
                PackageSink(file: try MovieFileSink(destination: folder.path(of: segmentName(id, number)),
                                                    overwrite: false, sources: [input]))
            }, segmentFinished: { _, sink, facts in
                try publish(sink, in: folder, &done)
                measured.append(facts)
                report(facts)
            })
            result = try layout(prepared, initSize: initSize, segments: measured, singleFile: false, iFrames: iFrames)
        } else {
            // First pass: sizes only, computed, nothing built (checked against the writer's below).
            (initSize, measured) = try measureTrack(prepared, source: input, movieTimescale: movieTimescale,
                                                    isCancelled: isCancelled)
            result = try layout(prepared, initSize: initSize, segments: measured, singleFile: true, iFrames: iFrames)
            let file = try MovieFileSink(destination: folder.path(of: result.stream.initURI), overwrite: false,
                                         sources: [input])
            var total: UInt64 = 0
            try streamTrack(prepared, source: input, movieTimescale: movieTimescale, isCancelled: isCancelled,
                            initSink: { PackageSink(file: file) }, initFinished: { sink in
                                var sink = sink
                                try sink.perform(.write(result.index[...]))
                                total = sink.count
                            }, segmentSink: { _ in PackageSink(file: file) },
                            segmentFinished: { number, _, facts in
                                guard number < measured.count, measured[number] == facts else {
                                    throw RemuxError(.ioError, "track \(id): segment \(number + 1) came out "
                                                     + "differently on the second pass")
                                }
                                total += facts.size
                                report(facts)
                            })
            try file.publish(syncing: folder.syncsEachFile)
            done.bytes &+= total
            done.files += 1
        }
        written = done
        return result.stream
    }

    /// The name of media segment `number` (0-based) of track `id` in the default layout.
    static func segmentName(_ id: UInt32, _ number: Int) -> String {
        "track\(id)_\(number + 1).m4s"
    }

    /// The manifest entry of `prepared` from what its init segment (`initSize` bytes) and
    /// media segments hold, measured or written: a file per segment, or (`singleFile`) one
    /// file `trackN.mp4` holding the init segment, the returned `sidx` and the segments, each
    /// addressed by its byte range; with `iFrames`, a video track's key-frame ranges and
    /// I-frame playlist. The one layout rule of the package and of ``SegmentSource``.
    static func layout(_ prepared: PreparedTrack, initSize: UInt64, segments: [SegmentFacts], singleFile: Bool,
                       iFrames: Bool) throws -> (stream: StreamTrack, index: [UInt8]) {
        var stream = prepared.stream
        let id = prepared.track.id
        var keyFrames: [Range<UInt64>] = []
        var index: [UInt8] = []
        if singleFile {
            index = try segmentIndex(segments, timescale: prepared.track.timescale)
            let name = "track\(id).mp4"
            var offset = initSize + UInt64(index.count)
            stream.initURI = name
            stream.initRange = 0..<initSize
            stream.indexRange = initSize..<offset
            for facts in segments {
                // Each segment < 2^31 bytes (checked by segmentIndex), a few thousand of them.
                stream.segments.append(StreamSegment(decodeTime: facts.decodeTime, duration: facts.duration, uri: name,
                                                     byteRange: offset..<(offset + facts.size), size: facts.size))
                keyFrames.append(offset..<(offset + facts.keyFrameEnd))
                offset += facts.size
            }
        } else {
            for (number, facts) in segments.enumerated() {
                stream.segments.append(StreamSegment(decodeTime: facts.decodeTime, duration: facts.duration,
                                                     uri: segmentName(id, number), size: facts.size))
                keyFrames.append(0..<facts.keyFrameEnd)
            }
        }
        if iFrames, stream.kind == .video {
            stream.keyFrameRanges = keyFrames
            stream.iFramePlaylistURI = "track\(id)_iframes.m3u8"
        }
        return (stream, index)
    }

    /// Publishes `sink`'s file into `folder`, flushed to disk now only where the folder cannot
    /// flush its files together when it is published (``OutputDirectory/syncsEachFile``).
    static func publish(_ sink: PackageSink, in folder: OutputDirectory, _ written: inout Written) throws {
        try sink.file?.publish(syncing: folder.syncsEachFile)
        written.bytes &+= sink.count
        written.files += 1
    }

    /// The `sidx` of a single file (version 1): one media reference per segment, its size and
    /// duration, starting with a SAP of type 1 when its first sample is a sync sample; the
    /// first segment follows it directly (`first_offset` 0).
    static func segmentIndex(_ segments: [SegmentFacts], timescale: UInt32) throws -> [UInt8] {
        guard segments.count <= Int(UInt16.max) else {
            throw RemuxError(.unsupportedInput, "\(segments.count) segments exceed the 65535 references of one sidx: "
                             + "use longer segments")
        }
        for segment in segments where segment.size >= 1 << 31 || segment.duration > UInt64(UInt32.max) {
            throw RemuxError(.unsupportedInput, "a segment of \(segment.size) bytes or \(segment.duration) ticks is "
                             + "too large for a sidx reference: use shorter segments")
        }
        var w = BoxWriter()
        w.fullBox("sidx", version: 1, flags: 0) { w in
            w.write(UInt32(1))  // reference_ID: the track, the only one of its init segment.
            w.write(timescale)
            w.write(UInt64(clamping: max(0, segments.first?.earliestPresentation ?? 0)))
            w.write(UInt64(0))  // first_offset
            w.write(UInt16(0))  // reserved
            w.write(UInt16(segments.count))  // At most 65535: checked above.
            for segment in segments {
                w.write(UInt32(segment.size))  // reference_type 0 (media); < 2^31, checked above.
                w.write(UInt32(segment.duration))
                w.write(segment.startsWithSync ? UInt32(0x9000_0000) : 0)
            }
        }
        return w.bytes
    }

    /// Writes `bytes` as file `name` in `folder`.
    static func writeFile(_ bytes: [UInt8], named name: String, in folder: OutputDirectory,
                          written: inout Written) throws {
        var sink = PackageSink(file: try MovieFileSink(destination: folder.path(of: name), overwrite: false,
                                                       sources: []))
        try sink.perform(.write(bytes[...]))
        try publish(sink, in: folder, &written)
    }

    /// ISO 639-2 codes as BCP 47 tags (the ISO 639-1 code where there is one, RFC 5646
    /// § 2.2.1) and names for the `EXT-X-MEDIA` `NAME`; an unlisted code is kept as it is
    /// (a valid BCP 47 primary subtag), `und` and unknown give nil.
    static func language(_ code: String?) -> (tag: String, name: String)? {
        guard let code, code != "und", code.count == 3 else { return nil }
        let table: [String: (String, String)] = [
            "eng": ("en", "English"), "fra": ("fr", "Français"), "fre": ("fr", "Français"),
            "deu": ("de", "Deutsch"), "ger": ("de", "Deutsch"), "spa": ("es", "Español"), "ita": ("it", "Italiano"),
            "por": ("pt", "Português"), "nld": ("nl", "Nederlands"), "dut": ("nl", "Nederlands"),
            "jpn": ("ja", "日本語"), "zho": ("zh", "中文"), "chi": ("zh", "中文"), "kor": ("ko", "한국어"),
            "rus": ("ru", "Русский"), "pol": ("pl", "Polski"), "swe": ("sv", "Svenska"), "dan": ("da", "Dansk"),
            "nor": ("no", "Norsk"), "fin": ("fi", "Suomi"), "tur": ("tr", "Türkçe"), "ara": ("ar", "العربية"),
            "heb": ("he", "עברית"), "hin": ("hi", "हिन्दी"), "ces": ("cs", "Čeština"), "cze": ("cs", "Čeština"),
            "ell": ("el", "Ελληνικά"), "gre": ("el", "Ελληνικά"), "hun": ("hu", "Magyar"),
        ]
        if let (tag, name) = table[code] { return (tag, name) }
        return (code, code)
    }
}
