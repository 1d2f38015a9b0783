/// One `trak` of a movie: its headers, edit list and media information. The sample tables
/// are parsed on demand by ``sampleTable()``, since only the chosen track needs them.
public struct Track: Sendable {
    /// Box path of the `trak`, such as `moov/trak[2]`.
    public var path: String
    /// The `tkhd`: track ID, flags and alternate group.
    public var header: TrackHeaderBox
    /// The `edts/elst`, if any: the priming to skip and the padding to trim.
    public var editList: EditListBox?
    /// The `mdhd`: media timescale, duration and language.
    public var mediaHeader: MediaHeaderBox
    /// The `hdlr`: what kind of media the track holds.
    public var handler: HandlerBox
    /// The `smhd` of an audio track.
    public var soundMediaHeader: SoundMediaHeaderBox?
    /// The media information header box as found (`vmhd`, `smhd`, `nmhd`, `sthd`, `gmhd`,
    /// …), re-serialized with a 32-bit header, for copying a track as it is.
    public var mediaInformationHeader: [UInt8]?
    /// The `dinf/dref`, which says whether the samples are in this file (§ 8.7.2).
    public var dataReferences: DataReferenceBox?
    /// Track references (`tref`, ISO/IEC 14496-12 § 8.3.3): for each type (`chap`, …)
    /// the referenced track IDs.
    public var references: [FourCC: [UInt32]]
    /// `trak/udta` as it is (track name and other per-track items), header included.
    public var userData: [UInt8]?
    /// Where `userData` starts in the file, for errors.
    public var userDataOffset: UInt64 = 0
    /// `mdia/elng` as it is: the extended (BCP 47) language, header included.
    public var extendedLanguage: [UInt8]?
    /// The `stsd` (parsed eagerly: listing tracks needs the codec).
    public var sampleDescriptions: SampleDescriptionBox
    /// The number of samples `stsz`/`stz2` declares (0 when neither is present).
    public var declaredSampleCount: UInt32
    /// Why the track's sample descriptions cannot be read (no `stsd`, or one that does not
    /// parse); nil when they can. Such a track is kept, so that the file's other tracks stay
    /// readable, with no sample descriptions, and ``sampleTable()`` throws this error.
    public var problem: ISOBMFFError?
    private var sampleTableBox: ByteReader

    /// The `tkhd` track ID.
    public var trackID: UInt32 { header.trackID }
    /// The handler type: `soun` for audio, `vide` for video, `text`, `tmcd`, …
    public var handlerType: FourCC { handler.handlerType }
    /// Whether the handler type is `soun` (§ 12.2): the tracks FFmpeg's `-map 0:a` counts.
    public var isAudio: Bool { handler.handlerType == .soun }

    init(parsing trak: ByteReader) throws {
        var reader = trak
        var header: TrackHeaderBox?
        var editList: EditListBox?
        var media: ByteReader?
        var references: [FourCC: [UInt32]] = [:]
        var userData: [UInt8]?
        var userDataOffset: UInt64 = 0
        while let (child, payload) = try reader.readBox(depth: 2) {
            var body = payload
            switch child.type {
            case "tref":
                while let (reference, referencePayload) = try body.readBox(depth: 3) {
                    var ids = referencePayload
                    var list: [UInt32] = []
                    while ids.remaining >= 4 { list.append(try ids.readUInt32()) }
                    references[reference.type, default: []] += list
                }
            case "udta" where userData == nil:
                userData = reader.bytes(of: child)
                userDataOffset = child.offset
            case .tkhd:
                guard header == nil else { throw duplicate(child) }
                header = try TrackHeaderBox(parsing: &body)
            case .edts:
                while let (edit, editPayload) = try body.readBox(depth: 3) {
                    guard edit.type == .elst else { continue }
                    guard editList == nil else { throw duplicate(edit) }
                    var elst = editPayload
                    editList = try EditListBox(parsing: &elst)
                }
            case .mdia:
                guard media == nil else { throw duplicate(child) }
                media = body
            default:
                break
            }
        }
        guard let header else { throw missing(.tkhd, in: trak) }
        guard var media else { throw missing(.mdia, in: trak) }
        self.path = trak.path
        self.header = header
        self.editList = editList
        self.references = references
        self.userData = userData
        self.userDataOffset = userDataOffset

        var mediaHeader: MediaHeaderBox?
        var handler: HandlerBox?
        var information: ByteReader?
        var extendedLanguage: [UInt8]?
        let mdia = media
        while let (child, payload) = try media.readBox(depth: 3) {
            var body = payload
            switch child.type {
            case "elng":
                extendedLanguage = media.bytes(of: child)
            case .mdhd:
                guard mediaHeader == nil else { throw duplicate(child) }
                mediaHeader = try MediaHeaderBox(parsing: &body)
            case .hdlr:
                guard handler == nil else { throw duplicate(child) }
                handler = try HandlerBox(parsing: &body)
            case .minf:
                guard information == nil else { throw duplicate(child) }
                information = body
            default:
                break
            }
        }
        guard let mediaHeader else { throw missing(.mdhd, in: mdia) }
        guard let handler else { throw missing(.hdlr, in: mdia) }
        guard var information else { throw missing(.minf, in: mdia) }
        self.mediaHeader = mediaHeader
        self.handler = handler
        self.extendedLanguage = extendedLanguage

        var soundMediaHeader: SoundMediaHeaderBox?
        var mediaInformationHeader: [UInt8]?
        var dataReferences: DataReferenceBox?
        var sampleTable: ByteReader?
        let minf = information
        while let (child, payload) = try information.readBox(depth: 4) {
            var body = payload
            switch child.type {
            case .smhd:
                mediaInformationHeader = Self.rebuilt(child.type, body)
                soundMediaHeader = try SoundMediaHeaderBox(parsing: &body)
            case "vmhd", "nmhd", "sthd", "gmhd", "hmhd":
                mediaInformationHeader = Self.rebuilt(child.type, body)
            case .dinf:
                while let (entry, entryPayload) = try body.readBox(depth: 5) {
                    guard entry.type == .dref else { continue }
                    guard dataReferences == nil else { throw duplicate(entry) }
                    var dref = entryPayload
                    dataReferences = try DataReferenceBox(parsing: &dref)
                }
            case .stbl:
                guard sampleTable == nil else { throw duplicate(child) }
                sampleTable = body
            default:
                break
            }
        }
        guard let sampleTable else { throw missing(.stbl, in: minf) }
        self.soundMediaHeader = soundMediaHeader
        self.mediaInformationHeader = mediaInformationHeader
        self.dataReferences = dataReferences
        self.sampleTableBox = sampleTable

        var descriptions: SampleDescriptionBox?
        var problem: ISOBMFFError?
        var declaredCount: UInt32 = 0
        var stbl = sampleTable
        while let (child, payload) = try stbl.readBox(depth: 5) {
            var body = payload
            switch child.type {
            case .stsd:
                guard descriptions == nil, problem == nil else { throw duplicate(child) }
                do {
                    descriptions = try SampleDescriptionBox(parsing: &body)
                } catch let error as ISOBMFFError {
                    problem = error
                }
            case .stsz, .stz2:
                try body.skip(8)  // Version and flags, then the constant size (stsz) or field size (stz2).
                declaredCount = try body.readUInt32()
            default:
                break
            }
        }
        if descriptions == nil && problem == nil { problem = missing(.stsd, in: sampleTable) }
        self.sampleDescriptions = descriptions ?? SampleDescriptionBox(entries: [])
        self.declaredSampleCount = declaredCount
        self.problem = problem
    }

    private static func rebuilt(_ type: FourCC, _ payload: ByteReader) -> [UInt8] {
        var body = payload
        var writer = BoxWriter()
        writer.box(type) { $0.write(bytes: body.readRemainingBytes()) }
        return writer.bytes
    }

    /// Forgets the raw `stbl` bytes once the tables are parsed, so the memory of the whole
    /// `moov` can be returned (a 10-hour track's tables take megabytes). ``sampleTable()``
    /// then throws `.missingBox`.
    public mutating func releaseSampleTableBytes() {
        sampleTableBox = ByteReader([], fileOffset: sampleTableBox.fileOffset, path: sampleTableBox.path)
    }

    /// Parses the track's sample tables (`stbl`). Costs time and memory in proportion to the
    /// number of samples; validate the result with ``SampleTable/init(boxes:fileLength:excluding:)``.
    ///
    /// - Throws: the track's ``problem`` when it has one, or why a table does not parse.
    public func sampleTable() throws -> SampleTableBoxes {
        if let problem { throw problem }
        return try SampleTableBoxes(parsing: sampleTableBox, descriptions: sampleDescriptions)
    }

    /// Parses the track's sample tables when its `stsd` is missing or unreadable
    /// (``problem``): the other tables, with no sample descriptions. Only for listing the
    /// samples (``MovieReader/samplesWithoutDescriptions(of:)``); nothing can decode them.
    ///
    /// - Throws: why a table does not parse.
    func sampleTableWithoutDescriptions() throws -> SampleTableBoxes {
        try SampleTableBoxes(parsing: sampleTableBox, descriptions: SampleDescriptionBox(entries: []))
    }

    /// The duration of the media in seconds, from `mdhd`.
    public var durationInSeconds: Double {
        mediaHeader.timescale == 0 ? 0 : Double(mediaHeader.duration) / Double(mediaHeader.timescale)
    }
}
